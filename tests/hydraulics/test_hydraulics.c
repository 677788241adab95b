/* Hydraulic side of split-mode co-simulation (SPEC §7):
 *
 *   1. circuit partition of the seed models (and elements touching no volume);
 *   2. hymo_circuit_eval_part on both circuits of crane2 == hymo_circuit_eval
 *      on the whole model, bit for bit, and untouched entries stay untouched;
 *   3. the subsystem at rest stays at rest (all integrators);
 *   4. observed orders of Euler, trapezoidal rule and RK4 against a fine RK4
 *      solution, with a smooth prescribed motion and an open valve;
 *   5. H/h not an integer (re-divided), a volume driven to zero, get/set_state replay;
 *   6. ns per internal step (printed, not asserted).
 * HYMO_TEST_VERBOSE=1 prints the errors of the order test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "circuit.h"
#include "elements.h"
#include "hyd_subsystem.h"
#include "hymo/sim.h"
#include "test_util.h"

#define PI 3.14159265358979323846

static const hymo_hyd_integrator_kind all_kinds[3] = {HYMO_HYD_EULER, HYMO_HYD_RK4, HYMO_HYD_TRAPEZOIDAL};


static int index_of(const char *what, const hymo_model *m, const char *name)
{
    if (strcmp(what, "valve") == 0) {
        for (int v = 0; v < m->n_valves; ++v)
            if (strcmp(m->valves[v].name, name) == 0) return v;
    } else if (strcmp(what, "throttle") == 0) {
        for (int t = 0; t < m->n_throttles; ++t)
            if (strcmp(m->throttles[t].name, name) == 0) return t;
    } else {
        for (int c = 0; c < m->n_cylinders; ++c)
            if (strcmp(m->cylinders[c].name, name) == 0) return c;
    }
    fail_msg("no %s %s", what, name);
    return -1;
}

/* part lists == the named elements, in increasing index order */
static void check_part(const hymo_model *m, const hymo_circuit_part *pt, const char *name, int nvol,
                       const char *const *vols, const char *valve, const char *throttle, const char *cyl)
{
    assert_string_equal(pt->name, name);
    assert_int_equal(pt->n_volumes, nvol);
    for (int i = 0; i < nvol; ++i) assert_int_equal(pt->volumes[i], test_volume_state(m, vols[i]));
    assert_int_equal(pt->n_valves, 1);
    assert_int_equal(pt->valves[0], index_of("valve", m, valve));
    assert_int_equal(pt->n_throttles, 1);
    assert_int_equal(pt->throttles[0], index_of("throttle", m, throttle));
    assert_int_equal(pt->n_cylinders, 1);
    assert_int_equal(pt->cylinders[0], index_of("cylinder", m, cyl));
}

/* ------------------------------------------------------------------ */
/* 1. Partition                                                        */

