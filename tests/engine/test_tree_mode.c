/* Tree mode (src/engine/jacobian.c hymo_engine_tree_mode, src/solvers/linsol.c
 * tree_outside): an open chain without cut joints, each actuator and force
 * element on one joint, KLU and the fast Jacobian.  The Newton matrix then
 * leaves M' out and the KLU backend solves M' + diagonal by the O(n)
 * articulated-body recursion; nothing nz x nz is formed.
 *
 * - A chain of 20 links and cylinders (bench/gen_models.py's family, with a
 *   joint spring, a joint limit that engages (an event, located as with
 *   the dense LU) and an external force added): tree mode is
 *   taken with both formulations, M' is never allocated, and the run agrees
 *   with the dense LU (fast Jacobian, the same matrix up to round-off: the
 *   same Newton iterations and matrix builds) to 5e-16 rad, 1e-7 Pa
 *   (measured <= 1e-17 rad, 4.9e-9 Pa) and with the numeric Jacobian to 1e-12
 *   rad, 1e-3 Pa (measured <= 2.1e-13 rad, 1.0e-4 Pa: the branched tree).
 * - With a hydraulic motor on joint 10 in a circuit of its own: the same
 *   (the motor's gradient is that joint's unit vector).
 * - A branched tree (link 11 on link 5, beside link 6): the same.
 * - The same chain with circuits 1 and 2 joined by a throttle: the Schur
 *   complement couples joints 1 and 2, so the solver falls back to the
 *   dense LU with M' (allocated then): same agreement.
 * - With a point-to-point spring-damper (several joints) tree mode is not
 *   taken; dense solver or numeric Jacobian: not taken.
 * - No allocation in the step loop after the first steps (hymo's own, as
 *   tests/engine/test_no_alloc.c counts them).
 * - Memory: the heap a created chain holds after 20 steps grows as N^p
 *   with p <= 1.2 from N = 32 to 128 (measured 1.0; before tree mode 1.7).
 * - A mechanism alone (bench/gen_models.py pendulum: the chain's links,
 *   gravity only, no hydraulic unknown, the dense block the whole matrix;
 *   and with a joint spring-damper, a diagonal term): N = 64 takes tree
 *   mode with both formulations, never forms M' nor allocates in the step
 *   loop, and agrees with the dense LU to 1e-13 rad in 100 steps (measured
 *   3.3e-14; 5.5e-15 with the spring) with the same iterations and matrix
 *   builds, and with the numeric Jacobian to the Newton tolerance, 1e-6 rad
 *   (measured 1.0e-7; 6.9e-10); below the block's 16 unknowns, or with the
 *   numeric Jacobian, KLU factorises the whole matrix (no tree).  Its
 *   per-step CPU time at N = 1024 is below 8x that at N = 256 (linear 4x;
 *   with Newton's 3.3 iterations against 2.8 about 4.7x; measured 4.2-4.5;
 *   the dense M' and LU 64x, an O(N^2) part 16x) and its heap grows as N^p,
 *   p <= 1.2, from 256 to 1024 (measured 1.00).
 * - The default linear solver (auto) is KLU with tree mode for the pendulum
 *   of 64 and the chain of 20 with the fast Jacobian (both formulations),
 *   the dense LU with the numeric Jacobian, at N = 8, with a point-to-point
 *   spring-damper, with IDA and for the excavator; each run is the explicit
 *   solver's to the bit.
 * - A co-simulation's mechanical subsystem (the chain of 20 with the split
 *   pressure source: chamber pressures as inputs, no hydraulic unknowns,
 *   the actuator stiffness on the diagonal) takes tree mode too, with both
 *   formulations, and agrees with the dense LU to 1e-10 rad in 50 steps
 *   (measured 1.8e-12 with |z| up to 0.59 rad; the same iterations). */

#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "test_util.h"

enum { PLAIN = 0, SHARED = 1, SPRING = 2, MOTOR = 3, BRANCH = 4 };
/* BRANCH: link 11 hangs on link 5 (beside link 6), its cylinder from link 5 */
#define PARENT(k, v) ((v) == BRANCH && (k) == 11 ? 5 : (k) - 1)

