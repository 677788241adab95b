/* The entries of Phi_z flagged as zero at every consistent position
 * (hymo_constraints.vanish: a common ancestor's joint that moves both
 * ends of a cut row rigidly), which double-step's Phi_d by KLU leaves out:
 * - the scissor lift (bench/gen_models.py scissor 20: planar revolute cuts,
 *   every joint about z, each loop on the one below): every group-3 entry
 *   is flagged, and over 60 steps of double-step (KLU, fast) the flagged
 *   entries of the full Phi_z stay below 1e-9 of its largest entry;
 * - a spatial RUSR loop (tests/models/loop_rusr_revolute.yaml's) on a base
 *   turning about a tilted axis, revolute cut on the base: the base joint's
 *   entries are group 3 and flagged, and stay below 1e-9 of the largest
 *   over 200 steps;
 * - the same loop closed by a planar revolute cut: the tilted base joint's
 *   point-point entries are not flagged ((w x d) . e with d along z is not
 *   zero for w off z), with the base turning about z they are. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "hymo/linalg.h"
#include "test_util.h"

#define PY "/usr/bin/python3"

static hymo_model *scissor_model(int n)
{
    char path[256], cmd[1024];
    snprintf(path, sizeof path, "/tmp/hymo_test_vanish_%ld.yaml", (long)getpid());
    snprintf(cmd, sizeof cmd, PY " %s/../bench/gen_models.py scissor %d -o %s", HYMO_TESTS_DIR, n, path);
    if (system(cmd) != 0) fail_msg("%s failed", cmd);
    hymo_model *m = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_file(path, &m, &err) != HYMO_OK) fail_msg("%s: %s", cmd, err.message);
    unlink(path);
    return m;
}

/* the RUSR loop of tests/models/loop_rusr_revolute.yaml on a base body
 * turning about `axis`, its cut of type `cut` on the base */
static hymo_model *rusr_on_base(const char *axis, const char *cut)
{
    char text[8192];
    snprintf(text, sizeof text,
             "format: 1\nname: rusr_on_base\ngravity: [0.0, 0.0, -9.81]\n"
             "simulation:\n  dt: 0.001\n  t_end: 1\n"
             "  tolerances: {position: 1.0e-7, pressure: 1.0e-2, spool: 1.0e-7}\n"
             "bodies:\n"
             "  - name: base\n"
             "    joint: {name: z0, type: revolute, parent: ground, location: [0, 0, 0], axis: %s}\n"
             "    mass: 5.0\n    com: [0.35, 0.0, 0.2]\n    inertia: [0.5, 0.5, 0.5, 0.0, 0.0, 0.0]\n"
             "    points: {D: [0.7, 0.0, 0.35]}\n"
             "  - name: crank\n"
             "    joint: {name: z1, type: revolute, parent: base, location: [0, 0, 0], axis: [0, 0, 1], rate: 2.0}\n"
             "    mass: 2.0\n    com: [0.15, 0.0, 0.0]\n    inertia: [0.0001, 0.015, 0.015, 0.0, 0.0, 0.0]\n"
             "    points: {A: [0.3, 0.0, 0.0]}\n"
             "  - name: cross\n"
             "    joint: {name: z2, type: revolute, parent: crank, location: A, axis: [1, 0, 0]}\n"
             "    mass: 0.1\n    com: [0, 0, 0]\n    inertia: [1.0e-4, 1.0e-4, 1.0e-4]\n"
             "  - name: coupler\n"
             "    joint: {name: z3, type: revolute, parent: cross, location: [0, 0, 0], "
             "axis: [0.0, -0.9526231449626669, 0.304153158263132]}\n"
             "    mass: 1.5\n    com: [0.2, 0.125, 0.39150635094610964]\n"
             "    inertia: [0.08446547220100911, 0.09664422109738166, 0.027867529532747622, "
             "-0.012491024509100054, -0.039122523401089446, -0.024451577125680912]\n"
             "    points: {B: [0.39999999999999997, 0.25000000000000006, 0.7830127018922193]}\n"
             "  - name: g1\n"
             "    joint: {name: z4, type: revolute, parent: coupler, location: B, axis: [-0.5438, -0.1176, 0.8309]}\n"
             "    mass: 0.01\n    com: [0, 0, 0]\n    inertia: [1e-06, 1e-06, 1e-06]\n"
             "  - name: g2\n"
             "    joint: {name: z5, type: revolute, parent: g1, location: [0, 0, 0], axis: [0.3436, -0.9345, 0.0926]}\n"
             "    mass: 0.01\n    com: [0, 0, 0]\n    inertia: [1e-06, 1e-06, 1e-06]\n"
             "  - name: rocker\n"
             "    joint: {name: z6, type: revolute, parent: g2, location: [0, 0, 0], axis: [0.7656, 0.3359, 0.5486]}\n"
             "    mass: 1.0\n    com: [0.0, -0.125, -0.21650635094610965]\n"
             "    inertia: [0.020833333333333332, 0.015637499999999995, 0.005245833333333336, 0.0, 0.0, "
             "-0.008999447320993293]\n"
             "    points: {D: [0.0, -0.25000000000000006, -0.4330127018922193]}\n"
             "cut_joints:\n"
             "  - {name: D, type: %s, body_a: rocker, point_a: D, body_b: base, point_b: D%s}\n"
             "independent: [z0, z1]\n",
             axis, cut, strcmp(cut, "revolute") == 0 ? ", axis_a: [1, 0, 0], axis_b: [1, 0, 0]" : "");
    return test_load_text(text, "rusr_on_base");
}

