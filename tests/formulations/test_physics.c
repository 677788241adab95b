/* Physics tests: checks that would catch wrong physics in the multibody and
 * hydraulic code, against independent evaluations written here.
 *
 *   1. M' and Q' of the semirecursive code (hymo_kin_*) against an explicit
 *      brute-force evaluation  M' = R_d^T T^T Mbar T R_d,
 *      Q' = R_d^T T^T (Qbar - Mbar T Rdot_d zd)  (SPEC §1.2).
 *   2. M' and Q' against Lagrange's equations, by finite differences of the
 *      kinetic and potential energy of an independent forward kinematics.
 *   3. Phi_z and gamma of the cut joints against finite differences.
 *   4. Continuity of the orifice law and of the 4/3 valve / throttle flows.
 *   5. The static start of every seed model (both formulations).
 *   6. Cylinder force and chamber-volume sign conventions, friction and end
 *      dampers.
 *
 * Nothing here calls the recursive code to build a reference: the forward
 * kinematics, the 6Nb x 6Nb brute-force matrices and the energies are plain
 * loops over the model data. Every tolerance states where it comes from.
 * Besides the seed models, two synthetic models written below exercise what
 * the planar, revolute-only seeds cannot: a 3-D tree with prismatic joints,
 * tilted axes and products of inertia (spatial cut joints), and a planar
 * tree closed by planar translational cuts with angles other than 0 and pi.
 *
 * Qbar uses the energy-consistent velocity force m w x gdot, gdot = sdot +
 * w x g (see kinematics.h). SPEC §1.2 / seed 002 Eq. 10 write w x (w x m g),
 * which drops m w x sdot; with that form test 2 (Lagrange) fails, e.g.
 * Q'_1 of the four-bar off by ~8 N m (0.07 %) at a random state.
 * HYMO_TEST_VERBOSE=1 prints, per check, the largest |error| / tolerance. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit.h"
#include "compiled.h"
#include "constraints.h"
#include "hymo/sim.h"
#include "kinematics.h"
#include "test_util.h"

#define MAXB 8
#define PI 3.14159265358979323846
#define EPS 2.220446049250313e-16

/* assert_close that also records the largest |a - b| / tol seen per test,
 * printed when HYMO_TEST_VERBOSE is set (to see the margin of every bound). */
#define MARGIN_LINES 4096
static double worst_ratio[MARGIN_LINES];
static char context[256]; /* model / trial, printed with a failure */
#define CHECK_CLOSE(a, b, tol)                                                                     \
    do {                                                                                           \
        double ca_ = (a), cb_ = (b), ct_ = (tol);                                                  \
        if (ct_ > 0.0 && __LINE__ < MARGIN_LINES && fabs(ca_ - cb_) / ct_ > worst_ratio[__LINE__]) \
            worst_ratio[__LINE__] = fabs(ca_ - cb_) / ct_;                                         \
        if (!(fabs(ca_ - cb_) <= ct_)) fprintf(stderr, "[%s]\n", context);                        \
        test_assert_close(ca_, cb_, ct_, #a, #b, __FILE__, __LINE__);                              \
    } while (0)

static int setup_margin(void **state)
{
    (void)state;
    memset(worst_ratio, 0, sizeof worst_ratio);
    context[0] = '\0';
    return 0;
}

static int report_margin(void **state)
{
    (void)state;
    if (!getenv("HYMO_TEST_VERBOSE")) return 0;
    for (int l = 0; l < MARGIN_LINES; ++l)
        if (worst_ratio[l] > 0.0) fprintf(stderr, "    line %4d: largest |error| / tolerance = %.3g\n", l, worst_ratio[l]);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Small linear algebra (independent of the library's helpers)          */

static void cross3(const double a[3], const double b[3], double c[3])
{
    double t0 = a[1] * b[2] - a[2] * b[1], t1 = a[2] * b[0] - a[0] * b[2], t2 = a[0] * b[1] - a[1] * b[0];
    c[0] = t0;
    c[1] = t1;
    c[2] = t2;
}

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static double norm3(const double a[3]) { return sqrt(dot3(a, a)); }

static void skew(const double a[3], double S[9])
{
    S[0] = 0;     S[1] = -a[2]; S[2] = a[1];
    S[3] = a[2];  S[4] = 0;     S[5] = -a[0];
    S[6] = -a[1]; S[7] = a[0];  S[8] = 0;
}

/* C (n x p) = A (n x k) B (k x p), row-major. */
static void matmul(int n, int k, int p, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < p; ++j) {
            double s = 0.0;
            for (int l = 0; l < k; ++l) s += A[i * k + l] * B[l * p + j];
            C[i * p + j] = s;
        }
}

/* C (n x p) = A^T B with A (k x n), B (k x p). */
static void matTmul(int k, int n, int p, const double *A, const double *B, double *C)
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < p; ++j) {
            double s = 0.0;
            for (int l = 0; l < k; ++l) s += A[l * n + i] * B[l * p + j];
            C[i * p + j] = s;
        }
}

static double max_abs(int n, const double *v)
{
    double m = 0.0;
    for (int i = 0; i < n; ++i) m = fmax(m, fabs(v[i]));
    return m;
}

/* Deterministic random numbers (xorshift64*), fixed seed per test. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static void rng_seed(uint64_t s) { rng_state = s ? s : 1; }
static double urand(double a, double b)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    uint64_t r = rng_state * 0x2545F4914F6CDD1Dull;
    return a + (b - a) * ((double)(r >> 11) * (1.0 / 9007199254740992.0));
}

/* ------------------------------------------------------------------ */
/* Independent forward kinematics                                      */

typedef struct {
    int nb;
    double R[MAXB][9]; /* body rotation                */
    double o[MAXB][3]; /* body origin = joint point    */
    double u[MAXB][3]; /* joint axis, global           */
    double g[MAXB][3]; /* centre of mass               */
    double J[MAXB][9]; /* inertia about com, global    */
} pose_t;

/* R = cos t I + sin t [a]x + (1 - cos t) a a^T */
static void axis_rot(const double a[3], double t, double Rm[9])
{
    double S[9], c = cos(t), s = sin(t);
    skew(a, S);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) Rm[3 * i + j] = (i == j ? c : 0.0) + s * S[3 * i + j] + (1.0 - c) * a[i] * a[j];
}

static void fk(const hymo_model *m, const double *z, pose_t *P)
{
    static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    P->nb = m->n_bodies;
    for (int j = 0; j < m->n_bodies; ++j) {
        const hymo_body *b = &m->bodies[j];
        const double *Rp = b->parent < 0 ? I3 : P->R[b->parent];
        double op[3] = {0, 0, 0}, loc[3], Rz[9], tmp[9], Rt[9];
        if (b->parent >= 0) memcpy(op, P->o[b->parent], sizeof op);
        matmul(3, 3, 1, Rp, b->joint_location, loc);
        matmul(3, 3, 1, Rp, b->joint_axis, P->u[j]);
        if (b->joint_type == HYMO_JOINT_REVOLUTE) {
            axis_rot(b->joint_axis, z[j], Rz);
            matmul(3, 3, 3, Rp, Rz, P->R[j]);
            for (int k = 0; k < 3; ++k) P->o[j][k] = op[k] + loc[k];
        } else {
            memcpy(P->R[j], Rp, 9 * sizeof(double));
            for (int k = 0; k < 3; ++k) P->o[j][k] = op[k] + loc[k] + P->u[j][k] * z[j];
        }
        double gl[3];
        matmul(3, 3, 1, P->R[j], b->com, gl);
        for (int k = 0; k < 3; ++k) P->g[j][k] = P->o[j][k] + gl[k];
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) Rt[3 * r + c] = P->R[j][3 * c + r];
        matmul(3, 3, 3, P->R[j], b->inertia, tmp);
        matmul(3, 3, 3, tmp, Rt, P->J[j]);
    }
}

static void fk_point(const pose_t *P, int body, const double rl[3], double r[3])
{
    if (body < 0) {
        memcpy(r, rl, 3 * sizeof(double));
        return;
    }
    matmul(3, 3, 1, P->R[body], rl, r);
    for (int k = 0; k < 3; ++k) r[k] += P->o[body][k];
}

