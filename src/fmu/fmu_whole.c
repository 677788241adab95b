/* FMU export, part `whole` (docs/fmi.md): the monolithic engine (hymo_sim:
 * trapezoidal Newton or IDA) as one co-simulation subsystem.
 *
 * Inputs: the model's signals that drive an input of hymo/control.h (one
 * per signal that drives a valve's reference, a pump's speed factor or a
 * flow control valve's set-flow factor: hymo_signal_drives).  An input
 * whose value at the step start is NaN follows the model's signal table
 * (the default until a master sets it); else the valves, pumps and flow
 * control valves it drives take the input polynomial u(t0 + tau) through
 * the controller callback of hymo/control.h, by signal name (sampled where
 * the integrator samples its inputs).
 * Outputs: z, zd per joint, s, sd, F per cylinder, p per volume, u per spool.
 * State snapshot: everything hymo_sim_step reads of the committed state and
 * its records; restoring it re-applies the inputs (IDA restarts from it)
 * and rebuilds the Newton matrix. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"
#include "cosim_internal.h"
#include "engine.h"
#include "fmu_internal.h"
#include "hymo/control.h"

typedef struct whole_impl whole_impl;
typedef struct {
    whole_impl *w;
    int i;
} input_slot;

struct whole_impl {
    hymo_sim *sim;
    int ni;
    int *signal;       /* ni: signal index */
    double t0;         /* the polynomials' origin */
    double *coef;      /* HYMO_POLY_TERMS * ni */
    double prev_t0;    /* the previous step's polynomials, for jumps */
    double *prev_coef; /* HYMO_POLY_TERMS * ni */
    unsigned char *driven; /* ni: the valves follow the input (else the signal table) */
    /* a snapshot was taken or restored here: the next step re-applies every
     * input first, so that an integrator with a history of its own (IDA)
     * restarts from the snapshot's state in both cases */
    int restart_pending;
    input_slot *slots;
    hymo_var_table vars;
};

static double whole_input(double t, void *user)
{
    const input_slot *s = user;
    return hymo_poly_eval(&s->w->coef[HYMO_POLY_TERMS * s->i], t - s->w->t0);
}

static void whole_set_inputs(hymo_subsystem *sub, double t0, const double *coef)
{
    whole_impl *w = sub->impl;
    const size_t n = (size_t)HYMO_POLY_TERMS * (size_t)w->ni;
    memcpy(w->prev_coef, w->coef, n * sizeof(double));
    w->prev_t0 = w->t0;
    memcpy(w->coef, coef, n * sizeof(double));
    w->t0 = t0;
}

/* The valves' reference mode from the input polynomials at the current
 * time; force: re-apply every one (a snapshot was taken or restored: the
 * integrator restarts; without inputs, the same parameter value again). */
static hymo_status apply_inputs(whole_impl *w, int force, hymo_error *err)
{
    hymo_sim *sim = w->sim;
    const char *name;
    hymo_status st = HYMO_OK;
    for (int i = 0; i < w->ni && st == HYMO_OK; ++i) {
        const double *c = &w->coef[HYMO_POLY_TERMS * i], *pc = &w->prev_coef[HYMO_POLY_TERMS * i];
        name = sim->model->signals[w->signal[i]].name;
        if (isnan(c[0])) {
            if (w->driven[i] || force) st = hymo_sim_clear_input(sim, name, err);
            w->driven[i] = 0;
            continue;
        }
        /* a new input, or a jump at the communication point: the integrator restarts */
        const int jump = !w->driven[i] || isnan(pc[0]) || hymo_poly_eval(pc, sim->state.t - w->prev_t0) != c[0];
        if (jump || force) st = hymo_sim_set_input_callback(sim, name, whole_input, &w->slots[i], err);
        w->driven[i] = 1;
    }
    if (force && w->ni == 0 && st == HYMO_OK) {
        double beta = 0.0;
        hymo_error e2;
        if (hymo_sim_get_parameter(sim, "fluid.bulk_modulus", &beta, &e2) != HYMO_OK || !(beta > 0.0) ||
            hymo_sim_set_parameter(sim, "fluid.bulk_modulus", beta, &e2) != HYMO_OK)
            st = hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                "%s has neither valves nor hydraulics: its integrator cannot be restarted from "
                                "an FMU state (fmi2GetFMUstate/SetFMUstate are not supported for it)",
                                sim->model->name);
    }
    return st;
}

