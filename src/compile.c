/* Model compilation: the constants of a model and its initial state
 * (assembly and static equilibrium, SPEC §3), computed once per model. */
#include <lapacke.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "hymo/linalg.h"
#include "multibody.h"

static atomic_long compilations;

long hymo_model_compilations(void) { return atomic_load(&compilations); }

static const char *src_name(const hymo_model *model)
{
    return model->source_path ? model->source_path : model->name;
}

hymo_status hymo_compile(hymo_model *model, hymo_error *err)
{
    hymo_compiled *cm = calloc(1, sizeof *cm);
    if (!cm) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (compiled model)");
    model->compiled = cm;
    pthread_mutex_init(&cm->lock, NULL);
    hymo_status st = hymo_kin_model_init(&cm->kin, model, err);
    if (st == HYMO_OK) st = hymo_constraints_init(&cm->con, model, err);
    if (st == HYMO_OK) atomic_fetch_add(&compilations, 1);
    return st;
}

void hymo_compiled_free(hymo_compiled *cm)
{
    if (!cm) return;
    hymo_kin_model_free(&cm->kin);
    hymo_constraints_free(&cm->con);
    hymo_circuit_free(&cm->circ);
    if (cm->parts) hymo_circuit_parts_free(cm->parts, cm->n_parts);
    free(cm->z0);
    free(cm->p0);
    free(cm->u0);
    pthread_mutex_destroy(&cm->lock);
    free(cm);
}

/* Workspace of the initial-state computation. */
typedef struct {
    hymo_kin kin;
    hymo_partition pt;
    hymo_actuators act;
    double *phi, *phi_z, *zd, *f_static;
} init_ws;

/* Positions: Newton on Phi = 0 holding the hinted joints (SPEC §3). */
static hymo_status assemble(const hymo_model *model, const hymo_compiled *cm, init_ws *w, double *z,
                            hymo_error *err)
{
    const int m = cm->con.m, nz = model->n_bodies;
    hymo_kin_positions(&w->kin, model, z);
    hymo_constraints_eval(&cm->con, &w->kin, w->phi, w->phi_z, NULL);
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
        memset(w->pt.mask, 0, (size_t)nz);
        for (int k = 0; k < model->n_independent_hint; ++k) w->pt.mask[model->independent_hint[k]] = 1;
        hymo_partition_set(&w->pt, w->pt.mask);
    } else if (!(hymo_partition_select(&w->pt, w->phi_z) > 0.0)) {
        return hymo_error_set(err, HYMO_ERR_ASSEMBLY,
                              "t = 0 s: constraint Jacobian is rank deficient (singular configuration or "
                              "redundant cut-joint equations)");
    }
    if (hymo_partition_solve_positions(&w->pt, &w->kin, model, &cm->con, z, w->phi, w->phi_z, 100, 1e-13)) {
        hymo_kin_positions(&w->kin, model, z);
        hymo_constraints_eval(&cm->con, &w->kin, w->phi, NULL, NULL);
        double worst = 0.0;
        int wc = 0;
        for (int c = 0; c < model->n_cuts; ++c) {
            double s = 0.0;
            for (int r = cm->con.cut_first[c]; r < cm->con.cut_first[c + 1]; ++r) s += w->phi[r] * w->phi[r];
            if (sqrt(s) >= worst) {
                worst = sqrt(s);
                wc = c;
            }
        }
        return hymo_error_set(err, HYMO_ERR_ASSEMBLY,
                              "%s: the initial configuration cannot be assembled: cut joint %s is "
                              "violated by %.3g after 100 Newton iterations (check the initial joint "
                              "values and the independent joints)",
                              src_name(model), model->n_cuts ? model->cuts[wc].name : "?", worst);
    }
    hymo_kin_positions(&w->kin, model, z);
    hymo_constraints_eval(&cm->con, &w->kin, w->phi, w->phi_z, NULL);
    return HYMO_OK;
}

/* Actuator forces holding the mechanism at rest: R_z^T (Q' + G F) = 0, with
 * the partition chosen at the assembled configuration. */
