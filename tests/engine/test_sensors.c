/* Sensors, element flows and valve references in the output
 * (docs/hdf5-format.md "Sensors, flows and inputs"), and the whole
 * independent-coordinate list (not cut at 127 characters).
 *
 * - the `sensors:` section: the forms it accepts, one-line errors, output
 *   only (the physics hash and the results do not change);
 * - hydraulics/flows.c against the circuit: at random states the element
 *   flows into each volume, minus its volume rate, times B_e/V, are the
 *   circuit's own pressure rates (so a flow law changed in circuit.c and
 *   not in flows.c fails here), and the sources' outflow balances;
 * - the file: datasets, column names, units, rows; the sensor rows equal
 *   the kinematics at the written joint states; cosim writes them too;
 * - no allocation per output row (this executable counts allocations:
 *   tests/CMakeLists.txt wraps malloc for it);
 * - a 64-link chain: the summary, /solver/independent and hymo_ref_read
 *   hold all 64 names.
 * The values against computations hymo did not make (forward kinematics,
 * finite differences, the orifice law in numpy): tests/sensors/. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "flows.h"
#include "hymo/cosim.h"
#include "hymo/sim.h"
#include "test_hdf5.h"
#include "test_util.h"


static const char SENSORS[] = "\nsensors:\n"
                              "  - name: tip\n"
                              "    point: body2.R\n"
                              "  - name: mid\n"
                              "    body: body1\n"
                              "    point: [0.5, 0.1, 0]\n"
                              "    record: [position, velocity]\n"
                              "  - name: q\n"
                              "    body: body1\n"
                              "    point: Q\n"
                              "    record: acceleration\n"
                              "  - name: base\n"
                              "    point: ground.B\n";

/* data/crane1.yaml followed by `extra`, loaded (fails the test on error). */
static hymo_model *crane_with(const char *extra, hymo_error *err, hymo_status *st)
{
    char *text = test_read_file(HYMO_DATA_DIR "/crane1.yaml");
    size_t n = strlen(text) + strlen(extra) + 1;
    char *all = malloc(n);
    snprintf(all, n, "%s%s", text, extra);
    hymo_model *m = NULL;
    *st = hymo_model_load_string(all, "crane1s.yaml", &m, err);
    free(text);
    free(all);
    return m;
}

static void test_load(void **state)
{
    (void)state;
    hymo_error err;
    hymo_status st;
    hymo_model *m = crane_with(SENSORS, &err, &st);
    if (st != HYMO_OK) fail_msg("%s", err.message);
    assert_int_equal(m->n_sensors, 4);
    assert_string_equal(m->sensors[0].name, "tip");
    assert_int_equal(m->sensors[0].body, 1);
    assert_close(m->sensors[0].r[0], 0.5, 0.0);
    assert_int_equal(m->sensors[0].record, 7);
    assert_int_equal(m->sensors[1].body, 0);
    assert_close(m->sensors[1].r[1], 0.1, 0.0);
    assert_int_equal(m->sensors[1].record, HYMO_SENSOR_POSITION | HYMO_SENSOR_VELOCITY);
    assert_int_equal(m->sensors[2].record, HYMO_SENSOR_ACCELERATION);
    assert_close(m->sensors[2].r[0], 1.0, 0.0);
    assert_int_equal(m->sensors[3].body, HYMO_GROUND);
    /* output only: same physics hash as the model without sensors */
    hymo_model *plain = test_load_model("crane1.yaml");
    assert_string_equal(m->physics_sha256, plain->physics_sha256);
    assert_string_not_equal(m->sha256, plain->sha256);
    hymo_model_free(plain);
    hymo_model_free(m);
}

