/* Phi_z by its non-zeros (formulations/constraints.h) on a mechanism of
 * many loops, checked against dense algebra and the constraint equations:
 * a ladder of 40 four-bar loops (bench/gen_models.py's family: 81 joint
 * coordinates, 80 constraint rows, mobility 1), so that every sparse path
 * is taken: the KKT matrix of the consistent accelerations by KLU
 * (nz + m = 161 >= HYMO_KKT_SPARSE_MIN), Phi_d by KLU (80 rows >= 32) and
 * the rank-revealing elimination on the rows' non-zeros.
 * - the consistent accelerations (sparse KKT) after 30 steps, moving, satisfy
 *   Phi_z zdd + gamma = 0 and M' zdd + Phi_z^T lambda = Q' (residuals
 *   computed here from dense copies), and equal the dense KKT solution;
 * - the pattern holds every non-zero: the dense Phi_z from the values
 *   equals central differences of Phi;
 * - hymo_rank_pivots_csr on Phi_z gives hymo_rank_pivots' pivots;
 * - penalty's mechanical block by its pattern and its start factor from
 *   the smallest compliance (test_penalty_block: against LAPACK's
 *   eigenvalues, 1.2e-13) and both formulations' memory O(N)
 *   (test_ladder_memory);
 * - redundant rows on many loops (test_redundant_ladder): penalty's
 *   minimum-norm multipliers by KLU against LAPACK's dgelsd. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "engine.h"
#include "hymo/linalg.h"
#include "test_util.h"

enum { N = 40 };


static char *ladder_yaml(int n, int spring, int spatial)
{
    size_t cap = 4096 + (size_t)n * 1100, len = 0;
    char *s = malloc(cap);
#define OUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    const double d = 0.5, lean = 70.0 * 3.14159265358979323846 / 180.0;
    OUT("format: 1\nname: ladder%d\ngravity: [0, -9.81, 0]\nsimulation:\n  dt: 1.0e-3\n  t_end: 0.1\n"
        "  penalty_alpha: 1.0e11\n  max_iterations: 20\n"
        "  tolerances: {position: 1.0e-7, pressure: 1.0e-2, spool: 1.0e-7}\n"
        "ground:\n  points:\n    G: [-0.6, 0.0, 0]\nbodies:\n",
        n);
    for (int k = 0; k <= n; ++k) {
        OUT("  - name: o%d\n    joint: {name: r%d, type: revolute, parent: ground, location: [%.17g, 0, 0], "
            "axis: [0, 0, 1], initial: %.17g}\n    mass: 1.0\n    com: [0.5, 0, 0]\n"
            "    inertia: [0, 0.08333333333333333, 0.08333333333333333]\n    points:\n      T: [1, 0, 0]\n",
            k, k, k * d, lean);
        if (k == 0) OUT("      F: [0.5, 0, 0]\n");
        if (k >= 1)
            OUT("  - name: c%d\n    joint: {name: s%d, type: revolute, parent: o%d, location: T, axis: [0, 0, 1], "
                "initial: %.17g}\n    mass: 0.5\n    com: [%.17g, 0, 0]\n    inertia: [0, %.17g, %.17g]\n"
                "    points:\n      E: [%.17g, 0, 0]\n",
                k, k, k - 1, -lean, d / 2, 0.5 * d * d / 12, 0.5 * d * d / 12, d);
    }
    OUT("cut_joints:\n");
    for (int k = 1; k <= n; ++k) {
        OUT(spatial ? "  - {name: e%d, type: revolute, body_a: c%d, point_a: E, body_b: o%d, point_b: T, axis_a: [0, 0, 1], "
                      "axis_b: [0, 0, 1]}\n"
                    : "  - {name: e%d, type: planar_revolute, body_a: c%d, point_a: E, body_b: o%d, point_b: T}\n",
            k, k, k);
        if (spatial == 2) /* the same closure again: redundant rows that are not zero rows */
            OUT("  - {name: d%d, type: planar_revolute, body_a: c%d, point_a: E, body_b: o%d, point_b: T}\n", k, k, k);
    }
    if (spring) /* across the ladder: joints on neither's path nor in a common row */
        OUT("forces:\n  - {name: sd, type: spring_damper, point_a: c%d.E, point_b: o%d.T, stiffness: 50, damping: 5, "
            "free_length: 0.3}\n",
            n / 2, n - 3);
    OUT("independent: [r0]\nsignals:\n  - name: U_ref\n    points: [[0, 0], [0.001, 0], [0.001, 2], [10, 2]]\n"
        "hydraulics:\n  fluid: {bulk_modulus: 1.5e9, density: 850, laminar_transition: 2.0e5}\n"
        "  sources:\n    - {name: pump, pressure: 7.6e6}\n    - {name: tank, pressure: 1.0e5}\n"
        "  cylinders:\n    - {name: cyl, base: ground.G, rod: o0.F, piston_diameter: 0.063, rod_diameter: 0.028,\n"
        "       length: 0.5, efficiency: 0.9, friction_velocity: 0.01}\n"
        "  volumes:\n    - {name: V1, parts: [{volume: 4.71e-5, bulk_modulus: 5.5e8}], initial_pressure: static}\n"
        "    - {name: V2, parts: [{volume: 3.14e-5, bulk_modulus: 5.5e8}, {chamber: cyl.piston, bulk_modulus: "
        "3.15e10}], initial_pressure: static}\n"
        "    - {name: V3, parts: [{volume: 7.85e-5, bulk_modulus: 5.5e8}, {chamber: cyl.rod, bulk_modulus: "
        "3.15e10}], initial_pressure: 3.5e6}\n"
        "  throttles:\n    - {name: th, from: V1, to: V2, area: 2.83e-5, discharge_coefficient: 0.8}\n"
        "  valves:\n    - {name: dcv, type: 4/3, P: pump, T: tank, A: V1, B: V3, flow_coefficient: 2.138e-9,\n"
        "       bandwidth_hz: 35, signal: U_ref}\n");
