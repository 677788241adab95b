/* Split-mode co-simulation master (SPEC §7, seed 000 §2.3, seed 004).
 *
 * Subsystem 0 is the mechanics, 1..n the hydraulic circuits.  Each input
 * of a subsystem is wired to one output of another; the master keeps the
 * last four communication points of every output and hands each input over
 * as a polynomial (Lagrange through the latest p+1 points; in Gauss-Seidel
 * the second stage sees the fresh point, i.e. interpolates).  With the
 * interface model the hydraulic stage advances in lockstep micro-steps h_h,
 * its motion coming from sdd = a0 + G F (seed 000 Eqs. 12-15).
 *
 * Power bond a (cylinder a), seed 000 Eqs. 20-24 with the sign chosen so
 * that a positive residual is energy created at the interface:
 *   dP_a = F~_a sd_a - F_a sd~_a
 * (mechanics receives the power F~ sd with its extrapolated input F~;
 * hydraulics delivers F sd~ with its extrapolated input sd~; velocity-
 * pressure: F = p_pist A_pist - p_rod A_rod, the part that crosses the
 * bond).  Residual energy: rectangle rule for p = 0, trapezoidal otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_internal.h"
#include "rows.h"

/* ---------------------------------------------------------------- options */

void hymo_cosim_options_default(hymo_cosim_options *opt, const hymo_model *model)
{
    memset(opt, 0, sizeof *opt);
    opt->scheme = HYMO_SCHEME_JACOBI;
    opt->coupling = HYMO_COUPLING_VELOCITY_PRESSURE;
    opt->approx = HYMO_APPROX_LAGRANGE2;
    opt->hyd_integrator = HYMO_HYD_RK4;
    opt->mech_integrator = HYMO_MECH_TRAPEZOIDAL;
    hymo_run_options_default(&opt->mech, model);
    opt->mech.jacobian = HYMO_JACOBIAN_FAST;
    opt->H = 1e-3;
    opt->mech.dt = opt->H;
    opt->h_h = 1e-4;
    opt->unstable_energy = 1e6;
}

hymo_status hymo_cosim_options_check(const hymo_cosim_options *opt, hymo_error *err)
{
    hymo_status st = hymo_run_options_check(&opt->mech, err);
    if (st != HYMO_OK) return st;
    if (!(opt->H > 0.0) || !isfinite(opt->H))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "H = %g: the communication step must be positive", opt->H);
    if (!(opt->h_h > 0.0) || !isfinite(opt->h_h))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "h_h = %g: the hydraulic step must be positive", opt->h_h);
    if (!hymo_steps_per_communication(opt->H, opt->h_h))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "H/h_h = %.9g/%.9g = %.9g is not an integer: the hydraulic steps must fill the "
                              "communication step",
                              opt->H, opt->h_h, opt->H / opt->h_h);
    if (!hymo_steps_per_communication(opt->H, opt->mech.dt))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "H/h_m = %.9g/%.9g = %.9g is not an integer: the mechanical steps must fill the "
                              "communication step",
                              opt->H, opt->mech.dt, opt->H / opt->mech.dt);
    if (opt->H > opt->mech.t_end)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "H = %g is longer than t_end = %g", opt->H, opt->mech.t_end);
    if (!(opt->unstable_energy > 0.0))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "unstable energy limit %g must be positive",
                              opt->unstable_energy);
    if ((unsigned)opt->scheme > HYMO_SCHEME_GAUSS_SEIDEL_HYD_FIRST ||
        (unsigned)opt->coupling > HYMO_COUPLING_VELOCITY_PRESSURE ||
        (unsigned)opt->approx > HYMO_APPROX_INTERFACE_MODEL || (unsigned)opt->hyd_integrator > HYMO_HYD_TRAPEZOIDAL ||
        (unsigned)opt->mech_integrator > HYMO_MECH_INDEX1)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "co-simulation option out of range");
    return HYMO_OK;
}

static const char *const scheme_names[] = {"jacobi", "gauss-seidel-mech-first", "gauss-seidel-hyd-first"};
static const char *const coupling_names[] = {"velocity-force", "velocity-pressure"};
static const char *const approx_names[] = {"0", "1", "2", "3", "quadratic", "interface-model"};
static const char *const mech_names[] = {"trapezoidal", "index1"};

