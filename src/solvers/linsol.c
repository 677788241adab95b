/* Dense (LAPACKE, no allocation after creation) and KLU backends. */
#include "linsol.h"

#include "lazy_lib.h"

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
 * 1280. */
#define DENSE_UNBLOCKED_MAX 800

/* The dense LU column-major with 1-based pivots (linsol.h). */
int hymo_lu_unblocked(int n, double *a, lapack_int *ipiv)
{
    _Static_assert(sizeof(lapack_int) == sizeof(int), "lapack_int is int (LP64 LAPACK)");
    return hymo_lu_column_major(n, a, (int *)ipiv);
}

static int dense_factor(hymo_linsol *ls, const hymo_sparse *J)
{
    dense_impl *d = ls->impl;
    int n = ls->n;
    memset(d->lu, 0, (size_t)n * (size_t)n * sizeof(double));
    for (int j = 0; j < n; ++j)
        for (int e = J->col_start[j]; e < J->col_start[j + 1]; ++e) d->lu[(size_t)j * n + J->row[e]] = J->value[e];
    if (n <= DENSE_UNBLOCKED_MAX) return hymo_lu_unblocked(n, d->lu, d->ipiv);
    /* (LAPACK is loaded at this first use; a LAPACK that cannot be loaded
     * fails the factorisation like a singular matrix) */
    lapack_int info = hymo_lapack_dgetrf(LAPACK_COL_MAJOR, n, n, d->lu, n, d->ipiv);
    return info == 0 ? 0 : 1;
}

/* Forward/back substitution with the LAPACK factors (column-major, 1-based
 * ipiv); hand-written because dgetrs' call overhead dominates at n < 20. */