static void test_partition(void **state)
{
    (void)state;
    hymo_error err;
    hymo_circuit_part *parts = NULL;
    int n = 0;

    hymo_model *m = test_load_model("crane1.yaml");
    assert_int_equal(hymo_circuit_partition(m, &parts, &n, &err), HYMO_OK);
    assert_int_equal(n, 1);
    const char *c1[] = {"V1", "V2", "V3"};
    check_part(m, &parts[0], "circuit1(cyl1)", 3, c1, "dcv1", "throttle1", "cyl1");
    hymo_circuit_parts_free(parts, n);
    hymo_model_free(m);

    /* crane2: two circuits sharing pump and tank */
    m = test_load_model("crane2.yaml");
    assert_int_equal(hymo_circuit_partition(m, &parts, &n, &err), HYMO_OK);
    assert_int_equal(n, 2);
    const char *c2[] = {"V4", "V5", "V6"};
    check_part(m, &parts[0], "circuit1(cyl1)", 3, c1, "dcv1", "throttle1", "cyl1");
    check_part(m, &parts[1], "circuit2(cyl2)", 3, c2, "dcv2", "throttle2", "cyl2");
    hymo_circuit_parts_free(parts, n);

    /* elements touching no volume are errors naming them */
    const int pump = test_node_index(m, "pump"), tank = test_node_index(m, "tank");
    hymo_throttle th = m->throttles[1];
    m->throttles[1].node_a = pump;
    m->throttles[1].node_b = tank;
    hymo_circuit_part dummy;
    parts = &dummy; /* must be reset to NULL */
    assert_int_equal(hymo_circuit_partition(m, &parts, &n, &err), HYMO_ERR_MODEL);
    assert_null(parts);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err.message, ": hydraulics.throttles[1] (throttle2): connects no volume (pump - tank), so "
                                        "it belongs to no hydraulic circuit"));
    m->throttles[1] = th;
    hymo_valve va = m->valves[0];
    m->valves[0].port_A = pump;
    m->valves[0].port_B = tank;
    assert_int_equal(hymo_circuit_partition(m, &parts, &n, &err), HYMO_ERR_MODEL);
    assert_non_null(strstr(err.message, ": hydraulics.valves[0] (dcv1): none of its ports P, T, A, B is a volume, so "
                                        "it belongs to no hydraulic circuit"));
    m->valves[0] = va;
    hymo_cylinder cy = m->cylinders[1];
    m->cylinders[1].node_piston = pump;
    m->cylinders[1].node_rod = tank;
    assert_int_equal(hymo_circuit_partition(m, &parts, &n, &err), HYMO_ERR_MODEL);
    assert_non_null(strstr(err.message, ": hydraulics.cylinders[1] (cyl2): neither chamber is a volume, so it belongs "
                                        "to no hydraulic circuit"));
    m->cylinders[1] = cy;
    /* the first such element in the kinds' order is named: the throttle
     * before the cylinder */
    m->throttles[1].node_a = pump;
    m->throttles[1].node_b = tank;
    const hymo_cylinder cy0 = m->cylinders[0];
    m->cylinders[0].node_piston = pump;
    m->cylinders[0].node_rod = tank;
    assert_int_equal(hymo_circuit_partition(m, &parts, &n, &err), HYMO_ERR_MODEL);
    assert_non_null(strstr(err.message, "(throttle2)"));
    m->throttles[1] = th;
    m->cylinders[0] = cy0;
    hymo_model_free(m);

    /* four-bar: one circuit with all its volumes */
    m = test_load_model("fourbar.yaml");
    assert_int_equal(hymo_circuit_partition(m, &parts, &n, &err), HYMO_OK);
    assert_int_equal(n, 1);
    const char *c3[] = {"V1", "V2", "V3"};
    check_part(m, &parts[0], "circuit1(cyl)", 3, c3, "dcv", "throttle", "cyl");
    assert_int_equal(parts[0].n_volumes, m->n_volumes);
    hymo_circuit_parts_free(parts, n);
    hymo_model_free(m);
}

/* Every element of every kind lies in exactly one circuit, and so do all
 * of its ports that are volumes (elements with sources among their ports
 * included: relief valves and pumps to and from tanks). */
static void check_partition_complete(hymo_model *m)
{
    hymo_error err;
    hymo_circuit_part *parts = NULL;
    int n = 0;
    assert_int_equal(hymo_circuit_partition(m, &parts, &n, &err), HYMO_OK);
    int n_volumes = 0;
    for (int c = 0; c < n; ++c) n_volumes += parts[c].n_volumes;
    assert_int_equal(n_volumes, m->n_volumes);
    for (int kd = 0; kd < HYMO_ELEMENT_KINDS; ++kd) {
        const hymo_element_kind *K = &hymo_element_kinds[kd];
        for (int i = 0; i < K->count(m); ++i) {
            int found = 0;
            for (int c = 0; c < n; ++c) {
                int ne;
                const int *el = hymo_part_elements(&parts[c], K, &ne);
                for (int j = 0; j < ne; ++j) {
                    if (el[j] != i) continue;
                    ++found;
                    int nodes[HYMO_ELEMENT_PORTS_MAX];
                    K->ports(m, i, nodes);
                    for (int q = 0; q < K->n_ports; ++q) {
                        const hymo_node *nd = &m->nodes[nodes[q]];
                        int in = nd->kind != HYMO_NODE_VOLUME;
                        for (int v = 0; v < parts[c].n_volumes; ++v) in |= parts[c].volumes[v] == nd->state;
                        if (!in) fail_msg("%s %s: port %s not in its circuit %s", K->kind, K->name(m, i), nd->name,
                                          parts[c].name);
                    }
                }
            }
            if (found != 1) fail_msg("%s %s in %d circuits", K->kind, K->name(m, i), found);
        }
    }
    int n_reliefs = 0, n_pumps = 0, n_motors = 0;
    for (int c = 0; c < n; ++c)
        n_reliefs += parts[c].n_reliefs, n_pumps += parts[c].n_pumps, n_motors += parts[c].n_motors;
    assert_int_equal(n_reliefs, m->n_relief_valves);
    assert_int_equal(n_pumps, m->n_pumps);
    assert_int_equal(n_motors, m->n_motors);
    hymo_circuit_parts_free(parts, n);
    hymo_model_free(m);
}

