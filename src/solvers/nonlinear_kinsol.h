/* Dense nonlinear solves with SUNDIALS KINSOL (internal): Newton with an
 * analytic Jacobian, a fresh Jacobian every iteration (exact Newton) and
 * KINSOL's line search (KIN_LINESEARCH) as the globalisation.  Used for the
 * initial state of a model (src/compile/compile.c: assembly and static
 * equilibrium), never inside the step loop (it allocates). */
#ifndef HYMO_NONLINEAR_KINSOL_H
#define HYMO_NONLINEAR_KINSOL_H

#include "hymo/error.h"

typedef struct {
    int n; /* unknowns = equations (KINSOL solves square systems) */
    /* f = F(x); returns 0, > 0 if x is not acceptable (KINSOL shortens the
     * step), < 0 to stop */
    int (*residual)(const double *x, double *f, void *user);
    /* J = dF/dx at x, column-major with leading dimension n, zeroed on entry */
    int (*jacobian)(const double *x, double *J, void *user);
    void *user;
    double f_scale;   /* uniform scale of F (KINSOL's fscale, 1 / typical size) */
    double x_scale;   /* uniform scale of x (KINSOL's uscale) */
    double fnorm_tol; /* converged when max_i |F_i| f_scale <= fnorm_tol */
    double step_tol;  /* KINSOL's scaled step tolerance (see accept_tol) */
    /* A stop short of fnorm_tol (KINSOL: step below step_tol, or a line
     * search that cannot lower a residual already at round-off level) is
     * accepted if max_i |F_i| f_scale <= accept_tol. */
    double accept_tol;
    double max_step; /* largest Newton step, scaled 2-norm (0: KINSOL's default) */
    long max_iter;
} hymo_kinsol_problem;

typedef struct {
    int flag;            /* KINSOL's return flag */
    long iterations;     /* nonlinear iterations */
    long residual_evals; /* F evaluations (line search included) */
    long backtracks;     /* line-search backtracks */
    double fnorm;        /* max_i |F_i| f_scale at the returned x */
} hymo_kinsol_stats;

/* Solves F(x) = 0 from the guess in x; x holds KINSOL's last iterate on
 * return (also on failure).  HYMO_OK on convergence; otherwise
 * HYMO_ERR_CONVERGENCE (HYMO_ERR_NUMERIC: singular Jacobian; HYMO_ERR_NOMEM)
 * with a message "KINSOL: <what happened>" that callers may extend. */
hymo_status hymo_kinsol_solve(const hymo_kinsol_problem *pb, double *x, hymo_kinsol_stats *stats,
                              hymo_error *err);

/* Plain-text meaning of a KINSOL return flag. */
const char *hymo_kinsol_flag_text(int flag);

#endif
