/* Tests of the HDF5 reference file writer, reader and summary printer. */
#define _POSIX_C_SOURCE 200809L

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_hdf5.h"

#include "hymo/reference.h"
#include "signals.h"
#include "test_util.h"

/* ------------------------------------------------------------------ */
/* Synthetic data                                                      */

typedef char name_t[HYMO_REF_TEXT_MAX];

static const name_t z_names[] = {"z1", "z2", "slider"};
static const name_t z_units[] = {"rad", "rad", "m"};
static const name_t p_names[] = {"p_a", "p_b"};
static const name_t u_names[] = {"U_valve"};
static const name_t act_names[] = {"cyl1", "cyl2"};
static const name_t cut_names[] = {"cut_C"};

static hymo_ref_dims full_dims(void)
{
    hymo_ref_dims d = {3, 2, 1, 2, 1, z_names, z_units, p_names, u_names, act_names, cut_names, 0, NULL};
    return d;
}

/* np = 0, ncut = 0: names NULL for those. */
static hymo_ref_dims open_loop_dims(void)
{
    hymo_ref_dims d = {3, 0, 1, 2, 0, z_names, z_units, NULL, u_names, act_names, NULL, 0, NULL};
    return d;
}

static char *long_source(void)
{
    /* > 64 KiB: larger than a compact attribute can hold */
    size_t n = 100000;
    char *s = malloc(n + 1);
    for (size_t i = 0; i < n; i++) s[i] = (i % 61 == 60) ? '\n' : (char)('a' + i % 26);
    s[n] = '\0';
    return s;
}

static hymo_ref_header make_header(const char *source)
{
    hymo_ref_header h = {
        .model_name = "fourbar",
        .model_source = source,
        .model_sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        .formulation = "double-step",
        .integrator = "trapezoidal-newton",
        .jacobian = "numeric",
        .linear_solver = "dense",
        .dt = 1e-3,
        .t_end = 10.0,
        .tol_position = 1e-10,
        .tol_pressure = 1e-2,
        .tol_spool = 1e-8,
        .max_iter = 20,
        .penalty_alpha = 0.0,
    };
    return h;
}

/* Value of dataset `ds`, global row `row`, column `col`. */
static double val(int ds, long row, int col)
{
    return ds * 1e4 + row * 0.5 + col / 7.0 + 1e-3 * (double)(row % 13);
}

typedef struct {
    double *time, *z, *zd, *zdd, *p, *u, *s, *sd, *force, *work, *kinetic, *potential, *drift,
        *c_pos, *c_vel, *c_acc, *residual;
    int *iterations;
} block_store;

static double *fill(int ds, long row0, int n, int cols)
{
    double *m = malloc(sizeof(double) * (size_t)(n * (cols > 0 ? cols : 1)));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < cols; j++) m[i * cols + j] = val(ds, row0 + i, j);
    return m;
}

static hymo_ref_block make_block(block_store *b, const hymo_ref_dims *d, long row0, int n)
{
    b->time = fill(0, row0, n, 1);
    b->z = fill(1, row0, n, d->nz);
    b->zd = fill(2, row0, n, d->nz);
    b->zdd = fill(3, row0, n, d->nz);
    b->p = d->np ? fill(4, row0, n, d->np) : NULL;
    b->u = fill(5, row0, n, d->nu);
    b->s = fill(6, row0, n, d->na);
    b->sd = fill(7, row0, n, d->na);
    b->force = fill(8, row0, n, d->na);
    b->work = fill(9, row0, n, d->na);
    b->kinetic = fill(10, row0, n, 1);
    b->potential = fill(11, row0, n, 1);
    b->drift = fill(12, row0, n, 1);
    b->c_pos = d->ncut ? fill(13, row0, n, d->ncut) : NULL;
    b->c_vel = d->ncut ? fill(14, row0, n, d->ncut) : NULL;
    b->c_acc = d->ncut ? fill(15, row0, n, d->ncut) : NULL;
    b->residual = fill(17, row0, n, 1);
    b->iterations = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) b->iterations[i] = (int)((row0 + i) % 5);
    hymo_ref_block blk = {n,          b->time,  b->z,     b->zd,      b->zdd,       b->p,
                          b->u,       b->s,     b->sd,    b->force,   b->work,      b->kinetic,
                          b->potential, b->drift, b->c_pos, b->c_vel, b->c_acc, b->iterations,
                          b->residual, NULL};
    return blk;
}

static void free_block(block_store *b)
{
    double **all[] = {&b->time,   &b->z,       &b->zd,     &b->zdd,   &b->p,     &b->u,
                      &b->s,      &b->sd,      &b->force,  &b->work,  &b->kinetic,
                      &b->potential, &b->drift, &b->c_pos, &b->c_vel, &b->c_acc, &b->residual};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(*all[i]);
    free(b->iterations);
}

static hymo_run_summary make_summary(int complete)
{
    hymo_run_summary s;
    memset(&s, 0, sizeof s);
    strcpy(s.model_name, "fourbar");
    strcpy(s.formulation, "double-step");
    strcpy(s.jacobian, "numeric");
    strcpy(s.linear_solver, "dense");
    s.dt = 1e-3;
    s.t_end = 10.0;
    s.t_reached = complete ? 10.0 : 4.2;
    s.n_steps = complete ? 10000 : 4200;
    s.complete = complete;
    s.peak_drift = 0.8412;
    s.max_work = 1869.6;
    s.relative_drift = 0.8412 / 1869.6;
    s.max_constraint_position = 1.2e-12;
    s.max_constraint_velocity = 3.4e-11;
    s.max_constraint_acceleration = 5.6e-9;
    s.mean_iterations = 1.39;
    s.max_iterations = 3;
    s.jacobian_evaluations = 13900;
    strcpy(s.independent, "z3 (t<4.2), z1");
    s.n_reselections = 1;
    s.wall_time = 0.0213;
    return s;
}

static int file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* The writer's temporary files of `path`: "PATH.XXXXXX.partial" (a name
 * of its own per writer).  partial_name gives the glob pattern; the first
 * match (or "" if none) goes to buf via find_partial. */
static void partial_name(const char *path, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s.??????.partial", path);
}