static void test_partition_complete(void **state)
{
    (void)state;
    const char *data[] = {"crane2.yaml", "excavator.yaml", "forestry_crane.yaml", "pump_demo.yaml",
                          "relief_demo.yaml"};
    const char *models[] = {"load_check.yaml", "makeup_demo.yaml", "motor_pendulum.yaml", "pump_signal_line.yaml",
                            "valves_line.yaml"};
    for (size_t i = 0; i < sizeof data / sizeof data[0]; ++i) check_partition_complete(test_load_model(data[i]));
    for (size_t i = 0; i < sizeof models / sizeof models[0]; ++i)
        check_partition_complete(test_load_test_model(models[i]));
    /* two circuits, an element of the second with a source as its last port */
    hymo_model *m = test_load_model("crane2.yaml");
    m->throttles[1].node_b = test_node_index(m, "tank");
    check_partition_complete(m);
}

/* ------------------------------------------------------------------ */
/* 2. eval_part == eval                                                */

static double lcg_uniform(unsigned long long *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*x >> 11) / 9007199254740992.0;
}

static void test_eval_part_crane2(void **state)
{
    (void)state;
    hymo_error err;
    hymo_model *m = test_load_model("crane2.yaml");
    const int np = m->n_volumes, nu = m->n_valves, na = m->n_cylinders;
    assert_int_equal(np, 6);
    double s0[2] = {0.5, sqrt(3.0) / 4.0};
    hymo_circuit circ;
    assert_int_equal(hymo_circuit_init(&circ, m, s0, &err), HYMO_OK);
    hymo_circuit_part *parts;
    int n;
    assert_int_equal(hymo_circuit_partition(m, &parts, &n, &err), HYMO_OK);
    assert_int_equal(n, 2);
    const double SENT = -12345.678;
    unsigned long long seed = 42;
    for (int trial = 0; trial < 2000; ++trial) {
        double s[2], sd[2], p[6], u[2], ur[2];
        for (int c = 0; c < na; ++c) {
            /* within +-2 cm of s0: both end dampers are reached (l_d = 8 mm) */
            s[c] = s0[c] + (trial % 2 ? 0.04 : 0.3) * (lcg_uniform(&seed) - 0.5);
            sd[c] = 0.4 * (lcg_uniform(&seed) - 0.5);
        }
        for (int k = 0; k < np; ++k) p[k] = 1e5 + 8e6 * lcg_uniform(&seed);
        if (trial % 3 == 0) /* laminar region of every orifice */
            for (int k = 1; k < np; ++k) p[k] = p[0] + 4e5 * (lcg_uniform(&seed) - 0.5);
        for (int v = 0; v < nu; ++v) {
            u[v] = trial % 5 == 0 ? 0.0 : 20.0 * (lcg_uniform(&seed) - 0.5);
            ur[v] = 20.0 * (lcg_uniform(&seed) - 0.5);
        }
        double pd[6], ud[2], f[2], pdp[6], udp[2], fp[2];
        int rw = hymo_circuit_eval(&circ, m, s, sd, p, u, ur, pd, ud, f);
        for (int k = 0; k < np; ++k) pdp[k] = SENT;
        for (int k = 0; k < nu; ++k) udp[k] = SENT;
        for (int k = 0; k < na; ++k) fp[k] = SENT;
        int r0 = hymo_circuit_eval_part(&circ, m, &parts[0], s, sd, p, u, ur, pdp, udp, fp);
        /* part 0 wrote only its own entries */
        for (int i = 0; i < parts[1].n_volumes; ++i) assert_true(pdp[parts[1].volumes[i]] == SENT);
        assert_true(udp[m->valves[parts[1].valves[0]].state] == SENT);
        assert_true(fp[parts[1].cylinders[0]] == SENT);
        int r1 = hymo_circuit_eval_part(&circ, m, &parts[1], s, sd, p, u, ur, pdp, udp, fp);
        assert_int_equal(rw, (r0 != 0 || r1 != 0) ? -1 : 0);
        if (rw != 0) continue; /* a volume <= 0 (s far out): outputs undefined */
        assert_memory_equal(pd, pdp, sizeof pd);
        assert_memory_equal(ud, udp, sizeof ud);
        assert_memory_equal(f, fp, sizeof f);
    }
    hymo_circuit_parts_free(parts, n);
    hymo_circuit_free(&circ);
    hymo_model_free(m);
}

/* hymo_circuit_eval_part_cached == hymo_circuit_eval_part_node to the bit
 * on each part of crane2, whether the motion repeats (the sizes reused at
 * new pressures and spools) or changes (in s only, in sd only, by one
 * bit), and the first non-positive volume named alike. */
