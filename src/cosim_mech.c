/* Mechanical subsystem of split mode (SPEC §7): the hymo_sim engine with
 * the hydraulic states removed from its unknowns (trapezoidal double-step
 * or penalty), or the index-1 penalty formulation with semi-implicit Euler.
 *
 * Inputs per cylinder a: velocity-force F_a; velocity-pressure p_pist,a,
 * p_rod,a (inputs 2a, 2a+1).  Outputs: s (0..na-1), sd (na..), sdd (2na..),
 * and with the interface model G = A (I - P_c) M^-1 A^T (na x na, row-major)
 * and a0 = sdd at zero cylinder force (seed 000 Eqs. 12-15: M_eff = G^-1,
 * Q_eff = G^-1 a0), so that sdd = a0 + G F. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_split.h"
#include "hymo/linalg.h"
#include "engine.h"

typedef struct {
    hymo_sim *sim;
    int na, nz, m, interface_model;
    double t0;
    int n_inputs;
    double *coef; /* HYMO_POLY_TERMS * n_inputs */
    double *u;    /* n_inputs: input values at one time */
    double *sdd;  /* na */
    /* interface model workspace */
    double *kkt, *rhs, *jrow, *G, *a0;
    int *piv;
    hymo_var_table vars;
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
    const double tau = t - mi->t0;
    for (int i = 0; i < mi->n_inputs; ++i) mi->u[i] = hymo_poly_eval(&mi->coef[HYMO_POLY_TERMS * i], tau);
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
    hymo_kin_mass_and_forces(&mb->kin, model);
    if (m > 0) hymo_constraints_eval(mb->con, &mb->kin, mb->phi, mb->phi_z, mb->gamma);
    if (hymo_mb_kkt_factor(mb, mi->kkt, mi->piv))
        return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.6g s: singular mass/constraint matrix (interface model)",
                              sim->t);
    hymo_actuators_gradients(&sim->act, model, &mb->kin, mi->jrow); /* A: d sd_a / d zd_j = d s_a / d z_j */
    /* a0: constrained acceleration without cylinder forces */
    for (int i = 0; i < nz; ++i) mi->rhs[i] = mb->kin.Q[i];
    for (int r = 0; r < m; ++r) mi->rhs[nz + r] = -mb->gamma[r];
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

static hymo_status mech_do_step(hymo_subsystem *sub, double t, double H, hymo_error *err)
{
    mech_impl *mi = sub->impl;
    hymo_sim *sim = mi->sim;
    const long k = hymo_steps_per_communication(H, sim->opt.dt); /* checked by hymo_cosim_options_check */
    (void)t;
    /* the inputs jump at the communication point (a new polynomial) */
    apply_inputs(mi, sim->t);
    hymo_status st = sim->integrator->restart(sim, err);
    for (long j = 0; j < k && st == HYMO_OK; ++j) {
        apply_inputs(mi, sim->integrator->input_time(sim));
        st = hymo_sim_step(sim, err);
    }
    if (st != HYMO_OK) return st;
    /* outputs at the communication point */
    hymo_kin_positions(&sim->mb.kin, sim->model, sim->mb.z);
    hymo_kin_velocities(&sim->mb.kin, sim->model, sim->mb.zd);
    hymo_actuators_eval(&sim->act, sim->model, &sim->mb.kin);
    hymo_actuators_accel(&sim->act, sim->model, &sim->mb.kin, sim->mb.zdd, mi->sdd);
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
}

/* Snapshot: t, step, z, zd, zdd, lambda, work, power, chamber pressures. */
static int mech_state_size(const hymo_subsystem *sub)
{
    const mech_impl *mi = sub->impl;
    return 2 + 3 * mi->nz + mi->m + 2 * mi->na + mi->sim->np + mi->na;
}

static void mech_get_state(const hymo_subsystem *sub, double *buf)
{
    const mech_impl *mi = sub->impl;
    const hymo_sim *sim = mi->sim;
    int nz = mi->nz, na = mi->na;
    *buf++ = sim->t;
    *buf++ = (double)sim->step;
#define PUT(src, n) (memcpy(buf, (src), (size_t)(n) * sizeof(double)), buf += (n))
    PUT(sim->mb.z, nz), PUT(sim->mb.zd, nz), PUT(sim->mb.zdd, nz), PUT(sim->mb.lambda, mi->m);
    PUT(sim->work, na), PUT(sim->power, na), PUT(sim->p, sim->np), PUT(sim->ext_force, na);
#undef PUT
}

static void mech_set_state(hymo_subsystem *sub, const double *buf)
{
    mech_impl *mi = sub->impl;
    hymo_sim *sim = mi->sim;
    int nz = mi->nz, na = mi->na;
    sim->t = *buf++;
    sim->step = lround(*buf++);
#define GET(dst, n) (memcpy((dst), buf, (size_t)(n) * sizeof(double)), buf += (n))
    GET(sim->mb.z, nz), GET(sim->mb.zd, nz), GET(sim->mb.zdd, nz), GET(sim->mb.lambda, mi->m);
    GET(sim->work, na), GET(sim->power, na), GET(sim->p, sim->np), GET(sim->ext_force, na);
#undef GET
    memcpy(sim->mb.zn, sim->mb.z, (size_t)nz * sizeof(double));
    memcpy(sim->pn, sim->p, (size_t)sim->np * sizeof(double));
    sim->jac_valid = 0;
}

