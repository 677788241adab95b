/* Co-simulation system files (hymo/fmu.h, docs/cosimulation.md "System
 * files"): FMUs wired by variable names in a small YAML file, run by the
 * loop of split mode (src/cosim/cosim_driver.h).  Power bonds are found by the
 * naming convention of docs/fmi.md ("Power bonds"). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "cosim_driver.h"
#include "text_line.h"
#include "hymo/fmu.h"
#include "number.h"
#include "ssp.h"

#define NAME_CAP 64

struct hymo_cosim_system {
    char path[PATH_MAX], dir[PATH_MAX], name[NAME_CAP];
    char model_path[PATH_MAX]; /* model: resolved ("": none) */
    char *text;
    char sha256[65];
    char *reference, *output;
    hymo_cosim_options opt;
    const hymo_scheme_table *scheme; /* the row of opt.scheme */
    int order;                       /* the default Lagrange order */
    int n;
    hymo_subsystem **subs;
    char (*sub_name)[NAME_CAP];
    int *sub_order, *stage, *sub_line;
    char (*fmu)[PATH_MAX];
    hymo_link *links;
    int n_links;
    hymo_master *m;
    hymo_cosim_bond *bonds;
    int n_bonds, mech, ran;
    /* growth criterion of a system without power bonds (growth > 0): per
     * output, the largest |y| so far and at the last two power-of-two steps */
    double growth;
    double *y_max, *y_lvl, *y_lvl_prev, *y_nom;
    double t_lvl_prev;
    int ny;
    int archive; /* an SSP: its FMUs and model are inside path */
    char model_sha256[65], model_physics_sha256[65], model_name[128]; /* model: (empty: none) */
};

typedef struct {
    const char *origin;
    yaml_document_t doc;
    hymo_error *err;
    hymo_cosim_system *sys;
} ctx_t;

static int line_of(const yaml_node_t *n) { return n ? (int)n->start_mark.line + 1 : 1; }

static hymo_status fail(ctx_t *c, const yaml_node_t *at, const char *field, hymo_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
static hymo_status fail(ctx_t *c, const yaml_node_t *at, const char *field, hymo_status code, const char *fmt, ...)
{
    char msg[HYMO_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    hymo_format_line_v(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (field && *field) return hymo_error_set(c->err, code, "%s:%d: %s: %s", c->origin, line_of(at), field, msg);
    return hymo_error_set(c->err, code, "%s:%d: %s", c->origin, line_of(at), msg);
}

static yaml_node_t *node(ctx_t *c, int id) { return yaml_document_get_node(&c->doc, id); }
static const char *sval(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }
static int is_scalar(const yaml_node_t *n) { return n && n->type == YAML_SCALAR_NODE; }

static yaml_node_t *map_get(ctx_t *c, const yaml_node_t *map, const char *key)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; ++p) {
        yaml_node_t *k = node(c, p->key);
        if (is_scalar(k) && strcmp(sval(k), key) == 0) return node(c, p->value);
    }
    return NULL;
}

/* Keys of map must be scalars, unique and among allowed (NULL-terminated). */
static hymo_status check_map(ctx_t *c, const yaml_node_t *map, const char *field, const char *const *allowed)
{
    if (!map || map->type != YAML_MAPPING_NODE) return fail(c, map, field, HYMO_ERR_PARSE, "must be a mapping");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; ++p) {
        yaml_node_t *k = node(c, p->key);
        if (!is_scalar(k)) return fail(c, k, field, HYMO_ERR_PARSE, "keys must be plain names");
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; ++q)
            if (strcmp(sval(node(c, q->key)), sval(k)) == 0)
                return fail(c, k, field, HYMO_ERR_PARSE, "duplicate key '%s' (first at line %d)", sval(k),
                            line_of(node(c, q->key)));
        if (!allowed) continue;
        int ok = 0;
        for (int i = 0; allowed[i] && !ok; ++i) ok = strcmp(allowed[i], sval(k)) == 0;
        if (!ok) {
            char list[256] = "";
            for (int i = 0; allowed[i]; ++i)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", allowed[i]);
            return fail(c, k, field, HYMO_ERR_PARSE, "unknown key '%s' (allowed: %s)", sval(k), list);
        }
    }
    return HYMO_OK;
}

static hymo_status rd_number(ctx_t *c, const yaml_node_t *n, const char *field, double *out)
{
    if (!is_scalar(n)) return fail(c, n, field, HYMO_ERR_PARSE, "must be a number");
    const char *s = sval(n);
    if (!hymo_parse_number(s, HYMO_NUMBER_RANGE, out))
        return fail(c, n, field, HYMO_ERR_PARSE, "'%s' is not a finite number", s);
    return HYMO_OK;
}

static hymo_status rd_string(ctx_t *c, const yaml_node_t *n, const char *field, const char **out)
{
    if (!is_scalar(n) || !*sval(n)) return fail(c, n, field, HYMO_ERR_PARSE, "must be a non-empty string");
    *out = sval(n);
    return HYMO_OK;
}

/* path relative to the system file's directory (absolute paths kept). */
static void resolve(const hymo_cosim_system *sys, const char *p, char *out, size_t cap)
{
    const int n = p[0] == '/' || !sys->dir[0] ? snprintf(out, cap, "%s", p) : snprintf(out, cap, "%s/%s", sys->dir, p);
    if (n < 0 || (size_t)n >= cap) out[0] = '\0'; /* too long: no path (the caller's open fails and names it) */
}

static int find_sub(const hymo_cosim_system *sys, const char *name)
{
    for (int k = 0; k < sys->n; ++k)
        if (strcmp(sys->sub_name[k], name) == 0) return k;
    return -1;
}

static const char *causality_of(const hymo_subsystem *sub, int vr)
{
    for (int i = 0; i < sub->n_inputs; ++i)
        if (hymo_fmu_input_variable(sub, i) == vr) return "an input";
    for (int i = 0; i < sub->n_outputs; ++i)
        if (hymo_fmu_output_variable(sub, i) == vr) return "an output";
    return "neither input nor output";
}

/* "sub.variable" of a connection end: the subsystem and the index of its
 * input (want_input) or output. */
