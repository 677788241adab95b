/* Events: the end-damper entries and exits of crane1 are
 * located inside the step, so the trapezoidal rule stays second order
 * through them.  Checked against SUNDIALS IDA at rtol 1e-11, which locates
 * the same switching functions as root functions (its event times are
 * exact to ~1e-9 s here):
 *   - the same events, in the same order, at every dt;
 *   - each event time lies inside the step that reports it;
 *   - the event times of the trapezoidal runs converge to IDA's at second
 *     order: max |t_event - t_IDA| falls >= 3x per halving of dt.
 * Measured: IDA events at 2.395253568, 6.450008236, 13.792685218,
 * 16.397785683 s; max |t - t_IDA| 2.73e-7, 6.82e-8, 1.70e-8 s at dt = 1,
 * 0.5, 0.25 ms (4.0x per halving).
 * The pressure error at the entries is covered by test_accuracy (est/true
 * and the IDA comparison) and tests/independent. */
#include <math.h>
#include <stdio.h>

#include "hymo/sim.h"
#include "test_util.h"

#define MAX_EV 16
#define EVENT_TIME_BOUND 5e-7 /* measured 2.73e-7 s at 1 ms */

/* event times of a run of crane1 with the given integrator options */
static int event_times(const hymo_model *m, const hymo_run_options *opt, double *t_ev)
{
    hymo_sim *sim = test_sim_create(m, opt);
    hymo_error err;
    hymo_error_clear(&err);
    long n = lround(opt->t_end / opt->dt), seen = 0;
    for (long k = 0; k < n; ++k) {
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        double last;
        long ev = hymo_sim_events(sim, &last);
        assert_true(ev <= seen + 1); /* at most one per output step here */
        if (ev > seen) {
            assert_true(seen < MAX_EV);
            t_ev[seen++] = last;
            /* inside the step that just ended */
            assert_true(last > hymo_sim_time(sim) - opt->dt - 1e-12 && last <= hymo_sim_time(sim) + 1e-12);
        }
    }
    hymo_sim_free(sim);
    return (int)seen;
}

static void test_crane1_events(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("crane1.yaml");
    hymo_run_options ida;
    hymo_run_options_default(&ida, m);
    ida.integrator = HYMO_INTEGRATOR_IDA;
    ida.rtol = 1e-11;
    ida.atol = 1e-13;
    double t_ida[MAX_EV], t_run[MAX_EV];
    const int n_ida = event_times(m, &ida, t_ida);
    print_message("IDA rtol 1e-11: %d events:", n_ida);
    for (int i = 0; i < n_ida; ++i) print_message(" %.9f", t_ida[i]);
    print_message("\n");
    assert_true(n_ida >= 2);
    const double dts[3] = {1e-3, 5e-4, 2.5e-4};
    double worst[3];
    for (int d = 0; d < 3; ++d) {
        hymo_run_options opt;
        hymo_run_options_default(&opt, m);
        opt.dt = dts[d];
        const int n = event_times(m, &opt, t_run);
        assert_int_equal(n, n_ida);
        worst[d] = 0.0;
        for (int i = 0; i < n; ++i) worst[d] = fmax(worst[d], fabs(t_run[i] - t_ida[i]));
        print_message("dt = %g ms: %d events, max |t - t_IDA| = %.3g s\n", dts[d] * 1e3, n, worst[d]);
    }
    for (int d = 0; d < 2; ++d) assert_true(worst[d] >= 3.0 * worst[d + 1]);
    assert_true(worst[0] <= EVENT_TIME_BOUND);
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_crane1_events)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