/* 1 if joint j lies on the path root..i (including i), by walking parents. */
static int on_path(const hymo_model *m, int i, int j)
{
    for (int k = i; k >= 0; k = m->bodies[k].parent)
        if (k == j) return 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Models                                                              */

/* A synthetic spatial tree (not a seed model): tilted axes, two prismatic
 * joints, off-diagonal inertias (and one diagonal one, whose rotation to
 * global matters only in 3-D), a branch, and gravity not along an axis.
 * The seed models are planar with revolute joints only, so this exercises
 * the general 6-vector code paths (SPEC §1.1 "3-D mechanisms work"). */
static const char spatial_tree[] =
    "format: 1\n"
    "name: spatial\n"
    "gravity: [0.7, -9.81, 1.3]\n"
    "bodies:\n"
    "  - name: b1\n"
    "    joint: {name: q1, type: revolute, parent: ground, location: [0.1, 0.2, -0.3], axis: [0.3, -0.5, 0.8]}\n"
    "    mass: 3.0\n"
    "    com: [0.4, 0.1, -0.2]\n"
    "    inertia: [0.5, 0.6, 0.7, 0.05, -0.03, 0.02]\n"
    "  - name: b2\n"
    "    joint: {name: q2, type: prismatic, parent: b1, location: [0.6, -0.1, 0.2], axis: [1, 0.4, -0.3]}\n"
    "    mass: 2.0\n"
    "    com: [0.1, 0.3, 0.1]\n"
    "    inertia: [0.2, 0.3, 0.25, -0.02, 0.01, 0.03]\n"
    "  - name: b3\n"
    "    joint: {name: q3, type: revolute, parent: b2, location: [0.2, 0.3, -0.1], axis: [-0.2, 1, 0.4]}\n"
    "    mass: 1.5\n"
    "    com: [0.3, -0.2, 0.1]\n"
    "    inertia: [0.1, 0.12, 0.09, 0.01, 0.0, -0.01]\n"
    "  - name: b4\n"
    "    joint: {name: q4, type: revolute, parent: b1, location: [-0.3, 0.5, 0.2], axis: [0.6, 0.2, 0.7]}\n"
    "    mass: 2.5\n"
    "    com: [0.2, 0.2, 0.3]\n"
    "    inertia: [0.3, 0.2, 0.4, 0.0, 0.02, 0.01]\n"
    "  - name: b5\n"
    "    joint: {name: q5, type: prismatic, parent: b4, location: [0.4, 0.0, -0.2], axis: [0.1, -0.3, 1]}\n"
    "    mass: 1.2\n"
    "    com: [-0.1, 0.2, 0.05]\n"
    "    inertia: [0.05, 0.06, 0.07]\n" /* principal axes = body axes */
    "  - name: b6\n"
    "    joint: {name: q6, type: revolute, parent: b5, location: [0.1, 0.1, 0.1], axis: [1, 0, 0]}\n"
    "    mass: 0.8\n"
    "    com: [0.25, -0.05, 0.1]\n"
    "    inertia: [0.02, 0.03, 0.025, 0.0, 0.001, 0.0]\n";

/* Cut-joint variants appended to spatial_tree (each leaves >= 1 DOF). */
static const char *const spatial_cuts[] = {
    "cut_joints:\n"
    "  - {name: S, type: spherical, body_a: b3, point_a: [0.5, 0.1, -0.2], body_b: b6, point_b: [0.2, 0.3, -0.1]}\n",
    "cut_joints:\n"
    "  - {name: R, type: revolute, body_a: b6, point_a: [0.3, -0.2, 0.1], body_b: b3, point_b: [0.1, 0.4, 0.2],\n"
    "     axis_a: [0.2, 0.9, -0.3], axis_b: [0.5, -0.1, 0.8]}\n",
    "cut_joints:\n"
    "  - {name: X, type: translational, body_a: b6, point_a: [0.3, -0.2, 0.1], body_b: b2, point_b: [0.1, 0.4, 0.2],\n"
    "     axis_a: [0.2, 0.9, -0.3], direction: [0.5, -0.1, 0.8]}\n",
    "cut_joints:\n"
    "  - {name: PT, type: planar_translational, body_a: b3, point_a: [0.2, 0.1, 0.0], body_b: b4,\n"
    "     point_b: [0.3, -0.4, 0.1], direction: [1, 2, 0], angle: 0.3}\n"
    "  - {name: PR, type: planar_revolute, body_a: b6, point_a: [0.3, -0.2, 0.1], body_b: ground,\n"
    "     point_b: [1.0, 0.5, -0.2]}\n",
    "cut_joints:\n"
    "  - {name: X, type: translational, body_a: b5, point_a: [0.3, -0.2, 0.1], body_b: ground, point_b: [0.1, 0.4, 0.2],\n"
    "     axis_a: [0.2, 0.9, -0.3], direction: [0.5, -0.1, 0.8]}\n",
};
#define N_SPATIAL_CUTS ((int)(sizeof spatial_cuts / sizeof spatial_cuts[0]))

/* A synthetic planar tree (axes along Z, a prismatic joint in the plane)
 * closed by two planar translational cuts with angles other than 0 and pi
 * (the seed quick-return uses only 0 and pi, where sin(angle) = 0). */
static const char planar_model[] =
    "format: 1\n"
    "name: planar\n"
    "gravity: [0, -9.81, 0]\n"
    "bodies:\n"
    "  - name: a1\n"
    "    joint: {name: q1, type: revolute, parent: ground, location: [0.2, -0.1, 0], axis: [0, 0, 1], initial: 0.3}\n"
    "    mass: 2.0\n"
    "    com: [0.5, 0.1, 0]\n"
    "    inertia: [0.01, 0.2, 0.21]\n"
    "  - name: a2\n"
    "    joint: {name: q2, type: prismatic, parent: a1, location: [1.0, 0.2, 0], axis: [1, 0.5, 0], initial: 0.1}\n"
    "    mass: 1.0\n"
    "    com: [0.1, -0.1, 0]\n"
    "    inertia: [0.01, 0.05, 0.06]\n"
    "  - name: a3\n"
    "    joint: {name: q3, type: revolute, parent: a2, location: [0.3, 0.1, 0], axis: [0, 0, 1], initial: -0.4}\n"
    "    mass: 1.5\n"
    "    com: [0.3, 0.0, 0]\n"
    "    inertia: [0.01, 0.1, 0.11]\n"
    "  - name: a4\n"
    "    joint: {name: q4, type: revolute, parent: ground, location: [2, 1, 0], axis: [0, 0, 1], initial: 1.2}\n"
    "    mass: 3.0\n"
    "    com: [0.6, 0.0, 0]\n"
    "    inertia: [0.01, 0.4, 0.41]\n"
    "  - name: a5\n"
    "    joint: {name: q5, type: revolute, parent: a4, location: [1.2, 0, 0], axis: [0, 0, 1], initial: 0.7}\n"
    "    mass: 0.5\n"
    "    com: [0.2, 0.05, 0]\n"
    "    inertia: [0.001, 0.01, 0.011]\n"
    "cut_joints:\n"
    "  - {name: T1, type: planar_translational, body_a: a3, point_a: [0.4, 0.1, 0], body_b: a5,\n"
    "     point_b: [0.2, -0.3, 0], direction: [1, 2, 0], angle: 0.4}\n"
    "  - {name: T2, type: planar_translational, body_a: a1, point_a: [0.1, 0.1, 0], body_b: ground,\n"
    "     point_b: [0.5, 0.5, 0], direction: [2, -1, 0], angle: -1.1}\n";

static hymo_model *load_spatial(int variant)
{
    char text[8192];
    snprintf(text, sizeof text, "%s%s", spatial_tree, variant >= 0 ? spatial_cuts[variant] : "");
    return test_load_text(text, "<spatial>");
}

/* Random joint values: angles in [-pi, pi], slides in [-0.5, 0.5] m;
 * rates in [-2, 2] rad/s (m/s). */
static void random_state(const hymo_model *m, double *z, double *zd)
{
    for (int j = 0; j < m->n_bodies; ++j) {
        if (m->bodies[j].joint_type == HYMO_JOINT_REVOLUTE)
            z[j] = urand(-PI, PI);
        else
            z[j] = urand(-0.5, 0.5);
        if (zd) zd[j] = urand(-2.0, 2.0);
    }
}

/* Trial 0: the file's initial z0 with random rates; every other: a random
 * state. */
static void trial_state(const hymo_model *m, int trial, double *z, double *zd)
{
    if (trial == 0) {
        for (int j = 0; j < m->n_bodies; ++j) {
            z[j] = m->bodies[j].z0;
            zd[j] = urand(-2.0, 2.0);
        }
    } else {
        random_state(m, z, zd);
    }
}

/* ------------------------------------------------------------------ */
/* 1. M' and Q' against the brute-force matrices of SPEC §1.2           */

/* Evaluates M' (nb x nb) and Q' (nb) from the explicit 6Nb matrices. Also
 * returns a magnitude scale for Q' (sum of the sizes of its terms). */
static void brute_force(const hymo_model *m, const double *z, const double *zd, double *Mbf, double *Qbf,
                        double *qscale)
{
    int nb = m->n_bodies, N = 6 * nb;
    pose_t P;
    fk(m, z, &P);
    double *T = calloc((size_t)N * N, sizeof(double));
    double *Rd = calloc((size_t)N * nb, sizeof(double));
    double *Mbar = calloc((size_t)N * N, sizeof(double));
    double *Qbar = calloc((size_t)N, sizeof(double));
    double *TRd = calloc((size_t)N * nb, sizeof(double));
    double *Z = calloc((size_t)N, sizeof(double));
    double *dz = calloc((size_t)N, sizeof(double));  /* Rdot_d zd */
    double *Tdz = calloc((size_t)N, sizeof(double)); /* T Rdot_d zd */
    double *rhs = calloc((size_t)N, sizeof(double));
    double *tmp = calloc((size_t)N * nb, sizeof(double));
    assert_non_null(T);
    assert_non_null(tmp);
    /* path matrix: block (i, j) = I6 if joint j is on the path root..i */
    for (int i = 0; i < nb; ++i)
        for (int j = 0; j < nb; ++j)
            if (on_path(m, i, j))
                for (int r = 0; r < 6; ++r) T[(size_t)(6 * i + r) * N + 6 * j + r] = 1.0;
    /* R_d = blockdiag(b_j) */
    for (int j = 0; j < nb; ++j) {
        double b[6];
        if (m->bodies[j].joint_type == HYMO_JOINT_REVOLUTE) {
            cross3(P.o[j], P.u[j], b);
            memcpy(b + 3, P.u[j], 3 * sizeof(double));
        } else {
            memcpy(b, P.u[j], 3 * sizeof(double));
            b[3] = b[4] = b[5] = 0.0;
        }
        for (int r = 0; r < 6; ++r) Rd[(size_t)(6 * j + r) * nb + j] = b[r];
    }
    matmul(N, N, nb, T, Rd, TRd);
    matmul(N, nb, 1, TRd, zd, Z);
    /* Rdot_d zd: d_j from the parent's Z */
    for (int j = 0; j < nb; ++j) {
        int p = m->bodies[j].parent;
        double sp[3] = {0, 0, 0}, wp[3] = {0, 0, 0}, ud[3], *d = &dz[6 * j];
        if (p >= 0) {
            memcpy(sp, &Z[6 * p], sizeof sp);
            memcpy(wp, &Z[6 * p + 3], sizeof wp);
        }
        cross3(wp, P.u[j], ud);
        if (m->bodies[j].joint_type == HYMO_JOINT_REVOLUTE) {
            double rdot[3], t1[3], t2[3];
            cross3(wp, P.o[j], rdot);
            for (int k = 0; k < 3; ++k) rdot[k] += sp[k];
            cross3(rdot, P.u[j], t1);
            cross3(P.o[j], ud, t2);
            for (int k = 0; k < 3; ++k) {
                d[k] = (t1[k] + t2[k]) * zd[j];
                d[3 + k] = ud[k] * zd[j];
            }
        } else {
            for (int k = 0; k < 3; ++k) {
                d[k] = ud[k] * zd[j];
                d[3 + k] = 0.0;
            }
        }
    }
    matmul(N, N, 1, T, dz, Tdz);
    /* Mbar and Qbar per body */
    double qs = 0.0;
    for (int j = 0; j < nb; ++j) {
        double mass = m->bodies[j].mass, *g = P.g[j], *J = P.J[j];
        double gt[9], gg[9];
        skew(g, gt);
        matmul(3, 3, 3, gt, gt, gg);
        for (int r = 0; r < 3; ++r) {
            Mbar[(size_t)(6 * j + r) * N + 6 * j + r] = mass;
            for (int c = 0; c < 3; ++c) {
                Mbar[(size_t)(6 * j + r) * N + 6 * j + 3 + c] = -mass * gt[3 * r + c];
                Mbar[(size_t)(6 * j + 3 + r) * N + 6 * j + c] = mass * gt[3 * r + c];
                Mbar[(size_t)(6 * j + 3 + r) * N + 6 * j + 3 + c] = J[3 * r + c] - mass * gg[3 * r + c];
            }
        }
        const double *s = &Z[6 * j], *w = &Z[6 * j + 3];
        double gdot[3], wxgd[3], Jw[3], wxJw[3], f[3], gxf[3];
        cross3(w, g, gdot);
        for (int k = 0; k < 3; ++k) gdot[k] += s[k];
        cross3(w, gdot, wxgd);
        matmul(3, 3, 1, J, w, Jw);
        cross3(w, Jw, wxJw);
        for (int k = 0; k < 3; ++k) f[k] = mass * m->gravity[k] - mass * wxgd[k];
        cross3(g, f, gxf);
        for (int k = 0; k < 3; ++k) {
            Qbar[6 * j + k] = f[k];
            Qbar[6 * j + 3 + k] = -wxJw[k] + gxf[k];
        }
        /* sizes of the terms that are summed into Q' */
        double reach = 1.0 + norm3(g);
        qs += (mass * norm3(m->gravity) + mass * norm3(wxgd)) * reach + norm3(wxJw);
    }
    /* rhs = Qbar - Mbar T Rdot_d zd */
    double *MT = calloc((size_t)N, sizeof(double));
    matmul(N, N, 1, Mbar, Tdz, MT);
    for (int r = 0; r < N; ++r) rhs[r] = Qbar[r] - MT[r];
    qs += max_abs(N, MT) * (1.0 + max_abs(N, Rd));
    /* M' = (T R_d)^T Mbar (T R_d), Q' = (T R_d)^T rhs */
    matmul(N, N, nb, Mbar, TRd, tmp);
    matTmul(N, nb, nb, TRd, tmp, Mbf);
    matTmul(N, nb, 1, TRd, rhs, Qbf);
    *qscale = qs;
    free(MT);
    free(T);
    free(Rd);
    free(Mbar);
    free(Qbar);
    free(TRd);
    free(Z);
    free(dz);
    free(Tdz);
    free(rhs);
    free(tmp);
}

/* The library's M' and Q' (gravity only, no applied forces); also checked:
 * the residual path hymo_kin_inverse_dynamics. */
static void library_mq(const hymo_model *m, hymo_kin *kin, const double *z, const double *zd)
{
    hymo_kin_positions(kin, m, z);
    hymo_kin_velocities(kin, m, zd);
    hymo_kin_forces_begin(kin, m);
    hymo_kin_mass_and_forces(kin, m);
}

/* Tolerance (relative, 1e-10). Both sides evaluate the same algebra with
 * O(6 Nb) -term dot products of O(1..10 m) geometry; double rounding gives
 * |error| <~ 100 eps * (size of the largest summed term). In M' entries the
 * summed terms are at most m (|g| + |r|)^2 <= ~100 m L^2 with global
 * coordinates up to ~10 m, i.e. relative to max|M'| at most ~1e-12. For Q'
 * the scale is the sum of the sizes of the summed terms (gravity and
 * velocity forces times their lever arms, Mbar T Rdot_d zd), so a 1e-10
 * relative bound leaves two orders of margin; any wrong term (a missing
 * m w x sdot, a sign, a wrong d_j) is O(1) relative. */
static void check_brute_force_model(const hymo_model *m, int n_random)
{
    int nb = m->n_bodies;
    hymo_kin kin;
    hymo_error err;
    assert_int_equal(hymo_kin_init(&kin, &m->compiled->kin, &err), HYMO_OK);
    double z[MAXB], zd[MAXB], Mbf[MAXB * MAXB], Qbf[MAXB], qs;
    for (int trial = 0; trial <= n_random; ++trial) {
        trial_state(m, trial, z, zd);
        snprintf(context, sizeof context, "model %s, trial %d", m->name, trial);
        brute_force(m, z, zd, Mbf, Qbf, &qs);
        library_mq(m, &kin, z, zd);
        /* poses first: the library's and ours must agree (1e-13: a few ulps
         * of coordinates up to ~10 m) */
        pose_t P;
        fk(m, z, &P);
        for (int j = 0; j < nb; ++j)
            for (int k = 0; k < 3; ++k) {
                CHECK_CLOSE(kin.g[3 * j + k], P.g[j][k], 1e-13 * (1.0 + fabs(P.g[j][k])));
                CHECK_CLOSE(kin.o[3 * j + k], P.o[j][k], 1e-13 * (1.0 + fabs(P.o[j][k])));
            }
        double mscale = max_abs(nb * nb, Mbf);
        for (int i = 0; i < nb; ++i) {
            for (int j = 0; j < nb; ++j) CHECK_CLOSE(kin.M[i * nb + j], Mbf[i * nb + j], 1e-10 * mscale);
            CHECK_CLOSE(kin.Q[i], Qbf[i], 1e-10 * (qs + max_abs(nb, Qbf)));
        }
        /* the residual path (hymo_kin_inverse_dynamics, M' never formed)
         * against the brute-force M' zdd - Q' at random accelerations; same
         * scales as above, with |M' zdd| <= mscale nb max|zdd| */
        double zdd[MAXB], r[MAXB];
        for (int j = 0; j < nb; ++j) zdd[j] = urand(-5.0, 5.0);
        hymo_kin_inverse_dynamics(&kin, zdd, r);
        for (int i = 0; i < nb; ++i) {
            double s = -Qbf[i];
            for (int j = 0; j < nb; ++j) s += Mbf[i * nb + j] * zdd[j];
            CHECK_CLOSE(r[i], s, 1e-10 * (qs + max_abs(nb, Qbf) + 5.0 * nb * mscale));
        }
    }
    hymo_kin_free(&kin);
}

/* Runs check(model, n_states) on the seed models with distinct topologies
 * (four-bar, quick-return, crane2), the spatial tree and the planar model. */
static void for_all_dynamics_models(void (*check)(const hymo_model *, int), int n_states)
{
    const char *files[] = {"fourbar.yaml", "quickreturn.yaml", "crane2.yaml"};
    for (int f = 0; f < 3; ++f) {
        hymo_model *m = test_load_model(files[f]);
        check(m, n_states);
        hymo_model_free(m);
    }
    hymo_model *m = load_spatial(-1);
    check(m, n_states);
    hymo_model_free(m);
    m = test_load_text(planar_model, "<planar>");
    check(m, n_states);
    hymo_model_free(m);
}

static void test_mq_brute_force(void **state)
{
    (void)state;
    rng_seed(12345);
    for_all_dynamics_models(check_brute_force_model, 4);
}

/* ------------------------------------------------------------------ */
/* 2. M' and Q' against Lagrange's equations by finite differences      */

/* Velocity step of the pose differences: h |zd| <= 2e-6 * 4 (rates up to
 * ~4 inside the zd differences below). Centre-of-mass velocity error:
 * truncation (h|zd|)^2/6 |g'''| ~ 1e-11 * 10 m and rounding eps |g| / h ~
 * 1e-16 * 10 / 2e-6 ~ 5e-10 m/s, i.e. T is known to ~1e-10 relative. */
#define H_VEL 2e-6

/* T(z, zd) = sum 1/2 m |gdot|^2 + 1/2 w^T J w, with gdot and w from
 * central differences of the independent pose along zd. */
static double kinetic_fd(const hymo_model *m, const double *z, const double *zd)
{
    int nb = m->n_bodies;
    double zp[MAXB] = {0}, zm[MAXB] = {0};
    for (int j = 0; j < nb; ++j) {
        zp[j] = z[j] + H_VEL * zd[j];
        zm[j] = z[j] - H_VEL * zd[j];
    }
    pose_t P0, Pp, Pm;
    fk(m, z, &P0);
    fk(m, zp, &Pp);
    fk(m, zm, &Pm);
    double T = 0.0;
    for (int j = 0; j < nb; ++j) {
        double gd[3], Rd[9], W[9], w[3], Jw[3];
        for (int k = 0; k < 3; ++k) gd[k] = (Pp.g[j][k] - Pm.g[j][k]) / (2.0 * H_VEL);
        for (int k = 0; k < 9; ++k) Rd[k] = (Pp.R[j][k] - Pm.R[j][k]) / (2.0 * H_VEL);
        /* W = Rdot R^T = [w]x */
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) {
                double s = 0.0;
                for (int l = 0; l < 3; ++l) s += Rd[3 * r + l] * P0.R[j][3 * c + l];
                W[3 * r + c] = s;
            }
        w[0] = 0.5 * (W[7] - W[5]);
        w[1] = 0.5 * (W[2] - W[6]);
        w[2] = 0.5 * (W[3] - W[1]);
        matmul(3, 3, 1, P0.J[j], w, Jw);
        T += 0.5 * m->bodies[j].mass * dot3(gd, gd) + 0.5 * dot3(w, Jw);
    }
    return T;
}

