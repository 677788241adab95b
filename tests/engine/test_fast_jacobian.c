/* The fast Jacobian (SPEC §3 "analytic or hybrid Jacobian"; src/engine/engine.c
 * approx_jacobian) against the seed's forward differences.
 *
 * Both modes solve the same residual to the same increment tolerances, so
 * they must give the same trajectory up to the Newton error, and a good
 * approximate Jacobian must converge in (almost) as few iterations as the
 * finite-difference one.  Each case steps a numeric and a fast simulation in
 * lockstep over the models' input jumps and asserts
 *   - max |dz| <= 1e-6 rad and max |dp| <= 50 Pa over every step.  Each
 *     mode stops within one increment tolerance (1e-7 rad, 1e-2 Pa) of the
 *     step's exact solution, in practice far closer; the stable trapezoidal
 *     rule carries these differences without amplifying them, so 10x the
 *     position tolerance bounds dz.  Pressures follow positions through the
 *     hydraulic stiffness (B_e A / V times the cylinder lever, ~1e7-1e8 Pa
 *     per rad here), so a 1e-7 rad difference is worth up to ~10 Pa; 50 Pa
 *     is 7e-6 of the 7.6 MPa pump pressure;
 *   - mean fast iterations <= mean numeric iterations + 0.05 and max fast
 *     iterations <= 4 (the max for the numeric mode);
 *   - fewer Jacobian builds than steps (reuse while at rest).
 * Measured (printed by the test): max |dz| 6.3e-8 rad and |dp| 3.8 Pa
 * (quick-return, penalty), mean iterations within 0.02.  These are the
 * seed's Newton test (--newton-test seed, seed 002's iteration counts);
 * every case runs with the default contractive test too (bounds below).
 * A step with a located event (crane2's end dampers) is two sub-steps, so
 * its iterations may double. */
#include <math.h>
#include <stdio.h>

#include "hymo/sim.h"
#include "test_util.h"

/* The default (contractive) Newton test stops each mode at the step's exact
 * solution to ~1e-4 of its truncation error, so the modes agree ~1000x
 * closer than with the seed's test, at the price of more fast iterations
 * (a reused matrix is measured before it is trusted).  Measured over the
 * six cases: max |dz| 1.6e-11 rad, |dp| 0.0063 Pa, fast - numeric mean
 * iterations -0.011 .. 0.42 (quick-return double-step: the target also
 * follows the velocity's truncation error since the unknowns are position
 * increments, so fewer steps stop after one iteration; 0.28 before, while
 * the run's instruction count fell 3 %), max fast iterations 5; the bounds
 * leave ~5x (dz, dp) and 20 % (iterations) over that. */
#define CONTRACTIVE_DZ 1e-10
#define CONTRACTIVE_DP 0.05
#define CONTRACTIVE_EXTRA_MEAN 0.5
#define CONTRACTIVE_MAX_ITER 5

typedef struct {
    const char *file;
    double t_end; /* covers at least one input jump after motion started */
} fast_case;