static void test_load_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *message;
    } bad[] = {
        {"\nsensors:\n  - {name: a, point: body2.X}\n", "sensors[0].point: unknown point 'body2.X'"},
        {"\nsensors:\n  - {name: a, body: body9, point: [0, 0, 0]}\n", "sensors[0].body: unknown body 'body9'"},
        {"\nsensors:\n  - {name: a, body: body2, point: X}\n", "sensors[0].point: unknown point 'X' on body body2"},
        {"\nsensors:\n  - {name: a, point: [0, 0, 0]}\n", "coordinates need the body"},
        {"\nsensors:\n  - {name: a, body: body1, point: [0, 0]}\n", "expected [x, y, z] (3 numbers), got 2 items"},
        {"\nsensors:\n  - {name: a, point: body2.R}\n  - {name: a, point: body2.R}\n",
         "sensors[1].name: duplicate sensor name 'a' (sensors[0])"},
        {"\nsensors:\n  - {name: a.b, point: body2.R}\n", "must not contain '.'"},
        {"\nsensors:\n  - {name: a, point: body2.R, record: [speed]}\n", "sensors[0].record: unknown 'speed'"},
        {"\nsensors:\n  - {name: a, point: body2.R, record: [position, position]}\n", "'position' given twice"},
        {"\nsensors:\n  - {name: a, point: body2.R, record: []}\n", "record: empty"},
        {"\nsensors:\n  - {name: a, point: body2.R, colour: red}\n", "sensors[0].colour: unknown field"},
        {"\nsensors:\n  - {point: body2.R}\n", "sensors[0].name: missing"},
        {"\nsensors:\n  - {name: a}\n", "sensors[0].point: missing"},
        {"\nsensors: 3\n", "sensors: expected a list of sensors"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        hymo_error err;
        hymo_status st;
        hymo_model *m = crane_with(bad[i].text, &err, &st);
        if (st == HYMO_OK) fail_msg("accepted: %s", bad[i].text);
        assert_int_equal(st, HYMO_ERR_MODEL);
        if (!strstr(err.message, bad[i].message) || !strstr(err.message, "crane1s.yaml:") || strchr(err.message, '\n'))
            fail_msg("message '%s' lacks '%s'", err.message, bad[i].message);
        assert_null(m);
    }
}

/* Random in [lo, hi). */
static double urand(double lo, double hi) { return lo + (hi - lo) * (double)rand() / ((double)RAND_MAX + 1.0); }

