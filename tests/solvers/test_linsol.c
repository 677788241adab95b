/* The linear solvers behind hymo_linsol (src/solvers/linsol.c): the dense LU
 * (unblocked up to 48 unknowns, LAPACK dgetrf above) and KLU.
 *
 * - Random diagonally dominant and general matrices, n = 1 .. 80 (both
 *   dense paths): the relative residual |A x - b| / (|A| |x|) stays below
 *   1e-13, i.e. backward stable to ~500 eps for these sizes.  KLU's
 *   threshold pivoting (common.tol = 1e-3: a pivot may be 1e3 times smaller
 *   than the largest entry of its column) allows up to ~1e3 times more
 *   element growth on general matrices, so there the bound is 1e-10.
 * - n = 820: the dense solver's LAPACK dgetrf (loaded at first use).
 * - KLU with a pattern that changes between factorisations (entries that
 *   vanish and come back, as a closed valve's flow derivatives do): the
 *   solutions are right after every change.
 * - Whole runs: the quick-return with KLU gives the dense solver's
 *   trajectory to 1e-9 rad and 1 Pa (both formulations, both Jacobian
 *   modes); the solvers differ only in round-off, which the Newton
 *   iteration damps to far below its 1e-7 rad / 1e-2 Pa increments. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/linalg.h"
#include "hymo/sim.h"
#include "linsol.h"
#include "test_util.h"

#define NMAX 80

static uint64_t rng = 88172645463325252ull;


static void solve_and_check(hymo_linsol *ls, int n, const double *a, double tol)
{
    double b[NMAX], x[NMAX];
    for (int i = 0; i < n; ++i) x[i] = b[i] = test_urand_pm1(&rng);
    hymo_sparse sp = {0};
    test_sparse_from_dense(n, a, 3, &sp);
    assert_int_equal(ls->ops->factor(ls, &sp), 0);
    hymo_sparse_free(&sp);
    ls->ops->solve(ls, x);
    double r = test_rel_residual(n, a, x, b);
    if (!(r <= tol)) fail_msg("%s, n = %d: relative residual %.3g > %.3g", ls->ops->name, n, r, tol);
}

static void test_random_matrices(void **state)
{
    (void)state;
    static double a[NMAX * NMAX];
    for (int kind = 0; kind < 2; ++kind) {
        for (int n = 1; n <= NMAX; n += (n < 12 ? 1 : 7)) {
            hymo_linsol *ls = NULL;
            hymo_error err;
            assert_int_equal(hymo_linsol_create(kind ? HYMO_LINSOL_KLU : HYMO_LINSOL_DENSE, n, &ls, &err), HYMO_OK);
            for (int trial = 0; trial < 3; ++trial) {
                for (int e = 0; e < n * n; ++e) a[e] = test_urand_pm1(&rng);
                if (trial == 0) /* diagonally dominant */
                    for (int i = 0; i < n; ++i) a[(size_t)i * n + i] += n;
                solve_and_check(ls, n, a, trial == 0 || !kind ? 1e-13 : 1e-10);
            }
            hymo_linsol_free(ls);
        }
    }
}

/* Above 800 unknowns the dense solver factorises with LAPACK's dgetrf,
 * loaded with dlopen at this first use (src/core/lazy_lib.h): n = 820,
 * diagonally dominant, relative residual below 1e-13. */
static void test_dense_lapack(void **state)
{
    (void)state;
    const int n = 820;
    double *a = malloc((size_t)n * n * sizeof *a), *b = malloc((size_t)n * sizeof *b),
           *x = malloc((size_t)n * sizeof *x);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(x);
    for (size_t e = 0; e < (size_t)n * n; ++e) a[e] = test_urand_pm1(&rng);
    for (int i = 0; i < n; ++i) a[(size_t)i * n + i] += n;
    for (int i = 0; i < n; ++i) x[i] = b[i] = test_urand_pm1(&rng);
    hymo_linsol *ls = NULL;
    hymo_error err;
    assert_int_equal(hymo_linsol_create(HYMO_LINSOL_DENSE, n, &ls, &err), HYMO_OK);
    hymo_sparse sp = {0};
    test_sparse_from_dense(n, a, 3, &sp);
    assert_int_equal(ls->ops->factor(ls, &sp), 0);
    hymo_sparse_free(&sp);
    ls->ops->solve(ls, x);
    const double r = test_rel_residual(n, a, x, b);
    hymo_linsol_free(ls);
    free(a), free(b), free(x);
    if (!(r <= 1e-13)) fail_msg("dense (LAPACK), n = %d: relative residual %.3g", n, r);
}

