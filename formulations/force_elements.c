/* Mechanical force elements; see force_elements.h and docs/model-format.md
 * ("Force elements") for the equations. */
#include "force_elements.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int n_spring_dampers(const hymo_model *model)
{
    int k = 0;
    for (int e = 0; e < model->n_force_elements; ++e) k += model->force_elements[e].type == HYMO_FE_SPRING_DAMPER;
    return k;
}

/* per spring-damper: A^T n1, A^T n2, h = d2l/dz2 zd, and e_i, w_i per joint */
int hymo_fe_max_rows(const hymo_model *model)
{
    return model->n_force_elements + n_spring_dampers(model) * (3 + 2 * model->n_bodies);
}

hymo_status hymo_fe_alloc(hymo_fe *fe, const hymo_model *model, hymo_error *err)
{
    memset(fe, 0, sizeof *fe);
    const int nz = model->n_bodies;
    fe->cap_rows = hymo_fe_max_rows(model);
    fe->cap_terms = n_spring_dampers(model) * (3 + 2 * nz);
    fe->talpha = calloc((size_t)(fe->cap_terms > 0 ? fe->cap_terms : 1), sizeof(double));
    fe->tp = calloc((size_t)(fe->cap_terms > 0 ? fe->cap_terms : 1), sizeof(int));
    fe->tq = calloc((size_t)(fe->cap_terms > 0 ? fe->cap_terms : 1), sizeof(int));
    fe->scratch = calloc((size_t)(5 * nz > 0 ? 5 * nz : 1), sizeof(double));
    const int n = model->n_force_elements;
    fe->n = n;
    fe->nsw = model->n_force_switches;
    const size_t c = (size_t)(n > 0 ? n : 1);
    fe->l = calloc(c, sizeof(double));
    fe->ld = calloc(c, sizeof(double));
    fe->F = calloc(c, sizeof(double));
    fe->dF_dl = calloc(c, sizeof(double));
    fe->dF_dld = calloc(c, sizeof(double));
    fe->ends = calloc(6 * c, sizeof(double));
    fe->dir = calloc(3 * c, sizeof(double));
    if (!fe->l || !fe->ld || !fe->F || !fe->dF_dl || !fe->dF_dld || !fe->ends || !fe->dir || !fe->talpha ||
        !fe->tp || !fe->tq || !fe->scratch) {
        hymo_fe_free(fe);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (force elements)");
    }
    return HYMO_OK;
}

void hymo_fe_free(hymo_fe *fe)
{
    free(fe->l);
    free(fe->ld);
    free(fe->F);
    free(fe->dF_dl);
    free(fe->dF_dld);
    free(fe->ends);
    free(fe->dir);
    free(fe->talpha);
    free(fe->tp);
    free(fe->tq);
    free(fe->scratch);
    memset(fe, 0, sizeof *fe);
}

/* A generalized force tau on joint j: the wrench tau [u; 0] (prismatic) or
 * tau [0; u] (revolute) on body j and its opposite on the parent, so that
 * Q'_j = b_j^T (subtree sum) = tau and every other Q'_i is unchanged. */
static void add_joint_force(hymo_kin *kin, int j, double tau)
{
    const double *u = &kin->u[3 * j];
    const int off = kin->bd[j].revolute ? 3 : 0, p = kin->bd[j].parent;
    for (int k = 0; k < 3; ++k) {
        kin->Qbar[6 * j + off + k] += tau * u[k];
        if (p != HYMO_GROUND) kin->Qbar[6 * p + off + k] -= tau * u[k];
    }
}

/* Limit branch: the switching state's if set, else the geometry's. */
static int limit_active(const hymo_fe *fe, int sw_index, double g)
{
    return fe->sw ? fe->sw[sw_index] : g >= 0.0;
}

static double signal_value(const hymo_fe *fe, const hymo_model *model, int s, double t, double dt)
{
    if (s < 0) return 1.0;
    return hymo_signal_eval_snapped(&model->signals[s], t, fe->side ? fe->side : t > 0.0 ? -1 : +1, dt);
}

int hymo_fe_signals_jump(const hymo_model *model, double t, double dt)
{
    for (int e = 0; e < model->n_force_elements; ++e) {
        const hymo_force_element *el = &model->force_elements[e];
        if (el->type != HYMO_FE_EXTERNAL) continue;
        for (int k = 0; k < 6; ++k) {
            const int s = k < 3 ? el->force_signal[k] : el->torque_signal[k - 3];
            if (s >= 0 && hymo_signal_eval_snapped(&model->signals[s], t, -1, dt) !=
                              hymo_signal_eval_snapped(&model->signals[s], t, +1, dt))
                return 1;
        }
    }
    return 0;
}

