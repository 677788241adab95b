/* Flow elements of the valves: fixed-displacement
 * pumps, pressure-compensated flow control valves, 4/3 valve edges with
 * overlap (dead band) and leakage; on data/pump_demo.yaml and
 * tests/models/valves_line.yaml (docs/model-format.md):
 *
 *   1. pump: Q = eta_v D n - C_L dp and its power by hand; pump_demo's pump
 *      line, in the valve's dead band, holds p_t + p_crack + Q/k_g with
 *      Q = eta_v D n - C_L dp, solved by hand;
 *   2. flow control valve: Q = Q_set for every dp >= dp_c (0.1 .. 30 MPa
 *      above), Q_set g(dp)/g(dp_c) below, reverse flow; on a line fed from
 *      a source through the valve into a volume drained by a throttle, the
 *      volume settles at p_t + (Q_set/C_t)^2 for every supply pressure that
 *      leaves the valve regulating, and at the hand-solved orifice balance
 *      below;
 *   3. dead band: each edge passes only its leakage (none without one) for
 *      |U| <= u0, C (U - u0) g + G dp past it, by hand; a valve with
 *      `overlap: 0` and equal `edges` has the plain valve's flows; pump_demo
 *      with its reference held inside the band never moves the boom;
 *   4. derivatives: hymo_circuit_derivatives (pressure and spool columns)
 *      against central differences on every branch of every edge, the flow
 *      control valve and the relief valve, with the switching states also
 *      forced against the geometry; the fast Jacobian run agrees with the
 *      numeric one;
 *   5. events: valves_line's relief, edge and flow control events are
 *      located (hymo_sim_events) at IDA's root-function times (rtol 1e-11)
 *      to second order, the edges' at the closed-form time where the spool
 *      (first-order lag of a ramp) reaches its overlap, and the trapezoidal run stays second order across
 *      them against a dt/32 run (the SciPy solution of the same line is
 *      tests/independent/test_valves.py). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit.h"
#include "hymo/sim.h"
#include "test_util.h"

#define MAX_EV 32

typedef struct {
    hymo_model *m;
    hymo_circuit circ;
    double s0[4];
} fixture;

static void fixture_init(fixture *fx, const char *file)
{
    fx->m = test_load_model(file);
    test_initial_lengths(fx->m, fx->s0, 4);
    hymo_error err;
    assert_int_equal(hymo_circuit_init(&fx->circ, fx->m, fx->s0, &err), HYMO_OK);
}

static void fixture_free(fixture *fx)
{
    hymo_circuit_free(&fx->circ);
    hymo_model_free(fx->m);
}

/* Runs m to t_end; final p (np), U (nu), s (na) into out; event times
 * into t_ev (returns their number, NAN for all but the last of several
 * in one step). */
static int run(const hymo_model *m, const hymo_run_options *opt, double *out, double *t_ev, long *events)
{
    int seen;
    hymo_sim *sim = test_sim_run(m, opt, t_ev, MAX_EV, &seen);
    const int np = hymo_sim_np(sim), nu = hymo_sim_nu(sim), na = hymo_sim_na(sim);
    memcpy(out, hymo_sim_p(sim), (size_t)np * sizeof(double));
    memcpy(out + np, hymo_sim_u(sim), (size_t)nu * sizeof(double));
    memcpy(out + np + nu, hymo_sim_actuator_length(sim), (size_t)na * sizeof(double));
    if (events) *events = hymo_sim_events(sim, NULL);
    hymo_sim_free(sim);
    return seen;
}

static hymo_model *load_text(const char *text) { return test_load_text(text, "test_valves"); }

/* a file's text with one substring replaced (must occur once) */
static char *replaced(const char *file, const char *from, const char *to)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", HYMO_DATA_DIR, file);
    char *s = test_read_file(path);
    char *at = strstr(s, from);
    if (!at || strstr(at + 1, from)) fail_msg("'%s' not once in %s", from, file);
    size_t n = strlen(s) - strlen(from) + strlen(to) + 1;
    char *out = malloc(n);
    assert_non_null(out);
    snprintf(out, n, "%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
    free(s);
    return out;
}

/* ---------------------------------------------------------------- */
/* 1. pump                                                          */

