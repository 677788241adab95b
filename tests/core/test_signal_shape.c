/* Signal shaping (docs/model-format.md, "signals"): periodic repetition,
 * first-order filter, dead zone and clamp against hand-computed values and
 * the filter's closed form; loader errors.  The filter is also checked
 * against scipy's odeint in python/tests/test_signal_shape.py. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

#include "hymo/model.h"

static const char *const head = "format: 1\nname: sig\ngravity: [0, -9.81, 0]\n"
                                "bodies:\n  - name: b\n    joint: {name: q, type: revolute, parent: ground, "
                                "location: [0, 0, 0], axis: [0, 0, 1], initial: 0}\n"
                                "    mass: 1.0\n    com: [0.5, 0, 0]\n    inertia: [0.01, 0.01, 0.01]\n"
                                "signals:\n";

static hymo_model *load_sig(const char *sig, hymo_error *err)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", head, sig);
    hymo_model *m = NULL;
    hymo_error_clear(err);
    if (hymo_model_load_string(text, "<sig>", &m, err) != HYMO_OK) return NULL;
    return m;
}

static hymo_model *must_load(const char *sig)
{
    hymo_error err;
    hymo_model *m = load_sig(sig, &err);
    if (!m) fail_msg("%s", err.message);
    return m;
}

static void test_periodic(void **state)
{
    (void)state;
    /* a ramp 0 -> 2 on [0, 1], held to 1.5, repeated every 1.5 s; then a step table repeated with its own span */
    hymo_model *m = must_load("  - {name: s, points: [[0, 0], [1, 2]], period: 1.5}\n"
                              "  - {name: w, points: [[0, 0], [1, 0], [1, 4], [2, 4]], period: 2}\n");
    const hymo_signal *s = &m->signals[0], *w = &m->signals[1];
    assert_close(hymo_signal_eval(s, -1.0, +1), 0.0, 0);
    assert_close(hymo_signal_eval(s, 0.5, +1), 1.0, 1e-15);
    assert_close(hymo_signal_eval(s, 1.2, +1), 2.0, 0);       /* held tail */
    assert_close(hymo_signal_eval(s, 1.5, -1), 2.0, 0);       /* the previous period's end */
    assert_close(hymo_signal_eval(s, 1.5, +1), 0.0, 0);       /* the next period's start */
    assert_close(hymo_signal_eval(s, 1.75, +1), 0.5, 1e-14);  /* 0.25 into the ramp */
    assert_close(hymo_signal_eval(s, 10 * 1.5 + 0.4, +1), 0.8, 1e-12);
    /* a step at the period boundary of w: 4 before 2 k, 0 after; the step inside the table at 2 k + 1 */
    assert_close(hymo_signal_eval(w, 4.0, -1), 4.0, 0);
    assert_close(hymo_signal_eval(w, 4.0, +1), 0.0, 0);
    assert_close(hymo_signal_eval(w, 5.0, -1), 0.0, 0);
    assert_close(hymo_signal_eval(w, 5.0, +1), 4.0, 0);
    assert_close(hymo_signal_eval(w, 5.5, +1), 4.0, 0);
    /* snapping: t = k dt with round-off a little before the boundary is the boundary */
    double t = 0.0;
    for (int k = 0; k < 4000; ++k) t += 1e-3; /* ~4 with accumulated round-off */
    assert_close(hymo_signal_eval_snapped(w, t, +1, 1e-3), 0.0, 0);
    assert_close(hymo_signal_eval_snapped(w, t, -1, 1e-3), 4.0, 0);
    /* breakpoints repeat */
    assert_close(hymo_signal_next_breakpoint(w, 4.2, 1e-9), 5.0, 1e-15);
    assert_close(hymo_signal_next_breakpoint(w, 5.0, 1e-9), 6.0, 1e-15);
    assert_close(hymo_signal_next_breakpoint(s, 1.2, 1e-9), 1.5, 1e-15);
    assert_close(hymo_signal_next_breakpoint(s, 1.5, 1e-9), 2.5, 1e-15);
    hymo_model_free(m);
}

