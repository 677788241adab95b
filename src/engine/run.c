#define _POSIX_C_SOURCE 200809L
/* Run options, names, accessors, the run summary, the step count and the clock. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "hymo/subsystem.h"
#include "rows.h"

void hymo_run_options_default(hymo_run_options *opt, const hymo_model *model)
{
    memset(opt, 0, sizeof *opt);
    opt->formulation = HYMO_FORMULATION_DOUBLE_STEP;
    opt->jacobian = HYMO_JACOBIAN_NUMERIC;
    opt->linear_solver = HYMO_LINSOL_AUTO; /* KLU where tree mode applies, else dense (hymo_sim_create) */
    opt->predictor = HYMO_PREDICTOR_EXTRAPOLATE;
    opt->dt = model->defaults.dt;
    opt->t_end = model->defaults.t_end;
    opt->penalty_alpha = model->defaults.penalty_alpha;
    opt->penalty_alpha_auto = model->penalty_alpha_auto; /* 1: the penalty factor scaled with the mass matrix */
    opt->tol_position = model->defaults.tol_position;
    opt->tol_pressure = model->defaults.tol_pressure;
    opt->tol_spool = model->defaults.tol_spool;
    opt->max_iter = model->defaults.max_iter;
    opt->reselect_ratio = model->reselect_threshold > 0.0 ? model->reselect_threshold : HYMO_RESELECT_THRESHOLD_DEFAULT;
    opt->integrator = HYMO_INTEGRATOR_TRAPEZOIDAL;
    opt->newton_test = HYMO_NEWTON_CONTRACTIVE;
    opt->rtol = 1e-8;
    opt->error_estimate = 1;
    opt->output_every = 1;
    opt->atol = 1e-10;
}

hymo_status hymo_run_options_check(const hymo_run_options *opt, hymo_error *err)
{
    if (!(opt->dt > 0.0) || !isfinite(opt->dt))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "dt = %g: the time step must be positive", opt->dt);
    if (!(opt->t_end > 0.0) || !isfinite(opt->t_end))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "t_end = %g: the end time must be positive", opt->t_end);
    if (opt->t_end / opt->dt > 1e9)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "t_end/dt = %g steps is too many", opt->t_end / opt->dt);
    if (!(opt->penalty_alpha > 0.0))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "penalty alpha = %g must be positive", opt->penalty_alpha);
    if (!(opt->tol_position > 0.0) || !(opt->tol_pressure > 0.0) || !(opt->tol_spool > 0.0))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "Newton tolerances must be positive");
    if (opt->output_every < 1)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "output_every = %d must be at least 1", opt->output_every);
    if ((unsigned)opt->newton_test > HYMO_NEWTON_SEED)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "newton test %d is not contractive or seed", (int)opt->newton_test);
    if ((unsigned)opt->linear_solver > HYMO_LINSOL_AUTO)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "linear solver %d is not dense, klu or auto",
                              (int)opt->linear_solver);
    if ((unsigned)opt->integrator > HYMO_INTEGRATOR_IDA)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "integrator %d is not trapezoidal or ida", (int)opt->integrator);
    if (!(opt->rtol > 0.0) || !(opt->atol > 0.0) || !(opt->rtol < 1.0))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "rtol = %g, atol = %g: tolerances must be positive (rtol < 1)",
                              opt->rtol, opt->atol);
    if (opt->max_iter < 1)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "max_iter = %d must be at least 1", opt->max_iter);
    return HYMO_OK;
}

hymo_status hymo_output_every_from_interval(double interval, double dt, int *every, hymo_error *err)
{
    if (!(interval > 0.0) || !isfinite(interval))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "the output interval %g s must be positive", interval);
    if (!(dt > 0.0) || !isfinite(dt))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "dt = %g: the time step must be positive", dt);
    const double n = interval / dt, r = floor(n + 0.5);
    if (r < 1.0 || r > 1e9 || fabs(n - r) > 1e-9 * r)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "the output interval %.17g s is not a whole multiple of dt = %.17g s "
                              "(%.12g steps; to 1e-9)",
                              interval, dt, n);
    *every = (int)r;
    return HYMO_OK;
}