static void test_volume_cache(void **state)
{
    (void)state;
    hymo_error err;
    hymo_model *m = test_load_model("crane2.yaml");
    const int np = m->n_volumes, nu = m->n_valves, na = m->n_cylinders;
    double s0[2] = {0.5, sqrt(3.0) / 4.0};
    hymo_circuit circ;
    assert_int_equal(hymo_circuit_init(&circ, m, s0, &err), HYMO_OK);
    hymo_circuit_part *parts;
    int n;
    assert_int_equal(hymo_circuit_partition(m, &parts, &n, &err), HYMO_OK);
    hymo_volume_cache vc[2];
    for (int k = 0; k < n; ++k) assert_int_equal(hymo_volume_cache_init(&vc[k], &circ, m), 0);
    assert_int_equal(vc[0].w_const, 1);
    unsigned long long seed = 7;
    double s[2], sd[2];
    int hits = 0;
    for (int trial = 0; trial < 4000; ++trial) {
        const int change = trial % 7; /* 0, 1: the same motion; 2: s; 3: sd; 4: one bit of s; else both */
        for (int c = 0; c < na; ++c) {
            if (trial == 0 || change == 2 || change >= 5) s[c] = s0[c] + 0.3 * (lcg_uniform(&seed) - 0.5);
            if (trial == 0 || change == 3 || change >= 5) sd[c] = 0.4 * (lcg_uniform(&seed) - 0.5);
            if (change == 4) s[c] = nextafter(s[c], 1.0);
        }
        hits += change < 2;
        double p[6], u[2], ur[2];
        for (int k = 0; k < np; ++k) p[k] = 1e5 + 8e6 * lcg_uniform(&seed);
        for (int v = 0; v < nu; ++v) u[v] = 20.0 * (lcg_uniform(&seed) - 0.5), ur[v] = 20.0 * (lcg_uniform(&seed) - 0.5);
        for (int k = 0; k < n; ++k) {
            double pd[6] = {0}, ud[2] = {0}, pdc[6] = {0}, udc[2] = {0};
            const int r = hymo_circuit_eval_part_node(&circ, m, &parts[k], s, sd, p, u, ur, pd, ud, NULL);
            const int rc = hymo_circuit_eval_part_cached(&circ, m, &parts[k], s, sd, p, u, ur, pdc, udc, NULL, &vc[k]);
            assert_int_equal(r, rc);
            if (r >= 0) continue;
            assert_memory_equal(pd, pdc, sizeof pd);
            assert_memory_equal(ud, udc, sizeof ud);
        }
    }
    assert_true(hits > 1000);
    for (int k = 0; k < n; ++k) hymo_volume_cache_free(&vc[k]);
    hymo_circuit_parts_free(parts, n);
    hymo_circuit_free(&circ);
    hymo_model_free(m);
}

/* ------------------------------------------------------------------ */
/* Helpers: crane1 initial state from the monolithic engine            */

typedef struct {
    hymo_model *m;
    hymo_circuit circ;
    hymo_circuit_part *parts;
    int n_parts;
    double s0, p0[3], u0[1], f0;
} crane1_setup;

static void crane1_open(crane1_setup *cs)
{
    hymo_error err;
    cs->m = test_load_model("crane1.yaml");
    hymo_sim *sim = test_sim_create(cs->m, NULL);
    assert_int_equal(hymo_sim_np(sim), 3);
    assert_int_equal(hymo_sim_nu(sim), 1);
    cs->s0 = hymo_sim_actuator_length(sim)[0];
    memcpy(cs->p0, hymo_sim_p(sim), sizeof cs->p0);
    memcpy(cs->u0, hymo_sim_u(sim), sizeof cs->u0);
    cs->f0 = hymo_sim_actuator_force(sim)[0];
    hymo_sim_free(sim);
    assert_int_equal(hymo_circuit_init(&cs->circ, cs->m, &cs->s0, &err), HYMO_OK);
    assert_int_equal(hymo_circuit_partition(cs->m, &cs->parts, &cs->n_parts, &err), HYMO_OK);
}

static void crane1_close(crane1_setup *cs)
{
    hymo_circuit_parts_free(cs->parts, cs->n_parts);
    hymo_circuit_free(&cs->circ);
    hymo_model_free(cs->m);
}

static hymo_hyd_sub *make_sub(crane1_setup *cs, hymo_hyd_integrator_kind kind, double h, double tol_p,
                              double tol_u, const double *p0, const double *u0)
{
    hymo_hyd_sub *sub = NULL;
    hymo_error err;
    if (hymo_hyd_sub_create(cs->m, &cs->circ, &cs->parts[0], kind, h, tol_p, tol_u, 20, p0, u0, &sub, &err) !=
        HYMO_OK)
        fail_msg("%s", err.message);
    return sub;
}

/* cmocka's setup and teardown: a fresh crane1_setup for each test in *state */
static int crane1_setup_fn(void **state)
{
    crane1_setup *cs = calloc(1, sizeof *cs);
    assert_non_null(cs);
    crane1_open(cs);
    *state = cs;
    return 0;
}

static int crane1_teardown_fn(void **state)
{
    crane1_close(*state);
    free(*state);
    return 0;
}

/* the tests' common subsystem: all_kinds[k], h = 0.1 ms, tolerances 1e-2 Pa
 * and 1e-7 V, crane1's initial state */
