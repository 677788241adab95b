/* hymo — split-mode co-simulation (SPEC §7, seeds 000, 001, 003, 004).
 *
 * The model is split at every cylinder and hydraulic motor into one
 * mechanical subsystem and one hydraulic subsystem per circuit (connected
 * volumes), hymo_split; the
 * generic master (hymo/master.h) with Jacobi or Gauss-Seidel stages
 * exchanges s, sd (mechanics -> hydraulics) and F_s or the chamber
 * pressures (hydraulics -> mechanics), or with TLM (seed 003) the wave
 * variables of delay lines at the chambers, every communication step H,
 * approximating inputs between communication points by Lagrange
 * extrapolation, seed 001's quadratic or seed 000's reduced interface
 * model.  Accuracy is monitored by the power-bond residual energy
 * (seed 000 Eqs. 21-24) and, given a reference, by trajectory errors. */
#ifndef HYMO_COSIM_H
#define HYMO_COSIM_H

#include "hymo/compare.h"
#include "hymo/master.h"
#include "hymo/model.h"
#include "hymo/reference.h"
#include "hymo/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Co-simulation scheme (hymo_cosim_scheme, HYMO_SCHEME_*): in
 * hymo/master.h, shared with the generic master. */
/* TLM (seed 003 §3.1): each cylinder chamber's volume node becomes a
 * loss-less, purely capacitive bilateral delay line of delay T = H and
 * impedance Z_c = B_e T / V (= T / C, C = V / B_e the node's compliance at
 * the actuator length of the step start); wave variables c cross it
 * (docs/cosimulation.md, "TLM coupling"). */
typedef enum {
    HYMO_COUPLING_VELOCITY_FORCE = 0,
    HYMO_COUPLING_VELOCITY_PRESSURE = 1,
    HYMO_COUPLING_TLM = 2
} hymo_coupling_kind;
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
/* Integrator of the hydraulic subsystems (fixed step h_h): explicit Euler,
 * classical Runge-Kutta 4, or trapezoidal. */
typedef enum { HYMO_HYD_EULER = 0, HYMO_HYD_RK4 = 1, HYMO_HYD_TRAPEZOIDAL = 2 } hymo_hyd_integrator_kind;
/* trapezoidal: the Newton engine of hymo_sim (formulation double-step or
 * penalty); index1: ALI1 penalty with semi-implicit Euler (seed 000). */
typedef enum { HYMO_MECH_TRAPEZOIDAL = 0, HYMO_MECH_INDEX1 = 1 } hymo_mech_integrator_kind;

/* The mechanics' inputs (F, or the chamber pressures) between
 * communication points: extrapolated like the hydraulics' inputs (order p
 * of the approximation, 1 with the interface model), or held at their
 * latest value (order 0), as in seed 000, which extrapolates only the
 * hydraulic inputs. */
typedef enum { HYMO_MECH_INPUTS_EXTRAPOLATE = 0, HYMO_MECH_INPUTS_HOLD = 1 } hymo_mech_inputs_kind;

/* Verdict of a co-simulation (docs/cosimulation.md, "Verdicts"):
 *   STABLE      bounded, and no accuracy threshold was given;
 *   ACCURATE    bounded, and every accuracy threshold holds;
 *   INACCURATE  bounded, but an accuracy threshold fails (exit 1);
 *   UNSTABLE    a state blew up, a subsystem failed, or the residual
 *               energy or the energy-balance error grew beyond the
 *               relative limits (exit 3). */
typedef enum {
    HYMO_VERDICT_STABLE = 0,
    HYMO_VERDICT_ACCURATE = 1,
    HYMO_VERDICT_INACCURATE = 2,
    HYMO_VERDICT_UNSTABLE = 3
} hymo_cosim_verdict;
const char *hymo_cosim_verdict_name(hymo_cosim_verdict v); /* "stable", "accurate", "inaccurate", "unstable" */

/* Options of a split-mode co-simulation (hymo_cosim_run); set them with
 * hymo_cosim_options_default, then change fields. */
