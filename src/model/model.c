/* hymo — model lookups and destruction.
 * (The loader is in model_load.c.) */
#include "hymo/model.h"

#include "compiled.h"
#include "signal_shape.h"

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

