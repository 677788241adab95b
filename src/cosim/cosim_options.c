/* Co-simulation options (hymo/cosim.h): defaults, checks, and the names
 * of the schemes, couplings, approximations and integrators with their
 * parsers; one option given by its command-line name and value
 * (hymo_cosim_option: hymo cosim, hymo sweep, the co-simulation FMUs). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cosim_internal.h"
#include "cosim_tables.h"
#include "number.h"
#include "hymo/cosim.h"
#include "hymo/subsystem.h" /* hymo_steps_per_communication */

/* ---------------------------------------------------------------- options */

void hymo_cosim_options_default(hymo_cosim_options *opt, const hymo_model *model)
{
    memset(opt, 0, sizeof *opt);
    opt->scheme = HYMO_SCHEME_JACOBI;
    opt->coupling = HYMO_COUPLING_VELOCITY_PRESSURE;
    opt->approx = HYMO_APPROX_LAGRANGE2;
    opt->hyd_integrator = HYMO_HYD_RK4;
    opt->mech_integrator = HYMO_MECH_TRAPEZOIDAL;
    hymo_run_options_default(&opt->mech, model);
    opt->mech.jacobian = HYMO_JACOBIAN_FAST;
    opt->mech.linear_solver = HYMO_LINSOL_DENSE; /* the mechanics' files record the option's solver */
    opt->H = 1e-3;
    opt->mech.dt = opt->H;
    opt->h_h = 1e-4;
    opt->unstable_energy = 1e6;
    opt->unstable_ratio = 0.1;
    opt->unstable_balance_ratio = 0.5;
    opt->unstable_floor = 1.0;
    opt->max_balance_jump = 0.05;
    opt->balance_window = 1.0;
    opt->mech_inputs = HYMO_MECH_INPUTS_EXTRAPOLATE;
    opt->H_control = HYMO_H_FIXED;
    opt->tol_energy_rel = 1e-2;
    opt->tol_energy_abs = 1e-3;
    opt->iterate_rtol = 1e-6;
    opt->iterate_atol = 1e-12;
    opt->iterate_accel = HYMO_ACCEL_IQN_ILS;
}

hymo_status hymo_cosim_verdict_options_check(const hymo_cosim_options *opt, hymo_error *err)
{
    if (!(opt->unstable_energy > 0.0) || isnan(opt->unstable_energy))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "unstable energy limit %g J must be positive",
                              opt->unstable_energy);
    if (!(opt->unstable_ratio > 0.0) || !isfinite(opt->unstable_ratio))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "unstable ratio %g must be positive and finite (fraction of the actuator work)",
                              opt->unstable_ratio);
    if (!(opt->unstable_balance_ratio > 0.0) || !isfinite(opt->unstable_balance_ratio))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "unstable balance ratio %g must be positive and finite (fraction of the actuator work)",
                              opt->unstable_balance_ratio);
    if (!(opt->unstable_floor > 0.0) || !isfinite(opt->unstable_floor))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "unstable floor %g J must be positive and finite (round-off at rest must not count)",
                              opt->unstable_floor);
    for (int k = 0; k < HYMO_CMP_SIGNALS; ++k)
        if (!(opt->max_rms[k] >= 0.0) || !(opt->max_abs[k] >= 0.0) || isnan(opt->max_rms[k] + opt->max_abs[k]))
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "accuracy threshold of %s must be >= 0 (0: none)",
                                  hymo_compare_signal_name(k));
    if (!(opt->max_residual_energy >= 0.0))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "residual energy threshold %g J must be >= 0 (0: none)",
                              opt->max_residual_energy);
    if (!(opt->max_balance_jump >= 0.0) || !isfinite(opt->max_balance_jump))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "energy-balance burst ratio %g must be >= 0 and finite (0: none)",
                              opt->max_balance_jump);
    if (!(opt->balance_window > 0.0) || !isfinite(opt->balance_window))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "energy-balance burst window %g s must be positive and finite",
                              opt->balance_window);
    return HYMO_OK;
}

