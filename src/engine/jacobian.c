/* Newton matrices of the trapezoidal engine (hymo_jacobian_ops).
 *   numeric  forward differences at every iteration (seed 002 Eqs. 40-41)
 *   fast     the approximate analytic matrix from the current evaluation,
 *            rebuilt at the first iteration of a step unless the last step
 *            converged in one iteration with steady inputs, and within a
 *            step whenever the contraction is poor */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "hymo/linalg.h"
#include "driver.h"

/* ---------------- numeric ---------------- */

static int always_at_start(const hymo_sim *sim, int inputs_change) { return (void)sim, (void)inputs_change, 1; }
static int always_after(double inc, double prev) { return (void)inc, (void)prev, 1; }

/* The mechanical unknowns are position increments: their difference
 * steps scale with the position z + x (not with the increment x), the
 * others with the unknown. */
static hymo_status numeric_build(hymo_sim *sim, double t, hymo_error *err)
{
    const int nx = sim->nx, nz = sim->nz, nxm = sim->nxm;
    const int *indep;
    sim->form.ops->independent(&sim->form, &indep);
    double *x = sim->solver.x, *zsave = sim->jac.zsave;
    memcpy(zsave, sim->mb.zn, (size_t)nz * sizeof(double));
    hymo_sparse *J = &sim->jac.jfull;
    int bad = 0;
    hymo_sparse_begin(J);
    for (int j = 0; j < nx; ++j) {
        double xj = x[j];
        double eps = 1e-8 * fmax(1e-2, fabs(j < nxm ? sim->mb.z[indep[j]] + xj : xj));
        x[j] = xj + eps;
        eps = x[j] - xj; /* exactly representable increment */
        hymo_status st = hymo_engine_residual(sim, x, sim->solver.fp, t, err);
        x[j] = xj;
        memcpy(sim->mb.zn, zsave, (size_t)nz * sizeof(double));
        if (st != HYMO_OK) return st;
        for (int i = 0; i < nx; ++i) {
            const double v = (sim->solver.fp[i] - sim->solver.f[i]) / eps;
            if (j < nxm && i < nxm) { /* the mechanical block's pattern (penalty's projections) */
                double *e = hymo_sparse_at(&sim->jac.jm, i, j);
                if (e) *e = v;
            }
            if (v != 0.0) bad |= hymo_sparse_push(J, i, v);
        }
        hymo_sparse_end_column(J);
    }
    if (bad) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (Newton matrix)");
    return hymo_engine_factor_jacobian(sim, t, err);
}

/* the whole residual at the solution, so that /solver/residual is the
 * residual there */
static hymo_status numeric_finish(hymo_sim *sim, const double *x, int at_evaluated, double t, hymo_error *err)
{
    (void)at_evaluated;
    hymo_status st = hymo_engine_residual(sim, x, sim->solver.f, t, err);
    sim->stats.residual_norm = hymo_norm_inf(sim->nx, sim->solver.f);
    return st;
}

const hymo_jacobian_ops hymo_jacobian_numeric_ops = {
    .name = "numeric",
    .refresh_at_start = always_at_start,
    .refresh_after = always_after,
    .build = numeric_build,
    .negligible = -1.0,
    .finish = numeric_finish,
    .tree_capable = 0,
};

/* ---------------- fast ---------------- */

static int fast_at_start(const hymo_sim *sim, int inputs_change)
{
    return !sim->jac.jac_valid || inputs_change || sim->newton->matrix_stale(sim);
}

static int fast_after(double inc, double prev) { return inc > 0.25 * prev; }

/* dt^2/4 (K + 2/dt C) of every force element (scalar force F along its
 * coordinate l, g = dl/dx in the unknowns): -(dF/dl + 2/dt dF/dldot) g g^T
 * as the cylinders' actuator stiffness and damping (src/engine/forces.c), and the
 * spring-dampers' d2l/dz2 terms alpha v_p v_q^T
 * (formulations/force_elements.h). */
