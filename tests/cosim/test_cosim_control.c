/* Energy-controlled communication steps (hymo_cosim_options.H_control,
 * src/cosim/cosim_control.c) on crane1:
 *
 * - retake: a controlled run with rejected steps (each rejected step
 *   restored from the checkpoint and retaken with a smaller H) equals, bit
 *   for bit in every row, a run that takes the accepted step sizes directly
 *   (hymo_cosim_control_replay: no rejection, but the checkpoint saved
 *   before every step, as in the controlled run: the mechanics' snapshot
 *   invalidates its Newton matrix, so a run that never saves differs at
 *   round-off).  Jacobi velocity-pressure p = 2, Gauss-Seidel (hydraulics
 *   first) with the interface model, Jacobi velocity-force p = 0
 *   (rectangle rule) and Gauss-Seidel (mechanics first) p = 1;
 * - the error against the monolithic reference falls monotonically as the
 *   tolerance falls by decades, and the number of steps rises;
 * - every H is a multiple of H_min within [H_min, H_max], the steps land on
 *   t_end and on the output grid;
 * - refusals: TLM, H not a multiple of H_min, t_end not a multiple of
 *   H_min. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_internal.h"
#include "hymo/cosim.h"
#include "hymo/reference.h"
#include "test_util.h"

static void controlled(hymo_cosim_options *opt, const hymo_model *model, double rtol, double atol, double t_end)
{
    hymo_cosim_options_default(opt, model);
    opt->H_control = HYMO_H_ENERGY;
    opt->tol_energy_rel = rtol, opt->tol_energy_abs = atol;
    opt->H = 8e-3, opt->H_min = opt->mech.dt = 1e-3, opt->H_max = 2e-2;
    opt->mech.t_end = t_end;
}

/* Every row array of a and b equal bit for bit. */
static void assert_rows_identical(const hymo_reference *a, const hymo_reference *b)
{
    assert_int_equal(a->n, b->n);
    const size_t n = (size_t)a->n;
    assert_memory_equal(a->time, b->time, n * sizeof(double));
    assert_memory_equal(a->z, b->z, n * (size_t)a->nz * sizeof(double));
    assert_memory_equal(a->zd, b->zd, n * (size_t)a->nz * sizeof(double));
    assert_memory_equal(a->p, b->p, n * (size_t)a->np * sizeof(double));
    assert_memory_equal(a->s, b->s, n * (size_t)a->na * sizeof(double));
    assert_memory_equal(a->sd, b->sd, n * (size_t)a->na * sizeof(double));
    assert_memory_equal(a->force, b->force, n * (size_t)a->na * sizeof(double));
}

static void retake_case(hymo_cosim_scheme scheme, hymo_coupling_kind coupling, hymo_approx_kind approx)
{
    hymo_model *model = test_load_model("crane1.yaml");
    hymo_cosim_options opt;
    controlled(&opt, model, 1e-4, 1e-5, 2.0);
    opt.scheme = scheme, opt.coupling = coupling, opt.approx = approx;
    hymo_cosim_summary sa, sb;
    test_cosim_run(model, &opt, NULL, "control_retake_a.h5", &sa);
    hymo_reference *a = test_read_ref("control_retake_a.h5");
    print_message("%s %s %s: %ld steps, %ld rejected, H %g..%g s\n", hymo_cosim_scheme_name(scheme),
                  hymo_coupling_name(coupling), hymo_approx_name(approx), sa.n_macro, sa.n_rejected, sa.H_used_min,
                  sa.H_used_max);
    assert_true(sa.stable);
    assert_true(sa.can_reject);
    assert_true(sa.n_rejected > 0);
    assert_int_equal(a->n, sa.n_macro + 1);
    double *H = malloc((size_t)a->n * sizeof *H);
    assert_non_null(H);
    for (int i = 0; i + 1 < a->n; ++i) {
        H[i] = a->time[i + 1] - a->time[i];
        const double q = H[i] / opt.H_min;
        assert_true(fabs(q - round(q)) < 1e-6 && q >= 1.0 - 1e-9 && H[i] <= opt.H_max * (1 + 1e-9));
    }
    assert_close(a->time[a->n - 1], 2.0, 1e-9);
    hymo_cosim_control_replay(H, a->n - 1);
    test_cosim_run(model, &opt, NULL, "control_retake_b.h5", &sb);
    hymo_cosim_control_replay(NULL, 0);
    assert_int_equal(sb.n_rejected, 0);
    hymo_reference *b = test_read_ref("control_retake_b.h5");
    assert_rows_identical(a, b);
    hymo_ref_free(a);
    hymo_ref_free(b);
    free(H);
    hymo_model_free(model);
}

static void test_retake_jacobi_p2(void **state)
{
    (void)state;
    retake_case(HYMO_SCHEME_JACOBI, HYMO_COUPLING_VELOCITY_PRESSURE, HYMO_APPROX_LAGRANGE2);
}

static void test_retake_gs_interface_model(void **state)
{
    (void)state;
    retake_case(HYMO_SCHEME_GAUSS_SEIDEL_HYD_FIRST, HYMO_COUPLING_VELOCITY_PRESSURE, HYMO_APPROX_INTERFACE_MODEL);
}

