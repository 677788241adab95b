/* Unified trapezoidal Newton-Raphson engine (SPEC §3, seed 002 §4).
 * One unknown vector x = [mechanical unknowns of the formulation; p; U]. */
#include "engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"

void hymo_engine_actuators(hymo_sim *sim)
{
    const hymo_model *model = sim->model;
    for (int a = 0; a < sim->na; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const hymo_point *pb = &model->points[cy->point_base], *pr = &model->points[cy->point_rod];
        double *rb = &sim->s_ends[6 * a], *rr = rb + 3, vb[3], vr[3], *e = &sim->s_dir[3 * a];
        hymo_kin_body_point(&sim->kin, pb->body, pb->r, rb);
        hymo_kin_body_point(&sim->kin, pr->body, pr->r, rr);
        hymo_kin_point_velocity(&sim->kin, pb->body, rb, vb);
        hymo_kin_point_velocity(&sim->kin, pr->body, rr, vr);
        for (int k = 0; k < 3; ++k) e[k] = rr[k] - rb[k];
        double s = sqrt(hymo_dot(e, e));
        for (int k = 0; k < 3; ++k) e[k] /= s;
        sim->s[a] = s;
        sim->sd[a] = (vr[0] - vb[0]) * e[0] + (vr[1] - vb[1]) * e[1] + (vr[2] - vb[2]) * e[2];
    }
}

/* Actuators, hydraulics and the body forces (gravity, velocity terms,
 * cylinder forces) at the iterate, before M' and Q'. */
static hymo_status engine_forces(hymo_sim *sim, hymo_error *err)
{
    const hymo_model *model = sim->model;
    hymo_engine_actuators(sim);
    if (sim->split == HYMO_SPLIT_FORCE)
        memcpy(sim->force, sim->ext_force, (size_t)sim->na * sizeof(double));
    else if (sim->split == HYMO_SPLIT_PRESSURE)
        hymo_engine_cylinder_forces(sim, sim->pn, sim->force);
    else if (hymo_circuit_eval(&sim->circ, model, sim->s, sim->sd, sim->pn, sim->un, sim->uref_end, sim->hp,
                               sim->hu, sim->force))
        return hymo_error_set(err, HYMO_ERR_NUMERIC,
                              "t = %.6g s (step %ld): a hydraulic volume became non-positive "
                              "(piston beyond its stroke?)",
                              sim->t + sim->opt.dt, sim->step + 1);
    hymo_kin_forces_begin(&sim->kin, model);
    for (int a = 0; a < sim->na; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const hymo_point *pb = &model->points[cy->point_base], *pr = &model->points[cy->point_rod];
        const double *rb = &sim->s_ends[6 * a], *rr = rb + 3;
        double f[3], mf[3];
        for (int k = 0; k < 3; ++k) {
            f[k] = sim->force[a] * sim->s_dir[3 * a + k];
            mf[k] = -f[k];
        }
        hymo_kin_add_point_force(&sim->kin, pr->body, rr, f);
        hymo_kin_add_point_force(&sim->kin, pb->body, rb, mf);
    }
    return HYMO_OK;
}

hymo_status hymo_engine_dynamics(hymo_sim *sim, hymo_error *err)
{
    hymo_status st = engine_forces(sim, err);
    if (st == HYMO_OK) hymo_kin_mass_and_forces(&sim->kin, sim->model);
    return st;
}

void hymo_engine_cylinder_forces(hymo_sim *sim, const double *p, double *force)
{
    hymo_circuit_eval(&sim->circ, sim->model, sim->s, sim->sd, p, sim->un, sim->uref_end, NULL, NULL, force);
}

void hymo_engine_refresh_actuators(hymo_sim *sim)
{
    hymo_engine_actuators(sim);
    if (sim->split == HYMO_SPLIT_FORCE)
        memcpy(sim->force, sim->ext_force, (size_t)sim->na * sizeof(double));
    else
        hymo_engine_cylinder_forces(sim, sim->pn, sim->force);
}