hymo_status hymo_cosim_options_check(const hymo_cosim_options *opt, hymo_error *err)
{
    /* the end time against H first, so that the message names H (the
     * mechanics' dt is H unless --hm is given) */
    const int fixed = opt->H_control == HYMO_H_FIXED;
    if (fixed && opt->H > 0.0 && isfinite(opt->H) && opt->mech.t_end >= opt->H && isfinite(opt->mech.t_end) &&
        !hymo_steps_per_communication(opt->mech.t_end, opt->H))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "t_end = %.9g s is not a multiple of H = %.9g s (t_end/H = %.9g): the co-simulation "
                              "would not end at t_end; choose t_end = k H",
                              opt->mech.t_end, opt->H, opt->mech.t_end / opt->H);
    hymo_status st = hymo_run_options_check(&opt->mech, err);
    if (st != HYMO_OK) return st;
    if (!(opt->H > 0.0) || !isfinite(opt->H))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "H = %g: the communication step must be positive", opt->H);
    if (!(opt->h_h > 0.0) || !isfinite(opt->h_h))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "h_h = %g: the hydraulic step must be positive", opt->h_h);
    if (!hymo_steps_per_communication(opt->H, opt->h_h))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "H/h_h = %.9g/%.9g = %.9g is not an integer: the hydraulic steps must fill the "
                              "communication step",
                              opt->H, opt->h_h, opt->H / opt->h_h);
    if (!hymo_steps_per_communication(opt->H, opt->mech.dt))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "H/h_m = %.9g/%.9g = %.9g is not an integer: the mechanical steps must fill the "
                              "communication step",
                              opt->H, opt->mech.dt, opt->H / opt->mech.dt);
    if (opt->H > opt->mech.t_end)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "H = %g is longer than t_end = %g", opt->H, opt->mech.t_end);
    if (fixed && !hymo_steps_per_communication(opt->mech.t_end, opt->H))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "t_end = %.9g s is not a multiple of H = %.9g s (t_end/H = %.9g): the co-simulation "
                              "would not end at t_end",
                              opt->mech.t_end, opt->H, opt->mech.t_end / opt->H);
    st = hymo_cosim_control_check(opt, err);
    if (st != HYMO_OK) return st;
    if (!fixed) { /* the smallest step is the quantum of every H: it holds whole internal steps */
        double hmin, hmax;
        hymo_cosim_control_limits(opt, &hmin, &hmax);
        if (!hymo_steps_per_communication(hmin, opt->h_h) || !hymo_steps_per_communication(hmin, opt->mech.dt))
            return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                  "H_min = %.9g s is not a multiple of h_h = %.9g s and h_m = %.9g s: every "
                                  "communication step is a multiple of H_min and must hold whole internal steps",
                                  hmin, opt->h_h, opt->mech.dt);
    }
    st = hymo_cosim_verdict_options_check(opt, err);
    if (st != HYMO_OK) return st;
    const hymo_cosim_tables tb = hymo_cosim_tables_of(opt); /* a row for every value in range */
    if (!tb.mech_inputs)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "co-simulation option out of range (mech_inputs)");
    if (!tb.scheme || !tb.coupling || !tb.approx || (unsigned)opt->hyd_integrator > HYMO_HYD_TRAPEZOIDAL || !tb.mech)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "co-simulation option out of range");
    if (!fixed && tb.coupling->tlm)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "--H-control energy with the TLM coupling: refused (a TLM bond's residual energy is zero "
                              "by construction, the lines' stored energy closes its balance, so it cannot estimate "
                              "the coupling error; use velocity-force or velocity-pressure)");
    if (opt->iterate_max < 0 || !(opt->iterate_rtol > 0.0) || !isfinite(opt->iterate_rtol) ||
        !(opt->iterate_atol >= 0.0) || !isfinite(opt->iterate_atol) ||
        !strcmp(hymo_iterate_accel_name(opt->iterate_accel), "?"))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "iteration: %d retakes, tolerance %g,%g, acceleration %d (retakes >= 0, rtol > 0, "
                              "atol >= 0)",
                              opt->iterate_max, opt->iterate_rtol, opt->iterate_atol, (int)opt->iterate_accel);
    if (opt->iterate_max > 0 && tb.coupling->tlm)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "--iterate with TLM coupling: not supported (the delay lines decouple the subsystems "
                              "over a step; there is nothing to iterate)");
    if (tb.coupling->tlm && tb.approx->interface_model)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "TLM coupling with the interface model: not supported (the delay lines decouple the "
                              "subsystems; use --extrapolation 0..3 or quadratic for the waves)");
    return HYMO_OK;
}

