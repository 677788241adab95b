/* hymo — internal declarations of the shaped signals (src/core/signal.c,
 * docs/model-format.md, "signals"); the evaluation functions are public
 * (include/hymo/model.h). */
#ifndef HYMO_SIGNAL_SHAPE_H
#define HYMO_SIGNAL_SHAPE_H

#include "hymo/model.h"

/* Filter constants of a shaped signal (after loading its table and shape). */
hymo_status hymo_signal_shape_prepare(hymo_signal *s, hymo_error *err);
void hymo_signal_shape_free(hymo_signal_shape *sh);

#endif
