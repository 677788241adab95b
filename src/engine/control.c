/* Controllers and studies (include/hymo/control.h): valve-reference
 * overrides and parameter changes of a running simulation.
 *
 * The overrides live in the run data (sim->control), never in the model,
 * which every run of it shares read-only.  A parameter change gives the
 * simulation a private shallow copy of the model (sim->model points at it)
 * whose valve, throttle, node and cylinder tables are the run's own; the
 * compiled constants and everything else stay shared.  Allocation happens
 * only in these calls, never inside a step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "control_internal.h"
#include "engine.h"
#include "hymo/compare.h"
#include "hymo/control.h"
#include "hymo/cosim.h"
#include "rows.h"    /* HYMO_ROWS_SERIES_MAX */
#include "sensors.h" /* hymo_outputs: the further outputs of a row */

typedef enum { INPUT_SIGNAL = 0, INPUT_VALUE = 1, INPUT_CALLBACK = 2 } input_mode;

/* The inputs, in one index: valves 0..nv-1, then the pumps' speed factors
 * (nv + j), then the flow control valves' set-flow factors (nv + npu + f). */
struct hymo_control {
    int nv, nin;         /* valves; all inputs (nv + pumps + flow control valves) */
    unsigned char *mode; /* nin: input_mode */
    double *value;       /* nin */
    hymo_input_fn *fn;   /* nin */
    void **user;         /* nin */
    int changed;         /* since hymo_sim_take_changed */
    /* parameters: the run's copy of the model (has_copy), its own tables */
    int has_copy;
    hymo_model copy;
    double *circ_consts; /* the run circuit's own parameter constants (hymo_circuit_own_constants) */
};

void hymo_sim_control_free(hymo_sim *sim)
{
    hymo_control *c = sim->control;
    if (!c) return;
    if (c->has_copy) {
        free(c->copy.valves);
        free(c->copy.throttles);
        free(c->copy.nodes);
        free(c->copy.cylinders);
        free(c->copy.pumps);
        free(c->copy.relief_valves);
        free(c->copy.check_valves);
        free(c->copy.flow_controls);
    }
    free(c->circ_consts);
    free(c->mode);
    free(c->value);
    free(c->fn);
    free(c->user);
    free(c);
    sim->control = NULL;
}

static hymo_status control_get(hymo_sim *sim, hymo_control **out, hymo_error *err)
{
    if (!sim->control) {
        const hymo_model *m = sim->model;
        hymo_control *c = calloc(1, sizeof *c);
        if (!c) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (controller overrides)");
        sim->control = c;
        c->nv = m->n_valves;
        c->nin = m->n_valves + m->n_pumps + m->n_flow_controls;
        const size_t n = (size_t)(c->nin > 0 ? c->nin : 1);
        c->mode = calloc(n, 1);
        c->value = calloc(n, sizeof *c->value);
        c->fn = calloc(n, sizeof *c->fn);
        c->user = calloc(n, sizeof *c->user);
        if (!c->mode || !c->value || !c->fn || !c->user) {
            hymo_sim_control_free(sim);
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (controller overrides)");
        }
    }
    *out = sim->control;
    return HYMO_OK;
}

double hymo_sim_valve_ref(const hymo_sim *sim, int v, double t, int side, double dt)
{
    const hymo_control *c = sim->control;
    if (c && c->mode[v] == INPUT_VALUE) return c->value[v];
    if (c && c->mode[v] == INPUT_CALLBACK) return c->fn[v](t, c->user[v]);
    const hymo_signal *sig = &sim->model->signals[sim->model->valves[v].signal];
    return dt > 0.0 ? hymo_signal_eval_snapped(sig, t, side, dt) : hymo_signal_eval(sig, t, side);
}

const hymo_signal *hymo_sim_valve_signal(const hymo_sim *sim, int v)
{
    if (sim->control && sim->control->mode[v] != INPUT_SIGNAL) return NULL;
    return &sim->model->signals[sim->model->valves[v].signal];
}

/* The model signal of flow input j (pump j, then flow control valve
 * j - n_pumps), -1 if it has none. */
static int flow_input_signal(const hymo_model *m, int j)
{
    return j < m->n_pumps ? m->pumps[j].speed_signal : m->flow_controls[j - m->n_pumps].set_flow_signal;
}

/* Flow input j's factor at t: the override, or its signal (as
 * hymo_circuit_inputs evaluates it). */
