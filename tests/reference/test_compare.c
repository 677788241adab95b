/* Tests of the trajectory comparison (reference/compare.c) and of the
 * optional /cosim data of reference files (hymo_ref_writer_put_*,
 * hymo_ref_read). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hymo/compare.h"
#include "hymo/reference.h"
#include "test_util.h"

/* ------------------------------------------------------------------ */
/* In-memory trajectories                                              */

/* nz = 3 (two revolute, one prismatic), np = 2, nu = 1, na = 2. */
enum { NZ = 3, NP = 2, NU = 1, NA = 2 };

static double *alloc_d(int n, int cols)
{
    double *m = calloc((size_t)n * (size_t)(cols > 0 ? cols : 1), sizeof *m);
    assert_non_null(m);
    return m;
}

static char (*alloc_names(int n, const char *prefix))[HYMO_REF_TEXT_MAX]
{
    char(*names)[HYMO_REF_TEXT_MAX] = calloc((size_t)(n > 0 ? n : 1), sizeof *names);
    assert_non_null(names);
    for (int i = 0; i < n; i++) snprintf(names[i], HYMO_REF_TEXT_MAX, "%s%d", prefix, i + 1);
    return names;
}

/* Value of signal k, component c at time t: linear in t, so that linear
 * interpolation reproduces it exactly. */
static double lin(int k, int c, double t)
{
    return (k + 1) * 0.5 + c * 0.25 + (k - 2.5 * c + 1.0) * t;
}

static double *signal_ptr(hymo_reference *r, int k, int *cols)
{
    switch (k) {
    case HYMO_CMP_Z: *cols = r->nz; return r->z;
    case HYMO_CMP_ZD: *cols = r->nz; return r->zd;
    case HYMO_CMP_S: *cols = r->na; return r->s;
    case HYMO_CMP_SD: *cols = r->na; return r->sd;
    case HYMO_CMP_P: *cols = r->np; return r->p;
    case HYMO_CMP_U: *cols = r->nu; return r->u;
    case HYMO_CMP_FORCE: *cols = r->na; return r->force;
    }
    *cols = 0;
    return NULL;
}

/* n rows at t_i = t0 + i * dt (computed as t0 + i * dt); every signal
 * follows lin(). Only the fields the cosim driver fills are set, plus
 * names and z units. */
static hymo_reference *make_traj(int n, double t0, double dt)
{
    hymo_reference *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->n = n;
    r->nz = NZ;
    r->np = NP;
    r->nu = NU;
    r->na = NA;
    r->time = alloc_d(n, 1);
    r->z = alloc_d(n, NZ);
    r->zd = alloc_d(n, NZ);
    r->s = alloc_d(n, NA);
    r->sd = alloc_d(n, NA);
    r->p = alloc_d(n, NP);
    r->u = alloc_d(n, NU);
    r->force = alloc_d(n, NA);
    r->z_names = alloc_names(NZ, "z");
    r->p_names = alloc_names(NP, "V");
    r->u_names = alloc_names(NU, "dcv");
    r->actuator_names = alloc_names(NA, "cyl");
    r->z_units = calloc(NZ, sizeof *r->z_units);
    assert_non_null(r->z_units);
    strcpy(r->z_units[0], "rad");
    strcpy(r->z_units[1], "rad");
    strcpy(r->z_units[2], "m");
    for (int i = 0; i < n; i++) {
        const double t = t0 + i * dt;
        r->time[i] = t;
        for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
            int cols = 0;
            double *d = signal_ptr(r, k, &cols);
            for (int c = 0; c < cols; c++) d[(size_t)i * cols + c] = lin(k, c, t);
        }
    }
    return r;
}

static void add_energy(hymo_reference *r, double scale)
{
    r->has_cosim = 1;
    r->n_bonds = 1;
    r->residual_energy_total = alloc_d(r->n, 1);
    for (int i = 0; i < r->n; i++) r->residual_energy_total[i] = scale * r->time[i];
}

static hymo_compare_result compare_ok(const hymo_reference *ref, const hymo_reference *run)
{
    hymo_compare_result res;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_compare_trajectories(ref, run, &res, &err) != HYMO_OK) {
        fail_msg("compare: %s", err.message);
    }
    return res;
}

/* ------------------------------------------------------------------ */
/* Comparison                                                          */

