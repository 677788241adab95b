/* Initial joint rates (bodies[].joint.rate, docs/model-format.md):
 *
 * - A free pendulum (uniform rod hinged at one end, hanging down) started
 *   with a rate: against its closed form phi(t) = 2 asin(k sn(w0 t | k^2)),
 *   k = v0 / (2 w0), w0^2 = 3 g / (2 l), over 3 s, both formulations and
 *   Jacobians: zd(0) is the given rate, the error is below 1e-5 rad at
 *   dt = 1 ms (measured 5.36e-6 in all four; fast 2.2e-5 with the first
 *   step's Newton target of a start at rest, src/engine/init.c) and falls 3.5-4.5x
 *   at 0.5 ms (measured 4.00; second order from the start:
 *   the accelerations at t = 0 are consistent).
 * - A parallelogram four-bar at -60 deg with a crank rate of 5 rad/s (the
 *   independent joint): the dependent rates are projected onto Phi_z zd = 0
 *   (the other crank +5, the coupler -5 rad/s), the accelerations at t = 0
 *   are those of the one-coordinate solution (-K/M cos theta for both
 *   cranks, its negative for the coupler), and the summary says "1 given"
 *   with no change; a dependent rate given inconsistently (7 instead of 5)
 *   is replaced and the change (2) reported.
 * - A double pendulum started with rates on both joints: the accelerations
 *   at t = 0 are Lagrange's with their velocity terms (to 1e-10).
 * - A model without rates starts at rest and its summary has no line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define G 9.81
#define PI 3.14159265358979323846

/* sn(u | m) by the arithmetic-geometric mean (Abramowitz & Stegun 16.4) */
static double jacobi_sn(double u, double m)
{
    double a[16], c[16], b = sqrt(1.0 - m);
    int n = 0;
    a[0] = 1.0, c[0] = sqrt(m);
    while (fabs(c[n]) > 1e-17 && n < 15) {
        a[n + 1] = 0.5 * (a[n] + b);
        c[n + 1] = 0.5 * (a[n] - b);
        b = sqrt(a[n] * b);
        ++n;
    }
    double phi = ldexp(a[n] * u, n);
    for (; n > 0; --n) phi = 0.5 * (phi + asin(c[n] / a[n] * sin(phi)));
    return sin(phi);
}

static const char *PENDULUM = "format: 2\n"
                              "name: rate_pendulum\n"
                              "gravity: [0, -9.81, 0]\n"
                              "bodies:\n"
                              "  - name: rod\n"
                              "    joint: {name: q, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1],\n"
                              "            initial: -90 deg, rate: 3.0}\n"
                              "    mass: 2\n"
                              "    com: [0.75, 0, 0]\n"
                              "    inertia: [0, 0.375, 0.375]\n"; /* l = 1.5 m: m l^2 / 12 */

static double pendulum_error(const hymo_model *m, hymo_formulation_kind form, hymo_jacobian_mode jac, double dt)
{
    const double l = 1.5, v0 = 3.0, w0 = sqrt(1.5 * G / l), k = v0 / (2.0 * w0), t_end = 3.0;
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.formulation = form, opt.jacobian = jac, opt.dt = dt, opt.t_end = t_end;
    hymo_sim *sim = test_sim_create(m, &opt);
    assert_true(fabs(hymo_sim_zd(sim)[0] - v0) <= 0.0);
    assert_true(fabs(hymo_sim_zdd(sim)[0]) < 1e-12); /* hanging straight down */
    double worst = 0.0;
    const long n = lround(t_end / dt);
    hymo_error err;
    for (long s = 0; s < n; ++s) {
        assert_int_equal(hymo_sim_step(sim, &err), HYMO_OK);
        const double t = hymo_sim_time(sim);
        const double exact = -0.5 * PI + 2.0 * asin(k * jacobi_sn(w0 * t, k * k));
        worst = fmax(worst, fabs(hymo_sim_z(sim)[0] - exact));
    }
    hymo_sim_free(sim);
    return worst;
}

