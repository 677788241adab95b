/* Penalty-based semirecursive formulation (index-3 augmented Lagrangian with
 * projections, ALI3-P; SPEC §1.5, seed 002 §2.3).  Newton unknowns are the
 * step's increments of all joint coordinates; lambda is updated after every
 * Newton update.
 * Content: the LU of the projection matrix (the mechanical block of the
 * Newton matrix) and scratch.
 * Many loops (nz + m >= HYMO_KKT_SPARSE_MIN, no driven joints: a ladder):
 * the block is sparse, M' + (dt^2/4) alpha Phi_z^T Phi_z has non-zeros
 * only where two joints share a path (M') or a constraint row, plus the
 * actuators' and force elements' joint sets (pb_mech_pattern); the
 * tangent writes those entries with M''s from the composite inertias (M'
 * never formed), KLU factorises the projection matrix, and the start's
 * estimate of the smallest compliance uses the sparse KKT matrix: O(n)
 * memory (docs/performance.md).  Below, the dense block and LU. */
#include <klu.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/linalg.h"
#include "multibody.h"

typedef struct {
    double *jzz; /* nz x nz: LU of the projection matrix (dense mode) */
    int *piv;
    int sparse;  /* the block by its pattern, KLU's LU of it */
    klu_symbolic *sym;
    klu_numeric *num;
    klu_common common;
    double *w, *y; /* m, nz scratch */
    double *acc;   /* nz scratch, zero between uses (block_values: a column of Phi_z^T Phi_z) */
    int *all;      /* 0 .. nz-1: every coordinate is an unknown */
    int *colp, *colr, *colt; /* nz + 1, nnz, nnz scratch (tangent): the rows of Phi_z's non-zeros per
                              * column and their places in phi_zv */
    const hymo_sparse *block; /* the Newton matrix's mechanical block: its pattern */
    double *bval;             /* the projection matrix's values on that pattern */
    int nz, m;
    int lambda_frozen;
    double *gram; /* nz x nz scratch (lambda_min_norm; with redundant rows only, dense mode) */
    int *gpiv;        /* nz */
    /* sparse mode with redundant rows: the Gram matrix on its own pattern
     * (Phi_z^T Phi_z's pairs and the diagonal) and KLU's LU of it */
    hymo_sparse gsp;
    klu_symbolic *gsym;
    klu_numeric *gnum;
    /* the multiplier update's conjugate gradients (multiplier_update): the
     * projection matrix's LU is that of the last step's final state, built
     * with the factor lu_c = (dt^2/4) of that step */
    int lu_ready;
    double lu_c;
    double *cg; /* 5 m + nz scratch */
    double cg_scale; /* the step's scale of u: 1, or less after an overshoot */
    int cg_last, cg_off; /* the last update was by conjugate gradients; none for the rest of the step */
    double cg_phi;       /* max |Phi| at the last update of the step (none: -1) */
} pb_content;

static hymo_status pb_create(hymo_formulation *f, const hymo_mb *mb, hymo_error *err)
{
    pb_content *c = calloc(1, sizeof *c);
    if (!c) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (penalty)");
    f->content = c;
    const size_t nz = (size_t)mb->nz + 1, m = (size_t)mb->m + 1;
    c->sparse = mb->m > 0 && mb->nz + mb->m >= HYMO_KKT_SPARSE_MIN && mb->model->n_drivers == 0;
    /* without constraints no projection, on many loops KLU's: O(nz) memory */
    const size_t nzz = mb->m > 0 && !c->sparse ? nz * nz : 1;
    c->jzz = calloc(nzz, sizeof(double));
    klu_defaults(&c->common);
    c->piv = calloc(nz, sizeof(int));
    c->w = calloc(m, sizeof(double));
    c->y = calloc(nz, sizeof(double));
    c->acc = calloc(nz, sizeof(double));
    c->all = calloc(nz, sizeof(int));
    c->colp = calloc(2 * nz + 2, sizeof(int)); /* and the fill pointers (tangent) */
    c->colr = calloc((size_t)mb->con->nnz + 1, sizeof(int));
    c->colt = calloc((size_t)mb->con->nnz + 1, sizeof(int));
    c->cg = calloc(5 * m + nz, sizeof(double));
    c->nz = mb->nz;
    c->m = mb->m;
    if (!c->jzz || !c->piv || !c->w || !c->y || !c->acc || !c->all || !c->colp || !c->colr || !c->colt || !c->cg) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (penalty)");
    for (int j = 0; j < mb->nz; ++j) c->all[j] = j;
    return HYMO_OK;
}

static void pb_destroy(hymo_formulation *f)
{
    pb_content *c = f->content;
    if (!c) return;
    free(c->jzz);
    free(c->piv);
    free(c->w);
    free(c->y);
    free(c->acc);
    free(c->all);
    free(c->colp);
    free(c->colr);
    free(c->colt);
    free(c->cg);
    free(c->bval);
    free(c->gram);
    free(c->gpiv);
    if (c->num) klu_free_numeric(&c->num, &c->common);
    if (c->sym) klu_free_symbolic(&c->sym, &c->common);
    if (c->gnum) klu_free_numeric(&c->gnum, &c->common);
    if (c->gsym) klu_free_symbolic(&c->gsym, &c->common);
    hymo_sparse_free(&c->gsp);
    free(c);
    f->content = NULL;
}

static int pb_n_mech(const hymo_formulation *f) { return ((const pb_content *)f->content)->nz; }

/* The penalty factor against the mechanism (too large a factor stops
 * Newton converging on ladders of many four-bar loops).  The multiplier
 * update lambda += alpha Phi inside Newton is the augmented-Lagrangian
 * iteration; with W = M' + (dt^2/4) alpha Phi_z^T Phi_z its error in the
 * multipliers contracts per iteration by
 *     rho = 1 / (1 + (dt^2/4) alpha s_min),
 * s_min the smallest eigenvalue of S = Phi_z M'^{-1} Phi_z^T (the
 * inverse effective mass of the stiffest-to-close constraint mode; the
 * rows of a maximal independent set, redundant ones left out).  A fixed
 * alpha lets rho grow with the size of the mechanism: on a ladder of N
 * loops s_min falls roughly as 1/N^2 (measured 3 mean Newton iterations
 * per step at N = 16, 5.4 at N = 64 with alpha = 1e11).  So the factor
 * used is max(alpha, alpha_rho) with alpha_rho the one giving rho =
 * PENALTY_RHO at the start for dt = PENALTY_DT_REF (Bayo and Ledesma 1996; Cuadrado et al. 2000
 * scale alpha with the mass matrix for the same reason).  The model's
 * alpha is kept where it already contracts faster (every shipped model). */
