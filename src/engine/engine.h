/* The run data of a monolithic or split-mode simulation (the "mjData"
 * half) and the runtime-choice tables of the engine.
 *
 * A hymo_sim refers to a compiled model (src/compile/compiled.h: constants and the
 * initial state, shared read-only by every run of the model) and holds
 * everything one run changes, allocated once by hymo_sim_create.  Each
 * runtime choice is a {content; ops} table chosen at creation; the engine
 * calls through the tables and never asks which one it holds:
 *
 *   integrator     trapezoidal Newton (engine.c) | semi-implicit Euler (euler.c)
 *   formulation    double-step | penalty | index-1          (formulations/)
 *   jacobian       numeric | fast                            (jacobian.c)
 *   linear solver  dense | KLU                               (linsol.c)
 *   force source   monolithic | split velocity-force |
 *                  split velocity-pressure                   (forces.c)
 *
 * Data flow of one trapezoidal step (hymo_sim_step):
 *   inputs -> predictor (formulation.pack, forces.predict) -> Newton loop {
 *     residual: formulation.unpack -> forces.unpack -> forces.forces ->
 *               inverse dynamics -> formulation.residual, forces.residual
 *     jacobian.build (-> formulation.after_jacobian) -> linsol.factor
 *     linsol.solve -> update (formulation.after_update) }
 *   -> jacobian.finish -> formulation.finish_step -> forces.refresh
 *   -> commit -> records */
#ifndef HYMO_ENGINE_H
#define HYMO_ENGINE_H

#include "circuit.h"
#include "compiled.h"
#include "force_elements.h"
#include "hymo/sim.h"
#include "linsol.h"
#include "multibody.h"

/* the tightest rtol of IDA's error-estimate companion (ida.c) */
#define HYMO_IDA_COMPANION_RTOL_MIN 1e-13

typedef struct hymo_integrator_ops {
    const char *name; /* as written to reference files */
    /* the Newton matrix it uses if not the Jacobian table's (NULL) */
    const char *jacobian_name;
    /* its content (sim->integrator_content) at the initial state, and its release */
    hymo_status (*create)(hymo_sim *sim, hymo_error *err);
    void (*destroy)(hymo_sim *sim);
    /* one step of size opt.dt from (t_k, state) */
    hymo_status (*step)(hymo_sim *sim, hymo_error *err);
    /* time at which the next step samples external inputs (split mode):
     * t_{k+1} for the implicit rule, t_k for the explicit one */
    double (*input_time)(const hymo_sim *sim);
    /* the error-estimate companion (NULL: none): its options from the
     * run's, the main steps per companion step, the factor turning the
     * main-companion difference into the main run's error, and the order
     * of the method that factor assumes (0: none; then a second companion
     * at twice the companion's step checks the order observed) */
    void (*companion)(const hymo_run_options *opt, hymo_run_options *co, int *ratio, double *factor,
                      const char **method, int *order);
    /* the inputs jumped at the current time (a new communication step):
     * restart from the new input (trapezoidal: consistent accelerations
     * and actuator power, else its first step would carry the old input) */
    hymo_status (*restart)(hymo_sim *sim, hymo_error *err);
} hymo_integrator_ops;

typedef struct hymo_jacobian_ops {
    const char *name;
    /* rebuild at the first iteration of a step? */
    int (*refresh_at_start)(const hymo_sim *sim, int inputs_change);
    /* rebuild before the next iteration, given the scaled increments of
     * this iteration and the previous one? */
    int (*refresh_after)(double inc, double prev);
    /* the Newton matrix sim->jac.jm, sim->jac.jfull at the current evaluation (time t) */
    hymo_status (*build)(hymo_sim *sim, double t, hymo_error *err);
    /* a Newton correction below this fraction of the tolerances is not
     * applied (the evaluated iterate is kept); < 0: always applied */
    double negligible;
    /* the state (and residual norm) at the converged unknowns x;
     * at_evaluated: x is the iterate whose residual sim->solver.f holds */
    hymo_status (*finish)(hymo_sim *sim, const double *x, int at_evaluated, double t, hymo_error *err);
    /* builds the matrix from the formulation's parts (not column by column
     * from residuals), so that tree mode can leave M' out of it */
    int tree_capable;
} hymo_jacobian_ops;

