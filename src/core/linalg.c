#include "hymo/linalg.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

/* CALL(N) with N a constant for the sizes 1..8 (the formulations' small
 * systems, the seed models' Newton matrices), CALL(n) above. */
#define HYMO_SMALL_N(n, CALL)                                                                                         \
    switch (n) {                                                                                                       \
    case 1: CALL(1);                                                                                                   \
    case 2: CALL(2);                                                                                                   \
    case 3: CALL(3);                                                                                                   \
    case 4: CALL(4);                                                                                                   \
    case 5: CALL(5);                                                                                                   \
    case 6: CALL(6);                                                                                                   \
    case 7: CALL(7);                                                                                                   \
    case 8: CALL(8);                                                                                                   \
    default: CALL(n);                                                                                                  \
    }

static inline int lu_dense(int n, double *a, int *piv, unsigned flags)
{
    /* Element (i, j) is a[i * rs + j * cs]; a "line" is a contiguous row
     * (row-major) or column (column-major): element q of line o is
     * a[o * n + q].  The update of the trailing matrix runs along lines in
     * both layouts: line o loses m_o times line k from position k + 1 on,
     * with m_o the line's element k.  Row-major: line o is row o, m_o =
     * l_ok and line k holds U's row k; column-major: line o is column o,
     * m_o = u_ko and line k holds L's column k.  Each entry (i, j) gets the
     * same products l_ik u_kj in the same order k = 0, 1, ... either way. */
    const int row_major = (flags & HYMO_LU_ROW_MAJOR) != 0;
    const size_t N = (size_t)n, rs = row_major ? N : 1, cs = row_major ? 1 : N;
    for (int k = 0; k < n; ++k) {
        const size_t kk = (size_t)k;
        int p = k;
        double best = fabs(a[kk * rs + kk * cs]);
        for (int i = k + 1; i < n; ++i) {
            const double v = fabs(a[(size_t)i * rs + kk * cs]);
            if (v > best) {
                best = v;
                p = i;
            }
        }
        piv[k] = (flags & HYMO_LU_ONE_BASED_PIVOTS) ? p + 1 : p;
        if (!(best > 0.0) || !isfinite(best)) return 1;
        if (p != k)
            for (size_t j = 0; j < N; ++j) {
                const double t = a[kk * rs + j * cs];
                a[kk * rs + j * cs] = a[(size_t)p * rs + j * cs];
                a[(size_t)p * rs + j * cs] = t;
            }
        const double inv = 1.0 / a[kk * rs + kk * cs];
        if (flags & HYMO_LU_INVERSE_DIAGONAL) a[kk * rs + kk * cs] = inv; /* the solves multiply */
        for (size_t i = kk + 1; i < N; ++i) a[i * rs + kk * cs] *= inv; /* L's column k */
        const double *line_k = &a[kk * N];
        for (size_t o = kk + 1; o < N; ++o) {
            double *line_o = &a[o * N];
            const double m = line_o[kk];
            if (m != 0.0)
                for (size_t q = kk + 1; q < N; ++q) line_o[q] -= m * line_k[q];
        }
    }
    return 0;
}

/* One body, compiled for each layout the code uses (the flags constant),
 * and for each size up to 8 with the size constant as well
 * (the loops unrolled: the same operations in the same order). */
int hymo_lu_dense(int n, double *a, int *piv, unsigned flags) { return lu_dense(n, a, piv, flags); }

#define LU_ROW_FLAGS (HYMO_LU_ROW_MAJOR | HYMO_LU_INVERSE_DIAGONAL)
int hymo_lu_factor(int n, double *a, int *piv)
{
#define LU_ROW(N) return lu_dense(N, a, piv, LU_ROW_FLAGS)
    HYMO_SMALL_N(n, LU_ROW);
#undef LU_ROW
}

int hymo_lu_column_major(int n, double *a, int *piv)
{
#define LU_COL(N) return lu_dense(N, a, piv, HYMO_LU_ONE_BASED_PIVOTS)
    HYMO_SMALL_N(n, LU_COL);
#undef LU_COL
}