static void test_pump(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx, "pump_demo.yaml");
    const hymo_model *m = fx.m;
    assert_int_equal(m->n_pumps, 1);
    const hymo_pump *pu = &m->pumps[0];
    const double D = 1e-5, n = 25.0, eta = 0.95, CL = 2e-13, pt = 1e5;
    assert_close(pu->displacement, D, 0.0);
    assert_close(pu->speed, n, 0.0); /* 1500 rpm */
    assert_close(pu->eta_v, eta, 0.0);
    assert_close(pu->leakage, CL, 0.0);
    const int ip = test_volume_state(m, "Vp");
    double p[4] = {0, 0, 0, 0}, G, Q;
    p[ip] = 12e6;
    assert_close(hymo_pump_flow_d(&fx.circ, m, 0, p, &G), eta * D * n - CL * (12e6 - pt), 1e-18);
    assert_close(G, CL, 0.0);
    assert_close(hymo_pump_power(&fx.circ, m, 0, p, &Q), (12e6 - pt) * (eta * D * n - CL * (12e6 - pt)), 1e-9);
    assert_close(Q, eta * D * n - CL * (12e6 - pt), 1e-18);
    /* the line holds p_t + p_crack + Q/k_g, Q = eta D n - C_L d, d = p - p_t:
     * k_g (d - p_crack) = eta D n - C_L d */
    const double kg = 1e-9, pc = 15e6;
    assert_close(m->relief_valves[0].gradient, kg, 0.0);
    assert_close(m->relief_valves[0].p_crack, pc, 0.0);
    const double d = (eta * D * n + kg * pc) / (kg + CL), p_line = pt + d;
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.t_end = 1.0; /* the spool is in its dead band (U_ref = 0) until 1 s */
    double out[8];
    run(m, &opt, out, NULL, NULL);
    const double Qp = eta * D * n - CL * d;
    print_message("pump line %.9g Pa, by hand %.9g Pa = p_t + p_crack + Q/k_g (Q = %.6g m^3/s, eta_v %.5f, "
                  "power %.6g W)\n",
                  out[ip], p_line, Qp, Qp / (D * n), d * Qp);
    assert_close(out[ip], p_line, 1e-3); /* Pa */
    assert_close(out[ip], pt + pc + Qp / kg, 1e-3);
    fixture_free(&fx);
}

/* ---------------------------------------------------------------- */
/* 2. flow control valve                                            */

static const char *const k_fc_line =
    "format: 1\nname: fc_line\ngravity: [0, -9.81, 0]\nsimulation: {dt: 1.0e-3, t_end: 0.5}\n"
    "bodies:\n  - name: pend\n    joint: {name: z1, type: revolute, parent: ground, location: [0, 0, 0], "
    "axis: [0, 0, 1], initial: -90 deg}\n    mass: 1\n    com: [0.5, 0, 0]\n    inertia: [0, 0.1, 0.1]\n"
    "hydraulics:\n  fluid: {bulk_modulus: 1.5e9, density: 850}\n  sources:\n"
    "    - {name: ps, pressure: %.17g}\n    - {name: tank, pressure: 1.0e5}\n"
    "  volumes:\n    - {name: V, parts: [{volume: 1.0e-4, bulk_modulus: 1.0e9}], initial_pressure: 1.0e5}\n"
    "  throttles:\n    - {name: th, from: V, to: tank, flow_coefficient: 5.0e-8}\n"
    "  flow_control_valves:\n    - {name: fc1, from: ps, to: V, set_flow: 1.0e-4, compensator_pressure: 1.0e6}\n";

