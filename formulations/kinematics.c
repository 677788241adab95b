/* Shared semirecursive kinematics and dynamics; see kinematics.h. */
#include "kinematics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

hymo_status hymo_kin_init(hymo_kin *kin, const hymo_model *model, hymo_error *err)
{
    memset(kin, 0, sizeof *kin);
    int nb = model->n_bodies;
    kin->nb = nb;
    size_t n = (size_t)(nb > 0 ? nb : 1);
    kin->anc = calloc(n * n, 1);
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
    kin->M = calloc(n * n, sizeof(double));
    kin->Q = calloc(n, sizeof(double));
    if (!kin->anc || !kin->R || !kin->o || !kin->u || !kin->g || !kin->J || !kin->b || !kin->Z ||
        !kin->A0 || !kin->Qbar || !kin->Phat || !kin->M || !kin->Q) {
        hymo_kin_free(kin);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (kinematics workspace)");
    }
    for (int i = 0; i < nb; ++i) {
        for (int j = i; j != HYMO_GROUND; j = model->bodies[j].parent) kin->anc[i * nb + j] = 1;
    }
    return HYMO_OK;
}

void hymo_kin_free(hymo_kin *kin)
{
    free(kin->anc);
    free(kin->R);
    free(kin->o);
    free(kin->u);
    free(kin->g);
    free(kin->J);
    free(kin->b);
    free(kin->Z);
    free(kin->A0);
    free(kin->Qbar);
    free(kin->Phat);
    free(kin->M);
    free(kin->Q);
    memset(kin, 0, sizeof *kin);
}

