#define _POSIX_C_SOURCE 200809L
/* The run driver that streams an HDF5 reference (hymo_run), with its
 * error-estimate companion and progress line. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "rows.h"

/* ---- per-step rows buffered in blocks for the HDF5 writer ---- */

#define BLOCK_ROWS 1024

/* The error-estimate companion of a run that writes a file: its
 * simulation (NULL if none) and the running maxima of the differences;
 * for a method of known order, a second companion at twice its step
 * (check), whose differences from the first give the order observed, and
 * a third at twice the check's (check2), whose differences give the order
 * one level coarser.  All step on a thread of their own, concurrently
 * with the main run: the main run hands its state (z, p, s) at each
 * companion step through a ring of SNAP_SLOTS snapshots (allocated before
 * the first step); the compiled model they share is read-only during
 * steps. */
#define SNAP_SLOTS 256
#define SNAP_BATCH 32 /* the companions' thread is woken when this many wait (or at the end) */
_Static_assert(SNAP_BATCH >= 1 && SNAP_BATCH <= SNAP_SLOTS, "a full ring must wake the companions' thread");
typedef struct {
    hymo_sim *sim;
    int ratio;
    double factor;
    const char *method;
    int order;               /* the order the factor assumes (0: no order check) */
    double tol_ratio;        /* the run's rtol over the companion's (ida) */
    double d[3];             /* max |main - companion|: z, p, s */
    double scale[3];         /* max |main|: z, p, s */
    hymo_sim *check;         /* the order-check companion (NULL: none, or it failed) */
    double dc[3];            /* max |companion - check| */
    double d4[3];            /* max |main - companion| on the check's grid (for the order) */
    hymo_sim *check2;        /* the coarser order-check companion at 8 dt (NULL: none, or it failed) */
    double dc2[3];           /* max |check - check2| */
    double dc8[3];           /* max |companion - check| on check2's grid (for the coarser order) */
    double wall;             /* the main run's time handing over snapshots */
    long n_main; /* the main run's steps: the last one ends at t_end, as the companion's last */
    char why[HYMO_REF_TEXT_MAX * 2];       /* the companion's failure, one line ("" if none) */
    char check_why[HYMO_REF_TEXT_MAX * 2]; /* the order-check companion's failure ("" if none) */
    int check2_failed;                     /* the 8 dt companion failed (its creation or a step) */
    /* the companions' thread and the snapshot ring (head: handed over, tail: taken) */
    int nz, np, na;
    double *snap;          /* SNAP_SLOTS x (nz + np + na); NULL: the companions step on the main thread */
    long snap_k[SNAP_SLOTS];
    long head, tail;
    int end;               /* the main run hands over no more */
    int gone;              /* the companion failed: its thread has stopped */
    int taker_waits;       /* the companions' thread waits for snapshots */
    int giver_waits;       /* the main run waits for a free slot */
    int threaded;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} companion;

/* A companion failed: its message, one line, after a prefix. */
static void failure_line(char *out, size_t size, const char *prefix, const hymo_error *err)
{
    int n = snprintf(out, size, "%s", prefix);
    size_t k = n > 0 ? (size_t)n : 0; /* a longer message is cut */
    if (k >= size) k = size - 1;
    const char *q = err->message;
    for (; *q && k + 1 < size; ++q) out[k++] = *q == '\n' || *q == '\r' ? ' ' : *q;
    out[k] = '\0';
    if (*q && k >= 3) memcpy(out + k - 3, "...", 3);
}

/* The companion failed: no estimate, and why (its message, one line). */
static void companion_failed(companion *c, const hymo_error *err)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "the companion run (%.64s) failed: ", c->method ? c->method : "?");
    failure_line(c->why, sizeof c->why, prefix, err);
}

