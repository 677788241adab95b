/* The initial state through SUNDIALS KINSOL (src/solvers/nonlinear_kinsol.c,
 * src/compile/compile.c):
 *   1. the wrapper: Newton with line search converges where plain Newton
 *      diverges (atan), a 2-D intersection to round-off, a singular
 *      Jacobian and a failing residual give their errors;
 *   2. assembly of the four-bar against its closed form, for several held
 *      z3 and guesses off by up to 20 deg: 1e-12 rad;
 *   3. a loop that cannot be closed fails with HYMO_ERR_ASSEMBLY naming
 *      the violated cut joint (the second of two) and a violation no
 *      smaller than the geometric distance it cannot bridge;
 *   4. static equilibrium in its three shapes against closed forms: crane1
 *      (one cylinder, two degrees of freedom, consistent), the four-bar
 *      with a second, mirrored cylinder (minimum-norm forces), crane1 with
 *      its load swung out (cannot be held: named error). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "hymo/sim.h"
#include "nonlinear_kinsol.h"
#include "test_util.h"

static const double PI = 3.14159265358979323846;

/* ---------------- 1. the wrapper ---------------- */

static int atan_residual(const double *x, double *f, void *user)
{
    (void)user;
    f[0] = atan(x[0]);
    return 0;
}

static int atan_jacobian(const double *x, double *J, void *user)
{
    (void)user;
    J[0] = 1.0 / (1.0 + x[0] * x[0]);
    return 0;
}

/* Plain Newton on atan(x) = 0 diverges from |x0| > 1.39; the line search
 * brings it home. */
static void test_line_search_atan(void **state)
{
    (void)state;
    double x = 3.0;
    /* plain Newton from 3 runs away: x1 = 3 - atan(3) * 10 = -9.5, ... */
    double xn = x;
    for (int i = 0; i < 3; ++i) xn -= atan(xn) * (1.0 + xn * xn);
    assert_true(fabs(xn) > 1e3);
    hymo_kinsol_problem pb = {.n = 1, .residual = atan_residual, .jacobian = atan_jacobian, .f_scale = 1.0,
                              .x_scale = 1.0, .fnorm_tol = 1e-14, .step_tol = 1e-15, .accept_tol = 1e-12,
                              .max_iter = 50};
    hymo_kinsol_stats ks;
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_kinsol_solve(&pb, &x, &ks, &err), HYMO_OK);
    assert_true(fabs(x) <= 1e-14);
    assert_true(ks.backtracks > 0); /* the line search did the work */
    assert_true(ks.fnorm <= 1e-14);
}

/* circle x^2 + y^2 = 4 and line y = x / 2: x = 4 / sqrt(5), y = 2 / sqrt(5) */
static int circle_residual(const double *x, double *f, void *user)
{
    (void)user;
    f[0] = x[0] * x[0] + x[1] * x[1] - 4.0;
    f[1] = x[1] - 0.5 * x[0];
    return 0;
}

static int circle_jacobian(const double *x, double *J, void *user)
{
    (void)user; /* column-major */
    J[0] = 2.0 * x[0], J[1] = -0.5;
    J[2] = 2.0 * x[1], J[3] = 1.0;
    return 0;
}

static void test_circle_line(void **state)
{
    (void)state;
    double x[2] = {1.0, 3.0};
    hymo_kinsol_problem pb = {.n = 2, .residual = circle_residual, .jacobian = circle_jacobian, .f_scale = 1.0,
                              .x_scale = 1.0, .fnorm_tol = 1e-14, .step_tol = 1e-15, .accept_tol = 1e-12,
                              .max_step = 1.0, .max_iter = 50};
    hymo_kinsol_stats ks;
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_kinsol_solve(&pb, x, &ks, &err), HYMO_OK);
    assert_close(x[0], 4.0 / sqrt(5.0), 1e-15);
    assert_close(x[1], 2.0 / sqrt(5.0), 1e-15);
    assert_true(ks.iterations >= 2 && ks.iterations <= 12);
}

static int singular_jacobian(const double *x, double *J, void *user)
{
    (void)x, (void)user;
    J[0] = 1.0, J[1] = 2.0, J[2] = 2.0, J[3] = 4.0; /* rank 1 */
    return 0;
}

static int failing_residual(const double *x, double *f, void *user)
{
    (void)x, (void)f, (void)user;
    return -1;
}

