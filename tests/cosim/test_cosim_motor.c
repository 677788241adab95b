/* Hydraulic motors in split co-simulation (docs/cosimulation.md,
 * "Hydraulic motors and driven joints").
 *
 * A motor k is coupled like a cylinder, as actuator a = n_cylinders + k:
 * its joint coordinate and rate go to the hydraulics, its torque (or its
 * port pressures) come back, with one power bond (torque x rate).
 *
 * - structure: the forestry crane is one circuit holding three cylinders
 *   and the slewing motor (local actuator 3: inputs 6, 7 of the circuit);
 *   the motor-only pendulum (tests/models/motor_pendulum.yaml) splits into
 *   the mechanics and one circuit; TLM makes the motor's ports lines;
 * - the pendulum against the monolithic run (velocity-pressure and
 *   velocity-force, p = 2, H = 1 ms), with the motor bond's residual
 *   energy; the bounds are ~2x the measured values (printed);
 * - convergence: with h_m = h_h = 0.1 ms the pendulum's coupling error
 *   against H = 0.1 ms falls as H^(p+1), p = 0, 1, 2, like a cylinder's;
 * - the forestry crane (4 s: the slewing motion is 1.5-3 s) against the
 *   monolithic run: the motor's angle and torque and its bond's residual
 *   energy;
 * - driven joints: the prescribed motion stays in the mechanics (makeup_demo:
 *   a cylinder pulled by a driven joint); its joint and the cylinder follow
 *   the monolithic run exactly, the chamber pressures and the reaction to
 *   the measured coupling error; the interface model and the index-1
 *   mechanics are refused with one line naming the driven joint. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cosim_internal.h"
#include "hymo/cosim.h"
#include "hymo/reference.h"
#include "test_util.h"

/* Largest |run - ref| of column col of an n x na matrix over the common
 * rows (the same 1 ms grid). */
static double max_col_diff(const hymo_reference *run, const hymo_reference *ref, const double *x_run,
                           const double *x_ref, int col)
{
    assert_int_equal(run->n, ref->n);
    assert_int_equal(run->na, ref->na);
    double m = 0.0;
    for (int i = 0; i < run->n; ++i) m = fmax(m, fabs(x_run[i * run->na + col] - x_ref[i * ref->na + col]));
    return m;
}

/* Largest |residual energy| of bond b of a co-simulation file. */
static double max_bond_energy(const hymo_reference *run, int b)
{
    assert_true(run->has_cosim);
    double m = 0.0;
    for (int i = 0; i < run->n; ++i) m = fmax(m, fabs(run->residual_energy[i * run->n_bonds + b]));
    return m;
}

