/* Figures of a run guarded by a property, not by the golden file.
 *
 * Energy drift: every hydraulically actuated model in data/, at its own
 * settings (double-step, numeric Jacobian, dense LU, dt 1 ms), keeps its
 * peak drift |D| = |E_kin + E_pot - W_act - W_ext| below a bound of about
 * 3x the measured value.  Measured peak |D| (J) and max |W_act| (J):
 *   crane1 2.283e-4 / 1581.7    crane2 2.328e-4 / 1647.4
 *   excavator 0.116 / 67485     forestry_crane 0.01212 / 27385
 *   fourbar 0.04194 / 1869.5    pump_demo 7.175e-5 / 306.82
 *   quickreturn 0.02389 / 396.06  relief_demo 1.94e-4 / 305.3
 * Actuator work by the rectangle rule instead of the trapezoidal rule
 * moves fourbar's drift to 1.32 J.
 *
 * Penalty formulation: the velocity and acceleration projections leave
 * the constraints satisfied at velocity and acceleration level.  Measured
 * max |Phi_z zd| and |Phi_z zdd + dPhi_z zd|: fourbar 1.5e-9, 3e-6;
 * quickreturn 2.3e-9, 4.6e-6; bennett 4.7e-10, 9.4e-7.
 *
 * The run summary agrees with the rows of its own file: the mean and
 * largest Newton iteration counts with /solver/iterations, the peak drift
 * and largest work with /energy/drift and /actuators/work, the constraint
 * maxima with the per-cut norms of /constraints (whose 2-norm over the cuts
 * is the norm over every row). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hymo/sim.h"
#include "test_util.h"

static hymo_run_summary run_model(const char *file, hymo_formulation_kind form)
{
    hymo_model *m = test_load_model(file);
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.formulation = form;
    hymo_run_summary s;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_run(m, &opt, NULL, &s, &err) != HYMO_OK) fail_msg("%s: %s", file, err.message);
    assert_true(s.complete);
    hymo_model_free(m);
    return s;
}

static void test_energy_drift_every_hydraulic_model(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        double drift; /* bound on peak |D|, J */
        double work;  /* measured max |W_act|, J */
    } cases[] = {
        {"crane1.yaml", 1e-3, 1581.7},        {"crane2.yaml", 1e-3, 1647.4},
        {"excavator.yaml", 0.35, 67485.0},    {"forestry_crane.yaml", 0.04, 27385.0},
        {"fourbar.yaml", 0.13, 1869.5},       {"pump_demo.yaml", 3e-4, 306.82},
        {"quickreturn.yaml", 0.075, 396.06},  {"relief_demo.yaml", 6e-4, 305.3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        hymo_run_summary s = run_model(cases[k].file, HYMO_FORMULATION_DOUBLE_STEP);
        print_message("%-20s peak |D| %.4g J (bound %g), max |W_act| %.5g J\n", cases[k].file, s.peak_drift,
                      cases[k].drift, s.max_work);
        /* the work is there: a run whose actuators did nothing has no drift to bound */
        assert_true(fabs(s.max_work - cases[k].work) <= 1e-3 * cases[k].work);
        assert_true(s.peak_drift <= cases[k].drift);
    }
}

static void test_penalty_velocity_and_acceleration_level(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        double vel, acc;
    } cases[] = {
        {"fourbar.yaml", 5e-9, 1e-5},
        {"quickreturn.yaml", 7e-9, 1.5e-5},
        {"bennett.yaml", 1.5e-9, 3e-6},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        hymo_run_summary s = run_model(cases[k].file, HYMO_FORMULATION_PENALTY);
        print_message("%-16s penalty: max |Phi| %.2g, |Phi_z zd| %.2g (bound %g), |Phi_z zdd + dPhi_z zd| %.2g "
                      "(bound %g)\n",
                      cases[k].file, s.max_constraint_position, s.max_constraint_velocity, cases[k].vel,
                      s.max_constraint_acceleration, cases[k].acc);
        assert_true(s.max_constraint_velocity > 0.0);
        assert_true(s.max_constraint_velocity <= cases[k].vel);
        assert_true(s.max_constraint_acceleration <= cases[k].acc);
    }
}

static void check_summary_against_rows(const char *file, hymo_formulation_kind form)
{
    hymo_model *m = test_load_model(file);
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.formulation = form;
    opt.error_estimate = 0;
    hymo_reference *r = test_run_ref(m, &opt, "figures_rows.h5");
    const hymo_run_summary *s = &r->summary;
    assert_true(s->n_steps == r->n - 1);
    long it_sum = 0;
    int it_max = 0;
    double drift = 0, work = 0, cmax[3] = {0, 0, 0};
    const double *c[3] = {r->c_pos, r->c_vel, r->c_acc};
    for (int k = 0; k < r->n; ++k) {
        if (k > 0) it_sum += r->iterations[k], it_max = r->iterations[k] > it_max ? r->iterations[k] : it_max;
        drift = fmax(drift, fabs(r->drift[k]));
        double w = 0;
        for (int a = 0; a < r->na; ++a) w += r->work[(size_t)k * r->na + a];
        work = fmax(work, fabs(w));
        for (int q = 0; q < 3; ++q) {
            double ss = 0;
            for (int j = 0; j < r->ncut; ++j) ss += c[q][(size_t)k * r->ncut + j] * c[q][(size_t)k * r->ncut + j];
            cmax[q] = fmax(cmax[q], sqrt(ss));
        }
    }
    const double mean = (double)it_sum / (double)s->n_steps;
    print_message("%s %s: iterations mean %.6g (rows %.6g), max %d (rows %d); peak |D| %.6g (rows %.6g); max |W| %.6g "
                  "(rows %.6g); constraints %.3g %.3g %.3g (rows %.3g %.3g %.3g)\n",
                  file, hymo_formulation_name(form), s->mean_iterations, mean, s->max_iterations, it_max, s->peak_drift,
                  drift, s->max_work, work, s->max_constraint_position, s->max_constraint_velocity,
                  s->max_constraint_acceleration, cmax[0], cmax[1], cmax[2]);
    assert_close(s->mean_iterations, mean, 1e-12 * mean);
    assert_int_equal(s->max_iterations, it_max);
    assert_close(s->peak_drift, drift, 1e-12 * drift);
    assert_close(s->max_work, work, 1e-12 * work);
    const double sc[3] = {s->max_constraint_position, s->max_constraint_velocity, s->max_constraint_acceleration};
    for (int q = 0; q < 3; ++q) assert_close(sc[q], cmax[q], 1e-9 * cmax[q]);
    hymo_ref_free(r);
    hymo_model_free(m);
}

static void test_summary_agrees_with_rows(void **state)
{
    (void)state;
    check_summary_against_rows("fourbar.yaml", HYMO_FORMULATION_DOUBLE_STEP);
    check_summary_against_rows("fourbar.yaml", HYMO_FORMULATION_PENALTY);
    check_summary_against_rows("crane2.yaml", HYMO_FORMULATION_DOUBLE_STEP);
    check_summary_against_rows("bennett.yaml", HYMO_FORMULATION_PENALTY);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_energy_drift_every_hydraulic_model),
        cmocka_unit_test(test_penalty_velocity_and_acceleration_level),
        cmocka_unit_test(test_summary_agrees_with_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
