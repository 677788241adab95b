/* bench_speed — integration speed against the seed's MATLAB times (SPEC §6).
 *
 * For data/fourbar.yaml and data/quickreturn.yaml, every formulation
 * (double-step, penalty) and Jacobian mode (numeric, fast), runs
 * hymo_run() without file output --repeat times (default 5) and reports
 * the medians of the integration-loop time (summary.wall_time) and of the
 * whole call (model already loaded; includes assembly and the static
 * start).  Targets, judged on the whole-call median:
 *
 *   fast     : speed-up over the seed >= 1000 x
 *   numeric  : speed-up over the seed >=  100 x
 *   DS / PB  : double-step time / penalty time <= 1.3 (per model and mode)
 *
 * It is a measurement: the exit status is 0 unless the command line is
 * wrong; the last line says "targets: all met" or "targets: N missed". */
#define _POSIX_C_SOURCE 199309L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hymo/model.h"
#include "hymo/sim.h"

#ifndef HYMO_DATA_DIR
#define HYMO_DATA_DIR "data"
#endif

#define N_FORM 2
#define N_JAC 2
#define MAX_REPEAT 1000

typedef struct {
    const char *label; /* table label */
    const char *file;  /* under the data directory */
    double seed_s[N_FORM]; /* MATLAB integration time, s: DS, PB (SPEC §6) */
} bench_model;

static const bench_model MODELS[] = {
    {"four-bar", "fourbar.yaml", {27.45, 21.54}},
    {"quick-return", "quickreturn.yaml", {29.03, 28.47}},
};
#define N_MODELS ((int)(sizeof MODELS / sizeof MODELS[0]))

static const hymo_formulation_kind FORMS[N_FORM] = {HYMO_FORMULATION_DOUBLE_STEP,
                                                    HYMO_FORMULATION_PENALTY};
static const char *const FORM_LABEL[N_FORM] = {"double-step", "penalty"};
static const hymo_jacobian_mode JACS[N_JAC] = {HYMO_JACOBIAN_NUMERIC, HYMO_JACOBIAN_FAST};
static const char *const JAC_LABEL[N_JAC] = {"numeric", "fast"};
static const double SPEEDUP_TARGET[N_JAC] = {100.0, 1000.0};
static const double DS_PB_TARGET = 1.3;

typedef struct {
    int ok;                /* every repeat returned HYMO_OK */
    double call_ms;        /* median whole-call time */
    double loop_ms;        /* median summary.wall_time */
    double mean_iter;
    int max_iter;
    double t_end;
    char error[HYMO_ERROR_MSG_MAX];
} bench_result;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void run_case(const hymo_model *model, hymo_formulation_kind form, hymo_jacobian_mode jac,
                     int repeat, bench_result *res)
{
    double call[MAX_REPEAT], loop[MAX_REPEAT];
    memset(res, 0, sizeof *res);
    res->ok = 1;
    hymo_run_options opt;
    hymo_run_options_default(&opt, model);
    opt.formulation = form;
    opt.jacobian = jac;
    opt.verbose = 0;
    res->t_end = opt.t_end;
    for (int r = 0; r < repeat; ++r) {
        hymo_run_summary summary;
        hymo_error err;
        memset(&summary, 0, sizeof summary);
        hymo_error_clear(&err);
        double t0 = now_s();
        hymo_status st = hymo_run(model, &opt, NULL, &summary, &err);
        double t1 = now_s();
        if (st != HYMO_OK) {
            res->ok = 0;
            snprintf(res->error, sizeof res->error, "%s: %.400s", hymo_status_name(st), err.message);
            return;
        }
        call[r] = 1e3 * (t1 - t0);
        loop[r] = 1e3 * summary.wall_time;
        res->mean_iter = summary.mean_iterations;
        res->max_iter = summary.max_iterations;
    }
    res->call_ms = median(call, repeat);
    res->loop_ms = median(loop, repeat);
}

static void usage(FILE *out)
{
    fputs("usage: bench_speed [--repeat N] [--data DIR]\n"
          "\n"
          "Times hymo_run (no file output) for the four-bar and the quick-return\n"
          "mechanism, both formulations and both Jacobian modes, and compares the\n"
          "medians with the seed's MATLAB integration times (SPEC section 6).\n"
          "\n"
          "  --repeat N   runs per case, median reported (default 5)\n"
          "  --data DIR   model directory (default " HYMO_DATA_DIR ")\n"
          "\n"
          "Exit status 0 (a measurement); the last line is 'targets: all met' or\n"
          "'targets: N missed'.\n",
          out);
}

