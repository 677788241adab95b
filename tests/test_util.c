#include "test_util.h"

#include "hymo/compare.h"
#include "hymo/master.h"

#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hymo_model *load_model_in(const char *dir, const char *file_name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file_name);
    hymo_model *model = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_file(path, &model, &err) != HYMO_OK) {
        fail_msg("loading %s: %s", path, err.message);
    }
    return model;
}

hymo_model *test_load_model(const char *file_name) { return load_model_in(HYMO_DATA_DIR, file_name); }

hymo_model *test_load_test_model(const char *file_name) { return load_model_in(HYMO_TESTS_DIR "/models", file_name); }

hymo_model *test_load_bad_model(const char *file_name) { return load_model_in(HYMO_TESTS_DIR "/bad_models", file_name); }

hymo_model *test_load_text(const char *text, const char *origin)
{
    hymo_model *model = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_string(text, origin, &model, &err) != HYMO_OK) fail_msg("loading %s: %s", origin, err.message);
    return model;
}

void test_cosim_retried_step(const hymo_model *model, const hymo_cosim_options *opt, int n_steps)
{
    hymo_split *sp = NULL;
    hymo_master *m = NULL;
    hymo_error err;
    if (hymo_split_create(model, opt, &sp, &err) != HYMO_OK) fail_msg("%s", err.message);
    if (hymo_split_master_create(sp, opt->H, &m, &err) != HYMO_OK) fail_msg("%s", err.message);
    for (int n = 0; n < n_steps; ++n)
        if (hymo_master_step(m, &err) != HYMO_OK) fail_msg("%s", err.message);
    const int ns = sp->n_subsystems;
    double **s0 = calloc((size_t)ns, sizeof *s0), **y1 = calloc((size_t)ns, sizeof *y1),
           **y2 = calloc((size_t)ns, sizeof *y2);
    assert_true(s0 && y1 && y2);
    for (int k = 0; k < ns; ++k) {
        const hymo_subsystem *sub = sp->subsystems[k];
        s0[k] = calloc((size_t)sub->ops->state_size(sub), sizeof(double));
        y1[k] = calloc((size_t)sub->n_outputs + 1, sizeof(double));
        y2[k] = calloc((size_t)sub->n_outputs + 1, sizeof(double));
        assert_true(s0[k] && y1[k] && y2[k]);
        sub->ops->get_state(sub, s0[k]);
    }
    const double t = hymo_master_time(m);
    if (hymo_master_step(m, &err) != HYMO_OK) fail_msg("%s", err.message);
    for (int k = 0; k < ns; ++k) {
        hymo_subsystem *sub = sp->subsystems[k];
        sub->ops->get_outputs(sub, y1[k]);
        sub->ops->set_state(sub, s0[k]);
        sub->ops->set_inputs(sub, t, hymo_master_inputs(m, k));
        if (sub->ops->do_step(sub, t, opt->H, &err) != HYMO_OK) fail_msg("%s", err.message);
        sub->ops->get_outputs(sub, y2[k]);
        for (int i = 0; i < sub->n_outputs; ++i)
            if (y1[k][i] != y2[k][i]) fail_msg("%s output %d: %.17g then %.17g", sub->name, i, y1[k][i], y2[k][i]);
        free(s0[k]);
        free(y1[k]);
        free(y2[k]);
    }
    free(s0);
    free(y1);
    free(y2);
    hymo_master_free(m);
    hymo_split_free(sp);
}

char *test_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

void test_assert_close(double a, double b, double tol, const char *sa, const char *sb,
                       const char *file, int line)
{
    if (!(fabs(a - b) <= tol)) {
        fprintf(stderr, "%s = %.17g, %s = %.17g, |diff| = %.3g > %.3g\n", sa, a, sb, b,
                fabs(a - b), tol);
        _fail(file, line);
    }
}

int test_volume_state(const hymo_model *m, const char *name)
{
    for (int k = 0; k < m->n_nodes; ++k)
        if (m->nodes[k].kind == HYMO_NODE_VOLUME && strcmp(m->nodes[k].name, name) == 0) return m->nodes[k].state;
    fail_msg("no volume %s", name);
    return -1;
}

