/* Internal definition of hymo_sim and the formulation interface. */
#ifndef HYMO_ENGINE_H
#define HYMO_ENGINE_H

#include "circuit.h"
#include "constraints.h"
#include "hymo/sim.h"
#include "kinematics.h"
#include "linsol.h"

/* A multibody formulation maps its part of the Newton unknowns to the full
 * joint state (z, zd, zdd at t_{k+1}) and forms the mechanical residual. */
typedef struct hymo_formulation_ops {
    const char *name;
    /* number of mechanical unknowns in x */
    int (*n_mech)(const hymo_sim *sim);
    /* x_mech from the predicted full state sim->zn (called once per step) */
    void (*pack)(const hymo_sim *sim, double *x_mech);
    /* full zn, zdn, zddn from x_mech (trapezoidal rule); leaves kinematic
     * positions and velocities evaluated at them, phi and phi_z filled */
    hymo_status (*unpack)(hymo_sim *sim, const double *x_mech, hymo_error *err);
    /* mechanical residual rows from sim->dyn_res = M' zdd - Q' */
    void (*residual)(hymo_sim *sim, double *f_mech);
    /* after a Newton update (penalty: lambda <- lambda + alpha phi) */
    void (*after_update)(hymo_sim *sim);
    /* after convergence: projections (penalty) / coordinate re-selection */
    hymo_status (*finish_step)(hymo_sim *sim, hymo_error *err);
    /* fast-mode Jacobian, at the current evaluation: the mechanical block
     * without actuator terms (M' mapped to the unknowns, plus the penalty
     * stiffness) into jac (column-major, leading dimension nx), and the
     * actuator length gradients in the unknowns, gx[a*nxm + k] = ds_a/dx_k,
     * from gz[a*nz + j] = ds_a/dz_j */
    void (*tangent)(hymo_sim *sim, const double *gz, double *gx, double *jac);
} hymo_formulation_ops;

/* Co-simulation split mode (SPEC §7): the hydraulic states leave the
 * unknown vector; the cylinder forces at t_{k+1} come from outside, either
 * directly (velocity-force coupling: ext_force) or as chamber pressures in
 * pn from which the engine evaluates F_s with its own s, sd
 * (velocity-pressure coupling). */
typedef enum { HYMO_SPLIT_NONE = 0, HYMO_SPLIT_FORCE = 1, HYMO_SPLIT_PRESSURE = 2 } hymo_split_mode;

extern const hymo_formulation_ops hymo_double_step_ops;
extern const hymo_formulation_ops hymo_penalty_ops;

struct hymo_sim {
    const hymo_model *model;
    hymo_run_options opt;
    const hymo_formulation_ops *form;
    hymo_kin kin;
    hymo_constraints con;
    hymo_circuit circ;
    int nz, m, np, nu, na, ncut;
    int nxm, nx; /* mechanical unknowns, all unknowns */
    hymo_split_mode split;
    double *ext_force; /* na, split mode FORCE: F_s at t_{k+1} */
    double *s_prev;    /* na, scratch (index-1 step) */
    double *kkt, *kkt_rhs; /* (nz+m)^2, nz+m: consistent accelerations */
    int *kkt_piv;

    /* committed state at t_k */
    double t;
    long step;
    double *z, *zd, *zdd, *p, *pd, *u, *ud;
    double *lambda;
    double *zdd_prev, *pd_prev, *pd_prev2, *lambda_prev, *lambda_prev2; /* t_{k-1}, for the extrapolating predictor */

    /* iterate at t_{k+1} */
    double *zn, *zdn, *zddn, *pn, *pdn, *un, *udn;
    double *uref_start, *uref_end;

    /* evaluation workspace */
    double *phi, *phi_z, *gamma; /* m, m x nz, m */
    double *s, *sd, *force, *s_dir, *hp, *hu; /* na, na, na, 3na, np, nu */
    double *s_ends; /* 6na: global base and rod points of each cylinder */
    double *dyn_res; /* nz: M' zdd - Q' at the iterate (hymo_kin_inverse_dynamics) */
    double *x, *dx, *f, *fp, *jac;           /* nx, nx, nx, nx, nx*nx (col-major) */
    double *jzz, *vz, *vz2;                   /* nz*nz (LU), nz, nz */
    int *jzz_piv;
    hymo_linsol *ls;
    hymo_circuit_derivs cderiv; /* fast mode: circuit partial derivatives */
    double *act_gz, *act_gx;    /* fast mode: na x nz, na x nxm actuator length gradients */
    double *tmap;               /* double-step: nz x ni, dz/dz_i (row-major) */
    int jac_valid; /* the factorisation in ls belongs to the current unknowns (fast mode reuse) */
    int lambda_frozen;