static double flow_factor(const hymo_sim *sim, int j, double t, int side, double dt)
{
    const hymo_control *c = sim->control;
    const int k = c ? c->nv + j : 0;
    if (c && c->mode[k] == INPUT_VALUE) return c->value[k];
    if (c && c->mode[k] == INPUT_CALLBACK) return c->fn[k](t, c->user[k]);
    const hymo_signal *sig = &sim->model->signals[flow_input_signal(sim->model, j)];
    return dt > 0.0 ? hymo_signal_eval_snapped(sig, t, side, dt) : hymo_signal_eval(sig, t, side);
}

void hymo_sim_flow_inputs(const hymo_sim *sim, double t, int side, double dt, double *in)
{
    const hymo_model *m = sim->model;
    const int npu = m->n_pumps;
    hymo_circuit_inputs(m, t, side, dt, in, in + npu);
    const hymo_control *c = sim->control;
    if (!c) return;
    for (int j = 0; j < npu + m->n_flow_controls; ++j) {
        if (c->mode[c->nv + j] == INPUT_SIGNAL) continue;
        const double f = flow_factor(sim, j, t, side, dt); /* the product as hymo_circuit_inputs forms it */
        in[j] = j < npu ? m->pumps[j].speed * f : m->flow_controls[j - npu].q_set * f;
    }
}

const hymo_signal *hymo_sim_flow_input_signal(const hymo_sim *sim, int j)
{
    const int s = flow_input_signal(sim->model, j);
    if (s < 0 || (sim->control && sim->control->mode[sim->control->nv + j] != INPUT_SIGNAL)) return NULL;
    return &sim->model->signals[s];
}

int hymo_sim_take_changed(hymo_sim *sim)
{
    if (!sim->control || !sim->control->changed) return 0;
    sim->control->changed = 0;
    return 1;
}

/* ---- inputs ---- */

int hymo_signal_drives(const hymo_model *m, int i)
{
    int d = 0;
    for (int v = 0; v < m->n_valves; ++v)
        if (m->valves[v].signal == i) d |= HYMO_DRIVES_VALVE;
    for (int j = 0; j < m->n_pumps + m->n_flow_controls; ++j)
        if (flow_input_signal(m, j) == i) d |= j < m->n_pumps ? HYMO_DRIVES_PUMP : HYMO_DRIVES_FLOW_CONTROL;
    return d;
}

/* Whether signal i drives an input (a valve's reference, a pump's speed or
 * a flow control valve's set flow). */
static int signal_is_input(const hymo_model *m, int i) { return hymo_signal_drives(m, i) != 0; }

static void list_inputs(const hymo_model *model, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
#define ADD(...) (used += (size_t)snprintf(buf + used, len - used, __VA_ARGS__))
    for (int i = 0; i < model->n_signals && used < len; ++i)
        if (signal_is_input(model, i)) ADD("%s%s", used ? ", " : "", model->signals[i].name);
    for (int v = 0; v < model->n_valves && used < len; ++v)
        ADD("%s%s (valve)", used ? ", " : "", model->valves[v].name);
    for (int j = 0; j < model->n_pumps && used < len; ++j)
        if (model->pumps[j].speed_signal >= 0) ADD("%s%s (pump speed)", used ? ", " : "", model->pumps[j].name);
    for (int f = 0; f < model->n_flow_controls && used < len; ++f)
        if (model->flow_controls[f].set_flow_signal >= 0)
            ADD("%s%s (set flow)", used ? ", " : "", model->flow_controls[f].name);
#undef ADD
    if (!used) snprintf(buf, len, "none: the model has no valves and no pump or flow control valve with a signal");
}

/* Marks in sel[] (nv + pumps + flow control valves) the inputs `name`
 * selects; returns their number.  A pump or flow control valve named
 * without a signal of its own is no input: *bare is its index (else -1). */
static int select_inputs(const hymo_model *model, const char *name, unsigned char *sel, int *bare)
{
    int n = 0;
    int signal = -1;
    *bare = -1;
    for (int i = 0; i < model->n_signals; ++i)
        if (strcmp(model->signals[i].name, name) == 0) signal = i;
    const int nv = model->n_valves;
    for (int v = 0; v < nv; ++v) {
        sel[v] = (signal >= 0 && model->valves[v].signal == signal) || strcmp(model->valves[v].name, name) == 0;
        n += sel[v];
    }
    for (int j = 0; j < model->n_pumps + model->n_flow_controls; ++j) {
        const int s = flow_input_signal(model, j);
        const char *el = j < model->n_pumps ? model->pumps[j].name : model->flow_controls[j - model->n_pumps].name;
        const int named = strcmp(el, name) == 0;
        if (named && s < 0) *bare = j;
        sel[nv + j] = s >= 0 && (s == signal || named);
        n += sel[nv + j];
    }
    return n;
}

