/* `hymo compare REF.h5 RUN.h5|RUN.csv [thresholds]`: errors of a run
 * against a reference file, checked against thresholds (a regression gate
 * for CI; docs/compare.md).  Exit status: 0 the run passes (it covers the
 * span checked, is of the reference's model and every threshold holds), 1
 * it does not (a threshold fails, it covers less than the span, it stopped
 * unstable or incomplete, it is of another model), 2 bad input. */
#include "cli.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hymo/foreign.h"
#include "hymo/compare.h"
#include "hymo/reference.h"
#include "number.h"

enum { CHECK_RMS, CHECK_ABS };

typedef struct {
    int kind;   /* CHECK_RMS | CHECK_ABS */
    int signal; /* HYMO_CMP_* */
    double limit;
    char component[HYMO_REF_TEXT_MAX + 16]; /* "z[q_boom]"; "" for the whole signal */
    int index;  /* component index (hymo_compare_component_offset numbering), -1: whole signal */
    int column; /* its column in the signal */
} threshold;

static void usage_compare(FILE *out)
{
    fputs("usage: hymo compare REF.h5 RUN.h5|RUN.csv [options]\n"
          "\n"
          "Compares a run with a reference file of the same model: the run is linearly\n"
          "interpolated onto the reference times in the common time range, and the RMS\n"
          "and maximum absolute error of each signal (z, zd, s, sd, p, U, force) are\n"
          "printed with the worst component.  Thresholds turn it into a regression test.\n"
          "\n"
          "options (each may be repeated):\n"
          "  --max-rms SIGNAL=VALUE     fail if the RMS error of a component of SIGNAL\n"
          "                             exceeds VALUE (in the signal's unit)\n"
          "  --max-abs SIGNAL=VALUE     fail if the absolute error of a component of SIGNAL\n"
          "                             exceeds VALUE at any time\n"
          "                             (SIGNAL[NAME]=VALUE: one component, e.g. z[q_boom],\n"
          "                             s[cyl1], p[V2])\n"
          "  --max-residual-energy J    fail if max |residual_energy_total| of RUN (a\n"
          "                             co-simulation file with a /cosim group) exceeds J\n"
          "  --allow-model-mismatch     compare files of different models (same dimensions)\n"
          "  --span T0:T1               check only t = T0 .. T1 s of the reference (default:\n"
          "                             its whole span); the run must cover what is checked\n"
          "  --map MAP.yaml             RUN.csv: CSV columns -> components, scale factors\n"
          "  -h, --help                 this text\n"
          "\n"
          "SIGNAL is one of z, zd, s, sd, p, U, force; VALUE is a positive number.\n"
          "Both files must be consistent (rows, steps and end time agreeing) runs of the\n"
          "same model: the same model file, or one that differs only in comments,\n"
          "formatting, description or the simulation section (model_physics_sha256).\n"
          "The run fails unless it is complete (not stopped, not unstable) and covers\n"
          "the reference's span (or --span).  RUN.csv (another tool's result): a column\n"
          "t or time (s) and columns named like the components, e.g. z[z1], p[V2], in SI\n"
          "units; comment lines '# model_physics_sha256: HEX' (or '# model_sha256: HEX')\n"
          "declare its model, which must then be the reference's.\n"
          "\n"
          "exit status: 0 the run passes, 1 it fails (a threshold, the span, unstable or\n"
          "incomplete, another model), 2 bad input\n",
          out);
}

