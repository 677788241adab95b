/* Double-step semirecursive formulation (coordinate partitioning, SPEC §1.4,
 * seed 002 §2.2): Newton unknowns are the independent coordinates z^i; the
 * dependent ones follow from Phi(z) = 0 by an inner Newton iteration. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dense.h"
#include "engine.h"

/* Inner Newton stops when the increment is below this (rad or m); with
 * quadratic convergence the error left after the update is ~1e-20.  The
 * kinematics are re-evaluated after the last update only if it exceeded
 * 1e-11 (KIN_REFRESH), so positions used by the dynamics are within 1e-11
 * of the converged ones. */
#define INNER_TOL 1e-10
#define INNER_MAX_ITER 25
#define KIN_REFRESH 1e-11
#define RESELECT_EVERY 8

/* LU of Phi_d and R = dz/dz_i (nz x ni, row-major in sim->tmap): the
 * independent rows are the identity, the dependent ones -Phi_d^{-1} Phi_i.
 * R maps independent increments, velocities and accelerations to all
 * coordinates and projects the dynamics (R^T). */
static void factor_phid(hymo_sim *sim)
{
    const int m = sim->m, nz = sim->nz, ni = sim->ni;
    double *R = sim->tmap, *w = sim->dwork;
    for (int r = 0; r < m; ++r)
        for (int c = 0; c < m; ++c) sim->phid_lu[r * m + c] = sim->phi_z[r * nz + sim->dep[c]];
    hymo_lu_factor(m, sim->phid_lu, sim->phid_piv);
    for (int k = 0; k < ni; ++k) {
        for (int r = 0; r < m; ++r) w[r] = sim->phi_z[r * nz + sim->indep[k]];
        hymo_lu_solve(m, sim->phid_lu, sim->phid_piv, w);
        for (int l = 0; l < ni; ++l) R[sim->indep[l] * ni + k] = l == k;
        for (int c = 0; c < m; ++c) R[sim->dep[c] * ni + k] = -w[c];
    }
}

/* y_d += R_d u for the dependent rows of the z-sized y (u of size ni). */
static void add_dependent(const hymo_sim *sim, const double *u, double *y)
{
    const int ni = sim->ni;
    for (int c = 0; c < sim->m; ++c) {
        const double *Rr = &sim->tmap[sim->dep[c] * ni];
        double s = 0.0;
        for (int k = 0; k < ni; ++k) s += Rr[k] * u[k];
        y[sim->dep[c]] += s;
    }
}

int hymo_double_step_solve_positions(hymo_sim *sim, double *z, int max_iter, double tol)
{
    int m = sim->m;
    double *delta = sim->dwork;
    for (int it = 0; it < max_iter; ++it) {
        hymo_kin_positions(&sim->kin, sim->model, z);
        hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, sim->phi_z, NULL);
        if (m == 0) return 0;
        factor_phid(sim);
        memcpy(delta, sim->phi, (size_t)m * sizeof(double));
        hymo_lu_solve(m, sim->phid_lu, sim->phid_piv, delta);
        double dmax = hymo_norm_inf(m, delta);
        if (!isfinite(dmax)) return 1;
        double limit = 0.5; /* damp large assembly steps (rad or m) */
        double scale = dmax > limit ? limit / dmax : 1.0;
        for (int c = 0; c < m; ++c) z[sim->dep[c]] -= scale * delta[c];
        if (dmax <= tol) {
            if (dmax > KIN_REFRESH) { /* keep kinematics consistent with the last update */
                hymo_kin_positions(&sim->kin, sim->model, z);
                hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, sim->phi_z, NULL);
                factor_phid(sim);
            }
            return 0;
        }
    }
    return 1;
}