/* Element flows against the circuit's pressure rates at random states. */
static void check_flows(const char *file)
{
    hymo_model *m = test_load_model(file);
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    hymo_sim *sim = NULL;
    hymo_error err;
    if (hymo_sim_create(m, &opt, &sim, &err) != HYMO_OK) fail_msg("%s", err.message); /* compiles the initial state */
    const hymo_circuit *circ = &m->compiled->circ;
    const int np = m->n_volumes, nu = m->n_valves, na = m->n_cylinders;
    int nf, npw;
    hymo_flow_columns(m, &nf, &npw);
    double *p = calloc((size_t)np + 1, sizeof *p), *u = calloc((size_t)nu + 1, sizeof *u);
    double *s = calloc((size_t)na + 1, sizeof *s), *sd = calloc((size_t)na + 1, sizeof *sd);
    double *pdot = calloc((size_t)np + 1, sizeof *pdot), *uref = calloc((size_t)nu + 1, sizeof *uref);
    double *q = calloc((size_t)nf + 1, sizeof *q), *w = calloc((size_t)npw + 1, sizeof *w);
    double *qnode = calloc((size_t)m->n_nodes + 1, sizeof *qnode);
    double worst = 0.0;
    for (int trial = 0; trial < 200; ++trial) {
        const double p_lo = m->fluid_air.model == HYMO_FLUID_CONSTANT ? -1e6 : 2e4; /* entrained air: above its floor */
        for (int i = 0; i < np; ++i) p[i] = urand(p_lo, 2.5e7);
        for (int v = 0; v < nu; ++v) u[v] = trial % 4 == 0 ? 0.0 : urand(-10.0, 10.0);
        for (int a = 0; a < na; ++a) {
            double lo = circ->s0[a] - 0.5 * circ->l_pist0[a], hi = circ->s0[a] + 0.5 * circ->l_rod0[a];
            s[a] = urand(lo, hi);
            sd[a] = urand(-0.3, 0.3);
        }
        if (hymo_circuit_eval(circ, m, s, sd, p, u, uref, pdot, NULL, NULL) != 0) fail_msg("%s: volume <= 0", file);
        hymo_flow_eval(circ, m, p, u, NULL, q, w, qnode);
        for (int i = 0; i < np; ++i) {
            const int k = circ->vol_node[i];
            const hymo_node *nd = &m->nodes[k];
            double V = 0.0, Vdot = 0.0, compl_sum = 0.0;
            for (int j = 0; j < nd->n_parts; ++j) {
                const hymo_subvolume *sv = &m->subvolumes[nd->first_part + j];
                double dV, Vs = hymo_subvolume_size(circ, m, sv, s, &dV);
                if (sv->cylinder >= 0) Vdot += dV * sd[sv->cylinder];
                V += Vs;
                compl_sum += Vs / sv->bulk_modulus;
            }
            double inv_bf, dD;
            const double W = hymo_volume_weight(circ, m, k, p[i], V, compl_sum, &inv_bf, &dD); /* B_e/V */
            const double from_flows = W * (qnode[k] - Vdot);
            const double err_i = fabs(from_flows - pdot[i]) / (fabs(pdot[i]) + W * 1e-9);
            if (err_i > worst) worst = err_i;
        }
        /* the sources' outflow (flow columns of kind "source", the last ones) balances every other inflow */
        double into_volumes = 0.0, out_of_sources = 0.0;
        for (int i = 0; i < np; ++i) into_volumes += qnode[circ->vol_node[i]];
        int n_src = 0;
        for (int k = 0; k < m->n_nodes; ++k) n_src += m->nodes[k].kind == HYMO_NODE_SOURCE;
        for (int j = nf - n_src; j < nf; ++j) out_of_sources += q[j];
        assert_close(into_volumes, out_of_sources, 1e-12 + 1e-9 * fabs(out_of_sources));
        /* the power of each source: its pressure times its outflow */
        for (int j = 0, k = 0; k < m->n_nodes; ++k)
            if (m->nodes[k].kind == HYMO_NODE_SOURCE) {
                assert_close(w[npw - n_src + j], m->nodes[k].pressure * q[nf - n_src + j], 1e-9);
                ++j;
            }
    }
    print_message("%s: %d flow and %d power columns; element flows vs circuit pressure rates: worst relative "
                  "difference %.2e\n",
                  file, nf, npw, worst);
    assert_true(worst < 1e-10);
    free(p), free(u), free(s), free(sd), free(pdot), free(uref), free(q), free(w), free(qnode);
    hymo_sim_free(sim);
    hymo_model_free(m);
}

static void test_flows_match_circuit(void **state)
{
    (void)state;
    check_flows("crane1.yaml");
    check_flows("crane2.yaml");
    check_flows("fourbar.yaml");
    check_flows("relief_demo.yaml");
    check_flows("pump_demo.yaml");                 /* pump, edged 4/3 valve, entrained-air fluid */
    check_flows("../tests/models/valves_line.yaml"); /* pump, relief, edged valve, flow control valve */
}

/* names attribute of a dataset as one comma-joined string */
static void read_names(hid_t f, const char *path, char *out, size_t cap)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0) fail_msg("no dataset %s", path);
    hid_t a = H5Aopen(d, "names", H5P_DEFAULT);
    hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    size_t width = H5Tget_size(t);
    char *buf = calloc((size_t)n, width + 1);
    H5Aread(a, t, buf);
    out[0] = '\0';
    for (hssize_t i = 0; i < n; ++i) {
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%.*s", i ? "," : "", (int)width, buf + (size_t)i * width);
    }
    free(buf);
    H5Sclose(sp), H5Tclose(t), H5Aclose(a), H5Dclose(d);
}

