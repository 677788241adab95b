/* hymo — monolithic simulation (the "mjData" half and the run driver).
 *
 * A hymo_sim holds everything a run changes; it refers to, but never
 * modifies, a hymo_model.  Runtime choices are small function tables
 * (formulation, linear solver) selected by the options below. */
#ifndef HYMO_SIM_H
#define HYMO_SIM_H

#include "hymo/model.h"
#include "hymo/reference.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Semirecursive formulation: double-step (coordinate partitioning into
 * independent coordinates) or penalty (index-3 augmented Lagrangian with
 * projections, penalty factor penalty_alpha). */
typedef enum { HYMO_FORMULATION_DOUBLE_STEP = 0, HYMO_FORMULATION_PENALTY = 1 } hymo_formulation_kind;
/* Newton matrix: numeric (forward differences at every iteration) or fast
 * (the approximate analytic matrix from the current evaluation). */
typedef enum { HYMO_JACOBIAN_NUMERIC = 0, HYMO_JACOBIAN_FAST = 1 } hymo_jacobian_mode;
/* Linear solver of the Newton systems: dense LU, sparse KLU, or auto:
 * chosen when the simulation is created, KLU where the engine's O(n) tree
 * mode applies (an open tree of at least 16 joints without constraints,
 * cut or driven joints, whose Newton matrix is the fast Jacobian, solved
 * by the trapezoidal engine; docs/performance.md "A mechanism without
 * hydraulics in tree mode"), the dense LU otherwise (co-simulation's
 * mechanics included).  The simulation, its summary and its file record
 * the solver chosen. */
typedef enum { HYMO_LINSOL_DENSE = 0, HYMO_LINSOL_KLU = 1, HYMO_LINSOL_AUTO = 2 } hymo_linsol_kind;
/* trapezoidal: the fixed-step trapezoidal Newton engine (seed 002);
 * ida: SUNDIALS IDA (variable order and step, error control by rtol/atol)
 * on the double-step formulation as an ODE in the independent coordinates,
 * sampled on the dt grid. */
typedef enum { HYMO_INTEGRATOR_TRAPEZOIDAL = 0, HYMO_INTEGRATOR_IDA = 1 } hymo_integrator_kind;
/* Newton stopping test of the trapezoidal engine.  contractive: the error
 * left after an update, estimated from the contraction rate theta of
 * successive increments as theta/(1-theta) |dx|, must be below a fraction
 * of the step's own truncation error (from the predictor-corrector
 * distance), never above the increment tolerances; seed: |dx| within the
 * increment tolerances (seed 002, SPEC §3). */
typedef enum { HYMO_NEWTON_CONTRACTIVE = 0, HYMO_NEWTON_SEED = 1 } hymo_newton_test_kind;
/* The default is contractive (hymo_run_options_default); seed reproduces
 * seed 002's iteration counts (--newton-test seed). */
/* Newton predictor: SPEC §3 as written, or with one more Taylor term
 * extrapolated from the previous step (and lambda extrapolated). */
typedef enum { HYMO_PREDICTOR_SEED = 0, HYMO_PREDICTOR_EXTRAPOLATE = 1 } hymo_predictor_kind;

/* Options of a monolithic run (hymo_sim_create, hymo_run); set them with
 * hymo_run_options_default, then change fields. */
