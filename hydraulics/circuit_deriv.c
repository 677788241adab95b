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
 * Branch fluid: B_oil is the fluid law's B_f(p_i) and D_i also holds the
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

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t n_elems(int rows, int cols)
{
    size_t n = (size_t)rows * (size_t)cols;
    return n > 0 ? n : 1;
}

hymo_status hymo_circuit_derivs_alloc(hymo_circuit_derivs *d, int np, int nu, int na, hymo_error *err)
{
    memset(d, 0, sizeof *d);
    if (np < 0 || nu < 0 || na < 0)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "circuit derivatives: negative size (np %d, nu %d, na %d)",
                              np, nu, na);
    d->np = np;
    d->nu = nu;
    d->na = na;
    d->dpdot_dp = calloc(n_elems(np, np), sizeof(double));
    d->dpdot_du = calloc(n_elems(np, nu), sizeof(double));
    d->dpdot_ds = calloc(n_elems(np, na), sizeof(double));
    d->dpdot_dsd = calloc(n_elems(np, na), sizeof(double));
    d->dF_dp = calloc(n_elems(na, np), sizeof(double));
    d->dF_ds = calloc(n_elems(na, 1), sizeof(double));
    d->dF_dsd = calloc(n_elems(na, 1), sizeof(double));
    d->qnet = calloc(n_elems(np, 1), sizeof(double));
    if (!d->dpdot_dp || !d->dpdot_du || !d->dpdot_ds || !d->dpdot_dsd || !d->dF_dp || !d->dF_ds || !d->dF_dsd ||
        !d->qnet) {
        hymo_circuit_derivs_free(d);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (circuit derivatives)");
    }
    return HYMO_OK;
}

void hymo_circuit_derivs_free(hymo_circuit_derivs *d)
{
    free(d->dpdot_dp);
    free(d->dpdot_du);
    free(d->dpdot_ds);
    free(d->dpdot_dsd);
    free(d->dF_dp);
    free(d->dF_ds);
    free(d->dF_dsd);
    free(d->qnet);
    memset(d, 0, sizeof *d);
}

typedef struct {
    const hymo_model *model;
    hymo_circuit_derivs *d;
} flow_acc;

/* A flow q from node nf to node nt with dq/dp_nf = G, dq/dp_nt = -G and, if
 * v >= 0, dq/du_v = qu: its d Q_i/d(p, u) in the rows of the volumes. */
static inline void add_flow(const flow_acc *f, int nf, int nt, double q, double G, int v, double qu)
{
    const hymo_node *a = &f->model->nodes[nf], *b = &f->model->nodes[nt];
    const int np = f->d->np, nu = f->d->nu;
    double *qnet = f->d->qnet; /* net inflow Q_i, for d pdot / d s */
    const int ia = a->kind == HYMO_NODE_VOLUME ? a->state : -1;
    const int ib = b->kind == HYMO_NODE_VOLUME ? b->state : -1;
    if (ia >= 0) { /* outflow of a */
        double *row = f->d->dpdot_dp + (size_t)ia * np;
        row[ia] -= G;
        if (ib >= 0) row[ib] += G;
        if (v >= 0) f->d->dpdot_du[(size_t)ia * nu + v] -= qu;
        qnet[ia] -= q;
    }
    if (ib >= 0) { /* inflow of b */
        double *row = f->d->dpdot_dp + (size_t)ib * np;
        if (ia >= 0) row[ia] += G;
        row[ib] -= G;
        if (v >= 0) f->d->dpdot_du[(size_t)ib * nu + v] += qu;
        qnet[ib] += q;
    }
}

/* Valve edge from -> to with opening c = Cv |U| and dc/dU = dc: q = c g(dp). */
static inline void add_valve_edge(const flow_acc *f, const double *p, double p_tr, int nf, int nt, double c,
                                  double dc, int v)
{
    double dg, g = hymo_orifice_g_d(hymo_node_pressure(f->model, nf, p) - hymo_node_pressure(f->model, nt, p),
                                    p_tr, &dg);
    add_flow(f, nf, nt, c * g, c * dg, v, dc * g);
}