static int find_partial(const char *pattern, char *buf, size_t cap)
{
    glob_t g;
    int n = 0;
    buf[0] = '\0';
    if (glob(pattern, 0, NULL, &g) == 0) {
        n = (int)g.gl_pathc;
        if (n > 0) snprintf(buf, cap, "%s", g.gl_pathv[0]);
        globfree(&g);
    }
    return n;
}

/* Whether a file matching the pattern exists (file_exists for a pattern). */
static int partial_exists(const char *pattern)
{
    char buf[256];
    return find_partial(pattern, buf, sizeof buf) > 0;
}

/* Writes blocks of the given sizes; closes with summary (NULL: discard). */
static void write_file(const char *path, const hymo_ref_dims *d, const int *sizes, int nblocks,
                       const hymo_run_summary *summary, const char *source)
{
    hymo_error err;
    hymo_error_clear(&err);
    hymo_ref_header h = make_header(source);
    hymo_ref_writer *w = NULL;
    remove(path);
    if (hymo_ref_writer_open(&w, path, &h, d, &err) != HYMO_OK) fail_msg("open: %s", err.message);
    long row = 0;
    for (int k = 0; k < nblocks; k++) {
        block_store b;
        hymo_ref_block blk = make_block(&b, d, row, sizes[k]);
        if (hymo_ref_writer_append(w, &blk, &err) != HYMO_OK) fail_msg("append: %s", err.message);
        free_block(&b);
        row += sizes[k];
    }
    if (summary) {
        if (hymo_ref_writer_close(w, summary, &err) != HYMO_OK) fail_msg("close: %s", err.message);
    } else {
        hymo_ref_writer_discard(w);
    }
}

/* A file of full_dims() with one block of n rows and make_summary(complete). */
static void write_one_block(const char *path, int n, int complete, const char *source)
{
    hymo_ref_dims d = full_dims();
    hymo_run_summary s = make_summary(complete);
    write_file(path, &d, &n, 1, &s, source);
}

/* Sets every signal dataset of the file to n rows (without the data). */
static void set_rows(const char *path, hsize_t n)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
        hid_t ds = H5Dopen2(f, hymo_ref_signals[i].path, H5P_DEFAULT);
        hsize_t dims[2];
        hid_t sp = H5Dget_space(ds);
        H5Sget_simple_extent_dims(sp, dims, NULL);
        H5Sclose(sp);
        dims[0] = n;
        assert_true(H5Dset_extent(ds, dims) >= 0);
        H5Dclose(ds);
    }
    H5Fclose(f);
}

static void check_matrix(const double *m, int ds, int n, int cols)
{
    assert_non_null(m);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < cols; j++) {
            if (m[i * cols + j] != val(ds, i, j)) {
                fail_msg("dataset %d row %d col %d: %.17g != %.17g", ds, i, j, m[i * cols + j],
                         val(ds, i, j));
            }
        }
}

static void check_names(char (*got)[HYMO_REF_TEXT_MAX], const name_t *want, int n)
{
    assert_non_null(got);
    for (int i = 0; i < n; i++) assert_string_equal(got[i], want[i]);
}

static void check_data(const hymo_reference *r, const hymo_ref_dims *d, int n)
{
    assert_int_equal(r->n, n);
    assert_int_equal(r->nz, d->nz);
    assert_int_equal(r->np, d->np);
    assert_int_equal(r->nu, d->nu);
    assert_int_equal(r->na, d->na);
    assert_int_equal(r->ncut, d->ncut);
    check_matrix(r->time, 0, n, 1);
    check_matrix(r->z, 1, n, d->nz);
    check_matrix(r->zd, 2, n, d->nz);
    check_matrix(r->zdd, 3, n, d->nz);
    check_matrix(r->p, 4, n, d->np);
    check_matrix(r->u, 5, n, d->nu);
    check_matrix(r->s, 6, n, d->na);
    check_matrix(r->sd, 7, n, d->na);
    check_matrix(r->force, 8, n, d->na);
    check_matrix(r->work, 9, n, d->na);
    check_matrix(r->kinetic, 10, n, 1);
    check_matrix(r->potential, 11, n, 1);
    check_matrix(r->drift, 12, n, 1);
    check_matrix(r->c_pos, 13, n, d->ncut);
    check_matrix(r->c_vel, 14, n, d->ncut);
    check_matrix(r->c_acc, 15, n, d->ncut);
    check_matrix(r->residual, 17, n, 1);
    assert_non_null(r->iterations);
    for (int i = 0; i < n; i++) assert_int_equal(r->iterations[i], i % 5);
    check_names(r->z_names, d->z_names, d->nz);
    check_names(r->z_units, d->z_units, d->nz);
    check_names(r->p_names, d->p_names, d->np);
    check_names(r->u_names, d->u_names, d->nu);
    check_names(r->actuator_names, d->actuator_names, d->na);
    check_names(r->cut_names, d->cut_names, d->ncut);
}