static void test_signal_names(void **state)
{
    (void)state;
    static const char *const names[] = {"z", "zd", "s", "sd", "p", "U", "force"};
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        assert_string_equal(hymo_compare_signal_name(k), names[k]);
        assert_int_equal(hymo_compare_signal_find(names[k]), k);
    }
    assert_null(hymo_compare_signal_name(HYMO_CMP_SIGNALS));
    assert_int_equal(hymo_compare_signal_find("residual_energy"), -1);
    assert_int_equal(hymo_compare_signal_find("S"), -1);
    assert_int_equal(hymo_compare_signal_find(""), -1);
    assert_int_equal(hymo_compare_signal_find(NULL), -1);
    assert_int_equal(hymo_compare_signal_find("u"), HYMO_CMP_U);

    hymo_reference *r = make_traj(2, 0.0, 1.0);
    assert_string_equal(hymo_compare_signal_unit(r, HYMO_CMP_Z, 0), "rad");
    assert_string_equal(hymo_compare_signal_unit(r, HYMO_CMP_Z, 2), "m");
    assert_string_equal(hymo_compare_signal_unit(r, HYMO_CMP_ZD, 1), "rad/s");
    assert_string_equal(hymo_compare_signal_unit(r, HYMO_CMP_ZD, 2), "m/s");
    assert_string_equal(hymo_compare_signal_unit(r, HYMO_CMP_Z, 3), "");
    assert_string_equal(hymo_compare_signal_unit(NULL, HYMO_CMP_Z, 0), "rad or m");
    assert_string_equal(hymo_compare_signal_unit(NULL, HYMO_CMP_ZD, 0), "rad/s or m/s");
    assert_string_equal(hymo_compare_signal_unit(r, HYMO_CMP_S, 0), "m");
    assert_string_equal(hymo_compare_signal_unit(r, HYMO_CMP_SD, 0), "m/s");
    assert_string_equal(hymo_compare_signal_unit(r, HYMO_CMP_P, 0), "Pa");
    assert_string_equal(hymo_compare_signal_unit(r, HYMO_CMP_U, 0), "V");
    assert_string_equal(hymo_compare_signal_unit(r, HYMO_CMP_FORCE, 0), "N");
    assert_string_equal(hymo_compare_signal_unit(r, 99, 0), "");
    hymo_ref_free(r);
}

static void test_identical(void **state)
{
    (void)state;
    hymo_reference *ref = make_traj(101, 0.0, 0.01);
    hymo_reference *run = make_traj(101, 0.0, 0.01);
    hymo_compare_result res = compare_ok(ref, run);
    assert_int_equal(res.n_samples, 101);
    assert_true(res.t_start == 0.0);
    assert_true(res.t_end == ref->time[100]);
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        assert_true(res.rms[k] == 0.0);
        assert_true(res.max[k] == 0.0);
        assert_int_equal(res.worst_rms[k], 0);
        assert_int_equal(res.worst_max[k], 0);
    }
    assert_int_equal(res.has_residual_energy, 0);
    /* compared with itself */
    res = compare_ok(ref, ref);
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) assert_true(res.rms[k] == 0.0 && res.max[k] == 0.0);
    hymo_ref_free(ref);
    hymo_ref_free(run);
}

static void test_constant_offset(void **state)
{
    (void)state;
    hymo_reference *ref = make_traj(50, 0.0, 0.02);
    hymo_reference *run = make_traj(50, 0.0, 0.02);
    /* actuator length of cyl2 off by 1.5e-3 m everywhere */
    for (int i = 0; i < run->n; i++) run->s[(size_t)i * NA + 1] += 1.5e-3;
    hymo_compare_result res = compare_ok(ref, run);
    assert_int_equal(res.n_samples, 50);
    assert_close(res.rms[HYMO_CMP_S], 1.5e-3, 1e-15);
    assert_close(res.max[HYMO_CMP_S], 1.5e-3, 1e-15);
    assert_int_equal(res.worst_rms[HYMO_CMP_S], 1);
    assert_int_equal(res.worst_max[HYMO_CMP_S], 1);
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        if (k == HYMO_CMP_S) continue;
        assert_true(res.rms[k] == 0.0);
        assert_true(res.max[k] == 0.0);
    }

    /* an offset growing linearly in time: max at the last sample, RMS known */
    for (int i = 0; i < run->n; i++) run->p[(size_t)i * NP + 0] = ref->p[(size_t)i * NP] + 100.0 * i;
    res = compare_ok(ref, run);
    assert_close(res.max[HYMO_CMP_P], 4900.0, 1e-9);
    assert_int_equal(res.worst_max[HYMO_CMP_P], 0);
    assert_true(res.t_worst_max[HYMO_CMP_P] == ref->time[49]);
    double sum = 0.0;
    for (int i = 0; i < 50; i++) sum += (100.0 * i) * (100.0 * i);
    assert_close(res.rms[HYMO_CMP_P], sqrt(sum / 50.0), 1e-9);
    hymo_ref_free(ref);
    hymo_ref_free(run);
}

