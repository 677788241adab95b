/* FMU export: the part of a model an FMU holds and its FMI variables
 * (src/fmu/fmu_internal.h, docs/fmi.md "Variables"). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit.h" /* hymo_coupled_actuators, hymo_actuator_name */
#include "control_internal.h" /* hymo_signal_drives: the whole FMU's inputs */
#include "cosim_tables.h"   /* the coupling's and the approximation's rows */
#include "fmu_internal.h"
#include "hymo/reference.h"
#include "number.h"

void hymo_fmu_part_free(hymo_fmu_part *p)
{
    if (!p) return;
    if (p->owns_sub && p->sub) p->sub->ops->destroy(p->sub);
    hymo_split_free(p->split);
    free(p->vars);
    hymo_model_free(p->model);
    free(p);
}

/* ---- options ---- */

/* A run option of `hymo run` for --part whole: 1 consumed, 0 not one, -1 bad value (err set). */
static int run_option(const char *name, const char *value, hymo_run_options *o, hymo_error *err)
{
    double v = 0.0;
    static const char *const numeric[] = {"--dt", "--t-end", "--rtol", "--atol", "--alpha", "--max-iter"};
    for (size_t k = 0; k < sizeof numeric / sizeof numeric[0]; ++k)
        if (!strcmp(name, numeric[k])) {
            if (!hymo_parse_number(value, 0, &v) || !(v > 0.0)) {
                hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: '%s' is not a positive number", name, value);
                return -1;
            }
        }
    if (!strcmp(name, "--dt")) o->dt = v;
    else if (!strcmp(name, "--t-end")) o->t_end = v;
    else if (!strcmp(name, "--rtol")) o->rtol = v;
    else if (!strcmp(name, "--atol")) o->atol = v;
    else if (!strcmp(name, "--alpha")) o->penalty_alpha = v, o->penalty_alpha_auto = 0; /* as given */
    else if (!strcmp(name, "--max-iter")) {
        if (v != floor(v) || v > 1e6) {
            hymo_error_set(err, HYMO_ERR_ARGUMENT, "--max-iter: '%s' is not a whole number in 1 .. 1000000", value);
            return -1;
        }
        o->max_iter = (int)v;
    } else {
        static const struct {
            const char *opt, *val;
            int which, code;
        } names[] = {
            {"--integrator", "trapezoidal", 0, HYMO_INTEGRATOR_TRAPEZOIDAL},
            {"--integrator", "ida", 0, HYMO_INTEGRATOR_IDA},
            {"--formulation", "double-step", 1, HYMO_FORMULATION_DOUBLE_STEP},
            {"--formulation", "penalty", 1, HYMO_FORMULATION_PENALTY},
            {"--jacobian", "numeric", 2, HYMO_JACOBIAN_NUMERIC},
            {"--jacobian", "fast", 2, HYMO_JACOBIAN_FAST},
            {"--linear-solver", "dense", 3, HYMO_LINSOL_DENSE},
            {"--linear-solver", "klu", 3, HYMO_LINSOL_KLU},
            {"--linear-solver", "auto", 3, HYMO_LINSOL_AUTO},
            {"--newton-test", "contractive", 4, HYMO_NEWTON_CONTRACTIVE},
            {"--newton-test", "seed", 4, HYMO_NEWTON_SEED},
        };
        int known = 0;
        for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k) {
            if (strcmp(name, names[k].opt)) continue;
            known = 1;
            if (strcmp(value, names[k].val)) continue;
            switch (names[k].which) {
            case 0: o->integrator = (hymo_integrator_kind)names[k].code; break;
            case 1: o->formulation = (hymo_formulation_kind)names[k].code; break;
            case 2: o->jacobian = (hymo_jacobian_mode)names[k].code; break;
            case 3: o->linear_solver = (hymo_linsol_kind)names[k].code; break;
            default: o->newton_test = (hymo_newton_test_kind)names[k].code; break;
            }
            return 1;
        }
        if (known) {
            hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: invalid value '%s' (see hymo run --help)", name, value);
            return -1;
        }
        return 0;
    }
    return 1;
}

