/* Shared semirecursive kinematics and dynamics; see kinematics.h. */
#include "kinematics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hymo_kin_vec3_init(const double v[3], hymo_kin_vec3 *s)
{
    s->nnz = 0;
    s->k = 0;
    for (int i = 0; i < 3; ++i) {
        s->v[i] = v[i];
        if (v[i] != 0.0) {
            s->nnz++;
            s->k = i;
        }
    }
}

static void body_init(const hymo_body *body, hymo_kin_body *bd)
{
    memset(bd, 0, sizeof *bd);
    bd->parent = body->parent;
    bd->revolute = body->joint_type == HYMO_JOINT_REVOLUTE;
    hymo_kin_vec3_init(body->joint_location, &bd->loc);
    hymo_kin_vec3_init(body->joint_axis, &bd->axis);
    hymo_kin_vec3_init(body->com, &bd->com);
    bd->axis_k = -1;
    bd->axis_sign = 1.0;
    if (bd->axis.nnz == 1 && fabs(bd->axis.v[bd->axis.k]) == 1.0) {
        bd->axis_k = bd->axis.k;
        bd->axis_sign = bd->axis.v[bd->axis.k];
    }
    bd->mass = body->mass;
    const double *Jl = body->inertia;
    memcpy(bd->inertia, Jl, sizeof bd->inertia);
    bd->inertia_diag =
        Jl[1] == 0.0 && Jl[2] == 0.0 && Jl[3] == 0.0 && Jl[5] == 0.0 && Jl[6] == 0.0 && Jl[7] == 0.0;
    if (bd->inertia_diag) {
        /* R diag(d) R^T = d_ref I + sum_c (d_c - d_ref) r_c r_c^T (R orthonormal):
         * the reference is a repeated principal moment if there is one */
        double d[3] = {Jl[0], Jl[4], Jl[8]};
        int ref = 1;
        if (d[0] == d[1] || d[0] == d[2]) ref = 0;
        bd->jref = d[ref];
        for (int c = 0; c < 3; ++c) {
            if (c == ref || d[c] == d[ref]) continue;
            bd->jdiff[c] = d[c] - d[ref];
            bd->jdiff_c[bd->n_jdiff++] = c;
        }
    }
}

hymo_status hymo_kin_model_init(hymo_kin_model *km, const hymo_model *model, hymo_error *err)
{
    memset(km, 0, sizeof *km);
    int nb = model->n_bodies;
    km->nb = nb;
    size_t n = (size_t)(nb > 0 ? nb : 1);
    km->pre = calloc(n, sizeof(int));
    km->sub = calloc(n, sizeof(int));
    km->bd = calloc(n, sizeof *km->bd);
    km->child_first = calloc(n + 1, sizeof(int));
    km->child_list = calloc(n, sizeof(int));
    if (!km->pre || !km->sub || !km->bd || !km->child_first || !km->child_list) {
        hymo_kin_model_free(km);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (kinematic constants)");
    }
    for (int i = 0; i < nb; ++i) body_init(&model->bodies[i], &km->bd[i]);
    /* children lists (bodies are in topological order: parent < child) */
    for (int i = 0; i < nb; ++i)
        if (model->bodies[i].parent != HYMO_GROUND) km->child_first[model->bodies[i].parent + 1]++;
    for (int i = 0; i < nb; ++i) km->child_first[i + 1] += km->child_first[i];
    /* each parent's children in increasing index (km->pre: the fill positions, set below) */
    for (int i = 0; i < nb; ++i) km->pre[i] = km->child_first[i];
    for (int c = 0; c < nb; ++c)
        if (model->bodies[c].parent != HYMO_GROUND) km->child_list[km->pre[model->bodies[c].parent]++] = c;
    memset(km->pre, 0, n * sizeof *km->pre);
    /* subtree sizes (leaves to root), then preorder indices (root to leaves):
     * a child's block follows its parent's index and its elder siblings' blocks */
    for (int i = nb - 1; i >= 0; --i) {
        km->sub[i] += 1;
        if (model->bodies[i].parent != HYMO_GROUND) km->sub[model->bodies[i].parent] += km->sub[i];
    }
    for (int i = 0, next_root = 0; i < nb; ++i) {
        if (model->bodies[i].parent == HYMO_GROUND) km->pre[i] = next_root, next_root += km->sub[i];
        int next = km->pre[i] + 1;
        for (int t = km->child_first[i]; t < km->child_first[i + 1]; ++t) {
            km->pre[km->child_list[t]] = next;
            next += km->sub[km->child_list[t]];
        }
    }
    return HYMO_OK;
}

