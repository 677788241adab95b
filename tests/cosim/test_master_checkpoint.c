/* The master's checkpoints and variable communication step
 * (hymo/master.h) on seed 004's three-mass oscillator split in two linear
 * subsystems (as in test_stability.c), Gauss-Seidel with second-order
 * extrapolation, so that every part of the saved point matters (states,
 * three history levels, the input polynomials):
 *
 * - a run restored to a checkpoint and continued repeats the continuation
 *   bit for bit (outputs, time, step count);
 * - a step taken, rejected (restored) and retaken with H/2 equals, bit for
 *   bit, a run that changed to H/2 at the same point directly;
 * - time after a change of H is t_base + steps H (exactly steps H while H
 *   never changes);
 * - a subsystem that cannot save its state: no checkpoint, the message
 *   names it. */
#include <math.h>
#include <string.h>

#include "test_util.h"
#include "three_mass.h"

#define H0 2.0e-3
#define h0 2.0e-4

typedef struct {
    hymo_subsystem *sub[2];
    hymo_master *m;
} rig;

static void rig_open(rig *r)
{
    const hymo_linear_system sys[2] = {{4, 2, 2, AI, BI, CI, NULL, h0}, {2, 2, 2, AII, BII, CII, NULL, h0}};
    hymo_error err;
    assert_int_equal(hymo_linear_subsystem_create(&sys[0], X0I, "I", &r->sub[0], &err), HYMO_OK);
    assert_int_equal(hymo_linear_subsystem_create(&sys[1], X0II, "II", &r->sub[1], &err), HYMO_OK);
    const hymo_master_options opt = {HYMO_SCHEME_GAUSS_SEIDEL_MECH_FIRST, 2, H0};
    if (hymo_master_create(r->sub, 2, LINKS, 4, &opt, &r->m, &err) != HYMO_OK) fail_msg("%s", err.message);
}

static void rig_close(rig *r)
{
    hymo_master_free(r->m);
    for (int k = 0; k < 2; ++k) r->sub[k]->ops->destroy(r->sub[k]);
}

static void steps(rig *r, int n)
{
    hymo_error err;
    for (int i = 0; i < n; ++i)
        if (hymo_master_step(r->m, &err) != HYMO_OK) fail_msg("%s", err.message);
}

/* outputs of both subsystems: 4 values */
static void outputs(const rig *r, double y[4])
{
    memcpy(y, hymo_master_outputs(r->m, 0), 2 * sizeof(double));
    memcpy(y + 2, hymo_master_outputs(r->m, 1), 2 * sizeof(double));
}

static void test_restore_repeats(void **state)
{
    (void)state;
    rig r;
    rig_open(&r);
    hymo_master_checkpoint *c;
    hymo_error err;
    assert_int_equal(hymo_master_checkpoint_create(r.m, &c, &err), HYMO_OK);
    steps(&r, 7);
    hymo_master_save(r.m, c);
    double first[20][4], again[4];
    for (int i = 0; i < 20; ++i) steps(&r, 1), outputs(&r, first[i]);
    const double t_end = hymo_master_time(r.m);
    assert_true(hymo_master_steps(r.m) == 27);
    assert_true(t_end == 27.0 * H0); /* exactly steps H while H never changed */
    hymo_master_restore(r.m, c);
    assert_true(hymo_master_steps(r.m) == 7);
    for (int i = 0; i < 20; ++i) {
        steps(&r, 1), outputs(&r, again);
        assert_memory_equal(again, first[i], sizeof again);
    }
    assert_true(hymo_master_time(r.m) == t_end);
    /* the continuation moved: it is not a trivial repeat */
    assert_true(fabs(first[19][0] - first[0][0]) > 1e-6);
    hymo_master_checkpoint_free(c);
    rig_close(&r);
}

static void test_reject_and_retake(void **state)
{
    (void)state;
    rig direct, retaken;
    rig_open(&direct), rig_open(&retaken);
    hymo_master_checkpoint *c;
    hymo_error err;
    assert_int_equal(hymo_master_checkpoint_create(retaken.m, &c, &err), HYMO_OK);
    steps(&direct, 10), steps(&retaken, 10);
    hymo_master_save(retaken.m, c);
    steps(&retaken, 1); /* rejected */
    hymo_master_restore(retaken.m, c);
    assert_true(hymo_master_step_size(retaken.m) == H0);
    assert_int_equal(hymo_master_set_step_size(retaken.m, 0.5 * H0, &err), HYMO_OK);
    assert_int_equal(hymo_master_set_step_size(direct.m, 0.5 * H0, &err), HYMO_OK);
    double a[4], b[4];
    for (int i = 0; i < 6; ++i) {
        steps(&direct, 1), steps(&retaken, 1);
        outputs(&direct, a), outputs(&retaken, b);
        assert_memory_equal(a, b, sizeof a);
    }
    assert_true(hymo_master_time(direct.m) == hymo_master_time(retaken.m));
    assert_true(fabs(hymo_master_time(direct.m) - (10.0 * H0 + 6.0 * 0.5 * H0)) < 1e-15);
    /* back to H: the time continues from the change */
    assert_int_equal(hymo_master_set_step_size(direct.m, H0, &err), HYMO_OK);
    steps(&direct, 2);
    assert_true(fabs(hymo_master_time(direct.m) - (10.0 * H0 + 3.0 * H0 + 2.0 * H0)) < 1e-15);
    assert_int_equal(hymo_master_set_step_size(direct.m, -1.0, &err), HYMO_ERR_ARGUMENT);
    assert_int_equal(hymo_master_set_step_size(direct.m, NAN, &err), HYMO_ERR_ARGUMENT);
    hymo_master_checkpoint_free(c);
    rig_close(&direct), rig_close(&retaken);
}

/* A subsystem without a state snapshot: one output, no inputs. */
static hymo_status still_step(hymo_subsystem *sub, double t, double H, hymo_error *err)
{
    (void)sub, (void)t, (void)H, (void)err;
    return HYMO_OK;
}
static void still_outputs(const hymo_subsystem *sub, double *y) { (void)sub, y[0] = 1.0; }
static void still_inputs(hymo_subsystem *sub, double t0, const double *coef) { (void)sub, (void)t0, (void)coef; }
static const hymo_subsystem_ops still_ops = {
    .kind = "test", .set_inputs = still_inputs, .do_step = still_step, .get_outputs = still_outputs};

static void test_no_state(void **state)
{
    (void)state;
    hymo_subsystem still = {.ops = &still_ops, .name = "stateless", .n_inputs = 0, .n_outputs = 1};
    hymo_subsystem *subs[1] = {&still};
    const hymo_master_options opt = {HYMO_SCHEME_JACOBI, 0, H0};
    hymo_master *m;
    hymo_master_checkpoint *c = (hymo_master_checkpoint *)&still;
    hymo_error err;
    assert_int_equal(hymo_master_create(subs, 1, NULL, 0, &opt, &m, &err), HYMO_OK);
    assert_int_equal(hymo_master_checkpoint_create(m, &c, &err), HYMO_ERR_ARGUMENT);
    assert_null(c);
    assert_non_null(strstr(err.message, "'stateless' cannot save its state"));
    hymo_master_checkpoint_free(NULL);
    hymo_master_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_restore_repeats),
        cmocka_unit_test(test_reject_and_retake),
        cmocka_unit_test(test_no_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
