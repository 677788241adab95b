/* Model compilation: the constants of a model and its initial state
 * (assembly and static equilibrium, SPEC §3), computed once per model. */
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "force_elements.h"
#include "hymo/linalg.h"
#include "linsol.h"
#include "multibody.h"
#include "nonlinear_kinsol.h"

static atomic_long compilations;

long hymo_model_compilations(void) { return atomic_load(&compilations); }

static const char *src_name(const hymo_model *model)
{
    return model->source_path ? model->source_path : model->name;
}

hymo_status hymo_compile(hymo_model *model, hymo_error *err)
{
    hymo_compiled *cm = calloc(1, sizeof *cm);
    if (!cm) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (compiled model)");
    model->compiled = cm;
    pthread_mutex_init(&cm->lock, NULL);
    hymo_status st = hymo_kin_model_init(&cm->kin, model, err);
    if (st == HYMO_OK) st = hymo_constraints_init(&cm->con, model, err);
    for (int c = 0; st == HYMO_OK && c < model->n_cuts; ++c) { /* translational twist from the start */
        if (model->cuts[c].type != HYMO_CUT_TRANSLATIONAL) continue;
        hymo_kin kin;
        double *z = calloc((size_t)model->n_bodies + 1, sizeof(double));
        st = z ? hymo_kin_init(&kin, &cm->kin, err) : hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        if (st == HYMO_OK) {
            for (int j = 0; j < model->n_bodies; ++j) z[j] = model->bodies[j].z0;
            hymo_kin_positions(&kin, model, z);
            hymo_constraints_twist_from(&cm->con, model, &kin);
            hymo_kin_free(&kin);
        }
        free(z);
        break;
    }
    if (st == HYMO_OK) atomic_fetch_add(&compilations, 1);
    return st;
}

void hymo_compiled_free(hymo_compiled *cm)
{
    if (!cm) return;
    hymo_kin_model_free(&cm->kin);
    hymo_constraints_free(&cm->con);
    hymo_circuit_free(&cm->circ);
    if (cm->parts) hymo_circuit_parts_free(cm->parts, cm->n_parts);
    free(cm->z0);
    free(cm->zd0);
    free(cm->p0);
    free(cm->u0);
    pthread_mutex_destroy(&cm->lock);
    free(cm);
}

/* Workspace of the initial-state computation. */
typedef struct {
    hymo_kin kin;
    hymo_partition pt;
    hymo_actuators act;
    double *phi, *phi_z, *zd, *f_static; /* phi_z: the con->nnz values of Phi_z's pattern */
} init_ws;

/* ---- assembly: Phi(z) = 0 in the dependent coordinates (KINSOL) ---- */

/* KINSOL settings of the assembly (rad or m, like the hand-written Newton
 * it replaced, which stopped after an increment <= 1e-13): */
#define ASM_FNORM_TOL 1e-13  /* converged: max |Phi| <= 1e-13 */
#define ASM_STEP_TOL 1e-13   /* or a step <= 1e-13 (1 + |z|) ...            */
#define ASM_ACCEPT_TOL 1e-10 /* ... with max |Phi| <= 1e-10 (round-off)     */
#define ASM_MAX_STEP 1.0     /* largest Newton step (2-norm, rad or m)      */
#define ASM_MAX_ITER 100

typedef struct {
    const hymo_model *model;
    const hymo_compiled *cm;
    init_ws *w;
    double *z; /* nz: the independent entries stay as given */
} asm_data;

static void asm_set(const asm_data *a, const double *x)
{
    for (int c = 0; c < a->w->pt.m; ++c) a->z[a->w->pt.dep[c]] = x[c];
    hymo_kin_positions(&a->w->kin, a->model, a->z);
}

static int asm_residual(const double *x, double *f, void *user)
{
    const asm_data *a = user;
    asm_set(a, x);
    hymo_constraints_eval(&a->cm->con, &a->w->kin, f, NULL, NULL);
    for (int r = 0; r < a->w->pt.m; ++r)
        if (!isfinite(f[r])) return 1; /* recoverable: KINSOL shortens the step */
    return 0;
}

/* Phi_d: the analytic Phi_z columns of the dependent coordinates. */
static int asm_jacobian(const double *x, double *J, void *user)
{
    const asm_data *a = user;
    const int m = a->w->pt.m;
    asm_set(a, x);
    hymo_constraints_eval(&a->cm->con, &a->w->kin, a->w->phi, a->w->phi_z, NULL);
    const hymo_csr pz = hymo_constraints_csr(&a->cm->con, a->w->phi_z);
    for (int c = 0; c < m; ++c)
        for (int r = 0; r < m; ++r) J[c * m + r] = hymo_csr_get(&pz, r, a->w->pt.dep[c]);
    return 0;
}

