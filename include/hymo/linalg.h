/* hymo — small dense linear algebra (row-major, no allocation): LU with
 * partial pivoting, full-pivoting column selection, norms, union-find
 * (connected components); and a compressed-column sparse matrix.  Used inside
 * the step loop by the engine, the formulations, the hydraulics and
 * co-simulation subsystems. */
#ifndef HYMO_LINALG_H
#define HYMO_LINALG_H

/* The dense LU: partial pivoting (the first largest |entry| of the
 * column), right-looking, of the n x n matrix a in place, row-major or
 * column-major (LAPACK's layout; its factors are dgetrf's), with U's
 * diagonal stored as is or as its reciprocals (so that the solves
 * multiply), pivots 0- or 1-based (LAPACK's); flags HYMO_LU_*.  Returns 0,
 * or 1 if a pivot is exactly zero or not finite. */
enum { HYMO_LU_ROW_MAJOR = 1, HYMO_LU_INVERSE_DIAGONAL = 2, HYMO_LU_ONE_BASED_PIVOTS = 4 };
int hymo_lu_dense(int n, double *a, int *piv, unsigned flags);
/* hymo_lu_dense row-major with U's reciprocals: the formulations', the
 * compiled initial state's and the hydraulic subsystems' small systems
 * (the Newton matrix's is column-major, hymo_lu_unblocked in
 * src/solvers/linsol.h). */
int hymo_lu_factor(int n, double *a, int *piv);
/* hymo_lu_dense column-major with U's diagonal and 1-based pivots
 * (LAPACK's layout): the Newton matrix's (hymo_lu_unblocked). */
int hymo_lu_column_major(int n, double *a, int *piv);
/* Solves A x = b in place (b becomes x) with the factors lu and piv of A
 * from hymo_lu_factor. */
void hymo_lu_solve(int n, const double *lu, const int *piv, double *b);
/* Solves A^T x = b with the factors of A. */
void hymo_lu_solve_transpose(int n, const double *lu, const int *piv, double *b);

/* Union-find over the elements 0 .. n-1 (parent[n], path halving): each
 * set's root is its smallest element, so numbering the sets in the order
 * of their roots numbers them by their smallest element.  hymo_uf_init
 * makes n singletons; hymo_uf_find returns i's root; hymo_uf_union joins
 * the sets of a and b and returns the root of the union. */
void hymo_uf_init(int *parent, int n);
int hymo_uf_find(int *parent, int i);
int hymo_uf_union(int *parent, int a, int b);

/* Gaussian elimination with full pivoting on the m x n matrix a (copied to
 * work: m*n + 2*m doubles), over the columns with allowed[j] != 0 (all if
 * NULL): at most max_piv pivots, and none once the largest remaining |entry|
 * is <= rel_tol times the first pivot (or not > 0).  Marks the pivot
 * columns in col_mask (n) and the pivot rows in row_mask (m, may be NULL);
 * the smallest pivot in *smallest (INFINITY if none); returns the number
 * of pivots (the numerical rank of the allowed columns).  Each pivot is the
 * largest |entry| left, the first in row-major order among equal ones.
 * O(m n) plus O(n) per row that a pivot's column touches: a sparse matrix
 * (a ladder's Phi_z) costs O(m n), not O(m^2 n). */
int hymo_rank_pivots(int m, int n, const double *a, double *work, const unsigned char *allowed,
                     unsigned char *col_mask, unsigned char *row_mask, int max_piv, double rel_tol,
                     double *smallest);
/* hymo_rank_pivots with m pivots (work m*n + 2*m doubles): marks the pivot
 * columns in pivot_col (n) and returns the smallest |pivot|, 0 if there
 * are fewer than m. */
double hymo_full_pivot_columns(int m, int n, const double *a, double *work, const unsigned char *allowed,
                               unsigned char *pivot_col);

/* A sparse matrix by rows, as a view of arrays held elsewhere: row i's
 * non-zeros are the columns col[row_start[i] .. row_start[i + 1]),
 * ascending, with their values (a mechanism's Phi_z: the pattern is fixed
 * by the tree, formulations/constraints.h). */
typedef struct {
    int n_rows, n_cols;
    const int *row_start, *col;
    const double *value;
} hymo_csr;

