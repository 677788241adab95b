/* Force sources of the engine (hymo_force_source_ops): where the cylinder
 * forces at the iterate come from, and the hydraulic unknowns, residual
 * rows and Jacobian blocks that go with them.
 *   monolithic       the lumped-fluid circuit is part of the unknowns
 *   split-force      F_s at t_{k+1} is an input (velocity-force coupling)
 *   split-pressure   the chamber pressures are inputs in pn; F_s from the
 *                    engine's own s, sd (velocity-pressure coupling) */
#include <string.h>

#include "engine.h"

/* Cylinder forces F_s(p, s, sd) at the current actuators into force[na]. */
static void cylinder_forces(const hymo_sim *sim, const double *p, double *force)
{
    hymo_circuit_eval(&sim->eval.circ, sim->model, sim->act.s, sim->act.sd, p, sim->eval.un, sim->inputs.uref_end, NULL,
                      NULL, force);
}

static hymo_status volume_error(const hymo_sim *sim, double t, hymo_error *err)
{
    return hymo_error_set(err, HYMO_ERR_NUMERIC,
                          "t = %.6g s (step %ld): a hydraulic volume became non-positive "
                          "(piston beyond its stroke?)",
                          t, sim->state.step + 1);
}

/* dt^2/4 (dF/ds + 2/dt dF/dsd) g g^T: actuator stiffness and damping in
 * the mechanical block (circuit derivatives at the iterate in cderiv).
 * Only the non-zero entries of g (the joints between the cylinder's two
 * bodies) are visited: the terms left out are exact zeros, so the entries
 * are those of the full loops (up to the sign of a zero). */
void hymo_engine_actuator_stiffness(hymo_sim *sim, int a, double k)
{
    const int ld = sim->jac.g_ld;
    const double *g = &sim->jac.act_gx[a * ld];
    int *nzl = sim->jac.tan_idx, n = 0;
    for (int s = 0; s < ld; ++s)
        if (g[s] != 0.0 && hymo_engine_g_unknown(sim, a, s) >= 0) nzl[n++] = s;
    for (int ql = 0; ql < n; ++ql) {
        const int l = nzl[ql];
        for (int qi = 0; qi < n; ++qi) {
            const int i = nzl[qi];
            hymo_engine_mech_add(sim, hymo_engine_g_unknown(sim, a, i), hymo_engine_g_unknown(sim, a, l),
                                 -(k * g[i] * g[l]));
        }
    }
}

static void actuator_stiffness(hymo_sim *sim)
{
    const double dt = sim->solver.h, c = dt * dt / 4.0, a1 = 2.0 / dt;
    const hymo_circuit_derivs *cd = &sim->jac.cderiv;
    for (int a = 0; a < sim->na; ++a) hymo_engine_actuator_stiffness(sim, a, c * (cd->dF_ds[a] + a1 * cd->dF_dsd[a]));
}

/* ---------------- monolithic ---------------- */

static int mono_n_unknowns(const hymo_sim *sim) { return sim->np + sim->nu; }

static void mono_predict(hymo_sim *sim, double *xh, int extrapolate)
{
    const hymo_model *model = sim->model;
    const double dt = sim->solver.h;
    for (int k = 0; k < sim->np; ++k) {
        xh[k] = sim->state.p[k] + sim->state.pd[k] * dt;
        if (extrapolate) {
            double d1 = sim->state.pd[k] - sim->state.pd_prev[k],
                   d2 = sim->state.step > 1 ? d1 - (sim->state.pd_prev[k] - sim->state.pd_prev2[k]) : 0.0;
            xh[k] += (0.5 * d1 + d2 / 6.0) * dt;
        }
    }
    for (int v = 0; v < sim->nu; ++v) {
        const hymo_valve *va = &model->valves[v];
        double *xu = &xh[sim->np + va->state], u0 = sim->state.u[va->state];
        if (sim->opt.predictor == HYMO_PREDICTOR_EXTRAPOLATE) { /* linear spool ODE: exact trapezoidal step */
            double c = 0.5 * dt / va->tau;
            *xu = (u0 * (1.0 - c) + c * (sim->inputs.uref_start[v] + sim->inputs.uref_end[v])) / (1.0 + c);
        } else {
            *xu = u0 + sim->state.ud[va->state] * dt;
        }
    }
}