static void check_summary(const hymo_run_summary *got, const hymo_run_summary *want)
{
    assert_string_equal(got->model_name, want->model_name);
    assert_string_equal(got->formulation, want->formulation);
    assert_string_equal(got->jacobian, want->jacobian);
    assert_string_equal(got->linear_solver, want->linear_solver);
    assert_string_equal(got->integrator, "trapezoidal-newton");
    assert_true(got->dt == want->dt);
    assert_true(got->t_end == want->t_end);
    assert_true(got->t_reached == want->t_reached);
    assert_int_equal(got->n_steps, want->n_steps);
    assert_int_equal(got->complete, want->complete);
    assert_true(got->peak_drift == want->peak_drift);
    assert_true(got->max_work == want->max_work);
    assert_true(got->relative_drift == want->relative_drift);
    assert_true(got->max_constraint_position == want->max_constraint_position);
    assert_true(got->max_constraint_velocity == want->max_constraint_velocity);
    assert_true(got->max_constraint_acceleration == want->max_constraint_acceleration);
    assert_true(got->mean_iterations == want->mean_iterations);
    assert_int_equal(got->max_iterations, want->max_iterations);
    assert_int_equal(got->jacobian_evaluations, want->jacobian_evaluations);
    assert_string_equal(got->independent, want->independent);
    assert_int_equal(got->n_reselections, want->n_reselections);
    assert_true(got->wall_time == want->wall_time);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */

#define ROUNDTRIP_FILE "test_reference_roundtrip.h5"

static void test_roundtrip(void **state)
{
    (void)state;
    const char *path = ROUNDTRIP_FILE;
    char partial[256];
    partial_name(path, partial, sizeof partial);
    hymo_ref_dims d = full_dims();
    /* crosses the 1024-row chunk boundary; includes a 1-row and a 0-row block */
    const int sizes[] = {700, 1000, 0, 1, 302};
    hymo_run_summary s = make_summary(1);
    char *source = long_source();
    write_file(path, &d, sizes, 5, &s, source);
    assert_true(file_exists(path));
    assert_false(partial_exists(partial));

    hymo_reference *r = test_read_ref(path);
    assert_int_equal(r->format_version, HYMO_REF_FORMAT_VERSION);
    assert_int_equal(r->complete, 1);
    assert_int_equal(r->has_summary, 1);
    assert_string_equal(r->model_name, "fourbar");
    assert_string_equal(r->model_sha256,
                        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    assert_string_equal(r->formulation, "double-step");
    assert_string_equal(r->integrator, "trapezoidal-newton");
    assert_string_equal(r->jacobian, "numeric");
    assert_string_equal(r->linear_solver, "dense");
    assert_string_equal(r->model_source, source);
    assert_true(strlen(r->hymo_version) > 0);
    assert_int_equal(strlen(r->created_utc), 20); /* YYYY-MM-DDTHH:MM:SSZ */
    assert_true(r->dt == 1e-3);
    assert_true(r->t_end == 10.0);
    assert_true(r->tol_position == 1e-10);
    assert_true(r->tol_pressure == 1e-2);
    assert_true(r->tol_spool == 1e-8);
    assert_int_equal(r->max_iter, 20);
    assert_true(r->penalty_alpha == 0.0);
    check_data(r, &d, 2003);
    check_summary(&r->summary, &s);
    hymo_ref_free(r);
    free(source);
}

static void test_discard(void **state)
{
    (void)state;
    const char *path = "test_reference_discard.h5";
    char partial[256];
    partial_name(path, partial, sizeof partial);
    hymo_ref_dims d = full_dims();
    const int sizes[] = {10, 20};
    write_file(path, &d, sizes, 2, NULL, "model text");
    assert_false(file_exists(path));
    assert_false(partial_exists(partial));
}

static void test_incomplete_close(void **state)
{
    (void)state;
    const char *path = "test_reference_incomplete.h5";
    char partial[256];
    partial_name(path, partial, sizeof partial);
    hymo_ref_dims d = full_dims();
    const int sizes[] = {42};
    hymo_run_summary s = make_summary(0);
    write_file(path, &d, sizes, 1, &s, "model text");
    assert_true(file_exists(path));
    assert_false(partial_exists(partial));
    hymo_reference *r = test_read_ref(path);
    assert_int_equal(r->complete, 0);
    assert_int_equal(r->summary.complete, 0);
    assert_int_equal(r->has_summary, 1);
    check_data(r, &d, 42);
    check_summary(&r->summary, &s);
    hymo_ref_free(r);
    remove(path);
}

/* A run killed after some appends leaves a readable .partial, complete = 0,
 * whose summary is recomputed from the data.  Rows are written a whole
 * chunk (1024 rows here) at a time, by the writer's thread as soon as a
 * chunk is staged: of 1030 rows appended, the 1024 written before the kill
 * are kept (the writer lives until the file shows them, then SIGKILL). */
static void test_killed_run(void **state)
{
    (void)state;
    const char *path = "test_reference_killed.h5";
    char partial[256];
    partial_name(path, partial, sizeof partial);
    char found[256];
    while (find_partial(partial, found, sizeof found) > 0) remove(found);
    hymo_ref_dims d = full_dims();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        hymo_error err;
        hymo_ref_header h = make_header("model text");
        hymo_ref_writer *w = NULL;
        if (hymo_ref_writer_open(&w, path, &h, &d, &err) != HYMO_OK) _exit(2);
        block_store b;
        hymo_ref_block blk = make_block(&b, &d, 0, 1030);
        if (hymo_ref_writer_append(w, &blk, &err) != HYMO_OK) _exit(3);
        for (;;) pause(); /* no close: killed */
    }
    int rows = -1;
    for (int tries = 0; tries < 1000 && rows < 1024; ++tries) { /* at most about 10 s */
        hymo_reference *r = NULL;
        hymo_error err;
        if (find_partial(partial, found, sizeof found) > 0 && hymo_ref_read(found, &r, &err) == HYMO_OK) {
            rows = r->n;
            hymo_ref_free(r);
        }
        if (rows < 1024) nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    kill(pid, SIGKILL);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(rows, 1024);
    assert_false(file_exists(path));
    assert_int_equal(find_partial(partial, found, sizeof found), 1);

    hymo_reference *r = test_read_ref(found);
    assert_int_equal(r->complete, 0);
    assert_int_equal(r->has_summary, 0);
    check_data(r, &d, 1024);
    assert_true(r->summary.t_reached == val(0, 1023, 0));
    assert_int_equal(r->summary.n_steps, -1);
    assert_true(r->summary.peak_drift == val(12, 1023, 0));
    assert_int_equal(r->summary.max_iterations, 4);
    assert_string_equal(r->summary.model_name, "fourbar");
    hymo_ref_free(r);
    remove(found);
}

static void test_open_loop_dims(void **state)
{
    (void)state;
    const char *path = "test_reference_openloop.h5";
    hymo_ref_dims d = open_loop_dims();
    const int sizes[] = {5, 1100};
    hymo_run_summary s = make_summary(1);
    write_file(path, &d, sizes, 2, &s, "");
    hymo_reference *r = test_read_ref(path);
    assert_int_equal(r->np, 0);
    assert_int_equal(r->ncut, 0);
    assert_string_equal(r->model_source, "");
    check_data(r, &d, 1105);
    check_summary(&r->summary, &s);
    hymo_ref_free(r);

    /* a file with no rows at all */
    write_file(path, &d, NULL, 0, &s, "x");
    r = test_read_ref(path);
    assert_int_equal(r->n, 0);
    assert_int_equal(r->nz, 3);
    assert_int_equal(r->np, 0);
    hymo_ref_free(r);
    remove(path);
}

static void expect_read_error(const char *path, hymo_status code, const char *needle)
{
    hymo_error err;
    hymo_error_clear(&err);
    hymo_reference *r = (hymo_reference *)&err; /* must be reset to NULL */
    assert_int_equal(hymo_ref_read(path, &r, &err), code);
    assert_null(r);
    assert_int_equal(err.code, code);
    print_message("expected error: %s\n", err.message);
    if (!strstr(err.message, path)) fail_msg("message lacks the path: %s", err.message);
    if (needle && !strstr(err.message, needle)) {
        fail_msg("message lacks '%s': %s", needle, err.message);
    }
}

static void test_read_errors(void **state)
{
    (void)state;
    expect_read_error("test_reference_does_not_exist.h5", HYMO_ERR_IO, NULL);

    const char *text = "test_reference_text.h5";
    FILE *f = fopen(text, "w");
    assert_non_null(f);
    fputs("this is not an HDF5 file\n", f);
    fclose(f);
    expect_read_error(text, HYMO_ERR_HDF5, "not an HDF5 file");
    remove(text);

    const char *empty = "test_reference_empty.h5";
    hid_t h = H5Fcreate(empty, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(h >= 0);
    H5Fclose(h);
    expect_read_error(empty, HYMO_ERR_HDF5, "format_version");
    remove(empty);

    /* Valid files, then damaged with the raw API. */
    const char *path = "test_reference_damaged.h5";
    hymo_ref_dims d = full_dims();
    const int sizes[] = {12};
    hymo_run_summary s = make_summary(1);
    struct {
        const char *what;
        const char *needle;
    } cases[] = {
        {"delete /time", "'/time'"},
        {"delete /constraints", "'/constraints/position'"},
        {"delete model_sha256", "model_sha256"},
        {"delete max_work", "max_work"},
        {"format_version 99", "format_version 99"},
        {"shrink drift", "inconsistent row counts: '/energy/drift'"},
        {"delete names", "names"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        write_file(path, &d, sizes, 1, &s, "m");
        hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
        assert_true(file >= 0);
        switch (c) {
        case 0: assert_true(H5Ldelete(file, "/time", H5P_DEFAULT) >= 0); break;
        case 1: assert_true(H5Ldelete(file, "/constraints", H5P_DEFAULT) >= 0); break;
        case 2: assert_true(H5Adelete(file, "model_sha256") >= 0); break;
        case 3:
            assert_true(H5Adelete_by_name(file, "/energy", "max_work", H5P_DEFAULT) >= 0);
            break;
        case 4: {
            hid_t a = H5Aopen(file, "format_version", H5P_DEFAULT);
            int v = 99;
            assert_true(H5Awrite(a, H5T_NATIVE_INT, &v) >= 0);
            H5Aclose(a);
            break;
        }
        case 5: {
            hid_t ds = H5Dopen2(file, "/energy/drift", H5P_DEFAULT);
            hsize_t n = 11;
            assert_true(H5Dset_extent(ds, &n) >= 0);
            H5Dclose(ds);
            break;
        }
        case 6:
            assert_true(H5Adelete_by_name(file, "/actuators/s", "names", H5P_DEFAULT) >= 0);
            break;
        }
        H5Fclose(file);
        expect_read_error(path, HYMO_ERR_HDF5, cases[c].needle);
    }
    remove(path);
}

static void test_writer_errors(void **state)
{
    (void)state;
    hymo_error err;
    hymo_error_clear(&err);
    hymo_ref_dims d = full_dims();
    hymo_ref_header h = make_header("m");
    hymo_ref_writer *w = NULL;
    const char *bad = "no_such_directory_hymo/out.h5";
    assert_int_equal(hymo_ref_writer_open(&w, bad, &h, &d, &err), HYMO_ERR_IO);
    assert_null(w);
    assert_non_null(strstr(err.message, bad));

    /* names missing for a non-empty dimension */
    hymo_ref_dims d2 = d;
    d2.p_names = NULL;
    assert_int_equal(hymo_ref_writer_open(&w, "test_reference_bad.h5", &h, &d2, &err),
                     HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "p_names"));
    assert_false(partial_exists("test_reference_bad.h5.??????.partial"));

    /* NULL data pointer: rejected, rows unchanged, file still usable */
    const char *path = "test_reference_nullblock.h5";
    assert_int_equal(hymo_ref_writer_open(&w, path, &h, &d, &err), HYMO_OK);
    block_store b;
    hymo_ref_block blk = make_block(&b, &d, 0, 8);
    assert_int_equal(hymo_ref_writer_append(w, &blk, &err), HYMO_OK);
    hymo_ref_block bad_blk = blk;
    bad_blk.force = NULL;
    assert_int_equal(hymo_ref_writer_append(w, &bad_blk, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "/actuators/force"));
    free_block(&b);
    hymo_run_summary s = make_summary(1);
    assert_int_equal(hymo_ref_writer_close(w, &s, &err), HYMO_OK);
    hymo_reference *r = test_read_ref(path);
    check_data(r, &d, 8);
    hymo_ref_free(r);
    remove(path);
}

typedef struct {
    int datasets;
    int missing;
    char first_missing[256];
} visit_data;

static herr_t visit_cb(hid_t obj, const char *name, const H5O_info_t *info, void *op_data)
{
    visit_data *v = op_data;
    if (info->type != H5O_TYPE_DATASET) return 0;
    v->datasets++;
    htri_t has = H5Aexists_by_name(obj, name, "units", H5P_DEFAULT);
    if (has <= 0) {
        if (!v->missing) snprintf(v->first_missing, sizeof v->first_missing, "%s", name);
        v->missing++;
    }
    return 0;
}

static void check_units_everywhere(const char *path)
{
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(file >= 0);
    visit_data v = {0, 0, ""};
    assert_true(H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit_cb, &v, H5O_INFO_BASIC) >=
                0);
    H5Fclose(file);
    assert_int_equal(v.datasets, HYMO_SIGNAL_COUNT);
    if (v.missing) fail_msg("%d datasets without units, e.g. %s", v.missing, v.first_missing);
}

static void test_units_attributes(void **state)
{
    (void)state;
    hymo_ref_dims d = full_dims();
    const int sizes[] = {3};
    hymo_run_summary s = make_summary(1);
    write_file("test_reference_units.h5", &d, sizes, 1, &s, "m");
    check_units_everywhere("test_reference_units.h5");
    remove("test_reference_units.h5");
    hymo_ref_dims d0 = open_loop_dims();
    write_file("test_reference_units.h5", &d0, sizes, 1, &s, "m");
    check_units_everywhere("test_reference_units.h5");
    remove("test_reference_units.h5");
}

static char *print_to_string(const hymo_run_summary *s)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    hymo_run_summary_print(f, s);
    long len = ftell(f);
    rewind(f);
    char *buf = calloc((size_t)len + 1, 1);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    return buf;
}

static void test_summary_print(void **state)
{
    (void)state;
    hymo_run_summary s = make_summary(1);
    strcpy(s.independent, "z3");
    s.n_reselections = 0;
    char *txt = print_to_string(&s);
    const char *want =
        "model        fourbar\n"
        "formulation  double-step | trapezoidal Newton-Raphson | jacobian numeric | solver dense\n"
        "time         0 .. 10 s, dt 0.001 s, 10000 steps, complete\n"
        "energy drift peak |D| 0.8412 J = 0.0450 % of max |W_act| 1869.6 J\n"
        "constraints  max |Phi| 1.2e-12, |Phi_z zd| 3.4e-11, |Phi_z zdd + dPhi_z zd| 5.6e-09\n"
        "iterations   mean 1.39, max 3, jacobian evaluations 13900\n"
        "independent  z3 (0 re-selections)\n"
        "wall time    0.0213 s\n";
    assert_string_equal(txt, want);
    free(txt);

    s = make_summary(0);
    txt = print_to_string(&s);
    assert_non_null(strstr(txt, "4200 steps, INCOMPLETE (stopped at t = 4.2 s)\n"));
    assert_non_null(strstr(txt, "z3 (t<4.2), z1 (1 re-selection)\n"));
    free(txt);

    s.max_work = 0.0;
    s.n_steps = -1;
    strcpy(s.integrator, "trapezoidal-newton");
    txt = print_to_string(&s);
    assert_non_null(strstr(txt, "(no actuator work)"));
    assert_non_null(strstr(txt, "| trapezoidal Newton-Raphson |"));
    assert_non_null(strstr(txt, "steps unknown"));
    assert_non_null(strstr(txt, "wall time    unknown\n"));
    free(txt);
}

/* ------------------------------------------------------------------ */
/* The table of per-step signals (reference/signals.c)                 */

static void test_signal_table(void **state)
{
    (void)state;
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
        const hymo_ref_signal *s = &hymo_ref_signals[i];
        assert_non_null(s->path);
        char want[128];
        if (s->group == HYMO_GROUP_ROOT) {
            snprintf(want, sizeof want, "/%s", hymo_ref_signal_name(s));
        } else {
            assert_true(s->group >= 0 && s->group < HYMO_GROUP_COUNT);
            snprintf(want, sizeof want, "/%s/%s", hymo_ref_groups[s->group],
                     hymo_ref_signal_name(s));
        }
        assert_string_equal(s->path, want);
        assert_true(s->cols >= HYMO_COLS_ONE && s->cols < HYMO_COLS_COUNT);
        /* one fixed string, or per-coordinate units of an [N x nz] signal */
        assert_non_null(s->units);
        if (s->unit_rule != HYMO_UNITS_FIXED) assert_int_equal(s->cols, HYMO_COLS_NZ);
        for (int j = 0; j < i; j++) {
            const hymo_ref_signal *o = &hymo_ref_signals[j];
            if (!strcmp(o->path, s->path)) fail_msg("path %s twice", s->path);
            if (o->block == s->block || o->ref == s->ref || o->rows == s->rows) {
                fail_msg("%s and %s share a data field", o->path, s->path);
            }
        }
    }
    /* the groups appear in creation order */
    int last = HYMO_GROUP_ROOT;
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
        assert_true(hymo_ref_signals[i].group >= last);
        last = hymo_ref_signals[i].group;
    }
}