static void test_interpolation_exact(void **state)
{
    (void)state;
    /* reference at dt = 0.1 on [0, 1]; run on a finer, unaligned grid
     * (dt = 1/300) over [0, 1.05]: every signal is linear in t */
    hymo_reference *ref = make_traj(11, 0.0, 0.1);
    hymo_reference *run = make_traj(316, 0.0, 1.0 / 300.0);
    hymo_compare_result res = compare_ok(ref, run);
    assert_int_equal(res.n_samples, 11);
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        assert_true(res.rms[k] <= 1e-12);
        assert_true(res.max[k] <= 1e-12);
    }
    /* a coarser run (dt = 0.25) on a shifted range [0.3, 2.05]: common
     * range [0.3, 1], reference rows 0.3 .. 1.0 */
    hymo_reference *coarse = make_traj(8, 0.3, 0.25);
    res = compare_ok(ref, coarse);
    assert_int_equal(res.n_samples, 8);
    assert_true(res.t_start == 0.3);
    assert_true(res.t_end == ref->time[10]);
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) assert_true(res.max[k] <= 1e-12);
    hymo_ref_free(coarse);

    /* a quadratic signal is not reproduced: linear interpolation of t^2
     * between run times a < b errs by (t - a)(b - t); run times 0, 0.35, 1
     * give the largest error 0.35 * 0.3 = 0.105 at t = 0.7 */
    hymo_reference *q = make_traj(3, 0.0, 0.5);
    q->time[1] = 0.35;
    for (int i = 0; i < q->n; i++) q->u[i] = q->time[i] * q->time[i];
    for (int i = 0; i < ref->n; i++) ref->u[i] = ref->time[i] * ref->time[i];
    res = compare_ok(ref, q);
    assert_close(res.max[HYMO_CMP_U], 0.105, 1e-12);
    assert_int_equal(res.worst_max[HYMO_CMP_U], 0);
    assert_close(res.t_worst_max[HYMO_CMP_U], 0.7, 1e-12);
    double sum = 0.0;
    for (int i = 0; i <= 10; i++) {
        double t = 0.1 * i, e = t <= 0.35 ? t * (0.35 - t) : (t - 0.35) * (1.0 - t);
        sum += e * e;
    }
    assert_close(res.rms[HYMO_CMP_U], sqrt(sum / 11.0), 1e-12);
    hymo_ref_free(q);
    hymo_ref_free(ref);
    hymo_ref_free(run);
}

static void test_repeated_times(void **state)
{
    (void)state;
    /* run with repeated times (a step at t = 0.5 stored as two rows) */
    hymo_reference *ref = make_traj(5, 0.0, 0.25);
    hymo_reference *run = make_traj(6, 0.0, 0.25);
    const double t[6] = {0.0, 0.25, 0.5, 0.5, 0.75, 1.0};
    for (int i = 0; i < 6; i++) {
        run->time[i] = t[i];
        run->u[i] = i < 3 ? 0.0 : 10.0; /* nu = 1 */
    }
    for (int i = 0; i < 5; i++) ref->u[i] = ref->time[i] < 0.5 ? 0.0 : 10.0;
    /* other signals must equal the reference on the run grid */
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        if (k == HYMO_CMP_U) continue;
        int cols = 0;
        double *d = signal_ptr(run, k, &cols);
        for (int i = 0; i < 6; i++)
            for (int c = 0; c < cols; c++) d[(size_t)i * cols + c] = lin(k, c, t[i]);
    }
    hymo_compare_result res = compare_ok(ref, run);
    assert_int_equal(res.n_samples, 5);
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        assert_true(isfinite(res.rms[k]));
        assert_true(res.max[k] <= 1e-12);
    }
    /* the reference may repeat times too */
    ref->time[3] = ref->time[2];
    res = compare_ok(ref, run);
    assert_int_equal(res.n_samples, 5);
    assert_true(isfinite(res.max[HYMO_CMP_Z]));
    hymo_ref_free(ref);
    hymo_ref_free(run);
}

