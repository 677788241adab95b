/* Mechanical subsystem of split mode (SPEC §7): the hymo_sim engine with
 * the hydraulic states removed from its unknowns (trapezoidal double-step
 * or penalty), or the index-1 penalty formulation with semi-implicit Euler.
 *
 * Inputs per cylinder a: velocity-force F_a; velocity-pressure p_pist,a,
 * p_rod,a (inputs 2a, 2a+1).  A hydraulic motor k is coupled as actuator
 * a = n_cylinders + k: s the joint coordinate, F the torque,
 * its ports a and b in place of the chambers.  Outputs: s (0..na-1), sd (na..), sdd (2na..),
 * and with the interface model G = A (I - P_c) M^-1 A^T (na x na, row-major)
 * and a0 = sdd at zero cylinder force (seed 000 Eqs. 12-15: M_eff = G^-1,
 * Q_eff = G^-1 a0), so that sdd = a0 + G F. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_split.h"
#include "cosim_tables.h"
#include "hymo/linalg.h"
#include "engine.h"
#include "hyd_subsystem.h" /* hymo_tlm_compliance */

/* ---------------------------------------------------------------- TLM
 * Force source of the TLM coupling (seed 003 §3.1 Eq. 1): the port
 * pressures the actuator feels are p = c + Z_c Q, with c the wave the
 * hydraulic end sent T earlier and Q = -w sd the flow the actuator pushes
 * into the line, w its port weight (hymo_actuator_ports: a cylinder's
 * piston chamber A_pist, rod chamber -A_rod; a motor's ports a, b D, -D,
 * sd its joint rate).  The algebraic loop (p depends on the iterate's sd)
 * is part of the mechanics' Newton: the fast Jacobian adds dF/dp dp/dsd,
 * the damping -Z_c (w_0^2 + w_1^2) of seed 003's Eq. 1.
 * Storage: the inputs in sim->inputs.tlm_in as set_inputs gets them, c_0,a
 * (2a), c_1,a (2a+1), then Z_c in the same layout (2na + 2a,
 * 2na + 2a + 1), na the coupled actuators; the pressure p in pn[k] of the
 * port's state k (so the committed p holds the applied pressures). */

/* Port r (0: piston chamber or motor port a, 1: rod chamber or port b) of
 * coupled actuator a: its volume node's state and its weight w (dF/dp). */
static int tlm_port(const hymo_model *model, int a, int r, double *w)
{
    int node0, node1;
    double w0, w1;
    hymo_actuator_ports(model, a, &node0, &node1, &w0, &w1);
    *w = r ? w1 : w0;
    return r ? node1 : node0;
}

static void tlm_pressures(hymo_sim *sim)
{
    const hymo_model *model = sim->model;
    const int na = hymo_coupled_actuators(model); /* cylinders, motors; not the driven joints */
    for (int a = 0; a < na; ++a) {
        const double sd = sim->act.sd[a], *c = sim->inputs.tlm_in + 2 * a, *zc = c + 2 * na;
        for (int r = 0; r < 2; ++r) {
            double w;
            const int k = model->nodes[tlm_port(model, a, r, &w)].state;
            sim->eval.pn[k] = c[r] + zc[r] * (-w * sd);
        }
    }
}

static void tlm_refresh(hymo_sim *sim)
{
    tlm_pressures(sim);
    hymo_circuit_eval(&sim->eval.circ, sim->model, sim->act.s, sim->act.sd, sim->eval.pn, sim->eval.un,
                      sim->inputs.uref_end, NULL, NULL, sim->eval.force);
}

static hymo_status tlm_forces(hymo_sim *sim, double t, hymo_error *err)
{
    (void)t, (void)err;
    tlm_refresh(sim);
    return HYMO_OK;
}

/* dt^2/4 (dF/ds + 2/dt dF/dsd) g g^T with dF/dsd including the line's
 * damping through p = c + Z_c Q(sd). */
static hymo_status tlm_tangent(hymo_sim *sim, double t, hymo_error *err)
{
    const hymo_model *model = sim->model;
    const int na = hymo_coupled_actuators(model); /* the cylinders and motors, not the driven joints */
    if (na == 0) return HYMO_OK;
    hymo_circuit_derivs *cd = &sim->jac.cderiv;
    if (hymo_circuit_derivatives(&sim->eval.circ, model, sim->act.s, sim->act.sd, sim->eval.pn, sim->eval.un, 0, cd))
        return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.6g s (step %ld): a hydraulic volume became non-positive",
                              t, sim->state.step + 1);
    const double dt = sim->solver.h, c = dt * dt / 4.0, a1 = 2.0 / dt;
    for (int a = 0; a < na; ++a) {
        const double *zc = sim->inputs.tlm_in + 2 * na + 2 * a;
        double dF_dsd = cd->dF_dsd[a];
        for (int r = 0; r < 2; ++r) {
            double w;
            const int k = model->nodes[tlm_port(model, a, r, &w)].state;
            dF_dsd += hymo_sparse_get(&cd->dF_dp, a, k) * zc[r] * (-w);
        }
        hymo_engine_actuator_stiffness(sim, a, c * (cd->dF_ds[a] + a1 * dF_dsd));
    }
    return HYMO_OK;
}

