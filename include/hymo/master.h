/* hymo — generic non-iterative co-simulation master (SPEC §7) over
 * hymo_subsystem instances wired output -> input: linear test systems
 * (hymo/linear.h) today, external FMUs later.  The split-mode driver of a
 * model (hymo/cosim.h) uses the same node and input-extrapolation code.
 *
 * Each communication step of size H: every subsystem gets, per input, the
 * Lagrange polynomial of order p through the latest p+1 values of the output
 * it reads (fewer at the start), advances by H and publishes its outputs.
 * Jacobi: all subsystems from the same data.  Gauss-Seidel: in array
 * order, each using the outputs already published in this step (its
 * polynomial then interpolates through the new point). */
#ifndef HYMO_MASTER_H
#define HYMO_MASTER_H

#include "hymo/error.h"
#include "hymo/subsystem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Output `output` of subsystem `from` drives input `input` of subsystem `to`. */
typedef struct {
    int from, output, to, input;
} hymo_link;

typedef enum { HYMO_MASTER_JACOBI = 0, HYMO_MASTER_GAUSS_SEIDEL = 1 } hymo_master_scheme;

typedef struct {
    hymo_master_scheme scheme;
    int order; /* Lagrange extrapolation order p = 0..3 */
    double H;  /* communication step, s */
} hymo_master_options;

typedef struct hymo_master hymo_master;

/* The master does not own the subsystems.  Every input of every subsystem
 * must be driven by exactly one link; errors name the link or input. */
hymo_status hymo_master_create(hymo_subsystem *const *subs, int n_subs, const hymo_link *links, int n_links,
                               const hymo_master_options *opt, hymo_master **out, hymo_error *err);
/* One communication step from hymo_master_time() to + H. */
hymo_status hymo_master_step(hymo_master *m, hymo_error *err);
double hymo_master_time(const hymo_master *m);
/* Latest published outputs of subsystem k. */
const double *hymo_master_outputs(const hymo_master *m, int k);
void hymo_master_free(hymo_master *m);

#ifdef __cplusplus
}
#endif
#endif
