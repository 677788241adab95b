/* Linear state-space test subsystems and the compound-matrix stability
 * prediction of seed 004 (hymo/linear.h). */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lazy_lib.h"
#include "master_internal.h"
#include "hymo/linear.h"

typedef struct {
    int nx, nu, ny;
    double *A, *B, *C, *D; /* row-major copies (D zero-filled if not given) */
    double h;
    double t, t0;  /* current time, start of the input polynomials */
    double *x;     /* nx */
    double *coef;  /* HYMO_POLY_TERMS per input */
    double *u, *k, *xs; /* nu, 4 nx, nx scratch */
    hymo_var_table vars; /* time, x[i] */
} linear_impl;

static void input_at(const linear_impl *li, double t, double *u)
{
    for (int i = 0; i < li->nu; ++i) u[i] = hymo_poly_eval(&li->coef[HYMO_POLY_TERMS * i], t - li->t0);
}

/* f = A x + B u(t) */
static void rhs(linear_impl *li, double t, const double *x, double *f)
{
    input_at(li, t, li->u);
    for (int r = 0; r < li->nx; ++r) {
        double s = 0.0;
        for (int c = 0; c < li->nx; ++c) s += li->A[r * li->nx + c] * x[c];
        for (int c = 0; c < li->nu; ++c) s += li->B[r * li->nu + c] * li->u[c];
        f[r] = s;
    }
}

static void lin_set_inputs(hymo_subsystem *sub, double t0, const double *coef)
{
    linear_impl *li = sub->impl;
    li->t0 = t0;
    memcpy(li->coef, coef, (size_t)li->nu * HYMO_POLY_TERMS * sizeof(double));
}

static hymo_status lin_do_step(hymo_subsystem *sub, double t, double H, hymo_error *err)
{
    linear_impl *li = sub->impl;
    const int n = li->nx;
    const double h = li->h;
    const long r = hymo_steps_per_communication(H, h);
    if (r == 0)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: H = %g s is not an integer multiple of h = %g s", sub->name,
                              H, h);
    double *k1 = li->k, *k2 = k1 + n, *k3 = k2 + n, *k4 = k3 + n, *xs = li->xs, *x = li->x;
    for (long s = 0; s < r; ++s) {
        const double ts = t + (double)s * h;
        rhs(li, ts, x, k1);
        for (int i = 0; i < n; ++i) xs[i] = x[i] + 0.5 * h * k1[i];
        rhs(li, ts + 0.5 * h, xs, k2);
        for (int i = 0; i < n; ++i) xs[i] = x[i] + 0.5 * h * k2[i];
        rhs(li, ts + 0.5 * h, xs, k3);
        for (int i = 0; i < n; ++i) xs[i] = x[i] + h * k3[i];
        rhs(li, ts + h, xs, k4);
        for (int i = 0; i < n; ++i) x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
    li->t = t + H;
    for (int i = 0; i < n; ++i)
        if (!isfinite(x[i]))
            return hymo_error_set(err, HYMO_ERR_NUMERIC, "%s: t = %.6g s: state %d is not finite", sub->name, li->t,
                                  i);
    return HYMO_OK;
}

static void lin_get_outputs(const hymo_subsystem *sub, double *y)
{
    linear_impl *li = sub->impl;
    input_at(li, li->t, li->u);
    for (int r = 0; r < li->ny; ++r) {
        double s = 0.0;
        for (int c = 0; c < li->nx; ++c) s += li->C[r * li->nx + c] * li->x[c];
        for (int c = 0; c < li->nu; ++c) s += li->D[r * li->nu + c] * li->u[c];
        y[r] = s;
    }
}

/* state: t, x */
static int lin_state_size(const hymo_subsystem *sub) { return 1 + ((linear_impl *)sub->impl)->nx; }

static void lin_get_state(const hymo_subsystem *sub, double *buf)
{
    const linear_impl *li = sub->impl;
    buf[0] = li->t;
    memcpy(buf + 1, li->x, (size_t)li->nx * sizeof(double));
}

static void lin_set_state(hymo_subsystem *sub, const double *buf)
{
    linear_impl *li = sub->impl;
    li->t = buf[0];
    memcpy(li->x, buf + 1, (size_t)li->nx * sizeof(double));
}

static void lin_destroy(hymo_subsystem *sub)
{
    if (!sub) return;
    linear_impl *li = sub->impl;
    if (li) {
        double *arr[] = {li->A, li->B, li->C, li->D, li->x, li->coef, li->u, li->k, li->xs};
        for (size_t i = 0; i < sizeof arr / sizeof arr[0]; ++i) free(arr[i]);
        hymo_var_table_free(&li->vars);
        free(li);
    }
    free(sub);
}

