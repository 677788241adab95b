/* Relief and check valves, on data/relief_demo.yaml:
 *
 *   1. equations: the relief and check valve flows against their laws
 *      (docs/model-format.md), hand-computed, on every branch; the check
 *      valve blocks reverse flow and opens at its cracking pressure;
 *   2. steady state by hand: the pump line, fed from a 20 MPa source
 *      through throttle_p and protected by relief1, settles where
 *      Ct sqrt(p_s - p) = k_g (p - p_t - p_crack) + G_leak (p - p_V1),
 *      i.e. it holds p_crack + Q/k_g above tank (the check valve's small
 *      leakage into the stalled piston volume shifts it by ~300 Pa);
 *   3. derivatives: hymo_circuit_derivatives against central finite
 *      differences of hymo_circuit_eval on every branch of both valves,
 *      also with the switching states forced against the geometry (the
 *      branch extended past its switching point, as within a step);
 *   4. events: the check valve's opening and full opening and the relief
 *      valve's opening are located (hymo_sim_events), at the same times
 *      as IDA's root functions (rtol 1e-11) to second order, and the
 *      trapezoidal run stays second order across them: over 0..3 s (5
 *      events, the relief valve opening at 2.36 s) the errors at dt = 1,
 *      0.5, 0.25 ms against a dt = 1/32 ms run fall ~4x per halving.
 *      Measured: event times 6.3e-6, 1.6e-6, 4.0e-7 s from IDA's; final
 *      pressures 0.239, 0.0597, 0.0149 Pa; strokes 1.3e-10, 3.3e-11,
 *      7.9e-12 m (4.0x, 4.0x per halving). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "circuit.h"
#include "hymo/sim.h"
#include "test_util.h"

#define MAX_EV 16
#define DT0 1e-3 /* coarsest dt of the event test */

typedef struct {
    hymo_model *m;
    hymo_circuit circ;
    double s0[1];
} fixture;

static void fixture_init(fixture *fx)
{
    fx->m = test_load_model("relief_demo.yaml");
    assert_int_equal(fx->m->n_relief_valves, 1);
    assert_int_equal(fx->m->n_check_valves, 1);
    test_initial_lengths(fx->m, fx->s0, 1);
    hymo_error err;
    assert_int_equal(hymo_circuit_init(&fx->circ, fx->m, fx->s0, &err), HYMO_OK);
}

static void fixture_free(fixture *fx)
{
    hymo_circuit_free(&fx->circ);
    hymo_model_free(fx->m);
}

