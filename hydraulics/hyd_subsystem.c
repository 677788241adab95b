/* Hydraulic subsystem of split-mode co-simulation (SPEC §7). */
#include "hyd_subsystem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/linalg.h"
#include "hymo/subsystem.h"

/* Finite-difference scales: eps_j = 1e-8 max(|y_j|, scale_j). */
#define HYD_FD_REL 1e-8
#define HYD_FD_SCALE_PRESSURE 1e5 /* Pa */
#define HYD_FD_SCALE_SPOOL 1.0    /* V  */
/* Newton: refresh the Jacobian when an increment shrinks by less than this. */
#define HYD_NEWTON_RATIO 0.25

typedef struct hyd_integrator_ops {
    const char *name;
    /* one internal step from t to t1 = t + h; on error the state is unchanged */
    hymo_status (*step)(hymo_hyd_sub *sub, double t, double t1, double h, hymo_error *err);
} hyd_integrator_ops;

struct hymo_hyd_sub {
    const hymo_model *model;
    const hymo_circuit *circ;
    hymo_circuit_part part; /* own copy */
    hymo_hyd_integrator_kind kind;
    const hyd_integrator_ops *ops;
    double h, tol_pressure, tol_spool;
    int max_iter;
    int n, nvol, nsp; /* n = nvol + nsp */
    int *spool;       /* nsp: spool state of each valve of the part */
    int *useg;        /* nsp: segment hint of each valve's U_ref (hymo_signal_eval_hint) */
    double *tol;      /* n: Newton increment tolerance per entry */
    double *fd_scale; /* n */
    double *y;        /* n: current state */
    /* full-size arrays: reported state, RHS scratch, inputs */
    double *p, *u;    /* np, nu: current state (part entries) */
    double *pw, *uw;  /* np, nu: RHS arguments */
    double *pdot, *udot;
    double *s, *sd;                   /* na */
    hymo_volume_cache vc;             /* the volume sizes at s, sd (rhs) */
    double *uref_a, *uref_m, *uref_b; /* nv (+ nin): step start (right), middle, end (left) */
    /* nin = n_pumps + n_flow_controls when a pump or
     * flow control valve has a signal (else 0): the uref arrays then carry
     * the pump speeds and set flows at the same time and side after the
     * valve references, and circ_in is the circuit pointed at them */
    int nin;
    hymo_circuit circ_in;
    /* uref_b was evaluated at t = b_t, left limit, snapped with b_h
     * (b_valid): a right limit at the same t and h takes its values where
     * both limits agree (hymo_signal_sides_agree) */
    double b_t, b_h;
    int b_valid;
    /* the part's pressure states are 0 .. np - 1 and its spool states 0 ..
     * nu - 1, in order, without TLM lines: y is p followed by u, f is pdot
     * followed by udot, and rhs evaluates on them in place */
    int in_place;
    double t0, *cs, *cv;              /* motion polynomials, 4 na each */
    double s_tau;                     /* s, sd hold the motion at this tau (s_valid) */
    int s_valid;
    /* trapezoidal history */
    double *f0, *fprev; /* n: f(t_k, y_k), f(t_{k-1}, y_{k-1}) */
    int hist;           /* 0: none, 1: f0, 2: f0 and fprev */
    int f0_stale;       /* a new motion polynomial arrived: f0 must be re-evaluated */
    double hist_h;      /* step size between fprev and f0 */
    double *jac;        /* n x n LU factors of I - h/2 df/dy */
    int *piv;
    int jac_valid;
    double jac_h; /* step size the factors were built for */
    /* work */
    double *k1, *k2, *k3, *k4, *yt, *y1, *yp, *dy, *f1, *fd;
    long steps, rhs_evals, newton_iters, jacobians;
    /* TLM lines (hymo_hyd_sub_tlm_add): per line the entry of y, the
     * pressure state, Z_c, the wave polynomial, and p_h, Q_h at the
     * current time; Newton work */
    int n_tlm;
    int *tlm_y, *tlm_state;
    double *tlm_zc, *tlm_coef, *tlm_p, *tlm_q;
    double *tlm_x, *tlm_r, *tlm_J, *tlm_dx, *tlm_xt, *tlm_rt;
    int *tlm_piv;
    double tlm_t0, tlm_T;
};

/* ------------------------------------------------------------------ */
/* Names                                                               */

const char *hymo_hyd_integrator_name(hymo_hyd_integrator_kind k)
{
    switch (k) {
    case HYMO_HYD_EULER: return "euler";
    case HYMO_HYD_RK4: return "rk4";
    case HYMO_HYD_TRAPEZOIDAL: return "trapezoidal";
    }
    return "?";
}

int hymo_hyd_integrator_parse(const char *name, hymo_hyd_integrator_kind *out)
{
    static const hymo_hyd_integrator_kind kinds[] = {HYMO_HYD_EULER, HYMO_HYD_RK4, HYMO_HYD_TRAPEZOIDAL};
    if (!name) return -1;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i)
        if (strcmp(name, hymo_hyd_integrator_name(kinds[i])) == 0) {
            if (out) *out = kinds[i];
            return 0;
        }
    return -1;
}

/* ------------------------------------------------------------------ */
/* Inputs                                                              */

static const hymo_signal *valve_signal(const hymo_model *model, int v)
{
    int s = model->valves[v].signal;
    return s >= 0 && s < model->n_signals ? &model->signals[s] : NULL;
}

/* U_ref of the part's valves. side: +1 right limit, -1 left limit, both
 * snapped to a breakpoint within 1e-6 h (hymo_signal_eval_snapped, as the
 * monolithic engine does); 0 plain value (stage times inside a step). */