int main(int argc, char **argv)
{
    int repeat = 5;
    const char *data_dir = HYMO_DATA_DIR;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            char *end = NULL;
            long v = strtol(argv[++i], &end, 10);
            if (!*argv[i] || *end || v < 1 || v > MAX_REPEAT) {
                fprintf(stderr, "bench_speed: --repeat: '%s' is not an integer in 1..%d\n", argv[i],
                        MAX_REPEAT);
                return 2;
            }
            repeat = (int)v;
        } else if (!strcmp(argv[i], "--data") && i + 1 < argc) {
            data_dir = argv[++i];
        } else {
            fprintf(stderr, "bench_speed: unknown or incomplete argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }

    printf("hymo bench_speed: median of %d run%s per case, no file output\n", repeat,
           repeat == 1 ? "" : "s");
    printf("ms = whole hymo_run call (assembly + static start + integration); loop = "
           "integration loop only (summary.wall_time)\n");
    printf("targets: fast >= 1000x, numeric >= 100x the seed's MATLAB time (judged on ms); "
           "DS/PB <= %.1f\n\n",
           DS_PB_TARGET);
    printf("%-12s  %-11s  %-7s  %9s  %9s  %6s  %8s  %9s  %9s  %-6s\n", "model", "formulation",
           "jacobian", "ms", "loop ms", "iter", "seed s", "speed-up", "target ms", "result");
    printf("%-12s  %-11s  %-7s  %9s  %9s  %6s  %8s  %9s  %9s  %-6s\n", "------------",
           "-----------", "-------", "---------", "---------", "------", "--------", "---------",
           "---------", "------");

    int missed = 0, checked = 0;
    bench_result res[N_MODELS][N_FORM][N_JAC];
    int loaded[N_MODELS];
    for (int m = 0; m < N_MODELS; ++m) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", data_dir, MODELS[m].file);
        hymo_model *model = NULL;
        hymo_error err;
        hymo_error_clear(&err);
        loaded[m] = hymo_model_load_file(path, &model, &err) == HYMO_OK;
        if (!loaded[m]) {
            printf("%-12s  cannot load %s: %s  FAIL\n", MODELS[m].label, path, err.message);
            missed += N_FORM * N_JAC + N_JAC;
            checked += N_FORM * N_JAC + N_JAC;
            continue;
        }
        for (int f = 0; f < N_FORM; ++f) {
            for (int j = 0; j < N_JAC; ++j) {
                bench_result *r = &res[m][f][j];
                run_case(model, FORMS[f], JACS[j], repeat, r);
                double seed = MODELS[m].seed_s[f];
                double target_ms = 1e3 * seed / SPEEDUP_TARGET[j];
                ++checked;
                if (!r->ok) {
                    ++missed;
                    printf("%-12s  %-11s  %-7s  run failed (%s)  FAIL\n", MODELS[m].label,
                           FORM_LABEL[f], JAC_LABEL[j], r->error);
                    continue;
                }
                /* the seed's times are for a 10 s run; scale if t_end differs */
                double ms10 = r->call_ms * (r->t_end > 0 ? 10.0 / r->t_end : 1.0);
                double loop10 = r->loop_ms * (r->t_end > 0 ? 10.0 / r->t_end : 1.0);
                double speedup = 1e3 * seed / ms10;
                int pass = ms10 <= target_ms;
                if (!pass) ++missed;
                printf("%-12s  %-11s  %-7s  %9.2f  %9.2f  %6.2f  %8.2f  %8.0fx  %9.2f  %-6s\n",
                       MODELS[m].label, FORM_LABEL[f], JAC_LABEL[j], ms10, loop10, r->mean_iter,
                       seed, speedup, target_ms, pass ? "PASS" : "FAIL");
                fflush(stdout);
            }
        }
        hymo_model_free(model);
    }

    printf("\n%-12s  %-7s  %9s  %9s  %7s  %7s  %-6s\n", "model", "jacobian", "DS ms", "PB ms", "DS/PB",
           "target", "result");
    printf("%-12s  %-7s  %9s  %9s  %7s  %7s  %-6s\n", "------------", "-------", "---------",
           "---------", "-------", "-------", "------");
    for (int m = 0; m < N_MODELS; ++m) {
        if (!loaded[m]) continue;
        for (int j = 0; j < N_JAC; ++j) {
            const bench_result *ds = &res[m][0][j], *pb = &res[m][1][j];
            ++checked;
            if (!ds->ok || !pb->ok) {
                ++missed;
                printf("%-12s  %-7s  %9s  %9s  %7s  %7.1f  FAIL (a run failed)\n", MODELS[m].label,
                       JAC_LABEL[j], "-", "-", "-", DS_PB_TARGET);
                continue;
            }
            double ratio = ds->call_ms / pb->call_ms;
            int pass = ratio <= DS_PB_TARGET;
            if (!pass) ++missed;
            printf("%-12s  %-7s  %9.2f  %9.2f  %7.2f  %7.1f  %-6s\n", MODELS[m].label, JAC_LABEL[j],
                   ds->call_ms, pb->call_ms, ratio, DS_PB_TARGET, pass ? "PASS" : "FAIL");
        }
    }

    printf("\n%d targets checked\n", checked);
    if (missed)
        printf("targets: %d missed\n", missed);
    else
        printf("targets: all met\n");
    return 0;
}
