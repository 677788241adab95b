/* Analytic derivatives of the circuit equations (hymo_circuit_derivatives)
 * against central finite differences of hymo_circuit_eval:
 *
 *   1. every entry of every derivative array, at 2000 random physical
 *      states per shipped model (turbulent and laminar orifices, U = 0,
 *      small |U|, both valve directions, end-damper zones, sd = 0 and
 *      |sd| ~ v_s); a column whose stencil straddles a kink is skipped;
 *   2. hand-computed values (laminar throttle, valve opening, eta = 1
 *      piston area, seal friction, end damper, chamber volume rate);
 *   3. at points exactly on a kink (|dp| = p_tr of a throttle and a valve
 *      edge, U = 0, fp = 0, damper entries) the derivative is the one-sided
 *      one of the branch hymo_circuit_eval takes there;
 *   4. want_pdot = 0 writes only dF_*, a non-positive volume returns -1.
 *
 * Prints, per model and array, the largest relative error (over entries
 * well above the finite-difference round-off level), the largest
 * |error| / tolerance (all entries) and the skipped fraction. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit.h"
#include "hymo/sim.h"
#include "test_util.h"

#define MAXP 8
#define MAXU 4
#define MAXA 4
#define MAXSIG 64
#define EPS 2.220446049250313e-16

static const char *const model_files[4] = {"fourbar.yaml", "quickreturn.yaml", "crane1.yaml", "crane2.yaml"};

typedef struct {
    hymo_model *m;
    hymo_circuit circ;
    hymo_circuit_derivs d;
    int np, nu, na;
    double s0[MAXA];
} setup;

static void open_model(setup *ms, const char *file)
{
    hymo_error err;
    ms->m = test_load_model(file);
    /* s0 from the assembled initial configuration (as the engine does) */
    hymo_run_options opt;
    hymo_run_options_default(&opt, ms->m);
    hymo_sim *sim = NULL;
    if (hymo_sim_create(ms->m, &opt, &sim, &err) != HYMO_OK) fail_msg("%s: %s", file, err.message);
    ms->np = ms->m->n_volumes;
    ms->nu = ms->m->n_valves;
    ms->na = ms->m->n_cylinders;
    assert_true(ms->np <= MAXP && ms->nu <= MAXU && ms->na <= MAXA && ms->na >= 1);
    memcpy(ms->s0, hymo_sim_actuator_length(sim), (size_t)ms->na * sizeof(double));
    hymo_sim_free(sim);
    assert_int_equal(hymo_circuit_init(&ms->circ, ms->m, ms->s0, &err), HYMO_OK);
    assert_int_equal(hymo_circuit_derivs_alloc(&ms->d, ms->m, ms->np, ms->nu, ms->na, &err), HYMO_OK);
}

static void close_model(setup *ms)
{
    hymo_circuit_derivs_free(&ms->d);
    hymo_circuit_free(&ms->circ);
    hymo_model_free(ms->m);
}

/* f = (pdot[np], F[na]); returns hymo_circuit_eval's status */
static int eval_f(const setup *ms, const double *s, const double *sd, const double *p, const double *u, double *f)
{
    return hymo_circuit_eval(&ms->circ, ms->m, s, sd, p, u, NULL, f, NULL, f + ms->np);
}

/* ------------------------------------------------------------------ */
/* Branches, re-derived here from the model equations (SPEC §2)        */

static int orifice_region(double dp, double p_tr)
{
    return dp >= p_tr ? 1 : dp <= -p_tr ? -1 : 0;
}

/* Which smooth piece of every kinked term the point lies on. Along a
 * coordinate line each piece is an interval (dp, fp, l are affine in p or s;
 * U is a coordinate), so equal signatures at x - h, x and x + h mean the
 * whole stencil lies on one smooth piece. Returns the signature length. */
static int signature(const setup *ms, const double *s, const double *p, const double *u, int *sig)
{
    const hymo_model *m = ms->m;
    const double p_tr = m->fluid.p_transition;
    int n = 0;
#define DP(a, b) (hymo_node_pressure(m, (a), p) - hymo_node_pressure(m, (b), p))
    for (int t = 0; t < m->n_throttles; ++t)
        sig[n++] = orifice_region(DP(m->throttles[t].node_a, m->throttles[t].node_b), p_tr);
    for (int v = 0; v < m->n_valves; ++v) {
        const hymo_valve *va = &m->valves[v];
        const int pos = u[va->state] >= 0.0;
        sig[n++] = pos;
        sig[n++] = pos ? orifice_region(DP(va->port_P, va->port_A), p_tr) : orifice_region(DP(va->port_A, va->port_T), p_tr);
        sig[n++] = pos ? orifice_region(DP(va->port_B, va->port_T), p_tr) : orifice_region(DP(va->port_P, va->port_B), p_tr);
    }
#undef DP
    for (int a = 0; a < m->n_cylinders; ++a) {
        const hymo_cylinder *cy = &m->cylinders[a];
        double fp = hymo_node_pressure(m, cy->node_piston, p) * cy->piston_area -
                    hymo_node_pressure(m, cy->node_rod, p) * cy->rod_side_area;
        sig[n++] = fp >= 0.0;
        double lp, lr;
        hymo_cylinder_lengths(&ms->circ, a, s[a], &lp, &lr);
        sig[n++] = !cy->has_damper ? 0 : lp <= cy->damper_length ? 1 : lr <= cy->damper_length ? 2 : 0;
    }
    assert_true(n <= MAXSIG);
    return n;
}

static int same_branch(const setup *ms, const double *s, const double *p, const double *u, const int *sig0, int n0)
{
    int sig[MAXSIG];
    int n = signature(ms, s, p, u, sig);
    return n == n0 && memcmp(sig, sig0, (size_t)n * sizeof(int)) == 0;
}

/* ------------------------------------------------------------------ */
/* Random physical states                                              */

static double lcg_uniform(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*x >> 11) / 9007199254740992.0;
}