int test_node_index(const hymo_model *m, const char *name)
{
    for (int k = 0; k < m->n_nodes; ++k)
        if (strcmp(m->nodes[k].name, name) == 0) return k;
    fail_msg("no node %s", name);
    return -1;
}

hymo_reference *test_read_ref(const char *path)
{
    hymo_reference *ref = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_ref_read(path, &ref, &err) != HYMO_OK) fail_msg("%s", err.message);
    return ref;
}

void test_cosim_run(const hymo_model *model, const hymo_cosim_options *opt, const hymo_reference *ref,
                    const char *out, hymo_cosim_summary *sum)
{
    hymo_error err;
    hymo_error_clear(&err);
    if (out) remove(out);
    if (hymo_cosim_run(model, opt, ref, out, sum, &err) != HYMO_OK) fail_msg("%s", err.message);
}

double test_cosim_rms(const hymo_model *model, const hymo_cosim_options *opt, const hymo_reference *fine,
                      const char *out, int quantity)
{
    hymo_cosim_summary sum;
    test_cosim_run(model, opt, NULL, out, &sum);
    assert_true(sum.stable);
    hymo_reference *coarse = test_read_ref(out);
    hymo_compare_result res;
    hymo_error err;
    if (hymo_compare_trajectories(coarse, fine, &res, &err) != HYMO_OK) fail_msg("%s", err.message);
    assert_int_equal(res.n_samples, coarse->n);
    hymo_ref_free(coarse);
    return res.rms[quantity];
}

hymo_reference *test_run_ref(const hymo_model *model, const hymo_run_options *ro, const char *path)
{
    hymo_run_summary rs;
    hymo_error err;
    hymo_error_clear(&err);
    remove(path);
    if (hymo_run(model, ro, path, &rs, &err) != HYMO_OK) fail_msg("%s", err.message);
    return test_read_ref(path);
}

hymo_reference *test_monolithic(const hymo_model *model, double dt, double t_end, const char *path)
{
    hymo_run_options ro;
    hymo_run_options_default(&ro, model);
    if (dt > 0.0) ro.dt = dt;
    if (t_end > 0.0) ro.t_end = t_end;
    return test_run_ref(model, &ro, path);
}

/* the fine run (H = 0.1 ms, approx p) or a coarse one's options */
static void order_options(hymo_cosim_options *opt, const hymo_model *model, int p, double H, double t_end)
{
    hymo_cosim_options_default(opt, model);
    opt->approx = (hymo_approx_kind)p;
    opt->H = H;
    opt->mech.dt = opt->h_h = 1e-4;
    if (t_end > 0.0) opt->mech.t_end = t_end;
}

void test_cosim_order(const hymo_model *model, double t_end, int quantity, const char *what, const char *unit,
                      double tol, const char *out_ref, const char *out_run)
{
    const double Hs[3] = {0.4e-3, 0.8e-3, 1.6e-3};
    for (int p = 0; p <= 2; ++p) {
        hymo_cosim_options opt;
        order_options(&opt, model, p, 1e-4, t_end);
        hymo_cosim_summary sum;
        test_cosim_run(model, &opt, NULL, out_ref, &sum);
        hymo_reference *ref = test_read_ref(out_ref);
        double e[3];
        for (int i = 0; i < 3; ++i) {
            order_options(&opt, model, p, Hs[i], t_end);
            e[i] = test_cosim_rms(model, &opt, ref, out_run, quantity);
        }
        const double o1 = log2(e[1] / e[0]), o2 = log2(e[2] / e[1]);
        print_message("p = %d: RMS %s %.3g %.3g %.3g %s at H = 0.4 0.8 1.6 ms: orders %.2f %.2f (expected %d)\n", p,
                      what, e[0], e[1], e[2], unit, o1, o2, p + 1);
        assert_true(fabs(o1 - (p + 1)) <= tol);
        assert_true(fabs(o2 - (p + 1)) <= tol);
        hymo_ref_free(ref);
    }
}

hymo_sim *test_sim_create(const hymo_model *m, const hymo_run_options *opt)
{
    hymo_run_options own;
    if (!opt) {
        hymo_run_options_default(&own, m);
        opt = &own;
    }
    hymo_sim *sim = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_sim_create(m, opt, &sim, &err) != HYMO_OK) fail_msg("%s", err.message);
    return sim;
}