static void test_flow_control(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx, "pump_demo.yaml");
    const hymo_model *m = fx.m;
    assert_int_equal(m->n_flow_controls, 1);
    const double qs = 1e-4, dpc = 1e6, ptr = m->fluid.p_transition;
    assert_close(m->flow_controls[0].q_set, qs, 0.0);
    assert_close(m->flow_controls[0].dp_c, dpc, 0.0);
    const int ia = test_volume_state(m, "VA"), i1 = test_volume_state(m, "V1");
    double p[4] = {15e6, 0, 0, 1e5}, G;
    /* regulating: Q_set for every dp >= dp_c */
    int held = 0;
    for (double dp = dpc; dp <= 30e6; dp += 0.1e6, ++held) {
        p[ia] = 2e6 + dp;
        p[i1] = 2e6;
        assert_close(hymo_flow_control_flow_d(&fx.circ, m, 0, p, &G), qs, 0.0);
        assert_close(G, 0.0, 0.0);
    }
    /* below: the metering orifice, Q_set sqrt(dp/dp_c) (turbulent) */
    p[ia] = 2e6 + 0.64e6;
    assert_close(hymo_flow_control_flow_d(&fx.circ, m, 0, p, &G), qs * 0.8, 1e-18);
    assert_close(G, qs / sqrt(dpc) * 0.5 / sqrt(0.64e6), 1e-22);
    /* laminar below p_tr: Q_set (dp/sqrt(p_tr))/sqrt(dp_c) */
    p[ia] = 2e6 + 0.5 * ptr;
    assert_close(hymo_flow_control_flow_d(&fx.circ, m, 0, p, &G), qs * 0.5 * sqrt(ptr) / sqrt(dpc), 1e-18);
    /* reverse: through the orifice backwards */
    p[ia] = 2e6 - 0.25e6;
    assert_close(hymo_flow_control_flow_d(&fx.circ, m, 0, p, &G), -qs * 0.5, 1e-18);
    /* forced branches: regulating below dp_c, orifice above */
    {
        const int nsw = hymo_circuit_n_switches(m);
        assert_int_equal(nsw, 2 * 1 + 1 + 0 + 4 * 1 + 1);
        assert_int_equal(fx.circ.sw_base[HYMO_ELEMENT_FLOW_CONTROL], nsw - 1);
        unsigned char sw[8] = {0};
        hymo_circuit cs = fx.circ;
        cs.sw = sw;
        sw[fx.circ.sw_base[HYMO_ELEMENT_FLOW_CONTROL]] = 1;
        p[ia] = 2e6 + 0.64e6;
        assert_close(hymo_flow_control_flow_d(&cs, m, 0, p, &G), qs, 0.0);
        sw[fx.circ.sw_base[HYMO_ELEMENT_FLOW_CONTROL]] = 0;
        p[ia] = 2e6 + 4e6;
        assert_close(hymo_flow_control_flow_d(&cs, m, 0, p, &G), qs * 2.0, 1e-18);
    }
    print_message("flow control: Q = Q_set exactly at %d drops from dp_c to 30 MPa\n", held);
    fixture_free(&fx);

    /* steady states on a line: source ps -> fc1 -> V -> throttle -> tank */
    const double Ct = 5e-8, pt = 1e5, p_reg = pt + (qs / Ct) * (qs / Ct);
    const double supplies[] = {5.2e6, 6e6, 10e6, 20e6, 30e6, 4.6e6};
    for (size_t k = 0; k < sizeof supplies / sizeof supplies[0]; ++k) {
        const double ps = supplies[k];
        char text[2048];
        snprintf(text, sizeof text, k_fc_line, ps);
        hymo_model *ml = load_text(text);
        assert_int_equal(hymo_circuit_n_switches(ml), 1); /* the flow control valve alone switches */
        hymo_run_options opt;
        hymo_run_options_default(&opt, ml);
        double out[4];
        long ev;
        run(ml, &opt, out, NULL, &ev);
        double expect = p_reg;
        if (ps - p_reg < dpc) { /* orifice: Q_set^2 (ps - p)/dp_c = Ct^2 (p - pt) */
            const double a = qs * qs / dpc;
            expect = (a * ps + Ct * Ct * pt) / (a + Ct * Ct);
            assert_true(ps - expect < dpc && ps - expect > ptr && expect - pt > ptr);
        }
        print_message("supply %5.1f MPa: V %.9g Pa, by hand %.9g Pa (%s), %ld events\n", ps / 1e6, out[0], expect,
                      ps - p_reg >= dpc ? "regulating" : "orifice", ev);
        assert_close(out[0], expect, 1e-3);
        hymo_model_free(ml);
    }
}

/* ---------------------------------------------------------------- */
/* 3. dead band                                                     */

