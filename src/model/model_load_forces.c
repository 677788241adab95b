/* The `forces:` section of a model file (docs/model-format.md, "forces"):
 * mechanical force elements.  Called by the loader (src/model/model_load.c)
 * after the bodies, points and signals are loaded; errors are
 * "file:line: forces[k].field: problem". */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "model_load_forces.h"
#include "name_index.h"
#include "number.h"
#include "model_load_ux.h" /* hymo_point_hint */

typedef struct {
    hymo_ydoc *doc;
    const char *origin;
    hymo_error *err;
    int item; /* index in forces */
    const hymo_model *m;
    /* lookups (core/name_index.h): bodies and joints by name, points as
     * "BODY\x1fNAME" (body index) and by name alone (the first, with
     * pcount[first] points of that name), force elements by name */
    hymo_name_index bodies, joints, points, pnames, elements;
    int *pcount;
} fctx;

/* The lookups of the model's bodies, joints and points; 0 when out of memory. */
static int fctx_index(fctx *c)
{
    const hymo_model *m = c->m;
    c->pcount = calloc((size_t)m->n_points + 1, sizeof *c->pcount);
    if (!c->pcount) return 0;
    for (int j = 0; j < m->n_bodies; j++)
        if (hymo_name_index_put(&c->bodies, m->bodies[j].name, j) == -2 ||
            hymo_name_index_put(&c->joints, m->bodies[j].joint_name, j) == -2)
            return 0;
    for (int i = 0; i < m->n_points; i++) {
        char b[16];
        snprintf(b, sizeof b, "%d", m->points[i].body);
        if (hymo_name_index_put2(&c->points, b, m->points[i].name, i) == -2) return 0;
        const int first = hymo_name_index_put(&c->pnames, m->points[i].name, i);
        if (first == -2) return 0;
        c->pcount[first >= 0 ? first : i]++;
    }
    return 1;
}

static void fctx_free(fctx *c)
{
    hymo_name_index *ix[] = {&c->bodies, &c->joints, &c->points, &c->pnames, &c->elements};
    for (size_t i = 0; i < sizeof ix / sizeof ix[0]; i++) hymo_name_index_free(ix[i]);
    free(c->pcount);
}

/* hymo_model_find_point's answer for "BODY.NAME" or "ground.NAME". */
static int find_point_dotted(const fctx *c, const char *name)
{
    const char *dot = strchr(name, '.');
    char body[HYMO_NAME_MAX + 1], b[16];
    const size_t len = (size_t)(dot - name);
    if (len >= sizeof body) return -1;
    memcpy(body, name, len);
    body[len] = '\0';
    int bi = HYMO_GROUND;
    if (strcmp(body, "ground") != 0 && (bi = hymo_name_index_get(&c->bodies, body)) < 0) return -1;
    snprintf(b, sizeof b, "%d", bi);
    return hymo_name_index_get2(&c->points, b, dot + 1);
}

static const double k_pi = 3.14159265358979323846;

static int line_of(const hymo_ynode *n) { return n ? (int)n->line + 1 : 1; }

