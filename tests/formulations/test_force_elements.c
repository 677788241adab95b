/* Mechanical force elements (formulations/force_elements.c,
 * docs/model-format.md "forces"):
 *   - the generalized forces against the virtual power of the element
 *     computed from finite differences of point positions (an independent
 *     route: no Qbar, no b_j);
 *   - the fast Jacobian's K = -dQ'/dz and C = -dQ'/dzd per element against
 *     central differences of Q' (the spring-damper's K up to its geometric
 *     term -F d2l/dz2, checked to be exactly that);
 *   - fast and numeric Jacobian runs agree on a closed loop with a
 *     cylinder and every element (both formulations);
 *   - a joint limit is located as an event and the run stays second order
 *     across it (error ratio ~4 per halving of dt);
 *   - a co-simulation (split velocity-force) sees the elements;
 *   - loader errors name forces[k].field. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "force_elements.h"
#include "hymo/cosim.h"
#include "hymo/sim.h"
#include "kinematics.h"
#include "test_util.h"

/* A spatial chain: revolute (z), prismatic (along a skew axis), revolute
 * (about a skew axis); ground points for the spring-dampers. */
static const char *chain_head =
    "format: 1\nname: fe_chain\ngravity: [0, -9.81, 0]\n"
    "simulation: {dt: 1.0e-3, t_end: 0.3}\n"
    "ground:\n  points: {A: [0.3, 0.5, 0.2]}\n"
    "signals:\n  - {name: s1, points: [[0, 0.5], [1, 1.5]]}\n"
    "bodies:\n"
    "  - name: b1\n"
    "    joint: {name: q1, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: -60 deg}\n"
    "    mass: 2\n    com: [0.5, 0, 0]\n    inertia: [0.01, 0.2, 0.2]\n"
    "    points: {P: [1, 0, 0], M: [0.4, 0.1, 0.05]}\n"
    "  - name: b2\n"
    "    joint: {name: q2, type: prismatic, parent: b1, location: P, axis: [0.6, 0.8, 0], initial: 0.1}\n"
    "    mass: 1\n    com: [0.1, 0, 0]\n    inertia: [0.01, 0.02, 0.03]\n"
    "    points: {R: [0.2, 0, 0]}\n"
    "  - name: b3\n"
    "    joint: {name: q3, type: revolute, parent: b2, location: R, axis: [0, 0.6, 0.8], initial: 20 deg}\n"
    "    mass: 0.5\n    com: [0.3, 0, 0]\n    inertia: [0.005, 0.02, 0.02]\n"
    "    points: {T: [0.6, 0.1, -0.1]}\n";

static hymo_model *load_text(const char *head, const char *forces)
{
    size_t n = strlen(head) + strlen(forces) + 16;
    char *text = malloc(n);
    snprintf(text, n, "%s%s", head, forces);
    hymo_model *m = NULL;
    hymo_error err;
    if (hymo_model_load_string(text, "fe_test.yaml", &m, &err) != HYMO_OK) fail_msg("%s", err.message);
    free(text);
    return m;
}

/* Q' of the elements alone at (z, zd): Q'(with) - Q'(without) (Q' is
 * linear in the body forces). */
static void q_elements(hymo_kin *kin, hymo_fe *fe, const hymo_model *m, const double *z, const double *zd,
                       double t, double *q)
{
    const int nz = m->n_bodies;
    double q0[8];
    hymo_error err;
    hymo_kin_positions(kin, m, z);
    hymo_kin_velocities(kin, m, zd);
    hymo_kin_forces_begin(kin, m);
    hymo_kin_mass_and_forces(kin, m);
    memcpy(q0, kin->Q, (size_t)nz * sizeof(double));
    hymo_kin_forces_begin(kin, m);
    if (hymo_fe_apply(fe, m, kin, t, 1e-3, &err) != HYMO_OK) fail_msg("%s", err.message);
    hymo_kin_mass_and_forces(kin, m);
    for (int j = 0; j < nz; ++j) q[j] = kin->Q[j] - q0[j];
}

static void point_at(hymo_kin *kin, const hymo_model *m, int p, const double *z, double r[3])
{
    hymo_kin_positions(kin, m, z);
    hymo_kin_body_point(kin, m->points[p].body, m->points[p].r, r);
}

