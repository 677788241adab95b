/* Simulation creation (run data allocated once) and the start from the
 * compiled model's initial state (SPEC §3). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_internal.h"
#include "engine.h"
#include "driver.h"

#define ALLOC(ptr, count)                                                                          \
    do {                                                                                           \
        (ptr) = calloc((size_t)((count) > 0 ? (count) : 1), sizeof *(ptr));                        \
        if (!(ptr)) goto nomem;                                                                    \
    } while (0)

/* The state at t = 0 from the compiled initial state: assembled positions,
 * the projected initial rates (zero unless given), U = 0, static pressures, the formulation's start
 * (independent coordinates), consistent accelerations, the records. */
static hymo_status initialize(hymo_sim *sim, hymo_error *err)
{
    const hymo_model *model = sim->model;
    const hymo_compiled *cm = sim->cm;
    hymo_mb *mb = &sim->mb;
    memcpy(mb->z, cm->z0, (size_t)sim->nz * sizeof(double));
    if (model->n_drivers) { /* driven joints: the motion starts at the assembled z0 */
        hymo_status dst = hymo_drivers_check_start(sim, err);
        if (dst != HYMO_OK) return dst;
    }
    hymo_kin_positions(&mb->kin, model, mb->z);
    hymo_constraints_eval(mb->con, &mb->kin, mb->phi, mb->phi_zv, NULL);
    hymo_status st = sim->form.ops->start(&sim->form, mb, 0.0, err);
    if (st != HYMO_OK) return st;
    memcpy(mb->zd, cm->zd0, (size_t)sim->nz * sizeof(double)); /* zero unless the file gives rates */
    /* the first step has no truncation-error estimate for the Newton
     * target: from rest its predictor misses by O(h^3 q''') with q''' = 0
     * at t = 0, and any target does; with initial rates the smallest target
     * (an iterate kept at 0.5 x tolerance puts up to 2/h^2 x tolerance
     * into the first acceleration: with that target the fast Jacobian's
     * error on tests/engine/test_initial_rates.c's pendulum is 4x
     * numeric's, with this one equal) */
    if (cm->rates_report[0]) sim->solver.newton_lte = 0.0;
    hymo_kin_velocities(&mb->kin, model, mb->zd);
    memcpy(sim->state.p, cm->p0, (size_t)sim->np * sizeof(double));
    memcpy(sim->state.u, cm->u0, (size_t)sim->nu * sizeof(double));
    /* derivatives at t = 0+ */
    memcpy(mb->zn, mb->z, (size_t)sim->nz * sizeof(double));
    memcpy(mb->zdn, mb->zd, (size_t)sim->nz * sizeof(double));
    memcpy(sim->eval.pn, sim->state.p, (size_t)sim->np * sizeof(double));
    memcpy(sim->eval.un, sim->state.u, (size_t)sim->nu * sizeof(double));
    for (int v = 0; v < sim->nu; ++v)
        sim->inputs.uref_end[v] = hymo_signal_eval(&model->signals[model->valves[v].signal], 0.0, +1);
    if (sim->inputs.in_end) hymo_sim_flow_inputs(sim, 0.0, +1, sim->opt.dt, sim->inputs.in_end);
    st = hymo_engine_dynamics(sim, 0.0, err);
    if (st != HYMO_OK) return st;
    st = hymo_engine_consistent_accelerations(sim, 1, err);
    if (st != HYMO_OK) return st;
    memcpy(sim->state.pd, sim->eval.hp, (size_t)sim->np * sizeof(double));
    memcpy(sim->state.ud, sim->eval.hu, (size_t)sim->nu * sizeof(double));
    sim->record.energy0 = hymo_kin_kinetic_energy(&mb->kin, model) + hymo_kin_potential_energy(&mb->kin, model);
    for (int a = 0; a < sim->na; ++a) sim->record.power[a] = sim->eval.force[a] * sim->act.sd[a];
    hymo_constraints_eval(mb->con, &mb->kin, mb->phi, mb->phi_zv, mb->gamma);
    hymo_engine_record_stats(sim);
    return HYMO_OK;
}

/* The Newton matrix's compressed columns, sized from the circuit
 * derivatives' patterns (they grow, doubling, if a build needs more: in the
 * first steps). */
