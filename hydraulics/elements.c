/* The kinds of hydraulic element (hydraulics/elements.h).  The flow laws are
 * those of circuit.h: the orifice law hymo_orifice_g and the valve,
 * relief, check, pump, flow control and motor laws (tests/engine/test_sensors.c
 * checks the output's sums against the circuit's pressure rates). */
#include "elements.h"

static double node_p(const hymo_model *m, int node, const double *p) { return hymo_node_pressure(m, node, p); }

/* net inflow bookkeeping: q from node a to node b */
static void move(double *qnode, int a, int b, double q)
{
    qnode[a] -= q;
    qnode[b] += q;
}

/* the flow f of edge e from node nf to node nt */
static void edge_flow(const hymo_circuit *circ, int e, int nf, int nt, double q, double G, hymo_edge_flow *f)
{
    f->e = e, f->a = circ->node_state[nf], f->b = circ->node_state[nt];
    f->q = q, f->G = G, f->GU = 0.0, f->Gsd = 0.0;
}

/* q from pressure state a to b (-1: a source) into the pressure rates */
static inline void add_rate(double *pdot, int a, int b, double q)
{
    if (a >= 0) pdot[a] -= q;
    if (b >= 0) pdot[b] += q;
}

static int no_actuator(const hymo_model *m, int i) { return (void)m, (void)i, -1; }

/* ---- throttles: the flow a -> b, Ct g(p_a - p_b) ---- */

static int throttle_count(const hymo_model *m) { return m->n_throttles; }
static const char *throttle_name(const hymo_model *m, int i) { return m->throttles[i].name; }
static void throttle_ports(const hymo_model *m, int i, int *node)
{
    node[0] = m->throttles[i].node_a, node[1] = m->throttles[i].node_b;
}
static void throttle_edge(const hymo_model *m, int i, int e, int *from, int *to, int *spool)
{
    (void)e;
    *from = m->throttles[i].node_a, *to = m->throttles[i].node_b, *spool = -1;
}
/* from the circuit's compact throttle arrays (hymo_circuit_init) */
static int throttle_flows(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                          const double *sd, hymo_edge_flow *f)
{
    (void)u, (void)sd;
    const struct hymo_circuit_throttle_s *th = &circ->thr[i];
    const double pa = th->sa >= 0 ? p[th->sa] : circ->node_src[th->a];
    const double pb = th->sb >= 0 ? p[th->sb] : circ->node_src[th->b];
    double dg, g = hymo_orifice_g_dr(pa - pb, m->fluid.p_transition, circ->sqrt_p_tr, &dg);
    f->e = 0, f->a = th->sa, f->b = th->sb;
    f->q = circ->thr_Ct[i] * g, f->G = circ->thr_Ct[i] * dg, f->GU = 0.0, f->Gsd = 0.0;
    return 1;
}
static void throttle_rates(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                           const double *sd, double *pdot)
{
    (void)u, (void)sd;
    const struct hymo_circuit_throttle_s *th = &circ->thr[i];
    const double pa = th->sa >= 0 ? p[th->sa] : circ->node_src[th->a];
    const double pb = th->sb >= 0 ? p[th->sb] : circ->node_src[th->b];
    add_rate(pdot, th->sa, th->sb, circ->thr_Ct[i] * hymo_orifice_g_r(pa - pb, m->fluid.p_transition, circ->sqrt_p_tr));
}
static void throttle_output(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                            const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)circ, (void)u, (void)w;
    const hymo_throttle *th = &m->throttles[i];
    q[0] = th->Ct * hymo_orifice_g(node_p(m, th->node_a, p) - node_p(m, th->node_b, p), m->fluid.p_transition);
    move(qnode, th->node_a, th->node_b, q[0]);
}

/* ---- 4/3 valves: the four metering edges P->A, B->T, P->B, A->T ---- */

