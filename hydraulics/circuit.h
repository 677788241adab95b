/* Lumped-fluid hydraulic circuit (SPEC §2): volumes, throttles, 4/3 valves
 * with spool dynamics, constant-pressure sources, double-acting cylinders. */
#ifndef HYMO_CIRCUIT_H
#define HYMO_CIRCUIT_H

#include "hymo/model.h"

/* Per-run constants resolved from the initial geometry. */
typedef struct {
    int na, np, nv;
    double *s0;      /* actuator length at t = 0 */
    double *l_pist0; /* chamber lengths at s0   */
    double *l_rod0;
} hymo_circuit;

hymo_status hymo_circuit_init(hymo_circuit *circ, const hymo_model *model, const double *s0,
                              hymo_error *err);
void hymo_circuit_free(hymo_circuit *circ);

/* Pressure of node k (volume state or source). */
static inline double hymo_node_pressure(const hymo_model *model, int node, const double *p)
{
    const hymo_node *n = &model->nodes[node];
    return n->kind == HYMO_NODE_VOLUME ? p[n->state] : n->pressure;
}

/* Chamber lengths of cylinder c at actuator length s. */
void hymo_cylinder_lengths(const hymo_circuit *circ, int c, double s, double *l_pist, double *l_rod);

/* End-damper force of cylinder c (SPEC §2, added to F_s). */
double hymo_cylinder_damper_force(const hymo_model *model, const hymo_circuit *circ, int c, double s,
                                  double sd);

/* Right-hand sides and actuator forces:
 *   pdot[np] = h(p, s, sd, U), udot[nv] = (U_ref - U)/tau, force[na] = F_s.
 * Any output pointer may be NULL. Returns 0, or -1 if a volume became
 * non-positive (then outputs are undefined). */
int hymo_circuit_eval(const hymo_circuit *circ, const hymo_model *model, const double *s,
                      const double *sd, const double *p, const double *u, const double *u_ref,
                      double *pdot, double *udot, double *force);

/* Initial pressures (SPEC §3): given the actuator forces f_static[na] that
 * hold the mechanism at rest, fills p[np]: given pressures as stated,
 * piston (or rod) chambers from the force balance, and every other
 * "static" volume from the volume it is joined to through a throttle. */
hymo_status hymo_circuit_static_pressures(const hymo_circuit *circ, const hymo_model *model,
                                          const double *s, const double *f_static, double *p,
                                          hymo_error *err);

#endif
