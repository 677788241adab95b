/* hymo — the per-step signals of a reference file (docs/hdf5-format.md,
 * "Datasets"): ONE table, hymo_ref_signals[] in reference/signals.c, says for
 * every dataset its path, group, column count, units, element type and
 * where its rows sit in hymo_ref_block, hymo_reference and the run's row
 * buffer hymo_rows.  The writer, the reader, the row buffer (src/engine/rows.c)
 * and the comparison (compare.c) loop over it.
 *
 * Adding a per-step signal:
 *   1. an id below (in file order) and a row in hymo_ref_signals[];
 *   2. its data field in hymo_ref_block and hymo_reference
 *      (include/hymo/reference.h) and in hymo_rows below;
 *   3. where it comes from in the simulation: src/engine/rows.c, hymo_rows_push;
 *   4. a line in the dataset table of docs/hdf5-format.md (a test checks);
 *   5. only if `hymo compare` should compare it: HYMO_CMP_* in
 *      include/hymo/compare.h and compared[] in compare.c.
 * Internal header (not installed); src/ and the tests include it. */
#ifndef HYMO_SIGNALS_H
#define HYMO_SIGNALS_H

#include <stddef.h>

#include "hymo/reference.h"

/* Signal ids: index into hymo_ref_signals[], in the order the datasets are
 * created, read and written. */
enum {
    HYMO_SIG_TIME,
    HYMO_SIG_Z,
    HYMO_SIG_ZD,
    HYMO_SIG_ZDD,
    HYMO_SIG_P,
    HYMO_SIG_U,
    HYMO_SIG_S,
    HYMO_SIG_SD,
    HYMO_SIG_FORCE,
    HYMO_SIG_WORK,
    HYMO_SIG_KINETIC,
    HYMO_SIG_POTENTIAL,
    HYMO_SIG_DRIFT,
    HYMO_SIG_C_POS,
    HYMO_SIG_C_VEL,
    HYMO_SIG_C_ACC,
    HYMO_SIG_ITERATIONS,
    HYMO_SIG_RESIDUAL,
    HYMO_SIGNAL_COUNT
};

/* Groups under the root, in creation order (the summary attributes of
 * hymo_ref_writer_close go on SOLVER, ENERGY and CONSTRAINTS). */
enum {
    HYMO_GROUP_STATES,
    HYMO_GROUP_ACTUATORS,
    HYMO_GROUP_ENERGY,
    HYMO_GROUP_CONSTRAINTS,
    HYMO_GROUP_SOLVER,
    HYMO_GROUP_COUNT,
    HYMO_GROUP_ROOT = -1
};
extern const char *const hymo_ref_groups[HYMO_GROUP_COUNT]; /* "states", ... */

/* Column count of a signal: ONE is a 1-D dataset [N]; the others are
 * [N x dimension] with a `names` attribute (one name per column). */
typedef enum {
    HYMO_COLS_ONE,
    HYMO_COLS_NZ,
    HYMO_COLS_NP,
    HYMO_COLS_NU,
    HYMO_COLS_NA,
    HYMO_COLS_NCUT,
    HYMO_COLS_COUNT
} hymo_ref_cols;

/* `units` attribute: FIXED is one string, hymo_ref_signal.units; PER_COORD
 * is one string per column: the unit of that joint coordinate
 * (hymo_ref_dims.z_units, "rad" or "m") followed by hymo_ref_signal.units,
 * the suffix "", "/s" or "/s^2". */
typedef enum { HYMO_UNITS_FIXED, HYMO_UNITS_PER_COORD } hymo_ref_units_rule;

typedef enum { HYMO_SIG_F64, HYMO_SIG_I32 } hymo_ref_elem; /* double, int */

/* Most further series a row buffer holds (src/compile/sensors.h). */
#define HYMO_ROWS_SERIES_MAX 8

