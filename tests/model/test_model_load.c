/* Model loader: the four seed models, format variants, signal evaluation,
 * SHA-256, and every file in tests/bad_models/. */
#define _POSIX_C_SOURCE 200809L /* popen */
#include "test_util.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/model.h"
#include "hymo/reference.h"

static const double PI = 3.14159265358979323846;

/* Ct = Cd A sqrt(2 / rho) of the seed throttle. */
static double seed_ct(void) { return 0.8 * 2.83e-5 * sqrt(2.0 / 850.0); }
static double seed_tau(void) { return 1.0 / (2.0 * PI * 35.0); }
static double area_piston(void) { return 0.25 * PI * 0.080 * 0.080; }
static double area_rod(void) { return 0.25 * PI * (0.080 * 0.080 - 0.035 * 0.035); }

static void assert_vec(const double *v, double x, double y, double z, double tol)
{
    assert_close(v[0], x, tol);
    assert_close(v[1], y, tol);
    assert_close(v[2], z, tol);
}

static int find_node(const hymo_model *m, const char *name)
{
    for (int i = 0; i < m->n_nodes; i++)
        if (strcmp(m->nodes[i].name, name) == 0) return i;
    return -1;
}

static int find_signal(const hymo_model *m, const char *name)
{
    for (int i = 0; i < m->n_signals; i++)
        if (strcmp(m->signals[i].name, name) == 0) return i;
    return -1;
}

/* Checks that the subvolume parts of a volume are as expected. */
static void assert_fixed_part(const hymo_model *m, const hymo_node *n, int k, double v, double B)
{
    assert_true(k < n->n_parts);
    const hymo_subvolume *s = &m->subvolumes[n->first_part + k];
    assert_int_equal(s->cylinder, -1);
    assert_int_equal(s->chamber, HYMO_CHAMBER_NONE);
    assert_close(s->volume, v, 1e-20);
    assert_close(s->bulk_modulus, B, 1e-3);
}

static void assert_chamber_part(const hymo_model *m, const hymo_node *n, int k, int cyl,
                                hymo_chamber ch, double B)
{
    assert_true(k < n->n_parts);
    const hymo_subvolume *s = &m->subvolumes[n->first_part + k];
    assert_int_equal(s->cylinder, cyl);
    assert_int_equal(s->chamber, ch);
    assert_close(s->volume, 0.0, 0.0);
    assert_close(s->bulk_modulus, B, 1e-3);
}

/* ------------------------------------------------------------------ */