void hymo_engine_actuator_accel(hymo_sim *sim, const double *zdd, double *sdd)
{
    const hymo_model *model = sim->model;
    for (int a = 0; a < sim->na; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const int body[2] = {model->points[cy->point_base].body, model->points[cy->point_rod].body};
        const double *e = &sim->s_dir[3 * a];
        double acc[2][3], vel[2][3];
        for (int end = 0; end < 2; ++end) {
            const double *r = &sim->s_ends[6 * a + 3 * end];
            hymo_kin_point_accel0(&sim->kin, body[end], r, acc[end]);
            hymo_kin_point_velocity(&sim->kin, body[end], r, vel[end]);
            for (int j = 0; j < sim->nz; ++j) {
                double col[3];
                hymo_kin_point_jacobian(&sim->kin, body[end], j, r, col);
                for (int k = 0; k < 3; ++k) acc[end][k] += col[k] * zdd[j];
            }
        }
        /* s = |d|, sd = e.d', sdd = e.d'' + (|d'|^2 - sd^2)/s */
        double dv[3], da[3];
        for (int k = 0; k < 3; ++k) {
            dv[k] = vel[1][k] - vel[0][k];
            da[k] = acc[1][k] - acc[0][k];
        }
        sdd[a] = hymo_dot(e, da) + (hymo_dot(dv, dv) - sim->sd[a] * sim->sd[a]) / sim->s[a];
    }
}

void hymo_engine_actuator_gradients(const hymo_sim *sim, double *gz)
{
    const hymo_model *model = sim->model;
    const int nz = sim->nz;
    for (int a = 0; a < sim->na; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const hymo_point *pb = &model->points[cy->point_base], *pr = &model->points[cy->point_rod];
        const double *rb = &sim->s_ends[6 * a], *rr = rb + 3, *e = &sim->s_dir[3 * a];
        for (int j = 0; j < nz; ++j) {
            double jb[3], jr[3];
            hymo_kin_point_jacobian(&sim->kin, pb->body, j, rb, jb);
            hymo_kin_point_jacobian(&sim->kin, pr->body, j, rr, jr);
            gz[a * nz + j] = (jr[0] - jb[0]) * e[0] + (jr[1] - jb[1]) * e[1] + (jr[2] - jb[2]) * e[2];
        }
    }
}

/* The state at t_{k+1} from the unknowns x: the formulation's unpack
 * (z, zd, zdd and the kinematics), then p, pd, U, Ud by the trapezoidal rule. */
static hymo_status unpack_state(hymo_sim *sim, const double *x, hymo_error *err)
{
    const double a1 = 2.0 / sim->opt.dt;
    hymo_status st = sim->form->unpack(sim, x, err);
    if (st != HYMO_OK || sim->split != HYMO_SPLIT_NONE) return st;
    const double *xp = x + sim->nxm, *xu = xp + sim->np;
    for (int k = 0; k < sim->np; ++k) {
        sim->pn[k] = xp[k];
        sim->pdn[k] = a1 * (xp[k] - sim->p[k]) - sim->pd[k];
    }
    for (int k = 0; k < sim->nu; ++k) {
        sim->un[k] = xu[k];
        sim->udn[k] = a1 * (xu[k] - sim->u[k]) - sim->ud[k];
    }
    return HYMO_OK;
}

/* f(x): the scaled residual of seed 002 Eqs. 38-39 plus the spool rows. */
static hymo_status eval_residual(hymo_sim *sim, const double *x, double *f, hymo_error *err)
{
    const double c = sim->opt.dt * sim->opt.dt / 4.0;
    hymo_status st = unpack_state(sim, x, err);
    if (st == HYMO_OK) st = engine_forces(sim, err);
    if (st != HYMO_OK) return st;
    hymo_kin_inverse_dynamics(&sim->kin, sim->zddn, sim->dyn_res); /* M' zdd - Q', M' not formed */
    sim->form->residual(sim, f);
    if (sim->split != HYMO_SPLIT_NONE) return HYMO_OK;
    double *fp = f + sim->nxm, *fu = fp + sim->np;
    for (int k = 0; k < sim->np; ++k) fp[k] = c * (sim->pdn[k] - sim->hp[k]);
    for (int k = 0; k < sim->nu; ++k) fu[k] = c * (sim->udn[k] - sim->hu[k]);
    return HYMO_OK;
}

/* Factorises sim->jac; for penalty also the LU of its mechanical block
 * (the projection matrix of seed 002 Eqs. 20-21). */
