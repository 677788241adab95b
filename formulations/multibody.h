/* The multibody part of a run and the formulation interface.
 *
 * hymo_mb is the mechanical run data that every formulation works on: the
 * per-run kinematics, the committed joint state at t_k, the Newton iterate
 * at t_{k+1} and the constraint quantities at the last evaluation.  The
 * engine (src/engine/engine.h) embeds one; the formulations (double-step, penalty,
 * index-1) see only this struct and their own private content, so that
 * formulations/ never includes src/.
 *
 * A formulation is a SUNDIALS-style object {content; ops}: the ops are the
 * same for every run, the content is the formulation's private data
 * (double-step: the coordinate partition; penalty: the projection matrix;
 * index-1: its leading matrix). */
#ifndef HYMO_MULTIBODY_H
#define HYMO_MULTIBODY_H

#include "constraints.h"
#include "hymo/model.h"
#include "hymo/reference.h"
#include "kinematics.h"

/* Shapes: nz joint coordinates, m constraint equations, ncut cut joints. */
typedef struct {
    const hymo_model *model;
    const hymo_constraints *con; /* compiled, shared                         */
    hymo_kin kin;                /* kinematics of the last evaluation        */
    int nz, m, ncut;
    double dt;    /* step size                                                */
    double alpha; /* penalty factor (penalty and index-1 formulations)        */
    double reselect_ratio; /* double-step: re-select below this pivot ratio */
    /* committed state at t_k (engine: commit) */
    double *z, *zd, *zdd; /* nz each                                          */
    double *lambda;       /* m: Lagrange multipliers (penalty, index-1)       */
    /* iterate at t_{k+1} (formulation: unpack) */
    double *zn, *zdn, *zddn; /* nz each                                        */
    /* evaluation (formulation: unpack / finish_step) */
    double *phi, *phi_zv, *gamma; /* m, con->nnz (Phi_z's non-zeros: hymo_constraints_csr), m */
    double *dyn_res;             /* nz: M' zdd - Q' at the iterate (engine)    */
    /* engine: set for the unpack of the converged unknowns that only
     * finish_step follows (no forces, no residual): the formulation may
     * leave out what its finish_step evaluates again */
    int final_unpack;
    /* engine: set for a solve that ends off the step grid (a halved
     * sub-step, an event's location): double-step keeps its independent
     * set there (finish_step), so that where the set is re-selected does
     * not depend on which steps a Jacobian mode had to halve */
    int off_grid;
    /* 1 = alpha is the lower bound of the mass-scaled default
     * (penalty.c, penalty_mass_alpha), 0 = alpha as given */
    int alpha_auto;
    /* 1: sums over phi_z (the recorded constraint residuals) leave out the
     * entries flagged in con->vanish (zero at every consistent position),
     * which double-step's position solve with Phi_d by KLU does not evaluate */
    int phi_z_live;
} hymo_mb;

hymo_status hymo_mb_alloc(hymo_mb *mb, const hymo_model *model, const hymo_kin_model *km,
                          const hymo_constraints *con, hymo_error *err);
void hymo_mb_free(hymo_mb *mb);

/* [M' Phi_z^T; Phi_z 0] (n = nz + m, row-major) into kkt and its LU; M' and
 * phi_z must be current.  Returns 0, or 1 if singular. */
int hymo_mb_kkt_factor(hymo_mb *mb, double *kkt, int *piv);

/* The same matrix by its non-zeros, factorised by KLU (a mechanism of many
 * loops: the dense (nz + m)^2 matrix was most of a ladder's memory).  Its
 * arrays grow only when the matrix holds more non-zeros than before; KLU
 * allocates its factors at each factorisation (at the start and after
 * events, not per step).  Without driven joints (src/engine/driver.c). */
typedef struct hymo_kkt_sparse hymo_kkt_sparse;
/* nz + m from which the engine uses it (the shipped models stay below and
 * keep their dense LU's numbers) */
#define HYMO_KKT_SPARSE_MIN 64
/* NULL out of memory */
hymo_kkt_sparse *hymo_mb_kkt_sparse_new(const hymo_mb *mb);
void hymo_mb_kkt_sparse_free(hymo_kkt_sparse *ks);
/* 0, or 1 if singular (or out of memory) */
int hymo_mb_kkt_sparse_factor(hymo_mb *mb, hymo_kkt_sparse *ks);
/* rhs (nz + m) <- K^{-1} rhs */
void hymo_mb_kkt_sparse_solve(hymo_kkt_sparse *ks, double *rhs);

