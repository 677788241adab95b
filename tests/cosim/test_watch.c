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
        cmocka_unit_test(test_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
