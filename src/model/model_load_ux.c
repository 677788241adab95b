/* Source lines for the checks made after loading, and the
 * switching functions of the signals' dead-zone and clamp kinks
 * (docs/model-format.md, "Signal shaping"; docs/architecture.md, "Events"). */
#include "model_load_ux.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hymo_ynode *get(hymo_ydoc *doc, hymo_ynode *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = map->data.pairs; p < hymo_ynode_pairs_end(map); ++p) {
        hymo_ynode *k = hymo_ydoc_node(doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.value, key) == 0)
            return hymo_ydoc_node(doc, p->value);
    }
    return NULL;
}

static int line_of(const hymo_ynode *n) { return n ? (int)n->line + 1 : 0; }

/* whether signal s feeds a valve's reference, an external force or torque,
 * a pump's speed or a flow control valve's set flow */
static int feeds(const hymo_model *m, int s)
{
    for (int v = 0; v < m->n_valves; ++v)
        if (m->valves[v].signal == s) return 1;
    for (int j = 0; j < m->n_pumps; ++j)
        if (m->pumps[j].speed_signal == s) return 1;
    for (int f = 0; f < m->n_flow_controls; ++f)
        if (m->flow_controls[f].set_flow_signal == s) return 1;
    for (int e = 0; e < m->n_force_elements; ++e) {
        const hymo_force_element *el = &m->force_elements[e];
        if (el->type != HYMO_FE_EXTERNAL) continue;
        for (int k = 0; k < 3; ++k)
            if (el->force_signal[k] == s || el->torque_signal[k] == s) return 1;
    }
    return 0;
}

hymo_status hymo_load_ux(hymo_ydoc *doc, hymo_ynode *root, const char *origin, hymo_model *m,
                         hymo_error *err)
{
    m->independent_line = line_of(get(doc, root, "independent"));
    if (m->n_volumes > 0) {
        m->volume_p0_line = calloc((size_t)m->n_volumes, sizeof *m->volume_p0_line);
        if (!m->volume_p0_line) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        hymo_ynode *vols = get(doc, get(doc, root, "hydraulics"), "volumes");
        for (int k = 0; vols && vols->type == YAML_SEQUENCE_NODE && k < m->n_volumes; ++k) {
            if ((unsigned)k >= vols->n) break;
            const int *it = vols->data.items + k;
            hymo_ynode *vn = hymo_ydoc_node(doc, *it);
            hymo_ynode *pn = get(doc, vn, "initial_pressure");
            m->volume_p0_line[k] = line_of(pn ? pn : vn);
        }
    }
    if (m->n_cylinders > 0) {
        m->cylinder_line = calloc((size_t)m->n_cylinders, sizeof *m->cylinder_line);
        if (!m->cylinder_line) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        hymo_ynode *cs = get(doc, get(doc, root, "hydraulics"), "cylinders");
        for (int k = 0; cs && cs->type == YAML_SEQUENCE_NODE && k < m->n_cylinders; ++k) {
            if ((unsigned)k >= cs->n) break;
            const int *it = cs->data.items + k;
            m->cylinder_line[k] = line_of(hymo_ydoc_node(doc, *it));
        }
    }
    if (m->n_drivers > 0) {
        m->driver_line = calloc((size_t)m->n_drivers, sizeof *m->driver_line);
        if (!m->driver_line) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        hymo_ynode *dj = get(doc, root, "driven_joints");
        for (int k = 0; dj && dj->type == YAML_SEQUENCE_NODE && k < m->n_drivers; ++k) {
            if ((unsigned)k >= dj->n) break;
            const int *it = dj->data.items + k;
            hymo_ynode *dn = hymo_ydoc_node(doc, *it);
            m->driver_line[k] = line_of(dn);
            const hymo_signal *sig = &m->signals[m->drivers[k].signal];
            const hymo_signal_shape *sh = sig->shape;
            const int dz = sh && sh->has_dead_zone && sh->dead_lo < sh->dead_hi;
            const int cl = sh && sh->has_clamp && sh->clamp_lo < sh->clamp_hi;
            if (dz || cl) {
                hymo_ynode *sn = get(doc, dn, "signal");
                return hymo_error_set(err, HYMO_ERR_MODEL,
                                      "%s:%d: driven_joints[%d].signal: signal '%s' has a %s: where the motion "
                                      "meets its %s the joint's velocity jumps, an impulse the driven joint cannot "
                                      "follow; drive the joint with a signal without dead_zone and clamp",
                                      origin, line_of(sn ? sn : dn), k, sig->name, dz ? "dead_zone" : "clamp",
                                      dz ? "edges" : "limits");
            }
        }
    }
    for (int s = 0; s < m->n_signals; ++s) {
        hymo_signal_shape *sh = m->signals[s].shape;
        if (!sh) continue;
        sh->n_kinks = 0;
        sh->sw_first = -1;
        if (!feeds(m, s)) continue;
        sh->n_kinks = hymo_signal_kink_levels(&m->signals[s], sh->kink_level);
        if (sh->n_kinks > 0) {
            sh->sw_first = m->n_force_switches;
            m->n_force_switches += sh->n_kinks;
        }
    }
    return HYMO_OK;
}