double hymo_fe_next_jump(const hymo_model *model, double t, double t_end, double eps)
{
    for (int e = 0; e < model->n_force_elements; ++e) {
        const hymo_force_element *el = &model->force_elements[e];
        if (el->type != HYMO_FE_EXTERNAL) continue;
        for (int k = 0; k < 6; ++k) {
            const int s = k < 3 ? el->force_signal[k] : el->torque_signal[k - 3];
            const double b = s >= 0 ? hymo_signal_next_jump(&model->signals[s], t, t_end, eps) : INFINITY;
            if (b < t_end) t_end = b;
        }
    }
    return t_end;
}

hymo_status hymo_fe_apply(hymo_fe *fe, const hymo_model *model, hymo_kin *kin, double t, double dt,
                          hymo_error *err)
{
    fe->power = 0.0;
    fe->t_eval = t, fe->dt_eval = dt;
    for (int e = 0; e < fe->n; ++e) {
        const hymo_force_element *el = &model->force_elements[e];
        double F = 0.0, dl = 0.0, dld = 0.0;
        switch (el->type) {
        case HYMO_FE_SPRING_DAMPER: {
            const hymo_point *pa = &model->points[el->point_a], *pb = &model->points[el->point_b];
            double *ra = &fe->ends[6 * e], *rb = ra + 3, va[3], vb[3], *d = &fe->dir[3 * e];
            hymo_kin_body_point(kin, pa->body, pa->r, ra);
            hymo_kin_body_point(kin, pb->body, pb->r, rb);
            hymo_kin_point_velocity(kin, pa->body, ra, va);
            hymo_kin_point_velocity(kin, pb->body, rb, vb);
            for (int k = 0; k < 3; ++k) d[k] = rb[k] - ra[k];
            const double l = sqrt(hymo_dot(d, d));
            if (!(l > 0.0))
                return hymo_error_set(err, HYMO_ERR_NUMERIC,
                                      "t = %.6g s: spring-damper %s: its end points coincide (no line of action)",
                                      t, el->name);
            for (int k = 0; k < 3; ++k) d[k] /= l;
            const double ld = (vb[0] - va[0]) * d[0] + (vb[1] - va[1]) * d[1] + (vb[2] - va[2]) * d[2];
            const double T = el->stiffness * (l - el->free_length) + el->damping * ld + el->preload;
            fe->l[e] = l, fe->ld[e] = ld;
            F = -T, dl = -el->stiffness, dld = -el->damping;
            double fb[3], fa[3]; /* tension pulls b towards a and a towards b */
            for (int k = 0; k < 3; ++k) fb[k] = -T * d[k], fa[k] = T * d[k];
            hymo_kin_add_point_force(kin, pb->body, rb, fb);
            hymo_kin_add_point_force(kin, pa->body, ra, fa);
            fe->power += F * ld;
            break;
        }
        case HYMO_FE_EXTERNAL: {
            const hymo_point *pa = &model->points[el->point_a];
            double f[3], n[3], r[3], v[3];
            for (int k = 0; k < 3; ++k) {
                f[k] = el->force[k] * signal_value(fe, model, el->force_signal[k], t, dt);
                n[k] = el->torque[k] * signal_value(fe, model, el->torque_signal[k], t, dt);
            }
            if (el->body_frame) {
                hymo_kin_body_vector(kin, pa->body, f, f);
                hymo_kin_body_vector(kin, pa->body, n, n);
            }
            hymo_kin_body_point(kin, pa->body, pa->r, r);
            memcpy(&fe->ends[6 * e], r, sizeof r);
            hymo_kin_add_point_force(kin, pa->body, r, f);
            if (pa->body != HYMO_GROUND) {
                double *Qb = &kin->Qbar[6 * pa->body];
                for (int k = 0; k < 3; ++k) Qb[3 + k] += n[k];
                hymo_kin_point_velocity(kin, pa->body, r, v);
                fe->power += hymo_dot(f, v) + hymo_dot(n, &kin->Z[6 * pa->body + 3]);
            }
            fe->l[e] = fe->ld[e] = 0.0;
            break;
        }
        default: { /* joint elements: l = z_j */
            const int j = el->joint;
            const double z = kin->zlast[j], zd = kin->zdlast[j];
            fe->l[e] = z, fe->ld[e] = zd;
            if (el->type == HYMO_FE_JOINT_SPRING) {
                F = -el->stiffness * (z - el->free_length) - el->damping * zd + el->preload;
                dl = -el->stiffness, dld = -el->damping;
            } else if (el->type == HYMO_FE_JOINT_FRICTION) {
                const double th = tanh(zd / el->friction_velocity);
                F = -el->coulomb * th - el->viscous * zd;
                dld = -el->coulomb * (1.0 - th * th) / el->friction_velocity - el->viscous;
            } else { /* HYMO_FE_JOINT_LIMIT: end dampers as the cylinders' */
                if (el->has_lower && limit_active(fe, el->sw_lower, el->lower - z)) {
                    F = el->stiffness * (el->lower - z) - el->damping * zd;
                    dl = -el->stiffness, dld = -el->damping;
                } else if (el->has_upper && limit_active(fe, el->sw_upper, z - el->upper)) {
                    F = -el->stiffness * (z - el->upper) - el->damping * zd;
                    dl = -el->stiffness, dld = -el->damping;
                }
            }
            add_joint_force(kin, j, F);
            fe->power += F * zd;
            break;
        }
        }
        fe->F[e] = F, fe->dF_dl[e] = dl, fe->dF_dld[e] = dld;
    }
    return HYMO_OK;
}