void hymo_kin_model_free(hymo_kin_model *km)
{
    free(km->pre);
    free(km->sub);
    free(km->bd);
    free(km->child_first);
    free(km->child_list);
    memset(km, 0, sizeof *km);
}

hymo_status hymo_kin_init(hymo_kin *kin, const hymo_kin_model *km, hymo_error *err)
{
    memset(kin, 0, sizeof *kin);
    int nb = km->nb;
    kin->nb = nb;
    kin->pre = km->pre;
    kin->sub = km->sub;
    kin->bd = km->bd;
    kin->child_first = km->child_first;
    kin->child_list = km->child_list;
    size_t n = (size_t)(nb > 0 ? nb : 1);
    kin->R = calloc(n * 9, sizeof(double));
    kin->o = calloc(n * 3, sizeof(double));
    kin->u = calloc(n * 3, sizeof(double));
    kin->g = calloc(n * 3, sizeof(double));
    kin->J = calloc(n * 9, sizeof(double));
    kin->b = calloc(n * 6, sizeof(double));
    kin->Z = calloc(n * 6, sizeof(double));
    kin->A0 = calloc(n * 6, sizeof(double));
    kin->Qbar = calloc(n * 6, sizeof(double));
    kin->Phat = calloc(n * 6, sizeof(double));
    kin->acc = calloc(n * 6, sizeof(double));
    kin->Q = calloc(n, sizeof(double));
    kin->Iown = calloc(n * 10, sizeof(double));
    kin->Ic = calloc(n * 10, sizeof(double));
    kin->zlast = calloc(n, sizeof(double));
    kin->zdlast = calloc(n, sizeof(double));
    kin->geo_stale = calloc(n, sizeof(int));
    kin->vel_stale = calloc(n, sizeof(int));
    kin->m_stale = calloc(n, sizeof(int));
    kin->dirty = calloc(n, sizeof(int));
    if (!kin->R || !kin->o || !kin->u || !kin->g || !kin->J || !kin->b || !kin->Z || !kin->A0 || !kin->Qbar ||
        !kin->Phat || !kin->acc || !kin->Q || !kin->Iown || !kin->Ic || !kin->zlast || !kin->zdlast ||
        !kin->geo_stale || !kin->vel_stale || !kin->m_stale || !kin->dirty) {
        hymo_kin_free(kin);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (kinematics workspace)");
    }
    return HYMO_OK;
}

void hymo_kin_free(hymo_kin *kin)
{
    double *arr[] = {kin->R,    kin->o,  kin->u,  kin->g,    kin->J,     kin->b,    kin->Z,
                     kin->A0,   kin->Qbar, kin->Phat, kin->acc, kin->M,   kin->Q,    kin->Iown,
                     kin->Ic,   kin->zlast, kin->zdlast};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
    free(kin->geo_stale);
    free(kin->vel_stale);
    free(kin->m_stale);
    free(kin->dirty);
    memset(kin, 0, sizeof *kin);
}

static void mat3_mul(const double *A, const double *B, double *C)
{
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

/* Rotation by angle t about the unit axis a (Rodrigues). */
static void axis_rotation(const double a[3], double t, double *Rm)
{
    double c = cos(t), s = sin(t), v = 1.0 - c;
    Rm[0] = c + a[0] * a[0] * v;
    Rm[1] = a[0] * a[1] * v - a[2] * s;
    Rm[2] = a[0] * a[2] * v + a[1] * s;
    Rm[3] = a[1] * a[0] * v + a[2] * s;
    Rm[4] = c + a[1] * a[1] * v;
    Rm[5] = a[1] * a[2] * v - a[0] * s;
    Rm[6] = a[2] * a[0] * v - a[1] * s;
    Rm[7] = a[2] * a[1] * v + a[0] * s;
    Rm[8] = c + a[2] * a[2] * v;
}

/* R = Rp Rot_k(c, s): rotation about the coordinate axis e_k; columns k1 =
 * k+1, k2 = k+2 (mod 3) turn, column k is kept. */
static inline void rotate_columns(const double *Rp, double c, double s, int k, int k1, int k2, double *R)
{
    for (int a = 0; a < 3; ++a) {
        double x1 = Rp[3 * a + k1], x2 = Rp[3 * a + k2];
        R[3 * a + k] = Rp[3 * a + k];
        R[3 * a + k1] = x1 * c + x2 * s;
        R[3 * a + k2] = x2 * c - x1 * s;
    }
}

/* Rot_k(c, s) itself (parent = ground). */
static inline void coordinate_rotation(double c, double s, int k, int k1, int k2, double *R)
{
    R[3 * k + k] = 1.0;
    R[3 * k + k1] = R[3 * k + k2] = R[3 * k1 + k] = R[3 * k2 + k] = 0.0;
    R[3 * k1 + k1] = c;
    R[3 * k2 + k2] = c;
    R[3 * k2 + k1] = s;
    R[3 * k1 + k2] = -s;
}

static const double identity3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};