static void test_nonfinite(void **state)
{
    (void)state;
    hymo_reference *ref = make_traj(10, 0.0, 0.1);
    hymo_reference *run = make_traj(10, 0.0, 0.1);
    run->z[5 * NZ + 2] = NAN;
    hymo_compare_result res = compare_ok(ref, run);
    assert_true(isinf(res.rms[HYMO_CMP_Z]));
    assert_true(isinf(res.max[HYMO_CMP_Z]));
    assert_int_equal(res.worst_max[HYMO_CMP_Z], 2);
    assert_close(res.t_worst_max[HYMO_CMP_Z], 0.5, 1e-15);
    assert_true(res.max[HYMO_CMP_S] == 0.0);
    hymo_ref_free(ref);
    hymo_ref_free(run);
}

static void expect_error(const hymo_reference *ref, const hymo_reference *run, const char *needle)
{
    hymo_compare_result res;
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_compare_trajectories(ref, run, &res, &err), HYMO_ERR_ARGUMENT);
    if (!strstr(err.message, needle)) fail_msg("message '%s' lacks '%s'", err.message, needle);
}

static void test_errors(void **state)
{
    (void)state;
    hymo_reference *ref = make_traj(10, 0.0, 0.1);
    hymo_reference *run = make_traj(10, 0.0, 0.1);
    run->np = 1;
    expect_error(ref, run, "np");
    run->np = NP;
    run->na = 3;
    expect_error(ref, run, "na (actuators) is 2 in the reference, 3 in the run");
    run->na = NA;
    run->nz = 4;
    expect_error(ref, run, "nz");
    run->nz = NZ;
    run->nu = 0;
    expect_error(ref, run, "nu");
    run->nu = NU;

    /* no overlap */
    for (int i = 0; i < run->n; i++) run->time[i] += 5.0;
    expect_error(ref, run, "no common time range");
    /* overlap without a reference sample inside */
    for (int i = 0; i < run->n; i++) run->time[i] = 0.11 + 0.001 * i;
    expect_error(ref, run, "no reference sample");
    /* decreasing time */
    for (int i = 0; i < run->n; i++) run->time[i] = 0.1 * i;
    run->time[4] = 0.0;
    expect_error(ref, run, "decreases in row 4");
    run->time[4] = NAN;
    expect_error(ref, run, "not finite");
    run->time[4] = 0.4;
    /* missing data */
    double *p = run->p;
    run->p = NULL;
    expect_error(ref, run, "signal 'p'");
    run->p = p;
    int n = run->n;
    run->n = 0;
    expect_error(ref, run, "no rows");
    run->n = n;

    hymo_compare_result res;
    hymo_error err;
    assert_int_equal(hymo_compare_trajectories(NULL, run, &res, &err), HYMO_ERR_ARGUMENT);
    /* still fine afterwards */
    res = compare_ok(ref, run);
    assert_true(res.max[HYMO_CMP_Z] == 0.0);
    hymo_ref_free(ref);
    hymo_ref_free(run);
}

static void test_no_components(void **state)
{
    (void)state;
    hymo_reference *ref = make_traj(4, 0.0, 0.5);
    hymo_reference *run = make_traj(4, 0.0, 0.5);
    ref->np = run->np = 0;
    free(ref->p);
    free(run->p);
    ref->p = run->p = NULL;
    hymo_compare_result res = compare_ok(ref, run);
    assert_int_equal(res.worst_rms[HYMO_CMP_P], -1);
    assert_int_equal(res.worst_max[HYMO_CMP_P], -1);
    assert_true(res.rms[HYMO_CMP_P] == 0.0 && res.max[HYMO_CMP_P] == 0.0);
    hymo_ref_free(ref);
    hymo_ref_free(run);
}

static void test_residual_energy(void **state)
{
    (void)state;
    hymo_reference *ref = make_traj(11, 0.0, 0.1);
    hymo_reference *run = make_traj(21, 0.0, 0.05);
    add_energy(run, -2.0); /* E(t) = -2 t */
    hymo_compare_result res = compare_ok(ref, run);
    assert_int_equal(res.has_residual_energy, 1);
    assert_close(res.residual_energy_final, -2.0, 1e-15);
    assert_close(res.residual_energy_max_abs, 2.0, 1e-15);
    /* reference without a curve: RMS of the run curve on the reference
     * samples t = 0, 0.1, ..., 1: sqrt(4 * sum t^2 / 11) = sqrt(1.54) */
    assert_close(res.residual_energy_rms_diff, sqrt(4.0 * 3.85 / 11.0), 1e-12);
    /* reference with a curve E = -1.5 t: difference -0.5 t */
    add_energy(ref, -1.5);
    res = compare_ok(ref, run);
    assert_close(res.residual_energy_rms_diff, sqrt(0.25 * 3.85 / 11.0), 1e-12);
    /* has_cosim without a total curve counts as none */
    free(run->residual_energy_total);
    run->residual_energy_total = NULL;
    res = compare_ok(ref, run);
    assert_int_equal(res.has_residual_energy, 0);
    hymo_ref_free(ref);
    hymo_ref_free(run);
}