static int valve_count(const hymo_model *m) { return m->n_valves; }
static const char *valve_name(const hymo_model *m, int i) { return m->valves[i].name; }
static const char *const valve_cols[] = {"P-A", "B-T", "P-B", "A-T", "A", "B"};
static void valve_ports(const hymo_model *m, int i, int *node)
{
    const hymo_valve *va = &m->valves[i];
    node[0] = va->port_P, node[1] = va->port_T, node[2] = va->port_A, node[3] = va->port_B;
}
static void valve_edge(const hymo_model *m, int i, int e, int *from, int *to, int *spool)
{
    hymo_valve_edge_nodes(&m->valves[i], e, from, to);
    *spool = m->valves[i].state;
}
/* edge e of a plain valve (no edges, overlap or leakage) with opening
 * c = Cv |U| and dc/dU = dc: q = c g(dp) */
static void plain_edge(const hymo_circuit *circ, const hymo_model *m, const hymo_valve *va, int e, const double *p,
                       double c, double dc, hymo_edge_flow *f)
{
    int nf, nt;
    hymo_valve_edge_nodes(va, e, &nf, &nt);
    double dg, g = hymo_orifice_g_dr(hymo_node_pressure(m, nf, p) - hymo_node_pressure(m, nt, p),
                                     m->fluid.p_transition, circ->sqrt_p_tr, &dg);
    edge_flow(circ, e, nf, nt, c * g, c * dg, f);
    f->GU = dc * g;
}
/* with edges: all four (the edge law of circuit.h); a plain valve: P->A,
 * B->T for U >= 0, else A->T, P->B */
static int valve_flows(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                       const double *sd, hymo_edge_flow *f)
{
    (void)sd;
    const hymo_valve *va = &m->valves[i];
    const double U = u[va->state];
    if (m->valve_edges && m->valve_edges[i].on) {
        for (int e = 0; e < 4; ++e) {
            int nf, nt;
            double G, GU, q = hymo_valve_edge_flow_d(circ, m, i, e, U, p, &G, &GU);
            hymo_valve_edge_nodes(va, e, &nf, &nt);
            edge_flow(circ, e, nf, nt, q, G, &f[e]);
            f[e].GU = GU;
        }
        return 4;
    }
    if (U >= 0.0) {
        plain_edge(circ, m, va, 0, p, va->Cv * U, va->Cv, &f[0]);
        plain_edge(circ, m, va, 1, p, va->Cv * U, va->Cv, &f[1]);
    } else {
        plain_edge(circ, m, va, 3, p, -va->Cv * U, -va->Cv, &f[0]);
        plain_edge(circ, m, va, 2, p, -va->Cv * U, -va->Cv, &f[1]);
    }
    return 2;
}
/* plain_edge's q into the pressure rates */
static void plain_rate(const hymo_circuit *circ, const hymo_model *m, const hymo_valve *va, int e, const double *p,
                       double c, double *pdot)
{
    int nf, nt;
    hymo_valve_edge_nodes(va, e, &nf, &nt);
    const double g = hymo_orifice_g_r(hymo_node_pressure(m, nf, p) - hymo_node_pressure(m, nt, p),
                                      m->fluid.p_transition, circ->sqrt_p_tr);
    add_rate(pdot, circ->node_state[nf], circ->node_state[nt], c * g);
}
static void valve_rates(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                        const double *sd, double *pdot)
{
    const hymo_valve *va = &m->valves[i];
    const double U = u[va->state];
    if (m->valve_edges && m->valve_edges[i].on) {
        hymo_edge_flow f[HYMO_ELEMENT_EDGES_MAX];
        const int nf = valve_flows(circ, m, i, p, u, sd, f);
        for (int e = 0; e < nf; ++e) add_rate(pdot, f[e].a, f[e].b, f[e].q);
        return;
    }
    (void)sd;
    if (U >= 0.0) {
        plain_rate(circ, m, va, 0, p, va->Cv * U, pdot);
        plain_rate(circ, m, va, 1, p, va->Cv * U, pdot);
    } else {
        plain_rate(circ, m, va, 3, p, -va->Cv * U, pdot);
        plain_rate(circ, m, va, 2, p, -va->Cv * U, pdot);
    }
}
/* the four edges and the net port flows */
static void valve_output(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                         const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)w;
    const hymo_valve *va = &m->valves[i];
    const double U = u[va->state];
    for (int e = 0; e < 4; ++e) { /* P-A, B-T, P-B, A-T: the circuit's edge law (circuit.h) */
        double G, GU;
        int from, to;
        q[e] = hymo_valve_edge_flow_d(circ, m, i, e, U, p, &G, &GU);
        hymo_valve_edge_nodes(va, e, &from, &to);
        move(qnode, from, to, q[e]);
    }
    q[4] = q[0] - q[3]; /* out of port A into its line */
    q[5] = q[2] - q[1]; /* out of port B into its line */
}

