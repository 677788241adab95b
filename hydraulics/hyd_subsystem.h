/* Hydraulic subsystem of split-mode co-simulation (SPEC §7): one circuit
 * (hymo_circuit_part) integrated on its own with a prescribed cylinder
 * motion, by forward Euler, classical RK4 or the trapezoidal rule.
 *
 * State y = [part's pressures; part's spools]. The motion over the next
 * communication step comes as cubic polynomials (hymo_hyd_sub_set_motion);
 * the spool references U_ref(t) come from the model's signals, with
 * one-sided limits at breakpoints as in the monolithic engine (right limit
 * at a step start, left limit at a step end, a time within 1e-6 h of a
 * breakpoint counts as the breakpoint).
 *
 * Nothing is allocated after hymo_hyd_sub_create. */
#ifndef HYMO_HYD_SUBSYSTEM_H
#define HYMO_HYD_SUBSYSTEM_H

#include <math.h>

#include "circuit.h"
#include "hymo/subsystem.h" /* hymo_steps_per_communication */

/* hymo_hyd_integrator_kind, hymo_hyd_integrator_name ("euler", "rk4",
 * "trapezoidal"; "?" if unknown) and hymo_hyd_integrator_parse (0 ok, -1
 * unknown) are public: include/hymo/cosim.h. */
#include "hymo/cosim.h"

typedef struct hymo_hyd_sub hymo_hyd_sub;

/* circ: constants resolved at t = 0 (s0, chamber lengths) - shared, not
 * copied (must outlive the subsystem); model likewise. part is copied.
 * p0[np], u0[nu]: full-size initial pressures/spools (only the part's
 * entries are used). h: internal step h_h. tol_pressure / tol_spool:
 * Newton increment tolerances (trapezoidal), max_iter Newton iterations per
 * attempt. The initial motion is s = circ->s0, sd = 0 until set_motion. */
hymo_status hymo_hyd_sub_create(const hymo_model *model, const hymo_circuit *circ, const hymo_circuit_part *part,
                                hymo_hyd_integrator_kind kind, double h, double tol_pressure, double tol_spool,
                                int max_iter, const double *p0, const double *u0, hymo_hyd_sub **out,
                                hymo_error *err);
void hymo_hyd_sub_free(hymo_hyd_sub *sub);

/* Motion input over the next do_step: for each actuator c of the part
 * (global index: its cylinders, and its motors as actuator n_cylinders + k,
 * s the joint coordinate and sd the joint rate), s(t) = sum_k cs[4c+k] tau^k, sd(t) = sum_k cv[4c+k] tau^k,
 * tau = t - t0, k = 0..3 (arrays of size 4 na, plain polynomial
 * coefficients). */
void hymo_hyd_sub_set_motion(hymo_hyd_sub *sub, double t0, const double *cs, const double *cv);

/* Internal steps of a communication step H with step h: H/h if that is
 * a whole number (within 1e-9 relative, hymo_steps_per_communication),
 * else ceil(H/h), so that each of the equal steps H/N is at most h; 0 if H
 * or h is not positive and finite or N would exceed 1e9. */
static inline long hymo_hyd_sub_steps(double H, double h)
{
    const long k = hymo_steps_per_communication(H, h);
    if (k > 0 || !(H > 0.0) || !(h > 0.0) || !isfinite(H) || !isfinite(h)) return k;
    const double ratio = H / h, n = ceil(ratio - 1e-9 * ratio);
    return n > 1e9 ? 0 : n < 1.0 ? 1 : (long)n;
}

/* Advances the part's pressures and spools from t to t + H with
 * hymo_hyd_sub_steps(H, h) equal internal steps H/N (HYMO_ERR_ARGUMENT if
 * none). HYMO_ERR_NUMERIC if a state becomes non-finite or a
 * volume non-positive, HYMO_ERR_CONVERGENCE if the trapezoidal Newton fails;
 * then the state is that at the start of the failing internal step. */
hymo_status hymo_hyd_sub_do_step(hymo_hyd_sub *sub, double t, double H, hymo_error *err);

/* Current full-size state arrays (only the part's entries are meaningful). */
const double *hymo_hyd_sub_p(const hymo_hyd_sub *sub);
const double *hymo_hyd_sub_u(const hymo_hyd_sub *sub);

/* The state vector y = [part's pressures; part's spools] (n entries):
 * its size, a copy of it, and a new value (the integrator's history then
 * restarts from it: f0 is re-evaluated).  put_full takes the part's
 * entries of full-size p[np], u[nu]. */
int hymo_hyd_sub_n(const hymo_hyd_sub *sub);
void hymo_hyd_sub_y(const hymo_hyd_sub *sub, double *y);
void hymo_hyd_sub_put_y(hymo_hyd_sub *sub, const double *y);
void hymo_hyd_sub_put_full(hymo_hyd_sub *sub, const double *p, const double *u);

