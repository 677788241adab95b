#include "constraints.h"

#include <math.h>
#include <stdio.h>
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
    int nz = con->nz;
    con->rank = m;
    con->redundant = calloc((size_t)(m > 0 ? m : 1), 1);
    con->pc = calloc((size_t)(m > 0 ? m : 1), sizeof *con->pc);
    if (!con->pc || !con->redundant) {
        hymo_constraints_free(con);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (constraints)");
    }
    /* the pattern: the joints on the paths from body_a and body_b to the ground */
    unsigned char *code = calloc((size_t)(nz > 0 ? nz : 1), 1);
    con->row_start = calloc((size_t)m + 1, sizeof(int));
    if (!code || !con->row_start) goto nomem;
    for (int pass = 0; pass < 2; ++pass) {
        int nnz = 0;
        for (int i = 0; i < m; ++i) {
            const hymo_prim *p = &con->prims[i];
            for (int k = p->body_a; k != HYMO_GROUND; k = model->bodies[k].parent) code[k] |= 1;
            for (int k = p->body_b; k != HYMO_GROUND; k = model->bodies[k].parent) code[k] |= 2;
            for (int j = 0; j < nz; ++j) {
                if (code[j] && pass) con->col[nnz] = j, con->group[nnz] = code[j];
                nnz += code[j] != 0;
                code[j] = 0;
            }
            con->row_start[i + 1] = nnz;
        }
        if (!pass) {
            con->nnz = nnz;
            con->col = calloc((size_t)(nnz > 0 ? nnz : 1), sizeof(int));
            con->group = calloc((size_t)(nnz > 0 ? nnz : 1), 1);
            if (!con->col || !con->group) goto nomem;
        }
    }
    free(code);
    con->vanish = calloc((size_t)(con->nnz > 0 ? con->nnz : 1), 1);
    con->live_start = calloc((size_t)m + 1, sizeof(int));
    con->live = calloc((size_t)(con->nnz > 0 ? con->nnz : 1), sizeof(int));
    if (!con->vanish || !con->live_start || !con->live) goto nomem_pattern;
    for (int i = 0; i < m; ++i) {
        const hymo_prim *p = &con->prims[i];
        const hymo_cut_type ct = model->cuts[p->cut].type;
        for (int t = con->row_start[i]; t < con->row_start[i + 1]; ++t) {
            if (con->group[t] != 3) continue;
            if (p->type != HYMO_PRIM_PP_GLOBAL || ct == HYMO_CUT_SPHERICAL || ct == HYMO_CUT_REVOLUTE) {
                con->vanish[t] = 1;
            } else if (ct == HYMO_CUT_PLANAR_REVOLUTE) { /* the points differ along z at most */
                int about_z = 1; /* the joint slides, or every rotation from the ground to it is about z */
                const int j = con->col[t];
                if (model->bodies[j].joint_type != HYMO_JOINT_PRISMATIC)
                    for (int k = j; k != HYMO_GROUND && about_z; k = model->bodies[k].parent)
                        about_z = model->bodies[k].joint_type == HYMO_JOINT_PRISMATIC ||
                                  (model->bodies[k].joint_axis[0] == 0.0 && model->bodies[k].joint_axis[1] == 0.0);
                con->vanish[t] = (unsigned char)about_z;
            }
        }
    }
    for (int i = 0, e = 0; i < m; ++i) {
        for (int t = con->row_start[i]; t < con->row_start[i + 1]; ++t)
            if (!con->vanish[t]) con->live[e++] = t;
        con->live_start[i + 1] = e;
    }
    for (int i = 0; i < m; ++i) {
        const hymo_prim *p = &con->prims[i];
        hymo_prim_const *pc = &con->pc[i];
        hymo_kin_vec3_init(p->pa, &pc->pa);
        hymo_kin_vec3_init(p->pb, &pc->pb);
        hymo_kin_vec3_init(p->va, &pc->va);
        hymo_kin_vec3_init(p->vb, &pc->vb);
        if (i > 0 && p->type != HYMO_PRIM_VV) {
            const hymo_prim *q = &con->prims[i - 1];
            pc->same_points = q->type != HYMO_PRIM_VV && q->body_a == p->body_a && q->body_b == p->body_b &&
                              memcmp(q->pa, p->pa, sizeof p->pa) == 0 && memcmp(q->pb, p->pb, sizeof p->pb) == 0;
        }
    }
    return HYMO_OK;