/* ---- naming ---- */

static void make_identifier(char *dst, size_t cap, const char *model, const char *label)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s_%s", model, label);
    size_t n = 0;
    if (!((buf[0] >= 'a' && buf[0] <= 'z') || (buf[0] >= 'A' && buf[0] <= 'Z') || buf[0] == '_'))
        n = (size_t)snprintf(dst, cap, "hymo_");
    for (const char *s = buf; *s && n + 1 < cap; ++s) {
        const char c = *s;
        dst[n++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') ? c : '_';
    }
    dst[n] = '\0';
}

static hymo_fmu_var *add_var(hymo_fmu_part *p, hymo_fmu_causality causality, int index, const char *unit,
                             const char *description, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
static hymo_fmu_var *add_var(hymo_fmu_part *p, hymo_fmu_causality causality, int index, const char *unit,
                             const char *description, const char *fmt, ...)
{
    hymo_fmu_var *v = &p->vars[p->n_vars++];
    memset(v, 0, sizeof *v);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->name, sizeof v->name, fmt, ap);
    va_end(ap);
    snprintf(v->description, sizeof v->description, "%s", description ? description : "");
    v->unit = unit;
    v->causality = causality;
    v->type = HYMO_VAR_REAL;
    v->index = index;
    return v;
}

/* Cylinder of local coupling index i of split subsystem k (per: inputs per
 * cylinder of the mechanics), from the links. */
static int circuit_cylinder(const hymo_split *sp, int k, int i, int per)
{
    for (int l = 0; l < sp->n_links; ++l)
        if (sp->links[l].from == k && sp->links[l].to == 0 && sp->links[l].output == per * i)
            return sp->links[l].input / per;
    return -1;
}

/* The subsystem of split holding `name` (circuit:NAME): its full name,
 * "circuitK", a cylinder of it, or "all"/"hydraulics" with the interface
 * model; -1 if none. */
static int find_circuit(const hymo_split *sp, const hymo_model *model, const char *name, int per, int im)
{
    if (im) /* one hydraulic subsystem for all circuits */
        return !strcmp(name, "all") || !strcmp(name, "hydraulics") || !strcmp(name, sp->subsystems[1]->name) ? 1 : -1;
    for (int k = 1; k < sp->n_subsystems; ++k) {
        const char *sn = sp->subsystems[k]->name, *paren = strchr(sn, '(');
        if (!strcmp(sn, name)) return k;
        if (paren && strlen(name) == (size_t)(paren - sn) && !strncmp(sn, name, strlen(name))) return k;
    }
    for (int c = 0; c < hymo_coupled_actuators(model); ++c) { /* a cylinder's or a motor's name */
        if (strcmp(hymo_actuator_name(model, c), name)) continue;
        for (int l = 0; l < sp->n_links; ++l)
            if (sp->links[l].to == 0 && sp->links[l].from > 0 && sp->links[l].input == per * c)
                return sp->links[l].from;
    }
    return -1;
}

static void list_circuits(const hymo_split *sp, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int k = 1; k < sp->n_subsystems && n < cap; ++k)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", k > 1 ? ", " : "", sp->subsystems[k]->name);
}

/* ---- the split parts ---- */

