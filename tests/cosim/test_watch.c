/* The online verdict figures (src/cosim/watch.c) against brute force over
 * stored series: the largest energy-balance excess
 * max |D(t) - D(s)| - r (W(t) - W(s)) over pairs at most one window apart
 * (every pair with one sample per communication point; the sampled points
 * only when a window holds more than HYMO_WATCH_RING points), the largest
 * |D(t) - D(s)| of any window, and the pressure error against a reference
 * interpolated to the communication points, the reference's energy-balance
 * error subtracted from D. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_internal.h"
#include "test_util.h"

/* A burst: D loses 10 J over 0.2 s at t = 5 s, on top of a slow drift
 * and a wiggle; W grows by 30 J/s. */
static double series_D(double t)
{
    const double burst = t < 5.0 ? 0.0 : t < 5.2 ? -50.0 * (t - 5.0) : -10.0;
    return burst + 0.01 * t + 0.2 * sin(7.0 * t);
}
static double series_W(double t) { return 30.0 * t; }

/* brute force over the points k with k % stride == 0 */
static void brute(int n, double H, double window, double r, long stride, double *excess, double *jump)
{
    *excess = -HUGE_VAL, *jump = 0.0;
    for (int i = 0; i < n; i += (int)stride)
        for (int j = 0; j < i; j += (int)stride) {
            const double ti = i * H, tj = j * H;
            if (ti - tj > window * (1.0 + 1e-12)) continue;
            const double dD = fabs(series_D(ti) - series_D(tj));
            const double e = dD - r * (series_W(ti) - series_W(tj));
            if (e > *excess) *excess = e;
            if (dD > *jump) *jump = dD;
        }
}

static void check(double H, long expect_stride)
{
    hymo_watch w;
    const double window = 1.0, r = 0.05;
    const int n = (int)lround(10.0 / H) + 1;
    assert_int_equal(hymo_watch_init(&w, NULL, 0, H, window, r), 0);
    assert_int_equal(w.stride, expect_stride);
    for (int i = 0; i < n; ++i) hymo_watch_point(&w, i * H, NULL, series_D(i * H), series_W(i * H));
    double excess, jump;
    brute(n, H, window, r, w.stride, &excess, &jump);
    assert_true(fabs(w.jump_excess - excess) <= 1e-12 * fabs(excess));
    assert_true(fabs(w.jump - jump) <= 1e-12 * jump);
    /* the burst: about 10 J in 0.2 s, less 0.05 x 6 J of work */
    assert_true(w.jump_excess > 9.0 && w.jump_excess < 10.5);
    assert_true(w.jump_t0 >= 4.0 && w.jump_t1 <= 6.2 && w.jump_t1 > w.jump_t0);
    hymo_watch_free(&w);
}

static void test_burst_every_point(void **state)
{
    (void)state;
    check(4e-3, 1); /* 250 points per window: every one */
}

static void test_burst_sampled(void **state)
{
    (void)state;
    check(1e-3, 4); /* 1000 points per window: every 4th */
}

/* The scan of hymo_watch_point done in full at every sample: for each
 * sampled point i, the earlier samples newest first while within the
 * window and the ring (cap samples), a strictly larger value updating. */
typedef struct {
    double jump, excess, at, t0, t1;
} scan_result;
static scan_result full_scan(int n, const double *t, const double *D, const double *W, double window, double r,
                             long stride, int cap)
{
    scan_result s = {0.0, -HUGE_VAL, 0.0, 0.0, 0.0};
    for (int i = 0; i < n; i += (int)stride)
        for (int j = i - (int)stride, m = 0; j >= 0 && m < cap; j -= (int)stride, ++m) {
            if (t[i] - t[j] > window * (1.0 + 1e-12)) break;
            const double dD = fabs(D[i] - D[j]), e = dD - r * (W[i] - W[j]);
            if (dD > s.jump) s.jump = dD;
            if (e > s.excess) s.excess = e, s.t0 = t[j], s.t1 = t[i], s.at = dD;
        }
    return s;
}

/* Series whose scans the ring's bounds mostly skip: D swings by 3 J while
 * W grows fast (the largest |dD| early, the excess negative), then a slow
 * drift with a wiggle while W stands still (the excess creeps up below
 * the largest |dD|), W growing again with a small burst late, and
 * pseudo-random round-off-sized noise, D below zero throughout; every
 * figure is that of the full scan, bit for bit, at both strides. */