/* Newton stopping test of the trapezoidal integrator. */
typedef struct hymo_newton_test_ops {
    const char *name;
    /* start of a step at the predicted unknowns x: sets sim->solver.newton_tau,
     * the step's target in units of the increment tolerances (<= 1) */
    void (*begin_step)(hymo_sim *sim, const double *x);
    /* after the update of iteration iter (scaled increments inc, and prev
     * of the iteration before; fresh: the matrix was built in this step):
     * converged? */
    int (*converged)(hymo_sim *sim, int iter, double inc, double prev, int fresh);
    /* at the converged unknowns */
    void (*end_step)(hymo_sim *sim, const double *x);
    /* after the step: does a reused (fast) matrix converge too slowly to
     * keep it for the next step? */
    int (*matrix_stale)(const hymo_sim *sim);
} hymo_newton_test_ops;

extern const hymo_newton_test_ops hymo_newton_contractive_ops;
extern const hymo_newton_test_ops hymo_newton_seed_ops;

/* Where the cylinder forces at the iterate come from (SPEC §7 split mode:
 * the hydraulic states leave the unknowns; the forces at t_{k+1} come from
 * outside, directly (velocity-force) or as chamber pressures in pn from
 * which the engine evaluates F_s with its own s, sd (velocity-pressure)). */
typedef struct hymo_force_source_ops {
    const char *name;
    /* hydraulic Newton unknowns (pressures and spools), after the mechanical ones */
    int (*n_unknowns)(const hymo_sim *sim);
    /* predictor of the hydraulic unknowns xh */
    void (*predict)(hymo_sim *sim, double *xh, int extrapolate);
    /* pn, pdn, un, udn from xh (trapezoidal rule) */
    void (*unpack)(hymo_sim *sim, const double *xh);
    /* sim->force (and hp, hu) at the iterate, actuators evaluated; time t */
    hymo_status (*forces)(hymo_sim *sim, double t, hymo_error *err);
    /* sim->eval.force at the final state (after the projections) */
    void (*refresh)(hymo_sim *sim);
    /* hydraulic residual rows */
    void (*residual)(const hymo_sim *sim, double *fh);
    /* fast Jacobian: actuator stiffness and damping summed into the
     * mechanical block sim->jac.jm, and the hydraulic rows and columns (all
     * entries outside that block) pushed into sim->jac.jh column by column
     * (begun by the caller; columns not ended are empty) */
    hymo_status (*tangent)(hymo_sim *sim, double t, hymo_error *err);
    /* split mode: the coupling inputs for the next evaluation, per cylinder
     * a: F_a (velocity-force) or p_pist,a, p_rod,a (velocity-pressure) */
    void (*set_inputs)(hymo_sim *sim, const double *inputs);
    /* events: the number of switching functions whose crossings the
     * integrator locates (0: the branches follow the geometry), and their
     * values at the actuators of the last evaluation */
    int (*n_switches)(const hymo_sim *sim);
    void (*switching)(const hymo_sim *sim, double *g);
} hymo_force_source_ops;

extern const hymo_integrator_ops hymo_trapezoidal_ops;
extern const hymo_integrator_ops hymo_semi_implicit_euler_ops;
extern const hymo_integrator_ops hymo_ida_ops;
extern const hymo_jacobian_ops hymo_jacobian_numeric_ops;
extern const hymo_jacobian_ops hymo_jacobian_fast_ops;
extern const hymo_force_source_ops hymo_forces_monolithic_ops;
extern const hymo_force_source_ops hymo_forces_split_force_ops;
extern const hymo_force_source_ops hymo_forces_split_pressure_ops;

/* The parts of a simulation's run data.  Each is filled by one stage; the
 * engine's step (hymo_sim_step) reads and writes them in this order:
 * inputs -> solver (and jac) -> eval -> state (commit) -> switching ->
 * record, extremes, stats.  hymo_sim_create allocates every array once. */