typedef struct {
    hymo_cosim_scheme scheme;
    hymo_coupling_kind coupling;
    hymo_approx_kind approx;
    hymo_hyd_integrator_kind hyd_integrator;
    hymo_mech_integrator_kind mech_integrator;
    hymo_run_options mech; /* formulation, Jacobian, tolerances, t_end; mech.dt is h_m */
    double H;              /* communication step, s */
    double h_h;            /* hydraulic internal step, s (H/h_h integer) */
    hymo_mech_inputs_kind mech_inputs; /* default extrapolate */
    /* Instability (docs/cosimulation.md, "Verdicts").  With W(t) the
     * cumulative |actuator work| sum_a int |F_a sd_a| dt, E(t) the total
     * residual energy and D(t) the energy-balance error (SPEC §4), a run is
     * unstable at the first communication point t where a state or output
     * is non-finite, a subsystem fails, or
     *   |E(t)| > unstable_energy                          (absolute cap),
     *   |E(t)| > unstable_ratio W(t) + unstable_floor,
     *   |D(t)| > unstable_balance_ratio W(t) + unstable_floor;
     * and a run that reached t_end is unstable when over its last quarter
     *   |E(T) - E(3T/4)| or |D(T) - D(3T/4)|
     *       > unstable_ratio (W(T) - W(3T/4)) + unstable_floor  (growth).
     * D has the larger ratio: index-1 mechanics loses energy in bursts by
     * design (seed 000 Fig. 10), bounded losses of up to 19 % of W were
     * measured on crane2. */
    double unstable_energy; /* J, default 1e6 */
    double unstable_ratio;  /* default 0.1 */
    double unstable_balance_ratio; /* default 0.5 */
    double unstable_floor;  /* J, > 0, default 1 */
    /* Accuracy thresholds against a reference (0: not checked), as in
     * `hymo compare`: largest per-component RMS / absolute error of each
     * signal HYMO_CMP_*, and max |total residual energy| (J, checked with or
     * without a reference).  Any exceeded: verdict INACCURATE. */
    double max_rms[HYMO_CMP_SIGNALS], max_abs[HYMO_CMP_SIGNALS];
    double max_residual_energy;
    /* Energy-balance bursts (checked with or without a reference): the
     * run is INACCURATE when, within any balance_window seconds [s, t],
     *   |D(t) - D(s)| > max_balance_jump (W(t) - W(s)) + unstable_floor,
     * D less the reference's energy-balance error when a reference is
     * given.  Defaults 0.05 and 1 s; max_balance_jump 0: not checked. */
    double max_balance_jump;
    double balance_window; /* s */
    int verbose;
    /* Communication-step control (docs/cosimulation.md, "Energy-controlled
     * communication steps").  HYMO_H_FIXED: every step is H.  HYMO_H_ENERGY:
     * H is the first step; after each step the residual energy dE_b of
     * every power bond b over the step, against the energy the bond
     * transferred in it, E_b = int |F sd~| dt, gives the estimate
     *   est = max_b |dE_b| / (tol_energy_rel E_b + tol_energy_abs);
     * a step with est > 1 is rejected and retaken from a checkpoint of the
     * master and every subsystem (hymo_master_checkpoint_*; when a
     * subsystem cannot save its state, no step is rejected and the summary
     * and file say so); a PI controller sets the next H.  Every H is an
     * integer multiple of H_min (which must be a multiple of the internal
     * steps h_h and h_m) in [H_min, H_max]; the steps land on t_end and,
     * with output_dt > 0 (a multiple of H_min), on every multiple of
     * output_dt.  Refused with the TLM coupling (its bonds' residual
     * energy is zero by construction). */
    int H_control;                         /* hymo_H_control_kind; default HYMO_H_FIXED */
    double tol_energy_rel, tol_energy_abs; /* default 1e-2 and 1e-3 J */
    double H_min, H_max;                   /* s; 0: h_m, and 20 H (at most t_end) */
    double output_dt;                      /* s; 0: no grid (the steps land on t_end) */
    /* Iterative coupling (hymo_master_step_iterated, hymo/master.h): each
     * communication step retaken from saved states until the coupling
     * variables converge to iterate_rtol, iterate_atol, at most
     * iterate_max retakes (0: non-iterative, the default); IQN-ILS,
     * rtol 1e-6, atol 1e-12 by default.  Not with TLM (the delay lines decouple the steps). */
    int iterate_max;
    double iterate_rtol, iterate_atol;
    hymo_iterate_accel iterate_accel;
} hymo_cosim_options;

/* Communication-step control (hymo_cosim_options.H_control). */
typedef enum { HYMO_H_FIXED = 0, HYMO_H_ENERGY = 1 } hymo_H_control_kind;

/* Defaults: Jacobi, velocity-pressure, p = 2, RK4, trapezoidal double-step
 * with the fast Jacobian, H = h_m = 1 ms, h_h = 0.1 ms, model's t_end,
 * mechanics' inputs extrapolated, no accuracy thresholds, fixed H. */
