/* FMI 2.0 co-simulation FMUs as hymo subsystems (hymo/fmu.h,
 * docs/fmi.md "Import"): unzip (libzip) into a fresh temporary directory,
 * modelDescription.xml (expat), dlopen of binaries/linux64/<id>.so, the
 * fmi2* functions resolved with dlsym (types from src/fmi/fmi2.h). */
#define _XOPEN_SOURCE 700
#include <dlfcn.h>
#include <errno.h>
#include <expat.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "fmi2.h"
#include "number.h"
#include "text_line.h"
#include "hymo/fmu.h"

/* ------------------------------------------------------------ the FMU's API */

#define FMU_DECLARE(name) name##TYPE *name;
typedef struct {
    HYMO_FMI2_COMMON_FUNCTIONS(FMU_DECLARE)
    HYMO_FMI2_CS_FUNCTIONS(FMU_DECLARE)
} fmu_api;
#undef FMU_DECLARE

enum { T_REAL, T_INTEGER, T_BOOLEAN, T_STRING, T_ENUM };
enum { C_LOCAL, C_PARAMETER, C_CALCULATED, C_INPUT, C_OUTPUT, C_INDEPENDENT };

typedef struct {
    char *name, *description, *unit;
    fmi2ValueReference vr;
    double nominal; /* a Real's nominal value (1 unless given) */
    int type, causality, typed; /* typed: its type element was seen */
    int line;
} fmu_var;

typedef struct {
    char path[PATH_MAX];    /* as given, for messages */
    char dir[PATH_MAX];     /* temporary directory */
    int dir_made;
    /* modelDescription.xml */
    char *fmi_version, *model_name, *guid, *model_id;
    int has_cs, has_me, can_interpolate, can_get_set, can_serialize;
    fmu_var *var;
    int n_var, cap_var;
    hymo_variable *hv;
    int *in, *out; /* variable indices of the inputs and outputs */
    fmi2ValueReference *in_vr, *out_vr;
    int n_in, n_out;
    /* the instance */
    void *so;
    fmu_api api;
    fmi2CallbackFunctions callbacks;
    fmi2Component c;
    int initialized, dead; /* dead: fmi2Fatal, nothing may be called */
    int in_init;           /* in initialization mode (hymo_fmu_subsystem_open) */
    double t;
    double *der;   /* n_in: derivative values for SetRealInputDerivatives */
    int der_set[HYMO_POLY_TERMS]; /* order k was set non-zero last time */
    fmi2Integer *der_order;
    hymo_status pending;
    char pending_msg[HYMO_ERROR_MSG_MAX];
    char log[HYMO_ERROR_MSG_MAX]; /* the FMU's last logged message (error or warning first) */
    int log_status;
    /* FMU states */
    fmi2FMUstate state;     /* serialize mode: the state last taken */
    size_t state_bytes;     /* size announced by state_size */
    fmi2FMUstate *handles;  /* handle mode */
    int n_handles;
} fmu_impl;

/* ------------------------------------------------------------------ helpers */

