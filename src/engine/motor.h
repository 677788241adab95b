/* hymo — internal declarations of the `motor` branch: shaped signals
 * (src/core/signal.c), hydraulic motors and prescribed joint motions
 * (src/model/model_load_motor.inc, docs/model-format.md). */
#ifndef HYMO_MOTOR_H
#define HYMO_MOTOR_H

#include "hymo/model.h"

/* Filter constants of a shaped signal (after loading its table and shape). */
hymo_status hymo_signal_shape_prepare(hymo_signal *s, hymo_error *err);
void hymo_signal_shape_free(hymo_signal_shape *sh);

/* Driven joints (src/engine/driver.c); the hymo_sim functions are called by the
 * engine only when model->n_drivers > 0. */
struct hymo_sim;
void hymo_drivers_begin_solve(struct hymo_sim *sim, double t1);
void hymo_drivers_end_solve(struct hymo_sim *sim, int solved);
hymo_status hymo_drivers_residual(struct hymo_sim *sim, const double *x, double *f, double t, hymo_error *err);
void hymo_drivers_jacobian(struct hymo_sim *sim);
hymo_status hymo_drivers_consistent_accelerations(struct hymo_sim *sim, int set_lambda, hymo_error *err);
hymo_status hymo_drivers_check_start(const struct hymo_sim *sim, hymo_error *err);
/* Whether a driven joint's signal has a breakpoint at t (within 1e-6 dt). */
int hymo_drivers_break_at(const struct hymo_sim *sim, double t);

#endif