static hymo_hyd_sub *default_sub(crane1_setup *cs, int k)
{
    return make_sub(cs, all_kinds[k], 1e-4, 1e-2, 1e-7, cs->p0, cs->u0);
}

/* ------------------------------------------------------------------ */
/* 3. Rest                                                             */

static void test_rest(void **state)
{
    crane1_setup *cs = *state;
    /* crane1's U_ref is 0 on [0, 1] s (left limit at 1 s included) */
    assert_true(hymo_signal_eval(&cs->m->signals[0], 1.0, -1) == 0.0);
    for (int k = 0; k < 3; ++k) {
        hymo_hyd_sub *sub = default_sub(cs, k);
        double c_s[4] = {cs->s0, 0, 0, 0}, c_v[4] = {0, 0, 0, 0}, force;
        /* force at rest = the monolithic static force (same F_s code, same state) */
        hymo_hyd_sub_set_motion(sub, 0.0, c_s, c_v);
        hymo_hyd_sub_force(sub, 0.0, &force);
        assert_close(force, cs->f0, 1e-12 * fabs(cs->f0));
        hymo_error err;
        for (int i = 0; i < 100; ++i) { /* H = 10 ms = 100 h, to t = 1 s */
            double t = i * 0.01;
            hymo_hyd_sub_set_motion(sub, t, c_s, c_v);
            if (hymo_hyd_sub_do_step(sub, t, 0.01, &err) != HYMO_OK) fail_msg("%s", err.message);
        }
        const double *p = hymo_hyd_sub_p(sub), *u = hymo_hyd_sub_u(sub);
        for (int j = 0; j < 3; ++j) assert_close(p[j], cs->p0[j], 1e-6);
        assert_close(u[0], 0.0, 1e-12);
        long steps, evals, iters;
        hymo_hyd_sub_stats(sub, &steps, &evals, &iters);
        assert_int_equal(steps, 10000);
        hymo_hyd_sub_free(sub);
    }
}

/* ------------------------------------------------------------------ */
/* 4. Orders                                                           */

/* Operating point (crane1 circuit, motion prescribed):
 *   s(t) = s0 + V t + A sin(W t), A = 0.15 mm, W = 2 pi 20 Hz, V = 2.2 mm/s,
 *   U(0) = 0.5 V, U_ref(t) = 0.5 + t V (the model's signal replaced by a
 *   single linear piece, so U_ref is smooth on [0, 0.2] s).
 * V balances the valve's inflow so the pressures do not drift towards the
 * pump pressure; along the whole run every valve edge stays turbulent
 * (|dp| > p_tr), the throttle laminar (|dp| < p_tr) and U > 0 (asserted on
 * the reference run), so the right-hand side is smooth (C-infinity) along
 * the solution. The motion reaches the subsystem as its cubic Taylor
 * polynomial at each step start; its truncation error (O(h^4) in s and sd)
 * adds O(h^5) per step, i.e. O(h^4) globally, below every method's order.
 * Expected orders on a smooth problem: forward Euler 1 (local error
 * O(h^2)), trapezoidal rule 2 (local error -h^3 y'''/12), classical RK4 4.
 * Step sizes: the fastest mode (laminar throttle between V3 and V1) has
 * |lambda| ~ 1.3e4 1/s; h = 4e-5 ... 1e-5 keeps h |lambda| <= 0.5, where
 * the asymptotic regime holds (at 8e-5 RK4 still shows ~4.35); smaller h
 * would bring RK4's errors (3e-6 Pa at 1e-5) down to the round-off of the
 * reference (RK4, h = 2e-6: truncation ~5e-9 Pa). */
#define ORD_A 1.5e-4
#define ORD_W (2.0 * PI * 20.0)
#define ORD_V 2.2e-3
#define ORD_T 0.2

static void taylor_motion(double s0, double t, double *c_s, double *c_v)
{
    const double A = ORD_A, W = ORD_W, sn = sin(W * t), cn = cos(W * t);
    c_s[0] = s0 + ORD_V * t + A * sn;
    c_s[1] = ORD_V + A * W * cn;
    c_s[2] = -A * W * W * sn / 2.0;
    c_s[3] = -A * W * W * W * cn / 6.0;
    c_v[0] = ORD_V + A * W * cn;
    c_v[1] = -A * W * W * sn;
    c_v[2] = -A * W * W * W * cn / 2.0;
    c_v[3] = A * W * W * W * W * sn / 6.0;
}

/* Runs to ORD_T with H = h; final p, u. margins (if non-NULL): smallest
 * |dp| / p_tr over the valve edges, largest over the throttle, smallest U. */