nomem:
    free(code);
nomem_pattern:
    hymo_constraints_free(con);
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (constraints)");
}

void hymo_constraints_free(hymo_constraints *con)
{
    free(con->prims);
    free(con->cut_first);
    free(con->pc);
    free(con->row_start);
    free(con->col);
    free(con->group);
    free(con->vanish);
    free(con->live_start);
    free(con->live);
    free(con->redundant);
    memset(con, 0, sizeof *con);
}

/* Global position of a body point / direction (HYMO_GROUND: the local vector itself). */
static inline void point_of(const hymo_kin *kin, int body, const hymo_kin_vec3 *rl, double r[3])
{
    if (body == HYMO_GROUND) {
        memcpy(r, rl->v, 3 * sizeof(double));
        return;
    }
    const double *o = &kin->o[3 * body];
    hymo_kin_mat3_vec_sparse(&kin->R[9 * body], rl, r);
    for (int k = 0; k < 3; ++k) r[k] += o[k];
}

static inline void vector_of(const hymo_kin *kin, int body, const hymo_kin_vec3 *vl, double v[3])
{
    if (body == HYMO_GROUND)
        memcpy(v, vl->v, 3 * sizeof(double));
    else
        hymo_kin_mat3_vec_sparse(&kin->R[9 * body], vl, v);
}

/* Velocity v and velocity-product acceleration a0 of the global point r of body. */
static inline void point_rates(const hymo_kin *kin, int body, const double r[3], double v[3], double a0[3])
{
    if (body == HYMO_GROUND) {
        v[0] = v[1] = v[2] = a0[0] = a0[1] = a0[2] = 0.0;
        return;
    }
    const double *Z = &kin->Z[6 * body], *A0 = &kin->A0[6 * body];
    double t1[3], t2[3];
    hymo_cross(Z + 3, r, v);
    for (int k = 0; k < 3; ++k) v[k] += Z[k];
    hymo_cross(A0 + 3, r, t1);
    hymo_cross(Z + 3, v, t2);
    for (int k = 0; k < 3; ++k) a0[k] = A0[k] + t1[k] + t2[k];
}

/* Rate and velocity-product acceleration of a body-fixed global vector v. */
static inline void vector_rates(const hymo_kin *kin, int body, const double v[3], double vd[3], double vdd0[3])
{
    if (body == HYMO_GROUND) {
        vd[0] = vd[1] = vd[2] = vdd0[0] = vdd0[1] = vdd0[2] = 0.0;
        return;
    }
    const double *w = &kin->Z[6 * body + 3], *wd = &kin->A0[6 * body + 3];
    double t[3];
    hymo_cross(w, v, vd);
    hymo_cross(wd, v, vdd0);
    hymo_cross(w, vd, t);
    for (int k = 0; k < 3; ++k) vdd0[k] += t[k];
}

/* Row i of Phi_z (its pattern's values): with b_j = [b_l; b_a] (dr/dz_j =
 * b_l + b_a x r, dv/dz_j = b_a x v), d phi / d z_j = b_j . F1 for the
 * joints moving body_a only, b_j . F2 for body_b only, b_j . (F1 + F2) for
 * both.  live: only the entries not flagged vanish (con->live). */
