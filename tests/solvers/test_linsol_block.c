/* KLU with a dense leading block (hymo_linsol_set_dense_block, src/solvers/linsol.c):
 * J = [A B; C D] factorised as KLU on the sparse D and the dense LU of the
 * Schur complement A - B D^-1 C, as for a chain's mechanical block.
 *
 * - Matrices shaped like a chain's Newton matrix (dense A of k = 16 .. 40,
 *   block-diagonal D of 4 x 4 circuits, B and C coupling each circuit to
 *   one or two mechanical unknowns), and the same with a random sparse D:
 *   the relative residual of the solution stays below 1e-12, over several
 *   refactorisations with changing values and an entry of D that vanishes
 *   and comes back.
 * - Block-diagonal D is factorised block by block (the own dense LU, each
 *   column of C touching only its blocks); when the blocks join (random
 *   entries appear from the fourth matrix on) KLU takes the whole of D:
 *   same residual bound before and after.
 * - A sparse leading block (a ladder's M') is left to KLU on the whole
 *   matrix: same residual bound.
 * - The dense solver ignores the block (same solution). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/sim.h"
#include "linsol.h"
#include "test_util.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;


/* chain-like: A dense k x k (symmetric positive part + diagonal), circuit c
 * (4 unknowns) couples to mechanical unknown c % k (and c+1 if dense_c) */
static void fill(int k, int n, double *a, int round, int dense_a, int random_d)
{
    memset(a, 0, (size_t)n * (size_t)n * sizeof(double));
    for (int j = 0; j < k; ++j)
        for (int i = 0; i < k; ++i)
            if (dense_a || i == j || abs(i - j) == 1) a[(size_t)j * n + i] = (i == j ? 4.0 * k : 0.0) + test_urand_pm1(&rng);
    const int nc = (n - k) / 4;
    for (int c = 0; c < nc; ++c) {
        const int h = k + 4 * c, m = c % k;
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j)
                if (i == j || (j == i + 1) || (i == 3 && j == 0)) a[(size_t)(h + j) * n + h + i] = (i == j ? 8.0 : 0.0) + test_urand_pm1(&rng);
        if (round % 3 == 1) a[(size_t)(h + 1) * n + h] = 0.0; /* vanishes, comes back */
        a[(size_t)(h + 1) * n + m] = test_urand_pm1(&rng);                 /* B: mech row m, pressure column */
        a[(size_t)(h + 2) * n + m] = test_urand_pm1(&rng);
        a[(size_t)m * n + h + 1] = test_urand_pm1(&rng); /* C: pressure rows, mech column m */
        a[(size_t)m * n + h + 2] = test_urand_pm1(&rng);
    }
    if (random_d == 1 || (random_d == 2 && round >= 3)) /* 2: D's blocks join from the fourth matrix on */
        for (int e = 0; e < 2 * (n - k); ++e) {
            const int i = k + (int)((test_urand_pm1(&rng) + 1.0) * 0.5 * (n - k - 1)), j = k + (int)((test_urand_pm1(&rng) + 1.0) * 0.5 * (n - k - 1));
            a[(size_t)j * n + i] += 0.5 * test_urand_pm1(&rng);
        }
}

static void check(int k, int n, int dense_a, int random_d, hymo_linsol_kind kind, double *x_out)
{
    double *a = test_malloc((size_t)n * n * sizeof(double)), *b = test_malloc((size_t)n * sizeof(double)),
           *x = test_malloc((size_t)n * sizeof(double));
    hymo_linsol *ls = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_linsol_create(kind, n, &ls, &err), HYMO_OK);
    assert_int_equal(hymo_linsol_set_dense_block(ls, k, &err), HYMO_OK);
    double worst = 0.0;
    hymo_sparse sp = {0};
    for (int round = 0; round < 6; ++round) {
        fill(k, n, a, round, dense_a, random_d);
        for (int i = 0; i < n; ++i) b[i] = x[i] = test_urand_pm1(&rng);
        test_sparse_from_dense(n, a, round % 3, &sp); /* with and without stored zeros */
        assert_int_equal(ls->ops->factor(ls, &sp), 0);
        ls->ops->solve(ls, x);
        worst = fmax(worst, test_rel_residual(n, a, x, b));
    }
    if (x_out) memcpy(x_out, x, (size_t)n * sizeof(double));
    print_message("%s k = %d, n = %d, %s A%s: worst relative residual %.3g\n", ls->ops->name, k, n,
                  dense_a ? "dense" : "sparse", random_d ? ", random D" : "", worst);
    assert_true(worst <= 1e-12);
    hymo_sparse_free(&sp);
    hymo_linsol_free(ls);
    test_free(a);
    test_free(b);
    test_free(x);
}

static void test_dense_block(void **state)
{
    (void)state;
    for (int k = 16; k <= 40; k += 12)
        for (int rd = 0; rd < 3; ++rd) check(k, k + 4 * k, 1, rd, HYMO_LINSOL_KLU, NULL);
}

static void test_sparse_block(void **state)
{
    (void)state;
    check(32, 32 + 4 * 32, 0, 0, HYMO_LINSOL_KLU, NULL);
}

static void test_dense_solver_ignores_block(void **state)
{
    (void)state;
    const int k = 20, n = 100;
    double xk[100], xd[100];
    uint64_t save = rng;
    check(k, n, 1, 1, HYMO_LINSOL_KLU, xk);
    rng = save;
    check(k, n, 1, 1, HYMO_LINSOL_DENSE, xd);
    double d = 0.0;
    for (int i = 0; i < n; ++i) d = fmax(d, fabs(xk[i] - xd[i]) / (1.0 + fabs(xd[i])));
    assert_true(d <= 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_block),
        cmocka_unit_test(test_sparse_block),
        cmocka_unit_test(test_dense_solver_ignores_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
