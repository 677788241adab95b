/* The kinds of hydraulic element (hydraulics/elements.c): ONE table,
 * hymo_element_kinds[], in the order the circuit equations sum their flows
 * (hymo_circuit_eval_part, hymo_circuit_derivatives): throttles, 4/3
 * valves, relief valves, check valves, pumps, flow control valves,
 * cylinders (no flow: ports only), motors.  Per kind it gives
 *   - how many elements the model has, their names and the model file's
 *     list (messages);
 *   - each element's ports (the nodes it joins into one circuit: the
 *     partition) and its flow edges (from -> to, a valve edge's spool):
 *     the derivatives' patterns and slots;
 *   - the element's flows at pressures p, spools u and actuator rates sd
 *     with their derivatives (evaluation and derivatives: the same values,
 *     summed in the same order);
 *   - the element's list in a circuit part (hymo_circuit_part);
 *   - its switching functions (events; their order in g is circuit.h's);
 *   - the columns it adds to /hydraulics/flow (m^3/s) and /hydraulics/power
 *     (W) of the output (docs/hdf5-format.md, "Sensors, flows and inputs"),
 *     which lists the kinds in its own order (valves first) and the
 *     pressure sources last.
 *
 * Adding a kind (a new valve, ...): its rows in hymo_model (model.h), one
 * entry here, and its columns' line in docs/hdf5-format.md.
 * tests/engine/test_sensors.c checks that the flows of every volume add up to the
 * circuit's own pressure rate. */
#ifndef HYMO_ELEMENTS_H
#define HYMO_ELEMENTS_H

#include <stddef.h>

#include "circuit.h"
#include "hymo/model.h"

#define HYMO_ELEMENT_PORTS_MAX 4
#define HYMO_ELEMENT_EDGES_MAX 4

/* One flow through edge e of an element: from pressure state a to b (-1:
 * a source), q (m^3/s) with dq/dp_a = G (= -dq/dp_b), dq/du = GU of the
 * element's spool and dq/dsd = Gsd of its actuator. */
typedef struct {
    int e, a, b;
    double q, G, GU, Gsd;
} hymo_edge_flow;

typedef struct {
    const char *kind;  /* "valve", "throttle", ... (messages, documentation) */
    const char *field; /* the model file's list: "hydraulics.valves", ... */
    int (*count)(const hymo_model *model);
    const char *(*name)(const hymo_model *model, int i);
    /* element i's ports (n_ports nodes) */
    int n_ports;
    void (*ports)(const hymo_model *model, int i, int *node);
    /* what the partition says of an element none of whose ports is a
     * volume, and whether it names the two ports */
    const char *no_volume;
    int names_ports;
    /* the element's list in a part: offsets of its count and index array */
    size_t part_n, part_list;
    /* flow edges per element (0: no flow), edge e's nodes from -> to and
     * the spool state it follows (-1: none) */
    int n_edges;
    void (*edge)(const hymo_model *model, int i, int e, int *from, int *to, int *spool);
    /* the actuator whose rate element i's flow follows (-1: none) */
    int (*actuator)(const hymo_model *model, int i);
    /* the flows of element i (at most HYMO_ELEMENT_EDGES_MAX, in the order
     * the circuit equations add them; a closed edge of a plain valve
     * gives none); returns their number */
    int (*flows)(const hymo_circuit *circ, const hymo_model *model, int i, const double *p, const double *u,
                 const double *sd, hymo_edge_flow *f);
    /* the same flows' sum into the pressure rates alone, without their
     * derivatives: per flow, in the order of flows, pdot[a] -= q and
     * pdot[b] += q where a, b >= 0 (NULL: the kind has only flows) */
    void (*rates)(const hymo_circuit *circ, const hymo_model *model, int i, const double *p, const double *u,
                  const double *sd, double *pdot);
    /* switching functions per element (events, circuit.h: 0 for a kind
     * without), whether element i has a kink that is located (else its
     * functions are -1), and their values g[n_switches] at actuator
     * lengths s, pressures p and spools u */
    int n_switches;
    int (*locates)(const hymo_model *model, int i);
    void (*switching)(const hymo_circuit *circ, const hymo_model *model, int i, const double *s, const double *p,
                      const double *u, double *g);
    /* output columns per element: the element's name + "." + suffix, or
     * the name alone for a single column whose suffix is ""; output(...)
     * writes q[n_flows] (m^3/s) and w[n_powers] (W) of element i and adds
     * its flows into qnode[n_nodes] (net inflow of each node, m^3/s);
     * zd: the joint rates (motors' speeds). */
    int n_flows, n_powers;
    const char *const *flow_suffix, *const *power_suffix;
    void (*output)(const hymo_circuit *circ, const hymo_model *model, int i, const double *p, const double *u,
                   const double *zd, double *q, double *w, double *qnode);
} hymo_element_kind;

extern const hymo_element_kind hymo_element_kinds[HYMO_ELEMENT_KINDS];

/* The elements of kind K in part pt: their indices, *n of them. */
static inline int *hymo_part_elements(const hymo_circuit_part *pt, const hymo_element_kind *K, int *n)
{
    *n = *(const int *)((const char *)pt + K->part_n);
    return *(int *const *)((const char *)pt + K->part_list);
}
/* The addresses of the count and the index array of kind K in part pt. */
static inline void hymo_part_fields(hymo_circuit_part *pt, const hymo_element_kind *K, int **n, int ***list)
{
    *n = (int *)((char *)pt + K->part_n);
    *list = (int **)((char *)pt + K->part_list);
}

#endif
