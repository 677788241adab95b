/* Simulation creation and the static-equilibrium start (SPEC §3). */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense.h"
#include "engine.h"

#define ALLOC(ptr, count)                                                                          \
    do {                                                                                           \
        (ptr) = calloc((size_t)((count) > 0 ? (count) : 1), sizeof *(ptr));                        \
        if (!(ptr)) goto nomem;                                                                    \
    } while (0)

static const char *src_name(const hymo_model *model)
{
    return model->source_path ? model->source_path : model->name;
}

/* Positions: Newton on Phi = 0 holding the hinted joints (SPEC §3). */
static hymo_status assemble(hymo_sim *sim, hymo_error *err)
{
    const hymo_model *model = sim->model;
    int m = sim->m, nz = sim->nz;
    hymo_kin_positions(&sim->kin, model, sim->z);
    hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, sim->phi_z, NULL);
    if (m == 0) return HYMO_OK;
    if (m >= nz)
        return hymo_error_set(err, HYMO_ERR_MODEL,
                              "%s: cut_joints: %d constraint equations for %d joint coordinates leave "
                              "no degree of freedom",
                              src_name(model), m, nz);
    if (model->n_independent_hint > 0) {
        if (nz - model->n_independent_hint != m)
            return hymo_error_set(err, HYMO_ERR_MODEL,
                                  "%s: independent: %d joints named, but %d coordinates - %d "
                                  "constraint equations = %d degrees of freedom",
                                  src_name(model), model->n_independent_hint, nz, m, nz - m);
        memset(sim->mask, 0, (size_t)nz);
        for (int k = 0; k < model->n_independent_hint; ++k) sim->mask[model->independent_hint[k]] = 1;
        int ni = 0, nd = 0;
        for (int j = 0; j < nz; ++j) {
            if (sim->mask[j])
                sim->indep[ni++] = j;
            else
                sim->dep[nd++] = j;
        }
    } else {
        hymo_status st = hymo_double_step_select(sim, err);
        if (st != HYMO_OK) return st;
        sim->independent_log[0] = '\0';
    }
    if (hymo_double_step_solve_positions(sim, sim->z, 100, 1e-13)) {
        hymo_kin_positions(&sim->kin, model, sim->z);
        hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, NULL, NULL);
        double worst = 0.0;
        int wc = 0;
        for (int c = 0; c < sim->ncut; ++c) {
            double s = 0.0;
            for (int r = sim->con.cut_first[c]; r < sim->con.cut_first[c + 1]; ++r) s += sim->phi[r] * sim->phi[r];
            if (sqrt(s) >= worst) {
                worst = sqrt(s);
                wc = c;
            }
        }
        return hymo_error_set(err, HYMO_ERR_ASSEMBLY,
                              "%s: the initial configuration cannot be assembled: cut joint %s is "
                              "violated by %.3g after 100 Newton iterations (check the initial joint "
                              "values and the independent joints)",
                              src_name(model), sim->ncut ? model->cuts[wc].name : "?", worst);
    }
    hymo_kin_positions(&sim->kin, model, sim->z);
    hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, sim->phi_z, NULL);
    return HYMO_OK;
}

