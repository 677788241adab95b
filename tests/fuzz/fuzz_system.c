/* libFuzzer target: co-simulation system files (src/cosim/cosim_system.c,
 * docs/cosimulation.md "System files").  The input is the system file,
 * written to the scratch directory and loaded by hymo_cosim_system_load:
 * YAML, settings, subsystems, connections, stages, power bonds, the model
 * it names and the master.
 *
 * The FMUs it names are stand-ins defined here (this file's
 * hymo_fmu_subsystem_create and friends take the place of
 * src/fmi/fmu_import.c, which fuzz_fmu covers): "lin.fmu" with the
 * variables of tests/fmu/lin_fmu.c, "mech.fmu" / "mech_force.fmu" and
 * "hyd.fmu" with the power-bond variables of docs/fmi.md (cylinder cyl1,
 * motor mot1).  Any other FMU name "cannot open", as a missing file.  The
 * scratch directory also holds "model.yaml", a copy of
 * HYMO_FUZZ_SYSTEM_MODEL, for the system file's `model:`. */
#include "fuzz_common.h"

#include <math.h>

#include "hymo/error.h"
#include "hymo/fmu.h"

#ifndef HYMO_FUZZ_SYSTEM_MODEL
#error "HYMO_FUZZ_SYSTEM_MODEL: the model file a system file may name"
#endif

/* ------------------------------------------------------- stand-in FMUs */

enum { LOCAL, PARAM, INPUT, OUTPUT };

typedef struct {
    const char *name, *desc;
    int causality;
    hymo_var_type type;
} fake_var;

static const fake_var lin_vars[] = {
    {"u", "", INPUT, HYMO_VAR_REAL},      {"y", "", OUTPUT, HYMO_VAR_REAL},    {"x1", "", LOCAL, HYMO_VAR_REAL},
    {"tau", "", PARAM, HYMO_VAR_REAL},    {"k", "", PARAM, HYMO_VAR_REAL},     {"x0", "", PARAM, HYMO_VAR_REAL},
    {"h", "", PARAM, HYMO_VAR_REAL},      {"label", "", LOCAL, HYMO_VAR_STRING}, {NULL, NULL, 0, 0}};
static const fake_var mech_vars[] = {
    {"cyl1.p_piston", "", INPUT, HYMO_VAR_REAL}, {"cyl1.p_rod", "", INPUT, HYMO_VAR_REAL},
    {"mot1.p_a", "", INPUT, HYMO_VAR_REAL},      {"mot1.p_b", "", INPUT, HYMO_VAR_REAL},
    {"cyl1.s", "", OUTPUT, HYMO_VAR_REAL},       {"cyl1.sd", "", OUTPUT, HYMO_VAR_REAL},
    {"cyl1.sdd", "", OUTPUT, HYMO_VAR_REAL},     {"mot1.sd", "", OUTPUT, HYMO_VAR_REAL},
    {"cyl1.A_piston", "", PARAM, HYMO_VAR_REAL}, {"cyl1.A_rod", "", PARAM, HYMO_VAR_REAL},
    {"mot1.D", "", PARAM, HYMO_VAR_REAL},        {"time", "", LOCAL, HYMO_VAR_REAL},
    {"z[0]", "z1", LOCAL, HYMO_VAR_REAL},        {"zd[0]", "z1", LOCAL, HYMO_VAR_REAL},
    {"s[0]", "cyl1", LOCAL, HYMO_VAR_REAL},      {"sd[0]", "cyl1", LOCAL, HYMO_VAR_REAL},
    {"force[0]", "cyl1", LOCAL, HYMO_VAR_REAL},  {"kinetic_energy", "", LOCAL, HYMO_VAR_REAL},
    {"potential_energy", "", LOCAL, HYMO_VAR_REAL}, {"newton_iterations", "", LOCAL, HYMO_VAR_REAL},
    {"residual_norm", "", LOCAL, HYMO_VAR_REAL}, {NULL, NULL, 0, 0}};
static const fake_var mech_force_vars[] = {
    {"cyl1.F", "", INPUT, HYMO_VAR_REAL},         {"cyl1.s", "", OUTPUT, HYMO_VAR_REAL},
    {"cyl1.sd", "", OUTPUT, HYMO_VAR_REAL},       {"kinetic_energy", "", LOCAL, HYMO_VAR_REAL},
    {"time", "", LOCAL, HYMO_VAR_REAL},           {NULL, NULL, 0, 0}};
