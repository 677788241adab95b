/* hymo — joints driven by a prescribed motion (docs/model-format.md,
 * "driven_joints").
 *
 * A driven joint j follows z_j = f(t), f a (shaped) signal.  Its Newton
 * unknown (the increment of z_j, an independent coordinate) gets the
 * kinematic row  dq_j - (f(t_{k+1}) - z_j,k) = 0  in place of its dynamic
 * row, and its rate and acceleration at the step end are f'(t) and f''(t)
 * (hymo_signal_eval_d, left limits; hymo_drivers_begin_solve).  The dynamic row
 * it replaces, R^T (M' zdd - Q') (+ the penalty terms), unscaled, is the
 * generalized force the driver applies: the reaction, recorded as the force
 * of the driver's actuator (n_cylinders + n_motors + k), whose power and
 * work enter the energy balance.  Consistent accelerations (start, event
 * restarts) solve the KKT system extended by the rows e_j^T zdd = f''(t+). */
#include <math.h>
#include <string.h>

#include "engine.h"
#include "hymo/linalg.h"
#include "driver.h"

static int driver_actuator(const hymo_model *model, int k) { return model->n_cylinders + model->n_motors + k; }

/* Newton unknown of joint j, or -1 if it is not an independent coordinate. */
static int unknown_of(const hymo_sim *sim, int j)
{
    const int *indep;
    const int ni = sim->form.ops->independent(&sim->form, &indep);
    for (int k = 0; k < ni; ++k)
        if (indep[k] == j) return k;
    return -1;
}

static double grid_dt(const hymo_sim *sim) { return sim->opt.dt; }

/* The formulations form the rates of every coordinate from its increment by
 * the trapezoidal rule, zd_{k+1} = a1 dq - zd_k, zdd_{k+1} = a2 dq - 2 a1 zd_k
 * - zdd_k (a1 = 2/h, a2 = 4/h^2).  For the solve of a step to t1, a driven
 * joint's committed zd_k, zdd_k are replaced by the values that make these
 * give f'(t1) and f''(t1) at dq = f(t1) - z_k, which the kinematic row
 * imposes; so the formulation's own dependent rates (double-step) and
 * projections (penalty) see the prescribed rate and acceleration, and a kink
 * or jump of f never rings.  The true committed values (f', f'' at t_k) are
 * put back after the solve; the commit then takes zdn, zddn = f', f''. */
void hymo_drivers_begin_solve(hymo_sim *sim, double t1)
{
    const hymo_model *model = sim->model;
    hymo_mb *mb = &sim->mb;
    const double h = sim->solver.h, a1 = 2.0 / h, a2 = 4.0 / (h * h);
    for (int k = 0; k < model->n_drivers; ++k) {
        const hymo_joint_driver *dr = &model->drivers[k];
        double d[2];
        const double f1 = hymo_signal_eval_d(&model->signals[dr->signal], t1, -1, grid_dt(sim), d);
        const int j = dr->joint;
        const double dq = f1 - mb->z[j];
        mb->zd[j] = a1 * dq - d[0];
        mb->zdd[j] = a2 * dq - 2.0 * a1 * mb->zd[j] - d[1];
    }
}

void hymo_drivers_end_solve(hymo_sim *sim, int solved)
{
    const hymo_model *model = sim->model;
    if (solved) { /* the reaction at the final state (after the projections), not at the last iterate */
        hymo_mb *mb = &sim->mb;
        const double c = mb->dt * mb->dt / 4.0;
        hymo_kin_forces_begin(&mb->kin, model);
        hymo_actuators_apply(&sim->act, model, &mb->kin, sim->eval.force);
        hymo_kin_inverse_dynamics(&mb->kin, mb->zddn, mb->dyn_res);
        sim->form.ops->residual(&sim->form, mb, sim->solver.fp);
        for (int k = 0; k < model->n_drivers; ++k) {
            const int u = unknown_of(sim, model->drivers[k].joint);
            if (u >= 0) sim->eval.force[driver_actuator(model, k)] = sim->solver.fp[u] / c;
        }
    }
    for (int k = 0; k < model->n_drivers; ++k) {
        const hymo_joint_driver *dr = &model->drivers[k];
        double d[2];
        hymo_signal_eval_d(&model->signals[dr->signal], sim->state.t, +1, grid_dt(sim), d);
        sim->mb.zd[dr->joint] = d[0];
        sim->mb.zdd[dr->joint] = d[1];
    }
}

hymo_status hymo_drivers_residual(hymo_sim *sim, const double *x, double *f, double t, hymo_error *err)
{
    const hymo_model *model = sim->model;
    const double c = sim->mb.dt * sim->mb.dt / 4.0; /* the formulations' row scale */
    for (int k = 0; k < model->n_drivers; ++k) {
        const hymo_joint_driver *dr = &model->drivers[k];
        const int u = unknown_of(sim, dr->joint);
        if (u < 0)
            return hymo_error_set(err, HYMO_ERR_NUMERIC,
                                  "t = %.6g s: driven joint '%s' is a dependent coordinate of the double-step "
                                  "partition; drive an independent joint or use --formulation penalty",
                                  t, model->bodies[dr->joint].joint_name);
        sim->eval.force[driver_actuator(model, k)] = f[u] / c; /* the generalized force that imposes the motion */
        const double target = hymo_signal_eval_d(&model->signals[dr->signal], t, -1, grid_dt(sim), NULL);
        f[u] = x[u] - (target - sim->mb.z[dr->joint]);
    }
    return HYMO_OK;
}

