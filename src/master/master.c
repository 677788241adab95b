/* Generic non-iterative co-simulation master (hymo/master.h); it knows
 * nothing about what the subsystems compute. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "master_internal.h"

/* The scheme rows (hymo_scheme_table). */

static int stage_jacobi(int k, int n) { return (void)k, (void)n, 0; }
static int stage_in_order(int k, int n) { return (void)n, k; }
static int stage_first_last(int k, int n) { return k > 0 ? k - 1 : n - 1; }

static const hymo_scheme_table jacobi = {.system_name = "jacobi", .ordered = 0, .stage = stage_jacobi};
static const hymo_scheme_table gauss_seidel_mech_first = {
    .system_name = "gauss-seidel", .ordered = 1, .stage = stage_in_order};
static const hymo_scheme_table gauss_seidel_hyd_first = {
    .system_name = "gauss-seidel-hyd-first", .ordered = 1, .stage = stage_first_last};
static const hymo_scheme_table *const schemes[] = {
    [HYMO_SCHEME_JACOBI] = &jacobi,
    [HYMO_SCHEME_GAUSS_SEIDEL_MECH_FIRST] = &gauss_seidel_mech_first,
    [HYMO_SCHEME_GAUSS_SEIDEL_HYD_FIRST] = &gauss_seidel_hyd_first,
};

const hymo_scheme_table *hymo_scheme_table_of(hymo_cosim_scheme s)
{
    return (unsigned)s < sizeof schemes / sizeof *schemes ? schemes[s] : NULL;
}

static hymo_status check_wiring(hymo_subsystem *const *subs, int n, const hymo_link *links, int n_links,
                                const hymo_master_options *opt, hymo_error *err)
{
    if (n < 1 || !subs) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: no subsystems");
    for (int k = 0; k < n; ++k)
        if (!subs[k]) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: subsystem %d is NULL", k);
    if (!hymo_scheme_table_of(opt->scheme))
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
    if (!m || !(m->nodes = calloc((size_t)n_subs, sizeof *m->nodes)) ||
        !(m->seq = calloc((size_t)n_subs, sizeof *m->seq))) {
        if (m) free(m->nodes);
        free(m);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (master)");
    }
    m->n = n_subs;
    m->opt = *opt;
    const hymo_scheme_table *scheme = hymo_scheme_table_of(opt->scheme);
    for (int k = 0; k < n_subs; ++k) {
        m->nodes[k].sub = subs[k];
        m->nodes[k].stage = scheme->stage(k, n_subs);
        if (hymo_cosim_node_alloc(&m->nodes[k], opt->order)) {
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

hymo_status hymo_master_set_stage(hymo_master *m, int k, int stage, hymo_error *err)
{
    if (k < 0 || k >= m->n)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: stage of subsystem %d: index out of 0..%d", k,
                              m->n - 1);
    m->nodes[k].stage = stage;
    m->seq_valid = 0;
    return HYMO_OK;
}

hymo_status hymo_master_set_input_approx(hymo_master *m, int k, int input, int order, int at_start,
                                         hymo_error *err)
{
    if (k < 0 || k >= m->n)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: input approximation of subsystem %d: index out of 0..%d",
                              k, m->n - 1);
    hymo_cosim_node *nd = &m->nodes[k];
    if (input < -1 || input >= nd->sub->n_inputs)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: subsystem '%s' has no input %d", nd->sub->name, input);
    if (order < 0 || order > HYMO_POLY_TERMS - 1)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "master: input %d of '%s': extrapolation order %d is not in 0..%d", input,
                              nd->sub->name, order, HYMO_POLY_TERMS - 1);
    for (int i = input < 0 ? 0 : input; i < (input < 0 ? nd->sub->n_inputs : input + 1); ++i) {
        nd->order[i] = order;
        nd->at_start[i] = at_start != 0;
    }
    return HYMO_OK;
}

