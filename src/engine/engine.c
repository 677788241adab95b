/* Unified trapezoidal Newton-Raphson engine (SPEC §3, seed 002 §4).
 * One unknown vector x = [mechanical unknowns of the formulation; hydraulic
 * unknowns of the force source].  The stages take the evaluation time
 * explicitly (t_{k+1} inside a step). */
#include "engine.h"
#include "control_internal.h"
#include "rows.h" /* hymo_now_seconds */
#include "driver.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/linalg.h"

/* Actuators, the force source and the body forces (gravity, velocity
 * terms, cylinder forces) at the iterate, before M' and Q'. */
hymo_status hymo_engine_forces(hymo_sim *sim, double t, hymo_error *err)
{
    hymo_actuators_eval(&sim->act, sim->model, &sim->mb.kin);
    hymo_status st = sim->forces->forces(sim, t, err);
    if (st != HYMO_OK) return st;
    hymo_kin_forces_begin(&sim->mb.kin, sim->model);
    hymo_actuators_apply(&sim->act, sim->model, &sim->mb.kin, sim->eval.force);
    return hymo_fe_apply(&sim->fe, sim->model, &sim->mb.kin, t, sim->opt.dt, err);
}

void hymo_engine_switching(const hymo_sim *sim, double *g)
{
    /* the force source writes its functions only if it declares any (the
     * circuit's writer assumes its full count) */
    if (sim->nsw_source > 0) sim->forces->switching(sim, g);
    hymo_fe_switching(&sim->fe, sim->model, &sim->mb.kin, g + sim->nsw_source);
}

hymo_status hymo_engine_dynamics(hymo_sim *sim, double t, hymo_error *err)
{
    hymo_status st = hymo_engine_forces(sim, t, err);
    if (st == HYMO_OK) hymo_kin_mass_and_forces(&sim->mb.kin, sim->model);
    return st;
}

hymo_status hymo_engine_unpack(hymo_sim *sim, const double *x, double t, hymo_error *err)
{
    hymo_status st = sim->form.ops->unpack(&sim->form, &sim->mb, x, t, err);
    if (st == HYMO_OK) sim->forces->unpack(sim, x + sim->nxm);
    return st;
}

/* f(x): the scaled residual of seed 002 Eqs. 38-39 plus the spool rows. */
hymo_status hymo_engine_residual(hymo_sim *sim, const double *x, double *f, double t, hymo_error *err)
{
    hymo_status st = hymo_engine_unpack(sim, x, t, err);
    if (st == HYMO_OK) st = hymo_engine_forces(sim, t, err);
    if (st != HYMO_OK) return st;
    hymo_kin_inverse_dynamics(&sim->mb.kin, sim->mb.zddn, sim->mb.dyn_res); /* M' zdd - Q', M' not formed */
    sim->form.ops->residual(&sim->form, &sim->mb, f);
    sim->forces->residual(sim, f + sim->nxm);
    if (sim->model->n_drivers) return hymo_drivers_residual(sim, x, f, t, err); /* driven joints */
    return HYMO_OK;
}

hymo_status hymo_engine_factor_jacobian(hymo_sim *sim, double t, hymo_error *err)
{
    sim->stats.jacobian_evaluations++;
    hymo_status st = sim->form.ops->after_jacobian(&sim->form, &sim->jac.jm, t, err);
    if (st != HYMO_OK) return st;
    if (sim->ls->ops->factor(sim->ls, &sim->jac.jfull))
        return hymo_error_set(err, HYMO_ERR_NUMERIC,
                              "t = %.6g s (step %ld): singular Newton Jacobian (%s solver)", t, sim->state.step + 1,
                              sim->ls->ops->name);
    sim->jac.jac_valid = 1;
    sim->jac.jac_h = sim->solver.h;
    return HYMO_OK;
}

/* Largest increment relative to its block's tolerance; reports the unknown. */
static double scaled_increment(const hymo_sim *sim, const double *dx, int *index)
{
    double worst = 0.0;
    *index = 0;
    for (int i = 0; i < sim->nx; ++i) {
        double tol = i < sim->nxm ? sim->opt.tol_position
                                  : (i < sim->nxm + sim->np ? sim->opt.tol_pressure : sim->opt.tol_spool);
        double r = fabs(dx[i]) / tol;
        if (!(r <= worst)) {
            worst = r;
            *index = i;
        }
    }
    return worst;
}

static void describe_unknown(const hymo_sim *sim, int index, char *buf, size_t len)
{
    const hymo_model *model = sim->model;
    if (index < sim->nxm) {
        int j = sim->form.ops->unknown_joint(&sim->form, index);
        snprintf(buf, len, "mechanical block, joint %s", model->bodies[j].joint_name);
        return;
    }
    index -= sim->nxm;
    if (index < sim->np) {
        snprintf(buf, len, "pressure block, volume %s", model->nodes[sim->cm->circ.vol_node[index]].name);
        return;
    }
    index -= sim->np;
    snprintf(buf, len, "spool block, valve %s", index < model->n_valves ? model->valves[index].name : "?");
}

/* The error of a Newton solve that stopped after `iter` iterations at t1
 * with the last increment sim->solver.dx, whose largest value relative to its
 * block's tolerance is inc, at unknown `index`.  With an increment beyond
 * its tolerance (or not a number) that unknown is the one that failed.
 * With every increment within its tolerance the stopping test failed on
 * the mechanical block's own target (the contractive test's tau <= 1 x
 * tolerance, with the contraction rate theta): that block and its largest
 * unknown are named, not the block of the largest relative increment. */