void hymo_cosim_options_default(hymo_cosim_options *opt, const hymo_model *model);
/* Validates opt: mech as hymo_run_options_check; H and h_h positive and
 * finite, H/h_h, H/mech.dt and t_end/H whole numbers, H <= t_end; the
 * instability limits positive (ratios and floor finite) and the accuracy
 * thresholds >= 0; every enum in range; not TLM with the interface model.  HYMO_OK,
 * or HYMO_ERR_ARGUMENT with the first violation in err. */
hymo_status hymo_cosim_options_check(const hymo_cosim_options *opt, hymo_error *err);

/* Names of the option values as the CLI prints and parses them: static
 * strings, "?" for a value out of range.  "jacobi",
 * "gauss-seidel-mech-first", "gauss-seidel-hyd-first". */
const char *hymo_cosim_scheme_name(hymo_cosim_scheme s);
/* "velocity-force", "velocity-pressure", "tlm". */
const char *hymo_coupling_name(hymo_coupling_kind c);
const char *hymo_approx_name(hymo_approx_kind a); /* "0".."3", "quadratic", "interface-model" */
/* "euler", "rk4", "trapezoidal". */
const char *hymo_hyd_integrator_name(hymo_hyd_integrator_kind k);
/* "trapezoidal", "index1". */
const char *hymo_mech_integrator_name(hymo_mech_integrator_kind k);
/* Parsers of those names: 0 and *out set on success, -1 (*out unchanged)
 * for an unknown name.  "gauss-seidel" is gauss-seidel-mech-first. */
int hymo_cosim_scheme_parse(const char *s, hymo_cosim_scheme *out);
/* Coupling from its name (hymo_coupling_name): 0, or -1 if unknown. */
int hymo_coupling_parse(const char *s, hymo_coupling_kind *out);
/* Approximation from its name (hymo_approx_name; also "im" for
 * interface-model): 0, or -1 if unknown. */
int hymo_approx_parse(const char *s, hymo_approx_kind *out);
/* Hydraulic integrator from its name (hymo_hyd_integrator_name): 0, or -1
 * if unknown or NULL. */
int hymo_hyd_integrator_parse(const char *s, hymo_hyd_integrator_kind *out);
/* Mechanical integrator from its name (hymo_mech_integrator_name; also
 * "index-1" and "ali1" for index1): 0, or -1 if unknown. */
int hymo_mech_integrator_parse(const char *s, hymo_mech_integrator_kind *out);
const char *hymo_mech_inputs_name(hymo_mech_inputs_kind k); /* "extrapolate", "hold" */
/* "extrapolate" or "hold": 0, or -1 if unknown. */
int hymo_mech_inputs_parse(const char *s, hymo_mech_inputs_kind *out);
const char *hymo_H_control_name(int k); /* "fixed", "energy" */
/* "fixed" or "energy": 0, or -1 if unknown. */
int hymo_H_control_parse(const char *s, int *out);

/* Applies one co-simulation option NAME VALUE as spelled on the command
 * line of `hymo cosim` (e.g. "--H" "2e-3", "--coupling" "tlm",
 * "--extrapolation" "quadratic", "--max-rms" "s=1e-3", "--t-end" "5";
 * the options of `hymo cosim --help` but --set, --reference, -o, -q) to o:
 * 1 consumed, 0 not a co-simulation option (o unchanged), -1 bad value
 * (HYMO_ERR_ARGUMENT in err, naming the option and the value).  The
 * multiples (H/h_h, t_end/H) are checked by hymo_cosim_options_check. */
int hymo_cosim_option(const char *name, const char *value, hymo_cosim_options *o, hymo_error *err);

