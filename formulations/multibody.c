/* Multibody run data, the KKT matrix, coordinate partitioning and actuator
 * geometry shared by the formulations, the engine and the model compiler. */
#include "multibody.h"

#include <klu.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/linalg.h"

#define CALLOC(ptr, count)                                                                         \
    do {                                                                                           \
        (ptr) = calloc((size_t)((count) > 0 ? (count) : 1), sizeof *(ptr));                        \
        if (!(ptr)) goto nomem;                                                                    \
    } while (0)

hymo_status hymo_mb_alloc(hymo_mb *mb, const hymo_model *model, const hymo_kin_model *km,
                          const hymo_constraints *con, hymo_error *err)
{
    memset(mb, 0, sizeof *mb);
    mb->model = model;
    mb->con = con;
    const int nz = mb->nz = model->n_bodies, m = mb->m = con->m;
    mb->ncut = model->n_cuts;
    hymo_status st = hymo_kin_init(&mb->kin, km, err);
    if (st != HYMO_OK) return st;
    CALLOC(mb->z, nz);
    CALLOC(mb->zd, nz);
    CALLOC(mb->zdd, nz);
    CALLOC(mb->lambda, m);
    CALLOC(mb->zn, nz);
    CALLOC(mb->zdn, nz);
    CALLOC(mb->zddn, nz);
    CALLOC(mb->phi, m);
    CALLOC(mb->phi_zv, con->nnz);
    CALLOC(mb->gamma, m);
    CALLOC(mb->dyn_res, nz);
    return HYMO_OK;
nomem:
    hymo_mb_free(mb);
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (multibody state)");
}

void hymo_mb_free(hymo_mb *mb)
{
    hymo_kin_free(&mb->kin);
    double *arr[] = {mb->z,   mb->zd,  mb->zdd,   mb->lambda, mb->zn,    mb->zdn,
                     mb->zddn, mb->phi, mb->phi_zv, mb->gamma,  mb->dyn_res};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
    memset(mb, 0, sizeof *mb);
}

int hymo_mb_kkt_factor(hymo_mb *mb, double *K, int *piv)
{
    const int nz = mb->nz, m = mb->m, n = nz + m;
    if (hymo_kin_mass(&mb->kin)) return 1; /* current already, unless M' is formed on demand only */
    for (int i = 0; i < nz; ++i)
        for (int j = 0; j < nz; ++j) K[i * n + j] = mb->kin.M[i * nz + j];
    for (int r = 0; r < m; ++r) {
        /* a redundant row is replaced by mu_r = 0: the rest stays regular */
        const int red = mb->con->redundant[r];
        const hymo_constraints *con = mb->con;
        for (int j = 0; j < nz; ++j) K[(nz + r) * n + j] = K[j * n + nz + r] = 0.0;
        if (!red)
            for (int t = con->row_start[r]; t < con->row_start[r + 1]; ++t)
                K[(nz + r) * n + con->col[t]] = K[con->col[t] * n + nz + r] = mb->phi_zv[t];
        for (int q = 0; q < m; ++q) K[(nz + r) * n + nz + q] = red && q == r ? 1.0 : 0.0;
    }
    return hymo_lu_factor(n, K, piv);
}

struct hymo_kkt_sparse {
    int n;
    int *anc; /* nz: a path's joints */
    int *tp, *tr, *tt; /* Phi_z by columns: column j's rows tr[tp[j] .. tp[j+1]) and their places tt in phi_zv */
    hymo_sparse K;
    klu_symbolic *sym;
    klu_numeric *num;
    klu_common common;
};

hymo_kkt_sparse *hymo_mb_kkt_sparse_new(const hymo_mb *mb)
{
    const hymo_constraints *con = mb->con;
    const int nz = mb->nz, m = mb->m, n = nz + m;
    hymo_kkt_sparse *ks = calloc(1, sizeof *ks);
    if (!ks) return NULL;
    ks->n = n;
    ks->tp = calloc((size_t)nz + 2, sizeof(int));
    ks->anc = calloc((size_t)nz + 1, sizeof(int));
    ks->tr = calloc((size_t)con->nnz + 1, sizeof(int));
    ks->tt = calloc((size_t)con->nnz + 1, sizeof(int));
    if (!ks->tp || !ks->anc || !ks->tr || !ks->tt || hymo_sparse_alloc(&ks->K, n, n, 2 * con->nnz + 2 * nz + m)) {
        hymo_mb_kkt_sparse_free(ks);
        return NULL;
    }
    for (int t = 0; t < con->nnz; ++t) ks->tp[con->col[t] + 1]++;
    for (int j = 0; j < nz; ++j) ks->tp[j + 1] += ks->tp[j];
    /* shifted by one column: tp[j + 1] the next free place of column j, then its end */
    for (int j = nz; j > 0; --j) ks->tp[j] = ks->tp[j - 1];
    ks->tp[0] = 0;
    for (int r = 0; r < m; ++r)
        for (int t = con->row_start[r]; t < con->row_start[r + 1]; ++t) {
            const int q = ks->tp[con->col[t] + 1]++;
            ks->tr[q] = r, ks->tt[q] = t;
        }
    klu_defaults(&ks->common);
    return ks;
}