static void tlm_set_inputs(hymo_sim *sim, const double *in)
{
    memcpy(sim->inputs.tlm_in, in, (size_t)(4 * hymo_coupled_actuators(sim->model)) * sizeof(double));
}

static int tlm_zero(const hymo_sim *sim) { return (void)sim, 0; }
static void tlm_predict(hymo_sim *sim, double *xh, int extrapolate) { (void)sim, (void)xh, (void)extrapolate; }
static void tlm_unpack(hymo_sim *sim, const double *xh) { (void)sim, (void)xh; }
static void tlm_residual(const hymo_sim *sim, double *fh) { (void)sim, (void)fh; }
static void tlm_switching(const hymo_sim *sim, double *g) { (void)sim, (void)g; }

const hymo_force_source_ops hymo_forces_split_tlm_ops = {
    .name = "split-tlm",
    .n_unknowns = tlm_zero,
    .predict = tlm_predict,
    .unpack = tlm_unpack,
    .forces = tlm_forces,
    .refresh = tlm_refresh,
    .residual = tlm_residual,
    .tangent = tlm_tangent,
    .set_inputs = tlm_set_inputs,
    .n_switches = tlm_zero,
    .switching = tlm_switching,
};

typedef struct {
    hymo_sim *sim;
    int na, nz, m, interface_model; /* na: coupled actuators (cylinders, motors); sim->na also counts driven joints */
    double t0;
    int n_inputs;
    double *coef; /* HYMO_POLY_TERMS * n_inputs */
    double *u;    /* n_inputs: input values at one time */
    double *sdd;  /* na */
    /* interface model workspace */
    double *kkt, *rhs, *jrow, *G, *a0;
    int *piv;
    hymo_var_table vars;
    /* TLM: T (= H), per chamber j = 2a, 2a + 1: Z_c of the step, the
     * mechanical end's wave at the current time */
    int tlm;
    double tlm_T;
    double *zc, *wave;
    double *wave_prev, *cin_prev; /* TLM: this end's wave and the received one, one communication point earlier */
} mech_impl;

static void mech_set_inputs(hymo_subsystem *sub, double t0, const double *coef)
{
    mech_impl *mi = sub->impl;
    mi->t0 = t0;
    memcpy(mi->coef, coef, (size_t)HYMO_POLY_TERMS * (size_t)sub->n_inputs * sizeof(double));
}

/* The coupling inputs (cylinder forces, or chamber pressures) at time t,
 * handed to the engine's force source. */
static void apply_inputs(mech_impl *mi, double t)
{
    hymo_sim *sim = mi->sim;
    const double tau = t - mi->t0 - mi->tlm_T; /* TLM: the waves left T earlier */
    for (int i = 0; i < mi->n_inputs; ++i) mi->u[i] = hymo_poly_eval(&mi->coef[HYMO_POLY_TERMS * i], tau);
    if (mi->tlm) memcpy(mi->u + mi->n_inputs, mi->zc, (size_t)mi->n_inputs * sizeof(double));
    sim->forces->set_inputs(sim, mi->u);
}

/* G and a0 at the committed state (kinematics and actuators evaluated). */
static hymo_status interface_model(mech_impl *mi, hymo_error *err)
{
    hymo_sim *sim = mi->sim;
    hymo_mb *mb = &sim->mb;
    const hymo_model *model = sim->model;
    const int nz = mi->nz, m = mi->m, na = mi->na, n = nz + m;
    hymo_kin_forces_begin(&mb->kin, model); /* gravity and velocity terms, no cylinder force */
    hymo_status st = hymo_fe_apply(&sim->fe, model, &mb->kin, sim->state.t, sim->opt.dt, err); /* force elements */
    if (st != HYMO_OK) return st;
    hymo_kin_mass_and_forces(&mb->kin, model);
    if (m > 0) hymo_constraints_eval(mb->con, &mb->kin, mb->phi, mb->phi_zv, mb->gamma);
    if (hymo_mb_kkt_factor(mb, mi->kkt, mi->piv))
        return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.6g s: singular mass/constraint matrix (interface model)",
                              sim->state.t);
    hymo_actuators_gradients(&sim->act, model, &mb->kin, mi->jrow); /* A: d sd_a / d zd_j = d s_a / d z_j */
    /* a0: constrained acceleration without cylinder forces */
    for (int i = 0; i < nz; ++i) mi->rhs[i] = mb->kin.Q[i];
    for (int r = 0; r < m; ++r) mi->rhs[nz + r] = mb->con->redundant[r] ? 0.0 : -mb->gamma[r]; /* redundant: mu_r = 0 */
    hymo_lu_solve(n, mi->kkt, mi->piv, mi->rhs);
    hymo_actuators_accel(&sim->act, model, &mb->kin, mi->rhs, mi->a0);
    /* G columns: response of sdd to a unit force of cylinder b */
    for (int b = 0; b < na; ++b) {
        for (int i = 0; i < nz; ++i) mi->rhs[i] = mi->jrow[b * nz + i];
        for (int r = 0; r < m; ++r) mi->rhs[nz + r] = 0.0;
        hymo_lu_solve(n, mi->kkt, mi->piv, mi->rhs);
        for (int a = 0; a < na; ++a) {
            double g = 0.0;
            for (int j = 0; j < nz; ++j) g += mi->jrow[a * nz + j] * mi->rhs[j];
            mi->G[a * na + b] = g;
        }
    }
    return HYMO_OK;
}

