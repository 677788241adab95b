/* hymo — model lookups, signal evaluation and destruction.
 * (The loader is in model_load.c.) */
#include "hymo/model.h"

#include "compiled.h"
#include "motor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hymo_model_free(hymo_model *model)
{
    if (!model) return;
    hymo_compiled_free(model->compiled);
    free(model->source_path);
    free(model->source_text);
    for (int i = 0; model->overrides && i < model->n_overrides; i++) free(model->overrides[i]);
    free(model->overrides);
    free(model->bodies);
    free(model->points);
    free(model->cuts);
    free(model->independent_hint);
    if (model->signals) {
        for (int i = 0; i < model->n_signals; i++) {
            free(model->signals[i].t);
            free(model->signals[i].v);
            hymo_signal_shape_free(model->signals[i].shape);
        }
    }
    free(model->signals);
    free(model->nodes);
    free(model->subvolumes);
    free(model->throttles);
    free(model->relief_valves);
    free(model->check_valves);
    free(model->pumps);
    free(model->flow_controls);
    free(model->valve_edges);
    free(model->accumulators);
    free(model->sensors);
    free(model->valves);
    free(model->cylinders);
    free(model->force_elements);
    free(model->motors);
    free(model->drivers);
    free(model->volume_p0_line);
    free(model->driver_line);
    free(model->cylinder_line);
    free(model);
}

int hymo_model_n_constraints(const hymo_model *model)
{
    int n = 0;
    if (!model) return 0;
    for (int i = 0; i < model->n_cuts; i++) n += model->cuts[i].n_eq;
    return n;
}

int hymo_model_find_body(const hymo_model *model, const char *name)
{
    if (!model || !name) return -1;
    for (int i = 0; i < model->n_bodies; i++) {
        if (strcmp(model->bodies[i].name, name) == 0) return i;
    }
    return -1;
}

/* "P" finds the first point named P (ground points first, then bodies in
 * topological order); "body.P" / "ground.P" finds P of that body only. */
int hymo_model_find_point(const hymo_model *model, const char *name)
{
    if (!model || !name) return -1;
    const char *dot = strchr(name, '.');
    if (!dot) {
        for (int i = 0; i < model->n_points; i++) {
            if (strcmp(model->points[i].name, name) == 0) return i;
        }
        return -1;
    }
    size_t body_len = (size_t)(dot - name);
    int body;
    if (body_len == 6 && strncmp(name, "ground", 6) == 0) {
        body = HYMO_GROUND;
    } else {
        body = -2;
        for (int i = 0; i < model->n_bodies; i++) {
            if (strlen(model->bodies[i].name) == body_len &&
                strncmp(model->bodies[i].name, name, body_len) == 0) {
                body = i;
                break;
            }
        }
        if (body == -2) return -1;
    }
    for (int i = 0; i < model->n_points; i++) {
        if (model->points[i].body == body && strcmp(model->points[i].name, dot + 1) == 0) return i;
    }
    return -1;
}

/* Piecewise-linear table with steps (two points with equal times).
 * Right limit (side >= 0): take the last point i with t_i <= t and
 * interpolate towards i+1 (t_{i+1} > t_i then holds).  Left limit
 * (side < 0): take the first point i with t_i >= t and interpolate from
 * i-1.  Outside the table the end values are held. */
double hymo_signal_eval(const hymo_signal *signal, double t, int side)
{
    if (!signal || signal->n_points <= 0) return 0.0;
    if (signal->shape) return hymo_signal_eval_d(signal, t, side, 0.0, NULL);
    const int n = signal->n_points;
    const double *ts = signal->t, *vs = signal->v;
    if (side >= 0) {
        /* last i with ts[i] <= t (binary search) */
        int lo = 0, hi = n; /* answer in [lo-1, hi-1] */
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (ts[mid] <= t) lo = mid + 1;
            else hi = mid;
        }
        int i = lo - 1;
        if (i < 0) return vs[0];
        if (i >= n - 1) return vs[n - 1];
        double w = (t - ts[i]) / (ts[i + 1] - ts[i]);
        return vs[i] + w * (vs[i + 1] - vs[i]);
    } else {
        /* first i with ts[i] >= t */
        int lo = 0, hi = n;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (ts[mid] < t) lo = mid + 1;
            else hi = mid;
        }
        int i = lo;
        if (i >= n) return vs[n - 1];
        if (i == 0) return vs[0];
        double w = (t - ts[i - 1]) / (ts[i] - ts[i - 1]);
        return vs[i - 1] + w * (vs[i] - vs[i - 1]);
    }
}

double hymo_signal_eval_snapped(const hymo_signal *signal, double t, int side, double dt)
{
    if (!signal) return 0.0;
    if (signal->shape) return hymo_signal_eval_d(signal, t, side, dt, NULL);
    int lo = 0, hi = signal->n_points - 1;
    while (hi - lo > 1) { /* nearest breakpoints by bisection */
        int mid = (lo + hi) / 2;
        if (signal->t[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    for (int i = lo; i <= hi && i < signal->n_points; ++i)
        if (fabs(signal->t[i] - t) <= 1e-6 * dt) return hymo_signal_eval(signal, signal->t[i], side);
    return hymo_signal_eval(signal, t, side);
}
