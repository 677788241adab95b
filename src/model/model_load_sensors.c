/* hymo — the `sensors:` section of a model file (docs/model-format.md,
 * "Sensors"): named output points whose global position, velocity and
 * acceleration are written to the output (docs/hdf5-format.md).
 *
 *   sensors:
 *     - name: tip
 *       point: bucket.tip           # a point of the model ("body.point", "ground.point" or a unique name)
 *     - name: elbow
 *       body: arm                   # a body (or ground) and
 *       point: [1.2, 0.0, 0.0]      # coordinates in its frame (or the name of one of its points)
 *       record: [position, velocity] # default: all three
 *
 * Called by model_load.c after the bodies (and their points) are loaded;
 * messages are one line "ORIGIN:LINE: sensors[i].field: problem". */
#include "model_load_sensors.h"
#include "number.h"
#include "model_load_ux.h" /* hymo_point_hint */

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    hymo_ydoc *doc;
    const char *origin;
    hymo_error *err;
} sctx;

static hymo_status sfail(const sctx *c, const hymo_ynode *at, int i, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static hymo_status sfail(const sctx *c, const hymo_ynode *at, int i, const char *field, const char *fmt, ...)
{
    char problem[HYMO_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    for (char *p = problem; *p; p++)
        if ((unsigned char)*p < 0x20) *p = ' ';
    const int line = at ? (int)at->line + 1 : 1;
    char where[96];
    if (i < 0)
        snprintf(where, sizeof where, "sensors");
    else if (field)
        snprintf(where, sizeof where, "sensors[%d].%s", i, field);
    else
        snprintf(where, sizeof where, "sensors[%d]", i);
    return hymo_error_set(c->err, HYMO_ERR_MODEL, "%s:%d: %s: %s", c->origin, line, where, problem);
}

static hymo_ynode *node(const sctx *c, int id) { return hymo_ydoc_node(c->doc, id); }

static const char *text(const hymo_ynode *n) { return (const char *)n->data.value; }

static int is_plain_null(const hymo_ynode *n)
{
    if (!n || n->type != YAML_SCALAR_NODE || n->style != YAML_PLAIN_SCALAR_STYLE) return 0;
    const char *s = text(n);
    return !s[0] || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static int is_text(const hymo_ynode *n) { return n && n->type == YAML_SCALAR_NODE && !is_plain_null(n); }

static hymo_ynode *get(const sctx *c, const hymo_ynode *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.pairs; p < hymo_ynode_pairs_end(map); p++) {
        hymo_ynode *k = node(c, p->key);
        if (k && k->type == YAML_SCALAR_NODE && !strcmp(text(k), key)) return node(c, p->value);
    }
    return NULL;
}

/* A finite number (strtod's syntax, white space after it allowed; number.h). */
static int number(const hymo_ynode *n, double *out)
{
    return is_text(n) && hymo_parse_number(text(n), HYMO_NUMBER_TRAILING_SPACE, out);
}

/* Point of `body` given by name (of one of its points) or as [x, y, z]. */
static hymo_status point_on(const sctx *c, const hymo_ynode *n, const hymo_model *m, int body, int i, double r[3])
{
    if (n->type == YAML_SEQUENCE_NODE) {
        const int len = (int)n->n;
        if (len != 3) return sfail(c, n, i, "point", "expected [x, y, z] (3 numbers), got %d items", len);
        for (int k = 0; k < 3; k++) {
            hymo_ynode *e = node(c, n->data.items[k]);
            if (!number(e, &r[k])) return sfail(c, e, i, "point", "item %d: expected a finite number", k);
        }
        return HYMO_OK;
    }
    if (!is_text(n)) return sfail(c, n, i, "point", "expected a point name or [x, y, z]");
    for (int p = 0; p < m->n_points; p++) {
        if (m->points[p].body == body && !strcmp(m->points[p].name, text(n))) {
            memcpy(r, m->points[p].r, sizeof m->points[p].r);
            return HYMO_OK;
        }
    }
    return sfail(c, n, i, "point", "unknown point '%s' on %s%s", text(n), body == HYMO_GROUND ? "" : "body ",
                 body == HYMO_GROUND ? "ground" : m->bodies[body].name);
}

static hymo_status load_one(const sctx *c, const hymo_ynode *sn, hymo_model *m, int i)
{
    static const char *const keys[] = {"name", "body", "point", "record", NULL};
    hymo_sensor *se = &m->sensors[i];
    memset(se, 0, sizeof *se);
    if (sn->type != YAML_MAPPING_NODE) return sfail(c, sn, i, NULL, "expected a mapping (name, point, ...)");
    for (yaml_node_pair_t *p = sn->data.pairs; p < hymo_ynode_pairs_end(sn); p++) {
        hymo_ynode *k = node(c, p->key);
        if (!is_text(k)) return sfail(c, k ? k : sn, i, NULL, "mapping keys must be plain names");
        int ok = 0;
        for (const char *const *a = keys; *a; a++) ok |= !strcmp(*a, text(k));
        if (!ok) return sfail(c, k, i, text(k), "unknown field (expected one of: name, body, point, record)");
    }
    /* name: unique among the sensors, no '.' (columns are NAME.x, ...) */
    hymo_ynode *nn = get(c, sn, "name");
    if (!nn) return sfail(c, sn, i, "name", "missing");
    if (!is_text(nn)) return sfail(c, nn, i, "name", "expected a name");
    const char *name = text(nn);
    const size_t len = strlen(name);
    if (len >= HYMO_NAME_MAX) {
        return sfail(c, nn, i, "name", "name '%.40s...' is too long (at most %d characters)", name, HYMO_NAME_MAX - 1);
    }
    for (const char *q = name; *q; q++) {
        if (*q == '.' || isspace((unsigned char)*q) || (unsigned char)*q < 0x20) {
            return sfail(c, nn, i, "name", "name '%s' must not contain '.', spaces or control characters", name);
        }
    }
    for (int j = 0; j < i; j++) {
        if (!strcmp(m->sensors[j].name, name)) {
            return sfail(c, nn, i, "name", "duplicate sensor name '%s' (sensors[%d])", name, j);
        }
    }
    snprintf(se->name, sizeof se->name, "%s", name);

    /* where: point (a model point), or body + point (name or coordinates) */
    hymo_ynode *bn = get(c, sn, "body"), *pn = get(c, sn, "point");
    if (!pn) return sfail(c, sn, i, "point", "missing (a point name such as body.point, or body: and [x, y, z])");
    if (bn) {
        if (!is_text(bn)) return sfail(c, bn, i, "body", "expected a body name or 'ground'");
        if (!strcmp(text(bn), "ground")) {
            se->body = HYMO_GROUND;
        } else {
            se->body = hymo_model_find_body(m, text(bn));
            if (se->body < 0) return sfail(c, bn, i, "body", "unknown body '%s'", text(bn));
        }
        hymo_status st = point_on(c, pn, m, se->body, i, se->r);
        if (st != HYMO_OK) return st;
    } else {
        if (!is_text(pn)) {
            return sfail(c, pn, i, "point",
                         "coordinates need the body they are fixed in (body: NAME); or name a point (body.point)");
        }
        const int p = hymo_model_find_point(m, text(pn));
        char hint[256]; /* what there is */
        if (p < 0) hymo_point_hint(m, text(pn), hint, sizeof hint);
        if (p < 0) return sfail(c, pn, i, "point", "unknown point '%s'%s", text(pn), hint);
        se->body = m->points[p].body;
        memcpy(se->r, m->points[p].r, sizeof se->r);
    }

    /* record: a list of position, velocity, acceleration (default all) */
    hymo_ynode *rn = get(c, sn, "record");
    if (!rn) {
        se->record = HYMO_SENSOR_POSITION | HYMO_SENSOR_VELOCITY | HYMO_SENSOR_ACCELERATION;
        return HYMO_OK;
    }
    static const char *const what[] = {"position", "velocity", "acceleration"};
    if (is_text(rn)) { /* a single word */
        for (int k = 0; k < 3; k++)
            if (!strcmp(text(rn), what[k])) se->record = 1 << k;
        if (!se->record) {
            return sfail(c, rn, i, "record", "unknown '%s' (expected position, velocity, acceleration)", text(rn));
        }
        return HYMO_OK;
    }
    if (rn->type != YAML_SEQUENCE_NODE) {
        return sfail(c, rn, i, "record", "expected a list of position, velocity, acceleration");
    }
    for (int *it = rn->data.items; it < hymo_ynode_items_end(rn); it++) {
        hymo_ynode *e = node(c, *it);
        int bit = 0;
        for (int k = 0; k < 3; k++)
            if (is_text(e) && !strcmp(text(e), what[k])) bit = 1 << k;
        if (!bit) {
            return sfail(c, e, i, "record", "unknown '%s' (expected position, velocity, acceleration)",
                         is_text(e) ? text(e) : "(not a word)");
        }
        if (se->record & bit) return sfail(c, e, i, "record", "'%s' given twice", text(e));
        se->record |= bit;
    }
    if (!se->record) return sfail(c, rn, i, "record", "empty: name at least one of position, velocity, acceleration");
    return HYMO_OK;
}

hymo_status hymo_model_load_sensors(hymo_ydoc *doc, hymo_ynode *root, const char *origin, hymo_model *m,
                                    hymo_error *err)
{
    sctx c = {doc, origin ? origin : "<string>", err};
    hymo_ynode *seq = get(&c, root, "sensors");
    if (!seq || is_plain_null(seq)) return HYMO_OK;
    if (seq->type != YAML_SEQUENCE_NODE) return sfail(&c, seq, -1, NULL, "expected a list of sensors");
    const int n = (int)seq->n;
    if (n == 0) return HYMO_OK;
    m->sensors = calloc((size_t)n, sizeof *m->sensors);
    if (!m->sensors) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++) {
        hymo_status st = load_one(&c, node(&c, seq->data.items[i]), m, i);
        if (st != HYMO_OK) return st;
        m->n_sensors = i + 1;
    }
    return HYMO_OK;
}
