/* Results of other tools for `hymo compare REF.h5 RUN.csv` (docs/compare.md,
 * "Results of other tools"): a CSV table read into a hymo_reference shaped
 * like the reference, with a mask of the components it holds.
 *
 * Header convention: one column `t` or `time` (s), the others named like
 * the components `hymo compare` prints, SIGNAL[NAME] with SIGNAL one of z
 * zd s sd p U force and NAME a column name of the reference (joint,
 * volume, valve or cylinder), values in SI units (rad or m, Pa, V, N).  An
 * optional map file renames columns and scales them (unit conversion). */
#define _POSIX_C_SOURCE 200809L

#include "hymo/foreign.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "hymo/compare.h"
#include "signals.h"
#include "number.h"

#define MAX_COLUMNS 4096

typedef struct {
    char *csv;    /* column name in the CSV */
    char *target; /* "time" or SIGNAL[NAME] */
    double scale;
    int ignore;
} map_entry;

typedef struct {
    map_entry *e;
    int n;
    char *time_column; /* NULL: t or time */
    double time_scale;
} column_map;

static void map_free(column_map *m)
{
    for (int i = 0; i < m->n; i++) {
        free(m->e[i].csv);
        free(m->e[i].target);
    }
    free(m->e);
    free(m->time_column);
    memset(m, 0, sizeof *m);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d) memcpy(d, s, n + 1);
    return d;
}

/* A CSV field or map entry as a number: strtod's syntax, white space
 * after it allowed, inf and nan too (the callers decide; number.h). */
static int to_number(const char *s, double *out)
{
    return hymo_parse_number(s, HYMO_NUMBER_TRAILING_SPACE | HYMO_NUMBER_RANGE | HYMO_NUMBER_NONFINITE, out);
}

/* ---- map file (YAML) ---- */

static const yaml_node_t *ynode(yaml_document_t *d, int id) { return yaml_document_get_node(d, id); }

static const char *yscalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const yaml_node_t *yget(yaml_document_t *d, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        const char *k = yscalar(ynode(d, p->key));
        if (k && !strcmp(k, key)) return ynode(d, p->value);
    }
    return NULL;
}

static int map_add(column_map *m, const char *csv, const char *target, double scale, int ignore)
{
    map_entry *e = realloc(m->e, (size_t)(m->n + 1) * sizeof *e);
    if (!e) return 0;
    m->e = e;
    e[m->n].csv = dup_str(csv);
    e[m->n].target = target ? dup_str(target) : NULL;
    e[m->n].scale = scale;
    e[m->n].ignore = ignore;
    m->n++;
    return e[m->n - 1].csv != NULL;
}

/* MAP.yaml:
 *   time: t_ms                      # or {column: t_ms, scale: 1.0e-3}
 *   columns:
 *     boom_angle: z[z1]
 *     p_cap_bar: {to: "p[V1]", scale: 1.0e5}
 *   ignore: [step, comment]         */
