/* Per-element flows and powers for the output (hydraulics/flows.h).  The
 * flow laws are those of hymo_circuit_eval (circuit.c): the orifice law
 * hymo_orifice_g and the valve, relief, check, pump and flow control laws
 * of circuit.h (tests/engine/test_sensors.c checks the sum against the circuit's
 * pressure rates). */
#include "flows.h"

#include <stdio.h>
#include <string.h>

static double node_p(const hymo_model *m, int node, const double *p) { return hymo_node_pressure(m, node, p); }

/* net inflow bookkeeping: q from node a to node b */
static void move(double *qnode, int a, int b, double q)
{
    qnode[a] -= q;
    qnode[b] += q;
}

/* ---- 4/3 valves: the four metering edges and the net port flows ---- */

static int valve_count(const hymo_model *m) { return m->n_valves; }
static const char *valve_name(const hymo_model *m, int i) { return m->valves[i].name; }
static const char *const valve_cols[] = {"P-A", "B-T", "P-B", "A-T", "A", "B"};

static void valve_eval(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
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

/* ---- throttles, relief and check valves: the flow a -> b ---- */

static int throttle_count(const hymo_model *m) { return m->n_throttles; }
static const char *throttle_name(const hymo_model *m, int i) { return m->throttles[i].name; }
static void throttle_eval(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                          const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)circ, (void)u, (void)w;
    const hymo_throttle *th = &m->throttles[i];
    q[0] = th->Ct * hymo_orifice_g(node_p(m, th->node_a, p) - node_p(m, th->node_b, p), m->fluid.p_transition);
    move(qnode, th->node_a, th->node_b, q[0]);
}

static int relief_count(const hymo_model *m) { return m->n_relief_valves; }
static const char *relief_name(const hymo_model *m, int i) { return m->relief_valves[i].name; }
static void relief_eval(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                        const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)u, (void)w;
    double G;
    q[0] = hymo_relief_flow_d(circ, m, i, p, &G);
    move(qnode, m->relief_valves[i].node_a, m->relief_valves[i].node_b, q[0]);
}

static int check_count(const hymo_model *m) { return m->n_check_valves; }
static const char *check_name(const hymo_model *m, int i) { return m->check_valves[i].name; }
static void check_eval(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                       const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)u, (void)w;
    double G;
    q[0] = hymo_check_flow_d(circ, m, i, p, &G);
    move(qnode, m->check_valves[i].node_a, m->check_valves[i].node_b, q[0]);
}

/* ---- pumps (flow in -> out, hydraulic power (p_out - p_in) Q) and flow
 * control valves (flow a -> b) ---- */

static int pump_count(const hymo_model *m) { return m->n_pumps; }
static const char *pump_name(const hymo_model *m, int i) { return m->pumps[i].name; }
static void pump_eval(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                      const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)u;
    w[0] = hymo_pump_power(circ, m, i, p, &q[0]);
    move(qnode, m->pumps[i].node_in, m->pumps[i].node_out, q[0]);
}

static int fc_count(const hymo_model *m) { return m->n_flow_controls; }
static const char *fc_name(const hymo_model *m, int i) { return m->flow_controls[i].name; }
static void fc_eval(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                    const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)u, (void)w;
    double G;
    q[0] = hymo_flow_control_flow_d(circ, m, i, p, &G);
    move(qnode, m->flow_controls[i].node_a, m->flow_controls[i].node_b, q[0]);
}

/* ---- hydraulic motors: flow a -> b (Q = D w + C_L dp), hydraulic power
 * dp Q delivered to the motor and mechanical power T w it delivers ---- */

