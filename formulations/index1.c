/* Index-1 augmented Lagrangian formulation (ALI1, seed 000 Eqs. 2a-2b) in
 * the semirecursive joint coordinates, for the explicit (semi-implicit
 * Euler) integrator of the co-simulation (SPEC §7).  Accelerations at t_k
 * from
 *   (M' + Phi_z^T a Phi_z) zdd + Phi_z^T lambda*
 *       = Q' - Phi_z^T a (gamma + 2 xi w Phid + w^2 Phi),
 *   lambda* <- lambda* + a (Phidd + 2 xi w Phid + w^2 Phi).
 * Content: the leading matrix (LU) and scratch.  It has no Newton unknowns:
 * the implicit-integrator ops are NULL. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/linalg.h"
#include "multibody.h"

#define ALI1_XI 1.0
#define ALI1_OMEGA 10.0
#define ALI1_MAX_ITER 30
#define ALI1_TOL 1e-10

typedef struct {
    double *A; /* nz x nz leading matrix (LU) */
    int *piv;
    double *rhs, *phid, *bias; /* nz, m, m */
    int *all;
    int nz;
} i1_content;

static hymo_status i1_create(hymo_formulation *f, const hymo_mb *mb, hymo_error *err)
{
    i1_content *c = calloc(1, sizeof *c);
    if (!c) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (index-1)");
    f->content = c;
    const size_t nz = (size_t)mb->nz + 1, m = (size_t)mb->m + 1;
    c->nz = mb->nz;
    c->A = calloc(nz * nz, sizeof(double));
    c->piv = calloc(nz, sizeof(int));
    c->rhs = calloc(nz, sizeof(double));
    c->phid = calloc(m, sizeof(double));
    c->bias = calloc(m, sizeof(double));
    c->all = calloc(nz, sizeof(int));
    if (!c->A || !c->piv || !c->rhs || !c->phid || !c->bias || !c->all)
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (index-1)");
    for (int j = 0; j < mb->nz; ++j) c->all[j] = j;
    return HYMO_OK;
}

static void i1_destroy(hymo_formulation *f)
{
    i1_content *c = f->content;
    if (!c) return;
    free(c->A);
    free(c->piv);
    free(c->rhs);
    free(c->phid);
    free(c->bias);
    free(c->all);
    free(c);
    f->content = NULL;
}

static hymo_status i1_start(hymo_formulation *f, hymo_mb *mb, double t, hymo_error *err)
{
    (void)f, (void)mb, (void)t, (void)err;
    return HYMO_OK;
}

static hymo_status i1_accelerations(hymo_formulation *f, hymo_mb *mb, double t, long step, int *iterations,
                                    hymo_error *err)
{
    i1_content *c = f->content;
    const int nz = mb->nz, m = mb->m;
    const double alpha = mb->alpha;
    double *A = c->A, *rhs = c->rhs, *phid = c->phid, *bias = c->bias;
    const hymo_constraints *con = mb->con;
    const int *rs = con->row_start, *cj = con->col;
    const double *P = mb->phi_zv;
    const hymo_csr pz = hymo_constraints_csr(con, P);
    memcpy(A, mb->kin.M, (size_t)nz * nz * sizeof(double));
    for (int r = 0; r < m; ++r) {
        const double v = hymo_csr_row_dot(&pz, r, mb->zd);
        phid[r] = v;
        bias[r] = mb->gamma[r] + 2.0 * ALI1_XI * ALI1_OMEGA * v + ALI1_OMEGA * ALI1_OMEGA * mb->phi[r];
        for (int a = rs[r]; a < rs[r + 1]; ++a) /* alpha Phi_z^T Phi_z, each entry's rows ascending */
            for (int b = rs[r]; b < rs[r + 1]; ++b) A[cj[a] * nz + cj[b]] += alpha * P[a] * P[b];
    }
    if (hymo_lu_factor(nz, A, c->piv))
        return hymo_error_set(err, HYMO_ERR_NUMERIC, "t = %.6g s (step %ld): singular leading matrix (index-1)",
                              t, step + 1);
    for (int it = 0; it < (m > 0 ? ALI1_MAX_ITER : 1); ++it) {
        for (int i = 0; i < nz; ++i) rhs[i] = mb->kin.Q[i];
        for (int r = 0; r < m; ++r)
            for (int t = rs[r]; t < rs[r + 1]; ++t) rhs[cj[t]] -= P[t] * (alpha * bias[r] + mb->lambda[r]);
        hymo_lu_solve(nz, A, c->piv, rhs);
        memcpy(mb->zdd, rhs, (size_t)nz * sizeof(double));
        double worst = 0.0;
        for (int r = 0; r < m; ++r) { /* Phidd + 2 xi w Phid + w^2 Phi */
            const double v = hymo_csr_row_dot(&pz, r, mb->zdd) + bias[r];
            mb->lambda[r] += alpha * v;
            worst = fmax(worst, fabs(v));
        }
        *iterations = it + 1;
        if (worst <= ALI1_TOL) break;
    }
    return HYMO_OK;
}

static int i1_unknown_joint(const hymo_formulation *f, int k) { return (void)f, k; }

static int i1_independent(const hymo_formulation *f, const int **indices)
{
    const i1_content *c = f->content;
    *indices = c->all;
    return c->nz;
}

static const char *i1_log(const hymo_formulation *f) { return (void)f, "all"; }
static int i1_reselections(const hymo_formulation *f) { return (void)f, 0; }
static double i1_penalty_factor(const hymo_formulation *f, const hymo_mb *mb) { return (void)f, mb->alpha; }

const hymo_formulation_ops hymo_index1_ops = {
    .name = "index1-penalty",
    .create = i1_create,
    .destroy = i1_destroy,
    .start = i1_start,
    .unknown_joint = i1_unknown_joint,
    .independent = i1_independent,
    .log = i1_log,
    .reselections = i1_reselections,
    .penalty_factor = i1_penalty_factor,
    .accelerations = i1_accelerations,
};