/* bench/gen_models.py chain(n) plus the variant's extras */
static char *chain_yaml(int n, int variant)
{
    size_t cap = 4096 + (size_t)n * 1600, len = 0;
    char *s = malloc(cap);
#define OUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    OUT("format: 1\nname: chain%d\ngravity: [9.81, 0, 0]\nsimulation:\n  dt: 1.0e-3\n  t_end: 0.05\n"
        "  max_iterations: 20\n  tolerances: {position: 1.0e-7, pressure: 1.0e-2, spool: 1.0e-7}\n"
        "ground:\n  points:\n    G1: [-0.3, 0.1, 0]\n    S: [0, 1, 0]\nbodies:\n",
        n);
    for (int k = 1; k <= n; ++k) {
        OUT("  - name: l%d\n    joint: {name: q%d, type: revolute, parent: %s%.0d, location: %s, axis: [0, 0, 1], "
            "initial: 0}\n",
            k, k, k == 1 ? "ground" : "l", k == 1 ? 0 : PARENT(k, variant), k == 1 ? "[0, 0, 0]" : "J");
        OUT("    mass: 2\n    com: [0.5, 0, 0]\n    inertia: [0, 0.16666666666666666, 0.16666666666666666]\n"
            "    points:\n      J: [1, 0, 0]\n      R: [0.3, 0.1, 0]\n      T: [1, 0.2, 0]\n%s",
            k < n ? "      B: [0.7, 0.1, 0]\n" : "");
    }
    OUT("forces:\n  - {name: js, type: joint_spring, joint: q3, stiffness: 50, damping: 2, free_position: 0}\n"
        "  - {name: lim, type: joint_limit, joint: q2, lower: -0.5, upper: 5.0e-6, stiffness: 1.0e5, damping: 1.0e3}\n"
        "  - {name: push, type: external, point: l%d.T, frame: global, force: [0, 5, 0]}\n",
        n);
    if (variant == SPRING)
        OUT("  - {name: sd, type: spring_damper, point_a: ground.S, point_b: l2.T, stiffness: 100, damping: 1, "
            "free_length: 1.0}\n");
    OUT("signals:\n  - name: U_ref\n    points: [[0, 0], [0.001, 0], [0.001, 2], [10, 2]]\n"
        "hydraulics:\n  fluid: {bulk_modulus: 1.5e9, density: 850, laminar_transition: 2.0e5}\n"
        "  sources:\n    - {name: pump, pressure: 7.6e6}\n    - {name: tank, pressure: 1.0e5}\n  cylinders:\n");
    for (int k = 1; k <= n; ++k) {
        char base[32];
        if (k == 1) snprintf(base, sizeof base, "ground.G1");
        else snprintf(base, sizeof base, "l%d.B", PARENT(k, variant));
        OUT("    - {name: c%d, base: %s, rod: l%d.R, piston_diameter: 0.04, rod_diameter: 0.02,\n"
            "       length: 0.4, efficiency: 0.9, friction_velocity: 0.01}\n",
            k, base, k);
    }
    OUT("  volumes:\n");
    if (variant == MOTOR)
        OUT("    - {name: ma, parts: [{volume: 1.0e-4, bulk_modulus: 1.0e9}], initial_pressure: static}\n"
            "    - {name: mb, parts: [{volume: 1.0e-4, bulk_modulus: 1.0e9}], initial_pressure: 2.0e6}\n");
    for (int k = 1; k <= n; ++k)
        OUT("    - {name: a%d, parts: [{volume: 2.0e-5, bulk_modulus: 5.5e8}], initial_pressure: static}\n"
            "    - {name: p%d, parts: [{volume: 1.0e-5, bulk_modulus: 5.5e8}, {chamber: c%d.piston, bulk_modulus: "
            "3.15e10}], initial_pressure: static}\n"
            "    - {name: r%d, parts: [{volume: 2.0e-5, bulk_modulus: 5.5e8}, {chamber: c%d.rod, bulk_modulus: "
            "3.15e10}], initial_pressure: 3.5e6}\n",
            k, k, k, k, k);
    OUT("  throttles:\n");
    if (variant == MOTOR)
        OUT("    - {name: tma, from: pump, to: ma, area: 1.0e-7, discharge_coefficient: 0.7}\n"
            "    - {name: tmb, from: mb, to: tank, area: 1.0e-7, discharge_coefficient: 0.7}\n");
    for (int k = 1; k <= n; ++k)
        OUT("    - {name: t%d, from: a%d, to: p%d, area: 2.0e-5, discharge_coefficient: 0.8}\n", k, k, k);
    if (variant == SHARED) OUT("    - {name: tx12, from: p1, to: p2, area: 1.0e-6, discharge_coefficient: 0.8}\n");
    if (variant == MOTOR) /* on joint 10, with a circuit of its own (pump -> ma -> motor -> mb -> tank) */
        OUT("  motors:\n    - {name: mo, joint: q10, port_a: mb, port_b: ma, displacement: 1.0e-5}\n");
    OUT("  valves:\n");
    for (int k = 1; k <= n; ++k)
        OUT("    - {name: v%d, type: 4/3, P: pump, T: tank, A: a%d, B: r%d, flow_coefficient: 2.0e-9,\n"
            "       bandwidth_hz: 35, signal: U_ref}\n",
            k, k, k);
