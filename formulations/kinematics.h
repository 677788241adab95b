/* Shared semirecursive kinematics and dynamics (SPEC §1.2, seed 002 §2.1).
 *
 * Velocity convention: Z_j = [sdot_j; omega_j], sdot_j = velocity of the body
 * point that coincides with the global origin; Zdot_j = d/dt Z_j.  With this
 * convention the velocity-dependent body force is
 *     Qbar_j = [ f - m w x gdot ; tau - w x J w + g x (f - m w x gdot) ],
 * gdot = sdot + w x g.  (SPEC/seed 002 Eq. 10 write w x (w x m g) for
 * m w x gdot, which is the same only when sdot = 0; the difference is the
 * m w x sdot term.  Our form is the one that conserves energy; the tests
 * check M' and Q' against Lagrange's equations by finite differences.) */
#ifndef HYMO_KINEMATICS_H
#define HYMO_KINEMATICS_H

#include "hymo/model.h"

/* A constant 3-vector of the model with its sparsity (set by hymo_kin_model_init):
 * nnz non-zero components; when nnz == 1 the non-zero one is v[k]. */
typedef struct {
    double v[3];
    int nnz, k;
} hymo_kin_vec3;

/* Per-body constants derived from the model once (hymo_kin_model_init). */
typedef struct {
    int parent;
    int revolute;
    int axis_k;       /* joint axis = axis_sign * e_{axis_k} exactly; -1: general axis */
    double axis_sign;
    hymo_kin_vec3 loc, axis, com; /* joint location and axis (parent frame), com (body frame) */
    double mass;
    /* inertia: diagonal in the body frame (inertia_diag) as
     *   J = Jl[jref] I + sum_c jdiff[c] r_c r_c^T   (r_c: columns of R; jdiff[jref] = 0),
     * otherwise the general J = R Jl R^T */
    int inertia_diag;
    double jref;
    double jdiff[3];
    int n_jdiff;
    int jdiff_c[3];
    double inertia[9];
} hymo_kin_body;

/* The model's kinematic constants (part of the compiled model, shared
 * read-only by every run): topology and per-body constants. */
typedef struct {
    int nb;
    int *pre, *sub;      /* nb each: preorder index and subtree size (hymo_kin_on_path) */
    hymo_kin_body *bd;   /* nb per-body constants */
    int *child_first;    /* nb + 1: children of j are child_list[child_first[j] .. child_first[j+1]) */
    int *child_list;
} hymo_kin_model;

hymo_status hymo_kin_model_init(hymo_kin_model *km, const hymo_model *model, hymo_error *err);
void hymo_kin_model_free(hymo_kin_model *km);

/* Kinematic and dynamic quantities of one run (per-run workspace and
 * caches); the constants are borrowed from a hymo_kin_model. */
