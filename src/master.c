/* Generic non-iterative co-simulation master (hymo/master.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_internal.h"

static hymo_status check_wiring(hymo_subsystem *const *subs, int n, const hymo_link *links, int n_links,
                                const hymo_master_options *opt, hymo_error *err)
{
    if (n < 1 || !subs) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: no subsystems");
    for (int k = 0; k < n; ++k)
        if (!subs[k]) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: subsystem %d is NULL", k);
    if (opt->scheme != HYMO_MASTER_JACOBI && opt->scheme != HYMO_MASTER_GAUSS_SEIDEL)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: unknown scheme %d", (int)opt->scheme);
    if (opt->order < 0 || opt->order > HYMO_POLY_TERMS - 1)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: extrapolation order %d is not in 0..%d", opt->order,
                              HYMO_POLY_TERMS - 1);
    if (!(opt->H > 0.0) || !isfinite(opt->H))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: communication step H = %g must be positive", opt->H);
    for (int l = 0; l < n_links; ++l) {
        const hymo_link *ln = &links[l];
        if (ln->from < 0 || ln->from >= n || ln->to < 0 || ln->to >= n)
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: links[%d]: subsystem index out of 0..%d", l,
                                  n - 1);
        if (ln->output < 0 || ln->output >= subs[ln->from]->n_outputs)
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: links[%d]: subsystem '%s' has no output %d", l,
                                  subs[ln->from]->name, ln->output);
        if (ln->input < 0 || ln->input >= subs[ln->to]->n_inputs)
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: links[%d]: subsystem '%s' has no input %d", l,
                                  subs[ln->to]->name, ln->input);
        for (int q = 0; q < l; ++q)
            if (links[q].to == ln->to && links[q].input == ln->input)
                return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                      "master: links[%d] and links[%d] both drive input %d of '%s'", q, l,
                                      ln->input, subs[ln->to]->name);
    }
    for (int k = 0; k < n; ++k)
        for (int i = 0; i < subs[k]->n_inputs; ++i) {
            int driven = 0;
            for (int l = 0; l < n_links && !driven; ++l) driven = links[l].to == k && links[l].input == i;
            if (!driven)
                return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: input %d of '%s' is not driven by any link",
                                      i, subs[k]->name);
        }
    return HYMO_OK;
}

hymo_status hymo_master_create(hymo_subsystem *const *subs, int n_subs, const hymo_link *links, int n_links,
                               const hymo_master_options *opt, hymo_master **out, hymo_error *err)
{
    *out = NULL;
    hymo_status st = check_wiring(subs, n_subs, links, n_links, opt, err);
    if (st != HYMO_OK) return st;
    hymo_master *m = calloc(1, sizeof *m);
    if (!m || !(m->nodes = calloc((size_t)n_subs, sizeof *m->nodes))) {
        free(m);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (master)");
    }
    m->n = n_subs;
    m->opt = *opt;
    for (int k = 0; k < n_subs; ++k) {
        m->nodes[k].sub = subs[k];
        if (hymo_cosim_node_alloc(&m->nodes[k])) {
            hymo_master_free(m);
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (master)");
        }
    }
    for (int l = 0; l < n_links; ++l) {
        hymo_cosim_node *nd = &m->nodes[links[l].to];
        nd->src_sub[links[l].input] = links[l].from;
        nd->src_out[links[l].input] = links[l].output;
    }
    for (int k = 0; k < n_subs; ++k) hymo_cosim_node_push(&m->nodes[k], 0.0);
    *out = m;
    return HYMO_OK;
}

hymo_status hymo_master_step(hymo_master *m, hymo_error *err)
{
    const double H = m->opt.H, t = (double)m->steps * H, t1 = (double)(m->steps + 1) * H;
    const int gs = m->opt.scheme == HYMO_MASTER_GAUSS_SEIDEL;
    if (!gs)
        for (int k = 0; k < m->n; ++k) hymo_cosim_node_set_inputs(m->nodes, k, t, m->opt.order);
    for (int k = 0; k < m->n; ++k) {
        hymo_subsystem *sub = m->nodes[k].sub;
        if (gs) hymo_cosim_node_set_inputs(m->nodes, k, t, m->opt.order);
        hymo_status st = sub->ops->do_step(sub, t, H, err);
        if (st != HYMO_OK) return st;
        if (gs) hymo_cosim_node_push(&m->nodes[k], t1);
    }
    if (!gs)
        for (int k = 0; k < m->n; ++k) hymo_cosim_node_push(&m->nodes[k], t1);
    m->steps++;
    return HYMO_OK;
}

double hymo_master_time(const hymo_master *m) { return (double)m->steps * m->opt.H; }

const double *hymo_master_outputs(const hymo_master *m, int k) { return m->nodes[k].hist_y; }

void hymo_master_free(hymo_master *m)
{
    if (!m) return;
    for (int k = 0; k < m->n; ++k) hymo_cosim_node_free(&m->nodes[k]);
    free(m->nodes);
    free(m);
}