/* m->seq: the subsystems by stage, then index (insertion sort, stable). */
static void order_stages(hymo_master *m)
{
    for (int k = 0; k < m->n; ++k) {
        int j = k;
        for (; j > 0 && m->nodes[m->seq[j - 1]].stage > m->nodes[k].stage; --j) m->seq[j] = m->seq[j - 1];
        m->seq[j] = k;
    }
    m->seq_valid = 1;
}

hymo_status hymo_master_run_stages(hymo_master *m, double t, double H, void (*publish)(hymo_cosim_node *nd, double t1),
                                   hymo_error *err)
{
    if (!m->seq_valid) order_stages(m);
    hymo_status st = HYMO_OK;
    for (int i = 0, j; i < m->n && st == HYMO_OK; i = j) {
        const int stage = m->nodes[m->seq[i]].stage;
        for (j = i; j < m->n && m->nodes[m->seq[j]].stage == stage; ++j)
            hymo_cosim_node_set_inputs(m->nodes, m->seq[j], t);
        for (int q = i; q < j && st == HYMO_OK; ++q) {
            hymo_subsystem *sub = m->nodes[m->seq[q]].sub;
            st = sub->ops->do_step(sub, t, H, err);
        }
        for (int q = i; q < j && st == HYMO_OK; ++q) publish(&m->nodes[m->seq[q]], t + H);
    }
    for (int k = 0; k < m->n; ++k) m->nodes[k].advanced = 0;
    if (st == HYMO_OK) m->steps++;
    return st;
}

/* An ordinary step's publication: a new history point. */
static void push_point(hymo_cosim_node *nd, double t1)
{
    hymo_cosim_node_push(nd, t1);
    nd->advanced = 1;
}

hymo_status hymo_master_step(hymo_master *m, hymo_error *err)
{
    return hymo_master_run_stages(m, hymo_master_time(m), m->opt.H, push_point, err);
}

double hymo_master_time(const hymo_master *m)
{
    return m->t_base + (double)(m->steps - m->steps_base) * m->opt.H;
}

hymo_status hymo_master_set_step_size(hymo_master *m, double H, hymo_error *err)
{
    if (!(H > 0.0) || !isfinite(H))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: communication step H = %g must be positive", H);
    if (H == m->opt.H) return HYMO_OK;
    m->t_base = hymo_master_time(m);
    m->steps_base = m->steps;
    m->opt.H = H;
    return HYMO_OK;
}

double hymo_master_step_size(const hymo_master *m) { return m->opt.H; }

long hymo_master_steps(const hymo_master *m) { return m->steps; }

/* ------------------------------------------------------------ checkpoints */

struct hymo_master_checkpoint {
    int n;
    long steps, steps_base;
    double t_base, H;
    int *n_hist;
    double *hist_t;  /* HYMO_COSIM_HIST per subsystem */
    double **hist_y; /* HYMO_COSIM_HIST x n_outputs per subsystem */
    double **coef;   /* HYMO_POLY_TERMS x n_inputs per subsystem */
    double **state;  /* state_size per subsystem */
    int *state_n;
};

void hymo_master_checkpoint_free(hymo_master_checkpoint *c)
{
    if (!c) return;
    for (int k = 0; k < c->n; ++k) {
        if (c->hist_y) free(c->hist_y[k]);
        if (c->coef) free(c->coef[k]);
        if (c->state) free(c->state[k]);
    }
    free(c->n_hist);
    free(c->hist_t);
    free(c->hist_y);
    free(c->coef);
    free(c->state);
    free(c->state_n);
    free(c);
}

