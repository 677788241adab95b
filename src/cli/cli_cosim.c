/* `hymo cosim`: one split-mode co-simulation (docs/cosimulation.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "hymo/cosim.h"
#include "hymo/fmu.h"

/* What makes a co-simulation's file smaller (hymo_cli_output_budget). */
#define COSIM_FEWER_ROWS "fewer rows with a larger --H, or a shorter --t-end"

static void usage_cosim(FILE *out)
{
    fputs("usage: hymo cosim MODEL.yaml --H S --hh S [options] [-o OUT.h5]\n"
          "       hymo cosim SYSTEM.yaml|SYSTEM.ssp [-o OUT.h5] [--reference REF.h5] [--t-end S] [verdict options]\n"
          "\n"
          "A SYSTEM.yaml (top-level subsystems: and connections:) couples FMI 2.0\n"
          "co-simulation FMUs wired by variable names (docs/cosimulation.md, \"System\n"
          "files\"; docs/fmi.md); H, scheme and extrapolation come from the file, and\n"
          "only -o, --reference, --t-end, -q and the verdict options below apply.\n"
          "A SYSTEM.ssp is the same as an SSP 1.0 archive (SystemStructure.ssd and its\n"
          "FMUs; docs/cosimulation.md, \"SSP files\").\n"
          "\n"
          "Split-mode co-simulation: the model is split at every cylinder and hydraulic\n"
          "motor into one mechanical subsystem and one hydraulic subsystem per circuit,\n"
          "coupled by a non-iterative master with communication step H (SPEC §7).\n"
          "\n"
          "options:\n"
          "  --H S                 communication step (default 1e-3)\n"
          "  --hh S                hydraulic internal step; H/hh must be an integer (default 1e-4)\n"
          "  --hm S                mechanical step; H/hm must be an integer (default H)\n"
          "  --scheme jacobi|gauss-seidel|gauss-seidel-mech-first|gauss-seidel-hyd-first\n"
          "  --coupling velocity-force|velocity-pressure|tlm      (default velocity-pressure)\n"
          "  --extrapolation 0|1|2|3|quadratic|interface-model     (default 2)\n"
          "  --hyd-integrator euler|rk4|trapezoidal               (default rk4)\n"
          "  --mech-integrator trapezoidal|index1                 (default trapezoidal)\n"
          "  --formulation double-step|penalty  of the trapezoidal mechanics (default double-step)\n"
          "  --jacobian numeric|fast            of the trapezoidal mechanics (default fast)\n"
          "  --mech-inputs extrapolate|hold  the mechanics' inputs between communication\n"
          "                        points: extrapolated like the hydraulics' (default) or held\n"
          "                        (seed 000)\n"
          "  --t-end S             end time, a multiple of H (default: model file)\n"
          "  --iterate N           iterative coupling: retake each communication step from\n"
          "                        the saved states until the coupling variables converge,\n"
          "                        at most N retakes (default 0: non-iterative; also for\n"
          "                        system files of FMUs that can get and set their state)\n"
          "  --iterate-tol RTOL[,ATOL]  converged when max |r_i| / (ATOL + RTOL S_i) <= 1\n"
          "                        (r_i the change of coupling variable i, S_i its largest\n"
          "                        |value| so far; default 1e-6,1e-12)\n"
          "  --iterate-accel iqn-ils|aitken|none  acceleration (default iqn-ils)\n"
          "\n"
          "communication-step control (docs/cosimulation.md, \"Energy-controlled\n"
          "communication steps\"; also keys H_control, tol_energy, H_min, H_max,\n"
          "output_dt of a system file):\n"
          "  --H-control fixed|energy  energy: H follows the power bonds' residual energy\n"
          "                        (PI controller; a step over the tolerance is rejected and\n"
          "                        retaken from saved states); --H is the first step\n"
          "  --tol-energy RTOL,ATOL  per step, every bond: |residual energy| <=\n"
          "                        RTOL x the energy it transferred + ATOL J (default 1e-2,1e-3)\n"
          "  --H-min S             every H is a multiple of it, >= it (default hm; without\n"
          "                        --hm, hm = H-min)\n"
          "  --H-max S             largest H (default 20 H, at most t-end)\n"
          "  --output-dt S         the steps also land on every multiple of S (0: none)\n"
          "\n"
          "verdict (docs/cosimulation.md, \"Verdicts\"): W = cumulative |actuator work|\n"
          "  --unstable-ratio R    unstable when |residual energy| exceeds R W + floor at any\n"
          "                        time, or residual energy or energy-balance error changed\n"
          "                        by more than R dW + floor over the last quarter (default 0.1)\n"
          "  --unstable-balance-ratio R  unstable when |energy-balance error| exceeds\n"
          "                        R W + floor at any time (default 0.5)\n"
          "  --unstable-floor J    the floor (default 1)\n"
          "  --unstable-energy J   unstable at once when |residual energy| exceeds J\n"
          "                        (default 1e6)\n"
          "  --reference REF.h5    monolithic reference of the same model: print the errors\n"
          "  --max-rms SIGNAL=V    inaccurate when the RMS error of a component of SIGNAL\n"
          "                        (z zd s sd p U force) exceeds V (repeatable)\n"
          "  --max-abs SIGNAL=V    the same for the largest absolute error\n"
          "  --max-residual-energy J  inaccurate when max |residual energy| exceeds J\n"
          "                        With --reference and none of these three: the sweep's\n"
          "                        defaults --max-rms s=1e-3 --max-abs p=1e6\n"
          "                        --max-residual-energy 50.\n"
          "  --max-balance-jump R  inaccurate when the energy-balance error (less the\n"
          "                        reference's) changes by more than R dW + floor within\n"
          "                        any --balance-window (default 1 s), with or without a\n"
          "                        reference (default 0.05; 0: not checked)\n"
          "  --set PATH=VALUE      override one value of the model file (repeatable;\n"
          "                        recorded in the output, docs/overrides.md)\n"
          "  -o, --output OUT.h5   result (SPEC §8 layout + /cosim group; atomic)\n"
          "  --max-output-size SIZE refuse a co-simulation whose file would be larger\n"
          "                        (estimated before the first step; suffix k, M, G, T; 0: no\n"
          "                        limit; default 10G); a file larger than the free space is\n"
          "                        always refused\n"
          "  -q, --quiet           no summary on stdout\n"
          "\n"
          "exit status: 0 stable (or accurate), 1 inaccurate (a threshold fails, as in\n"
          "hymo compare), 2 bad input, 3 unstable (file kept, complete = 0)\n",
          out);
}

