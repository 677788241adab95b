/* Hydraulic motors (docs/model-format.md, "motors"):
 *   1. analytic circuit derivatives of the motor terms (torque, flows,
 *      mixed with a cylinder) against central finite differences;
 *   2. torque at a held pressure difference (both ports sources) against
 *      T = D dp - (1 - eta) D |dp| tanh(w/w_s) - c_v w and the flywheel's
 *      closed-form spin-up w = (eta D dp/c_v)(1 - exp(-c_v t/J));
 *   3. the steady speed fed through a throttle: w = Q eta_v / D with
 *      Q the throttle flow and eta_v = 1 - C_L dp/Q;
 *   4. fast vs numeric Jacobian and double-step vs penalty agree; the
 *      motor state (flows, powers) is consistent with the run;
 *   5. loader errors.
 * The flywheel against scipy: python/tests/test_motor.py. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit.h"
#include "engine.h"
#include "hymo/sim.h"
#include "test_util.h"

static hymo_model *load_text(const char *text) { return test_load_text(text, "<motor>"); }

/* a turret turned by a motor, a boom on it lifted by a cylinder (planar) */
static const char *const turret =
    "format: 1\nname: turret\ngravity: [0, -9.81, 0]\n"
    "bodies:\n"
    "  - name: turret\n"
    "    joint: {name: slew, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: 0.2}\n"
    "    mass: 100\n    com: [0.1, 0, 0]\n    inertia: [2, 2, 4]\n"
    "    points: {B: [0.2, -0.3, 0]}\n"
    "  - name: boom\n"
    "    joint: {name: lift, type: revolute, parent: turret, location: [0.5, 0, 0], axis: [0, 0, 1], initial: 0.4}\n"
    "    mass: 50\n    com: [0.6, 0, 0]\n    inertia: [0.5, 6, 6]\n"
    "    points: {P: [0.4, 0, 0]}\n"
    "hydraulics:\n"
    "  fluid: {bulk_modulus: 1.5e9, density: 850}\n"
    "  sources: [{name: pump, pressure: 15.0e6}, {name: tank, pressure: 1.0e5}]\n"
    "  cylinders:\n"
    "    - {name: cyl, base: B, rod: P, piston_diameter: 0.06, rod_diameter: 0.03, length: 0.6,\n"
    "       viscous_damping: 2.0e3, efficiency: 0.95, friction_velocity: 0.01}\n"
    "  volumes:\n"
    "    - {name: V1, parts: [{volume: 1.0e-4, bulk_modulus: 1.0e9}, {chamber: cyl.piston, bulk_modulus: 3.0e10}],\n"
    "       initial_pressure: static}\n"
    "    - {name: V2, parts: [{volume: 1.0e-4, bulk_modulus: 1.0e9}, {chamber: cyl.rod, bulk_modulus: 3.0e10}],\n"
    "       initial_pressure: 1.0e6}\n"
    "    - {name: MA, parts: [{volume: 1.0e-4, bulk_modulus: 1.0e9}], initial_pressure: static}\n"
    "    - {name: MB, parts: [{volume: 1.0e-4, bulk_modulus: 1.0e9}], initial_pressure: 1.0e6}\n"
    "  throttles:\n"
    "    - {name: t1, from: pump, to: V1, flow_coefficient: 5.0e-9}\n"
    "    - {name: t2, from: V2, to: tank, flow_coefficient: 5.0e-9}\n"
    "    - {name: t3, from: pump, to: MA, flow_coefficient: 2.0e-8}\n"
    "    - {name: t4, from: MB, to: tank, flow_coefficient: 2.0e-8}\n"
    "  motors:\n"
    "    - {name: slew_motor, joint: slew, port_a: MA, port_b: MB, displacement: 2.0e-5,\n"
    "       hydromechanical_efficiency: 0.85, friction_velocity: 0.2, leakage: 3.0e-12, viscous: 0.5}\n";

/* ---- 1. derivatives ---- */

#define MAXP 8
#define MAXA 4

static double urand(unsigned *seed, double lo, double hi)
{
    *seed = *seed * 1103515245u + 12345u;
    return lo + (hi - lo) * ((*seed >> 8) & 0xffffff) / (double)0xffffff;
}

