/* hymo — generic co-simulation master (SPEC §7; non-iterative, or
 * iterative with hymo_master_step_iterated below) over
 * hymo_subsystem instances wired output -> input: the split of a model
 * (hymo/cosim.h), linear test systems (hymo/linear.h), external FMUs.  It
 * knows nothing about what the subsystems compute.
 *
 * Each communication step of size H from t: the stages run in increasing
 * order.  Within a stage every subsystem gets, per input, a polynomial
 * built from the latest values of the output it reads, then all of them
 * advance by H, then all publish their outputs at t + H.  So the
 * subsystems of one stage advance from the same data (Jacobi), and a later
 * stage sees the outputs an earlier one published in this step
 * (Gauss-Seidel; its Lagrange polynomial then interpolates through the new
 * point).  Default stages: all 0 for Jacobi, k for subsystem k with
 * Gauss-Seidel (array order), subsystem 0 last with Gauss-Seidel
 * hydraulics first (hymo_cosim_scheme).  Nothing is allocated after
 * create. */
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

/* Co-simulation scheme: the order in which the subsystems advance in a
 * communication step, as the default stages of hymo_master_create (the one
 * scheme type of the master and of split mode, hymo/cosim.h):
 *   JACOBI                   every subsystem in stage 0;
 *   GAUSS_SEIDEL_MECH_FIRST  subsystem k in stage k (array order; in split
 *                            mode the mechanics, subsystem 0, first, then
 *                            the hydraulics with fresh s, sd);
 *   GAUSS_SEIDEL_HYD_FIRST   subsystems 1, 2, ... in stages 0, 1, ... and
 *                            subsystem 0 last (in split mode the hydraulics
 *                            first, then the mechanics with fresh F / p).
 * HYMO_MASTER_JACOBI and HYMO_MASTER_GAUSS_SEIDEL (array order) name the
 * first two; hymo_master_scheme is the same type. */
typedef enum {
    HYMO_SCHEME_JACOBI = 0,
    HYMO_SCHEME_GAUSS_SEIDEL_MECH_FIRST = 1,
    HYMO_SCHEME_GAUSS_SEIDEL_HYD_FIRST = 2,
    HYMO_MASTER_JACOBI = HYMO_SCHEME_JACOBI,
    HYMO_MASTER_GAUSS_SEIDEL = HYMO_SCHEME_GAUSS_SEIDEL_MECH_FIRST
} hymo_cosim_scheme;
typedef hymo_cosim_scheme hymo_master_scheme;

/* Options of hymo_master_create. */
typedef struct {
    hymo_master_scheme scheme; /* default stages */
    int order;                 /* default input approximation: Lagrange order p = 0..3 */
    double H;                  /* communication step, s */
} hymo_master_options;

/* Opaque co-simulation master (hymo_master_create, hymo_master_free). */
typedef struct hymo_master hymo_master;

/* The master does not own the subsystems.  Every input of every subsystem
 * must be driven by exactly one link; errors name the link or input.  The
 * outputs at t = 0 are read here. */
hymo_status hymo_master_create(hymo_subsystem *const *subs, int n_subs, const hymo_link *links, int n_links,
                               const hymo_master_options *opt, hymo_master **out, hymo_error *err);

/* Stage of subsystem k (any int; see above).  Before the first step. */
hymo_status hymo_master_set_stage(hymo_master *m, int k, int stage, hymo_error *err);

/* Approximation of input `input` of subsystem k (-1: all its inputs) over
 * a step from t: the Lagrange polynomial of order 0..3 through the latest
 * order+1 values of its source (fewer at the start).  at_start = 1 uses
 * only values up to t, also when the source has already advanced in this
 * step: with order 0 the input is the source's value at t, an initial
 * condition (as the interface model's hydraulics needs). */
hymo_status hymo_master_set_input_approx(hymo_master *m, int k, int input, int order, int at_start,
                                         hymo_error *err);

/* One communication step from hymo_master_time() to + H.  A failing
 * subsystem's status and message are returned (the step is then not
 * counted; the subsystems that advanced stay advanced). */
hymo_status hymo_master_step(hymo_master *m, hymo_error *err);
/* Start of the next step: the time at the last change of H plus the steps
 * done since, times H (steps done times H while H never changed). */
double hymo_master_time(const hymo_master *m);
/* The communication step of the next steps, H > 0 and finite; the input
 * histories keep their time points, so extrapolation spans the unequal
 * steps. */
hymo_status hymo_master_set_step_size(hymo_master *m, double H, hymo_error *err);
double hymo_master_step_size(const hymo_master *m);
/* Communication steps done. */
long hymo_master_steps(const hymo_master *m);

/* A checkpoint: the master's time, step size and count, every subsystem's
 * input polynomials and output history, and every subsystem's state
 * (get_state/set_state).  Creating one fails, naming the subsystem, when
 * a subsystem cannot save its state (no state_size or a size of 0).
 * hymo_master_save overwrites the checkpoint with the current point;
 * hymo_master_restore returns the master and every subsystem to it, so
 * that a step retaken from it repeats the saved point's continuation. */
