/* hymo — model file loader (YAML: libyaml's events composed into the
 * loader's own document, model_doc.h).
 *
 * The format is documented in docs/model-format.md.  The loader is strict:
 * unknown keys, wrong types, wrong vector lengths, duplicate keys or names,
 * unresolved references and non-physical values are errors.  Every message
 * is a single line "ORIGIN:LINE: FIELD.PATH: problem"; a missing field
 * points at the line of the mapping that should contain it.
 *
 * Error codes: HYMO_ERR_IO (file cannot be read), HYMO_ERR_PARSE (not valid
 * YAML: syntax, duplicate mapping keys, non-scalar keys, empty file, more
 * than one document), HYMO_ERR_MODEL (everything else).
 *
 * One translation unit, in the order of a model file: this file has the
 * context, the field readers, the header (format, name, gravity,
 * simulation) and the signals; model_load_bodies.inc the mechanism;
 * model_load_hydraulics.inc the circuit (with model_load_valves.c,
 * model_load_fluid.c and model_load_motor.inc); then, here again, the
 * physics hash, the --set overrides and the entry points.  The sections
 * in their own compiled files (forces, sensors, the checks after loading:
 * model_load_forces.c, model_load_sensors.c, model_load_ux.c) use the
 * interfaces of their headers. */
#include "compiled.h"
#include "hymo/model.h"
#include "model_load_sensors.h"
#include "hymo/reference.h"
#include "signal_shape.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "model_doc.h"
#include "name_index.h"
#include "sha256.h"
#include "number.h"
#include "model_load_forces.h"
#include "model_load_ux.h"

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
    hymo_ynode *node;  /* body mapping */
    hymo_ynode *joint; /* joint mapping */
    const char *parent_name;
    int parent_decl; /* declaration index of the parent, -1 = ground */
    int sorted;      /* index in model->bodies */
    hymo_body body;
} raw_body;

typedef struct {
    hymo_ydoc doc;
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
     * for keys an override creates, their key nodes (ids; 0 = none) */
    const char *const *set;
    int n_set;
    int *set_value, *set_key;
    int format; /* the file's format version */
    /* name lookups (core/name_index.h): bodies and joints by name (their
     * declaration index), hydraulic nodes, elements (cylinders, throttles,
     * valves, ...: one name space), cylinders, and the points indexed so
     * far (ix_points of them): "BODY\x1fNAME" -> first point, NAME -> first
     * point with point_count[first] the points of that name */
    hymo_name_index ix_body, ix_joint, ix_node, ix_elem, ix_cyl, ix_point, ix_pname;
    int ix_points, *point_count;
    /* the document's storage: its scalars' text and its collections'
     * items in blocks (compose, --set); the mappings whose pairs --set
     * extended (those pairs malloc'd) */
    struct text_block *text;
    int *owned, n_owned;
} ctx_t;

/* ------------------------------------------------------------------ */
/* The document                                                         */

/* compose builds c->doc (model_doc.h) from the parser's events as
 * yaml_parser_load builds its document (the same nodes in the same order,
 * the same composer errors), keeping of each node only what the loader
 * reads (no tags, no end marks, the start line), with the text of its
 * scalars and the items of its sequences and mappings in large blocks
 * (c->text); doc_delete frees it. */
struct text_block {
    struct text_block *next;
    size_t used, cap;
    char data[];
};

/* n bytes from the blocks, at a multiple of 8 from a block's start when
 * aligned. */
static char *block_space(ctx_t *c, size_t n, int aligned)
{
    struct text_block *b = c->text;
    size_t at = b ? (aligned ? (b->used + 7) & ~(size_t)7 : b->used) : 0;
    if (!b || at > b->cap || b->cap - at < n) {
        const size_t cap = n > 65536 ? n : 65536;
        b = malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = c->text, b->used = 0, b->cap = cap;
        c->text = b;
        at = 0;
    }
    b->used = at + n;
    return b->data + at;
}

static char *text_copy(ctx_t *c, const unsigned char *s, size_t n)
{
    char *out = block_space(c, n + 1, 0);
    if (!out) return NULL;
    if (n) memcpy(out, s, n);
    out[n] = '\0';
    return out;
}

static void doc_delete(ctx_t *c)
{
    hymo_ydoc *d = &c->doc;
    for (int i = 0; i < c->n_owned; ++i) free(d->nodes.start[c->owned[i] - 1].data.pairs);
    free(c->owned);
    c->owned = NULL;
    c->n_owned = 0;
    free(d->nodes.start);
    memset(d, 0, sizeof *d);
    while (c->text) {
        struct text_block *next = c->text->next;
        free(c->text);
        c->text = next;
    }
}

typedef struct {
    char *anchor;
    int index;
    yaml_mark_t mark;
} anchor_t;

static int grow(void **start, void **top, void **end, size_t size)
{
    const size_t n = (size_t)((char *)*end - (char *)*start) / size, k = (size_t)((char *)*top - (char *)*start) / size;
    const size_t cap = n ? 2 * n : 4;
    char *p = realloc(*start, cap * size);
    if (!p) return 0;
    *start = p, *top = p + k * size, *end = p + cap * size;
    return 1;
}

/* The items of the open collections, innermost last: a sequence's
 * node ids, a mapping's key and value ids in turn (a yaml_node_pair_t is
 * the two ids); a collection's items go to the blocks when it ends. */
typedef struct {
    int *id;
    size_t n, cap;
} kids_t;

/* Node index (1-based) to its parent (the collection open last). */
static int add_to_parent(kids_t *k, int n_open, int index)
{
    if (n_open == 0) return 1;
    if (k->n == k->cap) {
        const size_t cap = k->cap ? 2 * k->cap : 256;
        int *ni = realloc(k->id, cap * sizeof *ni);
        if (!ni) return 0;
        k->id = ni, k->cap = cap;
    }
    k->id[k->n++] = index;
    return 1;
}

/* The collection `node` ends: its items (k's from `from` on) into the
 * blocks; 1, 0 when out of memory, -1 when it has more than
 * HYMO_YNODE_N_MAX items (pairs). */