/* Z_c = T / C(p) of every chamber at the actuator lengths of the step
 * start and the line pressure p there (hymo_tlm_line_pressure: the mean of
 * the two port pressures, from this end's last output and the value at t
 * of the received polynomial, and both of one step earlier), T = H: the
 * hydraulics computes the same from the same s and waves. */
static void tlm_impedances(mech_impl *mi, double H)
{
    hymo_sim *sim = mi->sim;
    const hymo_model *model = sim->model;
    hymo_kin_positions(&sim->mb.kin, model, sim->mb.z);
    hymo_kin_velocities(&sim->mb.kin, model, sim->mb.zd);
    hymo_actuators_eval(&sim->act, model, &sim->mb.kin);
    mi->tlm_T = H;
    for (int a = 0; a < mi->na; ++a) {
        for (int r = 0; r < 2; ++r) {
            const int j = 2 * a + r;
            double w;
            const double cin = mi->coef[HYMO_POLY_TERMS * j];
            const double p = hymo_tlm_line_pressure(mi->wave[j], cin, mi->wave_prev[j], mi->cin_prev[j]);
            mi->zc[j] = hymo_tlm_impedance(&sim->eval.circ, model, tlm_port(model, a, r, &w), sim->act.s, p, H);
            mi->cin_prev[j] = cin;
        }
    }
}

/* The mechanical ends' waves at the current time (actuators evaluated):
 * c = p + Z_c Q = c_hyd + 2 Z_c Q, the wave received at the end of the step
 * being the polynomial at tau - T = 0. */
static void tlm_waves(mech_impl *mi)
{
    const hymo_model *model = mi->sim->model;
    memcpy(mi->wave_prev, mi->wave, (size_t)(2 * mi->na) * sizeof(double));
    for (int a = 0; a < mi->na; ++a)
        for (int r = 0; r < 2; ++r) {
            double w;
            tlm_port(model, a, r, &w);
            const double Q = -w * mi->sim->act.sd[a]; /* the flow the actuator pushes into the line */
            mi->wave[2 * a + r] = mi->coef[HYMO_POLY_TERMS * (2 * a + r)] + 2.0 * mi->zc[2 * a + r] * Q;
        }
}

/* A communication step H from t.  On the h_m grid (t = step h_m) with H a
 * whole multiple of h_m: H/h_m steps of h_m (hymo's master checks that in
 * hymo_cosim_options_check).  Otherwise (an FMU's variable communication
 * step) n = ceil(H/h_m) equal steps of h = H/n <= h_m: with t on the grid
 * of h, the steps of a master with h_m = h (the step size and the step
 * counter are those of that grid during the step; then h_m again, the
 * counter advanced by the steps taken);
 * elsewhere each step lands on its end t + j h through the engine's
 * shortened-step rule (the end time is set to the step's end and
 * restored after it).  The inputs are evaluated at the integrator's input
 * time of each step. */
static hymo_status mech_do_step(hymo_subsystem *sub, double t, double H, hymo_error *err)
{
    mech_impl *mi = sub->impl;
    hymo_sim *sim = mi->sim;
    const double dt = sim->opt.dt, t_end = sim->opt.t_end;
    const long step = sim->state.step;
    long k = hymo_steps_per_communication(H, dt), n = 0, step0 = -1;
    if (k == 0 || fabs(sim->state.t - (double)step * dt) > 1e-9 * dt) {
        const double ratio = H / dt, nr = ceil(ratio - 1e-9 * ratio);
        if (!(H > 0.0) || !(nr <= 1e9))
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "t = %.9g s: communication step %g s is not in (0, %g] s",
                                  t, H, 1e9 * dt);
        k = nr < 1.0 ? 1 : (long)nr;
        const double h = H / (double)k, m = floor(sim->state.t / h + 0.5);
        if (fabs(sim->state.t - m * h) <= 1e-9 * h) {
            sim->opt.dt = h;
            sim->state.step = step0 = (long)m;
        } else {
            n = k;
        }
    }
    if (mi->tlm) tlm_impedances(mi, H);
    /* the inputs jump at the communication point (a new polynomial) */
    apply_inputs(mi, sim->state.t);
    hymo_status st = sim->integrator->restart(sim, err);
    for (long j = 0; j < k && st == HYMO_OK; ++j) {
        if (n) sim->opt.t_end = j + 1 == n ? t + H : t + (double)(j + 1) * (H / (double)n);
        apply_inputs(mi, sim->integrator->input_time(sim));
        st = hymo_sim_step(sim, err);
    }
    sim->opt.t_end = t_end;
    if (step0 >= 0) sim->opt.dt = dt, sim->state.step = step + (sim->state.step - step0);
    if (st != HYMO_OK) return st;
    /* outputs at the communication point */
    hymo_kin_positions(&sim->mb.kin, sim->model, sim->mb.z);
    hymo_kin_velocities(&sim->mb.kin, sim->model, sim->mb.zd);
    hymo_actuators_eval(&sim->act, sim->model, &sim->mb.kin);
    hymo_actuators_accel(&sim->act, sim->model, &sim->mb.kin, sim->mb.zdd, mi->sdd);
    if (mi->tlm) tlm_waves(mi);
    return mi->interface_model ? interface_model(mi, err) : HYMO_OK;
}