static inline void jacobian_row(const hymo_constraints *con, const hymo_kin *kin, int i, const double F1[6],
                                const double F2[6], double *phi_z, const int live)
{
    if (live) {
        double F3[6];
        for (int k = 0; k < 6; ++k) F3[k] = F1[k] + F2[k];
        for (int e = con->live_start[i]; e < con->live_start[i + 1]; ++e) {
            const int t = con->live[e], g = con->group[t];
            const double *b = &kin->b[6 * con->col[t]], *f = g == 1 ? F1 : g == 2 ? F2 : F3;
            phi_z[t] = (b[0] * f[0] + b[1] * f[1] + b[2] * f[2]) + (b[3] * f[3] + b[4] * f[4] + b[5] * f[5]);
        }
        return;
    }
    double F3[6]; /* F1 + F2, formed at the row's first joint of group 3 */
    int have3 = 0;
    for (int t = con->row_start[i]; t < con->row_start[i + 1]; ++t) {
        const int g = con->group[t];
        const double *b = &kin->b[6 * con->col[t]], *f = g == 1 ? F1 : F2;
        if (g == 3) {
            if (!have3)
                for (int k = 0; k < 6; ++k) F3[k] = F1[k] + F2[k];
            have3 = 1;
            f = F3;
        }
        phi_z[t] = (b[0] * f[0] + b[1] * f[1] + b[2] * f[2]) + (b[3] * f[3] + b[4] * f[4] + b[5] * f[5]);
    }
}

static inline void eval_rows(const hymo_constraints *con, const hymo_kin *kin, double *phi, double *phi_z,
                             double *gamma, const int live)
{
    double ra[3] = {0, 0, 0}, rb[3] = {0, 0, 0}, d[3] = {0, 0, 0};
    double pva[3] = {0, 0, 0}, pvb[3] = {0, 0, 0}, dd0[3] = {0, 0, 0};
    double F1[6], F2[6];
    for (int i = 0; i < con->m; ++i) {
        const hymo_prim *p = &con->prims[i];
        const hymo_prim_const *pc = &con->pc[i];
        double *row = phi_z;
        if (p->type == HYMO_PRIM_VV) {
            double va[3], vb[3];
            vector_of(kin, p->body_a, &pc->va, va);
            vector_of(kin, p->body_b, &pc->vb, vb);
            phi[i] = hymo_dot(va, vb);
            if (row) { /* (w x va).vb = w.(va x vb); va.(w x vb) = -w.(va x vb) */
                double c[3];
                hymo_cross(va, vb, c);
                for (int k = 0; k < 3; ++k) {
                    F1[k] = F2[k] = 0.0;
                    F1[3 + k] = c[k];
                    F2[3 + k] = -c[k];
                }
                jacobian_row(con, kin, i, F1, F2, row, live);
            }
            if (gamma) {
                double vad[3], vadd[3], vbd[3], vbdd[3];
                vector_rates(kin, p->body_a, va, vad, vadd);
                vector_rates(kin, p->body_b, vb, vbd, vbdd);
                gamma[i] = hymo_dot(vadd, vb) + 2.0 * hymo_dot(vad, vbd) + hymo_dot(va, vbdd);
            }
            continue;
        }
        if (!pc->same_points) { /* else ra, rb, d (pva, pvb, dd0) are those of row i - 1 */
            point_of(kin, p->body_a, &pc->pa, ra);
            point_of(kin, p->body_b, &pc->pb, rb);
            for (int k = 0; k < 3; ++k) d[k] = ra[k] - rb[k];
            if (gamma) {
                double aa[3], ab[3];
                point_rates(kin, p->body_a, ra, pva, aa);
                point_rates(kin, p->body_b, rb, pvb, ab);
                for (int k = 0; k < 3; ++k) dd0[k] = aa[k] - ab[k];
            }
        }
        const int moving_dir = p->type == HYMO_PRIM_PP_BODYDIR;
        double n[3];
        if (moving_dir)
            vector_of(kin, p->body_b, &pc->va, n);
        else
            memcpy(n, p->vb, sizeof n);
        phi[i] = hymo_dot(d, n);
        if (row) {
            /* body_a: (b_l + b_a x ra).n = b_j.[n; ra x n]; body_b: -(b_l + b_a x rb).n,
             * plus d.(b_a x n) = b_a.(n x d) when n turns with body_b, which
             * sums to -b_j.[n; ra x n] */
            double ran[3];
            hymo_cross(ra, n, ran);
            for (int k = 0; k < 3; ++k) {
                F1[k] = n[k];
                F1[3 + k] = ran[k];
                F2[k] = -n[k];
            }
            if (moving_dir) {
                for (int k = 0; k < 3; ++k) F2[3 + k] = -ran[k];
            } else {
                double rbn[3];
                hymo_cross(rb, n, rbn);
                for (int k = 0; k < 3; ++k) F2[3 + k] = -rbn[k];
            }
            jacobian_row(con, kin, i, F1, F2, row, live);
        }
        if (gamma) {
            double g = hymo_dot(dd0, n);
            if (moving_dir) {
                double dd[3], nd[3], ndd[3];
                for (int k = 0; k < 3; ++k) dd[k] = pva[k] - pvb[k];
                vector_rates(kin, p->body_b, n, nd, ndd);
                g += 2.0 * hymo_dot(dd, nd) + hymo_dot(d, ndd);
            }
            gamma[i] = g;
        }
    }
}