#define PENALTY_RHO 1e-2
/* rho is set for this step size: alpha stays a property of the model, not
 * of dt (raising it as 1/dt^2 at smaller steps was measured to cost
 * accuracy: the spatial four-bar at 0.0625 ms, fast Jacobian, 4.6e-8 ->
 * 2.5e-7 rad; the Bennett linkage, numeric Jacobian, 3.6e-6 -> 9.2e-6 rad) */
#define PENALTY_DT_REF 1e-3
#define PENALTY_POWER_ITER 30

/* s_min by inverse iteration on S, each solve S y = x through the sparse
 * KKT matrix [M' Phi_z^T; Phi_z 0] [u; mu] = [0; x] (mu = -S^-1 x; a
 * redundant row's mu_r = x_r = 0), and the Rayleigh quotient from the last
 * pair: y^T S y / y^T y = y^T x / y^T y.  O(n) memory on many loops. */
static double smallest_compliance(hymo_mb *mb)
{
    const int nz = mb->nz, m = mb->m;
    hymo_kkt_sparse *ks = hymo_mb_kkt_sparse_new(mb);
    double *x = calloc((size_t)m + 1, sizeof(double)), *rhs = calloc((size_t)(nz + m) + 1, sizeof(double));
    double s_min = NAN, num = 0.0, den = 0.0;
    if (!ks || !x || !rhs || hymo_mb_kkt_sparse_factor(mb, ks)) goto done;
    for (int r = 0; r < m; ++r) x[r] = mb->con->redundant[r] ? 0.0 : 1.0 + 0.1 * (r % 7);
    for (int it = 0; it < PENALTY_POWER_ITER; ++it) {
        const double n = hymo_norm_inf(m, x);
        if (!(n > 0.0) || !isfinite(n)) goto done;
        for (int r = 0; r < m; ++r) x[r] /= n;
        for (int i = 0; i < nz; ++i) rhs[i] = 0.0;
        for (int r = 0; r < m; ++r) rhs[nz + r] = x[r];
        hymo_mb_kkt_sparse_solve(ks, rhs);
        num = den = 0.0;
        for (int r = 0; r < m; ++r) {
            const double y = -rhs[nz + r];
            num += y * x[r];
            den += y * y;
            x[r] = y;
        }
    }
    s_min = den > 0.0 ? num / den : NAN;
done:
    hymo_mb_kkt_sparse_free(ks);
    free(x);
    free(rhs);
    return s_min;
}

/* The default penalty factor of format 2 models, scaled with the
 * mechanism's mass matrix (docs/model-format.md "Penalty factor").  The
 * penalty term (dt^2/4) alpha Phi_z^T Phi_z of the Newton matrix is made
 * PENALTY_MASS_RATIO times M' in magnitude at dt = PENALTY_DT_REF, the
 * magnitudes being the largest diagonal entries at the start:
 *     alpha_M = PENALTY_MASS_RATIO (4 / dt_ref^2) max_i M'_ii / max_i (Phi_z^T Phi_z)_ii,
 * so that alpha follows the masses and inertias as the ALI3-P literature
 * recommends (Bayo and Ledesma 1996; Cuadrado et al. 2000: alpha relative
 * to the mass matrix).  The lower bound is the given alpha (the seeds'
 * 1e11: smaller factors were measured to stop Newton on the Bennett
 * linkage at small dt), so light mechanisms keep it; heavy ones get more.
 * Why heavy ones need it (measured on data/excavator.yaml at 1e11): the
 * multiplier iteration contracts per Newton iteration by
 * rho = 1/(1 + (h^2/4) alpha s_min) (see below), and the sub-steps that
 * locate events make h far smaller than dt (h = 41 us at t = 1.957 s:
 * rho = 0.75, no convergence in 20 iterations); the inertia of tonne-class
 * links makes s_min small, and alpha_M restores the margin.  The ratio is
 * measured (docs/models.md "Penalty factor"). */
#define PENALTY_MASS_RATIO 4.0

static double penalty_mass_alpha(hymo_mb *mb, double alpha_min, double *colsq)
{
    const int nz = mb->nz;
    const hymo_constraints *con = mb->con;
    double m_max = 0.0, p_max = 0.0;
    for (int i = 0; i < nz; ++i) colsq[i] = 0.0; /* (Phi_z^T Phi_z)_ii, the rows in ascending order */
    for (int t = 0; t < con->nnz; ++t) colsq[con->col[t]] += mb->phi_zv[t] * mb->phi_zv[t];
    hymo_kin_composite(&mb->kin); /* M'_ii from the composite inertias (the formed M''s number) */
    for (int i = 0; i < nz; ++i) {
        const double s = colsq[i], mii = hymo_kin_mass_entry(&mb->kin, i, i);
        if (s > p_max) p_max = s;
        if (mii > m_max) m_max = mii;
    }
    if (!(p_max > 0.0) || !(m_max > 0.0)) return alpha_min;
    const double a = PENALTY_MASS_RATIO * 4.0 / (PENALTY_DT_REF * PENALTY_DT_REF) * m_max / p_max;
    return isfinite(a) && a > alpha_min ? a : alpha_min;
}

static int gram_sparse_alloc(pb_content *c, const hymo_mb *mb);

