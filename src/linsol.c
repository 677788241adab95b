/* Dense (LAPACKE, no allocation after creation) and KLU backends. */
#include "linsol.h"

#include <klu.h>
#include <limits.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- dense LU (unblocked, or LAPACK dgetrf for large n) ---------------- */

typedef struct {
    double *lu;
    lapack_int *ipiv;
} dense_impl;

/* Above this size LAPACK's blocked dgetrf pays off.  Measured with
 * bench/bench_lu (min of 5, Debian's reference BLAS): dgetrf takes 4.7x the
 * unblocked loop's time at n = 8, 2.0-2.4x at n = 48-512, 1.3x at 640 and
 * 0.67x at 1280 (docs/performance.md); the break-even lies between 640 and
 * 1280.  (It was 48, from the call overhead alone.) */
#define DENSE_UNBLOCKED_MAX 800

/* Unblocked right-looking LU with partial pivoting (LAPACK dgetf2's
 * algorithm: same pivots, column-major, 1-based ipiv). */
static int lu_unblocked(int n, double *a, lapack_int *ipiv)
{
    for (int k = 0; k < n; ++k) {
        double *ak = &a[(size_t)k * n];
        int p = k;
        double best = fabs(ak[k]);
        for (int i = k + 1; i < n; ++i)
            if (fabs(ak[i]) > best) best = fabs(ak[p = i]);
        ipiv[k] = p + 1;
        if (!(best > 0.0) || !isfinite(best)) return 1;
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

static int dense_factor(hymo_linsol *ls, const double *a)
{
    dense_impl *d = ls->impl;
    int n = ls->n;
    memcpy(d->lu, a, (size_t)n * (size_t)n * sizeof(double));
    if (n <= DENSE_UNBLOCKED_MAX) return lu_unblocked(n, d->lu, d->ipiv);
    lapack_int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, d->lu, n, d->ipiv);
    return info == 0 ? 0 : 1;
}

/* Forward/back substitution with the LAPACK factors (column-major, 1-based
 * ipiv); hand-written because dgetrs' call overhead dominates at n < 20. */
static void dense_solve(hymo_linsol *ls, double *b)
{
    dense_impl *d = ls->impl;
    const int n = ls->n;
    const double *a = d->lu;
    for (int k = 0; k < n; ++k) {
        int p = d->ipiv[k] - 1;
        if (p != k) {
            double t = b[k];
            b[k] = b[p];
            b[p] = t;
        }
    }
    for (int j = 0; j < n; ++j) { /* L y = b, unit diagonal */
        double bj = b[j];
        if (bj != 0.0)
            for (int i = j + 1; i < n; ++i) b[i] -= a[(size_t)j * n + i] * bj;
    }
    for (int j = n - 1; j >= 0; --j) { /* U x = y */
        b[j] /= a[(size_t)j * n + j];
        double bj = b[j];
        for (int i = 0; i < j; ++i) b[i] -= a[(size_t)j * n + i] * bj;
    }
}

static void dense_destroy(hymo_linsol *ls)
{
    dense_impl *d = ls->impl;
    if (d) {
        free(d->lu);
        free(d->ipiv);
        free(d);
    }
}

static const hymo_linsol_ops dense_ops = {"dense", dense_factor, dense_solve, dense_destroy};

/* ---------------- KLU sparse LU ---------------- */

typedef struct {
    int nnz;
    int *Ap, *Ai; /* the pattern (n + 1, nnz): compressed columns, rows ascending */
    double *Ax;   /* nnz */
    klu_symbolic *sym;
    klu_numeric *num;
    klu_common common;
} klu_impl;

static void klu_release(klu_impl *k)
{
    if (k->num) klu_free_numeric(&k->num, &k->common);
    if (k->sym) klu_free_symbolic(&k->sym, &k->common);
}

/* (Re)builds the pattern: the previous one, the non-zeros of a and the
 * diagonal.  The pattern only grows, so that entries that are zero at
 * times (a closed valve's flow derivatives) do not cause a new analysis
 * (and KLU's allocations) each time they come back.  The arrays are sized
 * to the pattern (O(nnz), not n^2): they are allocated here, at the first
 * factorisation and when an entry outside the pattern becomes non-zero,
 * as klu_analyze allocates then too. */
static int klu_pattern(hymo_linsol *ls, klu_impl *k, const double *a)
{
    const int n = ls->n;
    int *Ap_old = k->Ap, *Ai_old = k->Ai;
    size_t nnz = 0;
    for (int pass = 0; pass < 2; ++pass) {
        int *Ap = NULL, *Ai = NULL;
        double *Ax = NULL;
        if (pass == 1) {
            Ap = malloc(((size_t)n + 1) * sizeof(int));
            Ai = malloc((nnz > 0 ? nnz : 1) * sizeof(int));
            Ax = malloc((nnz > 0 ? nnz : 1) * sizeof(double));
            if (!Ap || !Ai || !Ax || nnz > (size_t)INT_MAX) {
                free(Ap), free(Ai), free(Ax);
                return 1;
            }
        }
        size_t q = 0;
        for (int j = 0; j < n; ++j) {
            int o = Ap_old ? Ap_old[j] : 0;
            const int oe = Ap_old ? Ap_old[j + 1] : 0;
            if (pass == 1) Ap[j] = (int)q;
            for (int i = 0; i < n; ++i) {
                const double v = a[(size_t)j * n + i];
                const int old = o < oe && Ai_old[o] == i;
                if (old) ++o;
                if (old || v != 0.0 || i == j) {
                    if (pass == 1) {
                        Ai[q] = i;
                        Ax[q] = v;
                    }
                    ++q;
                }
            }
        }
        if (pass == 0) {
            nnz = q;
        } else {
            Ap[n] = (int)q;
            free(k->Ap), free(k->Ai), free(k->Ax);
            k->Ap = Ap, k->Ai = Ai, k->Ax = Ax;
            k->nnz = (int)q;
        }
    }
    klu_release(k);
    k->sym = klu_analyze(n, k->Ap, k->Ai, &k->common);
    if (!k->sym) return 1;
    k->num = klu_factor(k->Ap, k->Ai, k->Ax, k->sym, &k->common);
    return k->num ? 0 : 1;
}

static int klu_factor_dense(hymo_linsol *ls, const double *a)
{
    klu_impl *k = ls->impl;
    int n = ls->n;
    if (!k->sym || !k->num) return klu_pattern(ls, k, a);
    /* same pattern? count entries outside it */
    for (int j = 0; j < n; ++j) {
        int q = k->Ap[j];
        for (int i = 0; i < n; ++i) {
            double v = a[(size_t)j * n + i];
            if (q < k->Ap[j + 1] && k->Ai[q] == i) {
                k->Ax[q++] = v;
            } else if (v != 0.0) {
                return klu_pattern(ls, k, a);
            }
        }
    }
    if (!klu_refactor(k->Ap, k->Ai, k->Ax, k->sym, k->num, &k->common)) return 1;
    if (k->common.status == KLU_SINGULAR) return 1;
    return 0;
}

static void klu_solve_dense(hymo_linsol *ls, double *b)
{
    klu_impl *k = ls->impl;
    klu_solve(k->sym, k->num, ls->n, 1, b, &k->common);
}

static void klu_destroy(hymo_linsol *ls)
{
    klu_impl *k = ls->impl;
    if (k) {
        klu_release(k);
        free(k->Ap);
        free(k->Ai);
        free(k->Ax);
        free(k);
    }
}

static const hymo_linsol_ops klu_ops = {"klu", klu_factor_dense, klu_solve_dense, klu_destroy};

hymo_status hymo_linsol_create(hymo_linsol_kind kind, int n, hymo_linsol **out, hymo_error *err)
{
    *out = NULL;
    hymo_linsol *ls = calloc(1, sizeof *ls);
    if (!ls) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (linear solver)");
    ls->n = n;
    size_t nn = (size_t)(n > 0 ? n : 1);
    if (kind == HYMO_LINSOL_KLU) {
        klu_impl *k = calloc(1, sizeof *k);
        ls->ops = &klu_ops;
        ls->impl = k;
        if (k) {
            klu_defaults(&k->common); /* the pattern's arrays come with the first factorisation */
        }
        if (!k) {
            hymo_linsol_free(ls);
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (KLU)");
        }
    } else {
        dense_impl *d = calloc(1, sizeof *d);
        ls->ops = &dense_ops;
        ls->impl = d;
        if (d) {
            d->lu = calloc(nn * nn, sizeof(double));
            d->ipiv = calloc(nn, sizeof(lapack_int));
        }
        if (!d || !d->lu || !d->ipiv) {
            hymo_linsol_free(ls);
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (dense LU)");
        }
    }
    *out = ls;
    return HYMO_OK;
}

void hymo_linsol_free(hymo_linsol *ls)
{
    if (!ls) return;
    if (ls->ops && ls->ops->destroy) ls->ops->destroy(ls);
    free(ls);
}
