/* Shared libraries a few commands need, loaded with dlopen at their first
 * use so that a process which never needs them does not map them (nor pay
 * their relocations at start-up): LAPACK (the dense LU above 800 unknowns,
 * the co-simulation's spectral radius) here, libzip and expat (FMU and SSP
 * files) in src/fmi/zipxml.h.  The library names are the SONAMEs of the
 * libraries the build found (CMakeLists.txt, HYMO_*_SONAME). */
#ifndef HYMO_LAZY_LIB_H
#define HYMO_LAZY_LIB_H

#include <lapacke.h>
#include <stddef.h>

/* Resolves each name of names[0..n) in the library soname into fn[i]
 * (dlopen RTLD_NOW | RTLD_LOCAL, kept open for the process).  0 on
 * success; otherwise -1 with a message in msg (msg_len bytes). */
int hymo_lazy_resolve(const char *soname, int n, const char *const *names, void **fn, char *msg, size_t msg_len);

/* LAPACKE_dgetrf_work and LAPACKE_dgeev from the LAPACKE library, loaded
 * on the first call (once per process, thread-safe).  When the library
 * cannot be loaded they return HYMO_LAPACK_UNAVAILABLE and
 * hymo_lapack_error() says why. */
#define HYMO_LAPACK_UNAVAILABLE (-100000)
lapack_int hymo_lapack_dgetrf(int matrix_layout, lapack_int m, lapack_int n, double *a, lapack_int lda,
                              lapack_int *ipiv);
lapack_int hymo_lapack_dgeev(int matrix_layout, char jobvl, char jobvr, lapack_int n, double *a, lapack_int lda,
                             double *wr, double *wi, double *vl, lapack_int ldvl, double *vr, lapack_int ldvr);
const char *hymo_lapack_error(void);

#endif
