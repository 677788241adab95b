/* SUNDIALS IDA as a hymo integrator (--integrator ida): variable order and
 * step with error control, sampled on the dt grid of the run.
 *
 * The system is the double-step formulation as an ODE in the independent
 * coordinates q (the dependent ones are solved from Phi = 0 inside every
 * residual evaluation), with the hydraulic states and the actuator work as
 * further differential states:
 *   y = [q, v, p, U, W]  (ni, ni, np, nu, na)
 *   F(t, y, y') = [q' - v;  R^T (M' zdd - Q') dt^2/4;  p' - pdot;  U' - Udot;
 *                  W' - F_s sd],   zdd_i = v'.
 * Penalty is not offered: ALI3-P is an index-3 formulation whose projections
 * IDA's error control would not see.
 *
 * Valve reference breakpoints are stop times (IDASetStopTime): the input
 * is the left limit up to a breakpoint and the right limit after it, where
 * IDA restarts (IDAReInit) with the new spool rates.  A re-selection of the
 * independent coordinates (checked on the output grid) also restarts IDA in
 * the new coordinates.  The force source's switching functions (end
 * dampers) are IDA's root functions: at a root the crossed branch is
 * switched and IDA restarts with rates consistent with it, so each
 * integration interval is smooth.  The Jacobian is IDA's dense difference
 * quotient. */
#include <ida/ida.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "control_internal.h"
#include "engine.h"

typedef struct {
    SUNContext ctx;
    void *mem;
    N_Vector y, yp, atol;
    SUNMatrix A;
    SUNLinearSolver LS;
    int n, ni;
    double t_break;  /* end of the current input interval (next breakpoint or +inf) */
    int *roots;      /* nsw: IDAGetRootInfo */
    long nni0, nje0; /* IDA counters at the last output */
    hymo_error err;  /* the last failure inside a residual evaluation */
    char ida_msg[256];
} ida_content;

/* Next valve-reference breakpoint after t (more than 1e-9 dt later). */
static double next_breakpoint(const hymo_sim *sim, double t)
{
    double next = INFINITY;
    for (int v = 0; v < sim->nu; ++v) {
        const hymo_signal *sig = hymo_sim_valve_signal(sim, v); /* NULL: overridden (src/engine/control.c) */
        const double b = hymo_signal_next_breakpoint(sig, t, 1e-9 * sim->opt.dt); /* periodic: repeated */
        if (b < next) next = b;
    }
    /* the pumps' and flow control valves' signals */
    for (int j = 0; sim->inputs.in_end && j < sim->n_in; ++j) {
        const hymo_signal *sig = hymo_sim_flow_input_signal(sim, j); /* NULL: none, or overridden */
        if (!sig) continue;
        const double b = hymo_signal_next_breakpoint(sig, t, 1e-9 * sim->opt.dt);
        if (b < next) next = b;
    }
    return next;
}

/* Valve references at t: the left limit at the end of the input interval. */
static void set_inputs(hymo_sim *sim, const ida_content *c, double t)
{
    const int side = t >= c->t_break - 1e-9 * sim->opt.dt ? -1 : +1;
    for (int v = 0; v < sim->nu; ++v) sim->inputs.uref_end[v] = hymo_sim_valve_ref(sim, v, t, side, 0.0);
    if (sim->inputs.in_end) /* pump speeds and set flows (the circuit's) */
        hymo_sim_flow_inputs(sim, t, side, 0.0, sim->inputs.in_end);
}

