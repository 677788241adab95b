/* Subsystem nodes of the co-simulation master (output histories and the
 * polynomial inputs built from them) and the variable tables of the
 * subsystem implementations (see cosim_internal.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "master_internal.h"

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

int hymo_cosim_node_alloc(hymo_cosim_node *nd, int p)
{
    const size_t ni = (size_t)(nd->sub->n_inputs > 0 ? nd->sub->n_inputs : 1);
    const size_t no = (size_t)(nd->sub->n_outputs > 0 ? nd->sub->n_outputs : 1);
    nd->src_sub = calloc(ni, sizeof(int));
    nd->src_out = calloc(ni, sizeof(int));
    nd->order = calloc(ni, sizeof(int));
    nd->at_start = calloc(ni, 1);
    nd->coef = calloc(HYMO_POLY_TERMS * ni, sizeof(double));
    nd->hist_y = calloc(HYMO_COSIM_HIST * no, sizeof(double));
    nd->n_hist = 0;
    nd->advanced = 0;
    if (!nd->src_sub || !nd->src_out || !nd->order || !nd->at_start || !nd->coef || !nd->hist_y) return -1;
    for (size_t i = 0; i < ni; ++i) nd->order[i] = p;
    return 0;
}

void hymo_cosim_node_free(hymo_cosim_node *nd)
{
    free(nd->src_sub);
    free(nd->src_out);
    free(nd->order);
    free(nd->at_start);
    free(nd->coef);
    free(nd->hist_y);
    nd->src_sub = nd->src_out = nd->order = NULL;
    nd->at_start = NULL;
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

void hymo_cosim_node_set_inputs(hymo_cosim_node *nodes, int k, double t)
{
    hymo_cosim_node *nd = &nodes[k];
    for (int i = 0; i < nd->sub->n_inputs; ++i) {
        const hymo_cosim_node *src = &nodes[nd->src_sub[i]];
        const int m = src->sub->n_outputs, j0 = nd->at_start[i] && src->advanced ? 1 : 0;
        const int avail = src->n_hist - j0, npts = avail < nd->order[i] + 1 ? avail : nd->order[i] + 1;
        double tt[HYMO_COSIM_HIST], yy[HYMO_COSIM_HIST];
        for (int j = 0; j < npts; ++j) {
            tt[j] = src->hist_t[j0 + j];
            yy[j] = src->hist_y[(j0 + j) * m + nd->src_out[i]];
        }
        hymo_poly_fit(npts, tt, yy, t, &nd->coef[HYMO_POLY_TERMS * i]);
    }
    nd->sub->ops->set_inputs(nd->sub, t, nd->coef);
}

/* ------------------------------------------------------- variable tables */

static char *dup_text(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

int hymo_var_table_add(hymo_var_table *t, int kind, int index, hymo_var_type type, const char *unit,
                       const char *description, const char *fmt, ...)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 32;
        hymo_variable *var = realloc(t->var, (size_t)cap * sizeof *var);
        if (!var) return -1;
        t->var = var;
        int *kd = realloc(t->kind, (size_t)cap * sizeof *kd);
        if (!kd) return -1;
        t->kind = kd;
        int *ix = realloc(t->index, (size_t)cap * sizeof *ix);
        if (!ix) return -1;
        t->index = ix;
        t->cap = cap;
    }
    char name[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    hymo_variable *v = &t->var[t->n];
    v->name = dup_text(name);
    v->unit = dup_text(unit ? unit : "");
    v->description = dup_text(description ? description : "");
    v->type = type;
    if (!v->name || !v->unit || !v->description) {
        free((char *)v->name);
        free((char *)v->unit);
        free((char *)v->description);
        return -1;
    }
    t->kind[t->n] = kind;
    t->index[t->n] = index;
    t->n++;
    return 0;
}

void hymo_var_table_free(hymo_var_table *t)
{
    for (int i = 0; i < t->n; ++i) {
        free((char *)t->var[i].name);
        free((char *)t->var[i].unit);
        free((char *)t->var[i].description);
    }
    free(t->var);
    free(t->kind);
    free(t->index);
    memset(t, 0, sizeof *t);
}