static void test_fourbar(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("fourbar.yaml");
    assert_string_equal(m->name, "fourbar");
    assert_non_null(strstr(m->source_path, "fourbar.yaml"));
    assert_non_null(m->source_text);
    assert_non_null(strstr(m->source_text, "name: fourbar"));
    char hex[65];
    hymo_sha256_hex(m->source_text, strlen(m->source_text), hex);
    assert_string_equal(hex, m->sha256);
    assert_vec(m->gravity, 0, -9.81, 0, 0);

    /* bodies */
    assert_int_equal(m->n_bodies, 3);
    const hymo_body *b1 = &m->bodies[0], *b2 = &m->bodies[1], *b3 = &m->bodies[2];
    assert_string_equal(b1->name, "body1");
    assert_string_equal(b3->joint_name, "z3");
    assert_int_equal(b1->parent, HYMO_GROUND);
    assert_int_equal(b2->parent, 0);
    assert_int_equal(b3->parent, 1);
    assert_int_equal(b1->joint_type, HYMO_JOINT_REVOLUTE);
    assert_vec(b1->joint_axis, 0, 0, 1, 0);
    assert_vec(b1->joint_location, 0, 0, 0, 0);
    assert_vec(b2->joint_location, 3, 0, 0, 0);
    assert_vec(b3->joint_location, sqrt(2.0), 0, 0, 1e-15);
    assert_close(b1->z0, 0.0, 0);
    assert_close(b2->z0, -0.75 * PI, 1e-15);
    assert_close(b3->z0, -0.25 * PI, 1e-15);
    assert_close(b1->mass, 225, 0);
    assert_close(b2->mass, 35, 0);
    assert_close(b3->mass, 50, 0);
    assert_vec(b1->com, 4.5, 0, 0, 0);
    assert_vec(b2->com, sqrt(2.0) / 2, 0, 0, 1e-15);
    assert_vec(b3->com, 1, 0, 0, 0);
    assert_close(b1->inertia[8], 225 * 81.0 / 12, 1e-9);
    assert_close(b2->inertia[8], 35 * 2.0 / 12, 1e-12);
    assert_close(b3->inertia[8], 50 * 4.0 / 12, 1e-12);
    assert_close(b1->inertia[4], 225 * 81.0 / 12, 1e-9);
    assert_close(b1->inertia[0], 0, 0);
    assert_close(b1->inertia[1], 0, 0);

    /* points: E exists on ground and on body3 */
    int g = hymo_model_find_point(m, "G");
    assert_true(g >= 0);
    assert_int_equal(m->points[g].body, HYMO_GROUND);
    assert_vec(m->points[g].r, 0, -2, 0, 0);
    int e3 = hymo_model_find_point(m, "body3.E"), e0 = hymo_model_find_point(m, "ground.E");
    assert_true(e3 >= 0 && e0 >= 0 && e3 != e0);
    assert_int_equal(m->points[e3].body, 2);
    assert_vec(m->points[e3].r, 2, 0, 0, 0);
    assert_vec(m->points[e0].r, 0, -1, 0, 0);
    assert_int_equal(hymo_model_find_point(m, "body3.G"), -1);
    assert_int_equal(hymo_model_find_point(m, "nobody.E"), -1);
    assert_int_equal(hymo_model_find_body(m, "body2"), 1);
    assert_int_equal(hymo_model_find_body(m, "ground"), -1);

    /* cut joint and independent coordinate */
    assert_int_equal(m->n_cuts, 1);
    assert_int_equal(m->cuts[0].type, HYMO_CUT_PLANAR_REVOLUTE);
    assert_int_equal(m->cuts[0].body_a, 2);
    assert_int_equal(m->cuts[0].body_b, HYMO_GROUND);
    assert_vec(m->cuts[0].point_a, 2, 0, 0, 0);
    assert_vec(m->cuts[0].point_b, 0, -1, 0, 0);
    assert_int_equal(m->cuts[0].n_eq, 2);
    assert_int_equal(hymo_model_n_constraints(m), 2);
    assert_int_equal(m->n_independent_hint, 1);
    assert_int_equal(m->independent_hint[0], 2);

    /* simulation defaults */
    assert_close(m->defaults.dt, 1e-3, 0);
    assert_close(m->defaults.t_end, 10, 0);
    assert_close(m->defaults.penalty_alpha, 1e11, 0);
    assert_int_equal(m->defaults.max_iter, 20);
    assert_close(m->defaults.tol_position, 1e-7, 0);
    assert_close(m->defaults.tol_pressure, 1e-2, 0);
    assert_close(m->defaults.tol_spool, 1e-7, 0);

    /* hydraulics: nodes = volumes (state order) then sources */
    assert_close(m->fluid.bulk_modulus_oil, 1.5e9, 0);
    assert_close(m->fluid.density, 850, 0);
    assert_close(m->fluid.p_transition, 2e5, 0);
    assert_int_equal(m->n_volumes, 3);
    assert_int_equal(m->n_nodes, 5);
    int v1 = find_node(m, "V1"), v2 = find_node(m, "V2"), v3 = find_node(m, "V3");
    int pump = find_node(m, "pump"), tank = find_node(m, "tank");
    assert_int_equal(v1, 0);
    assert_int_equal(v2, 1);
    assert_int_equal(v3, 2);
    assert_int_equal(m->nodes[v1].state, 0);
    assert_int_equal(m->nodes[v2].state, 1);
    assert_int_equal(m->nodes[v3].state, 2);
    assert_int_equal(m->nodes[pump].kind, HYMO_NODE_SOURCE);
    assert_int_equal(m->nodes[tank].kind, HYMO_NODE_SOURCE);
    assert_close(m->nodes[pump].pressure, 7.6e6, 0);
    assert_close(m->nodes[tank].pressure, 1e5, 0);
    assert_int_equal(m->nodes[v1].kind, HYMO_NODE_VOLUME);
    assert_int_equal(m->nodes[v1].p0_rule, HYMO_P0_STATIC);
    assert_int_equal(m->nodes[v2].p0_rule, HYMO_P0_STATIC);
    assert_int_equal(m->nodes[v3].p0_rule, HYMO_P0_GIVEN);
    assert_close(m->nodes[v3].p0, 3.5e6, 0);
    assert_int_equal(m->nodes[v1].n_parts, 1);
    assert_fixed_part(m, &m->nodes[v1], 0, 4.71e-5, 5.5e8);
    assert_int_equal(m->nodes[v2].n_parts, 2);
    assert_fixed_part(m, &m->nodes[v2], 0, 3.14e-5, 5.5e8);
    assert_chamber_part(m, &m->nodes[v2], 1, 0, HYMO_CHAMBER_PISTON, 3.15e10);
    assert_fixed_part(m, &m->nodes[v3], 0, 7.85e-5, 5.5e8);
    assert_chamber_part(m, &m->nodes[v3], 1, 0, HYMO_CHAMBER_ROD, 3.15e10);

    assert_int_equal(m->n_cylinders, 1);
    const hymo_cylinder *cy = &m->cylinders[0];
    assert_int_equal(cy->point_base, g);
    assert_int_equal(cy->point_rod, hymo_model_find_point(m, "F"));
    assert_close(cy->piston_area, area_piston(), 1e-15);
    assert_close(cy->rod_side_area, area_rod(), 1e-15);
    assert_close(cy->length, 1.1, 0);
    assert_int_equal(cy->has_l_pist0, 0);
    assert_close(cy->viscous, 0, 0);
    assert_close(cy->efficiency, 0.88, 0);
    assert_close(cy->friction_velocity, 0.01, 0);
    assert_int_equal(cy->has_damper, 0);
    assert_int_equal(cy->node_piston, v2);
    assert_int_equal(cy->node_rod, v3);

    assert_int_equal(m->n_throttles, 1);
    assert_int_equal(m->throttles[0].node_a, v1);
    assert_int_equal(m->throttles[0].node_b, v2);
    assert_close(m->throttles[0].Ct, seed_ct(), 1e-20);

    assert_int_equal(m->n_valves, 1);
    const hymo_valve *va = &m->valves[0];
    assert_int_equal(va->port_P, pump);
    assert_int_equal(va->port_T, tank);
    assert_int_equal(va->port_A, v1);
    assert_int_equal(va->port_B, v3);
    assert_close(va->Cv, 2.138e-8, 0);
    assert_close(va->tau, seed_tau(), 1e-17);
    assert_int_equal(va->state, 0);
    assert_int_equal(va->signal, find_signal(m, "U_ref"));

    /* U_ref: +10 on [1, 2.5), -10 on [5, 8), one-sided limits at the steps */
    const hymo_signal *u = &m->signals[va->signal];
    assert_close(hymo_signal_eval(u, -1.0, +1), 0, 0);
    assert_close(hymo_signal_eval(u, 0.5, +1), 0, 0);
    assert_close(hymo_signal_eval(u, 0.5, -1), 0, 0);
    assert_close(hymo_signal_eval(u, 1.0, -1), 0, 0);
    assert_close(hymo_signal_eval(u, 1.0, +1), 10, 0);
    assert_close(hymo_signal_eval(u, 2.0, -1), 10, 0);
    assert_close(hymo_signal_eval(u, 2.5, -1), 10, 0);
    assert_close(hymo_signal_eval(u, 2.5, +1), 0, 0);
    assert_close(hymo_signal_eval(u, 5.0, -1), 0, 0);
    assert_close(hymo_signal_eval(u, 5.0, +1), -10, 0);
    assert_close(hymo_signal_eval(u, 7.999, +1), -10, 0);
    assert_close(hymo_signal_eval(u, 8.0, -1), -10, 0);
    assert_close(hymo_signal_eval(u, 8.0, +1), 0, 0);
    assert_close(hymo_signal_eval(u, 10.0, -1), 0, 0);
    assert_close(hymo_signal_eval(u, 50.0, +1), 0, 0);
    hymo_model_free(m);
}