const char *hymo_formulation_name(hymo_formulation_kind kind)
{
    return kind == HYMO_FORMULATION_PENALTY ? "penalty" : "double-step";
}
const char *hymo_integrator_name(hymo_integrator_kind kind)
{
    return kind == HYMO_INTEGRATOR_IDA ? "ida" : "trapezoidal-newton";
}
const char *hymo_newton_test_name(hymo_newton_test_kind kind)
{
    return kind == HYMO_NEWTON_SEED ? "seed" : "contractive";
}
const char *hymo_jacobian_name(hymo_jacobian_mode mode) { return mode == HYMO_JACOBIAN_FAST ? "fast" : "numeric"; }
const char *hymo_linsol_name(hymo_linsol_kind kind)
{
    return kind == HYMO_LINSOL_KLU ? "klu" : kind == HYMO_LINSOL_AUTO ? "auto" : "dense";
}

double hymo_sim_time(const hymo_sim *sim) { return sim->state.t; }
long hymo_sim_steps(const hymo_sim *sim) { return sim->state.step; }
int hymo_sim_nz(const hymo_sim *sim) { return sim->nz; }
int hymo_sim_np(const hymo_sim *sim) { return sim->np; }
int hymo_sim_nu(const hymo_sim *sim) { return sim->nu; }
int hymo_sim_na(const hymo_sim *sim) { return sim->na; }
const double *hymo_sim_z(const hymo_sim *sim) { return sim->mb.z; }
const double *hymo_sim_zd(const hymo_sim *sim) { return sim->mb.zd; }
const double *hymo_sim_zdd(const hymo_sim *sim) { return sim->mb.zdd; }
const double *hymo_sim_p(const hymo_sim *sim) { return sim->state.p; }
const double *hymo_sim_pd(const hymo_sim *sim) { return sim->state.pd; }
const double *hymo_sim_u(const hymo_sim *sim) { return sim->state.u; }
const double *hymo_sim_actuator_length(const hymo_sim *sim) { return sim->act.s; }
const double *hymo_sim_actuator_force(const hymo_sim *sim) { return sim->eval.force; }

int hymo_sim_independent(const hymo_sim *sim, const int **indices)
{
    return sim->form.ops->independent(&sim->form, indices);
}

long hymo_sim_events(const hymo_sim *sim, double *last)
{
    if (last) *last = sim->switching.last_event;
    return sim->switching.events;
}

/* A hydraulic motor's state in a run (what outputs and sensors read); its
 * equations are in hydraulics/circuit.h (hymo_motor_torque_d,
 * hymo_motor_flow); the motor is actuator n_cylinders + k of the run
 * (formulations/multibody.c). */
hymo_status hymo_sim_motor_state(const hymo_sim *sim, int k, hymo_motor_state *out, hymo_error *err)
{
    const hymo_model *model = sim ? sim->model : NULL;
    if (!model || k < 0 || k >= model->n_motors || !out)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_sim_motor_state: no motor %d (the model has %d)", k,
                              model ? model->n_motors : 0);
    const hymo_motor *mo = &model->motors[k];
    const int a = model->n_cylinders + k;
    const double w = sim->act.sd[a];
    const double *p = sim->state.p; /* the committed pressures (pn is the last iterate) */
    double dT_ddp, dT_dw;
    out->speed = w;
    out->dp = hymo_node_pressure(model, mo->node_a, p) - hymo_node_pressure(model, mo->node_b, p);
    out->torque = hymo_motor_torque_d(model, k, w, p, &dT_ddp, &dT_dw);
    out->flow_ideal = mo->displacement * w;
    out->flow_leakage = mo->leakage * out->dp;
    out->flow = out->flow_ideal + out->flow_leakage;
    out->power_mech = out->torque * w;
    out->power_hyd = out->dp * out->flow;
    return HYMO_OK;
}