static hymo_status unknown_input(const hymo_sim *sim, const char *name, int bare, hymo_error *err)
{
    char names[256];
    const hymo_model *m = sim->model;
    list_inputs(m, names, sizeof names);
    if (bare >= 0 && bare < m->n_pumps)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "%s: pump '%s' has no speed_signal: its speed is the constant speed_rpm; to set it at "
                              "run time give the pump `speed_signal: NAME` in the model file (a signal of value 1 "
                              "runs as before until it is set) (inputs: %s)",
                              m->name, name, names);
    if (bare >= 0)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "%s: flow control valve '%s' has no set_flow_signal: its set flow is the constant "
                              "set_flow; to set it at run time give the valve `set_flow_signal: NAME` in the model "
                              "file (a signal of value 1 runs as before until it is set) (inputs: %s)",
                              m->name, name, names);
    return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                          "%s: no input named '%s': not a signal driving a valve, pump speed or set flow, nor a "
                          "valve, or a pump or flow control valve with such a signal (inputs: %s)",
                          m->name, name ? name : "(null)", names);
}

/* The spool rates of the committed state from the references in force now
 * (right limit at sim->state.t). */
static void refresh_spool_rates(hymo_sim *sim)
{
    const hymo_model *model = sim->model;
    for (int v = 0; v < sim->nu; ++v) {
        const hymo_valve *va = &model->valves[v];
        sim->state.ud[va->state] =
            (hymo_sim_valve_ref(sim, v, sim->state.t, +1, 0.0) - sim->state.u[va->state]) / va->tau;
    }
}

static hymo_status set_input(hymo_sim *sim, const char *name, int mode, double value, hymo_input_fn fn, void *user,
                             hymo_error *err)
{
    if (!sim) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "no simulation");
    const hymo_model *model = sim->model;
    hymo_control *c;
    hymo_status st = control_get(sim, &c, err);
    if (st != HYMO_OK) return st;
    unsigned char *sel = calloc((size_t)(c->nin > 0 ? c->nin : 1), 1);
    if (!sel) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (controller overrides)");
    int bare = -1;
    if (!name || select_inputs(model, name, sel, &bare) == 0) {
        free(sel);
        return unknown_input(sim, name, bare, err);
    }
    for (int k = 0; mode == INPUT_VALUE && value < 0.0 && k < c->nin - c->nv; ++k)
        if (sel[c->nv + k]) { /* a factor on a speed or a set flow (as the model loader refuses a negative table) */
            free(sel);
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "input '%s' = %g: it multiplies the %s of %s '%s' and must "
                                  "not be negative", name, value, k < model->n_pumps ? "speed" : "set flow",
                                  k < model->n_pumps ? "pump" : "flow control valve",
                                  k < model->n_pumps ? model->pumps[k].name
                                                     : model->flow_controls[k - model->n_pumps].name);
        }
    for (int k = 0; k < c->nin; ++k) {
        if (!sel[k]) continue;
        const int v = k, j = k - c->nv; /* a valve, or flow input j */
        const double before =
            k < c->nv ? hymo_sim_valve_ref(sim, v, sim->state.t, +1, 0.0) : flow_factor(sim, j, sim->state.t, +1, 0.0);
        const int was = c->mode[k];
        c->mode[k] = (unsigned char)mode;
        c->value[k] = value;
        c->fn[k] = fn;
        c->user[k] = user;
        const double now =
            k < c->nv ? hymo_sim_valve_ref(sim, v, sim->state.t, +1, 0.0) : flow_factor(sim, j, sim->state.t, +1, 0.0);
        if (mode != INPUT_VALUE || was != INPUT_VALUE || now != before) c->changed = 1;
    }
    free(sel);
    refresh_spool_rates(sim);
    return HYMO_OK;
}

hymo_status hymo_sim_set_input(hymo_sim *sim, const char *name, double value, hymo_error *err)
{
    if (!isfinite(value))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "input '%s': value %g is not finite", name ? name : "(null)",
                              value);
    return set_input(sim, name, INPUT_VALUE, value, NULL, NULL, err);
}