static void mono_unpack(hymo_sim *sim, const double *xh)
{
    const double a1 = 2.0 / sim->solver.h;
    const double *xu = xh + sim->np;
    for (int k = 0; k < sim->np; ++k) {
        sim->eval.pn[k] = xh[k];
        sim->eval.pdn[k] = a1 * (xh[k] - sim->state.p[k]) - sim->state.pd[k];
    }
    for (int k = 0; k < sim->nu; ++k) {
        sim->eval.un[k] = xu[k];
        sim->eval.udn[k] = a1 * (xu[k] - sim->state.u[k]) - sim->state.ud[k];
    }
}

static hymo_status mono_forces(hymo_sim *sim, double t, hymo_error *err)
{
    if (hymo_circuit_eval(&sim->eval.circ, sim->model, sim->act.s, sim->act.sd, sim->eval.pn, sim->eval.un,
                          sim->inputs.uref_end, sim->eval.hp, sim->eval.hu, sim->eval.force))
        return volume_error(sim, t, err);
    return HYMO_OK;
}

static void from_pressures(hymo_sim *sim) { cylinder_forces(sim, sim->eval.pn, sim->eval.force); }

/* f(x) rows of seed 002 Eq. 39 plus the spool rows */
static void mono_residual(const hymo_sim *sim, double *fh)
{
    const double c = sim->solver.h * sim->solver.h / 4.0;
    double *fu = fh + sim->np;
    for (int k = 0; k < sim->np; ++k) fh[k] = c * (sim->eval.pdn[k] - sim->eval.hp[k]);
    for (int k = 0; k < sim->nu; ++k) fu[k] = c * (sim->eval.udn[k] - sim->eval.hu[k]);
}

/* pushes the accumulated rows list[0..n) of w (then cleared) as a column of sim->jac.jh */
static int push_accumulated(hymo_sim *sim, int *list, int n, double scale)
{
    double *w = sim->jac.tan_w;
    int bad = 0;
    hymo_sort_ints(list, n);
    for (int q = 0; q < n; ++q) {
        const int r = list[q];
        bad |= hymo_sparse_push(&sim->jac.jh, r, scale * w[r]);
        w[r] = 0.0;
        sim->jac.tan_mark[r] = 0;
    }
    return bad;
}

static inline void accumulate(hymo_sim *sim, int *list, int *n, int r, double v)
{
    if (!sim->jac.tan_mark[r]) sim->jac.tan_mark[r] = 1, list[(*n)++] = r;
    sim->jac.tan_w[r] += v;
}

/* Exact hydraulic rows and columns (analytic circuit derivatives and the
 * chain rule through s, sd), pushed into sim->jac.jh by columns from the
 * sparse circuit derivatives: the cost grows with the connections.  The
 * sums run over the non-zero terms in the order of a dense loop over
 * all terms (the left-out terms are exact zeros: the same entries bit for bit). */