static void mech_get_outputs(const hymo_subsystem *sub, double *y)
{
    const mech_impl *mi = sub->impl;
    int na = mi->na;
    memcpy(y, mi->sim->act.s, (size_t)na * sizeof(double));
    memcpy(y + na, mi->sim->act.sd, (size_t)na * sizeof(double));
    memcpy(y + 2 * na, mi->sdd, (size_t)na * sizeof(double));
    if (mi->interface_model) {
        memcpy(y + 3 * na, mi->G, (size_t)na * na * sizeof(double));
        memcpy(y + 3 * na + na * na, mi->a0, (size_t)na * sizeof(double));
    }
    if (mi->tlm) memcpy(y + 3 * na, mi->wave, (size_t)(2 * na) * sizeof(double));
}

/* Snapshot: t, step, z, zd, zdd, lambda, work, power, chamber pressures,
 * the velocity-force input; the predictor's history (zdd, lambda at the
 * two steps before) and the Newton test's memory (contraction rate and
 * its age, the last step's truncation error that sets the target), so
 * that a retried step repeats the same iterations. */
static int mech_state_size(const hymo_subsystem *sub)
{
    const mech_impl *mi = sub->impl;
    return 2 + 3 * mi->nz + mi->m + 2 * mi->sim->na + mi->sim->np + mi->sim->na + mi->nz + 2 * mi->m + 3 +
           mi->sim->nsw + (mi->sim->fe.n > 0 ? 3 : 0) /* force elements: switching states and work */ +
           (mi->tlm ? 6 * mi->na : 0); /* TLM: the waves the next step's Z_c reads */
}

static void mech_get_state(const hymo_subsystem *sub, double *buf)
{
    const mech_impl *mi = sub->impl;
    const hymo_sim *sim = mi->sim;
    int nz = mi->nz, na = sim->na; /* work, power, ext_force of every actuator (driven joints too) */
    *buf++ = sim->state.t;
    *buf++ = (double)sim->state.step;
#define PUT(src, n) (memcpy(buf, (src), (size_t)(n) * sizeof(double)), buf += (n))
    PUT(sim->mb.z, nz), PUT(sim->mb.zd, nz), PUT(sim->mb.zdd, nz), PUT(sim->mb.lambda, mi->m);
    PUT(sim->record.work, na), PUT(sim->record.power, na), PUT(sim->state.p, sim->np), PUT(sim->inputs.ext_force, na);
    PUT(sim->state.zdd_prev, nz), PUT(sim->state.lambda_prev, mi->m), PUT(sim->state.lambda_prev2, mi->m);
    PUT(&sim->solver.newton_theta, 1), PUT(&sim->solver.newton_lte, 1);
    *buf++ = sim->solver.newton_theta_age;
    for (int i = 0; i < sim->nsw; ++i) *buf++ = sim->switching.sw[i];
    if (sim->fe.n > 0) PUT(&sim->record.fe_work, 1), PUT(&sim->record.fe_power, 1), PUT(&sim->record.fe_t, 1);
    if (mi->tlm) PUT(mi->wave, 2 * mi->na), PUT(mi->wave_prev, 2 * mi->na), PUT(mi->cin_prev, 2 * mi->na);
#undef PUT
    /* The Newton matrix is not part of the snapshot: the next step builds
     * a fresh one, as a retried step from this snapshot does, so both
     * repeat the same iterations (fast mode reuses the matrix after a
     * one-iteration step).  Taking a snapshot may so change the following
     * step at round-off level. */
    mi->sim->jac.jac_valid = 0;
}