static void force_derivatives(const hymo_circuit *circ, const hymo_model *model, const double *s,
                              const double *sd, const double *p, hymo_circuit_derivs *d)
{
    const int np = d->np;
    for (int a = 0; a < d->na && a < model->n_cylinders; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const hymo_node *npi = &model->nodes[cy->node_piston], *nro = &model->nodes[cy->node_rod];
        double fp = hymo_node_pressure(model, cy->node_piston, p) * cy->piston_area -
                    hymo_node_pressure(model, cy->node_rod, p) * cy->rod_side_area;
        double fr = 1.0 - cy->efficiency, th = tanh(sd[a] / cy->friction_velocity);
        /* d|fp|/dfp = sgn(fp), fp = 0 taken as fp > 0 */
        double dF_dfp = 1.0 - fr * (fp >= 0.0 ? th : -th);
        double *row = d->dF_dp + (size_t)a * np;
        if (npi->kind == HYMO_NODE_VOLUME) row[npi->state] += cy->piston_area * dF_dfp;
        if (nro->kind == HYMO_NODE_VOLUME) row[nro->state] -= cy->rod_side_area * dF_dfp;
        double lp, lr, dFd_ds, dFd_dsd;
        hymo_cylinder_lengths(circ, a, s[a], &lp, &lr);
        hymo_damper_force_d(circ, a, cy, lp, lr, sd[a], &dFd_ds, &dFd_dsd);
        d->dF_ds[a] = dFd_ds;
        d->dF_dsd[a] = -cy->viscous - fr * fabs(fp) * (1.0 - th * th) / cy->friction_velocity + dFd_dsd;
    }
    for (int k = 0; k < model->n_motors && model->n_cylinders + k < d->na; ++k) { /* motor branch */
        const int a = model->n_cylinders + k;
        const hymo_node *na_ = &model->nodes[model->motors[k].node_a], *nb_ = &model->nodes[model->motors[k].node_b];
        double dT_ddp, dT_dw;
        hymo_motor_torque_d(model, k, sd[a], p, &dT_ddp, &dT_dw);
        double *row = d->dF_dp + (size_t)a * np;
        if (na_->kind == HYMO_NODE_VOLUME) row[na_->state] += dT_ddp;
        if (nb_->kind == HYMO_NODE_VOLUME) row[nb_->state] -= dT_ddp;
        d->dF_ds[a] = 0.0;
        d->dF_dsd[a] = dT_dw;
    }
}

