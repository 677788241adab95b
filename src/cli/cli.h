/* hymo command-line subcommands implemented outside src/cli/main.c.  Each takes
 * the arguments from the command name on (argv[0] is the command name) and
 * returns the process exit status. */
#ifndef HYMO_CLI_H
#define HYMO_CLI_H

#include <stdio.h>

#include "hymo/cosim.h"
#include "hymo/reference.h"

/* Exit codes of the hymo executable, the same meaning in every command
 * (README "Exit codes"): 0 success (compare: every threshold holds),
 * 1 the run is judged and fails (compare: a threshold, the span, an
 * unfinished or unstable run, another model; cosim: inaccurate), 2 bad input,
 * 3 the run stopped (cosim: unstable or failed). */
#define EXIT_PASS 0
#define EXIT_THRESHOLD 1
#define EXIT_INACCURATE 1
#define EXIT_BAD_INPUT 2
#define EXIT_RUN_FAILED 3

/* `hymo compare REF.h5 RUN.h5 [thresholds]` (docs/compare.md).
 * Exit status: 0 every threshold holds, 1 some threshold fails,
 * 2 bad input (options, unreadable, incomplete or mismatched files). */
int hymo_cli_compare(int argc, char **argv);

/* `hymo cosim MODEL --H S --hh S [options]` (docs/cosimulation.md).
 * Exit status: 0 stable run, 2 bad input, 3 unstable or failed run. */
int hymo_cli_cosim(int argc, char **argv);
/* `hymo fmu ...` (docs/fmi.md; src/cli/fmu_cli.c). */
int hymo_cli_fmu(int argc, char **argv);
/* `hymo sweep MODEL [--H list] [--configs ...] -o TABLE`, on the threads
 * of this process. */
int hymo_cli_sweep(int argc, char **argv);

/* How a sweep spreads its runs over processes: one process (threads only;
 * hymo_cli_sweep), or the ranks of an MPI job (src/cli/cli_mpi.c, built with
 * -DHYMO_MPI=ON).  Every rank runs the same sweep over its share of the
 * runs; rank 0 computes the references, sends them to the others, gathers
 * the results and writes the tables.  The calls other than layout are
 * collective: every rank makes them, in the same order. */
typedef struct {
    /* this rank, the number of ranks, the ranks on this node */
    void (*layout)(void *content, int *rank, int *size, int *local_size);
    /* the largest v over the ranks */
    int (*max)(void *content, int v);
    /* the sum of v over the ranks */
    long (*sum)(void *content, long v);
    /* rank 0's *n bytes at *data on every rank (the others get a malloc'd
     * copy, free()d by the caller): 0, or -1 with a message */
    int (*bcast)(void *content, void **data, size_t *n);
    /* every rank's n bytes at mine, concatenated in rank order into a
     * malloc'd *all of *n_all bytes on rank 0: 0, or -1 with a message */
    int (*gather)(void *content, const void *mine, size_t n, void **all, size_t *n_all);
} hymo_sweep_comm_ops;
typedef struct {
    void *content;
    const hymo_sweep_comm_ops *ops;
} hymo_sweep_comm;

/* The sweep over comm's ranks (NULL: this process only). */
int hymo_cli_sweep_with(int argc, char **argv, const hymo_sweep_comm *comm);
/* `hymo sweep` as the command runs it (src/cli/cli_mpi.c, linked into the hymo
 * executable only): under mpirun with an MPI build, over the job's ranks
 * (MPI initialised and finalised here); otherwise hymo_cli_sweep. */
int hymo_cli_sweep_main(int argc, char **argv);

/* The configuration grid of sweep and predict (src/cli/sweep.c):
 * "coupling=a,b;extrapolation=0,2;hyd=...;mech=...;scheme=...;inputs=...",
 * per key (in that order) n values v (enum values); hymo_cli_parse_grid
 * sets the keys the text names (the caller fills the others): 0, or -1
 * after one error line. */