#undef OUT
    assert_true(len < cap);
    return s;
}

static hymo_model *chain_model(int n, int variant)
{
    char *text = chain_yaml(n, variant);
    hymo_model *m = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_string(text, "chain", &m, &err) != HYMO_OK) fail_msg("%s", err.message);
    free(text);
    return m;
}

static hymo_sim *create(const hymo_model *m, int form, int klu, int fast)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.formulation = form ? HYMO_FORMULATION_PENALTY : HYMO_FORMULATION_DOUBLE_STEP;
    opt.linear_solver = klu ? HYMO_LINSOL_KLU : HYMO_LINSOL_DENSE;
    opt.jacobian = fast ? HYMO_JACOBIAN_FAST : HYMO_JACOBIAN_NUMERIC;
    hymo_sim *sim = test_sim_create(m, &opt);
    return sim;
}

static void run_to_end(hymo_sim *sim)
{
    hymo_error err;
    hymo_error_clear(&err);
    while (hymo_sim_time(sim) < sim->opt.t_end - 0.5 * sim->opt.dt)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
}

/* max |difference| of z and of p between two runs */
static void compare(const hymo_sim *a, const hymo_sim *b, double *dz, double *dp)
{
    *dz = *dp = 0.0;
    for (int i = 0; i < a->nz; ++i) *dz = fmax(*dz, fabs(a->mb.z[i] - b->mb.z[i]));
    for (int i = 0; i < a->np; ++i) *dp = fmax(*dp, fabs(a->state.p[i] - b->state.p[i]));
}

static void check_variant(int variant)
{
    hymo_model *m = chain_model(20, variant);
    for (int form = 0; form < 2; ++form) {
        hymo_sim *tree = create(m, form, 1, 1), *dense = create(m, form, 0, 1), *numeric = create(m, form, 0, 0);
        assert_int_equal(tree->jac.tree_mode, 1);
        assert_int_equal(dense->jac.tree_mode, 0);
        assert_int_equal(numeric->jac.tree_mode, 0);
        hymo_error err;
        hymo_error_clear(&err);
        for (int k = 0; k < 10; ++k) /* the first factorisations allocate (KLU, the fallback's dense block) */
            if (hymo_sim_step(tree, &err) != HYMO_OK) fail_msg("%s", err.message);
        const long before = test_n_allocs;
        run_to_end(tree);
        assert_int_equal(test_n_allocs - before, 0); /* none in the step loop */
        run_to_end(dense), run_to_end(numeric);
        assert_true(tree->stats.jacobian_evaluations > 0);
        if (variant != SHARED) assert_true(tree->switching.events >= 1); /* the joint limit engages (an event) */
        assert_int_equal(tree->switching.events, dense->switching.events);
        /* M' is formed only where the complement is not M' + diagonal */
        if (variant == SHARED) assert_non_null(tree->mb.kin.M);
        else assert_null(tree->mb.kin.M);
        /* the same matrix up to round-off: the same iterations and matrix builds */
        assert_int_equal(tree->stats.iterations_total, dense->stats.iterations_total);
        assert_int_equal(tree->stats.jacobian_evaluations, dense->stats.jacobian_evaluations);
        double dz, dp;
        compare(tree, dense, &dz, &dp);
        printf("variant %d formulation %d: %ld events; tree - dense %.3g rad %.3g Pa", variant, form,
               tree->switching.events, dz, dp);
        assert_true(dz <= 5e-16 && dp <= 1e-7);
        compare(tree, numeric, &dz, &dp);
        printf(", tree - numeric %.3g rad %.3g Pa\n", dz, dp);
        assert_true(dz <= 1e-12 && dp <= 1e-3);
        hymo_sim_free(tree), hymo_sim_free(dense), hymo_sim_free(numeric);
    }
    hymo_model_free(m);
}