static void test_pendulum_closed_form(void **state)
{
    (void)state;
    /* the closed form itself: sn(u | 0) = sin u, sn(K(1/2) | 1/2) = 1 */
    assert_true(fabs(jacobi_sn(0.7, 0.0) - sin(0.7)) < 1e-15);
    assert_true(fabs(jacobi_sn(1.8540746773013719, 0.5) - 1.0) < 1e-14);
    hymo_model *m = test_load_text(PENDULUM, "rate_pendulum");
    for (int f = 0; f < 2; ++f)
        for (int j = 0; j < 2; ++j) {
            const double e1 = pendulum_error(m, (hymo_formulation_kind)f, (hymo_jacobian_mode)j, 1e-3);
            const double e2 = pendulum_error(m, (hymo_formulation_kind)f, (hymo_jacobian_mode)j, 5e-4);
            printf("pendulum with a rate, formulation %d, jacobian %d: error %.3g rad (1 ms), %.3g rad (0.5 ms), "
                   "ratio %.3f\n", f, j, e1, e2, e1 / e2);
            assert_true(e1 < 1e-5);
            assert_true(e1 / e2 > 3.5 && e1 / e2 < 4.5);
        }
    hymo_model_free(m);
}

/* one parallelogram four-bar (tests/models/parallelogram1.yaml) at theta
 * with the crank rate 5 rad/s and `extra` after crank k1's initial angle */
static const char *parallelogram(double theta_deg, const char *extra)
{
    static char text[2048];
    snprintf(text, sizeof text,
             "format: 2\nname: rate_parallelogram\ngravity: [0, -9.81, 0]\nbodies:\n"
             "  - name: k0\n"
             "    joint: {name: q0, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1],\n"
             "            initial: %.17g deg, rate: 5}\n"
             "    mass: 1\n    com: [1, 0, 0]\n    inertia: [0, 0.3333333333333333, 0.3333333333333333]\n"
             "    points: {T: [2, 0, 0]}\n"
             "  - name: k1\n"
             "    joint: {name: q1, type: revolute, parent: ground, location: [1, 0, 0], axis: [0, 0, 1],\n"
             "            initial: %.17g deg%s}\n"
             "    mass: 1\n    com: [1, 0, 0]\n    inertia: [0, 0.3333333333333333, 0.3333333333333333]\n"
             "    points: {T: [2, 0, 0]}\n"
             "  - name: c1\n"
             "    joint: {name: s1, type: revolute, parent: k0, location: T, axis: [0, 0, 1], initial: %.17g deg}\n"
             "    mass: 1\n    com: [0.5, 0, 0]\n    inertia: [0, 0.08333333333333333, 0.08333333333333333]\n"
             "    points: {E: [1, 0, 0]}\n"
             "cut_joints:\n"
             "  - {name: e1, type: planar_revolute, body_a: c1, point_a: E, body_b: k1, point_b: T}\n"
             "independent: [q0]\n",
             theta_deg, theta_deg, extra, -theta_deg);
    return text;
}

static void check_parallelogram(const char *extra, const char *report)
{
    const double theta = -60.0 * PI / 180.0;
    /* M = 2 (m r^2 / 3) + m r^2, K = g (2 m r / 2 + m r) with m = 1, r = 2 */
    const double acc = -(G * 4.0) / (8.0 / 3.0 + 4.0) * cos(theta);
    hymo_model *m = test_load_text(parallelogram(-60.0, extra), "rate_parallelogram");
    for (int f = 0; f < 2; ++f) {
        hymo_run_options opt;
        hymo_run_options_default(&opt, m);
        opt.formulation = (hymo_formulation_kind)f;
        hymo_sim *sim = test_sim_create(m, &opt);
        const double *zd = hymo_sim_zd(sim), *zdd = hymo_sim_zdd(sim);
        /* z order: k0, k1, c1 (declaration order, parents first) */
        printf("parallelogram at -60 deg, formulation %d: zd %.17g %.17g %.17g, zdd %.17g %.17g %.17g (exact %.17g)\n",
               f, zd[0], zd[1], zd[2], zdd[0], zdd[1], zdd[2], acc);
        assert_true(fabs(zd[0] - 5.0) <= 0.0);
        assert_true(fabs(zd[1] - 5.0) < 1e-13 && fabs(zd[2] + 5.0) < 1e-13);
        assert_true(fabs(zdd[0] - acc) < 1e-6 * fabs(acc) && fabs(zdd[1] - acc) < 1e-6 * fabs(acc) &&
                    fabs(zdd[2] + acc) < 1e-6 * fabs(acc));
        hymo_run_summary s;
        hymo_sim_summary(sim, &s);
        printf("  rates: %s\n", s.initial_rates);
        assert_non_null(strstr(s.initial_rates, report));
        hymo_sim_free(sim);
    }
    hymo_model_free(m);
}

