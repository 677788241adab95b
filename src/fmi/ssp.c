/* SSP 1.0 archives (ssp.h, docs/cosimulation.md "SSP files"): a zip of
 * SystemStructure.ssd and the FMUs it names, read into the equivalent
 * system file.  Read: one ssd:System of ssd:Component elements (FMUs,
 * source inside the archive) with their ssd:Connectors and inline or
 * archived ssv parameter values (ssd:ParameterBinding), ssd:Connection
 * between component connectors, ssd:DefaultExperiment's stopTime, and
 * the annotation de.hymo.cosim (hymo:CoSimulation H, scheme, order,
 * extrapolation, growth, model on the system; hymo:Component extrapolation,
 * free_inputs on a component).  Everything else SSP can say that changes
 * the system (nested systems, signal dictionaries, parameter mappings,
 * connection transformations, the system's own connectors) is an error. */
#define _XOPEN_SOURCE 700
#include "ssp.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "number.h"
#include "text_line.h"
#include "zipxml.h"

#define NS_SSD "http://ssp-standard.org/SSP1/SystemStructureDescription"
#define NS_SSC "http://ssp-standard.org/SSP1/SystemStructureCommon"
#define NS_SSV "http://ssp-standard.org/SSP1/SystemStructureParameterValues"
#define NAME_CAP 64
#define SRC_CAP 512

typedef struct {
    char name[NAME_CAP], kind[24];
} connector_t;

typedef struct {
    char name[NAME_CAP], source[SRC_CAP], extrapolation[32], free_inputs[SRC_CAP];
    int line;
    connector_t *con;
    int n_con;
    char *params; /* YAML flow-mapping entries, "\"name\": \"value\", " */
    size_t params_len;
} component_t;

typedef struct {
    char se[NAME_CAP], sc[2 * NAME_CAP + 64], ee[NAME_CAP], ec[2 * NAME_CAP + 64];
    int line;
} connection_t;

typedef struct {
    const char *archive;
    zip_t *z;
    hymo_error *err;
    hymo_status st;
    XML_Parser p;
    const char *file; /* the file being parsed (SystemStructure.ssd or an .ssv) */
    int depth, system_depth, in_elements, ssd_root;
    char name[NAME_CAP];
    component_t *comp;
    int n_comp, cur; /* cur: the component being read, -1 outside */
    connection_t *conn;
    int n_conn, in_connection;
    char prefix[NAME_CAP], param[2 * NAME_CAP];
    int in_param;
    int hymo_depth;  /* depth of an ssc:Annotation of type de.hymo.cosim, 0 outside */
    int other_depth; /* depth of another annotation (skipped), 0 outside */
    char H[32], scheme[32], order[SRC_CAP], extrapolation[32], growth[32], model[SRC_CAP], stop[32];
    int H_line, stop_line, annotation_line, elements_line, connections_line;
} reader_t;