static void fe_stiffness(hymo_sim *sim)
{
    const int ld = sim->jac.g_ld;
    const double dt = sim->solver.h, c = dt * dt / 4.0, a1 = 2.0 / dt;
    const hymo_fe *fe = &sim->fe;
    const int r0 = sim->na; /* the force elements' rows follow the actuators' */
    const double *gx = sim->jac.act_gx;
    for (int e = 0; e < fe->n; ++e) {
        const double k = c * (fe->dF_dl[e] + a1 * fe->dF_dld[e]);
        if (k == 0.0) continue;
        const double *g = &gx[(size_t)(r0 + e) * ld];
        for (int l = 0; l < ld; ++l) {
            const int ul = hymo_engine_g_unknown(sim, r0 + e, l);
            if (g[l] == 0.0 || ul < 0) continue; /* exact zeros */
            for (int i = 0; i < ld; ++i) {
                const int ui = hymo_engine_g_unknown(sim, r0 + e, i);
                if (g[i] != 0.0 && ui >= 0) hymo_engine_mech_add(sim, ui, ul, -(k * g[i] * g[l]));
            }
        }
    }
    for (int t = 0; t < fe->nterm; ++t) { /* the spring-dampers' d2l/dz2 terms: K_ik += alpha p_i q_k (dense rows) */
        const double k = c * fe->talpha[t];
        const double *vp = &gx[(size_t)(r0 + fe->tp[t]) * ld], *vq = &gx[(size_t)(r0 + fe->tq[t]) * ld];
        for (int l = 0; l < ld; ++l)
            for (int i = 0; i < ld; ++i) hymo_engine_mech_add(sim, i, l, k * vp[i] * vq[l]);
    }
}

/* SPEC §3 "analytic or hybrid Jacobian": the mechanical block is M'
 * (+ dt^2/4 alpha Phi_z^T Phi_z for penalty) mapped to the unknowns, plus
 * the force source's actuator stiffness and damping and hydraulic blocks,
 * and the force elements' K and C (fe_stiffness).
 * Neglected against M': dt/2 dQ'/dzd (gyroscopic) and dt^2/4 of the
 * position derivatives of M' zdd, Q' and Phi_z^T lambda, i.e. terms of
 * relative size ~ dt |zd| and dt^2 |K|/|M'|; they only slow the
 * (otherwise quadratic) convergence slightly, never change the solution,
 * which is defined by the residual alone. */
/* ---------------- open trees: O(n) mechanical block ---------------- */

static const double *tree_mass(void *ctx)
{
    hymo_sim *sim = ctx;
    if (hymo_kin_mass(&sim->mb.kin)) return NULL; /* the stale columns only (allocated at the first call) */
    return sim->mb.kin.M;
}

static int tree_factor(void *ctx, const double *e)
{
    hymo_sim *sim = ctx;
    return hymo_kin_tree_factor(&sim->mb.kin, e, sim->jac.tree_w);
}

static void tree_solve(void *ctx, double *x)
{
    hymo_sim *sim = ctx;
    hymo_kin_tree_solve(&sim->mb.kin, sim->jac.tree_w, x, sim->jac.tree_s);
}

/* every joint an unknown, in order, and no cut joint */
static int open_tree(const hymo_sim *sim)
{
    if (sim->m != 0 || sim->nxm != sim->nz || sim->nxm == 0) return 0;
    const int *indep;
    sim->form.ops->independent(&sim->form, &indep);
    for (int k = 0; k < sim->nxm; ++k)
        if (indep[k] != k) return 0;
    return 1;
}

/* Tree mode needs a matrix built from parts (the fast Jacobian), an open
 * tree, no driven joints (their kinematic rows), every actuator and force
 * element acting on one joint (no spring-damper: a point-to-point length
 * and second-derivative rows) and a linear solver that takes the tree with
 * M' left out (KLU with the Schur path).  The joints' lists are O(na). */
hymo_status hymo_engine_tree_mode(hymo_sim *sim, hymo_error *err)
{
    const hymo_model *model = sim->model;
    const int na = sim->na, nfe = model->n_force_elements, nz = sim->nz;
    sim->jac.tree_mode = 0;
    sim->jac.g_ld = sim->nxm;
    if (!sim->jacobian->tree_capable || !open_tree(sim) || model->n_drivers > 0) return HYMO_OK;
    int *joint = malloc((size_t)(na + nfe > 0 ? na + nfe : 1) * sizeof(int));
    int *start = calloc((size_t)nz + 1, sizeof(int)), *list = malloc((size_t)(na > 0 ? na : 1) * sizeof(int));
    if (!joint || !start || !list) {
        free(joint), free(start), free(list);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (tree mode)");
    }
    int ok = 1;
    for (int a = 0; a < na && ok; ++a) ok = (joint[a] = hymo_actuator_joint(model, &sim->mb.kin, a)) >= -1;
    for (int e = 0; e < nfe && ok; ++e) ok = (joint[na + e] = hymo_fe_joint(model, e)) >= -1;
    const hymo_linsol_tree t = {sim, sim->nxm, tree_mass, tree_factor, tree_solve};
    if (!ok || !hymo_linsol_set_tree(sim->ls, &t)) {
        free(joint), free(start), free(list);
        return HYMO_OK;
    }
    for (int a = 0; a < na; ++a)
        if (joint[a] >= 0) start[joint[a] + 1]++;
    for (int k = 0; k < nz; ++k) start[k + 1] += start[k];
    for (int a = 0; a < na; ++a) /* ascending a within an unknown (start[j] counts the filled ones, then shifts back) */
        if (joint[a] >= 0) list[start[joint[a]]++] = a;
    for (int k = nz; k > 0; --k) start[k] = start[k - 1];
    start[0] = 0;
    sim->jac.tree_mode = 1;
    sim->jac.g_ld = 1;
    sim->jac.g_idx = joint;
    sim->jac.g_jt_start = start;
    sim->jac.g_jt = list;
    sim->mb.kin.mass_lazy = 1;
    return HYMO_OK;
}

