/* The penalty formulation's sparse mechanical block (pb_mech_pattern):
 * - it is the pattern of M' + Phi_z^T Phi_z and the force sets, i.e. every
 *   pair of joints on one path, every pair of columns of a constraint row
 *   and every pair of a force set (built here by brute force), on the
 *   scissor lift (bench/gen_models.py scissor: loops hanging on each other,
 *   rows along paths of depth up to 2N), the two-cylinder lift, the ladder
 *   of four-bars (gen_models.py ladder: rows across two branches, cross
 *   pairs; with a spring-damper across it, a force set on two branches)
 *   and its deep-tree variant (tests/gen_ladder.py --deep);
 * - it emits each entry about once: pairs <= 1.25 x the entries (all pairs
 *   of the rows' columns were O(N^3) on the scissor lift: 5.86 M pairs for
 *   66 569 entries at N = 128);
 * - the set-up of the 256-stage lift with penalty and KLU (hymo_sim_create:
 *   pattern, analysis, static start) takes < 1 s of CPU (plain builds). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "hymo/linalg.h"
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__)
#define TIMED 0
#else
#define TIMED 1
#endif

#define PY "/usr/bin/python3"

/* the model `script args` writes, with `extra` appended (NULL: none); NULL
 * (test skipped) without python */
static hymo_model *generated(const char *script, const char *args, const char *extra)
{
    if (access(PY, X_OK) != 0) return NULL;
    char path[256], cmd[1024];
    snprintf(path, sizeof path, "/tmp/hymo_test_penalty_pattern_%ld.yaml", (long)getpid());
    snprintf(cmd, sizeof cmd, PY " %s/%s %s -o %s", HYMO_TESTS_DIR, script, args, path);
    if (system(cmd) != 0) fail_msg("%s failed", cmd);
    if (extra) {
        FILE *f = fopen(path, "a");
        assert_non_null(f);
        fputs(extra, f);
        fclose(f);
    }
    hymo_model *m = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_file(path, &m, &err) != HYMO_OK) fail_msg("%s: %s", cmd, err.message);
    unlink(path);
    return m;
}

static hymo_sim *penalty_sim(const hymo_model *m)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.formulation = HYMO_FORMULATION_PENALTY;
    opt.jacobian = HYMO_JACOBIAN_FAST;
    opt.linear_solver = HYMO_LINSOL_KLU;
    opt.verbose = 0;
    hymo_sim *sim = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_sim_create(m, &opt, &sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    return sim;
}

/* the force sets as the engine gives them to mech_pattern */
static int force_sets(hymo_sim *sim, int **start, int **joint)
{
    const int nsets = sim->na + sim->model->n_force_elements, nz = sim->nz;
    *start = calloc((size_t)nsets + 1, sizeof(int));
    *joint = malloc(((size_t)nsets * (size_t)nz + 1) * sizeof(int));
    assert_non_null(*start);
    assert_non_null(*joint);
    for (int s = 0; s < nsets; ++s) {
        int *out = *joint + (*start)[s];
        const int k = s < sim->na ? hymo_actuator_joints(sim->model, &sim->mb.kin, s, out)
                                  : hymo_fe_joints(sim->model, &sim->mb.kin, s - sim->na, out);
        (*start)[s + 1] = (*start)[s] + k;
    }
    return nsets;
}

