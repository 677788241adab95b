/* Prescribed joint motion (docs/model-format.md,
 * "driven_joints"):
 *   1. a single pendulum driven at its pivot: angle = f(t) exactly and the
 *      recorded reaction = I_o f'' + m g r cos f (hand formula);
 *   2. a crank-rocker four-bar driven at its crank (closed loop): numeric
 *      and fast Jacobians agree, penalty's positions agree with
 *      double-step's, the drive's work equals the mechanism's energy gain
 *      (drift), constraints at round-off;
 *   3. loader and run-time errors.
 * The pendulum with a free second link against scipy: python/tests/test_driven.py. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/sim.h"
#include "test_util.h"

static const char *const pendulum =
    "format: 1\nname: p\ngravity: [0, -9.81, 0]\n"
    "signals:\n  - {name: a, points: [[0, 0], [0.2, 0], [1.2, 3], [1.7, 3], [2.0, 1]], filter_time_constant: 0.08}\n"
    "bodies:\n  - name: link\n"
    "    joint: {name: q, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: 0}\n"
    "    mass: 2\n    com: [0.5, 0, 0]\n    inertia: [0.01, 0.1, 0.1]\n"
    "driven_joints:\n  - {name: drive, joint: q, signal: a}\n";

static hymo_sim *create(const hymo_model *m, hymo_formulation_kind form, hymo_jacobian_mode jac, double dt)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.formulation = form;
    opt.jacobian = jac;
    opt.dt = dt;
    return test_sim_create(m, &opt);
}

static hymo_model *load_text(const char *text, hymo_error *err)
{
    hymo_model *m = NULL;
    hymo_error_clear(err);
    if (hymo_model_load_string(text, "<driven>", &m, err) != HYMO_OK) return NULL;
    return m;
}

static void test_pendulum_reaction(void **state)
{
    (void)state;
    hymo_error err;
    hymo_model *m = load_text(pendulum, &err);
    if (!m) fail_msg("%s", err.message);
    const double Io = 0.1 + 2 * 0.25, mgr = 2 * 9.81 * 0.5;
    hymo_sim *sim = create(m, HYMO_FORMULATION_DOUBLE_STEP, HYMO_JACOBIAN_FAST, 1e-3);
    assert_close(hymo_sim_actuator_force(sim)[0], mgr, 1e-12); /* at rest: holds the horizontal link */
    double worst_q = 0, worst_t = 0;
    for (int k = 0; k < 2500; ++k) {
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        const double t = hymo_sim_time(sim);
        double d[2];
        const double f = hymo_signal_eval_d(&m->signals[0], t, -1, 1e-3, d);
        worst_q = fmax(worst_q, fabs(hymo_sim_z(sim)[0] - f));
        assert_close(hymo_sim_zd(sim)[0], d[0], 1e-9);
        worst_t = fmax(worst_t, fabs(hymo_sim_actuator_force(sim)[0] - (Io * d[1] + mgr * cos(f))));
    }
    printf("pendulum: |q - f| <= %.2g rad, |reaction - (I_o f'' + m g r cos f)| <= %.2g N m\n", worst_q, worst_t);
    assert_true(worst_q < 1e-12 && worst_t < 1e-9);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

static void run_fourbar(const hymo_model *m, hymo_formulation_kind form, hymo_jacobian_mode jac, double *z, double *F,
                        hymo_run_summary *sum)
{
    hymo_sim *sim = create(m, form, jac, 1e-3);
    hymo_error err;
    for (int k = 0; k < 1500; ++k)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    memcpy(z, hymo_sim_z(sim), 3 * sizeof(double));
    *F = hymo_sim_actuator_force(sim)[0];
    hymo_sim_summary(sim, sum);
    hymo_sim_free(sim);
}

