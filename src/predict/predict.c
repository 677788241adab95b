/* Stability of split-mode co-simulation predicted along a reference
 * trajectory (hymo/predict.h): the compound matrix of one communication
 * step of the actual master, by forward differences around the
 * reference's state. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_split.h"
#include "cosim_tables.h"
#include "lazy_lib.h"
#include "master_internal.h"
#include "hymo/predict.h"

void hymo_predict_options_default(hymo_predict_options *po)
{
    po->points = 20;
    po->eps = 1e-6;
    po->rho_limit = 1.03;
    po->sustain = 2;
}

/* The probed vector z: the subsystems' states (z_node, z_index, z_out = -1),
 * then the history entries (z_node, z_out, z_index = the level, 0 the
 * newest) of every output that some input reads, as many levels as its
 * readers' polynomials use. */
typedef struct {
    hymo_split *sp;
    hymo_master *m;
    hymo_master_checkpoint *cp;
    int nz;
    int *z_node, *z_out, *z_index;
    double t, H;
    double *z0, *zp, *zm, *M, *wr, *wi, *x;
} probe;

static void probe_free(probe *pr)
{
    hymo_master_checkpoint_free(pr->cp);
    hymo_master_free(pr->m);
    hymo_split_free(pr->sp);
    double *arr[] = {pr->z0, pr->zp, pr->zm, pr->M, pr->wr, pr->wi, pr->x};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
    free(pr->z_node);
    free(pr->z_out);
    free(pr->z_index);
}

/* History levels of output o of subsystem k that a step reads: per link
 * from it, the reader's order + 1, one more when the reader takes only
 * points up to the step start from a source of an earlier stage (which
 * has then already advanced). */
static int levels(const probe *pr, int k, int o)
{
    int lev = 0;
    for (int l = 0; l < pr->sp->n_links; ++l) {
        const hymo_link *ln = &pr->sp->links[l];
        if (ln->from != k || ln->output != o) continue;
        const hymo_cosim_node *rd = &pr->m->nodes[ln->to];
        int need = rd->order[ln->input] + 1 +
                   (rd->at_start[ln->input] && pr->m->nodes[k].stage < rd->stage ? 1 : 0);
        if (need > lev) lev = need;
    }
    return lev < HYMO_COSIM_HIST ? lev : HYMO_COSIM_HIST;
}

static hymo_status probe_create(probe *pr, const hymo_model *model, const hymo_cosim_options *opt, hymo_error *err)
{
    memset(pr, 0, sizeof *pr);
    hymo_status st = hymo_split_create(model, opt, &pr->sp, err); /* checks opt */
    if (st == HYMO_OK && hymo_cosim_tables_of(opt).coupling->tlm)
        st = hymo_error_set(err, HYMO_ERR_ARGUMENT,
                            "predict: the tlm coupling is not supported (its lines' waves are states of the step)");
    if (st == HYMO_OK) st = hymo_split_master_create(pr->sp, opt->H, &pr->m, err);
    if (st == HYMO_OK) st = hymo_master_checkpoint_create(pr->m, &pr->cp, err);
    if (st != HYMO_OK) return st;
    pr->H = opt->H;
    const int n = pr->sp->n_subsystems;
    int nz = 0, maxx = 0;
    for (int k = 0; k < n; ++k) {
        const int nx = hymo_split_point_size(pr->sp, k);
        nz += nx;
        if (nx > maxx) maxx = nx;
        for (int o = 0; o < pr->sp->subsystems[k]->n_outputs; ++o) nz += levels(pr, k, o);
    }
    pr->nz = nz;
    pr->z_node = calloc((size_t)nz, sizeof(int));
    pr->z_out = calloc((size_t)nz, sizeof(int));
    pr->z_index = calloc((size_t)nz, sizeof(int));
    pr->z0 = calloc((size_t)nz, sizeof(double));
    pr->zp = calloc((size_t)nz, sizeof(double));
    pr->zm = calloc((size_t)nz, sizeof(double));
    pr->M = calloc((size_t)nz * (size_t)nz, sizeof(double));
    pr->wr = calloc((size_t)nz, sizeof(double));
    pr->wi = calloc((size_t)nz, sizeof(double));
    pr->x = calloc((size_t)(maxx > 0 ? maxx : 1), sizeof(double));
    if (!pr->z_node || !pr->z_out || !pr->z_index || !pr->z0 || !pr->zp || !pr->zm || !pr->M || !pr->wr ||
        !pr->wi || !pr->x)
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (predict)");
    int e = 0;
    for (int k = 0; k < n; ++k)
        for (int i = 0; i < hymo_split_point_size(pr->sp, k); ++i, ++e)
            pr->z_node[e] = k, pr->z_out[e] = -1, pr->z_index[e] = i;
    for (int k = 0; k < n; ++k)
        for (int o = 0; o < pr->sp->subsystems[k]->n_outputs; ++o)
            for (int j = 0; j < levels(pr, k, o); ++j, ++e) pr->z_node[e] = k, pr->z_out[e] = o, pr->z_index[e] = j;
    return HYMO_OK;
}

