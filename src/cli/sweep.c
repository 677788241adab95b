#define _POSIX_C_SOURCE 200809L
/* `hymo sweep`: a grid of co-simulation configurations x communication
 * steps on all cores; for each configuration the achievable H (seed 000
 * §4): the largest H of the list such that it and every smaller H run
 * stable and within the thresholds. */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cosim_internal.h"
#include "cosim_tables.h" /* hymo_cosim_tables_of: TLM */
#include "h5util.h" /* hymo_partial_create, the writer's file driver */
#include "hymo/sim.h"

#define MAX_LIST 64
#define MAX_JOBS 4096 /* threads are allocated for the number asked */

typedef struct {
    hymo_cosim_options opt; /* H set per run */
    int point;              /* index into the --set-grid parameter points */
    int config;             /* index into the configuration list */
    double H;
    hymo_cosim_summary sum;
    hymo_status status;
    char message[512];
    int pass;
    int skipped; /* not run: a smaller H of its configuration failed */
} sweep_job;

typedef struct {
    const hymo_model *model;
    const hymo_reference *ref;
    sweep_job *jobs;
    const int *order; /* execution order: smallest H (slowest) first */
    int n_jobs, next, done;
    pthread_mutex_t lock;
    /* skipping (skip 1): a run starts when every run of its configuration
     * at an earlier H of the list in this queue has finished, and is not
     * run when one of them failed (takeoff: unstable; else not accurate),
     * so that the runs made do not depend on timing */
    int skip, takeoff;
    unsigned char *state; /* per order index: 0 waiting, 1 running, 2 finished */
    int *pos;             /* per job (of jobs): its order index, -1 when not in this queue */
    pthread_cond_t changed;
    double t_start;
    int tty;
    int quiet;          /* no progress lines (MPI ranks other than 0) */
    const char *label;  /* "sweep" or "sweep: rank 0" */
} sweep_queue;

static void progress(sweep_queue *q)
{
    if (q->quiet) return;
    double el = hymo_now_seconds() - q->t_start;
    double eta = q->done > 0 ? el / q->done * (q->n_jobs - q->done) : 0.0;
    int tenth = q->n_jobs >= 10 ? q->n_jobs / 10 : 1;
    if (q->tty)
        fprintf(stderr, "\r%s: %d/%d runs, %.1f s elapsed, about %.0f s left   ", q->label, q->done, q->n_jobs, el,
                eta);
    else if (q->done % tenth == 0 || q->done == q->n_jobs)
        fprintf(stderr, "%s: %d/%d runs, %.1f s elapsed, about %.0f s left\n", q->label, q->done, q->n_jobs, el, eta);
    if (q->tty && q->done == q->n_jobs) fputc('\n', stderr);
    fflush(stderr);
}

/* A finished run that rules out the larger H of its configuration. */
static int run_failed(const sweep_queue *q, const sweep_job *j)
{
    if (j->skipped) return 1;
    if (j->status != HYMO_OK) return 0; /* reported as a run that failed to start */
    return q->takeoff ? !j->sum.stable : j->sum.verdict != HYMO_VERDICT_ACCURATE;
}

/* The next run to start, by order index (q->lock held): -1 when none is
 * left, -2 when the ones left wait for runs in progress.  Runs found
 * ruled out are marked skipped on the way. */
static int next_job(sweep_queue *q)
{
    if (!q->skip) return q->next < q->n_jobs ? q->next++ : -1;
    int waiting = 0;
    while (q->next < q->n_jobs && q->state[q->next] != 0) q->next++;
    for (int o = q->next; o < q->n_jobs; ++o) {
        if (q->state[o] != 0) continue;
        const int k = q->order[o];
        int ready = 1, ruled_out = 0;
        for (int k2 = k - 1; k2 >= 0 && q->jobs[k2].config == q->jobs[k].config; --k2) {
            const int o2 = q->pos[k2];
            if (o2 < 0) continue;
            if (q->state[o2] != 2) ready = 0;
            else if (run_failed(q, &q->jobs[k2])) ruled_out = 1;
        }
        if (ruled_out) { /* a failure at a smaller H: not run */
            sweep_job *j = &q->jobs[k];
            memset(&j->sum, 0, sizeof j->sum);
            j->status = HYMO_OK;
            j->skipped = 1;
            q->state[o] = 2;
            q->done++;
            progress(q);
            continue;
        }
        if (!ready) {
            waiting = 1;
            continue;
        }
        q->state[o] = 1;
        return o;
    }
    return waiting ? -2 : -1;
}

static void *worker(void *arg)
{
    sweep_queue *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        const int o = next_job(q);
        if (o == -1) break;
        if (o == -2) {
            pthread_cond_wait(&q->changed, &q->lock);
            continue;
        }
        pthread_mutex_unlock(&q->lock);
        sweep_job *j = &q->jobs[q->order[o]];
        hymo_error err;
        j->status = hymo_cosim_run(q->model, &j->opt, q->ref, NULL, &j->sum, &err);
        if (j->status != HYMO_OK) snprintf(j->message, sizeof j->message, "%s", err.message);
        pthread_mutex_lock(&q->lock);
        if (q->skip) q->state[o] = 2;
        q->done++;
        progress(q);
        pthread_cond_broadcast(&q->changed);
    }
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

/* ---- configuration grid: "coupling=a,b;extrapolation=0,2;hyd=...;mech=...;scheme=..." ---- */

#define GRID_KEYS HYMO_CLI_GRID_KEYS
typedef hymo_cli_grid grid;

static int split_list(char *text, char **items, int max)
{
    int n = 0;
    for (char *tok = strtok(text, ","); tok; tok = strtok(NULL, ",")) {
        if (n == max) return -1;
        items[n++] = tok;
    }
    return n;
}

