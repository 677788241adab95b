/* Multibody run data, the KKT matrix, coordinate partitioning and actuator
 * geometry shared by the formulations, the engine and the model compiler. */
#include "multibody.h"

#include <klu.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/linalg.h"

#define CALLOC(ptr, count)                                                                         \
    do {                                                                                           \
        (ptr) = calloc((size_t)((count) > 0 ? (count) : 1), sizeof *(ptr));                        \
        if (!(ptr)) goto nomem;                                                                    \
    } while (0)

hymo_status hymo_mb_alloc(hymo_mb *mb, const hymo_model *model, const hymo_kin_model *km,
                          const hymo_constraints *con, hymo_error *err)
{
    memset(mb, 0, sizeof *mb);
    mb->model = model;
    mb->con = con;
    const int nz = mb->nz = model->n_bodies, m = mb->m = con->m;
    mb->ncut = model->n_cuts;
    hymo_status st = hymo_kin_init(&mb->kin, km, err);
    if (st != HYMO_OK) return st;
    CALLOC(mb->z, nz);
    CALLOC(mb->zd, nz);
    CALLOC(mb->zdd, nz);
    CALLOC(mb->lambda, m);
    CALLOC(mb->zn, nz);
    CALLOC(mb->zdn, nz);
    CALLOC(mb->zddn, nz);
    CALLOC(mb->phi, m);
    CALLOC(mb->phi_z, m * nz);
    CALLOC(mb->gamma, m);
    CALLOC(mb->dyn_res, nz);
    return HYMO_OK;
nomem:
    hymo_mb_free(mb);
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (multibody state)");
}

void hymo_mb_free(hymo_mb *mb)
{
    hymo_kin_free(&mb->kin);
    double *arr[] = {mb->z,   mb->zd,  mb->zdd,   mb->lambda, mb->zn,    mb->zdn,
                     mb->zddn, mb->phi, mb->phi_z, mb->gamma,  mb->dyn_res};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
    memset(mb, 0, sizeof *mb);
}

int hymo_mb_kkt_factor(hymo_mb *mb, double *K, int *piv)
{
    const int nz = mb->nz, m = mb->m, n = nz + m;
    if (hymo_kin_mass(&mb->kin)) return 1; /* current already, unless M' is formed on demand only */
    for (int i = 0; i < nz; ++i)
        for (int j = 0; j < nz; ++j) K[i * n + j] = mb->kin.M[i * nz + j];
    for (int r = 0; r < m; ++r) {
        /* a redundant row (mbstruct) is replaced by mu_r = 0: the rest stays regular */
        const int red = mb->con->redundant[r];
        for (int j = 0; j < nz; ++j) K[(nz + r) * n + j] = K[j * n + nz + r] = red ? 0.0 : mb->phi_z[r * nz + j];
        for (int q = 0; q < m; ++q) K[(nz + r) * n + nz + q] = red && q == r ? 1.0 : 0.0;
    }
    return hymo_lu_factor(n, K, piv);
}

/* ---------------- coordinate partitioning ---------------- */

/* Phi_d of many loops (a ladder's 2N rows) is sparse: its dense LU at every
 * inner iteration of double-step was O(m^3) (docs/performance.md).  From
 * this many rows on, KLU factorises it (the pattern of its non-zeros, grown
 * as entries appear, re-analysed when it grows or the partition changes;
 * klu_refactor otherwise); the shipped models (a few loops) keep the dense
 * LU and their numbers. */
#define HYMO_PHID_SPARSE_MIN 32

struct hymo_phid_sparse {
    int *Ap, *Ai; /* m + 1, the pattern's non-zeros */
    double *Ax;
    int active; /* the last factorisation is KLU's */
    hymo_sparse phid;     /* Phi_d's non-zeros (gathered from Phi_z at each factorisation) */
    klu_symbolic *sym;
    klu_numeric *num;
    klu_common common;
};

static void phid_release(struct hymo_phid_sparse *s)
{
    if (s->num) klu_free_numeric(&s->num, &s->common);
    if (s->sym) klu_free_symbolic(&s->sym, &s->common);
}


