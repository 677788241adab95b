/* The rows of the co-simulation's choices (src/cosim/cosim_tables.h,
 * src/cosim/cosim_internal.h): one per value of each option's enum, in
 * arrays indexed by the enum. */
#include "cosim_tables.h"
#include "engine.h"

/* ---------------------------------------------------------------- coupling */

static const hymo_coupling_table velocity_force = {
    .per_actuator = 1,
    .tlm = 0,
    .no_fmu = NULL,
    .effort = {{{.name = "F", .unit = {"N", "N.m"}, .input_description = "cylinder force F_s from the hydraulics",
                 .output_description = "cylinder force F_s"}},
               {{.name = "F", .unit = {"N", "N.m"}, .input_description = "motor torque from the hydraulics",
                 .output_description = "motor torque"}}},
    .mech_forces = &hymo_forces_split_force_ops,
    .hyd_outputs = hymo_cosim_hyd_out_force,
};
#define PRESSURE(name_, what)                                                                                        \
    {.name = (name_), .unit = {"Pa", "Pa"}, .input_description = (what), .output_description = (what)}
static const hymo_coupling_table velocity_pressure = {
    .per_actuator = 2,
    .tlm = 0,
    .no_fmu = NULL,
    .effort = {{PRESSURE("p_piston", "piston chamber pressure"), PRESSURE("p_rod", "rod chamber pressure")},
               {PRESSURE("p_a", "motor port a pressure"), PRESSURE("p_b", "motor port b pressure")}},
    .mech_forces = &hymo_forces_split_pressure_ops,
    .hyd_outputs = hymo_cosim_hyd_out_pressure,
};
#undef PRESSURE
/* the waves, impedances and the line pressure's state have no FMU form */
static const hymo_coupling_table tlm = {
    .per_actuator = 2,
    .tlm = 1,
    .no_fmu = "--coupling tlm: FMU parts are not available with TLM coupling (use hymo cosim --coupling tlm, or "
              "velocity-pressure / velocity-force for FMUs)",
    .mech_forces = &hymo_forces_split_tlm_ops,
    .hyd_outputs = hymo_cosim_hyd_out_wave,
};
static const hymo_coupling_table *const couplings[] = {
    [HYMO_COUPLING_VELOCITY_FORCE] = &velocity_force,
    [HYMO_COUPLING_VELOCITY_PRESSURE] = &velocity_pressure,
    [HYMO_COUPLING_TLM] = &tlm,
};

/* ----------------------------------------------------------- approximation */

#define LAGRANGE(p) {.order = (p), .hyd_order = (p), .hyd_at_start = 0, .interface_model = 0, .rectangle = (p) == 0}
static const hymo_approx_table lagrange[4] = {LAGRANGE(0), LAGRANGE(1), LAGRANGE(2), LAGRANGE(3)};
#undef LAGRANGE
/* seed 001's quadratic: the Lagrange polynomial of order 2 */
static const hymo_approx_table quadratic = {
    .order = 2, .hyd_order = 2, .hyd_at_start = 0, .interface_model = 0, .rectangle = 0};
/* seed 000: the mechanics' inputs linear, the hydraulics' the values at the step start */
static const hymo_approx_table interface_model = {
    .order = 1, .hyd_order = 0, .hyd_at_start = 1, .interface_model = 1, .rectangle = 0};
static const hymo_approx_table *const approximations[] = {
    [HYMO_APPROX_LAGRANGE0] = &lagrange[0],
    [HYMO_APPROX_LAGRANGE1] = &lagrange[1],
    [HYMO_APPROX_LAGRANGE2] = &lagrange[2],
    [HYMO_APPROX_LAGRANGE3] = &lagrange[3],
    [HYMO_APPROX_QUADRATIC] = &quadratic,
    [HYMO_APPROX_INTERFACE_MODEL] = &interface_model,
};

/* --------------------------------------------------------------- mechanics */

/* the Newton engine of hymo_sim with the options' formulation */
static const hymo_mech_table trapezoidal = {
    .engine = &(const hymo_sim_tables){.integrator = &hymo_trapezoidal_ops, .formulation = NULL, .forces = NULL},
    .formulation = NULL,
    .penalty = 0,
    .prescribed_motion = 1,
};
/* ALI1 penalty with semi-implicit Euler (seed 000) */
static const hymo_mech_table index1 = {
    .engine = &(const hymo_sim_tables){.integrator = &hymo_semi_implicit_euler_ops, .formulation = &hymo_index1_ops,
                                       .forces = NULL},
    .formulation = "index1-penalty",
    .penalty = 1,
    .prescribed_motion = 0,
};
static const hymo_mech_table *const mechanics[] = {
    [HYMO_MECH_TRAPEZOIDAL] = &trapezoidal,
    [HYMO_MECH_INDEX1] = &index1,
};

static const hymo_mech_inputs_table extrapolate = {.hold = 0}, hold = {.hold = 1};
static const hymo_mech_inputs_table *const mech_inputs[] = {
    [HYMO_MECH_INPUTS_EXTRAPOLATE] = &extrapolate,
    [HYMO_MECH_INPUTS_HOLD] = &hold,
};

/* ---------------------------------------------------------------- selection */

#define ROW(table, k) ((unsigned)(k) < sizeof table / sizeof table[0] ? table[k] : NULL)


hymo_cosim_tables hymo_cosim_tables_of(const hymo_cosim_options *opt)
{
    return (hymo_cosim_tables){
        .coupling = ROW(couplings, opt->coupling),
        .scheme = hymo_scheme_table_of(opt->scheme),
        .approx = ROW(approximations, opt->approx),
        .mech = ROW(mechanics, opt->mech_integrator),
        .mech_inputs = ROW(mech_inputs, opt->mech_inputs),
    };
}