int hymo_cli_cosim_thresholds_given(const hymo_cosim_options *o)
{
    int any = o->max_residual_energy > 0.0;
    for (int k = 0; k < HYMO_CMP_SIGNALS; ++k) any = any || o->max_rms[k] > 0.0 || o->max_abs[k] > 0.0;
    return any;
}

/* hymo_cosim_option with its error on stderr. */
int hymo_cli_cosim_option(const char *name, const char *value, hymo_cosim_options *o)
{
    hymo_error err;
    hymo_error_clear(&err);
    const int r = hymo_cosim_option(name, value, o, &err);
    if (r < 0) fprintf(stderr, "hymo: error: %s\n", err.message);
    return r;
}

int hymo_cli_cosim_apply(const hymo_cli_list *list, hymo_cosim_options *o)
{
    for (int k = 0; k < list->n; ++k) {
        const int r = hymo_cli_cosim_option(list->name[k], list->value[k], o);
        if (r < 0) return -1;
        if (r == 0) { /* a table entry without a case in hymo_cli_cosim_option */
            fprintf(stderr, "hymo: error: %s: not a co-simulation option\n", list->name[k]);
            return -1;
        }
    }
    return 0;
}

/* The steps both forms of hymo cosim share (a model file, a system file). */

/* With a reference and no threshold given: the sweep's defaults. */
static void default_thresholds(hymo_cosim_options *o, const char *ref_path)
{
    if (ref_path && !hymo_cli_cosim_thresholds_given(o)) {
        o->max_rms[HYMO_CMP_S] = 1e-3;
        o->max_abs[HYMO_CMP_P] = 1e6;
        o->max_residual_energy = 50.0;
    }
}

/* Checks the output path against the n_inputs input files (the reference
 * among them) and reads, validates and requires complete the reference
 * (ref_path may be NULL: *ref = NULL).  0, or -1 after one error line. */
