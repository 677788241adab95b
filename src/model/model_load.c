/* hymo — model file loader (YAML, libyaml document API).
 *
 * The format is documented in docs/model-format.md.  The loader is strict:
 * unknown keys, wrong types, wrong vector lengths, duplicate keys or names,
 * unresolved references and non-physical values are errors.  Every message
 * is a single line "ORIGIN:LINE: FIELD.PATH: problem"; a missing field
 * points at the line of the mapping that should contain it.
 *
 * Error codes: HYMO_ERR_IO (file cannot be read), HYMO_ERR_PARSE (not valid
 * YAML: syntax, duplicate mapping keys, non-scalar keys, empty file, more
 * than one document), HYMO_ERR_MODEL (everything else). */
#include "compiled.h"
#include "hymo/model.h"
#include "model_load_sensors.h" /* branch sensors */
#include "hymo/reference.h"
#include "motor.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "number.h"
#include "model_load_forces.h"
#include "model_load_ux.h" /* branch s18-ux */

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        hymo_status try_status_ = (expr);                                                          \
        if (try_status_ != HYMO_OK) return try_status_;                                            \
    } while (0)

/* The newest format version; FORMAT_MIN the oldest still read.  Version 2
 * (docs/model-format.md, "Versioning") changed one default: a fluid without
 * `model` is entrained_air (version 1: constant, the meaning it always had). */
#define FORMAT_VERSION 2
#define FORMAT_MIN 1

/* Defaults (SPEC §3 and §2). */
#define DEFAULT_DT 1.0e-3
#define DEFAULT_T_END 10.0
#define DEFAULT_PENALTY_ALPHA 1.0e11
#define DEFAULT_MAX_ITER 20
#define DEFAULT_TOL_POSITION 1.0e-7
#define DEFAULT_TOL_PRESSURE 1.0e-2
#define DEFAULT_TOL_SPOOL 1.0e-7
#define DEFAULT_P_TRANSITION 2.0e5
#define DEFAULT_FRICTION_VELOCITY 0.01

static const double k_pi = 3.14159265358979323846;

/* ------------------------------------------------------------------ */
/* Loader context: document, origin for messages, current field path.   */

typedef struct {
    yaml_node_t *node;  /* body mapping */
    yaml_node_t *joint; /* joint mapping */
    const char *parent_name;
    int parent_decl; /* declaration index of the parent, -1 = ground */
    int sorted;      /* index in model->bodies */
    hymo_body body;
} raw_body;

typedef struct {
    yaml_document_t doc;
    const char *origin;
    hymo_error *err;
    char path[384];
    size_t plen;
    /* temporaries, freed by the caller */
    raw_body *raw;
    int n_raw;
    int *decl_of_sorted;
    /* hydraulics bookkeeping */
    int *chamber_owner; /* [2 * n_cylinders]: volume node index or -1 */
    /* --set overrides (docs/overrides.md): the overridden value nodes and,
     * for keys the override added, their key nodes (ids; 0 = none) */
    const char *const *set;
    int n_set;
    int *set_value, *set_key;
    int format; /* the file's format version */
} ctx_t;

/* ------------------------------------------------------------------ */
/* Messages                                                             */

static void one_line(char *s)
{
    for (; *s; s++) {
        if (*s == '\n' || *s == '\r' || *s == '\t' || (unsigned char)*s < 0x20) *s = ' ';
    }
}

static int line_of(const yaml_node_t *n) { return n ? (int)n->start_mark.line + 1 : 1; }

static hymo_status failv(ctx_t *c, int line, hymo_status code, const char *fmt, va_list ap)
{
    char problem[HYMO_ERROR_MSG_MAX];
    vsnprintf(problem, sizeof problem, fmt, ap);
    if (c->plen > 0) {
        hymo_error_set(c->err, code, "%s:%d: %s: %s", c->origin, line, c->path, problem);
    } else {
        hymo_error_set(c->err, code, "%s:%d: %s", c->origin, line, problem);
    }
    if (c->err) one_line(c->err->message);
    return code;
}

/* Fails at node `at` with the current path. */
static hymo_status fail(ctx_t *c, const yaml_node_t *at, hymo_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static hymo_status fail(ctx_t *c, const yaml_node_t *at, hymo_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hymo_status st = failv(c, line_of(at), code, fmt, ap);
    va_end(ap);
    /* A value (or key) put there by --set: say so. */
    for (int i = 0; at && c->err && i < c->n_set; i++) {
        if ((c->set_value[i] && yaml_document_get_node(&c->doc, c->set_value[i]) == at) ||
            (c->set_key[i] && yaml_document_get_node(&c->doc, c->set_key[i]) == at)) {
            size_t len = strlen(c->err->message);
            snprintf(c->err->message + len, sizeof c->err->message - len, " (from --set %s)", c->set[i]);
            break;
        }
    }
    return st;
}

/* ------------------------------------------------------------------ */
/* Field path                                                           */

static size_t push_key(ctx_t *c, const char *key)
{
    size_t old = c->plen;
    int n = snprintf(c->path + c->plen, sizeof c->path - c->plen, "%s%s", c->plen ? "." : "", key);
    if (n > 0) {
        c->plen += (size_t)n;
        if (c->plen >= sizeof c->path) c->plen = sizeof c->path - 1;
    }
    return old;
}

static size_t push_index(ctx_t *c, int i)
{
    size_t old = c->plen;
    int n = snprintf(c->path + c->plen, sizeof c->path - c->plen, "[%d]", i);
    if (n > 0) {
        c->plen += (size_t)n;
        if (c->plen >= sizeof c->path) c->plen = sizeof c->path - 1;
    }
    return old;
}

static void pop(ctx_t *c, size_t old)
{
    c->plen = old;
    c->path[old] = '\0';
}

/* ------------------------------------------------------------------ */
/* Nodes                                                                */

static yaml_node_t *node_at(ctx_t *c, int id) { return yaml_document_get_node(&c->doc, id); }

static const char *sval(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

static int is_null(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE) return 0;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return 0;
    const char *s = sval(n);
    return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
           strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

static const char *kind_name(const yaml_node_t *n)
{
    if (!n) return "nothing";
    switch (n->type) {
    case YAML_MAPPING_NODE: return "a mapping";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_SCALAR_NODE: return is_null(n) ? "an empty value" : "a scalar";
    default: return "nothing";
    }
}

static int seq_len(const yaml_node_t *n)
{
    return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static yaml_node_t *seq_item(ctx_t *c, const yaml_node_t *n, int i)
{
    return node_at(c, n->data.sequence.items.start[i]);
}

/* Value of `key` in mapping `map`, or NULL. */
static yaml_node_t *map_get(ctx_t *c, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node_at(c, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp(sval(k), key) == 0) return node_at(c, p->value);
    }
    return NULL;
}

/* Checks that `n` is a mapping with scalar, unique keys, all of them in
 * `allowed` (NULL-terminated; NULL = any name). */
static hymo_status check_map(ctx_t *c, yaml_node_t *n, const char *const *allowed)
{
    if (!n || n->type != YAML_MAPPING_NODE) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a mapping, got %s", kind_name(n));
    }
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node_at(c, p->key);
        if (!k || k->type != YAML_SCALAR_NODE || is_null(k)) {
            return fail(c, k ? k : n, HYMO_ERR_PARSE, "mapping keys must be plain names, got %s",
                        kind_name(k));
        }
        for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = node_at(c, q->key);
            if (strcmp(sval(k2), sval(k)) == 0) {
                size_t o = push_key(c, sval(k));
                hymo_status st = fail(c, k, HYMO_ERR_PARSE, "duplicate key (first given at line %d)",
                                      line_of(k2));
                pop(c, o);
                return st;
            }
        }
        if (allowed) {
            int ok = 0;
            for (const char *const *a = allowed; *a; a++) {
                if (strcmp(*a, sval(k)) == 0) {
                    ok = 1;
                    break;
                }
            }
            if (!ok) {
                char list[256];
                size_t len = 0;
                list[0] = '\0';
                for (const char *const *a = allowed; *a && len < sizeof list; a++) {
                    int w = snprintf(list + len, sizeof list - len, "%s%s", a == allowed ? "" : ", ", *a);
                    if (w > 0) len += (size_t)w;
                }
                size_t o = push_key(c, sval(k));
                hymo_status st = fail(c, k, HYMO_ERR_MODEL, "unknown field (expected one of: %s)", list);
                pop(c, o);
                return st;
            }
        }
    }
    return HYMO_OK;
}

static hymo_status check_seq(ctx_t *c, yaml_node_t *n)
{
    if (!n || n->type != YAML_SEQUENCE_NODE) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a list, got %s", kind_name(n));
    }
    return HYMO_OK;
}

/* "missing required field" at the enclosing mapping. */
static hymo_status missing(ctx_t *c, yaml_node_t *map, const char *key)
{
    size_t o = push_key(c, key);
    hymo_status st = fail(c, map, HYMO_ERR_MODEL, "missing required field");
    pop(c, o);
    return st;
}

/* Fails at map[key] (or at map if absent) with path + key. */
static hymo_status fail_field(ctx_t *c, yaml_node_t *map, const char *key, hymo_status code,
                              const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static hymo_status fail_field(ctx_t *c, yaml_node_t *map, const char *key, hymo_status code,
                              const char *fmt, ...)
{
    yaml_node_t *v = map_get(c, map, key);
    size_t o = push_key(c, key);
    va_list ap;
    va_start(ap, fmt);
    hymo_status st = failv(c, line_of(v ? v : map), code, fmt, ap);
    va_end(ap);
    pop(c, o);
    return st;
}

/* ------------------------------------------------------------------ */
/* Scalar readers (path already names the field)                        */

/* Parses a whole string as a finite decimal number (number.h). */
static int parse_double(const char *s, double *out)
{
    return hymo_parse_number(s, HYMO_NUMBER_DECIMAL | HYMO_NUMBER_RANGE, out);
}

static hymo_status rd_number(ctx_t *c, yaml_node_t *n, double *out)
{
    if (!n || n->type != YAML_SCALAR_NODE || is_null(n)) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a number, got %s", kind_name(n));
    }
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a number, got the quoted string '%s'", sval(n));
    }
    if (!parse_double(sval(n), out)) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a finite number, got '%s'", sval(n));
    }
    return HYMO_OK;
}

static hymo_status rd_int(ctx_t *c, yaml_node_t *n, int *out)
{
    double v;
    if (!n || n->type != YAML_SCALAR_NODE || is_null(n) ||
        n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !parse_double(sval(n), &v) ||
        v != floor(v) || fabs(v) > 1.0e9) {
        return fail(c, n, HYMO_ERR_MODEL, "expected an integer, got %s%s%s",
                    n && n->type == YAML_SCALAR_NODE && !is_null(n) ? "'" : kind_name(n),
                    n && n->type == YAML_SCALAR_NODE && !is_null(n) ? sval(n) : "",
                    n && n->type == YAML_SCALAR_NODE && !is_null(n) ? "'" : "");
    }
    *out = (int)v;
    return HYMO_OK;
}

/* An angle: a number (radians) or a string "<number> deg" / "<number> rad". */
static hymo_status rd_angle(ctx_t *c, yaml_node_t *n, double *out)
{
    if (n && n->type == YAML_SCALAR_NODE && !is_null(n) &&
        n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && parse_double(sval(n), out)) {
        return HYMO_OK;
    }
    if (n && n->type == YAML_SCALAR_NODE && !is_null(n)) {
        const char *s = sval(n);
        const size_t nlen = hymo_number_length(s);
        const char *end = s + nlen;
        char num[64];
        double v;
        if (end != s && nlen < sizeof num) {
            memcpy(num, s, nlen);
            num[nlen] = '\0';
            const char *unit = end;
            while (isspace((unsigned char)*unit)) unit++;
            if (parse_double(num, &v)) {
                if (strcmp(unit, "deg") == 0) {
                    *out = v * k_pi / 180.0;
                    return HYMO_OK;
                }
                if (strcmp(unit, "rad") == 0) {
                    *out = v;
                    return HYMO_OK;
                }
            }
        }
        return fail(c, n, HYMO_ERR_MODEL,
                    "expected an angle (radians, or a string like \"-135 deg\"), got '%s'", s);
    }
    return fail(c, n, HYMO_ERR_MODEL, "expected an angle, got %s", kind_name(n));
}

