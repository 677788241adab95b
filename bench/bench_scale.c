/* bench_scale — per-step cost of one model and one solver configuration
 * (driven by bench/scaling.py over the generated families of
 * bench/gen_models.py).
 *
 *   bench_scale MODEL.yaml [--formulation double-step|penalty]
 *               [--jacobian fast|numeric] [--linear-solver dense|klu|auto]
 *               [--steps K] [--repeat R] [--warmup W]
 *
 * Each round creates the simulation (assembly, static start: its CPU
 * time, the minimum over the rounds, is setup_cpu_ms),
 * makes W steps (default 1: the first matrix's one-time work, KLU's
 * symbolic analysis and the pattern; timed apart as first_ms) and times K
 * steps of hymo_sim_step; the line printed gives the minimum
 * and the median over the rounds of the time per step (the minimum is the
 * stable estimator on a shared machine, see bench_speed.c), the mean
 * Newton iterations and matrix builds per step, and the process's peak
 * resident memory (getrusage ru_maxrss: the largest round, model
 * included), and the heap the simulation holds after the steps (glibc
 * mallinfo2: bytes in use, mmap-served blocks included, minus those before its creation; KLU's arrays
 * included, the model's not).  One configuration per process, so that the
 * peak is its own.
 *
 * cpu_min is the minimum over the rounds of the thread's CPU time per step
 * (CLOCK_THREAD_CPUTIME_ID: time the thread was not running is not in it).
 *
 * Output (one line, key=value): ms_min ms_med first_ms iter jac rss_kb heap_kb nx cpu_min setup_cpu_ms
 * Exit status 0, or 1 if a step fails (the message on stderr), 2 on bad
 * arguments. */
#define _POSIX_C_SOURCE 199309L

#include <malloc.h>

/* bytes the heap holds: small blocks (uordblks) and those glibc serves by
 * mmap (hblkhd: large arrays, above the mmap threshold) */
static size_t heap_in_use(void)
{
    const struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "hymo/model.h"
#include "hymo/sim.h"

#define MAX_REPEAT 100

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(void)
{
    fputs("usage: bench_scale MODEL.yaml [--formulation double-step|penalty] [--jacobian fast|numeric]\n"
          "                   [--linear-solver dense|klu|auto] [--steps K] [--repeat R] [--warmup W]\n",
          stderr);
    return 2;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    hymo_formulation_kind form = HYMO_FORMULATION_DOUBLE_STEP;
    hymo_jacobian_mode jac = HYMO_JACOBIAN_FAST;
    hymo_linsol_kind ls = HYMO_LINSOL_DENSE;
    int steps = 10, repeat = 3, warmup = 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            path = a;
            continue;
        }
        if (!v) return usage();
        ++i;
        if (!strcmp(a, "--formulation"))
            form = !strcmp(v, "penalty") ? HYMO_FORMULATION_PENALTY : HYMO_FORMULATION_DOUBLE_STEP;
        else if (!strcmp(a, "--jacobian"))
            jac = !strcmp(v, "numeric") ? HYMO_JACOBIAN_NUMERIC : HYMO_JACOBIAN_FAST;
        else if (!strcmp(a, "--linear-solver"))
            ls = !strcmp(v, "klu") ? HYMO_LINSOL_KLU : !strcmp(v, "dense") ? HYMO_LINSOL_DENSE : HYMO_LINSOL_AUTO;
        else if (!strcmp(a, "--steps"))
            steps = atoi(v);
        else if (!strcmp(a, "--repeat"))
            repeat = atoi(v);
        else if (!strcmp(a, "--warmup"))
            warmup = atoi(v);
        else
            return usage();
    }
    if (!path || steps < 1 || repeat < 1 || repeat > MAX_REPEAT || warmup < 0) return usage();

    hymo_error err;
    hymo_error_clear(&err);
    hymo_model *model = NULL;
    if (hymo_model_load_file(path, &model, &err) != HYMO_OK) {
        fprintf(stderr, "bench_scale: %s\n", err.message);
        return 1;
    }
    hymo_run_options opt;
    hymo_run_options_default(&opt, model);
    opt.formulation = form;
    opt.jacobian = jac;
    opt.linear_solver = ls;
    opt.verbose = 0;
    opt.t_end = 1e3;
    double ms[MAX_REPEAT], first_ms = 0.0, cpu_min = 0.0, setup_ms = 0.0;
    long heap_kb = 0;
    hymo_run_summary sum;
    int nx = 0;
    for (int r = 0; r < repeat; ++r) {
        hymo_sim *sim = NULL;
        const size_t heap0 = heap_in_use();
        const double s0 = cpu_now_s();
        if (hymo_sim_create(model, &opt, &sim, &err) != HYMO_OK) {
            fprintf(stderr, "bench_scale: %s\n", err.message);
            return 1;
        }
        if (r == 0 || 1e3 * (cpu_now_s() - s0) < setup_ms) setup_ms = 1e3 * (cpu_now_s() - s0);
        double t0 = now_s();
        for (int k = 0; k < warmup; ++k)
            if (hymo_sim_step(sim, &err) != HYMO_OK) {
                fprintf(stderr, "bench_scale: step %d: %s\n", k + 1, err.message);
                return 1;
            }
        if (r == 0 || 1e3 * (now_s() - t0) < first_ms) first_ms = 1e3 * (now_s() - t0);
        t0 = now_s();
        const double c0 = cpu_now_s();
        for (int k = 0; k < steps; ++k)
            if (hymo_sim_step(sim, &err) != HYMO_OK) {
                fprintf(stderr, "bench_scale: step %d: %s\n", warmup + k + 1, err.message);
                return 1;
            }
        ms[r] = 1e3 * (now_s() - t0) / steps;
        const double cpu = 1e3 * (cpu_now_s() - c0) / steps;
        if (r == 0 || cpu < cpu_min) cpu_min = cpu;
        heap_kb = (long)((heap_in_use() - heap0) / 1024);
        hymo_sim_summary(sim, &sum);
        const int *ind;
        nx = hymo_sim_independent(sim, &ind) + hymo_sim_np(sim) + hymo_sim_nu(sim);
        hymo_sim_free(sim);
    }
    double sorted[MAX_REPEAT];
    memcpy(sorted, ms, (size_t)repeat * sizeof *ms);
    qsort(sorted, (size_t)repeat, sizeof *sorted, cmp_double);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("ms_min=%.6g ms_med=%.6g first_ms=%.6g iter=%.3f jac=%.3f rss_kb=%ld heap_kb=%ld nx=%d cpu_min=%.6g "
           "setup_cpu_ms=%.6g\n",
           sorted[0],
           repeat % 2 ? sorted[repeat / 2] : 0.5 * (sorted[repeat / 2 - 1] + sorted[repeat / 2]), first_ms,
           sum.mean_iterations, (double)sum.jacobian_evaluations / (double)(steps + warmup), ru.ru_maxrss, heap_kb,
           nx, cpu_min, setup_ms);
    hymo_model_free(model);
    return 0;
}