/* Marks body j and its ancestors (the set of marked bodies stays closed
 * towards the root, so the walk stops at the first marked one). */
static inline void mark_m_stale(hymo_kin *kin, int j)
{
    for (; j != HYMO_GROUND && !kin->m_stale[j]; j = kin->bd[j].parent) kin->m_stale[j] = 1;
}

static inline int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

void hymo_kin_positions(hymo_kin *kin, const hymo_model *model, const double *z)
{
    (void)model; /* the constants were taken from it by hymo_kin_init */
    const int nb = kin->nb, valid = kin->pos_valid;
    double *zlast = kin->zlast;
    if (valid && memcmp(z, zlast, (size_t)nb * sizeof(double)) == 0) return;
    int *dirty = kin->dirty, *geo_stale = kin->geo_stale, *vel_stale = kin->vel_stale, *m_stale = kin->m_stale;
    kin->any_vel_stale = 1;
    kin->pos_valid = 1;
    for (int j = 0; j < nb; ++j) {
        const hymo_kin_body *bd = &kin->bd[j];
        /* the pose of j depends on z_j and the parent's pose only */
        const int pd = bd->parent != HYMO_GROUND && dirty[bd->parent];
        const int dj = pd || !valid || !same_bits(z[j], zlast[j]);
        dirty[j] = dj;
        if (!dj) continue;
        geo_stale[j] = vel_stale[j] = m_stale[j] = 1;
        if (!pd) mark_m_stale(kin, bd->parent); /* else the parent marked the path */
        zlast[j] = z[j];
        double *R = &kin->R[9 * j], *o = &kin->o[3 * j], *u = &kin->u[3 * j], *b = &kin->b[6 * j];
        const double q = z[j];
        const int k = bd->axis_k;
        double c = 1.0, sn = 0.0;
        if (bd->revolute && k >= 0) {
            c = cos(q);
            sn = bd->axis_sign * sin(q);
        }
        if (bd->parent == HYMO_GROUND) {
            if (!bd->revolute)
                memcpy(R, identity3, sizeof identity3);
            else if (k >= 0)
                coordinate_rotation(c, sn, k, (k + 1) % 3, (k + 2) % 3, R);
            else
                axis_rotation(bd->axis.v, q, R);
            memcpy(u, bd->axis.v, 3 * sizeof(double));
            memcpy(o, bd->loc.v, 3 * sizeof(double));
        } else {
            const double *Rp = &kin->R[9 * bd->parent], *op = &kin->o[3 * bd->parent];
            double loc[3];
            hymo_kin_mat3_vec_sparse(Rp, &bd->loc, loc);
            if (k >= 0) {
                double sg = bd->axis_sign;
                u[0] = sg * Rp[k];
                u[1] = sg * Rp[3 + k];
                u[2] = sg * Rp[6 + k];
            } else {
                hymo_mat3_vec(Rp, bd->axis.v, u);
            }
            if (!bd->revolute) {
                memcpy(R, Rp, 9 * sizeof(double));
            } else {
                switch (k) {
                case 0:
                    rotate_columns(Rp, c, sn, 0, 1, 2, R);
                    break;
                case 1:
                    rotate_columns(Rp, c, sn, 1, 2, 0, R);
                    break;
                case 2:
                    rotate_columns(Rp, c, sn, 2, 0, 1, R);
                    break;
                default: {
                    double Rz[9];
                    axis_rotation(bd->axis.v, q, Rz);
                    mat3_mul(Rp, Rz, R);
                }
                }
            }
            for (int i = 0; i < 3; ++i) o[i] = op[i] + loc[i];
        }
        if (bd->revolute) {
            hymo_cross(o, u, b);
            b[3] = u[0];
            b[4] = u[1];
            b[5] = u[2];
        } else {
            for (int i = 0; i < 3; ++i) o[i] += u[i] * q;
            b[0] = u[0];
            b[1] = u[1];
            b[2] = u[2];
            b[3] = b[4] = b[5] = 0.0;
        }
    }
}

/* A0_j = A0_p + (Z_p x b_j) zd_j with the spatial cross product
 * [w; v] x [b_l; b_a] = [w x b_l + v x b_a; w x b_a]; this is d/dt of
 * b_j = [o x u; u] (revolute) or [u; 0] (prismatic). */