static void eval_uref(hymo_hyd_sub *sub, double t, int side, double h, double *out)
{
    const int after_b = side == +1 && out != sub->uref_b && sub->b_valid && !sub->nin &&
                        !memcmp(&t, &sub->b_t, sizeof t) && !memcmp(&h, &sub->b_h, sizeof h);
    for (int i = 0; i < sub->part.n_valves; ++i) {
        const int v = sub->part.valves[i];
        const hymo_signal *sig = valve_signal(sub->model, v);
        if (after_b && hymo_signal_sides_agree(sig, t, h, sub->useg[i])) {
            out[v] = sub->uref_b[v];
            continue;
        }
        out[v] = side == 0 ? hymo_signal_eval_hint(sig, t, +1, 0.0, &sub->useg[i])
                           : hymo_signal_eval_hint(sig, t, side, h, &sub->useg[i]);
    }
    if (out == sub->uref_b) sub->b_valid = side == -1, sub->b_t = t, sub->b_h = h;
    if (sub->nin) { /* speeds and set flows at the same time and side */
        double *in = out + sub->model->n_valves;
        hymo_circuit_inputs(sub->model, t, side, side == 0 ? 0.0 : h, in, in + sub->model->n_pumps);
    }
}

/* The circuit to evaluate with the references uref of eval_uref: its pump
 * speeds and set flows are those after the valve references; the shared circuit without such signals. */
static const hymo_circuit *circ_at(hymo_hyd_sub *sub, const double *uref)
{
    if (!sub->nin) return sub->circ;
    sub->circ_in = *sub->circ;
    sub->circ_in.pump_speed = uref + sub->model->n_valves;
    sub->circ_in.fc_flow = uref + sub->model->n_valves + sub->model->n_pumps;
    return &sub->circ_in;
}

/* TLM boundaries (hymo_hyd_sub_tlm_add): with s, sd and pw, uw set from y,
 * solves p_l - c_l(t - T) - Z_c,l Q_l(p) = 0 for the lines' pressures by
 * Newton with a forward-difference Jacobian (warm start: y), Q_l = pdot_l C_l(p_l)
 * the net inflow the circuit gives the node (its cylinder's rate is zero).
 * Leaves pw, pdot, udot at the solution and tlm_p, tlm_q set; -1, or the
 * node of a non-positive volume (or of the line with the largest residual
 * when they did not converge, tlm_r[0] = NAN then). */
#define TLM_MAX_ITER 50
static int tlm_eval(hymo_hyd_sub *sub, const double *uref)
{
    ++sub->rhs_evals;
    return hymo_circuit_eval_part_node(circ_at(sub, uref), sub->model, &sub->part, sub->s, sub->sd, sub->pw, sub->uw, uref,
                                       sub->pdot, sub->udot, NULL);
}

/* r = x - c - Z_c Q(x) at x (pw, pdot, udot, tlm_p, tlm_q then belong to
 * x); *big = max |r_l| / 1e5 Pa (a merit that does not depend on x).  -1,
 * or a node as rhs. */
static int tlm_residual(hymo_hyd_sub *sub, const double *uref, double tau, const double *x, double *r, double *big)
{
    const int nl = sub->n_tlm;
    for (int l = 0; l < nl; ++l) sub->pw[sub->tlm_state[l]] = x[l];
    int bad = tlm_eval(sub, uref);
    if (bad >= 0) return bad;
    *big = 0.0;
    for (int l = 0; l < nl; ++l) {
        /* the net inflow: pdot times the node's compliance at x (= 1/W of
         * hymo_circuit_eval whatever the fluid law; sd = 0 here) */
        sub->tlm_q[l] = sub->pdot[sub->tlm_state[l]] *
                        hymo_tlm_compliance(sub->circ, sub->model, sub->circ->vol_node[sub->tlm_state[l]], sub->s,
                                            x[l]);
        sub->tlm_p[l] = x[l];
        r[l] = x[l] - hymo_poly_eval(&sub->tlm_coef[HYMO_POLY_TERMS * l], tau) - sub->tlm_zc[l] * sub->tlm_q[l];
        *big = fmax(*big, fabs(r[l]) / HYD_FD_SCALE_PRESSURE);
    }
    if (!isfinite(*big)) *big = HUGE_VAL;
    return -1;
}

/* Newton with a forward-difference Jacobian and step halving (the
 * residual is monotone in each pressure but has kinks: the orifices'
 * laminar transition, valve and relief branches). */
