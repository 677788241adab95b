/* Lumped-fluid hydraulic circuit (SPEC §2): volumes, throttles, 4/3 valves
 * with spool dynamics, constant-pressure sources, double-acting cylinders. */
#ifndef HYMO_CIRCUIT_H
#define HYMO_CIRCUIT_H

#include <math.h>

#include "hymo/model.h"
#include "hymo/linalg.h"

/* The kinds of hydraulic element, in the order the circuit equations sum
 * their flows; their table is hymo_element_kinds[] (hydraulics/elements.h). */
typedef enum {
    HYMO_ELEMENT_THROTTLE,
    HYMO_ELEMENT_VALVE,
    HYMO_ELEMENT_RELIEF,
    HYMO_ELEMENT_CHECK,
    HYMO_ELEMENT_PUMP,
    HYMO_ELEMENT_FLOW_CONTROL,
    HYMO_ELEMENT_CYLINDER,
    HYMO_ELEMENT_MOTOR,
    HYMO_ELEMENT_KINDS
} hymo_element_kind_id;

/* One hydraulic circuit (SPEC §7 split mode): a connected component of
 * volume nodes joined by throttles, valves (any pair of their ports that are
 * volumes) and cylinders (piston node - rod node). Sources never join
 * circuits. All index lists are in increasing order. */
typedef struct {
    int n_volumes;
    int *volumes; /* pressure state indices (into p) */
    int n_valves;
    int *valves; /* valve indices; the spool state is model->valves[v].state */
    int n_throttles;
    int *throttles;
    int n_cylinders;
    int *cylinders; /* cylinder indices */
    char name[64];  /* e.g. "circuit1(cyl1)" */
    int n_reliefs;
    int *reliefs; /* relief valve indices */
    int n_checks;
    int *checks; /* check valve indices */
    /* pumps and flow control valves */
    int n_pumps;
    int *pumps;
    int n_fcs;
    int *fcs; /* flow control valve indices */
    /* hydraulic motors (also in the circuits of a split) */
    int n_motors;
    int *motors; /* motor indices; motor k is actuator model->n_cylinders + k */
} hymo_circuit_part;

/* Frees the part's index arrays (the part itself is the caller's). */
void hymo_circuit_part_free(hymo_circuit_part *part);
/* dst = src with its own copies of the index arrays: 0, or -1 out of
 * memory (then free dst with hymo_circuit_part_free). */
int hymo_circuit_part_copy(hymo_circuit_part *dst, const hymo_circuit_part *src);

/* Per-run constants resolved from the initial geometry. */
typedef struct {
    int na, np, nv;
    double *s0;      /* actuator length at t = 0 */
    double *l_pist0; /* chamber lengths at s0   */
    double *l_rod0;
    int *vol_node;          /* np: node index of each pressure state */
    hymo_circuit_part whole; /* the whole model as one part (hymo_circuit_eval) */
    /* switching states (events): NULL in the compiled model, where each
     * branch is chosen by the geometry; a run that locates its events
     * points a copy of the circuit at its own states (hymo_circuit_switching) */
    const unsigned char *sw;
    /* offsets of each element kind's switching functions in g and sw (0
     * for a kind without), and of the accumulators' (hymo_circuit_switching) */
    int sw_base[HYMO_ELEMENT_KINDS];
    int sw_accumulator;
    /* the pump speeds n(t) (rev/s, n_pumps) and the
     * flow control valves' set flows Q_set(t) (m^3/s, n_flow_controls) in
     * force at the evaluation, filled by hymo_circuit_inputs at its time;
     * NULL (the compiled circuit, a model without speed_signal or
     * set_flow_signal): the model's constants.  An evaluator of a model
     * with such signals points its own copy of the circuit at its own
     * arrays and refills them whenever the time changes, as it does U_ref. */
    const double *pump_speed, *fc_flow;
    /* constants of the evaluation (hymo_circuit_init): the fluid law's
     * table; per pressure state i of a volume without cylinder chambers
     * its volume vol_V[i] and container compliance vol_C[i] (sums over its
     * parts in their order, as the loop would form them), vol_fixed[i] = 1
     * (0: a volume with a chamber, whose size follows s), 2 if also its
     * weight W = B_e/V is a constant (a pressure-independent fluid law, no
     * accumulator at the node); per node its pressure state (-1: a
     * source); per throttle its nodes and their states */
    const struct hymo_fluid_law_s *law;
    double *vol_V, *vol_C;
    unsigned char *vol_fixed;
    int *node_state;
    struct hymo_circuit_throttle_s {
        int a, b, sa, sb;
    } *thr;
    /* the constants that follow the model's parameters (fluid.p_transition,
     * fluid.bulk_modulus, source pressures, throttle Ct: a run that changes
     * one refills its own copy, hymo_circuit_own_constants): sqrt(p_tr) of
     * the orifice law's laminar branch, W and 1/B_f of the volumes with
     * vol_fixed 2, each source node's pressure, each throttle's Ct, all in
     * the block `consts` */
    double sqrt_p_tr;
    double *vol_W, *vol_inv, *node_src, *thr_Ct;
    double *consts;
} hymo_circuit;