static hymo_status static_forces(const hymo_model *model, init_ws *w, hymo_error *err)
{
    const int nz = model->n_bodies, na = model->n_cylinders, ni = w->pt.ni;
    if (na == 0) return HYMO_OK;
    hymo_kin_forces_begin(&w->kin, model);
    hymo_kin_mass_and_forces(&w->kin, model);
    const int rows = ni > na ? ni : na;
    double *A = calloc((size_t)rows * na, sizeof(double));
    double *b = calloc((size_t)rows, sizeof(double));
    double *gz = calloc((size_t)na * nz, sizeof(double)), *pcol = calloc((size_t)(ni > 0 ? ni : 1), sizeof(double));
    if (!A || !b || !gz || !pcol) {
        free(A), free(b), free(gz), free(pcol);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    hymo_actuators_eval(&w->act, model, &w->kin);
    hymo_actuators_gradients(&w->act, model, &w->kin, gz);
    for (int a = 0; a < na; ++a) {
        hymo_partition_project(&w->pt, &gz[a * nz], pcol);
        for (int k = 0; k < ni; ++k) A[k * na + a] = pcol[k];
    }
    hymo_partition_project(&w->pt, w->kin.Q, pcol);
    double bnorm = 0.0;
    for (int k = 0; k < ni; ++k) {
        b[k] = -pcol[k];
        bnorm = fmax(bnorm, fabs(b[k]));
    }
    lapack_int info = LAPACKE_dgels(LAPACK_ROW_MAJOR, 'N', ni, na, 1, A, na, b, 1);
    hymo_status st = HYMO_OK;
    if (info != 0) {
        st = hymo_error_set(err, HYMO_ERR_MODEL,
                            "%s: no static equilibrium: the cylinders cannot hold the initial "
                            "configuration (rank-deficient actuator Jacobian)",
                            src_name(model));
    } else {
        for (int a = 0; a < na; ++a) w->f_static[a] = b[a];
        double res = 0.0; /* residual of the force balance */
        for (int k = na; k < rows && k < ni; ++k) res = fmax(res, fabs(b[k]));
        if (ni > na && res > 1e-8 * (bnorm + 1.0))
            st = hymo_error_set(err, HYMO_ERR_MODEL,
                                "%s: no static equilibrium: %d cylinder(s) cannot hold %d degrees of "
                                "freedom at rest (unbalanced generalized force %.3g)",
                                src_name(model), na, ni, res);
    }
    free(A), free(b), free(gz), free(pcol);
    return st;
}

static hymo_status compute_initial(const hymo_model *model, hymo_compiled *cm, hymo_error *err)
{
    const int nz = model->n_bodies, m = cm->con.m, na = model->n_cylinders;
    init_ws w;
    memset(&w, 0, sizeof w);
    hymo_status st = hymo_kin_init(&w.kin, &cm->kin, err);
    if (st == HYMO_OK) st = hymo_partition_alloc(&w.pt, nz, m, err);
    if (st == HYMO_OK) st = hymo_actuators_alloc(&w.act, na, err);
    if (st != HYMO_OK) goto done;
    w.phi = calloc((size_t)m + 1, sizeof(double));
    w.phi_z = calloc((size_t)m * nz + 1, sizeof(double));
    w.zd = calloc((size_t)nz + 1, sizeof(double));
    w.f_static = calloc((size_t)na + 1, sizeof(double));
    cm->z0 = calloc((size_t)nz + 1, sizeof(double));
    cm->p0 = calloc((size_t)model->n_volumes + 1, sizeof(double));
    cm->u0 = calloc((size_t)model->n_valves + 1, sizeof(double));
    if (!w.phi || !w.phi_z || !w.zd || !w.f_static || !cm->z0 || !cm->p0 || !cm->u0) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (initial state)");
        goto done;
    }
    for (int j = 0; j < nz; ++j) cm->z0[j] = model->bodies[j].z0;
    st = assemble(model, cm, &w, cm->z0, err);
    if (st != HYMO_OK) goto done;
    if (!(hymo_partition_select(&w.pt, w.phi_z) > 0.0)) {
        st = hymo_error_set(err, HYMO_ERR_ASSEMBLY,
                            "t = 0 s: constraint Jacobian is rank deficient (singular configuration or "
                            "redundant cut-joint equations)");
        goto done;
    }
    hymo_kin_velocities(&w.kin, model, w.zd);
    hymo_actuators_eval(&w.act, model, &w.kin);
    st = hymo_circuit_init(&cm->circ, model, w.act.s, err);
    if (st == HYMO_OK) st = static_forces(model, &w, err);
    if (st == HYMO_OK)
        st = hymo_circuit_static_pressures(&cm->circ, model, w.act.s, w.f_static, cm->p0, err);
    if (st != HYMO_OK) goto done;
    /* the circuits of a split (an error here concerns co-simulation only) */
    hymo_error_clear(&cm->parts_err);
    cm->parts_status = hymo_circuit_partition(model, &cm->parts, &cm->n_parts, &cm->parts_err);
    if (cm->parts_status != HYMO_OK) {
        cm->parts = NULL;
        cm->n_parts = 0;
    }
    atomic_fetch_add(&compilations, 1);
done:
    hymo_kin_free(&w.kin);
    hymo_partition_free(&w.pt);
    hymo_actuators_free(&w.act);
    free(w.phi), free(w.phi_z), free(w.zd), free(w.f_static);
    return st;
}

hymo_status hymo_compiled_initial(const hymo_model *model, const hymo_compiled **out, hymo_error *err)
{
    hymo_compiled *cm = model->compiled;
    *out = NULL;
    if (!cm) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "model '%s' was not compiled (load it with hymo_model_load_*)", model->name);
    pthread_mutex_lock(&cm->lock);
    if (!cm->initial_done) {
        hymo_error_clear(&cm->initial_err);
        cm->initial_status = compute_initial(model, cm, &cm->initial_err);
        cm->initial_done = 1;
    }
    pthread_mutex_unlock(&cm->lock);
    if (cm->initial_status != HYMO_OK) {
        if (err) *err = cm->initial_err;
        return cm->initial_status;
    }
    *out = cm;
    return HYMO_OK;
}