static int tlm_solve(hymo_hyd_sub *sub, double t, const double *uref, const double *y)
{
    const int nl = sub->n_tlm;
    double *x = sub->tlm_x, *r = sub->tlm_r, *J = sub->tlm_J, *dx = sub->tlm_dx, *xt = sub->tlm_xt,
           *rt = sub->tlm_rt;
    const double tau = t - sub->tlm_t0 - sub->tlm_T;
    for (int l = 0; l < nl; ++l) x[l] = y[sub->tlm_y[l]];
    double big, bigt;
    int bad = tlm_residual(sub, uref, tau, x, r, &big);
    if (bad >= 0) return bad;
    for (int it = 0; it < TLM_MAX_ITER && big < HUGE_VAL; ++it) {
        double xmax = 1.0; /* converged: |r| <= 1e-13 max(|x|, 1e5 Pa) */
        for (int l = 0; l < nl; ++l) xmax = fmax(xmax, fabs(x[l]) / HYD_FD_SCALE_PRESSURE);
        if (big <= 1e-13 * xmax) return -1; /* pw, pdot, udot are those of x */
        for (int m = 0; m < nl; ++m) { /* J[l, m] = d r_l / d x_m */
            const double xm = x[m], e = HYD_FD_REL * fmax(fabs(xm), HYD_FD_SCALE_PRESSURE);
            for (int l = 0; l < nl; ++l) xt[l] = x[l];
            xt[m] = xm + e;
            if ((bad = tlm_residual(sub, uref, tau, xt, rt, &bigt)) >= 0) return bad;
            for (int l = 0; l < nl; ++l) J[l * nl + m] = (rt[l] - r[l]) / e;
        }
        if (hymo_lu_factor(nl, J, sub->tlm_piv)) break;
        for (int l = 0; l < nl; ++l) dx[l] = r[l];
        hymo_lu_solve(nl, J, sub->tlm_piv, dx);
        int accepted = 0;
        for (double lambda = 1.0; lambda > 1e-6 && !accepted; lambda *= 0.5) {
            for (int l = 0; l < nl; ++l) xt[l] = x[l] - lambda * dx[l];
            if ((bad = tlm_residual(sub, uref, tau, xt, rt, &bigt)) >= 0) return bad;
            accepted = bigt < (1.0 - 0.25 * lambda) * big; /* a sufficient decrease: no cycling across a kink */
        }
        if (!accepted) { /* round-off: accept a converged-enough x */
            if (big <= 1e-10 * xmax && tlm_residual(sub, uref, tau, x, r, &big) < 0) return -1;
            break;
        }
        for (int l = 0; l < nl; ++l) {
            x[l] = xt[l];
            r[l] = rt[l];
        }
        big = bigt;
    }
    int worst = 0; /* name the line with the largest residual (NaN counts as largest) */
    for (int l = 1; l < nl; ++l)
        if (!(fabs(r[l]) <= fabs(r[worst]))) worst = l;
    r[0] = NAN;
    return sub->circ->vol_node[sub->tlm_state[worst]];
}

/* f(t, y) of the part; returns -1, or the node index of a non-positive volume. */
static int rhs(hymo_hyd_sub *sub, double t, const double *uref, const double *y, double *f)
{
    const hymo_circuit_part *pt = &sub->part;
    const double tau = t - sub->t0;
    if (!sub->s_valid || memcmp(&tau, &sub->s_tau, sizeof tau)) { /* the stages and iterations at one time: once */
        for (int i = 0; i < pt->n_cylinders + pt->n_motors; ++i) { /* motors are actuators nc + k */
            const int c = i < pt->n_cylinders ? pt->cylinders[i] : sub->model->n_cylinders + pt->motors[i - pt->n_cylinders];
            sub->s[c] = hymo_poly_eval(&sub->cs[HYMO_POLY_TERMS * c], tau);
            sub->sd[c] = hymo_poly_eval(&sub->cv[HYMO_POLY_TERMS * c], tau);
        }
        sub->s_tau = tau, sub->s_valid = 1;
    }
    if (sub->in_place && sub->n_tlm == 0) {
        ++sub->rhs_evals;
        return hymo_circuit_eval_part_cached(circ_at(sub, uref), sub->model, pt, sub->s, sub->sd, y, y + sub->nvol,
                                             uref, f, f + sub->nvol, NULL, &sub->vc);
    }
    for (int i = 0; i < sub->nvol; ++i) sub->pw[pt->volumes[i]] = y[i];
    for (int j = 0; j < sub->nsp; ++j) sub->uw[sub->spool[j]] = y[sub->nvol + j];
    int bad = sub->n_tlm > 0 ? tlm_solve(sub, t, uref, y)
                             : (++sub->rhs_evals, hymo_circuit_eval_part_cached(circ_at(sub, uref), sub->model, pt, sub->s,
                                                                               sub->sd, sub->pw, sub->uw, uref, sub->pdot,
                                                                               sub->udot, NULL, &sub->vc));
    if (bad >= 0) return bad;
    for (int i = 0; i < sub->nvol; ++i) f[i] = sub->pdot[pt->volumes[i]];
    for (int j = 0; j < sub->nsp; ++j) f[sub->nvol + j] = sub->udot[sub->spool[j]];
    for (int l = 0; l < sub->n_tlm; ++l) f[sub->tlm_y[l]] = 0.0; /* algebraic: no rate */
    return -1;
}

static hymo_status volume_error(const hymo_hyd_sub *sub, double t, int node, hymo_error *err)
{
    if (sub->n_tlm > 0 && isnan(sub->tlm_r[0]))
        return hymo_error_set(err, HYMO_ERR_CONVERGENCE,
                              "t = %.9g s: %s: TLM boundary pressure of volume %s did not converge in %d Newton "
                              "iterations",
                              t, sub->part.name, sub->model->nodes[node].name, TLM_MAX_ITER);
    return hymo_error_set(err, HYMO_ERR_NUMERIC,
                          "t = %.9g s: %s: volume %s became non-positive (piston beyond its stroke?)", t,
                          sub->part.name, sub->model->nodes[node].name);
}

/* Checks y for non-finite entries (naming the volume or valve). */
static hymo_status check_finite(const hymo_hyd_sub *sub, double t, const double *y, hymo_error *err)
{
    for (int i = 0; i < sub->n; ++i) {
        if (isfinite(y[i])) continue;
        if (i < sub->nvol)
            return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.9g s: %s: pressure of volume %s is not finite (%g)",
                                  t, sub->part.name, sub->model->nodes[sub->circ->vol_node[sub->part.volumes[i]]].name,
                                  y[i]);
        return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.9g s: %s: spool of valve %s is not finite (%g)", t,
                              sub->part.name, sub->model->valves[sub->part.valves[i - sub->nvol]].name, y[i]);
    }
    return HYMO_OK;
}

static void commit(hymo_hyd_sub *sub, const double *ynew)
{
    const hymo_circuit_part *pt = &sub->part;
    for (int i = 0; i < sub->n; ++i) sub->y[i] = ynew[i];
    for (int i = 0; i < sub->nvol; ++i) sub->p[pt->volumes[i]] = ynew[i];
    for (int j = 0; j < sub->nsp; ++j) sub->u[sub->spool[j]] = ynew[sub->nvol + j];
}

