/* TLM coupling with a pressure-dependent fluid (the entrained-air law of
 * `format: 2` models; docs/cosimulation.md "TLM coupling", docs/model-format.md
 * "Fluid model").
 *
 * - impedance by hand: makeup_demo's two lines at t = 0 have
 *   Z_c = T / (V / B_f(p0) + sum V_part / B_part), with B_f(p0) from the
 *   closed form of the mixture law computed here (B_f(0.4 MPa) = 0.50 B_oil
 *   with the default 0.1 % air), not the B_oil value;
 * - makeup_demo (a cylinder pulled out by a driven joint, its piston side
 *   fed only by a make-up valve at ~0.15 MPa, where B_f = 0.16 B_oil):
 *   stable at H = 1, 0.5 and 0.1 ms with the default verdict, the pressure
 *   error against the monolithic run (dt 0.1 ms) shrinks with H, and the
 *   residual energy is round-off (both line ends use the bit-identical
 *   Z_c); Gauss-Seidel gives the Jacobi run bit for bit; a retried step
 *   repeats bit for bit (the waves Z_c is computed from are in the state);
 * - accumulator_boom: a gas accumulator on the piston chamber is part of
 *   the line's compliance (stable, errors pinned);
 * - the excavator (data/excavator.yaml, entrained air), 3 s at H = 1 and
 *   0.5 ms: stable with the default verdict (it used to stop at t = 0.553 s
 *   on the line-energy bookkeeping and at t = 2.29 s in the boundary
 *   Newton), strokes and pressures against the monolithic run.
 * Bounds: about 1.5 times the measured figures (Debug -Werror; printed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/cosim.h"
#include "hymo/reference.h"
#include "test_util.h"

static void tlm_options(hymo_cosim_options *opt, const hymo_model *model, double H, double t_end)
{
    hymo_cosim_options_default(opt, model);
    opt->coupling = HYMO_COUPLING_TLM;
    opt->H = opt->mech.dt = H;
    opt->h_h = 1e-4;
    opt->mech.t_end = t_end;
}

/* 1/B_f of the entrained-air mixture (docs/model-format.md "Fluid model"):
 * V_l = (1 - a0) exp(-(p - p_ref)/B_oil), V_a = a0 ((p_ref - p_v)/(p - p_v))^(1/n),
 * 1/B_f = (V_l/B_oil + V_a/(n (p - p_v))) / (V_l + V_a). */
static double inv_bf(double p, double B_oil, double a0, double p_ref, double p_v, double n)
{
    const double Vl = (1.0 - a0) * exp(-(p - p_ref) / B_oil), Va = a0 * pow((p_ref - p_v) / (p - p_v), 1.0 / n);
    return (Vl / B_oil + Va / (n * (p - p_v))) / (Vl + Va);
}

static void test_impedance_by_hand(void **state)
{
    (void)state;
    hymo_model *model = test_load_test_model("makeup_demo.yaml");
    const double pi = 3.14159265358979323846, H = 1e-3, p0 = 0.4e6, B_oil = 1.5e9, B_hose = 1.5e9, B_tube = 3.15e10;
    const double D = 0.080, d = 0.035, l_p0 = 0.1, l = 0.3, V_hose = 1.0e-4;
    const double A_p = pi * D * D / 4.0, A_r = pi * (D * D - d * d) / 4.0;
    const double Vp = A_p * l_p0, Vr = A_r * (l - l_p0);
    const double ib = inv_bf(p0, B_oil, 1e-3, 101325.0, 1e3, 1.4); /* the defaults of format 2 */
    const double Cp = (V_hose + Vp) * ib + V_hose / B_hose + Vp / B_tube;
    const double Cr = (V_hose + Vr) * ib + V_hose / B_hose + Vr / B_tube;
    const double Cp_oil = (V_hose + Vp) / B_oil + V_hose / B_hose + Vp / B_tube;
    print_message("by hand: B_f(0.4 MPa) = %.6g Pa (%.4f B_oil); Z_c piston %.6g (B_oil: %.6g), rod %.6g Pa s/m^3\n",
                  1.0 / ib, 1.0 / (ib * B_oil), H / Cp, H / Cp_oil, H / Cr);
    assert_true(1.0 / (ib * B_oil) > 0.49 && 1.0 / (ib * B_oil) < 0.51);

    hymo_cosim_options opt;
    tlm_options(&opt, model, H, 1.0);
    hymo_split *sp = NULL;
    hymo_error err;
    if (hymo_split_create(model, &opt, &sp, &err) != HYMO_OK) fail_msg("%s", err.message);
    const hymo_subsystem *mech = sp->subsystems[0];
    int vr[2] = {hymo_subsystem_find_variable(mech, "tlm_impedance[0]"),
                 hymo_subsystem_find_variable(mech, "tlm_impedance[1]")};
    assert_true(vr[0] >= 0 && vr[1] >= 0);
    double v[2];
    mech->ops->get_real(mech, vr, 2, v);
    assert_close(v[0], H / Cp, 1e-12 * H / Cp);
    assert_close(v[1], H / Cr, 1e-12 * H / Cr);
    hymo_split_free(sp);
    hymo_model_free(model);
}

