/* Second-order convergence of the monolithic trapezoidal engine (issue:
 * errors at t = 10 s against a dt = 0.125 ms run fall ~4x per halving from
 * 2 ms to 0.25 ms).  The four-bar's U_ref steps (1, 2.5, 5, 8 s) fall on step
 * boundaries for every dt used; inputs are evaluated as one-sided limits.
 *
 * Tolerances: the model file's, with the default (contractive) Newton test,
 * which keeps the iteration error below the discretisation error at every
 * dt by itself (the seed's increment test needs 1e3x tighter tolerances
 * for that).
 * The reference's own error biases the last pair: for e ~ C h^2 the measured
 * ratio e(0.5)/e(0.25) is (0.25^2-0.125^2)... = 5.0 (order 2.32), so the
 * pairwise order is asserted for 2/1 and 1/0.5 ms (bias <= 0.07) and the
 * least-squares slope over all four step sizes is asserted too. */
#include <math.h>
#include <stdio.h>

#include "hymo/sim.h"
#include "test_util.h"

static void run_to(const hymo_model *model, hymo_formulation_kind form, double dt, double *z, double *p)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, model);
    opt.formulation = form;
    opt.jacobian = HYMO_JACOBIAN_FAST;
    opt.dt = dt; /* the model file's tolerances and Newton test: what users run */
    hymo_sim *sim = test_sim_create(model, &opt);
    hymo_error err;
    hymo_error_clear(&err);
    long n = lround(10.0 / dt);
    for (long k = 0; k < n; ++k)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("dt=%g: %s", dt, err.message);
    for (int j = 0; j < hymo_sim_nz(sim); ++j) z[j] = hymo_sim_z(sim)[j];
    for (int k = 0; k < hymo_sim_np(sim); ++k) p[k] = hymo_sim_p(sim)[k];
    hymo_sim_free(sim);
}

static double max_diff(int n, const double *a, const double *b)
{
    double m = 0.0;
    for (int i = 0; i < n; ++i) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

static void check_order(hymo_formulation_kind form)
{
    hymo_model *model = test_load_model("fourbar.yaml");
    int nz = model->n_bodies, np = model->n_volumes;
    double zr[16], pr[16], z[16], p[16];
    run_to(model, form, 0.125e-3, zr, pr);
    const double dts[4] = {2e-3, 1e-3, 0.5e-3, 0.25e-3};
    double ez[4], ep[4];
    for (int i = 0; i < 4; ++i) {
        run_to(model, form, dts[i], z, p);
        ez[i] = max_diff(nz, z, zr);
        ep[i] = max_diff(np, p, pr);
        printf("%s dt = %.3g ms: max|dz| = %.3e rad, max|dp| = %.3e Pa\n", hymo_formulation_name(form),
               dts[i] * 1e3, ez[i], ep[i]);
    }
    for (int which = 0; which < 2; ++which) {
        const double *e = which ? ep : ez;
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (int i = 0; i < 4; ++i) {
            double x = log(dts[i]), y = log(e[i]);
            sx += x, sy += y, sxx += x * x, sxy += x * y;
        }
        double slope = (4 * sxy - sx * sy) / (4 * sxx - sx * sx);
        double o1 = log2(e[0] / e[1]), o2 = log2(e[1] / e[2]), o3 = log2(e[2] / e[3]);
        printf("  %s: pairwise orders %.3f %.3f %.3f (last biased by the reference), fitted slope %.3f\n",
               which ? "p" : "z", o1, o2, o3, slope);
        assert_true(o1 >= 1.8 && o1 <= 2.2);
        assert_true(o2 >= 1.8 && o2 <= 2.2);
        assert_true(slope >= 1.8 && slope <= 2.2);
    }
    hymo_model_free(model);
}

static void test_order_double_step(void **state)
{
    (void)state;
    check_order(HYMO_FORMULATION_DOUBLE_STEP);
}

static void test_order_penalty(void **state)
{
    (void)state;
    check_order(HYMO_FORMULATION_PENALTY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_double_step),
        cmocka_unit_test(test_order_penalty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
