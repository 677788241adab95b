/* A tiny FMI 2.0 co-simulation FMU for hymo's import tests, written from
 * the standard's function list (src/fmi/fmi2.h): a linear single-input,
 * single-output system
 *     x' = A x + B u,  y = C x + D u,  x in R^2,
 * integrated by the classical RK4 method with step h (parameter), the input
 * between communication points being the polynomial given by fmi2SetReal
 * and fmi2SetRealInputDerivatives (canInterpolateInputs).  The same binary
 * is a first-order lag, a mass or a spring-damper, depending on the
 * parameters that tests/fmu/make_fmus.py writes into modelDescription.xml
 * and the system file sets; the names of its variables are the XML's.
 *
 * Real value references (fixed in this binary):
 *   0 u (input)  1 y (output)  2 x1  3 x2  4 u_end (u at the end of the
 *   last step)  5..8 A (row-major)  9, 10 B  11, 12 C  13 D  14, 15 x0
 *   16 h  17 fail_at (fault switch: fmi2DoStep returns fmi2Error for a step
 *   ending after fail_at when fail_at >= 0)  18 discard_at (the same with
 *   fmi2Discard).
 * Integer 0: steps.  Boolean 0: failed.  String 0: label ("lin_fmu").
 * FMU states are copies of the instance data (serializable as bytes). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2.h"

#if defined(__GNUC__)
#define EXPORT __attribute__((visibility("default")))
#else
#define EXPORT
#endif

enum { NREAL = 19 };
typedef struct {
    double r[NREAL];
    double der[4];     /* u polynomial in tau = t - t0: value and derivatives */
    double t, t0;
    int steps, failed;
} lin_data;

typedef struct {
    lin_data d;
    fmi2CallbackFunctions cb;
    char name[64];
    int init_mode;
} lin;

static const lin_data defaults = {
    .r = {0, 0, 0, 0, 0, /* A */ -1, 0, 0, -1, /* B */ 1, 0, /* C */ 1, 0, /* D */ 0, /* x0 */ 0, 0,
          /* h */ 1e-3, /* fail_at */ -1, /* discard_at */ -1},
};

static void logf_(lin *c, fmi2Status s, const char *fmt, double v)
{
    if (c->cb.logger) c->cb.logger(c->cb.componentEnvironment, c->name, s, "logError", fmt, v);
}

static double u_at(const lin_data *d, double t)
{
    const double tau = t - d->t0;
    return d->der[0] + tau * (d->der[1] + tau * (d->der[2] / 2.0 + tau * d->der[3] / 6.0));
}

static void rhs(const lin_data *d, double t, const double *x, double *f)
{
    const double *A = &d->r[5], *B = &d->r[9], u = u_at(d, t);
    f[0] = A[0] * x[0] + A[1] * x[1] + B[0] * u;
    f[1] = A[2] * x[0] + A[3] * x[1] + B[1] * u;
}

static void outputs(lin_data *d)
{
    d->r[4] = u_at(d, d->t);
    d->r[1] = d->r[11] * d->r[2] + d->r[12] * d->r[3] + d->r[13] * d->r[4];
}

EXPORT const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
EXPORT const char *fmi2GetVersion(void) { return fmi2Version; }
EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[])
{
    (void)c, (void)on, (void)n, (void)cat;
    return fmi2OK;
}

EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                                     const fmi2CallbackFunctions *cb, fmi2Boolean visible, fmi2Boolean logging)
{
    (void)visible, (void)logging;
    if (!cb || !cb->allocateMemory || type != fmi2CoSimulation || !guid || strcmp(guid, "{hymo-lin-fmu-1}") != 0)
        return NULL;
    if (!resources || strncmp(resources, "file://", 7) != 0) return NULL;
    lin *c = cb->allocateMemory(1, sizeof *c);
    if (!c) return NULL;
    c->d = defaults;
    memcpy(&c->cb, cb, sizeof *cb);
    snprintf(c->name, sizeof c->name, "%s", name ? name : "");
    return c;
}

EXPORT void fmi2FreeInstance(fmi2Component c)
{
    if (c) ((lin *)c)->cb.freeMemory(c);
}

EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDef, fmi2Real tol, fmi2Real start,
                                      fmi2Boolean stopDef, fmi2Real stop)
{
    (void)tolDef, (void)tol, (void)stopDef, (void)stop;
    ((lin *)c)->d.t = ((lin *)c)->d.t0 = start;
    return fmi2OK;
}

EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    ((lin *)c)->init_mode = 1;
    return fmi2OK;
}

EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    lin *l = c;
    l->init_mode = 0;
    l->d.r[2] = l->d.r[14];
    l->d.r[3] = l->d.r[15];
    outputs(&l->d);
    return fmi2OK;
}

EXPORT fmi2Status fmi2Terminate(fmi2Component c)
{
    (void)c;
    return fmi2OK;
}