static void mat3_vec(const double *A, const double *x, double *y)
{
    double y0 = A[0] * x[0] + A[1] * x[1] + A[2] * x[2];
    double y1 = A[3] * x[0] + A[4] * x[1] + A[5] * x[2];
    double y2 = A[6] * x[0] + A[7] * x[1] + A[8] * x[2];
    y[0] = y0;
    y[1] = y1;
    y[2] = y2;
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

static const double identity3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static const double zero3[3] = {0, 0, 0};

void hymo_kin_positions(hymo_kin *kin, const hymo_model *model, const double *z)
{
    kin->mass_fresh = 0;
    for (int j = 0; j < kin->nb; ++j) {
        const hymo_body *body = &model->bodies[j];
        const double *Rp = body->parent == HYMO_GROUND ? identity3 : &kin->R[9 * body->parent];
        const double *op = body->parent == HYMO_GROUND ? zero3 : &kin->o[3 * body->parent];
        double *R = &kin->R[9 * j], *o = &kin->o[3 * j], *u = &kin->u[3 * j];
        double loc[3];
        mat3_vec(Rp, body->joint_location, loc);
        mat3_vec(Rp, body->joint_axis, u);
        double *b = &kin->b[6 * j];
        if (body->joint_type == HYMO_JOINT_REVOLUTE) {
            double Rz[9];
            axis_rotation(body->joint_axis, z[j], Rz);
            mat3_mul(Rp, Rz, R);
            for (int k = 0; k < 3; ++k) o[k] = op[k] + loc[k];
            hymo_cross(o, u, b);
            memcpy(b + 3, u, 3 * sizeof(double));
        } else {
            memcpy(R, Rp, 9 * sizeof(double));
            for (int k = 0; k < 3; ++k) o[k] = op[k] + loc[k] + u[k] * z[j];
            memcpy(b, u, 3 * sizeof(double));
            b[3] = b[4] = b[5] = 0.0;
        }
    }
}

void hymo_kin_velocities(hymo_kin *kin, const hymo_model *model, const double *zd)
{
    for (int j = 0; j < kin->nb; ++j) {
        int p = model->bodies[j].parent;
        const double *b = &kin->b[6 * j];
        double *Z = &kin->Z[6 * j], *A0 = &kin->A0[6 * j];
        double Zp[6] = {0, 0, 0, 0, 0, 0}, Ap[6] = {0, 0, 0, 0, 0, 0};
        if (p != HYMO_GROUND) {
            memcpy(Zp, &kin->Z[6 * p], sizeof Zp);
            memcpy(Ap, &kin->A0[6 * p], sizeof Ap);
        }
        for (int k = 0; k < 6; ++k) Z[k] = Zp[k] + b[k] * zd[j];
        const double *u = &kin->u[3 * j];
        double udot[3];
        hymo_cross(Zp + 3, u, udot); /* u' = w_parent x u */
        double d[6];
        if (model->bodies[j].joint_type == HYMO_JOINT_REVOLUTE) {
            const double *r = &kin->o[3 * j];
            double rdot[3], t1[3], t2[3];
            hymo_cross(Zp + 3, r, rdot);
            for (int k = 0; k < 3; ++k) rdot[k] += Zp[k];
            hymo_cross(rdot, u, t1);
            hymo_cross(r, udot, t2);
            for (int k = 0; k < 3; ++k) {
                d[k] = (t1[k] + t2[k]) * zd[j];
                d[3 + k] = udot[k] * zd[j];
            }
        } else {
            for (int k = 0; k < 3; ++k) {
                d[k] = udot[k] * zd[j];
                d[3 + k] = 0.0;
            }
        }
        for (int k = 0; k < 6; ++k) A0[k] = Ap[k] + d[k];
    }
}

void hymo_kin_body_point(const hymo_kin *kin, int body, const double r_local[3], double r[3])
{
    if (body == HYMO_GROUND) {
        memcpy(r, r_local, 3 * sizeof(double));
        return;
    }
    mat3_vec(&kin->R[9 * body], r_local, r);
    for (int k = 0; k < 3; ++k) r[k] += kin->o[3 * body + k];
}

void hymo_kin_body_vector(const hymo_kin *kin, int body, const double v_local[3], double v[3])
{
    if (body == HYMO_GROUND) {
        memcpy(v, v_local, 3 * sizeof(double));
        return;
    }
    mat3_vec(&kin->R[9 * body], v_local, v);
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
    if (body == HYMO_GROUND || !kin->anc[body * kin->nb + j]) {
        out[0] = out[1] = out[2] = 0.0;
        return;
    }
    const double *b = &kin->b[6 * j];
    hymo_cross(b + 3, r, out);
    for (int k = 0; k < 3; ++k) out[k] += b[k];
}

/* Centre of mass and global inertia of body j (J = R Jloc R^T). */
static void mass_geometry(const hymo_kin *kin, const hymo_model *model, int j, double g[3], double J[9])
{
    const double *R = &kin->R[9 * j], *Jl = model->bodies[j].inertia;
    double gl[3];
    mat3_vec(R, model->bodies[j].com, gl);
    for (int k = 0; k < 3; ++k) g[k] = kin->o[3 * j + k] + gl[k];
    double T[9];
    if (Jl[1] == 0.0 && Jl[2] == 0.0 && Jl[3] == 0.0 && Jl[5] == 0.0 && Jl[6] == 0.0 && Jl[7] == 0.0) {
        for (int a = 0; a < 3; ++a) /* principal axes: T = R diag(Jl) */
            for (int c = 0; c < 3; ++c) T[3 * a + c] = R[3 * a + c] * Jl[4 * c];
    } else {
        mat3_mul(R, Jl, T);
    }
    for (int a = 0; a < 3; ++a) /* J = T R^T, symmetric */
        for (int b = a; b < 3; ++b) {
            double v = T[3 * a] * R[3 * b] + T[3 * a + 1] * R[3 * b + 1] + T[3 * a + 2] * R[3 * b + 2];
            J[3 * a + b] = v;
            J[3 * b + a] = v;
        }
}

/* g and J of body j: cached by forces_begin at the current positions. */
static void mass_geometry_cached(const hymo_kin *kin, const hymo_model *model, int j, double g[3], double J[9])
{
    if (kin->mass_fresh) {
        memcpy(g, &kin->g[3 * j], 3 * sizeof(double));
        memcpy(J, &kin->J[9 * j], 9 * sizeof(double));
    } else {
        mass_geometry(kin, model, j, g, J);
    }
}

void hymo_kin_forces_begin(hymo_kin *kin, const hymo_model *model)
{
    for (int j = 0; j < kin->nb; ++j) {
        mass_geometry(kin, model, j, &kin->g[3 * j], &kin->J[9 * j]);
        kin->mass_fresh = 1;
        double m = model->bodies[j].mass;
        const double *g = &kin->g[3 * j], *Z = &kin->Z[6 * j], *w = Z + 3;
        double gdot[3], wxgd[3], Jw[3], wxJw[3], f[3], gxf[3];
        hymo_cross(w, g, gdot);
        for (int k = 0; k < 3; ++k) gdot[k] += Z[k];
        hymo_cross(w, gdot, wxgd);
        mat3_vec(&kin->J[9 * j], w, Jw);
        hymo_cross(w, Jw, wxJw);
        for (int k = 0; k < 3; ++k) f[k] = m * (model->gravity[k] - wxgd[k]);
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

/* out = Mbar v with Mbar = [m I, -m g~; m g~, J - m g~ g~]:
 * top = m (v_l - g x v_a), bottom = g x top + J v_a. */
static void mbar_mul(double m, const double g[3], const double *J, const double v[6], double out[6])
{
    double gxa[3], t[3], Ja[3];
    hymo_cross(g, v + 3, gxa);
    for (int k = 0; k < 3; ++k) out[k] = m * (v[k] - gxa[k]);
    hymo_cross(g, out, t);
    mat3_vec(J, v + 3, Ja);
    for (int k = 0; k < 3; ++k) out[3 + k] = t[k] + Ja[k];
}

/* M'_ij = sum over bodies k below both i and j of b_i^T Mbar_k b_j and
 * Q'_j = sum over k below j of b_j^T (Qbar_k - Mbar_k A0_k): the product
 * R_d^T T^T Mbar T R_d evaluated along each body's path to the root. */
void hymo_kin_mass_and_forces(hymo_kin *kin, const hymo_model *model)
{
    int nb = kin->nb;
    memset(kin->M, 0, (size_t)nb * (size_t)nb * sizeof(double));
    memset(kin->Q, 0, (size_t)nb * sizeof(double));
    double *w = kin->Phat; /* scratch: Mbar_k b_j for the ancestors j of k */
    for (int k = 0; k < nb; ++k) {
        double m = model->bodies[k].mass, P[6];
        const double *g = &kin->g[3 * k], *J = &kin->J[9 * k];
        mbar_mul(m, g, J, &kin->A0[6 * k], P);
        for (int r = 0; r < 6; ++r) P[r] = kin->Qbar[6 * k + r] - P[r];
        for (int j = k; j != HYMO_GROUND; j = model->bodies[j].parent) {
            const double *bj = &kin->b[6 * j];
            double *wj = &w[6 * j];
            mbar_mul(m, g, J, bj, wj);
            double q = 0.0;
            for (int r = 0; r < 6; ++r) q += bj[r] * P[r];
            kin->Q[j] += q;
            for (int i = j; i != HYMO_GROUND; i = model->bodies[i].parent) {
                const double *bi = &kin->b[6 * i];
                double s = 0.0;
                for (int r = 0; r < 6; ++r) s += bi[r] * wj[r];
                kin->M[i * nb + j] += s;
                if (i != j) kin->M[j * nb + i] += s;
            }
        }
    }
}

double hymo_kin_kinetic_energy(const hymo_kin *kin, const hymo_model *model)
{
    double T = 0.0;
    for (int j = 0; j < kin->nb; ++j) {
        const double *Z = &kin->Z[6 * j], *w = Z + 3;
        double g[3], J[9], gdot[3], Jw[3];
        mass_geometry_cached(kin, model, j, g, J);
        hymo_cross(w, g, gdot);
        for (int k = 0; k < 3; ++k) gdot[k] += Z[k];
        mat3_vec(J, w, Jw);
        T += 0.5 * model->bodies[j].mass * hymo_dot(gdot, gdot) + 0.5 * hymo_dot(w, Jw);
    }
    return T;
}

double hymo_kin_potential_energy(const hymo_kin *kin, const hymo_model *model)
{
    double V = 0.0;
    for (int j = 0; j < kin->nb; ++j) {
        double g[3], J[9];
        mass_geometry_cached(kin, model, j, g, J);
        V -= model->bodies[j].mass * hymo_dot(model->gravity, g);
    }
    return V;
}