static double potential(const hymo_model *m, const double *z)
{
    pose_t P;
    fk(m, z, &P);
    double V = 0.0;
    for (int j = 0; j < m->n_bodies; ++j) V -= m->bodies[j].mass * dot3(m->gravity, P.g[j]);
    return V;
}

/* p = dT/dzd by central differences with step 1 (rad/s): T is quadratic in
 * zd, so the central difference is exact up to rounding (and the O(h^2 zd^4)
 * perturbation of the pose differences, ~1e-11 relative). */
static void momentum_fd(const hymo_model *m, const double *z, const double *zd, double *p)
{
    int nb = m->n_bodies;
    double v[MAXB];
    for (int i = 0; i < nb; ++i) {
        memcpy(v, zd, (size_t)nb * sizeof(double));
        v[i] = zd[i] + 1.0;
        double Tp = kinetic_fd(m, z, v);
        v[i] = zd[i] - 1.0;
        double Tm = kinetic_fd(m, z, v);
        p[i] = (Tp - Tm) / 2.0;
    }
}

static void check_lagrange_model(const hymo_model *m, int n_random)
{
    int nb = m->n_bodies;
    hymo_kin kin;
    hymo_error err;
    assert_int_equal(hymo_kin_init(&kin, &m->compiled->kin, &err), HYMO_OK);
    double z[MAXB], zd[MAXB], v[MAXB], w[MAXB];
    for (int trial = 0; trial <= n_random; ++trial) {
        trial_state(m, trial, z, zd);
        snprintf(context, sizeof context, "model %s, trial %d", m->name, trial);
        library_mq(m, &kin, z, zd);

        /* kinetic energy: the library's T against 1/2 zd^T M' zd (both the
         * library's; ~nb^2 rounding of O(T) terms -> 1e-12 relative) */
        double Tq = 0.0;
        for (int i = 0; i < nb; ++i)
            for (int j = 0; j < nb; ++j) Tq += 0.5 * zd[i] * kin.M[i * nb + j] * zd[j];
        double Tlib = hymo_kin_kinetic_energy(&kin, m);
        CHECK_CLOSE(Tlib, Tq, 1e-12 * fabs(Tq));
        /* and against the independent T (velocity differences: ~1e-9) */
        CHECK_CLOSE(Tlib, kinetic_fd(m, z, zd), 1e-8 * fabs(Tq) + 1e-12);
        /* potential energy against the independent V (rounding only) */
        double Vz = potential(m, z), Vscale = 0.0;
        {
            pose_t P;
            fk(m, z, &P);
            for (int j = 0; j < nb; ++j) Vscale += m->bodies[j].mass * norm3(m->gravity) * (1.0 + norm3(P.g[j]));
        }
        CHECK_CLOSE(hymo_kin_potential_energy(&kin, m), Vz, 1e-13 * Vscale);

        /* M'_ij = d2T / dzd_i dzd_j, step 1 rad/s (exact for a quadratic).
         * Error: T-noise ~1e-10 * T(|zd| + 1)^2 ~ 1e-9 max|M'| / 1^2;
         * tolerance 1e-7 relative to max|M'|. */
        double Mfd[MAXB * MAXB];
        for (int i = 0; i < nb; ++i)
            for (int j = 0; j < nb; ++j) {
                double Tpp, Tpm, Tmp, Tmm;
                memcpy(v, zd, (size_t)nb * sizeof(double));
                v[i] += 1.0;
                v[j] += 1.0;
                Tpp = kinetic_fd(m, z, v);
                memcpy(v, zd, (size_t)nb * sizeof(double));
                v[i] += 1.0;
                v[j] -= 1.0;
                Tpm = kinetic_fd(m, z, v);
                memcpy(v, zd, (size_t)nb * sizeof(double));
                v[i] -= 1.0;
                v[j] += 1.0;
                Tmp = kinetic_fd(m, z, v);
                memcpy(v, zd, (size_t)nb * sizeof(double));
                v[i] -= 1.0;
                v[j] -= 1.0;
                Tmm = kinetic_fd(m, z, v);
                Mfd[i * nb + j] = (Tpp - Tpm - Tmp + Tmm) / 4.0;
            }
        double mscale = max_abs(nb * nb, kin.M);
        for (int k = 0; k < nb * nb; ++k) CHECK_CLOSE(kin.M[k], Mfd[k], 1e-7 * mscale);

        /* Q' = dT/dz - dV/dz - (d2T/dzd dz) zd   (Lagrange, no applied forces)
         *  - dV/dz: central, step 1e-5: truncation 1e-10/6 V''', rounding
         *    eps V / 1e-5 ~ 1e-11 relative;
         *  - dT/dz: central, step eta = 1e-3: T-noise 1e-10 T / 1e-3 = 1e-7 T,
         *    truncation eta^2/6 T''' ~ 2e-7 T;
         *  - (d2T/dzd dz) zd = d/dt p along zd: central difference of p along
         *    zd with eta |zd| <= 5e-4: p-noise ~1e-10 * 9 max|M'| / 5e-4 ~ 2e-6
         *    max|M'| |zd|, truncation (5e-4)^2/6 p''' ~ 1e-7.
         * The sum is ~3e-6 of S = max_i (|dT/dz_i| + |dV/dz_i| + |(..)_i|) +
         * max|M'| |zd|^2; tolerance 1e-5 S. A missing m w x sdot term or a
         * wrong d_j is an O(1) relative error of the velocity part. */
        double dT[MAXB], dV[MAXB], dP[MAXB], pp[MAXB], pm[MAXB];
        for (int k = 0; k < nb; ++k) {
            memcpy(w, z, (size_t)nb * sizeof(double));
            w[k] = z[k] + 1e-3;
            double Tp = kinetic_fd(m, w, zd);
            w[k] = z[k] - 1e-3;
            double Tm = kinetic_fd(m, w, zd);
            dT[k] = (Tp - Tm) / 2e-3;
            w[k] = z[k] + 1e-5;
            double Vp = potential(m, w);
            w[k] = z[k] - 1e-5;
            double Vm = potential(m, w);
            dV[k] = (Vp - Vm) / 2e-5;
        }
        double eta = 5e-4 / fmax(1e-3, max_abs(nb, zd));
        for (int k = 0; k < nb; ++k) w[k] = z[k] + eta * zd[k];
        momentum_fd(m, w, zd, pp);
        for (int k = 0; k < nb; ++k) w[k] = z[k] - eta * zd[k];
        momentum_fd(m, w, zd, pm);
        double S = 0.0, zmax = max_abs(nb, zd);
        for (int k = 0; k < nb; ++k) {
            dP[k] = (pp[k] - pm[k]) / (2.0 * eta);
            S = fmax(S, fabs(dT[k]) + fabs(dV[k]) + fabs(dP[k]));
        }
        S += mscale * zmax * zmax;
        for (int k = 0; k < nb; ++k) {
            double Qlag = dT[k] - dV[k] - dP[k];
            CHECK_CLOSE(kin.Q[k], Qlag, 1e-5 * S);
        }
    }
    hymo_kin_free(&kin);
}

