/* Double-step semirecursive formulation (coordinate partitioning, SPEC §1.4,
 * seed 002 §2.2): Newton unknowns are the step's increments of the
 * independent coordinates z^i; the dependent ones follow from Phi(z) = 0 by
 * an inner Newton iteration.
 * Content: the coordinate partition (hymo_partition), the run log of
 * independent sets and scratch. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/linalg.h"
#include "multibody.h"

/* Inner Newton stops when the increment is below this (rad or m); with
 * quadratic convergence the error left after the update is ~1e-20. */
#define INNER_TOL 1e-10
#define INNER_MAX_ITER 25
#define RESELECT_EVERY 8
/* A singular position: the best independent set's smallest pivot below
 * this fraction of its value at the start (every set's Phi_d near
 * singular, e.g. a parallelogram's links in one line).  With a dense Phi_d
 * the current set's smallest LU pivot is watched every step, and the
 * re-selection check runs at once (not only every RESELECT_EVERY steps)
 * when it falls below RESELECT_WATCH x reselect_ratio of its start value:
 * a fast crank passes its dead centre within fewer steps than that, and
 * the set is then re-selected as soon as its rank pivot falls below
 * reselect_ratio of the best set's, before its LU pivot collapses and
 * Newton fails in one Jacobian mode but not the other (the spatial RUSR
 * loop at 2 ms: both modes re-select at 0.618 s, cli_reselect_grid). */
#define SINGULAR_FRACTION 1e-2
#define RESELECT_WATCH 2.0
/* Near a singular position (the last step's LU pivot below
 * SINGULAR_FRACTION of the start's) the position solve takes an iterate
 * whose max |Phi| is at or below Phi's rounding, taken as PHI_FLOOR_ULPS x
 * (1 + max |z|) eps, as it is: a correction there is Phi_d^-1 applied to
 * Phi's rounding, eps/pivot, and the rates and accelerations R_d and
 * Phi_d^-1 gamma amplify that position error by 1/pivot and 1/pivot^2
 * again (one loop at 0.5 ms: a step landing at sin(theta) = 1.9e-5 of a
 * crossing took 3e-12 rad from the correction, 2 % off its acceleration
 * and 6.7e-4 J of energy).  Above that the iterate is corrected: a step
 * after one landing that close starts from a prediction off the
 * constraint manifold by the rounding amplified there (ten loops at
 * 0.25 ms: |Phi| = 12.6 (1 + max |z|) eps at a pivot 1e-3 of the
 * start's), and left uncorrected that offset puts the dependent
 * accelerations and the energy off for good (docs/models.md, "Singular
 * positions").  On those chains Phi's rounding at the crossings is up to
 * 4.3 (1 + max |z|) eps. */
#define PHI_FLOOR_ULPS 8.0
/* Closer still (the LU pivot below EXTRAP_FRACTION of the start's), the
 * velocity term of the dependent accelerations, -Phi_d^-1 gamma, carries
 * the rounding of the positions amplified by 1/pivot^3: there it is
 * extrapolated linearly in time from the last two steps' values (a smooth
 * function of time: second order at that step). */
#define EXTRAP_FRACTION 1e-3
/* Phi_d by KLU (many loops): the check every RESELECT_EVERY steps runs the
 * rank-revealing elimination on Phi_z (two of them: the best set and the
 * current one, O(m^3) on a deep tree) only where the current set may have
 * degraded since the last check.  The estimate is the current set's rank
 * pivot at the last check scaled by how the reciprocal of Phi_d's
 * condition number changed since then (KLU's 1-norm estimate from the
 * step's factors, a few solves: hymo_partition_rcond; KLU's own
 * pivots stay near their start value through a singular position, the
 * estimate falls with the rank pivots); the elimination runs when it is below
 * SPARSE_WATCH x reselect_ratio of the best set's pivot at the last check
 * (the re-selection test with a margin) or below SPARSE_SINGULAR_WATCH x
 * SINGULAR_FRACTION of the best set's at the start (the singular-position
 * test with a margin), and at the first check after a new set.  Between
 * the checks it runs, the best set's pivot is taken not to rise by more
 * than SPARSE_WATCH: a set kept while it stays within that margin is kept
 * by the full test too. */
