/* Output rows of a run (SPEC §8 datasets), buffered for the HDF5 writer. */
#ifndef HYMO_ROWS_H
#define HYMO_ROWS_H

#include "engine.h"
#include "hymo/reference.h"
#include "signals.h" /* hymo_rows (one field per signal of hymo_ref_signals[]) */

/* Room for `capacity` rows; returns 0 if out of memory (free anyway). */
int hymo_rows_alloc(hymo_rows *b, const hymo_sim *sim, long capacity);
void hymo_rows_free(hymo_rows *b);
/* Appends the committed state of sim (time, states, actuators, energies). */
void hymo_rows_push(hymo_rows *b, const hymo_sim *sim);
/* Appends all rows to the writer (if any) and empties the buffer. */
hymo_status hymo_rows_flush(hymo_rows *b, hymo_ref_writer *w, hymo_error *err);
/* Opens the writer with the model's names and the root attributes of sim's
 * options (formulation: NULL for sim's own); *names holds storage the dims
 * point to (free() after close). */
hymo_status hymo_rows_open_writer(const hymo_sim *sim, const char *path, const char *formulation,
                                  const char *integrator, double dt,
                                  hymo_ref_writer **writer, void **names, hymo_error *err);

/* Monotonic clock, s (wall times of runs and sweeps). */
double hymo_now_seconds(void);

#endif