/* Over-constrained or redundant loops (more constraint
 * equations than the coordinates they leave free, e.g. a Bennett linkage's
 * 5 equations per spatial revolute cut for 3 joint coordinates): Phi = 0 by
 * damped Gauss-Newton (Levenberg-Marquardt) in the free coordinates (those
 * not named in `independent`, all without it), (J^T J + mu I) d = -J^T Phi
 * with mu = LM_MU max diag(J^T J), the step limited to ASM_MAX_STEP and
 * halved until max |Phi| falls.  Without a hint J^T J is singular (the
 * mobility), and the small mu makes d the near minimum-norm correction. */
#define LM_MU 1e-8
#define LM_HALVINGS 30

/* An `independent` list of another length than the
 * mobility, "file:line: independent: ..." with what the count means. */
static hymo_status independent_count_error(const hymo_model *model, hymo_error *err, int nz, int m, int rank)
{
    char at[64] = "";
    if (model->independent_line > 0) snprintf(at, sizeof at, ":%d", model->independent_line);
    if (rank < 0) /* fewer names than the coordinates minus all m rows: too few whatever the rank */
        return hymo_error_set(err, HYMO_ERR_MODEL,
                              "%s%s: independent: %d joint(s) named, but the whole model has at least %d "
                              "degree(s) of freedom: its %d joint coordinates (every joint of every body, "
                              "open-chain and driven joints included) minus the %d constraint equations of the "
                              "cut joints; name one joint per degree of freedom",
                              src_name(model), at, model->n_independent_hint, nz - m, nz, m);
    char rk[64] = "";
    if (rank != m) snprintf(rk, sizeof rk, " (rank %d of %d equations)", rank, m);
    return hymo_error_set(err, HYMO_ERR_MODEL,
                          "%s%s: independent: %d joint(s) named, but the whole model has %d degree(s) of freedom: "
                          "its %d joint coordinates (every joint of every body, open-chain and driven joints "
                          "included) minus %d independent constraint equations%s of the cut joints; name "
                          "exactly %d joint(s)",
                          src_name(model), at, model->n_independent_hint, nz - rank, nz, rank, rk, nz - rank);
}

/* Rank of Phi_z (m x nz) by full pivoting, the redundant
 * rows marked in rows (m, may be NULL); -1 out of memory */
static int rank_here(const hymo_constraints *con, const double *phi_z, unsigned char *rows_out)
{
    const int m = con->m, nz = con->nz;
    hymo_rank_work rw;
    unsigned char *cols = calloc((size_t)nz + 1, 1), *rows = calloc((size_t)m + 1, 1);
    int rank = -1;
    double pmin;
    if (cols && rows && !hymo_rank_work_alloc(&rw, m, nz, con->nnz)) {
        const hymo_csr pz = hymo_constraints_csr(con, phi_z);
        rank = hymo_rank_pivots_csr(&pz, &rw, NULL, cols, rows, m, HYMO_RANK_TOL, &pmin);
        hymo_rank_work_free(&rw);
        if (rows_out)
            for (int r = 0; r < m; ++r) rows_out[r] = !rows[r];
    }
    free(cols), free(rows);
    return rank;
}

static void assemble_violation(const hymo_model *model, const hymo_compiled *cm, const double *phi, double *worst,
                               int *wc)
{
    *worst = 0.0;
    *wc = 0;
    for (int c = 0; c < model->n_cuts; ++c) {
        double s = 0.0;
        for (int r = cm->con.cut_first[c]; r < cm->con.cut_first[c + 1]; ++r) s += phi[r] * phi[r];
        if (sqrt(s) >= *worst) {
            *worst = sqrt(s);
            *wc = c;
        }
    }
}