void hymo_mb_kkt_sparse_free(hymo_kkt_sparse *ks)
{
    if (!ks) return;
    if (ks->num) klu_free_numeric(&ks->num, &ks->common);
    if (ks->sym) klu_free_symbolic(&ks->sym, &ks->common);
    hymo_sparse_free(&ks->K);
    free(ks->tp), free(ks->anc), free(ks->tr), free(ks->tt);
    free(ks);
}

int hymo_mb_kkt_sparse_factor(hymo_mb *mb, hymo_kkt_sparse *ks)
{
    const int nz = mb->nz, m = mb->m;
    const hymo_constraints *con = mb->con;
    hymo_kin *kin = &mb->kin;
    hymo_kin_composite(kin); /* M' by its entries on the tree's paths, not formed */
    hymo_sparse *K = &ks->K;
    int bad = 0, *anc = ks->anc;
    hymo_sparse_begin(K);
    for (int j = 0; j < nz; ++j) { /* [M'; Phi_z] column j; a redundant row's entries left out */
        int na = 0; /* M'_ij: i on the path root..j (ascending), then the bodies below j */
        for (int i = kin->bd[j].parent; i != HYMO_GROUND; i = kin->bd[i].parent) anc[na++] = i;
        while (na > 0) {
            const int i = anc[--na];
            bad |= hymo_sparse_push(K, i, hymo_kin_mass_entry(kin, i, j));
        }
        bad |= hymo_sparse_push(K, j, hymo_kin_mass_entry(kin, j, j));
        for (int i = j + 1; i < nz; ++i)
            if (hymo_kin_on_path(kin, i, j)) bad |= hymo_sparse_push(K, i, hymo_kin_mass_entry(kin, j, i));
        for (int q = ks->tp[j]; q < ks->tp[j + 1]; ++q)
            if (!con->redundant[ks->tr[q]]) bad |= hymo_sparse_push(K, nz + ks->tr[q], mb->phi_zv[ks->tt[q]]);
        hymo_sparse_end_column(K);
    }
    for (int r = 0; r < m; ++r) { /* [Phi_z^T; 0], or the unit column of mu_r = 0 for a redundant row */
        if (!con->redundant[r])
            for (int t = con->row_start[r]; t < con->row_start[r + 1]; ++t)
                bad |= hymo_sparse_push(K, con->col[t], mb->phi_zv[t]);
        else
            bad |= hymo_sparse_push(K, nz + r, 1.0);
        hymo_sparse_end_column(K);
    }
    if (bad) return 1;
    if (ks->num) klu_free_numeric(&ks->num, &ks->common);
    if (ks->sym) klu_free_symbolic(&ks->sym, &ks->common);
    ks->sym = klu_analyze(ks->n, K->col_start, K->row, &ks->common);
    if (!ks->sym) return 1;
    ks->num = klu_factor(K->col_start, K->row, K->value, ks->sym, &ks->common);
    return !ks->num || ks->common.status == KLU_SINGULAR;
}

void hymo_mb_kkt_sparse_solve(hymo_kkt_sparse *ks, double *rhs)
{
    klu_solve(ks->sym, ks->num, ks->n, 1, rhs, &ks->common);
}

/* ---------------- coordinate partitioning ---------------- */

/* Phi_d of many loops (a ladder's 2N rows) is sparse: its dense LU at every
 * inner iteration of double-step was O(m^3) (docs/performance.md).  From
 * this many rows on, KLU factorises it on a pattern fixed for each
 * partition: Phi_z's entries at the kept rows and the dependent columns,
 * less those zero at every consistent position where the partition is
 * given them (pt->drop); analysed once per partition, klu_refactor at each
 * factorisation.  The independent columns (for R) are taken from lists
 * made with the pattern.  The shipped models (a few loops) keep the dense
 * LU and their numbers. */