/* The outputs of subsystem k as its steady history at t (spacing H). */
static void steady_history(hymo_cosim_node *nd, double t, double H)
{
    const int m = nd->sub->n_outputs;
    nd->sub->ops->get_outputs(nd->sub, nd->hist_y);
    for (int j = 0; j < HYMO_COSIM_HIST; ++j) {
        nd->hist_t[j] = t - (double)j * H;
        if (j > 0) memcpy(nd->hist_y + j * m, nd->hist_y, (size_t)m * sizeof(double));
    }
    nd->n_hist = HYMO_COSIM_HIST;
    nd->advanced = 0;
}

/* z from the subsystems and the master's histories. */
static void read_z(probe *pr, double *z)
{
    for (int e = 0; e < pr->nz;) {
        const int k = pr->z_node[e];
        if (pr->z_out[e] < 0) {
            hymo_split_point_get(pr->sp, k, pr->x);
            const int nx = hymo_split_point_size(pr->sp, k);
            memcpy(z + e, pr->x, (size_t)nx * sizeof(double));
            e += nx;
        } else {
            const hymo_cosim_node *nd = &pr->m->nodes[k];
            z[e] = nd->hist_y[pr->z_index[e] * nd->sub->n_outputs + pr->z_out[e]];
            ++e;
        }
    }
}

/* z + d e_c, from the checkpoint of the point */
static void perturb(probe *pr, int c, double d)
{
    hymo_master_restore(pr->m, pr->cp);
    const int k = pr->z_node[c];
    if (pr->z_out[c] < 0) {
        hymo_split_point_get(pr->sp, k, pr->x);
        pr->x[pr->z_index[c]] += d;
        hymo_split_point_set(pr->sp, k, pr->t, pr->x);
    } else {
        hymo_cosim_node *nd = &pr->m->nodes[k];
        nd->hist_y[pr->z_index[c] * nd->sub->n_outputs + pr->z_out[c]] += d;
    }
}

/* The point of reference row `row`: states, steady histories, the master's
 * time; saved in the checkpoint. */
static hymo_status put_point(probe *pr, const hymo_model *model, const hymo_reference *ref, int row, hymo_error *err)
{
    hymo_status st = hymo_split_point_reference(pr->sp, model, ref, row, err);
    if (st != HYMO_OK) return st;
    hymo_master *m = pr->m;
    pr->t = ref->time[row];
    m->t_base = pr->t;
    m->steps_base = m->steps;
    steady_history(&m->nodes[0], pr->t, pr->H); /* the mechanics first: the others' inputs read it */
    for (int k = 1; k < m->n; ++k) {
        hymo_cosim_node_set_inputs(m->nodes, k, pr->t);
        steady_history(&m->nodes[k], pr->t, pr->H);
    }
    hymo_master_save(m, pr->cp);
    read_z(pr, pr->z0);
    return HYMO_OK;
}

/* rho of the point in the checkpoint, by forward differences
 * (step(z + d e_c) - step(z)) / d; INFINITY when a probe's step fails or
 * gives non-finite values. */
static hymo_status point_rho(probe *pr, double eps, double *rho, hymo_error *err)
{
    const int nz = pr->nz;
    hymo_error e2;
    hymo_master_restore(pr->m, pr->cp);
    if (hymo_master_step(pr->m, &e2) != HYMO_OK) return *rho = INFINITY, HYMO_OK;
    read_z(pr, pr->zm); /* the unperturbed step */
    for (int c = 0; c < nz; ++c) {
        const double d = eps * (fabs(pr->z0[c]) + 1.0);
        perturb(pr, c, d);
        if (hymo_master_step(pr->m, &e2) != HYMO_OK) return *rho = INFINITY, HYMO_OK;
        read_z(pr, pr->zp);
        double *col = pr->M + (size_t)c * nz;
        for (int i = 0; i < nz; ++i) {
            col[i] = (pr->zp[i] - pr->zm[i]) / d;
            if (!isfinite(col[i])) return *rho = INFINITY, HYMO_OK;
        }
    }
    hymo_master_restore(pr->m, pr->cp);
    lapack_int info = hymo_lapack_dgeev(LAPACK_COL_MAJOR, 'N', 'N', nz, pr->M, nz, pr->wr, pr->wi, NULL, 1, NULL, 1);
    if (info == HYMO_LAPACK_UNAVAILABLE) return hymo_error_set(err, HYMO_ERR_IO, "predict: %s", hymo_lapack_error());
    if (info != 0)
        return hymo_error_set(err, HYMO_ERR_NUMERIC, "predict: t = %g s: eigenvalue solver failed (dgeev info %d)",
                              pr->t, (int)info);
    double r = 0.0;
    for (int i = 0; i < nz; ++i) r = fmax(r, hypot(pr->wr[i], pr->wi[i]));
    *rho = r;
    return HYMO_OK;
}

