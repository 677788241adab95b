/* Controllers and studies (include/hymo/control.h, issue 13 item 2):
 *   - an input value set between steps is a step of the reference at that
 *     time: crane1 with U_ref held at 0 and set to 5 at t = 0.2 s equals
 *     (trapezoidal: bit for bit; IDA: within its tolerance) crane1 whose
 *     signal table has that step;
 *   - a callback reproducing the model's signal reproduces the run;
 *   - a parameter set before the first step equals the model file with
 *     that value (bit for bit), and leaves the shared model and other runs
 *     of it untouched; a change mid-run changes the trajectory from then on
 *     in both integrators;
 *   - refused parameters (masses, geometry), unknown names and bad values
 *     are clear errors;
 *   - hymo_sim_summary after stepping by hand to t_end: complete, wall time > 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/control.h"
#include "hymo/sim.h"
#include "test_util.h"

/* crane1 with the text from `from` to the end of `to` replaced by `with` */
static hymo_model *crane1_edited(const char *from, const char *to, const char *with)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/crane1.yaml", HYMO_DATA_DIR);
    char *text = test_read_file(path);
    char *a = strstr(text, from);
    assert_non_null(a);
    char *b = strstr(a, to);
    assert_non_null(b);
    b += strlen(to);
    size_t n = strlen(text) + strlen(with) + 1;
    char *out = malloc(n);
    assert_non_null(out);
    snprintf(out, n, "%.*s%s%s", (int)(a - text), text, with, b);
    hymo_model *m = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_string(out, "crane1-edited", &m, &err) != HYMO_OK) fail_msg("%s", err.message);
    free(out);
    free(text);
    return m;
}

static hymo_model *crane1_step_at(double t, double u)
{
    char sig[256];
    snprintf(sig, sizeof sig, "points: [[0, 0], [%.17g, 0], [%.17g, %.17g], [30, %.17g]]", t, t, u, u);
    return crane1_edited("points: [[0, 0], [1, 0]", "[29, 0], [30, 0]]", sig);
}

static hymo_sim *make_sim(const hymo_model *m, hymo_integrator_kind integrator, double t_end)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.integrator = integrator;
    opt.t_end = t_end;
    if (integrator == HYMO_INTEGRATOR_IDA) opt.rtol = 1e-9, opt.atol = 1e-11;
    hymo_sim *sim = test_sim_create(m, &opt);
    return sim;
}

static void step_to(hymo_sim *sim, double t)
{
    hymo_error err;
    hymo_error_clear(&err);
    while (hymo_sim_time(sim) < t - 1e-9)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
}

static double max_rel_diff(const double *a, const double *b, int n)
{
    double d = 0.0;
    for (int i = 0; i < n; ++i) d = fmax(d, fabs(a[i] - b[i]) / fmax(1.0, fabs(b[i])));
    return d;
}

static void check_set_input_is_a_step(hymo_integrator_kind integrator, double tol)
{
    hymo_model *m = test_load_model("crane1.yaml");
    hymo_model *ms = crane1_step_at(0.2, 5.0);
    hymo_sim *a = make_sim(m, integrator, 1.0), *b = make_sim(ms, integrator, 1.0);
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_sim_set_input(a, "U_ref", 0.0, &err), HYMO_OK);
    step_to(a, 0.2);
    const double z1_before = hymo_sim_z(a)[0];
    assert_int_equal(hymo_sim_set_input(a, "dcv1", 5.0, &err), HYMO_OK); /* by valve name */
    double u = 0.0;
    assert_int_equal(hymo_sim_get_input(a, "U_ref", 0.7, &u, &err), HYMO_OK);
    assert_true(u == 5.0);
    step_to(a, 1.0);
    step_to(b, 1.0);
    const double dz = max_rel_diff(hymo_sim_z(a), hymo_sim_z(b), hymo_sim_nz(a));
    const double dp = max_rel_diff(hymo_sim_p(a), hymo_sim_p(b), hymo_sim_np(a));
    print_message("%s: set_input(5) at 0.2 s vs a table step: z1 %.6f -> %.6f rad, max rel diff z %.3g, p %.3g\n",
                  integrator == HYMO_INTEGRATOR_IDA ? "ida" : "trapezoidal", z1_before, hymo_sim_z(a)[0], dz, dp);
    assert_true(hymo_sim_z(a)[0] - z1_before > 0.01); /* the boom lifts */
    assert_true(dz <= tol);
    assert_true(dp <= tol);
    hymo_sim_free(a);
    hymo_sim_free(b);
    hymo_model_free(m);
    hymo_model_free(ms);
}