static double max_abs_diff(int n, const double *a, const double *b, double m)
{
    for (int i = 0; i < n; ++i) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

static double max_abs(int n, const double *a, double m)
{
    for (int i = 0; i < n; ++i) m = fmax(m, fabs(a[i]));
    return m;
}

/* After main step k (1-based; a companion step's k), with the main run's
 * state z, p, s: the companions' step(s) and the differences on the common
 * grids; a companion failure ends the estimate, not the run (the
 * order-check companion's ends the check). */
static void companion_advance(companion *c, const double *z, const double *p, const double *s, long k)
{
    hymo_error err;
    if (hymo_sim_step(c->sim, &err) != HYMO_OK) {
        companion_failed(c, &err);
        hymo_sim_free(c->sim);
        c->sim = NULL;
        return;
    }
    const hymo_sim *co = c->sim;
    c->d[0] = max_abs_diff(c->nz, z, co->mb.z, c->d[0]);
    c->d[1] = max_abs_diff(c->np, p, co->state.p, c->d[1]);
    c->d[2] = max_abs_diff(c->na, s, co->act.s, c->d[2]);
    c->scale[0] = max_abs(c->nz, z, c->scale[0]);
    c->scale[1] = max_abs(c->np, p, c->scale[1]);
    c->scale[2] = max_abs(c->na, s, c->scale[2]);
    if (c->check && (k % (2 * c->ratio) == 0 || k == c->n_main)) {
        if (hymo_sim_step(c->check, &err) != HYMO_OK) {
            failure_line(c->check_why, sizeof c->check_why, "the order-check companion (4 dt) failed: ", &err);
            hymo_sim_free(c->check);
            c->check = NULL;
        } else {
            c->d4[0] = max_abs_diff(c->nz, z, co->mb.z, c->d4[0]);
            c->d4[1] = max_abs_diff(c->np, p, co->state.p, c->d4[1]);
            c->d4[2] = max_abs_diff(c->na, s, co->act.s, c->d4[2]);
            c->dc[0] = max_abs_diff(c->nz, co->mb.z, c->check->mb.z, c->dc[0]);
            c->dc[1] = max_abs_diff(c->np, co->state.p, c->check->state.p, c->dc[1]);
            c->dc[2] = max_abs_diff(c->na, co->act.s, c->check->act.s, c->dc[2]);
        }
    }
    if (c->check && c->check2 && (k % (4 * c->ratio) == 0 || k == c->n_main)) {
        if (hymo_sim_step(c->check2, &err) != HYMO_OK) {
            c->check2_failed = 1;
            hymo_sim_free(c->check2);
            c->check2 = NULL;
        } else {
            const hymo_sim *ck = c->check, *c2 = c->check2;
            c->dc8[0] = max_abs_diff(c->nz, co->mb.z, ck->mb.z, c->dc8[0]);
            c->dc8[1] = max_abs_diff(c->np, co->state.p, ck->state.p, c->dc8[1]);
            c->dc8[2] = max_abs_diff(c->na, co->act.s, ck->act.s, c->dc8[2]);
            c->dc2[0] = max_abs_diff(c->nz, ck->mb.z, c2->mb.z, c->dc2[0]);
            c->dc2[1] = max_abs_diff(c->np, ck->state.p, c2->state.p, c->dc2[1]);
            c->dc2[2] = max_abs_diff(c->na, ck->act.s, c2->act.s, c->dc2[2]);
        }
    }
}

/* The companions' thread: takes the snapshots in order until the main run
 * ends or the companion fails. */
static void *companion_thread(void *arg)
{
    companion *c = arg;
    const size_t w = (size_t)c->nz + (size_t)c->np + (size_t)c->na;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        while (c->tail == c->head && !c->end) {
            c->taker_waits = 1;
            pthread_cond_wait(&c->cond, &c->lock);
            c->taker_waits = 0;
        }
        if (c->tail == c->head) { /* ended, all taken */
            pthread_mutex_unlock(&c->lock);
            break;
        }
        const long slot = c->tail % SNAP_SLOTS, k = c->snap_k[slot];
        pthread_mutex_unlock(&c->lock);
        const double *z = c->snap + (size_t)slot * w;
        companion_advance(c, z, z + c->nz, z + c->nz + c->np, k);
        pthread_mutex_lock(&c->lock);
        c->tail++;
        if (!c->sim) c->gone = 1;
        if (c->giver_waits || c->gone) pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->lock);
        if (!c->sim) break;
    }
    return NULL;
}

