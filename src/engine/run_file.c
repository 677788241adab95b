/* The run driver that streams an HDF5 reference (hymo_run), with its
 * error-estimate companion and progress line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "rows.h"

/* ---- per-step rows buffered in blocks for the HDF5 writer ---- */

#define BLOCK_ROWS 1024

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
    char why[HYMO_REF_TEXT_MAX * 2]; /* the companion's failure, one line ("" if none) */
} companion;

/* The companion failed: no estimate, and why (its message, one line). */
static void companion_failed(companion *c, const hymo_error *err)
{
    int n = snprintf(c->why, sizeof c->why, "the companion run (%.64s) failed: ", c->method ? c->method : "?");
    size_t k = n > 0 ? (size_t)n : 0; /* a longer message is cut */
    const char *q = err->message;
    for (; *q && k + 1 < sizeof c->why; ++q) c->why[k++] = *q == '\n' || *q == '\r' ? ' ' : *q;
    c->why[k] = '\0';
    if (*q && k >= 3) memcpy(c->why + k - 3, "...", 3);
}

static void companion_start(companion *c, const hymo_sim *sim, long n_steps)
{
    memset(c, 0, sizeof *c);
    const hymo_run_options *opt = &sim->opt;
    if (!opt->error_estimate || !sim->integrator->companion) return;
    hymo_run_options co;
    sim->integrator->companion(opt, &co, &c->ratio, &c->factor, &c->method);
    hymo_error err;
    c->n_main = n_steps;
    if (hymo_sim_create(sim->model, &co, &c->sim, &err) != HYMO_OK) {
        c->sim = NULL;
        companion_failed(c, &err);
    }
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
        companion_failed(c, &err);
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
    sum->accuracy_missing_reason[0] = '\0';
    if (!sum->complete) return;
    if (!c->sim) {
        snprintf(sum->accuracy_missing_reason, sizeof sum->accuracy_missing_reason, "%s", c->why);
        return;
    }
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
    memset(&rows, 0, sizeof rows); /* no output buffer without a file */
    hymo_ref_writer *writer = NULL;
    void *names = NULL;
    companion comp = {0};
    if (out_path && !hymo_rows_alloc(&rows, sim, BLOCK_ROWS)) {
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
    if (out_path) hymo_rows_push(&rows, sim);
    double t0 = hymo_now_seconds();
    progress prog = {t0, 0.0, 0};
    for (long k = 0; k < n_steps; ++k) {
        st = hymo_sim_step(sim, err);
        if (st != HYMO_OK) break;
        if (out_path && ((k + 1) % opt->output_every == 0 || k + 1 == n_steps)) hymo_rows_push(&rows, sim);
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

/* Steps of the timing probe of hymo_run_estimate, and its wall-time cap. */
#define PROBE_STEPS 50
#define PROBE_SECONDS 0.5

hymo_status hymo_run_estimate(const hymo_model *model, const hymo_run_options *opt, int with_file, int with_time,
                              double *bytes, double *seconds, hymo_error *err)
{
    hymo_status st = hymo_run_options_check(opt, err);
    if (st != HYMO_OK) return st;
    const long n_steps = hymo_run_steps(opt);
    const double rows = (double)(n_steps / opt->output_every) + 2.0; /* the first and the last */
    /* the rows, the model's text, the names and attributes (64 KiB) */
    const double text = model->source_text ? (double)strlen(model->source_text) : 0.0;
    if (bytes) *bytes = with_file ? rows * hymo_rows_row_bytes(model) + text + 65536.0 : 0.0;
    if (!seconds) return HYMO_OK;
    *seconds = -1.0;
    if (!with_time) return HYMO_OK;
    /* the time: a few steps of a probe run with the same options */
    hymo_run_options po = *opt;
    po.progress = 0;
    hymo_sim *sim = NULL;
    hymo_error perr;
    if (hymo_sim_create(model, &po, &sim, &perr) != HYMO_OK) return HYMO_OK; /* not estimated */
    const double t0 = hymo_now_seconds();
    long k = 0;
    for (; k < PROBE_STEPS && k < n_steps; ++k) {
        if (hymo_sim_step(sim, &perr) != HYMO_OK || hymo_now_seconds() - t0 > PROBE_SECONDS) {
            ++k;
            break;
        }
    }
    const double el = hymo_now_seconds() - t0;
    hymo_sim_free(sim);
    if (k > 0) *seconds = el / (double)k * (double)n_steps;
    return HYMO_OK;
}
