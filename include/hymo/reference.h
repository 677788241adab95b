/* hymo — HDF5 reference trajectories (SPEC §8, docs/hdf5-format.md).
 *
 * Writer: streams blocks of rows into chunked, extendible datasets of a
 * file opened under a temporary name ("OUT.h5.XXXXXX.partial", readable
 * while it is written: HDF5 SWMR mode);
 * hymo_ref_writer_close() writes the summary attributes and `complete`,
 * then renames the file to its final name.  A crashed run leaves only the
 * ".partial" file, whose `complete` attribute is 0.
 *
 * Reader: loads a whole file into memory (hymo_reference). */
#ifndef HYMO_REFERENCE_H
#define HYMO_REFERENCE_H

#include <stdio.h>

#include "hymo/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Root attribute format_version written by hymo_ref_writer_open; the
 * reader refuses any other value. */
#define HYMO_REF_FORMAT_VERSION 1
/* Size of the fixed text fields (names, labels), including the NUL. */
#define HYMO_REF_TEXT_MAX 128
/* Size of hymo_run_summary.independent_list, including the NUL: the whole
 * independent-coordinate log (e.g. 256 joints of 30-character names). */
#define HYMO_REF_LIST_MAX 8192

/* Summary of a run: printed by `hymo run` and, from the file, `hymo info`. */
/* Pressure range of one volume over a run. */
#define HYMO_SUMMARY_VOLUMES 32
typedef struct {
    char name[HYMO_REF_TEXT_MAX];
    double p_min, p_min_time, p_max, p_max_time; /* Pa, s */
    int below_floor; /* went below the fluid's floor (NON-PHYSICAL) */
} hymo_volume_range;