/* The offsets of the table are the fields of the same name (checked
 * against the struct fields written out here, independently of the table). */
static void test_signal_table_fields(void **state)
{
    (void)state;
    static double cell[HYMO_SIGNAL_COUNT];
    static int icell;
    double *d[HYMO_SIGNAL_COUNT];
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) d[i] = &cell[i];
    hymo_ref_block blk = {.time = d[HYMO_SIG_TIME], .z = d[HYMO_SIG_Z], .zd = d[HYMO_SIG_ZD],
        .zdd = d[HYMO_SIG_ZDD], .p = d[HYMO_SIG_P], .u = d[HYMO_SIG_U], .s = d[HYMO_SIG_S],
        .sd = d[HYMO_SIG_SD], .force = d[HYMO_SIG_FORCE], .work = d[HYMO_SIG_WORK],
        .kinetic = d[HYMO_SIG_KINETIC], .potential = d[HYMO_SIG_POTENTIAL],
        .drift = d[HYMO_SIG_DRIFT], .c_pos = d[HYMO_SIG_C_POS], .c_vel = d[HYMO_SIG_C_VEL],
        .c_acc = d[HYMO_SIG_C_ACC], .iterations = &icell, .residual = d[HYMO_SIG_RESIDUAL]};
    hymo_reference ref = {.time = d[HYMO_SIG_TIME], .z = d[HYMO_SIG_Z], .zd = d[HYMO_SIG_ZD],
        .zdd = d[HYMO_SIG_ZDD], .p = d[HYMO_SIG_P], .u = d[HYMO_SIG_U], .s = d[HYMO_SIG_S],
        .sd = d[HYMO_SIG_SD], .force = d[HYMO_SIG_FORCE], .work = d[HYMO_SIG_WORK],
        .kinetic = d[HYMO_SIG_KINETIC], .potential = d[HYMO_SIG_POTENTIAL],
        .drift = d[HYMO_SIG_DRIFT], .c_pos = d[HYMO_SIG_C_POS], .c_vel = d[HYMO_SIG_C_VEL],
        .c_acc = d[HYMO_SIG_C_ACC], .iterations = &icell, .residual = d[HYMO_SIG_RESIDUAL]};
    hymo_rows rows = {.time = d[HYMO_SIG_TIME], .z = d[HYMO_SIG_Z], .zd = d[HYMO_SIG_ZD],
        .zdd = d[HYMO_SIG_ZDD], .p = d[HYMO_SIG_P], .u = d[HYMO_SIG_U], .s = d[HYMO_SIG_S],
        .sd = d[HYMO_SIG_SD], .force = d[HYMO_SIG_FORCE], .work = d[HYMO_SIG_WORK],
        .kin = d[HYMO_SIG_KINETIC], .pot = d[HYMO_SIG_POTENTIAL], .drift = d[HYMO_SIG_DRIFT],
        .cpos = d[HYMO_SIG_C_POS], .cvel = d[HYMO_SIG_C_VEL], .cacc = d[HYMO_SIG_C_ACC],
        .iterations = &icell, .residual = d[HYMO_SIG_RESIDUAL]};
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
        const hymo_ref_signal *s = &hymo_ref_signals[i];
        const void *want = s->type == HYMO_SIG_I32 ? (const void *)&icell : (const void *)d[i];
        assert_int_equal(s->type == HYMO_SIG_I32, i == HYMO_SIG_ITERATIONS);
        assert_ptr_equal(hymo_ref_signal_block_get(s, &blk), want);
        assert_ptr_equal(hymo_ref_signal_get(s, &ref, s->ref), want);
        assert_ptr_equal(hymo_ref_signal_get(s, &rows, s->rows), want);
    }
    /* dimensions: counts and names */
    hymo_ref_dims dims = full_dims();
    int counts[HYMO_COLS_COUNT];
    hymo_ref_counts_dims(&dims, counts);
    const int want[HYMO_COLS_COUNT] = {1, dims.nz, dims.np, dims.nu, dims.na, dims.ncut};
    assert_memory_equal(counts, want, sizeof want);
    ref.nz = 3, ref.np = 2, ref.nu = 1, ref.na = 2, ref.ncut = 1;
    hymo_ref_counts_ref(&ref, counts);
    assert_memory_equal(counts, want, sizeof want);
    rows.nz = 3, rows.np = 2, rows.nu = 1, rows.na = 2, rows.ncut = 1;
    hymo_ref_counts_rows(&rows, counts);
    assert_memory_equal(counts, want, sizeof want);
    const void *names[HYMO_COLS_COUNT] = {NULL, dims.z_names, dims.p_names, dims.u_names,
                                          dims.actuator_names, dims.cut_names};
    for (int k = HYMO_COLS_ONE + 1; k < HYMO_COLS_COUNT; k++) {
        const char *at = (const char *)&dims + hymo_ref_dimensions[k].dims_names;
        assert_ptr_equal(*(const void *const *)(const void *)at, names[k]);
    }
}