static hymo_status map_load(const char *path, column_map *m, hymo_error *err)
{
    memset(m, 0, sizeof *m);
    m->time_scale = 1.0;
    FILE *f = fopen(path, "rb");
    if (!f) return hymo_error_set(err, HYMO_ERR_IO, "cannot open map file '%s': %s", path, strerror(errno));
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    yaml_parser_set_input_file(&parser, f);
    int ok = yaml_parser_load(&parser, &doc);
    hymo_status st = HYMO_OK;
    if (!ok) {
        st = hymo_error_set(err, HYMO_ERR_PARSE, "map file '%s':%d: %s", path, (int)parser.problem_mark.line + 1,
                            parser.problem ? parser.problem : "invalid YAML");
        yaml_parser_delete(&parser);
        fclose(f);
        return st;
    }
    yaml_parser_delete(&parser);
    fclose(f);
    const yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        st = hymo_error_set(err, HYMO_ERR_PARSE, "map file '%s': expected a mapping with time, columns, ignore", path);
        goto out;
    }
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        const char *k = yscalar(ynode(&doc, p->key));
        if (!k || (strcmp(k, "time") && strcmp(k, "columns") && strcmp(k, "ignore"))) {
            st = hymo_error_set(err, HYMO_ERR_PARSE, "map file '%s': unknown key '%s' (known: time, columns, ignore)",
                                path, k ? k : "?");
            goto out;
        }
    }
    const yaml_node_t *t = yget(&doc, root, "time");
    if (t) {
        const char *col = yscalar(t) ? yscalar(t) : yscalar(yget(&doc, t, "column"));
        const char *sc = yscalar(yget(&doc, t, "scale"));
        if (!col || (sc && !(to_number(sc, &m->time_scale) && isfinite(m->time_scale) && m->time_scale > 0.0))) {
            st = hymo_error_set(err, HYMO_ERR_PARSE,
                                "map file '%s': time: expected a column name or {column: NAME, scale: positive number}", path);
            goto out;
        }
        m->time_column = dup_str(col);
    }
    const yaml_node_t *cols = yget(&doc, root, "columns");
    if (cols && cols->type != YAML_MAPPING_NODE) {
        st = hymo_error_set(err, HYMO_ERR_PARSE, "map file '%s': columns: expected a mapping CSV-NAME: SIGNAL[NAME]", path);
        goto out;
    }
    for (yaml_node_pair_t *p = cols ? cols->data.mapping.pairs.start : NULL; cols && p < cols->data.mapping.pairs.top; p++) {
        const char *csv = yscalar(ynode(&doc, p->key));
        const yaml_node_t *v = ynode(&doc, p->value);
        const char *to = yscalar(v) ? yscalar(v) : yscalar(yget(&doc, v, "to"));
        const char *sc = yscalar(v) ? NULL : yscalar(yget(&doc, v, "scale"));
        double scale = 1.0;
        if (!csv || !to || (sc && !(to_number(sc, &scale) && isfinite(scale) && scale != 0.0))) {
            st = hymo_error_set(err, HYMO_ERR_PARSE,
                                "map file '%s': columns.%s: expected SIGNAL[NAME] or {to: SIGNAL[NAME], scale: number}",
                                path, csv ? csv : "?");
            goto out;
        }
        if (!map_add(m, csv, to, scale, 0)) {
            st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
            goto out;
        }
    }
    const yaml_node_t *ign = yget(&doc, root, "ignore");
    if (ign && ign->type != YAML_SEQUENCE_NODE) {
        st = hymo_error_set(err, HYMO_ERR_PARSE, "map file '%s': ignore: expected a list of column names", path);
        goto out;
    }
    for (yaml_node_item_t *it = ign ? ign->data.sequence.items.start : NULL; ign && it < ign->data.sequence.items.top; it++) {
        const char *name = yscalar(ynode(&doc, *it));
        if (!name || !map_add(m, name, NULL, 1.0, 1)) {
            st = hymo_error_set(err, HYMO_ERR_PARSE, "map file '%s': ignore: expected column names", path);
            goto out;
        }
    }
out:
    yaml_document_delete(&doc);
    if (st != HYMO_OK) map_free(m);
    return st;
}

/* ---- CSV ---- */

/* Splits line at ',' in place (fields trimmed, surrounding quotes removed);
 * returns the field count or -1 if more than cap. */
static int split(char *line, char **fields, int cap)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n >= cap) return -1;
        while (*p == ' ' || *p == '\t') p++;
        char *start = p, *end;
        if (*p == '"') {
            start = ++p;
            while (*p && *p != '"') p++;
            end = p;
            if (*p == '"') p++;
            while (*p && *p != ',') p++;
        } else {
            while (*p && *p != ',') p++;
            end = p;
            while (end > start && isspace((unsigned char)end[-1])) end--;
        }
        char sep = *p;
        *end = '\0';
        fields[n++] = start;
        if (sep != ',') break;
        p++;
    }
    return n;
}

/* Component index (hymo_compare_component_offset numbering) of the name
 * SIGNAL[NAME] in ref; -1 if none. */
int hymo_foreign_component(const hymo_reference *ref, const char *name, int *signal, int *column)
{
    const char *br = strchr(name, '[');
    size_t len = strlen(name);
    if (!br || len < 3 || name[len - 1] != ']') return -1;
    char sig[16];
    size_t sl = (size_t)(br - name);
    if (sl == 0 || sl >= sizeof sig) return -1;
    memcpy(sig, name, sl);
    sig[sl] = '\0';
    int k = hymo_compare_signal_find(sig);
    if (k < 0) return -1;
    const char *cname = br + 1;
    size_t cl = len - sl - 2;
    char(*names)[HYMO_REF_TEXT_MAX] = NULL;
    int cols = 0;
    switch (k) {
    case HYMO_CMP_Z:
    case HYMO_CMP_ZD: names = ref->z_names, cols = ref->nz; break;
    case HYMO_CMP_S:
    case HYMO_CMP_SD:
    case HYMO_CMP_FORCE: names = ref->actuator_names, cols = ref->na; break;
    case HYMO_CMP_P: names = ref->p_names, cols = ref->np; break;
    case HYMO_CMP_U: names = ref->u_names, cols = ref->nu; break;
    default: return -1;
    }
    for (int c = 0; names && c < cols; c++) {
        if (strlen(names[c]) == cl && !strncmp(names[c], cname, cl)) {
            if (signal) *signal = k;
            if (column) *column = c;
            return hymo_compare_component_offset(ref, k) + c;
        }
    }
    return -1;
}