typedef struct hymo_master_checkpoint hymo_master_checkpoint;
hymo_status hymo_master_checkpoint_create(const hymo_master *m, hymo_master_checkpoint **out, hymo_error *err);
void hymo_master_save(const hymo_master *m, hymo_master_checkpoint *c);
void hymo_master_restore(hymo_master *m, const hymo_master_checkpoint *c);
/* NULL is a no-op. */
void hymo_master_checkpoint_free(hymo_master_checkpoint *c);
/* Iterative coupling (src/master/iterate.c): a communication step is
 * repeated from a checkpoint until the coupling variables -- the outputs
 * read by an input that is not held at the step start -- are consistent
 * with the values the inputs used at t + H.
 *
 * Step from t: save; the ordinary step (inputs extrapolated) is iterate 0.
 * Iterate k has residual r_i = y_i - u_i for every coupling variable i,
 * y_i the output at t + H, u_i the value at t + H of the input polynomial
 * of its first reader (by stage, then index).  The step is converged when
 *   max_i |r_i| / (atol + rtol S_i) <= 1
 * (weighted max norm; S_i the largest |value| of variable i at the
 * communication points so far and in u_i of iterate 0).  Otherwise the
 * master is restored and the step retaken with every output's value at
 * t + H replaced by the next estimate x: every input that reads it then
 * interpolates (Lagrange, its order) through (t + H, x) and the history
 * up to t; with several stages a later stage reads the outputs an earlier
 * one published in this sweep (block Gauss-Seidel), else all read x
 * (block Jacobi).  Next estimate, from x_k = u (r_k = y - x_k):
 *   NONE    x_{k+1} = y_k;
 *   AITKEN  x_{k+1} = x_k + w_k r_k, w_k = -w_{k-1} r_{k-1}.(r_k - r_{k-1})
 *           / |r_k - r_{k-1}|^2 (dynamic relaxation, residuals scaled by
 *           1 / (atol + rtol S_i)); w_0 the last step's final w clipped to
 *           [0.05, 1] (0.5 at the first step);
 *   IQN_ILS x_{k+1} = y_k + W a, a = argmin |V a + r_k| (QR), V, W the
 *           differences of r and y of this step's iterates to iterate k
 *           (scaled as above; newest first, a column dropped when its
 *           part orthogonal to the newer ones is below 1e-3 of its
 *           norm); x_1 as AITKEN.
 * When iterate 0 fails (a subsystem's error), it is retaken with every
 * output at t + H set to its value at t (counted as a retake).  A retake
 * in which a subsystem fails or an output is not finite is
 * retaken with x halved towards the estimate of the last good iterate (up
 * to 8 times; each counts as a retake).  After max_iterations retakes the
 * last iterate is kept (not converged). */
typedef enum { HYMO_ACCEL_NONE = 0, HYMO_ACCEL_AITKEN = 1, HYMO_ACCEL_IQN_ILS = 2 } hymo_iterate_accel;
const char *hymo_iterate_accel_name(hymo_iterate_accel a); /* "none", "aitken", "iqn-ils", "?" */
int hymo_iterate_accel_parse(const char *s, hymo_iterate_accel *out); /* 0, or -1 unknown */
typedef struct {
    int max_iterations; /* retakes per step, >= 1 */
    double rtol, atol;  /* > 0, >= 0 */
    hymo_iterate_accel accel;
} hymo_iterate_options;
/* Figures of the last step and totals over the steps taken. */
typedef struct {
    int iterations;  /* retakes of the last step (0: iterate 0 converged) */
    double residual; /* its final weighted residual (<= 1: converged) */
    int converged;
    long steps, total_iterations, non_converged;
    double max_residual; /* largest final residual of a step */
} hymo_iterate_stats;
/* Iteration workspace: a checkpoint and the vectors of the coupling
 * variables (nothing is allocated per step).  Fails like
 * hymo_master_checkpoint_create, and for bad options. */
typedef struct hymo_master_iteration hymo_master_iteration;
hymo_status hymo_master_iteration_create(const hymo_master *m, const hymo_iterate_options *opt,
                                         hymo_master_iteration **out, hymo_error *err);
/* Number of coupling variables. */
int hymo_master_iteration_size(const hymo_master_iteration *it);
/* One iterated communication step; stats (may be NULL) is updated.  A
 * failing subsystem's status is returned as by hymo_master_step. */
hymo_status hymo_master_step_iterated(hymo_master *m, hymo_master_iteration *it, hymo_iterate_stats *stats,
                                      hymo_error *err);
/* NULL is a no-op. */
void hymo_master_iteration_free(hymo_master_iteration *it);

/* Latest published outputs of subsystem k. */
const double *hymo_master_outputs(const hymo_master *m, int k);
/* Input polynomials subsystem k got for the last step (HYMO_POLY_TERMS per
 * input, in tau = t - t_n from the step start t_n): the value input i had
 * at the end of the step is hymo_poly_eval(c + HYMO_POLY_TERMS * i, H). */
const double *hymo_master_inputs(const hymo_master *m, int k);
/* Frees the master (not the subsystems, which it does not own); NULL is a
 * no-op. */
void hymo_master_free(hymo_master *m);

#ifdef __cplusplus
}
#endif
#endif
