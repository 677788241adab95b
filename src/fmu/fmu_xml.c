/* FMU export: modelDescription.xml of a part (FMI 2.0 co-simulation,
 * docs/fmi.md "modelDescription.xml"). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_internal.h"
#include "hymo/version.h"

typedef struct {
    char *s;
    size_t n, cap;
    int bad;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->bad) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->bad = 1;
            return;
        }
        if ((size_t)n < b->cap - b->n) {
            b->n += (size_t)n;
            return;
        }
        size_t cap = 2 * b->cap + (size_t)n + 1;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->bad = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* XML attribute text of s (escaped) */
static void put_escaped(sbuf *b, const char *s)
{
    for (; *s; ++s) {
        switch (*s) {
        case '&': put(b, "&amp;"); break;
        case '<': put(b, "&lt;"); break;
        case '>': put(b, "&gt;"); break;
        case '"': put(b, "&quot;"); break;
        case '\'': put(b, "&apos;"); break;
        case '\n': put(b, "&#10;"); break;
        case '\t': put(b, "&#9;"); break;
        default:
            if ((unsigned char)*s < 0x20) put(b, " ");
            else put(b, "%c", *s);
        }
    }
}

static const char *const causality_name[3] = {"input", "output", "local"};

char *hymo_fmu_model_description(const hymo_fmu_part *p)
{
    sbuf b = {malloc(4096), 0, 4096, 0};
    if (!b.s) return NULL;
    b.s[0] = '\0';
    put(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<fmiModelDescription\n  fmiVersion=\"2.0\"\n  modelName=\"");
    put_escaped(&b, p->model->name);
    put(&b, " (%s)\"\n  guid=\"%s\"\n  description=\"", p->kind == HYMO_FMU_WHOLE ? "whole" : p->part_name, p->guid);
    put_escaped(&b, p->part_name);
    put(&b, " of hymo model ");
    put_escaped(&b, p->model->name);
    put(&b, " (physics sha256 %s)\"\n  generationTool=\"hymo %s\"\n  variableNamingConvention=\"flat\"\n"
            "  numberOfEventIndicators=\"0\">\n",
        p->model->physics_sha256, hymo_version());
    /* every part re-divides a communication step that is not a whole
     * multiple of its internal step (fmu_whole.c, cosim_mech.c, hyd_subsystem.c) */
    put(&b, "  <CoSimulation\n    modelIdentifier=\"%s\"\n    needsExecutionTool=\"false\"\n"
            "    canHandleVariableCommunicationStepSize=\"true\"\n    canInterpolateInputs=\"true\"\n"
            "    maxOutputDerivativeOrder=\"0\"\n    canRunAsynchronuously=\"false\"\n"
            "    canBeInstantiatedOnlyOncePerProcess=\"false\"\n    canNotUseMemoryManagementFunctions=\"true\"\n"
            "    canGetAndSetFMUstate=\"true\"\n    canSerializeFMUstate=\"true\"\n"
            "    providesDirectionalDerivative=\"false\"/>\n",
        p->identifier);
    /* units: each distinct one once */
    int any_unit = 0;
    for (int v = 0; v < p->n_vars; ++v) {
        const char *u = p->vars[v].unit;
        if (!u) continue;
        int seen = 0;
        for (int w = 0; w < v && !seen; ++w) seen = p->vars[w].unit && !strcmp(p->vars[w].unit, u);
        if (seen) continue;
        if (!any_unit) put(&b, "  <UnitDefinitions>\n");
        any_unit = 1;
        put(&b, "    <Unit name=\"");
        put_escaped(&b, u);
        put(&b, "\"/>\n");
    }
    if (any_unit) put(&b, "  </UnitDefinitions>\n");
    put(&b, "  <LogCategories>\n    <Category name=\"logStatusError\" description=\"errors\"/>\n"
            "    <Category name=\"logAll\" description=\"every message\"/>\n  </LogCategories>\n");
    put(&b, "  <DefaultExperiment startTime=\"0\" stopTime=\"%.17g\" stepSize=\"%.17g\"/>\n", p->t_end, p->step);
    put(&b, "  <ModelVariables>\n");
    for (int v = 0; v < p->n_vars; ++v) {
        const hymo_fmu_var *var = &p->vars[v];
        put(&b, "    <!-- index %d -->\n    <ScalarVariable name=\"", v + 1);
        put_escaped(&b, var->name);
        put(&b, "\" valueReference=\"%d\"", v);
        if (var->description[0]) {
            put(&b, " description=\"");
            put_escaped(&b, var->description);
            put(&b, "\"");
        }
        const int str = var->type == HYMO_VAR_STRING;
        put(&b, " causality=\"%s\" variability=\"%s\"", causality_name[var->causality], str ? "discrete" : "continuous");
        if (var->causality != HYMO_FMU_INPUT) put(&b, " initial=\"calculated\"");
        put(&b, ">\n      <%s", str ? "String" : "Real");
        if (var->causality == HYMO_FMU_INPUT) put(&b, " start=\"%.17g\"", var->start);
        if (var->causality == HYMO_FMU_INPUT && var->nonnegative) put(&b, " min=\"0\"");
        if (var->unit) {
            put(&b, " unit=\"");
            put_escaped(&b, var->unit);
            put(&b, "\"");
        }
        put(&b, "/>\n    </ScalarVariable>\n");
    }
    put(&b, "  </ModelVariables>\n  <ModelStructure>\n    <Outputs>\n");
    for (int v = 0; v < p->n_vars; ++v)
        if (p->vars[v].causality == HYMO_FMU_OUTPUT) put(&b, "      <Unknown index=\"%d\" dependencies=\"\"/>\n", v + 1);
    put(&b, "    </Outputs>\n    <InitialUnknowns>\n");
    for (int v = 0; v < p->n_vars; ++v)
        if (p->vars[v].causality == HYMO_FMU_OUTPUT) put(&b, "      <Unknown index=\"%d\" dependencies=\"\"/>\n", v + 1);
    put(&b, "    </InitialUnknowns>\n  </ModelStructure>\n</fmiModelDescription>\n");
    if (b.bad) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