static void test_set_input_trapezoidal(void **state)
{
    (void)state;
    check_set_input_is_a_step(HYMO_INTEGRATOR_TRAPEZOIDAL, 1e-13);
}

static void test_set_input_ida(void **state)
{
    (void)state;
    check_set_input_is_a_step(HYMO_INTEGRATOR_IDA, 1e-5);
}

static double crane1_signal(double t, void *user) { return hymo_signal_eval((const hymo_signal *)user, t, +1); }

static void test_callback_reproduces_signal(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("crane1.yaml");
    for (int k = 0; k < 2; ++k) {
        const hymo_integrator_kind integ = k ? HYMO_INTEGRATOR_IDA : HYMO_INTEGRATOR_TRAPEZOIDAL;
        hymo_sim *a = make_sim(m, integ, 4.0), *b = make_sim(m, integ, 4.0);
        hymo_error err;
        hymo_error_clear(&err);
        assert_int_equal(hymo_sim_set_input_callback(a, "U_ref", crane1_signal, &m->signals[0], &err), HYMO_OK);
        step_to(a, 4.0);
        step_to(b, 4.0);
        const double dz = max_rel_diff(hymo_sim_z(a), hymo_sim_z(b), hymo_sim_nz(a));
        print_message("%s: callback = U_ref table, 4 s: max rel diff z %.3g (z1 = %.6f)\n", k ? "ida" : "trapezoidal",
                      dz, hymo_sim_z(b)[0]);
        assert_true(dz <= (k ? 1e-5 : 1e-12));
        /* back to the table: the same as b from here on */
        assert_int_equal(hymo_sim_clear_input(a, "U_ref", &err), HYMO_OK);
        hymo_sim_free(a);
        hymo_sim_free(b);
    }
    hymo_model_free(m);
}

/* A parameter set at t = 0 gives the run of the file that states it: each
 * kind that the circuit's constants hold (hymo_circuit_refresh_constants:
 * a source's pressure, a throttle's Ct, the fluid's bulk modulus (the fixed
 * volume V3's weight) and laminar transition (sqrt(p_tr))). */
