/* hymo — controllers and studies: inputs and parameters of a running
 * simulation, set between steps.
 *
 * A controller that steps a hymo_sim by hand (hymo_sim_step) can replace a
 * valve's reference signal U_ref, a pump's speed factor or a flow control
 * valve's set-flow factor by a value it sets before each step, or by a
 * function of time it supplies, and can change a documented set of
 * hydraulic parameters.  Nothing here changes the hymo_model: the model is
 * shared read-only by every run (and every sweep thread), so the overrides
 * live in the simulation (its private copy of the parameter tables).
 *
 * Inputs.  `name` is a signal name of the model file (every valve, pump and
 * flow control valve driven by that signal is overridden), a valve name
 * (its reference), a pump name (its speed factor s: n = speed_rpm x s) or
 * a flow control valve name (its set-flow factor c: Q_set = set_flow x c).
 * The value replaces the signal's value: a valve's reference in V, a
 * pump's or flow control valve's factor (>= 0, as the tables must be).
 * A pump needs `speed_signal` and a flow control valve `set_flow_signal`
 * in the model file to be an input (a signal of value 1 runs as the
 * constant speed or set flow until it is set); without one the call is
 * refused with a message naming the element and the key to add: their
 * constants are compiled into the circuit, and a model without such
 * signals keeps its constant-input code path (and bit-identical results).
 *   - a value holds from the current time on (a step change at the current
 *     time: the spool rate, or the pressure rates of a pump speed or set
 *     flow, restart from it, as at a step of a signal table);
 *   - a callback u = fn(t, user) is evaluated at the times the integrator
 *     samples its inputs (trapezoidal: start and end of each step; IDA: at
 *     every residual evaluation, so it should be continuous within a step);
 *   - hymo_sim_clear_input returns to the model's signal table.
 * Both integrators (trapezoidal, IDA) see the override.
 *
 * Parameters.  `name` is "kind.item.field"; the accepted ones are those the
 * hydraulic equations read at every evaluation (changing them needs no
 * recompilation of the model's constants):
 *   valve.NAME.tau                  spool time constant, s (> 0)
 *   valve.NAME.Cv                   flow coefficient, m^3/(s sqrt(Pa) V) (>= 0)
 *   throttle.NAME.Ct                throttle coefficient, m^3/(s sqrt(Pa)) (>= 0)
 *   source.NAME.pressure            pressure of a constant-pressure node, Pa
 *   cylinder.NAME.viscous           viscous friction c, N s/m (>= 0)
 *   cylinder.NAME.efficiency        seal efficiency eta, (0, 1]
 *   cylinder.NAME.friction_velocity v_s, m/s (> 0)
 *   cylinder.NAME.damper_stiffness  end-damper k_d, N/m (>= 0)
 *   cylinder.NAME.damper_damping    end-damper c_d, N s/m (>= 0)
 *   fluid.bulk_modulus              oil bulk modulus, Pa (> 0)
 *   fluid.p_transition              laminar limit of the orifices, Pa (> 0)
 *   pump.NAME.displacement          D, m^3/rev (>= 0)
 *   pump.NAME.speed                 n, rev/s (>= 0; times the speed signal, if any)
 *   pump.NAME.eta_v                 volumetric efficiency, (0, 1]
 *   pump.NAME.leakage               C_L, m^3/(s Pa) (>= 0)
 *   relief_valve.NAME.gradient      k_g, m^3/(s Pa) (>= 0)
 *   relief_valve.NAME.leakage       G_leak, m^3/(s Pa) (>= 0)
 *   check_valve.NAME.Cmax           flow coefficient at full opening, m^3/(s sqrt(Pa)) (>= 0)
 *   check_valve.NAME.leakage        G_leak, m^3/(s Pa) (>= 0)
 *   flow_control.NAME.q_set         regulated flow, m^3/s (>= 0; times the set-flow signal, if any)
 * Everything else is refused with HYMO_ERR_ARGUMENT and a message saying
 * why: cracking, opening and compensator pressures (p_crack, p_open, dp_c)
 * are the thresholds of located events; masses, inertias, geometry, areas,
 * lengths, volumes, gravity and initial pressures are compiled into the
 * model's constants and initial state (change them in the model file and
 * load it again).  A change takes
 * effect from the current time: the rates of the committed state
 * (accelerations, pressure and spool rates) are recomputed with the new
 * value and the integrator restarts from them.  The initial state (static
 * pressures) is not recomputed.
 *
 * Summaries.  hymo_sim_summary() reports complete = 1 once the simulation
 * has reached its t_end, and the wall time spent in hymo_sim_step. */