static void test_mq_lagrange(void **state)
{
    (void)state;
    rng_seed(777);
    for_all_dynamics_models(check_lagrange_model, 3);
}

/* ------------------------------------------------------------------ */
/* 3. Phi_z and gamma against finite differences                       */

static void eval_phi(const hymo_model *m, hymo_kin *kin, const hymo_constraints *con, const double *z,
                     const double *zd, double *phi, double *phi_z, double *gamma)
{
    hymo_kin_positions(kin, m, z);
    if (zd) hymo_kin_velocities(kin, m, zd);
    if (!phi_z) {
        hymo_constraints_eval(con, kin, phi, NULL, gamma);
        return;
    }
    double vals[16 * MAXB]; /* Phi_z's non-zeros, then the dense matrix (zeros outside the tree's pattern) */
    hymo_constraints_eval(con, kin, phi, vals, gamma);
    const hymo_csr a = hymo_constraints_csr(con, vals);
    hymo_csr_dense(&a, phi_z);
}

/* Tolerances (geometry up to ~10 m, rates |zd| <= 2):
 *  - Phi_z: central difference step 1e-6: truncation 1e-12/6 |Phi'''| (~L),
 *    rounding eps |r| / 1e-6 ~ 2e-9; tolerance 1e-8 * max(1, max|Phi_z|).
 *  - gamma = (d/dt Phi_z) zd: central difference of the analytic Phi_z zd
 *    along zd, eta |zd| = 1e-5: rounding eps 10 / 1e-5 * |zd| ~ 4e-10,
 *    truncation (1e-5)^2/6 |Phi''''| |zd|... ~ 1e-10 * L; tolerance
 *    1e-7 * max(1, max|gamma|).
 *  - gamma also equals the second derivative of Phi along zd, d2/dt2
 *    Phi(z + t zd) = zd^T Phi_zz zd: second central difference of Phi alone,
 *    h |zd| = 1e-4: rounding 4 eps |Phi| / 1e-8 ~ 1e-6 (|Phi| <= ~10 away
 *    from assembly), truncation 1e-8/12 |Phi''''| ~ 1e-8; tolerance
 *    2e-5 * max(1, max|gamma|). */