void hymo_kin_velocities(hymo_kin *kin, const hymo_model *model, const double *zd)
{
    (void)model;
    const int nb = kin->nb, valid = kin->vel_valid;
    double *zdlast = kin->zdlast;
    if (valid && !kin->any_vel_stale && memcmp(zd, zdlast, (size_t)nb * sizeof(double)) == 0) return;
    int *dirty = kin->dirty, *vel_stale = kin->vel_stale;
    kin->any_vel_stale = 0;
    kin->vel_valid = 1;
    for (int j = 0; j < nb; ++j) {
        const hymo_kin_body *bd = &kin->bd[j];
        /* Z_j, A0_j depend on b_j, zd_j and the parent's Z, A0 only */
        const int dj = (bd->parent != HYMO_GROUND && dirty[bd->parent]) || !valid || vel_stale[j] ||
                       !same_bits(zd[j], zdlast[j]);
        dirty[j] = dj;
        if (!dj) continue;
        vel_stale[j] = 0;
        zdlast[j] = zd[j];
        const double *b = &kin->b[6 * j];
        double *Z = &kin->Z[6 * j], *A0 = &kin->A0[6 * j];
        const double q = zd[j];
        if (bd->parent == HYMO_GROUND) {
            for (int k = 0; k < 6; ++k) {
                Z[k] = b[k] * q;
                A0[k] = 0.0;
            }
            continue;
        }
        const double *Zp = &kin->Z[6 * bd->parent], *Ap = &kin->A0[6 * bd->parent];
        for (int k = 0; k < 6; ++k) Z[k] = Zp[k] + b[k] * q;
        double t1[3];
        hymo_cross(Zp + 3, b, t1); /* w_p x b_l */
        if (bd->revolute) {
            double t2[3], t3[3];
            hymo_cross(Zp, b + 3, t2);     /* v_p x b_a */
            hymo_cross(Zp + 3, b + 3, t3); /* w_p x b_a */
            for (int k = 0; k < 3; ++k) {
                A0[k] = Ap[k] + (t1[k] + t2[k]) * q;
                A0[3 + k] = Ap[3 + k] + t3[k] * q;
            }
        } else {
            for (int k = 0; k < 3; ++k) {
                A0[k] = Ap[k] + t1[k] * q;
                A0[3 + k] = Ap[3 + k];
            }
        }
    }
}

void hymo_kin_body_point(const hymo_kin *kin, int body, const double r_local[3], double r[3])
{
    if (body == HYMO_GROUND) {
        memcpy(r, r_local, 3 * sizeof(double));
        return;
    }
    hymo_mat3_vec(&kin->R[9 * body], r_local, r);
    for (int k = 0; k < 3; ++k) r[k] += kin->o[3 * body + k];
}

void hymo_kin_body_vector(const hymo_kin *kin, int body, const double v_local[3], double v[3])
{
    if (body == HYMO_GROUND) {
        memcpy(v, v_local, 3 * sizeof(double));
        return;
    }
    hymo_mat3_vec(&kin->R[9 * body], v_local, v);
}

void hymo_kin_point_velocity(const hymo_kin *kin, int body, const double r[3], double v[3])
{
    if (body == HYMO_GROUND) {
        v[0] = v[1] = v[2] = 0.0;
        return;
    }
    const double *Z = &kin->Z[6 * body];
    hymo_cross(Z + 3, r, v);
    for (int k = 0; k < 3; ++k) v[k] += Z[k];
}

void hymo_kin_point_accel0(const hymo_kin *kin, int body, const double r[3], double a[3])
{
    if (body == HYMO_GROUND) {
        a[0] = a[1] = a[2] = 0.0;
        return;
    }
    const double *Z = &kin->Z[6 * body], *A0 = &kin->A0[6 * body];
    double v[3], t1[3], t2[3];
    hymo_kin_point_velocity(kin, body, r, v);
    hymo_cross(A0 + 3, r, t1);
    hymo_cross(Z + 3, v, t2);
    for (int k = 0; k < 3; ++k) a[k] = A0[k] + t1[k] + t2[k];
}

void hymo_kin_point_jacobian(const hymo_kin *kin, int body, int j, const double r[3], double out[3])
{
    if (!hymo_kin_on_path(kin, body, j)) {
        out[0] = out[1] = out[2] = 0.0;
        return;
    }
    const double *b = &kin->b[6 * j];
    hymo_cross(b + 3, r, out);
    for (int k = 0; k < 3; ++k) out[k] += b[k];
}