static hymo_status convergence_error(const hymo_sim *sim, double t1, int iter, double inc, int index,
                                     hymo_error *err)
{
    char what[128];
    const double fnorm = hymo_norm_inf(sim->nx, sim->solver.f);
    if (!(inc <= 1.0) || sim->nxm == 0) {
        describe_unknown(sim, index, what, sizeof what);
        char at[64] = "";
        if (index >= sim->nxm && index < sim->nxm + sim->np) /* the pressure iterate (cavitation?) */
            snprintf(at, sizeof at, " (iterate %.4g MPa absolute)", 1e-6 * sim->solver.x[index]);
        return hymo_error_set(err, HYMO_ERR_CONVERGENCE,
                              "t = %.6g s (step %ld): Newton-Raphson did not converge in %d iterations; residual "
                              "norm %.3g; largest increment %.3g x tolerance in the %s%s",
                              t1, sim->state.step + 1, iter, fnorm, inc, what, at);
    }
    int im = 0;
    double worst = 0.0;
    for (int i = 0; i < sim->nxm; ++i)
        if (fabs(sim->solver.dx[i]) > worst) worst = fabs(sim->solver.dx[i]), im = i;
    describe_unknown(sim, im, what, sizeof what);
    const double inc_m = worst / sim->opt.tol_position, theta = sim->solver.newton_theta;
    return hymo_error_set(err, HYMO_ERR_CONVERGENCE,
                          "t = %.6g s (step %ld): Newton-Raphson did not converge in %d iterations in the %s: "
                          "increment %.3g x tolerance, contraction rate %.3g, estimated error %.3g x tolerance "
                          "against the %s test's target %.3g x tolerance; residual norm %.3g; every increment "
                          "within its tolerance (largest %.3g x)",
                          t1, sim->state.step + 1, iter, what, inc_m, theta,
                          theta < 1.0 ? theta / (1.0 - theta) * inc_m : INFINITY, sim->newton->name,
                          sim->solver.newton_tau, fnorm, inc);
}

/* Valve references at the step start (right limit) and end (left limit);
 * returns whether a reference jumps at the step start or varies within the
 * step. */
static int update_inputs(hymo_sim *sim, double t1)
{
    const hymo_model *model = sim->model;
    const double dt = sim->opt.dt;
    int inputs_change = 0;
    for (int v = 0; v < sim->nu; ++v) {
        const hymo_valve *va = &model->valves[v];
        const double prev_end = sim->inputs.uref_end[v];
        sim->inputs.uref_start[v] = hymo_sim_valve_ref(sim, v, sim->state.t, +1, dt);
        sim->inputs.uref_end[v] = hymo_sim_valve_ref(sim, v, t1, -1, dt);
        inputs_change |= sim->inputs.uref_start[v] != prev_end || sim->inputs.uref_end[v] != sim->inputs.uref_start[v];
        /* one-sided limit at the step start (SPEC §3) */
        sim->state.ud[va->state] = (sim->inputs.uref_start[v] - sim->state.u[va->state]) / va->tau;
    }
    if (sim->inputs.in_end) { /* pump speeds and set flows at t_{k+1}- (the circuit's) */
        const int npu = model->n_pumps;
        hymo_sim_flow_inputs(sim, t1, -1, dt, sim->inputs.in_end); /* with the controller's overrides */
        /* the Newton matrix holds dQ/dp of the flow control valves' orifice
         * branch, Q_set g'(dp)/g(dp_c): new when a set flow changes (a pump's
         * speed enters no derivative) */
        for (int f = npu; f < sim->n_in; ++f) inputs_change |= sim->inputs.in_end[f] != sim->inputs.in_start[f];
    }
    return inputs_change;
}

/* The pump speeds and set flows in force from the
 * committed time on (right limit, into in_start).  Where one jumps at
 * sim->t (a table step, snapped to the step grid, or at an event's time, or
 * a value set through hymo_sim_set_input between steps)
 * the committed pressure rates pd are those of the left limit: they are
 * re-evaluated with the right limit, as update_inputs does the spool rates
 * (SPEC §3), so that the step integrates the new flow from its start and
 * keeps its order.  Needs the state at sim->state.t as evaluated last (the
 * trapezoidal step's start, where the switching functions are evaluated
 * too); only where the pressures are the engine's own unknowns. */
static hymo_status inputs_at_start(hymo_sim *sim, hymo_error *err)
{
    const hymo_model *model = sim->model;
    if (!sim->inputs.in_end) return HYMO_OK;
    hymo_sim_flow_inputs(sim, sim->state.t, +1, sim->opt.dt, sim->inputs.in_start);
    if (sim->np == 0 || sim->forces->n_unknowns(sim) == 0) return HYMO_OK; /* the circuit is elsewhere */
    int jump = 0;
    for (int i = 0; i < sim->n_in; ++i) jump |= sim->inputs.in_start[i] != sim->inputs.in_end[i];
    if (!jump) return HYMO_OK;
    memcpy(sim->inputs.in_end, sim->inputs.in_start, (size_t)sim->n_in * sizeof(double));
    if (hymo_circuit_eval(&sim->eval.circ, model, sim->act.s, sim->act.sd, sim->state.p, sim->state.u,
                          sim->inputs.uref_end, sim->state.pd, NULL, NULL))
        return hymo_error_set(err, HYMO_ERR_NUMERIC,
                              "t = %.6g s (step %ld): a hydraulic volume became non-positive "
                              "(piston beyond its stroke?)",
                              sim->state.t, sim->state.step + 1);
    sim->jac.jac_valid = 0;
    return HYMO_OK;
}