static hymo_status pb_start(hymo_formulation *f, hymo_mb *mb, double t, hymo_error *err)
{
    (void)t;
    if (mb->m == 0) return HYMO_OK;
    pb_content *c = f->content;
    if (c->sparse) mb->kin.mass_lazy = 1; /* the tangent and the engine's KKT matrix take M''s entries */
    if (mb->con->rank < mb->m && !c->gram && !c->gsym) { /* lambda_min_norm's scratch */
        if (c->sparse ? gram_sparse_alloc(c, mb)
                      : !(c->gram = calloc((size_t)mb->nz * (size_t)mb->nz + 1, sizeof(double))) ||
                            !(c->gpiv = calloc((size_t)mb->nz + 1, sizeof(int))))
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (penalty, Gram matrix)");
    }
    hymo_kin_forces_begin(&mb->kin, mb->model); /* the bodies' mass geometry at the start positions (M''s entries) */
    if (mb->alpha_auto) mb->alpha = penalty_mass_alpha(mb, mb->alpha, c->y);
    const double s_min = smallest_compliance(mb);
    if (s_min > 0.0 && isfinite(s_min)) {
        const double alpha_rho = 4.0 * (1.0 / PENALTY_RHO - 1.0) / (PENALTY_DT_REF * PENALTY_DT_REF * s_min);
        if (alpha_rho > mb->alpha) mb->alpha = alpha_rho;
    }
    return HYMO_OK;
}

/* lambda_k^(0) = final lambda of the previous step */
static void pb_begin_step(hymo_formulation *f, hymo_mb *mb)
{
    (void)mb;
    pb_content *c = f->content;
    c->lambda_frozen = 1;
    c->cg_last = c->cg_off = 0;
    c->cg_phi = -1.0;
    c->cg_scale = 1.0;
}

/* the increments zn - z (see ds_pack) */
static void pb_pack(const hymo_formulation *f, const hymo_mb *mb, double *x)
{
    (void)f;
    for (int j = 0; j < mb->nz; ++j) x[j] = mb->zn[j] - mb->z[j];
}

static void multiplier_update(pb_content *c, hymo_mb *mb, double t);

static hymo_status pb_unpack(hymo_formulation *f, hymo_mb *mb, const double *x, double t, hymo_error *err)
{
    (void)err;
    pb_content *c = f->content;
    const double dt = mb->dt, a1 = 2.0 / dt, a2 = 4.0 / (dt * dt);
    for (int j = 0; j < mb->nz; ++j) { /* the rates from the unknown dz, not from the rounded zn */
        const double dz = x[j];
        mb->zn[j] = mb->z[j] + dz;
        mb->zdn[j] = a1 * dz - mb->zd[j];
        mb->zddn[j] = a2 * dz - 2.0 * a1 * mb->zd[j] - mb->zdd[j];
    }
    hymo_kin_positions(&mb->kin, mb->model, mb->zn);
    /* with constraints, pb_finish_step evaluates them at the projected rates */
    if (!(mb->final_unpack && mb->m > 0)) hymo_kin_velocities(&mb->kin, mb->model, mb->zdn);
    if (mb->m > 0) {
        hymo_constraints_eval(mb->con, &mb->kin, mb->phi, mb->phi_zv, NULL);
        if (!c->lambda_frozen) { /* lambda^(h+1) = lambda^(h) + alpha u, u = Phi^(h+1) or better */
            multiplier_update(c, mb, t);
            c->lambda_frozen = 1;
        }
    }
    return HYMO_OK;
}

static void pb_residual(const hymo_formulation *f, const hymo_mb *mb, double *fm)
{
    const double c = mb->dt * mb->dt / 4.0, alpha = mb->alpha;
    int nz = mb->nz, m = mb->m;
    double *w = ((pb_content *)f->content)->w; /* m scratch: the multipliers with the penalty term */
    const hymo_constraints *con = mb->con;
    for (int r = 0; r < m; ++r) w[r] = alpha * mb->phi[r] + mb->lambda[r];
    for (int i = 0; i < nz; ++i) fm[i] = mb->dyn_res[i];
    for (int r = 0; r < m; ++r) /* Phi_z^T w: for each i the rows in ascending order */
        for (int t = con->row_start[r]; t < con->row_start[r + 1]; ++t) fm[con->col[t]] += mb->phi_zv[t] * w[r];
    for (int i = 0; i < nz; ++i) fm[i] *= c;
}

static void pb_after_update(hymo_formulation *f, hymo_mb *mb)
{
    (void)mb;
    ((pb_content *)f->content)->lambda_frozen = 0;
}

/* The LU of the projection matrix (dense, or KLU's on the block's fixed
 * pattern: analysed once, refactorised with the last pivots, factorised
 * afresh only where those fail); value column-major on the pattern. */
static hymo_status factor_block(pb_content *c, const int *col_start, const int *row, double *value, double t,
                                hymo_error *err)
{
    const int nz = c->nz;
    if (c->sparse) {
        if (!c->sym && !(c->sym = klu_analyze(nz, (int *)col_start, (int *)row, &c->common)))
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (projection matrix)");
        if (c->num && klu_refactor((int *)col_start, (int *)row, value, c->sym, c->num, &c->common) &&
            c->common.status == KLU_OK)
            return HYMO_OK;
        if (c->num) klu_free_numeric(&c->num, &c->common);
        c->num = klu_factor((int *)col_start, (int *)row, value, c->sym, &c->common);
        if (c->num && c->common.status == KLU_OK) return HYMO_OK;
        if (c->num) klu_free_numeric(&c->num, &c->common);
        return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.6g s: singular projection matrix", t);
    }
    for (int i = 0; i < nz; ++i) /* the complete pattern: column-major */
        for (int j = 0; j < nz; ++j) c->jzz[i * nz + j] = value[(size_t)j * nz + i];
    if (hymo_lu_factor(nz, c->jzz, c->piv))
        return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.6g s: singular projection matrix", t);
    return HYMO_OK;
}

/* The Newton matrix's mechanical block gives the projection matrix's
 * pattern (fixed for the run); its values are formed at each step's final
 * state (projection_matrix). */