/* One element type: virtual power, K and C (the fast Jacobian's, with the
 * spring-damper's terms of d2l/dz2); exact_k 2: K not checked (external:
 * its lever-arm term is neglected). */
static void check_element(const char *forces, const double *z, const double *zd, int exact_k)
{
    hymo_model *m = load_text(chain_head, forces);
    const int nz = m->n_bodies;
    hymo_kin kin;
    hymo_fe fe;
    hymo_error err;
    assert_int_equal(hymo_kin_init(&kin, &m->compiled->kin, &err), HYMO_OK);
    assert_int_equal(hymo_fe_alloc(&fe, m, &err), HYMO_OK);
    const double t = 0.4;
    double q[3], qp[3], qm[3], zz[3], zdz[3], Kan[9], Can[9];
    double *gz = calloc((size_t)hymo_fe_max_rows(m) * nz, sizeof(double)), *g = gz;
    q_elements(&kin, &fe, m, z, zd, t, q);
    const hymo_force_element *el = &m->force_elements[0];
    const double F = fe.F[0], dF_dl = fe.dF_dl[0], dF_dld = fe.dF_dld[0];
    const int rows = hymo_fe_gradients(&fe, m, &kin, gz);
    /* the fast Jacobian's K and C: -(dF/dl) g g^T, -(dF/dldot) g g^T and
     * the spring-damper's terms alpha v_p v_q^T */
    for (int i = 0; i < nz; ++i)
        for (int j = 0; j < nz; ++j) {
            Kan[i * nz + j] = -dF_dl * g[i] * g[j];
            Can[i * nz + j] = -dF_dld * g[i] * g[j];
            for (int k = 0; k < fe.nterm; ++k)
                Kan[i * nz + j] += fe.talpha[k] * gz[fe.tp[k] * nz + i] * gz[fe.tq[k] * nz + j];
        }

    /* virtual power: Q'.zd against the element's power from differences of positions */
    const double h = 1e-6;
    double power = 0.0;
    if (el->type == HYMO_FE_SPRING_DAMPER) {
        double ra[3], rb[3], l[2];
        for (int s = 0; s < 2; ++s) {
            for (int j = 0; j < nz; ++j) zz[j] = z[j] + (s ? h : -h) * zd[j];
            point_at(&kin, m, el->point_a, zz, ra);
            point_at(&kin, m, el->point_b, zz, rb);
            l[s] = sqrt((rb[0] - ra[0]) * (rb[0] - ra[0]) + (rb[1] - ra[1]) * (rb[1] - ra[1]) +
                        (rb[2] - ra[2]) * (rb[2] - ra[2]));
        }
        const double ld = (l[1] - l[0]) / (2 * h);
        power = -(el->stiffness * (0.5 * (l[0] + l[1]) - el->free_length) + el->damping * ld + el->preload) * ld;
    } else if (el->type == HYMO_FE_EXTERNAL) {
        double r0[3], r1[3], f[3];
        for (int j = 0; j < nz; ++j) zz[j] = z[j] - h * zd[j];
        point_at(&kin, m, el->point_a, zz, r0);
        for (int j = 0; j < nz; ++j) zz[j] = z[j] + h * zd[j];
        point_at(&kin, m, el->point_a, zz, r1);
        const double sig = 0.5 + t; /* s1 at t */
        for (int k = 0; k < 3; ++k) f[k] = el->force[k] * (el->force_signal[k] >= 0 ? sig : 1.0);
        for (int k = 0; k < 3; ++k) power += f[k] * (r1[k] - r0[k]) / (2 * h);
        assert_true(el->torque[0] == 0.0 && el->torque[1] == 0.0 && el->torque[2] == 0.0);
    } else {
        power = F * zd[el->joint];
    }
    double qzd = 0.0;
    for (int j = 0; j < nz; ++j) qzd += q[j] * zd[j];
    printf("  %-16s Q'.zd %.12g, power %.12g\n", el->name, qzd, power);
    assert_close(qzd, power, 1e-7 * (fabs(power) + 1.0));

    /* K and C by central differences of Q' */
    double worst_k = 0.0, worst_c = 0.0, scale = 0.0;
    for (int j = 0; j < nz; ++j) {
        memcpy(zz, z, sizeof zz);
        zz[j] = z[j] + h;
        q_elements(&kin, &fe, m, zz, zd, t, qp);
        zz[j] = z[j] - h;
        q_elements(&kin, &fe, m, zz, zd, t, qm);
        memcpy(zdz, zd, sizeof zdz);
        double cp[3], cm[3];
        zdz[j] = zd[j] + h;
        q_elements(&kin, &fe, m, z, zdz, t, cp);
        zdz[j] = zd[j] - h;
        q_elements(&kin, &fe, m, z, zdz, t, cm);
        for (int i = 0; i < nz; ++i) {
            double k_fd = -(qp[i] - qm[i]) / (2 * h), c_fd = -(cp[i] - cm[i]) / (2 * h);
            const double k_an = Kan[i * nz + j], c_an = Can[i * nz + j];
            if (exact_k != 2) worst_k = fmax(worst_k, fabs(k_fd - k_an));
            worst_c = fmax(worst_c, fabs(c_fd - c_an));
            scale = fmax(scale, fmax(fabs(k_an), fabs(c_an)));
        }
    }
    printf("  %-16s F %.6g, dF/dl %.6g, dF/dldot %.6g: max |K - K_fd| %.3g, |C - C_fd| %.3g (scale %.3g; %d rows, "
           "%d terms)\n",
           el->name, F, dF_dl, dF_dld, worst_k, worst_c, scale, rows, fe.nterm);
    free(gz);
    assert_true(worst_k <= 1e-6 * (scale + 1.0));
    assert_true(worst_c <= 1e-6 * (scale + 1.0));
    hymo_fe_free(&fe);
    hymo_kin_free(&kin);
    hymo_model_free(m);
}