static hymo_status newton_matrix_alloc(hymo_sim *sim, hymo_error *err)
{
    const hymo_circuit_derivs *cd = &sim->jac.cderiv;
    const long nx = sim->nx;
    long est = (long)cd->dpdot_dp.nnz + cd->dpdot_du.nnz + sim->nu + 4L * (cd->dpdot_ds.nnz + cd->dF_dp.nnz) + nx;
    long full = (long)sim->jac.jm.nnz + 2 * est; /* the mechanical block's pattern (tree mode: M' is not in it) */
    if (full > nx * nx) full = nx * nx;
    if (est > INT_MAX / 4 || full > INT_MAX / 4)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "model too large: %ld unknowns", nx);
    if (hymo_sparse_alloc(&sim->jac.jh, (int)nx, (int)nx, (int)est) ||
        hymo_sparse_alloc(&sim->jac.jfull, (int)nx, (int)nx, (int)(full > 0 ? full : 1)))
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (Newton matrix, %ld unknowns)", nx);
    return HYMO_OK;
}

hymo_status hymo_sim_create(const hymo_model *model, const hymo_run_options *opt, hymo_sim **out,
                            hymo_error *err)
{
    return hymo_sim_create_with(model, opt, NULL, out, err);
}


/* The mechanical block's pattern (sim->jac.jm, src/engine/engine.h): tree mode's
 * diagonal, or the formulation's (hymo_formulation_ops.mech_pattern: its
 * own terms and the actuators' and force elements' joint sets), or the
 * complete one. */
static hymo_status mech_block(hymo_sim *sim, hymo_error *err)
{
    const hymo_model *model = sim->model;
    const int n = sim->nxm, nz = sim->nz, nsets = sim->na + model->n_force_elements;
    if (sim->jac.tree_mode) {
        if (hymo_sparse_alloc(&sim->jac.jm, n, n, n)) goto nomem;
        for (int j = 0; j < n; ++j) sim->jac.jm.row[j] = j, sim->jac.jm.col_start[j + 1] = j + 1;
        sim->jac.jm.nnz = n;
        return HYMO_OK;
    }
    int np = -1;
    int *start = NULL, *joint = NULL, *rows = NULL, *cols = NULL;
    if (sim->form.ops->mech_pattern) {
        start = calloc((size_t)nsets + 1, sizeof(int));
        joint = malloc(((size_t)nsets * (size_t)nz + 1) * sizeof(int));
        if (!start || !joint) goto nomem_sets;
        for (int s = 0; s < nsets; ++s) {
            int *out = joint + start[s];
            const int k = s < sim->na ? hymo_actuator_joints(model, &sim->mb.kin, s, out)
                                      : hymo_fe_joints(model, &sim->mb.kin, s - sim->na, out);
            start[s + 1] = start[s] + k;
        }
        np = sim->form.ops->mech_pattern(&sim->form, &sim->mb, start, joint, nsets, NULL, NULL);
    }
    if (np < 0) {
        free(start), free(joint);
        if (hymo_sparse_full(&sim->jac.jm, n, n)) goto nomem;
        return HYMO_OK;
    }
    rows = malloc(((size_t)np + 1) * sizeof(int));
    cols = malloc(((size_t)np + 1) * sizeof(int));
    if (!rows || !cols) goto nomem_sets;
    sim->form.ops->mech_pattern(&sim->form, &sim->mb, start, joint, nsets, rows, cols);
    const int bad = hymo_sparse_pattern(&sim->jac.jm, n, n, np, rows, cols);
    free(start), free(joint), free(rows), free(cols);
    if (bad) goto nomem;
    return HYMO_OK;
nomem_sets:
    free(start), free(joint), free(rows), free(cols);
nomem:
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (mechanical block of the Newton matrix)");
}

/* The linear solver sim->opt.linear_solver of nx unknowns, its dense block
 * and tree mode (hymo_engine_tree_mode). */
static hymo_status linsol_setup(hymo_sim *sim, int nx, hymo_error *err)
{
    hymo_status st = hymo_linsol_create(sim->opt.linear_solver, nx, &sim->ls, err);
    if (st == HYMO_OK) st = hymo_linsol_set_dense_block(sim->ls, sim->nxm, err);
    if (st == HYMO_OK) st = hymo_engine_tree_mode(sim, err);
    return st;
}