#define SPARSE_WATCH 4.0
#define SPARSE_SINGULAR_WATCH 10.0

typedef struct {
    hymo_partition pt;
    double *MR; /* nz scratch (tangent) */
    /* run log of the independent sets (the whole list of names, not cut:
     * sized at creation for LOG_SETS sets; later sets end it with "; ...") */
    char *log, *names;
    size_t log_cap, names_cap;
    /* the model's `independent` hint as a mask of dependent
     * columns (1 = not hinted); NULL without a usable hint */
    unsigned char *hint_dep;
    int *rows;  /* nz scratch (tangent): the dependent coordinates, ascending */
    double *phi_full; /* m scratch: Phi of the full evaluation before a check (pt.drop) */
    int reselections;
    /* many loops (nz + m >= HYMO_KKT_SPARSE_MIN, no driven joints): R^T M' R
     * from the products M' R e_l (hymo_kin_mass_times), M' never formed
     * (kin.mass_lazy); v: nz scratch (a column of R) */
    int products;
    double *v;
    /* singular positions: the best set's and the current set's smallest
     * pivots at the start (rank pivots; LU pivots of a dense Phi_d), the
     * checks that found the best set below SINGULAR_FRACTION of its start
     * (the first time, the smallest ratio and its time) and the report */
    double best0, lu0;
    /* Phi_d by KLU: the last check's rank pivots of the best and the
     * current set and the current set's KLU pivot ratio then (chk_valid:
     * set by a check that kept the set) */
    double chk_best, chk_cur, chk_piv;
    int chk_valid;
    int near_singular; /* the last step's LU pivot below SINGULAR_FRACTION of lu0 */
    /* -Phi_d^-1 gamma (m, in the order of dep) of the last evaluation and
     * of the last two steps (times th[0] < th[1]; n_hist valid) */
    double *cterm, *hist[2], th[2];
    int n_hist;
    long n_singular;
    double t_singular, singular_min, t_singular_min;
    char singular[256];
} ds_content;

static double lu_min_pivot(const hymo_partition *pt);
static void set_check(ds_content *c, double best, double cur);

/* Independent sets the log holds in full (each ni names + its start time). */
#define LOG_SETS 8

static hymo_status ds_create(hymo_formulation *f, const hymo_mb *mb, hymo_error *err)
{
    ds_content *c = calloc(1, sizeof *c);
    if (!c) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (double-step)");
    f->content = c;
    c->MR = calloc((size_t)mb->nz + 1, sizeof(double));
    c->names_cap = (size_t)(mb->nz - mb->con->rank) * HYMO_NAME_MAX + 1; /* ni names, each with its comma */
    c->log_cap = LOG_SETS * (c->names_cap + 32) + 8;
    c->names = calloc(c->names_cap, 1);
    c->log = calloc(c->log_cap, 1);
    c->rows = calloc((size_t)mb->nz + 1, sizeof(int));
    c->v = calloc((size_t)mb->nz + 1, sizeof(double));
    c->cterm = calloc((size_t)mb->m + 1, sizeof(double));
    c->phi_full = calloc((size_t)mb->m + 1, sizeof(double));
    c->hist[0] = calloc((size_t)mb->m + 1, sizeof(double));
    c->hist[1] = calloc((size_t)mb->m + 1, sizeof(double));
    if (!c->cterm || !c->hist[0] || !c->hist[1] || !c->phi_full) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (double-step)");
    if (!c->MR || !c->names || !c->log || !c->rows || !c->v) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (double-step)");
    const hymo_model *model = mb->model;
    if (mb->m > 0 && model->n_independent_hint == mb->nz - mb->con->rank) {
        c->hint_dep = malloc((size_t)mb->nz);
        if (!c->hint_dep) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (double-step)");
        memset(c->hint_dep, 1, (size_t)mb->nz);
        for (int k = 0; k < model->n_independent_hint; ++k) c->hint_dep[model->independent_hint[k]] = 0;
    }
    hymo_status st = hymo_partition_alloc(&c->pt, mb->nz, mb->m, mb->con->rank, mb->con->nnz, err);
    c->pt.drop = mb->con->vanish; /* the inner Newton's Phi_d and R with KLU: without them */
    if (st == HYMO_OK && model->n_drivers > 0 && mb->m > 0) { /* driven joints stay independent */
        if (!(c->pt.allowed = malloc((size_t)mb->nz))) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        memset(c->pt.allowed, 1, (size_t)mb->nz);
        for (int k = 0; k < model->n_drivers; ++k) {
            c->pt.allowed[model->drivers[k].joint] = 0;
            if (c->hint_dep && c->hint_dep[model->drivers[k].joint]) { /* a hint making it dependent is not used */
                free(c->hint_dep);
                c->hint_dep = NULL;
            }
        }
    }
    return st;
}