/* 1. the laws, by hand */
static void test_equations(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx);
    const hymo_model *m = fx.m;
    const int iline = test_volume_state(m, "Vline"), i1 = test_volume_state(m, "V1");
    const hymo_relief_valve *rv = &m->relief_valves[0];
    const hymo_check_valve *cv = &m->check_valves[0];
    const double pt = 1e5, ptr = m->fluid.p_transition;
    assert_close(rv->p_crack, 12e6, 0.0);
    assert_close(rv->gradient, 1e-10, 0.0);
    assert_close(cv->Cmax, 0.7 * 4e-6 * sqrt(2.0 / 850.0), 1e-22);
    assert_close(cv->p_open, 0.3e6, 0.0);
    double p[3] = {5e6, 1e5, 0}, G;
    /* relief: closed below p_crack (dp = p - p_t), k_g (dp - p_crack) above */
    p[iline] = pt + 11.9e6;
    assert_close(hymo_relief_flow_d(&fx.circ, m, 0, p, &G), 0.0, 0.0);
    assert_close(G, 0.0, 0.0);
    p[iline] = pt + 12.5e6;
    assert_close(hymo_relief_flow_d(&fx.circ, m, 0, p, &G), 1e-10 * 0.5e6, 1e-18);
    assert_close(G, 1e-10, 0.0);
    /* check valve: reverse and below cracking: only the leakage G_leak dp */
    const double gl = cv->leakage;
    assert_close(gl, 1e-13, 0.0);
    p[i1] = 5e6;
    p[iline] = 4e6; /* reverse: blocked */
    assert_close(hymo_check_flow_d(&fx.circ, m, 0, p, &G), gl * -1e6, 1e-21);
    assert_close(G, gl, 0.0);
    p[iline] = 5e6 + 0.299e6; /* just below cracking */
    assert_close(hymo_check_flow_d(&fx.circ, m, 0, p, &G), gl * 0.299e6, 1e-21);
    /* opening: x = (dp - p_crack)/p_open, Q = x C sqrt(dp) (turbulent) */
    p[iline] = 5e6 + 0.3e6 + 0.12e6;
    assert_close(hymo_check_flow_d(&fx.circ, m, 0, p, &G), 0.4 * cv->Cmax * sqrt(0.42e6) + gl * 0.42e6, 1e-15);
    /* fully open: C sqrt(dp) */
    p[iline] = 5e6 + 2e6;
    assert_close(hymo_check_flow_d(&fx.circ, m, 0, p, &G), cv->Cmax * sqrt(2e6) + gl * 2e6, 1e-15);
    assert_true(ptr < 0.3e6); /* the opening branch above is turbulent */
    /* with switching states, each valve follows its own state (at
     * sw_base[RELIEF] + r, sw_base[CHECK] + 2k, + 1), whatever the sign of its g: the
     * branch's law extended past its switching point */
    {
        const int nsw = hymo_circuit_n_switches(m);
        assert_int_equal(nsw, 2 * m->n_cylinders + 1 + 2);
        assert_int_equal(fx.circ.sw_base[HYMO_ELEMENT_RELIEF], 2);
        assert_int_equal(fx.circ.sw_base[HYMO_ELEMENT_CHECK], 3);
        unsigned char sw[5] = {1, 1, 0, 0, 0}; /* both damper states set, valves closed */
        hymo_circuit cs = fx.circ;
        cs.sw = sw;
        p[iline] = pt + 12.5e6; /* relief open by its g, closed by its state */
        assert_close(hymo_relief_flow_d(&cs, m, 0, p, &G), 0.0, 0.0);
        sw[0] = sw[1] = 0;
        sw[2] = 1;
        p[iline] = pt + 11.5e6; /* closed by g, open by state: k_g (dp - p_crack) < 0 */
        assert_close(hymo_relief_flow_d(&cs, m, 0, p, &G), 1e-10 * -0.5e6, 1e-18);
        p[i1] = 5e6;
        p[iline] = 5e6 + 0.2e6; /* check valve below cracking by g; opening by state */
        sw[3] = 1;
        /* below cracking the opening law continues as its tangent at the
         * cracking point, C x g(p_crack) */
        assert_close(hymo_check_flow_d(&cs, m, 0, p, &G),
                     (-0.1e6 / 0.3e6) * cv->Cmax * sqrt(0.3e6) + gl * 0.2e6, 1e-15);
        /* opening by state with dp < 0: the continuation keeps the sign of
         * x (flow b -> a) and a positive conductance */
        p[iline] = 5e6 - 0.5e6;
        const double xneg = (-0.5e6 - 0.3e6) / 0.3e6;
        assert_close(hymo_check_flow_d(&cs, m, 0, p, &G), xneg * cv->Cmax * sqrt(0.3e6) + gl * -0.5e6, 1e-15);
        assert_true(G > 0.0);
        p[iline] = 5e6 + 0.2e6;
        sw[4] = 1; /* fully open by state */
        assert_close(hymo_check_flow_d(&cs, m, 0, p, &G), cv->Cmax * sqrt(0.2e6) + gl * 0.2e6, 1e-15);
        sw[3] = sw[4] = 0;
        sw[0] = sw[1] = sw[2] = 1;
        p[iline] = 5e6 + 2e6; /* fully open by g; closed by state */
        assert_close(hymo_check_flow_d(&cs, m, 0, p, &G), gl * 2e6, 1e-21);
        /* g at this point: Δp - p_crack per valve, after the cylinder's two */
        double g[5];
        p[iline] = pt + 12.5e6;
        hymo_circuit_switching(&fx.circ, m, fx.s0, p, NULL, g);
        assert_close(g[2], 0.5e6, 1e-6);
        assert_close(g[3], p[iline] - 5e6 - 0.3e6, 1e-6);
        assert_close(g[4], p[iline] - 5e6 - 0.6e6, 1e-6);
    }
    /* the circuit sums them: Vline's net inflow = throttle - relief - check */
    hymo_circuit c2 = fx.circ;
    double pdot[3], s[1] = {fx.s0[0]}, sd[1] = {0.0};
    p[iline] = pt + 12.5e6;
    p[i1] = 5e6;
    p[test_volume_state(m, "V2")] = 1e5;
    assert_int_equal(hymo_circuit_eval(&c2, m, s, sd, p, NULL, NULL, pdot, NULL, NULL), 0);
    const double Ct = 0.8e-6 * sqrt(2.0 / 850.0);
    const double q_in = Ct * sqrt(20e6 - p[iline]) - 1e-10 * 0.5e6 - cv->Cmax * sqrt(p[iline] - 5e6) - gl * (p[iline] - 5e6);
    const double V = 1e-3, Be = 1.0 / (1.0 / 1.5e9 + 1.0 / 1.5e8);
    assert_close(pdot[iline], Be / V * q_in, 1e-9 * fabs(Be / V * q_in));
    fixture_free(&fx);
}