/* ---- coordinate partitioning (double-step, and assembly of the model) ---- */

/* Independent coordinates z_i and dependent z_d with Phi_d = dPhi/dz_d
 * square and regular; R = dz/dz_i (nz x ni, row-major: identity rows for
 * z_i, -Phi_d^{-1} Phi_i for z_d).
 * Redundant constraints: of the m_all rows of Phi_z only the m =
 * rank rows in `rows` (a maximal independent set, chosen with the pivot
 * columns by the full-pivot elimination) form Phi_d; the other rows are
 * satisfied with them (their violation is recorded, not solved).  Without
 * redundant rows m = m_all and rows = 0 .. m-1. */
typedef struct {
    int nz, m, ni;
    int *indep, *dep; /* ni, m */
    double *phid_lu;  /* m x m, LU of Phi_d (NULL with sp) */
    int *phid_piv;
    /* from HYMO_PHID_SPARSE_MIN rows on, Phi_d by KLU (formulations/multibody.c;
     * NULL: the dense LU above) */
    struct hymo_phid_sparse *sp;
    double *R;        /* nz x ni */
    double *work;     /* 2 nz + 2 m_all */
    int *pos, *rowpos; /* nz, m_all: where a coordinate / row is in dep, indep, rows (hymo_partition_factor) */
    int maps_valid;    /* pos and rowpos are those of dep, indep and rows (0 wherever those are set) */
    int r_identity;    /* R's independent rows hold the identity of this partition */
    hymo_rank_work rw; /* hymo_rank_pivots_csr on Phi_z */
    unsigned char *mask, *mask2;
    /* all constraint rows, the kept ones (m, ascending) and their mask (m_all) */
    int m_all;
    int *rows;
    unsigned char *row_mask;
    /* nz, 0 for a coordinate that must stay independent (a
     * driven joint), else 1; NULL: any coordinate may be dependent (owned) */
    unsigned char *allowed;
    /* NULL, or hymo_constraints.vanish (set by double-step, not owned):
     * with KLU's factors (sp) Phi_d and Phi_i leave out those entries of
     * Phi_z (zero at every consistent position) and the position solve does
     * not evaluate them */
    const unsigned char *drop;
} hymo_partition;

/* m_all constraint rows of rank `rank` (= m_all without redundant rows),
 * Phi_z with about nnz non-zeros. */
hymo_status hymo_partition_alloc(hymo_partition *pt, int nz, int m_all, int rank, int nnz, hymo_error *err);
void hymo_partition_free(hymo_partition *pt);
/* Independent set (and the kept rows) by full pivoting on Phi_z (m_all x
 * nz, hymo_rank_pivots_csr) with pt->m pivots, then factorised; returns the
 * smallest pivot (<= 0: rank deficient or Phi_d singular). */
double hymo_partition_select(hymo_partition *pt, const hymo_csr *phi_z);
/* With KLU's factors (sp): 1 / (KLU's estimate of Phi_d's 1-norm condition
 * number) at the last hymo_partition_factor (klu_condest: a few solves with
 * the factors; 0 if singular); INFINITY with the dense LU or before the
 * first factorisation. */
double hymo_partition_rcond(const hymo_partition *pt);
/* x <- Phi_d^-1 x with the factors of the last hymo_partition_factor */
void hymo_partition_solve(const hymo_partition *pt, double *x);

/* hymo_rank_pivots: include/hymo/linalg.h */
/* Relative pivot below which a constraint row counts as redundant (at an
 * assembled configuration: the dependent rows' pivots are round-off). */
#define HYMO_RANK_TOL 1e-9
/* Independent set given as a mask over z (1 = independent); not factorised. */
void hymo_partition_set(hymo_partition *pt, const unsigned char *independent);
/* LU of Phi_d and R from Phi_z; 0, or 1 if Phi_d is singular (R unchanged). */
int hymo_partition_factor(hymo_partition *pt, const hymo_csr *phi_z);
/* Solves Phi(z) = 0 for z_d with z_i fixed (Newton; leaves kin, phi and
 * phi_z (con->nnz values; with KLU's factors and drop, the flagged entries
 * as they were) evaluated at z and the partition factorised); 0
 * on success.  phi_floor > 0: an iterate whose max |Phi| (kept rows) is at
 * or below it is taken as it is (no correction from round-off). */
int hymo_partition_solve_positions(hymo_partition *pt, hymo_kin *kin, const hymo_model *model,
                                   const hymo_constraints *con, double *z, double *phi, double *phi_z,
                                   int max_iter, double tol, double phi_floor);
