/* Mechanical force elements (docs/model-format.md, "Force elements"):
 * point-to-point spring-dampers, joint spring-dampers, external forces and
 * torques from signals, joint friction and joint limits (end dampers),
 * added to the body forces before M' and Q' are formed.
 *
 * Every element is a scalar generalized force F along a scalar coordinate
 * l(z) with gradient g = dl/dz, so that its contribution to Q' is F g:
 *   spring-damper  l = |r_b - r_a|, F = -T (T = tension),
 *   joint elements l = z_j, g = e_j, F = tau (torque or force on the joint),
 *   external       F g = J_P^T f + J_w^T n (no scalar form; dF/dl = 0).
 * The fast Jacobian adds dt^2/4 (K + 2/dt C) with K = -dQ'/dz and
 * C = -dQ'/dzd: -(dF/dl) g g^T and -(dF/dldot) g g^T as for the
 * cylinders, and for a spring-damper also the terms of dg/dz = d2l/dz2,
 * -F d2l/dz2 - (dF/dldot) g (d2l/dz2 zd)^T.  d2l/dz2 is formed from
 * vectors that the formulation maps to its unknowns like the gradients:
 * with A = dd/dz (d = r_b - r_a, e = d/l, n1, n2 unit normals to e) and
 * the second derivatives of a point r on body B,
 *   d2r/dz_j dz_k = u_j x J_k (j revolute, j an ancestor of k or j = k
 *   on the path of B; J_k = dr/dz_k), 0 for a prismatic j,
 *   d2l/dz2 = (1/l) sum_i (A^T n_i)(A^T n_i)^T
 *             + sum_i (e_i w_i^T + w_i e_i^T),
 *   w_i[k] = J_k . (e x u_i) over k >= i on the path (b's minus a's),
 *   halved at k = i.
 * Neglected, as for the cylinders: the position dependence of a
 * body-fixed external force and the lever-arm term of any external force
 * (they change the convergence rate, not the solution). */
#ifndef HYMO_FORCE_ELEMENTS_H
#define HYMO_FORCE_ELEMENTS_H

#include "hymo/model.h"
#include "kinematics.h"

/* Per-run values of the last evaluation. */
typedef struct {
    int n;   /* model->n_force_elements */
    int nsw; /* model->n_force_switches */
    /* switching states of the limits (index sw_lower/sw_upper), NULL: the
     * branch follows the geometry (z <= lower, z >= upper) */
    const unsigned char *sw;
    double *l, *ld;          /* n: coordinate and rate */
    double *F, *dF_dl, *dF_dld; /* n: generalized force along g and its derivatives */
    double *ends;            /* 6 n: spring-damper end points (global) */
    double *dir;             /* 3 n: spring-damper unit direction a -> b */
    double power;            /* sum of F ldot (external: f.v + n.w) of the last evaluation */
    /* fast Jacobian: the rows hymo_fe_gradients fills (gradients g of the
     * n elements, then the spring-dampers' second-derivative vectors) and
     * the terms alpha_t v_p v_q^T of K = -dQ'/dz beyond -(dF/dl) g g^T */
    int rows, nterm, cap_rows, cap_terms;
    double *talpha;
    int *tp, *tq;
    double *scratch; /* 3 nz + 2 nz */
    /* time and grid step of the last hymo_fe_apply (the
     * signals' kink functions are evaluated there) */
    double t_eval, dt_eval;
    /* the signals' one-sided limit at t: 0 the left one for t > 0 (a
     * step's end), +1 the right one (the engine's restart at a step start
     * where a signal jumps, hymo_fe_signals_jump) */
    int side;
} hymo_fe;

/* 1 if a signal of an external force or torque jumps at t (its left and
 * right limits differ: a table step at t, snapped to the step grid dt). */
int hymo_fe_signals_jump(const hymo_model *model, double t, double dt);
/* The first time in (t + eps, t_end - eps) at which such a signal jumps
 * (hymo_signal_next_jump), t_end if none. */
double hymo_fe_next_jump(const hymo_model *model, double t, double t_end, double eps);

/* Rows hymo_fe_gradients may fill for this model (the gradient buffer
 * holds this many rows of nz). */
int hymo_fe_max_rows(const hymo_model *model);

hymo_status hymo_fe_alloc(hymo_fe *fe, const hymo_model *model, hymo_error *err);
void hymo_fe_free(hymo_fe *fe);

/* Evaluates every element at the kinematics (positions and velocities of
 * the last hymo_kin_positions/velocities) and time t (signals: the left
 * limit for t > 0, on the step grid dt) and adds the forces to the body
 * forces (after hymo_kin_forces_begin).  Fails only if the end points of a
 * spring-damper coincide. */
hymo_status hymo_fe_apply(hymo_fe *fe, const hymo_model *model, hymo_kin *kin, double t, double dt,
                          hymo_error *err);

/* gz[e*nz + j] = dl_e/dz_j at the last evaluation (0 for external forces)
 * for e < n, then the vectors of the terms fe->talpha, tp, tq (rows
 * indices into gz); returns the rows filled (fe->rows). */
int hymo_fe_gradients(hymo_fe *fe, const hymo_model *model, const hymo_kin *kin, double *gz);

/* The joint of element e's coordinate (joint elements), -1 for an
 * external force (no coordinate), -2 for a spring-damper (a point-to-point
 * length: several joints, and second-derivative rows). */
int hymo_fe_joint(const hymo_model *model, int e);
/* The joints whose coordinates element e's gradient rows can involve
 * (a spring-damper's: both ends' paths) into out (at most nz); returns
 * their number (0: an external force). */
int hymo_fe_joints(const hymo_model *model, const hymo_kin *kin, int e, int *out);
/* hymo_fe_gradients where no element is a spring-damper, one entry per
 * row: g[e] = dl_e/dz_joint[e] (joint[e] from hymo_fe_joint). */
int hymo_fe_gradients_joint(hymo_fe *fe, const int *joint, double *g);

/* Switching functions of the limits at the last hymo_kin_positions:
 * g = lower - z (lower limit), z - upper (upper limit); >= 0: in contact.
 * Then the kinks of the signals that feed valves and
 * external forces at the time of the last hymo_fe_apply: g = x(t) - level
 * (hymo_signal_kink_levels; x the signal before its dead zone and clamp,
 * left limit for t > 0, snapped to the step grid). */
void hymo_fe_switching(const hymo_fe *fe, const hymo_model *model, const hymo_kin *kin, double *g);

#endif
