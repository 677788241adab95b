/* Redundant constraint equations and structural multibody cases.
 * The Bennett linkage (data/bennett.yaml: one spatial
 * revolute cut of 5 equations on 3 joint coordinates, mobility 1, rank 2),
 * a mechanism left without a degree of freedom, the spatial translational
 * cut's twist taken from the start, and the `independent` hint.  Public API
 * only (model.h, sim.h, reference.h).
 *
 * Closed form (Bennett 1903; tests/independent/bennett.py checks it by DH
 * forward kinematics): with the DH joint angles theta_k the loop closes when
 *   theta3 = -theta1,  tan(theta1/2) tan(theta2/2) = K,
 *   K = sin((beta + alpha)/2) / sin((beta - alpha)/2), alpha = 40, beta = 65 deg;
 * the model's z_k = theta_k - theta_k(theta1 = 4 rad).  So along any
 * motion that satisfies the constraints, z3 = -z1 and z2 = theta2(4 + z1) -
 * theta2(4), independently of how hymo solved them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/reference.h"
#include "hymo/sim.h"
#include "test_util.h"

#define PI 3.14159265358979323846
#define THETA1_0 4.0

static double theta2_of(double t1)
{
    const double a = 40.0 * PI / 180.0, b = 65.0 * PI / 180.0;
    const double K = sin(0.5 * (b + a)) / sin(0.5 * (b - a));
    return 2.0 * atan2(K * cos(0.5 * t1), sin(0.5 * t1));
}

/* largest deviation of z from the Bennett relations */
static double bennett_closure(const double *z)
{
    const double e2 = fabs(z[1] - (theta2_of(THETA1_0 + z[0]) - theta2_of(THETA1_0)));
    const double e3 = fabs(z[2] + z[0]);
    return e2 > e3 ? e2 : e3;
}

static hymo_model *load_text(const char *text) { return test_load_text(text, "test_redundant"); }

/* Both formulations and Jacobians: the rank (2) and the 3 redundant rows
 * are found and reported; the assembly moves the deliberately wrong z2, z3
 * (3 and -2 deg) onto the closed loop; along 1 s the Bennett relations hold
 * (double-step: every equation <= 1e-10, the left-out rows too). */
static void test_bennett_runs(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("bennett.yaml");
    const hymo_formulation_kind forms[] = {HYMO_FORMULATION_DOUBLE_STEP, HYMO_FORMULATION_PENALTY};
    const hymo_jacobian_mode jacs[] = {HYMO_JACOBIAN_NUMERIC, HYMO_JACOBIAN_FAST};
    for (int f = 0; f < 2; ++f)
        for (int j = 0; j < 2; ++j) {
            hymo_run_options opt;
            hymo_run_options_default(&opt, model);
            opt.formulation = forms[f];
            opt.jacobian = jacs[j];
            opt.t_end = 1.0;
            hymo_sim *sim = test_sim_create(model, &opt);
            hymo_error err;
            hymo_error_clear(&err);
            const double *z = hymo_sim_z(sim);
            assert_true(bennett_closure(z) <= 1e-12); /* the assembled start */
            assert_true(fabs(z[0]) == 0.0);            /* z1 held (independent) */
            double worst = 0.0;
            while (hymo_sim_time(sim) < opt.t_end - 1e-9) {
                if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
                worst = fmax(worst, bennett_closure(hymo_sim_z(sim)));
            }
            hymo_run_summary s;
            hymo_sim_summary(sim, &s);
            print_message("%s %s: closure %.3g, |Phi| %.3g, redundant |Phi| %.3g, rank %d, %d redundant (%s), "
                          "independent %s, iterations %.2f, z1(1 s) = %.6f\n",
                          hymo_formulation_name(forms[f]), hymo_jacobian_name(jacs[j]), worst,
                          s.max_constraint_position, s.max_redundant_violation, s.constraint_rank, s.n_redundant,
                          s.redundant, s.independent, s.mean_iterations, hymo_sim_z(sim)[0]);
            assert_int_equal(s.constraint_rank, 2);
            assert_int_equal(s.n_redundant, 3);
            assert_true(strlen(s.redundant) > 0);
            assert_true(hymo_sim_z(sim)[0] > 0.3); /* it moves (z1 ~ +0.9 rad at 1 s) */
            if (forms[f] == HYMO_FORMULATION_DOUBLE_STEP) {
                assert_true(s.max_constraint_position <= 1e-10);
                assert_true(s.max_redundant_violation <= 1e-10);
                assert_true(worst <= 1e-9);
                assert_string_equal(s.independent, "z1"); /* the hint, honoured */
            } else {
                assert_true(s.max_constraint_position <= 1e-9);
                assert_true(worst <= 1e-8);
            }
            hymo_sim_free(sim);
        }
    hymo_model_free(model);
}