static int end_collection(ctx_t *c, hymo_ynode *node, kids_t *k, size_t from)
{
    const int map = node->type == YAML_MAPPING_NODE;
    if (map && (k->n - from) % 2 && !add_to_parent(k, 1, 0)) return 0;
    const size_t n = k->n - from;
    if ((map ? n / 2 : n) > HYMO_YNODE_N_MAX) return -1;
    int *items = n ? (int *)(void *)block_space(c, n * sizeof(int), 1) : NULL;
    if (n && !items) return 0;
    if (n) memcpy(items, k->id + from, n * sizeof(int));
    k->n = from;
    if (!n) return 1; /* empty: NULL, n = 0 */
    if (map)
        node->data.pairs = (yaml_node_pair_t *)(void *)items;
    else
        node->data.items = items;
    node->n = (unsigned)(map ? n / 2 : n);
    return 1;
}

/* The parser's error for a scalar or collection larger than a node holds. */
static void too_large(yaml_parser_t *p, const yaml_event_t *ev)
{
    p->error = YAML_COMPOSER_ERROR;
    p->problem = "a scalar or collection too large for the loader (over 134217727 bytes or items)";
    p->problem_mark = ev->start_mark;
}

/* The next document of the parser into c->doc: 1, or 0 with the
 * parser's error set (a syntax error, an alias without anchor, an
 * anchor given twice, out of memory). */
static int compose(yaml_parser_t *p, ctx_t *c)
{
    hymo_ydoc *d = &c->doc;
    memset(d, 0, sizeof *d);
    yaml_event_t ev;
    int ok = 1, n_open = 0, cap_open = 0, n_anchor = 0, cap_anchor = 0;
    int *open = NULL;
    size_t *open_from = NULL; /* where each open collection's items begin in kids */
    kids_t kids = {0};
    anchor_t *anchors = NULL;
#define OOM()                                                                                      \
    do {                                                                                           \
        p->error = YAML_MEMORY_ERROR;                                                              \
        ok = 0;                                                                                    \
    } while (0)
    if (!grow((void **)&d->nodes.start, (void **)&d->nodes.top, (void **)&d->nodes.end, sizeof(hymo_ynode))) {
        p->error = YAML_MEMORY_ERROR;
        return 0;
    }
    if (!p->stream_start_produced) {
        if (!yaml_parser_parse(p, &ev)) {
            doc_delete(c);
            return 0;
        }
        yaml_event_delete(&ev); /* STREAM-START */
    }
    if (p->stream_end_produced) return 1;
    if (!yaml_parser_parse(p, &ev)) {
        doc_delete(c);
        return 0;
    }
    if (ev.type == YAML_STREAM_END_EVENT) {
        yaml_event_delete(&ev);
        return 1;
    }
    yaml_event_delete(&ev); /* DOCUMENT-START */
    while (ok) {
        if (!yaml_parser_parse(p, &ev)) {
            ok = 0;
            break;
        }
        int index = 0;
        hymo_ynode node;
        memset(&node, 0, sizeof node);
        node.line = ev.start_mark.line > UINT32_MAX ? UINT32_MAX : (uint32_t)ev.start_mark.line;
        const yaml_char_t *anchor = NULL;
        switch (ev.type) {
        case YAML_DOCUMENT_END_EVENT:
            yaml_event_delete(&ev);
            goto done;
        case YAML_ALIAS_EVENT:
            for (int a = 0; a < n_anchor; ++a)
                if (strcmp(anchors[a].anchor, (const char *)ev.data.alias.anchor) == 0) index = anchors[a].index;
            if (!index) {
                p->error = YAML_COMPOSER_ERROR;
                p->problem = "found undefined alias";
                p->problem_mark = ev.start_mark;
                ok = 0;
            } else if (!add_to_parent(&kids, n_open, index))
                OOM();
            break;
        case YAML_SCALAR_EVENT:
            node.type = YAML_SCALAR_NODE;
            if (ev.data.scalar.length > HYMO_YNODE_N_MAX) {
                too_large(p, &ev);
                ok = 0;
                break;
            }
            node.data.value = (yaml_char_t *)text_copy(c, ev.data.scalar.value, ev.data.scalar.length);
            node.n = (unsigned)ev.data.scalar.length;
            node.style = (unsigned)ev.data.scalar.style;
            anchor = ev.data.scalar.anchor;
            if (!node.data.value) OOM();
            break;
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT: {
            const int seq = ev.type == YAML_SEQUENCE_START_EVENT;
            node.type = seq ? YAML_SEQUENCE_NODE : YAML_MAPPING_NODE;
            anchor = seq ? ev.data.sequence_start.anchor : ev.data.mapping_start.anchor;
            break;
        }
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            switch (end_collection(c, &d->nodes.start[open[n_open - 1] - 1], &kids, open_from[n_open - 1])) {
            case 0: OOM(); break;
            case -1: too_large(p, &ev), ok = 0; break;
            default: break;
            }
            n_open--;
            break;
        default: /* not produced inside a document */
            break;
        }
        if (ok && node.type != YAML_NO_NODE) { /* a new node: pushed, its anchor, its parent, open */
            if (d->nodes.top == d->nodes.end &&
                !grow((void **)&d->nodes.start, (void **)&d->nodes.top, (void **)&d->nodes.end, sizeof(hymo_ynode))) {
                OOM();
            } else {
                *d->nodes.top++ = node;
                node.type = YAML_NO_NODE; /* owned by the document */
                index = (int)(d->nodes.top - d->nodes.start);
            }
            if (ok && anchor) {
                for (int a = 0; a < n_anchor && ok; ++a)
                    if (strcmp(anchors[a].anchor, (const char *)anchor) == 0) {
                        p->error = YAML_COMPOSER_ERROR;
                        p->context = "found duplicate anchor; first occurrence";
                        p->context_mark = anchors[a].mark;
                        p->problem = "second occurrence";
                        p->problem_mark = ev.start_mark;
                        ok = 0;
                    }
                if (ok && n_anchor == cap_anchor) {
                    cap_anchor = cap_anchor ? 2 * cap_anchor : 16;
                    anchor_t *na = realloc(anchors, (size_t)cap_anchor * sizeof *na);
                    if (!na) OOM();
                    else anchors = na;
                }
                if (ok) {
                    anchors[n_anchor].anchor = text_copy(c, anchor, strlen((const char *)anchor));
                    anchors[n_anchor].index = index;
                    anchors[n_anchor].mark = ev.start_mark;
                    if (!anchors[n_anchor++].anchor) OOM();
                }
            }
            if (ok && !add_to_parent(&kids, n_open, index)) OOM();
            if (ok && (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)) {
                if (n_open == cap_open) {
                    cap_open = cap_open ? 2 * cap_open : 64;
                    int *no = realloc(open, (size_t)cap_open * sizeof *no);
                    size_t *nf = no ? realloc(open_from, (size_t)cap_open * sizeof *nf) : NULL;
                    if (no) open = no;
                    if (nf) open_from = nf;
                    if (!no || !nf) OOM();
                }
                if (ok) {
                    open_from[n_open] = kids.n;
                    open[n_open++] = index;
                }
            }
        }
        yaml_event_delete(&ev);
    }
done:
#undef OOM
    free(open);
    free(open_from);
    free(kids.id);
    free(anchors);
    if (!ok) doc_delete(c);
    return ok;
}

