/* bench_lu — the dense LU that src/solvers/linsol.c uses, against LAPACK dgetrf of
 * the BLAS this build links (Debian's reference BLAS unless an optimised
 * one is the system's libblas.so.3 alternative), at sizes 8 .. 1280.
 *
 *   bench_lu [--repeat R]
 *
 * Prints per size the minimum over R factorisations of a diagonally
 * dominant random matrix (ms) for the unblocked right-looking LU (src/solvers/linsol.c's
 * hymo_lu_unblocked itself) and for LAPACKE_dgetrf_work, and
 * their ratio: src/solvers/linsol.c's DENSE_UNBLOCKED_MAX is chosen from it. */
#define _POSIX_C_SOURCE 199309L

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "linsol.h" /* hymo_lu_unblocked: the dense solver's own LU */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int repeat = 5;
    if (argc == 3 && !strcmp(argv[1], "--repeat")) repeat = atoi(argv[2]);
    if (repeat < 1) repeat = 1;
    static const int sizes[] = {8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 640, 1280};
    printf("| n | own unblocked LU ms | LAPACK dgetrf ms | dgetrf / own |\n|---|---|---|---|\n");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        const int n = sizes[s];
        const size_t nn = (size_t)n * (size_t)n;
        double *a0 = malloc(nn * sizeof(double)), *a = malloc(nn * sizeof(double));
        lapack_int *piv = malloc((size_t)n * sizeof(lapack_int));
        if (!a0 || !a || !piv) return 1;
        srand(1);
        for (size_t e = 0; e < nn; ++e) a0[e] = (double)rand() / RAND_MAX - 0.5;
        for (int i = 0; i < n; ++i) a0[(size_t)i * n + i] += n;
        int r = n > 500 ? (repeat < 3 ? repeat : 3) : repeat;
        double best[2] = {1e30, 1e30};
        for (int k = 0; k < r; ++k)
            for (int m = 0; m < 2; ++m) {
                memcpy(a, a0, nn * sizeof(double));
                double t0 = now_s();
                if (m == 0)
                    hymo_lu_unblocked(n, a, piv);
                else
                    LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, a, n, piv);
                double t = 1e3 * (now_s() - t0);
                if (t < best[m]) best[m] = t;
            }
        printf("| %d | %.4g | %.4g | %.2f |\n", n, best[0], best[1], best[1] / best[0]);
        free(a0);
        free(a);
        free(piv);
    }
    return 0;
}
