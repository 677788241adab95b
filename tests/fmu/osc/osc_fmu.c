/* One half of a two-mass oscillator as an FMI 2.0 co-simulation FMU,
 * written by hand from the standard (not with hymo's exporter), for the
 * import tests (tests/fmu/osc/, docs/fmi.md "Import").  Built twice:
 * OSC_HALF = 1 is osc_mass1, OSC_HALF = 2 is osc_mass2.
 *
 *     m1 x1'' = -k1 x1 - d1 v1 + F,   F = kc (x2 - x1) + dc (v2 - v1)
 *     m2 x2'' = -k2 x2 - d2 v2 - F
 *
 * osc_mass1: state x1, v1; input F; outputs x1, v1.
 * osc_mass2: state x2, v2; inputs x1, v1; outputs x2, v2 and F (direct
 * feedthrough: F from the inputs' current values).
 * Input start values are 0, which differ from the outputs they are linked
 * to: a master that does not pass connected values during initialization
 * mode starts from an inconsistent F.
 *
 * Value references (modelDescription.xml of each half, written by hand):
 *   osc_mass1: 0 F (input), 1 x1, 2 v1 (outputs), 3 m, 4 k, 5 d, 6 x0, 7 v0, 8 h
 *   osc_mass2: 0 x1, 1 v1 (inputs), 2 x2, 3 v2, 4 F (outputs), 5 m, 6 k, 7 d, 8 x0, 9 v0, 10 h, 11 kc, 12 dc
 * (m, k, d: the half's mass, wall spring and wall damper; x0, v0: initial
 * state; h: largest internal step; kc, dc: the coupling.)
 * Inputs are polynomials over a communication step (fmi2SetReal: value,
 * fmi2SetRealInputDerivatives: derivatives 1..3; canInterpolateInputs).
 * fmi2DoStep(t, H) takes n = ceil(H / h) classical RK4 steps of H / n (any
 * H > 0: canHandleVariableCommunicationStepSize); afterwards each input's
 * value is its polynomial at t + H and its derivatives are 0.
 * FMU states are copies of the instance data (serializable as bytes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2.h"

#if defined(__GNUC__)
#define EXPORT __attribute__((visibility("default")))
#else
#define EXPORT
#endif

#if OSC_HALF == 1
#define GUID "{hymo-test-osc-mass1-1}"
enum { NIN = 1, NOUT = 2, P0 = 3 };
#else
#define GUID "{hymo-test-osc-mass2-1}"
enum { NIN = 2, NOUT = 3, P0 = 5 };
#endif
enum { PM = 0, PK, PD, PX0, PV0, PH, PKC, PDC, NPAR };
enum { NREAL = P0 + (OSC_HALF == 1 ? 6 : 8) };

typedef struct {
    double par[NPAR];
    double u[NIN][4]; /* input polynomial: value and derivatives 1..3 at t0 */
    double x[2];      /* position, velocity */
    double t, t0;
} osc_data;

typedef struct {
    osc_data d;
    fmi2CallbackFunctions cb;
    char name[64];
    int mode; /* 0 instantiated, 1 initialization, 2 step, 3 terminated, 4 error */
} osc;

static const osc_data defaults = {
#if OSC_HALF == 1
    .par = {[PM] = 1.0, [PK] = 100.0, [PD] = 2.0, [PX0] = 0.1, [PV0] = 0.0, [PH] = 1e-4},
#else
    .par = {[PM] = 0.5, [PK] = 50.0, [PD] = 2.0, [PX0] = -0.05, [PV0] = 0.0, [PH] = 1e-4, [PKC] = 3000.0,
            [PDC] = 0.5},
#endif
};

static void logmsg(osc *c, fmi2Status s, const char *msg)
{
    if (c->cb.logger) c->cb.logger(c->cb.componentEnvironment, c->name, s, "logError", "%s", msg);
}

static fmi2Status err(osc *c, const char *msg)
{
    logmsg(c, fmi2Error, msg);
    c->mode = 4;
    return fmi2Error;
}

/* input i at time t */
static double u_at(const osc_data *d, int i, double t)
{
    const double tau = t - d->t0, *u = d->u[i];
    return u[0] + tau * (u[1] + tau * (u[2] / 2.0 + tau * u[3] / 6.0));
}