/* Points circ's parameter constants at a fresh block, *block (the
 * caller's to free), filled from model: for a run whose parameters change
 * (a copy of a compiled circuit shares the compiled block). */
hymo_status hymo_circuit_own_constants(hymo_circuit *circ, const hymo_model *model, double **block,
                                       hymo_error *err);
/* Refills them from model (a circuit with its own block only). */
void hymo_circuit_refresh_constants(hymo_circuit *circ, const hymo_model *model);

/* Whether a pump or flow control valve of the model
 * has a factor signal (then hymo_circuit_inputs matters). */
int hymo_circuit_has_inputs(const hymo_model *model);
/* The pump speeds n_j(t) = speed_j s_j(t) into speed[n_pumps] and the set
 * flows q_set_f s_f(t) into flow[n_flow_controls] (the constant where an
 * element has no signal).  side +1: right limit, -1: left limit, snapped
 * to a breakpoint within 1e-6 dt if dt > 0 (hymo_signal_eval_snapped, as
 * the valve references); side 0: the plain value (hymo_signal_eval, +1). */
void hymo_circuit_inputs(const hymo_model *model, double t, int side, double dt, double *speed, double *flow);
/* Speed of pump j and set flow of flow control valve f in force (the
 * circuit's inputs, else the model's constants). */
static inline double hymo_pump_speed(const hymo_circuit *circ, const hymo_model *model, int j)
{
    return circ->pump_speed ? circ->pump_speed[j] : model->pumps[j].speed;
}
static inline double hymo_flow_control_set(const hymo_circuit *circ, const hymo_model *model, int f)
{
    return circ->fc_flow ? circ->fc_flow[f] : model->flow_controls[f].q_set;
}

/* Switching functions (events), in this order (the element kinds' own
 * functions, hymo_element_kinds[], at the offsets sw_base[kind]):
 *   per cylinder c: g[2c] = l_d - l_pist, g[2c+1] = l_d - l_rod (>= 0:
 *     inside the end damper's zone; -1 without a damper);
 *   per relief valve r: g[sw_base[RELIEF] + r] = p_a - p_b - p_crack (>= 0: open);
 *   per check valve k: g[sw_base[CHECK] + 2k] = dp - p_crack (>= 0: opening),
 *     g[sw_base[CHECK] + 2k + 1] = dp - p_crack - p_open (>= 0: fully open);
 *   per 4/3 valve v: g[sw_base[VALVE] + 4v + e] = +-U - u0_e for its edges
 *     e = PA, BT (+U), PB, AT (-U) (>= 0: edge open); -1 for a valve
 *     without `edges`/`overlap`/`leakage` (its branch is the sign of U);
 *   per flow control valve f: g[sw_base[FLOW_CONTROL] + f] = dp - dp_c (>= 0: regulating).
 *   per accumulator j: g[sw_accumulator + j] = p - p0 (>= 0: charged).
 * With circ->sw set, a branch follows its switching state sw[i] (= g_i >= 0
 * when it was last located) instead of the sign of g_i, so that each branch
 * is smooth up to the located crossing. */
#define HYMO_CIRCUIT_SWITCHES_PER_CYLINDER 2
#define HYMO_CIRCUIT_SWITCHES_PER_RELIEF 1
#define HYMO_CIRCUIT_SWITCHES_PER_CHECK 2
#define HYMO_CIRCUIT_SWITCHES_PER_VALVE 4
#define HYMO_CIRCUIT_SWITCHES_PER_FLOW_CONTROL 1
#define HYMO_CIRCUIT_SWITCHES_PER_ACCUMULATOR 1
/* Number of switching functions of the model: 0 if it has neither an end
 * damper nor a relief, check, edged 4/3 or flow control valve nor an
 * accumulator (then nothing is located), else 2 na + n_relief + 2 n_check +
 * 4 n_valves + n_flow_controls + n_accumulators. */
int hymo_circuit_n_switches(const hymo_model *model);
/* g at actuator lengths s, pressures p and spool states u. */
void hymo_circuit_switching(const hymo_circuit *circ, const hymo_model *model, const double *s, const double *p,
                            const double *u, double *g);

hymo_status hymo_circuit_init(hymo_circuit *circ, const hymo_model *model, const double *s0,
                              hymo_error *err);
void hymo_circuit_free(hymo_circuit *circ);