/* Predictor: SPEC §3 (z + zd h + zdd h^2/2, p + pd h, U + Ud h); the
 * extrapolating predictor adds the next Taylor term from the previous
 * step's derivatives (and extrapolates lambda), which saves iterations; it
 * needs two equal steps, so not next to an event. */
static void predict(hymo_sim *sim, double *x)
{
    hymo_mb *mb = &sim->mb;
    const double dt = sim->solver.h, dt2 = dt * dt;
    const int extrapolate = sim->opt.predictor == HYMO_PREDICTOR_EXTRAPOLATE && sim->state.step > 0 &&
                            sim->solver.h == sim->opt.dt && sim->state.h_prev == sim->opt.dt;
    for (int j = 0; j < sim->nz; ++j) {
        mb->zn[j] = mb->z[j] + mb->zd[j] * dt + 0.5 * mb->zdd[j] * dt2;
        if (extrapolate) mb->zn[j] += (mb->zdd[j] - sim->state.zdd_prev[j]) * dt2 / 6.0;
    }
    sim->form.ops->pack(&sim->form, mb, x);
    sim->forces->predict(sim, x + sim->nxm, extrapolate);
    if (extrapolate) {
        for (int r = 0; r < sim->m; ++r) { /* quadratic through lambda_{k-2..k} (linear at k = 1) */
            double l = mb->lambda[r];
            if (sim->state.step > 1)
                mb->lambda[r] = 3.0 * l - 3.0 * sim->state.lambda_prev[r] + sim->state.lambda_prev2[r];
            else
                mb->lambda[r] = 2.0 * l - sim->state.lambda_prev[r];
            sim->state.lambda_prev2[r] = sim->state.lambda_prev[r];
            sim->state.lambda_prev[r] = l;
        }
    } else {
        memcpy(sim->state.lambda_prev2, mb->lambda, (size_t)sim->m * sizeof(double));
        memcpy(sim->state.lambda_prev, mb->lambda, (size_t)sim->m * sizeof(double));
    }
    memcpy(sim->state.zdd_prev, mb->zdd, (size_t)sim->nz * sizeof(double));
    memcpy(sim->state.pd_prev2, sim->state.pd_prev, (size_t)sim->np * sizeof(double));
    memcpy(sim->state.pd_prev, sim->state.pd, (size_t)sim->np * sizeof(double));
}

/* The force elements' work up to the committed time: the trapezoidal rule
 * on their power from the last state integrated (fe_t); at the same time
 * (the start, a restart after an event) the power is the current one. */
static void fe_work_to(hymo_sim *sim)
{
    hymo_sim_record *rec = &sim->record;
    const double t = sim->state.t;
    if (t != rec->fe_t) rec->fe_work += 0.5 * (t - rec->fe_t) * (rec->fe_power + sim->fe.power);
    rec->fe_power = sim->fe.power;
    rec->fe_t = t;
}

/* Commit of the iterate as the state at t1 after `iter` iterations; a grid
 * step (not a sub-step ending at an event) advances the step counter. */
static void commit(hymo_sim *sim, double t1, int iter, int grid)
{
    hymo_mb *mb = &sim->mb;
    double *tmp;
#define SWAP(a, b) (tmp = (a), (a) = (b), (b) = tmp)
    SWAP(mb->z, mb->zn);
    SWAP(mb->zd, mb->zdn);
    SWAP(mb->zdd, mb->zddn);
    SWAP(sim->state.p, sim->eval.pn);
    SWAP(sim->state.pd, sim->eval.pdn);
    SWAP(sim->state.u, sim->eval.un);
    SWAP(sim->state.ud, sim->eval.udn);
#undef SWAP
    /* keep the warm start for the dependent coordinates */
    memcpy(mb->zn, mb->z, (size_t)sim->nz * sizeof(double));
    memcpy(sim->eval.pn, sim->state.p, (size_t)sim->np * sizeof(double));
    memcpy(sim->eval.un, sim->state.u, (size_t)sim->nu * sizeof(double));
    /* actuator work: trapezoidal rule on the power F sd */
    for (int a = 0; a < sim->na; ++a) {
        double power = sim->eval.force[a] * sim->act.sd[a];
        sim->record.work[a] += 0.5 * sim->solver.h * (sim->record.power[a] + power);
        sim->record.power[a] = power;
    }
    sim->state.t = t1;
    if (sim->fe.n > 0) fe_work_to(sim); /* sub-steps too: the power kinks at events */
    sim->state.h_prev = sim->solver.h;
    sim->stats.iterations_total += iter;
    if (!grid) return;
    sim->state.step++;
}

/* One trapezoidal Newton solve of size h = sim->solver.h from the committed state
 * (sim->state.t) to t1; the result stays in the iterate (zn, ..., pn, ...) with
 * the actuators and forces at it.  *iter: iterations used. */
static hymo_status solve_core(hymo_sim *sim, double t1, int *iter_out, hymo_error *err);