/* "hymo: error: <message>" on stderr (one line); returns EXIT_BAD_INPUT. */
static int bad(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("hymo: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_BAD_INPUT;
}

/* Positive finite number; 0 on failure. */
static int parse_limit(const char *text, double *out)
{
    double v;
    if (!hymo_parse_number(text, HYMO_NUMBER_RANGE, &v) || v <= 0.0) return 0;
    *out = v;
    return 1;
}

/* "SIGNAL=VALUE" of option `opt`; prints the error and returns 0 on failure. */
static int parse_threshold(const char *opt, const char *text, int kind, threshold *t)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text) {
        fprintf(stderr, "hymo: error: %s: '%s' is not SIGNAL=VALUE (see hymo compare --help)\n",
                opt, text);
        return 0;
    }
    char name[HYMO_REF_TEXT_MAX + 16];
    size_t len = (size_t)(eq - text);
    if (len >= sizeof name) {
        fprintf(stderr, "hymo: error: %s: '%.*s' is too long\n", opt, (int)len, text);
        return 0;
    }
    memcpy(name, text, len);
    name[len] = '\0';
    t->kind = kind;
    t->index = -1;
    t->component[0] = '\0';
    char *br = strchr(name, '[');
    if (br) { /* SIGNAL[NAME]: resolved against the reference's names later */
        if (name[len - 1] != ']' || br[1] == ']') {
            fprintf(stderr, "hymo: error: %s: '%s' is not SIGNAL or SIGNAL[NAME]\n", opt, name);
            return 0;
        }
        memcpy(t->component, name, len + 1);
        *br = '\0';
    }
    t->signal = hymo_compare_signal_find(name);
    if (t->signal < 0) {
        fprintf(stderr,
                "hymo: error: %s: unknown signal '%s' (known: z, zd, s, sd, p, U, force)\n", opt,
                name);
        return 0;
    }
    if (!parse_limit(eq + 1, &t->limit)) {
        fprintf(stderr, "hymo: error: %s: '%s' in '%s' is not a positive number\n", opt, eq + 1,
                text);
        return 0;
    }
    return 1;
}

/* Name of component c of signal k, e.g. "s[cyl1]", "p[V2]"; "p[-]" if the
 * signal has no components. */
static void component_name(const hymo_reference *ref, int k, int c, char *buf, size_t cap)
{
    const char *sig = hymo_compare_signal_name(k);
    if (c < 0) {
        snprintf(buf, cap, "%s[-]", sig);
        return;
    }
    char(*names)[HYMO_REF_TEXT_MAX] = NULL;
    switch (k) {
    case HYMO_CMP_Z:
    case HYMO_CMP_ZD: names = ref->z_names; break;
    case HYMO_CMP_S:
    case HYMO_CMP_SD:
    case HYMO_CMP_FORCE: names = ref->actuator_names; break;
    case HYMO_CMP_P: names = ref->p_names; break;
    case HYMO_CMP_U: names = ref->u_names; break;
    }
    if (names && names[c][0]) {
        snprintf(buf, cap, "%s[%s]", sig, names[c]);
    } else {
        snprintf(buf, cap, "%s[%d]", sig, c);
    }
}