static void test_makeup_demo(void **state)
{
    (void)state;
    hymo_model *model = test_load_test_model("makeup_demo.yaml");
    hymo_reference *mono = test_monolithic(model, 1e-4, 1.0, "tlm_air_makeup_ref.h5");
    const double Hs[3] = {1e-3, 5e-4, 1e-4};
    /* measured: p RMS 221, 57.0, 13.0 Pa; max 6.92e3, 1.75e3, 250 Pa (the piston side); s max 3.1e-7, 7.4e-8,
     * 0 m (the driven joint imposes the stroke) */
    const double rms_p_bound[3] = {330.0, 85.0, 20.0}, max_p_bound[3] = {1.0e4, 2.6e3, 380.0};
    double rms_p[3];
    for (int i = 0; i < 3; ++i) {
        hymo_cosim_options opt;
        hymo_cosim_summary sum;
        tlm_options(&opt, model, Hs[i], 1.0);
        test_cosim_run(model, &opt, mono, NULL, &sum);
        rms_p[i] = sum.errors.rms[HYMO_CMP_P];
        print_message("makeup_demo, entrained air, TLM H = %g ms: %s; p RMS %.4g Pa, max %.4g Pa; s max %.3g m; "
                      "force max %.4g N; max |E_res| %.3g J\n",
                      Hs[i] * 1e3, hymo_cosim_verdict_name(sum.verdict), rms_p[i], sum.errors.max[HYMO_CMP_P],
                      sum.errors.max[HYMO_CMP_S], sum.errors.max[HYMO_CMP_FORCE], sum.residual_energy_max_abs);
        assert_true(sum.stable);
        assert_int_equal(sum.verdict, HYMO_VERDICT_STABLE);
        assert_true(sum.t_reached > 1.0 - 1e-9);
        assert_true(rms_p[i] <= rms_p_bound[i]);
        assert_true(sum.errors.max[HYMO_CMP_P] <= max_p_bound[i]);
        assert_true(sum.errors.max[HYMO_CMP_S] <= 1e-6);
        assert_true(sum.residual_energy_max_abs <= 1e-9); /* measured <= 2.3e-11 J */
    }
    assert_true(rms_p[1] < 0.5 * rms_p[0] && rms_p[2] < 0.5 * rms_p[1]); /* towards the monolithic run */

    /* Gauss-Seidel: the waves of t - H are all a side needs (Jacobi bit for bit) */
    hymo_cosim_options opt;
    hymo_cosim_summary a, b, c;
    tlm_options(&opt, model, 1e-3, 1.0);
    test_cosim_run(model, &opt, mono, NULL, &a);
    opt.scheme = HYMO_SCHEME_GAUSS_SEIDEL_MECH_FIRST;
    test_cosim_run(model, &opt, mono, NULL, &b);
    opt.scheme = HYMO_SCHEME_GAUSS_SEIDEL_HYD_FIRST;
    test_cosim_run(model, &opt, mono, NULL, &c);
    assert_true(a.errors.rms[HYMO_CMP_P] == b.errors.rms[HYMO_CMP_P]);
    assert_true(a.errors.rms[HYMO_CMP_P] == c.errors.rms[HYMO_CMP_P]);
    assert_true(a.residual_energy_final == b.residual_energy_final);
    assert_true(a.residual_energy_final == c.residual_energy_final);
    hymo_ref_free(mono);
    hymo_model_free(model);
}