static void test_split_structure(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("forestry_crane.yaml");
    assert_int_equal(model->n_cylinders, 3);
    assert_int_equal(model->n_motors, 1);
    hymo_cosim_options opt;
    hymo_cosim_options_default(&opt, model);
    hymo_split *sp = NULL;
    hymo_error err;
    if (hymo_split_create(model, &opt, &sp, &err) != HYMO_OK) fail_msg("%s", err.message);
    assert_int_equal(sp->n_subsystems, 2); /* one circuit: the pump line feeds every valve */
    assert_int_equal(sp->subsystems[0]->n_inputs, 2 * 4);  /* p_pist, p_rod / p_a, p_b */
    assert_int_equal(sp->subsystems[0]->n_outputs, 3 * 4); /* s, sd, sdd */
    assert_int_equal(sp->subsystems[1]->n_inputs, 2 * 4);
    assert_int_equal(sp->subsystems[1]->n_outputs, 2 * 4);
    assert_non_null(strstr(sp->subsystems[1]->name, "slew_motor"));
    /* the motor's angle and rate (mechanics outputs 3, 4 + 3) drive the circuit's inputs 6, 7; its port
     * pressures (circuit outputs 6, 7) the mechanics' inputs 6, 7 */
    int seen = 0;
    for (int l = 0; l < sp->n_links; ++l) {
        const hymo_link *k = &sp->links[l];
        seen += k->from == 0 && k->output == 3 && k->to == 1 && k->input == 6;
        seen += k->from == 0 && k->output == 4 + 3 && k->to == 1 && k->input == 7;
        seen += k->from == 1 && k->output == 6 && k->to == 0 && k->input == 6;
        seen += k->from == 1 && k->output == 7 && k->to == 0 && k->input == 7;
    }
    assert_int_equal(seen, 4);
    hymo_subsystem *hyd = sp->subsystems[1], *mech = sp->subsystems[0];
    int vr = hymo_subsystem_find_variable(hyd, "sd_input[3]");
    assert_true(vr >= 0);
    assert_string_equal(hyd->ops->variable(hyd, vr)->description, "slew_motor");
    vr = hymo_subsystem_find_variable(mech, "force[3]");
    assert_true(vr >= 0);
    assert_string_equal(mech->ops->variable(mech, vr)->unit, "N m");
    hymo_split_free(sp);

    /* interface model: G is 4 x 4 over the cylinders and the motor */
    opt.approx = HYMO_APPROX_INTERFACE_MODEL;
    if (hymo_split_create(model, &opt, &sp, &err) != HYMO_OK) fail_msg("%s", err.message);
    assert_int_equal(sp->subsystems[0]->n_outputs, 3 * 4 + 16 + 4);
    assert_int_equal(sp->subsystems[1]->n_inputs, 2 * 4 + 16 + 4);
    hymo_split_free(sp);

    /* TLM: the motor's two ports are lines 6, 7; their
     * parasitic "mass" L D^2 is an inertia */
    opt.approx = HYMO_APPROX_LAGRANGE2;
    opt.coupling = HYMO_COUPLING_TLM;
    if (hymo_split_create(model, &opt, &sp, &err) != HYMO_OK) fail_msg("%s", err.message);
    mech = sp->subsystems[0];
    assert_int_equal(mech->n_inputs, 2 * 4);
    assert_int_equal(mech->n_outputs, 3 * 4 + 2 * 4); /* s, sd, sdd, then the waves */
    vr = hymo_subsystem_find_variable(mech, "tlm_mass[6]");
    assert_true(vr >= 0);
    assert_string_equal(mech->ops->variable(mech, vr)->unit, "kg m^2");
    assert_string_equal(mech->ops->variable(mech, vr)->description, "motor port a");
    vr = hymo_subsystem_find_variable(mech, "line_power[3]");
    assert_true(vr >= 0);
    assert_string_equal(mech->ops->variable(mech, vr)->description, "slew_motor");
    hymo_split_free(sp);
    hymo_model_free(model);

    /* the motor-only model: mechanics and one circuit, velocity-force */
    model = test_load_test_model("motor_pendulum.yaml");
    assert_int_equal(model->n_cylinders, 0);
    hymo_cosim_options_default(&opt, model);
    opt.coupling = HYMO_COUPLING_VELOCITY_FORCE;
    if (hymo_split_create(model, &opt, &sp, &err) != HYMO_OK) fail_msg("%s", err.message);
    assert_int_equal(sp->n_subsystems, 2);
    assert_int_equal(sp->subsystems[0]->n_inputs, 1); /* the torque */
    assert_int_equal(sp->subsystems[1]->n_outputs, 1);
    assert_string_equal(sp->subsystems[1]->name, "circuit1(motor1)");
    hymo_split_free(sp);
    hymo_model_free(model);
}