/* Cylinder force F_s (SPEC §2) at the current pressures with the motion
 * polynomial evaluated at t: force[c] for the part's cylinders, and the
 * torque of its motors (hymo_motor_torque_d) at force[n_cylinders + k]. */
void hymo_hyd_sub_force(const hymo_hyd_sub *sub, double t, double *force);

/* State get/set (retried steps, Gauss-Seidel): the part's p and u plus the
 * integrator history (trapezoidal: last derivatives, Jacobian factors), so
 * that a step from a restored state repeats bit-identically. */
int hymo_hyd_sub_state_size(const hymo_hyd_sub *sub);
void hymo_hyd_sub_get_state(const hymo_hyd_sub *sub, double *buf);
void hymo_hyd_sub_set_state(hymo_hyd_sub *sub, const double *buf);

/* Counters: internal steps, right-hand-side evaluations (including those of
 * finite-difference Jacobians), Newton iterations. */
void hymo_hyd_sub_stats(const hymo_hyd_sub *sub, long *steps, long *rhs_evals, long *newton_iters);

/* Extra accessors. */
const hymo_circuit_part *hymo_hyd_sub_part(const hymo_hyd_sub *sub);
hymo_hyd_integrator_kind hymo_hyd_sub_kind(const hymo_hyd_sub *sub);
/* Number of Jacobian refreshes (trapezoidal). */
long hymo_hyd_sub_jacobians(const hymo_hyd_sub *sub);

/* ---- TLM coupling (seed 003 §3.1, SPEC §7) ----
 *
 * A volume node of the part that holds a cylinder chamber becomes the
 * hydraulic end of a loss-less, purely capacitive TLM line (the line *is*
 * the node's compliance): its pressure is no longer a state but the
 * algebraic boundary value
 *     p_h = c_m(t - T) + Z_c Q_h,
 * with Q_h the net flow into the node from the part's other elements
 * (valves, throttles, relief and check valves), c_m the wave the other
 * (mechanical) end sent, T the delay and Z_c the line's impedance.  The
 * lines' pressures are solved by Newton inside every right-hand side; their
 * entries of y keep the latest solution (the next warm start) and have zero
 * rate.  The cylinders of a TLM line must be given a constant motion
 * (s at the step start, sd = 0): the chamber's volume rate is the
 * mechanics' flow at the other end of the line. */

/* Compliance C(p) = V / B_e(p) (m^3/Pa) of volume node `node` at actuator
 * lengths s[na] and pressure p: V / B_f(p) (the fluid law; V / B_oil for
 * the constant one) plus the sum over its parts of V_part / B_part plus the
 * charged accumulators' A(p), as hymo_circuit_eval combines them: its
 * pdot = (Q - Vdot) / C.  0 for a node that is not a volume. */
double hymo_tlm_compliance(const hymo_circuit *circ, const hymo_model *model, int node, const double *s, double p);

/* TLM line impedance Z_c = T / C(p) (seed 003 Eq. 5, Z_c = K T / V;
 * parasitic inductance L = T Z_c, Eq. 7), with C of
 * hymo_tlm_compliance and the accumulators' branch decided by p alone (not
 * by a switching state), so that both line ends get the bit-identical
 * value from the same s and p; p is taken no lower than 1 Pa above the
 * fluid's floor (hymo_fluid_floor). */
double hymo_tlm_impedance(const hymo_circuit *circ, const hymo_model *model, int node, const double *s, double p,
                          double T);

/* The pressure hymo_tlm_impedance is evaluated at: the mean of the line's
 * two port pressures at the step start t, p = (p_1(t) + p_2(t)) / 2 =
 * ((a + b) + (a' + b')) / 4 with a, b the two ends' waves at t and a', b'
 * those at t - H (p_1 = (a + b') / 2, p_2 = (b + a') / 2).  Symmetric in
 * the ends: called with (own, received, own', received') at either end it
 * gives the bit-identical value. */
static inline double hymo_tlm_line_pressure(double a, double b, double a_prev, double b_prev)
{
    return 0.25 * ((a + b) + (a_prev + b_prev));
}

/* Makes volume node `node` (of the part) the hydraulic end of TLM line
 * number hymo_hyd_sub_tlm_count() (before the first step; allocates). */
hymo_status hymo_hyd_sub_tlm_add(hymo_hyd_sub *sub, int node, hymo_error *err);
int hymo_hyd_sub_tlm_count(const hymo_hyd_sub *sub);
/* For the coming step: delay T, Z_c[line] and the wave polynomials
 * c_coef[HYMO_POLY_TERMS line + k] in tau = t - t0, evaluated at
 * tau - T (the wave arrives T after it left). */
void hymo_hyd_sub_tlm_set(hymo_hyd_sub *sub, double t0, double T, const double *zc, const double *c_coef);
/* Pressure p_h and flow Q_h into the line of `line` at the current time
 * (solved at the end of every do_step and at create from p0). */
void hymo_hyd_sub_tlm_end(const hymo_hyd_sub *sub, int line, double *p, double *q);

#endif
