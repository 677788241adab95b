/* Per-step output rows (the datasets of SPEC §8) buffered for the HDF5
 * writer; shared by the monolithic run and the co-simulation driver. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "rows.h"
#include "sensors.h" /* further outputs */

/* The buffers are those of hymo_ref_signals[] (reference/signals.c): one per
 * signal, at the signal's `rows` offset in hymo_rows. */

/* What the writer's thread computes the further outputs of a row from,
 * besides the row's signals: the simulation's circuit (its constants;
 * shared, read-only) whose switching states and pump speeds and set flows
 * are the row's, and the layout of a row's aux: the valve references
 * (nu doubles), the pump speeds and set flows (n_in doubles, when the
 * circuit has them), the circuit's switching states (n_sw bytes, when it
 * has them). */
struct hymo_rows_derive {
    hymo_outputs *outputs;
    hymo_circuit circ;
    int nz, np, nu, n_pumps, n_in, n_sw;
    size_t off_in, off_sw, aux_bytes;
};

void hymo_rows_free(hymo_rows *b)
{
    for (int k = 0; k < HYMO_SIGNAL_COUNT; ++k) {
        free(hymo_ref_signal_get(&hymo_ref_signals[k], b, hymo_ref_signals[k].rows));
    }
    hymo_outputs_free(b->outputs);
    b->outputs = NULL;
    b->n_series = 0;
    free(b->aux);
    b->aux = NULL;
    free(b->derive);
    b->derive = NULL;
}

int hymo_rows_alloc(hymo_rows *b, const hymo_sim *sim, long capacity)
{
    memset(b, 0, sizeof *b);
    b->nz = sim->nz, b->np = sim->np, b->nu = sim->nu, b->na = sim->na, b->ncut = sim->ncut;
    int counts[HYMO_COLS_COUNT];
    hymo_ref_counts_rows(b, counts);
    int ok = 1;
    for (int k = 0; k < HYMO_SIGNAL_COUNT; ++k) {
        const hymo_ref_signal *sg = &hymo_ref_signals[k];
        const int w = counts[sg->cols];
        const size_t elem = hymo_ref_signal_elem_size(sg);
        b->row_bytes[k] = (size_t)w * elem;
        void *data = calloc((size_t)capacity * (size_t)(w > 0 ? w : 1), elem);
        hymo_ref_signal_set(sg, b, sg->rows, data);
        b->col[k] = data;
        ok = ok && data;
    }
    /* copy order of hymo_rows_push: one double per row first; no columns: no copy */
    for (int k = 0; k < HYMO_SIGNAL_COUNT; ++k) {
        if (b->row_bytes[k] == sizeof(double)) b->copy[b->n_copy++] = (unsigned char)k;
    }
    b->n_scalar = b->n_copy;
    for (int k = 0; k < HYMO_SIGNAL_COUNT; ++k) {
        const size_t bytes = b->row_bytes[k];
        if (bytes != 0 && bytes != sizeof(double)) b->copy[b->n_copy++] = (unsigned char)k;
    }
    /* the further outputs (sensors, flows, references) and what the
     * writer's thread computes them from */
    hymo_error oerr;
    if (ok && hymo_outputs_create(&b->outputs, sim->model, &oerr) != HYMO_OK) ok = 0;
    b->n_series = hymo_outputs_n_series(b->outputs);
    if (ok && b->n_series > HYMO_ROWS_SERIES_MAX) ok = 0;
    struct hymo_rows_derive *d = ok ? calloc(1, sizeof *d) : NULL;
    b->derive = d;
    if (!d) return 0;
    d->outputs = b->outputs;
    d->circ = sim->eval.circ;
    d->nz = sim->nz, d->np = sim->np, d->nu = sim->nu;
    d->n_pumps = sim->model->n_pumps;
    d->n_in = sim->eval.circ.pump_speed ? sim->n_in : 0;
    d->n_sw = sim->eval.circ.sw ? sim->nsw_source : 0;
    d->off_in = (size_t)d->nu * sizeof(double);
    d->off_sw = d->off_in + (size_t)d->n_in * sizeof(double);
    const size_t aux = d->off_sw + (size_t)d->n_sw;
    d->aux_bytes = (aux + sizeof(double) - 1) / sizeof(double) * sizeof(double); /* rows of aligned doubles */
    b->aux_bytes = b->n_series > 0 ? d->aux_bytes : 0;
    b->aux = malloc((size_t)capacity * (b->aux_bytes ? b->aux_bytes : 1));
    return b->aux != NULL;
}