static void mech_set_state(hymo_subsystem *sub, const double *buf)
{
    mech_impl *mi = sub->impl;
    hymo_sim *sim = mi->sim;
    int nz = mi->nz, na = sim->na;
    sim->state.t = *buf++;
    sim->state.step = lround(*buf++);
#define GET(dst, n) (memcpy((dst), buf, (size_t)(n) * sizeof(double)), buf += (n))
    GET(sim->mb.z, nz), GET(sim->mb.zd, nz), GET(sim->mb.zdd, nz), GET(sim->mb.lambda, mi->m);
    GET(sim->record.work, na), GET(sim->record.power, na), GET(sim->state.p, sim->np), GET(sim->inputs.ext_force, na);
    GET(sim->state.zdd_prev, nz), GET(sim->state.lambda_prev, mi->m), GET(sim->state.lambda_prev2, mi->m);
    GET(&sim->solver.newton_theta, 1), GET(&sim->solver.newton_lte, 1);
    sim->solver.newton_theta_age = (int)lround(*buf++);
    for (int i = 0; i < sim->nsw; ++i) sim->switching.sw[i] = *buf++ != 0.0;
    if (sim->fe.n > 0) GET(&sim->record.fe_work, 1), GET(&sim->record.fe_power, 1), GET(&sim->record.fe_t, 1);
    if (mi->tlm) GET(mi->wave, 2 * mi->na), GET(mi->wave_prev, 2 * mi->na), GET(mi->cin_prev, 2 * mi->na);
#undef GET
    memcpy(sim->mb.zn, sim->mb.z, (size_t)nz * sizeof(double));
    memcpy(sim->eval.pn, sim->state.p, (size_t)sim->np * sizeof(double));
    sim->jac.jac_valid = 0;
}

/* The point of a communication step's map (hymo_split_point_*): z, zd.
 * The accelerations are not part of it: every step starts by solving for
 * consistent ones (the integrator's restart). */
int hymo_cosim_mech_point_size(const hymo_subsystem *sub) { return 2 * ((const mech_impl *)sub->impl)->nz; }

void hymo_cosim_mech_point_get(const hymo_subsystem *sub, double *x)
{
    const mech_impl *mi = sub->impl;
    const int nz = mi->nz;
    memcpy(x, mi->sim->mb.z, (size_t)nz * sizeof(double));
    memcpy(x + nz, mi->sim->mb.zd, (size_t)nz * sizeof(double));
}

void hymo_cosim_mech_point_set(hymo_subsystem *sub, double t, const double *x, const double *zdd)
{
    mech_impl *mi = sub->impl;
    hymo_sim *sim = mi->sim;
    const int nz = mi->nz;
    sim->state.t = t;
    sim->state.step = lround(t / sim->opt.dt); /* the step ends on the dt grid: t should be on it */
    memcpy(sim->mb.z, x, (size_t)nz * sizeof(double));
    memcpy(sim->mb.zd, x + nz, (size_t)nz * sizeof(double));
    if (zdd) memcpy(sim->mb.zdd, zdd, (size_t)nz * sizeof(double));
    memcpy(sim->mb.zn, sim->mb.z, (size_t)nz * sizeof(double));
    sim->jac.jac_valid = 0;
}

hymo_status hymo_cosim_mech_point_outputs(hymo_subsystem *sub, hymo_error *err)
{
    mech_impl *mi = sub->impl;
    hymo_sim *sim = mi->sim;
    hymo_kin_positions(&sim->mb.kin, sim->model, sim->mb.z);
    hymo_kin_velocities(&sim->mb.kin, sim->model, sim->mb.zd);
    hymo_actuators_eval(&sim->act, sim->model, &sim->mb.kin);
    hymo_actuators_accel(&sim->act, sim->model, &sim->mb.kin, sim->mb.zdd, mi->sdd);
    return mi->interface_model ? interface_model(mi, err) : HYMO_OK;
}

static void mech_destroy(hymo_subsystem *sub)
{
    if (!sub) return;
    mech_impl *mi = sub->impl;
    if (mi) {
        hymo_sim_free(mi->sim);
        double *arr[] = {mi->coef, mi->u, mi->sdd, mi->kkt, mi->rhs, mi->jrow, mi->G, mi->a0, mi->zc, mi->wave, mi->wave_prev, mi->cin_prev};
        for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
        free(mi->piv);
        hymo_var_table_free(&mi->vars);
        free(mi);
    }
    free(sub);
}

/* ---------------------------------------------------------------- variables
 * Per-step quantities of SPEC §8 and the statistics of the run summary. */
enum {
    MV_TIME, MV_Z, MV_ZD, MV_ZDD, MV_S, MV_SD, MV_FORCE, MV_WORK, MV_KINETIC, MV_POTENTIAL, MV_DRIFT, MV_CPOS,
    MV_CVEL, MV_CACC, MV_ITERATIONS, MV_RESIDUAL, MV_STEPS, MV_ITER_TOTAL, MV_ITER_MAX, MV_JACOBIANS,
    MV_RESELECTIONS, MV_PEAK_DRIFT, MV_MAX_WORK, MV_MAX_CPOS, MV_MAX_CVEL, MV_MAX_CACC, MV_INDEPENDENT,
    MV_LINE_POWER, MV_TLM_ZC, MV_TLM_L, MV_TLM_MASS
};