static hymo_status fail(hymo_error *err, hymo_status code, const fmu_impl *fi, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static hymo_status fail(hymo_error *err, hymo_status code, const fmu_impl *fi, const char *fmt, ...)
{
    char msg[HYMO_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    hymo_format_line_v(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hymo_error_set(err, code, "FMU '%s': %s", fi->path, msg);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static void remove_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* mkdir -p of the directories of `path` below `root` (path inside root). */
static int make_parents(char *path, size_t root_len)
{
    for (char *p = path + root_len + 1; *p; ++p) {
        if (*p != '/') continue;
        *p = '\0';
        int r = mkdir(path, 0700);
        *p = '/';
        if (r != 0 && errno != EEXIST) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------- unzip */

static hymo_status unzip(fmu_impl *fi, hymo_error *err)
{
    int code = 0;
    zip_t *z = zip_open(fi->path, ZIP_RDONLY, &code);
    if (!z) {
        zip_error_t ze;
        zip_error_init_with_code(&ze, code);
        hymo_status st = fail(err, HYMO_ERR_IO, fi, "cannot open as a zip archive: %s", zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return st;
    }
    hymo_status st = HYMO_OK;
    const zip_int64_t n = zip_get_num_entries(z, 0);
    char buf[65536];
    const size_t root = strlen(fi->dir);
    for (zip_int64_t i = 0; i < n && st == HYMO_OK; ++i) {
        zip_stat_t zs;
        if (zip_stat_index(z, (zip_uint64_t)i, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_NAME)) {
            st = fail(err, HYMO_ERR_IO, fi, "zip entry %lld unreadable: %s", (long long)i, zip_strerror(z));
            break;
        }
        const char *name = zs.name;
        /* no absolute paths, no '..' components (nothing written outside the directory) */
        int bad = name[0] == '\0' || name[0] == '/' || strchr(name, '\\') != NULL;
        for (const char *p = name; !bad && *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : p + strlen(p))
            bad = strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0');
        if (bad) {
            st = fail(err, HYMO_ERR_IO, fi, "zip entry '%s' would be written outside the FMU's directory", name);
            break;
        }
        char out[PATH_MAX];
        if ((size_t)snprintf(out, sizeof out, "%s/%s", fi->dir, name) >= sizeof out) {
            st = fail(err, HYMO_ERR_IO, fi, "zip entry '%s': path too long", name);
            break;
        }
        if (make_parents(out, root) != 0) {
            st = fail(err, HYMO_ERR_IO, fi, "cannot create the directory of '%s': %s", name, strerror(errno));
            break;
        }
        const size_t len = strlen(out);
        if (out[len - 1] == '/') {
            if (mkdir(out, 0700) != 0 && errno != EEXIST)
                st = fail(err, HYMO_ERR_IO, fi, "cannot create '%s': %s", out, strerror(errno));
            continue;
        }
        zip_file_t *zf = zip_fopen_index(z, (zip_uint64_t)i, 0);
        FILE *f = zf ? fopen(out, "wb") : NULL;
        if (!zf || !f) {
            st = fail(err, HYMO_ERR_IO, fi, "cannot extract '%s': %s", name, zf ? strerror(errno) : zip_strerror(z));
        } else {
            zip_int64_t got;
            while ((got = zip_fread(zf, buf, sizeof buf)) > 0)
                if (fwrite(buf, 1, (size_t)got, f) != (size_t)got) {
                    got = -2;
                    break;
                }
            if (got < 0)
                st = fail(err, HYMO_ERR_IO, fi, "cannot extract '%s': %s", name,
                          got == -2 ? strerror(errno) : zip_file_strerror(zf));
        }
        if (f && fclose(f) != 0 && st == HYMO_OK)
            st = fail(err, HYMO_ERR_IO, fi, "cannot write '%s': %s", out, strerror(errno));
        if (zf) zip_fclose(zf);
    }
    zip_discard(z);
    return st;
}

/* ----------------------------------------------------- modelDescription.xml */

typedef struct {
    fmu_impl *fi;
    XML_Parser p;
    hymo_error *err;
    hymo_status st;
    int depth, root_seen, in_vars, cur; /* cur: the ScalarVariable being read, or -1 */
    int vars_depth;
} xml_ctx;

static const char *attr(const XML_Char **a, const char *key)
{
    for (int i = 0; a[i]; i += 2)
        if (strcmp(a[i], key) == 0) return a[i + 1];
    return NULL;
}

static void xml_fail(xml_ctx *x, hymo_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void xml_fail(xml_ctx *x, hymo_status code, const char *fmt, ...)
{
    if (x->st != HYMO_OK) return;
    char msg[HYMO_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    x->st = fail(x->err, code, x->fi, "modelDescription.xml:%lu: %s", (unsigned long)XML_GetCurrentLineNumber(x->p),
                 msg);
    XML_StopParser(x->p, XML_FALSE);
}

#define FAILX(...)                                                                                 \
    do {                                                                                           \
        xml_fail(x, __VA_ARGS__);                                                                  \
        return;                                                                                    \
    } while (0)

static int is_true(const char *v) { return v && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0); }

static void XMLCALL on_start(void *ud, const XML_Char *el, const XML_Char **a)
{
    xml_ctx *x = ud;
    fmu_impl *fi = x->fi;
    const int depth = x->depth++;
    if (x->st != HYMO_OK) return;
    if (depth == 0) {
        if (strcmp(el, "fmiModelDescription") != 0) {
            xml_fail(x, HYMO_ERR_PARSE, "the root element is <%s>, not <fmiModelDescription>", el);
            return;
        }
        x->root_seen = 1;
        const char *v = attr(a, "fmiVersion"), *g = attr(a, "guid"), *m = attr(a, "modelName");
        if (!v) FAILX(HYMO_ERR_PARSE, "fmiModelDescription: fmiVersion missing");
        if (strcmp(v, "2.0") != 0)
            FAILX(HYMO_ERR_MODEL, "fmiVersion is '%s': only FMI 2.0 co-simulation FMUs are supported", v);
        if (!g) FAILX(HYMO_ERR_PARSE, "fmiModelDescription: guid missing");
        fi->fmi_version = dup_str(v);
        fi->guid = dup_str(g);
        fi->model_name = dup_str(m ? m : "");
        if (!fi->fmi_version || !fi->guid || !fi->model_name) FAILX(HYMO_ERR_NOMEM, "out of memory");
        return;
    }
    if (depth == 1 && strcmp(el, "CoSimulation") == 0) {
        if (fi->has_cs) FAILX(HYMO_ERR_PARSE, "more than one <CoSimulation> element");
        const char *id = attr(a, "modelIdentifier");
        if (!id || !*id) FAILX(HYMO_ERR_PARSE, "CoSimulation: modelIdentifier missing");
        if (strchr(id, '/') || strstr(id, ".."))
            FAILX(HYMO_ERR_PARSE, "CoSimulation: modelIdentifier '%s' is not a file name", id);
        if (!(fi->model_id = dup_str(id))) FAILX(HYMO_ERR_NOMEM, "out of memory");
        fi->has_cs = 1;
        fi->can_interpolate = is_true(attr(a, "canInterpolateInputs"));
        fi->can_get_set = is_true(attr(a, "canGetAndSetFMUstate"));
        fi->can_serialize = fi->can_get_set && is_true(attr(a, "canSerializeFMUstate"));
        return;
    }
    if (depth == 1 && strcmp(el, "ModelExchange") == 0) {
        fi->has_me = 1;
        return;
    }
    if (depth == 1 && strcmp(el, "ModelVariables") == 0) {
        x->in_vars = 1;
        return;
    }
    if (depth == 2 && x->in_vars && strcmp(el, "ScalarVariable") == 0) {
        const char *name = attr(a, "name"), *vr = attr(a, "valueReference"), *c = attr(a, "causality");
        const char *d = attr(a, "description");
        if (!name || !*name) FAILX(HYMO_ERR_PARSE, "ScalarVariable: name missing");
        if (!vr) FAILX(HYMO_ERR_PARSE, "ScalarVariable '%s': valueReference missing", name);
        char *end;
        errno = 0;
        unsigned long r = strtoul(vr, &end, 10);
        if (errno || end == vr || *end || r > 0xffffffffUL || vr[0] == '-')
            FAILX(HYMO_ERR_PARSE, "ScalarVariable '%s': valueReference '%s' is not an unsigned integer",
                            name, vr);
        static const char *const causes[] = {"local", "parameter", "calculatedParameter", "input", "output",
                                             "independent"};
        int cause = C_LOCAL;
        if (c) {
            cause = -1;
            for (int k = 0; k < 6; ++k)
                if (strcmp(c, causes[k]) == 0) cause = k;
            if (cause < 0) FAILX(HYMO_ERR_PARSE, "ScalarVariable '%s': unknown causality '%s'", name, c);
        }
        for (int k = 0; k < fi->n_var; ++k)
            if (strcmp(fi->var[k].name, name) == 0)
                FAILX(HYMO_ERR_PARSE, "ScalarVariable '%s' declared twice (first at line %d)", name,
                                fi->var[k].line);
        if (fi->n_var == fi->cap_var) {
            int cap = fi->cap_var ? 2 * fi->cap_var : 16;
            fmu_var *nv = realloc(fi->var, (size_t)cap * sizeof *nv);
            if (!nv) FAILX(HYMO_ERR_NOMEM, "out of memory");
            fi->var = nv;
            fi->cap_var = cap;
        }
        fmu_var *v = &fi->var[fi->n_var++];
        memset(v, 0, sizeof *v);
        v->name = dup_str(name);
        v->description = dup_str(d ? d : "");
        v->unit = dup_str("");
        v->vr = (fmi2ValueReference)r;
        v->nominal = 1.0;
        v->causality = cause;
        v->line = (int)XML_GetCurrentLineNumber(x->p);
        if (!v->name || !v->description || !v->unit) FAILX(HYMO_ERR_NOMEM, "out of memory");
        x->cur = fi->n_var - 1;
        return;
    }
    if (depth == 3 && x->cur >= 0) {
        static const char *const types[] = {"Real", "Integer", "Boolean", "String", "Enumeration"};
        fmu_var *v = &fi->var[x->cur];
        for (int k = 0; k < 5; ++k)
            if (strcmp(el, types[k]) == 0) {
                if (v->typed) FAILX(HYMO_ERR_PARSE, "ScalarVariable '%s' has two types", v->name);
                v->type = k;
                v->typed = 1;
                const char *u = attr(a, "unit"), *nom = attr(a, "nominal");
                if (u && k == T_REAL) {
                    free(v->unit);
                    if (!(v->unit = dup_str(u))) FAILX(HYMO_ERR_NOMEM, "out of memory");
                }
                if (nom && k == T_REAL) {
                    if (!hymo_parse_number(nom, 0, &v->nominal) || !(v->nominal > 0.0))
                        FAILX(HYMO_ERR_PARSE, "ScalarVariable '%s': nominal '%s' is not a positive number", v->name, nom);
                }
            }
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *el)
{
    xml_ctx *x = ud;
    const int depth = --x->depth;
    if (x->st != HYMO_OK) return;
    if (depth == 2 && x->cur >= 0 && strcmp(el, "ScalarVariable") == 0) {
        const fmu_var *v = &x->fi->var[x->cur];
        if (!v->typed) FAILX(HYMO_ERR_PARSE, "ScalarVariable '%s' has no type element", v->name);
        x->cur = -1;
    }
    if (depth == 1 && strcmp(el, "ModelVariables") == 0) x->in_vars = 0;
}

static hymo_status parse_description(fmu_impl *fi, hymo_error *err)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/modelDescription.xml", fi->dir);
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, HYMO_ERR_IO, fi, "no modelDescription.xml in the archive");
    XML_Parser p = XML_ParserCreate(NULL);
    if (!p) {
        fclose(f);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    xml_ctx x = {.fi = fi, .p = p, .err = err, .st = HYMO_OK, .cur = -1};
    XML_SetUserData(p, &x);
    XML_SetElementHandler(p, on_start, on_end);
    char buf[16384];
    for (;;) {
        size_t got = fread(buf, 1, sizeof buf, f);
        const int last = got < sizeof buf;
        if (XML_Parse(p, buf, (int)got, last) == XML_STATUS_ERROR) {
            if (x.st == HYMO_OK)
                x.st = fail(err, HYMO_ERR_PARSE, fi, "modelDescription.xml:%lu: malformed XML: %s",
                            (unsigned long)XML_GetCurrentLineNumber(p), XML_ErrorString(XML_GetErrorCode(p)));
            break;
        }
        if (last || x.st != HYMO_OK) break;
    }
    XML_ParserFree(p);
    fclose(f);
    if (x.st != HYMO_OK) return x.st;
    if (!x.root_seen) return fail(err, HYMO_ERR_PARSE, fi, "modelDescription.xml: no <fmiModelDescription>");
    if (!fi->has_cs)
        return fail(err, HYMO_ERR_MODEL, fi,
                    fi->has_me ? "model exchange only (no <CoSimulation> element): hymo imports co-simulation FMUs"
                               : "no <CoSimulation> element: hymo imports co-simulation FMUs");
    return HYMO_OK;
}

/* --------------------------------------------------------------- the logger */

static void fmu_logger(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status, fmi2String category,
                       fmi2String message, ...)
{
    (void)instance, (void)category;
    fmu_impl *fi = env;
    if (!fi || !message) return;
    /* keep the first error of a call sequence over later info messages */
    if ((int)status < fi->log_status) return;
    char msg[HYMO_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, message);
    hymo_format_line_v(msg, sizeof msg, message, ap);
    va_end(ap);
    snprintf(fi->log, sizeof fi->log, "%s", msg);
    fi->log_status = (int)status;
}

static void log_reset(fmu_impl *fi)
{
    fi->log[0] = '\0';
    fi->log_status = 0;
}

static const char *status_name(fmi2Status s)
{
    static const char *const n[] = {"fmi2OK", "fmi2Warning", "fmi2Discard", "fmi2Error", "fmi2Fatal", "fmi2Pending"};
    return (unsigned)s < 6 ? n[s] : "an unknown status";
}

/* An FMI call's status: OK/Warning pass; else an error naming the call. */
static hymo_status check(fmu_impl *fi, fmi2Status s, const char *call, hymo_error *err)
{
    if (s == fmi2OK || s == fmi2Warning) return HYMO_OK;
    if (s == fmi2Fatal) fi->dead = 1;
    return fail(err, s == fmi2Discard ? HYMO_ERR_NUMERIC : HYMO_ERR_MODEL, fi, "t = %.9g s: %s returned %s%s%s", fi->t,
                call, status_name(s), fi->log[0] ? ": " : "", fi->log);
}

/* ------------------------------------------------------------ subsystem ops */

static void set_pending(fmu_impl *fi, hymo_status st, const hymo_error *e)
{
    if (fi->pending != HYMO_OK) return;
    fi->pending = st;
    snprintf(fi->pending_msg, sizeof fi->pending_msg, "%s", e->message);
}

static void fmu_set_inputs(hymo_subsystem *sub, double t0, const double *coef)
{
    fmu_impl *fi = sub->impl;
    if (fi->dead || fi->n_in == 0) return;
    fi->t = t0;
    hymo_error e;
    log_reset(fi);
    for (int i = 0; i < fi->n_in; ++i) fi->der[i] = coef[HYMO_POLY_TERMS * i];
    hymo_status st = check(fi, fi->api.fmi2SetReal(fi->c, fi->in_vr, (size_t)fi->n_in, fi->der), "fmi2SetReal", &e);
    if (st != HYMO_OK) {
        set_pending(fi, st, &e);
        return;
    }
    if (!fi->can_interpolate) return;
    double fact = 1.0;
    for (int k = 1; k < HYMO_POLY_TERMS; ++k) {
        fact *= k;
        int any = 0;
        for (int i = 0; i < fi->n_in; ++i) {
            fi->der[i] = fact * coef[HYMO_POLY_TERMS * i + k];
            any |= fi->der[i] != 0.0;
            fi->der_order[i] = k;
        }
        if (!any && !fi->der_set[k]) continue; /* still zero */
        fi->der_set[k] = any;
        st = check(fi, fi->api.fmi2SetRealInputDerivatives(fi->c, fi->in_vr, (size_t)fi->n_in, fi->der_order, fi->der),
                   "fmi2SetRealInputDerivatives", &e);
        if (st != HYMO_OK) {
            set_pending(fi, st, &e);
            return;
        }
    }
}

static hymo_status fmu_do_step(hymo_subsystem *sub, double t, double H, hymo_error *err)
{
    fmu_impl *fi = sub->impl;
    fi->t = t;
    if (fi->pending != HYMO_OK) {
        hymo_status st = fi->pending;
        hymo_error_set(err, st, "%s", fi->pending_msg);
        fi->pending = HYMO_OK;
        return st;
    }
    if (fi->dead) return fail(err, HYMO_ERR_MODEL, fi, "t = %.9g s: the FMU returned fmi2Fatal before", t);
    log_reset(fi);
    fmi2Status s = fi->api.fmi2DoStep(fi->c, t, H, fmi2False);
    if (s == fmi2Pending) {
        return fail(err, HYMO_ERR_MODEL, fi, "t = %.9g s: fmi2DoStep returned fmi2Pending (asynchronous steps are "
                                             "not supported)", t);
    }
    return check(fi, s, "fmi2DoStep", err);
}

static void fmu_get_outputs(const hymo_subsystem *sub, double *y)
{
    fmu_impl *fi = sub->impl;
    if (fi->n_out == 0) return;
    fmi2Status s = fi->dead ? fmi2Fatal : fi->api.fmi2GetReal(fi->c, fi->out_vr, (size_t)fi->n_out, y);
    if (s != fmi2OK && s != fmi2Warning) /* non-finite outputs stop the run */
        for (int i = 0; i < fi->n_out; ++i) y[i] = NAN;
}

static void fmu_get_real(const hymo_subsystem *sub, const int *vr, int n, double *values)
{
    fmu_impl *fi = sub->impl;
    for (int k = 0; k < n; ++k) {
        values[k] = NAN;
        if (vr[k] < 0 || vr[k] >= fi->n_var || fi->dead) continue;
        const fmu_var *v = &fi->var[vr[k]];
        fmi2Status s = fmi2Error;
        if (v->type == T_REAL) {
            s = fi->api.fmi2GetReal(fi->c, &v->vr, 1, &values[k]);
        } else if (v->type == T_INTEGER || v->type == T_ENUM) {
            fmi2Integer i = 0;
            s = fi->api.fmi2GetInteger(fi->c, &v->vr, 1, &i);
            values[k] = i;
        } else if (v->type == T_BOOLEAN) {
            fmi2Boolean b = 0;
            s = fi->api.fmi2GetBoolean(fi->c, &v->vr, 1, &b);
            values[k] = b != fmi2False;
        }
        if (s != fmi2OK && s != fmi2Warning) values[k] = NAN;
    }
}

static const char *fmu_get_string(const hymo_subsystem *sub, int vr)
{
    fmu_impl *fi = sub->impl;
    if (vr < 0 || vr >= fi->n_var || fi->dead || fi->var[vr].type != T_STRING) return NULL;
    fmi2String s = NULL;
    if (fi->api.fmi2GetString(fi->c, &fi->var[vr].vr, 1, &s) > fmi2Warning) return NULL;
    return s;
}

static int fmu_n_variables(const hymo_subsystem *sub) { return ((const fmu_impl *)sub->impl)->n_var; }

static const hymo_variable *fmu_variable(const hymo_subsystem *sub, int vr)
{
    const fmu_impl *fi = sub->impl;
    return vr >= 0 && vr < fi->n_var ? &fi->hv[vr] : NULL;
}

/* States.  Serialize mode: buf[0] = bytes, then the bytes; handle mode:
 * buf[0] = 1 + index of an FMUstate kept until destroy (0: none).  A
 * buffer that already names a handle of this FMU gets that handle updated
 * (fmi2GetFMUstate with an existing state), so that saving into the same
 * buffer again and again (a checkpoint) allocates one handle; a copy of a
 * buffer names the same handle. */
static int fmu_state_size(const hymo_subsystem *sub)
{
    fmu_impl *fi = sub->impl;
    if (!fi->can_get_set || fi->dead) return 0;
    if (!fi->can_serialize) return 1;
    size_t bytes = 0;
    hymo_error e;
    hymo_status st = check(fi, fi->api.fmi2GetFMUstate(fi->c, &fi->state), "fmi2GetFMUstate", &e);
    if (st == HYMO_OK)
        st = check(fi, fi->api.fmi2SerializedFMUstateSize(fi->c, fi->state, &bytes), "fmi2SerializedFMUstateSize", &e);
    if (st != HYMO_OK) {
        set_pending(fi, st, &e);
        return 1;
    }
    fi->state_bytes = bytes;
    return 1 + (int)((bytes + sizeof(double) - 1) / sizeof(double));
}

static void fmu_get_state(const hymo_subsystem *sub, double *buf)
{
    fmu_impl *fi = sub->impl;
    if (!fi->can_get_set || fi->dead) {
        buf[0] = -1.0; /* invalid */
        return;
    }
    hymo_error e;
    hymo_status st;
    if (!fi->can_serialize) {
        const double h = buf[0];
        if (h >= 1.0 && h <= (double)fi->n_handles && h == floor(h)) { /* this buffer's handle */
            st = check(fi, fi->api.fmi2GetFMUstate(fi->c, &fi->handles[(int)h - 1]), "fmi2GetFMUstate", &e);
            if (st != HYMO_OK) {
                buf[0] = -1.0;
                set_pending(fi, st, &e);
            }
            return;
        }
        buf[0] = -1.0; /* invalid unless filled */
        fmi2FMUstate *nh = realloc(fi->handles, (size_t)(fi->n_handles + 1) * sizeof *nh);
        if (!nh) {
            set_pending(fi, hymo_error_set(&e, HYMO_ERR_NOMEM, "out of memory (FMU state)"), &e);
            return;
        }
        fi->handles = nh;
        nh[fi->n_handles] = NULL;
        st = check(fi, fi->api.fmi2GetFMUstate(fi->c, &nh[fi->n_handles]), "fmi2GetFMUstate", &e);
        if (st != HYMO_OK) {
            set_pending(fi, st, &e);
            return;
        }
        buf[0] = ++fi->n_handles;
        return;
    }
    buf[0] = -1.0; /* invalid unless filled */
    size_t bytes = 0;
    st = check(fi, fi->api.fmi2GetFMUstate(fi->c, &fi->state), "fmi2GetFMUstate", &e);
    if (st == HYMO_OK)
        st = check(fi, fi->api.fmi2SerializedFMUstateSize(fi->c, fi->state, &bytes), "fmi2SerializedFMUstateSize", &e);
    if (st == HYMO_OK && bytes > fi->state_bytes)
        st = fail(&e, HYMO_ERR_MODEL, fi, "t = %.9g s: the serialized FMU state grew from %zu to %zu bytes after "
                                          "state_size", fi->t, fi->state_bytes, bytes);
    if (st == HYMO_OK)
        st = check(fi, fi->api.fmi2SerializeFMUstate(fi->c, fi->state, (fmi2Byte *)(buf + 1), bytes),
                   "fmi2SerializeFMUstate", &e);
    if (st != HYMO_OK) {
        set_pending(fi, st, &e);
        return;
    }
    buf[0] = (double)bytes;
}

static void fmu_set_state(hymo_subsystem *sub, const double *buf)
{
    fmu_impl *fi = sub->impl;
    if (!fi->can_get_set || fi->dead) return;
    hymo_error e;
    hymo_status st;
    if (!(buf[0] >= 0.0) || buf[0] != floor(buf[0]) ||
        (!fi->can_serialize && (buf[0] < 1.0 || buf[0] > fi->n_handles)) || (fi->can_serialize && buf[0] > (double)fi->state_bytes)) {
        set_pending(fi, fail(&e, HYMO_ERR_ARGUMENT, fi, "set_state: not a state of this FMU"), &e);
        return;
    }
    if (!fi->can_serialize) {
        st = check(fi, fi->api.fmi2SetFMUstate(fi->c, fi->handles[(int)buf[0] - 1]), "fmi2SetFMUstate", &e);
    } else {
        fmi2FMUstate s = NULL;
        st = check(fi, fi->api.fmi2DeSerializeFMUstate(fi->c, (const fmi2Byte *)(buf + 1), (size_t)buf[0], &s),
                   "fmi2DeSerializeFMUstate", &e);
        if (st == HYMO_OK) st = check(fi, fi->api.fmi2SetFMUstate(fi->c, s), "fmi2SetFMUstate", &e);
        if (s && !fi->dead) fi->api.fmi2FreeFMUstate(fi->c, &s);
    }
    if (st != HYMO_OK) set_pending(fi, st, &e);
}

static void impl_free(fmu_impl *fi)
{
    if (!fi) return;
    if (fi->c && !fi->dead) {
        if (fi->state) fi->api.fmi2FreeFMUstate(fi->c, &fi->state);
        for (int k = 0; k < fi->n_handles; ++k)
            if (fi->handles[k]) fi->api.fmi2FreeFMUstate(fi->c, &fi->handles[k]);
        if (fi->initialized) fi->api.fmi2Terminate(fi->c);
        fi->api.fmi2FreeInstance(fi->c);
    }
    if (fi->so) dlclose(fi->so);
    if (fi->dir_made) remove_tree(fi->dir);
    for (int k = 0; k < fi->n_var; ++k) {
        free(fi->var[k].name);
        free(fi->var[k].description);
        free(fi->var[k].unit);
    }
    free(fi->var);
    free(fi->hv);
    free(fi->in);
    free(fi->out);
    free(fi->in_vr);
    free(fi->out_vr);
    free(fi->der);
    free(fi->der_order);
    free(fi->handles);
    free(fi->fmi_version);
    free(fi->model_name);
    free(fi->guid);
    free(fi->model_id);
    free(fi);
}

static void fmu_destroy(hymo_subsystem *sub)
{
    if (!sub) return;
    impl_free(sub->impl);
    free(sub);
}

static const hymo_subsystem_ops fmu_ops = {
    .kind = "fmu",
    .set_inputs = fmu_set_inputs,
    .do_step = fmu_do_step,
    .get_outputs = fmu_get_outputs,
    .state_size = fmu_state_size,
    .get_state = fmu_get_state,
    .set_state = fmu_set_state,
    .destroy = fmu_destroy,
    .n_variables = fmu_n_variables,
    .variable = fmu_variable,
    .get_real = fmu_get_real,
    .get_string = fmu_get_string,
};

int hymo_fmu_input_variable(const hymo_subsystem *sub, int i)
{
    if (!sub || i < 0 || i >= sub->n_inputs) return -1;
    return ((const fmu_impl *)sub->impl)->in[i];
}

int hymo_fmu_output_variable(const hymo_subsystem *sub, int i)
{
    if (!sub || i < 0 || i >= sub->n_outputs) return -1;
    return ((const fmu_impl *)sub->impl)->out[i];
}

double hymo_fmu_output_nominal(const hymo_subsystem *sub, int i)
{
    if (!sub || i < 0 || i >= sub->n_outputs) return NAN;
    const fmu_impl *fi = sub->impl;
    return fi->var[fi->out[i]].nominal;
}

int hymo_fmu_free_input(hymo_subsystem *sub, int i)
{
    if (!sub || i < 0 || i >= sub->n_inputs) return -1;
    fmu_impl *fi = sub->impl;
    for (int j = i; j + 1 < fi->n_in; ++j) {
        fi->in[j] = fi->in[j + 1];
        fi->in_vr[j] = fi->in_vr[j + 1];
    }
    sub->n_inputs = --fi->n_in;
    return 0;
}

const char *hymo_fmu_directory(const hymo_subsystem *sub)
{
    if (!sub) return NULL;
    return ((const fmu_impl *)sub->impl)->dir;
}

/* ------------------------------------------------------------------ create */

/* file:// URI of dir/resources/ (percent-encoded). */
static void resource_uri(const char *dir, char *out, size_t cap)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = (size_t)snprintf(out, cap, "file://");
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/resources/", dir);
    for (const unsigned char *p = (const unsigned char *)path; *p && n + 4 < cap; ++p) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("/-._~", *p)) {
            out[n++] = (char)*p;
        } else {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    out[n] = '\0';
}

static hymo_status load_binary(fmu_impl *fi, hymo_error *err)
{
    char so[PATH_MAX + 64];
    if ((size_t)snprintf(so, sizeof so, "%s/binaries/linux64/%s.so", fi->dir, fi->model_id) >= sizeof so)
        return fail(err, HYMO_ERR_IO, fi, "binary path too long");
    struct stat sb;
    if (stat(so, &sb) != 0)
        return fail(err, HYMO_ERR_IO, fi, "binaries/linux64/%s.so is missing (no binary for this platform)",
                    fi->model_id);
    dlerror();
    fi->so = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!fi->so) {
        const char *e = dlerror();
        return fail(err, HYMO_ERR_IO, fi, "cannot load binaries/linux64/%s.so: %s", fi->model_id, e ? e : "dlopen failed");
    }
    const char *missing = NULL;
#define FMU_RESOLVE(name)                                                                          \
    if (!missing) {                                                                                \
        void *sym_ = dlsym(fi->so, #name);                                                         \
        if (!sym_) missing = #name;                                                                \
        memcpy(&fi->api.name, &sym_, sizeof sym_);                                                 \
    }
    HYMO_FMI2_COMMON_FUNCTIONS(FMU_RESOLVE)
    HYMO_FMI2_CS_FUNCTIONS(FMU_RESOLVE)
#undef FMU_RESOLVE
    if (missing)
        return fail(err, HYMO_ERR_MODEL, fi, "binaries/linux64/%s.so does not export %s (FMI 2.0 co-simulation "
                                             "requires it)", fi->model_id, missing);
    const char *tp = fi->api.fmi2GetTypesPlatform(), *ver = fi->api.fmi2GetVersion();
    if (!tp || strcmp(tp, fmi2TypesPlatform) != 0)
        return fail(err, HYMO_ERR_MODEL, fi, "fmi2GetTypesPlatform() is '%s', not '%s'", tp ? tp : "(null)",
                    fmi2TypesPlatform);
    if (!ver || strcmp(ver, fmi2Version) != 0)
        return fail(err, HYMO_ERR_MODEL, fi, "fmi2GetVersion() is '%s', not '%s'", ver ? ver : "(null)", fmi2Version);
    return HYMO_OK;
}

static hymo_status build_tables(fmu_impl *fi, hymo_subsystem *sub, hymo_error *err)
{
    const int n = fi->n_var;
    fi->hv = calloc((size_t)n + 1, sizeof *fi->hv);
    fi->in = calloc((size_t)n + 1, sizeof *fi->in);
    fi->out = calloc((size_t)n + 1, sizeof *fi->out);
    fi->in_vr = calloc((size_t)n + 1, sizeof *fi->in_vr);
    fi->out_vr = calloc((size_t)n + 1, sizeof *fi->out_vr);
    fi->der = calloc((size_t)n + 1, sizeof *fi->der);
    fi->der_order = calloc((size_t)n + 1, sizeof *fi->der_order);
    if (!fi->hv || !fi->in || !fi->out || !fi->in_vr || !fi->out_vr || !fi->der || !fi->der_order)
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    static const char *const tn[] = {"Real", "Integer", "Boolean", "String", "Enumeration"};
    for (int k = 0; k < n; ++k) {
        const fmu_var *v = &fi->var[k];
        fi->hv[k] = (hymo_variable){v->name, v->type == T_REAL ? v->unit : v->type == T_STRING ? "" : "1",
                                    v->description, v->type == T_STRING ? HYMO_VAR_STRING : HYMO_VAR_REAL};
        if (v->causality != C_INPUT && v->causality != C_OUTPUT) continue;
        if (v->type != T_REAL)
            return fail(err, HYMO_ERR_MODEL, fi, "%s '%s' is of type %s: hymo couples Real inputs and outputs only",
                        v->causality == C_INPUT ? "input" : "output", v->name, tn[v->type]);
        if (v->causality == C_INPUT) {
            fi->in[fi->n_in] = k;
            fi->in_vr[fi->n_in++] = v->vr;
        } else {
            fi->out[fi->n_out] = k;
            fi->out_vr[fi->n_out++] = v->vr;
        }
    }
    sub->n_inputs = fi->n_in;
    sub->n_outputs = fi->n_out;
    return HYMO_OK;
}

static hymo_status set_parameter(fmu_impl *fi, const hymo_fmu_parameter *p, hymo_error *err)
{
    int k = 0;
    while (k < fi->n_var && strcmp(fi->var[k].name, p->name) != 0) ++k;
    if (k == fi->n_var) return fail(err, HYMO_ERR_ARGUMENT, fi, "no variable '%s' to set", p->name);
    const fmu_var *v = &fi->var[k];
    if (v->causality != C_PARAMETER && v->causality != C_INPUT)
        return fail(err, HYMO_ERR_ARGUMENT, fi, "'%s' is not a parameter or input: it cannot be set", p->name);
    if (!isfinite(p->value)) return fail(err, HYMO_ERR_ARGUMENT, fi, "'%s': value %g is not finite", p->name, p->value);
    log_reset(fi);
    char call[96];
    snprintf(call, sizeof call, "setting '%s'", p->name);
    if (v->type == T_REAL) return check(fi, fi->api.fmi2SetReal(fi->c, &v->vr, 1, &p->value), call, err);
    if (v->type == T_INTEGER || v->type == T_ENUM) {
        if (p->value != floor(p->value) || fabs(p->value) > 2147483647.0)
            return fail(err, HYMO_ERR_ARGUMENT, fi, "'%s' is an Integer: %g is not one", p->name, p->value);
        const fmi2Integer i = (fmi2Integer)p->value;
        return check(fi, fi->api.fmi2SetInteger(fi->c, &v->vr, 1, &i), call, err);
    }
    if (v->type == T_BOOLEAN) {
        if (p->value != 0.0 && p->value != 1.0)
            return fail(err, HYMO_ERR_ARGUMENT, fi, "'%s' is a Boolean: give 0 or 1, not %g", p->name, p->value);
        const fmi2Boolean b = p->value != 0.0;
        return check(fi, fi->api.fmi2SetBoolean(fi->c, &v->vr, 1, &b), call, err);
    }
    return fail(err, HYMO_ERR_ARGUMENT, fi, "'%s' is a String: it cannot be set from a number", p->name);
}

/* Loads and instantiates the FMU, sets up the experiment and the
 * parameters, and enters initialization mode (fi->in_init). */
static hymo_status open_fmu(const char *path, const char *name, double start_time, const hymo_fmu_parameter *params,
                            int n_params, hymo_subsystem **out, hymo_error *err)
{
    *out = NULL;
    if (!path || !*path) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "FMU: no path given");
    hymo_subsystem *sub = calloc(1, sizeof *sub);
    fmu_impl *fi = calloc(1, sizeof *fi);
    if (!sub || !fi) {
        free(sub);
        free(fi);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    sub->ops = &fmu_ops;
    sub->impl = fi;
    snprintf(fi->path, sizeof fi->path, "%s", path);
    hymo_status st = HYMO_OK;
    struct stat sb;
    if (stat(path, &sb) != 0) {
        st = fail(err, HYMO_ERR_IO, fi, "cannot open: %s", strerror(errno));
        goto done;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = fail(err, HYMO_ERR_IO, fi, "not a file (an FMU is a zip archive)");
        goto done;
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    if ((size_t)snprintf(fi->dir, sizeof fi->dir, "%s/hymo-fmu-XXXXXX", tmp) >= sizeof fi->dir ||
        !mkdtemp(fi->dir)) {
        st = fail(err, HYMO_ERR_IO, fi, "cannot create a temporary directory in %s: %s", tmp, strerror(errno));
        goto done;
    }
    fi->dir_made = 1;
    if ((st = unzip(fi, err)) != HYMO_OK || (st = parse_description(fi, err)) != HYMO_OK ||
        (st = build_tables(fi, sub, err)) != HYMO_OK || (st = load_binary(fi, err)) != HYMO_OK)
        goto done;
    snprintf(sub->name, sizeof sub->name, "%s", name && *name ? name : fi->model_id);
    /* instantiate and initialize */
    const fmi2CallbackFunctions cb = {fmu_logger, calloc, free, NULL, fi};
    memcpy((void *)&fi->callbacks, &cb, sizeof cb);
    char uri[3 * PATH_MAX + 32];
    resource_uri(fi->dir, uri, sizeof uri);
    fi->t = start_time;
    log_reset(fi);
    fi->c = fi->api.fmi2Instantiate(sub->name, fmi2CoSimulation, fi->guid, uri, &fi->callbacks, fmi2False, fmi2False);
    if (!fi->c) {
        st = fail(err, HYMO_ERR_MODEL, fi, "fmi2Instantiate failed%s%s", fi->log[0] ? ": " : "", fi->log);
        goto done;
    }
    st = check(fi, fi->api.fmi2SetupExperiment(fi->c, fmi2False, 0.0, start_time, fmi2False, 0.0),
               "fmi2SetupExperiment", err);
    for (int k = 0; k < n_params && st == HYMO_OK; ++k) st = set_parameter(fi, &params[k], err);
    if (st == HYMO_OK)
        st = check(fi, fi->api.fmi2EnterInitializationMode(fi->c), "fmi2EnterInitializationMode", err);
    if (st == HYMO_OK) fi->in_init = 1;
done:
    if (st != HYMO_OK) {
        fmu_destroy(sub);
        return st;
    }
    *out = sub;
    return HYMO_OK;
}

hymo_status hymo_fmu_subsystem_open(const char *path, const char *name, double start_time,
                                    const hymo_fmu_parameter *params, int n_params, hymo_subsystem **out,
                                    hymo_error *err)
{
    return open_fmu(path, name, start_time, params, n_params, out, err);
}

hymo_status hymo_fmu_exit_initialization(hymo_subsystem *sub, hymo_error *err)
{
    fmu_impl *fi = sub->impl;
    if (!fi->in_init) return fail(err, HYMO_ERR_ARGUMENT, fi, "not in initialization mode");
    if (fi->pending != HYMO_OK) { /* a failed fmi2SetReal during initialization */
        const hymo_status p = fi->pending;
        fi->pending = HYMO_OK;
        return hymo_error_set(err, p, "%s", fi->pending_msg);
    }
    log_reset(fi);
    hymo_status st = check(fi, fi->api.fmi2ExitInitializationMode(fi->c), "fmi2ExitInitializationMode", err);
    if (st == HYMO_OK) fi->in_init = 0, fi->initialized = 1;
    return st;
}

hymo_status hymo_fmu_subsystem_create(const char *path, const char *name, double start_time,
                                      const hymo_fmu_parameter *params, int n_params, hymo_subsystem **out,
                                      hymo_error *err)
{
    hymo_status st = open_fmu(path, name, start_time, params, n_params, out, err);
    if (st != HYMO_OK) return st;
    if ((st = hymo_fmu_exit_initialization(*out, err)) != HYMO_OK) {
        fmu_destroy(*out);
        *out = NULL;
    }
    return st;
}