/* The further outputs of n staged rows (hymo_ref_derive_fn), on the
 * writer's thread. */
static void rows_derive(void *ctx, int n, const unsigned char *const *sig, const unsigned char *aux,
                        double *const *series)
{
    struct hymo_rows_derive *d = ctx;
    static const double none[1] = {0.0}; /* a signal without columns (no joints, pressures or spools) */
#define SIG(i) (sig[i] ? (const double *)(const void *)sig[i] : none)
    const double *t = SIG(HYMO_SIG_TIME), *z = SIG(HYMO_SIG_Z), *zd = SIG(HYMO_SIG_ZD), *zdd = SIG(HYMO_SIG_ZDD);
    const double *p = SIG(HYMO_SIG_P), *u = SIG(HYMO_SIG_U);
#undef SIG
    const int ns = hymo_outputs_n_series(d->outputs);
    const hymo_ref_series *sr = hymo_outputs_series(d->outputs);
    hymo_circuit circ = d->circ;
    for (int r = 0; r < n; ++r) {
        const unsigned char *a = aux ? aux + (size_t)r * d->aux_bytes : NULL;
        double *row[HYMO_ROWS_SERIES_MAX];
        for (int k = 0; k < ns; ++k) row[k] = series[k] + (size_t)r * (size_t)sr[k].cols;
        if (d->n_in) {
            circ.pump_speed = (const double *)(const void *)(a + d->off_in);
            circ.fc_flow = circ.pump_speed + d->n_pumps;
        }
        if (d->n_sw) circ.sw = a + d->off_sw;
        const size_t R = (size_t)r;
        const size_t rz = d->nz ? R * (size_t)d->nz : 0;
        const hymo_output_state st = {t[R],
                                      z + rz,
                                      zd + rz,
                                      zdd + rz,
                                      d->np ? p + R * (size_t)d->np : p,
                                      d->nu ? u + R * (size_t)d->nu : u,
                                      d->nu ? (const double *)(const void *)a : none,
                                      &circ};
        hymo_outputs_eval(d->outputs, &st, row);
    }
}

double hymo_rows_row_bytes(const hymo_model *model)
{
    hymo_rows b;
    memset(&b, 0, sizeof b);
    b.nz = model->n_bodies, b.np = model->n_volumes, b.nu = model->n_valves;
    b.na = model->n_cylinders + model->n_motors + model->n_drivers, b.ncut = model->n_cuts;
    int counts[HYMO_COLS_COUNT];
    hymo_ref_counts_rows(&b, counts);
    double bytes = 0.0;
    for (int k = 0; k < HYMO_SIGNAL_COUNT; ++k)
        bytes += (double)counts[hymo_ref_signals[k].cols] * (double)hymo_ref_signal_elem_size(&hymo_ref_signals[k]);
    hymo_outputs *o = NULL;
    hymo_error err;
    if (hymo_outputs_create(&o, model, &err) == HYMO_OK) {
        const int ns = hymo_outputs_n_series(o);
        const hymo_ref_series *sr = hymo_outputs_series(o);
        for (int k = 0; k < ns; ++k) bytes += 8.0 * sr[k].cols;
    }
    hymo_outputs_free(o);
    return bytes;
}

