/* hymo command-line tool. Exit status: 0 success, 2 bad input (model file,
 * option, unreadable HDF5), 3 the run stopped (non-convergence, non-finite
 * state; the steps done are kept in the output file marked incomplete). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hymo/version.h"
#include "hymo/model.h"
#include "hymo/reference.h"
#include "hymo/sim.h"

#define EXIT_BAD_INPUT 2
int hymo_cli_fmu(int argc, char **argv); /* src/fmu_cli.c */
#define EXIT_RUN_FAILED 3

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
          "  fmu MODEL.yaml --part P -o OUT.fmu  FMI 2.0 co-simulation FMU of a part\n"
          "                             (mechanics, circuit:NAME, whole; docs/fmi.md)\n"
          "\n"
          "Run 'hymo <command> --help' for the options of a command; every option that\n"
          "takes a value may also be written --name=value.\n",
          out);
}

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
          "  --rtol R, --atol A     IDA tolerances (default 1e-8, 1e-10 rad or m; pressures and\n"
          "                         spools scaled by the model's tolerance ratios)\n"
          "  --dt S                 time step (default: model file, simulation.dt)\n"
          "  --t-end S              end time (default: model file, simulation.t_end)\n"
          "  --jacobian numeric|fast  numeric: forward differences every iteration (seed 002);\n"
          "                         fast: approximate analytic Jacobian (M', penalty and\n"
          "                         actuator terms, exact hydraulic rows), rebuilt while moving\n"
          "  --linear-solver dense|klu  dense LU (default; LAPACK above 48 unknowns) or KLU sparse LU\n"
          "  --alpha A              penalty factor (default: model file, 1e11)\n"
          "  --max-iter N           Newton iterations per step before failing (default 20)\n"
          "  --set PATH=VALUE       override one value of the model file, e.g.\n"
          "                         hydraulics.valves[dcv1].flow_coefficient=2e-8 (repeatable;\n"
          "                         recorded in the output, docs/overrides.md)\n"
          "  -o, --output OUT.h5    reference file (written atomically; default: none)\n"
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
          "rows, step count and times agree (docs/hdf5-format.md).\n"
          "exit status: 0 ok, 2 unreadable, damaged or not a hymo file\n",
          out);
}

static int fail(int status, const char *msg)
{
    fprintf(stderr, "hymo: error: %s\n", msg);
    return status;
}

static int parse_double(const char *opt, const char *text, double *out, char *msg, size_t len)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (!text[0] || *end || errno || !isfinite(v)) {
        snprintf(msg, len, "%s: '%s' is not a number", opt, text);
        return 0;
    }
    *out = v;
    return 1;
}