static void test_parallelogram_projection(void **state)
{
    (void)state;
    check_parallelogram("", "1 given; kept: q0; largest change of a given rate 0 (q0)");
    check_parallelogram(", rate: 7", "2 given; kept: q0; largest change of a given rate 2 (q1)");
}

/* A double pendulum of point masses (m1 = 1 kg at l1 = 1 m, m2 = 2 kg at
 * l2 = 0.7 m further) at z = (-60 deg, 50 deg) with rates (2, -3) rad/s:
 * the accelerations at t = 0 carry the velocity terms of Lagrange's
 * equations in the absolute angles th1 = z1, th2 = z1 + z2:
 *   (m1 + m2) l1^2 a1 + m2 l1 l2 c a2 = -m2 l1 l2 s w2^2 - (m1 + m2) g l1 cos th1
 *   m2 l1 l2 c a1 + m2 l2^2 a2 = m2 l1 l2 s w1^2 - m2 g l2 cos th2
 * with c, s = cos, sin (th1 - th2). */
static void test_double_pendulum_accelerations(void **state)
{
    (void)state;
    static const char *text = "format: 2\nname: rate_double\ngravity: [0, -9.81, 0]\nbodies:\n"
                              "  - name: b1\n"
                              "    joint: {name: z1, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1],\n"
                              "            initial: -60 deg, rate: 2}\n"
                              "    mass: 0\n    point_masses: [{mass: 1, at: [1, 0, 0]}]\n"
                              "  - name: b2\n"
                              "    joint: {name: z2, type: revolute, parent: b1, location: [1, 0, 0], axis: [0, 0, 1],\n"
                              "            initial: 50 deg, rate: -3}\n"
                              "    mass: 0\n    point_masses: [{mass: 2, at: [0.7, 0, 0]}]\n";
    const double m1 = 1.0, m2 = 2.0, l1 = 1.0, l2 = 0.7, th1 = -60.0 * PI / 180.0, th2 = -10.0 * PI / 180.0;
    const double w1 = 2.0, w2 = 2.0 - 3.0, c = cos(th1 - th2), sn = sin(th1 - th2);
    const double a11 = (m1 + m2) * l1 * l1, a12 = m2 * l1 * l2 * c, a22 = m2 * l2 * l2;
    const double b1 = -m2 * l1 * l2 * sn * w2 * w2 - (m1 + m2) * G * l1 * cos(th1);
    const double b2 = m2 * l1 * l2 * sn * w1 * w1 - m2 * G * l2 * cos(th2);
    const double det = a11 * a22 - a12 * a12, acc1 = (b1 * a22 - a12 * b2) / det, acc2 = (a11 * b2 - a12 * b1) / det;
    hymo_model *m = test_load_text(text, "rate_double");
    for (int f = 0; f < 2; ++f) {
        hymo_run_options opt;
        hymo_run_options_default(&opt, m);
        opt.formulation = (hymo_formulation_kind)f;
        hymo_sim *sim = test_sim_create(m, &opt);
        const double *zd = hymo_sim_zd(sim), *zdd = hymo_sim_zdd(sim);
        printf("double pendulum, formulation %d: zdd %.17g %.17g (Lagrange %.17g %.17g)\n", f, zdd[0], zdd[1], acc1,
               acc2 - acc1);
        assert_true(zd[0] == 2.0 && zd[1] == -3.0);
        assert_true(fabs(zdd[0] - acc1) < 1e-10 * (1.0 + fabs(acc1)));
        assert_true(fabs(zdd[1] - (acc2 - acc1)) < 1e-10 * (1.0 + fabs(acc2 - acc1)));
        hymo_sim_free(sim);
    }
    hymo_model_free(m);
}

static void test_at_rest_without_rates(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("fourbar.yaml");
    hymo_sim *sim = test_sim_create(m, NULL);
    for (int j = 0; j < hymo_sim_nz(sim); ++j) assert_true(hymo_sim_zd(sim)[j] == 0.0);
    hymo_run_summary s;
    hymo_sim_summary(sim, &s);
    assert_string_equal(s.initial_rates, "");
    hymo_sim_free(sim);
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pendulum_closed_form),
        cmocka_unit_test(test_parallelogram_projection),
        cmocka_unit_test(test_double_pendulum_accelerations),
        cmocka_unit_test(test_at_rest_without_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
