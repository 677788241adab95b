/* FMI 2.0 co-simulation FMUs as hymo subsystems (hymo/fmu.h), with the
 * test FMU tests/fmu/lin_fmu.c packed by tests/fmu/make_fmus.py:
 *
 * - lin.fmu as a first-order lag: inputs, outputs, variables of every
 *   type; the temporary directory exists while loaded and is removed.
 * - Two lags in a feedback loop, through the generic master, agree with
 *   hymo's linear test subsystems (hymo/linear.h) of the same matrices:
 *   Jacobi and Gauss-Seidel, Lagrange orders 0..3 (the FMU receives the
 *   input polynomial through fmi2SetRealInputDerivatives, k! coef[k]).
 * - The same two lags wired by a system file (hymo_cosim_system_load,
 *   hymo_cosim_system_run): /cosim/outputs of the file bit-identical to the
 *   linear subsystems, Gauss-Seidel p = 2.
 * - get_state / set_state: a retried step is bit-identical, serialized
 *   (lin.fmu) and with FMUstate handles (lin_noser.fmu); saving again into
 *   the same buffer reuses its handle and holds the new state.
 * - Broken FMUs: one-line errors naming the FMU, nothing left in TMPDIR:
 *   not a zip, no modelDescription.xml, malformed XML, fmiVersion 1.0 and
 *   3.0, model exchange only, missing binary, wrong guid, an Integer input,
 *   an unknown parameter; fmi2DoStep returning fmi2Error (HYMO_ERR_MODEL)
 *   and fmi2Discard (HYMO_ERR_NUMERIC). */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hymo/fmu.h"
#include "hymo/linear.h"
#include "test_hdf5.h"
#include "test_util.h"

#ifndef HYMO_TEST_FMU_DIR
#define HYMO_TEST_FMU_DIR "fmu"
#endif

static char tmpdir[512];

static const char *fmu(const char *name)
{
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", HYMO_TEST_FMU_DIR, name);
    return buf[k];
}

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) ++n;
    closedir(d);
    return n;
}

static int setup(void **state)
{
    (void)state;
    /* a private TMPDIR, so that leftovers can be counted */
    snprintf(tmpdir, sizeof tmpdir, "%s/fmu_tmp_%ld", HYMO_TEST_FMU_DIR, (long)getpid());
    mkdir(tmpdir, 0700);
    setenv("TMPDIR", tmpdir, 1);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rmdir(tmpdir);
    return 0;
}

/* lag: x1' = (k u - x1)/tau, y = x1 */
static hymo_subsystem *lag(const char *file, double tau, double k, double x0, double h, const char *name)
{
    const hymo_fmu_parameter p[] = {{"a11", -1.0 / tau}, {"a22", -1.0}, {"b1", k / tau}, {"c1", 1.0},
                                    {"x1_0", x0},       {"h", h}};
    hymo_subsystem *s = NULL;
    hymo_error err;
    hymo_status st = hymo_fmu_subsystem_create(fmu(file), name, 0.0, p, 6, &s, &err);
    if (st != HYMO_OK) fail_msg("%s", err.message);
    return s;
}

static double var(const hymo_subsystem *s, const char *name)
{
    int vr = hymo_subsystem_find_variable(s, name);
    assert_true(vr >= 0);
    double v;
    s->ops->get_real(s, &vr, 1, &v);
    return v;
}

/* hymo_fmu_subsystem_open leaves the FMU in initialization mode: inputs set
 * there reach an output with direct feedthrough (osc_mass2: F = kc (x2 - x1)
 * + dc (v2 - v1), kc = 3000, x2(0) = -0.05, input start values 0); exit once;
 * its FMU state restores a step bit for bit; a subsystem destroyed in
 * initialization mode leaves nothing behind. */