/* Pressure of node k (volume state or source). */
static inline double hymo_node_pressure(const hymo_model *model, int node, const double *p)
{
    const hymo_node *n = &model->nodes[node];
    return n->kind == HYMO_NODE_VOLUME ? p[n->state] : n->pressure;
}

/* The same value from the circuit's compact node arrays (hymo_circuit_init). */
static inline double hymo_circuit_node_p(const hymo_circuit *circ, int node, const double *p)
{
    const int st = circ->node_state[node];
    return st >= 0 ? p[st] : circ->node_src[node];
}

/* Fluid law of the volumes (hydraulics/fluid.c): 1/B_f(p)
 * and its derivative. One table per hymo_fluid_model. */
typedef struct hymo_fluid_law_s {
    const char *name;
    double (*inv_bulk)(const hymo_model *model, double p, double *dinv_dp);
    /* V / B_f(p): the fluid's share of a volume V's compliance, m^3/Pa
     * (constant: V / B_oil, the expression SPEC §2 writes) */
    double (*compliance)(const hymo_model *model, double V, double p);
    int pressure_independent; /* 1/B_f is a constant (then a fixed volume's W is one) */
} hymo_fluid_law;
const hymo_fluid_law *hymo_fluid_law_of(const hymo_model *model);
/* Volume at p of the fluid (mixture) that fills a unit volume at p_ref:
 * the closed form of the fluid law, dV/V = -dp/B_f (tests, docs). */
double hymo_fluid_mixture_volume(const hymo_model *model, double p);
/* Lowest physical absolute pressure: p_vapour (entrained air), 0 Pa
 * (constant bulk modulus). */
double hymo_fluid_floor(const hymo_model *model);
/* Gas volume of accumulator ac at pressure p (V0 at and below p0). */
double hymo_accumulator_gas_volume(const hymo_accumulator *ac, double p);
/* Compliance -dV_g/dp of the charged accumulators at node (the switching
 * state's branch if circ->sw is set, else p >= p0), and its derivative. */
double hymo_accumulator_compliance(const hymo_circuit *circ, const hymo_model *model, int node, double p,
                                   double *dA_dp);

/* W = B_e/V of volume node k at pressure p, with its fixed-plus-chamber
 * volume V and container compliance C = sum V_s/B_s:
 *   1/B_e = 1/B_f(p) + (C + A(p))/V,  A: accumulators;
 * *inv_bf = 1/B_f(p), *dD_dp = d(V/B_f + C + A)/dp (so that
 * dW/dp = -W^2 dD_dp). With the constant law and no accumulator this is
 * the expression of SPEC §2 to the last bit. */
static inline double hymo_volume_weight(const hymo_circuit *circ, const hymo_model *model, int k, double p,
                                        double V, double compl_sum, double *inv_bf, double *dD_dp)
{
    double dinv, dacc;
    const double inv = circ->law->inv_bulk(model, p, &dinv);
    const double acc = model->n_accumulators > 0 ? hymo_accumulator_compliance(circ, model, k, p, &dacc)
                                                 : (dacc = 0.0, 0.0);
    const double Be = 1.0 / (inv + (compl_sum + acc) / V);
    *inv_bf = inv;
    *dD_dp = V * dinv + dacc;
    return Be / V;
}

/* hymo_volume_weight of the volume with pressure state i: the constants of
 * hymo_circuit_init where its weight is one (vol_fixed[i] == 2: the same
 * bits, dD_dp = 0). */
static inline double hymo_volume_weight_state(const hymo_circuit *circ, const hymo_model *model, int i, double p,
                                              double V, double compl_sum, double *inv_bf, double *dD_dp)
{
    if (circ->vol_fixed[i] == 2) {
        *inv_bf = circ->vol_inv[i], *dD_dp = 0.0;
        return circ->vol_W[i];
    }
    return hymo_volume_weight(circ, model, circ->vol_node[i], p, V, compl_sum, inv_bf, dD_dp);
}

/* Chamber lengths of cylinder c at actuator length s. */
void hymo_cylinder_lengths(const hymo_circuit *circ, int c, double s, double *l_pist, double *l_rod);

/* The branch decisions shared by hymo_circuit_eval and
 * hymo_circuit_derivatives (one place for each kink, so the derivative is
 * always taken on the branch the function uses). */

/* hymo_orifice_g(dp, p_tr) and, in *dg, its derivative on the branch taken
 * at dp (one-sided at |dp| = p_tr); sqrt_p_tr = sqrt(p_tr) (the circuit's
 * sqrt_p_tr: the same bits as computing it here). */