static hymo_status pb_after_jacobian(hymo_formulation *f, const hymo_sparse *jac, double t, hymo_error *err)
{
    (void)t;
    pb_content *c = f->content;
    if (c->m == 0) return HYMO_OK;
    c->block = jac;
    if (!c->bval && !(c->bval = calloc((size_t)jac->col_start[c->nz] + 1, sizeof(double))))
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (projection matrix)");
    return HYMO_OK;
}

static void block_values(const pb_content *c, hymo_mb *mb, const int *col_start, const int *row, double *value);

/* The projection matrix of seed 002 Eqs. 20-21 at the step's final state:
 * M' + dt^2/4 alpha Phi_z^T Phi_z, with a driven joint's row the unit row
 * (as in the Newton matrix, src/engine/driver.c), so that the velocities
 * and accelerations are projected in the mass metric of the configuration
 * they belong to, whatever the Newton matrix is.  The fast Jacobian's
 * mechanical block is kept over steps that converge in one iteration, so
 * it can be that of a configuration many steps back: a projection with it
 * is skewed against the current constraints and turns the rates along the
 * constraint manifold by the skew times the violation it removes, a drift
 * that no Newton tolerance removes (tests/models/loop_rusr_spherical.yaml,
 * dt = 2 ms: 6.1e-2 rad off the independent solution with that block,
 * 6.3e-3 rad with this matrix, numeric Jacobian 6.2e-3 rad).  The numeric
 * block would add dt/2 C + dt^2/4 K of the last iterate (the same order). */
static hymo_status projection_matrix(pb_content *c, hymo_mb *mb, double t, hymo_error *err)
{
    const hymo_sparse *B = c->block;
    if (!B || !c->bval) return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.6g s: projection before the Newton matrix", t);
    hymo_kin_composite(&mb->kin); /* the mass geometry at the final positions */
    if (!c->sparse && hymo_kin_mass(&mb->kin))
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (mass matrix)");
    c->lu_ready = 0;
    block_values(c, mb, B->col_start, B->row, c->bval);
    for (int k = 0; k < mb->model->n_drivers; ++k) {
        const int u = mb->model->drivers[k].joint;
        for (int j = 0; j < c->nz; ++j)
            for (int e = B->col_start[j]; e < B->col_start[j + 1]; ++e)
                if (B->row[e] == u) c->bval[e] = j == u ? 1.0 : 0.0;
    }
    const hymo_status st = factor_block(c, B->col_start, B->row, c->bval, t, err);
    if (st == HYMO_OK) c->lu_ready = 1, c->lu_c = mb->dt * mb->dt / 4.0;
    return st;
}

/* v <- v - W^{-1} Phi_z^T (dt^2/4) alpha (Phi_z v + bias): the
 * mass-damping-stiffness orthogonal projection (seed 002 Eqs. 20-21), with
 * W + dt^2/4 Phi_z^T alpha Phi_z taken as the mechanical block of the
 * Newton Jacobian (M' + dt/2 C + dt^2/4 K incl. the actuator terms). */
static void project(pb_content *pc, const hymo_mb *mb, double *v, const double *bias)
{
    int nz = mb->nz, m = mb->m;
    const double c = mb->dt * mb->dt / 4.0 * mb->alpha;
    double *w = pc->w, *y = pc->y;
    const hymo_constraints *con = mb->con;
    const double *P = mb->phi_zv;
    for (int r = 0; r < m; ++r) {
        double s = bias ? bias[r] : 0.0;
        for (int t = con->row_start[r]; t < con->row_start[r + 1]; ++t) s += P[t] * v[con->col[t]];
        w[r] = c * s;
    }
    for (int j = 0; j < nz; ++j) y[j] = 0.0;
    for (int r = 0; r < m; ++r)
        for (int t = con->row_start[r]; t < con->row_start[r + 1]; ++t) y[con->col[t]] += P[t] * w[r];
    /* a driven joint's rate is prescribed; its row of the
     * matrix is the unit row (src/engine/driver.c), so with a zero right-hand side
     * the projection leaves it and projects the other coordinates */
    for (int k = 0; k < mb->model->n_drivers; ++k) y[mb->model->drivers[k].joint] = 0.0;
    if (pc->sparse)
        klu_solve(pc->sym, pc->num, nz, 1, y, &pc->common);
    else
        hymo_lu_solve(nz, pc->jzz, pc->piv, y);
    for (int j = 0; j < nz; ++j) v[j] -= y[j];
}

/* The multiplier update.  Newton's iteration with lambda += alpha Phi
 * after each update is the augmented-Lagrangian iteration: one step of
 * Richardson's iteration, step 1, on the Schur complement system
 *     A u = Phi,  A = (dt^2/4) alpha Phi_z W^-1 Phi_z^T,  lambda += alpha u,
 * W the projection matrix M' + (dt^2/4) alpha Phi_z^T Phi_z, whose
 * eigenvalues are (dt^2/4) alpha s / (1 + (dt^2/4) alpha s), s those of
 * Phi_z M'^-1 Phi_z^T: u = Phi leaves rho = 1 / (1 + (dt^2/4) alpha s) of
 * each mode per iteration.  Where Phi_z loses rank (links in one line:
 * the parallelogram chains' cranks at the horizontal) s -> 0 in the lost
 * directions, rho -> 1, and the true multipliers there grow as 1/distance
 * to the singular position while their generalised force stays finite:
 * Richardson's update cannot follow (two parallelogram loops at 0.5 ms: the
 * loops' violations stayed at +-2.2e-8 m while their multipliers grew by
 * 2.2e3 N per iteration, and Newton stopped at the first crossing).
 * Where an update contracted the violation of the independent rows less
 * than 1/MULTIPLIER_CG_GATE (measured over the step's last update; above
 * MULTIPLIER_CG_FLOOR rounding units of the largest coordinate; not on
 * mechanisms with redundant rows, whose multipliers lambda_min_norm
 * keeps), u is instead found by conjugate gradients on
 * (A + MULTIPLIER_SHIFT I) u = Phi, W factorised at the iterate, each
 * product one solve with its LU: the lost directions converge in a few
 * products, and the shift keeps the system positive definite where the
 * rank is lost exactly (u at most Phi / MULTIPLIER_SHIFT there, where its
 * generalised force vanishes).  The Newton matrix may answer otherwise
 * than W (the numeric one holds the geometric stiffness of the large
 * multipliers, the fast one may be an earlier step's): an update that
 * removed more than the violation scales the step's later ones down by the
 * share it removed, one that removed none returns the step to Richardson.
 * The shipped models take Richardson's update at nearly every step;
 * event sub-steps (h far below dt, rho large) may take the other. */