#define NAME_OF(table, k) ((unsigned)(k) < sizeof table / sizeof table[0] ? table[k] : "?")
const char *hymo_cosim_scheme_name(hymo_cosim_scheme s) { return NAME_OF(scheme_names, s); }
const char *hymo_coupling_name(hymo_coupling_kind c) { return NAME_OF(coupling_names, c); }
const char *hymo_approx_name(hymo_approx_kind a) { return NAME_OF(approx_names, a); }
const char *hymo_mech_integrator_name(hymo_mech_integrator_kind k) { return NAME_OF(mech_names, k); }

static int parse_name(const char *s, const char *const *table, int n)
{
    for (int k = 0; k < n; ++k)
        if (strcmp(s, table[k]) == 0) return k;
    return -1;
}
#define PARSE(table, s, out)                                                                       \
    do {                                                                                           \
        int k_ = parse_name((s), (table), (int)(sizeof(table) / sizeof(table)[0]));                 \
        if (k_ < 0) return -1;                                                                     \
        *(out) = k_;                                                                               \
        return 0;                                                                                  \
    } while (0)

int hymo_cosim_scheme_parse(const char *s, hymo_cosim_scheme *out)
{
    if (strcmp(s, "gauss-seidel") == 0) s = "gauss-seidel-mech-first";
    PARSE(scheme_names, s, out);
}
int hymo_coupling_parse(const char *s, hymo_coupling_kind *out) { PARSE(coupling_names, s, out); }
int hymo_approx_parse(const char *s, hymo_approx_kind *out)
{
    if (strcmp(s, "im") == 0) s = "interface-model";
    PARSE(approx_names, s, out);
}
int hymo_mech_integrator_parse(const char *s, hymo_mech_integrator_kind *out)
{
    if (strcmp(s, "index-1") == 0 || strcmp(s, "ali1") == 0) s = "index1";
    PARSE(mech_names, s, out);
}

/* ------------------------------------------------------------------ master */

typedef hymo_cosim_node node;

typedef struct {
    const hymo_model *model;
    hymo_cosim_options opt;
    int nsub, nparts, na;
    node *nodes;
    hymo_circuit_part *parts;
    hymo_sim *mech;
    int *bond_part, *bond_local; /* per cylinder: hydraulic node (1..) and local index */
    /* interface model */
    double *im_s, *im_sd, *im_sdd, *im_F, *cs, *cv;
    /* bonds */
    double *dP, *dP_prev, *E;
    double E_total, E_max;
    /* records */
    hymo_rows rows;
    long cap;
    double *rec_dP, *rec_E, *rec_Et, *rec_sdd, *rec_y, *rec_sdt; /* cap x ... */
} master;

static int input_order(const master *ms, int k)
{
    switch (ms->opt.approx) {
    case HYMO_APPROX_QUADRATIC: return 2;
    case HYMO_APPROX_INTERFACE_MODEL: return k == 0 ? 1 : 0;
    default: return (int)ms->opt.approx;
    }
}