/* A communication step H from t.  On the engine's grid (t = step dt) with
 * H a whole multiple of dt: H/dt steps of dt.  Otherwise the step is
 * re-divided into n = ceil(H/dt) equal steps of H/n <= dt, the engine
 * landing on each end t + j H/n through its shortened-last-step rule
 * (hymo_engine_step_end: the end time is set to the sub-step's end and
 * restored after it); the run then follows the grid of the communication
 * points, so a constant H gives the steps of `hymo run --dt H/n`. */
static hymo_status whole_do_step(hymo_subsystem *sub, double t, double H, hymo_error *err)
{
    whole_impl *w = sub->impl;
    hymo_sim *sim = w->sim;
    const double dt = sim->opt.dt;
    if (!(H > 0.0) || !isfinite(H))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "t = %.9g s: communication step %g s must be positive", t, H);
    if (fabs(t - sim->state.t) > 1e-9 * dt)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "communication point %.9g s is not the FMU's time %.9g s", t,
                              sim->state.t);
    hymo_status st = apply_inputs(w, w->restart_pending, err);
    w->restart_pending = 0;
    const long k = hymo_steps_per_communication(H, dt);
    if (k > 0 && fabs(sim->state.t - (double)sim->state.step * dt) <= 1e-9 * dt) {
        for (long j = 0; j < k && st == HYMO_OK; ++j) st = hymo_sim_step(sim, err);
        return st;
    }
    const double ratio = H / dt, nr = ceil(ratio - 1e-9 * ratio);
    if (nr > 1e9) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "t = %.9g s: communication step %g s is too long", t, H);
    const long n = nr < 1.0 ? 1 : (long)nr;
    const double t_end = sim->opt.t_end;
    for (long j = 1; j <= n && st == HYMO_OK; ++j) {
        sim->opt.t_end = j == n ? t + H : t + (double)j * (H / (double)n);
        st = hymo_sim_step(sim, err);
    }
    sim->opt.t_end = t_end;
    return st;
}

static void whole_get_outputs(const hymo_subsystem *sub, double *y)
{
    const hymo_sim *sim = ((const whole_impl *)sub->impl)->sim;
    const int nz = sim->nz, na = sim->na;
#define PUT(src, n) (memcpy(y, (src), (size_t)(n) * sizeof(double)), y += (n))
    PUT(sim->mb.z, nz), PUT(sim->mb.zd, nz), PUT(sim->act.s, na), PUT(sim->act.sd, na), PUT(sim->eval.force, na);
    PUT(sim->state.p, sim->np), PUT(sim->state.u, sim->nu);
#undef PUT
}

/* ---- state snapshot ---- */

/* Calls f(ptr, n) on every array of the snapshot, then g(ptr) on each
 * scalar (doubles), l(ptr) on each long, i(ptr) on each int. */
typedef struct {
    double *buf;
    int n;
    int restore;
} snap;

static void snap_d(snap *s, double *x, int n)
{
    if (s->buf) {
        if (s->restore)
            memcpy(x, s->buf + s->n, (size_t)n * sizeof(double));
        else
            memcpy(s->buf + s->n, x, (size_t)n * sizeof(double));
    }
    s->n += n;
}
static void snap_l(snap *s, long *x)
{
    double v = (double)*x;
    snap_d(s, &v, 1);
    if (s->restore && s->buf) *x = lround(v);
}
static void snap_i(snap *s, int *x)
{
    double v = (double)*x;
    snap_d(s, &v, 1);
    if (s->restore && s->buf) *x = (int)lround(v);
}
static void snap_u8(snap *s, unsigned char *x, int n)
{
    for (int k = 0; k < n; ++k) {
        double v = x[k];
        snap_d(s, &v, 1);
        if (s->restore && s->buf) x[k] = (unsigned char)lround(v);
    }
}