/* TLM: the weight w of line j = 2a + r (A_pist, -A_rod; D, -D). */
static double tlm_weight(const hymo_model *model, int j)
{
    double w;
    tlm_port(model, j / 2, j % 2, &w);
    return w;
}

static double tlm_real(const mech_impl *mi, int kind, int i)
{
    const hymo_sim *sim = mi->sim;
    const double T = mi->tlm_T;
    switch (kind) {
    case MV_LINE_POWER: { /* (p_0 w_0 + p_1 w_1) sd, p = (c_mech + c_hyd) / 2 at the current time */
        double P = 0.0;
        for (int r = 0; r < 2; ++r) {
            const int j = 2 * i + r;
            const double p = 0.5 * (mi->wave[j] + mi->coef[HYMO_POLY_TERMS * j]);
            P += p * tlm_weight(sim->model, j) * sim->act.sd[i];
        }
        return P;
    }
    case MV_TLM_ZC: return mi->zc[i];
    case MV_TLM_L: return T * mi->zc[i];
    case MV_TLM_MASS: return T * mi->zc[i] * tlm_weight(sim->model, i) * tlm_weight(sim->model, i); /* motor: kg m^2 */
    default: return NAN;
    }
}

static double mech_real(const hymo_sim *sim, int kind, int i)
{
    switch (kind) {
    case MV_TIME: return sim->state.t;
    case MV_Z: return sim->mb.z[i];
    case MV_ZD: return sim->mb.zd[i];
    case MV_ZDD: return sim->mb.zdd[i];
    case MV_S: return sim->act.s[i];
    case MV_SD: return sim->act.sd[i];
    case MV_FORCE: return sim->eval.force[i];
    case MV_WORK: return sim->record.work[i];
    case MV_KINETIC: return sim->record.kinetic;
    case MV_POTENTIAL: return sim->record.potential;
    case MV_DRIFT: return sim->record.drift;
    case MV_CPOS: return sim->record.c_pos[i];
    case MV_CVEL: return sim->record.c_vel[i];
    case MV_CACC: return sim->record.c_acc[i];
    case MV_ITERATIONS: return (double)sim->stats.last_iterations;
    case MV_RESIDUAL: return sim->stats.residual_norm;
    case MV_STEPS: return (double)sim->state.step;
    case MV_ITER_TOTAL: return (double)sim->stats.iterations_total;
    case MV_ITER_MAX: return (double)sim->stats.iterations_max;
    case MV_JACOBIANS: return (double)sim->stats.jacobian_evaluations;
    case MV_RESELECTIONS: return (double)sim->form.ops->reselections(&sim->form);
    case MV_PEAK_DRIFT: return sim->extremes.peak_drift;
    case MV_MAX_WORK: return sim->extremes.max_work;
    case MV_MAX_CPOS: return sim->extremes.max_cpos;
    case MV_MAX_CVEL: return sim->extremes.max_cvel;
    case MV_MAX_CACC: return sim->extremes.max_cacc;
    default: return NAN;
    }
}

static int mech_n_variables(const hymo_subsystem *sub) { return ((const mech_impl *)sub->impl)->vars.n; }

static const hymo_variable *mech_variable(const hymo_subsystem *sub, int vr)
{
    return hymo_var_table_get(&((const mech_impl *)sub->impl)->vars, vr);
}

static void mech_get_real(const hymo_subsystem *sub, const int *vr, int n, double *values)
{
    const mech_impl *mi = sub->impl;
    for (int k = 0; k < n; ++k)
        values[k] = !(vr[k] >= 0 && vr[k] < mi->vars.n) ? NAN
                    : mi->vars.kind[vr[k]] >= MV_LINE_POWER ? tlm_real(mi, mi->vars.kind[vr[k]], mi->vars.index[vr[k]])
                                                            : mech_real(mi->sim, mi->vars.kind[vr[k]],
                                                                        mi->vars.index[vr[k]]);
}

static const char *mech_get_string(const hymo_subsystem *sub, int vr)
{
    const mech_impl *mi = sub->impl;
    return vr >= 0 && vr < mi->vars.n && mi->vars.kind[vr] == MV_INDEPENDENT ? mi->sim->form.ops->log(&mi->sim->form) : NULL;
}