static void check_derivs(hymo_model *m, const char *label)
{
    hymo_error err;
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    hymo_sim *sim = NULL;
    if (hymo_sim_create(m, &opt, &sim, &err) != HYMO_OK) fail_msg("%s: %s", label, err.message);
    const int np = m->n_volumes, nu = m->n_valves, na = m->n_cylinders + m->n_motors;
    assert_true(np <= MAXP && na <= MAXA);
    double s0[MAXA];
    memcpy(s0, hymo_sim_actuator_length(sim), (size_t)na * sizeof(double));
    hymo_sim_free(sim);
    hymo_circuit circ;
    hymo_circuit_derivs d;
    assert_int_equal(hymo_circuit_init(&circ, m, s0, &err), HYMO_OK);
    assert_int_equal(hymo_circuit_derivs_alloc(&d, m, np, nu, na, &err), HYMO_OK);
    unsigned seed = 12345u;
    double worst = 0.0;
    int checked = 0;
    for (int trial = 0; trial < 500; ++trial) {
        double p[MAXP], s[MAXA], sd[MAXA], u[1] = {0}, uref[1] = {0};
        for (int k = 0; k < np; ++k) p[k] = urand(&seed, 1e5, 2e7);
        int near_kink = 0; /* an orifice's laminar limit |dp| = p_tr inside the stencil: not this trial */
        for (int t = 0; t < m->n_throttles; ++t) {
            const double dpt = hymo_node_pressure(m, m->throttles[t].node_a, p) - hymo_node_pressure(m, m->throttles[t].node_b, p);
            near_kink |= fabs(fabs(dpt) - m->fluid.p_transition) < 1e3;
        }
        if (near_kink) continue;
        for (int a = 0; a < na; ++a) {
            s[a] = s0[a] + urand(&seed, -0.05, 0.05);
            const double ws = a >= m->n_cylinders ? m->motors[a - m->n_cylinders].friction_velocity : 0.01;
            sd[a] = trial % 2 ? urand(&seed, -3, 3) * ws : urand(&seed, -50, 50) * ws;
        }
        double pd0[MAXP], F0[MAXA];
        assert_int_equal(hymo_circuit_derivatives(&circ, m, s, sd, p, u, 1, &d), 0);
        assert_int_equal(hymo_circuit_eval(&circ, m, s, sd, p, u, uref, pd0, NULL, F0), 0);
        /* columns: p_k, s_a, sd_a */
        for (int col = 0; col < np + 2 * na; ++col) {
            double *x = col < np ? &p[col] : col < np + na ? &s[col - np] : &sd[col - np - na];
            const double x0 = *x, h = 1e-6 * fmax(fabs(x0), col < np ? 1e5 : 1e-2);
            double pdp[MAXP], pdm[MAXP], Fp[MAXA], Fm[MAXA];
            *x = x0 + h;
            hymo_circuit_eval(&circ, m, s, sd, p, u, uref, pdp, NULL, Fp);
            *x = x0 - h;
            hymo_circuit_eval(&circ, m, s, sd, p, u, uref, pdm, NULL, Fm);
            *x = x0;
            /* the |dp| kink of the torque: skip a stencil that straddles dp = 0 (random p: never) */
            for (int i = 0; i < np + na; ++i) {
                const double fd = i < np ? (pdp[i] - pdm[i]) / (2 * h) : (Fp[i - np] - Fm[i - np]) / (2 * h);
                double an;
                if (i < np) {
                    an = col < np ? hymo_sparse_get(&d.dpdot_dp, i, col)
                                  : col < np + na ? hymo_sparse_get(&d.dpdot_ds, i, col - np) : hymo_sparse_get(&d.dpdot_dsd, i, col - np - na);
                } else {
                    const int a = i - np;
                    an = col < np ? hymo_sparse_get(&d.dF_dp, a, col)
                                  : col < np + na ? (col - np == a ? d.dF_ds[a] : 0.0)
                                                  : (col - np - na == a ? d.dF_dsd[a] : 0.0);
                }
                const double scale = fmax(fabs(an), fabs(fd));
                if (scale == 0.0) continue;
                const double err_rel = fabs(an - fd) / fmax(scale, 1e-6 * (i < np ? 1e9 : 1e3));
                if (err_rel > worst) worst = err_rel;
                ++checked;
                if (err_rel > 1e-5)
                    fail_msg("%s: trial %d row %d col %d: analytic %.10g, finite difference %.10g (p0 %g p1 %g sd %g)",
                             label, trial, i, col, an, fd, p[0], p[1], sd[na - 1]);
            }
        }
    }
    printf("%s: %d derivative entries, largest relative error %.2g\n", label, checked, worst);
    hymo_circuit_derivs_free(&d);
    hymo_circuit_free(&circ);
}