static void test_quickreturn(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("quickreturn.yaml");
    assert_int_equal(m->n_bodies, 5);
    static const double mass[5] = {25, 12, 3, 100, 30};
    static const double izz[5] = {25 * 25.0 / 12, 12 * 1.44 / 12, 3 * 0.09 / 6, 100.0 / 12,
                                  30 * 0.09 / 6};
    static const double comx[5] = {2.5, 0.6, 0, 0.5, 0};
    static const double z0deg[5] = {76.22, 96.89, 6.89, 30.59, 45.63};
    static const int parent[5] = {HYMO_GROUND, 0, 1, HYMO_GROUND, 3};
    for (int i = 0; i < 5; i++) {
        assert_close(m->bodies[i].mass, mass[i], 0);
        assert_close(m->bodies[i].inertia[8], izz[i], 1e-12);
        assert_vec(m->bodies[i].com, comx[i], 0, 0, 1e-15);
        assert_close(m->bodies[i].z0, z0deg[i] * PI / 180, 1e-15);
        assert_int_equal(m->bodies[i].parent, parent[i]);
    }
    assert_vec(m->bodies[1].joint_location, 5, 0, 0, 0);
    assert_vec(m->bodies[2].joint_location, 1.2, 0, 0, 0);
    assert_vec(m->bodies[3].joint_location, 0, 3, 0, 0);
    assert_vec(m->bodies[4].joint_location, 1, 0, 0, 0);

    assert_int_equal(m->n_cuts, 2);
    assert_int_equal(hymo_model_n_constraints(m), 4);
    const hymo_cut_joint *J = &m->cuts[0], *M = &m->cuts[1];
    assert_string_equal(J->name, "J");
    assert_int_equal(J->type, HYMO_CUT_PLANAR_TRANSLATIONAL);
    assert_int_equal(J->body_a, 2);
    assert_int_equal(J->body_b, HYMO_GROUND);
    assert_vec(J->point_a, 0, 0, 0, 0);
    assert_vec(J->point_b, 0, 5, 0, 0);
    assert_vec(J->axis_b, 1, 0, 0, 0);
    assert_close(J->angle0, PI, 1e-15);
    assert_int_equal(J->n_eq, 2);
    assert_string_equal(M->name, "M");
    assert_int_equal(M->type, HYMO_CUT_PLANAR_TRANSLATIONAL);
    assert_int_equal(M->body_a, 4);
    assert_int_equal(M->body_b, 0);
    assert_vec(M->point_a, 0, 0, 0, 0);
    assert_vec(M->point_b, 0, 0, 0, 0);
    assert_vec(M->axis_b, 1, 0, 0, 0);
    assert_close(M->angle0, 0, 0);
    assert_int_equal(m->n_independent_hint, 1);
    assert_int_equal(m->independent_hint[0], 3);

    const hymo_cylinder *cy = &m->cylinders[0];
    assert_int_equal(m->points[cy->point_base].body, HYMO_GROUND);
    assert_vec(m->points[cy->point_base].r, -0.96, 3, 0, 0);
    assert_int_equal(m->points[cy->point_rod].body, 3);
    assert_vec(m->points[cy->point_rod].r, 0.5, 0, 0, 0);
    assert_int_equal(cy->has_l_pist0, 0);
    assert_close(cy->efficiency, 0.88, 0);
    assert_close(m->throttles[0].Ct, seed_ct(), 1e-20);
    assert_close(m->valves[0].tau, seed_tau(), 1e-17);

    /* -10 V on [1, 4), +10 V on [6.5, 8) */
    const hymo_signal *u = &m->signals[m->valves[0].signal];
    assert_close(hymo_signal_eval(u, 1.0, -1), 0, 0);
    assert_close(hymo_signal_eval(u, 1.0, +1), -10, 0);
    assert_close(hymo_signal_eval(u, 4.0, -1), -10, 0);
    assert_close(hymo_signal_eval(u, 4.0, +1), 0, 0);
    assert_close(hymo_signal_eval(u, 6.5, +1), 10, 0);
    assert_close(hymo_signal_eval(u, 8.0, -1), 10, 0);
    assert_close(hymo_signal_eval(u, 8.0, +1), 0, 0);
    hymo_model_free(m);
}

/* Crane bodies, shared by crane1 and crane2. */
static void assert_crane_bodies(const hymo_model *m)
{
    assert_int_equal(m->n_bodies, 2);
    assert_int_equal(m->n_cuts, 0);
    assert_int_equal(hymo_model_n_constraints(m), 0);
    assert_int_equal(m->n_independent_hint, 0);
    const hymo_body *b1 = &m->bodies[0], *b2 = &m->bodies[1];
    /* rod 200 kg (com 0.5, Izz 200/12) + 250 kg at x = 1 */
    assert_close(b1->mass, 450, 0);
    assert_vec(b1->com, 7.0 / 9.0, 0, 0, 1e-15);
    double izz = 200.0 / 12 + 200 * pow(0.5 - 7.0 / 9, 2) + 250 * pow(1 - 7.0 / 9, 2);
    assert_close(izz, 400.0 / 9.0, 1e-12);
    assert_close(b1->inertia[8], izz, 1e-12);
    assert_close(b1->inertia[4], izz, 1e-12);
    assert_close(b1->inertia[0], 0, 1e-12);
    for (int k = 0; k < 9; k++) {
        if (k != 0 && k != 4 && k != 8) assert_close(b1->inertia[k], 0, 1e-12);
    }
    assert_close(b1->z0, PI / 6, 1e-15);
    /* massless rod + 100 kg at its tip: a point mass */
    assert_close(b2->mass, 100, 0);
    assert_vec(b2->com, 0.5, 0, 0, 1e-15);
    for (int k = 0; k < 9; k++) assert_close(b2->inertia[k], 0, 1e-12);
    assert_int_equal(b2->parent, 0);
    assert_vec(b2->joint_location, 1, 0, 0, 0);
    assert_close(b2->z0, 240 * PI / 180, 1e-14);
    assert_close(b1->z0 + b2->z0, 1.5 * PI, 1e-14);
    int B = hymo_model_find_point(m, "B"), P = hymo_model_find_point(m, "P");
    assert_vec(m->points[B].r, sqrt(3.0) / 2, 0, 0, 1e-15);
    assert_int_equal(m->points[P].body, 0);
    assert_vec(m->points[P].r, 0.5, 0, 0, 0);
}

static void assert_crane_cylinder(const hymo_cylinder *cy, double lp0)
{
    assert_close(cy->piston_area, area_piston(), 1e-15);
    assert_close(cy->rod_side_area, area_rod(), 1e-15);
    assert_close(cy->length, 0.3, 0);
    assert_int_equal(cy->has_l_pist0, 1);
    assert_close(cy->l_pist0, lp0, 0);
    assert_close(cy->l_rod0, 0.3 - lp0, 1e-15);
    assert_close(cy->viscous, 1e5, 0);
    assert_close(cy->efficiency, 1, 0);
    assert_int_equal(cy->has_damper, 1);
    assert_close(cy->damper_length, 0.008, 0);
    assert_close(cy->damper_stiffness, 1e7, 0);
    assert_close(cy->damper_damping, 5e3, 0);
}

/* One crane circuit: piston volume, rod volume, valve-side volume. */
static void assert_crane_circuit(const hymo_model *m, int cyl, const char *vp, const char *vr,
                                 const char *vv, int first_state, int valve)
{
    int np = find_node(m, vp), nr = find_node(m, vr), nv = find_node(m, vv);
    assert_int_equal(m->nodes[np].state, first_state);
    assert_int_equal(m->nodes[nr].state, first_state + 1);
    assert_int_equal(m->nodes[nv].state, first_state + 2);
    assert_int_equal(m->cylinders[cyl].node_piston, np);
    assert_int_equal(m->cylinders[cyl].node_rod, nr);
    assert_fixed_part(m, &m->nodes[np], 0, 3.14e-5, 1.5e8);
    assert_chamber_part(m, &m->nodes[np], 1, cyl, HYMO_CHAMBER_PISTON, 3.15e10);
    assert_fixed_part(m, &m->nodes[nr], 0, 7.85e-5, 1.5e8);
    assert_chamber_part(m, &m->nodes[nr], 1, cyl, HYMO_CHAMBER_ROD, 3.15e10);
    assert_int_equal(m->nodes[nv].n_parts, 1);
    assert_fixed_part(m, &m->nodes[nv], 0, 4.71e-5, 1.5e8);
    assert_int_equal(m->nodes[np].p0_rule, HYMO_P0_STATIC);
    assert_int_equal(m->nodes[nv].p0_rule, HYMO_P0_STATIC);
    assert_int_equal(m->nodes[nr].p0_rule, HYMO_P0_GIVEN);
    assert_close(m->nodes[nr].p0, 3.5e6, 0);
    const hymo_throttle *th = &m->throttles[valve];
    assert_int_equal(th->node_a, nv);
    assert_int_equal(th->node_b, np);
    assert_close(th->Ct, seed_ct(), 1e-20);
    const hymo_valve *va = &m->valves[valve];
    assert_int_equal(va->port_P, find_node(m, "pump"));
    assert_int_equal(va->port_T, find_node(m, "tank"));
    assert_int_equal(va->port_A, nv);
    assert_int_equal(va->port_B, nr);
    assert_close(va->Cv, 1.069e-8, 0);
    assert_close(va->tau, seed_tau(), 1e-17);
    assert_int_equal(va->state, valve);
}

