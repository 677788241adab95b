/* Golden answers: every figure and every per-step signal of the shipped
 * models, pinned to the results of the code at the time the golden files
 * were written (docs/golden.md).
 *
 * Each case runs a model through the public API only (include/hymo/:
 * hymo_run or hymo_cosim_run with HDF5 output), reads the file back with
 * the public reader (hymo_ref_read; the /cosim/signals datasets, which the
 * reader does not load, with HDF5 itself) and compares against
 * data/golden/<case>.txt:
 *
 * - every summary figure: the in-memory summary the run returns ("run.*",
 *   what `hymo run` / `hymo cosim` print) and the one stored in the file
 *   ("file.summary.*", what `hymo info` prints), the root and /cosim attributes,
 *   the dimensions; wall times are skipped;
 * - for every column of every per-step dataset: max |v|, sum v and
 *   sum |v| over all rows (so no row escapes), and the values at 101
 *   evenly spaced rows including the first and the last.
 *
 * Tolerance: integers and strings exact; reals |a - b| <= GOLDEN_RTOL
 * times the scale: max(|a|, |b|) for single figures, the column's largest
 * |value| over the whole run for sampled values (zero crossings), sum |v|
 * for the column sums.  Measured spread (x86-64, gcc 12.2, at 5820d9d): the golden
 * files come from a Release (-O3) build; the Debug (-O0) build and the
 * ASan/UBSan Debug build reproduce them bit for bit in every case (max rel
 * diff = 0), so GOLDEN_RTOL only allows for a reordering of floating-point
 * operations in a refactor.
 *
 * Regenerate (only for an intended change of results, with the reason in
 * the commit message): scripts/golden.sh write, or run this binary with
 * HYMO_GOLDEN_WRITE=1.  HYMO_GOLDEN_DIR overrides the directory of the
 * golden files (default data/golden), HYMO_GOLDEN_FILTER=PATTERN runs only
 * the matching cases, HYMO_GOLDEN_KEEP=1 keeps the HDF5 outputs. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_hdf5.h"

#include "hymo/compare.h"
#include "hymo/cosim.h"
#include "hymo/error.h"
#include "hymo/model.h"
#include "hymo/reference.h"
#include "hymo/sim.h"
#include "test_util.h"

#define GOLDEN_RTOL 1e-14
#define GOLDEN_SAMPLES 101 /* sampled rows per dataset (first and last included) */

/* ------------------------------------------------------------------ */
/* The cases                                                          */

typedef struct {
    const char *name;  /* golden file: <HYMO_GOLDEN_DIR>/<name>.txt */
    const char *model; /* data/<model> */
    int cosim;         /* 0: hymo_run; 1: hymo_cosim_run */
    hymo_formulation_kind formulation;
    hymo_jacobian_mode jacobian;
    /* co-simulation only */
    hymo_cosim_scheme scheme;
    hymo_coupling_kind coupling;
    hymo_approx_kind approx;
    hymo_hyd_integrator_kind hyd;
    hymo_mech_integrator_kind mech;
    double H, h_h;      /* h_m = H */
    int with_reference; /* pass the monolithic default run as reference (error metrics) */
} golden_case;

#define DS HYMO_FORMULATION_DOUBLE_STEP
#define PEN HYMO_FORMULATION_PENALTY
#define NUM HYMO_JACOBIAN_NUMERIC
#define FAST HYMO_JACOBIAN_FAST
#define RUN(name, model, form, jac) {name, model, 0, form, jac, 0, 0, 0, 0, 0, 0.0, 0.0, 0}

/* Monolithic runs: model defaults (dt, t_end, tolerances, dense LU) from
 * hymo_run_options_default, whole span: the whole test takes about 40 s
 * under ASan, so nothing is shortened.  Co-simulations: the model's 30 s,
 * h_h = 0.1 ms, h_m = H, fast Jacobian (formulation unused by index1). */