static int mech_add_variables(mech_impl *mi, const hymo_model *model)
{
    hymo_var_table *t = &mi->vars;
    const hymo_var_type R = HYMO_VAR_REAL;
    int bad = hymo_var_table_add(t, MV_TIME, 0, R, "s", "time", "time");
    static const char *const zq[3] = {"z", "zd", "zdd"}, *const zu[2][3] = {{"m", "m/s", "m/s^2"},
                                                                         {"rad", "rad/s", "rad/s^2"}};
    for (int q = 0; q < 3; ++q)
        for (int j = 0; j < model->n_bodies; ++j)
            bad |= hymo_var_table_add(t, MV_Z + q, j, R, zu[model->bodies[j].joint_type == HYMO_JOINT_REVOLUTE][q],
                                      model->bodies[j].joint_name, "%s[%d]", zq[q], j);
    static const char *const aq[4] = {"s", "sd", "force", "work"}, *const au[2][4] = {{"m", "m/s", "N", "J"},
                                                                                     {"rad", "rad/s", "N m", "J"}};
    /* the cylinders, then the motors and the driven joints (a joint's coordinate, rate, torque or
     * the reaction that imposes the motion) */
    const int nc = model->n_cylinders, nm = model->n_motors;
    for (int q = 0; q < 4; ++q)
        for (int a = 0; a < mi->sim->na; ++a) {
            const int joint = a < nc ? -1 : a < nc + nm ? model->motors[a - nc].joint : model->drivers[a - nc - nm].joint;
            const int rot = joint >= 0 && model->bodies[joint].joint_type == HYMO_JOINT_REVOLUTE;
            bad |= hymo_var_table_add(t, MV_S + q, a, R, au[rot][q],
                                      a < nc + nm ? hymo_actuator_name(model, a) : model->drivers[a - nc - nm].name,
                                      "%s[%d]", aq[q], a);
        }
    bad |= hymo_var_table_add(t, MV_KINETIC, 0, R, "J", "kinetic energy", "kinetic_energy");
    bad |= hymo_var_table_add(t, MV_POTENTIAL, 0, R, "J", "potential energy", "potential_energy");
    bad |= hymo_var_table_add(t, MV_DRIFT, 0, R, "J", "energy balance E - E0 - W_act (SPEC 4)", "energy_drift");
    static const char *const cq[3] = {"constraint_position", "constraint_velocity", "constraint_acceleration"},
                             *const cu[3] = {"m or rad", "m/s", "m/s^2"};
    for (int q = 0; q < 3; ++q)
        for (int c = 0; c < model->n_cuts; ++c)
            bad |= hymo_var_table_add(t, MV_CPOS + q, c, R, cu[q], model->cuts[c].name, "%s[%d]", cq[q], c);
    bad |= hymo_var_table_add(t, MV_ITERATIONS, 0, R, "1", "Newton iterations of the last step", "newton_iterations");
    bad |= hymo_var_table_add(t, MV_RESIDUAL, 0, R, "1", "final scaled residual norm of the last step",
                              "residual_norm");
    bad |= hymo_var_table_add(t, MV_STEPS, 0, R, "1", "steps done", "steps");
    bad |= hymo_var_table_add(t, MV_ITER_TOTAL, 0, R, "1", "Newton iterations, all steps", "newton_iterations_total");
    bad |= hymo_var_table_add(t, MV_ITER_MAX, 0, R, "1", "Newton iterations, most in a step", "newton_iterations_max");
    bad |= hymo_var_table_add(t, MV_JACOBIANS, 0, R, "1", "Jacobian evaluations", "jacobian_evaluations");
    bad |= hymo_var_table_add(t, MV_RESELECTIONS, 0, R, "1", "re-selections of the independent coordinates",
                              "reselections");
    bad |= hymo_var_table_add(t, MV_PEAK_DRIFT, 0, R, "J", "max |energy_drift|", "peak_drift");
    bad |= hymo_var_table_add(t, MV_MAX_WORK, 0, R, "J", "max |actuator work|", "max_work");
    bad |= hymo_var_table_add(t, MV_MAX_CPOS, 0, R, "m or rad", "max constraint_position", "max_constraint_position");
    bad |= hymo_var_table_add(t, MV_MAX_CVEL, 0, R, "m/s", "max constraint_velocity", "max_constraint_velocity");
    bad |= hymo_var_table_add(t, MV_MAX_CACC, 0, R, "m/s^2", "max constraint_acceleration",
                              "max_constraint_acceleration");
    bad |= hymo_var_table_add(t, MV_INDEPENDENT, 0, HYMO_VAR_STRING, "", "independent coordinates used",
                              "independent");
    for (int a = 0; mi->tlm && a < mi->na; ++a)
        bad |= hymo_var_table_add(t, MV_LINE_POWER, a, R, "W", hymo_actuator_name(model, a), "line_power[%d]", a);
    static const char *const tq[3] = {"tlm_impedance", "tlm_inductance", "tlm_mass"},
                             *const tu[2][3] = {{"Pa s/m^3", "Pa s^2/m^3", "kg"}, {"Pa s/m^3", "Pa s^2/m^3", "kg m^2"}},
                             *const tn[2][2] = {{"piston chamber", "rod chamber"}, {"motor port a", "motor port b"}};
    for (int q = 0; mi->tlm && q < 3; ++q)
        for (int j = 0; j < 2 * mi->na; ++j) {
            const int motor = j / 2 >= model->n_cylinders;
            bad |= hymo_var_table_add(t, MV_TLM_ZC + q, j, R, tu[motor][q], tn[motor][j % 2], "%s[%d]", tq[q], j);
        }
    return bad;
}

