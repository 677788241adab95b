/* hymo command-line tool. Exit status: 0 success, 2 bad input (model file,
 * option, unreadable HDF5), 3 the run stopped (non-convergence, non-finite
 * state; the steps done are kept in the output file marked incomplete). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli.h"
#include "hymo/version.h"
#include "hymo/model.h"
#include "hymo/reference.h"
#include "hymo/sim.h"

static void usage_main(FILE *out)
{
    fputs("usage: hymo <command> [options]\n"
          "\n"
          "Monolithic reference solutions for hydraulically actuated multibody systems.\n"
          "\n"
          "commands:\n"
          "  run MODEL.yaml [options]   integrate a model, print the summary, write HDF5\n"
          "  info OUT.h5                print the summary stored in a reference file\n"
          "  compare REF.h5 RUN.h5 [thresholds]  errors of a run against a reference; exit 1\n"
          "                             if a threshold fails (regression gate)\n"
          "  cosim MODEL.yaml --H S --hh S [options]  split-mode co-simulation\n"
          "  sweep MODEL.yaml [--H list] [--configs ...] -o TABLE  grid of co-simulations,\n"
          "                             achievable communication step per configuration\n"
          "  predict MODEL.yaml [--reference REF.h5] [--configs ...]  achievable communication\n"
          "                             step predicted from the compound matrix (no runs)\n"
          "  fmu MODEL.yaml --part P -o OUT.fmu  FMI 2.0 co-simulation FMU of a part\n"
          "                             (mechanics, circuit:NAME, whole; docs/fmi.md)\n"
          "\n"
          "Run 'hymo <command> --help' for the options of a command; every option that\n"
          "takes a value may also be written --name=value; -- ends the options.\n",
          out);
}

/* What makes a run's file smaller (hymo_cli_output_budget). */
#define RUN_FEWER_ROWS "fewer rows with --output-every N or --output-interval S, or a shorter --t-end"

static void usage_run(FILE *out)
{
    fputs("usage: hymo run MODEL.yaml [options]\n"
          "\n"
          "Integrates the model with the trapezoidal Newton-Raphson engine (positions,\n"
          "pressures and spool positions in one unknown vector) and writes an HDF5\n"
          "reference trajectory (docs/hdf5-format.md).\n"
          "\n"
          "options:\n"
          "  --formulation double-step|penalty   multibody formulation (default double-step)\n"
          "  --integrator trapezoidal|ida   trapezoidal Newton engine (default) or SUNDIALS IDA\n"
          "                         (double-step as an ODE, error control, output on the dt grid)\n"
          "  --newton-test contractive|seed  Newton stopping test: contractive (default; rate-based,\n"
          "                         see README) or seed (increments within the tolerances, seed 002)\n"
          "  --output-every N       write every N-th step to the file (and the last; default 1)\n"
          "  --output-interval S    the same as a time: every S seconds (a multiple of dt to 1e-9)\n"
          "  --rtol R, --atol A     IDA tolerances (default 1e-8, 1e-10 rad or m; pressures and\n"
          "                         spools scaled by the model's tolerance ratios)\n"
          "  --dt S                 time step (default: model file, simulation.dt)\n"
          "  --t-end S              end time (default: model file, simulation.t_end)\n"
          "  --jacobian numeric|fast  numeric: forward differences every iteration (seed 002);\n"
          "                         fast: approximate analytic Jacobian (M', penalty and\n"
          "                         actuator terms, exact hydraulic rows), rebuilt while moving\n"
          "  --linear-solver auto|dense|klu  dense LU (LAPACK above 800 unknowns), KLU sparse LU,\n"
          "                         or auto (default): KLU where its O(n) tree path applies (an\n"
          "                         open chain of >= 16 joints, fast Jacobian), else dense\n"
          "  --alpha A              penalty factor as given (default: model file; 1e11, or in\n"
          "                         format 2 scaled with the masses, docs/model-format.md)\n"
          "  --reselect-threshold R  double-step: re-select the independent coordinates when the\n"
          "                         current pivots fall below R x the best (0 < R <= 1; default:\n"
          "                         model file, else 0.1)\n"
          "  --max-iter N           Newton iterations per step before failing (default 20)\n"
          "  --set PATH=VALUE       override one value of the model file, e.g.\n"
          "                         hydraulics.valves[dcv1].flow_coefficient=2e-8 (repeatable;\n"
          "                         recorded in the output, docs/overrides.md)\n"
          "  -o, --output OUT.h5    reference file (written atomically; default: none)\n"
          "  --max-output-size SIZE refuse a run whose file would be larger (estimated before the\n"
          "                         first step; suffix k, M, G, T; 0: no limit; default 10G); a file\n"
          "                         larger than the free space is always refused\n"
          "  --no-estimate          with -o: no error-estimate companion runs (the file records\n"
          "                         why it has no /accuracy)\n"
          "  -q, --quiet            no summary on stdout\n"
          "  --progress             a progress line on stderr for runs longer than 2 s (default:\n"
          "                         only when stderr is a terminal)\n"
          "  -h, --help             this text\n"
          "\n"
          "exit status: 0 ok, 2 bad input, 3 the run stopped (file kept, complete = 0)\n",
          out);
}

