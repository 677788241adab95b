/* Split-mode co-simulation driver (SPEC §7, seed 000 §2.3): the generic
 * master (hymo/master.h) over the subsystems of hymo_split_create, plus
 * what a run records after each communication step -- power bonds,
 * instability checks, output rows -- all read through the subsystem
 * interface (outputs, the inputs the master set, variables).
 *
 * Power bond a (cylinder a), seed 000 Eqs. 20-24 with the sign chosen so
 * that a positive residual is energy created at the interface:
 *   dP_a = F~_a sd_a - F_a sd~_a
 * (mechanics receives the power F~ sd with its extrapolated input F~;
 * hydraulics delivers F sd~ with its extrapolated input sd~; velocity-
 * pressure: F = p_pist A_pist - p_rod A_rod, the part that crosses the
 * bond).  Residual energy: rectangle rule for p = 0, trapezoidal otherwise. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit.h" /* hymo_coupled_actuators */
#include "cosim_driver.h"
#include "cosim_tables.h"
#include "sensors.h" /* further outputs */
#include "signals.h"

/* ------------------------------------------------------------------ driver
 * One loop for every co-simulation (src/cosim/cosim_driver.h): split mode
 * (hymo_cosim_run below) and system files (src/cosim/cosim_system.c) set it up. */

/* The subsystem variable each per-step dataset (reference/signals.h, the
 * one list of them) is read from: the mechanics' variable, except p and u,
 * which come from the other subsystems (HYDRAULIC). */
#define HYDRAULIC(s) ((s) == HYMO_SIG_P || (s) == HYMO_SIG_U)
static const char *const row_var[HYMO_SIGNAL_COUNT] = {
    [HYMO_SIG_TIME] = "time",
    [HYMO_SIG_Z] = "z",
    [HYMO_SIG_ZD] = "zd",
    [HYMO_SIG_ZDD] = "zdd",
    [HYMO_SIG_P] = "p",
    [HYMO_SIG_U] = "u",
    [HYMO_SIG_S] = "s",
    [HYMO_SIG_SD] = "sd",
    [HYMO_SIG_FORCE] = "force",
    [HYMO_SIG_WORK] = "work",
    [HYMO_SIG_KINETIC] = "kinetic_energy",
    [HYMO_SIG_POTENTIAL] = "potential_energy",
    [HYMO_SIG_DRIFT] = "energy_drift",
    [HYMO_SIG_C_POS] = "constraint_position",
    [HYMO_SIG_C_VEL] = "constraint_velocity",
    [HYMO_SIG_C_ACC] = "constraint_acceleration",
    [HYMO_SIG_ITERATIONS] = "newton_iterations",
    [HYMO_SIG_RESIDUAL] = "residual_norm",
};
/* Statistics of the mechanics (run summary). */
enum {
    S_STEPS, S_ITER_TOTAL, S_ITER_MAX, S_JACOBIANS, S_RESELECTIONS, S_PEAK_DRIFT, S_MAX_WORK, S_MAX_CPOS,
    S_MAX_CVEL, S_MAX_CACC, S_N
};
static const char *const mech_stat[S_N] = {
    "steps",      "newton_iterations_total", "newton_iterations_max",   "jacobian_evaluations",
    "reselections", "peak_drift",            "max_work",                "max_constraint_position",
    "max_constraint_velocity",               "max_constraint_acceleration",
};

typedef struct {
    hymo_cosim_setup s;
    const hymo_cosim_options *o;
    hymo_master *m;
    hymo_subsystem *const *subs;
    int nsub, nb; /* subsystems, bonds */
    /* bonds */
    double *sdt; /* per bond: sd~ at the latest communication point */
    double *dP, *dP_prev, *E;
    double E_total, E_max;
    double W; /* cumulative |actuator work| sum_a int |F_a sd_a| dt (at the rows), J */
    double max_ratio_E, max_ratio_D;
    /* rows */
    long n_rows, cap;
    int width[HYMO_SIGNAL_COUNT];
    int *vr[HYMO_SIGNAL_COUNT];   /* value references (-1: not published, 0 is written) */
    int *vsub[HYMO_SIGNAL_COUNT]; /* per column: the subsystem that has it */
    /* per signal: read_row reads it (without an output file, only what
     * the checks, the online figures and the comparison read); its columns
     * all come from one subsystem (one get_real call for the row) */
    unsigned char read[HYMO_SIGNAL_COUNT], one_sub[HYMO_SIGNAL_COUNT];
    double *row[HYMO_SIGNAL_COUNT]; /* cap x width */
    int stat_vr[S_N];     /* the mechanics' statistics (-1: none) */
    int mech_independent; /* its string variable "independent" (-1: none) */
    int *hyd_stat_vr;     /* per subsystem: steps, rhs_evaluations (-1: none) */
    int ny;               /* sum of the outputs of all subsystems (record_outputs) */
    double *rec_dP, *rec_E, *rec_Et, *rec_sdd, *rec_y, *rec_sdt; /* cap x ... */
    double *rec_W;   /* cap: W at each row */
    double *rec_out; /* cap x ny (record_outputs) */
    /* TLM bonds (tlm = 1: every bond is one): line energy per bond at the
     * latest point and its change over the last step at the step's Z_c;
     * the sum of the squared waves per line end (2 per bond); records */
    int tlm;
    double *tlm_eline, *tlm_deline, *tlm_b2;  /* nb, nb, 2 nb */
    double *tlm_deline_prev;                  /* nb: tlm_deline of the step before */
    double *rec_zc, *rec_mass, *rec_eline;    /* cap x 2 nb, cap x 2 nb, cap x nb */
    /* the further outputs (src/compile/sensors.h) of the rows, for
     * the writer (computed in write_output; none without a model) */
    const hymo_ref_series *series;
    int n_series;
    hymo_watch watch; /* online verdict figures */
    /* the communication step under way (opt->H unless controlled); the
     * step control; per bond: this step's residual energy, the power the
     * other side delivers (F sd~) at the latest point and the energy it
     * transferred in this step */
    double H;
    hymo_cosim_control ctl;
    double *dE_step, *P_bond, *P_prev, *E_tr;
    int snap_taken; /* controlled: the row at 3/4 of t_end is in snap_* */
    /* Row storage: the arrays above hold bcap rows, global rows base ..
     * n_rows - 1; a full block goes to the scratch file (rows kept for the
     * output file or the comparison with a reference; else dropped), block
     * b at b * block_bytes, each array's bcap rows in the order of
     * row_arrays. */
    long bcap, base;
    /* no output file, a reference: the rows the comparison reads are
     * chosen as they are recorded (select_row) into sel_col (the columns
     * of cmp_sig, then the residual energy; room for 2 n_ref + 2 rows),
     * and no row goes to a scratch file; the reference row the choice has
     * reached, the rows chosen and the last of them, max |residual energy|
     * over every row */
    int compare_only;
    const hymo_reference *sel_ref;
    double *sel_col[HYMO_SIGNAL_COUNT + 1];
    long sel_i, nsel, sel_last;
    double sel_e_max;
    FILE *scratch;
    int scratch_errno;  /* the first failed scratch write (0: none) */
    /* the output file (-o), open from the start: its rows are appended
     * block by block as the blocks fill, so a killed run leaves its
     * OUT.h5.XXXXXX.partial with the rows written so far; the further
     * outputs of the rows (outs, ser, uref) and the iteration counts of a
     * block; w_status/w_err: the first failed append */
    hymo_ref_writer *w;
    void *w_names;
    hymo_outputs *outs;
    double *ser[HYMO_ROWS_SERIES_MAX], *uref;
    int *iterations;
    hymo_status w_status;
    hymo_error w_err;
    long block_bytes;
    /* what the checks and the summary read of rows no longer held: the
     * last recorded row's work, time, residual energy and drift; row
     * snap_j's (growing_at_end); the TLM masses' first values and maxima */
    double *last_work, last_time, last_Et, last_W, last_D;
    long snap_j;
    double snap_W, snap_Et, snap_D, snap_t;
    double *tlm_m0, *tlm_zc0, *tlm_mmax, *tlm_tmax;
    /* iterative coupling (o->iterate_max > 0): the master's workspace, its
     * totals, and per communication point (row 0: t = 0) the retakes and
     * final weighted residual */
    hymo_master_iteration *iter;
    hymo_iterate_stats istats;
    double *rec_iter, *rec_ires; /* cap */
} driver;

/* Rows per block of the row storage. */
#define BLOCK_ROWS 1024

static void driver_free(driver *d)
{
    hymo_master_iteration_free(d->iter);
    free(d->rec_iter);
    free(d->rec_ires);
    for (int s = 0; s < HYMO_SIGNAL_COUNT; ++s) {
        free(d->vr[s]);
        free(d->vsub[s]);
        free(d->row[s]);
    }
    free(d->hyd_stat_vr);
    hymo_watch_free(&d->watch);
    hymo_cosim_control_free(&d->ctl);
    free(d->dE_step), free(d->P_bond), free(d->P_prev), free(d->E_tr);
    double *arr[] = {d->sdt,    d->dP,      d->dP_prev, d->E,         d->rec_dP,    d->rec_E,
                     d->rec_Et, d->rec_sdd, d->rec_y,   d->rec_sdt,   d->rec_W,     d->rec_out,
                     d->tlm_eline, d->tlm_deline, d->tlm_deline_prev, d->tlm_b2, d->rec_zc, d->rec_mass, d->rec_eline};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
    double *more[] = {d->last_work, d->tlm_m0, d->tlm_zc0, d->tlm_mmax, d->tlm_tmax};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; ++i) free(more[i]);
    if (d->scratch) fclose(d->scratch);
    d->scratch = NULL;
    if (d->w) hymo_ref_writer_discard(d->w); /* not closed: the run failed */
    d->w = NULL;
    for (int k = 0; k <= HYMO_SIGNAL_COUNT; ++k) free(d->sel_col[k]), d->sel_col[k] = NULL;
    free(d->w_names);
    free(d->iterations);
    free(d->uref);
    for (int k = 0; k < HYMO_ROWS_SERIES_MAX; ++k) free(d->ser[k]);
    hymo_outputs_free(d->outs);
    d->w_names = NULL, d->iterations = NULL, d->uref = NULL, d->outs = NULL;
    d->series = NULL, d->n_series = 0;
}

/* The arrays of a block in their scratch order and their widths (doubles
 * per row); returns their number (at most HYMO_SIGNAL_COUNT + 11). */
static int row_arrays(driver *d, double **arr[], int width[])
{
    const int nb = d->nb;
    int n = 0;
    for (int s = 0; s < HYMO_SIGNAL_COUNT; ++s) arr[n] = &d->row[s], width[n++] = d->width[s];
    arr[n] = &d->rec_dP, width[n++] = nb;
    arr[n] = &d->rec_E, width[n++] = nb;
    arr[n] = &d->rec_Et, width[n++] = 1;
    arr[n] = &d->rec_W, width[n++] = 1;
    arr[n] = &d->rec_sdd, width[n++] = nb;
    arr[n] = &d->rec_y, width[n++] = 2 * nb;
    arr[n] = &d->rec_sdt, width[n++] = nb;
    if (d->rec_out) arr[n] = &d->rec_out, width[n++] = d->ny;
    if (d->tlm) {
        arr[n] = &d->rec_zc, width[n++] = 2 * nb;
        arr[n] = &d->rec_mass, width[n++] = 2 * nb;
        arr[n] = &d->rec_eline, width[n++] = nb;
    }
    return n;
}
#define ROW_ARRAYS_MAX (HYMO_SIGNAL_COUNT + 11)

static hymo_status append_rows(driver *d, long nr, hymo_error *err);

/* The bytes of one block in the scratch file. */
static void set_block_bytes(driver *d)
{
    double **arr[ROW_ARRAYS_MAX];
    int width[ROW_ARRAYS_MAX];
    const int na = row_arrays(d, arr, width);
    d->block_bytes = 0;
    for (int k = 0; k < na; ++k) d->block_bytes += d->bcap * width[k] * (long)sizeof(double);
}

/* The full block in memory to the scratch file (if any) and to the output
 * file (if any), and the next rows from the start of the arrays. */
