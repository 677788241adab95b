/* Hydraulic subsystem of split mode (layout in hymo/cosim.h): hydraulic
 * circuits (hydraulics/hyd_subsystem) behind the subsystem interface.
 *
 * One circuit: the inputs s, sd of its cylinders (and motors: joint
 * coordinate and rate) are the motion polynomials of the step.
 * "Cylinder" below means a coupled actuator: a cylinder, or a motor as
 * actuator n_cylinders + k (hymo_actuator_ports gives its two ports).  Interface model (seed 000 Eqs. 10-15): all
 * circuits in one subsystem, whose inputs are the mechanics' s, sd, G and
 * a0 at the step start; it advances the circuits in lockstep micro-steps
 * h_h, each from the motion of the reduced model sdd = a0 + G F with the
 * force F of the current pressures, and integrates that motion itself
 * (this keeps the circuits of crane2 coupled between communication
 * points). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_split.h"
#include "cosim_tables.h"
#include "hyd_subsystem.h"

enum { HV_TIME, HV_P, HV_U, HV_SD_INPUT, HV_STEPS, HV_RHS, HV_NEWTON, HV_JACOBIANS, HV_LINE_POWER };

typedef struct {
    const hymo_model *model;
    const hymo_coupling_table *coupling;
    int interface_model;
    int n_parts;
    hymo_hyd_sub **hs; /* per circuit */
    int nc;            /* coupled actuators: cylinders and motors */
    int *cyl, *owner;  /* per local actuator: model actuator index, circuit */
    int *p_owner, *u_owner; /* per pressure / spool state: circuit, or -1 */
    double h;          /* hydraulic step h_h */
    double t;          /* time of the outputs */
    double H_last;     /* last communication step (sd~ of the power bonds) */
    double *coef;      /* HYMO_POLY_TERMS per input, last set */
    double *cs, *cv, *force; /* 4 na, 4 na, na: motion polynomials and forces by model index */
    double *im_s, *im_sd, *im_sdd; /* na: motion of the reduced model; TLM: s at the step start in im_s */
    /* TLM: per local cylinder i, lines 2i (piston) and 2i+1 (rod); line l
     * is line tlm_line[l] of circuit owner[l / 2] */
    int tlm;
    const hymo_circuit *circ;
    int *tlm_line;
    double *tlm_zc, *tlm_coef; /* per circuit (its lines in order), scratch */
    double *tlm_zc_out;        /* per local line: Z_c of the last step */
    double *tlm_wave;          /* per local line: this end's wave c = p_h + Z_c Q_h at hi->t (the output) */
    double *tlm_wave_prev, *tlm_cin_prev; /* per local line: this end's and the received wave one point earlier */
    hymo_var_table vars;
} hyd_impl;

/* Constant motion s, sd of every cylinder (interface model), sdd = 0. */
static void im_motion(hyd_impl *hi)
{
    const int na = hymo_coupled_actuators(hi->model);
    for (int a = 0; a < na; ++a) {
        double *cs = &hi->cs[HYMO_POLY_TERMS * a], *cv = &hi->cv[HYMO_POLY_TERMS * a];
        memset(cs, 0, HYMO_POLY_TERMS * sizeof(double));
        memset(cv, 0, HYMO_POLY_TERMS * sizeof(double));
        cs[0] = hi->im_s[a];
        cs[1] = cv[0] = hi->im_sd[a];
    }
}

