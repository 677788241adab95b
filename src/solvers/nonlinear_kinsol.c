/* Dense nonlinear solves with SUNDIALS KINSOL (see nonlinear_kinsol.h). */
#include "nonlinear_kinsol.h"

#include <kinsol/kinsol.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <string.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

typedef struct {
    const hymo_kinsol_problem *pb;
    char msg[256]; /* KINSOL's last error message */
} solve_data;

static int residual_fn(N_Vector x, N_Vector f, void *user)
{
    const solve_data *d = user;
    return d->pb->residual(N_VGetArrayPointer(x), N_VGetArrayPointer(f), d->pb->user);
}

static int jacobian_fn(N_Vector x, N_Vector f, SUNMatrix J, void *user, N_Vector tmp1, N_Vector tmp2)
{
    (void)f, (void)tmp1, (void)tmp2;
    const solve_data *d = user;
    const int n = d->pb->n;
    double *a = SUNDenseMatrix_Data(J); /* column-major, n x n */
    memset(a, 0, (size_t)n * (size_t)n * sizeof(double));
    return d->pb->jacobian(N_VGetArrayPointer(x), a, d->pb->user);
}

static void error_fn(int code, const char *module, const char *function, char *msg, void *user)
{
    (void)code, (void)module;
    solve_data *d = user;
    snprintf(d->msg, sizeof d->msg, "%s: %s", function, msg);
}

const char *hymo_kinsol_flag_text(int flag)
{
    switch (flag) {
    case KIN_SUCCESS: return "converged (residual below tolerance)";
    case KIN_INITIAL_GUESS_OK: return "the initial guess satisfies the equations";
    case KIN_STEP_LT_STPTOL: return "the Newton step fell below the step tolerance";
    case KIN_LINESEARCH_NONCONV: return "the line search found no step that lowers the residual";
    case KIN_MAXITER_REACHED: return "the iteration limit was reached";
    case KIN_MXNEWT_5X_EXCEEDED: return "five consecutive Newton steps had the largest allowed length (diverging)";
    case KIN_LINESEARCH_BCFAIL: return "the line search failed its beta condition repeatedly (slow progress)";
    case KIN_LINSOLV_NO_RECOVERY: return "the linear solver failed";
    case KIN_LSETUP_FAIL: return "the Jacobian is singular";
    case KIN_LSOLVE_FAIL: return "the linear solve failed";
    case KIN_SYSFUNC_FAIL: return "the residual function failed";
    case KIN_FIRST_SYSFUNC_ERR: return "the residual function failed at the initial guess";
    case KIN_REPTD_SYSFUNC_ERR: return "the residual function failed repeatedly";
    case KIN_MEM_FAIL: return "out of memory";
    case KIN_ILL_INPUT: return "invalid input";
    default: return "unknown failure";
    }
}

hymo_status hymo_kinsol_solve(const hymo_kinsol_problem *pb, double *x, hymo_kinsol_stats *stats,
                              hymo_error *err)
{
    const int n = pb->n;
    hymo_kinsol_stats st_local;
    hymo_kinsol_stats *s = stats ? stats : &st_local;
    memset(s, 0, sizeof *s);
    solve_data d = {.pb = pb};
    SUNContext ctx = NULL;
    N_Vector u = NULL, us = NULL, fs = NULL;
    SUNMatrix A = NULL;
    SUNLinearSolver LS = NULL;
    void *mem = NULL;
    hymo_status status = HYMO_OK;
    if (n <= 0) return HYMO_OK;
    if (SUNContext_Create(NULL, &ctx) || !(u = N_VNew_Serial(n, ctx)) || !(us = N_VNew_Serial(n, ctx)) ||
        !(fs = N_VNew_Serial(n, ctx)) || !(A = SUNDenseMatrix(n, n, ctx)) ||
        !(LS = SUNLinSol_Dense(u, A, ctx)) || !(mem = KINCreate(ctx))) {
        status = hymo_error_set(err, HYMO_ERR_NOMEM, "KINSOL: out of memory");
        goto done;
    }
    memcpy(N_VGetArrayPointer(u), x, (size_t)n * sizeof(double));
    N_VConst(pb->x_scale > 0.0 ? pb->x_scale : 1.0, us);
    N_VConst(pb->f_scale > 0.0 ? pb->f_scale : 1.0, fs);
    if (KINSetErrHandlerFn(mem, error_fn, &d) || KINInit(mem, residual_fn, u) || KINSetUserData(mem, &d) ||
        KINSetLinearSolver(mem, LS, A) || KINSetJacFn(mem, jacobian_fn) ||
        KINSetMaxSetupCalls(mem, 1) /* exact Newton: a new Jacobian every iteration */ ||
        KINSetNumMaxIters(mem, pb->max_iter) || KINSetFuncNormTol(mem, pb->fnorm_tol) ||
        KINSetScaledStepTol(mem, pb->step_tol) || (pb->max_step > 0.0 && KINSetMaxNewtonStep(mem, pb->max_step))) {
        status = hymo_error_set(err, HYMO_ERR_ARGUMENT, "KINSOL set-up failed%s%s", d.msg[0] ? ": " : "", d.msg);
        goto done;
    }
    int flag = KINSol(mem, u, KIN_LINESEARCH, us, fs);
    s->flag = flag;
    KINGetNumNonlinSolvIters(mem, &s->iterations);
    KINGetNumFuncEvals(mem, &s->residual_evals);
    KINGetNumBacktrackOps(mem, &s->backtracks);
    memcpy(x, N_VGetArrayPointer(u), (size_t)n * sizeof(double));
    /* the residual at the returned x (KINSOL's own norm is not kept for
     * every return path) */
    s->fnorm = INFINITY;
    if (pb->residual(x, N_VGetArrayPointer(fs), pb->user) == 0) {
        const double *f = N_VGetArrayPointer(fs);
        const double sc = pb->f_scale > 0.0 ? pb->f_scale : 1.0;
        double fmax = 0.0;
        for (int i = 0; i < n; ++i) {
            const double a = fabs(f[i]) * sc;
            fmax = a > fmax || !(a == a) ? a : fmax; /* NaN propagates */
        }
        s->fnorm = fmax;
    }
    const int converged = flag == KIN_SUCCESS || flag == KIN_INITIAL_GUESS_OK ||
                          ((flag == KIN_STEP_LT_STPTOL || flag == KIN_LINESEARCH_NONCONV) &&
                           s->fnorm <= pb->accept_tol);
    if (!converged)
        status = hymo_error_set(err, flag == KIN_LSETUP_FAIL ? HYMO_ERR_NUMERIC : HYMO_ERR_CONVERGENCE,
                                "KINSOL: %s (%s after %ld iterations, scaled residual %.3g)",
                                hymo_kinsol_flag_text(flag), flag == KIN_STEP_LT_STPTOL ? "stopped" : "failed",
                                s->iterations, s->fnorm);
done:
    if (mem) KINFree(&mem);
    if (LS) SUNLinSolFree(LS);
    if (A) SUNMatDestroy(A);
    if (u) N_VDestroy(u);
    if (us) N_VDestroy(us);
    if (fs) N_VDestroy(fs);
    if (ctx) SUNContext_Free(&ctx);
    return status;
}
