/* TLM coupling (SPEC §7; seed 003 §3.1, Eqs. 1-8).
 *
 * - convergence: on crane1 over 3 s, Jacobi TLM with quadratic wave
 *   interpolation (p = 2) and h_m = h_h = 0.1 ms converges to the
 *   monolithic trapezoidal run at dt = 0.1 ms as H -> 0.  Measured RMS s
 *   errors at H = 0.4 / 0.8 / 1.6 ms are in the message; the observed order
 *   is about 1 (see docs/cosimulation.md, "TLM coupling": the line delays
 *   every pressure change by T = H between its two ends, so the motion lags
 *   by O(H); the parasitic inductance itself is O(H^2));
 * - parasitic mass: L A^2 = T^2 B_e A^2 / V of crane1's piston and rod
 *   chambers at t = 0, computed here by hand from the constants of
 *   data/crane1.yaml, equals the mechanics' variables tlm_mass[0], [1] and
 *   the run summary;
 * - bonds: with the valve closed (t <= 1 s) the residual energy is exactly
 *   zero; with held waves (p = 0, rectangle rule) and with p = 2
 *   (trapezoidal rule: the line energy by the same rule) the line energy
 *   bookkeeping is exact up to round-off (the receiver releases exactly
 *   what the sender put in);
 * - Gauss-Seidel gives the same run as Jacobi bit for bit (the waves of
 *   t - H are all a side needs: the master uses points up to t);
 * - a retried step (get_state, set_state) of every subsystem repeats bit
 *   for bit (FMI fmi2SetFMUstate semantics);
 * - TLM with the interface model is refused with one line. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_internal.h"
#include "hymo/cosim.h"
#include "hymo/reference.h"
#include "test_util.h"

static void tlm_options(hymo_cosim_options *opt, const hymo_model *model, double H)
{
    hymo_cosim_options_default(opt, model);
    opt->coupling = HYMO_COUPLING_TLM;
    opt->approx = HYMO_APPROX_LAGRANGE2;
    opt->H = H;
    opt->h_h = opt->mech.dt = 1e-4;
    opt->mech.t_end = 3.0;
}

static void test_convergence_to_monolithic(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("crane1.yaml");
    hymo_reference *mono = test_monolithic(model, 1e-4, 3.0, "tlm_mono_ref.h5");
    /* H -> 0: TLM at H = h_m = h_h = 0.1 ms against the monolithic run */
    hymo_cosim_options opt;
    hymo_cosim_summary sum;
    tlm_options(&opt, model, 1e-4);
    test_cosim_run(model, &opt, mono, "tlm_fine.h5", &sum);
    const double e_fine = sum.errors.rms[HYMO_CMP_S], p_fine = sum.errors.max[HYMO_CMP_P];
    hymo_reference *fine = test_read_ref("tlm_fine.h5");
    const double Hs[3] = {0.4e-3, 0.8e-3, 1.6e-3};
    double e[3], c[3], E[3];
    for (int i = 0; i < 3; ++i) {
        tlm_options(&opt, model, Hs[i]);
        test_cosim_run(model, &opt, mono, "tlm_coarse.h5", &sum);
        assert_true(sum.stable);
        e[i] = sum.errors.rms[HYMO_CMP_S];
        E[i] = sum.residual_energy_max_abs;
        hymo_reference *coarse = test_read_ref("tlm_coarse.h5");
        hymo_compare_result res;
        hymo_error err;
        if (hymo_compare_trajectories(coarse, fine, &res, &err) != HYMO_OK) fail_msg("%s", err.message);
        c[i] = res.rms[HYMO_CMP_S]; /* the coupling error: against TLM at H = 0.1 ms */
        hymo_ref_free(coarse);
    }
    const double o1 = log2(c[1] / c[0]), o2 = log2(c[2] / c[1]);
    print_message("TLM p = 2, crane1 3 s, h_m = h_h = 0.1 ms: vs monolithic (dt 0.1 ms) RMS s error %.4g m at "
                  "H = 0.1 ms (max |dp| %.4g Pa), %.4g %.4g %.4g m at H = 0.4 0.8 1.6 ms; vs TLM at 0.1 ms %.4g %.4g "
                  "%.4g m: orders %.3f %.3f; max |E_res| %.4g %.4g %.4g J\n",
                  e_fine, p_fine, e[0], e[1], e[2], c[0], c[1], c[2], o1, o2, E[0], E[1], E[2]);
    /* measured (Debug -Werror): see docs/cosimulation.md; bounds from the spread of the measured orders */
    assert_true(e_fine < e[0] && e[0] < e[1] && e[1] < e[2]); /* towards the monolithic run */
    assert_true(e_fine <= 2e-7);
    assert_true(o1 >= 0.65 && o1 <= 1.25);
    assert_true(o2 >= 0.65 && o2 <= 1.25);
    /* the lines' energy by the port powers' trapezoidal rule: round-off
     * (measured 1.9e-11 .. 5.6e-11 J; 0.028 .. 0.110 J, order 1, when the
     * line energy took the waves at t + H only) */
    for (int i = 0; i < 3; ++i) assert_true(E[i] <= 1e-9);
    hymo_ref_free(fine);
    hymo_ref_free(mono);
    hymo_model_free(model);
}