/* w[k] += s J_k . (e x u_i) for k >= i on the path of body B (point r),
 * halved at k = i, for the revolute joint i on that path. */
static void add_w(const hymo_kin *kin, int B, const double r[3], const double e[3], int i, double s, double *w)
{
    const int nz = kin->nb;
    if (!hymo_kin_on_path(kin, B, i)) return;
    double exu[3];
    hymo_cross(e, &kin->u[3 * i], exu);
    for (int k = i; k < nz; ++k) {
        if (!hymo_kin_on_path(kin, B, k)) continue;
        double J[3];
        hymo_kin_point_jacobian(kin, B, k, r, J);
        w[k] += (k == i ? 0.5 : 1.0) * s * hymo_dot(J, exu);
    }
}

static void add_term(hymo_fe *fe, double alpha, int p, int q)
{
    fe->talpha[fe->nterm] = alpha, fe->tp[fe->nterm] = p, fe->tq[fe->nterm] = q;
    fe->nterm++;
}

int hymo_fe_gradients(hymo_fe *fe, const hymo_model *model, const hymo_kin *kin, double *gz)
{
    const int nz = kin->nb;
    fe->rows = fe->n;
    fe->nterm = 0;
    for (int e = 0; e < fe->n; ++e) {
        const hymo_force_element *el = &model->force_elements[e];
        double *g = &gz[(size_t)e * nz];
        memset(g, 0, (size_t)nz * sizeof(double));
        if (el->type == HYMO_FE_SPRING_DAMPER) {
            const int ba = model->points[el->point_a].body, bb = model->points[el->point_b].body;
            const double *ra = &fe->ends[6 * e], *rb = ra + 3, *d = &fe->dir[3 * e];
            /* A = dd/dz (3 x nz, column k in scratch), g = A^T e */
            double *A = fe->scratch;
            for (int j = 0; j < nz; ++j) {
                double ja[3], jb[3];
                hymo_kin_point_jacobian(kin, ba, j, ra, ja);
                hymo_kin_point_jacobian(kin, bb, j, rb, jb);
                for (int k = 0; k < 3; ++k) A[3 * j + k] = jb[k] - ja[k];
                g[j] = A[3 * j] * d[0] + A[3 * j + 1] * d[1] + A[3 * j + 2] * d[2];
            }
            const double F = fe->F[e], Fv = fe->dF_dld[e], l = fe->l[e];
            if (F == 0.0 && Fv == 0.0) continue;
            /* unit normals n1, n2 to e */
            double n1[3] = {0, 0, 0}, n2[3];
            int m = fabs(d[0]) <= fabs(d[1]) ? (fabs(d[0]) <= fabs(d[2]) ? 0 : 2) : (fabs(d[1]) <= fabs(d[2]) ? 1 : 2);
            n1[m] = 1.0;
            const double dn = hymo_dot(n1, d);
            for (int k = 0; k < 3; ++k) n1[k] -= dn * d[k];
            const double nn = sqrt(hymo_dot(n1, n1));
            for (int k = 0; k < 3; ++k) n1[k] /= nn;
            hymo_cross(d, n1, n2);
            const double *zd = kin->zdlast;
            const int row_h = fe->rows;
            double *h = &gz[(size_t)row_h * nz];
            memset(h, 0, (size_t)nz * sizeof(double));
            fe->rows++;
            /* (1/l) sum_i (A^T n_i)(A^T n_i)^T */
            for (int c = 0; c < 2; ++c) {
                const double *n = c ? n2 : n1;
                double *a = &gz[(size_t)fe->rows * nz], az = 0.0;
                for (int j = 0; j < nz; ++j) {
                    a[j] = A[3 * j] * n[0] + A[3 * j + 1] * n[1] + A[3 * j + 2] * n[2];
                    az += a[j] * zd[j];
                }
                for (int j = 0; j < nz; ++j) h[j] += a[j] * az / l;
                add_term(fe, -F / l, fe->rows, fe->rows);
                fe->rows++;
            }
            /* sum_i (e_i w_i^T + w_i e_i^T) over the revolute joints */
            for (int i = 0; i < nz; ++i) {
                if (!kin->bd[i].revolute) continue;
                const int on_a = hymo_kin_on_path(kin, ba, i), on_b = hymo_kin_on_path(kin, bb, i);
                if (!on_a && !on_b) continue;
                double *ei = &gz[(size_t)fe->rows * nz], *w = ei + nz;
                memset(ei, 0, 2 * (size_t)nz * sizeof(double));
                ei[i] = 1.0;
                add_w(kin, bb, rb, d, i, +1.0, w);
                add_w(kin, ba, ra, d, i, -1.0, w);
                double wz = 0.0;
                for (int k = 0; k < nz; ++k) wz += w[k] * zd[k];
                h[i] += wz;
                for (int k = 0; k < nz; ++k) h[k] += w[k] * zd[i];
                add_term(fe, -F, fe->rows, fe->rows + 1);
                add_term(fe, -F, fe->rows + 1, fe->rows);
                fe->rows += 2;
            }
            /* -(dF/dldot) g (d2l/dz2 zd)^T */
            add_term(fe, -Fv, e, row_h);
        } else if (el->type != HYMO_FE_EXTERNAL) {
            g[el->joint] = 1.0;
        }
    }
    return fe->rows;
}