typedef struct {
    char model_name[HYMO_REF_TEXT_MAX];
    char formulation[HYMO_REF_TEXT_MAX]; /* "double-step" | "penalty" */
    char jacobian[HYMO_REF_TEXT_MAX];    /* "numeric" | "fast"        */
    char linear_solver[HYMO_REF_TEXT_MAX];
    double dt, t_end;
    double t_reached;       /* last time written */
    long n_steps;           /* integration steps done (-1: unknown) */
    int complete;           /* 1 if the run reached t_end */
    double peak_drift;      /* max |D(t)|, J */
    double max_work;        /* max_t |sum W_act(t)|, J */
    double relative_drift;  /* peak_drift / max_work (0 if max_work == 0) */
    double max_constraint_position;     /* max over t of ||Phi||, m */
    double max_constraint_velocity;     /* max ||Phi_z zd|| */
    double max_constraint_acceleration; /* max ||Phi_z zdd + dPhi_z zd|| */
    double mean_iterations;
    int max_iterations;
    long jacobian_evaluations;
    char independent[HYMO_REF_TEXT_MAX]; /* e.g. "z3", or "y; theta from t=0.432" after a re-selection ("all" for penalty) */
    int n_reselections;
    /* The projection of the model's initial joint rates onto the velocity
     * constraints (how many given, the independent set kept, the largest
     * change of a given rate, the residual); "" when the model gives none.
     * Root attribute initial_rates, absent when empty. */
    char initial_rates[HYMO_REF_TEXT_MAX * 2];
    /* Where double-step met a singular position it could not leave by
     * re-selecting its independent coordinates (the constraint Jacobian's
     * smallest pivot collapsed for every set): how many steps, the first and
     * the smallest pivot; "" when none.  Root attribute singular_positions,
     * absent when empty. */
    char singular_positions[HYMO_REF_TEXT_MAX * 2];
    double wall_time; /* s, integration loop */
    /* The integrator's name.  Not written by hymo_ref_writer_close (the root attribute
     * `integrator` comes from hymo_ref_header); filled by hymo_ref_read.
     * hymo_run_summary_print shows "trapezoidal Newton-Raphson" when empty. */
    char integrator[HYMO_REF_TEXT_MAX];
    /* The run's estimate of its own global error (the /accuracy group of a
     * file): max over t and components of |x - x_exact| for z (rad or m), p
     * (Pa) and s (m), from a companion run (trapezoidal: step 2 dt,
     * Richardson for order 2, |x_dt - x_2dt| / 3; ida: tolerances 100x
     * tighter, |x - x_tight|).  has_accuracy = 0: not estimated (no file
     * written, or the companion failed: accuracy_missing_reason). */
    int has_accuracy;
    char accuracy_method[HYMO_REF_TEXT_MAX];
    double z_max_error, p_max_error, s_max_error;
    /* Why a complete run has no estimate although one was asked for (its
     * companion failed: that run's message, one line); "" otherwise.  Root
     * attribute accuracy_missing_reason, absent when empty. */
    char accuracy_missing_reason[HYMO_REF_TEXT_MAX * 2];
    /* How far the estimate can be trusted (has_accuracy = 1).
     * accuracy_reliable: 1 checked and consistent with the method, 0
     * unreliable (not the run's error: do not judge by it), -1 not checked
     * (a file without the /accuracy attribute `reliable`).
     * accuracy_observed_order: z, p, s order observed from a second
     * companion at 4 dt (trapezoidal; NaN where not observed).
     * accuracy_check: the check, one line (/accuracy attribute `check`). */
    int accuracy_reliable;
    double accuracy_observed_order[3];
    char accuracy_check[HYMO_REF_TEXT_MAX * 2];
    /* Events located (switching functions crossed, e.g. end-damper entries
     * and exits) and the extra Newton iterations spent locating them
     * (trapezoidal; IDA locates its roots itself: 0).  /solver attributes
     * n_events and event_iterations; a file without them reads as 0. */
    long n_events, event_iterations;
    /* Pressure range over the run (np > 0): the lowest and highest
     * pressure of any volume, which volume and when, and how many volumes
     * went below 0 Pa absolute (non-physical without a cavitation model).
     * /states attributes p_min, p_min_volume, p_min_time, p_max, ...,
     * n_volumes_below_zero; has_pressure_range = 0 for files without them. */
    int has_pressure_range;
    double p_min, p_min_time, p_max, p_max_time;
    char p_min_volume[HYMO_REF_TEXT_MAX], p_max_volume[HYMO_REF_TEXT_MAX];
    int n_volumes_below_zero;
    /* Wall time of the whole hymo_run call (start, integration, file output
     * and the error-estimate companion), s; /solver attribute wall_total; 0
     * if unknown.  wall_time is the integration loop alone. */
    double wall_total;
    /* the fluid law and the pressure range of each volume.
     * fluid_model "constant" or "entrained_air" ("" if unknown: older
     * files); p_floor its lowest physical pressure (p_vapour, or 0 Pa);
     * n_volumes_below_floor the volumes that went below it (NON-PHYSICAL).
     * volume_ranges: the first n_volume_ranges volumes (at most
     * HYMO_SUMMARY_VOLUMES; n_volumes_total counts them all), in the order
     * of /states/p. /states attributes fluid_model, p_floor,
     * n_volumes_below_floor, volume_p_min, volume_p_min_time, volume_p_max,
     * volume_p_max_time, volume_below_floor (docs/hdf5-format.md). */
    char fluid_model[HYMO_REF_TEXT_MAX];
    double p_floor;
    int n_volumes_below_floor;
    int n_volumes_total, n_volume_ranges;
    hymo_volume_range volume_ranges[HYMO_SUMMARY_VOLUMES];

    /* the whole independent-coordinate log, of
     * which `independent` holds only the first HYMO_REF_TEXT_MAX - 1
     * characters (kept for compatibility); /solver attribute independent
     * holds the whole text.  "" if unknown (then `independent` is all). */
    char independent_list[HYMO_REF_LIST_MAX];

    /* redundant constraint equations.  constraint_rank: rank of
     * Phi_z at the assembled start, found by full pivoting (= the number of
     * constraint equations when none is redundant; 0 without cut joints);
     * n_redundant: equations beyond the rank; redundant: those rows as
     * "cut[k]" (row k of the cut joint, from 0), comma-separated (cut at
     * HYMO_REF_TEXT_MAX - 1 characters, ending "..."); double-step leaves
     * them out of its dependent-coordinate solve, penalty keeps them all;
     * max_redundant_violation: max over the run of |Phi| of those rows.
     * /constraints attributes rank, n_redundant, redundant_rows,
     * max_redundant_violation (files without them read as 0 / ""). */
    int constraint_rank, n_redundant;
    char redundant[HYMO_REF_TEXT_MAX];
    double max_redundant_violation;

    /* trapezoidal (sub-)steps retried with half their size
     * after a Newton failure (a transient faster than dt); /solver attribute
     * step_halvings, written only when > 0 (absent: 0). */
    long step_halvings;
} hymo_run_summary;

