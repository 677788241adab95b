/* hymo — internal declarations of the `motor` branch: shaped signals
 * (src/signal.c), hydraulic motors and prescribed joint motions
 * (src/model_load_motor.inc, docs/model-format.md). */
#ifndef HYMO_MOTOR_H
#define HYMO_MOTOR_H

#include "hymo/model.h"

/* Filter constants of a shaped signal (after loading its table and shape). */
hymo_status hymo_signal_shape_prepare(hymo_signal *s, hymo_error *err);
void hymo_signal_shape_free(hymo_signal_shape *sh);

#endif