static void ds_destroy(hymo_formulation *f)
{
    ds_content *c = f->content;
    if (!c) return;
    hymo_partition_free(&c->pt);
    free(c->MR);
    free(c->v);
    free(c->cterm), free(c->hist[0]), free(c->hist[1]), free(c->phi_full);
    free(c->names);
    free(c->log);
    free(c->hint_dep);
    free(c->rows);
    free(c);
    f->content = NULL;
}

static void append_log(ds_content *c, const hymo_model *model, double t)
{
    char *names = c->names;
    hymo_partition_names(&c->pt, model, names, c->names_cap);
    size_t len = strlen(c->log);
    if (len == 0) {
        snprintf(c->log, c->log_cap, "%s", names);
    } else if (len + strlen(names) + 32 < c->log_cap - 8) {
        snprintf(c->log + len, c->log_cap - len, "; %s from t=%.4g", names, t);
    } else if (len + 6 < c->log_cap && (len < 5 || strcmp(c->log + len - 5, "; ...") != 0)) {
        snprintf(c->log + len, c->log_cap - len, "; ..."); /* more sets: see n_reselections */
    }
}

/* The hinted independent set where its smallest pivot is at
 * least reselect_ratio times the best partition's (the same test that
 * keeps a set during the run); 1 if taken (partition set and factorised). */
static int take_hint(ds_content *c, const hymo_mb *mb)
{
    hymo_partition *pt = &c->pt;
    const int rank = pt->m, nz = mb->nz;
    if (!c->hint_dep) return 0;
    double best, hint;
    const hymo_csr a = hymo_constraints_csr(mb->con, mb->phi_zv);
    if (hymo_rank_pivots_csr(&a, &pt->rw, pt->allowed, pt->mask, pt->row_mask, rank, 0.0, &best) < rank) return 0;
    if (hymo_rank_pivots_csr(&a, &pt->rw, c->hint_dep, pt->mask, pt->row_mask, rank, 0.0, &hint) < rank ||
        !(hint > 0.0) || hint < mb->reselect_ratio * best)
        return 0;
    int ni = 0, nd = 0;
    pt->maps_valid = 0;
    for (int j = 0; j < nz; ++j) {
        if (c->hint_dep[j])
            pt->dep[nd++] = j;
        else
            pt->indep[ni++] = j;
    }
    for (int r = 0, k = 0; r < mb->m; ++r)
        if (pt->row_mask[r]) pt->rows[k++] = r;
    return !hymo_partition_factor(pt, &a); /* else the full selection */
}

static hymo_status select_partition(ds_content *c, const hymo_mb *mb, double t, hymo_error *err)
{
    if (take_hint(c, mb)) {
        append_log(c, mb->model, t);
        return HYMO_OK;
    }
    const hymo_csr a = hymo_constraints_csr(mb->con, mb->phi_zv);
    if (!(hymo_partition_select(&c->pt, &a) > 0.0))
        return hymo_error_set(err, HYMO_ERR_ASSEMBLY,
                              "t = %.6g s: constraint Jacobian is rank deficient (singular "
                              "configuration or redundant cut-joint equations)",
                              t);
    append_log(c, mb->model, t);
    return HYMO_OK;
}

/* The best available set's and the current set's smallest rank pivots
 * (0 where the rank is not reached). */