void hymo_rows_push(hymo_rows *b, const hymo_sim *sim)
{
    /* Where each signal's row is in the simulation (row_bytes[k] bytes). */
    const void *const src[HYMO_SIGNAL_COUNT] = {
        [HYMO_SIG_TIME] = &sim->state.t,
        [HYMO_SIG_Z] = sim->mb.z,
        [HYMO_SIG_ZD] = sim->mb.zd,
        [HYMO_SIG_ZDD] = sim->mb.zdd,
        [HYMO_SIG_P] = sim->state.p,
        [HYMO_SIG_U] = sim->state.u,
        [HYMO_SIG_S] = sim->act.s,
        [HYMO_SIG_SD] = sim->act.sd,
        [HYMO_SIG_FORCE] = sim->eval.force,
        [HYMO_SIG_WORK] = sim->record.work,
        [HYMO_SIG_KINETIC] = &sim->record.kinetic,
        [HYMO_SIG_POTENTIAL] = &sim->record.potential,
        [HYMO_SIG_DRIFT] = &sim->record.drift,
        [HYMO_SIG_C_POS] = sim->record.c_pos,
        [HYMO_SIG_C_VEL] = sim->record.c_vel,
        [HYMO_SIG_C_ACC] = sim->record.c_acc,
        [HYMO_SIG_ITERATIONS] = &sim->stats.last_iterations,
        [HYMO_SIG_RESIDUAL] = &sim->stats.residual_norm,
    };
    const size_t i = (size_t)b->n++;
    const int n_scalar = b->n_scalar, n_copy = b->n_copy; /* locals: the copies cannot change them */
    int j = 0;
    for (; j < n_scalar; ++j) { /* one double per row: a single move, no call */
        const int k = b->copy[j];
        assert(src[k] && "hymo_rows_push: a signal of hymo_ref_signals[] has no source");
        memcpy(b->col[k] + i * sizeof(double), src[k], sizeof(double));
    }
    for (; j < n_copy; ++j) {
        const int k = b->copy[j];
        assert(src[k] && "hymo_rows_push: a signal of hymo_ref_signals[] has no source");
        memcpy(b->col[k] + i * b->row_bytes[k], src[k], b->row_bytes[k]);
    }
    if (b->aux_bytes) { /* what the further outputs depend on besides the signals */
        const struct hymo_rows_derive *d = b->derive;
        unsigned char *a = b->aux + i * b->aux_bytes;
        if (d->nu) memcpy(a, sim->inputs.uref_end, (size_t)d->nu * sizeof(double));
        if (d->n_in) memcpy(a + d->off_in, sim->inputs.in_end, (size_t)d->n_in * sizeof(double));
        if (d->n_sw) memcpy(a + d->off_sw, sim->switching.sw, (size_t)d->n_sw);
    }
}

hymo_status hymo_rows_flush(hymo_rows *b, hymo_ref_writer *w, hymo_error *err)
{
    if (b->n == 0 || !w) {
        b->n = 0;
        return HYMO_OK;
    }
    hymo_ref_block blk = {.n = (int)b->n};
    for (int k = 0; k < HYMO_SIGNAL_COUNT; ++k) {
        const hymo_ref_signal *sg = &hymo_ref_signals[k];
        hymo_ref_signal_block_set(sg, &blk, hymo_ref_signal_get(sg, b, sg->rows));
    }
    b->n = 0;
    return hymo_ref_writer_append_aux(w, &blk, b->aux_bytes ? b->aux : NULL, err);
}

typedef char name_t[HYMO_REF_TEXT_MAX];

hymo_status hymo_ref_open_for_model(const hymo_model *model, hymo_ref_header *hdr, const char *path,
                                    const hymo_ref_series *series, int n_series, hymo_ref_writer **writer,
                                    void **names_out, hymo_error *err)
{
    const int nz = model->n_bodies, np = model->n_volumes, nu = model->n_valves, na = model->n_cylinders + model->n_motors + model->n_drivers,
              nc = model->n_cuts; /* actuators: cylinders, then motors, then driven joints */
    name_t *names = calloc((size_t)(2 * nz + np + nu + na + nc + 1), sizeof *names);
    *names_out = names;
    if (!names) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    name_t *zn = names, *zu = zn + nz, *pn = zu + nz, *un = pn + np, *an = un + nu, *cn = an + na;
    for (int j = 0; j < nz; ++j) {
        snprintf(zn[j], sizeof zn[j], "%s", model->bodies[j].joint_name);
        snprintf(zu[j], sizeof zu[j], "%s", model->bodies[j].joint_type == HYMO_JOINT_REVOLUTE ? "rad" : "m");
    }
    for (int k = 0; k < model->n_nodes; ++k)
        if (model->nodes[k].kind == HYMO_NODE_VOLUME)
            snprintf(pn[model->nodes[k].state], sizeof pn[0], "%s", model->nodes[k].name);
    for (int v = 0; v < nu; ++v) snprintf(un[model->valves[v].state], sizeof un[0], "%s", model->valves[v].name);
    for (int a = 0; a < na; ++a)
        snprintf(an[a], sizeof an[a], "%s",
                 a < model->n_cylinders                     ? model->cylinders[a].name
                 : a < model->n_cylinders + model->n_motors ? model->motors[a - model->n_cylinders].name
                                                            : model->drivers[a - model->n_cylinders - model->n_motors].name);
    for (int c = 0; c < nc; ++c) snprintf(cn[c], sizeof cn[c], "%s", model->cuts[c].name);
    hymo_ref_dims dims = {nz, np, nu, na, nc, (const name_t *)zn, (const name_t *)zu, (const name_t *)pn,
                          (const name_t *)un, (const name_t *)an, (const name_t *)cn, n_series, series};
    hdr->model_name = model->name;
    hdr->model_source = model->source_text ? model->source_text : "";
    hdr->model_sha256 = model->sha256;
    hdr->model_physics_sha256 = model->physics_sha256;
    hdr->model_path = model->source_path;
    char *joined = NULL;
    if (model->n_overrides > 0) {
        size_t total = 1;
        for (int i = 0; i < model->n_overrides; ++i) total += strlen(model->overrides[i]) + 1;
        joined = malloc(total);
        if (!joined) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        joined[0] = '\0';
        for (int i = 0; i < model->n_overrides; ++i) {
            if (i) strcat(joined, "\n");
            strcat(joined, model->overrides[i]);
        }
        hdr->overrides = joined;
    }
    hymo_status st = hymo_ref_writer_open(writer, path, hdr, &dims, err);
    hdr->overrides = NULL;
    free(joined);
    return st;
}