static void test_parameter_at_start_equals_file(void **state)
{
    (void)state;
    static const struct {
        const char *name, *from, *to, *with;
        double factor; /* of the file's value (powers of 2 and the pump's: the same bits) */
    } cases[] = {
        {"source.pump.pressure", "{name: pump, pressure: 7.6e6}", "}", "{name: pump, pressure: 6.0e6}", 6.0 / 7.6},
        {"throttle.throttle1.Ct", "area: 2.83e-5", "5", "area: 1.415e-5", 0.5},
        {"fluid.bulk_modulus", "bulk_modulus: 1.5e9", "9", "bulk_modulus: 0.75e9", 0.5},
        {"fluid.p_transition", "laminar_transition: 2.0e5", "5", "laminar_transition: 8.0e5", 4.0},
    };
    hymo_model *m = test_load_model("crane1.yaml");
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        hymo_model *mf = crane1_edited(cases[ci].from, cases[ci].to, cases[ci].with);
        for (int k = 0; k < 2; ++k) {
            const hymo_integrator_kind integ = k ? HYMO_INTEGRATOR_IDA : HYMO_INTEGRATOR_TRAPEZOIDAL;
            hymo_sim *a = make_sim(m, integ, 8.0), *b = make_sim(mf, integ, 8.0), *c = make_sim(m, integ, 8.0);
            hymo_error err;
            hymo_error_clear(&err);
            double v0 = 0.0, vf = 0.0, v = 0.0;
            assert_int_equal(hymo_sim_get_parameter(a, cases[ci].name, &v0, &err), HYMO_OK);
            assert_int_equal(hymo_sim_get_parameter(b, cases[ci].name, &vf, &err), HYMO_OK);
            const double value = ci == 0 ? 6.0e6 : cases[ci].factor * v0;
            assert_true(vf == value); /* the file states the same number */
            assert_int_equal(hymo_sim_set_parameter(a, cases[ci].name, value, &err), HYMO_OK);
            assert_int_equal(hymo_sim_get_parameter(a, cases[ci].name, &v, &err), HYMO_OK);
            assert_true(v == value);
            assert_int_equal(hymo_sim_get_parameter(c, cases[ci].name, &v, &err), HYMO_OK);
            assert_true(v == v0); /* the other run of the shared model */
            step_to(a, 8.0);
            step_to(b, 8.0);
            step_to(c, 8.0);
            const double dz = max_rel_diff(hymo_sim_z(a), hymo_sim_z(b), hymo_sim_nz(a));
            const double dp = max_rel_diff(hymo_sim_p(a), hymo_sim_p(b), hymo_sim_np(a));
            const double dc = fmax(max_rel_diff(hymo_sim_z(a), hymo_sim_z(c), hymo_sim_nz(a)),
                                   max_rel_diff(hymo_sim_p(a), hymo_sim_p(c), hymo_sim_np(a)));
            print_message("%s: %s = %g set at t = 0 vs in the file: max rel diff z %.3g, p %.3g; vs unchanged: %.3g\n",
                          k ? "ida" : "trapezoidal", cases[ci].name, value, dz, dp, dc);
            assert_true(dz <= (k ? 1e-6 : 1e-13));
            assert_true(dp <= (k ? 1e-6 : 1e-13));
            assert_true(dc > 1e-5);
            hymo_sim_free(a);
            hymo_sim_free(b);
            hymo_sim_free(c);
        }
        hymo_model_free(mf);
    }
    const int pump = test_node_index(m, "pump");
    assert_true(m->nodes[pump].pressure == 7.6e6); /* the model is not changed */
    hymo_model_free(m);
}

static void test_parameter_mid_run(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("crane1.yaml");
    /* the last three also change the circuit's parameter constants
     * (hymo_circuit_refresh_constants: fixed volumes' W, sqrt(p_tr), sources) */
    const char *names[] = {"valve.dcv1.tau",     "throttle.throttle1.Ct", "cylinder.cyl1.viscous",
                           "fluid.bulk_modulus", "fluid.p_transition",    "source.pump.pressure"};
    const double factor[] = {3.0, 0.5, 4.0, 0.5, 4.0, 0.9};
    double z_trap[6][2];
    for (int k = 0; k < 2; ++k) {
        const hymo_integrator_kind integ = k ? HYMO_INTEGRATOR_IDA : HYMO_INTEGRATOR_TRAPEZOIDAL;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
            hymo_sim *a = make_sim(m, integ, 3.0), *b = make_sim(m, integ, 3.0);
            hymo_error err;
            hymo_error_clear(&err);
            step_to(a, 1.2);
            step_to(b, 1.2);
            double v;
            assert_int_equal(hymo_sim_get_parameter(a, names[i], &v, &err), HYMO_OK);
            if (hymo_sim_set_parameter(a, names[i], factor[i] * v, &err) != HYMO_OK) fail_msg("%s", err.message);
            assert_true(max_rel_diff(hymo_sim_z(a), hymo_sim_z(b), hymo_sim_nz(a)) == 0.0); /* state kept */
            step_to(a, 3.0);
            step_to(b, 3.0);
            const double dz = max_rel_diff(hymo_sim_z(a), hymo_sim_z(b), hymo_sim_nz(a));
            const double dp = max_rel_diff(hymo_sim_p(a), hymo_sim_p(b), hymo_sim_np(a));
            print_message("%s: %s x %g at 1.2 s: z diff %.3g, p diff %.3g at 3 s\n", k ? "ida" : "trapezoidal",
                          names[i], factor[i], dz, dp);
            assert_true(dz > 1e-6 || dp > 1e-6);
            /* both integrators apply the change at the same time: their
             * changed runs agree to the trapezoidal rule's accuracy */
            if (k == 0) {
                z_trap[i][0] = hymo_sim_z(a)[0], z_trap[i][1] = hymo_sim_z(a)[1];
            } else {
                const double d = max_rel_diff(hymo_sim_z(a), z_trap[i], 2);
                print_message("  ida vs trapezoidal after the change: z diff %.3g (the change itself: %.3g)\n", d, dz);
                assert_true(d < 0.01 * dz);
            }
            hymo_sim_free(a);
            hymo_sim_free(b);
        }
    }
    hymo_model_free(m);
}