/* ---- the split of a model: subsystems and links (also for FMU export) ----
 *
 * "Cylinder a" below is a coupled actuator: the na = n_cylinders + n_motors
 * cylinders, then the motors (motor k is actuator n_cylinders + k: s its
 * joint coordinate, F its torque, its ports a, b in place of the piston
 * and rod chambers).  Driven joints stay in the mechanics
 * (not coupled); their actuators' variables follow the motors'.  TLM
 * refuses motors; the interface model and the index-1 mechanics refuse
 * driven joints.
 *
 * Subsystem 0, the mechanics (hymo_sim in split mode: trapezoidal
 * double-step or penalty; or the index-1 formulation), na cylinders:
 *   inputs   velocity-force F_a (input a); velocity-pressure p_pist,a (2a)
 *            and p_rod,a (2a+1), from which it evaluates F_s itself; TLM
 *            the waves c_pist,a (2a), c_rod,a (2a+1) the hydraulic ends
 *            sent, evaluated T = H late (at tau - H);
 *   outputs  s_a (a), sd_a (na + a), sdd_a (2na + a); with the interface
 *            model also G = A (I - P_c) M^-1 A^T = M_eff^-1 (3na + a na + b)
 *            and a0 = sdd at zero cylinder force (3na + na^2 + a), so that
 *            sdd = a0 + G F (seed 000 Eqs. 12-15); TLM also the waves
 *            c_pist,a (3na + 2a), c_rod,a (3na + 2a + 1) of the
 *            mechanical ends, c = p + Z_c Q with p = c_hyd + Z_c Q the
 *            chamber pressure it applies and Q = -dV/ds sd its flow into
 *            the line;
 *   TLM variables  line_power[a] (power the two lines deliver to the
 *            piston), tlm_impedance[j], tlm_inductance[j] (L = T Z_c),
 *            tlm_mass[j] (L A^2, seed 003 Eq. 8) per chamber j = 2a
 *            (piston), 2a + 1 (rod), of the current step;
 *   variables  per step (SPEC §8): time, z[j], zd[j], zdd[j], s[a], sd[a],
 *            force[a], work[a], kinetic_energy, potential_energy,
 *            energy_drift, constraint_position[c], constraint_velocity[c],
 *            constraint_acceleration[c], newton_iterations, residual_norm;
 *            statistics: steps, newton_iterations_total,
 *            newton_iterations_max, jacobian_evaluations, reselections,
 *            peak_drift, max_work, max_constraint_position,
 *            max_constraint_velocity, max_constraint_acceleration; the
 *            string independent.
 * Subsystems 1.., the hydraulics: one per circuit (connected volumes, in
 * the order of the circuit partition), its cylinders i in the circuit's
 * order; with the interface model one subsystem for all circuits (the
 * reduced model couples them), its cylinders in model order (nc of them):
 *   inputs   s_i (2i), sd_i (2i+1); interface model also G (2nc + i nc + j)
 *            and a0 (2nc + nc^2 + i), used as values at the step start;
 *            TLM also the mechanical waves c_pist,i (2nc + 2i), c_rod,i
 *            (2nc + 2i + 1), evaluated at tau - H; s at the step start
 *            gives Z_c, sd is not used (the chamber nodes are the lines);
 *   outputs  velocity-force F_s,i (i); velocity-pressure p_pist,i (2i),
 *            p_rod,i (2i+1); TLM the waves c_pist,i (2i), c_rod,i (2i+1)
 *            of the hydraulic ends, c = p_h + Z_c Q_h (p_h the chamber
 *            node's pressure, Q_h the circuit's flow into the line);
 *            variable line_power[a] (power the circuit delivers into
 *            cylinder a's two lines);
 *   variables  time, p[k] and u[k] of its volumes and spools (model state
 *            index), sd_input[a] (cylinder a's rate the hydraulics used at
 *            the end of its last step: sd~ of the power bond), statistics
 *            steps, rhs_evaluations, newton_iterations, jacobians.
 * links: each output above drives the input of the same quantity.
 * stage, order, at_start: the master configuration for opt (scheme;
 * Lagrange order of the inputs: p, 2 for quadratic, with the interface
 * model 1 for the mechanics and 0 at the step start for the hydraulics;
 * the mechanics' order is 0 when opt->mech_inputs is hold).
 * im_interpolate (interface model with gauss-seidel-mech-first: the first
 * of these inputs, 2 na; else 0): the hydraulics' inputs G and a0 are interpolated linearly between the step
 * start and the mechanics' fresh values at its end (order 1, not only
 * points up to the step start), and the reduced model evaluates them at
 * every micro-step; s and sd stay the values at the step start, the
 * initial condition of the reduced model. */
typedef struct {
    int n_subsystems;
    hymo_subsystem **subsystems; /* owned */
    int n_links;
    hymo_link *links;
    int *stage, *order, *at_start; /* per subsystem */
    int im_interpolate;
} hymo_split;

/* Builds the subsystems of the model's split for opt (checked). */
hymo_status hymo_split_create(const hymo_model *model, const hymo_cosim_options *opt, hymo_split **out,
                              hymo_error *err);
/* A master over split's subsystems: its links, stages and input
 * approximation, communication step H. */
hymo_status hymo_split_master_create(const hymo_split *split, double H, hymo_master **out, hymo_error *err);
/* Destroys the subsystems (hydraulics first) and frees the split; NULL is
 * a no-op. */
