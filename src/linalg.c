#include "hymo/linalg.h"

#include <math.h>
#include <string.h>

int hymo_lu_factor(int n, double *a, int *piv)
{
    for (int k = 0; k < n; ++k) {
        int p = k;
        double best = fabs(a[k * n + k]);
        for (int i = k + 1; i < n; ++i) {
            double v = fabs(a[i * n + k]);
            if (v > best) {
                best = v;
                p = i;
            }
        }
        piv[k] = p;
        if (!(best > 0.0) || !isfinite(best)) return 1;
        if (p != k) {
            for (int j = 0; j < n; ++j) {
                double t = a[k * n + j];
                a[k * n + j] = a[p * n + j];
                a[p * n + j] = t;
            }
        }
        double inv = 1.0 / a[k * n + k];
        a[k * n + k] = inv; /* stored inverted: the solves multiply */
        for (int i = k + 1; i < n; ++i) {
            double l = a[i * n + k] * inv;
            a[i * n + k] = l;
            if (l != 0.0)
                for (int j = k + 1; j < n; ++j) a[i * n + j] -= l * a[k * n + j];
        }
    }
    return 0;
}

void hymo_lu_solve(int n, const double *lu, const int *piv, double *b)
{
    for (int k = 0; k < n; ++k) {
        if (piv[k] != k) {
            double t = b[k];
            b[k] = b[piv[k]];
            b[piv[k]] = t;
        }
    }
    for (int i = 1; i < n; ++i) {
        double s = b[i];
        for (int j = 0; j < i; ++j) s -= lu[i * n + j] * b[j];
        b[i] = s;
    }
    for (int i = n - 1; i >= 0; --i) {
        double s = b[i];
        for (int j = i + 1; j < n; ++j) s -= lu[i * n + j] * b[j];
        b[i] = s * lu[i * n + i];
    }
}

void hymo_lu_solve_transpose(int n, const double *lu, const int *piv, double *b)
{
    /* A = P^T L U  =>  A^T = U^T L^T P */
    for (int i = 0; i < n; ++i) {
        double s = b[i];
        for (int j = 0; j < i; ++j) s -= lu[j * n + i] * b[j];
        b[i] = s * lu[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) {
        double s = b[i];
        for (int j = i + 1; j < n; ++j) s -= lu[j * n + i] * b[j];
        b[i] = s;
    }
    for (int k = n - 1; k >= 0; --k) {
        if (piv[k] != k) {
            double t = b[k];
            b[k] = b[piv[k]];
            b[piv[k]] = t;
        }
    }
}

/* a row of the work copy that has given its pivot holds NaN */
static int row_used(const double *w, int n, int i) { return n > 0 && isnan(w[(size_t)i * n]); }

double hymo_full_pivot_columns(int m, int n, const double *a, double *w, const unsigned char *allowed,
                               unsigned char *pivot_col)
{
    memcpy(w, a, (size_t)m * (size_t)n * sizeof(double));
    memset(pivot_col, 0, (size_t)n);
    /* a row that has given its pivot is filled with NaN in the work copy:
     * no search or elimination reads it again (no size limit on m, no
     * allocation: this runs inside the step loop) */
    double smallest = INFINITY;
    for (int k = 0; k < m; ++k) {
        int pr = -1, pc = -1;
        double best = -1.0;
        for (int i = 0; i < m; ++i) {
            if (row_used(w, n, i)) continue;
            for (int j = 0; j < n; ++j) {
                if (pivot_col[j] || (allowed && !allowed[j])) continue;
                double v = fabs(w[i * n + j]);
                if (v > best) {
                    best = v;
                    pr = i;
                    pc = j;
                }
            }
        }
        if (pr < 0 || !(best > 0.0)) return 0.0;
        pivot_col[pc] = 1;
        if (best < smallest) smallest = best;
        for (int i = 0; i < m; ++i) {
            if (i == pr || row_used(w, n, i)) continue;
            double l = w[i * n + pc] / w[pr * n + pc];
            for (int j = 0; j < n; ++j) w[i * n + j] -= l * w[pr * n + j];
        }
        for (int j = 0; j < n; ++j) w[pr * n + j] = NAN; /* used */
    }
    return smallest;
}

double hymo_norm_inf(int n, const double *v)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) {
        double a = fabs(v[i]);
        if (a > s || a != a) s = a;
    }
    return s;
}