/* with driven joints: their start values for the step (src/engine/driver.c) */
static hymo_status solve(hymo_sim *sim, double t1, int *iter_out, hymo_error *err)
{
    if (!sim->model->n_drivers) return solve_core(sim, t1, iter_out, err);
    sim->mb.dt = sim->solver.h;
    hymo_drivers_begin_solve(sim, t1);
    hymo_status st = solve_core(sim, t1, iter_out, err);
    hymo_drivers_end_solve(sim, st == HYMO_OK);
    return st;
}

static hymo_status solve_core(hymo_sim *sim, double t1, int *iter_out, hymo_error *err)
{
    const hymo_jacobian_ops *jo = sim->jacobian;
    hymo_status st;
    *iter_out = 0; /* on an error: the iterations spent, if known */
    sim->mb.dt = sim->solver.h;
    if (sim->solver.h != sim->jac.jac_h) sim->jac.jac_valid = 0; /* the matrix scales with h */
    const int inputs_change = update_inputs(sim, t1);
    double *x = sim->solver.x;
    predict(sim, x);
    int refresh = jo->refresh_at_start(sim, inputs_change);
    double prev = INFINITY, inc = INFINITY;
    int iter = 0, index = 0, at_evaluated = 0, fresh = 0;
    sim->form.ops->begin_step(&sim->form, &sim->mb);
    sim->newton->begin_step(sim, x);
    for (;;) {
        st = hymo_engine_residual(sim, x, sim->solver.f, t1, err);
        if (st != HYMO_OK) return st;
        if (refresh) {
            st = jo->build(sim, t1, err);
            if (st != HYMO_OK) return st;
            refresh = 0;
            fresh = 1;
        }
        for (int i = 0; i < sim->nx; ++i) sim->solver.dx[i] = -sim->solver.f[i];
        sim->ls->ops->solve(sim->ls, sim->solver.dx);
        ++iter;
        inc = scaled_increment(sim, sim->solver.dx, &index);
        if (inc <= jo->negligible * sim->solver.newton_tau) {
            at_evaluated = 1;
            break;
        }
        for (int i = 0; i < sim->nx; ++i) x[i] += sim->solver.dx[i];
        sim->form.ops->after_update(&sim->form, &sim->mb);
        const int done = sim->newton->converged(sim, iter, inc, prev, fresh);
        if (done == 2 && jo->negligible >= 0.0) {
            /* converged, and the iterate before the update meets the
             * target too (the test's 2): where the mode allows it, it
             * stands as after a negligible increment (x back to it: the
             * state was evaluated there; an increment, so the subtraction
             * is exact to its own rounding unit) */
            for (int i = 0; i < sim->nx; ++i) x[i] -= sim->solver.dx[i];
            at_evaluated = 1;
        }
        if (done) break;
        if (iter >= sim->opt.max_iter || !isfinite(inc)) {
            *iter_out = iter; /* spent (a halved retry counts them) */
            return convergence_error(sim, t1, iter, inc, index, err);
        }
        refresh = jo->refresh_after(inc, prev);
        prev = inc;
    }
    *iter_out = iter;
    sim->newton->end_step(sim, x);
    /* the state at the converged unknowns (for penalty also the last lambda
     * update), projections, forces at the final state */
    st = jo->finish(sim, x, at_evaluated, t1, err);
    int changed = 0;
    sim->mb.off_grid = t1 != hymo_engine_step_end(sim);
    if (st == HYMO_OK) st = sim->form.ops->finish_step(&sim->form, &sim->mb, t1, sim->state.step + 1, &changed, err);
    sim->mb.off_grid = 0;
    if (st != HYMO_OK) return st;
    if (changed) sim->jac.jac_valid = 0; /* other unknowns */
    hymo_actuators_eval(&sim->act, sim->model, &sim->mb.kin); /* s, sd and F_s at the final state */
    sim->forces->refresh(sim);
    return HYMO_OK;
}

/* Events: the switching function that crossed first in the solved step (by
 * linear interpolation of g between the step's ends), or -1.  A function
 * crossed when the sign of its end value disagrees with its state. */
static int first_crossing(const hymo_sim *sim)
{
    int first = -1;
    double first_frac = INFINITY;
    for (int i = 0; i < sim->nsw; ++i) {
        const double g0 = sim->switching.g_start[i], g1 = sim->switching.g_end[i];
        if ((g1 >= 0.0) == sim->switching.sw[i]) continue;
        const double f = g0 != g1 ? g0 / (g0 - g1) : 0.0;
        if (f < first_frac) {
            first_frac = f;
            first = i;
        }
    }
    return first;
}

static hymo_status trapezoidal_restart(hymo_sim *sim, hymo_error *err);

/* Up to this many events in one step; more is chattering, an error. */
#define MAX_EVENTS_PER_STEP 16
/* an event is located to this fraction of dt */
#define EVENT_TIME_TOL 1e-10

/* Locates the crossing of switching function i inside the solved step
 * (sim->solver.h, ending at t1, where it has crossed) by the Illinois variant of
 * regula falsi on the step size, each evaluation a Newton solve from the
 * committed state; leaves the solution of the shortest step found on the
 * crossed side in the iterate, sim->solver.h its size, *kept the iterations of
 * that solve (the others count as sim->switching.event_iterations).  lambda is
 * restored before each solve (penalty updates it within the step). */
