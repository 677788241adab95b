/* Subsystem nodes of a co-simulation master: output histories and the
 * polynomial inputs built from them (see cosim_internal.h). */
#include <stdlib.h>
#include <string.h>

#include "cosim_internal.h"

void hymo_poly_fit(int n, const double *t, const double *y, double t0, double *coef)
{
    /* Newton divided differences in tau = t - t0, expanded to monomials */
    double tau[HYMO_COSIM_HIST], dd[HYMO_COSIM_HIST];
    for (int i = 0; i < n; ++i) {
        tau[i] = t[i] - t0;
        dd[i] = y[i];
    }
    for (int j = 1; j < n; ++j)
        for (int i = n - 1; i >= j; --i) dd[i] = (dd[i] - dd[i - 1]) / (tau[i] - tau[i - j]);
    double c[HYMO_POLY_TERMS] = {0};
    /* Horner: p = dd[n-1]; p = p (tau - tau_i) + dd[i] */
    for (int i = n - 1; i >= 0; --i) {
        /* c <- c * (x - tau_i) + dd[i] */
        for (int k = HYMO_POLY_TERMS - 1; k >= 1; --k) c[k] = c[k - 1] - tau[i] * c[k];
        c[0] = -tau[i] * c[0] + dd[i];
    }
    memcpy(coef, c, sizeof c);
}

int hymo_cosim_node_alloc(hymo_cosim_node *nd)
{
    const size_t ni = (size_t)(nd->sub->n_inputs > 0 ? nd->sub->n_inputs : 1);
    const size_t no = (size_t)(nd->sub->n_outputs > 0 ? nd->sub->n_outputs : 1);
    nd->src_sub = calloc(ni, sizeof(int));
    nd->src_out = calloc(ni, sizeof(int));
    nd->coef = calloc(HYMO_POLY_TERMS * ni, sizeof(double));
    nd->hist_y = calloc(HYMO_COSIM_HIST * no, sizeof(double));
    nd->n_hist = 0;
    return nd->src_sub && nd->src_out && nd->coef && nd->hist_y ? 0 : -1;
}

void hymo_cosim_node_free(hymo_cosim_node *nd)
{
    free(nd->src_sub);
    free(nd->src_out);
    free(nd->coef);
    free(nd->hist_y);
    nd->src_sub = nd->src_out = NULL;
    nd->coef = nd->hist_y = NULL;
}

void hymo_cosim_node_push(hymo_cosim_node *nd, double t)
{
    const int m = nd->sub->n_outputs;
    memmove(nd->hist_y + m, nd->hist_y, (size_t)(HYMO_COSIM_HIST - 1) * m * sizeof(double));
    memmove(nd->hist_t + 1, nd->hist_t, (HYMO_COSIM_HIST - 1) * sizeof(double));
    nd->sub->ops->get_outputs(nd->sub, nd->hist_y);
    nd->hist_t[0] = t;
    if (nd->n_hist < HYMO_COSIM_HIST) nd->n_hist++;
}

void hymo_cosim_node_set_inputs(hymo_cosim_node *nodes, int k, double t, int p)
{
    hymo_cosim_node *nd = &nodes[k];
    for (int i = 0; i < nd->sub->n_inputs; ++i) {
        const hymo_cosim_node *src = &nodes[nd->src_sub[i]];
        const int m = src->sub->n_outputs, npts = src->n_hist < p + 1 ? src->n_hist : p + 1;
        double tt[HYMO_COSIM_HIST], yy[HYMO_COSIM_HIST];
        for (int j = 0; j < npts; ++j) {
            tt[j] = src->hist_t[j];
            yy[j] = src->hist_y[j * m + nd->src_out[i]];
        }
        hymo_poly_fit(npts, tt, yy, t, &nd->coef[HYMO_POLY_TERMS * i]);
    }
    nd->sub->ops->set_inputs(nd->sub, t, nd->coef);
}
