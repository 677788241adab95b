/* hymo — driven joints: prescribed joint motions (src/engine/driver.c,
 * docs/model-format.md, "driven_joints"); the hymo_sim functions are called by
 * the engine only when model->n_drivers > 0. */
#ifndef HYMO_DRIVER_H
#define HYMO_DRIVER_H

#include "hymo/model.h"

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