static hymo_status split_part(hymo_fmu_part *p, const hymo_cosim_options *co, const char *circuit, hymo_error *err)
{
    const hymo_model *model = p->model;
    const hymo_cosim_tables tb = hymo_cosim_tables_of(co);
    if (tb.coupling && tb.coupling->no_fmu) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s", tb.coupling->no_fmu);
    hymo_status st = hymo_split_create(model, co, &p->split, err); /* checks co */
    if (st != HYMO_OK) return st;
    const hymo_split *sp = p->split;
    const int per = tb.coupling->per_actuator;
    const int im = tb.approx->interface_model;
    const int na = hymo_coupled_actuators(model); /* the cylinders, then the motors */
    int k = 0;
    if (circuit) {
        k = find_circuit(sp, model, circuit, per, im);
        if (k < 0) {
            char names[512];
            list_circuits(sp, names, sizeof names);
            return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                  "--part circuit:%s: %s has no such circuit (circuits: %s; also circuitN or a "
                                  "cylinder or motor name%s)",
                                  circuit, model->name, names, im ? ", or all with the interface model" : "");
        }
        snprintf(p->part_name, sizeof p->part_name, "circuit:%s", sp->subsystems[k]->name);
        char label[64];
        const char *sn = sp->subsystems[k]->name, *paren = strchr(sn, '(');
        snprintf(label, sizeof label, "%.*s", im ? 10 : paren ? (int)(paren - sn) : 60, im ? "hydraulics" : sn);
        make_identifier(p->identifier, sizeof p->identifier, model->name, label);
        p->step = co->h_h;
    } else {
        snprintf(p->part_name, sizeof p->part_name, "mechanics");
        make_identifier(p->identifier, sizeof p->identifier, model->name, "mechanics");
        p->step = co->mech.dt;
    }
    hymo_subsystem *sub = p->sub = sp->subsystems[k];
    const int nv = sub->ops->n_variables ? sub->ops->n_variables(sub) : 0;
    p->vars = calloc((size_t)(sub->n_inputs + sub->n_outputs + nv + 1), sizeof *p->vars);
    if (!p->vars) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (FMU variables)");
    /* start values of the inputs: the initial outputs they are linked to */
    double *y0 = NULL;
    int max_out = 1;
    for (int j = 0; j < sp->n_subsystems; ++j)
        if (sp->subsystems[j]->n_outputs > max_out) max_out = sp->subsystems[j]->n_outputs;
    y0 = calloc((size_t)max_out, sizeof *y0);
    if (!y0) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (FMU variables)");
    /* names, units and descriptions of coupled actuator a: a cylinder, or a motor (its joint
     * coordinate, rate, acceleration and torque, its ports a and b) */
