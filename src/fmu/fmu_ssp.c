/* FMU export: SystemStructure.ssd of an SSP 1.0 archive of parts
 * (fmu_internal.h, docs/cosimulation.md "SSP files"); src/fmi/ssp.c reads
 * it back. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_internal.h"
#include "cosim_tables.h"
#include "hymo/version.h"
#include "ssp.h"

typedef struct {
    char *s;
    size_t n, cap;
    int bad;
} ssd_buf;

static void out(ssd_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void out(ssd_buf *b, const char *fmt, ...)
{
    if (b->bad) return;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->bad = 1;
        return;
    }
    if (b->n + (size_t)n + 1 > b->cap) {
        const size_t cap = 2 * b->cap + (size_t)n + 4096;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->bad = 1;
            return;
        }
        b->s = s, b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

/* s as XML attribute text into a static-size buffer. */
static const char *esc(const char *s, char *o, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 8 < cap; ++s) {
        const char *e = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '"' ? "&quot;" : NULL;
        if (e)
            n += (size_t)snprintf(o + n, cap - n, "%s", e);
        else
            o[n++] = *s;
    }
    o[n] = '\0';
    return o;
}

typedef struct {
    const char *name; /* the system's */
    int n;
    hymo_fmu_part *const *parts;
    const char *const *names;
    const int *stage;         /* per component (scheme gauss-seidel); NULL: jacobi */
    const int *extrapolation; /* per component, -1: the system's */
    int system_extrapolation; /* Lagrange order 0..3 */
    double H, t_end;
    const char *model; /* the model file in the archive, NULL: none */
} ssd_system;