/* Prints the summary block (same text for `hymo run` and `hymo info`). */
void hymo_run_summary_print(FILE *out, const hymo_run_summary *summary);

/* Dimensions and names of the per-step signals. Name arrays hold
 * HYMO_REF_TEXT_MAX-wide strings (names[i]). */
typedef struct {
    int nz;   /* joint coordinates   */
    int np;   /* pressure states     */
    int nu;   /* spool states        */
    int na;   /* actuators           */
    int ncut; /* cut joints          */
    const char (*z_names)[HYMO_REF_TEXT_MAX];
    const char (*z_units)[HYMO_REF_TEXT_MAX]; /* "rad" or "m" per coordinate */
    const char (*p_names)[HYMO_REF_TEXT_MAX];
    const char (*u_names)[HYMO_REF_TEXT_MAX];
    const char (*actuator_names)[HYMO_REF_TEXT_MAX];
    const char (*cut_names)[HYMO_REF_TEXT_MAX];
    /* further per-step datasets besides the fixed
     * ones above (docs/hdf5-format.md, "Sensors, flows and inputs"):
     * n_series of them, each [N x cols], written and staged like the
     * others; NULL/0 for none. */
    int n_series;
    const struct hymo_ref_series *series;
} hymo_ref_dims;

/* One further per-step dataset (hymo_ref_dims.series): an absolute path
 * ("/sensors/position"; missing groups are created), cols > 0 columns named
 * names[0..cols-1] (the `names` attribute) and one `units` string. */
typedef struct hymo_ref_series {
    const char *path;
    int cols;
    const char *const *names;
    const char *units;
} hymo_ref_series;

/* Root attributes written at open. */
typedef struct {
    const char *model_name;
    const char *model_source; /* full text of the model file */
    const char *model_sha256;
    const char *formulation;
    const char *integrator; /* "trapezoidal-newton" */
    const char *jacobian;
    const char *linear_solver;
    double dt, t_end;
    double tol_position, tol_pressure, tol_spool;
    int max_iter;
    double penalty_alpha; /* 0 if not used */
    /* optional (NULL/0 when unknown): */
    const char *model_physics_sha256; /* canonical hash of the parsed model
                                       * (hymo_model.physics_sha256); root
                                       * attribute `model_physics_sha256` */
    const char *model_path; /* the model file: the output must not replace it */
    int output_every;       /* rows: every N-th step and the last; root
                             * attribute `output_every` when > 0 */
    /* the --set overrides of the model (hymo_model.overrides), one
     * "PATH=VALUE" per line; root attribute `overrides`, written only when
     * non-empty (docs/overrides.md). */
    const char *overrides;
    /* compression of the datasets: 0 (the default) none, 1..9
     * shuffle + deflate at that level (docs/hdf5-format.md, "Storage": it
     * costs more than the integration itself at small dt). */
    int deflate_level;
} hymo_ref_header;

/* A block of n consecutive rows; row-major matrices [n x dim].  One
 * pointer per dataset (docs/hdf5-format.md; the writer finds them through
 * the table of signals, reference/signals.c). */
typedef struct {
    int n;
    const double *time;
    const double *z, *zd, *zdd; /* n x nz */
    const double *p;            /* n x np */
    const double *u;            /* n x nu */
    const double *s, *sd, *force, *work; /* n x na */
    const double *kinetic, *potential, *drift; /* n */
    const double *c_pos, *c_vel, *c_acc;       /* n x ncut (norm per cut joint) */
    const int *iterations;                     /* n */
    const double *residual;                    /* n (final residual norm) */
    /* the rows of the writer's further datasets
     * (hymo_ref_dims.series): series[k] is n x series[k].cols, row-major;
     * may be NULL when the writer has none. */
    const double *const *series;
} hymo_ref_block;

/* Opaque writer of a reference file (hymo_ref_writer_open, then _close or
 * _discard). */
typedef struct hymo_ref_writer hymo_ref_writer;

