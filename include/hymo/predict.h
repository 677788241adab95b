/* hymo — stability of split-mode co-simulation predicted along a
 * monolithic reference trajectory (docs/cosimulation.md, "Predicting the
 * achievable H").
 *
 * At points of the reference (evenly spaced rows), the split's subsystems
 * are put at the reference's state (positions, velocities, pressures,
 * spools) with steady output histories, and the compound matrix of ONE
 * communication step of the actual master (seed 004) is formed by forward
 * finite differences: z = the subsystems' states (mechanics z, zd;
 * hydraulics pressures and spools) and the latest values of every output
 * another subsystem reads (as many as the readers' Lagrange orders use),
 * column i = (step(z + e_i) - step(z)) / |e_i|, every probe from
 * a checkpoint of the point.  rho(t) is its spectral radius; a
 * configuration is predicted unstable at H when rho > rho_limit at
 * `sustain` consecutive points (sustained growth; a single point is a
 * transient whose growth stays bounded), and its predicted achievable H is
 * the largest H of a list such that it and every smaller H are predicted
 * stable. */
#ifndef HYMO_PREDICT_H
#define HYMO_PREDICT_H

#include "hymo/cosim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options of the prediction (hymo_predict_options_default). */
typedef struct {
    int points;       /* trajectory points: rows at t = (j + 1/2) t_end / points, j < points; default 20 */
    double eps;       /* relative finite-difference step: |e_i| = eps (|z_i| + 1); default 1e-6 */
    double rho_limit; /* growth while rho > rho_limit; default 1.03 */
    int sustain;      /* unstable: rho > rho_limit at this many consecutive points; default 2 */
} hymo_predict_options;
void hymo_predict_options_default(hymo_predict_options *po);

/* rho(t) of the configuration opt (opt->H, opt->mech.dt as given) at the
 * points of po along ref, a monolithic reference of model: t[j], rho[j]
 * for j < *n.  stop_above > 0: stops after po->sustain consecutive
 * points whose rho exceeds it (*n counts the points done).  t, rho: po->points entries.
 * Errors: TLM coupling (its lines' waves are states this map does not
 * carry), a reference of another size, a subsystem failing at a point. */
hymo_status hymo_predict_rho(const hymo_model *model, const hymo_cosim_options *opt, const hymo_reference *ref,
                             const hymo_predict_options *po, double stop_above, double *t, double *rho, int *n,
                             hymo_error *err);

/* One communication step's prediction. */
typedef struct {
    double H;
    int evaluated;   /* 0: not needed (a smaller H already failed) */
    int stable;      /* no sustain consecutive points with rho > rho_limit */
    double rho_max;  /* largest rho over the points done */
    double t_rho_max;
    double t_first;  /* unstable: the time of the first of those points; NAN otherwise */
    int n_points;    /* points done (all of them when stable; up to the last of those otherwise) */
} hymo_predict_step;

/* The predicted achievable H of configuration opt over Hs[0..nH-1]
 * (ascending): each H in turn (opt->H = opt->mech.dt = H, as a sweep
 * does), stopping at the first one predicted unstable; steps[i] for each
 * H, *achievable the largest H whose it and every smaller H are predicted
 * stable (0 if none). */
hymo_status hymo_predict_achievable(const hymo_model *model, const hymo_cosim_options *opt,
                                    const hymo_reference *ref, const double *Hs, int nH,
                                    const hymo_predict_options *po, hymo_predict_step *steps, double *achievable,
                                    hymo_error *err);

#ifdef __cplusplus
}
#endif
#endif