static void test_klu_changing_pattern(void **state)
{
    (void)state;
    const int n = 9;
    double a[81];
    hymo_linsol *ls = NULL;
    hymo_error err;
    assert_int_equal(hymo_linsol_create(HYMO_LINSOL_KLU, n, &ls, &err), HYMO_OK);
    for (int round = 0; round < 12; ++round) {
        for (int e = 0; e < n * n; ++e) a[e] = test_urand_pm1(&rng);
        for (int i = 0; i < n; ++i) a[(size_t)i * n + i] += n;
        /* a block that vanishes on even rounds, another on rounds divisible by 3 */
        for (int j = 5; j < 8; ++j)
            for (int i = 5; i < 8; ++i)
                if (i != j && round % 2 == 0) a[(size_t)j * n + i] = 0.0;
        for (int j = 0; j < 3; ++j)
            for (int i = 6; i < 9; ++i)
                if (round % 3 == 0) a[(size_t)j * n + i] = 0.0;
        solve_and_check(ls, n, a, 1e-13);
    }
    hymo_linsol_free(ls);
}

static void test_klu_matches_dense(void **state)
{
    (void)state;
    hymo_model *model = test_load_model("quickreturn.yaml");
    for (int form = 0; form < 2; ++form)
        for (int jac = 0; jac < 2; ++jac) {
            hymo_sim *sim[2] = {NULL, NULL};
            hymo_error err;
            hymo_error_clear(&err);
            for (int s = 0; s < 2; ++s) {
                hymo_run_options opt;
                hymo_run_options_default(&opt, model);
                opt.formulation = form ? HYMO_FORMULATION_PENALTY : HYMO_FORMULATION_DOUBLE_STEP;
                opt.jacobian = jac ? HYMO_JACOBIAN_FAST : HYMO_JACOBIAN_NUMERIC;
                opt.linear_solver = s ? HYMO_LINSOL_KLU : HYMO_LINSOL_DENSE;
                sim[s] = test_sim_create(model, &opt);
            }
            double dz = 0.0, dp = 0.0;
            for (int k = 0; k < 1500; ++k) { /* over the valve opening at 1 s */
                for (int s = 0; s < 2; ++s)
                    if (hymo_sim_step(sim[s], &err) != HYMO_OK) fail_msg("%s", err.message);
                for (int j = 0; j < hymo_sim_nz(sim[0]); ++j)
                    dz = fmax(dz, fabs(hymo_sim_z(sim[0])[j] - hymo_sim_z(sim[1])[j]));
                for (int i = 0; i < hymo_sim_np(sim[0]); ++i)
                    dp = fmax(dp, fabs(hymo_sim_p(sim[0])[i] - hymo_sim_p(sim[1])[i]));
            }
            print_message("quick-return %s %s: KLU vs dense max |dz| %.3g rad, |dp| %.3g Pa\n",
                          form ? "penalty" : "double-step", jac ? "fast" : "numeric", dz, dp);
            assert_true(dz <= 1e-9);
            assert_true(dp <= 1.0);
            hymo_sim_free(sim[0]);
            hymo_sim_free(sim[1]);
        }
    hymo_model_free(model);
}

/* hymo_full_pivot_columns (the independent-coordinate selection) on
 * constraint Jacobians of more than 64 rows (no fixed row limit: a larger
 * mechanism is not rank deficient for its size): m = 100 rows of a
 * 100 x 130 matrix whose rows are independent pick 100 columns with a
 * nonzero smallest pivot; making row 99 = row 3 + row 17 is detected as
 * rank deficient (0); a block of the identity with known pivot columns
 * picks exactly them. */
static void test_full_pivot_many_rows(void **state)
{
    (void)state;
    enum { M = 100, N = 130 };
    static double a[M * N], w[M * N + 2 * M];
    unsigned char piv[N];
    uint64_t seed = 12345;
    for (int i = 0; i < M * N; ++i) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        a[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
    }
    double pmin = hymo_full_pivot_columns(M, N, a, w, NULL, piv);
    int count = 0;
    for (int j = 0; j < N; ++j) count += piv[j];
    assert_true(pmin > 0.0);
    assert_int_equal(count, M);
    for (int j = 0; j < N; ++j) a[99 * N + j] = a[3 * N + j] + a[17 * N + j];
    pmin = hymo_full_pivot_columns(M, N, a, w, NULL, piv);
    assert_true(pmin < 1e-12);
    memset(a, 0, sizeof a);
    for (int i = 0; i < M; ++i) a[i * N + (i * 7) % N] = 1.0 + i; /* distinct columns */
    assert_true(hymo_full_pivot_columns(M, N, a, w, NULL, piv) == 1.0);
    for (int i = 0; i < M; ++i) assert_int_equal(piv[(i * 7) % N], 1);
}

/* The whole-matrix full-pivoting elimination (scan every entry for each
 * pivot, update every row): the reference hymo_rank_pivots must reproduce
 * pivot for pivot. */