static void rank_pivots(ds_content *c, const hymo_mb *mb, double *best, double *cur)
{
    hymo_partition *pt = &c->pt;
    const int rank = pt->m, nz = mb->nz;
    const hymo_csr a = hymo_constraints_csr(mb->con, mb->phi_zv);
    if (hymo_rank_pivots_csr(&a, &pt->rw, pt->allowed, pt->mask, pt->row_mask, rank, 0.0, best) < rank) *best = 0.0;
    for (int j = 0; j < nz; ++j) pt->mask2[j] = 0;
    for (int r = 0; r < rank; ++r) pt->mask2[pt->dep[r]] = 1;
    if (hymo_rank_pivots_csr(&a, &pt->rw, pt->mask2, pt->mask, pt->row_mask, rank, 0.0, cur) < rank) *cur = 0.0;
}

static hymo_status ds_start(hymo_formulation *f, hymo_mb *mb, double t, hymo_error *err)
{
    ds_content *c = f->content;
    c->products = mb->nz + mb->m >= HYMO_KKT_SPARSE_MIN && c->pt.m > 0 && mb->model->n_drivers == 0;
    if (c->products) mb->kin.mass_lazy = 1; /* the engine's KKT matrix takes M''s entries from the tree too */
    hymo_status st = select_partition(c, mb, t, err);
    if (st != HYMO_OK || mb->m == 0) return st;
    double cur;
    rank_pivots(c, mb, &c->best0, &cur);
    c->lu0 = lu_min_pivot(&c->pt);
    set_check(c, c->best0, cur);
    mb->phi_z_live = c->pt.sp && c->pt.drop; /* the recorded residuals: the Phi_z the position solve uses */
    /* rank_pivots leaves the masks of the best set: the partition's own are
     * not used again before the next selection sets them */
    return HYMO_OK;
}

static void ds_begin_step(hymo_formulation *f, hymo_mb *mb) { (void)f, (void)mb; }

static int ds_n_mech(const hymo_formulation *f) { return ((const ds_content *)f->content)->pt.ni; }

/* the increments of the independent coordinates (the predicted zn - z,
 * rounded: only a start) */
static void ds_pack(const hymo_formulation *f, const hymo_mb *mb, double *x)
{
    const hymo_partition *pt = &((const ds_content *)f->content)->pt;
    for (int k = 0; k < pt->ni; ++k) x[k] = mb->zn[pt->indep[k]] - mb->z[pt->indep[k]];
}

/* The smallest |U_kk| of the dense LU of Phi_d (its reciprocals are
 * stored); INFINITY with KLU's factors or without constraints. */
static double lu_min_pivot(const hymo_partition *pt)
{
    if (pt->sp || pt->m == 0) return INFINITY;
    /* 1/x rounds monotonically: the reciprocal of the largest |1/U_kk| is
     * the smallest of the reciprocals */
    double r = 0.0;
    for (int k = 0; k < pt->m; ++k) {
        const double d = fabs(pt->phid_lu[k * pt->m + k]);
        if (d > r) r = d; /* not a number: left out, as its reciprocal was */
    }
    return 1.0 / r;
}

/* zn from the independent coordinates q (base == NULL) or base + q (the
 * increments q from base = z): a first-order prediction of the dependent
 * ones with R of the last factorisation, z_d += R_d dz_i (leaves an O(dz^2)
 * error for the inner Newton, usually removed in one pass), then the inner
 * Newton; leaves the kinematic positions, phi, phi_z and the factorisation
 * at zn. */