static const fake_var hyd_vars[] = {
    {"cyl1.s", "", INPUT, HYMO_VAR_REAL},         {"cyl1.sd", "", INPUT, HYMO_VAR_REAL},
    {"mot1.sd", "", INPUT, HYMO_VAR_REAL},        {"cyl1.p_piston", "", OUTPUT, HYMO_VAR_REAL},
    {"cyl1.p_rod", "", OUTPUT, HYMO_VAR_REAL},    {"cyl1.F", "", OUTPUT, HYMO_VAR_REAL},
    {"mot1.p_a", "", OUTPUT, HYMO_VAR_REAL},      {"mot1.p_b", "", OUTPUT, HYMO_VAR_REAL},
    {"sd_input[0]", "cyl1", LOCAL, HYMO_VAR_REAL}, {"sd_input[1]", "mot1", LOCAL, HYMO_VAR_REAL},
    {"p[0]", "V1", LOCAL, HYMO_VAR_REAL},         {"label", "", LOCAL, HYMO_VAR_STRING}, {NULL, NULL, 0, 0}};

typedef struct {
    char dir[8];
    const fake_var *vars;
    int n_var;
    hymo_variable *hv;
    int *in, *out;
    double *u, t;
} fake;

static void f_set_inputs(hymo_subsystem *sub, double t0, const double *coef)
{
    fake *f = sub->impl;
    f->t = t0;
    for (int i = 0; i < sub->n_inputs; ++i) f->u[i] = coef[HYMO_POLY_TERMS * i];
}
static hymo_status f_do_step(hymo_subsystem *sub, double t, double H, hymo_error *err)
{
    (void)err;
    ((fake *)sub->impl)->t = t + H;
    return HYMO_OK;
}
static void f_get_outputs(const hymo_subsystem *sub, double *y)
{
    for (int i = 0; i < sub->n_outputs; ++i) y[i] = 0.0;
}
static int f_state_size(const hymo_subsystem *sub)
{
    (void)sub;
    return 1;
}
static void f_get_state(const hymo_subsystem *sub, double *buf) { buf[0] = ((const fake *)sub->impl)->t; }
static void f_set_state(hymo_subsystem *sub, const double *buf) { ((fake *)sub->impl)->t = buf[0]; }
static void f_destroy(hymo_subsystem *sub)
{
    if (!sub) return;
    fake *f = sub->impl;
    if (f) {
        free(f->hv);
        free(f->in);
        free(f->out);
        free(f->u);
        free(f);
    }
    free(sub);
}
static int f_n_variables(const hymo_subsystem *sub) { return ((const fake *)sub->impl)->n_var; }
static const hymo_variable *f_variable(const hymo_subsystem *sub, int vr)
{
    const fake *f = sub->impl;
    return vr >= 0 && vr < f->n_var ? &f->hv[vr] : NULL;
}
static void f_get_real(const hymo_subsystem *sub, const int *vr, int n, double *values)
{
    const fake *f = sub->impl;
    for (int i = 0; i < n; ++i)
        values[i] = vr[i] >= 0 && vr[i] < f->n_var && f->vars[vr[i]].type == HYMO_VAR_REAL ? 1.0 : NAN;
}
static const char *f_get_string(const hymo_subsystem *sub, int vr)
{
    const fake *f = sub->impl;
    return vr >= 0 && vr < f->n_var && f->vars[vr].type == HYMO_VAR_STRING ? "fake" : NULL;
}

static const hymo_subsystem_ops fake_ops = {
    .kind = "fmu",
    .set_inputs = f_set_inputs,
    .do_step = f_do_step,
    .get_outputs = f_get_outputs,
    .state_size = f_state_size,
    .get_state = f_get_state,
    .set_state = f_set_state,
    .destroy = f_destroy,
    .n_variables = f_n_variables,
    .variable = f_variable,
    .get_real = f_get_real,
    .get_string = f_get_string,
};

