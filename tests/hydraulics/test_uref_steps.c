/* A valve reference that jumps (a table step, docs/model-format.md
 * "signals") through the co-simulation's hydraulic subsystem
 * (hydraulics/hyd_subsystem.c), on tests/models/valves_line.yaml with dcv1's
 * U_ref 0 V up to t_j and 3 V from t_j on:
 *
 *   the step after the jump starts from the right limit U_ref(t_j+) = 3 V,
 *   also where the step before it ended at t_j with the left limit 0 V (the
 *   subsystem reuses that end value at the next step's start only where both
 *   limits agree).  Checked bit for bit against a fresh subsystem of the same
 *   line with U_ref = 3 V throughout, given the state (and the trapezoidal
 *   history) at t_j and stepped on from there:
 *     1. t_j a hydraulic step boundary inside a communication step (h and H
 *        powers of two, so that every time is exact);
 *     2. t_j a communication point, h = 0.1 ms, H = 1 ms as in the shipped
 *        configurations (t_j within the 1e-6 h snapping distance);
 *   for forward Euler, RK4 and the trapezoidal rule.  The jump moves the
 *   spool (0 before t_j) in the first step after it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "circuit.h"
#include "hyd_subsystem.h"
#include "test_util.h"

#define SIGNAL_LINE "points: [[0, 0], [0.05, 0], [0.25, 4], [0.5, 4]]"

typedef struct {
    hymo_model *model;
    hymo_circuit circ;
    hymo_circuit_part *parts;
    int n_parts;
} line_model;

/* valves_line.yaml with dcv1's signal points replaced by `points` */
static void line_load(line_model *lm, const char *points)
{
    char path[512];
    snprintf(path, sizeof path, "%s/models/valves_line.yaml", HYMO_TESTS_DIR);
    char *text = test_read_file(path);
    char *at = strstr(text, SIGNAL_LINE);
    assert_non_null(at);
    const size_t old_len = strlen(SIGNAL_LINE), new_len = strlen(points), tail = strlen(at + old_len);
    char *edited = malloc((size_t)(at - text) + new_len + tail + 1);
    assert_non_null(edited);
    memcpy(edited, text, (size_t)(at - text));
    memcpy(edited + (at - text), points, new_len);
    memcpy(edited + (at - text) + new_len, at + old_len, tail + 1);
    free(text);
    lm->model = test_load_text(edited, "valves_line (edited signal)");
    free(edited);
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_circuit_init(&lm->circ, lm->model, NULL, &err) != HYMO_OK) fail_msg("%s", err.message);
    if (hymo_circuit_partition(lm->model, &lm->parts, &lm->n_parts, &err) != HYMO_OK) fail_msg("%s", err.message);
    assert_int_equal(lm->n_parts, 1);
    assert_int_equal(lm->model->n_valves, 1);
}

static void line_free(line_model *lm)
{
    hymo_circuit_parts_free(lm->parts, lm->n_parts);
    hymo_circuit_free(&lm->circ);
    hymo_model_free(lm->model);
}

static hymo_hyd_sub *sub_new(line_model *lm, hymo_hyd_integrator_kind kind, double h)
{
    const double p0[3] = {1.0e6, 1.0e5, 3.0e6}, u0[1] = {0.0};
    assert_int_equal(lm->model->n_volumes, 3);
    hymo_error err;
    hymo_error_clear(&err);
    hymo_hyd_sub *sub = NULL;
    if (hymo_hyd_sub_create(lm->model, &lm->circ, &lm->parts[0], kind, h, 1e-4, 1e-9, 20, p0, u0, &sub, &err) !=
        HYMO_OK)
        fail_msg("%s", err.message);
    return sub;
}

static void step(hymo_hyd_sub *sub, double t, double H)
{
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_hyd_sub_do_step(sub, t, H, &err) != HYMO_OK) fail_msg("%s", err.message);
}

/* A fresh subsystem on `post` (U_ref = 3 V throughout) with the state of
 * `from` (y and the integrator's history) */
static hymo_hyd_sub *sub_clone(line_model *post, const hymo_hyd_sub *from, hymo_hyd_integrator_kind kind, double h)
{
    hymo_hyd_sub *sub = sub_new(post, kind, h);
    const int size = hymo_hyd_sub_state_size(from);
    assert_int_equal(size, hymo_hyd_sub_state_size(sub));
    double *buf = malloc((size_t)size * sizeof(double));
    assert_non_null(buf);
    hymo_hyd_sub_get_state(from, buf);
    hymo_hyd_sub_set_state(sub, buf);
    free(buf);
    return sub;
}

