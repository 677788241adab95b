/* Cavitation-safe fluid and gas-charged accumulators
 * (docs/model-format.md "Fluid model", "Accumulators"):
 *
 *   1. law: 1/B_f(p) of the entrained-air law against -d ln V/dp of the
 *      mixture volume written out here independently (liquid exp law +
 *      polytropic air at partial pressure p - p_v); B_f -> n (p - p_v) at
 *      the floor, C1 across it; -> B_oil at high pressure;
 *   2. derivatives: hymo_circuit_derivatives against central differences
 *      of hymo_circuit_eval (pressure, stroke, rate columns) near the floor,
 *      with the accumulator empty and charged, and with its switching
 *      state forced against the sign of p - p0;
 *   3. accumulator: a volume with an accumulator charged from a 10 MPa
 *      source through a laminar throttle (Q = k (p_s - p)). Volume
 *      conservation gives t(p) = int D(q)/(k (p_s - q)) dq with
 *      D = V/B_oil + V/B_hose + A(q), A = V_g/(n q) (V_g = V0 (p0/q)^(1/n),
 *      p V^n = const) above p0 and 0 below: the crossing p = p0 is located
 *      as an event at its closed-form time and the trapezoidal run stays
 *      second order across it (errors at dt 4, 2, 1 ms fall ~4x);
 *      IDA agrees; the numeric and fast Jacobians agree;
 *   4. cavitation: a boom falling on a cylinder with both ports blocked
 *      (containers rigid): with entrained air no pressure goes below the
 *      floor, and p(t) follows V_mix(p)/V_mix(p(0)) = V(t)/V(0) (dV/V =
 *      -dp/B_f integrated) to second order in dt; with the constant law the
 *      rod side goes to -2.2 MPa and the summary flags that volume
 *      NON-PHYSICAL; the per-volume ranges survive the HDF5 file;
 *   5. loader: defaults (no `model` key: entrained air), refusals. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "circuit.h"
#include "hymo/sim.h"
#include "test_util.h"

static hymo_model *load_text(const char *text) { return test_load_text(text, "inline.yaml"); }

static hymo_status load_text_err(const char *text, hymo_error *err)
{
    hymo_model *m = NULL;
    hymo_error_clear(err);
    hymo_status st = hymo_model_load_string(text, "inline.yaml", &m, err);
    hymo_model_free(m);
    return st;
}

/* ------------------------------------------------------------------ */
/* Models                                                              */

/* %s: the fluid's extra keys (", model: constant" or ""), %s: accumulators
 * and throttle lines */
static const char *const k_boom =
    "format: 2\n"
    "name: cav_boom\n"
    "gravity: [0, -9.81, 0]\n"
    "simulation: {dt: 1.0e-3, t_end: 0.2}\n"
    "ground:\n"
    "  points:\n"
    "    B: [0.8660254037844386, 0, 0]\n"
    "bodies:\n"
    "  - name: body1\n"
    "    joint: {name: z1, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: 30 deg}\n"
    "    mass: 200\n"
    "    com: [0.5, 0, 0]\n"
    "    inertia: [0, 16.666666666666668, 16.666666666666668]\n"
    "    point_masses:\n"
    "      - {mass: 250, at: [1, 0, 0]}\n"
    "    points:\n"
    "      P: [0.5, 0, 0]\n"
    "hydraulics:\n"
    "  fluid: {bulk_modulus: 1.5e9, density: 850%s}\n"
    "  cylinders:\n"
    "    - {name: cyl1, base: B, rod: P, piston_diameter: 0.080, rod_diameter: 0.035, length: 0.3,\n"
    "       piston_length0: 0.25, viscous_damping: 1.0e5, efficiency: 1}\n"
    "  volumes:\n"
    "    - name: V1\n"
    "      parts:\n"
    "        - {volume: 1.0e-5, bulk_modulus: %s}\n"
    "        - {chamber: cyl1.piston, bulk_modulus: %s}\n"
    "      initial_pressure: 1.0e5\n"
    "    - name: V2\n"
    "      parts:\n"
    "        - {volume: 1.0e-5, bulk_modulus: %s}\n"
    "        - {chamber: cyl1.rod, bulk_modulus: %s}\n"
    "      initial_pressure: 1.0e5\n"
    "%s";

