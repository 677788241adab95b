/* The FMI 2.0 co-simulation functions of a hymo FMU (docs/fmi.md).  Built
 * only into the FMU binary (hymo_fmu, with libhymo's sources compiled
 * -fPIC); every other symbol is hidden by a linker version script.
 *
 * fmi2Instantiate reads resources/model.yaml and resources/options.txt
 * from fmuResourceLocation and builds the part (src/fmu/fmu_part.c).  Inputs
 * are polynomials over the coming communication step: fmi2SetReal sets the
 * value (order 0), fmi2SetRealInputDerivatives the k-th derivative
 * (coefficient derivative / k!, k <= 3); derivatives hold for one fmi2DoStep
 * and are then reset to zero (the value holds until set again).
 * Model-exchange functions and the unsupported ones return fmi2Error with a
 * logged message. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2.h"
#include "fmu_internal.h"
#include "hymo/model.h"

#define EXPORT __attribute__((visibility("default")))
#define T HYMO_POLY_TERMS

typedef enum { ST_INSTANTIATED, ST_INIT, ST_STEP, ST_TERMINATED, ST_ERROR } fmu_phase;

typedef struct {
    char instance[128];
    char resources[4096]; /* the resources directory */
    fmi2CallbackLogger logger;
    fmi2ComponentEnvironment env;
    int logging;
    hymo_fmu_part *part;
    double time;
    double *coef;     /* T per input */
    double *y;        /* outputs at time */
    fmu_phase phase;
} fmu;

typedef struct {
    unsigned magic;
    int n_coef, n_y, n_sub;
    double time;
    double *data; /* coef, y, subsystem state */
} fmu_state;

#define STATE_MAGIC 0x686d6f53u /* "hmoS" */

/* ---- logging ---- */