static void hyd_set_inputs(hymo_subsystem *sub, double t0, const double *coef)
{
    hyd_impl *hi = sub->impl;
    memcpy(hi->coef, coef, (size_t)HYMO_POLY_TERMS * (size_t)sub->n_inputs * sizeof(double));
    if (hi->interface_model) return; /* initial values of the step: used by do_step */
    if (hi->tlm) { /* the port nodes are the lines: the actuators stand at s(t0), sd = 0 (a motor's
                    * displacement flow D sd is the mechanical end's; its leakage C_L dp stays here) */
        for (int i = 0; i < hi->nc; ++i) {
            const int c = hi->cyl[i];
            memset(&hi->cs[HYMO_POLY_TERMS * c], 0, HYMO_POLY_TERMS * sizeof(double));
            memset(&hi->cv[HYMO_POLY_TERMS * c], 0, HYMO_POLY_TERMS * sizeof(double));
            hi->cs[HYMO_POLY_TERMS * c] = hi->im_s[c] = coef[HYMO_POLY_TERMS * (2 * i)];
        }
        for (int q = 0; q < hi->n_parts; ++q) hymo_hyd_sub_set_motion(hi->hs[q], t0, hi->cs, hi->cv);
        return;
    }
    for (int i = 0; i < hi->nc; ++i) {
        int c = hi->cyl[i];
        memcpy(&hi->cs[HYMO_POLY_TERMS * c], &coef[HYMO_POLY_TERMS * (2 * i)], HYMO_POLY_TERMS * sizeof(double));
        memcpy(&hi->cv[HYMO_POLY_TERMS * c], &coef[HYMO_POLY_TERMS * (2 * i + 1)], HYMO_POLY_TERMS * sizeof(double));
    }
    for (int q = 0; q < hi->n_parts; ++q) hymo_hyd_sub_set_motion(hi->hs[q], t0, hi->cs, hi->cv);
}

/* The interface model's step from t: lockstep micro-steps h_h of all
 * circuits (seed 000 Eqs. 12-15); H not a whole multiple of h_h (an FMU's
 * variable communication step): hymo_hyd_sub_steps(H, h_h) equal
 * micro-steps H/N. */
static hymo_status im_step(hyd_impl *hi, double t, double H, hymo_error *err)
{
    const int na = hi->nc, T = HYMO_POLY_TERMS;
    const long steps = hymo_hyd_sub_steps(H, hi->h);
    if (steps == 0)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "t = %.9g s: communication step %g s is more than 1e9 steps h_h",
                              t, H);
    const double h = hymo_steps_per_communication(H, hi->h) ? hi->h : H / (double)steps;
    const double *G = &hi->coef[T * 2 * na], *a0 = &hi->coef[T * (2 * na + na * na)];
    for (int a = 0; a < na; ++a) {
        hi->im_s[a] = hi->coef[T * (2 * a)];
        hi->im_sd[a] = hi->coef[T * (2 * a + 1)];
    }
    for (long j = 0; j < steps; ++j) {
        const double tj = t + (double)j * h;
        /* forces at tj from the current pressures and the model's motion */
        im_motion(hi);
        for (int q = 0; q < hi->n_parts; ++q) {
            hymo_hyd_sub_set_motion(hi->hs[q], tj, hi->cs, hi->cv);
            hymo_hyd_sub_force(hi->hs[q], tj, hi->force);
        }
        for (int a = 0; a < na; ++a) {
            /* G, a0: constant (Lagrange order 0) unless interpolated in
             * Gauss-Seidel with the mechanics first (hymo_split) */
            const double tau = (double)j * h;
            double acc = hymo_poly_eval(&a0[T * a], tau);
            for (int b = 0; b < na; ++b) acc += hymo_poly_eval(&G[T * (a * na + b)], tau) * hi->force[b];
            hi->im_sdd[a] = acc;
            hi->cs[T * a + 2] = 0.5 * acc;
            hi->cv[T * a + 1] = acc;
        }
        for (int q = 0; q < hi->n_parts; ++q) {
            hymo_hyd_sub_set_motion(hi->hs[q], tj, hi->cs, hi->cv);
            hymo_status st = hymo_hyd_sub_do_step(hi->hs[q], tj, h, err);
            if (st != HYMO_OK) return st;
        }
        for (int a = 0; a < na; ++a) {
            hi->im_s[a] += h * hi->im_sd[a] + 0.5 * h * h * hi->im_sdd[a];
            hi->im_sd[a] += h * hi->im_sdd[a];
        }
    }
    /* the outputs at t + H are evaluated with the model's final motion:
     * leave a constant polynomial there */
    im_motion(hi);
    for (int a = 0; a < na; ++a) hi->cs[T * a + 1] = 0.0;
    for (int q = 0; q < hi->n_parts; ++q) hymo_hyd_sub_set_motion(hi->hs[q], t + H, hi->cs, hi->cv);
    return HYMO_OK;
}