static hymo_status factor_jacobian(hymo_sim *sim, hymo_error *err)
{
    const int nx = sim->nx, nz = sim->nz;
    sim->jacobian_evaluations++;
    if (sim->form == &hymo_penalty_ops && sim->m > 0) {
        for (int i = 0; i < nz; ++i)
            for (int j = 0; j < nz; ++j) sim->jzz[i * nz + j] = sim->jac[(size_t)j * nx + i];
        if (hymo_lu_factor(nz, sim->jzz, sim->jzz_piv))
            return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.6g s (step %ld): singular projection matrix",
                                  sim->t + sim->opt.dt, sim->step + 1);
    }
    if (sim->ls->ops->factor(sim->ls, sim->jac))
        return hymo_error_set(err, HYMO_ERR_NUMERIC,
                              "t = %.6g s (step %ld): singular Newton Jacobian (%s solver)",
                              sim->t + sim->opt.dt, sim->step + 1, sim->ls->ops->name);
    sim->jac_valid = 1;
    return HYMO_OK;
}

/* Forward-difference Jacobian (seed 002 Eqs. 40-41), factorised; also the
 * LU of its mechanical block for the penalty projections. */
static hymo_status jacobian(hymo_sim *sim, hymo_error *err)
{
    const int nx = sim->nx, nz = sim->nz;
    double *x = sim->x, *zsave = sim->vz2;
    memcpy(zsave, sim->zn, (size_t)nz * sizeof(double));
    for (int j = 0; j < nx; ++j) {
        double xj = x[j];
        double eps = 1e-8 * fmax(1e-2, fabs(xj));
        x[j] = xj + eps;
        eps = x[j] - xj; /* exactly representable increment */
        hymo_status st = eval_residual(sim, x, sim->fp, err);
        x[j] = xj;
        memcpy(sim->zn, zsave, (size_t)nz * sizeof(double));
        if (st != HYMO_OK) return st;
        double *col = &sim->jac[(size_t)j * nx];
        for (int i = 0; i < nx; ++i) col[i] = (sim->fp[i] - sim->f[i]) / eps;
    }
    return factor_jacobian(sim, err);
}

/* Fast mode (SPEC §3 "analytic or hybrid Jacobian"): the Newton matrix from
 * the current evaluation, without further residual evaluations.  The
 * mechanical block is M' (+ dt^2/4 alpha Phi_z^T Phi_z for penalty) mapped
 * to the unknowns, plus the actuator stiffness and damping
 * dt^2/4 (dF/ds + 2/dt dF/dsd) g g^T; the hydraulic rows and columns are
 * exact (analytic circuit derivatives and the chain rule through s, sd).
 * Neglected against M': dt/2 dQ'/dzd (gyroscopic) and dt^2/4 of the
 * position derivatives of M' zdd, Q' and Phi_z^T lambda, i.e. terms of
 * relative size ~ dt |zd| and dt^2 |K|/|M'|; they only slow the
 * (otherwise quadratic) convergence slightly, never change the solution,
 * which is defined by the residual alone. */
