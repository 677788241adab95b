/* Per-step output rows (the datasets of SPEC §8) buffered for the HDF5
 * writer; shared by the monolithic run and the co-simulation driver. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "rows.h"
#include "sensors.h" /* further outputs */

/* The buffers are those of hymo_ref_signals[] (reference/signals.c): one per
 * signal, at the signal's `rows` offset in hymo_rows. */

void hymo_rows_free(hymo_rows *b)
{
    for (int k = 0; k < HYMO_SIGNAL_COUNT; ++k) {
        free(hymo_ref_signal_get(&hymo_ref_signals[k], b, hymo_ref_signals[k].rows));
    }
    for (int k = 0; k < b->n_series; ++k) free(b->series[k]);
    hymo_outputs_free(b->outputs);
    b->outputs = NULL;
    b->n_series = 0;
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
    /* the further outputs (sensors, flows, references) */
    hymo_error oerr;
    if (ok && hymo_outputs_create(&b->outputs, sim->model, &oerr) != HYMO_OK) ok = 0;
    const int ns = hymo_outputs_n_series(b->outputs);
    const hymo_ref_series *sr = hymo_outputs_series(b->outputs);
    for (int k = 0; ok && k < ns && k < HYMO_ROWS_SERIES_MAX; ++k) {
        b->series_cols[k] = sr[k].cols;
        b->series[k] = calloc((size_t)capacity * (size_t)sr[k].cols, sizeof(double));
        b->n_series = k + 1;
        ok = b->series[k] != NULL;
    }
    return ok;
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
    if (b->series_on) {
        double *row[HYMO_ROWS_SERIES_MAX];
        for (int k = 0; k < b->n_series; ++k) row[k] = b->series[k] + i * (size_t)b->series_cols[k];
        const hymo_output_state st = {sim->state.t,  sim->mb.z, sim->mb.zd,    sim->mb.zdd,
                                      sim->state.p,  sim->state.u,    sim->inputs.uref_end, &sim->eval.circ};
        hymo_outputs_eval(b->outputs, &st, row);
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
    blk.series = (const double *const *)b->series;
    b->n = 0;
    return hymo_ref_writer_append(w, &blk, err);
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

hymo_status hymo_rows_open_writer(const hymo_sim *sim, hymo_rows *rows, const char *path, hymo_ref_writer **writer,
                                  void **names, hymo_error *err)
{
    const hymo_run_options *opt = &sim->opt;
    hymo_ref_header hdr = {.formulation = sim->form.ops->name,
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
    hymo_status st = hymo_ref_open_for_model(sim->model, &hdr, path, hymo_outputs_series(rows->outputs),
                                             rows->n_series, writer, names, err);
    rows->series_on = st == HYMO_OK;
    return st;
}
