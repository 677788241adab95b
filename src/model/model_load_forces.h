/* The `forces:` section of a model file (src/model/model_load_forces.c). */
#ifndef HYMO_MODEL_LOAD_FORCES_H
#define HYMO_MODEL_LOAD_FORCES_H

#include "model_doc.h"

#include "hymo/model.h"

/* Loads the force elements of the list `seq` (NULL: none) into m (bodies,
 * points and signals loaded); errors "origin:line: forces[k].field: ...". */
hymo_status hymo_load_forces(hymo_ydoc *doc, hymo_ynode *seq, const char *origin, hymo_error *err,
                             hymo_model *m);

#endif