static void check_constraints_model(const hymo_model *m, int n_random)
{
    int nb = m->n_bodies;
    hymo_kin kin;
    hymo_constraints con;
    hymo_error err;
    assert_int_equal(hymo_kin_init(&kin, &m->compiled->kin, &err), HYMO_OK);
    assert_int_equal(hymo_constraints_init(&con, m, &err), HYMO_OK);
    int mc = con.m;
    assert_true(mc > 0 && mc <= 16);
    double z[MAXB], zd[MAXB], w[MAXB];
    double phi[16], phi_z[16 * MAXB], gamma[16], php[16], phm[16], fd[16 * MAXB];
    double jp[16 * MAXB], jm[16 * MAXB];
    for (int trial = 0; trial <= n_random; ++trial) {
        trial_state(m, trial, z, zd);
        snprintf(context, sizeof context, "model %s (%s), trial %d", m->name, m->n_cuts ? m->cuts[0].name : "",
                 trial);
        eval_phi(m, &kin, &con, z, zd, phi, phi_z, gamma);
        double zmax = max_abs(nb, zd);
        /* Phi_z */
        for (int k = 0; k < nb; ++k) {
            memcpy(w, z, (size_t)nb * sizeof(double));
            w[k] = z[k] + 1e-6;
            eval_phi(m, &kin, &con, w, NULL, php, NULL, NULL);
            w[k] = z[k] - 1e-6;
            eval_phi(m, &kin, &con, w, NULL, phm, NULL, NULL);
            for (int r = 0; r < mc; ++r) fd[r * nb + k] = (php[r] - phm[r]) / 2e-6;
        }
        double jscale = fmax(1.0, max_abs(mc * nb, phi_z));
        for (int i = 0; i < mc * nb; ++i) CHECK_CLOSE(phi_z[i], fd[i], 1e-8 * jscale);
        /* gamma vs d/dt (Phi_z zd) */
        double eta = 1e-5 / fmax(1e-3, zmax);
        for (int k = 0; k < nb; ++k) w[k] = z[k] + eta * zd[k];
        eval_phi(m, &kin, &con, w, NULL, php, jp, NULL);
        for (int k = 0; k < nb; ++k) w[k] = z[k] - eta * zd[k];
        eval_phi(m, &kin, &con, w, NULL, phm, jm, NULL);
        double gscale = fmax(1.0, max_abs(mc, gamma));
        for (int r = 0; r < mc; ++r) {
            double a = 0.0, b = 0.0;
            for (int k = 0; k < nb; ++k) {
                a += jp[r * nb + k] * zd[k];
                b += jm[r * nb + k] * zd[k];
            }
            CHECK_CLOSE(gamma[r], (a - b) / (2.0 * eta), 1e-7 * gscale);
        }
        /* gamma vs the second difference of Phi along zd */
        double h = 1e-4 / fmax(1e-3, zmax);
        for (int k = 0; k < nb; ++k) w[k] = z[k] + h * zd[k];
        eval_phi(m, &kin, &con, w, NULL, php, NULL, NULL);
        for (int k = 0; k < nb; ++k) w[k] = z[k] - h * zd[k];
        eval_phi(m, &kin, &con, w, NULL, phm, NULL, NULL);
        for (int r = 0; r < mc; ++r) CHECK_CLOSE(gamma[r], (php[r] - 2.0 * phi[r] + phm[r]) / (h * h), 2e-5 * gscale);
    }
    hymo_constraints_free(&con);
    hymo_kin_free(&kin);
}

/* Phi of the planar seed cut joints against the SPEC §1.3 definitions
 * evaluated with the independent kinematics (rounding only: 1e-12). */
static void check_planar_phi_values(const hymo_model *m)
{
    hymo_kin kin;
    hymo_constraints con;
    hymo_error err;
    assert_int_equal(hymo_kin_init(&kin, &m->compiled->kin, &err), HYMO_OK);
    assert_int_equal(hymo_constraints_init(&con, m, &err), HYMO_OK);
    double z[MAXB], phi[16];
    snprintf(context, sizeof context, "model %s, Phi values", m->name);
    for (int trial = 0; trial < 4; ++trial) {
        random_state(m, z, NULL);
        eval_phi(m, &kin, &con, z, NULL, phi, NULL, NULL);
        pose_t P;
        fk(m, z, &P);
        for (int c = 0; c < m->n_cuts; ++c) {
            const hymo_cut_joint *cj = &m->cuts[c];
            int r0 = con.cut_first[c];
            double ra[3], rb[3];
            fk_point(&P, cj->body_a, cj->point_a, ra);
            fk_point(&P, cj->body_b, cj->point_b, rb);
            if (cj->type == HYMO_CUT_PLANAR_REVOLUTE) {
                CHECK_CLOSE(phi[r0], ra[0] - rb[0], 1e-12);
                CHECK_CLOSE(phi[r0 + 1], ra[1] - rb[1], 1e-12);
            } else if (cj->type == HYMO_CUT_PLANAR_TRANSLATIONAL) {
                /* n_b = R_b (z x e) ; angle row: the library uses
                 * sin(theta_a - theta_b - theta_0), which has the SPEC's
                 * theta_a - theta_b - theta_0 as its zero set near 0 and the
                 * same Jacobian on the constraint manifold */
                double e[3], n[3], ez[3] = {0, 0, 1}, nl[3];
                memcpy(e, cj->axis_b, sizeof e);
                cross3(ez, e, nl);
                if (cj->body_b >= 0)
                    matmul(3, 3, 1, P.R[cj->body_b], nl, n);
                else
                    memcpy(n, nl, sizeof n);
                double d[3] = {ra[0] - rb[0], ra[1] - rb[1], ra[2] - rb[2]};
                CHECK_CLOSE(phi[r0], dot3(d, n) / norm3(n), 1e-12);
                double ta = cj->body_a >= 0 ? atan2(P.R[cj->body_a][3], P.R[cj->body_a][0]) : 0.0;
                double tb = cj->body_b >= 0 ? atan2(P.R[cj->body_b][3], P.R[cj->body_b][0]) : 0.0;
                CHECK_CLOSE(phi[r0 + 1], sin(ta - tb - cj->angle0), 1e-12);
            }
        }
    }
    hymo_constraints_free(&con);
    hymo_kin_free(&kin);
}

static void test_constraint_jacobians(void **state)
{
    (void)state;
    rng_seed(4242);
    hymo_model *m = test_load_model("fourbar.yaml");
    assert_int_equal(m->cuts[0].type, HYMO_CUT_PLANAR_REVOLUTE);
    check_constraints_model(m, 5);
    check_planar_phi_values(m);
    hymo_model_free(m);
    m = test_load_model("quickreturn.yaml");
    assert_int_equal(m->cuts[0].type, HYMO_CUT_PLANAR_TRANSLATIONAL);
    check_constraints_model(m, 5);
    check_planar_phi_values(m);
    hymo_model_free(m);
    m = test_load_text(planar_model, "<planar>");
    check_constraints_model(m, 5);
    check_planar_phi_values(m);
    hymo_model_free(m);
    /* spatial cut joints (spherical, revolute, translational, planar cuts on
     * a 3-D tree; cut against a moving body and against ground) */
    for (int v = 0; v < N_SPATIAL_CUTS; ++v) {
        m = load_spatial(v);
        check_constraints_model(m, 3);
        hymo_model_free(m);
    }
}

/* ------------------------------------------------------------------ */
/* 4. Orifice, valve and throttle flows are continuous                   */


/* B_e / V of a volume from hand-written sub-volumes (SPEC §2):
 * B_e = (1/B_oil + sum V_s / (V B_s))^-1 */
static double be_over_v(double B_oil, int n, const double *Vs, const double *Bs)
{
    double V = 0.0, c = 0.0;
    for (int i = 0; i < n; ++i) V += Vs[i];
    for (int i = 0; i < n; ++i) c += Vs[i] / Bs[i];
    return 1.0 / (1.0 / B_oil + c / V) / V;
}