static void order_run(crane1_setup *cs, hymo_hyd_integrator_kind kind, double h, double *p, double *u,
                      double *margins)
{
    const double u0[1] = {0.5};
    hymo_hyd_sub *sub = make_sub(cs, kind, h, 1e-4, 1e-10, cs->p0, u0);
    const long n = lround(ORD_T / h);
    const double ptr = cs->m->fluid.p_transition, pP = 7.6e6, pT = 1e5;
    if (margins) margins[0] = margins[2] = HUGE_VAL, margins[1] = 0.0;
    hymo_error err;
    for (long i = 0; i < n; ++i) {
        double t = (double)i * h, c_s[4], c_v[4];
        taylor_motion(cs->s0, t, c_s, c_v);
        hymo_hyd_sub_set_motion(sub, t, c_s, c_v);
        if (hymo_hyd_sub_do_step(sub, t, h, &err) != HYMO_OK) fail_msg("%s h=%g: %s", hymo_hyd_integrator_name(kind), h, err.message);
        if (margins) {
            const double *q = hymo_hyd_sub_p(sub);
            /* V1 = 0, V2 = 1, V3 = 2: P->A (pump -> V3), B->T (V2 -> tank), throttle V3 -> V1 */
            margins[0] = fmin(margins[0], fmin(fabs(pP - q[2]), fabs(q[1] - pT)) / ptr);
            margins[1] = fmax(margins[1], fabs(q[2] - q[0]) / ptr);
            margins[2] = fmin(margins[2], hymo_hyd_sub_u(sub)[0]);
        }
    }
    memcpy(p, hymo_hyd_sub_p(sub), 3 * sizeof(double));
    u[0] = hymo_hyd_sub_u(sub)[0];
    hymo_hyd_sub_free(sub);
}

static void test_orders(void **state)
{
    crane1_setup *cs = *state;
    /* open valve: U_ref = 0.5 V + 1 V/s t (one linear piece) */
    hymo_signal *sig = &cs->m->signals[0];
    sig->n_points = 2;
    sig->t[0] = 0.0;
    sig->v[0] = 0.5;
    sig->t[1] = 1.0;
    sig->v[1] = 1.5;
    assert_int_equal(test_volume_state(cs->m, "V1"), 0);
    assert_int_equal(test_volume_state(cs->m, "V2"), 1);
    assert_int_equal(test_volume_state(cs->m, "V3"), 2);

    double pr[3], ur[1], margins[3];
    order_run(cs, HYMO_HYD_RK4, 2e-6, pr, ur, margins);
    assert_true(margins[0] > 5.0);  /* valve edges turbulent (>= 10 in fact) */
    assert_true(margins[1] < 0.25); /* throttle laminar (~0.11) */
    assert_true(margins[2] > 0.49); /* U > 0: one valve branch */

    const double hs[3] = {4e-5, 2e-5, 1e-5};
    const double expect[3] = {1.0, 4.0, 2.0}, slack[3] = {0.2, 0.4, 0.2};
    const int verbose = getenv("HYMO_TEST_VERBOSE") != NULL;
    for (int k = 0; k < 3; ++k) {
        double e[3];
        for (int i = 0; i < 3; ++i) {
            double p[3], u[1];
            order_run(cs, all_kinds[k], hs[i], p, u, NULL);
            e[i] = 0.0;
            for (int j = 0; j < 3; ++j) e[i] = fmax(e[i], fabs(p[j] - pr[j]));
        }
        for (int i = 0; i < 2; ++i) {
            double order = log2(e[i] / e[i + 1]);
            if (verbose)
                fprintf(stderr, "    %-11s h = %g -> %g: error %.4g -> %.4g Pa, order %.3f\n",
                        hymo_hyd_integrator_name(all_kinds[k]), hs[i], hs[i + 1], e[i], e[i + 1], order);
            assert_close(order, expect[k], slack[k]);
        }
    }
}

/* ------------------------------------------------------------------ */
/* 5. Arguments, failures, state round trip, names                     */

/* H not a whole multiple of h: ceil(H/h) equal steps of H/N, the same as a
 * part whose h is H/N; H <= 0 or more than 1e9 steps is refused. */
