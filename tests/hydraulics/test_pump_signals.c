/* Pump speed and flow control set flow driven by signals
 * (docs/model-format.md "pumps", "flow_control_valves"), on
 * tests/models/pump_signal_line.yaml: pump1 (1500 rpm x engine(t)) into Vp
 * behind relief1; fc1 (1e-4 m^3/s x command(t)) from Vp into VA, drained by
 * the throttle th1.
 *
 *   1. the loader's signal indices and the inputs: n(t) = speed s(t) and
 *      Q_set(t) = set_flow s(t) by hand at ramp, clamp and step times (left
 *      and right limits), the pump and valve laws with them;
 *   2. steady states by hand: with the relief open and fc1 regulating,
 *      Vp = p_t + (eta D n s - Q_set c + C_L 0 + k_g p_crack)/(C_L + k_g),
 *      VA = p_t + (Q_set c / C_t)^2, for three pairs (s, c) of the signals
 *      (0.85, 0.5), (0.85, 1.0), (0.6, 1.0); the flow through fc1 is
 *      Q_set c;
 *   3. events: fc1 regulating and relief1 opening at IDA's root times, the
 *      clamp's kink at its closed-form time 0.095 s, the table step at
 *      0.3 s that crosses the kink level at 0.3 s; the trapezoidal run is
 *      second order across the kink and both steps (ratios per halving of
 *      dt against a dt/32 run) and equal to IDA's;
 *   4. Newton: the fast Jacobian agrees with the numeric one, with as many
 *      iterations (the speed enters no derivative; the set flow enters the
 *      valve's orifice branch and refreshes the fast matrix when it
 *      changes);
 *   5. the co-simulation's hydraulic subsystem (hydraulics/hyd_subsystem.c)
 *      on the same line (no actuator: its ODE is the whole model's): its
 *      trapezoidal rule and RK4 against the monolithic dt/32 run at 0.21 s
 *      and 0.31 s, after the set flow's and the speed's steps, converge
 *      with their order.
 * The SciPy solution of the same line is tests/independent/test_pump_signals.py;
 * the co-simulation (hydraulic subsystems) and the CLI's messages are in
 * tests/cli/cli_pump_signals.sh; bad files in tests/bad_models/ (test_model_load). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit.h"
#include "hyd_subsystem.h"
#include "hymo/sim.h"
#include "test_util.h"

#define LINE "../tests/models/pump_signal_line.yaml"
#define MAX_EV 16

/* the file's numbers */
static const double PT = 1.0e5, ETA = 0.95, D = 1.0e-5, N0 = 25.0, CL = 2.0e-13, PC = 10.0e6, KG = 2.0e-10,
                    QSET = 1.0e-4, CT = 7.0710678118654752e-8;

/* Runs m to t_end with opt; p at the end into p_out (np), event times
 * into t_ev (their number returned), the summary into sum (if given). */
static int run(const hymo_model *m, const hymo_run_options *opt, double *p_out, double *t_ev, hymo_run_summary *sum)
{
    int seen;
    hymo_sim *sim = test_sim_run(m, opt, t_ev, MAX_EV, &seen);
    memcpy(p_out, hymo_sim_p(sim), (size_t)hymo_sim_np(sim) * sizeof(double));
    if (sum) hymo_sim_summary(sim, sum);
    hymo_sim_free(sim);
    return seen;
}

/* ---------------------------------------------------------------- */
/* 1. inputs                                                        */