static void whole_snap(whole_impl *w, snap *s)
{
    hymo_sim *sim = w->sim;
    hymo_mb *mb = &sim->mb;
    hymo_sim_stats *const st = &sim->stats;
    hymo_sim_extremes *const ex = &sim->extremes;
    const int nz = sim->nz, m = sim->m, np = sim->np, nu = sim->nu, na = sim->na, nc = sim->ncut;
    snap_d(s, &sim->state.t, 1);
    snap_l(s, &sim->state.step);
    snap_d(s, &sim->solver.h, 1), snap_d(s, &sim->state.h_prev, 1);
    snap_u8(s, sim->switching.sw, sim->nsw);
    snap_l(s, &sim->switching.events), snap_l(s, &sim->switching.event_iterations),
        snap_d(s, &sim->switching.last_event, 1);
    snap_d(s, mb->z, nz), snap_d(s, mb->zd, nz), snap_d(s, mb->zdd, nz), snap_d(s, mb->lambda, m);
    snap_d(s, sim->act.s, na), snap_d(s, sim->act.sd, na);
    snap_d(s, sim->state.p, np), snap_d(s, sim->state.pd, np), snap_d(s, sim->state.u, nu),
        snap_d(s, sim->state.ud, nu);
    snap_d(s, sim->inputs.uref_start, nu), snap_d(s, sim->inputs.uref_end, nu);
    if (sim->inputs.in_end)
        snap_d(s, sim->inputs.in_start, sim->n_in), snap_d(s, sim->inputs.in_end, sim->n_in); /* pumps, flow controls */
    snap_d(s, sim->state.zdd_prev, nz), snap_d(s, sim->state.pd_prev, np), snap_d(s, sim->state.pd_prev2, np);
    snap_d(s, sim->state.lambda_prev, m), snap_d(s, sim->state.lambda_prev2, m);
    snap_d(s, sim->eval.force, na), snap_d(s, sim->record.work, na), snap_d(s, sim->record.power, na);
    snap_d(s, &sim->record.kinetic, 1), snap_d(s, &sim->record.potential, 1), snap_d(s, &sim->record.drift, 1);
    snap_d(s, sim->record.c_pos, nc), snap_d(s, sim->record.c_vel, nc), snap_d(s, sim->record.c_acc, nc);
    snap_d(s, &st->residual_norm, 1);
    snap_i(s, &st->last_iterations), snap_l(s, &st->iterations_total), snap_i(s, &st->iterations_max);
    snap_l(s, &st->jacobian_evaluations);
    snap_d(s, &ex->peak_drift, 1), snap_d(s, &ex->max_work, 1), snap_d(s, &ex->max_cpos, 1);
    snap_d(s, &ex->max_cvel, 1), snap_d(s, &ex->max_cacc, 1);
    snap_d(s, &ex->p_lo, 1), snap_d(s, &ex->p_hi, 1), snap_d(s, &ex->t_lo, 1), snap_d(s, &ex->t_hi, 1);
    snap_i(s, &ex->v_lo), snap_i(s, &ex->v_hi), snap_i(s, &ex->n_negative);
    snap_u8(s, ex->p_negative, np);
    snap_d(s, ex->p_vrange, 4 * np), snap_u8(s, ex->p_below_floor, np), snap_i(s, &ex->n_below_floor);
    snap_d(s, &sim->solver.newton_tau, 1), snap_d(s, &sim->solver.newton_theta, 1),
        snap_d(s, &sim->solver.newton_prev_m, 1);
    snap_i(s, &sim->solver.newton_theta_age);
    snap_d(s, &sim->solver.newton_lte, 1);
    if (sim->fe.n > 0)
        snap_d(s, &sim->record.fe_work, 1), snap_d(s, &sim->record.fe_power, 1), snap_d(s, &sim->record.fe_t, 1);
    /* the inputs */
    snap_d(s, &w->t0, 1), snap_d(s, w->coef, HYMO_POLY_TERMS * w->ni);
    snap_d(s, &w->prev_t0, 1), snap_d(s, w->prev_coef, HYMO_POLY_TERMS * w->ni);
    snap_u8(s, w->driven, w->ni);
}

