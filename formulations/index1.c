/* Index-1 augmented Lagrangian formulation (ALI1, seed 000 Eqs. 2a-2b) in
 * the semirecursive joint coordinates, integrated with the semi-implicit
 * (symplectic) Euler rule: the explicit mechanical integrator of the
 * co-simulation (SPEC §7).  Accelerations at t_k from
 *   (M' + Phi_z^T a Phi_z) zdd + Phi_z^T lambda*
 *       = Q' - Phi_z^T a (gamma + 2 xi w Phid + w^2 Phi),
 *   lambda* <- lambda* + a (Phidd + 2 xi w Phid + w^2 Phi),
 * then zd_{k+1} = zd_k + h zdd_k, z_{k+1} = z_k + h zd_{k+1}.
 * The cylinder forces are those at t_k (set by the caller). */
#include <math.h>
#include <string.h>

#include "dense.h"
#include "engine.h"

#define ALI1_XI 1.0
#define ALI1_OMEGA 10.0
#define ALI1_MAX_ITER 30
#define ALI1_TOL 1e-10

static hymo_status accelerations(hymo_sim *sim, hymo_error *err)
{
    const int nz = sim->nz, m = sim->m;
    const double alpha = sim->opt.penalty_alpha, t = sim->t;
    double *A = sim->jzz, *rhs = sim->vz, *phid = sim->dwork, *bias = sim->dwork + m;
    memcpy(A, sim->kin.M, (size_t)nz * nz * sizeof(double));
    for (int r = 0; r < m; ++r) {
        double v = 0.0;
        for (int j = 0; j < nz; ++j) v += sim->phi_z[r * nz + j] * sim->zd[j];
        phid[r] = v;
        bias[r] = sim->gamma[r] + 2.0 * ALI1_XI * ALI1_OMEGA * v + ALI1_OMEGA * ALI1_OMEGA * sim->phi[r];
        for (int i = 0; i < nz; ++i)
            for (int j = 0; j < nz; ++j) A[i * nz + j] += alpha * sim->phi_z[r * nz + i] * sim->phi_z[r * nz + j];
    }
    if (hymo_lu_factor(nz, A, sim->jzz_piv))
        return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.6g s (step %ld): singular leading matrix (index-1)",
                              t, sim->step + 1);
    for (int it = 0; it < (m > 0 ? ALI1_MAX_ITER : 1); ++it) {
        for (int i = 0; i < nz; ++i) {
            double s = sim->kin.Q[i];
            for (int r = 0; r < m; ++r) s -= sim->phi_z[r * nz + i] * (alpha * bias[r] + sim->lambda[r]);
            rhs[i] = s;
        }
        hymo_lu_solve(nz, A, sim->jzz_piv, rhs);
        memcpy(sim->zdd, rhs, (size_t)nz * sizeof(double));
        double worst = 0.0;
        for (int r = 0; r < m; ++r) { /* Phidd + 2 xi w Phid + w^2 Phi */
            double acc = 0.0;
            for (int j = 0; j < nz; ++j) acc += sim->phi_z[r * nz + j] * sim->zdd[j];
            double v = acc + bias[r];
            sim->lambda[r] += alpha * v;
            worst = fmax(worst, fabs(v));
        }
        sim->last_iterations = it + 1;
        if (worst <= ALI1_TOL) break;
    }
    return HYMO_OK;
}

hymo_status hymo_index1_step(hymo_sim *sim, hymo_error *err)
{
    const hymo_model *model = sim->model;
    const int nz = sim->nz;
    const double h = sim->opt.dt;
    /* dynamics at t_k with the forces at t_k */
    memcpy(sim->zn, sim->z, (size_t)nz * sizeof(double));
    memcpy(sim->zdn, sim->zd, (size_t)nz * sizeof(double));
    hymo_kin_positions(&sim->kin, model, sim->z);
    hymo_kin_velocities(&sim->kin, model, sim->zd);
    if (sim->m > 0) hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, sim->phi_z, sim->gamma);
    sim->t -= h; /* messages of the shared evaluation name t_{k+1} = t + dt */
    hymo_status st = hymo_engine_dynamics(sim, err);
    sim->t += h;
    if (st != HYMO_OK) return st;
    st = accelerations(sim, err);
    if (st != HYMO_OK) return st;
    /* the step's force is constant: its work is F_k (s_{k+1} - s_k) */
    memcpy(sim->s_prev, sim->s, (size_t)sim->na * sizeof(double));
    for (int j = 0; j < nz; ++j) {
        sim->zd[j] += h * sim->zdd[j];
        sim->z[j] += h * sim->zd[j];
        if (!isfinite(sim->z[j]) || !isfinite(sim->zd[j]))
            return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.6g s (step %ld): joint %s became non-finite",
                                  sim->t + h, sim->step + 1, model->bodies[j].joint_name);
    }
    sim->t = (double)(sim->step + 1) * h;
    sim->step++;
    hymo_kin_positions(&sim->kin, model, sim->z);
    hymo_kin_velocities(&sim->kin, model, sim->zd);
    hymo_engine_actuators(sim); /* s, sd at t_{k+1}: the outputs */
    for (int a = 0; a < sim->na; ++a) {
        sim->work[a] += sim->force[a] * (sim->s[a] - sim->s_prev[a]);
        sim->power[a] = sim->force[a] * sim->sd[a];
    }
    if (sim->m > 0) hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, sim->phi_z, sim->gamma);
    sim->iterations_total += sim->last_iterations;
    if (sim->last_iterations > sim->iterations_max) sim->iterations_max = sim->last_iterations;
    hymo_engine_record_stats(sim);
    return HYMO_OK;
}
