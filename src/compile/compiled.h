/* The compiled model (the "mjModel" role): everything that depends only on
 * the model file, computed once and shared read-only by every run, every
 * co-simulation subsystem and every sweep thread.
 *
 *   constants (hymo_model_load_*):  kinematic constants, constraint
 *                                   primitives, node maps, circuit partition
 *   initial state (first use):      assembled joint coordinates, cylinder
 *                                   lengths and chamber lengths at t = 0,
 *                                   static-equilibrium pressures
 *
 * The initial state is computed on first use (hymo_compiled_initial) under
 * a lock, so that a model that loads but cannot be assembled fails in the
 * run, with the run's message, exactly once per model. */
#ifndef HYMO_COMPILED_H
#define HYMO_COMPILED_H

#include <pthread.h>

#include "circuit.h"
#include "constraints.h"
#include "hymo/model.h"
#include "kinematics.h"

struct hymo_compiled {
    /* constants */
    hymo_kin_model kin;
    hymo_constraints con;
    /* initial state (hymo_compiled_initial) */
    pthread_mutex_t lock;
    int initial_done;
    hymo_status initial_status;
    hymo_error initial_err;
    hymo_circuit circ; /* circuit constants at the initial geometry (s0, chamber lengths) */
    double *z0;        /* nz: assembled joint coordinates */
    /* nz: initial joint rates (bodies[].joint.rate) projected onto the
     * velocity constraints (zero when none is given); rates_report: one
     * line saying how ("" when no rate is given) */
    double *zd0;
    char rates_report[256];
    double *p0;        /* np: static-equilibrium (or given) pressures */
    double *u0;        /* nu: spool positions (zero) */
    /* the hydraulic circuits of a co-simulation split (hymo_circuit_partition);
     * parts_status/parts_err: why the model cannot be split, if so */
    int n_parts;
    hymo_circuit_part *parts;
    hymo_status parts_status;
    hymo_error parts_err;
};
typedef struct hymo_compiled hymo_compiled;

/* Constants (called by the loader); frees nothing on failure. */
hymo_status hymo_compile(hymo_model *model, hymo_error *err);
void hymo_compiled_free(hymo_compiled *cm);
/* The fewest actuators from which the static balance of a mechanism
 * without closed loops and with as many actuators as joints is solved
 * sparse (256; tests raise it to compare with the dense balance). */
extern int hymo_static_sparse_min;
/* The compiled model with its initial state, computed on the first call
 * (thread-safe); the error of a model that cannot start is repeated. */
hymo_status hymo_compiled_initial(const hymo_model *model, const hymo_compiled **out, hymo_error *err);

#endif