/* A written file holds exactly the table's datasets, with its rank, type
 * and kind of units. */
static void test_signal_table_file(void **state)
{
    (void)state;
    const char *path = "test_reference_table.h5";
    write_one_block(path, 5, 1, "m");
    check_units_everywhere(path); /* HYMO_SIGNAL_COUNT datasets, each with units */
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(file >= 0);
    for (int i = 0; i < HYMO_SIGNAL_COUNT; i++) {
        const hymo_ref_signal *sg = &hymo_ref_signals[i];
        hid_t ds = H5Dopen2(file, sg->path, H5P_DEFAULT);
        if (ds < 0) fail_msg("no dataset %s", sg->path);
        hid_t sp = H5Dget_space(ds), t = H5Dget_type(ds);
        assert_int_equal(H5Sget_simple_extent_ndims(sp), sg->cols == HYMO_COLS_ONE ? 1 : 2);
        assert_true(H5Tequal(t, sg->type == HYMO_SIG_I32 ? H5T_STD_I32LE : H5T_IEEE_F64LE) > 0);
        hid_t a = H5Aopen(ds, "units", H5P_DEFAULT);
        hid_t asp = H5Aget_space(a);
        assert_int_equal(H5Sget_simple_extent_ndims(asp), sg->unit_rule == HYMO_UNITS_FIXED ? 0 : 1);
        assert_int_equal(H5Aexists(ds, "names") > 0, sg->cols != HYMO_COLS_ONE);
        H5Sclose(asp);
        H5Aclose(a);
        H5Tclose(t);
        H5Sclose(sp);
        H5Dclose(ds);
    }
    H5Fclose(file);
    remove(path);
}