static void expect_error(hymo_status st, const hymo_error *err, const char *needle)
{
    assert_int_equal(st, HYMO_ERR_ARGUMENT);
    print_message("  %s\n", err->message);
    if (!strstr(err->message, needle)) fail_msg("message '%s' lacks '%s'", err->message, needle);
}

static void test_refused(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("crane1.yaml");
    hymo_sim *sim = make_sim(m, HYMO_INTEGRATOR_TRAPEZOIDAL, 1.0);
    hymo_error err;
    hymo_error_clear(&err);
    expect_error(hymo_sim_set_parameter(sim, "body.body1.mass", 300.0, &err), &err, "compiled");
    expect_error(hymo_sim_set_parameter(sim, "cylinder.cyl1.piston_area", 1e-3, &err), &err, "compiled");
    expect_error(hymo_sim_set_parameter(sim, "gravity.y", -9.0, &err), &err, "gravity");
    expect_error(hymo_sim_set_parameter(sim, "valve.dcv9.tau", 0.01, &err), &err, "no valve named 'dcv9'");
    expect_error(hymo_sim_set_parameter(sim, "valve.dcv1.tau", -1.0, &err), &err, "must be > 0");
    expect_error(hymo_sim_set_parameter(sim, "cylinder.cyl1.efficiency", 1.5, &err), &err, "(0, 1]");
    expect_error(hymo_sim_set_parameter(sim, "source.V1.pressure", 1e6, &err), &err, "is a volume");
    expect_error(hymo_sim_set_parameter(sim, "valve.dcv1.colour", 1.0, &err), &err, "unknown parameter");
    expect_error(hymo_sim_set_parameter(sim, "tau", 1.0, &err), &err, "kind.name.field");
    expect_error(hymo_sim_set_input(sim, "U_reff", 1.0, &err), &err, "inputs: U_ref, dcv1 (valve)");
    expect_error(hymo_sim_set_input(sim, "U_ref", NAN, &err), &err, "not finite");
    expect_error(hymo_sim_set_input_callback(sim, "U_ref", NULL, NULL, &err), &err, "no callback");
    double v;
    assert_int_equal(hymo_sim_get_parameter(sim, "fluid.p_transition", &v, &err), HYMO_OK);
    assert_true(v == 2.0e5);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

static void test_summary_after_manual_steps(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("crane1.yaml");
    hymo_sim *sim = make_sim(m, HYMO_INTEGRATOR_TRAPEZOIDAL, 0.2505); /* last step shortened */
    hymo_run_summary s;
    step_to(sim, 0.1);
    hymo_sim_summary(sim, &s);
    assert_int_equal(s.complete, 0);
    step_to(sim, 0.2505);
    hymo_sim_summary(sim, &s);
    print_message("manual steps to t_end: complete %d, t %.6g, %ld steps, wall time %.3g s\n", s.complete,
                  s.t_reached, s.n_steps, s.wall_time);
    assert_int_equal(s.complete, 1);
    assert_int_equal(s.n_steps, 251);
    assert_true(s.wall_time > 0.0);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_input_trapezoidal),
        cmocka_unit_test(test_set_input_ida),
        cmocka_unit_test(test_callback_reproduces_signal),
        cmocka_unit_test(test_parameter_at_start_equals_file),
        cmocka_unit_test(test_parameter_mid_run),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_summary_after_manual_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
