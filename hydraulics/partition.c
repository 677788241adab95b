/* Circuit partition for split-mode co-simulation (SPEC §7): connected
 * components of the volume nodes. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit.h"
#include "elements.h"

/* Joins the volumes among `nodes` (node indices); returns the number of
 * volume nodes seen (0: the element touches no volume). */
static int uf_join_nodes(const hymo_model *model, int *parent, const int *nodes, int n)
{
    int first = -1, count = 0;
    for (int i = 0; i < n; ++i) {
        const hymo_node *nd = &model->nodes[nodes[i]];
        if (nd->kind != HYMO_NODE_VOLUME) continue;
        ++count;
        first = first < 0 ? nd->state : hymo_uf_union(parent, first, nd->state);
    }
    return count;
}

static int state_root(const hymo_model *model, int *parent, int node)
{
    const hymo_node *nd = &model->nodes[node];
    return nd->kind == HYMO_NODE_VOLUME ? hymo_uf_find(parent, nd->state) : -1;
}

/* Appends src to dst (size cap, NUL-terminated), truncating. */
static void append_name(char *dst, size_t cap, const char *src)
{
    size_t len = strlen(dst);
    while (*src && len + 1 < cap) dst[len++] = *src++;
    dst[len] = '\0';
}

void hymo_circuit_parts_free(hymo_circuit_part *parts, int n_parts)
{
    if (!parts) return;
    for (int i = 0; i < n_parts; ++i) hymo_circuit_part_free(&parts[i]);
    free(parts);
}

typedef struct {
    int root, min_cyl, min_vol, min_motor; /* min_motor: smallest motor index */
} comp_key;

static int comp_key_cmp(const void *a, const void *b)
{
    const comp_key *x = a, *y = b;
    if (x->min_cyl != y->min_cyl) return x->min_cyl < y->min_cyl ? -1 : 1;
    if (x->min_motor != y->min_motor) return x->min_motor < y->min_motor ? -1 : 1;
    if (x->min_vol != y->min_vol) return x->min_vol < y->min_vol ? -1 : 1;
    return 0;
}

/* Joins the ports of every element (hymo_element_kinds, in their order)
 * into circuits; an element none of whose ports is a volume is an error
 * that names it. */
static hymo_status join_elements(const hymo_model *model, int *parent, hymo_error *err)
{
    const char *src = model->source_path ? model->source_path : model->name;
    for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
        const hymo_element_kind *K = &hymo_element_kinds[kd];
        const int n = K->count(model);
        for (int i = 0; i < n; ++i) {
            int nodes[HYMO_ELEMENT_PORTS_MAX];
            K->ports(model, i, nodes);
            if (uf_join_nodes(model, parent, nodes, K->n_ports) > 0) continue;
            char ports[2 * HYMO_NAME_MAX + 8] = "";
            if (K->names_ports)
                snprintf(ports, sizeof ports, " (%s - %s)", model->nodes[nodes[0]].name, model->nodes[nodes[1]].name);
            return hymo_error_set(err, HYMO_ERR_MODEL, "%s: %s[%d] (%s): %s%s, so it belongs to no hydraulic circuit",
                                  src, K->field, i, K->name(model, i), K->no_volume, ports);
        }
    }
    return HYMO_OK;
}

/* The circuits' numbers by their roots, comp_of_root[np], ordered by
 * (smallest cylinder, smallest motor, smallest volume); keys[np] is
 * scratch.  Returns their number. */
static int number_circuits(const hymo_model *model, int *parent, int *comp_of_root, comp_key *keys)
{
    const int np = model->n_volumes;
    int nc = 0;
    for (int k = 0; k < np; ++k) comp_of_root[k] = -1;
    for (int k = 0; k < np; ++k) {
        int r = hymo_uf_find(parent, k);
        if (comp_of_root[r] < 0) {
            comp_of_root[r] = nc;
            keys[nc].root = r;
            keys[nc].min_cyl = INT_MAX;
            keys[nc].min_motor = INT_MAX;
            keys[nc].min_vol = k; /* k increases: the first one seen is the smallest */
            ++nc;
        }
    }
    for (int c = model->n_cylinders - 1; c >= 0; --c) {
        int r = state_root(model, parent, model->cylinders[c].node_piston);
        if (r < 0) r = state_root(model, parent, model->cylinders[c].node_rod);
        keys[comp_of_root[r]].min_cyl = c;
    }
    for (int k = model->n_motors - 1; k >= 0; --k) {
        int r = state_root(model, parent, model->motors[k].node_a);
        if (r < 0) r = state_root(model, parent, model->motors[k].node_b);
        keys[comp_of_root[r]].min_motor = k;
    }
    qsort(keys, (size_t)nc, sizeof *keys, comp_key_cmp);
    for (int i = 0; i < nc; ++i) comp_of_root[keys[i].root] = i;
    return nc;
}

