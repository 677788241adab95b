/* Online verdict figures of a co-simulation (cosim_internal.h,
 * docs/cosimulation.md "Verdicts"): updated at every communication point
 * from that point's values alone, so that no row need be kept.
 *
 * - The largest pressure error max |p - p_ref| over the volumes, the
 *   reference linearly interpolated to the communication point (a cursor
 *   moves forward through the reference rows).
 * - Bursts of the energy balance: with D(t) the energy-balance error
 *   (minus the reference's, interpolated, when one is given) and W(t) the
 *   cumulative |actuator work|, the largest excess
 *   |D(t) - D(s)| - r (W(t) - W(s)) over s in [t - window, t]: the energy
 *   the balance gained or lost beyond the fraction r of the work done.  D and W are sampled into a ring of at most
 *   HYMO_WATCH_RING points per window (every `stride` communication points),
 *   so a step costs O(HYMO_WATCH_RING). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_internal.h"

int hymo_watch_init(hymo_watch *w, const hymo_reference *ref, int np, double H, double window, double r)
{
    memset(w, 0, sizeof *w);
    w->ref = ref && ref->n > 0 && ref->time ? ref : NULL;
    w->np = np;
    w->p_ref = w->ref && w->ref->np == np && np > 0 && w->ref->p;
    w->r = r;
    w->jump_excess = -HUGE_VAL;
    const double per = window / H; /* communication points per window */
    w->stride = per > HYMO_WATCH_RING ? (long)ceil(per / HYMO_WATCH_RING) : 1;
    w->cap = (int)ceil(per / (double)w->stride) + 1;
    if (w->cap < 2) w->cap = 2;
    w->t = calloc((size_t)w->cap * 7, sizeof(double));
    w->q = calloc((size_t)w->cap * 4, sizeof(long));
    if (!w->t || !w->q) {
        hymo_watch_free(w);
        return -1;
    }
    w->D = w->t + w->cap, w->W = w->D + w->cap, w->qv = w->W + w->cap;
    w->window = window;
    w->bounds = 1;
    return 0;
}

void hymo_watch_free(hymo_watch *w)
{
    free(w->t);
    free(w->q);
    w->t = w->D = w->W = w->qv = NULL;
    w->q = NULL;
}

/* Queue j's largest value among the ring's samples (sign +1; the
 * smallest for sign -1): a queue of sample numbers with decreasing
 * values; sample n enters with value v. */
static void queue_push(hymo_watch *w, int j, double sign, long n, double v)
{
    long *q = w->q + (size_t)j * (size_t)w->cap;
    double *qv = w->qv + (size_t)j * (size_t)w->cap;
    const long cap = w->cap;
    while (w->q_len[j] > 0 && q[w->q_head[j]] <= n - cap) /* overwritten in the ring */
        w->q_head[j] = (w->q_head[j] + 1) % cap, w->q_len[j]--;
    while (w->q_len[j] > 0 && sign * qv[(w->q_head[j] + w->q_len[j] - 1) % cap] <= sign * v) w->q_len[j]--;
    const long k = (w->q_head[j] + w->q_len[j]) % cap;
    q[k] = n, qv[k] = v;
    w->q_len[j]++;
}
static double queue_front(const hymo_watch *w, int j)
{
    return w->qv[(size_t)j * (size_t)w->cap + (size_t)w->q_head[j]];
}

/* Whether the scan of the ring for sample (D, W) can change neither jump
 * nor jump_excess: every sample of the window lies in the ring, so
 *   |D - D_k| <= max(|D - D_min|, |D - D_max|)   (rounding is monotone),
 *   |D - D_k| - r (W - W_k) = max(D - r W + (r W_k - D_k), -D - r W + (r W_k + D_k))
 * up to the rounding of a few operations, which the margin 1e-9 (|D| +
 * max |D_k| + r W) bounds many times over; the scan updates only on a
 * strictly larger value. */
static int scan_idle(const hymo_watch *w, double D, double W)
{
    if (!w->bounds || w->len == 0) return 0;
    const double dmax = queue_front(w, 0), dmin = queue_front(w, 1), amax = queue_front(w, 2),
                 bmax = queue_front(w, 3);
    const double b = fmax(fabs(D - dmin), fabs(D - dmax));
    if (!(b <= w->jump)) return 0;
    const double rW = w->r * W, margin = 1e-9 * (fabs(D) + fmax(fabs(dmax), fabs(dmin)) + rW);
    const double u = fmax(D - rW + amax, -D - rW + bmax) + margin;
    return u <= w->jump_excess;
}

/* The reference row bracket [i, i + 1] of t and the weight of row i + 1. */
static double bracket(hymo_watch *w, double t, long *i)
{
    const hymo_reference *r = w->ref;
    while (w->ref_i + 1 < r->n && r->time[w->ref_i + 1] <= t) w->ref_i++;
    *i = w->ref_i;
    if (w->ref_i + 1 >= r->n || !(r->time[w->ref_i] < t)) return 0.0;
    return (t - r->time[w->ref_i]) / (r->time[w->ref_i + 1] - r->time[w->ref_i]);
}

void hymo_watch_point(hymo_watch *w, double t, const double *p, double D, double W)
{
    if (w->ref) {
        const hymo_reference *r = w->ref;
        long i;
        const double a = bracket(w, t, &i);
        const long i1 = a > 0.0 ? i + 1 : i;
        if (t <= r->time[r->n - 1] + 1e-9 * (1.0 + fabs(t))) {
            if (r->drift) D -= (1.0 - a) * r->drift[i] + a * r->drift[i1];
            for (int k = 0; w->p_ref && k < w->np; ++k) {
                const double e = fabs(p[k] - ((1.0 - a) * r->p[i * w->np + k] + a * r->p[i1 * w->np + k]));
                if (e > w->p_err) w->p_err = e, w->p_err_t = t;
            }
        }
    }
    if (w->n_points++ % w->stride) return;
    if (!isfinite(D) || !isfinite(W)) w->bounds = 0;
    /* the new sample against every sample of the window */
    const int idle = scan_idle(w, D, W);
    w->n_scans += !idle;
    for (int j = idle ? w->len : 0, k = w->head; j < w->len; ++j) { /* newest first: k = head - 1 - j, wrapped */
        k = k == 0 ? w->cap - 1 : k - 1;
        if (t - w->t[k] > w->window * (1.0 + 1e-12)) break;
        const double dD = fabs(D - w->D[k]), excess = dD - w->r * (W - w->W[k]);
        if (dD > w->jump) w->jump = dD;
        if (excess > w->jump_excess) w->jump_excess = excess, w->jump_t0 = w->t[k], w->jump_t1 = t, w->jump_at = dD;
    }
    if (w->bounds) {
        const double rW = w->r * W;
        queue_push(w, 0, 1.0, w->n_samples, D);
        queue_push(w, 1, -1.0, w->n_samples, D);
        queue_push(w, 2, 1.0, w->n_samples, rW - D);
        queue_push(w, 3, 1.0, w->n_samples, rW + D);
    }
    w->n_samples++;
    w->t[w->head] = t, w->D[w->head] = D, w->W[w->head] = W;
    w->head = (w->head + 1) % w->cap;
    if (w->len < w->cap) w->len++;
}