#define HYMO_CLI_GRID_KEYS 6
typedef struct {
    int n[HYMO_CLI_GRID_KEYS];
    int v[HYMO_CLI_GRID_KEYS][8];
} hymo_cli_grid;
int hymo_cli_parse_grid(const char *spec, hymo_cli_grid *g);
/* The communication steps of --H (LIST, or NULL: the default list
 * 0.5e-3,1e-3,2e-3,3e-3,4e-3,5e-3,6e-3,8e-3,10e-3,15e-3) into Hs (at most
 * HYMO_CLI_LIST_MAX), ascending: 0, or -1 after one error line. */
int hymo_cli_parse_h_list(const char *h_list, double *Hs, int *n_out);
/* `hymo predict MODEL [--reference REF.h5] [--configs ...] [--H list]`
 * (src/cli/cli_predict.c; docs/cosimulation.md). */
int hymo_cli_predict(int argc, char **argv);

/* ---- option parsing (src/cli/cli_args.c): one parser for every command ----
 * A command lists its options in a table ended by {NULL}; each entry is one
 * line: {"--name", 'L' or 0, setter, &destination}.  hymo_cli_parse accepts
 * the getopt_long forms --name value, --name=value, -L value, -Lvalue and
 * grouped flags (-qo OUT); -h/--help prints the usage; `--` ends the options.
 * A value is taken as it is, even when it starts with '-' (--dt -1).  Long
 * names are matched exactly (no abbreviations). */
typedef struct {
    const char *name; /* "--dt" */
    char letter;      /* 'o' for -o; 0: no short form */
    /* converts and stores value into dest: 0, or non-zero after printing
     * "hymo: error: NAME: ..." on stderr.  NULL: a flag without value,
     * *(int *)dest = 1. */
    int (*set)(const char *name, const char *value, void *dest);
    void *dest;
} hymo_cli_option;

/* Parses argv[1..argc-1] (argv[0] is the command name) against opts,
 * calling the setters in command-line order; the other arguments go to
 * pos[0..max_pos-1] (*n_pos of them).  Returns -1 when parsed, else the exit
 * status: 0 after --help, 2 after one error line on stderr (unknown option,
 * missing value, a value given to a flag, a bad value, a surplus argument). */
int hymo_cli_parse(int argc, char **argv, const hymo_cli_option *opts, void (*usage)(FILE *), const char **pos,
                   int max_pos, int *n_pos);

/* The most values one repeatable option list takes (and --set options). */
#define HYMO_CLI_LIST_MAX 64
#define HYMO_SET_MAX HYMO_CLI_LIST_MAX
/* A repeatable option's values in command-line order, with the option's
 * name (one list may collect several options). */
typedef struct {
    int n;
    const char *name[HYMO_CLI_LIST_MAX];
    const char *value[HYMO_CLI_LIST_MAX];
} hymo_cli_list;

/* Setters (dest types): the text as it is (const char **), a finite number
 * (double *), a positive finite number (double *), appended to a list
 * (hymo_cli_list *; more than HYMO_CLI_LIST_MAX is an error). */
int hymo_cli_str(const char *name, const char *value, void *dest);
int hymo_cli_num(const char *name, const char *value, void *dest);
int hymo_cli_positive(const char *name, const char *value, void *dest);
int hymo_cli_append(const char *name, const char *value, void *dest);
/* A size in bytes (double *): a number >= 0 with an optional suffix k, M,
 * G or T (powers of 1000); 0 is no limit. */
int hymo_cli_size(const char *name, const char *value, void *dest);
/* Creates "PATH.XXXXXX.partial" exclusively in the directory of path, a
 * name unique per process and call (hymo_partial_create), its name in tmp;
 * 0 or an errno. */
int hymo_cli_temp_create(const char *path, char *tmp, size_t cap);
/* The default of --max-output-size, bytes. */
#define HYMO_CLI_MAX_OUTPUT_DEFAULT 1e10
/* Before a run writes out_path: refuses (one error line, returns 2) when
 * its estimated size `bytes` exceeds max_bytes (> 0) or the free space of
 * the file system of out_path, naming the size, the time *seconds (< 0:
 * not estimated), the flag that allows it and `fewer` (what makes the
 * file smaller, e.g. "fewer rows with a larger --H, or a shorter
 * --t-end"); else returns -1.  With seconds NULL: the same answer,
 * nothing printed. */
int hymo_cli_output_budget(const char *cmd, const char *out_path, double bytes, const double *seconds,
                           double max_bytes, const char *fewer);