#define HYMO_PHID_SPARSE_MIN 32
#define HYMO_PIVOT_THRESHOLD 0.5

struct hymo_phid_sparse {
    int *Ap, *Ai; /* m + 1 and nnz: Phi_d's pattern by columns (rows ascending) */
    int *tx;      /* nnz: each entry's index in Phi_z's values */
    double *Ax;   /* nnz */
    /* Phi_i: independent coordinate k's entries are ic_row (kept-row index)
     * and ic_t (index in Phi_z's values) [ic_start[k] .. ic_start[k + 1]) */
    int *ic_start, *ic_row, *ic_t;
    int valid; /* the pattern and sym are the current partition's */
    klu_symbolic *sym;
    klu_numeric *num;
    klu_common common;
};

static void phid_release(struct hymo_phid_sparse *s)
{
    if (s->num) klu_free_numeric(&s->num, &s->common);
    if (s->sym) klu_free_symbolic(&s->sym, &s->common);
}


hymo_status hymo_partition_alloc(hymo_partition *pt, int nz, int m_all, int rank, int nnz, hymo_error *err)
{
    memset(pt, 0, sizeof *pt);
    pt->nz = nz;
    pt->m = rank;
    pt->m_all = m_all;
    pt->ni = nz - rank;
    CALLOC(pt->indep, nz);
    CALLOC(pt->dep, m_all);
    if (rank < HYMO_PHID_SPARSE_MIN) CALLOC(pt->phid_lu, rank * rank); /* else KLU's */
    CALLOC(pt->phid_piv, rank);
    CALLOC(pt->R, rank > 0 ? nz * (nz - rank) : 0); /* rank 0: R = I, not stored */
    CALLOC(pt->work, 2 * nz + 2 * m_all);
    CALLOC(pt->pos, nz);
    CALLOC(pt->rowpos, m_all);
    if (hymo_rank_work_alloc(&pt->rw, m_all, nz, nnz)) goto nomem;
    /* many rows: threshold pivoting, whose fill-in stays near Phi_z's
     * non-zeros (full pivoting's grew as m^2 on a ladder); the shipped
     * models (few loops) keep the full pivoting's selections.  Measured on
     * ladders (bench_scale, double-step, KLU, heap at N = 64 / 256): full
     * pivoting 494 / 3361 KB, threshold 0.9 431 / 2383 KB, 0.5 and 0.1
     * 384 / 1472 KB (N^0.97): 0.5, the stricter of the two */
    if (m_all >= HYMO_PHID_SPARSE_MIN) pt->rw.threshold = HYMO_PIVOT_THRESHOLD;
    CALLOC(pt->mask, nz);
    CALLOC(pt->mask2, nz);
    CALLOC(pt->rows, m_all);
    CALLOC(pt->row_mask, m_all);
    for (int r = 0; r < rank; ++r) pt->rows[r] = r;
    if (rank == 0)
        for (int j = 0; j < nz; ++j) pt->indep[j] = j; /* all independent from the start (hymo_partition_select) */
    if (rank >= HYMO_PHID_SPARSE_MIN) {
        CALLOC(pt->sp, 1);
        CALLOC(pt->sp->Ap, rank + 1);
        CALLOC(pt->sp->Ai, nnz);
        CALLOC(pt->sp->tx, nnz);
        CALLOC(pt->sp->Ax, nnz);
        CALLOC(pt->sp->ic_start, nz - rank + 1);
        CALLOC(pt->sp->ic_row, nnz);
        CALLOC(pt->sp->ic_t, nnz);
        klu_defaults(&pt->sp->common);
    }
    return HYMO_OK;
nomem:
    hymo_partition_free(pt);
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (coordinate partition)");
}

void hymo_partition_free(hymo_partition *pt)
{
    free(pt->indep);
    free(pt->dep);
    free(pt->phid_lu);
    free(pt->phid_piv);
    if (pt->sp) {
        phid_release(pt->sp);
        free(pt->sp->Ap), free(pt->sp->Ai), free(pt->sp->tx), free(pt->sp->Ax);
        free(pt->sp->ic_start), free(pt->sp->ic_row), free(pt->sp->ic_t);
        free(pt->sp);
    }
    free(pt->R);
    free(pt->work);
    free(pt->pos);
    free(pt->rowpos);
    hymo_rank_work_free(&pt->rw);
    free(pt->mask);
    free(pt->mask2);
    free(pt->rows);
    free(pt->row_mask);
    free(pt->allowed);
    memset(pt, 0, sizeof *pt);
}

