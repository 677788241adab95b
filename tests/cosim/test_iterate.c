/* Iterative coupling (hymo_master_step_iterated, hymo/master.h) on seed
 * 004's three-mass oscillator split in two linear subsystems (as in
 * test_stability.c: RK4 with h = H/5 in both, second-order Lagrange
 * inputs):
 *
 * - Jacobi at H = 15 ms has compound-matrix spectral radius rho > 1
 *   (hymo_linear_cosim_spectral_radius): non-iterated it grows by 1e3;
 *   iterated (each acceleration) it stays bounded and decays;
 * - as the tolerance falls (1e-2 .. 1e-8) the iterated runs converge
 *   (successive differences fall by 1e2 and 1e1, to < 1e-8 m) to the
 *   tightly coupled solution, whose error against the monolithic one (the
 *   six-state system by RK4 with h = 1 us) falls with H at order >= 2
 *   (H = 15, 7.5, 3.75 ms);
 * - at tolerance 1e-10, Jacobi and Gauss-Seidel give the same outputs to
 *   1e-7 of the amplitude, and Aitken, IQN-ILS and no acceleration the
 *   same to that too; Aitken and IQN-ILS need fewer iterations than none;
 * - subsystem II made to fail when its velocity input at the step end
 *   exceeds 1.02 times the solution's largest |v2|: the failed iterates 0
 *   (retaken with the outputs held) and failed retakes (halved towards
 *   the last good estimate) leave the answer as without failures (to
 *   1e-18 m), every step converged;
 * - a subsystem that cannot save its state: no iteration, message names
 *   it; bad options are refused. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "three_mass.h"

#define R_SUB 5

#define H_BIG 15e-3
#define T_END 0.6

typedef struct {
    hymo_subsystem *sub[2];
    hymo_master *m;
    hymo_master_iteration *it;
    hymo_iterate_stats stats;
} rig;

static void rig_open(rig *r, double H, hymo_master_scheme scheme, int iterate, double tol, hymo_iterate_accel accel)
{
    const hymo_linear_system sys[2] = {{4, 2, 2, AI, BI, CI, NULL, H / R_SUB}, {2, 2, 2, AII, BII, CII, NULL, H / R_SUB}};
    hymo_error err;
    memset(r, 0, sizeof *r);
    assert_int_equal(hymo_linear_subsystem_create(&sys[0], X0I, "I", &r->sub[0], &err), HYMO_OK);
    assert_int_equal(hymo_linear_subsystem_create(&sys[1], X0II, "II", &r->sub[1], &err), HYMO_OK);
    const hymo_master_options opt = {scheme, 2, H};
    if (hymo_master_create(r->sub, 2, LINKS, 4, &opt, &r->m, &err) != HYMO_OK) fail_msg("%s", err.message);
    if (iterate) {
        const hymo_iterate_options io = {.max_iterations = 100, .rtol = tol, .atol = 1e-15, .accel = accel};
        if (hymo_master_iteration_create(r->m, &io, &r->it, &err) != HYMO_OK) fail_msg("%s", err.message);
        assert_int_equal(hymo_master_iteration_size(r->it), 4);
    }
}

static void rig_close(rig *r)
{
    hymo_master_iteration_free(r->it);
    hymo_master_free(r->m);
    for (int k = 0; k < 2; ++k) r->sub[k]->ops->destroy(r->sub[k]);
}

/* Runs to T_END; y gets the outputs (x2, v2, x3, v3) at every step (may be
 * NULL); returns the largest |x2|, |x3| seen (inf on failure). */
static double run(rig *r, double H, double *y)
{
    const int n = (int)lround(T_END / H);
    double amax = 0.0;
    hymo_error err;
    for (int k = 0; k < n; ++k) {
        const hymo_status st = r->it ? hymo_master_step_iterated(r->m, r->it, &r->stats, &err)
                                     : hymo_master_step(r->m, &err);
        if (st != HYMO_OK) return INFINITY;
        const double *o0 = hymo_master_outputs(r->m, 0), *o1 = hymo_master_outputs(r->m, 1);
        if (y) {
            y[4 * k] = o0[0], y[4 * k + 1] = o0[1], y[4 * k + 2] = o1[0], y[4 * k + 3] = o1[1];
        }
        if (!isfinite(o0[0]) || !isfinite(o1[0])) return INFINITY;
        amax = fmax(amax, fmax(fabs(o0[0]), fabs(o1[0])));
    }
    return amax;
}

/* The monolithic six-state system by RK4 with h = 1 us: (x2, v2, x3, v3) at
 * the communication points k H, k = 1..n. */