static void flush_block(driver *d)
{
    if (d->scratch && !d->scratch_errno) {
        double **arr[ROW_ARRAYS_MAX];
        int width[ROW_ARRAYS_MAX];
        const int n = row_arrays(d, arr, width);
        for (int k = 0; k < n && !d->scratch_errno; ++k) {
            const size_t count = (size_t)d->bcap * (size_t)width[k];
            errno = 0;
            if (count > 0 && fwrite(*arr[k], sizeof(double), count, d->scratch) != count)
                d->scratch_errno = errno ? errno : EIO;
        }
    }
    if (d->w && d->w_status == HYMO_OK) {
        const long nr = d->n_rows - d->base < d->bcap ? d->n_rows - d->base : d->bcap;
        d->w_status = append_rows(d, nr, &d->w_err);
    }
    d->base += d->bcap;
}

/* Array k (row_arrays order) of block b from the scratch file into its
 * place in memory; 0 on a read failure. */
static int load_array(driver *d, long b, int k)
{
    double **arr[ROW_ARRAYS_MAX];
    int width[ROW_ARRAYS_MAX];
    row_arrays(d, arr, width);
    long off = b * d->block_bytes;
    for (int j = 0; j < k; ++j) off += d->bcap * width[j] * (long)sizeof(double);
    const size_t count = (size_t)d->bcap * (size_t)width[k];
    if (count == 0) return 1;
    return fseek(d->scratch, off, SEEK_SET) == 0 && fread(*arr[k], sizeof(double), count, d->scratch) == count;
}

/* The index in row_arrays order of array ptr (-1: none). */
static int array_index(driver *d, double *const *ptr)
{
    double **arr[ROW_ARRAYS_MAX];
    int width[ROW_ARRAYS_MAX];
    const int n = row_arrays(d, arr, width);
    for (int k = 0; k < n; ++k)
        if (arr[k] == ptr) return k;
    return -1;
}

#define CALLOC(ptr, n)                                                                              \
    do {                                                                                            \
        (ptr) = calloc((size_t)((n) > 0 ? (n) : 1), sizeof *(ptr));                                  \
        if (!(ptr)) goto nomem;                                                                     \
    } while (0)

/* Where variable `name` is read: the mechanics' (hyd = 0) or the first
 * other subsystem that has it (hyd = 1).  -1 when none has it; with a
 * model that is an error naming it. */
static hymo_status find_row_var(const driver *d, int hyd, const char *name, int *sub, int *vr, hymo_error *err)
{
    *sub = -1, *vr = -1;
    for (int k = 0; k < d->nsub; ++k) {
        if ((k == d->s.mech) == hyd) continue;
        if ((*vr = hymo_subsystem_find_variable(d->subs[k], name)) >= 0) {
            *sub = k;
            return HYMO_OK;
        }
    }
    if (!d->s.model) return HYMO_OK;
    if (hyd) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "co-simulation: no hydraulic subsystem has variable '%s'", name);
    return hymo_error_set(err, HYMO_ERR_ARGUMENT, "co-simulation: subsystem '%s' has no variable '%s'",
                          d->s.mech >= 0 ? d->subs[d->s.mech]->name : "(none)", name);
}

/* Columns of an array signal without a model: name[0], name[1], ... as
 * long as a subsystem has them. */
static int count_columns(const driver *d, int hyd, const char *name)
{
    char v[64];
    int n = 0, sub, vr;
    for (;; ++n) {
        snprintf(v, sizeof v, "%s[%d]", name, n);
        find_row_var(d, hyd, v, &sub, &vr, NULL);
        if (vr < 0) return n;
    }
}

static hymo_status driver_create(driver *d, const hymo_cosim_setup *setup, hymo_error *err)
{
    memset(d, 0, sizeof *d);
    d->s = *setup;
    d->o = setup->opt;
    d->m = setup->m;
    d->subs = setup->subs;
    d->nsub = setup->nsub;
    d->nb = setup->n_bonds;
    hymo_status st = HYMO_OK;
    const hymo_model *model = setup->model;
    const int nb = d->nb;
    char name[64];
    /* rows: value references of every column */
    int dims[HYMO_COLS_COUNT] = {[HYMO_COLS_ONE] = 1};
    if (model) {
        dims[HYMO_COLS_NZ] = model->n_bodies, dims[HYMO_COLS_NP] = model->n_volumes;
        /* every actuator, as `hymo run` (cylinders, motors, driven joints) */
        dims[HYMO_COLS_NU] = model->n_valves, dims[HYMO_COLS_NA] = model->n_cylinders + model->n_motors + model->n_drivers;
        dims[HYMO_COLS_NCUT] = model->n_cuts;
    } else {
        dims[HYMO_COLS_NZ] = count_columns(d, 0, "z"), dims[HYMO_COLS_NP] = count_columns(d, 1, "p");
        dims[HYMO_COLS_NU] = count_columns(d, 1, "u"), dims[HYMO_COLS_NA] = count_columns(d, 0, "s");
        dims[HYMO_COLS_NCUT] = count_columns(d, 0, "constraint_position");
    }
    for (int s = 0; s < HYMO_SIGNAL_COUNT && st == HYMO_OK; ++s) {
        const int w = d->width[s] = dims[hymo_ref_signals[s].cols];
        CALLOC(d->vr[s], w);
        CALLOC(d->vsub[s], w);
        for (int i = 0; i < w && st == HYMO_OK; ++i) {
            if (hymo_ref_signals[s].cols == HYMO_COLS_ONE)
                snprintf(name, sizeof name, "%s", row_var[s]);
            else
                snprintf(name, sizeof name, "%s[%d]", row_var[s], i);
            st = find_row_var(d, HYDRAULIC(s), name, &d->vsub[s][i], &d->vr[s][i], err);
        }
        d->read[s] = 1;
        d->one_sub[s] = w > 0;
        for (int i = 0; i < w && st == HYMO_OK; ++i) d->one_sub[s] &= d->vr[s][i] >= 0 && d->vsub[s][i] == d->vsub[s][0];
    }
    for (int k = 0; k < S_N && st == HYMO_OK; ++k) st = find_row_var(d, 0, mech_stat[k], &(int){0}, &d->stat_vr[k], err);
    if (st == HYMO_OK) st = find_row_var(d, 0, "independent", &(int){0}, &d->mech_independent, err);
    CALLOC(d->hyd_stat_vr, 2 * d->nsub);
    for (int k = 0; k < d->nsub && st == HYMO_OK; ++k) {
        d->hyd_stat_vr[2 * k] = d->hyd_stat_vr[2 * k + 1] = -1;
        if (k == d->s.mech) continue;
        d->hyd_stat_vr[2 * k] = hymo_subsystem_find_variable(d->subs[k], "steps");
        d->hyd_stat_vr[2 * k + 1] = hymo_subsystem_find_variable(d->subs[k], "rhs_evaluations");
        if (model && (d->hyd_stat_vr[2 * k] < 0 || d->hyd_stat_vr[2 * k + 1] < 0))
            st = hymo_error_set(err, HYMO_ERR_ARGUMENT, "co-simulation: subsystem '%s' has no variable '%s'",
                                d->subs[k]->name, d->hyd_stat_vr[2 * k] < 0 ? "steps" : "rhs_evaluations");
    }
    d->tlm = nb > 0;
    for (int a = 0; a < nb; ++a) d->tlm &= setup->bonds[a].tlm;
    if (st != HYMO_OK) return st;
    if (d->o->H_control != HYMO_H_FIXED) {
        int any_tlm = 0;
        for (int a = 0; a < nb; ++a) any_tlm |= setup->bonds[a].tlm;
        if (any_tlm || nb == 0)
            return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                                  "energy-controlled steps: %s", nb == 0 ? "no power bonds (nothing to estimate from)"
                                  : "refused with TLM bonds (their residual energy is zero by construction, the "
                                    "lines' stored energy closes the balance)");
    }
    CALLOC(d->sdt, nb);
    CALLOC(d->dP, nb);
    CALLOC(d->dP_prev, nb);
    CALLOC(d->E, nb);
    CALLOC(d->dE_step, nb);
    CALLOC(d->P_bond, nb);
    CALLOC(d->E_tr, nb);
    CALLOC(d->P_prev, nb);
    d->H = d->o->H;
    st = hymo_cosim_control_init(&d->ctl, d->o, d->m, setup->control_order, err);
    if (st != HYMO_OK) return st;
    /* rows: one per communication step (controlled: at most one per H_min) */
    d->cap = (d->ctl.on ? d->ctl.q_end : lround(d->o->mech.t_end / d->o->H)) + 1;
    d->bcap = d->cap < BLOCK_ROWS ? d->cap : BLOCK_ROWS;
    const long bc = d->bcap;
    for (int s = 0; s < HYMO_SIGNAL_COUNT; ++s) CALLOC(d->row[s], bc * d->width[s]);
    CALLOC(d->rec_dP, bc * nb);
    CALLOC(d->rec_E, bc * nb);
    CALLOC(d->rec_Et, bc);
    CALLOC(d->rec_W, bc);
    CALLOC(d->rec_sdd, bc * nb);
    CALLOC(d->rec_y, bc * 2 * nb); /* the other side's outputs: F, or p_pist and p_rod */
    CALLOC(d->rec_sdt, bc * nb);   /* sd~ used by the other side */
    if (d->s.record_outputs) {
        for (int k = 0; k < d->nsub; ++k) d->ny += d->subs[k]->n_outputs;
        CALLOC(d->rec_out, bc * d->ny);
    }
    CALLOC(d->last_work, d->width[HYMO_SIG_WORK]);
    if (d->o->iterate_max > 0) {
        const hymo_iterate_options io = {.max_iterations = d->o->iterate_max, .rtol = d->o->iterate_rtol,
                                         .atol = d->o->iterate_atol, .accel = d->o->iterate_accel};
        hymo_error ie;
        if ((st = hymo_master_iteration_create(d->m, &io, &d->iter, &ie)) != HYMO_OK)
            return hymo_error_set(err, st, "co-simulation --iterate: %s (iterative coupling retakes steps from "
                                  "saved states)", ie.message);
        CALLOC(d->rec_iter, d->cap);
        CALLOC(d->rec_ires, d->cap);
    }
    if (d->tlm) {
        CALLOC(d->tlm_eline, nb);
        CALLOC(d->tlm_deline, nb);
        CALLOC(d->tlm_deline_prev, nb);
        CALLOC(d->tlm_b2, 2 * nb);
        CALLOC(d->rec_zc, bc * 2 * nb);
        CALLOC(d->rec_mass, bc * 2 * nb);
        CALLOC(d->rec_eline, bc * nb);
        CALLOC(d->tlm_m0, 2 * nb);
        CALLOC(d->tlm_zc0, 2 * nb);
        CALLOC(d->tlm_mmax, 2 * nb);
        CALLOC(d->tlm_tmax, 2 * nb);
    }
    d->snap_j = (3 * (d->cap - 1)) / 4; /* growing_at_end's row of a run that reaches t_end */
    set_block_bytes(d);
    return HYMO_OK;
nomem:
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (co-simulation, %ld rows)", d->cap);
}

static double real_var(const hymo_subsystem *sub, int vr)
{
    double v;
    sub->ops->get_real(sub, &vr, 1, &v);
    return v;
}

/* The other side's effort k of bond b (its output). */
#define EFF_OUT(b, k) hymo_master_outputs(d->m, (b)->eff_src_sub[k])[(b)->eff_src_out[k]]

/* TLM: energy in transit in bond a's two lines at the latest
 * communication point, sum over both ends of H c^2 / (4 Z_c) (the waves
 * that left in the last step; p^2 C / 2 at rest), with Z_c of the step just
 * done; tlm_deline[a] its change over that step at this Z_c (so the jump
 * of H c^2 / (4 Z_c) when Z_c is re-evaluated for the next step, the
 * lumped model's own p^2 dC / 2, is not counted as residual energy). */
static void tlm_line_energy(driver *d, int a)
{
    const hymo_cosim_bond *b = &d->s.bonds[a];
    const double *ym = hymo_master_outputs(d->m, b->sub);
    d->tlm_eline[a] = d->tlm_deline[a] = 0.0;
    for (int r = 0; r < 2; ++r) {
        const int j = 2 * a + r;
        const double ch = EFF_OUT(b, r), cm = ym[b->wave_out[r]];
        const double b2 = cm * cm + ch * ch, k = d->H / (4.0 * real_var(d->subs[b->sub], b->zc_vr[r]));
        d->tlm_eline[a] += k * b2;
        d->tlm_deline[a] += k * (b2 - d->tlm_b2[j]);
        d->tlm_b2[j] = b2;
    }
}

