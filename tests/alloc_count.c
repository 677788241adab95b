/* Allocation counting for the tests that check hymo allocates nothing per
 * step or row (test_no_alloc, test_sensors): linked with
 * --wrap=malloc,calloc,realloc (tests/CMakeLists.txt), every call through
 * the wrappers is counted in test_n_allocs, atomically: a run's writer and
 * error-estimate threads allocate alongside the caller's. */
#include <stddef.h>

#include "test_util.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);

long test_n_allocs;

void *__wrap_malloc(size_t size)
{
    __atomic_add_fetch(&test_n_allocs, 1, __ATOMIC_RELAXED);
    return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    __atomic_add_fetch(&test_n_allocs, 1, __ATOMIC_RELAXED);
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    __atomic_add_fetch(&test_n_allocs, 1, __ATOMIC_RELAXED);
    return __real_realloc(p, size);
}