/* runs m to t_end with dt; final p, s into out (p[0..np), s) and the event
 * times into t_ev (returns their number) */
static int run(const hymo_model *m, const hymo_run_options *opt, double *out, double *t_ev, long *events)
{
    int seen;
    hymo_sim *sim = test_sim_run(m, opt, t_ev, MAX_EV, &seen);
    const int np = hymo_sim_np(sim);
    memcpy(out, hymo_sim_p(sim), (size_t)np * sizeof(double));
    out[np] = hymo_sim_actuator_length(sim)[0];
    if (events) *events = hymo_sim_events(sim, NULL);
    hymo_sim_free(sim);
    return seen;
}

/* 2. steady state by hand */
static void test_steady_state(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("relief_demo.yaml");
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.t_end = 5.0; /* the line has settled (the piston creeps on by the check valve's leakage) */
    double out[4];
    long events;
    run(m, &opt, out, NULL, &events);
    const int iline = test_volume_state(m, "Vline"), i1 = test_volume_state(m, "V1");
    /* Ct sqrt(ps - p) = kg (p - pt - pc) + G_leak (p - p_V1): bisection */
    const double Ct = 0.8e-6 * sqrt(2.0 / 850.0), kg = 1e-10, ps = 20e6, pt = 1e5, pc = 12e6, gl = 1e-13;
    assert_close(m->check_valves[0].leakage, gl, 0.0);
    double lo = pt + pc, hi = ps;
    for (int k = 0; k < 200; ++k) {
        const double p = 0.5 * (lo + hi);
        if (Ct * sqrt(ps - p) > kg * (p - pt - pc) + gl * (p - out[i1])) lo = p;
        else hi = p;
    }
    const double p_line = 0.5 * (lo + hi), Q_relief = kg * (p_line - pt - pc);
    print_message("Vline %.9g Pa, by hand %.9g Pa = p_t + p_crack + Q/k_g (relief Q = %.6g m^3/s, check valve "
                  "leakage %.3g m^3/s); V1 %.9g Pa; %ld events\n",
                  out[iline], p_line, Q_relief, gl * (p_line - out[i1]), out[i1], events);
    assert_close(out[iline], p_line, 5.0);     /* Pa */
    assert_close(out[iline], pt + pc + Ct * sqrt(ps - out[iline]) / kg, 600.0); /* leakage 3e-8 m^3/s: ~300 Pa */
    assert_true(out[iline] - out[i1] < 0.3e6); /* check valve closed: V1 above the crack point */
    assert_true(events >= 5);
    hymo_model_free(m);
}

/* 3. derivatives against central differences */
static void fd_check(fixture *fx, const double *p0, const unsigned char *sw)
{
    const hymo_model *m = fx->m;
    hymo_circuit c = fx->circ;
    c.sw = sw;
    double s[1] = {fx->s0[0]}, sd[1] = {0.01};
    hymo_circuit_derivs d;
    hymo_error err;
    assert_int_equal(hymo_circuit_derivs_alloc(&d, m, 3, 0, 1, &err), HYMO_OK);
    double p[3];
    memcpy(p, p0, sizeof p);
    assert_int_equal(hymo_circuit_derivatives(&c, m, s, sd, p, NULL, 1, &d), 0);
    for (int k = 0; k < 3; ++k) {
        double pp[3], pm[3], fp[3], fm[3];
        const double h = 1e-6 * fabs(p0[k]);
        memcpy(pp, p0, sizeof pp);
        memcpy(pm, p0, sizeof pm);
        pp[k] += h;
        pm[k] -= h;
        assert_int_equal(hymo_circuit_eval(&c, m, s, sd, pp, NULL, NULL, fp, NULL, NULL), 0);
        assert_int_equal(hymo_circuit_eval(&c, m, s, sd, pm, NULL, NULL, fm, NULL, NULL), 0);
        for (int i = 0; i < 3; ++i) {
            const double fd = (fp[i] - fm[i]) / (2.0 * h), an = hymo_sparse_get(&d.dpdot_dp, i, k);
            const double scale = fabs(an) + fabs(fd) + 1e-3;
            if (fabs(fd - an) > 1e-6 * scale)
                fail_msg("d pdot_%d / d p_%d: analytic %.10g, finite difference %.10g (sw %s)", i, k, an, fd,
                         sw ? "forced" : "geometry");
        }
    }
    hymo_circuit_derivs_free(&d);
}