#define AN(a) hymo_actuator_name(model, (a))
#define MOT(a) ((a) >= model->n_cylinders)
#define ROT(a) (MOT(a) && model->bodies[model->motors[(a) - model->n_cylinders].joint].joint_type == HYMO_JOINT_REVOLUTE)
    const char *const sq[3] = {"s", "sd", "sdd"}, *const su[2][3] = {{"m", "m/s", "m/s2"}, {"rad", "rad/s", "rad/s2"}};
    const char *const sdsc[2][3] = {{"cylinder length", "cylinder rate", "cylinder acceleration"},
                                    {"motor joint coordinate", "motor joint rate", "motor joint acceleration"}};
    const char *const a0d[2] = {"interface model: cylinder acceleration at zero force",
                                "interface model: motor joint acceleration at zero torque"};
    if (k == 0) {
        for (int a = 0; a < na; ++a)
            for (int r = 0; r < per; ++r) {
                const hymo_coupling_effort *e = &tb.coupling->effort[MOT(a)][r];
                add_var(p, HYMO_FMU_INPUT, per * a + r, e->unit[ROT(a)], e->input_description, "%s.%s", AN(a),
                        e->name);
            }
        for (int q = 0; q < 3; ++q)
            for (int a = 0; a < na; ++a)
                add_var(p, HYMO_FMU_OUTPUT, q * na + a, su[ROT(a)][q], sdsc[MOT(a)][q], "%s.%s", AN(a), sq[q]);
        if (im) {
            for (int a = 0; a < na; ++a)
                for (int b = 0; b < na; ++b)
                    add_var(p, HYMO_FMU_OUTPUT, 3 * na + a * na + b, ROT(a) || ROT(b) ? NULL : "m/(s2.N)",
                            "interface model: inverse effective mass G = M_eff^-1", "G[%s,%s]", AN(a), AN(b));
            for (int a = 0; a < na; ++a)
                add_var(p, HYMO_FMU_OUTPUT, 3 * na + na * na + a, su[ROT(a)][2], a0d[MOT(a)], "%s.a0", AN(a));
        }
    } else {
        const int nc = im ? na : sub->n_outputs / per;
        int *cyl = calloc((size_t)nc + 1, sizeof *cyl);
        if (!cyl) {
            free(y0);
            return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (FMU variables)");
        }
        for (int i = 0; i < nc; ++i) cyl[i] = im ? i : circuit_cylinder(sp, k, i, per);
        for (int i = 0; i < nc; ++i)
            for (int q = 0; q < 2; ++q)
                add_var(p, HYMO_FMU_INPUT, 2 * i + q, su[ROT(cyl[i])][q], sdsc[MOT(cyl[i])][q], "%s.%s", AN(cyl[i]),
                        sq[q]);
        if (im) {
            for (int i = 0; i < nc; ++i)
                for (int j = 0; j < nc; ++j)
                    add_var(p, HYMO_FMU_INPUT, 2 * nc + i * nc + j, ROT(cyl[i]) || ROT(cyl[j]) ? NULL : "m/(s2.N)",
                            "interface model: inverse effective mass G = M_eff^-1", "G[%s,%s]", AN(cyl[i]),
                            AN(cyl[j]));
            for (int i = 0; i < nc; ++i)
                add_var(p, HYMO_FMU_INPUT, 2 * nc + nc * nc + i, su[ROT(cyl[i])][2], a0d[MOT(cyl[i])], "%s.a0",
                        AN(cyl[i]));
        }
        for (int i = 0; i < nc; ++i)
            for (int r = 0; r < per; ++r) {
                const hymo_coupling_effort *e = &tb.coupling->effort[MOT(cyl[i])][r];
                add_var(p, HYMO_FMU_OUTPUT, per * i + r, e->unit[ROT(cyl[i])], e->output_description, "%s.%s",
                        AN(cyl[i]), e->name);
            }
        free(cyl);
    }
#undef AN
#undef MOT
#undef ROT
    /* start values of the inputs: the initial outputs they are linked to (what
     * the split's master gives them for the first step) */
    for (int l = 0; l < sp->n_links; ++l) {
        if (sp->links[l].to != k) continue;
        const hymo_subsystem *src = sp->subsystems[sp->links[l].from];
        src->ops->get_outputs(src, y0);
        for (int v = 0; v < p->n_vars; ++v)
            if (p->vars[v].causality == HYMO_FMU_INPUT && p->vars[v].index == sp->links[l].input)
                p->vars[v].start = y0[sp->links[l].output];
    }
    p->n_inputs = sub->n_inputs;
    p->n_outputs = sub->n_outputs;
    int ni = 0, no = 0;
    for (int v = 0; v < p->n_vars; ++v) {
        ni += p->vars[v].causality == HYMO_FMU_INPUT;
        no += p->vars[v].causality == HYMO_FMU_OUTPUT;
    }
    if (ni != sub->n_inputs || no != sub->n_outputs) {
        free(y0);
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "internal error: %s FMU names %d of %d inputs, %d of %d outputs",
                              p->part_name, ni, sub->n_inputs, no, sub->n_outputs);
    }
    free(y0);
    return HYMO_OK;
}

/* The subsystem's own variables (states, diagnostics, statistics) as locals. */
static void add_locals(hymo_fmu_part *p)
{
    const hymo_subsystem *sub = p->sub;
    const int nv = sub->ops->n_variables ? sub->ops->n_variables(sub) : 0;
    for (int vr = 0; vr < nv; ++vr) {
        const hymo_variable *var = sub->ops->variable(sub, vr);
        if (!var) continue;
        /* a unit is an FMI unit name: none for counts, strings and "m or rad" */
        const char *unit = var->unit && var->unit[0] && strcmp(var->unit, "1") && !strchr(var->unit, ' ') ? var->unit
                                                                                                         : NULL;
        hymo_fmu_var *v = add_var(p, HYMO_FMU_LOCAL, vr, unit, var->description, "%s", var->name);
        v->type = var->type;
    }
}