/* Centre of mass and global inertia of body j (J = R Jloc R^T). */
static void mass_geometry(const hymo_kin *kin, int j, double g[3], double J[9])
{
    const hymo_kin_body *bd = &kin->bd[j];
    const double *R = &kin->R[9 * j], *o = &kin->o[3 * j];
    double gl[3];
    hymo_kin_mat3_vec_sparse(R, &bd->com, gl);
    for (int k = 0; k < 3; ++k) g[k] = o[k] + gl[k];
    double J00, J11, J22, J01, J02, J12;
    if (bd->inertia_diag) {
        J00 = J11 = J22 = bd->jref;
        J01 = J02 = J12 = 0.0;
        for (int t = 0; t < bd->n_jdiff; ++t) {
            int c = bd->jdiff_c[t];
            double e = bd->jdiff[c], r0 = R[c], r1 = R[3 + c], r2 = R[6 + c];
            double s0 = e * r0, s1 = e * r1, s2 = e * r2;
            J00 += s0 * r0;
            J11 += s1 * r1;
            J22 += s2 * r2;
            J01 += s0 * r1;
            J02 += s0 * r2;
            J12 += s1 * r2;
        }
    } else {
        double T[9];
        mat3_mul(R, bd->inertia, T);
        J00 = T[0] * R[0] + T[1] * R[1] + T[2] * R[2];
        J01 = T[0] * R[3] + T[1] * R[4] + T[2] * R[5];
        J02 = T[0] * R[6] + T[1] * R[7] + T[2] * R[8];
        J11 = T[3] * R[3] + T[4] * R[4] + T[5] * R[5];
        J12 = T[3] * R[6] + T[4] * R[7] + T[5] * R[8];
        J22 = T[6] * R[6] + T[7] * R[7] + T[8] * R[8];
    }
    J[0] = J00;
    J[1] = J[3] = J01;
    J[2] = J[6] = J02;
    J[4] = J11;
    J[5] = J[7] = J12;
    J[8] = J22;
}


/* Spatial inertia about the global origin, [m, h, I_o] (see kinematics.h):
 * Mbar = [m I, -h~; h~, I_o] with h = m g, I_o = J - m g~ g~ = J + m (|g|^2 I - g g^T). */
static inline void spatial_inertia(double m, const double g[3], const double *J, double *S)
{
    double h0 = m * g[0], h1 = m * g[1], h2 = m * g[2];
    double p0 = h0 * g[0], p1 = h1 * g[1], p2 = h2 * g[2];
    S[0] = m;
    S[1] = h0;
    S[2] = h1;
    S[3] = h2;
    S[4] = J[0] + (p1 + p2);
    S[5] = J[4] + (p0 + p2);
    S[6] = J[8] + (p0 + p1);
    S[7] = J[1] - h0 * g[1];
    S[8] = J[2] - h0 * g[2];
    S[9] = J[5] - h1 * g[2];
}

/* g, J and Iown of body j at the current pose, recomputed only if the pose
 * changed since they were last formed (geo_stale). */
static void update_mass_geometry(hymo_kin *kin, int j)
{
    if (!kin->geo_stale[j]) return;
    mass_geometry(kin, j, &kin->g[3 * j], &kin->J[9 * j]);
    spatial_inertia(kin->bd[j].mass, &kin->g[3 * j], &kin->J[9 * j], &kin->Iown[10 * j]);
    kin->geo_stale[j] = 0;
    mark_m_stale(kin, j); /* M' follows Iown */
}

/* out = Mbar v = [m v_l - h x v_a; h x v_l + I_o v_a]. */
static inline void spatial_mul(const double *S, const double v[6], double out[6])
{
    const double m = S[0], *h = S + 1;
    const double *vl = v, *va = v + 3;
    double hxa[3], hxl[3];
    hymo_cross(h, va, hxa);
    hymo_cross(h, vl, hxl);
    double t0 = m * vl[0] - hxa[0], t1 = m * vl[1] - hxa[1], t2 = m * vl[2] - hxa[2];
    double b0 = hxl[0] + (S[4] * va[0] + S[7] * va[1] + S[8] * va[2]);
    double b1 = hxl[1] + (S[7] * va[0] + S[5] * va[1] + S[9] * va[2]);
    double b2 = hxl[2] + (S[8] * va[0] + S[9] * va[1] + S[6] * va[2]);
    out[0] = t0;
    out[1] = t1;
    out[2] = t2;
    out[3] = b0;
    out[4] = b1;
    out[5] = b2;
}

