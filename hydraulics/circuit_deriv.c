/* Analytic partial derivatives of the circuit equations (hymo_circuit_eval)
 * for a Newton Jacobian.
 *
 * Per volume i (node k) hymo_circuit_eval computes
 *   pdot_i = Be/V (Q_i - Vdot_i),  Be = 1 / (1/B_oil + C/V),  C = sum_j V_j / B_j,
 * i.e. pdot_i = W_i (Q_i - Vdot_i) with W_i = Be/V = 1 / D_i, D_i = V/B_oil + C.
 * Q_i (net inflow of throttles, valves, relief and check valves, pumps, flow controls) depends on p and u only; V_j and
 * hence D_i depend on s (a chamber's V_j' = A_pist or -A_rod), Vdot_i on sd:
 *   d pdot_i/d p_k  = W_i dQ_i/dp_k,      d pdot_i/d u_v = W_i dQ_i/du_v,
 *   d pdot_i/d s_a  = -pdot_i W_i dD_i/ds_a,  dD_i/ds_a = sum_j V_j' (1/B_oil + 1/B_j),
 *   d pdot_i/d sd_a = -W_i sum_j V_j'       (sums over the chambers of cylinder a).
 * B_oil is the fluid law's B_f(p_i) and D_i also holds the
 * accumulators' compliance A_i(p_i) (hymo_volume_weight), which adds
 *   d pdot_i/d p_i += -pdot_i W_i dD_i/dp_i,  dD_i/dp_i = V d(1/B_f)/dp + dA_i/dp.
 * Actuator force F = fp - c sd - (1-eta) |fp| tanh(sd/v_s) + F_d(s, sd),
 * fp = p_pist A_pist - p_rod A_rod:
 *   dF/dp   = dfp/dp (1 - (1-eta) sgn(fp) tanh(sd/v_s)),
 *   dF/dsd  = -c - (1-eta) |fp| (1 - tanh^2(sd/v_s)) / v_s + dF_d/dsd,
 *   dF/ds   = dF_d/ds.
 * Motor k (actuator a = n_cylinders + k, sd_a = w): its flow Q = D w + C_L dp
 * a -> b enters Q_i (dQ/dp: C_L like a laminar orifice; dQ/dw = D in the sd
 * column of each port, scaled by W like a chamber's dV/ds); its torque
 * T = D dp - (1-eta) D |dp| tanh(w/w_s) - c_v w gives dF/dp = +-dT/d(dp),
 * dF/dsd = dT/dw, dF/ds = 0 (hymo_motor_torque_d). */
#include "circuit.h"
#include "elements.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The fixed patterns, from the model's connections: every flow element
 * between volumes a and b couples (a, a), (a, b), (b, a), (b, b) in
 * d pdot/d p (and its valve's spool in d pdot/d u); a chamber of cylinder c
 * in volume i, or a motor's port there, is (i, c) in d pdot/d s and d sd;
 * d F/d p holds each actuator's chamber or port volumes. */
typedef struct {
    int n, cap;
    int *r, *c;
} pairs;

static int pairs_add(pairs *p, int r, int c)
{
    if (r < 0 || c < 0) return 0;
    if (p->n == p->cap) {
        const int cap = p->cap ? 2 * p->cap : 64;
        int *nr = realloc(p->r, (size_t)cap * sizeof(int)), *nc = nr ? realloc(p->c, (size_t)cap * sizeof(int)) : NULL;
        if (nr) p->r = nr;
        if (nc) p->c = nc;
        if (!nr || !nc) return -1;
        p->cap = cap;
    }
    p->r[p->n] = r;
    p->c[p->n++] = c;
    return 0;
}

static int vol_state(const hymo_model *model, int node, int np)
{
    const hymo_node *nd = &model->nodes[node];
    return nd->kind == HYMO_NODE_VOLUME && nd->state < np ? nd->state : -1;
}

/* d pdot/d p (and, v >= 0, d pdot/d u_v) pattern of a flow element a -> b */
static int flow_pattern(pairs *pp, pairs *pu, const hymo_model *model, int np, int na_, int nb_, int v)
{
    const int a = vol_state(model, na_, np), b = vol_state(model, nb_, np);
    int e = pairs_add(pp, a, a) | pairs_add(pp, b, b);
    if (a >= 0 && b >= 0) e |= pairs_add(pp, a, b) | pairs_add(pp, b, a);
    if (v >= 0) e |= pairs_add(pu, a, v) | pairs_add(pu, b, v);
    return e;
}

/* The flow edges in the order of hymo_circuit_derivatives and of d->slot:
 * the element kinds in their table's order, n_edges per element; sets the
 * offsets slot_base and returns their number. */
static int flow_offsets(hymo_circuit_derivs *d, const hymo_model *m)
{
    int n = 0;
    for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
        d->slot_base[kd] = n;
        n += hymo_element_kinds[kd].n_edges * hymo_element_kinds[kd].count(m);
    }
    return n;
}