/* ------------------------------------------------------------------ */
/* Messages                                                             */

static void one_line(char *s)
{
    for (; *s; s++) {
        if (*s == '\n' || *s == '\r' || *s == '\t' || (unsigned char)*s < 0x20) *s = ' ';
    }
}

static int line_of(const hymo_ynode *n) { return n ? (int)n->line + 1 : 1; }

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
static hymo_status fail(ctx_t *c, const hymo_ynode *at, hymo_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static hymo_status fail(ctx_t *c, const hymo_ynode *at, hymo_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hymo_status st = failv(c, line_of(at), code, fmt, ap);
    va_end(ap);
    /* A value (or key) put there by --set: say so. */
    for (int i = 0; at && c->err && i < c->n_set; i++) {
        if ((c->set_value[i] && hymo_ydoc_node(&c->doc, c->set_value[i]) == at) ||
            (c->set_key[i] && hymo_ydoc_node(&c->doc, c->set_key[i]) == at)) {
            size_t len = strlen(c->err->message);
            snprintf(c->err->message + len, sizeof c->err->message - len, " (from --set %s)", c->set[i]);
            break;
        }
    }
    return st;
}

/* ------------------------------------------------------------------ */
/* Field path                                                           */

/* The decimal digits of v (with '-' when negative) at out; their count. */
static size_t fmt_int(char *out, long long v)
{
    char rev[24];
    size_t n = 0, k = 0;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        rev[n++] = (char)('0' + (int)(u % 10u));
        u /= 10u;
    } while (u);
    if (v < 0) out[k++] = '-';
    while (n) out[k++] = rev[--n];
    return k;
}

/* Appends the n bytes of s to the path, cut at its capacity (the path
 * keeps the first sizeof path - 1 bytes, like snprintf). */
static void path_put(ctx_t *c, const char *s, size_t n)
{
    const size_t room = sizeof c->path - 1 - c->plen;
    if (n > room) n = room;
    memcpy(c->path + c->plen, s, n);
    c->plen += n;
    c->path[c->plen] = '\0';
}

static size_t push_key(ctx_t *c, const char *key)
{
    size_t old = c->plen;
    if (c->plen) path_put(c, ".", 1);
    path_put(c, key, strlen(key));
    return old;
}

static size_t push_index(ctx_t *c, int i)
{
    size_t old = c->plen;
    char tmp[24];
    tmp[0] = '[';
    size_t n = 1 + fmt_int(tmp + 1, i);
    tmp[n++] = ']';
    path_put(c, tmp, n);
    return old;
}

static void pop(ctx_t *c, size_t old)
{
    c->plen = old;
    c->path[old] = '\0';
}

/* ------------------------------------------------------------------ */
/* Nodes                                                                */

/* Node id (1-based) of the document, or NULL. */
static hymo_ynode *node_at(ctx_t *c, int id) { return hymo_ydoc_node(&c->doc, id); }

static const char *sval(const hymo_ynode *n) { return (const char *)n->data.value; }

static int is_null(const hymo_ynode *n)
{
    if (!n || n->type != YAML_SCALAR_NODE) return 0;
    if (n->style != YAML_PLAIN_SCALAR_STYLE) return 0;
    const char *s = sval(n);
    return s[0] == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
           strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

static const char *kind_name(const hymo_ynode *n)
{
    if (!n) return "nothing";
    switch (n->type) {
    case YAML_MAPPING_NODE: return "a mapping";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_SCALAR_NODE: return is_null(n) ? "an empty value" : "a scalar";
    default: return "nothing";
    }
}

static int seq_len(const hymo_ynode *n)
{
    return (int)n->n;
}

static hymo_ynode *seq_item(ctx_t *c, const hymo_ynode *n, int i)
{
    return node_at(c, n->data.items[i]);
}

/* Value of `key` in mapping `map`, or NULL. */
static hymo_ynode *map_get(ctx_t *c, const hymo_ynode *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = map->data.pairs; p < hymo_ynode_pairs_end(map); p++) {
        hymo_ynode *k = node_at(c, p->key);
        if (k && k->type == YAML_SCALAR_NODE && sval(k)[0] == key[0] && strcmp(sval(k), key) == 0)
            return node_at(c, p->value);
    }
    return NULL;
}

/* Checks that `n` is a mapping with scalar, unique keys, all of them in
 * `allowed` (NULL-terminated; NULL = any name). */