static inline void lu_solve(int n, const double *lu, const int *piv, double *b);

void hymo_lu_solve(int n, const double *lu, const int *piv, double *b)
{
#define LU_SOLVE(N) return lu_solve(N, lu, piv, b)
    HYMO_SMALL_N(n, LU_SOLVE);
#undef LU_SOLVE
}

static inline void lu_solve(int n, const double *lu, const int *piv, double *b)
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

void hymo_csr_dense(const hymo_csr *a, double *dense)
{
    const size_t n = (size_t)a->n_cols;
    memset(dense, 0, (size_t)a->n_rows * n * sizeof(double));
    for (int i = 0; i < a->n_rows; ++i)
        for (int t = a->row_start[i]; t < a->row_start[i + 1]; ++t) dense[(size_t)i * n + a->col[t]] = a->value[t];
}

int hymo_rank_work_alloc(hymo_rank_work *w, int m, int n, int nnz)
{
    memset(w, 0, sizeof *w);
    w->m = m, w->n = n;
    const size_t mm = (size_t)(m > 0 ? m : 1), nn = (size_t)(n > 0 ? n : 1);
    w->pool_cap = 2 * (nnz > 0 ? nnz : 1) + 4 * (int)mm;
    w->start = malloc(mm * sizeof(int)), w->len = malloc(mm * sizeof(int)), w->cap = malloc(mm * sizeof(int));
    w->order = malloc(mm * sizeof(int));
    w->colcnt = malloc(nn * sizeof(int));
    w->rarg = malloc(mm * sizeof(int)), w->rmax = malloc(mm * sizeof(double));
    w->tj = malloc(nn * sizeof(int)), w->tv = malloc(nn * sizeof(double));
    w->pj = malloc((size_t)w->pool_cap * sizeof(int)), w->pv = malloc((size_t)w->pool_cap * sizeof(double));
    if (!w->start || !w->len || !w->cap || !w->order || !w->colcnt || !w->rarg || !w->rmax || !w->tj || !w->tv || !w->pj || !w->pv) {
        hymo_rank_work_free(w);
        return -1;
    }
    return 0;
}

void hymo_rank_work_free(hymo_rank_work *w)
{
    free(w->start), free(w->len), free(w->cap), free(w->order), free(w->colcnt), free(w->rarg), free(w->rmax);
    free(w->tj), free(w->tv), free(w->pj), free(w->pv);
    memset(w, 0, sizeof *w);
}

/* room for `need` more entries at the pool's end (a row's new slot when
 * its fill-in outgrows the old one): the rows still in use (not retired
 * as pivot rows, or row `keep`) are first moved to the pool's front in the
 * order of their slots, each keeping its slack; the pool grows (allocates)
 * only if that leaves too little room, i.e. past the largest use so far */
static int rank_pool_reserve(hymo_rank_work *w, int need, int keep)
{
    if (w->pool_used + need <= w->pool_cap) return 0;
    int *order = w->order, n = 0;
    for (int i = 0; i < w->m; ++i)
        if (w->rarg[i] != -2 || i == keep) order[n++] = i;
    for (int a = 1; a < n; ++a) { /* by slot (insertion sort: compactions are rare) */
        const int v = order[a];
        int c = a - 1;
        while (c >= 0 && w->start[order[c]] > w->start[v]) order[c + 1] = order[c], --c;
        order[c + 1] = v;
    }
    int used = 0;
    for (int a = 0; a < n; ++a) { /* each row moves down (or stays) */
        const int i = order[a];
        memmove(&w->pj[used], &w->pj[w->start[i]], (size_t)w->len[i] * sizeof(int));
        memmove(&w->pv[used], &w->pv[w->start[i]], (size_t)w->len[i] * sizeof(double));
        w->start[i] = used;
        used += w->cap[i];
    }
    w->pool_used = used;
    if (w->pool_used + need <= w->pool_cap) return 0;
    const int cap = 2 * (w->pool_used + need);
    int *pj = realloc(w->pj, (size_t)cap * sizeof(int));
    if (!pj) return -1;
    w->pj = pj;
    double *pv = realloc(w->pv, (size_t)cap * sizeof(double));
    if (!pv) return -1;
    w->pv = pv;
    w->pool_cap = cap;
    return 0;
}