static const char *const scheme_names[] = {"jacobi", "gauss-seidel-mech-first", "gauss-seidel-hyd-first"};
static const char *const coupling_names[] = {"velocity-force", "velocity-pressure", "tlm"};
static const char *const approx_names[] = {"0", "1", "2", "3", "quadratic", "interface-model"};
static const char *const mech_names[] = {"trapezoidal", "index1"};
static const char *const mech_inputs_names[] = {"extrapolate", "hold"};
static const char *const H_control_names[] = {"fixed", "energy"};
static const char *const verdict_names[] = {"stable", "accurate", "inaccurate", "unstable"};

#define NAME_OF(table, k) ((unsigned)(k) < sizeof table / sizeof table[0] ? table[k] : "?")
const char *hymo_cosim_scheme_name(hymo_cosim_scheme s) { return NAME_OF(scheme_names, s); }
const char *hymo_coupling_name(hymo_coupling_kind c) { return NAME_OF(coupling_names, c); }
const char *hymo_approx_name(hymo_approx_kind a) { return NAME_OF(approx_names, a); }
const char *hymo_mech_integrator_name(hymo_mech_integrator_kind k) { return NAME_OF(mech_names, k); }
const char *hymo_mech_inputs_name(hymo_mech_inputs_kind k) { return NAME_OF(mech_inputs_names, k); }
const char *hymo_cosim_verdict_name(hymo_cosim_verdict v) { return NAME_OF(verdict_names, v); }
const char *hymo_H_control_name(int k) { return NAME_OF(H_control_names, k); }

static int parse_name(const char *s, const char *const *table, int n)
{
    for (int k = 0; k < n; ++k)
        if (strcmp(s, table[k]) == 0) return k;
    return -1;
}
#define PARSE(table, s, out)                                                                       \
    do {                                                                                           \
        int k_ = parse_name((s), (table), (int)(sizeof(table) / sizeof(table)[0]));                 \
        if (k_ < 0) return -1;                                                                     \
        *(out) = k_;                                                                               \
        return 0;                                                                                  \
    } while (0)

int hymo_cosim_scheme_parse(const char *s, hymo_cosim_scheme *out)
{
    if (strcmp(s, "gauss-seidel") == 0) s = "gauss-seidel-mech-first";
    PARSE(scheme_names, s, out);
}
int hymo_coupling_parse(const char *s, hymo_coupling_kind *out) { PARSE(coupling_names, s, out); }
int hymo_approx_parse(const char *s, hymo_approx_kind *out)
{
    if (strcmp(s, "im") == 0) s = "interface-model";
    PARSE(approx_names, s, out);
}
int hymo_mech_inputs_parse(const char *s, hymo_mech_inputs_kind *out) { PARSE(mech_inputs_names, s, out); }
int hymo_H_control_parse(const char *s, int *out) { PARSE(H_control_names, s, out); }
int hymo_mech_integrator_parse(const char *s, hymo_mech_integrator_kind *out)
{
    if (strcmp(s, "index-1") == 0 || strcmp(s, "ali1") == 0) s = "index1";
    PARSE(mech_names, s, out);
}