static hymo_status rd_end(ctx_t *c, const yaml_node_t *n, const char *field, int want_input, int *sub, int *index)
{
    const char *s = NULL;
    hymo_status st = rd_string(c, n, field, &s);
    if (st != HYMO_OK) return st;
    const char *dot = strchr(s, '.');
    if (!dot || dot == s || !dot[1])
        return fail(c, n, field, HYMO_ERR_MODEL, "'%s' is not SUBSYSTEM.VARIABLE", s);
    char name[NAME_CAP];
    if ((size_t)(dot - s) >= sizeof name) return fail(c, n, field, HYMO_ERR_MODEL, "subsystem name too long");
    memcpy(name, s, (size_t)(dot - s));
    name[dot - s] = '\0';
    hymo_cosim_system *sys = c->sys;
    const int k = find_sub(sys, name);
    if (k < 0) return fail(c, n, field, HYMO_ERR_MODEL, "unknown subsystem '%s'", name);
    const hymo_subsystem *sb = sys->subs[k];
    const int vr = hymo_subsystem_find_variable(sb, dot + 1);
    if (vr < 0)
        return fail(c, n, field, HYMO_ERR_MODEL, "FMU '%s' (subsystem '%s') has no variable '%s'", sys->fmu[k], name,
                    dot + 1);
    const int count = want_input ? sb->n_inputs : sb->n_outputs;
    for (int i = 0; i < count; ++i)
        if ((want_input ? hymo_fmu_input_variable(sb, i) : hymo_fmu_output_variable(sb, i)) == vr) {
            *sub = k, *index = i;
            return HYMO_OK;
        }
    return fail(c, n, field, HYMO_ERR_MODEL, "variable '%s' of FMU '%s' (subsystem '%s') is not an %s (it is %s)", dot + 1,
                sys->fmu[k], name, want_input ? "input" : "output", causality_of(sb, vr));
}

static hymo_status rd_order(ctx_t *c, const yaml_node_t *n, const char *field, int *out)
{
    double v = 0.0;
    hymo_status st = rd_number(c, n, field, &v);
    if (st != HYMO_OK) return st;
    if (v != floor(v) || v < 0 || v > HYMO_POLY_TERMS - 1)
        return fail(c, n, field, HYMO_ERR_MODEL, "Lagrange order %s is not one of 0, 1, 2, 3", sval(n));
    *out = (int)v;
    return HYMO_OK;
}

static hymo_status load_subsystems(ctx_t *c, yaml_node_t *subs)
{
    static const char *const keys[] = {"fmu", "parameters", "extrapolation", "free_inputs", NULL};
    hymo_cosim_system *sys = c->sys;
    hymo_status st = check_map(c, subs, "subsystems", NULL);
    if (st != HYMO_OK) return st;
    const int n = (int)(subs->data.mapping.pairs.top - subs->data.mapping.pairs.start);
    if (n == 0) return fail(c, subs, "subsystems", HYMO_ERR_MODEL, "no subsystems");
    sys->subs = calloc((size_t)n, sizeof *sys->subs);
    sys->sub_name = calloc((size_t)n, sizeof *sys->sub_name);
    sys->sub_order = calloc((size_t)n, sizeof *sys->sub_order);
    sys->stage = calloc((size_t)n, sizeof *sys->stage);
    sys->sub_line = calloc((size_t)n, sizeof *sys->sub_line);
    sys->fmu = calloc((size_t)n, sizeof *sys->fmu);
    if (!sys->subs || !sys->sub_name || !sys->sub_order || !sys->stage || !sys->sub_line || !sys->fmu)
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    char field[2 * NAME_CAP + 32];
    for (int k = 0; k < n; ++k) {
        yaml_node_pair_t *p = subs->data.mapping.pairs.start + k;
        yaml_node_t *key = node(c, p->key), *val = node(c, p->value);
        const char *name = sval(key);
        if (strlen(name) >= NAME_CAP || strchr(name, '.') || strchr(name, '/'))
            return fail(c, key, "subsystems", HYMO_ERR_MODEL,
                        "'%s': a subsystem name has at most %d characters and no '.' or '/'", name, NAME_CAP - 1);
        snprintf(field, sizeof field, "subsystems.%s", name);
        if ((st = check_map(c, val, field, keys)) != HYMO_OK) return st;
        snprintf(sys->sub_name[k], NAME_CAP, "%s", name);
        sys->sub_line[k] = line_of(key);
        sys->sub_order[k] = sys->order;
        yaml_node_t *f = map_get(c, val, "fmu"), *pars = map_get(c, val, "parameters"),
                    *ex = map_get(c, val, "extrapolation");
        const char *fp = NULL;
        snprintf(field, sizeof field, "subsystems.%s.fmu", name);
        if (!f) return fail(c, val, field, HYMO_ERR_MODEL, "missing (the FMU file)");
        if ((st = rd_string(c, f, field, &fp)) != HYMO_OK) return st;
        resolve(sys, fp, sys->fmu[k], PATH_MAX);
        if (ex) {
            snprintf(field, sizeof field, "subsystems.%s.extrapolation", name);
            if ((st = rd_order(c, ex, field, &sys->sub_order[k])) != HYMO_OK) return st;
        }
        int np = 0;
        hymo_fmu_parameter par[256];
        if (pars) {
            snprintf(field, sizeof field, "subsystems.%s.parameters", name);
            if ((st = check_map(c, pars, field, NULL)) != HYMO_OK) return st;
            for (yaml_node_pair_t *q = pars->data.mapping.pairs.start; q < pars->data.mapping.pairs.top; ++q) {
                if (np == 256) return fail(c, pars, field, HYMO_ERR_MODEL, "more than 256 parameters");
                yaml_node_t *pk = node(c, q->key);
                snprintf(field, sizeof field, "subsystems.%s.parameters.%s", name, sval(pk));
                par[np].name = sval(pk);
                if ((st = rd_number(c, node(c, q->value), field, &par[np].value)) != HYMO_OK) return st;
                ++np;
            }
        }
        hymo_error e;
        snprintf(field, sizeof field, "subsystems.%s", name);
        st = hymo_fmu_subsystem_open(sys->fmu[k], name, 0.0, par, np, &sys->subs[k], &e);
        if (st != HYMO_OK) return fail(c, f, field, st == HYMO_ERR_NOMEM ? st : HYMO_ERR_MODEL, "%s", e.message);
        sys->n = k + 1;
        yaml_node_t *fr = map_get(c, val, "free_inputs");
        if (fr) { /* inputs the master does not set: all, or a list of names */
            snprintf(field, sizeof field, "subsystems.%s.free_inputs", name);
            hymo_subsystem *sb = sys->subs[k];
            if (is_scalar(fr) && strcmp(sval(fr), "all") == 0) {
                while (sb->n_inputs > 0) hymo_fmu_free_input(sb, sb->n_inputs - 1);
            } else if (fr->type == YAML_SEQUENCE_NODE) {
                for (yaml_node_item_t *it = fr->data.sequence.items.start; it < fr->data.sequence.items.top; ++it) {
                    yaml_node_t *in = node(c, *it);
                    const char *inm = NULL;
                    if ((st = rd_string(c, in, field, &inm)) != HYMO_OK) return st;
                    const int vr = hymo_subsystem_find_variable(sb, inm);
                    int i = 0;
                    while (i < sb->n_inputs && hymo_fmu_input_variable(sb, i) != vr) ++i;
                    if (vr < 0 || i == sb->n_inputs)
                        return fail(c, in, field, HYMO_ERR_MODEL, "FMU '%s' has no input '%s'", sys->fmu[k], inm);
                    hymo_fmu_free_input(sb, i);
                }
            } else {
                return fail(c, fr, field, HYMO_ERR_PARSE, "must be all or a list of input names");
            }
        }
    }
    return HYMO_OK;
}