static void test_crane1(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("crane1.yaml");
    assert_string_equal(m->name, "crane1");
    assert_crane_bodies(m);
    assert_close(m->defaults.t_end, 30, 0);
    assert_int_equal(m->n_cylinders, 1);
    assert_crane_cylinder(&m->cylinders[0], 0.05);
    assert_int_equal(m->points[m->cylinders[0].point_base].body, HYMO_GROUND);
    assert_int_equal(m->cylinders[0].point_rod, hymo_model_find_point(m, "P"));
    assert_int_equal(m->n_volumes, 3);
    assert_int_equal(m->n_nodes, 5);
    assert_close(m->fluid.bulk_modulus_oil, 1.5e9, 0);
    assert_crane_circuit(m, 0, "V1", "V2", "V3", 0, 0);

    /* piecewise linear joystick signal */
    const hymo_signal *u = &m->signals[m->valves[0].signal];
    assert_string_equal(u->name, "U_ref");
    assert_int_equal(u->n_points, 20);
    assert_close(hymo_signal_eval(u, 0.5, +1), 0, 0);
    assert_close(hymo_signal_eval(u, 1.25, +1), -4, 1e-12);
    assert_close(hymo_signal_eval(u, 1.25, -1), -4, 1e-12);
    assert_close(hymo_signal_eval(u, 1.5, -1), -8, 1e-12);
    assert_close(hymo_signal_eval(u, 1.5, +1), -8, 1e-12);
    assert_close(hymo_signal_eval(u, 6.5, +1), 5, 1e-12);
    assert_close(hymo_signal_eval(u, 10, +1), 10, 0);
    assert_close(hymo_signal_eval(u, 24, +1), 4, 0);
    assert_close(hymo_signal_eval(u, 25.5, +1), 0, 1e-12);
    assert_close(hymo_signal_eval(u, 27, -1), -4, 0);
    assert_close(hymo_signal_eval(u, 35, +1), 0, 0);
    hymo_model_free(m);
}

static void test_crane2(void **state)
{
    (void)state;
    hymo_model *m = test_load_model("crane2.yaml");
    assert_crane_bodies(m);
    assert_int_equal(m->n_cylinders, 2);
    assert_crane_cylinder(&m->cylinders[0], 0.05);
    assert_crane_cylinder(&m->cylinders[1], 0.15);
    const hymo_cylinder *c2 = &m->cylinders[1];
    assert_int_equal(c2->point_base, hymo_model_find_point(m, "P"));
    assert_int_equal(m->points[c2->point_rod].body, 1);
    assert_vec(m->points[c2->point_rod].r, 0.25, 0, 0, 0);
    assert_int_equal(m->n_volumes, 6);
    assert_int_equal(m->n_nodes, 8);
    assert_int_equal(m->n_valves, 2);
    assert_crane_circuit(m, 0, "V1", "V2", "V3", 0, 0);
    assert_crane_circuit(m, 1, "V4", "V5", "V6", 3, 1);
    assert_int_equal(m->valves[0].signal, find_signal(m, "U_ref"));
    assert_int_equal(m->valves[1].signal, find_signal(m, "U2_ref"));
    const hymo_signal *u2 = &m->signals[m->valves[1].signal];
    assert_close(hymo_signal_eval(u2, 1, +1), 0, 0);
    assert_close(hymo_signal_eval(u2, 2.25, +1), 2.5, 1e-12);
    assert_close(hymo_signal_eval(u2, 3, -1), 5, 0);
    assert_close(hymo_signal_eval(u2, 10, +1), -5, 0);
    assert_close(hymo_signal_eval(u2, 11.25, +1), -2.5, 1e-12);
    assert_close(hymo_signal_eval(u2, 20, +1), 0, 0);
    hymo_model_free(m);
}

/* ------------------------------------------------------------------ */
/* Bad models                                                           */

typedef struct {
    const char *file;
    hymo_status code;
    int line;
    const char *text; /* substring of the message after "file:line: " */
} bad_case;