    /* double-step partition */
    int ni;          /* independent count = nz - m */
    int *indep, *dep; /* ni, m */
    double *phid_lu; /* m x m */
    int *phid_piv;
    double *dwork; /* scratch: m*nz + nz */
    unsigned char *mask, *mask2;
    char independent_log[HYMO_REF_TEXT_MAX];
    int reselections;

    /* records and statistics */
    double *work;  /* na, actuator work */
    double *power; /* na, F sd at t_k */
    double energy0;
    double kinetic, potential, drift;
    double *c_pos, *c_vel, *c_acc; /* ncut norms for the current row */
    double residual_norm;
    int last_iterations;
    long iterations_total;
    int iterations_max;
    long jacobian_evaluations;
    double peak_drift, max_work, max_cpos, max_cvel, max_cacc;
    double wall_time;
};

/* Shared evaluation at (zn, zdn, zddn, pn, un, t_{k+1}) after the
 * formulation's unpack: actuators, hydraulics, forces, M', Q'. */
/* Actuator quantities and forces after velocities changed (projections). */
void hymo_engine_refresh_actuators(hymo_sim *sim);
hymo_status hymo_engine_dynamics(hymo_sim *sim, hymo_error *err);
/* Actuator end points, lengths, rates and directions at the current kinematics. */
void hymo_engine_actuators(hymo_sim *sim);

/* Double-step helpers used by initialisation. */
hymo_status hymo_double_step_select(hymo_sim *sim, hymo_error *err);
/* Solves Phi(z) = 0 for z[dep] with z[indep] fixed (Newton); 0 on success. */
int hymo_double_step_solve_positions(hymo_sim *sim, double *z, int max_iter, double tol);
/* R_z^T v (v of size nz) -> out (size ni), using sim->phid_lu and phi_z. */
void hymo_double_step_project(hymo_sim *sim, const double *v, double *out);

hymo_status hymo_engine_initialize(hymo_sim *sim, hymo_error *err);
/* As hymo_sim_create; with split != NONE the unknowns are the mechanical
 * ones only (the initial state, incl. static pressures, is the same). */
hymo_status hymo_sim_create_split(const hymo_model *model, const hymo_run_options *opt, hymo_split_mode split,
                                  hymo_sim **out, hymo_error *err);
/* Actuator accelerations sdd[na] for joint accelerations zdd, with the
 * kinematics (positions, velocities) and hymo_engine_actuators evaluated. */
void hymo_engine_actuator_accel(hymo_sim *sim, const double *zdd, double *sdd);
/* Actuator length gradients gz[a*nz + j] = d s_a / d z_j at the current
 * kinematics (after hymo_engine_actuators). */
void hymo_engine_actuator_gradients(const hymo_sim *sim, double *gz);
/* Cylinder force law F_s(p, s, sd) for the current sim->s, sim->sd with
 * pressures p (full-size) into force[na]. */
void hymo_engine_cylinder_forces(hymo_sim *sim, const double *p, double *force);
/* Consistent accelerations at the committed state with the current
 * forces: [M' Phi_z^T; Phi_z 0] [zdd; mu] = [Q'; -gamma]; zdd is replaced
 * (and lambda too if set_lambda).  Split mode uses it when the inputs jump
 * at a communication point, so that the trapezoidal rule starts from the
 * new input. */
hymo_status hymo_engine_consistent_accelerations(hymo_sim *sim, int set_lambda, hymo_error *err);
/* Index-1 penalty formulation with semi-implicit Euler (formulations/index1.c):
 * one explicit step of size opt.dt with the forces at t_k. */
hymo_status hymo_index1_step(hymo_sim *sim, hymo_error *err);
void hymo_engine_record_stats(hymo_sim *sim);

#endif