/* docs/hdf5-format.md lists the same datasets, in table order, with the
 * same shapes and (fixed) units. */
static void test_signal_table_docs(void **state)
{
    (void)state;
    char doc[512];
    snprintf(doc, sizeof doc, "%s/../docs/hdf5-format.md", HYMO_TESTS_DIR);
    FILE *f = fopen(doc, "r");
    if (!f) fail_msg("cannot open %s", doc);
    static const char *const shape[HYMO_COLS_COUNT] = {"[N]", "[N × nz]", "[N × np]",
                                                       "[N × nu]", "[N × na]", "[N × ncut]"};
    char line[1024];
    int in_section = 0, i = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "### ", 4)) in_section = !strcmp(line, "### Datasets\n");
        if (!in_section || strncmp(line, "| `/", 4) != 0) continue;
        /* | `path` | shape | units ... | names | */
        char *col[4] = {NULL};
        char *p = line + 1;
        for (int c = 0; c < 4 && p; c++) {
            col[c] = p;
            p = strchr(p, '|');
            if (p) *p++ = '\0';
        }
        if (i >= HYMO_SIGNAL_COUNT) fail_msg("docs list more datasets than the table: %s", col[0]);
        const hymo_ref_signal *sg = &hymo_ref_signals[i++];
        char want[160];
        snprintf(want, sizeof want, "`%s`", sg->path);
        if (!strstr(col[0], want)) fail_msg("docs: '%s', table: %s", col[0], sg->path);
        if (!col[1] || !strstr(col[1], shape[sg->cols])) {
            fail_msg("docs: shape of %s is '%s', table: %s", sg->path, col[1], shape[sg->cols]);
        }
        if (!!strstr(col[1], "int32") != (sg->type == HYMO_SIG_I32)) {
            fail_msg("docs: type of %s ('%s')", sg->path, col[1]);
        }
        if (sg->unit_rule == HYMO_UNITS_FIXED) {
            snprintf(want, sizeof want, "`%s`", sg->units);
            if (!col[2] || !strstr(col[2], want)) {
                fail_msg("docs: units of %s are '%s', table: %s", sg->path, col[2], want);
            }
        }
    }
    fclose(f);
    assert_int_equal(i, HYMO_SIGNAL_COUNT);
}