int hymo_circuit_derivatives(const hymo_circuit *circ, const hymo_model *model, const double *s,
                             const double *sd, const double *p, const double *u, int want_pdot,
                             hymo_circuit_derivs *d)
{
    const int np = d->np, nu = d->nu, na = d->na;
    memset(d->dF_dp, 0, n_elems(na, np) * sizeof(double));
    force_derivatives(circ, model, s, sd, p, d);
    if (!want_pdot) return 0;

    memset(d->dpdot_dp, 0, n_elems(np, np) * sizeof(double));
    memset(d->dpdot_du, 0, n_elems(np, nu) * sizeof(double));
    memset(d->dpdot_ds, 0, n_elems(np, na) * sizeof(double));
    memset(d->dpdot_dsd, 0, n_elems(np, na) * sizeof(double));
    memset(d->qnet, 0, n_elems(np, 1) * sizeof(double));
    const double p_tr = model->fluid.p_transition;
    const flow_acc f = {model, d};

    /* d Q / d(p, u): same element order and branches as hymo_circuit_eval */
    for (int t = 0; t < model->n_throttles; ++t) {
        const hymo_throttle *th = &model->throttles[t];
        double dg, g = hymo_orifice_g_d(
                       hymo_node_pressure(model, th->node_a, p) - hymo_node_pressure(model, th->node_b, p), p_tr, &dg);
        add_flow(&f, th->node_a, th->node_b, th->Ct * g, th->Ct * dg, -1, 0.0);
    }
    for (int v = 0; v < model->n_valves; ++v) {
        const hymo_valve *va = &model->valves[v];
        const double U = u[va->state];
        if (model->valve_edges && model->valve_edges[v].on) { /* edges, overlap, leakage */
            for (int e = 0; e < 4; ++e) {
                int nf, nt;
                double G, GU, q = hymo_valve_edge_flow_d(circ, model, v, e, U, p, &G, &GU);
                hymo_valve_edge_nodes(va, e, &nf, &nt);
                add_flow(&f, nf, nt, q, G, va->state, GU);
            }
            continue;
        }
        if (U >= 0.0) { /* q = Cv U g */
            add_valve_edge(&f, p, p_tr, va->port_P, va->port_A, va->Cv * U, va->Cv, va->state);
            add_valve_edge(&f, p, p_tr, va->port_B, va->port_T, va->Cv * U, va->Cv, va->state);
        } else { /* q = -Cv U g */
            add_valve_edge(&f, p, p_tr, va->port_A, va->port_T, -va->Cv * U, -va->Cv, va->state);
            add_valve_edge(&f, p, p_tr, va->port_P, va->port_B, -va->Cv * U, -va->Cv, va->state);
        }
    }
    for (int r = 0; r < model->n_relief_valves; ++r) {
        double G, q = hymo_relief_flow_d(circ, model, r, p, &G);
        add_flow(&f, model->relief_valves[r].node_a, model->relief_valves[r].node_b, q, G, -1, 0.0);
    }
    for (int k = 0; k < model->n_check_valves; ++k) {
        double G, q = hymo_check_flow_d(circ, model, k, p, &G);
        add_flow(&f, model->check_valves[k].node_a, model->check_valves[k].node_b, q, G, -1, 0.0);
    }
    for (int j = 0; j < model->n_pumps; ++j) {
        double G, q = hymo_pump_flow_d(model, j, p, &G);
        add_flow(&f, model->pumps[j].node_in, model->pumps[j].node_out, q, G, -1, 0.0);
    }
    for (int k = 0; k < model->n_flow_controls; ++k) {
        double G, q = hymo_flow_control_flow_d(circ, model, k, p, &G);
        add_flow(&f, model->flow_controls[k].node_a, model->flow_controls[k].node_b, q, G, -1, 0.0);
    }
    /* motors (motor branch): Q = D w + C_L dp from a to b; dQ/dw = D goes into the
     * sd columns like a chamber's dV/ds (outflow of a), scaled by -W below */
    for (int k = 0; k < model->n_motors && model->n_cylinders + k < na; ++k) {
        const hymo_motor *mo = &model->motors[k];
        const int a = model->n_cylinders + k;
        add_flow(&f, mo->node_a, mo->node_b, hymo_motor_flow(model, k, sd[a], p), mo->leakage, -1, 0.0);
        const hymo_node *pa = &model->nodes[mo->node_a], *pb = &model->nodes[mo->node_b];
        if (pa->kind == HYMO_NODE_VOLUME) d->dpdot_dsd[(size_t)pa->state * na + a] += mo->displacement;
        if (pb->kind == HYMO_NODE_VOLUME) d->dpdot_dsd[(size_t)pb->state * na + a] -= mo->displacement;
    }

    /* per volume: W = Be/V, pdot, and the s, sd columns */
    for (int i = 0; i < np; ++i) {
        const hymo_node *nd = &model->nodes[circ->vol_node[i]];
        double *ds_row = d->dpdot_ds + (size_t)i * na, *dsd_row = d->dpdot_dsd + (size_t)i * na;
        const double Q = d->qnet[i];
        double V = 0.0, Vdot = 0.0, compl_sum = 0.0;
        int has_chamber = 0;
        for (int k = 0; k < model->n_motors && !has_chamber; ++k) /* a motor port: its sd column */
            has_chamber = model->motors[k].node_a == circ->vol_node[i] || model->motors[k].node_b == circ->vol_node[i];
        for (int q = 0; q < nd->n_parts; ++q) {
            const hymo_subvolume *sv = &model->subvolumes[nd->first_part + q];
            double dV_ds, Vs = hymo_subvolume_size(circ, model, sv, s, &dV_ds);
            V += Vs;
            compl_sum += Vs / sv->bulk_modulus;
            if (sv->cylinder >= 0) {
                Vdot += dV_ds * sd[sv->cylinder];
                has_chamber = 1;
            }
        }
        if (!(V > 0.0)) return -1;
        double inv_bf, dD_dp;
        const double W = hymo_volume_weight(circ, model, circ->vol_node[i], p[i], V, compl_sum, &inv_bf, &dD_dp);
        for (int q = 0; has_chamber && q < nd->n_parts; ++q) {
            const hymo_subvolume *sv = &model->subvolumes[nd->first_part + q];
            if (sv->cylinder < 0) continue;
            double dV_ds;
            (void)hymo_subvolume_size(circ, model, sv, s, &dV_ds);
            ds_row[sv->cylinder] += dV_ds * (inv_bf + 1.0 / sv->bulk_modulus); /* dD/ds_a */
            dsd_row[sv->cylinder] += dV_ds;                                    /* dVdot/dsd_a */
        }
        double *row = d->dpdot_dp + (size_t)i * np;
        for (int k = 0; k < np; ++k) row[k] *= W;
        /* pressure-dependent fluid and accumulators: d pdot_i/d p_i += -pdot_i W dD/dp_i */
        if (dD_dp != 0.0) row[i] -= W * W * (Q - Vdot) * dD_dp;
        row = d->dpdot_du + (size_t)i * nu;
        for (int k = 0; k < nu; ++k) row[k] *= W;
        if (has_chamber) {
            const double c_s = -W * W * (Q - Vdot); /* -pdot_i W_i */
            for (int a = 0; a < na; ++a) {
                ds_row[a] *= c_s;
                dsd_row[a] *= -W;
            }
        }
    }
    return 0;
}
