#include "constraints.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Two unit vectors completing `a` to an orthonormal triad (deterministic). */
static void perpendiculars(const double a[3], double p1[3], double p2[3])
{
    int k = 0;
    if (fabs(a[1]) < fabs(a[k])) k = 1;
    if (fabs(a[2]) < fabs(a[k])) k = 2;
    double e[3] = {0, 0, 0};
    e[k] = 1.0;
    hymo_cross(a, e, p1);
    double n = sqrt(hymo_dot(p1, p1));
    for (int i = 0; i < 3; ++i) p1[i] /= n;
    hymo_cross(a, p1, p2);
}

static int add(hymo_constraints *con, int *count, hymo_prim p)
{
    if (con->prims) con->prims[*count] = p;
    return ++*count;
}

static void build(hymo_constraints *con, const hymo_model *model, int *count)
{
    *count = 0;
    for (int c = 0; c < model->n_cuts; ++c) {
        const hymo_cut_joint *cj = &model->cuts[c];
        if (con->cut_first) con->cut_first[c] = *count;
        hymo_prim p;
        memset(&p, 0, sizeof p);
        p.body_a = cj->body_a;
        p.body_b = cj->body_b;
        p.cut = c;
        memcpy(p.pa, cj->point_a, sizeof p.pa);
        memcpy(p.pb, cj->point_b, sizeof p.pb);
        static const double ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
        switch (cj->type) {
        case HYMO_CUT_PLANAR_REVOLUTE:
        case HYMO_CUT_SPHERICAL:
        case HYMO_CUT_REVOLUTE:
            p.type = HYMO_PRIM_PP_GLOBAL;
            memcpy(p.vb, ex, sizeof ex);
            add(con, count, p);
            memcpy(p.vb, ey, sizeof ey);
            add(con, count, p);
            if (cj->type != HYMO_CUT_PLANAR_REVOLUTE) {
                memcpy(p.vb, ez, sizeof ez);
                add(con, count, p);
            }
            if (cj->type == HYMO_CUT_REVOLUTE) {
                double q1[3], q2[3];
                perpendiculars(cj->axis_b, q1, q2);
                p.type = HYMO_PRIM_VV;
                memcpy(p.va, cj->axis_a, sizeof p.va);
                memcpy(p.vb, q1, sizeof q1);
                add(con, count, p);
                memcpy(p.vb, q2, sizeof q2);
                add(con, count, p);
            }
            break;
        case HYMO_CUT_PLANAR_TRANSLATIONAL: {
            const double *e = cj->axis_b;
            p.type = HYMO_PRIM_PP_BODYDIR;
            p.va[0] = -e[1]; /* n = z x e, in b */
            p.va[1] = e[0];
            p.va[2] = 0.0;
            double n = sqrt(p.va[0] * p.va[0] + p.va[1] * p.va[1]);
            p.va[0] /= n;
            p.va[1] /= n;
            add(con, count, p);
            /* sin(theta_a - theta_b - angle0) = (R_a x) . (R_b m), m = rot_z(angle0 + pi/2) x */
            p.type = HYMO_PRIM_VV;
            memcpy(p.va, ex, sizeof ex);
            p.vb[0] = -sin(cj->angle0);
            p.vb[1] = cos(cj->angle0);
            p.vb[2] = 0.0;
            add(con, count, p);
            break;
        }
        case HYMO_CUT_TRANSLATIONAL: {
            double n1[3], n2[3], a1[3], a2[3];
            perpendiculars(cj->axis_b, n1, n2);
            perpendiculars(cj->axis_a, a1, a2);
            p.type = HYMO_PRIM_PP_BODYDIR;
            memcpy(p.va, n1, sizeof n1);
            add(con, count, p);
            memcpy(p.va, n2, sizeof n2);
            add(con, count, p);
            p.type = HYMO_PRIM_VV;
            memcpy(p.va, cj->axis_a, sizeof p.va);
            memcpy(p.vb, n1, sizeof n1);
            add(con, count, p);
            memcpy(p.vb, n2, sizeof n2);
            add(con, count, p);
            memcpy(p.va, a1, sizeof a1); /* twist: a1 stays aligned with n1 */
            add(con, count, p);
            break;
        }
        }
    }
    if (con->cut_first) con->cut_first[model->n_cuts] = *count;
}

hymo_status hymo_constraints_init(hymo_constraints *con, const hymo_model *model, hymo_error *err)
{
    memset(con, 0, sizeof *con);
    int m = 0;
    build(con, model, &m);
    con->m = m;
    con->nz = model->n_bodies;
    con->prims = calloc((size_t)(m > 0 ? m : 1), sizeof *con->prims);
    con->cut_first = calloc((size_t)model->n_cuts + 1, sizeof(int));
    if (!con->prims || !con->cut_first) {
        hymo_constraints_free(con);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (constraints)");
    }
    build(con, model, &m);
    return HYMO_OK;
}

void hymo_constraints_free(hymo_constraints *con)
{
    free(con->prims);
    free(con->cut_first);
    memset(con, 0, sizeof *con);
}

