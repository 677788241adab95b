/* Re-selection of the independent coordinates in the double-step
 * formulation (SPEC §1.4), on tests/models/slider_crank.yaml: a gravity-
 * driven slider-crank with a vertical slider, no hydraulics.  Public API
 * only (model.h, sim.h, reference.h).
 *
 * Model (lengths L1 = 2 m crank, L2 = 4 m rod; z = (y, psi, theta)):
 *   Phi = [L2 cos psi - L1 cos theta ; y + L2 sin psi - L1 sin theta],
 *   Phi_z = [0  -L2 sin psi   L1 sin theta ]
 *           [1   L2 cos psi  -L1 cos theta ].
 * Gaussian elimination with full pivoting takes L2 sin psi (>= 3.87, the
 * largest entry: |cos psi| = |L1 cos theta / L2| <= 1/2) as the first pivot;
 * the second row then holds 1 in the y column and
 *   q(theta) = L1 |sin(psi - theta)| / sin psi
 * in the theta column.  So, in closed form:
 *   - y is independent while q > 1 (at t = 0, theta = -60 deg: q = 1.447);
 *   - the current partition's smallest pivot is q, the best one is
 *     max(1, q): the double-step formulation re-selects once q < ratio = 0.1,
 *     i.e. within delta* = 0.0333 rad of the bottom dead centre
 *     theta = -90 deg, where dy/dtheta = 0.  The new independent coordinate
 *     is theta (the pivot 1 of the y column wins);
 *   - with theta independent the smallest pivot is 1 and the best one at
 *     most max(1, q) <= L1 / sqrt(1 - (L1/L2)^2) = 2.31, so it never
 *     switches back: exactly one re-selection, however often the crank
 *     passes the dead centre.
 * The partition is checked every 8 steps (double_step.c), so the switch
 * comes at most 7 steps after q falls below 0.1.
 *
 * Independent solution: the 1-DOF equation of motion in the crank angle,
 * derived by hand (Lagrange) and integrated by RK4 inside this test:
 *   M(theta) theta'' + M'(theta)/2 theta'^2 + V'(theta) = 0,
 * with the rod angle psi = acos(L1 cos theta / L2) in (0, pi) and the slider
 * y = L1 sin theta - L2 sin psi.  Energy conservation of the RK4 solution
 * checks M' against M (an inconsistent M' would not conserve energy). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/reference.h"
#include "hymo/sim.h"
#include "test_util.h"

#define L1 2.0
#define L2 4.0
#define MC 10.0 /* crank */
#define MR 4.0  /* rod */
#define MS 5.0  /* slider */
#define GRAV 9.81
#define RATIO 0.1 /* reselect_ratio (the default) */
#define CHECK_EVERY 8
#define PI 3.14159265358979323846

static hymo_model *load_model(void) { return test_load_test_model("slider_crank.yaml"); }

/* ---------------------------------------------------------------- closed form */

typedef struct {
    double psi, y;    /* configuration */
    double dpsi, dy;  /* d/dtheta */
    double M, hdM, V, dV; /* mass, M'/2, potential, V' */
} crank_kin;

static void crank_kinematics(double th, crank_kin *k)
{
    const double r = L1 / L2, s = sin(th), c = cos(th);
    const double a = r * c, sp = sqrt(1.0 - a * a); /* cos psi, sin psi */
    const double p1 = r * s / sp;                   /* psi' */
    const double p2 = a * (1.0 - p1 * p1) / sp;     /* psi'' */
    const double y1 = L1 * c - L2 * a * p1;         /* y' */
    const double y2 = -L1 * s - L2 * a * p2 + L2 * sp * p1 * p1;
    const double gx1 = -0.5 * L1 * s, gx2 = -0.5 * L1 * c; /* rod centre: (L1 cos th / 2, L1 sin th - L2 sin psi / 2) */
    const double gy1 = L1 * c - 0.5 * L2 * a * p1;
    const double gy2 = -L1 * s - 0.5 * L2 * (a * p2 - sp * p1 * p1);
    const double Ir = MR * L2 * L2 / 12.0;
    k->psi = acos(a);
    k->y = L1 * s - L2 * sp;
    k->dpsi = p1;
    k->dy = y1;
    k->M = MC * L1 * L1 / 3.0 + MR * (gx1 * gx1 + gy1 * gy1) + Ir * p1 * p1 + MS * y1 * y1;
    k->hdM = MR * (gx1 * gx2 + gy1 * gy2) + Ir * p1 * p2 + MS * y1 * y2;
    k->V = GRAV * (MC * 0.5 * L1 * s + MR * (L1 * s - 0.5 * L2 * sp) + MS * k->y);
    k->dV = GRAV * (MC * 0.5 * L1 * c + MR * gy1 + MS * y1);
}