static void test_open_in_initialization(void **state)
{
    (void)state;
    hymo_subsystem *s = NULL;
    hymo_error err;
    if (hymo_fmu_subsystem_open(fmu("osc_mass2.fmu"), "m2", 0.0, NULL, 0, &s, &err) != HYMO_OK)
        fail_msg("%s", err.message);
    double y[3], coef[2 * HYMO_POLY_TERMS] = {0};
    s->ops->get_outputs(s, y);
    assert_close(y[2], -150.0, 1e-12);
    coef[0] = 0.1; /* x1 */
    s->ops->set_inputs(s, 0.0, coef);
    s->ops->get_outputs(s, y);
    assert_close(y[2], -450.0, 1e-12);
    assert_int_equal(hymo_fmu_exit_initialization(s, &err), HYMO_OK);
    assert_int_not_equal(hymo_fmu_exit_initialization(s, &err), HYMO_OK);
    assert_non_null(strstr(err.message, "not in initialization mode"));
    assert_int_equal(s->ops->do_step(s, 0.0, 1e-3, &err), HYMO_OK);
    /* the hand-written FMU's state (serialized): a retried step is bit-identical */
    const int n = s->ops->state_size(s);
    assert_true(n > 1);
    double *buf = calloc((size_t)n, sizeof *buf), y1[3], y2[3];
    assert_non_null(buf);
    coef[HYMO_POLY_TERMS] = 0.5; /* v1 */
    coef[1] = 2.0;               /* dx1/dt */
    s->ops->get_state(s, buf);
    s->ops->set_inputs(s, 1e-3, coef);
    assert_int_equal(s->ops->do_step(s, 1e-3, 2.5e-3, &err), HYMO_OK);
    s->ops->get_outputs(s, y1);
    s->ops->set_state(s, buf);
    s->ops->set_inputs(s, 1e-3, coef);
    assert_int_equal(s->ops->do_step(s, 1e-3, 2.5e-3, &err), HYMO_OK);
    s->ops->get_outputs(s, y2);
    assert_memory_equal(y1, y2, sizeof y1);
    free(buf);
    s->ops->destroy(s);
    if (hymo_fmu_subsystem_open(fmu("osc_mass2.fmu"), "m2", 0.0, NULL, 0, &s, &err) != HYMO_OK)
        fail_msg("%s", err.message);
    s->ops->destroy(s);
    assert_int_equal(dir_entries(tmpdir), 0);
}

static void test_load(void **state)
{
    (void)state;
    hymo_subsystem *s = lag("lin.fmu", 0.5, 2.0, 1.0, 1e-3, "lag");
    assert_string_equal(s->name, "lag");
    assert_int_equal(s->n_inputs, 1);
    assert_int_equal(s->n_outputs, 1);
    assert_int_equal(s->ops->n_variables(s), 22);
    assert_string_equal(s->ops->variable(s, hymo_fmu_input_variable(s, 0))->name, "u");
    assert_string_equal(s->ops->variable(s, hymo_fmu_output_variable(s, 0))->name, "y");
    assert_int_equal(hymo_fmu_input_variable(s, 1), -1);
    assert_null(s->ops->variable(s, 22));
    assert_true(s->ops->variable(s, hymo_subsystem_find_variable(s, "label"))->type == HYMO_VAR_STRING);
    const char *dir = hymo_fmu_directory(s);
    char res[1024];
    snprintf(res, sizeof res, "%s/resources/README.txt", dir);
    struct stat sb;
    assert_int_equal(stat(res, &sb), 0);
    assert_int_equal(dir_entries(tmpdir), 1);
    assert_close(var(s, "x1"), 1.0, 0.0);
    assert_close(var(s, "a11"), -2.0, 0.0);
    double y;
    s->ops->get_outputs(s, &y);
    assert_close(y, 1.0, 0.0);
    /* one step with u = 0: x1 = exp(-H/tau) to RK4's accuracy */
    double coef[HYMO_POLY_TERMS] = {0};
    s->ops->set_inputs(s, 0.0, coef);
    hymo_error err;
    assert_int_equal(s->ops->do_step(s, 0.0, 0.1, &err), HYMO_OK);
    s->ops->get_outputs(s, &y);
    assert_close(y, exp(-0.2), 1e-12);
    assert_close(var(s, "steps"), 1.0, 0.0);
    assert_close(var(s, "failed"), 0.0, 0.0);
    assert_string_equal(s->ops->get_string(s, hymo_subsystem_find_variable(s, "label")), "lin_fmu");
    assert_null(s->ops->get_string(s, hymo_subsystem_find_variable(s, "x1")));
    int bad = 99;
    double v;
    s->ops->get_real(s, &bad, 1, &v);
    assert_true(isnan(v));
    s->ops->destroy(s);
    assert_int_equal(dir_entries(tmpdir), 0);
}

