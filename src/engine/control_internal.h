/* The engine's side of include/hymo/control.h: valve references with the
 * controller's overrides, and the restart flag of the integrators. */
#ifndef HYMO_CONTROL_INTERNAL_H
#define HYMO_CONTROL_INTERNAL_H

#include "hymo/model.h"
#include "hymo/sim.h"

/* Valve v's reference U_ref at t (side: +1 right limit, -1 left limit):
 * the override set through hymo_sim_set_input*, else the model's signal,
 * snapped to the step grid of size dt if dt > 0 (hymo_signal_eval_snapped)
 * or exact if dt <= 0 (hymo_signal_eval). */
double hymo_sim_valve_ref(const hymo_sim *sim, int v, double t, int side, double dt);
/* The model signal valve v follows, or NULL if it is overridden (no breakpoints). */
const hymo_signal *hymo_sim_valve_signal(const hymo_sim *sim, int v);
/* The pumps' speeds and the flow control valves'
 * set flows at t (in: n_pumps + n_flow_controls, as sim->inputs.in_end): the
 * model's (hymo_circuit_inputs: speed x its signal's factor, with side and
 * dt as above), with a factor set through hymo_sim_set_input* in place of
 * an overridden signal's. */
void hymo_sim_flow_inputs(const hymo_sim *sim, double t, int side, double dt, double *in);
/* The model signal flow input j (pump j, then flow control valve
 * j - n_pumps) follows, or NULL if it has none or is overridden (no
 * breakpoints). */
const hymo_signal *hymo_sim_flow_input_signal(const hymo_sim *sim, int j);
/* Whether inputs or parameters were changed since the last call (the
 * committed rates were recomputed): an integrator that keeps its own
 * history (IDA) restarts from the committed state. */
int hymo_sim_take_changed(hymo_sim *sim);
/* What signal i of m drives (the inputs of hymo_sim_set_input by signal
 * name; the whole-model FMU's inputs): a bit set of the kinds below, 0 if
 * none. */
enum { HYMO_DRIVES_VALVE = 1, HYMO_DRIVES_PUMP = 2, HYMO_DRIVES_FLOW_CONTROL = 4 };
int hymo_signal_drives(const hymo_model *m, int i);
/* Frees the overrides (hymo_sim_free). */
void hymo_sim_control_free(hymo_sim *sim);

#endif
