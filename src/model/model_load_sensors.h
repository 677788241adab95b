/* The `sensors:` section of a model file (src/model/model_load_sensors.c). */
#ifndef HYMO_MODEL_LOAD_SENSORS_H
#define HYMO_MODEL_LOAD_SENSORS_H

#include "model_doc.h"

#include "hymo/model.h"

/* Reads root's `sensors` list (absent or empty: none) into m->sensors /
 * m->n_sensors; the bodies and points of m must be loaded.  Errors:
 * HYMO_ERR_MODEL "ORIGIN:LINE: sensors[i].field: problem". */
hymo_status hymo_model_load_sensors(hymo_ydoc *doc, hymo_ynode *root, const char *origin, hymo_model *m,
                                    hymo_error *err);

#endif
