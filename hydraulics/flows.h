/* Per-element flows and powers for the output (docs/hdf5-format.md,
 * "Sensors, flows and inputs"): /hydraulics/flow (m^3/s) and
 * /hydraulics/power (W), the columns of each element kind
 * (hymo_element_kinds[], hydraulics/elements.h) in the file's order
 * (valves, throttles, relief and check valves, pumps, flow control
 * valves, motors), then the pressure sources' outflow and power. */
#ifndef HYMO_FLOWS_H
#define HYMO_FLOWS_H

#include "circuit.h"
#include "elements.h"
#include "hymo/model.h"

/* Column counts over the whole table for the model. */
void hymo_flow_columns(const hymo_model *model, int *n_flows, int *n_powers);
/* Column names (HYMO_NAME_MAX + 16 wide each) into flow_names[n_flows]
 * and power_names[n_powers], in the file's column order. */
#define HYMO_FLOW_NAME_MAX (2 * HYMO_NAME_MAX)
void hymo_flow_names(const hymo_model *model, char (*flow_names)[HYMO_FLOW_NAME_MAX],
                     char (*power_names)[HYMO_FLOW_NAME_MAX]);
/* All columns at pressures p, spools u and joint rates zd (nz; the
 * motors' speeds): q[n_flows], w[n_powers]; qnode[n_nodes] is scratch (no
 * allocation). */
void hymo_flow_eval(const hymo_circuit *circ, const hymo_model *model, const double *p, const double *u,
                    const double *zd, double *q, double *w, double *qnode);

#endif
