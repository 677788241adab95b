/* Shared semirecursive kinematics and dynamics (SPEC §1.2, seed 002 §2.1).
 *
 * Velocity convention: Z_j = [sdot_j; omega_j], sdot_j = velocity of the body
 * point that coincides with the global origin; Zdot_j = d/dt Z_j.  With this
 * convention the velocity-dependent body force is
 *     Qbar_j = [ f - m w x gdot ; tau - w x J w + g x (f - m w x gdot) ],
 * gdot = sdot + w x g.  (SPEC/seed 002 Eq. 10 write w x (w x m g) for
 * m w x gdot, which is the same only when sdot = 0; the difference is the
 * m w x sdot term.  Our form is the one that conserves energy; the tests
 * check M' and Q' against Lagrange's equations by finite differences.) */
#ifndef HYMO_KINEMATICS_H
#define HYMO_KINEMATICS_H

#include "hymo/model.h"

typedef struct {
    int nb;
    /* topology: anc[i*nb + j] = 1 if joint j lies on the path root..i (incl. i) */
    unsigned char *anc;
    /* positions (global) */
    double *R;   /* nb x 9, body rotation, row-major            */
    double *o;   /* nb x 3, body origin (= inboard joint point)  */
    double *u;   /* nb x 3, joint axis                           */
    double *g;   /* nb x 3, centre of mass   (set by forces_begin) */
    double *J;   /* nb x 9, inertia about com (set by forces_begin) */
    /* velocities */
    double *b;   /* nb x 6 */
    double *Z;   /* nb x 6 */
    double *A0;  /* nb x 6, Zdot with zdd = 0 (accumulated d_j)  */
    /* dynamics */
    double *Qbar; /* nb x 6, applied + velocity forces (before -Mbar A0) */
    double *Phat; /* nb x 6, scratch                               */
    int mass_fresh; /* g, J valid for the current positions         */
    double *M;    /* nb x nb, M' (row-major, symmetric)           */
    double *Q;    /* nb, Q'                                        */
} hymo_kin;

hymo_status hymo_kin_init(hymo_kin *kin, const hymo_model *model, hymo_error *err);
void hymo_kin_free(hymo_kin *kin);

/* Body poses, joint axes and b_j at z. */
void hymo_kin_positions(hymo_kin *kin, const hymo_model *model, const double *z);
/* b_j, Z_j and A0_j at zd (after hymo_kin_positions). */
void hymo_kin_velocities(hymo_kin *kin, const hymo_model *model, const double *zd);

/* Global position of the point r_local of body `body` (HYMO_GROUND allowed). */
void hymo_kin_body_point(const hymo_kin *kin, int body, const double r_local[3], double r[3]);
void hymo_kin_body_vector(const hymo_kin *kin, int body, const double v_local[3], double v[3]);
/* Velocity of a global point r attached to body (HYMO_GROUND: zero). */
void hymo_kin_point_velocity(const hymo_kin *kin, int body, const double r[3], double v[3]);
/* Acceleration of that point with zdd = 0 (velocity-product part). */
void hymo_kin_point_accel0(const hymo_kin *kin, int body, const double r[3], double a[3]);
/* d r / d z_j for a global point r attached to body (zero if j not an ancestor). */
void hymo_kin_point_jacobian(const hymo_kin *kin, int body, int j, const double r[3], double out[3]);

/* Starts force assembly: Qbar_j = gravity + velocity terms. */
void hymo_kin_forces_begin(hymo_kin *kin, const hymo_model *model);
/* Adds a force f (global) acting at global point a of body (ignored for ground). */
void hymo_kin_add_point_force(hymo_kin *kin, int body, const double a[3], const double f[3]);
/* M' and Q' from the forces assembled so far (leaves-to-root accumulation). */
void hymo_kin_mass_and_forces(hymo_kin *kin, const hymo_model *model);

/* Energies at the current positions/velocities (after hymo_kin_velocities). */
double hymo_kin_kinetic_energy(const hymo_kin *kin, const hymo_model *model);
double hymo_kin_potential_energy(const hymo_kin *kin, const hymo_model *model);

/* Small vector helpers shared by the formulations. */
static inline void hymo_cross(const double a[3], const double b[3], double c[3])
{
    double c0 = a[1] * b[2] - a[2] * b[1];
    double c1 = a[2] * b[0] - a[0] * b[2];
    double c2 = a[0] * b[1] - a[1] * b[0];
    c[0] = c0;
    c[1] = c1;
    c[2] = c2;
}
static inline double hymo_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

#endif