static hymo_status rd_vec(ctx_t *c, yaml_node_t *n, double *out, int len)
{
    if (!n || n->type != YAML_SEQUENCE_NODE) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a list of %d numbers, got %s", len, kind_name(n));
    }
    if (seq_len(n) != len) {
        return fail(c, n, HYMO_ERR_MODEL, "expected %d numbers, got %d", len, seq_len(n));
    }
    for (int i = 0; i < len; i++) {
        size_t o = push_index(c, i);
        hymo_status st = rd_number(c, seq_item(c, n, i), &out[i]);
        pop(c, o);
        if (st) return st;
    }
    return HYMO_OK;
}

/* A non-empty scalar used as a reference to a name. */
static hymo_status rd_ref(ctx_t *c, yaml_node_t *n, const char **out)
{
    if (!n || n->type != YAML_SCALAR_NODE || is_null(n)) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a name, got %s", kind_name(n));
    }
    *out = sval(n);
    return HYMO_OK;
}

/* Checks a name string: 1..HYMO_NAME_MAX-1 characters, no '.', no
 * whitespace or control characters. */
static hymo_status check_name(ctx_t *c, yaml_node_t *at, const char *s)
{
    size_t len = strlen(s);
    if (len == 0) return fail(c, at, HYMO_ERR_MODEL, "name must not be empty");
    if (len >= HYMO_NAME_MAX) {
        return fail(c, at, HYMO_ERR_MODEL, "name '%.40s...' is too long (at most %d characters)", s,
                    HYMO_NAME_MAX - 1);
    }
    for (const char *p = s; *p; p++) {
        if (*p == '.' || isspace((unsigned char)*p) || (unsigned char)*p < 0x20) {
            return fail(c, at, HYMO_ERR_MODEL,
                        "name '%s' must not contain '.', spaces or control characters", s);
        }
    }
    return HYMO_OK;
}

static hymo_status rd_name(ctx_t *c, yaml_node_t *n, char out[HYMO_NAME_MAX])
{
    const char *s = "";
    TRY(rd_ref(c, n, &s));
    TRY(check_name(c, n, s));
    snprintf(out, HYMO_NAME_MAX, "%s", s);
    return HYMO_OK;
}

/* ------------------------------------------------------------------ */
/* Field readers: map[key] with range checks                            */

typedef enum {
    R_ANY,
    R_POSITIVE,     /* > 0      */
    R_NONNEGATIVE,  /* >= 0     */
    R_EFFICIENCY    /* (0, 1]   */
} range_t;

static hymo_status check_range(ctx_t *c, yaml_node_t *n, double v, range_t r)
{
    switch (r) {
    case R_ANY: break;
    case R_POSITIVE:
        if (!(v > 0)) return fail(c, n, HYMO_ERR_MODEL, "must be positive, got %g", v);
        break;
    case R_NONNEGATIVE:
        if (!(v >= 0)) return fail(c, n, HYMO_ERR_MODEL, "must not be negative, got %g", v);
        break;
    case R_EFFICIENCY:
        if (!(v > 0 && v <= 1)) return fail(c, n, HYMO_ERR_MODEL, "must be in (0, 1], got %g", v);
        break;
    }
    return HYMO_OK;
}

/* Number field. If absent: error when required, else *out = dflt.
 * *present (optional) tells whether it was given. */
static hymo_status f_number(ctx_t *c, yaml_node_t *map, const char *key, int required, double dflt,
                            range_t r, double *out, int *present)
{
    yaml_node_t *v = map_get(c, map, key);
    if (present) *present = v != NULL;
    if (!v) {
        if (required) return missing(c, map, key);
        *out = dflt;
        return HYMO_OK;
    }
    size_t o = push_key(c, key);
    hymo_status st = rd_number(c, v, out);
    if (!st) st = check_range(c, v, *out, r);
    pop(c, o);
    return st;
}

static hymo_status f_int(ctx_t *c, yaml_node_t *map, const char *key, int required, int dflt, int min,
                         int *out)
{
    yaml_node_t *v = map_get(c, map, key);
    if (!v) {
        if (required) return missing(c, map, key);
        *out = dflt;
        return HYMO_OK;
    }
    size_t o = push_key(c, key);
    hymo_status st = rd_int(c, v, out);
    if (!st && *out < min) st = fail(c, v, HYMO_ERR_MODEL, "must be at least %d, got %d", min, *out);
    pop(c, o);
    return st;
}

static hymo_status f_vec(ctx_t *c, yaml_node_t *map, const char *key, int required, double *out,
                         int len, int *present)
{
    yaml_node_t *v = map_get(c, map, key);
    if (present) *present = v != NULL;
    if (!v) {
        if (required) return missing(c, map, key);
        return HYMO_OK;
    }
    size_t o = push_key(c, key);
    hymo_status st = rd_vec(c, v, out, len);
    pop(c, o);
    return st;
}

/* A direction: 3 numbers, not zero, normalised to unit length. */
static hymo_status f_axis(ctx_t *c, yaml_node_t *map, const char *key, double out[3])
{
    TRY(f_vec(c, map, key, 1, out, 3, NULL));
    double n = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2]);
    if (!(n > 1e-12)) return fail_field(c, map, key, HYMO_ERR_MODEL, "direction must not be zero");
    for (int i = 0; i < 3; i++) out[i] /= n;
    return HYMO_OK;
}

static hymo_status f_name(ctx_t *c, yaml_node_t *map, const char *key, char out[HYMO_NAME_MAX])
{
    yaml_node_t *v = map_get(c, map, key);
    if (!v) return missing(c, map, key);
    size_t o = push_key(c, key);
    hymo_status st = rd_name(c, v, out);
    pop(c, o);
    return st;
}

static hymo_status f_ref(ctx_t *c, yaml_node_t *map, const char *key, int required, const char **out)
{
    yaml_node_t *v = map_get(c, map, key);
    *out = NULL;
    if (!v) {
        if (required) return missing(c, map, key);
        return HYMO_OK;
    }
    size_t o = push_key(c, key);
    hymo_status st = rd_ref(c, v, out);
    pop(c, o);
    return st;
}

static hymo_status f_angle(ctx_t *c, yaml_node_t *map, const char *key, int required, double *out)
{
    yaml_node_t *v = map_get(c, map, key);
    if (!v) {
        if (required) return missing(c, map, key);
        *out = 0.0;
        return HYMO_OK;
    }
    size_t o = push_key(c, key);
    hymo_status st = rd_angle(c, v, out);
    pop(c, o);
    return st;
}

/* Optional list field; *out = NULL if absent. */
static hymo_status f_seq(ctx_t *c, yaml_node_t *map, const char *key, int required, yaml_node_t **out)
{
    yaml_node_t *v = map_get(c, map, key);
    *out = NULL;
    if (!v) {
        if (required) return missing(c, map, key);
        return HYMO_OK;
    }
    size_t o = push_key(c, key);
    hymo_status st = check_seq(c, v);
    pop(c, o);
    if (!st) *out = v;
    return st;
}

/* ------------------------------------------------------------------ */
/* Small vector helpers                                                 */

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Adds m (|d|^2 I - d d^T) to J (parallel-axis theorem). */
static void add_parallel_axis(double J[9], double m, const double d[3])
{
    double d2 = dot3(d, d);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) J[3 * i + j] += m * ((i == j ? d2 : 0.0) - d[i] * d[j]);
    }
}

/* ------------------------------------------------------------------ */
/* format, name, gravity, simulation                                    */

static hymo_status load_header(ctx_t *c, yaml_node_t *root, hymo_model *m)
{
    int format = 0;
    TRY(f_int(c, root, "format", 1, 0, 0, &format));
    if (format < FORMAT_MIN || format > FORMAT_VERSION) {
        return fail_field(c, root, "format", HYMO_ERR_MODEL,
                          "unsupported format version %d (this hymo reads versions %d to %d)", format,
                          FORMAT_MIN, FORMAT_VERSION);
    }
    c->format = format;
    TRY(f_name(c, root, "name", m->name));

    yaml_node_t *desc = map_get(c, root, "description");
    if (desc && desc->type != YAML_SCALAR_NODE) {
        size_t o = push_key(c, "description");
        hymo_status st = fail(c, desc, HYMO_ERR_MODEL, "expected a string, got %s", kind_name(desc));
        pop(c, o);
        return st;
    }

    TRY(f_vec(c, root, "gravity", 1, m->gravity, 3, NULL));

    hymo_sim_defaults *d = &m->defaults;
    d->dt = DEFAULT_DT;
    d->t_end = DEFAULT_T_END;
    d->penalty_alpha = DEFAULT_PENALTY_ALPHA;
    d->max_iter = DEFAULT_MAX_ITER;
    d->tol_position = DEFAULT_TOL_POSITION;
    d->tol_pressure = DEFAULT_TOL_PRESSURE;
    d->tol_spool = DEFAULT_TOL_SPOOL;
    yaml_node_t *sim = map_get(c, root, "simulation");
    /* s18-alpha: format 2 without penalty_alpha: the mass-scaled default */
    m->penalty_alpha_auto = format >= 2 && !(sim && map_get(c, sim, "penalty_alpha"));
    if (!sim) return HYMO_OK;
    static const char *const sim_keys[] = {"dt", "t_end", "penalty_alpha", "max_iterations",
                                           "tolerances", "reselect_threshold", NULL};
    size_t o = push_key(c, "simulation");
    hymo_status st = check_map(c, sim, sim_keys);
    if (!st) st = f_number(c, sim, "dt", 0, DEFAULT_DT, R_POSITIVE, &d->dt, NULL);
    if (!st) st = f_number(c, sim, "t_end", 0, DEFAULT_T_END, R_POSITIVE, &d->t_end, NULL);
    if (!st) {
        st = f_number(c, sim, "penalty_alpha", 0, DEFAULT_PENALTY_ALPHA, R_POSITIVE,
                      &d->penalty_alpha, NULL);
    }
    if (!st) st = f_int(c, sim, "max_iterations", 0, DEFAULT_MAX_ITER, 1, &d->max_iter);
    if (!st) st = f_number(c, sim, "reselect_threshold", 0, 0.0, R_POSITIVE, &m->reselect_threshold, NULL);
    if (!st && m->reselect_threshold > 1.0) /* mbstruct */
        st = fail_field(c, sim, "reselect_threshold", HYMO_ERR_MODEL, "%g is above 1 (a pivot ratio in (0, 1])",
                        m->reselect_threshold);
    yaml_node_t *tol = st ? NULL : map_get(c, sim, "tolerances");
    if (tol) {
        static const char *const tol_keys[] = {"position", "pressure", "spool", NULL};
        size_t o2 = push_key(c, "tolerances");
        st = check_map(c, tol, tol_keys);
        if (!st) {
            st = f_number(c, tol, "position", 0, DEFAULT_TOL_POSITION, R_POSITIVE, &d->tol_position,
                          NULL);
        }
        if (!st) {
            st = f_number(c, tol, "pressure", 0, DEFAULT_TOL_PRESSURE, R_POSITIVE, &d->tol_pressure,
                          NULL);
        }
        if (!st) st = f_number(c, tol, "spool", 0, DEFAULT_TOL_SPOOL, R_POSITIVE, &d->tol_spool, NULL);
        pop(c, o2);
    }
    pop(c, o);
    return st;
}

static hymo_status load_signal_shape(ctx_t *c, yaml_node_t *sn, hymo_signal *s); /* model_load_motor.inc */

/* ------------------------------------------------------------------ */
/* Signals                                                              */

/* Loads every item of the sequence `seq` (under `key`) with fn(item, index),
 * keeping the field path for messages; stops at the first error. */
static hymo_status each_item(ctx_t *c, yaml_node_t *seq, const char *key,
                             hymo_status (*fn)(ctx_t *, yaml_node_t *, hymo_model *, int), hymo_model *m)
{
    if (!seq) return HYMO_OK;
    size_t o = push_key(c, key);
    for (int k = 0; k < seq_len(seq); k++) {
        size_t o2 = push_index(c, k);
        hymo_status st = fn(c, seq_item(c, seq, k), m, k);
        pop(c, o2);
        if (st) {
            pop(c, o);
            return st;
        }
    }
    pop(c, o);
    return HYMO_OK;
}

