/* The approximation rows of the co-simulation tables (src/cosim/cosim_tables.h)
 * as a property of a run's file, not only of the golden answers: the
 * residual energy accumulates the recorded residual powers by the row's
 * rule -- the rectangle rule E_n - E_{n-1} = H sum_a dP_a,n for zero-order
 * extrapolation, the trapezoidal rule H sum_a (dP_a,n-1 + dP_a,n) / 2 for
 * every other approximation (seed 000 Eqs. 23-24) -- and not by the other
 * rule.  And the tables' ranges: a value past a table's last row is
 * refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/cosim.h"
#include "test_hdf5.h"
#include "test_util.h"

/* whole dataset: rows x cols into a new array */
static double *read_matrix(hid_t f, const char *path, int *rows, int *cols)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0) fail_msg("no dataset %s", path);
    hid_t sp = H5Dget_space(d);
    hsize_t dims[2] = {0, 1};
    int rank = H5Sget_simple_extent_dims(sp, dims, NULL);
    *rows = (int)dims[0];
    *cols = rank == 2 ? (int)dims[1] : 1;
    double *v = calloc((size_t)*rows * (size_t)*cols + 1, sizeof *v);
    assert_non_null(v);
    H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Sclose(sp), H5Dclose(d);
    return v;
}

/* Largest deviation of the recorded energy steps from the rectangle rule
 * (*rect) and from the trapezoidal rule (*trap), relative to the largest
 * step. */
static void energy_rules(hymo_coupling_kind coupling, hymo_approx_kind approx, double *rect, double *trap)
{
    hymo_model *model = test_load_model("crane1.yaml");
    hymo_cosim_options opt;
    hymo_cosim_options_default(&opt, model);
    opt.coupling = coupling;
    opt.approx = approx;
    opt.mech.t_end = 2.0; /* the valve opens at t = 1 s */
    hymo_cosim_summary sum;
    test_cosim_run(model, &opt, NULL, "cosim_tables.h5", &sum);
    assert_true(sum.stable);
    hid_t f = H5Fopen("cosim_tables.h5", H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    int n, nb, n1, one;
    double *dP = read_matrix(f, "cosim/residual_power", &n, &nb);
    double *E = read_matrix(f, "cosim/residual_energy_total", &n1, &one);
    H5Fclose(f);
    assert_int_equal(n, n1);
    assert_int_equal(n, 2001);
    double max_step = 0.0, dr = 0.0, dt = 0.0;
    for (int r = 1; r < n; ++r) {
        double p = 0.0, p_prev = 0.0;
        for (int a = 0; a < nb; ++a) p += dP[r * nb + a], p_prev += dP[(r - 1) * nb + a];
        const double step = E[r] - E[r - 1];
        max_step = fmax(max_step, fabs(step));
        dr = fmax(dr, fabs(step - opt.H * p));
        dt = fmax(dt, fabs(step - 0.5 * opt.H * (p_prev + p)));
    }
    assert_true(max_step > 0.0);
    *rect = dr / max_step, *trap = dt / max_step;
    print_message("%s, extrapolation %s: energy steps off the rectangle rule by %.3g, off the trapezoidal rule by "
                  "%.3g (relative)\n",
                  hymo_coupling_name(coupling), hymo_approx_name(approx), *rect, *trap);
    free(dP);
    free(E);
    remove("cosim_tables.h5");
    hymo_model_free(model);
}

static void test_residual_energy_rule(void **state)
{
    (void)state;
    const hymo_coupling_kind couplings[2] = {HYMO_COUPLING_VELOCITY_PRESSURE, HYMO_COUPLING_VELOCITY_FORCE};
    const hymo_approx_kind approx[4] = {HYMO_APPROX_LAGRANGE0, HYMO_APPROX_LAGRANGE1, HYMO_APPROX_QUADRATIC,
                                        HYMO_APPROX_INTERFACE_MODEL};
    for (int c = 0; c < 2; ++c)
        for (int k = 0; k < 4; ++k) {
            double rect, trap;
            energy_rules(couplings[c], approx[k], &rect, &trap);
            const double right = k == 0 ? rect : trap, wrong = k == 0 ? trap : rect;
            assert_true(right < 1e-9);  /* the row's rule, up to the round-off of the sums */
            assert_true(wrong > 1e-4); /* and not the other one */
        }
}

/* A value past the last row of a table is refused, by the options' check
 * and by the master; the last row is accepted. */
static void test_out_of_range(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("crane1.yaml");
    hymo_cosim_options ok;
    hymo_cosim_options_default(&ok, model);
    hymo_error err;
    for (int field = 0; field < 5; ++field)
        for (int past = 0; past < 2; ++past) {
            hymo_cosim_options o = ok;
            const int last[5] = {HYMO_SCHEME_GAUSS_SEIDEL_HYD_FIRST, HYMO_COUPLING_TLM, HYMO_APPROX_INTERFACE_MODEL,
                                 HYMO_MECH_INDEX1, HYMO_MECH_INPUTS_HOLD};
            const int v = last[field] + past;
            switch (field) { /* the test sets the options' fields; it does not choose by them */
            case 0: o.scheme = (hymo_cosim_scheme)v; break;
            case 1: o.coupling = (hymo_coupling_kind)v; break;
            case 2: o.approx = (hymo_approx_kind)v; break;
            case 3: o.mech_integrator = (hymo_mech_integrator_kind)v; break;
            default: o.mech_inputs = (hymo_mech_inputs_kind)v; break;
            }
            hymo_error_clear(&err);
            const hymo_status st = hymo_cosim_options_check(&o, &err);
            if (past) {
                assert_int_equal(st, HYMO_ERR_ARGUMENT);
                assert_non_null(strstr(err.message, "out of range"));
            } else {
                assert_int_equal(st, HYMO_OK);
            }
        }
    hymo_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_residual_energy_rule),
        cmocka_unit_test(test_out_of_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