/* variables: time (kind 0), x[i] (kind 1) */
static int lin_n_variables(const hymo_subsystem *sub) { return ((const linear_impl *)sub->impl)->vars.n; }

static const hymo_variable *lin_variable(const hymo_subsystem *sub, int vr)
{
    return hymo_var_table_get(&((const linear_impl *)sub->impl)->vars, vr);
}

static void lin_get_real(const hymo_subsystem *sub, const int *vr, int n, double *values)
{
    const linear_impl *li = sub->impl;
    for (int k = 0; k < n; ++k)
        values[k] = vr[k] < 0 || vr[k] >= li->vars.n ? NAN
                    : li->vars.kind[vr[k]]            ? li->x[li->vars.index[vr[k]]]
                                                      : li->t;
}

static const char *lin_get_string(const hymo_subsystem *sub, int vr)
{
    (void)sub, (void)vr;
    return NULL;
}

static const hymo_subsystem_ops linear_ops = {
    .kind = "linear",
    .set_inputs = lin_set_inputs,
    .do_step = lin_do_step,
    .get_outputs = lin_get_outputs,
    .state_size = lin_state_size,
    .get_state = lin_get_state,
    .set_state = lin_set_state,
    .destroy = lin_destroy,
    .n_variables = lin_n_variables,
    .variable = lin_variable,
    .get_real = lin_get_real,
    .get_string = lin_get_string,
};

static double *copy_or_zero(const double *src, int n)
{
    double *d = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    if (d && src && n > 0) memcpy(d, src, (size_t)n * sizeof(double));
    return d;
}

hymo_status hymo_linear_subsystem_create(const hymo_linear_system *sys, const double *x0, const char *name,
                                         hymo_subsystem **out, hymo_error *err)
{
    *out = NULL;
    const char *nm = name ? name : "linear";
    if (sys->nx < 1 || sys->nu < 0 || sys->ny < 0)
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: sizes nx = %d, nu = %d, ny = %d (need nx >= 1)", nm,
                              sys->nx, sys->nu, sys->ny);
    if (!sys->A || (sys->nu > 0 && !sys->B) || (sys->ny > 0 && !sys->C))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: matrix A, B or C missing", nm);
    if (!(sys->h > 0.0) || !isfinite(sys->h))
        return hymo_error_set(err, HYMO_ERR_ARGUMENT, "%s: step h = %g must be positive", nm, sys->h);
    hymo_subsystem *sub = calloc(1, sizeof *sub);
    linear_impl *li = calloc(1, sizeof *li);
    if (!sub || !li) {
        free(sub);
        free(li);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (%s)", nm);
    }
    sub->ops = &linear_ops;
    sub->impl = li;
    snprintf(sub->name, sizeof sub->name, "%s", nm);
    sub->n_inputs = sys->nu;
    sub->n_outputs = sys->ny;
    const int nx = sys->nx, nu = sys->nu, ny = sys->ny;
    li->nx = nx, li->nu = nu, li->ny = ny, li->h = sys->h;
    li->A = copy_or_zero(sys->A, nx * nx);
    li->B = copy_or_zero(sys->B, nx * nu);
    li->C = copy_or_zero(sys->C, ny * nx);
    li->D = copy_or_zero(sys->D, ny * nu);
    li->x = copy_or_zero(x0, nx);
    li->coef = copy_or_zero(NULL, HYMO_POLY_TERMS * nu);
    li->u = copy_or_zero(NULL, nu);
    li->k = copy_or_zero(NULL, 4 * nx);
    li->xs = copy_or_zero(NULL, nx);
    int bad = hymo_var_table_add(&li->vars, 0, 0, HYMO_VAR_REAL, "s", "time", "time");
    for (int i = 0; i < nx; ++i) bad |= hymo_var_table_add(&li->vars, 1, i, HYMO_VAR_REAL, "", "state", "x[%d]", i);
    if (bad || !li->A || !li->B || !li->C || !li->D || !li->x || !li->coef || !li->u || !li->k || !li->xs) {
        lin_destroy(sub);
        return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (%s)", nm);
    }
    *out = sub;
    return HYMO_OK;
}

/* ------------------------------------------------------ compound matrix */

/* Size of the probed vector z: the states, then per system its p+1
 * latest outputs (newest first). */
static int z_size(const hymo_linear_system *sys, int n, int p)
{
    int nz = 0;
    for (int k = 0; k < n; ++k) nz += sys[k].nx + (p + 1) * sys[k].ny;
    return nz;
}

/* Writes z into the subsystems' states and the master's output histories
 * at the steady point t = p H (all p+1 history levels in use). */