hymo_status hymo_sim_set_input_callback(hymo_sim *sim, const char *name, hymo_input_fn fn, void *user,
                                        hymo_error *err)
{
    if (!fn)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "input '%s': no callback function (NULL)",
                              name ? name : "(null)");
    return set_input(sim, name, INPUT_CALLBACK, 0.0, fn, user, err);
}

hymo_status hymo_sim_clear_input(hymo_sim *sim, const char *name, hymo_error *err)
{
    return set_input(sim, name, INPUT_SIGNAL, 0.0, NULL, NULL, err);
}

hymo_status hymo_sim_get_input(const hymo_sim *sim, const char *name, double t, double *value, hymo_error *err)
{
    if (!sim || !value) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "no simulation or no output");
    const hymo_model *model = sim->model;
    int signal = -1, bare = -1;
    for (int i = 0; name && i < model->n_signals; ++i)
        if (strcmp(model->signals[i].name, name) == 0) signal = i;
    for (int v = 0; name && v < model->n_valves; ++v)
        if (model->valves[v].signal == signal || strcmp(model->valves[v].name, name) == 0) {
            *value = hymo_sim_valve_ref(sim, v, t, +1, 0.0);
            return HYMO_OK;
        }
    for (int j = 0; name && j < model->n_pumps + model->n_flow_controls; ++j) {
        const int s = flow_input_signal(model, j);
        const char *el = j < model->n_pumps ? model->pumps[j].name : model->flow_controls[j - model->n_pumps].name;
        const int named = strcmp(el, name) == 0;
        if (s >= 0 && (s == signal || named)) {
            *value = flow_factor(sim, j, t, +1, 0.0);
            return HYMO_OK;
        }
        if (named) bare = j;
    }
    return unknown_input(sim, name, bare, err);
}

/* ---- parameters ---- */

typedef enum { P_POSITIVE, P_NONNEGATIVE, P_FINITE, P_EFFICIENCY } param_check;

typedef struct {
    const char *kind, *field;
    param_check check;
} param_spec;

static const param_spec params[] = {
    {"valve", "tau", P_POSITIVE},
    {"valve", "Cv", P_NONNEGATIVE},
    {"throttle", "Ct", P_NONNEGATIVE},
    {"source", "pressure", P_FINITE},
    {"cylinder", "viscous", P_NONNEGATIVE},
    {"cylinder", "efficiency", P_EFFICIENCY},
    {"cylinder", "friction_velocity", P_POSITIVE},
    {"cylinder", "damper_stiffness", P_NONNEGATIVE},
    {"cylinder", "damper_damping", P_NONNEGATIVE},
    {"fluid", "bulk_modulus", P_POSITIVE},
    {"fluid", "p_transition", P_POSITIVE},
    {"pump", "displacement", P_NONNEGATIVE},
    {"pump", "speed", P_NONNEGATIVE},
    {"pump", "eta_v", P_EFFICIENCY},
    {"pump", "leakage", P_NONNEGATIVE},
    {"relief_valve", "gradient", P_NONNEGATIVE},
    {"relief_valve", "leakage", P_NONNEGATIVE},
    {"check_valve", "Cmax", P_NONNEGATIVE},
    {"check_valve", "leakage", P_NONNEGATIVE},
    {"flow_control", "q_set", P_NONNEGATIVE},
};

#define PARAM_FORMS                                                                                                  \
    "valve.NAME.{tau,Cv}, throttle.NAME.Ct, source.NAME.pressure, "                                                 \
    "cylinder.NAME.{viscous,efficiency,friction_velocity,damper_stiffness,damper_damping}, "                        \
    "fluid.{bulk_modulus,p_transition}, pump.NAME.{displacement,speed,eta_v,leakage}, "                            \
    "relief_valve.NAME.{gradient,leakage}, check_valve.NAME.{Cmax,leakage}, flow_control.NAME.q_set"

/* The address of parameter `name` in `model` (a model whose tables may be
 * written: the run's copy), or NULL with the reason in err. */