/* Residual power of every bond at the communication point t + H. */
static void bond_powers(driver *d)
{
    const int T = HYMO_POLY_TERMS;
    const double H = d->H;
    for (int a = 0; a < d->nb; ++a) {
        const hymo_cosim_bond *b = &d->s.bonds[a];
        const double *ym = hymo_master_outputs(d->m, b->sub), *cm = hymo_master_inputs(d->m, b->sub);
        if (b->tlm) { /* power the lines deliver to the piston minus what the other side pushes into them */
            d->sdt[a] = real_var(d->subs[b->sdt_sub], b->sdt_vr);
            d->dP[a] = real_var(d->subs[b->sub], b->line_vr) - real_var(d->subs[b->line_other_sub], b->line_other_vr);
            tlm_line_energy(d, a);
            continue;
        }
        double F_mech = hymo_poly_eval(&cm[T * b->eff_in[0]], H) * b->eff_w[0], F_hyd = EFF_OUT(b, 0) * b->eff_w[0];
        if (b->n_eff == 2) {
            F_mech += hymo_poly_eval(&cm[T * b->eff_in[1]], H) * b->eff_w[1];
            F_hyd += EFF_OUT(b, 1) * b->eff_w[1];
        }
        d->sdt[a] = real_var(d->subs[b->sdt_sub], b->sdt_vr);
        d->dP[a] = hymo_cosim_residual_power(F_mech, ym[b->flow_out], F_hyd, d->sdt[a]);
        d->P_bond[a] = F_hyd * d->sdt[a];
    }
}

/* Reads the row of the current communication point into row n_rows (kept
 * by record). */
static void read_row(driver *d)
{
    const long r = d->n_rows - d->base;
    for (int s = 0; s < HYMO_SIGNAL_COUNT; ++s) {
        if (!d->read[s]) continue;
        const int w = d->width[s];
        double *dst = d->row[s] + r * w;
        if (d->one_sub[s]) {
            const hymo_subsystem *hs = d->subs[d->vsub[s][0]];
            hs->ops->get_real(hs, d->vr[s], w, dst);
            continue;
        }
        for (int i = 0; i < w; ++i) {
            if (d->vr[s][i] < 0) { /* not published (no model): the master's time, else 0 */
                dst[i] = s == HYMO_SIG_TIME ? hymo_master_time(d->m) : 0.0;
                continue;
            }
            const hymo_subsystem *hs = d->subs[d->vsub[s][i]];
            hs->ops->get_real(hs, &d->vr[s][i], 1, &dst[i]);
        }
    }
}

/* The signals the comparison with a reference reads, in the order of the
 * run's columns (hymo_reference: time, z, zd, s, sd, p, u, force). */
static const int cmp_sig[] = {HYMO_SIG_TIME, HYMO_SIG_Z, HYMO_SIG_ZD, HYMO_SIG_S,
                              HYMO_SIG_SD,   HYMO_SIG_P, HYMO_SIG_U,  HYMO_SIG_FORCE};
#define N_CMP_SIG ((int)(sizeof cmp_sig / sizeof cmp_sig[0]))

/* Row g, stored at r of the block arrays, into the chosen rows unless it
 * is the last chosen. */
static void choose_row(driver *d, long g, long r)
{
    if (d->nsel > 0 && d->sel_last >= g) return;
    for (int k = 0; k < N_CMP_SIG; ++k) {
        const int w = d->width[cmp_sig[k]];
        memcpy(d->sel_col[k] + d->nsel * w, d->row[cmp_sig[k]] + r * w, (size_t)w * sizeof(double));
    }
    d->sel_col[N_CMP_SIG][d->nsel] = d->rec_Et[r];
    d->sel_last = g;
    d->nsel++;
}

/* The choice of select_rows as row g (stored at r) is recorded: the first
 * row, and for every reference time t the last row at or before t and the
 * one after it (row g - 1 is still held: at r - 1, or at the end of the
 * arrays when r = 0); max |residual energy| over every row. */
static void select_row(driver *d, long g, long r)
{
    const hymo_reference *ref = d->sel_ref;
    const double e = fabs(d->rec_Et[r]), q = d->row[HYMO_SIG_TIME][r];
    if (!(e <= d->sel_e_max)) d->sel_e_max = isfinite(e) ? e : INFINITY;
    if (g == 0) choose_row(d, 0, r);
    for (; d->sel_i < ref->n && ref->time[d->sel_i] < q; ++d->sel_i)
        if (g > 0) choose_row(d, g - 1, r > 0 ? r - 1 : d->bcap - 1), choose_row(d, g, r);
}

/* Keeps the row read by read_row, with the bonds and exchanged signals. */
static void record(driver *d, int sd_tilde_valid)
{
    const int nb = d->nb;
    const long g = d->n_rows++, r = g - d->base; /* global and stored row */
    for (int a = 0; a < nb; ++a) {
        const hymo_cosim_bond *b = &d->s.bonds[a];
        const double *ym = hymo_master_outputs(d->m, b->sub);
        d->rec_dP[r * nb + a] = d->dP[a];
        d->rec_E[r * nb + a] = d->E[a];
        d->rec_sdd[r * nb + a] = b->sdd_out >= 0 ? ym[b->sdd_out] : 0.0;
        d->rec_y[r * 2 * nb + a] = EFF_OUT(b, 0);
        if (b->n_eff == 2) d->rec_y[r * 2 * nb + nb + a] = EFF_OUT(b, 1);
        d->rec_sdt[r * nb + a] = sd_tilde_valid ? d->sdt[a] : ym[b->flow_out];
    }
    d->rec_Et[r] = d->E_total;
    d->rec_W[r] = d->W;
    for (int a = 0; d->tlm && a < nb; ++a) {
        const hymo_cosim_bond *b = &d->s.bonds[a];
        for (int k = 0; k < 2; ++k) {
            d->rec_zc[r * 2 * nb + 2 * a + k] = real_var(d->subs[b->sub], b->zc_vr[k]);
            d->rec_mass[r * 2 * nb + 2 * a + k] = real_var(d->subs[b->sub], b->mass_vr[k]);
        }
        d->rec_eline[r * nb + a] = d->tlm_eline[a];
    }
    if (d->rec_out)
        for (int k = 0, j = 0; k < d->nsub; j += d->subs[k++]->n_outputs)
            memcpy(d->rec_out + r * d->ny + j, hymo_master_outputs(d->m, k),
                   (size_t)d->subs[k]->n_outputs * sizeof(double));
    /* what later checks and the summary read of this row */
    const int na = d->width[HYMO_SIG_WORK];
    memcpy(d->last_work, d->row[HYMO_SIG_WORK] + r * na, (size_t)na * sizeof(double));
    d->last_time = d->row[HYMO_SIG_TIME][r];
    d->last_Et = d->rec_Et[r];
    d->last_W = d->rec_W[r];
    d->last_D = d->row[HYMO_SIG_DRIFT][r];
    if (d->ctl.on ? !d->snap_taken && d->last_time >= 0.75 * d->o->mech.t_end : g == d->snap_j) {
        d->snap_W = d->last_W, d->snap_Et = d->last_Et, d->snap_D = d->last_D, d->snap_t = d->last_time;
        d->snap_taken = 1;
    }
    for (int j = 0; d->tlm && j < 2 * nb; ++j) { /* the masses at t = 0 and their maxima (the first row of a tie) */
        const double mass = d->rec_mass[r * 2 * nb + j];
        if (g == 0) {
            d->tlm_m0[j] = d->tlm_mmax[j] = mass;
            d->tlm_zc0[j] = d->rec_zc[r * 2 * nb + j];
            d->tlm_tmax[j] = d->last_time;
        } else if (mass > d->tlm_mmax[j]) {
            d->tlm_mmax[j] = mass, d->tlm_tmax[j] = d->last_time;
        }
    }
    if (d->compare_only) select_row(d, g, r);
    if (d->n_rows - d->base == d->bcap) flush_block(d);
}
#undef EFF_OUT

/* First non-finite quantity of the communication point (its row read), or
 * NULL. */
static const char *non_finite(const driver *d)
{
    for (int k = 0; k < d->nsub; ++k) {
        const hymo_subsystem *sub = d->subs[k];
        const double *y = hymo_master_outputs(d->m, k);
        for (int i = 0; i < sub->n_outputs; ++i)
            if (!isfinite(y[i])) return sub->name;
    }
    const long r = d->n_rows - d->base;
    for (int j = 0; j < d->width[HYMO_SIG_Z]; ++j)
        if (!isfinite(d->row[HYMO_SIG_Z][r * d->width[HYMO_SIG_Z] + j]) || !isfinite(d->row[HYMO_SIG_ZD][r * d->width[HYMO_SIG_ZD] + j]))
            return "mechanics";
    for (int a = 0; a < d->nb; ++a)
        if (!isfinite(d->dP[a])) return "residual power";
    return NULL;
}

/* The relative instability limits at the communication point whose row
 * read_row has read (not yet recorded): |E| and |D| against the
 * cumulative |actuator work| W (hymo_cosim_options, docs/cosimulation.md
 * "Verdicts").  Updates W and the ratios; writes the reason and returns 1
 * when the run is unstable. */
static int relative_limits_exceeded(driver *d, double t, long step, char *reason, size_t len)
{
    const hymo_cosim_options *o = d->o;
    const long r = d->n_rows - d->base;
    const int na = d->width[HYMO_SIG_WORK];
    const double *w = d->row[HYMO_SIG_WORK], *D = d->row[HYMO_SIG_DRIFT];
    for (int a = 0; a < na; ++a) d->W += fabs(w[r * na + a] - d->last_work[a]);
    const double E = d->E_total, scale = d->W + o->unstable_floor;
    const double rE = fabs(E) / scale, rD = fabs(D[r]) / scale;
    if (rE > d->max_ratio_E) d->max_ratio_E = rE;
    if (rD > d->max_ratio_D) d->max_ratio_D = rD;
    const char *what = NULL;
    double v = 0.0, ratio = 0.0;
    if (fabs(E) > o->unstable_ratio * d->W + o->unstable_floor)
        what = "|residual energy|", v = fabs(E), ratio = o->unstable_ratio;
    else if (fabs(D[r]) > o->unstable_balance_ratio * d->W + o->unstable_floor)
        what = "|energy-balance error|", v = fabs(D[r]), ratio = o->unstable_balance_ratio;
    if (!what) return 0;
    snprintf(reason, len, "t = %.6g s (step %ld): %s %.4g J exceeds %g x %.4g J of cumulative |actuator work| + %g J",
             t, step, what, v, ratio, d->W, o->unstable_floor);
    return 1;
}

/* Growth over the last quarter of a run that reached t_end: E and D
 * against the actuator work of that quarter; 1 (reason written) when
 * either grew by more than unstable_ratio of it + unstable_floor. */
static int growing_at_end(const driver *d, char *reason, size_t len)
{
    const hymo_cosim_options *o = d->o;
    const long r = d->n_rows - 1, j = (3 * r) / 4;
    if (r < 4) return 0;
    /* row j: kept when recorded (the row of a run that reached t_end), else still in memory */
    double Wj = d->snap_W, Etj = d->snap_Et, Dj = d->snap_D, tj = d->snap_t;
    if (d->ctl.on) { /* the row at 3/4 of t_end */
        if (!d->snap_taken || d->snap_t >= d->last_time) return 0;
    } else if (j != d->snap_j) {
        if (j < d->base) return 0; /* not kept */
        const long l = j - d->base;
        Wj = d->rec_W[l], Etj = d->rec_Et[l], Dj = d->row[HYMO_SIG_DRIFT][l], tj = d->row[HYMO_SIG_TIME][l];
    }
    const double dW = d->last_W - Wj, lim = o->unstable_ratio * dW + o->unstable_floor;
    const double dE = fabs(d->last_Et - Etj), dD = fabs(d->last_D - Dj);
    const char *what = dE > lim ? "residual energy" : dD > lim ? "energy-balance error" : NULL;
    if (!what) return 0;
    snprintf(reason, len,
             "still growing at the end: the %s changed by %.4g J from t = %.6g to %.6g s, more than %g x %.4g J of "
             "|actuator work| in that time + %g J",
             what, dE > lim ? dE : dD, tj, d->last_time, o->unstable_ratio, dW, o->unstable_floor);
    return 1;
}