void test_initial_lengths(const hymo_model *m, double *s0, int max)
{
    hymo_sim *sim = test_sim_create(m, NULL);
    assert_true(hymo_sim_na(sim) <= max);
    memcpy(s0, hymo_sim_actuator_length(sim), (size_t)hymo_sim_na(sim) * sizeof(double));
    hymo_sim_free(sim);
}

hymo_sim *test_sim_run(const hymo_model *m, const hymo_run_options *opt, double *t_ev, int max_ev, int *n_ev)
{
    hymo_sim *sim = test_sim_create(m, opt);
    hymo_error err;
    hymo_error_clear(&err);
    int seen = 0;
    const long n = lround(opt->t_end / opt->dt);
    for (long k = 0; opt->integrator == HYMO_INTEGRATOR_IDA ? hymo_sim_time(sim) < opt->t_end - 1e-12 : k < n;
         ++k) {
        if (hymo_sim_step(sim, &err) != HYMO_OK) fail_msg("%s", err.message);
        double last;
        const long ev = hymo_sim_events(sim, &last);
        if (ev > seen && t_ev) {
            assert_true(ev <= max_ev);
            /* several in one step: only the last one's time is known */
            while (seen < ev - 1) t_ev[seen++] = NAN;
            t_ev[seen++] = last;
        }
    }
    if (n_ev) *n_ev = seen;
    return sim;
}

void test_ida_options(hymo_run_options *opt, const hymo_model *m, double t_end)
{
    hymo_run_options_default(opt, m);
    opt->t_end = t_end;
    opt->integrator = HYMO_INTEGRATOR_IDA;
    opt->rtol = 1e-11;
    opt->atol = 1e-13;
}

void test_print_ida_events(int n, const double *t_ev)
{
    print_message("IDA rtol 1e-11: %d events:", n);
    for (int i = 0; i < n; ++i) print_message(" %.9f", t_ev[i]);
    print_message("\n");
}

size_t test_heap_in_use(void)
{
    const struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

void test_heap_exponent(const char *label, double k_n, double k_4n, double bound)
{
    if (!(k_n > 0.0)) { /* another allocator (AddressSanitizer's): mallinfo2 does not see it */
        print_message("heap not measurable with this allocator (the plain build measures it)\n");
        skip();
    }
    const double p = log(k_4n / k_n) / log(4.0);
    print_message("%s: heap held %.0f KB, at 4 N %.0f KB: N^%.2f\n", label, k_n, k_4n, p);
    assert_true(p <= bound);
}

double test_urand_pm1(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return (double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

double test_rel_residual(int n, const double *a, const double *x, const double *b)
{
    double r = 0.0, an = 0.0, xn = 0.0;
    for (int i = 0; i < n; ++i) {
        double s = -b[i], row = 0.0;
        for (int j = 0; j < n; ++j) {
            s += a[(size_t)j * n + i] * x[j];
            row += fabs(a[(size_t)j * n + i]);
        }
        r = fmax(r, fabs(s));
        an = fmax(an, row);
        xn = fmax(xn, fabs(x[i]));
    }
    return r / (an * xn);
}

void test_sparse_from_dense(int n, const double *a, int zeros, hymo_sparse *sp)
{
    if (sp->n_cols == 0) assert_int_equal(hymo_sparse_alloc(sp, n, n, n * n), 0);
    hymo_sparse_begin(sp);
    int z = 0;
    for (int j = 0; j < n; ++j) {
        for (int i = 0; i < n; ++i) {
            const double v = a[(size_t)j * n + i];
            if (v != 0.0 || (zeros > 0 && ++z % zeros == 0)) assert_int_equal(hymo_sparse_push(sp, i, v), 0);
        }
        hymo_sparse_end_column(sp);
    }
}

hymo_reference *test_run_to_file(const hymo_model *m, const hymo_run_options *opt, const char *path,
                                 hymo_run_summary *sum)
{
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_run(m, opt, path, sum, &err) != HYMO_OK) fail_msg("%s: %s", path, err.message);
    hymo_reference *ref = NULL;
    if (hymo_ref_read(path, &ref, &err) != HYMO_OK) fail_msg("%s", err.message);
    remove(path);
    return ref;
}