static int build_patterns(hymo_circuit_derivs *d, const hymo_model *model)
{
    const int np = d->np, nu = d->nu, na = d->na;
    pairs pp = {0}, pu = {0}, ps = {0}, pf = {0};
    int e = 0;
    for (int i = 0; i < np; ++i) e |= pairs_add(&pp, i, i);
    /* every flow edge but those of the motors that are no actuator here (na) */
    for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
        const hymo_element_kind *K = &hymo_element_kinds[kd];
        const int n = K->n_edges ? K->count(model) : 0;
        for (int i = 0; i < n; ++i) {
            if (K->actuator(model, i) >= na) continue;
            for (int k = 0; k < K->n_edges; ++k) {
                int nf, nt, v;
                K->edge(model, i, k, &nf, &nt, &v);
                e |= flow_pattern(&pp, &pu, model, np, nf, nt, v < nu ? v : -1);
            }
        }
    }
    for (int a = 0; a < na && a < model->n_cylinders; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        e |= pairs_add(&pf, a, vol_state(model, cy->node_piston, np)) |
             pairs_add(&pf, a, vol_state(model, cy->node_rod, np));
    }
    for (int k = 0; k < model->n_motors && model->n_cylinders + k < na; ++k) {
        const hymo_motor *mo = &model->motors[k];
        const int a = model->n_cylinders + k, pa = vol_state(model, mo->node_a, np),
                  pb = vol_state(model, mo->node_b, np);
        e |= pairs_add(&ps, pa, a) | pairs_add(&ps, pb, a) | pairs_add(&pf, a, pa) | pairs_add(&pf, a, pb);
    }
    for (int n = 0; n < model->n_nodes; ++n) {
        const int i = vol_state(model, n, np);
        if (i < 0) continue;
        const hymo_node *nd = &model->nodes[n];
        for (int q = 0; q < nd->n_parts; ++q) {
            const int c = model->subvolumes[nd->first_part + q].cylinder;
            if (c >= 0 && c < na) e |= pairs_add(&ps, i, c);
        }
    }
    if (!e) e = hymo_sparse_pattern(&d->dpdot_dp, np, np, pp.n, pp.r, pp.c) |
                hymo_sparse_pattern(&d->dpdot_du, np, nu, pu.n, pu.r, pu.c) |
                hymo_sparse_pattern(&d->dpdot_ds, np, na, ps.n, ps.r, ps.c) |
                hymo_sparse_pattern(&d->dpdot_dsd, np, na, ps.n, ps.r, ps.c) |
                hymo_sparse_pattern(&d->dF_dp, na, np, pf.n, pf.r, pf.c);
    free(pp.r), free(pp.c), free(pu.r), free(pu.c), free(ps.r), free(ps.c), free(pf.r), free(pf.c);
    return e;
}

typedef struct hymo_flow_slot_s flow_slot;

