/* Shared helpers for the cmocka tests. */
#ifndef HYMO_TEST_UTIL_H
#define HYMO_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hymo/cosim.h"
#include "hymo/linalg.h"
#include "hymo/model.h"
#include "hymo/reference.h"
#include "hymo/sim.h"

/* Loads data/<name> or fails the test with the loader's message. */
hymo_model *test_load_model(const char *file_name);
/* The same for tests/models/<name>. */
hymo_model *test_load_test_model(const char *file_name);
/* The same for tests/bad_models/<name> (one that loads: it fails later). */
hymo_model *test_load_bad_model(const char *file_name);
/* Loads the model text (origin names it in messages) or fails the test. */
hymo_model *test_load_text(const char *text, const char *origin);
/* The whole text of a file (NUL-terminated, free() it); fails the test if it
 * cannot be read. */
char *test_read_file(const char *path);

/* Reads a reference file or fails the test with the reader's message. */
hymo_reference *test_read_ref(const char *path);
/* hymo_cosim_run (out, if given, removed first) or fails the test with its
 * message. */
void test_cosim_run(const hymo_model *model, const hymo_cosim_options *opt, const hymo_reference *ref,
                    const char *out, hymo_cosim_summary *sum);

/* Runs the split of model for opt over n_steps communication steps, then
 * one more; every subsystem, set back to its get_state snapshot before
 * that step and given the master's inputs again, must repeat its outputs
 * bit for bit (FMI fmi2SetFMUstate semantics); fails the test otherwise. */
void test_cosim_retried_step(const hymo_model *model, const hymo_cosim_options *opt, int n_steps);

/* RMS error of the state `quantity` (HYMO_CMP_*) of a co-simulation run
 * with opt (written to out; it must be stable) at its communication points
 * against the reference fine (whose grid contains them). */
double test_cosim_rms(const hymo_model *model, const hymo_cosim_options *opt, const hymo_reference *fine,
                      const char *out, int quantity);

/* The monolithic run (hymo_run) of model with ro into path (removed
 * first), read back. */
hymo_reference *test_run_ref(const hymo_model *model, const hymo_run_options *ro, const char *path);
/* The same with the model's run options but dt and t_end (each kept at the
 * model's value where <= 0). */
hymo_reference *test_monolithic(const hymo_model *model, double dt, double t_end, const char *path);

/* The co-simulation's order of convergence in H for the approximation
 * orders p = 0, 1, 2: a fine run (H = h_m = h_h = 0.1 ms) into out_ref,
 * then runs at H = 0.4, 0.8, 1.6 ms (h_m = h_h = 0.1 ms) into out_run; the
 * RMS error of `quantity` (HYMO_CMP_*, printed as `what` in `unit`) at
 * their communication points against the fine run; both observed orders
 * log2(e(2H) / e(H)) within tol of p + 1. t_end > 0 sets mech.t_end (else
 * the model's). */
void test_cosim_order(const hymo_model *model, double t_end, int quantity, const char *what, const char *unit,
                      double tol, const char *out_ref, const char *out_run);

/* hymo_sim_create of m with opt (NULL: the model's run options) or fails
 * the test with its message; hymo_sim_free the sim. */
hymo_sim *test_sim_create(const hymo_model *m, const hymo_run_options *opt);
/* The actuator lengths at t = 0 (hymo_sim_na of them, at most max) into s0. */
void test_initial_lengths(const hymo_model *m, double *s0, int max);
/* Creates a sim of m with opt and steps it to opt->t_end (IDA: while
 * t < t_end - 1e-12; a fixed-step integrator: lround(t_end / dt) steps);
 * the time of each new event into t_ev (if given; at most max_ev, NAN for
 * all but the last of several in one step), their number into *n_ev.
 * Returns the sim at t_end (hymo_sim_free it). */
hymo_sim *test_sim_run(const hymo_model *m, const hymo_run_options *opt, double *t_ev, int max_ev, int *n_ev);
/* m's run options to t_end with IDA at rtol 1e-11, atol 1e-13: the
 * reference for event times. */
void test_ida_options(hymo_run_options *opt, const hymo_model *m, double t_end);
/* "IDA rtol 1e-11: n events: t0 t1 ..." */
void test_print_ida_events(int n, const double *t_ev);

/* Bytes the heap holds: glibc's small blocks and the mmap-served ones
 * (0 under another allocator, e.g. AddressSanitizer's). */
size_t test_heap_in_use(void);
/* The exponent p of held(N) ~ N^p from the heap held (KB) at N and 4N,
 * printed with label and asserted <= bound; the test is skipped where the
 * heap cannot be measured (k_n == 0). */
void test_heap_exponent(const char *label, double k_n, double k_4n, double bound);

/* Pressure-state index of the volume and node index of the hydraulic node
 * called name (fails the test if there is none). */
int test_volume_state(const hymo_model *m, const char *name);
int test_node_index(const hymo_model *m, const char *name);

/* |a - b| <= tol, printing both values on failure. */
#define assert_close(a, b, tol) test_assert_close((a), (b), (tol), #a, #b, __FILE__, __LINE__)
void test_assert_close(double a, double b, double tol, const char *sa, const char *sb,
                       const char *file, int line);

/* Allocations counted by tests/alloc_count.c (only in the tests linked
 * with it and the malloc/calloc/realloc wraps). */
extern long test_n_allocs;

/* xorshift64 uniform number in [-1, 1) from *state (reproducible). */
double test_urand_pm1(uint64_t *state);
/* Relative residual |A x - b|_inf / (|A|_inf |x|_inf) of the column-major
 * n x n matrix a. */
double test_rel_residual(int n, const double *a, const double *x, const double *b);
/* The column-major n x n matrix a by compressed columns: its non-zeros,
 * and every `zeros`-th zero stored as an explicit zero (0: none); *sp is
 * allocated on the first call (n_cols 0) and reused. */
void test_sparse_from_dense(int n, const double *a, int zeros, hymo_sparse *sp);

/* hymo_run of m with opt into path, read back and the file removed: the
 * reference (the caller frees it) and the run's summary in *sum; a failure
 * fails the test. */
hymo_reference *test_run_to_file(const hymo_model *m, const hymo_run_options *opt, const char *path,
                                 hymo_run_summary *sum);

#endif