/* R^T v (v of size nz) -> out (size ni). */
static inline void partition_project_n(const hymo_partition *pt, const double *v, double *out, const int ni)
{
    for (int k = 0; k < ni; ++k) out[k] = v[pt->indep[k]];
    for (int c = 0; c < pt->m; ++c) { /* R^T v = v_i + R_d^T v_d */
        const double *Rr = &pt->R[pt->dep[c] * ni];
        const double vd = v[pt->dep[c]];
        for (int k = 0; k < ni; ++k) out[k] += Rr[k] * vd;
    }
}
/* (one independent coordinate, the common case, with ni a constant: the
 * same operations) */
static inline void hymo_partition_project(const hymo_partition *pt, const double *v, double *out)
{
    if (pt->ni == 1) partition_project_n(pt, v, out, 1);
    else partition_project_n(pt, v, out, pt->ni);
}
static inline void partition_add_dependent_n(const hymo_partition *pt, const double *u, double *y, const int ni)
{
    for (int c = 0; c < pt->m; ++c) {
        const double *Rr = &pt->R[pt->dep[c] * ni];
        double s = 0.0;
        for (int k = 0; k < ni; ++k) s += Rr[k] * u[k];
        y[pt->dep[c]] += s;
    }
}
/* y_d += R_d u for the dependent rows of the z-sized y (u of size ni). */
static inline void hymo_partition_add_dependent(const hymo_partition *pt, const double *u, double *y)
{
    if (pt->ni == 1) partition_add_dependent_n(pt, u, y, 1);
    else partition_add_dependent_n(pt, u, y, pt->ni);
}
/* Comma-separated joint names of the independent set. */
void hymo_partition_names(const hymo_partition *pt, const hymo_model *model, char *buf, size_t len);

/* ---- actuator geometry (cylinders between two body points) ---- */

/* Per run: na cylinders' end points, directions, lengths and rates. */
typedef struct {
    int na;
    double *s, *sd;  /* na: length and rate                                 */
    double *dir;     /* 3 na: unit direction base -> rod                     */
    double *ends;    /* 6 na: global base and rod points                     */
} hymo_actuators;

hymo_status hymo_actuators_alloc(hymo_actuators *act, int na, hymo_error *err);
void hymo_actuators_free(hymo_actuators *act);
/* End points, s, sd and directions at the current kinematics. */
void hymo_actuators_eval(hymo_actuators *act, const hymo_model *model, const hymo_kin *kin);
/* Adds the cylinder forces force[na] (along dir) to the body forces. */
void hymo_actuators_apply(const hymo_actuators *act, const hymo_model *model, hymo_kin *kin, const double *force);
/* gz[a*nz + j] = d s_a / d z_j at the current kinematics. */
void hymo_actuators_gradients(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin,
                              double *gz);
/* The one joint whose coordinate moves actuator a's ends relative to
 * each other (its gradient's only non-zero), -1 if none, -2 if several. */
int hymo_actuator_joint(const hymo_model *model, const hymo_kin *kin, int a);
/* The joints whose coordinates actuator a's gradient can involve (both
 * ends' paths; a motor's or driven joint's own joint) into out (at most
 * nz); returns their number. */
int hymo_actuator_joints(const hymo_model *model, const hymo_kin *kin, int a, int *out);
/* The joints where actuator a's gradient (hymo_actuators_gradients) can be
 * non-zero into out (at most nz) and its entries there into g; returns
 * their number. */
int hymo_actuator_gradient_entries(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin, int a,
                                   int *out, double *g);
/* g[a] = d s_a / d z_joint[a] (0 for joint[a] < 0): hymo_actuators_gradients'
 * non-zeros where each actuator has at most one (hymo_actuator_joint). */
void hymo_actuators_gradients_joint(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin,
                                    const int *joint, double *g);
/* sdd[na] for joint accelerations zdd (kinematics and actuators evaluated). */
void hymo_actuators_accel(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin,
                          const double *zdd, double *sdd);

/* ---- formulation table ---- */

typedef struct hymo_formulation hymo_formulation;