static void test_derivatives(void **state)
{
    (void)state;
    const double z[3] = {-0.9, 0.15, 0.4}, zd[3] = {0.7, -0.3, 1.1}, zd0[3] = {0, 0, 0};
    /* spring-damper in tension and moving: K with its d2l/dz2 terms */
    check_element("forces:\n  - {name: sd, type: spring_damper, point_a: A, point_b: b3.T, stiffness: 300, "
                  "damping: 20, free_length: 0.4, preload: 5}\n",
                  z, zd, 0);
    /* between two bodies */
    check_element("forces:\n  - {name: sd2, type: spring_damper, point_a: b1.M, point_b: T, stiffness: 300, "
                  "damping: 20, free_length: 0.2}\n",
                  z, zd, 0);
    /* joint spring on the prismatic and on a revolute joint */
    check_element("forces:\n  - {name: js, type: joint_spring, joint: q2, stiffness: 500, damping: 7, "
                  "free_position: 0.05, preload: 3}\n",
                  z, zd, 1);
    check_element("forces:\n  - {name: jr, type: joint_spring, joint: q3, stiffness: 50, damping: 0.7, "
                  "free_position: 10 deg}\n",
                  z, zd, 1);
    /* friction near the smoothing velocity */
    const double zds[3] = {0.02, -0.015, 0.004};
    check_element("forces:\n  - {name: fr, type: joint_friction, joint: q3, coulomb: 4, friction_velocity: 0.01, "
                  "viscous: 0.3}\n",
                  z, zds, 1);
    check_element("forces:\n  - {name: frp, type: joint_friction, joint: q2, coulomb: 4, friction_velocity: 0.01}\n",
                  z, zds, 1);
    /* limits, inside the lower and inside the upper end (branch by the geometry) */
    check_element("forces:\n  - {name: lo, type: joint_limit, joint: q1, lower: -0.8, upper: 0.5, stiffness: 1e4, "
                  "damping: 30}\n",
                  z, zd, 1);
    check_element("forces:\n  - {name: hi, type: joint_limit, joint: q2, upper: 0.1, stiffness: 1e5, damping: 30}\n",
                  z, zd, 1);
    /* external force (global, scaled by a signal): power, C = 0 (K = 0 is
     * claimed only up to its lever-arm term, neglected) */
    check_element("forces:\n  - {name: ex, type: external, point: b3.T, force: [3, -4, 2], "
                  "force_signals: [s1, null, s1]}\n",
                  z, zd, 2);
    (void)zd0;
}

/* a joint limit with no contact: Q' zero, also with the limit's switching
 * state forced (sw = 0 takes the free branch inside the limit) */