/* "z[z1], z[z2], p[V1], ..." (at most cap bytes) */
static void list_components(const hymo_reference *ref, char *buf, size_t cap)
{
    buf[0] = '\0';
    size_t used = 0;
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        int off = hymo_compare_component_offset(ref, k), end = hymo_compare_component_offset(ref, k + 1);
        char(*names)[HYMO_REF_TEXT_MAX] = k <= HYMO_CMP_ZD ? ref->z_names
                                          : k == HYMO_CMP_P ? ref->p_names
                                          : k == HYMO_CMP_U ? ref->u_names
                                                            : ref->actuator_names;
        for (int c = 0; c < end - off && names; c++) {
            int n = snprintf(buf + used, cap - used, "%s%s[%s]", used ? ", " : "", hymo_compare_signal_name(k), names[c]);
            if (n < 0 || (size_t)n >= cap - used) {
                snprintf(buf + (used < cap - 5 ? used : cap - 5), 5, "...");
                return;
            }
            used += (size_t)n;
        }
    }
}

typedef struct {
    int target; /* component index, -1 time, -2 ignored */
    double scale;
} column_use;

static hymo_status csv_fail(hymo_error *err, const char *path, long line, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (line > 0) return hymo_error_set(err, HYMO_ERR_PARSE, "'%s':%ld: %s", path, line, what);
    return hymo_error_set(err, HYMO_ERR_PARSE, "'%s': %s", path, what);
}

/* The model identity a CSV declares in comment lines, named like the
 * HDF5 root attributes:
 *   # model: fourbar
 *   # model_sha256: <64 hex digits>
 *   # model_physics_sha256: <64 hex digits>
 * "" where the file declares none. */
typedef struct {
    char name[HYMO_REF_TEXT_MAX];
    char sha256[65];
    char physics[65];
} declared_model;

/* Reads one comment line `p` (after its '#'); other comments are skipped.
 * HYMO_OK, or a parse error naming the line (a hash that is not 64 hex
 * digits, a key given twice with different values). */
static hymo_status identity_comment(const char *p, declared_model *dm, const char *path, long lineno,
                                    hymo_error *err)
{
    while (*p == ' ' || *p == '\t') p++;
    static const char *const keys[3] = {"model_physics_sha256", "model_sha256", "model"};
    int key = -1;
    size_t klen = 0;
    for (int i = 0; i < 3; i++) {
        klen = strlen(keys[i]);
        const char *q = p + klen;
        if (strncmp(p, keys[i], klen)) continue;
        while (*q == ' ' || *q == '\t') q++;
        if (*q == ':') {
            key = i;
            p = q + 1;
            break;
        }
    }
    if (key < 0) return HYMO_OK;
    while (*p == ' ' || *p == '\t') p++;
    size_t len = strlen(p);
    while (len > 0 && isspace((unsigned char)p[len - 1])) len--;
    char *dest = key == 0 ? dm->physics : key == 1 ? dm->sha256 : dm->name;
    const size_t cap = key == 2 ? sizeof dm->name : 65;
    char value[HYMO_REF_TEXT_MAX];
    if (key < 2) {
        int hex = len == 64;
        for (size_t i = 0; hex && i < len; i++) hex = isxdigit((unsigned char)p[i]) != 0;
        if (!hex) {
            return csv_fail(err, path, lineno, "%s: '%.*s' is not a SHA-256 (64 hex digits)", keys[key],
                            (int)(len < 80 ? len : 80), p);
        }
        for (size_t i = 0; i < len; i++) value[i] = (char)tolower((unsigned char)p[i]);
        value[len] = '\0';
    } else {
        if (len == 0 || len >= cap) {
            return csv_fail(err, path, lineno, "model: the name is empty or longer than %d characters",
                            (int)cap - 1);
        }
        memcpy(value, p, len);
        value[len] = '\0';
    }
    if (dest[0] && strcmp(dest, value)) {
        return csv_fail(err, path, lineno, "%s given twice ('%s' and '%s')", keys[key], dest, value);
    }
    snprintf(dest, cap, "%s", value);
    return HYMO_OK;
}