static void logf_(const fmu *f, fmi2Status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void logf_(const fmu *f, fmi2Status status, const char *fmt, ...)
{
    if (!f || !f->logger) return;
    if (status == fmi2OK && !f->logging) return;
    char msg[1600], esc[3300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* the logger's message is a format: '%' and '#' doubled */
    size_t n = 0;
    for (const char *s = msg; *s && n + 3 < sizeof esc; ++s) {
        if (*s == '%' || *s == '#') esc[n++] = *s;
        esc[n++] = *s;
    }
    esc[n] = '\0';
    f->logger(f->env, f->instance, status, status == fmi2OK ? "logAll" : "logStatusError", esc);
}

#define FMU_NAME(f) ((f)->part ? (f)->part->identifier : (f)->instance)

/* A failed call: fmi2Error, one logged message, and the instance in the FMI
 * 2.0 error state (ST_ERROR). */
static fmi2Status fail(fmu *f, const char *fn, const char *what)
{
    logf_(f, fmi2Error, "hymo FMU %s: %s at t = %.9g s: %s", FMU_NAME(f), fn, f->time, what);
    f->phase = ST_ERROR;
    return fmi2Error;
}

/* A status the FMU does not provide: fmi2Discard, logged; the instance
 * stays in its state (not an error: the master may ask and go on). */
static fmi2Status unsupported_status(fmu *f, const char *fn, const char *what)
{
    logf_(f, fmi2Discard, "hymo FMU %s: %s: %s", FMU_NAME(f), fn, what);
    return fmi2Discard;
}

/* The error state (FMI 2.0 co-simulation state machine) allows the getters
 * (fmi2GetReal/Integer/Boolean/String), the FMUstate functions except
 * fmi2GetFMUstate (a snapshot of a failed step is refused), fmi2Reset,
 * fmi2SetDebugLogging and fmi2FreeInstance.  Every other call is refused
 * here and leaves the instance as it is. */
#define REFUSE_IN_ERROR(f, fn)                                                                                  \
    do {                                                                                                        \
        if ((f)->phase == ST_ERROR) {                                                                           \
            logf_((f), fmi2Error,                                                                               \
                  "hymo FMU %s: %s at t = %.9g s: refused in the error state (an earlier call returned "         \
                  "fmi2Error); only the getters, fmi2SetFMUstate, fmi2Reset and fmi2FreeInstance are allowed", \
                  FMU_NAME(f), (fn), (f)->time);                                                                \
            return fmi2Error;                                                                                   \
        }                                                                                                       \
    } while (0)

/* ---- common functions ---- */

EXPORT const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
EXPORT const char *fmi2GetVersion(void) { return fmi2Version; }

EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                                      const fmi2String categories[])
{
    (void)nCategories, (void)categories;
    fmu *f = c;
    if (!f) return fmi2Error;
    f->logging = loggingOn != fmi2False;
    return fmi2OK;
}

/* file:///a%20b/c, file:/a/c or file://localhost/a/c -> /a b/c; 0 on success */
static int uri_to_path(const char *uri, char *out, size_t cap)
{
    if (!uri) return -1;
    const char *p = uri;
    if (!strncmp(p, "file://localhost/", 17))
        p += 16;
    else if (!strncmp(p, "file:///", 8))
        p += 7;
    else if (!strncmp(p, "file:/", 6))
        p += 5;
    else if (p[0] != '/') /* a plain path is accepted too */
        return -1;
    size_t n = 0;
    for (; *p; ++p) {
        if (n + 1 >= cap) return -1;
        if (p[0] == '%' && p[1] && p[2]) {
            char hex[3] = {p[1], p[2], 0};
            char *end;
            long v = strtol(hex, &end, 16);
            if (*end || v <= 0) return -1;
            out[n++] = (char)v;
            p += 2;
        } else
            out[n++] = *p;
    }
    while (n > 1 && out[n - 1] == '/') --n;
    out[n] = '\0';
    return 0;
}

/* Reads resources/options.txt into argv (pointers into *text); returns argc or -1. */
static int read_options(const char *dir, char **text, char **argv, int cap, char *msg, size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, HYMO_FMU_OPTIONS_FILE);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(msg, len, "cannot read %.900s", path);
        return -1;
    }
    char *buf = malloc(65536);
    size_t n = buf ? fread(buf, 1, 65535, fp) : 0;
    fclose(fp);
    if (!buf) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    buf[n] = '\0';
    int argc = 0;
    for (char *line = buf, *next; *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        else next = line + strlen(line);
        if (!*line) continue;
        char *tab = strchr(line, '\t');
        if (!tab || argc + 2 > cap) {
            snprintf(msg, len, "%.800s: malformed line '%.80s'", path, line);
            free(buf);
            return -1;
        }
        *tab = '\0';
        argv[argc++] = line;
        argv[argc++] = tab + 1;
    }
    *text = buf;
    return argc;
}

/* (Re)builds the part from the resources; 0 on success (logged otherwise). */
static int build(fmu *f, const char *guid)
{
    char *text = NULL, *argv[HYMO_FMU_MAX_OPTIONS * 2], msg[1024], model[4200];
    int argc = read_options(f->resources, &text, argv, HYMO_FMU_MAX_OPTIONS * 2, msg, sizeof msg);
    if (argc < 0) {
        fail(f, "fmi2Instantiate", msg);
        return -1;
    }
    snprintf(model, sizeof model, "%s/%s", f->resources, HYMO_FMU_MODEL_FILE);
    hymo_error err;
    hymo_error_clear(&err);
    hymo_status st = hymo_fmu_part_create(model, argc, argv, &f->part, &err);
    free(text);
    if (st != HYMO_OK) {
        fail(f, "fmi2Instantiate", err.message[0] ? err.message : "invalid option value in resources/options.txt");
        return -1;
    }
    hymo_fmu_part *p = f->part;
    if (guid && strcmp(guid, p->guid)) {
        snprintf(msg, sizeof msg, "GUID %s does not match the FMU's %s", guid, p->guid);
        fail(f, "fmi2Instantiate", msg);
        return -1;
    }
    f->coef = calloc((size_t)T * (size_t)(p->n_inputs + 1), sizeof(double));
    f->y = calloc((size_t)p->n_outputs + 1, sizeof(double));
    if (!f->coef || !f->y) {
        fail(f, "fmi2Instantiate", "out of memory");
        return -1;
    }
    for (int v = 0; v < p->n_vars; ++v)
        if (p->vars[v].causality == HYMO_FMU_INPUT)
            f->coef[T * p->vars[v].index] = p->inputs_default_to_model ? NAN : p->vars[v].start;
    p->sub->ops->get_outputs(p->sub, f->y);
    f->time = 0.0;
    f->phase = ST_INSTANTIATED;
    return 0;
}