static const bad_case bad_cases[] = {
    {"syntax_error.yaml", HYMO_ERR_PARSE, 25, "syntax error"},
    {"unknown_field.yaml", HYMO_ERR_MODEL, 18, "bodies[1].colour: unknown field"},
    {"missing_mass.yaml", HYMO_ERR_MODEL, 15, "bodies[1].mass: missing required field"},
    {"negative_volume.yaml", HYMO_ERR_MODEL, 38,
     "hydraulics.volumes[0].parts[0].volume: must be positive"},
    {"cut_missing_body.yaml", HYMO_ERR_MODEL, 28, "cut_joints[0].body_a: unknown body 'body4'"},
    {"nonpositive_dt.yaml", HYMO_ERR_MODEL, 30, "simulation.dt: must be positive"},
    {"valve_unknown_node.yaml", HYMO_ERR_MODEL, 44,
     "hydraulics.valves[0].B: unknown hydraulic node 'V4'"},
    {"duplicate_name.yaml", HYMO_ERR_MODEL, 21, "bodies[2].name: duplicate body name 'body2'"},
    {"chamber_two_volumes.yaml", HYMO_ERR_MODEL, 40,
     "hydraulics.volumes[2].parts[1].chamber: chamber 'cyl.rod' is already part of volume 'V1'"},
    {"efficiency_above_one.yaml", HYMO_ERR_MODEL, 36,
     "hydraulics.cylinders[0].efficiency: must be in (0, 1]"},
    {"duplicate_key.yaml", HYMO_ERR_PARSE, 12, "bodies[0].mass: duplicate key"},
    {"wrong_vector_length.yaml", HYMO_ERR_MODEL, 12, "bodies[0].com: expected 3 numbers, got 2"},
    {"wrong_type.yaml", HYMO_ERR_MODEL, 23, "bodies[2].mass: expected a finite number"},
    {"rod_too_thick.yaml", HYMO_ERR_MODEL, 36, "hydraulics.cylinders[0].rod_diameter:"},
    {"zero_axis.yaml", HYMO_ERR_MODEL, 16, "bodies[1].joint.axis: direction must not be zero"},
    {"signal_not_monotonic.yaml", HYMO_ERR_MODEL, 31, "signals[0].points[3]: time 0.5 is before"},
    {"signal_three_equal_times.yaml", HYMO_ERR_MODEL, 31,
     "signals[0].points[3]: more than two points at time 1"},
    {"parent_cycle.yaml", HYMO_ERR_MODEL, 10, "bodies[0].joint.parent: body 'body1' is part of a cycle"},
    {"unknown_parent.yaml", HYMO_ERR_MODEL, 22, "bodies[2].joint.parent: unknown parent body 'body9'"},
    {"chamber_unused.yaml", HYMO_ERR_MODEL, 36,
     "hydraulics.cylinders[0]: the rod chamber of cylinder 'cyl' is not part of any volume"},
    {"bulk_modulus_zero.yaml", HYMO_ERR_MODEL, 33, "hydraulics.fluid.bulk_modulus: must be positive"},
    {"time_constant_negative.yaml", HYMO_ERR_MODEL, 44,
     "hydraulics.valves[0].time_constant: must be positive"},
    {"t_end_negative.yaml", HYMO_ERR_MODEL, 30, "simulation.t_end: must be positive"},
    {"unknown_signal.yaml", HYMO_ERR_MODEL, 44, "hydraulics.valves[0].signal: unknown signal 'U_cmd'"},
    {"negative_mass.yaml", HYMO_ERR_MODEL, 11, "bodies[0].mass: must not be negative"},
    {"hex_number.yaml", HYMO_ERR_MODEL, 11, "bodies[0].mass: expected a finite number, got '0xE1'"},
    {"massless_body.yaml", HYMO_ERR_MODEL, 23, "bodies[2].mass: total mass of body 'body3'"},
    {"unsupported_format.yaml", HYMO_ERR_MODEL, 3, "format: unsupported format version 3"},
    {"bad_angle_unit.yaml", HYMO_ERR_MODEL, 22, "bodies[2].joint.initial: expected an angle"},
    {"two_documents.yaml", HYMO_ERR_PARSE, 46, "more than one YAML document"},
    {"unknown_point.yaml", HYMO_ERR_MODEL, 36, "hydraulics.cylinders[0].rod: unknown point 'Z'"},
    {"ambiguous_point.yaml", HYMO_ERR_MODEL, 36,
     "hydraulics.cylinders[0].base: point name 'E' is ambiguous"},
    {"unknown_independent.yaml", HYMO_ERR_MODEL, 29, "independent[0]: unknown joint 'z9'"},
    {"throttle_overdetermined.yaml", HYMO_ERR_MODEL, 42,
     "hydraulics.throttles[0].flow_coefficient: give either"},
    {"valve_same_ports.yaml", HYMO_ERR_MODEL, 44, "hydraulics.valves[0].B: ports A and B"},
    {"inertia_triangle.yaml", HYMO_ERR_MODEL, 13, "bodies[0].inertia: moments of inertia violate"},
    {"empty.yaml", HYMO_ERR_PARSE, 1, "empty model file"},
    {"cut_unknown_point.yaml", HYMO_ERR_MODEL, 28, "cut_joints[0].point_b: unknown point 'X' on ground"},
    {"relief_negative_crack.yaml", HYMO_ERR_MODEL, 22,
     "hydraulics.relief_valves[0].cracking_pressure: must not be negative"},
    {"check_missing_opening.yaml", HYMO_ERR_MODEL, 22,
     "hydraulics.check_valves[0].opening_pressure: missing required field"},
    /* pump speeds and set flows */
    {"pump_unknown_speed_signal.yaml", HYMO_ERR_MODEL, 22,
     "hydraulics.pumps[0].speed_signal: unknown signal 'engin' (signals: engine)"},
    {"flow_control_signal_wrong_type.yaml", HYMO_ERR_MODEL, 26,
     "hydraulics.flow_control_valves[0].set_flow_signal: expected a name, got a list"},
    {"pump_speed_signal_negative.yaml", HYMO_ERR_MODEL, 23,
     "hydraulics.pumps[0].speed_signal: signal 'neg' goes down to -0.2: it multiplies the pump speed and must "
     "not be negative"},
    /* initial joint rates */
    {"rate_not_number.yaml", HYMO_ERR_MODEL, 9, "bodies[0].joint.rate: expected a number, got the quoted string"},
    {"rate_driven.yaml", HYMO_ERR_MODEL, 21,
     "driven_joints[0].joint: joint 'q2' has an initial rate (rate: 3), but a model with driven joints starts at "
     "rest"},
};
#define N_BAD_CASES ((int)(sizeof bad_cases / sizeof bad_cases[0]))

static void test_bad_models(void **state)
{
    (void)state;
    int failures = 0;
    for (int i = 0; i < N_BAD_CASES; i++) {
        const bad_case *bc = &bad_cases[i];
        char path[1024], prefix[1100];
        snprintf(path, sizeof path, "%s/bad_models/%s", HYMO_TESTS_DIR, bc->file);
        snprintf(prefix, sizeof prefix, "%s:%d: ", path, bc->line);
        hymo_model *m = (hymo_model *)0x1;
        hymo_error err;
        hymo_error_clear(&err);
        hymo_status st = hymo_model_load_file(path, &m, &err);
        int ok = st == bc->code && err.code == bc->code && m == NULL &&
                 strncmp(err.message, prefix, strlen(prefix)) == 0 &&
                 strstr(err.message, bc->text) != NULL && strchr(err.message, '\n') == NULL;
        if (!ok) {
            fprintf(stderr, "%s: status %d (want %d), message:\n  %s\nwant prefix '%s' and '%s'\n",
                    bc->file, st, bc->code, err.message, prefix, bc->text);
            failures++;
        }
        if (st == HYMO_OK) hymo_model_free(m);
    }
    assert_int_equal(failures, 0);
}

/* Every YAML file in tests/bad_models/ (except unassemblable.yaml, which loads) is
 * covered by the table above. */
static void test_bad_models_all_listed(void **state)
{
    (void)state;
    char dir_path[1024];
    snprintf(dir_path, sizeof dir_path, "%s/bad_models", HYMO_TESTS_DIR);
    DIR *dir = opendir(dir_path);
    assert_non_null(dir);
    struct dirent *de;
    int n_files = 0, missing = 0;
    while ((de = readdir(dir)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 5, ".yaml") != 0) continue;
        if (strcmp(de->d_name, "unassemblable.yaml") == 0) continue;
        n_files++;
        int found = 0;
        for (int i = 0; i < N_BAD_CASES; i++) found |= strcmp(bad_cases[i].file, de->d_name) == 0;
        if (!found) {
            fprintf(stderr, "tests/bad_models/%s has no entry in bad_cases\n", de->d_name);
            missing++;
        }
    }
    closedir(dir);
    assert_int_equal(missing, 0);
    assert_int_equal(n_files, N_BAD_CASES);
}

static void test_unassemblable_loads(void **state)
{
    (void)state;
    hymo_model *m = test_load_bad_model("unassemblable.yaml");
    int e = hymo_model_find_point(m, "ground.E");
    assert_vec(m->points[e].r, 0, -10, 0, 0);
    hymo_model_free(m);
}

static void test_io_error(void **state)
{
    (void)state;
    hymo_model *m = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    assert_int_equal(hymo_model_load_file("/nonexistent/dir/model.yaml", &m, &err), HYMO_ERR_IO);
    assert_null(m);
    assert_non_null(strstr(err.message, "/nonexistent/dir/model.yaml"));
}