static hymo_status make_ssd(const ssd_system *s, char **xml, hymo_error *err)
{
    *xml = NULL;
    /* every input's source: the one output of another component of its name */
    for (int j = 0; j < s->n; ++j) {
        const hymo_fmu_part *pj = s->parts[j];
        for (int v = 0; v < pj->n_vars; ++v) {
            if (pj->vars[v].causality != HYMO_FMU_INPUT) continue;
            int found = 0;
            for (int k = 0; k < s->n; ++k)
                for (int w = 0; k != j && w < s->parts[k]->n_vars; ++w)
                    found += s->parts[k]->vars[w].causality == HYMO_FMU_OUTPUT &&
                             strcmp(s->parts[k]->vars[w].name, pj->vars[v].name) == 0;
            if (found != 1)
                return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                      "SSP: input '%s' of component '%s' has %s output of that name in another "
                                      "component",
                                      pj->vars[v].name, s->names[j], found ? "more than one" : "no");
        }
    }
    ssd_buf b = {0};
    char e1[512], e2[512], e3[512], e4[512];
    out(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out(&b,
        "<ssd:SystemStructureDescription xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\"\n"
        "    xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\"\n"
        "    version=\"1.0\" name=\"%s\" generationTool=\"hymo %s\">\n",
        esc(s->name, e1, sizeof e1), hymo_version());
    out(&b, "  <ssd:System name=\"%s\">\n    <ssd:Elements>\n", esc(s->name, e1, sizeof e1));
    for (int k = 0; k < s->n; ++k) {
        const hymo_fmu_part *p = s->parts[k];
        esc(s->names[k], e1, sizeof e1);
        out(&b,
            "      <ssd:Component name=\"%s\" type=\"application/x-fmu-sharedlibrary\" source=\"resources/%s.fmu\">\n"
            "        <ssd:Connectors>\n",
            e1, e1);
        for (int v = 0; v < p->n_vars; ++v) {
            const hymo_fmu_var *x = &p->vars[v];
            if (x->causality == HYMO_FMU_LOCAL) continue;
            out(&b, "          <ssd:Connector name=\"%s\" kind=\"%s\"><ssc:%s/></ssd:Connector>\n",
                esc(x->name, e2, sizeof e2), x->causality == HYMO_FMU_INPUT ? "input" : "output",
                x->type == HYMO_VAR_STRING ? "String" : "Real");
        }
        out(&b, "        </ssd:Connectors>\n");
        if (s->extrapolation && s->extrapolation[k] >= 0)
            out(&b,
                "        <ssd:Annotations>\n          <ssc:Annotation type=\"%s\">\n"
                "            <hymo:Component xmlns:hymo=\"%s\" extrapolation=\"%d\"/>\n"
                "          </ssc:Annotation>\n        </ssd:Annotations>\n",
                HYMO_SSP_ANNOTATION, HYMO_SSP_NAMESPACE, s->extrapolation[k]);
        out(&b, "      </ssd:Component>\n");
    }
    out(&b, "    </ssd:Elements>\n    <ssd:Connections>\n");
    for (int j = 0; j < s->n; ++j)
        for (int v = 0; v < s->parts[j]->n_vars; ++v) {
            const hymo_fmu_var *in = &s->parts[j]->vars[v];
            if (in->causality != HYMO_FMU_INPUT) continue;
            for (int k = 0; k < s->n; ++k)
                for (int w = 0; k != j && w < s->parts[k]->n_vars; ++w) {
                    const hymo_fmu_var *o = &s->parts[k]->vars[w];
                    if (o->causality == HYMO_FMU_OUTPUT && strcmp(o->name, in->name) == 0)
                        out(&b,
                            "      <ssd:Connection startElement=\"%s\" startConnector=\"%s\" endElement=\"%s\" "
                            "endConnector=\"%s\"/>\n",
                            esc(s->names[k], e1, sizeof e1), esc(o->name, e2, sizeof e2),
                            esc(s->names[j], e3, sizeof e3), esc(in->name, e4, sizeof e4));
                }
        }
    out(&b, "    </ssd:Connections>\n  </ssd:System>\n");
    out(&b, "  <ssd:DefaultExperiment startTime=\"0\" stopTime=\"%.17g\"/>\n", s->t_end);
    /* hymo's settings: stages as "a; b c" (components of a stage by spaces) */
    char order[2048] = "";
    if (s->stage) {
        size_t n = 0;
        int max = 0;
        for (int k = 0; k < s->n; ++k) max = s->stage[k] > max ? s->stage[k] : max;
        for (int st = 0; st <= max; ++st) {
            int first = 1;
            for (int k = 0; k < s->n; ++k)
                if (s->stage[k] == st && n + 2 < sizeof order) {
                    n += (size_t)snprintf(order + n, sizeof order - n, "%s%s", first ? (n ? "; " : "") : " ",
                                          s->names[k]);
                    first = 0;
                }
        }
    }
    out(&b,
        "  <ssd:Annotations>\n    <ssc:Annotation type=\"%s\">\n"
        "      <hymo:CoSimulation xmlns:hymo=\"%s\" H=\"%.17g\" scheme=\"%s\"",
        HYMO_SSP_ANNOTATION, HYMO_SSP_NAMESPACE, s->H, s->stage ? "gauss-seidel" : "jacobi");
    if (s->stage) out(&b, " order=\"%s\"", esc(order, e1, sizeof e1));
    out(&b, " extrapolation=\"%d\"", s->system_extrapolation);
    if (s->model) out(&b, " model=\"%s\"", esc(s->model, e1, sizeof e1));
    out(&b, "/>\n    </ssc:Annotation>\n  </ssd:Annotations>\n</ssd:SystemStructureDescription>\n");
    if (b.bad) {
        free(b.s);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (SystemStructure.ssd)");
    }
    *xml = b.s;
    return HYMO_OK;
}