static hymo_status mono_tangent(hymo_sim *sim, double t, hymo_error *err)
{
    const int nxm = sim->nxm, np = sim->np, na = sim->na, nu = sim->nu;
    const double dt = sim->solver.h, c = dt * dt / 4.0, a1 = 2.0 / dt;
    const hymo_model *model = sim->model;
    const hymo_circuit_derivs *cd = &sim->jac.cderiv;
    const double *gx = sim->jac.act_gx;
    if (na > 0 || np > 0) { /* also a circuit without cylinders (e.g. a relief-valve line) */
        if (hymo_circuit_derivatives(&sim->eval.circ, model, sim->act.s, sim->act.sd, sim->eval.pn, sim->eval.un, 1,
                                     &sim->jac.cderiv))
            return volume_error(sim, t, err);
        actuator_stiffness(sim);
    }
    const int p0 = nxm, u0 = nxm + np;
    const hymo_sparse *Ss = &cd->dpdot_ds, *Sd = &cd->dpdot_dsd, *Sp = &cd->dpdot_dp, *Su = &cd->dpdot_du,
                      *Sf = &cd->dF_dp;
    int *list = sim->jac.tan_idx, bad = 0;
    const int ld = sim->jac.g_ld, *jt = sim->jac.g_idx ? sim->jac.g_jt : NULL;
    for (int k = 0; k < nxm; ++k) { /* pressure rows of the mechanical columns: -dt^2/4 (dpdot/ds + 2/dt dpdot/dsd) g */
        int n = 0;
        const int q0 = jt ? sim->jac.g_jt_start[k] : 0, q1 = jt ? sim->jac.g_jt_start[k + 1] : na;
        for (int q = q0; q < q1; ++q) { /* the actuators acting on unknown k */
            const int a = jt ? jt[q] : q;
            const double g = gx[jt ? a * ld : a * ld + k];
            if (g == 0.0) continue;
            for (int e = Ss->col_start[a]; e < Ss->col_start[a + 1]; ++e)
                accumulate(sim, list, &n, p0 + Ss->row[e], (Ss->value[e] + a1 * Sd->value[e]) * g);
        }
        bad |= push_accumulated(sim, list, n, -c);
        hymo_sparse_end_column(&sim->jac.jh);
    }
    for (int q = 0; q < np; ++q) {
        int n = 0; /* mechanical rows: -dt^2/4 g dF/dp */
        for (int e = Sf->col_start[q]; e < Sf->col_start[q + 1]; ++e) {
            const int a = Sf->row[e];
            if (Sf->value[e] == 0.0) continue;
            const double f = -c * Sf->value[e];
            for (int e2 = 0; e2 < ld; ++e2) {
                const int i = hymo_engine_g_unknown(sim, a, e2);
                if (gx[a * ld + e2] != 0.0 && i >= 0) accumulate(sim, list, &n, i, f * gx[a * ld + e2]);
            }
        }
        bad |= push_accumulated(sim, list, n, 1.0);
        for (int e = Sp->col_start[q]; e < Sp->col_start[q + 1]; ++e) { /* dt^2/4 (2/dt I - dpdot/dp) */
            double v = -c * Sp->value[e];
            if (Sp->row[e] == q) v += c * a1;
            bad |= hymo_sparse_push(&sim->jac.jh, p0 + Sp->row[e], v);
        }
        hymo_sparse_end_column(&sim->jac.jh);
    }
    double *w = sim->jac.tan_w; /* the spool rows' diagonal */
    for (int v = 0; v < model->n_valves; ++v) w[u0 + model->valves[v].state] = c * (a1 + 1.0 / model->valves[v].tau);
    for (int v = 0; v < nu; ++v) {
        for (int e = Su->col_start[v]; e < Su->col_start[v + 1]; ++e)
            bad |= hymo_sparse_push(&sim->jac.jh, p0 + Su->row[e], -c * Su->value[e]);
        bad |= hymo_sparse_push(&sim->jac.jh, u0 + v, w[u0 + v]);
        w[u0 + v] = 0.0;
        hymo_sparse_end_column(&sim->jac.jh);
    }
    return bad ? hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (Newton matrix)") : HYMO_OK;
}

static void mono_set_inputs(hymo_sim *sim, const double *inputs) { (void)sim, (void)inputs; }

/* the circuit's switching functions (end dampers, relief and check valves;
 * none without one) at the iterate (s, pn) */
static int mono_n_switches(const hymo_sim *sim) { return hymo_circuit_n_switches(sim->model); }
static void mono_switching(const hymo_sim *sim, double *g)
{
    hymo_circuit_switching(&sim->eval.circ, sim->model, sim->act.s, sim->eval.pn, sim->eval.un, g);
}

const hymo_force_source_ops hymo_forces_monolithic_ops = {
    .name = "monolithic",
    .n_unknowns = mono_n_unknowns,
    .predict = mono_predict,
    .unpack = mono_unpack,
    .forces = mono_forces,
    .refresh = from_pressures,
    .residual = mono_residual,
    .tangent = mono_tangent,
    .set_inputs = mono_set_inputs,
    .n_switches = mono_n_switches,
    .switching = mono_switching,
};

