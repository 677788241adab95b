/* Signal dead-zone and clamp kinks as events (src/core/signal.c
 * hymo_signal_kink_levels, formulations/force_elements.c
 * hymo_fe_switching; docs/model-format.md "Signal shaping"):
 *   - the kink levels of every dead zone / clamp combination by hand;
 *   - a slider pushed by an external force whose signal is a ramp through a
 *     dead zone and into a clamp: both kinks are located at the closed-form
 *     times of the signal (t1 = dead-zone edge, t2 = clamp), and the
 *     position error against the closed-form motion falls 4x per halving
 *     of dt (second order kept across the kinks), the velocity error is
 *     round-off (the rule is exact for a piecewise-linear acceleration
 *     once the steps are cut at its kinks);
 *   - a 4/3 valve whose reference passes a dead zone (crane1 with a shaped
 *     signal): the event at the closed-form time, second order against a
 *     run at dt/16;
 *   - a shaped signal that feeds nothing (and every shipped model) declares
 *     no kink functions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/sim.h"
#include "test_util.h"

static hymo_model *load_text(const char *text) { return test_load_text(text, "signal_events.yaml"); }

static hymo_signal mk(hymo_signal_shape *sh)
{
    static double t[2] = {0, 1}, v[2] = {0, 1};
    hymo_signal s;
    memset(&s, 0, sizeof s);
    s.n_points = 2, s.t = t, s.v = v, s.shape = sh;
    return s;
}

static void test_kink_levels(void **state)
{
    (void)state;
    hymo_signal_shape sh;
    double lv[4];
    memset(&sh, 0, sizeof sh);
    hymo_signal s = mk(&sh);
    assert_int_equal(hymo_signal_kink_levels(&s, lv), 0);
    sh.has_dead_zone = 1, sh.dead_lo = -1.5, sh.dead_hi = 2.0;
    assert_int_equal(hymo_signal_kink_levels(&s, lv), 2);
    assert_true(lv[0] == -1.5 && lv[1] == 2.0);
    sh.has_clamp = 1, sh.clamp_lo = -6, sh.clamp_hi = 5; /* dead-zoned output meets -6 at x = -7.5, 5 at 7 */
    assert_int_equal(hymo_signal_kink_levels(&s, lv), 4);
    assert_true(lv[2] == -7.5 && lv[3] == 7.0);
    sh.clamp_lo = 0.0; /* met on the whole dead band: no extra level */
    assert_int_equal(hymo_signal_kink_levels(&s, lv), 3);
    assert_true(lv[2] == 7.0);
    sh.dead_lo = sh.dead_hi = 1.0; /* a shift: no dead-zone kink, clamp bounds shifted */
    assert_int_equal(hymo_signal_kink_levels(&s, lv), 2);
    assert_true(lv[0] == 1.0 && lv[1] == 6.0);
    sh.has_dead_zone = 0, sh.clamp_lo = sh.clamp_hi = 2.0; /* a constant */
    assert_int_equal(hymo_signal_kink_levels(&s, lv), 0);
    sh.clamp_lo = -1.0;
    assert_int_equal(hymo_signal_kink_levels(&s, lv), 2);
    assert_true(lv[0] == -1.0 && lv[1] == 2.0);
}

/* slider of mass M along x, force F0 s(t) along x; s = dead zone [-1, T1]
 * then clamp [-1, CH] of the ramp x(t) = t: s = 0 before T1, t - T1 up to
 * T2 = T1 + CH, CH after. */
#define M 2.0
#define F0 50.0
#define T1 0.053
#define CH 0.211
#define T2 (T1 + CH)
#define TEND 0.4
static const char *slider =
    "format: 2\nname: kink_slider\ngravity: [0, -9.81, 0]\nsimulation: {dt: 0.02, t_end: 0.4}\n"
    "signals:\n  - {name: s, points: [[0, 0], [1, 1]], dead_zone: [-1, 0.053], clamp: [-1, 0.211]}\n"
    "bodies:\n"
    "  - name: b\n"
    "    joint: {name: x, type: prismatic, parent: ground, location: [0, 0, 0], axis: [1, 0, 0], initial: 0}\n"
    "    mass: 2\n    com: [0, 0, 0]\n    inertia: [0.01, 0.01, 0.01]\n    points: {P: [0, 0, 0]}\n"
    "forces:\n"
    "  - {name: push, type: external, point: b.P, force: [50, 0, 0], force_signals: [s, null, null]}\n";

static void closed_form(double t, double *z, double *v)
{
    const double c = F0 / M;
    if (t <= T1) {
        *z = 0.0, *v = 0.0;
    } else if (t <= T2) {
        const double u = t - T1;
        *z = c * u * u * u / 6.0, *v = c * u * u / 2.0;
    } else {
        const double u = t - T2;
        *z = c * (CH * CH * CH / 6.0 + CH * CH / 2.0 * u + CH * u * u / 2.0);
        *v = c * (CH * CH / 2.0 + CH * u);
    }
}