hymo_status hymo_fmu_subsystem_create(const char *path, const char *name, double start_time,
                                      const hymo_fmu_parameter *params, int n_params, hymo_subsystem **out,
                                      hymo_error *err)
{
    *out = NULL;
    if (!path || !*path) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "FMU: no path given");
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const fake_var *vars = strcmp(base, "lin.fmu") == 0          ? lin_vars
                           : strcmp(base, "mech.fmu") == 0       ? mech_vars
                           : strcmp(base, "mech_force.fmu") == 0 ? mech_force_vars
                           : strcmp(base, "hyd.fmu") == 0        ? hyd_vars
                                                                 : NULL;
    if (!vars) return hymo_error_set(err, HYMO_ERR_IO, "FMU '%s': cannot open: No such file or directory", path);
    hymo_subsystem *sub = calloc(1, sizeof *sub);
    fake *f = calloc(1, sizeof *f);
    if (!sub || !f) abort();
    sub->ops = &fake_ops;
    sub->impl = f;
    f->vars = vars;
    f->t = start_time;
    while (vars[f->n_var].name) ++f->n_var;
    f->hv = calloc((size_t)f->n_var, sizeof *f->hv);
    f->in = calloc((size_t)f->n_var, sizeof *f->in);
    f->out = calloc((size_t)f->n_var, sizeof *f->out);
    f->u = calloc((size_t)f->n_var, sizeof *f->u);
    if (!f->hv || !f->in || !f->out || !f->u) abort();
    for (int k = 0; k < f->n_var; ++k) {
        f->hv[k] = (hymo_variable){vars[k].name, vars[k].type == HYMO_VAR_STRING ? "" : "1", vars[k].desc,
                                   vars[k].type};
        if (vars[k].causality == INPUT) f->in[sub->n_inputs++] = k;
        if (vars[k].causality == OUTPUT) f->out[sub->n_outputs++] = k;
    }
    snprintf(sub->name, sizeof sub->name, "%s", name && *name ? name : "fake");
    for (int i = 0; i < n_params; ++i) {
        int k = 0;
        while (k < f->n_var && strcmp(vars[k].name, params[i].name) != 0) ++k;
        if (k == f->n_var || (vars[k].causality != PARAM && vars[k].causality != INPUT) ||
            !isfinite(params[i].value)) {
            f_destroy(sub);
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "FMU '%s': cannot set '%s'", path, params[i].name);
        }
    }
    *out = sub;
    return HYMO_OK;
}

/* Stand-ins open in initialization mode and leave it at once (they have no
 * initialization of their own to finish). */
hymo_status hymo_fmu_subsystem_open(const char *path, const char *name, double start_time,
                                    const hymo_fmu_parameter *params, int n_params, hymo_subsystem **out,
                                    hymo_error *err)
{
    return hymo_fmu_subsystem_create(path, name, start_time, params, n_params, out, err);
}

hymo_status hymo_fmu_exit_initialization(hymo_subsystem *sub, hymo_error *err)
{
    (void)sub, (void)err;
    return HYMO_OK;
}

double hymo_fmu_output_nominal(const hymo_subsystem *sub, int i)
{
    return sub && i >= 0 && i < sub->n_outputs ? 1.0 : NAN;
}

int hymo_fmu_input_variable(const hymo_subsystem *sub, int i)
{
    if (!sub || i < 0 || i >= sub->n_inputs) return -1;
    return ((const fake *)sub->impl)->in[i];
}

int hymo_fmu_output_variable(const hymo_subsystem *sub, int i)
{
    if (!sub || i < 0 || i >= sub->n_outputs) return -1;
    return ((const fake *)sub->impl)->out[i];
}

int hymo_fmu_free_input(hymo_subsystem *sub, int i)
{
    if (!sub || i < 0 || i >= sub->n_inputs) return -1;
    fake *f = sub->impl;
    for (int j = i; j + 1 < sub->n_inputs; ++j) f->in[j] = f->in[j + 1];
    --sub->n_inputs;
    return 0;
}

const char *hymo_fmu_directory(const hymo_subsystem *sub)
{
    return sub ? ((const fake *)sub->impl)->dir : NULL;
}

/* ------------------------------------------------------------- target */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    FILE *in = fopen(HYMO_FUZZ_SYSTEM_MODEL, "rb");
    char path[1024], buf[65536];
    snprintf(path, sizeof path, "%s/model.yaml", fz_dir());
    FILE *out = fopen(path, "wb");
    size_t got = in ? fread(buf, 1, sizeof buf, in) : 0;
    if (!in || !out || got == 0 || fwrite(buf, 1, got, out) != got) {
        fprintf(stderr, "fuzz_system: cannot copy %s to %s\n", HYMO_FUZZ_SYSTEM_MODEL, path);
        exit(2);
    }
    fclose(in);
    fclose(out);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[1024];
    if (fz_write("system.yaml", data, size, path, sizeof path) != 0) return 0;
    hymo_cosim_system *sys = NULL;
    hymo_error err;
    if (hymo_cosim_system_load(path, &sys, &err) == HYMO_OK) {
        for (int k = 0; hymo_cosim_system_input(sys, k); ++k) {
        }
        hymo_cosim_system_free(sys);
    }
    return 0;
}