hymo_status hymo_partition_alloc(hymo_partition *pt, int nz, int m_all, int rank, hymo_error *err)
{
    memset(pt, 0, sizeof *pt);
    pt->nz = nz;
    pt->m = rank;
    pt->m_all = m_all;
    pt->ni = nz - rank;
    CALLOC(pt->indep, nz);
    CALLOC(pt->dep, m_all);
    CALLOC(pt->phid_lu, rank * rank);
    CALLOC(pt->phid_piv, rank);
    CALLOC(pt->R, rank > 0 ? nz * (nz - rank) : 0); /* rank 0: R = I, not stored */
    CALLOC(pt->work, m_all * nz + 2 * nz + 2 * m_all);
    CALLOC(pt->mask, nz);
    CALLOC(pt->mask2, nz);
    CALLOC(pt->rows, m_all);
    CALLOC(pt->row_mask, m_all);
    for (int r = 0; r < rank; ++r) pt->rows[r] = r;
    if (rank == 0)
        for (int j = 0; j < nz; ++j) pt->indep[j] = j; /* all independent from the start (hymo_partition_select) */
    if (rank >= HYMO_PHID_SPARSE_MIN) {
        CALLOC(pt->sp, 1);
        CALLOC(pt->sp->Ap, rank + 1);
        if (hymo_sparse_alloc(&pt->sp->phid, rank, rank, 4 * rank)) goto nomem;
        klu_defaults(&pt->sp->common);
    }
    return HYMO_OK;
nomem:
    hymo_partition_free(pt);
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (coordinate partition)");
}

void hymo_partition_free(hymo_partition *pt)
{
    free(pt->indep);
    free(pt->dep);
    free(pt->phid_lu);
    free(pt->phid_piv);
    if (pt->sp) {
        phid_release(pt->sp);
        free(pt->sp->Ap), free(pt->sp->Ai), free(pt->sp->Ax);
        hymo_sparse_free(&pt->sp->phid);
        free(pt->sp);
    }
    free(pt->R);
    free(pt->work);
    free(pt->mask);
    free(pt->mask2);
    free(pt->rows);
    free(pt->row_mask);
    free(pt->allowed);
    memset(pt, 0, sizeof *pt);
}

/* Phi_d = Phi_z[rows, dep] by compressed columns (its non-zeros); 1 out of memory */
static int phid_gather(hymo_partition *pt, const double *phi_z)
{
    hymo_sparse *P = &pt->sp->phid;
    const int m = pt->m, nz = pt->nz;
    int bad = 0;
    hymo_sparse_begin(P);
    for (int c = 0; c < m; ++c) {
        for (int r = 0; r < m; ++r) {
            const double v = phi_z[pt->rows[r] * nz + pt->dep[c]];
            if (v != 0.0) bad |= hymo_sparse_push(P, r, v);
        }
        hymo_sparse_end_column(P);
    }
    return bad;
}

/* the pattern: the old one (if kept), the non-zeros and the diagonal
 * (fresh arrays: allocated when the pattern grows or the partition changes) */
static int phid_pattern(hymo_partition *pt, int keep)
{
    struct hymo_phid_sparse *s = pt->sp;
    int *Ap, *Ai;
    double *Ax;
    if (hymo_sparse_block_union(&s->phid, 0, pt->m, keep ? s->Ap : NULL, keep ? s->Ai : NULL, &Ap, &Ai, &Ax))
        return 1;
    free(s->Ap), free(s->Ai), free(s->Ax);
    s->Ap = Ap, s->Ai = Ai, s->Ax = Ax;
    phid_release(s);
    return 0;
}

static int phid_klu_factor(hymo_partition *pt, const double *phi_z)
{
    struct hymo_phid_sparse *s = pt->sp;
    const int m = pt->m;
    if (phid_gather(pt, phi_z)) return 1;
    if (!s->sym || hymo_sparse_block_fit(&s->phid, 0, m, s->Ap, s->Ai, s->Ax)) {
        if (phid_pattern(pt, s->sym != NULL)) return 1;
        s->sym = klu_analyze(m, s->Ap, s->Ai, &s->common);
        if (!s->sym) return 1;
    }
    if (s->num && klu_refactor(s->Ap, s->Ai, s->Ax, s->sym, s->num, &s->common) &&
        s->common.status != KLU_SINGULAR)
        return 0;
    if (s->num) klu_free_numeric(&s->num, &s->common);
    s->num = klu_factor(s->Ap, s->Ai, s->Ax, s->sym, &s->common);
    return !s->num || s->common.status == KLU_SINGULAR;
}

void hymo_partition_solve(const hymo_partition *pt, double *x)
{
    if (pt->sp && pt->sp->active) klu_solve(pt->sp->sym, pt->sp->num, pt->m, 1, x, &pt->sp->common);
    else hymo_lu_solve(pt->m, pt->phid_lu, pt->phid_piv, x);
}