/* Hydraulic stage with the interface model: lockstep micro-steps h_h. */
static hymo_status im_stage(master *ms, double t, hymo_error *err)
{
    const int na = ms->na;
    const double h = ms->opt.h_h;
    const node *mn = &ms->nodes[0];
    /* the mechanics' newest point is t (Jacobi, hydraulics first) or t + H
     * (mechanics first); the interface model starts from the point at t */
    int j0 = mn->hist_t[0] > t + 0.5 * h ? 1 : 0;
    if (j0 >= mn->n_hist) j0 = 0;
    const double *y0 = mn->hist_y + j0 * mn->sub->n_outputs;
    const double *G = y0 + 3 * na, *a0 = G + na * na;
    for (int a = 0; a < na; ++a) {
        ms->im_s[a] = y0[a];
        ms->im_sd[a] = y0[na + a];
    }
    long steps = lround(ms->opt.H / h);
    for (long j = 0; j < steps; ++j) {
        double tj = t + (double)j * h;
        /* forces at tj from the current pressures and the model's motion */
        for (int a = 0; a < na; ++a) {
            double *cs = &ms->cs[HYMO_POLY_TERMS * a], *cv = &ms->cv[HYMO_POLY_TERMS * a];
            memset(cs, 0, HYMO_POLY_TERMS * sizeof(double));
            memset(cv, 0, HYMO_POLY_TERMS * sizeof(double));
            cs[0] = ms->im_s[a];
            cs[1] = cv[0] = ms->im_sd[a];
        }
        for (int k = 1; k < ms->nsub; ++k) {
            hymo_hyd_sub *hs = hymo_cosim_hyd_sub(ms->nodes[k].sub);
            hymo_hyd_sub_set_motion(hs, tj, ms->cs, ms->cv);
            hymo_hyd_sub_force(hs, tj, ms->im_F);
        }
        for (int a = 0; a < na; ++a) {
            double acc = a0[a];
            for (int b = 0; b < na; ++b) acc += G[a * na + b] * ms->im_F[b];
            ms->im_sdd[a] = acc;
            ms->cs[HYMO_POLY_TERMS * a + 2] = 0.5 * acc;
            ms->cv[HYMO_POLY_TERMS * a + 1] = acc;
        }
        for (int k = 1; k < ms->nsub; ++k) {
            hymo_hyd_sub *hs = hymo_cosim_hyd_sub(ms->nodes[k].sub);
            hymo_hyd_sub_set_motion(hs, tj, ms->cs, ms->cv);
            hymo_status st = hymo_hyd_sub_do_step(hs, tj, h, err);
            if (st != HYMO_OK) return st;
        }
        for (int a = 0; a < na; ++a) {
            ms->im_s[a] += h * ms->im_sd[a] + 0.5 * h * h * ms->im_sdd[a];
            ms->im_sd[a] += h * ms->im_sdd[a];
        }
    }
    /* the hydraulic outputs at t + H are evaluated with the model's final
     * motion: leave a constant polynomial there */
    for (int a = 0; a < na; ++a) {
        double *cs = &ms->cs[HYMO_POLY_TERMS * a], *cv = &ms->cv[HYMO_POLY_TERMS * a];
        memset(cs, 0, HYMO_POLY_TERMS * sizeof(double));
        memset(cv, 0, HYMO_POLY_TERMS * sizeof(double));
        cs[0] = ms->im_s[a];
        cv[0] = ms->im_sd[a];
    }
    for (int k = 1; k < ms->nsub; ++k) {
        hymo_hyd_sub *hs = hymo_cosim_hyd_sub(ms->nodes[k].sub);
        hymo_hyd_sub_set_motion(hs, t + ms->opt.H, ms->cs, ms->cv);
        hymo_cosim_hyd_set_clock(ms->nodes[k].sub, t + ms->opt.H);
    }
    return HYMO_OK;
}

/* Runs one stage: subsystems [k0, k1) advance from t to t + H. */
static hymo_status stage(master *ms, int k0, int k1, double t, hymo_error *err)
{
    const double H = ms->opt.H;
    int im_hyd = ms->opt.approx == HYMO_APPROX_INTERFACE_MODEL && k0 <= 1 && k1 > 1;
    for (int k = k0; k < k1; ++k)
        if (!(im_hyd && k >= 1)) hymo_cosim_node_set_inputs(ms->nodes, k, t, input_order(ms, k));
    for (int k = k0; k < k1; ++k) {
        if (im_hyd && k >= 1) continue;
        hymo_status st = ms->nodes[k].sub->ops->do_step(ms->nodes[k].sub, t, H, err);
        if (st != HYMO_OK) return st;
    }
    if (im_hyd) {
        hymo_status st = im_stage(ms, t, err);
        if (st != HYMO_OK) return st;
    }
    for (int k = k0; k < k1; ++k) hymo_cosim_node_push(&ms->nodes[k], t + H);
    return HYMO_OK;
}