/* Two lags in a loop: u1 = y2, u2 = y1 (FMUs and hymo's linear systems). */
static void run_pair(int fmus, hymo_master_scheme scheme, int order, double H, int n, double *y_out)
{
    const double tau[2] = {0.3, 0.7}, k[2] = {-1.5, 0.8}, x0[2] = {1.0, -0.5}, h = H / 4;
    hymo_subsystem *sub[2];
    hymo_error err;
    for (int i = 0; i < 2; ++i) {
        if (fmus) {
            sub[i] = lag("lin.fmu", tau[i], k[i], x0[i], h, i ? "lag2" : "lag1");
        } else {
            const double A[4] = {-1.0 / tau[i], 0, 0, -1}, B[2] = {k[i] / tau[i], 0}, C[2] = {1, 0}, X0[2] = {x0[i], 0};
            const hymo_linear_system sys = {2, 1, 1, A, B, C, NULL, h};
            assert_int_equal(hymo_linear_subsystem_create(&sys, X0, i ? "lin2" : "lin1", &sub[i], &err), HYMO_OK);
        }
    }
    const hymo_link links[2] = {{1, 0, 0, 0}, {0, 0, 1, 0}};
    const hymo_master_options mo = {scheme, order, H};
    hymo_master *m;
    assert_int_equal(hymo_master_create(sub, 2, links, 2, &mo, &m, &err), HYMO_OK);
    for (int s = 0; s < n; ++s) {
        assert_int_equal(hymo_master_step(m, &err), HYMO_OK);
        y_out[2 * s] = hymo_master_outputs(m, 0)[0];
        y_out[2 * s + 1] = hymo_master_outputs(m, 1)[0];
    }
    hymo_master_free(m);
    for (int i = 0; i < 2; ++i) sub[i]->ops->destroy(sub[i]);
}

static void test_pair_matches_linear(void **state)
{
    (void)state;
    enum { N = 300 };
    double a[2 * N], b[2 * N];
    for (int scheme = 0; scheme < 2; ++scheme)
        for (int p = 0; p <= 3; ++p) {
            run_pair(1, (hymo_master_scheme)scheme, p, 0.01, N, a);
            run_pair(0, (hymo_master_scheme)scheme, p, 0.01, N, b);
            double worst = 0.0;
            for (int i = 0; i < 2 * N; ++i) worst = fmax(worst, fabs(a[i] - b[i]) / (fabs(b[i]) + 1e-300));
            printf("scheme %d, p = %d: max relative difference FMU vs linear %.3g\n", scheme, p, worst);
            /* k! coef[k] / k! is exact for k <= 2; k = 3 may round (6 c / 6) */
            assert_true(worst <= (p <= 2 ? 0.0 : 1e-13));
            assert_true(fabs(a[2 * N - 2]) > 1e-6); /* not decayed to nothing */
        }
}

static void read_outputs(hid_t f, const char *path, int n, double *y)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    assert_true(d >= 0);
    hid_t sp = H5Dget_space(d);
    hsize_t dims[2] = {0, 0};
    assert_int_equal(H5Sget_simple_extent_ndims(sp), 2);
    H5Sget_simple_extent_dims(sp, dims, NULL);
    assert_int_equal((int)dims[0], n + 1);
    assert_int_equal((int)dims[1], 1);
    assert_true(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, y) >= 0);
    H5Sclose(sp);
    H5Dclose(d);
}