static hymo_status check_map(ctx_t *c, hymo_ynode *n, const char *const *allowed)
{
    if (!n || n->type != YAML_MAPPING_NODE) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a mapping, got %s", kind_name(n));
    }
    for (yaml_node_pair_t *p = n->data.pairs; p < hymo_ynode_pairs_end(n); p++) {
        hymo_ynode *k = node_at(c, p->key);
        if (!k || k->type != YAML_SCALAR_NODE || is_null(k)) {
            return fail(c, k ? k : n, HYMO_ERR_PARSE, "mapping keys must be plain names, got %s",
                        kind_name(k));
        }
        for (yaml_node_pair_t *q = n->data.pairs; q < p; q++) {
            hymo_ynode *k2 = node_at(c, q->key);
            if (sval(k2)[0] == sval(k)[0] && strcmp(sval(k2), sval(k)) == 0) {
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
                if ((*a)[0] == sval(k)[0] && strcmp(*a, sval(k)) == 0) {
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

static hymo_status check_seq(ctx_t *c, hymo_ynode *n)
{
    if (!n || n->type != YAML_SEQUENCE_NODE) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a list, got %s", kind_name(n));
    }
    return HYMO_OK;
}

/* "missing required field" at the enclosing mapping. */
static hymo_status missing(ctx_t *c, hymo_ynode *map, const char *key)
{
    size_t o = push_key(c, key);
    hymo_status st = fail(c, map, HYMO_ERR_MODEL, "missing required field");
    pop(c, o);
    return st;
}

/* Fails at map[key] (or at map if absent) with path + key. */
static hymo_status fail_field(ctx_t *c, hymo_ynode *map, const char *key, hymo_status code,
                              const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static hymo_status fail_field(ctx_t *c, hymo_ynode *map, const char *key, hymo_status code,
                              const char *fmt, ...)
{
    hymo_ynode *v = map_get(c, map, key);
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

static hymo_status rd_number(ctx_t *c, hymo_ynode *n, double *out)
{
    if (!n || n->type != YAML_SCALAR_NODE || is_null(n)) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a number, got %s", kind_name(n));
    }
    if (n->style != YAML_PLAIN_SCALAR_STYLE) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a number, got the quoted string '%s'", sval(n));
    }
    if (!parse_double(sval(n), out)) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a finite number, got '%s'", sval(n));
    }
    return HYMO_OK;
}

static hymo_status rd_int(ctx_t *c, hymo_ynode *n, int *out)
{
    double v;
    if (!n || n->type != YAML_SCALAR_NODE || is_null(n) ||
        n->style != YAML_PLAIN_SCALAR_STYLE || !parse_double(sval(n), &v) ||
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
static hymo_status rd_angle(ctx_t *c, hymo_ynode *n, double *out)
{
    if (n && n->type == YAML_SCALAR_NODE && !is_null(n) &&
        n->style == YAML_PLAIN_SCALAR_STYLE && parse_double(sval(n), out)) {
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

static hymo_status rd_vec(ctx_t *c, hymo_ynode *n, double *out, int len)
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
static hymo_status rd_ref(ctx_t *c, hymo_ynode *n, const char **out)
{
    if (!n || n->type != YAML_SCALAR_NODE || is_null(n)) {
        return fail(c, n, HYMO_ERR_MODEL, "expected a name, got %s", kind_name(n));
    }
    *out = sval(n);
    return HYMO_OK;
}

/* Checks a name string: 1..HYMO_NAME_MAX-1 characters, no '.', no
 * whitespace or control characters. */
static hymo_status check_name(ctx_t *c, hymo_ynode *at, const char *s)
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

static hymo_status rd_name(ctx_t *c, hymo_ynode *n, char out[HYMO_NAME_MAX])
{
    const char *s = "";
    TRY(rd_ref(c, n, &s));
    TRY(check_name(c, n, s));
    const size_t len = strlen(s); /* < HYMO_NAME_MAX: check_name */
    memcpy(out, s, len + 1);
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

static hymo_status check_range(ctx_t *c, hymo_ynode *n, double v, range_t r)
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
static hymo_status f_number(ctx_t *c, hymo_ynode *map, const char *key, int required, double dflt,
                            range_t r, double *out, int *present)
{
    hymo_ynode *v = map_get(c, map, key);
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

static hymo_status f_int(ctx_t *c, hymo_ynode *map, const char *key, int required, int dflt, int min,
                         int *out)
{
    hymo_ynode *v = map_get(c, map, key);
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

static hymo_status f_vec(ctx_t *c, hymo_ynode *map, const char *key, int required, double *out,
                         int len, int *present)
{
    hymo_ynode *v = map_get(c, map, key);
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
static hymo_status f_axis(ctx_t *c, hymo_ynode *map, const char *key, double out[3])
{
    TRY(f_vec(c, map, key, 1, out, 3, NULL));
    double n = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2]);
    if (!(n > 1e-12)) return fail_field(c, map, key, HYMO_ERR_MODEL, "direction must not be zero");
    for (int i = 0; i < 3; i++) out[i] /= n;
    return HYMO_OK;
}

static hymo_status f_name(ctx_t *c, hymo_ynode *map, const char *key, char out[HYMO_NAME_MAX])
{
    hymo_ynode *v = map_get(c, map, key);
    if (!v) return missing(c, map, key);
    size_t o = push_key(c, key);
    hymo_status st = rd_name(c, v, out);
    pop(c, o);
    return st;
}

static hymo_status f_ref(ctx_t *c, hymo_ynode *map, const char *key, int required, const char **out)
{
    hymo_ynode *v = map_get(c, map, key);
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

static hymo_status f_angle(ctx_t *c, hymo_ynode *map, const char *key, int required, double *out)
{
    hymo_ynode *v = map_get(c, map, key);
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
static hymo_status f_seq(ctx_t *c, hymo_ynode *map, const char *key, int required, hymo_ynode **out)
{
    hymo_ynode *v = map_get(c, map, key);
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

static hymo_status load_header(ctx_t *c, hymo_ynode *root, hymo_model *m)
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

    hymo_ynode *desc = map_get(c, root, "description");
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
    hymo_ynode *sim = map_get(c, root, "simulation");
    /* format 2 without penalty_alpha: the mass-scaled default */
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
    if (!st && m->reselect_threshold > 1.0)
        st = fail_field(c, sim, "reselect_threshold", HYMO_ERR_MODEL, "%g is above 1 (a pivot ratio in (0, 1])",
                        m->reselect_threshold);
    hymo_ynode *tol = st ? NULL : map_get(c, sim, "tolerances");
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

static hymo_status load_signal_shape(ctx_t *c, hymo_ynode *sn, hymo_signal *s); /* model_load_motor.inc */

/* ------------------------------------------------------------------ */
/* Signals                                                              */

/* Loads every item of the sequence `seq` (under `key`) with fn(item, index),
 * keeping the field path for messages; stops at the first error. */
static hymo_status each_item(ctx_t *c, hymo_ynode *seq, const char *key,
                             hymo_status (*fn)(ctx_t *, hymo_ynode *, hymo_model *, int), hymo_model *m)
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

static hymo_status load_signal(ctx_t *c, hymo_ynode *sn, hymo_model *m, int k)
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
    hymo_ynode *pts;
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
        hymo_ynode *pn = seq_item(c, pts, i);
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

static hymo_status load_signals(ctx_t *c, hymo_ynode *root, hymo_model *m)
{
    hymo_ynode *seq;
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
/* Bodies, cut joints, independent; hydraulics                         */

#include "model_load_bodies.inc"
#include "model_load_hydraulics.inc"

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
/* The text is built in one buffer: a mapping's pairs are written one after
 * the other, then put in order in place (through scratch), so a pair costs
 * no allocation.  Numbers: integers below 1e16 are their digits (what
 * %.17g prints for them); other values go through %.17g once per distinct
 * value per load (a small cache keyed by the value's bits). */
typedef struct {
    size_t off, len;  /* a pair's text: off from the mapping's start (streaming: its key's, in keys) */
    const char *text; /* set for sorting, when the buffer no longer moves */
    size_t pair;      /* streaming: the pair's index in the mapping */
} canon_item;

#define CANON_CACHE 4096

typedef struct canon_buf_s {
    char *buf;
    size_t len, cap;
    int failed;
    canon_item *items; /* a stack of the open mappings' pairs */
    size_t n_items, cap_items;
    char *scratch;
    size_t cap_scratch;
    struct canon_num {
        unsigned long long bits;
        unsigned char len; /* 0: empty slot */
        char text[31];
    } *cache; /* CANON_CACHE slots */
    /* streaming (sha set): the text goes to the hash in pieces of
     * CANON_PIECE bytes; a mapping's keys (all scalars, no two alike) are
     * put in order by their own text in keys, and each pair written in
     * that order: keys' texts end in ';' (numbers) or have their length
     * before them (strings), so no key's text begins another's and the
     * order of "KEY=VALUE" is the order of KEY.  Other mappings are built
     * as above (buffered) and then hashed. */
    hymo_sha256 *sha;
    struct canon_buf_s *keys;
} canon_buf;

#define CANON_PIECE 65536

static int canon_reserve(canon_buf *b, size_t n)
{
    if (b->failed) return -1;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (b->len + n + 1 > cap) cap *= 2;
        char *nb = realloc(b->buf, cap);
        if (!nb) {
            b->failed = 1;
            return -1;
        }
        b->buf = nb;
        b->cap = cap;
    }
    return 0;
}

static void canon_put(canon_buf *b, const char *s, size_t n)
{
    if (b->sha && b->len + n > CANON_PIECE && b->len > 0 && !b->failed) {
        hymo_sha256_update(b->sha, b->buf, b->len);
        b->len = 0;
        if (n > CANON_PIECE) {
            hymo_sha256_update(b->sha, s, n);
            return;
        }
    }
    if (canon_reserve(b, n)) return;
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = '\0';
}

static void canon_str(canon_buf *b, const char *s) { canon_put(b, s, strlen(s)); }

/* "n%.17g;" of v (-0 as 0). */
static void canon_number(canon_buf *b, double v)
{
    char tmp[48];
    size_t n = 0;
    if (v == 0.0) v = 0.0;
    tmp[n++] = 'n';
    if (v == floor(v) && fabs(v) < 1e16) {
        n += fmt_int(tmp + n, (long long)v);
    } else {
        unsigned long long bits;
        memcpy(&bits, &v, sizeof bits);
        struct canon_num *slot = NULL;
        if (b->cache) {
            unsigned long long h = bits * 0x9e3779b97f4a7c15ull;
            slot = &b->cache[h >> 52 & (CANON_CACHE - 1)];
        }
        if (slot && slot->len && slot->bits == bits) {
            memcpy(tmp + n, slot->text, slot->len);
            n += slot->len;
        } else {
            int w = snprintf(tmp + n, sizeof tmp - n, "%.17g", v);
            if (w <= 0 || (size_t)w >= sizeof tmp - n) {
                b->failed = 1;
                return;
            }
            if (slot && (size_t)w < sizeof slot->text) {
                slot->bits = bits;
                slot->len = (unsigned char)w;
                memcpy(slot->text, tmp + n, (size_t)w);
            }
            n += (size_t)w;
        }
    }
    tmp[n++] = ';';
    canon_put(b, tmp, n);
}

static int canon_item_cmp(const void *a, const void *b)
{
    const canon_item *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->text, y->text, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int canon_push_item(canon_buf *b, size_t off)
{
    if (b->n_items == b->cap_items) {
        size_t cap = b->cap_items ? 2 * b->cap_items : 64;
        canon_item *ni = realloc(b->items, cap * sizeof *ni);
        if (!ni) {
            b->failed = 1;
            return -1;
        }
        b->items = ni;
        b->cap_items = cap;
    }
    b->items[b->n_items++] = (canon_item){.off = off, .len = 0, .text = NULL, .pair = 0};
    return 0;
}

static void canon_map_stream(ctx_t *c, const hymo_ynode *n, canon_buf *b, int depth, int top);
static int canon_skipped(const hymo_ynode *key, int top)
{
    return top && key && key->type == YAML_SCALAR_NODE &&
           (!strcmp(sval(key), "simulation") || !strcmp(sval(key), "description") ||
            !strcmp(sval(key), "sensors")); /* output only */
}

static void canon_node(ctx_t *c, const hymo_ynode *n, canon_buf *b, int depth, int top)
{
    if (!n || depth > 64) {
        canon_str(b, "!");
        return;
    }
    if (n->type == YAML_SCALAR_NODE) {
        double v;
        if (parse_double(sval(n), &v)) {
            canon_number(b, v);
        } else {
            char tmp[32];
            tmp[0] = 's';
            size_t k = 1 + fmt_int(tmp + 1, (long long)n->n);
            tmp[k++] = ':';
            canon_put(b, tmp, k);
            canon_put(b, sval(n), n->n);
        }
        return;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        canon_str(b, "[");
        for (int *it = n->data.items; it < hymo_ynode_items_end(n); it++) {
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
    if (b->sha) {
        canon_map_stream(c, n, b, depth, top);
        return;
    }
    /* "{" then each pair's "KEY=VALUE;" in byte order of "KEY=VALUE", "}" */
    const yaml_node_pair_t *p0 = n->data.pairs, *p1 = hymo_ynode_pairs_end(n);
    const size_t start = b->len, first = b->n_items;
    for (const yaml_node_pair_t *p = p0; p < p1 && !b->failed; p++) {
        const hymo_ynode *key = node_at(c, p->key);
        if (canon_skipped(key, top)) continue;
        const size_t off = b->len - start;
        canon_node(c, key, b, depth + 1, 0);
        canon_str(b, "=");
        canon_node(c, node_at(c, p->value), b, depth + 1, 0);
        if (canon_push_item(b, off)) break;
        b->items[b->n_items - 1].len = b->len - start - off;
    }
    if (b->failed) return;
    const size_t k = b->n_items - first, body = b->len - start;
    canon_item *items = b->items + first;
    for (size_t i = 0; i < k; i++) items[i].text = b->buf + start + items[i].off;
    qsort(items, k, sizeof *items, canon_item_cmp);
    const size_t out = body + k + 2;
    if (out > b->cap_scratch) {
        char *ns = realloc(b->scratch, out);
        if (!ns) {
            b->failed = 1;
            return;
        }
        b->scratch = ns;
        b->cap_scratch = out;
    }
    size_t w = 0;
    b->scratch[w++] = '{';
    for (size_t i = 0; i < k; i++) {
        memcpy(b->scratch + w, items[i].text, items[i].len);
        w += items[i].len;
        b->scratch[w++] = ';';
    }
    b->scratch[w++] = '}';
    b->n_items = first;
    b->len = start;
    canon_put(b, b->scratch, w);
}

static void canon_free(canon_buf *b)
{
    free(b->buf);
    free(b->items);
    free(b->scratch);
}

/* A mapping to the hash (b->sha): its pairs in the order of their keys'
 * text, or, when a key is not a scalar or two keys have the same text,
 * the mapping built in a buffer of its own. */
static void canon_map_stream(ctx_t *c, const hymo_ynode *n, canon_buf *b, int depth, int top)
{
    canon_buf *kb = b->keys;
    const yaml_node_pair_t *p0 = n->data.pairs, *p1 = hymo_ynode_pairs_end(n);
    const size_t kstart = kb->len, first = b->n_items;
    int fallback = 0;
    for (const yaml_node_pair_t *p = p0; p < p1 && !b->failed && !kb->failed; p++) {
        const hymo_ynode *key = node_at(c, p->key);
        if (canon_skipped(key, top)) continue;
        if (!key || key->type != YAML_SCALAR_NODE) {
            fallback = 1;
            break;
        }
        const size_t off = kb->len;
        canon_node(c, key, kb, depth + 1, 0);
        if (canon_push_item(b, off)) break;
        b->items[b->n_items - 1].len = kb->len - off;
        b->items[b->n_items - 1].pair = (size_t)(p - p0);
    }
    if (kb->failed) b->failed = 1;
    if (b->failed) return;
    const size_t k = b->n_items - first;
    canon_item *items = b->items + first;
    if (!fallback) {
        for (size_t i = 0; i < k; i++) items[i].text = kb->buf + items[i].off; /* (kb no longer moves) */
        qsort(items, k, sizeof *items, canon_item_cmp);
        for (size_t i = 1; i < k; i++)
            if (canon_item_cmp(&items[i - 1], &items[i]) == 0) fallback = 1;
    }
    if (fallback) {
        b->n_items = first;
        kb->len = kstart;
        canon_buf t = {0};
        t.cache = b->cache;
        canon_node(c, n, &t, depth, top);
        if (t.failed) b->failed = 1;
        else canon_put(b, t.buf, t.len);
        canon_free(&t);
        return;
    }
    canon_str(b, "{");
    for (size_t i = 0; i < k && !b->failed; i++) {
        const canon_item it = b->items[first + i]; /* (nested mappings may move the stacks) */
        canon_put(b, kb->buf + it.off, it.len);
        canon_str(b, "=");
        canon_node(c, node_at(c, p0[it.pair].value), b, depth + 1, 0);
        canon_str(b, ";");
    }
    canon_str(b, "}");
    b->n_items = first;
    kb->len = kstart;
}

/* physics_sha256 of the document in c (0 on success, -1 out of memory):
 * the canonical text goes to the hash as it is made. */
static int physics_hash(ctx_t *c, char out[65])
{
    hymo_sha256 sha;
    hymo_sha256_init(&sha);
    canon_buf b = {0}, keys = {0};
    b.cache = calloc(CANON_CACHE, sizeof *b.cache); /* NULL: no cache */
    keys.cache = b.cache;
    b.sha = &sha;
    b.keys = &keys;
    canon_str(&b, "hymo-model-canonical-1\n");
    canon_node(c, hymo_ydoc_root(&c->doc), &b, 0, 1);
    int rc = b.failed || keys.failed ? -1 : 0;
    if (!rc) {
        hymo_sha256_update(&sha, b.buf, b.len);
        hymo_sha256_final_hex(&sha, out);
    }
    canon_free(&b);
    canon_free(&keys);
    free(b.cache);
    return rc;
}

/* ------------------------------------------------------------------ */
/* --set PATH=VALUE overrides (docs/overrides.md)                       */

/* Lists what exists at a mapping (its keys) or a sequence (its items'
 * names, or its length) into buf, for the message of a failed path. */
static void list_here(ctx_t *c, const hymo_ynode *n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    if (n->type == YAML_MAPPING_NODE) {
        len += (size_t)snprintf(buf, cap, "keys:");
        for (yaml_node_pair_t *p = n->data.pairs; p < hymo_ynode_pairs_end(n) && len < cap; p++) {
            hymo_ynode *k = node_at(c, p->key);
            if (k && k->type == YAML_SCALAR_NODE)
                len += (size_t)snprintf(buf + len, cap - len, " %s", sval(k));
        }
    } else if (n->type == YAML_SEQUENCE_NODE) {
        int count = seq_len(n), named = 0;
        len += (size_t)snprintf(buf, cap, "%d item%s [0]..[%d]", count, count == 1 ? "" : "s", count - 1);
        for (int i = 0; i < count && len < cap; i++) {
            hymo_ynode *it = seq_item(c, n, i);
            hymo_ynode *nm = it && it->type == YAML_MAPPING_NODE ? map_get(c, it, "name") : NULL;
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

/* A new scalar node (its text in the blocks) at the end of the
 * document: its id, or 0 when out of memory.  Ids stay valid; node
 * pointers do not. */
static int add_scalar(ctx_t *c, const char *text, size_t len)
{
    hymo_ydoc *d = &c->doc;
    char *copy = len <= HYMO_YNODE_N_MAX ? text_copy(c, (const unsigned char *)text, len) : NULL;
    if (!copy) return 0;
    if (d->nodes.top == d->nodes.end &&
        !grow((void **)&d->nodes.start, (void **)&d->nodes.top, (void **)&d->nodes.end, sizeof(hymo_ynode)))
        return 0;
    hymo_ynode *n = d->nodes.top++;
    memset(n, 0, sizeof *n);
    n->type = YAML_SCALAR_NODE;
    n->data.value = (yaml_char_t *)copy;
    n->n = (unsigned)len;
    n->style = YAML_PLAIN_SCALAR_STYLE;
    return (int)(d->nodes.top - d->nodes.start);
}

/* A new empty mapping node at the end of the document: its id, or 0. */
static int add_mapping(ctx_t *c)
{
    hymo_ydoc *d = &c->doc;
    if (d->nodes.top == d->nodes.end &&
        !grow((void **)&d->nodes.start, (void **)&d->nodes.top, (void **)&d->nodes.end, sizeof(hymo_ynode)))
        return 0;
    hymo_ynode *n = d->nodes.top++;
    memset(n, 0, sizeof *n);
    n->type = YAML_MAPPING_NODE;
    return (int)(d->nodes.top - d->nodes.start);
}

/* Appends the pair (key, value) to mapping `id`: its pairs are moved out
 * of the blocks into their own allocation (c->owned) the first time;
 * 0 when out of memory. */
static int append_pair(ctx_t *c, int id, int key, int value)
{
    int owned = 0;
    for (int i = 0; i < c->n_owned && !owned; ++i) owned = c->owned[i] == id;
    if (!owned) {
        int *o = realloc(c->owned, (size_t)(c->n_owned + 1) * sizeof *o);
        if (!o) return 0;
        c->owned = o;
    }
    hymo_ynode *n = node_at(c, id);
    const size_t k = (size_t)n->n;
    if (k + 1 > HYMO_YNODE_N_MAX) return 0;
    yaml_node_pair_t *pairs = owned ? realloc(n->data.pairs, (k + 1) * sizeof *pairs)
                                    : malloc((k + 1) * sizeof *pairs);
    if (!pairs) return 0;
    if (!owned) {
        if (k) memcpy(pairs, n->data.pairs, k * sizeof *pairs);
        c->owned[c->n_owned++] = id;
    }
    pairs[k].key = key;
    pairs[k].value = value;
    n->data.pairs = pairs;
    n->n = (unsigned)(k + 1);
    return 1;
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
    hymo_ynode *root = hymo_ydoc_root(&c->doc);
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
            hymo_ynode *n = node_at(c, cur);
            if (n->type != YAML_MAPPING_NODE) {
                list_here(c, n, here, sizeof here);
                return set_fail(c, spec, "'%s' is not a mapping, so it has no key '%s' (%s has %s)",
                                where[0] ? where : "the model", key, where[0] ? where : "the model", here);
            }
            int found = 0;
            for (yaml_node_pair_t *q = n->data.pairs; q < hymo_ynode_pairs_end(n); q++) {
                hymo_ynode *k = node_at(c, q->key);
                if (k && k->type == YAML_SCALAR_NODE && !strcmp(sval(k), key)) {
                    found = q->value;
                    break;
                }
            }
            int last = p[klen] == '\0';
            if (!found && last) {
                /* A key the file leaves out (an optional field): add it;
                 * the loader then checks it like any other key. */
                int kid = add_scalar(c, key, klen);
                int vid = kid ? add_scalar(c, value, strlen(value)) : 0;
                if (!kid || !vid || !append_pair(c, cur, kid, vid))
                    return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
                if (!c->set_key[i]) c->set_key[i] = kid;
                c->set_value[i] = vid;
                return HYMO_OK;
            }
            if (!found && p[klen] == '.') {
                /* A mapping the file leaves out (e.g. simulation.tolerances):
                 * add it empty; the loader checks the key like any other. */
                int kid = add_scalar(c, key, klen);
                int mid = kid ? add_mapping(c) : 0;
                if (!kid || !mid || !append_pair(c, cur, kid, mid))
                    return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
                if (!c->set_key[i]) c->set_key[i] = kid;
                found = mid;
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
            hymo_ynode *n = node_at(c, cur);
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
                pick = n->data.items[idx];
            } else {
                for (int j = 0; j < seq_len(n) && !pick; j++) {
                    hymo_ynode *it = seq_item(c, n, j);
                    hymo_ynode *nm = it && it->type == YAML_MAPPING_NODE ? map_get(c, it, "name") : NULL;
                    if (nm && nm->type == YAML_SCALAR_NODE && !strcmp(sval(nm), sel))
                        pick = n->data.items[j];
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
    hymo_ynode *n = node_at(c, cur);
    if (n->type != YAML_SCALAR_NODE) {
        list_here(c, n, here, sizeof here);
        return set_fail(c, spec, "'%s' is a %s (%s); --set replaces one value, name a field inside it",
                        where, n->type == YAML_MAPPING_NODE ? "mapping" : "list", here);
    }
    size_t vlen = strlen(value);
    yaml_char_t *copy = vlen <= HYMO_YNODE_N_MAX ? (yaml_char_t *)text_copy(c, (const unsigned char *)value, vlen) : NULL;
    if (!copy) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    n->data.value = copy;
    n->n = (unsigned)vlen;
    n->style = YAML_PLAIN_SCALAR_STYLE;
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
    hymo_ynode *root = hymo_ydoc_root(&c->doc);
    TRY(check_map(c, root, top_keys));
    TRY(load_header(c, root, m));
    TRY(load_signals(c, root, m));
    TRY(load_bodies(c, root, m));
    TRY(load_cuts(c, root, m));
    TRY(load_independent(c, root, m));
    TRY(load_hydraulics(c, root, m));
    TRY(hymo_model_load_sensors(&c->doc, root, c->origin, m, c->err));
    TRY(hymo_load_forces(&c->doc, map_get(c, root, "forces"), c->origin, c->err, m)); /* src/model/model_load_forces.c */
    TRY(load_drivers(c, root, m)); /* model_load_motor.inc */
    TRY(hymo_load_ux(&c->doc, root, c->origin, m, c->err)); /* src/model/model_load_ux.c */
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

/* Loads the model in text[0..len).  own: NULL (the caller's text, copied
 * to source_text), or text itself, malloc'd with a NUL at text[len], which
 * the loader takes (it becomes source_text).  With HYMO_LOAD_NO_SOURCE
 * source_text stays NULL and an owned text is freed once parsed. */
static hymo_status load_buffer(const char *text, size_t len, char *own, unsigned flags, const char *origin,
                               const char *const *set, int n_set, hymo_model **out, hymo_error *err)
{
    hymo_error_clear(err);
    if (out) *out = NULL;
    if (!out || !text) {
        free(own);
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "hymo_model_load: NULL argument");
    }
    if (!origin) origin = "<string>";
    const int keep = !(flags & HYMO_LOAD_NO_SOURCE);

    hymo_model *m = calloc(1, sizeof *m);
    if (!m) {
        free(own);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    if (keep) {
        m->source_text = own ? own : dup_bytes(text, len);
        own = NULL;
    }
    m->source_path = dup_bytes(origin, strlen(origin));
    if ((keep && !m->source_text) || !m->source_path) {
        free(own);
        hymo_model_free(m);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    if (n_set < 0 || (n_set > 0 && !set)) {
        free(own);
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
            free(own);
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
                free(own);
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
            free(own);
        hymo_model_free(m);
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        }
    }

    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        free(own);
        hymo_model_free(m);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (YAML parser)");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    hymo_status st = HYMO_OK;
    if (!compose(&parser, &c)) {
        st = hymo_error_set(err, HYMO_ERR_PARSE, "%s:%d: syntax error: %s%s%s", origin,
                            mark_line(&parser.problem_mark, text, len),
                            parser.problem ? parser.problem : "invalid YAML",
                            parser.context ? " " : "", parser.context ? parser.context : "");
        if (err) one_line(err->message);
        yaml_parser_delete(&parser);
        free(own);
        free(c.set_value);
        free(c.set_key);
        hymo_model_free(m);
        return st;
    }
    if (!hymo_ydoc_root(&c.doc)) {
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
    free(own); /* the document holds its own copies of the text */

    for (int i = 0; !st && i < n_set; i++) st = apply_set(&c, i);
    if (!st) st = load_root(&c, m);
    /* each temporary freed as soon as nothing needs it: the lookups after
     * the model is built, the document after its hash */
    free(c.raw);
    free(c.decl_of_sorted);
    hymo_name_index *ixs[] = {&c.ix_body, &c.ix_joint, &c.ix_node, &c.ix_elem, &c.ix_cyl, &c.ix_point, &c.ix_pname};
    for (size_t i = 0; i < sizeof ixs / sizeof ixs[0]; ++i) hymo_name_index_free(ixs[i]);
    free(c.point_count);
    free(c.chamber_owner);
    if (!st && physics_hash(&c, m->physics_sha256) != 0) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    doc_delete(&c);
    free(c.set_value);
    free(c.set_key);
    if (!st) st = hymo_compile(m, err); /* the model's constants, once */
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
    return load_buffer(text, strlen(text), NULL, 0, origin, NULL, 0, out, err);
}

hymo_status hymo_model_load_file(const char *path, hymo_model **out, hymo_error *err)
{
    return hymo_model_load_file_set(path, NULL, 0, out, err);
}

hymo_status hymo_model_load_file_set(const char *path, const char *const *set, int n_set, hymo_model **out,
                                     hymo_error *err)
{
    return hymo_model_load_file_flags(path, set, n_set, 0, out, err);
}

hymo_status hymo_model_load_file_flags(const char *path, const char *const *set, int n_set, unsigned flags,
                                       hymo_model **out, hymo_error *err)
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
    buf[len] = '\0'; /* len < cap: the loop ends on a read of 0 bytes into free space */
    if (cap - len > 4096) {
        char *nb = realloc(buf, len + 1);
        if (nb) buf = nb;
    }
    return load_buffer(buf, len, buf, flags, path, set, n_set, out, err);
}