void hymo_split_free(hymo_split *split);

/* Results of hymo_cosim_run (printed by hymo_cosim_summary_print). */
typedef struct {
    int stable;             /* 0: unstable (reason says why); the run ended cleanly */
    char reason[512];
    hymo_cosim_verdict verdict;
    char verdict_reason[512]; /* unstable: = reason; inaccurate: the first threshold exceeded */
    double work_abs;          /* W(t_reached): cumulative |actuator work|, J */
    double max_residual_ratio; /* max_t |E(t)| / (W(t) + unstable_floor) */
    double max_balance_ratio;  /* max_t |D(t)| / (W(t) + unstable_floor) */
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
    /* TLM coupling (0 otherwise): the chambers' parasitic mass L A^2
     * (seed 003 Eq. 8), largest over the cylinder chambers, kg, at t = 0
     * and over the run; per line lines for the printed summary */
    int n_tlm;
    double tlm_mass_initial_max, tlm_mass_max;
    char tlm_report[1024];
    /* the motor ports' parasitic inertia L D^2, largest over the
     * motor ports, kg m^2, at t = 0 and over the run (0 without motors;
     * kept apart from the chambers' masses: another unit) */
    double tlm_inertia_initial_max, tlm_inertia_max;
    /* Online verdict figures: max |p - p_ref| over the volumes at the
     * communication points (reference interpolated; has_pressure_error 0
     * without a reference of the same volumes), Pa, and its time; the
     * largest energy-balance burst excess |D(t) - D(s)| -
     * max_balance_jump (W(t) - W(s)) over windows [s, t] of
     * balance_window, J, with its |D(t) - D(s)| and window; the largest
     * |D(t) - D(s)| of any window, J. */
    int has_pressure_error;
    double max_pressure_error, t_max_pressure_error;
    double balance_jump_excess, balance_jump_at, balance_jump_t0, balance_jump_t1;
    double balance_jump;
    /* Energy-controlled steps (H_control HYMO_H_ENERGY; else 0): rejected
     * steps, the smallest, largest and mean accepted H, the largest
     * accepted estimate; can_reject 0 when a subsystem cannot save its
     * state (then no step was rejected), with the reason */
    int H_control;
    long n_rejected;
    double H_used_min, H_used_max, H_used_mean, est_max;
    int can_reject;
    char control_note[256];
    /* Iterative coupling (opt->iterate_max > 0; else 0): retakes over the
     * run, steps not converged after iterate_max retakes, the largest final
     * weighted residual of a step (<= 1: converged), coupling variables. */
    long iterate_total, iterate_non_converged;
    double iterate_max_residual;
    int iterate_n_coupling;
} hymo_cosim_summary;

/* Runs the co-simulation from 0 to opt->mech.t_end: hymo_split_create,
 * hymo_split_master_create, then master steps, each followed by the power
 * bonds, the instability checks and the output row (read through the
 * subsystems' variables); at the end the verdict (errors against ref and
 * the accuracy thresholds of opt).  ref (may be NULL): a
 * reference of the same model for the error metrics.  out_path (may be
 * NULL): HDF5 output (SPEC §8 layout + /cosim group), written atomically.
 * An unstable configuration is not an error: HYMO_OK with stable = 0 and
 * only finite rows written (complete = 0).  Errors: bad options, model
 * mismatch, I/O. */
hymo_status hymo_cosim_run(const hymo_model *model, const hymo_cosim_options *opt, const hymo_reference *ref,
                           const char *out_path, hymo_cosim_summary *summary, hymo_error *err);

/* The size of the file a co-simulation with options opt would write
 * (*bytes: the rows of every communication point, at most t_end/H_min
 * with H control, plus the model text and 64 KiB of names and attributes;
 * the co-simulation's own coupling series come on top) and, with
 * with_time, its run time (*seconds, from a probe of at most 50
 * communication steps without a file; -1 when not estimated).  Errors:
 * bad options. */
hymo_status hymo_cosim_estimate(const hymo_model *model, const hymo_cosim_options *opt, int with_time,
                                double *bytes, double *seconds, hymo_error *err);

/* Prints the summary of a co-simulation run with options opt to out: the
 * configuration, status, residual energy, energy balance, iterations, TLM
 * lines, errors against the reference (if any) and the verdict. */
void hymo_cosim_summary_print(FILE *out, const hymo_cosim_options *opt, const hymo_cosim_summary *s);

#ifdef __cplusplus
}
#endif
#endif