static void test_skipped_scans_exact(void **state)
{
    (void)state;
    for (int pass = 0; pass < 2; ++pass) {
        const double H = pass ? 1e-3 : 4e-3, window = 1.0, r = 0.05;
        const int n = (int)lround(20.0 / H) + 1;
        double *t = malloc(3 * (size_t)n * sizeof(double)), *D = t + n, *W = D + n;
        assert_non_null(t);
        unsigned long x = 12345;
        double w = 0.0;
        for (int i = 0; i < n; ++i) {
            t[i] = i * H;
            x = x * 6364136223846793005UL + 1442695040888963407UL;
            const double noise = ((double)(x >> 11) / 9007199254740992.0 - 0.5) * 1e-12;
            const double burst = t[i] < 14.0 ? 0.0 : t[i] < 14.1 ? -20.0 * (t[i] - 14.0) : -2.0;
            const double swing = t[i] < 5.0 ? 1.5 * sin(3.0 * t[i]) : 0.0;
            D[i] = -5.0 + swing + 1e-4 * t[i] + 1e-3 * sin(3.0 * t[i]) * (1.0 + 0.1 * t[i]) + burst + noise;
            if (t[i] < 5.0) w += 100.0 * H;
            else if (t[i] > 10.0) w += 40.0 * H * (1.0 + 0.5 * sin(t[i]));
            W[i] = w;
        }
        hymo_watch wt;
        assert_int_equal(hymo_watch_init(&wt, NULL, 0, H, window, r), 0);
        for (int i = 0; i < n; ++i) hymo_watch_point(&wt, t[i], NULL, D[i], W[i]);
        const scan_result s = full_scan(n, t, D, W, window, r, wt.stride, wt.cap);
        assert_memory_equal(&wt.jump, &s.jump, sizeof(double));
        assert_memory_equal(&wt.jump_excess, &s.excess, sizeof(double));
        assert_memory_equal(&wt.jump_at, &s.at, sizeof(double));
        assert_memory_equal(&wt.jump_t0, &s.t0, sizeof(double));
        assert_memory_equal(&wt.jump_t1, &s.t1, sizeof(double));
        const long samples = (n + wt.stride - 1) / wt.stride;
        assert_true(wt.n_scans > 0 && wt.n_scans < samples / 2); /* most scans skipped */
        hymo_watch_free(&wt);
        free(t);
    }
}

/* a reference of 3 volumes at 10 ms; the run's points at 4 ms */
static void test_reference(void **state)
{
    (void)state;
    const int nr = 101, np = 3;
    double time[101], p[303], drift[101];
    for (int i = 0; i < nr; ++i) {
        time[i] = 0.01 * i;
        drift[i] = 0.5 * time[i];
        for (int k = 0; k < np; ++k) p[i * np + k] = 1e6 * (k + 1) * time[i];
    }
    hymo_reference ref;
    memset(&ref, 0, sizeof ref);
    ref.n = nr, ref.np = np, ref.time = time, ref.p = p, ref.drift = drift;
    hymo_watch w;
    assert_int_equal(hymo_watch_init(&w, &ref, np, 4e-3, 1.0, 0.05), 0);
    assert_int_equal(w.p_ref, 1);
    for (int i = 0; i <= 250; ++i) {
        const double t = 4e-3 * i;
        double pr[3];
        for (int k = 0; k < np; ++k) pr[k] = 1e6 * (k + 1) * t; /* the reference's line exactly */
        if (i == 100) pr[2] += 2.5e5;                           /* one error of 0.25 MPa at t = 0.4 s */
        hymo_watch_point(&w, t, pr, 0.5 * t, 0.0);              /* D = D_ref: no excess */
    }
    assert_true(fabs(w.p_err - 2.5e5) <= 1e-6);
    assert_true(fabs(w.p_err_t - 0.4) <= 1e-12);
    assert_true(w.jump < 1e-12 && w.jump_excess < 1e-12);
    hymo_watch_free(&w);
    /* pressures of another size: not compared */
    assert_int_equal(hymo_watch_init(&w, &ref, 2, 4e-3, 1.0, 0.05), 0);
    assert_int_equal(w.p_ref, 0);
    hymo_watch_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_every_point),
        cmocka_unit_test(test_burst_sampled),
        cmocka_unit_test(test_skipped_scans_exact),
        cmocka_unit_test(test_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