static void companion_start(companion *c, const hymo_sim *sim, long n_steps)
{
    memset(c, 0, sizeof *c);
    const hymo_run_options *opt = &sim->opt;
    if (!opt->error_estimate) {
        snprintf(c->why, sizeof c->why, "not asked for (error_estimate = 0)");
        return;
    }
    if (!sim->integrator->companion) {
        snprintf(c->why, sizeof c->why, "the %s integrator has no error estimate", sim->integrator->name);
        return;
    }
    hymo_run_options co;
    sim->integrator->companion(opt, &co, &c->ratio, &c->factor, &c->method, &c->order);
    c->tol_ratio = opt->rtol / co.rtol;
    hymo_error err;
    c->n_main = n_steps;
    c->nz = sim->nz, c->np = sim->np, c->na = sim->na;
    if (hymo_sim_create(sim->model, &co, &c->sim, &err) != HYMO_OK) {
        c->sim = NULL;
        companion_failed(c, &err);
        return;
    }
    if (c->order > 0) {
        hymo_run_options ch = co;
        ch.dt = 2.0 * co.dt;
        if (hymo_sim_create(sim->model, &ch, &c->check, &err) != HYMO_OK) {
            c->check = NULL;
            failure_line(c->check_why, sizeof c->check_why, "the order-check companion (4 dt) failed: ", &err);
        }
        ch.dt = 4.0 * co.dt;
        if (c->check && hymo_sim_create(sim->model, &ch, &c->check2, &err) != HYMO_OK) {
            c->check2 = NULL;
            c->check2_failed = 1;
        }
    }
    /* the thread; without it (no memory, no thread) the companions step on the main thread */
    const size_t w = (size_t)c->nz + (size_t)c->np + (size_t)c->na;
    c->snap = malloc(SNAP_SLOTS * (w ? w : 1) * sizeof(double));
    if (!c->snap) return;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    if (pthread_create(&c->thread, NULL, companion_thread, c) != 0) {
        pthread_cond_destroy(&c->cond);
        pthread_mutex_destroy(&c->lock);
        free(c->snap);
        c->snap = NULL;
        return;
    }
    c->threaded = 1;
}

/* After main step k (1-based): on the companions' grid, the main run's
 * state to the companions (a snapshot to their thread, waiting while the
 * ring is full), or their step on this thread. */
static void companion_step(companion *c, const hymo_sim *sim, long k)
{
    if (!c->ratio || (k % c->ratio != 0 && k != c->n_main)) return;
    double t0 = hymo_now_seconds();
    if (!c->threaded) {
        if (c->sim) companion_advance(c, sim->mb.z, sim->state.p, sim->act.s, k);
        c->wall += hymo_now_seconds() - t0;
        return;
    }
    pthread_mutex_lock(&c->lock);
    while (c->head - c->tail == SNAP_SLOTS && !c->gone) {
        c->giver_waits = 1;
        pthread_cond_wait(&c->cond, &c->lock);
        c->giver_waits = 0;
    }
    if (!c->gone) {
        const long slot = c->head % SNAP_SLOTS;
        double *z = c->snap + (size_t)slot * ((size_t)c->nz + (size_t)c->np + (size_t)c->na);
        if (c->nz) memcpy(z, sim->mb.z, (size_t)c->nz * sizeof(double));
        if (c->np) memcpy(z + c->nz, sim->state.p, (size_t)c->np * sizeof(double));
        if (c->na) memcpy(z + c->nz + c->np, sim->act.s, (size_t)c->na * sizeof(double));
        c->snap_k[slot] = k;
        c->head++;
        if (c->taker_waits && c->head - c->tail >= SNAP_BATCH) pthread_cond_broadcast(&c->cond);
    }
    pthread_mutex_unlock(&c->lock);
    c->wall += hymo_now_seconds() - t0;
}

/* The main run ended: the companions' thread takes what is left and stops. */
static void companion_finish(companion *c)
{
    if (!c->threaded) return;
    pthread_mutex_lock(&c->lock);
    c->end = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->lock);
    free(c->snap);
    c->snap = NULL;
    c->threaded = 0;
}

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

/* The order a run's differences from its two companions show, both on
 * the check's grid: log2(max |x_2dt - x_4dt| / max |x_dt - x_2dt|), NaN where the difference is at
 * round-off (below HYMO_ORDER_FLOOR of the largest |x|). */
#define HYMO_ORDER_FLOOR 1e-11
static double observed_order(double d, double dc, double scale)
{
    if (!(d > HYMO_ORDER_FLOOR * fmax(scale, 1e-300)) || !(dc > 0.0)) return NAN;
    return log2(dc / d);
}

/* The estimate's check into the summary: the order observed against the
 * method's (trapezoidal; reliable inside [HYMO_ORDER_LOW, HYMO_ORDER_HIGH]
 * for order 2: the Richardson factor 1/3 is within a factor 3 of
 * 1/(2^p - 1) for p in [1, 3.3]; the lower end has a margin, since an
 * order below 2 makes the estimate too small), or the companion's
 * tolerances against the run's (ida: reliable when at least 10x tighter).
 * That range holds where the error is one power of dt.  The order one
 * level coarser (2, 4 and 8 dt) tells whether it is: where it is below
 * HYMO_COARSE_LOW (the coarse companions' differences grow less than the
 * step: their errors saturate, or terms of other orders cancel them), or
 * the 8 dt companion failed, an observed order inside the range can be a
 * coincidence of two terms, and the order must then be within
 * HYMO_ORDER_NEAR of the method's.  Measured (estimate / true error):
 * the spatial RUSP loop, penalty, 1 ms, order 2.92 / 3.03, one level
 * coarser -0.87 / 0.88, 5.7x / 5.6x (unreliable); the RUSR loop,
 * double-step, 1 ms, 1.91, coarser -0.61, 1.01x, and valves_line, 2.13,
 * coarser -2.11, 0.67x (reliable); pump_signal_line, 2.73, coarser 1.29,
 * 1.65x (reliable). */