/* The mechanics' statistics (0 for those it does not publish). */
static void mech_stats(const driver *d, double *v)
{
    for (int k = 0; k < S_N; ++k) v[k] = 0.0;
    if (d->s.mech < 0) return;
    const hymo_subsystem *mech = d->subs[d->s.mech];
    for (int k = 0; k < S_N; ++k)
        if (d->stat_vr[k] >= 0) mech->ops->get_real(mech, &d->stat_vr[k], 1, &v[k]);
}

/* Summary attributes of the file: the mechanics' statistics. */
static void run_summary(const driver *d, const hymo_cosim_summary *sum, hymo_run_summary *rs)
{
    double v[S_N];
    mech_stats(d, v);
    memset(rs, 0, sizeof *rs);
    snprintf(rs->model_name, sizeof rs->model_name, "%s", d->s.model ? d->s.model->name : d->s.src->name);
    snprintf(rs->jacobian, sizeof rs->jacobian, "%s", d->s.model ? hymo_jacobian_name(d->o->mech.jacobian) : "");
    snprintf(rs->linear_solver, sizeof rs->linear_solver, "%s",
             d->s.model ? hymo_linsol_name(d->o->mech.linear_solver) : "");
    snprintf(rs->integrator, sizeof rs->integrator, "cosim");
    rs->dt = d->o->H;
    rs->t_end = d->o->mech.t_end;
    rs->t_reached = d->last_time;
    if (d->vr[HYMO_SIG_TIME][0] >= 0) rs->t_reached = real_var(d->subs[d->vsub[HYMO_SIG_TIME][0]], d->vr[HYMO_SIG_TIME][0]);
    rs->n_steps = sum->n_macro;
    rs->complete = sum->stable && sum->t_reached >= d->o->mech.t_end - 0.5 * d->o->H;
    rs->peak_drift = v[S_PEAK_DRIFT];
    rs->max_work = v[S_MAX_WORK];
    rs->relative_drift = v[S_MAX_WORK] > 0.0 ? v[S_PEAK_DRIFT] / v[S_MAX_WORK] : 0.0;
    rs->max_constraint_position = v[S_MAX_CPOS];
    rs->max_constraint_velocity = v[S_MAX_CVEL];
    rs->max_constraint_acceleration = v[S_MAX_CACC];
    rs->mean_iterations = v[S_STEPS] > 0.0 ? v[S_ITER_TOTAL] / v[S_STEPS] : 0.0;
    rs->max_iterations = (int)v[S_ITER_MAX];
    rs->jacobian_evaluations = (long)v[S_JACOBIANS];
    const char *indep = d->mech_independent >= 0
                            ? d->subs[d->s.mech]->ops->get_string(d->subs[d->s.mech], d->mech_independent)
                            : NULL;
    snprintf(rs->independent, sizeof rs->independent, "%s", indep ? indep : "");
    snprintf(rs->independent_list, sizeof rs->independent_list, "%s", indep ? indep : "");
    rs->n_reselections = (int)v[S_RESELECTIONS];
    rs->wall_time = sum->wall_time;
}

typedef char name_t[HYMO_REF_TEXT_MAX];

/* Without a model: the dimensions and names of the rows from the
 * variables (name = the variable's description, else its name). */
static hymo_status open_from_variables(const driver *d, hymo_ref_header *hdr, const char *path, hymo_ref_writer **w,
                                       void **names_out, hymo_error *err)
{
    static const int sig[HYMO_COLS_COUNT] = {[HYMO_COLS_NZ] = HYMO_SIG_Z, [HYMO_COLS_NP] = HYMO_SIG_P,
                                             [HYMO_COLS_NU] = HYMO_SIG_U, [HYMO_COLS_NA] = HYMO_SIG_S,
                                             [HYMO_COLS_NCUT] = HYMO_SIG_C_POS};
    const int nz = d->width[HYMO_SIG_Z], np = d->width[HYMO_SIG_P], nu = d->width[HYMO_SIG_U],
              na = d->width[HYMO_SIG_S], nc = d->width[HYMO_SIG_C_POS];
    name_t *names = calloc((size_t)(2 * nz + np + nu + na + nc + 1), sizeof *names);
    *names_out = names;
    if (!names) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    name_t *zn = names, *zu = zn + nz, *pn = zu + nz, *un = pn + np, *an = un + nu, *cn = an + na;
    name_t *dst[HYMO_COLS_COUNT] = {[HYMO_COLS_NZ] = zn, [HYMO_COLS_NP] = pn, [HYMO_COLS_NU] = un,
                                    [HYMO_COLS_NA] = an, [HYMO_COLS_NCUT] = cn};
    for (int c = HYMO_COLS_NZ; c < HYMO_COLS_COUNT; ++c)
        for (int i = 0; i < d->width[sig[c]]; ++i) {
            const hymo_subsystem *s = d->subs[d->vsub[sig[c]][i]];
            const hymo_variable *v = s->ops->variable(s, d->vr[sig[c]][i]);
            snprintf(dst[c][i], sizeof dst[c][i], "%s", v->description && *v->description ? v->description : v->name);
            if (c == HYMO_COLS_NZ) snprintf(zu[i], sizeof zu[i], "%s", strcmp(v->unit, "rad") == 0 ? "rad" : "m");
        }
    hymo_ref_dims dims = {nz, np, nu, na, nc, (const name_t *)zn, (const name_t *)zu, (const name_t *)pn,
                          (const name_t *)un, (const name_t *)an, (const name_t *)cn, 0, NULL};
    hdr->model_name = d->s.src->name;
    hdr->model_source = d->s.src->source_text;
    hdr->model_sha256 = d->s.src->sha256;
    hdr->model_path = d->s.src->path;
    return hymo_ref_writer_open(w, path, hdr, &dims, err);
}

/* Opens the writer: root attributes from the options, dataset names and
 * units from the model, or the variables' descriptions and units. */
static hymo_status open_writer(const driver *d, const char *path, hymo_ref_writer **w, void **names,
                               hymo_error *err)
{
    const hymo_run_options *o = &d->o->mech;
    if (!d->s.model) {
        hymo_ref_header hdr = {.formulation = "", .integrator = "cosim", .jacobian = "", .linear_solver = "",
                               .dt = d->o->H, .t_end = o->t_end};
        return open_from_variables(d, &hdr, path, w, names, err);
    }
    const hymo_mech_table *mech = hymo_cosim_tables_of(d->o).mech;
    hymo_ref_header hdr = {.formulation = mech->formulation ? mech->formulation : hymo_formulation_name(o->formulation),
                           .integrator = "cosim",
                           .jacobian = hymo_jacobian_name(o->jacobian),
                           .linear_solver = hymo_linsol_name(o->linear_solver),
                           .dt = d->o->H,
                           .t_end = o->t_end,
                           .tol_position = o->tol_position,
                           .tol_pressure = o->tol_pressure,
                           .tol_spool = o->tol_spool,
                           .max_iter = o->max_iter,
                           .penalty_alpha = mech->penalty || o->formulation == HYMO_FORMULATION_PENALTY ? o->penalty_alpha : 0.0};
    return hymo_ref_open_for_model(d->s.model, &hdr, path, d->series, d->n_series, w, names, err);
}

/* Rows in block b of the stored rows. */
static long block_rows(const driver *d, long b)
{
    const long left = d->n_rows - b * d->bcap;
    return left < d->bcap ? left : d->bcap;
}

static hymo_status scratch_failed(const driver *d, hymo_error *err)
{
    return hymo_error_set(err, HYMO_ERR_IO, "co-simulation: storing its rows in a temporary file failed: %s",
                          strerror(d->scratch_errno ? d->scratch_errno : EIO));
}

/* The rows a comparison with ref reads (hymo_compare_trajectories): the
 * first and the last, and for every reference time t the last row at or
 * before t and the one after it; in *sel (increasing, malloc'd, *nsel of
 * them), so that the comparison of those rows alone does the same
 * arithmetic as that of every row, in memory bounded by the reference.
 * Streams the time and residual-energy columns from the scratch file;
 * *e_max = max |residual energy| over every row (non-finite: +Inf). */
static hymo_status select_rows(driver *d, const hymo_reference *ref, long **sel, long *nsel, double *e_max,
                               hymo_error *err)
{
    const int kt = array_index(d, &d->row[HYMO_SIG_TIME]), ke = array_index(d, &d->rec_Et);
    const long nblocks = (d->n_rows + d->bcap - 1) / d->bcap;
    long n = 0, i = 0;
    *e_max = 0.0;
    *sel = malloc(((size_t)(ref->n > 0 ? ref->n : 0) * 2 + 2) * sizeof **sel);
    if (!*sel) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (co-simulation, %d reference rows)", ref->n);
#define MARK(r) ((n == 0 || (*sel)[n - 1] < (r)) ? (void)((*sel)[n++] = (r)) : (void)0)
    for (long b = 0; b < nblocks; ++b) {
        if (!load_array(d, b, kt) || !load_array(d, b, ke)) return scratch_failed(d, err);
        const double *q = d->row[HYMO_SIG_TIME];
        for (long r = 0, nr = block_rows(d, b); r < nr; ++r) {
            const long g = b * d->bcap + r;
            const double e = fabs(d->rec_Et[r]);
            if (!(e <= *e_max)) *e_max = isfinite(e) ? e : INFINITY;
            if (g == 0) MARK(0);
            for (; i < ref->n && ref->time[i] < q[r]; ++i)
                if (g > 0) MARK(g - 1), MARK(g);
        }
    }
    if (d->n_rows > 0) MARK(d->n_rows - 1);
#undef MARK
    *nsel = n;
    return HYMO_OK;
}

/* Array *ptr (width doubles a row) of the rows sel[0..nsel-1], from the
 * scratch file, in *out (nsel x width, malloc'd). */
static hymo_status gather_rows(driver *d, double **ptr, int width, const long *sel, long nsel, double **out,
                               hymo_error *err)
{
    const int k = array_index(d, ptr);
    *out = malloc(((size_t)nsel * (size_t)width + 1) * sizeof **out);
    if (!*out) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (co-simulation, %ld rows)", nsel);
    for (long j = 0, b = -1; j < nsel; ++j) {
        if (sel[j] / d->bcap != b) {
            b = sel[j] / d->bcap;
            if (!load_array(d, b, k)) return scratch_failed(d, err);
        }
        memcpy(*out + (size_t)j * (size_t)width, *ptr + (size_t)(sel[j] - b * d->bcap) * (size_t)width,
               (size_t)width * sizeof **out);
    }
    return HYMO_OK;
}

/* The further outputs (sensors, flows, valve references; src/compile/sensors.h)
 * of the rows, from the rows' joint states, pressures and spools (in the
 * model's order when the widths are the model's); the references from the
 * model's signal tables.  cosim_series_start: *outs and ser[k] (room for
 * one block); *outs NULL and d->n_series 0 without a model. */