#define MULTIPLIER_CG_GATE 0.5
/* a violation below this many rounding units of the largest coordinate is round-off */
#define MULTIPLIER_CG_FLOOR 64.0
#define MULTIPLIER_SHIFT 1e-8
#define MULTIPLIER_CG_MAX 64
#define MULTIPLIER_CG_TOL 1e-10

/* q = (c alpha Phi_z W^-1 Phi_z^T + shift I) p, y: nz scratch */
static void schur_apply(pb_content *pc, const hymo_mb *mb, const double *p, double *q, double *y, double shift)
{
    const hymo_constraints *con = mb->con;
    const double *P = mb->phi_zv, ca = pc->lu_c * mb->alpha;
    for (int j = 0; j < mb->nz; ++j) y[j] = 0.0;
    for (int r = 0; r < mb->m; ++r)
        for (int t = con->row_start[r]; t < con->row_start[r + 1]; ++t) y[con->col[t]] += P[t] * p[r];
    for (int k = 0; k < mb->model->n_drivers; ++k) y[mb->model->drivers[k].joint] = 0.0; /* as project() */
    if (pc->sparse)
        klu_solve(pc->sym, pc->num, mb->nz, 1, y, &pc->common);
    else
        hymo_lu_solve(mb->nz, pc->jzz, pc->piv, y);
    for (int r = 0; r < mb->m; ++r) {
        double s = 0.0;
        for (int t = con->row_start[r]; t < con->row_start[r + 1]; ++t) s += P[t] * y[con->col[t]];
        q[r] = ca * s + shift * p[r];
    }
}

static void multiplier_update(pb_content *c, hymo_mb *mb, double t)
{
    const int m = mb->m;
    double *r = c->cg, *p = r + m, *q = p + m, *u = q + m, *prev = u + m, *y = prev + m;
    double phi_max = 0.0, z_max = 1.0;
    for (int k = 0; k < m; ++k)
        if (!mb->con->redundant[k]) phi_max = fmax(phi_max, fabs(mb->phi[k]));
    for (int j = 0; j < mb->nz; ++j) z_max = fmax(z_max, fabs(mb->zn[j]));
    /* after an update by conjugate gradients: scaled down after an
     * overshoot, Richardson for the rest of the step after no progress */
    if (c->cg_last) { /* the share of the violation the update removed, gamma (1: all of it) */
        double a = 0.0, b = 0.0;
        for (int k = 0; k < m; ++k)
            if (!mb->con->redundant[k]) a += mb->phi[k] * prev[k], b += prev[k] * prev[k];
        const double gamma = b > 0.0 ? 1.0 - a / b : 0.0;
        if (gamma > 1.0) c->cg_scale /= gamma; /* overshoot: the next updates scaled down */
        if (!(phi_max < c->cg_phi) && !(gamma > 1.0)) c->cg_off = 1;
    }
    /* Richardson's contraction as measured over the last update of the step
     * (or the last update was by conjugate gradients and reduced Phi) */
    const int slow = c->cg_phi > 0.0 && (c->cg_last || phi_max > MULTIPLIER_CG_GATE * c->cg_phi);
    int richardson = c->cg_off || !slow || mb->con->rank < m || !(phi_max > MULTIPLIER_CG_FLOOR * DBL_EPSILON * z_max);
    c->cg_last = 0;
    c->cg_phi = phi_max;
    /* W at this iterate (the last step's W with this iterate's Phi_z is
     * not A: its soft directions, null(Phi_z) of the last step, leak into
     * this Phi_z, by 1e2-1e3 on the spatial four-bar at 4 ms) */
    hymo_error err;
    if (!richardson && projection_matrix(c, mb, t, &err) != HYMO_OK) richardson = 1;
    if (richardson) {
        for (int k = 0; k < m; ++k) mb->lambda[k] += mb->alpha * mb->phi[k];
        return;
    }
    double rr = 0.0;
    for (int k = 0; k < m; ++k) {
        u[k] = 0.0;
        r[k] = p[k] = mb->con->redundant[k] ? 0.0 : mb->phi[k];
        rr += r[k] * r[k];
    }
    for (int it = 0; it < MULTIPLIER_CG_MAX; ++it) {
        schur_apply(c, mb, p, q, y, MULTIPLIER_SHIFT);
        double pq = 0.0;
        for (int k = 0; k < m; ++k) pq += p[k] * q[k];
        if (!(pq > 0.0) || !isfinite(pq)) break;
        const double a = rr / pq;
        double rn = 0.0, left = 0.0;
        for (int k = 0; k < m; ++k) {
            if (mb->con->redundant[k]) q[k] = 0.0; /* the operator on the independent rows */
            u[k] += a * p[k];
            r[k] -= a * q[k];
            rn += r[k] * r[k];
            left = fmax(left, fabs(r[k]));
        }
        if (!(left > MULTIPLIER_CG_TOL * phi_max)) break;
        const double beta = rn / rr;
        rr = rn;
        for (int k = 0; k < m; ++k) p[k] = r[k] + beta * p[k];
    }
    for (int k = 0; k < m; ++k) {
        mb->lambda[k] += mb->alpha * (mb->con->redundant[k] || !isfinite(u[k]) ? mb->phi[k] : c->cg_scale * u[k]);
        prev[k] = mb->phi[k];
    }
    c->cg_last = 1;
}