static void run_slider(const hymo_model *m, double dt, double t_end, hymo_formulation_kind form, double *z,
                       double *v, long *events, double *last)
{
    hymo_run_options opt;
    hymo_error err;
    hymo_sim *sim;
    hymo_run_options_default(&opt, m);
    opt.dt = dt;
    opt.formulation = form;
    sim = test_sim_create(m, &opt);
    const long n = lround(t_end / dt);
    for (long k = 0; k < n; ++k)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    *events = hymo_sim_events(sim, last);
    *z = hymo_sim_z(sim)[0];
    *v = hymo_sim_zd(sim)[0];
    hymo_sim_free(sim);
}

static void test_slider_kinks(void **state)
{
    (void)state;
    hymo_model *m = load_text(slider);
    assert_int_equal(m->n_force_switches, 4); /* levels -1, 0.053, -2, 0.264 */
    for (int form = 0; form < 2; ++form) {
        const hymo_formulation_kind fk = form ? HYMO_FORMULATION_PENALTY : HYMO_FORMULATION_DOUBLE_STEP;
        double z, v, last, ez[3];
        long ev;
        /* the dead-zone edge alone, then both */
        run_slider(m, 0.02, 0.1, fk, &z, &v, &ev, &last);
        printf("  %s: dead-zone edge located at %.15f s (closed form %.3f), events %ld\n",
               form ? "penalty" : "double-step", last, T1, ev);
        assert_int_equal(ev, 1);
        assert_true(fabs(last - T1) <= 1e-9 * 0.02);
        for (int i = 0; i < 3; ++i) {
            const double dt = 0.02 / (1 << i);
            double zc, vc;
            run_slider(m, dt, TEND, fk, &z, &v, &ev, &last);
            closed_form(TEND, &zc, &vc);
            ez[i] = z - zc;
            printf("  %s dt %.4f: z %.12f (closed form %.12f, error %.3e), v error %.2e, events %ld, last %.15f\n",
                   form ? "penalty" : "double-step", dt, z, zc, ez[i], v - vc, ev, last);
            assert_int_equal(ev, 2);
            assert_true(fabs(last - T2) <= 1e-9 * dt);
            assert_true(fabs(v - vc) <= 1e-9); /* exact but for round-off and the Newton tolerance */ /* exact but for round-off and the Newton tolerance */
        }
        for (int i = 0; i < 2; ++i) {
            const double r = ez[i] / ez[i + 1];
            printf("  ratio %.3f\n", r);
            assert_true(r > 3.8 && r < 4.2);
        }
    }
    hymo_model_free(m);
}

/* crane1 with its joystick signal shaped: the ramp from 0 to -8 (t = 1 ..
 * 1.5 s, -16 /s) passes the dead zone's edge -1.7 at t1 = 1 + 1.7/16 and
 * the dead-zoned value meets the clamp -5 at x = -6.7, t2 = 1 + 6.7/16 */
#define VT1 (1.0 + 1.7 / 16.0)
#define VT2 (1.0 + 6.7 / 16.0)

/* crane1 with its U_ref table replaced by `sig` (the "    points: ..."
 * lines and any shaping keys) */
static hymo_model *crane_with_signal(const char *sig)
{
    char *base = test_read_file(HYMO_DATA_DIR "/crane1.yaml");
    const char *a = strstr(base, "    points: [[0, 0], [1, 0]"), *b = strstr(base, "\nhydraulics:");
    assert_non_null(a);
    assert_non_null(b);
    char *text = malloc(strlen(base) + strlen(sig) + 1);
    memcpy(text, base, (size_t)(a - base));
    strcpy(text + (a - base), sig);
    strcat(text, b);
    free(base);
    hymo_model *m = load_text(text);
    free(text);
    return m;
}

static hymo_model *shaped_crane(void)
{
    return crane_with_signal("    points: [[0, 0], [1, 0], [1.5, -8], [3, -8]]\n"
                             "    dead_zone: [-1.7, 1.5]\n    clamp: [-5, 5]\n");
}

static void crane_run(const hymo_model *m, double dt, double t_end, double *z, long *events, double *first,
                      double *last)
{
    hymo_run_options opt;
    hymo_error err;
    hymo_sim *sim;
    hymo_run_options_default(&opt, m);
    opt.dt = dt;
    sim = test_sim_create(m, &opt);
    const long n = lround(t_end / dt);
    *first = NAN;
    for (long k = 0; k < n; ++k) {
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        if (isnan(*first) && hymo_sim_events(sim, NULL) > 0) hymo_sim_events(sim, first);
    }
    *events = hymo_sim_events(sim, last);
    *z = hymo_sim_z(sim)[0];
    hymo_sim_free(sim);
}

