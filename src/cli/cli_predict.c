#define _POSIX_C_SOURCE 200809L /* mkstemp */
/* `hymo predict`: the achievable H of a grid of co-simulation
 * configurations predicted from the compound matrix along a monolithic
 * reference (hymo/predict.h; docs/cosimulation.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "hymo/predict.h"

static void usage_predict(FILE *out)
{
    fputs("usage: hymo predict MODEL.yaml [--reference REF.h5] [--configs SPEC] [--H LIST] [options]\n"
          "\n"
          "Predicts, for every configuration of a grid, the largest communication step H\n"
          "of the list such that it and every smaller H keep the spectral radius rho of\n"
          "one communication step's compound matrix <= --rho-limit at every point of the\n"
          "reference trajectory.  Prints per configuration the predicted achievable H,\n"
          "the first H predicted unstable with the time rho first exceeds the limit.\n"
          "\n"
          "options:\n"
          "  --reference REF.h5    monolithic reference of the model (default: computed\n"
          "                        with hymo run defaults into a temporary file)\n"
          "  --configs SPEC        grid as for hymo sweep (default: sweep's default grid)\n"
          "  --H LIST              communication steps (default: sweep's list); h_m = H\n"
          "  --points N            trajectory points (default 20), at t = (j + 1/2) t_end / N\n"
          "  --eps E               relative finite-difference step (default 1e-6)\n"
          "  --rho-limit R         growth while rho > R (default 1.03)\n"
          "  --sustain K           predicted unstable where rho > R at K consecutive points\n"
          "                        (default 2: a single point is a transient)\n"
          "  --set PATH=VALUE      override one value of the model file (repeatable)\n"
          "  --hh, --t-end, --mech-inputs, --formulation, --jacobian, --scheme, --coupling,\n"
          "  --extrapolation, --hyd-integrator, --mech-integrator  as for hymo cosim (the\n"
          "                        value of a key that --configs omits)\n"
          "  --rho-table FILE      write rho(t) of every configuration and evaluated H\n"
          "                        (CSV: configuration, H, t, rho; all points of each H)\n"
          "  -o, --output TABLE    also write TABLE.csv (one row per configuration and H)\n"
          "                        and TABLE_achievable.csv\n"
          "  -q, --quiet           no table on stdout\n",
          out);
}

static double cpu_seconds(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* The reference: read from path, or computed into a temporary file. */
static int load_reference(const hymo_model *model, const hymo_cosim_options *base, const char *path,
                          hymo_reference **ref)
{
    hymo_error err;
    char tmp[64] = "";
    if (!path) {
        snprintf(tmp, sizeof tmp, "/tmp/hymo_predict_XXXXXX");
        const int fd = mkstemp(tmp);
        if (fd < 0) {
            fprintf(stderr, "hymo: error: predict: cannot create a temporary reference file\n");
            return EXIT_BAD_INPUT;
        }
        close(fd);
        hymo_run_options ro;
        hymo_run_options_default(&ro, model);
        ro.t_end = base->mech.t_end;
        hymo_run_summary rs;
        if (hymo_run(model, &ro, tmp, &rs, &err) != HYMO_OK) {
            fprintf(stderr, "hymo: error: reference run: %s\n", err.message);
            unlink(tmp);
            return EXIT_RUN_FAILED;
        }
        path = tmp;
    }
    hymo_status st = hymo_ref_read(path, ref, &err);
    if (st == HYMO_OK) st = hymo_ref_validate(*ref, path, &err);
    if (tmp[0]) unlink(tmp);
    if (st != HYMO_OK) {
        fprintf(stderr, "hymo: error: %s\n", err.message);
        return EXIT_BAD_INPUT;
    }
    return -1;
}

static FILE *open_table(const char *base, const char *suffix)
{
    char path[1200];
    snprintf(path, sizeof path, "%s%s", base, suffix);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "hymo: error: predict: cannot write %s\n", path);
    return f;
}