static hymo_status assemble_least_squares(const hymo_model *model, const hymo_compiled *cm, init_ws *w, double *z,
                                          hymo_error *err)
{
    const int m = cm->con.m, nz = model->n_bodies;
    int nf = 0, it = 0;
    int *free_j = calloc((size_t)nz, sizeof(int)), *piv = calloc((size_t)nz, sizeof(int));
    double *A = calloc((size_t)nz * nz, sizeof(double)), *d = calloc((size_t)nz, sizeof(double));
    double *zt = calloc((size_t)nz, sizeof(double));
    double *P = calloc((size_t)m * nz + 1, sizeof(double)); /* Phi_z dense (transient) */
    const hymo_csr pz = hymo_constraints_csr(&cm->con, w->phi_z);
    unsigned char *held = calloc((size_t)nz, 1);
    hymo_status st = HYMO_OK;
    if (!free_j || !piv || !A || !d || !zt || !held || !P) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (assembly)");
        goto done;
    }
    for (int k = 0; k < model->n_independent_hint; ++k) held[model->independent_hint[k]] = 1;
    for (int j = 0; j < nz; ++j)
        if (!held[j]) free_j[nf++] = j;
    hymo_kin_positions(&w->kin, model, z);
    hymo_constraints_eval(&cm->con, &w->kin, w->phi, w->phi_z, NULL);
    hymo_csr_dense(&pz, P);
    double f = hymo_norm_inf(m, w->phi);
    for (it = 0; it < ASM_MAX_ITER && nf > 0 && f > ASM_FNORM_TOL; ++it) {
        double dmax_diag = 0.0;
        for (int a = 0; a < nf; ++a) {
            double g = 0.0;
            for (int r = 0; r < m; ++r) g += P[r * nz + free_j[a]] * w->phi[r];
            d[a] = -g;
            for (int b = 0; b < nf; ++b) {
                double s = 0.0;
                for (int r = 0; r < m; ++r) s += P[r * nz + free_j[a]] * P[r * nz + free_j[b]];
                A[a * nf + b] = s;
            }
            dmax_diag = fmax(dmax_diag, A[a * nf + a]);
        }
        for (int a = 0; a < nf; ++a) A[a * nf + a] += LM_MU * dmax_diag;
        if (hymo_lu_factor(nf, A, piv)) break;
        hymo_lu_solve(nf, A, piv, d);
        double dn = hymo_norm_inf(nf, d), scale = dn > ASM_MAX_STEP ? ASM_MAX_STEP / dn : 1.0;
        double fnew = f;
        for (int h = 0; h < LM_HALVINGS; ++h, scale *= 0.5) {
            memcpy(zt, z, (size_t)nz * sizeof(double));
            for (int a = 0; a < nf; ++a) zt[free_j[a]] += scale * d[a];
            hymo_kin_positions(&w->kin, model, zt);
            hymo_constraints_eval(&cm->con, &w->kin, w->phi, NULL, NULL);
            fnew = hymo_norm_inf(m, w->phi);
            if (fnew < f || (fnew <= ASM_ACCEPT_TOL && scale * dn <= ASM_STEP_TOL)) break;
        }
        if (!(fnew < f)) break; /* no decrease: at the round-off floor or stuck */
        memcpy(z, zt, (size_t)nz * sizeof(double));
        f = fnew;
        hymo_kin_positions(&w->kin, model, z);
        hymo_constraints_eval(&cm->con, &w->kin, w->phi, w->phi_z, NULL);
        hymo_csr_dense(&pz, P);
    }
    hymo_kin_positions(&w->kin, model, z);
    hymo_constraints_eval(&cm->con, &w->kin, w->phi, w->phi_z, NULL);
    if (!(hymo_norm_inf(m, w->phi) <= ASM_ACCEPT_TOL)) {
        double worst;
        int wc;
        assemble_violation(model, cm, w->phi, &worst, &wc);
        st = hymo_error_set(err, HYMO_ERR_ASSEMBLY,
                            "%s: the initial configuration cannot be assembled: cut joint %s is "
                            "violated by %.3g after %d Gauss-Newton iterations (over-constrained loop; "
                            "check the initial joint values and the independent joints)",
                            src_name(model), model->n_cuts ? model->cuts[wc].name : "?", worst, it);
    }
done:
    free(free_j), free(piv), free(A), free(d), free(zt), free(held), free(P);
    return st;
}

/* Positions: Phi = 0 solved by KINSOL (Newton with line search) for the
 * dependent coordinates, holding the hinted (or selected) independent
 * joints at their given values (SPEC §3); loops with more equations than
 * dependent coordinates by assemble_least_squares.  Leaves
 * w->pt unallocated (the caller allocates it for the rank found). */
