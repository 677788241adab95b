#include "hymo/linalg.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
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

/* largest |w[i, j]| over the allowed, unmasked columns and the first j
 * where it stands (-1 and -1.0 if none) */
static double row_max(const double *wi, int n, const unsigned char *allowed, const unsigned char *col_mask, int *arg)
{
    double best = -1.0;
    *arg = -1;
    for (int j = 0; j < n; ++j) {
        if (col_mask[j] || (allowed && !allowed[j])) continue;
        const double v = fabs(wi[j]);
        if (v > best) best = v, *arg = j;
    }
    return best;
}

int hymo_rank_pivots(int m, int n, const double *a, double *w, const unsigned char *allowed,
                     unsigned char *col_mask, unsigned char *row_mask, int max_piv, double rel_tol,
                     double *smallest)
{
    /* each row's largest |entry| (rmax, at column rarg; rarg -2: the row gave
     * its pivot) is kept: a pivot changes only the rows with a non-zero in
     * its column, which are rescanned.  The search over the row maxima finds
     * the pivot the whole-matrix scan finds (the first largest in row-major
     * order); rows whose multiplier is zero are left as they are (the scan's
     * update would change at most the sign of a zero), so the pivots are the
     * same as with the dense elimination. */
    const size_t mn = (size_t)m * (size_t)n;
    double *rmax = w + mn, *rarg = rmax + m; /* column indices as doubles (exact) */
    memcpy(w, a, mn * sizeof(double));
    memset(col_mask, 0, (size_t)n);
    if (row_mask) memset(row_mask, 0, (size_t)m);
    for (int i = 0; i < m; ++i) {
        int arg;
        rmax[i] = row_max(&w[(size_t)i * n], n, allowed, col_mask, &arg);
        rarg[i] = arg;
    }
    *smallest = INFINITY;
    double first = 0.0;
    int k = 0;
    for (; k < max_piv && k < m; ++k) {
        int pr = -1, pc = -1;
        double best = -1.0;
        for (int i = 0; i < m; ++i)
            if (rarg[i] >= 0.0 && rmax[i] > best) best = rmax[i], pr = i, pc = (int)rarg[i];
        if (pr < 0 || !(best > 0.0)) break;
        if (k == 0)
            first = best;
        else if (best <= rel_tol * first)
            break;
        col_mask[pc] = 1;
        if (best < *smallest) *smallest = best;
        const double *wp = &w[(size_t)pr * n];
        rarg[pr] = -2.0; /* used */
        if (row_mask) row_mask[pr] = 1;
        for (int i = 0; i < m; ++i) {
            if (rarg[i] == -2.0) continue;
            double *wi = &w[(size_t)i * n];
            const double l = wi[pc] / wp[pc];
            if (l == 0.0) continue; /* unchanged (its largest entry is not in column pc, or it is 0) */
            for (int j = 0; j < n; ++j) wi[j] -= l * wp[j];
            int arg;
            rmax[i] = row_max(wi, n, allowed, col_mask, &arg);
            rarg[i] = arg;
        }
    }
    return k;
}

