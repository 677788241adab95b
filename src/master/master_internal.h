/* Internal pieces of the generic co-simulation master (src/master/master.c):
 * node histories and input approximation (src/master/nodes.c), the scheme
 * rows, the variable tables of subsystem implementations, and the master's
 * structure, shared with the linear test subsystem (src/master/linear.c)
 * and the co-simulation run loop (src/cosim). */
#ifndef HYMO_MASTER_INTERNAL_H
#define HYMO_MASTER_INTERNAL_H

#include "hymo/master.h"
#include "hymo/subsystem.h"

/* Polynomial through n <= 4 points (t_i, y_i), as coefficients of
 * (t - t0)^k, k < HYMO_POLY_TERMS (higher ones zero). */
void hymo_poly_fit(int n, const double *t, const double *y, double t0, double *coef);

/* A subsystem in a master (src/master/nodes.c): where its inputs come from
 * and how they are approximated, its last input polynomials and the
 * history of its outputs at the latest communication points (newest
 * first), from which the inputs of the subsystems reading it are
 * extrapolated (Lagrange, seed 000 / 004) or, in Gauss-Seidel when it has
 * already advanced, interpolated. */
#define HYMO_COSIM_HIST HYMO_POLY_TERMS
typedef struct {
    hymo_subsystem *sub;
    int *src_sub, *src_out;  /* per input: the node and the output it reads */
    int *order;              /* per input: Lagrange order */
    unsigned char *at_start; /* per input: only points up to the step start */
    double *coef;            /* HYMO_POLY_TERMS per input, last set */
    double hist_t[HYMO_COSIM_HIST];
    double *hist_y; /* HYMO_COSIM_HIST x n_outputs */
    int n_hist;
    int stage;
    int advanced; /* published its outputs in the current step */
} hymo_cosim_node;

/* Scheme table (hymo_cosim_scheme; rows in src/master/master.c): the
 * default stage of subsystem k of n, and whether the stages follow an
 * order of the subsystems (a system file's order: list). */
typedef struct {
    const char *system_name; /* in system files and their output: "jacobi", "gauss-seidel" */
    int ordered;
    int (*stage)(int k, int n);
} hymo_scheme_table;
/* The row of scheme s, or NULL out of range. */
const hymo_scheme_table *hymo_scheme_table_of(hymo_cosim_scheme s);

/* The master (src/master/master.c, hymo/master.h). */
struct hymo_master {
    int n;
    hymo_cosim_node *nodes;
    int *seq; /* subsystems ordered by (stage, index) */
    int seq_valid;
    hymo_master_options opt;
    long steps;    /* communication steps done */
    double t_base; /* time at the last change of H ... */
    long steps_base; /* ... and the steps done then: t = t_base + (steps - steps_base) H */
};

/* One communication step from t by H (src/master/master.c): in stage
 * order, each stage's inputs set from the histories, its subsystems
 * stepped, then publish(nd, t + H) for each of them; the step is counted
 * when every subsystem succeeded.  The ordinary step publishes a new
 * history point, a retake of the iteration replaces it. */
hymo_status hymo_master_run_stages(hymo_master *m, double t, double H, void (*publish)(hymo_cosim_node *nd, double t1),
                                   hymo_error *err);

/* Arrays for nd->sub's sizes (nd->sub set), inputs of Lagrange order p;
 * 0, or -1 out of memory. */
int hymo_cosim_node_alloc(hymo_cosim_node *nd, int p);
/* Frees the arrays (not the subsystem). */
void hymo_cosim_node_free(hymo_cosim_node *nd);
/* Appends the subsystem's current outputs at time t to the history. */
void hymo_cosim_node_push(hymo_cosim_node *nd, double t);
/* Sets the inputs of nodes[k] for the step from t from its sources'
 * histories. */
void hymo_cosim_node_set_inputs(hymo_cosim_node *nodes, int k, double t);

/* Variable table of a subsystem implementation (src/master/nodes.c): the
 * hymo_variable entries and, per value reference, what it reads (a kind
 * of the implementation's choosing and an index). */
typedef struct {
    int n, cap;
    hymo_variable *var;
    int *kind, *index;
} hymo_var_table;
/* Appends a variable named by printf(fmt, ...); 0, or -1 out of memory
 * (the table stays valid). */
int hymo_var_table_add(hymo_var_table *t, int kind, int index, hymo_var_type type, const char *unit,
                       const char *description, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;
void hymo_var_table_free(hymo_var_table *t);
/* hymo_subsystem_ops.variable for a table */
static inline const hymo_variable *hymo_var_table_get(const hymo_var_table *t, int vr)
{
    return vr >= 0 && vr < t->n ? &t->var[vr] : NULL;
}

#endif