/* Actuator forces holding the mechanism at rest: R_z^T (Q' + G F) = 0. */
static hymo_status static_forces(hymo_sim *sim, double *f_static, hymo_error *err)
{
    const hymo_model *model = sim->model;
    int nz = sim->nz, na = sim->na, ni = sim->ni;
    if (na == 0) return HYMO_OK;
    hymo_kin_forces_begin(&sim->kin, model);
    hymo_kin_mass_and_forces(&sim->kin, model);
    double *A = calloc((size_t)(ni > na ? ni : na) * na, sizeof(double));
    double *b = calloc((size_t)(ni > na ? ni : na), sizeof(double));
    double *col = calloc((size_t)nz, sizeof(double)), *pcol = calloc((size_t)(ni > 0 ? ni : 1), sizeof(double));
    if (!A || !b || !col || !pcol) {
        free(A); free(b); free(col); free(pcol);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    hymo_engine_actuators(sim);
    for (int a = 0; a < na; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const hymo_point *pb = &model->points[cy->point_base], *pr = &model->points[cy->point_rod];
        const double *rb = &sim->s_ends[6 * a], *rr = rb + 3;
        double jb[3], jr[3];
        for (int j = 0; j < nz; ++j) {
            hymo_kin_point_jacobian(&sim->kin, pb->body, j, rb, jb);
            hymo_kin_point_jacobian(&sim->kin, pr->body, j, rr, jr);
            col[j] = (jr[0] - jb[0]) * sim->s_dir[3 * a] + (jr[1] - jb[1]) * sim->s_dir[3 * a + 1] +
                     (jr[2] - jb[2]) * sim->s_dir[3 * a + 2];
        }
        hymo_double_step_project(sim, col, pcol);
        for (int k = 0; k < ni; ++k) A[k * na + a] = pcol[k];
    }
    hymo_double_step_project(sim, sim->kin.Q, pcol);
    double bnorm = 0.0;
    for (int k = 0; k < ni; ++k) {
        b[k] = -pcol[k];
        bnorm = fmax(bnorm, fabs(b[k]));
    }
    int rows = ni > na ? ni : na;
    lapack_int info = LAPACKE_dgels(LAPACK_ROW_MAJOR, 'N', ni, na, 1, A, na, b, 1);
    hymo_status st = HYMO_OK;
    if (info != 0) {
        st = hymo_error_set(err, HYMO_ERR_MODEL,
                            "%s: no static equilibrium: the cylinders cannot hold the initial "
                            "configuration (rank-deficient actuator Jacobian)",
                            src_name(model));
    } else {
        for (int a = 0; a < na; ++a) f_static[a] = b[a];
        /* residual of the force balance */
        double res = 0.0;
        for (int k = na; k < rows && k < ni; ++k) res = fmax(res, fabs(b[k]));
        if (ni > na && res > 1e-8 * (bnorm + 1.0))
            st = hymo_error_set(err, HYMO_ERR_MODEL,
                                "%s: no static equilibrium: %d cylinder(s) cannot hold %d degrees of "
                                "freedom at rest (unbalanced generalized force %.3g)",
                                src_name(model), na, ni, res);
    }
    free(A); free(b); free(col); free(pcol);
    return st;
}

hymo_status hymo_engine_initialize(hymo_sim *sim, hymo_error *err)
{
    const hymo_model *model = sim->model;
    for (int j = 0; j < sim->nz; ++j) sim->z[j] = model->bodies[j].z0;
    hymo_status st = assemble(sim, err);
    if (st != HYMO_OK) return st;
    st = hymo_double_step_select(sim, err);
    if (st != HYMO_OK) return st;
    if (sim->form != &hymo_double_step_ops) snprintf(sim->independent_log, sizeof sim->independent_log, "all");
    memset(sim->zd, 0, (size_t)sim->nz * sizeof(double));
    hymo_kin_velocities(&sim->kin, model, sim->zd);
    hymo_engine_actuators(sim);
    st = hymo_circuit_init(&sim->circ, model, sim->s, err);
    if (st != HYMO_OK) return st;
    double *f_static = calloc((size_t)(sim->na > 0 ? sim->na : 1), sizeof(double));
    if (!f_static) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    st = static_forces(sim, f_static, err);
    if (st == HYMO_OK) st = hymo_circuit_static_pressures(&sim->circ, model, sim->s, f_static, sim->p, err);
    free(f_static);
    if (st != HYMO_OK) return st;
    memset(sim->u, 0, (size_t)sim->nu * sizeof(double));
    /* derivatives at t = 0+ */
    memcpy(sim->zn, sim->z, (size_t)sim->nz * sizeof(double));
    memset(sim->zdn, 0, (size_t)sim->nz * sizeof(double));
    memcpy(sim->pn, sim->p, (size_t)sim->np * sizeof(double));
    memcpy(sim->un, sim->u, (size_t)sim->nu * sizeof(double));
    for (int v = 0; v < sim->nu; ++v)
        sim->uref_end[v] = hymo_signal_eval(&model->signals[model->valves[v].signal], 0.0, +1);
    sim->t = -sim->opt.dt; /* messages from the shared evaluation name t = 0 */
    st = hymo_engine_dynamics(sim, err);
    sim->t = 0.0;
    if (st != HYMO_OK) return st;
    st = hymo_engine_consistent_accelerations(sim, 1, err);
    if (st != HYMO_OK) return st;
    memcpy(sim->pd, sim->hp, (size_t)sim->np * sizeof(double));
    memcpy(sim->ud, sim->hu, (size_t)sim->nu * sizeof(double));
    sim->energy0 = hymo_kin_kinetic_energy(&sim->kin, model) + hymo_kin_potential_energy(&sim->kin, model);
    for (int a = 0; a < sim->na; ++a) sim->power[a] = sim->force[a] * sim->sd[a];
    hymo_constraints_eval(&sim->con, &sim->kin, sim->phi, sim->phi_z, sim->gamma);
    hymo_engine_record_stats(sim);
    return HYMO_OK;
}

hymo_status hymo_sim_create(const hymo_model *model, const hymo_run_options *opt, hymo_sim **out,
                            hymo_error *err)
{
    return hymo_sim_create_split(model, opt, HYMO_SPLIT_NONE, out, err);
}

hymo_status hymo_sim_create_split(const hymo_model *model, const hymo_run_options *opt, hymo_split_mode split,
                                  hymo_sim **out, hymo_error *err)
{
    *out = NULL;
    hymo_status st = hymo_run_options_check(opt, err);
    if (st != HYMO_OK) return st;
    hymo_sim *sim = calloc(1, sizeof *sim);
    if (!sim) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    sim->model = model;
    sim->opt = *opt;
    sim->form = opt->formulation == HYMO_FORMULATION_PENALTY ? &hymo_penalty_ops : &hymo_double_step_ops;
    if ((st = hymo_kin_init(&sim->kin, model, err)) != HYMO_OK ||
        (st = hymo_constraints_init(&sim->con, model, err)) != HYMO_OK) {
        hymo_sim_free(sim);
        return st;
    }
    int nz = sim->nz = model->n_bodies;
    int m = sim->m = sim->con.m;
    int np = sim->np = model->n_volumes;
    int nu = sim->nu = model->n_valves;
    int na = sim->na = model->n_cylinders;
    int ncut = sim->ncut = model->n_cuts;
    sim->ni = nz - m;
    sim->nxm = sim->form == &hymo_penalty_ops ? nz : sim->ni;
    int nx = sim->nx = sim->nxm + (split == HYMO_SPLIT_NONE ? np + nu : 0);
    ALLOC(sim->z, nz); ALLOC(sim->zd, nz); ALLOC(sim->zdd, nz);
    ALLOC(sim->zn, nz); ALLOC(sim->zdn, nz); ALLOC(sim->zddn, nz);
    ALLOC(sim->p, np); ALLOC(sim->pd, np); ALLOC(sim->pn, np); ALLOC(sim->pdn, np); ALLOC(sim->hp, np);
    ALLOC(sim->u, nu); ALLOC(sim->ud, nu); ALLOC(sim->un, nu); ALLOC(sim->udn, nu); ALLOC(sim->hu, nu);
    ALLOC(sim->uref_start, nu); ALLOC(sim->uref_end, nu);
    ALLOC(sim->lambda, m); ALLOC(sim->phi, m); ALLOC(sim->phi_z, m * nz); ALLOC(sim->gamma, m);
    ALLOC(sim->s, na); ALLOC(sim->sd, na); ALLOC(sim->force, na); ALLOC(sim->ext_force, na); ALLOC(sim->s_prev, na); ALLOC(sim->kkt, (nz + m) * (nz + m)); ALLOC(sim->kkt_rhs, nz + m); ALLOC(sim->kkt_piv, nz + m); ALLOC(sim->s_dir, 3 * na); ALLOC(sim->s_ends, 6 * na);
    ALLOC(sim->zdd_prev, nz); ALLOC(sim->pd_prev, np); ALLOC(sim->pd_prev2, np); ALLOC(sim->lambda_prev, m); ALLOC(sim->lambda_prev2, m);
    ALLOC(sim->work, na); ALLOC(sim->power, na);
    ALLOC(sim->x, nx); ALLOC(sim->dx, nx); ALLOC(sim->f, nx); ALLOC(sim->fp, nx); ALLOC(sim->jac, nx * nx);
    ALLOC(sim->jzz, nz * nz); ALLOC(sim->jzz_piv, nz); ALLOC(sim->vz, nz); ALLOC(sim->vz2, nz);
    ALLOC(sim->indep, nz); ALLOC(sim->dep, m); ALLOC(sim->phid_lu, m * m); ALLOC(sim->phid_piv, m);
    ALLOC(sim->dwork, m * nz + 2 * nz + 2 * m);
    ALLOC(sim->mask, nz); ALLOC(sim->mask2, nz);
    ALLOC(sim->dyn_res, nz); ALLOC(sim->act_gz, na * nz); ALLOC(sim->act_gx, na * nz); ALLOC(sim->tmap, nz * nz);
    ALLOC(sim->c_pos, ncut); ALLOC(sim->c_vel, ncut); ALLOC(sim->c_acc, ncut);
    if ((st = hymo_circuit_derivs_alloc(&sim->cderiv, np, nu, na, err)) != HYMO_OK ||
        (st = hymo_linsol_create(opt->linear_solver, nx, &sim->ls, err)) != HYMO_OK) {
        hymo_sim_free(sim);
        return st;
    }
    if ((st = hymo_engine_initialize(sim, err)) != HYMO_OK) {
        hymo_sim_free(sim);
        return st;
    }
    /* the static start is shared; from here on the forces come from outside */
    sim->split = split;
    memcpy(sim->ext_force, sim->force, (size_t)na * sizeof(double));
    *out = sim;
    return HYMO_OK;
nomem:
    hymo_sim_free(sim);
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (simulation state)");
}

void hymo_sim_free(hymo_sim *sim)
{
    if (!sim) return;
    hymo_kin_free(&sim->kin);
    hymo_constraints_free(&sim->con);
    hymo_circuit_free(&sim->circ);
    hymo_circuit_derivs_free(&sim->cderiv);
    hymo_linsol_free(sim->ls);
    double *arrays[] = {sim->z,     sim->zd,    sim->zdd,   sim->zn,     sim->zdn,      sim->zddn,
                        sim->p,     sim->pd,    sim->pn,    sim->pdn,    sim->hp,       sim->u,
                        sim->ud,    sim->un,    sim->udn,   sim->hu,     sim->uref_start, sim->uref_end,
                        sim->lambda, sim->phi,  sim->phi_z, sim->gamma,  sim->s,        sim->sd,
                        sim->force, sim->ext_force, sim->s_prev, sim->kkt, sim->kkt_rhs, sim->s_dir, sim->s_ends, sim->work, sim->power, sim->zdd_prev, sim->pd_prev, sim->pd_prev2, sim->lambda_prev, sim->lambda_prev2,  sim->x,      sim->dx,       sim->f,
                        sim->fp,    sim->jac,   sim->jzz,   sim->vz,     sim->vz2,      sim->phid_lu,
                        sim->dwork, sim->c_pos, sim->c_vel, sim->c_acc, sim->act_gz, sim->act_gx, sim->tmap, sim->dyn_res};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) free(arrays[i]);
    free(sim->jzz_piv);
    free(sim->kkt_piv);
    free(sim->indep);
    free(sim->dep);
    free(sim->phid_piv);
    free(sim->mask);
    free(sim->mask2);
    free(sim);
}