/* ------------------------------------------------------------------ */
/* /cosim in reference files                                           */

typedef char name_t[HYMO_REF_TEXT_MAX];
static const name_t f_z_names[] = {"z1", "z2", "slider"};
static const name_t f_z_units[] = {"rad", "rad", "m"};
static const name_t f_p_names[] = {"V1", "V2"};
static const name_t f_u_names[] = {"dcv"};
static const name_t f_act_names[] = {"cyl1", "cyl2"};
static const name_t f_cut_names[] = {"cut_C"};

#define FILE_ROWS 7

/* Opens a writer and appends FILE_ROWS rows of synthetic data. */
static hymo_ref_writer *open_file(const char *path)
{
    hymo_ref_dims d = {NZ, NP, NU, NA, 1, f_z_names, f_z_units, f_p_names, f_u_names,
                       f_act_names, f_cut_names, 0, NULL};
    hymo_ref_header h = {
        .model_name = "fourbar",
        .model_source = "name: fourbar\n",
        .model_sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        .formulation = "double-step",
        .integrator = "trapezoidal-newton",
        .jacobian = "numeric",
        .linear_solver = "dense",
        .dt = 1e-3,
        .t_end = 6e-3,
        .tol_position = 1e-10,
        .tol_pressure = 1e-2,
        .tol_spool = 1e-8,
        .max_iter = 20,
    };
    hymo_error err;
    hymo_error_clear(&err);
    hymo_ref_writer *w = NULL;
    remove(path);
    if (hymo_ref_writer_open(&w, path, &h, &d, &err) != HYMO_OK) fail_msg("open: %s", err.message);
    enum { N = FILE_ROWS };
    double time[N], z[N * NZ], p[N * NP], u[N * NU], a[N * NA], cut[N], one[N];
    int iter[N];
    for (int i = 0; i < N; i++) {
        time[i] = i * 1e-3;
        for (int c = 0; c < NZ; c++) z[i * NZ + c] = lin(0, c, time[i]);
        for (int c = 0; c < NP; c++) p[i * NP + c] = lin(4, c, time[i]);
        u[i] = lin(5, 0, time[i]);
        for (int c = 0; c < NA; c++) a[i * NA + c] = lin(2, c, time[i]);
        cut[i] = 0.0;
        one[i] = 1.0;
        iter[i] = 1;
    }
    hymo_ref_block b = {N, time, z, z, z, p, u, a, a, a, a, one, one, one, cut, cut, cut,
                        iter, one, NULL};
    if (hymo_ref_writer_append(w, &b, &err) != HYMO_OK) fail_msg("append: %s", err.message);
    return w;
}

static void close_file(hymo_ref_writer *w)
{
    hymo_run_summary s;
    memset(&s, 0, sizeof s);
    s.complete = 1;
    s.n_steps = FILE_ROWS - 1;
    s.t_reached = (FILE_ROWS - 1) * 1e-3;
    strcpy(s.independent, "z3");
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_ref_writer_close(w, &s, &err) != HYMO_OK) fail_msg("close: %s", err.message);
}

static void put_ok(hymo_status st, const hymo_error *err)
{
    if (st != HYMO_OK) fail_msg("put: %s", err->message);
}