static void test_limit_branch_follows_switch(void **state)
{
    (void)state;
    hymo_model *m = load_text(chain_head, "forces:\n  - {name: lo, type: joint_limit, joint: q1, lower: -0.8, "
                                          "stiffness: 1e4, damping: 30}\n");
    hymo_kin kin;
    hymo_fe fe;
    hymo_error err;
    assert_int_equal(hymo_kin_init(&kin, &m->compiled->kin, &err), HYMO_OK);
    assert_int_equal(hymo_fe_alloc(&fe, m, &err), HYMO_OK);
    assert_int_equal(fe.nsw, 1);
    const double z[3] = {-0.9, 0.1, 0.3}, zd[3] = {0.1, 0, 0};
    double q[3], g[1];
    unsigned char sw = 0;
    fe.sw = &sw;
    q_elements(&kin, &fe, m, z, zd, 0.0, q);
    assert_true(q[0] == 0.0);
    hymo_fe_switching(&fe, m, &kin, g);
    assert_close(g[0], 0.1, 1e-15);
    sw = 1;
    q_elements(&kin, &fe, m, z, zd, 0.0, q);
    assert_close(q[0], 1e4 * 0.1 - 30 * 0.1, 1e-9);
    hymo_fe_free(&fe);
    hymo_kin_free(&kin);
    hymo_model_free(m);
}

/* The four-bar of data/ with a spring-damper, a joint spring, friction,
 * a limit that is reached and an external force: fast and numeric Newton
 * matrices give the same run (both formulations). */
static const char *fourbar_forces =
    "forces:\n"
    "  - {name: sd, type: spring_damper, point_a: ground.G, point_b: body3.E, stiffness: 2000, damping: 300,"
    " free_length: 0.8}\n"
    "  - {name: js, type: joint_spring, joint: z3, stiffness: 400, damping: 40, free_position: -45 deg}\n"
    "  - {name: fr, type: joint_friction, joint: z1, coulomb: 50, friction_velocity: 0.01, viscous: 10}\n"
    "  - {name: lim, type: joint_limit, joint: z1, lower: -0.02, upper: 0.05, stiffness: 1e6, damping: 1e4}\n"
    "  - {name: ex, type: external, point: body1.C, frame: body, force: [0, -200, 0]}\n";

/* A sim of m: double-step (form 0) or penalty (1), numeric (mode 0) or
 * fast (1) Jacobian. */
static hymo_sim *form_mode_sim(const hymo_model *m, int form, int mode)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.formulation = form ? HYMO_FORMULATION_PENALTY : HYMO_FORMULATION_DOUBLE_STEP;
    opt.jacobian = mode ? HYMO_JACOBIAN_FAST : HYMO_JACOBIAN_NUMERIC;
    return test_sim_create(m, &opt);
}

static void test_fast_equals_numeric(void **state)
{
    (void)state;
    char *base = test_read_file(HYMO_DATA_DIR "/fourbar.yaml");
    hymo_model *m = load_text(base, fourbar_forces);
    free(base);
    hymo_error err;
    for (int form = 0; form < 2; ++form) {
        hymo_sim *sim[2];
        for (int mode = 0; mode < 2; ++mode) {
            sim[mode] = form_mode_sim(m, form, mode);
        }
        double dz = 0.0, zmin = 0.0, zmax = 0.0;
        for (int k = 0; k < 3000; ++k) {
            for (int mode = 0; mode < 2; ++mode)
                if (hymo_sim_step(sim[mode], &err) != HYMO_OK) fail_msg("%s", err.message);
            for (int j = 0; j < 3; ++j) dz = fmax(dz, fabs(hymo_sim_z(sim[0])[j] - hymo_sim_z(sim[1])[j]));
            zmin = fmin(zmin, hymo_sim_z(sim[0])[0]);
            zmax = fmax(zmax, hymo_sim_z(sim[0])[0]);
        }
        hymo_run_summary s[2];
        hymo_sim_summary(sim[0], &s[0]);
        hymo_sim_summary(sim[1], &s[1]);
        const long ev[2] = {hymo_sim_events(sim[0], NULL), hymo_sim_events(sim[1], NULL)};
        printf("  four-bar + elements, %s: max |z_fast - z_numeric| %.3g rad, z1 in [%.4f, %.4f], events %ld/%ld, "
               "mean iterations numeric %.3f fast %.3f\n",
               form ? "penalty" : "double-step", dz, zmin, zmax, ev[0], ev[1], s[0].mean_iterations,
               s[1].mean_iterations);
        assert_true(dz <= 1e-8);
        assert_true(ev[0] > 0 && ev[0] == ev[1]); /* the limit is reached */
        assert_true(s[1].mean_iterations <= s[0].mean_iterations + 0.5);
        hymo_sim_free(sim[0]);
        hymo_sim_free(sim[1]);
    }
    hymo_model_free(m);
}