static void test_inputs(void **state)
{
    (void)state;
    hymo_model *m = test_load_model(LINE);
    assert_int_equal(m->n_pumps, 1);
    assert_int_equal(m->n_flow_controls, 1);
    assert_string_equal(m->signals[m->pumps[0].speed_signal].name, "engine");
    assert_string_equal(m->signals[m->flow_controls[0].set_flow_signal].name, "command");
    assert_true(hymo_circuit_has_inputs(m));
    hymo_model *demo = test_load_model("pump_demo.yaml"); /* no signals: -1, the constants */
    assert_int_equal(demo->pumps[0].speed_signal, -1);
    assert_int_equal(demo->flow_controls[0].set_flow_signal, -1);
    assert_false(hymo_circuit_has_inputs(demo));
    hymo_model_free(demo);
    /* engine: 0.4, ramp 0.02 .. 0.12 s to 1.0 clamped at 0.85, 0.6 from 0.3 s;
     * command: 0.5, 1.0 from 0.2 s */
    static const struct {
        double t;
        int side;
        double s, c;
    } at[] = {
        {0.0, +1, 0.4, 0.5},   {0.01, -1, 0.4, 0.5}, {0.05, +1, 0.58, 0.5}, {0.095, +1, 0.85, 0.5},
        {0.1, -1, 0.85, 0.5},  {0.2, -1, 0.85, 0.5}, {0.2, +1, 0.85, 1.0},  {0.3, -1, 0.85, 1.0},
        {0.3, +1, 0.6, 1.0},   {0.4, -1, 0.6, 1.0},  {0.06, 0, 0.64, 0.5},
    };
    for (size_t i = 0; i < sizeof at / sizeof at[0]; ++i) {
        double n, q;
        hymo_circuit_inputs(m, at[i].t, at[i].side, 1e-3, &n, &q);
        assert_close(n, N0 * at[i].s, 1e-13);
        assert_close(q, QSET * at[i].c, 1e-19);
    }
    /* the laws with the inputs in force */
    hymo_circuit circ;
    memset(&circ, 0, sizeof circ);
    double n = 10.0, q = 3e-5, p[2], G;
    circ.pump_speed = &n, circ.fc_flow = &q;
    const int ip = test_volume_state(m, "Vp"), ia = test_volume_state(m, "VA");
    p[ip] = 5e6, p[ia] = 2e6; /* fc1 regulating (3 MPa >= 1 MPa) */
    assert_close(hymo_pump_flow_d(&circ, m, 0, p, &G), ETA * D * 10.0 - CL * (5e6 - PT), 1e-19);
    assert_close(G, CL, 0.0);
    double Q;
    const double W = hymo_pump_power(&circ, m, 0, p, &Q);
    assert_close(W, (5e6 - PT) * Q, 1e-9);
    assert_close(Q, ETA * D * 10.0 - CL * (5e6 - PT), 1e-19);
    assert_close(hymo_flow_control_flow_d(&circ, m, 0, p, &G), 3e-5, 0.0);
    p[ia] = 4.5e6; /* orifice branch: Q_set g(0.5 MPa)/g(1 MPa) */
    assert_close(hymo_flow_control_flow_d(&circ, m, 0, p, &G), 3e-5 * sqrt(0.5), 1e-19);
    assert_close(G, 3e-5 / sqrt(1e6) * 0.5 / sqrt(0.5e6), 1e-20);
    circ.pump_speed = NULL, circ.fc_flow = NULL; /* the model's constants */
    assert_close(hymo_pump_flow_d(&circ, m, 0, p, &G), ETA * D * N0 - CL * (5e6 - PT), 1e-19);
    hymo_model_free(m);
}

/* ---------------------------------------------------------------- */
/* 2. steady states by hand                                         */