/* whole 2-D dataset: rows x cols into a new array */
static double *read_matrix(hid_t f, const char *path, int *rows, int *cols)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0) fail_msg("no dataset %s", path);
    hid_t sp = H5Dget_space(d);
    hsize_t dims[2] = {0, 1};
    int rank = H5Sget_simple_extent_dims(sp, dims, NULL);
    *rows = (int)dims[0];
    *cols = rank == 2 ? (int)dims[1] : 1;
    double *v = calloc((size_t)*rows * (size_t)*cols + 1, sizeof *v);
    H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Sclose(sp), H5Dclose(d);
    return v;
}

static void test_file(void **state)
{
    (void)state;
    hymo_error err;
    hymo_status st;
    hymo_model *m = crane_with(SENSORS, &err, &st);
    if (st != HYMO_OK) fail_msg("%s", err.message);
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.t_end = 1.6;
    opt.output_every = 4;
    hymo_run_summary sum;
    const char *out = "sensors_crane1.h5";
    remove(out);
    if (hymo_run(m, &opt, out, &sum, &err) != HYMO_OK) fail_msg("%s", err.message);
    hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    char names[2048];
    read_names(f, "/sensors/position", names, sizeof names);
    assert_string_equal(names, "tip.x,tip.y,tip.z,mid.x,mid.y,mid.z,base.x,base.y,base.z");
    read_names(f, "/sensors/velocity", names, sizeof names);
    assert_string_equal(names, "tip.x,tip.y,tip.z,mid.x,mid.y,mid.z,base.x,base.y,base.z");
    read_names(f, "/sensors/acceleration", names, sizeof names);
    assert_string_equal(names, "tip.x,tip.y,tip.z,q.x,q.y,q.z,base.x,base.y,base.z");
    read_names(f, "/hydraulics/flow", names, sizeof names);
    assert_string_equal(names, "dcv1.P-A,dcv1.B-T,dcv1.P-B,dcv1.A-T,dcv1.A,dcv1.B,throttle1,pump,tank");
    read_names(f, "/hydraulics/power", names, sizeof names);
    assert_string_equal(names, "pump,tank");
    read_names(f, "/inputs/U_ref", names, sizeof names);
    assert_string_equal(names, "dcv1");
    int n, c, nt, ct;
    double *time = read_matrix(f, "/time", &nt, &ct);
    assert_int_equal(nt, 401); /* 1600 steps, every 4th, and t = 0 */
    double *z = read_matrix(f, "/states/z", &n, &c);
    double *zd = read_matrix(f, "/states/zd", &n, &c);
    double *zdd = read_matrix(f, "/states/zdd", &n, &c);
    double *pos = read_matrix(f, "/sensors/position", &n, &c);
    assert_int_equal(n, nt);
    assert_int_equal(c, 9);
    double *vel = read_matrix(f, "/sensors/velocity", &n, &c);
    double *acc = read_matrix(f, "/sensors/acceleration", &n, &c);
    double *uref = read_matrix(f, "/inputs/U_ref", &n, &c);
    /* against the kinematics at the written joint states */
    hymo_kin kin;
    if (hymo_kin_init(&kin, &m->compiled->kin, &err) != HYMO_OK) fail_msg("%s", err.message);
    double worst = 0.0;
    for (int r = 0; r < n; ++r) {
        hymo_kin_positions(&kin, m, z + 2 * r);
        hymo_kin_velocities(&kin, m, zd + 2 * r);
        const double rl[3] = {0.5, 0, 0};
        double rt[3], v[3], a[3];
        hymo_kin_body_point(&kin, 1, rl, rt);
        hymo_kin_point_velocity(&kin, 1, rt, v);
        hymo_kin_point_accel0(&kin, 1, rt, a);
        for (int j = 0; j < 2; ++j) {
            double d[3];
            hymo_kin_point_jacobian(&kin, 1, j, rt, d);
            for (int k = 0; k < 3; ++k) a[k] += d[k] * zdd[2 * r + j];
        }
        for (int k = 0; k < 3; ++k) {
            worst = fmax(worst, fabs(pos[9 * r + k] - rt[k]));
            worst = fmax(worst, fabs(vel[9 * r + k] - v[k]));
            worst = fmax(worst, fabs(acc[9 * r + k] - a[k]));
            /* the ground point: fixed, at rest */
            assert_close(pos[9 * r + 6 + k], k == 0 ? 0.8660254037844386 : 0.0, 0.0);
            assert_close(vel[9 * r + 6 + k], 0.0, 0.0);
            assert_close(acc[9 * r + 6 + k], 0.0, 0.0);
        }
        /* the valve reference: the table's left limit (right at t = 0) */
        const hymo_signal *sg = &m->signals[m->valves[0].signal];
        assert_close(uref[r], hymo_signal_eval_snapped(sg, time[r], r == 0 ? +1 : -1, opt.dt), 1e-12);
    }
    assert_true(worst == 0.0);
    hymo_kin_free(&kin);
    H5Fclose(f);
    free(time), free(z), free(zd), free(zdd), free(pos), free(vel), free(acc), free(uref);
    remove(out);

    /* a model without sensors: flows and references only; one without
     * hydraulics and sensors: none of the new datasets */
    hymo_model *plain = test_load_model("double_pendulum.yaml");
    hymo_run_options po;
    hymo_run_options_default(&po, plain);
    po.t_end = 0.01;
    if (hymo_run(plain, &po, out, &sum, &err) != HYMO_OK) fail_msg("%s", err.message);
    f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_int_equal(H5Lexists(f, "sensors", H5P_DEFAULT), 0);
    assert_int_equal(H5Lexists(f, "hydraulics", H5P_DEFAULT), 0);
    H5Fclose(f);
    remove(out);
    hymo_model_free(plain);
    hymo_model_free(m);
}