static inline double hymo_orifice_g_dr(double dp, double p_tr, double sqrt_p_tr, double *dg)
{
    if (dp >= p_tr) {
        double r = sqrt(dp);
        *dg = 0.5 / r;
        return r;
    }
    if (dp <= -p_tr) {
        double r = sqrt(-dp);
        *dg = 0.5 / r;
        return -r;
    }
    *dg = 1.0 / sqrt_p_tr;
    return dp / sqrt_p_tr;
}
/* hymo_orifice_g_dr's value alone (the same bits, no derivative). */
static inline double hymo_orifice_g_r(double dp, double p_tr, double sqrt_p_tr)
{
    if (dp >= p_tr) return sqrt(dp);
    if (dp <= -p_tr) return -sqrt(-dp);
    return dp / sqrt_p_tr;
}
static inline double hymo_orifice_g_d(double dp, double p_tr, double *dg)
{
    return hymo_orifice_g_dr(dp, p_tr, sqrt(p_tr), dg);
}

/* Size of sub-volume sv at actuator lengths s[na]; *dV_ds = dV/ds of its
 * cylinder (A_pist, -A_rod; 0 for a fixed part), so its rate is dV_ds * sd. */
static inline double hymo_subvolume_size(const hymo_circuit *circ, const hymo_model *model,
                                         const hymo_subvolume *sv, const double *s, double *dV_ds)
{
    if (sv->cylinder < 0) {
        *dV_ds = 0.0;
        return sv->volume;
    }
    const hymo_cylinder *cy = &model->cylinders[sv->cylinder];
    double lp, lr;
    hymo_cylinder_lengths(circ, sv->cylinder, s[sv->cylinder], &lp, &lr);
    if (sv->chamber == HYMO_CHAMBER_PISTON) {
        *dV_ds = cy->piston_area;
        return cy->piston_area * lp;
    }
    *dV_ds = -cy->rod_side_area;
    return cy->rod_side_area * lr;
}

/* Volume V, container compliance C = sum V_s/B_s and volume rate Vdot of
 * the volume with pressure state i (node circ->vol_node[i]) at actuator
 * lengths s and rates sd: the sums over its parts in their order (a volume
 * without chambers: the constants of hymo_circuit_init, the same bits). */
static inline void hymo_volume_size(const hymo_circuit *circ, const hymo_model *model, int i, const double *s,
                                    const double *sd, double *V, double *C, double *Vdot)
{
    if (circ->vol_fixed[i]) {
        *V = circ->vol_V[i], *C = circ->vol_C[i], *Vdot = 0.0;
        return;
    }
    const hymo_node *nd = &model->nodes[circ->vol_node[i]];
    double v = 0.0, vd = 0.0, c = 0.0;
    for (int q = 0; q < nd->n_parts; ++q) {
        const hymo_subvolume *sv = &model->subvolumes[nd->first_part + q];
        double dV_ds, Vs = hymo_subvolume_size(circ, model, sv, s, &dV_ds);
        if (sv->cylinder >= 0) vd += dV_ds * sd[sv->cylinder];
        v += Vs;
        c += Vs / sv->bulk_modulus;
    }
    *V = v, *C = c, *Vdot = vd;
}

/* Flow a -> b of relief valve r at pressures p and, in *G, dQ/dp_a
 * (= -dQ/dp_b) on the branch taken (the switching state's if circ->sw is
 * set, else open for dp - p_crack >= 0). */
static inline double hymo_relief_flow_d(const hymo_circuit *circ, const hymo_model *model, int r,
                                        const double *p, double *G)
{
    const hymo_relief_valve *rv = &model->relief_valves[r];
    const double dp = hymo_node_pressure(model, rv->node_a, p) - hymo_node_pressure(model, rv->node_b, p);
    double q = rv->leakage * dp;
    *G = rv->leakage;
    if (circ->sw ? circ->sw[circ->sw_base[HYMO_ELEMENT_RELIEF] + r] : dp - rv->p_crack >= 0.0) {
        q += rv->gradient * (dp - rv->p_crack);
        *G += rv->gradient;
    }
    return q;
}

/* Flow a -> b of check valve k and, in *G, dQ/dp_a (= -dQ/dp_b) on the
 * branch taken: closed, opening (x = (dp - p_crack)/p_open) or fully open;
 * the leakage G_leak dp on every branch. */