/* TLM: Z_c = T / C(p) of every line at s(t0) and the line pressure p of
 * t0 (hymo_tlm_line_pressure: the mean of the two port pressures, from the
 * value at t0 of the received polynomial and this end's output, and both
 * of one step earlier), T = H: the mechanics computes the same from the
 * same s and waves.  Z_c and the mechanical waves are handed to the
 * circuits (lines in local-cylinder order per circuit). */
static void tlm_inputs(hyd_impl *hi, double t, double H)
{
    const hymo_model *model = hi->model;
    for (int q = 0; q < hi->n_parts; ++q) {
        int n = 0;
        for (int i = 0; i < hi->nc; ++i) {
            if (hi->owner[i] != q) continue;
            int node0, node1;
            double w0, w1;
            hymo_actuator_ports(model, hi->cyl[i], &node0, &node1, &w0, &w1);
            for (int r = 0; r < 2; ++r, ++n) {
                const int node = r ? node1 : node0, j = 2 * i + r;
                const double *cm = &hi->coef[HYMO_POLY_TERMS * (2 * hi->nc + j)];
                const double p = hymo_tlm_line_pressure(cm[0], hi->tlm_wave[j], hi->tlm_cin_prev[j], hi->tlm_wave_prev[j]);
                hi->tlm_zc[n] = hi->tlm_zc_out[j] = hymo_tlm_impedance(hi->circ, model, node, hi->im_s, p, H);
                hi->tlm_cin_prev[j] = cm[0];
                memcpy(&hi->tlm_coef[HYMO_POLY_TERMS * n], cm, HYMO_POLY_TERMS * sizeof(double));
            }
        }
        hymo_hyd_sub_tlm_set(hi->hs[q], t, H, hi->tlm_zc, hi->tlm_coef);
    }
}

/* TLM: this end's waves c = p_h + Z_c Q_h at the end of the step (the
 * outputs). */
static void tlm_waves(hyd_impl *hi)
{
    memcpy(hi->tlm_wave_prev, hi->tlm_wave, (size_t)(2 * hi->nc) * sizeof(double));
    for (int i = 0; i < hi->nc; ++i)
        for (int r = 0; r < 2; ++r) {
            double p, Q;
            hymo_hyd_sub_tlm_end(hi->hs[hi->owner[i]], hi->tlm_line[2 * i + r], &p, &Q);
            hi->tlm_wave[2 * i + r] = p + hi->tlm_zc_out[2 * i + r] * Q;
        }
}

static hymo_status hyd_do_step(hymo_subsystem *sub, double t, double H, hymo_error *err)
{
    hyd_impl *hi = sub->impl;
    hymo_status st = HYMO_OK;
    if (hi->tlm) tlm_inputs(hi, t, H);
    if (hi->interface_model)
        st = im_step(hi, t, H, err);
    else
        for (int q = 0; q < hi->n_parts && st == HYMO_OK; ++q) st = hymo_hyd_sub_do_step(hi->hs[q], t, H, err);
    if (st == HYMO_OK) {
        hi->t = t + H;
        hi->H_last = H;
        if (hi->tlm) tlm_waves(hi);
    }
    return st;
}

/* The outputs of each coupling (hymo_coupling_table.hyd_outputs). */
void hymo_cosim_hyd_out_force(const hymo_subsystem *sub, double *y)
{
    const hyd_impl *hi = sub->impl;
    for (int q = 0; q < hi->n_parts; ++q) hymo_hyd_sub_force(hi->hs[q], hi->t, hi->force);
    for (int i = 0; i < hi->nc; ++i) y[i] = hi->force[hi->cyl[i]];
}

void hymo_cosim_hyd_out_pressure(const hymo_subsystem *sub, double *y)
{
    const hyd_impl *hi = sub->impl;
    for (int i = 0; i < hi->nc; ++i) {
        int node0, node1;
        double w0, w1;
        hymo_actuator_ports(hi->model, hi->cyl[i], &node0, &node1, &w0, &w1);
        const double *p = hymo_hyd_sub_p(hi->hs[hi->owner[i]]);
        y[2 * i] = hymo_node_pressure(hi->model, node0, p); /* piston chamber / motor port a */
        y[2 * i + 1] = hymo_node_pressure(hi->model, node1, p);
    }
}