static double *param_address(const hymo_model *model, const char *name, const param_spec **spec, hymo_error *err)
{
    if (!name) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "no parameter name (NULL)");
        return NULL;
    }
    const char *dot1 = strchr(name, '.'), *dot2 = strrchr(name, '.');
    if (!dot1) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "parameter '%s': expected kind.name.field, one of " PARAM_FORMS, name);
        return NULL;
    }
    const size_t klen = (size_t)(dot1 - name);
    const char *field = dot2 + 1;
    char item[HYMO_NAME_MAX] = "";
    if (dot2 > dot1) {
        size_t ilen = (size_t)(dot2 - dot1 - 1);
        if (ilen >= sizeof item) ilen = sizeof item - 1;
        memcpy(item, dot1 + 1, ilen);
        item[ilen] = '\0';
    }
    const char *refused = NULL;
    if (klen == 4 && strncmp(name, "body", 4) == 0)
        refused = "masses, inertias and joint geometry are compiled into the model's constants (mass matrices, "
                  "kinematics)";
    else if (strncmp(name, "gravity", 7) == 0)
        refused = "gravity is part of the initial state (static pressures) and of the energy reference";
    else if (klen == 8 && strncmp(name, "cylinder", 8) == 0 &&
             (!strcmp(field, "piston_area") || !strcmp(field, "rod_side_area") || !strcmp(field, "length") ||
              !strcmp(field, "damper_length") || !strcmp(field, "l_pist0") || !strcmp(field, "l_rod0")))
        refused = "cylinder areas and lengths are compiled into the chamber geometry and the event functions";
    else if (!strcmp(field, "p_crack") || !strcmp(field, "p_open") || !strcmp(field, "dp_c"))
        refused = "cracking, opening and compensator pressures are the thresholds of located events (the switching "
                  "times found inside a step)";
    else if ((klen == 6 && strncmp(name, "volume", 6) == 0) || !strcmp(field, "p0") || !strcmp(field, "volume"))
        refused = "volumes and initial pressures are part of the compiled circuit and the initial state";
    if (refused) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "parameter '%s' cannot be changed during a run: %s; change it in the "
                       "model file and load it again (changeable: " PARAM_FORMS ")", name, refused);
        return NULL;
    }
    *spec = NULL;
    for (size_t i = 0; i < sizeof params / sizeof params[0]; ++i)
        if (strlen(params[i].kind) == klen && !strncmp(name, params[i].kind, klen) && !strcmp(field, params[i].field))
            *spec = &params[i];
    if (!*spec) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "unknown parameter '%s' (changeable: " PARAM_FORMS ")", name);
        return NULL;
    }
    const int is_fluid = !strcmp((*spec)->kind, "fluid");
    if (is_fluid ? dot2 != dot1 : dot2 == dot1) {
        hymo_error_set(err, HYMO_ERR_ARGUMENT, "parameter '%s': expected %s", name,
                       is_fluid ? "fluid.FIELD" : "kind.NAME.field");
        return NULL;
    }
    hymo_model *m = (hymo_model *)model; /* only the run's copy is written through the result */
    if (is_fluid) return !strcmp(field, "bulk_modulus") ? &m->fluid.bulk_modulus_oil : &m->fluid.p_transition;
    if (!strcmp((*spec)->kind, "valve")) {
        for (int v = 0; v < m->n_valves; ++v)
            if (!strcmp(m->valves[v].name, item)) return !strcmp(field, "tau") ? &m->valves[v].tau : &m->valves[v].Cv;
    } else if (!strcmp((*spec)->kind, "throttle")) {
        for (int k = 0; k < m->n_throttles; ++k)
            if (!strcmp(m->throttles[k].name, item)) return &m->throttles[k].Ct;
    } else if (!strcmp((*spec)->kind, "pump")) {
        for (int k = 0; k < m->n_pumps; ++k)
            if (!strcmp(m->pumps[k].name, item)) {
                hymo_pump *pu = &m->pumps[k];
                return !strcmp(field, "displacement") ? &pu->displacement
                       : !strcmp(field, "speed")      ? &pu->speed
                       : !strcmp(field, "eta_v")      ? &pu->eta_v
                                                      : &pu->leakage;
            }
    } else if (!strcmp((*spec)->kind, "relief_valve")) {
        for (int k = 0; k < m->n_relief_valves; ++k)
            if (!strcmp(m->relief_valves[k].name, item))
                return !strcmp(field, "gradient") ? &m->relief_valves[k].gradient : &m->relief_valves[k].leakage;
    } else if (!strcmp((*spec)->kind, "check_valve")) {
        for (int k = 0; k < m->n_check_valves; ++k)
            if (!strcmp(m->check_valves[k].name, item))
                return !strcmp(field, "Cmax") ? &m->check_valves[k].Cmax : &m->check_valves[k].leakage;
    } else if (!strcmp((*spec)->kind, "flow_control")) {
        for (int k = 0; k < m->n_flow_controls; ++k)
            if (!strcmp(m->flow_controls[k].name, item)) return &m->flow_controls[k].q_set;
    } else if (!strcmp((*spec)->kind, "source")) {
        for (int k = 0; k < m->n_nodes; ++k)
            if (!strcmp(m->nodes[k].name, item)) {
                if (m->nodes[k].kind == HYMO_NODE_SOURCE) return &m->nodes[k].pressure;
                hymo_error_set(err, HYMO_ERR_ARGUMENT,
                               "parameter '%s': node '%s' is a volume (its pressure is a state), not a source", name,
                               item);
                return NULL;
            }
    } else {
        for (int k = 0; k < m->n_cylinders; ++k)
            if (!strcmp(m->cylinders[k].name, item)) {
                hymo_cylinder *cy = &m->cylinders[k];
                if (!strcmp(field, "viscous")) return &cy->viscous;
                if (!strcmp(field, "efficiency")) return &cy->efficiency;
                if (!strcmp(field, "friction_velocity")) return &cy->friction_velocity;
                if (!cy->has_damper) {
                    hymo_error_set(err, HYMO_ERR_ARGUMENT, "parameter '%s': cylinder '%s' has no end damper", name,
                                   item);
                    return NULL;
                }
                return !strcmp(field, "damper_stiffness") ? &cy->damper_stiffness : &cy->damper_damping;
            }
    }
    hymo_error_set(err, HYMO_ERR_ARGUMENT, "parameter '%s': the model %s has no %s named '%s'", name, model->name,
                   (*spec)->kind, item);
    return NULL;
}