/* Starts a reference file for `path`: checks the path
 * (hymo_output_path_check against header->model_path), creates the
 * temporary file (hymo_ref_writer_temp_path), writes the root attributes
 * of `header` and creates the per-step datasets shaped by `dims`; readers
 * may open it while it is written.  On success *writer is the new writer
 * (the caller ends it with hymo_ref_writer_close or _discard); on error
 * *writer is NULL, nothing is left behind and the status is
 * HYMO_ERR_ARGUMENT (NULL argument, empty path, negative dimension),
 * HYMO_ERR_NOMEM, HYMO_ERR_IO or HYMO_ERR_HDF5. */
hymo_status hymo_ref_writer_open(hymo_ref_writer **writer, const char *path,
                                 const hymo_ref_header *header, const hymo_ref_dims *dims,
                                 hymo_error *err);
/* Appends block->n rows (n >= 0) to the per-step datasets.  Rows are
 * staged in memory and written at chunk boundaries: when the buffer is
 * full, for the file's first chunk, or 1 s of wall time after the last
 * write; the rest at close.  HYMO_ERR_ARGUMENT for a
 * NULL argument, a negative n or a NULL array of a non-empty dataset; once
 * a write has failed every later append fails with that status. */
hymo_status hymo_ref_writer_append(hymo_ref_writer *writer, const hymo_ref_block *block,
                                   hymo_error *err);
/* Writes summary attributes and `complete`, closes, renames to the final
 * path (also when complete == 0: a failed run keeps its steps).  If any
 * write or the close failed (disk full, file-size limit, I/O error), the
 * file may be damaged: it is deleted, never renamed, an existing file at the
 * final path is left untouched, and the status is HYMO_ERR_IO or
 * HYMO_ERR_HDF5.  Always frees the writer. */
hymo_status hymo_ref_writer_close(hymo_ref_writer *writer, const hymo_run_summary *summary,
                                  hymo_error *err);
/* Closes and deletes the temporary file (nothing is left behind). */
void hymo_ref_writer_discard(hymo_ref_writer *writer);
/* The temporary file the writer writes to: "PATH.XXXXXX.partial", a name
 * unique to this writer, created exclusively (O_EXCL) in the directory of
 * PATH, so concurrent writers of one PATH never share a file. */
const char *hymo_ref_writer_temp_path(const hymo_ref_writer *writer);

/* Checks the output files of one command before anything is computed:
 * HYMO_ERR_ARGUMENT, with one message naming both paths, if an output is
 * empty, an existing directory or other non-regular file, the same file as
 * one of the n_inputs paths `inputs` (the model file, a reference read by
 * the same command, a system file, its FMUs; NULL entries and inputs that
 * do not exist are skipped), or the same file as another output.  Two
 * paths are the same file when both exist with the same device and inode
 * (also through links), or else when their resolved names agree (the
 * realpath of the directory and the last name component). */
hymo_status hymo_output_paths_check(const char *const *outs, int n_outs, const char *const *inputs, int n_inputs,
                                    hymo_error *err);
/* hymo_output_paths_check of one output. */
hymo_status hymo_output_path_check(const char *out, const char *const *inputs, int n_inputs,
                                   hymo_error *err);

/* Extra data (e.g. the optional /cosim group, docs/hdf5-format.md), written
 * any time between open and close.
 *
 * hymo_ref_writer_put_matrix writes a whole [rows x cols] row-major double
 * matrix at `path` (e.g. "cosim/residual_energy"; a leading '/' is optional,
 * missing intermediate groups are created), chunked (and compressed) like the
 * per-step datasets and extendible along the rows.  cols == 0 means a 1-D
 * dataset [rows].  `units` (required) becomes the scalar `units` attribute;
 * if col_names != NULL and cols > 0, col_names[0..cols-1] become the `names`
 * string-array attribute.  An existing object at `path` is an error
 * (HYMO_ERR_ARGUMENT); HDF5 failures are HYMO_ERR_HDF5 naming the dataset. */
hymo_status hymo_ref_writer_put_matrix(hymo_ref_writer *w, const char *path, int rows, int cols,
                                       const double *data, const char *units,
                                       const char *const *col_names, hymo_error *err);
