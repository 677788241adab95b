/* The one option parser of every hymo command (getopt_long conventions):
 * a command lists its options in a table of hymo_cli_option, each entry
 * naming the option, its short letter, the function that converts and
 * stores its value and where.  Adding an option is adding one entry. */
#define _POSIX_C_SOURCE 200809L /* sigaction, setitimer */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include <sys/statvfs.h>

#include "cli.h"
#include "number.h"
#include "h5util.h" /* hymo_partial_create */

static const hymo_cli_option *find_long(const hymo_cli_option *opts, const char *name, size_t len)
{
    for (const hymo_cli_option *o = opts; o->name; ++o)
        if (strlen(o->name) == len && !strncmp(o->name, name, len)) return o;
    return NULL;
}

static const hymo_cli_option *find_short(const hymo_cli_option *opts, char letter)
{
    for (const hymo_cli_option *o = opts; o->name; ++o)
        if (o->letter && o->letter == letter) return o;
    return NULL;
}

/* Stores one occurrence: a flag sets *(int *)dest = 1; an option with a
 * value calls its setter.  Returns 0, or -1 (message printed). */
static int store(const hymo_cli_option *o, const char *value)
{
    if (!o->set) {
        *(int *)o->dest = 1;
        return 0;
    }
    return o->set(o->name, value, o->dest) ? -1 : 0;
}

int hymo_cli_parse(int argc, char **argv, const hymo_cli_option *opts, void (*usage)(FILE *), const char **pos,
                   int max_pos, int *n_pos)
{
    const char *cmd = argc > 0 ? argv[0] : "hymo";
    int only_positional = 0;
    *n_pos = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const hymo_cli_option *o = NULL;
        const char *value = NULL; /* attached: --name=value, -Lvalue */
        if (only_positional || a[0] != '-' || !a[1]) {
            if (*n_pos == max_pos) {
                fprintf(stderr, "hymo: error: unexpected argument '%s' (see hymo %s --help)\n", a, cmd);
                return EXIT_BAD_INPUT;
            }
            pos[(*n_pos)++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_positional = 1;
            continue;
        }
        if (a[1] == '-') { /* --name, --name=value */
            const char *eq = strchr(a, '=');
            size_t len = eq ? (size_t)(eq - a) : strlen(a);
            if (len == 6 && !strncmp(a, "--help", 6)) {
                if (eq) {
                    fprintf(stderr, "hymo: error: option '--help' takes no value ('%s')\n", a);
                    return EXIT_BAD_INPUT;
                }
                usage(stdout);
                return 0;
            }
            o = find_long(opts, a, len);
            if (!o) {
                fprintf(stderr, "hymo: error: unknown option '%.*s' (see hymo %s --help)\n", (int)len, a, cmd);
                return EXIT_BAD_INPUT;
            }
            if (eq && !o->set) {
                fprintf(stderr, "hymo: error: option '%s' takes no value ('%s')\n", o->name, a);
                return EXIT_BAD_INPUT;
            }
            if (eq) value = eq + 1;
        } else { /* -L, -Lvalue, or flags grouped: -qL value */
            for (const char *c = a + 1; *c; ++c) {
                if (*c == 'h') {
                    usage(stdout);
                    return 0;
                }
                o = find_short(opts, *c);
                if (!o) {
                    fprintf(stderr, "hymo: error: unknown option '-%c'%s%s%s (see hymo %s --help)\n", *c,
                            a[2] ? " in '" : "", a[2] ? a : "", a[2] ? "'" : "", cmd);
                    return EXIT_BAD_INPUT;
                }
                if (o->set) { /* takes the rest of the word, or the next */
                    if (c[1]) value = c + 1;
                    break;
                }
                if (store(o, NULL)) return EXIT_BAD_INPUT;
                o = NULL;
            }
            if (!o) continue;
        }
        if (o->set && !value) {
            if (i + 1 >= argc) {
                fprintf(stderr, "hymo: error: option '%s' needs a value (see hymo %s --help)\n", o->name, cmd);
                return EXIT_BAD_INPUT;
            }
            value = argv[++i]; /* taken as it is, even if it starts with '-' */
        }
        if (store(o, value)) return EXIT_BAD_INPUT;
    }
    return -1;
}