/* The engine state at (t, y, y'); f (if not NULL) the residual. */
static hymo_status evaluate(hymo_sim *sim, ida_content *c, double t, const double *y, const double *yp, double *f,
                            hymo_error *err)
{
    const int ni = c->ni, np = sim->np, nu = sim->nu, na = sim->na;
    const double *q = y, *v = y + ni, *p = v + ni, *u = p + np;
    const double *qp = yp, *vp = yp + ni, *pp = qp + 2 * ni, *up = pp + np, *wp = up + nu;
    hymo_status st = sim->form.ops->ode_unpack(&sim->form, &sim->mb, q, v, vp, t, err);
    if (st != HYMO_OK) return st;
    memcpy(sim->eval.pn, p, (size_t)np * sizeof(double));
    memcpy(sim->eval.un, u, (size_t)nu * sizeof(double));
    set_inputs(sim, c, t);
    st = hymo_engine_forces(sim, t, err);
    if (st != HYMO_OK || !f) return st;
    hymo_kin_inverse_dynamics(&sim->mb.kin, sim->mb.zddn, sim->mb.dyn_res);
    for (int k = 0; k < ni; ++k) f[k] = qp[k] - v[k];
    sim->form.ops->residual(&sim->form, &sim->mb, f + ni);
    double *fp = f + 2 * ni, *fu = fp + np, *fw = fu + nu;
    for (int k = 0; k < np; ++k) fp[k] = pp[k] - sim->eval.hp[k];
    for (int k = 0; k < nu; ++k) fu[k] = up[k] - sim->eval.hu[k];
    for (int a = 0; a < na; ++a) fw[a] = wp[a] - sim->eval.force[a] * sim->act.sd[a];
    return HYMO_OK;
}

static int residual_fn(sunrealtype t, N_Vector yy, N_Vector yp, N_Vector rr, void *user)
{
    hymo_sim *sim = user;
    ida_content *c = sim->integrator_content;
    hymo_status st = evaluate(sim, c, t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), N_VGetArrayPointer(rr),
                              &c->err);
    return st == HYMO_OK ? 0 : 1; /* recoverable: IDA retries with a smaller step */
}

/* switching functions (events) at (t, y) */
static int root_fn(sunrealtype t, N_Vector yy, N_Vector yp, sunrealtype *g, void *user)
{
    hymo_sim *sim = user;
    ida_content *c = sim->integrator_content;
    if (evaluate(sim, c, t, N_VGetArrayPointer(yy), N_VGetArrayPointer(yp), NULL, &c->err) != HYMO_OK) return 1;
    hymo_engine_switching(sim, g);
    return 0;
}

static void error_fn(int code, const char *module, const char *function, char *msg, void *user)
{
    (void)code, (void)module;
    ida_content *c = ((hymo_sim *)user)->integrator_content;
    snprintf(c->ida_msg, sizeof c->ida_msg, "%s: %s", function, msg);
}

/* y, y' from the committed state. */
static void pack(hymo_sim *sim, ida_content *c)
{
    const int ni = c->ni, np = sim->np, nu = sim->nu, na = sim->na;
    double *y = N_VGetArrayPointer(c->y), *yp = N_VGetArrayPointer(c->yp);
    sim->form.ops->ode_pack(&sim->form, &sim->mb, y, y + ni, yp + ni);
    memcpy(yp, y + ni, (size_t)ni * sizeof(double)); /* q' = v */
    memcpy(y + 2 * ni, sim->state.p, (size_t)np * sizeof(double));
    memcpy(yp + 2 * ni, sim->state.pd, (size_t)np * sizeof(double));
    memcpy(y + 2 * ni + np, sim->state.u, (size_t)nu * sizeof(double));
    memcpy(yp + 2 * ni + np, sim->state.ud, (size_t)nu * sizeof(double));
    memcpy(y + 2 * ni + np + nu, sim->record.work, (size_t)na * sizeof(double));
    memcpy(yp + 2 * ni + np + nu, sim->record.power, (size_t)na * sizeof(double));
}

static void ida_destroy(hymo_sim *sim)
{
    ida_content *c = sim->integrator_content;
    if (!c) return;
    if (c->mem) IDAFree(&c->mem);
    if (c->LS) SUNLinSolFree(c->LS);
    if (c->A) SUNMatDestroy(c->A);
    if (c->y) N_VDestroy(c->y);
    if (c->yp) N_VDestroy(c->yp);
    if (c->atol) N_VDestroy(c->atol);
    if (c->ctx) SUNContext_Free(&c->ctx);
    free(c->roots);
    free(c);
    sim->integrator_content = NULL;
}