/* the position of (i, j) in S's values, -1 if i or j < 0 */
static int position(const hymo_sparse *S, int i, int j)
{
    const double *e = i >= 0 && j >= 0 ? hymo_sparse_at(S, i, j) : NULL;
    return e ? (int)(e - S->value) : -1;
}

static void slot_set(hymo_circuit_derivs *d, const hymo_model *model, flow_slot *sl, int nf, int nt, int v)
{
    const int a = vol_state(model, nf, d->np), b = vol_state(model, nt, d->np);
    sl->ia = a, sl->ib = b;
    sl->aa = position(&d->dpdot_dp, a, a), sl->ab = position(&d->dpdot_dp, a, b);
    sl->ba = position(&d->dpdot_dp, b, a), sl->bb = position(&d->dpdot_dp, b, b);
    sl->ua = v >= 0 && v < d->nu ? position(&d->dpdot_du, a, v) : -1;
    sl->ub = v >= 0 && v < d->nu ? position(&d->dpdot_du, b, v) : -1;
}

/* the slots of every flow edge, in the order of hymo_circuit_derivatives */
static int build_slots(hymo_circuit_derivs *d, const hymo_model *model)
{
    const int n = flow_offsets(d, model);
    d->slot = calloc((size_t)(n > 0 ? n : 1), sizeof *d->slot);
    if (!d->slot) return -1;
    for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
        const hymo_element_kind *K = &hymo_element_kinds[kd];
        const int ne = K->n_edges ? K->count(model) : 0;
        for (int i = 0; i < ne; ++i)
            for (int k = 0; k < K->n_edges; ++k) {
                int nf, nt, v;
                K->edge(model, i, k, &nf, &nt, &v);
                slot_set(d, model, &d->slot[d->slot_base[kd] + K->n_edges * i + k], nf, nt, v);
            }
    }
    return 0;
}

hymo_status hymo_circuit_derivs_alloc(hymo_circuit_derivs *d, const hymo_model *model, int np, int nu, int na,
                                      hymo_error *err)
{
    memset(d, 0, sizeof *d);
    if (np < 0 || nu < 0 || na < 0)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "circuit derivatives: negative size (np %d, nu %d, na %d)",
                              np, nu, na);
    d->np = np;
    d->nu = nu;
    d->na = na;
    const size_t n1 = np > 0 ? (size_t)np : 1, a1 = na > 0 ? (size_t)na : 1;
    d->dF_ds = calloc(a1, sizeof(double));
    d->dF_dsd = calloc(a1, sizeof(double));
    d->qnet = calloc(n1, sizeof(double));
    d->w = calloc(3 * n1, sizeof(double));
    flow_offsets(d, model);
    if (!d->dF_ds || !d->dF_dsd || !d->qnet || !d->w || build_patterns(d, model) || build_slots(d, model)) {
        hymo_circuit_derivs_free(d);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (circuit derivatives)");
    }
    return HYMO_OK;
}

void hymo_circuit_derivs_free(hymo_circuit_derivs *d)
{
    hymo_sparse_free(&d->dpdot_dp);
    hymo_sparse_free(&d->dpdot_du);
    hymo_sparse_free(&d->dpdot_ds);
    hymo_sparse_free(&d->dpdot_dsd);
    hymo_sparse_free(&d->dF_dp);
    free(d->dF_ds);
    free(d->dF_dsd);
    free(d->qnet);
    free(d->w);
    free(d->slot);
    memset(d, 0, sizeof *d);
}

/* A flow q through the element of slot sl (from its node a to b) with
 * dq/dp_a = G, dq/dp_b = -G and dq/du_v = qu (a valve edge): its
 * d Q_i/d(p, u) in the rows of the volumes. */
