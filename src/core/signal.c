/* hymo — input signals: piecewise-linear tables (hymo_signal_eval) and
 * shaped signals (docs/model-format.md, "signals"): periodic
 * repetition, first-order filter, dead zone and clamp of a piecewise-linear
 * table, with the time derivatives that a prescribed joint motion needs.
 *
 * The filter y' = (x - y)/tau of a piecewise-linear x has a closed form on
 * each segment x = a + b s (s = time since the segment start, y_0 at s = 0):
 *   y(s) = y_0 e + a (1 - e) + b (s - tau (1 - e)),   e = exp(-s/tau),
 * so no state is integrated.  By linearity y = W(t) + y_s e^{-(t - t_s)/tau},
 * with W the zero-state response from the start t_s of the current period
 * (precomputed at the table points, hymo_signal_shape_prepare) and y_s the
 * output at t_s.  Before the first point y = x (the filter is at rest), so
 * y_s = v_0 in the first period; period k starts at
 *   y_s(k) = y_inf + (v_0 - y_inf) rho^k,  rho = e^{-T/tau},  y_inf = W(T)/(1 - rho)
 * (the geometric sum of the period map y -> rho y + W(T)). */
#include <math.h>
#include <stdlib.h>

#include "hymo/model.h"
#include "signal_shape.h"

/* Zero-state filter response propagated over s along x = a + b s. */
static double lag_step(double y0, double a, double b, double s, double tau)
{
    const double om = -expm1(-s / tau); /* 1 - e, accurate for small s/tau */
    return y0 * (1.0 - om) + a * om + b * (s - tau * om);
}

hymo_status hymo_signal_shape_prepare(hymo_signal *s, hymo_error *err)
{
    hymo_signal_shape *sh = s->shape;
    if (!sh || !(sh->filter_tau > 0.0)) return HYMO_OK;
    const int n = s->n_points;
    sh->w = calloc((size_t)n, sizeof *sh->w);
    if (!sh->w) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (signal filter)");
    const double tau = sh->filter_tau;
    for (int i = 1; i < n; ++i) {
        const double h = s->t[i] - s->t[i - 1];
        sh->w[i] = h > 0.0 ? lag_step(sh->w[i - 1], s->v[i - 1], (s->v[i] - s->v[i - 1]) / h, h, tau) : sh->w[i - 1];
    }
    sh->w_end = sh->w[n - 1];
    sh->rho = 0.0;
    if (sh->period > 0.0) {
        const double tail = s->t[0] + sh->period - s->t[n - 1];
        if (tail > 0.0) sh->w_end = lag_step(sh->w[n - 1], s->v[n - 1], 0.0, tail, tau);
        sh->rho = exp(-sh->period / tau);
    }
    return HYMO_OK;
}

void hymo_signal_shape_free(hymo_signal_shape *sh)
{
    if (!sh) return;
    free(sh->w);
    free(sh);
}

/* The table at time t (inside or outside [t_0, t_n-1]): value and slope on
 * `side`, and the segment's start index (-1 before the first point, n-1
 * after the last); t within 1e-6 dt of a breakpoint is the breakpoint. */
static double table_eval(const hymo_signal *s, double t, int side, double dt, double *slope, int *seg)
{
    const int n = s->n_points;
    const double *ts = s->t, *vs = s->v;
    if (dt > 0.0) { /* snap to the nearest breakpoint */
        int lo = 0, hi = n - 1;
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (ts[mid] <= t) lo = mid;
            else hi = mid;
        }
        for (int i = lo; i <= hi && i < n; ++i)
            if (fabs(ts[i] - t) <= 1e-6 * dt) {
                t = ts[i];
                break;
            }
    }
    int i; /* segment [i, i+1] */
    if (side >= 0) { /* last i with ts[i] <= t */
        int lo = 0, hi = n;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (ts[mid] <= t) lo = mid + 1;
            else hi = mid;
        }
        i = lo - 1;
    } else { /* first j with ts[j] >= t; the segment before it */
        int lo = 0, hi = n;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (ts[mid] < t) lo = mid + 1;
            else hi = mid;
        }
        i = lo - 1;
        if (lo >= n) i = n - 1;
    }
    *seg = i;
    if (i < 0) {
        *slope = 0.0;
        return vs[0];
    }
    if (i >= n - 1) {
        *slope = 0.0;
        return vs[n - 1];
    }
    const double h = ts[i + 1] - ts[i];
    *slope = (vs[i + 1] - vs[i]) / h;
    return vs[i] + (t - ts[i]) / h * (vs[i + 1] - vs[i]);
}

