/* Semi-implicit (symplectic) Euler integrator for explicit formulations
 * (index-1, the mechanical integrator of the co-simulation, SPEC §7): one
 * step of size opt.dt with the forces at t_k (set by the caller through the
 * force source), accelerations from the formulation, then
 * zd_{k+1} = zd_k + h zdd_k, z_{k+1} = z_k + h zd_{k+1}.  A step whose end
 * hymo_engine_step_end puts before the next grid point (a nearer t_end)
 * is shortened to land there: h = t_end - t_k. */
#include <math.h>
#include <string.h>

#include "engine.h"

static hymo_status euler_step(hymo_sim *sim, hymo_error *err)
{
    const hymo_model *model = sim->model;
    hymo_mb *mb = &sim->mb;
    const int nz = sim->nz;
    const double dt = sim->opt.dt, t_grid = (double)(sim->state.step + 1) * dt, t1 = hymo_engine_step_end(sim);
    const int shortened = t1 != t_grid;
    const double h = shortened ? t1 - sim->state.t : dt;
    /* dynamics at t_k with the forces at t_k */
    memcpy(mb->zn, mb->z, (size_t)nz * sizeof(double));
    memcpy(mb->zdn, mb->zd, (size_t)nz * sizeof(double));
    hymo_kin_positions(&mb->kin, model, mb->z);
    hymo_kin_velocities(&mb->kin, model, mb->zd);
    if (sim->m > 0) hymo_constraints_eval(mb->con, &mb->kin, mb->phi, mb->phi_zv, mb->gamma);
    hymo_status st = hymo_engine_dynamics(sim, sim->state.t, err);
    if (st != HYMO_OK) return st;
    st = sim->form.ops->accelerations(&sim->form, mb, sim->state.t, sim->state.step, &sim->stats.last_iterations, err);
    if (st != HYMO_OK) return st;
    /* the step's force is constant: its work is F_k (s_{k+1} - s_k) */
    memcpy(sim->record.s_prev, sim->act.s, (size_t)sim->na * sizeof(double));
    for (int j = 0; j < nz; ++j) {
        mb->zd[j] += h * mb->zdd[j];
        mb->z[j] += h * mb->zd[j];
        if (!isfinite(mb->z[j]) || !isfinite(mb->zd[j]))
            return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.6g s (step %ld): joint %s became non-finite",
                                  sim->state.t + h, sim->state.step + 1, model->bodies[j].joint_name);
    }
    sim->state.t = shortened ? t1 : t_grid;
    sim->state.step++;
    hymo_kin_positions(&mb->kin, model, mb->z);
    hymo_kin_velocities(&mb->kin, model, mb->zd);
    hymo_actuators_eval(&sim->act, model, &mb->kin); /* s, sd at t_{k+1}: the outputs */
    for (int a = 0; a < sim->na; ++a) {
        sim->record.work[a] += sim->eval.force[a] * (sim->act.s[a] - sim->record.s_prev[a]);
        sim->record.power[a] = sim->eval.force[a] * sim->act.sd[a];
    }
    if (sim->m > 0) hymo_constraints_eval(mb->con, &mb->kin, mb->phi, mb->phi_zv, mb->gamma);
    if (sim->nsw > 0) { /* no event location: the branches of the state reached */
        hymo_engine_switching(sim, sim->switching.g_end);
        for (int i = 0; i < sim->nsw; ++i) sim->switching.sw[i] = sim->switching.g_end[i] >= 0.0;
    }
    sim->stats.iterations_total += sim->stats.last_iterations;
    if (sim->stats.last_iterations > sim->stats.iterations_max) sim->stats.iterations_max = sim->stats.last_iterations;
    hymo_engine_record_stats(sim);
    return HYMO_OK;
}

/* t_k: the grid point, or the time reached by a shortened step */
static double euler_input_time(const hymo_sim *sim)
{
    const double dt = sim->opt.dt;
    return hymo_engine_step_end(sim) != (double)(sim->state.step + 1) * dt ? sim->state.t : (double)sim->state.step * dt;
}

static hymo_status euler_restart(hymo_sim *sim, hymo_error *err) { return (void)sim, (void)err, HYMO_OK; }

static hymo_status euler_create(hymo_sim *sim, hymo_error *err)
{
    if (!sim->form.ops->accelerations)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "the semi-implicit Euler integrator needs an explicit "
                                                      "formulation (index-1), not %s",
                              sim->form.ops->name);
    return HYMO_OK;
}
static void euler_destroy(hymo_sim *sim) { (void)sim; }

const hymo_integrator_ops hymo_semi_implicit_euler_ops = {
    .name = "semi-implicit-euler",
    .jacobian_name = "none (explicit)",
    .create = euler_create,
    .destroy = euler_destroy,
    .step = euler_step,
    .input_time = euler_input_time,
    .companion = NULL,
    .restart = euler_restart,
};