static int motor_count(const hymo_model *m) { return m->n_motors; }
static const char *motor_name(const hymo_model *m, int i) { return m->motors[i].name; }
static const char *const motor_power_cols[] = {"hydraulic", "mechanical"};
static void motor_eval(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
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

/* ---- pressure sources (pumps given by their pressure, tanks): the net
 * outflow of the other elements' flows, and the power p Q it delivers.
 * Last in the table: qnode holds every other element's flows. ---- */

static int source_count(const hymo_model *m)
{
    int n = 0;
    for (int k = 0; k < m->n_nodes; ++k) n += m->nodes[k].kind == HYMO_NODE_SOURCE;
    return n;
}
static int source_node(const hymo_model *m, int i)
{
    for (int k = 0; k < m->n_nodes; ++k)
        if (m->nodes[k].kind == HYMO_NODE_SOURCE && i-- == 0) return k;
    return -1;
}
static const char *source_name(const hymo_model *m, int i) { return m->nodes[source_node(m, i)].name; }
static void source_eval(const hymo_circuit *circ, const hymo_model *m, int i, const double *p, const double *u,
                        const double *zd, double *q, double *w, double *qnode)
{
    (void)zd, (void)circ, (void)u, (void)p;
    const int k = source_node(m, i);
    q[0] = -qnode[k];
    w[0] = m->nodes[k].pressure * q[0];
}

static const char *const one_col[] = {""};

/* The table (flows.h): order of the columns in the file. */
const hymo_flow_element hymo_flow_elements[] = {
    {"valve", valve_count, valve_name, 6, 0, valve_cols, NULL, valve_eval},
    {"throttle", throttle_count, throttle_name, 1, 0, one_col, NULL, throttle_eval},
    {"relief valve", relief_count, relief_name, 1, 0, one_col, NULL, relief_eval},
    {"check valve", check_count, check_name, 1, 0, one_col, NULL, check_eval},
    {"pump", pump_count, pump_name, 1, 1, one_col, one_col, pump_eval},
    {"flow control valve", fc_count, fc_name, 1, 0, one_col, NULL, fc_eval},
    {"motor", motor_count, motor_name, 1, 2, one_col, motor_power_cols, motor_eval},
    {"source", source_count, source_name, 1, 1, one_col, one_col, source_eval},
};
const int hymo_flow_element_count = (int)(sizeof hymo_flow_elements / sizeof hymo_flow_elements[0]);

void hymo_flow_columns(const hymo_model *model, int *n_flows, int *n_powers)
{
    int nf = 0, np = 0;
    for (int e = 0; e < hymo_flow_element_count; ++e) {
        const int n = hymo_flow_elements[e].count(model);
        nf += n * hymo_flow_elements[e].n_flows;
        np += n * hymo_flow_elements[e].n_powers;
    }
    *n_flows = nf;
    *n_powers = np;
}

static void column_name(char out[HYMO_FLOW_NAME_MAX], const char *element, const char *suffix)
{
    if (suffix && suffix[0])
        snprintf(out, HYMO_FLOW_NAME_MAX, "%s.%s", element, suffix);
    else
        snprintf(out, HYMO_FLOW_NAME_MAX, "%s", element);
}

void hymo_flow_names(const hymo_model *model, char (*flow_names)[HYMO_FLOW_NAME_MAX],
                     char (*power_names)[HYMO_FLOW_NAME_MAX])
{
    int f = 0, g = 0;
    for (int e = 0; e < hymo_flow_element_count; ++e) {
        const hymo_flow_element *el = &hymo_flow_elements[e];
        const int n = el->count(model);
        for (int i = 0; i < n; ++i) {
            for (int c = 0; c < el->n_flows; ++c) column_name(flow_names[f++], el->name(model, i), el->flow_suffix[c]);
            for (int c = 0; c < el->n_powers; ++c) column_name(power_names[g++], el->name(model, i), el->power_suffix[c]);
        }
    }
}

void hymo_flow_eval(const hymo_circuit *circ, const hymo_model *model, const double *p, const double *u,
                    const double *zd, double *q, double *w, double *qnode)
{
    memset(qnode, 0, (size_t)model->n_nodes * sizeof *qnode);
    for (int e = 0; e < hymo_flow_element_count; ++e) {
        const hymo_flow_element *el = &hymo_flow_elements[e];
        const int n = el->count(model);
        for (int i = 0; i < n; ++i) {
            el->eval(circ, model, i, p, u, zd, q, w, qnode);
            q += el->n_flows;
            w += el->n_powers;
        }
    }
}