/* The rank and rows in the reference file (/constraints attributes). */
static void test_bennett_file(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("bennett.yaml");
    hymo_run_options opt;
    hymo_run_options_default(&opt, model);
    opt.t_end = 0.05;
    opt.error_estimate = 0;
    hymo_run_summary rs;
    hymo_error err;
    hymo_error_clear(&err);
    remove("redundant_run.h5");
    if (hymo_run(model, &opt, "redundant_run.h5", &rs, &err) != HYMO_OK) fail_msg("%s", err.message);
    hymo_reference *ref = test_read_ref("redundant_run.h5");
    assert_int_equal(ref->summary.constraint_rank, 2);
    assert_int_equal(ref->summary.n_redundant, 3);
    assert_string_equal(ref->summary.redundant, rs.redundant);
    assert_close(ref->summary.max_redundant_violation, rs.max_redundant_violation, 0.0);
    hymo_ref_free(ref);
    remove("redundant_run.h5");
    hymo_model_free(model);
}

/* A pendulum whose tip is held by a spherical cut: 3 equations of rank 1
 * for 1 coordinate leave no degree of freedom, a model error (not an
 * assembly or rank-deficiency failure). */
static const char *const LOCKED =
    "format: 1\nname: locked\ngravity: [0, -9.81, 0]\n"
    "ground: {points: {T: [1, 0, 0]}}\n"
    "bodies:\n"
    "  - name: b\n"
    "    joint: {name: q, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: 0}\n"
    "    mass: 1\n    com: [0.5, 0, 0]\n    inertia: [0.01, 0.1, 0.1]\n"
    "    points: {T: [1, 0, 0]}\n"
    "cut_joints:\n  - {name: tip, type: spherical, body_a: b, point_a: T, body_b: ground, point_b: T}\n";

static void test_no_mobility(void **state)
{
    (void)state;
    hymo_model *model = load_text(LOCKED);
    hymo_run_options opt;
    hymo_run_options_default(&opt, model);
    hymo_sim *sim = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_sim_create(model, &opt, &sim, &err), HYMO_ERR_MODEL);
    print_message("%s\n", err.message);
    assert_non_null(strstr(err.message, "3 constraint equations of rank 1 for 1 joint coordinates leave no degree"));
    hymo_model_free(model);
}

/* Spatial translational cut: a carriage slides along X (prismatic s) and
 * carries a block turned 21 deg about X (revolute w); the block is held on
 * a guide along X by a translational cut.  The start satisfies every
 * equation, so the assembly must keep w = 21 deg (the twist comes from the
 * start; before, it was locked to an internal direction and the block was
 * re-assembled turned).  4 of the 5 equations are redundant here (their
 * rows vanish), rank 1: s is the one degree of freedom. */
static const char *const SLIDER =
    "format: 1\nname: slider3d\ngravity: [0, -9.81, 0]\n"
    "bodies:\n"
    "  - name: carriage\n"
    "    joint: {name: s, type: prismatic, parent: ground, location: [0, 0, 0], axis: [1, 0, 0], initial: 0.2}\n"
    "    mass: 1\n    com: [0, 0, 0]\n    inertia: [0.01, 0.01, 0.01]\n"
    "  - name: block\n"
    "    joint: {name: w, type: revolute, parent: carriage, location: [0, 0, 0], axis: [1, 0, 0], initial: 21 deg}\n"
    "    mass: 2\n    com: [0, 0.1, 0]\n    inertia: [0.02, 0.02, 0.02]\n"
    "    points: {P: [0, 0, 0]}\n"
    "cut_joints:\n"
    "  - {name: guide, type: translational, body_a: block, point_a: P, body_b: ground, point_b: [0, 0, 0],\n"
    "     axis_a: [1, 0, 0], direction: [1, 0, 0]}\n";

static void test_translational_twist_from_start(void **state)
{
    (void)state;
    hymo_model *model = load_text(SLIDER);
    const hymo_formulation_kind forms[] = {HYMO_FORMULATION_DOUBLE_STEP, HYMO_FORMULATION_PENALTY};
    for (int f = 0; f < 2; ++f) {
        hymo_run_options opt;
        hymo_run_options_default(&opt, model);
        opt.formulation = forms[f];
        opt.t_end = 0.1;
        hymo_sim *sim = test_sim_create(model, &opt);
        hymo_error err;
        hymo_error_clear(&err);
        const double *z = hymo_sim_z(sim);
        print_message("%s: start s = %.15g, w = %.15g deg\n", hymo_formulation_name(forms[f]), z[0],
                      z[1] * 180.0 / PI);
        assert_close(z[0], 0.2, 1e-14);
        assert_close(z[1], 21.0 * PI / 180.0, 1e-14);
        while (hymo_sim_time(sim) < opt.t_end - 1e-9)
            if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        assert_close(hymo_sim_z(sim)[1], 21.0 * PI / 180.0, 1e-9); /* gravity cannot turn it */
        hymo_run_summary s;
        hymo_sim_summary(sim, &s);
        assert_int_equal(s.constraint_rank, 1);
        assert_int_equal(s.n_redundant, 4);
        hymo_sim_free(sim);
    }
    hymo_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bennett_runs),
        cmocka_unit_test(test_bennett_file),
        cmocka_unit_test(test_no_mobility),
        cmocka_unit_test(test_translational_twist_from_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
