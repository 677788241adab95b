/* Circuit partition for split-mode co-simulation (SPEC §7): connected
 * components of the volume nodes. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit.h"

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
    int root, min_cyl, min_vol, min_motor; /* min_motor: motor-cosim */
} comp_key;

static int comp_key_cmp(const void *a, const void *b)
{
    const comp_key *x = a, *y = b;
    if (x->min_cyl != y->min_cyl) return x->min_cyl < y->min_cyl ? -1 : 1;
    if (x->min_motor != y->min_motor) return x->min_motor < y->min_motor ? -1 : 1;
    if (x->min_vol != y->min_vol) return x->min_vol < y->min_vol ? -1 : 1;
    return 0;
}

hymo_status hymo_circuit_partition(const hymo_model *model, hymo_circuit_part **parts, int *n_parts,
                                   hymo_error *err)
{
    const char *src = model->source_path ? model->source_path : model->name;
    const int np = model->n_volumes;
    *parts = NULL;
    *n_parts = 0;
    int *parent = malloc((size_t)(np > 0 ? np : 1) * sizeof(int));
    int *comp_of_root = malloc((size_t)(np > 0 ? np : 1) * sizeof(int));
    comp_key *keys = malloc((size_t)(np > 0 ? np : 1) * sizeof(comp_key));
    hymo_status st = HYMO_OK;
    if (!parent || !comp_of_root || !keys) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (circuit partition)");
        goto done;
    }
    hymo_uf_init(parent, np);

    for (int t = 0; t < model->n_throttles; ++t) {
        const hymo_throttle *th = &model->throttles[t];
        int nodes[2] = {th->node_a, th->node_b};
        if (uf_join_nodes(model, parent, nodes, 2) == 0) {
            st = hymo_error_set(err, HYMO_ERR_MODEL,
                                "%s: hydraulics.throttles[%d] (%s): connects no volume (%s - %s), so it belongs to "
                                "no hydraulic circuit",
                                src, t, th->name, model->nodes[th->node_a].name, model->nodes[th->node_b].name);
            goto done;
        }
    }
    for (int v = 0; v < model->n_valves; ++v) {
        const hymo_valve *va = &model->valves[v];
        int nodes[4] = {va->port_P, va->port_T, va->port_A, va->port_B};
        if (uf_join_nodes(model, parent, nodes, 4) == 0) {
            st = hymo_error_set(err, HYMO_ERR_MODEL,
                                "%s: hydraulics.valves[%d] (%s): none of its ports P, T, A, B is a volume, so it "
                                "belongs to no hydraulic circuit",
                                src, v, va->name);
            goto done;
        }
    }
    for (int r = 0; r < model->n_relief_valves; ++r) {
        const hymo_relief_valve *rv = &model->relief_valves[r];
        int nodes[2] = {rv->node_a, rv->node_b};
        if (uf_join_nodes(model, parent, nodes, 2) == 0) {
            st = hymo_error_set(err, HYMO_ERR_MODEL,
                                "%s: hydraulics.relief_valves[%d] (%s): connects no volume (%s - %s), so it belongs to "
                                "no hydraulic circuit",
                                src, r, rv->name, model->nodes[rv->node_a].name, model->nodes[rv->node_b].name);
            goto done;
        }
    }
    for (int k = 0; k < model->n_check_valves; ++k) {
        const hymo_check_valve *cv = &model->check_valves[k];
        int nodes[2] = {cv->node_a, cv->node_b};
        if (uf_join_nodes(model, parent, nodes, 2) == 0) {
            st = hymo_error_set(err, HYMO_ERR_MODEL,
                                "%s: hydraulics.check_valves[%d] (%s): connects no volume (%s - %s), so it belongs to "
                                "no hydraulic circuit",
                                src, k, cv->name, model->nodes[cv->node_a].name, model->nodes[cv->node_b].name);
            goto done;
        }
    }
    for (int j = 0; j < model->n_pumps; ++j) {
        const hymo_pump *pu = &model->pumps[j];
        int nodes[2] = {pu->node_in, pu->node_out};
        if (uf_join_nodes(model, parent, nodes, 2) == 0) {
            st = hymo_error_set(err, HYMO_ERR_MODEL,
                                "%s: hydraulics.pumps[%d] (%s): connects no volume (%s - %s), so it belongs to "
                                "no hydraulic circuit",
                                src, j, pu->name, model->nodes[pu->node_in].name, model->nodes[pu->node_out].name);
            goto done;
        }
    }
    for (int k = 0; k < model->n_flow_controls; ++k) {
        const hymo_flow_control *fc = &model->flow_controls[k];
        int nodes[2] = {fc->node_a, fc->node_b};
        if (uf_join_nodes(model, parent, nodes, 2) == 0) {
            st = hymo_error_set(err, HYMO_ERR_MODEL,
                                "%s: hydraulics.flow_control_valves[%d] (%s): connects no volume (%s - %s), so it belongs to "
                                "no hydraulic circuit",
                                src, k, fc->name, model->nodes[fc->node_a].name, model->nodes[fc->node_b].name);
            goto done;
        }
    }
    for (int c = 0; c < model->n_cylinders; ++c) {
        const hymo_cylinder *cy = &model->cylinders[c];
        int nodes[2] = {cy->node_piston, cy->node_rod};
        if (uf_join_nodes(model, parent, nodes, 2) == 0) {
            st = hymo_error_set(err, HYMO_ERR_MODEL,
                                "%s: hydraulics.cylinders[%d] (%s): neither chamber is a volume, so it belongs to no "
                                "hydraulic circuit",
                                src, c, cy->name);
            goto done;
        }
    }
    for (int k = 0; k < model->n_motors; ++k) { /* motor-cosim: the flow a -> b joins its ports */
        const hymo_motor *mo = &model->motors[k];
        int nodes[2] = {mo->node_a, mo->node_b};
        if (uf_join_nodes(model, parent, nodes, 2) == 0) {
            st = hymo_error_set(err, HYMO_ERR_MODEL,
                                "%s: hydraulics.motors[%d] (%s): neither port is a volume (%s - %s), so it belongs to no "
                                "hydraulic circuit",
                                src, k, mo->name, model->nodes[mo->node_a].name, model->nodes[mo->node_b].name);
            goto done;
        }
    }

    /* components, keyed by (smallest cylinder, smallest motor, smallest volume) */
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

    hymo_circuit_part *out = calloc((size_t)(nc > 0 ? nc : 1), sizeof *out);
    if (!out) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (circuit partition)");
        goto done;
    }
    /* element -> component */