static double row_max_sparse(const int *cj, const double *v, int len, const unsigned char *allowed,
                             const unsigned char *col_mask, int *arg)
{
    double best = -1.0;
    *arg = -1;
    for (int t = 0; t < len; ++t) {
        const int j = cj[t];
        if (col_mask[j] || (allowed && !allowed[j])) continue;
        const double a = fabs(v[t]);
        if (a > best) best = a, *arg = j;
    }
    return best;
}

int hymo_rank_pivots_csr(const hymo_csr *a, hymo_rank_work *w, const unsigned char *allowed,
                         unsigned char *col_mask, unsigned char *row_mask, int max_piv, double rel_tol,
                         double *smallest)
{
    /* hymo_rank_pivots' elimination on the stored entries: a row without
     * an allowed non-zero has maximum -1 where the dense scan finds 0, which
     * changes no pivot (one needs a maximum > 0); an entry outside row i's
     * pattern is the dense 0, so "0 - l p" and "x - l 0" are the dense
     * results; the pivot column's entries are dropped from the eliminated
     * rows (the dense scan keeps their round-off but, the column masked,
     * never reads them again). */
    const int m = a->n_rows, n = a->n_cols;
    int *rarg = w->rarg;
    double *rmax = w->rmax;
    memset(col_mask, 0, (size_t)n);
    if (row_mask) memset(row_mask, 0, (size_t)m);
    w->pool_used = 0;
    for (int i = 0; i < m; ++i) rarg[i] = -2; /* nothing to keep */
    if (rank_pool_reserve(w, a->row_start[m], -1)) return -1;
    for (int i = 0; i < m; ++i) {
        const int b = a->row_start[i], len = a->row_start[i + 1] - b;
        w->start[i] = w->pool_used, w->len[i] = w->cap[i] = len;
        memcpy(&w->pj[w->pool_used], &a->col[b], (size_t)len * sizeof(int));
        memcpy(&w->pv[w->pool_used], &a->value[b], (size_t)len * sizeof(double));
        w->pool_used += len;
        rmax[i] = row_max_sparse(&w->pj[w->start[i]], &w->pv[w->start[i]], len, allowed, col_mask, &rarg[i]);
    }
    int *cnt = w->colcnt; /* threshold pivoting: live rows holding each column */
    if (w->threshold > 0.0) {
        memset(cnt, 0, (size_t)n * sizeof(int));
        for (int t = 0; t < a->row_start[m]; ++t) cnt[a->col[t]]++;
    }
    *smallest = INFINITY;
    double first = 0.0;
    int k = 0;
    for (; k < max_piv && k < m; ++k) {
        int pr = -1, pc = -1;
        double best = -1.0;
        for (int i = 0; i < m; ++i)
            if (rarg[i] >= 0 && rmax[i] > best) best = rmax[i], pr = i, pc = rarg[i];
        if (pr < 0 || !(best > 0.0)) break;
        if (k == 0)
            first = best;
        else if (best <= rel_tol * first)
            break;
        if (w->threshold > 0.0) { /* the sparsest of the entries >= threshold x the largest */
            long cost = -1;
            const double floor = w->threshold * best;
            for (int i = 0; i < m; ++i) {
                if (rarg[i] < 0 || rmax[i] < floor) continue;
                for (int t = 0; t < w->len[i]; ++t) {
                    const int j = w->pj[w->start[i] + t];
                    const double v = fabs(w->pv[w->start[i] + t]);
                    if (col_mask[j] || (allowed && !allowed[j]) || !(v >= floor)) continue;
                    const long c = (long)(w->len[i] - 1) * (long)(cnt[j] - 1);
                    if (cost < 0 || c < cost || (c == cost && v > best)) cost = c, best = v, pr = i, pc = j;
                }
            }
            for (int t = 0; t < w->len[pr]; ++t) cnt[w->pj[w->start[pr] + t]]--; /* row pr retires */
        }
        col_mask[pc] = 1;
        if (best < *smallest) *smallest = best;
        rarg[pr] = -2; /* used */
        if (row_mask) row_mask[pr] = 1;
        double piv = 0.0;
        for (int t = 0; t < w->len[pr]; ++t)
            if (w->pj[w->start[pr] + t] == pc) piv = w->pv[w->start[pr] + t];
        for (int i = 0; i < m; ++i) {
            if (rarg[i] == -2) continue;
            const int *ci = &w->pj[w->start[i]];
            const double *vi = &w->pv[w->start[i]];
            int lo = 0, hi = w->len[i] - 1, at = -1;
            while (lo <= hi && at < 0) {
                const int mid = (lo + hi) / 2;
                if (ci[mid] == pc) at = mid;
                else if (ci[mid] < pc) lo = mid + 1;
                else hi = mid - 1;
            }
            if (at < 0) continue;
            const double l = vi[at] / piv;
            if (l == 0.0) continue; /* unchanged, as in the dense scan */
            const int *cp = &w->pj[w->start[pr]];
            const double *vp = &w->pv[w->start[pr]];
            const int li = w->len[i], lp = w->len[pr];
            int x = 0, y = 0, q = 0; /* row i - l row pr, merged by column, into tj/tv */
            while (x < li || y < lp) {
                int j;
                double v;
                if (y >= lp || (x < li && ci[x] < cp[y])) j = ci[x], v = vi[x], ++x;
                else if (x >= li || cp[y] < ci[x]) j = cp[y], v = 0.0 - l * vp[y], ++y;
                else j = ci[x], v = vi[x] - l * vp[y], ++x, ++y;
                if (!col_mask[j]) w->tj[q] = j, w->tv[q++] = v;
            }
            if (w->threshold > 0.0) {
                for (int t = 0; t < li; ++t) cnt[ci[t]]--;
                for (int t = 0; t < q; ++t) cnt[w->tj[t]]++;
            }
            if (q > w->cap[i]) { /* a new slot with room to grow as much again */
                const int cap = 2 * q < n ? 2 * q : n;
                w->len[i] = 0, w->cap[i] = 0; /* nothing to move */
                if (rank_pool_reserve(w, cap, pr)) return -1;
                w->start[i] = w->pool_used, w->cap[i] = cap;
                w->pool_used += cap;
            }
            memcpy(&w->pj[w->start[i]], w->tj, (size_t)q * sizeof(int));
            memcpy(&w->pv[w->start[i]], w->tv, (size_t)q * sizeof(double));
            w->len[i] = q;
            rmax[i] = row_max_sparse(w->tj, w->tv, q, allowed, col_mask, &rarg[i]);
        }
    }
    return k;
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
    /* the pairs' columns bucketed by row (a counting sort), then dealt to
     * the columns row by row in ascending order: each column receives its
     * rows sorted, and seen (the last row a column took) keeps each once;
     * O(n + n_rows + n_cols) for any number and order of duplicates */
    int *rs = calloc((size_t)n_rows + 1, sizeof(int)), *by_row = malloc(((size_t)n + 1) * sizeof(int));
    int *seen = malloc(((size_t)n_cols + 1) * sizeof(int));
    if (!rs || !by_row || !seen) {
        free(rs), free(by_row), free(seen);
        hymo_sparse_free(s);
        return -1;
    }
    for (int k = 0; k < n; ++k) rs[rows[k] + 1]++;
    for (int i = 0; i < n_rows; ++i) rs[i + 1] += rs[i];
    for (int k = 0; k < n; ++k) by_row[rs[rows[k]]++] = cols[k]; /* rs[i]: now row i's end */
    int *cs = s->col_start;
    for (int j = 0; j < n_cols; ++j) seen[j] = -1;
    for (int i = 0, b = 0; i < n_rows; b = rs[i++]) /* the distinct pairs: count per column */
        for (int a = b; a < rs[i]; ++a)
            if (seen[by_row[a]] != i) seen[by_row[a]] = i, cs[by_row[a] + 1]++;
    for (int j = 0; j < n_cols; ++j) cs[j + 1] += cs[j], seen[j] = -1;
    for (int i = 0, b = 0; i < n_rows; b = rs[i++])
        for (int a = b; a < rs[i]; ++a) {
            const int j = by_row[a];
            if (seen[j] != i) seen[j] = i, s->row[cs[j]++] = i;
        }
    for (int j = n_cols; j > 0; --j) cs[j] = cs[j - 1]; /* cs[j] was column j's end */
    cs[0] = 0;
    free(rs), free(by_row), free(seen);
    s->nnz = cs[n_cols];
    return 0;
}

