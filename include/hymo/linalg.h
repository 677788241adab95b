/* hymo — small dense linear algebra (row-major, no allocation): LU with
 * partial pivoting, full-pivoting column selection, norms.  Used inside
 * the step loop by the engine, the formulations, the hydraulics and
 * co-simulation subsystems. */
#ifndef HYMO_LINALG_H
#define HYMO_LINALG_H

/* LU with partial pivoting of the n x n matrix a (in place; U's diagonal is
 * stored as its reciprocals, so that the solves multiply). Returns 0, or 1
 * if a pivot is exactly zero or not finite. */
int hymo_lu_factor(int n, double *a, int *piv);
/* Solves A x = b in place (b becomes x) with the factors lu and piv of A
 * from hymo_lu_factor. */
void hymo_lu_solve(int n, const double *lu, const int *piv, double *b);
/* Solves A^T x = b with the factors of A. */
void hymo_lu_solve_transpose(int n, const double *lu, const int *piv, double *b);

/* Gaussian elimination with full pivoting on the m x n matrix a (copied to
 * work, m*n doubles). Marks in `pivot_col` (size n) the columns holding a
 * pivot (1) and returns the smallest |pivot|. If `allowed` is non-NULL only
 * columns with allowed[j] != 0 may be chosen. */
double hymo_full_pivot_columns(int m, int n, const double *a, double *work, const unsigned char *allowed,
                               unsigned char *pivot_col);

/* max |v[i]| over the n entries (0 for n <= 0); NaN if an entry is NaN. */
double hymo_norm_inf(int n, const double *v);

#endif