/* Residual power of every bond at the communication point t + H. */
static void bond_powers(master *ms)
{
    const hymo_model *model = ms->model;
    const int na = ms->na;
    const double H = ms->opt.H;
    const node *mn = &ms->nodes[0];
    for (int a = 0; a < na; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const node *hn = &ms->nodes[ms->bond_part[a]];
        int i = ms->bond_local[a];
        double sd = mn->hist_y[na + a], F_mech, F_hyd, sd_hyd;
        if (ms->opt.coupling == HYMO_COUPLING_VELOCITY_FORCE) {
            F_mech = hymo_poly_eval(&mn->coef[HYMO_POLY_TERMS * a], H);
            F_hyd = hn->hist_y[i];
        } else {
            F_mech = hymo_poly_eval(&mn->coef[HYMO_POLY_TERMS * (2 * a)], H) * cy->piston_area -
                     hymo_poly_eval(&mn->coef[HYMO_POLY_TERMS * (2 * a + 1)], H) * cy->rod_side_area;
            F_hyd = hn->hist_y[2 * i] * cy->piston_area - hn->hist_y[2 * i + 1] * cy->rod_side_area;
        }
        if (ms->opt.approx == HYMO_APPROX_INTERFACE_MODEL)
            sd_hyd = ms->im_sd[a];
        else
            sd_hyd = hymo_poly_eval(&hn->coef[HYMO_POLY_TERMS * (2 * i + 1)], H);
        ms->dP[a] = hymo_cosim_residual_power(F_mech, sd, F_hyd, sd_hyd);
    }
}

static void master_free(master *ms)
{
    if (ms->nodes) {
        for (int k = 0; k < ms->nsub; ++k) {
            node *nd = &ms->nodes[k];
            if (nd->sub) nd->sub->ops->destroy(nd->sub);
            hymo_cosim_node_free(nd);
        }
        free(ms->nodes);
    }
    if (ms->parts) hymo_circuit_parts_free(ms->parts, ms->nparts);
    double *arr[] = {ms->im_s, ms->im_sd, ms->im_sdd, ms->im_F, ms->cs, ms->cv, ms->dP, ms->dP_prev, ms->E,
                     ms->rec_dP, ms->rec_E, ms->rec_Et, ms->rec_sdd, ms->rec_y, ms->rec_sdt};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
    free(ms->bond_part);
    free(ms->bond_local);
    hymo_rows_free(&ms->rows);
}

#define CALLOC(ptr, n)                                                                              \
    do {                                                                                            \
        (ptr) = calloc((size_t)((n) > 0 ? (n) : 1), sizeof *(ptr));                                  \
        if (!(ptr)) goto nomem;                                                                     \
    } while (0)