static void test_system_file_matches_linear(void **state)
{
    (void)state;
    enum { N = 300 };
    const double tau[2] = {0.3, 0.7}, k[2] = {-1.5, 0.8}, x0[2] = {1.0, -0.5};
    FILE *f = fopen("fmu_import_lags.yaml", "w");
    assert_non_null(f);
    fprintf(f, "H: 0.01\nt_end: 3\nscheme: gauss-seidel\nextrapolation: 2\nsubsystems:\n");
    for (int i = 0; i < 2; ++i)
        fprintf(f, "  lag%d:\n    fmu: %s\n    parameters: {a11: %.17g, a22: -1, b1: %.17g, c1: 1, x1_0: %.17g, h: 0.0025}\n",
                i + 1, fmu("lin.fmu"), -1.0 / tau[i], k[i] / tau[i], x0[i]);
    fprintf(f, "connections:\n  - {from: lag1.y, to: lag2.u}\n  - {from: lag2.y, to: lag1.u}\n");
    fclose(f);
    hymo_cosim_system *sys;
    hymo_error err;
    if (hymo_cosim_system_load("fmu_import_lags.yaml", &sys, &err) != HYMO_OK) fail_msg("%s", err.message);
    hymo_cosim_summary sum;
    remove("fmu_import_lags.h5");
    if (hymo_cosim_system_run(sys, NULL, "fmu_import_lags.h5", &sum, &err) != HYMO_OK) fail_msg("%s", err.message);
    assert_int_equal(sum.stable, 1);
    assert_int_equal(sum.n_macro, N);
    assert_int_equal(sum.n_bonds, 0);
    assert_int_equal(hymo_cosim_system_run(sys, NULL, NULL, &sum, &err), HYMO_ERR_ARGUMENT); /* runs once */
    hymo_cosim_system_free(sys);
    double y1[N + 1], y2[N + 1], ref[2 * N];
    hid_t h = H5Fopen("fmu_import_lags.h5", H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(h >= 0);
    read_outputs(h, "/cosim/outputs/lag1", N, y1);
    read_outputs(h, "/cosim/outputs/lag2", N, y2);
    H5Fclose(h);
    run_pair(0, HYMO_MASTER_GAUSS_SEIDEL, 2, 0.01, N, ref);
    assert_true(y1[0] == 1.0 && y2[0] == -0.5);
    for (int s = 0; s < N; ++s)
        if (y1[s + 1] != ref[2 * s] || y2[s + 1] != ref[2 * s + 1])
            fail_msg("step %d: system file %.17g %.17g, linear %.17g %.17g", s + 1, y1[s + 1], y2[s + 1], ref[2 * s],
                     ref[2 * s + 1]);
}

static void retry(const char *file)
{
    hymo_subsystem *s = lag(file, 0.4, 1.0, 0.3, 1e-3, "lag");
    hymo_error err;
    double coef[HYMO_POLY_TERMS] = {1.0, -2.0, 3.0, 0.5};
    s->ops->set_inputs(s, 0.0, coef);
    assert_int_equal(s->ops->do_step(s, 0.0, 0.05, &err), HYMO_OK);
    const int n = s->ops->state_size(s);
    assert_true(n >= 1);
    double *buf = calloc((size_t)n, sizeof *buf), y1, y2, x1;
    s->ops->get_state(s, buf);
    coef[0] = 0.7;
    s->ops->set_inputs(s, 0.05, coef);
    assert_int_equal(s->ops->do_step(s, 0.05, 0.05, &err), HYMO_OK);
    s->ops->get_outputs(s, &y1);
    x1 = var(s, "x1");
    s->ops->set_state(s, buf);
    s->ops->set_inputs(s, 0.05, coef);
    assert_int_equal(s->ops->do_step(s, 0.05, 0.05, &err), HYMO_OK);
    s->ops->get_outputs(s, &y2);
    assert_true(memcmp(&y1, &y2, sizeof y1) == 0);
    assert_true(x1 == var(s, "x1"));
    assert_close(var(s, "steps"), 2.0, 0.0);
    /* saving into the same buffer again overwrites it in place (handle
     * mode: the same FMUstate, no new one per checkpoint) */
    const double idx = buf[0];
    s->ops->get_state(s, buf);
    assert_true(buf[0] == idx);
    s->ops->set_inputs(s, 0.1, coef);
    assert_int_equal(s->ops->do_step(s, 0.1, 0.05, &err), HYMO_OK);
    s->ops->get_outputs(s, &y1);
    s->ops->set_state(s, buf);
    s->ops->set_inputs(s, 0.1, coef);
    assert_int_equal(s->ops->do_step(s, 0.1, 0.05, &err), HYMO_OK);
    s->ops->get_outputs(s, &y2);
    assert_true(memcmp(&y1, &y2, sizeof y1) == 0);
    buf[0] = 1e9; /* not a state of this FMU: the next step fails */
    s->ops->set_state(s, buf);
    assert_int_not_equal(s->ops->do_step(s, 0.1, 0.05, &err), HYMO_OK);
    assert_non_null(strstr(err.message, "not a state of this FMU"));
    free(buf);
    s->ops->destroy(s);
}

static void test_state_round_trip(void **state)
{
    (void)state;
    retry("lin.fmu");
    retry("lin_noser.fmu");
}

static void expect_load_error(const char *file, const hymo_fmu_parameter *p, int np, const char *phrase)
{
    hymo_subsystem *s = (hymo_subsystem *)0x1;
    hymo_error err;
    hymo_status st = hymo_fmu_subsystem_create(fmu(file), NULL, 0.0, p, np, &s, &err);
    printf("%-14s -> %s\n", file, err.message);
    assert_int_not_equal(st, HYMO_OK);
    assert_null(s);
    assert_non_null(strstr(err.message, fmu(file)));
    if (!strstr(err.message, phrase)) fail_msg("'%s' does not say '%s'", err.message, phrase);
    assert_null(strchr(err.message, '\n'));
    assert_int_equal(dir_entries(tmpdir), 0); /* the temporary directory is gone */
}

static void test_bad_fmus(void **state)
{
    (void)state;
    expect_load_error("notzip.fmu", NULL, 0, "cannot open as a zip archive: Not a zip archive");
    expect_load_error("does_not_exist.fmu", NULL, 0, "cannot open");
    expect_load_error("noxml.fmu", NULL, 0, "no modelDescription.xml");
    expect_load_error("malformed.fmu", NULL, 0, "malformed XML");
    expect_load_error("fmi1.fmu", NULL, 0, "fmiVersion is '1.0'");
    expect_load_error("fmi3.fmu", NULL, 0, "fmiVersion is '3.0'");
    expect_load_error("me_only.fmu", NULL, 0, "model exchange only");
    expect_load_error("nobinary.fmu", NULL, 0, "binaries/linux64/lin_fmu.so is missing");
    expect_load_error("badguid.fmu", NULL, 0, "fmi2Instantiate failed");
    expect_load_error("intinput.fmu", NULL, 0, "input 'u' is of type Integer");
    const hymo_fmu_parameter unknown = {"no_such", 1.0}, output = {"y", 1.0};
    expect_load_error("lin.fmu", &unknown, 1, "no variable 'no_such'");
    expect_load_error("lin.fmu", &output, 1, "'y' is not a parameter or input");
}

static void test_do_step_faults(void **state)
{
    (void)state;
    for (int discard = 0; discard < 2; ++discard) {
        const hymo_fmu_parameter p = {discard ? "discard_at" : "fail_at", 0.25};
        hymo_subsystem *s;
        hymo_error err;
        assert_int_equal(hymo_fmu_subsystem_create(fmu("lin.fmu"), "faulty", 0.0, &p, 1, &s, &err), HYMO_OK);
        double coef[HYMO_POLY_TERMS] = {0};
        hymo_status st = HYMO_OK;
        double t = 0.0;
        for (; t < 1.0 && st == HYMO_OK; t += 0.1) {
            s->ops->set_inputs(s, t, coef);
            st = s->ops->do_step(s, t, 0.1, &err);
        }
        printf("%s\n", err.message);
        assert_int_equal(st, discard ? HYMO_ERR_NUMERIC : HYMO_ERR_MODEL);
        assert_non_null(strstr(err.message, fmu("lin.fmu")));
        assert_non_null(strstr(err.message, discard ? "fmi2DoStep returned fmi2Discard" : "fmi2DoStep returned fmi2Error"));
        assert_non_null(strstr(err.message, "fault switch"));
        assert_non_null(strstr(err.message, "t = 0.2 s"));
        if (!discard) assert_close(var(s, "failed"), 1.0, 0.0);
        s->ops->destroy(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_open_in_initialization),
        cmocka_unit_test(test_pair_matches_linear),
        cmocka_unit_test(test_system_file_matches_linear),
        cmocka_unit_test(test_state_round_trip),
        cmocka_unit_test(test_bad_fmus),
        cmocka_unit_test(test_do_step_faults),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