static void rhs(const double x[2], double f[2])
{
    crank_kin k;
    crank_kinematics(x[0], &k);
    f[0] = x[1];
    f[1] = -(k.hdM * x[1] * x[1] + k.dV) / k.M;
}

static double energy(const double x[2])
{
    crank_kin k;
    crank_kinematics(x[0], &k);
    return 0.5 * k.M * x[1] * x[1] + k.V;
}

/* RK4 from (theta0, 0): theta and theta' at t = n dt, n = 0..n_steps, with
 * `sub` RK4 steps per dt. */
static void rk4_solution(double theta0, double dt, long n_steps, int sub, double *th, double *thd)
{
    double x[2] = {theta0, 0.0}, h = dt / sub;
    th[0] = x[0];
    thd[0] = x[1];
    for (long n = 1; n <= n_steps; ++n) {
        for (int i = 0; i < sub; ++i) {
            double k1[2], k2[2], k3[2], k4[2], xt[2];
            rhs(x, k1);
            for (int j = 0; j < 2; ++j) xt[j] = x[j] + 0.5 * h * k1[j];
            rhs(xt, k2);
            for (int j = 0; j < 2; ++j) xt[j] = x[j] + 0.5 * h * k2[j];
            rhs(xt, k3);
            for (int j = 0; j < 2; ++j) xt[j] = x[j] + h * k3[j];
            rhs(xt, k4);
            for (int j = 0; j < 2; ++j) x[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
        }
        th[n] = x[0];
        thd[n] = x[1];
    }
}

/* Second pivot of the theta column after the psi pivot: q = L1 |sin(psi - theta)| / sin psi. */
static double pivot_q(double psi, double theta) { return L1 * fabs(sin(psi - theta)) / sin(psi); }

static double q_of_theta(double theta)
{
    crank_kin k;
    crank_kinematics(theta, &k);
    return pivot_q(k.psi, theta);
}

/* delta* in (0, 30 deg): q(-pi/2 + delta*) = RATIO (q increases with delta). */
static double delta_star(void)
{
    double lo = 0.0, hi = PI / 6.0;
    for (int i = 0; i < 200; ++i) {
        double mid = 0.5 * (lo + hi);
        if (q_of_theta(-PI / 2.0 + mid) < RATIO)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* ---------------------------------------------------------------- hymo runs */

static void options(const hymo_model *model, hymo_formulation_kind form, double dt, double t_end, hymo_run_options *opt)
{
    hymo_run_options_default(opt, model);
    opt->formulation = form;
    opt->dt = dt;
    opt->t_end = t_end;
    opt->reselect_ratio = RATIO;
    /* Newton iteration error far below the discretisation error (the
     * seed's 1e-7 lets one iteration per step through here) */
    opt->tol_position = 1e-11;
    opt->max_iter = 50;
}

typedef struct {
    double err_theta, err_thetad, err_psi, err_y; /* max over the run vs RK4 / closed form */
    int n_changes;                                /* changes of hymo_sim_independent seen */
    long switch_step;                             /* step after which the new set holds (-1: none) */
    int indep_before, indep_after;
    long first_below;                             /* first step with q(z) < RATIO (-1: none) */
    double q_switch;                              /* q of hymo's configuration at switch_step */
    hymo_run_summary summary;
} run_result;

static void run_and_compare(const hymo_model *model, hymo_formulation_kind form, hymo_jacobian_mode jac, double dt,
                            double t_end, run_result *res)
{
    const int iy = hymo_model_find_body(model, "slider"), ipsi = hymo_model_find_body(model, "rod"),
              ith = hymo_model_find_body(model, "crank");
    assert_true(iy >= 0 && ipsi >= 0 && ith >= 0);
    hymo_run_options opt;
    options(model, form, dt, t_end, &opt);
    opt.jacobian = jac;
    hymo_sim *sim = test_sim_create(model, &opt);
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_sim_nz(sim), 3);
    assert_int_equal(hymo_sim_na(sim), 0);
    assert_int_equal(hymo_sim_np(sim), 0);
    /* assembly held y: theta comes out at -60 deg */
    const double theta0 = hymo_sim_z(sim)[ith];
    assert_close(theta0, -PI / 3.0, 1e-9);
    const long n_steps = lround(t_end / dt);
    double *th = malloc((size_t)(n_steps + 1) * sizeof *th), *thd = malloc((size_t)(n_steps + 1) * sizeof *thd);
    assert_non_null(th);
    assert_non_null(thd);
    rk4_solution(theta0, dt, n_steps, 4, th, thd);

    memset(res, 0, sizeof *res);
    res->switch_step = res->first_below = -1;
    const int *ind = NULL;
    int ni = hymo_sim_independent(sim, &ind);
    int cur = -1;
    if (form == HYMO_FORMULATION_DOUBLE_STEP) {
        assert_int_equal(ni, 1);
        cur = ind[0];
    }
    res->indep_before = res->indep_after = cur;
    for (long n = 1; n <= n_steps; ++n) {
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("dt = %g: %s", dt, err.message);
        const double *z = hymo_sim_z(sim), *zd = hymo_sim_zd(sim);
        crank_kin k;
        crank_kinematics(th[n], &k);
        res->err_theta = fmax(res->err_theta, fabs(z[ith] - th[n]));
        res->err_thetad = fmax(res->err_thetad, fabs(zd[ith] - thd[n]));
        res->err_psi = fmax(res->err_psi, fabs(z[ipsi] - k.psi));
        res->err_y = fmax(res->err_y, fabs(z[iy] - k.y));
        double q = pivot_q(z[ipsi], z[ith]);
        if (res->first_below < 0 && q < RATIO) res->first_below = n;
        if (form != HYMO_FORMULATION_DOUBLE_STEP) continue;
        ni = hymo_sim_independent(sim, &ind);
        assert_int_equal(ni, 1);
        if (ind[0] != cur) {
            res->n_changes++;
            if (res->switch_step < 0) {
                res->switch_step = n;
                res->q_switch = q;
                res->indep_after = ind[0];
            }
            cur = ind[0];
        }
    }
    assert_close(hymo_sim_time(sim), t_end, 1e-9);
    hymo_sim_summary(sim, &res->summary);
    hymo_sim_free(sim);
    free(th);
    free(thd);
}

/* ------------------------------------------------------------------ tests */

/* The hand-derived equation of motion: its RK4 solution conserves energy
 * (to 1e-10 J of the 45.5 J potential drop to the bottom), two RK4 step
 * sizes agree, and the crank swings symmetrically to -120 deg. */
static void test_reference_solution(void **state)
{
    (void)state;
    const double dt = 1e-3;
    const long n = 4000;
    double *a = malloc((n + 1) * sizeof *a), *ad = malloc((n + 1) * sizeof *ad);
    double *b = malloc((n + 1) * sizeof *b), *bd = malloc((n + 1) * sizeof *bd);
    assert_true(a && ad && b && bd);
    rk4_solution(-PI / 3.0, dt, n, 4, a, ad);
    rk4_solution(-PI / 3.0, dt, n, 8, b, bd);
    double x0[2] = {a[0], ad[0]}, e0 = energy(x0), de = 0.0, dth = 0.0, thmin = 0.0, thmax = -10.0;
    for (long i = 0; i <= n; ++i) {
        double x[2] = {a[i], ad[i]};
        de = fmax(de, fabs(energy(x) - e0));
        dth = fmax(dth, fabs(a[i] - b[i]));
        thmin = fmin(thmin, a[i]);
        thmax = fmax(thmax, a[i]);
    }
    const double x1[2] = {-PI / 2.0, 0.0};
    print_message("potential drop from -60 to -90 deg: %.3f J\n", e0 - energy(x1));
    print_message("RK4: max |E - E0| = %.3g J, max |theta(h) - theta(h/2)| = %.3g rad, theta in [%.6f, %.6f] deg\n", de,
                  dth, thmin * 180 / PI, thmax * 180 / PI);
    /* measured 2.7e-12 J and 3.2e-14 rad */
    assert_true(de <= 1e-10);
    assert_true(dth <= 1e-10);
    /* symmetric swing between -60 deg and -120 deg (mirror symmetry x -> -x) */
    assert_close(thmin, -2.0 * PI / 3.0, 1e-6);
    assert_close(thmax, -PI / 3.0, 1e-12);
    free(a), free(ad), free(b), free(bd);
}

static void test_reselection(void **state)
{
    (void)state;
    hymo_model *model = load_model();
    const int iy = hymo_model_find_body(model, "slider"), ith = hymo_model_find_body(model, "crank");
    const double dt = 1e-3, t_end = 4.0, ds = delta_star();
    /* closed form: the switch configuration and, from the RK4 solution, the
     * time at which the crank first reaches it */
    const long n_steps = lround(t_end / dt);
    double *th = malloc((size_t)(n_steps + 1) * sizeof *th), *thd = malloc((size_t)(n_steps + 1) * sizeof *thd);
    assert_true(th && thd);
    rk4_solution(-PI / 3.0, dt, n_steps, 4, th, thd);
    const double theta_star = -PI / 2.0 + ds;
    double t_star = -1.0, speed = 0.0;
    for (long n = 1; n <= n_steps && t_star < 0.0; ++n)
        if (th[n] <= theta_star) {
            t_star = (n - 1) * dt + dt * (th[n - 1] - theta_star) / (th[n - 1] - th[n]);
            speed = fabs(thd[n]);
        }
    free(th);
    free(thd);
    assert_true(t_star > 0.0);
    print_message("closed form: q(t=0) = %.4f, delta* = %.5f rad, theta* = %.4f deg, reached at t* = %.5f s "
                  "(RK4), crank speed %.3f rad/s\n",
                  q_of_theta(-PI / 3.0), ds, theta_star * 180 / PI, t_star, speed);
    assert_close(q_of_theta(-PI / 3.0), 1.4472, 1e-4);
    assert_close(ds, 0.0333, 1e-3); /* ~ RATIO / (L1 (1 + L1/L2)) for small delta */

    static const hymo_jacobian_mode jacs[2] = {HYMO_JACOBIAN_NUMERIC, HYMO_JACOBIAN_FAST};
    double e_theta[2][2];
    const double dts[2] = {1e-3, 0.5e-3};
    for (int j = 0; j < 2; ++j)
        for (int d = 0; d < 2; ++d) {
            run_result r;
            run_and_compare(model, HYMO_FORMULATION_DOUBLE_STEP, jacs[j], dts[d], t_end, &r);
            const hymo_run_summary *s = &r.summary;
            double t_switch = r.switch_step * dts[d];
            print_message("double-step %s dt = %g ms: independent '%s', %d re-selection(s); switch after step %ld "
                          "(t = %.4f s, q = %.4f; q < %.1f from step %ld); max err theta %.3g rad, theta' %.3g "
                          "rad/s, psi %.3g rad, y %.3g m; |Phi| %.3g, |Phi_z zd| %.3g, drift %.3g J, iterations "
                          "%.2f\n",
                          hymo_jacobian_name(jacs[j]), dts[d] * 1e3, s->independent, s->n_reselections,
                          r.switch_step, t_switch, r.q_switch, RATIO, r.first_below, r.err_theta, r.err_thetad,
                          r.err_psi, r.err_y, s->max_constraint_position, s->max_constraint_velocity, s->peak_drift,
                          s->mean_iterations);
            /* exactly one re-selection, y -> theta, and it stays */
            assert_int_equal(r.indep_before, iy);
            assert_int_equal(r.indep_after, ith);
            assert_int_equal(r.n_changes, 1);
            assert_int_equal(s->n_reselections, 1);
            /* at the closed-form configuration: q(hymo's z) < 0.1 there, and
             * at most CHECK_EVERY - 1 steps after it first fell below */
            assert_true(r.q_switch < RATIO);
            assert_true(r.first_below > 0);
            assert_true(r.switch_step >= r.first_below && r.switch_step <= r.first_below + CHECK_EVERY - 1);
            /* and at the closed-form time: hymo's crossing is within one step
             * of the RK4 crossing t* (the trajectories differ by < 1e-5 rad
             * at 2.2 rad/s there, a time shift < 1e-5 s; slack 1e-4 s) */
            assert_true(fabs(r.first_below * dts[d] - t_star) <= dts[d] + 1e-4);
            assert_true(t_switch >= t_star - 1e-4 && t_switch <= t_star + CHECK_EVERY * dts[d] + 1e-4);
            /* the log names both sets and the switch time */
            char expect[HYMO_REF_TEXT_MAX];
            snprintf(expect, sizeof expect, "y; theta from t=%.4g", t_switch);
            assert_string_equal(s->independent, expect);
            /* to t_end, with the constraints held by the inner Newton
             * (INNER_TOL 1e-10; measured |Phi| <= 1.6e-15 m, |Phi_z zd| <=
             * 1.8e-15 m/s, also across the switch) */
            assert_close(s->t_reached, t_end, 1e-9);
            assert_true(s->max_constraint_position <= 1e-10);
            assert_true(s->max_constraint_velocity <= 1e-10);
            assert_true(s->max_constraint_acceleration <= 1e-8);
            /* against the RK4 solution: trapezoidal errors measured (numeric /
             * fast Jacobian) at dt = 1 ms: theta 7.45e-6 / 7.47e-6 rad,
             * theta' 2.22e-5 / 2.23e-5 rad/s, psi 3.69e-6 / 3.70e-6 rad,
             * y 6.61e-6 / 6.64e-6 m, energy drift 7.13e-4 / 7.19e-4 J (of
             * 45.5 J of kinetic energy at the bottom); all / 4 at 0.5 ms.
             * Bounds: ~1.35 x the measured values, scaled by (dt / 1 ms)^2. */
            const double sc = (dts[d] / 1e-3) * (dts[d] / 1e-3);
            assert_true(r.err_theta <= 1.0e-5 * sc);
            assert_true(r.err_thetad <= 3.0e-5 * sc);
            assert_true(r.err_psi <= 5.0e-6 * sc);
            assert_true(r.err_y <= 9.0e-6 * sc);
            assert_true(s->peak_drift <= 1.0e-3 * sc);
            e_theta[j][d] = r.err_theta;
        }
    /* the run driver reports the same log, and the reference file keeps it */
    hymo_run_options opt;
    options(model, HYMO_FORMULATION_DOUBLE_STEP, 1e-3, t_end, &opt);
    hymo_run_summary rs;
    hymo_error err;
    hymo_error_clear(&err);
    remove("reselect_run.h5");
    if (hymo_run(model, &opt, "reselect_run.h5", &rs, &err) != HYMO_OK) fail_msg("%s", err.message);
    assert_int_equal(rs.n_reselections, 1);
    assert_string_equal(rs.independent, "y; theta from t=0.432");
    hymo_reference *ref = NULL;
    if (hymo_ref_read("reselect_run.h5", &ref, &err) != HYMO_OK) fail_msg("%s", err.message);
    assert_int_equal(ref->complete, 1);
    assert_int_equal(ref->summary.n_reselections, 1);
    assert_string_equal(ref->summary.independent, rs.independent);
    hymo_ref_free(ref);
    remove("reselect_run.h5");
    /* second order against the RK4 solution for both Jacobians: halving dt
     * divides the error by ~4 */
    for (int j = 0; j < 2; ++j) {
        double order = log2(e_theta[j][0] / e_theta[j][1]);
        print_message("%s: order %.3f\n", hymo_jacobian_name(jacs[j]), order);
        assert_true(order >= 1.8 && order <= 2.2);
    }
    hymo_model_free(model);
}

/* The dead centre is a singularity of the partition, not of the
 * mechanism: the penalty formulation (all coordinates, no partition)
 * passes it without re-selection and agrees with the RK4 solution too. */
static void test_penalty_same_motion(void **state)
{
    (void)state;
    hymo_model *model = load_model();
    run_result r;
    run_and_compare(model, HYMO_FORMULATION_PENALTY, HYMO_JACOBIAN_FAST, 1e-3, 4.0, &r);
    const hymo_run_summary *s = &r.summary;
    print_message("penalty fast dt = 1 ms: independent '%s', %d re-selections; max err theta %.3g rad, theta' %.3g "
                  "rad/s, psi %.3g rad, y %.3g m; |Phi| %.3g, |Phi_z zd| %.3g, drift %.3g J, iterations %.2f\n",
                  s->independent, s->n_reselections, r.err_theta, r.err_thetad, r.err_psi, r.err_y,
                  s->max_constraint_position, s->max_constraint_velocity, s->peak_drift, s->mean_iterations);
    /* measured: theta 1.75e-5 rad, theta' 4.59e-5 rad/s, psi 8.76e-6 rad,
     * y 1.03e-5 m, |Phi| 5.3e-15 m, |Phi_z zd| 5.0e-9 m/s, drift 2.5e-4 J */
    assert_true(r.err_theta <= 2.5e-5);
    assert_true(r.err_thetad <= 6.0e-5);
    assert_true(r.err_psi <= 1.2e-5);
    assert_true(r.err_y <= 1.4e-5);
    assert_true(s->max_constraint_position <= 1e-10);
    assert_true(s->max_constraint_velocity <= 1e-8);
    assert_true(s->peak_drift <= 5e-4);
    assert_string_equal(s->independent, "all");
    assert_int_equal(s->n_reselections, 0);
    assert_close(s->t_reached, 4.0, 1e-9);
    hymo_model_free(model);
}

/* The crank started at 30 rad/s towards the bottom dead centre (the
 * slider's rate y'(theta0) * (-30) given as joint.rate): it reaches the
 * dead centre in ~0.017 s, within 17 steps of 1 ms, so the re-selection
 * check every 8 steps alone lets the crank pass it with y still
 * independent (the switch then came at t = 0.12 s).  The current set's LU
 * pivot, watched every step, runs the check at once below reselect_ratio
 * of its start value: at 1 and 0.5 ms the switch to theta comes before the
 * dead centre (theta still above -90 deg, q below the ratio), and the crank
 * angle's error against the closed form (RK4 from the same rate) over
 * 0.3 s falls 3.5-4.5x (measured 1.26e-2 / 3.2e-3 rad). */
static double fast_crank(double dt, double *theta_switch)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/slider_crank.yaml", HYMO_TESTS_DIR);
    char *text = test_read_file(path);
    const char *key = "initial: -5.605034153776295}";
    char *at = strstr(text, key);
    assert_non_null(at);
    crank_kin k0;
    const double w0 = -30.0;
    crank_kinematics(-PI / 3.0, &k0);
    char *fast = malloc(strlen(text) + 64);
    assert_non_null(fast);
    snprintf(fast, strlen(text) + 64, "%.*sinitial: -5.605034153776295, rate: %.17g}%s", (int)(at - text), text,
             k0.dy * w0, at + strlen(key));
    free(text);
    hymo_model *model = test_load_text(fast, "slider_crank_fast");
    free(fast);
    const int ith = hymo_model_find_body(model, "crank");
    hymo_run_options opt;
    options(model, HYMO_FORMULATION_DOUBLE_STEP, dt, 0.3, &opt);
    hymo_sim *sim = test_sim_create(model, &opt);
    const long n = lround(0.3 / dt);
    double x[2] = {-PI / 3.0, w0}, worst = 0.0;
    hymo_error err;
    *theta_switch = NAN;
    for (long s = 1; s <= n; ++s) {
        for (int i = 0; i < 8; ++i) { /* RK4 from the initial rate, 8 sub-steps per dt */
            const double h = dt / 8;
            double k1[2], k2[2], k3[2], k4[2], xt[2];
            rhs(x, k1);
            for (int j = 0; j < 2; ++j) xt[j] = x[j] + 0.5 * h * k1[j];
            rhs(xt, k2);
            for (int j = 0; j < 2; ++j) xt[j] = x[j] + 0.5 * h * k2[j];
            rhs(xt, k3);
            for (int j = 0; j < 2; ++j) xt[j] = x[j] + h * k3[j];
            rhs(xt, k4);
            for (int j = 0; j < 2; ++j) x[j] += h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j]);
        }
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        const int *idx;
        hymo_sim_independent(sim, &idx);
        if (isnan(*theta_switch) && idx[0] == ith) *theta_switch = hymo_sim_z(sim)[ith];
        worst = fmax(worst, fabs(hymo_sim_z(sim)[ith] - x[0]));
    }
    print_message("crank at 30 rad/s, dt %g s: switch to theta at theta = %.4f deg (q = %.4f), max |theta - RK4| "
                  "%.3g rad\n", dt, *theta_switch * 180 / PI, q_of_theta(*theta_switch), worst);
    hymo_sim_free(sim);
    hymo_model_free(model);
    return worst;
}

static void test_fast_crank_reselects_before_dead_centre(void **state)
{
    (void)state;
    double sw1, sw2;
    const double e1 = fast_crank(1e-3, &sw1), e2 = fast_crank(5e-4, &sw2);
    assert_false(isnan(sw1) || isnan(sw2));
    assert_true(sw1 > -PI / 2.0 && sw2 > -PI / 2.0);
    assert_true(q_of_theta(sw1) < RATIO && q_of_theta(sw2) < RATIO);
    assert_true(e1 / e2 > 3.5 && e1 / e2 < 4.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_solution),
        cmocka_unit_test(test_reselection),
        cmocka_unit_test(test_penalty_same_motion),
        cmocka_unit_test(test_fast_crank_reselects_before_dead_centre),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