static inline void add_flow(hymo_circuit_derivs *d, const flow_slot *sl, double q, double G, double qu)
{
    double *vp = d->dpdot_dp.value, *vu = d->dpdot_du.value, *qnet = d->qnet; /* qnet: for d pdot / d s */
    if (sl->ia >= 0) { /* outflow of a */
        vp[sl->aa] -= G;
        if (sl->ib >= 0) vp[sl->ab] += G;
        if (sl->ua >= 0) vu[sl->ua] -= qu;
        qnet[sl->ia] -= q;
    }
    if (sl->ib >= 0) { /* inflow of b */
        if (sl->ia >= 0) vp[sl->ba] += G;
        vp[sl->bb] -= G;
        if (sl->ub >= 0) vu[sl->ub] += qu;
        qnet[sl->ib] += q;
    }
}

static void force_derivatives(const hymo_circuit *circ, const hymo_model *model, const double *s,
                              const double *sd, const double *p, hymo_circuit_derivs *d)
{
    for (int a = 0; a < d->na && a < model->n_cylinders; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const hymo_node *npi = &model->nodes[cy->node_piston], *nro = &model->nodes[cy->node_rod];
        double fp = hymo_node_pressure(model, cy->node_piston, p) * cy->piston_area -
                    hymo_node_pressure(model, cy->node_rod, p) * cy->rod_side_area;
        double fr = 1.0 - cy->efficiency, th = tanh(sd[a] / cy->friction_velocity);
        /* d|fp|/dfp = sgn(fp), fp = 0 taken as fp > 0 */
        double dF_dfp = 1.0 - fr * (fp >= 0.0 ? th : -th);
        if (npi->kind == HYMO_NODE_VOLUME) *hymo_sparse_at(&d->dF_dp, a, npi->state) += cy->piston_area * dF_dfp;
        if (nro->kind == HYMO_NODE_VOLUME) *hymo_sparse_at(&d->dF_dp, a, nro->state) -= cy->rod_side_area * dF_dfp;
        double lp, lr, dFd_ds, dFd_dsd;
        hymo_cylinder_lengths(circ, a, s[a], &lp, &lr);
        hymo_damper_force_d(circ, a, cy, lp, lr, sd[a], &dFd_ds, &dFd_dsd);
        d->dF_ds[a] = dFd_ds;
        d->dF_dsd[a] = -cy->viscous - fr * fabs(fp) * (1.0 - th * th) / cy->friction_velocity + dFd_dsd;
    }
    for (int k = 0; k < model->n_motors && model->n_cylinders + k < d->na; ++k) {
        const int a = model->n_cylinders + k;
        const hymo_node *na_ = &model->nodes[model->motors[k].node_a], *nb_ = &model->nodes[model->motors[k].node_b];
        double dT_ddp, dT_dw;
        hymo_motor_torque_d(model, k, sd[a], p, &dT_ddp, &dT_dw);
        if (na_->kind == HYMO_NODE_VOLUME) *hymo_sparse_at(&d->dF_dp, a, na_->state) += dT_ddp;
        if (nb_->kind == HYMO_NODE_VOLUME) *hymo_sparse_at(&d->dF_dp, a, nb_->state) -= dT_ddp;
        d->dF_ds[a] = 0.0;
        d->dF_dsd[a] = dT_dw;
    }
}

