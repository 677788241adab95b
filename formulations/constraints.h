/* Cut-joint constraints Phi(z) = 0 (SPEC §1.3), built from three primitives:
 *   point-point along a global direction   (r_A - r_B) . e
 *   point-point along a direction of b      (r_P - r_O) . (R_b n)
 *   vector-vector                           (R_a v_a) . (R_b v_b)
 * with analytic Phi_z and the velocity-product term gamma = dPhi_z/dt zd. */
#ifndef HYMO_CONSTRAINTS_H
#define HYMO_CONSTRAINTS_H

#include "hymo/linalg.h"
#include "kinematics.h"

typedef enum { HYMO_PRIM_PP_GLOBAL, HYMO_PRIM_PP_BODYDIR, HYMO_PRIM_VV } hymo_prim_type;

typedef struct {
    hymo_prim_type type;
    int body_a, body_b;
    double pa[3], pb[3]; /* points (local) */
    double va[3], vb[3]; /* directions (local; PP_GLOBAL: vb global) */
    int cut;             /* owning cut joint */
} hymo_prim;

/* Constants of a primitive for the evaluation (hymo_constraints_init). */
typedef struct {
    hymo_kin_vec3 pa, pb, va, vb; /* the primitive's local vectors with their sparsity */
    int same_points;              /* point-point with the bodies and points of the previous row */
} hymo_prim_const;

typedef struct {
    int m;  /* total equations */
    int nz; /* joint coordinates */
    hymo_prim *prims;
    int *cut_first; /* first row of each cut joint, size ncut + 1 */
    /* constants for the evaluation (set by hymo_constraints_init) */
    hymo_prim_const *pc; /* m */
    /* Phi_z's pattern by rows: row r's non-zeros are the joints
     * col[row_start[r] .. row_start[r + 1]) (ascending), those that move
     * body_a (group 1), body_b (2) or both (3: a common ancestor, whose
     * entry is computed too); the values are an array of nnz (phi_z) */
    int nnz;
    int *row_start, *col;
    unsigned char *group;
    /* nnz: 1 for an entry of group 3 that is zero at every consistent
     * position (the common ancestor's joint moves both points or vectors
     * rigidly: a vector-vector or body-direction row, a point-point row of
     * a spherical or revolute cut (the points coincide), or of a planar
     * revolute cut where the joint slides or turns about the global z
     * axis) */
    unsigned char *vanish;
    /* the entries not flagged: row i's are live[live_start[i] .. live_start[i + 1]) */
    int *live_start, *live;
    /* rank of Phi_z at the assembled start and the rows left out
     * of a maximal independent set there (redundant[r] = 1); rank = m and
     * none redundant until the model compiler (src/compile/compile.c) sets them */
    int rank;
    unsigned char *redundant; /* m */
} hymo_constraints;

hymo_status hymo_constraints_init(hymo_constraints *con, const hymo_model *model, hymo_error *err);
void hymo_constraints_free(hymo_constraints *con);

/* Needs hymo_kin_positions (and hymo_kin_velocities when gamma != NULL).
 * phi [m], phi_z [nnz]: the values of the pattern (may be NULL), gamma [m]
 * (may be NULL). */
void hymo_constraints_eval(const hymo_constraints *con, const hymo_kin *kin, double *phi,
                           double *phi_z, double *gamma);

/* phi and the entries of phi_z not flagged vanish, as hymo_constraints_eval
 * gives them; the flagged entries are not written (O(live entries)) */
void hymo_constraints_eval_live(const hymo_constraints *con, const hymo_kin *kin, double *phi, double *phi_z);

/* Phi_z as a matrix view: the pattern with the values phi_z (nnz) */
static inline hymo_csr hymo_constraints_csr(const hymo_constraints *con, const double *phi_z)
{
    const hymo_csr a = {con->m, con->nz, con->row_start, con->col, phi_z};
    return a;
}

/* The twist row of every spatial translational cut joint from
 * the start (kin: positions at the model's initial z): the body-b vector
 * of the row "(R_a a1) . (R_b v) = 0" (a1 normal to axis_a in a) becomes
 * v = e x w_perp, w_perp the part of a1 (expressed in b at the start)
 * normal to the sliding direction e, so the row holds at the start and
 * the assembly keeps the start's rotation about e.  A start whose a1 lies
 * along e (axis_a far from parallel to e) keeps the default v. */
void hymo_constraints_twist_from(hymo_constraints *con, const hymo_model *model, const hymo_kin *kin);

/* Text "cut[k]" of constraint row r (row k of cut joint `cut`, from 0). */
void hymo_constraints_row_name(const hymo_constraints *con, const hymo_model *model, int r, char *buf, size_t len);

/* Euclidean norm of the rows of v belonging to each cut joint. */
void hymo_constraints_cut_norms(const hymo_constraints *con, int ncut, const double *v, double *out);

#endif