static hymo_status assemble(const hymo_model *model, const hymo_compiled *cm, init_ws *w, double *z,
                            hymo_error *err)
{
    const int m = cm->con.m, nz = model->n_bodies;
    hymo_kin_positions(&w->kin, model, z);
    hymo_constraints_eval(&cm->con, &w->kin, w->phi, w->phi_z, NULL);
    if (m == 0) return HYMO_OK;
    hymo_status st = hymo_partition_alloc(&w->pt, nz, m, m, cm->con.nnz, err);
    if (st != HYMO_OK) return st;
    int square = m < nz;
    if (square && model->n_independent_hint > 0) {
        square = nz - model->n_independent_hint == m;
        if (square) {
            memset(w->pt.mask, 0, (size_t)nz);
            for (int k = 0; k < model->n_independent_hint; ++k) w->pt.mask[model->independent_hint[k]] = 1;
            hymo_partition_set(&w->pt, w->pt.mask);
        }
    } else if (square) {
        const hymo_csr pz = hymo_constraints_csr(&cm->con, w->phi_z);
        square = hymo_partition_select(&w->pt, &pz) > 0.0;
    }
    if (!square && model->n_independent_hint > 0 && nz - model->n_independent_hint > m) {
        hymo_partition_free(&w->pt); /* redundant rows only add degrees of freedom */
        return independent_count_error(model, err, nz, m, -1); /* rank not known yet: at most m */
    }
    if (!square) {
        hymo_partition_free(&w->pt);
        st = assemble_least_squares(model, cm, w, z, err);
        if (st == HYMO_ERR_ASSEMBLY && model->n_independent_hint > 0) {
            /* holding more joints than the mobility cannot
             * assemble; say so rather than "cannot be assembled" (the rank
             * at the configuration reached, generically the rank) */
            const int rank = rank_here(&cm->con, w->phi_z, NULL);
            if (rank > 0 && nz - model->n_independent_hint < rank)
                return independent_count_error(model, err, nz, m, rank);
        }
        return st;
    }
    double *x = calloc((size_t)m, sizeof(double));
    if (!x) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (assembly)");
    for (int c = 0; c < m; ++c) x[c] = z[w->pt.dep[c]];
    asm_data a = {.model = model, .cm = cm, .w = w, .z = z};
    const hymo_kinsol_problem pb = {.n = m,
                                    .residual = asm_residual,
                                    .jacobian = asm_jacobian,
                                    .user = &a,
                                    .f_scale = 1.0,
                                    .x_scale = 1.0,
                                    .fnorm_tol = ASM_FNORM_TOL,
                                    .step_tol = ASM_STEP_TOL,
                                    .accept_tol = ASM_ACCEPT_TOL,
                                    .max_step = ASM_MAX_STEP,
                                    .max_iter = ASM_MAX_ITER};
    hymo_kinsol_stats ks;
    hymo_error kerr;
    hymo_error_clear(&kerr);
    st = hymo_kinsol_solve(&pb, x, &ks, &kerr);
    for (int c = 0; c < m; ++c) z[w->pt.dep[c]] = x[c];
    free(x);
    if (st == HYMO_ERR_NOMEM || st == HYMO_ERR_ARGUMENT) { /* not a failure to converge */
        if (err) *err = kerr;
        return st;
    }
    hymo_kin_positions(&w->kin, model, z);
    hymo_constraints_eval(&cm->con, &w->kin, w->phi, w->phi_z, NULL);
    if (st != HYMO_OK) {
        double worst = 0.0;
        int wc = 0;
        for (int c = 0; c < model->n_cuts; ++c) {
            double s = 0.0;
            for (int r = cm->con.cut_first[c]; r < cm->con.cut_first[c + 1]; ++r) s += w->phi[r] * w->phi[r];
            if (sqrt(s) >= worst) {
                worst = sqrt(s);
                wc = c;
            }
        }
        return hymo_error_set(err, HYMO_ERR_ASSEMBLY,
                              "%s: the initial configuration cannot be assembled: cut joint %s is "
                              "violated by %.3g after %ld KINSOL iterations (%s; check the initial "
                              "joint values and the independent joints)",
                              src_name(model), model->n_cuts ? model->cuts[wc].name : "?", worst,
                              ks.iterations, hymo_kinsol_flag_text(ks.flag));
    }
    hymo_partition_free(&w->pt);
    return HYMO_OK;
}

/* The rank of Phi_z at the assembled start, by full pivoting
 * with the relative tolerance HYMO_RANK_TOL; the rows without a pivot are
 * redundant (cm->con.rank, cm->con.redundant).  No degree of freedom left,
 * or an `independent` list of another length than the mobility, is a
 * model error. */
static hymo_status constraint_rank(const hymo_model *model, hymo_compiled *cm, init_ws *w, hymo_error *err)
{
    const int m = cm->con.m, nz = model->n_bodies;
    cm->con.rank = m;
    if (m > 0) memset(cm->con.redundant, 0, (size_t)m);
    if (m == 0) return hymo_partition_alloc(&w->pt, nz, 0, 0, 0, err);
    const int rank = rank_here(&cm->con, w->phi_z, cm->con.redundant);
    if (rank < 0) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (constraint rank)");
    cm->con.rank = rank;
    if (rank >= nz)
        return hymo_error_set(err, HYMO_ERR_MODEL,
                              "%s: cut_joints: %d constraint equations of rank %d for %d joint coordinates "
                              "leave no degree of freedom",
                              src_name(model), m, rank, nz);
    if (model->n_independent_hint > 0 && nz - model->n_independent_hint != rank)
        return independent_count_error(model, err, nz, m, rank);
    return hymo_partition_alloc(&w->pt, nz, m, rank, cm->con.nnz, err);
}

/* ---- static equilibrium: R_z^T (Q' + G F) = 0 for the actuator forces ---- */

/* KINSOL settings of the force balance A F = b (A = R^T G, b = -R^T Q'),
 * relative to the generalized force max |b| + 1 (max |A^T b| + 1 for the
 * normal equations); a balance is consistent if max |A F - b| <= 1e-8 of
 * it, as with the least-squares solve this replaced. */
#define STA_FNORM_TOL 1e-13
#define STA_ACCEPT_TOL 1e-8
#define STA_MAX_ITER 10

/* The balance has ni rows (degrees of freedom) and na columns (cylinders):
 *   ni == na: A F = b;
 *   ni >  na: the normal equations A^T A F = A^T b (then checked: too few
 *             cylinders must balance exactly);
 *   ni <  na: redundant cylinders, the minimum-norm forces F = A^T y with
 *             A A^T y = b. */