/* Compliance C = V/B_oil + sum V_part/B_part (SPEC §2, docs/model-format.md)
 * and L A^2 = T^2 A^2 / C, from crane1.yaml's numbers. */
static void test_parasitic_mass_by_hand(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("crane1.yaml");
    const double pi = 3.14159265358979323846, H = 1e-3;
    const double B_oil = 1.5e9, B_hose = 1.5e8, B_chamber = 3.15e10;  /* fluid, hoses, chambers */
    const double d_p = 0.080, d_r = 0.035, l_p0 = 0.05, l_r0 = 0.3 - 0.05; /* cyl1 */
    const double A_p = pi * d_p * d_p / 4.0, A_r = pi * (d_p * d_p - d_r * d_r) / 4.0;
    const double V1h = 3.14e-5, V2h = 7.85e-5; /* hoses of V1 (piston side) and V2 (rod side) */
    const double Vp = A_p * l_p0, Vr = A_r * l_r0;
    const double C1 = (V1h + Vp) / B_oil + V1h / B_hose + Vp / B_chamber;
    const double C2 = (V2h + Vr) / B_oil + V2h / B_hose + Vr / B_chamber;
    const double m_pist = H * H / C1 * A_p * A_p, m_rod = H * H / C2 * A_r * A_r;
    print_message("by hand, H = 1 ms: piston chamber C %.6g m^3/Pa, Z_c %.6g, mass %.6g kg; rod %.6g kg\n", C1,
                  H / C1, m_pist, m_rod);

    hymo_cosim_options opt;
    tlm_options(&opt, model, H);
    opt.mech.dt = H;
    hymo_split *sp = NULL;
    hymo_error err;
    if (hymo_split_create(model, &opt, &sp, &err) != HYMO_OK) fail_msg("%s", err.message);
    const hymo_subsystem *mech = sp->subsystems[0];
    const char *names[6] = {"tlm_mass[0]", "tlm_mass[1]", "tlm_impedance[0]", "tlm_inductance[0]", "line_power[0]",
                            "tlm_impedance[1]"};
    int vr[6];
    double v[6];
    for (int k = 0; k < 6; ++k) {
        vr[k] = hymo_subsystem_find_variable(mech, names[k]);
        assert_true(vr[k] >= 0);
    }
    mech->ops->get_real(mech, vr, 6, v);
    assert_close(v[0], m_pist, 1e-12 * m_pist);
    assert_close(v[1], m_rod, 1e-12 * m_rod);
    assert_close(v[2], H / C1, 1e-12 * H / C1);     /* Z_c = B_e T / V = T / C */
    assert_close(v[3], H * H / C1, 1e-12 * H * H / C1); /* L = T^2 B_e / V */
    assert_close(v[4], 0.0, 0.0);                     /* at rest */
    assert_close(v[5], H / C2, 1e-12 * H / C2);
    /* the hydraulics has the same line ends: its outputs at rest are the waves = initial pressures */
    assert_int_equal(sp->n_subsystems, 2);
    assert_int_equal(sp->subsystems[1]->n_inputs, 4);
    assert_int_equal(sp->subsystems[1]->n_outputs, 2);
    assert_int_equal(mech->n_outputs, 5);
    assert_true(sp->at_start[0] && sp->at_start[1]);
    hymo_split_free(sp);

    hymo_cosim_summary sum;
    opt.mech.t_end = 3.0;
    test_cosim_run(model, &opt, NULL, "tlm_mass.h5", &sum);
    assert_int_equal(sum.n_tlm, 2);
    assert_close(sum.tlm_mass_initial_max, m_pist, 1e-12 * m_pist);
    assert_true(sum.tlm_mass_max > m_pist); /* the piston chamber shrinks first (the valve opens to retract) */
    assert_non_null(strstr(sum.tlm_report, "cyl1.piston"));
    hymo_model_free(model);
}