static inline double dot6(const double *a, const double *b)
{
    return (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) + (a[3] * b[3] + a[4] * b[4] + a[5] * b[5]);
}

void hymo_kin_forces_begin(hymo_kin *kin, const hymo_model *model)
{
    const int nb = kin->nb;
    const double *grav = model->gravity;
    for (int j = 0; j < nb; ++j) {
        const double m = kin->bd[j].mass;
        update_mass_geometry(kin, j);
        const double *g = &kin->g[3 * j], *J = &kin->J[9 * j];
        const double *Z = &kin->Z[6 * j], *w = Z + 3;
        double gdot[3], wxgd[3], Jw[3], wxJw[3], f[3], gxf[3];
        hymo_cross(w, g, gdot);
        for (int k = 0; k < 3; ++k) gdot[k] += Z[k];
        hymo_cross(w, gdot, wxgd);
        hymo_mat3_vec(J, w, Jw);
        hymo_cross(w, Jw, wxJw);
        for (int k = 0; k < 3; ++k) f[k] = m * (grav[k] - wxgd[k]);
        hymo_cross(g, f, gxf);
        double *Qb = &kin->Qbar[6 * j];
        for (int k = 0; k < 3; ++k) {
            Qb[k] = f[k];
            Qb[3 + k] = gxf[k] - wxJw[k];
        }
    }
}

void hymo_kin_add_point_force(hymo_kin *kin, int body, const double a[3], const double f[3])
{
    if (body == HYMO_GROUND) return;
    double axf[3];
    hymo_cross(a, f, axf);
    double *Qb = &kin->Qbar[6 * body];
    for (int k = 0; k < 3; ++k) {
        Qb[k] += f[k];
        Qb[3 + k] += axf[k];
    }
}

/* M'_ij = sum over bodies k below both i and j of b_i^T Mbar_k b_j and
 * Q'_j = sum over k below j of b_j^T (Qbar_k - Mbar_k A0_k): the product
 * R_d^T T^T Mbar T R_d.  Evaluated leaves-to-root with the composite
 * (subtree) inertia Mhat_j = sum of Mbar_k below j and Phat_j = sum of
 * (Qbar_k - Mbar_k A0_k) below j: for i on the path root..j,
 * M'_ij = b_i^T Mhat_j b_j and Q'_j = b_j^T Phat_j.  M' depends on the
 * positions only; a column is recomputed when its inputs changed. */
int hymo_kin_mass(hymo_kin *kin)
{
    const int nb = kin->nb;
    if (!kin->M) { /* entries of bodies without a common path stay zero */
        kin->M = calloc((size_t)(nb > 0 ? nb : 1) * (size_t)(nb > 0 ? nb : 1), sizeof(double));
        if (!kin->M) return 1;
        for (int k = 0; k < nb; ++k) kin->m_stale[k] = 1;
    }
    double *M = kin->M;
    /* column k of M' (rows on the path root..k) changes with b_k, with b of
     * its ancestors (then b_k changed too) and with Iown in the subtree of k:
     * m_stale is set for a changed body and all its ancestors (mark_m_stale).
     * Entries of bodies without a common path stay zero (from the allocation). */
    for (int k = nb - 1; k >= 0; --k) {
        if (!kin->m_stale[k]) continue;
        kin->m_stale[k] = 0;
        const double *bk = &kin->b[6 * k];
        double *C = &kin->Ic[10 * k];
        memcpy(C, &kin->Iown[10 * k], 10 * sizeof(double));
        for (int t = kin->child_first[k]; t < kin->child_first[k + 1]; ++t) {
            const double *Cc = &kin->Ic[10 * kin->child_list[t]];
            for (int r = 0; r < 10; ++r) C[r] += Cc[r];
        }
        double w[6];
        spatial_mul(C, bk, w);
        M[k * nb + k] = dot6(bk, w);
        for (int i = kin->bd[k].parent; i != HYMO_GROUND; i = kin->bd[i].parent) {
            double s = dot6(&kin->b[6 * i], w);
            M[i * nb + k] = s;
            M[k * nb + i] = s;
        }
    }
    return 0;
}