static hymo_status whole_part(hymo_fmu_part *p, const hymo_run_options *ro, hymo_error *err)
{
    const hymo_model *model = p->model;
    hymo_status st = hymo_fmu_whole_create(model, ro, &p->sub, err);
    if (st != HYMO_OK) return st;
    p->owns_sub = 1;
    p->inputs_default_to_model = 1;
    snprintf(p->part_name, sizeof p->part_name, "whole");
    make_identifier(p->identifier, sizeof p->identifier, model->name, "whole");
    p->step = ro->dt;
    hymo_subsystem *sub = p->sub;
    const int nv = sub->ops->n_variables ? sub->ops->n_variables(sub) : 0;
    p->vars = calloc((size_t)(sub->n_inputs + sub->n_outputs + nv + 1), sizeof *p->vars);
    if (!p->vars) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (FMU variables)");
    /* inputs: the signals that drive a valve's reference (V), a pump's speed
     * factor or a flow control valve's set-flow factor (dimensionless, >= 0),
     * in the model's order (src/fmu/fmu_whole.c) */
    int i = 0;
    for (int s = 0; s < model->n_signals; ++s) {
        const int drives = hymo_signal_drives(model, s);
        if (!drives) continue;
        char desc[160];
        size_t n = 0;
#define DESC(...) (n < sizeof desc ? (n += (size_t)snprintf(desc + n, sizeof desc - n, __VA_ARGS__)) : n)
        if (drives & HYMO_DRIVES_VALVE) {
            DESC("valve reference signal of");
            for (int v = 0; v < model->n_valves; ++v)
                if (model->valves[v].signal == s) DESC(" %s", model->valves[v].name);
        }
        if (drives & HYMO_DRIVES_PUMP) {
            DESC("%sspeed factor of pump", n ? "; " : "");
            for (int j = 0; j < model->n_pumps; ++j)
                if (model->pumps[j].speed_signal == s) DESC(" %s", model->pumps[j].name);
        }
        if (drives & HYMO_DRIVES_FLOW_CONTROL) {
            DESC("%sset-flow factor of flow control valve", n ? "; " : "");
            for (int j = 0; j < model->n_flow_controls; ++j)
                if (model->flow_controls[j].set_flow_signal == s) DESC(" %s", model->flow_controls[j].name);
        }
#undef DESC
        /* a valve reference is in V; a factor has no unit; a signal that drives both has none (its
         * description says what it drives) */
        hymo_fmu_var *var = add_var(p, HYMO_FMU_INPUT, i++, drives == HYMO_DRIVES_VALVE ? "V" : NULL, desc, "%s",
                                    model->signals[s].name);
        var->start = hymo_signal_eval(&model->signals[s], 0.0, +1);
        var->nonnegative = (drives & ~HYMO_DRIVES_VALVE) != 0; /* a factor: the tables' bound (control.h) */
    }
    /* outputs (src/fmu/fmu_whole.c order) */
    int o = 0;
    const char *const zq[2] = {"z", "zd"};
    const char *const zu[2][2] = {{"m", "m/s"}, {"rad", "rad/s"}};
    for (int q = 0; q < 2; ++q)
        for (int j = 0; j < model->n_bodies; ++j)
            add_var(p, HYMO_FMU_OUTPUT, o++, zu[model->bodies[j].joint_type == HYMO_JOINT_REVOLUTE][q],
                    q ? "joint velocity" : "joint coordinate", "%s.%s", model->bodies[j].joint_name, zq[q]);
    const char *const aq[3] = {"s", "sd", "F"}, *const au[3] = {"m", "m/s", "N"};
    const char *const ad[3] = {"cylinder length", "cylinder rate", "cylinder force F_s"};
    /* every actuator of the run (src/fmu/fmu_whole.c): the cylinders, then the motors and the driven
     * joints, named after them, with the joint's units and "joint coordinate" etc. */
    const char *const au_j[2][3] = {{"m", "m/s", "N"}, {"rad", "rad/s", "N.m"}};
    const char *const ad_j[3] = {"joint coordinate", "joint rate", "torque (force) on the joint"};
    const int nc = model->n_cylinders, nm = model->n_motors;
    for (int q = 0; q < 3; ++q)
        for (int a = 0; a < nc + nm + model->n_drivers; ++a) {
            if (a < nc) {
                add_var(p, HYMO_FMU_OUTPUT, o++, au[q], ad[q], "%s.%s", model->cylinders[a].name, aq[q]);
                continue;
            }
            const int joint = a < nc + nm ? model->motors[a - nc].joint : model->drivers[a - nc - nm].joint;
            const char *name = a < nc + nm ? model->motors[a - nc].name : model->drivers[a - nc - nm].name;
            add_var(p, HYMO_FMU_OUTPUT, o++, au_j[model->bodies[joint].joint_type == HYMO_JOINT_REVOLUTE][q], ad_j[q],
                    "%s.%s", name, aq[q]);
        }
    for (int k = 0; k < model->n_volumes; ++k)
        for (int nd = 0; nd < model->n_nodes; ++nd)
            if (model->nodes[nd].kind == HYMO_NODE_VOLUME && model->nodes[nd].state == k)
                add_var(p, HYMO_FMU_OUTPUT, o++, "Pa", "volume pressure", "%s.p", model->nodes[nd].name);
    for (int k = 0; k < model->n_valves; ++k)
        for (int v = 0; v < model->n_valves; ++v)
            if (model->valves[v].state == k)
                add_var(p, HYMO_FMU_OUTPUT, o++, NULL, "spool position", "%s.u", model->valves[v].name);
    p->n_inputs = i;
    p->n_outputs = o;
    if (i != sub->n_inputs || o != sub->n_outputs)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "internal error: whole FMU has %d/%d inputs, %d/%d outputs", i,
                              sub->n_inputs, o, sub->n_outputs);
    return HYMO_OK;
}