/* The committed state at state.t and the predictor's history: set by
 * hymo_sim_create (the initial state) and by the commit after each
 * (sub-)step; the joints' state is mb's (z, zd, zdd, lambda). */
typedef struct {
    /* time of the committed state: t = step dt (between the sub-steps of
     * a step with an event, the event time) */
    double t;
    long step;
    double *p, *pd, *u, *ud; /* np, np, nu, nu: pressures and spool positions, their rates */
    double h_prev;           /* size of the last (sub-)step committed */
    /* predictor history (t_{k-1}, t_{k-2}) */
    double *zdd_prev, *pd_prev, *pd_prev2, *lambda_prev, *lambda_prev2; /* nz, np, np, m, m */
} hymo_sim_state;

/* The inputs of the step being solved: set at each step's start (valve
 * references and flow inputs, with the controller's overrides) and by the
 * force source's set_inputs (split mode's coupling inputs). */
typedef struct {
    double *uref_start, *uref_end; /* nu: valve references at t_k+ and t_{k+1}- (step start) */
    /* pump speeds then flow control set flows (n_in = n_pumps +
     * n_flow_controls; NULL for a model without speed_signal or
     * set_flow_signal) at t_k+ (scratch) and at the evaluation's time:
     * eval.circ.pump_speed and eval.circ.fc_flow point into in_end, set
     * with uref_end (t_{k+1}- in a step, the right limit at a start) */
    double *in_start, *in_end;
    double *ext_force; /* na: split velocity-force input, F_s at t_{k+1} */
    double *tlm_in;    /* 4 na: split TLM input, waves c then impedances Z_c (piston 2a, rod 2a+1) */
} hymo_sim_inputs;

/* The evaluation at the iterate: the hydraulic iterate at t_{k+1}
 * (forces.unpack) and what the force source computes from it
 * (forces.forces; forces.refresh at the final state). */
typedef struct {
    double *pn, *pdn, *un, *udn; /* np, np, nu, nu; split velocity-pressure: pn is the input */
    double *force;               /* na: cylinder forces F_s */
    double *hp, *hu;             /* np, nu: pressure and spool rates of the circuit */
    /* the circuit as the run sees it: the compiled one with its branches
     * at switching.sw and its flow inputs at inputs.in_end (hymo_sim_create) */
    hymo_circuit circ;
} hymo_sim_eval;

/* The step's Newton solve (the integrator's step, jacobian.finish and the
 * Newton test): step size, unknowns and the stopping test's state. */
typedef struct {
    /* size of the step being solved: opt.dt, or a sub-step to or from an
     * event */
    double h;
    double *x, *dx, *f, *fp; /* nx: unknowns, correction, residual, perturbed residual */
    double *xpred;           /* nx: the predictor (contractive Newton test) */
    double newton_tau;       /* the step's Newton target, in tolerance units (<= 1) */
    double newton_theta;     /* last contraction rate measured (mechanical block) */
    int newton_theta_age;    /* Newton solves begun since newton_theta was measured (0: in this one) */
    double newton_prev_m;    /* the mechanical block's previous scaled increment in this step */
    double newton_lte;       /* predictor-corrector distance of the last step, tolerance units */
} hymo_sim_solver;

/* The Newton matrix and its workspace: built by jacobian.build (the fast
 * Jacobian with forces.tangent), factorised by
 * hymo_engine_factor_jacobian; its shape (tree mode, patterns) is fixed
 * by hymo_sim_create. */