/* The whole matrix for the linear solver: the mechanical block's
 * non-zeros (tree mode: its diagonal, M' left to the solver), then the
 * force source's entries, column by column. */
static int compose(hymo_sim *sim)
{
    const int nx = sim->nx, nxm = sim->nxm;
    const hymo_sparse *H = &sim->jac.jh;
    hymo_sparse *J = &sim->jac.jfull;
    int bad = 0;
    hymo_sparse_begin(J);
    const hymo_sparse *B = &sim->jac.jm;
    for (int j = 0; j < nx; ++j) {
        if (j < nxm)
            for (int e = B->col_start[j]; e < B->col_start[j + 1]; ++e)
                if (B->value[e] != 0.0) bad |= hymo_sparse_push(J, B->row[e], B->value[e]);
        for (int e = H->col_start[j]; e < H->col_start[j + 1]; ++e) bad |= hymo_sparse_push(J, H->row[e], H->value[e]);
        hymo_sparse_end_column(J);
    }
    return bad;
}

/* The gradients, and the formulation's part of the mechanical block: in
 * tree mode (no cut joints, R = I) M' alone, left to the linear solver, and
 * each gradient row's one entry. */
static hymo_status mech_parts(hymo_sim *sim)
{
    const int na = sim->na;
    hymo_sparse_zero(&sim->jac.jm);
    if (sim->jac.tree_mode) {
        hymo_actuators_gradients_joint(&sim->act, sim->model, &sim->mb.kin, sim->jac.g_idx, sim->jac.act_gz);
        const int rows = hymo_fe_gradients_joint(&sim->fe, sim->jac.g_idx + na, sim->jac.act_gz + na);
        memcpy(sim->jac.act_gx, sim->jac.act_gz, (size_t)(na + rows) * sizeof(double));
        return HYMO_OK;
    }
    /* M' at the current evaluation (Q' is not needed); a formulation that
     * asked for M' on demand only (kin.mass_lazy: double-step on many loops
     * uses M' v products) forms none */
    if (!sim->mb.kin.mass_lazy && hymo_kin_mass(&sim->mb.kin)) return HYMO_ERR_NOMEM;
    hymo_actuators_gradients(&sim->act, sim->model, &sim->mb.kin, sim->jac.act_gz);
    /* the force elements' gradients after the cylinders' (mapped together) */
    const int rows = hymo_fe_gradients(&sim->fe, sim->model, &sim->mb.kin, sim->jac.act_gz + (size_t)na * sim->nz);
    sim->form.ops->tangent(&sim->form, &sim->mb, sim->jac.act_gz, na + rows, sim->jac.act_gx, &sim->jac.jm);
    return HYMO_OK;
}

static hymo_status fast_build(hymo_sim *sim, double t, hymo_error *err)
{
    hymo_sparse_begin(&sim->jac.jh);
    if (mech_parts(sim) != HYMO_OK) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (mass matrix)");
    hymo_status st = sim->forces->tangent(sim, t, err);
    if (st != HYMO_OK) return st;
    hymo_sparse_finish(&sim->jac.jh);
    fe_stiffness(sim);
    if (sim->model->n_drivers) hymo_drivers_jacobian(sim); /* driven joints: kinematic rows */
    if (compose(sim)) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (Newton matrix)");
    return hymo_engine_factor_jacobian(sim, t, err);
}