static double eval_stages(const hymo_signal *s, double t, int side, double dt, double d[2], int limits);

double hymo_signal_eval_d(const hymo_signal *s, double t, int side, double dt, double d[2])
{
    return eval_stages(s, t, side, dt, d, 1);
}

double hymo_signal_eval_unlimited(const hymo_signal *s, double t, int side, double dt)
{
    return eval_stages(s, t, side, dt, NULL, 0);
}

/* Dead zone [lo, hi] maps x to x - hi above hi, x - lo below
 * lo; its output meets a clamp bound c != 0 at x = c + hi (c > 0) or
 * x = c + lo (c < 0); c = 0 is met on the whole dead band, whose edges are
 * already levels.  Without a dead zone (or with lo = hi, a shift) the
 * clamp bounds (shifted) are the levels; a clamp with min = max is a
 * constant, without kinks. */
int hymo_signal_kink_levels(const hymo_signal *s, double level[4])
{
    const hymo_signal_shape *sh = s ? s->shape : NULL;
    int n = 0;
    if (!sh) return 0;
    double cand[4];
    int nc = 0;
    if (sh->has_dead_zone && sh->dead_lo < sh->dead_hi) cand[nc++] = sh->dead_lo, cand[nc++] = sh->dead_hi;
    if (sh->has_clamp && sh->clamp_lo < sh->clamp_hi) {
        const double b[2] = {sh->clamp_lo, sh->clamp_hi};
        for (int k = 0; k < 2; ++k) {
            if (!sh->has_dead_zone) cand[nc++] = b[k];
            else if (!(sh->dead_lo < sh->dead_hi)) cand[nc++] = b[k] + sh->dead_hi; /* a shift only */
            else if (b[k] > 0.0) cand[nc++] = b[k] + sh->dead_hi;
            else if (b[k] < 0.0) cand[nc++] = b[k] + sh->dead_lo;
        }
    }
    for (int k = 0; k < nc; ++k) {
        int dup = 0;
        for (int j = 0; j < n; ++j) dup |= level[j] == cand[k];
        if (!dup) level[n++] = cand[k];
    }
    return n;
}