hymo_status hymo_fmu_ssp_create(const char *model_path, int argc, char **argv, hymo_fmu_ssp **out, hymo_error *err)
{
    *out = NULL;
    hymo_fmu_ssp *s = calloc(1, sizeof *s);
    char **fo = calloc((size_t)argc + 1, sizeof *fo); /* the FMUs' options */
    if (!s || !fo) {
        free(s), free(fo);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    hymo_status st = HYMO_OK;
    int part_at = -1, n_fo = 0;
    for (int i = 0; i + 1 < argc && st == HYMO_OK; i += 2) {
        if (!strcmp(argv[i], "--set"))
            st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "--part ssp: --set is not supported (the SSP carries the "
                                "model file as it is: edit a copy of the model instead)");
        if (!strcmp(argv[i], "--scheme")) continue; /* the system's, not the FMUs' */
        if (!strcmp(argv[i], "--part")) part_at = n_fo;
        fo[n_fo++] = argv[i], fo[n_fo++] = argv[i + 1];
    }
    if (st == HYMO_OK && part_at < 0) st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "--part ssp is required");
    /* the mechanics first: its split names the circuits */
    char part_arg[HYMO_FMU_SSP_MAX][80];
    if (st == HYMO_OK) {
        fo[part_at + 1] = "mechanics";
        st = hymo_fmu_part_create(model_path, n_fo, fo, &s->parts[0], err);
        s->n = 1;
        snprintf(s->names[0], sizeof s->names[0], "mechanics");
    }
    hymo_cosim_options co;
    hymo_cosim_tables tb = {0};
    if (st == HYMO_OK) {
        hymo_cosim_options_default(&co, s->parts[0]->model);
        for (int i = 0; i + 1 < argc && st == HYMO_OK; i += 2)
            if (strcmp(argv[i], "--part") && hymo_cosim_option(argv[i], argv[i + 1], &co, err) < 0)
                st = HYMO_ERR_ARGUMENT;
        tb = hymo_cosim_tables_of(&co);
        if (st == HYMO_OK && (!tb.approx || !tb.scheme || !tb.mech_inputs || tb.approx->interface_model ||
                              tb.approx->hyd_order != tb.approx->order || tb.approx->hyd_at_start))
            st = hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                "--part ssp: the extrapolation has no system-file form (Lagrange orders 0 .. 3 only)");
    }
    if (st == HYMO_OK && s->parts[0]->split->n_subsystems > HYMO_FMU_SSP_MAX)
        st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "--part ssp: more than %d subsystems", HYMO_FMU_SSP_MAX);
    const int n = st == HYMO_OK ? s->parts[0]->split->n_subsystems : 0;
    for (int k = 1; k < n && st == HYMO_OK; ++k) {
        const char *sn = s->parts[0]->split->subsystems[k]->name, *paren = strchr(sn, '(');
        snprintf(s->names[k], sizeof s->names[k], "%.*s", paren ? (int)(paren - sn) : 60, sn);
        snprintf(part_arg[k], sizeof part_arg[k], "circuit:%s", s->names[k]);
        fo[part_at + 1] = part_arg[k];
        st = hymo_fmu_part_create(model_path, n_fo, fo, &s->parts[k], err);
        s->n = k + 1;
    }
    if (st == HYMO_OK) {
        int stage[HYMO_FMU_SSP_MAX], extrap[HYMO_FMU_SSP_MAX];
        const char *names[HYMO_FMU_SSP_MAX];
        for (int k = 0; k < n; ++k) {
            names[k] = s->names[k];
            stage[k] = tb.scheme->stage(k, n);
            extrap[k] = k == 0 && tb.mech_inputs->hold ? 0 : -1;
        }
        s->H = co.H;
        s->t_end = s->parts[0]->t_end;
        s->ordered = tb.scheme->ordered;
        s->extrapolation = tb.approx->order;
        const ssd_system sys = {.name = s->parts[0]->model->name,
                                .n = n,
                                .parts = s->parts,
                                .names = names,
                                .stage = s->ordered ? stage : NULL,
                                .extrapolation = extrap,
                                .system_extrapolation = s->extrapolation,
                                .H = s->H,
                                .t_end = s->t_end,
                                .model = "resources/" HYMO_FMU_MODEL_FILE};
        st = make_ssd(&sys, &s->ssd, err);
    }
    free(fo);
    if (st != HYMO_OK) {
        hymo_fmu_ssp_free(s);
        return st;
    }
    *out = s;
    return HYMO_OK;
}

void hymo_fmu_ssp_free(hymo_fmu_ssp *s)
{
    if (!s) return;
    for (int k = 0; k < s->n; ++k) hymo_fmu_part_free(s->parts[k]);
    free(s->ssd);
    free(s);
}