/* ------------------------------------------------------------------ */
/* Integrators                                                         */

static hymo_status euler_step(hymo_hyd_sub *sub, double t, double t1, double h, hymo_error *err)
{
    const int n = sub->n;
    eval_uref(sub, t, +1, h, sub->uref_a);
    int bad = rhs(sub, t, sub->uref_a, sub->y, sub->k1);
    if (bad >= 0) return volume_error(sub, t, bad, err);
    for (int i = 0; i < n; ++i) sub->yt[i] = sub->y[i] + h * sub->k1[i];
    hymo_status st = check_finite(sub, t1, sub->yt, err);
    if (st != HYMO_OK) return st;
    commit(sub, sub->yt);
    return HYMO_OK;
}

static hymo_status rk4_step(hymo_hyd_sub *sub, double t, double t1, double h, hymo_error *err)
{
    const int n = sub->n;
    const double tm = t + 0.5 * h;
    double *y = sub->y, *yt = sub->yt, *k1 = sub->k1, *k2 = sub->k2, *k3 = sub->k3, *k4 = sub->k4;
    eval_uref(sub, t, +1, h, sub->uref_a);
    eval_uref(sub, tm, 0, h, sub->uref_m);
    eval_uref(sub, t1, -1, h, sub->uref_b);
    int bad;
    if ((bad = rhs(sub, t, sub->uref_a, y, k1)) >= 0) return volume_error(sub, t, bad, err);
    for (int i = 0; i < n; ++i) yt[i] = y[i] + 0.5 * h * k1[i];
    if ((bad = rhs(sub, tm, sub->uref_m, yt, k2)) >= 0) return volume_error(sub, tm, bad, err);
    for (int i = 0; i < n; ++i) yt[i] = y[i] + 0.5 * h * k2[i];
    if ((bad = rhs(sub, tm, sub->uref_m, yt, k3)) >= 0) return volume_error(sub, tm, bad, err);
    for (int i = 0; i < n; ++i) yt[i] = y[i] + h * k3[i];
    if ((bad = rhs(sub, t1, sub->uref_b, yt, k4)) >= 0) return volume_error(sub, t1, bad, err);
    const double h6 = h / 6.0;
    for (int i = 0; i < n; ++i) yt[i] = y[i] + h6 * (k1[i] + 2.0 * (k2[i] + k3[i]) + k4[i]);
    hymo_status st = check_finite(sub, t1, yt, err);
    if (st != HYMO_OK) return st;
    commit(sub, yt);
    return HYMO_OK;
}

/* LU factors of I - h/2 df/dy at (t1, y1) with f1 = f(t1, y1), by forward
 * differences; y1 is restored exactly. */
static hymo_status trap_jacobian(hymo_hyd_sub *sub, double t1, double h, double *y1, const double *f1,
                                 hymo_error *err)
{
    const int n = sub->n;
    double *J = sub->jac;
    for (int j = 0; j < n; ++j) {
        const double yj = y1[j];
        y1[j] = yj + HYD_FD_REL * fmax(fabs(yj), sub->fd_scale[j]);
        const double e = y1[j] - yj; /* the increment actually taken */
        int bad = rhs(sub, t1, sub->uref_b, y1, sub->fd);
        y1[j] = yj;
        if (bad >= 0) return volume_error(sub, t1, bad, err);
        for (int i = 0; i < n; ++i) J[i * n + j] = (i == j ? 1.0 : 0.0) - 0.5 * h * (sub->fd[i] - f1[i]) / e;
    }
    ++sub->jacobians;
    if (hymo_lu_factor(n, J, sub->piv)) {
        sub->jac_valid = 0;
        return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.9g s: %s: singular trapezoidal Jacobian", t1,
                              sub->part.name);
    }
    sub->jac_valid = 1;
    sub->jac_h = h;
    return HYMO_OK;
}