static int valve_locates(const hymo_model *m, int i) { return m->valve_edges && m->valve_edges[i].on; }
/* +-U - u0_e per edge, -1 for a plain valve */
static void valve_switching(const hymo_circuit *circ, const hymo_model *m, int i, const double *s, const double *p,
                            const double *u, double *g)
{
    (void)circ, (void)s, (void)p;
    const hymo_valve_edges *ve = m->valve_edges ? &m->valve_edges[i] : NULL;
    const double U = u[m->valves[i].state];
    for (int e = 0; e < 4; ++e) g[e] = ve && ve->on ? (e < 2 ? U : -U) - ve->u0[e] : -1.0;
}

/* ---- relief and check valves, flow control valves: the flow a -> b ---- */

static int relief_count(const hymo_model *m) { return m->n_relief_valves; }
static const char *relief_name(const hymo_model *m, int i) { return m->relief_valves[i].name; }
static void relief_ports(const hymo_model *m, int i, int *node)
{
    node[0] = m->relief_valves[i].node_a, node[1] = m->relief_valves[i].node_b;
}
static void relief_edge(const hymo_model *m, int i, int e, int *from, int *to, int *spool)
{
    (void)e;
    *from = m->relief_valves[i].node_a, *to = m->relief_valves[i].node_b, *spool = -1;
}
static int relief_flows(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                        const double *sd, hymo_edge_flow *f)
{
    (void)u, (void)sd;
    double G, q = hymo_relief_flow_d(circ, m, i, p, &G);
    edge_flow(circ, 0, m->relief_valves[i].node_a, m->relief_valves[i].node_b, q, G, f);
    return 1;
}
static void relief_output(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                          const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)u, (void)w;
    double G;
    q[0] = hymo_relief_flow_d(circ, m, i, p, &G);
    move(qnode, m->relief_valves[i].node_a, m->relief_valves[i].node_b, q[0]);
}

static int always(const hymo_model *m, int i) { return (void)m, (void)i, 1; }
/* dp - p_crack */
static void relief_switching(const hymo_circuit *circ, const hymo_model *m, int i, const double *s, const double *p,
                             const double *u, double *g)
{
    (void)circ, (void)s, (void)u;
    const hymo_relief_valve *rv = &m->relief_valves[i];
    g[0] = hymo_node_pressure(m, rv->node_a, p) - hymo_node_pressure(m, rv->node_b, p) - rv->p_crack;
}

static int check_count(const hymo_model *m) { return m->n_check_valves; }
static const char *check_name(const hymo_model *m, int i) { return m->check_valves[i].name; }
static void check_ports(const hymo_model *m, int i, int *node)
{
    node[0] = m->check_valves[i].node_a, node[1] = m->check_valves[i].node_b;
}
static void check_edge(const hymo_model *m, int i, int e, int *from, int *to, int *spool)
{
    (void)e;
    *from = m->check_valves[i].node_a, *to = m->check_valves[i].node_b, *spool = -1;
}
static int check_flows(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                       const double *sd, hymo_edge_flow *f)
{
    (void)u, (void)sd;
    double G, q = hymo_check_flow_d(circ, m, i, p, &G);
    edge_flow(circ, 0, m->check_valves[i].node_a, m->check_valves[i].node_b, q, G, f);
    return 1;
}
static void check_output(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                         const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)u, (void)w;
    double G;
    q[0] = hymo_check_flow_d(circ, m, i, p, &G);
    move(qnode, m->check_valves[i].node_a, m->check_valves[i].node_b, q[0]);
}

/* dp - p_crack (opening), dp - p_crack - p_open (fully open) */
static void check_switching(const hymo_circuit *circ, const hymo_model *m, int i, const double *s, const double *p,
                            const double *u, double *g)
{
    (void)circ, (void)s, (void)u;
    const hymo_check_valve *cv = &m->check_valves[i];
    double y = hymo_node_pressure(m, cv->node_a, p) - hymo_node_pressure(m, cv->node_b, p) - cv->p_crack;
    g[0] = y;
    g[1] = y - cv->p_open;
}