static void test_retake_jacobi_force_p0(void **state)
{
    (void)state;
    retake_case(HYMO_SCHEME_JACOBI, HYMO_COUPLING_VELOCITY_FORCE, HYMO_APPROX_LAGRANGE0);
}

static void test_retake_gs_p1(void **state)
{
    (void)state;
    retake_case(HYMO_SCHEME_GAUSS_SEIDEL_MECH_FIRST, HYMO_COUPLING_VELOCITY_PRESSURE, HYMO_APPROX_LAGRANGE1);
}

/* Gauss-Seidel (hydraulics first), interface model, 6 s of crane1: max |ds|
 * falls and the steps rise at tolerances 1e-1 .. 1e-4 (atol = rtol / 10 J). */
static void test_error_falls_with_tolerance(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("crane1.yaml");
    hymo_reference *ref = test_monolithic(model, 0.0, 6.0, "control_mono_ref.h5");
    double prev_err = HUGE_VAL;
    long prev_steps = 0;
    for (int k = 0; k < 4; ++k) {
        const double rtol = pow(10.0, -1 - k);
        hymo_cosim_options opt;
        controlled(&opt, model, rtol, rtol / 10.0, 6.0);
        opt.scheme = HYMO_SCHEME_GAUSS_SEIDEL_HYD_FIRST;
        opt.approx = HYMO_APPROX_INTERFACE_MODEL;
        opt.H_max = 5e-2;
        hymo_cosim_summary sum;
        test_cosim_run(model, &opt, ref, NULL, &sum);
        const double e = sum.errors.max[HYMO_CMP_S];
        print_message("tol %g,%g: %ld steps, %ld rejected, max |ds| %.4g m, max |dp| %.4g Pa\n", rtol, rtol / 10,
                      sum.n_macro, sum.n_rejected, e, sum.errors.max[HYMO_CMP_P]);
        assert_true(sum.stable);
        assert_true(e < prev_err);
        assert_true(sum.n_macro > prev_steps);
        prev_err = e, prev_steps = sum.n_macro;
    }
    hymo_ref_free(ref);
    hymo_model_free(model);
}

/* With output_dt every multiple of it is a row. */
static void test_output_grid(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("crane1.yaml");
    hymo_cosim_options opt;
    controlled(&opt, model, 1e-2, 1e-3, 3.0);
    opt.output_dt = 0.1;
    opt.H_max = 5e-2;
    hymo_cosim_summary sum;
    test_cosim_run(model, &opt, NULL, "control_grid.h5", &sum);
    hymo_reference *r = test_read_ref("control_grid.h5");
    int found = 0;
    for (int i = 0; i < r->n; ++i) {
        const double g = r->time[i] / 0.1;
        found += fabs(g - round(g)) < 1e-9;
    }
    print_message("%d rows, %d on the 0.1 s grid, H up to %g s\n", r->n, found, sum.H_used_max);
    assert_int_equal(found, 31);
    assert_true(sum.H_used_max > 0.01); /* larger steps between the grid points */
    hymo_ref_free(r);
    hymo_model_free(model);
}

static void test_refusals(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("crane1.yaml");
    hymo_cosim_options opt;
    hymo_error err;
    controlled(&opt, model, 1e-2, 1e-3, 3.0);
    opt.coupling = HYMO_COUPLING_TLM;
    assert_int_equal(hymo_cosim_options_check(&opt, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "TLM"));
    controlled(&opt, model, 1e-2, 1e-3, 3.0);
    opt.H = 2.5e-3, opt.mech.dt = 5e-4; /* whole internal steps, but not a multiple of H_min = 1 ms */
    assert_int_equal(hymo_cosim_options_check(&opt, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "multiple of H_min"));
    controlled(&opt, model, 1e-2, 1e-3, 3.0005);
    assert_int_equal(hymo_cosim_options_check(&opt, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "t_end"));
    controlled(&opt, model, 1e-2, 0.0, 3.0);
    assert_int_equal(hymo_cosim_options_check(&opt, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "tol-energy"));
    controlled(&opt, model, 1e-2, 1e-3, 3.0);
    assert_int_equal(hymo_cosim_option("--tol-energy", "1e-3,x", &opt, &err), -1);
    assert_int_equal(hymo_cosim_option("--tol-energy", "1e-3,1e-6", &opt, &err), 1);
    assert_close(opt.tol_energy_abs, 1e-6, 0.0);
    assert_int_equal(hymo_cosim_option("--H-control", "energy", &opt, &err), 1);
    assert_int_equal(hymo_cosim_option("--H-control", "adaptive", &opt, &err), -1);
    hymo_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retake_jacobi_p2),        cmocka_unit_test(test_retake_gs_interface_model),
        cmocka_unit_test(test_retake_jacobi_force_p0),  cmocka_unit_test(test_retake_gs_p1),
        cmocka_unit_test(test_error_falls_with_tolerance), cmocka_unit_test(test_output_grid),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