/* ---- setters ---- */

int hymo_cli_str(const char *name, const char *value, void *dest)
{
    (void)name;
    *(const char **)dest = value;
    return 0;
}

int hymo_cli_num(const char *name, const char *value, void *dest)
{
    double v;
    if (!hymo_parse_number(value, HYMO_NUMBER_RANGE, &v)) {
        fprintf(stderr, "hymo: error: %s: '%s' is not a number\n", name, value);
        return -1;
    }
    *(double *)dest = v;
    return 0;
}

int hymo_cli_positive(const char *name, const char *value, void *dest)
{
    double v;
    if (hymo_cli_num(name, value, &v)) return -1;
    if (!(v > 0.0)) {
        fprintf(stderr, "hymo: error: %s: '%s' must be positive\n", name, value);
        return -1;
    }
    *(double *)dest = v;
    return 0;
}

int hymo_cli_append(const char *name, const char *value, void *dest)
{
    hymo_cli_list *l = dest;
    if (l->n == HYMO_CLI_LIST_MAX) {
        fprintf(stderr, "hymo: error: %s: more than %d values\n", name, HYMO_CLI_LIST_MAX);
        return -1;
    }
    l->name[l->n] = name;
    l->value[l->n++] = value;
    return 0;
}

int hymo_cli_parse_double(const char *opt, const char *text, double *out)
{
    return hymo_cli_num(opt, text, out);
}

int hymo_cli_load(const char *cmd, const char *path, const hymo_cli_list *sets, hymo_model **model)
{
    *model = NULL;
    if (!path) {
        fprintf(stderr, "hymo: error: %s: missing MODEL file (see hymo %s --help)\n", cmd, cmd);
        return EXIT_BAD_INPUT;
    }
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_model_load_file_set(path, sets->value, sets->n, model, &err) != HYMO_OK) {
        fprintf(stderr, "hymo: error: %s\n", err.message);
        return EXIT_BAD_INPUT;
    }
    return -1;
}

int hymo_cli_outputs_check(const char *what, const char *const *outs, int n_outs, const char *const *inputs,
                           int n_inputs)
{
    hymo_error err;
    hymo_error_clear(&err);
    if (hymo_output_paths_check(outs, n_outs, inputs, n_inputs, &err) == HYMO_OK) return -1;
    fprintf(stderr, "hymo: error: %s%s%s\n", what ? what : "", what ? ": " : "", err.message);
    return EXIT_BAD_INPUT;
}

void hymo_cli_print_overrides(FILE *out, const char *const *sets, int n)
{
    for (int i = 0; i < n; ++i) fprintf(out, "%-12s %s\n", i ? "" : "overrides", sets[i]);
}

/* The read budget's message, formatted before the timer is armed (the
 * handler may only write(2) and _exit(2)). */
static char budget_message[768];
static size_t budget_len;

static void budget_expired(int sig)
{
    (void)sig;
    ssize_t w = write(STDERR_FILENO, budget_message, budget_len);
    (void)w;
    _exit(2);
}