static int fc_count(const hymo_model *m) { return m->n_flow_controls; }
static const char *fc_name(const hymo_model *m, int i) { return m->flow_controls[i].name; }
static void fc_ports(const hymo_model *m, int i, int *node)
{
    node[0] = m->flow_controls[i].node_a, node[1] = m->flow_controls[i].node_b;
}
static void fc_edge(const hymo_model *m, int i, int e, int *from, int *to, int *spool)
{
    (void)e;
    *from = m->flow_controls[i].node_a, *to = m->flow_controls[i].node_b, *spool = -1;
}
static int fc_flows(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                    const double *sd, hymo_edge_flow *f)
{
    (void)u, (void)sd;
    double G, q = hymo_flow_control_flow_d(circ, m, i, p, &G);
    edge_flow(circ, 0, m->flow_controls[i].node_a, m->flow_controls[i].node_b, q, G, f);
    return 1;
}
static void fc_output(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                      const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)u, (void)w;
    double G;
    q[0] = hymo_flow_control_flow_d(circ, m, i, p, &G);
    move(qnode, m->flow_controls[i].node_a, m->flow_controls[i].node_b, q[0]);
}

/* dp - dp_c */
static void fc_switching(const hymo_circuit *circ, const hymo_model *m, int i, const double *s, const double *p,
                         const double *u, double *g)
{
    (void)circ, (void)s, (void)u;
    const hymo_flow_control *fc = &m->flow_controls[i];
    g[0] = hymo_node_pressure(m, fc->node_a, p) - hymo_node_pressure(m, fc->node_b, p) - fc->dp_c;
}

/* ---- pumps: flow in -> out, hydraulic power (p_out - p_in) Q ---- */

static int pump_count(const hymo_model *m) { return m->n_pumps; }
static const char *pump_name(const hymo_model *m, int i) { return m->pumps[i].name; }
static void pump_ports(const hymo_model *m, int i, int *node)
{
    node[0] = m->pumps[i].node_in, node[1] = m->pumps[i].node_out;
}
static void pump_edge(const hymo_model *m, int i, int e, int *from, int *to, int *spool)
{
    (void)e;
    *from = m->pumps[i].node_in, *to = m->pumps[i].node_out, *spool = -1;
}
static int pump_flows(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                      const double *sd, hymo_edge_flow *f)
{
    (void)u, (void)sd;
    double G, q = hymo_pump_flow_d(circ, m, i, p, &G);
    edge_flow(circ, 0, m->pumps[i].node_in, m->pumps[i].node_out, q, G, f);
    return 1;
}
static void pump_output(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                        const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)u;
    w[0] = hymo_pump_power(circ, m, i, p, &q[0]);
    move(qnode, m->pumps[i].node_in, m->pumps[i].node_out, q[0]);
}

/* ---- cylinders: no flow; the piston and rod chambers join a circuit ---- */

static int cylinder_count(const hymo_model *m) { return m->n_cylinders; }
static const char *cylinder_name(const hymo_model *m, int i) { return m->cylinders[i].name; }
static void cylinder_ports(const hymo_model *m, int i, int *node)
{
    node[0] = m->cylinders[i].node_piston, node[1] = m->cylinders[i].node_rod;
}

static int cylinder_locates(const hymo_model *m, int i) { return m->cylinders[i].has_damper; }
/* l_d - l_pist, l_d - l_rod; -1 without a damper */
static void cylinder_switching(const hymo_circuit *circ, const hymo_model *m, int i, const double *s, const double *p,
                               const double *u, double *g)
{
    (void)p, (void)u;
    const hymo_cylinder *cy = &m->cylinders[i];
    double lp, lr;
    hymo_cylinder_lengths(circ, i, s[i], &lp, &lr);
    g[0] = cy->has_damper ? cy->damper_length - lp : -1.0;
    g[1] = cy->has_damper ? cy->damper_length - lr : -1.0;
}

/* ---- hydraulic motors (actuator n_cylinders + k): flow a -> b
 * (Q = D w + C_L dp), hydraulic power dp Q delivered to the motor and
 * mechanical power T w it delivers ---- */