typedef struct {
    int ni, na, n;
    const double *A; /* ni x na, row-major */
    const double *b; /* ni */
    double *r;       /* ni: work */
} static_data;

/* r = A F - b */
static void static_balance(const static_data *d, const double *F, double *r)
{
    for (int k = 0; k < d->ni; ++k) {
        double s = -d->b[k];
        for (int a = 0; a < d->na; ++a) s += d->A[k * d->na + a] * F[a];
        r[k] = s;
    }
}

/* F = A^T y (minimum-norm form) */
static void static_min_norm(const static_data *d, const double *y, double *F)
{
    for (int a = 0; a < d->na; ++a) {
        double s = 0.0;
        for (int k = 0; k < d->ni; ++k) s += d->A[k * d->na + a] * y[k];
        F[a] = s;
    }
}

static int static_residual(const double *x, double *f, void *user)
{
    const static_data *d = user;
    if (d->ni == d->na) {
        static_balance(d, x, f);
    } else if (d->ni > d->na) { /* A^T (A F - b) */
        static_balance(d, x, d->r);
        for (int a = 0; a < d->na; ++a) {
            double s = 0.0;
            for (int k = 0; k < d->ni; ++k) s += d->A[k * d->na + a] * d->r[k];
            f[a] = s;
        }
    } else { /* A A^T y - b */
        double *F = d->r + d->ni;
        static_min_norm(d, x, F);
        static_balance(d, F, f);
    }
    for (int i = 0; i < d->n; ++i)
        if (!isfinite(f[i])) return 1;
    return 0;
}

/* column-major n x n: A, A^T A or A A^T */
static int static_jacobian(const double *x, double *J, void *user)
{
    (void)x;
    const static_data *d = user;
    const int ni = d->ni, na = d->na, n = d->n;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0.0;
            if (ni == na)
                s = d->A[i * na + j];
            else if (ni > na)
                for (int k = 0; k < ni; ++k) s += d->A[k * na + i] * d->A[k * na + j];
            else
                for (int a = 0; a < na; ++a) s += d->A[i * na + a] * d->A[j * na + a];
            J[j * n + i] = s;
        }
    return 0;
}

/* Actuator forces holding the mechanism at rest: R_z^T (Q' + G F) = 0, with
 * the partition chosen at the assembled configuration, solved by KINSOL.
 * At the assembled (fixed) configuration the balance is linear in F:
 * friction and viscous forces vanish at rest and the end-damper force
 * depends on s only, so it enters the chamber pressures
 * (hymo_circuit_static_pressures), not F; KINSOL takes one Newton step from
 * F = 0 (a second one only as refinement at round-off level). */
/* A mechanism without closed loops with as many actuators as joints, from
 * hymo_static_sparse_min of them: the balance A F = b with A's column a the
 * actuator's gradient (the joints between its two ends only), factorised
 * once by KLU, so that its memory is O(n) where A, the gradients and
 * KINSOL's matrix would hold n^2 each (a chain of 1024 links: 8 MB each). */
int hymo_static_sparse_min = 256;

static int sparse_balance_applies(const hymo_model *model, const init_ws *w)
{
    const int na = model->n_cylinders + model->n_motors + model->n_drivers;
    return w->pt.m == 0 && w->pt.ni == na && na >= hymo_static_sparse_min;
}

