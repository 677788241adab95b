/* The sparse static balance (src/compile/compile.c static_forces_sparse,
 * taken for a mechanism without closed loops and with as many actuators as
 * joints from hymo_static_sparse_min = 256 of them): a generated chain of
 * 256 links along +x whose cylinders hold it at rest against a gravity with
 * a sideways component (links of 1 m and 2 kg, gravity [9.81, 0.02, 0]:
 * joint 1 carries 655 N m, the tip 0.01 N m), so that the static balance,
 * not the stated pressures, sets the chamber pressures.  Every even
 * cylinder from the fourth on spans two joints (its base on the link two
 * back), so the balance matrix is not diagonal.
 *
 * At t = 0 (hymo_sim_create: static pressures, then the consistent
 * accelerations), both formulations:
 * - the cylinders carry the load: forces from 0.2 N (tip) to 1.3e4 N;
 * - at rest: max |zdd| <= 1e-9 rad/s^2 (measured 2.7e-12; with the balance's
 *   forces 1 % off, 3.2e-4);
 * - 255 links (below the threshold: the dense balance) the same (4.5e-12);
 * - the 256-link chain's pressures by the sparse and by the dense balance
 *   (the threshold raised) agree to 1e-12 of the largest (measured 7e-17;
 *   with the sparse forces 1 % off, 8e-3). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "test_util.h"

static char *chain_yaml(int n)
{
    size_t cap = 4096 + (size_t)n * 1600, len = 0;
    char *s = malloc(cap);
    assert_non_null(s);
#define OUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    OUT("format: 1\nname: chain%d\ngravity: [9.81, 0.02, 0]\nsimulation:\n  dt: 1.0e-3\n  t_end: 0.002\n"
        "ground:\n  points:\n    G1: [-0.3, 0.1, 0]\nbodies:\n",
        n);
    for (int k = 1; k <= n; ++k) {
        if (k == 1)
            OUT("  - name: l1\n    joint: {name: q1, type: revolute, parent: ground, location: [0, 0, 0], "
                "axis: [0, 0, 1], initial: 0}\n");
        else
            OUT("  - name: l%d\n    joint: {name: q%d, type: revolute, parent: l%d, location: J, axis: [0, 0, 1], "
                "initial: 0}\n",
                k, k, k - 1);
        OUT("    mass: 2\n    com: [0.5, 0, 0]\n    inertia: [0, 0.16666666666666666, 0.16666666666666666]\n"
            "    points:\n      J: [1, 0, 0]\n      R: [0.3, 0.1, 0]\n      B: [0.7, 0.1, 0]\n"
            "      B2: [1.7, 0.1, 0]\n");
    }
    OUT("signals:\n  - name: U_ref\n    points: [[0, 0], [10, 0]]\n"
        "hydraulics:\n  fluid: {bulk_modulus: 1.5e9, density: 850, laminar_transition: 2.0e5}\n"
        "  sources:\n    - {name: pump, pressure: 7.6e6}\n    - {name: tank, pressure: 1.0e5}\n  cylinders:\n");
    for (int k = 1; k <= n; ++k) {
        char base[32];
        if (k == 1)
            snprintf(base, sizeof base, "ground.G1");
        else if (k % 2 == 0 && k > 2) /* two joints: from the link two back (B2 is where l(k-1).B is at rest) */
            snprintf(base, sizeof base, "l%d.B2", k - 2);
        else
            snprintf(base, sizeof base, "l%d.B", k - 1);
        OUT("    - {name: c%d, base: %s, rod: l%d.R, piston_diameter: 0.04, rod_diameter: 0.02,\n"
            "       length: 0.4, efficiency: 0.9, friction_velocity: 0.01}\n",
            k, base, k);
    }
    OUT("  volumes:\n");
    for (int k = 1; k <= n; ++k)
        OUT("    - {name: a%d, parts: [{volume: 2.0e-5, bulk_modulus: 5.5e8}], initial_pressure: static}\n"
            "    - {name: p%d, parts: [{volume: 1.0e-5, bulk_modulus: 5.5e8}, {chamber: c%d.piston, bulk_modulus: "
            "3.15e10}], initial_pressure: static}\n"
            "    - {name: r%d, parts: [{volume: 2.0e-5, bulk_modulus: 5.5e8}, {chamber: c%d.rod, bulk_modulus: "
            "3.15e10}], initial_pressure: 3.5e6}\n",
            k, k, k, k, k);
    OUT("  throttles:\n");
    for (int k = 1; k <= n; ++k)
        OUT("    - {name: t%d, from: a%d, to: p%d, area: 2.0e-5, discharge_coefficient: 0.8}\n", k, k, k);
    OUT("  valves:\n");
    for (int k = 1; k <= n; ++k)
        OUT("    - {name: v%d, type: 4/3, P: pump, T: tank, A: a%d, B: r%d, flow_coefficient: 2.0e-9,\n"
            "       bandwidth_hz: 35, signal: U_ref}\n",
            k, k, k);