/* With redundant constraint rows, lambda is determined only up
 * to the null space of Phi_z^T; the updates lambda += alpha Phi let it
 * drift there without bound (the Bennett linkage, 3 redundant rows of 5,
 * dt = 0.25 ms: max |lambda| 526 N after 1 s, 1.2e7 N after 6 s, with
 * Phi_z^T lambda 17-24 N; 10x more at alpha = 1e12).  The forces do not
 * see it, but the numeric Newton matrix does, through the geometric
 * stiffness dt^2/4 sum_r lambda_r d2Phi_r/dz2 (its mechanical block minus
 * M' + dt^2/4 alpha Phi_z^T Phi_z reached 0.095 against M' ~ 1.2-2), and
 * the velocity and acceleration projections use that block: penalty with
 * the numeric Jacobian lost second order (docs/models.md, Bennett).  So at
 * the end of each step lambda is replaced by the smallest multipliers with
 * the same generalised force g = Phi_z^T lambda: lambda = Phi_z w with
 * Phi_z^T Phi_z w = g (any solution gives the same Phi_z w; the singular
 * Gram matrix is shifted by GRAM_SHIFT of its largest diagonal entry and
 * the solve refined once).  Mechanisms without redundant rows are left
 * as they are (their lambda is unique). */
#define GRAM_SHIFT 1e-13

/* The shifted Gram matrix Phi_z^T Phi_z + GRAM_SHIFT max_i (Phi_z^T Phi_z)_ii I
 * and its LU: dense (each entry's rows in ascending order), or on gsp's
 * pattern by KLU (refactorised with the start's pivots).  0, or 1 if
 * singular. */
static int gram_factor(pb_content *c, const hymo_mb *mb)
{
    const int nz = mb->nz, m = mb->m;
    const double *P = mb->phi_zv;
    const int *rs = mb->con->row_start, *cj = mb->con->col;
    double dmax = 0.0;
    if (c->sparse) {
        hymo_sparse *G = &c->gsp;
        hymo_sparse_zero(G);
        for (int r = 0; r < m; ++r)
            for (int a = rs[r]; a < rs[r + 1]; ++a)
                for (int b = rs[r]; b < rs[r + 1]; ++b) *hymo_sparse_at(G, cj[a], cj[b]) += P[a] * P[b];
        for (int i = 0; i < nz; ++i) dmax = fmax(dmax, *hymo_sparse_at(G, i, i));
        if (!(dmax > 0.0)) return 1;
        for (int i = 0; i < nz; ++i) *hymo_sparse_at(G, i, i) += GRAM_SHIFT * dmax;
        if (c->gnum && klu_refactor(G->col_start, G->row, G->value, c->gsym, c->gnum, &c->common) &&
            c->common.status == KLU_OK)
            return 0;
        if (c->gnum) klu_free_numeric(&c->gnum, &c->common);
        c->gnum = klu_factor(G->col_start, G->row, G->value, c->gsym, &c->common);
        return !c->gnum || c->common.status != KLU_OK;
    }
    double *A = c->gram;
    for (int i = 0; i < nz * nz; ++i) A[i] = 0.0;
    for (int r = 0; r < m; ++r) /* Phi_z^T Phi_z, each entry's rows in ascending order */
        for (int a = rs[r]; a < rs[r + 1]; ++a)
            for (int b = rs[r]; b < rs[r + 1]; ++b) A[cj[a] * nz + cj[b]] += P[a] * P[b];
    for (int i = 0; i < nz; ++i)
        if (A[i * nz + i] > dmax) dmax = A[i * nz + i];
    for (int i = 0; i < nz; ++i) A[i * nz + i] += GRAM_SHIFT * dmax;
    return !(dmax > 0.0) || hymo_lu_factor(nz, A, c->gpiv);
}

/* gsp's pattern and KLU's analysis, and a first factorisation at the
 * start's values (so that the step loop only refactorises); 0, or 1 out of
 * memory */
static int gram_sparse_alloc(pb_content *c, const hymo_mb *mb)
{
    const hymo_constraints *con = mb->con;
    size_t np = (size_t)mb->nz;
    for (int r = 0; r < con->m; ++r) np += (size_t)(con->row_start[r + 1] - con->row_start[r]) * (con->row_start[r + 1] - con->row_start[r]);
    int *rows = malloc(np * sizeof(int)), *cols = malloc(np * sizeof(int));
    int bad = !rows || !cols || np > (size_t)INT_MAX;
    size_t n = 0;
    for (int i = 0; i < mb->nz && !bad; ++i) rows[n] = cols[n] = i, ++n;
    for (int r = 0; r < con->m && !bad; ++r)
        for (int a = con->row_start[r]; a < con->row_start[r + 1]; ++a)
            for (int b = con->row_start[r]; b < con->row_start[r + 1]; ++b) rows[n] = con->col[a], cols[n++] = con->col[b];
    bad = bad || hymo_sparse_pattern(&c->gsp, mb->nz, mb->nz, (int)n, rows, cols);
    free(rows), free(cols);
    if (bad) return 1;
    c->gsym = klu_analyze(mb->nz, c->gsp.col_start, c->gsp.row, &c->common);
    if (!c->gsym) return 1;
    gram_factor(c, mb); /* a singular start leaves gnum NULL: factorised in the loop */
    return 0;
}

static void gram_solve(pb_content *c, double *w)
{
    if (c->sparse)
        klu_solve(c->gsym, c->gnum, c->nz, 1, w, &c->common);
    else
        hymo_lu_solve(c->nz, c->gram, c->gpiv, w);
}

static void lambda_min_norm(pb_content *c, hymo_mb *mb)
{
    const int nz = mb->nz, m = mb->m;
    if (mb->con->rank >= m || (!c->gram && !c->gsym)) return;
    const double *P = mb->phi_zv;
    const hymo_constraints *con = mb->con;
    const int *rs = con->row_start, *cj = con->col;
    double *w = c->y, *lam = c->w; /* y, w: project()'s scratch */
    if (gram_factor(c, mb)) return;
    for (int r = 0; r < m; ++r) lam[r] = 0.0;
    for (int pass = 0; pass < 2; ++pass) { /* w from the residual force g - Phi_z^T lam, added */
        for (int i = 0; i < nz; ++i) w[i] = 0.0;
        for (int r = 0; r < m; ++r)
            for (int t = rs[r]; t < rs[r + 1]; ++t) w[cj[t]] += P[t] * (mb->lambda[r] - lam[r]);
        gram_solve(c, w);
        const hymo_csr pz = hymo_constraints_csr(con, P);
        for (int r = 0; r < m; ++r) lam[r] += hymo_csr_row_dot(&pz, r, w);
    }
    for (int r = 0; r < m; ++r) mb->lambda[r] = lam[r];
}