static void test_flow_continuity(void **state)
{
    (void)state;
    /* orifice law at the laminar limit: g jumps by at most the slope times
     * the step: |dg| <= (1/sqrt(p_tr)) * 2e-12 p_tr = 2e-12 sqrt(p_tr),
     * plus rounding (a few ulps of sqrt(p_tr)); tolerance 3e-12 sqrt(p_tr) */
    const double ptr = 2e5, sq = sqrt(ptr);
    CHECK_CLOSE(hymo_orifice_g(ptr, ptr), sq, 4 * EPS * sq);
    CHECK_CLOSE(hymo_orifice_g(-ptr, ptr), -sq, 4 * EPS * sq);
    CHECK_CLOSE(hymo_orifice_g(ptr * (1 + 1e-12), ptr), hymo_orifice_g(ptr * (1 - 1e-12), ptr), 3e-12 * sq);
    CHECK_CLOSE(hymo_orifice_g(-ptr * (1 + 1e-12), ptr), hymo_orifice_g(-ptr * (1 - 1e-12), ptr), 3e-12 * sq);
    assert_true(hymo_orifice_g(0.0, ptr) == 0.0);
    /* values on both sides of the limit against the SPEC formula (a
     * correctly rounded sqrt or division: 2 eps relative) */
    const double xs[] = {0.3, 0.999999, 1 - 1e-12, 1.0, 1 + 1e-12, 1.000001, 1.005, 1.01, 2.0, 17.5, 38.0};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; ++i)
        for (int sg = -1; sg <= 1; sg += 2) {
            double dp = sg * xs[i] * ptr;
            double expect = fabs(dp) >= ptr ? sg * sqrt(fabs(dp)) : dp / sq;
            CHECK_CLOSE(hymo_orifice_g(dp, ptr), expect, 2 * EPS * fabs(expect));
        }
    CHECK_CLOSE(hymo_orifice_g(1e5, ptr), 1e5 / sq, 4 * EPS * 1e5 / sq);          /* laminar */
    CHECK_CLOSE(hymo_orifice_g(3.5e6, ptr), sqrt(3.5e6), 4 * EPS * sqrt(3.5e6)); /* turbulent */
    CHECK_CLOSE(hymo_orifice_g(-3.5e6, ptr), -sqrt(3.5e6), 4 * EPS * sqrt(3.5e6));

    hymo_model *m = test_load_model("fourbar.yaml");
    assert_int_equal(m->n_cylinders, 1);
    hymo_circuit circ;
    hymo_error err;
    double s0 = sqrt(2.0);
    assert_int_equal(hymo_circuit_init(&circ, m, &s0, &err), HYMO_OK);
    const int i1 = test_volume_state(m, "V1"), i2 = test_volume_state(m, "V2"), i3 = test_volume_state(m, "V3");
    const double pP = 7.6e6, pT = 1e5, Cv = 2.138e-8; /* SPEC §5.1 */
    CHECK_CLOSE(m->nodes[test_node_index(m, "pump")].pressure, pP, 0.0);
    CHECK_CLOSE(m->nodes[test_node_index(m, "tank")].pressure, pT, 0.0);
    CHECK_CLOSE(m->fluid.p_transition, ptr, 0.0);
    const double Ap = 0.25 * PI * 0.08 * 0.08, Ar = 0.25 * PI * (0.08 * 0.08 - 0.035 * 0.035);
    /* B_e / V at s = s0 (l_pist = s0 - 1.1, l_rod = 1.1 - l_pist) */
    double lp = s0 - 1.1, lr = 1.1 - lp;
    double k[3];
    {
        double V1[1] = {4.71e-5}, B1[1] = {5.5e8};
        double V2[2] = {3.14e-5, Ap * lp}, B2[2] = {5.5e8, 3.15e10};
        double V3[2] = {7.85e-5, Ar * lr}, B3[2] = {5.5e8, 3.15e10};
        k[i1] = be_over_v(1.5e9, 1, V1, B1);
        k[i2] = be_over_v(1.5e9, 2, V2, B2);
        k[i3] = be_over_v(1.5e9, 2, V3, B3);
    }
    double s = s0, sd = 0.0, uref = 0.0, p[3], pd[3], pd2[3], ud;

    /* hand-computed flows (SPEC §2): U = 10 V, 35 bar across each edge.
     * Tolerance: a few roundings of the products, 1e-13 relative. */
    {
        double U = 10.0, q = Cv * U * sqrt(3.5e6);
        p[i1] = pP - 3.5e6;
        p[i2] = p[i1];
        p[i3] = pT + 3.5e6;
        assert_int_equal(hymo_circuit_eval(&circ, m, &s, &sd, p, &U, &uref, pd, &ud, NULL), 0);
        CHECK_CLOSE(pd[i1], k[i1] * q, 1e-13 * k[i1] * q);  /* P -> A into V1 */
        CHECK_CLOSE(pd[i2], 0.0, 0.0);                      /* no throttle flow, no motion */
        CHECK_CLOSE(pd[i3], -k[i3] * q, 1e-13 * k[i3] * q); /* B -> T out of V3 */
        /* spool: Udot = (U_ref - U) / tau, tau = 1 / (2 pi 35 Hz) */
        CHECK_CLOSE(ud, (0.0 - U) * 2.0 * PI * 35.0, 1e-12 * U * 2.0 * PI * 35.0);
        U = -10.0;
        p[i1] = pT + 3.5e6;
        p[i2] = p[i1];
        p[i3] = pP - 3.5e6;
        assert_int_equal(hymo_circuit_eval(&circ, m, &s, &sd, p, &U, &uref, pd, NULL, NULL), 0);
        CHECK_CLOSE(pd[i1], -k[i1] * q, 1e-13 * k[i1] * q); /* A -> T out of V1 */
        CHECK_CLOSE(pd[i3], k[i3] * q, 1e-13 * k[i3] * q);  /* P -> B into V3 */
        /* throttle: Q = C_d A_t sqrt(2 / rho) g(p1 - p2), 35 bar */
        double Ct = 0.8 * 2.83e-5 * sqrt(2.0 / 850.0), qt = Ct * sqrt(3.5e6);
        U = 0.0;
        p[i1] = 6e6;
        p[i2] = 6e6 - 3.5e6;
        assert_int_equal(hymo_circuit_eval(&circ, m, &s, &sd, p, &U, &uref, pd, NULL, NULL), 0);
        CHECK_CLOSE(pd[i1], -k[i1] * qt, 1e-13 * k[i1] * qt);
        CHECK_CLOSE(pd[i2], k[i2] * qt, 1e-13 * k[i2] * qt);
    }

    /* continuity as U crosses 0: pdot(0) = 0 exactly, and on each side
     * pdot is linear in U, so pdot(+-d) = d * pdot(+-1) up to rounding
     * (1e-14 relative); both one-sided limits are therefore 0. */
    {
        p[0] = p[1] = p[2] = 0.0;
        p[i1] = 5e6;
        p[i2] = 5e6;
        p[i3] = 3.5e6;
        double U = 0.0, one = 1.0, mone = -1.0, pd1[3], pdm1[3];
        assert_int_equal(hymo_circuit_eval(&circ, m, &s, &sd, p, &U, &uref, pd, NULL, NULL), 0);
        for (int i = 0; i < 3; ++i) assert_true(pd[i] == 0.0);
        hymo_circuit_eval(&circ, m, &s, &sd, p, &one, &uref, pd1, NULL, NULL);
        hymo_circuit_eval(&circ, m, &s, &sd, p, &mone, &uref, pdm1, NULL, NULL);
        assert_true(pd1[i1] > 0.0 && pd1[i3] < 0.0);   /* U > 0: fills A, drains B */
        assert_true(pdm1[i1] < 0.0 && pdm1[i3] > 0.0); /* U < 0: drains A, fills B */
        const double steps[] = {1e-3, 1e-6, 1e-9, 1e-12};
        for (int t = 0; t < 4; ++t) {
            double d = steps[t], md = -d;
            hymo_circuit_eval(&circ, m, &s, &sd, p, &d, &uref, pd, NULL, NULL);
            hymo_circuit_eval(&circ, m, &s, &sd, p, &md, &uref, pd2, NULL, NULL);
            for (int i = 0; i < 3; ++i) {
                CHECK_CLOSE(pd[i], d * pd1[i], 1e-14 * fabs(d * pd1[i]));
                CHECK_CLOSE(pd2[i], d * pdm1[i], 1e-14 * fabs(d * pdm1[i]));
                CHECK_CLOSE(pd[i], pd2[i], d * (fabs(pd1[i]) + fabs(pdm1[i])) * (1 + 1e-9));
            }
        }
    }

    /* continuity as an edge's pressure drop crosses +-p_tr. The varied
     * pressure x is placed at x0 + sgn * p_tr (1 +- e). g has slope at most
     * 1/sqrt(p_tr) (laminar side; 1/(2 sqrt|dp|) on the turbulent side), so
     * |pdot(+) - pdot(-)| <= k C / sqrt(p_tr) |dp(+) - dp(-)| + rounding
     * (8 eps |pdot|). A jump would be O(1) relative (e.g. ~|pdot| for a
     * wrong laminar scaling) and fails already at e = 1e-4. */
    {
        typedef struct {
            double U;
            int varied;      /* state index varied */
            int follow2;     /* keep p2 = p1 (no throttle flow) */
            double x0, sgn;  /* varied = x0 + sgn p_tr (1 +- e) */
            int monitor;     /* state whose pdot is compared */
            double C;        /* flow coefficient of the edge */
        } edge_case;
        const double Ct = 0.8 * 2.83e-5 * sqrt(2.0 / 850.0);
        const edge_case cases[] = {
            {10.0, i1, 1, pP, -1.0, i1, 10.0 * Cv},   /* P -> A, forward      */
            {10.0, i1, 1, pP, +1.0, i1, 10.0 * Cv},   /* P -> A, reverse      */
            {10.0, i3, 1, pT, +1.0, i3, 10.0 * Cv},   /* B -> T, forward      */
            {-10.0, i1, 1, pT, +1.0, i1, 10.0 * Cv},  /* A -> T, forward      */
            {-10.0, i3, 1, pP, -1.0, i3, 10.0 * Cv},  /* P -> B, forward      */
            {-10.0, i3, 1, pP, +1.0, i3, 10.0 * Cv},  /* P -> B, reverse      */
            {0.0, i1, 0, 5e6, +1.0, i1, Ct},          /* throttle V1 -> V2    */
            {0.0, i1, 0, 5e6, -1.0, i1, Ct},          /* throttle V2 -> V1    */
            {0.0, i1, 0, 5e6, +1.0, i2, Ct},          /* throttle, seen in V2 */
        };
        const double es[] = {1e-4, 1e-8, 1e-12};
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
            const edge_case *ec = &cases[c];
            for (int t = 0; t < 3; ++t) {
                double pa[3], pb[3], U = ec->U;
                for (int side = 0; side < 2; ++side) {
                    double *q = side ? pb : pa;
                    q[i1] = 5e6;
                    q[i2] = 5e6;
                    q[i3] = 3.5e6;
                    q[ec->varied] = ec->x0 + ec->sgn * ptr * (side ? 1.0 - es[t] : 1.0 + es[t]);
                    if (ec->follow2 && ec->varied == i1) q[i2] = q[i1];
                }
                hymo_circuit_eval(&circ, m, &s, &sd, pa, &U, &uref, pd, NULL, NULL);
                hymo_circuit_eval(&circ, m, &s, &sd, pb, &U, &uref, pd2, NULL, NULL);
                double ddp = fabs(pa[ec->varied] - pb[ec->varied]);
                double bound = k[ec->monitor] * ec->C / sqrt(ptr) * ddp +
                               8 * EPS * fmax(fabs(pd[ec->monitor]), fabs(pd2[ec->monitor]));
                CHECK_CLOSE(pd[ec->monitor], pd2[ec->monitor], bound);
                /* and the step is not trivially zero: the flow is a real one */
                assert_true(fabs(pd[ec->monitor]) > 0.5 * k[ec->monitor] * ec->C * sq);
            }
        }
    }
    hymo_circuit_free(&circ);
    hymo_model_free(m);
}

/* ------------------------------------------------------------------ */
/* 5. Static start                                                      */

/* Tangent basis N (nz x ni) of Phi_z (m x nz) by Gauss-Jordan elimination
 * with partial pivoting on columns; returns ni. */
static int null_basis(int mrows, int nz, const double *A_in, double *N)
{
    double A[16 * MAXB];
    int pivcol[16], isfree[MAXB];
    memcpy(A, A_in, (size_t)mrows * nz * sizeof(double));
    for (int j = 0; j < nz; ++j) isfree[j] = 1;
    int r = 0;
    for (int c = 0; c < nz && r < mrows; ++c) {
        int best = r;
        for (int i = r + 1; i < mrows; ++i)
            if (fabs(A[i * nz + c]) > fabs(A[best * nz + c])) best = i;
        if (fabs(A[best * nz + c]) < 1e-9) continue;
        for (int j = 0; j < nz; ++j) {
            double t = A[r * nz + j];
            A[r * nz + j] = A[best * nz + j];
            A[best * nz + j] = t;
        }
        double pv = A[r * nz + c];
        for (int j = 0; j < nz; ++j) A[r * nz + j] /= pv;
        for (int i = 0; i < mrows; ++i) {
            if (i == r) continue;
            double f = A[i * nz + c];
            for (int j = 0; j < nz; ++j) A[i * nz + j] -= f * A[r * nz + j];
        }
        pivcol[r] = c;
        isfree[c] = 0;
        ++r;
    }
    int ni = 0;
    for (int f = 0; f < nz; ++f) {
        if (!isfree[f]) continue;
        for (int j = 0; j < nz; ++j) N[j * nz + ni] = 0.0;
        N[f * nz + ni] = 1.0;
        for (int i = 0; i < r; ++i) N[pivcol[i] * nz + ni] = -A[i * nz + f];
        ++ni;
    }
    return ni;
}