static void test_bonds(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("crane1.yaml");
    hymo_cosim_options opt;
    hymo_cosim_summary sum;
    tlm_options(&opt, model, 1e-3);
    opt.mech.t_end = 1.0; /* valve closed */
    test_cosim_run(model, &opt, NULL, NULL, &sum);
    print_message("at rest: E_res %.3g J\n", sum.residual_energy_max_abs);
    assert_true(sum.residual_energy_max_abs == 0.0);
    /* held waves: the line's bookkeeping is exact (energy in = energy out) */
    tlm_options(&opt, model, 1e-3);
    opt.approx = HYMO_APPROX_LAGRANGE0;
    test_cosim_run(model, &opt, NULL, NULL, &sum);
    print_message("p = 0 over 3 s: max |E_res| %.3g J, W %.4g J\n", sum.residual_energy_max_abs, sum.work_abs);
    assert_true(sum.work_abs > 100.0);
    assert_true(sum.residual_energy_max_abs <= 1e-8);
    hymo_model_free(model);
}

static void test_gauss_seidel_is_jacobi(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("crane2.yaml");
    hymo_cosim_options opt;
    hymo_cosim_summary a, b, c;
    tlm_options(&opt, model, 1e-3);
    opt.mech.dt = 1e-3;
    test_cosim_run(model, &opt, NULL, NULL, &a);
    opt.scheme = HYMO_SCHEME_GAUSS_SEIDEL_MECH_FIRST;
    test_cosim_run(model, &opt, NULL, NULL, &b);
    opt.scheme = HYMO_SCHEME_GAUSS_SEIDEL_HYD_FIRST;
    test_cosim_run(model, &opt, NULL, NULL, &c);
    print_message("crane2 3 s: E_res %.17g %.17g %.17g J, W %.6g J\n", a.residual_energy_final,
                  b.residual_energy_final, c.residual_energy_final, a.work_abs);
    assert_true(a.stable && b.stable && c.stable);
    assert_int_equal(a.n_tlm, 4);
    assert_true(a.residual_energy_final == b.residual_energy_final);
    assert_true(a.residual_energy_final == c.residual_energy_final);
    assert_true(a.work_abs == b.work_abs && a.work_abs == c.work_abs);
    hymo_model_free(model);
}

/* Every subsystem: from a saved state, the same inputs give the same step. */
static void test_retried_step(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("crane2.yaml");
    hymo_cosim_options opt;
    tlm_options(&opt, model, 1e-3);
    opt.mech.dt = 5e-4;
    test_cosim_retried_step(model, &opt, 1600); /* into the motion (valves open from 1 s) */
    hymo_model_free(model);
}

static void test_refused(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("crane1.yaml");
    hymo_cosim_options opt;
    tlm_options(&opt, model, 1e-3);
    opt.approx = HYMO_APPROX_INTERFACE_MODEL;
    hymo_error err;
    assert_int_equal(hymo_cosim_options_check(&opt, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "TLM"));
    hymo_coupling_kind k;
    assert_int_equal(hymo_coupling_parse("tlm", &k), 0);
    assert_int_equal(k, HYMO_COUPLING_TLM);
    assert_string_equal(hymo_coupling_name(HYMO_COUPLING_TLM), "tlm");
    hymo_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parasitic_mass_by_hand), cmocka_unit_test(test_bonds),
        cmocka_unit_test(test_gauss_seidel_is_jacobi),  cmocka_unit_test(test_retried_step),
        cmocka_unit_test(test_refused),                 cmocka_unit_test(test_convergence_to_monolithic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