static void test_dead_band(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx, "../tests/models/valves_line.yaml");
    const hymo_model *m = fx.m;
    const hymo_valve_edges *ve = &m->valve_edges[0];
    assert_true(ve->on);
    const double C[4] = {2e-8, 3e-8, 2e-8, 3e-8}, u0[4] = {1.0, 1.5, 1.0, 1.5}, gl = 1e-13;
    for (int e = 0; e < 4; ++e) {
        assert_close(ve->C[e], C[e], 0.0);
        assert_close(ve->u0[e], u0[e], 0.0);
    }
    assert_close(ve->leakage, gl, 0.0);
    assert_close(m->valves[0].Cv, 3e-8, 0.0);
    const int ip = test_volume_state(m, "Vp"), ia = test_volume_state(m, "VA"), ib = test_volume_state(m, "VB");
    double p[3];
    p[ip] = 10e6;
    p[ia] = 4e6;
    p[ib] = 3e6;
    const double pt = 1e5;
    /* edge drops: PA Vp-VA, BT VB-T, PB Vp-VB, AT VA-T */
    const double dp[4] = {p[ip] - p[ia], p[ib] - pt, p[ip] - p[ib], p[ia] - pt};
    const double Us[] = {-3.0, -1.6, -1.5, -1.2, -1.0, -0.4, 0.0, 0.4, 0.999, 1.0, 1.2, 1.5, 1.7, 3.0};
    int inside = 0;
    for (size_t j = 0; j < sizeof Us / sizeof Us[0]; ++j) {
        const double U = Us[j];
        for (int e = 0; e < 4; ++e) {
            double G, GU;
            const double q = hymo_valve_edge_flow_d(&fx.circ, m, 0, e, U, p, &G, &GU);
            const double x = fmax(0.0, (e < 2 ? U : -U) - u0[e]);
            if (x == 0.0) ++inside;
            assert_close(q, C[e] * x * sqrt(dp[e]) + gl * dp[e], 1e-15);
        }
    }
    /* pump_demo's valve has no leakage: nothing flows inside the band */
    fixture fd;
    fixture_init(&fd, "pump_demo.yaml");
    double pd[4] = {15e6, 3e6, 2e6, 1e6}, G, GU;
    for (double U = -0.999; U <= 0.999; U += 0.111)
        for (int e = 0; e < 4; ++e) {
            assert_close(hymo_valve_edge_flow_d(&fd.circ, fd.m, 0, e, U, pd, &G, &GU), 0.0, 0.0);
            assert_close(GU, 0.0, 0.0);
        }
    fixture_free(&fd);
    print_message("dead band: %d edge/spool points inside the band pass only the leakage\n", inside);

    /* overlap 0 and equal edges: the plain valve's flows, bit for bit */
    {
        char *plain = replaced("pump_demo.yaml", "edges: {PA: 2.0e-8, BT: 3.0e-8, PB: 2.0e-8, AT: 3.0e-8},\n       overlap: 1.0,",
                               "flow_coefficient: 2.0e-8,");
        char *edged = replaced("pump_demo.yaml", "edges: {PA: 2.0e-8, BT: 3.0e-8, PB: 2.0e-8, AT: 3.0e-8},\n       overlap: 1.0,",
                               "edges: {PA: 2.0e-8, BT: 2.0e-8, PB: 2.0e-8, AT: 2.0e-8}, overlap: 0,");
        hymo_model *m1 = load_text(plain), *m2 = load_text(edged);
        assert_false(m1->valve_edges[0].on);
        assert_true(m2->valve_edges[0].on);
        hymo_circuit c1, c2;
        hymo_error err;
        assert_int_equal(hymo_circuit_init(&c1, m1, fd.s0, &err), HYMO_OK);
        assert_int_equal(hymo_circuit_init(&c2, m2, fd.s0, &err), HYMO_OK);
        double s[1] = {0.51}, sd[1] = {0.01}, pp[4] = {15e6, 3e6, 2e6, 1e6}, u[1], f1[4], f2[4];
        /* the edge flows (as the sensors report them) of the plain valve:
         * Cv |U| g(dp) on the edges its sign opens, 0 on the others */
        for (double U = -4.0; U <= 4.0; U += 0.5)
            for (int e = 0; e < 4; ++e) {
                int nf, nt;
                double G, GU;
                hymo_valve_edge_nodes(&m1->valves[0], e, &nf, &nt);
                const double dpe = hymo_node_pressure(m1, nf, pp) - hymo_node_pressure(m1, nt, pp);
                const int open = (e < 2) == (U >= 0.0);
                assert_close(hymo_valve_edge_flow_d(&c1, m1, 0, e, U, pp, &G, &GU),
                             open ? 2e-8 * fabs(U) * hymo_orifice_g(dpe, m1->fluid.p_transition) : 0.0, 1e-18);
            }
        for (u[0] = -4.0; u[0] <= 4.0; u[0] += 0.37) {
            hymo_circuit_eval(&c1, m1, s, sd, pp, u, NULL, f1, NULL, NULL);
            hymo_circuit_eval(&c2, m2, s, sd, pp, u, NULL, f2, NULL, NULL);
            for (int i = 0; i < 4; ++i) assert_close(f1[i], f2[i], 1e-15 * fabs(f1[i]));
        }
        hymo_circuit_free(&c1);
        hymo_circuit_free(&c2);
        hymo_model_free(m1);
        hymo_model_free(m2);
        free(plain);
        free(edged);
    }

    /* an edged valve alone has its 4 switching functions (located events),
     * a plain one none */
    {
        char text[4096];
        snprintf(text, sizeof text, k_fc_line, 10e6);
        char *cut = strstr(text, "  flow_control_valves:");
        assert_non_null(cut);
        snprintf(cut, sizeof text - (size_t)(cut - text), "%s",
                 "  valves:\n    - {name: d, type: 4/3, P: ps, T: tank, A: V, B: W, flow_coefficient: 1e-8, "
                 "overlap: 0.5, time_constant: 0.01, signal: u}\n");
        char *vol = strstr(text, "  throttles:");
        char full[4096];
        snprintf(full, sizeof full, "%.*s    - {name: W, parts: [{volume: 1.0e-4, bulk_modulus: 1.0e9}], "
                 "initial_pressure: 1.0e5}\n%s", (int)(vol - text), text, vol);
        char *sig = strstr(full, "bodies:");
        char with_sig[4096];
        snprintf(with_sig, sizeof with_sig, "%.*ssignals:\n  - {name: u, points: [[0, 0], [0.1, 2]]}\n%s",
                 (int)(sig - full), full, sig);
        hymo_model *me = load_text(with_sig);
        assert_int_equal(hymo_circuit_n_switches(me), 4);
        hymo_run_options opt;
        hymo_run_options_default(&opt, me);
        double out[4];
        long ev;
        run(me, &opt, out, NULL, &ev);
        assert_int_equal(ev, 1); /* PA and BT open at U = 0.5 V: one located event */
        hymo_model_free(me);
        char *plain = strstr(with_sig, " overlap: 0.5,");
        memmove(plain, plain + strlen(" overlap: 0.5,"), strlen(plain + strlen(" overlap: 0.5,")) + 1);
        me = load_text(with_sig);
        assert_int_equal(hymo_circuit_n_switches(me), 0);
        hymo_model_free(me);
    }

    /* pump_demo with the reference inside the band: the boom never moves */
    {
        char *text = replaced("pump_demo.yaml", "[1.2, 5], [3.8, 5]", "[1.2, 0.9], [3.8, -0.9]");
        hymo_model *mb = load_text(text);
        hymo_run_options opt;
        hymo_run_options_default(&opt, mb);
        double out[8], t_ev[MAX_EV];
        long ev;
        run(mb, &opt, out, t_ev, &ev);
        const double s_end = out[4 + 1];
        print_message("reference within +-0.9 V of a 1 V band: stroke %.17g m (s0 %.17g m), V1 %.9g Pa, %ld "
                      "events\n",
                      s_end, fd.s0[0], out[test_volume_state(mb, "V1")], ev);
        assert_true(s_end == fd.s0[0]);
        assert_int_equal(ev, 1); /* relief1 only */
        hymo_model_free(mb);
        free(text);
    }
    fixture_free(&fx);
}