static hymo_status load_signal(ctx_t *c, yaml_node_t *sn, hymo_model *m, int k)
{
    static const char *const keys[] = {"name", "points", "period", "filter_time_constant", "dead_zone", "clamp", NULL};
    hymo_signal *s = &m->signals[k];
    TRY(check_map(c, sn, keys));
    TRY(f_name(c, sn, "name", s->name));
    for (int j = 0; j < k; j++) {
        if (strcmp(m->signals[j].name, s->name) == 0) {
            return fail_field(c, sn, "name", HYMO_ERR_MODEL, "duplicate signal name '%s'", s->name);
        }
    }
    yaml_node_t *pts;
    TRY(f_seq(c, sn, "points", 1, &pts));
    int n = seq_len(pts);
    size_t o = push_key(c, "points");
    if (n < 1) {
        hymo_status st = fail(c, pts, HYMO_ERR_MODEL, "a signal needs at least one [t, value] point");
        pop(c, o);
        return st;
    }
    s->t = malloc((size_t)n * sizeof *s->t);
    s->v = malloc((size_t)n * sizeof *s->v);
    if (!s->t || !s->v) {
        pop(c, o);
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    s->n_points = n;
    for (int i = 0; i < n; i++) {
        double tv[2];
        yaml_node_t *pn = seq_item(c, pts, i);
        size_t o2 = push_index(c, i);
        hymo_status st = rd_vec(c, pn, tv, 2);
        if (!st && i > 0 && tv[0] < s->t[i - 1]) {
            st = fail(c, pn, HYMO_ERR_MODEL, "time %g is before the previous point's time %g", tv[0],
                      s->t[i - 1]);
        }
        if (!st && i > 1 && tv[0] == s->t[i - 1] && tv[0] == s->t[i - 2]) {
            st = fail(c, pn, HYMO_ERR_MODEL,
                      "more than two points at time %g (a step is exactly two points)", tv[0]);
        }
        pop(c, o2);
        if (st) {
            pop(c, o);
            return st;
        }
        s->t[i] = tv[0];
        s->v[i] = tv[1];
    }
    pop(c, o);
    return load_signal_shape(c, sn, s);
}

static hymo_status load_signals(ctx_t *c, yaml_node_t *root, hymo_model *m)
{
    yaml_node_t *seq;
    TRY(f_seq(c, root, "signals", 0, &seq));
    if (!seq) return HYMO_OK;
    int n = seq_len(seq);
    if (n == 0) return HYMO_OK;
    m->signals = calloc((size_t)n, sizeof *m->signals);
    if (!m->signals) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    m->n_signals = n;
    return each_item(c, seq, "signals", load_signal, m);
}

/* ------------------------------------------------------------------ */
/* Bodies                                                               */

/* Inertia: 3 (diagonal), 6 (xx, yy, zz, xy, xz, yz) or 9 (row-major). */
static hymo_status rd_inertia(ctx_t *c, yaml_node_t *n, double J[9])
{
    double v[9];
    if (!n || n->type != YAML_SEQUENCE_NODE) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a list of 3, 6 or 9 numbers, got %s",
                    kind_name(n));
    }
    int len = seq_len(n);
    if (len != 3 && len != 6 && len != 9) {
        return fail(c, n, HYMO_ERR_MODEL, "expected 3, 6 or 9 numbers, got %d", len);
    }
    TRY(rd_vec(c, n, v, len));
    memset(J, 0, 9 * sizeof *J);
    if (len == 9) {
        memcpy(J, v, sizeof v);
    } else {
        J[0] = v[0];
        J[4] = v[1];
        J[8] = v[2];
        if (len == 6) {
            J[1] = J[3] = v[3];
            J[2] = J[6] = v[4];
            J[5] = J[7] = v[5];
        }
    }
    double scale = fabs(J[0]) + fabs(J[4]) + fabs(J[8]);
    for (int i = 0; i < 9; i++) scale = fmax(scale, fabs(J[i]));
    double tol = 1e-9 * scale;
    for (int i = 0; i < 3; i++) {
        for (int j = i + 1; j < 3; j++) {
            if (fabs(J[3 * i + j] - J[3 * j + i]) > tol) {
                return fail(c, n, HYMO_ERR_MODEL, "inertia matrix is not symmetric");
            }
        }
    }
    for (int i = 0; i < 3; i++) {
        if (J[4 * i] < 0) return fail(c, n, HYMO_ERR_MODEL, "moments of inertia must not be negative");
    }
    if (J[0] > J[4] + J[8] + tol || J[4] > J[0] + J[8] + tol || J[8] > J[0] + J[4] + tol) {
        return fail(c, n, HYMO_ERR_MODEL,
                    "moments of inertia violate the triangle inequality (Ixx <= Iyy + Izz, ...)");
    }
    /* positive semi-definite: all principal minors >= 0 */
    double m01 = J[0] * J[4] - J[1] * J[3], m02 = J[0] * J[8] - J[2] * J[6],
           m12 = J[4] * J[8] - J[5] * J[7];
    double det = J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) +
                 J[2] * (J[3] * J[7] - J[4] * J[6]);
    double tol2 = 1e-9 * scale * scale, tol3 = 1e-9 * scale * scale * scale;
    if (m01 < -tol2 || m02 < -tol2 || m12 < -tol2 || det < -tol3) {
        return fail(c, n, HYMO_ERR_MODEL, "inertia matrix is not positive semi-definite");
    }
    return HYMO_OK;
}

static hymo_status load_body(ctx_t *c, raw_body *rb, int decl)
{
    static const char *const body_keys[] = {"name",   "joint",        "mass",   "com",
                                            "inertia", "point_masses", "points", NULL};
    static const char *const joint_keys[] = {"name", "type", "parent", "location", "axis", "initial",
                                             NULL};
    yaml_node_t *bn = rb->node;
    hymo_body *b = &rb->body;
    TRY(check_map(c, bn, body_keys));
    TRY(f_name(c, bn, "name", b->name));
    if (strcmp(b->name, "ground") == 0) {
        return fail_field(c, bn, "name", HYMO_ERR_MODEL, "'ground' is reserved for the fixed frame");
    }
    for (int j = 0; j < decl; j++) {
        if (strcmp(c->raw[j].body.name, b->name) == 0) {
            return fail_field(c, bn, "name", HYMO_ERR_MODEL, "duplicate body name '%s' (also bodies[%d])",
                              b->name, j);
        }
    }

    /* joint */
    yaml_node_t *jn = map_get(c, bn, "joint");
    if (!jn) return missing(c, bn, "joint");
    rb->joint = jn;
    {
        size_t o = push_key(c, "joint");
        hymo_status st = check_map(c, jn, joint_keys);
        if (!st) st = f_name(c, jn, "name", b->joint_name);
        for (int j = 0; !st && j < decl; j++) {
            if (strcmp(c->raw[j].body.joint_name, b->joint_name) == 0) {
                st = fail_field(c, jn, "name", HYMO_ERR_MODEL,
                                "duplicate joint name '%s' (also bodies[%d].joint)", b->joint_name, j);
            }
        }
        const char *type = NULL;
        if (!st) st = f_ref(c, jn, "type", 1, &type);
        if (!st) {
            if (strcmp(type, "revolute") == 0) {
                b->joint_type = HYMO_JOINT_REVOLUTE;
            } else if (strcmp(type, "prismatic") == 0) {
                b->joint_type = HYMO_JOINT_PRISMATIC;
            } else {
                st = fail_field(c, jn, "type", HYMO_ERR_MODEL,
                                "unknown joint type '%s' (expected revolute or prismatic)", type);
            }
        }
        if (!st) st = f_ref(c, jn, "parent", 1, &rb->parent_name);
        if (!st && !map_get(c, jn, "location")) st = missing(c, jn, "location");
        if (!st) st = f_axis(c, jn, "axis", b->joint_axis);
        if (!st) {
            if (b->joint_type == HYMO_JOINT_REVOLUTE) {
                st = f_angle(c, jn, "initial", 0, &b->z0);
            } else {
                st = f_number(c, jn, "initial", 0, 0.0, R_ANY, &b->z0, NULL);
            }
        }
        pop(c, o);
        TRY(st);
    }

    /* mass properties */
    double mass, com[3] = {0, 0, 0}, J[9] = {0};
    TRY(f_number(c, bn, "mass", 1, 0.0, R_NONNEGATIVE, &mass, NULL));
    int need = mass > 0;
    TRY(f_vec(c, bn, "com", need, com, 3, NULL));
    yaml_node_t *in = map_get(c, bn, "inertia");
    if (!in && need) return missing(c, bn, "inertia");
    if (in) {
        size_t o = push_key(c, "inertia");
        hymo_status st = rd_inertia(c, in, J);
        pop(c, o);
        TRY(st);
    }

    yaml_node_t *pm;
    TRY(f_seq(c, bn, "point_masses", 0, &pm));
    int npm = pm ? seq_len(pm) : 0;
    double total = mass, first[3] = {mass * com[0], mass * com[1], mass * com[2]};
    double pm_m[64], pm_r[64][3];
    if (npm > 64) {
        return fail_field(c, bn, "point_masses", HYMO_ERR_MODEL, "at most 64 point masses per body");
    }
    for (int k = 0; k < npm; k++) {
        static const char *const pm_keys[] = {"mass", "at", NULL};
        yaml_node_t *pn = seq_item(c, pm, k);
        size_t o = push_key(c, "point_masses");
        push_index(c, k);
        hymo_status st = check_map(c, pn, pm_keys);
        if (!st) st = f_number(c, pn, "mass", 1, 0.0, R_POSITIVE, &pm_m[k], NULL);
        if (!st) st = f_vec(c, pn, "at", 1, pm_r[k], 3, NULL);
        pop(c, o);
        TRY(st);
        total += pm_m[k];
        for (int i = 0; i < 3; i++) first[i] += pm_m[k] * pm_r[k][i];
    }
    if (!(total > 0)) {
        return fail_field(c, bn, "mass", HYMO_ERR_MODEL,
                          "total mass of body '%s' must be positive (mass 0 needs point_masses)",
                          b->name);
    }
    double g[3] = {first[0] / total, first[1] / total, first[2] / total};
    double d[3];
    memcpy(b->inertia, J, sizeof J);
    for (int i = 0; i < 3; i++) d[i] = com[i] - g[i];
    add_parallel_axis(b->inertia, mass, d);
    for (int k = 0; k < npm; k++) {
        for (int i = 0; i < 3; i++) d[i] = pm_r[k][i] - g[i];
        add_parallel_axis(b->inertia, pm_m[k], d);
    }
    b->mass = total;
    memcpy(b->com, g, sizeof g);
    return HYMO_OK;
}

/* Points of one body (or ground, body = HYMO_GROUND) from a mapping
 * name -> [x, y, z]; appended to model->points. */
static hymo_status load_points(ctx_t *c, yaml_node_t *pts, int body, hymo_model *m)
{
    TRY(check_map(c, pts, NULL));
    for (yaml_node_pair_t *p = pts->data.mapping.pairs.start; p < pts->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node_at(c, p->key), *v = node_at(c, p->value);
        hymo_point *pt = &m->points[m->n_points];
        size_t o = push_key(c, sval(k));
        hymo_status st = check_name(c, k, sval(k));
        if (!st) {
            snprintf(pt->name, sizeof pt->name, "%s", sval(k));
            pt->body = body;
            st = rd_vec(c, v, pt->r, 3);
        }
        pop(c, o);
        TRY(st);
        m->n_points++;
    }
    return HYMO_OK;
}

static int count_points(ctx_t *c, yaml_node_t *map, const char *key)
{
    yaml_node_t *p = map_get(c, map, key);
    if (!p || p->type != YAML_MAPPING_NODE) return 0;
    return (int)(p->data.mapping.pairs.top - p->data.mapping.pairs.start);
}

static int find_point_on(const hymo_model *m, int body, const char *name)
{
    for (int i = 0; i < m->n_points; i++) {
        if (m->points[i].body == body && strcmp(m->points[i].name, name) == 0) return i;
    }
    return -1;
}

static const char *body_label(const hymo_model *m, int body)
{
    return body == HYMO_GROUND ? "ground" : m->bodies[body].name;
}