hymo_status hymo_master_checkpoint_create(const hymo_master *m, hymo_master_checkpoint **out, hymo_error *err)
{
    *out = NULL;
    for (int k = 0; k < m->n; ++k) {
        const hymo_subsystem *sub = m->nodes[k].sub;
        if (!sub->ops->state_size || !sub->ops->get_state || !sub->ops->set_state || sub->ops->state_size(sub) <= 0)
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "master: subsystem '%s' cannot save its state",
                                  sub->name);
    }
    hymo_master_checkpoint *c = calloc(1, sizeof *c);
    const size_t n = (size_t)m->n;
    int ok = c && (c->n_hist = calloc(n, sizeof *c->n_hist)) && (c->hist_t = calloc(n * HYMO_COSIM_HIST, sizeof(double))) &&
             (c->hist_y = calloc(n, sizeof *c->hist_y)) && (c->coef = calloc(n, sizeof *c->coef)) &&
             (c->state = calloc(n, sizeof *c->state)) && (c->state_n = calloc(n, sizeof *c->state_n));
    if (c) c->n = m->n;
    for (int k = 0; ok && k < m->n; ++k) {
        const hymo_subsystem *sub = m->nodes[k].sub;
        c->state_n[k] = sub->ops->state_size(sub);
        ok = (c->hist_y[k] = calloc((size_t)HYMO_COSIM_HIST * (size_t)(sub->n_outputs + 1), sizeof(double))) &&
             (c->coef[k] = calloc((size_t)HYMO_POLY_TERMS * (size_t)(sub->n_inputs + 1), sizeof(double))) &&
             (c->state[k] = calloc((size_t)c->state_n[k], sizeof(double)));
    }
    if (!ok) {
        hymo_master_checkpoint_free(c);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (master checkpoint)");
    }
    *out = c;
    return HYMO_OK;
}

void hymo_master_save(const hymo_master *m, hymo_master_checkpoint *c)
{
    c->steps = m->steps, c->steps_base = m->steps_base, c->t_base = m->t_base, c->H = m->opt.H;
    for (int k = 0; k < m->n; ++k) {
        const hymo_cosim_node *nd = &m->nodes[k];
        c->n_hist[k] = nd->n_hist;
        memcpy(c->hist_t + k * HYMO_COSIM_HIST, nd->hist_t, sizeof nd->hist_t);
        memcpy(c->hist_y[k], nd->hist_y, (size_t)HYMO_COSIM_HIST * (size_t)nd->sub->n_outputs * sizeof(double));
        memcpy(c->coef[k], nd->coef, (size_t)HYMO_POLY_TERMS * (size_t)nd->sub->n_inputs * sizeof(double));
        nd->sub->ops->get_state(nd->sub, c->state[k]);
    }
}

void hymo_master_restore(hymo_master *m, const hymo_master_checkpoint *c)
{
    m->steps = c->steps, m->steps_base = c->steps_base, m->t_base = c->t_base, m->opt.H = c->H;
    for (int k = 0; k < m->n; ++k) {
        hymo_cosim_node *nd = &m->nodes[k];
        nd->n_hist = c->n_hist[k];
        memcpy(nd->hist_t, c->hist_t + k * HYMO_COSIM_HIST, sizeof nd->hist_t);
        memcpy(nd->hist_y, c->hist_y[k], (size_t)HYMO_COSIM_HIST * (size_t)nd->sub->n_outputs * sizeof(double));
        memcpy(nd->coef, c->coef[k], (size_t)HYMO_POLY_TERMS * (size_t)nd->sub->n_inputs * sizeof(double));
        nd->advanced = 0;
        nd->sub->ops->set_state(nd->sub, c->state[k]);
    }
}

const double *hymo_master_outputs(const hymo_master *m, int k) { return m->nodes[k].hist_y; }

const double *hymo_master_inputs(const hymo_master *m, int k) { return m->nodes[k].coef; }

void hymo_master_free(hymo_master *m)
{
    if (!m) return;
    for (int k = 0; k < m->n; ++k) hymo_cosim_node_free(&m->nodes[k]);
    free(m->nodes);
    free(m->seq);
    free(m);
}

int hymo_subsystem_find_variable(const hymo_subsystem *sub, const char *name)
{
    if (!sub || !name || !sub->ops->n_variables || !sub->ops->variable) return -1;
    const int n = sub->ops->n_variables(sub);
    for (int vr = 0; vr < n; ++vr) {
        const hymo_variable *v = sub->ops->variable(sub, vr);
        if (v && strcmp(v->name, name) == 0) return vr;
    }
    return -1;
}