#define HYMO_ORDER_LOW 1.3
#define HYMO_ORDER_HIGH 3.3
#define HYMO_COARSE_LOW 1.0
#define HYMO_ORDER_NEAR 0.5
static void companion_check(const companion *c, hymo_run_summary *sum)
{
    char *out = sum->accuracy_check;
    const size_t size = sizeof sum->accuracy_check;
    for (int q = 0; q < 3; ++q) sum->accuracy_observed_order[q] = NAN;
    if (c->order <= 0) {
        sum->accuracy_reliable = c->tol_ratio >= 10.0 ? 1 : 0;
        snprintf(out, size, "companion rtol %.3g x tighter than the run's%s", c->tol_ratio,
                 sum->accuracy_reliable ? "" : " (at least 10 x needed: the companion's own error is not negligible)");
        return;
    }
    if (c->check_why[0]) {
        sum->accuracy_reliable = 0;
        snprintf(out, size, "%s", c->check_why); /* "the order-check companion ... failed: ..." */
        return;
    }
    static const char *const name[3] = {"z", "p", "s"};
    int bad = 0, seen = 0, coarse_bad = c->check2_failed, off = 0;
    double p1[3];
    char orders[160] = "", coarse[160] = "";
    size_t k = 0, k2 = 0;
    for (int q = 0; q < 3; ++q) {
        const double p = observed_order(c->d4[q], c->dc[q], c->scale[q]);
        p1[q] = p;
        sum->accuracy_observed_order[q] = p;
        if (isnan(p)) continue;
        seen++;
        bad += !(p >= HYMO_ORDER_LOW && p <= HYMO_ORDER_HIGH);
        off += !(fabs(p - (double)c->order) <= HYMO_ORDER_NEAR);
        int n = snprintf(orders + k, sizeof orders - k, "%s%s %.2f", k ? ", " : "", name[q], p);
        if (n > 0 && (size_t)n < sizeof orders - k) k += (size_t)n;
    }
    for (int q = 0; q < 3 && !c->check2_failed; ++q) {
        const double p2 = observed_order(c->dc8[q], c->dc2[q], c->scale[q]);
        if (isnan(p2) || isnan(p1[q])) continue;
        coarse_bad += !(p2 >= HYMO_COARSE_LOW);
        int n = snprintf(coarse + k2, sizeof coarse - k2, "%s%s %.2f", k2 ? ", " : "", name[q], p2);
        if (n > 0 && (size_t)n < sizeof coarse - k2) k2 += (size_t)n;
    }
    const int near_needed = coarse_bad && off;
    sum->accuracy_reliable = bad || near_needed ? 0 : 1;
    if (!seen) {
        snprintf(out, size, "differences at round-off: order not observed");
        return;
    }
    int n = snprintf(out, size, "observed order %s (the estimate assumes %d; reliable for %.1f to %.1f)", orders,
                     c->order, HYMO_ORDER_LOW, HYMO_ORDER_HIGH);
    if (n < 0 || (size_t)n >= size) return;
    const char *why = c->check2_failed ? "; the 8 dt companion failed" : "";
    if (c->check2_failed || k2) {
        int m = snprintf(out + n, size - (size_t)n, "%s%s%s", why, k2 ? "; at 2/4/8 dt " : "", coarse);
        if (coarse_bad && m >= 0 && (size_t)(n + m) < size)
            snprintf(out + n + m, size - (size_t)(n + m),
                     ": the coarse steps are outside the method's order, %s %.1f of %d%s",
                     near_needed ? "so within" : "this one within", HYMO_ORDER_NEAR, c->order,
                     near_needed ? " needed" : "");
    }
}

/* The estimate into the summary of a complete run (the companions freed
 * by the caller), or why there is none. */