static inline double hymo_check_flow_d(const hymo_circuit *circ, const hymo_model *model, int k,
                                       const double *p, double *G)
{
    const hymo_check_valve *cv = &model->check_valves[k];
    const double dp = hymo_node_pressure(model, cv->node_a, p) - hymo_node_pressure(model, cv->node_b, p);
    const double y = dp - cv->p_crack;
    const unsigned char *sw = circ->sw ? circ->sw + circ->sw_base[HYMO_ELEMENT_CHECK] + HYMO_CIRCUIT_SWITCHES_PER_CHECK * k : NULL;
    const int full = sw ? sw[1] : y - cv->p_open >= 0.0;
    const int opening = sw ? sw[0] : y >= 0.0;
    if (!full && !opening) {
        *G = cv->leakage;
        return cv->leakage * dp;
    }
    double dg, g = hymo_orifice_g_d(dp, model->fluid.p_transition, &dg);
    if (full) {
        *G = cv->Cmax * dg + cv->leakage;
        return cv->Cmax * g + cv->leakage * dp;
    }
    /* opening: Q = C_max x g(dp), x = (dp - p_crack)/p_open.  Inside a step
     * the branch is kept past its switching point (events), where x < 0 */
    const double x = y / cv->p_open;
    if (y < 0.0) {
        /* past the cracking point (x < 0) the law continues as its tangent
         * there, C_max x g(p_crack): the same value and slope at x = 0
         * (the slope of x g(dp) at x = 0 is g(p_crack)/p_open), linear and
         * rising in dp.  x g(dp) itself has a negative slope for
         * dp < p_crack/2 (laminar; p_crack/3 turbulent) and a peak at
         * dp = 0, where Newton cycled (docs/models.md) */
        double dgc;
        const double gc = hymo_orifice_g_d(cv->p_crack, model->fluid.p_transition, &dgc);
        *G = cv->Cmax * gc / cv->p_open + cv->leakage;
        return cv->Cmax * x * gc + cv->leakage * dp;
    }
    *G = cv->Cmax * (g / cv->p_open + x * dg) + cv->leakage;
    return cv->Cmax * x * g + cv->leakage * dp;
}

/* ---- pumps, flow control valves, 4/3 valve edges ---- */

/* Flow in -> out of pump j, Q = eta_v D n - C_L (p_out - p_in), and in *G
 * dQ/dp_in (= -dQ/dp_out = C_L). Smooth: no switching point.  n is the
 * speed in force (hymo_pump_speed: the circuit's inputs at its time). */
static inline double hymo_pump_flow_d(const hymo_circuit *circ, const hymo_model *model, int j, const double *p,
                                      double *G)
{
    const hymo_pump *pu = &model->pumps[j];
    const double dp = hymo_node_pressure(model, pu->node_out, p) - hymo_node_pressure(model, pu->node_in, p);
    *G = pu->leakage;
    return pu->eta_v * pu->displacement * hymo_pump_speed(circ, model, j) - pu->leakage * dp;
}

/* Hydraulic power of pump j, (p_out - p_in) Q in W, and its flow in *Q
 * (for the output: per-element flows and powers). */
static inline double hymo_pump_power(const hymo_circuit *circ, const hymo_model *model, int j, const double *p,
                                     double *Q)
{
    const hymo_pump *pu = &model->pumps[j];
    double G;
    *Q = hymo_pump_flow_d(circ, model, j, p, &G);
    return (hymo_node_pressure(model, pu->node_out, p) - hymo_node_pressure(model, pu->node_in, p)) * *Q;
}

/* Flow a -> b of flow control valve f and, in *G, dQ/dp_a (= -dQ/dp_b) on
 * the branch taken (the switching state's if circ->sw is set, else
 * regulating for dp - dp_c >= 0): Q_set, or Q_set g(dp)/g(dp_c) below,
 * with the set flow in force (hymo_flow_control_set). */
static inline double hymo_flow_control_flow_d(const hymo_circuit *circ, const hymo_model *model, int f,
                                              const double *p, double *G)
{
    const hymo_flow_control *fc = &model->flow_controls[f];
    const double dp = hymo_node_pressure(model, fc->node_a, p) - hymo_node_pressure(model, fc->node_b, p);
    const double q_set = hymo_flow_control_set(circ, model, f); /* Q_set(t) */
    if (circ->sw ? circ->sw[circ->sw_base[HYMO_ELEMENT_FLOW_CONTROL] + f] : dp - fc->dp_c >= 0.0) {
        *G = 0.0;
        return q_set;
    }
    double dgc, gc = hymo_orifice_g_d(fc->dp_c, model->fluid.p_transition, &dgc);
    double dg, g = hymo_orifice_g_d(dp, model->fluid.p_transition, &dg);
    *G = q_set / gc * dg;
    return q_set / gc * g;
}

/* Opening factor of edge e of valve v at spool state U on the branch taken
 * (the switching state's if circ->sw is set, else open for +-U - u0 >= 0):
 * +-U - u0_e or 0, and in *dx its derivative dx/dU. The plain valve (no
 * edges) opens PA, BT for U >= 0 and PB, AT for U < 0 with x = |U|. */