static void test_plain(void **state) { (void)state, check_variant(PLAIN); }
static void test_motor(void **state) { (void)state, check_variant(MOTOR); }
static void test_branch(void **state) { (void)state, check_variant(BRANCH); }
static void test_shared(void **state) { (void)state, check_variant(SHARED); }

static void test_not_taken(void **state)
{
    (void)state;
    hymo_model *m = chain_model(20, SPRING);
    hymo_sim *sim = create(m, 0, 1, 1);
    assert_int_equal(sim->jac.tree_mode, 0); /* a point-to-point spring-damper */
    hymo_sim_free(sim);
    hymo_model_free(m);
    m = chain_model(8, PLAIN); /* below the Schur block's 16 unknowns */
    sim = create(m, 0, 1, 1);
    assert_int_equal(sim->jac.tree_mode, 0);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

static double held_kb(int n)
{
    hymo_model *m = chain_model(n, PLAIN);
    const size_t before = test_heap_in_use();
    hymo_sim *sim = create(m, 0, 1, 1);
    hymo_error err;
    hymo_error_clear(&err);
    for (int k = 0; k < 20; ++k)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    const double kb = (double)(test_heap_in_use() - before) / 1024.0;
    hymo_sim_free(sim);
    hymo_model_free(m);
    return kb;
}

static void test_memory(void **state)
{
    (void)state;
    test_heap_exponent("chain, tree mode, N = 32 and 128", held_kb(32), held_kb(128), 1.2);
}

/* bench/gen_models.py pendulum(n): the chain's links, gravity only (with
 * spring: a joint spring-damper on q3, a diagonal term of the matrix) */
static hymo_model *pendulum_model(int n, int spring)
{
    size_t cap = 1024 + (size_t)n * 400, len = 0;
    char *s = malloc(cap);
    assert_non_null(s);
#define OUT(...) (len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__))
    OUT("format: 1\nname: pendulum%d\ngravity: [9.81, 0, 0]\nsimulation:\n  dt: 1.0e-3\n  t_end: 0.1\n"
        "  max_iterations: 20\n  tolerances: {position: 1.0e-7, pressure: 1.0e-2, spool: 1.0e-7}\nbodies:\n",
        n);
    for (int k = 1; k <= n; ++k)
        OUT("  - name: l%d\n    joint: {name: q%d, type: revolute, parent: %s%.0d, location: %s, axis: [0, 0, 1], "
            "initial: %s}\n    mass: 2\n    com: [0.5, 0, 0]\n    inertia: [0, 0.16666666666666666, "
            "0.16666666666666666]\n    points:\n      J: [1, 0, 0]\n",
            k, k, k == 1 ? "ground" : "l", k == 1 ? 0 : k - 1, k == 1 ? "[0, 0, 0]" : "J", k == 1 ? "30 deg" : "0");
    if (spring)
        OUT("forces:\n  - {name: js, type: joint_spring, joint: q3, stiffness: 5000, damping: 20, free_position: 0}\n");
#undef OUT
    assert_true(len < cap);
    hymo_model *m = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_string(s, "pendulum", &m, &err) != HYMO_OK) fail_msg("%s", err.message);
    free(s);
    return m;
}

static void check_mechanics(int spring)
{
    hymo_model *m = pendulum_model(64, spring);
    for (int form = 0; form < 2; ++form) {
        hymo_sim *tree = create(m, form, 1, 1), *dense = create(m, form, 0, 1), *numeric = create(m, form, 0, 0);
        assert_int_equal(tree->np + tree->nu, 0); /* no hydraulic unknown: the block is the whole matrix */
        assert_int_equal(tree->jac.tree_mode, 1);
        assert_int_equal(dense->jac.tree_mode, 0);
        hymo_error err;
        hymo_error_clear(&err);
        for (int k = 0; k < 10; ++k)
            if (hymo_sim_step(tree, &err) != HYMO_OK) fail_msg("%s", err.message);
        const long before = test_n_allocs;
        run_to_end(tree);
        assert_int_equal(test_n_allocs - before, 0);
        run_to_end(dense), run_to_end(numeric);
        assert_null(tree->mb.kin.M);
        assert_int_equal(tree->stats.iterations_total, dense->stats.iterations_total);
        assert_int_equal(tree->stats.jacobian_evaluations, dense->stats.jacobian_evaluations);
        double dz, dp, dzn;
        compare(tree, dense, &dz, &dp);
        compare(tree, numeric, &dzn, &dp);
        printf("pendulum N = 64%s, formulation %d: tree - dense %.3g rad, tree - numeric %.3g rad\n",
               spring ? " with a joint spring" : "", form, dz, dzn);
        assert_true(dz <= 1e-13);
        assert_true(dzn <= 1e-6);
        hymo_sim_free(tree), hymo_sim_free(dense), hymo_sim_free(numeric);
    }
    hymo_model_free(m);
}