static hymo_status trap_step(hymo_hyd_sub *sub, double t, double t1, double h, hymo_error *err)
{
    const int n = sub->n, nvol = sub->nvol;
    double *y0 = sub->y, *f0 = sub->f0, *y1 = sub->y1, *yp = sub->yp, *dy = sub->dy, *f1 = sub->f1;
    int bad;
    hymo_status st;
    eval_uref(sub, t, +1, h, sub->uref_a);
    /* f0 holds the pressure rates of the previous
     * step's end, with its (left-limit) pump speeds and set flows, still in
     * uref_b: where one jumps at t, f0 is re-evaluated with the right limit */
    int input_jump = 0;
    for (int i = sub->model->n_valves; i < sub->model->n_valves + sub->nin; ++i)
        input_jump |= sub->uref_a[i] != sub->uref_b[i];
    eval_uref(sub, t1, -1, h, sub->uref_b);
    if (sub->hist == 0 || sub->f0_stale || input_jump) {
        /* first step, or the motion input jumped at a communication point:
         * the trapezoidal rule needs f at the start with the new input */
        if ((bad = rhs(sub, t, sub->uref_a, y0, f0)) >= 0) return volume_error(sub, t, bad, err);
        if (sub->hist == 0) sub->hist = 1;
        sub->f0_stale = 0;
    } else {
        /* f0 = f(t, y0) stored by the previous step; its spool rows used the
         * left limit of U_ref at t: take the right limit (SPEC §3) */
        for (int j = 0; j < sub->nsp; ++j) {
            const int v = sub->part.valves[j];
            f0[nvol + j] = (sub->uref_a[v] - y0[nvol + j]) / sub->model->valves[v].tau;
        }
    }
    /* predictor: explicit Adams-Bashforth 2 when the history allows, else Euler */
    if (sub->hist >= 2 && sub->hist_h == h)
        for (int i = 0; i < n; ++i) yp[i] = y0[i] + h * (1.5 * f0[i] - 0.5 * sub->fprev[i]);
    else
        for (int i = 0; i < n; ++i) yp[i] = y0[i] + h * f0[i];
    if (sub->jac_valid && sub->jac_h != h) sub->jac_valid = 0;

    int converged = 0;
    for (int attempt = 0; attempt < 2 && !converged; ++attempt) {
        int fresh = 0;
        double prev = HUGE_VAL;
        memcpy(y1, yp, (size_t)n * sizeof(double));
        for (int it = 0; it < sub->max_iter; ++it) {
            if ((bad = rhs(sub, t1, sub->uref_b, y1, f1)) >= 0) return volume_error(sub, t1, bad, err);
            ++sub->newton_iters;
            if (!sub->jac_valid) {
                if ((st = trap_jacobian(sub, t1, h, y1, f1, err)) != HYMO_OK) return st;
                fresh = 1;
            }
            for (int i = 0; i < n; ++i) dy[i] = -(y1[i] - y0[i] - 0.5 * h * (f0[i] + f1[i]));
            hymo_lu_solve(n, sub->jac, sub->piv, dy);
            double nrm = 0.0;
            for (int i = 0; i < n; ++i) {
                double r = fabs(dy[i]) / sub->tol[i];
                nrm = r > nrm ? r : nrm;
                y1[i] += dy[i];
            }
            if (!isfinite(nrm)) break;
            if (nrm <= 1.0) {
                converged = 1;
                break;
            }
            /* slow contraction: refresh the Jacobian once per attempt */
            if (nrm > HYD_NEWTON_RATIO * prev && !fresh) sub->jac_valid = 0;
            prev = nrm;
        }
        if (!converged) {
            if (fresh) break;   /* a fresh Jacobian did not help either */
            sub->jac_valid = 0; /* retry from the predictor with a fresh one */
        }
    }
    if (!converged) {
        sub->jac_valid = 0;
        return hymo_error_set(err, HYMO_ERR_CONVERGENCE,
                              "t = %.9g s: %s: trapezoidal Newton did not converge in %d iterations "
                              "(tolerances %g Pa, %g V)",
                              t1, sub->part.name, sub->max_iter, sub->tol_pressure, sub->tol_spool);
    }
    if ((st = check_finite(sub, t1, y1, err)) != HYMO_OK) return st;
    /* f(t1, y1) at the accepted state: the next step's f0 */
    if ((bad = rhs(sub, t1, sub->uref_b, y1, f1)) >= 0) return volume_error(sub, t1, bad, err);
    for (int i = 0; i < n; ++i) {
        sub->fprev[i] = f0[i];
        f0[i] = f1[i];
    }
    sub->hist = 2;
    sub->hist_h = h;
    commit(sub, y1);
    return HYMO_OK;
}

static const hyd_integrator_ops hyd_ops[] = {
    [HYMO_HYD_EULER] = {.name = "euler", .step = euler_step},
    [HYMO_HYD_RK4] = {.name = "rk4", .step = rk4_step},
    [HYMO_HYD_TRAPEZOIDAL] = {.name = "trapezoidal", .step = trap_step},
};

/* ------------------------------------------------------------------ */
/* Life cycle                                                          */

static double *new_doubles(int n)
{
    return calloc((size_t)(n > 0 ? n : 1), sizeof(double));
}

void hymo_hyd_sub_free(hymo_hyd_sub *sub)
{
    if (!sub) return;
    hymo_circuit_part_free(&sub->part);
    free(sub->spool);
    free(sub->useg);
    hymo_volume_cache_free(&sub->vc);
    double *arrays[] = {sub->tol, sub->fd_scale, sub->y, sub->p, sub->u, sub->pw, sub->uw, sub->pdot, sub->udot,
                        sub->s, sub->sd, sub->uref_a, sub->uref_m, sub->uref_b, sub->cs, sub->cv, sub->f0,
                        sub->fprev, sub->jac, sub->k1, sub->k2, sub->k3, sub->k4, sub->yt, sub->y1, sub->yp,
                        sub->dy, sub->f1, sub->fd};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; ++i) free(arrays[i]);
    free(sub->piv);
    double *tlm[] = {sub->tlm_zc, sub->tlm_coef, sub->tlm_p, sub->tlm_q, sub->tlm_x, sub->tlm_r, sub->tlm_J,
                     sub->tlm_dx, sub->tlm_xt, sub->tlm_rt};
    for (size_t i = 0; i < sizeof tlm / sizeof tlm[0]; ++i) free(tlm[i]);
    free(sub->tlm_y);
    free(sub->tlm_state);
    free(sub->tlm_piv);
    free(sub);
}