void hymo_kin_mass_times(hymo_kin *kin, const double *v, double *out)
{
    const int nb = kin->nb;
    double *a = kin->acc;
    for (int k = 0; k < nb; ++k) { /* root to leaves: a_k = a_parent + b_k v_k */
        update_mass_geometry(kin, k);
        const int p = kin->bd[k].parent;
        const double *b = &kin->b[6 * k];
        for (int r = 0; r < 6; ++r) a[6 * k + r] = (p == HYMO_GROUND ? 0.0 : a[6 * p + r]) + b[r] * v[k];
    }
    for (int k = nb - 1; k >= 0; --k) { /* leaves to root: a_k becomes the subtree's wrench W_k */
        double w[6];
        spatial_mul(&kin->Iown[10 * k], &a[6 * k], w);
        for (int t = kin->child_first[k]; t < kin->child_first[k + 1]; ++t)
            for (int r = 0; r < 6; ++r) w[r] += a[6 * kin->child_list[t] + r];
        memcpy(&a[6 * k], w, sizeof w);
        out[k] = dot6(&kin->b[6 * k], w);
    }
}

void hymo_kin_composite(hymo_kin *kin)
{
    const int nb = kin->nb;
    for (int k = nb - 1; k >= 0; --k) {
        update_mass_geometry(kin, k);
        double *C = &kin->Ic[10 * k];
        memcpy(C, &kin->Iown[10 * k], 10 * sizeof(double));
        for (int t = kin->child_first[k]; t < kin->child_first[k + 1]; ++t) {
            const double *Cc = &kin->Ic[10 * kin->child_list[t]];
            for (int r = 0; r < 10; ++r) C[r] += Cc[r];
        }
    }
    for (int k = 0; k < nb; ++k) kin->m_stale[k] = 1; /* M' (if formed) recomputed from its own Ic */
}

int hymo_kin_path_union(const hymo_kin *kin, int b0, int b1, int *out)
{
    int n = 0;
    for (int x = b0; x != HYMO_GROUND; x = kin->bd[x].parent) out[n++] = x;
    for (int x = b1; x != HYMO_GROUND && (b0 == HYMO_GROUND || !hymo_kin_on_path(kin, b0, x)); x = kin->bd[x].parent)
        out[n++] = x;
    return n;
}

double hymo_kin_mass_entry(const hymo_kin *kin, int i, int k)
{
    double w[6];
    spatial_mul(&kin->Ic[10 * k], &kin->b[6 * k], w);
    return dot6(&kin->b[6 * i], w);
}

int hymo_kin_tree_factor(hymo_kin *kin, const double *e, double *w)
{
    const int nb = kin->nb;
    for (int k = 0; k < nb; ++k) update_mass_geometry(kin, k);
    for (int k = nb - 1; k >= 0; --k) {
        double *P = &w[HYMO_KIN_TREE_W * k], *Pb = P + 36;
        for (int c = 0; c < 6; ++c) { /* Mbar_k, column by column */
            double unit[6] = {0, 0, 0, 0, 0, 0};
            unit[c] = 1.0;
            spatial_mul(&kin->Iown[10 * k], unit, &P[6 * c]);
        }
        for (int t = kin->child_first[k]; t < kin->child_first[k + 1]; ++t) {
            const double *Pc = &w[HYMO_KIN_TREE_W * kin->child_list[t]], *Pbc = Pc + 36, dc = Pc[42];
            for (int r = 0; r < 6; ++r)
                for (int q = 0; q < 6; ++q) P[6 * r + q] += Pc[6 * r + q] - Pbc[r] * Pbc[q] / dc;
        }
        const double *b = &kin->b[6 * k];
        for (int r = 0; r < 6; ++r) Pb[r] = dot6(&P[6 * r], b); /* P symmetric */
        const double bPb = dot6(b, Pb), d = bPb + e[k];
        if (!isfinite(d) || !(fabs(d) > 1e-12 * fabs(bPb))) return 1;
        P[42] = d;
    }
    return 0;
}

void hymo_kin_tree_solve(const hymo_kin *kin, const double *w, double *x, double *s)
{
    const int nb = kin->nb;
    double *beta = s, *acc = s + 6 * nb;
    for (int k = nb - 1; k >= 0; --k) { /* bias wrenches, and x_k <- f_k - b_k^T beta_k */
        double *bk = &beta[6 * k];
        for (int r = 0; r < 6; ++r) bk[r] = 0.0;
        for (int t = kin->child_first[k]; t < kin->child_first[k + 1]; ++t) {
            const int c = kin->child_list[t];
            const double *Pc = &w[HYMO_KIN_TREE_W * c], *Pbc = Pc + 36, f = x[c] / Pc[42];
            for (int r = 0; r < 6; ++r) bk[r] += beta[6 * c + r] + Pbc[r] * f;
        }
        x[k] -= dot6(&kin->b[6 * k], bk);
    }
    for (int k = 0; k < nb; ++k) { /* root to leaves: x_k, and the body accelerations */
        const int p = kin->bd[k].parent;
        const double *Pk = &w[HYMO_KIN_TREE_W * k], *b = &kin->b[6 * k];
        double *a = &acc[6 * k];
        if (p == HYMO_GROUND) {
            x[k] /= Pk[42];
            for (int r = 0; r < 6; ++r) a[r] = b[r] * x[k];
        } else {
            const double *ap = &acc[6 * p];
            x[k] = (x[k] - dot6(Pk + 36, ap)) / Pk[42];
            for (int r = 0; r < 6; ++r) a[r] = ap[r] + b[r] * x[k];
        }
    }
}