hymo_status hymo_sim_get_parameter(const hymo_sim *sim, const char *name, double *value, hymo_error *err)
{
    if (!sim || !value) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "no simulation or no output");
    const param_spec *spec;
    const double *a = param_address(sim->model, name, &spec, err);
    if (!a) return err ? err->code : HYMO_ERR_ARGUMENT;
    *value = *a;
    return HYMO_OK;
}

/* The run's own copy of the parameter tables (first parameter change). */
static hymo_status own_copy(hymo_sim *sim, hymo_control *c, hymo_error *err)
{
    if (c->has_copy) return HYMO_OK;
    const hymo_model *m = sim->model;
    hymo_model *cp = &c->copy;
    *cp = *m;
    cp->valves = NULL, cp->throttles = NULL, cp->nodes = NULL, cp->cylinders = NULL;
    cp->pumps = NULL, cp->relief_valves = NULL, cp->check_valves = NULL, cp->flow_controls = NULL;
#define DUP(field, n)                                                                                                \
    if ((n) > 0) {                                                                                                   \
        cp->field = malloc((size_t)(n) * sizeof *m->field);                                                          \
        if (!cp->field) goto nomem;                                                                                  \
        memcpy(cp->field, m->field, (size_t)(n) * sizeof *m->field);                                                 \
    }
    DUP(valves, m->n_valves)
    DUP(throttles, m->n_throttles)
    DUP(nodes, m->n_nodes)
    DUP(cylinders, m->n_cylinders)
    DUP(pumps, m->n_pumps)
    DUP(relief_valves, m->n_relief_valves)
    DUP(check_valves, m->n_check_valves)
    DUP(flow_controls, m->n_flow_controls)
#undef DUP
    /* the circuit's constants that follow the parameters: the run's own */
    if (hymo_circuit_own_constants(&sim->eval.circ, cp, &c->circ_consts, NULL) != HYMO_OK) goto nomem;
    c->has_copy = 1;
    sim->model = cp;
    return HYMO_OK;
nomem:
    free(cp->valves), free(cp->throttles), free(cp->nodes), free(cp->cylinders);
    free(cp->pumps), free(cp->relief_valves), free(cp->check_valves), free(cp->flow_controls);
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (parameter tables)");
}

/* The rates of the committed state with the parameters in force now:
 * forces, pressure and spool rates, consistent accelerations, actuator
 * power; the Newton matrix is rebuilt at the next step. */