static void release(fmu *f)
{
    hymo_fmu_part_free(f->part);
    f->part = NULL;
    free(f->coef);
    free(f->y);
    f->coef = f->y = NULL;
}

EXPORT fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                                     fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                                     fmi2Boolean visible, fmi2Boolean loggingOn)
{
    (void)visible;
    fmu *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    snprintf(f->instance, sizeof f->instance, "%s", instanceName ? instanceName : "");
    if (functions) {
        f->logger = functions->logger;
        f->env = functions->componentEnvironment;
    }
    f->logging = loggingOn != fmi2False;
    if (!instanceName || !instanceName[0]) {
        fail(f, "fmi2Instantiate", "missing instance name");
        free(f);
        return NULL;
    }
    if (fmuType != fmi2CoSimulation) {
        fail(f, "fmi2Instantiate", "model exchange is not supported (a hymo FMU is co-simulation only)");
        free(f);
        return NULL;
    }
    if (uri_to_path(fmuResourceLocation, f->resources, sizeof f->resources)) {
        char msg[512];
        snprintf(msg, sizeof msg, "fmuResourceLocation '%.300s' is not a file:// URI",
                 fmuResourceLocation ? fmuResourceLocation : "(null)");
        fail(f, "fmi2Instantiate", msg);
        free(f);
        return NULL;
    }
    if (build(f, fmuGUID)) {
        release(f);
        free(f);
        return NULL;
    }
    return f;
}

EXPORT void fmi2FreeInstance(fmi2Component c)
{
    fmu *f = c;
    if (!f) return;
    release(f);
    free(f);
}

EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                                      fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    (void)toleranceDefined, (void)tolerance, (void)stopTimeDefined, (void)stopTime;
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2SetupExperiment");
    if (f->phase != ST_INSTANTIATED) return fail(f, "fmi2SetupExperiment", "only after fmi2Instantiate");
    if (startTime != 0.0) {
        char msg[160];
        snprintf(msg, sizeof msg, "start time %.9g s: a hymo FMU starts at t = 0 (its initial state)", startTime);
        return fail(f, "fmi2SetupExperiment", msg);
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2EnterInitializationMode");
    if (f->phase != ST_INSTANTIATED) return fail(f, "fmi2EnterInitializationMode", "only after fmi2Instantiate");
    f->phase = ST_INIT;
    return fmi2OK;
}

EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2ExitInitializationMode");
    if (f->phase != ST_INIT) return fail(f, "fmi2ExitInitializationMode", "not in initialization mode");
    f->phase = ST_STEP;
    return fmi2OK;
}

EXPORT fmi2Status fmi2Terminate(fmi2Component c)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2Terminate");
    f->phase = ST_TERMINATED;
    return fmi2OK;
}

EXPORT fmi2Status fmi2Reset(fmi2Component c)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    release(f);
    if (build(f, NULL)) {
        f->phase = ST_ERROR;
        return fmi2Error;
    }
    return fmi2OK;
}

/* ---- variables ---- */

static const hymo_fmu_var *var_of(fmu *f, fmi2ValueReference vr, const char *fn)
{
    if (!f->part || vr >= (fmi2ValueReference)f->part->n_vars) {
        char msg[96];
        snprintf(msg, sizeof msg, "unknown value reference %u", vr);
        fail(f, fn, msg);
        return NULL;
    }
    return &f->part->vars[vr];
}

/* Current value of input i: the value set (whole: the signal table until set). */
static double input_value(const fmu *f, const hymo_fmu_var *v)
{
    double x = f->coef[T * v->index];
    if (isnan(x)) {
        const hymo_model *model = f->part->model;
        for (int s = 0; s < model->n_signals; ++s)
            if (!strcmp(model->signals[s].name, v->name)) return hymo_signal_eval(&model->signals[s], f->time, +1);
    }
    return x;
}

EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
    fmu *f = c;
    if (!f) return fmi2Error;
    if (!f->part) return fail(f, "fmi2GetReal", "the instance failed (fmi2Reset failed)");
    if (nvr && (!vr || !value)) return fail(f, "fmi2GetReal", "NULL array");
    hymo_subsystem *sub = f->part->sub;
    for (size_t k = 0; k < nvr; ++k) {
        const hymo_fmu_var *v = var_of(f, vr[k], "fmi2GetReal");
        if (!v) return fmi2Error;
        if (v->type != HYMO_VAR_REAL) {
            char msg[256];
            snprintf(msg, sizeof msg, "variable %s (value reference %u) is a String", v->name, vr[k]);
            return fail(f, "fmi2GetReal", msg);
        }
        if (v->causality == HYMO_FMU_INPUT)
            value[k] = input_value(f, v);
        else if (v->causality == HYMO_FMU_OUTPUT)
            value[k] = f->y[v->index];
        else
            sub->ops->get_real(sub, &v->index, 1, &value[k]);
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[])
{
    fmu *f = c;
    if (!f) return fmi2Error;
    if (!f->part) return fail(f, "fmi2GetString", "the instance failed (fmi2Reset failed)");
    if (nvr && (!vr || !value)) return fail(f, "fmi2GetString", "NULL array");
    hymo_subsystem *sub = f->part->sub;
    for (size_t k = 0; k < nvr; ++k) {
        const hymo_fmu_var *v = var_of(f, vr[k], "fmi2GetString");
        if (!v) return fmi2Error;
        const char *s = v->type == HYMO_VAR_STRING ? sub->ops->get_string(sub, v->index) : NULL;
        if (!s) {
            char msg[256];
            snprintf(msg, sizeof msg, "variable %s (value reference %u) is not a String", v->name, vr[k]);
            return fail(f, "fmi2GetString", msg);
        }
        value[k] = s;
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[])
{
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2SetReal");
    if (!f->part) return fail(f, "fmi2SetReal", "the instance failed (fmi2Reset failed)");
    if (nvr && (!vr || !value)) return fail(f, "fmi2SetReal", "NULL array");
    for (size_t k = 0; k < nvr; ++k) {
        const hymo_fmu_var *v = var_of(f, vr[k], "fmi2SetReal");
        if (!v) return fmi2Error;
        char msg[256];
        if (v->causality != HYMO_FMU_INPUT) {
            snprintf(msg, sizeof msg, "variable %s (value reference %u) is not an input (a hymo FMU has no parameters)",
                     v->name, vr[k]);
            return fail(f, "fmi2SetReal", msg);
        }
        if (!isfinite(value[k])) {
            snprintf(msg, sizeof msg, "input %s: value %g is not finite", v->name, value[k]);
            return fail(f, "fmi2SetReal", msg);
        }
        if (v->nonnegative && value[k] < 0.0) {
            char wide[512];
            snprintf(wide, sizeof wide, "input %.160s = %g: a factor on a pump speed or a set flow (min=\"0\") must "
                     "not be negative", v->name, value[k]);
            return fail(f, "fmi2SetReal", wide);
        }
        f->coef[T * v->index] = value[k];
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                              const fmi2Integer order[], const fmi2Real value[])
{
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2SetRealInputDerivatives");
    if (!f->part) return fail(f, "fmi2SetRealInputDerivatives", "the instance failed (fmi2Reset failed)");
    if (nvr && (!vr || !value || !order)) return fail(f, "fmi2SetRealInputDerivatives", "NULL array");
    static const double factorial[T] = {1.0, 1.0, 2.0, 6.0};
    for (size_t k = 0; k < nvr; ++k) {
        const hymo_fmu_var *v = var_of(f, vr[k], "fmi2SetRealInputDerivatives");
        if (!v) return fmi2Error;
        char msg[256];
        if (v->causality != HYMO_FMU_INPUT) {
            snprintf(msg, sizeof msg, "variable %s (value reference %u) is not an input", v->name, vr[k]);
            return fail(f, "fmi2SetRealInputDerivatives", msg);
        }
        if (order[k] < 1 || order[k] >= T) {
            snprintf(msg, sizeof msg, "input %s: derivative order %d (1 .. %d are supported)", v->name, order[k],
                     T - 1);
            return fail(f, "fmi2SetRealInputDerivatives", msg);
        }
        if (!isfinite(value[k])) {
            snprintf(msg, sizeof msg, "input %s: derivative %g is not finite", v->name, value[k]);
            return fail(f, "fmi2SetRealInputDerivatives", msg);
        }
        if (isnan(f->coef[T * v->index])) f->coef[T * v->index] = input_value(f, v); /* whole: from now on driven */
        f->coef[T * v->index + order[k]] = value[k] / factorial[order[k]];
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                               const fmi2Integer order[], fmi2Real value[])
{
    (void)vr, (void)nvr, (void)order, (void)value;
    fmu *f = c;
    if (!f) return fmi2Error;
    return fail(f, "fmi2GetRealOutputDerivatives", "not supported (maxOutputDerivativeOrder = 0)");
}

/* ---- stepping ---- */

EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                             fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2DoStep");
    char msg[HYMO_ERROR_MSG_MAX + 128];
    if (f->phase != ST_STEP) return fail(f, "fmi2DoStep", "not in step mode (call fmi2ExitInitializationMode)");
    hymo_fmu_part *p = f->part;
    const double t = currentCommunicationPoint, H = communicationStepSize;
    if (!(H > 0.0) || !isfinite(H)) {
        snprintf(msg, sizeof msg, "communication step %g s must be positive", H);
        return fail(f, "fmi2DoStep", msg);
    }
    if (!isfinite(t) || fabs(t - f->time) > 1e-9 * fmax(H, p->step)) {
        snprintf(msg, sizeof msg, "communication point %.12g s is not the FMU's time %.12g s", t, f->time);
        return fail(f, "fmi2DoStep", msg);
    }
    hymo_subsystem *sub = p->sub;
    hymo_error err;
    hymo_error_clear(&err);
    sub->ops->set_inputs(sub, t, f->coef);
    hymo_status st = sub->ops->do_step(sub, t, H, &err);
    if (st != HYMO_OK) return fail(f, "fmi2DoStep", err.message);
    f->time = t + H;
    sub->ops->get_outputs(sub, f->y);
    for (int i = 0; i < p->n_outputs; ++i)
        if (!isfinite(f->y[i])) {
            snprintf(msg, sizeof msg, "output %d is not finite after the step to %.9g s", i, f->time);
            return fail(f, "fmi2DoStep", msg);
        }
    for (int i = 0; i < p->n_inputs; ++i) /* derivatives hold for one step */
        for (int k = 1; k < T; ++k) f->coef[T * i + k] = 0.0;
    return fmi2OK;
}

EXPORT fmi2Status fmi2CancelStep(fmi2Component c)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2CancelStep");
    return fail(f, "fmi2CancelStep", "not supported (fmi2DoStep is synchronous)");
}

EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{
    (void)s, (void)value;
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2GetStatus");
    return unsupported_status(f, "fmi2GetStatus", "not supported (fmi2DoStep is synchronous)");
}

EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2GetRealStatus");
    if (s == fmi2LastSuccessfulTime && value) {
        *value = f->time;
        return fmi2OK;
    }
    return unsupported_status(f, "fmi2GetRealStatus", "only fmi2LastSuccessfulTime is supported");
}