/* The row buffer of a run: room for `capacity` rows of every signal
 * (row-major [rows x cols]); src/engine/rows.h has its functions. */
typedef struct {
    long n; /* rows held */
    int nz, np, nu, na, ncut;
    /* one buffer per signal (the `rows` field of its table row) */
    double *time, *z, *zd, *zdd, *p, *u, *s, *sd, *force, *work, *kin, *pot, *drift, *cpos, *cvel, *cacc,
        *residual;
    int *iterations;
    /* Set by hymo_rows_alloc for hymo_rows_push: each signal's buffer (the
     * field above) and bytes per row, indexed like hymo_ref_signals[]; the
     * signals with columns in copy order, those of one double per row first
     * (copy[0 .. n_scalar-1]), then the others (.. n_copy-1). */
    unsigned char *col[HYMO_SIGNAL_COUNT];
    size_t row_bytes[HYMO_SIGNAL_COUNT];
    unsigned char copy[HYMO_SIGNAL_COUNT];
    int n_scalar, n_copy;
    /* the further outputs (src/compile/sensors.h: sensor points, element
     * flows and powers, valve references): computed by the writer's thread
     * from the rows above and, per row, aux_bytes of what else they depend
     * on (aux: capacity x aux_bytes; the valve references, the circuit's
     * inputs and branch states), with derive's own scratch (only for a run
     * that writes a file, hymo_rows_open_writer). */
    struct hymo_outputs *outputs;
    int n_series;
    unsigned char *aux;
    size_t aux_bytes;
    struct hymo_rows_derive *derive;
} hymo_rows;

/* The writer's further datasets (hymo_ref_dims.series) computed on the
 * thread that writes them: fills series[k] rows [0, n) (n x cols of series
 * k, row-major) from the same rows of the signals, sig[i] indexed like
 * hymo_ref_signals[] (n x cols each, NULL for a signal without columns), and
 * of aux (n x aux_bytes, the rows given to hymo_ref_writer_append_aux).
 * Called once per write, before the rows are written, on one thread at a
 * time. */
typedef void (*hymo_ref_derive_fn)(void *ctx, int n, const unsigned char *const *sig, const unsigned char *aux,
                                   double *const *series);
/* Sets it before the first append (the block's series are then not read;
 * each append gives aux_bytes per row through hymo_ref_writer_append_aux).
 * HYMO_ERR_ARGUMENT after a row, HYMO_ERR_NOMEM. */
hymo_status hymo_ref_writer_set_derive(hymo_ref_writer *w, hymo_ref_derive_fn fn, void *ctx, size_t aux_bytes,
                                       hymo_error *err);
/* No more rows: the staged rows are written and the file leaves SWMR mode
 * (what hymo_ref_writer_close would do first; the summary, attributes and
 * further matrices follow).  Later appends fail (HYMO_ERR_ARGUMENT); a
 * write failure is returned and the close reports it too. */
hymo_status hymo_ref_writer_end_rows(hymo_ref_writer *w, hymo_error *err);
/* The calling thread takes over a writer opened on another thread: HDF5's
 * error printing (per thread) off here too, as hymo_ref_writer_open turns
 * it off on its own thread (the failures are reported as values). */
void hymo_ref_writer_adopt(hymo_ref_writer *w);
/* hymo_ref_writer_append with aux, block->n x aux_bytes (NULL without a
 * derive function or with aux_bytes 0). */
hymo_status hymo_ref_writer_append_aux(hymo_ref_writer *w, const hymo_ref_block *block, const void *aux,
                                       hymo_error *err);

typedef struct {
    const char *path; /* "/states/z": absolute; the dataset name is the last component */
    int group;        /* HYMO_GROUP_* (HYMO_GROUP_ROOT for /time) */
    hymo_ref_cols cols;
    hymo_ref_elem type;
    /* offsetof the signal's data pointer (double * or int *, const in the
     * block) in each struct that holds a signal's rows */
    size_t block, ref, rows; /* hymo_ref_block, hymo_reference, hymo_rows */
    hymo_ref_units_rule unit_rule;
    const char *units; /* FIXED: the attribute; PER_COORD: the suffix */
} hymo_ref_signal;