/* ------------------------------------------- options by command-line name */

/* A finite number into *out (0), or -1 with err set. */
static int option_number(const char *name, const char *value, double *out, hymo_error *err)
{
    double v;
    if (!hymo_parse_number(value, HYMO_NUMBER_RANGE, &v)) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: '%s' is not a number", name, value);
        return -1;
    }
    *out = v;
    return 0;
}

/* A positive finite number into *out: 1 (consumed), or -1 with err set. */
static int option_positive(const char *name, const char *value, double *out, hymo_error *err)
{
    double v;
    if (option_number(name, value, &v, err)) return -1;
    if (!(v > 0.0)) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: '%s' must be positive", name, value);
        return -1;
    }
    *out = v;
    return 1;
}

/* A finite value >= 0 (0: the check is off). */
static int option_nonnegative(const char *name, const char *value, double *out, hymo_error *err)
{
    double v;
    if (option_number(name, value, &v, err)) return -1;
    if (!(v >= 0.0) || !isfinite(v)) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: '%s' must be >= 0 and finite (0: not checked)", name, value);
        return -1;
    }
    *out = v;
    return 1;
}

int hymo_cosim_tol_pair_parse(const char *name, const char *value, const char *shape, hymo_cosim_tol_part check,
                              double *rtol, double *atol, hymo_error *err)
{
    const char *comma = strchr(value, ',');
    char buf[64];
    const size_t n = comma ? (size_t)(comma - value) : strlen(value);
    if (n >= sizeof buf) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: '%s' is not %s", name, value, shape);
        return -1;
    }
    memcpy(buf, value, n);
    buf[n] = '\0';
    double r, a = *atol;
    if (check(name, value, buf, 0, &r, err) < 0) return -1;
    if (comma && check(name, value, comma + 1, 1, &a, err) < 0) return -1;
    *rtol = r, *atol = a;
    return 1;
}

/* --iterate-tol's parts: RTOL positive, ATOL >= 0. */
static int iterate_tol_part(const char *name, const char *value, const char *part, int which, double *out,
                            hymo_error *err)
{
    (void)value;
    return which == 0 ? option_positive(name, part, out, err) : option_nonnegative(name, part, out, err);
}

/* SIGNAL=VALUE of --max-rms / --max-abs into limit[signal]: 1, or -1 with
 * err set. */
static int option_threshold(const char *name, const char *value, double *limit, hymo_error *err)
{
    const char *eq = strchr(value, '=');
    char sig[32];
    if (!eq || eq == value || (size_t)(eq - value) >= sizeof sig) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: '%s' is not SIGNAL=VALUE (signals z zd s sd p U force)", name,
                       value);
        return -1;
    }
    memcpy(sig, value, (size_t)(eq - value));
    sig[eq - value] = '\0';
    const int k = hymo_compare_signal_find(sig);
    if (k < 0) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: unknown signal '%s' (z zd s sd p U force)", name, sig);
        return -1;
    }
    double v;
    if (option_number(name, eq + 1, &v, err)) return -1;
    if (!(v > 0.0)) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: '%s' must be positive", name, eq + 1);
        return -1;
    }
    limit[k] = v;
    return 1;
}