static void companion_estimate(const companion *c, hymo_run_summary *sum)
{
    sum->accuracy_missing_reason[0] = '\0';
    if (!sum->complete) {
        if (c->sim || c->why[0]) /* an estimate was asked for */
            snprintf(sum->accuracy_missing_reason, sizeof sum->accuracy_missing_reason,
                     "the run stopped before t_end (an incomplete run has no estimate)");
        return;
    }
    if (!c->sim) {
        snprintf(sum->accuracy_missing_reason, sizeof sum->accuracy_missing_reason, "%s", c->why);
        return;
    }
    sum->has_accuracy = 1;
    snprintf(sum->accuracy_method, sizeof sum->accuracy_method, "%s", c->method);
    sum->z_max_error = c->factor * c->d[0];
    sum->p_max_error = c->factor * c->d[1];
    sum->s_max_error = c->factor * c->d[2];
    companion_check(c, sum);
}

/* The progress line of a long run (opt->progress): after 2 s, at most
 * twice a second, rewritten in place on a terminal; into a file or pipe,
 * one whole line per update, at most every 5 s. */
typedef struct {
    double start, last;
    int printed, tty;
} progress;

static void progress_line(progress *p, const hymo_sim *sim, long n_steps, long k)
{
    const double now = hymo_now_seconds(), el = now - p->start;
    if (el < 2.0 || now - p->last < (p->tty ? 0.5 : 5.0)) return;
    p->last = now;
    p->printed = p->tty;
    const double frac = (double)k / (double)n_steps;
    fprintf(stderr, "%shymo: t = %.6g of %g s (%3.0f %%), %.1f s elapsed, about %.0f s left%s", p->tty ? "\r" : "",
            sim->state.t, sim->opt.t_end, 100.0 * frac, el, el * (1.0 - frac) / frac, p->tty ? "   " : "\n");
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
    hymo_rows_opener *opener = NULL; /* the file, opened while the run starts */
    void *names = NULL;
    companion comp = {0};
    if (out_path && !hymo_rows_alloc(&rows, sim, BLOCK_ROWS)) {
        hymo_rows_free(&rows);
        hymo_sim_free(sim);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (output buffer)");
    }
    long n_steps = hymo_run_steps(opt);
    if (out_path) {
        st = hymo_rows_open_start(sim, &rows, out_path, &opener, err);
        if (st != HYMO_OK) goto done;
        companion_start(&comp, sim, n_steps);
    }
    if (out_path) hymo_rows_push(&rows, sim);
    int open_failed = 0;
    double t0 = hymo_now_seconds();
    progress prog = {t0, 0.0, 0, isatty(STDERR_FILENO)};
    for (long k = 0; k < n_steps; ++k) {
        st = hymo_sim_step(sim, err);
        if (st != HYMO_OK) break;
        if (out_path && ((k + 1) % opt->output_every == 0 || k + 1 == n_steps)) hymo_rows_push(&rows, sim);
        companion_step(&comp, sim, k + 1);
        if (opt->progress && (k & 1023) == 1023) progress_line(&prog, sim, n_steps, k + 1);
        if (rows.n == BLOCK_ROWS) {
            double tw = hymo_now_seconds();
            if (opener && !writer && (st = hymo_rows_open_wait(opener, &writer, &names, err)) != HYMO_OK) {
                open_failed = 1;
                break;
            }
            st = hymo_rows_flush(&rows, writer, err);
            t0 += hymo_now_seconds() - tw; /* integration time excludes file output */
            if (st != HYMO_OK) break;
        }
    }
    sim->stats.wall_time = hymo_now_seconds() - t0 - comp.wall; /* and the error-estimate companion */
    companion_finish(&comp);
    if (opener && !writer && !open_failed) { /* a run shorter than one block, or one that failed first */
        hymo_error open_err;
        if (hymo_rows_open_wait(opener, &writer, &names, &open_err) != HYMO_OK) {
            *err = open_err, st = open_err.code, open_failed = 1;
        }
    }
    if (prog.printed) fputc('\n', stderr);
    if (open_failed) goto done; /* no file: as if the run had not started */
    hymo_status run_status = st;
    hymo_error flush_err;
    if ((hymo_rows_flush(&rows, writer, &flush_err) != HYMO_OK ||
         (writer && hymo_ref_writer_end_rows(writer, &flush_err) != HYMO_OK)) &&
        run_status == HYMO_OK) {
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
    companion_finish(&comp);
    hymo_rows_open_free(opener);
    if (writer) hymo_ref_writer_discard(writer);
    hymo_sim_free(comp.sim);
    hymo_sim_free(comp.check);
    hymo_sim_free(comp.check2);
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