void hymo_double_step_project(hymo_sim *sim, const double *v, double *out)
{
    const int ni = sim->ni;
    for (int k = 0; k < ni; ++k) out[k] = v[sim->indep[k]];
    for (int c = 0; c < sim->m; ++c) { /* R^T v = v_i + R_d^T v_d */
        const double *Rr = &sim->tmap[sim->dep[c] * ni];
        const double vd = v[sim->dep[c]];
        for (int k = 0; k < ni; ++k) out[k] += Rr[k] * vd;
    }
}

static void append_log(hymo_sim *sim)
{
    char names[HYMO_REF_TEXT_MAX] = "";
    for (int k = 0; k < sim->ni; ++k) {
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", k ? "," : "",
                 sim->model->bodies[sim->indep[k]].joint_name);
    }
    size_t len = strlen(sim->independent_log);
    if (len == 0)
        snprintf(sim->independent_log, sizeof sim->independent_log, "%s", names);
    else
        snprintf(sim->independent_log + len, sizeof sim->independent_log - len, "; %s from t=%.4g", names,
                 sim->t);
}

hymo_status hymo_double_step_select(hymo_sim *sim, hymo_error *err)
{
    int m = sim->m, nz = sim->nz;
    if (m == 0) {
        for (int j = 0; j < nz; ++j) sim->indep[j] = j;
        for (int j = 0; j < nz * nz; ++j) sim->tmap[j] = j % (nz + 1) == 0; /* R = I */
        append_log(sim);
        return HYMO_OK;
    }
    double pmin = hymo_full_pivot_columns(m, nz, sim->phi_z, sim->dwork, NULL, sim->mask);
    if (!(pmin > 0.0))
        return hymo_error_set(err, HYMO_ERR_ASSEMBLY,
                              "t = %.6g s: constraint Jacobian is rank deficient (singular "
                              "configuration or redundant cut-joint equations)",
                              sim->t);
    int ni = 0, nd = 0;
    for (int j = 0; j < nz; ++j) {
        if (sim->mask[j])
            sim->dep[nd++] = j;
        else
            sim->indep[ni++] = j;
    }
    factor_phid(sim);
    append_log(sim);
    return HYMO_OK;
}

static int ds_n_mech(const hymo_sim *sim) { return sim->ni; }

static void ds_pack(const hymo_sim *sim, double *x)
{
    for (int k = 0; k < sim->ni; ++k) x[k] = sim->zn[sim->indep[k]];
}

static hymo_status ds_unpack(hymo_sim *sim, const double *x, hymo_error *err)
{
    const double dt = sim->opt.dt, a1 = 2.0 / dt, a2 = 4.0 / (dt * dt);
    const int m = sim->m, ni = sim->ni;
    double *w = sim->dwork, *u = sim->dwork + m; /* m and ni scratch (factor_phid uses w) */
    /* first-order prediction of the dependent coordinates with R of the last
     * factorisation: z_d += R_d dz_i (leaves an O(dz^2) error for the inner
     * Newton, usually removed in one pass) */
    for (int k = 0; k < ni; ++k) u[k] = x[k] - sim->zn[sim->indep[k]];
    add_dependent(sim, u, sim->zn);
    for (int k = 0; k < ni; ++k) sim->zn[sim->indep[k]] = x[k];
    if (hymo_double_step_solve_positions(sim, sim->zn, INNER_MAX_ITER, INNER_TOL))
        return hymo_error_set(err, HYMO_ERR_CONVERGENCE,
                              "t = %.6g s (step %ld): dependent coordinates did not converge "
                              "(max |Phi| = %.3g)",
                              sim->t + dt, sim->step + 1, hymo_norm_inf(m, sim->phi));
    for (int k = 0; k < ni; ++k) {
        int j = sim->indep[k];
        double dz = sim->zn[j] - sim->z[j];
        sim->zdn[j] = a1 * dz - sim->zd[j];
        sim->zddn[j] = a2 * dz - 2.0 * a1 * sim->zd[j] - sim->zdd[j];
    }
    /* zd_d = R_d zd_i */
    for (int c = 0; c < m; ++c) sim->zdn[sim->dep[c]] = 0.0;
    for (int k = 0; k < ni; ++k) u[k] = sim->zdn[sim->indep[k]];
    add_dependent(sim, u, sim->zdn);
    hymo_kin_velocities(&sim->kin, sim->model, sim->zdn);
    if (m > 0) {
        hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, NULL, sim->gamma);
        /* zdd_d = R_d zdd_i - Phi_d^{-1} gamma */
        memcpy(w, sim->gamma, (size_t)m * sizeof(double));
        hymo_lu_solve(m, sim->phid_lu, sim->phid_piv, w);
        for (int c = 0; c < m; ++c) sim->zddn[sim->dep[c]] = -w[c];
        for (int k = 0; k < ni; ++k) u[k] = sim->zddn[sim->indep[k]];
        add_dependent(sim, u, sim->zddn);
    }
    return HYMO_OK;
}