/* flagged entries / group-3 entries; the largest |flagged| / max |Phi_z|
 * over `steps` steps of double-step with `ls` */
static void run_flagged(hymo_model *m, hymo_linsol_kind ls, int steps, int *n_flag, int *n_g3, double *worst)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.formulation = HYMO_FORMULATION_DOUBLE_STEP;
    opt.jacobian = HYMO_JACOBIAN_FAST;
    opt.linear_solver = ls;
    hymo_sim *sim = test_sim_create(m, &opt);
    hymo_mb *mb = &sim->mb;
    const hymo_constraints *con = mb->con;
    double *phi = calloc((size_t)mb->m + 1, sizeof(double)), *pz = calloc((size_t)con->nnz + 1, sizeof(double));
    assert_non_null(phi), assert_non_null(pz);
    *n_flag = *n_g3 = 0;
    for (int t = 0; t < con->nnz; ++t) {
        *n_flag += con->vanish[t];
        *n_g3 += con->group[t] == 3;
        if (con->vanish[t]) assert_int_equal(con->group[t], 3);
    }
    *worst = 0.0;
    hymo_error err;
    hymo_error_clear(&err);
    for (int k = 0; k <= steps; ++k) {
        if (k > 0 && hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        hymo_kin_positions(&mb->kin, m, mb->z);
        hymo_constraints_eval(con, &mb->kin, phi, pz, NULL);
        double big = 0.0, flagged = 0.0;
        for (int t = 0; t < con->nnz; ++t) {
            big = fmax(big, fabs(pz[t]));
            if (con->vanish[t]) flagged = fmax(flagged, fabs(pz[t]));
        }
        *worst = fmax(*worst, flagged / big);
    }
    print_message("%d flagged of %d group-3 entries (%d in all); largest flagged / largest %.3g over %d steps\n",
                  *n_flag, *n_g3, con->nnz, *worst, steps);
    free(phi), free(pz);
    hymo_sim_free(sim);
}

static void test_scissor(void **state)
{
    (void)state;
    if (access(PY, X_OK) != 0) skip();
    hymo_model *m = scissor_model(20);
    int n_flag, n_g3;
    double worst;
    run_flagged(m, HYMO_LINSOL_KLU, 60, &n_flag, &n_g3, &worst);
    assert_true(n_g3 > 0);
    assert_int_equal(n_flag, n_g3); /* every joint turns about z */
    assert_true(worst < 1e-9);
    hymo_model_free(m);
}

static void test_spatial_base(void **state)
{
    (void)state;
    hymo_model *m = rusr_on_base("[0.6, 0.0, 0.8]", "revolute");
    int n_flag, n_g3;
    double worst;
    run_flagged(m, HYMO_LINSOL_DENSE, 200, &n_flag, &n_g3, &worst);
    assert_int_equal(n_g3, 5); /* the base joint in each of the cut's 5 rows */
    assert_int_equal(n_flag, 5);
    assert_true(worst < 1e-9);
    hymo_model_free(m);
}

/* flagged entries of the base joint (column 0) */
static int base_flags(const char *axis)
{
    hymo_model *m = rusr_on_base(axis, "planar_revolute");
    hymo_constraints con;
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_constraints_init(&con, m, &err), HYMO_OK);
    int n = 0, g3 = 0;
    for (int t = 0; t < con.nnz; ++t)
        if (con.col[t] == 0) n += con.vanish[t], g3 += con.group[t] == 3;
    assert_int_equal(g3, 2); /* the planar revolute cut's two rows */
    hymo_constraints_free(&con);
    hymo_model_free(m);
    return n;
}

static void test_planar_cut(void **state)
{
    (void)state;
    assert_int_equal(base_flags("[0.6, 0.0, 0.8]"), 0);
    assert_int_equal(base_flags("[0, 0, 1]"), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scissor),
        cmocka_unit_test(test_spatial_base),
        cmocka_unit_test(test_planar_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
