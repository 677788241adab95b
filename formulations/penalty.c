/* Penalty-based semirecursive formulation (index-3 augmented Lagrangian with
 * projections, ALI3-P; SPEC §1.5, seed 002 §2.3).  Newton unknowns are all
 * joint coordinates; lambda is updated after every Newton update. */
#include <string.h>

#include "dense.h"
#include "engine.h"

static int pb_n_mech(const hymo_sim *sim) { return sim->nz; }

static void pb_pack(const hymo_sim *sim, double *x) { memcpy(x, sim->zn, (size_t)sim->nz * sizeof(double)); }

static hymo_status pb_unpack(hymo_sim *sim, const double *x, hymo_error *err)
{
    (void)err;
    const double dt = sim->opt.dt, a1 = 2.0 / dt, a2 = 4.0 / (dt * dt);
    for (int j = 0; j < sim->nz; ++j) {
        double dz = x[j] - sim->z[j];
        sim->zn[j] = x[j];
        sim->zdn[j] = a1 * dz - sim->zd[j];
        sim->zddn[j] = a2 * dz - 2.0 * a1 * sim->zd[j] - sim->zdd[j];
    }
    hymo_kin_positions(&sim->kin, sim->model, sim->zn);
    hymo_kin_velocities(&sim->kin, sim->model, sim->zdn);
    if (sim->m > 0) {
        hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, sim->phi_z, NULL);
        if (!sim->lambda_frozen) { /* lambda^(h+1) = lambda^(h) + alpha Phi^(h+1) */
            for (int r = 0; r < sim->m; ++r) sim->lambda[r] += sim->opt.penalty_alpha * sim->phi[r];
            sim->lambda_frozen = 1;
        }
    }
    return HYMO_OK;
}

static void pb_residual(hymo_sim *sim, double *f)
{
    const double c = sim->opt.dt * sim->opt.dt / 4.0, alpha = sim->opt.penalty_alpha;
    int nz = sim->nz, m = sim->m;
    for (int i = 0; i < nz; ++i) {
        double s = sim->dyn_res[i];
        for (int r = 0; r < m; ++r) s += sim->phi_z[r * nz + i] * (alpha * sim->phi[r] + sim->lambda[r]);
        f[i] = c * s;
    }
}

static void pb_after_update(hymo_sim *sim) { sim->lambda_frozen = 0; }

/* v <- v - W^{-1} Phi_z^T (dt^2/4) alpha (Phi_z v + bias): the
 * mass-damping-stiffness orthogonal projection (seed 002 Eqs. 20-21), with
 * W + dt^2/4 Phi_z^T alpha Phi_z taken as the mechanical block of the
 * Newton Jacobian (M' + dt/2 C + dt^2/4 K incl. the actuator terms). */
static void project(hymo_sim *sim, double *v, const double *bias)
{
    int nz = sim->nz, m = sim->m;
    const double c = sim->opt.dt * sim->opt.dt / 4.0 * sim->opt.penalty_alpha;
    double *w = sim->dwork, *y = sim->vz2;
    for (int r = 0; r < m; ++r) {
        double s = bias ? bias[r] : 0.0;
        for (int j = 0; j < nz; ++j) s += sim->phi_z[r * nz + j] * v[j];
        w[r] = c * s;
    }
    for (int j = 0; j < nz; ++j) {
        double s = 0.0;
        for (int r = 0; r < m; ++r) s += sim->phi_z[r * nz + j] * w[r];
        y[j] = s;
    }
    hymo_lu_solve(nz, sim->jzz, sim->jzz_piv, y);
    for (int j = 0; j < nz; ++j) v[j] -= y[j];
}

static hymo_status pb_finish_step(hymo_sim *sim, hymo_error *err)
{
    (void)err;
    if (sim->m == 0) return HYMO_OK;
    project(sim, sim->zdn, NULL);
    hymo_kin_velocities(&sim->kin, sim->model, sim->zdn);
    hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, NULL, sim->gamma);
    project(sim, sim->zddn, sim->gamma);
    return HYMO_OK;
}

/* M' + dt^2/4 alpha Phi_z^T Phi_z (see the engine's approx_jacobian); gx = gz. */
static void pb_tangent(hymo_sim *sim, const double *gz, double *gx, double *jac)
{
    const int nz = sim->nz, m = sim->m, nx = sim->nx;
    const double ca = sim->opt.dt * sim->opt.dt / 4.0 * sim->opt.penalty_alpha;
    for (int j = 0; j < nz; ++j)
        for (int i = 0; i < nz; ++i) {
            double s = 0.0;
            for (int r = 0; r < m; ++r) s += sim->phi_z[r * nz + i] * sim->phi_z[r * nz + j];
            jac[j * nx + i] = sim->kin.M[i * nz + j] + ca * s;
        }
    memcpy(gx, gz, (size_t)sim->na * (size_t)nz * sizeof(double));
}

const hymo_formulation_ops hymo_penalty_ops = {
    "penalty", pb_n_mech, pb_pack, pb_unpack, pb_residual, pb_after_update, pb_finish_step, pb_tangent,
};