static void rhs(const osc_data *d, double t, const double *x, double *f)
{
    const double *p = d->par;
    f[0] = x[1];
#if OSC_HALF == 1
    f[1] = (-p[PK] * x[0] - p[PD] * x[1] + u_at(d, 0, t)) / p[PM];
#else
    const double F = p[PKC] * (x[0] - u_at(d, 0, t)) + p[PDC] * (x[1] - u_at(d, 1, t));
    f[1] = (-p[PK] * x[0] - p[PD] * x[1] - F) / p[PM];
#endif
}

/* Real variable vr at the current time */
static double real_of(const osc_data *d, fmi2ValueReference vr)
{
    if (vr < NIN) return u_at(d, (int)vr, d->t);
    if (vr < NIN + 2) return d->x[vr - NIN];
#if OSC_HALF == 2
    if (vr == 4)
        return d->par[PKC] * (d->x[0] - u_at(d, 0, d->t)) + d->par[PDC] * (d->x[1] - u_at(d, 1, d->t));
#endif
    return d->par[vr - P0];
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
    (void)visible, (void)logging, (void)resources;
    if (!cb || !cb->allocateMemory || !cb->freeMemory || type != fmi2CoSimulation || !guid || strcmp(guid, GUID) != 0)
        return NULL;
    osc *c = cb->allocateMemory(1, sizeof *c);
    if (!c) return NULL;
    c->d = defaults;
    memcpy(&c->cb, cb, sizeof *cb);
    snprintf(c->name, sizeof c->name, "%s", name ? name : "");
    return c;
}

EXPORT void fmi2FreeInstance(fmi2Component c)
{
    if (c) ((osc *)c)->cb.freeMemory(c);
}

EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean tolDef, fmi2Real tol, fmi2Real start,
                                      fmi2Boolean stopDef, fmi2Real stop)
{
    (void)tolDef, (void)tol, (void)stopDef, (void)stop;
    osc *o = c;
    if (o->mode != 0) return err(o, "fmi2SetupExperiment: only after fmi2Instantiate");
    o->d.t = o->d.t0 = start;
    return fmi2OK;
}

EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    osc *o = c;
    if (o->mode != 0) return err(o, "fmi2EnterInitializationMode: only after fmi2Instantiate");
    o->mode = 1;
    o->d.x[0] = o->d.par[PX0]; /* the initial state from the parameters set so far */
    o->d.x[1] = o->d.par[PV0];
    return fmi2OK;
}

EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    osc *o = c;
    if (o->mode != 1) return err(o, "fmi2ExitInitializationMode: not in initialization mode");
    o->mode = 2;
    return fmi2OK;
}

EXPORT fmi2Status fmi2Terminate(fmi2Component c)
{
    osc *o = c;
    if (o->mode == 4) return err(o, "fmi2Terminate: refused in the error state");
    o->mode = 3;
    return fmi2OK;
}

EXPORT fmi2Status fmi2Reset(fmi2Component c)
{
    ((osc *)c)->d = defaults;
    ((osc *)c)->mode = 0;
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[])
{
    osc *o = c;
    for (size_t i = 0; i < n; ++i) {
        if (vr[i] >= NREAL) return err(o, "fmi2GetReal: unknown value reference");
        v[i] = real_of(&o->d, vr[i]);
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[])
{
    (void)vr, (void)v;
    return n ? err(c, "fmi2GetInteger: no Integer variables") : fmi2OK;
}

EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[])
{
    (void)vr, (void)v;
    return n ? err(c, "fmi2GetBoolean: no Boolean variables") : fmi2OK;
}

EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[])
{
    (void)vr, (void)v;
    return n ? err(c, "fmi2GetString: no String variables") : fmi2OK;
}

EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[])
{
    osc *o = c;
    if (o->mode == 4) return err(o, "fmi2SetReal: refused in the error state");
    for (size_t i = 0; i < n; ++i) {
        if (vr[i] >= NREAL || (vr[i] >= NIN && vr[i] < P0)) return err(o, "fmi2SetReal: not an input or parameter");
        if (vr[i] >= P0 && o->mode > 1) return err(o, "fmi2SetReal: a parameter is fixed after initialization");
        if (vr[i] < NIN) {
            o->d.u[vr[i]][0] = v[i];
            o->d.t0 = o->d.t;
        } else {
            o->d.par[vr[i] - P0] = v[i];
        }
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[])
{
    (void)vr, (void)v;
    return n ? err(c, "fmi2SetInteger: no Integer variables") : fmi2OK;
}

EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[])
{
    (void)vr, (void)v;
    return n ? err(c, "fmi2SetBoolean: no Boolean variables") : fmi2OK;
}

EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[])
{
    (void)vr, (void)v;
    return n ? err(c, "fmi2SetString: no String variables") : fmi2OK;
}

EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s)
{
    osc *o = c;
    if (!*s) *s = o->cb.allocateMemory(1, sizeof(osc_data));
    if (!*s) return err(o, "fmi2GetFMUstate: out of memory");
    memcpy(*s, &o->d, sizeof(osc_data));
    return fmi2OK;
}

EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s)
{
    osc *o = c;
    if (!s) return err(o, "fmi2SetFMUstate: no state");
    memcpy(&o->d, s, sizeof(osc_data));
    o->mode = 2;
    return fmi2OK;
}

EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s)
{
    if (s && *s) ((osc *)c)->cb.freeMemory(*s);
    if (s) *s = NULL;
    return fmi2OK;
}

EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *size)
{
    (void)c, (void)s;
    *size = sizeof(osc_data);
    return fmi2OK;
}

EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte bytes[], size_t size)
{
    if (size < sizeof(osc_data)) return err(c, "fmi2SerializeFMUstate: buffer too small");
    memcpy(bytes, s, sizeof(osc_data));
    return fmi2OK;
}

EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size, fmi2FMUstate *s)
{
    if (size != sizeof(osc_data)) return err(c, "fmi2DeSerializeFMUstate: not a state of this FMU");
    *s = ((osc *)c)->cb.allocateMemory(1, sizeof(osc_data));
    if (!*s) return err(c, "fmi2DeSerializeFMUstate: out of memory");
    memcpy(*s, bytes, size);
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                               const fmi2ValueReference k[], size_t nk, const fmi2Real dk[],
                                               fmi2Real du[])
{
    (void)u, (void)nu, (void)k, (void)nk, (void)dk, (void)du;
    return err(c, "fmi2GetDirectionalDerivative: not provided");
}

EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                              const fmi2Integer order[], const fmi2Real v[])
{
    osc *o = c;
    for (size_t i = 0; i < n; ++i) {
        if (vr[i] >= NIN || order[i] < 1 || order[i] > 3) return err(o, "fmi2SetRealInputDerivatives: bad input or order");
        o->d.u[vr[i]][order[i]] = v[i];
    }
    return fmi2OK;
}

EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                               const fmi2Integer order[], fmi2Real v[])
{
    (void)vr, (void)order, (void)v;
    return n ? err(c, "fmi2GetRealOutputDerivatives: not provided") : fmi2OK;
}

EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real H, fmi2Boolean noSetPrior)
{
    (void)noSetPrior;
    osc *o = c;
    osc_data *d = &o->d;
    if (o->mode != 2) return err(o, o->mode == 4 ? "fmi2DoStep: refused in the error state" : "fmi2DoStep: not in step mode");
    if (!(H > 0.0) || fabs(t - d->t) > 1e-9 * H) return err(o, "fmi2DoStep: wrong communication point or step");
    const double nh = ceil(H / d->par[PH] - 1e-9);
    const long n = nh < 1.0 ? 1 : (long)nh;
    const double h = H / (double)n;
    double *x = d->x, k1[2], k2[2], k3[2], k4[2], xs[2];
    for (long s = 0; s < n; ++s) {
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
    for (int i = 0; i < NIN; ++i) { /* the inputs at the step's end; derivatives hold for one step */
        d->u[i][0] = u_at(d, i, t + H);
        d->u[i][1] = d->u[i][2] = d->u[i][3] = 0.0;
    }
    d->t = d->t0 = t + H;
    return fmi2OK;
}

EXPORT fmi2Status fmi2CancelStep(fmi2Component c) { return err(c, "fmi2CancelStep: fmi2DoStep is synchronous"); }

EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *v)
{
    (void)c, (void)s, (void)v;
    return fmi2Discard;
}
EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *v)
{
    if (s != fmi2LastSuccessfulTime) return fmi2Discard;
    *v = ((osc *)c)->d.t;
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