static double clampd(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* pump / tank pressure (first two sources found) for the laminar samples */
static void source_pressures(const hymo_model *m, double *hi, double *lo)
{
    *hi = 0.0;
    *lo = 1e30;
    for (int k = 0; k < m->n_nodes; ++k)
        if (m->nodes[k].kind == HYMO_NODE_SOURCE) {
            if (m->nodes[k].pressure > *hi) *hi = m->nodes[k].pressure;
            if (m->nodes[k].pressure < *lo) *lo = m->nodes[k].pressure;
        }
}

static void sample_state(const setup *ms, uint64_t *seed, int trial, double *s, double *sd, double *p, double *u)
{
    const hymo_model *m = ms->m;
    const double p_tr = m->fluid.p_transition, P_LO = 0.15e6, P_HI = 8.0e6;
    for (int a = 0; a < ms->na; ++a) {
        const hymo_cylinder *cy = &m->cylinders[a];
        const double lp0 = ms->circ.l_pist0[a], stroke = lp0 + ms->circ.l_rod0[a];
        double l; /* chamber length measured from one end, >= 0.5 mm */
        if (trial % 4 == 0) { /* near an end: within / just outside the damper (or 10 mm) */
            double zone = cy->has_damper ? 2.0 * cy->damper_length : 0.01;
            l = 0.5e-3 + zone * lcg_uniform(seed);
        } else {
            l = 0.5e-3 + (stroke - 1e-3) * lcg_uniform(seed);
        }
        double lp = lcg_uniform(seed) < 0.5 ? l : stroke - l;
        s[a] = ms->s0[a] - lp0 + lp;
        switch (trial % 7) {
        case 0: sd[a] = 0.0; break;
        case 1: sd[a] = 3.0 * cy->friction_velocity * (2.0 * lcg_uniform(seed) - 1.0); break;
        default: sd[a] = 0.5 * (2.0 * lcg_uniform(seed) - 1.0);
        }
    }
    double pump, tank;
    source_pressures(m, &pump, &tank);
    const int mode = trial % 3;
    for (int k = 0; k < ms->np; ++k) {
        double x;
        if (mode == 0 || (mode == 1 && k == 0)) {
            x = 0.2e6 + 7.8e6 * lcg_uniform(seed);
        } else if (mode == 1) { /* within +-1.2 p_tr of the previous volume: laminar throttles */
            x = p[k - 1] + 1.2 * p_tr * (2.0 * lcg_uniform(seed) - 1.0);
        } else { /* within +-1.2 p_tr of pump or tank: laminar valve edges */
            x = (lcg_uniform(seed) < 0.5 ? pump : tank) + 1.2 * p_tr * (2.0 * lcg_uniform(seed) - 1.0);
        }
        p[k] = clampd(x, P_LO, P_HI);
    }
    for (int v = 0; v < ms->nu; ++v) {
        double r = lcg_uniform(seed), sg = lcg_uniform(seed) < 0.5 ? -1.0 : 1.0;
        if (trial % 10 == 0)
            u[v] = 0.0;
        else if (trial % 10 == 1)
            u[v] = sg * (1e-3 + 0.1 * r); /* small opening */
        else
            u[v] = 10.0 * (2.0 * r - 1.0);
    }
}

/* ------------------------------------------------------------------ */
/* 1. Finite-difference check                                          */

/* Size of the terms each output is summed from (its round-off is relative
 * to these, not to the possibly cancelled sum): for pdot_i,
 * Be/V (sum |flows of i| + sum |chamber rates of i|); for F_a,
 * |p_pist A_pist| + |p_rod A_rod| + |c sd| + (1-eta)|fp| + |damper terms|. */
static void term_scale(const setup *ms, const double *s, const double *sd, const double *p, const double *u,
                       double *scale)
{
    const hymo_model *m = ms->m;
    const double p_tr = m->fluid.p_transition;
    double acc[MAXP] = {0};
#define ADD(node, q)                                                                                    \
    do {                                                                                                \
        if (m->nodes[node].kind == HYMO_NODE_VOLUME) acc[m->nodes[node].state] += fabs(q);             \
    } while (0)
#define EDGE(a, b, c)                                                                                   \
    do {                                                                                                \
        double q_ = (c) * hymo_orifice_g(hymo_node_pressure(m, a, p) - hymo_node_pressure(m, b, p), p_tr); \
        ADD(a, q_);                                                                                     \
        ADD(b, q_);                                                                                     \
    } while (0)
    for (int t = 0; t < m->n_throttles; ++t) EDGE(m->throttles[t].node_a, m->throttles[t].node_b, m->throttles[t].Ct);
    for (int v = 0; v < m->n_valves; ++v) {
        const hymo_valve *va = &m->valves[v];
        const double c = va->Cv * fabs(u[va->state]);
        EDGE(va->port_P, va->port_A, c);
        EDGE(va->port_B, va->port_T, c);
        EDGE(va->port_A, va->port_T, c);
        EDGE(va->port_P, va->port_B, c);
    }
#undef EDGE
#undef ADD
    for (int i = 0; i < ms->np; ++i) {
        const hymo_node *nd = &m->nodes[ms->circ.vol_node[i]];
        double V = 0.0, C = 0.0, rate = 0.0;
        for (int q = 0; q < nd->n_parts; ++q) {
            const hymo_subvolume *sv = &m->subvolumes[nd->first_part + q];
            double Vs = sv->volume;
            if (sv->cylinder >= 0) {
                const hymo_cylinder *cy = &m->cylinders[sv->cylinder];
                double lp, lr;
                hymo_cylinder_lengths(&ms->circ, sv->cylinder, s[sv->cylinder], &lp, &lr);
                double A = sv->chamber == HYMO_CHAMBER_PISTON ? cy->piston_area : cy->rod_side_area;
                Vs = A * (sv->chamber == HYMO_CHAMBER_PISTON ? lp : lr);
                rate += fabs(A * sd[sv->cylinder]);
            }
            V += Vs;
            C += Vs / sv->bulk_modulus;
        }
        scale[i] = (acc[i] + rate) / (V / m->fluid.bulk_modulus_oil + C);
    }
    for (int a = 0; a < ms->na; ++a) {
        const hymo_cylinder *cy = &m->cylinders[a];
        double fpi = fabs(hymo_node_pressure(m, cy->node_piston, p) * cy->piston_area);
        double fro = fabs(hymo_node_pressure(m, cy->node_rod, p) * cy->rod_side_area);
        double lp, lr;
        hymo_cylinder_lengths(&ms->circ, a, s[a], &lp, &lr);
        double dmp = cy->has_damper ? cy->damper_stiffness * (fabs(cy->damper_length - lp) + fabs(cy->damper_length - lr)) +
                                          cy->damper_damping * fabs(sd[a])
                                    : 0.0;
        scale[ms->np + a] = fpi + fro + fabs(cy->viscous * sd[a]) + (1.0 - cy->efficiency) * (fpi + fro) + dmp;
    }
}

/* Step sizes and tolerance.
 * The central difference D_h = (f(x+h) - f(x-h)) / (2h) has
 *   truncation |D_h - f'| <= h^2/6 max|f'''|   (on one smooth piece),
 *   round-off  <= kappa eps S / h               (each f to kappa eps S, S =
 *                 the size of the terms f is summed from, see term_scale),
 * and tol = 2 (trunc + round-off) + 16 eps |f'| (rounding of the analytic
 * value itself). Bounds of |f'''| per variable, from the equations:
 *  p:  the flows are c g(dp); g is linear in the laminar band and sqrt
 *      outside it, where g'''/g' = (3/4)/dp^2 <= (3/4)/p_tr^2; every flow
 *      into volume i rises with p_k (k != i) and falls with p_i, so the
 *      terms of a column have one sign and |f'''| <= (3/4) |f'| / p_tr^2.
 *      F is affine in p on a piece. trunc <= h^2 |f'| / (8 p_tr^2).
 *      Round-off: |pdot| / |d pdot/dp| ~ 2 |dp| <= 2e7 Pa, so h ~
 *      (8 p_tr^2 eps 2e7)^(1/3) ~ 10 Pa balances both at ~1e-9 relative
 *      (more where Q and Vdot cancel in pdot, which S accounts for).
 *  u:  pdot is linear in U on each side of U = 0, F does not depend on U:
 *      trunc = 0; h_u = 1e-4 V (|pdot|/|d pdot/dU| ~ |U| <= 10 V: round-off
 *      ~ eps 10/1e-4 ~ 2e-11 relative).
 *  s:  pdot_i = (Q - Vdot)/D_i(s) with D_i = V/B_oil + C affine in s, so
 *      f'''/f' = 6 (D_i'/D_i)^2 and |D_i'/D_i| <= 1/lp + 1/lr (D_i holds at
 *      least the chamber's own term, D' is the sum of the chambers' slopes):
 *      trunc <= h^2 (1/lp + 1/lr)^2 |f'|; F is piecewise affine in s (damper).
 *      h_s = 1e-6 m: with l >= 0.5 mm, trunc <= ~2e-5 relative, usually ~1e-10.
 *  sd: pdot is affine in sd (Vdot); F has (1-eta)|fp| tanh(sd/v_s), with
 *      |tanh'''| <= 2: trunc <= h^2/6 * 2 (1-eta) |fp| / v_s^3.
 *      h_sd = 1e-6 m/s (relative trunc ~ h^2/(3 v_s^2) ~ 3e-9 at v_s = 1 cm/s).
 * kappa = 16: a pdot is a handful of products and sums (the value itself,
 * not the cancelling differences, carries the round-off). A wrong
 * derivative is off by O(1) relative, far above every tolerance here. */
#define H_P 10.0
#define H_U 1e-4
#define H_S 1e-6
#define H_SD 1e-6
#define KAPPA 16.0

enum { ARR_PP, ARR_PU, ARR_PS, ARR_PSD, ARR_FP, ARR_FS, ARR_FSD, N_ARR };
static const char *const arr_name[N_ARR] = {"dpdot_dp", "dpdot_du", "dpdot_ds", "dpdot_dsd", "dF_dp", "dF_ds", "dF_dsd"};
enum { VAR_P, VAR_U, VAR_S, VAR_SD, N_VAR };
static const char *const var_name[N_VAR] = {"p", "u", "s", "sd"};

typedef struct {
    double max_rel[N_ARR];   /* max |fd - an| / |an| over well-resolved entries */
    double max_ratio[N_ARR]; /* max |fd - an| / tol over all entries */
    long n_entries[N_ARR];
    long cols[N_VAR], skipped[N_VAR];
    /* coverage of the branches by counted columns */
    long laminar_throttle, laminar_valve, u_zero, u_neg, damper, fp_neg, turbulent;
} fd_stats;

static void check_entry(fd_stats *st, int arr, double an, double fd, double trunc, double roff, int i, int j,
                        const char *what, int trial)
{
    double tol = 2.0 * (trunc + roff) + 16.0 * EPS * fabs(an);
    double err = fabs(fd - an);
    st->n_entries[arr]++;
    if (tol > 0.0 && err / tol > st->max_ratio[arr]) st->max_ratio[arr] = err / tol;
    if (tol == 0.0 && err > 0.0) st->max_ratio[arr] = INFINITY;
    if (fabs(an) > 1e3 * roff && an != 0.0 && err / fabs(an) > st->max_rel[arr]) st->max_rel[arr] = err / fabs(an);
    if (!(err <= tol))
        fail_msg("%s[%d][%d] (%s, sample %d): analytic %.12g, central difference %.12g, |diff| %.3g > tol %.3g",
                 arr_name[arr], i, j, what, trial, an, fd, err, tol);
}

static void fd_check_model(const char *file, int n_samples, uint64_t seed_init)
{
    setup ms;
    open_model(&ms, file);
    const hymo_model *m = ms.m;
    const int np = ms.np, nu = ms.nu, na = ms.na, nf = np + na;
    const double p_tr = m->fluid.p_transition;
    const hymo_circuit_derivs *d = &ms.d;
    fd_stats st;
    memset(&st, 0, sizeof st);
    uint64_t seed = seed_init;
    for (int trial = 0; trial < n_samples; ++trial) {
        double s[MAXA], sd[MAXA], p[MAXP], u[MAXU], f0[MAXP + MAXA];
        sample_state(&ms, &seed, trial, s, sd, p, u);
        assert_int_equal(eval_f(&ms, s, sd, p, u, f0), 0);
        assert_int_equal(hymo_circuit_derivatives(&ms.circ, m, s, sd, p, u, 1, &ms.d), 0);
        double scale[MAXP + MAXA];
        term_scale(&ms, s, sd, p, u, scale);
        int sig0[MAXSIG];
        const int nsig = signature(&ms, s, p, u, sig0);
        /* fixed per-sample factors of the truncation bounds */
        double inv_l2[MAXA], fric3[MAXA];
        for (int a = 0; a < na; ++a) {
            const hymo_cylinder *cy = &m->cylinders[a];
            double lp, lr;
            hymo_cylinder_lengths(&ms.circ, a, s[a], &lp, &lr);
            lp -= H_S;
            lr -= H_S;
            inv_l2[a] = (1.0 / lp + 1.0 / lr) * (1.0 / lp + 1.0 / lr);
            double fp = hymo_node_pressure(m, cy->node_piston, p) * cy->piston_area -
                        hymo_node_pressure(m, cy->node_rod, p) * cy->rod_side_area;
            double vs = cy->friction_velocity;
            fric3[a] = 2.0 * (1.0 - cy->efficiency) * fabs(fp) / (vs * vs * vs);
        }
        /* columns: p_k of every volume, u_v, s_a, sd_a */
        for (int var = 0; var < N_VAR; ++var) {
            const int ncol = var == VAR_P ? np : var == VAR_U ? nu : na;
            for (int j = 0; j < ncol; ++j) {
                double sp[MAXA], sm[MAXA], sdp[MAXA], sdm[MAXA], pp[MAXP], pm[MAXP], up[MAXU], um[MAXU];
                memcpy(sp, s, sizeof sp);
                memcpy(sm, s, sizeof sm);
                memcpy(sdp, sd, sizeof sdp);
                memcpy(sdm, sd, sizeof sdm);
                memcpy(pp, p, sizeof pp);
                memcpy(pm, p, sizeof pm);
                memcpy(up, u, sizeof up);
                memcpy(um, u, sizeof um);
                double *xp, *xm, h;
                switch (var) {
                case VAR_P: xp = &pp[j], xm = &pm[j], h = H_P; break;
                case VAR_U: xp = &up[j], xm = &um[j], h = H_U; break;
                case VAR_S: xp = &sp[j], xm = &sm[j], h = H_S; break;
                default: xp = &sdp[j], xm = &sdm[j], h = H_SD; break;
                }
                *xp += h;
                *xm -= h;
                const double step = *xp - *xm; /* exact (Sterbenz) */
                st.cols[var]++;
                if (!same_branch(&ms, sp, pp, up, sig0, nsig) || !same_branch(&ms, sm, pm, um, sig0, nsig)) {
                    st.skipped[var]++;
                    continue;
                }
                /* coverage: pieces actually exercised by counted columns */
                for (int t = 0; t < m->n_throttles; ++t) {
                    if (sig0[t] == 0) st.laminar_throttle++;
                    else st.turbulent++;
                }
                for (int v = 0; v < nu; ++v) {
                    const int *vs_ = sig0 + m->n_throttles + 3 * v;
                    if (vs_[1] == 0 || vs_[2] == 0) st.laminar_valve++;
                    if (u[v] == 0.0) st.u_zero++;
                    if (u[v] < 0.0) st.u_neg++;
                }
                for (int a = 0; a < na; ++a) {
                    const int *cs_ = sig0 + m->n_throttles + 3 * nu + 2 * a;
                    if (cs_[0] == 0) st.fp_neg++;
                    if (cs_[1] != 0) st.damper++;
                }
                double fpl[MAXP + MAXA], fmi[MAXP + MAXA];
                assert_int_equal(eval_f(&ms, sp, sdp, pp, up, fpl), 0);
                assert_int_equal(eval_f(&ms, sm, sdm, pm, um, fmi), 0);
                for (int r = 0; r < nf; ++r) {
                    const double fd = (fpl[r] - fmi[r]) / step;
                    const double fbig = fmax(scale[r], fmax(fabs(f0[r]), fmax(fabs(fpl[r]), fabs(fmi[r]))));
                    const double roff = KAPPA * EPS * fbig / h;
                    const int is_p = r < np, a = r - np; /* row: pdot_r or F_a */
                    double an, trunc = 0.0;
                    int arr;
                    switch (var) {
                    case VAR_P:
                        arr = is_p ? ARR_PP : ARR_FP;
                        an = is_p ? hymo_sparse_get(&d->dpdot_dp, r, j) : hymo_sparse_get(&d->dF_dp, a, j);
                        trunc = h * h * fabs(an) / (8.0 * p_tr * p_tr);
                        break;
                    case VAR_U:
                        if (!is_p) { /* F does not depend on U */
                            if (fd != 0.0) fail_msg("dF_%d/du_%d = %g by differences", a, j, fd);
                            continue;
                        }
                        arr = ARR_PU;
                        an = hymo_sparse_get(&d->dpdot_du, r, j);
                        break;
                    case VAR_S:
                        arr = is_p ? ARR_PS : ARR_FS;
                        an = is_p ? hymo_sparse_get(&d->dpdot_ds, r, j) : (a == j ? d->dF_ds[a] : 0.0);
                        trunc = h * h * inv_l2[j] * fabs(an);
                        break;
                    default:
                        arr = is_p ? ARR_PSD : ARR_FSD;
                        an = is_p ? hymo_sparse_get(&d->dpdot_dsd, r, j) : (a == j ? d->dF_dsd[a] : 0.0);
                        if (!is_p && a == j) trunc = h * h / 6.0 * fric3[a];
                        break;
                    }
                    check_entry(&st, arr, an, fd, trunc, roff, r, j, var_name[var], trial);
                }
            }
        }
    }
    long cols = 0, skipped = 0;
    for (int v = 0; v < N_VAR; ++v) {
        cols += st.cols[v];
        skipped += st.skipped[v];
    }
    fprintf(stderr, "  %-16s %d samples, %ld columns, skipped %.2f%% (p %.2f%%, u %.2f%%, s %.2f%%, sd %.2f%%)\n", file,
            n_samples, cols, 100.0 * (double)skipped / (double)cols, 100.0 * (double)st.skipped[VAR_P] / (double)st.cols[VAR_P],
            100.0 * (double)st.skipped[VAR_U] / (double)st.cols[VAR_U], 100.0 * (double)st.skipped[VAR_S] / (double)st.cols[VAR_S],
            100.0 * (double)st.skipped[VAR_SD] / (double)st.cols[VAR_SD]);
    for (int k = 0; k < N_ARR; ++k)
        fprintf(stderr, "    %-10s max rel err %.2e   max err/tol %.2e   (%ld entries)\n", arr_name[k], st.max_rel[k],
                st.max_ratio[k], st.n_entries[k]);
    fprintf(stderr, "    counted columns with: laminar throttle %ld, laminar valve edge %ld, U = 0 %ld, U < 0 %ld, "
                    "damper %ld, fp < 0 %ld\n",
            st.laminar_throttle, st.laminar_valve, st.u_zero, st.u_neg, st.damper, st.fp_neg);
    /* the check cannot pass by skipping */
    assert_true((double)(cols - skipped) > 0.9 * (double)cols);
    for (int v = 0; v < N_VAR; ++v) assert_true((double)(st.cols[v] - st.skipped[v]) > 0.75 * (double)st.cols[v]);
    for (int k = 0; k < N_ARR; ++k) assert_true(st.n_entries[k] > 0);
    assert_true(st.laminar_throttle > 0 && st.laminar_valve > 0 && st.u_zero > 0 && st.u_neg > 0 && st.turbulent > 0);
    int any_damper = 0;
    for (int a = 0; a < na; ++a) any_damper |= m->cylinders[a].has_damper;
    if (any_damper) assert_true(st.damper > 0);
    close_model(&ms);
}

static void test_fd_fourbar(void **state)
{
    (void)state;
    fd_check_model(model_files[0], 2000, 1);
}

static void test_fd_quickreturn(void **state)
{
    (void)state;
    fd_check_model(model_files[1], 2000, 2);
}

static void test_fd_crane1(void **state)
{
    (void)state;
    fd_check_model(model_files[2], 2000, 3);
}

static void test_fd_crane2(void **state)
{
    (void)state;
    fd_check_model(model_files[3], 2000, 4);
}

/* ------------------------------------------------------------------ */
/* 2. Hand-computed values                                             */

/* four-bar V1: one hose (no chamber) between valve port A and the throttle
 * to V2. With U = 0 the valve passes nothing, so V1 is a closed volume
 * with one throttle; in the laminar band
 *   d pdot_1/d p_1 = -Be/V Ct/sqrt(p_tr),  Be = 1/(1/B_oil + 1/B_hose). */
static void test_hand_fourbar(void **state)
{
    (void)state;
    setup ms;
    open_model(&ms, "fourbar.yaml");
    const hymo_model *m = ms.m;
    const int np = ms.np, na = ms.na;
    const hymo_node *v1 = &m->nodes[test_node_index(m, "V1")], *v2 = &m->nodes[test_node_index(m, "V2")];
    const int i1 = v1->state, i2 = v2->state;
    assert_int_equal(v1->n_parts, 1);
    const hymo_subvolume *hose = &m->subvolumes[v1->first_part];
    assert_int_equal(hose->cylinder, -1);
    const double p_tr = m->fluid.p_transition, Ct = m->throttles[0].Ct;
    const double Be = 1.0 / (1.0 / m->fluid.bulk_modulus_oil + 1.0 / hose->bulk_modulus), W1 = Be / hose->volume;
    const hymo_cylinder *cy = &m->cylinders[0];
    double s[1] = {ms.s0[0] + 0.02}, sd[1] = {0.005}, p[MAXP], u[1] = {0.0};
    for (int k = 0; k < np; ++k) p[k] = 3.0e6;
    p[i1] = 5.0e6;
    p[i2] = 5.0e6 - 0.5 * p_tr; /* laminar */
    assert_int_equal(hymo_circuit_derivatives(&ms.circ, m, s, sd, p, u, 1, &ms.d), 0);
    const hymo_circuit_derivs *d = &ms.d;
    const double lam = W1 * Ct / sqrt(p_tr);
    assert_close(hymo_sparse_get(&d->dpdot_dp, i1, i1), -lam, 1e-13 * lam);
    assert_close(hymo_sparse_get(&d->dpdot_dp, i1, i2), lam, 1e-13 * lam);
    /* U = 0 takes the U >= 0 branch: d pdot_1/dU = W1 Cv sqrt(p_pump - p_1) (P -> A) */
    const hymo_valve *va = &m->valves[0];
    assert_int_equal(va->port_A, test_node_index(m, "V1"));
    const double dU = W1 * va->Cv * sqrt(m->nodes[va->port_P].pressure - p[i1]);
    assert_close(hymo_sparse_get(&d->dpdot_du, i1, va->state), dU, 1e-13 * dU);
    /* no chamber in V1: no s, sd dependence */
    for (int a = 0; a < na; ++a) {
        assert_true(hymo_sparse_get(&d->dpdot_ds, i1, a) == 0.0);
        assert_true(hymo_sparse_get(&d->dpdot_dsd, i1, a) == 0.0);
    }
    /* seal friction (eta = 0.88), fp > 0: dF/dp_pist = A_pist (1 - (1-eta) tanh(sd/v_s)) */
    assert_int_equal(cy->node_piston, test_node_index(m, "V2"));
    const double fac = 1.0 - (1.0 - cy->efficiency) * tanh(sd[0] / cy->friction_velocity);
    const int ip = m->nodes[cy->node_piston].state, ir = m->nodes[cy->node_rod].state;
    assert_close(hymo_sparse_get(&d->dF_dp, 0, ip), cy->piston_area * fac, 1e-15);
    assert_close(hymo_sparse_get(&d->dF_dp, 0, ir), -cy->rod_side_area * fac, 1e-15);
    /* no damper, no viscous term: dF/ds = 0, dF/dsd = -(1-eta)|fp| sech^2(sd/v_s)/v_s */
    const double fp = p[ip] * cy->piston_area - p[ir] * cy->rod_side_area;
    assert_true(fp > 0.0);
    const double ch = cosh(sd[0] / cy->friction_velocity);
    const double dsd = -(1.0 - cy->efficiency) * fp / (ch * ch) / cy->friction_velocity;
    assert_true(d->dF_ds[0] == 0.0);
    assert_close(d->dF_dsd[0], dsd, 1e-12 * fabs(dsd));
    close_model(&ms);
}

/* Be/V of volume node k whose one chamber part has size v_chamber:
 * 1 / (V/B_oil + sum V_j/B_j) */
static double volume_w(const hymo_model *m, int k, double v_chamber)
{
    const hymo_node *nd = &m->nodes[k];
    double V = 0.0, C = 0.0;
    for (int q = 0; q < nd->n_parts; ++q) {
        const hymo_subvolume *sv = &m->subvolumes[nd->first_part + q];
        double Vs = sv->cylinder >= 0 ? v_chamber : sv->volume;
        V += Vs;
        C += Vs / sv->bulk_modulus;
    }
    return 1.0 / (V / m->fluid.bulk_modulus_oil + C);
}

/* crane1 (eta = 1, viscous c, end dampers): dF/dp = A_pist, -A_rod exactly;
 * dF/dsd = -c outside, -c - c_d inside a damper where dF/ds = -k_d;
 * d pdot_V1/d sd = -Be/V A_pist for the piston volume. */
static void test_hand_crane1(void **state)
{
    (void)state;
    setup ms;
    open_model(&ms, "crane1.yaml");
    const hymo_model *m = ms.m;
    const int np = ms.np;
    const hymo_cylinder *cy = &m->cylinders[0];
    assert_true(cy->efficiency == 1.0 && cy->has_damper);
    const int ip = m->nodes[cy->node_piston].state, ir = m->nodes[cy->node_rod].state;
    double p[MAXP], u[1] = {3.0};
    for (int k = 0; k < np; ++k) p[k] = 2.0e6 + 1.0e6 * k;
    const double lp0 = ms.circ.l_pist0[0];
    /* mid-stroke, then inside the piston-side damper (lp = l_d / 2) */
    const double lps[2] = {0.1, 0.5 * cy->damper_length};
    for (int c = 0; c < 2; ++c) {
        double s[1] = {ms.s0[0] - lp0 + lps[c]}, sd[1] = {-0.2};
        assert_int_equal(hymo_circuit_derivatives(&ms.circ, m, s, sd, p, u, 1, &ms.d), 0);
        const hymo_circuit_derivs *d = &ms.d;
        assert_true(hymo_sparse_get(&d->dF_dp, 0, ip) == cy->piston_area);
        assert_true(hymo_sparse_get(&d->dF_dp, 0, ir) == -cy->rod_side_area);
        assert_true(d->dF_ds[0] == (c == 0 ? 0.0 : -cy->damper_stiffness));
        assert_true(d->dF_dsd[0] == -cy->viscous - (c == 0 ? 0.0 : cy->damper_damping));
        /* piston volume (hose + chamber A_pist lp): Vdot = A_pist sd;
         * rod volume (hose + chamber A_rod lr): Vdot = -A_rod sd */
        const double lr = ms.circ.l_pist0[0] + ms.circ.l_rod0[0] - lps[c];
        const double Wp = volume_w(m, cy->node_piston, cy->piston_area * lps[c]);
        const double Wr = volume_w(m, cy->node_rod, cy->rod_side_area * lr);
        assert_close(hymo_sparse_get(&d->dpdot_dsd, ip, 0), -Wp * cy->piston_area, 1e-13 * Wp * cy->piston_area);
        assert_close(hymo_sparse_get(&d->dpdot_dsd, ir, 0), Wr * cy->rod_side_area, 1e-13 * Wr * cy->rod_side_area);
    }
    close_model(&ms);
}

/* ------------------------------------------------------------------ */
/* 3. At a kink: the one-sided derivative of the branch eval takes      */

/* At a point on a kink, along coordinate (var, j): the side whose stencil
 * point x + side h stays on the point's branch must give, by the one-sided
 * difference (f(x + side h) - f(x)) / (side h), the analytic column; the
 * other side must leave the branch (the point is on the kink). One-sided
 * truncation h/2 |f''|: p: |g''/g'| = 1/(2|dp|) <= 1/(2 p_tr), so <= h |f'| /
 * (4 p_tr); u: 0; s: |f''/f'| = 2 |D'/D|, so <= h (1/lp + 1/lr) |f'|;
 * F is piecewise affine in p, u, s. Round-off 2 kappa eps S / h. */
static void check_kink(setup *ms, const double *s, const double *sd, const double *p, const double *u, int var,
                       int j, int want_side)
{
    const hymo_model *m = ms->m;
    const int np = ms->np, na = ms->na;
    const double p_tr = m->fluid.p_transition;
    const hymo_circuit_derivs *d = &ms->d;
    assert_int_equal(hymo_circuit_derivatives(&ms->circ, m, s, sd, p, u, 1, &ms->d), 0);
    double f0[MAXP + MAXA], scale[MAXP + MAXA];
    assert_int_equal(eval_f(ms, s, sd, p, u, f0), 0);
    term_scale(ms, s, sd, p, u, scale);
    int sig0[MAXSIG];
    const int nsig = signature(ms, s, p, u, sig0);
    int on_branch[2] = {0, 0};
    for (int side = -1; side <= 1; side += 2) {
        double s1[MAXA], p1[MAXP], u1[MAXU], *x, h;
        memcpy(s1, s, sizeof s1);
        memcpy(p1, p, sizeof p1);
        memcpy(u1, u, sizeof u1);
        switch (var) {
        case VAR_P: x = &p1[j], h = H_P; break;
        case VAR_U: x = &u1[j], h = H_U; break;
        default: x = &s1[j], h = H_S; break;
        }
        *x += side * h;
        const double step = *x - (var == VAR_P ? p[j] : var == VAR_U ? u[j] : s[j]);
        if (!same_branch(ms, s1, p1, u1, sig0, nsig)) continue;
        on_branch[side > 0] = 1;
        double f1[MAXP + MAXA];
        assert_int_equal(eval_f(ms, s1, sd, p1, u1, f1), 0);
        double inv_l = 0.0;
        if (var == VAR_S) {
            double lp, lr;
            hymo_cylinder_lengths(&ms->circ, j, s[j], &lp, &lr);
            inv_l = 1.0 / (lp - h) + 1.0 / (lr - h);
        }
        for (int r = 0; r < np + na; ++r) {
            const int is_p = r < np, a = r - np;
            double an, trunc = 0.0;
            if (var == VAR_P) {
                an = is_p ? hymo_sparse_get(&d->dpdot_dp, r, j) : hymo_sparse_get(&d->dF_dp, a, j);
                trunc = h * fabs(an) / (4.0 * p_tr);
            } else if (var == VAR_U) {
                an = is_p ? hymo_sparse_get(&d->dpdot_du, r, j) : 0.0;
            } else {
                an = is_p ? hymo_sparse_get(&d->dpdot_ds, r, j) : (a == j ? d->dF_ds[a] : 0.0);
                trunc = h * inv_l * fabs(an);
            }
            const double fd = (f1[r] - f0[r]) / step;
            const double roff = 2.0 * KAPPA * EPS * fmax(scale[r], fmax(fabs(f0[r]), fabs(f1[r]))) / h;
            const double tol = 2.0 * (trunc + roff) + 16.0 * EPS * fabs(an);
            if (!(fabs(fd - an) <= tol))
                fail_msg("kink, d f_%d / d %s_%d, side %+d: analytic %.12g, one-sided difference %.12g, tol %.3g", r,
                         var_name[var], j, side, an, fd, tol);
        }
    }
    /* exactly one side stays on the branch, and it is the expected one */
    assert_int_equal(on_branch[0] + on_branch[1], 1);
    assert_int_equal(on_branch[1], want_side > 0);
}

static void test_kinks(void **state)
{
    (void)state;
    setup ms;
    /* four-bar: throttle V1 -> V2, valve P -> A = V1, B -> T = V3 (U >= 0) */
    open_model(&ms, "fourbar.yaml");
    const hymo_model *m = ms.m;
    const double p_tr = m->fluid.p_transition;
    const int i1 = m->nodes[test_node_index(m, "V1")].state, i2 = m->nodes[test_node_index(m, "V2")].state,
              i3 = m->nodes[test_node_index(m, "V3")].state;
    const double pump = m->nodes[test_node_index(m, "pump")].pressure;
    double s[MAXA] = {ms.s0[0] + 0.01}, sd[MAXA] = {0.003}, p[MAXP], u[MAXU] = {2.0};
    p[i2] = 3.0e6;
    p[i3] = 2.0e6;
    /* throttle at dp = +p_tr (turbulent branch: dp grows with p_1) */
    p[i1] = p[i2] + p_tr;
    assert_true(p[i1] - p[i2] == p_tr);
    check_kink(&ms, s, sd, p, u, VAR_P, i1, +1);
    check_kink(&ms, s, sd, p, u, VAR_P, i2, -1);
    /* throttle at dp = -p_tr (turbulent branch: dp falls with p_1) */
    p[i1] = p[i2] - p_tr;
    check_kink(&ms, s, sd, p, u, VAR_P, i1, -1);
    check_kink(&ms, s, sd, p, u, VAR_P, i2, +1);
    /* valve edge P -> A at p_P - p_A = p_tr, U > 0 */
    p[i1] = pump - p_tr;
    check_kink(&ms, s, sd, p, u, VAR_P, i1, -1);
    /* U = 0: the U >= 0 branch */
    p[i1] = 5.0e6;
    u[0] = 0.0;
    check_kink(&ms, s, sd, p, u, VAR_U, 0, +1);
    /* fp = 0 (to rounding): seal friction |fp| tanh(sd/v_s), either sign */
    const hymo_cylinder *cy = &m->cylinders[0];
    assert_int_equal(m->nodes[cy->node_piston].state, i2);
    assert_int_equal(m->nodes[cy->node_rod].state, i3);
    u[0] = 1.0;
    p[i2] = p[i3] * cy->rod_side_area / cy->piston_area;
    const double fp = p[i2] * cy->piston_area - p[i3] * cy->rod_side_area;
    check_kink(&ms, s, sd, p, u, VAR_P, i2, fp >= 0.0 ? +1 : -1);
    check_kink(&ms, s, sd, p, u, VAR_P, i3, fp >= 0.0 ? -1 : +1);
    close_model(&ms);

    /* crane1: end-damper entries (lp = l_d, lr = l_d to rounding) */
    open_model(&ms, "crane1.yaml");
    m = ms.m;
    cy = &m->cylinders[0];
    for (int k = 0; k < ms.np; ++k) p[k] = 2.0e6 + 1.0e6 * k;
    u[0] = 3.0;
    sd[0] = -0.1;
    const double lp0 = ms.circ.l_pist0[0], stroke = lp0 + ms.circ.l_rod0[0];
    double lp, lr;
    s[0] = ms.s0[0] - lp0 + cy->damper_length;
    hymo_cylinder_lengths(&ms.circ, 0, s[0], &lp, &lr);
    check_kink(&ms, s, sd, p, u, VAR_S, 0, lp <= cy->damper_length ? -1 : +1);
    s[0] = ms.s0[0] - lp0 + stroke - cy->damper_length;
    hymo_cylinder_lengths(&ms.circ, 0, s[0], &lp, &lr);
    check_kink(&ms, s, sd, p, u, VAR_S, 0, lr <= cy->damper_length ? +1 : -1);
    close_model(&ms);
}

/* ------------------------------------------------------------------ */
/* 4. want_pdot = 0, non-positive volume                               */

static void test_modes(void **state)
{
    (void)state;
    setup ms;
    open_model(&ms, "crane2.yaml");
    const hymo_model *m = ms.m;
    const int np = ms.np, nu = ms.nu, na = ms.na;
    double s[MAXA], sd[MAXA], p[MAXP], u[MAXU];
    uint64_t seed = 7;
    sample_state(&ms, &seed, 5, s, sd, p, u);
    assert_int_equal(hymo_circuit_derivatives(&ms.circ, m, s, sd, p, u, 1, &ms.d), 0);
    const hymo_sparse *sp[5] = {&ms.d.dpdot_dp, &ms.d.dpdot_du, &ms.d.dpdot_ds, &ms.d.dpdot_dsd, &ms.d.dF_dp};
    double dFp[MAXA * MAXP], dFs[MAXA], dFsd[MAXA];
    const int nfp = ms.d.dF_dp.col_start[np];
    assert_true(nfp <= MAXA * MAXP);
    memcpy(dFp, ms.d.dF_dp.value, (size_t)nfp * sizeof(double));
    memcpy(dFs, ms.d.dF_ds, (size_t)na * sizeof(double));
    memcpy(dFsd, ms.d.dF_dsd, (size_t)na * sizeof(double));
    /* want_pdot = 0: dF_* as before (even if stale), dpdot_* untouched */
    const double SENT = -12345.678;
    for (int a = 0; a < 5; ++a)
        for (int k = 0; k < sp[a]->col_start[sp[a]->n_cols]; ++k) sp[a]->value[k] = SENT;
    for (int k = 0; k < na; ++k) ms.d.dF_ds[k] = ms.d.dF_dsd[k] = SENT;
    assert_int_equal(hymo_circuit_derivatives(&ms.circ, m, s, sd, p, u, 0, &ms.d), 0);
    assert_memory_equal(ms.d.dF_dp.value, dFp, (size_t)nfp * sizeof(double));
    assert_memory_equal(ms.d.dF_ds, dFs, (size_t)na * sizeof(double));
    assert_memory_equal(ms.d.dF_dsd, dFsd, (size_t)na * sizeof(double));
    for (int a = 0; a < 4; ++a)
        for (int k = 0; k < sp[a]->col_start[sp[a]->n_cols]; ++k) assert_true(sp[a]->value[k] == SENT);
    /* stale entries are cleared with want_pdot = 1 too (same result as a fresh call) */
    assert_int_equal(hymo_circuit_derivatives(&ms.circ, m, s, sd, p, u, 1, &ms.d), 0);
    hymo_circuit_derivs fresh;
    hymo_error err;
    assert_int_equal(hymo_circuit_derivs_alloc(&fresh, m, np, nu, na, &err), HYMO_OK);
    assert_int_equal(hymo_circuit_derivatives(&ms.circ, m, s, sd, p, u, 1, &fresh), 0);
    const hymo_sparse *fp_[4] = {&fresh.dpdot_dp, &fresh.dpdot_du, &fresh.dpdot_ds, &fresh.dpdot_dsd};
    for (int a = 0; a < 4; ++a) {
        const int n = sp[a]->col_start[sp[a]->n_cols];
        assert_int_equal(fp_[a]->col_start[fp_[a]->n_cols], n);
        assert_memory_equal(fp_[a]->value, sp[a]->value, (size_t)(n > 0 ? n : 1) * sizeof(double));
    }
    hymo_circuit_derivs_free(&fresh);
    assert_null(fresh.dpdot_dp.value);
    /* cyl1's piston volume driven below zero: -1, as hymo_circuit_eval */
    const hymo_cylinder *cy = &m->cylinders[0];
    const hymo_node *nd = &m->nodes[cy->node_piston];
    double hose = 0.0;
    for (int q = 0; q < nd->n_parts; ++q)
        if (m->subvolumes[nd->first_part + q].cylinder < 0) hose += m->subvolumes[nd->first_part + q].volume;
    s[0] = ms.s0[0] - ms.circ.l_pist0[0] - 2.0 * hose / cy->piston_area;
    double f[MAXP + MAXA];
    assert_int_equal(eval_f(&ms, s, sd, p, u, f), -1);
    assert_int_equal(hymo_circuit_derivatives(&ms.circ, m, s, sd, p, u, 1, &ms.d), -1);
    assert_int_equal(hymo_circuit_derivatives(&ms.circ, m, s, sd, p, u, 0, &ms.d), 0);
    close_model(&ms);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_fourbar),  cmocka_unit_test(test_fd_quickreturn), cmocka_unit_test(test_fd_crane1),
        cmocka_unit_test(test_fd_crane2),   cmocka_unit_test(test_hand_fourbar),   cmocka_unit_test(test_hand_crane1),
        cmocka_unit_test(test_kinks),       cmocka_unit_test(test_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