static hymo_status ffail(fctx *c, const hymo_ynode *at, const char *field, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static hymo_status ffail(fctx *c, const hymo_ynode *at, const char *field, const char *fmt, ...)
{
    char problem[HYMO_ERROR_MSG_MAX / 2], where[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    if (c->item < 0) snprintf(where, sizeof where, "forces");
    else if (field) snprintf(where, sizeof where, "forces[%d].%s", c->item, field);
    else snprintf(where, sizeof where, "forces[%d]", c->item);
    hymo_error_set(c->err, HYMO_ERR_MODEL, "%s:%d: %s: %s", c->origin, line_of(at), where, problem);
    if (c->err)
        for (char *s = c->err->message; *s; s++)
            if ((unsigned char)*s < 0x20) *s = ' ';
    return HYMO_ERR_MODEL;
}

static const char *sval(const hymo_ynode *n) { return (const char *)n->data.value; }

static int is_null(const hymo_ynode *n)
{
    if (!n || n->type != YAML_SCALAR_NODE || n->style != YAML_PLAIN_SCALAR_STYLE) return 0;
    const char *s = sval(n);
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

static hymo_ynode *get(fctx *c, hymo_ynode *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.pairs; p < hymo_ynode_pairs_end(map); p++) {
        hymo_ynode *k = hymo_ydoc_node(c->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && !strcmp(sval(k), key))
            return hymo_ydoc_node(c->doc, p->value);
    }
    return NULL;
}

/* A whole string as a finite decimal number (number.h), as the loader's. */
static int parse_number(const char *s, double *out)
{
    return hymo_parse_number(s, HYMO_NUMBER_DECIMAL | HYMO_NUMBER_RANGE, out);
}

/* A number; with `angle` also "90 deg" / "1.2 rad". */
static hymo_status rd_num(fctx *c, hymo_ynode *n, const char *field, int angle, double *out)
{
    if (!n || n->type != YAML_SCALAR_NODE || is_null(n))
        return ffail(c, n, field, "expected a number");
    const char *s = sval(n);
    if (n->style == YAML_PLAIN_SCALAR_STYLE && parse_number(s, out)) return HYMO_OK;
    if (angle) {
        char num[64];
        const char *sp = strchr(s, ' ');
        if (sp && (size_t)(sp - s) < sizeof num) {
            memcpy(num, s, (size_t)(sp - s));
            num[sp - s] = '\0';
            const char *unit = sp;
            while (*unit == ' ') unit++;
            if (parse_number(num, out) && (!strcmp(unit, "deg") || !strcmp(unit, "rad"))) {
                if (!strcmp(unit, "deg")) *out *= k_pi / 180.0;
                return HYMO_OK;
            }
        }
        return ffail(c, n, field, "expected a number (rad or m), or a string like \"-135 deg\", got '%s'", s);
    }
    return ffail(c, n, field, "expected a finite number, got '%s'", s);
}

typedef enum { ANY, POSITIVE, NONNEGATIVE } range;

/* map[key] as a number (default dflt if absent and not required). */
static hymo_status f_num(fctx *c, hymo_ynode *map, const char *key, int required, double dflt, range r, int angle,
                         double *out)
{
    hymo_ynode *n = get(c, map, key);
    if (!n) {
        if (required) return ffail(c, map, NULL, "missing field '%s'", key);
        *out = dflt;
        return HYMO_OK;
    }
    hymo_status st = rd_num(c, n, key, angle, out);
    if (st) return st;
    if (r == POSITIVE && !(*out > 0.0)) return ffail(c, n, key, "must be > 0, got %g", *out);
    if (r == NONNEGATIVE && !(*out >= 0.0)) return ffail(c, n, key, "must be >= 0, got %g", *out);
    return HYMO_OK;
}

static hymo_status f_str(fctx *c, hymo_ynode *map, const char *key, int required, const char **out)
{
    hymo_ynode *n = get(c, map, key);
    *out = NULL;
    if (!n) return required ? ffail(c, map, NULL, "missing field '%s'", key) : HYMO_OK;
    if (n->type != YAML_SCALAR_NODE || is_null(n)) return ffail(c, n, key, "expected a name");
    *out = sval(n);
    return HYMO_OK;
}

/* A point: "body.point", "ground.point" or an unambiguous "point". */
static hymo_status f_point(fctx *c, hymo_ynode *map, const char *key, int *out)
{
    const char *name;
    hymo_status st = f_str(c, map, key, 1, &name);
    if (st) return st;
    hymo_ynode *n = get(c, map, key);
    const hymo_model *m = c->m;
    if (strchr(name, '.')) {
        *out = find_point_dotted(c, name);
        char hint[256]; /* what there is */
        if (*out < 0) hymo_point_hint(m, name, hint, sizeof hint);
        return *out < 0 ? ffail(c, n, key, "unknown point '%s'%s", name, hint) : HYMO_OK;
    }
    const int found = hymo_name_index_get(&c->pnames, name), count = found >= 0 ? c->pcount[found] : 0;
    char hint[256]; /* what there is */
    if (count == 0) hymo_point_hint(m, name, hint, sizeof hint);
    if (count == 0) return ffail(c, n, key, "unknown point '%s'%s", name, hint);
    if (count > 1)
        return ffail(c, n, key, "point name '%s' is ambiguous (%d bodies have it); write BODY.%s", name, count,
                     name);
    *out = found;
    return HYMO_OK;
}

static hymo_status f_joint(fctx *c, hymo_ynode *map, int *out)
{
    const char *name;
    hymo_status st = f_str(c, map, "joint", 1, &name);
    if (st) return st;
    const int j = hymo_name_index_get(&c->joints, name);
    if (j >= 0) {
        *out = j;
        return HYMO_OK;
    }
    return ffail(c, get(c, map, "joint"), "joint", "unknown joint '%s' (joints are named in bodies[].joint.name)",
                 name);
}

static int signal_index(const hymo_model *m, const char *name)
{
    for (int i = 0; i < m->n_signals; i++)
        if (!strcmp(m->signals[i].name, name)) return i;
    return -1;
}

/* [x, y, z]: each a number; for `signals` lists each a signal name or null. */
static hymo_status f_vec3(fctx *c, hymo_ynode *map, const char *key, double v[3], int sig[3])
{
    hymo_ynode *n = get(c, map, key);
    if (!n) return HYMO_OK;
    if (n->type != YAML_SEQUENCE_NODE || (int)n->n != 3)
        return ffail(c, n, key, "expected a list of 3 %s", sig ? "signal names or nulls" : "numbers");
    for (int k = 0; k < 3; k++) {
        hymo_ynode *it = hymo_ydoc_node(c->doc, n->data.items[k]);
        if (!sig) {
            hymo_status st = rd_num(c, it, key, 0, &v[k]);
            if (st) return st;
        } else if (!is_null(it)) {
            if (!it || it->type != YAML_SCALAR_NODE) return ffail(c, it, key, "expected a signal name or null");
            sig[k] = signal_index(c->m, sval(it));
            if (sig[k] < 0) return ffail(c, it, key, "unknown signal '%s'", sval(it));
        }
    }
    return HYMO_OK;
}

static hymo_status check_keys(fctx *c, hymo_ynode *map, const char *type, const char *const *allowed)
{
    static const char *const common[] = {"name", "type", NULL};
    for (yaml_node_pair_t *p = map->data.pairs; p < hymo_ynode_pairs_end(map); p++) {
        hymo_ynode *k = hymo_ydoc_node(c->doc, p->key);
        if (!k || k->type != YAML_SCALAR_NODE) return ffail(c, k, NULL, "keys must be names");
        int ok = 0;
        for (const char *const *a = common; *a && !ok; a++) ok = !strcmp(*a, sval(k));
        for (const char *const *a = allowed; *a && !ok; a++) ok = !strcmp(*a, sval(k));
        if (!ok) {
            char list[256] = "";
            for (const char *const *a = allowed; *a; a++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", a == allowed ? "" : ", ", *a);
            return ffail(c, k, NULL, "unknown field '%s' for a %s (allowed: name, type, %s)", sval(k), type, list);
        }
    }
    return HYMO_OK;
}

static hymo_status load_element(fctx *c, hymo_ynode *n, hymo_model *m)
{
    hymo_force_element *el = &m->force_elements[m->n_force_elements];
    memset(el, 0, sizeof *el);
    el->point_a = el->point_b = el->joint = -1;
    el->sw_lower = el->sw_upper = -1;
    for (int k = 0; k < 3; k++) el->force_signal[k] = el->torque_signal[k] = -1;
    if (!n || n->type != YAML_MAPPING_NODE) return ffail(c, n, NULL, "expected a mapping (a force element)");
    const char *name, *type;
    hymo_status st;
    if ((st = f_str(c, n, "name", 1, &name))) return st;
    size_t len = strlen(name);
    if (len == 0 || len >= HYMO_NAME_MAX) return ffail(c, get(c, n, "name"), "name", "name must have 1 to %d characters", HYMO_NAME_MAX - 1);
    for (const char *p = name; *p; p++)
        if (*p == '.' || isspace((unsigned char)*p) || (unsigned char)*p < 0x20)
            return ffail(c, get(c, n, "name"), "name", "name '%s' must not contain '.', spaces or control characters", name);
    const int dup = hymo_name_index_put(&c->elements, name, m->n_force_elements);
    if (dup == -2) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    if (dup >= 0) return ffail(c, get(c, n, "name"), "name", "duplicate force element name '%s'", name);
    snprintf(el->name, sizeof el->name, "%s", name);
    if ((st = f_str(c, n, "type", 1, &type))) return st;
    if (!strcmp(type, "spring_damper")) {
        static const char *const keys[] = {"point_a", "point_b", "stiffness", "damping", "free_length", "preload", NULL};
        el->type = HYMO_FE_SPRING_DAMPER;
        if ((st = check_keys(c, n, type, keys)) || (st = f_point(c, n, "point_a", &el->point_a)) ||
            (st = f_point(c, n, "point_b", &el->point_b)) ||
            (st = f_num(c, n, "stiffness", 0, 0.0, NONNEGATIVE, 0, &el->stiffness)) ||
            (st = f_num(c, n, "damping", 0, 0.0, NONNEGATIVE, 0, &el->damping)) ||
            (st = f_num(c, n, "free_length", 1, 0.0, NONNEGATIVE, 0, &el->free_length)) ||
            (st = f_num(c, n, "preload", 0, 0.0, ANY, 0, &el->preload)))
            return st;
        if (m->points[el->point_a].body == m->points[el->point_b].body)
            return ffail(c, get(c, n, "point_b"), "point_b", "both points are on the same body (no force between them)");
    } else if (!strcmp(type, "joint_spring")) {
        static const char *const keys[] = {"joint", "stiffness", "damping", "free_position", "preload", NULL};
        el->type = HYMO_FE_JOINT_SPRING;
        if ((st = check_keys(c, n, type, keys)) || (st = f_joint(c, n, &el->joint)) ||
            (st = f_num(c, n, "stiffness", 0, 0.0, NONNEGATIVE, 0, &el->stiffness)) ||
            (st = f_num(c, n, "damping", 0, 0.0, NONNEGATIVE, 0, &el->damping)) ||
            (st = f_num(c, n, "free_position", 0, 0.0, ANY, 1, &el->free_length)) ||
            (st = f_num(c, n, "preload", 0, 0.0, ANY, 0, &el->preload)))
            return st;
    } else if (!strcmp(type, "external")) {
        static const char *const keys[] = {"point", "frame", "force", "force_signals", "torque", "torque_signals", NULL};
        el->type = HYMO_FE_EXTERNAL;
        const char *frame = NULL;
        if ((st = check_keys(c, n, type, keys)) || (st = f_point(c, n, "point", &el->point_a)) ||
            (st = f_str(c, n, "frame", 0, &frame)) || (st = f_vec3(c, n, "force", el->force, NULL)) ||
            (st = f_vec3(c, n, "force_signals", NULL, el->force_signal)) ||
            (st = f_vec3(c, n, "torque", el->torque, NULL)) ||
            (st = f_vec3(c, n, "torque_signals", NULL, el->torque_signal)))
            return st;
        if (frame && strcmp(frame, "global") && strcmp(frame, "body"))
            return ffail(c, get(c, n, "frame"), "frame", "expected 'global' or 'body', got '%s'", frame);
        el->body_frame = frame && !strcmp(frame, "body");
        if (m->points[el->point_a].body == HYMO_GROUND)
            return ffail(c, get(c, n, "point"), "point", "a point on the ground takes no force");
        if (!get(c, n, "force") && !get(c, n, "torque"))
            return ffail(c, n, NULL, "an external element needs 'force' or 'torque'");
    } else if (!strcmp(type, "joint_friction")) {
        static const char *const keys[] = {"joint", "coulomb", "friction_velocity", "viscous", NULL};
        el->type = HYMO_FE_JOINT_FRICTION;
        if ((st = check_keys(c, n, type, keys)) || (st = f_joint(c, n, &el->joint)) ||
            (st = f_num(c, n, "coulomb", 0, 0.0, NONNEGATIVE, 0, &el->coulomb)) ||
            (st = f_num(c, n, "friction_velocity", 0, 0.01, POSITIVE, 0, &el->friction_velocity)) ||
            (st = f_num(c, n, "viscous", 0, 0.0, NONNEGATIVE, 0, &el->viscous)))
            return st;
    } else if (!strcmp(type, "joint_limit")) {
        static const char *const keys[] = {"joint", "lower", "upper", "stiffness", "damping", NULL};
        el->type = HYMO_FE_JOINT_LIMIT;
        if ((st = check_keys(c, n, type, keys)) || (st = f_joint(c, n, &el->joint)) ||
            (st = f_num(c, n, "lower", 0, 0.0, ANY, 1, &el->lower)) ||
            (st = f_num(c, n, "upper", 0, 0.0, ANY, 1, &el->upper)) ||
            (st = f_num(c, n, "stiffness", 1, 0.0, POSITIVE, 0, &el->stiffness)) ||
            (st = f_num(c, n, "damping", 0, 0.0, NONNEGATIVE, 0, &el->damping)))
            return st;
        el->has_lower = get(c, n, "lower") != NULL;
        el->has_upper = get(c, n, "upper") != NULL;
        if (!el->has_lower && !el->has_upper) return ffail(c, n, NULL, "a joint limit needs 'lower' or 'upper'");
        if (el->has_lower && el->has_upper && !(el->lower < el->upper))
            return ffail(c, get(c, n, "upper"), "upper", "must be above lower (%g), got %g", el->lower, el->upper);
        if (el->has_lower) el->sw_lower = m->n_force_switches++;
        if (el->has_upper) el->sw_upper = m->n_force_switches++;
    } else {
        return ffail(c, get(c, n, "type"), "type",
                     "unknown force element type '%s' (spring_damper, joint_spring, external, joint_friction, "
                     "joint_limit)",
                     type);
    }
    m->n_force_elements++;
    return HYMO_OK;
}

hymo_status hymo_load_forces(hymo_ydoc *doc, hymo_ynode *seq, const char *origin, hymo_error *err,
                             hymo_model *m)
{
    fctx c = {.doc = doc, .origin = origin, .err = err, .item = -1, .m = m};
    if (!seq || is_null(seq)) return HYMO_OK;
    if (seq->type != YAML_SEQUENCE_NODE) return ffail(&c, seq, NULL, "expected a list of force elements");
    const int n = (int)seq->n;
    if (n == 0) return HYMO_OK;
    m->force_elements = calloc((size_t)n, sizeof *m->force_elements);
    if (!m->force_elements) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    hymo_status st = fctx_index(&c) ? HYMO_OK : hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n && !st; k++) {
        c.item = k;
        st = load_element(&c, hymo_ydoc_node(doc, seq->data.items[k]), m);
    }
    fctx_free(&c);
    return st;
}