hymo_status hymo_hyd_sub_create(const hymo_model *model, const hymo_circuit *circ, const hymo_circuit_part *part,
                                hymo_hyd_integrator_kind kind, double h, double tol_pressure, double tol_spool,
                                int max_iter, const double *p0, const double *u0, hymo_hyd_sub **out,
                                hymo_error *err)
{
    *out = NULL;
    if ((int)kind < 0 || (size_t)kind >= sizeof hyd_ops / sizeof hyd_ops[0])
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hydraulic subsystem: unknown integrator %d", (int)kind);
    if (!(h > 0.0) || !isfinite(h))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: hydraulic step h = %g s must be positive", part->name, h);
    if (kind == HYMO_HYD_TRAPEZOIDAL && (!(tol_pressure > 0.0) || !(tol_spool > 0.0) || max_iter < 1))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "%s: trapezoidal hydraulics needs positive tolerances (pressure %g Pa, spool "
                              "%g V) and max_iter >= 1 (%d)",
                              part->name, tol_pressure, tol_spool, max_iter);
    hymo_hyd_sub *sub = calloc(1, sizeof *sub);
    if (!sub) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (hydraulic subsystem)");
    sub->model = model;
    sub->circ = circ;
    sub->kind = kind;
    sub->ops = &hyd_ops[kind];
    sub->h = h;
    sub->tol_pressure = tol_pressure;
    sub->tol_spool = tol_spool;
    sub->max_iter = max_iter;
    const int part_copied = hymo_circuit_part_copy(&sub->part, part) == 0; /* its own lists: freed with it */
    sub->nvol = part->n_volumes;
    sub->nsp = part->n_valves;
    const int n = sub->n = sub->nvol + sub->nsp;
    const int np = model->n_volumes, nu = model->n_valves, na = hymo_coupled_actuators(model), nv = model->n_valves;
    sub->spool = malloc((size_t)(sub->nsp > 0 ? sub->nsp : 1) * sizeof(int));
    sub->useg = malloc((size_t)(sub->nsp > 0 ? sub->nsp : 1) * sizeof(int));
    sub->piv = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    sub->tol = new_doubles(n);
    sub->fd_scale = new_doubles(n);
    sub->y = new_doubles(n);
    sub->p = new_doubles(np);
    sub->u = new_doubles(nu);
    sub->pw = new_doubles(np);
    sub->uw = new_doubles(nu);
    sub->pdot = new_doubles(np);
    sub->udot = new_doubles(nu);
    sub->s = new_doubles(na);
    sub->sd = new_doubles(na);
    sub->nin = hymo_circuit_has_inputs(model) ? model->n_pumps + model->n_flow_controls : 0;
    sub->uref_a = new_doubles(nv + sub->nin);
    sub->uref_m = new_doubles(nv + sub->nin);
    sub->uref_b = new_doubles(nv + sub->nin);
    sub->cs = new_doubles(HYMO_POLY_TERMS * na);
    sub->cv = new_doubles(HYMO_POLY_TERMS * na);
    sub->f0 = new_doubles(n);
    sub->fprev = new_doubles(n);
    sub->jac = new_doubles(n * n);
    sub->k1 = new_doubles(n);
    sub->k2 = new_doubles(n);
    sub->k3 = new_doubles(n);
    sub->k4 = new_doubles(n);
    sub->yt = new_doubles(n);
    sub->y1 = new_doubles(n);
    sub->yp = new_doubles(n);
    sub->dy = new_doubles(n);
    sub->f1 = new_doubles(n);
    sub->fd = new_doubles(n);
    const int vc_ok = hymo_volume_cache_init(&sub->vc, circ, model) == 0;
    if (!part_copied || !vc_ok || !sub->spool || !sub->useg ||
        !sub->piv || !sub->tol || !sub->fd_scale || !sub->y || !sub->p || !sub->u || !sub->pw || !sub->uw ||
        !sub->pdot || !sub->udot || !sub->s || !sub->sd || !sub->uref_a || !sub->uref_m || !sub->uref_b ||
        !sub->cs || !sub->cv || !sub->f0 || !sub->fprev || !sub->jac || !sub->k1 || !sub->k2 || !sub->k3 ||
        !sub->k4 || !sub->yt || !sub->y1 || !sub->yp || !sub->dy || !sub->f1 || !sub->fd) {
        hymo_hyd_sub_free(sub);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (hydraulic subsystem)");
    }
    for (int j = 0; j < sub->nsp; ++j) sub->spool[j] = model->valves[part->valves[j]].state, sub->useg[j] = -1;
    sub->in_place = sub->nvol == np && sub->nsp == nu;
    for (int i = 0; i < sub->nvol; ++i) sub->in_place &= part->volumes[i] == i;
    for (int j = 0; j < sub->nsp; ++j) sub->in_place &= sub->spool[j] == j;
    for (int i = 0; i < n; ++i) {
        const int is_p = i < sub->nvol;
        sub->tol[i] = is_p ? tol_pressure : tol_spool;
        sub->fd_scale[i] = is_p ? HYD_FD_SCALE_PRESSURE : HYD_FD_SCALE_SPOOL;
        if (kind != HYMO_HYD_TRAPEZOIDAL && !(sub->tol[i] > 0.0)) sub->tol[i] = 1.0; /* unused */
    }
    memcpy(sub->p, p0, (size_t)np * sizeof(double));
    memcpy(sub->u, u0, (size_t)nu * sizeof(double));
    memcpy(sub->pw, p0, (size_t)np * sizeof(double));
    memcpy(sub->uw, u0, (size_t)nu * sizeof(double));
    for (int i = 0; i < sub->nvol; ++i) sub->y[i] = p0[part->volumes[i]];
    for (int j = 0; j < sub->nsp; ++j) sub->y[sub->nvol + j] = u0[sub->spool[j]];
    for (int c = 0; c < model->n_cylinders; ++c) { /* at rest at s0 until the first set_motion (motors at 0) */
        sub->cs[HYMO_POLY_TERMS * c] = circ->s0[c];
        sub->s[c] = circ->s0[c];
    }
    hymo_status st = check_finite(sub, 0.0, sub->y, err);
    if (st != HYMO_OK) {
        hymo_hyd_sub_free(sub);
        return st;
    }
    *out = sub;
    return HYMO_OK;
}

/* ------------------------------------------------------------------ */
/* Stepping and access                                                 */

void hymo_hyd_sub_set_motion(hymo_hyd_sub *sub, double t0, const double *cs, const double *cv)
{
    sub->t0 = t0;
    sub->f0_stale = 1;
    sub->s_valid = 0;
    const hymo_circuit_part *pt = &sub->part;
    for (int i = 0; i < pt->n_cylinders + pt->n_motors; ++i) { /* motors are actuators nc + k */
        const int c = i < pt->n_cylinders ? pt->cylinders[i] : sub->model->n_cylinders + pt->motors[i - pt->n_cylinders];
        for (int k = HYMO_POLY_TERMS * c; k < HYMO_POLY_TERMS * (c + 1); ++k) sub->cs[k] = cs[k], sub->cv[k] = cv[k];
    }
}