int hymo_sparse_full(hymo_sparse *s, int n_rows, int n_cols)
{
    const size_t n = (size_t)n_rows * (size_t)n_cols;
    if (n > (size_t)INT_MAX || hymo_sparse_alloc(s, n_rows, n_cols, n > 0 ? (int)n : 1)) return -1;
    for (int j = 0; j <= n_cols; ++j) s->col_start[j] = j * n_rows;
    for (int j = 0; j < n_cols; ++j)
        for (int i = 0; i < n_rows; ++i) s->row[(size_t)j * n_rows + i] = i;
    s->nnz = (int)n;
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

int hymo_sparse_block_fit_mapped(hymo_sparse_fit *fm, const hymo_sparse *J, int r0, int n, const int *Ap,
                                 const int *Ai, double *Ax)
{
    const int *cs = J->col_start + r0, e0 = cs[0], ne = cs[n] - e0;
    if (!fm->valid || fm->n != n || fm->ne != ne || memcmp(fm->cs, cs, ((size_t)n + 1) * sizeof(int)) ||
        memcmp(fm->row, J->row + e0, (size_t)ne * sizeof(int))) {
        fm->valid = 0;
        if (fm->n != n || !fm->cs) {
            int *c = realloc(fm->cs, ((size_t)n + 1) * sizeof(int));
            if (!c) return -1;
            fm->cs = c, fm->n = n;
        }
        if (ne > fm->cap || !fm->row) {
            const size_t cap = ne > 0 ? (size_t)ne : 1;
            int *r = realloc(fm->row, cap * sizeof(int));
            if (r) fm->row = r;
            int *m = realloc(fm->map, cap * sizeof(int));
            if (m) fm->map = m;
            if (!r || !m) return -1;
            fm->cap = (int)cap;
        }
        memcpy(fm->cs, cs, ((size_t)n + 1) * sizeof(int));
        memcpy(fm->row, J->row + e0, (size_t)ne * sizeof(int));
        fm->ne = ne;
        for (int j = 0; j < n; ++j) { /* the merge of hymo_sparse_block_fit */
            int q = Ap[j];
            const int qe = Ap[j + 1];
            for (int e = cs[j]; e < cs[j + 1]; ++e) {
                const int i = J->row[e] - r0;
                if (i < 0 || i >= n) {
                    fm->map[e - e0] = -1;
                    continue;
                }
                while (q < qe && Ai[q] < i) ++q;
                fm->map[e - e0] = q < qe && Ai[q] == i ? q : -2;
            }
        }
        fm->valid = 1;
    }
    memset(Ax, 0, (size_t)Ap[n] * sizeof(double));
    const double *v = J->value + e0;
    for (int e = 0; e < ne; ++e) {
        const int m = fm->map[e];
        if (m >= 0) Ax[m] = v[e];
        else if (m == -2 && v[e] != 0.0) return 1;
    }
    return 0;
}

void hymo_sparse_fit_free(hymo_sparse_fit *fm)
{
    free(fm->cs), free(fm->row), free(fm->map);
    memset(fm, 0, sizeof *fm);
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

/* ---- union-find (linalg.h) ---- */

void hymo_uf_init(int *parent, int n)
{
    for (int i = 0; i < n; ++i) parent[i] = i;
}

int hymo_uf_find(int *parent, int i)
{
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

int hymo_uf_union(int *parent, int a, int b)
{
    a = hymo_uf_find(parent, a);
    b = hymo_uf_find(parent, b);
    if (a == b) return a;
    if (a < b) return parent[b] = a;
    return parent[a] = b;
}
