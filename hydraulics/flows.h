/* Per-element flows and powers for the output (docs/hdf5-format.md,
 * "Sensors, flows and inputs"): ONE table, hymo_flow_elements[], lists the
 * kinds of hydraulic element that contribute columns to /hydraulics/flow
 * (m^3/s) and /hydraulics/power (W).  Each kind says how many elements the
 * model has, the columns per element (suffixes of the element's name) and
 * how to evaluate them at pressures p and spool positions u.
 *
 * Adding a kind (a pump, a motor, ...): one row in hymo_flow_elements[]
 * (hydraulics/flows.c) with its count, column suffixes and eval function,
 * which also adds its flows to the per-node net inflow qnode (the sources,
 * last in the table, report their outflow from it); a line in the table of
 * docs/hdf5-format.md.  tests/engine/test_sensors.c checks that the flows of every
 * volume add up to the circuit's own pressure rate. */
#ifndef HYMO_FLOWS_H
#define HYMO_FLOWS_H

#include "circuit.h"
#include "hymo/model.h"

typedef struct {
    const char *kind; /* "valve", "throttle", ... (documentation, messages) */
    int (*count)(const hymo_model *model);
    const char *(*name)(const hymo_model *model, int i);
    /* columns per element: the element's name + "." + suffix, or the name
     * alone for a single column whose suffix is "" */
    int n_flows, n_powers;
    const char *const *flow_suffix, *const *power_suffix;
    /* q[n_flows] (m^3/s) and w[n_powers] (W) of element i; adds its flows
     * into qnode[n_nodes] (net inflow of each node, m^3/s).  circ: the
     * branch rules (relief and check valves follow the geometry when
     * circ->sw is NULL). */
    void (*eval)(const hymo_circuit *circ, const hymo_model *model, int i, const double *p, const double *u,
                 const double *zd, double *q, double *w, double *qnode);
} hymo_flow_element;

extern const hymo_flow_element hymo_flow_elements[];
extern const int hymo_flow_element_count;

/* Column counts over the whole table for the model. */
void hymo_flow_columns(const hymo_model *model, int *n_flows, int *n_powers);
/* Column names (HYMO_NAME_MAX + 16 wide each) into flow_names[n_flows]
 * and power_names[n_powers], in evaluation order. */
#define HYMO_FLOW_NAME_MAX (2 * HYMO_NAME_MAX)
void hymo_flow_names(const hymo_model *model, char (*flow_names)[HYMO_FLOW_NAME_MAX],
                     char (*power_names)[HYMO_FLOW_NAME_MAX]);
/* All columns at pressures p, spools u and joint rates zd (nz; the
 * motors' speeds): q[n_flows], w[n_powers]; qnode[n_nodes] is scratch (no
 * allocation). */
void hymo_flow_eval(const hymo_circuit *circ, const hymo_model *model, const double *p, const double *u,
                    const double *zd, double *q, double *w, double *qnode);

#endif