/* Stiff elements (dt^2/4 K and dt/2 C of the order of the inertia): the
 * fast matrix must carry K and C to converge as the numeric one does.  A
 * pendulum with a stiff joint spring, steep friction and a stiff stop, and
 * a slider on a stiff spring-damper along its slide (no geometric term).
 * (A stiff spring-damper across the spatial chain, k = 1e5 N/m on 0.5 kg:
 * 4.47 fast against 2.85 numeric mean iterations with its d2l/dz2 terms,
 * 5.29 without; the rest is the fast matrix's general neglect of the
 * position derivatives of M' zdd at these accelerations.) */
static const char *stiff_models[2] = {
    "format: 1\nname: fe_stiff1\ngravity: [0, -9.81, 0]\nsimulation: {dt: 1.0e-3, t_end: 0.3}\n"
    "bodies:\n"
    "  - name: arm\n"
    "    joint: {name: q, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: 0.2}\n"
    "    mass: 2\n    com: [0.5, 0, 0]\n    inertia: [0, 0.1666666666666667, 0.1666666666666667]\n"
    "forces:\n"
    "  - {name: js, type: joint_spring, joint: q, stiffness: 2e4, damping: 5, free_position: 0.1}\n"
    "  - {name: fr, type: joint_friction, joint: q, coulomb: 20, friction_velocity: 0.02, viscous: 1}\n"
    "  - {name: lim, type: joint_limit, joint: q, upper: 0.15, stiffness: 1e5, damping: 100}\n",
    "format: 1\nname: fe_stiff2\ngravity: [0, -9.81, 0]\nsimulation: {dt: 1.0e-3, t_end: 0.3}\n"
    "ground:\n  points: {A: [-0.5, 0, 0]}\n"
    "bodies:\n"
    "  - name: cart\n"
    "    joint: {name: x, type: prismatic, parent: ground, location: [0, 0, 0], axis: [1, 0, 0], initial: 0.01}\n"
    "    mass: 1\n    com: [0, 0, 0]\n    inertia: [0.1, 0.1, 0.1]\n    points: {P: [0, 0, 0]}\n"
    "forces:\n"
    "  - {name: sd, type: spring_damper, point_a: A, point_b: P, stiffness: 1e6, damping: 300, free_length: 0.5}\n"};

static void test_stiff_fast_jacobian(void **state)
{
    (void)state;
    hymo_error err;
    for (int mi = 0; mi < 2; ++mi) {
        hymo_model *m = load_text(stiff_models[mi], "");
        for (int form = 0; form < 2; ++form) {
            hymo_sim *sim[2];
            for (int mode = 0; mode < 2; ++mode) {
                sim[mode] = form_mode_sim(m, form, mode);
            }
            double dz = 0.0;
            for (int k = 0; k < 300; ++k) {
                for (int mode = 0; mode < 2; ++mode)
                    if (hymo_sim_step(sim[mode], &err) != HYMO_OK) fail_msg("%s: %s", m->name, err.message);
                dz = fmax(dz, fabs(hymo_sim_z(sim[0])[0] - hymo_sim_z(sim[1])[0]));
            }
            hymo_run_summary s[2];
            hymo_sim_summary(sim[0], &s[0]);
            hymo_sim_summary(sim[1], &s[1]);
            printf("  %s, %s: max |z_fast - z_numeric| %.3g, events %ld, mean iterations numeric %.3f fast %.3f "
                   "(max %d, %d)\n",
                   m->name, form ? "penalty" : "double-step", dz, hymo_sim_events(sim[0], NULL), s[0].mean_iterations,
                   s[1].mean_iterations, s[0].max_iterations, s[1].max_iterations);
            /* measured: 3.8e-8 rad (the pendulum's stops), fast - numeric mean
             * iterations +0.01 and +0.51 (the slider: the contractive test's
             * reuse rule, as in test_fast_jacobian); without the elements' K
             * and C in the fast matrix +1.29 on the pendulum */
            assert_true(dz <= 2e-7);
            assert_true(s[1].mean_iterations <= s[0].mean_iterations + 0.7);
            assert_true(s[1].max_iterations <= 2 * s[0].max_iterations);
            hymo_sim_free(sim[0]);
            hymo_sim_free(sim[1]);
        }
        hymo_model_free(m);
    }
}