static double eval_stages(const hymo_signal *s, double t, int side, double dt, double d[2], int limits)
{
    double dd[2] = {0.0, 0.0};
    if (!d) d = dd;
    d[0] = d[1] = 0.0;
    if (!s || s->n_points <= 0) return 0.0;
    const hymo_signal_shape *sh = s->shape;
    const double t0 = s->t[0];
    const double snap = dt > 0.0 ? 1e-6 * dt : 0.0;
    /* periodic repetition: t -> t0 + tau in period k */
    long k = 0;
    double tb = t;
    if (sh && sh->period > 0.0 && t > t0) {
        const double T = sh->period;
        double kk = floor((t - t0) / T), tau = t - t0 - kk * T;
        if (tau > T - snap || tau >= T) kk += 1.0, tau = 0.0; /* on the next period's start */
        if (tau < snap) tau = 0.0;
        if (tau == 0.0 && side < 0 && kk >= 1.0) kk -= 1.0, tau = T; /* left limit: the previous period's end */
        k = (long)kk;
        tb = t0 + tau;
    }
    double x1;
    int seg;
    const double x = table_eval(s, tb, side, dt, &x1, &seg);
    double y = x, y1 = x1, y2 = 0.0;
    if (sh && sh->filter_tau > 0.0) {
        const double tau = sh->filter_tau;
        if (tb < t0) {
            y = s->v[0], y1 = 0.0, y2 = 0.0; /* at rest before the first point */
        } else {
            /* zero-state response W at tb from the segment start */
            double W;
            const int n = s->n_points;
            if (seg < 0) {
                W = 0.0;
            } else {
                const double a = s->v[seg];
                const double b = seg < n - 1 ? (s->v[seg + 1] - s->v[seg]) / (s->t[seg + 1] - s->t[seg]) : 0.0;
                W = lag_step(sh->w[seg], a, b, tb - s->t[seg], tau);
            }
            double ys = s->v[0];
            if (k > 0) {
                const double y_inf = sh->w_end / (1.0 - sh->rho);
                ys = y_inf + (s->v[0] - y_inf) * exp(-(double)k * sh->period / tau);
            }
            y = W + ys * exp(-(tb - t0) / tau);
            y1 = (x - y) / tau;
            y2 = (x1 - y1) / tau;
        }
    }
    if (!limits) return y;
    /* dead zone, then clamp (one-sided at the kinks: by side) */
    if (sh && sh->has_dead_zone) {
        const int up = side >= 0 ? y1 > 0.0 : y1 < 0.0; /* moving up on this side */
        if (y > sh->dead_hi || (y == sh->dead_hi && up)) {
            y -= sh->dead_hi;
        } else if (y < sh->dead_lo || (y == sh->dead_lo && !up && y1 != 0.0)) {
            y -= sh->dead_lo;
        } else {
            y = 0.0, y1 = 0.0, y2 = 0.0;
        }
    }
    if (sh && sh->has_clamp) {
        if (y > sh->clamp_hi || y < sh->clamp_lo) {
            y = y > sh->clamp_hi ? sh->clamp_hi : sh->clamp_lo;
            y1 = 0.0, y2 = 0.0;
        } else {
            const int up = side >= 0 ? y1 > 0.0 : y1 < 0.0;
            const int down = side >= 0 ? y1 < 0.0 : y1 > 0.0;
            if ((y == sh->clamp_hi && up) || (y == sh->clamp_lo && down)) y1 = 0.0, y2 = 0.0;
        }
    }
    d[0] = y1;
    d[1] = y2;
    return y;
}

double hymo_signal_next_breakpoint(const hymo_signal *s, double t, double eps)
{
    if (!s || s->n_points <= 0) return INFINITY;
    const double t0 = s->t[0];
    const double T = s->shape ? s->shape->period : 0.0;
    double base = 0.0; /* start of the period that holds t + eps */
    if (T > 0.0 && t + eps > t0) base = floor((t + eps - t0) / T) * T;
    for (int rep = 0; rep < 2; ++rep, base += T) {
        /* the first i with t_i + base > t + eps (times ascending: binary search) */
        int lo = 0, hi = s->n_points;
        while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            if (s->t[mid] + base > t + eps) hi = mid;
            else lo = mid + 1;
        }
        if (lo < s->n_points) return s->t[lo] + base;
        if (T > 0.0 && t0 + base + T > t + eps) return t0 + base + T; /* the next period's start */
        if (!(T > 0.0)) break;
    }
    return INFINITY;
}

double hymo_signal_next_jump(const hymo_signal *s, double t, double t_end, double eps)
{
    if (!s || s->n_points <= 0) return INFINITY;
    double b = hymo_signal_next_breakpoint(s, t, eps);
    /* one period's breakpoints at most (a table's last one is followed by none) */
    for (int k = 0; k <= s->n_points && b < t_end - eps; ++k) {
        if (hymo_signal_eval(s, b, -1) != hymo_signal_eval(s, b, +1)) return b;
        b = hymo_signal_next_breakpoint(s, b, eps);
    }
    return INFINITY;
}

/* Piecewise-linear table with steps (two points with equal times).
 * Right limit (side >= 0): take the last point i with t_i <= t and
 * interpolate towards i+1 (t_{i+1} > t_i then holds).  Left limit
 * (side < 0): take the first point i with t_i >= t and interpolate from
 * i-1.  Outside the table the end values are held. */