static hymo_status locate(hymo_sim *sim, int i, int *kept, hymo_error *err)
{
    const double t0 = sim->state.t;
    double lo = 0.0, glo = sim->switching.g_start[i], hi = sim->solver.h, ghi = sim->switching.g_end[i];
    int side = 0, iter;
    hymo_status st;
    const double tol = EVENT_TIME_TOL * sim->opt.dt;
    for (int k = 0; hi - lo > tol && k < 60; ++k) {
        double h = (glo * hi - ghi * lo) / (glo - ghi);
        /* a guess next to an end (the secant's, once it has found the
         * crossing) moves half the tolerance inwards, so that the next
         * solve brackets the crossing within the tolerance; bisecting there
         * took ~33 solves per event (log2 of 1/EVENT_TIME_TOL) */
        if (!(h > lo && h < hi)) h = 0.5 * (lo + hi);
        else if (h < lo + 0.5 * tol) h = lo + 0.5 * tol;
        else if (h > hi - 0.5 * tol) h = hi - 0.5 * tol;
        sim->solver.h = h;
        memcpy(sim->mb.lambda, sim->switching.lambda_save, (size_t)sim->m * sizeof(double));
        if ((st = solve(sim, t0 + h, &iter, err)) != HYMO_OK) return st;
        sim->switching.event_iterations += iter;
        *kept = iter;
        hymo_engine_switching(sim, sim->switching.g_end);
        const double g = sim->switching.g_end[i];
        if ((g >= 0.0) != sim->switching.sw[i]) { /* crossed: the new upper end */
            hi = h, ghi = g;
            if (side == +1) glo *= 0.5; /* Illinois: the end kept twice is halved */
            side = +1;
        } else {
            lo = h, glo = g;
            if (side == -1) ghi *= 0.5;
            side = -1;
        }
    }
    if (sim->solver.h != hi) { /* the last solve ended on the old side: the crossed end */
        sim->solver.h = hi;
        memcpy(sim->mb.lambda, sim->switching.lambda_save, (size_t)sim->m * sizeof(double));
        if ((st = solve(sim, t0 + hi, &iter, err)) != HYMO_OK) return st;
        sim->switching.event_iterations += iter;
        *kept = iter;
        hymo_engine_switching(sim, sim->switching.g_end);
    }
    sim->switching.event_iterations -= *kept; /* the kept sub-step counts as the step's */
    return HYMO_OK;
}

/* A (sub-)step whose Newton iteration fails (no convergence, or an
 * iterate the model cannot evaluate: a non-positive volume, a singular
 * matrix; also inside the location of an event) is retried from the
 * committed state with half its size, down to dt/MIN_FRACTION and at most
 * MAX_RETRIES times per grid step;
 * after a sub-step that converged the next one doubles (up to the rest of
 * the step).  A run whose solves all converge takes the plain steps, bit
 * for bit.  Out of retries, the failure is the error.  Measured on the excavator at
 * dt = 10 ms (docs/models.md): the trapezoidal rule rings on the arm's
 * make-up valve opening during cavitation (time constant ~0.4 ms), a
 * sub-step's solution lies below the vapour pressure and Newton cycles
 * across it while the event is located; halved sub-steps resolve it.
 * Solutions below the vapour pressure are not rejected: rejecting them
 * changes no output at 10, 20 or 50 ms and only costs retries. */
#define MIN_FRACTION 1024.0
#define MAX_RETRIES 40

/* st with err's message saying how often the step was halved before */
static hymo_status halved_error(const hymo_sim *sim, hymo_status st, int halvings, hymo_error *err)
{
    if (halvings > 0 && err) {
        const size_t n = strlen(err->message);
        snprintf(err->message + n, sizeof err->message - n,
                 " (after %d retries with halved steps, the last of %.3g s; reduce dt)", halvings, sim->solver.h);
    }
    return st;
}

/* The first time in (sim->state.t, t1) at which an input of the run jumps (a
 * valve reference, a pump speed or set flow, an external force's signal:
 * a table step; a driven joint's signal: any breakpoint, where its
 * acceleration jumps), t1 if none.  A jump within the signals' snapping
 * distance (1e-6 dt) of either end is at that end (on the grid). */
static double next_input_jump(const hymo_sim *sim, double t1)
{
    const hymo_model *model = sim->model;
    const double eps = 1e-6 * sim->opt.dt, t = sim->state.t;
    double tb = t1;
    for (int v = 0; v < sim->nu; ++v) {
        const double b = hymo_signal_next_jump(hymo_sim_valve_signal(sim, v), t, tb, eps); /* NULL: overridden */
        if (b < tb) tb = b;
    }
    for (int j = 0; sim->inputs.in_end && j < sim->n_in; ++j) {
        const double b = hymo_signal_next_jump(hymo_sim_flow_input_signal(sim, j), t, tb, eps);
        if (b < tb) tb = b;
    }
    tb = hymo_fe_next_jump(model, t, tb, eps);
    for (int k = 0; k < model->n_drivers; ++k) {
        const double b = hymo_signal_next_breakpoint(&model->signals[model->drivers[k].signal], t, eps);
        if (b < tb - eps) tb = b;
    }
    return tb;
}

/* At a step's start where an input jumps (a driven joint's breakpoint, an
 * external force's table step): the restart from the right limits
 * (consistent accelerations with the values after the jump), so that the
 * step integrates them from its start and keeps its order.  The valve
 * references (update_inputs) and the pump and set-flow inputs
 * (inputs_at_start) restart their rates at every step start. */