/* ---------------- split modes (no hydraulic unknowns) ---------------- */

static int split_n_unknowns(const hymo_sim *sim) { return (void)sim, 0; }
static void split_predict(hymo_sim *sim, double *xh, int extrapolate) { (void)sim, (void)xh, (void)extrapolate; }
static void split_unpack(hymo_sim *sim, const double *xh) { (void)sim, (void)xh; }
static void split_residual(const hymo_sim *sim, double *fh) { (void)sim, (void)fh; }
/* co-simulation subsystems do not locate events: branches by the geometry */
static int split_n_switches(const hymo_sim *sim) { return (void)sim, 0; }
static void split_switching(const hymo_sim *sim, double *g) { (void)sim, (void)g; }

/* the coupled actuators only (cylinders, motors): a driven joint's force is
 * its reaction, written by src/engine/driver.c */
static void from_input_force(hymo_sim *sim)
{
    memcpy(sim->eval.force, sim->inputs.ext_force, (size_t)hymo_coupled_actuators(sim->model) * sizeof(double));
}

static hymo_status sf_forces(hymo_sim *sim, double t, hymo_error *err)
{
    (void)t, (void)err;
    from_input_force(sim);
    return HYMO_OK;
}

static hymo_status sf_tangent(hymo_sim *sim, double t, hymo_error *err)
{
    (void)sim, (void)t, (void)err;
    return HYMO_OK;
}

static void sf_set_inputs(hymo_sim *sim, const double *F)
{
    memcpy(sim->inputs.ext_force, F, (size_t)hymo_coupled_actuators(sim->model) * sizeof(double));
}

const hymo_force_source_ops hymo_forces_split_force_ops = {
    .name = "split-force",
    .n_unknowns = split_n_unknowns,
    .predict = split_predict,
    .unpack = split_unpack,
    .forces = sf_forces,
    .refresh = from_input_force,
    .residual = split_residual,
    .tangent = sf_tangent,
    .set_inputs = sf_set_inputs,
    .n_switches = split_n_switches,
    .switching = split_switching,
};

static hymo_status sp_forces(hymo_sim *sim, double t, hymo_error *err)
{
    (void)t, (void)err;
    from_pressures(sim);
    return HYMO_OK;
}

/* actuator stiffness and damping through the cylinder force law */
static hymo_status sp_tangent(hymo_sim *sim, double t, hymo_error *err)
{
    if (sim->na == 0) return HYMO_OK;
    if (hymo_circuit_derivatives(&sim->eval.circ, sim->model, sim->act.s, sim->act.sd, sim->eval.pn, sim->eval.un, 0,
                                 &sim->jac.cderiv))
        return volume_error(sim, t, err);
    actuator_stiffness(sim);
    return HYMO_OK;
}

static void sp_set_inputs(hymo_sim *sim, const double *p)
{
    const hymo_model *model = sim->model;
    for (int a = 0; a < hymo_coupled_actuators(model); ++a) { /* a cylinder's chambers, a motor's ports */
        int node0, node1;
        double w0, w1;
        hymo_actuator_ports(model, a, &node0, &node1, &w0, &w1);
        if (model->nodes[node0].kind == HYMO_NODE_VOLUME) sim->eval.pn[model->nodes[node0].state] = p[2 * a];
        if (model->nodes[node1].kind == HYMO_NODE_VOLUME) sim->eval.pn[model->nodes[node1].state] = p[2 * a + 1];
    }
}

const hymo_force_source_ops hymo_forces_split_pressure_ops = {
    .name = "split-pressure",
    .n_unknowns = split_n_unknowns,
    .predict = split_predict,
    .unpack = split_unpack,
    .forces = sp_forces,
    .refresh = from_pressures,
    .residual = split_residual,
    .tangent = sp_tangent,
    .set_inputs = sp_set_inputs,
    .n_switches = split_n_switches,
    .switching = split_switching,
};
