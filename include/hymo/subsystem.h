/* hymo — co-simulation subsystem interface (FMI 2.0 co-simulation
 * semantics, SPEC §7).
 *
 * A subsystem has n_inputs real inputs and n_outputs real outputs.  The
 * master sets each input as a polynomial in tau = t - t0 over the coming
 * communication step (like fmi2SetRealInputDerivatives: value and
 * derivatives at t0, the subsystem's current time), asks for a step of
 * size H (fmi2DoStep), and reads the outputs at the end of the step
 * (fmi2GetReal).  get_state/set_state (fmi2GetFMUstate/SetFMUstate) allow
 * a retried step.  Everything else a subsystem offers -- its states,
 * diagnostics and statistics -- is a list of named variables read by value
 * reference (fmi2GetReal, fmi2GetString), so that a master or a recorder
 * never needs the implementation.  The mechanical and hydraulic subsystems
 * of split mode (hymo/cosim.h) and the linear test systems (hymo/linear.h)
 * implement it; an external FMU wrapper plugs into the same master. */
#ifndef HYMO_SUBSYSTEM_H
#define HYMO_SUBSYSTEM_H

#include <math.h>

#include "hymo/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HYMO_POLY_TERMS 4 /* input polynomials up to degree 3 */

typedef struct hymo_subsystem hymo_subsystem;

/* Internal steps of size h in a communication step H: H/h if that is an
 * integer to 1e-9 relative (round-off in H or h is accepted), else 0 (also
 * for non-positive or non-finite H, h). */
static inline long hymo_steps_per_communication(double H, double h)
{
    if (!(H > 0.0) || !(h > 0.0) || !isfinite(H) || !isfinite(h)) return 0;
    const double ratio = H / h, n = floor(ratio + 0.5);
    return n >= 1.0 && n <= 1e9 && fabs(ratio - n) <= 1e-9 * ratio ? (long)n : 0;
}

/* Value at tau = t - t0 of one input polynomial (HYMO_POLY_TERMS
 * coefficients, lowest degree first), for implementations of set_inputs. */
static inline double hymo_poly_eval(const double *coef, double tau)
{
    return ((coef[3] * tau + coef[2]) * tau + coef[1]) * tau + coef[0];
}

/* A variable of a subsystem (an FMI 2.0 ScalarVariable); its value
 * reference is its index 0 .. n_variables - 1. */
typedef enum { HYMO_VAR_REAL = 0, HYMO_VAR_STRING = 1 } hymo_var_type;
/* One variable of a subsystem: name, unit, description and type. */
typedef struct {
    const char *name;        /* unique in the subsystem; array elements "z[2]" (0-based) */
    const char *unit;        /* SI unit; "1" for counts and ratios, "" for strings */
    const char *description; /* e.g. the name of the joint, volume or valve */
    hymo_var_type type;
} hymo_variable;

/* Operations of a subsystem implementation (a function table). */
typedef struct {
    const char *kind; /* "mechanical", "hydraulic", ... */
    /* u_i(t) = sum_k coef[HYMO_POLY_TERMS*i + k] (t - t0)^k for t in [t0, t0 + H] */
    void (*set_inputs)(hymo_subsystem *sub, double t0, const double *coef);
    /* advances from t to t + H (several internal steps); non-HYMO_OK on
     * failure (non-convergence, non-finite state), the message names the time */
    hymo_status (*do_step)(hymo_subsystem *sub, double t, double H, hymo_error *err);
    /* outputs at the current time */
    void (*get_outputs)(const hymo_subsystem *sub, double *y);
    /* state snapshot: size in doubles, get, set */
    int (*state_size)(const hymo_subsystem *sub);
    void (*get_state)(const hymo_subsystem *sub, double *buf);
    void (*set_state)(hymo_subsystem *sub, const double *buf);
    void (*destroy)(hymo_subsystem *sub);
    /* Variables (all four NULL: none).  variable(vr) is NULL for vr out of
     * range.  get_real reads the real variables vr[0..n-1] at the current
     * time (fmi2GetReal) without allocating; NAN for a vr out of range or of
     * a string.  get_string (fmi2GetString): valid until the next call on
     * sub; NULL for a vr out of range or of a real. */
    int (*n_variables)(const hymo_subsystem *sub);
    const hymo_variable *(*variable)(const hymo_subsystem *sub, int vr);
    void (*get_real)(const hymo_subsystem *sub, const int *vr, int n, double *values);
    const char *(*get_string)(const hymo_subsystem *sub, int vr);
} hymo_subsystem_ops;

/* A co-simulation subsystem: its operations, name, numbers of inputs and
 * outputs, and the implementation's data; ops->destroy frees it. */
struct hymo_subsystem {
    const hymo_subsystem_ops *ops;
    char name[64];
    int n_inputs, n_outputs;
    void *impl;
};

/* Value reference of sub's variable `name` (exact match), or -1. */
int hymo_subsystem_find_variable(const hymo_subsystem *sub, const char *name);

#ifdef __cplusplus
}
#endif
#endif