/* y of a and b bit for bit (the number of entries that differ, printed);
 * the spool moved (the jump was taken) */
static int differing_y(const hymo_hyd_sub *a, const hymo_hyd_sub *b, const char *what,
                          hymo_hyd_integrator_kind kind)
{
    const int n = hymo_hyd_sub_n(a);
    assert_int_equal(n, 4); /* Vp, VA, VB; dcv1's spool */
    double ya[4], yb[4];
    hymo_hyd_sub_y(a, ya);
    hymo_hyd_sub_y(b, yb);
    print_message("%s, %s: spool %.17g V (fresh from t_j: %.17g V); Vp %.17g Pa (%.17g Pa)\n", what,
                  hymo_hyd_integrator_name(kind), ya[3], yb[3], ya[0], yb[0]);
    assert_true(yb[3] > 1e-4);
    int bad = 0;
    for (int i = 0; i < n; ++i)
        if (memcmp(&ya[i], &yb[i], sizeof ya[i]) != 0) {
            print_error("%s, %s: y[%d] = %.17g, fresh subsystem from t_j %.17g\n", what,
                        hymo_hyd_integrator_name(kind), i, ya[i], yb[i]);
            ++bad;
        }
    return bad;
}

static const hymo_hyd_integrator_kind KINDS[3] = {HYMO_HYD_EULER, HYMO_HYD_RK4, HYMO_HYD_TRAPEZOIDAL};

/* 1. the jump at a hydraulic step boundary inside a communication step:
 * h = 2^-10 s, H = 8 h, t_j = 12 h (the middle of the second communication
 * step); the fresh subsystem takes over at t_j and steps to 2 H */
static void test_jump_inside_communication_step(void **state)
{
    (void)state;
    line_model jump, post;
    line_load(&jump, "points: [[0, 0], [0.01171875, 0], [0.01171875, 3], [1, 3]]");
    line_load(&post, "points: [[0, 3]]");
    const double h = 0x1p-10, H = 8.0 * h, tj = 12.0 * h;
    assert_true(tj == 0.01171875);
    int bad = 0;
    for (int k = 0; k < 3; ++k) {
        hymo_hyd_sub *a = sub_new(&jump, KINDS[k], h), *c = sub_new(&jump, KINDS[k], h);
        step(a, 0.0, H);
        step(a, H, H); /* across the jump */
        step(c, 0.0, H);
        step(c, H, tj - H); /* up to the jump, then the same line without it */
        assert_true(hymo_hyd_sub_u(c)[0] == 0.0);
        hymo_hyd_sub *b = sub_clone(&post, c, KINDS[k], h);
        step(b, tj, 2.0 * H - tj);
        bad += differing_y(a, b, "jump inside a communication step", KINDS[k]);
        hymo_hyd_sub_free(a);
        hymo_hyd_sub_free(b);
        hymo_hyd_sub_free(c);
    }
    assert_int_equal(bad, 0);
    line_free(&jump);
    line_free(&post);
}

/* 2. the jump at a communication point: h = 0.1 ms, H = 1 ms, t_j =
 * 5 ms, the points t = t + H as a master adds them */
static void test_jump_at_communication_point(void **state)
{
    (void)state;
    line_model jump, post;
    line_load(&jump, "points: [[0, 0], [0.005, 0], [0.005, 3], [1, 3]]");
    line_load(&post, "points: [[0, 3]]");
    const double h = 1e-4, H = 1e-3;
    int bad = 0;
    for (int k = 0; k < 3; ++k) {
        hymo_hyd_sub *a = sub_new(&jump, KINDS[k], h);
        double t = 0.0;
        for (int i = 0; i < 5; ++i, t += H) step(a, t, H);
        assert_true(fabs(t - 0.005) <= 1e-6 * h);
        assert_true(hymo_hyd_sub_u(a)[0] == 0.0);
        hymo_hyd_sub *b = sub_clone(&post, a, KINDS[k], h);
        for (int i = 0; i < 2; ++i, t += H) {
            step(a, t, H);
            step(b, t, H);
        }
        bad += differing_y(a, b, "jump at a communication point", KINDS[k]);
        hymo_hyd_sub_free(a);
        hymo_hyd_sub_free(b);
    }
    assert_int_equal(bad, 0);
    line_free(&jump);
    line_free(&post);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jump_inside_communication_step),
        cmocka_unit_test(test_jump_at_communication_point),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
