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

#include "cosim_internal.h"
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
        free(mi);
    }
    free(sub);
}

static const hymo_subsystem_ops mech_ops = {
    "mechanical", mech_set_inputs, mech_do_step, mech_get_outputs, mech_state_size, mech_get_state,
    mech_set_state, mech_destroy,
};

hymo_sim *hymo_cosim_mech_sim(hymo_subsystem *sub) { return ((mech_impl *)sub->impl)->sim; }

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
    *out = sub;
    return HYMO_OK;
}