static inline void lu_solve_n(int n, const double *a, const lapack_int *ipiv, double *b)
{
    for (int k = 0; k < n; ++k) {
        int p = ipiv[k] - 1;
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

/* the same substitutions with n a constant for the small sizes (the
 * loops unrolled, the same operations in the same order) */
static void lu_solve_factors(int n, const double *a, const lapack_int *ipiv, double *b)
{
    switch (n) {
    case 1: lu_solve_n(1, a, ipiv, b); return;
    case 2: lu_solve_n(2, a, ipiv, b); return;
    case 3: lu_solve_n(3, a, ipiv, b); return;
    case 4: lu_solve_n(4, a, ipiv, b); return;
    case 5: lu_solve_n(5, a, ipiv, b); return;
    case 6: lu_solve_n(6, a, ipiv, b); return;
    case 7: lu_solve_n(7, a, ipiv, b); return;
    case 8: lu_solve_n(8, a, ipiv, b); return;
    default: lu_solve_n(n, a, ipiv, b);
    }
}

static void dense_solve(hymo_linsol *ls, double *b)
{
    dense_impl *d = ls->impl;
    lu_solve_factors(ls->n, d->lu, d->ipiv, b);
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

static const hymo_linsol_ops dense_ops = {
    .name = "dense",
    .factor = dense_factor,
    .solve = dense_solve,
    .destroy = dense_destroy,
    .set_block = NULL,
    .set_tree = NULL,
};

/* ---------------- KLU sparse LU ---------------- */

/* With a dense leading block of k unknowns (hymo_linsol_set_dense_block:
 * the mechanical unknowns, whose block M' + ... is dense for a chain in
 * relative coordinates), J = [A B; C D] is factorised as KLU on the
 * sparse D (the hydraulic unknowns) and the own dense LU of the Schur
 * complement S = A - B D^-1 C: KLU's sparse kernel on a dense k x k block
 * took ~9 instructions per flop (callgrind, chain of 256 links: 50 M
 * instructions per factorisation against ~12 M for the dense LU of S).
 * Only if that block is dense (SCHUR_DENSITY of it non-zero in the first
 * matrix): a ladder's M' (depth-2 tree) stays with KLU. */
typedef struct {
    int *Ap, *Ai; /* D's pattern (nd + 1, nnz): compressed columns, rows ascending */
    double *Ax;   /* nnz */
    hymo_sparse_fit fit; /* J's entries' places in Ax (reset with the pattern) */
    klu_symbolic *sym;
    klu_numeric *num;
    klu_common common;
    int k;                   /* dense leading block (0: KLU on the whole matrix) */
    int decided;             /* k was checked against the first matrix */
    int k_whole;             /* > 0: every unknown is in the block, taken with a tree only */
    double *S;               /* k x k: LU of the Schur complement */
    lapack_int *spiv;        /* k */
    double *w;               /* n scratch */
    int *Bp, *Bi, *Cp, *Ci;  /* B = J[0:k, k:n] by columns (nd + 1), C = J[k:n, 0:k] (k + 1) */
    double *Bx, *Cx;
    size_t Bcap, Ccap;
    /* D as independent blocks (the connected components of its pattern:
     * a chain's circuits), each factorised by the own dense LU, when every
     * block has at most BLOCK_MAX unknowns: a column of C then touches only
     * its blocks (D^-1 C costs O(nnz), not O(k nd)) */
    int use_blocks, nblk;
    int *blk_of, *blk_start, *blk_idx, *blk_local; /* nd, nblk + 1, nd, nd */
    size_t *blk_off;                               /* nblk + 1: offsets of the blocks' LU in blk */
    double *blk, *blk_rhs;                         /* sum of size^2, BLOCK_MAX */
    lapack_int *blk_piv;                           /* nd */
    int *blk_mark, *blk_list;                      /* nblk scratch */
    hymo_linsol_tree tree; /* ctx NULL: none */
    int tree_active;       /* the last factorisation of S is the tree's */
    double *tree_e;        /* k: diag(S - M') */
    double *tree_v;        /* k: a column of S - M', kept zero */
    int *tree_rows;        /* k: its rows written */
    unsigned char *tree_mark; /* k, kept zero */
} klu_impl;

static void klu_release(klu_impl *k)
{
    if (k->num) klu_free_numeric(&k->num, &k->common);
    if (k->sym) klu_free_symbolic(&k->sym, &k->common);
}

/* (Re)builds D's pattern (D = J[k:n, k:n]): the previous one, the
 * non-zeros of D and the diagonal.  The pattern only grows, so that entries
 * that are zero at times (a closed valve's flow derivatives) do not cause a
 * new analysis (and KLU's allocations) each time they come back.  The
 * arrays are sized to the pattern: they are allocated here, at the first
 * factorisation and when an entry outside the pattern becomes non-zero, as
 * klu_analyze allocates then too. */
static int klu_pattern(hymo_linsol *ls, klu_impl *k, const hymo_sparse *J)
{
    int *Ap, *Ai;
    double *Ax;
    if (hymo_sparse_block_union(J, k->k, ls->n - k->k, k->Ap, k->Ai, &Ap, &Ai, &Ax)) return 1;
    free(k->Ap), free(k->Ai), free(k->Ax);
    k->Ap = Ap, k->Ai = Ai, k->Ax = Ax;
    hymo_sparse_fit_reset(&k->fit);
    klu_release(k);
    return 0;
}

#define BLOCK_MAX 48

/* The connected components of D's pattern (union-find), and whether all
 * are small enough for the dense block path; the arrays are (re)allocated
 * with the pattern. */
static int blocks_setup(klu_impl *k, int nd)
{
    free(k->blk_of), free(k->blk_start), free(k->blk_idx), free(k->blk_local), free(k->blk_off), free(k->blk);
    free(k->blk_piv), free(k->blk_mark), free(k->blk_list), free(k->blk_rhs);
    k->blk_of = k->blk_start = k->blk_idx = k->blk_local = k->blk_mark = k->blk_list = NULL;
    k->blk_off = NULL, k->blk = k->blk_rhs = NULL, k->blk_piv = NULL;
    k->use_blocks = 0;
    const size_t n1 = (size_t)(nd > 0 ? nd : 1);
    int *parent = malloc(n1 * sizeof(int));
    k->blk_of = malloc(n1 * sizeof(int));
    k->blk_idx = malloc(n1 * sizeof(int));
    k->blk_local = malloc(n1 * sizeof(int));
    k->blk_start = calloc(n1 + 1, sizeof(int));
    if (!parent || !k->blk_of || !k->blk_idx || !k->blk_local || !k->blk_start) return free(parent), 1;
    hymo_uf_init(parent, nd);
    for (int j = 0; j < nd; ++j)
        for (int q = k->Ap[j]; q < k->Ap[j + 1]; ++q) hymo_uf_union(parent, k->Ai[q], j);
    int nb = 0; /* blocks numbered by their smallest unknown; blk_of from the roots */
    for (int i = 0; i < nd; ++i) {
        const int r = hymo_uf_find(parent, i);
        k->blk_of[i] = r == i ? nb++ : k->blk_of[r];
    }
    free(parent);
    k->nblk = nb;
    for (int i = 0; i < nd; ++i) k->blk_start[k->blk_of[i] + 1]++;
    int largest = 0;
    for (int b = 0; b < nb; ++b) {
        if (k->blk_start[b + 1] > largest) largest = k->blk_start[b + 1];
        k->blk_start[b + 1] += k->blk_start[b];
    }
    if (largest > BLOCK_MAX) return 0; /* KLU on the whole of D */
    k->blk_off = malloc(((size_t)nb + 1) * sizeof(size_t));
    k->blk_mark = calloc((size_t)(nb > 0 ? nb : 1), sizeof(int));
    k->blk_list = malloc((size_t)(nb > 0 ? nb : 1) * sizeof(int));
    k->blk_piv = malloc(n1 * sizeof(lapack_int));
    k->blk_rhs = malloc(BLOCK_MAX * sizeof(double));
    if (!k->blk_off || !k->blk_mark || !k->blk_list || !k->blk_piv || !k->blk_rhs) return 1;
    int *fill = k->blk_local; /* scratch: next slot per block, then the local indices */
    for (int b = 0; b < nb; ++b) fill[b] = k->blk_start[b];
    for (int i = 0; i < nd; ++i) k->blk_idx[fill[k->blk_of[i]]++] = i; /* ascending within a block */
    size_t off = 0;
    for (int b = 0; b < nb; ++b) {
        const size_t sz = (size_t)(k->blk_start[b + 1] - k->blk_start[b]);
        k->blk_off[b] = off;
        off += sz * sz;
        for (int q = k->blk_start[b]; q < k->blk_start[b + 1]; ++q) k->blk_local[k->blk_idx[q]] = q - k->blk_start[b];
    }
    k->blk_off[nb] = off;
    k->blk = malloc((off > 0 ? off : 1) * sizeof(double));
    if (!k->blk) return 1;
    k->use_blocks = 1;
    return 0;
}

static int blocks_factor(klu_impl *k, int nd)
{
    memset(k->blk, 0, k->blk_off[k->nblk] * sizeof(double));
    for (int j = 0; j < nd; ++j) {
        const int b = k->blk_of[j], sz = k->blk_start[b + 1] - k->blk_start[b];
        double *col = k->blk + k->blk_off[b] + (size_t)k->blk_local[j] * (size_t)sz;
        for (int q = k->Ap[j]; q < k->Ap[j + 1]; ++q) col[k->blk_local[k->Ai[q]]] = k->Ax[q];
    }
    for (int b = 0; b < k->nblk; ++b)
        if (hymo_lu_unblocked(k->blk_start[b + 1] - k->blk_start[b], k->blk + k->blk_off[b],
                              k->blk_piv + k->blk_start[b]))
            return 1;
    return 0;
}

static void lu_solve_factors(int n, const double *a, const lapack_int *ipiv, double *b);

/* x <- D^-1 x over block b (x indexed by D's unknowns) */
static void block_solve(klu_impl *k, int b, double *x)
{
    const int q0 = k->blk_start[b], sz = k->blk_start[b + 1] - q0;
    double *r = k->blk_rhs;
    for (int q = 0; q < sz; ++q) r[q] = x[k->blk_idx[q0 + q]];
    lu_solve_factors(sz, k->blk + k->blk_off[b], k->blk_piv + q0, r);
    for (int q = 0; q < sz; ++q) x[k->blk_idx[q0 + q]] = r[q];
}

/* x <- D^-1 x */
static void d_solve(klu_impl *k, int nd, double *x)
{
    if (!k->use_blocks) {
        klu_solve(k->sym, k->num, nd, 1, x, &k->common);
        return;
    }
    for (int b = 0; b < k->nblk; ++b) block_solve(k, b, x);
}

static int klu_factor_sparse(hymo_linsol *ls, klu_impl *k, const hymo_sparse *J)
{
    const int n = ls->n, kk = k->k, nd = n - kk;
    const int fit = k->Ap ? hymo_sparse_block_fit_mapped(&k->fit, J, kk, nd, k->Ap, k->Ai, k->Ax) : 1;
    if (fit < 0) return 1;
    const int grown = fit; /* an entry outside the pattern: extend it */
    if (grown) {
        if (klu_pattern(ls, k, J)) return 1;
        if (kk > 0 && blocks_setup(k, nd)) return 1;
    }
    if (k->use_blocks) return blocks_factor(k, nd);
    if (!k->sym) {
        k->sym = klu_analyze(nd, k->Ap, k->Ai, &k->common);
        if (!k->sym) return 1;
    }
    if (!k->num) {
        k->num = klu_factor(k->Ap, k->Ai, k->Ax, k->sym, &k->common);
        return k->num && k->common.status != KLU_SINGULAR ? 0 : 1;
    }
    if (klu_refactor(k->Ap, k->Ai, k->Ax, k->sym, k->num, &k->common) && k->common.status != KLU_SINGULAR)
        return 0;
    /* the pivot order of the last factorisation fails for these values
     * (e.g. a valve edge or check valve closed since): factorise afresh,
     * which chooses new pivots (same pattern and symbolic analysis) */
    klu_free_numeric(&k->num, &k->common);
    k->num = klu_factor(k->Ap, k->Ai, k->Ax, k->sym, &k->common);
    return k->num && k->common.status != KLU_SINGULAR ? 0 : 1;
}

/* The non-zeros of J's block rows [r0, r1) x columns [c0, c0 + nc) by
 * columns, rows relative to r0, into (P, I, X) of capacity *cap (grown here
 * when the block gains non-zeros: at the first factorisations only). */
static int gather_block(const hymo_sparse *J, int r0, int r1, int c0, int nc, int *P, int **Ip, double **Xp,
                        size_t *cap)
{
    size_t cnt = 0;
    for (int j = 0; j < nc; ++j)
        for (int e = J->col_start[c0 + j]; e < J->col_start[c0 + j + 1]; ++e)
            cnt += J->row[e] >= r0 && J->row[e] < r1 && J->value[e] != 0.0;
    if (cnt > *cap || !*Ip) {
        size_t c = cnt > 0 ? cnt : 1;
        int *Ii = realloc(*Ip, c * sizeof(int));
        if (Ii) *Ip = Ii;
        double *Xx = realloc(*Xp, c * sizeof(double));
        if (Xx) *Xp = Xx;
        if (!Ii || !Xx) return 1;
        *cap = c;
    }
    size_t q = 0;
    for (int j = 0; j < nc; ++j) {
        P[j] = (int)q;
        for (int e = J->col_start[c0 + j]; e < J->col_start[c0 + j + 1]; ++e) {
            const int i = J->row[e];
            if (i >= r0 && i < r1 && J->value[e] != 0.0) {
                (*Ip)[q] = i - r0;
                (*Xp)[q++] = J->value[e];
            }
        }
    }
    P[nc] = (int)q;
    return 0;
}

/* the leading block is taken as dense when this fraction of it is non-zero
 * in the first matrix */
#define SCHUR_DENSITY 0.25

/* Column j of the Schur complement A - B D^-1 C without M' (where the
 * matrix leaves it out) accumulated in Sj (length k, zero on entry, or holding
 * M''s column); with mark (k, kept zero) the rows written are listed in
 * rows[*nr].  O(non-zeros of the column's blocks). */
static void schur_column(klu_impl *k, const hymo_sparse *J, int j, double *Sj, unsigned char *mark, int *rows,
                         int *nr)
{
    const int kk = k->k, nd = J->n_cols - kk;
    double *w = k->w;
#define SCHUR_ADD(r, v)                                                                                           \
    do {                                                                                                          \
        const int r_ = (r);                                                                                       \
        if (mark && !mark[r_]) mark[r_] = 1, rows[(*nr)++] = r_;                                                  \
        Sj[r_] += (v);                                                                                            \
    } while (0)
    for (int e = J->col_start[j]; e < J->col_start[j + 1] && J->row[e] < kk; ++e) SCHUR_ADD(J->row[e], J->value[e]);
    if (k->Cp[j] == k->Cp[j + 1]) return;
    if (k->use_blocks) { /* only the blocks of C[:, j]'s rows (w is kept zero outside them) */
        int nb = 0;
        for (int e = k->Cp[j]; e < k->Cp[j + 1]; ++e) {
            const int r = k->Ci[e], b = k->blk_of[r];
            w[r] = k->Cx[e];
            if (!k->blk_mark[b]) k->blk_mark[b] = 1, k->blk_list[nb++] = b;
        }
        for (int t = 0; t < nb; ++t) {
            const int b = k->blk_list[t];
            k->blk_mark[b] = 0;
            block_solve(k, b, w);
            for (int qq = k->blk_start[b]; qq < k->blk_start[b + 1]; ++qq) {
                const int q = k->blk_idx[qq];
                const double x = w[q];
                w[q] = 0.0;
                if (x == 0.0) continue;
                for (int e = k->Bp[q]; e < k->Bp[q + 1]; ++e) SCHUR_ADD(k->Bi[e], -k->Bx[e] * x);
            }
        }
        return;
    }
    memset(w, 0, (size_t)nd * sizeof(double));
    for (int e = k->Cp[j]; e < k->Cp[j + 1]; ++e) w[k->Ci[e]] = k->Cx[e];
    klu_solve(k->sym, k->num, nd, 1, w, &k->common);
    for (int q = 0; q < nd; ++q) {
        const double x = w[q];
        if (x == 0.0) continue;
        for (int e = k->Bp[q]; e < k->Bp[q + 1]; ++e) SCHUR_ADD(k->Bi[e], -k->Bx[e] * x);
    }
#undef SCHUR_ADD
}

/* The tree's factorisation of a complement without M': 0 if its non-mass
 * part is diagonal (e) and the tree factorises M' + e, else 1 (then the
 * dense LU with M'). */
static int tree_outside(klu_impl *k, const hymo_sparse *J)
{
    const int kk = k->k;
    double *v = k->tree_v;
    int offdiag = 0, nr = 0;
    for (int j = 0; j < kk; ++j) {
        nr = 0;
        schur_column(k, J, j, v, k->tree_mark, k->tree_rows, &nr);
        k->tree_e[j] = v[j];
        for (int t = 0; t < nr; ++t) {
            const int r = k->tree_rows[t];
            if (r != j && v[r] != 0.0) offdiag = 1;
            v[r] = 0.0;
            k->tree_mark[r] = 0;
        }
    }
    if (offdiag) return 1;
    return k->tree.factor(k->tree.ctx, k->tree_e) ? 1 : 0;
}

static int klu_factor_dense(hymo_linsol *ls, const hymo_sparse *J)
{
    klu_impl *k = ls->impl;
    const int outside = k->tree.ctx != NULL; /* the matrix leaves M' to the tree */
    if (!k->decided && k->k > 0 && !outside) { /* a sparse leading block (a ladder's M') stays with KLU */
        size_t nz = 0;
        for (int j = 0; j < k->k; ++j)
            for (int e = J->col_start[j]; e < J->col_start[j + 1]; ++e)
                nz += J->row[e] < k->k && J->value[e] != 0.0;
        if ((double)nz < SCHUR_DENSITY * (double)k->k * (double)k->k) k->k = 0;
    }
    k->decided = 1;
    const int n = ls->n, kk = k->k, nd = n - kk;
    if (klu_factor_sparse(ls, k, J)) return 1;
    if (kk == 0) return 0;
    if (gather_block(J, 0, kk, kk, nd, k->Bp, &k->Bi, &k->Bx, &k->Bcap) ||
        gather_block(J, kk, n, 0, kk, k->Cp, &k->Ci, &k->Cx, &k->Ccap))
        return 1;
    if (k->use_blocks) memset(k->w, 0, (size_t)nd * sizeof(double));
    k->tree_active = 0;
    if (outside) {
        if (!tree_outside(k, J)) return k->tree_active = 1, 0;
    }
    if (!k->S) { /* the dense complement: at the first factorisation that needs it */
        k->S = malloc((size_t)kk * (size_t)kk * sizeof(double));
        if (!k->S) return 1;
    }
    const double *M = outside ? k->tree.mass(k->tree.ctx) : NULL;
    if (outside && !M) return 1;
    for (int j = 0; j < kk; ++j) { /* S[:, j] = A[:, j] (+ M'[:, j]) - B D^-1 C[:, j] */
        double *Sj = &k->S[(size_t)j * kk];
        if (M) memcpy(Sj, &M[(size_t)j * kk], (size_t)kk * sizeof(double)); /* symmetric: column j = row j */
        else memset(Sj, 0, (size_t)kk * sizeof(double));
        schur_column(k, J, j, Sj, NULL, NULL, NULL);
    }
    return hymo_lu_unblocked(kk, k->S, k->spiv);
}

static void klu_solve_dense(hymo_linsol *ls, double *b)
{
    klu_impl *k = ls->impl;
    const int n = ls->n, kk = k->k, nd = n - kk;
    double *bm = b, *bh = b + kk, *w = k->w;
    d_solve(k, nd, bh); /* y = D^-1 b_h */
    if (kk == 0) return;
    for (int q = 0; q < nd; ++q) { /* b_m - B y */
        const double y = bh[q];
        if (y == 0.0) continue;
        for (int e = k->Bp[q]; e < k->Bp[q + 1]; ++e) bm[k->Bi[e]] -= k->Bx[e] * y;
    }
    if (k->tree_active) k->tree.solve(k->tree.ctx, bm); /* x_m = S^-1 (b_m - B y) */
    else lu_solve_factors(kk, k->S, k->spiv, bm);
    memset(w, 0, (size_t)nd * sizeof(double));
    for (int j = 0; j < kk; ++j) /* x_h = y - D^-1 C x_m */
        for (int e = k->Cp[j]; e < k->Cp[j + 1]; ++e) w[k->Ci[e]] += k->Cx[e] * bm[j];
    d_solve(k, nd, w);
    for (int q = 0; q < nd; ++q) bh[q] -= w[q];
}

static void klu_destroy(hymo_linsol *ls)
{
    klu_impl *k = ls->impl;
    if (k) {
        klu_release(k);
        free(k->Ap);
        free(k->Ai);
        free(k->Ax);
        hymo_sparse_fit_free(&k->fit);
        free(k->S);
        free(k->spiv);
        free(k->w);
        free(k->Bp);
        free(k->Bi);
        free(k->Bx);
        free(k->Cp);
        free(k->Ci);
        free(k->Cx);
        free(k->blk_of), free(k->blk_start), free(k->blk_idx), free(k->blk_local), free(k->blk_off);
        free(k->blk), free(k->blk_piv), free(k->blk_mark), free(k->blk_list), free(k->blk_rhs);
        free(k->tree_e), free(k->tree_v), free(k->tree_rows), free(k->tree_mark);
        free(k);
    }
}


/* The dense Schur block pays off from this many leading unknowns on
 * (below it, KLU on the whole matrix, as for the shipped models). */
#define SCHUR_MIN 16

/* The arrays of the dense-block path for k leading unknowns (k <= n) */
static hymo_status block_alloc(hymo_linsol *ls, int k, hymo_error *err)
{
    klu_impl *d = ls->impl;
    const size_t kk = (size_t)k, nd = (size_t)(ls->n - k);
    d->spiv = malloc(kk * sizeof(lapack_int));
    d->w = malloc((size_t)ls->n * sizeof(double));
    d->Bp = malloc((nd + 1) * sizeof(int));
    d->Cp = malloc((kk + 1) * sizeof(int));
    if (!d->spiv || !d->w || !d->Bp || !d->Cp)
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (KLU with a dense block)");
    d->k = k;
    return HYMO_OK;
}

/* A block of every unknown (no hydraulic ones: a mechanism alone) is
 * kept for the tree (klu_set_tree): with it, the tree solves M' + diag(e)
 * and KLU is not called (D is empty); without it, KLU on the whole matrix. */
static hymo_status klu_set_block(hymo_linsol *ls, int k, hymo_error *err)
{
    if (k < SCHUR_MIN || k > ls->n) return HYMO_OK;
    if (k == ls->n) {
        ((klu_impl *)ls->impl)->k_whole = k;
        return HYMO_OK;
    }
    return block_alloc(ls, k, err);
}

static int klu_set_tree(hymo_linsol *ls, const hymo_linsol_tree *tree)
{
    klu_impl *k = ls->impl;
    if (k->k == 0 && k->k_whole > 0 && tree->n == k->k_whole) { /* a mechanism alone: the block is the whole matrix */
        hymo_error err;
        if (block_alloc(ls, k->k_whole, &err) != HYMO_OK) return k->k = 0, 0;
    }
    if (k->k == 0 || tree->n != k->k) return 0; /* no dense block: no use */
    const size_t n = (size_t)tree->n;
    free(k->tree_e), free(k->tree_v), free(k->tree_rows), free(k->tree_mark);
    k->tree_e = malloc(n * sizeof(double));
    k->tree_v = calloc(n, sizeof(double));
    k->tree_rows = malloc(n * sizeof(int));
    k->tree_mark = calloc(n, 1);
    if (!k->tree_e || !k->tree_v || !k->tree_rows || !k->tree_mark) { /* the dense LU, M' given */
        free(k->tree_e), free(k->tree_v), free(k->tree_rows), free(k->tree_mark);
        k->tree_e = k->tree_v = NULL, k->tree_rows = NULL, k->tree_mark = NULL;
        if (k->k == k->k_whole) k->k = 0; /* KLU on the whole matrix, as without the tree */
        return 0;
    }
    k->tree = *tree;
    return 1;
}

static const hymo_linsol_ops klu_ops = {
    .name = "klu",
    .factor = klu_factor_dense,
    .solve = klu_solve_dense,
    .destroy = klu_destroy,
    .set_block = klu_set_block,
    .set_tree = klu_set_tree,
};

hymo_status hymo_linsol_set_dense_block(hymo_linsol *ls, int k, hymo_error *err)
{
    return ls->ops->set_block ? ls->ops->set_block(ls, k, err) : HYMO_OK;
}

int hymo_linsol_set_tree(hymo_linsol *ls, const hymo_linsol_tree *tree)
{
    return ls->ops->set_tree ? ls->ops->set_tree(ls, tree) : 0;
}

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