/* The header of a monolithic run's file, from sim's options and tables. */
static hymo_ref_header run_header(const hymo_sim *sim)
{
    const hymo_run_options *opt = &sim->opt;
    return (hymo_ref_header){.formulation = sim->form.ops->name,
                             .integrator = sim->integrator->name,
                             .jacobian = hymo_engine_jacobian_name(sim),
                             .linear_solver = hymo_linsol_name(opt->linear_solver),
                             .dt = opt->dt,
                             .t_end = opt->t_end,
                             .tol_position = opt->tol_position,
                             .tol_pressure = opt->tol_pressure,
                             .tol_spool = opt->tol_spool,
                             .max_iter = opt->max_iter,
                             .penalty_alpha = sim->form.ops->penalty_factor(&sim->form, &sim->mb),
                             .output_every = opt->output_every};
}

/* Opens the writer for rows with hdr; its further outputs computed by the
 * writer's thread (rows_derive). */
static hymo_status open_rows_writer(const hymo_model *model, hymo_ref_header *hdr, hymo_rows *rows, const char *path,
                                    hymo_ref_writer **writer, void **names, hymo_error *err)
{
    hymo_status st = hymo_ref_open_for_model(model, hdr, path, hymo_outputs_series(rows->outputs), rows->n_series,
                                             writer, names, err);
    if (st == HYMO_OK && rows->n_series > 0)
        st = hymo_ref_writer_set_derive(*writer, rows_derive, rows->derive, rows->aux_bytes, err);
    return st;
}

/* ---- the file opened on a thread of its own while the run starts ---- */

struct hymo_rows_opener {
    const hymo_model *model;
    hymo_ref_header hdr;
    hymo_rows *rows;
    char *path;
    hymo_ref_writer *writer;
    void *names;
    hymo_status st;
    hymo_error err;
    int threaded;
    pthread_t thread;
};

static void *opener_main(void *arg)
{
    hymo_rows_opener *o = arg;
    o->st = open_rows_writer(o->model, &o->hdr, o->rows, o->path, &o->writer, &o->names, &o->err);
    return NULL;
}

hymo_status hymo_rows_open_start(const hymo_sim *sim, hymo_rows *rows, const char *path, hymo_rows_opener **out,
                                 hymo_error *err)
{
    *out = NULL;
    hymo_rows_opener *o = calloc(1, sizeof *o);
    char *p = malloc(strlen(path) + 1);
    if (!o || !p) {
        free(o), free(p);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory opening '%s'", path);
    }
    strcpy(p, path);
    o->model = sim->model, o->hdr = run_header(sim), o->rows = rows, o->path = p;
    o->threaded = pthread_create(&o->thread, NULL, opener_main, o) == 0;
    if (!o->threaded) opener_main(o); /* no thread: opened here */
    *out = o;
    return HYMO_OK;
}

hymo_status hymo_rows_open_wait(hymo_rows_opener *o, hymo_ref_writer **writer, void **names, hymo_error *err)
{
    if (o->threaded) {
        pthread_join(o->thread, NULL);
        if (o->writer) hymo_ref_writer_adopt(o->writer);
    }
    o->threaded = 0;
    *writer = o->writer, *names = o->names;
    o->writer = NULL, o->names = NULL;
    if (o->st != HYMO_OK && err) *err = o->err;
    return o->st;
}

void hymo_rows_open_free(hymo_rows_opener *o)
{
    if (!o) return;
    if (o->threaded) pthread_join(o->thread, NULL);
    if (o->writer) {
        hymo_ref_writer_adopt(o->writer);
        hymo_ref_writer_discard(o->writer);
    }
    free(o->names);
    free(o->path);
    free(o);
}