static void test_dead_zone_clamp(void **state)
{
    (void)state;
    /* ramp -10 -> 10 on [0, 2] (slope 10): dead zone [-1, 2] then clamp [-3, 5] */
    hymo_model *m = must_load("  - {name: s, points: [[0, -10], [2, 10]], dead_zone: [-1, 2], clamp: [-3, 5]}\n"
                              "  - {name: d, points: [[0, -10], [2, 10]], dead_zone: [-0.5, 0.5]}\n");
    const hymo_signal *s = &m->signals[0], *d = &m->signals[1];
    double dv[2];
    /* x = -10 + 10 t */
    assert_close(hymo_signal_eval_d(s, 0.5, +1, 0, dv), -3.0, 1e-14); /* x = -5 -> -4 -> clamped -3 */
    assert_close(dv[0], 0.0, 0);
    assert_close(hymo_signal_eval_d(s, 0.75, +1, 0, dv), -1.5, 1e-14); /* x = -2.5 -> -1.5 */
    assert_close(dv[0], 10.0, 1e-12);
    assert_close(hymo_signal_eval_d(s, 1.0, +1, 0, dv), 0.0, 0); /* x = 0 inside */
    assert_close(dv[0], 0.0, 0);
    assert_close(hymo_signal_eval_d(s, 1.25, +1, 0, dv), 0.5, 1e-14); /* x = 2.5 -> 0.5 */
    assert_close(dv[0], 10.0, 1e-12);
    assert_close(hymo_signal_eval_d(s, 1.9, +1, 0, dv), 5.0, 0); /* x = 9 -> 7 -> 5 */
    assert_close(dv[0], 0.0, 0);
    /* kink of the dead zone at x = 2 (t = 1.2): one-sided slopes */
    assert_close(hymo_signal_eval_d(s, 1.2, +1, 0, dv), 0.0, 1e-14);
    assert_close(dv[0], 10.0, 1e-12);
    assert_close(hymo_signal_eval_d(s, 1.2, -1, 0, dv), 0.0, 1e-14);
    assert_close(dv[0], 0.0, 0);
    /* symmetric band */
    assert_close(hymo_signal_eval(d, 0.9, +1), -0.5, 1e-14);
    assert_close(hymo_signal_eval(d, 1.02, +1), 0.0, 0);
    assert_close(hymo_signal_eval(d, 1.2, +1), 1.5, 1e-14);
    hymo_model_free(m);
}

/* closed form of y' = (x - y)/tau for x a ramp from rest: y = b (s - tau (1 - e^{-s/tau})) */
static void test_filter(void **state)
{
    (void)state;
    const double tau = 0.2, b = 3.0;
    hymo_model *m = must_load("  - {name: r, points: [[1, 0], [3, 6], [3, 2], [4, 2]], filter_time_constant: 0.2}\n");
    const hymo_signal *r = &m->signals[0];
    double dv[2];
    assert_close(hymo_signal_eval_d(r, 0.5, +1, 0, dv), 0.0, 0);
    assert_close(dv[0], 0.0, 0);
    for (double s = 0.0; s <= 2.0; s += 0.125) {
        const double e = exp(-s / tau);
        const double y = b * (s - tau * (1.0 - e)), y1 = b * (1.0 - e), y2 = b * e / tau;
        assert_close(hymo_signal_eval_d(r, 1.0 + s, +1, 0, dv), y, 1e-13);
        if (s < 2.0) {
            assert_close(dv[0], y1, 1e-12);
            assert_close(dv[1], y2, 1e-11);
        }
    }
    /* after the step at 3 (6 -> 2) and the hold: y relaxes to 2 from y(3) */
    const double y3 = b * (2.0 - tau * (1.0 - exp(-2.0 / tau)));
    for (double s = 0.0; s <= 3.0; s += 0.25) {
        const double y = 2.0 + (y3 - 2.0) * exp(-s / tau);
        assert_close(hymo_signal_eval_d(r, 3.0 + s, +1, 0, dv), y, 1e-13);
        assert_close(dv[0], (2.0 - y) / tau, 1e-12);
    }
    /* continuous at the step, the rate jumps */
    double l[2], rr[2];
    assert_close(hymo_signal_eval_d(r, 3.0, -1, 0, l), hymo_signal_eval_d(r, 3.0, +1, 0, rr), 0);
    assert_close(l[0], (6.0 - y3) / tau, 1e-12);
    assert_close(rr[0], (2.0 - y3) / tau, 1e-12);
    hymo_model_free(m);
}