static hymo_status static_forces_sparse(const hymo_model *model, init_ws *w, hymo_error *err)
{
    const int nz = model->n_bodies, n = w->pt.ni;
    int *rowof = malloc((size_t)nz * sizeof(int)), *js = malloc((size_t)nz * sizeof(int));
    int *rows = NULL, *cols = NULL;
    double *g = malloc((size_t)nz * sizeof(double)), *b = calloc((size_t)n, sizeof(double));
    double *x = calloc((size_t)n, sizeof(double)), *r = calloc((size_t)n, sizeof(double));
    hymo_sparse A;
    memset(&A, 0, sizeof A);
    hymo_linsol *ls = NULL;
    hymo_status st = HYMO_OK;
    if (!rowof || !js || !g || !b || !x || !r) goto nomem;
    for (int k = 0; k < n; ++k) rowof[w->pt.indep[k]] = k; /* no constraints: R is the identity */
    hymo_actuators_eval(&w->act, model, &w->kin);
    size_t cnt = 0;
    for (int a = 0; a < n; ++a) cnt += (size_t)hymo_actuator_gradient_entries(&w->act, model, &w->kin, a, js, g);
    rows = malloc((cnt + 1) * sizeof(int)), cols = malloc((cnt + 1) * sizeof(int));
    if (!rows || !cols || cnt > (size_t)INT_MAX) goto nomem;
    size_t e = 0;
    for (int a = 0; a < n; ++a) {
        const int c = hymo_actuator_gradient_entries(&w->act, model, &w->kin, a, js, g);
        for (int q = 0; q < c; ++q) rows[e] = rowof[js[q]], cols[e] = a, ++e;
    }
    if (hymo_sparse_pattern(&A, n, n, (int)cnt, rows, cols)) goto nomem;
    for (int a = 0; a < n; ++a) {
        const int c = hymo_actuator_gradient_entries(&w->act, model, &w->kin, a, js, g);
        for (int q = 0; q < c; ++q) *hymo_sparse_at(&A, rowof[js[q]], a) += g[q];
    }
    double bnorm = 0.0;
    for (int j = 0; j < nz; ++j) {
        b[rowof[j]] = -w->kin.Q[j];
        bnorm = fmax(bnorm, fabs(w->kin.Q[j]));
    }
    if ((st = hymo_linsol_create(HYMO_LINSOL_KLU, n, &ls, err)) != HYMO_OK) goto done;
    if (ls->ops->factor(ls, &A)) {
        st = hymo_error_set(err, HYMO_ERR_MODEL,
                            "%s: no static equilibrium: the cylinders cannot hold the initial "
                            "configuration (rank-deficient actuator Jacobian)",
                            src_name(model));
        goto done;
    }
    memcpy(x, b, (size_t)n * sizeof(double));
    ls->ops->solve(ls, x);
    for (int k = 0; k < n; ++k) r[k] = -b[k];
    for (int a = 0; a < n; ++a)
        for (int q = A.col_start[a]; q < A.col_start[a + 1]; ++q) r[A.row[q]] += A.value[q] * x[a];
    double res = 0.0;
    for (int k = 0; k < n; ++k) res = isfinite(r[k]) ? fmax(res, fabs(r[k])) : INFINITY;
    if (!(res <= STA_ACCEPT_TOL * (bnorm + 1.0))) {
        st = hymo_error_set(err, HYMO_ERR_MODEL,
                            "%s: no static equilibrium: the force balance of the cylinders at the "
                            "initial configuration was not solved (residual %.3g)",
                            src_name(model), res);
        goto done;
    }
    memcpy(w->f_static, x, (size_t)n * sizeof(double));
    goto done;
nomem:
    st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (static forces)");
done:
    hymo_linsol_free(ls);
    hymo_sparse_free(&A);
    free(rowof), free(js), free(rows), free(cols), free(g), free(b), free(x), free(r);
    return st;
}

static hymo_status static_forces(const hymo_model *model, init_ws *w, hymo_error *err)
{
    /* motors and driven joints hold their joints too */
    const int nz = model->n_bodies, na = model->n_cylinders + model->n_motors + model->n_drivers, ni = w->pt.ni;
    if (model->n_cylinders + model->n_motors == 0) return HYMO_OK; /* no pressures to find (driven joints at most) */
    hymo_kin_forces_begin(&w->kin, model);
    if (model->n_force_elements > 0) { /* the force elements at rest (t = 0, branches by the geometry) */
        hymo_fe fe;
        hymo_status fst = hymo_fe_alloc(&fe, model, err);
        if (fst == HYMO_OK) fst = hymo_fe_apply(&fe, model, &w->kin, 0.0, model->defaults.dt, err);
        hymo_fe_free(&fe);
        if (fst != HYMO_OK) return fst;
    }
    hymo_kin_mass_and_forces(&w->kin, model); /* Q' (M' is lazy: not formed) */
    if (sparse_balance_applies(model, w)) return static_forces_sparse(model, w, err);
    const int n = ni < na ? ni : na;
    double *A = calloc((size_t)(ni > 0 ? ni : 1) * na, sizeof(double));
    double *b = calloc((size_t)(ni > 0 ? ni : 1), sizeof(double));
    double *r = calloc((size_t)ni + na + 1, sizeof(double));
    double *x = calloc((size_t)na + 1, sizeof(double));
    double *gz = calloc((size_t)na * nz, sizeof(double)), *pcol = calloc((size_t)(ni > 0 ? ni : 1), sizeof(double));
    hymo_status st = HYMO_OK;
    if (!A || !b || !r || !x || !gz || !pcol) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory");
        goto done;
    }
    hymo_actuators_eval(&w->act, model, &w->kin);
    hymo_actuators_gradients(&w->act, model, &w->kin, gz);
    for (int a = 0; a < na; ++a) {
        hymo_partition_project(&w->pt, &gz[a * nz], pcol);
        for (int k = 0; k < ni; ++k) A[k * na + a] = pcol[k];
    }
    hymo_partition_project(&w->pt, w->kin.Q, pcol);
    double bnorm = 0.0, fref = 0.0; /* max |b|; max |A^T b| for the normal equations */
    for (int k = 0; k < ni; ++k) {
        b[k] = -pcol[k];
        bnorm = fmax(bnorm, fabs(b[k]));
    }
    fref = bnorm;
    if (ni > na)
        for (int a = 0; a < na; ++a) {
            double s = 0.0;
            for (int k = 0; k < ni; ++k) s += A[k * na + a] * b[k];
            fref = a ? fmax(fref, fabs(s)) : fabs(s);
        }
    static_data d = {.ni = ni, .na = na, .n = n, .A = A, .b = b, .r = r};
    const hymo_kinsol_problem pb = {.n = n,
                                    .residual = static_residual,
                                    .jacobian = static_jacobian,
                                    .user = &d,
                                    .f_scale = 1.0 / (fref + 1.0),
                                    .x_scale = 1.0,
                                    .fnorm_tol = STA_FNORM_TOL,
                                    .step_tol = 1e-15,
                                    .accept_tol = STA_ACCEPT_TOL,
                                    .max_step = 1e300, /* linear: the full Newton step */
                                    .max_iter = STA_MAX_ITER};
    hymo_kinsol_stats ks;
    hymo_error kerr;
    hymo_error_clear(&kerr);
    st = n > 0 ? hymo_kinsol_solve(&pb, x, &ks, &kerr) : HYMO_OK; /* x = 0 to start */
    if (st == HYMO_ERR_NOMEM || st == HYMO_ERR_ARGUMENT) {
        if (err) *err = kerr;
        goto done;
    }
    if (st == HYMO_ERR_NUMERIC) {
        st = hymo_error_set(err, HYMO_ERR_MODEL,
                            "%s: no static equilibrium: the cylinders cannot hold the initial "
                            "configuration (rank-deficient actuator Jacobian)",
                            src_name(model));
        goto done;
    }
    if (st != HYMO_OK) {
        st = hymo_error_set(err, HYMO_ERR_MODEL,
                            "%s: no static equilibrium: the force balance of the cylinders at the "
                            "initial configuration was not solved (%s)",
                            src_name(model), kerr.message);
        goto done;
    }
    if (ni < na)
        static_min_norm(&d, x, w->f_static);
    else
        memcpy(w->f_static, x, (size_t)na * sizeof(double));
    if (ni > na) { /* too few cylinders: the balance must hold exactly */
        static_balance(&d, w->f_static, r);
        double res = 0.0;
        for (int k = 0; k < ni; ++k) res = fmax(res, fabs(r[k]));
        if (res > STA_ACCEPT_TOL * (bnorm + 1.0))
            st = hymo_error_set(err, HYMO_ERR_MODEL,
                                "%s: no static equilibrium: %d cylinder(s) cannot hold %d degrees of "
                                "freedom at rest (unbalanced generalized force %.3g)",
                                src_name(model), na, ni, res);
    }
