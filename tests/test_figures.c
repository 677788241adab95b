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
 * quickreturn 2.3e-9, 4.6e-6; bennett 4.7e-10, 9.4e-7. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_energy_drift_every_hydraulic_model),
        cmocka_unit_test(test_penalty_velocity_and_acceleration_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