/* pos[j]: c for the dependent coordinate dep[c], -1 - k for indep[k];
 * rowpos[r]: k for the kept row rows[k], -1 for a row left out */
static void partition_maps(hymo_partition *pt)
{
    for (int k = 0; k < pt->ni; ++k) pt->pos[pt->indep[k]] = -1 - k;
    for (int c = 0; c < pt->m; ++c) pt->pos[pt->dep[c]] = c;
    for (int r = 0; r < pt->m_all; ++r) pt->rowpos[r] = -1;
    for (int k = 0; k < pt->m; ++k) pt->rowpos[pt->rows[k]] = k;
}

/* The partition's pattern of Phi_d (Phi_z[rows, dep] by compressed
 * columns, rows ascending), its entries' places in Phi_z's values, the
 * lists of Phi_i's entries, and KLU's analysis of the pattern; 1 out of
 * memory */
static int phid_structure(hymo_partition *pt, const hymo_csr *a)
{
    struct hymo_phid_sparse *s = pt->sp;
    const int m = pt->m, ni = pt->ni;
    int *cs = s->Ap, *is = s->ic_start;
    for (int c = 0; c <= m; ++c) cs[c] = 0;
    for (int k = 0; k <= ni; ++k) is[k] = 0;
    for (int q = 0; q < m; ++q) {
        const int r = pt->rows[q];
        for (int t = a->row_start[r]; t < a->row_start[r + 1]; ++t) {
            if (pt->drop && pt->drop[t]) continue;
            const int c = pt->pos[a->col[t]];
            if (c >= 0) cs[c + 1]++;
            else is[-c]++; /* -1 - k: independent k, counted at k + 1 */
        }
    }
    for (int c = 0; c < m; ++c) cs[c + 1] += cs[c];
    for (int k = 0; k < ni; ++k) is[k + 1] += is[k];
    int *fill = pt->rw.rarg; /* m_all >= m ints, free outside hymo_rank_pivots_csr */
    for (int c = 0; c < m; ++c) fill[c] = cs[c];
    int *ifill = pt->rw.tj; /* nz >= ni ints, likewise */
    for (int k = 0; k < ni; ++k) ifill[k] = is[k];
    for (int q = 0; q < m; ++q) { /* kept rows ascending: each column's rows ascending */
        const int r = pt->rows[q];
        for (int t = a->row_start[r]; t < a->row_start[r + 1]; ++t) {
            if (pt->drop && pt->drop[t]) continue;
            const int c = pt->pos[a->col[t]];
            if (c >= 0) {
                s->Ai[fill[c]] = q, s->tx[fill[c]++] = t;
            } else {
                const int e = ifill[-1 - c]++;
                s->ic_row[e] = q, s->ic_t[e] = t;
            }
        }
    }
    phid_release(s);
    s->sym = klu_analyze(m, s->Ap, s->Ai, &s->common);
    s->valid = s->sym != NULL;
    return !s->valid;
}

static int phid_klu_factor(hymo_partition *pt, const hymo_csr *a)
{
    struct hymo_phid_sparse *s = pt->sp;
    if (!s->valid && phid_structure(pt, a)) return 1;
    const int nnz = s->Ap[pt->m];
    for (int p = 0; p < nnz; ++p) s->Ax[p] = a->value[s->tx[p]];
    if (s->num && klu_refactor(s->Ap, s->Ai, s->Ax, s->sym, s->num, &s->common) &&
        s->common.status != KLU_SINGULAR)
        return 0;
    if (s->num) klu_free_numeric(&s->num, &s->common);
    s->num = klu_factor(s->Ap, s->Ai, s->Ax, s->sym, &s->common);
    return !s->num || s->common.status == KLU_SINGULAR;
}

double hymo_partition_rcond(const hymo_partition *pt)
{
    if (!pt->sp || !pt->sp->num) return INFINITY;
    struct hymo_phid_sparse *s = pt->sp;
    if (!klu_condest(s->Ap, s->Ax, s->sym, s->num, &s->common) || !(s->common.condest > 0.0)) return 0.0;
    return 1.0 / s->common.condest;
}

void hymo_partition_solve(const hymo_partition *pt, double *x)
{
    if (pt->sp) klu_solve(pt->sp->sym, pt->sp->num, pt->m, 1, x, &pt->sp->common);
    else hymo_lu_solve(pt->m, pt->phid_lu, pt->phid_piv, x);
}

