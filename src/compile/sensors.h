/* The further per-step outputs of a run (docs/hdf5-format.md, "Sensors,
 * flows and inputs"): sensor points (model->sensors), flows and powers of
 * the hydraulic elements (hydraulics/flows.h) and the valve references.
 * Built once per output (hymo_outputs_create), evaluated per output row
 * without allocation (hymo_outputs_eval), handed to the writer as
 * hymo_ref_dims.series. */
#ifndef HYMO_SENSORS_H
#define HYMO_SENSORS_H

#include "circuit.h"
#include "hymo/model.h"
#include "hymo/reference.h"

typedef struct hymo_outputs hymo_outputs;

/* The state one row is computed from: time, joint coordinates, rates and
 * accelerations (nz), pressures (np), spools (nu), the valve references
 * (per valve) and the circuit whose branch rules apply (NULL: the
 * geometry's) and whose pump speeds and set flows are in force (a circuit
 * without its own: those of the signals at t, the left limit for t > 0). */
typedef struct {
    double t;
    const double *z, *zd, *zdd, *p, *u, *uref;
    const hymo_circuit *circ;
} hymo_output_state;

/* The series of `model` (possibly none).  HYMO_ERR_NOMEM. */
hymo_status hymo_outputs_create(hymo_outputs **out, const hymo_model *model, hymo_error *err);
void hymo_outputs_free(hymo_outputs *o);
/* The series (paths, column counts and names, units) for hymo_ref_dims. */
int hymo_outputs_n_series(const hymo_outputs *o);
const hymo_ref_series *hymo_outputs_series(const hymo_outputs *o);
/* One row of every series at st: row[k] has hymo_outputs_series(o)[k].cols
 * doubles.  No allocation. */
void hymo_outputs_eval(hymo_outputs *o, const hymo_output_state *st, double *const *row);
/* The valve references of a model at time t from its signal tables (for
 * outputs without a simulation's own): uref[n_valves]; side as
 * hymo_signal_eval. */
void hymo_outputs_model_uref(const hymo_model *model, double t, int side, double *uref);

#endif