typedef struct {
    /* the mechanical block (jm, nxm x nxm, a pattern fixed when the
     * simulation is created: the complete one, value column-major, unless
     * the formulation gives its non-zeros (penalty on many loops) or tree
     * mode its diagonal; the formulation's tangent and the actuator and
     * force-element stiffness write it), the entries outside it by
     * compressed columns (jh: the force source's hydraulic rows and
     * columns), and the whole matrix by compressed columns (jfull: what
     * the linear solver factorises).  No nx x nx array: memory and cost
     * grow with the non-zeros. */
    hymo_sparse jm, jh, jfull;
    int jac_valid; /* the factorisation in ls belongs to the current unknowns */
    double jac_h;  /* ... and was built for the step size jac_h */
    /* tree mode (hymo_engine_tree_mode): an open tree without constraints
     * whose actuators and force elements each act on one joint; the
     * mechanical block is M' + diagonal, jm holds the diagonal (nxm)
     * and the linear solver adds M' (the O(n) articulated-body
     * factorisation): no nz x nz array is formed */
    int tree_mode;
    hymo_circuit_derivs cderiv; /* fast Jacobian: circuit partial derivatives */
    /* fast Jacobian: the gradients of the actuators' lengths (na rows) and
     * of the force elements' rows (src/engine/jacobian.c), in the coordinates
     * (act_gz) and mapped to the unknowns (act_gx), g_ld entries per row:
     * dense (g_idx NULL: nz and nxm entries, entry s belongs to unknown s)
     * or, in tree mode, one per row at unknown g_idx[row] (< 0: none) */
    double *act_gz, *act_gx;
    int g_ld, *g_idx;
    int *g_jt_start, *g_jt;  /* tree mode: the actuators acting on unknown k: g_jt[g_jt_start[k] ..] */
    double *tan_w;           /* nx scratch, kept zero (src/engine/forces.c) */
    int *tan_idx;            /* fast Jacobian: nx scratch (non-zero index lists, src/engine/forces.c) */
    int *tan_mark;           /* nx scratch, kept zero */
    double *tree_w, *tree_s; /* tree mode: the articulated-body factors */
    double *zsave;           /* nz: numeric Jacobian scratch */
} hymo_sim_jac;

/* The consistent accelerations' system [M' Phi_z^T; Phi_z 0]
 * (hymo_engine_consistent_accelerations, at the start and each restart). */
typedef struct {
    double *kkt, *kkt_rhs;   /* (nz+m)^2 (tree mode, kkt_sp: none), nz+m */
    int *kkt_piv;
    hymo_kkt_sparse *kkt_sp; /* from HYMO_KKT_SPARSE_MIN = nz + m on (no driven joints): KLU's instead of kkt */
} hymo_sim_accel;

/* Events (the force source's switching functions, then the force
 * elements'): located by the trapezoidal step, which cuts the step at a
 * crossing and switches the branch. */
typedef struct {
    unsigned char *sw;       /* nsw: the branches in use (= g >= 0 when last located) */
    double *g_start, *g_end; /* nsw: values at the (sub-)step's start and end */
    /* m: the multipliers at the (sub-)step's start, restored before each
     * location solve and each retry (penalty updates them within a step) */
    double *lambda_save;
    long events;           /* events located so far */
    long event_iterations; /* ... and the Newton iterations spent locating them */
    double last_event;     /* time of the last one (NaN: none) */
} hymo_sim_switching;

/* The records of the committed state, written as the run's rows: actuator
 * work and power (commit; the explicit integrator's own rule), energies and
 * constraint violations (hymo_engine_record_stats, after each step). */
typedef struct {
    double *work;   /* na: actuator work */
    double *power;  /* na: F sd at t_k */
    double *s_prev; /* na: semi-implicit Euler, lengths at t_k */
    /* the mechanical force elements' work, integrated with the trapezoidal
     * rule between recorded states (time fe_t, power fe_power) */
    double fe_work, fe_power, fe_t;
    double energy0; /* kinetic + potential energy at the start */
    double kinetic, potential, drift;
    double *c_pos, *c_vel, *c_acc; /* ncut: cut-joint violation norms of the current row */
    double *cv_rows, *ca_rows;     /* m: velocity and acceleration constraint rows (scratch) */
} hymo_sim_record;

/* Extremes over the run of the recorded quantities
 * (hymo_engine_record_stats, after each step). */