/* The same matrix written in parts: the call with row0 == 0 creates it
 * [rows x cols] with its attributes (as hymo_ref_writer_put_matrix), each
 * call writes rows row0 .. row0 + n - 1 from data ([n x cols]); the parts
 * together are the whole matrix (a row never written is 0). */
hymo_status hymo_ref_writer_put_matrix_part(hymo_ref_writer *w, const char *path, int rows, int cols, int row0, int n,
                                            const double *data, const char *units, const char *const *col_names,
                                            hymo_error *err);
/* Scalar attribute `name` on the group (or dataset) `group`, e.g.
 * ("cosim", "scheme", "jacobi").  A missing group is created (with its
 * intermediate groups); an existing attribute of that name is replaced.
 * The root group is refused (its attributes belong to the writer).
 * String attributes are variable-length UTF-8, doubles H5T_IEEE_F64LE,
 * ints H5T_STD_I32LE. */
hymo_status hymo_ref_writer_put_attr_str(hymo_ref_writer *w, const char *group, const char *name,
                                         const char *value, hymo_error *err);
/* Same, a double attribute. */
hymo_status hymo_ref_writer_put_attr_double(hymo_ref_writer *w, const char *group,
                                            const char *name, double value, hymo_error *err);
/* Same, an int attribute. */
hymo_status hymo_ref_writer_put_attr_int(hymo_ref_writer *w, const char *group, const char *name,
                                         int value, hymo_error *err);

/* A whole file in memory. Matrices row-major [n x dim]; the reader fills
 * and hymo_ref_free frees the per-step data through the table of signals
 * (reference/signals.c). */
typedef struct {
    int n; /* rows */
    int nz, np, nu, na, ncut;
    int format_version;
    int complete;
    char model_name[HYMO_REF_TEXT_MAX];
    char model_sha256[65];
    char formulation[HYMO_REF_TEXT_MAX];
    double dt, t_end;
    char (*z_names)[HYMO_REF_TEXT_MAX];
    char (*p_names)[HYMO_REF_TEXT_MAX];
    char (*u_names)[HYMO_REF_TEXT_MAX];
    char (*actuator_names)[HYMO_REF_TEXT_MAX];
    char (*cut_names)[HYMO_REF_TEXT_MAX];
    double *time;
    double *z, *zd, *zdd, *p, *u;
    double *s, *sd, *force, *work;
    double *kinetic, *potential, *drift;
    double *c_pos, *c_vel, *c_acc;
    int *iterations;
    double *residual;
    hymo_run_summary summary;
    /* the rest of the root attributes and the per-coordinate units
     * of /states/z ("rad" or "m"; zd, zdd append "/s", "/s^2"). */
    char (*z_units)[HYMO_REF_TEXT_MAX];
    char *model_source; /* full model file text, NUL-terminated */
    char hymo_version[HYMO_REF_TEXT_MAX];
    char created_utc[HYMO_REF_TEXT_MAX];
    char integrator[HYMO_REF_TEXT_MAX];
    char jacobian[HYMO_REF_TEXT_MAX];
    char linear_solver[HYMO_REF_TEXT_MAX];
    double tol_position, tol_pressure, tol_spool;
    int max_iter;
    double penalty_alpha;
    /* 1 if the /solver, /energy, /constraints summary attributes were
     * present; 0 for a killed run's ".partial" file, whose summary is then
     * recomputed from the datasets (t_reached, drift, work, constraint
     * maxima, iterations); n_steps = -1 (unknown), wall_time = 0,
     * jacobian_evaluations = 0, independent = "unknown". */
    int has_summary;
    /* the optional /cosim group of co-simulation runs
     * (docs/hdf5-format.md).  has_cosim = 0 and every pointer NULL when the
     * file has no /cosim group.  When it has one, the three residual
     * datasets are required (n rows; n_bonds columns for the matrices); the
     * attributes are descriptive: a missing string attribute reads as "",
     * a missing number as NAN (n_bonds then comes from the datasets). */
    int has_cosim;
    int n_bonds;
    double *residual_power, *residual_energy; /* n x n_bonds: W, J (accumulated) */
    double *residual_energy_total;            /* n: J */
    char cosim_scheme[HYMO_REF_TEXT_MAX];        /* "jacobi" | "gauss-seidel-mech-first" | ... */
    char cosim_coupling[HYMO_REF_TEXT_MAX];      /* "velocity-force" | "velocity-pressure" */
    char cosim_extrapolation[HYMO_REF_TEXT_MAX]; /* "0".."3" | "quadratic" | "interface-model" */
    char cosim_hyd_integrator[HYMO_REF_TEXT_MAX];
    char cosim_mech_integrator[HYMO_REF_TEXT_MAX];
    char cosim_status[HYMO_REF_TEXT_MAX]; /* "stable" | "unstable" */
    double cosim_H, cosim_h_m, cosim_h_h; /* macro step, mechanical and hydraulic steps, s */
    char cosim_status_reason[HYMO_REF_TEXT_MAX];
    double cosim_residual_energy_final; /* J (attribute residual_energy_final) */
    /* Bond names from the `names` attribute of /cosim/residual_energy
     * (n_bonds entries); NULL if that attribute is absent. */
    char (*bond_names)[HYMO_REF_TEXT_MAX];
    /* root attributes `model_physics_sha256` ("" in files written
     * before it existed) and `output_every` (0 if absent). */
    char model_physics_sha256[65];
    int output_every;
    /* root attribute `overrides` (the run's --set overrides, one
     * "PATH=VALUE" per line); NULL when the file has none. */
    char *overrides;
    /* the file is being written (docs/hdf5-format.md, "Reading a
     * file while it is written").  live = 1: a writer process holds the
     * file now (its advisory lock); swmr = 1: the file is still in HDF5's
     * single-writer/multiple-reader mode (a live writer, or one that was
     * killed), read with H5F_ACC_SWMR_READ; its rows are those of /time
     * (the other datasets may already hold more, which are not read). */
    int live, swmr;
    /* data_checksums = 1: the file declares Fletcher32 checksums on its
     * datasets (root attribute `data_checksum`), and every stored value
     * of every dataset was read and matched them (a mismatch fails the
     * read); 0: a file without data checksums (older hymo versions). */
    int data_checksums;
} hymo_reference;