static int whole_state_size(const hymo_subsystem *sub)
{
    snap s = {NULL, 0, 0};
    whole_snap(sub->impl, &s);
    return s.n;
}

static void whole_get_state(const hymo_subsystem *sub, double *buf)
{
    whole_impl *w = sub->impl;
    snap s = {buf, 0, 0};
    whole_snap(w, &s);
    w->restart_pending = 1;
}

static void whole_set_state(hymo_subsystem *sub, const double *buf)
{
    whole_impl *w = sub->impl;
    snap s = {(double *)buf, 0, 1};
    whole_snap(w, &s);
    hymo_sim *sim = w->sim;
    memcpy(sim->mb.zn, sim->mb.z, (size_t)sim->nz * sizeof(double));
    memcpy(sim->mb.zdn, sim->mb.zd, (size_t)sim->nz * sizeof(double));
    memcpy(sim->eval.pn, sim->state.p, (size_t)sim->np * sizeof(double));
    memcpy(sim->eval.un, sim->state.u, (size_t)sim->nu * sizeof(double));
    sim->jac.jac_valid = 0;
    w->restart_pending = 1;
}

static void whole_destroy(hymo_subsystem *sub)
{
    if (!sub) return;
    whole_impl *w = sub->impl;
    if (w) {
        hymo_sim_free(w->sim);
        free(w->signal);
        free(w->coef);
        free(w->prev_coef);
        free(w->driven);
        free(w->slots);
        hymo_var_table_free(&w->vars);
        free(w);
    }
    free(sub);
}

/* ---- variables ---- */
enum { WV_TIME, WV_ZDD, WV_KINETIC, WV_POTENTIAL, WV_DRIFT, WV_STEPS, WV_ITER, WV_ITER_TOTAL, WV_JAC, WV_EVENTS,
       WV_INDEPENDENT };

static int whole_n_variables(const hymo_subsystem *sub) { return ((const whole_impl *)sub->impl)->vars.n; }
static const hymo_variable *whole_variable(const hymo_subsystem *sub, int vr)
{
    return hymo_var_table_get(&((const whole_impl *)sub->impl)->vars, vr);
}

static void whole_get_real(const hymo_subsystem *sub, const int *vr, int n, double *values)
{
    const whole_impl *w = sub->impl;
    const hymo_sim *sim = w->sim;
    for (int k = 0; k < n; ++k) {
        const int v = vr[k];
        double x = NAN;
        if (v >= 0 && v < w->vars.n) switch (w->vars.kind[v]) {
            case WV_TIME: x = sim->state.t; break;
            case WV_ZDD: x = sim->mb.zdd[w->vars.index[v]]; break;
            case WV_KINETIC: x = sim->record.kinetic; break;
            case WV_POTENTIAL: x = sim->record.potential; break;
            case WV_DRIFT: x = sim->record.drift; break;
            case WV_STEPS: x = (double)sim->state.step; break;
            case WV_ITER: x = (double)sim->stats.last_iterations; break;
            case WV_ITER_TOTAL: x = (double)sim->stats.iterations_total; break;
            case WV_JAC: x = (double)sim->stats.jacobian_evaluations; break;
            case WV_EVENTS: x = (double)sim->switching.events; break;
            default: break;
            }
        values[k] = x;
    }
}

static const char *whole_get_string(const hymo_subsystem *sub, int vr)
{
    const whole_impl *w = sub->impl;
    return vr >= 0 && vr < w->vars.n && w->vars.kind[vr] == WV_INDEPENDENT ? w->sim->form.ops->log(&w->sim->form)
                                                                           : NULL;
}