static hymo_status approx_jacobian(hymo_sim *sim, hymo_error *err)
{
    const int nx = sim->nx, nxm = sim->nxm, np = sim->np, na = sim->na;
    const double dt = sim->opt.dt, c = dt * dt / 4.0, a1 = 2.0 / dt;
    const hymo_model *model = sim->model;
    double *J = sim->jac, *gx = sim->act_gx;
    const hymo_circuit_derivs *cd = &sim->cderiv;
    memset(J, 0, (size_t)nx * (size_t)nx * sizeof(double));
    hymo_kin_mass_and_forces(&sim->kin, model); /* M' at the current evaluation */
    hymo_engine_actuator_gradients(sim, sim->act_gz);
    sim->form->tangent(sim, sim->act_gz, gx, J);
    if (sim->split != HYMO_SPLIT_FORCE && na > 0) {
        if (hymo_circuit_derivatives(&sim->circ, model, sim->s, sim->sd, sim->pn, sim->un,
                                     sim->split == HYMO_SPLIT_NONE, &sim->cderiv))
            return hymo_error_set(err, HYMO_ERR_NUMERIC,
                                  "t = %.6g s (step %ld): a hydraulic volume became non-positive "
                                  "(piston beyond its stroke?)",
                                  sim->t + dt, sim->step + 1);
        for (int a = 0; a < na; ++a) { /* actuator stiffness and damping */
            const double k = c * (cd->dF_ds[a] + a1 * cd->dF_dsd[a]);
            const double *g = &gx[a * nxm];
            for (int l = 0; l < nxm; ++l)
                for (int i = 0; i < nxm; ++i) J[l * nx + i] -= k * g[i] * g[l];
        }
    }
    if (sim->split == HYMO_SPLIT_NONE) {
        const int p0 = nxm, u0 = nxm + np, nu = sim->nu;
        for (int q = 0; q < np; ++q) {
            double *col = &J[(size_t)(p0 + q) * nx];
            for (int a = 0; a < na; ++a) { /* mechanical rows: -dt^2/4 g dF/dp */
                const double f = -c * cd->dF_dp[a * np + q];
                for (int i = 0; i < nxm; ++i) col[i] += f * gx[a * nxm + i];
            }
            for (int i = 0; i < np; ++i) col[p0 + i] = -c * cd->dpdot_dp[i * np + q];
            col[p0 + q] += c * a1;
        }
        for (int k = 0; k < nxm; ++k) { /* pressure rows of the mechanical columns */
            double *col = &J[(size_t)k * nx];
            for (int i = 0; i < np; ++i) {
                double s = 0.0;
                for (int a = 0; a < na; ++a)
                    s += (cd->dpdot_ds[i * na + a] + a1 * cd->dpdot_dsd[i * na + a]) * gx[a * nxm + k];
                col[p0 + i] = -c * s;
            }
        }
        for (int v = 0; v < nu; ++v) {
            double *col = &J[(size_t)(u0 + v) * nx];
            for (int i = 0; i < np; ++i) col[p0 + i] = -c * cd->dpdot_du[i * nu + v];
        }
        for (int v = 0; v < model->n_valves; ++v) {
            const int st = model->valves[v].state;
            J[(size_t)(u0 + st) * nx + u0 + st] = c * (a1 + 1.0 / model->valves[v].tau);
        }
    }
    return factor_jacobian(sim, err);
}

/* Fast mode: a Newton correction below this fraction of the increment
 * tolerances (1e-10 rad or m, 1e-5 Pa, 1e-10 V with the SPEC's) is not
 * applied; the step keeps the iterate whose state was just evaluated.  Its
 * distance to the converged solution is then at the level the double-step
 * inner solve leaves in the dependent coordinates (INNER_TOL = 1e-10), and
 * the final re-evaluation of the state (a fifth to a third of a step's
 * work) is saved in ~40 % of the steps of the seed mechanisms. */
#define NEGLIGIBLE_INCREMENT 1e-3

/* Largest increment relative to its block's tolerance; reports the block. */
static double scaled_increment(const hymo_sim *sim, const double *dx, int *block, int *index)
{
    double worst = 0.0;
    *block = 0;
    *index = 0;
    for (int i = 0; i < sim->nx; ++i) {
        double tol = i < sim->nxm ? sim->opt.tol_position
                                  : (i < sim->nxm + sim->np ? sim->opt.tol_pressure : sim->opt.tol_spool);
        double r = fabs(dx[i]) / tol;
        if (!(r <= worst)) {
            worst = r;
            *block = i < sim->nxm ? 0 : (i < sim->nxm + sim->np ? 1 : 2);
            *index = i;
        }
    }
    return worst;
}

static void describe_unknown(const hymo_sim *sim, int index, char *buf, size_t len)
{
    const hymo_model *model = sim->model;
    if (index < sim->nxm) {
        int j = sim->form == &hymo_double_step_ops ? sim->indep[index] : index;
        snprintf(buf, len, "mechanical block, joint %s", model->bodies[j].joint_name);
        return;
    }
    index -= sim->nxm;
    if (index < sim->np) {
        for (int k = 0; k < model->n_nodes; ++k)
            if (model->nodes[k].kind == HYMO_NODE_VOLUME && model->nodes[k].state == index) {
                snprintf(buf, len, "pressure block, volume %s", model->nodes[k].name);
                return;
            }
    }
    index -= sim->np;
    snprintf(buf, len, "spool block, valve %s", index < model->n_valves ? model->valves[index].name : "?");
}

/* Input value with one-sided limits at t (side = +1 right, -1 left).  A
 * time within 1e-6 dt of a breakpoint is taken as the breakpoint itself,
 * so that round-off in k dt never moves a step change into the wrong step
 * (which would cost an order of accuracy, SPEC §3). */