static void test_derivatives(void **state)
{
    (void)state;
    hymo_model *m = test_load_test_model("motor_inertia.yaml");
    check_derivs(m, "motor_inertia");
    hymo_model_free(m);
    m = load_text(turret);
    check_derivs(m, "turret");
    hymo_model_free(m);
}

/* ---- 2. held pressure difference ---- */

static const char *const held =
    "format: 1\nname: held\ngravity: [0, -9.81, 0]\n"
    "bodies:\n"
    "  - name: wheel\n"
    "    joint: {name: w, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: 0}\n"
    "    mass: 20\n    com: [0, 0, 0]\n    inertia: [0.3, 0.3, 0.5]\n"
    "hydraulics:\n"
    "  fluid: {bulk_modulus: 1.5e9, density: 850}\n"
    "  sources: [{name: P, pressure: 5.1e6}, {name: T, pressure: 1.0e5}]\n"
    "  motors:\n"
    "    - {name: m1, joint: w, port_a: P, port_b: T, displacement: 1.0e-5,\n"
    "       hydromechanical_efficiency: 0.9, friction_velocity: 1.0e-3, leakage: 2.0e-12, viscous: 0.5}\n";

static void test_held_pressure(void **state)
{
    (void)state;
    hymo_model *m = load_text(held);
    const double D = 1e-5, dp = 5e6, eta = 0.9, cv = 0.5, J = 0.5, ws = 1e-3, CL = 2e-12;
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.dt = 2.5e-4;
    hymo_sim *sim = NULL;
    hymo_error err;
    sim = test_sim_create(m, &opt);
    /* at rest: T = D dp (no friction at w = 0) */
    assert_close(hymo_sim_actuator_force(sim)[0], D * dp, 1e-12 * D * dp);
    const double w_inf = eta * D * dp / cv; /* 90 rad/s */
    double worst = 0.0;
    for (int k = 1; k <= 4000; ++k) {
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        const double t = hymo_sim_time(sim), w = hymo_sim_zd(sim)[0];
        /* torque law at the run's speed (hand formula) */
        const double T = D * dp - (1 - eta) * D * dp * tanh(w / ws) - cv * w;
        assert_close(hymo_sim_actuator_force(sim)[0], T, 1e-12 * D * dp);
        /* tanh(w/w_s) = 1 after ~1e-6 s: the spin-up of J w' = eta D dp - c_v w */
        const double w_exact = w_inf * (1 - exp(-cv * t / J));
        worst = fmax(worst, fabs(w - w_exact) / w_inf);
        if (k % 1000 == 0) {
            hymo_motor_state ms;
            assert_int_equal(hymo_sim_motor_state(sim, 0, &ms, &err), HYMO_OK);
            assert_close(ms.speed, w, 0);
            assert_close(ms.dp, dp, 0);
            assert_close(ms.torque, hymo_sim_actuator_force(sim)[0], 1e-12 * D * dp);
            assert_close(ms.flow, D * w + CL * dp, 1e-15);
            assert_close(ms.power_mech, ms.torque * w, 1e-9);
            assert_close(ms.power_hyd, dp * (D * w + CL * dp), 1e-9);
            /* at speed: T = eta D dp - c_v w, the hydro-mechanical efficiency */
            assert_close(ms.torque + cv * w, eta * D * dp, 1e-9 * D * dp);
        }
    }
    /* The friction term switches on within ~w_s J/(D dp) = 1e-5 s, inside the
     * first step: the trapezoidal rule averages T(0) = D dp and T(h) ~ eta D dp
     * there, a speed offset (1 - eta) D dp h/(2 J) = 1.25e-3 rad/s (1.4e-5 of
     * w_inf) that then decays as exp(-c_v t/J); hence the tolerance. */
    printf("held dp: w(t) vs closed form, max relative error %.2g (dt = 0.25 ms, 1 s)\n", worst);
    assert_true(worst < 1.5e-5);
    hymo_motor_state ms;
    assert_int_equal(hymo_sim_motor_state(sim, 1, &ms, &err), HYMO_ERR_ARGUMENT);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

/* ---- 3. steady speed through a throttle ---- */

static void test_steady_speed(void **state)
{
    (void)state;
    hymo_model *m = test_load_test_model("motor_inertia.yaml");
    const double D = 1e-5, CL = 2e-12, Ct = 4e-8, pP = 10e6, eta = 0.9, cv = 0.05, ws = 0.5;
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.t_end = 3.0;
    hymo_sim *sim = NULL;
    hymo_error err;
    sim = test_sim_create(m, &opt);
    while (hymo_sim_time(sim) < 3.0 - 1e-9)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    const double *p = hymo_sim_p(sim), w = hymo_sim_zd(sim)[0];
    const double dp = p[0] - p[1], Q = Ct * sqrt(pP - p[0]);
    const double eta_v = 1.0 - CL * dp / Q;
    printf("steady: w = %.9g rad/s, Q eta_v / D = %.9g (Q = %.6g m^3/s, eta_v = %.9f, dp = %.6g Pa)\n", w,
           Q * eta_v / D, Q, eta_v, dp);
    assert_close(w, Q * eta_v / D, 1e-6 * w);
    /* and the torque balance: D dp (1 - (1 - eta) tanh(w/w_s)) = c_v w */
    assert_close(D * dp * (1 - (1 - eta) * tanh(w / ws)), cv * w, 1e-6 * cv * w);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

/* ---- 4. Jacobians and formulations agree ---- */

static void run_to(hymo_model *m, hymo_jacobian_mode jac, hymo_formulation_kind form, double t_end, double *z,
                   double *p)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.jacobian = jac;
    opt.formulation = form;
    opt.dt = 5e-4;
    hymo_sim *sim = NULL;
    hymo_error err;
    sim = test_sim_create(m, &opt);
    while (hymo_sim_time(sim) < t_end - 1e-9)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    memcpy(z, hymo_sim_z(sim), (size_t)m->n_bodies * sizeof(double));
    memcpy(p, hymo_sim_p(sim), (size_t)m->n_volumes * sizeof(double));
    hymo_sim_free(sim);
}

static void test_modes_agree(void **state)
{
    (void)state;
    hymo_model *m = load_text(turret);
    double z[4][2], p[4][4];
    run_to(m, HYMO_JACOBIAN_NUMERIC, HYMO_FORMULATION_DOUBLE_STEP, 1.0, z[0], p[0]);
    run_to(m, HYMO_JACOBIAN_FAST, HYMO_FORMULATION_DOUBLE_STEP, 1.0, z[1], p[1]);
    run_to(m, HYMO_JACOBIAN_NUMERIC, HYMO_FORMULATION_PENALTY, 1.0, z[2], p[2]);
    run_to(m, HYMO_JACOBIAN_FAST, HYMO_FORMULATION_PENALTY, 1.0, z[3], p[3]);
    printf("turret at 1 s: slew %.9f lift %.9f rad, MA %.6f MPa\n", z[0][0], z[0][1], p[0][2] * 1e-6);
    assert_true(fabs(z[0][0] - 0.2) > 0.05); /* the motor turned the turret */
    for (int r = 1; r < 4; ++r) {
        for (int j = 0; j < 2; ++j) assert_close(z[r][j], z[0][j], 1e-7);
        for (int k = 0; k < 4; ++k) assert_close(p[r][k], p[0][k], 50.0);
    }
    hymo_model_free(m);
}

/* A motor between two free bodies (no gravity): its torque and the
 * reaction on the parent are internal, so the momentum conjugate to the root
 * joint, (M' zd)_0 (the angular momentum about its axis), stays 0. */
static const char *const chain =
    "format: 1\nname: chain\ngravity: [0, 0, 0]\n"
    "bodies:\n"
    "  - name: a\n"
    "    joint: {name: q1, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: 0.3}\n"
    "    mass: 3\n    com: [0.4, 0.1, 0]\n    inertia: [0.1, 0.2, 0.25]\n"
    "  - name: b\n"
    "    joint: {name: q2, type: revolute, parent: a, location: [0.8, 0, 0], axis: [0, 0, 1], initial: -0.5}\n"
    "    mass: 2\n    com: [0.3, 0, 0]\n    inertia: [0.05, 0.1, 0.12]\n"
    "hydraulics:\n"
    "  fluid: {bulk_modulus: 1.5e9, density: 850}\n"
    "  sources: [{name: P, pressure: 2.0e5}, {name: T, pressure: 1.0e5}]\n"
    "  motors:\n"
    "    - {name: m1, joint: q2, port_a: P, port_b: T, displacement: 1.0e-5, hydromechanical_efficiency: 0.8,\n"
    "       friction_velocity: 0.1, viscous: 0.01}\n";

static void test_reaction_on_parent(void **state)
{
    (void)state;
    hymo_model *m = load_text(chain);
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.dt = 1e-3;
    hymo_sim *sim = NULL;
    hymo_error err;
    sim = test_sim_create(m, &opt);
    double worst = 0.0, zd2 = 0.0;
    for (int k = 0; k < 1000; ++k) {
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        hymo_kin_mass(&sim->mb.kin);
        const double *M = sim->mb.kin.M, *zd = hymo_sim_zd(sim);
        worst = fmax(worst, fabs(M[0] * zd[0] + M[1] * zd[1]));
        zd2 = zd[1];
    }
    printf("chain: relative joint rate %.4g rad/s after 1 s, |(M' zd)_0| <= %.3g kg m^2/s\n", zd2, worst);
    assert_true(fabs(zd2) > 1.0);
    /* the trapezoidal rule conserves (M' zd)_0 only to its truncation error
     * (1.9e-6 at dt = 1 ms); a missing reaction on the parent would give
     * D dp t = 1 kg m^2/s after 1 s */
    assert_true(worst < 1e-4);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

/* ---- 5. loader ---- */

static void expect_error(const char *motor, const char *needle)
{
    char text[4096];
    snprintf(text, sizeof text,
             "format: 1\nname: bad\ngravity: [0, -9.81, 0]\n"
             "bodies:\n  - name: wheel\n"
             "    joint: {name: w, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: 0}\n"
             "    mass: 20\n    com: [0, 0, 0]\n    inertia: [0.3, 0.3, 0.5]\n"
             "hydraulics:\n  fluid: {bulk_modulus: 1.5e9, density: 850}\n"
             "  sources: [{name: P, pressure: 5.1e6}, {name: T, pressure: 1.0e5}]\n"
             "  throttles: [{name: th, from: P, to: T, flow_coefficient: 1e-9}]\n"
             "  motors:\n%s",
             motor);
    hymo_model *m = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_string(text, "<bad>", &m, &err) == HYMO_OK) {
        hymo_model_free(m);
        fail_msg("loaded, expected '%s'", needle);
    }
    if (!strstr(err.message, needle)) fail_msg("'%s' lacks '%s'", err.message, needle);
}

static void test_loader_errors(void **state)
{
    (void)state;
    expect_error("    - {name: m, joint: nope, port_a: P, port_b: T, displacement: 1e-5}\n", "unknown joint 'nope'");
    expect_error("    - {name: m, joint: w, port_a: P, port_b: P, displacement: 1e-5}\n", "two different nodes");
    expect_error("    - {name: m, joint: w, port_a: P, port_b: X, displacement: 1e-5}\n", "unknown hydraulic node");
    expect_error("    - {name: m, joint: w, port_a: P, port_b: T, displacement: 0}\n", "must be positive");
    expect_error("    - {name: m, joint: w, port_a: P, port_b: T, displacement: 1e-5, hydromechanical_efficiency: 1.2}\n",
                 "(0, 1]");
    expect_error("    - {name: m, joint: w, port_a: P, port_b: T, displacement: 1e-5, leakage: -1}\n", "must not be negative");
    expect_error("    - {name: th, joint: w, port_a: P, port_b: T, displacement: 1e-5}\n", "duplicate name 'th'");
    expect_error("    - {name: m, joint: w, port_a: P, port_b: T, displacement: 1e-5}\n"
                 "    - {name: m2, joint: w, port_a: P, port_b: T, displacement: 1e-5}\n",
                 "already has motor 'm'");
    expect_error("    - {name: m, joint: w, port_a: P, port_b: T, displacement: 1e-5, volumetric: 1}\n", "volumetric");
    expect_error("    - {name: m, joint: w, port_a: P, displacement: 1e-5}\n", "port_b");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_derivatives), cmocka_unit_test(test_held_pressure),
        cmocka_unit_test(test_steady_speed), cmocka_unit_test(test_modes_agree),
        cmocka_unit_test(test_reaction_on_parent),
        cmocka_unit_test(test_loader_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