void hymo_cosim_hyd_out_wave(const hymo_subsystem *sub, double *y) /* c = p_h + Z_c Q_h */
{
    const hyd_impl *hi = sub->impl;
    memcpy(y, hi->tlm_wave, (size_t)(2 * hi->nc) * sizeof(double));
}

static void hyd_get_outputs(const hymo_subsystem *sub, double *y)
{
    const hyd_impl *hi = sub->impl;
    hi->coupling->hyd_outputs(sub, y);
}

/* Snapshot: t, H_last, then every circuit's state. */
static int hyd_state_size(const hymo_subsystem *sub)
{
    const hyd_impl *hi = sub->impl;
    int n = 2 + (hi->tlm ? 6 * hi->nc : 0); /* TLM: the waves the next step's Z_c reads */
    for (int q = 0; q < hi->n_parts; ++q) n += hymo_hyd_sub_state_size(hi->hs[q]);
    return n;
}

static void hyd_get_state(const hymo_subsystem *sub, double *buf)
{
    const hyd_impl *hi = sub->impl;
    *buf++ = hi->t;
    *buf++ = hi->H_last;
    for (int k = 0; hi->tlm && k < 3; ++k) {
        const double *w = k == 0 ? hi->tlm_wave : k == 1 ? hi->tlm_wave_prev : hi->tlm_cin_prev;
        memcpy(buf, w, (size_t)(2 * hi->nc) * sizeof(double));
        buf += 2 * hi->nc;
    }
    for (int q = 0; q < hi->n_parts; ++q) {
        hymo_hyd_sub_get_state(hi->hs[q], buf);
        buf += hymo_hyd_sub_state_size(hi->hs[q]);
    }
}

static void hyd_set_state(hymo_subsystem *sub, const double *buf)
{
    hyd_impl *hi = sub->impl;
    hi->t = *buf++;
    hi->H_last = *buf++;
    for (int k = 0; hi->tlm && k < 3; ++k) {
        double *w = k == 0 ? hi->tlm_wave : k == 1 ? hi->tlm_wave_prev : hi->tlm_cin_prev;
        memcpy(w, buf, (size_t)(2 * hi->nc) * sizeof(double));
        buf += 2 * hi->nc;
    }
    for (int q = 0; q < hi->n_parts; ++q) {
        hymo_hyd_sub_set_state(hi->hs[q], buf);
        buf += hymo_hyd_sub_state_size(hi->hs[q]);
    }
}

/* The point of a communication step's map (hymo_split_point_*): every
 * circuit's pressures and spools. */
int hymo_cosim_hyd_point_size(const hymo_subsystem *sub)
{
    const hyd_impl *hi = sub->impl;
    int n = 0;
    for (int q = 0; q < hi->n_parts; ++q) n += hymo_hyd_sub_n(hi->hs[q]);
    return n;
}

void hymo_cosim_hyd_point_get(const hymo_subsystem *sub, double *x)
{
    const hyd_impl *hi = sub->impl;
    for (int q = 0; q < hi->n_parts; ++q) {
        hymo_hyd_sub_y(hi->hs[q], x);
        x += hymo_hyd_sub_n(hi->hs[q]);
    }
}

void hymo_cosim_hyd_point_set(hymo_subsystem *sub, double t, const double *x)
{
    hyd_impl *hi = sub->impl;
    hi->t = t;
    for (int q = 0; q < hi->n_parts; ++q) {
        hymo_hyd_sub_put_y(hi->hs[q], x);
        x += hymo_hyd_sub_n(hi->hs[q]);
    }
}

void hymo_cosim_hyd_point_full(hymo_subsystem *sub, double t, const double *p, const double *u)
{
    hyd_impl *hi = sub->impl;
    hi->t = t;
    for (int q = 0; q < hi->n_parts; ++q) hymo_hyd_sub_put_full(hi->hs[q], p, u);
}