static hymo_status restart_at_input_jump(hymo_sim *sim, hymo_error *err)
{
    const double dt = sim->opt.dt;
    if (!((sim->model->n_drivers && hymo_drivers_break_at(sim, sim->state.t)) ||
          hymo_fe_signals_jump(sim->model, sim->state.t, dt)))
        return HYMO_OK;
    sim->fe.side = +1;
    const hymo_status st = trapezoidal_restart(sim, err);
    sim->fe.side = 0;
    return st;
}

/* One step of size dt to the grid time t_{k+1}.  Where a switching
 * function crosses inside it, the step is cut at the crossing (located to
 * EVENT_TIME_TOL dt), the branch switched, the integration restarted there
 * (consistent accelerations, the actuator power with the new branch) and
 * continued to t_{k+1}: each sub-step integrates a smooth branch, so the
 * rule keeps its order; the output stays on the dt grid.  A sub-step that
 * fails is halved (MIN_FRACTION, MAX_RETRIES above). */
static hymo_status trapezoidal_step(hymo_sim *sim, hymo_error *err)
{
    const double dt = sim->opt.dt, t1 = hymo_engine_step_end(sim);
    hymo_status st;
    int iter = 0, total = 0, events = 0, halvings = 0, start_changed = 1;
    double target = t1; /* end of the (sub-)step being solved */
    /* dt on the grid; the last step is shortened to land on t_end */
    sim->solver.h = t1 == (double)(sim->state.step + 1) * dt && sim->state.t == (double)sim->state.step * dt
                        ? dt
                        : t1 - sim->state.t;
    /* a driven joint's acceleration jumps at its signal's breakpoints:
     * restart there from the right limits (consistent accelerations); so
     * where an external force's signal jumps (a table step on the grid: the
     * committed accelerations are the left limit's, and without the restart
     * the step is first order, pendulum with a 30 N step at 0.3 s: error
     * ratios 2.03-2.14 per halving of dt) */
    if (sim->state.step > 0 && (st = restart_at_input_jump(sim, err)) != HYMO_OK) return st;
    /* an input that jumps inside the step cuts it there (t_stop): each
     * sub-step integrates smooth inputs, the next restarts from the right
     * limits (taking the jump at the step's end is first order) */
    double t_stop = next_input_jump(sim, t1);
    if (t_stop < t1) sim->solver.h = t_stop - sim->state.t, target = t_stop;
    for (;;) {
        if (start_changed) { /* the state at sim->t (after a failed solve the last evaluation is not) */
            if ((st = inputs_at_start(sim, err)) != HYMO_OK) return st;
            if (sim->nsw > 0) hymo_engine_switching(sim, sim->switching.g_start);
            memcpy(sim->switching.lambda_save, sim->mb.lambda, (size_t)sim->m * sizeof(double));
            start_changed = 0;
        }
        const double h_try = sim->solver.h;
        const int can_halve = halvings < MAX_RETRIES && 0.5 * h_try >= dt / MIN_FRACTION;
        int redo = 0, i = -1;
        st = solve(sim, target, &iter, err);
        if ((st == HYMO_ERR_CONVERGENCE || st == HYMO_ERR_NUMERIC) && can_halve)
            redo = 1, sim->switching.event_iterations += iter;
        else if (st != HYMO_OK)
            return halved_error(sim, st, halvings, err);
        if (!redo && sim->nsw > 0) {
            hymo_engine_switching(sim, sim->switching.g_end);
            i = first_crossing(sim);
        }
        if (i >= 0) {
            if (++events > MAX_EVENTS_PER_STEP)
                return hymo_error_set(err, HYMO_ERR_CONVERGENCE,
                                      "t = %.6g s (step %ld): more than %d events in one step (switching "
                                      "function %d chatters); reduce dt",
                                      sim->state.t, sim->state.step + 1, MAX_EVENTS_PER_STEP, i);
            sim->switching.event_iterations += iter; /* the step that crossed is discarded: location work */
            st = locate(sim, i, &iter, err);
            if ((st == HYMO_ERR_CONVERGENCE || st == HYMO_ERR_NUMERIC) && can_halve)
                redo = 1, --events;
            else if (st != HYMO_OK)
                return halved_error(sim, st, halvings, err);
        }
        if (redo) { /* from the committed state with half the step */
            hymo_error_clear(err);
            ++halvings;
            sim->stats.step_halvings++;
            sim->solver.h = 0.5 * h_try;
            target = sim->state.t + sim->solver.h;
            memcpy(sim->mb.lambda, sim->switching.lambda_save, (size_t)sim->m * sizeof(double));
            continue;
        }
        total += iter;
        if (i < 0) {
            if (target == t1) break;
            commit(sim, target, 0, 0); /* a halved sub-step, or one that ends at an input's jump */
            start_changed = 1;
            if (target == t_stop) { /* the jump: restart from the right limits, on to the next stop */
                if ((st = restart_at_input_jump(sim, err)) != HYMO_OK) return st;
                t_stop = next_input_jump(sim, t1);
                sim->solver.h = t_stop - sim->state.t, target = t_stop;
                continue;
            }
            sim->solver.h = 2.0 * h_try; /* after a halved sub-step the next one twice as long */
            target = sim->state.t + sim->solver.h;
            if (target >= t_stop - EVENT_TIME_TOL * dt) sim->solver.h = t_stop - sim->state.t, target = t_stop;
            continue;
        }
        /* an event within the location tolerance of the sub-step's end is at its end */
        const int at_end = target - (sim->state.t + sim->solver.h) <= EVENT_TIME_TOL * dt;
        const double te = at_end ? target : sim->state.t + sim->solver.h;
        const int grid = at_end && target == t1;
        commit(sim, te, 0, grid);
        start_changed = 1;
        /* every function that has crossed by te takes its new branch */
        for (int k = 0; k < sim->nsw; ++k) sim->switching.sw[k] = sim->switching.g_end[k] >= 0.0;
        sim->switching.events++;
        sim->switching.last_event = te;
        if ((st = trapezoidal_restart(sim, err)) != HYMO_OK) return st;
        memcpy(sim->state.pd, sim->eval.hp, (size_t)sim->np * sizeof(double)); /* rates with the new branch */
        if (grid) {
            sim->stats.iterations_total += total;
            break;
        }
        if (at_end && target == t_stop) { /* the event at an input's jump: its right limits too */
            if ((st = restart_at_input_jump(sim, err)) != HYMO_OK) return st;
            t_stop = next_input_jump(sim, t1);
        }
        sim->solver.h = t_stop - te;
        target = t_stop;
    }
    if (sim->state.t != t1) commit(sim, t1, total, 1);
    sim->stats.last_iterations = total;
    if (total > sim->stats.iterations_max) sim->stats.iterations_max = total;
    hymo_engine_record_stats(sim);
    return HYMO_OK;
}