void hymo_kin_mass_and_forces(hymo_kin *kin, const hymo_model *model)
{
    (void)model;
    const int nb = kin->nb;
    double *Q = kin->Q;
    if (!kin->mass_lazy || kin->M) hymo_kin_mass(kin); /* lazy: Q' alone */
    for (int k = nb - 1; k >= 0; --k) {
        const double *Qb = &kin->Qbar[6 * k];
        double *P = &kin->Phat[6 * k];
        if (kin->bd[k].parent == HYMO_GROUND) { /* A0_k = 0 */
            memcpy(P, Qb, 6 * sizeof(double));
        } else {
            double MA[6];
            spatial_mul(&kin->Iown[10 * k], &kin->A0[6 * k], MA);
            for (int r = 0; r < 6; ++r) P[r] = Qb[r] - MA[r];
        }
        for (int t = kin->child_first[k]; t < kin->child_first[k + 1]; ++t) {
            const double *Pc = &kin->Phat[6 * kin->child_list[t]];
            for (int r = 0; r < 6; ++r) P[r] += Pc[r];
        }
        Q[k] = dot6(&kin->b[6 * k], P);
    }
}

/* r = M' zdd - Q' without forming M': body accelerations Zdot_k = A0_k +
 * sum over the path of b_i zdd_i (root to leaves), the body residual
 * wrenches Mbar_k Zdot_k - Qbar_k summed over each subtree (leaves to root),
 * r_j = b_j^T (subtree sum of j).  O(nb) against O(nb depth) for M'. */
void hymo_kin_inverse_dynamics(hymo_kin *kin, const double *zdd, double *r)
{
    const int nb = kin->nb;
    double *acc = kin->acc, *W = kin->Phat;
    for (int k = 0; k < nb; ++k) {
        const int p = kin->bd[k].parent;
        const double *b = &kin->b[6 * k], *A0 = &kin->A0[6 * k];
        double *a = &acc[6 * k];
        for (int i = 0; i < 6; ++i) a[i] = b[i] * zdd[k];
        if (p != HYMO_GROUND) {
            const double *ap = &acc[6 * p];
            for (int i = 0; i < 6; ++i) a[i] += ap[i];
        }
        double Za[6];
        for (int i = 0; i < 6; ++i) Za[i] = A0[i] + a[i];
        spatial_mul(&kin->Iown[10 * k], Za, &W[6 * k]);
        const double *Qb = &kin->Qbar[6 * k];
        for (int i = 0; i < 6; ++i) W[6 * k + i] -= Qb[i];
    }
    for (int k = nb - 1; k >= 0; --k) {
        double *w = &W[6 * k];
        for (int t = kin->child_first[k]; t < kin->child_first[k + 1]; ++t) {
            const double *wc = &W[6 * kin->child_list[t]];
            for (int i = 0; i < 6; ++i) w[i] += wc[i];
        }
        r[k] = dot6(&kin->b[6 * k], w);
    }
}

double hymo_kin_kinetic_energy(hymo_kin *kin, const hymo_model *model)
{
    double T = 0.0;
    for (int j = 0; j < kin->nb; ++j) {
        const double *Z = &kin->Z[6 * j], *w = Z + 3;
        double gdot[3], Jw[3];
        update_mass_geometry(kin, j);
        const double *g = &kin->g[3 * j], *J = &kin->J[9 * j];
        hymo_cross(w, g, gdot);
        for (int k = 0; k < 3; ++k) gdot[k] += Z[k];
        hymo_mat3_vec(J, w, Jw);
        T += 0.5 * model->bodies[j].mass * hymo_dot(gdot, gdot) + 0.5 * hymo_dot(w, Jw);
    }
    return T;
}

double hymo_kin_potential_energy(hymo_kin *kin, const hymo_model *model)
{
    double V = 0.0;
    for (int j = 0; j < kin->nb; ++j) {
        update_mass_geometry(kin, j);
        V -= model->bodies[j].mass * hymo_dot(model->gravity, &kin->g[3 * j]);
    }
    return V;
}