/* Loads a whole file (also a killed run's "OUT.h5.partial").  Errors name
 * the file and the missing/inconsistent dataset or attribute:
 * HYMO_ERR_IO (cannot open), HYMO_ERR_HDF5 (not HDF5, missing or malformed
 * content, inconsistent row counts, unsupported format_version). */
hymo_status hymo_ref_read(const char *path, hymo_reference **out, hymo_error *err);
/* Frees a reference from hymo_ref_read and all its arrays; NULL is a
 * no-op. */
void hymo_ref_free(hymo_reference *ref);

/* Cross-checks a file read by hymo_ref_read before it is trusted as a
 * reference or a run (docs/hdf5-format.md, "Consistency"): a complete file
 * must have its summary, rows = its step count (+1 for t = 0; with
 * output_every N: every N-th step and the last), a finite, non-decreasing
 * /time from its first to its last row, and a last time equal to
 * t_reached and (within half a step) to t_end.  HYMO_ERR_HDF5 naming the
 * file (`path`) and the mismatch; HYMO_OK for an incomplete file whose rows
 * are consistent so far. */
hymo_status hymo_ref_validate(const hymo_reference *ref, const char *path, hymo_error *err);

/* Model identity of two files (or a file and a loaded model) from their
 * text hashes (model_sha256) and physics hashes (model_physics_sha256, ""
 * if unknown): HYMO_MODEL_SAME_TEXT if the texts are identical,
 * HYMO_MODEL_SAME_PHYSICS if the texts differ but both physics hashes are
 * known and equal (only comments, formatting, the description or the
 * `simulation` section differ), HYMO_MODEL_DIFFERENT otherwise. */
enum { HYMO_MODEL_DIFFERENT = 0, HYMO_MODEL_SAME_PHYSICS = 1, HYMO_MODEL_SAME_TEXT = 2 };
/* Returns one of the HYMO_MODEL_* values above; NULL or "" hashes count as
 * unknown. */
int hymo_model_identity(const char *sha256_a, const char *physics_a, const char *sha256_b,
                        const char *physics_b);

/* SHA-256 of a buffer as 64 lowercase hex chars + NUL. */
void hymo_sha256_hex(const void *data, size_t len, char out[65]);

#ifdef __cplusplus
}
#endif
#endif
