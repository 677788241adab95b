/* The mechanical subsystem's communication steps of any size (an FMU's
 * variable communication step, src/cosim/cosim_mech.c): a slider of mass
 * m = 10 kg on a prismatic joint along x, pushed along x by its cylinder
 * (velocity-force coupling: the input is the cylinder force F, the output
 * s = x, sd = x'), so that x'' = F(t) / m.  The force is a cubic in t, given
 * at each communication point as its Taylor polynomial there.  The
 * trapezoidal rule on this linear system is exactly computable: over an
 * internal step from t_j to t_j+1 = t_j + h,
 *     a_j = F(t_j) / m,  v_j+1 = v_j + h/2 (a_j + a_j+1),  x_j+1 = x_j + h/2 (v_j + v_j+1).
 * A sequence of communication steps of 2.5, 1, 0.4, 3, 0.7 and 2 h_m
 * (h_m = 1 ms) takes, per step H, n = ceil(H / h_m) equal steps H / n, on the
 * grid of H / n where the step starts on it, else by the engine's shortened
 * steps (every step after the first 2.5 h_m starts off the h_m grid); s and
 * sd at each communication point equal the recurrence to round-off (the
 * inputs read at each internal step's end; at its start the error is
 * ~4e-2 m/s).  The index-1 mechanics (semi-implicit Euler, the input at each
 * internal step's start): v_j+1 = v_j + h a_j, x_j+1 = x_j + h v_j+1, the
 * same way. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hymo/cosim.h"
#include "test_util.h"

static const char *const SLIDER =
    "format: 2\n"
    "name: pushed_slider\n"
    "gravity: [0, -9.81, 0]\n"
    "simulation: {dt: 1.0e-3, t_end: 1.0}\n"
    "ground:\n"
    "  points: {B: [0, 0, 0]}\n"
    "bodies:\n"
    "  - name: slider\n"
    "    joint: {name: x, type: prismatic, parent: ground, location: [0, 0, 0], axis: [1, 0, 0], initial: 0.5}\n"
    "    mass: 10\n"
    "    com: [0, 0, 0]\n"
    "    inertia: [0.01, 0.01, 0.01]\n"
    "    points: {P: [0, 0, 0]}\n"
    "hydraulics:\n"
    "  fluid: {bulk_modulus: 1.5e9, density: 850, laminar_transition: 2.0e5}\n"
    "  sources:\n"
    "    - {name: tank, pressure: 0.4e6}\n"
    "  cylinders:\n"
    "    - {name: cyl, base: B, rod: P, piston_diameter: 0.080, rod_diameter: 0.035, length: 0.6,\n"
    "       piston_length0: 0.3, viscous_damping: 0, efficiency: 1, friction_velocity: 0.01}\n"
    "  volumes:\n"
    "    - name: Vp\n"
    "      parts:\n"
    "        - {volume: 1.0e-4, bulk_modulus: 1.5e9}\n"
    "        - {chamber: cyl.piston, bulk_modulus: 3.15e10}\n"
    "      initial_pressure: 0.4e6\n"
    "    - name: Vr\n"
    "      parts:\n"
    "        - {volume: 1.0e-4, bulk_modulus: 1.5e9}\n"
    "        - {chamber: cyl.rod, bulk_modulus: 3.15e10}\n"
    "      initial_pressure: 0.4e6\n"
    "  throttles:\n"
    "    - {name: vent, from: Vr, to: tank, area: 1.0e-4, discharge_coefficient: 0.7}\n";

#define MASS 10.0
/* F(t) = F0 + F1 t + F2 t^2 + F3 t^3, N */
static const double F0 = 200.0, F1 = 3.0e4, F2 = -4.0e5, F3 = 2.0e6;

static double force(double t) { return ((F3 * t + F2) * t + F1) * t + F0; }

/* The steps above with the mechanical integrator kind; the index-1
 * mechanics (semi-implicit Euler) against its recurrence v_j+1 = v_j + h a_j,
 * x_j+1 = x_j + h v_j+1 (the input at each internal step's start) */
static void variable_steps(hymo_mech_integrator_kind kind)
{
    const int trap = kind == HYMO_MECH_TRAPEZOIDAL;
    hymo_model *model = test_load_text(SLIDER, "pushed_slider");
    hymo_cosim_options opt;
    hymo_cosim_options_default(&opt, model);
    opt.coupling = HYMO_COUPLING_VELOCITY_FORCE;
    opt.mech_integrator = kind;
    hymo_split *sp = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_split_create(model, &opt, &sp, &err) != HYMO_OK) fail_msg("%s", err.message);
    hymo_subsystem *mech = sp->subsystems[0];
    assert_int_equal(mech->n_inputs, 1);
    const double hm = opt.mech.dt;
    assert_true(hm == 1e-3);
    double y[3];
    mech->ops->get_outputs(mech, y);
    assert_true(y[0] == 0.5 && y[1] == 0.0);
    /* the recurrence */
    double x = 0.5, v = 0.0, a = force(0.0) / MASS, t = 0.0, worst_s = 0.0, worst_sd = 0.0;
    static const double pattern[6] = {2.5, 1.0, 0.4, 3.0, 0.7, 2.0};
    long substeps = 0;
    int shortened = 0;
    for (int j = 0; j < 24; ++j) {
        const double H = pattern[j % 6] * hm;
        /* F's Taylor polynomial at t */
        const double coef[HYMO_POLY_TERMS] = {force(t), (3.0 * F3 * t + 2.0 * F2) * t + F1, 3.0 * F3 * t + F2, F3};
        mech->ops->set_inputs(mech, t, coef);
        if (mech->ops->do_step(mech, t, H, &err) != HYMO_OK) fail_msg("%s", err.message);
        const double ratio = H / hm;
        const long n = (long)ceil(ratio - 1e-9 * ratio);
        shortened += fabs(t / (H / (double)n) - floor(t / (H / (double)n) + 0.5)) > 1e-9;
        for (long i = 0; i < n; ++i) {
            const double h = H / (double)n, t1 = t + (double)(i + 1) * h, a1 = force(t1) / MASS;
            const double v1 = trap ? v + 0.5 * h * (a + a1) : v + h * a;
            x += trap ? 0.5 * h * (v + v1) : h * v1;
            v = v1, a = a1;
        }
        substeps += n;
        t += H;
        mech->ops->get_outputs(mech, y);
        worst_s = fmax(worst_s, fabs(y[0] - x));
        worst_sd = fmax(worst_sd, fabs(y[1] - v));
    }
    print_message("%s mechanics, 24 communication steps (%d of them shortened), %ld internal steps to "
                  "t = %.6g s: s = %.15g m (recurrence %.15g m), sd = %.15g m/s (%.15g m/s); max |ds| %.3g m, "
                  "|dsd| %.3g m/s\n",
                  hymo_mech_integrator_name(kind), shortened, substeps, t, y[0], x, y[1], v, worst_s, worst_sd);
    assert_true(shortened >= 20);
    assert_true(v > 1.0); /* the force moved it */
    assert_true(worst_s <= 1e-13);
    assert_true(worst_sd <= 1e-12);
    hymo_split_free(sp);
    hymo_model_free(model);
}

static void test_variable_steps_trapezoidal(void **state)
{
    (void)state;
    variable_steps(HYMO_MECH_TRAPEZOIDAL);
}

static void test_variable_steps_index1(void **state)
{
    (void)state;
    variable_steps(HYMO_MECH_INDEX1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variable_steps_trapezoidal),
        cmocka_unit_test(test_variable_steps_index1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