EXPORT fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{
    (void)s, (void)value;
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2GetIntegerStatus");
    return unsupported_status(f, "fmi2GetIntegerStatus", "not supported");
}

EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2GetBooleanStatus");
    if (s == fmi2Terminated && value) {
        *value = fmi2False;
        return fmi2OK;
    }
    return unsupported_status(f, "fmi2GetBooleanStatus", "only fmi2Terminated is supported");
}

EXPORT fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
    (void)s, (void)value;
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2GetStringStatus");
    return unsupported_status(f, "fmi2GetStringStatus", "not supported");
}

/* ---- FMU state ---- */

static fmu_state *state_new(fmu *f)
{
    hymo_fmu_part *p = f->part;
    fmu_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->magic = STATE_MAGIC;
    s->n_coef = T * p->n_inputs;
    s->n_y = p->n_outputs;
    s->n_sub = p->sub->ops->state_size(p->sub);
    s->data = calloc((size_t)(s->n_coef + s->n_y + s->n_sub + 1), sizeof(double));
    if (!s->data) {
        free(s);
        return NULL;
    }
    return s;
}

static void state_free(fmu_state *s)
{
    if (!s) return;
    free(s->data);
    free(s);
}

EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, "fmi2GetFMUstate");
    if (!f->part || !FMUstate) return fail(f, "fmi2GetFMUstate", "no instance or no FMUstate pointer");
    hymo_fmu_part *p = f->part;
    fmu_state *s = *FMUstate;
    if (s && (s->magic != STATE_MAGIC || s->n_coef != T * p->n_inputs || s->n_y != p->n_outputs ||
              s->n_sub != p->sub->ops->state_size(p->sub)))
        return fail(f, "fmi2GetFMUstate", "the FMUstate given is not one of this FMU");
    if (!s && !(s = state_new(f))) return fail(f, "fmi2GetFMUstate", "out of memory");
    s->time = f->time;
    memcpy(s->data, f->coef, (size_t)s->n_coef * sizeof(double));
    memcpy(s->data + s->n_coef, f->y, (size_t)s->n_y * sizeof(double));
    p->sub->ops->get_state(p->sub, s->data + s->n_coef + s->n_y);
    *FMUstate = s;
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    fmu_state *s = FMUstate;
    hymo_fmu_part *p = f->part;
    if (!p || !s || s->magic != STATE_MAGIC || s->n_coef != T * p->n_inputs || s->n_y != p->n_outputs ||
        s->n_sub != p->sub->ops->state_size(p->sub))
        return fail(f, "fmi2SetFMUstate", "the FMUstate given is not one of this FMU");
    f->time = s->time;
    memcpy(f->coef, s->data, (size_t)s->n_coef * sizeof(double));
    memcpy(f->y, s->data + s->n_coef, (size_t)s->n_y * sizeof(double));
    p->sub->ops->set_state(p->sub, s->data + s->n_coef + s->n_y);
    if (f->phase == ST_ERROR || f->phase == ST_TERMINATED) f->phase = ST_STEP;
    return fmi2OK;
}

EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    if (FMUstate) {
        state_free(*FMUstate);
        *FMUstate = NULL;
    }
    return fmi2OK;
}

/* serialized: 4 ints (magic, n_coef, n_y, n_sub), time, data */
#define SER_HEADER (4 * sizeof(int) + sizeof(double))

EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    fmu_state *s = FMUstate;
    if (!s || s->magic != STATE_MAGIC || !size) return fail(f, "fmi2SerializedFMUstateSize", "not an FMUstate of hymo");
    *size = SER_HEADER + (size_t)(s->n_coef + s->n_y + s->n_sub) * sizeof(double);
    return fmi2OK;
}

EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[],
                                        size_t size)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    fmu_state *s = FMUstate;
    size_t need = 0;
    if (!s || s->magic != STATE_MAGIC || !serializedState) return fail(f, "fmi2SerializeFMUstate", "not an FMUstate");
    fmi2SerializedFMUstateSize(c, FMUstate, &need);
    if (size < need) return fail(f, "fmi2SerializeFMUstate", "buffer too small");
    int head[4] = {(int)s->magic, s->n_coef, s->n_y, s->n_sub};
    memcpy(serializedState, head, sizeof head);
    memcpy(serializedState + sizeof head, &s->time, sizeof(double));
    memcpy(serializedState + SER_HEADER, s->data, need - SER_HEADER);
    return fmi2OK;
}

EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size,
                                          fmi2FMUstate *FMUstate)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    if (!f->part || !serializedState || !FMUstate || size < SER_HEADER)
        return fail(f, "fmi2DeSerializeFMUstate", "not a serialized FMUstate of this FMU");
    int head[4];
    memcpy(head, serializedState, sizeof head);
    fmu_state *s = state_new(f);
    if (!s) return fail(f, "fmi2DeSerializeFMUstate", "out of memory");
    if ((unsigned)head[0] != STATE_MAGIC || head[1] != s->n_coef || head[2] != s->n_y || head[3] != s->n_sub ||
        size != SER_HEADER + (size_t)(s->n_coef + s->n_y + s->n_sub) * sizeof(double)) {
        state_free(s);
        return fail(f, "fmi2DeSerializeFMUstate", "not a serialized FMUstate of this FMU (sizes differ)");
    }
    memcpy(&s->time, serializedState + sizeof head, sizeof(double));
    memcpy(s->data, serializedState + SER_HEADER, size - SER_HEADER);
    state_free(*FMUstate);
    *FMUstate = s;
    return fmi2OK;
}