/* periodic + filter: the periodic steady state of a square wave has the
 * closed form y = 1 - e^{-s/tau}/(1 + e^{-T/(2 tau)}) on the high half */
static void test_filter_periodic(void **state)
{
    (void)state;
    const double tau = 0.3, T = 1.0;
    hymo_model *m = must_load(
        "  - {name: q, points: [[0, 1], [0.5, 1], [0.5, 0], [1, 0]], period: 1, filter_time_constant: 0.3}\n");
    const hymo_signal *q = &m->signals[0];
    /* first period from rest at y = 1 (the value before t0): stays 1 on the high half */
    assert_close(hymo_signal_eval(q, 0.25, +1), 1.0, 1e-15);
    /* far into the run: the periodic steady state */
    const double r = exp(-T / (2 * tau));
    for (double s = 0.0; s < 0.5; s += 0.05) {
        const double y = 1.0 - exp(-s / tau) / (1.0 + r);
        assert_close(hymo_signal_eval(q, 40.0 + s, +1), y, 1e-13);
        /* low half: y = y(T/2) e^{-s/tau}, y(T/2) = 1/(1 + r) */
        assert_close(hymo_signal_eval(q, 40.5 + s, +1), exp(-s / tau) / (1.0 + r), 1e-13);
    }
    hymo_model_free(m);
}

static void expect_error(const char *sig, const char *needle)
{
    hymo_error err;
    hymo_model *m = load_sig(sig, &err);
    if (m) {
        hymo_model_free(m);
        fail_msg("loaded, expected an error containing '%s'", needle);
    }
    if (!strstr(err.message, needle)) fail_msg("message '%s' lacks '%s'", err.message, needle);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("  - {name: s, points: [[0, 0], [2, 1]], period: 1}\n", "signals[0].period");
    expect_error("  - {name: s, points: [[0, 0], [2, 1]], period: 1}\n", "shorter than the table");
    expect_error("  - {name: s, points: [[0, 0], [2, 1]], period: -1}\n", "must be positive");
    expect_error("  - {name: s, points: [[0, 0], [2, 1]], filter_time_constant: 0}\n", "must be positive");
    expect_error("  - {name: s, points: [[0, 0], [2, 1]], dead_zone: [1, -1]}\n", "lower <= upper");
    expect_error("  - {name: s, points: [[0, 0], [2, 1]], clamp: [1]}\n", "signals[0].clamp");
    expect_error("  - {name: s, points: [[0, 0], [2, 1]], clamp: [3, 2]}\n", "min <= max");
    expect_error("  - {name: s, points: [[0, 0], [2, 1]], dead_band: [1, 2]}\n", "dead_band");
}

/* hymo_signal_eval_hint is hymo_signal_eval (dt 0) or
 * hymo_signal_eval_snapped (dt > 0) to the bit, whatever its hint: times
 * on a grid, at and near breakpoints and steps, outside the table, in
 * random order; a filtered table goes through the plain functions. */