static hymo_model *boom_model(const char *fluid, const char *B_container, const char *extra)
{
    char text[4096];
    snprintf(text, sizeof text, k_boom, fluid, B_container, B_container, B_container, B_container, extra);
    return load_text(text);
}

/* accumulator charge: V1 (1 l, hose 3 GPa) fed from 10 MPa through a
 * laminar throttle (p_tr 100 MPa: Q = Ct (p_s - p)/sqrt(p_tr)) */
#define ACC_PS 10.0e6
#define ACC_P_INIT 1.0e6
#define ACC_V 1.0e-3
#define ACC_B_OIL 1.5e9
#define ACC_B_HOSE 3.0e9
#define ACC_CT 1.0e-7
#define ACC_PTR 1.0e8
#define ACC_V0 1.0e-3
#define ACC_P0 3.0e6
#define ACC_N 1.4
static const char *const k_acc =
    "format: 2\n"
    "name: acc_charge\n"
    "gravity: [0, -9.81, 0]\n"
    "simulation: {dt: 1.0e-3, t_end: 1}\n"
    "bodies:\n"
    "  - name: body1\n"
    "    joint: {name: z1, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: -90 deg}\n"
    "    mass: 1\n"
    "    com: [0.5, 0, 0]\n"
    "    inertia: [0, 0.1, 0.1]\n"
    "hydraulics:\n"
    "  fluid: {bulk_modulus: 1.5e9, density: 850, laminar_transition: 1.0e8, model: constant}\n"
    "  sources:\n"
    "    - {name: pump, pressure: 10.0e6}\n"
    "  volumes:\n"
    "    - name: V1\n"
    "      parts:\n"
    "        - {volume: 1.0e-3, bulk_modulus: 3.0e9}\n"
    "      initial_pressure: 1.0e6\n"
    "  throttles:\n"
    "    - {name: th, from: pump, to: V1, flow_coefficient: 1.0e-7}\n"
    "  accumulators:\n"
    "    - {name: acc1, node: V1, gas_volume: 1.0e-3, precharge: 3.0e6, polytropic_index: 1.4}\n";

/* ------------------------------------------------------------------ */
/* 1. the law                                                          */

/* Mixture volume per unit volume at p_ref, written out from the model's
 * statement (docs/model-format.md), not from hydraulics/fluid.c. */
static double vmix(double p, double a, double pref, double pv, double n, double Bl)
{
    return (1.0 - a) * exp(-(p - pref) / Bl) + a * pow((pref - pv) / (p - pv), 1.0 / n);
}