static void check(const char *what, hymo_model *m, int need_cross)
{
    if (!m) skip();
    hymo_sim *sim = penalty_sim(m);
    const int nz = sim->nz;
    const hymo_sparse *B = &sim->jac.jm;
    assert_int_equal(sim->nxm, nz);
    int *start, *joint;
    const int nsets = force_sets(sim, &start, &joint);
    const int np = sim->form.ops->mech_pattern(&sim->form, &sim->mb, start, joint, nsets, NULL, NULL);
    assert_true(np > 0); /* sparse mode */
    /* brute force: every pair on one path, of a row, of a set */
    const hymo_constraints *con = sim->mb.con;
    size_t cap = (size_t)nz * (size_t)nz * 2 + 16, n = 0;
    for (int r = 0; r < con->m; ++r) {
        const size_t len = (size_t)(con->row_start[r + 1] - con->row_start[r]);
        cap += len * len;
    }
    for (int s = 0; s < nsets; ++s) cap += (size_t)(start[s + 1] - start[s]) * (size_t)(start[s + 1] - start[s]);
    int *rows = malloc(cap * sizeof(int)), *cols = malloc(cap * sizeof(int));
    assert_non_null(rows);
    assert_non_null(cols);
    for (int j = 0; j < nz; ++j)
        for (int i = j; i != HYMO_GROUND; i = sim->mb.kin.bd[i].parent) rows[n] = i, cols[n++] = j, rows[n] = j, cols[n++] = i;
    int cross = 0;
    for (int r = 0; r < con->m; ++r)
        for (int a = con->row_start[r]; a < con->row_start[r + 1]; ++a)
            for (int b = con->row_start[r]; b < con->row_start[r + 1]; ++b) {
                rows[n] = con->col[a], cols[n++] = con->col[b];
                cross += !hymo_kin_on_path(&sim->mb.kin, con->col[a], con->col[b]) &&
                         !hymo_kin_on_path(&sim->mb.kin, con->col[b], con->col[a]);
            }
    for (int s = 0; s < nsets; ++s)
        for (int a = start[s]; a < start[s + 1]; ++a)
            for (int b = start[s]; b < start[s + 1]; ++b) rows[n] = joint[a], cols[n++] = joint[b];
    hymo_sparse want = {0};
    assert_int_equal(hymo_sparse_pattern(&want, nz, nz, (int)n, rows, cols), 0);
    print_message("%s: nz %d, %d entries, %d pairs emitted (all pairs of rows, sets and paths: %zu)\n", what, nz,
                  B->nnz, np, n);
    assert_int_equal(B->nnz, want.nnz);
    assert_memory_equal(B->col_start, want.col_start, (size_t)(nz + 1) * sizeof(int));
    assert_memory_equal(B->row, want.row, (size_t)want.nnz * sizeof(int));
    assert_true(np <= B->nnz + B->nnz / 4);
    if (need_cross) assert_true(cross > 0); /* the rows' cross pairs are exercised */
    hymo_sparse_free(&want);
    free(rows), free(cols), free(start), free(joint);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

static void test_scissor(void **state)
{
    (void)state;
    check("scissor 40", generated("../bench/gen_models.py", "scissor 40", NULL), 0);
}

static void test_scissor_two_cylinders(void **state)
{
    (void)state;
    check("scissor 24, 2 cylinders", generated("../bench/gen_models.py", "scissor 24 --cylinders 2", NULL), 0);
}

static void test_ladder(void **state)
{
    (void)state;
    check("ladder 40", generated("../bench/gen_models.py", "ladder 40", NULL), 1);
    /* a spring-damper across the ladder: a force set on two branches */
    check("ladder 40, spring across", generated("../bench/gen_models.py", "ladder 40",
                                                "forces:\n  - {name: sd, type: spring_damper, point_a: c20.E, "
                                                "point_b: o37.T, stiffness: 50, damping: 5, free_length: 0.3}\n"),
          1);
}

static void test_ladder_deep(void **state)
{
    (void)state;
    check("deep ladder 30", generated("gen_ladder.py", "30 --deep", NULL), 0);
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_setup_time(void **state)
{
    (void)state;
    hymo_model *m = generated("../bench/gen_models.py", TIMED ? "scissor 256" : "scissor 64", NULL);
    if (!m) skip();
    const double t0 = cpu_s();
    hymo_sim *sim = penalty_sim(m);
    const double t = cpu_s() - t0;
    print_message("penalty set-up, scissor lift of %d stages: %.3f s CPU%s\n", TIMED ? 256 : 64, t,
                  TIMED ? "" : " (not judged under a sanitizer)");
    if (TIMED) assert_true(t < 1.0);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scissor),
        cmocka_unit_test(test_scissor_two_cylinders),
        cmocka_unit_test(test_ladder),
        cmocka_unit_test(test_ladder_deep),
        cmocka_unit_test(test_setup_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