static void test_fourbar(void **state)
{
    (void)state;
    hymo_model *m = test_load_test_model("driven_fourbar.yaml");
    double z[4][3], F[4];
    hymo_run_summary s[4];
    run_fourbar(m, HYMO_FORMULATION_DOUBLE_STEP, HYMO_JACOBIAN_NUMERIC, z[0], &F[0], &s[0]);
    run_fourbar(m, HYMO_FORMULATION_DOUBLE_STEP, HYMO_JACOBIAN_FAST, z[1], &F[1], &s[1]);
    run_fourbar(m, HYMO_FORMULATION_PENALTY, HYMO_JACOBIAN_NUMERIC, z[2], &F[2], &s[2]);
    run_fourbar(m, HYMO_FORMULATION_PENALTY, HYMO_JACOBIAN_FAST, z[3], &F[3], &s[3]);
    printf("fourbar at 1.5 s: crank %.9f rad, reaction %.6f / %.6f / %.6f / %.6f N m, drift %.3g J (work %.4g J)\n",
           z[0][0], F[0], F[1], F[2], F[3], s[0].peak_drift, s[0].max_work);
    assert_true(z[0][0] > 6.0); /* about one turn */
    assert_close(F[1], F[0], 1e-8 * fabs(F[0]) + 1e-9);
    for (int r = 1; r < 4; ++r)
        for (int j = 0; j < 3; ++j) assert_close(z[r][j], z[0][j], 1e-9);
    /* double-step: the drive's work is the energy gained, to the rule's truncation error */
    assert_true(s[0].peak_drift < 1e-4 * s[0].max_work);
    hymo_model_free(m);
}

static void expect_error(const char *drivers, const char *needle)
{
    char text[4096];
    snprintf(text, sizeof text,
             "format: 1\nname: p\ngravity: [0, -9.81, 0]\n"
             "signals:\n  - {name: a, points: [[0, 0], [0.2, 0], [1.2, 3]]}\n"
             "  - {name: moving, points: [[0, 0], [1, 1]]}\n  - {name: off, points: [[0, 0.5], [1, 0.5]]}\n"
             "bodies:\n  - name: link\n"
             "    joint: {name: q, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: 0}\n"
             "    mass: 2\n    com: [0.5, 0, 0]\n    inertia: [0.01, 0.1, 0.1]\n"
             "hydraulics:\n  fluid: {bulk_modulus: 1.5e9, density: 850}\n"
             "  sources: [{name: P, pressure: 1e6}, {name: T, pressure: 1e5}]\n"
             "  throttles: [{name: th, from: P, to: T, flow_coefficient: 1e-9}]\n"
             "driven_joints:\n%s",
             drivers);
    hymo_error err;
    hymo_model *m = load_text(text, &err);
    if (m) {
        hymo_model_free(m);
        fail_msg("loaded, expected '%s'", needle);
    }
    if (!strstr(err.message, needle)) fail_msg("'%s' lacks '%s'", err.message, needle);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("  - {name: d, joint: nope, signal: a}\n", "unknown joint 'nope'");
    expect_error("  - {name: d, joint: q, signal: nope}\n", "unknown signal 'nope'");
    expect_error("  - {name: d, joint: q, signal: moving}\n", "starts at rest");
    expect_error("  - {name: d, joint: q, signal: off}\n", "must agree");
    expect_error("  - {name: th, joint: q, signal: a}\n", "duplicate name 'th'");
    expect_error("  - {name: d, joint: q, signal: a}\n  - {name: e, joint: q, signal: a}\n", "already driven by 'd'");
    expect_error("  - {name: d, joint: q, signal: a, speed: 1}\n", "speed");
    /* IDA is refused at creation */
    hymo_error err;
    hymo_model *m = load_text(pendulum, &err);
    if (!m) fail_msg("%s", err.message);
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.integrator = HYMO_INTEGRATOR_IDA;
    hymo_sim *sim = NULL;
    assert_int_equal(hymo_sim_create(m, &opt, &sim, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "trapezoidal"));
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pendulum_reaction),
        cmocka_unit_test(test_fourbar),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