/* ---------------------------------------------------------------- */
/* 4. derivatives                                                   */

static int fd_check(const fixture *fx, const double *p0, double U, const unsigned char *sw)
{
    const hymo_model *m = fx->m;
    const int np = m->n_volumes, na = m->n_cylinders;
    hymo_circuit c = fx->circ;
    c.sw = sw;
    double s[4], sd[4];
    for (int a = 0; a < na; ++a) s[a] = fx->s0[a] + 0.01, sd[a] = 0.01;
    hymo_circuit_derivs d;
    hymo_error err;
    assert_int_equal(hymo_circuit_derivs_alloc(&d, m, np, 1, na, &err), HYMO_OK);
    double u[1] = {U};
    assert_int_equal(hymo_circuit_derivatives(&c, m, s, sd, p0, u, 1, &d), 0);
    int bad = 0;
    for (int k = 0; k <= np; ++k) { /* k = np: the spool column */
        double pp[8], pm[8], fp[8], fm[8], up[1] = {U}, um[1] = {U};
        memcpy(pp, p0, (size_t)np * sizeof(double));
        memcpy(pm, p0, (size_t)np * sizeof(double));
        double h;
        if (k < np) {
            h = 1e-6 * fabs(p0[k]);
            pp[k] += h;
            pm[k] -= h;
        } else {
            h = 1e-7;
            up[0] += h;
            um[0] -= h;
        }
        assert_int_equal(hymo_circuit_eval(&c, m, s, sd, pp, up, NULL, fp, NULL, NULL), 0);
        assert_int_equal(hymo_circuit_eval(&c, m, s, sd, pm, um, NULL, fm, NULL, NULL), 0);
        for (int i = 0; i < np; ++i) {
            const double fdv = (fp[i] - fm[i]) / (2.0 * h);
            const double an = k < np ? hymo_sparse_get(&d.dpdot_dp, i, k) : hymo_sparse_get(&d.dpdot_du, i, 0);
            const double scale = fabs(an) + fabs(fdv) + 1e-3;
            if (fabs(fdv - an) > 1e-6 * scale) {
                print_error("d pdot_%d / d %s%d at U = %g: analytic %.10g, finite difference %.10g (sw %s)\n", i,
                            k < np ? "p_" : "U", k < np ? k : 0, U, an, fdv, sw ? "forced" : "geometry");
                ++bad;
            }
        }
    }
    hymo_circuit_derivs_free(&d);
    return bad;
}