static int rank_pivots_dense(int m, int n, const double *a, double *w, const unsigned char *allowed,
                             unsigned char *col_mask, unsigned char *row_mask, int max_piv, double rel_tol,
                             double *smallest)
{
    memcpy(w, a, (size_t)m * n * sizeof(double));
    memset(col_mask, 0, (size_t)n);
    memset(row_mask, 0, (size_t)m);
    *smallest = INFINITY;
    double first = 0.0;
    int k = 0;
    for (; k < max_piv && k < m; ++k) {
        int pr = -1, pc = -1;
        double best = -1.0;
        for (int i = 0; i < m; ++i) {
            if (row_mask[i]) continue;
            for (int j = 0; j < n; ++j) {
                if (col_mask[j] || (allowed && !allowed[j])) continue;
                const double v = fabs(w[i * n + j]);
                if (v > best) best = v, pr = i, pc = j;
            }
        }
        if (pr < 0 || !(best > 0.0)) break;
        if (k == 0) first = best;
        else if (best <= rel_tol * first) break;
        col_mask[pc] = 1;
        if (best < *smallest) *smallest = best;
        for (int i = 0; i < m; ++i) {
            if (i == pr || row_mask[i]) continue;
            const double l = w[i * n + pc] / w[pr * n + pc];
            for (int j = 0; j < n; ++j) w[i * n + j] -= l * w[pr * n + j];
        }
        row_mask[pr] = 1;
    }
    return k;
}

/* hymo_rank_pivots (row maxima kept, only touched rows rescanned) against
 * the whole-matrix elimination on 400 random matrices: sparse and dense,
 * small integers (ties), dependent rows, zero rows, column masks, rel_tol
 * 0 and 1e-9, max_piv below m: the same rank, pivot rows and columns and
 * smallest pivot, exactly. */
static void test_rank_pivots_reference(void **state)
{
    (void)state;
    enum { MMAX = 40, NCOL = 48 };
    static double a[MMAX * NCOL], w1[MMAX * NCOL + 2 * MMAX], w2[MMAX * NCOL];
    unsigned char c1[NCOL], c2[NCOL], r1[MMAX], r2[MMAX], allowed[NCOL];
    static int rp[MMAX + 1], cj[MMAX * NCOL];
    static double cv[MMAX * NCOL];
    uint64_t seed = 987654321;
#define RND() (seed = seed * 6364136223846793005ULL + 1442695040888963407ULL, (double)(seed >> 11) / 9007199254740992.0)
    int ranks_below_m = 0;
    for (int trial = 0; trial < 400; ++trial) {
        const int m = 1 + (int)(RND() * MMAX), n = 1 + (int)(RND() * NCOL);
        const double density = trial % 4 == 0 ? 1.0 : 0.03 + 0.3 * RND();
        const int integers = trial % 3 == 0;
        for (int i = 0; i < m * n; ++i) {
            const double v = integers ? floor(RND() * 7.0) - 3.0 : RND() - 0.5;
            a[i] = RND() < density ? v : 0.0;
        }
        if (m > 3 && trial % 5 == 0) /* a dependent row and a zero row */
            for (int j = 0; j < n; ++j) a[(m - 1) * n + j] = a[j] - 2.0 * a[n + j], a[(m - 2) * n + j] = 0.0;
        for (int j = 0; j < n; ++j) allowed[j] = trial % 2 == 0 || RND() < 0.7;
        const double rel_tol = trial % 3 == 1 ? 1e-9 : 0.0;
        const int max_piv = trial % 7 == 0 && m > 1 ? m - 1 : m;
        const unsigned char *al = trial % 2 == 0 ? NULL : allowed;
        double s1, s2;
        const int k1 = hymo_rank_pivots(m, n, a, w1, al, c1, r1, max_piv, rel_tol, &s1);
        const int k2 = rank_pivots_dense(m, n, a, w2, al, c2, r2, max_piv, rel_tol, &s2);
        assert_int_equal(k1, k2);
        assert_memory_equal(c1, c2, (size_t)n);
        assert_memory_equal(r1, r2, (size_t)m);
        assert_true(s1 == s2);
        /* the same by rows of non-zeros (hymo_rank_pivots_csr), its pool
         * deliberately small so that the fill-in makes it grow */
        int nnz = 0;
        rp[0] = 0;
        for (int i = 0; i < m; ++i) {
            for (int j = 0; j < n; ++j)
                if (a[i * n + j] != 0.0) cj[nnz] = j, cv[nnz++] = a[i * n + j];
            rp[i + 1] = nnz;
        }
        const hymo_csr csr = {m, n, rp, cj, cv};
        hymo_rank_work rw;
        assert_int_equal(hymo_rank_work_alloc(&rw, m, n, 1), 0);
        double s3;
        const int k3 = hymo_rank_pivots_csr(&csr, &rw, al, c2, r2, max_piv, rel_tol, &s3);
        hymo_rank_work_free(&rw);
        assert_int_equal(k3, k1);
        assert_memory_equal(c1, c2, (size_t)n);
        assert_memory_equal(r1, r2, (size_t)m);
        assert_true(s3 == s1);
        ranks_below_m += k1 < m;
    }
#undef RND
    print_message("rank pivots (dense and by rows of non-zeros): 400 matrices as the whole-matrix elimination (%d of lower rank)\n", ranks_below_m);
    assert_true(ranks_below_m > 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_pivot_many_rows),
        cmocka_unit_test(test_rank_pivots_reference),
        cmocka_unit_test(test_random_matrices),
        cmocka_unit_test(test_dense_lapack),
        cmocka_unit_test(test_klu_changing_pattern),
        cmocka_unit_test(test_klu_matches_dense),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