static void test_bad_step_ratio(void **state)
{
    crane1_setup *cs = *state;
    const double c_s[4] = {cs->s0, 0.01, 0, 0}, c_v[4] = {0.01, 0, 0, 0};
    for (int k = 0; k < 3; ++k) {
        hymo_hyd_sub *sub = default_sub(cs, k), *ref = make_sub(cs, all_kinds[k], 2.5e-4 / 3.0, 1e-2, 1e-7, cs->p0,
                                                                cs->u0);
        hymo_error err;
        hymo_error_clear(&err);
        assert_int_equal(hymo_hyd_sub_do_step(sub, 0.0, 0.0, &err), HYMO_ERR_ARGUMENT);
        assert_int_equal(hymo_hyd_sub_do_step(sub, 0.0, -1e-4, &err), HYMO_ERR_ARGUMENT);
        assert_int_equal(hymo_hyd_sub_do_step(sub, 0.0, 1e6, &err), HYMO_ERR_ARGUMENT);
        assert_non_null(strstr(err.message, "more than 1e9"));
        long steps;
        hymo_hyd_sub_stats(sub, &steps, NULL, NULL);
        assert_int_equal(steps, 0);
        /* 2.5 h: three steps of H/3, bit-identical to h = H/3 */
        hymo_hyd_sub_set_motion(sub, 0.0, c_s, c_v);
        hymo_hyd_sub_set_motion(ref, 0.0, c_s, c_v);
        assert_int_equal(hymo_hyd_sub_do_step(sub, 0.0, 2.5e-4, &err), HYMO_OK);
        assert_int_equal(hymo_hyd_sub_do_step(ref, 0.0, 2.5e-4, &err), HYMO_OK);
        hymo_hyd_sub_stats(sub, &steps, NULL, NULL);
        assert_int_equal(steps, 3);
        const int n = hymo_hyd_sub_state_size(sub);
        double a[256], b[256];
        assert_true(n <= 256 && n == hymo_hyd_sub_state_size(ref));
        hymo_hyd_sub_get_state(sub, a);
        hymo_hyd_sub_get_state(ref, b);
        assert_memory_equal(a, b, (size_t)n * sizeof(double));
        assert_true(hymo_hyd_sub_p(sub)[0] != cs->p0[0]); /* the motion moved the pressures */
        /* 0.5 h: one step of H */
        assert_int_equal(hymo_hyd_sub_do_step(sub, 2.5e-4, 0.5e-4, &err), HYMO_OK);
        hymo_hyd_sub_stats(sub, &steps, NULL, NULL);
        assert_int_equal(steps, 4);
        hymo_hyd_sub_free(sub);
        hymo_hyd_sub_free(ref);
        /* a ratio off by round-off only is a whole multiple: 3 h with h = 0.1 ms */
        sub = default_sub(cs, k);
        assert_int_equal(hymo_hyd_sub_do_step(sub, 0.0, 0.1e-3 + 0.2e-3, &err), HYMO_OK);
        hymo_hyd_sub_stats(sub, &steps, NULL, NULL);
        assert_int_equal(steps, 3);
        hymo_hyd_sub_free(sub);
    }
}

static void test_volume_failure(void **state)
{
    crane1_setup *cs = *state;
    for (int k = 0; k < 3; ++k) {
        hymo_hyd_sub *sub = default_sub(cs, k);
        /* piston 6 cm in from s0 (l_pist0 = 5 cm): V1 = 3.14e-5 - A_pist 0.01 < 0 */
        double c_s[4] = {cs->s0 - 0.06, 0, 0, 0}, c_v[4] = {0, 0, 0, 0};
        hymo_hyd_sub_set_motion(sub, 0.5, c_s, c_v);
        hymo_error err;
        assert_int_equal(hymo_hyd_sub_do_step(sub, 0.5, 1e-3, &err), HYMO_ERR_NUMERIC);
        assert_non_null(strstr(err.message, "V1"));
        assert_non_null(strstr(err.message, "t = 0.5"));
        for (int j = 0; j < 3; ++j) assert_true(hymo_hyd_sub_p(sub)[j] == cs->p0[j]); /* state kept */
        hymo_hyd_sub_free(sub);
    }
}

static void test_state_roundtrip(void **state)
{
    crane1_setup *cs = *state;
    for (int k = 0; k < 3; ++k) {
        hymo_hyd_sub *sub = default_sub(cs, k);
        hymo_error err;
        double c_s[4], c_v[4];
        /* through the valve opening at 1 s (U_ref steps at 1 s are one-sided) */
        for (int i = 0; i < 110; ++i) {
            double t = i * 0.01;
            taylor_motion(cs->s0, t, c_s, c_v);
            hymo_hyd_sub_set_motion(sub, t, c_s, c_v);
            if (hymo_hyd_sub_do_step(sub, t, 0.01, &err) != HYMO_OK) fail_msg("%s", err.message);
        }
        const int size = hymo_hyd_sub_state_size(sub);
        assert_true(size >= 4);
        double *buf = malloc((size_t)size * sizeof(double));
        assert_non_null(buf);
        hymo_hyd_sub_get_state(sub, buf);
        const double t = 1.1;
        taylor_motion(cs->s0, t, c_s, c_v);
        hymo_hyd_sub_set_motion(sub, t, c_s, c_v);
        assert_int_equal(hymo_hyd_sub_do_step(sub, t, 0.01, &err), HYMO_OK);
        double p1[3], u1[1], f1, f2;
        memcpy(p1, hymo_hyd_sub_p(sub), sizeof p1);
        u1[0] = hymo_hyd_sub_u(sub)[0];
        hymo_hyd_sub_force(sub, t + 0.01, &f1);
        /* a different step in between changes the state and the history */
        double other_s[4] = {cs->s0 + 0.01, 0.05, 0, 0}, other_v[4] = {0.05, 0, 0, 0};
        hymo_hyd_sub_set_motion(sub, t + 0.01, other_s, other_v);
        assert_int_equal(hymo_hyd_sub_do_step(sub, t + 0.01, 0.05, &err), HYMO_OK);
        assert_true(hymo_hyd_sub_p(sub)[0] != p1[0]);
        /* restore and repeat: bit-identical */
        hymo_hyd_sub_set_state(sub, buf);
        for (int j = 0; j < 3; ++j) assert_true(hymo_hyd_sub_p(sub)[j] == buf[j]);
        hymo_hyd_sub_set_motion(sub, t, c_s, c_v);
        assert_int_equal(hymo_hyd_sub_do_step(sub, t, 0.01, &err), HYMO_OK);
        assert_memory_equal(hymo_hyd_sub_p(sub), p1, sizeof p1);
        assert_memory_equal(hymo_hyd_sub_u(sub), u1, sizeof u1);
        hymo_hyd_sub_force(sub, t + 0.01, &f2);
        assert_memory_equal(&f1, &f2, sizeof f1);
        free(buf);
        hymo_hyd_sub_free(sub);
    }
}