hymo_status hymo_hyd_sub_do_step(hymo_hyd_sub *sub, double t, double H, hymo_error *err)
{
    const double h = sub->h;
    if (!(H > 0.0) || !isfinite(H) || !isfinite(t))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "t = %.9g s: %s: communication step H = %g s must be positive",
                              t, sub->part.name, H);
    const long N = hymo_hyd_sub_steps(H, h);
    if (N == 0)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "t = %.9g s: %s: communication step H = %.9g s is more than 1e9 "
                              "hydraulic steps h = %.9g s", t, sub->part.name, H, h);
    const double hh = H / (double)N;
    for (long i = 0; i < N; ++i) {
        const double ti = t + (double)i * hh, t1 = i + 1 == N ? t + H : t + (double)(i + 1) * hh;
        hymo_status st = sub->ops->step(sub, ti, t1, hh, err);
        if (st != HYMO_OK) return st;
        ++sub->steps;
    }
    if (sub->n_tlm > 0) { /* the lines' p_h, Q_h at t + H, kept in y as the next warm start */
        eval_uref(sub, t + H, -1, hh, sub->uref_b);
        int bad = rhs(sub, t + H, sub->uref_b, sub->y, sub->fd);
        if (bad >= 0) return volume_error(sub, t + H, bad, err);
        for (int l = 0; l < sub->n_tlm; ++l) sub->y[sub->tlm_y[l]] = sub->tlm_p[l];
        commit(sub, sub->y);
    }
    return HYMO_OK;
}

/* ------------------------------------------------------------------ */
/* TLM lines                                                           */

double hymo_tlm_compliance(const hymo_circuit *circ, const hymo_model *model, int node, const double *s, double p)
{
    const hymo_node *nd = &model->nodes[node];
    if (nd->kind != HYMO_NODE_VOLUME) return 0.0;
    double V = 0.0, compl_sum = 0.0;
    for (int q = 0; q < nd->n_parts; ++q) {
        const hymo_subvolume *sv = &model->subvolumes[nd->first_part + q];
        double dV_ds, Vs = hymo_subvolume_size(circ, model, sv, s, &dV_ds);
        V += Vs;
        compl_sum += Vs / sv->bulk_modulus;
    }
    double C = hymo_fluid_law_of(model)->compliance(model, V, p) + compl_sum;
    if (model->n_accumulators > 0) {
        double dA;
        C += hymo_accumulator_compliance(circ, model, node, p, &dA);
    }
    return C;
}

double hymo_tlm_impedance(const hymo_circuit *circ, const hymo_model *model, int node, const double *s, double p,
                          double T)
{
    hymo_circuit c = *circ; /* the accumulators' branch from p alone, as at the other end */
    c.sw = NULL;
    /* never at or below the fluid's floor, where the law's continuation
     * would give a non-positive C (an active line); 1 Pa above it the line
     * is as soft as the law allows (not reached in the shipped models:
     * the lowest line pressure is 0.10 MPa) */
    const double p_min = hymo_fluid_floor(model) + 1.0;
    return T / hymo_tlm_compliance(&c, model, node, s, p > p_min ? p : p_min);
}

int hymo_hyd_sub_tlm_count(const hymo_hyd_sub *sub) { return sub->n_tlm; }

hymo_status hymo_hyd_sub_tlm_add(hymo_hyd_sub *sub, int node, hymo_error *err)
{
    const hymo_node *nd = &sub->model->nodes[node];
    int iy = -1;
    for (int i = 0; nd->kind == HYMO_NODE_VOLUME && i < sub->nvol; ++i)
        if (sub->part.volumes[i] == nd->state) iy = i;
    if (iy < 0)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: TLM line at node %s, which is not a volume of the circuit",
                              sub->part.name, nd->name);
    const int n = sub->n_tlm + 1;
#define GROW(ptr, count)                                                                            \
    do {                                                                                            \
        void *q_ = realloc((ptr), (size_t)(count) * sizeof *(ptr));                                 \
        if (!q_) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (TLM line)");             \
        (ptr) = q_;                                                                                 \
    } while (0)
    GROW(sub->tlm_y, n);
    GROW(sub->tlm_state, n);
    GROW(sub->tlm_piv, n);
    GROW(sub->tlm_zc, n);
    GROW(sub->tlm_coef, HYMO_POLY_TERMS * n);
    GROW(sub->tlm_p, n);
    GROW(sub->tlm_q, n);
    GROW(sub->tlm_x, n);
    GROW(sub->tlm_r, n);
    GROW(sub->tlm_J, n * n);
    GROW(sub->tlm_dx, n);
    GROW(sub->tlm_xt, n);
    GROW(sub->tlm_rt, n);
#undef GROW
    const int l = sub->n_tlm;
    sub->tlm_y[l] = iy;
    sub->tlm_state[l] = nd->state;
    sub->tlm_zc[l] = 0.0;
    memset(&sub->tlm_coef[HYMO_POLY_TERMS * l], 0, HYMO_POLY_TERMS * sizeof(double));
    sub->tlm_coef[HYMO_POLY_TERMS * l] = sub->y[iy]; /* at rest: the wave is the initial pressure */
    sub->tlm_p[l] = sub->y[iy];
    sub->tlm_q[l] = 0.0;
    sub->tlm_r[l] = 0.0;
    sub->n_tlm = n;
    return HYMO_OK;
}