void hymo_sim_summary(const hymo_sim *sim, hymo_run_summary *s)
{
    const hymo_sim_extremes *ex = &sim->extremes;
    memset(s, 0, sizeof *s);
    snprintf(s->model_name, sizeof s->model_name, "%s", sim->model->name);
    snprintf(s->formulation, sizeof s->formulation, "%s", sim->form.ops->name);
    snprintf(s->jacobian, sizeof s->jacobian, "%s", hymo_engine_jacobian_name(sim));
    snprintf(s->linear_solver, sizeof s->linear_solver, "%s", sim->ls->ops->name);
    snprintf(s->integrator, sizeof s->integrator, "%s", sim->integrator->name);
    s->dt = sim->opt.dt;
    s->t_end = sim->opt.t_end;
    s->t_reached = sim->state.t;
    s->complete = sim->state.t >= sim->opt.t_end - 1e-9 * sim->opt.dt; /* hymo_run: the run's status */
    s->n_steps = sim->state.step;
    s->peak_drift = ex->peak_drift;
    s->max_work = ex->max_work;
    s->relative_drift = ex->max_work > 0.0 ? ex->peak_drift / ex->max_work : 0.0;
    s->max_constraint_position = ex->max_cpos;
    s->max_constraint_velocity = ex->max_cvel;
    s->max_constraint_acceleration = ex->max_cacc;
    s->mean_iterations = sim->state.step > 0 ? (double)sim->stats.iterations_total / (double)sim->state.step : 0.0;
    s->max_iterations = sim->stats.iterations_max;
    s->jacobian_evaluations = sim->stats.jacobian_evaluations;
    snprintf(s->independent, sizeof s->independent, "%s", sim->form.ops->log(&sim->form));
    snprintf(s->independent_list, sizeof s->independent_list, "%s", sim->form.ops->log(&sim->form));
    s->n_reselections = sim->form.ops->reselections(&sim->form);
    snprintf(s->initial_rates, sizeof s->initial_rates, "%s", sim->cm->rates_report);
    if (sim->form.ops->singular)
        snprintf(s->singular_positions, sizeof s->singular_positions, "%s", sim->form.ops->singular(&sim->form));
    if (sim->np > 0 && ex->v_lo >= 0) {
        const hymo_model *model = sim->model;
        s->has_pressure_range = 1;
        s->p_min = ex->p_lo, s->p_min_time = ex->t_lo;
        s->p_max = ex->p_hi, s->p_max_time = ex->t_hi;
        snprintf(s->p_min_volume, sizeof s->p_min_volume, "%s",
                 model->nodes[sim->cm->circ.vol_node[ex->v_lo]].name);
        snprintf(s->p_max_volume, sizeof s->p_max_volume, "%s",
                 model->nodes[sim->cm->circ.vol_node[ex->v_hi]].name);
        s->n_volumes_below_zero = ex->n_negative;
        snprintf(s->fluid_model, sizeof s->fluid_model, "%s", hymo_fluid_law_of(model)->name);
        s->p_floor = hymo_fluid_floor(model);
        s->n_volumes_below_floor = ex->n_below_floor;
        s->n_volumes_total = sim->np;
        s->n_volume_ranges = sim->np < HYMO_SUMMARY_VOLUMES ? sim->np : HYMO_SUMMARY_VOLUMES;
        for (int k = 0; k < s->n_volume_ranges; ++k) {
            hymo_volume_range *vr = &s->volume_ranges[k];
            const double *r = ex->p_vrange + 4 * k;
            snprintf(vr->name, sizeof vr->name, "%s", model->nodes[sim->cm->circ.vol_node[k]].name);
            vr->p_min = r[0], vr->p_min_time = r[1], vr->p_max = r[2], vr->p_max_time = r[3];
            vr->below_floor = ex->p_below_floor[k];
        }
    }
    s->n_events = sim->switching.events;
    s->event_iterations = sim->switching.event_iterations;
    s->step_halvings = sim->stats.step_halvings;
    if (sim->m > 0) { /* redundant constraint rows */
        const hymo_constraints *con = sim->mb.con;
        s->constraint_rank = con->rank;
        s->n_redundant = sim->m - con->rank;
        s->max_redundant_violation = ex->max_cred;
        size_t used = 0;
        for (int r = 0; r < sim->m; ++r) {
            if (!con->redundant[r]) continue;
            char name[HYMO_REF_TEXT_MAX];
            hymo_constraints_row_name(con, sim->model, r, name, sizeof name);
            const size_t len = strlen(name) + (used ? 1 : 0);
            if (used + len + 4 > sizeof s->redundant) {
                snprintf(s->redundant + used, sizeof s->redundant - used, "...");
                break;
            }
            if (used) s->redundant[used++] = ','; /* room checked above */
            memcpy(s->redundant + used, name, strlen(name) + 1);
            used += strlen(name);
        }
    }
    /* hymo_run's integration time, or after stepping by hand the time since the first step */
    s->wall_time = sim->stats.wall_time > 0.0 ? sim->stats.wall_time
                   : sim->stats.clock0 > 0.0  ? hymo_now_seconds() - sim->stats.clock0
                                              : 0.0;
}

long hymo_run_steps(const hymo_run_options *opt)
{
    /* a t_end within 1e-9 dt of a multiple of dt is that multiple; else one
     * more, shortened step lands on t_end */
    const double n = opt->t_end / opt->dt;
    const double r = floor(n + 0.5);
    return fabs(n - r) <= 1e-9 * fmax(1.0, r) ? (long)r : (long)ceil(n);
}

double hymo_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