int hymo_cli_parse_grid(const char *spec, hymo_cli_grid *g)
{
    static const char *const keys[GRID_KEYS] = {"coupling", "extrapolation", "hyd", "mech", "scheme", "inputs"};
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    char *save = NULL;
    for (char *part = strtok_r(buf, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(part, '=');
        if (!eq) {
            fprintf(stderr, "hymo: error: --configs: '%s' is not KEY=VALUES\n", part);
            return -1;
        }
        *eq = '\0';
        int key = -1;
        for (int k = 0; k < GRID_KEYS; ++k)
            if (!strcmp(part, keys[k])) key = k;
        if (key < 0) {
            fprintf(stderr,
                    "hymo: error: --configs: unknown key '%s' (coupling, extrapolation, hyd, mech, scheme, inputs)\n",
                    part);
            return -1;
        }
        char *items[8];
        int n = split_list(eq + 1, items, 8);
        if (n <= 0) {
            fprintf(stderr, "hymo: error: --configs: %s: between 1 and 8 values\n", keys[key]);
            return -1;
        }
        g->n[key] = n;
        for (int i = 0; i < n; ++i) {
            int bad;
            switch (key) {
            case 0: bad = hymo_coupling_parse(items[i], (hymo_coupling_kind *)&g->v[0][i]); break;
            case 1: bad = hymo_approx_parse(items[i], (hymo_approx_kind *)&g->v[1][i]); break;
            case 2: bad = hymo_hyd_integrator_parse(items[i], (hymo_hyd_integrator_kind *)&g->v[2][i]); break;
            case 3: bad = hymo_mech_integrator_parse(items[i], (hymo_mech_integrator_kind *)&g->v[3][i]); break;
            case 4: bad = hymo_cosim_scheme_parse(items[i], (hymo_cosim_scheme *)&g->v[4][i]); break;
            default: bad = hymo_mech_inputs_parse(items[i], (hymo_mech_inputs_kind *)&g->v[5][i]); break;
            }
            if (bad) {
                fprintf(stderr, "hymo: error: --configs: %s: unknown value '%s'\n", keys[key], items[i]);
                return -1;
            }
        }
    }
    return 0;
}

static void usage_sweep(FILE *out)
{
    fputs("usage: hymo sweep MODEL.yaml -o TABLE [options]\n"
          "\n"
          "Runs every configuration of a grid at every communication step H, on all\n"
          "cores, and reports for each configuration the achievable H: the largest H of\n"
          "the list such that it and every smaller H run stable and within the\n"
          "thresholds.  Writes TABLE.csv (one row per run), TABLE_achievable.csv and\n"
          "TABLE.h5 (both tables).\n"
          "\n"
          "options:\n"
          "  --H LIST              communication steps, comma-separated (default\n"
          "                        0.5e-3,1e-3,2e-3,3e-3,4e-3,5e-3,6e-3,8e-3,10e-3,15e-3)\n"
          "  --configs SPEC        grid, e.g. 'coupling=velocity-force,velocity-pressure;\n"
          "                        extrapolation=0,2,interface-model;hyd=euler,rk4,trapezoidal;\n"
          "                        mech=trapezoidal,index1;scheme=jacobi' (that is the default);\n"
          "                        also inputs=extrapolate,hold (the mechanics' inputs);\n"
          "                        couplings velocity-force, velocity-pressure, tlm\n"
          "  --hh S                hydraulic step (default 1e-4); h_m = H\n"
          "  --reference REF.h5    monolithic reference (default: computed with hymo run\n"
          "                        defaults and kept as TABLE_reference.h5)\n"
          "  --max-rms SIGNAL=V, --max-abs SIGNAL=V, --max-residual-energy J\n"
          "                        accuracy thresholds, as for hymo cosim (default, when\n"
          "                        none is given: --max-rms s=1e-3 --max-abs p=1e6\n"
          "                        --max-residual-energy 50)\n"
          "  --achievable limits|takeoff  limits (default): a run passes when its verdict\n"
          "                        is accurate (stable, every threshold holds); takeoff:\n"
          "                        seed 000's definition, stable runs up to where the final\n"
          "                        residual energy against H takes off: a log-log slope\n"
          "                        above --takeoff-slope (default 6) between neighbouring H,\n"
          "                        energies below --takeoff-floor J (default 0.01) counted\n"
          "                        as the floor; refused for the tlm coupling (its\n"
          "                        residual energy is zero by construction)\n"
          "  --skip-failed         do not make the runs of a configuration past its first\n"
          "                        failed H (they cannot change the achievable H; their\n"
          "                        rows say \"not run\", their figures are nan)\n"
          "  --jobs N              worker threads (default: all cores, at most 4096)\n"
          "  --set PATH=VALUE      override one value of the model file (repeatable;\n"
          "                        docs/overrides.md)\n"
          "  --set-grid PATH=V1,V2,...  a model parameter to vary (repeatable, at most 4,\n"
          "                        each 1..16 values): the whole sweep (its reference,\n"
          "                        TABLE_reference_pN.h5 recording the point's overrides,\n"
          "                        and every configuration x H) runs at every point of the\n"
          "                        cross product; the tables get one column per PATH\n"
          "  --t-end S, --mech-inputs, --formulation, --jacobian, --unstable-ratio,\n"
          "  --unstable-balance-ratio, --unstable-floor, --unstable-energy  as for hymo cosim\n"
          "  --scheme, --coupling, --extrapolation, --hyd-integrator, --mech-integrator\n"
          "                        as for hymo cosim: the value of a key that --configs omits\n"
          "  -o, --output TABLE    the tables' base name (needed)\n"
          "\n"
          "Under mpirun (a build with -DHYMO_MPI=ON), the runs are spread over the ranks,\n"
          "--jobs threads each (default: the node's cores shared among its ranks), and\n"
          "rank 0 writes the same tables (docs/cosimulation.md, \"Sweeps across\n"
          "machines\").\n",
          out);
}

/* ---- model parameter grid: --set-grid PATH=V1,V2,... ---- */

#define MAX_PARAMS 4
#define MAX_PARAM_VALUES 16
#define MAX_POINTS 256
typedef struct {
    int n;
    char buf[MAX_PARAMS][1024];
    const char *path[MAX_PARAMS];
    char *val[MAX_PARAMS][MAX_PARAM_VALUES];
    int nv[MAX_PARAMS];
} param_grid;

static int parse_param(const char *spec, param_grid *pg, int k)
{
    snprintf(pg->buf[k], sizeof pg->buf[k], "%s", spec);
    char *eq = strchr(pg->buf[k], '=');
    if (!eq || eq == pg->buf[k] || !eq[1]) {
        fprintf(stderr, "hymo: error: --set-grid: '%s' is not PATH=V1,V2,...\n", spec);
        return -1;
    }
    *eq = '\0';
    pg->path[k] = pg->buf[k];
    for (int i = 0; i < k; ++i)
        if (!strcmp(pg->path[i], pg->path[k])) {
            fprintf(stderr, "hymo: error: --set-grid: '%s' appears twice\n", pg->path[k]);
            return -1;
        }
    pg->nv[k] = split_list(eq + 1, pg->val[k], MAX_PARAM_VALUES);
    if (pg->nv[k] <= 0) {
        fprintf(stderr, "hymo: error: --set-grid: %s: between 1 and %d values\n", pg->path[k], MAX_PARAM_VALUES);
        return -1;
    }
    return 0;
}

/* Value of parameter k at point p (the last parameter varies fastest). */
static const char *param_value(const param_grid *pg, int p, int k)
{
    for (int i = pg->n - 1; i > k; --i) p /= pg->nv[i];
    return pg->val[k][p % pg->nv[k]];
}

/* A string column (fixed-length strings of 128 bytes) at `name`. */
static int write_str_col(hid_t f, const char *name, const param_grid *pg, int k, const int *point, int n)
{
    char *s = calloc((size_t)(n > 0 ? n : 1) * 128, 1);
    if (!s) return 0;
    for (int i = 0; i < n; ++i) snprintf(s + (size_t)i * 128, 128, "%s", param_value(pg, point[i], k));
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 128);
    hsize_t dim = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dim, NULL);
    hid_t ds = H5Dcreate2(f, name, st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int ok = ds >= 0 && H5Dwrite(ds, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) >= 0;
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(sp);
    H5Tclose(st);
    free(s);
    return ok;
}

/* Opens a temporary file of its own for the table at path
 * (hymo_partial_create: "PATH.XXXXXX.partial", its name in tmp); NULL
 * after one error line. */
static FILE *table_open(const char *path, char *tmp, size_t len)
{
    const int e = hymo_partial_create(path, tmp, len);
    FILE *f = e ? NULL : fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "hymo: error: %s: cannot write: %s\n", path, strerror(e ? e : errno));
        if (!e) remove(tmp);
    }
    return f;
}

/* Closes f, the table written to tmp for path: 0, or -1 after one error
 * line (tmp removed). */
static int table_close(FILE *f, const char *tmp, const char *path)
{
    errno = 0;
    const int ferr = fflush(f); /* a failed write fails again here, with its errno */
    int e = ferr ? errno : 0;
    const int werr = ferror(f);
    const int cerr = fclose(f);
    if (!e && cerr) e = errno;
    if (ferr || werr || cerr) {
        fprintf(stderr, "hymo: error: %s: write failed%s%s\n", path, e ? ": " : "", e ? strerror(e) : "");
        remove(tmp);
        return -1;
    }
    return 0;
}

static const char *base_name(const char *table, char *buf, size_t len)
{
    snprintf(buf, len, "%s", table);
    size_t n = strlen(buf);
    if (n > 4 && (!strcmp(buf + n - 4, ".csv"))) buf[n - 4] = '\0';
    else if (n > 3 && !strcmp(buf + n - 3, ".h5")) buf[n - 3] = '\0';
    return buf;
}

static void config_label(const hymo_cosim_options *o, char *buf, size_t len)
{
    snprintf(buf, len, "%s,%s,%s,%s,%s,%s", hymo_coupling_name(o->coupling), hymo_approx_name(o->approx),
             hymo_hyd_integrator_name(o->hyd_integrator), hymo_mech_integrator_name(o->mech_integrator),
             hymo_cosim_scheme_name(o->scheme), hymo_mech_inputs_name(o->mech_inputs));
}

