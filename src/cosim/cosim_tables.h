/* The choices of a split-mode co-simulation as tables, one row per value
 * of an option's enum (hymo/cosim.h, hymo/master.h), rows in
 * src/cosim/cosim_tables.c.  hymo_cosim_tables_of selects the rows of a
 * set of options by indexing with the enums; the split, its subsystems,
 * the driver's front end and the FMU export read the rows' content and
 * call their ops, and never ask which row they hold. */
#ifndef HYMO_COSIM_TABLES_H
#define HYMO_COSIM_TABLES_H

#include "cosim_internal.h"

struct hymo_sim_tables;       /* src/engine/engine.h */
struct hymo_force_source_ops; /* src/engine/engine.h */

/* An effort of a coupling as an FMU variable (src/fmu/fmu_part.c): its name
 * after the actuator's, its unit on a linear and on a revolute actuator,
 * its description as the mechanics' input and as the hydraulics' output. */
typedef struct {
    const char *name, *unit[2], *input_description, *output_description;
} hymo_coupling_effort;

/* Coupling (hymo_coupling_kind): what crosses the cut at every coupled
 * actuator (hymo/cosim.h, the split's layouts). */
typedef struct {
    /* content */
    int per_actuator; /* efforts per coupled actuator: the mechanics' inputs and the hydraulics' outputs
                       * (1: the force F; 2: piston and rod chamber, or motor port a and b) */
    int tlm;          /* delay lines at the ports: the efforts are waves, both sides exchange them (links,
                       * Z_c), the inputs are the values sent up to the step start, and the bonds count the
                       * line powers and the energy in transit (TLM report, /cosim/tlm) */
    const char *no_fmu; /* why its parts have no FMU form (NULL: they have) */
    hymo_coupling_effort effort[2][2]; /* [motor][r], r < per_actuator: of a cylinder, of a motor */
    /* ops */
    const struct hymo_force_source_ops *mech_forces;            /* the mechanics' force source */
    void (*hyd_outputs)(const hymo_subsystem *hyd, double *y); /* the hydraulic side's outputs */
} hymo_coupling_table;

/* Input approximation (hymo_approx_kind). */
typedef struct {
    int order;           /* Lagrange order of the inputs (the hydraulics' with hyd_order) */
    int hyd_order;       /* of the hydraulics' inputs */
    int hyd_at_start;    /* the hydraulics' inputs are values at the step start */
    int interface_model; /* the reduced model: one hydraulic subsystem for all circuits, the mechanics also
                          * send G and a0 */
    int rectangle;       /* residual energy by the rectangle rule (zero-order extrapolation) */
} hymo_approx_table;

/* Mechanical integrator (hymo_mech_integrator_kind). */
typedef struct {
    const struct hymo_sim_tables *engine; /* integrator and formulation (the forces: the coupling's) */
    const char *formulation; /* formulation in the output file; NULL: the options' mech.formulation */
    int penalty;             /* the penalty factor applies whatever mech.formulation */
    int prescribed_motion;   /* imposes the driven joints' prescribed motion */
} hymo_mech_table;

/* The mechanics' inputs between communication points (hymo_mech_inputs_kind). */
typedef struct {
    int hold; /* held at their latest value (order 0), else the approximation's order */
} hymo_mech_inputs_table;

/* The rows of a set of options. */
typedef struct {
    const hymo_coupling_table *coupling;
    const hymo_scheme_table *scheme;
    const hymo_approx_table *approx;
    const hymo_mech_table *mech;
    const hymo_mech_inputs_table *mech_inputs;
} hymo_cosim_tables;

/* The rows of opt's choices; a member is NULL when its enum is out of range
 * (hymo_cosim_options_check refuses those). */
hymo_cosim_tables hymo_cosim_tables_of(const hymo_cosim_options *opt);

/* Ops of the coupling rows (src/cosim/cosim_mech.c, src/cosim/cosim_hyd.c). */
extern const struct hymo_force_source_ops hymo_forces_split_tlm_ops;
void hymo_cosim_hyd_out_force(const hymo_subsystem *hyd, double *y);
void hymo_cosim_hyd_out_pressure(const hymo_subsystem *hyd, double *y);
void hymo_cosim_hyd_out_wave(const hymo_subsystem *hyd, double *y);

#endif