/* The residual of the last Newton evaluation is recorded; the state is
 * re-evaluated at the converged unknowns (the forces follow in the step),
 * or kept as it is if the last correction was negligible. */
static hymo_status fast_finish(hymo_sim *sim, const double *x, int at_evaluated, double t, hymo_error *err)
{
    sim->stats.residual_norm = hymo_norm_inf(sim->nx, sim->solver.f);
    if (at_evaluated) return HYMO_OK;
    sim->mb.final_unpack = 1;
    hymo_status st = hymo_engine_unpack(sim, x, t, err);
    sim->mb.final_unpack = 0;
    return st;
}

/* Fast mode: a Newton correction below this fraction of the increment
 * tolerances (1e-10 rad or m, 1e-5 Pa, 1e-10 V with the SPEC's) is not
 * applied; the step keeps the iterate whose state was just evaluated.  Its
 * distance to the converged solution is then at the level the double-step
 * inner solve leaves in the dependent coordinates (1e-10), and the final
 * re-evaluation of the state (a fifth to a third of a step's work) is saved
 * in ~40 % of the steps of the seed mechanisms. */
#define NEGLIGIBLE_INCREMENT 1e-3

const hymo_jacobian_ops hymo_jacobian_fast_ops = {
    .name = "fast",
    .refresh_at_start = fast_at_start,
    .refresh_after = fast_after,
    .build = fast_build,
    .negligible = NEGLIGIBLE_INCREMENT,
    .finish = fast_finish,
    .tree_capable = 1,
};

/* ---------------- Newton stopping tests ---------------- */

/* seed 002 / SPEC §3: every increment within its tolerance */
static void seed_begin(hymo_sim *sim, const double *x) { (void)x, sim->solver.newton_tau = 1.0; }
static int seed_converged(hymo_sim *sim, int iter, double inc, double prev, int fresh)
{
    (void)sim, (void)iter, (void)prev, (void)fresh;
    return inc <= 1.0;
}
static void seed_end(hymo_sim *sim, const double *x) { (void)sim, (void)x; }
/* the seed's reuse rule: keep the matrix while steps converge in one iteration */
static int seed_stale(const hymo_sim *sim) { return sim->stats.last_iterations != 1; }

const hymo_newton_test_ops hymo_newton_seed_ops = {
    .name = "seed",
    .begin_step = seed_begin,
    .converged = seed_converged,
    .end_step = seed_end,
    .matrix_stale = seed_stale,
};

/* contractive (the test IDA and Radau5 use): with theta the contraction rate
 * of successive increments, the error left after an update is about
 * theta/(1-theta) |dx|; it must stay below tau, a fraction KAPPA_LTE of the
 * step's truncation error estimated from the predictor-corrector distance of
 * the previous step (contractive_end), between TAU_MIN_RATE h and the
 * increment tolerances.  At the first iteration theta is the last one
 * measured.  Without it a stale (fast) matrix is accepted after one
 * increment however slowly it contracts, and the iteration error, amplified
 * by 2/dt into velocities and 4/dt^2 into accelerations, sets an error floor
 * that does not fall with dt (bench/work_precision.py). */
#define KAPPA_LTE 1e-4
/* mechanical increments below ROUNDOFF of the tolerance (1e-15 rad with the
 * default) plus ROUNDOFF_REL rounding units of what the unknown is formed
 * from are round-off */
#define ROUNDOFF 1e-8
#define ROUNDOFF_REL 64.0
/* the smallest target, per second of step size: the velocity change
 * 2 tau tol / h that an iteration error of tau leaves stays below
 * 2e-6 tol/s (2e-13 rad/s with the default tolerance; tau >= 1e-9 at
 * h = 1 ms) */
#define TAU_MIN_RATE 1e-6
/* 1e-12 rad with the default tolerance */
#define STAGNATION 1e-5
#define STAGNATION_THETA 0.9
/* at the last iteration allowed, after at least LAST_MIN_ITER: 1e-9 rad
 * with the default tolerance */
#define LAST_TARGET 1e-2
#define LAST_MIN_ITER 10

static void contractive_begin(hymo_sim *sim, const double *x)
{
    sim->solver.newton_prev_m = INFINITY;
    if (sim->solver.newton_theta_age < 2) ++sim->solver.newton_theta_age;
    memcpy(sim->solver.xpred, x, (size_t)sim->nx * sizeof(double));
    const double tau = KAPPA_LTE * sim->solver.newton_lte, tau_min = TAU_MIN_RATE * sim->solver.h;
    sim->solver.newton_tau = !(tau < 1.0) ? 1.0 : tau > tau_min ? tau : tau_min;
}