/* ---- unsupported: no Integer, Boolean or String inputs, no derivatives ---- */

static fmi2Status no_vars(fmi2Component c, size_t nvr, const char *fn, const char *type, int setter)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    if (setter) REFUSE_IN_ERROR(f, fn);
    if (nvr == 0) return fmi2OK;
    char msg[128];
    snprintf(msg, sizeof msg, "the FMU has no %s variables", type);
    return fail(f, fn, msg);
}

EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[])
{
    (void)vr, (void)value;
    return no_vars(c, nvr, "fmi2GetInteger", "Integer", 0);
}
EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[])
{
    (void)vr, (void)value;
    return no_vars(c, nvr, "fmi2GetBoolean", "Boolean", 0);
}
EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                 const fmi2Integer value[])
{
    (void)vr, (void)value;
    return no_vars(c, nvr, "fmi2SetInteger", "Integer", 1);
}
EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                 const fmi2Boolean value[])
{
    (void)vr, (void)value;
    return no_vars(c, nvr, "fmi2SetBoolean", "Boolean", 1);
}
EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[])
{
    (void)vr, (void)value;
    return no_vars(c, nvr, "fmi2SetString", "String input", 1);
}

EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[],
                                               size_t nUnknown, const fmi2ValueReference vKnown_ref[], size_t nKnown,
                                               const fmi2Real dvKnown[], fmi2Real dvUnknown[])
{
    (void)vUnknown_ref, (void)nUnknown, (void)vKnown_ref, (void)nKnown, (void)dvKnown, (void)dvUnknown;
    fmu *f = c;
    if (!f) return fmi2Error;
    return fail(f, "fmi2GetDirectionalDerivative", "not supported (providesDirectionalDerivative = false)");
}

/* ---- model exchange: not supported ---- */

static fmi2Status me(fmi2Component c, const char *fn)
{
    fmu *f = c;
    if (!f) return fmi2Error;
    REFUSE_IN_ERROR(f, fn);
    return fail(f, fn, "model exchange is not supported (a hymo FMU is co-simulation only)");
}

EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) { return me(c, "fmi2EnterEventMode"); }
EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *fmi2eventInfo)
{
    (void)fmi2eventInfo;
    return me(c, "fmi2NewDiscreteStates");
}
EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { return me(c, "fmi2EnterContinuousTimeMode"); }
EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                              fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation)
{
    (void)noSetFMUStatePriorToCurrentPoint, (void)enterEventMode, (void)terminateSimulation;
    return me(c, "fmi2CompletedIntegratorStep");
}
EXPORT fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
    (void)time;
    return me(c, "fmi2SetTime");
}
EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    (void)x, (void)nx;
    return me(c, "fmi2SetContinuousStates");
}
EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx)
{
    (void)derivatives, (void)nx;
    return me(c, "fmi2GetDerivatives");
}
EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni)
{
    (void)eventIndicators, (void)ni;
    return me(c, "fmi2GetEventIndicators");
}
EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    (void)x, (void)nx;
    return me(c, "fmi2GetContinuousStates");
}
EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx)
{
    (void)x_nominal, (void)nx;
    return me(c, "fmi2GetNominalsOfContinuousStates");
}

/* Every function of the standard is defined above with its standard type
 * (a mismatch fails to compile here). */
#define HYMO_FMI2_CHECK(name) static name##TYPE *const check_##name __attribute__((unused)) = name;
HYMO_FMI2_COMMON_FUNCTIONS(HYMO_FMI2_CHECK)
HYMO_FMI2_ME_FUNCTIONS(HYMO_FMI2_CHECK)
HYMO_FMI2_CS_FUNCTIONS(HYMO_FMI2_CHECK)