typedef struct {
    hymo_integrator_kind integrator;
    hymo_newton_test_kind newton_test;
    hymo_formulation_kind formulation;
    hymo_jacobian_mode jacobian;
    hymo_linsol_kind linear_solver;
    hymo_predictor_kind predictor;
    double dt, t_end;
    double penalty_alpha;
    double tol_position, tol_pressure, tol_spool;
    int max_iter;
    /* double-step: re-select the independent coordinates when the smallest
     * pivot of the current partition falls below this fraction of the best
     * available one */
    double reselect_ratio;
    int verbose; /* progress/warnings on stderr */
    /* ida: relative tolerance, and the absolute tolerance of positions (rad
     * or m); those of the other states are scaled by the model's Newton
     * tolerance ratios (pressure/position, spool/position) */
    double rtol, atol;
    /* with an output file: estimate the run's own global error from a
     * companion run (the file's /accuracy group); default 1 */
    int error_estimate;
    /* file output: every output_every-th step (and the last) is written;
     * default 1 (every step) */
    int output_every;
    /* hymo_run: a progress line on stderr (rewritten in place) once the run
     * takes longer than 2 s; default 0 (the CLI turns it on for a terminal
     * or with --progress) */
    int progress;
    /* 1 = the penalty formulation scales the penalty factor
     * with the mechanism's mass matrix at the start, taking penalty_alpha
     * as its lower bound (docs/model-format.md "Penalty factor"); set by
     * hymo_run_options_default from the model (format 2 files without
     * simulation.penalty_alpha); 0 = penalty_alpha as given (the CLI's
     * --alpha sets 0) */
    int penalty_alpha_auto;
} hymo_run_options;

/* Default of hymo_run_options.reselect_ratio (model file:
 * simulation.reselect_threshold; CLI --reselect-threshold), chosen by
 * measurement (docs/models.md, "Re-selection threshold"). */
#define HYMO_RESELECT_THRESHOLD_DEFAULT 0.1

/* Defaults: double-step, numeric Jacobian, auto linear solver, model's simulation block. */
void hymo_run_options_default(hymo_run_options *opt, const hymo_model *model);
/* Validates opt: dt and t_end positive and finite (at most 1e9 steps),
 * penalty_alpha and the Newton tolerances positive, output_every and
 * max_iter >= 1, known integrator, Newton test and linear solver,
 * 0 < rtol < 1, atol > 0.
 * HYMO_OK, or HYMO_ERR_ARGUMENT with the first violation in err. */
hymo_status hymo_run_options_check(const hymo_run_options *opt, hymo_error *err);
/* output_every from a time interval (`hymo run --output-interval S`): the
 * number of steps of size dt in `interval`, which must be a whole number
 * >= 1 to 1e-9 (relative); else HYMO_ERR_ARGUMENT naming both. */
hymo_status hymo_output_every_from_interval(double interval, double dt, int *every, hymo_error *err);

/* Names of the option values as printed and parsed by the CLI: static
 * strings, never NULL (any other value gets the name of value 0). */
const char *hymo_formulation_name(hymo_formulation_kind kind);
/* "trapezoidal-newton" or "ida". */
const char *hymo_integrator_name(hymo_integrator_kind kind);
/* "contractive" or "seed". */
const char *hymo_newton_test_name(hymo_newton_test_kind kind);
/* "numeric" or "fast". */
const char *hymo_jacobian_name(hymo_jacobian_mode mode);
/* "dense", "klu" or "auto". */
const char *hymo_linsol_name(hymo_linsol_kind kind);

/* Opaque simulation state (hymo_sim_create, hymo_sim_free). */
typedef struct hymo_sim hymo_sim;

/* Creates the simulation and computes the initial state: assembly of the
 * positions (SUNDIALS KINSOL on Phi = 0 holding the model's independent
 * hint),
 * zero velocities, U = 0, static-equilibrium pressures, consistent
 * accelerations. */
hymo_status hymo_sim_create(const hymo_model *model, const hymo_run_options *opt, hymo_sim **out,
                            hymo_error *err);
/* Frees the simulation and everything it owns (not the model); NULL is a
 * no-op. */
void hymo_sim_free(hymo_sim *sim);

/* One trapezoidal Newton-Raphson step of size dt. */
hymo_status hymo_sim_step(hymo_sim *sim, hymo_error *err);

/* Read access to the current state.  The arrays are owned by the
 * simulation, valid until hymo_sim_free and overwritten by each step. */