static double trapezoidal_input_time(const hymo_sim *sim) { return hymo_engine_step_end(sim); }

double hymo_engine_step_end(const hymo_sim *sim)
{
    const double dt = sim->opt.dt, t1 = (double)(sim->state.step + 1) * dt, te = sim->opt.t_end;
    return t1 > te + 1e-9 * dt && sim->state.t < te - 1e-9 * dt ? te : t1;
}

static hymo_status trapezoidal_restart(hymo_sim *sim, hymo_error *err)
{
    hymo_mb *mb = &sim->mb;
    hymo_kin_positions(&mb->kin, sim->model, mb->z);
    hymo_kin_velocities(&mb->kin, sim->model, mb->zd);
    memcpy(mb->zn, mb->z, (size_t)sim->nz * sizeof(double));
    memcpy(mb->zdn, mb->zd, (size_t)sim->nz * sizeof(double));
    hymo_status st = hymo_engine_dynamics(sim, sim->state.t, err);
    if (st == HYMO_OK) st = hymo_engine_consistent_accelerations(sim, 0, err);
    if (st != HYMO_OK) return st;
    for (int a = 0; a < sim->na; ++a) sim->record.power[a] = sim->eval.force[a] * sim->act.sd[a];
    sim->record.fe_power = sim->fe.power; /* with the new branch */
    return HYMO_OK;
}

static hymo_status no_content(hymo_sim *sim, hymo_error *err) { return (void)sim, (void)err, HYMO_OK; }
static void no_destroy(hymo_sim *sim) { (void)sim; }

/* Richardson: the trapezoidal rule is of order 2, so the run's error is
 * (x_dt - x_2dt) / (2^2 - 1). */
static void trapezoidal_companion(const hymo_run_options *opt, hymo_run_options *co, int *ratio, double *factor,
                                  const char **method, int *order)
{
    *co = *opt;
    co->dt = 2.0 * opt->dt;
    *ratio = 2;
    *factor = 1.0 / 3.0;
    *order = 2;
    *method = "richardson, companion at 2 dt";
}

const hymo_integrator_ops hymo_trapezoidal_ops = {
    .name = "trapezoidal-newton",
    .jacobian_name = NULL,
    .create = no_content,
    .destroy = no_destroy,
    .step = trapezoidal_step,
    .input_time = trapezoidal_input_time,
    .companion = trapezoidal_companion,
    .restart = trapezoidal_restart,
};

const char *hymo_engine_jacobian_name(const hymo_sim *sim)
{
    return sim->integrator->jacobian_name ? sim->integrator->jacobian_name : sim->jacobian->name;
}

hymo_status hymo_sim_step(hymo_sim *sim, hymo_error *err)
{
    /* the clock is read once, at the first step (no per-step cost): a
     * summary after stepping by hand reports the time since then;
     * hymo_run sets its own figure (the integration loop only) */
    if (!(sim->stats.clock0 > 0.0)) sim->stats.clock0 = hymo_now_seconds();
    return sim->integrator->step(sim, err);
}