/* Max |Phi_z v + bias| */
static double violation(const hymo_mb *mb, const double *v, const double *bias)
{
    double worst = 0.0;
    for (int r = 0; r < mb->m; ++r) {
        double s = bias ? bias[r] : 0.0;
        for (int t = mb->con->row_start[r]; t < mb->con->row_start[r + 1]; ++t) s += mb->phi_zv[t] * v[mb->con->col[t]];
        if (fabs(s) > worst) worst = fabs(s);
    }
    return worst;
}

/* The projection with the LU of a matrix from an earlier
 * configuration (the fast Jacobian kept after a one-iteration step) can
 * leave much of the violation: Bennett linkage, fast, 1 ms, t = 2.964 s:
 * |Phi_z zd| 4.9e-6 -> 5.0e-7 where the other steps reach ~2.6e-10 (5e-5 of
 * it).  Where one pass leaves more than PROJECT_REFINE of the violation,
 * the projection is repeated (a fixed-point iteration with the same
 * matrix, whose fixed point is Phi_z v + bias = 0), at most PROJECT_PASSES
 * times in all, while it improves.  It also acts where a single penalty
 * projection is inexact by itself, (dt^2/4) alpha s_min below ~100 (the
 * Bennett linkage at 62.5 us: |Phi_z zd| 4.6e-10 -> 1.5e-12, error
 * 5.83e-8 unchanged); no shipped golden run repeats a projection.  A pass
 * contracts the violation by about rho = 1/(1 + (dt^2/4) alpha s_min), which
 * tends to 1 as dt falls below PENALTY_DT_REF; the passes must then be many
 * or the projection stays partial and the result depends on alpha
 * (tests/models/loop_rusp.yaml, alpha 1e11, 15.6 us: 2.5e-6 rad off the
 * independent solution after 4 passes, 4.6e-6 rad, = the exact projection's,
 * after at most 64; tests/independent/README.md "Closed loops"). */
#define PROJECT_REFINE 1e-2
#define PROJECT_PASSES 64

static void project_refined(pb_content *pc, const hymo_mb *mb, double *v, const double *bias)
{
    double before = violation(mb, v, bias);
    for (int pass = 0; pass < PROJECT_PASSES; ++pass) {
        project(pc, mb, v, bias);
        const double after = violation(mb, v, bias);
        if (!(after > PROJECT_REFINE * before) || !(after < before)) break;
        before = after;
    }
}

static hymo_status pb_finish_step(hymo_formulation *f, hymo_mb *mb, double t, long step, int *unknowns_changed,
                                  hymo_error *err)
{
    (void)step;
    *unknowns_changed = 0;
    if (mb->m == 0) return HYMO_OK;
    hymo_status st = projection_matrix(f->content, mb, t, err);
    if (st != HYMO_OK) return st;
    project_refined(f->content, mb, mb->zdn, NULL);
    hymo_kin_velocities(&mb->kin, mb->model, mb->zdn);
    hymo_constraints_eval(mb->con, &mb->kin, mb->phi, NULL, mb->gamma);
    project_refined(f->content, mb, mb->zddn, mb->gamma);
    lambda_min_norm(f->content, mb);
    return HYMO_OK;
}

/* M'_ij: the formed matrix's, or (sparse mode, M' not formed) from the
 * composite inertias where one joint is on the other's path (the same
 * number), zero elsewhere */
static double mass_ij(const pb_content *c, const hymo_kin *kin, int i, int j)
{
    if (!c->sparse) return kin->M[(size_t)i * (size_t)c->nz + (size_t)j];
    if (hymo_kin_on_path(kin, j, i)) return hymo_kin_mass_entry(kin, i, j);
    if (hymo_kin_on_path(kin, i, j)) return hymo_kin_mass_entry(kin, j, i);
    return 0.0;
}

/* M' + dt^2/4 alpha Phi_z^T Phi_z at a pattern of the mechanical block
 * (column-major).  The sums over the rows r run over the rows where both
 * columns of Phi_z are non-zero, in ascending order: the full sums without
 * their exact zeros (bit-identical).  Column j's sums are gathered row by
 * row (acc[i] += P_ri P_rj over the rows r of column j, ascending), at
 * the cost of the lengths of those rows; every pair of a row's columns is
 * in the pattern, so reading the column's entries leaves acc zero. */
static void block_values(const pb_content *c, hymo_mb *mb, const int *col_start, const int *row, double *value)
{
    const int nz = mb->nz, m = mb->m;
    const double ca = mb->dt * mb->dt / 4.0 * mb->alpha;
    const double *P = mb->phi_zv;
    const hymo_constraints *con = mb->con;
    int *colp = c->colp, *colr = c->colr, *colt = c->colt;
    for (int i = 0; i <= nz; ++i) colp[i] = 0;
    for (int t = 0; t < con->nnz; ++t) colp[con->col[t] + 1] += P[t] != 0.0;
    for (int i = 0; i < nz; ++i) colp[i + 1] += colp[i];
    int *fill = colp + nz + 1;
    for (int i = 0; i < nz; ++i) fill[i] = colp[i];
    for (int r = 0; r < m; ++r) /* each column's rows ascending */
        for (int t = con->row_start[r]; t < con->row_start[r + 1]; ++t)
            if (P[t] != 0.0) colr[fill[con->col[t]]] = r, colt[fill[con->col[t]]++] = t;
    if (c->sparse) hymo_kin_composite(&mb->kin);
    double *acc = c->acc;
    for (int j = 0; j < nz; ++j) {
        for (int b = colp[j]; b < colp[j + 1]; ++b) {
            const int r = colr[b];
            const double pj = P[colt[b]];
            for (int t = con->row_start[r]; t < con->row_start[r + 1]; ++t)
                if (P[t] != 0.0) acc[con->col[t]] += P[t] * pj;
        }
        for (int e = col_start[j]; e < col_start[j + 1]; ++e) {
            const int i = row[e];
            value[e] = mass_ij(c, &mb->kin, i, j) + ca * acc[i];
            acc[i] = 0.0;
        }
    }
}