/* ------------------------------------------------------------------ */
/* Format variants through load_string                                  */

static hymo_model *load_ok(const char *text) { return test_load_text(text, "inline.yaml"); }

static void expect_error(const char *text, hymo_status code, const char *substring)
{
    hymo_model *m = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    hymo_status st = hymo_model_load_string(text, "inline.yaml", &m, &err);
    if (st != code || !strstr(err.message, substring) || strncmp(err.message, "inline.yaml:", 12) != 0) {
        fail_msg("status %d (want %d), message '%s' (want '%s')", st, code, err.message, substring);
    }
    assert_null(m);
}

/* Pure mechanism: no hydraulics, no cut joints, no signals; bodies listed
 * child first; prismatic joint; 6- and 9-element inertia; "rad" angle. */
static const char *const k_pure =
    "format: 1\n"
    "name: pure\n"
    "gravity: [0, 0, -9.81]\n"
    "bodies:\n"
    "  - name: slider\n"
    "    joint: {name: s, type: prismatic, parent: arm, location: [1, 0, 0], axis: [2, 0, 0],\n"
    "            initial: 0.25}\n"
    "    mass: 2\n"
    "    com: [0, 0, 0]\n"
    "    inertia: [1, 2, 3, 0.1, 0.2, 0.3]\n"
    "  - name: arm\n"
    "    joint: {name: q, type: revolute, parent: ground, location: origin, axis: [0, 3, 4],\n"
    "            initial: 0.5 rad}\n"
    "    mass: 1\n"
    "    com: [0.5, 0, 0]\n"
    "    inertia: [1, 0, 0, 0, 2, 0, 0, 0, 2]\n"
    "    points: {tip: [1, 0, 0]}\n"
    "ground:\n"
    "  points: {origin: [0, 0, 1]}\n";

static void test_pure_mechanism(void **state)
{
    (void)state;
    hymo_model *m = load_ok(k_pure);
    assert_int_equal(m->n_bodies, 2);
    /* sorted: parent before child */
    assert_string_equal(m->bodies[0].name, "arm");
    assert_string_equal(m->bodies[1].name, "slider");
    assert_int_equal(m->bodies[0].parent, HYMO_GROUND);
    assert_int_equal(m->bodies[1].parent, 0);
    assert_vec(m->bodies[0].joint_location, 0, 0, 1, 0);
    assert_vec(m->bodies[0].joint_axis, 0, 0.6, 0.8, 1e-15);
    assert_close(m->bodies[0].z0, 0.5, 0);
    assert_int_equal(m->bodies[1].joint_type, HYMO_JOINT_PRISMATIC);
    assert_vec(m->bodies[1].joint_axis, 1, 0, 0, 0);
    assert_close(m->bodies[1].z0, 0.25, 0);
    const double *J = m->bodies[1].inertia;
    assert_close(J[0], 1, 0);
    assert_close(J[4], 2, 0);
    assert_close(J[8], 3, 0);
    assert_close(J[1], 0.1, 0);
    assert_close(J[3], 0.1, 0);
    assert_close(J[2], 0.2, 0);
    assert_close(J[6], 0.2, 0);
    assert_close(J[5], 0.3, 0);
    assert_close(J[7], 0.3, 0);
    assert_close(m->bodies[0].inertia[4], 2, 0);
    assert_int_equal(m->n_cuts, 0);
    assert_int_equal(hymo_model_n_constraints(m), 0);
    assert_int_equal(m->n_volumes, 0);
    assert_int_equal(m->n_nodes, 0);
    assert_int_equal(m->n_valves, 0);
    assert_int_equal(m->n_cylinders, 0);
    assert_int_equal(m->n_signals, 0);
    assert_int_equal(m->n_independent_hint, 0);
    /* defaults when `simulation` is omitted */
    assert_close(m->defaults.dt, 1e-3, 0);
    assert_close(m->defaults.t_end, 10, 0);
    assert_close(m->defaults.penalty_alpha, 1e11, 0);
    assert_int_equal(m->defaults.max_iter, 20);
    assert_vec(m->gravity, 0, 0, -9.81, 0);
    assert_int_equal(hymo_model_find_point(m, "tip"), hymo_model_find_point(m, "arm.tip"));
    assert_int_equal(m->points[hymo_model_find_point(m, "tip")].body, 0);
    assert_string_equal(m->source_path, "inline.yaml");
    hymo_model_free(m);
}

/* Spatial cut joints, point masses with offsets, optional cylinder fields,
 * flow_coefficient / time_constant forms. */
static const char *const k_spatial =
    "format: 1\n"
    "name: spatial\n"
    "gravity: [0, -9.81, 0]\n"
    "simulation: {dt: 2.0e-4}\n"
    "bodies:\n"
    "  - name: a\n"
    "    joint: {name: qa, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1]}\n"
    "    mass: 1\n"
    "    com: [1, 0, 0]\n"
    "    inertia: [0, 0, 0]\n"
    "    point_masses: [{mass: 1, at: [3, 0, 0]}, {mass: 2, at: [0, 3, 0]}]\n"
    "    points: {P: [1, 1, 0]}\n"
    "  - name: b\n"
    "    joint: {name: qb, type: revolute, parent: a, location: [2, 0, 0], axis: [0, 0, 1]}\n"
    "    mass: 1\n"
    "    com: [0, 0, 0]\n"
    "    inertia: [1, 1, 1]\n"
    "    points: {R: [1, 0, 0]}\n"
    "cut_joints:\n"
    "  - {name: c1, type: spherical, body_a: b, point_a: R, body_b: ground, point_b: [3, 0, 0]}\n"
    "  - {name: c2, type: revolute, body_a: b, point_a: [0, 0, 0], body_b: a, point_b: [2, 0, 0],\n"
    "     axis_a: [0, 0, 5], axis_b: [0, 0, -1]}\n"
    "  - {name: c3, type: translational, body_a: b, point_a: R, body_b: ground, point_b: [0, 0, 0],\n"
    "     axis_a: [1, 1, 0], direction: [0, 2, 0]}\n"
    "independent: [qb, qa]\n"
    "signals:\n"
    "  - {name: u, points: [[0, 0], [0, 5], [1, 5]]}\n"
    "  - {name: k, points: [[2, 7]]}\n"
    "hydraulics:\n"
    "  fluid: {bulk_modulus: 1.5e9, density: 850}\n"
    "  sources: [{name: tank, pressure: 0}, {name: pump, pressure: 1.0e7}]\n"
    "  cylinders:\n"
    "    - {name: c, base: ground.G, rod: P, piston_diameter: 0.05, rod_diameter: 0.02, length: 1}\n"
    "  volumes:\n"
    "    - {name: Vr, parts: [{chamber: c.rod, bulk_modulus: 3.0e10}], initial_pressure: 0}\n"
    "    - {name: Vp, parts: [{chamber: c.piston, bulk_modulus: 3.0e10}, {volume: 1.0e-5,\n"
    "       bulk_modulus: 1.0e9}], initial_pressure: static}\n"
    "  throttles: [{name: t, from: Vp, to: tank, flow_coefficient: 1.0e-7}]\n"
    "  valves: [{name: v, type: 4/3, P: pump, T: tank, A: Vp, B: Vr, flow_coefficient: 1.0e-8,\n"
    "            time_constant: 0.01, signal: k}]\n"
    "ground:\n"
    "  points: {G: [0, -1, 0]}\n";