static void test_law(void **state)
{
    (void)state;
    hymo_model *m = boom_model("", "1.0e300", "");
    const hymo_fluid_air *fa = &m->fluid_air;
    /* the documented defaults */
    assert_int_equal(fa->model, HYMO_FLUID_ENTRAINED_AIR);
    assert_close(fa->air_fraction, 1e-3, 0.0);
    assert_close(fa->p_reference, 101325.0, 0.0);
    assert_close(fa->p_vapour, 1000.0, 0.0);
    assert_close(fa->polytropic_index, 1.4, 0.0);
    const hymo_fluid_law *law = hymo_fluid_law_of(m);
    const double a = fa->air_fraction, pref = fa->p_reference, pv = fa->p_vapour, n = fa->polytropic_index,
                 Bl = m->fluid.bulk_modulus_oil;
    double worst = 0.0, worst_d = 0.0;
    const double ps[] = {1001.0, 1010.0, 2e3, 1e4, 5e4, 101325.0, 3e5, 1e6, 5e6, 2e7, 4e7};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; ++i) {
        const double p = ps[i], h = 1e-5 * (p - pv);
        double dinv;
        const double inv = law->inv_bulk(m, p, &dinv);
        /* 1/B = -d ln V/dp, by central differences of the independent V */
        const double fd = -(log(vmix(p + h, a, pref, pv, n, Bl)) - log(vmix(p - h, a, pref, pv, n, Bl))) / (2.0 * h);
        worst = fmax(worst, fabs(inv - fd) / fabs(fd));
        double d1, d2;
        const double fd2 = (law->inv_bulk(m, p + h, &d1) - law->inv_bulk(m, p - h, &d2)) / (2.0 * h);
        worst_d = fmax(worst_d, fabs(dinv - fd2) / fabs(fd2));
        assert_close(hymo_fluid_mixture_volume(m, p), vmix(p, a, pref, pv, n, Bl), 1e-13 * vmix(p, a, pref, pv, n, Bl));
    }
    print_message("1/B_f against -dlnV/dp of the independent mixture volume: max rel. diff %.2g; d(1/B_f)/dp "
                  "against differences: %.2g\n",
                  worst, worst_d);
    assert_true(worst < 1e-8);
    assert_true(worst_d < 1e-6);
    /* the floor: B_f -> n (p - p_v), and the continuation below is C1 */
    double d;
    for (double x = 1e-1; x >= 1e-7; x *= 0.1) {
        const double B = 1.0 / law->inv_bulk(m, pv + x, &d);
        print_message("  p - p_v = %.0e Pa: B_f/(n (p - p_v)) = %.9f\n", x, B / (n * x));
        assert_true(fabs(B / (n * x) - 1.0) < 3.0 * pow(x / (pref - pv), 1.0 / n) / a + 1e-9);
    }
    const double xb = 1e-6, Bm = 1.0 / law->inv_bulk(m, pv - xb, &d), Bp = 1.0 / law->inv_bulk(m, pv + xb, &d);
    assert_close(Bm, -n * xb, 1e-8 * n * xb); /* pv - xb rounds */
    assert_close((Bp - Bm) / (2.0 * xb), n, 1e-3 * n); /* slope n on both sides */
    /* high pressure: the air is squeezed out, B_f -> B_oil */
    const double B40 = 1.0 / law->inv_bulk(m, 4e7, &d);
    print_message("B_f at 40 MPa %.4g Pa (B_oil %.4g), at 0.1 MPa %.4g Pa\n", B40, Bl, 1.0 / law->inv_bulk(m, 1e5, &d));
    assert_true(B40 < Bl && B40 > 0.99 * Bl);
    hymo_model_free(m);
}

/* ------------------------------------------------------------------ */
/* 2. derivatives                                                      */

typedef struct {
    hymo_model *m;
    hymo_circuit circ;
    double s0;
} fixture;

static double initial_stroke(const hymo_model *m)
{
    double s0[1];
    test_initial_lengths(m, s0, 1);
    return s0[0];
}

