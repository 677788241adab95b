#define _POSIX_C_SOURCE 200809L
/* Run options, accessors and the run driver that streams an HDF5 reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"

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
    opt->tol_position = model->defaults.tol_position;
    opt->tol_pressure = model->defaults.tol_pressure;
    opt->tol_spool = model->defaults.tol_spool;
    opt->max_iter = model->defaults.max_iter;
    opt->reselect_ratio = 0.1;
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
    if (opt->max_iter < 1)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "max_iter = %d must be at least 1", opt->max_iter);
    return HYMO_OK;
}

const char *hymo_formulation_name(hymo_formulation_kind kind)
{
    return kind == HYMO_FORMULATION_PENALTY ? "penalty" : "double-step";
}
const char *hymo_jacobian_name(hymo_jacobian_mode mode) { return mode == HYMO_JACOBIAN_FAST ? "fast" : "numeric"; }
const char *hymo_linsol_name(hymo_linsol_kind kind) { return kind == HYMO_LINSOL_KLU ? "klu" : "dense"; }

double hymo_sim_time(const hymo_sim *sim) { return sim->t; }
long hymo_sim_steps(const hymo_sim *sim) { return sim->step; }
int hymo_sim_nz(const hymo_sim *sim) { return sim->nz; }
int hymo_sim_np(const hymo_sim *sim) { return sim->np; }
int hymo_sim_nu(const hymo_sim *sim) { return sim->nu; }
int hymo_sim_na(const hymo_sim *sim) { return sim->na; }
const double *hymo_sim_z(const hymo_sim *sim) { return sim->z; }
const double *hymo_sim_zd(const hymo_sim *sim) { return sim->zd; }
const double *hymo_sim_zdd(const hymo_sim *sim) { return sim->zdd; }
const double *hymo_sim_p(const hymo_sim *sim) { return sim->p; }
const double *hymo_sim_pd(const hymo_sim *sim) { return sim->pd; }
const double *hymo_sim_u(const hymo_sim *sim) { return sim->u; }
const double *hymo_sim_actuator_length(const hymo_sim *sim) { return sim->s; }
const double *hymo_sim_actuator_force(const hymo_sim *sim) { return sim->force; }

int hymo_sim_independent(const hymo_sim *sim, const int **indices)
{
    *indices = sim->indep;
    return sim->ni;
}

void hymo_sim_summary(const hymo_sim *sim, hymo_run_summary *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->model_name, sizeof s->model_name, "%s", sim->model->name);
    snprintf(s->formulation, sizeof s->formulation, "%s", sim->form->name);
    snprintf(s->jacobian, sizeof s->jacobian, "%s", hymo_jacobian_name(sim->opt.jacobian));
    snprintf(s->linear_solver, sizeof s->linear_solver, "%s", sim->ls->ops->name);
    snprintf(s->integrator, sizeof s->integrator, "trapezoidal-newton");
    s->dt = sim->opt.dt;
    s->t_end = sim->opt.t_end;
    s->t_reached = sim->t;
    s->n_steps = sim->step;
    s->peak_drift = sim->peak_drift;
    s->max_work = sim->max_work;
    s->relative_drift = sim->max_work > 0.0 ? sim->peak_drift / sim->max_work : 0.0;
    s->max_constraint_position = sim->max_cpos;
    s->max_constraint_velocity = sim->max_cvel;
    s->max_constraint_acceleration = sim->max_cacc;
    s->mean_iterations = sim->step > 0 ? (double)sim->iterations_total / (double)sim->step : 0.0;
    s->max_iterations = sim->iterations_max;
    s->jacobian_evaluations = sim->jacobian_evaluations;
    snprintf(s->independent, sizeof s->independent, "%s", sim->independent_log);
    s->n_reselections = sim->reselections;
    s->wall_time = sim->wall_time;
}

/* ---- per-step rows buffered in blocks for the HDF5 writer ---- */

#define BLOCK_ROWS 1024