/* A pendulum falling onto its lower joint limit: events located, and the
 * error of z at t = 0.6 s (after the contact) falls ~4x per halving of dt
 * (differences of successive runs). */
static const char *pendulum =
    "format: 1\nname: fe_limit\ngravity: [0, -9.81, 0]\nsimulation: {dt: 4.0e-3, t_end: 0.6}\n"
    "bodies:\n"
    "  - name: arm\n"
    "    joint: {name: q, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: 0}\n"
    "    mass: 2\n    com: [0.5, 0, 0]\n    inertia: [0, 0.1666666666666667, 0.1666666666666667]\n"
    "forces:\n"
    "  - {name: stop, type: joint_limit, joint: q, lower: -1.0, stiffness: 2000, damping: 20}\n";

static double limit_run(const hymo_model *m, double dt, hymo_formulation_kind form, hymo_jacobian_mode jac,
                        long *events)
{
    hymo_run_options opt;
    hymo_error err;
    hymo_sim *sim;
    hymo_run_options_default(&opt, m);
    opt.dt = dt;
    opt.formulation = form;
    opt.jacobian = jac;
    sim = test_sim_create(m, &opt);
    const long n = lround(0.6 / dt);
    for (long k = 0; k < n; ++k)
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    *events = hymo_sim_events(sim, NULL);
    const double z = hymo_sim_z(sim)[0];
    hymo_sim_free(sim);
    return z;
}

static void test_limit_second_order(void **state)
{
    (void)state;
    hymo_model *m = load_text(pendulum, "");
    for (int form = 0; form < 2; ++form)
        for (int jac = 0; jac < 2; ++jac) {
            double z[5];
            long ev[5];
            for (int i = 0; i < 5; ++i)
                z[i] = limit_run(m, 4e-3 / (1 << i), form ? HYMO_FORMULATION_PENALTY : HYMO_FORMULATION_DOUBLE_STEP,
                                 jac ? HYMO_JACOBIAN_FAST : HYMO_JACOBIAN_NUMERIC, &ev[i]);
            printf("  limit %s %s: z(0.6) %.10f, events %ld; ratios", form ? "penalty" : "double-step",
                   jac ? "fast" : "numeric", z[4], ev[4]);
            for (int i = 0; i < 3; ++i) {
                const double r = (z[i] - z[i + 1]) / (z[i + 1] - z[i + 2]);
                printf(" %.2f", r);
                if (i >= 1) assert_true(r > 3.3 && r < 4.8);
            }
            printf("\n");
            for (int i = 0; i < 5; ++i) assert_true(ev[i] >= 2); /* entry and exit of the end damper */
        }
    hymo_model_free(m);
}

/* Co-simulation: the mechanical subsystem carries the elements (the
 * four-bar with a strong joint spring and a stop on z1 ends elsewhere than
 * without them, and close to the monolithic run with them), with the
 * default scheme, the interface-model approximation (its a0 includes the
 * elements) and the index-1 / semi-implicit Euler mechanics (the stop's
 * branch by the state reached). */
