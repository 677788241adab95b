/* The further per-step outputs (src/engine/sensors.h): sensor points, element
 * flows and powers, valve references. */
#include "sensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "flows.h"
#include "kinematics.h"

enum { SER_POS, SER_VEL, SER_ACC, SER_FLOW, SER_POWER, SER_UREF, SER_KINDS };

static const struct {
    const char *path, *units;
} kinds[SER_KINDS] = {
    [SER_POS] = {"/sensors/position", "m"},
    [SER_VEL] = {"/sensors/velocity", "m/s"},
    [SER_ACC] = {"/sensors/acceleration", "m/s^2"},
    [SER_FLOW] = {"/hydraulics/flow", "m^3/s"},
    [SER_POWER] = {"/hydraulics/power", "W"},
    [SER_UREF] = {"/inputs/U_ref", "V"},
};

struct hymo_outputs {
    const hymo_model *model;
    int n_series;
    hymo_ref_series series[SER_KINDS];
    int kind_of[SER_KINDS]; /* series index of each kind, -1 if absent */
    int cols[SER_KINDS];
    char (*names)[HYMO_REF_TEXT_MAX]; /* all column names */
    const char **name_ptr;
    hymo_kin kin;      /* own kinematics workspace (sensors) */
    int have_kin;
    double *qnode;     /* n_nodes: flow scratch */
    double *flow_tmp;  /* n_flows: when flows are recorded but ... (always allocated) */
    double *power_tmp; /* n_powers */
    /* branch pump-signals: pump speeds and set flows at a row's time, for a
     * state without a circuit that has its own (NULL without such signals) */
    double *inputs;
};

static const char *const axis_name[3] = {"x", "y", "z"};

hymo_status hymo_outputs_create(hymo_outputs **out, const hymo_model *model, hymo_error *err)
{
    *out = NULL;
    hymo_outputs *o = calloc(1, sizeof *o);
    if (!o) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (outputs)");
    o->model = model;
    int nsens[3] = {0, 0, 0};
    for (int s = 0; s < model->n_sensors; ++s)
        for (int k = 0; k < 3; ++k) nsens[k] += (model->sensors[s].record >> k) & 1;
    int nf, npw;
    hymo_flow_columns(model, &nf, &npw);
    o->cols[SER_POS] = 3 * nsens[0], o->cols[SER_VEL] = 3 * nsens[1], o->cols[SER_ACC] = 3 * nsens[2];
    o->cols[SER_FLOW] = nf, o->cols[SER_POWER] = npw, o->cols[SER_UREF] = model->n_valves;
    int total = 0;
    for (int k = 0; k < SER_KINDS; ++k) total += o->cols[k];
    o->names = calloc((size_t)total + 1, sizeof *o->names);
    o->name_ptr = calloc((size_t)total + 1, sizeof *o->name_ptr);
    o->qnode = calloc((size_t)model->n_nodes + 1, sizeof *o->qnode);
    o->flow_tmp = calloc((size_t)nf + 1, sizeof *o->flow_tmp);
    o->power_tmp = calloc((size_t)npw + 1, sizeof *o->power_tmp);
    if (hymo_circuit_has_inputs(model) &&
        !(o->inputs = calloc((size_t)(model->n_pumps + model->n_flow_controls), sizeof *o->inputs))) {
        hymo_outputs_free(o);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (outputs)");
    }
    char(*fn)[HYMO_FLOW_NAME_MAX] = calloc((size_t)nf + 1, sizeof *fn);
    char(*pn)[HYMO_FLOW_NAME_MAX] = calloc((size_t)npw + 1, sizeof *pn);
    if (!o->names || !o->name_ptr || !o->qnode || !o->flow_tmp || !o->power_tmp || !fn || !pn) {
        free(fn), free(pn);
        hymo_outputs_free(o);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (outputs)");
    }
    hymo_flow_names(model, fn, pn);
    int at = 0;
    for (int k = 0; k < SER_KINDS; ++k) {
        o->kind_of[k] = -1;
        if (o->cols[k] == 0) continue;
        const int first = at;
        if (k <= SER_ACC) {
            for (int s = 0; s < model->n_sensors; ++s) {
                if (!((model->sensors[s].record >> k) & 1)) continue;
                for (int c = 0; c < 3; ++c)
                    snprintf(o->names[at++], HYMO_REF_TEXT_MAX, "%s.%s", model->sensors[s].name, axis_name[c]);
            }
        } else if (k == SER_FLOW) {
            for (int c = 0; c < nf; ++c) snprintf(o->names[at++], HYMO_REF_TEXT_MAX, "%s", fn[c]);
        } else if (k == SER_POWER) {
            for (int c = 0; c < npw; ++c) snprintf(o->names[at++], HYMO_REF_TEXT_MAX, "%s", pn[c]);
        } else {
            for (int v = 0; v < model->n_valves; ++v)
                snprintf(o->names[at++], HYMO_REF_TEXT_MAX, "%s", model->valves[v].name);
        }
        for (int c = first; c < at; ++c) o->name_ptr[c] = o->names[c];
        o->kind_of[k] = o->n_series;
        o->series[o->n_series++] = (hymo_ref_series){kinds[k].path, o->cols[k], o->name_ptr + first, kinds[k].units};
    }
    free(fn), free(pn);
    if (model->n_sensors > 0) {
        if (!model->compiled) {
            hymo_outputs_free(o);
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "outputs: the model is not compiled");
        }
        hymo_status st = hymo_kin_init(&o->kin, &model->compiled->kin, err);
        if (st != HYMO_OK) {
            hymo_outputs_free(o);
            return st;
        }
        o->have_kin = 1;
    }
    *out = o;
    return HYMO_OK;
}