typedef struct {
    int nb;
    /* constants (borrowed from the hymo_kin_model, read-only) */
    const int *pre, *sub;
    const hymo_kin_body *bd;
    const int *child_first, *child_list;
    /* positions (global) */
    double *R;   /* nb x 9, body rotation, row-major            */
    double *o;   /* nb x 3, body origin (= inboard joint point)  */
    double *u;   /* nb x 3, joint axis                           */
    double *g;   /* nb x 3, centre of mass   (forces_begin, energies) */
    double *J;   /* nb x 9, inertia about com (forces_begin, energies) */
    /* velocities */
    double *b;   /* nb x 6 */
    double *Z;   /* nb x 6 */
    double *A0;  /* nb x 6, Zdot with zdd = 0 (accumulated d_j)  */
    /* dynamics */
    double *Qbar; /* nb x 6, applied + velocity forces (before -Mbar A0) */
    double *Phat; /* nb x 6, scratch: subtree sums of Qbar - Mbar A0 (or of the residual wrenches) */
    double *acc;  /* nb x 6, scratch: sum of b_i zdd_i along each path */
    double *M;    /* nb x nb, M' (row-major, symmetric): allocated by the first hymo_kin_mass */
    int mass_lazy; /* 1: hymo_kin_mass_and_forces leaves M' alone until hymo_kin_mass asks for it
                    * (an open tree solved in O(nb): the engine's tree mode) */
    double *Q;    /* nb, Q'                                        */
    /* caches (internal) */
    double *Iown;       /* nb x 10, spatial inertia about the global origin:
                         * [m, h = m g (3), I_o = J - m g~ g~ (xx yy zz xy xz yz)];
                         * set with g and J (geo_stale) */
    double *Ic;         /* nb x 10, composite (subtree) inertia, same layout (kept with M') */
    /* Change tracking: a body whose joint coordinate and ancestors did not
     * change keeps its pose (and g, J, Iown); likewise for its velocities.
     * Everything cached is recomputed from the same inputs, so the results
     * are those of a full evaluation.  Two assumptions: callers only read
     * R, o, u, b, Z, A0, g, J, M and Q (never write them), and every body's
     * parent has a smaller index (the model loader orders the bodies so). */
    double *zlast;      /* nb: z of the last hymo_kin_positions (pos_valid)    */
    double *zdlast;     /* nb: zd of the last hymo_kin_velocities (vel_valid)  */
    int pos_valid, vel_valid;
    int any_vel_stale;        /* some vel_stale is set                           */
    int *geo_stale;           /* nb: pose changed since g, J, Iown were computed */
    int *vel_stale;           /* nb: b changed since Z, A0 were computed         */
    int *m_stale;             /* nb: b or Iown changed since M' (column) and Ic  */
    int *dirty;               /* nb: scratch                                     */
} hymo_kin;

hymo_status hymo_kin_init(hymo_kin *kin, const hymo_kin_model *km, hymo_error *err);
void hymo_kin_free(hymo_kin *kin);

/* Body poses, joint axes and b_j at z. */
void hymo_kin_positions(hymo_kin *kin, const hymo_model *model, const double *z);
/* b_j, Z_j and A0_j at zd (after hymo_kin_positions). */
void hymo_kin_velocities(hymo_kin *kin, const hymo_model *model, const double *zd);

/* Global position of the point r_local of body `body` (HYMO_GROUND allowed). */
void hymo_kin_body_point(const hymo_kin *kin, int body, const double r_local[3], double r[3]);
void hymo_kin_body_vector(const hymo_kin *kin, int body, const double v_local[3], double v[3]);
/* Velocity of a global point r attached to body (HYMO_GROUND: zero). */
void hymo_kin_point_velocity(const hymo_kin *kin, int body, const double r[3], double v[3]);
/* Acceleration of that point with zdd = 0 (velocity-product part). */
void hymo_kin_point_accel0(const hymo_kin *kin, int body, const double r[3], double a[3]);
/* 1 if joint j lies on the path root..body (incl. body; 0 for the ground):
 * body's preorder index falls within j's subtree.  O(1) and O(nb) memory
 * (an nb x nb table was the chain's largest array after M'). */
static inline int hymo_kin_on_path(const hymo_kin *kin, int body, int j)
{
    return body != HYMO_GROUND && (unsigned)(kin->pre[body] - kin->pre[j]) < (unsigned)kin->sub[j];
}
/* d r / d z_j for a global point r attached to body (zero if j not an ancestor). */
void hymo_kin_point_jacobian(const hymo_kin *kin, int body, int j, const double r[3], double out[3]);

/* Starts force assembly: Qbar_j = gravity + velocity terms. */
void hymo_kin_forces_begin(hymo_kin *kin, const hymo_model *model);
/* Adds a force f (global) acting at global point a of body (ignored for ground). */
void hymo_kin_add_point_force(hymo_kin *kin, int body, const double a[3], const double f[3]);
/* M' and Q' from the forces assembled so far (leaves-to-root accumulation). */
void hymo_kin_mass_and_forces(hymo_kin *kin, const hymo_model *model);
/* M' alone (the fast Newton matrix): as hymo_kin_mass_and_forces without Q'.
 * The nb x nb array is allocated at the first call; 1 if that fails. */
int hymo_kin_mass(hymo_kin *kin);
/* out = M' v without forming M', O(nb): body accelerations a_k = a_parent
 * + b_k v_k root to leaves, then the subtree wrenches W_k = Mbar_k a_k +
 * sum over the children's W leaves to root, (M' v)_k = b_k^T W_k (acc is
 * the scratch).  At the current positions. */