static hymo_status cosim_series_start(driver *d, hymo_outputs **outs, double **ser, double **uref, hymo_error *err)
{
    const hymo_model *m = d->s.model;
    *outs = NULL;
    d->series = NULL, d->n_series = 0;
    if (!m || d->width[HYMO_SIG_Z] != m->n_bodies || d->width[HYMO_SIG_ZD] != m->n_bodies ||
        d->width[HYMO_SIG_ZDD] != m->n_bodies || d->width[HYMO_SIG_P] != m->n_volumes ||
        d->width[HYMO_SIG_U] != m->n_valves)
        return HYMO_OK;
    hymo_status st = hymo_outputs_create(outs, m, err);
    if (st != HYMO_OK) return st;
    const int ns = hymo_outputs_n_series(*outs);
    const hymo_ref_series *sr = hymo_outputs_series(*outs);
    *uref = calloc((size_t)m->n_valves + 1, sizeof **uref);
    if (!*uref) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    for (int k = 0; k < ns; ++k) {
        ser[k] = calloc((size_t)d->bcap * (size_t)sr[k].cols, sizeof(double));
        if (!ser[k]) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    d->series = sr, d->n_series = ns;
    return HYMO_OK;
}

/* The further outputs of the n rows in memory, global rows g0 .. g0 + n - 1. */
static void cosim_series_eval(const driver *d, hymo_outputs *outs, double **ser, double *uref, long g0, long n)
{
    const hymo_model *m = d->s.model;
    const int ns = d->n_series;
    const hymo_ref_series *sr = d->series;
    const int nz = m->n_bodies, np = m->n_volumes, nu = m->n_valves;
    for (long r = 0; r < n; ++r) {
        double *row[HYMO_ROWS_SERIES_MAX];
        for (int k = 0; k < ns; ++k) row[k] = ser[k] + r * sr[k].cols;
        const double t = d->row[HYMO_SIG_TIME][r];
        hymo_outputs_model_uref(m, t, g0 + r == 0 ? +1 : -1, uref);
        const hymo_output_state os = {t,
                                      d->row[HYMO_SIG_Z] + r * nz,
                                      d->row[HYMO_SIG_ZD] + r * nz,
                                      d->row[HYMO_SIG_ZDD] + r * nz,
                                      d->row[HYMO_SIG_P] + r * np,
                                      d->row[HYMO_SIG_U] + r * nu,
                                      uref,
                                      NULL};
        hymo_outputs_eval(outs, &os, row);
    }
}


/* Writes columns col0 .. col0 + cols - 1 (cols 0: one column, a 1-D
 * dataset) of array *ptr (width doubles a row), times scale, block by block
 * as the matrix at path. */
static hymo_status put_rows(driver *d, hymo_ref_writer *w, const char *path, double **ptr, int width, int col0,
                            int cols, double scale, const char *units, const char *const *names, double *tmp,
                            hymo_error *err)
{
    const int k = array_index(d, ptr), c = cols > 0 ? cols : 1;
    const long nblocks = (d->n_rows + d->bcap - 1) / d->bcap;
    hymo_status st = HYMO_OK;
    for (long b = 0; st == HYMO_OK && b < (nblocks > 0 ? nblocks : 1); ++b) { /* (no rows: the dataset alone) */
        const long n = nblocks > 0 ? block_rows(d, b) : 0;
        if (n > 0 && !load_array(d, b, k)) return scratch_failed(d, err);
        const double *src = *ptr;
        for (long r = 0; r < n; ++r)
            for (int i = 0; i < c; ++i) {
                const double v = src[r * width + col0 + i];
                tmp[r * c + i] = scale == 1.0 ? v : scale * v;
            }
        st = hymo_ref_writer_put_matrix_part(w, path, (int)d->n_rows, cols, (int)(b * d->bcap), (int)n, tmp, units,
                                             names, err);
    }
    return st;
}

/* Energy-controlled steps: /cosim/control, the accepted steps (end time,
 * H, estimate, rejections before each), the rejected ones (start time, H,
 * estimate) and the controller's figures as attributes. */
static hymo_status control_output(const hymo_cosim_control *c, hymo_ref_writer *w, const hymo_cosim_summary *sum,
                                  hymo_error *err)
{
    hymo_status st = HYMO_OK;
#define TRY(call)                                                                                  \
    do {                                                                                           \
        if (st == HYMO_OK) st = (call);                                                            \
    } while (0)
    const char *g = "cosim/control";
    const int n = (int)c->n_hist, nr = (int)c->n_rej_hist;
    if (n > 0) {
        TRY(hymo_ref_writer_put_matrix(w, "cosim/control/time", n, 0, c->h_t, "s", NULL, err));
        TRY(hymo_ref_writer_put_matrix(w, "cosim/control/H", n, 0, c->h_H, "s", NULL, err));
        TRY(hymo_ref_writer_put_matrix(w, "cosim/control/estimate", n, 0, c->h_est, "1", NULL, err));
        TRY(hymo_ref_writer_put_matrix(w, "cosim/control/rejections", n, 0, c->h_rej, "1", NULL, err));
    }
    if (nr > 0) {
        TRY(hymo_ref_writer_put_matrix(w, "cosim/control/rejected_time", nr, 0, c->r_t, "s", NULL, err));
        TRY(hymo_ref_writer_put_matrix(w, "cosim/control/rejected_H", nr, 0, c->r_H, "s", NULL, err));
        TRY(hymo_ref_writer_put_matrix(w, "cosim/control/rejected_estimate", nr, 0, c->r_est, "1", NULL, err));
    }
    TRY(hymo_ref_writer_put_attr_str(w, g, "H_control", "energy", err));
    TRY(hymo_ref_writer_put_attr_double(w, g, "tol_energy_rel", c->rtol, err));
    TRY(hymo_ref_writer_put_attr_double(w, g, "tol_energy_abs", c->atol, err));
    TRY(hymo_ref_writer_put_attr_double(w, g, "H_min", c->H_min, err));
    TRY(hymo_ref_writer_put_attr_double(w, g, "H_max", c->H_max, err));
    TRY(hymo_ref_writer_put_attr_double(w, g, "output_dt", (double)c->q_grid * c->H_min, err));
    TRY(hymo_ref_writer_put_attr_double(w, g, "order", c->k, err));
    TRY(hymo_ref_writer_put_attr_int(w, g, "n_accepted", (int)c->n_accepted, err));
    TRY(hymo_ref_writer_put_attr_int(w, g, "n_rejected", (int)c->n_rejected, err));
    TRY(hymo_ref_writer_put_attr_int(w, g, "n_over_tolerance", (int)c->n_over, err));
    TRY(hymo_ref_writer_put_attr_double(w, g, "estimate_max", c->est_max, err));
    TRY(hymo_ref_writer_put_attr_double(w, g, "H_used_min", sum->H_used_min, err));
    TRY(hymo_ref_writer_put_attr_double(w, g, "H_used_max", sum->H_used_max, err));
    TRY(hymo_ref_writer_put_attr_double(w, g, "H_used_mean", sum->H_used_mean, err));
    TRY(hymo_ref_writer_put_attr_int(w, g, "can_reject", c->can_reject, err));
    TRY(hymo_ref_writer_put_attr_str(w, g, "note", c->can_reject ? "steps over the tolerance are rejected and "
                                     "retaken from a checkpoint of every subsystem" : c->note, err));
#undef TRY
    return st;
}

/* Opens the output file at path for the rows to come (d->w). */
static hymo_status open_output(driver *d, const char *path, hymo_error *err)
{
    hymo_status st = cosim_series_start(d, &d->outs, d->ser, &d->uref, err);
    if (st == HYMO_OK) {
        d->iterations = calloc((size_t)d->bcap, sizeof *d->iterations);
        if (!d->iterations) st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    if (st == HYMO_OK) st = open_writer(d, path, &d->w, &d->w_names, err);
    return st;
}

/* The first nr rows in memory (global rows d->base ..) to the output file. */
static hymo_status append_rows(driver *d, long nr, hymo_error *err)
{
    for (long r = 0; r < nr; ++r) d->iterations[r] = (int)d->row[HYMO_SIG_ITERATIONS][r];
    if (d->outs) cosim_series_eval(d, d->outs, d->ser, d->uref, d->base, nr);
    hymo_ref_block blk = {.n = (int)nr, .series = (const double *const *)d->ser};
    for (int s = 0; s < HYMO_SIGNAL_COUNT; ++s) { /* each signal's rows at its place in the block */
        const void *data = hymo_ref_signals[s].type == HYMO_SIG_I32 ? (const void *)d->iterations : d->row[s];
        memcpy((char *)&blk + hymo_ref_signals[s].block, &data, sizeof data);
    }
    return hymo_ref_writer_append(d->w, &blk, err);
}

/* The rest of the output file (its rows are written): the /cosim
 * attributes and matrices and the summary; closes it (renamed to its
 * name) or, after a failure, discards it. */
static hymo_status write_output(driver *d, const hymo_cosim_summary *sum, hymo_error *err)
{
    const int nb = d->nb;
    hymo_ref_writer *w = d->w;
    d->w = NULL;
    hymo_status st = d->w_status;
    if (st != HYMO_OK && err) *err = d->w_err;
    if (st == HYMO_OK && d->scratch_errno) st = scratch_failed(d, err);
    int maxw = 2 * nb;
    for (int k = 0; k < d->nsub; ++k) maxw = d->subs[k]->n_outputs > maxw ? d->subs[k]->n_outputs : maxw;
    const char **bond = calloc((size_t)maxw + 1, sizeof *bond);
    double *tmp = malloc((size_t)d->bcap * (size_t)(maxw > 0 ? maxw : 1) * sizeof *tmp);
    if (st == HYMO_OK && (!bond || !tmp)) st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    if (st == HYMO_OK && d->n_rows == 0) { /* no rows */
        hymo_ref_block blk = {.n = 0, .series = (const double *const *)d->ser};
        st = hymo_ref_writer_append(w, &blk, err);
    }
    if (st == HYMO_OK) {
        for (int a = 0; a < nb; ++a) bond[a] = d->s.bonds[a].name;
    }
#define TRY(call)                                                                                  \
    do {                                                                                           \
        if (st == HYMO_OK) st = (call);                                                            \
    } while (0)
    const hymo_cosim_options *o = d->o;
    if (d->s.attrs) TRY(d->s.attrs(d->s.attrs_ctx, w, err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "status", sum->stable ? "stable" : "unstable", err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "status_reason", sum->reason, err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "verdict", hymo_cosim_verdict_name(sum->verdict), err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "verdict_reason", sum->verdict_reason, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "work_abs", sum->work_abs, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "max_residual_ratio", sum->max_residual_ratio, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "max_balance_ratio", sum->max_balance_ratio, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "unstable_ratio", o->unstable_ratio, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "unstable_balance_ratio", o->unstable_balance_ratio, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "unstable_floor", o->unstable_floor, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "max_balance_jump", o->max_balance_jump, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "balance_window", o->balance_window, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "balance_jump_excess", sum->balance_jump_excess, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "balance_jump", sum->balance_jump, err));
    if (sum->has_pressure_error)
        TRY(hymo_ref_writer_put_attr_double(w, "cosim", "max_pressure_error", sum->max_pressure_error, err));
    TRY(hymo_ref_writer_put_attr_int(w, "cosim", "n_bonds", nb, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "residual_energy_final", sum->residual_energy_final, err));
    if (d->iter) { /* iterative coupling: per communication point (t = 0: 0) and totals */
        TRY(hymo_ref_writer_put_attr_int(w, "cosim", "iterate_max", o->iterate_max, err));
        TRY(hymo_ref_writer_put_attr_double(w, "cosim", "iterate_rtol", o->iterate_rtol, err));
        TRY(hymo_ref_writer_put_attr_double(w, "cosim", "iterate_atol", o->iterate_atol, err));
        TRY(hymo_ref_writer_put_attr_str(w, "cosim", "iterate_accel", hymo_iterate_accel_name(o->iterate_accel), err));
        TRY(hymo_ref_writer_put_attr_int(w, "cosim", "iterate_n_coupling", sum->iterate_n_coupling, err));
        TRY(hymo_ref_writer_put_attr_double(w, "cosim", "iterate_total", (double)sum->iterate_total, err));
        TRY(hymo_ref_writer_put_attr_double(w, "cosim", "iterate_non_converged", (double)sum->iterate_non_converged,
                                            err));
        TRY(hymo_ref_writer_put_attr_double(w, "cosim", "iterate_max_residual", sum->iterate_max_residual, err));
        TRY(hymo_ref_writer_put_matrix_part(w, "cosim/iterations", (int)d->n_rows, 0, 0, (int)d->n_rows, d->rec_iter,
                                            "1", NULL, err));
        TRY(hymo_ref_writer_put_matrix_part(w, "cosim/iteration_residual", (int)d->n_rows, 0, 0, (int)d->n_rows,
                                            d->rec_ires, "1", NULL, err));
    }
#define PUT(path, ptr, width, col0, cols, scale, units, names)                                     \
    TRY(put_rows(d, w, path, &d->ptr, width, col0, cols, scale, units, names, tmp, err))
    if (nb > 0) /* (cols = 0 would be a 1-D dataset) */
        PUT("cosim/residual_power", rec_dP, nb, 0, nb, 1.0, "W", bond);
    if (nb > 0) PUT("cosim/residual_energy", rec_E, nb, 0, nb, 1.0, "J", bond);
    PUT("cosim/residual_energy_total", rec_Et, 1, 0, 0, 1.0, "J", NULL);
    if (nb > 0) PUT("cosim/signals/sdd", rec_sdd, nb, 0, nb, 1.0, "m/s^2", bond);
    if (nb > 0) PUT("cosim/signals/sd_hydraulic_input", rec_sdt, nb, 0, nb, 1.0, "m/s", bond);
    int n1 = 0;
    for (int a = 0; a < nb; ++a) n1 += d->s.bonds[a].n_eff == 1;
    if (d->tlm) { /* per line end: Z_c, L = T Z_c, L A^2 of every row; line energy per bond */
        const char **chamber = calloc((size_t)(2 * nb), sizeof *chamber);
        if (!chamber) TRY(hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory"));
        for (int j = 0; st == HYMO_OK && j < 2 * nb; ++j) chamber[j] = d->s.bonds[j / 2].eff_name[j % 2];
        TRY(hymo_ref_writer_put_attr_double(w, "cosim", "tlm_delay", o->H, err));
        TRY(hymo_ref_writer_put_attr_double(w, "cosim", "tlm_parasitic_mass_initial_max", sum->tlm_mass_initial_max,
                                            err));
        TRY(hymo_ref_writer_put_attr_double(w, "cosim", "tlm_parasitic_mass_max", sum->tlm_mass_max, err));
        if (d->s.model && d->s.model->n_motors > 0) {
            TRY(hymo_ref_writer_put_attr_double(w, "cosim", "tlm_parasitic_inertia_initial_max",
                                                sum->tlm_inertia_initial_max, err));
            TRY(hymo_ref_writer_put_attr_double(w, "cosim", "tlm_parasitic_inertia_max", sum->tlm_inertia_max, err));
        }
        PUT("cosim/tlm/impedance", rec_zc, 2 * nb, 0, 2 * nb, 1.0, "Pa s/m^3", chamber);
        PUT("cosim/tlm/inductance", rec_zc, 2 * nb, 0, 2 * nb, o->H, "Pa s^2/m^3", chamber);
        PUT("cosim/tlm/parasitic_mass", rec_mass, 2 * nb, 0, 2 * nb, 1.0,
            d->s.model && d->s.model->n_motors > 0 ? "kg (chambers), kg m^2 (motor ports)" : "kg", chamber);
        PUT("cosim/tlm/line_energy", rec_eline, nb, 0, nb, 1.0, "J", bond);
        for (int a = 0; a < nb; ++a) { /* rec_y: the pistons' waves, then the rods' */
            bond[a] = d->s.bonds[a].eff_name[0];
            bond[nb + a] = d->s.bonds[a].eff_name[1];
        }
        PUT("cosim/signals/chamber_wave", rec_y, 2 * nb, 0, 2 * nb, 1.0, "Pa", bond);
        free(chamber);
    } else if (nb > 0 && n1 == nb) {
        /* rec_y rows are 2 nb wide: the forces are the first nb columns */
        PUT("cosim/signals/force_hydraulic", rec_y, 2 * nb, 0, nb, 1.0, "N", bond);
    } else if (nb > 0 && n1 == 0) {
        for (int a = 0; a < nb; ++a) {
            bond[a] = d->s.bonds[a].eff_name[0];
            bond[nb + a] = d->s.bonds[a].eff_name[1];
        }
        PUT("cosim/signals/chamber_pressure", rec_y, 2 * nb, 0, 2 * nb, 1.0, "Pa", bond);
    }
    if (d->rec_out) { /* every subsystem's outputs at the communication points */
        for (int k = 0, j = 0; k < d->nsub && st == HYMO_OK; j += d->subs[k++]->n_outputs) {
            const hymo_subsystem *s = d->subs[k];
            const int no = s->n_outputs;
            for (int i = 0; i < no; ++i) {
                const char *nm = d->s.output_name ? d->s.output_name(s, i) : NULL;
                bond[i] = nm ? nm : "";
            }
            char path_k[160];
            snprintf(path_k, sizeof path_k, "cosim/outputs/%s", s->name);
            if (no > 0) PUT(path_k, rec_out, d->ny, j, no, 1.0, "", bond);
        }
    }
#undef PUT
    if (d->ctl.on) TRY(control_output(&d->ctl, w, sum, err));
#undef TRY
    if (w) {
        hymo_run_summary rs;
        run_summary(d, sum, &rs);
        if (!rs.has_accuracy && !rs.accuracy_missing_reason[0]) /* the file says why it has no /accuracy */
            snprintf(rs.accuracy_missing_reason, sizeof rs.accuracy_missing_reason,
                     "a co-simulation has no error-estimate companion (its verdict judges it against a reference)");
        if (st == HYMO_OK) {
            st = hymo_ref_writer_close(w, &rs, err);
        } else {
            hymo_ref_writer_discard(w);
        }
    }
    free(bond);
    free(tmp);
    return st;
}

/* TLM: the parasitic masses L A^2 (seed 003 Eq. 8) at t = 0 and their
 * largest values over the rows kept, per line end and overall. */
static void tlm_summary(const driver *d, hymo_cosim_summary *sum)
{
    const int w = 2 * d->nb;
    const hymo_model *model = d->s.model;
    size_t len = 0;
    sum->n_tlm = w;
    sum->tlm_report[0] = '\0';
    for (int j = 0; j < w; ++j) {
        const double mmax = d->tlm_mmax[j], mass0 = d->tlm_m0[j]; /* over the rows, kept by record */
        const double zc = d->tlm_zc0[j];
        /* with a model, the volume node of the chamber or motor port (bond j / 2 is actuator j / 2); a
         * motor's "mass" L D^2 is an inertia, kept apart */
        int node0 = -1, node1 = -1;
        double w0, w1;
        if (model) hymo_actuator_ports(model, j / 2, &node0, &node1, &w0, &w1);
        const int motor = model && j / 2 >= model->n_cylinders;
        const char *node = model ? model->nodes[j % 2 ? node1 : node0].name : "", *mu = motor ? "kg m^2" : "kg";
        double *m0 = motor ? &sum->tlm_inertia_initial_max : &sum->tlm_mass_initial_max,
               *m1 = motor ? &sum->tlm_inertia_max : &sum->tlm_mass_max;
        if (mass0 > *m0) *m0 = mass0;
        if (mmax > *m1) *m1 = mmax;
        char line[256]; /* whole lines only: the rest is in the file (/cosim/tlm/) */
        const int n = snprintf(line, sizeof line,
                               "tlm %-11s%s%s%s: t = 0: Z_c %.4g Pa s/m^3, L %.4g Pa s^2/m^3, mass %.4g %s; "
                               "max mass %.4g %s at t = %g s\n",
                               d->s.bonds[j / 2].eff_name[j % 2], model ? " (" : "", node, model ? ")" : "", zc,
                               d->o->H * zc, mass0, mu, mmax, mu, d->tlm_tmax[j]);
        static const char more[] = "tlm (the other lines: /cosim/tlm/ in the output file)\n";
        const size_t cap = sizeof sum->tlm_report, need = len + (size_t)n;
        if (need + sizeof more <= cap || (j + 1 == w && need < cap)) { /* room for this line and the note */
            len += (size_t)snprintf(sum->tlm_report + len, cap - len, "%s", line);
        } else if (len + sizeof more <= cap) { /* the note, then nothing more */
            snprintf(sum->tlm_report + len, cap - len, "%s", more);
            len = cap;
        }
    }
}

/* The online verdict figures at the communication point whose row
 * read_row has read: its pressures, energy-balance error and W. */
static void watch_point(driver *d)
{
    const long r = d->n_rows - d->base; /* the row read_row has read, in the block held */
    const int np = d->width[HYMO_SIG_P];
    hymo_watch_point(&d->watch, d->row[HYMO_SIG_TIME][r], d->row[HYMO_SIG_P] + r * np, d->row[HYMO_SIG_DRIFT][r],
                     d->W);
}

/* The verdict (hymo_cosim_verdict) of a finished run: unstable, else the
 * first accuracy threshold of opt exceeded, else accurate (thresholds
 * given) or stable (none). */
static void verdict(const hymo_cosim_options *opt, hymo_cosim_summary *sum)
{
    char *out = sum->verdict_reason;
    const size_t cap = sizeof sum->verdict_reason;
    size_t len = 0;
    out[0] = '\0';
    if (!sum->stable) {
        sum->verdict = HYMO_VERDICT_UNSTABLE;
        snprintf(out, cap, "%s", sum->reason);
        return;
    }
    int any = 0, failed = 0;
#define NOTE(...)                                                                                  \
    do {                                                                                           \
        failed++;                                                                                  \
        if (len < cap) {                                                                           \
            len += (size_t)snprintf(out + len, cap - len, "%s", failed > 1 ? "; " : "");           \
            if (len < cap) len += (size_t)snprintf(out + len, cap - len, __VA_ARGS__);             \
        }                                                                                          \
    } while (0)
    for (int k = 0; k < HYMO_CMP_SIGNALS; ++k)
        for (int abs_ = 0; abs_ < 2; ++abs_) {
            const double lim = abs_ ? opt->max_abs[k] : opt->max_rms[k];
            if (!(lim > 0.0)) continue;
            any = 1;
            if (!sum->has_errors) {
                NOTE("a threshold on %s is given but no reference", hymo_compare_signal_name(k));
                continue;
            }
            /* the largest pressure error: the online figure */
            const double v = abs_ && k == HYMO_CMP_P && sum->has_pressure_error ? sum->max_pressure_error
                             : abs_                                         ? sum->errors.max[k]
                                                                            : sum->errors.rms[k];
            if (!(v <= lim))
                NOTE("%s error of %s %.4g %s exceeds %g", abs_ ? "max |.|" : "RMS", hymo_compare_signal_name(k), v,
                     hymo_compare_signal_unit(NULL, k, 0), lim);
        }
    if (opt->max_residual_energy > 0.0) {
        any = 1;
        if (!(sum->residual_energy_max_abs <= opt->max_residual_energy))
            NOTE("max |residual energy| %.4g J exceeds %g J", sum->residual_energy_max_abs, opt->max_residual_energy);
    }
    if (opt->max_balance_jump > 0.0 && sum->balance_jump_excess > opt->unstable_floor)
        NOTE("energy-balance burst: %s changed by %.4g J from t = %.6g to %.6g s, %.4g J more than %g of the "
             "actuator work in that time (limit %g J)",
             sum->has_errors ? "D - D_ref" : "D", sum->balance_jump_at, sum->balance_jump_t0, sum->balance_jump_t1,
             sum->balance_jump_excess, opt->max_balance_jump, opt->unstable_floor);
#undef NOTE
    sum->verdict = failed ? HYMO_VERDICT_INACCURATE : any ? HYMO_VERDICT_ACCURATE : HYMO_VERDICT_STABLE;
    if (!failed)
        snprintf(out, cap, "%s", any ? "every accuracy threshold holds" : "bounded; no accuracy threshold given");
}

hymo_status hymo_cosim_drive(const hymo_cosim_setup *setup, const hymo_reference *ref, const char *out_path,
                             hymo_cosim_summary *summary, hymo_error *err)
{
    hymo_cosim_summary sum;
    memset(&sum, 0, sizeof sum);
    driver d;
    hymo_status st = driver_create(&d, setup, err);
    if (st != HYMO_OK) {
        driver_free(&d);
        return st;
    }
    if (!out_path && ref) { /* the rows the comparison reads, chosen as they come */
        d.compare_only = 1;
        d.sel_ref = ref;
        const long cap = 2 * (long)(ref->n > 0 ? ref->n : 0) + 2;
        for (int k = 0; k <= N_CMP_SIG && st == HYMO_OK; ++k)
            if (!(d.sel_col[k] = malloc((size_t)cap * (size_t)(k < N_CMP_SIG ? d.width[cmp_sig[k]] : 1) * sizeof(double) + 1)))
                st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (co-simulation, %d reference rows)", ref->n);
        if (st != HYMO_OK) {
            driver_free(&d);
            return st;
        }
    }
    if (!out_path) { /* no file: the signals of the checks, the online figures and the comparison */
        static const int used[] = {HYMO_SIG_TIME, HYMO_SIG_Z,     HYMO_SIG_ZD,   HYMO_SIG_P,    HYMO_SIG_U,
                                   HYMO_SIG_S,    HYMO_SIG_SD,    HYMO_SIG_FORCE, HYMO_SIG_WORK, HYMO_SIG_DRIFT};
        memset(d.read, 0, sizeof d.read);
        for (size_t i = 0; i < sizeof used / sizeof used[0]; ++i) d.read[used[i]] = 1;
    }
    if (out_path || (ref && !d.compare_only)) { /* the rows, kept for the file or the comparison */
        d.scratch = tmpfile();
        if (!d.scratch) {
            st = hymo_error_set(err, HYMO_ERR_IO, "co-simulation: no temporary file for its rows: %s", strerror(errno));
            driver_free(&d);
            return st;
        }
    }
    if (out_path && (st = open_output(&d, out_path, err)) != HYMO_OK) {
        driver_free(&d);
        return st;
    }
    const hymo_cosim_options *opt = setup->opt;
    const long n_macro = d.cap - 1;
    if (hymo_watch_init(&d.watch, ref, d.width[HYMO_SIG_P], d.ctl.on ? d.ctl.H_min : opt->H, opt->balance_window,
                        opt->max_balance_jump)) {
        driver_free(&d);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    }
    const int nb = d.nb;
    sum.stable = 1;
    sum.n_bonds = nb;
    snprintf(sum.reason, sizeof sum.reason, "reached t_end");
    for (int a = 0; d.tlm && a < nb; ++a) tlm_line_energy(&d, a);
    read_row(&d);
    watch_point(&d);
    record(&d, 0);
    double t0 = hymo_now_seconds(), v[S_N];
    mech_stats(&d, v);
    const double it0 = v[S_ITER_TOTAL];
    for (long n = 0; d.ctl.on ? !hymo_cosim_control_done(&d.ctl) : n < n_macro;) {
        double t = (double)n * opt->H;
        if (d.ctl.on) { /* the step from the checkpoint, its H from the controller */
            t = (double)d.ctl.q_done * d.ctl.H_min;
            d.H = hymo_cosim_control_begin(&d.ctl, d.m);
        }
        const double H = d.H;
        hymo_error step_err;
        st = d.iter ? hymo_master_step_iterated(d.m, d.iter, &d.istats, &step_err) : hymo_master_step(d.m, &step_err);
        if (d.iter && st == HYMO_OK) d.rec_iter[n + 1] = d.istats.iterations, d.rec_ires[n + 1] = d.istats.residual;
        if (st != HYMO_OK) {
            if (setup->abort_status != HYMO_OK && st == setup->abort_status) { /* a broken subsystem */
                if (err) *err = step_err;
                driver_free(&d);
                return st;
            }
            st = HYMO_OK;
            sum.stable = 0;
            snprintf(sum.reason, sizeof sum.reason, "%s", step_err.message);
            break;
        }
        bond_powers(&d);
        if (d.ctl.on) { /* the estimate of the step: accepted, or rejected and restored */
            for (int a = 0; a < nb; ++a) {
                d.dE_step[a] = hymo_cosim_residual_energy_step(setup->rectangle, H, d.dP_prev[a], d.dP[a]);
                d.E_tr[a] = setup->rectangle ? H * fabs(d.P_bond[a]) : 0.5 * H * (fabs(d.P_prev[a]) + fabs(d.P_bond[a]));
            }
            if (!hymo_cosim_control_end(&d.ctl, d.m, t, hymo_cosim_control_estimate(&d.ctl, nb, d.dE_step, d.E_tr)))
                continue;
        }
        for (int a = 0; a < nb; ++a) {
            double dE = hymo_cosim_residual_energy_step(setup->rectangle, H, d.dP_prev[a], d.dP[a]);
            /* plus the change of the energy stored in the lines, by the same
             * rule as the port powers: the rectangle rule's is H c^2/(4 Z_c)
             * of the waves at t + H; the trapezoidal rule's is the mean of
             * this step's change and the one before */
            if (d.tlm)
                dE += setup->rectangle ? d.tlm_deline[a] : 0.5 * (d.tlm_deline_prev[a] + d.tlm_deline[a]);
            if (d.tlm) d.tlm_deline_prev[a] = d.tlm_deline[a];
            d.E[a] += dE;
            d.E_total += dE;
            d.dP_prev[a] = d.dP[a];
            d.P_prev[a] = d.P_bond[a];
        }
        read_row(&d);
        const char *bad = non_finite(&d);
        if (bad || !isfinite(d.E_total) || fabs(d.E_total) > opt->unstable_energy) {
            sum.stable = 0;
            if (bad)
                snprintf(sum.reason, sizeof sum.reason, "t = %.6g s (step %ld): %s became non-finite", t + H, n + 1,
                         bad);
            else
                snprintf(sum.reason, sizeof sum.reason,
                         "t = %.6g s (step %ld): |residual energy| %.3g J exceeds the limit %.3g J", t + H, n + 1,
                         fabs(d.E_total), opt->unstable_energy);
            break;
        }
        if ((setup->unstable && setup->unstable(setup->unstable_ctx, t + H, n + 1, sum.reason, sizeof sum.reason)) ||
            relative_limits_exceeded(&d, t + H, n + 1, sum.reason, sizeof sum.reason)) {
            sum.stable = 0;
            break;
        }
        if (fabs(d.E_total) > d.E_max) d.E_max = fabs(d.E_total);
        watch_point(&d);
        record(&d, 1);
        sum.n_macro = ++n;
    }
    if (sum.stable && growing_at_end(&d, sum.reason, sizeof sum.reason)) sum.stable = 0;
    sum.wall_time = hymo_now_seconds() - t0;
    if (d.iter) {
        sum.iterate_total = d.istats.total_iterations;
        sum.iterate_non_converged = d.istats.non_converged;
        sum.iterate_max_residual = d.istats.max_residual;
        sum.iterate_n_coupling = hymo_master_iteration_size(d.iter);
    }
    mech_stats(&d, v);
    sum.t_reached = d.last_time;
    sum.residual_energy_final = d.last_Et;
    if (d.scratch && d.n_rows > d.base) flush_block(&d); /* every row in the scratch file */
    sum.residual_energy_max_abs = d.E_max;
    sum.work_abs = d.W;
    sum.max_residual_ratio = d.max_ratio_E;
    sum.max_balance_ratio = d.max_ratio_D;
    sum.peak_drift = v[S_PEAK_DRIFT];
    sum.max_work = v[S_MAX_WORK];
    sum.max_constraint_position = v[S_MAX_CPOS];
    sum.mean_mech_iterations = sum.n_macro > 0 && v[S_STEPS] > 0.0 ? (v[S_ITER_TOTAL] - it0) / v[S_STEPS] : 0.0;
    for (int k = 0; k < d.nsub; ++k) {
        const hymo_subsystem *hs = d.subs[k];
        if (d.hyd_stat_vr[2 * k] < 0 || d.hyd_stat_vr[2 * k + 1] < 0) continue;
        double hv[2];
        hs->ops->get_real(hs, &d.hyd_stat_vr[2 * k], 2, hv);
        sum.hyd_steps += (long)hv[0];
        sum.hyd_rhs_evals += (long)hv[1];
    }
    if (ref) { /* the compared signals of the rows the comparison reads: chosen, or from the scratch file */
        enum { NSIG = N_CMP_SIG };
        double *col[NSIG + 1] = {0}, e_max = 0.0;
        long *sel = NULL, nsel = 0;
        if (d.compare_only) {
            if (d.n_rows > 0) choose_row(&d, d.n_rows - 1, d.n_rows > d.base ? d.n_rows - 1 - d.base : d.bcap - 1);
            for (int i = 0; i <= NSIG; ++i) col[i] = d.sel_col[i], d.sel_col[i] = NULL;
            nsel = d.nsel, e_max = d.sel_e_max;
        } else {
            st = d.scratch_errno ? scratch_failed(&d, err) : select_rows(&d, ref, &sel, &nsel, &e_max, err);
            for (int i = 0; i <= NSIG && st == HYMO_OK; ++i)
                st = gather_rows(&d, i < NSIG ? &d.row[cmp_sig[i]] : &d.rec_Et, i < NSIG ? d.width[cmp_sig[i]] : 1,
                                 sel, nsel, &col[i], err);
        }
        free(sel);
        if (st == HYMO_OK) {
            hymo_reference run;
            memset(&run, 0, sizeof run);
            run.n = (int)nsel;
            run.nz = d.width[HYMO_SIG_Z], run.np = d.width[HYMO_SIG_P], run.nu = d.width[HYMO_SIG_U], run.na = d.width[HYMO_SIG_S], run.ncut = d.width[HYMO_SIG_C_POS];
            run.time = col[0], run.z = col[1], run.zd = col[2], run.s = col[3];
            run.sd = col[4], run.p = col[5], run.u = col[6], run.force = col[7];
            run.has_cosim = 1;
            run.residual_energy_total = col[NSIG];
            st = hymo_compare_trajectories(ref, &run, &sum.errors, err);
            sum.errors.residual_energy_max_abs = e_max; /* of every row, not only the compared ones */
        }
        for (int i = 0; i <= NSIG; ++i) free(col[i]);
        if (st != HYMO_OK) {
            driver_free(&d);
            return st;
        }
        sum.has_errors = 1;
    }
    if (d.tlm) tlm_summary(&d, &sum);
    if (d.ctl.on) {
        const hymo_cosim_control *c = &d.ctl;
        sum.H_control = HYMO_H_ENERGY;
        sum.n_rejected = c->n_rejected;
        sum.H_used_min = c->n_accepted ? c->H_lo : 0.0, sum.H_used_max = c->H_hi;
        sum.H_used_mean = c->n_accepted ? c->H_sum / (double)c->n_accepted : 0.0;
        sum.est_max = c->est_max;
        sum.can_reject = c->can_reject;
        snprintf(sum.control_note, sizeof sum.control_note, "%s", c->note);
    }
    sum.has_pressure_error = d.watch.p_ref;
    sum.max_pressure_error = d.watch.p_err, sum.t_max_pressure_error = d.watch.p_err_t;
    sum.balance_jump = d.watch.jump, sum.balance_jump_excess = d.watch.n_points > 1 ? d.watch.jump_excess : 0.0;
    sum.balance_jump_at = d.watch.jump_at;
    sum.balance_jump_t0 = d.watch.jump_t0, sum.balance_jump_t1 = d.watch.jump_t1;
    verdict(opt, &sum);
    if (out_path) st = write_output(&d, &sum, err);
    driver_free(&d);
    if (summary) *summary = sum;
    return st;
}

/* ---------------------------------------------- split mode: the front end */

/* /cosim attributes of a split-mode run. */
static hymo_status split_attrs(const void *ctx, hymo_ref_writer *w, hymo_error *err)
{
    const hymo_cosim_options *o = ctx;
    hymo_status st = HYMO_OK;
#define TRY(call)                                                                                  \
    do {                                                                                           \
        if (st == HYMO_OK) st = (call);                                                            \
    } while (0)
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "scheme", hymo_cosim_scheme_name(o->scheme), err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "coupling", hymo_coupling_name(o->coupling), err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "extrapolation", hymo_approx_name(o->approx), err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "hyd_integrator", hymo_hyd_integrator_name(o->hyd_integrator), err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "mech_integrator", hymo_mech_integrator_name(o->mech_integrator),
                                     err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "H", o->H, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "h_m", o->mech.dt, err));
    TRY(hymo_ref_writer_put_attr_double(w, "cosim", "h_h", o->h_h, err));
    TRY(hymo_ref_writer_put_attr_str(w, "cosim", "mech_inputs", hymo_mech_inputs_name(o->mech_inputs), err));
#undef TRY
    return st;
}

/* The split's power bonds, one per cylinder a (hymo/cosim.h layouts): the
 * mechanics' inputs F_a (velocity-force) or p_pist,a and p_rod,a weighted
 * by the areas, its outputs sd_a and sdd_a, the hydraulics' sd_input[a].
 * One per motor k too (coupled actuator a = n_cylinders + k): the
 * torque, or p_a and p_b weighted by D and -D, times the joint rate. */
static hymo_status split_bonds(const hymo_model *model, const hymo_cosim_options *opt, const hymo_split *sp,
                               hymo_cosim_bond *bonds, hymo_error *err)
{
    const hymo_coupling_table *coupling = hymo_cosim_tables_of(opt).coupling;
    const int na = hymo_coupled_actuators(model), per = coupling->per_actuator;
    for (int a = 0; a < na; ++a) {
        hymo_cosim_bond *b = &bonds[a];
        const char *an = hymo_actuator_name(model, a);
        const int motor = a >= model->n_cylinders;
        int node0, node1;
        double w0, w1;
        hymo_actuator_ports(model, a, &node0, &node1, &w0, &w1);
        snprintf(b->name, sizeof b->name, "%s", an);
        snprintf(b->eff_name[0], sizeof b->eff_name[0], "%s.%s", an, motor ? "port_a" : "piston");
        snprintf(b->eff_name[1], sizeof b->eff_name[1], "%s.%s", an, motor ? "port_b" : "rod");
        b->sub = 0;
        b->n_eff = per;
        b->eff_in[0] = per * a, b->eff_in[1] = per * a + 1;
        b->eff_w[0] = per == 1 ? 1.0 : w0;
        b->eff_w[1] = w1;
        for (int l = 0; l < sp->n_links; ++l)
            for (int k = 0; k < per; ++k)
                if (sp->links[l].to == 0 && sp->links[l].input == b->eff_in[k])
                    b->eff_src_sub[k] = sp->links[l].from, b->eff_src_out[k] = sp->links[l].output;
        b->flow_out = na + a;
        b->sdd_out = 2 * na + a;
        char name[64];
        snprintf(name, sizeof name, "sd_input[%d]", a);
        b->sdt_sub = -1;
        for (int k = 1; k < sp->n_subsystems && b->sdt_sub < 0; ++k)
            if ((b->sdt_vr = hymo_subsystem_find_variable(sp->subsystems[k], name)) >= 0) b->sdt_sub = k;
        if (b->sdt_sub < 0)
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "co-simulation: no hydraulic subsystem has variable '%s'",
                                  name);
        if (!coupling->tlm) continue;
        /* TLM: the line powers at both ends, the mechanics' waves (outputs
         * 3na + 2a, 3na + 2a + 1), Z_c and L A^2 per chamber */
        b->tlm = 1;
        snprintf(name, sizeof name, "line_power[%d]", a);
        b->line_vr = hymo_subsystem_find_variable(sp->subsystems[0], name);
        b->line_other_sub = -1;
        for (int k = 1; k < sp->n_subsystems && b->line_other_sub < 0; ++k)
            if ((b->line_other_vr = hymo_subsystem_find_variable(sp->subsystems[k], name)) >= 0) b->line_other_sub = k;
        if (b->line_vr < 0 || b->line_other_sub < 0)
            return hymo_error_set(err, HYMO_ERR_ARGUMENT, "co-simulation: '%s' missing on a side of the TLM lines",
                                  name);
        for (int k = 0; k < 2; ++k) {
            b->wave_out[k] = 3 * na + 2 * a + k;
            snprintf(name, sizeof name, "tlm_impedance[%d]", 2 * a + k);
            b->zc_vr[k] = hymo_subsystem_find_variable(sp->subsystems[0], name);
            snprintf(name, sizeof name, "tlm_mass[%d]", 2 * a + k);
            b->mass_vr[k] = hymo_subsystem_find_variable(sp->subsystems[0], name);
            if (b->zc_vr[k] < 0 || b->mass_vr[k] < 0)
                return hymo_error_set(err, HYMO_ERR_ARGUMENT, "co-simulation: the mechanics have no TLM variable '%s'",
                                      name);
        }
    }
    return HYMO_OK;
}