/* The circuit of element i of kind K: that of its first port that is a
 * volume (join_elements has checked that it has one). */
static int element_circuit(const hymo_model *model, int *parent, const int *comp_of_root, const hymo_element_kind *K,
                           int i)
{
    int nodes[HYMO_ELEMENT_PORTS_MAX], q = 0;
    K->ports(model, i, nodes);
    while (model->nodes[nodes[q]].kind != HYMO_NODE_VOLUME) ++q;
    return comp_of_root[state_root(model, parent, nodes[q])];
}

/* The index lists of the nc circuits out[]: their volumes and elements in
 * increasing order (pass 0 counts, then the lists are allocated and pass 1
 * fills them); 0, or -1 out of memory. */
static int fill_circuits(const hymo_model *model, int *parent, const int *comp_of_root, hymo_circuit_part *out,
                         int nc)
{
    for (int pass = 0; pass < 2; ++pass) {
        for (int c = 0; c < nc; ++c) {
            hymo_circuit_part *pt = &out[c];
            if (pass == 1) {
                pt->volumes = malloc((size_t)(pt->n_volumes > 0 ? pt->n_volumes : 1) * sizeof(int));
                if (!pt->volumes) return -1;
            }
            pt->n_volumes = 0;
            for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
                int *n, **list;
                hymo_part_fields(pt, &hymo_element_kinds[kd], &n, &list);
                if (pass == 1 && !(*list = malloc((size_t)(*n > 0 ? *n : 1) * sizeof(int)))) return -1;
                *n = 0;
            }
        }
        for (int k = 0; k < model->n_volumes; ++k) {
            hymo_circuit_part *pt = &out[comp_of_root[hymo_uf_find(parent, k)]];
            if (pass == 1) pt->volumes[pt->n_volumes] = k;
            ++pt->n_volumes;
        }
        for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
            const hymo_element_kind *K = &hymo_element_kinds[kd];
            const int ne = K->count(model);
            for (int i = 0; i < ne; ++i) {
                int *n, **list;
                hymo_part_fields(&out[element_circuit(model, parent, comp_of_root, K, i)], K, &n, &list);
                if (pass == 1) (*list)[*n] = i;
                ++*n;
            }
        }
    }
    return 0;
}

/* "circuitN(...)": its cylinders, then its motors, or its first volume */
static void name_circuit(const hymo_model *model, hymo_circuit_part *pt, int number)
{
    char head[32];
    snprintf(head, sizeof head, "circuit%d(", number);
    pt->name[0] = '\0';
    append_name(pt->name, sizeof pt->name, head);
    if (pt->n_cylinders + pt->n_motors > 0) {
        for (int j = 0; j < pt->n_cylinders + pt->n_motors; ++j) {
            if (j > 0) append_name(pt->name, sizeof pt->name, ",");
            append_name(pt->name, sizeof pt->name,
                        j < pt->n_cylinders ? model->cylinders[pt->cylinders[j]].name
                                            : model->motors[pt->motors[j - pt->n_cylinders]].name);
        }
    } else {
        for (int k = 0; k < model->n_nodes; ++k)
            if (model->nodes[k].kind == HYMO_NODE_VOLUME && model->nodes[k].state == pt->volumes[0]) {
                append_name(pt->name, sizeof pt->name, model->nodes[k].name);
                break;
            }
    }
    append_name(pt->name, sizeof pt->name, ")");
}

hymo_status hymo_circuit_partition(const hymo_model *model, hymo_circuit_part **parts, int *n_parts,
                                   hymo_error *err)
{
    const int np = model->n_volumes;
    *parts = NULL;
    *n_parts = 0;
    int *parent = malloc((size_t)(np > 0 ? np : 1) * sizeof(int));
    int *comp_of_root = malloc((size_t)(np > 0 ? np : 1) * sizeof(int));
    comp_key *keys = malloc((size_t)(np > 0 ? np : 1) * sizeof(comp_key));
    hymo_circuit_part *out = NULL;
    hymo_status st = HYMO_OK;
    if (!parent || !comp_of_root || !keys) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (circuit partition)");
        goto done;
    }
    hymo_uf_init(parent, np);
    if ((st = join_elements(model, parent, err)) != HYMO_OK) goto done;
    const int nc = number_circuits(model, parent, comp_of_root, keys);
    out = calloc((size_t)(nc > 0 ? nc : 1), sizeof *out);
    if (!out || fill_circuits(model, parent, comp_of_root, out, nc)) {
        hymo_circuit_parts_free(out, nc);
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (circuit partition)");
        goto done;
    }
    for (int i = 0; i < nc; ++i) name_circuit(model, &out[i], i + 1);
    *parts = out;
    *n_parts = nc;
done:
    free(parent);
    free(comp_of_root);
    free(keys);
    return st;
}