static void usage_info(FILE *out)
{
    fputs("usage: hymo info OUT.h5\n"
          "\n"
          "Prints the run summary stored in a hymo reference file and checks that its\n"
          "rows, step count and times agree (docs/hdf5-format.md); every stored value is\n"
          "checked against its checksum.  The read may take HYMO_READ_TIMEOUT seconds\n"
          "(environment, default 60).\n"
          "exit status: 0 ok, 2 unreadable, damaged or not a hymo file\n",
          out);
}

static int fail(int status, const char *msg)
{
    fprintf(stderr, "hymo: error: %s\n", msg);
    return status;
}

/* --output-every N: a whole number of steps >= 1 (int *). */
static int output_every_option(const char *name, const char *value, void *dest)
{
    double v;
    if (hymo_cli_num(name, value, &v)) return -1;
    if (!(v >= 1.0) || v != floor(v) || v > 1e9) {
        fprintf(stderr, "hymo: error: %s: '%s' is not a whole number of steps >= 1\n", name, value);
        return -1;
    }
    *(int *)dest = (int)v;
    return 0;
}

/* --max-iter N: 1 .. 1000000 (int *). */
static int max_iter_option(const char *name, const char *value, void *dest)
{
    double v;
    if (hymo_cli_num(name, value, &v)) return -1;
    if (!(v >= 1.0) || v != floor(v) || v > 1e6) {
        fprintf(stderr, "hymo: error: %s: '%s' is not a whole number of iterations in 1 .. 1000000\n", name, value);
        return -1;
    }
    *(int *)dest = (int)v;
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    const char *model_path = NULL, *out_path = NULL;
    const char *formulation = NULL, *jacobian = NULL, *solver = NULL;
    double dt = NAN, t_end = NAN, alpha = NAN, rtol = NAN, atol = NAN, reselect = NAN;
    const char *integrator = NULL, *newton_test = NULL;
    int max_iter = -1, quiet = 0, output_every = 0, progress = -1, no_estimate = 0, n_pos = 0;
    double output_interval = NAN, max_output = HYMO_CLI_MAX_OUTPUT_DEFAULT;
    char msg[HYMO_ERROR_MSG_MAX + 64];
    hymo_cli_list set_opts = {0};
    const hymo_cli_option opts[] = {
        {"--formulation", 0, hymo_cli_str, &formulation},
        {"--integrator", 0, hymo_cli_str, &integrator},
        {"--newton-test", 0, hymo_cli_str, &newton_test},
        {"--jacobian", 0, hymo_cli_str, &jacobian},
        {"--linear-solver", 0, hymo_cli_str, &solver},
        {"--dt", 0, hymo_cli_num, &dt},
        {"--t-end", 0, hymo_cli_num, &t_end},
        {"--rtol", 0, hymo_cli_num, &rtol},
        {"--atol", 0, hymo_cli_num, &atol},
        {"--alpha", 0, hymo_cli_num, &alpha},
        {"--reselect-threshold", 0, hymo_cli_num, &reselect},
        {"--max-iter", 0, max_iter_option, &max_iter},
        {"--output-every", 0, output_every_option, &output_every},
        {"--output-interval", 0, hymo_cli_num, &output_interval},
        {"--set", 0, hymo_cli_append, &set_opts},
        {"--output", 'o', hymo_cli_str, &out_path},
        {"--max-output-size", 0, hymo_cli_size, &max_output},
        {"--quiet", 'q', NULL, &quiet},
        {"--progress", 0, NULL, &progress},
        {"--no-estimate", 0, NULL, &no_estimate},
        {NULL, 0, NULL, NULL},
    };
    int r0 = hymo_cli_parse(argc, argv, opts, usage_run, &model_path, 1, &n_pos);
    if (r0 >= 0) return r0;
    const char *const *sets = set_opts.value;
    const int n_sets = set_opts.n;
    if (!model_path) return fail(EXIT_BAD_INPUT, "run: missing MODEL file (see hymo run --help)");
    if (out_path) { /* before anything is read or computed */
        const char *inputs[1] = {model_path};
        r0 = hymo_cli_outputs_check(NULL, &out_path, 1, inputs, 1);
        if (r0 >= 0) return r0;
    }

#if defined(__GLIBC__)
    /* Blocks of 64 KiB and more get their own pages, returned to the system
     * when freed: the loader's document and lookups do not stay resident
     * under the run (glibc otherwise raises this threshold as large blocks
     * are freed and keeps them in its heap). */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
#endif
    hymo_error err;
    hymo_error_clear(&err);
    hymo_model *model = NULL;
    /* without an output file nothing reads the model's text after parsing */
    if (hymo_model_load_file_flags(model_path, sets, n_sets, out_path ? 0 : HYMO_LOAD_NO_SOURCE, &model, &err) !=
        HYMO_OK)
        return fail(EXIT_BAD_INPUT, err.message);
    hymo_run_options opt;
    hymo_run_options_default(&opt, model);
    int bad = 0;
    if (formulation) {
        if (!strcmp(formulation, "double-step"))
            opt.formulation = HYMO_FORMULATION_DOUBLE_STEP;
        else if (!strcmp(formulation, "penalty"))
            opt.formulation = HYMO_FORMULATION_PENALTY;
        else
            bad = snprintf(msg, sizeof msg, "--formulation: '%s' is not double-step or penalty", formulation);
    }
    if (!bad && newton_test) {
        if (!strcmp(newton_test, "seed"))
            opt.newton_test = HYMO_NEWTON_SEED;
        else if (!strcmp(newton_test, "contractive"))
            opt.newton_test = HYMO_NEWTON_CONTRACTIVE;
        else
            bad = snprintf(msg, sizeof msg, "--newton-test: '%s' is not seed or contractive", newton_test);
    }
    if (!bad && integrator) {
        if (!strcmp(integrator, "trapezoidal"))
            opt.integrator = HYMO_INTEGRATOR_TRAPEZOIDAL;
        else if (!strcmp(integrator, "ida"))
            opt.integrator = HYMO_INTEGRATOR_IDA;
        else
            bad = snprintf(msg, sizeof msg, "--integrator: '%s' is not trapezoidal or ida", integrator);
    }
    if (!bad && jacobian) {
        if (!strcmp(jacobian, "numeric"))
            opt.jacobian = HYMO_JACOBIAN_NUMERIC;
        else if (!strcmp(jacobian, "fast"))
            opt.jacobian = HYMO_JACOBIAN_FAST;
        else
            bad = snprintf(msg, sizeof msg, "--jacobian: '%s' is not numeric or fast", jacobian);
    }
    if (!bad && solver) {
        if (!strcmp(solver, "dense"))
            opt.linear_solver = HYMO_LINSOL_DENSE;
        else if (!strcmp(solver, "klu"))
            opt.linear_solver = HYMO_LINSOL_KLU;
        else if (!strcmp(solver, "auto"))
            opt.linear_solver = HYMO_LINSOL_AUTO;
        else
            bad = snprintf(msg, sizeof msg, "--linear-solver: '%s' is not auto, dense or klu", solver);
    }
    if (!isnan(dt)) opt.dt = dt;
    if (!isnan(t_end)) opt.t_end = t_end;
    if (!isnan(alpha)) opt.penalty_alpha = alpha, opt.penalty_alpha_auto = 0; /* as given */
    if (!bad && !isnan(reselect)) {
        if (reselect > 0.0 && reselect <= 1.0)
            opt.reselect_ratio = reselect;
        else
            bad = snprintf(msg, sizeof msg, "--reselect-threshold: %g is not in (0, 1] (a pivot ratio)", reselect);
    }
    if (output_every > 0) opt.output_every = output_every;
    if (!bad && !isnan(output_interval)) {
        if (output_every > 0)
            bad = snprintf(msg, sizeof msg, "--output-every and --output-interval: give one of them, not both");
        else if (hymo_output_every_from_interval(output_interval, opt.dt, &opt.output_every, &err) != HYMO_OK)
            bad = snprintf(msg, sizeof msg, "--output-interval: %s", err.message);
    }
    opt.progress = progress >= 0 ? progress : isatty(STDERR_FILENO);
    if (!isnan(rtol)) opt.rtol = rtol;
    if (!isnan(atol)) opt.atol = atol;
    if (max_iter >= 0) opt.max_iter = max_iter;
    if (no_estimate) opt.error_estimate = 0;
    if (!bad && hymo_run_options_check(&opt, &err) != HYMO_OK) bad = snprintf(msg, sizeof msg, "%s", err.message);
    if (bad) {
        hymo_model_free(model);
        return fail(EXIT_BAD_INPUT, msg);
    }
    if (out_path) { /* the file's size against the limit and the free space, before the first step */
        double bytes = 0.0, seconds = -1.0;
        if (hymo_run_estimate(model, &opt, 1, 0, &bytes, NULL, &err) == HYMO_OK &&
            hymo_cli_output_budget("run", out_path, bytes, NULL, max_output, RUN_FEWER_ROWS) >= 0) {
            hymo_run_estimate(model, &opt, 1, 1, NULL, &seconds, &err); /* refused: its time too */
            const int code = hymo_cli_output_budget("run", out_path, bytes, &seconds, max_output, RUN_FEWER_ROWS);
            hymo_model_free(model);
            return code;
        }
    }
    hymo_run_summary summary;
    memset(&summary, 0, sizeof summary);
    hymo_status st = hymo_run(model, &opt, out_path, &summary, &err);
    hymo_model_free(model);
    if (st != HYMO_OK && summary.n_steps == 0 && st != HYMO_ERR_CONVERGENCE && st != HYMO_ERR_NUMERIC)
        return fail(EXIT_BAD_INPUT, err.message);
    if (!quiet) {
        hymo_run_summary_print(stdout, &summary);
        hymo_cli_print_overrides(stdout, sets, n_sets);
        if (out_path && (st == HYMO_OK || summary.n_steps > 0)) {
            const long k = opt.output_every, n = summary.n_steps;
            printf("output       %s (%ld rows", out_path, n / k + 1 + (n % k != 0));
            if (k > 1) printf(": every %ld steps = %.6g s, and the last", k, k * opt.dt);
            printf(")\n");
        }
    }
    if (st != HYMO_OK) {
        int code = (st == HYMO_ERR_CONVERGENCE || st == HYMO_ERR_NUMERIC) ? EXIT_RUN_FAILED : EXIT_BAD_INPUT;
        return fail(code, err.message);
    }
    return 0;
}