/* "ground" or a body name -> index; -2 if unknown. */
static int body_by_name(const hymo_model *m, const char *name)
{
    if (strcmp(name, "ground") == 0) return HYMO_GROUND;
    int b = hymo_model_find_body(m, name);
    return b >= 0 ? b : -2;
}

/* A point given either as the name of a point of `body` or as [x, y, z]
 * in that body's frame. Path names the field. */
static hymo_status rd_point_on(ctx_t *c, yaml_node_t *n, const hymo_model *m, int body, double r[3])
{
    if (n && n->type == YAML_SEQUENCE_NODE) return rd_vec(c, n, r, 3);
    if (n && n->type == YAML_SCALAR_NODE && !is_null(n)) {
        int p = find_point_on(m, body, sval(n));
        if (p < 0) {
            return fail(c, n, HYMO_ERR_MODEL, "unknown point '%s' on %s%s", sval(n),
                        body == HYMO_GROUND ? "" : "body ", body_label(m, body));
        }
        memcpy(r, m->points[p].r, 3 * sizeof *r);
        return HYMO_OK;
    }
    return fail(c, n, HYMO_ERR_MODEL, "expected a point name or [x, y, z], got %s", kind_name(n));
}

static hymo_status load_bodies(ctx_t *c, yaml_node_t *root, hymo_model *m)
{
    yaml_node_t *seq;
    TRY(f_seq(c, root, "bodies", 1, &seq));
    int n = seq_len(seq);
    if (n == 0) {
        size_t o = push_key(c, "bodies");
        hymo_status st = fail(c, seq, HYMO_ERR_MODEL, "a model needs at least one body");
        pop(c, o);
        return st;
    }
    c->raw = calloc((size_t)n, sizeof *c->raw);
    c->decl_of_sorted = calloc((size_t)n, sizeof *c->decl_of_sorted);
    m->bodies = calloc((size_t)n, sizeof *m->bodies);
    if (!c->raw || !c->decl_of_sorted || !m->bodies) {
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    c->n_raw = n;
    size_t o = push_key(c, "bodies");
    for (int i = 0; i < n; i++) {
        c->raw[i].node = seq_item(c, seq, i);
        size_t o2 = push_index(c, i);
        hymo_status st = load_body(c, &c->raw[i], i);
        pop(c, o2);
        if (st) {
            pop(c, o);
            return st;
        }
    }

    /* parents */
    for (int i = 0; i < n; i++) {
        raw_body *rb = &c->raw[i];
        rb->sorted = -1;
        if (strcmp(rb->parent_name, "ground") == 0) {
            rb->parent_decl = -1;
            continue;
        }
        rb->parent_decl = -2;
        for (int j = 0; j < n; j++) {
            if (strcmp(c->raw[j].body.name, rb->parent_name) == 0) rb->parent_decl = j;
        }
        if (rb->parent_decl == -2 || rb->parent_decl == i) {
            size_t o2 = push_index(c, i);
            size_t o3 = push_key(c, "joint");
            hymo_status st =
                rb->parent_decl == i
                    ? fail_field(c, rb->joint, "parent", HYMO_ERR_MODEL, "a body cannot be its own parent")
                    : fail_field(c, rb->joint, "parent", HYMO_ERR_MODEL,
                                 "unknown parent body '%s' (expected ground or a body name)",
                                 rb->parent_name);
            pop(c, o3);
            pop(c, o2);
            pop(c, o);
            return st;
        }
    }

    /* topological order: place bodies whose parent is placed, in file order */
    int placed = 0;
    while (placed < n) {
        int progress = 0;
        for (int i = 0; i < n; i++) {
            raw_body *rb = &c->raw[i];
            if (rb->sorted >= 0) continue;
            if (rb->parent_decl == -1 || c->raw[rb->parent_decl].sorted >= 0) {
                rb->sorted = placed;
                c->decl_of_sorted[placed] = i;
                placed++;
                progress = 1;
            }
        }
        if (!progress) {
            for (int i = 0; i < n; i++) {
                if (c->raw[i].sorted >= 0) continue;
                size_t o2 = push_index(c, i);
                size_t o3 = push_key(c, "joint");
                hymo_status st = fail_field(c, c->raw[i].joint, "parent", HYMO_ERR_MODEL,
                                            "body '%s' is part of a cycle of parents (the bodies "
                                            "must form a tree rooted at ground)",
                                            c->raw[i].body.name);
                pop(c, o3);
                pop(c, o2);
                pop(c, o);
                return st;
            }
        }
    }
    for (int s = 0; s < n; s++) {
        raw_body *rb = &c->raw[c->decl_of_sorted[s]];
        m->bodies[s] = rb->body;
        m->bodies[s].parent = rb->parent_decl < 0 ? HYMO_GROUND : c->raw[rb->parent_decl].sorted;
    }
    m->n_bodies = n;
    pop(c, o);

    /* points: ground first, then bodies in tree order */
    yaml_node_t *ground = map_get(c, root, "ground");
    int total = 0;
    if (ground) {
        static const char *const ground_keys[] = {"points", NULL};
        size_t og = push_key(c, "ground");
        hymo_status st = check_map(c, ground, ground_keys);
        pop(c, og);
        TRY(st);
        total += count_points(c, ground, "points");
    }
    for (int i = 0; i < n; i++) total += count_points(c, c->raw[i].node, "points");
    if (total > 0) {
        m->points = calloc((size_t)total, sizeof *m->points);
        if (!m->points) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    if (ground) {
        yaml_node_t *gp = map_get(c, ground, "points");
        if (gp) {
            size_t og = push_key(c, "ground");
            push_key(c, "points");
            hymo_status st = load_points(c, gp, HYMO_GROUND, m);
            pop(c, og);
            TRY(st);
        }
    }
    for (int s = 0; s < n; s++) {
        int i = c->decl_of_sorted[s];
        yaml_node_t *bp = map_get(c, c->raw[i].node, "points");
        if (!bp) continue;
        size_t ob = push_key(c, "bodies");
        push_index(c, i);
        push_key(c, "points");
        hymo_status st = load_points(c, bp, s, m);
        pop(c, ob);
        TRY(st);
    }

    /* joint locations: [x, y, z] in the parent frame or a parent point name */
    for (int s = 0; s < n; s++) {
        int i = c->decl_of_sorted[s];
        size_t ob = push_key(c, "bodies");
        push_index(c, i);
        push_key(c, "joint");
        push_key(c, "location");
        hymo_status st = rd_point_on(c, map_get(c, c->raw[i].joint, "location"), m,
                                     m->bodies[s].parent, m->bodies[s].joint_location);
        pop(c, ob);
        TRY(st);
    }
    return HYMO_OK;
}

/* ------------------------------------------------------------------ */
/* Cut joints and independent coordinates                               */

static hymo_status load_cut(ctx_t *c, yaml_node_t *cn, hymo_model *m, int k)
{
    static const char *const keys_plain[] = {"name",   "type",    "body_a", "point_a",
                                             "body_b", "point_b", NULL};
    static const char *const keys_ptrans[] = {"name",    "type",      "body_a", "point_a", "body_b",
                                              "point_b", "direction", "angle",  NULL};
    static const char *const keys_rev[] = {"name",    "type",   "body_a", "point_a", "body_b",
                                           "point_b", "axis_a", "axis_b", NULL};
    static const char *const keys_trans[] = {"name",    "type",   "body_a",    "point_a", "body_b",
                                             "point_b", "axis_a", "direction", NULL};
    hymo_cut_joint *cj = &m->cuts[k];
    if (!cn || cn->type != YAML_MAPPING_NODE) {
        return fail(c, cn, HYMO_ERR_MODEL, "expected a mapping, got %s", kind_name(cn));
    }
    const char *type;
    TRY(f_ref(c, cn, "type", 1, &type));
    const char *const *keys;
    if (strcmp(type, "planar_revolute") == 0) {
        cj->type = HYMO_CUT_PLANAR_REVOLUTE;
        cj->n_eq = 2;
        keys = keys_plain;
    } else if (strcmp(type, "planar_translational") == 0) {
        cj->type = HYMO_CUT_PLANAR_TRANSLATIONAL;
        cj->n_eq = 2;
        keys = keys_ptrans;
    } else if (strcmp(type, "spherical") == 0) {
        cj->type = HYMO_CUT_SPHERICAL;
        cj->n_eq = 3;
        keys = keys_plain;
    } else if (strcmp(type, "revolute") == 0) {
        cj->type = HYMO_CUT_REVOLUTE;
        cj->n_eq = 5;
        keys = keys_rev;
    } else if (strcmp(type, "translational") == 0) {
        cj->type = HYMO_CUT_TRANSLATIONAL;
        cj->n_eq = 5;
        keys = keys_trans;
    } else {
        return fail_field(c, cn, "type", HYMO_ERR_MODEL,
                          "unknown cut joint type '%s' (expected planar_revolute, "
                          "planar_translational, spherical, revolute or translational)",
                          type);
    }
    TRY(check_map(c, cn, keys));
    TRY(f_name(c, cn, "name", cj->name));
    for (int j = 0; j < k; j++) {
        if (strcmp(m->cuts[j].name, cj->name) == 0) {
            return fail_field(c, cn, "name", HYMO_ERR_MODEL, "duplicate cut joint name '%s'", cj->name);
        }
    }
    const char *ba, *bb;
    TRY(f_ref(c, cn, "body_a", 1, &ba));
    cj->body_a = body_by_name(m, ba);
    if (cj->body_a == -2) {
        return fail_field(c, cn, "body_a", HYMO_ERR_MODEL, "unknown body '%s'", ba);
    }
    TRY(f_ref(c, cn, "body_b", 1, &bb));
    cj->body_b = body_by_name(m, bb);
    if (cj->body_b == -2) {
        return fail_field(c, cn, "body_b", HYMO_ERR_MODEL, "unknown body '%s'", bb);
    }
    if (cj->body_a == cj->body_b) {
        return fail_field(c, cn, "body_b", HYMO_ERR_MODEL, "body_a and body_b must differ");
    }
    if (!map_get(c, cn, "point_a")) return missing(c, cn, "point_a");
    if (!map_get(c, cn, "point_b")) return missing(c, cn, "point_b");
    size_t o = push_key(c, "point_a");
    hymo_status st = rd_point_on(c, map_get(c, cn, "point_a"), m, cj->body_a, cj->point_a);
    pop(c, o);
    TRY(st);
    o = push_key(c, "point_b");
    st = rd_point_on(c, map_get(c, cn, "point_b"), m, cj->body_b, cj->point_b);
    pop(c, o);
    TRY(st);
    switch (cj->type) {
    case HYMO_CUT_PLANAR_TRANSLATIONAL:
        TRY(f_axis(c, cn, "direction", cj->axis_b));
        TRY(f_angle(c, cn, "angle", 1, &cj->angle0));
        break;
    case HYMO_CUT_REVOLUTE:
        TRY(f_axis(c, cn, "axis_a", cj->axis_a));
        TRY(f_axis(c, cn, "axis_b", cj->axis_b));
        break;
    case HYMO_CUT_TRANSLATIONAL:
        TRY(f_axis(c, cn, "axis_a", cj->axis_a));
        TRY(f_axis(c, cn, "direction", cj->axis_b));
        break;
    default: break;
    }
    return HYMO_OK;
}

static hymo_status load_cuts(ctx_t *c, yaml_node_t *root, hymo_model *m)
{
    yaml_node_t *seq;
    TRY(f_seq(c, root, "cut_joints", 0, &seq));
    if (!seq || seq_len(seq) == 0) return HYMO_OK;
    int n = seq_len(seq);
    m->cuts = calloc((size_t)n, sizeof *m->cuts);
    if (!m->cuts) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    m->n_cuts = n;
    return each_item(c, seq, "cut_joints", load_cut, m);
}

static hymo_status load_independent(ctx_t *c, yaml_node_t *root, hymo_model *m)
{
    yaml_node_t *seq;
    TRY(f_seq(c, root, "independent", 0, &seq));
    if (!seq || seq_len(seq) == 0) return HYMO_OK;
    int n = seq_len(seq);
    m->independent_hint = calloc((size_t)n, sizeof *m->independent_hint);
    if (!m->independent_hint) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    size_t o = push_key(c, "independent");
    hymo_status st = HYMO_OK;
    for (int k = 0; k < n && !st; k++) {
        yaml_node_t *in = seq_item(c, seq, k);
        size_t o2 = push_index(c, k);
        const char *jn = "";
        st = rd_ref(c, in, &jn);
        int b = -1;
        for (int i = 0; !st && i < m->n_bodies; i++) {
            if (strcmp(m->bodies[i].joint_name, jn) == 0) b = i;
        }
        if (!st && b < 0) st = fail(c, in, HYMO_ERR_MODEL, "unknown joint '%s'", jn);
        for (int j = 0; !st && j < m->n_independent_hint; j++) {
            if (m->independent_hint[j] == b) st = fail(c, in, HYMO_ERR_MODEL, "joint '%s' listed twice", jn);
        }
        if (!st) m->independent_hint[m->n_independent_hint++] = b;
        pop(c, o2);
    }
    pop(c, o);
    return st;
}

/* ------------------------------------------------------------------ */
/* Hydraulics                                                           */

static int node_by_name(const hymo_model *m, const char *name)
{
    for (int i = 0; i < m->n_nodes; i++) {
        if (strcmp(m->nodes[i].name, name) == 0) return i;
    }
    return -1;
}

/* Checks a new node / element name against those already defined. */
static hymo_status check_new_node(ctx_t *c, yaml_node_t *map, const hymo_model *m, const char *name)
{
    if (node_by_name(m, name) >= 0) {
        return fail_field(c, map, "name", HYMO_ERR_MODEL,
                          "duplicate hydraulic node name '%s' (sources and volumes share names)",
                          name);
    }
    return HYMO_OK;
}

static int element_exists(const hymo_model *m, const char *name)
{
    for (int i = 0; i < m->n_cylinders; i++)
        if (strcmp(m->cylinders[i].name, name) == 0) return 1;
    for (int i = 0; i < m->n_throttles; i++)
        if (strcmp(m->throttles[i].name, name) == 0) return 1;
    for (int i = 0; i < m->n_valves; i++)
        if (strcmp(m->valves[i].name, name) == 0) return 1;
    for (int i = 0; i < m->n_relief_valves; i++)
        if (strcmp(m->relief_valves[i].name, name) == 0) return 1;
    for (int i = 0; i < m->n_check_valves; i++)
        if (strcmp(m->check_valves[i].name, name) == 0) return 1;
    for (int i = 0; i < m->n_pumps; i++)
        if (strcmp(m->pumps[i].name, name) == 0) return 1;
    for (int i = 0; i < m->n_flow_controls; i++)
        if (strcmp(m->flow_controls[i].name, name) == 0) return 1;
    for (int i = 0; i < m->n_accumulators; i++) /* branch s18-ux: the later sections too */
        if (strcmp(m->accumulators[i].name, name) == 0) return 1;
    for (int i = 0; i < m->n_motors; i++)
        if (strcmp(m->motors[i].name, name) == 0) return 1;
    return 0;
}

static hymo_status check_new_element(ctx_t *c, yaml_node_t *map, const hymo_model *m,
                                     const char *name)
{
    if (element_exists(m, name)) {
        return fail_field(c, map, "name", HYMO_ERR_MODEL,
                          "duplicate name '%s' (cylinders, throttles, valves, relief and check valves, pumps, "
                          "flow control valves, accumulators and motors share names)",
                          name);
    }
    return HYMO_OK;
}

/* Node reference field. */
static hymo_status f_node(ctx_t *c, yaml_node_t *map, const char *key, const hymo_model *m, int *out)
{
    const char *name;
    TRY(f_ref(c, map, key, 1, &name));
    *out = node_by_name(m, name);
    if (*out < 0) {
        return fail_field(c, map, key, HYMO_ERR_MODEL,
                          "unknown hydraulic node '%s' (expected a source or volume name)", name);
    }
    return HYMO_OK;
}

/* Point reference for cylinder ends: "P" (unique over the model) or "body.P". */
static hymo_status f_point_ref(ctx_t *c, yaml_node_t *map, const char *key, const hymo_model *m,
                               int *out)
{
    const char *name;
    TRY(f_ref(c, map, key, 1, &name));
    if (strchr(name, '.')) {
        *out = hymo_model_find_point(m, name);
        char hint[256]; /* branch s18-ux: what there is */
        if (*out < 0) hymo_point_hint(m, name, hint, sizeof hint);
        if (*out < 0) return fail_field(c, map, key, HYMO_ERR_MODEL, "unknown point '%s'%s", name, hint);
        return HYMO_OK;
    }
    int found = -1, count = 0;
    for (int i = 0; i < m->n_points; i++) {
        if (strcmp(m->points[i].name, name) == 0) {
            if (found < 0) found = i;
            count++;
        }
    }
    char hint[256]; /* branch s18-ux: what there is */
    if (count == 0) hymo_point_hint(m, name, hint, sizeof hint);
    if (count == 0) return fail_field(c, map, key, HYMO_ERR_MODEL, "unknown point '%s'%s", name, hint);
    if (count > 1) {
        return fail_field(c, map, key, HYMO_ERR_MODEL,
                          "point name '%s' is ambiguous (%d bodies have it); write BODY.%s", name,
                          count, name);
    }
    *out = found;
    return HYMO_OK;
}

static hymo_status load_cylinder(ctx_t *c, yaml_node_t *cn, hymo_model *m, int k)
{
    (void)k; /* equals m->n_cylinders: items are appended as they load */
    static const char *const keys[] = {"name",           "base",           "rod",
                                       "piston_diameter", "rod_diameter",  "length",
                                       "piston_length0", "viscous_damping", "efficiency",
                                       "friction_velocity", "end_damper",   NULL};
    hymo_cylinder *cy = &m->cylinders[m->n_cylinders];
    TRY(check_map(c, cn, keys));
    TRY(f_name(c, cn, "name", cy->name));
    TRY(check_new_element(c, cn, m, cy->name));
    TRY(f_point_ref(c, cn, "base", m, &cy->point_base));
    TRY(f_point_ref(c, cn, "rod", m, &cy->point_rod));
    if (m->points[cy->point_base].body == m->points[cy->point_rod].body) {
        return fail_field(c, cn, "rod", HYMO_ERR_MODEL,
                          "base and rod are on the same body (%s); the cylinder could not move",
                          body_label(m, m->points[cy->point_rod].body));
    }
    double D, d;
    TRY(f_number(c, cn, "piston_diameter", 1, 0, R_POSITIVE, &D, NULL));
    TRY(f_number(c, cn, "rod_diameter", 1, 0, R_POSITIVE, &d, NULL));
    if (!(d < D)) {
        return fail_field(c, cn, "rod_diameter", HYMO_ERR_MODEL,
                          "rod diameter %g must be smaller than the piston diameter %g", d, D);
    }
    cy->piston_area = 0.25 * k_pi * D * D;
    cy->rod_side_area = 0.25 * k_pi * (D * D - d * d);
    TRY(f_number(c, cn, "length", 1, 0, R_POSITIVE, &cy->length, NULL));
    TRY(f_number(c, cn, "piston_length0", 0, 0, R_NONNEGATIVE, &cy->l_pist0, &cy->has_l_pist0));
    if (cy->has_l_pist0) {
        if (!(cy->l_pist0 > 0.0 && cy->l_pist0 < cy->length)) { /* branch s18-ux: both chambers non-empty */
            return fail_field(c, cn, "piston_length0", HYMO_ERR_MODEL,
                              "must lie strictly between 0 and the cylinder length %g (both chambers "
                              "start with some length), got %g", cy->length, cy->l_pist0);
        }
        cy->l_rod0 = cy->length - cy->l_pist0;
    }
    TRY(f_number(c, cn, "viscous_damping", 0, 0.0, R_NONNEGATIVE, &cy->viscous, NULL));
    TRY(f_number(c, cn, "efficiency", 0, 1.0, R_EFFICIENCY, &cy->efficiency, NULL));
    TRY(f_number(c, cn, "friction_velocity", 0, DEFAULT_FRICTION_VELOCITY, R_POSITIVE,
                 &cy->friction_velocity, NULL));
    yaml_node_t *dn = map_get(c, cn, "end_damper");
    if (dn) {
        static const char *const dkeys[] = {"length", "stiffness", "damping", NULL};
        size_t o = push_key(c, "end_damper");
        hymo_status st = check_map(c, dn, dkeys);
        if (!st) st = f_number(c, dn, "length", 1, 0, R_POSITIVE, &cy->damper_length, NULL);
        if (!st) st = f_number(c, dn, "stiffness", 1, 0, R_NONNEGATIVE, &cy->damper_stiffness, NULL);
        if (!st) st = f_number(c, dn, "damping", 1, 0, R_NONNEGATIVE, &cy->damper_damping, NULL);
        if (!st && 2 * cy->damper_length > cy->length) {
            st = fail_field(c, dn, "length", HYMO_ERR_MODEL,
                            "damper length %g is more than half the cylinder length %g",
                            cy->damper_length, cy->length);
        }
        pop(c, o);
        TRY(st);
        cy->has_damper = 1;
    }
    cy->node_piston = cy->node_rod = -1;
    m->n_cylinders++;
    return HYMO_OK;
}

static hymo_status load_volume(ctx_t *c, yaml_node_t *vn, hymo_model *m, int k)
{
    static const char *const keys[] = {"name", "parts", "initial_pressure", NULL};
    static const char *const part_keys[] = {"volume", "chamber", "bulk_modulus", NULL};
    hymo_node *nd = &m->nodes[k];
    char name[HYMO_NAME_MAX];
    TRY(check_map(c, vn, keys));
    TRY(f_name(c, vn, "name", name));
    TRY(check_new_node(c, vn, m, name));
    snprintf(nd->name, sizeof nd->name, "%s", name);
    nd->kind = HYMO_NODE_VOLUME;
    nd->state = k;

    /* initial pressure: number or "static" */
    yaml_node_t *pn = map_get(c, vn, "initial_pressure");
    if (!pn) return missing(c, vn, "initial_pressure");
    if (pn->type == YAML_SCALAR_NODE && strcmp(sval(pn), "static") == 0) {
        nd->p0_rule = HYMO_P0_STATIC;
        nd->p0 = 0;
    } else {
        size_t o = push_key(c, "initial_pressure");
        hymo_status st = HYMO_OK;
        if (pn->type != YAML_SCALAR_NODE || is_null(pn) ||
            pn->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || !parse_double(sval(pn), &nd->p0)) {
            st = fail(c, pn, HYMO_ERR_MODEL, "expected a pressure in Pa or \"static\", got %s%s%s",
                      pn->type == YAML_SCALAR_NODE && !is_null(pn) ? "'" : kind_name(pn),
                      pn->type == YAML_SCALAR_NODE && !is_null(pn) ? sval(pn) : "",
                      pn->type == YAML_SCALAR_NODE && !is_null(pn) ? "'" : "");
        }
        if (!st) st = check_range(c, pn, nd->p0, R_NONNEGATIVE);
        pop(c, o);
        TRY(st);
        nd->p0_rule = HYMO_P0_GIVEN;
    }

    yaml_node_t *parts;
    TRY(f_seq(c, vn, "parts", 1, &parts));
    int np = seq_len(parts);
    if (np == 0) {
        return fail_field(c, vn, "parts", HYMO_ERR_MODEL, "a volume needs at least one part");
    }
    hymo_subvolume *sv = realloc(m->subvolumes, (size_t)(m->n_subvolumes + np) * sizeof *sv);
    if (!sv) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    m->subvolumes = sv;
    nd->first_part = m->n_subvolumes;
    nd->n_parts = np;
    size_t o = push_key(c, "parts");
    hymo_status st = HYMO_OK;
    for (int j = 0; j < np && !st; j++) {
        yaml_node_t *part = seq_item(c, parts, j);
        hymo_subvolume *s = &m->subvolumes[m->n_subvolumes];
        memset(s, 0, sizeof *s);
        s->cylinder = -1;
        s->chamber = HYMO_CHAMBER_NONE;
        size_t o2 = push_index(c, j);
        st = check_map(c, part, part_keys);
        yaml_node_t *vol = st ? NULL : map_get(c, part, "volume");
        yaml_node_t *ch = st ? NULL : map_get(c, part, "chamber");
        if (!st && vol && ch) {
            st = fail(c, part, HYMO_ERR_MODEL, "a part is either a fixed volume or a chamber, not both");
        } else if (!st && !vol && !ch) {
            st = fail(c, part, HYMO_ERR_MODEL,
                      "missing required field: volume (m^3) or chamber (CYLINDER.piston|rod)");
        }
        if (!st && vol) st = f_number(c, part, "volume", 1, 0, R_POSITIVE, &s->volume, NULL);
        if (!st && ch) {
            const char *ref;
            st = f_ref(c, part, "chamber", 1, &ref);
            const char *dot = st ? NULL : strrchr(ref, '.');
            if (!st && !dot) {
                st = fail_field(c, part, "chamber", HYMO_ERR_MODEL,
                                "expected CYLINDER.piston or CYLINDER.rod, got '%s'", ref);
            }
            if (!st) {
                int cyl = -1;
                for (int i = 0; i < m->n_cylinders; i++) {
                    if (strlen(m->cylinders[i].name) == (size_t)(dot - ref) &&
                        strncmp(m->cylinders[i].name, ref, (size_t)(dot - ref)) == 0)
                        cyl = i;
                }
                if (strcmp(dot + 1, "piston") == 0) {
                    s->chamber = HYMO_CHAMBER_PISTON;
                } else if (strcmp(dot + 1, "rod") == 0) {
                    s->chamber = HYMO_CHAMBER_ROD;
                } else {
                    st = fail_field(c, part, "chamber", HYMO_ERR_MODEL,
                                    "unknown chamber '%s' (expected piston or rod)", dot + 1);
                }
                if (!st && cyl < 0) {
                    st = fail_field(c, part, "chamber", HYMO_ERR_MODEL, "unknown cylinder '%.*s'",
                                    (int)(dot - ref), ref);
                }
                if (!st) {
                    int *owner = &c->chamber_owner[2 * cyl + (int)s->chamber];
                    if (*owner >= 0) {
                        st = fail_field(c, part, "chamber", HYMO_ERR_MODEL,
                                        "chamber '%s' is already part of volume '%s'", ref,
                                        m->nodes[*owner].name);
                    } else {
                        *owner = k;
                        s->cylinder = cyl;
                        if (s->chamber == HYMO_CHAMBER_PISTON) m->cylinders[cyl].node_piston = k;
                        else m->cylinders[cyl].node_rod = k;
                    }
                }
            }
        }
        if (!st) st = f_number(c, part, "bulk_modulus", 1, 0, R_POSITIVE, &s->bulk_modulus, NULL);
        if (!st) m->n_subvolumes++;
        pop(c, o2);
    }
    pop(c, o);
    return st;
}

/* name, from and to of a two-port element (`what`: "a throttle"); the
 * ports must differ */
static hymo_status f_two_port(ctx_t *c, yaml_node_t *n, const hymo_model *m, char *name, int *a, int *b,
                              const char *what)
{
    TRY(f_name(c, n, "name", name));
    TRY(check_new_element(c, n, m, name));
    TRY(f_node(c, n, "from", m, a));
    TRY(f_node(c, n, "to", m, b));
    if (*a == *b) return fail_field(c, n, "to", HYMO_ERR_MODEL, "%s must connect two different nodes", what);
    return HYMO_OK;
}

/* an orifice's flow_coefficient, or area and discharge_coefficient
 * (C = C_d A sqrt(2/rho)) */
static hymo_status f_orifice(ctx_t *c, yaml_node_t *n, const hymo_model *m, double *C)
{
    int has_ct, has_area, has_cd;
    double area, cd;
    TRY(f_number(c, n, "flow_coefficient", 0, 0, R_POSITIVE, C, &has_ct));
    TRY(f_number(c, n, "area", 0, 0, R_POSITIVE, &area, &has_area));
    TRY(f_number(c, n, "discharge_coefficient", 0, 0, R_POSITIVE, &cd, &has_cd));
    if (has_ct && (has_area || has_cd)) {
        return fail_field(c, n, "flow_coefficient", HYMO_ERR_MODEL,
                          "give either flow_coefficient or area and discharge_coefficient, not both");
    }
    if (has_ct) return HYMO_OK;
    if (!has_area && !has_cd) {
        return fail(c, n, HYMO_ERR_MODEL, "missing required field: flow_coefficient, or area and discharge_coefficient");
    }
    if (!has_area) return missing(c, n, "area");
    if (!has_cd) return missing(c, n, "discharge_coefficient");
    *C = cd * area * sqrt(2.0 / m->fluid.density);
    return HYMO_OK;
}

static hymo_status load_throttle(ctx_t *c, yaml_node_t *tn, hymo_model *m, int k)
{
    (void)k; /* equals m->n_throttles: items are appended as they load */
    static const char *const keys[] = {"name", "from", "to", "area", "discharge_coefficient",
                                       "flow_coefficient", NULL};
    hymo_throttle *th = &m->throttles[m->n_throttles];
    TRY(check_map(c, tn, keys));
    TRY(f_two_port(c, tn, m, th->name, &th->node_a, &th->node_b, "a throttle"));
    TRY(f_orifice(c, tn, m, &th->Ct));
    m->n_throttles++;
    return HYMO_OK;
}

static hymo_status load_relief(ctx_t *c, yaml_node_t *rn, hymo_model *m, int k)
{
    (void)k; /* equals m->n_relief_valves: items are appended as they load */
    static const char *const keys[] = {"name", "from", "to", "cracking_pressure", "gradient", "leakage", NULL};
    hymo_relief_valve *rv = &m->relief_valves[m->n_relief_valves];
    TRY(check_map(c, rn, keys));
    TRY(f_two_port(c, rn, m, rv->name, &rv->node_a, &rv->node_b, "a relief valve"));
    TRY(f_number(c, rn, "cracking_pressure", 1, 0, R_NONNEGATIVE, &rv->p_crack, NULL));
    TRY(f_number(c, rn, "gradient", 1, 0, R_POSITIVE, &rv->gradient, NULL));
    TRY(f_number(c, rn, "leakage", 0, 0, R_NONNEGATIVE, &rv->leakage, NULL));
    m->n_relief_valves++;
    return HYMO_OK;
}

static hymo_status load_check(ctx_t *c, yaml_node_t *cn, hymo_model *m, int k)
{
    (void)k; /* equals m->n_check_valves: items are appended as they load */
    static const char *const keys[] = {"name", "from", "to", "cracking_pressure", "opening_pressure",
                                       "flow_coefficient", "area", "discharge_coefficient", "leakage", NULL};
    hymo_check_valve *cv = &m->check_valves[m->n_check_valves];
    TRY(check_map(c, cn, keys));
    TRY(f_two_port(c, cn, m, cv->name, &cv->node_a, &cv->node_b, "a check valve"));
    TRY(f_number(c, cn, "cracking_pressure", 1, 0, R_NONNEGATIVE, &cv->p_crack, NULL));
    TRY(f_number(c, cn, "opening_pressure", 1, 0, R_POSITIVE, &cv->p_open, NULL));
    TRY(f_orifice(c, cn, m, &cv->Cmax));
    TRY(f_number(c, cn, "leakage", 0, 0, R_NONNEGATIVE, &cv->leakage, NULL));
    m->n_check_valves++;
    return HYMO_OK;
}

#define HYMO_MODEL_LOAD_UNIT /* valves branch: pumps, flow control valves, valve edges */
#include "model_load_valves.c"

static hymo_status load_valve(ctx_t *c, yaml_node_t *vn, hymo_model *m, int k)
{
    (void)k; /* equals m->n_valves: items are appended as they load */
    static const char *const keys[] = {"name", "type", "P", "T", "A", "B", "flow_coefficient",
                                       "bandwidth_hz", "time_constant", "signal", "edges", "overlap", "leakage",
                                       NULL};
    hymo_valve *va = &m->valves[m->n_valves];
    TRY(check_map(c, vn, keys));
    TRY(f_name(c, vn, "name", va->name));
    TRY(check_new_element(c, vn, m, va->name));
    const char *type;
    TRY(f_ref(c, vn, "type", 1, &type));
    if (strcmp(type, "4/3") != 0) {
        return fail_field(c, vn, "type", HYMO_ERR_MODEL, "unknown valve type '%s' (expected 4/3)", type);
    }
    TRY(f_node(c, vn, "P", m, &va->port_P));
    TRY(f_node(c, vn, "T", m, &va->port_T));
    TRY(f_node(c, vn, "A", m, &va->port_A));
    TRY(f_node(c, vn, "B", m, &va->port_B));
    int ports[4] = {va->port_P, va->port_T, va->port_A, va->port_B};
    static const char *const port_key[4] = {"P", "T", "A", "B"};
    for (int i = 1; i < 4; i++) {
        for (int j = 0; j < i; j++) {
            if (ports[i] == ports[j]) {
                return fail_field(c, vn, port_key[i], HYMO_ERR_MODEL,
                                  "ports %s and %s are both connected to '%s'", port_key[j],
                                  port_key[i], m->nodes[ports[i]].name);
            }
        }
    }
    TRY(load_valve_edges(c, vn, m, va, m->n_valves));
    int has_bw, has_tau;
    double bw;
    TRY(f_number(c, vn, "bandwidth_hz", 0, 0, R_POSITIVE, &bw, &has_bw));
    TRY(f_number(c, vn, "time_constant", 0, 0, R_POSITIVE, &va->tau, &has_tau));
    if (has_bw && has_tau) {
        return fail_field(c, vn, "time_constant", HYMO_ERR_MODEL,
                          "give either bandwidth_hz or time_constant, not both");
    }
    if (!has_bw && !has_tau) {
        return fail(c, vn, HYMO_ERR_MODEL,
                    "missing required field: bandwidth_hz (f_-45, Hz) or time_constant (s)");
    }
    if (has_bw) va->tau = 1.0 / (2.0 * k_pi * bw);
    const char *sig;
    TRY(f_ref(c, vn, "signal", 1, &sig));
    va->signal = -1;
    for (int i = 0; i < m->n_signals; i++) {
        if (strcmp(m->signals[i].name, sig) == 0) va->signal = i;
    }
    if (va->signal < 0) return fail_field(c, vn, "signal", HYMO_ERR_MODEL, "unknown signal '%s'", sig);
    va->state = m->n_valves;
    m->n_valves++;
    return HYMO_OK;
}

/* branch fluid: fluid law and accumulators (uses the readers above) */
#define HYMO_MODEL_LOAD_PARTS
#include "model_load_fluid.c"

/* Runs `fn` on every item of hydraulics[key] with the path set. */
#include "model_load_motor.inc" /* motor branch: signal shaping, motors */

static hymo_status load_hydraulics_in(ctx_t *c, yaml_node_t *hn, hymo_model *m)
{
    static const char *const keys[] = {"fluid",  "sources",       "cylinders",    "volumes", "throttles",
                                       "valves", "relief_valves", "check_valves", "pumps", "flow_control_valves",
                                       "accumulators", "motors", NULL};
    TRY(check_map(c, hn, keys));

    yaml_node_t *fl = map_get(c, hn, "fluid");
    if (!fl) return missing(c, hn, "fluid");
    {
        static const char *const fkeys[] = {"bulk_modulus", "density", "laminar_transition", FLUID_MODEL_KEYS, NULL};
        size_t o = push_key(c, "fluid");
        hymo_status st = check_map(c, fl, fkeys);
        if (!st) st = f_number(c, fl, "bulk_modulus", 1, 0, R_POSITIVE, &m->fluid.bulk_modulus_oil, NULL);
        if (!st) st = f_number(c, fl, "density", 1, 0, R_POSITIVE, &m->fluid.density, NULL);
        if (!st) {
            st = f_number(c, fl, "laminar_transition", 0, DEFAULT_P_TRANSITION, R_POSITIVE,
                          &m->fluid.p_transition, NULL);
        }
        if (!st) st = load_fluid_model(c, fl, m);
        pop(c, o);
        TRY(st);
    }

    yaml_node_t *src, *cyl, *vol, *thr, *val;
    TRY(f_seq(c, hn, "sources", 0, &src));
    TRY(f_seq(c, hn, "cylinders", 0, &cyl));
    TRY(f_seq(c, hn, "volumes", 0, &vol));
    TRY(f_seq(c, hn, "throttles", 0, &thr));
    TRY(f_seq(c, hn, "valves", 0, &val));
    yaml_node_t *rel, *chk;
    TRY(f_seq(c, hn, "relief_valves", 0, &rel));
    TRY(f_seq(c, hn, "check_valves", 0, &chk));
    const int nrel = rel ? seq_len(rel) : 0, nchk = chk ? seq_len(chk) : 0;
    int ns = src ? seq_len(src) : 0, nc = cyl ? seq_len(cyl) : 0, nv = vol ? seq_len(vol) : 0;
    int nt = thr ? seq_len(thr) : 0, nva = val ? seq_len(val) : 0;

    /* Nodes: volumes first (node index = pressure state index), then sources. */
    if (nv + ns > 0) {
        m->nodes = calloc((size_t)(nv + ns), sizeof *m->nodes);
        if (!m->nodes) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    if (nc > 0) {
        m->cylinders = calloc((size_t)nc, sizeof *m->cylinders);
        c->chamber_owner = malloc((size_t)(2 * nc) * sizeof *c->chamber_owner);
        if (!m->cylinders || !c->chamber_owner) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
        for (int i = 0; i < 2 * nc; i++) c->chamber_owner[i] = -1;
    }
    if (nt > 0 && !(m->throttles = calloc((size_t)nt, sizeof *m->throttles))) {
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    if (nva > 0 && !(m->valves = calloc((size_t)nva, sizeof *m->valves))) {
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    TRY(valves_alloc_edges(c, m, nva));
    if (nrel > 0 && !(m->relief_valves = calloc((size_t)nrel, sizeof *m->relief_valves))) {
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    if (nchk > 0 && !(m->check_valves = calloc((size_t)nchk, sizeof *m->check_valves))) {
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }

    /* sources (stored after the volumes); unnamed slots match no name */
    m->n_nodes = nv + ns;
    if (src) {
        static const char *const skeys[] = {"name", "pressure", NULL};
        size_t o = push_key(c, "sources");
        hymo_status st = HYMO_OK;
        for (int k = 0; k < ns && !st; k++) {
            yaml_node_t *sn = seq_item(c, src, k);
            hymo_node *nd = &m->nodes[nv + k];
            size_t o2 = push_index(c, k);
            st = check_map(c, sn, skeys);
            char name[HYMO_NAME_MAX];
            if (!st) st = f_name(c, sn, "name", name);
            if (!st) st = check_new_node(c, sn, m, name);
            if (!st) st = f_number(c, sn, "pressure", 1, 0, R_NONNEGATIVE, &nd->pressure, NULL);
            if (!st) {
                snprintf(nd->name, sizeof nd->name, "%s", name);
                nd->kind = HYMO_NODE_SOURCE;
                nd->state = -1;
                nd->first_part = -1;
            }
            pop(c, o2);
        }
        pop(c, o);
        TRY(st);
    }

    TRY(each_item(c, cyl, "cylinders", load_cylinder, m));

    TRY(each_item(c, vol, "volumes", load_volume, m));
    m->n_volumes = nv;

    /* every chamber belongs to exactly one volume */
    for (int i = 0; i < nc; i++) {
        for (int ch = 0; ch < 2; ch++) {
            if (c->chamber_owner[2 * i + ch] < 0) {
                size_t o = push_key(c, "cylinders");
                push_index(c, i);
                hymo_status st = fail(c, seq_item(c, cyl, i), HYMO_ERR_MODEL,
                                      "the %s chamber of cylinder '%s' is not part of any volume "
                                      "(add {chamber: %s.%s} to a volume's parts)",
                                      ch == 0 ? "piston" : "rod", m->cylinders[i].name,
                                      m->cylinders[i].name, ch == 0 ? "piston" : "rod");
                pop(c, o);
                return st;
            }
        }
    }

    TRY(each_item(c, thr, "throttles", load_throttle, m));
    TRY(each_item(c, val, "valves", load_valve, m));
    TRY(each_item(c, rel, "relief_valves", load_relief, m));
    TRY(each_item(c, chk, "check_valves", load_check, m));
    TRY(load_valves_branch(c, hn, m));
    TRY(load_fluid_parts(c, hn, m));
    TRY(load_motors(c, hn, m)); /* model_load_motor.inc */
    return HYMO_OK;
}

static hymo_status load_hydraulics(ctx_t *c, yaml_node_t *root, hymo_model *m)
{
    m->fluid.p_transition = DEFAULT_P_TRANSITION;
    yaml_node_t *hn = map_get(c, root, "hydraulics");
    if (!hn) return HYMO_OK;
    size_t o = push_key(c, "hydraulics");
    hymo_status st = load_hydraulics_in(c, hn, m);
    pop(c, o);
    return st;
}

/* ------------------------------------------------------------------ */
/* Model identity: the canonical form of the document                   */

/* The physics hash (hymo_model.physics_sha256, docs/model-format.md "Model
 * identity") is the SHA-256 of a canonical serialisation of the parsed
 * YAML document: mapping keys sorted, numbers as %.17g of their value (so
 * 1.5e9 and 1500000000 agree), other scalars as length-prefixed bytes,
 * sequences in order; the top-level `simulation` (step, end time,
 * tolerances, iteration limit, penalty factor) and `description` are left
 * out.  Comments, whitespace, flow or block style, quoting and key order
 * therefore do not change it. */
typedef struct {
    char *buf;
    size_t len, cap;
    int failed;
} canon_buf;

static void canon_put(canon_buf *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (b->len + n + 1 > cap) cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb) {
            b->failed = 1;
            return;
        }
        b->buf = nb;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

static void canon_str(canon_buf *b, const char *s) { canon_put(b, s, strlen(s)); }

typedef struct {
    char *text;
    size_t len;
} canon_item;

static int canon_item_cmp(const void *a, const void *b)
{
    const canon_item *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->text, y->text, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static void canon_node(ctx_t *c, const yaml_node_t *n, canon_buf *b, int depth, int top)
{
    char tmp[64];
    if (!n || depth > 64) {
        canon_str(b, "!");
        return;
    }
    if (n->type == YAML_SCALAR_NODE) {
        double v;
        if (parse_double(sval(n), &v)) {
            snprintf(tmp, sizeof tmp, "n%.17g;", v == 0.0 ? 0.0 : v);
            canon_str(b, tmp);
        } else {
            snprintf(tmp, sizeof tmp, "s%zu:", n->data.scalar.length);
            canon_str(b, tmp);
            canon_put(b, sval(n), n->data.scalar.length);
        }
        return;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        canon_str(b, "[");
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
            canon_node(c, node_at(c, *it), b, depth + 1, 0);
            canon_str(b, ",");
        }
        canon_str(b, "]");
        return;
    }
    if (n->type != YAML_MAPPING_NODE) {
        canon_str(b, "?");
        return;
    }
    const yaml_node_pair_t *p0 = n->data.mapping.pairs.start, *p1 = n->data.mapping.pairs.top;
    size_t count = (size_t)(p1 - p0);
    canon_item *items = calloc(count ? count : 1, sizeof *items);
    if (!items) {
        b->failed = 1;
        return;
    }
    size_t k = 0;
    for (const yaml_node_pair_t *p = p0; p < p1; p++) {
        const yaml_node_t *key = node_at(c, p->key);
        if (top && key && key->type == YAML_SCALAR_NODE &&
            (!strcmp(sval(key), "simulation") || !strcmp(sval(key), "description") ||
             !strcmp(sval(key), "sensors"))) /* output only (branch sensors) */
            continue;
        canon_buf e = {0};
        canon_node(c, key, &e, depth + 1, 0);
        canon_str(&e, "=");
        canon_node(c, node_at(c, p->value), &e, depth + 1, 0);
        if (e.failed) b->failed = 1;
        items[k].text = e.buf;
        items[k].len = e.len;
        k++;
    }
    qsort(items, k, sizeof *items, canon_item_cmp);
    canon_str(b, "{");
    for (size_t i = 0; i < k; i++) {
        if (items[i].text) canon_put(b, items[i].text, items[i].len);
        canon_str(b, ";");
        free(items[i].text);
    }
    canon_str(b, "}");
    free(items);
}

/* physics_sha256 of the document in c (0 on success, -1 out of memory). */
static int physics_hash(ctx_t *c, char out[65])
{
    canon_buf b = {0};
    canon_str(&b, "hymo-model-canonical-1\n");
    canon_node(c, yaml_document_get_root_node(&c->doc), &b, 0, 1);
    int rc = b.failed ? -1 : 0;
    if (!rc) hymo_sha256_hex(b.buf, b.len, out);
    free(b.buf);
    return rc;
}

/* ------------------------------------------------------------------ */
/* --set PATH=VALUE overrides (docs/overrides.md)                       */

/* Lists what exists at a mapping (its keys) or a sequence (its items'
 * names, or its length) into buf, for the message of a failed path. */
static void list_here(ctx_t *c, const yaml_node_t *n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    if (n->type == YAML_MAPPING_NODE) {
        len += (size_t)snprintf(buf, cap, "keys:");
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top && len < cap; p++) {
            yaml_node_t *k = node_at(c, p->key);
            if (k && k->type == YAML_SCALAR_NODE)
                len += (size_t)snprintf(buf + len, cap - len, " %s", sval(k));
        }
    } else if (n->type == YAML_SEQUENCE_NODE) {
        int count = seq_len(n), named = 0;
        len += (size_t)snprintf(buf, cap, "%d item%s [0]..[%d]", count, count == 1 ? "" : "s", count - 1);
        for (int i = 0; i < count && len < cap; i++) {
            yaml_node_t *it = seq_item(c, n, i);
            yaml_node_t *nm = it && it->type == YAML_MAPPING_NODE ? map_get(c, it, "name") : NULL;
            if (nm && nm->type == YAML_SCALAR_NODE) {
                len += (size_t)snprintf(buf + len, cap - len, "%s%s", named ? " " : ", names: ", sval(nm));
                named = 1;
            }
        }
        if (count == 0) snprintf(buf, cap, "no items");
    } else {
        snprintf(buf, cap, "a single value");
    }
    if (len >= cap && cap > 4) memcpy(buf + cap - 4, "...", 4);
}

static hymo_status set_fail(ctx_t *c, const char *spec, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static hymo_status set_fail(ctx_t *c, const char *spec, const char *fmt, ...)
{
    char problem[HYMO_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, sizeof problem, fmt, ap);
    va_end(ap);
    hymo_error_set(c->err, HYMO_ERR_ARGUMENT, "%s: --set %s: %s", c->origin, spec, problem);
    if (c->err) one_line(c->err->message);
    return HYMO_ERR_ARGUMENT;
}

/* Applies override i ("PATH=VALUE") to the document. */
static hymo_status apply_set(ctx_t *c, int i)
{
    const char *spec = c->set[i];
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec) return set_fail(c, spec, "expected PATH=VALUE, e.g. hydraulics.valves[dcv1].flow_coefficient=2e-8");
    char path[384], where[384], here[320];
    size_t plen = (size_t)(eq - spec);
    if (plen >= sizeof path) return set_fail(c, spec, "the path is too long");
    memcpy(path, spec, plen);
    path[plen] = '\0';
    const char *value = eq + 1;
    yaml_node_t *root = yaml_document_get_root_node(&c->doc);
    if (!root) return set_fail(c, spec, "the model is empty");
    int cur = 1; /* the root node's id */
    where[0] = '\0';
    size_t wlen = 0;
    const char *p = path;
    while (*p) {
        /* a key: up to '.', '[' or the end */
        size_t klen = strcspn(p, ".[");
        if (klen == 0 && *p != '[') return set_fail(c, spec, "empty name after '%s'", where[0] ? where : "(start)");
        if (klen > 0) {
            char key[HYMO_NAME_MAX * 2];
            if (klen >= sizeof key) return set_fail(c, spec, "name '%.*s' is too long", (int)klen, p);
            memcpy(key, p, klen);
            key[klen] = '\0';
            yaml_node_t *n = node_at(c, cur);
            if (n->type != YAML_MAPPING_NODE) {
                list_here(c, n, here, sizeof here);
                return set_fail(c, spec, "'%s' is not a mapping, so it has no key '%s' (%s has %s)",
                                where[0] ? where : "the model", key, where[0] ? where : "the model", here);
            }
            int found = 0;
            for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++) {
                yaml_node_t *k = node_at(c, q->key);
                if (k && k->type == YAML_SCALAR_NODE && !strcmp(sval(k), key)) {
                    found = q->value;
                    break;
                }
            }
            int last = p[klen] == '\0';
            if (!found && last) {
                /* A key the file leaves out (an optional field): add it;
                 * the loader then checks it like any other key. */
                int kid = yaml_document_add_scalar(&c->doc, NULL, (yaml_char_t *)key, (int)klen,
                                                   YAML_PLAIN_SCALAR_STYLE);
                int vid = kid ? yaml_document_add_scalar(&c->doc, NULL, (yaml_char_t *)value, (int)strlen(value),
                                                         YAML_PLAIN_SCALAR_STYLE)
                              : 0;
                if (!kid || !vid || !yaml_document_append_mapping_pair(&c->doc, cur, kid, vid))
                    return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
                c->set_key[i] = kid;
                c->set_value[i] = vid;
                return HYMO_OK;
            }
            if (!found) {
                list_here(c, n, here, sizeof here);
                return set_fail(c, spec, "no key '%s' in %s (%s)", key, where[0] ? where : "the model", here);
            }
            cur = found;
            int w = snprintf(where + wlen, sizeof where - wlen, "%s%s", wlen ? "." : "", key);
            if (w > 0) wlen = wlen + (size_t)w < sizeof where ? wlen + (size_t)w : sizeof where - 1;
            p += klen;
        }
        /* selectors: [name] or [index] */
        while (*p == '[') {
            const char *close = strchr(p, ']');
            if (!close) return set_fail(c, spec, "'[' without ']'");
            char sel[HYMO_NAME_MAX * 2];
            size_t slen = (size_t)(close - p - 1);
            if (slen == 0 || slen >= sizeof sel) return set_fail(c, spec, "empty or too long selector '[%.*s]'", (int)slen, p + 1);
            memcpy(sel, p + 1, slen);
            sel[slen] = '\0';
            yaml_node_t *n = node_at(c, cur);
            if (n->type != YAML_SEQUENCE_NODE) {
                list_here(c, n, here, sizeof here);
                return set_fail(c, spec, "'%s' is not a list, so [%s] selects nothing (it has %s)",
                                where[0] ? where : "the model", sel, here);
            }
            int digits = strspn(sel, "0123456789") == slen, pick = 0;
            if (digits) {
                long idx = strtol(sel, NULL, 10);
                if (idx < 0 || idx >= seq_len(n)) {
                    list_here(c, n, here, sizeof here);
                    return set_fail(c, spec, "no item [%s] in %s (%s)", sel, where, here);
                }
                pick = n->data.sequence.items.start[idx];
            } else {
                for (int j = 0; j < seq_len(n) && !pick; j++) {
                    yaml_node_t *it = seq_item(c, n, j);
                    yaml_node_t *nm = it && it->type == YAML_MAPPING_NODE ? map_get(c, it, "name") : NULL;
                    if (nm && nm->type == YAML_SCALAR_NODE && !strcmp(sval(nm), sel))
                        pick = n->data.sequence.items.start[j];
                }
                if (!pick) {
                    list_here(c, n, here, sizeof here);
                    return set_fail(c, spec, "no item named '%s' in %s (%s)", sel, where, here);
                }
            }
            cur = pick;
            int w = snprintf(where + wlen, sizeof where - wlen, "[%s]", sel);
            if (w > 0) wlen = wlen + (size_t)w < sizeof where ? wlen + (size_t)w : sizeof where - 1;
            p = close + 1;
        }
        if (*p == '.') {
            p++;
            if (!*p) return set_fail(c, spec, "the path ends with '.'");
        } else if (*p) {
            return set_fail(c, spec, "unexpected '%c' after '%s'", *p, where);
        }
    }
    yaml_node_t *n = node_at(c, cur);
    if (n->type != YAML_SCALAR_NODE) {
        list_here(c, n, here, sizeof here);
        return set_fail(c, spec, "'%s' is a %s (%s); --set replaces one value, name a field inside it",
                        where, n->type == YAML_MAPPING_NODE ? "mapping" : "list", here);
    }
    size_t vlen = strlen(value);
    yaml_char_t *copy = malloc(vlen + 1); /* libyaml frees scalars with free() */
    if (!copy) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    memcpy(copy, value, vlen + 1);
    free(n->data.scalar.value);
    n->data.scalar.value = copy;
    n->data.scalar.length = vlen;
    n->data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
    c->set_value[i] = cur;
    return HYMO_OK;
}

/* ------------------------------------------------------------------ */
/* Entry points                                                         */

static hymo_status load_root(ctx_t *c, hymo_model *m)
{
    static const char *const top_keys[] = {"format",     "name",        "description", "gravity",
                                           "simulation", "ground",      "bodies",      "cut_joints",
                                           "independent", "signals",    "hydraulics",  "sensors",
                                           "forces",      "driven_joints", NULL};
    yaml_node_t *root = yaml_document_get_root_node(&c->doc);
    TRY(check_map(c, root, top_keys));
    TRY(load_header(c, root, m));
    TRY(load_signals(c, root, m));
    TRY(load_bodies(c, root, m));
    TRY(load_cuts(c, root, m));
    TRY(load_independent(c, root, m));
    TRY(load_hydraulics(c, root, m));
    TRY(hymo_model_load_sensors(&c->doc, root, c->origin, m, c->err)); /* branch sensors */
    TRY(hymo_load_forces(&c->doc, map_get(c, root, "forces"), c->origin, c->err, m)); /* src/model/model_load_forces.c */
    TRY(load_drivers(c, root, m)); /* model_load_motor.inc */
    TRY(hymo_load_ux(&c->doc, root, c->origin, m, c->err)); /* branch s18-ux: src/model/model_load_ux.c */
    return HYMO_OK;
}

static char *dup_bytes(const char *s, size_t len)
{
    char *d = malloc(len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

/* Line of a libyaml error mark, clamped to the last line of the text
 * (errors at the end of the stream are reported one line past it). */
static int mark_line(const yaml_mark_t *mark, const char *text, size_t len)
{
    int lines = 0;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    if (len > 0 && text[len - 1] != '\n') lines++;
    if (lines < 1) lines = 1;
    int line = (int)mark->line + 1;
    return line > lines ? lines : line;
}

static hymo_status load_buffer(const char *text, size_t len, const char *origin, const char *const *set,
                               int n_set, hymo_model **out, hymo_error *err)
{
    hymo_error_clear(err);
    if (out) *out = NULL;
    if (!out || !text) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_model_load: NULL argument");
    if (!origin) origin = "<string>";

    hymo_model *m = calloc(1, sizeof *m);
    if (!m) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    m->source_text = dup_bytes(text, len);
    m->source_path = dup_bytes(origin, strlen(origin));
    if (!m->source_text || !m->source_path) {
        hymo_model_free(m);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    if (n_set < 0 || (n_set > 0 && !set)) {
        hymo_model_free(m);
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_model_load: bad override list");
    }
    if (n_set > 0) {
        /* The text hash of an overridden model: the file's text followed by
         * one line "#hymo --set PATH=VALUE" per override, in order. */
        size_t total = len + 1;
        for (int i = 0; i < n_set; i++) total += strlen(set[i]) + 16;
        char *joined = malloc(total), *jo = joined;
        m->overrides = calloc((size_t)n_set, sizeof *m->overrides);
        if (!joined || !m->overrides) {
            free(joined);
            hymo_model_free(m);
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        }
        m->n_overrides = n_set;
        memcpy(jo, text, len);
        jo += len;
        for (int i = 0; i < n_set; i++) {
            jo += sprintf(jo, "\n#hymo --set %s", set[i]);
            m->overrides[i] = dup_bytes(set[i], strlen(set[i]));
            if (!m->overrides[i]) {
                free(joined);
                hymo_model_free(m);
                return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
            }
        }
        hymo_sha256_hex(joined, (size_t)(jo - joined), m->sha256);
        free(joined);
    } else {
        hymo_sha256_hex(text, len, m->sha256);
    }

    ctx_t c;
    memset(&c, 0, sizeof c);
    c.origin = origin;
    c.err = err;
    c.set = set;
    c.n_set = n_set;
    if (n_set > 0) {
        c.set_value = calloc((size_t)n_set, sizeof *c.set_value);
        c.set_key = calloc((size_t)n_set, sizeof *c.set_key);
        if (!c.set_value || !c.set_key) {
            free(c.set_value);
            free(c.set_key);
            hymo_model_free(m);
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        }
    }

    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        hymo_model_free(m);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (YAML parser)");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    hymo_status st = HYMO_OK;
    if (!yaml_parser_load(&parser, &c.doc)) {
        st = hymo_error_set(err, HYMO_ERR_PARSE, "%s:%d: syntax error: %s%s%s", origin,
                            mark_line(&parser.problem_mark, text, len),
                            parser.problem ? parser.problem : "invalid YAML",
                            parser.context ? " " : "", parser.context ? parser.context : "");
        if (err) one_line(err->message);
        yaml_parser_delete(&parser);
        hymo_model_free(m);
        return st;
    }
    if (!yaml_document_get_root_node(&c.doc)) {
        st = hymo_error_set(err, HYMO_ERR_PARSE, "%s:1: empty model file", origin);
    } else {
        /* Exactly one document. */
        yaml_document_t extra;
        if (!yaml_parser_load(&parser, &extra)) {
            st = hymo_error_set(err, HYMO_ERR_PARSE, "%s:%d: syntax error: %s%s%s", origin,
                                mark_line(&parser.problem_mark, text, len),
                                parser.problem ? parser.problem : "invalid YAML",
                                parser.context ? " " : "", parser.context ? parser.context : "");
            if (err) one_line(err->message);
        } else {
            yaml_node_t *r2 = yaml_document_get_root_node(&extra);
            if (r2) {
                st = hymo_error_set(err, HYMO_ERR_PARSE,
                                    "%s:%d: more than one YAML document (a model file holds one)",
                                    origin, (int)r2->start_mark.line + 1);
            }
            yaml_document_delete(&extra);
        }
    }
    yaml_parser_delete(&parser);

    for (int i = 0; !st && i < n_set; i++) st = apply_set(&c, i);
    if (!st) st = load_root(&c, m);
    if (!st && physics_hash(&c, m->physics_sha256) != 0) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    if (!st) st = hymo_compile(m, err); /* the model's constants, once */

    yaml_document_delete(&c.doc);
    free(c.raw);
    free(c.decl_of_sorted);
    free(c.chamber_owner);
    free(c.set_value);
    free(c.set_key);
    if (st && n_set > 0 && err && !strstr(err->message, "--set")) {
        /* A failure the overrides may have caused (a check across fields). */
        size_t used = strlen(err->message);
        snprintf(err->message + used, sizeof err->message - used, " (model changed by --set %s%s)", set[0],
                 n_set > 1 ? " ..." : "");
    }
    if (st) {
        hymo_model_free(m);
        return st;
    }
    *out = m;
    return HYMO_OK;
}

hymo_status hymo_model_load_string(const char *text, const char *origin, hymo_model **out,
                                   hymo_error *err)
{
    if (!text) {
        if (out) *out = NULL;
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_model_load_string: NULL text");
    }
    return load_buffer(text, strlen(text), origin, NULL, 0, out, err);
}

hymo_status hymo_model_load_file(const char *path, hymo_model **out, hymo_error *err)
{
    return hymo_model_load_file_set(path, NULL, 0, out, err);
}

hymo_status hymo_model_load_file_set(const char *path, const char *const *set, int n_set, hymo_model **out,
                                     hymo_error *err)
{
    if (out) *out = NULL;
    if (!path) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_model_load_file: NULL path");
    FILE *f = fopen(path, "rb");
    if (!f) {
        return hymo_error_set(err, HYMO_ERR_IO, "%s: cannot open model file: %s", path,
                              strerror(errno));
    }
    size_t cap = 1 << 14, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    for (;;) {
        if (len == cap) {
            if (cap > ((size_t)1 << 30)) {
                free(buf);
                fclose(f);
                return hymo_error_set(err, HYMO_ERR_IO, "%s: model file is too large", path);
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        free(buf);
        return hymo_error_set(err, HYMO_ERR_IO, "%s: cannot read model file", path);
    }
    hymo_status st = load_buffer(buf, len, path, set, n_set, out, err);
    free(buf);
    return st;
}
