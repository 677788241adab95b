/* The stability prediction along a reference trajectory (hymo/predict.h)
 * on crane1, velocity-pressure, p = 2, RK4 hydraulics, trapezoidal
 * mechanics, Jacobi (the default configuration; h_m = H as in a sweep):
 * - the predicted achievable H over {1, 2, 3, 4, 5} ms is 3 ms, the
 *   measured one of docs/cosimulation.md's table;
 * - rho(t) stays within 1e-3 of 1 at H = 1 ms (the undamped swing of the
 *   load keeps an eigenvalue on the unit circle) and exceeds 1.1 at 5 ms;
 * - the co-simulation itself: 3 ms runs stable to 30 s, 4 ms turns
 *   unstable within one point spacing (1.5 s) of the time at which rho
 *   first exceeds the limit (measured: 13.98 s and 14.25 s);
 * - repeated calls give the same rho(t) bit for bit (every probe starts
 *   from the point's checkpoint);
 * - the tlm coupling is refused. */
#include <math.h>
#include <string.h>

#include "hymo/predict.h"
#include "test_util.h"

static hymo_model *model;
static hymo_reference *ref;

static int setup(void **state)
{
    (void)state;
    model = test_load_model("crane1.yaml");
    ref = test_monolithic(model, 0.0, 0.0, "test_predict_ref.h5");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    hymo_ref_free(ref);
    hymo_model_free(model);
    return 0;
}

static void options(hymo_cosim_options *o, double H)
{
    hymo_cosim_options_default(o, model);
    o->H = o->mech.dt = H;
}

static void test_achievable(void **state)
{
    (void)state;
    hymo_cosim_options o;
    options(&o, 1e-3);
    hymo_predict_options po;
    hymo_predict_options_default(&po);
    const double Hs[] = {1e-3, 2e-3, 3e-3, 4e-3, 5e-3};
    hymo_predict_step steps[5];
    double ach;
    hymo_error err;
    assert_int_equal(hymo_predict_achievable(model, &o, ref, Hs, 5, &po, steps, &ach, &err), HYMO_OK);
    assert_true(fabs(ach - 3e-3) < 1e-12);
    for (int i = 0; i < 3; ++i) assert_true(steps[i].evaluated && steps[i].stable && steps[i].n_points == po.points);
    assert_true(steps[3].evaluated && !steps[3].stable && steps[3].rho_max > po.rho_limit);
    const int j1 = steps[3].n_points; /* the prediction stopped at the second point above the limit */
    assert_true(j1 >= 2 && j1 < po.points);
    assert_true(steps[3].t_first > 0.0 && steps[3].t_first < 30.0);
    assert_false(steps[4].evaluated); /* a smaller H already failed */

    /* the co-simulation: 3 ms stable, 4 ms unstable after rho first exceeded the limit */
    hymo_cosim_summary s;
    options(&o, 3e-3);
    assert_int_equal(hymo_cosim_run(model, &o, ref, NULL, &s, &err), HYMO_OK);
    assert_true(s.stable);
    options(&o, 4e-3);
    assert_int_equal(hymo_cosim_run(model, &o, ref, NULL, &s, &err), HYMO_OK);
    assert_false(s.stable);
    print_message("4 ms: rho %.3f > %.2f first at t = %g s; the run unstable at t = %g s\n", steps[3].rho_max,
                  po.rho_limit, steps[3].t_first, s.t_reached);
    assert_true(fabs(s.t_reached - steps[3].t_first) < 30.0 / po.points); /* within one point spacing */
}

static void test_rho_along(void **state)
{
    (void)state;
    hymo_predict_options po;
    hymo_predict_options_default(&po);
    double t[20], rho[20], t2[20], rho2[20];
    int n, n2;
    hymo_error err;
    hymo_cosim_options o;
    options(&o, 1e-3);
    assert_int_equal(hymo_predict_rho(model, &o, ref, &po, 0.0, t, rho, &n, &err), HYMO_OK);
    assert_int_equal(n, po.points);
    for (int j = 0; j < n; ++j) {
        assert_true(fabs(rho[j] - 1.0) < 1e-3);
        assert_true(j == 0 || t[j] > t[j - 1]);
    }
    assert_int_equal(hymo_predict_rho(model, &o, ref, &po, 0.0, t2, rho2, &n2, &err), HYMO_OK);
    assert_int_equal(n2, n);
    assert_memory_equal(rho, rho2, sizeof rho[0] * (size_t)n);
    options(&o, 5e-3);
    assert_int_equal(hymo_predict_rho(model, &o, ref, &po, 0.0, t, rho, &n, &err), HYMO_OK);
    double mx = 0.0;
    for (int j = 0; j < n; ++j) mx = fmax(mx, rho[j]);
    assert_true(mx > 1.1);
    /* stop_above: stops at the second of two consecutive points beyond it */
    assert_int_equal(po.sustain, 2);
    assert_int_equal(hymo_predict_rho(model, &o, ref, &po, 1.1, t, rho, &n, &err), HYMO_OK);
    assert_true(n >= 2 && rho[n - 1] > 1.1 && rho[n - 2] > 1.1);
    for (int j = 0; j + 2 < n; ++j) assert_true(rho[j] <= 1.1 || rho[j + 1] <= 1.1);
}

static void test_tlm_refused(void **state)
{
    (void)state;
    hymo_predict_options po;
    hymo_predict_options_default(&po);
    hymo_cosim_options o;
    options(&o, 2e-3);
    o.coupling = HYMO_COUPLING_TLM;
    double t[20], rho[20];
    int n;
    hymo_error err;
    assert_int_equal(hymo_predict_rho(model, &o, ref, &po, 0.0, t, rho, &n, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "tlm"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_achievable),
        cmocka_unit_test(test_rho_along),
        cmocka_unit_test(test_tlm_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