static hymo_status refresh_rates(hymo_sim *sim, hymo_error *err)
{
    hymo_mb *mb = &sim->mb;
    hymo_kin_positions(&mb->kin, sim->model, mb->z);
    hymo_kin_velocities(&mb->kin, sim->model, mb->zd);
    memcpy(mb->zn, mb->z, (size_t)sim->nz * sizeof(double));
    memcpy(mb->zdn, mb->zd, (size_t)sim->nz * sizeof(double));
    memcpy(sim->eval.pn, sim->state.p, (size_t)sim->np * sizeof(double));
    memcpy(sim->eval.un, sim->state.u, (size_t)sim->nu * sizeof(double));
    /* the circuit sees the references in force from now on (right limit);
     * uref_end is restored so that the next step sees the jump too */
    for (int v = 0; v < sim->nu; ++v) {
        const double keep = sim->inputs.uref_end[v];
        sim->inputs.uref_end[v] = hymo_sim_valve_ref(sim, v, sim->state.t, +1, 0.0);
        sim->inputs.uref_start[v] = keep; /* scratch: uref_start is recomputed at every step start */
    }
    if (sim->inputs.in_end) /* the pump speeds and set flows in force from now on, as the pd below */
        hymo_sim_flow_inputs(sim, sim->state.t, +1, sim->opt.dt, sim->inputs.in_end);
    hymo_status st = hymo_engine_dynamics(sim, sim->state.t, err);
    if (st == HYMO_OK) st = hymo_engine_consistent_accelerations(sim, 0, err);
    if (st == HYMO_OK) {
        memcpy(sim->state.pd, sim->eval.hp, (size_t)sim->np * sizeof(double));
        memcpy(sim->state.ud, sim->eval.hu, (size_t)sim->nu * sizeof(double));
        for (int a = 0; a < sim->na; ++a) sim->record.power[a] = sim->eval.force[a] * sim->act.sd[a];
    }
    for (int v = 0; v < sim->nu; ++v) sim->inputs.uref_end[v] = sim->inputs.uref_start[v];
    sim->jac.jac_valid = 0;
    return st;
}

hymo_status hymo_sim_set_parameter(hymo_sim *sim, const char *name, double value, hymo_error *err)
{
    if (!sim) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "no simulation");
    const param_spec *spec;
    /* the name first, on the shared model (nothing is written through it) */
    if (!param_address(sim->model, name, &spec, err)) return err ? err->code : HYMO_ERR_ARGUMENT;
    int ok = isfinite(value);
    const char *want = "a finite number";
    switch (spec->check) {
    case P_POSITIVE: ok = ok && value > 0.0, want = "> 0"; break;
    case P_NONNEGATIVE: ok = ok && value >= 0.0, want = ">= 0"; break;
    case P_EFFICIENCY: ok = ok && value > 0.0 && value <= 1.0, want = "in (0, 1]"; break;
    case P_FINITE: break;
    }
    if (!ok) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "parameter '%s' = %g: must be %s", name, value, want);
    hymo_control *c;
    hymo_status st = control_get(sim, &c, err);
    if (st == HYMO_OK) st = own_copy(sim, c, err);
    if (st != HYMO_OK) return st;
    double *a = param_address(sim->model, name, &spec, err);
    if (*a == value) return HYMO_OK;
    const double old = *a;
    *a = value;
    hymo_circuit_refresh_constants(&sim->eval.circ, sim->model);
    st = refresh_rates(sim, err);
    if (st != HYMO_OK) { /* keep the run as it was */
        *a = old;
        hymo_circuit_refresh_constants(&sim->eval.circ, sim->model);
        hymo_error e2;
        refresh_rates(sim, &e2);
        return st;
    }
    c->changed = 1;
    return HYMO_OK;
}

size_t hymo_struct_size(const char *name)
{
    static const struct {
        const char *name;
        size_t size;
    } sizes[] = {
        {"hymo_run_options", sizeof(hymo_run_options)},     {"hymo_run_summary", sizeof(hymo_run_summary)},
        {"hymo_cosim_options", sizeof(hymo_cosim_options)}, {"hymo_cosim_summary", sizeof(hymo_cosim_summary)},
        {"hymo_compare_result", sizeof(hymo_compare_result)}, {"hymo_error", sizeof(hymo_error)},
        {"hymo_body", sizeof(hymo_body)},                   {"hymo_signal", sizeof(hymo_signal)},
    };
    for (size_t i = 0; name && i < sizeof sizes / sizeof sizes[0]; ++i)
        if (!strcmp(sizes[i].name, name)) return sizes[i].size;
    return 0;
}