/* The motor-only pendulum against the monolithic run (1 ms, 3 s). */
static void test_pendulum_vs_monolithic(void **state)
{
    (void)state;
    hymo_model *model = test_load_test_model("motor_pendulum.yaml");
    hymo_reference *ref = test_monolithic(model, 0.0, 3.0, "cosim_motor_pend_ref.h5");
    /* measured (Debug): velocity-pressure max |ds| 1.16e-6 rad, max |dp| 54 Pa, max |dT| 2.6e-3 N m,
     * residual energy -7.31e-5 J at the end (max |E| 7.31e-5 J); velocity-force 1.17e-6 rad, 53 Pa,
     * 0.085 N m (direct feed-through of the torque), -7.67e-5 J */
    static const struct {
        hymo_coupling_kind coupling;
        double ds, dp, dT, E_lo, E_hi;
    } cases[2] = {{HYMO_COUPLING_VELOCITY_PRESSURE, 2.5e-6, 120.0, 6e-3, -1.5e-4, -3.5e-5},
                  {HYMO_COUPLING_VELOCITY_FORCE, 2.5e-6, 120.0, 0.17, -1.5e-4, -3.5e-5}};
    for (int c = 0; c < 2; ++c) {
        hymo_cosim_options opt;
        hymo_cosim_options_default(&opt, model);
        opt.coupling = cases[c].coupling;
        hymo_cosim_summary sum;
        test_cosim_run(model, &opt, ref, "cosim_motor_pend.h5", &sum);
        hymo_reference *run = test_read_ref("cosim_motor_pend.h5");
        const double ds = max_col_diff(run, ref, run->s, ref->s, 0), dT = max_col_diff(run, ref, run->force, ref->force, 0);
        print_message("%s: max |ds| %.3g rad, max |dp| %.3g Pa, max |dT| %.3g N m, E_res %.3g J (max %.3g J), %d bond\n",
                      hymo_coupling_name(opt.coupling), ds, sum.errors.max[HYMO_CMP_P], dT,
                      sum.residual_energy_final, sum.residual_energy_max_abs, sum.n_bonds);
        assert_true(sum.stable);
        assert_int_equal(sum.n_bonds, 1);
        assert_string_equal(run->bond_names[0], "motor1");
        assert_string_equal(run->actuator_names[0], "motor1");
        assert_true(ds > 0.0 && ds <= cases[c].ds);
        assert_true(sum.errors.max[HYMO_CMP_P] <= cases[c].dp);
        assert_true(dT <= cases[c].dT);
        assert_true(sum.residual_energy_final >= cases[c].E_lo && sum.residual_energy_final <= cases[c].E_hi);
        assert_true(max_bond_energy(run, 0) <= 2.0 * fabs(cases[c].E_lo));
        hymo_ref_free(run);
    }
    hymo_ref_free(ref);
    hymo_model_free(model);
}

/* The motor angle's coupling error against H = 0.1 ms falls as H^(p+1)
 * (h_m = h_h = 0.1 ms). */
static void test_pendulum_convergence(void **state)
{
    (void)state;
    hymo_model *model = test_load_test_model("motor_pendulum.yaml");
    test_cosim_order(model, 0.0, HYMO_CMP_S, "angle error", "rad", 0.35, "cosim_motor_order_ref.h5",
                     "cosim_motor_order_run.h5");
    hymo_model_free(model);
}

/* The forestry crane over 4 s (slewing 1.5-3 s, braked by the shock
 * valves) against the monolithic run: default options (Jacobi,
 * velocity-pressure, p = 2, H = h_m = 1 ms, RK4 at 0.1 ms). */
static void test_forestry_crane(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("forestry_crane.yaml");
    hymo_reference *ref = test_monolithic(model, 0.0, 4.0, "cosim_motor_fc_ref.h5");
    const int a = model->n_cylinders; /* the slewing motor */
    /* measured (Debug): velocity-pressure motor max |ds| 2.2e-7 rad, max |dT| 36 N m (of ~2e4 N m), bond
     * max |E| 1.21e-2 J, all actuators max |ds| 1.61e-6; velocity-force 1.25e-6 rad, 36 N m, 1.35e-2 J,
     * 7.7e-5 (the cylinders' feed-through) */
    static const struct {
        hymo_coupling_kind coupling;
        double ds_motor, dT_motor, E_lo, E_hi, ds_all;
    } cases[2] = {{HYMO_COUPLING_VELOCITY_PRESSURE, 5e-7, 75.0, 6e-3, 2.5e-2, 3.5e-6},
                  {HYMO_COUPLING_VELOCITY_FORCE, 2.5e-6, 75.0, 6.5e-3, 2.7e-2, 1.6e-4}};
    for (int c = 0; c < 2; ++c) {
        hymo_cosim_options opt;
        hymo_cosim_options_default(&opt, model);
        opt.coupling = cases[c].coupling;
        opt.mech.t_end = 4.0;
        hymo_cosim_summary sum;
        test_cosim_run(model, &opt, ref, "cosim_motor_fc.h5", &sum);
        hymo_reference *run = test_read_ref("cosim_motor_fc.h5");
        assert_int_equal(run->na, 4);
        assert_string_equal(run->actuator_names[a], "slew_motor");
        assert_string_equal(run->bond_names[a], "slew_motor");
        double slew = 0.0; /* the motor turns the column by a good fraction of a radian */
        for (int i = 0; i < ref->n; ++i) slew = fmax(slew, fabs(ref->s[i * ref->na + a]));
        const double ds = max_col_diff(run, ref, run->s, ref->s, a),
                     dT = max_col_diff(run, ref, run->force, ref->force, a), E = max_bond_energy(run, a);
        print_message("%s: slew up to %.3g rad; motor max |ds| %.3g rad, max |dT| %.3g N m, bond max |E| %.3g J; "
                      "all actuators max |ds| %.3g, total E %.3g J\n",
                      hymo_coupling_name(opt.coupling), slew, ds, dT, E, sum.errors.max[HYMO_CMP_S],
                      sum.residual_energy_final);
        assert_true(sum.stable);
        assert_int_equal(sum.n_bonds, 4);
        assert_true(slew > 0.3);
        assert_true(ds > 0.0 && ds <= cases[c].ds_motor);
        assert_true(dT <= cases[c].dT_motor);
        assert_true(E >= cases[c].E_lo && E <= cases[c].E_hi);
        assert_true(sum.errors.max[HYMO_CMP_S] <= cases[c].ds_all);
        hymo_ref_free(run);
    }
    hymo_ref_free(ref);
    hymo_model_free(model);
}