void hymo_outputs_free(hymo_outputs *o)
{
    if (!o) return;
    if (o->have_kin) hymo_kin_free(&o->kin);
    free(o->names);
    free(o->name_ptr);
    free(o->qnode);
    free(o->flow_tmp);
    free(o->power_tmp);
    free(o->inputs);
    free(o);
}

int hymo_outputs_n_series(const hymo_outputs *o) { return o ? o->n_series : 0; }
const hymo_ref_series *hymo_outputs_series(const hymo_outputs *o) { return o ? o->series : NULL; }

void hymo_outputs_model_uref(const hymo_model *model, double t, int side, double *uref)
{
    for (int v = 0; v < model->n_valves; ++v) uref[v] = hymo_signal_eval(&model->signals[model->valves[v].signal], t, side);
}

/* Sensor rows: position, velocity and acceleration of each sensor point
 * from the joint state (own kinematics workspace). */
static void eval_sensors(hymo_outputs *o, const hymo_output_state *st, double *const *row)
{
    const hymo_model *m = o->model;
    hymo_kin *kin = &o->kin;
    hymo_kin_positions(kin, m, st->z);
    hymo_kin_velocities(kin, m, st->zd);
    double *pos = o->kind_of[SER_POS] >= 0 ? row[o->kind_of[SER_POS]] : NULL;
    double *vel = o->kind_of[SER_VEL] >= 0 ? row[o->kind_of[SER_VEL]] : NULL;
    double *acc = o->kind_of[SER_ACC] >= 0 ? row[o->kind_of[SER_ACC]] : NULL;
    for (int s = 0; s < m->n_sensors; ++s) {
        const hymo_sensor *se = &m->sensors[s];
        double r[3];
        hymo_kin_body_point(kin, se->body, se->r, r);
        if (se->record & HYMO_SENSOR_POSITION) {
            memcpy(pos, r, sizeof r);
            pos += 3;
        }
        if (se->record & HYMO_SENSOR_VELOCITY) {
            hymo_kin_point_velocity(kin, se->body, r, vel);
            vel += 3;
        }
        if (se->record & HYMO_SENSOR_ACCELERATION) {
            /* a = (velocity-product part) + sum_j d r/d z_j zdd_j */
            hymo_kin_point_accel0(kin, se->body, r, acc);
            for (int j = 0; se->body != HYMO_GROUND && j < m->n_bodies; ++j) {
                double d[3];
                hymo_kin_point_jacobian(kin, se->body, j, r, d);
                for (int c = 0; c < 3; ++c) acc[c] += d[c] * st->zdd[j];
            }
            acc += 3;
        }
    }
}

void hymo_outputs_eval(hymo_outputs *o, const hymo_output_state *st, double *const *row)
{
    const hymo_model *m = o->model;
    if (m->n_sensors > 0) eval_sensors(o, st, row);
    if (o->cols[SER_FLOW] > 0 || o->cols[SER_POWER] > 0) {
        static const hymo_circuit geometry; /* sw NULL: branches from the geometry */
        double *q = o->kind_of[SER_FLOW] >= 0 ? row[o->kind_of[SER_FLOW]] : o->flow_tmp;
        double *w = o->kind_of[SER_POWER] >= 0 ? row[o->kind_of[SER_POWER]] : o->power_tmp;
        const hymo_circuit *circ = st->circ ? st->circ : &geometry;
        hymo_circuit at; /* branch pump-signals: the speeds and set flows at the row's time */
        if (o->inputs && !circ->pump_speed) {
            at = *circ;
            hymo_circuit_inputs(m, st->t, st->t > 0.0 ? -1 : +1, 0.0, o->inputs, o->inputs + m->n_pumps);
            at.pump_speed = o->inputs, at.fc_flow = o->inputs + m->n_pumps;
            circ = &at;
        }
        hymo_flow_eval(circ, m, st->p, st->u, st->zd, q, w, o->qnode);
    }
    if (o->kind_of[SER_UREF] >= 0) memcpy(row[o->kind_of[SER_UREF]], st->uref, (size_t)m->n_valves * sizeof(double));
}