hymo_status hymo_fmu_part_create(const char *model_path, int argc, char **argv, hymo_fmu_part **out, hymo_error *err)
{
    *out = NULL;
    hymo_fmu_part *p = calloc(1, sizeof *p);
    if (!p) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    const char *part = NULL, *sets[HYMO_FMU_SET_MAX];
    int n_sets = 0;
    hymo_status st = HYMO_OK;
    size_t used = 0;
    if (argc % 2) {
        st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s needs a value", argv[argc - 1]);
        goto fail;
    }
    for (int i = 0; i < argc; i += 2) {
        if (strchr(argv[i], '\n') || strchr(argv[i], '\t') || strchr(argv[i + 1], '\n') || strchr(argv[i + 1], '\t')) {
            st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: a value with a tab or newline cannot be stored", argv[i]);
            goto fail;
        }
        int n = snprintf(p->options_text + used, sizeof p->options_text - used, "%s\t%s\n", argv[i], argv[i + 1]);
        if (n < 0 || (size_t)n >= sizeof p->options_text - used) {
            st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "too many or too long options for one FMU");
            goto fail;
        }
        used += (size_t)n;
        if (!strcmp(argv[i], "--part")) {
            part = argv[i + 1];
        } else if (!strcmp(argv[i], "--set")) {
            if (n_sets == HYMO_FMU_SET_MAX) {
                st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "--set: more than %d overrides", HYMO_FMU_SET_MAX);
                goto fail;
            }
            sets[n_sets++] = argv[i + 1];
        }
    }
    if (!part) {
        st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "--part mechanics|circuit:NAME|whole is required");
        goto fail;
    }
    p->kind = !strcmp(part, "whole") ? HYMO_FMU_WHOLE : !strcmp(part, "mechanics") ? HYMO_FMU_MECHANICS
                                                                                    : HYMO_FMU_CIRCUIT;
    if (p->kind == HYMO_FMU_CIRCUIT && (strncmp(part, "circuit:", 8) || !part[8])) {
        st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "--part: '%s' is not mechanics, circuit:NAME or whole", part);
        goto fail;
    }
    st = hymo_model_load_file_set(model_path, sets, n_sets, &p->model, err);
    if (st != HYMO_OK) goto fail;
    if (p->kind == HYMO_FMU_WHOLE) {
        hymo_run_options ro;
        hymo_run_options_default(&ro, p->model);
        for (int i = 0; i < argc && st == HYMO_OK; i += 2) {
            if (!strcmp(argv[i], "--part") || !strcmp(argv[i], "--set")) continue;
            int r = run_option(argv[i], argv[i + 1], &ro, err);
            if (r < 0) st = HYMO_ERR_ARGUMENT;
            if (r == 0)
                st = hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                    "%s is not an option of --part whole (those of hymo run: --integrator, --dt, "
                                    "--formulation, --jacobian, --linear-solver, --newton-test, --rtol, --atol, "
                                    "--alpha, --max-iter, --t-end)",
                                    argv[i]);
        }
        if (st == HYMO_OK) st = hymo_run_options_check(&ro, err);
        if (st == HYMO_OK) st = whole_part(p, &ro, err);
        p->t_end = ro.t_end;
    } else {
        hymo_cosim_options co;
        hymo_cosim_options_default(&co, p->model);
        int hm_given = 0, t_end_given = 0;
        for (int i = 0; i < argc && st == HYMO_OK; i += 2) {
            if (!strcmp(argv[i], "--part") || !strcmp(argv[i], "--set")) continue;
            if (!strcmp(argv[i], "--t-end")) t_end_given = 1;
            int r = hymo_cosim_option(argv[i], argv[i + 1], &co, err);
            if (r < 0) st = HYMO_ERR_ARGUMENT;
            if (r == 0)
                st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s is not a co-simulation option (see hymo cosim --help)",
                                    argv[i]);
            if (!strcmp(argv[i], "--hm")) hm_given = 1;
        }
        if (!hm_given) co.mech.dt = co.H;
        /* the master decides when to stop: the model's t_end only has to be a
         * multiple of H for the options' check (and of h_m for the mechanics'
         * last step), so it is rounded up to one unless given */
        if (!t_end_given && co.H > 0.0 && isfinite(co.H) && co.mech.t_end > 0.0 &&
            !hymo_steps_per_communication(co.mech.t_end, co.H))
            co.mech.t_end = ceil(co.mech.t_end / co.H - 1e-9) * co.H;
        if (st == HYMO_OK)
            st = split_part(p, &co, p->kind == HYMO_FMU_CIRCUIT ? part + 8 : NULL, err);
        p->t_end = co.mech.t_end;
    }
    if (st != HYMO_OK) goto fail;
    add_locals(p);
    /* guid: physics hash, part and options */
    {
        char text[8192], hex[65];
        int n = snprintf(text, sizeof text, "%s\n%s\n%s", p->model->physics_sha256, p->part_name, p->options_text);
        hymo_sha256_hex(text, (size_t)(n < (int)sizeof text ? n : (int)sizeof text - 1), hex);
        snprintf(p->guid, sizeof p->guid, "{%.8s-%.4s-%.4s-%.4s-%.12s}", hex, hex + 8, hex + 12, hex + 16, hex + 20);
    }
    *out = p;
    return HYMO_OK;
fail:
    hymo_fmu_part_free(p);
    return st;
}