hymo_status hymo_engine_consistent_accelerations(hymo_sim *sim, int set_lambda, hymo_error *err)
{
    if (sim->model->n_drivers) return hymo_drivers_consistent_accelerations(sim, set_lambda, err); /* driven joints */
    hymo_mb *mb = &sim->mb;
    const int nz = sim->nz, m = sim->m, n = nz + m;
    double *rhs = sim->accel.kkt_rhs;
    hymo_constraints_eval(mb->con, &mb->kin, mb->phi, mb->phi_zv, mb->gamma);
    /* tree mode: M' zdd = Q' by the articulated-body recursion (tan_w is zero), no M' */
    if (sim->jac.tree_mode ? hymo_kin_tree_factor(&mb->kin, sim->jac.tan_w, sim->jac.tree_w)
        : sim->accel.kkt_sp  ? hymo_mb_kkt_sparse_factor(mb, sim->accel.kkt_sp)
                       : hymo_mb_kkt_factor(mb, sim->accel.kkt, sim->accel.kkt_piv))
        return hymo_error_set(err, HYMO_ERR_MODEL,
                              "%s: t = %.6g s: singular mass matrix (a body without mass or inertia about its "
                              "joint?)",
                              sim->model->source_path ? sim->model->source_path : sim->model->name, sim->state.t);
    for (int i = 0; i < nz; ++i) rhs[i] = mb->kin.Q[i];
    for (int r = 0; r < m; ++r) rhs[nz + r] = mb->con->redundant[r] ? 0.0 : -mb->gamma[r]; /* redundant: mu_r = 0 */
    if (sim->jac.tree_mode) {
        hymo_kin_tree_solve(&mb->kin, sim->jac.tree_w, rhs, sim->jac.tree_s);
        sim->jac.jac_valid = 0; /* the Newton matrix's tree factors were in tree_w */
    } else if (sim->accel.kkt_sp) {
        hymo_mb_kkt_sparse_solve(sim->accel.kkt_sp, rhs);
    } else {
        hymo_lu_solve(n, sim->accel.kkt, sim->accel.kkt_piv, rhs);
    }
    memcpy(mb->zdd, rhs, (size_t)nz * sizeof(double));
    if (set_lambda) memcpy(mb->lambda, rhs + nz, (size_t)m * sizeof(double));
    return HYMO_OK;
}

void hymo_engine_record_stats(hymo_sim *sim)
{
    const hymo_model *model = sim->model;
    hymo_mb *mb = &sim->mb;
    hymo_sim_record *rec = &sim->record;
    hymo_sim_extremes *ex = &sim->extremes;
    const double tk = sim->state.t;
    int m = sim->m;
    rec->kinetic = hymo_kin_kinetic_energy(&mb->kin, model);
    rec->potential = hymo_kin_potential_energy(&mb->kin, model);
    double wsum = 0.0;
    for (int a = 0; a < sim->na; ++a) wsum += rec->work[a];
    if (sim->fe.n > 0) { /* the force elements' work */
        fe_work_to(sim);
        wsum += rec->fe_work;
    }
    rec->drift = rec->kinetic + rec->potential - rec->energy0 - wsum;
    if (fabs(rec->drift) > ex->peak_drift) ex->peak_drift = fabs(rec->drift);
    if (fabs(wsum) > ex->max_work) ex->max_work = fabs(wsum);
    const double floor_p = hymo_fluid_floor(model);
    for (int k = 0; k < sim->np; ++k) {
        const double pk = sim->state.p[k];
        if (!(pk >= ex->p_lo)) ex->p_lo = pk, ex->v_lo = k, ex->t_lo = tk;
        if (!(pk <= ex->p_hi)) ex->p_hi = pk, ex->v_hi = k, ex->t_hi = tk;
        if (pk < 0.0 && !ex->p_negative[k]) ex->p_negative[k] = 1, ex->n_negative++;
        double *r = ex->p_vrange + 4 * k;
        if (!(pk >= r[0])) r[0] = pk, r[1] = tk;
        if (!(pk <= r[2])) r[2] = pk, r[3] = tk;
        if (!(pk >= floor_p) && !ex->p_below_floor[k]) ex->p_below_floor[k] = 1, ex->n_below_floor++;
    }
    if (m == 0) return;
    /* phi, phi_z and gamma are those of the final evaluation (after the
     * projections for penalty); for double-step phi is the residual before the
     * last inner-Newton correction (<= 1e-10), i.e. an upper bound */
    double *vel = rec->cv_rows, *acc = rec->ca_rows;
    const hymo_constraints *con = mb->con;
    for (int r = 0; r < m; ++r) {
        double sv = 0.0, sa = mb->gamma[r];
        if (mb->phi_z_live) { /* without the entries zero at every consistent position */
            for (int e = con->live_start[r]; e < con->live_start[r + 1]; ++e) {
                const int t = con->live[e];
                sv += mb->phi_zv[t] * mb->zd[con->col[t]];
                sa += mb->phi_zv[t] * mb->zdd[con->col[t]];
            }
        } else {
            for (int t = con->row_start[r]; t < con->row_start[r + 1]; ++t) {
                sv += mb->phi_zv[t] * mb->zd[con->col[t]];
                sa += mb->phi_zv[t] * mb->zdd[con->col[t]];
            }
        }
        vel[r] = sv;
        acc[r] = sa;
    }
    hymo_constraints_cut_norms(mb->con, sim->ncut, mb->phi, rec->c_pos);
    hymo_constraints_cut_norms(mb->con, sim->ncut, vel, rec->c_vel);
    hymo_constraints_cut_norms(mb->con, sim->ncut, acc, rec->c_acc);
    double np_ = 0, nv = 0, na_ = 0;
    for (int r = 0; r < m; ++r) {
        np_ += mb->phi[r] * mb->phi[r];
        nv += vel[r] * vel[r];
        na_ += acc[r] * acc[r];
    }
    for (int r = 0; r < m; ++r) /* the rows left out of a maximal independent set */
        if (mb->con->redundant[r]) ex->max_cred = fmax(ex->max_cred, fabs(mb->phi[r]));
    ex->max_cpos = fmax(ex->max_cpos, sqrt(np_));
    ex->max_cvel = fmax(ex->max_cvel, sqrt(nv));
    ex->max_cacc = fmax(ex->max_cacc, sqrt(na_));
}