done:
    free(A), free(b), free(r), free(x), free(gz), free(pcol);
    return st;
}

/* Initial joint rates (bodies[].joint.rate, zero where not given),
 * projected onto the velocity constraints Phi_z zd = 0 by the independent
 * coordinates: theirs are kept (the `independent` joints where Phi_d of the
 * rest is regular, else the selected set w->pt), the dependent ones follow,
 * zd_d = R_d zd_i.  cm->rates_report: how many were given, the independent
 * set, the largest change of a given rate and max |Phi_z zd| over all rows
 * (redundant ones included).  Runs last: it may re-factorise w->pt. */
static hymo_status initial_rates(const hymo_model *model, hymo_compiled *cm, init_ws *w, hymo_error *err)
{
    const int nz = model->n_bodies, m = cm->con.m;
    int given = 0;
    cm->rates_report[0] = '\0';
    cm->zd0 = calloc((size_t)nz + 1, sizeof(double));
    if (!cm->zd0) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (initial rates)");
    for (int j = 0; j < nz; ++j) given += model->bodies[j].zd0_given;
    if (given == 0) return HYMO_OK;
    for (int j = 0; j < nz; ++j) cm->zd0[j] = model->bodies[j].zd0;
    char names[192] = "all joints (no cut joints)";
    const hymo_csr pz = hymo_constraints_csr(&cm->con, w->phi_z);
    if (m > 0) {
        hymo_partition *pt = &w->pt;
        if (model->n_independent_hint == pt->ni) {
            unsigned char *mask = pt->mask2; /* 1 = independent */
            memset(mask, 0, (size_t)nz);
            for (int k = 0; k < model->n_independent_hint; ++k) mask[model->independent_hint[k]] = 1;
            hymo_partition_set(pt, mask);
            if (hymo_partition_factor(pt, &pz) && !(hymo_partition_select(pt, &pz) > 0.0))
                return hymo_error_set(err, HYMO_ERR_ASSEMBLY, "%s: initial rates: constraint Jacobian is rank "
                                      "deficient at the assembled start", src_name(model));
        }
        double *u = calloc((size_t)pt->ni + 1, sizeof(double));
        if (!u) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (initial rates)");
        for (int k = 0; k < pt->ni; ++k) u[k] = cm->zd0[pt->indep[k]];
        for (int c = 0; c < pt->m; ++c) cm->zd0[pt->dep[c]] = 0.0;
        hymo_partition_add_dependent(pt, u, cm->zd0);
        free(u);
        hymo_partition_names(pt, model, names, sizeof names);
    }
    double residual = 0.0, change = 0.0;
    int worst = -1;
    for (int r = 0; r < pz.n_rows; ++r) {
        double s = 0.0;
        for (int t = pz.row_start[r]; t < pz.row_start[r + 1]; ++t) s += pz.value[t] * cm->zd0[pz.col[t]];
        if (fabs(s) > residual) residual = fabs(s);
    }
    for (int j = 0; j < nz; ++j) {
        const double d = fabs(cm->zd0[j] - model->bodies[j].zd0);
        if (model->bodies[j].zd0_given && (worst < 0 || d > change)) change = d, worst = j;
    }
    snprintf(cm->rates_report, sizeof cm->rates_report,
             "%d given; kept: %.*s; largest change of a given rate %.3g (%.*s); residual %.3g", given, 64, names,
             change, 40, model->bodies[worst].joint_name, residual);
    return HYMO_OK;
}