static hymo_status ida_create(hymo_sim *sim, hymo_error *err)
{
    if (!sim->form.ops->ode_unpack)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "--integrator ida integrates the double-step formulation (an ODE in the "
                              "independent coordinates); %s is not offered with IDA",
                              sim->form.ops->name);
    if (sim->opt.linear_solver != HYMO_LINSOL_DENSE)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "--integrator ida uses its dense linear solver (no KLU)");
    ida_content *c = calloc(1, sizeof *c);
    if (!c || !(c->roots = calloc((size_t)sim->nsw + 1, sizeof(int)))) {
        free(c);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (IDA)");
    }
    sim->integrator_content = c;
    const hymo_run_options *o = &sim->opt;
    c->ni = sim->nxm;
    c->n = 2 * c->ni + sim->np + sim->nu + sim->na;
    if (SUNContext_Create(NULL, &c->ctx) || !(c->y = N_VNew_Serial(c->n, c->ctx)) ||
        !(c->yp = N_VNew_Serial(c->n, c->ctx)) || !(c->atol = N_VNew_Serial(c->n, c->ctx)) ||
        !(c->A = SUNDenseMatrix(c->n, c->n, c->ctx)) || !(c->LS = SUNLinSol_Dense(c->y, c->A, c->ctx)) ||
        !(c->mem = IDACreate(c->ctx))) {
        ida_destroy(sim);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (IDA)");
    }
    /* absolute tolerances: atol for positions and rates, scaled by the
     * model's Newton tolerance ratios for pressures and spools */
    double *at = N_VGetArrayPointer(c->atol);
    for (int k = 0; k < c->n; ++k) at[k] = o->atol;
    for (int k = 0; k < sim->np; ++k) at[2 * c->ni + k] = o->atol * o->tol_pressure / o->tol_position;
    for (int k = 0; k < sim->nu; ++k) at[2 * c->ni + sim->np + k] = o->atol * o->tol_spool / o->tol_position;
    pack(sim, c);
    c->t_break = next_breakpoint(sim, 0.0);
    if (IDAInit(c->mem, residual_fn, 0.0, c->y, c->yp) || IDASVtolerances(c->mem, o->rtol, c->atol) ||
        IDASetUserData(c->mem, sim) || IDASetErrHandlerFn(c->mem, error_fn, sim) ||
        IDASetLinearSolver(c->mem, c->LS, c->A) || IDASetMaxNumSteps(c->mem, 100000) ||
        (isfinite(c->t_break) && IDASetStopTime(c->mem, c->t_break)) ||
        (sim->nsw > 0 && IDARootInit(c->mem, sim->nsw, root_fn))) {
        ida_destroy(sim);
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "IDA set-up failed");
    }
    return HYMO_OK;
}

/* At an event at t (IDA's state in y, y'): the crossed functions take
 * their new branch, and y' is made consistent with it (accelerations from
 * the new forces, the actuator power). */
static hymo_status switch_branches(hymo_sim *sim, ida_content *c, double t, hymo_error *err)
{
    const int ni = c->ni, np = sim->np, nu = sim->nu, na = sim->na;
    double *y = N_VGetArrayPointer(c->y), *yp = N_VGetArrayPointer(c->yp);
    hymo_mb *mb = &sim->mb;
    if (IDAGetRootInfo(c->mem, c->roots)) return hymo_error_set(err, HYMO_ERR_NUMERIC, "IDA root information failed");
    hymo_status st = evaluate(sim, c, t, y, yp, NULL, err);
    if (st != HYMO_OK) return st;
    for (int i = 0; i < sim->nsw; ++i)
        if (c->roots[i]) sim->switching.sw[i] = c->roots[i] > 0; /* rising: g >= 0 from here on */
    memcpy(mb->z, mb->zn, (size_t)sim->nz * sizeof(double));
    memcpy(mb->zd, mb->zdn, (size_t)sim->nz * sizeof(double));
    memcpy(sim->state.p, y + 2 * ni, (size_t)np * sizeof(double));
    memcpy(sim->state.u, y + 2 * ni + np, (size_t)nu * sizeof(double));
    memcpy(sim->record.work, y + 2 * ni + np + nu, (size_t)na * sizeof(double));
    st = hymo_engine_dynamics(sim, t, err);
    if (st == HYMO_OK) st = hymo_engine_consistent_accelerations(sim, 0, err);
    if (st != HYMO_OK) return st;
    memcpy(sim->state.pd, sim->eval.hp, (size_t)np * sizeof(double));
    memcpy(sim->state.ud, sim->eval.hu, (size_t)nu * sizeof(double));
    for (int a = 0; a < na; ++a) sim->record.power[a] = sim->eval.force[a] * sim->act.sd[a];
    pack(sim, c);
    sim->switching.events++;
    sim->switching.last_event = t;
    return HYMO_OK;
}