#ifndef HYMO_CONTROL_H
#define HYMO_CONTROL_H

#include <stddef.h>

#include "hymo/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* u = fn(t, user): a valve reference (or a pump's or flow control
 * valve's factor) at time t. */
typedef double (*hymo_input_fn)(double t, void *user);

/* Holds the input(s) named by `name` (signal, valve, pump or flow control
 * valve name) at `value` from the current time on.  Errors: unknown name
 * (the message lists the model's inputs: signals that drive one, valves,
 * pumps and flow control valves with a signal), a pump or flow control
 * valve without a signal (the message says what to add), non-finite value,
 * a negative pump or set-flow factor. */
hymo_status hymo_sim_set_input(hymo_sim *sim, const char *name, double value, hymo_error *err);
/* Takes the reference from fn(t, user) from the current time on. */
hymo_status hymo_sim_set_input_callback(hymo_sim *sim, const char *name, hymo_input_fn fn, void *user,
                                        hymo_error *err);
/* Returns to the model's signal table. */
hymo_status hymo_sim_clear_input(hymo_sim *sim, const char *name, hymo_error *err);
/* The reference valve `name` (or the first valve driven by signal `name`;
 * else the factor of pump or flow control valve `name`, or of the first one
 * driven by signal `name`) sees at time t (right limit): the override, or
 * the signal table. */
hymo_status hymo_sim_get_input(const hymo_sim *sim, const char *name, double t, double *value, hymo_error *err);

/* Changes a parameter (list above) from the current time on. */
hymo_status hymo_sim_set_parameter(hymo_sim *sim, const char *name, double value, hymo_error *err);
/* The value in use (the model's, or the last one set). */
hymo_status hymo_sim_get_parameter(const hymo_sim *sim, const char *name, double *value, hymo_error *err);

/* The further outputs of a run at the simulation's current state: the
 * datasets of docs/hdf5-format.md "Sensors, flows and inputs" (sensor
 * positions, velocities and accelerations, hydraulic flows and powers,
 * valve references), the same values `hymo run` writes in the row of that
 * step.  Create once (allocates), evaluate after any step (no allocation
 * unless a parameter change gave the run its own model tables). */
typedef struct hymo_sim_outputs hymo_sim_outputs;
/* The outputs of sim's model (possibly none).  HYMO_ERR_NOMEM. */
hymo_status hymo_sim_outputs_create(const hymo_sim *sim, hymo_sim_outputs **out, hymo_error *err);
void hymo_sim_outputs_free(hymo_sim_outputs *o);
/* Datasets k = 0 .. count-1: path ("/sensors/position"), columns, the
 * name of column c, units; NULL / 0 for k or c out of range. */
int hymo_sim_outputs_count(const hymo_sim_outputs *o);
const char *hymo_sim_outputs_path(const hymo_sim_outputs *o, int k);
int hymo_sim_outputs_cols(const hymo_sim_outputs *o, int k);
const char *hymo_sim_outputs_name(const hymo_sim_outputs *o, int k, int c);
const char *hymo_sim_outputs_units(const hymo_sim_outputs *o, int k);
/* Sum of the columns of every dataset. */
int hymo_sim_outputs_n_values(const hymo_sim_outputs *o);
/* Every dataset's row at sim's current state into values (n_values
 * doubles, dataset after dataset). */
hymo_status hymo_sim_outputs_eval(hymo_sim_outputs *o, const hymo_sim *sim, double *values, hymo_error *err);

/* For language bindings (python/hymo): sizeof of a public struct by its
 * name ("hymo_run_options", "hymo_run_summary", "hymo_cosim_options",
 * "hymo_cosim_summary", "hymo_compare_result", "hymo_error"), 0 if
 * unknown, so that a binding can check its mirror of the layout. */
size_t hymo_struct_size(const char *name);
/* ... and offsetof of some of their members (the last one a binding
 * mirrors, "hymo_model" bodies/signals, "hymo_body", "hymo_signal"), so that
 * a member inserted before them is caught, not read at the wrong place;
 * (size_t)-1 if not listed. */
size_t hymo_struct_offset(const char *name, const char *field);

#ifdef __cplusplus
}
#endif
#endif