/* w = Phi's column of the k-th independent coordinate, over Phi_d's rows */
static inline void indep_column(const hymo_partition *pt, const hymo_csr *a, const int m, int k, double *w)
{
    for (int q = 0; q < m; ++q) w[q] = 0.0;
    for (int q = 0; q < m; ++q) {
        const int r = pt->rows[q];
        for (int t = a->row_start[r]; t < a->row_start[r + 1]; ++t)
            if (pt->pos[a->col[t]] == -1 - k) w[q] = a->value[t];
    }
}

/* Phi_d gathered and factorised by the dense LU, and R's dependent rows;
 * with m a constant for the small sizes (the same operations in the same
 * order) */
static inline int factor_dense(hymo_partition *pt, const hymo_csr *a, const int m)
{
    const int ni = pt->ni;
    double *R = pt->R, *w = pt->work, *lu = pt->phid_lu;
    for (int i = 0; i < m * m; ++i) lu[i] = 0.0;
    for (int k = 0; k < m; ++k) {
        const int r = pt->rows[k];
        for (int t = a->row_start[r]; t < a->row_start[r + 1]; ++t)
            if (pt->pos[a->col[t]] >= 0) lu[k * m + pt->pos[a->col[t]]] = a->value[t];
    }
    if (hymo_lu_factor(m, lu, pt->phid_piv)) return 1;
    for (int k = 0; k < ni; ++k) {
        indep_column(pt, a, m, k, w);
        hymo_lu_solve(m, lu, pt->phid_piv, w);
        for (int c = 0; c < m; ++c) R[pt->dep[c] * ni + k] = -w[c];
    }
    return 0;
}

/* LU of Phi_d and R = dz/dz_i (nz x ni, row-major): the independent rows
 * are the identity, the dependent ones -Phi_d^{-1} Phi_i.  R maps
 * independent increments, velocities and accelerations to all coordinates
 * and projects the dynamics (R^T).  Returns 0, 1 if Phi_d is singular (KLU:
 * or out of memory); R is then left as it was. */
int hymo_partition_factor(hymo_partition *pt, const hymo_csr *a)
{
    const int m = pt->m, ni = pt->ni;
    double *R = pt->R, *w = pt->work;
    if (m == 0) return 0; /* R = I (not stored) */
    if (!pt->maps_valid) {
        partition_maps(pt), pt->maps_valid = 1, pt->r_identity = 0;
        if (pt->sp) pt->sp->valid = 0;
    }
    if (pt->sp) {
        const struct hymo_phid_sparse *s = pt->sp;
        if (phid_klu_factor(pt, a)) return 1;
        for (int k = 0; k < ni; ++k) {
            for (int q = 0; q < m; ++q) w[q] = 0.0;
            for (int e = s->ic_start[k]; e < s->ic_start[k + 1]; ++e) w[s->ic_row[e]] = a->value[s->ic_t[e]];
            hymo_partition_solve(pt, w);
            for (int c = 0; c < m; ++c) R[pt->dep[c] * ni + k] = -w[c];
        }
    } else {
        int singular;
        switch (m) {
        case 1: singular = factor_dense(pt, a, 1); break;
        case 2: singular = factor_dense(pt, a, 2); break;
        case 3: singular = factor_dense(pt, a, 3); break;
        case 4: singular = factor_dense(pt, a, 4); break;
        default: singular = factor_dense(pt, a, m);
        }
        if (singular) return 1;
    }
    if (!pt->r_identity) { /* R's independent rows: the same for every factorisation of a partition */
        for (int k = 0; k < ni; ++k)
            for (int l = 0; l < ni; ++l) R[pt->indep[l] * ni + k] = l == k;
        pt->r_identity = 1;
    }
    return 0;
}

void hymo_partition_set(hymo_partition *pt, const unsigned char *independent)
{
    int ni = 0, nd = 0;
    pt->maps_valid = 0;
    for (int j = 0; j < pt->nz; ++j) {
        if (independent[j])
            pt->indep[ni++] = j;
        else
            pt->dep[nd++] = j;
    }
}

double hymo_partition_select(hymo_partition *pt, const hymo_csr *a)
{
    const int m = pt->m, nz = pt->nz;
    if (m == 0) {
        for (int j = 0; j < nz; ++j) pt->indep[j] = j; /* R = I */
        return INFINITY;
    }
    double pmin;
    if (hymo_rank_pivots_csr(a, &pt->rw, pt->allowed, pt->mask, pt->row_mask, m, 0.0, &pmin) < m) return 0.0;
    if (!(pmin > 0.0)) return pmin;
    int ni = 0, nd = 0;
    pt->maps_valid = 0;
    for (int j = 0; j < nz; ++j) {
        if (pt->mask[j])
            pt->dep[nd++] = j;
        else
            pt->indep[ni++] = j;
    }
    for (int r = 0, k = 0; r < pt->m_all; ++r)
        if (pt->row_mask[r]) pt->rows[k++] = r;
    return hymo_partition_factor(pt, a) ? 0.0 : pmin;
}