static inline double hymo_valve_edge_opening(const hymo_circuit *circ, const hymo_model *model, int v, int e,
                                             double U, double *dx)
{
    const double sgn = e < 2 ? 1.0 : -1.0;
    const hymo_valve_edges *ve = model->valve_edges ? &model->valve_edges[v] : NULL;
    if (!ve || !ve->on) {
        if ((e < 2) == (U >= 0.0)) {
            *dx = sgn;
            return sgn * U;
        }
        *dx = 0.0;
        return 0.0;
    }
    const double y = sgn * U - ve->u0[e];
    if (circ->sw ? circ->sw[circ->sw_base[HYMO_ELEMENT_VALVE] + HYMO_CIRCUIT_SWITCHES_PER_VALVE * v + e] : y >= 0.0) {
        *dx = sgn;
        return y;
    }
    *dx = 0.0;
    return 0.0;
}

/* Nodes of edge e of valve va (flow from -> to). */
static inline void hymo_valve_edge_nodes(const hymo_valve *va, int e, int *from, int *to)
{
    static const int fr[4] = {0, 3, 0, 2}, tt[4] = {2, 1, 3, 1}; /* P T A B = 0 1 2 3 */
    const int ports[4] = {va->port_P, va->port_T, va->port_A, va->port_B};
    *from = ports[fr[e]];
    *to = ports[tt[e]];
}

/* Flow through edge e of valve v (from -> to as hymo_valve_edge_nodes) at
 * spool state U, with dQ/dp_from (= -dQ/dp_to) in *G and dQ/dU in *GU. */
static inline double hymo_valve_edge_flow_d(const hymo_circuit *circ, const hymo_model *model, int v, int e,
                                            double U, const double *p, double *G, double *GU)
{
    const hymo_valve *va = &model->valves[v];
    const hymo_valve_edges *ve = model->valve_edges ? &model->valve_edges[v] : NULL;
    int nf, nt;
    hymo_valve_edge_nodes(va, e, &nf, &nt);
    const double dp = hymo_node_pressure(model, nf, p) - hymo_node_pressure(model, nt, p);
    double dx, x = hymo_valve_edge_opening(circ, model, v, e, U, &dx);
    const double C = ve && ve->on ? ve->C[e] : va->Cv;
    const double Gl = ve && ve->on ? ve->leakage : 0.0;
    double dg, g = hymo_orifice_g_d(dp, model->fluid.p_transition, &dg);
    *G = C * x * dg + Gl;
    *GU = C * dx * g;
    return C * x * g + Gl * dp;
}

/* End-damper force of cylinder c (cy) at chamber lengths lp, lr and rate
 * sd, with its derivatives d/ds (dlp/ds = 1, dlr/ds = -1) and d/dsd on the
 * branch taken: the switching state's if circ->sw is set, else the
 * geometry's (one-sided at the damper entry l = l_d). */
static inline double hymo_damper_force_d(const hymo_circuit *circ, int c, const hymo_cylinder *cy, double lp,
                                         double lr, double sd, double *dF_ds, double *dF_dsd)
{
    if (cy->has_damper) {
        const unsigned char *sw = circ->sw ? circ->sw + circ->sw_base[HYMO_ELEMENT_CYLINDER] + HYMO_CIRCUIT_SWITCHES_PER_CYLINDER * c : NULL;
        if (sw ? sw[0] : lp <= cy->damper_length) {
            *dF_ds = -cy->damper_stiffness;
            *dF_dsd = -cy->damper_damping;
            return cy->damper_stiffness * (cy->damper_length - lp) - cy->damper_damping * sd;
        }
        if (sw ? sw[1] : lr <= cy->damper_length) {
            *dF_ds = -cy->damper_stiffness;
            *dF_dsd = -cy->damper_damping;
            return -cy->damper_stiffness * (cy->damper_length - lr) - cy->damper_damping * sd;
        }
    }
    *dF_ds = 0.0;
    *dF_dsd = 0.0;
    return 0.0;
}

/* Hydraulic motor k (docs/model-format.md "motors") at joint
 * rate w and pressures p: the torque (force on a prismatic joint)
 *   T = D dp - (1 - eta_hm) D |dp| tanh(w/w_s) - c_v w,  dp = p_a - p_b,
 * with dT/d(dp) and dT/dw (|dp| one-sided at dp = 0, taken as dp > 0, as
 * the cylinders' seal friction), and the flow a -> b through the motor
 *   Q = D w + C_L dp  (dQ/dw = D, dQ/d(dp) = C_L). */
static inline double hymo_motor_torque_d(const hymo_model *model, int k, double w, const double *p, double *dT_ddp,
                                         double *dT_dw)
{
    const hymo_motor *mo = &model->motors[k];
    const double dp = hymo_node_pressure(model, mo->node_a, p) - hymo_node_pressure(model, mo->node_b, p);
    const double fr = 1.0 - mo->efficiency, th = tanh(w / mo->friction_velocity), D = mo->displacement;
    *dT_ddp = D * (1.0 - fr * (dp >= 0.0 ? th : -th));
    *dT_dw = -fr * D * fabs(dp) * (1.0 - th * th) / mo->friction_velocity - mo->viscous;
    return D * dp - fr * D * fabs(dp) * th - mo->viscous * w;
}
static inline double hymo_motor_flow(const hymo_model *model, int k, double w, const double *p)
{
    const hymo_motor *mo = &model->motors[k];
    const double dp = hymo_node_pressure(model, mo->node_a, p) - hymo_node_pressure(model, mo->node_b, p);
    return mo->displacement * w + mo->leakage * dp;
}

