/* Linear solver interface (like SUNLinearSolver): a function table behind
 * which the dense LU (unblocked for small systems, LAPACKE dgetrf above 800
 * unknowns) and the KLU sparse LU sit.  Matrices are passed by compressed
 * columns (hymo_sparse, rows ascending; stored zeros are allowed and do
 * not enter KLU's pattern).  The KLU backend's pattern only grows (entries that were
 * ever non-zero stay in it), so it re-analyses only when an entry outside
 * it becomes non-zero, and otherwise refactors in place. */
#ifndef HYMO_LINSOL_H
#define HYMO_LINSOL_H

#include <lapacke.h> /* lapack_int */

#include "hymo/error.h"
#include "hymo/linalg.h"
#include "hymo/sim.h"

typedef struct hymo_linsol hymo_linsol;

/* The mechanical block of an open tree (no cut joints, every joint an
 * unknown, in order) is M' + (actuator, force-element and hydraulic terms);
 * where those terms are diagonal, the block and its Schur complement are
 * M' + diag(e), which the articulated-body recursion solves in O(n)
 * (hymo_kin_tree_factor) instead of the O(n^3) dense LU.  The engine's tree
 * mode provides it, and the matrices it then gives to factor leave M' out
 * of the leading block: the solver adds it, by the tree factorisation when
 * the rest of the complement is diagonal (checked over its non-zeros at
 * each factorisation, O(nnz)), else by M' from mass() into the dense LU of
 * the complement (allocated then).  Neither M' nor an n x n array is formed
 * while the tree serves: memory stays O(nnz). */
typedef struct hymo_linsol_tree {
    void *ctx;
    int n;                                     /* the block's unknowns */
    const double *(*mass)(void *ctx);          /* M' now (n x n, symmetric); NULL: out of memory */
    int (*factor)(void *ctx, const double *e); /* M' + diag(e): 0, or 1 (then the dense LU) */
    void (*solve)(void *ctx, double *x);       /* x <- (M' + diag(e))^-1 x */
} hymo_linsol_tree;

typedef struct {
    const char *name;
    /* 0 on success, > 0 if the matrix is singular */
    int (*factor)(hymo_linsol *ls, const hymo_sparse *J);
    /* solves in place: b <- A^{-1} b */
    void (*solve)(hymo_linsol *ls, double *b);
    void (*destroy)(hymo_linsol *ls);
    /* the leading k unknowns form a dense block (hymo_linsol_set_dense_block);
     * NULL: the backend has no use for it (dense) */
    hymo_status (*set_block)(hymo_linsol *ls, int k, hymo_error *err);
    /* an O(n) solver of the dense block's tree structure (hymo_linsol_set_tree);
     * 1 if taken; NULL: the backend has no use for it */
    int (*set_tree)(hymo_linsol *ls, const struct hymo_linsol_tree *tree);
} hymo_linsol_ops;

struct hymo_linsol {
    const hymo_linsol_ops *ops;
    int n;
    void *impl;
};

hymo_status hymo_linsol_create(hymo_linsol_kind kind, int n, hymo_linsol **out, hymo_error *err);
void hymo_linsol_free(hymo_linsol *ls);
/* KLU: the leading k unknowns form a dense block (the mechanical ones):
 * from 16 of them on, J = [A B; C D] is factorised as KLU on D and the
 * dense LU of A - B D^-1 C (src/solvers/linsol.c); the dense solver ignores it. */
hymo_status hymo_linsol_set_dense_block(hymo_linsol *ls, int k, hymo_error *err);
/* 1 if the backend takes the tree solver (KLU with a dense block of tree->n
 * unknowns), else 0: then the matrices must hold M' */
int hymo_linsol_set_tree(hymo_linsol *ls, const hymo_linsol_tree *tree);

/* The dense LU (hymo_lu_dense, hymo/linalg.h) of the column-major n x n
 * matrix a in place, U's diagonal as is and 1-based ipiv: LAPACK dgetf2's
 * algorithm and layout.  The dense solver's factorisation up to its size
 * threshold (bench/bench_lu times it against dgetrf), and its factors are
 * dgetrf's: the solves above the threshold share them. */
int hymo_lu_unblocked(int n, double *a, lapack_int *ipiv);

#endif