/* Restart at t from the state in y, y' (after a breakpoint: new spool rates). */
static int restart(hymo_sim *sim, ida_content *c, double t)
{
    c->t_break = next_breakpoint(sim, t);
    /* IDAReInit zeroes IDA's counters: carry the ones of this step over */
    long nni = 0, nje = 0;
    IDAGetNumNonlinSolvIters(c->mem, &nni);
    IDAGetNumJacEvals(c->mem, &nje);
    c->nni0 -= nni;
    c->nje0 -= nje;
    int flag = IDAReInit(c->mem, t, c->y, c->yp);
    if (!flag && isfinite(c->t_break)) flag = IDASetStopTime(c->mem, c->t_break);
    return flag;
}

/* Where a pump speed or set flow may jump at t (a
 * breakpoint of its signal, or a value set between steps), the pressure
 * rates in y' are those of the right limit. */
static hymo_status flow_inputs_right_limit(hymo_sim *sim, ida_content *c, double t, hymo_error *err)
{
    if (!sim->inputs.in_end) return HYMO_OK;
    double *y = N_VGetArrayPointer(c->y), *yp = N_VGetArrayPointer(c->yp);
    c->t_break = next_breakpoint(sim, t);
    hymo_status st = evaluate(sim, c, t, y, yp, NULL, err);
    if (st != HYMO_OK) return st;
    memcpy(yp + 2 * c->ni, sim->eval.hp, (size_t)sim->np * sizeof(double));
    return HYMO_OK;
}

