/* No allocation inside the step loop (DEVELOPERS.md, "Performance").
 *
 * This executable is linked with -Wl,--wrap=malloc,--wrap=calloc,
 * --wrap=realloc (tests/CMakeLists.txt), so every allocation made by hymo's
 * own code (the static hymo_lib and this file) goes through the counters
 * below.  Allocations inside shared libraries (HDF5, KLU, LAPACK, libyaml)
 * are not seen; the dense solver used here calls none of them in the loop.
 *
 * - hymo_sim_step: zero allocations over 300 steps that cross an input
 *   jump, for every shipped model, both formulations and both Jacobian modes.
 * - hymo_run with an HDF5 output and hymo_cosim_run: whole runs of
 *   different lengths make the same number of allocations in hymo's code
 *   (set-up and output only), i.e. none per step or per communication step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "hymo/cosim.h"
#include "hymo/sim.h"
#include "test_util.h"


static const char *const MODELS[] = {"fourbar.yaml", "quickreturn.yaml", "crane1.yaml", "crane2.yaml"};
#define N_MODELS 4

static void test_step_loop(void **state)
{
    (void)state;
    for (int mi = 0; mi < N_MODELS; ++mi) {
        hymo_model *model = test_load_model(MODELS[mi]);
        for (int form = 0; form < 2; ++form)
            for (int jac = 0; jac < 2; ++jac) {
                hymo_run_options opt;
                hymo_run_options_default(&opt, model);
                opt.formulation = form ? HYMO_FORMULATION_PENALTY : HYMO_FORMULATION_DOUBLE_STEP;
                opt.jacobian = jac ? HYMO_JACOBIAN_FAST : HYMO_JACOBIAN_NUMERIC;
                hymo_sim *sim = test_sim_create(model, &opt);
                hymo_error err;
                hymo_error_clear(&err);
                /* start 150 steps before the first input change at 1 s */
                while (hymo_sim_time(sim) < 1.0 - 150.5 * opt.dt)
                    if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
                long before = test_n_allocs;
                for (int k = 0; k < 300; ++k)
                    if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
                long during = test_n_allocs - before;
                if (during != 0)
                    fail_msg("%s, formulation %d, jacobian %d: %ld allocations in 300 steps", MODELS[mi], form,
                             jac, during);
                hymo_sim_free(sim);
            }
        hymo_model_free(model);
    }
}

/* a pump speed and a flow control set flow driven by
 * signals (their kink and steps: events, the start rates re-evaluated at a
 * jump) allocate nothing in the loop either; whole runs with the flows
 * recorded make as many allocations at 0.2 s as at 0.4 s. */
static long run_allocs(const hymo_model *model, double t_end, const char *out);
static void test_pump_signals_loop(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("../tests/models/pump_signal_line.yaml");
    for (int jac = 0; jac < 2; ++jac) {
        hymo_run_options opt;
        hymo_run_options_default(&opt, model);
        opt.jacobian = jac ? HYMO_JACOBIAN_FAST : HYMO_JACOBIAN_NUMERIC;
        hymo_sim *sim = test_sim_create(model, &opt);
        hymo_error err;
        hymo_error_clear(&err);
        long before = test_n_allocs;
        for (int k = 0; k < 400; ++k)
            if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        long during = test_n_allocs - before;
        if (during != 0) fail_msg("pump_signal_line, jacobian %d: %ld allocations in 400 steps", jac, during);
        assert_int_equal(hymo_sim_events(sim, NULL), 4);
        hymo_sim_free(sim);
    }
    const long a = run_allocs(model, 0.2, "no_alloc_pump_a.h5"), b = run_allocs(model, 0.4, "no_alloc_pump_b.h5");
    if (a != b) fail_msg("pump_signal_line: %ld allocations to 0.2 s, %ld to 0.4 s", a, b);
    hymo_model_free(model);
}

static long run_allocs(const hymo_model *model, double t_end, const char *out)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, model);
    opt.jacobian = HYMO_JACOBIAN_FAST;
    opt.t_end = t_end;
    hymo_run_summary summary;
    hymo_error err;
    hymo_error_clear(&err);
    long before = test_n_allocs;
    if (hymo_run(model, &opt, out, &summary, &err) != HYMO_OK) fail_msg("%s", err.message);
    long n = test_n_allocs - before;
    remove(out);
    return n;
}

static void test_run_with_output(void **state)
{
    (void)state;
    long c0 = hymo_model_compilations();
    hymo_model *model = test_load_model("fourbar.yaml");
    long c1 = hymo_model_compilations();
    /* the first run computes the model's initial state (assembly, static
     * pressures) into the compiled model; later runs share it */
    long first = run_allocs(model, 1.5, "no_alloc_0.h5");
    long c2 = hymo_model_compilations();
    long a = run_allocs(model, 1.5, "no_alloc_a.h5"), b = run_allocs(model, 3.0, "no_alloc_b.h5");
    print_message("hymo_run with output: %ld allocations for the first 1.5 s run, then %ld for 1.5 s, %ld for 3 s; "
                  "compilations: load %ld, first run %ld, later runs %ld\n",
                  first, a, b, c1 - c0, c2 - c1, hymo_model_compilations() - c2);
    assert_true(a == b);
    assert_true(first > a);
    assert_int_equal(c1 - c0, 1);                         /* constants, at load */
    assert_int_equal(c2 - c1, 1);                         /* initial state, on first use */
    assert_int_equal(hymo_model_compilations() - c2, 0); /* nothing per run afterwards */
    hymo_model_free(model);
}

static long cosim_allocs(const hymo_model *model, double t_end, hymo_approx_kind approx)
{
    hymo_cosim_options opt;
    hymo_cosim_options_default(&opt, model);
    opt.mech.t_end = t_end;
    opt.approx = approx;
    hymo_cosim_summary summary;
    hymo_error err;
    hymo_error_clear(&err);
    long before = test_n_allocs;
    if (hymo_cosim_run(model, &opt, NULL, "no_alloc_cosim.h5", &summary, &err) != HYMO_OK)
        fail_msg("%s", err.message);
    long n = test_n_allocs - before;
    remove("no_alloc_cosim.h5");
    assert_true(summary.stable);
    return n;
}

static void test_cosim_loop(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("crane2.yaml");
    const hymo_approx_kind approx[] = {HYMO_APPROX_LAGRANGE2, HYMO_APPROX_INTERFACE_MODEL};
    cosim_allocs(model, 1.2, approx[0]); /* compiles the initial state */
    for (int i = 0; i < 2; ++i) {
        long a = cosim_allocs(model, 1.2, approx[i]), b = cosim_allocs(model, 2.4, approx[i]);
        print_message("hymo_cosim_run (%s): %ld allocations for 1.2 s, %ld for 2.4 s\n",
                      hymo_approx_name(approx[i]), a, b);
        assert_true(a == b);
    }
    hymo_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_loop),
        cmocka_unit_test(test_run_with_output),
        cmocka_unit_test(test_cosim_loop),
        cmocka_unit_test(test_pump_signals_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