/* LU of Phi_d and R = dz/dz_i (nz x ni, row-major): the independent rows
 * are the identity, the dependent ones -Phi_d^{-1} Phi_i.  R maps
 * independent increments, velocities and accelerations to all coordinates
 * and projects the dynamics (R^T). */
void hymo_partition_factor(hymo_partition *pt, const double *phi_z)
{
    const int m = pt->m, nz = pt->nz, ni = pt->ni;
    double *R = pt->R, *w = pt->work;
    if (m == 0) return; /* R = I (not stored) */
    if (pt->sp) pt->sp->active = !phid_klu_factor(pt, phi_z); /* else (singular) the dense LU says so */
    if (!pt->sp || !pt->sp->active) {
        for (int r = 0; r < m; ++r)
            for (int c = 0; c < m; ++c) pt->phid_lu[r * m + c] = phi_z[pt->rows[r] * nz + pt->dep[c]];
        hymo_lu_factor(m, pt->phid_lu, pt->phid_piv);
    }
    for (int k = 0; k < ni; ++k) {
        for (int r = 0; r < m; ++r) w[r] = phi_z[pt->rows[r] * nz + pt->indep[k]];
        hymo_partition_solve(pt, w);
        for (int l = 0; l < ni; ++l) R[pt->indep[l] * ni + k] = l == k;
        for (int c = 0; c < m; ++c) R[pt->dep[c] * ni + k] = -w[c];
    }
}

void hymo_partition_set(hymo_partition *pt, const unsigned char *independent)
{
    int ni = 0, nd = 0;
    for (int j = 0; j < pt->nz; ++j) {
        if (independent[j])
            pt->indep[ni++] = j;
        else
            pt->dep[nd++] = j;
    }
}

double hymo_partition_select(hymo_partition *pt, const double *phi_z)
{
    const int m = pt->m, nz = pt->nz;
    if (m == 0) {
        for (int j = 0; j < nz; ++j) pt->indep[j] = j; /* R = I */
        return INFINITY;
    }
    double pmin;
    if (hymo_rank_pivots(pt->m_all, nz, phi_z, pt->work, pt->allowed, pt->mask, pt->row_mask, m, 0.0, &pmin) < m)
        return 0.0;
    if (!(pmin > 0.0)) return pmin;
    int ni = 0, nd = 0;
    for (int j = 0; j < nz; ++j) {
        if (pt->mask[j])
            pt->dep[nd++] = j;
        else
            pt->indep[ni++] = j;
    }
    for (int r = 0, k = 0; r < pt->m_all; ++r)
        if (pt->row_mask[r]) pt->rows[k++] = r;
    hymo_partition_factor(pt, phi_z);
    return pmin;
}

/* Inner Newton: the kinematics are re-evaluated after the last update only
 * if it exceeded KIN_REFRESH, so positions used afterwards are within
 * 1e-11 of the converged ones (with quadratic convergence the error left
 * after the update is ~tol^2). */
#define KIN_REFRESH 1e-11

int hymo_partition_solve_positions(hymo_partition *pt, hymo_kin *kin, const hymo_model *model,
                                   const hymo_constraints *con, double *z, double *phi, double *phi_z,
                                   int max_iter, double tol)
{
    const int m = pt->m;
    double *delta = pt->work;
    for (int it = 0; it < max_iter; ++it) {
        hymo_kin_positions(kin, model, z);
        hymo_constraints_eval(con, kin, phi, phi_z, NULL);
        if (m == 0) return 0;
        hymo_partition_factor(pt, phi_z);
        for (int r = 0; r < m; ++r) delta[r] = phi[pt->rows[r]];
        hymo_partition_solve(pt, delta);
        double dmax = hymo_norm_inf(m, delta);
        if (!isfinite(dmax)) return 1;
        double limit = 0.5; /* damp large assembly steps (rad or m) */
        double scale = dmax > limit ? limit / dmax : 1.0;
        for (int c = 0; c < m; ++c) z[pt->dep[c]] -= scale * delta[c];
        if (dmax <= tol) {
            if (dmax > KIN_REFRESH) { /* keep kinematics consistent with the last update */
                hymo_kin_positions(kin, model, z);
                hymo_constraints_eval(con, kin, phi, phi_z, NULL);
                hymo_partition_factor(pt, phi_z);
            }
            return 0;
        }
    }
    return 1;
}

void hymo_partition_names(const hymo_partition *pt, const hymo_model *model, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int k = 0; k < pt->ni; ++k) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", k ? "," : "", model->bodies[pt->indep[k]].joint_name);
    }
}

/* ---------------- actuator geometry ---------------- */