static int open_reference(const char *const *inputs, int n_inputs, const char *out_path, const char *ref_path,
                          hymo_reference **ref)
{
    hymo_error err;
    *ref = NULL;
    if (out_path && hymo_cli_outputs_check(NULL, &out_path, 1, inputs, n_inputs) >= 0) return -1;
    if (!ref_path) return 0;
    if (hymo_ref_read(ref_path, ref, &err) != HYMO_OK || hymo_ref_validate(*ref, ref_path, &err) != HYMO_OK) {
        fprintf(stderr, "hymo: error: %s\n", err.message);
    } else if (!(*ref)->complete) {
        fprintf(stderr, "hymo: error: %s: incomplete reference (complete = 0, reached t = %g of %g s)\n", ref_path,
                (*ref)->summary.t_reached, (*ref)->t_end);
    } else {
        return 0;
    }
    hymo_ref_free(*ref);
    *ref = NULL;
    return -1;
}

/* Exit status of a run that returned st (one error line if it failed). */
static int run_failed(hymo_status st, const hymo_error *err)
{
    fprintf(stderr, "hymo: error: %s\n", err->message);
    return st == HYMO_ERR_IO || st == HYMO_ERR_HDF5 || st == HYMO_ERR_ARGUMENT || st == HYMO_ERR_MODEL
               ? EXIT_BAD_INPUT
               : EXIT_RUN_FAILED;
}

/* Exit status of a finished run from its verdict (unstable and inaccurate
 * named on stderr). */
static int verdict_status(const hymo_cosim_summary *sum)
{
    if (!sum->stable) fprintf(stderr, "hymo: unstable: %s\n", sum->reason);
    if (sum->verdict == HYMO_VERDICT_INACCURATE) fprintf(stderr, "hymo: inaccurate: %s\n", sum->verdict_reason);
    return sum->verdict == HYMO_VERDICT_UNSTABLE      ? EXIT_RUN_FAILED
           : sum->verdict == HYMO_VERDICT_INACCURATE ? EXIT_INACCURATE
                                                      : 0;
}

/* `hymo cosim SYSTEM.yaml`: a system file of FMUs (hymo/fmu.h). */
static int cosim_system(const char *sys_path, const hymo_cli_list *cosim_opts, const hymo_cli_list *sets,
                        const char *out_path, const char *ref_path, int quiet)
{
    int status = EXIT_BAD_INPUT;
    hymo_error err;
    hymo_cosim_system *sys = NULL;
    hymo_reference *ref = NULL;
    if (hymo_cosim_system_load(sys_path, &sys, &err) != HYMO_OK) {
        fprintf(stderr, "hymo: error: %s\n", err.message);
        return EXIT_BAD_INPUT;
    }
    hymo_cosim_options *opt = hymo_cosim_system_options(sys);
    static const char *const split_only[] = {"--H", "--hh", "--hm", "--scheme", "--coupling", "--extrapolation",
                                             "--hyd-integrator", "--mech-integrator", "--formulation", "--jacobian",
                                             "--mech-inputs", "--set", NULL};
    if (sets->n > 0) {
        fprintf(stderr, "hymo: error: --set applies to model files; %s is a system file (set it there)\n", sys_path);
        goto done;
    }
    for (int i = 0; i < cosim_opts->n; ++i) {
        const char *a = cosim_opts->name[i], *v = cosim_opts->value[i];
        for (int k = 0; split_only[k]; ++k)
            if (!strcmp(a, split_only[k])) {
                fprintf(stderr, "hymo: error: %s applies to model files; %s is a system file (set it there)\n", a,
                        sys_path);
                goto done;
            }
        const double t_end = opt->mech.t_end;
        const int r = hymo_cli_cosim_option(a, v, opt);
        if (r == 0) fprintf(stderr, "hymo: error: %s: not a co-simulation option\n", a);
        if (r <= 0) goto done;
        if (!strcmp(a, "--t-end") && opt->H_control == HYMO_H_FIXED &&
            !hymo_steps_per_communication(opt->mech.t_end, opt->H)) {
            fprintf(stderr, "hymo: error: --t-end %s is not a multiple of H = %g s (from %s)\n", v, opt->H, sys_path);
            opt->mech.t_end = t_end;
            goto done;
        }
    }
    if (!out_path) out_path = hymo_cosim_system_output(sys);
    if (!ref_path) ref_path = hymo_cosim_system_reference(sys);
    default_thresholds(opt, ref_path);
    /* the system file, its model file, its FMUs and the reference */
    int n_in = 0;
    while (hymo_cosim_system_input(sys, n_in)) ++n_in;
    const char **inputs = calloc((size_t)n_in + 1, sizeof *inputs);
    if (!inputs) {
        fprintf(stderr, "hymo: error: out of memory\n");
        goto done;
    }
    for (int k = 0; k < n_in; ++k) inputs[k] = hymo_cosim_system_input(sys, k);
    inputs[n_in] = ref_path;
    const int bad_paths = open_reference(inputs, n_in + 1, out_path, ref_path, &ref);
    free(inputs);
    if (bad_paths) goto done;
    hymo_cosim_summary sum;
    hymo_status st = hymo_cosim_system_run(sys, ref, out_path, &sum, &err);
    if (st != HYMO_OK) {
        status = run_failed(st, &err);
        goto done;
    }
    if (!quiet) {
        hymo_cosim_system_summary_print(stdout, sys, &sum);
        if (out_path) printf("written        %s\n", out_path);
    }
    status = verdict_status(&sum);
done:
    hymo_ref_free(ref);
    hymo_cosim_system_free(sys);
    return status;
}