/* Inner Newton: the kinematics are re-evaluated after the last update only
 * if it exceeded KIN_REFRESH, so positions used afterwards are within
 * 1e-11 of the converged ones (with quadratic convergence the error left
 * after the update is ~tol^2). */
#define KIN_REFRESH 1e-11

int hymo_partition_solve_positions(hymo_partition *pt, hymo_kin *kin, const hymo_model *model,
                                   const hymo_constraints *con, double *z, double *phi, double *phi_z,
                                   int max_iter, double tol, double phi_floor)
{
    const int m = pt->m;
    double *delta = pt->work;
    const hymo_csr a = hymo_constraints_csr(con, phi_z);
    const int live = pt->sp && pt->drop; /* the entries Phi_d and Phi_i leave out (con->vanish): not evaluated */
    for (int it = 0; it < max_iter; ++it) {
        hymo_kin_positions(kin, model, z);
        if (live) hymo_constraints_eval_live(con, kin, phi, phi_z);
        else hymo_constraints_eval(con, kin, phi, phi_z, NULL);
        if (m == 0) return 0;
        if (hymo_partition_factor(pt, &a)) return 1;
        if (phi_floor > 0.0) {
            double pm = 0.0;
            for (int r = 0; r < m; ++r) pm = fmax(pm, fabs(phi[pt->rows[r]]));
            if (pm <= phi_floor) return 0;
        }
        for (int r = 0; r < m; ++r) delta[r] = phi[pt->rows[r]];
        hymo_partition_solve(pt, delta);
        double dmax = hymo_norm_inf(m, delta);
        if (!isfinite(dmax)) return 1;
        double limit = 0.5; /* damp large assembly steps (rad or m) */
        double scale = dmax > limit ? limit / dmax : 1.0;
        for (int c = 0; c < m; ++c) z[pt->dep[c]] -= scale * delta[c];
        if (dmax <= tol) {
            if (dmax > KIN_REFRESH) { /* keep kinematics consistent with the last update */
                hymo_kin_positions(kin, model, z);
                if (live) hymo_constraints_eval_live(con, kin, phi, phi_z);
                else hymo_constraints_eval(con, kin, phi, phi_z, NULL);
                if (hymo_partition_factor(pt, &a)) return 1;
            }
            return 0;
        }
    }
    return 1;
}

void hymo_partition_names(const hymo_partition *pt, const hymo_model *model, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int k = 0; k < pt->ni; ++k) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", k ? "," : "", model->bodies[pt->indep[k]].joint_name);
    }
}

/* ---------------- actuator geometry ---------------- */

hymo_status hymo_actuators_alloc(hymo_actuators *act, int na, hymo_error *err)
{
    memset(act, 0, sizeof *act);
    act->na = na;
    CALLOC(act->s, na);
    CALLOC(act->sd, na);
    CALLOC(act->dir, 3 * na);
    CALLOC(act->ends, 6 * na);
    return HYMO_OK;
nomem:
    hymo_actuators_free(act);
    return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (actuators)");
}

void hymo_actuators_free(hymo_actuators *act)
{
    free(act->s);
    free(act->sd);
    free(act->dir);
    free(act->ends);
    memset(act, 0, sizeof *act);
}

/* Actuator a >= n_cylinders is the hydraulic motor
 * a - n_cylinders, whose "length" is its joint coordinate (s = z_j,
 * sd = zd_j, ds/dz = e_j) and whose force is the joint torque (force on a
 * prismatic joint), applied to the joint's body and, reversed, its parent.
 * After the motors come the driven joints (s = z_j as well); their force is
 * the recorded reaction, never applied (src/engine/driver.c). */
static int motor_joint(const hymo_model *model, int a)
{
    const int k = a - model->n_cylinders;
    return k < model->n_motors ? model->motors[k].joint : model->drivers[k - model->n_motors].joint;
}