static void test_cosim_sees_elements(void **state)
{
    (void)state;
    char *base = test_read_file(HYMO_DATA_DIR "/fourbar.yaml");
    const char *extra = "forces:\n  - {name: js, type: joint_spring, joint: z3, stiffness: 2000, damping: 400,"
                        " free_position: -40 deg}\n"
                        "  - {name: lim, type: joint_limit, joint: z1, upper: 0.03, stiffness: 1e6, damping: 1e4}\n";
    hymo_model *with = load_text(base, extra), *without = load_text(base, "");
    free(base);
    hymo_error err;
    hymo_run_options opt;
    hymo_sim *sim;
    hymo_run_options_default(&opt, with);
    opt.dt = 1e-4;
    sim = test_sim_create(with, &opt);
    double zmax = 0.0;
    for (int k = 0; k < 25000; ++k) {
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        zmax = fmax(zmax, hymo_sim_z(sim)[0]);
    }
    const double zm = hymo_sim_z(sim)[2];
    hymo_sim_free(sim);
    hymo_model *ms[2] = {with, without};
    for (int variant = 0; variant < 3; ++variant) {
        double zc[2];
        for (int i = 0; i < 2; ++i) {
            hymo_cosim_options co;
            hymo_cosim_options_default(&co, ms[i]);
            co.mech.t_end = 2.5;
            if (variant == 1) co.approx = HYMO_APPROX_INTERFACE_MODEL, co.coupling = HYMO_COUPLING_VELOCITY_FORCE;
            if (variant == 2) co.mech_integrator = HYMO_MECH_INDEX1, co.H = co.mech.dt = 1e-4;
            hymo_cosim_summary sum;
            test_cosim_run(ms[i], &co, NULL, "fe_cosim.h5", &sum);
            hymo_reference *ref = test_read_ref("fe_cosim.h5");
            zc[i] = ref->z[(size_t)(ref->n - 1) * ref->nz + 2];
            hymo_ref_free(ref);
        }
        printf("  cosim %s z3(2.5 s): with the elements %.7f, without %.7f; monolithic with %.7f (z1 max %.4f)\n",
               variant == 0 ? "default" : variant == 1 ? "interface model" : "index-1", zc[0], zc[1], zm, zmax);
        /* measured 1e-9, 2e-7, 7e-7 rad from the monolithic run; the
         * elements move z3 by 0.088 rad; an interface model without them
         * is 1.9e-3 rad off, index-1 mechanics without the stop's branch
         * update 0.088 */
        assert_true(fabs(zc[0] - zm) < 2e-5);
        assert_true(fabs(zc[0] - zc[1]) > 0.05);
    }
    assert_true(zmax > 0.03); /* the stop is reached */
    hymo_model_free(with);
    hymo_model_free(without);
}

/* The static start holds the elements too: the four-bar with a joint
 * spring and a preloaded spring-damper stays at rest until its valve opens
 * at t = 1 s (the cylinder's static pressures balance gravity and the
 * elements). */