static hymo_status load_connections(ctx_t *c, yaml_node_t *conns)
{
    static const char *const keys[] = {"from", "to", NULL};
    hymo_cosim_system *sys = c->sys;
    if (!conns || conns->type != YAML_SEQUENCE_NODE)
        return fail(c, conns, "connections", HYMO_ERR_PARSE, "must be a list of {from: SUB.OUTPUT, to: SUB.INPUT}");
    const int n = (int)(conns->data.sequence.items.top - conns->data.sequence.items.start);
    sys->links = calloc((size_t)n + 1, sizeof *sys->links);
    int *line = calloc((size_t)n + 1, sizeof *line);
    if (!sys->links || !line) {
        free(line);
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    hymo_status st = HYMO_OK;
    char field[64];
    for (int l = 0; l < n && st == HYMO_OK; ++l) {
        yaml_node_t *it = node(c, conns->data.sequence.items.start[l]);
        snprintf(field, sizeof field, "connections[%d]", l);
        if ((st = check_map(c, it, field, keys)) != HYMO_OK) break;
        yaml_node_t *from = map_get(c, it, "from"), *to = map_get(c, it, "to");
        if (!from || !to) {
            st = fail(c, it, field, HYMO_ERR_MODEL, "needs from: SUB.OUTPUT and to: SUB.INPUT");
            break;
        }
        hymo_link *ln = &sys->links[l];
        snprintf(field, sizeof field, "connections[%d].from", l);
        if ((st = rd_end(c, from, field, 0, &ln->from, &ln->output)) != HYMO_OK) break;
        snprintf(field, sizeof field, "connections[%d].to", l);
        if ((st = rd_end(c, to, field, 1, &ln->to, &ln->input)) != HYMO_OK) break;
        line[l] = line_of(it);
        for (int q = 0; q < l; ++q)
            if (sys->links[q].to == ln->to && sys->links[q].input == ln->input) {
                st = fail(c, to, field, HYMO_ERR_MODEL, "input '%s' is already driven by connections[%d] (line %d)",
                          sval(to), q, line[q]);
                break;
            }
        sys->n_links = l + 1;
    }
    free(line);
    if (st != HYMO_OK) return st;
    /* every input driven */
    for (int k = 0; k < sys->n; ++k)
        for (int i = 0; i < sys->subs[k]->n_inputs; ++i) {
            int driven = 0;
            for (int l = 0; l < sys->n_links && !driven; ++l) driven = sys->links[l].to == k && sys->links[l].input == i;
            if (!driven) {
                const hymo_variable *v = sys->subs[k]->ops->variable(sys->subs[k], hymo_fmu_input_variable(sys->subs[k], i));
                return hymo_error_set(c->err, HYMO_ERR_MODEL, "%s:%d: subsystems.%s: input '%s' is not connected",
                                      c->origin, sys->sub_line[k], sys->sub_name[k], v ? v->name : "?");
            }
        }
    return HYMO_OK;
}

/* Initialization (FMI 2.0 §3.2.3, §4.2.4): every FMU is in initialization
 * mode; the connected values are passed -- each input set to the output
 * that drives it -- sweep after sweep until no input changes (a chain of
 * n direct feedthroughs needs n + 1 sweeps; a sweep changes nothing once
 * every input equals its source to 1e-13 relative; a non-finite value never
 * settles), then every FMU leaves initialization mode.  An algebraic loop that does not settle within
 * INIT_SWEEPS sweeps is an error. */
#define INIT_SWEEPS 100
static hymo_status initialize(ctx_t *c, const yaml_node_t *at)
{
    hymo_cosim_system *sys = c->sys;
    int ny = 0, nu = 0;
    for (int k = 0; k < sys->n; ++k) ny += sys->subs[k]->n_outputs, nu += sys->subs[k]->n_inputs;
    double *y = calloc((size_t)ny + 1, sizeof *y), *coef = calloc((size_t)HYMO_POLY_TERMS * ((size_t)nu + 1), sizeof *coef);
    int *y0 = calloc((size_t)sys->n + 1, sizeof *y0), *u0 = calloc((size_t)sys->n + 1, sizeof *u0);
    if (!y || !coef || !y0 || !u0) {
        free(y), free(coef), free(y0), free(u0);
        return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    }
    for (int k = 1; k < sys->n; ++k) {
        y0[k] = y0[k - 1] + sys->subs[k - 1]->n_outputs;
        u0[k] = u0[k - 1] + HYMO_POLY_TERMS * sys->subs[k - 1]->n_inputs;
    }
    hymo_status st = HYMO_OK;
    int sweep = 0, changed = 1;
    double worst = 0.0;
    const char *worst_sub = "", *worst_in = "";
    for (; sweep < INIT_SWEEPS && changed; ++sweep) {
        changed = 0;
        worst = 0.0;
        for (int k = 0; k < sys->n; ++k) sys->subs[k]->ops->get_outputs(sys->subs[k], y + y0[k]);
        for (int k = 0; k < sys->n; ++k) {
            hymo_subsystem *sb = sys->subs[k];
            if (sb->n_inputs == 0) continue;
            int any = 0;
            for (int l = 0; l < sys->n_links; ++l) {
                const hymo_link *ln = &sys->links[l];
                if (ln->to != k) continue;
                double *u = &coef[u0[k] + HYMO_POLY_TERMS * ln->input];
                const double v = y[y0[ln->from] + ln->output], d = fabs(v - u[0]);
                if (sweep == 0 || !isfinite(v) || !(d <= 1e-13 * fabs(v))) {
                    any = 1;
                    if (sweep > 0 && !(d <= worst)) { /* NaN too */
                        worst = d;
                        worst_sub = sys->sub_name[k];
                        const hymo_variable *var = sb->ops->variable(sb, hymo_fmu_input_variable(sb, ln->input));
                        worst_in = var ? var->name : "?";
                    }
                }
                u[0] = v;
            }
            if (any) sb->ops->set_inputs(sb, 0.0, coef + u0[k]);
            changed |= any && sweep > 0;
        }
        if (sweep == 0) changed = 1;
    }
    if (changed)
        st = fail(c, at, "connections", HYMO_ERR_MODEL,
                  "initialization: the connected values did not settle in %d sweeps (input %s.%s still changed by "
                  "%.3g); an algebraic loop without a fixed point?", INIT_SWEEPS, worst_sub, worst_in, worst);
    for (int k = 0; k < sys->n; ++k) {
        hymo_error e;
        const hymo_status sk = hymo_fmu_exit_initialization(sys->subs[k], &e);
        if (sk != HYMO_OK && st == HYMO_OK)
            st = fail(c, at, "connections", HYMO_ERR_MODEL, "initialization of subsystem '%s': %s", sys->sub_name[k],
                      e.message);
    }
    free(y), free(coef), free(y0), free(u0);
    return st;
}

/* scheme gauss-seidel: stages from order: (names or lists of names). */
static hymo_status load_stages(ctx_t *c, yaml_node_t *order)
{
    hymo_cosim_system *sys = c->sys;
    for (int k = 0; k < sys->n; ++k) sys->stage[k] = sys->scheme->stage(k, sys->n);
    if (!order) return HYMO_OK;
    if (!sys->scheme->ordered)
        return fail(c, order, "order", HYMO_ERR_MODEL, "only with scheme: gauss-seidel");
    if (order->type != YAML_SEQUENCE_NODE)
        return fail(c, order, "order", HYMO_ERR_PARSE, "must be a list of subsystem names (or lists of them)");
    int *seen = calloc((size_t)sys->n, sizeof *seen);
    if (!seen) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    hymo_status st = HYMO_OK;
    const int n = (int)(order->data.sequence.items.top - order->data.sequence.items.start);
    char field[64];
    for (int s = 0; s < n && st == HYMO_OK; ++s) {
        yaml_node_t *it = node(c, order->data.sequence.items.start[s]);
        snprintf(field, sizeof field, "order[%d]", s);
        const int m = it->type == YAML_SEQUENCE_NODE ? (int)(it->data.sequence.items.top - it->data.sequence.items.start) : 1;
        for (int j = 0; j < m && st == HYMO_OK; ++j) {
            yaml_node_t *e = it->type == YAML_SEQUENCE_NODE ? node(c, it->data.sequence.items.start[j]) : it;
            const char *nm = NULL;
            if ((st = rd_string(c, e, field, &nm)) != HYMO_OK) break;
            const int k = find_sub(sys, nm);
            if (k < 0)
                st = fail(c, e, field, HYMO_ERR_MODEL, "unknown subsystem '%s'", nm);
            else if (seen[k])
                st = fail(c, e, field, HYMO_ERR_MODEL, "subsystem '%s' is listed twice", nm);
            else
                seen[k] = 1, sys->stage[k] = s;
        }
    }
    for (int k = 0; k < sys->n && st == HYMO_OK; ++k)
        if (!seen[k]) st = fail(c, order, "order", HYMO_ERR_MODEL, "subsystem '%s' is missing", sys->sub_name[k]);
    free(seen);
    return st;
}

/* Output / input of sub whose variable is `name`: its index, or -1. */
static int io_index(const hymo_subsystem *sub, const char *name, int input)
{
    const int v = hymo_subsystem_find_variable(sub, name);
    for (int i = 0; v >= 0 && i < (input ? sub->n_inputs : sub->n_outputs); ++i)
        if ((input ? hymo_fmu_input_variable(sub, i) : hymo_fmu_output_variable(sub, i)) == v) return i;
    return -1;
}

/* Power bonds (docs/fmi.md "Power bonds"), one per variable of a
 * subsystem Y that is the flow it used, sd~: named K.sd_input, or
 * sd_input[i] with description K (as hymo's hydraulic subsystems publish
 * it).  The mechanical side M != Y has an output K.sd (the flow), maybe
 * K.sdd, and inputs K.F (weight 1) or K.p_piston and K.p_rod weighted by
 * the areas: M's variables K.A_piston and K.A_rod, else cylinder K of the
 * system file's model; or (a motor) K.p_a and K.p_b weighted by D and
 * -D: M's variable K.D, else motor K of the model. */
static hymo_status find_bonds(ctx_t *c, const hymo_model *model, const yaml_node_t *model_node)
{
    hymo_cosim_system *sys = c->sys;
    int cap = 0;
    for (int k = 0; k < sys->n; ++k) cap += sys->subs[k]->ops->n_variables(sys->subs[k]);
    sys->bonds = calloc((size_t)cap + 1, sizeof *sys->bonds);
    if (!sys->bonds) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    char nm[HYMO_REF_TEXT_MAX + 16];
    for (int y = 0; y < sys->n; ++y) {
        const hymo_subsystem *Y = sys->subs[y];
        const int nv = Y->ops->n_variables(Y);
        for (int vr = 0; vr < nv; ++vr) {
            const hymo_variable *var = Y->ops->variable(Y, vr);
            const char *vn = var->name;
            const size_t len = strlen(vn);
            char key[HYMO_REF_TEXT_MAX];
            if (len > 9 && len < 100 && strcmp(vn + len - 9, ".sd_input") == 0)
                snprintf(key, sizeof key, "%.*s", (int)(len - 9), vn);
            else if (strncmp(vn, "sd_input[", 9) == 0 && var->description && *var->description &&
                     strlen(var->description) < 100)
                snprintf(key, sizeof key, "%s", var->description);
            else
                continue;
            hymo_cosim_bond *b = &sys->bonds[sys->n_bonds];
            memset(b, 0, sizeof *b);
            b->sub = -1;
            snprintf(nm, sizeof nm, "%s.sd", key);
            for (int m = 0; m < sys->n && b->sub < 0; ++m)
                if (m != y && (b->flow_out = io_index(sys->subs[m], nm, 0)) >= 0) b->sub = m;
            if (b->sub < 0) {
                if (var->name[0] == 's') continue; /* sd_input[i] of a subsystem no FMU output pairs with */
                return hymo_error_set(c->err, HYMO_ERR_MODEL,
                                      "%s: power bond '%s': subsystem '%s' has %s but no other subsystem has an "
                                      "output %s.sd (docs/fmi.md \"Power bonds\")",
                                      c->origin, key, sys->sub_name[y], vn, key);
            }
            const hymo_subsystem *M = sys->subs[b->sub];
            snprintf(b->name, sizeof b->name, "%s", key);
            b->sdt_sub = y, b->sdt_vr = vr;
            snprintf(nm, sizeof nm, "%s.sdd", key);
            b->sdd_out = io_index(M, nm, 0);
            /* a cylinder's chamber pressures weighted by its areas, or a motor's port pressures
             * weighted by its displacement D, -D (M's variable K.D, else motor K of the model) */
            static const char *const eff[5] = {"F", "p_piston", "p_rod", "p_a", "p_b"},
                                     *const area[5] = {NULL, "A_piston", "A_rod", "D", "D"};
            int in[5];
            for (int e = 0; e < 5; ++e) {
                snprintf(nm, sizeof nm, "%s.%s", key, eff[e]);
                in[e] = io_index(M, nm, 1);
            }
            const int motor = in[0] < 0 && in[1] < 0 && in[3] >= 0;
            snprintf(b->eff_name[0], sizeof b->eff_name[0], "%.100s.%s", key, motor ? "port_a" : "piston");
            snprintf(b->eff_name[1], sizeof b->eff_name[1], "%.100s.%s", key, motor ? "port_b" : "rod");
            b->n_eff = in[0] >= 0 ? 1 : 2;
            for (int e = 0; e < b->n_eff; ++e) {
                const int which = in[0] >= 0 ? 0 : 1 + e + 2 * motor;
                if (in[which] < 0)
                    return hymo_error_set(c->err, HYMO_ERR_MODEL,
                                          "%s: power bond '%s': subsystem '%s' has neither an input %s.F nor inputs "
                                          "%s.p_piston and %s.p_rod (or %s.p_a and %s.p_b)",
                                          c->origin, key, sys->sub_name[b->sub], key, key, key, key, key);
                b->eff_in[e] = in[which];
                b->eff_w[e] = 1.0;
                if (area[which] && motor) {
                    snprintf(nm, sizeof nm, "%s.%s", key, area[which]);
                    int va = hymo_subsystem_find_variable(M, nm);
                    double D = NAN;
                    if (va >= 0) {
                        M->ops->get_real(M, &va, 1, &D);
                    } else if (model) {
                        for (int k = 0; k < model->n_motors; ++k)
                            if (strcmp(model->motors[k].name, key) == 0) D = model->motors[k].displacement;
                        if (isnan(D))
                            return fail(c, model_node, "model", HYMO_ERR_MODEL,
                                        "power bond '%s': the model has no motor '%s' (its displacement weights the "
                                        "port pressures)", key, key);
                    }
                    if (!(D > 0.0) || !isfinite(D))
                        return hymo_error_set(c->err, HYMO_ERR_MODEL,
                                              "%s: power bond '%s': the port pressures need the displacement: a "
                                              "positive variable %s of subsystem '%s', or model: (the hymo model file "
                                              "with motor '%s')", c->origin, key, nm, sys->sub_name[b->sub], key);
                    b->eff_w[e] = which == 3 ? D : -D;
                } else if (area[which]) {
                    snprintf(nm, sizeof nm, "%s.%s", key, area[which]);
                    int va = hymo_subsystem_find_variable(M, nm);
                    double A = NAN;
                    if (va >= 0) {
                        M->ops->get_real(M, &va, 1, &A);
                    } else if (model) {
                        for (int a = 0; a < model->n_cylinders; ++a)
                            if (strcmp(model->cylinders[a].name, key) == 0)
                                A = which == 1 ? model->cylinders[a].piston_area : model->cylinders[a].rod_side_area;
                        if (isnan(A))
                            return fail(c, model_node, "model", HYMO_ERR_MODEL,
                                        "power bond '%s': the model has no cylinder '%s' (its areas weight the "
                                        "pressures)", key, key);
                    }
                    if (!(A > 0.0) || !isfinite(A))
                        return hymo_error_set(c->err, HYMO_ERR_MODEL,
                                              "%s: power bond '%s': the pressures need the areas: a positive variable "
                                              "%s of subsystem '%s', or model: (the hymo model file with cylinder "
                                              "'%s')", c->origin, key, nm, sys->sub_name[b->sub], key);
                    b->eff_w[e] = which == 1 ? A : -A;
                }
                int found = 0;
                for (int l = 0; l < sys->n_links; ++l)
                    if (sys->links[l].to == b->sub && sys->links[l].input == b->eff_in[e]) {
                        b->eff_src_sub[e] = sys->links[l].from, b->eff_src_out[e] = sys->links[l].output;
                        found = 1;
                    }
                if (!found) return hymo_error_set(c->err, HYMO_ERR_MODEL, "%s: power bond '%s': effort not connected", c->origin, key);
            }
            sys->n_bonds++;
        }
    }
    return HYMO_OK;
}

/* Growth criterion (docs/cosimulation.md "System files", growth:) of a
 * system without power bonds, whose energy tests see nothing: after step n,
 * output i is unstable when |y_i| > growth x max(L_i, nominal_i), L_i its
 * largest magnitude up to step q, the largest power of two <= n/2 (a time
 * between t/4 and t/2), nominal_i its FMI nominal value (1 unless given: an
 * output at round-off level that starts moving is no blow-up).  Exponential
 * growth passes any factor within a few doublings of t; growth like t^k
 * changes |y| by 2^k to 4^k between the reference and now. */
static void growth_begin(hymo_cosim_system *sys)
{
    for (int k = 0, j = 0; k < sys->n; j += sys->subs[k++]->n_outputs) {
        const double *y = hymo_master_outputs(sys->m, k);
        for (int i = 0; i < sys->subs[k]->n_outputs; ++i) {
            sys->y_max[j + i] = fabs(y[i]);
            sys->y_nom[j + i] = hymo_fmu_output_nominal(sys->subs[k], i);
        }
    }
    memcpy(sys->y_lvl, sys->y_max, (size_t)sys->ny * sizeof(double));
    memcpy(sys->y_lvl_prev, sys->y_max, (size_t)sys->ny * sizeof(double));
    sys->t_lvl_prev = 0.0;
}

static int growth_unstable(void *ctx, double t, long step, char *reason, size_t len)
{
    hymo_cosim_system *sys = ctx;
    const int pow2 = (step & (step - 1)) == 0;
    int bad = -1, bad_k = 0, bad_i = 0;
    for (int k = 0, j = 0; k < sys->n; j += sys->subs[k++]->n_outputs) {
        const double *y = hymo_master_outputs(sys->m, k);
        for (int i = 0; i < sys->subs[k]->n_outputs; ++i) {
            const double a = fabs(y[i]), L = fmax(sys->y_lvl_prev[j + i], sys->y_nom[j + i]);
            if (a > sys->y_max[j + i]) sys->y_max[j + i] = a;
            if (bad < 0 && a > sys->growth * L) bad = j + i, bad_k = k, bad_i = i;
        }
    }
    if (bad >= 0) {
        const hymo_subsystem *sb = sys->subs[bad_k];
        const hymo_variable *v = sb->ops->variable(sb, hymo_fmu_output_variable(sb, bad_i));
        snprintf(reason, len,
                 "t = %.6g s (step %ld): output %s.%s = %.4g grew beyond %g x its largest magnitude %.4g up to t = "
                 "%.6g s (nominal %g; growth criterion of a system without power bonds)",
                 t, step, sys->sub_name[bad_k], v ? v->name : "?", hymo_master_outputs(sys->m, bad_k)[bad_i],
                 sys->growth, sys->y_lvl_prev[bad], sys->t_lvl_prev, sys->y_nom[bad]);
        return 1;
    }
    if (pow2) { /* the reference level moves on to the previous power of two */
        memcpy(sys->y_lvl_prev, sys->y_lvl, (size_t)sys->ny * sizeof(double));
        memcpy(sys->y_lvl, sys->y_max, (size_t)sys->ny * sizeof(double));
        sys->t_lvl_prev = step == 1 ? 0.0 : 0.5 * t;
    }
    return 0;
}

static char *read_text(const char *path, hymo_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        hymo_error_set(err, HYMO_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) {
        hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

static hymo_status load(ctx_t *c, const char *path)
{
    static const char *const keys[] = {"name",   "H",     "t_end",      "scheme",      "order",  "extrapolation",
                                       "growth", "reference", "output", "model", "subsystems", "connections",
                                       "H_control", "tol_energy", "H_min", "H_max", "output_dt", NULL};
    hymo_cosim_system *sys = c->sys;
    if (!sys->text && !(sys->text = read_text(path, c->err))) return c->err ? c->err->code : HYMO_ERR_IO;
    hymo_sha256_hex(sys->text, strlen(sys->text), sys->sha256);
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)sys->text, strlen(sys->text));
    int ok = yaml_parser_load(&parser, &c->doc);
    if (!ok) {
        hymo_status st = hymo_error_set(c->err, HYMO_ERR_PARSE, "%s:%d: YAML syntax error: %s", path,
                                        (int)parser.problem_mark.line + 1, parser.problem ? parser.problem : "?");
        yaml_parser_delete(&parser);
        memset(&c->doc, 0, sizeof c->doc);
        return st;
    }
    yaml_parser_delete(&parser);
    yaml_node_t *root = yaml_document_get_root_node(&c->doc);
    if (!root) return hymo_error_set(c->err, HYMO_ERR_PARSE, "%s: empty system file", path);
    hymo_status st = check_map(c, root, "", keys);
    if (st != HYMO_OK) return st;
    /* settings */
    yaml_node_t *n;
    const char *s = NULL;
    if ((n = map_get(c, root, "name"))) {
        if ((st = rd_string(c, n, "name", &s)) != HYMO_OK) return st;
        snprintf(sys->name, sizeof sys->name, "%s", s);
    }
    double H = 0.0, t_end = 0.0;
    if (!(n = map_get(c, root, "H"))) return fail(c, root, "H", HYMO_ERR_MODEL, "missing (the communication step, s)");
    if ((st = rd_number(c, n, "H", &H)) != HYMO_OK) return st;
    if (!(H > 0.0)) return fail(c, n, "H", HYMO_ERR_MODEL, "%g s: must be positive", H);
    if (!(n = map_get(c, root, "t_end"))) return fail(c, root, "t_end", HYMO_ERR_MODEL, "missing (the end time, s)");
    if ((st = rd_number(c, n, "t_end", &t_end)) != HYMO_OK) return st;
    /* energy-controlled steps: the keys spelled as the options of hymo cosim */
    static const char *const ctl_keys[] = {"H_control", "tol_energy", "H_min", "H_max", "output_dt"};
    static const char *const ctl_opts[] = {"--H-control", "--tol-energy", "--H-min", "--H-max", "--output-dt"};
    for (int k = 0; k < 5; ++k) {
        yaml_node_t *kn = map_get(c, root, ctl_keys[k]);
        if (!kn) continue;
        if ((st = rd_string(c, kn, ctl_keys[k], &s)) != HYMO_OK) return st;
        hymo_error e;
        if (hymo_cosim_option(ctl_opts[k], s, &sys->opt, &e) != 1)
            return fail(c, kn, ctl_keys[k], HYMO_ERR_MODEL, "%s", e.message);
    }
    if (sys->opt.H_control == HYMO_H_FIXED && (!(t_end >= H) || !hymo_steps_per_communication(t_end, H)))
        return fail(c, n, "t_end", HYMO_ERR_MODEL,
                    "t_end = %.9g s is not a positive multiple of H = %.9g s (t_end/H = %.9g)", t_end, H, t_end / H);
    sys->opt.H = H;
    sys->opt.mech.t_end = t_end;
    sys->opt.mech.dt = H;
    sys->opt.h_h = H;
    sys->opt.scheme = HYMO_MASTER_JACOBI;
    if ((n = map_get(c, root, "scheme"))) {
        if ((st = rd_string(c, n, "scheme", &s)) != HYMO_OK) return st;
        if (strcmp(s, "jacobi") == 0)
            sys->opt.scheme = HYMO_MASTER_JACOBI;
        else if (strcmp(s, "gauss-seidel") == 0)
            sys->opt.scheme = HYMO_MASTER_GAUSS_SEIDEL;
        else
            return fail(c, n, "scheme", HYMO_ERR_MODEL, "'%s' is not jacobi or gauss-seidel", s);
    }
    sys->scheme = hymo_scheme_table_of(sys->opt.scheme);
    sys->order = 2;
    if ((n = map_get(c, root, "extrapolation")) && (st = rd_order(c, n, "extrapolation", &sys->order)) != HYMO_OK)
        return st;
    sys->opt.approx = (hymo_approx_kind)sys->order;
    sys->growth = 1e6;
    if ((n = map_get(c, root, "growth"))) {
        if ((st = rd_number(c, n, "growth", &sys->growth)) != HYMO_OK) return st;
        if (!(sys->growth == 0.0 || sys->growth > 1.0))
            return fail(c, n, "growth", HYMO_ERR_MODEL, "%g: a factor above 1, or 0 (no growth criterion)", sys->growth);
    }
    char p[PATH_MAX];
    if ((n = map_get(c, root, "reference"))) {
        if ((st = rd_string(c, n, "reference", &s)) != HYMO_OK) return st;
        resolve(sys, s, p, sizeof p);
        if (!(sys->reference = malloc(strlen(p) + 1))) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
        strcpy(sys->reference, p);
    }
    if ((n = map_get(c, root, "output"))) {
        if ((st = rd_string(c, n, "output", &s)) != HYMO_OK) return st;
        resolve(sys, s, p, sizeof p);
        if (!(sys->output = malloc(strlen(p) + 1))) return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
        strcpy(sys->output, p);
    }
    if (!(n = map_get(c, root, "subsystems")))
        return fail(c, root, "subsystems", HYMO_ERR_MODEL, "missing (name: {fmu: FILE.fmu})");
    if ((st = load_subsystems(c, n)) != HYMO_OK) return st;
    if (!(n = map_get(c, root, "connections")))
        return fail(c, root, "connections", HYMO_ERR_MODEL, "missing (a list of {from: SUB.OUTPUT, to: SUB.INPUT})");
    if ((st = load_connections(c, n)) != HYMO_OK) return st;
    if ((st = initialize(c, n)) != HYMO_OK) return st;
    if ((st = load_stages(c, map_get(c, root, "order"))) != HYMO_OK) return st;
    hymo_model *model = NULL;
    yaml_node_t *mn = map_get(c, root, "model");
    if (mn) {
        if ((st = rd_string(c, mn, "model", &s)) != HYMO_OK) return st;
        resolve(sys, s, p, sizeof p);
        snprintf(sys->model_path, sizeof sys->model_path, "%s", p);
        hymo_error e;
        if (hymo_model_load_file(p, &model, &e) != HYMO_OK) return fail(c, mn, "model", HYMO_ERR_MODEL, "%s", e.message);
        snprintf(sys->model_sha256, sizeof sys->model_sha256, "%s", model->sha256);
        snprintf(sys->model_physics_sha256, sizeof sys->model_physics_sha256, "%s", model->physics_sha256);
        snprintf(sys->model_name, sizeof sys->model_name, "%s", model->name);
    }
    st = find_bonds(c, model, mn);
    hymo_model_free(model);
    if (st != HYMO_OK) return st;
    /* the mechanics: the subsystem whose variables fill the rows */
    sys->mech = -1;
    for (int k = 0; k < sys->n && sys->mech < 0; ++k)
        if (hymo_subsystem_find_variable(sys->subs[k], "kinetic_energy") >= 0) sys->mech = k;
    /* the master */
    hymo_error e;
    const hymo_master_options mo = {HYMO_MASTER_JACOBI, 0, H};
    st = hymo_master_create(sys->subs, sys->n, sys->links, sys->n_links, &mo, &sys->m, &e);
    for (int k = 0; k < sys->n && st == HYMO_OK; ++k) {
        st = hymo_master_set_stage(sys->m, k, sys->stage[k], &e);
        if (st == HYMO_OK) st = hymo_master_set_input_approx(sys->m, k, -1, sys->sub_order[k], 0, &e);
    }
    if (st != HYMO_OK) return hymo_error_set(c->err, st, "%s: %s", path, e.message);
    if (sys->n_bonds == 0 && sys->growth > 0.0) {
        for (int k = 0; k < sys->n; ++k) sys->ny += sys->subs[k]->n_outputs;
        const size_t ny = (size_t)sys->ny + 1;
        if (!(sys->y_max = calloc(ny, sizeof(double))) || !(sys->y_lvl = calloc(ny, sizeof(double))) ||
            !(sys->y_lvl_prev = calloc(ny, sizeof(double))) || !(sys->y_nom = calloc(ny, sizeof(double))))
            return hymo_error_set(c->err, HYMO_ERR_NOMEM, "out of memory");
        growth_begin(sys);
    }
    return HYMO_OK;
}

static void defaults(hymo_cosim_options *o)
{
    memset(o, 0, sizeof *o);
    o->unstable_energy = 1e6;
    o->unstable_ratio = 0.1;
    o->unstable_balance_ratio = 0.5;
    o->unstable_floor = 1.0;
    o->max_balance_jump = 0.05;
    o->balance_window = 1.0;
    o->H_control = HYMO_H_FIXED;
    o->tol_energy_rel = 1e-2;
    o->tol_energy_abs = 1e-3;
    o->iterate_rtol = 1e-6; /* iterative coupling off (iterate_max 0) unless --iterate */
    o->iterate_atol = 1e-12;
    o->iterate_accel = HYMO_ACCEL_IQN_ILS;
}

hymo_status hymo_cosim_system_load(const char *path, hymo_cosim_system **out, hymo_error *err)
{
    *out = NULL;
    hymo_cosim_system *sys = calloc(1, sizeof *sys);
    if (!sys) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    snprintf(sys->path, sizeof sys->path, "%s", path);
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(sys->dir, sizeof sys->dir, "%.*s", (int)(slash - path), path);
    if (slash && slash == path) snprintf(sys->dir, sizeof sys->dir, "/");
    const char *base = slash ? slash + 1 : path, *dot = strrchr(base, '.');
    snprintf(sys->name, sizeof sys->name, "%.*s", (int)(dot && dot != base ? dot - base : (long)strlen(base)), base);
    defaults(&sys->opt);
    /* an SSP: its equivalent system file, errors mapped back to the SSD */
    hymo_ssp ssp = {.dir = ""};
    char origin[sizeof ssp.dir + 16];
    snprintf(origin, sizeof origin, "%s", path);
    if ((sys->archive = hymo_ssp_file(path))) {
        hymo_status st = hymo_ssp_read(path, &ssp, err);
        if (st == HYMO_OK && !(sys->text = strdup(ssp.yaml))) st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        if (st != HYMO_OK) {
            hymo_ssp_free(&ssp);
            hymo_cosim_system_free(sys);
            return st;
        }
        snprintf(sys->dir, sizeof sys->dir, "%s", ssp.dir);
        snprintf(origin, sizeof origin, "%s/system.yaml", ssp.dir);
    }
    ctx_t c = {.origin = origin, .err = err, .sys = sys};
    hymo_status st = load(&c, origin);
    yaml_document_delete(&c.doc);
    if (sys->archive) {
        if (st != HYMO_OK && err) hymo_ssp_error_message(&ssp, path, origin, err);
        if (st == HYMO_OK) { /* the record: the SSD, the files as ARCHIVE:PATH */
            free(sys->text);
            sys->text = ssp.ssd;
            ssp.ssd = NULL;
            hymo_sha256_hex(sys->text, strlen(sys->text), sys->sha256);
            for (int k = 0; k < sys->n; ++k) hymo_ssp_archive_path(&ssp, path, sys->fmu[k], sys->fmu[k], PATH_MAX);
            hymo_ssp_archive_path(&ssp, path, sys->model_path, sys->model_path, PATH_MAX);
        }
        hymo_ssp_free(&ssp);
    }
    if (st != HYMO_OK) {
        hymo_cosim_system_free(sys);
        return st;
    }
    *out = sys;
    return HYMO_OK;
}

hymo_cosim_options *hymo_cosim_system_options(hymo_cosim_system *sys) { return &sys->opt; }
const char *hymo_cosim_system_reference(const hymo_cosim_system *sys) { return sys->reference; }
const char *hymo_cosim_system_output(const hymo_cosim_system *sys) { return sys->output; }

const char *hymo_cosim_system_input(const hymo_cosim_system *sys, int k)
{
    if (k == 0) return sys->path;
    if (sys->archive) return NULL; /* the rest is inside the archive */
    const int has_model = sys->model_path[0] != '\0';
    if (has_model && k == 1) return sys->model_path;
    const int f = k - 1 - has_model;
    return f >= 0 && f < sys->n ? sys->fmu[f] : NULL;
}

static hymo_status system_attrs(const void *ctx, hymo_ref_writer *w, hymo_error *err)
{
    const hymo_cosim_system *sys = ctx;
    char subs[2048] = "";
    for (int k = 0; k < sys->n; ++k)
        snprintf(subs + strlen(subs), sizeof subs - strlen(subs), "%s%s=%s", k ? "\n" : "", sys->sub_name[k],
                 sys->fmu[k]);
    char ex[8];
    snprintf(ex, sizeof ex, "%d", sys->order);
    hymo_status st = hymo_ref_writer_put_attr_str(w, "cosim", "scheme",
                                                  sys->scheme->system_name, err);
    if (st == HYMO_OK) st = hymo_ref_writer_put_attr_str(w, "cosim", "coupling", "system", err);
    if (st == HYMO_OK) st = hymo_ref_writer_put_attr_str(w, "cosim", "extrapolation", ex, err);
    if (st == HYMO_OK) st = hymo_ref_writer_put_attr_double(w, "cosim", "H", sys->opt.H, err);
    if (st == HYMO_OK) st = hymo_ref_writer_put_attr_str(w, "cosim", "system_file", sys->path, err);
    if (st == HYMO_OK) st = hymo_ref_writer_put_attr_str(w, "cosim", "subsystems", subs, err);
    return st;
}

static const char *output_name(const hymo_subsystem *sub, int i)
{
    const hymo_variable *v = sub->ops->variable(sub, hymo_fmu_output_variable(sub, i));
    return v ? v->name : NULL;
}

hymo_status hymo_cosim_system_run(hymo_cosim_system *sys, const hymo_reference *ref, const char *out_path,
                                  hymo_cosim_summary *summary, hymo_error *err)
{
    if (sys->ran) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: a loaded system runs once", sys->path);
    hymo_status st = hymo_cosim_verdict_options_check(&sys->opt, err);
    if (st == HYMO_OK) st = hymo_cosim_control_check(&sys->opt, err);
    if (st != HYMO_OK) return st;
    if (ref && sys->model_sha256[0] &&
        hymo_model_identity(ref->model_sha256, ref->model_physics_sha256, sys->model_sha256,
                            sys->model_physics_sha256) == HYMO_MODEL_DIFFERENT)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "%s: the reference is of another model ('%s', sha256 %.12s...) than model: '%s' "
                              "(%.12s...)", sys->path, ref->model_name, ref->model_sha256, sys->model_name,
                              sys->model_sha256);
    sys->ran = 1;
    const hymo_cosim_source src = {sys->name, sys->text, sys->sha256, sys->path};
    int rectangle = 1; /* the rectangle rule only when every input is held (order 0) */
    for (int k = 0; k < sys->n; ++k) rectangle = rectangle && sys->sub_order[k] == 0;
    const hymo_cosim_setup setup = {.subs = sys->subs,
                                    .nsub = sys->n,
                                    .m = sys->m,
                                    .links = sys->links,
                                    .n_links = sys->n_links,
                                    .bonds = sys->bonds,
                                    .n_bonds = sys->n_bonds,
                                    .opt = &sys->opt,
                                    .rectangle = rectangle,
                                    .mech = sys->mech,
                                    .control_order = sys->order + 2.0,
                                    .model = NULL,
                                    .src = &src,
                                    .record_outputs = 1,
                                    .output_name = output_name,
                                    .attrs = system_attrs,
                                    .attrs_ctx = sys,
                                    .abort_status = HYMO_ERR_MODEL,
                                    .unstable = sys->y_max ? growth_unstable : NULL,
                                    .unstable_ctx = sys};
    return hymo_cosim_drive(&setup, ref, out_path, summary, err);
}