hymo_status hymo_actuators_alloc(hymo_actuators *act, int na, hymo_error *err)
{
    memset(act, 0, sizeof *act);
    act->na = na;
    CALLOC(act->s, na);
    CALLOC(act->sd, na);
    CALLOC(act->dir, 3 * na);
    CALLOC(act->ends, 6 * na);
    return HYMO_OK;
nomem:
    hymo_actuators_free(act);
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (actuators)");
}

void hymo_actuators_free(hymo_actuators *act)
{
    free(act->s);
    free(act->sd);
    free(act->dir);
    free(act->ends);
    memset(act, 0, sizeof *act);
}

/* Motor branch: actuator a >= n_cylinders is the hydraulic motor
 * a - n_cylinders, whose "length" is its joint coordinate (s = z_j,
 * sd = zd_j, ds/dz = e_j) and whose force is the joint torque (force on a
 * prismatic joint), applied to the joint's body and, reversed, its parent.
 * After the motors come the driven joints (s = z_j as well); their force is
 * the recorded reaction, never applied (src/driver.c). */
static int motor_joint(const hymo_model *model, int a)
{
    const int k = a - model->n_cylinders;
    return k < model->n_motors ? model->motors[k].joint : model->drivers[k - model->n_motors].joint;
}

static void motor_apply(const hymo_model *model, hymo_kin *kin, int j, double T)
{
    const double *u = &kin->u[3 * j];
    const int parent = model->bodies[j].parent;
    if (model->bodies[j].joint_type == HYMO_JOINT_REVOLUTE) { /* a pure moment T u */
        double *Qj = &kin->Qbar[6 * j];
        for (int k = 0; k < 3; ++k) Qj[3 + k] += T * u[k];
        if (parent != HYMO_GROUND) {
            double *Qp = &kin->Qbar[6 * parent];
            for (int k = 0; k < 3; ++k) Qp[3 + k] -= T * u[k];
        }
    } else { /* a force T u at the joint point */
        const double f[3] = {T * u[0], T * u[1], T * u[2]}, mf[3] = {-f[0], -f[1], -f[2]};
        hymo_kin_add_point_force(kin, j, &kin->o[3 * j], f);
        hymo_kin_add_point_force(kin, parent, &kin->o[3 * j], mf);
    }
}

void hymo_actuators_eval(hymo_actuators *act, const hymo_model *model, const hymo_kin *kin)
{
    for (int a = model->n_cylinders; a < act->na; ++a) {
        const int j = motor_joint(model, a);
        act->s[a] = kin->zlast[j];
        act->sd[a] = kin->zdlast[j];
    }
    for (int a = 0; a < act->na && a < model->n_cylinders; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const hymo_point *pb = &model->points[cy->point_base], *pr = &model->points[cy->point_rod];
        double *rb = &act->ends[6 * a], *rr = rb + 3, vb[3], vr[3], *e = &act->dir[3 * a];
        hymo_kin_body_point(kin, pb->body, pb->r, rb);
        hymo_kin_body_point(kin, pr->body, pr->r, rr);
        hymo_kin_point_velocity(kin, pb->body, rb, vb);
        hymo_kin_point_velocity(kin, pr->body, rr, vr);
        for (int k = 0; k < 3; ++k) e[k] = rr[k] - rb[k];
        double s = sqrt(hymo_dot(e, e));
        for (int k = 0; k < 3; ++k) e[k] /= s;
        act->s[a] = s;
        act->sd[a] = (vr[0] - vb[0]) * e[0] + (vr[1] - vb[1]) * e[1] + (vr[2] - vb[2]) * e[2];
    }
}

void hymo_actuators_apply(const hymo_actuators *act, const hymo_model *model, hymo_kin *kin, const double *force)
{
    for (int a = model->n_cylinders; a < act->na && a < model->n_cylinders + model->n_motors; ++a)
        motor_apply(model, kin, motor_joint(model, a), force[a]);
    for (int a = 0; a < act->na && a < model->n_cylinders; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const hymo_point *pb = &model->points[cy->point_base], *pr = &model->points[cy->point_rod];
        const double *rb = &act->ends[6 * a], *rr = rb + 3;
        double f[3], mf[3];
        for (int k = 0; k < 3; ++k) {
            f[k] = force[a] * act->dir[3 * a + k];
            mf[k] = -f[k];
        }
        hymo_kin_add_point_force(kin, pr->body, rr, f);
        hymo_kin_add_point_force(kin, pb->body, rb, mf);
    }
}

#define EXACT_ZERO_MIN_NZ 16