/* End-damper force of cylinder c (SPEC §2, added to F_s). */
double hymo_cylinder_damper_force(const hymo_model *model, const hymo_circuit *circ, int c, double s,
                                  double sd);

/* Actuator force F_s of cylinder c (SPEC §2: pressures, viscous term, seal
 * friction, end dampers) at length s, rate sd and pressures p[np]. */
double hymo_cylinder_force(const hymo_model *model, const hymo_circuit *circ, int c, double s, double sd,
                           const double *p);

/* Right-hand sides and actuator forces:
 *   pdot[np] = h(p, s, sd, U), udot[nv] = (U_ref - U)/tau, force[na] = F_s.
 * Any output pointer may be NULL. Returns 0, or -1 if a volume became
 * non-positive (then outputs are undefined). */
int hymo_circuit_eval(const hymo_circuit *circ, const hymo_model *model, const double *s,
                      const double *sd, const double *p, const double *u, const double *u_ref,
                      double *pdot, double *udot, double *force);

/* Partial derivatives of hymo_circuit_eval's pdot and force at a point,
 * sparse with fixed patterns from the model's connections (set by
 * hymo_circuit_derivs_alloc; hymo_sparse_get(&d.dpdot_dp, i, k) reads an
 * entry, 0 outside the pattern).  No array is np x np: the cost and the
 * memory grow with the connections, not with the square of the volumes. */
typedef struct {
    int np, nu, na;
    hymo_sparse dpdot_dp;  /* np x np: (i, k) = d pdot_i / d p_k */
    hymo_sparse dpdot_du;  /* np x nu: (i, v) = d pdot_i / d u_v (v = spool state index) */
    hymo_sparse dpdot_ds;  /* np x na: (i, a) = d pdot_i / d s_a */
    hymo_sparse dpdot_dsd; /* np x na: (i, a) = d pdot_i / d sd_a (the pattern of dpdot_ds) */
    hymo_sparse dF_dp;     /* na x np: (a, k) = d F_a / d p_k */
    double *dF_ds;         /* na: d F_a / d s_a  (F_a depends only on its own s_a, sd_a and p) */
    double *dF_dsd;        /* na: d F_a / d sd_a */
    double *qnet;          /* np: scratch (net inflow of each volume) */
    double *w;             /* 3 np: scratch (per-volume weights) */
    /* per flow edge (hymo_element_kinds' n_edges per element, the kinds in
     * their order, kind K's from slot[slot_base[K]]): its volumes' states
     * ia, ib (-1: a source) and the
     * positions of its entries (ia, ia), (ia, ib), (ib, ia), (ib, ib) in
     * dpdot_dp.value and (ia, v), (ib, v) in dpdot_du.value (-1: none), so
     * that filling them needs no search */
    struct hymo_flow_slot_s {
        int ia, ib, aa, ab, ba, bb, ua, ub;
    } *slot;
    int slot_base[HYMO_ELEMENT_KINDS];
} hymo_circuit_derivs;

/* Allocates (zeroed) derivatives for np pressures, nu spools, na actuators
 * of the model, with the patterns of its connections. */
hymo_status hymo_circuit_derivs_alloc(hymo_circuit_derivs *d, const hymo_model *model, int np, int nu, int na,
                                      hymo_error *err);
void hymo_circuit_derivs_free(hymo_circuit_derivs *d);

/* Analytic derivatives at (s, sd, p, u) for the whole model (circ->whole).
 * With want_pdot = 0 only the dF_* arrays are filled (used when the
 * pressures are given from outside).  Returns 0, or -1 if a volume is
 * non-positive (as hymo_circuit_eval). No allocation.
 * At a kink (orifice |dp| = p_tr, valve U = 0, damper entry, fp = 0) the
 * derivative is the one-sided one of the branch hymo_circuit_eval takes
 * there (fp = 0 counts as fp > 0). d must be allocated for circ's sizes. */
int hymo_circuit_derivatives(const hymo_circuit *circ, const hymo_model *model, const double *s,
                             const double *sd, const double *p, const double *u, int want_pdot,
                             hymo_circuit_derivs *d);

/* Splits the model into its circuits, ordered by their smallest cylinder
 * index (circuits without a cylinder next by their smallest motor, then by
 * smallest volume). A motor joins its two ports' volumes into one circuit.
 * A throttle, valve, cylinder or motor touching no volume is
 * a HYMO_ERR_MODEL error naming it.  Free with hymo_circuit_parts_free. */
