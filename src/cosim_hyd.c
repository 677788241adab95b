/* Hydraulic subsystem of split mode: one circuit (hydraulics/hyd_subsystem)
 * behind the subsystem interface.  Inputs: s and sd of each of the part's
 * cylinders as polynomials; outputs: F_s (velocity-force) or the chamber
 * pressures (velocity-pressure) at the end of the step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_internal.h"

typedef struct {
    const hymo_model *model;
    hymo_hyd_sub *sub;
    const hymo_circuit_part *part;
    hymo_coupling_kind coupling;
    double t;
    double *cs, *cv, *force; /* 4 na, 4 na, na (global cylinder indices) */
} hyd_impl;

static void hyd_set_inputs(hymo_subsystem *sub, double t0, const double *coef)
{
    hyd_impl *hi = sub->impl;
    for (int i = 0; i < hi->part->n_cylinders; ++i) {
        int c = hi->part->cylinders[i];
        memcpy(&hi->cs[HYMO_POLY_TERMS * c], &coef[HYMO_POLY_TERMS * (2 * i)], HYMO_POLY_TERMS * sizeof(double));
        memcpy(&hi->cv[HYMO_POLY_TERMS * c], &coef[HYMO_POLY_TERMS * (2 * i + 1)], HYMO_POLY_TERMS * sizeof(double));
    }
    hymo_hyd_sub_set_motion(hi->sub, t0, hi->cs, hi->cv);
}

static hymo_status hyd_do_step(hymo_subsystem *sub, double t, double H, hymo_error *err)
{
    hyd_impl *hi = sub->impl;
    hymo_status st = hymo_hyd_sub_do_step(hi->sub, t, H, err);
    if (st == HYMO_OK) hi->t = t + H;
    return st;
}

static void hyd_get_outputs(const hymo_subsystem *sub, double *y)
{
    const hyd_impl *hi = sub->impl;
    const hymo_model *model = hi->model;
    const double *p = hymo_hyd_sub_p(hi->sub);
    if (hi->coupling == HYMO_COUPLING_VELOCITY_FORCE) hymo_hyd_sub_force(hi->sub, hi->t, hi->force);
    for (int i = 0; i < hi->part->n_cylinders; ++i) {
        int c = hi->part->cylinders[i];
        const hymo_cylinder *cy = &model->cylinders[c];
        if (hi->coupling == HYMO_COUPLING_VELOCITY_FORCE) {
            y[i] = hi->force[c];
        } else {
            y[2 * i] = hymo_node_pressure(model, cy->node_piston, p);
            y[2 * i + 1] = hymo_node_pressure(model, cy->node_rod, p);
        }
    }
}

static int hyd_state_size(const hymo_subsystem *sub)
{
    const hyd_impl *hi = sub->impl;
    return 1 + hymo_hyd_sub_state_size(hi->sub);
}

static void hyd_get_state(const hymo_subsystem *sub, double *buf)
{
    const hyd_impl *hi = sub->impl;
    buf[0] = hi->t;
    hymo_hyd_sub_get_state(hi->sub, buf + 1);
}

static void hyd_set_state(hymo_subsystem *sub, const double *buf)
{
    hyd_impl *hi = sub->impl;
    hi->t = buf[0];
    hymo_hyd_sub_set_state(hi->sub, buf + 1);
}

static void hyd_destroy(hymo_subsystem *sub)
{
    if (!sub) return;
    hyd_impl *hi = sub->impl;
    if (hi) {
        hymo_hyd_sub_free(hi->sub);
        free(hi->cs);
        free(hi->cv);
        free(hi->force);
        free(hi);
    }
    free(sub);
}

static const hymo_subsystem_ops hyd_ops = {
    "hydraulic", hyd_set_inputs, hyd_do_step, hyd_get_outputs, hyd_state_size, hyd_get_state, hyd_set_state,
    hyd_destroy,
};

hymo_hyd_sub *hymo_cosim_hyd_sub(hymo_subsystem *sub) { return ((hyd_impl *)sub->impl)->sub; }

void hymo_cosim_hyd_set_clock(hymo_subsystem *sub, double t) { ((hyd_impl *)sub->impl)->t = t; }

hymo_status hymo_cosim_hyd_create(const hymo_model *model, const hymo_cosim_options *opt, const hymo_circuit *circ,
                                  const hymo_circuit_part *part, const double *p0, const double *u0,
                                  hymo_subsystem **out, hymo_error *err)
{
    *out = NULL;
    hymo_subsystem *sub = calloc(1, sizeof *sub);
    hyd_impl *hi = calloc(1, sizeof *hi);
    size_t na = (size_t)(model->n_cylinders > 0 ? model->n_cylinders : 1);
    if (hi) {
        hi->cs = calloc(HYMO_POLY_TERMS * na, sizeof(double));
        hi->cv = calloc(HYMO_POLY_TERMS * na, sizeof(double));
        hi->force = calloc(na, sizeof(double));
    }
    if (!sub || !hi || !hi->cs || !hi->cv || !hi->force) {
        if (hi) free(hi->cs), free(hi->cv), free(hi->force);
        free(hi);
        free(sub);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    sub->ops = &hyd_ops;
    sub->impl = hi;
    snprintf(sub->name, sizeof sub->name, "%s", part->name);
    hi->model = model;
    hi->part = part;
    hi->coupling = opt->coupling;
    sub->n_inputs = 2 * part->n_cylinders;
    sub->n_outputs = (opt->coupling == HYMO_COUPLING_VELOCITY_FORCE ? 1 : 2) * part->n_cylinders;
    hymo_status st = hymo_hyd_sub_create(model, circ, part, opt->hyd_integrator, opt->h_h, opt->mech.tol_pressure,
                                         opt->mech.tol_spool, opt->mech.max_iter, p0, u0, &hi->sub, err);
    if (st != HYMO_OK) {
        hyd_destroy(sub);
        return st;
    }
    *out = sub;
    return HYMO_OK;
}