static void motor_apply(const hymo_model *model, hymo_kin *kin, int j, double T)
{
    const double *u = &kin->u[3 * j];
    const int parent = model->bodies[j].parent;
    if (model->bodies[j].joint_type == HYMO_JOINT_REVOLUTE) { /* a pure moment T u */
        double *Qj = &kin->Qbar[6 * j];
        for (int k = 0; k < 3; ++k) Qj[3 + k] += T * u[k];
        if (parent != HYMO_GROUND) {
            double *Qp = &kin->Qbar[6 * parent];
            for (int k = 0; k < 3; ++k) Qp[3 + k] -= T * u[k];
        }
    } else { /* a force T u at the joint point */
        const double f[3] = {T * u[0], T * u[1], T * u[2]}, mf[3] = {-f[0], -f[1], -f[2]};
        hymo_kin_add_point_force(kin, j, &kin->o[3 * j], f);
        hymo_kin_add_point_force(kin, parent, &kin->o[3 * j], mf);
    }
}

void hymo_actuators_eval(hymo_actuators *act, const hymo_model *model, const hymo_kin *kin)
{
    for (int a = model->n_cylinders; a < act->na; ++a) {
        const int j = motor_joint(model, a);
        act->s[a] = kin->zlast[j];
        act->sd[a] = kin->zdlast[j];
    }
    for (int a = 0; a < act->na && a < model->n_cylinders; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const hymo_point *pb = &model->points[cy->point_base], *pr = &model->points[cy->point_rod];
        double *rb = &act->ends[6 * a], *rr = rb + 3, vb[3], vr[3], *e = &act->dir[3 * a];
        hymo_kin_body_point(kin, pb->body, pb->r, rb);
        hymo_kin_body_point(kin, pr->body, pr->r, rr);
        hymo_kin_point_velocity(kin, pb->body, rb, vb);
        hymo_kin_point_velocity(kin, pr->body, rr, vr);
        for (int k = 0; k < 3; ++k) e[k] = rr[k] - rb[k];
        double s = sqrt(hymo_dot(e, e));
        for (int k = 0; k < 3; ++k) e[k] /= s;
        act->s[a] = s;
        act->sd[a] = (vr[0] - vb[0]) * e[0] + (vr[1] - vb[1]) * e[1] + (vr[2] - vb[2]) * e[2];
    }
}

void hymo_actuators_apply(const hymo_actuators *act, const hymo_model *model, hymo_kin *kin, const double *force)
{
    for (int a = model->n_cylinders; a < act->na && a < model->n_cylinders + model->n_motors; ++a)
        motor_apply(model, kin, motor_joint(model, a), force[a]);
    for (int a = 0; a < act->na && a < model->n_cylinders; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const hymo_point *pb = &model->points[cy->point_base], *pr = &model->points[cy->point_rod];
        const double *rb = &act->ends[6 * a], *rr = rb + 3;
        double f[3], mf[3];
        for (int k = 0; k < 3; ++k) {
            f[k] = force[a] * act->dir[3 * a + k];
            mf[k] = -f[k];
        }
        hymo_kin_add_point_force(kin, pr->body, rr, f);
        hymo_kin_add_point_force(kin, pb->body, rb, mf);
    }
}

#define EXACT_ZERO_MIN_NZ 16

/* d s_a / d z_j of cylinder a (rb, rr its ends, e its direction) */
static double cylinder_gradient(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin, int a,
                                int j)
{
    const hymo_cylinder *cy = &model->cylinders[a];
    const hymo_point *pb = &model->points[cy->point_base], *pr = &model->points[cy->point_rod];
    const double *rb = &act->ends[6 * a], *rr = rb + 3, *e = &act->dir[3 * a];
    /* a joint on the paths to both ends moves them rigidly together: s
     * does not change.  From EXACT_ZERO_MIN_NZ joints on that entry is set
     * to the exact zero, which keeps the Newton matrix's coupling sparse
     * (computed, it is a round-off residue that fills the actuator
     * stiffness and KLU's pattern: a chain of N links and cylinders cost
     * O(N^3) per matrix); below it the residue is kept, so that the small
     * (shipped) models keep their numbers bit for bit (crane2's fast mode
     * changes by 2 matrix builds in 18541 with the exact zero). */
    const int on_b = hymo_kin_on_path(kin, pb->body, j), on_r = hymo_kin_on_path(kin, pr->body, j);
    if (on_b == on_r && (kin->nb >= EXACT_ZERO_MIN_NZ || !on_b)) return 0.0;
    double jb[3], jr[3];
    hymo_kin_point_jacobian(kin, pb->body, j, rb, jb);
    hymo_kin_point_jacobian(kin, pr->body, j, rr, jr);
    return (jr[0] - jb[0]) * e[0] + (jr[1] - jb[1]) * e[1] + (jr[2] - jb[2]) * e[2];
}

