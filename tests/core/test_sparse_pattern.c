/* hymo_sparse_pattern (hymo/linalg.h): the pattern of a list of (row,
 * column) pairs is each column's distinct rows in ascending order, whatever
 * the number and order of the duplicates; a list made mostly of duplicates
 * (the penalty formulation's Gram pattern of a deep closed-loop tree emits
 * each entry once per constraint row it shares) costs time linear in its
 * length. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "hymo/linalg.h"

static unsigned lcg(unsigned *x) { return *x = *x * 1103515245u + 12345u, (*x >> 8) & 0xffffff; }

static void test_against_dense(void **state)
{
    (void)state;
    enum { R = 37, C = 23, N = 5000 };
    static int rows[N], cols[N];
    static unsigned char want[R][C];
    unsigned x = 7;
    for (int k = 0; k < N; ++k) {
        rows[k] = (int)(lcg(&x) % R), cols[k] = (int)(lcg(&x) % C);
        if (k % 3) rows[k] = rows[k] % 5, cols[k] = cols[k] % 4; /* many duplicates */
        want[rows[k]][cols[k]] = 1;
    }
    hymo_sparse s = {0};
    assert_int_equal(hymo_sparse_pattern(&s, R, C, N, rows, cols), 0);
    int nnz = 0;
    for (int j = 0; j < C; ++j) {
        int last = -1;
        for (int a = s.col_start[j]; a < s.col_start[j + 1]; ++a) {
            assert_true(s.row[a] > last); /* ascending, no duplicate */
            assert_true(want[s.row[a]][j]);
            last = s.row[a];
        }
        for (int i = 0; i < R; ++i) nnz += want[i][j];
    }
    assert_int_equal(s.nnz, nnz);
    assert_int_equal(s.col_start[C], nnz);
    for (int a = 0; a < nnz; ++a) assert_true(s.value[a] == 0.0);
    hymo_sparse_free(&s);
}

/* columns of one row each (a diagonal), the rows given twice */
static void test_single_rows(void **state)
{
    (void)state;
    enum { C = 20 };
    int rows[2 * C], cols[2 * C];
    for (int k = 0; k < 2 * C; ++k) cols[k] = k % C, rows[k] = (7 * (k % C)) % C;
    hymo_sparse s = {0};
    assert_int_equal(hymo_sparse_pattern(&s, C, C, 2 * C, rows, cols), 0);
    assert_int_equal(s.nnz, C);
    for (int j = 0; j < C; ++j) {
        assert_int_equal(s.col_start[j], j);
        assert_int_equal(s.row[j], (7 * j) % C);
    }
    hymo_sparse_free(&s);
}

static void test_duplicates_linear(void **state)
{
    (void)state;
    enum { N = 400000 };
    int *rows = malloc(N * sizeof(int)), *cols = malloc(N * sizeof(int));
    assert_non_null(rows);
    assert_non_null(cols);
    unsigned x = 11;
    for (int k = 0; k < N; ++k) rows[k] = (int)(lcg(&x) % 64), cols[k] = k % 3; /* 3 columns, 64 rows each */
    hymo_sparse s = {0};
    const clock_t t0 = clock();
    assert_int_equal(hymo_sparse_pattern(&s, 64, 3, N, rows, cols), 0);
    const double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
    assert_int_equal(s.nnz, 3 * 64);
    for (int j = 0; j < 3; ++j)
        for (int a = s.col_start[j]; a < s.col_start[j + 1]; ++a) assert_int_equal(s.row[a], a - s.col_start[j]);
    /* linear: ~1 ms; sorting the 133 000 entries of a column with their duplicates took minutes */
    assert_true(cpu < 2.0);
    hymo_sparse_free(&s);
    free(rows), free(cols);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_dense),
        cmocka_unit_test(test_single_rows),
        cmocka_unit_test(test_duplicates_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