static void test_failures(void **state)
{
    (void)state;
    double x[2] = {1.0, 3.0};
    hymo_kinsol_problem pb = {.n = 2, .residual = circle_residual, .jacobian = singular_jacobian, .f_scale = 1.0,
                              .x_scale = 1.0, .fnorm_tol = 1e-14, .step_tol = 1e-15, .accept_tol = 1e-12,
                              .max_iter = 50};
    hymo_kinsol_stats ks;
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_kinsol_solve(&pb, x, &ks, &err), HYMO_ERR_NUMERIC);
    assert_non_null(strstr(err.message, "KINSOL: the Jacobian is singular"));
    pb.residual = failing_residual;
    pb.jacobian = circle_jacobian;
    hymo_error_clear(&err);
    assert_int_equal(hymo_kinsol_solve(&pb, x, &ks, &err), HYMO_ERR_CONVERGENCE);
    assert_non_null(strstr(err.message, "KINSOL: the residual function failed"));
    /* the iteration limit */
    double y = 3.0;
    hymo_kinsol_problem pa = {.n = 1, .residual = atan_residual, .jacobian = atan_jacobian, .f_scale = 1.0,
                              .x_scale = 1.0, .fnorm_tol = 1e-14, .step_tol = 1e-15, .accept_tol = 1e-12,
                              .max_iter = 1};
    hymo_error_clear(&err);
    assert_int_equal(hymo_kinsol_solve(&pa, &y, &ks, &err), HYMO_ERR_CONVERGENCE);
    assert_non_null(strstr(err.message, "iteration limit"));
}

/* ---------------- 2. four-bar assembly against the closed form ---------------- */

/* text with the first occurrence of `from` replaced by `to` (must exist) */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at) fail_msg("'%s' not found in the model text", from);
    size_t n = strlen(text) - strlen(from) + strlen(to);
    char *s = malloc(n + 1);
    assert_non_null(s);
    size_t head = (size_t)(at - text);
    memcpy(s, text, head);
    strcpy(s + head, to);
    strcat(s, at + strlen(from));
    return s;
}

/* The four-bar of SPEC §5.2 (O at the origin, |OC| = 3, |CD| = sqrt 2,
 * |DE| = 2, E = (0, -1)) with the relative angle z3 held: the triangle CDE
 * fixes |CE|^2 = L2^2 + L3^2 + 2 L2 L3 cos z3 = |C - E|^2 = 10 + 6 sin z1,
 * and body 2's absolute angle th2 = z1 + z2 turns (L2 + L3 cos z3,
 * L3 sin z3) onto E - C. */
static void fourbar_closed_form(double z3, double z2_guess, double z[3])
{
    const double L1 = 3.0, L2 = sqrt(2.0), L3 = 2.0, Ex = 0.0, Ey = -1.0;
    const double d2 = L2 * L2 + L3 * L3 + 2.0 * L2 * L3 * cos(z3);
    const double z1 = asin((d2 - L1 * L1 - Ex * Ex - Ey * Ey) / (-2.0 * L1 * Ey)); /* branch near 0 */
    const double Cx = L1 * cos(z1), Cy = L1 * sin(z1);
    const double th2 = atan2(Ey - Cy, Ex - Cx) - atan2(L3 * sin(z3), L2 + L3 * cos(z3));
    double z2 = th2 - z1;
    z2 += 2.0 * PI * round((z2_guess - z2) / (2.0 * PI)); /* the turn nearest the guess */
    z[0] = z1, z[1] = z2, z[2] = z3;
}

static void test_fourbar_assembly(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/fourbar.yaml", HYMO_DATA_DIR);
    char *text = test_read_file(path);
    const struct {
        double z3, z1_guess, z2_guess; /* deg */
    } cases[] = {{-45, 0, -135}, {-45, 12, -120}, {-60, 0, -135}, {-60, -15, -150},
                 {-30, 5, -140}, {-50, 20, -115}, {-35, -10, -135}, {-20, 0, -135}};
    double worst = 0.0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        char a[64], b[64], d[64];
        snprintf(a, sizeof a, "initial: %.17g deg}", cases[c].z1_guess);
        snprintf(b, sizeof b, "initial: %.17g deg}", cases[c].z2_guess);
        snprintf(d, sizeof d, "initial: %.17g deg}", cases[c].z3);
        char *t1 = replace(text, "initial: 0 deg}", a);
        char *t2 = replace(t1, "initial: -135 deg}", b);
        char *t3 = replace(t2, "initial: -45 deg}", d);
        hymo_model *m = test_load_text(t3, "fourbar_variant.yaml");
        const hymo_compiled *cm = NULL;
        hymo_error err;
        hymo_error_clear(&err);
        if (hymo_compiled_initial(m, &cm, &err) != HYMO_OK)
            fail_msg("z3 = %g deg: %s", cases[c].z3, err.message);
        double expect[3];
        fourbar_closed_form(cases[c].z3 * PI / 180.0, cases[c].z2_guess * PI / 180.0, expect);
        for (int j = 0; j < 3; ++j) {
            worst = fmax(worst, fabs(cm->z0[j] - expect[j]));
            if (fabs(cm->z0[j] - expect[j]) > 1e-12)
                fail_msg("z3 = %g deg, guess (%g, %g) deg: z%d = %.17g, closed form %.17g (diff %.3g)",
                         cases[c].z3, cases[c].z1_guess, cases[c].z2_guess, j + 1, cm->z0[j], expect[j],
                         cm->z0[j] - expect[j]);
        }
        assert_true(cm->z0[2] == cases[c].z3 * PI / 180.0); /* held exactly */
        hymo_model_free(m);
        free(t1), free(t2), free(t3);
    }
    print_message("four-bar assembly: largest |z - closed form| %.3g rad over %zu cases\n", worst,
                  sizeof cases / sizeof cases[0]);
    free(text);
}