/* Writes a complete /cosim group (2 bonds). */
static void put_cosim(hymo_ref_writer *w, int bonds_attr)
{
    enum { N = FILE_ROWS, NB = 2 };
    double power[N * NB], energy[N * NB], total[N], sig[N * NA];
    for (int i = 0; i < N; i++) {
        for (int b = 0; b < NB; b++) {
            power[i * NB + b] = 0.5 * (b + 1) * i;
            energy[i * NB + b] = 1e-3 * (b + 1) * i;
        }
        total[i] = energy[i * NB] + energy[i * NB + 1];
        for (int c = 0; c < NA; c++) sig[i * NA + c] = 100.0 * i + c;
    }
    const char *const bonds[NB] = {"cyl1.velocity-force", "cyl2.velocity-force"};
    hymo_error err;
    hymo_error_clear(&err);
    put_ok(hymo_ref_writer_put_attr_str(w, "cosim", "scheme", "jacobi", &err), &err);
    put_ok(hymo_ref_writer_put_attr_str(w, "cosim", "coupling", "velocity-force", &err), &err);
    put_ok(hymo_ref_writer_put_attr_str(w, "/cosim", "extrapolation", "quadratic", &err), &err);
    put_ok(hymo_ref_writer_put_attr_str(w, "cosim", "hyd_integrator", "bdf2", &err), &err);
    put_ok(hymo_ref_writer_put_attr_str(w, "cosim", "mech_integrator", "trapezoidal", &err), &err);
    put_ok(hymo_ref_writer_put_attr_str(w, "cosim", "status", "stable", &err), &err);
    put_ok(hymo_ref_writer_put_attr_str(w, "cosim", "status_reason", "reached t_end", &err), &err);
    put_ok(hymo_ref_writer_put_attr_double(w, "cosim", "H", 1e-3, &err), &err);
    put_ok(hymo_ref_writer_put_attr_double(w, "cosim", "h_m", 5e-4, &err), &err);
    put_ok(hymo_ref_writer_put_attr_double(w, "cosim", "h_h", 1e-4, &err), &err);
    put_ok(hymo_ref_writer_put_attr_double(w, "cosim", "residual_energy_final", total[N - 1], &err),
           &err);
    if (bonds_attr >= 0) put_ok(hymo_ref_writer_put_attr_int(w, "cosim", "n_bonds", bonds_attr, &err), &err);
    put_ok(hymo_ref_writer_put_matrix(w, "cosim/residual_power", N, NB, power, "W", bonds, &err),
           &err);
    put_ok(hymo_ref_writer_put_matrix(w, "cosim/residual_energy", N, NB, energy, "J", bonds, &err),
           &err);
    put_ok(hymo_ref_writer_put_matrix(w, "cosim/residual_energy_total", N, 0, total, "J", NULL,
                                      &err),
           &err);
    const char *const sig_names[NA] = {"cyl1", "cyl2"};
    put_ok(hymo_ref_writer_put_matrix(w, "cosim/signals/force", N, NA, sig, "N", sig_names, &err),
           &err);
    /* an attribute on a new nested group */
    put_ok(hymo_ref_writer_put_attr_int(w, "cosim/signals/meta", "count", 1, &err), &err);
}

static void test_cosim_roundtrip(void **state)
{
    (void)state;
    const char *path = "test_compare_cosim.h5";
    hymo_ref_writer *w = open_file(path);
    put_cosim(w, 2);
    close_file(w);

    hymo_error err;
    hymo_error_clear(&err);
    hymo_reference *r = NULL;
    if (hymo_ref_read(path, &r, &err) != HYMO_OK) fail_msg("read: %s", err.message);
    assert_int_equal(r->n, FILE_ROWS);
    assert_int_equal(r->complete, 1);
    assert_int_equal(r->has_cosim, 1);
    assert_int_equal(r->n_bonds, 2);
    assert_string_equal(r->cosim_scheme, "jacobi");
    assert_string_equal(r->cosim_coupling, "velocity-force");
    assert_string_equal(r->cosim_extrapolation, "quadratic");
    assert_string_equal(r->cosim_hyd_integrator, "bdf2");
    assert_string_equal(r->cosim_mech_integrator, "trapezoidal");
    assert_string_equal(r->cosim_status, "stable");
    assert_string_equal(r->cosim_status_reason, "reached t_end");
    assert_true(r->cosim_H == 1e-3);
    assert_true(r->cosim_h_m == 5e-4);
    assert_true(r->cosim_h_h == 1e-4);
    assert_non_null(r->residual_power);
    assert_non_null(r->residual_energy);
    assert_non_null(r->residual_energy_total);
    for (int i = 0; i < FILE_ROWS; i++) {
        for (int b = 0; b < 2; b++) {
            assert_true(r->residual_power[i * 2 + b] == 0.5 * (b + 1) * i);
            assert_true(r->residual_energy[i * 2 + b] == 1e-3 * (b + 1) * i);
        }
        assert_true(r->residual_energy_total[i] == 1e-3 * i + 2e-3 * i);
    }
    assert_true(r->cosim_residual_energy_final == r->residual_energy_total[FILE_ROWS - 1]);
    assert_non_null(r->bond_names);
    assert_string_equal(r->bond_names[0], "cyl1.velocity-force");
    assert_string_equal(r->bond_names[1], "cyl2.velocity-force");
    /* the standard datasets are untouched */
    assert_true(r->p[3 * NP + 1] == lin(4, 1, 3e-3));

    /* compare: a file against itself; residual energy of the run's curve */
    hymo_compare_result res = compare_ok(r, r);
    assert_int_equal(res.has_residual_energy, 1);
    assert_close(res.residual_energy_final, 0.018, 1e-15);
    assert_close(res.residual_energy_max_abs, 0.018, 1e-15);
    assert_true(res.residual_energy_rms_diff == 0.0);
    hymo_ref_free(r);

    /* n_bonds absent: taken from the datasets */
    w = open_file(path);
    put_cosim(w, -1);
    close_file(w);
    if (hymo_ref_read(path, &r, &err) != HYMO_OK) fail_msg("read: %s", err.message);
    assert_int_equal(r->n_bonds, 2);
    hymo_ref_free(r);
    remove(path);
}