static hymo_status master_create(master *ms, const hymo_model *model, const hymo_cosim_options *opt,
                                 hymo_error *err)
{
    memset(ms, 0, sizeof *ms);
    ms->model = model;
    ms->opt = *opt;
    hymo_status st = hymo_circuit_partition(model, &ms->parts, &ms->nparts, err);
    if (st != HYMO_OK) return st;
    const int na = ms->na = model->n_cylinders;
    if (na == 0)
        return hymo_error_set(err, HYMO_ERR_MODEL, "%s: no cylinders: nothing to split for co-simulation",
                              model->source_path ? model->source_path : model->name);
    ms->nsub = 1 + ms->nparts;
    CALLOC(ms->nodes, ms->nsub);
    st = hymo_cosim_mech_create(model, opt, &ms->nodes[0].sub, err);
    if (st != HYMO_OK) return st;
    ms->mech = hymo_cosim_mech_sim(ms->nodes[0].sub);
    CALLOC(ms->bond_part, na);
    CALLOC(ms->bond_local, na);
    for (int q = 0; q < ms->nparts; ++q) {
        st = hymo_cosim_hyd_create(model, opt, &ms->mech->cm->circ, &ms->parts[q], ms->mech->cm->p0, ms->mech->cm->u0,
                                   &ms->nodes[1 + q].sub, err);
        if (st != HYMO_OK) return st;
        for (int i = 0; i < ms->parts[q].n_cylinders; ++i) {
            ms->bond_part[ms->parts[q].cylinders[i]] = 1 + q;
            ms->bond_local[ms->parts[q].cylinders[i]] = i;
        }
    }
    /* wiring */
    for (int k = 0; k < ms->nsub; ++k) {
        if (hymo_cosim_node_alloc(&ms->nodes[k])) goto nomem;
    }
    const int per = opt->coupling == HYMO_COUPLING_VELOCITY_FORCE ? 1 : 2;
    for (int a = 0; a < na; ++a) {
        int q = ms->bond_part[a], i = ms->bond_local[a];
        node *mn = &ms->nodes[0], *hn = &ms->nodes[q];
        for (int r = 0; r < per; ++r) { /* mechanics <- hydraulics: F or (p_pist, p_rod) */
            mn->src_sub[per * a + r] = q;
            mn->src_out[per * a + r] = per * i + r;
        }
        hn->src_sub[2 * i] = 0; /* hydraulics <- mechanics: s, sd */
        hn->src_out[2 * i] = a;
        hn->src_sub[2 * i + 1] = 0;
        hn->src_out[2 * i + 1] = na + a;
    }
    CALLOC(ms->im_s, na);
    CALLOC(ms->im_sd, na);
    CALLOC(ms->im_sdd, na);
    CALLOC(ms->im_F, na);
    CALLOC(ms->cs, HYMO_POLY_TERMS * na);
    CALLOC(ms->cv, HYMO_POLY_TERMS * na);
    CALLOC(ms->dP, na);
    CALLOC(ms->dP_prev, na);
    CALLOC(ms->E, na);
    ms->cap = lround(opt->mech.t_end / opt->H) + 1;
    if (!hymo_rows_alloc(&ms->rows, ms->mech, ms->cap)) goto nomem;
    CALLOC(ms->rec_dP, ms->cap * na);
    CALLOC(ms->rec_E, ms->cap * na);
    CALLOC(ms->rec_Et, ms->cap);
    CALLOC(ms->rec_sdd, ms->cap * na);
    CALLOC(ms->rec_y, ms->cap * 2 * na); /* hydraulic outputs: F, or p_pist and p_rod */
    CALLOC(ms->rec_sdt, ms->cap * na);   /* sd~ used by the hydraulics */
    /* initial outputs (t = 0) */
    for (int k = 0; k < ms->nsub; ++k) hymo_cosim_node_push(&ms->nodes[k], 0.0);
    return HYMO_OK;
nomem:
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (co-simulation, %ld rows)", ms->cap);
}

/* Row of the communication point just reached (rows, bonds, signals). */
static void record(master *ms, int sd_tilde_valid)
{
    const int na = ms->na;
    long r = ms->rows.n;
    hymo_rows_push(&ms->rows, ms->mech);
    /* hydraulic states from their owners */
    double *prow = ms->rows.p + r * ms->rows.np, *urow = ms->rows.u + r * ms->rows.nu;
    for (int q = 0; q < ms->nparts; ++q) {
        const hymo_circuit_part *part = &ms->parts[q];
        hymo_hyd_sub *hs = hymo_cosim_hyd_sub(ms->nodes[1 + q].sub);
        const double *p = hymo_hyd_sub_p(hs), *u = hymo_hyd_sub_u(hs);
        for (int i = 0; i < part->n_volumes; ++i) prow[part->volumes[i]] = p[part->volumes[i]];
        for (int i = 0; i < part->n_valves; ++i) {
            int st = ms->model->valves[part->valves[i]].state;
            urow[st] = u[st];
        }
    }
    const node *mn = &ms->nodes[0];
    for (int a = 0; a < na; ++a) {
        const node *hn = &ms->nodes[ms->bond_part[a]];
        int i = ms->bond_local[a];
        ms->rec_dP[r * na + a] = ms->dP[a];
        ms->rec_E[r * na + a] = ms->E[a];
        ms->rec_sdd[r * na + a] = mn->hist_y[2 * na + a];
        if (ms->opt.coupling == HYMO_COUPLING_VELOCITY_FORCE) {
            ms->rec_y[r * 2 * na + a] = hn->hist_y[i];
        } else {
            ms->rec_y[r * 2 * na + a] = hn->hist_y[2 * i];
            ms->rec_y[r * 2 * na + na + a] = hn->hist_y[2 * i + 1];
        }
        ms->rec_sdt[r * na + a] = sd_tilde_valid ? (ms->opt.approx == HYMO_APPROX_INTERFACE_MODEL
                                                        ? ms->im_sd[a]
                                                        : hymo_poly_eval(&hn->coef[HYMO_POLY_TERMS * (2 * i + 1)],
                                                                    ms->opt.H))
                                                 : mn->hist_y[na + a];
    }
    ms->rec_Et[r] = ms->E_total;
}