int hymo_cli_predict(int argc, char **argv)
{
    const char *model_path = NULL, *ref_path = NULL, *h_list = NULL, *table = NULL, *rho_path = NULL;
    const char *configs = "coupling=velocity-force,velocity-pressure;extrapolation=0,2,interface-model;"
                          "hyd=euler,rk4,trapezoidal;mech=trapezoidal,index1;scheme=jacobi";
    double points = 20, eps = 1e-6, rho_limit = 1.03, sustain = 2;
    int quiet = 0, n_pos = 0, status = EXIT_BAD_INPUT;
    hymo_cli_list set_opts = {0}, cosim_opts = {0};
    const hymo_cli_option opts[] = {
        {"--H", 0, hymo_cli_str, &h_list},
        {"--configs", 0, hymo_cli_str, &configs},
        HYMO_CLI_COSIM_OPTIONS(&cosim_opts),
        {"--reference", 0, hymo_cli_str, &ref_path},
        {"--points", 0, hymo_cli_positive, &points},
        {"--eps", 0, hymo_cli_positive, &eps},
        {"--rho-limit", 0, hymo_cli_positive, &rho_limit},
        {"--sustain", 0, hymo_cli_positive, &sustain},
        {"--set", 0, hymo_cli_append, &set_opts},
        {"--output", 'o', hymo_cli_str, &table},
        {"--rho-table", 0, hymo_cli_str, &rho_path},
        {"--quiet", 'q', NULL, &quiet},
        {NULL, 0, NULL, NULL},
    };
    int r0 = hymo_cli_parse(argc, argv, opts, usage_predict, &model_path, 1, &n_pos);
    if (r0 >= 0) return r0;
    if (points != floor(points) || points > 100000 || sustain != floor(sustain) || sustain > points) {
        fprintf(stderr, "hymo: error: %s: %g is not a whole number of at most %g\n",
                points != floor(points) || points > 100000 ? "--points" : "--sustain",
                points != floor(points) || points > 100000 ? points : sustain,
                points != floor(points) || points > 100000 ? 100000.0 : points);
        return EXIT_BAD_INPUT;
    }
    hymo_model *model = NULL;
    hymo_reference *ref = NULL;
    FILE *fh = NULL, *fa = NULL, *fr = NULL;
    double *rt = NULL, *rr = NULL;
    r0 = hymo_cli_load("predict", model_path, &set_opts, &model);
    if (r0 >= 0) return r0;
    hymo_cosim_options base;
    hymo_cosim_options_default(&base, model);
    double Hs[HYMO_CLI_LIST_MAX];
    int nH = 0;
    hymo_cli_grid g = {{1, 1, 1, 1, 1, 1},
                       {{base.coupling}, {base.approx}, {base.hyd_integrator}, {base.mech_integrator}, {base.scheme},
                        {base.mech_inputs}}};
    if (hymo_cli_cosim_apply(&cosim_opts, &base) || hymo_cli_parse_h_list(h_list, Hs, &nH)) goto done;
    g.v[0][0] = base.coupling, g.v[1][0] = base.approx, g.v[2][0] = base.hyd_integrator;
    g.v[3][0] = base.mech_integrator, g.v[4][0] = base.scheme, g.v[5][0] = base.mech_inputs;
    if (hymo_cli_parse_grid(configs, &g)) goto done;
    r0 = load_reference(model, &base, ref_path, &ref);
    if (r0 >= 0) {
        status = r0;
        goto done;
    }
    if (strcmp(ref->model_name, model->name) != 0) {
        fprintf(stderr, "hymo: error: predict: the reference is of model '%s', not '%s'\n", ref->model_name,
                model->name);
        goto done;
    }
    if (table && (!(fh = open_table(table, ".csv")) || !(fa = open_table(table, "_achievable.csv")))) goto done;
    static const char *const head = "coupling,extrapolation,hyd_integrator,mech_integrator,scheme,mech_inputs";
    if (rho_path && !(fr = open_table(rho_path, ""))) goto done;
    if (fr) fprintf(fr, "%s,H,t,rho\n", head);
    if (fr && (!(rt = calloc((size_t)points, sizeof *rt)) || !(rr = calloc((size_t)points, sizeof *rr)))) {
        fprintf(stderr, "hymo: error: predict: out of memory\n");
        goto done;
    }
    if (fh) fprintf(fh, "%s,H,evaluated,stable,rho_max,t_rho_max,t_first,n_points\n", head);
    if (fa) fprintf(fa, "%s,achievable_H,first_unstable_H,t_first,cpu_time\n", head);
    hymo_predict_options po;
    hymo_predict_options_default(&po);
    po.points = (int)points, po.eps = eps, po.rho_limit = rho_limit, po.sustain = (int)sustain;
    if (!quiet)
        printf("predict %s: reference %d rows to t = %g s, %d points, eps %g, unstable where rho > %g at %d "
               "consecutive points\n",
               model->name, ref->n, ref->time[ref->n - 1], po.points, po.eps, po.rho_limit, po.sustain);
    hymo_predict_step steps[HYMO_CLI_LIST_MAX];
    const double cpu0 = cpu_seconds();
    status = EXIT_PASS;
    for (int i0 = 0; i0 < g.n[0]; ++i0)
        for (int i1 = 0; i1 < g.n[1]; ++i1)
            for (int i2 = 0; i2 < g.n[2]; ++i2)
                for (int i3 = 0; i3 < g.n[3]; ++i3)
                    for (int i4 = 0; i4 < g.n[4]; ++i4)
                        for (int i5 = 0; i5 < g.n[5]; ++i5) {
                            hymo_cosim_options o = base;
                            o.coupling = g.v[0][i0], o.approx = g.v[1][i1], o.hyd_integrator = g.v[2][i2];
                            o.mech_integrator = g.v[3][i3], o.scheme = g.v[4][i4], o.mech_inputs = g.v[5][i5];
                            char label[256];
                            snprintf(label, sizeof label, "%s,%s,%s,%s,%s,%s", hymo_coupling_name(o.coupling),
                                     hymo_approx_name(o.approx), hymo_hyd_integrator_name(o.hyd_integrator),
                                     hymo_mech_integrator_name(o.mech_integrator), hymo_cosim_scheme_name(o.scheme),
                                     hymo_mech_inputs_name(o.mech_inputs));
                            double ach = 0.0;
                            hymo_error err;
                            const double c0 = cpu_seconds();
                            if (hymo_predict_achievable(model, &o, ref, Hs, nH, &po, steps, &ach, &err) != HYMO_OK) {
                                fprintf(stderr, "hymo: error: predict %s: %s\n", label, err.message);
                                status = EXIT_BAD_INPUT;
                                goto done;
                            }
                            const double c1 = cpu_seconds();
                            const hymo_predict_step *bad = NULL;
                            for (int h = 0; h < nH && !bad; ++h)
                                if (steps[h].evaluated && !steps[h].stable) bad = &steps[h];
                            if (!quiet) {
                                printf("%-66s achievable H %g ms", label, 1e3 * ach);
                                if (bad)
                                    printf("; H %g ms: rho %.3g > %g from t = %g s", 1e3 * bad->H, bad->rho_max,
                                           po.rho_limit, bad->t_first);
                                printf("\n");
                            }
                            for (int h = 0; fh && h < nH; ++h)
                                fprintf(fh, "%s,%g,%d,%d,%.6g,%.6g,%.6g,%d\n", label, steps[h].H, steps[h].evaluated,
                                        steps[h].stable, steps[h].rho_max, steps[h].t_rho_max, steps[h].t_first,
                                        steps[h].n_points);
                            for (int h = 0; fr && h < nH && steps[h].evaluated; ++h) {
                                hymo_cosim_options oh = o;
                                oh.H = oh.mech.dt = Hs[h];
                                int n = 0;
                                if (hymo_predict_rho(model, &oh, ref, &po, 0.0, rt, rr, &n, &err) != HYMO_OK) {
                                    fprintf(stderr, "hymo: error: predict %s: %s\n", label, err.message);
                                    status = EXIT_BAD_INPUT;
                                    goto done;
                                }
                                for (int j = 0; j < n; ++j) fprintf(fr, "%s,%g,%.6g,%.8g\n", label, Hs[h], rt[j], rr[j]);
                            }
                            if (fa)
                                fprintf(fa, "%s,%g,%g,%.6g,%.4g\n", label, ach, bad ? bad->H : NAN,
                                        bad ? bad->t_first : NAN, c1 - c0);
                        }
    if (!quiet) printf("predict: CPU time %.3f s\n", cpu_seconds() - cpu0);
done:
    if (fh && fclose(fh)) status = EXIT_BAD_INPUT;
    if (fa && fclose(fa)) status = EXIT_BAD_INPUT;
    if (fr && fclose(fr)) status = EXIT_BAD_INPUT;
    free(rt);
    free(rr);
    hymo_ref_free(ref);
    hymo_model_free(model);
    return status;
}