#undef OUT
    assert_true(len < cap);
    return s;
}

static hymo_model *chain_model(int n)
{
    char *text = chain_yaml(n);
    hymo_model *m = test_load_text(text, "static_chain");
    free(text);
    return m;
}

/* max |zdd| at t = 0 and the largest actuator force; checks the run's
 * first steps stay near rest */
static double at_rest(const hymo_model *m, hymo_formulation_kind form, double *f_hi, double *f_lo)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.formulation = form;
    opt.jacobian = HYMO_JACOBIAN_FAST;
    opt.linear_solver = HYMO_LINSOL_KLU;
    hymo_sim *sim = test_sim_create(m, &opt);
    const int nz = hymo_sim_nz(sim), na = hymo_sim_na(sim);
    const double *zdd = hymo_sim_zdd(sim), *F = hymo_sim_actuator_force(sim);
    double worst = 0.0;
    for (int j = 0; j < nz; ++j) worst = fmax(worst, fabs(zdd[j]));
    *f_hi = 0.0, *f_lo = INFINITY;
    for (int a = 0; a < na; ++a) {
        *f_hi = fmax(*f_hi, fabs(F[a]));
        *f_lo = fmin(*f_lo, fabs(F[a]));
    }
    hymo_sim_free(sim);
    return worst;
}

static void check(int n)
{
    hymo_model *m = chain_model(n);
    for (int form = 0; form < 2; ++form) {
        double fmax, fmin;
        const double zdd = at_rest(m, form ? HYMO_FORMULATION_PENALTY : HYMO_FORMULATION_DOUBLE_STEP, &fmax, &fmin);
        printf("chain %d, %s: max |zdd| at t = 0: %.3g rad/s^2; actuator forces %.4g .. %.4g N\n", n,
               form ? "penalty" : "double-step", zdd, fmin, fmax);
        assert_true(fmax > 1000.0);      /* the cylinders carry the load */
        assert_true(fmax > 100.0 * fmin); /* and it differs along the chain */
        assert_true(zdd <= 1e-9);
    }
    hymo_model_free(m);
}

static void test_sparse(void **state) { (void)state, check(256); }
static void test_dense(void **state) { (void)state, check(255); }

/* The initial pressures of the 256-link chain (np) into p, with the
 * sparse balance from `sparse_min` actuators on. */
static double *initial_pressures(int sparse_min, int *np)
{
    const int keep = hymo_static_sparse_min;
    hymo_static_sparse_min = sparse_min; /* read when the initial state is computed (the first sim) */
    hymo_model *m = chain_model(256);
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.linear_solver = HYMO_LINSOL_KLU;
    hymo_sim *sim = test_sim_create(m, &opt);
    hymo_static_sparse_min = keep;
    *np = hymo_sim_np(sim);
    double *p = malloc((size_t)*np * sizeof *p);
    assert_non_null(p);
    memcpy(p, hymo_sim_p(sim), (size_t)*np * sizeof *p);
    hymo_sim_free(sim);
    hymo_model_free(m);
    return p;
}

/* The same chain's static pressures by the sparse (KLU) and the dense
 * (KINSOL) balance: equal to round-off (measured: 0 .. 2e-16 of the
 * largest pressure). */
static void test_sparse_dense(void **state)
{
    (void)state;
    int ns, nd;
    double *ps = initial_pressures(256, &ns), *pd = initial_pressures(1 << 30, &nd);
    assert_int_equal(ns, nd);
    double diff = 0.0, scale = 0.0;
    for (int i = 0; i < ns; ++i) {
        diff = fmax(diff, fabs(ps[i] - pd[i]));
        scale = fmax(scale, fabs(pd[i]));
    }
    printf("chain 256: static pressures sparse vs dense: max difference %.3g Pa of %.4g Pa (%.3g)\n", diff, scale,
           diff / scale);
    assert_true(diff <= 1e-12 * scale);
    free(ps), free(pd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_sparse), cmocka_unit_test(test_dense),
                                       cmocka_unit_test(test_sparse_dense)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