static void test_mechanics(void **state)
{
    (void)state;
    check_mechanics(0);
    check_mechanics(1);
    hymo_model *m = pendulum_model(64, 0); /* the numeric Jacobian: KLU on the whole matrix */
    hymo_sim *sim = create(m, 0, 1, 0);
    assert_int_equal(sim->jac.tree_mode, 0);
    run_to_end(sim);
    hymo_sim_free(sim);
    hymo_model_free(m);
    m = pendulum_model(8, 0); /* below the block's 16 unknowns */
    sim = create(m, 1, 1, 1);
    assert_int_equal(sim->jac.tree_mode, 0);
    run_to_end(sim);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

/* The default linear solver (auto) with the given Jacobian and integrator */
static hymo_sim *create_auto(const hymo_model *m, int form, int fast, int ida)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    assert_int_equal(opt.linear_solver, HYMO_LINSOL_AUTO);
    opt.formulation = form ? HYMO_FORMULATION_PENALTY : HYMO_FORMULATION_DOUBLE_STEP;
    opt.jacobian = fast ? HYMO_JACOBIAN_FAST : HYMO_JACOBIAN_NUMERIC;
    if (ida) opt.integrator = HYMO_INTEGRATOR_IDA;
    return test_sim_create(m, &opt);
}

/* auto resolved to `kind` (the summary's name too) and, with tree mode as
 * `tree`, the same run as the explicit solver to the bit over 20 steps */
static void check_auto(const hymo_model *m, int form, int fast, hymo_linsol_kind kind, int tree)
{
    hymo_sim *a = create_auto(m, form, fast, 0), *e = create(m, form, kind == HYMO_LINSOL_KLU, fast);
    assert_int_equal(a->opt.linear_solver, kind);
    assert_int_equal(a->jac.tree_mode, tree);
    hymo_run_summary sum;
    hymo_sim_summary(a, &sum);
    assert_string_equal(sum.linear_solver, hymo_linsol_name(kind));
    hymo_error err;
    hymo_error_clear(&err);
    for (int k = 0; k < 20; ++k)
        if (hymo_sim_step(a, &err) != HYMO_OK || hymo_sim_step(e, &err) != HYMO_OK) fail_msg("%s", err.message);
    assert_memory_equal(a->mb.z, e->mb.z, (size_t)a->nz * sizeof(double));
    hymo_sim_free(a), hymo_sim_free(e);
}

/* The default linear solver: KLU where tree mode applies (the pendulum and
 * the chain with cylinders, N >= 16, fast Jacobian, both formulations),
 * the dense LU otherwise (numeric Jacobian, N = 8, IDA, a shipped model) */
static void test_auto(void **state)
{
    (void)state;
    hymo_model *m = pendulum_model(64, 0);
    for (int form = 0; form < 2; ++form) {
        check_auto(m, form, 1, HYMO_LINSOL_KLU, 1);
        check_auto(m, form, 0, HYMO_LINSOL_DENSE, 0);
    }
    hymo_sim *sim = create_auto(m, 0, 1, 1); /* IDA: its own dense solver */
    assert_int_equal(sim->opt.linear_solver, HYMO_LINSOL_DENSE);
    hymo_sim_free(sim);
    hymo_model_free(m);
    m = pendulum_model(8, 0);
    check_auto(m, 0, 1, HYMO_LINSOL_DENSE, 0);
    hymo_model_free(m);
    m = chain_model(20, PLAIN);
    check_auto(m, 0, 1, HYMO_LINSOL_KLU, 1);
    hymo_model_free(m);
    m = chain_model(20, SPRING); /* a point-to-point spring-damper: no tree */
    check_auto(m, 0, 1, HYMO_LINSOL_DENSE, 0);
    hymo_model_free(m);
    m = test_load_model("excavator.yaml");
    for (int fast = 0; fast < 2; ++fast) check_auto(m, 0, fast, HYMO_LINSOL_DENSE, 0);
    hymo_model_free(m);
}