hymo_status hymo_sim_create_with(const hymo_model *model, const hymo_run_options *opt, const hymo_sim_tables *tables,
                                 hymo_sim **out, hymo_error *err)
{
    *out = NULL;
    hymo_status st = hymo_run_options_check(opt, err);
    if (st != HYMO_OK) return st;
    if (model->n_drivers > 0 && opt->integrator != HYMO_INTEGRATOR_TRAPEZOIDAL) /* driven joints */
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "%s: driven_joints.%s: a prescribed joint motion needs the trapezoidal integrator",
                              model->source_path ? model->source_path : model->name, model->drivers[0].name);
    const hymo_compiled *cm;
    st = hymo_compiled_initial(model, &cm, err);
    if (st != HYMO_OK) return st;
    hymo_sim *sim = calloc(1, sizeof *sim);
    if (!sim) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    sim->model = model;
    sim->cm = cm;
    sim->opt = *opt;
    static const hymo_formulation_ops *const formulations[] = {&hymo_double_step_ops, &hymo_penalty_ops};
    static const hymo_jacobian_ops *const jacobians[] = {&hymo_jacobian_numeric_ops, &hymo_jacobian_fast_ops};
    static const hymo_integrator_ops *const integrators[] = {&hymo_trapezoidal_ops, &hymo_ida_ops};
    sim->integrator = tables && tables->integrator ? tables->integrator : integrators[opt->integrator];
    sim->form.ops = tables && tables->formulation ? tables->formulation : formulations[opt->formulation];
    sim->jacobian = jacobians[opt->jacobian];
    static const hymo_newton_test_ops *const tests[] = {&hymo_newton_contractive_ops, &hymo_newton_seed_ops};
    sim->newton = tests[opt->newton_test];
    sim->solver.newton_theta = 0.5;
    sim->solver.newton_theta_age = 2; /* not measured */
    sim->solver.newton_lte = INFINITY;
    /* the start is monolithic (static pressures); the force source applies from the first step */
    sim->forces = &hymo_forces_monolithic_ops;
    const hymo_force_source_ops *forces = tables && tables->forces ? tables->forces : &hymo_forces_monolithic_ops;
    if ((st = hymo_mb_alloc(&sim->mb, model, &cm->kin, &cm->con, err)) != HYMO_OK) goto fail;
    sim->mb.dt = opt->dt;
    sim->mb.alpha = opt->penalty_alpha;
    sim->mb.alpha_auto = opt->penalty_alpha_auto; /* mass-scaled at the start: penalty.c pb_start */
    sim->mb.reselect_ratio = opt->reselect_ratio;
    if ((st = sim->form.ops->create(&sim->form, &sim->mb, err)) != HYMO_OK) goto fail;
    const int nz = sim->nz = model->n_bodies;
    const int m = sim->m = cm->con.m;
    const int np = sim->np = model->n_volumes;
    const int nu = sim->nu = model->n_valves;
    /* motors, then driven joints: actuators after the cylinders */
    const int na = sim->na = model->n_cylinders + model->n_motors + model->n_drivers;
    const int nd = model->n_drivers;
    const int ncut = sim->ncut = model->n_cuts;
    /* an explicit formulation has no Newton unknowns; the sizes are unused then */
    sim->nxm = sim->form.ops->n_mech ? sim->form.ops->n_mech(&sim->form) : 0;
    const int nx = sim->nx = sim->nxm + forces->n_unknowns(sim);
    /* auto: KLU if the engine takes tree mode with it, else the dense LU
     * (also for an integrator with a Newton matrix of its own or none: IDA
     * takes the dense solver only, Euler has no Newton system); sim->opt
     * records the solver taken */
    const int auto_ls = opt->linear_solver == HYMO_LINSOL_AUTO;
    if (auto_ls) sim->opt.linear_solver = sim->integrator->jacobian_name ? HYMO_LINSOL_DENSE : HYMO_LINSOL_KLU;
    if ((st = hymo_actuators_alloc(&sim->act, na, err)) != HYMO_OK ||
        (st = linsol_setup(sim, nx, err)) != HYMO_OK)
        goto fail;
    if (auto_ls && sim->opt.linear_solver == HYMO_LINSOL_KLU && !sim->jac.tree_mode) {
        hymo_linsol_free(sim->ls);
        sim->ls = NULL;
        sim->opt.linear_solver = HYMO_LINSOL_DENSE;
        if ((st = linsol_setup(sim, nx, err)) != HYMO_OK) goto fail;
    }
    const int tree = sim->jac.tree_mode; /* the Newton matrix's arrays are O(n) (src/engine/engine.h) */
    if ((st = hymo_fe_alloc(&sim->fe, model, err)) != HYMO_OK) goto fail;
    sim->nsw_source = forces->n_switches(sim);
    sim->nsw = sim->nsw_source + sim->fe.nsw;
    if (hymo_circuit_has_inputs(model)) sim->n_in = model->n_pumps + model->n_flow_controls;
    hymo_sim_state *state = &sim->state;
    ALLOC(state->p, np); ALLOC(state->pd, np); ALLOC(state->u, nu); ALLOC(state->ud, nu);
    state->h_prev = opt->dt;
    ALLOC(state->zdd_prev, nz); ALLOC(state->pd_prev, np); ALLOC(state->pd_prev2, np);
    ALLOC(state->lambda_prev, m); ALLOC(state->lambda_prev2, m);
    hymo_sim_inputs *inputs = &sim->inputs;
    ALLOC(inputs->uref_start, nu); ALLOC(inputs->uref_end, nu);
    if (sim->n_in) { /* NULL without flow inputs */
        ALLOC(inputs->in_start, sim->n_in); ALLOC(inputs->in_end, sim->n_in);
    }
    ALLOC(inputs->ext_force, na); ALLOC(inputs->tlm_in, 4 * na);
    hymo_sim_eval *ev = &sim->eval;
    ALLOC(ev->pn, np); ALLOC(ev->pdn, np); ALLOC(ev->un, nu); ALLOC(ev->udn, nu);
    ALLOC(ev->force, na); ALLOC(ev->hp, np); ALLOC(ev->hu, nu);
    ev->circ = cm->circ; /* the compiled branches (geometry) until the switching states are set */
    if (inputs->in_end) ev->circ.pump_speed = inputs->in_end, ev->circ.fc_flow = inputs->in_end + model->n_pumps;
    hymo_sim_solver *solver = &sim->solver;
    solver->h = opt->dt;
    ALLOC(solver->x, nx); ALLOC(solver->dx, nx); ALLOC(solver->f, nx); ALLOC(solver->fp, nx);
    ALLOC(solver->xpred, nx);
    hymo_sim_jac *jac = &sim->jac;
    if ((st = mech_block(sim, err)) != HYMO_OK) goto fail;
    /* the fast Jacobian's gradients: the cylinders', then the force elements' */
    const int nfe = hymo_fe_max_rows(model);
    ALLOC(jac->act_gz, (na + nfe) * (tree ? 1 : nz)); ALLOC(jac->act_gx, (na + nfe) * (tree ? 1 : nz));
    ALLOC(jac->tan_w, nx); ALLOC(jac->tan_idx, nx); ALLOC(jac->tan_mark, nx);
    ALLOC(jac->tree_w, HYMO_KIN_TREE_W * nz); ALLOC(jac->tree_s, 12 * nz);
    ALLOC(jac->zsave, nz);
    /* consistent accelerations: the dense KKT matrix below HYMO_KKT_SPARSE_MIN (and with driven joints), KLU's
     * from it on */
    hymo_sim_accel *accel = &sim->accel;
    const int kkt_sparse = !tree && nd == 0 && nz + m >= HYMO_KKT_SPARSE_MIN, nk = nz + m + nd;
    ALLOC(accel->kkt, tree || kkt_sparse ? 0 : nk * nk); ALLOC(accel->kkt_rhs, nk); ALLOC(accel->kkt_piv, nk);
    if (kkt_sparse && !(accel->kkt_sp = hymo_mb_kkt_sparse_new(&sim->mb))) goto nomem;
    hymo_sim_switching *sw = &sim->switching;
    ALLOC(sw->sw, sim->nsw); ALLOC(sw->g_start, sim->nsw); ALLOC(sw->g_end, sim->nsw); ALLOC(sw->lambda_save, m);
    sw->last_event = NAN;
    hymo_sim_record *rec = &sim->record;
    ALLOC(rec->work, na); ALLOC(rec->power, na); ALLOC(rec->s_prev, na);
    ALLOC(rec->c_pos, ncut); ALLOC(rec->c_vel, ncut); ALLOC(rec->c_acc, ncut);
    ALLOC(rec->cv_rows, m); ALLOC(rec->ca_rows, m);
    hymo_sim_extremes *ex = &sim->extremes;
    ex->p_lo = INFINITY, ex->p_hi = -INFINITY, ex->v_lo = ex->v_hi = -1;
    ALLOC(ex->p_negative, np); ALLOC(ex->p_vrange, 4 * np); ALLOC(ex->p_below_floor, np);
    for (int k = 0; k < np; ++k) ex->p_vrange[4 * k] = INFINITY, ex->p_vrange[4 * k + 2] = -INFINITY;
    if ((st = hymo_circuit_derivs_alloc(&jac->cderiv, model, np, nu, na, err)) != HYMO_OK ||
        (st = newton_matrix_alloc(sim, err)) != HYMO_OK || (st = initialize(sim, err)) != HYMO_OK ||
        (st = sim->integrator->create(sim, err)) != HYMO_OK)
        goto fail;
    sim->forces = forces;
    if (sim->nsw > 0) { /* the branches from here on follow the switching states, set at the start */
        hymo_engine_switching(sim, sw->g_start);
        for (int i = 0; i < sim->nsw; ++i) sw->sw[i] = sw->g_start[i] >= 0.0;
        if (sim->nsw_source > 0) ev->circ.sw = sw->sw; /* else the circuit keeps the geometry's branches */
        if (sim->fe.nsw > 0) sim->fe.sw = sw->sw + sim->nsw_source;
    }
    memcpy(sim->inputs.ext_force, sim->eval.force, (size_t)na * sizeof(double));
    *out = sim;
    return HYMO_OK;