/* hymo_cli_compare on a co-simulation file: --max-residual-energy checks
 * max |residual_energy_total| of RUN (0.018 J here). */
static void test_cli_residual_energy(void **state)
{
    (void)state;
    char path[] = "test_compare_cli.h5";
    hymo_ref_writer *w = open_file(path);
    put_cosim(w, 2);
    close_file(w);
    char cmd[] = "compare", opt[] = "--max-residual-energy", rms[] = "--max-rms", s_lim[] = "s=1e-9";
    char pass[] = "0.02", tight[] = "0.01", bad[] = "0";
    char *argv_pass[] = {cmd, path, path, opt, pass, rms, s_lim};
    assert_int_equal(hymo_cli_compare(7, argv_pass), 0);
    char *argv_fail[] = {cmd, path, path, opt, tight};
    assert_int_equal(hymo_cli_compare(5, argv_fail), 1);
    char *argv_bad[] = {cmd, path, path, opt, bad};
    assert_int_equal(hymo_cli_compare(5, argv_bad), 2);
    remove(path);
}

static void test_no_cosim(void **state)
{
    (void)state;
    const char *path = "test_compare_plain.h5";
    close_file(open_file(path));
    hymo_error err;
    hymo_reference *r = NULL;
    if (hymo_ref_read(path, &r, &err) != HYMO_OK) fail_msg("read: %s", err.message);
    assert_int_equal(r->has_cosim, 0);
    assert_int_equal(r->n_bonds, 0);
    assert_null(r->residual_power);
    assert_null(r->residual_energy);
    assert_null(r->residual_energy_total);
    assert_null(r->bond_names);
    hymo_ref_free(r);
    remove(path);
}

static void expect_read_error(const char *path, const char *needle)
{
    hymo_error err;
    hymo_error_clear(&err);
    hymo_reference *r = NULL;
    assert_int_equal(hymo_ref_read(path, &r, &err), HYMO_ERR_HDF5);
    assert_null(r);
    if (!strstr(err.message, needle)) fail_msg("message '%s' lacks '%s'", err.message, needle);
    if (!strstr(err.message, path)) fail_msg("message '%s' does not name the file", err.message);
}

static void test_cosim_malformed(void **state)
{
    (void)state;
    const char *path = "test_compare_bad.h5";
    hymo_error err;
    hymo_error_clear(&err);
    double data[2 * FILE_ROWS] = {0};

    /* total curve with the wrong row count */
    hymo_ref_writer *w = open_file(path);
    put_ok(hymo_ref_writer_put_matrix(w, "cosim/residual_power", FILE_ROWS, 1, data, "W", NULL, &err), &err);
    put_ok(hymo_ref_writer_put_matrix(w, "cosim/residual_energy", FILE_ROWS, 1, data, "J", NULL, &err), &err);
    put_ok(hymo_ref_writer_put_matrix(w, "cosim/residual_energy_total", FILE_ROWS - 1, 0, data, "J", NULL, &err), &err);
    close_file(w);
    expect_read_error(path, "'/cosim/residual_energy_total' has 6 rows");

    /* n_bonds disagrees with the matrices */
    w = open_file(path);
    put_ok(hymo_ref_writer_put_attr_int(w, "cosim", "n_bonds", 2, &err), &err);
    put_ok(hymo_ref_writer_put_matrix(w, "cosim/residual_power", FILE_ROWS, 1, data, "W", NULL, &err), &err);
    close_file(w);
    expect_read_error(path, "dataset '/cosim/residual_power' has 1 columns, expected 2");

    /* a missing dataset */
    w = open_file(path);
    put_ok(hymo_ref_writer_put_attr_str(w, "cosim", "scheme", "jacobi", &err), &err);
    close_file(w);
    expect_read_error(path, "missing dataset '/cosim/residual_power'");

    /* an attribute of the wrong type */
    w = open_file(path);
    put_ok(hymo_ref_writer_put_attr_double(w, "cosim", "scheme", 1.0, &err), &err);
    close_file(w);
    expect_read_error(path, "attribute 'scheme' of '/cosim' is not a string");

    /* /cosim is a dataset, not a group */
    w = open_file(path);
    put_ok(hymo_ref_writer_put_matrix(w, "cosim", FILE_ROWS, 0, data, "1", NULL, &err), &err);
    close_file(w);
    expect_read_error(path, "'/cosim' is not a group");
    remove(path);
}