/* A co-simulation's mechanical subsystem: the chain with the split
 * pressure source (the chambers' pressures are inputs; no hydraulic
 * unknowns), the actuator stiffness a diagonal term */
static hymo_sim *create_split(const hymo_model *m, int form, int klu)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.formulation = form ? HYMO_FORMULATION_PENALTY : HYMO_FORMULATION_DOUBLE_STEP;
    opt.linear_solver = klu ? HYMO_LINSOL_KLU : HYMO_LINSOL_DENSE;
    opt.jacobian = HYMO_JACOBIAN_FAST;
    const hymo_sim_tables tables = {.forces = &hymo_forces_split_pressure_ops};
    hymo_sim *sim = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_sim_create_with(m, &opt, &tables, &sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    double p[2 * 20];
    for (int a = 0; a < 20; ++a) p[2 * a] = 3.0e6, p[2 * a + 1] = 1.0e6;
    sim->forces->set_inputs(sim, p);
    return sim;
}

static void test_split(void **state)
{
    (void)state;
    hymo_model *m = chain_model(20, PLAIN);
    for (int form = 0; form < 2; ++form) {
        hymo_sim *tree = create_split(m, form, 1), *dense = create_split(m, form, 0);
        assert_int_equal(tree->nx, tree->nxm);
        assert_int_equal(tree->jac.tree_mode, 1);
        run_to_end(tree), run_to_end(dense);
        assert_null(tree->mb.kin.M);
        assert_int_equal(tree->stats.iterations_total, dense->stats.iterations_total);
        double dz, dp;
        compare(tree, dense, &dz, &dp);
        double zmax = 0.0;
        for (int i = 0; i < tree->nz; ++i) zmax = fmax(zmax, fabs(tree->mb.z[i]));
        printf("split pressure source, formulation %d: tree - dense %.3g rad (max |z| %.3g rad, %ld iterations)\n",
               form, dz, zmax, tree->stats.iterations_total);
        assert_true(dz <= 1e-10);
        hymo_sim_free(tree), hymo_sim_free(dense);
    }
    hymo_model_free(m);
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds per step over k steps after two (the first factorisation's set-up) */
static double step_cost(const hymo_model *m, int k, double *held_kb)
{
    const size_t heap0 = test_heap_in_use();
    hymo_sim *sim = create(m, 0, 1, 1);
    assert_int_equal(sim->jac.tree_mode, 1);
    hymo_error err;
    hymo_error_clear(&err);
    for (int i = 0; i < 2; ++i)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    const double t0 = cpu_s();
    for (int i = 0; i < k; ++i)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    const double t = (cpu_s() - t0) / k;
    assert_null(sim->mb.kin.M);
    *held_kb = (double)(test_heap_in_use() - heap0) / 1024.0;
    hymo_sim_free(sim);
    return t;
}

static void test_mechanics_linear(void **state)
{
    (void)state;
    hymo_model *a = pendulum_model(256, 0), *b = pendulum_model(1024, 0);
    double ta = INFINITY, tb = INFINITY, ka = 0.0, kb = 0.0;
    for (int r = 0; r < 3; ++r) /* interleaved, the minimum of each: load on the machine affects both alike */
        ta = fmin(ta, step_cost(a, 20, &ka)), tb = fmin(tb, step_cost(b, 20, &kb));
    printf("pendulum, tree mode: N = 256 %.3f ms/step, N = 1024 %.3f ms/step (CPU), ratio %.2f (linear 4)\n",
           1e3 * ta, 1e3 * tb, tb / ta);
    hymo_model_free(a), hymo_model_free(b); /* before the checks: a skip or failure returns at once */
    assert_true(tb / ta < 8.0);
    test_heap_exponent("pendulum, tree mode, N = 256 and 1024", ka, kb, 1.2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_shared),
        cmocka_unit_test(test_motor),
        cmocka_unit_test(test_branch),
        cmocka_unit_test(test_not_taken),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_mechanics),
        cmocka_unit_test(test_mechanics_linear),
        cmocka_unit_test(test_auto),
        cmocka_unit_test(test_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