/* The reference row nearest to time t (times ascending) whose time is a
 * whole multiple of H (the mechanics' steps end on their grid), searched
 * outwards up to 1000 rows; the nearest row if none is. */
static int row_at(const hymo_reference *ref, double t, double H)
{
    int lo = 0, hi = ref->n - 1;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (ref->time[mid] <= t) lo = mid;
        else hi = mid;
    }
    const int r0 = fabs(ref->time[hi] - t) < fabs(ref->time[lo] - t) ? hi : lo;
    for (int d = 0; d < 1000; ++d)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            const int r = r0 + sgn * d;
            if (r < 0 || r >= ref->n) continue;
            const double q = ref->time[r] / H;
            if (fabs(q - nearbyint(q)) < 1e-6) return r;
        }
    return r0;
}

hymo_status hymo_predict_rho(const hymo_model *model, const hymo_cosim_options *opt, const hymo_reference *ref,
                             const hymo_predict_options *po, double stop_above, double *t, double *rho, int *n,
                             hymo_error *err)
{
    *n = 0;
    if (po->points < 1 || !(po->eps > 0.0) || po->sustain < 1 || ref->n < 1)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "predict: points = %d, eps = %g, sustain = %d, reference rows = %d", po->points, po->eps,
                              po->sustain, ref->n);
    probe pr;
    hymo_status st = probe_create(&pr, model, opt, err);
    const double T = fmin(ref->time[ref->n - 1], opt->mech.t_end);
    int above = 0; /* consecutive points above stop_above */
    for (int j = 0; j < po->points && st == HYMO_OK; ++j) {
        const int row = row_at(ref, (j + 0.5) * T / po->points, opt->H);
        st = put_point(&pr, model, ref, row, err);
        if (st == HYMO_OK) st = point_rho(&pr, po->eps, &rho[j], err);
        if (st != HYMO_OK) break;
        t[j] = ref->time[row];
        *n = j + 1;
        above = rho[j] <= stop_above ? 0 : above + 1;
        if (stop_above > 0.0 && above >= po->sustain) break;
    }
    probe_free(&pr);
    return st;
}

hymo_status hymo_predict_achievable(const hymo_model *model, const hymo_cosim_options *opt,
                                    const hymo_reference *ref, const double *Hs, int nH,
                                    const hymo_predict_options *po, hymo_predict_step *steps, double *achievable,
                                    hymo_error *err)
{
    *achievable = 0.0;
    double *t = calloc((size_t)po->points + 1, sizeof *t), *rho = calloc((size_t)po->points + 1, sizeof *rho);
    if (!t || !rho) {
        free(t);
        free(rho);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (predict)");
    }
    hymo_status st = HYMO_OK;
    int failed = 0;
    for (int i = 0; i < nH; ++i) {
        hymo_predict_step *s = &steps[i];
        *s = (hymo_predict_step){.H = Hs[i], .t_first = NAN, .t_rho_max = NAN};
        if (failed || st != HYMO_OK) continue;
        hymo_cosim_options o = *opt;
        o.H = o.mech.dt = Hs[i];
        int n = 0;
        st = hymo_predict_rho(model, &o, ref, po, po->rho_limit, t, rho, &n, err);
        if (st != HYMO_OK) break;
        s->evaluated = 1;
        s->n_points = n;
        s->stable = 1;
        for (int j = 0, above = 0; j < n; ++j) {
            if (!(rho[j] <= s->rho_max)) s->rho_max = rho[j], s->t_rho_max = t[j];
            above = rho[j] <= po->rho_limit ? 0 : above + 1;
            if (above >= po->sustain && s->stable) s->stable = 0, s->t_first = t[j - above + 1];
        }
        if (s->stable) *achievable = Hs[i];
        else failed = 1;
    }
    free(t);
    free(rho);
    return st;
}