static void fd_check(fixture *fx, const double *p0, double s_, double sd_, const unsigned char *sw, int *n_checked)
{
    const hymo_model *m = fx->m;
    hymo_circuit c = fx->circ;
    c.sw = sw;
    const int np = m->n_volumes;
    double s[1] = {s_}, sd[1] = {sd_}, p[8];
    memcpy(p, p0, (size_t)np * sizeof *p);
    hymo_circuit_derivs d;
    hymo_error err;
    assert_int_equal(hymo_circuit_derivs_alloc(&d, m, np, 0, 1, &err), HYMO_OK);
    assert_int_equal(hymo_circuit_derivatives(&c, m, s, sd, p, NULL, 1, &d), 0);
    for (int k = 0; k < np + 2; ++k) { /* columns: p_k, then s, then sd */
        double pp[8], pm[8], sp[1] = {s_}, sm[1] = {s_}, sdp[1] = {sd_}, sdm[1] = {sd_}, fp[8], fm[8], h;
        memcpy(pp, p0, (size_t)np * sizeof *p);
        memcpy(pm, p0, (size_t)np * sizeof *p);
        if (k < np) {
            h = 1e-7 * fmin(fabs(p0[k]), 1e3 * (p0[k] - m->fluid_air.p_vapour)); /* near the floor: small */
            pp[k] += h, pm[k] -= h;
        } else if (k == np) {
            h = 1e-7;
            sp[0] += h, sm[0] -= h;
        } else {
            h = 1e-7;
            sdp[0] += h, sdm[0] -= h;
        }
        assert_int_equal(hymo_circuit_eval(&c, m, sp, sdp, pp, NULL, NULL, fp, NULL, NULL), 0);
        assert_int_equal(hymo_circuit_eval(&c, m, sm, sdm, pm, NULL, NULL, fm, NULL, NULL), 0);
        for (int i = 0; i < np; ++i) {
            const double fd = (fp[i] - fm[i]) / (2.0 * h);
            const double an = k < np ? hymo_sparse_get(&d.dpdot_dp, i, k) : k == np ? hymo_sparse_get(&d.dpdot_ds, i, 0) : hymo_sparse_get(&d.dpdot_dsd, i, 0);
            /* plus the round-off of the differenced values */
            const double scale = fabs(an) + fabs(fd) + 1e-9, round = 1e-14 * (fabs(fp[i]) + fabs(fm[i])) / h;
            if (fabs(fd - an) > 1e-5 * scale + round)
                fail_msg("d pdot_%d / d %s%d at p = (%g, %g): analytic %.10g, finite difference %.10g (sw %s)", i,
                         k < np ? "p_" : k == np ? "s" : "sd", k < np ? k : 0, p0[0], p0[1], an, fd,
                         sw ? "forced" : "geometry");
        }
        ++*n_checked;
    }
    hymo_circuit_derivs_free(&d);
}

static void test_derivatives(void **state)
{
    (void)state;
    fixture fx;
    fx.m = boom_model("", "1.5e8",
                      "  throttles:\n"
                      "    - {name: th12, from: V1, to: V2, flow_coefficient: 1.0e-9}\n"
                      "  accumulators:\n"
                      "    - {name: acc1, node: V1, gas_volume: 2.0e-4, precharge: 0.3e6, polytropic_index: 1.3}\n");
    const hymo_model *m = fx.m;
    fx.s0 = initial_stroke(m);
    hymo_error err;
    assert_int_equal(hymo_circuit_init(&fx.circ, m, &fx.s0, &err), HYMO_OK);
    const int nsw = hymo_circuit_n_switches(m);
    assert_int_equal(nsw, 2 + 1);
    assert_int_equal(fx.circ.sw_accumulator, 2);
    const int i1 = test_volume_state(m, "V1"), i2 = test_volume_state(m, "V2");
    /* V1 below / above the precharge, V2 near the floor and high */
    const double p1s[] = {0.2e6, 0.29e6, 0.31e6, 2e6, 15e6};
    const double p2s[] = {1002.0, 1100.0, 5e3, 1e5, 3e6};
    int checked = 0;
    for (size_t a = 0; a < sizeof p1s / sizeof p1s[0]; ++a)
        for (size_t b = 0; b < sizeof p2s / sizeof p2s[0]; ++b) {
            double p[2];
            p[i1] = p1s[a];
            p[i2] = p2s[b];
            fd_check(&fx, p, fx.s0 - 0.01, -0.05, NULL, &checked);
            unsigned char sw[3] = {0, 0, 0};
            for (int f = 0; f < 2; ++f) { /* the accumulator's branch forced both ways */
                sw[fx.circ.sw_accumulator] = (unsigned char)f;
                fd_check(&fx, p, fx.s0 + 0.003, 0.02, sw, &checked);
            }
        }
    print_message("derivatives: %d columns (p, s, sd) agree with central differences (1e-5 relative)\n", checked);
    hymo_circuit_free(&fx.circ);
    hymo_model_free(fx.m);
}

/* ------------------------------------------------------------------ */
/* 3. accumulator                                                      */

static double acc_compliance(double q)
{
    return q >= ACC_P0 ? ACC_V0 * pow(ACC_P0 / q, 1.0 / ACC_N) / (ACC_N * q) : 0.0;
}