double hymo_signal_eval(const hymo_signal *signal, double t, int side)
{
    if (!signal || signal->n_points <= 0) return 0.0;
    if (signal->shape) return hymo_signal_eval_d(signal, t, side, 0.0, NULL);
    const int n = signal->n_points;
    const double *ts = signal->t, *vs = signal->v;
    if (side >= 0) {
        /* last i with ts[i] <= t (binary search) */
        int lo = 0, hi = n; /* answer in [lo-1, hi-1] */
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (ts[mid] <= t) lo = mid + 1;
            else hi = mid;
        }
        int i = lo - 1;
        if (i < 0) return vs[0];
        if (i >= n - 1) return vs[n - 1];
        double w = (t - ts[i]) / (ts[i + 1] - ts[i]);
        return vs[i] + w * (vs[i + 1] - vs[i]);
    } else {
        /* first i with ts[i] >= t */
        int lo = 0, hi = n;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (ts[mid] < t) lo = mid + 1;
            else hi = mid;
        }
        int i = lo;
        if (i >= n) return vs[n - 1];
        if (i == 0) return vs[0];
        double w = (t - ts[i - 1]) / (ts[i] - ts[i - 1]);
        return vs[i - 1] + w * (vs[i] - vs[i - 1]);
    }
}

double hymo_signal_eval_hint(const hymo_signal *signal, double t, int side, double dt, int *seg)
{
    if (!signal || signal->n_points < 2 || signal->shape)
        return dt > 0.0 ? hymo_signal_eval_snapped(signal, t, side, dt) : hymo_signal_eval(signal, t, side);
    const int n = signal->n_points;
    const double *ts = signal->t, *vs = signal->v;
    int i = *seg;
    if (!(i >= 0 && i + 1 < n && ts[i] < t && t < ts[i + 1])) { /* the last i with ts[i] <= t */
        int lo = 0, hi = n;
        while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            if (ts[mid] <= t) lo = mid + 1;
            else hi = mid;
        }
        *seg = i = lo - 1;
        if (!(i >= 0 && i + 1 < n && ts[i] < t && t < ts[i + 1]))
            return dt > 0.0 ? hymo_signal_eval_snapped(signal, t, side, dt) : hymo_signal_eval(signal, t, side);
    }
    /* ts[i] < t < ts[i+1]: both limits are the segment's interpolation (the
     * bisections of hymo_signal_eval and hymo_signal_eval_snapped find i,
     * i + 1), unless t snaps to one of the two ends */
    if (dt > 0.0 && (fabs(ts[i] - t) <= 1e-6 * dt || fabs(ts[i + 1] - t) <= 1e-6 * dt))
        return hymo_signal_eval_snapped(signal, t, side, dt);
    const double w = (t - ts[i]) / (ts[i + 1] - ts[i]);
    return vs[i] + w * (vs[i + 1] - vs[i]);
}

int hymo_signal_sides_agree(const hymo_signal *signal, double t, double dt, int seg)
{
    if (!signal || signal->n_points < 2 || signal->shape || !(dt > 0.0)) return 0;
    const double *ts = signal->t;
    return seg >= 0 && seg + 1 < signal->n_points && ts[seg] < t && t < ts[seg + 1] &&
           !(fabs(ts[seg] - t) <= 1e-6 * dt || fabs(ts[seg + 1] - t) <= 1e-6 * dt);
}

double hymo_signal_eval_snapped(const hymo_signal *signal, double t, int side, double dt)
{
    if (!signal) return 0.0;
    if (signal->shape) return hymo_signal_eval_d(signal, t, side, dt, NULL);
    int lo = 0, hi = signal->n_points - 1;
    while (hi - lo > 1) { /* nearest breakpoints by bisection */
        int mid = (lo + hi) / 2;
        if (signal->t[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    for (int i = lo; i <= hi && i < signal->n_points; ++i)
        if (fabs(signal->t[i] - t) <= 1e-6 * dt) return hymo_signal_eval(signal, signal->t[i], side);
    return hymo_signal_eval(signal, t, side);
}