static const golden_case cases[] = {
    RUN("fourbar_double-step_numeric", "fourbar.yaml", DS, NUM),
    RUN("fourbar_double-step_fast", "fourbar.yaml", DS, FAST),
    RUN("fourbar_penalty_numeric", "fourbar.yaml", PEN, NUM),
    RUN("fourbar_penalty_fast", "fourbar.yaml", PEN, FAST),
    RUN("quickreturn_double-step_numeric", "quickreturn.yaml", DS, NUM),
    RUN("quickreturn_double-step_fast", "quickreturn.yaml", DS, FAST),
    RUN("quickreturn_penalty_numeric", "quickreturn.yaml", PEN, NUM),
    RUN("quickreturn_penalty_fast", "quickreturn.yaml", PEN, FAST),
    RUN("crane1_double-step_numeric", "crane1.yaml", DS, NUM),
    RUN("crane1_double-step_fast", "crane1.yaml", DS, FAST),
    RUN("crane1_penalty_numeric", "crane1.yaml", PEN, NUM),
    RUN("crane1_penalty_fast", "crane1.yaml", PEN, FAST),
    RUN("crane2_double-step_numeric", "crane2.yaml", DS, NUM),
    RUN("crane2_double-step_fast", "crane2.yaml", DS, FAST),
    RUN("crane2_penalty_numeric", "crane2.yaml", PEN, NUM),
    RUN("crane2_penalty_fast", "crane2.yaml", PEN, FAST),
    /* docs/cosimulation.md's example, with the monolithic reference */
    {"cosim_crane1_jacobi_vp_p2_rk4", "crane1.yaml", 1, DS, FAST, HYMO_SCHEME_JACOBI,
     HYMO_COUPLING_VELOCITY_PRESSURE, HYMO_APPROX_LAGRANGE2, HYMO_HYD_RK4, HYMO_MECH_TRAPEZOIDAL, 1e-3, 1e-4, 1},
    /* Gauss-Seidel, velocity-force, interface model (keeps crane2's two
     * circuits coupled), trapezoidal hydraulics, penalty mechanics, H = 2 ms */
    {"cosim_crane2_gs-mech_vf_im_trap_penalty", "crane2.yaml", 1, PEN, FAST,
     HYMO_SCHEME_GAUSS_SEIDEL_MECH_FIRST, HYMO_COUPLING_VELOCITY_FORCE, HYMO_APPROX_INTERFACE_MODEL,
     HYMO_HYD_TRAPEZOIDAL, HYMO_MECH_TRAPEZOIDAL, 2e-3, 1e-4, 0},
    /* index-1 mechanics (semi-implicit Euler), hydraulics first, quadratic, Euler */
    {"cosim_crane1_gs-hyd_vf_quadratic_euler_index1", "crane1.yaml", 1, DS, FAST,
     HYMO_SCHEME_GAUSS_SEIDEL_HYD_FIRST, HYMO_COUPLING_VELOCITY_FORCE, HYMO_APPROX_QUADRATIC, HYMO_HYD_EULER,
     HYMO_MECH_INDEX1, 1e-3, 1e-4, 0},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

/* ------------------------------------------------------------------ */
/* A record: the figures and sampled columns of one run               */

enum { V_INT, V_REAL, V_STR };

#define KEY_MAX 192
#define STR_MAX 640

typedef struct {
    char key[KEY_MAX];
    int kind;
    long long i;
    double d;
    char s[STR_MAX];
} figure;

typedef struct {
    char key[KEY_MAX];
    int is_int;
    double maxabs, sum, l1; /* over all rows */
    double *v;              /* values at the sampled rows */
} column;

typedef struct {
    figure *fig;
    int n_fig, cap_fig;
    column *col;
    int n_col, cap_col;
    long n_rows;    /* rows of the file */
    int n_samples;  /* sampled rows */
    long *rows;     /* their indices */
    char error[2048]; /* first problem building or parsing (empty: none) */
} record;

static void record_free(record *r)
{
    for (int c = 0; c < r->n_col; ++c) free(r->col[c].v);
    free(r->col);
    free(r->fig);
    free(r->rows);
    memset(r, 0, sizeof *r);
}

static void record_error(record *r, const char *msg, const char *what)
{
    if (!r->error[0]) snprintf(r->error, sizeof r->error, "%.64s%.1500s", msg, what);
}

static figure *add_figure(record *r, const char *key, int kind)
{
    if (r->n_fig == r->cap_fig) {
        int cap = r->cap_fig ? 2 * r->cap_fig : 64;
        figure *f = realloc(r->fig, (size_t)cap * sizeof *f);
        if (!f) {
            record_error(r, "out of memory", "");
            return NULL;
        }
        r->fig = f;
        r->cap_fig = cap;
    }
    figure *f = &r->fig[r->n_fig++];
    memset(f, 0, sizeof *f);
    snprintf(f->key, sizeof f->key, "%s", key);
    f->kind = kind;
    return f;
}

static void add_int(record *r, const char *key, long long v)
{
    figure *f = add_figure(r, key, V_INT);
    if (f) f->i = v;
}

static void add_real(record *r, const char *key, double v)
{
    figure *f = add_figure(r, key, V_REAL);
    if (f) f->d = v;
}

static void add_str(record *r, const char *key, const char *v)
{
    figure *f = add_figure(r, key, V_STR);
    if (!f) return;
    snprintf(f->s, sizeof f->s, "%s", v);
    if (strchr(f->s, '\n')) record_error(r, "string with a newline: ", key);
}

static column *add_column(record *r, const char *key, int is_int)
{
    if (r->n_col == r->cap_col) {
        int cap = r->cap_col ? 2 * r->cap_col : 64;
        column *c = realloc(r->col, (size_t)cap * sizeof *c);
        if (!c) {
            record_error(r, "out of memory", "");
            return NULL;
        }
        r->col = c;
        r->cap_col = cap;
    }
    column *c = &r->col[r->n_col];
    memset(c, 0, sizeof *c);
    snprintf(c->key, sizeof c->key, "%s", key);
    c->is_int = is_int;
    c->v = calloc(r->n_samples > 0 ? (size_t)r->n_samples : 1, sizeof *c->v);
    if (!c->v) {
        record_error(r, "out of memory", "");
        return NULL;
    }
    r->n_col++;
    return c;
}

/* Evenly spaced rows 0 .. n-1 (all of them if n <= GOLDEN_SAMPLES). */
static void set_rows(record *r, long n)
{
    r->n_rows = n;
    r->n_samples = n < GOLDEN_SAMPLES ? (int)n : GOLDEN_SAMPLES;
    r->rows = calloc(r->n_samples > 0 ? (size_t)r->n_samples : 1, sizeof *r->rows);
    if (!r->rows) {
        record_error(r, "out of memory", "");
        r->n_samples = 0;
        return;
    }
    for (int k = 0; k < r->n_samples; ++k)
        r->rows[k] = r->n_samples == 1 ? 0 : (long)((double)k * (double)(n - 1) / (double)(r->n_samples - 1) + 0.5);
}

/* Column j of a row-major [n_rows x cols] matrix (cols = 0: a vector). */
static void add_data(record *r, const char *key, const double *dbl, const int *itg, int cols, int j)
{
    column *c = add_column(r, key, itg != NULL);
    if (!c) return;
    int stride = cols > 0 ? cols : 1;
    for (long i = 0; i < r->n_rows; ++i) {
        double v = itg ? (double)itg[i * stride + j] : dbl[i * stride + j];
        if (fabs(v) > c->maxabs || isnan(v)) c->maxabs = fabs(v);
        c->sum += v;
        c->l1 += fabs(v);
    }
    for (int k = 0; k < r->n_samples; ++k)
        c->v[k] = itg ? (double)itg[r->rows[k] * stride + j] : dbl[r->rows[k] * stride + j];
}

/* One column per name: "<dataset>:<name>[<unit>]" (unit optional). */
static void add_matrix(record *r, const char *dataset, const double *data, int cols,
                       const char (*names)[HYMO_REF_TEXT_MAX], const char (*units)[HYMO_REF_TEXT_MAX],
                       const char *unit_suffix)
{
    char key[KEY_MAX];
    for (int j = 0; j < cols; ++j) {
        if (units)
            snprintf(key, sizeof key, "%s:%s[%s%s]", dataset, names ? names[j] : "?", units[j], unit_suffix);
        else if (names)
            snprintf(key, sizeof key, "%s:%s", dataset, names[j]);
        else
            snprintf(key, sizeof key, "%.150s:%d", dataset, j);
        add_data(r, key, data, NULL, cols, j);
    }
}

/* ------------------------------------------------------------------ */
/* What a run reports                                                 */

static void add_run_summary(record *r, const char *prefix, const hymo_run_summary *s)
{
    char k[KEY_MAX];
#define S_STR(f) (snprintf(k, sizeof k, "%s.%s", prefix, #f), add_str(r, k, s->f))
#define S_INT(f) (snprintf(k, sizeof k, "%s.%s", prefix, #f), add_int(r, k, (long long)s->f))
#define S_REAL(f) (snprintf(k, sizeof k, "%s.%s", prefix, #f), add_real(r, k, s->f))
    S_STR(model_name);
    S_STR(formulation);
    S_STR(jacobian);
    S_STR(linear_solver);
    S_STR(integrator);
    S_REAL(dt);
    S_REAL(t_end);
    S_REAL(t_reached);
    S_INT(n_steps);
    S_INT(complete);
    S_REAL(peak_drift);
    S_REAL(max_work);
    S_REAL(relative_drift);
    S_REAL(max_constraint_position);
    S_REAL(max_constraint_velocity);
    S_REAL(max_constraint_acceleration);
    S_REAL(mean_iterations);
    S_INT(max_iterations);
    S_INT(jacobian_evaluations);
    S_STR(independent);
    S_INT(n_reselections);
    S_INT(has_accuracy); /* the run's own error estimate (/accuracy) */
    S_STR(accuracy_method);
    S_REAL(z_max_error);
    S_REAL(p_max_error);
    S_REAL(s_max_error);
    /* wall_time skipped */
#undef S_STR
#undef S_INT
#undef S_REAL
}

static void add_cosim_summary(record *r, const hymo_cosim_summary *s)
{
#define C_STR(f) add_str(r, "run." #f, s->f)
#define C_INT(f) add_int(r, "run." #f, (long long)s->f)
#define C_REAL(f) add_real(r, "run." #f, s->f)
    C_INT(stable);
    C_STR(reason);
    C_REAL(t_reached);
    C_INT(n_macro);
    C_INT(n_bonds);
    C_REAL(residual_energy_final);
    C_REAL(residual_energy_max_abs);
    C_REAL(peak_drift);
    C_REAL(max_work);
    C_REAL(max_constraint_position);
    C_REAL(mean_mech_iterations);
    C_INT(hyd_steps);
    C_INT(hyd_rhs_evals);
    C_INT(has_errors);
    /* wall_time skipped */
#undef C_STR
#undef C_INT
#undef C_REAL
    if (!s->has_errors) return;
    const hymo_compare_result *e = &s->errors;
    char k[KEY_MAX];
    add_int(r, "run.errors.n_samples", e->n_samples);
    add_real(r, "run.errors.t_start", e->t_start);
    add_real(r, "run.errors.t_end", e->t_end);
    for (int i = 0; i < HYMO_CMP_SIGNALS; ++i) {
        const char *sig = hymo_compare_signal_name(i);
        snprintf(k, sizeof k, "run.errors.rms.%s", sig);
        add_real(r, k, e->rms[i]);
        snprintf(k, sizeof k, "run.errors.max.%s", sig);
        add_real(r, k, e->max[i]);
        snprintf(k, sizeof k, "run.errors.worst_rms.%s", sig);
        add_int(r, k, e->worst_rms[i]);
        snprintf(k, sizeof k, "run.errors.worst_max.%s", sig);
        add_int(r, k, e->worst_max[i]);
        snprintf(k, sizeof k, "run.errors.t_worst_max.%s", sig);
        add_real(r, k, e->t_worst_max[i]);
    }
    add_int(r, "run.errors.has_residual_energy", e->has_residual_energy);
    add_real(r, "run.errors.residual_energy_final", e->residual_energy_final);
    add_real(r, "run.errors.residual_energy_max_abs", e->residual_energy_max_abs);
    add_real(r, "run.errors.residual_energy_rms_diff", e->residual_energy_rms_diff);
}

/* Root attributes and dimensions of the file (hymo_version and
 * created_utc skipped: not results). */
static void add_file_header(record *r, const hymo_reference *f)
{
    add_int(r, "file.rows", f->n);
    add_int(r, "file.nz", f->nz);
    add_int(r, "file.np", f->np);
    add_int(r, "file.nu", f->nu);
    add_int(r, "file.na", f->na);
    add_int(r, "file.ncut", f->ncut);
    add_int(r, "file.format_version", f->format_version);
    add_int(r, "file.complete", f->complete);
    add_int(r, "file.has_summary", f->has_summary);
    add_str(r, "file.model_name", f->model_name);
    add_str(r, "file.model_sha256", f->model_sha256);
    add_str(r, "file.formulation", f->formulation);
    add_str(r, "file.integrator", f->integrator);
    add_str(r, "file.jacobian", f->jacobian);
    add_str(r, "file.linear_solver", f->linear_solver);
    add_real(r, "file.dt", f->dt);
    add_real(r, "file.t_end", f->t_end);
    add_real(r, "file.tol_position", f->tol_position);
    add_real(r, "file.tol_pressure", f->tol_pressure);
    add_real(r, "file.tol_spool", f->tol_spool);
    add_int(r, "file.max_iter", f->max_iter);
    add_real(r, "file.penalty_alpha", f->penalty_alpha);
    add_int(r, "file.has_cosim", f->has_cosim);
    if (!f->has_cosim) return;
    add_str(r, "file.cosim.scheme", f->cosim_scheme);
    add_str(r, "file.cosim.coupling", f->cosim_coupling);
    add_str(r, "file.cosim.extrapolation", f->cosim_extrapolation);
    add_str(r, "file.cosim.hyd_integrator", f->cosim_hyd_integrator);
    add_str(r, "file.cosim.mech_integrator", f->cosim_mech_integrator);
    add_str(r, "file.cosim.status", f->cosim_status);
    add_str(r, "file.cosim.status_reason", f->cosim_status_reason);
    add_real(r, "file.cosim.H", f->cosim_H);
    add_real(r, "file.cosim.h_m", f->cosim_h_m);
    add_real(r, "file.cosim.h_h", f->cosim_h_h);
    add_int(r, "file.cosim.n_bonds", f->n_bonds);
    add_real(r, "file.cosim.residual_energy_final", f->cosim_residual_energy_final);
}

/* Every per-step dataset hymo_ref_read loads. */
static void add_datasets(record *r, const hymo_reference *f)
{
    add_data(r, "time", f->time, NULL, 0, 0);
    add_matrix(r, "states/z", f->z, f->nz, f->z_names, f->z_units, "");
    add_matrix(r, "states/zd", f->zd, f->nz, f->z_names, f->z_units, "/s");
    add_matrix(r, "states/zdd", f->zdd, f->nz, f->z_names, f->z_units, "/s^2");
    add_matrix(r, "states/p", f->p, f->np, f->p_names, NULL, "");
    add_matrix(r, "states/U", f->u, f->nu, f->u_names, NULL, "");
    add_matrix(r, "actuators/s", f->s, f->na, f->actuator_names, NULL, "");
    add_matrix(r, "actuators/sd", f->sd, f->na, f->actuator_names, NULL, "");
    add_matrix(r, "actuators/force", f->force, f->na, f->actuator_names, NULL, "");
    add_matrix(r, "actuators/work", f->work, f->na, f->actuator_names, NULL, "");
    add_data(r, "energy/kinetic", f->kinetic, NULL, 0, 0);
    add_data(r, "energy/potential", f->potential, NULL, 0, 0);
    add_data(r, "energy/drift", f->drift, NULL, 0, 0);
    add_matrix(r, "constraints/position", f->c_pos, f->ncut, f->cut_names, NULL, "");
    add_matrix(r, "constraints/velocity", f->c_vel, f->ncut, f->cut_names, NULL, "");
    add_matrix(r, "constraints/acceleration", f->c_acc, f->ncut, f->cut_names, NULL, "");
    add_data(r, "solver/iterations", NULL, f->iterations, 0, 0);
    add_data(r, "solver/residual", f->residual, NULL, 0, 0);
    if (!f->has_cosim) return;
    add_matrix(r, "cosim/residual_power", f->residual_power, f->n_bonds, f->bond_names, NULL, "");
    add_matrix(r, "cosim/residual_energy", f->residual_energy, f->n_bonds, f->bond_names, NULL, "");
    add_data(r, "cosim/residual_energy_total", f->residual_energy_total, NULL, 0, 0);
}

/* /cosim/signals/<name> ([N] or [N x cols]), which hymo_ref_read does not
 * load, read with HDF5 directly (layout: docs/hdf5-format.md). */
static void add_cosim_signals(record *r, const char *path)
{
    H5E_auto2_t old_func;
    void *old_data;
    H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t grp = file >= 0 ? H5Gopen2(file, "/cosim/signals", H5P_DEFAULT) : -1;
    H5G_info_t info;
    if (grp < 0 || H5Gget_info(grp, &info) < 0) {
        record_error(r, "cannot open /cosim/signals in ", path);
        info.nlinks = 0;
    }
    for (hsize_t i = 0; i < info.nlinks; ++i) {
        char name[HYMO_REF_TEXT_MAX], key[KEY_MAX];
        if (H5Lget_name_by_idx(grp, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT) < 0) {
            record_error(r, "cannot list /cosim/signals in ", path);
            break;
        }
        hid_t ds = H5Dopen2(grp, name, H5P_DEFAULT);
        hid_t sp = ds >= 0 ? H5Dget_space(ds) : -1;
        hsize_t dims[2] = {0, 0};
        int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
        if (rank >= 1 && rank <= 2) H5Sget_simple_extent_dims(sp, dims, NULL);
        int cols = rank == 2 ? (int)dims[1] : 0;
        size_t count = (size_t)dims[0] * (size_t)(cols > 0 ? cols : 1);
        int ok = rank >= 1 && rank <= 2 && (long)dims[0] == r->n_rows;
        double *data = ok ? malloc((count ? count : 1) * sizeof *data) : NULL;
        if (!data || H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
            record_error(r, "cannot read /cosim/signals/", name);
        } else if (cols == 0) {
            snprintf(key, sizeof key, "cosim/signals/%s", name);
            add_data(r, key, data, NULL, 0, 0);
        } else {
            snprintf(key, sizeof key, "cosim/signals/%s", name);
            add_matrix(r, key, data, cols, NULL, NULL, "");
        }
        free(data);
        if (sp >= 0) H5Sclose(sp);
        if (ds >= 0) H5Dclose(ds);
    }
    if (grp >= 0) H5Gclose(grp);
    if (file >= 0) H5Fclose(file);
    H5Eset_auto2(H5E_DEFAULT, old_func, old_data);
}

/* HYMO_GOLDEN_KEEP=1 keeps each run's output (golden_<case>.h5 in the
 * working directory) for inspection with h5dump or hymo info. */
static int keep_files(void)
{
    const char *k = getenv("HYMO_GOLDEN_KEEP");
    return k && k[0] && strcmp(k, "0") != 0;
}

/* Runs a case and fills rec; returns 0, or -1 with rec->error set. */
static int run_case(const golden_case *gc, record *rec)
{
    char model_path[1024], out[256], ref_out[256];
    snprintf(model_path, sizeof model_path, "%s/%s", HYMO_DATA_DIR, gc->model);
    snprintf(out, sizeof out, "golden_%s.h5", gc->name);
    snprintf(ref_out, sizeof ref_out, "golden_%s_reference.h5", gc->name);
    hymo_model *model = NULL;
    hymo_reference *ref = NULL, *file = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    hymo_status st = hymo_model_load_file(model_path, &model, &err);
    if (st == HYMO_OK && !gc->cosim) {
        hymo_run_options opt;
        hymo_run_options_default(&opt, model);
        opt.formulation = gc->formulation;
        opt.jacobian = gc->jacobian;
        hymo_run_summary sum;
        memset(&sum, 0, sizeof sum);
        st = hymo_run(model, &opt, out, &sum, &err);
        if (st == HYMO_OK) st = hymo_ref_read(out, &file, &err);
        if (st == HYMO_OK) {
            set_rows(rec, file->n);
            add_run_summary(rec, "run", &sum);
        }
    } else if (st == HYMO_OK) {
        if (gc->with_reference) {
            hymo_run_options ro;
            hymo_run_options_default(&ro, model);
            hymo_run_summary rs;
            st = hymo_run(model, &ro, ref_out, &rs, &err);
            if (st == HYMO_OK) st = hymo_ref_read(ref_out, &ref, &err);
            remove(ref_out);
        }
        hymo_cosim_options opt;
        hymo_cosim_options_default(&opt, model);
        opt.scheme = gc->scheme;
        opt.coupling = gc->coupling;
        opt.approx = gc->approx;
        opt.hyd_integrator = gc->hyd;
        opt.mech_integrator = gc->mech;
        opt.mech.formulation = gc->formulation;
        opt.mech.jacobian = gc->jacobian;
        opt.H = opt.mech.dt = gc->H;
        opt.h_h = gc->h_h;
        hymo_cosim_summary sum;
        memset(&sum, 0, sizeof sum);
        if (st == HYMO_OK) st = hymo_cosim_run(model, &opt, ref, out, &sum, &err);
        if (st == HYMO_OK) st = hymo_ref_read(out, &file, &err);
        if (st == HYMO_OK) {
            set_rows(rec, file->n);
            add_cosim_summary(rec, &sum);
        }
    }
    if (st == HYMO_OK) {
        add_run_summary(rec, "file.summary", &file->summary);
        add_file_header(rec, file);
        add_datasets(rec, file);
        if (file->has_cosim) add_cosim_signals(rec, out);
    } else {
        record_error(rec, "run failed: ", err.message);
    }
    if (!keep_files()) remove(out);
    hymo_ref_free(file);
    hymo_ref_free(ref);
    hymo_model_free(model);
    return rec->error[0] ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Golden files                                                        */

static const char *golden_dir(void)
{
    const char *d = getenv("HYMO_GOLDEN_DIR");
    return d && d[0] ? d : HYMO_DATA_DIR "/golden";
}

static int write_mode(void)
{
    const char *w = getenv("HYMO_GOLDEN_WRITE");
    return w && w[0] && strcmp(w, "0") != 0;
}

/* Shortest of %.15g, %.16g, %.17g that reads back exactly. */
static void fmt_real(char *buf, size_t n, double x)
{
    for (int p = 15; p <= 17; ++p) {
        snprintf(buf, n, "%.*g", p, x);
        if (strtod(buf, NULL) == x) return;
    }
}

static int write_golden(const golden_case *gc, const record *r, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    char b[64], b2[64], b3[64];
    fprintf(f, "# hymo golden answers, case %s (tests/reference/test_golden.c, docs/golden.md).\n", gc->name);
    fprintf(f, "# Written by HYMO_GOLDEN_WRITE=1 test_golden (scripts/golden.sh write); do not edit.\n");
    fprintf(f, "# Lines: 'int|real|str KEY VALUE' figures; 'col KEY IS_INT MAX|V| SUM(V) SUM|V|' (all rows);\n");
    fprintf(f, "# 'samples N' then 'row INDEX V...' with one value per col, in col order.\n");
    for (int i = 0; i < r->n_fig; ++i) {
        const figure *g = &r->fig[i];
        if (g->kind == V_INT)
            fprintf(f, "int %s %lld\n", g->key, g->i);
        else if (g->kind == V_REAL)
            fmt_real(b, sizeof b, g->d), fprintf(f, "real %s %s\n", g->key, b);
        else
            fprintf(f, "str %s %s\n", g->key, g->s);
    }
    for (int c = 0; c < r->n_col; ++c) {
        const column *k = &r->col[c];
        fmt_real(b, sizeof b, k->maxabs);
        fmt_real(b2, sizeof b2, k->sum);
        fmt_real(b3, sizeof b3, k->l1);
        fprintf(f, "col %s %d %s %s %s\n", k->key, k->is_int, b, b2, b3);
    }
    fprintf(f, "samples %d\n", r->n_samples);
    for (int s = 0; s < r->n_samples; ++s) {
        fprintf(f, "row %ld", r->rows[s]);
        for (int c = 0; c < r->n_col; ++c) {
            fmt_real(b, sizeof b, r->col[c].v[s]);
            fprintf(f, " %s", b);
        }
        fputc('\n', f);
    }
    int bad = ferror(f);
    return (fclose(f) != 0 || bad) ? -1 : 0;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

/* Next whitespace-delimited token of *p (NUL-terminated in place). */
static char *token(char **p)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t') ++s;
    if (!*s) {
        *p = s;
        return NULL;
    }
    char *e = s;
    while (*e && *e != ' ' && *e != '\t') ++e;
    if (*e) *e++ = '\0';
    *p = e;
    return s;
}

static int parse_real(const char *s, double *out)
{
    char *end;
    if (!s) return -1;
    *out = strtod(s, &end);
    return (end == s || *end) ? -1 : 0;
}

static int parse_golden(const char *path, record *r)
{
    char *text = read_text(path);
    if (!text) {
        record_error(r, "cannot read golden file ", path);
        return -1;
    }
    int sample = 0, lineno = 0;
    char *line = text;
    while (line && *line && !r->error[0]) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        ++lineno;
        char *p = line, *kind = token(&p);
        char where[64];
        snprintf(where, sizeof where, "line %d", lineno);
        if (!kind || kind[0] == '#') {
            /* comment or empty */
        } else if (!strcmp(kind, "int") || !strcmp(kind, "real") || !strcmp(kind, "str")) {
            char *key = token(&p);
            if (!key) {
                record_error(r, "golden file: no key in ", where);
                break;
            }
            if (kind[0] == 'i') {
                char *v = token(&p), *end = NULL;
                long long x = v ? strtoll(v, &end, 10) : 0;
                if (!v || *end) record_error(r, "golden file: bad integer in ", where);
                add_int(r, key, x);
            } else if (kind[0] == 'r') {
                double x = 0.0;
                if (parse_real(token(&p), &x)) record_error(r, "golden file: bad number in ", where);
                add_real(r, key, x);
            } else {
                if (*p == ' ') ++p; /* the value is the rest of the line, exactly */
                add_str(r, key, p);
            }
        } else if (!strcmp(kind, "col")) {
            char *key = token(&p), *ii = token(&p);
            column *c = key && ii ? add_column(r, key, atoi(ii)) : NULL;
            if (!c || parse_real(token(&p), &c->maxabs) || parse_real(token(&p), &c->sum) ||
                parse_real(token(&p), &c->l1))
                record_error(r, "golden file: bad col line, ", where);
        } else if (!strcmp(kind, "samples")) {
            char *v = token(&p);
            int n = v ? atoi(v) : -1;
            if (n < 0 || r->rows) {
                record_error(r, "golden file: 'samples' must come once, after the col lines: ", where);
                break;
            }
            r->n_samples = n;
            r->rows = calloc(n > 0 ? (size_t)n : 1, sizeof *r->rows);
            for (int c = 0; c < r->n_col && r->rows; ++c) {
                free(r->col[c].v);
                r->col[c].v = calloc(n > 0 ? (size_t)n : 1, sizeof *r->col[c].v);
                if (!r->col[c].v) r->rows = (free(r->rows), NULL);
            }
            if (!r->rows) record_error(r, "out of memory", "");
        } else if (!strcmp(kind, "row")) {
            char *v = token(&p);
            if (sample >= r->n_samples || !v) {
                record_error(r, "golden file: unexpected row, ", where);
                break;
            }
            r->rows[sample] = atol(v);
            for (int c = 0; c < r->n_col; ++c)
                if (parse_real(token(&p), &r->col[c].v[sample])) {
                    record_error(r, "golden file: short or bad row, ", where);
                    break;
                }
            if (token(&p)) record_error(r, "golden file: long row, ", where);
            ++sample;
        } else {
            record_error(r, "golden file: unknown line kind, ", where);
        }
        line = nl ? nl + 1 : NULL;
    }
    if (!r->error[0] && sample != r->n_samples) record_error(r, "golden file: missing rows in ", path);
    free(text);
    return r->error[0] ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* Comparison                                                         */

typedef struct {
    double max_rel;   /* largest relative difference seen */
    char worst[KEY_MAX + 64];
    int n_bad;        /* items beyond the tolerance */
    int n_checked;
} compare_stats;

/* |a - b| / scale; 0 for identical values (also both NaN). */
static double rel_diff(double a, double b, double scale)
{
    if (a == b || (isnan(a) && isnan(b))) return 0.0;
    double d = fabs(a - b);
    if (!(scale > 0.0) || !isfinite(d)) return INFINITY;
    return d / scale;
}

static void check(compare_stats *cs, const char *what, double rel, int exact, const char *detail)
{
    cs->n_checked++;
    if (rel > cs->max_rel || (isnan(rel) && !isnan(cs->max_rel))) {
        cs->max_rel = rel;
        snprintf(cs->worst, sizeof cs->worst, "%s", what);
    }
    if (exact ? rel != 0.0 : !(rel <= GOLDEN_RTOL)) {
        if (cs->n_bad < 20) print_message("  MISMATCH %s: %s (rel diff %.3g)\n", what, detail, rel);
        cs->n_bad++;
    }
}

static const figure *find_figure(const record *r, const char *key)
{
    for (int i = 0; i < r->n_fig; ++i)
        if (!strcmp(r->fig[i].key, key)) return &r->fig[i];
    return NULL;
}

static const column *find_column(const record *r, const char *key)
{
    for (int i = 0; i < r->n_col; ++i)
        if (!strcmp(r->col[i].key, key)) return &r->col[i];
    return NULL;
}

static void compare(const record *gold, const record *run, compare_stats *cs)
{
    char detail[2 * STR_MAX + 64], what[KEY_MAX + 64];
    for (int i = 0; i < gold->n_fig; ++i) {
        const figure *g = &gold->fig[i], *x = find_figure(run, g->key);
        if (!x || x->kind != g->kind) {
            check(cs, g->key, INFINITY, 1, "missing from the run, or of another type");
            continue;
        }
        if (g->kind == V_INT) {
            snprintf(detail, sizeof detail, "golden %lld, run %lld", g->i, x->i);
            check(cs, g->key, g->i == x->i ? 0.0 : INFINITY, 1, detail);
        } else if (g->kind == V_STR) {
            snprintf(detail, sizeof detail, "golden '%s', run '%s'", g->s, x->s);
            check(cs, g->key, strcmp(g->s, x->s) ? INFINITY : 0.0, 1, detail);
        } else {
            snprintf(detail, sizeof detail, "golden %.17g, run %.17g", g->d, x->d);
            check(cs, g->key, rel_diff(g->d, x->d, fmax(fabs(g->d), fabs(x->d))), 0, detail);
        }
    }
    for (int i = 0; i < run->n_fig; ++i)
        if (!find_figure(gold, run->fig[i].key))
            check(cs, run->fig[i].key, INFINITY, 1, "not in the golden file (regenerate it?)");
    for (int i = 0; i < run->n_col; ++i)
        if (!find_column(gold, run->col[i].key))
            check(cs, run->col[i].key, INFINITY, 1, "dataset column not in the golden file (regenerate it?)");

    int same_rows = gold->n_samples == run->n_samples;
    for (int s = 0; same_rows && s < gold->n_samples; ++s) same_rows = gold->rows[s] == run->rows[s];
    if (!same_rows) check(cs, "sampled rows", INFINITY, 1, "different row counts: sampled rows differ");
    for (int c = 0; c < gold->n_col; ++c) {
        const column *g = &gold->col[c], *x = find_column(run, g->key);
        if (!x) {
            check(cs, g->key, INFINITY, 1, "dataset column missing from the run");
            continue;
        }
        double scale = fmax(g->maxabs, x->maxabs), l1 = fmax(g->l1, x->l1);
        snprintf(what, sizeof what, "%s max|v|", g->key);
        snprintf(detail, sizeof detail, "golden %.17g, run %.17g", g->maxabs, x->maxabs);
        check(cs, what, rel_diff(g->maxabs, x->maxabs, scale), g->is_int, detail);
        snprintf(what, sizeof what, "%s sum", g->key);
        snprintf(detail, sizeof detail, "golden %.17g, run %.17g", g->sum, x->sum);
        check(cs, what, rel_diff(g->sum, x->sum, l1), g->is_int, detail);
        snprintf(what, sizeof what, "%s sum|v|", g->key);
        snprintf(detail, sizeof detail, "golden %.17g, run %.17g", g->l1, x->l1);
        check(cs, what, rel_diff(g->l1, x->l1, l1), g->is_int, detail);
        for (int s = 0; same_rows && s < gold->n_samples; ++s) {
            snprintf(what, sizeof what, "%s row %ld", g->key, gold->rows[s]);
            snprintf(detail, sizeof detail, "golden %.17g, run %.17g", g->v[s], x->v[s]);
            check(cs, what, rel_diff(g->v[s], x->v[s], scale), g->is_int, detail);
        }
    }
}

/* ------------------------------------------------------------------ */

static void test_golden_case(void **state)
{
    const golden_case *gc = *state;
    char path[1024], msg[4096] = "";
    snprintf(path, sizeof path, "%s/%s.txt", golden_dir(), gc->name);
    record run, gold;
    memset(&run, 0, sizeof run);
    memset(&gold, 0, sizeof gold);
    if (run_case(gc, &run) != 0) {
        snprintf(msg, sizeof msg, "%s: %s", gc->name, run.error);
    } else if (write_mode()) {
        if (write_golden(gc, &run, path) != 0)
            snprintf(msg, sizeof msg, "%s: cannot write %s", gc->name, path);
        else
            print_message("%s: wrote %s (%d figures, %d columns, %d of %ld rows)\n", gc->name, path, run.n_fig,
                          run.n_col, run.n_samples, run.n_rows);
    } else if (parse_golden(path, &gold) != 0) {
        snprintf(msg, sizeof msg, "%s: %s", gc->name, gold.error);
    } else {
        compare_stats cs;
        memset(&cs, 0, sizeof cs);
        compare(&gold, &run, &cs);
        print_message("%s: %ld rows, %d figures, %d columns x (3 stats + %d rows), %d values checked: "
                      "max rel diff = %.3g%s%s\n",
                      gc->name, run.n_rows, run.n_fig, run.n_col, run.n_samples, cs.n_checked, cs.max_rel,
                      cs.max_rel > 0 ? " at " : "", cs.max_rel > 0 ? cs.worst : "");
        if (cs.n_bad)
            snprintf(msg, sizeof msg, "%s: %d values differ from %s beyond rel %.0e (integers and strings exact)",
                     gc->name, cs.n_bad, path, GOLDEN_RTOL);
    }
    record_free(&run);
    record_free(&gold);
    if (msg[0]) fail_msg("%s", msg);
}

int main(void)
{
    /* HYMO_GOLDEN_FILTER=PATTERN runs only the matching cases (cmocka wildcards * and ?) */
    const char *filter = getenv("HYMO_GOLDEN_FILTER");
    if (filter && filter[0]) cmocka_set_test_filter(filter);
    struct CMUnitTest tests[N_CASES];
    for (int i = 0; i < N_CASES; ++i) {
        memset(&tests[i], 0, sizeof tests[i]);
        tests[i].name = cases[i].name;
        tests[i].test_func = test_golden_case;
        tests[i].initial_state = (void *)&cases[i];
    }
    return _cmocka_run_group_tests("test_golden", tests, N_CASES, NULL, NULL);
}