static void test_valve_reference_kinks(void **state)
{
    (void)state;
    hymo_model *m = shaped_crane();
    assert_int_equal(m->signals[0].shape->n_kinks, 4);
    const double t_end = 1.6;
    double zr, z[3], first, last;
    long ev;
    crane_run(m, 1e-3 / 16, t_end, &zr, &ev, &first, &last);
    printf("  crane1, shaped U_ref: reference (dt 6.25e-5) z1 %.12f, events %ld (first %.12f, last %.12f)\n", zr, ev,
           first, last);
    for (int i = 0; i < 3; ++i) {
        const double dt = 4e-3 / (1 << i);
        crane_run(m, dt, t_end, &z[i], &ev, &first, &last);
        printf("  dt %.4f: z1 %.12f, error %.3e, events %ld at %.12f and %.12f (closed form %.12f, %.12f)\n", dt, z[i],
               z[i] - zr, ev, first, last, VT1, VT2);
        assert_int_equal(ev, 2);
        assert_true(fabs(first - VT1) <= 1e-9 * dt && fabs(last - VT2) <= 1e-9 * dt);
    }
    for (int i = 0; i < 2; ++i) {
        const double r = (z[i] - zr) / (z[i + 1] - zr);
        printf("  ratio %.3f\n", r);
        assert_true(r > 3.4 && r < 4.4); /* without the events: -0.98 */
    }
    hymo_model_free(m);
}

/* crane1 whose joystick steps off the step grid (0 -> 5 V at 0.50037 s,
 * 5 -> -3 V at 1.20013 s): the engine cuts each step holding a jump there
 * (docs/model-format.md "Steps of an input inside a time step").  Against
 * IDA at rtol 1e-11 (stop times at the breakpoints) the largest error in
 * z1 over the 1 ms rows to 2 s falls 4x per halving of dt; taken at the
 * step's end (before) it was 3.55e-5, 1.87e-5, 6.7e-7 rad at dt = 1, 0.5,
 * 0.25 ms (ratios 1.90, 28). */
static void test_valve_reference_steps_off_grid(void **state)
{
    (void)state;
    hymo_model *m =
        crane_with_signal("    points: [[0, 0], [0.50037, 0], [0.50037, 5], [1.20013, 5], [1.20013, -3], [3, -3]]\n");
    const double t_end = 2.0;
    enum { ROWS = 2000 }; /* z1 every 1 ms */
    static double zr[ROWS];
    hymo_run_options opt;
    hymo_error err;
    test_ida_options(&opt, m, t_end);
    opt.dt = 1e-3; /* IDA: the output interval */
    hymo_sim *ref = test_sim_create(m, &opt);
    for (int r = 0; r < ROWS; ++r) {
        if (hymo_sim_step(ref, &err) != HYMO_OK) fail_msg("%s", err.message);
        zr[r] = hymo_sim_z(ref)[0];
    }
    hymo_sim_free(ref);
    double e[3];
    for (int i = 0; i < 3; ++i) {
        hymo_run_options_default(&opt, m);
        opt.dt = 1e-3 / (1 << i), opt.t_end = t_end;
        hymo_sim *sim = test_sim_create(m, &opt);
        e[i] = 0.0;
        for (int r = 0; r < ROWS; ++r) {
            for (int k = 0; k < (1 << i); ++k)
                if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
            e[i] = fmax(e[i], fabs(hymo_sim_z(sim)[0] - zr[r]));
        }
        printf("  crane1, U_ref steps at 0.50037 and 1.20013 s: dt %.6f: max |z1 - IDA| over the 1 ms rows %.3e rad\n",
               opt.dt, e[i]);
        hymo_sim_free(sim);
    }
    printf("  ratios %.3f, %.3f\n", e[0] / e[1], e[1] / e[2]);
    assert_true(e[0] < 3e-6); /* measured 1.7e-6 */
    for (int i = 0; i < 2; ++i) assert_true(e[i] / e[i + 1] > 3.5 && e[i] / e[i + 1] < 4.5);
    hymo_model_free(m);
}

/* a shaped signal that feeds nothing declares no functions; the shipped
 * models none */
static void test_no_functions_unless_used(void **state)
{
    (void)state;
    char *text = malloc(strlen(slider) + 64);
    strcpy(text, slider);
    char *f = strstr(text, "forces:");
    strcpy(f, "forces: []\n");
    hymo_model *m = load_text(text);
    assert_int_equal(m->n_force_switches, 0);
    assert_int_equal(m->signals[0].shape->n_kinks, 0);
    hymo_model_free(m);
    free(text);
    const char *shipped[] = {"crane1.yaml", "excavator.yaml", "forestry_crane.yaml", "pump_demo.yaml"};
    for (int i = 0; i < 4; ++i) {
        hymo_model *s = test_load_model(shipped[i]);
        for (int k = 0; k < s->n_signals; ++k)
            assert_true(!s->signals[k].shape || s->signals[k].shape->n_kinks == 0);
        hymo_model_free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kink_levels),
        cmocka_unit_test(test_slider_kinks),
        cmocka_unit_test(test_valve_reference_kinks),
        cmocka_unit_test(test_valve_reference_steps_off_grid),
        cmocka_unit_test(test_no_functions_unless_used),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