/* Loads the model file `path` (of command cmd; NULL: missing) with the
 * --set overrides in sets.  Returns -1 when loaded, else 2 after one error
 * line. */
int hymo_cli_load(const char *cmd, const char *path, const hymo_cli_list *sets, hymo_model **model);
/* The output check of every command that writes files (run, cosim,
 * sweep, fmu), before any work: hymo_output_paths_check of the n_outs
 * files the command will write against the n_inputs files it reads and
 * against each other.  Returns -1 when they pass, else 2 after one error
 * line naming both paths (prefixed by "what: " unless what is NULL). */
int hymo_cli_outputs_check(const char *what, const char *const *outs, int n_outs, const char *const *inputs,
                           int n_inputs);
/* Prints "overrides    PATH=VALUE" lines (none when n is 0). */
void hymo_cli_print_overrides(FILE *out, const char *const *sets, int n);

/* The time budget of reading one file (hymo info, hymo compare): from
 * this call on, reading `path` may take HYMO_READ_TIMEOUT seconds
 * (environment; default 60); past it the process prints one line
 * ("hymo: error: reading 'PATH' took more than S s: refused ...") and
 * exits 2.  path NULL ends the budget. */
void hymo_cli_read_budget(const char *path);

/* A finite number (message on stderr, -1 if not). */
int hymo_cli_parse_double(const char *opt, const char *text, double *out);

/* The co-simulation options that cosim and sweep share, as table entries:
 * their values are collected in `list` and applied by hymo_cli_cosim_option
 * once the model (and so the defaults) is loaded. */
#define HYMO_CLI_COSIM_OPTIONS(list)                                                                               \
    {"--hh", 0, hymo_cli_append, list}, {"--scheme", 0, hymo_cli_append, list},                                    \
        {"--coupling", 0, hymo_cli_append, list}, {"--extrapolation", 0, hymo_cli_append, list},                   \
        {"--hyd-integrator", 0, hymo_cli_append, list}, {"--mech-integrator", 0, hymo_cli_append, list},           \
        {"--formulation", 0, hymo_cli_append, list}, {"--jacobian", 0, hymo_cli_append, list},                     \
        {"--mech-inputs", 0, hymo_cli_append, list}, {"--t-end", 0, hymo_cli_append, list},                        \
        {"--unstable-ratio", 0, hymo_cli_append, list}, {"--unstable-balance-ratio", 0, hymo_cli_append, list},    \
        {"--unstable-floor", 0, hymo_cli_append, list}, {"--unstable-energy", 0, hymo_cli_append, list},           \
        {"--max-rms", 0, hymo_cli_append, list}, {"--max-abs", 0, hymo_cli_append, list},                          \
        {"--max-residual-energy", 0, hymo_cli_append, list}, {"--max-balance-jump", 0, hymo_cli_append, list},     \
        {"--balance-window", 0, hymo_cli_append, list},                                                            \
        /* communication-step control */                                                                           \
        {"--H-control", 0, hymo_cli_append, list}, {"--tol-energy", 0, hymo_cli_append, list},                     \
        {"--H-min", 0, hymo_cli_append, list}, {"--H-max", 0, hymo_cli_append, list},                              \
        {"--output-dt", 0, hymo_cli_append, list},                                                                 \
        /* iterative coupling */                                                                                   \
        {"--iterate", 0, hymo_cli_append, list}, {"--iterate-tol", 0, hymo_cli_append, list},                      \
        {"--iterate-accel", 0, hymo_cli_append, list}
/* Applies the collected co-simulation options to o in order: 0, or -1
 * after one error line. */
int hymo_cli_cosim_apply(const hymo_cli_list *list, hymo_cosim_options *o);
/* Applies one co-simulation option NAME VALUE (shared by cosim and sweep;
 * hymo_cosim_option, src/cosim/cosim_options.c, with its error on stderr):
 * 1 consumed, 0 not a co-simulation option, -1 bad value (message printed). */
int hymo_cli_cosim_option(const char *name, const char *value, hymo_cosim_options *o);
/* 1 if any accuracy threshold (max_rms, max_abs, max_residual_energy) is set. */
int hymo_cli_cosim_thresholds_given(const hymo_cosim_options *o);
#endif