/* sum_j a(i, j) x[j] over row i's non-zeros, in ascending column order */
static inline double hymo_csr_row_dot(const hymo_csr *a, int i, const double *x)
{
    double s = 0.0;
    for (int t = a->row_start[i]; t < a->row_start[i + 1]; ++t) s += a->value[t] * x[a->col[t]];
    return s;
}
/* entry (i, j) (binary search in row i), 0 outside the pattern */
static inline double hymo_csr_get(const hymo_csr *a, int i, int j)
{
    int lo = a->row_start[i], hi = a->row_start[i + 1] - 1;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2, c = a->col[mid];
        if (c == j) return a->value[mid];
        if (c < j) lo = mid + 1;
        else hi = mid - 1;
    }
    return 0.0;
}
/* the dense n_rows x n_cols row-major copy (zeros outside the pattern) */
void hymo_csr_dense(const hymo_csr *a, double *dense);

/* Work of hymo_rank_pivots_csr: the rows being eliminated, each in a slot
 * of a pool that grows (allocates) only when the fill-in of an
 * elimination exceeds every earlier one. */
typedef struct {
    int m, n;
    int *start, *len, *cap; /* m: each row's slot in the pool */
    int *order;             /* m: scratch (compaction) */
    int *pj;                /* pool: columns */
    double *pv;             /* pool: values */
    int pool_cap, pool_used;
    double *rmax;           /* m */
    int *rarg;              /* m */
    int *tj;                /* n: one merged row */
    double *tv;             /* n */
    int *colcnt;            /* n: live rows holding each column (threshold pivoting) */
    /* 0 (hymo_rank_work_alloc's): full pivoting, hymo_rank_pivots' pivots;
     * in (0, 1]: threshold pivoting, each pivot the entry with the fewest
     * Markowitz fill-ins (row entries - 1) x (column entries - 1) among
     * those >= threshold x the largest left (ties: the larger), which keeps
     * a banded matrix banded (a ladder's Phi_z: full pivoting grows O(m^2)
     * fill-in); *smallest is then the smallest pivot taken */
    double threshold;
} hymo_rank_work;

/* For m x n matrices with about nnz non-zeros; 0, or -1 out of memory. */
int hymo_rank_work_alloc(hymo_rank_work *w, int m, int n, int nnz);
void hymo_rank_work_free(hymo_rank_work *w);
/* hymo_rank_pivots on a sparse matrix: the same pivots, the same smallest
 * pivot and the same masks (each pivot the largest |entry| left, the first
 * in row-major order among equal ones; the eliminated entries are the
 * dense elimination's, bit for bit), in O(non-zeros + fill-in) memory;
 * O(m) per pivot to find the rows its column touches.  -1 if the pool
 * could not grow (out of memory). */
int hymo_rank_pivots_csr(const hymo_csr *a, hymo_rank_work *w, const unsigned char *allowed,
                         unsigned char *col_mask, unsigned char *row_mask, int max_piv, double rel_tol,
                         double *smallest);

/* max |v[i]| over the n entries (0 for n <= 0); NaN if an entry is NaN. */
double hymo_norm_inf(int n, const double *v);

/* A sparse matrix by compressed columns: the rows of column j are
 * row[col_start[j] .. col_start[j + 1]), ascending, each with its value.
 * Two uses: a fixed pattern set once (hymo_sparse_pattern: the circuit
 * derivatives), written through hymo_sparse_at; or a matrix filled column
 * by column (hymo_sparse_begin / _push / _end_column: the engine's Newton
 * matrix), whose arrays grow (allocate) only when it holds more entries
 * than ever before. */
typedef struct {
    int n_rows, n_cols;
    int *col_start; /* n_cols + 1 */
    int *row;       /* capacity */
    double *value;  /* capacity */
    int capacity;
    int nnz, n_done; /* filling: entries pushed, columns ended */
} hymo_sparse;

/* a[0..n) ascending (insertion sort: for the short row lists of a column) */
static inline void hymo_sort_ints(int *a, int n)
{
    for (int i = 1; i < n; ++i) {
        const int v = a[i];
        int c = i - 1;
        while (c >= 0 && a[c] > v) a[c + 1] = a[c], --c;
        a[c + 1] = v;
    }
}

/* Allocates an empty n_rows x n_cols matrix with room for `capacity`
 * entries; 0 on success, -1 out of memory. */