#define COMP_OF_NODE(node) comp_of_root[state_root(model, parent, (node))]
    for (int pass = 0; pass < 2; ++pass) {
        /* pass 0 counts, pass 1 fills */
        for (int i = 0; i < nc; ++i) {
            hymo_circuit_part *pt = &out[i];
            if (pass == 1) {
                pt->volumes = malloc((size_t)(pt->n_volumes > 0 ? pt->n_volumes : 1) * sizeof(int));
                pt->valves = malloc((size_t)(pt->n_valves > 0 ? pt->n_valves : 1) * sizeof(int));
                pt->throttles = malloc((size_t)(pt->n_throttles > 0 ? pt->n_throttles : 1) * sizeof(int));
                pt->cylinders = malloc((size_t)(pt->n_cylinders > 0 ? pt->n_cylinders : 1) * sizeof(int));
                pt->reliefs = malloc((size_t)(pt->n_reliefs > 0 ? pt->n_reliefs : 1) * sizeof(int));
                pt->checks = malloc((size_t)(pt->n_checks > 0 ? pt->n_checks : 1) * sizeof(int));
                pt->pumps = malloc((size_t)(pt->n_pumps > 0 ? pt->n_pumps : 1) * sizeof(int));
                pt->fcs = malloc((size_t)(pt->n_fcs > 0 ? pt->n_fcs : 1) * sizeof(int));
                pt->motors = malloc((size_t)(pt->n_motors > 0 ? pt->n_motors : 1) * sizeof(int));
                if (!pt->volumes || !pt->valves || !pt->throttles || !pt->cylinders || !pt->reliefs || !pt->checks ||
                    !pt->pumps || !pt->fcs || !pt->motors) {
                    hymo_circuit_parts_free(out, nc);
                    st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (circuit partition)");
                    goto done;
                }
            }
            pt->n_volumes = pt->n_valves = pt->n_throttles = pt->n_cylinders = pt->n_reliefs = pt->n_checks = 0;
            pt->n_pumps = pt->n_fcs = pt->n_motors = 0;
        }
        for (int k = 0; k < np; ++k) {
            hymo_circuit_part *pt = &out[comp_of_root[hymo_uf_find(parent, k)]];
            if (pass == 1) pt->volumes[pt->n_volumes] = k;
            ++pt->n_volumes;
        }
        for (int v = 0; v < model->n_valves; ++v) {
            const hymo_valve *va = &model->valves[v];
            const int ports[4] = {va->port_P, va->port_T, va->port_A, va->port_B};
            int q = 0;
            while (model->nodes[ports[q]].kind != HYMO_NODE_VOLUME) ++q;
            hymo_circuit_part *pt = &out[COMP_OF_NODE(ports[q])];
            if (pass == 1) pt->valves[pt->n_valves] = v;
            ++pt->n_valves;
        }
        for (int t = 0; t < model->n_throttles; ++t) {
            const hymo_throttle *th = &model->throttles[t];
            int node = model->nodes[th->node_a].kind == HYMO_NODE_VOLUME ? th->node_a : th->node_b;
            hymo_circuit_part *pt = &out[COMP_OF_NODE(node)];
            if (pass == 1) pt->throttles[pt->n_throttles] = t;
            ++pt->n_throttles;
        }
        for (int r = 0; r < model->n_relief_valves; ++r) {
            const hymo_relief_valve *rv = &model->relief_valves[r];
            int node = model->nodes[rv->node_a].kind == HYMO_NODE_VOLUME ? rv->node_a : rv->node_b;
            hymo_circuit_part *pt = &out[COMP_OF_NODE(node)];
            if (pass == 1) pt->reliefs[pt->n_reliefs] = r;
            ++pt->n_reliefs;
        }
        for (int k = 0; k < model->n_check_valves; ++k) {
            const hymo_check_valve *cv = &model->check_valves[k];
            int node = model->nodes[cv->node_a].kind == HYMO_NODE_VOLUME ? cv->node_a : cv->node_b;
            hymo_circuit_part *pt = &out[COMP_OF_NODE(node)];
            if (pass == 1) pt->checks[pt->n_checks] = k;
            ++pt->n_checks;
        }
        for (int j = 0; j < model->n_pumps; ++j) {
            const hymo_pump *pu = &model->pumps[j];
            int node = model->nodes[pu->node_in].kind == HYMO_NODE_VOLUME ? pu->node_in : pu->node_out;
            hymo_circuit_part *pt = &out[COMP_OF_NODE(node)];
            if (pass == 1) pt->pumps[pt->n_pumps] = j;
            ++pt->n_pumps;
        }
        for (int k = 0; k < model->n_flow_controls; ++k) {
            const hymo_flow_control *fc = &model->flow_controls[k];
            int node = model->nodes[fc->node_a].kind == HYMO_NODE_VOLUME ? fc->node_a : fc->node_b;
            hymo_circuit_part *pt = &out[COMP_OF_NODE(node)];
            if (pass == 1) pt->fcs[pt->n_fcs] = k;
            ++pt->n_fcs;
        }
        for (int c = 0; c < model->n_cylinders; ++c) {
            const hymo_cylinder *cy = &model->cylinders[c];
            int node = model->nodes[cy->node_piston].kind == HYMO_NODE_VOLUME ? cy->node_piston : cy->node_rod;
            hymo_circuit_part *pt = &out[COMP_OF_NODE(node)];
            if (pass == 1) pt->cylinders[pt->n_cylinders] = c;
            ++pt->n_cylinders;
        }
        for (int k = 0; k < model->n_motors; ++k) { /* motor-cosim */
            const hymo_motor *mo = &model->motors[k];
            int node = model->nodes[mo->node_a].kind == HYMO_NODE_VOLUME ? mo->node_a : mo->node_b;
            hymo_circuit_part *pt = &out[COMP_OF_NODE(node)];
            if (pass == 1) pt->motors[pt->n_motors] = k;
            ++pt->n_motors;
        }
    }