static void test_put_errors(void **state)
{
    (void)state;
    const char *path = "test_compare_put.h5";
    hymo_ref_writer *w = open_file(path);
    hymo_error err;
    hymo_error_clear(&err);
    double data[4] = {1, 2, 3, 4};
    const char *const names_with_null[2] = {"a", NULL};
    /* the standard layout cannot be overwritten */
    assert_int_equal(hymo_ref_writer_put_matrix(w, "states/z", 2, 2, data, "m", NULL, &err),
                     HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "'/states/z' already exists"));
    assert_int_equal(hymo_ref_writer_put_matrix(w, "x/y", 2, 2, NULL, "m", NULL, &err),
                     HYMO_ERR_ARGUMENT);
    assert_int_equal(hymo_ref_writer_put_matrix(w, "x/y", -1, 2, data, "m", NULL, &err),
                     HYMO_ERR_ARGUMENT);
    assert_int_equal(hymo_ref_writer_put_matrix(w, "x/y", 2, 2, data, NULL, NULL, &err),
                     HYMO_ERR_ARGUMENT);
    assert_int_equal(hymo_ref_writer_put_matrix(w, "x//y", 2, 2, data, "m", NULL, &err),
                     HYMO_ERR_ARGUMENT);
    assert_int_equal(hymo_ref_writer_put_matrix(w, "", 2, 2, data, "m", NULL, &err),
                     HYMO_ERR_ARGUMENT);
    assert_int_equal(hymo_ref_writer_put_matrix(w, "x/y", 2, 2, data, "m", names_with_null, &err),
                     HYMO_ERR_ARGUMENT);
    /* a dataset under an existing dataset */
    assert_int_equal(hymo_ref_writer_put_matrix(w, "time/x", 2, 2, data, "m", NULL, &err),
                     HYMO_ERR_HDF5);
    assert_int_equal(hymo_ref_writer_put_attr_str(w, "/", "complete", "x", &err),
                     HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "root"));
    assert_int_equal(hymo_ref_writer_put_attr_int(w, "", "x", 1, &err), HYMO_ERR_ARGUMENT);
    assert_int_equal(hymo_ref_writer_put_attr_str(w, "cosim", "x", NULL, &err),
                     HYMO_ERR_ARGUMENT);
    assert_int_equal(hymo_ref_writer_put_attr_str(w, "cosim", "", "v", &err), HYMO_ERR_ARGUMENT);
    /* 0-row matrices are fine; an attribute may be replaced */
    put_ok(hymo_ref_writer_put_matrix(w, "extra/empty", 0, 3, NULL, "1", NULL, &err), &err);
    put_ok(hymo_ref_writer_put_attr_int(w, "extra", "k", 1, &err), &err);
    put_ok(hymo_ref_writer_put_attr_int(w, "extra", "k", 2, &err), &err);
    /* the file still closes and reads (no /cosim) */
    close_file(w);
    hymo_reference *r = NULL;
    if (hymo_ref_read(path, &r, &err) != HYMO_OK) fail_msg("read: %s", err.message);
    assert_int_equal(r->has_cosim, 0);
    hymo_ref_free(r);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signal_names),    cmocka_unit_test(test_identical),
        cmocka_unit_test(test_constant_offset), cmocka_unit_test(test_interpolation_exact),
        cmocka_unit_test(test_repeated_times),  cmocka_unit_test(test_nonfinite),
        cmocka_unit_test(test_errors),          cmocka_unit_test(test_no_components),
        cmocka_unit_test(test_residual_energy), cmocka_unit_test(test_cosim_roundtrip),
        cmocka_unit_test(test_no_cosim),        cmocka_unit_test(test_cosim_malformed),
        cmocka_unit_test(test_put_errors),      cmocka_unit_test(test_cli_residual_energy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