extern const hymo_ref_signal hymo_ref_signals[HYMO_SIGNAL_COUNT];

/* Where each dimension (HYMO_COLS_NZ ... NCUT) is counted and named;
 * hymo_ref_dimensions[HYMO_COLS_ONE] is unused. */
typedef struct {
    const char *names_field;       /* "z_names" (field of hymo_ref_dims and hymo_reference) */
    size_t dims_count, dims_names; /* offsetof in hymo_ref_dims (int, const char (*)[TEXT_MAX]) */
    size_t ref_count, ref_names;   /* offsetof in hymo_reference (int, char (*)[TEXT_MAX]) */
    size_t rows_count;             /* offsetof in hymo_rows (int) */
} hymo_ref_dimension;

extern const hymo_ref_dimension hymo_ref_dimensions[HYMO_COLS_COUNT];

/* Dataset name: the last component of the path ("z"). */
const char *hymo_ref_signal_name(const hymo_ref_signal *s);
/* Bytes per element: sizeof(double) or sizeof(int). */
size_t hymo_ref_signal_elem_size(const hymo_ref_signal *s);
/* Unit of one column of a PER_COORD signal whose coordinate unit is
 * `coord`: coord + suffix ("rad" -> "rad", "rad/s" or "rad/s^2"), into out. */
void hymo_ref_signal_coord_unit(const hymo_ref_signal *s, const char *coord,
                                char out[HYMO_REF_TEXT_MAX]);
/* The same as a static string for the coordinate units "rad" and "m";
 * "" for any other coordinate unit and for a FIXED signal. */
const char *hymo_ref_signal_coord_unit_static(const hymo_ref_signal *s, const char *coord);

/* Column counts per hymo_ref_cols ([HYMO_COLS_ONE] = 1) of dims, a
 * reference and a row buffer. */
void hymo_ref_counts_dims(const hymo_ref_dims *d, int counts[HYMO_COLS_COUNT]);
void hymo_ref_counts_ref(const hymo_reference *r, int counts[HYMO_COLS_COUNT]);
void hymo_ref_counts_rows(const hymo_rows *b, int counts[HYMO_COLS_COUNT]);

/* Data pointer of signal s in a struct (hymo_reference or hymo_rows) whose
 * field for s is at offset `off`: reads the field as double * or int *. */
static inline void *hymo_ref_signal_get(const hymo_ref_signal *s, const void *obj, size_t off)
{
    const char *field = (const char *)obj + off;
    if (s->type == HYMO_SIG_I32) return *(int *const *)(const void *)field;
    return *(double *const *)(const void *)field;
}

static inline void hymo_ref_signal_set(const hymo_ref_signal *s, void *obj, size_t off,
                                       void *data)
{
    char *field = (char *)obj + off;
    if (s->type == HYMO_SIG_I32) {
        *(int **)(void *)field = data;
    } else {
        *(double **)(void *)field = data;
    }
}

/* The same for hymo_ref_block, whose fields point to const data. */
static inline const void *hymo_ref_signal_block_get(const hymo_ref_signal *s,
                                                    const hymo_ref_block *b)
{
    const char *field = (const char *)b + s->block;
    if (s->type == HYMO_SIG_I32) return *(const int *const *)(const void *)field;
    return *(const double *const *)(const void *)field;
}

static inline void hymo_ref_signal_block_set(const hymo_ref_signal *s, hymo_ref_block *b,
                                             const void *data)
{
    char *field = (char *)b + s->block;
    if (s->type == HYMO_SIG_I32) {
        *(const int **)(void *)field = data;
    } else {
        *(const double **)(void *)field = data;
    }
}

#endif