typedef struct {
    double peak_drift, max_work, max_cpos, max_cvel, max_cacc;
    double max_cred; /* max |Phi| of the redundant rows */
    /* pressure range: extreme values, the volume and time of each, and
     * the volumes that went below 0 Pa absolute */
    double p_lo, p_hi, t_lo, t_hi;
    int v_lo, v_hi, n_negative;
    unsigned char *p_negative; /* np: went below 0 Pa */
    /* per-volume pressure range, [4k..4k+3] = p_min, t_min, p_max, t_max
     * of volume state k, and the volumes that went below the fluid's floor
     * (p_vapour with entrained air, 0 Pa with the constant law) */
    double *p_vrange;
    unsigned char *p_below_floor; /* np */
    int n_below_floor;
} hymo_sim_extremes;

/* Solver statistics: iterations (the integrator's step, jacobian.finish),
 * Jacobian evaluations (hymo_engine_factor_jacobian), retries with
 * halved steps, and timing (hymo_sim_step, hymo_run). */
typedef struct {
    int last_iterations;  /* Newton iterations of the last step */
    double residual_norm; /* at the last step's converged unknowns */
    long iterations_total, jacobian_evaluations;
    int iterations_max;
    long step_halvings; /* (sub-)steps retried with half their size (src/engine/engine.c, MAX_RETRIES) */
    double wall_time;   /* hymo_run: its integration loop */
    double clock0;      /* hymo_now_seconds() at the first step (0: none yet) */
} hymo_sim_stats;

struct hymo_sim {
    /* the setup (hymo_sim_create): the model, its compiled constants, the
     * run options and the runtime choices ({content; ops} tables) */
    const hymo_model *model;
    const hymo_compiled *cm;
    hymo_run_options opt;
    const hymo_integrator_ops *integrator;
    void *integrator_content;
    hymo_formulation form;
    const hymo_jacobian_ops *jacobian;
    const hymo_newton_test_ops *newton;
    const hymo_force_source_ops *forces;
    hymo_linsol *ls;
    /* controller overrides of inputs and parameters (src/engine/control.c,
     * hymo_sim_set_input ...); NULL if none */
    struct hymo_control *control;

    /* shapes (hymo_sim_create): nz joints, m constraint equations, np
     * pressures, nu spools, na actuators, ncut cut joints; nxm mechanical
     * and nx Newton unknowns; nsw switching functions, the force source's
     * nsw_source first; n_in flow inputs (pump speeds, set flows) */
    int nz, m, np, nu, na, ncut;
    int nxm, nx;
    int nsw, nsw_source;
    int n_in;

    /* the components' own data: the mechanics (joint state, iterate,
     * constraints: formulations/multibody.h), the actuators (s, sd,
     * directions, end points) and the mechanical force elements
     * (formulations/force_elements.h), each at the last evaluation */
    hymo_mb mb;
    hymo_actuators act;
    hymo_fe fe;

    hymo_sim_state state;         /* committed state, predictor history: commit */
    hymo_sim_inputs inputs;       /* valve references, flow and coupling inputs: step start, set_inputs */
    hymo_sim_eval eval;           /* hydraulic iterate, forces, circuit view: forces.unpack, forces.forces */
    hymo_sim_solver solver;       /* step size, unknowns, Newton test state: the integrator's Newton loop */
    hymo_sim_jac jac;             /* Newton matrix and its workspace: jacobian.build, factor */
    hymo_sim_accel accel;         /* KKT system: consistent accelerations */
    hymo_sim_switching switching; /* switching states and event counts: event location */
    hymo_sim_record record;       /* work, power, energies, violations: commit, record_stats */
    hymo_sim_extremes extremes;   /* peaks and pressure ranges over the run: record_stats */
    hymo_sim_stats stats;         /* iterations, Jacobians, halvings, timing: step, factor, hymo_run */
};
typedef struct hymo_control hymo_control;

/* The runtime choices of a simulation besides hymo_run_options. */
typedef struct hymo_sim_tables {
    const hymo_integrator_ops *integrator;
    const hymo_formulation_ops *formulation;
    const hymo_force_source_ops *forces;
} hymo_sim_tables;