static double input_value(const hymo_signal *sig, double t, int side, double dt)
{
    int lo = 0, hi = sig->n_points - 1;
    while (hi - lo > 1) { /* nearest breakpoint by bisection */
        int mid = (lo + hi) / 2;
        if (sig->t[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    for (int i = lo; i <= hi && i < sig->n_points; ++i)
        if (fabs(sig->t[i] - t) <= 1e-6 * dt) return hymo_signal_eval(sig, sig->t[i], side);
    return hymo_signal_eval(sig, t, side);
}

hymo_status hymo_sim_step(hymo_sim *sim, hymo_error *err)
{
    const hymo_model *model = sim->model;
    const double dt = sim->opt.dt, t1 = (double)(sim->step + 1) * dt;
    hymo_status st;
    int inputs_change = 0; /* a reference jumps at t_k or varies within the step */
    for (int v = 0; v < sim->nu; ++v) {
        const hymo_valve *va = &model->valves[v];
        const double prev_end = sim->uref_end[v];
        sim->uref_start[v] = input_value(&model->signals[va->signal], sim->t, +1, dt);
        sim->uref_end[v] = input_value(&model->signals[va->signal], t1, -1, dt);
        inputs_change |= sim->uref_start[v] != prev_end || sim->uref_end[v] != sim->uref_start[v];
        /* one-sided limit at the step start (SPEC §3) */
        sim->ud[va->state] = (sim->uref_start[v] - sim->u[va->state]) / va->tau;
    }
    /* predictor: SPEC §3 (z + zd dt + zdd dt^2/2, p + pd dt, U + Ud dt); the
     * extrapolating predictor adds the next Taylor term from the previous
     * step's derivatives (and extrapolates lambda), which saves iterations */
    const int extrapolate = sim->opt.predictor == HYMO_PREDICTOR_EXTRAPOLATE && sim->step > 0;
    const double dt2 = dt * dt;
    for (int j = 0; j < sim->nz; ++j) {
        sim->zn[j] = sim->z[j] + sim->zd[j] * dt + 0.5 * sim->zdd[j] * dt2;
        if (extrapolate) sim->zn[j] += (sim->zdd[j] - sim->zdd_prev[j]) * dt2 / 6.0;
    }
    double *x = sim->x;
    sim->form->pack(sim, x);
    const int hyd = sim->split == HYMO_SPLIT_NONE;
    for (int k = 0; hyd && k < sim->np; ++k) {
        x[sim->nxm + k] = sim->p[k] + sim->pd[k] * dt;
        if (extrapolate) {
            double d1 = sim->pd[k] - sim->pd_prev[k], d2 = sim->step > 1 ? d1 - (sim->pd_prev[k] - sim->pd_prev2[k]) : 0.0;
            x[sim->nxm + k] += (0.5 * d1 + d2 / 6.0) * dt;
        }
    }
    for (int v = 0; hyd && v < sim->nu; ++v) {
        const hymo_valve *va = &model->valves[v];
        double *xu = &x[sim->nxm + sim->np + va->state], u0 = sim->u[va->state];
        if (sim->opt.predictor == HYMO_PREDICTOR_EXTRAPOLATE) { /* linear spool ODE: exact trapezoidal step */
            double c = 0.5 * dt / va->tau;
            *xu = (u0 * (1.0 - c) + c * (sim->uref_start[v] + sim->uref_end[v])) / (1.0 + c);
        } else {
            *xu = u0 + sim->ud[va->state] * dt;
        }
    }
    if (extrapolate) {
        for (int r = 0; r < sim->m; ++r) { /* quadratic through lambda_{k-2..k} (linear at k = 1) */
            double l = sim->lambda[r];
            if (sim->step > 1)
                sim->lambda[r] = 3.0 * l - 3.0 * sim->lambda_prev[r] + sim->lambda_prev2[r];
            else
                sim->lambda[r] = 2.0 * l - sim->lambda_prev[r];
            sim->lambda_prev2[r] = sim->lambda_prev[r];
            sim->lambda_prev[r] = l;
        }
    } else {
        memcpy(sim->lambda_prev2, sim->lambda, (size_t)sim->m * sizeof(double));
        memcpy(sim->lambda_prev, sim->lambda, (size_t)sim->m * sizeof(double));
    }
    memcpy(sim->zdd_prev, sim->zdd, (size_t)sim->nz * sizeof(double));
    memcpy(sim->pd_prev2, sim->pd_prev, (size_t)sim->np * sizeof(double));
    memcpy(sim->pd_prev, sim->pd, (size_t)sim->np * sizeof(double));

    /* numeric: the seed's forward differences at every iteration.  fast: the
     * approximate Jacobian, rebuilt at the first iteration of a step unless
     * the last step converged in one iteration and the inputs are steady
     * (then the system is nearly at rest and the last matrix is as good),
     * and within a step whenever the contraction is poor */
    const int numeric = sim->opt.jacobian == HYMO_JACOBIAN_NUMERIC;
    int refresh = numeric || !sim->jac_valid || sim->last_iterations != 1 || inputs_change;
    double prev = INFINITY, inc = INFINITY;
    int iter = 0, block = 0, index = 0, at_evaluated = 0;
    sim->lambda_frozen = 1; /* lambda_k^(0) = final lambda of the previous step */
    for (;;) {
        st = eval_residual(sim, x, sim->f, err);
        if (st != HYMO_OK) return st;
        if (refresh) {
            st = numeric ? jacobian(sim, err) : approx_jacobian(sim, err);
            if (st != HYMO_OK) return st;
            refresh = numeric;
        }
        for (int i = 0; i < sim->nx; ++i) sim->dx[i] = -sim->f[i];
        sim->ls->ops->solve(sim->ls, sim->dx);
        ++iter;
        inc = scaled_increment(sim, sim->dx, &block, &index);
        if (!numeric && inc <= NEGLIGIBLE_INCREMENT) {
            at_evaluated = 1;
            break;
        }
        for (int i = 0; i < sim->nx; ++i) x[i] += sim->dx[i];
        sim->form->after_update(sim);
        if (inc <= 1.0) break;
        if (iter >= sim->opt.max_iter || !isfinite(inc)) {
            char what[128];
            describe_unknown(sim, index, what, sizeof what);
            return hymo_error_set(err, HYMO_ERR_CONVERGENCE,
                                  "t = %.6g s (step %ld): Newton-Raphson did not converge in %d "
                                  "iterations; residual norm %.3g; largest increment %.3g x tolerance "
                                  "in the %s",
                                  t1, sim->step + 1, iter, hymo_norm_inf(sim->nx, sim->f), inc, what);
        }
        if (!numeric && inc > 0.25 * prev) refresh = 1;
        prev = inc;
    }
    /* the state at the converged unknowns (for penalty also the last lambda
     * update).  Numeric mode evaluates the whole residual there, so that
     * /solver/residual is the residual at the solution.  Fast mode records
     * the residual of the last Newton evaluation and only re-evaluates the
     * state (the forces follow below); if the last correction was
     * negligible it keeps the evaluated iterate and its state as they are. */
    sim->residual_norm = hymo_norm_inf(sim->nx, sim->f);
    if (numeric) {
        st = eval_residual(sim, x, sim->f, err);
        sim->residual_norm = hymo_norm_inf(sim->nx, sim->f);
    } else if (!at_evaluated) {
        st = unpack_state(sim, x, err);
    }
    if (st != HYMO_OK) return st;
    st = sim->form->finish_step(sim, err);
    if (st != HYMO_OK) return st;
    hymo_engine_refresh_actuators(sim); /* s, sd and F_s at the final (projected) state */

    /* commit */
    double *tmp;
#define SWAP(a, b) (tmp = (a), (a) = (b), (b) = tmp)
    SWAP(sim->z, sim->zn);
    SWAP(sim->zd, sim->zdn);
    SWAP(sim->zdd, sim->zddn);
    SWAP(sim->p, sim->pn);
    SWAP(sim->pd, sim->pdn);
    SWAP(sim->u, sim->un);
    SWAP(sim->ud, sim->udn);
#undef SWAP
    /* keep the warm start for the dependent coordinates */
    memcpy(sim->zn, sim->z, (size_t)sim->nz * sizeof(double));
    memcpy(sim->pn, sim->p, (size_t)sim->np * sizeof(double));
    memcpy(sim->un, sim->u, (size_t)sim->nu * sizeof(double));
    sim->t = t1;
    sim->step++;
    sim->last_iterations = iter;
    sim->iterations_total += iter;
    if (iter > sim->iterations_max) sim->iterations_max = iter;

    /* actuator work: trapezoidal rule on the power F sd */
    for (int a = 0; a < sim->na; ++a) {
        double power = sim->force[a] * sim->sd[a];
        sim->work[a] += 0.5 * dt * (sim->power[a] + power);
        sim->power[a] = power;
    }
    hymo_engine_record_stats(sim);
    return HYMO_OK;
}

hymo_status hymo_engine_consistent_accelerations(hymo_sim *sim, int set_lambda, hymo_error *err)
{
    const int nz = sim->nz, m = sim->m, n = nz + m;
    double *K = sim->kkt, *rhs = sim->kkt_rhs;
    hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, sim->phi_z, sim->gamma);
    for (int i = 0; i < nz; ++i) {
        for (int j = 0; j < nz; ++j) K[i * n + j] = sim->kin.M[i * nz + j];
        rhs[i] = sim->kin.Q[i];
    }
    for (int r = 0; r < m; ++r) {
        for (int j = 0; j < nz; ++j) K[(nz + r) * n + j] = K[j * n + nz + r] = sim->phi_z[r * nz + j];
        for (int q = 0; q < m; ++q) K[(nz + r) * n + nz + q] = 0.0;
        rhs[nz + r] = -sim->gamma[r];
    }
    if (hymo_lu_factor(n, K, sim->kkt_piv))
        return hymo_error_set(err, HYMO_ERR_MODEL,
                              "%s: t = %.6g s: singular mass matrix (a body without mass or inertia about its "
                              "joint?)",
                              sim->model->source_path ? sim->model->source_path : sim->model->name, sim->t);
    hymo_lu_solve(n, K, sim->kkt_piv, rhs);
    memcpy(sim->zdd, rhs, (size_t)nz * sizeof(double));
    if (set_lambda) memcpy(sim->lambda, rhs + nz, (size_t)m * sizeof(double));
    return HYMO_OK;
}

void hymo_engine_record_stats(hymo_sim *sim)
{
    const hymo_model *model = sim->model;
    int m = sim->m, nz = sim->nz;
    sim->kinetic = hymo_kin_kinetic_energy(&sim->kin, model);
    sim->potential = hymo_kin_potential_energy(&sim->kin, model);
    double wsum = 0.0;
    for (int a = 0; a < sim->na; ++a) wsum += sim->work[a];
    sim->drift = sim->kinetic + sim->potential - sim->energy0 - wsum;
    if (fabs(sim->drift) > sim->peak_drift) sim->peak_drift = fabs(sim->drift);
    if (fabs(wsum) > sim->max_work) sim->max_work = fabs(wsum);
    if (m == 0) return;
    /* phi, phi_z and gamma are those of the final evaluation (after the
     * projections for penalty); for double-step phi is the residual before the
     * last inner-Newton correction (<= 1e-10), i.e. an upper bound */
    double *vel = sim->dwork, *acc = sim->dwork + m;
    for (int r = 0; r < m; ++r) {
        double sv = 0.0, sa = sim->gamma[r];
        for (int j = 0; j < nz; ++j) {
            sv += sim->phi_z[r * nz + j] * sim->zd[j];
            sa += sim->phi_z[r * nz + j] * sim->zdd[j];
        }
        vel[r] = sv;
        acc[r] = sa;
    }
    hymo_constraints_cut_norms(&sim->con, sim->ncut, sim->phi, sim->c_pos);
    hymo_constraints_cut_norms(&sim->con, sim->ncut, vel, sim->c_vel);
    hymo_constraints_cut_norms(&sim->con, sim->ncut, acc, sim->c_acc);
    double np_ = 0, nv = 0, na_ = 0;
    for (int r = 0; r < m; ++r) {
        np_ += sim->phi[r] * sim->phi[r];
        nv += vel[r] * vel[r];
        na_ += acc[r] * acc[r];
    }
    sim->max_cpos = fmax(sim->max_cpos, sqrt(np_));
    sim->max_cvel = fmax(sim->max_cvel, sqrt(nv));
    sim->max_cacc = fmax(sim->max_cacc, sqrt(na_));
}