static void hyd_destroy(hymo_subsystem *sub)
{
    if (!sub) return;
    hyd_impl *hi = sub->impl;
    if (hi) {
        for (int q = 0; hi->hs && q < hi->n_parts; ++q) hymo_hyd_sub_free(hi->hs[q]);
        free(hi->hs);
        free(hi->cyl);
        free(hi->owner);
        free(hi->p_owner);
        free(hi->u_owner);
        free(hi->tlm_line);
        free(hi->tlm_zc);
        free(hi->tlm_coef);
        free(hi->tlm_zc_out);
        free(hi->tlm_wave);
        free(hi->tlm_wave_prev);
        free(hi->tlm_cin_prev);
        double *arr[] = {hi->coef, hi->cs, hi->cv, hi->force, hi->im_s, hi->im_sd, hi->im_sdd};
        for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
        hymo_var_table_free(&hi->vars);
        free(hi);
    }
    free(sub);
}

/* ---------------------------------------------------------------- variables */

static int hyd_n_variables(const hymo_subsystem *sub) { return ((const hyd_impl *)sub->impl)->vars.n; }

static const hymo_variable *hyd_variable(const hymo_subsystem *sub, int vr)
{
    return hymo_var_table_get(&((const hyd_impl *)sub->impl)->vars, vr);
}

/* Statistics summed over the circuits. */
static double hyd_stat(const hyd_impl *hi, int kind)
{
    long sum = 0;
    for (int q = 0; q < hi->n_parts; ++q) {
        long steps, rhs, newton;
        hymo_hyd_sub_stats(hi->hs[q], &steps, &rhs, &newton);
        sum += kind == HV_STEPS ? steps : kind == HV_RHS ? rhs : kind == HV_NEWTON ? newton
                                                                                 : hymo_hyd_sub_jacobians(hi->hs[q]);
    }
    return (double)sum;
}

static double hyd_real(const hyd_impl *hi, int vr)
{
    if (vr < 0 || vr >= hi->vars.n) return NAN;
    const int i = hi->vars.index[vr];
    switch (hi->vars.kind[vr]) {
    case HV_TIME: return hi->t;
    case HV_P: return hymo_hyd_sub_p(hi->hs[hi->p_owner[i]])[i];
    case HV_U: return hymo_hyd_sub_u(hi->hs[hi->u_owner[i]])[i];
    case HV_LINE_POWER: { /* sum over the two lines of p_h Q_h */
        double P = 0.0;
        for (int l = 0; l < hi->nc; ++l)
            if (hi->cyl[l] == i)
                for (int r = 0; r < 2; ++r) {
                    double p, Q;
                    hymo_hyd_sub_tlm_end(hi->hs[hi->owner[l]], hi->tlm_line[2 * l + r], &p, &Q);
                    P += p * Q;
                }
        return P;
    }
    case HV_SD_INPUT:
        return hi->interface_model ? hi->im_sd[i] : hymo_poly_eval(&hi->cv[HYMO_POLY_TERMS * i], hi->H_last);
    default: return hyd_stat(hi, hi->vars.kind[vr]);
    }
}

static void hyd_get_real(const hymo_subsystem *sub, const int *vr, int n, double *values)
{
    for (int k = 0; k < n; ++k) values[k] = hyd_real(sub->impl, vr[k]);
}

static const char *hyd_get_string(const hymo_subsystem *sub, int vr)
{
    (void)sub, (void)vr;
    return NULL; /* no string variables */
}

static int add_variables(hyd_impl *hi, const hymo_circuit *circ)
{
    const hymo_model *model = hi->model;
    hymo_var_table *t = &hi->vars;
    int bad = hymo_var_table_add(t, HV_TIME, 0, HYMO_VAR_REAL, "s", "time of the outputs", "time");
    for (int k = 0; k < model->n_volumes; ++k)
        if (hi->p_owner[k] >= 0)
            bad |= hymo_var_table_add(t, HV_P, k, HYMO_VAR_REAL, "Pa", model->nodes[circ->vol_node[k]].name, "p[%d]",
                                      k);
    for (int v = 0; v < model->n_valves; ++v) {
        const int k = model->valves[v].state;
        if (hi->u_owner[k] >= 0)
            bad |= hymo_var_table_add(t, HV_U, k, HYMO_VAR_REAL, "V", model->valves[v].name, "u[%d]", k);
    }
    for (int i = 0; i < hi->nc; ++i)
        bad |= hymo_var_table_add(t, HV_SD_INPUT, hi->cyl[i], HYMO_VAR_REAL,
                                  hi->cyl[i] < model->n_cylinders ? "m/s" : "rad/s or m/s",
                                  hymo_actuator_name(model, hi->cyl[i]), "sd_input[%d]", hi->cyl[i]);
    for (int i = 0; hi->tlm && i < hi->nc; ++i)
        bad |= hymo_var_table_add(t, HV_LINE_POWER, hi->cyl[i], HYMO_VAR_REAL, "W",
                                  "power the circuit delivers into the cylinder's TLM lines", "line_power[%d]",
                                  hi->cyl[i]);
    bad |= hymo_var_table_add(t, HV_STEPS, 0, HYMO_VAR_REAL, "1", "internal steps", "steps");
    bad |= hymo_var_table_add(t, HV_RHS, 0, HYMO_VAR_REAL, "1", "right-hand sides evaluated", "rhs_evaluations");
    bad |= hymo_var_table_add(t, HV_NEWTON, 0, HYMO_VAR_REAL, "1", "Newton iterations (trapezoidal)",
                              "newton_iterations");
    bad |= hymo_var_table_add(t, HV_JACOBIANS, 0, HYMO_VAR_REAL, "1", "Jacobian refreshes (trapezoidal)", "jacobians");
    return bad;
}