static void test_excavator(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("excavator.yaml");
    hymo_reference *mono = test_monolithic(model, 1e-3, 3.0, "tlm_air_excavator_ref.h5");
    const double Hs[2] = {1e-3, 5e-4};
    /* measured (worst component; the largest pressure error in Varm_p at t = 2.3 s, where the arm's piston
     * side falls towards the make-up valve's opening): 1 ms: s RMS 2.33e-5 m, max 5.98e-5 m, p RMS 1.58e4 Pa,
     * max 2.51e5 Pa; 0.5 ms: s 2.22e-6 m, 5.81e-6 m, p 1.52e3 Pa, 4.43e4 Pa; max |E_res| 1.5e-9, 2.4e-9 J */
    const double rms_s_bound[2] = {3.5e-5, 3.5e-6}, max_s_bound[2] = {9.0e-5, 9.0e-6};
    const double rms_p_bound[2] = {2.4e4, 2.3e3}, max_p_bound[2] = {3.8e5, 6.6e4};
    for (int i = 0; i < 2; ++i) {
        hymo_cosim_options opt;
        hymo_cosim_summary sum;
        tlm_options(&opt, model, Hs[i], 3.0);
        test_cosim_run(model, &opt, mono, NULL, &sum);
        print_message("excavator, entrained air, TLM H = %g ms, 3 s: %s (%s); s RMS %.4g m, max %.4g m; p RMS %.4g "
                      "Pa, max %.4g Pa (t = %.4g s); max |E_res| %.3g J, W %.6g J\n",
                      Hs[i] * 1e3, hymo_cosim_verdict_name(sum.verdict), sum.verdict_reason,
                      sum.errors.rms[HYMO_CMP_S], sum.errors.max[HYMO_CMP_S], sum.errors.rms[HYMO_CMP_P],
                      sum.errors.max[HYMO_CMP_P], sum.errors.t_worst_max[HYMO_CMP_P], sum.residual_energy_max_abs,
                      sum.work_abs);
        assert_true(sum.stable);
        assert_int_equal(sum.verdict, HYMO_VERDICT_STABLE);
        assert_true(sum.t_reached > 3.0 - 1e-9);
        assert_true(sum.errors.rms[HYMO_CMP_S] <= rms_s_bound[i]);
        assert_true(sum.errors.max[HYMO_CMP_S] <= max_s_bound[i]);
        assert_true(sum.errors.rms[HYMO_CMP_P] <= rms_p_bound[i]);
        assert_true(sum.errors.max[HYMO_CMP_P] <= max_p_bound[i]);
        assert_true(sum.residual_energy_max_abs <= 1e-8);
    }
    hymo_ref_free(mono);
    hymo_model_free(model);
}

/* A gas accumulator on a chamber (charging at 2 MPa, an event) is part of
 * the line's compliance C(p), at both ends and in the hydraulic end's
 * inflow (before: unstable at t = 0.043 s, the boundary Newton). */
static void test_accumulator_on_chamber(void **state)
{
    (void)state;
    hymo_model *model = test_load_test_model("accumulator_boom.yaml");
    hymo_reference *mono = test_monolithic(model, 1e-4, 1.0, "tlm_air_accumulator_ref.h5");
    hymo_cosim_options opt;
    hymo_cosim_summary sum;
    tlm_options(&opt, model, 1e-3, 1.0);
    test_cosim_run(model, &opt, mono, NULL, &sum);
    print_message("accumulator_boom, TLM H = 1 ms: %s; s RMS %.4g m, max %.4g m; p RMS %.4g Pa, max %.4g Pa; "
                  "max |E_res| %.3g J\n",
                  hymo_cosim_verdict_name(sum.verdict), sum.errors.rms[HYMO_CMP_S], sum.errors.max[HYMO_CMP_S],
                  sum.errors.rms[HYMO_CMP_P], sum.errors.max[HYMO_CMP_P], sum.residual_energy_max_abs);
    /* measured: s RMS 1.65e-5 m, max 2.83e-5 m; p RMS 1.00e4 Pa, max 3.07e4 Pa; |E| 4.8e-13 J */
    assert_true(sum.stable && sum.verdict == HYMO_VERDICT_STABLE);
    assert_true(sum.errors.rms[HYMO_CMP_S] <= 2.5e-5 && sum.errors.max[HYMO_CMP_S] <= 4.3e-5);
    assert_true(sum.errors.rms[HYMO_CMP_P] <= 1.5e4 && sum.errors.max[HYMO_CMP_P] <= 4.6e4);
    assert_true(sum.residual_energy_max_abs <= 1e-9);
    hymo_ref_free(mono);
    hymo_model_free(model);
}

/* A retried step (get_state, set_state) of every subsystem repeats bit for
 * bit: the waves its Z_c is computed from are part of the state. */
static void test_retried_step(void **state)
{
    (void)state;
    hymo_model *model = test_load_test_model("makeup_demo.yaml");
    hymo_cosim_options opt;
    tlm_options(&opt, model, 1e-3, 1.0);
    test_cosim_retried_step(model, &opt, 150); /* into the motion (the make-up valve opens at 0.10 s) */
    hymo_model_free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_impedance_by_hand),
        cmocka_unit_test(test_makeup_demo),
        cmocka_unit_test(test_retried_step),
        cmocka_unit_test(test_accumulator_on_chamber),
        cmocka_unit_test(test_excavator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