static void test_steady(void **state)
{
    (void)state;
    hymo_model *m = test_load_model(LINE);
    const int ip = test_volume_state(m, "Vp"), ia = test_volume_state(m, "VA");
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    static const struct {
        double t, s, c;
    } at[] = {{0.19, 0.85, 0.5}, {0.29, 0.85, 1.0}, {0.4, 0.6, 1.0}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; ++i) {
        opt.t_end = at[i].t;
        double p[2];
        run(m, &opt, p, NULL, NULL);
        const double qfc = QSET * at[i].c;
        const double vp = PT + (ETA * D * N0 * at[i].s - qfc + KG * PC) / (CL + KG);
        const double va = PT + (qfc / CT) * (qfc / CT);
        print_message("t = %.2f s (s = %.2f, c = %.1f): Vp %.6f MPa (by hand %.6f), VA %.6f MPa (by hand %.6f)\n",
                      at[i].t, at[i].s, at[i].c, 1e-6 * p[ip], 1e-6 * vp, 1e-6 * p[ia], 1e-6 * va);
        assert_close(p[ip], vp, 1e-3); /* settled: measured 1e-7 Pa (Vp), VA below */
        assert_close(p[ia], va, 5.0);  /* VA's transient after the step at 0.2 s: 1.6 Pa left at 0.29 s */
    }
    hymo_model_free(m);
}

/* ---------------------------------------------------------------- */
/* 3. events and order                                              */

static void test_events(void **state)
{
    (void)state;
    hymo_model *m = test_load_model(LINE);
    const double t_end = 0.4, DT0 = 1e-3;
    hymo_run_options ida;
    test_ida_options(&ida, m, t_end);
    double t_ida[MAX_EV], t_run[MAX_EV], p_ida[2];
    const int n_ida = run(m, &ida, p_ida, t_ida, NULL);
    test_print_ida_events(n_ida, t_ida);
    assert_int_equal(n_ida, 4); /* fc1 regulates, relief1 opens, the clamp's kink, the step across it */
    assert_close(t_ida[2], 0.095, 1e-9); /* engine's table 0.4 + 6 (t - 0.02) reaches 0.85 */
    assert_close(t_ida[3], 0.3, 2e-9); /* IDA stops 1e-9 dt after a breakpoint */
    /* the trapezoidal runs: events and the errors right after the kink
     * (0.1 s), after the set flow's step (0.21 s), after the speed's step
     * (0.31 s), against a dt/32 run */
    static const double t_chk[3] = {0.1, 0.21, 0.31};
    double ref[3][2], y[3][3][2], err[3][3], err_ev[3];
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.dt = DT0 / 32.0;
    for (int c = 0; c < 3; ++c) {
        opt.t_end = t_chk[c];
        run(m, &opt, ref[c], NULL, NULL);
    }
    for (int r = 0; r < 3; ++r) {
        opt.dt = DT0 / (double)(1 << r);
        opt.t_end = t_end;
        double p[2];
        const int n = run(m, &opt, p, t_run, NULL);
        assert_int_equal(n, n_ida);
        err_ev[r] = 0.0;
        for (int i = 0; i < n; ++i) err_ev[r] = fmax(err_ev[r], fabs(t_run[i] - t_ida[i]));
        print_message("dt %.4g ms: events", opt.dt * 1e3);
        for (int i = 0; i < n; ++i) print_message(" %.9f", t_run[i]);
        print_message(" (max |t - t_IDA| %.3g s; the kink at %.12f s)\n", err_ev[r], t_run[2]);
        assert_close(t_run[2], 0.095, 1e-10 * opt.dt + 1e-15); /* located to EVENT_TIME_TOL dt */
        assert_close(t_run[3], 0.3 + 1e-6 * opt.dt, 1e-9 * opt.dt); /* cut just after the jump (docs: 1e-6 dt) */
        assert_close(p[0], p_ida[0], 2.0); /* settled at 0.4 s: measured < 1 Pa */
        for (int c = 0; c < 3; ++c) {
            opt.t_end = t_chk[c];
            run(m, &opt, y[r][c], NULL, NULL);
            err[r][c] = fmax(fabs(y[r][c][0] - ref[c][0]), fabs(y[r][c][1] - ref[c][1]));
        }
        print_message("  |p - p_ref| at 0.1 s %.4g Pa, 0.21 s %.4g Pa, 0.31 s %.4g Pa\n", err[r][0], err[r][1],
                      err[r][2]);
    }
    for (int r = 1; r < 3; ++r) {
        print_message("halving %d: event times %.2fx, pressure at 0.1 s %.2fx, 0.21 s %.2fx, 0.31 s %.2fx\n", r,
                      err_ev[r - 1] / err_ev[r], err[r - 1][0] / err[r][0], err[r - 1][1] / err[r][1],
                      err[r - 1][2] / err[r][2]);
        assert_true(err_ev[r - 1] / err_ev[r] > 3.0);
        for (int c = 0; c < 3; ++c) {
            assert_true(err[r - 1][c] / err[r][c] > 3.0);
            assert_true(err[r - 1][c] / err[r][c] < 5.5);
        }
    }
    hymo_model_free(m);
}