static const char *body_name(const hymo_model *m, int b) { return b == HYMO_GROUND ? "ground" : m->bodies[b].name; }

/* appends "fmt" with a, b to buf (used of len); "..." once it is full */
static void add(char *buf, size_t len, size_t *used, const char *fmt, const char *a, const char *b)
{
    if (*used >= len) return; /* full */
    const size_t room = len - *used;
    int w = snprintf(buf + *used, room, fmt, a, b);
    if (w >= 0 && (size_t)w + 5 < room) {
        *used += (size_t)w;
        return;
    }
    buf[*used] = '\0';
    if (room > 4) snprintf(buf + *used, room, "...");
    *used = len;
}

void hymo_point_hint(const hymo_model *m, const char *name, char *buf, size_t len)
{
    if (!len) return;
    buf[0] = '\0';
    if (len < 16) return;
    size_t used = 0;
    const size_t cap = len - 2; /* room for the closing ')' */
    const char *dot = strchr(name, '.');
    int body = -3; /* -3: no body given */
    if (dot) {
        const size_t bl = (size_t)(dot - name);
        body = -2;
        if (bl == 6 && !strncmp(name, "ground", 6)) body = HYMO_GROUND;
        for (int i = 0; body == -2 && i < m->n_bodies; ++i)
            if (strlen(m->bodies[i].name) == bl && !strncmp(m->bodies[i].name, name, bl)) body = i;
        if (body == -2) {
            char bn[HYMO_NAME_MAX];
            snprintf(bn, sizeof bn, "%.*s", (int)(bl < sizeof bn - 1 ? bl : sizeof bn - 1), name);
            add(buf, cap, &used, " (no body '%s'; bodies: ground%s", bn, "");
            for (int i = 0; i < m->n_bodies; ++i) add(buf, cap, &used, ", %s%s", m->bodies[i].name, "");
            strcat(buf, ")");
            return;
        }
    }
    int n = 0;
    for (int p = 0; p < m->n_points; ++p) {
        const hymo_point *pt = &m->points[p];
        if (body != -3 && pt->body != body) continue;
        if (body != -3)
            add(buf, cap, &used, n ? ", %s%s" : " (points of %s: %s", n ? pt->name : body_name(m, body),
                n ? "" : pt->name);
        else
            add(buf, cap, &used, n ? ", %s.%s" : " (points: %s.%s", body_name(m, pt->body), pt->name);
        ++n;
    }
    if (n == 0) {
        if (body != -3) snprintf(buf, len, " (%s has no named points)", body_name(m, body));
        else snprintf(buf, len, " (the model has no named points)");
        return;
    }
    strcat(buf, ")");
}