static hymo_status solve_positions(hymo_partition *pt, hymo_mb *mb, const double *base, const double *q, double t,
                                   double phi_floor, hymo_error *err)
{
    const int ni = pt->ni;
    double *u = pt->work + mb->m; /* ni scratch (the factorisation uses the first m <= mb->m) */
    for (int k = 0; k < ni; ++k) {
        const int j = pt->indep[k];
        u[k] = (base ? base[j] + q[k] : q[k]) - mb->zn[j];
    }
    hymo_partition_add_dependent(pt, u, mb->zn);
    for (int k = 0; k < ni; ++k) {
        const int j = pt->indep[k];
        mb->zn[j] = base ? base[j] + q[k] : q[k];
    }
    if (hymo_partition_solve_positions(pt, &mb->kin, mb->model, mb->con, mb->zn, mb->phi, mb->phi_zv,
                                       INNER_MAX_ITER, INNER_TOL, phi_floor))
        return hymo_error_set(err, HYMO_ERR_CONVERGENCE,
                              "t = %.6g s: dependent coordinates did not converge (max |Phi| = %.3g)", t,
                              hymo_norm_inf(mb->m, mb->phi));
    return HYMO_OK;
}

/* The dependent rates and accelerations from the independent ones (zdn,
 * zddn at the independent indices): zd_d = R_d zd_i, zdd_d = R_d zdd_i -
 * Phi_d^{-1} gamma; leaves the kinematic velocities and gamma evaluated. */
static inline void dependent_rates_m(ds_content *cn, hymo_partition *pt, hymo_mb *mb, double t, int extrapolate,
                                     const int m)
{
    const int ni = pt->ni; /* m: the kept rows (redundant ones left out) */
    double *w = pt->work, *u = pt->work + pt->m_all;
    for (int c = 0; c < m; ++c) mb->zdn[pt->dep[c]] = 0.0;
    for (int k = 0; k < ni; ++k) u[k] = mb->zdn[pt->indep[k]];
    hymo_partition_add_dependent(pt, u, mb->zdn);
    hymo_kin_velocities(&mb->kin, mb->model, mb->zdn);
    if (m > 0) {
        hymo_constraints_eval(mb->con, &mb->kin, mb->phi, NULL, mb->gamma);
        for (int r = 0; r < m; ++r) w[r] = mb->gamma[pt->rows[r]];
        hymo_partition_solve(pt, w);
        for (int c = 0; c < m; ++c) cn->cterm[c] = -w[c];
        if (extrapolate && cn->n_hist == 2 && t > cn->th[1] && lu_min_pivot(pt) < EXTRAP_FRACTION * cn->lu0) {
            const double r = (t - cn->th[1]) / (cn->th[1] - cn->th[0]);
            for (int c = 0; c < m; ++c) cn->cterm[c] = cn->hist[1][c] + r * (cn->hist[1][c] - cn->hist[0][c]);
        }
        for (int c = 0; c < m; ++c) mb->zddn[pt->dep[c]] = cn->cterm[c];
        for (int k = 0; k < ni; ++k) u[k] = mb->zddn[pt->indep[k]];
        hymo_partition_add_dependent(pt, u, mb->zddn);
    }
}

/* with m a constant for the small loops (the same operations) */
static void dependent_rates(ds_content *cn, hymo_partition *pt, hymo_mb *mb, double t, int extrapolate)
{
    switch (pt->m) {
    case 1: dependent_rates_m(cn, pt, mb, t, extrapolate, 1); break;
    case 2: dependent_rates_m(cn, pt, mb, t, extrapolate, 2); break;
    case 3: dependent_rates_m(cn, pt, mb, t, extrapolate, 3); break;
    default: dependent_rates_m(cn, pt, mb, t, extrapolate, pt->m);
    }
}

/* the position solve's floor (PHI_FLOOR_ULPS): 0 away from singular positions */
static double phi_floor(const ds_content *c, const hymo_mb *mb)
{
    if (!c->near_singular) return 0.0;
    double zmax = 0.0;
    for (int j = 0; j < mb->nz; ++j) zmax = fmax(zmax, fabs(mb->z[j]));
    return PHI_FLOOR_ULPS * DBL_EPSILON * (1.0 + zmax);
}