/* ---------------------------------------------------------------- */
/* 4. Newton                                                        */

static void test_newton(void **state)
{
    (void)state;
    hymo_model *m = test_load_model(LINE);
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    double a[2], b[2], ta[MAX_EV], tb[MAX_EV];
    hymo_run_summary sa, sb;
    opt.jacobian = HYMO_JACOBIAN_NUMERIC;
    const int na = run(m, &opt, a, ta, &sa);
    opt.jacobian = HYMO_JACOBIAN_FAST;
    const int nb = run(m, &opt, b, tb, &sb);
    print_message("numeric Jacobian: mean %.3f, max %d iterations, %ld evaluations; fast: mean %.3f, max %d, %ld; "
                  "|dp| %.3g Pa\n",
                  sa.mean_iterations, sa.max_iterations, sa.jacobian_evaluations, sb.mean_iterations,
                  sb.max_iterations, sb.jacobian_evaluations, fmax(fabs(a[0] - b[0]), fabs(a[1] - b[1])));
    assert_int_equal(na, nb);
    for (int i = 0; i < na; ++i) assert_close(ta[i], tb[i], 1e-9);
    assert_close(a[0], b[0], 1e-3);
    assert_close(a[1], b[1], 1e-3);
    /* measured: numeric 1.545 mean, 5 max; fast 1.585 mean, 11 max (the
     * first two steps, 11 and 10: fc1's orifice branch and th1's laminar
     * region before any signal moves, as with constant inputs below) */
    assert_true(sb.mean_iterations <= 1.6);
    assert_true(sb.max_iterations <= 11);
    assert_true(fabs(sa.mean_iterations - sb.mean_iterations) <= 0.05);
    /* the same line with the signals' start values as constants (600 rpm,
     * 5e-5 m^3/s) runs bit for bit as the signal model up to 0.02 s, where
     * the ramp starts: the factors are the only difference */
    char path[512];
    snprintf(path, sizeof path, "%s/models/pump_signal_line.yaml", HYMO_TESTS_DIR);
    char *text = test_read_file(path);
    static const char *const edits[][2] = {{", speed_signal: engine", ""},
                                           {"speed_rpm: 1500", "speed_rpm: 600"},
                                           {", set_flow_signal: command", ""},
                                           {"set_flow: 1.0e-4", "set_flow: 5.0e-5"}};
    for (size_t e = 0; e < sizeof edits / sizeof edits[0]; ++e) {
        char *at = strstr(text, edits[e][0]);
        assert_non_null(at);
        memmove(at + strlen(edits[e][1]), at + strlen(edits[e][0]), strlen(at + strlen(edits[e][0])) + 1);
        memcpy(at, edits[e][1], strlen(edits[e][1]));
    }
    hymo_model *mc = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_string(text, "constant", &mc, &err) != HYMO_OK) fail_msg("%s", err.message);
    free(text);
    assert_false(hymo_circuit_has_inputs(mc));
    opt.t_end = 0.02;
    double c[2], d[2];
    hymo_run_summary sc, sd;
    run(m, &opt, c, NULL, &sc);
    run(mc, &opt, d, NULL, &sd);
    print_message("to 0.02 s: signals %.17g %.17g Pa, %.3f iterations; constants %.17g %.17g Pa, %.3f\n", c[0], c[1],
                  sc.mean_iterations, d[0], d[1], sd.mean_iterations);
    assert_true(c[0] == d[0] && c[1] == d[1]);
    assert_true(sc.mean_iterations == sd.mean_iterations);
    hymo_model_free(mc);
    hymo_model_free(m);
}