static void test_driven_joint(void **state)
{
    (void)state;
    hymo_model *model = test_load_test_model("makeup_demo.yaml");
    assert_int_equal(model->n_drivers, 1);
    hymo_reference *ref = test_monolithic(model, 0.0, 1.0, "cosim_motor_driven_ref.h5") /* its t_end */;
    hymo_cosim_options opt;
    hymo_cosim_options_default(&opt, model);
    hymo_cosim_summary sum;
    test_cosim_run(model, &opt, ref, "cosim_motor_driven.h5", &sum);
    hymo_reference *run = test_read_ref("cosim_motor_driven.h5");
    /* the cylinder, then the driven joint's reaction (as `hymo run` writes them) */
    assert_int_equal(run->na, 2);
    assert_string_equal(run->actuator_names[1], "pull");
    const double dF_cyl = max_col_diff(run, ref, run->force, ref->force, 0),
                 dF_pull = max_col_diff(run, ref, run->force, ref->force, 1);
    /* measured (Debug): z and s exact, max |dp| 6.8 kPa and max |dF| 145 N (of 988 N) at the make-up valve's
     * opening (t = 0.10 s), residual energy 1.6e-4 J at the end, max |E| 9.7e-4 J */
    print_message("driven: max |dz| %.3g m, |ds| %.3g m, |dp| %.3g Pa, |dF| cylinder %.3g N, reaction %.3g N; "
                  "E_res %.3g J (max %.3g J)\n",
                  sum.errors.max[HYMO_CMP_Z], sum.errors.max[HYMO_CMP_S], sum.errors.max[HYMO_CMP_P], dF_cyl,
                  dF_pull, sum.residual_energy_final, sum.residual_energy_max_abs);
    assert_true(sum.stable);
    assert_int_equal(sum.n_bonds, 1); /* the cylinder only: nothing to couple at the driven joint */
    assert_true(sum.errors.max[HYMO_CMP_Z] == 0.0 && sum.errors.max[HYMO_CMP_S] == 0.0);
    assert_true(sum.errors.max[HYMO_CMP_P] > 0.0 && sum.errors.max[HYMO_CMP_P] <= 1.4e4);
    assert_true(dF_cyl <= 300.0 && dF_pull <= 300.0);
    assert_true(sum.residual_energy_max_abs <= 2e-3);
    hymo_ref_free(run);
    hymo_ref_free(ref);
    /* the refused combinations: one line naming the joint and the option */
    static const char *const what[2] = {"--extrapolation interface-model", "--mech-integrator index1"};
    for (int k = 0; k < 2; ++k) {
        hymo_cosim_options_default(&opt, model);
        if (k == 0)
            opt.approx = HYMO_APPROX_INTERFACE_MODEL;
        else
            opt.mech_integrator = HYMO_MECH_INDEX1;
        hymo_split *sp = NULL;
        hymo_error err;
        assert_int_equal(hymo_split_create(model, &opt, &sp, &err), HYMO_ERR_ARGUMENT);
        assert_null(sp);
        assert_non_null(strstr(err.message, "driven_joints[0] (pull)"));
        assert_non_null(strstr(err.message, what[k]));
        assert_null(strchr(err.message, '\n'));
    }
    hymo_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_structure),
        cmocka_unit_test(test_pendulum_vs_monolithic),
        cmocka_unit_test(test_pendulum_convergence),
        cmocka_unit_test(test_forestry_crane),
        cmocka_unit_test(test_driven_joint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