static void test_names(void **state)
{
    (void)state;
    for (int k = 0; k < 3; ++k) {
        hymo_hyd_integrator_kind out = (hymo_hyd_integrator_kind)-1;
        assert_int_equal(hymo_hyd_integrator_parse(hymo_hyd_integrator_name(all_kinds[k]), &out), 0);
        assert_int_equal(out, all_kinds[k]);
    }
    assert_string_equal(hymo_hyd_integrator_name(HYMO_HYD_EULER), "euler");
    assert_string_equal(hymo_hyd_integrator_name(HYMO_HYD_RK4), "rk4");
    assert_string_equal(hymo_hyd_integrator_name(HYMO_HYD_TRAPEZOIDAL), "trapezoidal");
    hymo_hyd_integrator_kind out;
    assert_int_equal(hymo_hyd_integrator_parse("rk45", &out), -1);
    assert_int_equal(hymo_hyd_integrator_parse("", &out), -1);
}

/* ------------------------------------------------------------------ */
/* 6. Timing (printed, not asserted; meaningful in a Release build)    */

static double wall_seconds(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_timing(void **state)
{
    crane1_setup *cs = *state;
    /* the master's case: h = 0.1 ms, H = 1 ms, crane1's own U_ref, a slow
     * prescribed motion; 3 s (the valve opens at 1 s) */
    for (int k = 0; k < 3; ++k) {
        hymo_hyd_sub *sub = default_sub(cs, k);
        hymo_error err;
        double t0 = wall_seconds();
        for (int i = 0; i < 3000; ++i) {
            double t = i * 1e-3, c_s[4], c_v[4];
            taylor_motion(cs->s0, t, c_s, c_v);
            hymo_hyd_sub_set_motion(sub, t, c_s, c_v);
            if (hymo_hyd_sub_do_step(sub, t, 1e-3, &err) != HYMO_OK) fail_msg("%s", err.message);
        }
        double el = wall_seconds() - t0;
        long steps, evals, iters;
        hymo_hyd_sub_stats(sub, &steps, &evals, &iters);
        assert_int_equal(steps, 30000);
        fprintf(stderr, "    %-11s %7.1f ns/step, %.2f rhs/step, %.2f Newton it/step, %ld Jacobians\n",
                hymo_hyd_integrator_name(all_kinds[k]), 1e9 * el / (double)steps, (double)evals / (double)steps,
                (double)iters / (double)steps, hymo_hyd_sub_jacobians(sub));
        hymo_hyd_sub_free(sub);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partition),
        cmocka_unit_test(test_partition_complete),
        cmocka_unit_test(test_eval_part_crane2),
        cmocka_unit_test(test_volume_cache),
        cmocka_unit_test_setup_teardown(test_rest, crane1_setup_fn, crane1_teardown_fn),
        cmocka_unit_test_setup_teardown(test_orders, crane1_setup_fn, crane1_teardown_fn),
        cmocka_unit_test_setup_teardown(test_bad_step_ratio, crane1_setup_fn, crane1_teardown_fn),
        cmocka_unit_test_setup_teardown(test_volume_failure, crane1_setup_fn, crane1_teardown_fn),
        cmocka_unit_test_setup_teardown(test_state_roundtrip, crane1_setup_fn, crane1_teardown_fn),
        cmocka_unit_test(test_names),
        cmocka_unit_test_setup_teardown(test_timing, crane1_setup_fn, crane1_teardown_fn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
