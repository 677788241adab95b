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

/* The states a communication step maps, per subsystem (hymo_split_point_*,
 * src/cosim/cosim_point.c): size, copy, new value at time t (mechanics:
 * z, zd, and zdd when not NULL, which only the outputs read; hydraulics:
 * pressures and spools of its circuits); the mechanics' outputs
 * re-evaluated at its state; the hydraulics from full-size p, u. */
int hymo_cosim_mech_point_size(const hymo_subsystem *sub);
void hymo_cosim_mech_point_get(const hymo_subsystem *sub, double *x);
void hymo_cosim_mech_point_set(hymo_subsystem *sub, double t, const double *x, const double *zdd);
hymo_status hymo_cosim_mech_point_outputs(hymo_subsystem *sub, hymo_error *err);
int hymo_cosim_hyd_point_size(const hymo_subsystem *sub);
void hymo_cosim_hyd_point_get(const hymo_subsystem *sub, double *x);
void hymo_cosim_hyd_point_set(hymo_subsystem *sub, double t, const double *x);
void hymo_cosim_hyd_point_full(hymo_subsystem *sub, double t, const double *p, const double *u);

/* The same for the split's subsystem k (0 the mechanics), and every
 * subsystem put at row `row` of ref, a monolithic reference of model (z,
 * zd, zdd, p, u at its time; the mechanics' outputs evaluated there). */
int hymo_split_point_size(const hymo_split *sp, int k);
void hymo_split_point_get(const hymo_split *sp, int k, double *x);
void hymo_split_point_set(hymo_split *sp, int k, double t, const double *x);
hymo_status hymo_split_point_reference(hymo_split *sp, const hymo_model *model, const hymo_reference *ref, int row,
                                       hymo_error *err);

#endif