static hymo_status ida_step(hymo_sim *sim, hymo_error *err)
{
    ida_content *c = sim->integrator_content;
    const double dt = sim->opt.dt, t1 = hymo_engine_step_end(sim);
    const int ni = c->ni, np = sim->np, nu = sim->nu;
    double *y = N_VGetArrayPointer(c->y), *yp = N_VGetArrayPointer(c->yp);
    sunrealtype tret = sim->state.t;
    if (hymo_sim_take_changed(sim)) { /* inputs or parameters changed between steps (src/engine/control.c) */
        pack(sim, c); /* the spool rates of the references set (src/engine/control.c) */
        hymo_status st = flow_inputs_right_limit(sim, c, sim->state.t, err); /* a pump speed or set flow set */
        if (st != HYMO_OK) return st;
        if (restart(sim, c, sim->state.t)) return hymo_error_set(err, HYMO_ERR_NUMERIC, "IDA restart failed");
    }
    while (tret < t1 - 1e-9 * dt) {
        c->ida_msg[0] = '\0';
        hymo_error_clear(&c->err);
        int flag = IDASolve(c->mem, t1, &tret, c->y, c->yp, IDA_NORMAL);
        if (flag < 0)
            return hymo_error_set(err, HYMO_ERR_CONVERGENCE, "t = %.6g s (step %ld): IDA failed (%s)%s%s%s%s",
                                  (double)tret, sim->state.step + 1, IDAGetReturnFlagName(flag),
                                  c->ida_msg[0] ? ": " : "", c->ida_msg,
                                  c->err.message[0] ? "; last residual error: " : "", c->err.message);
        if (flag == IDA_TSTOP_RETURN) { /* at a breakpoint: the right limit of the inputs from here on */
            const hymo_model *model = sim->model;
            double *up = yp + 2 * ni + np;
            const double *u = y + 2 * ni + np;
            for (int v = 0; v < nu; ++v) {
                const hymo_valve *va = &model->valves[v];
                double uref = hymo_sim_valve_ref(sim, v, tret, +1, 0.0);
                up[va->state] = (uref - u[va->state]) / va->tau;
            }
            hymo_status st = flow_inputs_right_limit(sim, c, tret, err);
            if (st != HYMO_OK) return st;
            if (restart(sim, c, tret)) return hymo_error_set(err, HYMO_ERR_NUMERIC, "IDA restart failed");
        } else if (flag == IDA_ROOT_RETURN) { /* an event: the new branch, consistent rates, restart */
            hymo_status st = switch_branches(sim, c, tret, err);
            if (st != HYMO_OK) return st;
            if (restart(sim, c, tret)) return hymo_error_set(err, HYMO_ERR_NUMERIC, "IDA restart failed");
        }
    }
    /* the state at t1 */
    hymo_status st = evaluate(sim, c, t1, y, yp, NULL, err);
    if (st != HYMO_OK) return st;
    hymo_mb *mb = &sim->mb;
    memcpy(mb->z, mb->zn, (size_t)sim->nz * sizeof(double));
    memcpy(mb->zd, mb->zdn, (size_t)sim->nz * sizeof(double));
    memcpy(mb->zdd, mb->zddn, (size_t)sim->nz * sizeof(double));
    memcpy(sim->state.p, y + 2 * ni, (size_t)np * sizeof(double));
    memcpy(sim->state.pd, yp + 2 * ni, (size_t)np * sizeof(double));
    memcpy(sim->state.u, y + 2 * ni + np, (size_t)nu * sizeof(double));
    memcpy(sim->state.ud, yp + 2 * ni + np, (size_t)nu * sizeof(double));
    memcpy(sim->record.work, y + 2 * ni + np + nu, (size_t)sim->na * sizeof(double));
    for (int a = 0; a < sim->na; ++a) sim->record.power[a] = sim->eval.force[a] * sim->act.sd[a];
    long nni = 0, nje = 0;
    IDAGetNumNonlinSolvIters(c->mem, &nni);
    IDAGetNumJacEvals(c->mem, &nje);
    sim->state.t = t1;
    sim->state.step++;
    sim->stats.last_iterations = (int)(nni - c->nni0);
    sim->stats.iterations_total += nni - c->nni0;
    if (sim->stats.last_iterations > sim->stats.iterations_max) sim->stats.iterations_max = sim->stats.last_iterations;
    sim->stats.jacobian_evaluations += nje - c->nje0;
    c->nni0 = nni;
    c->nje0 = nje;
    sim->stats.residual_norm = 0.0;
    hymo_engine_record_stats(sim);
    /* independent coordinates still well conditioned?  else restart in new ones */
    int changed = 0;
    st = sim->form.ops->finish_step(&sim->form, mb, t1, sim->state.step, &changed, err);
    if (st != HYMO_OK) return st;
    if (changed) {
        pack(sim, c);
        if (restart(sim, c, t1)) return hymo_error_set(err, HYMO_ERR_NUMERIC, "IDA restart failed");
    }
    return HYMO_OK;
}

static double ida_input_time(const hymo_sim *sim) { return hymo_engine_step_end(sim); }

static hymo_status ida_restart_inputs(hymo_sim *sim, hymo_error *err)
{
    (void)sim;
    return hymo_error_set(err, HYMO_ERR_ARGUMENT, "IDA is not offered as a co-simulation mechanics integrator");
}

/* IDA's global error does not scale predictably with its tolerances
 * (0.5-80x rtol on the shipped models, docs/results.md), so the companion is
 * a reference: 100x tighter tolerances, rtol not below
 * HYMO_IDA_COMPANION_RTOL_MIN, whose own error is small beside the run's,
 * e = |x - x_tight|.  hymo_run marks the estimate unreliable where the
 * companion is less than 10x tighter than the run. */
static void ida_companion(const hymo_run_options *opt, hymo_run_options *co, int *ratio, double *factor,
                          const char **method, int *order)
{
    *co = *opt;
    co->rtol = fmax(opt->rtol / 100.0, HYMO_IDA_COMPANION_RTOL_MIN);
    co->atol = opt->atol / 100.0;
    *ratio = 1;
    *factor = 1.0;
    *order = 0;
    *method = "companion with 100x tighter tolerances";
}

const hymo_integrator_ops hymo_ida_ops = {
    .name = "ida",
    .jacobian_name = "ida-difference-quotient",
    .create = ida_create,
    .destroy = ida_destroy,
    .step = ida_step,
    .input_time = ida_input_time,
    .companion = ida_companion,
    .restart = ida_restart_inputs,
};
