/* bench_lu — the dense LU that src/linsol.c uses, against LAPACK dgetrf of
 * the BLAS this build links (Debian's reference BLAS unless an optimised
 * one is the system's libblas.so.3 alternative), at sizes 8 .. 1280.
 *
 *   bench_lu [--repeat R]
 *
 * Prints per size the minimum over R factorisations of a diagonally
 * dominant random matrix (ms) for the unblocked right-looking LU (the
 * algorithm of linsol.c's lu_unblocked) and for LAPACKE_dgetrf_work, and
 * their ratio: src/linsol.c's DENSE_UNBLOCKED_MAX is chosen from it. */
#define _POSIX_C_SOURCE 199309L

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the same loop as src/linsol.c lu_unblocked */
static int lu_unblocked(int n, double *a, lapack_int *ipiv)
{
    for (int k = 0; k < n; ++k) {
        double *ak = &a[(size_t)k * n];
        int p = k;
        double best = fabs(ak[k]);
        for (int i = k + 1; i < n; ++i)
            if (fabs(ak[i]) > best) best = fabs(ak[p = i]);
        ipiv[k] = p + 1;
        if (!(best > 0.0)) return 1;
        if (p != k)
            for (int j = 0; j < n; ++j) {
                double t = a[(size_t)j * n + k];
                a[(size_t)j * n + k] = a[(size_t)j * n + p];
                a[(size_t)j * n + p] = t;
            }
        const double inv = 1.0 / ak[k];
        for (int i = k + 1; i < n; ++i) ak[i] *= inv;
        for (int j = k + 1; j < n; ++j) {
            double *aj = &a[(size_t)j * n];
            const double f = aj[k];
            if (f != 0.0)
                for (int i = k + 1; i < n; ++i) aj[i] -= ak[i] * f;
        }
    }
    return 0;
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
                    lu_unblocked(n, a, piv);
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
