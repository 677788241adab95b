/* The subsystems of split mode, created only by the split factory
 * (src/cosim/cosim_split.c, hymo_split_create); their layouts are documented in
 * include/hymo/cosim.h. */
#ifndef HYMO_COSIM_SPLIT_H
#define HYMO_COSIM_SPLIT_H

#include "circuit.h"
#include "cosim_internal.h"
#include "hymo/sim.h"

/* Mechanical subsystem (src/cosim/cosim_mech.c): the engine in split mode. */
hymo_status hymo_cosim_mech_create(const hymo_model *model, const hymo_cosim_options *opt, hymo_subsystem **out,
                                   hymo_error *err);

/* Hydraulic subsystem (src/cosim/cosim_hyd.c) of the circuits parts[0..n-1]
 * (copied).  interface_model = 0: one circuit, its cylinders in the part's
 * order.  interface_model = 1: all circuits of the model in lockstep
 * micro-steps, the cylinders in model order.  circ (constants at t = 0)
 * must outlive the subsystem; p0, u0: full-size initial pressures and
 * spools. */
hymo_status hymo_cosim_hyd_create(const hymo_model *model, const hymo_cosim_options *opt, const hymo_circuit *circ,
                                  const hymo_circuit_part *parts, int n_parts, int interface_model, const double *p0,
                                  const double *u0, hymo_subsystem **out, hymo_error *err);

#endif