static void test_spatial_and_forms(void **state)
{
    (void)state;
    hymo_model *m = load_ok(k_spatial);
    assert_close(m->defaults.dt, 2e-4, 0);
    /* format 1, fluid without `model`: the constant bulk modulus it always
     * meant; the same file as format 2: entrained air (the new default) */
    assert_int_equal(m->fluid_air.model, HYMO_FLUID_CONSTANT);
    {
        char *v2 = strdup(k_spatial);
        memcpy(v2, "format: 2", 9);
        hymo_model *m2 = load_ok(v2);
        assert_int_equal(m2->fluid_air.model, HYMO_FLUID_ENTRAINED_AIR);
        hymo_model_free(m2);
        free(v2);
    }
    /* body a: 1 kg at x=1 + 1 kg at x=3 + 2 kg at y=3: com (1, 1.5, 0) */
    const hymo_body *a = &m->bodies[0];
    assert_close(a->mass, 4, 0);
    assert_vec(a->com, 1, 1.5, 0, 1e-15);
    /* J = sum m (|d|^2 I - d d^T), d = r - com */
    double Jxx = 1 * 2.25 + 1 * 2.25 + 2 * 2.25;        /* dy^2 */
    double Jyy = 1 * 0 + 1 * 4 + 2 * 1;                 /* dx^2 */
    double Jxy = -(1 * 0 * -1.5 + 1 * 2 * -1.5 + 2 * -1 * 1.5);
    assert_close(a->inertia[0], Jxx, 1e-12);
    assert_close(a->inertia[4], Jyy, 1e-12);
    assert_close(a->inertia[8], Jxx + Jyy, 1e-12);
    assert_close(a->inertia[1], Jxy, 1e-12);
    assert_close(a->inertia[3], Jxy, 1e-12);

    assert_int_equal(m->n_cuts, 3);
    assert_int_equal(m->cuts[0].type, HYMO_CUT_SPHERICAL);
    assert_int_equal(m->cuts[0].n_eq, 3);
    assert_vec(m->cuts[0].point_a, 1, 0, 0, 0);
    assert_vec(m->cuts[0].point_b, 3, 0, 0, 0);
    assert_int_equal(m->cuts[1].type, HYMO_CUT_REVOLUTE);
    assert_int_equal(m->cuts[1].n_eq, 5);
    assert_int_equal(m->cuts[1].body_b, 0);
    assert_vec(m->cuts[1].axis_a, 0, 0, 1, 0);
    assert_vec(m->cuts[1].axis_b, 0, 0, -1, 0);
    assert_int_equal(m->cuts[2].type, HYMO_CUT_TRANSLATIONAL);
    assert_vec(m->cuts[2].axis_a, sqrt(0.5), sqrt(0.5), 0, 1e-15);
    assert_vec(m->cuts[2].axis_b, 0, 1, 0, 0);
    assert_int_equal(hymo_model_n_constraints(m), 13);
    assert_int_equal(m->n_independent_hint, 2);
    assert_int_equal(m->independent_hint[0], 1);
    assert_int_equal(m->independent_hint[1], 0);

    /* nodes: volumes first in declaration order, then sources */
    assert_int_equal(m->n_volumes, 2);
    assert_string_equal(m->nodes[0].name, "Vr");
    assert_string_equal(m->nodes[1].name, "Vp");
    assert_string_equal(m->nodes[2].name, "tank");
    assert_string_equal(m->nodes[3].name, "pump");
    assert_int_equal(m->nodes[0].p0_rule, HYMO_P0_GIVEN);
    assert_close(m->nodes[0].p0, 0, 0);
    assert_int_equal(m->nodes[1].n_parts, 2);
    const hymo_cylinder *c = &m->cylinders[0];
    assert_int_equal(c->node_rod, 0);
    assert_int_equal(c->node_piston, 1);
    assert_int_equal(m->points[c->point_base].body, HYMO_GROUND);
    assert_int_equal(m->points[c->point_rod].body, 0);
    assert_close(c->efficiency, 1, 0);
    assert_close(c->viscous, 0, 0);
    assert_close(c->friction_velocity, 0.01, 0);
    assert_int_equal(c->has_damper, 0);
    assert_int_equal(c->has_l_pist0, 0);
    assert_close(m->throttles[0].Ct, 1e-7, 0);
    assert_int_equal(m->throttles[0].node_b, 2);
    assert_close(m->valves[0].tau, 0.01, 0);
    assert_int_equal(m->valves[0].signal, 1);

    /* step at the start of a table; single-point table */
    const hymo_signal *u = &m->signals[0], *k = &m->signals[1];
    assert_close(hymo_signal_eval(u, -1, +1), 0, 0);
    assert_close(hymo_signal_eval(u, 0, -1), 0, 0);
    assert_close(hymo_signal_eval(u, 0, +1), 5, 0);
    assert_close(hymo_signal_eval(u, 0.5, -1), 5, 0);
    assert_close(hymo_signal_eval(u, 1, +1), 5, 0);
    assert_close(hymo_signal_eval(k, 0, -1), 7, 0);
    assert_close(hymo_signal_eval(k, 2, +1), 7, 0);
    assert_close(hymo_signal_eval(k, 3, -1), 7, 0);
    hymo_model_free(m);
}

/* Variants of k_pure that must fail. */
static void test_inline_errors(void **state)
{
    (void)state;
    char buf[4096];
    /* reference to the 'origin' point on the wrong body */
    snprintf(buf, sizeof buf, "%s", k_pure);
    char *p = strstr(buf, "location: [1, 0, 0]");
    assert_non_null(p);
    memcpy(p, "location: origin   ", 19);
    expect_error(buf, HYMO_ERR_MODEL, "bodies[0].joint.location: unknown point 'origin' on body arm");
    /* missing top-level field */
    expect_error("format: 1\nname: x\nbodies: []\n", HYMO_ERR_MODEL, "gravity: missing required field");
    expect_error("format: 1\nname: x\ngravity: [0, 0, 0]\nbodies: []\n", HYMO_ERR_MODEL,
                 "bodies: a model needs at least one body");
    expect_error("- 1\n- 2\n", HYMO_ERR_MODEL, "expected a mapping");
    expect_error("format: 1\nname: 'a b'\n", HYMO_ERR_MODEL, "name: name 'a b' must not contain");
    expect_error("format: 1\nname: x\ngravity: [0, 0, \"1\"]\n", HYMO_ERR_MODEL,
                 "gravity[2]: expected a number, got the quoted string '1'");
    expect_error("format: 1\nname: x\ngravity: [0, 0, .nan]\n", HYMO_ERR_MODEL,
                 "gravity[2]: expected a finite number");
    expect_error("{format: 1, name: x", HYMO_ERR_PARSE, "inline.yaml:1: syntax error");
    expect_error("format: 1\nname: [x\n", HYMO_ERR_PARSE, "inline.yaml:2: syntax error");
    expect_error("", HYMO_ERR_PARSE, "empty model file");
}


