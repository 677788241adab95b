/* Internal pieces of the co-simulation run loop (src/cosim/cosim.c), its
 * front ends and the split's subsystem implementations; the master's own
 * are in src/master/master_internal.h. */
#ifndef HYMO_COSIM_INTERNAL_H
#define HYMO_COSIM_INTERNAL_H

#include "hymo/cosim.h"
#include "master_internal.h"
#include "rows.h" /* hymo_now_seconds */

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
    /* bounds of the ring's samples that let a new sample skip the scan
     * when it can change neither figure: monotone queues (sample numbers,
     * cap each, from q_head, q_len entries) of the largest D, the
     * smallest D, the largest r W - D and the largest r W + D; bounds 0
     * once a sample is not finite (then every sample scans) */
    long *q, q_head[4], q_len[4], n_samples, n_scans; /* n_scans: samples whose window was scanned */
    double *qv; /* cap per queue: the queued values */
    int bounds;
} hymo_watch;
/* 0, or -1 out of memory.  ref may be NULL; np pressures per point;
 * communication step H; burst window and fraction r. */
int hymo_watch_init(hymo_watch *w, const hymo_reference *ref, int np, double H, double window, double r);
void hymo_watch_free(hymo_watch *w);
/* The communication point t: pressures p (np), energy-balance error D,
 * cumulative |actuator work| W. */
void hymo_watch_point(hymo_watch *w, double t, const double *p, double D, double W);


/* ---- energy-controlled communication steps (src/cosim/cosim_control.c) ----
 * Every H is q H_min with an integer q (the quantum H_min holds whole
 * internal steps of every subsystem); the counts below are in H_min. */
typedef struct {
    int on;                        /* opt->H_control == HYMO_H_ENERGY */
    double rtol, atol, H_min, H_max;
    double k;                      /* order of the estimate in H (PI exponents 0.7/k, 0.4/k) */
    long q_end, q_grid, q_max;     /* t_end, the output grid (0: none), H_max */
    long q_done, q_step;           /* done; H of the step under way */
    double H_target;               /* the controller's next H (the step is floor(H_target / H_min) quanta) */
    int clipped;                   /* the step under way was clipped to t_end or the output grid */
    int replay;                    /* the steps follow hymo_cosim_control_replay's schedule */
    double est_prev;               /* estimate of the last accepted step */
    int after_reject;              /* the step under way retakes a rejected one: H does not grow after it */
    int can_reject;                /* every subsystem can save and restore its state */
    char note[256];                /* why not (can_reject 0) */
    hymo_master_checkpoint *cp;
    long n_rejected, n_accepted, n_over; /* n_over: accepted with est > 1 (no rejection possible) */
    long rej_now;                  /* rejections of the step under way */
    double est_max, H_sum, H_lo, H_hi;
    /* per accepted step (cap q_end): end time, H, estimate, rejections before it;
     * per rejected step (cap q_end): start time, H, estimate */
    long n_hist, n_rej_hist, cap;
    double *h_t, *h_H, *h_est, *h_rej, *r_t, *r_H, *r_est;
} hymo_cosim_control;

/* Checks the step-control fields of opt (nothing when H_control is
 * fixed): tolerances, H_min <= H <= H_max, H, t_end and output_dt
 * multiples of H_min. */
hymo_status hymo_cosim_control_check(const hymo_cosim_options *opt, hymo_error *err);
/* H_min and H_max in effect (the defaults of hymo_cosim_options). */
void hymo_cosim_control_limits(const hymo_cosim_options *opt, double *H_min, double *H_max);
/* A part of an "RTOL[,ATOL]" option value (which: 0 RTOL, 1 ATOL) into
 * *out: 1, or -1 with err set (name and value: the whole option). */
typedef int (*hymo_cosim_tol_part)(const char *name, const char *value, const char *part, int which, double *out,
                                   hymo_error *err);
/* The option NAME=VALUE "RTOL[,ATOL]" into *rtol and *atol (left alone
 * without a comma), each part checked by check: 1, or -1 with err set
 * ("NAME: 'VALUE' is not SHAPE" when RTOL has 64 characters or more). */
int hymo_cosim_tol_pair_parse(const char *name, const char *value, const char *shape, hymo_cosim_tol_part check,
                              double *rtol, double *atol, hymo_error *err);
/* --tol-energy RTOL,ATOL (or RTOL): 1, or -1 with err set. */
int hymo_cosim_tol_energy_parse(const char *name, const char *value, hymo_cosim_options *o, hymo_error *err);
/* Sets c up for opt over master m whose estimate has order k in H; a
 * master that cannot make a checkpoint leaves can_reject 0 with the
 * reason in note.  Errors: out of memory. */
hymo_status hymo_cosim_control_init(hymo_cosim_control *c, const hymo_cosim_options *opt, hymo_master *m, double k,
                                    hymo_error *err);
void hymo_cosim_control_free(hymo_cosim_control *c);
/* 1 when t_end is reached. */
int hymo_cosim_control_done(const hymo_cosim_control *c);
/* Before a step: saves the checkpoint and sets the master's H (clipped to
 * land on t_end and the output grid); returns that H. */
double hymo_cosim_control_begin(hymo_cosim_control *c, hymo_master *m);
/* After the step with estimate est: 1 accepted (the next H set by the PI
 * controller), 0 rejected (master and subsystems restored, a smaller H
 * set).  t: the step's start time. */
int hymo_cosim_control_end(hymo_cosim_control *c, hymo_master *m, double t, double est);
/* Tests: the steps of the controlled runs that follow take the step
 * sizes H[0..n-1] (s) in turn and reject none, still saving the
 * checkpoint before every step; NULL ends it.  Not thread-safe. */
void hymo_cosim_control_replay(const double *H, long n);
/* The estimate of a step: max over the bonds of |dE_b| / (rtol E_b + atol). */
double hymo_cosim_control_estimate(const hymo_cosim_control *c, int nb, const double *dE, const double *E_tr);

#endif