static void test_derivatives(void **state)
{
    (void)state;
    fixture fx;
    fixture_init(&fx, "../tests/models/valves_line.yaml");
    const hymo_model *m = fx.m;
    const int ip = test_volume_state(m, "Vp"), ia = test_volume_state(m, "VA"), ib = test_volume_state(m, "VB");
    /* spool on every branch of every edge (bands 1 and 1.5 V); VA above
     * and below fc1's 1 MPa; Vp above and below relief1's 10 MPa */
    const double Us[] = {-3.0, -1.3, -0.6, 0.3, 1.2, 2.5};
    const double pas[] = {0.6e6, 0.9e6, 1.3e6, 5e6};
    const double pps[] = {9e6, 10.5e6};
    int points = 0, forced = 0, bad = 0;
    const int nsw = hymo_circuit_n_switches(m);
    assert_int_equal(nsw, 0 + 1 + 0 + 4 + 1);
    for (size_t i = 0; i < sizeof Us / sizeof Us[0]; ++i)
        for (size_t j = 0; j < sizeof pas / sizeof pas[0]; ++j)
            for (size_t k = 0; k < sizeof pps / sizeof pps[0]; ++k) {
                double p[3];
                p[ip] = pps[k];
                p[ia] = pas[j];
                p[ib] = 2e6;
                bad += fd_check(&fx, p, Us[i], NULL);
                ++points;
                /* switching states forced against the geometry */
                unsigned char sw[6];
                for (int b = 0; b < 4; ++b) {
                    for (int q = 0; q < nsw; ++q) sw[q] = (unsigned char)(((b + q) & 1) ^ (b >> 1));
                    bad += fd_check(&fx, p, Us[i], sw);
                    ++forced;
                }
            }
    fixture_free(&fx);
    /* pump_demo: with a cylinder (s, sd columns as before) */
    fixture_init(&fx, "pump_demo.yaml");
    {
        double p[4] = {15.2e6, 13e6, 2.5e6, 0.5e6};
        for (double U = -3.0; U <= 3.0; U += 0.7) bad += fd_check(&fx, p, U, NULL), ++points;
    }
    fixture_free(&fx);
    print_message("derivatives: %d geometric and %d forced-branch points, pressure and spool columns, agree with "
                  "central differences (1e-6 relative)\n",
                  points, forced);
    assert_int_equal(bad, 0);

    /* the fast Jacobian run against the numeric one */
    hymo_model *mp = test_load_model("pump_demo.yaml");
    hymo_run_options opt;
    hymo_run_options_default(&opt, mp);
    double a[8], b[8];
    long ea, eb;
    opt.jacobian = HYMO_JACOBIAN_NUMERIC;
    run(mp, &opt, a, NULL, &ea);
    opt.jacobian = HYMO_JACOBIAN_FAST;
    run(mp, &opt, b, NULL, &eb);
    double dpmax = 0.0;
    for (int i = 0; i < 4; ++i) dpmax = fmax(dpmax, fabs(a[i] - b[i]));
    print_message("pump_demo fast vs numeric Jacobian: max |dp| %.3g Pa, |ds| %.3g m, events %ld / %ld\n", dpmax,
                  fabs(a[5] - b[5]), ea, eb);
    assert_int_equal(ea, eb);
    assert_true(dpmax < 1.0);
    assert_true(fabs(a[5] - b[5]) < 1e-9);
    hymo_model_free(mp);
}

/* ---------------------------------------------------------------- */
/* 5. events                                                        */

static void test_events(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("../tests/models/valves_line.yaml");
    const double t_end = 0.5, DT0 = 1e-3;
    hymo_run_options ida;
    test_ida_options(&ida, m, t_end);
    double t_ida[MAX_EV], t_run[MAX_EV], y_ida[8], y_ref[8], y[3][8];
    const int n_ida = run(m, &ida, y_ida, t_ida, NULL);
    test_print_ida_events(n_ida, t_ida);
    assert_int_equal(n_ida, 4); /* relief1 opens, PA, BT open, fc1 regulates */
    /* the edges open where the spool, the lag of the ramp U_ref = a (t - t0)
     * (a = 20 V/s from t0 = 0.05 s), U = a ((t - t0) - tau (1 - exp(-(t - t0)/tau))),
     * reaches its overlap (closed form, bisection) */
    {
        const double a = 20.0, t0 = 0.05, tau = 0.02, u0[2] = {1.0, 1.5};
        for (int e = 0; e < 2; ++e) {
            double lo = t0, hi = 0.25;
            for (int k = 0; k < 200; ++k) {
                const double t = 0.5 * (lo + hi), x = t - t0;
                if (a * (x - tau * (1.0 - exp(-x / tau))) < u0[e]) lo = t;
                else hi = t;
            }
            print_message("edge %s opens at %.9f s (closed form), IDA %.9f s\n", e ? "BT" : "PA", lo, t_ida[1 + e]);
            assert_close(t_ida[1 + e], lo, 1e-8);
        }
    }

    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.t_end = t_end;
    opt.dt = DT0 / 32.0;
    run(m, &opt, y_ref, NULL, NULL);
    double err_p[3], err_t[3];
    for (int r = 0; r < 3; ++r) {
        opt.dt = DT0 / (double)(1 << r);
        long ev;
        const int n = run(m, &opt, y[r], t_run, &ev);
        assert_int_equal(n, n_ida);
        err_t[r] = 0.0;
        for (int i = 0; i < n; ++i) {
            assert_false(isnan(t_run[i]));
            err_t[r] = fmax(err_t[r], fabs(t_run[i] - t_ida[i]));
        }
        err_p[r] = 0.0;
        for (int i = 0; i < 3; ++i) err_p[r] = fmax(err_p[r], fabs(y[r][i] - y_ref[i]));
        print_message("dt %.4g ms: %ld events, max |t_ev - t_IDA| %.3g s, at t = %g s max |p - p_ref| %.3g Pa "
                      "(dt/32 run), |p - p_IDA| %.3g Pa\n",
                      opt.dt * 1e3, ev, err_t[r], t_end, err_p[r], fabs(y[r][1] - y_ida[1]));
    }
    for (int r = 1; r < 3; ++r) {
        print_message("halving %d: event time %.2fx, pressure %.2fx\n", r, err_t[r - 1] / err_t[r],
                      err_p[r - 1] / err_p[r]);
        assert_true(err_t[r - 1] / err_t[r] > 3.0);
        assert_true(err_p[r - 1] / err_p[r] > 3.0);
    }
    hymo_model_free(m);
}