static void angular(const hymo_kin *kin, int body, double w[3], double wd0[3])
{
    if (body == HYMO_GROUND) {
        w[0] = w[1] = w[2] = wd0[0] = wd0[1] = wd0[2] = 0.0;
        return;
    }
    memcpy(w, &kin->Z[6 * body + 3], 3 * sizeof(double));
    memcpy(wd0, &kin->A0[6 * body + 3], 3 * sizeof(double));
}

/* Rate and velocity-product acceleration of a body-fixed global vector v. */
static void vector_rates(const hymo_kin *kin, int body, const double v[3], double vd[3], double vdd0[3])
{
    double w[3], wd[3], t[3];
    angular(kin, body, w, wd);
    hymo_cross(w, v, vd);
    hymo_cross(wd, v, vdd0);
    hymo_cross(w, vd, t);
    for (int k = 0; k < 3; ++k) vdd0[k] += t[k];
}

void hymo_constraints_eval(const hymo_constraints *con, const hymo_kin *kin, double *phi,
                           double *phi_z, double *gamma)
{
    int nz = con->nz;
    for (int i = 0; i < con->m; ++i) {
        const hymo_prim *p = &con->prims[i];
        double *row = phi_z ? &phi_z[(size_t)i * nz] : NULL;
        if (p->type == HYMO_PRIM_VV) {
            double va[3], vb[3];
            hymo_kin_body_vector(kin, p->body_a, p->va, va);
            hymo_kin_body_vector(kin, p->body_b, p->vb, vb);
            phi[i] = hymo_dot(va, vb);
            if (row) {
                for (int j = 0; j < nz; ++j) {
                    double s = 0.0, t[3];
                    const double *w = &kin->b[6 * j + 3];
                    if (p->body_a != HYMO_GROUND && kin->anc[p->body_a * nz + j]) {
                        hymo_cross(w, va, t);
                        s += hymo_dot(t, vb);
                    }
                    if (p->body_b != HYMO_GROUND && kin->anc[p->body_b * nz + j]) {
                        hymo_cross(w, vb, t);
                        s += hymo_dot(va, t);
                    }
                    row[j] = s;
                }
            }
            if (gamma) {
                double vad[3], vadd[3], vbd[3], vbdd[3];
                vector_rates(kin, p->body_a, va, vad, vadd);
                vector_rates(kin, p->body_b, vb, vbd, vbdd);
                gamma[i] = hymo_dot(vadd, vb) + 2.0 * hymo_dot(vad, vbd) + hymo_dot(va, vbdd);
            }
            continue;
        }
        double ra[3], rb[3], d[3], n[3];
        hymo_kin_body_point(kin, p->body_a, p->pa, ra);
        hymo_kin_body_point(kin, p->body_b, p->pb, rb);
        for (int k = 0; k < 3; ++k) d[k] = ra[k] - rb[k];
        int moving_dir = p->type == HYMO_PRIM_PP_BODYDIR;
        if (moving_dir)
            hymo_kin_body_vector(kin, p->body_b, p->va, n);
        else
            memcpy(n, p->vb, sizeof n);
        phi[i] = hymo_dot(d, n);
        if (row) {
            for (int j = 0; j < nz; ++j) {
                double ja[3], jb[3];
                hymo_kin_point_jacobian(kin, p->body_a, j, ra, ja);
                hymo_kin_point_jacobian(kin, p->body_b, j, rb, jb);
                double s = (ja[0] - jb[0]) * n[0] + (ja[1] - jb[1]) * n[1] + (ja[2] - jb[2]) * n[2];
                if (moving_dir && p->body_b != HYMO_GROUND && kin->anc[p->body_b * nz + j]) {
                    double t[3];
                    hymo_cross(&kin->b[6 * j + 3], n, t);
                    s += hymo_dot(d, t);
                }
                row[j] = s;
            }
        }
        if (gamma) {
            double aa[3], ab[3], dd0[3];
            hymo_kin_point_accel0(kin, p->body_a, ra, aa);
            hymo_kin_point_accel0(kin, p->body_b, rb, ab);
            for (int k = 0; k < 3; ++k) dd0[k] = aa[k] - ab[k];
            double g = hymo_dot(dd0, n);
            if (moving_dir) {
                double va[3], vb[3], dd[3], nd[3], ndd[3];
                hymo_kin_point_velocity(kin, p->body_a, ra, va);
                hymo_kin_point_velocity(kin, p->body_b, rb, vb);
                for (int k = 0; k < 3; ++k) dd[k] = va[k] - vb[k];
                vector_rates(kin, p->body_b, n, nd, ndd);
                g += 2.0 * hymo_dot(dd, nd) + hymo_dot(d, ndd);
            }
            gamma[i] = g;
        }
    }
}

void hymo_constraints_cut_norms(const hymo_constraints *con, int ncut, const double *v, double *out)
{
    for (int c = 0; c < ncut; ++c) {
        double s = 0.0;
        for (int i = con->cut_first[c]; i < con->cut_first[c + 1]; ++i) s += v[i] * v[i];
        out[c] = sqrt(s);
    }
}