int hymo_cli_cosim(int argc, char **argv)
{
    const char *model_path = NULL, *out_path = NULL, *ref_path = NULL;
    int quiet = 0, n_pos = 0;
    double max_output = HYMO_CLI_MAX_OUTPUT_DEFAULT;
    hymo_cli_list sets = {0}, cosim_opts = {0};
    const hymo_cli_option opts[] = {
        {"--H", 0, hymo_cli_append, &cosim_opts},
        {"--hm", 0, hymo_cli_append, &cosim_opts},
        HYMO_CLI_COSIM_OPTIONS(&cosim_opts),
        {"--reference", 0, hymo_cli_str, &ref_path},
        {"--set", 0, hymo_cli_append, &sets},
        {"--max-output-size", 0, hymo_cli_size, &max_output},
        {"--output", 'o', hymo_cli_str, &out_path},
        {"--quiet", 'q', NULL, &quiet},
        {NULL, 0, NULL, NULL},
    };
    int r0 = hymo_cli_parse(argc, argv, opts, usage_cosim, &model_path, 1, &n_pos);
    if (r0 >= 0) return r0;
    if (model_path && hymo_cosim_system_file(model_path)) /* a system file of FMUs */
        return cosim_system(model_path, &cosim_opts, &sets, out_path, ref_path, quiet);
    hymo_model *model = NULL;
    hymo_error err;
    r0 = hymo_cli_load("cosim", model_path, &sets, &model);
    if (r0 >= 0) return r0;
    hymo_cosim_options opt;
    hymo_cosim_options_default(&opt, model);
    int hm_given = 0, status = EXIT_BAD_INPUT;
    if (hymo_cli_cosim_apply(&cosim_opts, &opt)) goto done;
    for (int k = 0; k < cosim_opts.n; ++k) hm_given |= !strcmp(cosim_opts.name[k], "--hm");
    if (!hm_given) opt.mech.dt = opt.H_control == HYMO_H_ENERGY && opt.H_min > 0.0 ? opt.H_min : opt.H;
    default_thresholds(&opt, ref_path);
    hymo_reference *ref = NULL;
    const char *inputs[2] = {model_path, ref_path};
    if (open_reference(inputs, 2, out_path, ref_path, &ref)) goto done;
    if (out_path) { /* the file's size against the limit and the free space, before the first step */
        double bytes = 0.0, seconds = -1.0;
        if (hymo_cosim_estimate(model, &opt, 0, &bytes, NULL, &err) == HYMO_OK &&
            hymo_cli_output_budget("cosim", out_path, bytes, NULL, max_output, COSIM_FEWER_ROWS) >= 0) {
            hymo_cosim_estimate(model, &opt, 1, NULL, &seconds, &err); /* refused: its time too */
            status = hymo_cli_output_budget("cosim", out_path, bytes, &seconds, max_output, COSIM_FEWER_ROWS);
            hymo_ref_free(ref);
            goto done;
        }
    }
    hymo_cosim_summary sum;
    hymo_status st = hymo_cosim_run(model, &opt, ref, out_path, &sum, &err);
    hymo_ref_free(ref);
    if (st != HYMO_OK) {
        status = run_failed(st, &err);
        goto done;
    }
    if (!quiet) {
        hymo_cosim_summary_print(stdout, &opt, &sum);
        hymo_cli_print_overrides(stdout, (const char *const *)model->overrides, model->n_overrides);
        if (out_path) printf("written        %s\n", out_path);
    }
    status = verdict_status(&sum);
done:
    hymo_model_free(model);
    return status;
}