static const hymo_subsystem_ops hyd_ops = {
    .kind = "hydraulic",
    .set_inputs = hyd_set_inputs,
    .do_step = hyd_do_step,
    .get_outputs = hyd_get_outputs,
    .state_size = hyd_state_size,
    .get_state = hyd_get_state,
    .set_state = hyd_set_state,
    .destroy = hyd_destroy,
    .n_variables = hyd_n_variables,
    .variable = hyd_variable,
    .get_real = hyd_get_real,
    .get_string = hyd_get_string,
};

/* Appends src to dst (size cap, NUL-terminated), truncating. */
static void append_name(char *dst, size_t cap, const char *src)
{
    size_t len = strlen(dst);
    while (*src && len + 1 < cap) dst[len++] = *src++;
    dst[len] = '\0';
}

hymo_status hymo_cosim_hyd_create(const hymo_model *model, const hymo_cosim_options *opt, const hymo_circuit *circ,
                                  const hymo_circuit_part *parts, int n_parts, int interface_model, const double *p0,
                                  const double *u0, hymo_subsystem **out, hymo_error *err)
{
    *out = NULL;
    const int na = hymo_coupled_actuators(model), T = HYMO_POLY_TERMS;
    int nc = 0;
    for (int q = 0; q < n_parts; ++q) nc += parts[q].n_cylinders + parts[q].n_motors;
    if (interface_model && nc != na)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "interface model: the hydraulic subsystem must hold all %d cylinders and motors (got %d)",
                              na, nc);
    hymo_subsystem *sub = calloc(1, sizeof *sub);
    hyd_impl *hi = calloc(1, sizeof *hi);
    if (!sub || !hi) {
        free(sub);
        free(hi);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    sub->ops = &hyd_ops;
    sub->impl = hi;
    hi->model = model;
    hi->coupling = hymo_cosim_tables_of(opt).coupling;
    hi->tlm = hi->coupling->tlm && !interface_model;
    hi->circ = circ;
    hi->interface_model = interface_model;
    hi->h = opt->h_h;
    hi->nc = nc;
    sub->n_inputs = 2 * nc + (interface_model ? nc * nc + nc : 0) + (hi->tlm ? 2 * nc : 0);
    sub->n_outputs = hi->coupling->per_actuator * nc;
    const size_t n1 = (size_t)(na > 0 ? na : 1);
    hi->hs = calloc((size_t)(n_parts > 0 ? n_parts : 1), sizeof *hi->hs);
    hi->cyl = calloc(n1, sizeof(int));
    hi->owner = calloc(n1, sizeof(int));
    hi->p_owner = calloc((size_t)model->n_volumes + 1, sizeof(int));
    hi->u_owner = calloc((size_t)model->n_valves + 1, sizeof(int));
    hi->coef = calloc((size_t)T * (size_t)(sub->n_inputs + 1), sizeof(double));
    hi->cs = calloc(T * n1, sizeof(double));
    hi->cv = calloc(T * n1, sizeof(double));
    hi->force = calloc(n1, sizeof(double));
    hi->im_s = calloc(n1, sizeof(double));
    hi->im_sd = calloc(n1, sizeof(double));
    hi->im_sdd = calloc(n1, sizeof(double));
    hi->tlm_line = calloc(2 * n1, sizeof(int));
    hi->tlm_zc = calloc(2 * n1, sizeof(double));
    hi->tlm_zc_out = calloc(2 * n1, sizeof(double));
    hi->tlm_wave = calloc(2 * n1, sizeof(double));
    hi->tlm_wave_prev = calloc(2 * n1, sizeof(double));
    hi->tlm_cin_prev = calloc(2 * n1, sizeof(double));
    hi->tlm_coef = calloc(T * 2 * n1, sizeof(double));
    if (!hi->hs || !hi->cyl || !hi->owner || !hi->p_owner || !hi->u_owner || !hi->coef || !hi->cs || !hi->cv ||
        !hi->force || !hi->im_s || !hi->im_sd || !hi->im_sdd || !hi->tlm_line || !hi->tlm_zc || !hi->tlm_zc_out ||
        !hi->tlm_coef || !hi->tlm_wave || !hi->tlm_wave_prev || !hi->tlm_cin_prev) {
        hyd_destroy(sub);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    hi->n_parts = n_parts;
    for (int k = 0; k < model->n_volumes; ++k) hi->p_owner[k] = -1;
    for (int k = 0; k < model->n_valves; ++k) hi->u_owner[k] = -1;
    int i = 0;
    for (int q = 0; q < n_parts; ++q) {
        const hymo_circuit_part *pt = &parts[q];
        for (int j = 0; j < pt->n_volumes; ++j) hi->p_owner[pt->volumes[j]] = q;
        for (int j = 0; j < pt->n_valves; ++j) hi->u_owner[model->valves[pt->valves[j]].state] = q;
        for (int j = 0; j < pt->n_cylinders + pt->n_motors; ++j, ++i) {
            /* its cylinders, then its motors (actuator n_cylinders + k); interface
             * model: in model order (local = model actuator index) */
            const int c = j < pt->n_cylinders ? pt->cylinders[j] : model->n_cylinders + pt->motors[j - pt->n_cylinders],
                      li = interface_model ? c : i;
            hi->cyl[li] = c;
            hi->owner[li] = q;
        }
        if (q > 0) append_name(sub->name, sizeof sub->name, "+");
        append_name(sub->name, sizeof sub->name, pt->name);
        hymo_status st = hymo_hyd_sub_create(model, circ, pt, opt->hyd_integrator, opt->h_h, opt->mech.tol_pressure,
                                             opt->mech.tol_spool, opt->mech.max_iter, p0, u0, &hi->hs[q], err);
        if (st != HYMO_OK) {
            hyd_destroy(sub);
            return st;
        }
    }
    for (int a = 0; a < model->n_cylinders; ++a) /* at rest at s0 until the first input (motors at 0) */
        hi->cs[T * a] = hi->im_s[a] = circ->s0[a];
    for (int q = 0; hi->tlm && q < n_parts; ++q) /* TLM lines: the port nodes (chambers, motor ports), in tlm_inputs' order */
        for (int j = 0; j < nc; ++j) {
            if (hi->owner[j] != q) continue;
            int node0, node1;
            double w0, w1;
            hymo_actuator_ports(model, hi->cyl[j], &node0, &node1, &w0, &w1);
            for (int r = 0; r < 2; ++r) {
                hi->tlm_line[2 * j + r] = hymo_hyd_sub_tlm_count(hi->hs[q]);
                hymo_status st = hymo_hyd_sub_tlm_add(hi->hs[q], r ? node1 : node0, err);
                if (st != HYMO_OK) {
                    hyd_destroy(sub);
                    return st;
                }
            }
        }
    if (hi->tlm) { /* at rest: the waves are the initial pressures (Z_c Q_h = 0 Q_h) */
        tlm_waves(hi);
        memcpy(hi->tlm_wave_prev, hi->tlm_wave, 2 * n1 * sizeof(double));
        memcpy(hi->tlm_cin_prev, hi->tlm_wave, 2 * n1 * sizeof(double)); /* the mechanics' initial waves (p0) */
    }
    if (add_variables(hi, circ)) {
        hyd_destroy(sub);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    *out = sub;
    return HYMO_OK;
}
