/* hymo — split-mode co-simulation (SPEC §7, seeds 000, 001, 004).
 *
 * The model is split at every cylinder into one mechanical subsystem and
 * one hydraulic subsystem per circuit (connected volumes); a non-iterative
 * Jacobi or Gauss-Seidel master exchanges s, sd (mechanics -> hydraulics)
 * and F_s or the chamber pressures (hydraulics -> mechanics) every
 * communication step H, approximating inputs between communication points
 * by Lagrange extrapolation, seed 001's quadratic or seed 000's reduced
 * interface model.  Accuracy is monitored by the power-bond residual energy
 * (seed 000 Eqs. 21-24) and, given a reference, by trajectory errors. */
#ifndef HYMO_COSIM_H
#define HYMO_COSIM_H

#include "hymo/compare.h"
#include "hymo/model.h"
#include "hymo/reference.h"
#include "hymo/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HYMO_SCHEME_JACOBI = 0,
    HYMO_SCHEME_GAUSS_SEIDEL_MECH_FIRST = 1, /* mechanics, then hydraulics with fresh s, sd */
    HYMO_SCHEME_GAUSS_SEIDEL_HYD_FIRST = 2   /* hydraulics, then mechanics with fresh F / p */
} hymo_cosim_scheme;
typedef enum { HYMO_COUPLING_VELOCITY_FORCE = 0, HYMO_COUPLING_VELOCITY_PRESSURE = 1 } hymo_coupling_kind;
/* Input approximation: Lagrange extrapolation of order 0..3 over the last
 * p+1 communication points; seed 001's quadratic; seed 000's interface
 * model (hydraulic inputs from M_eff, Q_eff; mechanical inputs linear). */
typedef enum {
    HYMO_APPROX_LAGRANGE0 = 0,
    HYMO_APPROX_LAGRANGE1 = 1,
    HYMO_APPROX_LAGRANGE2 = 2,
    HYMO_APPROX_LAGRANGE3 = 3,
    HYMO_APPROX_QUADRATIC = 4,
    HYMO_APPROX_INTERFACE_MODEL = 5
} hymo_approx_kind;
typedef enum { HYMO_HYD_EULER = 0, HYMO_HYD_RK4 = 1, HYMO_HYD_TRAPEZOIDAL = 2 } hymo_hyd_integrator_kind;
/* trapezoidal: the Newton engine of hymo_sim (formulation double-step or
 * penalty); index1: ALI1 penalty with semi-implicit Euler (seed 000). */
typedef enum { HYMO_MECH_TRAPEZOIDAL = 0, HYMO_MECH_INDEX1 = 1 } hymo_mech_integrator_kind;

typedef struct {
    hymo_cosim_scheme scheme;
    hymo_coupling_kind coupling;
    hymo_approx_kind approx;
    hymo_hyd_integrator_kind hyd_integrator;
    hymo_mech_integrator_kind mech_integrator;
    hymo_run_options mech; /* formulation, Jacobian, tolerances, t_end; mech.dt is h_m */
    double H;              /* communication step, s */
    double h_h;            /* hydraulic internal step, s (H/h_h integer) */
    /* a run is classified unstable when a state becomes non-finite, a
     * subsystem fails, or |total residual energy| exceeds this (J) */
    double unstable_energy;
    int verbose;
} hymo_cosim_options;

/* Defaults: Jacobi, velocity-pressure, p = 2, RK4, trapezoidal double-step
 * with the fast Jacobian, H = h_m = 1 ms, h_h = 0.1 ms, model's t_end. */
void hymo_cosim_options_default(hymo_cosim_options *opt, const hymo_model *model);
hymo_status hymo_cosim_options_check(const hymo_cosim_options *opt, hymo_error *err);

const char *hymo_cosim_scheme_name(hymo_cosim_scheme s);
const char *hymo_coupling_name(hymo_coupling_kind c);
const char *hymo_approx_name(hymo_approx_kind a); /* "0".."3", "quadratic", "interface-model" */
const char *hymo_hyd_integrator_name(hymo_hyd_integrator_kind k);
const char *hymo_mech_integrator_name(hymo_mech_integrator_kind k);
/* Parsers: 0 on success, -1 for an unknown name. */
int hymo_cosim_scheme_parse(const char *s, hymo_cosim_scheme *out);
int hymo_coupling_parse(const char *s, hymo_coupling_kind *out);
int hymo_approx_parse(const char *s, hymo_approx_kind *out);
int hymo_hyd_integrator_parse(const char *s, hymo_hyd_integrator_kind *out);
int hymo_mech_integrator_parse(const char *s, hymo_mech_integrator_kind *out);

typedef struct {
    int stable;             /* 0: unstable (reason says why); the run ended cleanly */
    char reason[512];
    double t_reached;       /* last communication point kept */
    long n_macro;           /* communication steps done */
    int n_bonds;            /* power bonds (one per cylinder) */
    double residual_energy_final;   /* total, J (signed) */
    double residual_energy_max_abs; /* max_t |total|, J */
    double peak_drift, max_work;    /* system energy balance (SPEC §4) */
    double max_constraint_position;
    double mean_mech_iterations;
    long hyd_steps, hyd_rhs_evals;
    double wall_time; /* s */
    int has_errors;   /* a reference was given */
    hymo_compare_result errors;
} hymo_cosim_summary;

/* Runs the co-simulation from 0 to opt->mech.t_end.  ref (may be NULL): a
 * reference of the same model for the error metrics.  out_path (may be
 * NULL): HDF5 output (SPEC §8 layout + /cosim group), written atomically.
 * An unstable configuration is not an error: HYMO_OK with stable = 0 and
 * only finite rows written (complete = 0).  Errors: bad options, model
 * mismatch, I/O. */
hymo_status hymo_cosim_run(const hymo_model *model, const hymo_cosim_options *opt, const hymo_reference *ref,
                           const char *out_path, hymo_cosim_summary *summary, hymo_error *err);

void hymo_cosim_summary_print(FILE *out, const hymo_cosim_options *opt, const hymo_cosim_summary *s);

#ifdef __cplusplus
}
#endif
#endif