static double actuator_length_fk(const hymo_model *m, int a, const double *z)
{
    pose_t P;
    fk(m, z, &P);
    const hymo_cylinder *cy = &m->cylinders[a];
    double rb[3], rr[3], d[3];
    fk_point(&P, m->points[cy->point_base].body, m->points[cy->point_base].r, rb);
    fk_point(&P, m->points[cy->point_rod].body, m->points[cy->point_rod].r, rr);
    for (int k = 0; k < 3; ++k) d[k] = rr[k] - rb[k];
    return norm3(d);
}

/* Static-equilibrium actuator forces by virtual work on the constraint
 * manifold: N^T grad V = N^T G^T F (G = ds/dz), least squares (na <= 2).
 * Gradients by central differences of the independent kinematics, step
 * 1e-6: relative error ~ eps / 1e-6 + 1e-12 ~ 1e-10. */
static void static_forces_virtual_work(const hymo_model *m, const double *z, const double *phi_z, int mrows,
                                       double *F)
{
    int nz = m->n_bodies, na = m->n_cylinders;
    double N[MAXB * MAXB], gV[MAXB], G[2][MAXB], w[MAXB];
    int ni = null_basis(mrows, nz, phi_z, N);
    assert_true(na >= 1 && na <= 2 && ni >= na);
    for (int k = 0; k < nz; ++k) {
        memcpy(w, z, (size_t)nz * sizeof(double));
        w[k] = z[k] + 1e-6;
        double Vp = potential(m, w), sp[2];
        for (int a = 0; a < na; ++a) sp[a] = actuator_length_fk(m, a, w);
        w[k] = z[k] - 1e-6;
        double Vm = potential(m, w);
        gV[k] = (Vp - Vm) / 2e-6;
        for (int a = 0; a < na; ++a) G[a][k] = (sp[a] - actuator_length_fk(m, a, w)) / 2e-6;
    }
    /* A = N^T G^T (ni x na), b = N^T gV */
    double A[MAXB][2], b[MAXB];
    for (int i = 0; i < ni; ++i) {
        b[i] = 0.0;
        for (int k = 0; k < nz; ++k) b[i] += N[k * nz + i] * gV[k];
        for (int a = 0; a < na; ++a) {
            A[i][a] = 0.0;
            for (int k = 0; k < nz; ++k) A[i][a] += N[k * nz + i] * G[a][k];
        }
    }
    double AtA[2][2] = {{0, 0}, {0, 0}}, Atb[2] = {0, 0};
    for (int i = 0; i < ni; ++i)
        for (int a = 0; a < na; ++a) {
            Atb[a] += A[i][a] * b[i];
            for (int c = 0; c < na; ++c) AtA[a][c] += A[i][a] * A[i][c];
        }
    if (na == 1) {
        F[0] = Atb[0] / AtA[0][0];
    } else {
        double det = AtA[0][0] * AtA[1][1] - AtA[0][1] * AtA[1][0];
        F[0] = (AtA[1][1] * Atb[0] - AtA[0][1] * Atb[1]) / det;
        F[1] = (AtA[0][0] * Atb[1] - AtA[1][0] * Atb[0]) / det;
    }
    /* the equilibrium must be exact (no unbalanced direction) */
    for (int i = 0; i < ni; ++i) {
        double r = b[i];
        for (int a = 0; a < na; ++a) r -= A[i][a] * F[a];
        CHECK_CLOSE(r, 0.0, 1e-8 * (fabs(b[i]) + max_abs(ni, b)));
    }
}

static void test_static_start(void **state)
{
    (void)state;
    const char *files[] = {"fourbar.yaml", "quickreturn.yaml", "crane1.yaml", "crane2.yaml"};
    for (int f = 0; f < 4; ++f) {
        hymo_model *m = test_load_model(files[f]);
        int nz = m->n_bodies;
        double z_ds[MAXB], p_ds[8];
        for (int form = 0; form < 2; ++form) {
            snprintf(context, sizeof context, "model %s, %s", m->name, form ? "penalty" : "double-step");
            hymo_run_options opt;
            hymo_run_options_default(&opt, m);
            opt.formulation = form ? HYMO_FORMULATION_PENALTY : HYMO_FORMULATION_DOUBLE_STEP;
            hymo_sim *sim = NULL;
            hymo_error err;
            hymo_error_clear(&err);
            if (hymo_sim_create(m, &opt, &sim, &err) != HYMO_OK) fail_msg("%s: %s", files[f], err.message);
            const double *z = hymo_sim_z(sim), *zd = hymo_sim_zd(sim), *zdd = hymo_sim_zdd(sim);
            const double *p = hymo_sim_p(sim), *pd = hymo_sim_pd(sim), *u = hymo_sim_u(sim);
            int np = hymo_sim_np(sim), na = hymo_sim_na(sim);
            assert_int_equal(nz, hymo_sim_nz(sim));
            assert_true(np <= 8);
            /* zdd: the actuator forces balance gravity exactly up to rounding
             * (force balance residual ~ eps * m g L ~ 1e-12 N m, pressures
             * rounded at 1e-16 relative, positions assembled to 1e-13), with
             * M' >= ~1 kg m^2 this gives |zdd| ~ 1e-12 rad/s^2; 1e-9 bound. */
            for (int j = 0; j < nz; ++j) {
                assert_true(zd[j] == 0.0);
                CHECK_CLOSE(zdd[j], 0.0, 1e-9);
            }
            /* pdot: at the start every flow has an exact zero factor (U = 0,
             * p1 copied from p2 so the throttle sees dp = 0, sd = 0). With
             * B_e/V ~ 1e9 Pa / 1e-4 m^3 = 1e13 Pa/m^3, 1e-3 Pa/s corresponds
             * to a net flow of 1e-16 m^3/s, i.e. only rounding-level terms
             * are accepted. */
            for (int k = 0; k < np; ++k) CHECK_CLOSE(pd[k], 0.0, 1e-3);
            for (int v = 0; v < hymo_sim_nu(sim); ++v) assert_true(u[v] == 0.0);

            /* constraints closed (KINSOL assembly to 1e-13; 1e-12 bound) */
            hymo_kin kin;
            hymo_constraints con;
            assert_int_equal(hymo_kin_init(&kin, &m->compiled->kin, &err), HYMO_OK);
            assert_int_equal(hymo_constraints_init(&con, m, &err), HYMO_OK);
            double phi[16], phi_z[16 * MAXB];
            eval_phi(m, &kin, &con, z, NULL, phi, phi_z, NULL);
            for (int r = 0; r < con.m; ++r) CHECK_CLOSE(phi[r], 0.0, 1e-12);

            /* actuator lengths against the independent kinematics */
            const double *sl = hymo_sim_actuator_length(sim);
            for (int a = 0; a < na; ++a) CHECK_CLOSE(sl[a], actuator_length_fk(m, a, z), 1e-13);

            /* pressures: rod sides as given, piston sides from virtual work,
             * throttle-joined volumes equal (1e-7 relative: FD gradients
             * ~1e-10, margin for the static solve) */
            double F[2];
            static_forces_virtual_work(m, z, phi_z, con.m, F);
            for (int a = 0; a < na; ++a) {
                const hymo_cylinder *cy = &m->cylinders[a];
                const hymo_node *npi = &m->nodes[cy->node_piston], *nr = &m->nodes[cy->node_rod];
                assert_int_equal(nr->p0_rule, HYMO_P0_GIVEN);
                CHECK_CLOSE(p[nr->state], nr->p0, 0.0);
                double expect = (F[a] + nr->p0 * cy->rod_side_area) / cy->piston_area;
                CHECK_CLOSE(p[npi->state], expect, 1e-7 * expect);
            }
            for (int t = 0; t < m->n_throttles; ++t) {
                const hymo_node *a = &m->nodes[m->throttles[t].node_a], *b = &m->nodes[m->throttles[t].node_b];
                CHECK_CLOSE(p[a->state], p[b->state], 0.0);
            }

            if (strcmp(files[f], "fourbar.yaml") == 0) {
                /* SPEC §5.2: F_s0 = sqrt(2) g (3 m1 + 2 m2 + m3),
                 * p1 = p2 = (F_s0 + p3 A_rod) / A_pist ~ 5.024 MPa. Exact up to
                 * the assembly tolerance (1e-13) and rounding: 1e-10 relative. */
                double Fs0 = sqrt(2.0) * 9.81 * (3 * 225.0 + 2 * 35.0 + 50.0);
                double Ap = 0.25 * PI * 0.08 * 0.08, Ar = 0.25 * PI * (0.08 * 0.08 - 0.035 * 0.035);
                double p2 = (Fs0 + 3.5e6 * Ar) / Ap;
                CHECK_CLOSE(Fs0, 11029.5, 0.5);
                CHECK_CLOSE(p2, 5.024e6, 0.001e6);
                CHECK_CLOSE(p[test_volume_state(m, "V2")], p2, 1e-10 * p2);
                CHECK_CLOSE(p[test_volume_state(m, "V1")], p2, 1e-10 * p2);
                CHECK_CLOSE(p[test_volume_state(m, "V3")], 3.5e6, 0.0);
                CHECK_CLOSE(sl[0], sqrt(2.0), 1e-13);
                CHECK_CLOSE(F[0], Fs0, 1e-7 * Fs0);
                /* C, D, E of SPEC §5.2 (assembled z moves nothing: z0 closes) */
                for (int j = 0; j < nz; ++j) CHECK_CLOSE(z[j], m->bodies[j].z0, 1e-12);
            }
            if (strcmp(files[f], "quickreturn.yaml") == 0) {
                /* independent z4 held exactly at 30.59 deg */
                CHECK_CLOSE(z[3], 30.59 * PI / 180.0, 2 * EPS);
                assert_true(z[3] == m->bodies[3].z0);
                /* SPEC §5.3: the given angles (0.01 deg resolution, 8.7e-5 rad
                 * per angle) close the loops to ~1e-4 m; re-assembly moves the
                 * dependent angles by at most a few 1e-4 rad: bound 5e-4 */
                for (int j = 0; j < nz; ++j) CHECK_CLOSE(z[j], m->bodies[j].z0, 5e-4);
                /* s0 ~ 1.4135 m (SPEC gives 4 decimals) */
                CHECK_CLOSE(sl[0], 1.4135, 1e-4);
                /* the loops also close in the independent kinematics */
                pose_t P;
                fk(m, z, &P);
                int b1 = hymo_model_find_body(m, "body1"), b3 = hymo_model_find_body(m, "body3");
                int b5 = hymo_model_find_body(m, "body5");
                assert_true(b1 >= 0 && b3 >= 0 && b5 >= 0);
                assert_int_equal(hymo_model_find_body(m, "body4"), 3);
                double rI[3], rL[3], zero[3] = {0, 0, 0};
                fk_point(&P, b3, zero, rI);
                fk_point(&P, b5, zero, rL);
                CHECK_CLOSE(rI[1], 5.0, 1e-12);                                   /* ram on y = 5 */
                double th3 = atan2(P.R[b3][3], P.R[b3][0]), th1 = atan2(P.R[b1][3], P.R[b1][0]);
                double th5 = atan2(P.R[b5][3], P.R[b5][0]);
                CHECK_CLOSE(fabs(th3), PI, 1e-12);                                /* ram angle pi */
                CHECK_CLOSE(th5, th1, 1e-12);                                     /* block angle = lever */
                CHECK_CLOSE(rL[0] * sin(th1) - rL[1] * cos(th1), 0.0, 1e-12);     /* L on lever axis */
            }
            if (form == 0) {
                memcpy(z_ds, z, (size_t)nz * sizeof(double));
                memcpy(p_ds, p, (size_t)np * sizeof(double));
            } else {
                /* both formulations start from the same state (same assembly
                 * and static solve; rounding only) */
                for (int j = 0; j < nz; ++j) CHECK_CLOSE(z[j], z_ds[j], 1e-14);
                for (int k = 0; k < np; ++k) CHECK_CLOSE(p[k], p_ds[k], 1e-9 * fabs(p_ds[k]));
            }
            hymo_constraints_free(&con);
            hymo_kin_free(&kin);
            hymo_sim_free(sim);
        }
        hymo_model_free(m);
    }
}