/* ---------------- 3. a loop that cannot be closed ---------------- */

static double violation_in(const char *message, const char *joint)
{
    char key[64];
    snprintf(key, sizeof key, "cut joint %s is violated by ", joint);
    const char *at = strstr(message, key);
    if (!at) fail_msg("message does not name cut joint %s: %s", joint, message);
    return strtod(at + strlen(key), NULL);
}

static void test_unassemblable(void **state)
{
    (void)state;
    /* the shipped bad model: ground E at (0, -10), out of reach of the chain
     * (|OC| + |CD| + |DE| = 5 + sqrt 2 from O), by at least 10 - 5 - sqrt 2 */
    hymo_model *m = test_load_bad_model("unassemblable.yaml");
    hymo_error err;
    hymo_error_clear(&err);
    const hymo_compiled *cm = NULL;
    assert_int_equal(hymo_compiled_initial(m, &cm, &err), HYMO_ERR_ASSEMBLY);
    assert_null(cm);
    assert_non_null(strstr(err.message, "cannot be assembled"));
    assert_non_null(strstr(err.message, "KINSOL iterations"));
    double v = violation_in(err.message, "E");
    assert_true(v >= 10.0 - 5.0 - sqrt(2.0) - 1e-9 && v < 5.0);
    /* the error is repeated, not recomputed */
    hymo_error err2;
    hymo_error_clear(&err2);
    assert_int_equal(hymo_compiled_initial(m, &cm, &err2), HYMO_ERR_ASSEMBLY);
    assert_string_equal(err.message, err2.message);
    hymo_model_free(m);

    /* quick-return with its cut joints in the order M, J and the ram's guide
     * line J at y = 50, beyond |O I| <= 5 + 1.2: J (the second) is named */
    char *text = test_read_file(HYMO_DATA_DIR "/quickreturn.yaml");
    const char *j0 = strstr(text, "  - name: J\n"), *m0 = strstr(text, "  - name: M\n");
    assert_non_null(j0);
    assert_non_null(m0);
    assert_true(j0 < m0);
    const char *m1 = strstr(m0, "\n\n");
    size_t mlen = m1 ? (size_t)(m1 - m0) + 1 : strlen(m0);
    char *swapped = malloc(strlen(text) + 2);
    assert_non_null(swapped);
    size_t head = (size_t)(j0 - text), jlen = (size_t)(m0 - j0);
    memcpy(swapped, text, head);                       /* ... cut_joints:\n */
    memcpy(swapped + head, m0, mlen);                  /* M */
    memcpy(swapped + head + mlen, j0, jlen);           /* J (with its comments) */
    strcpy(swapped + head + mlen + jlen, m0 + mlen);   /* the rest */
    char *far = replace(swapped, "J: [0, 5, 0]", "J: [0, 50, 0]");
    m = test_load_text(far, "quickreturn_far.yaml");
    assert_true(m->n_cuts == 2 && strcmp(m->cuts[0].name, "M") == 0 && strcmp(m->cuts[1].name, "J") == 0);
    hymo_error_clear(&err);
    assert_int_equal(hymo_compiled_initial(m, &cm, &err), HYMO_ERR_ASSEMBLY);
    v = violation_in(err.message, "J");
    assert_true(v >= 50.0 - 6.2 - 1e-9);
    hymo_model_free(m);
    free(text), free(swapped), free(far);
}

/* ---------------- 4. static equilibrium ---------------- */