int hymo_cosim_option(const char *name, const char *value, hymo_cosim_options *o, hymo_error *err)
{
    int bad = 0;
    if (!strcmp(name, "--max-rms")) return option_threshold(name, value, o->max_rms, err);
    if (!strcmp(name, "--max-abs")) return option_threshold(name, value, o->max_abs, err);
    if (!strcmp(name, "--max-residual-energy")) return option_positive(name, value, &o->max_residual_energy, err);
    if (!strcmp(name, "--max-balance-jump")) return option_nonnegative(name, value, &o->max_balance_jump, err);
    if (!strcmp(name, "--balance-window")) return option_positive(name, value, &o->balance_window, err);
    if (!strcmp(name, "--unstable-ratio")) return option_positive(name, value, &o->unstable_ratio, err);
    if (!strcmp(name, "--unstable-balance-ratio")) return option_positive(name, value, &o->unstable_balance_ratio, err);
    if (!strcmp(name, "--unstable-floor")) return option_positive(name, value, &o->unstable_floor, err);
    if (!strcmp(name, "--unstable-energy")) return option_positive(name, value, &o->unstable_energy, err);
    /* steps and end time: positive (multiples are checked with the options) */
    if (!strcmp(name, "--H")) return option_positive(name, value, &o->H, err);
    if (!strcmp(name, "--hh")) return option_positive(name, value, &o->h_h, err);
    if (!strcmp(name, "--hm")) return option_positive(name, value, &o->mech.dt, err);
    if (!strcmp(name, "--t-end")) return option_positive(name, value, &o->mech.t_end, err);
    if (!strcmp(name, "--iterate")) {
        double v;
        if (option_number(name, value, &v, err)) return -1;
        if (!(v >= 0.0) || v > 1e6 || v != floor(v)) {
            hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: '%s' must be a whole number >= 0 (0: non-iterative)", name,
                           value);
            return -1;
        }
        o->iterate_max = (int)v;
        return 1;
    }
    if (!strcmp(name, "--iterate-tol"))
        return hymo_cosim_tol_pair_parse(name, value, "RTOL[,ATOL]", iterate_tol_part, &o->iterate_rtol,
                                         &o->iterate_atol, err);
    /* communication-step control */
    if (!strcmp(name, "--H-min")) return option_positive(name, value, &o->H_min, err);
    if (!strcmp(name, "--H-max")) return option_positive(name, value, &o->H_max, err);
    if (!strcmp(name, "--output-dt")) return option_positive(name, value, &o->output_dt, err);
    if (!strcmp(name, "--tol-energy")) return hymo_cosim_tol_energy_parse(name, value, o, err);
    if (!strcmp(name, "--H-control"))
        bad = hymo_H_control_parse(value, &o->H_control);
    else if (!strcmp(name, "--iterate-accel"))
        bad = hymo_iterate_accel_parse(value, &o->iterate_accel);
    else if (!strcmp(name, "--mech-inputs"))
        bad = hymo_mech_inputs_parse(value, &o->mech_inputs);
    else if (!strcmp(name, "--scheme"))
        bad = hymo_cosim_scheme_parse(value, &o->scheme);
    else if (!strcmp(name, "--coupling"))
        bad = hymo_coupling_parse(value, &o->coupling);
    else if (!strcmp(name, "--extrapolation"))
        bad = hymo_approx_parse(value, &o->approx);
    else if (!strcmp(name, "--hyd-integrator"))
        bad = hymo_hyd_integrator_parse(value, &o->hyd_integrator);
    else if (!strcmp(name, "--mech-integrator"))
        bad = hymo_mech_integrator_parse(value, &o->mech_integrator);
    else if (!strcmp(name, "--formulation")) {
        if (!strcmp(value, "double-step"))
            o->mech.formulation = HYMO_FORMULATION_DOUBLE_STEP;
        else if (!strcmp(value, "penalty"))
            o->mech.formulation = HYMO_FORMULATION_PENALTY;
        else
            bad = -1;
    } else if (!strcmp(name, "--jacobian")) {
        if (!strcmp(value, "numeric"))
            o->mech.jacobian = HYMO_JACOBIAN_NUMERIC;
        else if (!strcmp(value, "fast"))
            o->mech.jacobian = HYMO_JACOBIAN_FAST;
        else
            bad = -1;
    } else
        return 0;
    if (bad) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: invalid value '%s' (see --help)", name, value);
        return -1;
    }
    return 1;
}