/* d s_a / d z_j of cylinder a (rb, rr its ends, e its direction) */
static double cylinder_gradient(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin, int a,
                                int j)
{
    const hymo_cylinder *cy = &model->cylinders[a];
    const hymo_point *pb = &model->points[cy->point_base], *pr = &model->points[cy->point_rod];
    const double *rb = &act->ends[6 * a], *rr = rb + 3, *e = &act->dir[3 * a];
    /* a joint on the paths to both ends moves them rigidly together: s
     * does not change.  From EXACT_ZERO_MIN_NZ joints on that entry is set
     * to the exact zero, which keeps the Newton matrix's coupling sparse
     * (computed, it is a round-off residue that fills the actuator
     * stiffness and KLU's pattern: a chain of N links and cylinders cost
     * O(N^3) per matrix); below it the residue is kept, so that the small
     * (shipped) models keep their numbers bit for bit (crane2's fast mode
     * changes by 2 matrix builds in 18541 with the exact zero). */
    const int on_b = hymo_kin_on_path(kin, pb->body, j), on_r = hymo_kin_on_path(kin, pr->body, j);
    if (on_b == on_r && (kin->nb >= EXACT_ZERO_MIN_NZ || !on_b)) return 0.0;
    double jb[3], jr[3];
    hymo_kin_point_jacobian(kin, pb->body, j, rb, jb);
    hymo_kin_point_jacobian(kin, pr->body, j, rr, jr);
    return (jr[0] - jb[0]) * e[0] + (jr[1] - jb[1]) * e[1] + (jr[2] - jb[2]) * e[2];
}

void hymo_actuators_gradients(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin,
                              double *gz)
{
    const int nz = kin->nb;
    for (int a = model->n_cylinders; a < act->na; ++a) {
        for (int j = 0; j < nz; ++j) gz[a * nz + j] = 0.0;
        gz[a * nz + motor_joint(model, a)] = 1.0;
    }
    for (int a = 0; a < act->na && a < model->n_cylinders; ++a)
        for (int j = 0; j < nz; ++j) gz[a * nz + j] = cylinder_gradient(act, model, kin, a, j);
}

int hymo_actuator_joint(const hymo_model *model, const hymo_kin *kin, int a)
{
    if (a >= model->n_cylinders) return motor_joint(model, a);
    const hymo_cylinder *cy = &model->cylinders[a];
    const int b[2] = {model->points[cy->point_base].body, model->points[cy->point_rod].body};
    int joint = -1, count = 0;
    for (int end = 0; end < 2; ++end) /* the joints below the common ancestor, on either side */
        for (int x = b[end]; x != HYMO_GROUND && !hymo_kin_on_path(kin, b[1 - end], x); x = kin->bd[x].parent)
            joint = x, ++count;
    return count <= 1 ? joint : -2;
}

void hymo_actuators_gradients_joint(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin,
                                    const int *joint, double *g)
{
    for (int a = 0; a < act->na; ++a)
        g[a] = joint[a] < 0 ? 0.0 : a >= model->n_cylinders ? 1.0 : cylinder_gradient(act, model, kin, a, joint[a]);
}

void hymo_actuators_accel(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin,
                          const double *zdd, double *sdd)
{
    const int nz = kin->nb;
    for (int a = model->n_cylinders; a < act->na; ++a) sdd[a] = zdd[motor_joint(model, a)];
    for (int a = 0; a < act->na && a < model->n_cylinders; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const int body[2] = {model->points[cy->point_base].body, model->points[cy->point_rod].body};
        const double *e = &act->dir[3 * a];
        double acc[2][3], vel[2][3];
        for (int end = 0; end < 2; ++end) {
            const double *r = &act->ends[6 * a + 3 * end];
            hymo_kin_point_accel0(kin, body[end], r, acc[end]);
            hymo_kin_point_velocity(kin, body[end], r, vel[end]);
            for (int j = 0; j < nz; ++j) {
                double col[3];
                hymo_kin_point_jacobian(kin, body[end], j, r, col);
                for (int k = 0; k < 3; ++k) acc[end][k] += col[k] * zdd[j];
            }
        }
        /* s = |d|, sd = e.d', sdd = e.d'' + (|d'|^2 - sd^2)/s */
        double dv[3], da[3];
        for (int k = 0; k < 3; ++k) {
            dv[k] = vel[1][k] - vel[0][k];
            da[k] = acc[1][k] - acc[0][k];
        }
        sdd[a] = hymo_dot(e, da) + (hymo_dot(dv, dv) - act->sd[a] * act->sd[a]) / act->s[a];
    }
}