/* Current time t (s). */
double hymo_sim_time(const hymo_sim *sim);
/* Number of steps taken so far. */
long hymo_sim_steps(const hymo_sim *sim);
/* Number of joint coordinates (length of z, zd, zdd). */
int hymo_sim_nz(const hymo_sim *sim);
/* Number of hydraulic pressures (length of p, pd). */
int hymo_sim_np(const hymo_sim *sim);
/* Number of valve spool states (length of u). */
int hymo_sim_nu(const hymo_sim *sim);
/* Number of actuators (cylinders; length of the actuator arrays). */
int hymo_sim_na(const hymo_sim *sim);
/* Joint coordinates z (nz). */
const double *hymo_sim_z(const hymo_sim *sim);
/* Joint velocities dz/dt (nz). */
const double *hymo_sim_zd(const hymo_sim *sim);
/* Joint accelerations d2z/dt2 (nz). */
const double *hymo_sim_zdd(const hymo_sim *sim);
/* Pressures p (np, Pa). */
const double *hymo_sim_p(const hymo_sim *sim);
/* Pressure rates dp/dt (np, Pa/s). */
const double *hymo_sim_pd(const hymo_sim *sim);
/* Valve spool states U (nu). */
const double *hymo_sim_u(const hymo_sim *sim);
/* Actuator lengths s at the last evaluation (na). */
const double *hymo_sim_actuator_length(const hymo_sim *sim);
/* Actuator (cylinder) forces F_s (na). */
const double *hymo_sim_actuator_force(const hymo_sim *sim);
/* Independent coordinates currently used by the double-step formulation
 * (indices into z); returns their number (nz for penalty, all listed). */
int hymo_sim_independent(const hymo_sim *sim, const int **indices);
/* Events located so far (switching functions crossed: end-damper entries
 * and exits) and, in *last if not NULL, the time of the last one (NaN if
 * none). */
long hymo_sim_events(const hymo_sim *sim, double *last);
/* Running summary (energy drift, violations, iterations so far). */
void hymo_sim_summary(const hymo_sim *sim, hymo_run_summary *summary);

/* One hydraulic motor at the last evaluation (docs/model-format.md,
 * "motors"): its joint rate, pressure drop, torque and flows, and powers. */
typedef struct {
    double speed;          /* w = zd_j, rad/s (m/s on a prismatic joint) */
    double dp;             /* p_a - p_b, Pa */
    double torque;         /* T, N m (N on a prismatic joint), on the joint */
    double flow;           /* Q = D w + C_L dp, m^3/s, a -> b through the motor */
    double flow_ideal;     /* D w, m^3/s */
    double flow_leakage;   /* C_L dp, m^3/s */
    double power_mech;     /* T w, W (> 0: the motor drives the load) */
    double power_hyd;      /* dp Q, W (> 0: the fluid gives power to the motor) */
} hymo_motor_state;
/* Motor k's state (0 <= k < model->n_motors) at the run's last evaluation;
 * HYMO_ERR_ARGUMENT for a bad index. */
hymo_status hymo_sim_motor_state(const hymo_sim *sim, int k, hymo_motor_state *out, hymo_error *err);

/* Runs from t = 0 to t_end; writes an HDF5 reference to out_path if not
 * NULL (atomically; complete = 0 if the run stops early). */
hymo_status hymo_run(const hymo_model *model, const hymo_run_options *opt, const char *out_path,
                     hymo_run_summary *summary, hymo_error *err);

/* Before a run: the size of its output file in *bytes (with_file; the
 * rows' data, the model text and 64 KiB for names and attributes: an
 * upper bound of an uncompressed file) and, with_time, its integration
 * time in *seconds from timing up to 50 steps (0.5 s) of a probe run with
 * the same options (-1: not estimated).  Either pointer may be NULL. */
hymo_status hymo_run_estimate(const hymo_model *model, const hymo_run_options *opt, int with_file, int with_time,
                              double *bytes, double *seconds, hymo_error *err);

#ifdef __cplusplus
}
#endif
#endif