static int cmd_run(int argc, char **argv)
{
    const char *model_path = NULL, *out_path = NULL;
    const char *formulation = NULL, *jacobian = NULL, *solver = NULL;
    double dt = NAN, t_end = NAN, alpha = NAN, rtol = NAN, atol = NAN;
    const char *integrator = NULL, *newton_test = NULL;
    int max_iter = -1, quiet = 0, output_every = 0, progress = -1;
    char msg[HYMO_ERROR_MSG_MAX + 64];
    const char *sets[HYMO_SET_MAX];
    int n_sets = 0;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE                                                                                 \
    do {                                                                                           \
        if (!val) {                                                                                \
            snprintf(msg, sizeof msg, "%s needs a value (see hymo run --help)", a);                \
            return fail(EXIT_BAD_INPUT, msg);                                                      \
        }                                                                                          \
        ++i;                                                                                       \
    } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_run(stdout);
            return 0;
        } else if (!strcmp(a, "--formulation")) {
            NEED_VALUE;
            formulation = val;
        } else if (!strcmp(a, "--output-every")) {
            NEED_VALUE;
            double v;
            if (!parse_double(a, val, &v, msg, sizeof msg)) return fail(EXIT_BAD_INPUT, msg);
            if (!(v >= 1.0) || v != floor(v) || v > 1e9) {
                snprintf(msg, sizeof msg, "--output-every: '%s' is not a whole number of steps >= 1", val);
                return fail(EXIT_BAD_INPUT, msg);
            }
            output_every = (int)v;
        } else if (!strcmp(a, "--newton-test")) {
            NEED_VALUE;
            newton_test = val;
        } else if (!strcmp(a, "--integrator")) {
            NEED_VALUE;
            integrator = val;
        } else if (!strcmp(a, "--rtol")) {
            NEED_VALUE;
            if (!parse_double(a, val, &rtol, msg, sizeof msg)) return fail(EXIT_BAD_INPUT, msg);
        } else if (!strcmp(a, "--atol")) {
            NEED_VALUE;
            if (!parse_double(a, val, &atol, msg, sizeof msg)) return fail(EXIT_BAD_INPUT, msg);
        } else if (!strcmp(a, "--jacobian")) {
            NEED_VALUE;
            jacobian = val;
        } else if (!strcmp(a, "--linear-solver")) {
            NEED_VALUE;
            solver = val;
        } else if (!strcmp(a, "--dt")) {
            NEED_VALUE;
            if (!parse_double(a, val, &dt, msg, sizeof msg)) return fail(EXIT_BAD_INPUT, msg);
        } else if (!strcmp(a, "--t-end")) {
            NEED_VALUE;
            if (!parse_double(a, val, &t_end, msg, sizeof msg)) return fail(EXIT_BAD_INPUT, msg);
        } else if (!strcmp(a, "--alpha")) {
            NEED_VALUE;
            if (!parse_double(a, val, &alpha, msg, sizeof msg)) return fail(EXIT_BAD_INPUT, msg);
        } else if (!strcmp(a, "--max-iter")) {
            NEED_VALUE;
            double v;
            if (!parse_double(a, val, &v, msg, sizeof msg)) return fail(EXIT_BAD_INPUT, msg);
            if (!(v >= 1.0) || v != floor(v) || v > 1e6) {
                snprintf(msg, sizeof msg, "--max-iter: '%s' is not a whole number of iterations in 1 .. 1000000", val);
                return fail(EXIT_BAD_INPUT, msg);
            }
            max_iter = (int)v;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            NEED_VALUE;
            out_path = val;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--progress")) {
            progress = 1;
        } else if (!strcmp(a, "--set")) {
            NEED_VALUE;
            if (n_sets == HYMO_SET_MAX) {
                snprintf(msg, sizeof msg, "--set: more than %d overrides", HYMO_SET_MAX);
                return fail(EXIT_BAD_INPUT, msg);
            }
            sets[n_sets++] = val;
        } else if (a[0] == '-' && a[1]) {
            snprintf(msg, sizeof msg, "unknown option '%s' (see hymo run --help)", a);
            return fail(EXIT_BAD_INPUT, msg);
        } else if (!model_path) {
            model_path = a;
        } else {
            snprintf(msg, sizeof msg, "unexpected argument '%s' (see hymo run --help)", a);
            return fail(EXIT_BAD_INPUT, msg);
        }