typedef struct {
    int n, nz, np, nu, na, ncut;
    double *time, *z, *zd, *zdd, *p, *u, *s, *sd, *force, *work, *kin, *pot, *drift, *cpos, *cvel, *cacc,
        *residual;
    int *iterations;
} row_buffer;

static void rows_free(row_buffer *b)
{
    double *arr[] = {b->time, b->z, b->zd, b->zdd, b->p, b->u, b->s, b->sd, b->force,
                     b->work, b->kin, b->pot, b->drift, b->cpos, b->cvel, b->cacc, b->residual};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
    free(b->iterations);
}

static int rows_alloc(row_buffer *b, const hymo_sim *sim)
{
    memset(b, 0, sizeof *b);
    b->nz = sim->nz, b->np = sim->np, b->nu = sim->nu, b->na = sim->na, b->ncut = sim->ncut;
#define RA(ptr, w) ((ptr) = calloc((size_t)BLOCK_ROWS * (size_t)((w) > 0 ? (w) : 1), sizeof *(ptr)))
    RA(b->time, 1), RA(b->z, b->nz), RA(b->zd, b->nz), RA(b->zdd, b->nz), RA(b->p, b->np), RA(b->u, b->nu);
    RA(b->s, b->na), RA(b->sd, b->na), RA(b->force, b->na), RA(b->work, b->na);
    RA(b->kin, 1), RA(b->pot, 1), RA(b->drift, 1), RA(b->cpos, b->ncut), RA(b->cvel, b->ncut);
    RA(b->cacc, b->ncut), RA(b->residual, 1), RA(b->iterations, 1);
#undef RA
    return b->time && b->z && b->zd && b->zdd && b->p && b->u && b->s && b->sd && b->force && b->work &&
           b->kin && b->pot && b->drift && b->cpos && b->cvel && b->cacc && b->residual && b->iterations;
}

static void rows_push(row_buffer *b, const hymo_sim *sim)
{
    int i = b->n++;
#define CP(dst, src, w) memcpy((dst) + (size_t)i * (w), (src), (size_t)(w) * sizeof(double))
    b->time[i] = sim->t;
    CP(b->z, sim->z, b->nz), CP(b->zd, sim->zd, b->nz), CP(b->zdd, sim->zdd, b->nz);
    CP(b->p, sim->p, b->np), CP(b->u, sim->u, b->nu);
    CP(b->s, sim->s, b->na), CP(b->sd, sim->sd, b->na), CP(b->force, sim->force, b->na);
    CP(b->work, sim->work, b->na);
    CP(b->cpos, sim->c_pos, b->ncut), CP(b->cvel, sim->c_vel, b->ncut), CP(b->cacc, sim->c_acc, b->ncut);
#undef CP
    b->kin[i] = sim->kinetic;
    b->pot[i] = sim->potential;
    b->drift[i] = sim->drift;
    b->iterations[i] = sim->last_iterations;
    b->residual[i] = sim->residual_norm;
}

