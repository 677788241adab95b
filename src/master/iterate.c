/* Iterative coupling of the co-simulation master (hymo/master.h): a
 * communication step retaken from a checkpoint until the coupling
 * variables converge, with Aitken or IQN-ILS acceleration. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "master_internal.h"

/* Halvings of a retake's change after a failed retake. */
#define BACKTRACK 8
/* IQN-ILS drops a difference column whose part orthogonal to the newer
 * ones is below FILTER of its norm (QR filtering: nearly dependent columns
 * from distant iterates spoil the least-squares Jacobian). */
#define FILTER 1e-3

struct hymo_master_iteration {
    hymo_iterate_options opt;
    hymo_master_checkpoint *ckpt;
    int nc;              /* coupling variables */
    int *c_sub, *c_out;  /* the output ... */
    int *r_sub, *r_in;   /* ... and its first reader (stage, then index) */
    double *S, *w;       /* scale; weight 1 / (atol + rtol S) */
    double *x, *y, *u;   /* estimate, outputs, inputs' values at t + H */
    double *rs_prev;     /* scaled residual of the previous iterate */
    double *xg;          /* the estimate of the last retake that succeeded */
    double *ybuf;        /* every subsystem's outputs at t + H */
    int *yoff;
    double omega;        /* final Aitken factor of the last step */
    /* IQN-ILS: scaled residuals and outputs of this step's iterates
     * (columns of nc), QR scratch */
    double *Rh, *Yh, *Q, *Rq, *a;
    int *col;
};

static const char *const accel_names[] = {
    [HYMO_ACCEL_NONE] = "none", [HYMO_ACCEL_AITKEN] = "aitken", [HYMO_ACCEL_IQN_ILS] = "iqn-ils"};

const char *hymo_iterate_accel_name(hymo_iterate_accel a)
{
    return (unsigned)a < sizeof accel_names / sizeof *accel_names ? accel_names[a] : "?";
}

int hymo_iterate_accel_parse(const char *s, hymo_iterate_accel *out)
{
    for (unsigned i = 0; s && i < sizeof accel_names / sizeof *accel_names; ++i)
        if (strcmp(s, accel_names[i]) == 0) {
            *out = (hymo_iterate_accel)i;
            return 0;
        }
    return -1;
}

void hymo_master_iteration_free(hymo_master_iteration *it)
{
    if (!it) return;
    hymo_master_checkpoint_free(it->ckpt);
    free(it->c_sub), free(it->c_out), free(it->r_sub), free(it->r_in);
    free(it->S), free(it->w), free(it->x), free(it->y), free(it->u), free(it->rs_prev), free(it->xg);
    free(it->ybuf), free(it->yoff);
    free(it->Rh), free(it->Yh), free(it->Q), free(it->Rq), free(it->a), free(it->col);
    free(it);
}

int hymo_master_iteration_size(const hymo_master_iteration *it) { return it->nc; }