hymo_status hymo_cosim_run(const hymo_model *model, const hymo_cosim_options *opt, const hymo_reference *ref,
                           const char *out_path, hymo_cosim_summary *summary, hymo_error *err)
{
    hymo_status st = hymo_cosim_options_check(opt, err);
    if (st != HYMO_OK) return st;
    /* the same physics is enough: a comment, formatting or tolerance edit keeps the reference */
    if (ref && hymo_model_identity(ref->model_sha256, ref->model_physics_sha256, model->sha256, model->physics_sha256) ==
                   HYMO_MODEL_DIFFERENT)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT,
                              "the reference is of another model ('%s', sha256 %.12s...) than '%s' (%.12s...)",
                              ref->model_name, ref->model_sha256, model->name, model->sha256);
    hymo_split *sp = NULL;
    hymo_master *m = NULL;
    hymo_cosim_bond *bonds = calloc((size_t)hymo_coupled_actuators(model) + 1, sizeof *bonds);
    if (!bonds) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
    st = hymo_split_create(model, opt, &sp, err);
    if (st == HYMO_OK) st = hymo_split_master_create(sp, opt->H, &m, err);
    if (st == HYMO_OK) st = split_bonds(model, opt, sp, bonds, err);
    if (st == HYMO_OK) {
        const hymo_cosim_setup setup = {.subs = sp->subsystems,
                                        .nsub = sp->n_subsystems,
                                        .m = m,
                                        .links = sp->links,
                                        .n_links = sp->n_links,
                                        .bonds = bonds,
                                        .n_bonds = hymo_coupled_actuators(model),
                                        .opt = opt,
                                        .rectangle = hymo_cosim_tables_of(opt).approx->rectangle,
                                        .mech = 0,
                                        .control_order = hymo_cosim_tables_of(opt).approx->order + 2.0,
                                        .model = model,
                                        .attrs = split_attrs,
                                        .attrs_ctx = opt};
        st = hymo_cosim_drive(&setup, ref, out_path, summary, err);
    }
    hymo_master_free(m);
    hymo_split_free(sp);
    free(bonds);
    return st;
}