static hymo_status rows_flush(row_buffer *b, hymo_ref_writer *w, hymo_error *err)
{
    if (b->n == 0 || !w) {
        b->n = 0;
        return HYMO_OK;
    }
    hymo_ref_block blk = {b->n,     b->time, b->z,   b->zd,    b->zdd,  b->p,    b->u,
                          b->s,     b->sd,   b->force, b->work, b->kin,  b->pot,  b->drift,
                          b->cpos,  b->cvel, b->cacc, b->iterations, b->residual};
    b->n = 0;
    return hymo_ref_writer_append(w, &blk, err);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef char name_t[HYMO_REF_TEXT_MAX];

hymo_status hymo_run(const hymo_model *model, const hymo_run_options *opt, const char *out_path,
                     hymo_run_summary *summary, hymo_error *err)
{
    hymo_sim *sim = NULL;
    hymo_status st = hymo_sim_create(model, opt, &sim, err);
    if (st != HYMO_OK) return st;
    row_buffer rows;
    hymo_ref_writer *writer = NULL;
    name_t *names = NULL;
    if (!rows_alloc(&rows, sim)) {
        rows_free(&rows);
        hymo_sim_free(sim);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (output buffer)");
    }
    if (out_path) {
        int nz = sim->nz, np = sim->np, nu = sim->nu, na = sim->na, nc = sim->ncut;
        names = calloc((size_t)(2 * nz + np + nu + na + nc + 1), sizeof *names);
        if (!names) {
            st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
            goto done;
        }
        name_t *zn = names, *zu = zn + nz, *pn = zu + nz, *un = pn + np, *an = un + nu, *cn = an + na;
        for (int j = 0; j < nz; ++j) {
            snprintf(zn[j], sizeof zn[j], "%s", model->bodies[j].joint_name);
            snprintf(zu[j], sizeof zu[j], "%s", model->bodies[j].joint_type == HYMO_JOINT_REVOLUTE ? "rad" : "m");
        }
        for (int k = 0; k < model->n_nodes; ++k)
            if (model->nodes[k].kind == HYMO_NODE_VOLUME)
                snprintf(pn[model->nodes[k].state], sizeof pn[0], "%s", model->nodes[k].name);
        for (int v = 0; v < nu; ++v) snprintf(un[model->valves[v].state], sizeof un[0], "%s", model->valves[v].name);
        for (int a = 0; a < na; ++a) snprintf(an[a], sizeof an[a], "%s", model->cylinders[a].name);
        for (int c = 0; c < nc; ++c) snprintf(cn[c], sizeof cn[c], "%s", model->cuts[c].name);
        hymo_ref_dims dims = {nz, np, nu, na, nc, (const name_t *)zn, (const name_t *)zu, (const name_t *)pn,
                              (const name_t *)un, (const name_t *)an, (const name_t *)cn};
        hymo_ref_header hdr = {model->name,
                               model->source_text ? model->source_text : "",
                               model->sha256,
                               sim->form->name,
                               "trapezoidal-newton",
                               hymo_jacobian_name(opt->jacobian),
                               hymo_linsol_name(opt->linear_solver),
                               opt->dt,
                               opt->t_end,
                               opt->tol_position,
                               opt->tol_pressure,
                               opt->tol_spool,
                               opt->max_iter,
                               sim->form == &hymo_penalty_ops ? opt->penalty_alpha : 0.0};
        st = hymo_ref_writer_open(&writer, out_path, &hdr, &dims, err);
        if (st != HYMO_OK) goto done;
    }
    rows_push(&rows, sim);
    long n_steps = lround(opt->t_end / opt->dt);
    double t0 = now_seconds();
    for (long k = 0; k < n_steps; ++k) {
        st = hymo_sim_step(sim, err);
        if (st != HYMO_OK) break;
        rows_push(&rows, sim);
        if (rows.n == BLOCK_ROWS) {
            double tw = now_seconds();
            st = rows_flush(&rows, writer, err);
            t0 += now_seconds() - tw; /* integration time excludes file output */
            if (st != HYMO_OK) break;
        }
    }
    sim->wall_time = now_seconds() - t0;
    hymo_status run_status = st;
    hymo_error flush_err;
    if (rows_flush(&rows, writer, &flush_err) != HYMO_OK && run_status == HYMO_OK) {
        *err = flush_err;
        run_status = flush_err.code;
    }
    hymo_run_summary sum;
    hymo_sim_summary(sim, &sum);
    sum.complete = run_status == HYMO_OK;
    if (summary) *summary = sum;
    if (writer) {
        hymo_error close_err;
        hymo_status cst = hymo_ref_writer_close(writer, &sum, &close_err);
        writer = NULL;
        if (cst != HYMO_OK && run_status == HYMO_OK) {
            *err = close_err;
            run_status = cst;
        }
    }
    st = run_status;
done:
    if (writer) hymo_ref_writer_discard(writer);
    free(names);
    rows_free(&rows);
    hymo_sim_free(sim);
    return st;
}
