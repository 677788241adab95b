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
/* Whether inputs or parameters were changed since the last call (the
 * committed rates were recomputed): an integrator that keeps its own
 * history (IDA) restarts from the committed state. */
int hymo_sim_take_changed(hymo_sim *sim);
/* Frees the overrides (hymo_sim_free). */
void hymo_sim_control_free(hymo_sim *sim);

#endif
