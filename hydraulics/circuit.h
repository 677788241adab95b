/* Lumped-fluid hydraulic circuit (SPEC §2): volumes, throttles, 4/3 valves
 * with spool dynamics, constant-pressure sources, double-acting cylinders. */
#ifndef HYMO_CIRCUIT_H
#define HYMO_CIRCUIT_H

#include "hymo/model.h"

/* One hydraulic circuit (SPEC §7 split mode): a connected component of
 * volume nodes joined by throttles, valves (any pair of their ports that are
 * volumes) and cylinders (piston node - rod node). Sources never join
 * circuits. All index lists are in increasing order. */
typedef struct {
    int n_volumes;
    int *volumes; /* pressure state indices (into p) */
    int n_valves;
    int *valves; /* valve indices; the spool state is model->valves[v].state */
    int n_throttles;
    int *throttles;
    int n_cylinders;
    int *cylinders; /* cylinder indices */
    char name[64];  /* e.g. "circuit1(cyl1)" */
} hymo_circuit_part;

/* Per-run constants resolved from the initial geometry. */
typedef struct {
    int na, np, nv;
    double *s0;      /* actuator length at t = 0 */
    double *l_pist0; /* chamber lengths at s0   */
    double *l_rod0;
    int *vol_node;          /* np: node index of each pressure state */
    hymo_circuit_part whole; /* the whole model as one part (hymo_circuit_eval) */
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

/* Actuator force F_s of cylinder c (SPEC §2: pressures, viscous term, seal
 * friction, end dampers) at length s, rate sd and pressures p[np]. */
double hymo_cylinder_force(const hymo_model *model, const hymo_circuit *circ, int c, double s, double sd,
                           const double *p);

/* Right-hand sides and actuator forces:
 *   pdot[np] = h(p, s, sd, U), udot[nv] = (U_ref - U)/tau, force[na] = F_s.
 * Any output pointer may be NULL. Returns 0, or -1 if a volume became
 * non-positive (then outputs are undefined). */
int hymo_circuit_eval(const hymo_circuit *circ, const hymo_model *model, const double *s,
                      const double *sd, const double *p, const double *u, const double *u_ref,
                      double *pdot, double *udot, double *force);

/* Splits the model into its circuits, ordered by their smallest cylinder
 * index (circuits without a cylinder last, by smallest volume). A throttle,
 * valve or cylinder touching no volume is a HYMO_ERR_MODEL error naming it.
 * Free with hymo_circuit_parts_free. */
hymo_status hymo_circuit_partition(const hymo_model *model, hymo_circuit_part **parts, int *n_parts,
                                   hymo_error *err);
void hymo_circuit_parts_free(hymo_circuit_part *parts, int n_parts);

/* As hymo_circuit_eval, restricted to one part: writes pdot only for the
 * part's volumes, udot only for its spools, force only for its cylinders
 * (other entries untouched); reads s, sd only of its cylinders. Full-size
 * arrays (np, nu, na); u_ref is indexed by valve, u/udot by spool state.
 * Returns 0, or -1 if a volume became non-positive. */
int hymo_circuit_eval_part(const hymo_circuit *circ, const hymo_model *model, const hymo_circuit_part *part,
                           const double *s, const double *sd, const double *p, const double *u,
                           const double *u_ref, double *pdot, double *udot, double *force);

/* Same, returning the node index of the first non-positive volume, or -1
 * if all volumes are positive (for messages that name the volume). */
int hymo_circuit_eval_part_node(const hymo_circuit *circ, const hymo_model *model,
                                const hymo_circuit_part *part, const double *s, const double *sd,
                                const double *p, const double *u, const double *u_ref, double *pdot,
                                double *udot, double *force);

/* Initial pressures (SPEC §3): given the actuator forces f_static[na] that
 * hold the mechanism at rest, fills p[np]: given pressures as stated,
 * piston (or rod) chambers from the force balance, and every other
 * "static" volume from the volume it is joined to through a throttle. */
hymo_status hymo_circuit_static_pressures(const hymo_circuit *circ, const hymo_model *model,
                                          const double *s, const double *f_static, double *p,
                                          hymo_error *err);

#endif
