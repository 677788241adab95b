#define _POSIX_C_SOURCE 200809L
/* Run options, accessors and the run driver that streams an HDF5 reference. */
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
    opt->linear_solver = HYMO_LINSOL_DENSE;
    opt->predictor = HYMO_PREDICTOR_EXTRAPOLATE;
    opt->dt = model->defaults.dt;
    opt->t_end = model->defaults.t_end;
    opt->penalty_alpha = model->defaults.penalty_alpha;
    opt->penalty_alpha_auto = model->penalty_alpha_auto; /* s18-alpha */
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
const char *hymo_linsol_name(hymo_linsol_kind kind) { return kind == HYMO_LINSOL_KLU ? "klu" : "dense"; }

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

void hymo_sim_summary(const hymo_sim *sim, hymo_run_summary *s)
{
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
    s->peak_drift = sim->extremes.peak_drift;
    s->max_work = sim->extremes.max_work;
    s->relative_drift = sim->extremes.max_work > 0.0 ? sim->extremes.peak_drift / sim->extremes.max_work : 0.0;
    s->max_constraint_position = sim->extremes.max_cpos;
    s->max_constraint_velocity = sim->extremes.max_cvel;
    s->max_constraint_acceleration = sim->extremes.max_cacc;
    s->mean_iterations = sim->state.step > 0 ? (double)sim->stats.iterations_total / (double)sim->state.step : 0.0;
    s->max_iterations = sim->stats.iterations_max;
    s->jacobian_evaluations = sim->stats.jacobian_evaluations;
    snprintf(s->independent, sizeof s->independent, "%s", sim->form.ops->log(&sim->form));
    snprintf(s->independent_list, sizeof s->independent_list, "%s", sim->form.ops->log(&sim->form));
    s->n_reselections = sim->form.ops->reselections(&sim->form);
    if (sim->np > 0 && sim->extremes.v_lo >= 0) {
        const hymo_model *model = sim->model;
        s->has_pressure_range = 1;
        s->p_min = sim->extremes.p_lo, s->p_min_time = sim->extremes.t_lo;
        s->p_max = sim->extremes.p_hi, s->p_max_time = sim->extremes.t_hi;
        snprintf(s->p_min_volume, sizeof s->p_min_volume, "%s",
                 model->nodes[sim->cm->circ.vol_node[sim->extremes.v_lo]].name);
        snprintf(s->p_max_volume, sizeof s->p_max_volume, "%s",
                 model->nodes[sim->cm->circ.vol_node[sim->extremes.v_hi]].name);
        s->n_volumes_below_zero = sim->extremes.n_negative;
        snprintf(s->fluid_model, sizeof s->fluid_model, "%s", hymo_fluid_law_of(model)->name);
        s->p_floor = hymo_fluid_floor(model);
        s->n_volumes_below_floor = sim->extremes.n_below_floor;
        s->n_volumes_total = sim->np;
        s->n_volume_ranges = sim->np < HYMO_SUMMARY_VOLUMES ? sim->np : HYMO_SUMMARY_VOLUMES;
        for (int k = 0; k < s->n_volume_ranges; ++k) {
            hymo_volume_range *vr = &s->volume_ranges[k];
            const double *r = sim->extremes.p_vrange + 4 * k;
            snprintf(vr->name, sizeof vr->name, "%s", model->nodes[sim->cm->circ.vol_node[k]].name);
            vr->p_min = r[0], vr->p_min_time = r[1], vr->p_max = r[2], vr->p_max_time = r[3];
            vr->below_floor = sim->extremes.p_below_floor[k];
        }
    }
    s->n_events = sim->switching.events;
    s->event_iterations = sim->switching.event_iterations;
    s->step_halvings = sim->stats.step_halvings; /* s18-newton */
    if (sim->m > 0) { /* mbstruct: redundant constraint rows */
        const hymo_constraints *con = sim->mb.con;
        s->constraint_rank = con->rank;
        s->n_redundant = sim->m - con->rank;
        s->max_redundant_violation = sim->extremes.max_cred;
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

/* ---- per-step rows buffered in blocks for the HDF5 writer ---- */

#define BLOCK_ROWS 1024

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

/* The error-estimate companion of a run that writes a file: its
 * simulation (NULL if none) and the running maxima of the differences. */
typedef struct {
    hymo_sim *sim;
    int ratio;
    double factor;
    const char *method;
    double dz, dp, ds;
    double wall;
    long n_main; /* the main run's steps: the last one ends at t_end, as the companion's last */
} companion;

static void companion_start(companion *c, const hymo_sim *sim, long n_steps)
{
    memset(c, 0, sizeof *c);
    const hymo_run_options *opt = &sim->opt;
    if (!opt->error_estimate || !sim->integrator->companion) return;
    hymo_run_options co;
    sim->integrator->companion(opt, &co, &c->ratio, &c->factor, &c->method);
    hymo_error err;
    c->n_main = n_steps;
    if (hymo_sim_create(sim->model, &co, &c->sim, &err) != HYMO_OK) c->sim = NULL;
}

static double max_abs_diff(int n, const double *a, const double *b, double m)
{
    for (int i = 0; i < n; ++i) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

/* After main step k (1-based): the companion's step(s) and the differences
 * on the common grid; a companion failure ends the estimate, not the run. */
static void companion_step(companion *c, const hymo_sim *sim, long k)
{
    if (!c->sim || (k % c->ratio != 0 && k != c->n_main)) return;
    double t0 = hymo_now_seconds();
    hymo_error err;
    if (hymo_sim_step(c->sim, &err) != HYMO_OK) {
        hymo_sim_free(c->sim);
        c->sim = NULL;
        return;
    }
    c->dz = max_abs_diff(sim->nz, sim->mb.z, c->sim->mb.z, c->dz);
    c->dp = max_abs_diff(sim->np, sim->state.p, c->sim->state.p, c->dp);
    c->ds = max_abs_diff(sim->na, sim->act.s, c->sim->act.s, c->ds);
    c->wall += hymo_now_seconds() - t0;
}

/* The estimate into the summary of a complete run (the companion freed by the caller). */
/* /states/p_range [np x 4]: every volume's p_min, its time, p_max, its
 * time over all steps (the summary and /states' attributes hold the first
 * HYMO_SUMMARY_VOLUMES) */
static hymo_status volume_ranges(hymo_ref_writer *w, const hymo_sim *sim, hymo_error *err)
{
    static const char *const cols[4] = {"p_min", "p_min_time", "p_max", "p_max_time"};
    if (sim->np == 0) return HYMO_OK;
    return hymo_ref_writer_put_matrix(w, "states/p_range", sim->np, 4, sim->extremes.p_vrange, "Pa, s, Pa, s", cols,
                                      err);
}

static void companion_estimate(const companion *c, hymo_run_summary *sum)
{
    if (!c->sim || !sum->complete) return;
    sum->has_accuracy = 1;
    snprintf(sum->accuracy_method, sizeof sum->accuracy_method, "%s", c->method);
    sum->z_max_error = c->factor * c->dz;
    sum->p_max_error = c->factor * c->dp;
    sum->s_max_error = c->factor * c->ds;
}

/* The progress line of a long run (opt->progress): after 2 s, at most
 * twice a second, rewritten in place on stderr. */
typedef struct {
    double start, last;
    int printed;
} progress;

static void progress_line(progress *p, const hymo_sim *sim, long n_steps, long k)
{
    const double now = hymo_now_seconds(), el = now - p->start;
    if (el < 2.0 || now - p->last < 0.5) return;
    p->last = now;
    p->printed = 1;
    const double frac = (double)k / (double)n_steps;
    fprintf(stderr, "\rhymo: t = %.6g of %g s (%3.0f %%), %.1f s elapsed, about %.0f s left   ", sim->state.t,
            sim->opt.t_end, 100.0 * frac, el, el * (1.0 - frac) / frac);
    fflush(stderr);
}

hymo_status hymo_run(const hymo_model *model, const hymo_run_options *opt, const char *out_path,
                     hymo_run_summary *summary, hymo_error *err)
{
    const double t_call = hymo_now_seconds();
    hymo_sim *sim = NULL;
    hymo_status st = hymo_sim_create(model, opt, &sim, err);
    if (st != HYMO_OK) return st;
    hymo_rows rows;
    hymo_ref_writer *writer = NULL;
    void *names = NULL;
    companion comp = {0};
    if (!hymo_rows_alloc(&rows, sim, BLOCK_ROWS)) {
        hymo_rows_free(&rows);
        hymo_sim_free(sim);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (output buffer)");
    }
    long n_steps = hymo_run_steps(opt);
    if (out_path) {
        st = hymo_rows_open_writer(sim, &rows, out_path, &writer, &names, err);
        if (st != HYMO_OK) goto done;
        companion_start(&comp, sim, n_steps);
    }
    hymo_rows_push(&rows, sim);
    double t0 = hymo_now_seconds();
    progress prog = {t0, 0.0, 0};
    for (long k = 0; k < n_steps; ++k) {
        st = hymo_sim_step(sim, err);
        if (st != HYMO_OK) break;
        if ((k + 1) % opt->output_every == 0 || k + 1 == n_steps) hymo_rows_push(&rows, sim);
        companion_step(&comp, sim, k + 1);
        if (opt->progress && (k & 1023) == 1023) progress_line(&prog, sim, n_steps, k + 1);
        if (rows.n == BLOCK_ROWS) {
            double tw = hymo_now_seconds();
            st = hymo_rows_flush(&rows, writer, err);
            t0 += hymo_now_seconds() - tw; /* integration time excludes file output */
            if (st != HYMO_OK) break;
        }
    }
    sim->stats.wall_time = hymo_now_seconds() - t0 - comp.wall; /* and the error-estimate companion */
    if (prog.printed) fputc('\n', stderr);
    hymo_status run_status = st;
    hymo_error flush_err;
    if (hymo_rows_flush(&rows, writer, &flush_err) != HYMO_OK && run_status == HYMO_OK) {
        *err = flush_err;
        run_status = flush_err.code;
    }
    hymo_run_summary sum;
    hymo_sim_summary(sim, &sum);
    sum.complete = run_status == HYMO_OK;
    companion_estimate(&comp, &sum);
    sum.wall_total = hymo_now_seconds() - t_call; /* up to the file's close */
    if (writer) {
        hymo_error close_err;
        hymo_status cst = volume_ranges(writer, sim, &close_err); /* every volume's (the summary holds 32) */
        if (cst == HYMO_OK) cst = hymo_ref_writer_close(writer, &sum, &close_err);
        else hymo_ref_writer_discard(writer); /* no file, no temporary file */
        writer = NULL;
        /* a failed write: the close's message also says the file was not written */
        if (cst != HYMO_OK && (run_status == HYMO_OK || run_status == HYMO_ERR_IO || run_status == HYMO_ERR_HDF5)) {
            *err = close_err;
            run_status = cst;
        }
    }
    st = run_status;
    if (summary) *summary = sum;
done:
    if (writer) hymo_ref_writer_discard(writer);
    hymo_sim_free(comp.sim);
    free(names);
    hymo_rows_free(&rows);
    hymo_sim_free(sim);
    return st;
}
