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
} hymo_watch;
/* 0, or -1 out of memory.  ref may be NULL; np pressures per point;
 * communication step H; burst window and fraction r. */
int hymo_watch_init(hymo_watch *w, const hymo_reference *ref, int np, double H, double window, double r);
void hymo_watch_free(hymo_watch *w);
/* The communication point t: pressures p (np), energy-balance error D,
 * cumulative |actuator work| W. */
void hymo_watch_point(hymo_watch *w, double t, const double *p, double D, double W);

#endif