static void format_ratio(double r, char *buf, size_t cap)
{
    if (!isfinite(r)) {
        snprintf(buf, cap, "inf");
    } else if (r < 10.0) {
        snprintf(buf, cap, "%.2g", r);
    } else if (r < 1e6) {
        snprintf(buf, cap, "%.0f", r);
    } else {
        snprintf(buf, cap, "%.1e", r);
    }
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* Rejects a run that did not finish: one line on stderr, "hymo: fail:" for
 * the run (a failed run), "hymo: error:" for the reference (no reference to
 * judge against).  A co-simulation that stopped as unstable says so.  1 if
 * the file is complete. */
static int check_complete(const char *path, const hymo_reference *r, int is_run)
{
    const char *tag = is_run ? "fail" : "error";
    if (!r->complete && r->has_cosim && !strcmp(r->cosim_status, "unstable")) {
        fprintf(stderr, "hymo: %s: '%s': unstable co-simulation: stopped at t = %g of %g s%s%s%s\n", tag, path,
                r->summary.t_reached, r->t_end, r->cosim_status_reason[0] ? " (" : "", r->cosim_status_reason,
                r->cosim_status_reason[0] ? ")" : "");
        return 0;
    }
    if (!r->complete) {
        fprintf(stderr,
                "hymo: %s: '%s': incomplete run (complete = 0, reached t = %g of %g s)%s\n",
                tag, path, r->summary.t_reached, r->t_end,
                ends_with(path, ".partial") ? "; a .partial file from a killed run" : "");
        return 0;
    }
    if (ends_with(path, ".partial")) {
        fprintf(stderr,
                "hymo: %s: '%s': incomplete run (a .partial file: its writer never closed "
                "it)\n",
                tag, path);
        return 0;
    }
    return 1;
}

static void print_file_line(const char *label, const char *path, const hymo_reference *r)
{
    printf("%-10s %s: %s, %s, dt %g s, %d rows, t = %g .. %g s\n", label, path, r->model_name,
           r->formulation, r->dt, r->n, r->n > 0 ? r->time[0] : 0.0,
           r->n > 0 ? r->time[r->n - 1] : 0.0);
}

static void print_table(const hymo_reference *ref, const hymo_compare_result *res)
{
    printf("\n%-6s %16s  %-16s %16s  %-16s %10s\n", "signal", "RMS error", "worst (RMS)",
           "max error", "worst (max)", "t of max");
    for (int k = 0; k < HYMO_CMP_SIGNALS; k++) {
        const char *sig = hymo_compare_signal_name(k);
        if (res->worst_max[k] < 0) {
            const int has = hymo_compare_component_offset(ref, k + 1) > hymo_compare_component_offset(ref, k);
            printf("%-6s %16s  %-16s %16s  %-16s %10s\n", sig, "-", has ? "(not in run)" : "(no components)", "-",
                   "", "-");
            continue;
        }
        char wr[HYMO_REF_TEXT_MAX + 16], wm[HYMO_REF_TEXT_MAX + 16], vr[48], vm[48];
        component_name(ref, k, res->worst_rms[k], wr, sizeof wr);
        component_name(ref, k, res->worst_max[k], wm, sizeof wm);
        snprintf(vr, sizeof vr, "%.3e %s", res->rms[k],
                 hymo_compare_signal_unit(ref, k, res->worst_rms[k]));
        snprintf(vm, sizeof vm, "%.3e %s", res->max[k],
                 hymo_compare_signal_unit(ref, k, res->worst_max[k]));
        printf("%-6s %16s  %-16s %16s  %-16s %8.4g s\n", sig, vr, wr, vm, wm,
               res->t_worst_max[k]);
    }
}

static void print_cosim(const hymo_reference *run, const hymo_reference *ref,
                        const hymo_compare_result *res)
{
    if (!run->has_cosim) return;
    printf("\ncosim      scheme %s, coupling %s, extrapolation %s, H %g s, status %s%s%s\n",
           run->cosim_scheme[0] ? run->cosim_scheme : "?",
           run->cosim_coupling[0] ? run->cosim_coupling : "?",
           run->cosim_extrapolation[0] ? run->cosim_extrapolation : "?", run->cosim_H,
           run->cosim_status[0] ? run->cosim_status : "?",
           run->cosim_status_reason[0] ? " - " : "", run->cosim_status_reason);
    if (res->has_residual_energy) {
        printf("residual   energy (total, run): final %.3e J, max |E| %.3e J, RMS %s %.3e J\n",
               res->residual_energy_final, res->residual_energy_max_abs,
               ref->has_cosim ? "of (run - reference)" : "of the run curve",
               res->residual_energy_rms_diff);
    }
}

/* One PASS/FAIL line; returns 1 if the check passes. */
static int report_check(const hymo_reference *ref, const hymo_compare_result *res,
                        const double *crms, const double *cmax, const double *ct, const threshold *t)
{
    const int k = t->signal;
    int c = t->kind == CHECK_RMS ? res->worst_rms[k] : res->worst_max[k];
    double v = t->kind == CHECK_RMS ? res->rms[k] : res->max[k];
    double t_at = res->t_worst_max[k];
    if (t->index >= 0) {
        c = t->column;
        v = t->kind == CHECK_RMS ? crms[t->index] : cmax[t->index];
        t_at = ct[t->index];
    }
    const int pass = v <= t->limit; /* NaN (no data) fails */
    char comp[HYMO_REF_TEXT_MAX + 16], ratio[32], at[48] = "";
    component_name(ref, k, c, comp, sizeof comp);
    format_ratio(v / t->limit, ratio, sizeof ratio);
    const char *unit = hymo_compare_signal_unit(ref, k, c);
    if (t->kind == CHECK_ABS && c >= 0) snprintf(at, sizeof at, " at t = %.6g s", t_at);
    printf("%s %s %s = %.2e %s %s %.2e %s (%sx)%s\n", pass ? "PASS" : "FAIL",
           t->kind == CHECK_RMS ? "rms" : "abs", comp, v, unit, pass ? "<=" : ">", t->limit, unit,
           ratio, at);
    return pass;
}

static int is_csv(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && (!strcmp(path + n - 4, ".csv") || !strcmp(path + n - 4, ".CSV"));
}

/* Resolves SIGNAL[NAME] thresholds against the reference's names and
 * checks that the run has the components a threshold needs. */
static int resolve_checks(const hymo_reference *ref, const char *run_path, const unsigned char *present,
                          threshold *checks, int nchecks)
{
    for (int i = 0; i < nchecks; i++) {
        threshold *t = &checks[i];
        const char *opt = t->kind == CHECK_RMS ? "--max-rms" : "--max-abs";
        if (t->component[0]) {
            int k = -1, col = -1;
            t->index = hymo_foreign_component(ref, t->component, &k, &col);
            if (t->index < 0) {
                const int off = hymo_compare_component_offset(ref, t->signal);
                const int cols = hymo_compare_component_offset(ref, t->signal + 1) - off;
                char known[512] = "";
                size_t used = 0;
                for (int c = 0; c < cols && used + 1 < sizeof known; c++) {
                    char nm[HYMO_REF_TEXT_MAX + 16];
                    component_name(ref, t->signal, c, nm, sizeof nm);
                    int n = snprintf(known + used, sizeof known - used, "%s%s", c ? ", " : "", nm);
                    if (n < 0) break;
                    used += (size_t)n;
                }
                if (used >= sizeof known) used = sizeof known - 1;
                bad("%s: the reference has no component '%s' (components of %s: %s)", opt, t->component,
                    hymo_compare_signal_name(t->signal), cols ? known : "none");
                return 0;
            }
            t->column = col;
            if (present && !present[t->index]) {
                bad("%s: '%s' has no column %s", opt, run_path, t->component);
                return 0;
            }
        } else if (present) {
            const int off = hymo_compare_component_offset(ref, t->signal);
            const int end = hymo_compare_component_offset(ref, t->signal + 1);
            int any = 0;
            for (int c = off; c < end; c++) any |= present[c];
            if (!any && end > off) {
                bad("%s: '%s' has no column of signal %s (e.g. %s[NAME])", opt, run_path,
                    hymo_compare_signal_name(t->signal), hymo_compare_signal_name(t->signal));
                return 0;
            }
        }
    }
    return 1;
}

/* Reads and checks one HDF5 file: EXIT_PASS if usable, EXIT_BAD_INPUT if
 * it cannot be read or is not consistent (or is an unfinished reference),
 * EXIT_THRESHOLD for a run that did not finish (a message printed). */
static int read_h5(const char *path, hymo_reference **out, int is_run)
{
    hymo_error err;
    hymo_error_clear(&err);
    hymo_cli_read_budget(path);
    const hymo_status st = hymo_ref_read(path, out, &err);
    hymo_cli_read_budget(NULL);
    if (st != HYMO_OK) return bad("%s", err.message);
    if (hymo_ref_validate(*out, path, &err) != HYMO_OK) return bad("%s", err.message);
    if (!check_complete(path, *out, is_run)) return is_run ? EXIT_THRESHOLD : EXIT_BAD_INPUT;
    return EXIT_PASS;
}

/* The time span checked: the reference's whole span, or --span T0:T1. */
typedef struct {
    int given; /* --span given */
    double t0, t1;
} span_option;

static int span_parse(const char *name, const char *value, void *dest)
{
    span_option *sp = dest;
    const char *colon = strchr(value, ':');
    char t0[64];
    const size_t n0 = colon ? (size_t)(colon - value) : 0;
    if (colon && n0 > 0 && n0 < sizeof t0) {
        memcpy(t0, value, n0);
        t0[n0] = '\0';
        if (hymo_parse_number(t0, HYMO_NUMBER_RANGE, &sp->t0) &&
            hymo_parse_number(colon + 1, HYMO_NUMBER_RANGE, &sp->t1) && sp->t0 < sp->t1) {
            sp->given = 1;
            return 0;
        }
    }
    bad("%s: '%s' is not T0:T1 with T0 < T1 (seconds, e.g. 0:1.5)", name, value);
    return -1;
}

/* Half the sample interval at row i .. i + 1 of times t (0 for one row). */
static double half_gap(const double *t, int n, int i)
{
    if (n < 2) return 0.0;
    if (i < 0) i = 0;
    if (i > n - 2) i = n - 2;
    return 0.5 * (t[i + 1] - t[i]);
}

/* 1 if the run's times cover [t0, t1] to within half a sample interval of
 * the coarser of the two grids at each end (the reference's mean interval,
 * the run's interval at that end). */
static int covers(const hymo_reference *ref, const hymo_reference *run, double t0, double t1)
{
    const int n = ref->n, m = run->n;
    const double mean = n > 1 ? 0.5 * (ref->time[n - 1] - ref->time[0]) / (n - 1) : 0.0;
    const double eps = 1e-12 * fmax(1.0, fmax(fabs(t0), fabs(t1)));
    const double lo = fmax(mean, half_gap(run->time, m, 0)) + eps;
    const double hi = fmax(mean, half_gap(run->time, m, m - 2)) + eps;
    return run->time[0] <= t0 + lo && run->time[m - 1] >= t1 - hi;
}

/* The thresholds of --max-rms / --max-abs in command-line order. */
typedef struct {
    threshold *checks;
    int n;
} check_list;

static int add_check(const char *name, const char *value, void *dest)
{
    check_list *cl = dest;
    return parse_threshold(name, value, !strcmp(name, "--max-rms") ? CHECK_RMS : CHECK_ABS, &cl->checks[cl->n++])
               ? 0
               : -1;
}

static int energy_option(const char *name, const char *value, void *dest)
{
    if (parse_limit(value, dest)) return 0;
    bad("%s: '%s' is not a positive number", name, value);
    return -1;
}

int hymo_cli_compare(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    const char *map_path = NULL;
    int npaths = 0, allow_mismatch = 0;
    threshold *checks = calloc(argc > 0 ? (size_t)argc : 1, sizeof *checks);
    int nchecks = 0;
    double max_energy = -1.0;
    span_option span = {0, 0.0, 0.0};
    if (!checks) return bad("out of memory");
    int code = EXIT_BAD_INPUT;
    hymo_reference *ref = NULL, *run = NULL;
    unsigned char *present = NULL;
    double *crms = NULL, *cmax = NULL, *ct = NULL;

    check_list cl = {checks, 0};
    const hymo_cli_option opts[] = {
        {"--max-rms", 0, add_check, &cl},
        {"--max-abs", 0, add_check, &cl},
        {"--max-residual-energy", 0, energy_option, &max_energy},
        {"--map", 0, hymo_cli_str, &map_path},
        {"--allow-model-mismatch", 0, NULL, &allow_mismatch},
        {"--span", 0, span_parse, &span},
        {NULL, 0, NULL, NULL},
    };
    const int r0 = hymo_cli_parse(argc, argv, opts, usage_compare, paths, 2, &npaths);
    if (r0 >= 0) {
        code = r0;
        goto out;
    }
    nchecks = cl.n;
    if (npaths < 2) {
        bad("compare: missing %s (see hymo compare --help)",
            npaths == 0 ? "REF.h5 and RUN.h5" : "RUN.h5");
        goto out;
    }
    const int csv = is_csv(paths[1]);
    if (map_path && !csv) {
        bad("--map applies to a CSV run (RUN.csv), not to '%s'", paths[1]);
        goto out;
    }

    hymo_error err;
    hymo_error_clear(&err);
    if ((code = read_h5(paths[0], &ref, 0)) != EXIT_PASS) goto out;
    code = EXIT_BAD_INPUT;
    if (csv) {
        if (hymo_foreign_read_csv(paths[1], map_path, ref, &run, &present, &err) != HYMO_OK) {
            bad("%s", err.message);
            goto out;
        }
    } else if ((code = read_h5(paths[1], &run, 1)) != EXIT_PASS) {
        goto out;
    }
    code = EXIT_BAD_INPUT;
    /* a CSV that declares no model ("# model_physics_sha256: ..."): not checked */
    const int declared = !csv || run->model_sha256[0] || run->model_physics_sha256[0];
    int identity = HYMO_MODEL_SAME_TEXT;
    if (declared) {
        identity = hymo_model_identity(ref->model_sha256, ref->model_physics_sha256, run->model_sha256,
                                       run->model_physics_sha256);
        if (identity == HYMO_MODEL_DIFFERENT && !allow_mismatch) {
            fprintf(stderr,
                    "hymo: fail: '%s' %s another model: '%s' (model_sha256 %.12s..., physics %.12s...) vs "
                    "reference '%s' (model_sha256 %.12s..., physics %.12s...); --allow-model-mismatch compares anyway\n",
                    paths[1], csv ? "declares" : "is a run of", run->model_name,
                    run->model_sha256[0] ? run->model_sha256 : "unknown",
                    run->model_physics_sha256[0] ? run->model_physics_sha256 : "unknown", ref->model_name,
                    ref->model_sha256, ref->model_physics_sha256[0] ? ref->model_physics_sha256 : "unknown");
            code = EXIT_THRESHOLD;
            goto out;
        }
        if (identity == HYMO_MODEL_DIFFERENT) {
            fprintf(stderr, "hymo: warning: '%s' ('%s') and '%s' ('%s') are runs of different models; compared as "
                            "asked (--allow-model-mismatch)\n",
                    paths[0], ref->model_name, paths[1], run->model_name);
        }
    }
    if (max_energy > 0.0 && !(run->has_cosim && run->residual_energy_total)) {
        bad("'%s' has no /cosim group (not a co-simulation run), so --max-residual-energy "
            "cannot be checked",
            paths[1]);
        goto out;
    }
    if (!resolve_checks(ref, paths[1], present, checks, nchecks)) goto out;
    /* the span checked: the run must cover it */
    const double ref_t0 = ref->time[0], ref_t1 = ref->time[ref->n - 1];
    if (span.given) {
        const double eps = 1e-12 * fmax(1.0, fmax(fabs(ref_t0), fabs(ref_t1)));
        if (span.t0 < ref_t0 - eps || span.t1 > ref_t1 + eps) {
            bad("--span %g:%g is not inside the reference's span t = %g .. %g s ('%s')", span.t0, span.t1, ref_t0,
                ref_t1, paths[0]);
            goto out;
        }
    } else {
        span.t0 = ref_t0;
        span.t1 = ref_t1;
    }
    if (!covers(ref, run, span.t0, span.t1)) {
        if (span.given) {
            fprintf(stderr,
                    "hymo: fail: '%s' covers t = %g .. %g s, not the span checked, --span %g:%g (the reference "
                    "'%s': t = %g .. %g s)\n",
                    paths[1], run->time[0], run->time[run->n - 1], span.t0, span.t1, paths[0], ref_t0, ref_t1);
        } else {
            fprintf(stderr,
                    "hymo: fail: '%s' covers t = %g .. %g s, not the reference's span t = %g .. %g s ('%s'); "
                    "--span T0:T1 checks a sub-span\n",
                    paths[1], run->time[0], run->time[run->n - 1], ref_t0, ref_t1, paths[0]);
        }
        code = EXIT_THRESHOLD;
        goto out;
    }
    const int ncomp = hymo_compare_component_offset(ref, HYMO_CMP_SIGNALS);
    crms = calloc(ncomp > 0 ? (size_t)ncomp : 1, sizeof *crms);
    cmax = calloc(ncomp > 0 ? (size_t)ncomp : 1, sizeof *cmax);
    ct = calloc(ncomp > 0 ? (size_t)ncomp : 1, sizeof *ct);
    if (!crms || !cmax || !ct) {
        bad("out of memory");
        goto out;
    }
    hymo_compare_result res;
    if (hymo_compare_components_in(ref, run, present, span.t0, span.t1, &res, crms, cmax, ct, &err) !=
        HYMO_OK) {
        fprintf(stderr, "hymo: error: '%s' vs '%s': %s\n", paths[0], paths[1], err.message);
        goto out;
    }

    print_file_line("reference", paths[0], ref);
    if (csv) {
        int have = 0;
        for (int c = 0; c < ncomp; c++) have += present[c];
        printf("%-10s %s: CSV, %d of %d components, %d rows, t = %g .. %g s\n", "run", paths[1], have, ncomp,
               run->n, run->time[0], run->time[run->n - 1]);
    } else {
        print_file_line("run", paths[1], run);
    }
    if (!declared) {
        printf("%-10s not checked: the CSV declares no model (a '# model_physics_sha256: HEX' line)\n", "model");
    } else if (csv && identity != HYMO_MODEL_DIFFERENT) {
        printf("%-10s the CSV declares the reference's model (%s)\n", "model",
               identity == HYMO_MODEL_SAME_TEXT ? "same model_sha256" : "same model_physics_sha256");
    } else if (identity == HYMO_MODEL_SAME_PHYSICS) {
        printf("%-10s the model files differ only in comments, formatting, description or the simulation "
               "section (same model_physics_sha256)\n",
               "model");
    }
    char span_text[160];
    if (span.given) {
        snprintf(span_text, sizeof span_text, "--span %g:%g of the reference's t = %g .. %g s", span.t0, span.t1,
                 ref_t0, ref_t1);
    } else {
        snprintf(span_text, sizeof span_text, "the reference's whole span");
    }
    printf("%-10s %d reference samples, t = %g .. %g s (%s)\n", "compared", res.n_samples, res.t_start,
           res.t_end, span_text);
    print_table(ref, &res);
    print_cosim(run, ref, &res);

    /* an unreliable estimate of the reference's own error is not its
     * error: said here, and no threshold is judged against it */
    const int own_reliable = ref->summary.has_accuracy && ref->summary.accuracy_reliable != 0;
    if (ref->summary.has_accuracy && !own_reliable)
        printf("%-10s the reference's own error estimate is UNRELIABLE (%.*s); thresholds are not judged "
               "against it\n",
               "accuracy", (int)sizeof ref->summary.accuracy_check, ref->summary.accuracy_check);
    /* a threshold tighter than the reference's own estimated error cannot
     * be judged against it: say so (the check itself still runs) */
    for (int i = 0; i < nchecks && own_reliable; i++) {
        const int k = checks[i].signal;
        const double own = k == HYMO_CMP_Z ? ref->summary.z_max_error
                           : k == HYMO_CMP_P ? ref->summary.p_max_error
                           : k == HYMO_CMP_S ? ref->summary.s_max_error
                                             : -1.0;
        if (own > 0.0 && checks[i].limit < own)
            fprintf(stderr,
                    "hymo: warning: --max-%s %s=%g is tighter than the reference's own estimated max error "
                    "%.3g %s (%s /accuracy); use a more accurate reference (smaller dt or --integrator ida)\n",
                    checks[i].kind == CHECK_RMS ? "rms" : "abs",
                    checks[i].component[0] ? checks[i].component : hymo_compare_signal_name(k), checks[i].limit, own,
                    hymo_compare_signal_unit(ref, k, 0), paths[0]);
    }
    int failed = 0, total = nchecks + (max_energy > 0.0);
    if (total > 0) printf("\n");
    for (int i = 0; i < nchecks; i++) failed += !report_check(ref, &res, crms, cmax, ct, &checks[i]);
    if (max_energy > 0.0) {
        const double v = res.residual_energy_max_abs;
        const int pass = v <= max_energy;
        char ratio[32];
        format_ratio(v / max_energy, ratio, sizeof ratio);
        printf("%s residual_energy max |E_total| = %.2e J %s %.2e J (%sx)\n",
               pass ? "PASS" : "FAIL", v, pass ? "<=" : ">", max_energy, ratio);
        failed += !pass;
    }
    if (total == 0) {
        printf("\nno thresholds given (--max-rms, --max-abs, --max-residual-energy): nothing "
               "to check; the run covers t = %g .. %g s (%s)\n",
               res.t_start, res.t_end, span_text);
    } else if (failed) {
        printf("result: FAIL (%d of %d checks failed) on t = %g .. %g s (%s)\n", failed, total, res.t_start,
               res.t_end, span_text);
    } else {
        printf("result: PASS (%d checks) on t = %g .. %g s (%s)\n", total, res.t_start, res.t_end, span_text);
    }
    code = failed ? EXIT_THRESHOLD : EXIT_PASS;
out:
    hymo_ref_free(ref);
    hymo_ref_free(run);
    free(present);
    free(crms);
    free(cmax);
    free(ct);
    free(checks);
    return code;
}