static hymo_status ds_unpack(hymo_formulation *f, hymo_mb *mb, const double *x, double t, hymo_error *err)
{
    ds_content *c = f->content;
    hymo_partition *pt = &c->pt;
    const double dt = mb->dt, a1 = 2.0 / dt, a2 = 4.0 / (dt * dt);
    hymo_status st = solve_positions(pt, mb, mb->z, x, t, phi_floor(c, mb), err);
    if (st != HYMO_OK) return st;
    for (int k = 0; k < pt->ni; ++k) { /* trapezoidal rule in the independent coordinates */
        const int j = pt->indep[k];
        const double dz = x[k]; /* the unknown itself, not zn - z (zn is rounded) */
        mb->zdn[j] = a1 * dz - mb->zd[j];
        mb->zddn[j] = a2 * dz - 2.0 * a1 * mb->zd[j] - mb->zdd[j];
    }
    dependent_rates(c, pt, mb, t, 1);
    return HYMO_OK;
}

static void ds_ode_pack(const hymo_formulation *f, const hymo_mb *mb, double *q, double *v, double *a)
{
    const hymo_partition *pt = &((const ds_content *)f->content)->pt;
    for (int k = 0; k < pt->ni; ++k) {
        q[k] = mb->z[pt->indep[k]];
        v[k] = mb->zd[pt->indep[k]];
        a[k] = mb->zdd[pt->indep[k]];
    }
}

static hymo_status ds_ode_unpack(hymo_formulation *f, hymo_mb *mb, const double *q, const double *v,
                                 const double *a, double t, hymo_error *err)
{
    ds_content *c = f->content;
    hymo_partition *pt = &c->pt;
    hymo_status st = solve_positions(pt, mb, NULL, q, t, phi_floor(c, mb), err);
    if (st != HYMO_OK) return st;
    for (int k = 0; k < pt->ni; ++k) {
        mb->zdn[pt->indep[k]] = v[k];
        mb->zddn[pt->indep[k]] = a[k];
    }
    dependent_rates(c, pt, mb, t, 0);
    return HYMO_OK;
}

static void ds_residual(const hymo_formulation *f, const hymo_mb *mb, double *fm)
{
    const hymo_partition *pt = &((const ds_content *)f->content)->pt;
    const double c = mb->dt * mb->dt / 4.0;
    hymo_partition_project(pt, mb->dyn_res, fm);
    for (int k = 0; k < pt->ni; ++k) fm[k] *= c;
}

static void ds_after_update(hymo_formulation *f, hymo_mb *mb) { (void)f, (void)mb; }

static hymo_status ds_after_jacobian(hymo_formulation *f, const hymo_sparse *jac, double t, hymo_error *err)
{
    (void)f, (void)jac, (void)t, (void)err;
    return HYMO_OK;
}

/* R^T M' R with R = dz/dz_i of the current factorisation (the second
 * derivatives of the dependent coordinates are neglected, see the engine's
 * fast Jacobian), and gx = gz R.  Column l of R is non-zero only in the
 * dependent rows and in row indep[l] (where it is 1): the sums run over
 * those rows, in ascending order, so that they are the full sums term by
 * term without the exact zeros (bit-identical), at O(nz m) per column
 * instead of O(nz^2) (an open chain, m = 0: M' itself). */