static int motor_count(const hymo_model *m) { return m->n_motors; }
static const char *motor_name(const hymo_model *m, int i) { return m->motors[i].name; }
static const char *const motor_power_cols[] = {"hydraulic", "mechanical"};
static void motor_ports(const hymo_model *m, int i, int *node)
{
    node[0] = m->motors[i].node_a, node[1] = m->motors[i].node_b;
}
static void motor_edge(const hymo_model *m, int i, int e, int *from, int *to, int *spool)
{
    (void)e;
    *from = m->motors[i].node_a, *to = m->motors[i].node_b, *spool = -1;
}
static int motor_actuator(const hymo_model *m, int i) { return m->n_cylinders + i; }
/* dQ/dp_a = C_L (a laminar orifice), dQ/dw = D */
static int motor_flows(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                       const double *sd, hymo_edge_flow *f)
{
    (void)u;
    const hymo_motor *mo = &m->motors[i];
    edge_flow(circ, 0, mo->node_a, mo->node_b, hymo_motor_flow(m, i, sd[m->n_cylinders + i], p), mo->leakage, f);
    f->Gsd = mo->displacement;
    return 1;
}
static void motor_output(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                         const double *zd, double *q, double *w, double *qnode)
{
    (void)circ, (void)u;
    const hymo_motor *mo = &m->motors[i];
    const double speed = zd ? zd[mo->joint] : 0.0;
    double dT_ddp, dT_dw;
    q[0] = hymo_motor_flow(m, i, speed, p);
    w[0] = (hymo_node_pressure(m, mo->node_a, p) - hymo_node_pressure(m, mo->node_b, p)) * q[0];
    w[1] = hymo_motor_torque_d(m, i, speed, p, &dT_ddp, &dT_dw) * speed;
    move(qnode, mo->node_a, mo->node_b, q[0]);
}

static const char *const one_col[] = {""};

