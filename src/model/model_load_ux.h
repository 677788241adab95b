/* What the loader records after the sections are read
 * (src/model/model_load_ux.c). */
#ifndef HYMO_MODEL_LOAD_UX_H
#define HYMO_MODEL_LOAD_UX_H

#include "model_doc.h"

#include "hymo/model.h"

/* After every section is loaded: the source lines of the values that
 * checks made after loading name (volume_p0_line, independent_line), and
 * the switching functions of the signal kinks (hymo_signal_shape.n_kinks,
 * sw_first; appended to m->n_force_switches).  Refuses a driven joint whose
 * signal has a dead zone or clamp (velocity jumps at its kinks). */
hymo_status hymo_load_ux(hymo_ydoc *doc, hymo_ynode *root, const char *origin, hymo_model *m,
                         hymo_error *err);

/* For an "unknown point" message: " (no body 'X'; bodies: ...)" or
 * " (points of B: ...)" or " (points: B.P, ...)", cut to fit len. */
void hymo_point_hint(const hymo_model *m, const char *name, char *buf, size_t len);

#endif
