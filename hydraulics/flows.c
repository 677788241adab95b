/* The output's per-element flows and powers (hydraulics/flows.h): the
 * element kinds' columns (hymo_element_kinds[], elements.h) in the file's
 * order, then the pressure sources. */
#include "flows.h"

#include <stdio.h>
#include <string.h>

static const char *const one_col[] = {""};

/* ---- the output (docs/hdf5-format.md): the element kinds in the file's
 * column order, then the pressure sources ---- */

static const int column_order[] = {HYMO_ELEMENT_VALVE, HYMO_ELEMENT_THROTTLE,     HYMO_ELEMENT_RELIEF,
                                   HYMO_ELEMENT_CHECK, HYMO_ELEMENT_PUMP,         HYMO_ELEMENT_FLOW_CONTROL,
                                   HYMO_ELEMENT_MOTOR};
#define N_COLUMN_KINDS ((int)(sizeof column_order / sizeof column_order[0]))

/* pressure sources (pumps given by their pressure, tanks): the net
 * outflow of the elements' flows, and the power p Q it delivers; last:
 * qnode holds every element's flows */
static const hymo_element_kind source_kind = {.kind = "source",
                                              .n_flows = 1,
                                              .n_powers = 1,
                                              .flow_suffix = one_col,
                                              .power_suffix = one_col};
static int source_count(const hymo_model *m)
{
    int n = 0;
    for (int k = 0; k < m->n_nodes; ++k) n += m->nodes[k].kind == HYMO_NODE_SOURCE;
    return n;
}
static int source_node(const hymo_model *m, int i)
{
    for (int k = 0; k < m->n_nodes; ++k)
        if (m->nodes[k].kind == HYMO_NODE_SOURCE && i-- == 0) return k;
    return -1;
}

/* the c-th kind of the output's columns (c = N_COLUMN_KINDS: the sources) */
static const hymo_element_kind *column_kind(int c)
{
    return c < N_COLUMN_KINDS ? &hymo_element_kinds[column_order[c]] : &source_kind;
}
static int column_count(const hymo_model *m, int c)
{
    return c < N_COLUMN_KINDS ? column_kind(c)->count(m) : source_count(m);
}
static const char *column_element(const hymo_model *m, int c, int i)
{
    return c < N_COLUMN_KINDS ? column_kind(c)->name(m, i) : m->nodes[source_node(m, i)].name;
}

void hymo_flow_columns(const hymo_model *model, int *n_flows, int *n_powers)
{
    int nf = 0, np = 0;
    for (int c = 0; c <= N_COLUMN_KINDS; ++c) {
        const int n = column_count(model, c);
        nf += n * column_kind(c)->n_flows;
        np += n * column_kind(c)->n_powers;
    }
    *n_flows = nf;
    *n_powers = np;
}

static void column_name(char out[HYMO_FLOW_NAME_MAX], const char *element, const char *suffix)
{
    if (suffix && suffix[0])
        snprintf(out, HYMO_FLOW_NAME_MAX, "%s.%s", element, suffix);
    else
        snprintf(out, HYMO_FLOW_NAME_MAX, "%s", element);
}

void hymo_flow_names(const hymo_model *model, char (*flow_names)[HYMO_FLOW_NAME_MAX],
                     char (*power_names)[HYMO_FLOW_NAME_MAX])
{
    int f = 0, g = 0;
    for (int c = 0; c <= N_COLUMN_KINDS; ++c) {
        const hymo_element_kind *el = column_kind(c);
        const int n = column_count(model, c);
        for (int i = 0; i < n; ++i) {
            const char *name = column_element(model, c, i);
            for (int k = 0; k < el->n_flows; ++k) column_name(flow_names[f++], name, el->flow_suffix[k]);
            for (int k = 0; k < el->n_powers; ++k) column_name(power_names[g++], name, el->power_suffix[k]);
        }
    }
}

void hymo_flow_eval(const hymo_circuit *circ, const hymo_model *model, const double *p, const double *u,
                    const double *zd, double *q, double *w, double *qnode)
{
    memset(qnode, 0, (size_t)model->n_nodes * sizeof *qnode);
    for (int c = 0; c < N_COLUMN_KINDS; ++c) {
        const hymo_element_kind *el = column_kind(c);
        const int n = el->count(model);
        for (int i = 0; i < n; ++i) {
            el->output(circ, model, i, p, u, zd, q, w, qnode);
            q += el->n_flows;
            w += el->n_powers;
        }
    }
    const int ns = source_count(model);
    for (int i = 0; i < ns; ++i, ++q, ++w) {
        const int k = source_node(model, i);
        q[0] = -qnode[k];
        w[0] = model->nodes[k].pressure * q[0];
    }
}