/* ---------------------------------------------------------------- */
/* 6. broken input: one clear line naming file:line: field            */

static const char *const k_bad_base =
    "format: 1\nname: bad\ngravity: [0, -9.81, 0]\n"
    "signals:\n  - {name: u, points: [[0, 0]]}\n"
    "bodies:\n  - name: pend\n    joint: {name: z1, type: revolute, parent: ground, location: [0, 0, 0], "
    "axis: [0, 0, 1]}\n    mass: 1\n    com: [0.5, 0, 0]\n    inertia: [0, 0.1, 0.1]\n"
    "hydraulics:\n  fluid: {bulk_modulus: 1.5e9, density: 850}\n"
    "  sources:\n    - {name: tank, pressure: 1.0e5}\n    - {name: ps, pressure: 1.0e7}\n"
    "  volumes:\n    - {name: V, parts: [{volume: 1.0e-4, bulk_modulus: 1.0e9}], initial_pressure: 1.0e5}\n"
    "    - {name: W, parts: [{volume: 1.0e-4, bulk_modulus: 1.0e9}], initial_pressure: 1.0e5}\n"
    "  throttles:\n    - {name: th, from: V, to: tank, flow_coefficient: 5.0e-8}\n";

static void test_bad_input(void **state)
{
    (void)state;
    static const struct {
        const char *tail, *want;
    } cases[] = {
        {"  pumps:\n    - {name: p1, from: tank, to: V, displacement: 1e-5}\n",
         "hydraulics.pumps[0]: missing required field: speed (rev/s) or speed_rpm"},
        {"  pumps:\n    - {name: p1, from: tank, to: V, displacement: 1e-5, speed: 25, speed_rpm: 1500}\n",
         "hydraulics.pumps[0].speed_rpm: give either speed (rev/s) or speed_rpm, not both"},
        {"  pumps:\n    - {name: p1, from: tank, to: V, displacement: 1e-5, speed: 25, volumetric_efficiency: 1.2}\n",
         "hydraulics.pumps[0].volumetric_efficiency: must be in (0, 1], got 1.2"},
        {"  pumps:\n    - {name: p1, from: tank, to: ps, displacement: 1e-5, speed: 25}\n",
         "hydraulics.pumps[0].to: 'tank' and 'ps' are both sources"},
        {"  pumps:\n    - {name: p1, from: V, to: V, displacement: 1e-5, speed: 25}\n",
         "hydraulics.pumps[0].to: a pump must connect two different nodes"},
        {"  pumps:\n    - {name: th, from: tank, to: V, displacement: 1e-5, speed: 25}\n",
         "hydraulics.pumps[0].name: duplicate name 'th'"},
        {"  pumps:\n    - {name: p1, from: tank, to: X, displacement: 1e-5, speed: 25}\n",
         "hydraulics.pumps[0].to: unknown hydraulic node 'X'"},
        {"  pumps:\n    - {name: p1, from: tank, to: V, displacement: -1e-5, speed: 25}\n",
         "hydraulics.pumps[0].displacement: must be positive"},
        {"  flow_control_valves:\n    - {name: f1, from: ps, to: V, set_flow: 1e-4, compensator_pressure: 0}\n",
         "hydraulics.flow_control_valves[0].compensator_pressure: must be positive"},
        {"  flow_control_valves:\n    - {name: f1, from: ps, to: V, compensator_pressure: 1e6}\n",
         "hydraulics.flow_control_valves[0].set_flow: missing required field"},
        {"  flow_control_valves:\n    - {name: f1, from: ps, to: tank, set_flow: 1e-4, compensator_pressure: 1e6}\n",
         "hydraulics.flow_control_valves[0].to: 'ps' and 'tank' are both sources"},
        {"  flow_control_valves:\n    - {name: f1, from: ps, to: V, set_flow: 1e-4, compensator_pressure: 1e6, "
         "gain: 2}\n",
         "hydraulics.flow_control_valves[0].gain: unknown field"},
        {"  valves:\n    - {name: d, type: 4/3, P: ps, T: tank, A: V, B: W, flow_coefficient: 1e-8, "
         "edges: {PA: 1e-8, BT: 1e-8, PB: 1e-8, AT: 1e-8}, time_constant: 0.01, signal: u}\n",
         "hydraulics.valves[0].edges: give either flow_coefficient or edges, not both"},
        {"  valves:\n    - {name: d, type: 4/3, P: ps, T: tank, A: V, B: W, edges: {PA: 1e-8, PB: 1e-8, AT: 1e-8}, "
         "time_constant: 0.01, signal: u}\n",
         "hydraulics.valves[0].edges.BT: missing required field"},
        {"  valves:\n    - {name: d, type: 4/3, P: ps, T: tank, A: V, B: W, edges: 1e-8, time_constant: 0.01, "
         "signal: u}\n",
         "hydraulics.valves[0].edges: expected a mapping {PA: ..., BT: ..., PB: ..., AT: ...}"},
        {"  valves:\n    - {name: d, type: 4/3, P: ps, T: tank, A: V, B: W, flow_coefficient: 1e-8, overlap: -0.5, "
         "time_constant: 0.01, signal: u}\n",
         "hydraulics.valves[0].overlap: must not be negative, got -0.5"},
        {"  valves:\n    - {name: d, type: 4/3, P: ps, T: tank, A: V, B: W, flow_coefficient: 1e-8, "
         "overlap: {PA: 1, PX: 1}, time_constant: 0.01, signal: u}\n",
         "hydraulics.valves[0].overlap.PX: unknown field (expected one of: PA, BT, PB, AT)"},
        {"  valves:\n    - {name: d, type: 4/3, P: ps, T: tank, A: V, B: W, leakage: 1e-13, time_constant: 0.01, "
         "signal: u}\n",
         "hydraulics.valves[0]: missing required field: flow_coefficient (or edges: {PA, BT, PB, AT})"},
        /* the two-port and orifice fields shared by throttles, check and relief valves */
        {"    - {name: t2, from: V, to: V, flow_coefficient: 1e-8}\n",
         "hydraulics.throttles[1].to: a throttle must connect two different nodes"},
        {"    - {name: t2, from: V, to: W, flow_coefficient: 1e-8, area: 1e-6}\n",
         "hydraulics.throttles[1].flow_coefficient: give either flow_coefficient or area and discharge_coefficient, "
         "not both"},
        {"    - {name: t2, from: V, to: W, area: 1e-6}\n",
         "hydraulics.throttles[1].discharge_coefficient: missing required field"},
        {"    - {name: t2, from: V, to: W}\n",
         "hydraulics.throttles[1]: missing required field: flow_coefficient, or area and discharge_coefficient"},
        {"  check_valves:\n    - {name: cv, from: W, to: W, cracking_pressure: 1e5, opening_pressure: 1e5, "
         "flow_coefficient: 1e-8}\n",
         "hydraulics.check_valves[0].to: a check valve must connect two different nodes"},
        {"  check_valves:\n    - {name: cv, from: V, to: W, cracking_pressure: 1e5, opening_pressure: 1e5, "
         "discharge_coefficient: 0.7}\n",
         "hydraulics.check_valves[0].area: missing required field"},
        {"  relief_valves:\n    - {name: rv, from: V, to: V, cracking_pressure: 1e7, gradient: 1e11}\n",
         "hydraulics.relief_valves[0].to: a relief valve must connect two different nodes"},
    };
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char text[4096];
        snprintf(text, sizeof text, "%s%s", k_bad_base, cases[i].tail);
        hymo_model *m = NULL;
        hymo_error err;
        hymo_error_clear(&err);
        const hymo_status st = hymo_model_load_string(text, "bad.yaml", &m, &err);
        const int ok = st == HYMO_ERR_MODEL && m == NULL && strncmp(err.message, "bad.yaml:", 9) == 0 &&
                       strstr(err.message, cases[i].want) && !strchr(err.message, '\n');
        if (!ok) {
            print_error("case %zu: status %d, message\n  %s\nwant '%s'\n", i, st, err.message, cases[i].want);
            ++failures;
        }
        if (st == HYMO_OK) hymo_model_free(m);
    }
    print_message("bad input: %zu cases, each one line naming bad.yaml:LINE: field\n", sizeof cases / sizeof cases[0]);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pump),
        cmocka_unit_test(test_flow_control),
        cmocka_unit_test(test_dead_band),
        cmocka_unit_test(test_derivatives),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