/* First non-finite quantity of the communication point, or NULL. */
static const char *non_finite(const master *ms)
{
    for (int k = 0; k < ms->nsub; ++k) {
        const node *nd = &ms->nodes[k];
        for (int i = 0; i < nd->sub->n_outputs; ++i)
            if (!isfinite(nd->hist_y[i])) return nd->sub->name;
    }
    for (int j = 0; j < ms->mech->nz; ++j)
        if (!isfinite(ms->mech->mb.z[j]) || !isfinite(ms->mech->mb.zd[j])) return "mechanics";
    for (int a = 0; a < ms->na; ++a)
        if (!isfinite(ms->dP[a])) return "residual power";
    return NULL;
}


static hymo_status write_output(master *ms, const char *path, const hymo_cosim_summary *sum, hymo_error *err)
{
    const hymo_model *model = ms->model;
    const int na = ms->na;
    hymo_ref_writer *w = NULL;
    void *names = NULL;
    char formulation[HYMO_REF_TEXT_MAX];
    snprintf(formulation, sizeof formulation, "%s",
             ms->mech->form.ops->name);
    hymo_status st = hymo_rows_open_writer(ms->mech, path, formulation, "cosim", ms->opt.H, &w, &names, err);
    long n = ms->rows.n;
    const char **bond = calloc((size_t)na * 2, sizeof *bond);
    char (*bn)[HYMO_REF_TEXT_MAX] = calloc((size_t)na * 2, sizeof *bn);
    if (st == HYMO_OK && (!bond || !bn)) st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    if (st == HYMO_OK) {
        for (int a = 0; a < na; ++a) {
            snprintf(bn[a], sizeof bn[a], "%s", model->cylinders[a].name);
            bond[a] = bn[a];
        }
        st = hymo_rows_flush(&ms->rows, w, err);
    }
    const hymo_cosim_options *o = &ms->opt;
#define TRY(call)                                                                                  \
    do {                                                                                           \
        if (st == HYMO_OK) st = (call);                                                            \
    } while (0)
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "scheme", hymo_cosim_scheme_name(o->scheme), err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "coupling", hymo_coupling_name(o->coupling), err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "extrapolation", hymo_approx_name(o->approx), err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "hyd_integrator", hymo_hyd_integrator_name(o->hyd_integrator), err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "mech_integrator", hymo_mech_integrator_name(o->mech_integrator),
                                     err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "H", o->H, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "h_m", o->mech.dt, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "h_h", o->h_h, err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "status", sum->stable ? "stable" : "unstable", err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "status_reason", sum->reason, err));
    TRY(hymo_ref_writer_put_attr_int(w, "cosim", "n_bonds", na, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "residual_energy_final", sum->residual_energy_final, err));
    TRY(hymo_ref_writer_put_matrix(w, "cosim/residual_power", (int)n, na, ms->rec_dP, "W", bond, err));
    TRY(hymo_ref_writer_put_matrix(w, "cosim/residual_energy", (int)n, na, ms->rec_E, "J", bond, err));
    TRY(hymo_ref_writer_put_matrix(w, "cosim/residual_energy_total", (int)n, 0, ms->rec_Et, "J", NULL, err));
    TRY(hymo_ref_writer_put_matrix(w, "cosim/signals/sdd", (int)n, na, ms->rec_sdd, "m/s^2", bond, err));
    TRY(hymo_ref_writer_put_matrix(w, "cosim/signals/sd_hydraulic_input", (int)n, na, ms->rec_sdt, "m/s", bond, err));
    if (o->coupling == HYMO_COUPLING_VELOCITY_FORCE) {
        /* rec_y rows are 2na wide: the forces are the first na columns */
        for (long r = 0; r < n; ++r) memmove(ms->rec_y + r * na, ms->rec_y + r * 2 * na, (size_t)na * sizeof(double));
        TRY(hymo_ref_writer_put_matrix(w, "cosim/signals/force_hydraulic", (int)n, na, ms->rec_y, "N", bond, err));
    } else {
        for (int a = 0; a < na; ++a) {
            snprintf(bn[na + a], sizeof bn[na + a], "%s.rod", model->cylinders[a].name);
            snprintf(bn[a], sizeof bn[a], "%s.piston", model->cylinders[a].name);
            bond[na + a] = bn[na + a];
        }
        TRY(hymo_ref_writer_put_matrix(w, "cosim/signals/chamber_pressure", (int)n, 2 * na, ms->rec_y, "Pa", bond,
                                       err));
    }