static void ds_residual(hymo_sim *sim, double *f)
{
    const double c = sim->opt.dt * sim->opt.dt / 4.0;
    hymo_double_step_project(sim, sim->dyn_res, f);
    for (int k = 0; k < sim->ni; ++k) f[k] *= c;
}

static void ds_after_update(hymo_sim *sim) { (void)sim; }

/* R^T M' R with R = dz/dz_i of the current factorisation (the second
 * derivatives of the dependent coordinates are neglected, see the engine's
 * approx_jacobian), and gx = gz R. */
static void ds_tangent(hymo_sim *sim, const double *gz, double *gx, double *jac)
{
    const int nz = sim->nz, ni = sim->ni, nx = sim->nx;
    const double *R = sim->tmap;
    double *MR = sim->vz;
    for (int l = 0; l < ni; ++l) {
        for (int i = 0; i < nz; ++i) { /* column l of M' R */
            double s = 0.0;
            for (int j = 0; j < nz; ++j) s += sim->kin.M[i * nz + j] * R[j * ni + l];
            MR[i] = s;
        }
        for (int k = 0; k < ni; ++k) {
            double s = 0.0;
            for (int i = 0; i < nz; ++i) s += R[i * ni + k] * MR[i];
            jac[l * nx + k] = s;
        }
    }
    for (int a = 0; a < sim->na; ++a)
        for (int k = 0; k < ni; ++k) {
            double s = 0.0;
            for (int j = 0; j < nz; ++j) s += gz[a * nz + j] * R[j * ni + k];
            gx[a * ni + k] = s;
        }
}

static hymo_status ds_finish_step(hymo_sim *sim, hymo_error *err)
{
    int m = sim->m, nz = sim->nz;
    if (m == 0) return HYMO_OK;
    /* quality of the current partition vs the best available one, checked
     * every RESELECT_EVERY steps (pivots change slowly at these step sizes) */
    if ((sim->step + 1) % RESELECT_EVERY != 0) return HYMO_OK;
    double best = hymo_full_pivot_columns(m, nz, sim->phi_z, sim->dwork, NULL, sim->mask);
    for (int j = 0; j < nz; ++j) sim->mask2[j] = 0;
    for (int c = 0; c < m; ++c) sim->mask2[sim->dep[c]] = 1;
    double cur = hymo_full_pivot_columns(m, nz, sim->phi_z, sim->dwork, sim->mask2, sim->mask);
    if (cur >= sim->opt.reselect_ratio * best) return HYMO_OK;
    sim->t += sim->opt.dt; /* log with the time at which the new set starts */
    hymo_status st = hymo_double_step_select(sim, err);
    sim->t -= sim->opt.dt;
    if (st != HYMO_OK) return st;
    sim->reselections++;
    sim->jac_valid = 0; /* other unknowns */
    return HYMO_OK;
}

const hymo_formulation_ops hymo_double_step_ops = {
    "double-step", ds_n_mech, ds_pack, ds_unpack, ds_residual, ds_after_update, ds_finish_step, ds_tangent,
};