EXPORT fmi2Status fmi2Reset(fmi2Component c)
{
    ((lin *)c)->d = defaults;
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[])
{
    lin *l = c;
    for (size_t i = 0; i < n; ++i) {
        if (vr[i] >= NREAL) return fmi2Error;
        v[i] = l->d.r[vr[i]];
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[])
{
    for (size_t i = 0; i < n; ++i) {
        if (vr[i] != 0) return fmi2Error;
        v[i] = ((lin *)c)->d.steps;
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[])
{
    for (size_t i = 0; i < n; ++i) {
        if (vr[i] != 0) return fmi2Error;
        v[i] = ((lin *)c)->d.failed ? fmi2True : fmi2False;
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[])
{
    (void)c;
    for (size_t i = 0; i < n; ++i) {
        if (vr[i] != 0) return fmi2Error;
        v[i] = "lin_fmu";
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[])
{
    lin *l = c;
    for (size_t i = 0; i < n; ++i) {
        if (vr[i] >= NREAL || vr[i] == 1 || (vr[i] >= 2 && vr[i] <= 4)) {
            logf_(l, fmi2Error, "fmi2SetReal: value reference %g cannot be set", (double)vr[i]);
            return fmi2Error;
        }
        if (vr[i] == 0) {
            l->d.der[0] = v[i];
            l->d.t0 = l->d.t;
        }
        l->d.r[vr[i]] = v[i];
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[])
{
    (void)c, (void)vr, (void)v;
    return n ? fmi2Error : fmi2OK;
}

EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[])
{
    (void)c, (void)vr, (void)v;
    return n ? fmi2Error : fmi2OK;
}

EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[])
{
    (void)c, (void)vr, (void)v;
    return n ? fmi2Error : fmi2OK;
}

EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s)
{
    lin *l = c;
    if (!*s) *s = l->cb.allocateMemory(1, sizeof(lin_data));
    if (!*s) return fmi2Error;
    memcpy(*s, &l->d, sizeof(lin_data));
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s)
{
    if (!s) return fmi2Error;
    memcpy(&((lin *)c)->d, s, sizeof(lin_data));
    return fmi2OK;
}

EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s)
{
    if (s && *s) ((lin *)c)->cb.freeMemory(*s);
    if (s) *s = NULL;
    return fmi2OK;
}

EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *size)
{
    (void)c, (void)s;
    *size = sizeof(lin_data);
    return fmi2OK;
}

EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte bytes[], size_t size)
{
    (void)c;
    if (size != sizeof(lin_data)) return fmi2Error;
    memcpy(bytes, s, size);
    return fmi2OK;
}

EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size, fmi2FMUstate *s)
{
    if (size != sizeof(lin_data)) return fmi2Error;
    *s = ((lin *)c)->cb.allocateMemory(1, sizeof(lin_data));
    if (!*s) return fmi2Error;
    memcpy(*s, bytes, size);
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                               const fmi2ValueReference k[], size_t nk, const fmi2Real dk[],
                                               fmi2Real du[])
{
    (void)c, (void)u, (void)nu, (void)k, (void)nk, (void)dk, (void)du;
    return fmi2Error;
}

EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                              const fmi2Integer order[], const fmi2Real v[])
{
    lin *l = c;
    for (size_t i = 0; i < n; ++i) {
        if (vr[i] != 0 || order[i] < 1 || order[i] > 3) return fmi2Error;
        l->d.der[order[i]] = v[i];
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                               const fmi2Integer order[], fmi2Real v[])
{
    (void)c, (void)vr, (void)order, (void)v;
    return n ? fmi2Error : fmi2OK;
}

EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real H, fmi2Boolean noSetPrior)
{
    (void)noSetPrior;
    lin *l = c;
    lin_data *d = &l->d;
    if (d->r[17] >= 0.0 && t + H > d->r[17]) {
        d->failed = 1;
        logf_(l, fmi2Error, "fault switch: fail_at = %g s", d->r[17]);
        return fmi2Error;
    }
    if (d->r[18] >= 0.0 && t + H > d->r[18]) {
        logf_(l, fmi2Discard, "fault switch: discard_at = %g s", d->r[18]);
        return fmi2Discard;
    }
    const double h = d->r[16], ratio = H / h, nr = floor(ratio + 0.5);
    if (!(h > 0.0) || nr < 1.0 || fabs(ratio - nr) > 1e-9 * ratio) {
        logf_(l, fmi2Error, "H is not a multiple of h = %g", h);
        return fmi2Error;
    }
    d->t0 = t; /* the input polynomial is in tau = time - current communication point */
    double *x = &d->r[2], k1[2], k2[2], k3[2], k4[2], xs[2];
    for (long s = 0; s < (long)nr; ++s) {
        const double ts = t + (double)s * h;
        rhs(d, ts, x, k1);
        for (int i = 0; i < 2; ++i) xs[i] = x[i] + 0.5 * h * k1[i];
        rhs(d, ts + 0.5 * h, xs, k2);
        for (int i = 0; i < 2; ++i) xs[i] = x[i] + 0.5 * h * k2[i];
        rhs(d, ts + 0.5 * h, xs, k3);
        for (int i = 0; i < 2; ++i) xs[i] = x[i] + h * k3[i];
        rhs(d, ts + h, xs, k4);
        for (int i = 0; i < 2; ++i) x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
    d->t = t + H;
    d->steps++;
    outputs(d);
    return fmi2OK;
}

EXPORT fmi2Status fmi2CancelStep(fmi2Component c)
{
    (void)c;
    return fmi2Error;
}

EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v)
{
    (void)c, (void)s, (void)v;
    return fmi2Discard;
}
EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v)
{
    if (s != fmi2LastSuccessfulTime) return fmi2Discard;
    *v = ((lin *)c)->d.t;
    return fmi2OK;
}
EXPORT fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *v)
{
    (void)c, (void)s, (void)v;
    return fmi2Discard;
}
EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *v)
{
    (void)c, (void)s, (void)v;
    return fmi2Discard;
}
EXPORT fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *v)
{
    (void)c, (void)s, (void)v;
    return fmi2Discard;
}