#undef TRY
    if (w) {
        hymo_run_summary rs;
        hymo_sim_summary(ms->mech, &rs);
        rs.complete = sum->stable && sum->t_reached >= ms->opt.mech.t_end - 0.5 * ms->opt.H;
        rs.wall_time = sum->wall_time;
        rs.n_steps = sum->n_macro;
        if (st == HYMO_OK) {
            st = hymo_ref_writer_close(w, &rs, err);
        } else {
            hymo_ref_writer_discard(w);
        }
    }
    free(names);
    free(bond);
    free(bn);
    return st;
}

hymo_status hymo_cosim_run(const hymo_model *model, const hymo_cosim_options *opt, const hymo_reference *ref,
                           const char *out_path, hymo_cosim_summary *summary, hymo_error *err)
{
    hymo_cosim_summary sum;
    memset(&sum, 0, sizeof sum);
    hymo_status st = hymo_cosim_options_check(opt, err);
    if (st != HYMO_OK) return st;
    if (ref && strcmp(ref->model_sha256, model->sha256) != 0)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "the reference is of another model ('%s', sha256 %.12s...) than '%s' (%.12s...)",
                              ref->model_name, ref->model_sha256, model->name, model->sha256);
    master ms;
    st = master_create(&ms, model, opt, err);
    if (st != HYMO_OK) {
        master_free(&ms);
        return st;
    }
    const double H = opt->H;
    const long n_macro = ms.cap - 1;
    const int na = ms.na, trapezoid = opt->approx != HYMO_APPROX_LAGRANGE0;
    sum.stable = 1;
    sum.n_bonds = na;
    snprintf(sum.reason, sizeof sum.reason, "reached t_end");
    record(&ms, 0);
    double t0 = hymo_now_seconds();
    long it0 = ms.mech->iterations_total;
    for (long n = 0; n < n_macro; ++n) {
        double t = (double)n * H;
        hymo_error step_err;
        switch (opt->scheme) {
        case HYMO_SCHEME_JACOBI: st = stage(&ms, 0, ms.nsub, t, &step_err); break;
        case HYMO_SCHEME_GAUSS_SEIDEL_MECH_FIRST:
            st = stage(&ms, 0, 1, t, &step_err);
            if (st == HYMO_OK) st = stage(&ms, 1, ms.nsub, t, &step_err);
            break;
        default:
            st = stage(&ms, 1, ms.nsub, t, &step_err);
            if (st == HYMO_OK) st = stage(&ms, 0, 1, t, &step_err);
            break;
        }
        if (st != HYMO_OK) {
            sum.stable = 0;
            snprintf(sum.reason, sizeof sum.reason, "%s", step_err.message);
            st = HYMO_OK;
            break;
        }
        bond_powers(&ms);
        for (int a = 0; a < na; ++a) {
            double dE = hymo_cosim_residual_energy_step(!trapezoid, H, ms.dP_prev[a], ms.dP[a]);
            ms.E[a] += dE;
            ms.E_total += dE;
            ms.dP_prev[a] = ms.dP[a];
        }
        const char *bad = non_finite(&ms);
        if (bad || !isfinite(ms.E_total) || fabs(ms.E_total) > opt->unstable_energy) {
            sum.stable = 0;
            if (bad)
                snprintf(sum.reason, sizeof sum.reason, "t = %.6g s (step %ld): %s became non-finite", t + H, n + 1,
                         bad);
            else
                snprintf(sum.reason, sizeof sum.reason,
                         "t = %.6g s (step %ld): |residual energy| %.3g J exceeds the limit %.3g J", t + H, n + 1,
                         fabs(ms.E_total), opt->unstable_energy);
            break;
        }
        if (fabs(ms.E_total) > ms.E_max) ms.E_max = fabs(ms.E_total);
        record(&ms, 1);
        sum.n_macro = n + 1;
    }
    sum.wall_time = hymo_now_seconds() - t0;
    long nrow = ms.rows.n;
    sum.t_reached = ms.rows.time[nrow - 1];
    sum.residual_energy_final = ms.rec_Et[nrow - 1];
    sum.residual_energy_max_abs = ms.E_max;
    sum.peak_drift = ms.mech->peak_drift;
    sum.max_work = ms.mech->max_work;
    sum.max_constraint_position = ms.mech->max_cpos;
    sum.mean_mech_iterations =
        sum.n_macro > 0 ? (double)(ms.mech->iterations_total - it0) / (double)ms.mech->step : 0.0;
    for (int k = 1; k < ms.nsub; ++k) {
        long steps, rhs, newton;
        hymo_hyd_sub_stats(hymo_cosim_hyd_sub(ms.nodes[k].sub), &steps, &rhs, &newton);
        sum.hyd_steps += steps;
        sum.hyd_rhs_evals += rhs;
    }
    if (ref) {
        hymo_reference run;
        memset(&run, 0, sizeof run);
        run.n = (int)nrow;
        run.nz = ms.rows.nz, run.np = ms.rows.np, run.nu = ms.rows.nu, run.na = ms.rows.na, run.ncut = ms.rows.ncut;
        run.time = ms.rows.time, run.z = ms.rows.z, run.zd = ms.rows.zd, run.s = ms.rows.s, run.sd = ms.rows.sd;
        run.p = ms.rows.p, run.u = ms.rows.u, run.force = ms.rows.force;
        run.has_cosim = 1;
        run.residual_energy_total = ms.rec_Et;
        st = hymo_compare_trajectories(ref, &run, &sum.errors, err);
        if (st != HYMO_OK) {
            master_free(&ms);
            return st;
        }
        sum.has_errors = 1;
    }
    if (out_path) st = write_output(&ms, out_path, &sum, err);
    master_free(&ms);
    if (summary) *summary = sum;
    return st;
}

