/* Union-find (hymo/linalg.h): the sets after a sequence of unions are the
 * connected components, each set's root is its smallest element (the KLU
 * block split numbers its blocks by their roots), and joining a set with
 * itself changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "hymo/linalg.h"

static void test_components(void **state)
{
    (void)state;
    enum { N = 10 };
    int parent[N];
    hymo_uf_init(parent, N);
    for (int i = 0; i < N; ++i) assert_int_equal(hymo_uf_find(parent, i), i);
    /* edges 9-4, 4-7, 1-8, 8-3, 3-1, 5-5: components {4,7,9} {1,3,8} and singletons */
    assert_int_equal(hymo_uf_union(parent, 9, 4), 4);
    assert_int_equal(hymo_uf_union(parent, 4, 7), 4);
    assert_int_equal(hymo_uf_union(parent, 1, 8), 1);
    assert_int_equal(hymo_uf_union(parent, 8, 3), 1);
    assert_int_equal(hymo_uf_union(parent, 3, 1), 1);
    assert_int_equal(hymo_uf_union(parent, 5, 5), 5);
    static const int root[N] = {0, 1, 2, 1, 4, 5, 6, 4, 1, 4};
    for (int i = 0; i < N; ++i) assert_int_equal(hymo_uf_find(parent, i), root[i]);
    /* joining two components: the smaller root stays */
    assert_int_equal(hymo_uf_union(parent, 7, 3), 1);
    for (int i = 0; i < N; ++i) assert_int_equal(hymo_uf_find(parent, i), root[i] == 4 ? 1 : root[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_components),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