void hymo_cli_read_budget(const char *path)
{
    struct itimerval tv;
    memset(&tv, 0, sizeof tv);
    if (!path) {
        setitimer(ITIMER_REAL, &tv, NULL);
        return;
    }
    double s = 60.0;
    const char *env = getenv("HYMO_READ_TIMEOUT");
    double v = 0.0;
    if (env && hymo_parse_number(env, 0, &v) && v > 0.0) s = v;
    int n = snprintf(budget_message, sizeof budget_message,
                     "hymo: error: reading '%s' took more than %g s: refused (a damaged file, or one too "
                     "large for the budget; HYMO_READ_TIMEOUT=SECONDS raises it)\n",
                     path, s);
    budget_len = n < 0 ? 0 : (size_t)n < sizeof budget_message ? (size_t)n : sizeof budget_message - 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = budget_expired;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    tv.it_value.tv_sec = (time_t)s;
    tv.it_value.tv_usec = (suseconds_t)((s - (double)(time_t)s) * 1e6);
    if (tv.it_value.tv_sec == 0 && tv.it_value.tv_usec == 0) tv.it_value.tv_usec = 1;
    setitimer(ITIMER_REAL, &tv, NULL);
}
int hymo_cli_size(const char *name, const char *value, void *dest)
{
    static const char suffix[] = "kMGT";
    char num[64];
    const size_t len = strlen(value);
    double scale = 1.0;
    const char *at = len > 0 && len < sizeof num ? strchr(suffix, value[len - 1]) : NULL;
    snprintf(num, sizeof num, "%s", value);
    if (at && value[len - 1]) {
        num[len - 1] = '\0';
        scale = pow(1000.0, (double)(at - suffix + 1));
    }
    double v;
    if (len >= sizeof num || !hymo_parse_number(num, HYMO_NUMBER_RANGE, &v) || !(v >= 0.0)) {
        fprintf(stderr, "hymo: error: %s: '%s' is not a size (bytes >= 0, suffix k, M, G or T; 0: no limit)\n", name,
                value);
        return -1;
    }
    *(double *)dest = v * scale;
    return 0;
}

/* "12.3 GB" */
static void fmt_bytes(char *out, size_t cap, double b)
{
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int k = 0;
    while (b >= 1000.0 && k < 5) b /= 1000.0, ++k;
    snprintf(out, cap, "%.3g %s", b, unit[k]);
}

/* "7.2 h" */
static void fmt_seconds(char *out, size_t cap, double s)
{
    /* two significant digits, whole numbers from 10 on (never an exponent) */
    const char *unit = "s";
    double v = s;
    if (s >= 172800.0) v = s / 86400.0, unit = "days";
    else if (s >= 7200.0) v = s / 3600.0, unit = "h";
    else if (s >= 120.0) v = s / 60.0, unit = "min";
    if (s < 0.0) snprintf(out, cap, "not estimated");
    else if (v >= 10.0) snprintf(out, cap, "about %.0f %s", v, unit);
    else snprintf(out, cap, "about %.2g %s", v, unit);
}

int hymo_cli_output_budget(const char *cmd, const char *out_path, double bytes, const double *seconds_p,
                           double max_bytes, const char *fewer)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", out_path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    struct statvfs fs;
    const double avail = statvfs(dir, &fs) == 0 ? (double)fs.f_bavail * (double)fs.f_frsize : -1.0;
    const int over_limit = max_bytes > 0.0 && bytes > max_bytes, over_disk = avail >= 0.0 && bytes > avail;
    if (!over_limit && !over_disk) return -1;
    if (!seconds_p) return EXIT_BAD_INPUT; /* the check alone */
    char b[32], l[32], t[48];
    fmt_bytes(b, sizeof b, bytes);
    fmt_seconds(t, sizeof t, *seconds_p);
    if (over_disk) {
        fmt_bytes(l, sizeof l, avail);
        fprintf(stderr,
                "hymo: error: %s: the output file %s would be %s (run time %s), more than the %s free in %s; %s\n",
                cmd, out_path, b, t, l, dir, fewer);
    } else {
        fmt_bytes(l, sizeof l, max_bytes);
        fprintf(stderr,
                "hymo: error: %s: the output file %s would be %s (run time %s), more than --max-output-size %s; "
                "allow it with --max-output-size %.3g (0: no limit), or %s\n",
                cmd, out_path, b, t, l, bytes * 1.01, fewer);
    }
    return EXIT_BAD_INPUT;
}

int hymo_cli_temp_create(const char *path, char *tmp, size_t cap) { return hymo_partial_create(path, tmp, cap); }