void hymo_kin_mass_times(hymo_kin *kin, const double *v, double *out);
/* The composite (subtree) inertias Ic of all bodies at the current
 * positions, O(nb), for hymo_kin_mass_entry; M' (if formed) is marked
 * stale. */
void hymo_kin_composite(hymo_kin *kin);
/* The joints on the paths from the ground to bodies b0 and b1 (either may
 * be HYMO_GROUND), each once, into out (at most nb); returns their number.
 * A point-to-point length between the two bodies depends on these
 * coordinates only. */
int hymo_kin_path_union(const hymo_kin *kin, int b0, int b1, int *out);
/* M'_ik = b_i^T Ic_k b_k for i on the path root..k (hymo_kin_mass's
 * formula, the same number), after hymo_kin_composite. */
double hymo_kin_mass_entry(const hymo_kin *kin, int i, int k);
/* Open tree: (M' + diag(e)) x = f in O(nb), without M' (the
 * articulated-body recursion in the global twists: leaves to root, the
 * subtree's articulated inertia P_k = Mbar_k + sum over children c of
 * P_c - P_c b_c b_c^T P_c / d_c, d_c = b_c^T P_c b_c + e_c; then root to
 * leaves).  tree_factor keeps P b and d per body in w (HYMO_KIN_TREE_W nb
 * doubles) and returns 1 if a pivot d_k is not finite or negligible
 * against b_k^T P_k b_k; tree_solve overwrites x (f in, x out), scratch
 * s of 12 nb doubles.  At the positions of the last hymo_kin_mass. */
#define HYMO_KIN_TREE_W 43
int hymo_kin_tree_factor(hymo_kin *kin, const double *e, double *w);
void hymo_kin_tree_solve(const hymo_kin *kin, const double *w, double *x, double *s);

/* r = M' zdd - Q' (nb) from the forces assembled so far, without forming
 * M' (after hymo_kin_forces_begin and the point forces). */
void hymo_kin_inverse_dynamics(hymo_kin *kin, const double *zdd, double *r);

/* Energies at the current positions/velocities (after hymo_kin_velocities). */
double hymo_kin_kinetic_energy(hymo_kin *kin, const hymo_model *model);
double hymo_kin_potential_energy(hymo_kin *kin, const hymo_model *model);

/* Small vector helpers shared by the formulations. */
static inline void hymo_cross(const double a[3], const double b[3], double c[3])
{
    double c0 = a[1] * b[2] - a[2] * b[1];
    double c1 = a[2] * b[0] - a[0] * b[2];
    double c2 = a[0] * b[1] - a[1] * b[0];
    c[0] = c0;
    c[1] = c1;
    c[2] = c2;
}
static inline double hymo_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* y = A x for a 3x3 row-major A (y may alias x). */
static inline void hymo_mat3_vec(const double *A, const double *x, double *y)
{
    double y0 = A[0] * x[0] + A[1] * x[1] + A[2] * x[2];
    double y1 = A[3] * x[0] + A[4] * x[1] + A[5] * x[2];
    double y2 = A[6] * x[0] + A[7] * x[1] + A[8] * x[2];
    y[0] = y0;
    y[1] = y1;
    y[2] = y2;
}

/* y = A x for a 3x3 row-major A and a constant x of known sparsity; the
 * same value as the full product (the skipped terms are exact zeros). */
static inline void hymo_kin_mat3_vec_sparse(const double *A, const hymo_kin_vec3 *x, double y[3])
{
    if (x->nnz == 1) {
        const int k = x->k;
        const double v = x->v[k];
        y[0] = A[k] * v;
        y[1] = A[3 + k] * v;
        y[2] = A[6 + k] * v;
    } else if (x->nnz == 0) {
        y[0] = y[1] = y[2] = 0.0;
    } else {
        hymo_mat3_vec(A, x->v, y);
    }
}
/* Sparsity of a constant 3-vector (exact zeros). */
void hymo_kin_vec3_init(const double v[3], hymo_kin_vec3 *s);

#endif