/* The fast Jacobian's mechanical block: M' + dt^2/4 alpha Phi_z^T Phi_z
 * (see the engine's fast Jacobian) at the block's pattern; gx = gz. */
static void pb_tangent(const hymo_formulation *f, hymo_mb *mb, const double *gz, int na, double *gx,
                       hymo_sparse *jac)
{
    block_values(f->content, mb, jac->col_start, jac->row, jac->value);
    memcpy(gx, gz, (size_t)na * (size_t)mb->nz * sizeof(double));
}

/* The pairs (both ways) of the joints on the paths of two bodies (or
 * HYMO_GROUND) to the ground that are not on one path: those across the
 * branches below the bodies' common ancestor; rows/cols from n on (NULL:
 * counted only); the new n. */
static int cross_pairs(const hymo_kin *kin, int b0, int b1, int *rows, int *cols, int n)
{
    for (int x = b0; x != HYMO_GROUND && !hymo_kin_on_path(kin, b1, x); x = kin->bd[x].parent)
        for (int y = b1; y != HYMO_GROUND && !hymo_kin_on_path(kin, b0, y); y = kin->bd[y].parent) {
            if (rows) rows[n] = x, cols[n] = y, rows[n + 1] = y, cols[n + 1] = x;
            n += 2;
        }
    return n;
}

/* *t0, *t1 with a[0..n) = hymo_kin_path_union(t0, t1) (t1 = HYMO_GROUND:
 * one path), or 0 if the list is not such a union */
static int path_union_tips(const hymo_kin *kin, const int *a, int n, int *t0, int *t1)
{
    if (n == 0) return 0;
    int k = 0;
    while (k + 1 < n && kin->bd[a[k]].parent == a[k + 1]) ++k;
    if (kin->bd[a[k]].parent != HYMO_GROUND) return 0;
    *t0 = a[0], *t1 = HYMO_GROUND;
    if (++k == n) return 1;
    *t1 = a[k];
    for (; k < n; ++k) {
        const int p = kin->bd[a[k]].parent;
        if (hymo_kin_on_path(kin, a[0], a[k])) return 0;
        if (k + 1 < n ? p != a[k + 1] : p != HYMO_GROUND && !hymo_kin_on_path(kin, a[0], p)) return 0;
    }
    return 1;
}

/* Sparse mode: M' + dt^2/4 alpha Phi_z^T Phi_z and the force sets' pairs
 * (the unknowns are the joint coordinates).  M''s are a joint and each
 * joint on its path, both ways.  A constraint row's columns and an
 * actuator's or force element's set are the joints on the paths of two
 * bodies (hymo_kin_path_union): its pairs on one path are M''s, so only
 * those across the two branches below the common ancestor are added
 * (cross_pairs), once for the rows of one body pair; a set of another
 * form adds all its pairs.  Each entry is emitted once unless two body
 * pairs share branches: O(nnz) pairs where every pair of a row's columns
 * took O(sum of squared row lengths). */
static int pb_mech_pattern(const hymo_formulation *f, const hymo_mb *mb, const int *set_start, const int *set_joint,
                           int n_sets, int *rows, int *cols)
{
    const pb_content *c = f->content;
    if (!c->sparse) return -1;
    const hymo_constraints *con = mb->con;
    const hymo_kin *kin = &mb->kin;
    int n = 0;
#define PAIR(i, j) (rows ? (rows[n] = (i), cols[n] = (j)) : 0, ++n)
    for (int j = 0; j < mb->nz; ++j)
        for (int i = j; i != HYMO_GROUND; i = kin->bd[i].parent) {
            PAIR(i, j);
            if (i != j) PAIR(j, i);
        }
    for (int r = 0; r < con->m; ++r) {
        const hymo_prim *p = &con->prims[r], *q = r > 0 ? &con->prims[r - 1] : NULL;
        if (!q || p->body_a != q->body_a || p->body_b != q->body_b) n = cross_pairs(kin, p->body_a, p->body_b, rows, cols, n);
    }
    for (int k = 0; k < n_sets; ++k) {
        const int *a = set_joint + set_start[k], len = set_start[k + 1] - set_start[k];
        int t0, t1;
        if (path_union_tips(kin, a, len, &t0, &t1))
            n = cross_pairs(kin, t0, t1, rows, cols, n);
        else
            for (int x = 0; x < len; ++x)
                for (int y = 0; y < len; ++y) PAIR(a[x], a[y]);
    }
#undef PAIR
    return n;
}

static int pb_unknown_joint(const hymo_formulation *f, int k) { return (void)f, k; }

static int pb_independent(const hymo_formulation *f, const int **indices)
{
    const pb_content *c = f->content;
    *indices = c->all;
    return c->nz;
}

static const char *pb_log(const hymo_formulation *f) { return (void)f, "all"; }
static int pb_reselections(const hymo_formulation *f) { return (void)f, 0; }
static double pb_penalty_factor(const hymo_formulation *f, const hymo_mb *mb) { return (void)f, mb->alpha; }

const hymo_formulation_ops hymo_penalty_ops = {
    .name = "penalty",
    .create = pb_create,
    .destroy = pb_destroy,
    .n_mech = pb_n_mech,
    .start = pb_start,
    .begin_step = pb_begin_step,
    .pack = pb_pack,
    .unpack = pb_unpack,
    .residual = pb_residual,
    .after_update = pb_after_update,
    .after_jacobian = pb_after_jacobian,
    .finish_step = pb_finish_step,
    .tangent = pb_tangent,
    .mech_pattern = pb_mech_pattern,
    .unknown_joint = pb_unknown_joint,
    .independent = pb_independent,
    .log = pb_log,
    .reselections = pb_reselections,
    .penalty_factor = pb_penalty_factor,
    .accelerations = NULL,
};