static void ds_tangent(const hymo_formulation *f, hymo_mb *mb, const double *gz, int na, double *gx,
                       hymo_sparse *block)
{
    double *jac = block->value; /* the complete pattern (no mech_pattern): column-major */
    const int ld = block->n_rows;
    const ds_content *c = f->content;
    const int nz = mb->nz, ni = c->pt.ni;
    const double *R = c->pt.R, *M = mb->kin.M;
    double *MR = c->MR;
    int *rows = c->rows, nd = 0;
    if (c->pt.m == 0) { /* R = I (not stored): M' and gz themselves */
        for (int l = 0; l < nz; ++l)
            for (int k = 0; k < nz; ++k) jac[l * ld + k] = M[k * nz + l];
        memcpy(gx, gz, (size_t)na * (size_t)nz * sizeof(double));
        return;
    }
    for (int j = 0; j < nz; ++j) rows[j] = 0;
    for (int r = 0; r < c->pt.m; ++r) rows[c->pt.dep[r]] = 1;
    for (int j = 0; j < nz; ++j)
        if (rows[j]) rows[nd++] = j; /* nd <= j: entries not yet read */
    /* mostly dependent rows (a ladder): the plain loops are cheaper; many
     * loops: column l of M' R by the product M' (R e_l) in O(nz), M' not formed */
    if (c->products || 2 * (nd + 1) > nz) {
        for (int l = 0; l < ni; ++l) {
            if (c->products) {
                for (int i = 0; i < nz; ++i) c->v[i] = R[i * ni + l];
                hymo_kin_mass_times(&mb->kin, c->v, MR);
            } else {
                for (int i = 0; i < nz; ++i) {
                    double s = 0.0;
                    for (int j = 0; j < nz; ++j) s += M[i * nz + j] * R[j * ni + l];
                    MR[i] = s;
                }
            }
            for (int k = 0; k < ni; ++k) {
                double s = 0.0;
                for (int i = 0; i < nz; ++i) s += R[i * ni + k] * MR[i];
                jac[l * ld + k] = s;
            }
        }
        for (int a = 0; a < na; ++a)
            for (int k = 0; k < ni; ++k) {
                double s = 0.0;
                for (int j = 0; j < nz; ++j) s += gz[a * nz + j] * R[j * ni + k];
                gx[a * ni + k] = s;
            }
        return;
    }
    for (int l = 0; l < ni; ++l) {
        const int il = c->pt.indep[l];
        for (int i = 0; i < nz; ++i) { /* column l of M' R */
            const double *Mi = &M[i * nz];
            double s = 0.0;
            int d = 0;
            for (; d < nd && rows[d] < il; ++d) s += Mi[rows[d]] * R[rows[d] * ni + l];
            s += Mi[il] * R[il * ni + l];
            for (; d < nd; ++d) s += Mi[rows[d]] * R[rows[d] * ni + l];
            MR[i] = s;
        }
        for (int k = 0; k < ni; ++k) {
            const int ik = c->pt.indep[k];
            double s = 0.0;
            int d = 0;
            for (; d < nd && rows[d] < ik; ++d) s += R[rows[d] * ni + k] * MR[rows[d]];
            s += R[ik * ni + k] * MR[ik];
            for (; d < nd; ++d) s += R[rows[d] * ni + k] * MR[rows[d]];
            jac[l * ld + k] = s;
        }
    }
    for (int a = 0; a < na; ++a)
        for (int k = 0; k < ni; ++k) {
            const int ik = c->pt.indep[k];
            const double *g = &gz[a * nz];
            double s = 0.0;
            int d = 0;
            for (; d < nd && rows[d] < ik; ++d) s += g[rows[d]] * R[rows[d] * ni + k];
            s += g[ik] * R[ik * ni + k];
            for (; d < nd; ++d) s += g[rows[d]] * R[rows[d] * ni + k];
            gx[a * ni + k] = s;
        }
}

/* the last check's pivots (a check that kept the set) */
static void set_check(ds_content *c, double best, double cur)
{
    c->chk_best = best, c->chk_cur = cur;
    c->chk_piv = hymo_partition_rcond(&c->pt);
    c->chk_valid = c->chk_piv > 0.0 && isfinite(c->chk_piv);
}

/* Phi_d by KLU: 1 if the estimate of the current set's rank pivot
 * (SPARSE_WATCH) leaves both tests of a check passed */
static int sparse_set_steady(const ds_content *c, const hymo_mb *mb)
{
    if (!c->pt.sp || !c->chk_valid) return 0;
    const double piv = hymo_partition_rcond(&c->pt);
    if (!(piv > 0.0)) return 0;
    const double est = c->chk_cur * (piv / c->chk_piv);
    return est >= SPARSE_WATCH * mb->reselect_ratio * c->chk_best &&
           est >= SPARSE_SINGULAR_WATCH * SINGULAR_FRACTION * c->best0;
}