static void put_z(hymo_master *m, const hymo_linear_system *sys, const double *z, double *buf)
{
    const int p = m->opt.order, n = m->n;
    const double t = (double)p * m->opt.H;
    m->steps = p;
    for (int k = 0; k < n; ++k) {
        buf[0] = t;
        memcpy(buf + 1, z, (size_t)sys[k].nx * sizeof(double));
        m->nodes[k].sub->ops->set_state(m->nodes[k].sub, buf);
        z += sys[k].nx;
    }
    for (int k = 0; k < n; ++k) {
        hymo_cosim_node *nd = &m->nodes[k];
        nd->n_hist = p + 1;
        for (int j = 0; j <= p; ++j) {
            nd->hist_t[j] = t - (double)j * m->opt.H;
            memcpy(nd->hist_y + j * sys[k].ny, z, (size_t)sys[k].ny * sizeof(double));
            z += sys[k].ny;
        }
    }
}

static void get_z(const hymo_master *m, const hymo_linear_system *sys, double *z, double *buf)
{
    const int p = m->opt.order, n = m->n;
    for (int k = 0; k < n; ++k) {
        m->nodes[k].sub->ops->get_state(m->nodes[k].sub, buf);
        memcpy(z, buf + 1, (size_t)sys[k].nx * sizeof(double));
        z += sys[k].nx;
    }
    for (int k = 0; k < n; ++k)
        for (int j = 0; j <= p; ++j) {
            memcpy(z, m->nodes[k].hist_y + j * sys[k].ny, (size_t)sys[k].ny * sizeof(double));
            z += sys[k].ny;
        }
}

hymo_status hymo_linear_cosim_spectral_radius(const hymo_linear_system *systems, int n_systems,
                                              const hymo_link *links, int n_links, const hymo_master_options *opt,
                                              double *rho, int *n_z, hymo_error *err)
{
    *rho = NAN;
    if (n_systems < 1) return hymo_error_set(err, HYMO_ERR_ARGUMENT, "spectral radius: no systems");
    hymo_subsystem **subs = calloc((size_t)n_systems, sizeof *subs);
    if (!subs) return hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (spectral radius)");
    hymo_status st = HYMO_OK;
    int maxx = 0;
    for (int k = 0; k < n_systems && st == HYMO_OK; ++k) {
        char name[32];
        snprintf(name, sizeof name, "system %d", k);
        st = hymo_linear_subsystem_create(&systems[k], NULL, name, &subs[k], err);
        if (st == HYMO_OK && systems[k].nx > maxx) maxx = systems[k].nx;
    }
    hymo_master *m = NULL;
    if (st == HYMO_OK) st = hymo_master_create(subs, n_systems, links, n_links, opt, &m, err);
    const int nz = st == HYMO_OK ? z_size(systems, n_systems, opt->order) : 0;
    double *M = NULL, *z = NULL, *wr = NULL, *wi = NULL, *buf = NULL;
    if (st == HYMO_OK) {
        M = calloc((size_t)nz * (size_t)nz, sizeof *M); /* column-major */
        z = calloc((size_t)nz, sizeof *z);
        wr = calloc((size_t)nz, sizeof *wr);
        wi = calloc((size_t)nz, sizeof *wi);
        buf = calloc((size_t)maxx + 1, sizeof *buf);
        if (!M || !z || !wr || !wi || !buf) st = hymo_error_set(err, HYMO_ERR_NOMEM, "out of memory (spectral radius)");
    }
    for (int c = 0; st == HYMO_OK && c < nz; ++c) {
        memset(z, 0, (size_t)nz * sizeof *z);
        z[c] = 1.0;
        put_z(m, systems, z, buf);
        st = hymo_master_step(m, err);
        if (st == HYMO_OK) get_z(m, systems, &M[(size_t)c * nz], buf);
    }
    if (st == HYMO_OK) {
        lapack_int info = hymo_lapack_dgeev(LAPACK_COL_MAJOR, 'N', 'N', nz, M, nz, wr, wi, NULL, 1, NULL, 1);
        if (info == HYMO_LAPACK_UNAVAILABLE) {
            st = hymo_error_set(err, HYMO_ERR_IO, "spectral radius: %s", hymo_lapack_error());
        } else if (info != 0) {
            st = hymo_error_set(err, HYMO_ERR_NUMERIC, "spectral radius: eigenvalue solver failed (dgeev info %d)",
                                (int)info);
        } else {
            double r = 0.0;
            for (int i = 0; i < nz; ++i) r = fmax(r, hypot(wr[i], wi[i]));
            *rho = r;
            if (n_z) *n_z = nz;
        }
    }
    free(M);
    free(z);
    free(wr);
    free(wi);
    free(buf);
    hymo_master_free(m);
    for (int k = 0; k < n_systems; ++k)
        if (subs[k]) subs[k]->ops->destroy(subs[k]);
    free(subs);
    return st;
}