#undef OUT
    assert_true(len < cap);
    return s;
}

/* spatial: the loops closed by spatial revolute cuts (5 rows each, of which
 * 3 are redundant in the plane: zero rows); 2: and each loop closed once
 * more by a planar revolute cut (2 more rows, both redundant) */
static hymo_model *ladder_model_n(int n, int spring, int spatial)
{
    char *text = ladder_yaml(n, spring, spatial);
    hymo_model *m = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_string(text, "ladder", &m, &err) != HYMO_OK) fail_msg("%s", err.message);
    free(text);
    return m;
}

static hymo_model *ladder_model(void) { return ladder_model_n(N, 0, 0); }

static hymo_sim *ladder_sim_with(const hymo_model *m, hymo_formulation_kind form, hymo_jacobian_mode jac,
                                 hymo_linsol_kind ls)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.formulation = form;
    opt.jacobian = jac;
    opt.linear_solver = ls;
    opt.verbose = 0;
    hymo_sim *sim = test_sim_create(m, &opt);
    return sim;
}

static hymo_sim *ladder_sim(const hymo_model *m, hymo_formulation_kind form)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    return ladder_sim_with(m, form, opt.jacobian, opt.linear_solver);
}

/* the start's accelerations from the sparse KKT against the equations and the dense KKT */
static void test_kkt_sparse(void **state)
{
    (void)state;
    hymo_model *m = ladder_model();
    hymo_sim *sim = ladder_sim(m, HYMO_FORMULATION_DOUBLE_STEP);
    hymo_mb *mb = &sim->mb;
    const int nz = mb->nz, mr = mb->m, n = nz + mr;
    assert_int_equal(nz, 2 * N + 1);
    assert_int_equal(mr, 2 * N);
    assert_non_null(sim->accel.kkt_sp); /* the sparse path is the one taken */
    /* moving (the valve opens at 1 ms): gamma and zdd are not zero */
    hymo_error err;
    hymo_error_clear(&err);
    for (int k = 0; k < 30; ++k) assert_int_equal(hymo_sim_step(sim, &err), HYMO_OK);
    hymo_kin_positions(&mb->kin, m, mb->z); /* as after an event (the engine's restart) */
    hymo_kin_velocities(&mb->kin, m, mb->zd);
    memcpy(mb->zn, mb->z, (size_t)nz * sizeof(double));
    memcpy(mb->zdn, mb->zd, (size_t)nz * sizeof(double));
    assert_int_equal(hymo_engine_dynamics(sim, sim->state.t, &err), HYMO_OK);
    assert_int_equal(hymo_engine_consistent_accelerations(sim, 1, &err), HYMO_OK);
    print_message("t = %g s, |zd| up to %.3g rad/s\n", sim->state.t, hymo_norm_inf(nz, mb->zd));
    const hymo_csr pz = hymo_constraints_csr(mb->con, mb->phi_zv);
    double *P = calloc((size_t)mr * nz, sizeof(double));
    hymo_csr_dense(&pz, P);
    /* Phi_z zdd + gamma = 0 */
    double worst = 0.0, scale = 0.0;
    for (int r = 0; r < mr; ++r) {
        double s = mb->gamma[r];
        for (int j = 0; j < nz; ++j) s += P[r * nz + j] * mb->zdd[j];
        worst = fmax(worst, fabs(s));
        scale = fmax(scale, fabs(mb->gamma[r]));
    }
    print_message("|Phi_z zdd + gamma| = %.3g (|gamma| up to %.3g)\n", worst, scale);
    assert_true(worst <= 1e-10 * fmax(1.0, scale));
    /* the dense KKT solution of the same system (multibody.c's dense path) */
    double *K = calloc((size_t)n * n, sizeof(double)), *x = calloc((size_t)n, sizeof(double));
    int *piv = calloc((size_t)n, sizeof(int));
    assert_int_equal(hymo_mb_kkt_factor(mb, K, piv), 0);
    for (int i = 0; i < nz; ++i) x[i] = mb->kin.Q[i];
    for (int r = 0; r < mr; ++r) x[nz + r] = -mb->gamma[r];
    hymo_lu_solve(n, K, piv, x);
    double dz = 0.0, zmax = 0.0;
    for (int j = 0; j < nz; ++j) dz = fmax(dz, fabs(x[j] - mb->zdd[j])), zmax = fmax(zmax, fabs(x[j]));
    print_message("sparse vs dense KKT: max |d zdd| = %.3g of %.3g\n", dz, zmax);
    assert_true(dz <= 1e-10 * fmax(1.0, zmax));
    /* M' zdd + Phi_z^T lambda = Q' with the sparse solve's multipliers */
    memcpy(x, mb->kin.Q, (size_t)nz * sizeof(double));
    for (int r = 0; r < mr; ++r) x[nz + r] = -mb->gamma[r];
    hymo_mb_kkt_sparse_factor(mb, sim->accel.kkt_sp);
    hymo_mb_kkt_sparse_solve(sim->accel.kkt_sp, x);
    double res = 0.0, qmax = 0.0;
    for (int i = 0; i < nz; ++i) {
        double s = -mb->kin.Q[i];
        for (int j = 0; j < nz; ++j) s += mb->kin.M[i * nz + j] * x[j];
        for (int r = 0; r < mr; ++r) s += P[r * nz + i] * x[nz + r];
        res = fmax(res, fabs(s));
        qmax = fmax(qmax, fabs(mb->kin.Q[i]));
    }
    print_message("|M' zdd + Phi_z^T lambda - Q'| = %.3g (|Q'| up to %.3g)\n", res, qmax);
    assert_true(res <= 1e-9 * fmax(1.0, qmax));
    free(K), free(x), free(piv), free(P);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

/* the pattern holds every non-zero (central differences of Phi), and the
 * sparse elimination pivots as the dense one */
static void test_pattern_and_pivots(void **state)
{
    (void)state;
    hymo_model *m = ladder_model();
    hymo_sim *sim = ladder_sim(m, HYMO_FORMULATION_DOUBLE_STEP);
    hymo_mb *mb = &sim->mb;
    const int nz = mb->nz, mr = mb->m;
    double *z = calloc((size_t)nz, sizeof(double)), *P = calloc((size_t)mr * nz, sizeof(double));
    double *php = calloc((size_t)mr, sizeof(double)), *phm = calloc((size_t)mr, sizeof(double));
    double *w = calloc((size_t)mr * nz + 2 * (size_t)mr, sizeof(double));
    memcpy(z, mb->z, (size_t)nz * sizeof(double));
    hymo_kin_positions(&mb->kin, m, z);
    hymo_constraints_eval(mb->con, &mb->kin, mb->phi, mb->phi_zv, NULL);
    const hymo_csr pz = hymo_constraints_csr(mb->con, mb->phi_zv);
    hymo_csr_dense(&pz, P);
    assert_true(mb->con->nnz <= 3 * mr); /* a loop's rows: its coupler, its rocker and the previous rocker */
    double worst = 0.0;
    const double h = 1e-6;
    for (int j = 0; j < nz; ++j) {
        const double z0 = z[j];
        z[j] = z0 + h;
        hymo_kin_positions(&mb->kin, m, z);
        hymo_constraints_eval(mb->con, &mb->kin, php, NULL, NULL);
        z[j] = z0 - h;
        hymo_kin_positions(&mb->kin, m, z);
        hymo_constraints_eval(mb->con, &mb->kin, phm, NULL, NULL);
        z[j] = z0;
        for (int r = 0; r < mr; ++r) worst = fmax(worst, fabs((php[r] - phm[r]) / (2 * h) - P[r * nz + j]));
    }
    print_message("Phi_z (%d non-zeros) vs central differences: %.3g\n", mb->con->nnz, worst);
    assert_true(worst <= 1e-8);
    /* M' without forming it (double-step on many loops): M' v by the
     * composite-inertia recursion and the entries on the tree's paths,
     * against the formed M' (hymo_kin_mass) */
    hymo_kin_positions(&mb->kin, m, z);
    double *v = calloc((size_t)nz, sizeof(double)), *mv = calloc((size_t)nz, sizeof(double));
    uint64_t seed = 12345;
    for (int j = 0; j < nz; ++j) v[j] = test_urand_pm1(&seed);
    hymo_kin_mass_times(&mb->kin, v, mv);
    hymo_kin_composite(&mb->kin);
    double dmv = 0.0, dent = 0.0, mmax = 0.0;
    for (int i = 0; i < nz; ++i)
        for (int j = 0; j < nz; ++j)
            if (hymo_kin_on_path(&mb->kin, j, i)) dent = fmax(dent, fabs(hymo_kin_mass_entry(&mb->kin, i, j)));
    assert_int_equal(hymo_kin_mass(&mb->kin), 0);
    const double *M = mb->kin.M;
    for (int i = 0; i < nz; ++i) {
        double s = 0.0;
        for (int j = 0; j < nz; ++j) s += M[i * nz + j] * v[j];
        dmv = fmax(dmv, fabs(s - mv[i]));
        for (int j = 0; j < nz; ++j) mmax = fmax(mmax, fabs(M[i * nz + j]));
    }
    double dm = 0.0; /* the entries: on every path pair, the formed M''s number exactly */
    for (int i = 0; i < nz; ++i)
        for (int j = 0; j < nz; ++j)
            if (hymo_kin_on_path(&mb->kin, j, i)) dm = fmax(dm, fabs(hymo_kin_mass_entry(&mb->kin, i, j) - M[i * nz + j]));
    print_message("M' v recursion vs formed M': %.3g (|M'| up to %.3g, entries up to %.3g); entries: %.3g\n", dmv, mmax,
                  dent, dm);
    assert_true(dmv <= 1e-13 * mmax * nz);
    assert_true(dm == 0.0);
    free(v), free(mv);
    unsigned char c1[2 * N + 1], c2[2 * N + 1], r1[2 * N], r2[2 * N];
    double s1, s2;
    hymo_rank_work rw;
    assert_int_equal(hymo_rank_work_alloc(&rw, mr, nz, mb->con->nnz), 0);
    const int k1 = hymo_rank_pivots(mr, nz, P, w, NULL, c1, r1, mr, 0.0, &s1);
    const int k2 = hymo_rank_pivots_csr(&pz, &rw, NULL, c2, r2, mr, 0.0, &s2);
    hymo_rank_work_free(&rw);
    assert_int_equal(k1, mr);
    assert_int_equal(k2, k1);
    assert_memory_equal(c1, c2, (size_t)nz);
    assert_memory_equal(r1, r2, (size_t)mr);
    assert_true(s1 == s2);
    free(z), free(P), free(php), free(phm), free(w);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

/* threshold pivoting (the partition's, from 32 rows on) on the ladder's
 * Phi_z: full rank, a regular Phi_d, and no fill-in beyond the pool it
 * starts with, where full pivoting's pool had to grow */
static void test_threshold_pivots(void **state)
{
    (void)state;
    hymo_model *m = ladder_model();
    hymo_sim *sim = ladder_sim(m, HYMO_FORMULATION_DOUBLE_STEP);
    hymo_mb *mb = &sim->mb;
    const int nz = mb->nz, mr = mb->m;
    const hymo_csr pz = hymo_constraints_csr(mb->con, mb->phi_zv);
    unsigned char cols[2 * N + 1], rows[2 * N];
    hymo_rank_work full, thr;
    assert_int_equal(hymo_rank_work_alloc(&full, mr, nz, mb->con->nnz), 0);
    assert_int_equal(hymo_rank_work_alloc(&thr, mr, nz, mb->con->nnz), 0);
    const int cap0 = thr.pool_cap;
    thr.threshold = 0.5;
    double sf, st;
    assert_int_equal(hymo_rank_pivots_csr(&pz, &full, NULL, cols, rows, mr, 0.0, &sf), mr);
    assert_int_equal(hymo_rank_pivots_csr(&pz, &thr, NULL, cols, rows, mr, 0.0, &st), mr);
    print_message("pool: full pivoting %d entries, threshold 0.5 %d (start %d); smallest pivot %.3g vs %.3g\n",
                  full.pool_cap, thr.pool_cap, cap0, sf, st);
    assert_int_equal(thr.pool_cap, cap0);
    assert_true(full.pool_cap > 2 * cap0);
    assert_true(st > 0.0);
    /* Phi_d of the threshold selection: regular (dense LU) */
    double *D = calloc((size_t)mr * mr, sizeof(double));
    int *piv = calloc((size_t)mr, sizeof(int)), *dep = calloc((size_t)nz, sizeof(int)), nd = 0;
    for (int j = 0; j < nz; ++j)
        if (cols[j]) dep[nd++] = j;
    assert_int_equal(nd, mr);
    for (int r = 0; r < mr; ++r)
        for (int c = 0; c < mr; ++c) D[r * mr + c] = hymo_csr_get(&pz, r, dep[c]);
    assert_int_equal(hymo_lu_factor(mr, D, piv), 0);
    double umin = INFINITY;
    for (int r = 0; r < mr; ++r) umin = fmin(umin, fabs(D[r * mr + r]));
    print_message("Phi_d (threshold selection): smallest |U_ii| %.3g\n", umin);
    assert_true(umin > 1e-3);
    free(D), free(piv), free(dep);
    hymo_rank_work_free(&full), hymo_rank_work_free(&thr);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

static double held_kb(int n, hymo_formulation_kind form, int spatial)
{
    hymo_model *m = ladder_model_n(n, 0, spatial);
    const size_t before = test_heap_in_use();
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    hymo_sim *sim = ladder_sim_with(m, form, opt.jacobian, HYMO_LINSOL_KLU); /* the sparse path */
    hymo_error err;
    hymo_error_clear(&err);
    for (int k = 0; k < 10; ++k)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    const double kb = (double)(test_heap_in_use() - before) / 1024.0;
    hymo_sim_free(sim);
    hymo_model_free(m);
    return kb;
}

/* both formulations on a ladder hold O(N) memory: double-step (Phi_z's
 * non-zeros, M' never formed, the sparse KKT matrix, threshold pivoting)
 * measured N^0.97 over N = 64..256 (bench_scale); penalty (the mechanical
 * block by its pattern, KLU's projection matrix) N^1.0; here N = 32 and
 * 128, KLU for the Newton matrix (the dense solver's LU is nx^2) */
static void test_ladder_memory(void **state)
{
    (void)state;
    test_heap_exponent("ladder, double-step, N = 32 and 128", held_kb(32, HYMO_FORMULATION_DOUBLE_STEP, 0),
                       held_kb(128, HYMO_FORMULATION_DOUBLE_STEP, 0), 1.2);
    test_heap_exponent("ladder, penalty, N = 32 and 128", held_kb(32, HYMO_FORMULATION_PENALTY, 0),
                       held_kb(128, HYMO_FORMULATION_PENALTY, 0), 1.2);
    /* redundant rows: penalty's Gram matrix of lambda_min_norm by KLU too */
    test_heap_exponent("spatial-cut ladder, penalty, N = 32 and 128", held_kb(32, HYMO_FORMULATION_PENALTY, 1),
                       held_kb(128, HYMO_FORMULATION_PENALTY, 1), 1.2);
}

static int in_set(const int *set, int n, int j)
{
    for (int k = 0; k < n; ++k)
        if (set[k] == j) return 1;
    return 0;
}

/* The penalty factor at the start: max(alpha, alpha_rho) with alpha_rho =
 * 4 (1/rho - 1) / (dt_ref^2 s_min), rho = 1e-2, dt_ref = 1 ms
 * (formulations/penalty.c), s_min the smallest eigenvalue of
 * S = Phi_z M'^-1 Phi_z^T: here from M' formed, dense solves and LAPACK's
 * symmetric eigensolver, against the formulation's inverse iteration
 * through the sparse KKT matrix. */
static void check_start_alpha(const hymo_model *model)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, model);
    opt.formulation = HYMO_FORMULATION_PENALTY;
    opt.linear_solver = HYMO_LINSOL_KLU;
    opt.penalty_alpha = 1e9; /* below alpha_rho: the rule sets the factor */
    opt.penalty_alpha_auto = 0;
    opt.verbose = 0;
    hymo_sim *sim = test_sim_create(model, &opt);
    hymo_mb *mb = &sim->mb;
    const int nz = sim->nz, m = sim->m;
    assert_int_equal(hymo_kin_mass(&mb->kin), 0);
    double *A = malloc((size_t)nz * nz * sizeof(double)), *X = calloc((size_t)nz * m, sizeof(double));
    double *P = calloc((size_t)m * nz, sizeof(double)), *S = malloc((size_t)m * m * sizeof(double));
    double *w = malloc((size_t)m * sizeof(double));
    int *piv = malloc((size_t)nz * sizeof(int));
    assert_true(A && X && P && S && w && piv);
    memcpy(A, mb->kin.M, (size_t)nz * nz * sizeof(double));
    assert_int_equal(hymo_lu_factor(nz, A, piv), 0);
    const hymo_csr pz = hymo_constraints_csr(mb->con, mb->phi_zv);
    hymo_csr_dense(&pz, P);
    for (int r = 0; r < m; ++r) { /* X column r = M'^-1 Phi_r^T */
        memcpy(&X[(size_t)r * nz], &P[(size_t)r * nz], (size_t)nz * sizeof(double));
        hymo_lu_solve(nz, A, piv, &X[(size_t)r * nz]);
    }
    for (int a = 0; a < m; ++a)
        for (int b = 0; b < m; ++b) {
            double t = 0.0;
            for (int j = 0; j < nz; ++j) t += P[(size_t)a * nz + j] * X[(size_t)b * nz + j];
            S[(size_t)a * m + b] = 0.5 * t;
            S[(size_t)b * m + a] += 0.5 * t; /* symmetrised: each entry ends as the mean of its two sums */
        }
    assert_int_equal(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', m, S, m, w), 0);
    const double s_min = w[0], a_rho = 4.0 * (1.0 / 1e-2 - 1.0) / (1e-6 * s_min);
    const double expect = fmax(opt.penalty_alpha, a_rho);
    print_message("start: s_min %.6g (LAPACK), alpha %.6g, expected %.6g (relative difference %.2g)\n", s_min,
                  mb->alpha, expect, fabs(mb->alpha - expect) / expect);
    assert_true(a_rho > opt.penalty_alpha); /* the rule acts on this ladder */
    assert_true(fabs(mb->alpha - expect) <= 1e-6 * expect);
    free(A), free(X), free(P), free(S), free(w), free(piv);
    hymo_sim_free(sim);
}

/* Penalty's mechanical block by its pattern (sparse mode, N = 40 loops and
 * a spring-damper across the ladder, whose joint set is neither on one
 * path nor in one constraint row):
 * - the pattern holds every non-zero of the numeric Jacobian's mechanical
 *   block (forward differences of the residual, which know no pattern);
 * - the fast block equals M' (formed here) + (dt^2/4) alpha Phi_z^T Phi_z
 *   (dense, here) at every entry outside the spring's and the cylinder's
 *   joint sets (their stiffness is added there), and the pattern holds
 *   every non-zero of that sum. */
static void test_penalty_block(void **state)
{
    (void)state;
    hymo_model *m = ladder_model_n(N, 1, 0);
    hymo_error err;
    hymo_error_clear(&err);
    check_start_alpha(m);
    for (int mode = 0; mode < 2; ++mode) {
        hymo_sim *sim = ladder_sim_with(m, HYMO_FORMULATION_PENALTY, mode ? HYMO_JACOBIAN_FAST : HYMO_JACOBIAN_NUMERIC,
                                        HYMO_LINSOL_KLU);
        const int n = sim->nxm, nz = sim->nz;
        const hymo_sparse *B = &sim->jac.jm;
        assert_int_equal(n, nz);
        print_message("penalty block: %d of %d entries in the pattern\n", B->col_start[n], n * n);
        assert_true(B->col_start[n] < n * n / 8);
        for (int k = 0; k < 30; ++k)
            if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        if (mode == 0) { /* the matrix of the last iteration (a build after the step would evaluate the
                          * residual at increments from the committed state) */
            const hymo_sparse *J = &sim->jac.jfull;
            double vmax = 0.0, outside = 0.0;
            int count = 0;
            for (int j = 0; j < n; ++j)
                for (int e = J->col_start[j]; e < J->col_start[j + 1]; ++e) {
                    const int i = J->row[e];
                    if (i >= n) continue;
                    vmax = fmax(vmax, fabs(J->value[e]));
                    if (!hymo_sparse_at(B, i, j) && J->value[e] != 0.0) outside = fmax(outside, fabs(J->value[e])), ++count;
                }
            print_message("numeric block: max |entry| %.3g, %d non-zeros outside the pattern (max %.3g)\n", vmax,
                          count, outside);
            assert_int_equal(count, 0);
        } else {
            if (sim->jacobian->build(sim, sim->state.t, &err) != HYMO_OK)
                fail_msg("%s", err.message); /* at the state */
            hymo_mb *mb = &sim->mb;
            assert_int_equal(hymo_kin_mass(&mb->kin), 0);
            const double *M = mb->kin.M, ca = mb->dt * mb->dt / 4.0 * mb->alpha;
            double *P = calloc((size_t)sim->m * nz, sizeof(double)), *ref = calloc((size_t)nz * nz, sizeof(double));
            int *set = malloc(2 * (size_t)nz * sizeof(int));
            assert_non_null(P), assert_non_null(ref), assert_non_null(set);
            const hymo_csr pz = hymo_constraints_csr(mb->con, mb->phi_zv);
            hymo_csr_dense(&pz, P);
            int ns = hymo_actuator_joints(m, &mb->kin, 0, set);
            ns += hymo_fe_joints(m, &mb->kin, 0, set + ns);
            assert_true(ns >= 3);
            double rmax = 0.0, worst = 0.0;
            int missing = 0;
            for (int i = 0; i < nz; ++i)
                for (int j = 0; j < nz; ++j) {
                    double s = 0.0;
                    for (int r = 0; r < sim->m; ++r) s += P[r * nz + i] * P[r * nz + j];
                    ref[i * nz + j] = M[i * nz + j] + ca * s;
                    rmax = fmax(rmax, fabs(ref[i * nz + j]));
                }
            for (int i = 0; i < nz; ++i)
                for (int j = 0; j < nz; ++j) {
                    const double *e = hymo_sparse_at(B, i, j);
                    if (!e) {
                        missing += ref[i * nz + j] != 0.0;
                        continue;
                    }
                    if (!(in_set(set, ns, i) && in_set(set, ns, j))) worst = fmax(worst, fabs(*e - ref[i * nz + j]));
                }
            print_message("fast block: max |M' + c Phi_z^T Phi_z| %.3g, largest difference %.3g, %d non-zeros "
                          "outside the pattern\n",
                          rmax, worst, missing);
            assert_int_equal(missing, 0);
            assert_true(worst <= 1e-13 * rmax);
            free(P), free(ref), free(set);
        }
        hymo_sim_free(sim);
    }
    hymo_model_free(m);
}

/* Redundant rows on many loops (N = 40 loops each closed by a spatial
 * revolute cut and again by a planar one: 280 rows, rank 80; the repeated
 * closure's multipliers are determined only in sum, and the updates
 * lambda += alpha Phi would let them drift): at the end of a step penalty
 * replaces lambda by the smallest multipliers with the same generalised
 * force (lambda_min_norm, by KLU on the Gram matrix's pattern).  Checked
 * at three moving states: lambda perturbed (lambda0 = lambda + delta,
 * delta random), finish_step must return LAPACK's minimum-norm solution
 * of Phi_z^T x = Phi_z^T lambda0 (dgelsd); and penalty agrees with
 * double-step (which drops the redundant rows). */
static void test_redundant_ladder(void **state)
{
    (void)state;
    hymo_model *m = ladder_model_n(N, 0, 2);
    hymo_error err;
    hymo_error_clear(&err);
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    hymo_sim *pen = ladder_sim_with(m, HYMO_FORMULATION_PENALTY, opt.jacobian, HYMO_LINSOL_KLU);
    hymo_sim *ds = ladder_sim_with(m, HYMO_FORMULATION_DOUBLE_STEP, opt.jacobian, HYMO_LINSOL_KLU);
    const int nz = pen->nz, mm = pen->m;
    assert_int_equal(mm, 7 * N);
    assert_int_equal(pen->mb.con->rank, 2 * N);
    double *A = malloc((size_t)mm * nz * sizeof(double)), *b = calloc((size_t)(mm > nz ? mm : nz), sizeof(double)); /* dgelsd reads all max(m, n) rows */
    double *P = calloc((size_t)mm * nz, sizeof(double)), *sv = malloc((size_t)nz * sizeof(double));
    double *keep = malloc((size_t)mm * sizeof(double));
    assert_true(A && b && P && sv && keep);
    uint64_t seed = 7;
    double worst = 0.0, lmax = 0.0, red = 0.0, dz = 0.0;
    for (int k = 0; k < 60; ++k) {
        if (hymo_sim_step(pen, &err) != HYMO_OK || hymo_sim_step(ds, &err) != HYMO_OK) fail_msg("%s", err.message);
        if (k % 20 != 19) continue;
        hymo_mb *mb = &pen->mb;
        memcpy(keep, mb->lambda, (size_t)mm * sizeof(double));
        for (int r = 0; r < mm; ++r) mb->lambda[r] += 10.0 * test_urand_pm1(&seed);
        const hymo_csr pz = hymo_constraints_csr(mb->con, mb->phi_zv);
        hymo_csr_dense(&pz, P);
        for (int i = 0; i < nz; ++i) { /* A = Phi_z^T (nz x m, row-major), b = Phi_z^T lambda */
            double g = 0.0;
            for (int r = 0; r < mm; ++r) A[(size_t)i * mm + r] = P[(size_t)r * nz + i], g += P[(size_t)r * nz + i] * mb->lambda[r];
            b[i] = g;
        }
        int changed = 0;
        if (pen->form.ops->finish_step(&pen->form, mb, pen->state.t, pen->state.step, &changed, &err) != HYMO_OK)
            fail_msg("%s", err.message);
        lapack_int rank;
        assert_int_equal(LAPACKE_dgelsd(LAPACK_ROW_MAJOR, nz, mm, 1, A, mm, b, 1, sv, 1e-10, &rank), 0);
        for (int r = 0; r < mm; ++r) {
            worst = fmax(worst, fabs(b[r] - mb->lambda[r]));
            lmax = fmax(lmax, fabs(mb->lambda[r]));
            if (mb->con->redundant[r]) red = fmax(red, fabs(mb->lambda[r]));
        }
        memcpy(mb->lambda, keep, (size_t)mm * sizeof(double));
        for (int j = 0; j < nz; ++j) dz = fmax(dz, fabs(pen->mb.z[j] - ds->mb.z[j]));
    }
    print_message("redundant rows: lambda vs LAPACK's minimum norm %.3g (max |lambda| %.3g), on the redundant rows "
                  "%.3g; penalty vs double-step %.3g rad\n",
                  worst, lmax, red, dz);
    assert_true(lmax > 1.0);
    assert_true(worst <= 1e-12 * lmax); /* measured 7.7e-15 relative; one pass without the refinement: 6e-11 */
    assert_true(dz <= 1e-9);
    free(A), free(b), free(P), free(sv), free(keep);
    hymo_sim_free(pen);
    hymo_sim_free(ds);
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kkt_sparse),
        cmocka_unit_test(test_pattern_and_pivots),
        cmocka_unit_test(test_threshold_pivots),
        cmocka_unit_test(test_ladder_memory),
        cmocka_unit_test(test_penalty_block),
        cmocka_unit_test(test_redundant_ladder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