static hymo_status compute_initial(const hymo_model *model, hymo_compiled *cm, hymo_error *err)
{
    const int nz = model->n_bodies, m = cm->con.m, na = model->n_cylinders + model->n_motors + model->n_drivers;
    init_ws w;
    memset(&w, 0, sizeof w);
    hymo_status st = hymo_kin_init(&w.kin, &cm->kin, err);
    w.kin.mass_lazy = 1; /* the initial state needs Q' only */
    if (st == HYMO_OK) st = hymo_actuators_alloc(&w.act, na, err);
    if (st != HYMO_OK) goto done;
    w.phi = calloc((size_t)m + 1, sizeof(double));
    w.phi_z = calloc((size_t)cm->con.nnz + 1, sizeof(double));
    w.zd = calloc((size_t)nz + 1, sizeof(double));
    w.f_static = calloc((size_t)na + 1, sizeof(double));
    cm->z0 = calloc((size_t)nz + 1, sizeof(double));
    cm->p0 = calloc((size_t)model->n_volumes + 1, sizeof(double));
    cm->u0 = calloc((size_t)model->n_valves + 1, sizeof(double));
    if (!w.phi || !w.phi_z || !w.zd || !w.f_static || !cm->z0 || !cm->p0 || !cm->u0) {
        st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (initial state)");
        goto done;
    }
    for (int j = 0; j < nz; ++j) cm->z0[j] = model->bodies[j].z0;
    st = assemble(model, cm, &w, cm->z0, err);
    if (st == HYMO_OK) st = constraint_rank(model, cm, &w, err);
    if (st != HYMO_OK) goto done;
    const hymo_csr pz = hymo_constraints_csr(&cm->con, w.phi_z);
    if (!(hymo_partition_select(&w.pt, &pz) > 0.0)) {
        st = hymo_error_set(err, HYMO_ERR_ASSEMBLY,
                            "t = 0 s: constraint Jacobian is rank deficient (singular configuration or "
                            "redundant cut-joint equations)");
        goto done;
    }
    hymo_kin_velocities(&w.kin, model, w.zd);
    hymo_actuators_eval(&w.act, model, &w.kin);
    st = hymo_circuit_init(&cm->circ, model, w.act.s, err);
    if (st == HYMO_OK) st = static_forces(model, &w, err);
    if (st == HYMO_OK)
        st = hymo_circuit_static_pressures(&cm->circ, model, w.act.s, w.f_static, cm->p0, err);
    if (st != HYMO_OK) goto done;
    if (st == HYMO_OK) st = initial_rates(model, cm, &w, err);
    if (st != HYMO_OK) goto done;
    /* the circuits of a split (an error here concerns co-simulation only) */
    hymo_error_clear(&cm->parts_err);
    cm->parts_status = hymo_circuit_partition(model, &cm->parts, &cm->n_parts, &cm->parts_err);
    if (cm->parts_status != HYMO_OK) {
        cm->parts = NULL;
        cm->n_parts = 0;
    }
    atomic_fetch_add(&compilations, 1);
done:
    hymo_kin_free(&w.kin);
    hymo_partition_free(&w.pt);
    hymo_actuators_free(&w.act);
    free(w.phi), free(w.phi_z), free(w.zd), free(w.f_static);
    return st;
}

hymo_status hymo_compiled_initial(const hymo_model *model, const hymo_compiled **out, hymo_error *err)
{
    hymo_compiled *cm = model->compiled;
    *out = NULL;
    if (!cm) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "model '%s' was not compiled (load it with hymo_model_load_*)", model->name);
    pthread_mutex_lock(&cm->lock);
    if (!cm->initial_done) {
        hymo_error_clear(&cm->initial_err);
        cm->initial_status = compute_initial(model, cm, &cm->initial_err);
        cm->initial_done = 1;
    }
    pthread_mutex_unlock(&cm->lock);
    if (cm->initial_status != HYMO_OK) {
        if (err) *err = cm->initial_err;
        return cm->initial_status;
    }
    *out = cm;
    return HYMO_OK;
}