static void mech_destroy(hymo_subsystem *sub)
{
    if (!sub) return;
    mech_impl *mi = sub->impl;
    if (mi) {
        hymo_sim_free(mi->sim);
        double *arr[] = {mi->coef, mi->u, mi->sdd, mi->kkt, mi->rhs, mi->jrow, mi->G, mi->a0};
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
    MV_RESELECTIONS, MV_PEAK_DRIFT, MV_MAX_WORK, MV_MAX_CPOS, MV_MAX_CVEL, MV_MAX_CACC, MV_INDEPENDENT
};

static double mech_real(const hymo_sim *sim, int kind, int i)
{
    switch (kind) {
    case MV_TIME: return sim->t;
    case MV_Z: return sim->mb.z[i];
    case MV_ZD: return sim->mb.zd[i];
    case MV_ZDD: return sim->mb.zdd[i];
    case MV_S: return sim->act.s[i];
    case MV_SD: return sim->act.sd[i];
    case MV_FORCE: return sim->force[i];
    case MV_WORK: return sim->work[i];
    case MV_KINETIC: return sim->kinetic;
    case MV_POTENTIAL: return sim->potential;
    case MV_DRIFT: return sim->drift;
    case MV_CPOS: return sim->c_pos[i];
    case MV_CVEL: return sim->c_vel[i];
    case MV_CACC: return sim->c_acc[i];
    case MV_ITERATIONS: return (double)sim->last_iterations;
    case MV_RESIDUAL: return sim->residual_norm;
    case MV_STEPS: return (double)sim->step;
    case MV_ITER_TOTAL: return (double)sim->iterations_total;
    case MV_ITER_MAX: return (double)sim->iterations_max;
    case MV_JACOBIANS: return (double)sim->jacobian_evaluations;
    case MV_RESELECTIONS: return (double)sim->form.ops->reselections(&sim->form);
    case MV_PEAK_DRIFT: return sim->peak_drift;
    case MV_MAX_WORK: return sim->max_work;
    case MV_MAX_CPOS: return sim->max_cpos;
    case MV_MAX_CVEL: return sim->max_cvel;
    case MV_MAX_CACC: return sim->max_cacc;
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
        values[k] = vr[k] >= 0 && vr[k] < mi->vars.n ? mech_real(mi->sim, mi->vars.kind[vr[k]], mi->vars.index[vr[k]])
                                                     : NAN;
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
    static const char *const aq[4] = {"s", "sd", "force", "work"}, *const au[4] = {"m", "m/s", "N", "J"};
    for (int q = 0; q < 4; ++q)
        for (int a = 0; a < model->n_cylinders; ++a)
            bad |= hymo_var_table_add(t, MV_S + q, a, R, au[q], model->cylinders[a].name, "%s[%d]", aq[q], a);
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
    return bad;
}

static const hymo_subsystem_ops mech_ops = {
    "mechanical",   mech_set_inputs, mech_do_step,     mech_get_outputs, mech_state_size, mech_get_state,
    mech_set_state, mech_destroy,    mech_n_variables, mech_variable,    mech_get_real,   mech_get_string,
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
    mi->interface_model = opt->approx == HYMO_APPROX_INTERFACE_MODEL;
    /* the engine with the hydraulic states replaced by the coupling inputs */
    static const hymo_force_source_ops *const sources[] = {&hymo_forces_split_force_ops,
                                                           &hymo_forces_split_pressure_ops};
    static const hymo_sim_tables integrators[] = {{&hymo_trapezoidal_ops, NULL, NULL},
                                                  {&hymo_semi_implicit_euler_ops, &hymo_index1_ops, NULL}};
    hymo_sim_tables tables = integrators[opt->mech_integrator];
    tables.forces = sources[opt->coupling];
    hymo_status st = hymo_sim_create_with(model, &opt->mech, &tables, &mi->sim, err);
    if (st != HYMO_OK) {
        mech_destroy(sub);
        return st;
    }
    int na = mi->na = mi->sim->na, nz = mi->nz = mi->sim->nz, m = mi->m = mi->sim->m, n = nz + m;
    sub->n_inputs = opt->coupling == HYMO_COUPLING_VELOCITY_FORCE ? na : 2 * na;
    sub->n_outputs = 3 * na + (mi->interface_model ? na * na + na : 0);
    mi->n_inputs = sub->n_inputs;
    mi->coef = calloc((size_t)HYMO_POLY_TERMS * (size_t)(sub->n_inputs + 1), sizeof(double));
    mi->u = calloc((size_t)sub->n_inputs + 1, sizeof(double));
    mi->sdd = calloc((size_t)na + 1, sizeof(double));
    mi->kkt = calloc((size_t)n * n + 1, sizeof(double));
    mi->rhs = calloc((size_t)n + 1, sizeof(double));
    mi->jrow = calloc((size_t)na * nz + 1, sizeof(double));
    mi->G = calloc((size_t)na * na + 1, sizeof(double));
    mi->a0 = calloc((size_t)na + 1, sizeof(double));
    mi->piv = calloc((size_t)n + 1, sizeof(int));
    if (!mi->coef || !mi->u || !mi->sdd || !mi->kkt || !mi->rhs || !mi->jrow || !mi->G || !mi->a0 || !mi->piv) {
        mech_destroy(sub);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    /* outputs at t = 0 */
    hymo_sim *sim = mi->sim;
    hymo_kin_positions(&sim->mb.kin, model, sim->mb.z);
    hymo_kin_velocities(&sim->mb.kin, model, sim->mb.zd);
    hymo_actuators_eval(&sim->act, model, &sim->mb.kin);
    hymo_actuators_accel(&sim->act, model, &sim->mb.kin, sim->mb.zdd, mi->sdd);
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
