/* dlopen of the libraries only some commands need (lazy_lib.h). */
#define _POSIX_C_SOURCE 200809L
#include "lazy_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifndef HYMO_LAPACKE_SONAME
#define HYMO_LAPACKE_SONAME "liblapacke.so.9"
#endif

int hymo_lazy_resolve(const char *soname, int n, const char *const *names, void **fn, char *msg, size_t msg_len)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(msg, msg_len, "cannot load %s: %s", soname, e ? e : "dlopen failed");
        return -1;
    }
    for (int i = 0; i < n; ++i) {
        dlerror();
        fn[i] = dlsym(h, names[i]);
        if (!fn[i]) {
            snprintf(msg, msg_len, "%s has no %s", soname, names[i]);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ LAPACK */

static struct {
    __typeof__(LAPACKE_dgetrf_work) *dgetrf;
    __typeof__(LAPACKE_dgeev) *dgeev;
    int ok;
    char msg[256];
} lapack;
static pthread_once_t lapack_once = PTHREAD_ONCE_INIT;

static void lapack_load(void)
{
    static const char *const names[] = {"LAPACKE_dgetrf_work", "LAPACKE_dgeev"};
    void *fn[2] = {0};
    if (hymo_lazy_resolve(HYMO_LAPACKE_SONAME, 2, names, fn, lapack.msg, sizeof lapack.msg) != 0) return;
    /* POSIX guarantees a function pointer survives the round trip through
     * void * (dlsym's own contract) */
    memcpy(&lapack.dgetrf, &fn[0], sizeof fn[0]);
    memcpy(&lapack.dgeev, &fn[1], sizeof fn[1]);
    lapack.ok = 1;
}

lapack_int hymo_lapack_dgetrf(int matrix_layout, lapack_int m, lapack_int n, double *a, lapack_int lda,
                              lapack_int *ipiv)
{
    pthread_once(&lapack_once, lapack_load);
    if (!lapack.ok) return HYMO_LAPACK_UNAVAILABLE;
    return lapack.dgetrf(matrix_layout, m, n, a, lda, ipiv);
}

lapack_int hymo_lapack_dgeev(int matrix_layout, char jobvl, char jobvr, lapack_int n, double *a, lapack_int lda,
                             double *wr, double *wi, double *vl, lapack_int ldvl, double *vr, lapack_int ldvr)
{
    pthread_once(&lapack_once, lapack_load);
    if (!lapack.ok) return HYMO_LAPACK_UNAVAILABLE;
    return lapack.dgeev(matrix_layout, jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr);
}

const char *hymo_lapack_error(void)
{
    pthread_once(&lapack_once, lapack_load);
    return lapack.ok ? "" : lapack.msg;
}