static void test_cosim_file(void **state)
{
    (void)state;
    hymo_error err;
    hymo_status st;
    hymo_model *m = crane_with(SENSORS, &err, &st);
    if (st != HYMO_OK) fail_msg("%s", err.message);
    hymo_cosim_options opt;
    hymo_cosim_options_default(&opt, m);
    opt.mech.t_end = 1.3;
    hymo_cosim_summary sum;
    test_cosim_run(m, &opt, NULL, "sensors_cosim.h5", &sum);
    hid_t f = H5Fopen("sensors_cosim.h5", H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    int n, c, nt, ct;
    double *time = read_matrix(f, "/time", &nt, &ct);
    double *pos = read_matrix(f, "/sensors/position", &n, &c);
    assert_int_equal(n, nt);
    assert_int_equal(c, 9);
    double *z = read_matrix(f, "/states/z", &n, &c);
    double *flow = read_matrix(f, "/hydraulics/flow", &n, &c);
    assert_int_equal(n, nt);
    assert_int_equal(c, 9);
    double *uref = read_matrix(f, "/inputs/U_ref", &n, &c);
    for (int r = 0; r < n; ++r) { /* the tip from the written joint angles */
        const double a = z[2 * r], b = z[2 * r] + z[2 * r + 1];
        assert_close(pos[9 * r], cos(a) + 0.5 * cos(b), 1e-14);
        assert_close(pos[9 * r + 1], sin(a) + 0.5 * sin(b), 1e-14);
    }
    assert_close(uref[n - 1], -8.0 * (time[n - 1] - 1.0) / 0.5, 1e-9); /* on the ramp 1 .. 1.5 s */
    assert_true(fabs(flow[9 * (n - 1) + 3]) > 1e-6);                     /* A-T open at U < 0 */
    H5Fclose(f);
    free(time), free(pos), free(z), free(flow), free(uref);
    remove("sensors_cosim.h5");
    hymo_model_free(m);
}

/* No allocation per output row: runs of different lengths with sensors
 * make the same number of allocations. */
static long run_allocs(const hymo_model *m, double t_end)
{
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    opt.t_end = t_end;
    opt.error_estimate = 0;
    hymo_run_summary sum;
    hymo_error err;
    long before = test_n_allocs;
    if (hymo_run(m, &opt, "sensors_alloc.h5", &sum, &err) != HYMO_OK) fail_msg("%s", err.message);
    long n = test_n_allocs - before;
    remove("sensors_alloc.h5");
    return n;
}

static void test_no_alloc(void **state)
{
    (void)state;
    hymo_error err;
    hymo_status st;
    hymo_model *m = crane_with(SENSORS, &err, &st);
    if (st != HYMO_OK) fail_msg("%s", err.message);
    run_allocs(m, 0.5); /* the first run computes the initial state */
    long a = run_allocs(m, 1.0), b = run_allocs(m, 2.5);
    print_message("hymo_run with sensors and flows: %ld allocations for 1 s, %ld for 2.5 s\n", a, b);
    assert_int_equal(a, b);
    hymo_model_free(m);
}

/* A chain of 64 links: all 64 independent coordinates, nothing cut. */
static void test_independent_list(void **state)
{
    (void)state;
    char *text = malloc(64 * 256 + 256);
    size_t len = (size_t)sprintf(text, "format: 1\nname: chain64\ngravity: [0, -9.81, 0]\n"
                                       "simulation: {dt: 1.0e-3, t_end: 0.005}\nbodies:\n");
    for (int i = 1; i <= 64; ++i) {
        char parent[32];
        snprintf(parent, sizeof parent, i == 1 ? "ground" : "link%d", i - 1);
        len += (size_t)sprintf(text + len,
                               "  - name: link%d\n    joint: {name: q%d, type: revolute, parent: %s, location: [%s, 0, 0],"
                               " axis: [0, 0, 1], initial: 0.01}\n    mass: 1\n    com: [0.05, 0, 0]\n"
                               "    inertia: [0.001, 0.001, 0.001]\n",
                               i, i, parent, i == 1 ? "0" : "0.1");
    }
    hymo_model *m = NULL;
    hymo_error err;
    if (hymo_model_load_string(text, "chain64.yaml", &m, &err) != HYMO_OK) fail_msg("%s", err.message);
    free(text);
    char expect[1024] = "";
    for (int i = 1; i <= 64; ++i) snprintf(expect + strlen(expect), sizeof expect - strlen(expect), "%sq%d", i > 1 ? "," : "", i);
    hymo_run_options opt;
    hymo_run_options_default(&opt, m);
    hymo_run_summary sum;
    remove("chain64.h5");
    if (hymo_run(m, &opt, "chain64.h5", &sum, &err) != HYMO_OK) fail_msg("%s", err.message);
    assert_string_equal(sum.independent_list, expect);
    assert_int_equal(strlen(sum.independent), HYMO_REF_TEXT_MAX - 1); /* the old field: its first 127 characters */
    assert_memory_equal(sum.independent, expect, HYMO_REF_TEXT_MAX - 1);
    /* printed whole */
    FILE *tmp = tmpfile();
    hymo_run_summary_print(tmp, &sum);
    rewind(tmp);
    char line[4096];
    int found = 0;
    while (fgets(line, sizeof line, tmp))
        if (!strncmp(line, "independent", 11)) found = strstr(line, expect) && strstr(line, ",q64 (0 re-selections)");
    fclose(tmp);
    assert_true(found);
    /* in the file, and read back */
    hymo_reference *ref = test_read_ref("chain64.h5");
    assert_string_equal(ref->summary.independent_list, expect);
    assert_memory_equal(ref->summary.independent, expect, HYMO_REF_TEXT_MAX - 1);
    hymo_ref_free(ref);
    remove("chain64.h5");
    hymo_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),          cmocka_unit_test(test_load_errors), cmocka_unit_test(test_flows_match_circuit),
        cmocka_unit_test(test_file),          cmocka_unit_test(test_cosim_file),  cmocka_unit_test(test_no_alloc),
        cmocka_unit_test(test_independent_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