#undef NEED_VALUE
    }
    if (!model_path) return fail(EXIT_BAD_INPUT, "run: missing MODEL file (see hymo run --help)");

    hymo_error err;
    hymo_error_clear(&err);
    hymo_model *model = NULL;
    if (hymo_model_load_file_set(model_path, sets, n_sets, &model, &err) != HYMO_OK)
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
        else
            bad = snprintf(msg, sizeof msg, "--linear-solver: '%s' is not dense or klu", solver);
    }
    if (!isnan(dt)) opt.dt = dt;
    if (!isnan(t_end)) opt.t_end = t_end;
    if (!isnan(alpha)) opt.penalty_alpha = alpha;
    if (output_every > 0) opt.output_every = output_every;
    opt.progress = progress >= 0 ? progress : isatty(STDERR_FILENO);
    if (!isnan(rtol)) opt.rtol = rtol;
    if (!isnan(atol)) opt.atol = atol;
    if (max_iter >= 0) opt.max_iter = max_iter;
    if (!bad && hymo_run_options_check(&opt, &err) != HYMO_OK) bad = snprintf(msg, sizeof msg, "%s", err.message);
    if (bad) {
        hymo_model_free(model);
        return fail(EXIT_BAD_INPUT, msg);
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
        if (out_path && (st == HYMO_OK || summary.n_steps > 0)) printf("output       %s\n", out_path);
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
    for (int i = 0; i < argc; ++i) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage_info(stdout);
            return 0;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            char msg[256];
            snprintf(msg, sizeof msg, "unknown option '%s' (see hymo info --help)", argv[i]);
            return fail(EXIT_BAD_INPUT, msg);
        }
        if (path) return fail(EXIT_BAD_INPUT, "info takes exactly one file");
        path = argv[i];
    }
    if (!path) return fail(EXIT_BAD_INPUT, "info: missing OUT.h5 (see hymo info --help)");
    hymo_reference *ref = NULL;
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_ref_read(path, &ref, &err) != HYMO_OK) return fail(EXIT_BAD_INPUT, err.message);
    hymo_run_summary_print(stdout, &ref->summary);
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

/* getopt_long's "--name=value" form for every option of every command:
 * the arguments after the command name are rewritten into "--name" "value"
 * before the command parses them.  An argument that is the value of the
 * option before it (all options but -h/--help and -q/--quiet take one) is
 * never split, so `--configs coupling=...` or `--dt -1` keep their meaning;
 * the flags take no value, so `--quiet=1` is refused like getopt_long does.
 * Returns the new vector (argv[0..1] unchanged; free() it) or NULL after
 * printing an error; *store gets the one buffer holding the names. */
static int takes_no_value(const char *name, size_t len)
{
    static const char *const flags[] = {"--help", "--quiet", "--progress"};
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; ++k)
        if (strlen(flags[k]) == len && !strncmp(name, flags[k], len)) return 1;
    return 0;
}

static char **split_long_options(int argc, char **argv, int *out_argc, char **store)
{
    size_t chars = 1;
    for (int i = 0; i < argc; ++i) chars += strlen(argv[i]) + 1;
    char **out = malloc(((size_t)argc * 2 + 1) * sizeof *out);
    char *buf = malloc(chars), *b = buf;
    if (!out || !buf) {
        free(out);
        free(buf);
        fputs("hymo: error: out of memory\n", stderr);
        return NULL;
    }
    int n = 0, value_next = 0;
    for (int i = 0; i < argc; ++i) {
        char *a = argv[i];
        const char *eq = strchr(a, '=');
        if (i < 2 || value_next || strncmp(a, "--", 2) || !a[2] || !eq) {
            out[n++] = a;
            value_next = i >= 2 && !value_next && a[0] == '-' && a[1] && !takes_no_value(a, strlen(a)) &&
                         strcmp(a, "-h") && strcmp(a, "-q");
            continue;
        }
        size_t len = (size_t)(eq - a);
        if (takes_no_value(a, len)) {
            fprintf(stderr, "hymo: error: option '%.*s' takes no value ('%s')\n", (int)len, a, a);
            free(out);
            free(buf);
            return NULL;
        }
        memcpy(b, a, len);
        b[len] = '\0';
        out[n++] = b;
        b += len + 1;
        out[n++] = (char *)(eq + 1);
        value_next = 0;
    }
    out[n] = NULL;
    *out_argc = n;
    *store = buf;
    return out;
}

static int run_command(int argc, char **argv)
{
    const char *cmd = argv[1];
    if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "info")) return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "compare")) return hymo_cli_compare(argc - 1, argv + 1);
    if (!strcmp(cmd, "cosim")) return hymo_cli_cosim(argc - 1, argv + 1);
    if (!strcmp(cmd, "sweep")) return hymo_cli_sweep(argc - 1, argv + 1);
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
    int n = 0;
    char *names = NULL;
    char **args = split_long_options(argc, argv, &n, &names);
    if (!args) return EXIT_BAD_INPUT;
    int status = run_command(n, args);
    free(args);
    free(names);
    return status;
}