hymo_status hymo_master_iteration_create(const hymo_master *m, const hymo_iterate_options *opt,
                                         hymo_master_iteration **out, hymo_error *err)
{
    *out = NULL;
    if (opt->max_iterations < 1)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: iterations %d must be >= 1", opt->max_iterations);
    if (!(opt->rtol > 0.0) || !isfinite(opt->rtol) || !(opt->atol >= 0.0) || !isfinite(opt->atol))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "master: iteration tolerance rtol = %g, atol = %g (rtol > 0, atol >= 0)", opt->rtol,
                              opt->atol);
    if (!strcmp(hymo_iterate_accel_name(opt->accel), "?"))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: unknown iteration acceleration %d", (int)opt->accel);
    hymo_master_iteration *it = calloc(1, sizeof *it);
    if (!it) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (master iteration)");
    it->opt = *opt;
    it->omega = 0.5;
    hymo_status st = hymo_master_checkpoint_create(m, &it->ckpt, err);
    if (st != HYMO_OK) {
        hymo_master_iteration_free(it);
        return st;
    }
    /* subsystems by (stage, index) */
    int *ord = calloc((size_t)m->n, sizeof *ord), n_in = 0, n_out = 0;
    for (int k = 0; ord && k < m->n; ++k) {
        int j = k;
        for (; j > 0 && m->nodes[ord[j - 1]].stage > m->nodes[k].stage; --j) ord[j] = ord[j - 1];
        ord[j] = k;
    }
    for (int k = 0; k < m->n; ++k) n_in += m->nodes[k].sub->n_inputs, n_out += m->nodes[k].sub->n_outputs;
    const size_t ni = (size_t)(n_in > 0 ? n_in : 1), cols = (size_t)opt->max_iterations + 1;
    int ok = ord && (it->c_sub = calloc(ni, sizeof(int))) && (it->c_out = calloc(ni, sizeof(int))) &&
             (it->r_sub = calloc(ni, sizeof(int))) && (it->r_in = calloc(ni, sizeof(int))) &&
             (it->yoff = calloc((size_t)m->n + 1, sizeof(int))) &&
             (it->ybuf = calloc((size_t)(n_out > 0 ? n_out : 1), sizeof(double)));
    for (int q = 0; ok && q < m->n; ++q) {
        const hymo_cosim_node *nd = &m->nodes[ord[q]];
        for (int i = 0; i < nd->sub->n_inputs; ++i) {
            if (nd->at_start[i]) continue;
            int c = 0;
            while (c < it->nc && !(it->c_sub[c] == nd->src_sub[i] && it->c_out[c] == nd->src_out[i])) ++c;
            if (c < it->nc) continue;
            it->c_sub[c] = nd->src_sub[i], it->c_out[c] = nd->src_out[i];
            it->r_sub[c] = ord[q], it->r_in[c] = i;
            it->nc++;
        }
    }
    free(ord);
    const size_t nc = (size_t)(it->nc > 0 ? it->nc : 1);
    ok = ok && (it->S = calloc(nc, sizeof(double))) && (it->w = calloc(nc, sizeof(double))) &&
         (it->x = calloc(nc, sizeof(double))) && (it->y = calloc(nc, sizeof(double))) &&
         (it->u = calloc(nc, sizeof(double))) && (it->rs_prev = calloc(nc, sizeof(double))) &&
         (it->xg = calloc(nc, sizeof(double))) &&
         (it->Rh = calloc(nc * cols, sizeof(double))) && (it->Yh = calloc(nc * cols, sizeof(double))) &&
         (it->Q = calloc(nc * cols, sizeof(double))) && (it->Rq = calloc(cols * cols, sizeof(double))) &&
         (it->a = calloc(cols, sizeof(double))) && (it->col = calloc(cols, sizeof(int)));
    if (!ok) {
        hymo_master_iteration_free(it);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (master iteration)");
    }
    for (int k = 0; k < m->n; ++k) it->yoff[k + 1] = it->yoff[k] + m->nodes[k].sub->n_outputs;
    for (int c = 0; c < it->nc; ++c) {
        const hymo_cosim_node *src = &m->nodes[it->c_sub[c]];
        it->S[c] = src->n_hist > 0 ? fabs(src->hist_y[it->c_out[c]]) : 0.0;
    }
    *out = it;
    return HYMO_OK;
}

/* y: the coupling outputs at t + H; u: their first readers' inputs at t + H;
 * returns the weighted residual max |y - u| w. */
static double gather(const hymo_master *m, hymo_master_iteration *it, double H)
{
    double res = 0.0;
    for (int c = 0; c < it->nc; ++c) {
        it->y[c] = m->nodes[it->c_sub[c]].hist_y[it->c_out[c]];
        it->u[c] = hymo_poly_eval(m->nodes[it->r_sub[c]].coef + HYMO_POLY_TERMS * it->r_in[c], H);
        const double e = fabs(it->y[c] - it->u[c]) * it->w[c];
        if (!(e <= res)) res = e; /* NaN propagates */
    }
    return res;
}

/* A retake's publication: the stage's outputs replace its point at t + H. */
static void replace_point(hymo_cosim_node *nd, double t1)
{
    (void)t1;
    nd->sub->ops->get_outputs(nd->sub, nd->hist_y);
}

/* A retake from the restored checkpoint with the outputs at t + H set to
 * it->x (the others to ybuf): each stage's inputs interpolate through
 * them, and a stage's outputs replace its point for the later stages. */
