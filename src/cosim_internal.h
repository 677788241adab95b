/* Internal pieces of the co-simulation driver (src/cosim*.c). */
#ifndef HYMO_COSIM_INTERNAL_H
#define HYMO_COSIM_INTERNAL_H

#include "engine.h"
#include "hyd_subsystem.h"
#include "hymo/cosim.h"
#include "hymo/master.h"
#include "hymo/subsystem.h"

/* Mechanical subsystem (src/cosim_mech.c): engine in split mode. */
hymo_status hymo_cosim_mech_create(const hymo_model *model, const hymo_cosim_options *opt, hymo_subsystem **out,
                                   hymo_error *err);
hymo_sim *hymo_cosim_mech_sim(hymo_subsystem *sub);

/* Hydraulic subsystem of one circuit (src/cosim_hyd.c). Inputs per
 * cylinder c of the part (local index i): s (2i), sd (2i+1); outputs:
 * velocity-force F_s (i), velocity-pressure p_pist (2i), p_rod (2i+1). */
hymo_status hymo_cosim_hyd_create(const hymo_model *model, const hymo_cosim_options *opt, const hymo_circuit *circ,
                                  const hymo_circuit_part *part, const double *p0, const double *u0,
                                  hymo_subsystem **out, hymo_error *err);
hymo_hyd_sub *hymo_cosim_hyd_sub(hymo_subsystem *sub);
/* Time of the outputs after the master advanced the circuit itself
 * (interface-model micro-steps). */
void hymo_cosim_hyd_set_clock(hymo_subsystem *sub, double t);

/* Polynomial through n <= 4 points (t_i, y_i), as coefficients of
 * (t - t0)^k, k < HYMO_POLY_TERMS (higher ones zero). */
void hymo_poly_fit(int n, const double *t, const double *y, double t0, double *coef);

/* A subsystem in a master (src/cosim_nodes.c): where its inputs come from,
 * its last input polynomials and the history of its outputs at the latest
 * communication points (newest first), from which the inputs of the
 * subsystems reading it are extrapolated (Lagrange, seed 000 / 004) or, in
 * Gauss-Seidel when it has already advanced, interpolated. */
#define HYMO_COSIM_HIST HYMO_POLY_TERMS
typedef struct {
    hymo_subsystem *sub;
    int *src_sub, *src_out; /* per input: the node and the output it reads */
    double *coef;           /* HYMO_POLY_TERMS per input, last set */
    double hist_t[HYMO_COSIM_HIST];
    double *hist_y; /* HYMO_COSIM_HIST x n_outputs */
    int n_hist;
} hymo_cosim_node;

/* The generic master (src/master.c, hymo/master.h). */
struct hymo_master {
    int n;
    hymo_cosim_node *nodes;
    hymo_master_options opt;
    long steps; /* communication steps done: t = steps H */
};

/* Arrays for nd->sub's sizes (nd->sub set); 0, or -1 out of memory. */
int hymo_cosim_node_alloc(hymo_cosim_node *nd);
/* Frees the arrays (not the subsystem). */
void hymo_cosim_node_free(hymo_cosim_node *nd);
/* Appends the subsystem's current outputs at time t to the history. */
void hymo_cosim_node_push(hymo_cosim_node *nd, double t);
/* Sets the inputs of nodes[k] for the step from t: per input the Lagrange
 * polynomial of order <= p through its source's latest history points. */
void hymo_cosim_node_set_inputs(hymo_cosim_node *nodes, int k, double t, int p);

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

#endif