typedef struct {
    const char *name;
    /* private content for mb's sizes */
    hymo_status (*create)(hymo_formulation *f, const hymo_mb *mb, hymo_error *err);
    void (*destroy)(hymo_formulation *f);
    /* number of mechanical Newton unknowns */
    int (*n_mech)(const hymo_formulation *f);
    /* at the initial state (kin positions, phi and phi_z at mb->z): choose
     * the independent coordinates etc.; t for messages */
    hymo_status (*start)(hymo_formulation *f, hymo_mb *mb, double t, hymo_error *err);
    /* start of a step, before the predictor */
    void (*begin_step)(hymo_formulation *f, hymo_mb *mb);
    /* x_mech from the predicted mb->zn: the mechanical Newton unknowns are
     * the position increments zn - z of the step (of the independent
     * coordinates), not the positions */
    void (*pack)(const hymo_formulation *f, const hymo_mb *mb, double *x);
    /* zn = z + x_mech, and zdn, zddn from the increment x_mech itself (the
     * trapezoidal rule), so that the rounding of zn does not enter the
     * rates; leaves the kinematic positions and velocities evaluated, phi
     * and phi_z filled; t = t_{k+1} */
    hymo_status (*unpack)(hymo_formulation *f, hymo_mb *mb, const double *x, double t, hymo_error *err);
    /* mechanical residual rows from mb->dyn_res */
    void (*residual)(const hymo_formulation *f, const hymo_mb *mb, double *fm);
    /* after a Newton update */
    void (*after_update)(hymo_formulation *f, hymo_mb *mb);
    /* after the Newton matrix was built: its mechanical block (n_mech x
     * n_mech, the pattern mech_pattern asked for) */
    hymo_status (*after_jacobian)(hymo_formulation *f, const hymo_sparse *jac, double t, hymo_error *err);
    /* after convergence (projections, coordinate re-selection) at t_{k+1} =
     * t, step number `step`; *unknowns_changed = 1 if the meaning of x changed */
    hymo_status (*finish_step)(hymo_formulation *f, hymo_mb *mb, double t, long step, int *unknowns_changed,
                               hymo_error *err);
    /* fast Jacobian: mechanical block without actuator terms into jac's
     * pattern (zero on entry), actuator gradients in the unknowns
     * gx[a*n_mech + k] from gz[a*nz + j] (na actuators) */
    void (*tangent)(const hymo_formulation *f, hymo_mb *mb, const double *gz, int na, double *gx,
                    hymo_sparse *jac);
    /* The mechanical block's pattern, decided when the simulation is
     * created (after start's sizes are known, before the first matrix):
     * the (row, column) pairs of the formulation's own terms and of every
     * force set s, whose terms couple the joints set_joint[set_start[s] ..
     * set_start[s + 1]) with each other (the actuators' and force
     * elements' stiffness), in the unknowns; their number is returned and
     * they are written to rows and cols unless NULL.  -1, or no op: the
     * block is dense (hymo_sparse_full: value column-major). */
    int (*mech_pattern)(const hymo_formulation *f, const hymo_mb *mb, const int *set_start, const int *set_joint,
                        int n_sets, int *rows, int *cols);
    /* joint of mechanical unknown k (messages) */
    int (*unknown_joint)(const hymo_formulation *f, int k);
    /* independent coordinates (indices into z) */
    int (*independent)(const hymo_formulation *f, const int **indices);
    /* run log: independent sets with their start times; re-selections */
    const char *(*log)(const hymo_formulation *f);
    int (*reselections)(const hymo_formulation *f);
    /* singular positions the formulation met and could not leave (one
     * line, "" if none); NULL: none possible */
    const char *(*singular)(const hymo_formulation *f);
    /* penalty factor used (reference header), 0 if none */
    double (*penalty_factor)(const hymo_formulation *f, const hymo_mb *mb);
    /* ODE form (variable-step integrators): the independent coordinates q,
     * their rates v and accelerations a (n_mech each) of the committed
     * state; and the iterate zn, zdn, zddn (kinematics, phi, phi_z, gamma
     * evaluated) from q, v, a at time t.  NULL: not an ODE formulation. */
    void (*ode_pack)(const hymo_formulation *f, const hymo_mb *mb, double *q, double *v, double *a);
    hymo_status (*ode_unpack)(hymo_formulation *f, hymo_mb *mb, const double *q, const double *v, const double *a,
                              double t, hymo_error *err);
    /* explicit formulations (index-1): accelerations mb->zdd at the
     * committed state with the forces assembled in mb->kin (M', Q' formed)
     * and phi, phi_z, gamma at it; *iterations: multiplier iterations */
    hymo_status (*accelerations)(hymo_formulation *f, hymo_mb *mb, double t, long step, int *iterations,
                                 hymo_error *err);
} hymo_formulation_ops;

struct hymo_formulation {
    const hymo_formulation_ops *ops;
    void *content;
};

extern const hymo_formulation_ops hymo_double_step_ops;
extern const hymo_formulation_ops hymo_penalty_ops;
extern const hymo_formulation_ops hymo_index1_ops;

#endif
