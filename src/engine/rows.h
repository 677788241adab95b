/* Output rows of a run (SPEC §8 datasets), buffered for the HDF5 writer. */
#ifndef HYMO_ROWS_H
#define HYMO_ROWS_H

#include "engine.h"
#include "hymo/reference.h"
#include "signals.h" /* hymo_rows (one field per signal of hymo_ref_signals[]) */

/* Room for `capacity` rows; returns 0 if out of memory (free anyway). */
int hymo_rows_alloc(hymo_rows *b, const hymo_sim *sim, long capacity);
void hymo_rows_free(hymo_rows *b);
/* The bytes of one output row of a run of model (every dataset of
 * hymo_ref_signals[] and the further outputs). */
double hymo_rows_row_bytes(const hymo_model *model);
/* Appends the committed state of sim (time, states, actuators, energies). */
void hymo_rows_push(hymo_rows *b, const hymo_sim *sim);
/* Appends all rows to the writer (if any) and empties the buffer. */
hymo_status hymo_rows_flush(hymo_rows *b, hymo_ref_writer *w, hymo_error *err);
/* Opens a reference writer at path: the model's name, source and hash in
 * hdr (its solver fields set by the caller) and the model's dimension names;
 * *names holds storage the dims point to (free() after close).  series:
 * the further datasets (src/compile/sensors.h; NULL, 0 for none). */
hymo_status hymo_ref_open_for_model(const hymo_model *model, hymo_ref_header *hdr, const char *path,
                                    const hymo_ref_series *series, int n_series, hymo_ref_writer **writer,
                                    void **names, hymo_error *err);
/* A monolithic run's file (the header from sim's options and tables, the
 * further outputs of rows computed by the writer's thread), opened on a
 * thread of its own while the run steps (rows and sim's model stay
 * unchanged; rows pushed meanwhile wait in rows): start it, then wait for
 * its writer (*writer, *names as hymo_ref_open_for_model's, or the open's
 * error), then free the opener (a writer not taken is discarded).  Without
 * a thread the file is opened in hymo_rows_open_start.  HYMO_ERR_NOMEM. */
typedef struct hymo_rows_opener hymo_rows_opener;
hymo_status hymo_rows_open_start(const hymo_sim *sim, hymo_rows *rows, const char *path, hymo_rows_opener **opener,
                                 hymo_error *err);
hymo_status hymo_rows_open_wait(hymo_rows_opener *opener, hymo_ref_writer **writer, void **names, hymo_error *err);
void hymo_rows_open_free(hymo_rows_opener *opener);

/* Monotonic clock, s (wall times of runs and sweeps). */
double hymo_now_seconds(void);
/* Steps of a run to t_end: t_end/dt, or one more (shortened) if t_end is not a
 * multiple of dt (to 1e-9). */
long hymo_run_steps(const hymo_run_options *opt);

#endif