static void monolithic(double H, double *y)
{
    const double A[36] = {0,  1,  0,      0,      0,      0,      /* x1 */
                          -2 * K, -2 * C, K, C, 0, 0,             /* */
                          0,  0,  0,      1,      0,      0,      /* x2 */
                          K,  C,  -2 * K, -2 * C, K,      C,      /* */
                          0,  0,  0,      0,      0,      1,      /* x3 */
                          0,  0,  K,      C,      -2 * K, -2 * C};
    double x[6] = {X0I[0], X0I[1], X0I[2], X0I[3], X0II[0], X0II[1]}, k[4][6], xs[6];
    const int n = (int)lround(T_END / H), sub = (int)lround(H / 1e-6);
    const double h = H / sub;
    for (int s = 0; s < n; ++s) {
        for (int q = 0; q < sub; ++q) {
            for (int st = 0; st < 4; ++st) {
                const double f = st == 0 ? 0.0 : st == 3 ? 1.0 : 0.5;
                for (int i = 0; i < 6; ++i) xs[i] = x[i] + (st ? f * h * k[st - 1][i] : 0.0);
                for (int i = 0; i < 6; ++i) {
                    double v = 0.0;
                    for (int j = 0; j < 6; ++j) v += A[6 * i + j] * xs[j];
                    k[st][i] = v;
                }
            }
            for (int i = 0; i < 6; ++i) x[i] += h / 6.0 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
        }
        y[4 * s] = x[2], y[4 * s + 1] = x[3], y[4 * s + 2] = x[4], y[4 * s + 3] = x[5];
    }
}

/* Largest difference of the positions (x2, x3) over the run. */
static double max_dx(const double *a, const double *b, int n)
{
    double d = 0.0;
    for (int k = 0; k < n; ++k) d = fmax(d, fmax(fabs(a[4 * k] - b[4 * k]), fabs(a[4 * k + 2] - b[4 * k + 2])));
    return d;
}

static int verbose(void) { return getenv("HYMO_TEST_VERBOSE") != NULL; }

static void test_unstable_configuration_is_stable_iterated(void **state)
{
    (void)state;
    hymo_linear_system sys[2] = {{4, 2, 2, AI, BI, CI, NULL, H_BIG / R_SUB}, {2, 2, 2, AII, BII, CII, NULL, H_BIG / R_SUB}};
    const hymo_master_options mo = {HYMO_SCHEME_JACOBI, 2, H_BIG};
    double rho;
    hymo_error err;
    assert_int_equal(hymo_linear_cosim_spectral_radius(sys, 2, LINKS, 4, &mo, &rho, NULL, &err), HYMO_OK);
    rig r;
    rig_open(&r, H_BIG, HYMO_SCHEME_JACOBI, 0, 0.0, HYMO_ACCEL_NONE);
    const double plain = run(&r, H_BIG, NULL);
    rig_close(&r);
    if (verbose()) printf("rho = %.6f, non-iterated max |x| = %.3g\n", rho, plain);
    assert_true(rho > 1.0);
    assert_true(!(plain < 1.0)); /* grown from 2e-3 by more than 500 */
    static const hymo_iterate_accel acc[] = {HYMO_ACCEL_NONE, HYMO_ACCEL_AITKEN, HYMO_ACCEL_IQN_ILS};
    for (int a = 0; a < 3; ++a) {
        rig_open(&r, H_BIG, HYMO_SCHEME_JACOBI, 1, 1e-8, acc[a]);
        const double amax = run(&r, H_BIG, NULL);
        const double *o = hymo_master_outputs(r.m, 0);
        if (verbose())
            printf("%s: max |x| = %.3g, final |x2| = %.3g, iterations %ld (%.2f per step), non-converged %ld\n",
                   hymo_iterate_accel_name(acc[a]), amax, fabs(o[0]), r.stats.total_iterations,
                   (double)r.stats.total_iterations / (double)r.stats.steps, r.stats.non_converged);
        assert_true(amax < 3e-3);
        assert_true(fabs(o[0]) < 2e-4);
        assert_int_equal(r.stats.non_converged, 0);
        rig_close(&r);
    }
}