static int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    int n_pos = 0;
    const hymo_cli_option opts[] = {{NULL, 0, NULL, NULL}};
    int r0 = hymo_cli_parse(argc, argv, opts, usage_info, &path, 1, &n_pos);
    if (r0 >= 0) return r0;
    if (!path) return fail(EXIT_BAD_INPUT, "info: missing OUT.h5 (see hymo info --help)");
    hymo_reference *ref = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    hymo_cli_read_budget(path);
    const hymo_status rst = hymo_ref_read(path, &ref, &err);
    hymo_cli_read_budget(NULL);
    if (rst != HYMO_OK) return fail(EXIT_BAD_INPUT, err.message);
    hymo_run_summary_print(stdout, &ref->summary);
    printf("%-12s %d", "rows", ref->n);
    if (ref->output_every > 1)
        printf(" (every %d steps = %.6g s, and the last)", ref->output_every, ref->output_every * ref->dt);
    printf("\n");
    printf("%-12s %s\n", "data", ref->data_checksums ? "every stored value matches its checksum (Fletcher32)"
                                                     : "no checksums (a file of an older hymo)");
    if (!ref->complete && (ref->live || !ref->has_summary)) /* being written, or its writer was killed */
        printf("%-12s %s: t = %.6g s of %g s so far, %d rows\n", "status",
               ref->live ? "RUNNING (being written by a live hymo)"
                         : "INTERRUPTED (its writer stopped without closing it)",
               ref->n > 0 ? ref->time[ref->n - 1] : 0.0, ref->t_end, ref->n);
    if (ref->overrides) {
        /* one line per override */
        for (const char *o = ref->overrides, *e; *o; o = *e ? e + 1 : e) {
            e = strchr(o, '\n');
            if (!e) e = o + strlen(o);
            printf("%-12s %.*s\n", o == ref->overrides ? "overrides" : "", (int)(e - o), o);
        }
    }
    /* a file whose rows, steps and times disagree is damaged: said, exit 2 */
    hymo_status st = hymo_ref_validate(ref, path, &err);
    hymo_ref_free(ref);
    if (st != HYMO_OK) return fail(EXIT_BAD_INPUT, err.message);
    return 0;
}

static int run_command(int argc, char **argv)
{
    const char *cmd = argv[1];
    if (!strcmp(cmd, "run")) return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare")) return hymo_cli_compare(argc - 1, argv + 1);
    if (!strcmp(cmd, "cosim")) return hymo_cli_cosim(argc - 1, argv + 1);
    if (!strcmp(cmd, "sweep")) return hymo_cli_sweep_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "predict")) return hymo_cli_predict(argc - 1, argv + 1);
    if (!strcmp(cmd, "fmu")) return hymo_cli_fmu(argc - 1, argv + 1);
    fprintf(stderr, "hymo: error: unknown command '%s'\n", cmd);
    usage_main(stderr);
    return EXIT_BAD_INPUT;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage_main(stderr);
        return EXIT_BAD_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage_main(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("hymo %s\n", hymo_version());
        return 0;
    }
    return run_command(argc, argv);
}