/* Initial actuator forces of model (fails the test on error). */
static void initial_forces(const hymo_model *m, double *F, int na)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    hymo_sim *sim = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_sim_create(m, &opt, &sim, &err) != HYMO_OK) fail_msg("%s: %s", m->name, err.message);
    assert_int_equal(hymo_sim_na(sim), na);
    memcpy(F, hymo_sim_actuator_force(sim), (size_t)na * sizeof(double));
    const double *zdd = hymo_sim_zdd(sim); /* held at rest */
    for (int j = 0; j < hymo_sim_nz(sim); ++j) assert_close(zdd[j], 0.0, 1e-9);
    hymo_sim_free(sim);
}

static void test_static_shapes(void **state)
{
    (void)state;
    const double g = 9.81, Ap = 0.25 * PI * 0.08 * 0.08, Ar = Ap - 0.25 * PI * 0.035 * 0.035;
    double F[2];
    /* crane1: two degrees of freedom, one cylinder; the load hangs straight
     * down, so the balance is consistent. Boom moment about O at 30 deg:
     * g cos 30 (200 * 0.5 + 250 * 1 + 100 * 1) = g cos 30 * 450 N m; the
     * cylinder (B = (sqrt3/2, 0) to P = 0.5 (cos 30, sin 30), s = 0.5) has
     * ds/dz1 = (sqrt3/2) sin 30 / (2 s) = cos 30 / 2: F = 900 g = 8829 N. */
    hymo_model *m = test_load_model("crane1.yaml");
    initial_forces(m, F, 1);
    assert_close(F[0], 900.0 * g, 1e-12 * 900.0 * g);
    hymo_model_free(m);

    /* four-bar with a second cylinder mirrored about x = 1 (G2 = (2, -2) to
     * F = (1, -1)): one degree of freedom, two cylinders; the minimum-norm
     * forces share SPEC 5.2's F_s0 = sqrt 2 g (3 m1 + 2 m2 + m3) equally */
    char path[1024];
    snprintf(path, sizeof path, "%s/fourbar.yaml", HYMO_DATA_DIR);
    char *text = test_read_file(path);
    char *t1 = replace(text, "    G: [0, -2, 0]     # cylinder base\n",
                       "    G: [0, -2, 0]     # cylinder base\n    G2: [2, -2, 0]\n");
    char *t2 = replace(t1, "  # Lumped volumes",
                       "    - {name: cyl2, base: G2, rod: F, piston_diameter: 0.080, rod_diameter: 0.035, "
                       "length: 1.1, efficiency: 1}\n  # Lumped volumes");
    char *t3 = replace(t2, "  throttles:",
                       "    - {name: V4, parts: [{volume: 3.14e-5, bulk_modulus: 5.5e8}, {chamber: cyl2.piston, "
                       "bulk_modulus: 3.15e10}], initial_pressure: static}\n"
                       "    - {name: V5, parts: [{volume: 7.85e-5, bulk_modulus: 5.5e8}, {chamber: cyl2.rod, "
                       "bulk_modulus: 3.15e10}], initial_pressure: 3.5e6}\n  throttles:");
    m = test_load_text(t3, "fourbar_two_cylinders.yaml");
    const double Fs0 = sqrt(2.0) * g * (3 * 225.0 + 2 * 35.0 + 50.0);
    initial_forces(m, F, 2);
    assert_close(F[0], 0.5 * Fs0, 1e-10 * Fs0);
    assert_close(F[1], 0.5 * Fs0, 1e-10 * Fs0);
    const hymo_compiled *cm = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_compiled_initial(m, &cm, &err), HYMO_OK);
    const double p4 = (0.5 * Fs0 + 3.5e6 * Ar) / Ap;
    assert_close(cm->p0[test_volume_state(m, "V4")], p4, 1e-10 * p4);
    assert_close(cm->p0[test_volume_state(m, "V2")], p4, 1e-10 * p4);
    hymo_model_free(m);
    free(text), free(t1), free(t2), free(t3);

    /* crane1 with the load swung out 40 deg: one cylinder cannot hold it */
    snprintf(path, sizeof path, "%s/crane1.yaml", HYMO_DATA_DIR);
    text = test_read_file(path);
    t1 = replace(text, "initial: 240 deg}", "initial: 200 deg}");
    m = test_load_text(t1, "crane1_swung.yaml");
    hymo_error_clear(&err);
    assert_int_equal(hymo_compiled_initial(m, &cm, &err), HYMO_ERR_MODEL);
    assert_non_null(strstr(err.message, "no static equilibrium: 1 cylinder(s) cannot hold 2 degrees of freedom"));
    hymo_model_free(m);
    free(text), free(t1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_search_atan),
        cmocka_unit_test(test_circle_line),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_fourbar_assembly),
        cmocka_unit_test(test_unassemblable),
        cmocka_unit_test(test_static_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