/* ------------------------------------------------------------------ */
/* 6. Cylinder force and sign conventions                               */

static void test_cylinder_conventions(void **state)
{
    (void)state;
    hymo_error err;
    /* fourbar: seal friction (eta = 0.88, v_s = 0.01), no viscous term */
    hymo_model *m = test_load_model("fourbar.yaml");
    const hymo_cylinder *cy = &m->cylinders[0];
    const double Ap = 0.25 * PI * 0.08 * 0.08, Ar = 0.25 * PI * (0.08 * 0.08 - 0.035 * 0.035);
    CHECK_CLOSE(cy->piston_area, Ap, 1e-15 * Ap);
    CHECK_CLOSE(cy->rod_side_area, Ar, 1e-15 * Ar);
    CHECK_CLOSE(cy->efficiency, 0.88, 0.0);
    CHECK_CLOSE(cy->viscous, 0.0, 0.0);
    double s0 = sqrt(2.0);
    hymo_circuit circ;
    assert_int_equal(hymo_circuit_init(&circ, m, &s0, &err), HYMO_OK);
    /* chamber lengths (SPEC §2, seed 002: l_pist0 = s0 - l) */
    double lp, lr;
    hymo_cylinder_lengths(&circ, 0, s0 + 0.01, &lp, &lr);
    CHECK_CLOSE(lp, s0 - 1.1 + 0.01, 1e-15);
    CHECK_CLOSE(lr, 1.1 - (s0 - 1.1) - 0.01, 1e-15);
    const int i1 = test_volume_state(m, "V1"), i2 = test_volume_state(m, "V2"), i3 = test_volume_state(m, "V3");
    double U = 0.0, uref = 0.0, force, pd[3];
    double s = s0 + 0.01;
    /* Force: F = p2 A_p - p3 A_r - (1 - eta) |F_hyd| tanh(sd / v_s): a few
     * roundings of O(|F_hyd|) terms, tolerance 1e-12 |F_hyd|. */
    const double pressures[2][2] = {{6.2e6, 2.0e6}, {1.0e6, 5.0e6}}; /* F_hyd > 0 and < 0 */
    const double sds[] = {0.02, -0.02, 1e-4, -1e-4, 0.0};
    for (int c = 0; c < 2; ++c) {
        double p[3];
        p[i1] = pressures[c][0];
        p[i2] = pressures[c][0];
        p[i3] = pressures[c][1];
        double Fh = p[i2] * Ap - p[i3] * Ar;
        for (size_t t = 0; t < sizeof sds / sizeof sds[0]; ++t) {
            double sd = sds[t];
            assert_int_equal(hymo_circuit_eval(&circ, m, &s, &sd, p, &U, &uref, pd, NULL, &force), 0);
            double Fmu = 0.12 * fabs(Fh) * tanh(sd / 0.01);
            CHECK_CLOSE(force, Fh - Fmu, 1e-12 * fabs(Fh));
            /* friction opposes the motion whatever the sign of F_hyd */
            if (sd > 0) assert_true(force < Fh);
            if (sd < 0) assert_true(force > Fh);
            if (sd == 0) assert_true(force == Fh);
            /* chamber flows due to motion (p1 = p2, U = 0: no valve or
             * throttle flow): extending (sd > 0) grows the piston chamber
             * (pressure falls) and shrinks the rod chamber (pressure rises):
             * pdot2 = -(B_e/V)_2 A_p sd, pdot3 = +(B_e/V)_3 A_r sd */
            double V2[2] = {3.14e-5, Ap * lp}, B2[2] = {5.5e8, 3.15e10};
            double V3[2] = {7.85e-5, Ar * lr}, B3[2] = {5.5e8, 3.15e10};
            double k2 = be_over_v(1.5e9, 2, V2, B2), k3 = be_over_v(1.5e9, 2, V3, B3);
            CHECK_CLOSE(pd[i1], 0.0, 0.0);
            CHECK_CLOSE(pd[i2], -k2 * Ap * sd, 1e-12 * k2 * Ap * fabs(sd));
            CHECK_CLOSE(pd[i3], k3 * Ar * sd, 1e-12 * k3 * Ar * fabs(sd));
        }
    }
    hymo_circuit_free(&circ);
    hymo_model_free(m);

    /* crane1: viscous c = 1e5, eta = 1, end dampers l_d = 8 mm,
     * k_d = 1e7 N/m, c_d = 5e3 N s/m; l_pist0 = 0.05, l_rod0 = 0.25, s0 = 0.5 */
    m = test_load_model("crane1.yaml");
    cy = &m->cylinders[0];
    assert_true(cy->has_damper);
    CHECK_CLOSE(cy->viscous, 1e5, 0.0);
    CHECK_CLOSE(cy->efficiency, 1.0, 0.0);
    s0 = 0.5;
    assert_int_equal(hymo_circuit_init(&circ, m, &s0, &err), HYMO_OK);
    const int c1 = test_volume_state(m, "V1"), c2 = test_volume_state(m, "V2"), c3 = test_volume_state(m, "V3");
    double p[3];
    p[c1] = 4e6;
    p[c2] = 3.5e6;
    p[c3] = 4e6;
    const double Fh = 4e6 * Ap - 3.5e6 * Ar;
    typedef struct {
        double s, sd, Fd;
    } dcase;
    const dcase cases[] = {
        {0.6, 0.01, 0.0},                               /* mid-stroke: viscous only */
        {0.6, -0.01, 0.0},
        {0.5 - 0.045, -0.02, 1e7 * 0.003 + 5e3 * 0.02}, /* l_pist = 5 mm, approaching the piston end */
        {0.5 - 0.045, +0.02, 1e7 * 0.003 - 5e3 * 0.02}, /* leaving it */
        {0.5 + 0.245, +0.02, -1e7 * 0.003 - 5e3 * 0.02}, /* l_rod = 5 mm, approaching the rod end */
        {0.5 + 0.245, -0.02, -1e7 * 0.003 + 5e3 * 0.02}, /* leaving it */
        {0.5 - 0.0419, -0.02, 0.0},                     /* l_pist = 8.1 mm: outside the damper */
        {0.5 + 0.2419, +0.02, 0.0},                     /* l_rod = 8.1 mm */
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; ++t) {
        double ss = cases[t].s, sd = cases[t].sd;
        assert_int_equal(hymo_circuit_eval(&circ, m, &ss, &sd, p, &U, &uref, NULL, NULL, &force), 0);
        /* F = p1 A_p - p2 A_r - c sd + F_d: rounding 1e-12 of the largest
         * term, plus k_d times the rounding of the chamber length computed
         * from s ~ 0.5 m (a few ulps, ~4e-16 m): 1e7 * 4e-16 ~ 4e-9 N -> 1e-8 N */
        double expect = Fh - 1e5 * sd + cases[t].Fd;
        CHECK_CLOSE(force, expect, 1e-12 * (fabs(Fh) + 1e5 * fabs(sd) + fabs(cases[t].Fd)) + 1e-8);
        CHECK_CLOSE(hymo_cylinder_damper_force(m, &circ, 0, ss, sd), cases[t].Fd, 1e-12 * fabs(cases[t].Fd) + 1e-8);
        /* the damper pushes away from the end it approaches */
        if (t == 2) assert_true(cases[t].Fd > 0 && force > Fh - 1e5 * sd);
        if (t == 4) assert_true(cases[t].Fd < 0 && force < Fh - 1e5 * sd);
    }
    hymo_circuit_free(&circ);
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mq_brute_force, setup_margin, report_margin),
        cmocka_unit_test_setup_teardown(test_mq_lagrange, setup_margin, report_margin),
        cmocka_unit_test_setup_teardown(test_constraint_jacobians, setup_margin, report_margin),
        cmocka_unit_test_setup_teardown(test_flow_continuity, setup_margin, report_margin),
        cmocka_unit_test_setup_teardown(test_static_start, setup_margin, report_margin),
        cmocka_unit_test_setup_teardown(test_cylinder_conventions, setup_margin, report_margin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