static hymo_status sweep(hymo_master *m, hymo_master_iteration *it, double t, double H, hymo_error *err)
{
    const double t1 = t + H;
    for (int k = 0; k < m->n; ++k) {
        hymo_cosim_node *nd = &m->nodes[k];
        const int no = nd->sub->n_outputs;
        memmove(nd->hist_y + no, nd->hist_y, (size_t)(HYMO_COSIM_HIST - 1) * (size_t)no * sizeof(double));
        memmove(nd->hist_t + 1, nd->hist_t, (HYMO_COSIM_HIST - 1) * sizeof(double));
        memcpy(nd->hist_y, it->ybuf + it->yoff[k], (size_t)no * sizeof(double));
        nd->hist_t[0] = t1;
        if (nd->n_hist < HYMO_COSIM_HIST) nd->n_hist++;
        nd->advanced = 1;
    }
    for (int c = 0; c < it->nc; ++c) m->nodes[it->c_sub[c]].hist_y[it->c_out[c]] = it->x[c];
    return hymo_master_run_stages(m, t, H, replace_point, err);
}

/* IQN-ILS estimate from iterates 0..k of this step (columns of Rh, Yh):
 * x = y_k + W a, a = argmin |V a + r_k|, by modified Gram-Schmidt on the
 * newest columns first (nearly dependent ones dropped, FILTER; at most
 * nc). */
static void iqn_ils(hymo_master_iteration *it, int k)
{
    const int nc = it->nc;
    const double *rk = it->Rh + (size_t)k * nc, *yk = it->Yh + (size_t)k * nc;
    int nq = 0;
    for (int i = k - 1; i >= 0 && nq < nc; --i) {
        double *q = it->Q + (size_t)nq * nc, norm0 = 0.0;
        for (int c = 0; c < nc; ++c) {
            q[c] = rk[c] - it->Rh[(size_t)i * nc + c];
            norm0 += q[c] * q[c];
        }
        double *rcol = it->Rq + (size_t)nq * (size_t)(it->opt.max_iterations + 1);
        for (int j = 0; j < nq; ++j) {
            const double *qj = it->Q + (size_t)j * nc;
            double d = 0.0;
            for (int c = 0; c < nc; ++c) d += qj[c] * q[c];
            for (int c = 0; c < nc; ++c) q[c] -= d * qj[c];
            rcol[j] = d;
        }
        double norm = 0.0;
        for (int c = 0; c < nc; ++c) norm += q[c] * q[c];
        if (!(norm > FILTER * FILTER * norm0) || !(norm0 > 0.0)) continue;
        norm = sqrt(norm);
        for (int c = 0; c < nc; ++c) q[c] /= norm;
        rcol[nq] = norm;
        it->col[nq++] = i;
    }
    /* R a = -Q^T r_k (R upper triangular: column j in Rq[j][0..j]) */
    const size_t ld = (size_t)(it->opt.max_iterations + 1);
    for (int j = 0; j < nq; ++j) {
        double d = 0.0;
        for (int c = 0; c < nc; ++c) d -= it->Q[(size_t)j * nc + c] * rk[c];
        it->a[j] = d;
    }
    for (int j = nq - 1; j >= 0; --j) {
        double s = it->a[j];
        for (int l = j + 1; l < nq; ++l) s -= it->Rq[(size_t)l * ld + j] * it->a[l];
        it->a[j] = s / it->Rq[(size_t)j * ld + j];
    }
    for (int c = 0; c < nc; ++c) {
        double s = yk[c];
        for (int j = 0; j < nq; ++j) s += it->a[j] * (yk[c] - it->Yh[(size_t)it->col[j] * nc + c]);
        it->x[c] = s;
    }
}

