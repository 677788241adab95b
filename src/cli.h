/* hymo command-line subcommands implemented outside src/main.c.  Each takes
 * the arguments from the command name on (argv[0] is the command name) and
 * returns the process exit status. */
#ifndef HYMO_CLI_H
#define HYMO_CLI_H

#include <stdio.h>

#include "hymo/cosim.h"

/* `hymo compare REF.h5 RUN.h5 [thresholds]` (docs/compare.md).
 * Exit status: 0 every threshold holds, 1 some threshold fails,
 * 2 bad input (options, unreadable, incomplete or mismatched files). */
int hymo_cli_compare(int argc, char **argv);

/* `hymo cosim MODEL --H S --hh S [options]` (docs/cosimulation.md).
 * Exit status: 0 stable run, 2 bad input, 3 unstable or failed run. */
int hymo_cli_cosim(int argc, char **argv);
/* `hymo sweep MODEL [--H list] [--configs ...] -o TABLE`. */
int hymo_cli_sweep(int argc, char **argv);

/* Finds the one positional argument (the model file; options take one
 * value except -q/--quiet) and loads it.  Returns -1 when loaded, else the
 * exit status to return (0 after --help, 2 on errors, messages printed). */
int hymo_cli_load_model(int argc, char **argv, void (*usage)(FILE *), const char **path, hymo_model **model);
/* The most --set options one command takes. */
#define HYMO_SET_MAX 64
/* The --set PATH=VALUE values among argv[1..argc-1] (at most HYMO_SET_MAX,
 * more is an error: -1 with a message), in order; returns their count. */
int hymo_cli_collect_sets(int argc, char **argv, const char **sets);
/* Prints "overrides    PATH=VALUE" lines (none when n is 0). */
void hymo_cli_print_overrides(FILE *out, const char *const *sets, int n);

/* Shared option parsing: a finite number (message on stderr, -1 if not). */
int hymo_cli_parse_double(const char *opt, const char *text, double *out);
/* Applies one co-simulation option NAME VALUE (shared by cosim and sweep):
 * 1 consumed, 0 not a co-simulation option, -1 bad value (message printed). */
int hymo_cli_cosim_option(const char *name, const char *value, hymo_cosim_options *o);
/* 1 if any accuracy threshold (max_rms, max_abs, max_residual_energy) is set. */
int hymo_cli_cosim_thresholds_given(const hymo_cosim_options *o);
#endif
