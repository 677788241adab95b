/* The loader's cost in the number of bodies and elements: a generated
 * chain (the family of bench/gen_models.py: per link a body with three
 * points, a cylinder, three volumes, a throttle and a valve) of N and 4N
 * links loads in time close to linear (the ratio below 6, a quadratic
 * lookup gives 16) and N = 10000 in under 2.5 s, CPU time of the process
 * (a busy machine does not change it much).  With a file argument: prints
 * that file's load time (bench/gen_models.py chain 100000). */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hymo/model.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    char *s;
    size_t n, cap;
} buf;

static void put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(buf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        assert_true(k >= 0);
        if (b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        b->cap = 2 * b->cap + (size_t)k + 1;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
}

/* bench/gen_models.py chain n */
static char *chain(int n)
{
    buf b = {malloc(1 << 20), 0, 1 << 20};
    assert_non_null(b.s);
    b.s[0] = '\0';
    put(&b, "format: 1\nname: chain%d\ngravity: [9.81, 0, 0]\nsimulation:\n  dt: 1.0e-3\n  t_end: 0.02\n"
            "ground:\n  points:\n    G1: [-0.3, 0.1, 0]\n\nbodies:\n", n);
    for (int k = 1; k <= n; ++k) {
        char parent[32];
        snprintf(parent, sizeof parent, k == 1 ? "ground" : "l%d", k - 1);
        put(&b, "  - name: l%d\n    joint: {name: q%d, type: revolute, parent: %s, location: %s, axis: [0, 0, 1], "
                "initial: 0}\n    mass: 2\n    com: [0.5, 0, 0]\n    inertia: [0, 0.1666, 0.1666]\n"
                "    points:\n      J: [1, 0, 0]\n      R: [0.3, 0.1, 0]\n%s",
            k, k, parent, k == 1 ? "[0, 0, 0]" : "J", k < n ? "      B: [0.7, 0.1, 0]\n" : "");
    }
    put(&b, "\nsignals:\n  - name: U_ref\n    points: [[0, 0], [0.001, 0], [0.001, 2], [10, 2]]\n\n"
            "hydraulics:\n  fluid: {bulk_modulus: 1.5e9, density: 850, laminar_transition: 2.0e5}\n  sources:\n"
            "    - {name: pump, pressure: 7.6e6}\n    - {name: tank, pressure: 1.0e5}\n  cylinders:\n");
    for (int k = 1; k <= n; ++k) {
        char base[32];
        snprintf(base, sizeof base, k == 1 ? "ground.G1" : "l%d.B", k - 1);
        put(&b, "    - {name: c%d, base: %s, rod: l%d.R, piston_diameter: 0.04, rod_diameter: 0.02,\n"
                "       length: 0.4, efficiency: 0.9, friction_velocity: 0.01}\n", k, base, k);
    }
    put(&b, "  volumes:\n");
    for (int k = 1; k <= n; ++k)
        put(&b, "    - {name: a%d, parts: [{volume: 2.0e-5, bulk_modulus: 5.5e8}], initial_pressure: static}\n"
                "    - {name: p%d, parts: [{volume: 1.0e-5, bulk_modulus: 5.5e8}, {chamber: c%d.piston, "
                "bulk_modulus: 3.15e10}], initial_pressure: static}\n"
                "    - {name: r%d, parts: [{volume: 2.0e-5, bulk_modulus: 5.5e8}, {chamber: c%d.rod, "
                "bulk_modulus: 3.15e10}], initial_pressure: 3.5e6}\n", k, k, k, k, k);
    put(&b, "  throttles:\n");
    for (int k = 1; k <= n; ++k)
        put(&b, "    - {name: t%d, from: a%d, to: p%d, area: 2.0e-5, discharge_coefficient: 0.8}\n", k, k, k);
    put(&b, "  valves:\n");
    for (int k = 1; k <= n; ++k)
        put(&b, "    - {name: v%d, type: 4/3, P: pump, T: tank, A: a%d, B: r%d, flow_coefficient: 2.0e-9,\n"
                "       bandwidth_hz: 35, signal: U_ref}\n", k, k, k);
    return b.s;
}

/* Seconds to load text (the model checked: n bodies, n cylinders). */
static double load_seconds(const char *text, int n)
{
    hymo_model *m = NULL;
    hymo_error err;
    const double t0 = now();
    const hymo_status st = hymo_model_load_string(text, "chain", &m, &err);
    const double el = now() - t0;
    if (st != HYMO_OK) fail_msg("chain %d: %s", n, err.message);
    if (n > 0) {
        assert_int_equal(m->n_bodies, n);
        assert_int_equal(m->n_cylinders, n);
    }
    hymo_model_free(m);
    return el;
}

/* Under a sanitizer the allocator's bookkeeping dominates and times mean
 * nothing: the loads are checked, the timing only in plain builds. */
#if defined(__SANITIZE_ADDRESS__)
#define TIMED 0
#else
#define TIMED 1
#endif

static void test_chain_scaling(void **state)
{
    (void)state;
    const int n = TIMED ? 2500 : 500;
    char *a = chain(n), *b = chain(4 * n);
    double ta = load_seconds(a, n), tb = load_seconds(b, 4 * n);
    ta = fmin(ta, load_seconds(a, n)); /* the faster of two: less noise on a busy machine */
    tb = fmin(tb, load_seconds(b, 4 * n));
    free(a);
    free(b);
    printf("load: N = %d %.3f s, N = %d %.3f s, ratio %.2f (linear 4, quadratic 16)%s\n", n, ta, 4 * n, tb, tb / ta,
           TIMED ? "" : "; not judged under a sanitizer");
    if (TIMED) {
        assert_true(tb < 2.5);
        assert_true(tb / ta < 6.0);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1) { /* a file's load time */
        char *text = test_read_file(argv[1]);
        assert_non_null(text);
        printf("%s: loaded in %.3f s (CPU)\n", argv[1], load_seconds(text, 0));
        free(text);
        return 0;
    }
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_chain_scaling)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
