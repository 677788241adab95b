/* hymo — linear test subsystems and the stability prediction of seed 004
 * (SPEC §7): x' = A x + B u, y = C x + D u, integrated by the classical
 * RK4 method with step h (H/h an integer), the inputs being the master's
 * polynomials evaluated at the RK4 stage times. */
#ifndef HYMO_LINEAR_H
#define HYMO_LINEAR_H

#include "hymo/master.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A linear time-invariant system x' = A x + B u, y = C x + D u (nx
 * states, nu inputs, ny outputs); the matrices are the caller's. */
typedef struct {
    int nx, nu, ny;
    const double *A, *B, *C, *D; /* row-major nx*nx, nx*nu, ny*nx, ny*nu (D may be NULL: 0) */
    double h;                    /* RK4 step, s */
} hymo_linear_system;

/* A subsystem for sys (the matrices are copied) starting from x0 (NULL: 0). */
hymo_status hymo_linear_subsystem_create(const hymo_linear_system *sys, const double *x0, const char *name,
                                         hymo_subsystem **out, hymo_error *err);

/* Seed 004: the co-simulation of the linear systems wired by links is, per
 * communication step, a linear map of z = (states, the p+1 latest outputs
 * of every system) -- the compound matrix.  It is formed column by column
 * by running one master step of the actual code from unit vectors, and its
 * spectral radius rho is returned; rho < 1 <=> the co-simulation is stable
 * (after the p start-up steps).  n_z (may be NULL) gets the matrix size. */
hymo_status hymo_linear_cosim_spectral_radius(const hymo_linear_system *systems, int n_systems,
                                              const hymo_link *links, int n_links, const hymo_master_options *opt,
                                              double *rho, int *n_z, hymo_error *err);

#ifdef __cplusplus
}
#endif
#endif