static hymo_status ds_finish_step(hymo_formulation *f, hymo_mb *mb, double t, long step, int *unknowns_changed,
                                  hymo_error *err)
{
    ds_content *c = f->content;
    *unknowns_changed = 0;
    if (mb->m == 0) return HYMO_OK;
    /* quality of the current partition vs the best available one, checked
     * every RESELECT_EVERY steps (pivots change slowly at these step sizes)
     * and at once where the current set's LU pivot collapses; rank pivots
     * (the redundant rows give none) */
    const double lu_pivot = lu_min_pivot(&c->pt);
    c->near_singular = lu_pivot < SINGULAR_FRACTION * c->lu0;
    { /* the step's velocity term into the history */
        double *oldest = c->hist[0];
        c->hist[0] = c->hist[1], c->th[0] = c->th[1];
        c->hist[1] = oldest, c->th[1] = t;
        memcpy(c->hist[1], c->cterm, (size_t)c->pt.m * sizeof(double));
        if (c->n_hist < 2) c->n_hist++;
    }
    if (mb->off_grid || (step % RESELECT_EVERY != 0 && !(lu_pivot < RESELECT_WATCH * mb->reselect_ratio * c->lu0)))
        return HYMO_OK;
    if (sparse_set_steady(c, mb)) return HYMO_OK;
    if (c->pt.sp && c->pt.drop) /* the entries the position solve leaves out, at the same positions */
        hymo_constraints_eval(mb->con, &mb->kin, c->phi_full, mb->phi_zv, NULL);
    double best, cur;
    rank_pivots(c, mb, &best, &cur);
    if (best < SINGULAR_FRACTION * c->best0) { /* no set avoids it: a singular position */
        const double ratio = best / c->best0;
        if (c->n_singular++ == 0) c->t_singular = t, c->singular_min = INFINITY;
        if (ratio < c->singular_min) c->singular_min = ratio, c->t_singular_min = t;
    }
    if (cur >= mb->reselect_ratio * best) {
        set_check(c, best, cur);
        return HYMO_OK;
    }
    hymo_status st = select_partition(c, mb, t, err); /* logged with the time at which the new set starts */
    if (st != HYMO_OK) return st;
    c->chk_valid = 0; /* the new set's pivots: at the next check */
    c->n_hist = 0; /* other dependent coordinates */
    c->reselections++;
    *unknowns_changed = 1;
    return HYMO_OK;
}

static int ds_unknown_joint(const hymo_formulation *f, int k) { return ((const ds_content *)f->content)->pt.indep[k]; }

static int ds_independent(const hymo_formulation *f, const int **indices)
{
    const ds_content *c = f->content;
    *indices = c->pt.indep;
    return c->pt.ni;
}

static const char *ds_log(const hymo_formulation *f) { return ((const ds_content *)f->content)->log; }
/* "" or: how many checks found every independent set near singular, the
 * first, and the smallest pivot ratio (formatted when asked: summaries) */
static const char *ds_singular(const hymo_formulation *f)
{
    ds_content *c = f->content;
    c->singular[0] = '\0';
    if (c->n_singular > 0)
        snprintf(c->singular, sizeof c->singular,
                 "double-step: at %ld checks from t = %.6g s every independent set's pivot below %g of its start "
                 "value (down to %.2g at t = %.6g s): not avoidable by re-selection",
                 c->n_singular, c->t_singular, SINGULAR_FRACTION, c->singular_min, c->t_singular_min);
    return c->singular;
}
static int ds_reselections(const hymo_formulation *f) { return ((const ds_content *)f->content)->reselections; }
static double ds_penalty_factor(const hymo_formulation *f, const hymo_mb *mb) { return (void)f, (void)mb, 0.0; }

const hymo_formulation_ops hymo_double_step_ops = {
    .name = "double-step",
    .create = ds_create,
    .destroy = ds_destroy,
    .n_mech = ds_n_mech,
    .start = ds_start,
    .begin_step = ds_begin_step,
    .pack = ds_pack,
    .unpack = ds_unpack,
    .residual = ds_residual,
    .after_update = ds_after_update,
    .after_jacobian = ds_after_jacobian,
    .finish_step = ds_finish_step,
    .tangent = ds_tangent,
    .unknown_joint = ds_unknown_joint,
    .independent = ds_independent,
    .log = ds_log,
    .reselections = ds_reselections,
    .singular = ds_singular,
    .penalty_factor = ds_penalty_factor,
    .ode_pack = ds_ode_pack,
    .ode_unpack = ds_ode_unpack,
    .accelerations = NULL,
};