/* The table (elements.h), in the order of the circuit equations' sums. */
const hymo_element_kind hymo_element_kinds[HYMO_ELEMENT_KINDS] = {
    [HYMO_ELEMENT_THROTTLE] = {.kind = "throttle",
                               .field = "hydraulics.throttles",
                               .count = throttle_count,
                               .name = throttle_name,
                               .n_ports = 2,
                               .ports = throttle_ports,
                               .no_volume = "connects no volume",
                               .names_ports = 1,
                               .part_n = offsetof(hymo_circuit_part, n_throttles),
                               .part_list = offsetof(hymo_circuit_part, throttles),
                               .n_edges = 1,
                               .edge = throttle_edge,
                               .actuator = no_actuator,
                               .flows = throttle_flows,
                               .rates = throttle_rates,
                               .n_flows = 1,
                               .flow_suffix = one_col,
                               .output = throttle_output},
    [HYMO_ELEMENT_VALVE] = {.kind = "valve",
                            .field = "hydraulics.valves",
                            .count = valve_count,
                            .name = valve_name,
                            .n_ports = 4,
                            .ports = valve_ports,
                            .no_volume = "none of its ports P, T, A, B is a volume",
                            .names_ports = 0,
                            .part_n = offsetof(hymo_circuit_part, n_valves),
                            .part_list = offsetof(hymo_circuit_part, valves),
                            .n_edges = 4,
                            .edge = valve_edge,
                            .actuator = no_actuator,
                            .flows = valve_flows,
                            .rates = valve_rates,
                            .n_flows = 6,
                            .flow_suffix = valve_cols,
                            .n_switches = HYMO_CIRCUIT_SWITCHES_PER_VALVE,
                            .locates = valve_locates,
                            .switching = valve_switching,
                            .output = valve_output},
    [HYMO_ELEMENT_RELIEF] = {.kind = "relief valve",
                             .field = "hydraulics.relief_valves",
                             .count = relief_count,
                             .name = relief_name,
                             .n_ports = 2,
                             .ports = relief_ports,
                             .no_volume = "connects no volume",
                             .names_ports = 1,
                             .part_n = offsetof(hymo_circuit_part, n_reliefs),
                             .part_list = offsetof(hymo_circuit_part, reliefs),
                             .n_edges = 1,
                             .edge = relief_edge,
                             .actuator = no_actuator,
                             .flows = relief_flows,
                             .n_flows = 1,
                             .flow_suffix = one_col,
                             .n_switches = HYMO_CIRCUIT_SWITCHES_PER_RELIEF,
                             .locates = always,
                             .switching = relief_switching,
                             .output = relief_output},
    [HYMO_ELEMENT_CHECK] = {.kind = "check valve",
                            .field = "hydraulics.check_valves",
                            .count = check_count,
                            .name = check_name,
                            .n_ports = 2,
                            .ports = check_ports,
                            .no_volume = "connects no volume",
                            .names_ports = 1,
                            .part_n = offsetof(hymo_circuit_part, n_checks),
                            .part_list = offsetof(hymo_circuit_part, checks),
                            .n_edges = 1,
                            .edge = check_edge,
                            .actuator = no_actuator,
                            .flows = check_flows,
                            .n_flows = 1,
                            .flow_suffix = one_col,
                            .n_switches = HYMO_CIRCUIT_SWITCHES_PER_CHECK,
                            .locates = always,
                            .switching = check_switching,
                            .output = check_output},
    [HYMO_ELEMENT_PUMP] = {.kind = "pump",
                           .field = "hydraulics.pumps",
                           .count = pump_count,
                           .name = pump_name,
                           .n_ports = 2,
                           .ports = pump_ports,
                           .no_volume = "connects no volume",
                           .names_ports = 1,
                           .part_n = offsetof(hymo_circuit_part, n_pumps),
                           .part_list = offsetof(hymo_circuit_part, pumps),
                           .n_edges = 1,
                           .edge = pump_edge,
                           .actuator = no_actuator,
                           .flows = pump_flows,
                           .n_flows = 1,
                           .n_powers = 1,
                           .flow_suffix = one_col,
                           .power_suffix = one_col,
                           .output = pump_output},
    [HYMO_ELEMENT_FLOW_CONTROL] = {.kind = "flow control valve",
                                   .field = "hydraulics.flow_control_valves",
                                   .count = fc_count,
                                   .name = fc_name,
                                   .n_ports = 2,
                                   .ports = fc_ports,
                                   .no_volume = "connects no volume",
                                   .names_ports = 1,
                                   .part_n = offsetof(hymo_circuit_part, n_fcs),
                                   .part_list = offsetof(hymo_circuit_part, fcs),
                                   .n_edges = 1,
                                   .edge = fc_edge,
                                   .actuator = no_actuator,
                                   .flows = fc_flows,
                                   .n_flows = 1,
                                   .flow_suffix = one_col,
                                   .n_switches = HYMO_CIRCUIT_SWITCHES_PER_FLOW_CONTROL,
                                   .locates = always,
                                   .switching = fc_switching,
                                   .output = fc_output},
    [HYMO_ELEMENT_CYLINDER] = {.kind = "cylinder",
                               .field = "hydraulics.cylinders",
                               .count = cylinder_count,
                               .name = cylinder_name,
                               .n_ports = 2,
                               .ports = cylinder_ports,
                               .no_volume = "neither chamber is a volume",
                               .names_ports = 0,
                               .part_n = offsetof(hymo_circuit_part, n_cylinders),
                               .part_list = offsetof(hymo_circuit_part, cylinders),
                               .n_edges = 0,
                               .edge = NULL,
                               .actuator = NULL,
                               .flows = NULL,
                               .n_flows = 0,
                               .n_switches = HYMO_CIRCUIT_SWITCHES_PER_CYLINDER,
                               .locates = cylinder_locates,
                               .switching = cylinder_switching,
                               .output = NULL},
    [HYMO_ELEMENT_MOTOR] = {.kind = "motor",
                            .field = "hydraulics.motors",
                            .count = motor_count,
                            .name = motor_name,
                            .n_ports = 2,
                            .ports = motor_ports,
                            .no_volume = "neither port is a volume",
                            .names_ports = 1,
                            .part_n = offsetof(hymo_circuit_part, n_motors),
                            .part_list = offsetof(hymo_circuit_part, motors),
                            .n_edges = 1,
                            .edge = motor_edge,
                            .actuator = motor_actuator,
                            .flows = motor_flows,
                            .n_flows = 1,
                            .n_powers = 2,
                            .flow_suffix = one_col,
                            .power_suffix = motor_power_cols,
                            .output = motor_output},
};