void hymo_cosim_summary_print(FILE *out, const hymo_cosim_options *o, const hymo_cosim_summary *s)
{
    fprintf(out, "co-simulation  %s, %s, extrapolation %s\n", hymo_cosim_scheme_name(o->scheme),
            hymo_coupling_name(o->coupling), hymo_approx_name(o->approx));
    fprintf(out, "integrators    mechanics %s%s%s (h_m = %g s), hydraulics %s (h_h = %g s), H = %g s\n",
            hymo_mech_integrator_name(o->mech_integrator), o->mech_integrator == HYMO_MECH_TRAPEZOIDAL ? " " : "",
            o->mech_integrator == HYMO_MECH_TRAPEZOIDAL ? hymo_formulation_name(o->mech.formulation) : "", o->mech.dt,
            hymo_hyd_integrator_name(o->hyd_integrator), o->h_h, o->H);
    fprintf(out, "status         %s (%s)\n", s->stable ? "stable" : "UNSTABLE", s->reason);
    fprintf(out, "reached        t = %g s, %ld communication steps\n", s->t_reached, s->n_macro);
    fprintf(out, "residual       energy %.6g J at the end, max |E| %.6g J (%d bonds)\n", s->residual_energy_final,
            s->residual_energy_max_abs, s->n_bonds);
    fprintf(out, "energy balance peak |D| %.6g J of max |W_act| %.6g J\n", s->peak_drift, s->max_work);
    fprintf(out, "mechanics      mean Newton iterations %.3g per step, max |Phi| %.3g\n", s->mean_mech_iterations,
            s->max_constraint_position);
    fprintf(out, "hydraulics     %ld internal steps, %ld right-hand sides\n", s->hyd_steps, s->hyd_rhs_evals);
    if (s->has_errors) {
        const hymo_compare_result *e = &s->errors;
        fprintf(out, "vs reference   %d samples, t in [%g, %g] s\n", e->n_samples, e->t_start, e->t_end);
        for (int k = 0; k < HYMO_CMP_SIGNALS; ++k)
            fprintf(out, "  %-6s RMS %.4g  max %.4g %s\n", hymo_compare_signal_name(k), e->rms[k], e->max[k],
                    hymo_compare_signal_unit(NULL, k, 0));
    }
    fprintf(out, "wall time      %.3f s\n", s->wall_time);
}