hymo_status hymo_circuit_partition(const hymo_model *model, hymo_circuit_part **parts, int *n_parts,
                                   hymo_error *err);
void hymo_circuit_parts_free(hymo_circuit_part *parts, int n_parts);

/* The coupled actuators of a split co-simulation are the
 * cylinders, then the hydraulic motors (actuator n_cylinders + k, its
 * "length" the joint coordinate, its force the joint torque).  Their
 * count, name, and the two hydraulic ports: a cylinder's piston and rod
 * chambers, a motor's ports a and b; w0, w1 the weights of the ports'
 * pressures in the ideal actuator force (A_pist, -A_rod; D, -D). */
static inline int hymo_coupled_actuators(const hymo_model *model) { return model->n_cylinders + model->n_motors; }
static inline const char *hymo_actuator_name(const hymo_model *model, int a)
{
    return a < model->n_cylinders ? model->cylinders[a].name : model->motors[a - model->n_cylinders].name;
}
static inline void hymo_actuator_ports(const hymo_model *model, int a, int *node0, int *node1, double *w0, double *w1)
{
    if (a < model->n_cylinders) {
        const hymo_cylinder *cy = &model->cylinders[a];
        *node0 = cy->node_piston, *node1 = cy->node_rod;
        *w0 = cy->piston_area, *w1 = -cy->rod_side_area;
    } else {
        const hymo_motor *mo = &model->motors[a - model->n_cylinders];
        *node0 = mo->node_a, *node1 = mo->node_b;
        *w0 = mo->displacement, *w1 = -mo->displacement;
    }
}

/* As hymo_circuit_eval, restricted to one part: writes pdot only for the
 * part's volumes, udot only for its spools, force only for its cylinders
 * (other entries untouched); reads s, sd only of its cylinders. Full-size
 * arrays (np, nu, na); u_ref is indexed by valve, u/udot by spool state.
 * Returns 0, or -1 if a volume became non-positive. */
int hymo_circuit_eval_part(const hymo_circuit *circ, const hymo_model *model, const hymo_circuit_part *part,
                           const double *s, const double *sd, const double *p, const double *u,
                           const double *u_ref, double *pdot, double *udot, double *force);

/* Same, returning the node index of the first non-positive volume, or -1
 * if all volumes are positive (for messages that name the volume). */
int hymo_circuit_eval_part_node(const hymo_circuit *circ, const hymo_model *model,
                                const hymo_circuit_part *part, const double *s, const double *sd,
                                const double *p, const double *u, const double *u_ref, double *pdot,
                                double *udot, double *force);

/* The sizes of the volumes at one motion (s, sd), kept by one evaluator
 * between its calls of hymo_circuit_eval_part_cached: per pressure state V,
 * C, Vdot of hymo_volume_size and, where the weight does not depend on p
 * (a pressure-independent fluid law, no accumulator), W; they are reused
 * while s and sd keep their bits (the stages and Newton iterations of an
 * internal step at one time) and recomputed when either changes.  The
 * evaluation forms the sizes and weights before the flows (W of every
 * volume of the part in W: held with w_const, else of the evaluation's
 * pressures), so that their divisions overlap the orifices' roots. */
typedef struct {
    int na, np, w_const;
    double inv_bf;            /* w_const: the fluid law's 1/B_f */
    double *s, *sd;           /* na: the motion of the sizes held */
    double *V, *C, *Vdot, *W; /* np */
    unsigned char *held;      /* np: 1 if V, C, Vdot (and W when w_const) are held */
} hymo_volume_cache;
/* 0, or -1 out of memory (vc zeroed then). */
int hymo_volume_cache_init(hymo_volume_cache *vc, const hymo_circuit *circ, const hymo_model *model);
void hymo_volume_cache_free(hymo_volume_cache *vc);
/* hymo_circuit_eval_part_node with the volume sizes of vc (NULL: none):
 * the same bits. */
int hymo_circuit_eval_part_cached(const hymo_circuit *circ, const hymo_model *model,
                                  const hymo_circuit_part *part, const double *s, const double *sd,
                                  const double *p, const double *u, const double *u_ref, double *pdot,
                                  double *udot, double *force, hymo_volume_cache *vc);

/* Initial pressures (SPEC §3): given the actuator forces f_static[na] that
 * hold the mechanism at rest, fills p[np]: given pressures as stated,
 * piston (or rod) chambers from the force balance, and every other
 * "static" volume from the volume it is joined to through a throttle. */
hymo_status hymo_circuit_static_pressures(const hymo_circuit *circ, const hymo_model *model,
                                          const double *s, const double *f_static, double *p,
                                          hymo_error *err);

#endif