static void test_converges_to_monolithic(void **state)
{
    (void)state;
    /* the tolerance falls: the iterates converge (to the tightly coupled
     * solution, every coupling condition met at the communication points) */
    const int n = (int)lround(T_END / H_BIG);
    double *y[4];
    static const double tol[4] = {1e-2, 1e-4, 1e-6, 1e-8};
    for (int i = 0; i < 4; ++i) {
        y[i] = malloc(sizeof(double) * 4 * (size_t)n);
        assert_non_null(y[i]);
        rig r;
        rig_open(&r, H_BIG, HYMO_SCHEME_JACOBI, 1, tol[i], HYMO_ACCEL_AITKEN);
        assert_true(run(&r, H_BIG, y[i]) < 1.0);
        if (verbose())
            printf("tol %g: iterations per step %.2f\n", tol[i], (double)r.stats.total_iterations / (double)r.stats.steps);
        rig_close(&r);
    }
    const double d01 = max_dx(y[0], y[1], n), d12 = max_dx(y[1], y[2], n), d23 = max_dx(y[2], y[3], n);
    if (verbose()) printf("successive differences %.3e %.3e %.3e\n", d01, d12, d23);
    assert_true(d12 < 1e-2 * d01 && d23 < 1e-1 * d12);
    assert_true(d23 < 1e-8); /* amplitude 2e-3 */
    for (int i = 0; i < 4; ++i) free(y[i]);
    /* the tightly coupled solution against the monolithic one: the error
     * falls with H at order >= 2 (Lagrange order 2 inputs, RK4 inside),
     * from H = 15 ms, where the non-iterative co-simulation is unstable */
    double e[3];
    for (int i = 0; i < 3; ++i) {
        const double H = H_BIG / (double)(1 << i);
        const int nh = (int)lround(T_END / H);
        double *ref = malloc(sizeof(double) * 4 * (size_t)nh), *yy = malloc(sizeof(double) * 4 * (size_t)nh);
        assert_true(ref && yy);
        monolithic(H, ref);
        rig r;
        rig_open(&r, H, HYMO_SCHEME_JACOBI, 1, 1e-10, HYMO_ACCEL_AITKEN);
        assert_true(run(&r, H, yy) < 1.0);
        e[i] = max_dx(yy, ref, nh);
        rig_close(&r);
        if (verbose()) printf("H = %g ms: iterated max |dx| vs monolithic %.3e\n", 1e3 * H, e[i]);
        free(ref), free(yy);
    }
    assert_true(e[1] < e[0] / 4.0 && e[2] < e[1] / 4.0);
}

static void test_jacobi_equals_gauss_seidel(void **state)
{
    (void)state;
    const int n = (int)lround(T_END / H_BIG);
    double *y[4];
    long its[4];
    static const struct {
        hymo_master_scheme s;
        hymo_iterate_accel a;
    } cf[4] = {{HYMO_SCHEME_JACOBI, HYMO_ACCEL_AITKEN},
               {HYMO_SCHEME_GAUSS_SEIDEL_MECH_FIRST, HYMO_ACCEL_AITKEN},
               {HYMO_SCHEME_JACOBI, HYMO_ACCEL_IQN_ILS},
               {HYMO_SCHEME_JACOBI, HYMO_ACCEL_NONE}};
    for (int i = 0; i < 4; ++i) {
        y[i] = malloc(sizeof(double) * 4 * (size_t)n);
        assert_non_null(y[i]);
        rig r;
        rig_open(&r, H_BIG, cf[i].s, 1, 1e-10, cf[i].a);
        assert_true(run(&r, H_BIG, y[i]) < 1.0);
        its[i] = r.stats.total_iterations;
        assert_int_equal(r.stats.non_converged, 0);
        rig_close(&r);
    }
    for (int i = 1; i < 4; ++i) {
        const double d = max_dx(y[0], y[i], n);
        if (verbose()) printf("config %d: max |dx| to Jacobi/Aitken %.3e, iterations %ld (Jacobi/Aitken %ld)\n", i, d,
                              its[i], its[0]);
        assert_true(d < 2e-10); /* 1e-7 of the amplitude */
    }
    assert_true(its[0] < its[3] && its[2] < its[3]);
    for (int i = 0; i < 4; ++i) free(y[i]);
}

/* Subsystem II with a do_step that fails when its velocity input at the
 * end of the step exceeds V_FAIL in magnitude (a subsystem that cannot
 * take an estimate far from the solution). */
static const hymo_subsystem_ops *real_ops;
static hymo_subsystem_ops picky_ops;
static double picky_v, picky_vmax, v_fail = INFINITY;
static long picky_failures;
static double picky_H;
static void picky_set_inputs_H(hymo_subsystem *sub, double t0, const double *coef)
{
    picky_v = hymo_poly_eval(coef + HYMO_POLY_TERMS, picky_H);
    real_ops->set_inputs(sub, t0, coef);
}
static hymo_status picky_do_step(hymo_subsystem *sub, double t, double H, hymo_error *err)
{
    if (fabs(picky_v) > v_fail) {
        picky_failures++;
        return hymo_error_set(err, HYMO_ERR_NUMERIC, "II: t = %g s: velocity input %g beyond %g", t, picky_v, v_fail);
    }
    picky_vmax = fmax(picky_vmax, fabs(picky_v));
    return real_ops->do_step(sub, t, H, err);
}