/* Largest increment of the mechanical block in units of its tolerance, and
 * whether all of them are at the round-off level (or below ROUNDOFF of the
 * tolerance): there a linear rate cannot be measured, nor is more possible.
 * The unknown is the position increment dq, and the residual combines it
 * with h zd and h^2 zdd (the trapezoidal rates), so its round-off is that of
 * those terms, far below the position's own rounding unit.  A penalty term
 * alpha Phi(z + dq) moves with the rounding of the position, so there the
 * increment is resolved only to that in the constrained directions (and the
 * velocity projections remove what it leaves there). */
static double mechanical_increment(const hymo_sim *sim, int *at_roundoff)
{
    const double tol = sim->opt.tol_position, h = sim->solver.h;
    const hymo_mb *mb = &sim->mb;
    const int *indep;
    sim->form.ops->independent(&sim->form, &indep);
    const int penalty = sim->m > 0 && sim->form.ops->penalty_factor(&sim->form, mb) > 0.0;
    double worst = 0.0;
    *at_roundoff = 1;
    for (int i = 0; i < sim->nxm; ++i) {
        const int j = indep[i];
        const double d = fabs(sim->solver.dx[i]), dq = sim->solver.x[i];
        if (d > worst) worst = d; /* not fmax: a library call here */
        double scale = fabs(dq) + h * fabs(mb->zd[j]) + h * h * fabs(mb->zdd[j]);
        if (penalty) scale += fabs(mb->z[j] + dq);
        if (d > ROUNDOFF_REL * DBL_EPSILON * scale + ROUNDOFF * tol) *at_roundoff = 0;
    }
    return worst / tol;
}

/* The target applies to the mechanical unknowns, whose iteration error the
 * trapezoidal formulas amplify by 2/dt into velocities and 4/dt^2 into
 * accelerations; the hydraulic ones keep the increment tolerances (a
 * pressure error of 1e-2 Pa moves a cylinder force by ~1e-4 N and the
 * pressure rate by 2e-2/dt Pa/s, far below their truncation errors), where
 * penalty's multiplier updates would otherwise stall the rate near
 * round-off. */
/* The verdict for an accepted update: 2 (the engine keeps the evaluated
 * iterate, as after a negligible increment, and saves re-evaluating the
 * state at the updated one) where the iterate before the update meets the
 * target too, its error |dx|/(1-theta) <= tau with theta <= 1/2, and the
 * hydraulic increments are negligible (NEGLIGIBLE_INCREMENT of their
 * tolerances); else 1. */
#define KEEP_FRACTION 0.5
static int accepted(const hymo_sim *sim, double inc_m)
{
    if (!(inc_m <= KEEP_FRACTION * sim->solver.newton_tau)) return 1;
    for (int i = sim->nxm; i < sim->nx; ++i) {
        const double tol = i < sim->nxm + sim->np ? sim->opt.tol_pressure : sim->opt.tol_spool;
        if (!(fabs(sim->solver.dx[i]) <= NEGLIGIBLE_INCREMENT * tol)) return 1;
    }
    return 2;
}

/* the formulation's Newton includes penalty's multiplier update */
static int penalty_newton(const hymo_sim *sim)
{
    return sim->m > 0 && sim->form.ops->penalty_factor(&sim->form, &sim->mb) > 0.0;
}