static void compare_modes(const fast_case *fc, hymo_formulation_kind form, hymo_newton_test_kind test)
{
    hymo_model *model = test_load_model(fc->file);
    hymo_sim *sim[2] = {NULL, NULL};
    hymo_error err;
    hymo_error_clear(&err);
    for (int mode = 0; mode < 2; ++mode) {
        hymo_run_options opt;
        hymo_run_options_default(&opt, model);
        opt.formulation = form;
        opt.jacobian = mode == 0 ? HYMO_JACOBIAN_NUMERIC : HYMO_JACOBIAN_FAST;
        opt.newton_test = test;
        sim[mode] = test_sim_create(model, &opt);
    }
    const int nz = hymo_sim_nz(sim[0]), np = hymo_sim_np(sim[0]);
    const long n = lround(fc->t_end / model->defaults.dt);
    double dz = 0.0, dp = 0.0;
    for (long k = 0; k < n; ++k) {
        for (int mode = 0; mode < 2; ++mode)
            if (hymo_sim_step(sim[mode], &err) != HYMO_OK) fail_msg("%s: %s", fc->file, err.message);
        for (int j = 0; j < nz; ++j) dz = fmax(dz, fabs(hymo_sim_z(sim[0])[j] - hymo_sim_z(sim[1])[j]));
        for (int i = 0; i < np; ++i) dp = fmax(dp, fabs(hymo_sim_p(sim[0])[i] - hymo_sim_p(sim[1])[i]));
    }
    hymo_run_summary sum[2];
    double mean[2];
    int max_iter[2];
    for (int mode = 0; mode < 2; ++mode) {
        hymo_sim_summary(sim[mode], &sum[mode]);
        mean[mode] = sum[mode].mean_iterations;
        max_iter[mode] = sum[mode].max_iterations;
    }
    long builds = sum[1].jacobian_evaluations;
    print_message("%s %s %s, %.1f s: max |dz| %.3g rad, max |dp| %.3g Pa, iterations numeric %.3f/%d fast %.3f/%d, "
                  "fast Jacobian builds %ld of %ld steps\n",
                  hymo_newton_test_name(test), fc->file, form == HYMO_FORMULATION_PENALTY ? "penalty" : "double-step", fc->t_end, dz, dp,
                  mean[0], max_iter[0], mean[1], max_iter[1], builds, n);
    if (test == HYMO_NEWTON_SEED) {
        assert_true(dz <= 1e-6);
        assert_true(dp <= 50.0);
        assert_true(mean[1] <= mean[0] + 0.05);
        assert_true(max_iter[1] <= (sum[1].n_events ? 8 : 4)); /* a step with an event: two sub-steps */
    } else {
        assert_true(dz <= CONTRACTIVE_DZ);
        assert_true(dp <= CONTRACTIVE_DP);
        assert_true(mean[1] <= mean[0] + CONTRACTIVE_EXTRA_MEAN);
        assert_true(max_iter[1] <= CONTRACTIVE_MAX_ITER);
    }
    assert_true(builds < n);
    hymo_sim_free(sim[0]);
    hymo_sim_free(sim[1]);
    hymo_model_free(model);
}

static const fast_case FOURBAR = {"fourbar.yaml", 3.0};         /* jumps at 1 and 2.5 s */
static const fast_case QUICKRETURN = {"quickreturn.yaml", 4.5}; /* jumps at 1 and 4 s */
static const fast_case CRANE2 = {"crane2.yaml", 4.0};           /* two cylinders, dampers */

static void both(const fast_case *fc, hymo_formulation_kind form)
{
    compare_modes(fc, form, HYMO_NEWTON_SEED);
    compare_modes(fc, form, HYMO_NEWTON_CONTRACTIVE);
}

static void fourbar_ds(void **state) { (void)state, both(&FOURBAR, HYMO_FORMULATION_DOUBLE_STEP); }
static void fourbar_pb(void **state) { (void)state, both(&FOURBAR, HYMO_FORMULATION_PENALTY); }
static void quickreturn_ds(void **state) { (void)state, both(&QUICKRETURN, HYMO_FORMULATION_DOUBLE_STEP); }
static void quickreturn_pb(void **state) { (void)state, both(&QUICKRETURN, HYMO_FORMULATION_PENALTY); }
static void crane2_ds(void **state) { (void)state, both(&CRANE2, HYMO_FORMULATION_DOUBLE_STEP); }
static void crane2_pb(void **state) { (void)state, both(&CRANE2, HYMO_FORMULATION_PENALTY); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fourbar_ds),     cmocka_unit_test(fourbar_pb), cmocka_unit_test(quickreturn_ds),
        cmocka_unit_test(quickreturn_pb), cmocka_unit_test(crane2_ds),  cmocka_unit_test(crane2_pb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