int hymo_fe_joint(const hymo_model *model, int e)
{
    const hymo_force_element *el = &model->force_elements[e];
    return el->type == HYMO_FE_SPRING_DAMPER ? -2 : el->type == HYMO_FE_EXTERNAL ? -1 : el->joint;
}

int hymo_fe_joints(const hymo_model *model, const hymo_kin *kin, int e, int *out)
{
    const hymo_force_element *el = &model->force_elements[e];
    if (el->type == HYMO_FE_SPRING_DAMPER)
        return hymo_kin_path_union(kin, model->points[el->point_a].body, model->points[el->point_b].body, out);
    const int j = hymo_fe_joint(model, e);
    return j >= 0 ? (out[0] = j, 1) : 0;
}

int hymo_fe_gradients_joint(hymo_fe *fe, const int *joint, double *g)
{
    fe->rows = fe->n;
    fe->nterm = 0;
    for (int e = 0; e < fe->n; ++e) g[e] = joint[e] < 0 ? 0.0 : 1.0;
    return fe->rows;
}

void hymo_fe_switching(const hymo_fe *fe, const hymo_model *model, const hymo_kin *kin, double *g)
{
    for (int e = 0; e < fe->n; ++e) {
        const hymo_force_element *el = &model->force_elements[e];
        if (el->type != HYMO_FE_JOINT_LIMIT) continue;
        const double z = kin->zlast[el->joint];
        if (el->has_lower) g[el->sw_lower] = el->lower - z;
        if (el->has_upper) g[el->sw_upper] = z - el->upper;
    }
    for (int s = 0; s < model->n_signals; ++s) { /* kinks of the signals */
        const hymo_signal *sig = &model->signals[s];
        if (!sig->shape || sig->shape->n_kinks <= 0) continue;
        const double x = hymo_signal_eval_unlimited(sig, fe->t_eval, fe->t_eval > 0.0 ? -1 : +1, fe->dt_eval);
        for (int j = 0; j < sig->shape->n_kinks; ++j) g[sig->shape->sw_first + j] = x - sig->shape->kink_level[j];
    }
}