/* Communication steps of the time probe of hymo_cosim_estimate. */
#define PROBE_STEPS 50

hymo_status hymo_cosim_estimate(const hymo_model *model, const hymo_cosim_options *opt, int with_time,
                                double *bytes, double *seconds, hymo_error *err)
{
    hymo_status st = hymo_cosim_options_check(opt, err);
    if (st != HYMO_OK) return st;
    const double t_end = opt->mech.t_end;
    const double H = opt->H_control == HYMO_H_ENERGY && opt->H_min > 0.0 ? opt->H_min : opt->H;
    const double steps = floor(t_end / H + 0.5);
    double rows = steps + 2.0; /* the first and the last */
    if (opt->output_dt > 0.0) rows += floor(t_end / opt->output_dt + 0.5);
    const double text = model->source_text ? (double)strlen(model->source_text) : 0.0;
    if (bytes) *bytes = rows * hymo_rows_row_bytes(model) + text + 65536.0;
    if (!seconds) return HYMO_OK;
    *seconds = -1.0;
    if (!with_time || !(steps >= 1.0)) return HYMO_OK;
    /* the time: the first communication steps of the same co-simulation, without a file */
    hymo_cosim_options po = *opt;
    const double k = steps < PROBE_STEPS ? steps : PROBE_STEPS;
    po.mech.t_end = k * opt->H;
    po.H_control = HYMO_H_FIXED;
    hymo_cosim_summary sum;
    hymo_error perr;
    const double t0 = hymo_now_seconds();
    if (hymo_cosim_run(model, &po, NULL, NULL, &sum, &perr) == HYMO_OK)
        *seconds = (hymo_now_seconds() - t0) / k * (t_end / opt->H);
    return HYMO_OK;
}