static void test_hint_same_bits(void **state)
{
    (void)state;
    hymo_model *m = must_load("  - {name: u, points: [[0, 0], [1, 0], [1.5, -8], [3, -8], [3, 2], [3.5, 0], "
                              "[6, 0], [7, 10.3], [14, 10.3], [15, 0]]}\n"
                              "  - {name: f, points: [[1, 0], [3, 6], [3, 2], [4, 2]], filter_time_constant: 0.2}\n");
    const double dts[] = {0.0, 1e-4, 1e-3};
    unsigned long x = 12345;
    long n = 0;
    for (int sg = 0; sg < 2; ++sg)
        for (int d = 0; d < 3; ++d)
            for (int side = -1; side <= 1; side += 2) {
                const hymo_signal *sig = &m->signals[sg];
                const double dt = dts[d];
                int seg = -1, seg_r = 5;
                for (long k = -200; k < 170000; ++k) {
                    double t;
                    if (k % 3 == 2) { /* a random time, sometimes near a breakpoint */
                        x = x * 6364136223846793005UL + 1442695040888963407UL;
                        const int i = (int)((x >> 33) % (unsigned long)sig->n_points);
                        const double off = ((double)((x >> 11) % 2001) - 1000.0) * 1e-12; /* to 1e-9 s */
                        t = (x >> 60) & 1 ? sig->t[i] + off : -1.0 + 18.0 * (double)(x >> 11) / 9007199254740992.0;
                    } else
                        t = (double)k * 1e-4; /* a step grid through every breakpoint */
                    const double want = dt > 0.0 ? hymo_signal_eval_snapped(sig, t, side, dt)
                                                 : hymo_signal_eval(sig, t, side);
                    const double got = hymo_signal_eval_hint(sig, t, side, dt, k % 3 == 2 ? &seg_r : &seg);
                    if (memcmp(&want, &got, sizeof want) != 0)
                        fail_msg("signal %d dt %g side %d t %.17g: %.17g, not %.17g", sg, dt, side, t, got, want);
                    n++;
                }
            }
    assert_true(n > 1000000);
    hymo_model_free(m);
}

/* hymo_signal_sides_agree: where it says so, both snapped one-sided
 * limits are the same bits (the left limit's hint the segment); it says so
 * on a fine grid away from the breakpoints, never at a breakpoint or
 * within 1e-6 dt of one, nor for a filtered table or dt = 0. */
static void test_sides_agree(void **state)
{
    (void)state;
    hymo_model *m = must_load("  - {name: u, points: [[0, 0], [1, 0], [1.5, -8], [3, -8], [3, 2], [3.5, 0], "
                              "[6, 0], [7, 10.3], [14, 10.3], [15, 0]]}\n"
                              "  - {name: f, points: [[1, 0], [3, 6], [3, 2], [4, 2]], filter_time_constant: 0.2}\n");
    const hymo_signal *sig = &m->signals[0];
    const double dt = 1e-4;
    long agree = 0;
    int seg = -1;
    for (long k = -100; k < 160000; ++k) {
        const double t = (double)k * dt;
        const double left = hymo_signal_eval_hint(sig, t, -1, dt, &seg);
        if (!hymo_signal_sides_agree(sig, t, dt, seg)) continue;
        agree++;
        const double right = hymo_signal_eval_snapped(sig, t, +1, dt);
        if (memcmp(&left, &right, sizeof left) != 0) fail_msg("t %.17g: left %.17g, right %.17g", t, left, right);
    }
    assert_true(agree > 140000);
    for (int i = 0; i < sig->n_points; ++i) {
        for (int s = -1; s < sig->n_points; ++s) {
            assert_int_equal(hymo_signal_sides_agree(sig, sig->t[i], dt, s), 0);
            assert_int_equal(hymo_signal_sides_agree(sig, sig->t[i] + 0.5e-6 * dt, dt, s), 0);
            assert_int_equal(hymo_signal_sides_agree(sig, sig->t[i] - 0.5e-6 * dt, dt, s), 0);
        }
    }
    assert_int_equal(hymo_signal_sides_agree(sig, 0.5, 0.0, 0), 0);
    assert_int_equal(hymo_signal_sides_agree(sig, 0.5, dt, 0), 1);
    assert_int_equal(hymo_signal_sides_agree(sig, 0.5, dt, 1), 0);
    assert_int_equal(hymo_signal_sides_agree(&m->signals[1], 2.0, dt, 0), 0);
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_periodic),        cmocka_unit_test(test_dead_zone_clamp),
        cmocka_unit_test(test_filter),          cmocka_unit_test(test_filter_periodic),
        cmocka_unit_test(test_errors),          cmocka_unit_test(test_hint_same_bits),
        cmocka_unit_test(test_sides_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