/* ------------------------------------------------------------------ */
/* Files under faults and damage                                       */

/* Two writers of the same path at once: temporary files of their own; both
 * closes succeed and the later rename wins. */
static void test_concurrent_writers(void **state)
{
    (void)state;
    const char *path = "test_reference_concurrent.h5";
    remove(path);
    hymo_error err;
    hymo_ref_dims d = full_dims();
    hymo_ref_header h = make_header("m");
    hymo_ref_writer *a = NULL, *b = NULL;
    assert_int_equal(hymo_ref_writer_open(&a, path, &h, &d, &err), HYMO_OK);
    assert_int_equal(hymo_ref_writer_open(&b, path, &h, &d, &err), HYMO_OK);
    assert_string_not_equal(hymo_ref_writer_temp_path(a), hymo_ref_writer_temp_path(b));
    assert_true(file_exists(hymo_ref_writer_temp_path(a)));
    block_store sa, sb;
    hymo_ref_block ba = make_block(&sa, &d, 0, 30), bb = make_block(&sb, &d, 0, 50);
    assert_int_equal(hymo_ref_writer_append(a, &ba, &err), HYMO_OK);
    assert_int_equal(hymo_ref_writer_append(b, &bb, &err), HYMO_OK);
    free_block(&sa);
    free_block(&sb);
    hymo_run_summary s = make_summary(1);
    assert_int_equal(hymo_ref_writer_close(a, &s, &err), HYMO_OK);
    assert_int_equal(hymo_ref_writer_close(b, &s, &err), HYMO_OK);
    hymo_reference *r = test_read_ref(path);
    check_data(r, &d, 50); /* b closed last */
    hymo_ref_free(r);
    char pattern[256];
    partial_name(path, pattern, sizeof pattern);
    assert_false(partial_exists(pattern));
    remove(path);
}

/* A file-size limit (as a full disk): the writer fails with HYMO_ERR_IO,
 * removes its temporary file, leaves the old file at the final path alone,
 * and the process exits normally (HDF5 1.10 used to crash at exit after
 * the failed close).  In a child: setrlimit and the exit are its own. */
static void test_write_failure(void **state)
{
    (void)state;
    const char *path = "test_reference_full.h5";
    FILE *old = fopen(path, "w");
    assert_non_null(old);
    fputs("previous result\n", old);
    fclose(old);
    hymo_ref_dims d = full_dims();
    for (int limit_kb = 4; limit_kb <= 128; limit_kb *= 2) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            signal(SIGXFSZ, SIG_IGN);
            struct rlimit rl = {(rlim_t)limit_kb * 1024, (rlim_t)limit_kb * 1024};
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(10);
            hymo_error err;
            hymo_ref_header h = make_header("m");
            hymo_ref_writer *w = NULL;
            hymo_status st = hymo_ref_writer_open(&w, path, &h, &d, &err);
            for (int k = 0; st == HYMO_OK && k < 40; k++) {
                block_store b;
                hymo_ref_block blk = make_block(&b, &d, (long)k * 1000, 1000);
                st = hymo_ref_writer_append(w, &blk, &err);
                free_block(&b);
            }
            hymo_run_summary s = make_summary(1);
            if (w) {
                hymo_status cst = hymo_ref_writer_close(w, &s, &err);
                if (st == HYMO_OK) st = cst;
            }
            if (st != HYMO_ERR_IO && st != HYMO_ERR_HDF5) _exit(11);
            if (!strstr(err.message, path)) _exit(12);
            exit(0); /* through atexit: HDF5's shutdown */
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFEXITED(status)) fail_msg("limit %d KiB: the writer's process died of signal %d", limit_kb,
                                        WIFSIGNALED(status) ? WTERMSIG(status) : -1);
        if (WEXITSTATUS(status) != 0) fail_msg("limit %d KiB: child exit %d", limit_kb, WEXITSTATUS(status));
        /* the old file is untouched, no temporary file is left */
        old = fopen(path, "r");
        assert_non_null(old);
        char line[64] = "";
        assert_non_null(fgets(line, sizeof line, old));
        fclose(old);
        assert_string_equal(line, "previous result\n");
        char pattern[256];
        partial_name(path, pattern, sizeof pattern);
        assert_false(partial_exists(pattern));
    }
    remove(path);
}

/* hymo_ref_validate: a complete file whose rows, steps and times agree
 * passes; the same file cut to 10 rows (still complete = 1) does not. */
static void test_validate(void **state)
{
    (void)state;
    const char *path = "test_reference_validate.h5";
    hymo_ref_dims d = full_dims();
    const int n = 101;
    hymo_error err;
    hymo_ref_header h = make_header("m");
    h.dt = 0.5;
    h.t_end = val(0, n - 1, 0);
    h.output_every = 1;
    hymo_ref_writer *w = NULL;
    assert_int_equal(hymo_ref_writer_open(&w, path, &h, &d, &err), HYMO_OK);
    block_store b;
    hymo_ref_block blk = make_block(&b, &d, 0, n);
    assert_int_equal(hymo_ref_writer_append(w, &blk, &err), HYMO_OK);
    free_block(&b);
    hymo_run_summary s = make_summary(1);
    s.t_reached = h.t_end;
    s.n_steps = n - 1;
    assert_int_equal(hymo_ref_writer_close(w, &s, &err), HYMO_OK);
    hymo_reference *r = test_read_ref(path);
    assert_int_equal(r->output_every, 1);
    if (hymo_ref_validate(r, path, &err) != HYMO_OK) fail_msg("validate: %s", err.message);
    /* as written by output_every 3: 34 + 1 rows expected, 101 present */
    r->output_every = 3;
    assert_int_equal(hymo_ref_validate(r, path, &err), HYMO_ERR_HDF5);
    assert_non_null(strstr(err.message, "output_every"));
    hymo_ref_free(r);

    set_rows(path, 10);
    r = test_read_ref(path); /* readable, but not consistent */
    assert_int_equal(r->complete, 1);
    assert_int_equal(hymo_ref_validate(r, path, &err), HYMO_ERR_HDF5);
    print_message("expected error: %s\n", err.message);
    assert_non_null(strstr(err.message, "last row"));
    assert_non_null(strstr(err.message, path));
    hymo_ref_free(r);

    /* more rows than the file's own step count: refused before reading */
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t g = H5Gopen2(f, "/solver", H5P_DEFAULT);
    hid_t a = H5Aopen(g, "n_steps", H5P_DEFAULT);
    long long three = 3;
    assert_true(H5Awrite(a, H5T_NATIVE_LLONG, &three) >= 0);
    H5Aclose(a);
    H5Gclose(g);
    H5Fclose(f);
    expect_read_error(path, HYMO_ERR_HDF5, "n_steps = 3");
    remove(path);
}

