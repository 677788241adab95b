/* Internal pieces of the co-simulation master (src/cosim/master.c), its users
 * (src/cosim/cosim.c, src/cosim/linear.c) and the subsystem implementations. */
#ifndef HYMO_COSIM_INTERNAL_H
#define HYMO_COSIM_INTERNAL_H

#include "hymo/cosim.h"
#include "hymo/master.h"
#include "hymo/subsystem.h"
#include "rows.h" /* hymo_now_seconds */

/* Polynomial through n <= 4 points (t_i, y_i), as coefficients of
 * (t - t0)^k, k < HYMO_POLY_TERMS (higher ones zero). */
void hymo_poly_fit(int n, const double *t, const double *y, double t0, double *coef);

/* A subsystem in a master (src/cosim/cosim_nodes.c): where its inputs come from
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

/* Scheme table (hymo_cosim_scheme; rows in src/cosim/cosim_tables.c): the
 * default stage of subsystem k of n, and whether the stages follow an
 * order of the subsystems (a system file's order: list). */
typedef struct {
    const char *system_name; /* in system files and their output: "jacobi", "gauss-seidel" */
    int ordered;
    int (*stage)(int k, int n);
} hymo_scheme_table;
/* The row of scheme s, or NULL out of range. */
const hymo_scheme_table *hymo_scheme_table_of(hymo_cosim_scheme s);

/* The master (src/cosim/master.c, hymo/master.h). */
struct hymo_master {
    int n;
    hymo_cosim_node *nodes;
    int *seq; /* subsystems ordered by (stage, index) */
    int seq_valid;
    hymo_master_options opt;
    long steps; /* communication steps done: t = steps H */
};

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

/* Variable table of a subsystem implementation (src/cosim/cosim_nodes.c): the
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


/* Power-bond residual (seed 000 Eq. 21, sign: energy created at the
 * interface is positive): the mechanics receives F_mech_in sd_mech_out,
 * the hydraulics delivers F_hyd_out sd_hyd_in. */
static inline double hymo_cosim_residual_power(double F_mech_in, double sd_mech_out, double F_hyd_out,
                                               double sd_hyd_in)
{
    return F_mech_in * sd_mech_out - F_hyd_out * sd_hyd_in;
}
/* Residual energy of one communication step (seed 000 Eqs. 23-24):
 * rectangle rule for zero-order extrapolation, trapezoidal otherwise. */
static inline double hymo_cosim_residual_energy_step(int rectangle, double H, double dP_prev, double dP)
{
    return rectangle ? H * dP : 0.5 * H * (dP_prev + dP);
}


/* Online verdict figures (src/cosim/watch.c): the largest pressure error
 * against a reference and the largest energy-balance burst, updated at
 * each communication point (hymo_watch_point) from that point alone. */
#define HYMO_WATCH_RING 256
typedef struct {
    const hymo_reference *ref; /* NULL: none */
    int np, p_ref;             /* pressures per point; compared with ref's */
    long ref_i;                /* reference row cursor */
    double p_err, p_err_t;     /* max |p - p_ref|, Pa, and its time */
    double window, r;          /* burst window, s; fraction r of the work */
    long stride, n_points;     /* a sample every stride points */
    int cap, len, head;        /* ring of samples */
    double *t, *D, *W;
    double jump;               /* max |D(t) - D(s)|, s in the window, J */
    double jump_excess, jump_at, jump_t0, jump_t1; /* max |dD| - r dW, its |dD| and window */
} hymo_watch;
/* 0, or -1 out of memory.  ref may be NULL; np pressures per point;
 * communication step H; burst window and fraction r. */
int hymo_watch_init(hymo_watch *w, const hymo_reference *ref, int np, double H, double window, double r);
void hymo_watch_free(hymo_watch *w);
/* The communication point t: pressures p (np), energy-balance error D,
 * cumulative |actuator work| W. */
void hymo_watch_point(hymo_watch *w, double t, const double *p, double D, double W);

#endif