void hymo_cosim_summary_print(FILE *out, const hymo_cosim_options *o, const hymo_cosim_summary *s)
{
    fprintf(out, "co-simulation  %s, %s, extrapolation %s, mechanics' inputs %s\n", hymo_cosim_scheme_name(o->scheme),
            hymo_coupling_name(o->coupling), hymo_approx_name(o->approx), hymo_mech_inputs_name(o->mech_inputs));
    /* the options' formulation, unless the integrator brings its own (index-1) */
    const hymo_mech_table *mech = hymo_cosim_tables_of(o).mech;
    const int fixed = !mech || mech->formulation;
    fprintf(out, "integrators    mechanics %s%s%s (h_m = %g s), hydraulics %s (h_h = %g s), H = %g s\n",
            hymo_mech_integrator_name(o->mech_integrator), fixed ? "" : " ",
            fixed ? "" : hymo_formulation_name(o->mech.formulation), o->mech.dt,
            hymo_hyd_integrator_name(o->hyd_integrator), o->h_h, o->H);
    hymo_cosim_summary_print_results(out, o, s);
}

void hymo_cosim_summary_print_results(FILE *out, const hymo_cosim_options *o, const hymo_cosim_summary *s)
{
    fprintf(out, "status         %s (%s)\n", s->stable ? "stable" : "UNSTABLE", s->reason);
    fprintf(out, "reached        t = %g s, %ld communication steps\n", s->t_reached, s->n_macro);
    if (s->H_control == HYMO_H_ENERGY) {
        double lo, hi;
        hymo_cosim_control_limits(o, &lo, &hi);
        fprintf(out, "step control   energy, tol %g,%g J; H %g..%g s (mean %.4g s) in [%g, %g] s; %ld rejected; "
                     "max estimate %.3g%s%s\n",
                o->tol_energy_rel, o->tol_energy_abs, s->H_used_min, s->H_used_max, s->H_used_mean, lo, hi,
                s->n_rejected, s->est_max, s->can_reject ? "" : "; ", s->can_reject ? "" : s->control_note);
    }
    fprintf(out, "residual       energy %.6g J at the end, max |E| %.6g J (%d bonds)\n", s->residual_energy_final,
            s->residual_energy_max_abs, s->n_bonds);
    fprintf(out, "energy balance peak |D| %.6g J of max |W_act| %.6g J\n", s->peak_drift, s->max_work);
    fprintf(out, "vs work        cumulative |actuator work| W %.6g J; max |E|/(W+%g J) %.3g (unstable above %g), "
                 "max |D|/(W+%g J) %.3g (above %g)\n",
            s->work_abs, o->unstable_floor, s->max_residual_ratio, o->unstable_ratio, o->unstable_floor,
            s->max_balance_ratio, o->unstable_balance_ratio);
    fprintf(out, "bursts         energy balance: max |dD| - %g dW %.4g J within %g s (|dD| %.4g J, t = %g..%g s; "
                 "inaccurate above %g J), largest |dD| %.4g J",
            o->max_balance_jump, s->balance_jump_excess, o->balance_window, s->balance_jump_at, s->balance_jump_t0,
            s->balance_jump_t1, o->unstable_floor, s->balance_jump);
    if (s->has_pressure_error)
        fprintf(out, "; max |p - p_ref| %.4g Pa at t = %g s", s->max_pressure_error, s->t_max_pressure_error);
    fprintf(out, "\n");
    fprintf(out, "mechanics      mean Newton iterations %.3g per step, max |Phi| %.3g\n", s->mean_mech_iterations,
            s->max_constraint_position);
    fprintf(out, "hydraulics     %ld internal steps, %ld right-hand sides\n", s->hyd_steps, s->hyd_rhs_evals);
    if (o->iterate_max > 0)
        fprintf(out,
                "iteration      %s, at most %d retakes, tolerance rtol %g atol %g over %d coupling variables: "
                "%ld retakes (%.3g per step), %ld steps not converged, max final residual %.3g (converged <= 1)\n",
                hymo_iterate_accel_name(o->iterate_accel), o->iterate_max, o->iterate_rtol, o->iterate_atol,
                s->iterate_n_coupling, s->iterate_total,
                s->n_macro > 0 ? (double)s->iterate_total / (double)s->n_macro : 0.0, s->iterate_non_converged,
                s->iterate_max_residual);
    if (s->n_tlm > 0)
    {
        fprintf(out, "tlm            delay T = H = %g s, %d lines", o->H, s->n_tlm);
        if (s->tlm_mass_max > 0.0 || !(s->tlm_inertia_max > 0.0)) /* cylinder chambers: L A^2, a mass */
            fprintf(out, "; parasitic mass L A^2 (seed 003 Eq. 8) at most %.4g kg at t = 0, %.4g kg over the run",
                    s->tlm_mass_initial_max, s->tlm_mass_max);
        if (s->tlm_inertia_max > 0.0) /* motor ports: L D^2, an inertia */
            fprintf(out, "; motor ports' inertia L D^2 at most %.4g kg m^2 at t = 0, %.4g kg m^2 over the run",
                    s->tlm_inertia_initial_max, s->tlm_inertia_max);
        fprintf(out, "\n%s", s->tlm_report);
    }
    if (s->has_errors) {
        const hymo_compare_result *e = &s->errors;
        fprintf(out, "vs reference   %d samples, t in [%g, %g] s\n", e->n_samples, e->t_start, e->t_end);
        for (int k = 0; k < HYMO_CMP_SIGNALS; ++k)
            fprintf(out, "  %-6s RMS %.4g  max %.4g %s\n", hymo_compare_signal_name(k), e->rms[k], e->max[k],
                    hymo_compare_signal_unit(NULL, k, 0));
    }
    fprintf(out, "verdict        %s (%s)\n", hymo_cosim_verdict_name(s->verdict), s->verdict_reason);
    fprintf(out, "wall time      %.3f s\n", s->wall_time);
}