/* A small file that declares 1e8 rows is refused without allocating them. */
static void test_declared_rows(void **state)
{
    (void)state;
    const char *path = "test_reference_rows.h5";
    write_one_block(path, 20, 0, "m");
    set_rows(path, 100000000);
    expect_read_error(path, HYMO_ERR_HDF5, "declares 100000000");
    remove(path);
}

/* The file format: latest (superblock >= 2, checksummed metadata) and
 * fixed-length string attributes (not in the unchecksummed global heap). */
static void test_file_format(void **state)
{
    (void)state;
    const char *path = "test_reference_format.h5";
    write_one_block(path, 5, 1, "model text");
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    H5F_info2_t info;
    assert_true(H5Fget_info2(f, &info) >= 0);
    assert_true(info.super.version >= 2);
    const char *attrs[] = {"model_name", "model_source", "model_sha256", "hymo_version"};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        hid_t a = H5Aopen(f, attrs[i], H5P_DEFAULT);
        hid_t t = H5Aget_type(a);
        assert_int_equal(H5Tget_class(t), H5T_STRING);
        assert_int_equal(H5Tis_variable_str(t), 0);
        H5Tclose(t);
        H5Aclose(a);
    }
    H5Fclose(f);
    remove(path);
}

static void test_output_path_check(void **state)
{
    (void)state;
    hymo_error err;
    const char *model = "test_reference_model.yaml";
    FILE *m = fopen(model, "w");
    assert_non_null(m);
    fputs("name: x\n", m);
    fclose(m);
    const char *inputs[] = {NULL, model};
    assert_int_equal(hymo_output_path_check("test_reference_new.h5", inputs, 2, &err), HYMO_OK);
    assert_int_equal(hymo_output_path_check(".", inputs, 2, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "directory"));
    assert_int_equal(hymo_output_path_check(model, inputs, 2, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "input file"));
    assert_int_equal(hymo_output_path_check("./test_reference_model.yaml", inputs, 2, &err), HYMO_ERR_ARGUMENT);
    assert_int_equal(hymo_output_path_check("", inputs, 2, &err), HYMO_ERR_ARGUMENT);
    /* several outputs: against each other too; new files by their
     * resolved names, existing ones by device and inode */
    const char *outs_ok[] = {"test_reference_a.h5", "test_reference_b.h5"};
    assert_int_equal(hymo_output_paths_check(outs_ok, 2, inputs, 2, &err), HYMO_OK);
    char cwd[4096], up[4200]; /* DIR/../BASE/NAME: NAME by another path */
    assert_non_null(getcwd(cwd, sizeof cwd));
    snprintf(up, sizeof up, "%s/../%s/test_reference_a.h5", cwd, strrchr(cwd, '/') + 1);
    const char *outs_same[] = {"test_reference_a.h5", up};
    assert_int_equal(hymo_output_paths_check(outs_same, 2, inputs, 2, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "same file"));
    remove("test_reference_link.h5");
    assert_int_equal(symlink(model, "test_reference_link.h5"), 0);
    const char *outs_link[] = {"test_reference_a.h5", "test_reference_link.h5"};
    assert_int_equal(hymo_output_paths_check(outs_link, 2, inputs, 2, &err), HYMO_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "input file"));
    remove("test_reference_link.h5");
    /* the writer refuses its model file and a directory before creating anything */
    hymo_ref_dims d = full_dims();
    hymo_ref_header h = make_header("m");
    h.model_path = model;
    hymo_ref_writer *w = NULL;
    assert_int_equal(hymo_ref_writer_open(&w, model, &h, &d, &err), HYMO_ERR_ARGUMENT);
    assert_null(w);
    assert_int_equal(hymo_ref_writer_open(&w, ".", &h, &d, &err), HYMO_ERR_ARGUMENT);
    m = fopen(model, "r");
    char line[32] = "";
    assert_non_null(fgets(line, sizeof line, m));
    fclose(m);
    assert_string_equal(line, "name: x\n");
    remove(model);
}

static void test_model_identity(void **state)
{
    (void)state;
    const char *a = "aaaa", *p = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const char *q = "f123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    assert_int_equal(hymo_model_identity(a, "", a, ""), HYMO_MODEL_SAME_TEXT);
    assert_int_equal(hymo_model_identity(a, p, "bbbb", p), HYMO_MODEL_SAME_PHYSICS);
    assert_int_equal(hymo_model_identity(a, p, "bbbb", q), HYMO_MODEL_DIFFERENT);
    assert_int_equal(hymo_model_identity(a, "", "bbbb", ""), HYMO_MODEL_DIFFERENT); /* old files: text only */
    assert_int_equal(hymo_model_identity(a, p, "bbbb", ""), HYMO_MODEL_DIFFERENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),        cmocka_unit_test(test_discard),
        cmocka_unit_test(test_incomplete_close), cmocka_unit_test(test_killed_run),
        cmocka_unit_test(test_open_loop_dims),   cmocka_unit_test(test_read_errors),
        cmocka_unit_test(test_writer_errors),    cmocka_unit_test(test_units_attributes),
        cmocka_unit_test(test_summary_print),    cmocka_unit_test(test_signal_table),
        cmocka_unit_test(test_signal_table_fields), cmocka_unit_test(test_signal_table_file),
        cmocka_unit_test(test_signal_table_docs),
        cmocka_unit_test(test_concurrent_writers), cmocka_unit_test(test_write_failure),
        cmocka_unit_test(test_validate),           cmocka_unit_test(test_declared_rows),
        cmocka_unit_test(test_file_format),        cmocka_unit_test(test_output_path_check),
        cmocka_unit_test(test_model_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