static void test_static_start(void **state)
{
    (void)state;
    char *base = test_read_file(HYMO_DATA_DIR "/fourbar.yaml");
    hymo_model *m = load_text(base, "forces:\n  - {name: js, type: joint_spring, joint: z3, stiffness: 2000,"
                                    " free_position: -40 deg}\n"
                                    "  - {name: sd, type: spring_damper, point_a: ground.G, point_b: body3.E,"
                                    " stiffness: 1000, damping: 100, free_length: 0.5, preload: 300}\n");
    free(base);
    hymo_run_options opt;
    hymo_sim *sim;
    hymo_error err;
    hymo_run_options_default(&opt, m);
    sim = test_sim_create(m, &opt);
    double z0[3], dz = 0.0;
    memcpy(z0, hymo_sim_z(sim), sizeof z0);
    for (int k = 0; k < 500; ++k) {
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        for (int j = 0; j < 3; ++j) dz = fmax(dz, fabs(hymo_sim_z(sim)[j] - z0[j]));
    }
    printf("  four-bar + elements at rest until the valve opens: max |z - z0| %.3g rad over 0.5 s\n", dz);
    assert_true(dz < 1e-9);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

/* The energy balance counts the elements' work: a pendulum with a
 * spring-damper, a joint spring, friction, a stop and an external force
 * keeps |D| small and falling ~4x per halving of dt. */
static void test_energy_balance(void **state)
{
    (void)state;
    hymo_model *m = load_text(pendulum, "  - {name: js, type: joint_spring, joint: q, stiffness: 5, damping: 0.2}\n"
                                        "  - {name: fr, type: joint_friction, joint: q, coulomb: 0.5,"
                                        " friction_velocity: 0.05, viscous: 0.1}\n");
    double drift[2], work[2];
    for (int i = 0; i < 2; ++i) {
        hymo_run_options opt;
        hymo_sim *sim;
        hymo_error err;
        hymo_run_options_default(&opt, m);
        opt.dt = i ? 5e-4 : 1e-3;
        sim = test_sim_create(m, &opt);
        for (long k = 0; k < lround(0.6 / opt.dt); ++k)
            if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        hymo_run_summary s;
        hymo_sim_summary(sim, &s);
        drift[i] = s.peak_drift, work[i] = s.max_work;
        hymo_sim_free(sim);
    }
    printf("  energy balance with elements: peak |D| %.3g J (dt 1 ms), %.3g J (0.5 ms), max |W| %.3g J\n", drift[0],
           drift[1], work[1]);
    assert_true(work[1] > 1.0);
    assert_true(drift[1] < 1e-3 * work[1]);
    assert_true(drift[0] / drift[1] > 3.0);
    hymo_model_free(m);
}

static void expect_error(const char *forces, const char *needle)
{
    size_t n = strlen(chain_head) + strlen(forces) + 1;
    char *text = malloc(n);
    snprintf(text, n, "%s%s", chain_head, forces);
    hymo_model *m = NULL;
    hymo_error err;
    hymo_status st = hymo_model_load_string(text, "bad.yaml", &m, &err);
    free(text);
    if (st == HYMO_OK) fail_msg("loaded although it should fail with '%s'", needle);
    printf("  %s\n", err.message);
    if (!strstr(err.message, needle)) fail_msg("'%s' does not contain '%s'", err.message, needle);
    assert_null(m);
}

static void test_loader_errors(void **state)
{
    (void)state;
    expect_error("forces:\n  - {name: a, type: joint_spring, joint: nope, stiffness: 1}\n",
                 "bad.yaml:29: forces[0].joint: unknown joint 'nope'");
    expect_error("forces:\n  - {name: a, type: spring_damper, point_a: A, point_b: b9.X, stiffness: 1, free_length: 1}\n",
                 "forces[0].point_b: unknown point 'b9.X'");
    expect_error("forces:\n  - {name: a, type: spring_damper, point_a: A, point_b: T, stiffness: 1}\n",
                 "forces[0]: missing field 'free_length'");
    expect_error("forces:\n  - {name: a, type: spring_damper, point_a: b3.T, point_b: T, stiffness: 1, free_length: 1}\n",
                 "forces[0].point_b: both points are on the same body");
    expect_error("forces:\n  - {name: a, type: spring, joint: q1}\n", "forces[0].type: unknown force element type 'spring'");
    expect_error("forces:\n  - {name: a, type: joint_limit, joint: q1, lower: 1, upper: 0.5, stiffness: 1}\n",
                 "forces[0].upper: must be above lower");
    expect_error("forces:\n  - {name: a, type: joint_limit, joint: q1, stiffness: 1}\n",
                 "forces[0]: a joint limit needs 'lower' or 'upper'");
    expect_error("forces:\n  - {name: a, type: joint_friction, joint: q1, coulomb: 1, friction_velocity: 0}\n",
                 "forces[0].friction_velocity: must be > 0");
    expect_error("forces:\n  - {name: a, type: joint_spring, joint: q1, stiffness: -1}\n",
                 "forces[0].stiffness: must be >= 0");
    expect_error("forces:\n  - {name: a, type: joint_spring, joint: q1, stiffnes: 1}\n",
                 "forces[0]: unknown field 'stiffnes' for a joint_spring");
    expect_error("forces:\n  - {name: a, type: external, point: b3.T, force: [1, 2]}\n",
                 "forces[0].force: expected a list of 3 numbers");
    expect_error("forces:\n  - {name: a, type: external, point: b3.T, force: [1, 2, 3], force_signals: [x, null, null]}\n",
                 "forces[0].force_signals: unknown signal 'x'");
    expect_error("forces:\n  - {name: a, type: external, point: A, force: [1, 2, 3]}\n",
                 "forces[0].point: a point on the ground takes no force");
    expect_error("forces:\n  - {name: a, type: joint_spring, joint: q1}\n  - {name: a, type: joint_spring, joint: q2}\n",
                 "forces[1].name: duplicate force element name 'a'");
    expect_error("forces: {a: 1}\n", "forces: expected a list of force elements");
    expect_error("forces:\n  - {name: a, type: joint_limit, joint: q1, lower: abc, stiffness: 1}\n",
                 "forces[0].lower: expected a number (rad or m), or a string like");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_derivatives),         cmocka_unit_test(test_limit_branch_follows_switch),
        cmocka_unit_test(test_fast_equals_numeric), cmocka_unit_test(test_limit_second_order),
        cmocka_unit_test(test_cosim_sees_elements), cmocka_unit_test(test_loader_errors),
        cmocka_unit_test(test_static_start),        cmocka_unit_test(test_energy_balance),
        cmocka_unit_test(test_stiff_fast_jacobian),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