/* ---------------------------------------------------------------- */
/* 5. hydraulic subsystem                                           */

static void test_subsystem(void **state)
{
    (void)state;
    hymo_model *m = test_load_model(LINE);
    hymo_error err;
    hymo_error_clear(&err);
    hymo_circuit circ;
    hymo_circuit_part *parts = NULL;
    int n_parts = 0;
    assert_int_equal(hymo_circuit_init(&circ, m, NULL, &err), HYMO_OK);
    assert_int_equal(hymo_circuit_partition(m, &parts, &n_parts, &err), HYMO_OK);
    assert_int_equal(n_parts, 1);
    static const double t_chk[2] = {0.21, 0.31};
    /* the reference: the monolithic runs at dt/16 and dt/32 extrapolated
     * (Richardson, second order) */
    double ref[2][2], ref16[2];
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    for (int c = 0; c < 2; ++c) {
        opt.t_end = t_chk[c];
        opt.dt = 1e-3 / 16.0;
        run(m, &opt, ref16, NULL, NULL);
        opt.dt = 1e-3 / 32.0;
        run(m, &opt, ref[c], NULL, NULL);
        for (int i = 0; i < 2; ++i) ref[c][i] += (ref[c][i] - ref16[i]) / 3.0;
    }
    const double p0[2] = {1.0e6, 1.0e5}, u0[1] = {0.0};
    static const struct {
        hymo_hyd_integrator_kind kind;
        double h0, lo, hi; /* error ratio per halving of h */
    } kinds[] = {{HYMO_HYD_TRAPEZOIDAL, 1e-3, 3.0, 5.5}, {HYMO_HYD_RK4, 2.5e-4, 8.0, 40.0}};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; ++k) {
        double e[3][2];
        for (int r = 0; r < 3; ++r) {
            const double h = kinds[k].h0 / (double)(1 << r);
            hymo_hyd_sub *sub = NULL;
            if (hymo_hyd_sub_create(m, &circ, &parts[0], kinds[k].kind, h, 1e-4, 1e-9, 20, p0, u0, &sub, &err) !=
                HYMO_OK)
                fail_msg("%s", err.message);
            double t = 0.0;
            for (int c = 0; c < 2; ++c) { /* communication steps of 10 ms */
                for (; t < t_chk[c] - 1e-12; t += 0.01)
                    if (hymo_hyd_sub_do_step(sub, t, 0.01, &err) != HYMO_OK) fail_msg("%s", err.message);
                const double *p = hymo_hyd_sub_p(sub);
                e[r][c] = fmax(fabs(p[0] - ref[c][0]), fabs(p[1] - ref[c][1]));
            }
            print_message("hydraulic subsystem %s, h %.4g ms: |p - p_ref| at 0.21 s %.4g Pa, 0.31 s %.4g Pa\n",
                          hymo_hyd_integrator_name(kinds[k].kind), h * 1e3, e[r][0], e[r][1]);
            hymo_hyd_sub_free(sub);
        }
        for (int r = 1; r < 3; ++r)
            for (int c = 0; c < 2; ++c) {
                const double ratio = e[r - 1][c] / e[r][c];
                print_message("  halving %d at %.2f s: %.2fx\n", r, t_chk[c], ratio);
                assert_true(ratio > kinds[k].lo && ratio < kinds[k].hi);
            }
    }
    hymo_circuit_parts_free(parts, n_parts);
    hymo_circuit_free(&circ);
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inputs),
        cmocka_unit_test(test_steady),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_newton),
        cmocka_unit_test(test_subsystem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