/* As hymo_sim_create with explicit tables (NULL entries: from opt). The
 * initial state (incl. the static pressures) is the compiled model's. */
hymo_status hymo_sim_create_with(const hymo_model *model, const hymo_run_options *opt, const hymo_sim_tables *tables,
                                 hymo_sim **out, hymo_error *err);

/* The state at t_{k+1} = t from the unknowns x (formulation and force
 * source unpack). */
hymo_status hymo_engine_unpack(hymo_sim *sim, const double *x, double t, hymo_error *err);
/* f(x): unpack, forces, inverse dynamics, residual rows. */
hymo_status hymo_engine_residual(hymo_sim *sim, const double *x, double *f, double t, hymo_error *err);
/* Tree mode (the field's comment), decided when the simulation is created
 * (after the linear solver, before the Jacobian's arrays): sets
 * sim->jac.tree_mode, g_ld, g_idx and g_jt; HYMO_ERR_NOMEM only. */
hymo_status hymo_engine_tree_mode(hymo_sim *sim, hymo_error *err);
/* -k g g^T of actuator a's gradient (act_gx) into the mechanical block
 * (src/engine/forces.c): its stiffness and damping k = dt^2/4 (dF/ds + 2/dt dF/dsd) */
void hymo_engine_actuator_stiffness(hymo_sim *sim, int a, double k);
/* Entry s of gradient row `row`: its unknown (< 0: none). */
static inline int hymo_engine_g_unknown(const hymo_sim *sim, int row, int s)
{
    return sim->jac.g_idx ? sim->jac.g_idx[row * sim->jac.g_ld + s] : s;
}
/* jm(i, l) += v inside the block's pattern: tree mode keeps the diagonal,
 * where every term arises (one joint per gradient row); a formulation's
 * pattern holds every joint set's pairs (the terms outside are exact zeros) */
static inline void hymo_engine_mech_add(hymo_sim *sim, int i, int l, double v)
{
    hymo_sparse *B = &sim->jac.jm;
    if ((long long)B->nnz == (long long)B->n_rows * B->n_cols) { /* the complete pattern: column-major, no search */
        B->value[(size_t)l * (size_t)B->n_rows + (size_t)i] += v;
        return;
    }
    double *e = hymo_sparse_at(B, i, l);
    if (e) *e += v;
}
/* Factorises sim->jfull (after the formulation saw the mechanical block
 * sim->jac.jm). */
hymo_status hymo_engine_factor_jacobian(hymo_sim *sim, double t, hymo_error *err);
/* Actuators, forces (through the force source) and M', Q' at the current
 * kinematics; time t for messages. */
hymo_status hymo_engine_dynamics(hymo_sim *sim, double t, hymo_error *err);
/* Name of the Newton matrix in use (the integrator's own, or the Jacobian table's). */
const char *hymo_engine_jacobian_name(const hymo_sim *sim);
/* The same without forming M' and Q' (body forces assembled in the kinematics). */
hymo_status hymo_engine_forces(hymo_sim *sim, double t, hymo_error *err);
/* Consistent accelerations at the committed state with the current forces:
 * [M' Phi_z^T; Phi_z 0] [zdd; mu] = [Q'; -gamma]; zdd is replaced (and
 * lambda too if set_lambda).  Split mode uses it when the inputs jump at a
 * communication point, so that the trapezoidal rule starts from the new input. */
hymo_status hymo_engine_consistent_accelerations(hymo_sim *sim, int set_lambda, hymo_error *err);
/* End of the next step: t_{k+1} = (k+1) dt, or t_end if that is nearer (the
 * last step is shortened to land on t_end exactly). */
double hymo_engine_step_end(const hymo_sim *sim);
/* All switching functions (force source's, then the force elements') at
 * the last evaluation into g[nsw]. */
void hymo_engine_switching(const hymo_sim *sim, double *g);
/* Energies, drift and constraint violations of the committed state. */
void hymo_engine_record_stats(hymo_sim *sim);

#endif