void hymo_drivers_jacobian(hymo_sim *sim)
{
    const hymo_model *model = sim->model;
    const int nx = sim->nx, nxm = sim->nxm;
    hymo_sparse *J = &sim->jac.jm;  /* complete with driven joints (mech_pattern) */
    hymo_sparse *H = &sim->jac.jh; /* the other columns' mechanical rows */
    for (int k = 0; k < model->n_drivers; ++k) {
        const int u = unknown_of(sim, model->drivers[k].joint);
        if (u < 0) continue; /* the residual reports it */
        for (int col = 0; col < nxm; ++col) { /* the kinematic row */
            double *e = hymo_sparse_at(J, u, col);
            if (e) *e = col == u ? 1.0 : 0.0;
        }
        for (int col = nxm; col < nx; ++col)
            for (int e = H->col_start[col]; e < H->col_start[col + 1]; ++e)
                if (H->row[e] == u) H->value[e] = 0.0;
    }
}

hymo_status hymo_drivers_consistent_accelerations(hymo_sim *sim, int set_lambda, hymo_error *err)
{
    const hymo_model *model = sim->model;
    hymo_mb *mb = &sim->mb;
    const int nz = sim->nz, m = sim->m, nd = model->n_drivers, n = nz + m + nd;
    double *K = sim->accel.kkt, *rhs = sim->accel.kkt_rhs;
    hymo_constraints_eval(mb->con, &mb->kin, mb->phi, mb->phi_zv, mb->gamma);
    memset(K, 0, (size_t)n * (size_t)n * sizeof(double));
    for (int i = 0; i < nz; ++i)
        for (int j = 0; j < nz; ++j) K[i * n + j] = mb->kin.M[i * nz + j];
    for (int r = 0; r < m; ++r) /* the rest of the rows and columns is zero (memset) */
        for (int t = mb->con->row_start[r]; t < mb->con->row_start[r + 1]; ++t)
            K[(nz + r) * n + mb->con->col[t]] = K[mb->con->col[t] * n + nz + r] = mb->phi_zv[t];
    for (int i = 0; i < nz; ++i) rhs[i] = mb->kin.Q[i];
    for (int r = 0; r < m; ++r) rhs[nz + r] = -mb->gamma[r];
    for (int k = 0; k < nd; ++k) {
        const int j = model->drivers[k].joint, r = nz + m + k;
        K[r * n + j] = K[j * n + r] = 1.0;
        double d[2];
        hymo_signal_eval_d(&model->signals[model->drivers[k].signal], sim->state.t, +1, grid_dt(sim), d);
        rhs[r] = d[1];
    }
    if (hymo_lu_factor(n, K, sim->accel.kkt_piv))
        return hymo_error_set(err, HYMO_ERR_MODEL,
                              "%s: t = %.6g s: singular mass matrix with the driven joints (a driven joint that "
                              "the cut joints fix, or a body without mass?)",
                              model->source_path ? model->source_path : model->name, sim->state.t);
    hymo_lu_solve(n, K, sim->accel.kkt_piv, rhs);
    memcpy(mb->zdd, rhs, (size_t)nz * sizeof(double));
    if (set_lambda) memcpy(mb->lambda, rhs + nz, (size_t)m * sizeof(double));
    for (int k = 0; k < nd; ++k) sim->eval.force[driver_actuator(model, k)] = -rhs[nz + m + k]; /* M zdd + mu = Q' */
    return HYMO_OK;
}

hymo_status hymo_drivers_check_start(const hymo_sim *sim, hymo_error *err)
{
    const hymo_model *model = sim->model;
    for (int k = 0; k < model->n_drivers; ++k) {
        const hymo_joint_driver *dr = &model->drivers[k];
        const double f0 = hymo_signal_eval(&model->signals[dr->signal], 0.0, +1), z0 = sim->mb.z[dr->joint];
        char at[32] = ""; /* ":line" after the file name (model->driver_line) */
        if (model->driver_line && model->driver_line[k] > 0) snprintf(at, sizeof at, ":%d", model->driver_line[k]);
        if (fabs(z0 - f0) > 1e-9 * (1.0 + fabs(f0)))
            return hymo_error_set(err, HYMO_ERR_MODEL,
                                  "%s%s: driven_joints[%d] (%s): the assembly moved joint '%s' to %.17g, but its "
                                  "motion starts at %.17g (list '%s' under `independent:`: the assembly holds only "
                                  "the joints named there)",
                                  model->source_path ? model->source_path : model->name, at, k, dr->name,
                                  model->bodies[dr->joint].joint_name, z0, f0, model->bodies[dr->joint].joint_name);
    }
    return HYMO_OK;
}

int hymo_drivers_break_at(const hymo_sim *sim, double t)
{
    const hymo_model *model = sim->model;
    const double tol = 1e-6 * sim->opt.dt;
    for (int k = 0; k < model->n_drivers; ++k)
        if (hymo_signal_next_breakpoint(&model->signals[model->drivers[k].signal], t - tol, 0.0) <= t + tol) return 1;
    return 0;
}