static int contractive_converged(hymo_sim *sim, int iter, double inc, double prev, int fresh)
{
    (void)prev;
    int roundoff;
    const double inc_m = mechanical_increment(sim, &roundoff);
    const double prev_m = sim->solver.newton_prev_m;
    sim->solver.newton_prev_m = inc_m;
    if (!(inc <= 1.0)) return 0; /* some increment beyond its tolerance, or not a number */
    if (roundoff) return accepted(sim, inc_m);
    double theta = sim->solver.newton_theta;
    if (iter >= 2 && prev_m > 0.0 && isfinite(prev_m)) {
        theta = sim->solver.newton_theta = inc_m / prev_m;
        sim->solver.newton_theta_age = 0;
    }
    /* a matrix of an earlier step may contract far worse than the rate
     * last measured: measure it (a second iteration) before accepting.
     * So may penalty's multiplier update, whose rate moves with the
     * configuration (rho, multiplier_update in formulations/penalty.c): a
     * rate measured before the previous solve is stale, and the iterate is
     * measured too (one parallelogram loop, numeric Jacobian, 2 ms: an
     * old rate of 3.2e-6 would accept every later step's first iterate,
     * where the steps that measure it find 1e-5 .. 5e-4, docs/models.md
     * "Singular positions") */
    else if (!fresh || (penalty_newton(sim) && sim->solver.newton_theta_age > 1)) return 0;
    /* with a matrix of this step, no contraction at increments this small
     * is the noise of the residual (penalty's multiplier updates): stop */
    if (fresh && theta >= STAGNATION_THETA && inc_m <= STAGNATION) return accepted(sim, inc_m);
    /* the last iteration allowed (at least LAST_MIN_ITER: a rate measured
     * over many iterations), with a matrix of this step: an iterate
     * whose iteration error is below LAST_TARGET x tolerance stands rather
     * than a retry at half the step.  Where Phi_z loses rank (links in one
     * line, e.g. a parallelogram's cranks at the horizontal) the truncation
     * error passes through zero with q''' (tau falls to its floor, below
     * the round-off of the positions) while penalty's multiplier update
     * contracts only linearly there (0.4-0.95 per iteration), and slower
     * at half the step (its term scales with h^2 against M'): a retry
     * cannot do better.  Without measured contraction (theta >=
     * STAGNATION_THETA: increments driven by the residual's rounding) the
     * increment itself is the measure. */
    if (fresh && iter >= sim->opt.max_iter && iter >= LAST_MIN_ITER &&
        (theta < STAGNATION_THETA ? theta / (1.0 - theta) * inc_m : inc_m) <= LAST_TARGET)
        return 1;
    if (!(theta < 1.0)) return 0;
    if (!(theta / (1.0 - theta) * inc_m <= sim->solver.newton_tau)) return 0;
    return theta <= 1.0 - KEEP_FRACTION ? accepted(sim, inc_m) : 1;
}

/* The truncation error estimate, tolerance units: the largest position
 * predictor-corrector distance e = dq - dq_pred (h^3 q'''/12 per step with
 * the extrapolating predictor) or, if smaller, the position equivalent
 * h/2 e_v of the velocity's truncation error e_v = h^3 q''''/12.  An
 * iteration error delta of dq enters the velocity as 2 delta/h, while the
 * truncation errors of q and zd are both O(h^3); at small h (or on a slow
 * mechanism) h/2 e_v is the smaller, and delta must be small against it, or
 * the steps' iteration errors, of one sign with the fast matrix, add up
 * (measured on the 3-D triple pendulum at 0.0625 ms: fast - numeric
 * 8.5e-9 rad = 4.7 % of the error with e alone, 8e-11 rad with both).  From
 * the rule's terms, h/2 e_v = |e/4 - h^2 (zdd_{k+1} - zdd_k)/48| (the h^3
 * terms cancel). */
static void contractive_end(hymo_sim *sim, const double *x)
{
    const hymo_mb *mb = &sim->mb;
    const int *indep;
    sim->form.ops->independent(&sim->form, &indep);
    const double c = sim->solver.h * sim->solver.h / 48.0;
    double worst_q = 0.0, worst_v = 0.0;
    for (int i = 0; i < sim->nxm; ++i) {
        const int j = indep[i];
        const double e = x[i] - sim->solver.xpred[i];
        const double ev = fabs(0.25 * e - c * (mb->zddn[j] - mb->zdd[j]));
        if (fabs(e) > worst_q) worst_q = fabs(e);
        if (ev > worst_v) worst_v = ev;
    }
    sim->solver.newton_lte = (worst_v < worst_q ? worst_v : worst_q) / sim->opt.tol_position;
}

/* A matrix of an earlier step is kept only after a step that converged in
 * one iteration (as the seed's rule).  Keeping it while the rate last
 * measured is good (theta <= 1e-3 .. 0.1, as IDA and Radau5 do) makes the
 * fast mode 1.1-1.25x faster, but on the 3-D triple pendulum the accepted
 * steps then carry iteration errors (0.25 ms: 3.9e-6 rad against numeric's
 * 2.9e-6) and penalty's projections use stale matrices (quick-return
 * 1e-8 rad, 7 Pa from numeric): measured and not taken. */
static int contractive_stale(const hymo_sim *sim) { return sim->stats.last_iterations != 1; }

const hymo_newton_test_ops hymo_newton_contractive_ops = {
    .name = "contractive",
    .begin_step = contractive_begin,
    .converged = contractive_converged,
    .end_step = contractive_end,
    .matrix_stale = contractive_stale,
};