static hymo_status rfail(reader_t *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static hymo_status rfail(reader_t *r, const char *fmt, ...)
{
    if (r->st != HYMO_OK) return r->st;
    char msg[HYMO_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    hymo_format_line_v(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->p)
        r->st = hymo_error_set(r->err, HYMO_ERR_MODEL, "%s:%s:%lu: %s", r->archive, r->file,
                               (unsigned long)XML_GetCurrentLineNumber(r->p), msg);
    else
        r->st = hymo_error_set(r->err, HYMO_ERR_MODEL, "%s:%s: %s", r->archive, r->file, msg);
    if (r->p) XML_StopParser(r->p, XML_FALSE);
    return r->st;
}

static const char *attr(const XML_Char **a, const char *key)
{
    for (int i = 0; a[i]; i += 2)
        if (strcmp(a[i], key) == 0) return a[i + 1];
    return NULL;
}

/* The local name of el ("NS|local") when it is in namespace ns, else NULL. */
static const char *in_ns(const char *el, const char *ns)
{
    const size_t n = strlen(ns);
    return strncmp(el, ns, n) == 0 && el[n] == '|' ? el + n + 1 : NULL;
}

static const char *local_name(const char *el)
{
    const char *bar = strrchr(el, '|');
    return bar ? bar + 1 : el;
}

static int copy_attr(reader_t *r, const XML_Char **a, const char *elem, const char *key, char *out, size_t cap,
                     int required)
{
    const char *v = attr(a, key);
    if (!v) {
        if (required) rfail(r, "%s: attribute %s is missing", elem, key);
        return required ? -1 : 0;
    }
    if (strlen(v) >= cap) {
        rfail(r, "%s: attribute %s: '%.40s...' is longer than %zu characters", elem, key, v, cap - 1);
        return -1;
    }
    snprintf(out, cap, "%s", v);
    return 0;
}

/* Appends "\"name\": \"value\", " to the component's parameters. */
static void add_param(reader_t *r, const char *name, const char *value)
{
    component_t *c = &r->comp[r->cur];
    const size_t need = c->params_len + 2 * (strlen(name) + strlen(value)) + 16;
    char *np = realloc(c->params, need);
    if (!np) {
        r->st = hymo_error_set(r->err, HYMO_ERR_NOMEM, "out of memory");
        XML_StopParser(r->p, XML_FALSE);
        return;
    }
    c->params = np;
    char *o = np + c->params_len;
    const char *src[2] = {name, value};
    for (int k = 0; k < 2; ++k) {
        *o++ = '"';
        for (const char *s = src[k]; *s; ++s) {
            if (*s == '"' || *s == '\\') *o++ = '\\';
            *o++ = *s == '\n' || *s == '\t' ? ' ' : *s;
        }
        *o++ = '"';
        if (k == 0) *o++ = ':', *o++ = ' ';
    }
    *o++ = ',', *o++ = ' ';
    *o = '\0';
    c->params_len = (size_t)(o - np);
}

static hymo_status parse_text(reader_t *r, const char *text, size_t len, const char *file);
static char *read_entry(reader_t *r, const char *name, size_t *len);

/* A source inside the archive: relative, no "..", no URI scheme; "./" dropped. */
static const char *archive_name(const char *s)
{
    while (s[0] == '.' && s[1] == '/') s += 2;
    if (!s[0] || s[0] == '/' || strchr(s, '\\')) return NULL;
    const char *colon = strchr(s, ':'), *slash = strchr(s, '/');
    if (colon && (!slash || colon < slash)) return NULL; /* file:, http:, ... */
    for (const char *p = s; *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : p + strlen(p))
        if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0')) return NULL;
    return s;
}

static void on_start(void *ud, const XML_Char *el, const XML_Char **a)
{
    reader_t *r = ud;
    if (r->st != HYMO_OK) return;
    r->depth++;
    const int line = (int)XML_GetCurrentLineNumber(r->p);
    const char *d = in_ns(el, NS_SSD), *c = in_ns(el, NS_SSC), *v = in_ns(el, NS_SSV);
    if (r->other_depth) return;
    if (r->hymo_depth) { /* the element of an annotation de.hymo.cosim */
        const char *ln = local_name(el);
        if (r->cur >= 0 && strcmp(ln, "Component") == 0) {
            component_t *cp = &r->comp[r->cur];
            copy_attr(r, a, "hymo:Component", "extrapolation", cp->extrapolation, sizeof cp->extrapolation, 0);
            copy_attr(r, a, "hymo:Component", "free_inputs", cp->free_inputs, sizeof cp->free_inputs, 0);
        } else if (r->cur < 0 && strcmp(ln, "CoSimulation") == 0) {
            static const char *const known[] = {"H", "scheme", "order", "extrapolation", "growth", "model", NULL};
            for (int i = 0; a[i]; i += 2) {
                int ok = 0;
                for (int k = 0; known[k] && !ok; ++k) ok = strcmp(a[i], known[k]) == 0;
                if (!ok) {
                    rfail(r, "hymo:CoSimulation: unknown attribute '%s' (known: H, scheme, order, extrapolation, "
                          "growth, model)", a[i]);
                    return;
                }
            }
            r->annotation_line = line;
            if (copy_attr(r, a, "hymo:CoSimulation", "H", r->H, sizeof r->H, 0) == 0 && attr(a, "H")) r->H_line = line;
            copy_attr(r, a, "hymo:CoSimulation", "scheme", r->scheme, sizeof r->scheme, 0);
            copy_attr(r, a, "hymo:CoSimulation", "order", r->order, sizeof r->order, 0);
            copy_attr(r, a, "hymo:CoSimulation", "extrapolation", r->extrapolation, sizeof r->extrapolation, 0);
            copy_attr(r, a, "hymo:CoSimulation", "growth", r->growth, sizeof r->growth, 0);
            copy_attr(r, a, "hymo:CoSimulation", "model", r->model, sizeof r->model, 0);
        } else if (r->depth == r->hymo_depth + 1) {
            rfail(r, "annotation %s: unknown element <%s> (expected hymo:%s)", HYMO_SSP_ANNOTATION, ln,
                  r->cur >= 0 ? "Component" : "CoSimulation");
        }
        return;
    }
    if (c && strcmp(c, "Annotation") == 0) {
        const char *type = attr(a, "type");
        if (type && strcmp(type, HYMO_SSP_ANNOTATION) == 0)
            r->hymo_depth = r->depth;
        else
            r->other_depth = r->depth;
        return;
    }
    if (d && strcmp(d, "SystemStructureDescription") == 0) {
        const char *ver = attr(a, "version");
        if (!ver || strncmp(ver, "1.", 2) != 0) {
            rfail(r, "ssd:SystemStructureDescription: version '%s' is not 1.x (SSP 1.0)", ver ? ver : "(missing)");
            return;
        }
        r->ssd_root = 1;
        copy_attr(r, a, "ssd:SystemStructureDescription", "name", r->name, sizeof r->name, 1);
        return;
    }
    if (!r->ssd_root && r->depth == 1) {
        rfail(r, "the root element is <%s>, not ssd:SystemStructureDescription (namespace %s)", local_name(el), NS_SSD);
        return;
    }
    if (d && strcmp(d, "System") == 0) {
        if (++r->system_depth > 1) rfail(r, "ssd:System inside a system: nested systems are not supported");
        return;
    }
    if (d && strcmp(d, "Elements") == 0) {
        r->elements_line = line;
        return;
    }
    if (d && strcmp(d, "Component") == 0) {
        char label[NAME_CAP + 32];
        snprintf(label, sizeof label, "ssd:Component[%d]", r->n_comp);
        component_t *np = realloc(r->comp, (size_t)(r->n_comp + 1) * sizeof *np);
        if (!np) {
            r->st = hymo_error_set(r->err, HYMO_ERR_NOMEM, "out of memory");
            XML_StopParser(r->p, XML_FALSE);
            return;
        }
        r->comp = np;
        component_t *cp = memset(&r->comp[r->n_comp++], 0, sizeof *cp);
        r->cur = r->n_comp - 1;
        cp->line = line;
        if (copy_attr(r, a, label, "name", cp->name, sizeof cp->name, 1)) return;
        snprintf(label, sizeof label, "ssd:Component '%s'", cp->name);
        for (int k = 0; k < r->n_comp - 1; ++k)
            if (strcmp(r->comp[k].name, cp->name) == 0) {
                rfail(r, "%s: a second component of this name (the first at line %d)", label, r->comp[k].line);
                return;
            }
        const char *type = attr(a, "type");
        if (type && strcmp(type, "application/x-fmu-sharedlibrary") != 0) {
            rfail(r, "%s: type '%s': only FMUs (application/x-fmu-sharedlibrary) are supported", label, type);
            return;
        }
        char src[SRC_CAP];
        if (copy_attr(r, a, label, "source", src, sizeof src, 1)) return;
        const char *in = archive_name(src);
        if (!in) {
            rfail(r, "%s: source '%s' is not a file inside the archive (resources/NAME.fmu)", label, src);
            return;
        }
        snprintf(cp->source, sizeof cp->source, "%s", in);
        const char *impl = attr(a, "implementation");
        if (impl && strcmp(impl, "any") != 0 && strcmp(impl, "CoSimulation") != 0)
            rfail(r, "%s: implementation '%s': only co-simulation FMUs are supported", label, impl);
        return;
    }
    if (d && strcmp(d, "Connector") == 0) {
        if (r->cur < 0) return; /* the system's own connectors: a connection to one is refused below */
        component_t *cp = &r->comp[r->cur];
        connector_t *np = realloc(cp->con, (size_t)(cp->n_con + 1) * sizeof *np);
        if (!np) {
            r->st = hymo_error_set(r->err, HYMO_ERR_NOMEM, "out of memory");
            XML_StopParser(r->p, XML_FALSE);
            return;
        }
        cp->con = np;
        connector_t *cn = memset(&cp->con[cp->n_con++], 0, sizeof *cn);
        char label[NAME_CAP + 40];
        snprintf(label, sizeof label, "ssd:Connector of '%s'", cp->name);
        if (copy_attr(r, a, label, "name", cn->name, sizeof cn->name, 1)) return;
        copy_attr(r, a, label, "kind", cn->kind, sizeof cn->kind, 1);
        return;
    }
    if (d && strcmp(d, "ParameterBinding") == 0) {
        if (r->cur < 0) {
            rfail(r, "ssd:ParameterBinding of the system: only component parameters are supported");
            return;
        }
        r->prefix[0] = '\0';
        copy_attr(r, a, "ssd:ParameterBinding", "prefix", r->prefix, sizeof r->prefix, 0);
        const char *type = attr(a, "type"), *base = attr(a, "sourceBase"), *src = attr(a, "source");
        if (type && strcmp(type, "application/x-ssp-parameter-set") != 0) {
            rfail(r, "ssd:ParameterBinding: type '%s': only application/x-ssp-parameter-set is supported", type);
            return;
        }
        if (src && base && strcmp(base, "SSD") != 0) {
            rfail(r, "ssd:ParameterBinding: sourceBase '%s': only SSD (a file in the archive) is supported", base);
            return;
        }
        if (src) {
            const char *in = archive_name(src);
            if (!in) {
                rfail(r, "ssd:ParameterBinding: source '%s' is not a file inside the archive", src);
                return;
            }
            size_t len = 0;
            char *text = read_entry(r, in, &len);
            if (!text) {
                XML_StopParser(r->p, XML_FALSE);
                return;
            }
            char file[SRC_CAP];
            snprintf(file, sizeof file, "%s", in);
            XML_Parser outer = r->p;
            const char *outer_file = r->file;
            const int outer_depth = r->depth;
            r->depth = 0;
            parse_text(r, text, len, file);
            free(text);
            r->p = outer, r->file = outer_file, r->depth = outer_depth;
            if (r->st != HYMO_OK) XML_StopParser(r->p, XML_FALSE);
        }
        return;
    }
    if (d && (strcmp(d, "ParameterMapping") == 0 || strcmp(d, "SignalDictionaryReference") == 0 ||
              strcmp(d, "SignalDictionaries") == 0)) {
        rfail(r, "ssd:%s is not supported", d);
        return;
    }
    if (v && strcmp(v, "ParameterSet") == 0) {
        const char *ver = attr(a, "version");
        if (ver && strncmp(ver, "1.", 2) != 0) rfail(r, "ssv:ParameterSet: version '%s' is not 1.x", ver);
        return;
    }
    if (v && strcmp(v, "Parameter") == 0) {
        if (r->cur < 0) return;
        char nm[NAME_CAP];
        if (copy_attr(r, a, "ssv:Parameter", "name", nm, sizeof nm, 1)) return;
        snprintf(r->param, sizeof r->param, "%s%s", r->prefix, nm);
        r->in_param = 1;
        return;
    }
    if (v && r->in_param && (strcmp(v, "Real") == 0 || strcmp(v, "Integer") == 0 || strcmp(v, "Boolean") == 0)) {
        char label[2 * NAME_CAP + 40], val[64];
        snprintf(label, sizeof label, "ssv:Parameter '%s': ssv:%s", r->param, v);
        if (copy_attr(r, a, label, "value", val, sizeof val, 1)) return;
        if (strcmp(v, "Boolean") == 0) {
            if (strcmp(val, "true") == 0 || strcmp(val, "1") == 0)
                snprintf(val, sizeof val, "1");
            else if (strcmp(val, "false") == 0 || strcmp(val, "0") == 0)
                snprintf(val, sizeof val, "0");
            else {
                rfail(r, "%s: value '%s' is not true or false", label, val);
                return;
            }
        }
        add_param(r, r->param, val);
        return;
    }
    if (v && r->in_param && strcmp(v, "Parameters") != 0) {
        rfail(r, "ssv:Parameter '%s': ssv:%s values are not supported (Real, Integer, Boolean)", r->param, v);
        return;
    }
    if (d && strcmp(d, "Connections") == 0) {
        r->connections_line = line;
        return;
    }
    if (d && strcmp(d, "Connection") == 0) {
        connection_t *np = realloc(r->conn, (size_t)(r->n_conn + 1) * sizeof *np);
        if (!np) {
            r->st = hymo_error_set(r->err, HYMO_ERR_NOMEM, "out of memory");
            XML_StopParser(r->p, XML_FALSE);
            return;
        }
        r->conn = np;
        connection_t *cn = memset(&r->conn[r->n_conn++], 0, sizeof *cn);
        cn->line = line;
        r->in_connection = r->depth;
        char label[48];
        snprintf(label, sizeof label, "ssd:Connection[%d]", r->n_conn - 1);
        if (!attr(a, "startElement") || !attr(a, "endElement")) {
            rfail(r, "%s: attribute %s is missing (connections to the system's own connectors are not supported)",
                  label, attr(a, "startElement") ? "endElement" : "startElement");
            return;
        }
        if (copy_attr(r, a, label, "startElement", cn->se, sizeof cn->se, 1) ||
            copy_attr(r, a, label, "startConnector", cn->sc, sizeof cn->sc, 1) ||
            copy_attr(r, a, label, "endElement", cn->ee, sizeof cn->ee, 1) ||
            copy_attr(r, a, label, "endConnector", cn->ec, sizeof cn->ec, 1))
            return;
        const char *suc = attr(a, "suppressUnitConversion");
        (void)suc; /* the connectors' units are the FMUs' own: no conversion either way */
        return;
    }
    if (r->in_connection && c) {
        rfail(r, "ssd:Connection[%d]: ssc:%s: connection transformations are not supported", r->n_conn - 1, c);
        return;
    }
    if (d && strcmp(d, "DefaultExperiment") == 0) {
        const char *t0 = attr(a, "startTime");
        double t0v = 0.0;
        if (t0 && (!hymo_parse_number(t0, HYMO_NUMBER_RANGE, &t0v) || t0v != 0.0)) {
            rfail(r, "ssd:DefaultExperiment: startTime '%s': only 0 is supported", t0);
            return;
        }
        if (copy_attr(r, a, "ssd:DefaultExperiment", "stopTime", r->stop, sizeof r->stop, 0) == 0 && attr(a, "stopTime"))
            r->stop_line = line;
        return;
    }
}

static void on_end(void *ud, const XML_Char *el)
{
    reader_t *r = ud;
    if (r->st != HYMO_OK) return;
    if (r->other_depth == r->depth) r->other_depth = 0;
    if (r->hymo_depth == r->depth) r->hymo_depth = 0;
    if (r->in_connection == r->depth) r->in_connection = 0;
    const char *d = in_ns(el, NS_SSD), *v = in_ns(el, NS_SSV);
    if (!r->other_depth && !r->hymo_depth) {
        if (d && strcmp(d, "Component") == 0) r->cur = -1;
        if (d && strcmp(d, "System") == 0) r->system_depth--;
        if (d && strcmp(d, "ParameterBinding") == 0) r->prefix[0] = '\0';
        if (v && strcmp(v, "Parameter") == 0) r->in_param = 0;
    }
    r->depth--;
}

static hymo_status parse_text(reader_t *r, const char *text, size_t len, const char *file)
{
    char why[256];
    if (hymo_zipxml_load(why, sizeof why) != 0)
        return r->st = hymo_error_set(r->err, HYMO_ERR_IO, "%s:%s: %s", r->archive, file, why);
    XML_Parser p = XML_ParserCreateNS(NULL, '|');
    if (!p) return r->st = hymo_error_set(r->err, HYMO_ERR_NOMEM, "out of memory");
    r->p = p, r->file = file;
    XML_SetUserData(p, r);
    XML_SetElementHandler(p, on_start, on_end);
    if (XML_Parse(p, text, (int)len, XML_TRUE) == XML_STATUS_ERROR && r->st == HYMO_OK)
        r->st = hymo_error_set(r->err, HYMO_ERR_PARSE, "%s:%s:%lu: XML: %s", r->archive, file,
                               (unsigned long)XML_GetCurrentLineNumber(p), XML_ErrorString(XML_GetErrorCode(p)));
    XML_ParserFree(p);
    r->p = NULL;
    return r->st;
}

/* The archive entry name as a malloc'd NUL-terminated string, or NULL after an error. */
static char *read_entry(reader_t *r, const char *name, size_t *len)
{
    zip_stat_t zs;
    if (zip_stat(r->z, name, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_SIZE)) {
        rfail(r, "no file '%s' in the archive", name);
        return NULL;
    }
    char *buf = malloc((size_t)zs.size + 1);
    zip_file_t *zf = buf ? zip_fopen(r->z, name, 0) : NULL;
    zip_int64_t got = zf ? zip_fread(zf, buf, zs.size) : -1;
    if (zf) zip_fclose(zf);
    if (!buf || got != (zip_int64_t)zs.size) {
        free(buf);
        r->st = buf ? hymo_error_set(r->err, HYMO_ERR_IO, "%s: cannot read '%s': %s", r->archive, name, zip_strerror(r->z))
                    : hymo_error_set(r->err, HYMO_ERR_NOMEM, "out of memory");
        return NULL;
    }
    buf[zs.size] = '\0';
    *len = (size_t)zs.size;
    return buf;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

/* Extracts entry name of the archive to dir/name (its directories made). */
static hymo_status extract(reader_t *r, const char *dir, const char *name, int line, const char *what)
{
    zip_stat_t zs;
    if (zip_stat(r->z, name, 0, &zs) != 0)
        return r->st = hymo_error_set(r->err, HYMO_ERR_MODEL, "%s:%s:%d: %s: no file '%s' in the archive", r->archive,
                                      HYMO_SSP_SSD, line, what, name);
    char out[4096 + SRC_CAP + 2];
    snprintf(out, sizeof out, "%s/%s", dir, name);
    for (char *p = out + strlen(dir) + 1; *p; ++p) {
        if (*p != '/') continue;
        *p = '\0';
        const int bad = mkdir(out, 0700) != 0 && errno != EEXIST;
        *p = '/';
        if (bad) return r->st = hymo_error_set(r->err, HYMO_ERR_IO, "%s: cannot create %s: %s", r->archive, out, strerror(errno));
    }
    zip_file_t *zf = zip_fopen(r->z, name, 0);
    FILE *f = zf ? fopen(out, "wb") : NULL;
    hymo_status st = HYMO_OK;
    if (!zf || !f) {
        st = hymo_error_set(r->err, HYMO_ERR_IO, "%s: cannot extract '%s': %s", r->archive, name,
                            zf ? strerror(errno) : zip_strerror(r->z));
    } else {
        char buf[65536];
        zip_int64_t got;
        while ((got = zip_fread(zf, buf, sizeof buf)) > 0)
            if (fwrite(buf, 1, (size_t)got, f) != (size_t)got) {
                got = -2;
                break;
            }
        if (got < 0)
            st = hymo_error_set(r->err, HYMO_ERR_IO, "%s: cannot extract '%s': %s", r->archive, name,
                                got == -2 ? strerror(errno) : zip_file_strerror(zf));
    }
    if (f && fclose(f) != 0 && st == HYMO_OK)
        st = hymo_error_set(r->err, HYMO_ERR_IO, "%s: cannot write %s: %s", r->archive, out, strerror(errno));
    if (zf) zip_fclose(zf);
    return r->st = st;
}

/* ---- the system file ---- */

typedef struct {
    char *text;
    size_t len, cap;
    hymo_ssp *ssp;
    int nomem;
} out_t;

/* One YAML line standing for the SSD element at ssd_line (label). */
static void emit(out_t *o, int ssd_line, const char *label, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void emit(out_t *o, int ssd_line, const char *label, const char *fmt, ...)
{
    if (o->nomem) return;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    hymo_ssp *s = o->ssp;
    if (o->len + (size_t)n + 2 > o->cap || (s->n_lines & 63) == 0) {
        size_t cap = o->cap;
        while (o->len + (size_t)n + 2 > cap) cap = 2 * cap + 1024;
        char *t = realloc(o->text, cap);
        int *ln = realloc(s->line, (size_t)(s->n_lines + 64) * sizeof *ln);
        if (ln) s->line = ln;
        char(*lb)[96] = realloc(s->label, (size_t)(s->n_lines + 64) * sizeof *lb);
        if (lb) s->label = lb;
        if (!t || !ln || !lb) {
            if (t) o->text = t;
            o->nomem = 1;
            return;
        }
        o->text = t, o->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(o->text + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    o->len += (size_t)n;
    o->text[o->len++] = '\n';
    o->text[o->len] = '\0';
    s->line[s->n_lines] = ssd_line;
    snprintf(s->label[s->n_lines], sizeof s->label[0], "%s", label);
    s->n_lines++;
}

/* s as a YAML double-quoted scalar into out. */
static const char *q(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    out[n++] = '"';
    for (; *s && n + 4 < cap; ++s) {
        if (*s == '"' || *s == '\\') out[n++] = '\\';
        out[n++] = *s == '\n' || *s == '\t' ? ' ' : *s;
    }
    out[n++] = '"';
    out[n] = '\0';
    return out;
}

/* A list of names separated by spaces or commas as a YAML flow sequence. */
static void name_list(const char *s, char *out, size_t cap)
{
    size_t n = (size_t)snprintf(out, cap, "[");
    int first = 1;
    while (*s && n + 8 < cap) {
        while (*s == ' ' || *s == ',') ++s;
        if (!*s) break;
        char nm[NAME_CAP * 2], qq[NAME_CAP * 4];
        size_t k = 0;
        while (*s && *s != ' ' && *s != ',' && k + 1 < sizeof nm) nm[k++] = *s++;
        nm[k] = '\0';
        n += (size_t)snprintf(out + n, cap - n, "%s%s", first ? "" : ", ", q(nm, qq, sizeof qq));
        first = 0;
    }
    if (n + 2 < cap) snprintf(out + n, cap - n, "]");
}

static const connector_t *find_connector(const component_t *c, const char *name)
{
    for (int k = 0; k < c->n_con; ++k)
        if (strcmp(c->con[k].name, name) == 0) return &c->con[k];
    return NULL;
}

static hymo_status build(reader_t *r, hymo_ssp *ssp)
{
    const char *ar = r->archive, *F = HYMO_SSP_SSD;
    if (r->n_comp == 0)
        return hymo_error_set(r->err, HYMO_ERR_MODEL, "%s:%s: the system has no ssd:Component", ar, F);
    if (!r->stop[0])
        return hymo_error_set(r->err, HYMO_ERR_MODEL,
                              "%s:%s: ssd:DefaultExperiment: attribute stopTime is missing (the end time)", ar, F);
    /* connections: components and connectors exist, outputs drive inputs */
    for (int l = 0; l < r->n_conn; ++l) {
        const connection_t *cn = &r->conn[l];
        const char *el[2] = {cn->se, cn->ee}, *co[2] = {cn->sc, cn->ec}, *side[2] = {"start", "end"};
        for (int e = 0; e < 2; ++e) {
            int k = 0;
            while (k < r->n_comp && strcmp(r->comp[k].name, el[e]) != 0) ++k;
            if (k == r->n_comp)
                return hymo_error_set(r->err, HYMO_ERR_MODEL, "%s:%s:%d: ssd:Connection[%d]: %sElement: no component '%s'",
                                      ar, F, cn->line, l, side[e], el[e]);
            const component_t *cp = &r->comp[k];
            if (cp->n_con == 0) continue; /* undeclared connectors: the FMU's variables decide */
            const connector_t *x = find_connector(cp, co[e]);
            if (!x)
                return hymo_error_set(r->err, HYMO_ERR_MODEL,
                                      "%s:%s:%d: ssd:Connection[%d]: %sConnector: component '%s' has no connector '%s'",
                                      ar, F, cn->line, l, side[e], el[e], co[e]);
            const char *bad = e == 0 ? "input" : "output";
            if (strcmp(x->kind, bad) == 0)
                return hymo_error_set(r->err, HYMO_ERR_MODEL,
                                      "%s:%s:%d: ssd:Connection[%d]: %sConnector '%s' of '%s' is an %s: a connection "
                                      "runs from an output (start) to an input (end)",
                                      ar, F, cn->line, l, side[e], co[e], el[e], bad);
        }
    }
    /* the temporary directory and the files the system file names */
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    if ((size_t)snprintf(ssp->dir, sizeof ssp->dir, "%s/hymo-ssp-XXXXXX", tmp) >= sizeof ssp->dir || !mkdtemp(ssp->dir)) {
        ssp->dir[0] = '\0';
        return hymo_error_set(r->err, HYMO_ERR_IO, "%s: cannot create a temporary directory in %s: %s", ar, tmp,
                              strerror(errno));
    }
    char label[96];
    for (int k = 0; k < r->n_comp; ++k) {
        snprintf(label, sizeof label, "ssd:Component '%.60s': source", r->comp[k].name);
        if (extract(r, ssp->dir, r->comp[k].source, r->comp[k].line, label) != HYMO_OK) return r->st;
    }
    const char *model = r->model[0] ? archive_name(r->model) : NULL;
    if (r->model[0] && !model)
        return hymo_error_set(r->err, HYMO_ERR_MODEL, "%s:%s:%d: hymo:CoSimulation: model '%s' is not a file inside "
                              "the archive", ar, F, r->annotation_line, r->model);
    if (model && extract(r, ssp->dir, model, r->annotation_line, "hymo:CoSimulation: model") != HYMO_OK) return r->st;
    /* the system file */
    out_t o = {.ssp = ssp};
    char a[SRC_CAP * 2 + 8], b[SRC_CAP * 2 + 8], line[4 * SRC_CAP + 256];
    emit(&o, 1, "ssd:SystemStructureDescription: name", "name: %s", q(r->name, a, sizeof a));
    emit(&o, r->H_line, r->H_line ? "hymo:CoSimulation: H" : "hymo:CoSimulation: H (default 1e-3 s)", "H: %s",
         q(r->H[0] ? r->H : "1e-3", a, sizeof a));
    emit(&o, r->stop_line, "ssd:DefaultExperiment: stopTime", "t_end: %s", q(r->stop, a, sizeof a));
    if (r->scheme[0]) emit(&o, r->annotation_line, "hymo:CoSimulation: scheme", "scheme: %s", q(r->scheme, a, sizeof a));
    if (r->extrapolation[0])
        emit(&o, r->annotation_line, "hymo:CoSimulation: extrapolation", "extrapolation: %s",
             q(r->extrapolation, a, sizeof a));
    if (r->growth[0]) emit(&o, r->annotation_line, "hymo:CoSimulation: growth", "growth: %s", q(r->growth, a, sizeof a));
    if (model) emit(&o, r->annotation_line, "hymo:CoSimulation: model", "model: %s", q(model, a, sizeof a));
    if (r->order[0]) { /* stages separated by ';', names in a stage by spaces */
        size_t n = (size_t)snprintf(line, sizeof line, "order: [");
        const char *s = r->order;
        for (int st = 0; *s && n + 8 < sizeof line; ++st) {
            const char *semi = strchr(s, ';');
            char stage[SRC_CAP];
            snprintf(stage, sizeof stage, "%.*s", (int)(semi ? semi - s : (long)strlen(s)), s);
            name_list(stage, b, sizeof b);
            n += (size_t)snprintf(line + n, sizeof line - n, "%s%s", st ? ", " : "", b);
            s = semi ? semi + 1 : s + strlen(s);
        }
        if (n + 2 < sizeof line) snprintf(line + n, sizeof line - n, "]");
        emit(&o, r->annotation_line, "hymo:CoSimulation: order", "%s", line);
    }
    emit(&o, r->elements_line, "ssd:Elements", "subsystems:");
    for (int k = 0; k < r->n_comp; ++k) {
        const component_t *cp = &r->comp[k];
        size_t n = (size_t)snprintf(line, sizeof line, "  %s: {fmu: %s", q(cp->name, a, sizeof a), q(cp->source, b, sizeof b));
        if (cp->extrapolation[0])
            n += (size_t)snprintf(line + n, sizeof line - n, ", extrapolation: %s", q(cp->extrapolation, a, sizeof a));
        if (cp->free_inputs[0]) {
            if (strcmp(cp->free_inputs, "all") == 0)
                snprintf(b, sizeof b, "all");
            else
                name_list(cp->free_inputs, b, sizeof b);
            n += (size_t)snprintf(line + n, sizeof line - n, ", free_inputs: %s", b);
        }
        snprintf(label, sizeof label, "ssd:Component '%.60s'", cp->name);
        if (cp->params) { /* may be long: its own buffer */
            const size_t need = n + cp->params_len + 32;
            char *big = malloc(need);
            if (!big) return hymo_error_set(r->err, HYMO_ERR_NOMEM, "out of memory");
            snprintf(big, need, "%s, parameters: {%.*s}}", line, (int)(cp->params_len - 2), cp->params);
            emit(&o, cp->line, label, "%s", big);
            free(big);
        } else {
            emit(&o, cp->line, label, "%s}", line);
        }
    }
    emit(&o, r->connections_line, "ssd:Connections", "connections:%s", r->n_conn ? "" : " []");
    for (int l = 0; l < r->n_conn; ++l) {
        const connection_t *cn = &r->conn[l];
        char f[SRC_CAP], t[SRC_CAP];
        snprintf(f, sizeof f, "%s.%s", cn->se, cn->sc);
        snprintf(t, sizeof t, "%s.%s", cn->ee, cn->ec);
        snprintf(label, sizeof label, "ssd:Connection[%d]", l);
        emit(&o, cn->line, label, "  - {from: %s, to: %s}", q(f, a, sizeof a), q(t, b, sizeof b));
    }
    if (o.nomem) {
        free(o.text);
        return hymo_error_set(r->err, HYMO_ERR_NOMEM, "out of memory");
    }
    ssp->yaml = o.text;
    return HYMO_OK;
}

int hymo_ssp_file(const char *path)
{
    const size_t n = strlen(path);
    if (n > 4 && strcmp(path + n - 4, ".ssp") == 0) return 1;
    FILE *f = fopen(path, "rb");
    unsigned char magic[4] = {0};
    const size_t got = f ? fread(magic, 1, 4, f) : 0;
    if (f) fclose(f);
    if (got != 4 || memcmp(magic, "PK\3\4", 4) != 0) return 0;
    if (hymo_zipxml_load(NULL, 0) != 0) return 0;
    int code = 0;
    zip_t *z = zip_open(path, ZIP_RDONLY, &code);
    const int found = z && zip_name_locate(z, HYMO_SSP_SSD, 0) >= 0;
    if (z) zip_discard(z);
    return found;
}

hymo_status hymo_ssp_read(const char *path, hymo_ssp *ssp, hymo_error *err)
{
    memset(ssp, 0, sizeof *ssp);
    reader_t r = {.archive = path, .err = err, .st = HYMO_OK, .cur = -1, .file = HYMO_SSP_SSD};
    char why[256];
    if (hymo_zipxml_load(why, sizeof why) != 0) return hymo_error_set(err, HYMO_ERR_IO, "%s: %s", path, why);
    int code = 0;
    r.z = zip_open(path, ZIP_RDONLY, &code);
    if (!r.z) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, code);
        hymo_status st = hymo_error_set(err, code == ZIP_ER_OPEN || code == ZIP_ER_NOENT ? HYMO_ERR_IO : HYMO_ERR_PARSE,
                                        "%s: cannot open as an SSP (a zip archive): %s", path, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return st;
    }
    size_t len = 0;
    char *text = read_entry(&r, HYMO_SSP_SSD, &len);
    if (text) {
        ssp->ssd = text;
        parse_text(&r, text, len, HYMO_SSP_SSD);
        if (r.st == HYMO_OK && !r.ssd_root)
            rfail(&r, "no ssd:SystemStructureDescription element");
        if (r.st == HYMO_OK) r.st = build(&r, ssp);
    }
    zip_discard(r.z);
    for (int k = 0; k < r.n_comp; ++k) free(r.comp[k].con), free(r.comp[k].params);
    free(r.comp);
    free(r.conn);
    if (r.st != HYMO_OK) hymo_ssp_free(ssp);
    return r.st;
}

void hymo_ssp_archive_path(const hymo_ssp *ssp, const char *archive, const char *path, char *out, size_t cap)
{
    const size_t n = strlen(ssp->dir);
    char buf[4096 + SRC_CAP];
    if (n && strncmp(path, ssp->dir, n) == 0 && path[n] == '/')
        snprintf(buf, sizeof buf, "%s:%s", archive, path + n + 1);
    else
        snprintf(buf, sizeof buf, "%s", path);
    snprintf(out, cap, "%s", buf);
}

/* The system-file field that starts rest (" FIELD: problem") in SSD terms
 * into out: connections[i].from / .to as startConnector / endConnector,
 * subsystems.N.fmu as source, subsystems.N.parameters.P as ssv:Parameter
 * 'P', subsystems.N.extrapolation / .free_inputs as hymo:Component's; the
 * other fields (the element's label already names them) dropped. */
static void ssd_field(const char *rest, char *out, size_t cap)
{
    static const char *const top[] = {"name: ", "H: ", "t_end: ", "scheme: ", "order: ", "extrapolation: ",
                                      "growth: ", "model: ", "subsystems: ", "connections: ", NULL};
    const char *r = rest[0] == ' ' ? rest + 1 : rest;
    for (int k = 0; top[k]; ++k)
        if (strncmp(r, top[k], strlen(top[k])) == 0) {
            snprintf(out, cap, " %s", r + strlen(top[k]));
            return;
        }
    if (strncmp(r, "connections[", 12) == 0) {
        const char *e = r + 12 + strspn(r + 12, "0123456789");
        if (strncmp(e, "].from: ", 8) == 0) {
            snprintf(out, cap, " startConnector: %s", e + 8);
            return;
        }
        if (strncmp(e, "].to: ", 6) == 0) {
            snprintf(out, cap, " endConnector: %s", e + 6);
            return;
        }
        if (strncmp(e, "]: ", 3) == 0) {
            snprintf(out, cap, " %s", e + 3);
            return;
        }
    }
    if (strncmp(r, "subsystems.", 11) == 0) {
        const char *e = r + 11 + strcspn(r + 11, ".:");
        if (strncmp(e, ".fmu: ", 6) == 0) {
            snprintf(out, cap, " source: %s", e + 6);
            return;
        }
        if (strncmp(e, ".extrapolation: ", 16) == 0 || strncmp(e, ".free_inputs: ", 14) == 0) {
            snprintf(out, cap, " hymo:Component %s", e + 1);
            return;
        }
        if (strncmp(e, ".parameters.", 12) == 0) {
            const char *p = e + 12, *colon = strstr(p, ": ");
            if (colon) {
                snprintf(out, cap, " ssv:Parameter '%.*s': %s", (int)(colon - p), p, colon + 2);
                return;
            }
        }
        if (strncmp(e, ": ", 2) == 0) {
            snprintf(out, cap, " %s", e + 2);
            return;
        }
    }
    snprintf(out, cap, "%s", rest);
}

void hymo_ssp_error_message(const hymo_ssp *ssp, const char *archive, const char *yaml_origin, hymo_error *err)
{
    char msg[2 * HYMO_ERROR_MSG_MAX + 128];
    const size_t no = strlen(yaml_origin);
    const char *m = err->message;
    if (strncmp(m, yaml_origin, no) == 0 && m[no] == ':') {
        char *end = NULL;
        const long yl = strtol(m + no + 1, &end, 10);
        if (end != m + no + 1 && *end == ':' && yl >= 1 && yl <= ssp->n_lines) {
            const int sl = ssp->line[yl - 1];
            char rest[HYMO_ERROR_MSG_MAX];
            ssd_field(end + 1, rest, sizeof rest);
            if (sl > 0)
                snprintf(msg, sizeof msg, "%s:%s:%d: %s:%s", archive, HYMO_SSP_SSD, sl, ssp->label[yl - 1], rest);
            else
                snprintf(msg, sizeof msg, "%s:%s: %s:%s", archive, HYMO_SSP_SSD, ssp->label[yl - 1], rest);
        } else {
            snprintf(msg, sizeof msg, "%s:%s%s", archive, HYMO_SSP_SSD, m + no);
        }
    } else {
        snprintf(msg, sizeof msg, "%s", m);
    }
    /* paths below the temporary directory as ARCHIVE:PATH */
    const size_t nd = strlen(ssp->dir);
    size_t k = 0;
    for (const char *p = msg; *p && k + 1 < sizeof err->message;) {
        if (nd && strncmp(p, ssp->dir, nd) == 0 && p[nd] == '/') {
            k += (size_t)snprintf(err->message + k, sizeof err->message - k, "%s:", archive);
            p += nd + 1;
            if (k >= sizeof err->message) k = sizeof err->message - 1;
        } else {
            err->message[k++] = *p++;
        }
    }
    err->message[k] = '\0';
}

void hymo_ssp_free(hymo_ssp *ssp)
{
    if (ssp->dir[0]) nftw(ssp->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(ssp->yaml);
    free(ssp->ssd);
    free(ssp->line);
    free(ssp->label);
    memset(ssp, 0, sizeof *ssp);
}