void hymo_actuators_gradients(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin,
                              double *gz)
{
    const int nz = kin->nb;
    for (int a = model->n_cylinders; a < act->na; ++a) {
        for (int j = 0; j < nz; ++j) gz[a * nz + j] = 0.0;
        gz[a * nz + motor_joint(model, a)] = 1.0;
    }
    for (int a = 0; a < act->na && a < model->n_cylinders; ++a)
        for (int j = 0; j < nz; ++j) gz[a * nz + j] = cylinder_gradient(act, model, kin, a, j);
}

int hymo_actuator_joint(const hymo_model *model, const hymo_kin *kin, int a)
{
    if (a >= model->n_cylinders) return motor_joint(model, a);
    const hymo_cylinder *cy = &model->cylinders[a];
    const int b[2] = {model->points[cy->point_base].body, model->points[cy->point_rod].body};
    int joint = -1, count = 0;
    for (int end = 0; end < 2; ++end) /* the joints below the common ancestor, on either side */
        for (int x = b[end]; x != HYMO_GROUND && !hymo_kin_on_path(kin, b[1 - end], x); x = kin->bd[x].parent)
            joint = x, ++count;
    return count <= 1 ? joint : -2;
}

int hymo_actuator_joints(const hymo_model *model, const hymo_kin *kin, int a, int *out)
{
    if (a >= model->n_cylinders) return out[0] = motor_joint(model, a), 1;
    const hymo_cylinder *cy = &model->cylinders[a];
    return hymo_kin_path_union(kin, model->points[cy->point_base].body, model->points[cy->point_rod].body, out);
}

int hymo_actuator_gradient_entries(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin, int a,
                                   int *out, double *g)
{
    if (a >= model->n_cylinders) return out[0] = motor_joint(model, a), g[0] = 1.0, 1;
    const hymo_cylinder *cy = &model->cylinders[a];
    const int b[2] = {model->points[cy->point_base].body, model->points[cy->point_rod].body};
    int n = 0;
    if (kin->nb < EXACT_ZERO_MIN_NZ) /* the residue of the joints on both paths is kept (cylinder_gradient) */
        n = hymo_kin_path_union(kin, b[0], b[1], out);
    else
        for (int end = 0; end < 2; ++end)
            for (int x = b[end]; x != HYMO_GROUND && !hymo_kin_on_path(kin, b[1 - end], x); x = kin->bd[x].parent)
                out[n++] = x;
    for (int k = 0; k < n; ++k) g[k] = cylinder_gradient(act, model, kin, a, out[k]);
    return n;
}

void hymo_actuators_gradients_joint(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin,
                                    const int *joint, double *g)
{
    for (int a = 0; a < act->na; ++a)
        g[a] = joint[a] < 0 ? 0.0 : a >= model->n_cylinders ? 1.0 : cylinder_gradient(act, model, kin, a, joint[a]);
}

void hymo_actuators_accel(const hymo_actuators *act, const hymo_model *model, const hymo_kin *kin,
                          const double *zdd, double *sdd)
{
    const int nz = kin->nb;
    for (int a = model->n_cylinders; a < act->na; ++a) sdd[a] = zdd[motor_joint(model, a)];
    for (int a = 0; a < act->na && a < model->n_cylinders; ++a) {
        const hymo_cylinder *cy = &model->cylinders[a];
        const int body[2] = {model->points[cy->point_base].body, model->points[cy->point_rod].body};
        const double *e = &act->dir[3 * a];
        double acc[2][3], vel[2][3];
        for (int end = 0; end < 2; ++end) {
            const double *r = &act->ends[6 * a + 3 * end];
            hymo_kin_point_accel0(kin, body[end], r, acc[end]);
            hymo_kin_point_velocity(kin, body[end], r, vel[end]);
            for (int j = 0; j < nz; ++j) {
                double col[3];
                hymo_kin_point_jacobian(kin, body[end], j, r, col);
                for (int k = 0; k < 3; ++k) acc[end][k] += col[k] * zdd[j];
            }
        }
        /* s = |d|, sd = e.d', sdd = e.d'' + (|d'|^2 - sd^2)/s */
        double dv[3], da[3];
        for (int k = 0; k < 3; ++k) {
            dv[k] = vel[1][k] - vel[0][k];
            da[k] = acc[1][k] - acc[0][k];
        }
        sdd[a] = hymo_dot(e, da) + (hymo_dot(dv, dv) - act->sd[a] * act->sd[a]) / act->s[a];
    }
}