void hymo_hyd_sub_tlm_set(hymo_hyd_sub *sub, double t0, double T, const double *zc, const double *c_coef)
{
    sub->tlm_t0 = t0;
    sub->tlm_T = T;
    sub->f0_stale = 1;
    sub->s_valid = 0;
    for (int i = 0; i < sub->part.n_cylinders; ++i) { /* the motion's s at its t0 */
        const int c = sub->part.cylinders[i];
        sub->s[c] = sub->cs[HYMO_POLY_TERMS * c];
    }
    /* the cylinders stand still in the hydraulics (set_motion): s at the step start */
    for (int l = 0; l < sub->n_tlm; ++l) sub->tlm_zc[l] = zc[l];
    memcpy(sub->tlm_coef, c_coef, (size_t)(HYMO_POLY_TERMS * sub->n_tlm) * sizeof(double));
}

void hymo_hyd_sub_tlm_end(const hymo_hyd_sub *sub, int line, double *p, double *q)
{
    *p = sub->tlm_p[line];
    *q = sub->tlm_q[line];
}

const double *hymo_hyd_sub_p(const hymo_hyd_sub *sub) { return sub->p; }
const double *hymo_hyd_sub_u(const hymo_hyd_sub *sub) { return sub->u; }
const hymo_circuit_part *hymo_hyd_sub_part(const hymo_hyd_sub *sub) { return &sub->part; }
hymo_hyd_integrator_kind hymo_hyd_sub_kind(const hymo_hyd_sub *sub) { return sub->kind; }
long hymo_hyd_sub_jacobians(const hymo_hyd_sub *sub) { return sub->jacobians; }

void hymo_hyd_sub_force(const hymo_hyd_sub *sub, double t, double *force)
{
    const double tau = t - sub->t0;
    for (int i = 0; i < sub->part.n_cylinders; ++i) {
        const int c = sub->part.cylinders[i];
        const double s = hymo_poly_eval(&sub->cs[HYMO_POLY_TERMS * c], tau);
        const double sd = hymo_poly_eval(&sub->cv[HYMO_POLY_TERMS * c], tau);
        force[c] = hymo_cylinder_force(sub->model, sub->circ, c, s, sd, sub->p);
    }
    for (int i = 0; i < sub->part.n_motors; ++i) { /* the torque at the joint rate w */
        const int k = sub->part.motors[i], a = sub->model->n_cylinders + k;
        const double w = hymo_poly_eval(&sub->cv[HYMO_POLY_TERMS * a], tau);
        double dT_ddp, dT_dw;
        force[a] = hymo_motor_torque_d(sub->model, k, w, sub->p, &dT_ddp, &dT_dw);
    }
}

int hymo_hyd_sub_n(const hymo_hyd_sub *sub) { return sub->n; }

void hymo_hyd_sub_y(const hymo_hyd_sub *sub, double *y) { memcpy(y, sub->y, (size_t)sub->n * sizeof(double)); }

void hymo_hyd_sub_put_y(hymo_hyd_sub *sub, const double *y)
{
    commit(sub, y);
    sub->f0_stale = 1;
}

void hymo_hyd_sub_put_full(hymo_hyd_sub *sub, const double *p, const double *u)
{
    for (int i = 0; i < sub->nvol; ++i) sub->yt[i] = p[sub->part.volumes[i]];
    for (int j = 0; j < sub->nsp; ++j) sub->yt[sub->nvol + j] = u[sub->spool[j]];
    hymo_hyd_sub_put_y(sub, sub->yt);
}

/* State layout: y[n]; trapezoidal also f0[n], fprev[n], hist, hist_h,
 * jac_valid, jac_h, LU[n n], piv[n]. */
int hymo_hyd_sub_state_size(const hymo_hyd_sub *sub)
{
    const int n = sub->n;
    return sub->kind == HYMO_HYD_TRAPEZOIDAL ? 3 * n + 4 + n * n + n : n;
}

void hymo_hyd_sub_get_state(const hymo_hyd_sub *sub, double *buf)
{
    const int n = sub->n;
    memcpy(buf, sub->y, (size_t)n * sizeof(double));
    if (sub->kind != HYMO_HYD_TRAPEZOIDAL) return;
    double *b = buf + n;
    memcpy(b, sub->f0, (size_t)n * sizeof(double));
    memcpy(b + n, sub->fprev, (size_t)n * sizeof(double));
    b += 2 * n;
    b[0] = (double)sub->hist;
    b[1] = sub->hist_h;
    b[2] = (double)sub->jac_valid;
    b[3] = sub->jac_h;
    b += 4;
    memcpy(b, sub->jac, (size_t)(n * n) * sizeof(double));
    b += n * n;
    for (int i = 0; i < n; ++i) b[i] = (double)sub->piv[i];
}

void hymo_hyd_sub_set_state(hymo_hyd_sub *sub, const double *buf)
{
    const int n = sub->n;
    commit(sub, buf);
    if (sub->kind != HYMO_HYD_TRAPEZOIDAL) return;
    const double *b = buf + n;
    memcpy(sub->f0, b, (size_t)n * sizeof(double));
    memcpy(sub->fprev, b + n, (size_t)n * sizeof(double));
    /* uref_b (whose pump speeds and set flows the jump
     * test compares) is not part of the state: the next step evaluates f0
     * afresh, with the right limit of the inputs */
    if (sub->nin) sub->f0_stale = 1;
    b += 2 * n;
    sub->hist = (int)b[0];
    sub->hist_h = b[1];
    sub->jac_valid = (int)b[2];
    sub->jac_h = b[3];
    b += 4;
    memcpy(sub->jac, b, (size_t)(n * n) * sizeof(double));
    b += n * n;
    for (int i = 0; i < n; ++i) sub->piv[i] = (int)b[i];
}

void hymo_hyd_sub_stats(const hymo_hyd_sub *sub, long *steps, long *rhs_evals, long *newton_iters)
{
    if (steps) *steps = sub->steps;
    if (rhs_evals) *rhs_evals = sub->rhs_evals;
    if (newton_iters) *newton_iters = sub->newton_iters;
}