/* Model identity by the physics: comments, formatting, key
 * order, number spelling, the description and the simulation section do
 * not change physics_sha256; a changed mass or name does. */
static const char *k_pendulum =
    "format: 1\n"
    "name: p\n"
    "description: a pendulum\n"
    "gravity: [0, -9.81, 0]\n"
    "simulation: {dt: 1.0e-3, t_end: 5, tolerances: {position: 1.0e-7}}\n"
    "bodies:\n"
    "  - name: b1\n"
    "    joint: {name: z1, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: -45 deg}\n"
    "    mass: 2\n"
    "    com: [0.5, 0, 0]\n"
    "    inertia: [0, 0.16666666666666666, 0.16666666666666666]\n";

static void physics_of(const char *text, char out[65], char text_hash[65])
{
    hymo_model *m = NULL;
    hymo_error err;
    if (hymo_model_load_string(text, "inline.yaml", &m, &err) != HYMO_OK) fail_msg("load: %s", err.message);
    snprintf(out, 65, "%s", m->physics_sha256);
    snprintf(text_hash, 65, "%s", m->sha256);
    hymo_model_free(m);
}

static void test_physics_hash(void **state)
{
    (void)state;
    char base[65], base_text[65], h[65], t[65];
    physics_of(k_pendulum, base, base_text);
    assert_int_equal(strlen(base), 64);
    const char *same[] = {
        /* comments and blank lines */
        "# a comment\n"
        "format: 1   # trailing\n\n"
        "name: p\n"
        "description: a pendulum\n"
        "gravity: [0, -9.81, 0]\n"
        "simulation: {dt: 1.0e-3, t_end: 5, tolerances: {position: 1.0e-7}}\n"
        "bodies:\n"
        "  - name: b1   # the body\n"
        "    joint: {name: z1, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: -45 deg}\n"
        "    mass: 2\n"
        "    com: [0.5, 0, 0]\n"
        "    inertia: [0, 0.16666666666666666, 0.16666666666666666]\n",
        /* block style, other key order, other number spelling, another
         * description, another simulation section */
        "name: p\n"
        "format: 1\n"
        "gravity:\n  - 0\n  - -9.81\n  - 0.0\n"
        "description: changed\n"
        "simulation:\n  dt: 2.0e-3\n  t_end: 1\n  max_iterations: 7\n  tolerances: {position: 1.0e-10, pressure: 1.0e-5}\n"
        "bodies:\n"
        "  - mass: 2.0e0\n"
        "    name: b1\n"
        "    com: [5e-1, 0, 0]\n"
        "    inertia: [0, 0.16666666666666666, 0.16666666666666666]\n"
        "    joint:\n      axis: [0, 0, 1]\n      name: z1\n      parent: ground\n      type: revolute\n"
        "      location: [0, 0, 0]\n      initial: -45 deg\n",
        /* no simulation section, no description */
        "format: 1\nname: p\ngravity: [0, -9.81, 0]\nbodies:\n"
        "  - {name: b1, mass: 2, com: [0.5, 0, 0], inertia: [0, 0.16666666666666666, 0.16666666666666666],\n"
        "     joint: {name: z1, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: -45 deg}}\n",
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        physics_of(same[i], h, t);
        if (strcmp(h, base)) fail_msg("variant %zu changed the physics hash", i);
        assert_string_not_equal(t, base_text); /* the text hash does change */
    }
    char *text = malloc(strlen(k_pendulum) + 16);
    const struct {
        const char *from, *to;
    } edits[] = {{"mass: 2", "mass: 2.5"}, {"name: p", "name: q"}, {"-45 deg", "-44 deg"}, {"name: z1", "name: zz"}};
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        const char *at = strstr(k_pendulum, edits[i].from);
        assert_non_null(at);
        size_t pre = (size_t)(at - k_pendulum);
        memcpy(text, k_pendulum, pre);
        strcpy(text + pre, edits[i].to);
        strcat(text, at + strlen(edits[i].from));
        physics_of(text, h, t);
        if (!strcmp(h, base)) fail_msg("'%s' -> '%s' kept the physics hash", edits[i].from, edits[i].to);
    }
    free(text);
    /* keys whose canonical text is the same (the numbers 1, 01, 1e0 as
     * point names) are ordered by their values: any order in the file
     * gives the same hash */
    char h2[65];
    physics_of("format: 1\nname: p\ngravity: [0, -9.81, 0]\n"
               "ground: {points: {1e0: [1, 2, 0], 01: [0, 2, 0], 1: [0, 1, 0]}}\n"
               "bodies:\n  - {name: b1, mass: 2, com: [0.5, 0, 0], inertia: [0, 0.1, 0.1],\n"
               "     joint: {name: z1, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1]}}\n",
               h, t);
    physics_of("format: 1\nname: p\ngravity: [0, -9.81, 0]\n"
               "ground: {points: {1: [0, 1, 0], 01: [0, 2, 0], 1e0: [1, 2, 0]}}\n"
               "bodies:\n  - {name: b1, mass: 2, com: [0.5, 0, 0], inertia: [0, 0.1, 0.1],\n"
               "     joint: {name: z1, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1]}}\n",
               h2, t);
    assert_string_equal(h, h2);
}

static void test_sha256_vectors(void **state)
{
    (void)state;
    char out[65];
    hymo_sha256_hex("", 0, out);
    assert_string_equal(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hymo_sha256_hex("abc", 3, out);
    assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    hymo_sha256_hex(m448, strlen(m448), out);
    assert_string_equal(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *million = malloc(1000000);
    assert_non_null(million);
    memset(million, 'a', 1000000);
    hymo_sha256_hex(million, 1000000, out);
    free(million);
    assert_string_equal(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    /* the loader's digest of a seed file equals sha256sum's */
    char cmd[1200], line[200];
    snprintf(cmd, sizeof cmd, "sha256sum '%s/fourbar.yaml' 2>/dev/null", HYMO_DATA_DIR);
    FILE *pipe = popen(cmd, "r");
    if (pipe && fgets(line, sizeof line, pipe) && strlen(line) >= 64) {
        line[64] = '\0';
        hymo_model *m = test_load_model("fourbar.yaml");
        assert_string_equal(m->sha256, line);
        hymo_model_free(m);
    }
    if (pipe) pclose(pipe);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fourbar),
        cmocka_unit_test(test_quickreturn),
        cmocka_unit_test(test_crane1),
        cmocka_unit_test(test_crane2),
        cmocka_unit_test(test_bad_models),
        cmocka_unit_test(test_bad_models_all_listed),
        cmocka_unit_test(test_unassemblable_loads),
        cmocka_unit_test(test_io_error),
        cmocka_unit_test(test_pure_mechanism),
        cmocka_unit_test(test_spatial_and_forms),
        cmocka_unit_test(test_inline_errors),
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_physics_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