/* The coupling options every run of the sweep shares and its tables
 * record when given: `--iterate` (iterate_max > 0) and `--H-control
 * energy`.  CSV: extra header names and values, appended to each row
 * (nothing for the defaults, so a default sweep's tables keep their
 * columns); HDF5: root attributes, always. */
static void shared_columns(const hymo_cosim_options *o, FILE *f, int header)
{
    if (o->H_control != HYMO_H_FIXED) {
        if (header)
            fprintf(f, ",H_control,tol_energy_rel,tol_energy_abs,H_min,H_max");
        else
            fprintf(f, ",%s,%g,%g,%g,%g", hymo_H_control_name(o->H_control), o->tol_energy_rel, o->tol_energy_abs,
                    o->H_min, o->H_max);
    }
    if (o->iterate_max > 0) {
        if (header)
            fprintf(f, ",iterate_max,iterate_rtol,iterate_atol,iterate_accel");
        else
            fprintf(f, ",%d,%g,%g,%s", o->iterate_max, o->iterate_rtol, o->iterate_atol,
                    hymo_iterate_accel_name(o->iterate_accel));
    }
}

static int shared_attributes(hid_t f, const hymo_cosim_options *o)
{
    const double iterate_max = (double)o->iterate_max;
    int ok = H5LTset_attribute_string(f, "/", "H_control", hymo_H_control_name(o->H_control)) >= 0;
    ok = ok && H5LTset_attribute_double(f, "/", "iterate_max", &iterate_max, 1) >= 0;
    if (o->H_control != HYMO_H_FIXED) {
        ok = ok && H5LTset_attribute_double(f, "/", "tol_energy_rel", &o->tol_energy_rel, 1) >= 0;
        ok = ok && H5LTset_attribute_double(f, "/", "tol_energy_abs", &o->tol_energy_abs, 1) >= 0;
        ok = ok && H5LTset_attribute_double(f, "/", "H_min", &o->H_min, 1) >= 0;
        ok = ok && H5LTset_attribute_double(f, "/", "H_max", &o->H_max, 1) >= 0;
    }
    if (o->iterate_max > 0) {
        ok = ok && H5LTset_attribute_double(f, "/", "iterate_rtol", &o->iterate_rtol, 1) >= 0;
        ok = ok && H5LTset_attribute_double(f, "/", "iterate_atol", &o->iterate_atol, 1) >= 0;
        ok = ok && H5LTset_attribute_string(f, "/", "iterate_accel", hymo_iterate_accel_name(o->iterate_accel)) >= 0;
    }
    return ok;
}

/* HDF5: one 1-D dataset per numeric column, string columns as fixed
 * strings; written to a temporary name and renamed. */