/* t(p) from volume conservation: D(q) dq = k (p_s - q) dt */
static double acc_time(double p)
{
    const double k = ACC_CT / sqrt(ACC_PTR), C = ACC_V / ACC_B_OIL + ACC_V / ACC_B_HOSE;
    double t = C / k * log((ACC_PS - ACC_P_INIT) / (ACC_PS - p));
    if (p <= ACC_P0) return t;
    const int N = 4000; /* composite Simpson on [p0, p] of A/(k (p_s - q)) */
    const double h = (p - ACC_P0) / N;
    double sum = 0.0;
    for (int i = 0; i <= N; ++i) {
        const double q = ACC_P0 + i * h, f = acc_compliance(q) / (k * (ACC_PS - q));
        sum += (i == 0 || i == N ? 1.0 : i % 2 ? 4.0 : 2.0) * f;
    }
    return t + sum * h / 3.0;
}

static double acc_pressure(double t)
{
    double lo = ACC_P_INIT, hi = ACC_PS - 1.0;
    for (int i = 0; i < 100; ++i) {
        const double mid = 0.5 * (lo + hi);
        if (acc_time(mid) < t) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* runs to t_end; final p of V1, and the last event's time */
static double acc_run(const hymo_model *m, const hymo_run_options *opt, double *t_event, long *events)
{
    hymo_sim *sim = test_sim_create(m, opt);
    hymo_error err;
    hymo_error_clear(&err);
    while (hymo_sim_time(sim) < opt->t_end - 1e-9 * opt->dt)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    const double p = hymo_sim_p(sim)[0];
    *events = hymo_sim_events(sim, t_event);
    hymo_sim_free(sim);
    return p;
}

static void test_accumulator(void **state)
{
    (void)state;
    hymo_model *m = load_text(k_acc);
    assert_int_equal(m->n_accumulators, 1);
    const hymo_accumulator *ac = &m->accumulators[0];
    assert_close(ac->gas_volume, ACC_V0, 0.0);
    assert_close(ac->precharge, ACC_P0, 0.0);
    /* p V^n = const, and the bladder rests below p0 */
    for (double p = 3e6; p < 3e7; p *= 1.7)
        assert_close(p * pow(hymo_accumulator_gas_volume(ac, p), ACC_N), ACC_P0 * pow(ACC_V0, ACC_N),
                     1e-12 * ACC_P0 * pow(ACC_V0, ACC_N));
    assert_close(hymo_accumulator_gas_volume(ac, 1e6), ACC_V0, 0.0);
    const double T = 1.0, t_ev = acc_time(ACC_P0), p_T = acc_pressure(T);
    print_message("closed form: p reaches p0 = %g Pa at t = %.9f s; p(%g s) = %.6f Pa (gas volume %.6g l)\n", ACC_P0,
                  t_ev, T, p_T, 1e3 * ACC_V0 * pow(ACC_P0 / p_T, 1.0 / ACC_N));
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.t_end = T;
    double err_p[3], err_t[3];
    for (int r = 0; r < 3; ++r) {
        opt.dt = 4e-3 / (double)(1 << r);
        double tev;
        long ev;
        const double p = acc_run(m, &opt, &tev, &ev);
        assert_int_equal(ev, 1);
        err_p[r] = fabs(p - p_T);
        err_t[r] = fabs(tev - t_ev);
        print_message("dt %g ms: event at %.9f s (error %.3g s), p(T) error %.4g Pa\n", opt.dt * 1e3, tev, err_t[r],
                      err_p[r]);
    }
    for (int r = 1; r < 3; ++r) {
        print_message("halving %d: pressure error %.2fx, event time %.2fx\n", r, err_p[r - 1] / err_p[r],
                      err_t[r - 1] / err_t[r]);
        assert_true(err_p[r - 1] / err_p[r] > 3.5 && err_p[r - 1] / err_p[r] < 4.5);
        assert_true(err_t[r - 1] / err_t[r] > 3.0);
    }
    assert_true(err_p[2] < 1.0); /* Pa */
    /* the fast Jacobian and IDA reach the same */
    opt.dt = 1e-3;
    opt.jacobian = HYMO_JACOBIAN_FAST;
    double tev;
    long ev;
    const double p_fast = acc_run(m, &opt, &tev, &ev);
    print_message("fast Jacobian: p(T) error %.4g Pa, %ld event\n", fabs(p_fast - p_T), ev);
    assert_close(p_fast, p_T, 2.0 * err_p[2] + 1e-3);
    hymo_run_options ida;
    hymo_run_options_default(&ida, m);
    ida.t_end = T;
    ida.integrator = HYMO_INTEGRATOR_IDA;
    ida.rtol = 1e-10;
    ida.atol = 1e-6;
    const double p_ida = acc_run(m, &ida, &tev, &ev);
    print_message("IDA rtol 1e-10: event at %.9f s (error %.3g s), p(T) error %.4g Pa\n", tev, fabs(tev - t_ev),
                  fabs(p_ida - p_T));
    assert_int_equal(ev, 1);
    assert_close(tev, t_ev, 1e-6);
    assert_close(p_ida, p_T, 1.0);
    hymo_model_free(m);
}

/* ------------------------------------------------------------------ */
/* 4. cavitation                                                        */

/* Runs the boom; returns the max over steps of the relative defect of
 * V_mix(p)/V_mix(p(0)) = V(t)/V(0) over both chambers, and the lowest
 * pressure seen at any step. */
static double boom_run(const hymo_model *m, double dt, double *p_low, hymo_run_summary *sum)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.dt = dt;
    hymo_sim *sim = test_sim_create(m, &opt);
    hymo_error err;
    hymo_error_clear(&err);
    const hymo_cylinder *cy = &m->cylinders[0];
    const hymo_fluid_air *fa = &m->fluid_air;
    const int i1 = test_volume_state(m, "V1"), i2 = test_volume_state(m, "V2");
    const double s0 = hymo_sim_actuator_length(sim)[0], Vh = 1e-5;
    const double constant = fa->model == HYMO_FLUID_CONSTANT;
    /* the constant law: V = exp(-(p - p_ref)/B) (a = 0) */
    const double a = constant ? 0.0 : fa->air_fraction, pref = constant ? 101325.0 : fa->p_reference,
                 pv = constant ? 0.0 : fa->p_vapour, n = constant ? 1.0 : fa->polytropic_index,
                 Bl = m->fluid.bulk_modulus_oil;
    const double p10 = hymo_sim_p(sim)[i1], p20 = hymo_sim_p(sim)[i2];
    const double V10 = Vh + cy->piston_area * cy->l_pist0, V20 = Vh + cy->rod_side_area * cy->l_rod0;
    double worst = 0.0;
    *p_low = INFINITY;
    while (hymo_sim_time(sim) < opt.t_end - 1e-9 * dt) {
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        const double ds = hymo_sim_actuator_length(sim)[0] - s0, p1 = hymo_sim_p(sim)[i1], p2 = hymo_sim_p(sim)[i2];
        const double V1 = Vh + cy->piston_area * (cy->l_pist0 + ds), V2 = Vh + cy->rod_side_area * (cy->l_rod0 - ds);
        *p_low = fmin(*p_low, fmin(p1, p2));
        const double r1 = vmix(p1, a, pref, pv, n, Bl) / vmix(p10, a, pref, pv, n, Bl), r2 =
                                                                                            vmix(p2, a, pref, pv, n, Bl) /
                                                                                            vmix(p20, a, pref, pv, n, Bl);
        worst = fmax(worst, fmax(fabs(r1 / (V1 / V10) - 1.0), fabs(r2 / (V2 / V20) - 1.0)));
    }
    if (sum) hymo_sim_summary(sim, sum);
    hymo_sim_free(sim);
    return worst;
}

static void test_cavitation(void **state)
{
    (void)state;
    hymo_model *air = boom_model("", "1.0e300", ""); /* containers rigid: V is the chamber's */
    hymo_model *cst = boom_model(", model: constant", "1.0e300", "");
    const double pv = air->fluid_air.p_vapour;
    double low_air, low_cst, dev[2];
    hymo_run_summary sa, sc;
    dev[0] = boom_run(air, 1e-3, &low_air, &sa);
    dev[1] = boom_run(air, 5e-4, &low_air, NULL);
    const double dev_cst = boom_run(cst, 1e-3, &low_cst, &sc);
    print_message("entrained air: lowest pressure %.1f Pa (floor %.0f Pa); max |V_mix(p)/V_mix(p0) / (V/V0) - 1| "
                  "%.3g (dt 1 ms), %.3g (dt 0.5 ms): %.2fx\n",
                  low_air, pv, dev[0], dev[1], dev[0] / dev[1]);
    print_message("constant: lowest pressure %.4g Pa; relation defect %.3g\n", low_cst, dev_cst);
    assert_true(low_air > pv);
    assert_true(dev[0] < 1e-4);
    assert_true(dev[0] / dev[1] > 3.0); /* second order: the defect is the integration error */
    assert_true(low_cst < -1e6);
    assert_true(dev_cst < 1e-4); /* the constant law's closed form holds too */
    /* summary: per volume, flagged for the constant law only */
    assert_string_equal(sa.fluid_model, "entrained_air");
    assert_close(sa.p_floor, pv, 0.0);
    assert_int_equal(sa.n_volumes_below_zero, 0);
    assert_int_equal(sa.n_volumes_below_floor, 0);
    assert_int_equal(sa.n_volume_ranges, 2);
    assert_string_equal(sa.volume_ranges[1].name, "V2");
    assert_int_equal(sa.volume_ranges[1].below_floor, 0);
    assert_true(sa.volume_ranges[1].p_min > pv && sa.volume_ranges[1].p_min < 1e4);
    assert_string_equal(sc.fluid_model, "constant");
    assert_close(sc.p_floor, 0.0, 0.0);
    assert_int_equal(sc.n_volumes_below_zero, 1);
    assert_int_equal(sc.n_volumes_below_floor, 1);
    assert_int_equal(sc.volume_ranges[0].below_floor, 0);
    assert_int_equal(sc.volume_ranges[1].below_floor, 1);
    assert_close(sc.volume_ranges[1].p_min, low_cst, 0.0);
    assert_true(sc.volume_ranges[1].p_min_time > 0.0);
    assert_close(sc.volume_ranges[0].p_min, 1e5, 0.0);
    assert_close(sc.volume_ranges[0].p_min_time, 0.0, 0.0);
    /* the printed summary flags the volume */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hymo_run_summary_print(f, &sc);
    fclose(f);
    assert_non_null(strstr(buf, "  V2         min -"));
    assert_non_null(strstr(buf, "NON-PHYSICAL (below 0 Pa absolute)"));
    free(buf);
    /* through the file */
    char path[] = "test_fluid_boom.h5";
    hymo_run_options opt;
    hymo_run_options_default(&opt, cst);
    hymo_run_summary run_sum;
    hymo_error err;
    hymo_error_clear(&err);
    unlink(path);
    if (hymo_run(cst, &opt, path, &run_sum, &err) != HYMO_OK) fail_msg("%s", err.message);
    hymo_reference *ref = test_read_ref(path);
    const hymo_run_summary *rs = &ref->summary;
    assert_string_equal(rs->fluid_model, "constant");
    assert_int_equal(rs->n_volume_ranges, 2);
    assert_int_equal(rs->n_volumes_total, 2);
    assert_int_equal(rs->n_volumes_below_floor, 1);
    for (int k = 0; k < 2; ++k) {
        assert_string_equal(rs->volume_ranges[k].name, run_sum.volume_ranges[k].name);
        assert_close(rs->volume_ranges[k].p_min, run_sum.volume_ranges[k].p_min, 0.0);
        assert_close(rs->volume_ranges[k].p_max_time, run_sum.volume_ranges[k].p_max_time, 0.0);
        assert_int_equal(rs->volume_ranges[k].below_floor, run_sum.volume_ranges[k].below_floor);
    }
    hymo_ref_free(ref);
    unlink(path);
    hymo_model_free(air);
    hymo_model_free(cst);
}

/* ------------------------------------------------------------------ */
/* 5. loader                                                           */

static void expect_error(const char *fluid, const char *extra, const char *needle)
{
    char text[4096];
    snprintf(text, sizeof text, k_boom, fluid, "1.5e8", "1.5e8", "1.5e8", "1.5e8", extra);
    hymo_error err;
    hymo_status st = load_text_err(text, &err);
    if (st != HYMO_ERR_MODEL || !strstr(err.message, needle))
        fail_msg("expected a model error with '%s', got %d: %s", needle, (int)st, err.message);
    print_message("refused: %s\n", err.message);
}

static void test_loader(void **state)
{
    (void)state;
    hymo_model *m = boom_model(", model: entrained_air, air_fraction: 0.01, vapour_pressure: 2000, "
                               "polytropic_index: 1.0, reference_pressure: 1.0e5",
                               "1.5e8", "");
    assert_int_equal(m->fluid_air.model, HYMO_FLUID_ENTRAINED_AIR);
    assert_close(m->fluid_air.air_fraction, 0.01, 0.0);
    assert_close(m->fluid_air.p_vapour, 2000.0, 0.0);
    assert_close(m->fluid_air.polytropic_index, 1.0, 0.0);
    assert_close(m->fluid_air.p_reference, 1e5, 0.0);
    hymo_model_free(m);
    m = boom_model(", model: constant", "1.5e8", "");
    assert_int_equal(m->fluid_air.model, HYMO_FLUID_CONSTANT);
    assert_int_equal(hymo_circuit_n_switches(m), 0);
    hymo_model_free(m);
    expect_error(", model: foam", "", "hydraulics.fluid.model: unknown fluid model 'foam'");
    expect_error(", model: constant, air_fraction: 0.01", "", "hydraulics.fluid.air_fraction: only with model");
    expect_error(", air_fraction: 1.5", "", "air_fraction: must be below 1");
    expect_error(", air_fraction: 0", "", "air_fraction: must be positive");
    expect_error(", vapour_pressure: 2.0e5", "", "vapour_pressure: must be below the reference pressure");
    expect_error(", polytropic_index: 0.8", "", "polytropic_index: must be at least 1");
    expect_error("", "  accumulators:\n    - {name: a1, node: nowhere, gas_volume: 1.0e-3, precharge: 1.0e6}\n",
                 "hydraulics.accumulators[0].node: unknown hydraulic node 'nowhere'");
    expect_error("", "  accumulators:\n    - {name: a1, node: V1, gas_volume: 1.0e-3}\n",
                 "accumulators[0].precharge: missing required field");
    expect_error("", "  accumulators:\n    - {name: a1, node: V1, gas_volume: -1.0e-3, precharge: 1.0e6}\n",
                 "gas_volume: must be positive");
    expect_error("",
                 "  accumulators:\n    - {name: a1, node: V1, gas_volume: 1.0e-3, precharge: 1.0e6}\n"
                 "    - {name: a1, node: V2, gas_volume: 1.0e-3, precharge: 1.0e6}\n",
                 "duplicate accumulator name 'a1'");
    expect_error("", "  accumulators:\n    - {name: cyl1, node: V1, gas_volume: 1.0e-3, precharge: 1.0e6}\n",
                 "duplicate name 'cyl1'");
    expect_error("", "  accumulators:\n    - {name: a1, node: V1, gas_volume: 1.0e-3, precharge: 1.0e6, volume: 2}\n",
                 "volume");
    /* an initial pressure at the floor is refused when the run starts */
    m = boom_model(", vapour_pressure: 1.0e5", "1.5e8", "");
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    hymo_sim *sim = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_sim_create(m, &opt, &sim, &err), HYMO_ERR_MODEL);
    print_message("refused: %s\n", err.message);
    assert_non_null(strstr(err.message, "at or below the fluid's vapour pressure"));
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_law),         cmocka_unit_test(test_derivatives), cmocka_unit_test(test_accumulator),
        cmocka_unit_test(test_cavitation), cmocka_unit_test(test_loader),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