void hymo_cosim_system_summary_print(FILE *out, const hymo_cosim_system *sys, const hymo_cosim_summary *s)
{
    fprintf(out, "co-simulation  system %s (%s): %d FMUs, %d connections, %d power bonds\n", sys->name, sys->path,
            sys->n, sys->n_links, sys->n_bonds);
    fprintf(out, "master         %s, Lagrange extrapolation %d, H = %g s\n",
            sys->scheme->system_name, sys->order, sys->opt.H);
    for (int k = 0; k < sys->n; ++k)
        fprintf(out, "  %-12s %s (stage %d, order %d)\n", sys->sub_name[k], sys->fmu[k], sys->stage[k],
                sys->sub_order[k]);
    hymo_cosim_summary_print_results(out, &sys->opt, s);
}

void hymo_cosim_system_free(hymo_cosim_system *sys)
{
    if (!sys) return;
    hymo_master_free(sys->m);
    for (int k = 0; k < sys->n; ++k)
        if (sys->subs[k]) sys->subs[k]->ops->destroy(sys->subs[k]);
    free(sys->subs);
    free(sys->sub_name);
    free(sys->sub_order);
    free(sys->stage);
    free(sys->sub_line);
    free(sys->fmu);
    free(sys->links);
    free(sys->bonds);
    free(sys->y_max);
    free(sys->y_lvl);
    free(sys->y_lvl_prev);
    free(sys->y_nom);
    free(sys->text);
    free(sys->reference);
    free(sys->output);
    free(sys);
}

int hymo_cosim_system_file(const char *path)
{
    if (hymo_ssp_file(path)) return 1;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    yaml_parser_t parser;
    yaml_document_t doc;
    int found = 0;
    if (yaml_parser_initialize(&parser)) {
        yaml_parser_set_input_file(&parser, f);
        if (yaml_parser_load(&parser, &doc)) {
            yaml_node_t *root = yaml_document_get_root_node(&doc);
            if (root && root->type == YAML_MAPPING_NODE)
                for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; ++p) {
                    yaml_node_t *k = yaml_document_get_node(&doc, p->key);
                    found |= is_scalar(k) && (strcmp(sval(k), "subsystems") == 0 || strcmp(sval(k), "connections") == 0);
                }
            yaml_document_delete(&doc);
        }
        yaml_parser_delete(&parser);
    }
    fclose(f);
    return found;
}