static const hymo_subsystem_ops mech_ops = {
    .kind = "mechanical",
    .set_inputs = mech_set_inputs,
    .do_step = mech_do_step,
    .get_outputs = mech_get_outputs,
    .state_size = mech_state_size,
    .get_state = mech_get_state,
    .set_state = mech_set_state,
    .destroy = mech_destroy,
    .n_variables = mech_n_variables,
    .variable = mech_variable,
    .get_real = mech_get_real,
    .get_string = mech_get_string,
};


hymo_status hymo_cosim_mech_create(const hymo_model *model, const hymo_cosim_options *opt, hymo_subsystem **out,
                                   hymo_error *err)
{
    *out = NULL;
    hymo_subsystem *sub = calloc(1, sizeof *sub);
    mech_impl *mi = calloc(1, sizeof *mi);
    if (!sub || !mi) {
        free(sub);
        free(mi);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    sub->ops = &mech_ops;
    sub->impl = mi;
    snprintf(sub->name, sizeof sub->name, "mechanics(%s)", hymo_mech_integrator_name(opt->mech_integrator));
    const hymo_cosim_tables tb = hymo_cosim_tables_of(opt);
    mi->interface_model = tb.approx->interface_model;
    /* the engine with the hydraulic states replaced by the coupling inputs */
    hymo_sim_tables tables = *tb.mech->engine;
    tables.forces = tb.coupling->mech_forces;
    hymo_status st = hymo_sim_create_with(model, &opt->mech, &tables, &mi->sim, err);
    if (st != HYMO_OK) {
        mech_destroy(sub);
        return st;
    }
    int na = mi->na = hymo_coupled_actuators(model), nz = mi->nz = mi->sim->nz, m = mi->m = mi->sim->m, n = nz + m;
    sub->n_inputs = tb.coupling->per_actuator * na;
    mi->tlm = tb.coupling->tlm;
    sub->n_outputs = 3 * na + (mi->interface_model ? na * na + na : 0) + (mi->tlm ? 2 * na : 0);
    mi->n_inputs = sub->n_inputs;
    mi->coef = calloc((size_t)HYMO_POLY_TERMS * (size_t)(sub->n_inputs + 1), sizeof(double));
    mi->u = calloc(2 * (size_t)sub->n_inputs + 1, sizeof(double)); /* TLM: then Z_c */
    mi->zc = calloc(2 * (size_t)na + 1, sizeof(double));
    mi->wave = calloc(2 * (size_t)na + 1, sizeof(double));
    mi->wave_prev = calloc(2 * (size_t)na + 1, sizeof(double));
    mi->cin_prev = calloc(2 * (size_t)na + 1, sizeof(double));
    mi->sdd = calloc((size_t)mi->sim->na + 1, sizeof(double)); /* hymo_actuators_accel: every actuator */
    mi->kkt = calloc((size_t)n * n + 1, sizeof(double));
    mi->rhs = calloc((size_t)n + 1, sizeof(double));
    mi->jrow = calloc((size_t)mi->sim->na * nz + 1, sizeof(double)); /* every actuator's row */
    mi->G = calloc((size_t)na * na + 1, sizeof(double));
    mi->a0 = calloc((size_t)mi->sim->na + 1, sizeof(double));
    mi->piv = calloc((size_t)n + 1, sizeof(int));
    if (!mi->coef || !mi->u || !mi->sdd || !mi->kkt || !mi->rhs || !mi->jrow || !mi->G || !mi->a0 || !mi->piv ||
        !mi->zc || !mi->wave || !mi->wave_prev || !mi->cin_prev) {
        mech_destroy(sub);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    /* outputs at t = 0 */
    hymo_sim *sim = mi->sim;
    hymo_kin_positions(&sim->mb.kin, model, sim->mb.z);
    hymo_kin_velocities(&sim->mb.kin, model, sim->mb.zd);
    hymo_actuators_eval(&sim->act, model, &sim->mb.kin);
    hymo_actuators_accel(&sim->act, model, &sim->mb.kin, sim->mb.zdd, mi->sdd);
    if (mi->tlm) { /* at rest: the waves are the initial pressures */
        for (int a = 0; a < na; ++a)
            for (int r = 0; r < 2; ++r) {
                const int j = 2 * a + r;
                double w;
                mi->coef[HYMO_POLY_TERMS * j] = mi->wave[j] = mi->wave_prev[j] = mi->cin_prev[j] =
                    sim->state.p[model->nodes[tlm_port(model, a, r, &w)].state];
            }
        tlm_impedances(mi, opt->H);
        tlm_waves(mi);
    }
    if (mi->interface_model && (st = interface_model(mi, err)) != HYMO_OK) {
        mech_destroy(sub);
        return st;
    }
    if (mech_add_variables(mi, model)) {
        mech_destroy(sub);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    *out = sub;
    return HYMO_OK;
}