#undef COMP_OF_NODE
    for (int i = 0; i < nc; ++i) {
        hymo_circuit_part *pt = &out[i];
        char head[32];
        snprintf(head, sizeof head, "circuit%d(", i + 1);
        pt->name[0] = '\0';
        append_name(pt->name, sizeof pt->name, head);
        if (pt->n_cylinders + pt->n_motors > 0) { /* its cylinders, then its motors */
            for (int j = 0; j < pt->n_cylinders + pt->n_motors; ++j) {
                if (j > 0) append_name(pt->name, sizeof pt->name, ",");
                append_name(pt->name, sizeof pt->name,
                            j < pt->n_cylinders ? model->cylinders[pt->cylinders[j]].name
                                                : model->motors[pt->motors[j - pt->n_cylinders]].name);
            }
        } else { /* named after its first volume */
            for (int k = 0; k < model->n_nodes; ++k)
                if (model->nodes[k].kind == HYMO_NODE_VOLUME && model->nodes[k].state == pt->volumes[0]) {
                    append_name(pt->name, sizeof pt->name, model->nodes[k].name);
                    break;
                }
        }
        append_name(pt->name, sizeof pt->name, ")");
    }
    *parts = out;
    *n_parts = nc;
done:
    free(parent);
    free(comp_of_root);
    free(keys);
    return st;
}