int hymo_sparse_alloc(hymo_sparse *s, int n_rows, int n_cols, int capacity);
/* The pattern of the n pairs (rows[k], cols[k]) (duplicates merged,
 * indices in range), values zero; 0 on success, -1 out of memory. */
int hymo_sparse_pattern(hymo_sparse *s, int n_rows, int n_cols, int n, const int *rows, const int *cols);
/* The complete n_rows x n_cols pattern, values zero: entry (i, j) is
 * value[j * n_rows + i] (column-major with leading dimension n_rows, so
 * that dense code can use value directly); 0, or -1 out of memory. */
int hymo_sparse_full(hymo_sparse *s, int n_rows, int n_cols);
void hymo_sparse_free(hymo_sparse *s);
/* The square block of J at rows and columns [r0, r0 + n) as a compressed
 * pattern for a sparse factorisation: into the pattern (Ap, Ai) the
 * block's values (zero elsewhere in it, Ax); 1 if a non-zero of the block
 * lies outside the pattern (then hymo_sparse_block_union). */
int hymo_sparse_block_fit(const hymo_sparse *J, int r0, int n, const int *Ap, const int *Ai, double *Ax);
/* hymo_sparse_block_fit with a map kept between calls: while J's pattern
 * over the block's columns is the one of the last call (checked by
 * comparing its column starts and rows), each entry goes straight to its
 * place in Ax (or is dropped, or reports an entry outside the pattern);
 * else the map is rebuilt, O(non-zeros), growing its arrays only beyond
 * the most entries seen.  The same values and return as
 * hymo_sparse_block_fit, or -1 out of memory.  Reset (hymo_sparse_fit_reset)
 * whenever (Ap, Ai) change. */
typedef struct {
    int valid, n, ne, cap;
    int *cs;  /* n + 1: J's column starts over the block's columns */
    int *row; /* ne: J's rows there */
    int *map; /* ne: place in Ax, -1 outside the block's rows, -2 outside the pattern */
} hymo_sparse_fit;
int hymo_sparse_block_fit_mapped(hymo_sparse_fit *fm, const hymo_sparse *J, int r0, int n, const int *Ap,
                                 const int *Ai, double *Ax);
static inline void hymo_sparse_fit_reset(hymo_sparse_fit *fm) { fm->valid = 0; }
void hymo_sparse_fit_free(hymo_sparse_fit *fm);
/* The pattern that only grows: the old one (Ap_old, Ai_old; NULL: none),
 * the block's non-zeros and the diagonal, rows ascending, in fresh arrays
 * (*Ap n + 1, *Ai and *Ax (*Ap)[n]) with the block's values; 0, or -1 out of
 * memory (nothing allocated then). */
int hymo_sparse_block_union(const hymo_sparse *J, int r0, int n, const int *Ap_old, const int *Ai_old, int **Ap,
                            int **Ai, double **Ax);
/* the address of entry (i, j), or NULL if it is outside the pattern
 * (binary search in column j) */
static inline double *hymo_sparse_at(const hymo_sparse *s, int i, int j)
{
    int lo = s->col_start[j], hi = s->col_start[j + 1] - 1;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2, r = s->row[mid];
        if (r == i) return &s->value[mid];
        if (r < i) lo = mid + 1;
        else hi = mid - 1;
    }
    return (double *)0;
}
/* entry (i, j), 0 outside the pattern */
double hymo_sparse_get(const hymo_sparse *s, int i, int j);
/* sets every stored value to zero (the pattern stays) */
void hymo_sparse_zero(hymo_sparse *s);
/* filling column by column: begin, then for each column its entries with
 * rows ascending and end_column; push returns -1 if growing failed */
void hymo_sparse_begin(hymo_sparse *s);
/* doubles the capacity; 0 on success, -1 out of memory */
int hymo_sparse_grow(hymo_sparse *s);
static inline int hymo_sparse_push(hymo_sparse *s, int i, double v)
{
    if (s->nnz == s->capacity && hymo_sparse_grow(s)) return -1;
    s->row[s->nnz] = i;
    s->value[s->nnz++] = v;
    return 0;
}
static inline void hymo_sparse_end_column(hymo_sparse *s) { s->col_start[++s->n_done] = s->nnz; }
/* ends the columns up to n_cols (empty) */
void hymo_sparse_finish(hymo_sparse *s);

#endif