hymo_status hymo_foreign_read_csv(const char *path, const char *map_path, const hymo_reference *ref,
                                  hymo_reference **out, unsigned char **present_out, hymo_error *err)
{
    *out = NULL;
    *present_out = NULL;
    column_map map = {0};
    map.time_scale = 1.0;
    if (map_path) {
        hymo_status mst = map_load(map_path, &map, err);
        if (mst != HYMO_OK) return mst;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        map_free(&map);
        return hymo_error_set(err, HYMO_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    }
    const int ncomp = hymo_compare_component_offset(ref, HYMO_CMP_SIGNALS);
    hymo_status st = HYMO_OK;
    char *line = NULL;
    size_t linecap = 0;
    long lineno = 0;
    int ncol = 0, time_col = -1;
    char **fields = malloc(MAX_COLUMNS * sizeof *fields);
    column_use *use = calloc(MAX_COLUMNS, sizeof *use);
    unsigned char *present = calloc(ncomp > 0 ? (size_t)ncomp : 1, 1);
    double *rows = NULL; /* n x ncol */
    size_t n = 0, cap = 0;
    hymo_reference *run = NULL;
    if (!fields || !use || !present) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* header: the first line that is not empty or a # comment */
    declared_model dm = {{0}, {0}, {0}};
    ssize_t got;
    while ((got = getline(&line, &linecap, f)) >= 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (lineno == 1 && (unsigned char)line[0] == 0xEF && (unsigned char)line[1] == 0xBB &&
            (unsigned char)line[2] == 0xBF)
            memmove(line, line + 3, strlen(line + 3) + 1); /* UTF-8 byte-order mark */
        const char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (*p && *p != '#') break;
        if (*p == '#' && (st = identity_comment(p + 1, &dm, path, lineno, err)) != HYMO_OK) goto out;
    }
    if (got < 0) {
        st = csv_fail(err, path, 0, "no header line (expected t, then columns like z[NAME], p[NAME])");
        goto out;
    }
    ncol = split(line, fields, MAX_COLUMNS);
    if (ncol < 0) {
        st = csv_fail(err, path, lineno, "more than %d columns", MAX_COLUMNS);
        goto out;
    }
    for (int j = 0; j < ncol; j++) {
        const char *name = fields[j];
        const char *target = name;
        use[j].scale = 1.0;
        int mapped = 0;
        for (int i = 0; i < map.n; i++) {
            if (strcmp(map.e[i].csv, name)) continue;
            mapped = 1;
            if (map.e[i].ignore) {
                use[j].target = -2;
                target = NULL;
            } else {
                target = map.e[i].target;
                use[j].scale = map.e[i].scale;
            }
        }
        if (!target) continue;
        const int is_time = map.time_column ? !strcmp(name, map.time_column)
                                            : (!mapped && (!strcmp(name, "t") || !strcmp(name, "time"))) ||
                                                  !strcmp(target, "time");
        if (is_time) {
            if (time_col >= 0) {
                st = csv_fail(err, path, lineno, "two time columns ('%s' and '%s')", fields[time_col], name);
                goto out;
            }
            time_col = j;
            use[j].target = -1;
            use[j].scale = map.time_column ? map.time_scale : use[j].scale;
            continue;
        }
        int idx = hymo_foreign_component(ref, target, NULL, NULL);
        if (idx < 0) {
            char known[400];
            list_components(ref, known, sizeof known);
            st = csv_fail(err, path, lineno,
                          "column '%s'%s%s%s is not t/time or a component SIGNAL[NAME] of the reference (%s); "
                          "rename it, map it (--map) or ignore it",
                          name, target != name ? " (mapped to '" : "", target != name ? target : "",
                          target != name ? "')" : "", known);
            goto out;
        }
        if (present[idx]) {
            st = csv_fail(err, path, lineno, "two columns for '%s'", target);
            goto out;
        }
        present[idx] = 1;
        use[j].target = idx;
    }
    if (time_col < 0) {
        st = csv_fail(err, path, lineno, "no time column (a column named t or time, in s; or map one)");
        goto out;
    }
    int any = 0;
    for (int i = 0; i < ncomp; i++) any |= present[i];
    if (!any) {
        st = csv_fail(err, path, lineno, "no column to compare (name columns like z[NAME], s[NAME], p[NAME])");
        goto out;
    }
    /* data rows */
    while ((got = getline(&line, &linecap, f)) >= 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        const char *p = line;
        while (isspace((unsigned char)*p)) p++;
        if (*p == '#' && (st = identity_comment(p + 1, &dm, path, lineno, err)) != HYMO_OK) goto out;
        if (!*p || *p == '#') continue;
        int m = split(line, fields, MAX_COLUMNS);
        if (m != ncol) {
            st = csv_fail(err, path, lineno, "%d fields, the header has %d", m < 0 ? MAX_COLUMNS : m, ncol);
            goto out;
        }
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 1024;
            if (nc > (size_t)INT32_MAX / 2 || nc > SIZE_MAX / sizeof(double) / (size_t)ncol) {
                st = csv_fail(err, path, lineno, "too many rows");
                goto out;
            }
            double *nr = realloc(rows, nc * (size_t)ncol * sizeof *nr);
            if (!nr) {
                st = hymo_error_set(err, HYMO_ERR_NOMEM, "'%s': out of memory", path);
                goto out;
            }
            rows = nr;
            cap = nc;
        }
        for (int j = 0; j < ncol; j++) {
            double v = 0.0;
            if (use[j].target == -2) continue;
            if (!to_number(fields[j], &v) || (j == time_col && !isfinite(v))) {
                st = csv_fail(err, path, lineno, "column %d: '%s' is not a %snumber", j + 1, fields[j],
                              j == time_col ? "finite " : "");
                goto out;
            }
            rows[n * (size_t)ncol + (size_t)j] = v * use[j].scale;
        }
        if (n > 0 && rows[n * (size_t)ncol + (size_t)time_col] < rows[(n - 1) * (size_t)ncol + (size_t)time_col]) {
            st = csv_fail(err, path, lineno, "time decreases (%.17g after %.17g)", rows[n * (size_t)ncol + (size_t)time_col],
                          rows[(n - 1) * (size_t)ncol + (size_t)time_col]);
            goto out;
        }
        n++;
    }
    if (ferror(f)) {
        st = hymo_error_set(err, HYMO_ERR_IO, "cannot read '%s'", path);
        goto out;
    }
    if (n == 0) {
        st = csv_fail(err, path, 0, "no data rows");
        goto out;
    }
    /* into a hymo_reference shaped like ref */
    run = calloc(1, sizeof *run);
    if (!run) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        goto out;
    }
    run->n = (int)n;
    run->nz = ref->nz, run->np = ref->np, run->nu = ref->nu, run->na = ref->na, run->ncut = 0;
    run->complete = 1;
    snprintf(run->model_name, sizeof run->model_name, "%s", dm.name[0] ? dm.name : "(CSV)");
    memcpy(run->model_sha256, dm.sha256, sizeof run->model_sha256);
    memcpy(run->model_physics_sha256, dm.physics, sizeof run->model_physics_sha256);
    run->time = malloc(n * sizeof *run->time);
    if (!run->time) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) run->time[i] = rows[i * (size_t)ncol + (size_t)time_col];
    static const int sig_of[HYMO_CMP_SIGNALS] = {HYMO_SIG_Z, HYMO_SIG_ZD, HYMO_SIG_S, HYMO_SIG_SD,
                                                  HYMO_SIG_P, HYMO_SIG_U, HYMO_SIG_FORCE};
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        const int off = hymo_compare_component_offset(ref, k), cols = hymo_compare_component_offset(ref, k + 1) - off;
        int used = 0;
        for (int c = 0; c < cols; c++) used |= present[off + c];
        if (!used) continue;
        double *data = malloc(n * (size_t)cols * sizeof *data);
        if (!data) {
            st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < n * (size_t)cols; i++) data[i] = NAN;
        for (int j = 0; j < ncol; j++) {
            const int idx = use[j].target;
            if (idx < off || idx >= off + cols) continue;
            for (size_t i = 0; i < n; i++) data[i * (size_t)cols + (size_t)(idx - off)] = rows[i * (size_t)ncol + (size_t)j];
        }
        const hymo_ref_signal *sg = &hymo_ref_signals[sig_of[k]];
        hymo_ref_signal_set(sg, run, sg->ref, data);
    }
out:
    free(line);
    free(fields);
    free(use);
    free(rows);
    fclose(f);
    map_free(&map);
    if (st != HYMO_OK) {
        hymo_ref_free(run);
        free(present);
        return st;
    }
    *out = run;
    *present_out = present;
    return HYMO_OK;
}