static void test_failed_retakes_back_off(void **state)
{
    (void)state;
    const int n = (int)lround(T_END / H_BIG);
    double *y0 = malloc(sizeof(double) * 4 * (size_t)n), *y1 = malloc(sizeof(double) * 4 * (size_t)n);
    assert_true(y0 && y1);
    picky_H = H_BIG;
    for (int pass = 0; pass < 2; ++pass) {
        rig r;
        rig_open(&r, H_BIG, HYMO_SCHEME_JACOBI, 1, 1e-10, HYMO_ACCEL_IQN_ILS);
        real_ops = r.sub[1]->ops;
        picky_ops = *real_ops;
        picky_ops.set_inputs = picky_set_inputs_H;
        picky_ops.do_step = picky_do_step;
        r.sub[1]->ops = &picky_ops;
        picky_failures = 0, picky_vmax = 0.0;
        const double amax = run(&r, H_BIG, pass ? y1 : y0);
        if (verbose())
            printf("pass %d (v limit %g): max |x| %.3g, |v| used up to %.4g, %ld failed retakes, %ld retakes, "
                   "%ld not converged\n", pass, v_fail, amax, picky_vmax, picky_failures, r.stats.total_iterations,
                   r.stats.non_converged);
        assert_true(amax < 3e-3);
        assert_int_equal(r.stats.non_converged, 0);
        if (pass == 0) { /* just above the solution's largest |v2| (estimates beyond it fail) */
            double vmax = fabs(X0I[3]);
            for (int k = 0; k < n; ++k) vmax = fmax(vmax, fabs(y0[4 * k + 1]));
            v_fail = 1.02 * vmax;
        }
        else assert_true(picky_failures > 0);
        r.sub[1]->ops = real_ops;
        rig_close(&r);
    }
    v_fail = INFINITY;
    const double d = max_dx(y0, y1, n);
    if (verbose()) printf("max |dx| with failing retakes against without: %.3e\n", d);
    assert_true(d < 2e-10);
    free(y0), free(y1);
}

static void test_refusals(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, 2e-3, HYMO_SCHEME_JACOBI, 0, 0.0, HYMO_ACCEL_NONE);
    hymo_master_iteration *it = NULL;
    hymo_error err;
    hymo_iterate_options io = {.max_iterations = 0, .rtol = 1e-6, .atol = 0.0, .accel = HYMO_ACCEL_AITKEN};
    assert_int_equal(hymo_master_iteration_create(r.m, &io, &it, &err), HYMO_ERR_ARGUMENT);
    io.max_iterations = 5, io.rtol = 0.0;
    assert_int_equal(hymo_master_iteration_create(r.m, &io, &it, &err), HYMO_ERR_ARGUMENT);
    io.rtol = 1e-6, io.accel = (hymo_iterate_accel)7;
    assert_int_equal(hymo_master_iteration_create(r.m, &io, &it, &err), HYMO_ERR_ARGUMENT);
    assert_null(it);
    hymo_iterate_accel a;
    assert_int_equal(hymo_iterate_accel_parse("iqn-ils", &a), 0);
    assert_int_equal(a, HYMO_ACCEL_IQN_ILS);
    assert_int_equal(hymo_iterate_accel_parse("secant", &a), -1);
    rig_close(&r);
    /* a subsystem without get/set state */
    hymo_linear_system sys = {4, 2, 2, AI, BI, CI, NULL, 2e-4};
    hymo_subsystem *subs[2];
    assert_int_equal(hymo_linear_subsystem_create(&sys, X0I, "I", &subs[0], &err), HYMO_OK);
    hymo_linear_system sys2 = {2, 2, 2, AII, BII, CII, NULL, 2e-4};
    assert_int_equal(hymo_linear_subsystem_create(&sys2, X0II, "II", &subs[1], &err), HYMO_OK);
    hymo_subsystem_ops ops = *subs[1]->ops;
    const hymo_subsystem_ops *saved = subs[1]->ops;
    ops.state_size = NULL;
    subs[1]->ops = &ops;
    const hymo_master_options mo = {HYMO_SCHEME_JACOBI, 2, 2e-3};
    hymo_master *m;
    assert_int_equal(hymo_master_create(subs, 2, LINKS, 4, &mo, &m, &err), HYMO_OK);
    io.accel = HYMO_ACCEL_AITKEN;
    assert_int_equal(hymo_master_iteration_create(m, &io, &it, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "'II' cannot save its state"));
    subs[1]->ops = saved;
    hymo_master_free(m);
    for (int k = 0; k < 2; ++k) subs[k]->ops->destroy(subs[k]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unstable_configuration_is_stable_iterated),
        cmocka_unit_test(test_converges_to_monolithic),
        cmocka_unit_test(test_jacobi_equals_gauss_seidel),
        cmocka_unit_test(test_failed_retakes_back_off),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