static const hymo_subsystem_ops whole_ops = {
    .kind = "whole",
    .set_inputs = whole_set_inputs,
    .do_step = whole_do_step,
    .get_outputs = whole_get_outputs,
    .state_size = whole_state_size,
    .get_state = whole_get_state,
    .set_state = whole_set_state,
    .destroy = whole_destroy,
    .n_variables = whole_n_variables,
    .variable = whole_variable,
    .get_real = whole_get_real,
    .get_string = whole_get_string,
};

hymo_status hymo_fmu_whole_create(const hymo_model *model, const hymo_run_options *opt, hymo_subsystem **out,
                                  hymo_error *err)
{
    *out = NULL;
    hymo_subsystem *sub = calloc(1, sizeof *sub);
    whole_impl *w = calloc(1, sizeof *w);
    if (!sub || !w) {
        free(sub);
        free(w);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    sub->ops = &whole_ops;
    sub->impl = w;
    snprintf(sub->name, sizeof sub->name, "whole(%s)", hymo_integrator_name(opt->integrator));
    hymo_status st = hymo_sim_create(model, opt, &w->sim, err);
    if (st != HYMO_OK) {
        whole_destroy(sub);
        return st;
    }
    const size_t ns = (size_t)model->n_signals + 1;
    w->signal = calloc(ns, sizeof *w->signal);
    w->coef = calloc(ns * HYMO_POLY_TERMS, sizeof(double));
    w->prev_coef = calloc(ns * HYMO_POLY_TERMS, sizeof(double));
    w->driven = calloc(ns, 1);
    w->slots = calloc(ns, sizeof *w->slots);
    if (!w->signal || !w->coef || !w->prev_coef || !w->driven || !w->slots) {
        whole_destroy(sub);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    for (int s = 0; s < model->n_signals; ++s) {
        if (!hymo_signal_drives(model, s)) continue; /* the order of src/fmu/fmu_part.c */
        w->slots[w->ni] = (input_slot){w, w->ni};
        w->coef[HYMO_POLY_TERMS * w->ni] = NAN; /* the signal table */
        w->prev_coef[HYMO_POLY_TERMS * w->ni] = NAN;
        w->signal[w->ni++] = s;
    }
    sub->n_inputs = w->ni;
    sub->n_outputs = 2 * w->sim->nz + 3 * w->sim->na + w->sim->np + w->sim->nu;
    hymo_var_table *t = &w->vars;
    const hymo_var_type R = HYMO_VAR_REAL;
    int bad = hymo_var_table_add(t, WV_TIME, 0, R, "s", "time", "time");
    for (int j = 0; j < model->n_bodies; ++j)
        bad |= hymo_var_table_add(t, WV_ZDD, j, R,
                                  model->bodies[j].joint_type == HYMO_JOINT_REVOLUTE ? "rad/s2" : "m/s2",
                                  "joint acceleration", "%s.zdd", model->bodies[j].joint_name);
    bad |= hymo_var_table_add(t, WV_KINETIC, 0, R, "J", "kinetic energy", "kinetic_energy");
    bad |= hymo_var_table_add(t, WV_POTENTIAL, 0, R, "J", "potential energy", "potential_energy");
    bad |= hymo_var_table_add(t, WV_DRIFT, 0, R, "J", "energy balance E - E0 - W_act (SPEC 4)", "energy_drift");
    bad |= hymo_var_table_add(t, WV_STEPS, 0, R, "1", "steps done", "steps");
    bad |= hymo_var_table_add(t, WV_ITER, 0, R, "1", "Newton iterations of the last step", "newton_iterations");
    bad |= hymo_var_table_add(t, WV_ITER_TOTAL, 0, R, "1", "Newton iterations, all steps", "newton_iterations_total");
    bad |= hymo_var_table_add(t, WV_JAC, 0, R, "1", "Jacobian evaluations", "jacobian_evaluations");
    bad |= hymo_var_table_add(t, WV_EVENTS, 0, R, "1", "events located", "events");
    bad |= hymo_var_table_add(t, WV_INDEPENDENT, 0, HYMO_VAR_STRING, "", "independent coordinates used",
                              "independent");
    if (bad) {
        whole_destroy(sub);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    *out = sub;
    return HYMO_OK;
}