static int write_h5(const char *tmp, const sweep_job *jobs, int n_jobs, const double *ach, const int *cfg_first,
                    int n_cfg, const char *model_name, const param_grid *pg, const hymo_model *model, int *io_errno)
{
    /* the reference writer's file driver: a failed write makes the file
     * "failed" (later writes dropped), so that H5Fclose still releases the
     * file; with the default driver a failed H5Fclose leaves the file's id
     * registered and HDF5's shutdown at exit crashes on it */
    hymo_h5_io io = {0, 0};
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    hid_t f = -1;
    if (fapl >= 0 && hymo_h5_set_writer_driver(fapl, &io) == 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0)
        f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0) H5Pclose(fapl);
    *io_errno = 0;
    if (f < 0) {
        *io_errno = io.failed;
        return -1;
    }
    int ok = 1;
    hsize_t n = (hsize_t)n_jobs, nc = (hsize_t)n_cfg;
    double *col = calloc((size_t)(n_jobs > n_cfg ? n_jobs : n_cfg) + 1, sizeof(double));
    char *labels = calloc(((size_t)(n_jobs > n_cfg ? n_jobs : n_cfg) + 1) * 128, 1);
    ok = col && labels;
    ok = ok && H5Gclose(H5Gcreate2(f, "runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0;
    ok = ok && H5Gclose(H5Gcreate2(f, "achievable", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) >= 0;
    ok = ok && H5LTset_attribute_string(f, "/", "model_name", model_name) >= 0;
    ok = ok && (n_jobs == 0 || shared_attributes(f, &jobs[0].opt));
    if (ok && model->n_overrides > 0) { /* the --set overrides of every point, one per line (docs/overrides.md) */
        size_t total = 1;
        for (int i = 0; i < model->n_overrides; ++i) total += strlen(model->overrides[i]) + 1;
        char *joined = calloc(total, 1);
        for (int i = 0; joined && i < model->n_overrides; ++i) {
            if (i) strcat(joined, "\n");
            strcat(joined, model->overrides[i]);
        }
        ok = joined && H5LTset_attribute_string(f, "/", "overrides", joined) >= 0;
        free(joined);
    }
#define COLUMN(name, expr, unit) COLUMN_OF(name, expr, unit, 0)
#define FIXED_COLUMN(name, expr, unit) COLUMN_OF(name, expr, unit, 1)
#define COLUMN_OF(name, expr, unit, keep)                                                                   \
    do {                                                                                           \
        for (int i = 0; ok && i < n_jobs; ++i) {                                                   \
            const sweep_job *j = &jobs[i];                                                         \
            col[i] = j->skipped && !keep ? NAN : (expr);                                           \
        }                                                                                          \
        ok = ok && H5LTmake_dataset_double(f, "runs/" name, 1, &n, col) >= 0;                      \
        ok = ok && H5LTset_attribute_string(f, "runs/" name, "units", unit) >= 0;                  \
    } while (0)
    FIXED_COLUMN("H", j->H, "s");
    FIXED_COLUMN("stable", j->status == HYMO_OK && j->sum.stable, "1");
    FIXED_COLUMN("pass", j->pass, "1");
    COLUMN("rms_s", j->sum.errors.rms[HYMO_CMP_S], "m");
    COLUMN("max_s", j->sum.errors.max[HYMO_CMP_S], "m");
    COLUMN("rms_sd", j->sum.errors.rms[HYMO_CMP_SD], "m/s");
    COLUMN("rms_p", j->sum.errors.rms[HYMO_CMP_P], "Pa");
    COLUMN("rms_z", j->sum.errors.rms[HYMO_CMP_Z], "rad");
    COLUMN("residual_energy_final", j->sum.residual_energy_final, "J");
    COLUMN("residual_energy_max_abs", j->sum.residual_energy_max_abs, "J");
    COLUMN("peak_drift", j->sum.peak_drift, "J");
    COLUMN("t_reached", j->sum.t_reached, "s");
    COLUMN("wall_time", j->sum.wall_time, "s");
    COLUMN("work_abs", j->sum.work_abs, "J");
    COLUMN("max_residual_ratio", j->sum.max_residual_ratio, "1");
    COLUMN("max_balance_ratio", j->sum.max_balance_ratio, "1");
    COLUMN("verdict", (double)j->sum.verdict, "0 stable 1 accurate 2 inaccurate 3 unstable; nan not run");
#undef COLUMN
#undef FIXED_COLUMN
#undef COLUMN_OF
    for (int i = 0; ok && i < n_jobs; ++i) config_label(&jobs[i].opt, labels + (size_t)i * 128, 128);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 128);
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t ds = ok ? H5Dcreate2(f, "runs/config", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    ok = ok && ds >= 0 && H5Dwrite(ds, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, labels) >= 0;
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(sp);
    for (int c = 0; ok && c < n_cfg; ++c) {
        config_label(&jobs[cfg_first[c]].opt, labels + (size_t)c * 128, 128);
        col[c] = ach[c];
    }
    sp = H5Screate_simple(1, &nc, NULL);
    ds = ok ? H5Dcreate2(f, "achievable/config", st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
    ok = ok && ds >= 0 && H5Dwrite(ds, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, labels) >= 0;
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(sp);
    H5Tclose(st);
    /* one string column per --set-grid parameter, named by its path */
    int *pts = calloc((size_t)(n_jobs > n_cfg ? n_jobs : n_cfg) + 1, sizeof(int));
    ok = ok && pts;
    for (int k = 0; ok && k < pg->n; ++k) {
        char name[1100];
        for (int i = 0; i < n_jobs; ++i) pts[i] = jobs[i].point;
        snprintf(name, sizeof name, "runs/%s", pg->path[k]);
        ok = write_str_col(f, name, pg, k, pts, n_jobs);
        for (int c = 0; c < n_cfg; ++c) pts[c] = jobs[cfg_first[c]].point;
        snprintf(name, sizeof name, "achievable/%s", pg->path[k]);
        ok = ok && write_str_col(f, name, pg, k, pts, n_cfg);
    }
    free(pts);
    ok = ok && H5LTmake_dataset_double(f, "achievable/H", 1, &nc, col) >= 0;
    ok = ok && H5LTset_attribute_string(f, "achievable/H", "units", "s") >= 0;
    free(col);
    free(labels);
    io.quiet = 1; /* a failure while closing is recorded in io.failed */
    if (H5Fclose(f) < 0) ok = 0;
    *io_errno = io.failed;
    return ok && !io.failed ? 0 : -1;
}

/* --set-grid PATH=V1,V2,...: one more parameter of the grid. */
static int set_grid_option(const char *name, const char *value, void *dest)
{
    param_grid *pg = dest;
    if (pg->n == MAX_PARAMS) {
        fprintf(stderr, "hymo: error: %s: at most %d parameters\n", name, MAX_PARAMS);
        return -1;
    }
    if (parse_param(value, pg, pg->n)) return -1;
    pg->n++;
    return 0;
}

/* --jobs N: threads (per MPI rank). */
static int jobs_option(const char *name, const char *value, void *dest)
{
    char *end;
    errno = 0;
    long n = strtol(value, &end, 10);
    if (*end || end == value || errno || n < 1 || n > MAX_JOBS) {
        fprintf(stderr, "hymo: error: %s: '%s' is not a number of threads (1..%d)\n", name, value, MAX_JOBS);
        return -1;
    }
    *(int *)dest = (int)n;
    return 0;
}

/* --achievable limits|takeoff: *dest = 0 or 1. */
static int achievable_option(const char *name, const char *value, void *dest)
{
    if (strcmp(value, "limits") && strcmp(value, "takeoff")) {
        fprintf(stderr, "hymo: error: %s: '%s' is not limits or takeoff\n", name, value);
        return -1;
    }
    *(int *)dest = !strcmp(value, "takeoff");
    return 0;
}

/* ---- one process or the ranks of an MPI job (hymo_sweep_comm) ---- */

static void local_layout(void *content, int *rank, int *size, int *local_size)
{
    (void)content;
    *rank = 0;
    *size = *local_size = 1;
}
static int local_max(void *content, int v)
{
    (void)content;
    return v;
}
static long local_sum(void *content, long v)
{
    (void)content;
    return v;
}
static int local_bcast(void *content, void **data, size_t *n)
{
    (void)content, (void)data, (void)n;
    return 0;
}
static int local_gather(void *content, const void *mine, size_t n, void **all, size_t *n_all)
{
    (void)content;
    *all = malloc(n ? n : 1);
    if (!*all) {
        fprintf(stderr, "hymo: error: out of memory\n");
        return -1;
    }
    if (n) memcpy(*all, mine, n);
    *n_all = n;
    return 0;
}
static const hymo_sweep_comm_ops local_ops = {
    .layout = local_layout,
    .max = local_max,
    .sum = local_sum,
    .bcast = local_bcast,
    .gather = local_gather,
};

/* One run's result as the ranks send it to rank 0 (the same binary on
 * every rank: the bytes as they are). */
typedef struct {
    int index; /* into the job list */
    hymo_status status;
    int skipped;
    char message[512];
    hymo_cosim_summary sum;
} job_record;

/* Ranks other than 0 print the same setup messages as rank 0: they go to
 * a temporary file, shown only when rank 0 did not fail the same way. */
static int capture_begin(FILE **file)
{
    fflush(stderr);
    *file = tmpfile();
    const int saved = *file ? dup(STDERR_FILENO) : -1;
    if (saved < 0 || dup2(fileno(*file), STDERR_FILENO) < 0) {
        if (saved >= 0) close(saved);
        if (*file) fclose(*file);
        *file = NULL;
        return -1;
    }
    return saved;
}

static void capture_end(int saved, FILE *file, int show, int rank)
{
    if (saved < 0) return;
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    char line[1024];
    rewind(file);
    while (show && fgets(line, sizeof line, file)) fprintf(stderr, "rank %d: %s", rank, line);
    fclose(file);
}

/* The reference at rp, read on every rank: over several ranks rank 0
 * reads the file and sends its bytes; the others read them from a
 * temporary file (so rp need not be on their file system).  Collective;
 * returns -1 when every rank holds it, else the exit status (the same on
 * every rank; messages printed where the failure happened). */
static int ref_share(const hymo_sweep_comm *comm, int rank, int size, const char *rp, hymo_reference **ref)
{
    hymo_error err;
    hymo_error_clear(&err);
    if (size == 1) {
        if (hymo_ref_read(rp, ref, &err) == HYMO_OK) return -1;
        fprintf(stderr, "hymo: error: %s\n", err.message);
        return EXIT_BAD_INPUT;
    }
    int st = -1;
    void *data = NULL;
    size_t n = 0;
    if (rank == 0) {
        errno = 0;
        FILE *f = fopen(rp, "rb");
        long len = -1;
        if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
            (data = malloc((size_t)len)) && fread(data, 1, (size_t)len, f) == (size_t)len)
            n = (size_t)len;
        else {
            fprintf(stderr, "hymo: error: %s: cannot read%s%s\n", rp, errno ? ": " : "", errno ? strerror(errno) : "");
            st = EXIT_BAD_INPUT;
        }
        if (f) fclose(f);
    }
    st = comm->ops->max(comm->content, st);
    if (st < 0 && comm->ops->bcast(comm->content, &data, &n)) st = EXIT_BAD_INPUT;
    if (st < 0) {
        const char *path = rp;
        char tmp[1100] = "";
        if (rank != 0) {
            const char *dir = getenv("TMPDIR");
            snprintf(tmp, sizeof tmp, "%s/hymo-sweep-reference-XXXXXX", dir && dir[0] ? dir : "/tmp");
            int fd = mkstemp(tmp);
            FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
            int ok = f && fwrite(data, 1, n, f) == n;
            if (f) ok = fclose(f) == 0 && ok;
            else if (fd >= 0) close(fd);
            if (!ok) {
                fprintf(stderr, "hymo: error: rank %d: %s: cannot write the reference: %s\n", rank, tmp, strerror(errno));
                st = EXIT_BAD_INPUT;
            }
            path = tmp;
        }
        if (st < 0 && hymo_ref_read(path, ref, &err) != HYMO_OK) {
            fprintf(stderr, "hymo: error: rank %d: %s\n", rank, err.message);
            st = EXIT_BAD_INPUT;
        }
        if (tmp[0]) remove(tmp);
    }
    free(data);
    return comm->ops->max(comm->content, st);
}

int hymo_cli_parse_h_list(const char *h_list, double *Hs, int *n_out)
{
    char buf[2048], *items[MAX_LIST];
    snprintf(buf, sizeof buf, "%s", h_list ? h_list : "0.5e-3,1e-3,2e-3,3e-3,4e-3,5e-3,6e-3,8e-3,10e-3,15e-3");
    const int nH = split_list(buf, items, MAX_LIST);
    if (nH <= 0) {
        fprintf(stderr, "hymo: error: --H: between 1 and %d values\n", MAX_LIST);
        return -1;
    }
    for (int i = 0; i < nH; ++i)
        if (hymo_cli_positive("--H", items[i], &Hs[i])) return -1;
    for (int i = 1; i < nH; ++i) /* ascending */
        for (int k = i; k > 0 && Hs[k] < Hs[k - 1]; --k) {
            double t = Hs[k];
            Hs[k] = Hs[k - 1];
            Hs[k - 1] = t;
        }
    for (int i = 1; i < nH; ++i)
        if (Hs[i] == Hs[i - 1]) {
            fprintf(stderr, "hymo: error: --H: %g appears twice\n", Hs[i]);
            return -1;
        }
    *n_out = nH;
    return 0;
}

/* The runs: per parameter point, per configuration of the grid (cfg_first:
 * its first run), per H. */
static void fill_jobs(sweep_job *jobs, int *cfg_first, const hymo_cosim_options *base, const grid *g,
                      const double *Hs, int nH, int n_points)
{
    int c = 0, k = 0;
    for (int pt = 0; pt < n_points; ++pt)
    for (int i0 = 0; i0 < g->n[0]; ++i0)
        for (int i1 = 0; i1 < g->n[1]; ++i1)
            for (int i2 = 0; i2 < g->n[2]; ++i2)
                for (int i3 = 0; i3 < g->n[3]; ++i3)
                    for (int i4 = 0; i4 < g->n[4]; ++i4)
                    for (int i5 = 0; i5 < g->n[5]; ++i5, ++c) {
                        cfg_first[c] = k;
                        for (int h = 0; h < nH; ++h, ++k) {
                            sweep_job *j = &jobs[k];
                            j->opt = *base;
                            j->opt.coupling = g->v[0][i0];
                            j->opt.approx = g->v[1][i1];
                            j->opt.hyd_integrator = g->v[2][i2];
                            j->opt.mech_integrator = g->v[3][i3];
                            j->opt.scheme = g->v[4][i4];
                            j->opt.mech_inputs = g->v[5][i5];
                            j->opt.H = j->opt.mech.dt = Hs[h];
                            j->point = pt;
                            j->config = c;
                            j->H = Hs[h];
                        }
                    }
}

/* Which runs pass and each configuration's achievable H (ach[c], 0 if
 * none): with takeoff, stable up to where the log-log slope of |final
 * residual energy| against H exceeds takeoff_slope (energies below
 * takeoff_floor counted as takeoff_floor); else the run's verdict.
 * Returns the number of runs that failed to start. */
static int achievable(sweep_job *jobs, int n_jobs, const int *cfg_first, int n_cfg, const double *Hs, int nH,
                      int takeoff, double takeoff_slope, double takeoff_floor, double *ach)
{
    int failed_runs = 0;
    for (int i = 0; i < n_jobs; ++i) {
        sweep_job *j = &jobs[i];
        if (j->status != HYMO_OK) {
            failed_runs++;
            continue;
        }
        /* limits: the run's verdict (stable and every threshold holds);
         * takeoff: stable, judged per configuration below */
        j->pass = takeoff ? j->sum.stable : j->sum.verdict == HYMO_VERDICT_ACCURATE;
    }
    for (int c = 0; c < n_cfg; ++c) {
        ach[c] = 0.0;
        for (int h = 0; h < nH && jobs[cfg_first[c] + h].pass; ++h) {
            if (takeoff && h > 0) { /* seed 000: where |E_final| against H takes off */
                const double e0 = fmax(fabs(jobs[cfg_first[c] + h - 1].sum.residual_energy_final), takeoff_floor);
                const double e1 = fmax(fabs(jobs[cfg_first[c] + h].sum.residual_energy_final), takeoff_floor);
                if (log(e1 / e0) / log(Hs[h] / Hs[h - 1]) > takeoff_slope) {
                    for (int k2 = h; k2 < nH; ++k2) jobs[cfg_first[c] + k2].pass = 0;
                    break;
                }
            }
            ach[c] = Hs[h];
        }
    }
    return failed_runs;
}

/* The tables BASE.csv (every run), BASE_achievable.csv and BASE.h5, each
 * written to a temporary file of its own (table_open); when all three are
 * complete they are renamed to their names together, under an exclusive
 * lock on the directory (flock), so that of concurrent sweeps with the
 * same -o one sweep's three tables are in place at a time.  0, or 1 after
 * one error line: then no table is renamed and every temporary file is
 * removed. */
static int write_tables(const char *base_buf, const sweep_job *jobs, int n_jobs, const double *ach,
                        const int *cfg_first, int n_cfg, const param_grid *pg, const hymo_model *model)
{
    enum { CSV, ACH, H5, N_TABLES };
    static const char *const suffix[N_TABLES] = {".csv", "_achievable.csv", ".h5"};
    char path[N_TABLES][1100], tmp[N_TABLES][1200];
    int n_tmp = 0, failed = 0;
    for (int t = 0; t < N_TABLES; ++t) snprintf(path[t], sizeof path[t], "%s%s", base_buf, suffix[t]);
    FILE *f = table_open(path[CSV], tmp[CSV], sizeof tmp[CSV]);
    if (f) {
        n_tmp = 1;
        for (int k2 = 0; k2 < pg->n; ++k2) fprintf(f, "%s,", pg->path[k2]);
        fprintf(f, "coupling,extrapolation,hyd_integrator,mech_integrator,scheme,mech_inputs,H,stable,pass,rms_s,"
                   "max_s,rms_sd,rms_p,rms_z,residual_energy_final,residual_energy_max_abs,peak_drift,t_reached,"
                   "wall_time,reason");
        if (n_jobs > 0) shared_columns(&jobs[0].opt, f, 1);
        fputc('\n', f);
        for (int i = 0; i < n_jobs; ++i) {
            const sweep_job *j = &jobs[i];
            char label[128];
            config_label(&j->opt, label, sizeof label);
            for (int k2 = 0; k2 < pg->n; ++k2) fprintf(f, "%s,", param_value(pg, j->point, k2));
            const hymo_compare_result *e = &j->sum.errors;
            if (j->skipped) {
                fprintf(f, "%s,%g,0,0,nan,nan,nan,nan,nan,nan,nan,nan,nan,nan,\"not run: a smaller H failed\"",
                        label, j->H);
                shared_columns(&j->opt, f, 0);
                fputc('\n', f);
                continue;
            }
            fprintf(f, "%s,%g,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.4f,\"%s\"", label, j->H,
                    j->status == HYMO_OK && j->sum.stable, j->pass, e->rms[HYMO_CMP_S], e->max[HYMO_CMP_S],
                    e->rms[HYMO_CMP_SD], e->rms[HYMO_CMP_P], e->rms[HYMO_CMP_Z], j->sum.residual_energy_final,
                    j->sum.residual_energy_max_abs, j->sum.peak_drift, j->sum.t_reached, j->sum.wall_time,
                    j->status == HYMO_OK ? j->sum.reason : j->message);
            shared_columns(&j->opt, f, 0);
            fputc('\n', f);
        }
        if (table_close(f, tmp[CSV], path[CSV])) n_tmp = 0, failed = 1;
    } else
        failed = 1;
    f = failed ? NULL : table_open(path[ACH], tmp[ACH], sizeof tmp[ACH]);
    if (f) {
        n_tmp = 2;
        for (int k2 = 0; k2 < pg->n; ++k2) fprintf(f, "%s,", pg->path[k2]);
        fprintf(f, "coupling,extrapolation,hyd_integrator,mech_integrator,scheme,mech_inputs,achievable_H");
        if (n_jobs > 0) shared_columns(&jobs[0].opt, f, 1);
        fputc('\n', f);
        for (int c = 0; c < n_cfg; ++c) {
            char label[128];
            config_label(&jobs[cfg_first[c]].opt, label, sizeof label);
            for (int k2 = 0; k2 < pg->n; ++k2) fprintf(f, "%s,", param_value(pg, jobs[cfg_first[c]].point, k2));
            fprintf(f, "%s,%g", label, ach[c]);
            shared_columns(&jobs[cfg_first[c]].opt, f, 0);
            fputc('\n', f);
        }
        if (table_close(f, tmp[ACH], path[ACH])) n_tmp = 1, failed = 1;
    } else
        failed = 1;
    if (!failed) {
        const int e = hymo_partial_create(path[H5], tmp[H5], sizeof tmp[H5]);
        int io_errno = e;
        if (!e) n_tmp = 3;
        if (e || write_h5(tmp[H5], jobs, n_jobs, ach, cfg_first, n_cfg, model->name, pg, model, &io_errno)) {
            fprintf(stderr, "hymo: error: %s: HDF5 write failed%s%s\n", path[H5], io_errno ? ": " : "",
                    io_errno ? strerror(io_errno) : "");
            failed = 1;
        }
    }
    if (!failed) {
        /* the three renames under the directory's lock (best effort: no
         * lock where the file system has none) */
        char dir[1100];
        snprintf(dir, sizeof dir, "%s", base_buf);
        char *slash = strrchr(dir, '/');
        if (slash) slash[slash == dir] = '\0';
        const int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) flock(dfd, LOCK_EX);
        for (int t = 0; t < N_TABLES && !failed; ++t)
            if (rename(tmp[t], path[t]) != 0) {
                fprintf(stderr, "hymo: error: %s: cannot rename the table into place: %s\n", path[t], strerror(errno));
                failed = 1;
            } else
                tmp[t][0] = '\0';
        if (dfd >= 0) close(dfd); /* releases the lock */
    }
    for (int t = 0; failed && t < n_tmp; ++t)
        if (tmp[t][0]) remove(tmp[t]);
    return failed;
}

/* The achievable H of every configuration on stdout, with the criterion. */
static void print_achievable(const hymo_cosim_options *base, const sweep_job *jobs, const int *cfg_first, int n_cfg,
                             const double *ach, const param_grid *pg, int takeoff, double takeoff_slope,
                             double takeoff_floor)
{
    if (takeoff) {
        printf("achievable H (seed 000's take-off: stable, and the log-log slope of |final residual energy|\n"
               "against H, energies below %g J counted as %g J, at most %g up to it)\n",
               takeoff_floor, takeoff_floor, takeoff_slope);
    } else {
        printf("achievable H (stable, and thresholds:");
        for (int k2 = 0; k2 < HYMO_CMP_SIGNALS; ++k2) {
            if (base->max_rms[k2] > 0) printf(" RMS %s <= %g", hymo_compare_signal_name(k2), base->max_rms[k2]);
            if (base->max_abs[k2] > 0) printf(" max %s <= %g", hymo_compare_signal_name(k2), base->max_abs[k2]);
        }
        if (base->max_residual_energy > 0) printf(" max |residual energy| <= %g J", base->max_residual_energy);
        printf(")\n");
    }
    for (int k2 = 0; k2 < pg->n; ++k2) printf("%-14s ", pg->path[k2]);
    if (pg->n) printf("\n");
    printf("%s%-18s %-16s %-12s %-12s %-24s %-12s %s\n", pg->n ? "  " : "", "coupling", "extrapolation", "hydraulics", "mechanics",
           "scheme", "mech_inputs", "achievable H [ms]");
    for (int c = 0; c < n_cfg; ++c) {
        const hymo_cosim_options *o = &jobs[cfg_first[c]].opt;
        if (pg->n && (c == 0 || jobs[cfg_first[c]].point != jobs[cfg_first[c - 1]].point)) {
            for (int k2 = 0; k2 < pg->n; ++k2) printf("%-14s ", param_value(pg, jobs[cfg_first[c]].point, k2));
            printf("\n");
        }
        printf("%s%-18s %-16s %-12s %-12s %-24s %-12s %g\n", pg->n ? "  " : "", hymo_coupling_name(o->coupling),
               hymo_approx_name(o->approx), hymo_hyd_integrator_name(o->hyd_integrator),
               hymo_mech_integrator_name(o->mech_integrator), hymo_cosim_scheme_name(o->scheme),
               hymo_mech_inputs_name(o->mech_inputs), ach[c] * 1e3);
    }
}

/* The reference file of parameter point pt (n_points 0: no --set-grid). */
static void reference_name(char *path, size_t len, const char *base_buf, int n_points, int pt)
{
    if (n_points > 0)
        snprintf(path, len, "%s_reference_p%d.h5", base_buf, pt);
    else
        snprintf(path, len, "%s_reference.h5", base_buf);
}

/* The files the sweep writes (its three tables; without --reference, the
 * references it computes: n_points of them, or one when n_points is 0)
 * against its inputs (the model file, the reference) and each other
 * (hymo_cli_outputs_check), and the output directory for being writable:
 * a temporary file of the first table is created there and removed.  0,
 * or 2 after one error line. */
static int outputs_check(const char *table, const char *base_buf, const char *model_path, const char *ref_path,
                         int n_points)
{
    const int n_refs = ref_path ? 0 : n_points > 0 ? n_points : 1;
    char(*names)[1100] = calloc((size_t)(3 + n_refs), sizeof *names);
    const char **outs = calloc((size_t)(3 + n_refs), sizeof *outs);
    int r = -1;
    if (!names || !outs) {
        fprintf(stderr, "hymo: error: out of memory\n");
        r = EXIT_BAD_INPUT;
    }
    for (int k = 0; r < 0 && k < 3 + n_refs; ++k) {
        if (k < 3)
            snprintf(names[k], sizeof names[k], "%s%s", base_buf, k == 0 ? ".csv" : k == 1 ? "_achievable.csv" : ".h5");
        else
            reference_name(names[k], sizeof names[k], base_buf, n_points, k - 3);
        outs[k] = names[k];
    }
    char what[1200];
    snprintf(what, sizeof what, "sweep -o %s", table);
    const char *inputs[2] = {model_path, ref_path};
    if (r < 0) r = hymo_cli_outputs_check(what, outs, 3 + n_refs, inputs, 2);
    if (r < 0) {
        char tmp[1200];
        const int e = hymo_partial_create(names[0], tmp, sizeof tmp);
        if (e) {
            fprintf(stderr, "hymo: error: %s: cannot write the tables there (%s): %s\n", what, names[0], strerror(e));
            r = EXIT_BAD_INPUT;
        } else
            remove(tmp);
    }
    free(names);
    free(outs);
    return r < 0 ? 0 : r;
}

int hymo_cli_sweep(int argc, char **argv)
{
    return hymo_cli_sweep_with(argc, argv, NULL);
}

int hymo_cli_sweep_with(int argc, char **argv, const hymo_sweep_comm *comm)
{
    const hymo_sweep_comm local = {NULL, &local_ops};
    if (!comm) comm = &local;
    int rank = 0, size = 1, local_size = 1;
    comm->ops->layout(comm->content, &rank, &size, &local_size);
    const char *model_path = NULL, *table = NULL, *ref_path = NULL, *h_list = NULL;
    const char *configs = "coupling=velocity-force,velocity-pressure;extrapolation=0,2,interface-model;"
                          "hyd=euler,rk4,trapezoidal;mech=trapezoidal,index1;scheme=jacobi";
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs_n = 0; /* 0: all cores (of the node, shared among its ranks) */
    int status = EXIT_BAD_INPUT, takeoff = 0, n_pos = 0, setup_ok = 0;
    double takeoff_slope = 6.0, takeoff_floor = 0.01;
    hymo_model *model = NULL;
    hymo_reference *ref = NULL;
    sweep_job *jobs = NULL;
    int *cfg_first = NULL, *order = NULL, *mine = NULL, *pos = NULL;
    unsigned char *state = NULL;
    int skip_failed = 0;
    double *ach = NULL;
    job_record *records = NULL, *all_records = NULL;
    hymo_error err;
    char ref_tmp[1200] = ""; /* a reference being computed (rank 0) */
    param_grid pg;
    memset(&pg, 0, sizeof pg);
    hymo_model *models[MAX_POINTS] = {0};
    int n_points = 1, n_cfg1 = 0, n_jobs1 = 0, n_cfg = 0, n_jobs = 0;
    const long compilations0 = hymo_model_compilations();
    hymo_cli_list set_opts = {0}, cosim_opts = {0};
    const hymo_cli_option opts[] = {
        {"--H", 0, hymo_cli_str, &h_list},
        {"--configs", 0, hymo_cli_str, &configs},
        HYMO_CLI_COSIM_OPTIONS(&cosim_opts),
        {"--reference", 0, hymo_cli_str, &ref_path},
        {"--achievable", 0, achievable_option, &takeoff},
        {"--takeoff-slope", 0, hymo_cli_positive, &takeoff_slope},
        {"--takeoff-floor", 0, hymo_cli_positive, &takeoff_floor},
        {"--jobs", 0, jobs_option, &jobs_n},
        {"--skip-failed", 0, NULL, &skip_failed},
        {"--set", 0, hymo_cli_append, &set_opts},
        {"--set-grid", 0, set_grid_option, &pg},
        {"--output", 'o', hymo_cli_str, &table},
        {NULL, 0, NULL, NULL},
    };
    /* setup: the same on every rank (ranks other than 0 keep its messages) */
    FILE *captured = NULL;
    const int saved_stderr = rank != 0 ? capture_begin(&captured) : -1;
    if (rank != 0 && !freopen("/dev/null", "w", stdout)) /* --help and the report: rank 0's */
        fclose(stdout);
    int r0 = hymo_cli_parse(argc, argv, opts, usage_sweep, &model_path, 1, &n_pos);
    if (r0 >= 0) {
        status = r0;
        goto setup_end;
    }
    if (jobs_n == 0) {
        const long n = ncpu >= 1 ? (ncpu + local_size - 1) / local_size : 1;
        jobs_n = n <= MAX_JOBS ? (int)n : MAX_JOBS;
    }
    r0 = hymo_cli_load("sweep", model_path, &set_opts, &model);
    if (r0 >= 0) goto setup_end;
    hymo_cosim_options base;
    hymo_cosim_options_default(&base, model);
    if (hymo_cli_cosim_apply(&cosim_opts, &base)) goto setup_end;
    if (!table) {
        fprintf(stderr, "hymo: error: sweep needs -o TABLE\n");
        goto setup_end;
    }
    if (!hymo_cli_cosim_thresholds_given(&base)) { /* defaults: RMS s <= 1 mm, max |p| <= 1 MPa, max |E| <= 50 J */
        base.max_rms[HYMO_CMP_S] = 1e-3;
        base.max_abs[HYMO_CMP_P] = 1e6;
        base.max_residual_energy = 50.0;
    }
    double Hs[MAX_LIST];
    int nH = 0;
    if (hymo_cli_parse_h_list(h_list, Hs, &nH)) goto setup_end;
    grid g = {{1, 1, 1, 1, 1, 1}, {{base.coupling}, {base.approx}, {base.hyd_integrator}, {base.mech_integrator},
                                   {base.scheme}, {base.mech_inputs}}};
    if (hymo_cli_parse_grid(configs, &g)) goto setup_end;
    for (int i = 0; takeoff && i < g.n[0]; ++i) {
        hymo_cosim_options oi = base;
        oi.coupling = g.v[0][i];
        if (hymo_cosim_tables_of(&oi).coupling->tlm) { /* the residual energy of TLM bonds is zero by construction */
            fprintf(stderr, "hymo: error: --achievable takeoff: not defined for the tlm coupling (its residual energy "
                            "is zero by construction); use --achievable limits\n");
            goto setup_end;
        }
    }
    char base_buf[1024], path[1100];
    base_name(table, base_buf, sizeof base_buf);
    /* the model at every point of the parameter grid, loaded (and so
     * checked) before anything runs */
    const char *sets[HYMO_SET_MAX + MAX_PARAMS];
    char set_buf[MAX_PARAMS][1200];
    const int n_base_sets = set_opts.n;
    for (int k = 0; k < n_base_sets; ++k) sets[k] = set_opts.value[k];
    for (int k = 0; k < pg.n; ++k) {
        n_points *= pg.nv[k];
        if (n_points > MAX_POINTS) {
            fprintf(stderr, "hymo: error: --set-grid: more than %d parameter points\n", MAX_POINTS);
            goto setup_end;
        }
    }
    if (pg.n > 0 && ref_path) {
        fprintf(stderr, "hymo: error: --reference cannot be used with --set-grid (every parameter point needs "
                        "its own reference; the sweep computes them)\n");
        goto setup_end;
    }
    /* rank 0's outputs: checked against the inputs and each other, and
     * the directory for being writable, before anything runs */
    if (rank == 0 && outputs_check(table, base_buf, model_path, ref_path, pg.n > 0 ? n_points : 0)) goto setup_end;
    for (int p = 0; p < n_points && pg.n > 0; ++p) {
        for (int k = 0; k < pg.n; ++k) {
            snprintf(set_buf[k], sizeof set_buf[k], "%s=%s", pg.path[k], param_value(&pg, p, k));
            sets[n_base_sets + k] = set_buf[k];
        }
        if (hymo_model_load_file_set(model_path, sets, n_base_sets + pg.n, &models[p], &err) != HYMO_OK) {
            fprintf(stderr, "hymo: error: %s\n", err.message);
            goto setup_end;
        }
    }
    if (pg.n == 0) models[0] = model;
    n_cfg1 = g.n[0] * g.n[1] * g.n[2] * g.n[3] * g.n[4] * g.n[5];
    n_jobs1 = n_cfg1 * nH;
    n_cfg = n_cfg1 * n_points;
    n_jobs = n_jobs1 * n_points;
    jobs = calloc((size_t)n_jobs, sizeof *jobs);
    cfg_first = calloc((size_t)n_cfg, sizeof(int));
    ach = calloc((size_t)n_cfg, sizeof(double));
    order = calloc((size_t)n_jobs1, sizeof(int));
    mine = calloc((size_t)n_jobs1, sizeof(int));
    pos = calloc((size_t)n_jobs1, sizeof(int));
    state = calloc((size_t)n_jobs1, 1);
    records = calloc((size_t)(n_jobs / size + n_points + 1), sizeof *records);
    if (!jobs || !cfg_first || !ach || !order || !mine || !pos || !state || !records) {
        fprintf(stderr, "hymo: error: out of memory\n");
        goto setup_end;
    }
    fill_jobs(jobs, cfg_first, &base, &g, Hs, nH, n_points);
    /* this rank's share of each point's runs: every size-th of the runs
     * ordered slowest (smallest H) first */
    const int n_mine = (n_jobs1 - rank + size - 1) / size;
    if (jobs_n > n_mine) jobs_n = n_mine > 0 ? n_mine : 1;
    setup_ok = 1;
setup_end:
    {
        const int agreed = comm->ops->max(comm->content, setup_ok ? -1 : status);
        const int rank0_failed = comm->ops->max(comm->content, rank == 0 && !setup_ok);
        /* a rank's own failure is shown; one that rank 0 shares, once */
        capture_end(saved_stderr, captured, !setup_ok && !rank0_failed, rank);
        if (agreed >= 0) {
            if (rank == 0 && setup_ok) fprintf(stderr, "hymo: error: sweep: another rank could not set up (see its message)\n");
            status = agreed;
            goto done;
        }
    }
    if (size > 1 && rank == 0)
        fprintf(stderr, "sweep: %d configurations x %d values of H = %d runs on %d ranks x %d threads", n_cfg1, nH,
                n_jobs1, size, jobs_n);
    else if (rank == 0)
        fprintf(stderr, "sweep: %d configurations x %d values of H = %d runs on %d threads", n_cfg1, nH, n_jobs1,
                jobs_n);
    if (rank == 0 && pg.n > 0) fprintf(stderr, ", at each of %d parameter points", n_points);
    if (rank == 0) fputc('\n', stderr);
    int started = 0, n_records = 0;
    double wall = 0.0;
    for (int pt = 0; pt < n_points; ++pt) {
        const hymo_model *mp = models[pt];
        const char *rp = ref_path;
        /* the point's reference: computed by rank 0 into a temporary file
         * of its own (hymo_partial_create), read back from there (not from
         * the final name, which a concurrent sweep with the same -o may
         * replace), then renamed to its name */
        if (!rp) {
            reference_name(path, sizeof path, base_buf, pg.n > 0 ? n_points : 0, pt);
            int st = -1;
            if (rank == 0) {
                hymo_run_options ro;
                hymo_run_options_default(&ro, mp);
                ro.t_end = base.mech.t_end;
                hymo_run_summary rs;
                fprintf(stderr, "sweep: monolithic reference (%s, dt = %g s) -> %s\n",
                        hymo_formulation_name(ro.formulation), ro.dt, path);
                for (int k2 = 0; k2 < mp->n_overrides; ++k2) fprintf(stderr, "sweep:   --set %s\n", mp->overrides[k2]);
                const int e = hymo_partial_create(path, ref_tmp, sizeof ref_tmp);
                hymo_status rst = HYMO_ERR_IO;
                if (e) {
                    ref_tmp[0] = '\0';
                    hymo_error_set(&err, HYMO_ERR_IO, "%s: cannot write: %s", path, strerror(e));
                } else
                    rst = hymo_run(mp, &ro, ref_tmp, &rs, &err);
                if (rst != HYMO_OK) {
                    /* a run that stopped: 3, its file (complete = 0) kept
                     * under its name; a file that could not be written: 2 */
                    fprintf(stderr, "hymo: error: reference run: %s\n", err.message);
                    const int stopped = rst == HYMO_ERR_CONVERGENCE || rst == HYMO_ERR_NUMERIC;
                    st = stopped ? EXIT_RUN_FAILED : EXIT_BAD_INPUT;
                    struct stat sb; /* not the empty file hymo_partial_create made */
                    if (stopped && stat(ref_tmp, &sb) == 0 && sb.st_size > 0 && rename(ref_tmp, path) == 0)
                        ref_tmp[0] = '\0';
                }
            }
            st = comm->ops->max(comm->content, st);
            if (st >= 0) {
                status = st;
                goto done;
            }
            rp = ref_tmp;
        }
        int st = ref_share(comm, rank, size, rp, &ref);
        if (st < 0 && rank == 0 && rp == ref_tmp) {
            if (rename(ref_tmp, path) != 0) {
                fprintf(stderr, "hymo: error: %s: cannot rename the reference into place: %s\n", path, strerror(errno));
                st = EXIT_BAD_INPUT;
            } else
                ref_tmp[0] = '\0';
        }
        if (rp == ref_tmp) st = comm->ops->max(comm->content, st);
        if (st >= 0) {
            status = st;
            goto done;
        }
        if (rp == ref_tmp) rp = path;
        if (!ref->complete) { /* the same on every rank */
            if (rank == 0) fprintf(stderr, "hymo: error: %s: incomplete reference (complete = 0)\n", rp);
            goto done;
        }
        /* the slowest runs (small H) first, for a balanced finish; this
         * rank runs every size-th of them */
        for (int h = 0, o = 0; h < nH; ++h)
            for (int c1 = 0; c1 < n_cfg1; ++c1) order[o++] = cfg_first[pt * n_cfg1 + c1] - pt * n_jobs1 + h;
        int n_here = 0;
        for (int o = rank; o < n_jobs1; o += size) mine[n_here++] = order[o];
        char label[64];
        if (size > 1)
            snprintf(label, sizeof label, "sweep: rank %d", rank);
        else
            snprintf(label, sizeof label, "sweep");
        sweep_queue q = {mp,  ref, jobs + (size_t)pt * n_jobs1, mine, n_here, 0, 0, PTHREAD_MUTEX_INITIALIZER,
                         skip_failed, takeoff, state, pos, PTHREAD_COND_INITIALIZER,
                         hymo_now_seconds(), isatty(2), rank != 0, label};
        memset(state, 0, (size_t)n_jobs1);
        for (int i = 0; i < n_jobs1; ++i) pos[i] = -1;
        for (int i = 0; i < n_here; ++i) pos[mine[i]] = i;
        pthread_t *th = calloc((size_t)jobs_n, sizeof *th);
        started = 0;
        for (int t = 0; th && t < jobs_n; ++t)
            if (pthread_create(&th[started], NULL, worker, &q) == 0) started++;
        if (started == 0) worker(&q);
        for (int t = 0; t < started; ++t) pthread_join(th[t], NULL);
        free(th);
        pthread_mutex_destroy(&q.lock);
        pthread_cond_destroy(&q.changed);
        wall += hymo_now_seconds() - q.t_start;
        hymo_ref_free(ref);
        ref = NULL;
        for (int i = 0; i < n_here; ++i) { /* the results rank 0 gathers */
            const int idx = pt * n_jobs1 + mine[i];
            job_record *r = &records[n_records++];
            memset(r, 0, sizeof *r);
            r->index = idx;
            r->status = jobs[idx].status;
            r->skipped = jobs[idx].skipped;
            memcpy(r->message, jobs[idx].message, sizeof r->message);
            r->sum = jobs[idx].sum;
        }
    }
    /* rank 0 gathers every rank's results (one process: its own) */
    {
        void *all = NULL;
        size_t n_all = 0;
        if (comm->ops->gather(comm->content, records, (size_t)n_records * sizeof *records, &all, &n_all)) goto done;
        all_records = all;
        if (rank == 0 && n_all != (size_t)n_jobs * sizeof *records) {
            fprintf(stderr, "hymo: error: sweep: %zu results gathered, %d expected\n", n_all / sizeof *records, n_jobs);
            status = comm->ops->max(comm->content, EXIT_RUN_FAILED);
            goto done;
        }
        for (size_t i = 0; rank == 0 && i < n_all / sizeof *records; ++i) {
            const job_record *r = &all_records[i];
            sweep_job *j = &jobs[r->index];
            j->status = r->status;
            j->skipped = r->skipped;
            memcpy(j->message, r->message, sizeof j->message);
            j->sum = r->sum;
        }
    }
    const long compilations = comm->ops->sum(comm->content, hymo_model_compilations() - compilations0);
    if (rank != 0) {
        status = comm->ops->max(comm->content, -1); /* rank 0's */
        goto done;
    }
    /* thresholds and achievable H */
    const int failed_runs = achievable(jobs, n_jobs, cfg_first, n_cfg, Hs, nH, takeoff, takeoff_slope, takeoff_floor, ach);
    /* tables: CSV, achievable CSV, HDF5; any failure exits 2 */
    const int write_failed = write_tables(base_buf, jobs, n_jobs, ach, cfg_first, n_cfg, &pg, model);
    /* report */
    print_achievable(&base, jobs, cfg_first, n_cfg, ach, &pg, takeoff, takeoff_slope, takeoff_floor);
    int n_skipped = 0;
    for (int i = 0; i < n_jobs; ++i) n_skipped += jobs[i].skipped;
    char not_run[64] = "";
    if (n_skipped) snprintf(not_run, sizeof not_run, " (%d not run: a smaller H failed)", n_skipped);
    struct rusage ru;
    const double cpu = getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                                                              (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec
                                                        : 0.0;
    if (size > 1)
        printf("%d runs%s in %.1f s wall time, %.1f s CPU on rank 0, on %d ranks x %d threads; ", n_jobs, not_run,
               wall, cpu, size, started > 0 ? started : 1);
    else
        printf("%d runs%s in %.1f s wall time, %.1f s CPU, on %d threads; ", n_jobs, not_run, wall, cpu,
               started > 0 ? started : 1);
    if (write_failed)
        printf("tables not written (%s.csv, %s_achievable.csv, %s.h5)\n", base_buf, base_buf, base_buf);
    else
        printf("tables %s.csv, %s_achievable.csv, %s.h5\n", base_buf, base_buf, base_buf);
    /* the model's constants (at load) and its initial state (first run) are
     * compiled once (per rank) and shared by every run and thread */
    printf("model compiled %ld times for %d co-simulations (constants at load, initial state on first use%s)\n",
           compilations, n_jobs, size > 1 ? "; on every rank" : "");
    if (failed_runs) fprintf(stderr, "hymo: %d runs failed to start (see the reason column)\n", failed_runs);
    status = write_failed ? EXIT_BAD_INPUT : failed_runs ? EXIT_RUN_FAILED : 0;
    status = comm->ops->max(comm->content, status); /* to the other ranks */
done:
    if (ref_tmp[0]) remove(ref_tmp);
    for (int p = 0; p < MAX_POINTS; ++p)
        if (models[p] != model) hymo_model_free(models[p]);
    free(jobs);
    free(cfg_first);
    free(ach);
    free(order);
    free(mine);
    free(pos);
    free(state);
    free(records);
    free(all_records);
    hymo_ref_free(ref);
    hymo_model_free(model);
    return status;
}