int hymo_circuit_derivatives(const hymo_circuit *circ, const hymo_model *model, const double *s,
                             const double *sd, const double *p, const double *u, int want_pdot,
                             hymo_circuit_derivs *d)
{
    const int np = d->np, nu = d->nu, na = d->na;
    hymo_sparse_zero(&d->dF_dp);
    force_derivatives(circ, model, s, sd, p, d);
    if (!want_pdot) return 0;

    hymo_sparse_zero(&d->dpdot_dp);
    hymo_sparse_zero(&d->dpdot_du);
    hymo_sparse_zero(&d->dpdot_ds);
    hymo_sparse_zero(&d->dpdot_dsd);
    memset(d->qnet, 0, (size_t)(np > 0 ? np : 1) * sizeof(double));
    /* d Q / d(p, u): the flows of hymo_circuit_eval, in its order; a
     * motor's dQ/dw = D (Q = D w + C_L dp from a to b) goes
     * into the sd columns like a chamber's dV/ds (outflow of a), scaled by
     * -W below */
    for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
        const hymo_element_kind *K = &hymo_element_kinds[kd];
        const int n = K->flows ? K->count(model) : 0;
        for (int i = 0; i < n; ++i) {
            const int act = K->actuator(model, i);
            if (act >= na) continue;
            hymo_edge_flow f[HYMO_ELEMENT_EDGES_MAX];
            const int nf = K->flows(circ, model, i, p, u, sd, f);
            for (int e = 0; e < nf; ++e) {
                add_flow(d, &d->slot[d->slot_base[kd] + K->n_edges * i + f[e].e], f[e].q, f[e].G, f[e].GU);
                if (act < 0) continue;
                if (f[e].a >= 0) *hymo_sparse_at(&d->dpdot_dsd, f[e].a, act) += f[e].Gsd;
                if (f[e].b >= 0) *hymo_sparse_at(&d->dpdot_dsd, f[e].b, act) -= f[e].Gsd;
            }
        }
    }

    /* per volume: W = Be/V, pdot, and the s, sd columns; then every entry
     * of row i scaled by W_i (d pdot/d p, d u, d sd) or -pdot_i W_i (d s) */
    double *W = d->w, *c_s = d->w + np, *diag = d->w + 2 * np;
    for (int i = 0; i < np; ++i) {
        const hymo_node *nd = &model->nodes[circ->vol_node[i]];
        const double Q = d->qnet[i];
        double V, Vdot, compl_sum;
        hymo_volume_size(circ, model, i, s, sd, &V, &compl_sum, &Vdot);
        if (!(V > 0.0)) return -1;
        double inv_bf, dD_dp;
        W[i] = hymo_volume_weight_state(circ, model, i, p[i], V, compl_sum, &inv_bf, &dD_dp);
        for (int q = 0; !circ->vol_fixed[i] && q < nd->n_parts; ++q) { /* the chambers' columns */
            const hymo_subvolume *sv = &model->subvolumes[nd->first_part + q];
            if (sv->cylinder < 0 || sv->cylinder >= na) continue;
            double dV_ds;
            (void)hymo_subvolume_size(circ, model, sv, s, &dV_ds);
            *hymo_sparse_at(&d->dpdot_ds, i, sv->cylinder) += dV_ds * (inv_bf + 1.0 / sv->bulk_modulus); /* dD/ds_a */
            *hymo_sparse_at(&d->dpdot_dsd, i, sv->cylinder) += dV_ds; /* dVdot/dsd_a */
        }
        c_s[i] = -W[i] * W[i] * (Q - Vdot); /* -pdot_i W_i */
        /* pressure-dependent fluid and accumulators: d pdot_i/d p_i += -pdot_i W dD/dp_i */
        diag[i] = dD_dp != 0.0 ? W[i] * W[i] * (Q - Vdot) * dD_dp : 0.0;
    }
    const hymo_sparse *Sp = &d->dpdot_dp;
    for (int k = 0; k < np; ++k)
        for (int e = Sp->col_start[k]; e < Sp->col_start[k + 1]; ++e) {
            const int i = Sp->row[e];
            Sp->value[e] *= W[i];
            if (i == k && diag[i] != 0.0) Sp->value[e] -= diag[i];
        }
    const hymo_sparse *Su = &d->dpdot_du;
    for (int e = 0; e < Su->col_start[nu]; ++e) Su->value[e] *= W[Su->row[e]];
    const hymo_sparse *Ss = &d->dpdot_ds, *Sd = &d->dpdot_dsd; /* one pattern */
    for (int e = 0; e < Ss->col_start[na]; ++e) {
        Ss->value[e] *= c_s[Ss->row[e]];
        Sd->value[e] *= -W[Sd->row[e]];
    }
    return 0;
}