size_t hymo_struct_offset(const char *name, const char *field)
{
#define F(type, member) {#type, #member, offsetof(type, member)}
    static const struct {
        const char *name, *field;
        size_t offset;
    } fields[] = {
        F(hymo_run_options, output_every),   F(hymo_run_summary, event_iterations),
        F(hymo_run_summary, n_volumes_below_zero), F(hymo_cosim_options, mech),
        F(hymo_cosim_options, verbose),      F(hymo_cosim_summary, verdict_reason),
        F(hymo_cosim_summary, errors),       F(hymo_model, gravity),
        F(hymo_model, bodies),               F(hymo_model, signals),
        F(hymo_body, inertia),               F(hymo_signal, v),
        F(hymo_run_options, penalty_alpha_auto),
    };
#undef F
    for (size_t i = 0; name && field && i < sizeof fields / sizeof fields[0]; ++i)
        if (!strcmp(fields[i].name, name) && !strcmp(fields[i].field, field)) return fields[i].offset;
    return (size_t)-1;
}

/* ---- the further outputs at the current state (sensors, flows, references) ---- */

struct hymo_sim_outputs {
    const hymo_model *model; /* the model the series were built for */
    hymo_outputs *outputs;
    int n_values;
};

static hymo_status outputs_build(hymo_sim_outputs *o, const hymo_sim *sim, hymo_error *err)
{
    hymo_outputs_free(o->outputs);
    o->outputs = NULL;
    o->model = sim->model;
    hymo_status st = hymo_outputs_create(&o->outputs, sim->model, err);
    if (st != HYMO_OK) return st;
    o->n_values = 0;
    const hymo_ref_series *sr = hymo_outputs_series(o->outputs);
    for (int k = 0; k < hymo_outputs_n_series(o->outputs); ++k) o->n_values += sr[k].cols;
    return HYMO_OK;
}

hymo_status hymo_sim_outputs_create(const hymo_sim *sim, hymo_sim_outputs **out, hymo_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (simulation outputs)");
    const hymo_status st = outputs_build(*out, sim, err);
    if (st != HYMO_OK) {
        hymo_sim_outputs_free(*out);
        *out = NULL;
    }
    return st;
}

void hymo_sim_outputs_free(hymo_sim_outputs *o)
{
    if (!o) return;
    hymo_outputs_free(o->outputs);
    free(o);
}

int hymo_sim_outputs_count(const hymo_sim_outputs *o) { return hymo_outputs_n_series(o->outputs); }

static const hymo_ref_series *series_at(const hymo_sim_outputs *o, int k)
{
    return k >= 0 && k < hymo_outputs_n_series(o->outputs) ? &hymo_outputs_series(o->outputs)[k] : NULL;
}

const char *hymo_sim_outputs_path(const hymo_sim_outputs *o, int k)
{
    const hymo_ref_series *s = series_at(o, k);
    return s ? s->path : NULL;
}

int hymo_sim_outputs_cols(const hymo_sim_outputs *o, int k)
{
    const hymo_ref_series *s = series_at(o, k);
    return s ? s->cols : 0;
}

const char *hymo_sim_outputs_name(const hymo_sim_outputs *o, int k, int c)
{
    const hymo_ref_series *s = series_at(o, k);
    return s && c >= 0 && c < s->cols ? s->names[c] : NULL;
}

const char *hymo_sim_outputs_units(const hymo_sim_outputs *o, int k)
{
    const hymo_ref_series *s = series_at(o, k);
    return s ? s->units : NULL;
}

int hymo_sim_outputs_n_values(const hymo_sim_outputs *o) { return o->n_values; }

hymo_status hymo_sim_outputs_eval(hymo_sim_outputs *o, const hymo_sim *sim, double *values, hymo_error *err)
{
    if (o->model != sim->model) { /* a parameter change gave the run its own model tables */
        const int n = o->n_values;
        const hymo_status st = outputs_build(o, sim, err);
        if (st != HYMO_OK) return st;
        if (o->n_values != n)
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "simulation outputs: %d values, were %d", o->n_values, n);
    }
    double *row[HYMO_ROWS_SERIES_MAX];
    const int ns = hymo_outputs_n_series(o->outputs);
    const hymo_ref_series *sr = hymo_outputs_series(o->outputs);
    double *at = values;
    for (int k = 0; k < ns && k < HYMO_ROWS_SERIES_MAX; ++k) {
        row[k] = at;
        at += sr[k].cols;
    }
    const hymo_output_state st = {sim->state.t, sim->mb.z,    sim->mb.zd,           sim->mb.zdd,
                                  sim->state.p, sim->state.u, sim->inputs.uref_end, &sim->eval.circ};
    hymo_outputs_eval(o->outputs, &st, row);
    return HYMO_OK;
}