hymo_status hymo_master_step_iterated(hymo_master *m, hymo_master_iteration *it, hymo_iterate_stats *stats,
                                      hymo_error *err)
{
    const double H = m->opt.H, t = hymo_master_time(m);
    const int nc = it->nc, N = it->opt.max_iterations;
    hymo_master_save(m, it->ckpt);
    hymo_status st = hymo_master_step(m, err);
    int k = 0; /* retakes */
    if (st != HYMO_OK) { /* iterate 0 failed: retaken with every output held at its value at t */
        hymo_master_restore(m, it->ckpt);
        for (int q = 0; q < m->n; ++q)
            memcpy(it->ybuf + it->yoff[q], m->nodes[q].hist_y, (size_t)m->nodes[q].sub->n_outputs * sizeof(double));
        for (int c = 0; c < nc; ++c) it->x[c] = m->nodes[it->c_sub[c]].hist_y[it->c_out[c]];
        k = 1;
        if ((st = sweep(m, it, t, H, err)) != HYMO_OK) return st;
    }
    for (int c = 0; c < nc; ++c) {
        const double u = hymo_poly_eval(m->nodes[it->r_sub[c]].coef + HYMO_POLY_TERMS * it->r_in[c], H);
        if (fabs(u) > it->S[c]) it->S[c] = fabs(u);
        const double den = it->opt.atol + it->opt.rtol * it->S[c];
        it->w[c] = den > 0.0 ? 1.0 / den : 1.0 / DBL_MIN;
    }
    double res = gather(m, it, H), omega = it->omega < 0.05 ? 0.05 : it->omega > 1.0 ? 1.0 : it->omega;
    for (int j = 0; !(res <= 1.0) && k < N && isfinite(res); ++j) {
        /* iterate j (the latest good retake): x_j = u, r_j = y - u (scaled
         * in column j of Rh) */
        double *rs = it->Rh + (size_t)j * nc;
        for (int c = 0; c < nc; ++c) {
            rs[c] = (it->y[c] - it->u[c]) * it->w[c];
            it->Yh[(size_t)j * nc + c] = it->y[c];
        }
        if (j > 0 && it->opt.accel == HYMO_ACCEL_AITKEN) {
            double num = 0.0, den = 0.0;
            for (int c = 0; c < nc; ++c) {
                const double d = rs[c] - it->rs_prev[c];
                num += it->rs_prev[c] * d;
                den += d * d;
            }
            if (den > 0.0) omega = -omega * num / den;
        }
        if (it->opt.accel == HYMO_ACCEL_NONE)
            memcpy(it->x, it->y, (size_t)nc * sizeof(double));
        else if (it->opt.accel == HYMO_ACCEL_IQN_ILS && j > 0)
            iqn_ils(it, j);
        else
            for (int c = 0; c < nc; ++c) it->x[c] = it->u[c] + omega * (it->y[c] - it->u[c]);
        memcpy(it->rs_prev, rs, (size_t)nc * sizeof(double));
        memcpy(it->xg, it->u, (size_t)nc * sizeof(double));
        for (int q = 0; q < m->n; ++q)
            memcpy(it->ybuf + it->yoff[q], m->nodes[q].hist_y, (size_t)m->nodes[q].sub->n_outputs * sizeof(double));
        /* a retake that fails or gives non-finite outputs is retaken with
         * the change from the last good estimate halved (BACKTRACK times) */
        for (int halvings = 0;; ++halvings) {
            hymo_master_restore(m, it->ckpt);
            st = sweep(m, it, t, H, err);
            ++k;
            res = st == HYMO_OK ? gather(m, it, H) : NAN;
            if (isfinite(res) || halvings == BACKTRACK || k >= N) break;
            for (int c = 0; c < nc; ++c) it->x[c] = it->xg[c] + 0.5 * (it->x[c] - it->xg[c]);
            omega *= 0.5;
        }
        if (st != HYMO_OK) return st;
    }
    if (it->opt.accel == HYMO_ACCEL_AITKEN && k > 1 && isfinite(omega)) it->omega = omega;
    for (int c = 0; c < nc; ++c)
        if (fabs(it->y[c]) > it->S[c]) it->S[c] = fabs(it->y[c]);
    if (stats) {
        stats->iterations = k;
        stats->residual = res;
        stats->converged = res <= 1.0;
        stats->steps++;
        stats->total_iterations += k;
        if (!(res <= 1.0)) stats->non_converged++;
        if (!(res <= stats->max_residual)) stats->max_residual = res;
    }
    return HYMO_OK;
}