static void test_derivatives(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx);
    const hymo_model *m = fx.m;
    const int iline = test_volume_state(m, "Vline"), i1 = test_volume_state(m, "V1"),
              i2 = test_volume_state(m, "V2");
    /* (line above V1 by, relief open?) on every branch: check closed /
     * reverse, opening, fully open; relief closed, open */
    const double lines[] = {4e6, 5.1e6, 5.33e6, 5.45e6, 5.7e6, 9e6, 12.05e6, 13e6, 14e6};
    int checked = 0;
    for (size_t j = 0; j < sizeof lines / sizeof lines[0]; ++j) {
        double p[3];
        p[i1] = 5e6;
        p[i2] = 0.7e6;
        p[iline] = lines[j];
        fd_check(&fx, p, NULL);
        /* branches forced both ways: the extended laws have the same derivatives */
        const int nsw = hymo_circuit_n_switches(m);
        assert_int_equal(nsw, 2 + 1 + 2);
        unsigned char sw[5];
        for (int b = 0; b < 8; ++b) {
            memset(sw, 0, sizeof sw);
            sw[fx.circ.sw_base[HYMO_ELEMENT_RELIEF]] = b & 1;
            sw[fx.circ.sw_base[HYMO_ELEMENT_CHECK]] = (b >> 1) & 1;
            sw[fx.circ.sw_base[HYMO_ELEMENT_CHECK] + 1] = (b >> 2) & 1;
            fd_check(&fx, p, sw);
            ++checked;
        }
    }
    print_message("derivatives: %d forced-branch points and %d geometric points agree with central differences "
                  "(1e-6 relative)\n",
                  checked, (int)(sizeof lines / sizeof lines[0]));
    fixture_free(&fx);
}

/* 4. events: located, at IDA's times, second order across them */
static void test_events(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("relief_demo.yaml");
    const double t_end = 3.0; /* the demo's: the relief valve opens at ~2.2 s */
    hymo_run_options ida;
    test_ida_options(&ida, m, t_end);
    double t_ida[MAX_EV], t_run[MAX_EV], y_ida[4], y_ref[4], y[3][4];
    const int n_ida = run(m, &ida, y_ida, t_ida, NULL);
    test_print_ida_events(n_ida, t_ida);
    assert_true(n_ida >= 3);

    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.t_end = t_end;
    opt.dt = DT0 / 32.0;
    long ev_ref;
    double t_ref[MAX_EV];
    const int n_ref = run(m, &opt, y_ref, t_ref, &ev_ref);
    for (int i = 0; i < n_ref; ++i) print_message("  dt 1/32 ms event %d: %.9f s\n", i, t_ref[i]);
    double err_p[3], err_s[3], err_t[3];
    for (int r = 0; r < 3; ++r) {
        opt.dt = DT0 / (double)(1 << r);
        long ev;
        const int n = run(m, &opt, y[r], t_run, &ev);
        assert_int_equal(n, n_ida);
        assert_int_equal(ev, n_ida);
        err_t[r] = 0.0;
        for (int i = 0; i < n; ++i) {
            print_message("  event %d: %.9f s (IDA %.9f s)\n", i, t_run[i], t_ida[i]);
            if (!isnan(t_run[i])) err_t[r] = fmax(err_t[r], fabs(t_run[i] - t_ida[i]));
        }
        err_p[r] = 0.0;
        for (int i = 0; i < 3; ++i) err_p[r] = fmax(err_p[r], fabs(y[r][i] - y_ref[i]));
        err_s[r] = fabs(y[r][3] - y_ref[3]);
        print_message("dt %.4g ms: %ld events, max |t_ev - t_IDA| %.3g s, at t = %g s: max |p - p_ref| %.3g Pa, "
                      "|s - s_ref| %.3g m (dt/32 ms run); |p - p_IDA| %.3g Pa\n",
                      opt.dt * 1e3, ev, err_t[r], t_end, err_p[r], err_s[r], fabs(y[r][2] - y_ida[2]));
    }
    for (int r = 1; r < 3; ++r) {
        print_message("halving %d: event time %.2fx, pressure %.2fx, stroke %.2fx\n", r, err_t[r - 1] / err_t[r],
                      err_p[r - 1] / err_p[r], err_s[r - 1] / err_s[r]);
        assert_true(err_t[r - 1] / err_t[r] > 3.0);
        assert_true(err_p[r - 1] / err_p[r] > 3.0);
        assert_true(err_s[r - 1] / err_s[r] > 3.0);
    }
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equations),
        cmocka_unit_test(test_steady_state),
        cmocka_unit_test(test_derivatives),
        cmocka_unit_test(test_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