void hymo_constraints_eval(const hymo_constraints *con, const hymo_kin *kin, double *phi,
                           double *phi_z, double *gamma)
{
    eval_rows(con, kin, phi, phi_z, gamma, 0);
}

void hymo_constraints_eval_live(const hymo_constraints *con, const hymo_kin *kin, double *phi, double *phi_z)
{
    eval_rows(con, kin, phi, phi_z, NULL, 1);
}

void hymo_constraints_twist_from(hymo_constraints *con, const hymo_model *model, const hymo_kin *kin)
{
    for (int c = 0; c < model->n_cuts; ++c) {
        const hymo_cut_joint *cj = &model->cuts[c];
        if (cj->type != HYMO_CUT_TRANSLATIONAL) continue;
        const int r = con->cut_first[c] + 4; /* the twist row (build) */
        hymo_prim *p = &con->prims[r];
        double wa[3], w[3], e[3], wp[3], v[3];
        vector_of(kin, p->body_a, &con->pc[r].va, wa); /* a1, global */
        if (p->body_b == HYMO_GROUND) { /* into b's frame: R_b^T wa */
            memcpy(w, wa, sizeof w);
        } else {
            const double *R = &kin->R[9 * p->body_b];
            for (int i = 0; i < 3; ++i) w[i] = R[0 * 3 + i] * wa[0] + R[1 * 3 + i] * wa[1] + R[2 * 3 + i] * wa[2];
        }
        memcpy(e, cj->axis_b, sizeof e);
        const double we = hymo_dot(w, e);
        for (int i = 0; i < 3; ++i) wp[i] = w[i] - we * e[i];
        const double n = sqrt(hymo_dot(wp, wp));
        if (!(n > 1e-6)) continue;
        for (int i = 0; i < 3; ++i) wp[i] /= n;
        hymo_cross(e, wp, v);
        memcpy(p->vb, v, sizeof v);
        hymo_kin_vec3_init(p->vb, &con->pc[r].vb);
    }
}

void hymo_constraints_row_name(const hymo_constraints *con, const hymo_model *model, int r, char *buf, size_t len)
{
    const int c = con->prims[r].cut;
    snprintf(buf, len, "%s[%d]", model->cuts[c].name, r - con->cut_first[c]);
}

void hymo_constraints_cut_norms(const hymo_constraints *con, int ncut, const double *v, double *out)
{
    for (int c = 0; c < ncut; ++c) {
        double s = 0.0;
        for (int i = con->cut_first[c]; i < con->cut_first[c + 1]; ++i) s += v[i] * v[i];
        out[c] = sqrt(s);
    }
}