double hymo_full_pivot_columns(int m, int n, const double *a, double *w, const unsigned char *allowed,
                               unsigned char *pivot_col)
{
    double smallest;
    return hymo_rank_pivots(m, n, a, w, allowed, pivot_col, NULL, m, 0.0, &smallest) == m ? smallest : 0.0;
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

/* ---------------- compressed-column sparse matrix ---------------- */


int hymo_sparse_alloc(hymo_sparse *s, int n_rows, int n_cols, int capacity)
{
    memset(s, 0, sizeof *s);
    s->n_rows = n_rows;
    s->n_cols = n_cols;
    s->col_start = calloc((size_t)n_cols + 1, sizeof(int));
    s->capacity = capacity > 0 ? capacity : 1;
    s->row = malloc((size_t)s->capacity * sizeof(int));
    s->value = calloc((size_t)s->capacity, sizeof(double));
    if (!s->col_start || !s->row || !s->value) {
        hymo_sparse_free(s);
        return -1;
    }
    s->n_done = n_cols;
    return 0;
}

void hymo_sparse_free(hymo_sparse *s)
{
    free(s->col_start);
    free(s->row);
    free(s->value);
    memset(s, 0, sizeof *s);
}

int hymo_sparse_pattern(hymo_sparse *s, int n_rows, int n_cols, int n, const int *rows, const int *cols)
{
    if (hymo_sparse_alloc(s, n_rows, n_cols, n)) return -1;
    int *cs = s->col_start;
    for (int k = 0; k < n; ++k) cs[cols[k] + 1]++;
    for (int j = 0; j < n_cols; ++j) cs[j + 1] += cs[j];
    int *fill = malloc(((size_t)n_cols + 1) * sizeof(int));
    if (!fill) {
        hymo_sparse_free(s);
        return -1;
    }
    memcpy(fill, cs, ((size_t)n_cols + 1) * sizeof(int));
    for (int k = 0; k < n; ++k) s->row[fill[cols[k]]++] = rows[k];
    free(fill);
    /* each column: sort its rows and merge duplicates */
    int q = 0;
    for (int j = 0; j < n_cols; ++j) {
        const int b = cs[j], e = cs[j + 1];
        hymo_sort_ints(s->row + b, e - b);
        cs[j] = q;
        for (int a = b; a < e; ++a)
            if (a == b || s->row[a] != s->row[a - 1]) s->row[q++] = s->row[a];
    }
    cs[n_cols] = q;
    s->nnz = q;
    return 0;
}

double hymo_sparse_get(const hymo_sparse *s, int i, int j)
{
    const double *v = hymo_sparse_at(s, i, j);
    return v ? *v : 0.0;
}

void hymo_sparse_zero(hymo_sparse *s) { memset(s->value, 0, (size_t)s->col_start[s->n_cols] * sizeof(double)); }

void hymo_sparse_begin(hymo_sparse *s)
{
    s->nnz = 0;
    s->n_done = 0;
    s->col_start[0] = 0;
}

int hymo_sparse_grow(hymo_sparse *s)
{
    const int cap = 2 * s->capacity;
    int *r = realloc(s->row, (size_t)cap * sizeof(int));
    if (r) s->row = r;
    double *x = realloc(s->value, (size_t)cap * sizeof(double));
    if (x) s->value = x;
    if (!r || !x) return -1;
    s->capacity = cap;
    return 0;
}

void hymo_sparse_finish(hymo_sparse *s)
{
    while (s->n_done < s->n_cols) hymo_sparse_end_column(s);
}

int hymo_sparse_block_fit(const hymo_sparse *J, int r0, int n, const int *Ap, const int *Ai, double *Ax)
{
    for (int j = 0; j < n; ++j) {
        int q = Ap[j];
        const int qe = Ap[j + 1];
        for (int z = q; z < qe; ++z) Ax[z] = 0.0;
        for (int e = J->col_start[r0 + j]; e < J->col_start[r0 + j + 1]; ++e) {
            const int i = J->row[e] - r0;
            if (i < 0 || i >= n) continue;
            while (q < qe && Ai[q] < i) ++q;
            if (q < qe && Ai[q] == i) Ax[q] = J->value[e];
            else if (J->value[e] != 0.0) return 1;
        }
    }
    return 0;
}

int hymo_sparse_block_union(const hymo_sparse *J, int r0, int n, const int *Ap_old, const int *Ai_old, int **Ap_out,
                            int **Ai_out, double **Ax_out)
{
    size_t nnz = 0;
    int *Ap = NULL, *Ai = NULL;
    double *Ax = NULL;
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1) {
            Ap = malloc(((size_t)n + 1) * sizeof(int));
            Ai = malloc((nnz > 0 ? nnz : 1) * sizeof(int));
            Ax = malloc((nnz > 0 ? nnz : 1) * sizeof(double));
            if (!Ap || !Ai || !Ax || nnz > (size_t)INT_MAX) {
                free(Ap), free(Ai), free(Ax);
                return -1;
            }
        }
        size_t q = 0;
        for (int j = 0; j < n; ++j) { /* merge: old rows, non-zero rows, the diagonal (all ascending) */
            int o = Ap_old ? Ap_old[j] : 0;
            const int oe = Ap_old ? Ap_old[j + 1] : 0;
            int e = J->col_start[r0 + j];
            const int ee = J->col_start[r0 + j + 1];
            while (e < ee && J->row[e] < r0) ++e;
            int diag = 0;
            if (pass == 1) Ap[j] = (int)q;
            for (;;) {
                while (e < ee && J->row[e] - r0 < n && J->value[e] == 0.0 && J->row[e] - r0 != j) ++e;
                const int ro = o < oe ? Ai_old[o] : INT_MAX,
                          rn = e < ee && J->row[e] - r0 < n ? J->row[e] - r0 : INT_MAX, rd = diag ? INT_MAX : j;
                int r = ro < rn ? ro : rn;
                if (rd < r) r = rd;
                if (r == INT_MAX) break;
                double v = 0.0;
                if (ro == r) ++o;
                if (rn == r) v = J->value[e++];
                if (rd == r) diag = 1;
                if (pass == 1) Ai[q] = r, Ax[q] = v;
                ++q;
            }
        }
        if (pass == 0) nnz = q;
        else Ap[n] = (int)q;
    }
    *Ap_out = Ap, *Ai_out = Ai, *Ax_out = Ax;
    return 0;
}