nomem:
    st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (simulation state)");
fail:
    hymo_sim_free(sim);
    return st;
}

void hymo_sim_free(hymo_sim *sim)
{
    if (!sim) return;
    if (sim->integrator) sim->integrator->destroy(sim);
    if (sim->form.ops) sim->form.ops->destroy(&sim->form);
    hymo_mb_free(&sim->mb);
    hymo_actuators_free(&sim->act);
    hymo_fe_free(&sim->fe);
    hymo_circuit_derivs_free(&sim->jac.cderiv);
    hymo_linsol_free(sim->ls);
    hymo_sim_state *state = &sim->state;
    hymo_sim_inputs *inputs = &sim->inputs;
    hymo_sim_eval *ev = &sim->eval;
    hymo_sim_solver *solver = &sim->solver;
    hymo_sim_jac *jac = &sim->jac;
    hymo_sim_record *rec = &sim->record;
    double *arrays[] = {
        state->p, state->pd, state->u, state->ud, state->zdd_prev, state->pd_prev, state->pd_prev2,
        state->lambda_prev, state->lambda_prev2,
        inputs->uref_start, inputs->uref_end, inputs->in_start, inputs->in_end, inputs->ext_force, inputs->tlm_in,
        ev->pn, ev->pdn, ev->un, ev->udn, ev->force, ev->hp, ev->hu,
        solver->x, solver->dx, solver->f, solver->fp, solver->xpred,
        jac->act_gz, jac->act_gx, jac->tan_w, jac->tree_w, jac->tree_s, jac->zsave,
        sim->accel.kkt, sim->accel.kkt_rhs,
        sim->switching.g_start, sim->switching.g_end, sim->switching.lambda_save,
        rec->work, rec->power, rec->s_prev, rec->c_pos, rec->c_vel, rec->c_acc, rec->cv_rows, rec->ca_rows,
        sim->extremes.p_vrange};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) free(arrays[i]);
    free(sim->accel.kkt_piv);
    hymo_mb_kkt_sparse_free(sim->accel.kkt_sp);
    free(jac->tan_idx), free(jac->tan_mark);
    free(jac->g_idx), free(jac->g_jt_start), free(jac->g_jt);
    hymo_sparse_free(&jac->jm);
    hymo_sparse_free(&jac->jh);
    hymo_sparse_free(&jac->jfull);
    free(sim->switching.sw);
    free(sim->extremes.p_negative);
    free(sim->extremes.p_below_floor);
    hymo_sim_control_free(sim); /* src/engine/control.c (last: sim->model may be its copy) */
    free(sim);
}
