#!/usr/bin/python3
"""projection_order.py [--t-end T] [--steps N0] [--levels K]

The trapezoidal rule with the position constraint held at the step's end
(penalty's index-3 step with converged multipliers, formulations/penalty.c)
and penalty's projections, in numpy on a model problem: a unit pendulum in
Cartesian coordinates (M = I, Phi = (x^2 + y^2 - 1)/2, gravity 9.81,
released at rest 2.5 rad from the bottom), against its exact solution
(DOP853 in the angle, rtol 1e-13).  For every variant and step size the
signed error of x at t_end, that error over dt^2 and the ratio per
halving.  Nothing here is shared with hymo.

Variants (after each converged step, the projected values are the next
step's history, as in penalty):
  none       no projection: z' = 2 dz/dt - z'_0, z'' = Q - Phi_z^T lambda
  both       project z' (mass-orthogonally onto Phi_z z' = 0), then z''
             (onto Phi_z z'' + gamma = 0): penalty's
  velocity   z' only
  accel      z'' only
  symmetric  Hairer's symmetric projection of z' (the same multiplier on
             the start and end rates), z'' as in none
"""

import argparse

import numpy as np
from scipy.integrate import solve_ivp

G = 9.81
THETA0 = 2.5
Q = np.array([0.0, -G])


def exact(t_end):
    s = solve_ivp(lambda t, y: [y[1], -G * np.sin(y[0])], [0, t_end], [THETA0, 0.0], method="DOP853",
                  rtol=1e-13, atol=1e-13)
    return np.sin(s.y[0, -1])


def multiplier(z, v):
    """The constrained multiplier: Phi_z z'' + |z'|^2 = 0 with z'' = Q - z lambda."""
    return (z @ Q + v @ v) / (z @ z)


def trapezoidal(z0, v0, a0, h):
    """z1 = z0 + h v0 + h^2/4 (a0 + a1), a1 = Q - z1 lambda, Phi(z1) = 0 (Newton)."""
    z1 = z0 + h * v0 + h * h / 2 * a0
    lam = multiplier(z0, v0)
    for _ in range(50):
        a1 = Q - z1 * lam
        f = np.r_[z1 - (z0 + h * v0 + h * h / 4 * (a0 + a1)), 0.5 * (z1 @ z1 - 1.0)]
        jac = np.zeros((3, 3))
        jac[:2, :2] = np.eye(2) * (1.0 + h * h / 4 * lam)
        jac[:2, 2] = h * h / 4 * z1
        jac[2, :2] = z1
        d = np.linalg.solve(jac, -f)
        z1, lam = z1 + d[:2], lam + d[2]
        if np.abs(d).max() < 1e-15:
            break
    return z1, 2.0 * (z1 - z0) / h - v0, Q - z1 * lam


def step(variant, z0, v0, a0, h):
    if variant == "symmetric":  # v0 + z0 nu in, v1 + z1 nu out, z1 . v1 = 0
        def end(nu):
            z1, v1, a1 = trapezoidal(z0, v0 + z0 * nu, a0, h)
            return z1, v1 + z1 * nu, a1
        nu = 0.0
        for _ in range(30):
            z1, v1, _ = end(nu)
            zb, vb, _ = end(nu + 1e-7)
            slope = (zb @ vb - z1 @ v1) / 1e-7
            if slope == 0.0 or not np.isfinite(slope):
                return None
            nu -= (z1 @ v1) / slope
        return end(nu)
    z1, v1, a1 = trapezoidal(z0, v0, a0, h)
    if variant in ("both", "velocity"):
        v1 = v1 - z1 * (z1 @ v1) / (z1 @ z1)
    if variant in ("both", "accel"):
        a1 = Q - z1 * multiplier(z1, v1)
    return z1, v1, a1


def run(variant, t_end, n):
    h = t_end / n
    z, v = np.array([np.sin(THETA0), -np.cos(THETA0)]), np.zeros(2)
    a = Q - z * multiplier(z, v)
    for _ in range(n):
        s = step(variant, z, v, a, h)
        if s is None or not np.all(np.isfinite(s[0])):
            return float("nan")
        z, v, a = s
    return z[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--levels", type=int, default=6)
    ap.add_argument("--variants", default="none,both,velocity,accel,symmetric")
    a = ap.parse_args()
    x = exact(a.t_end)
    print("| variant | dt | error of x | error / dt^2 | per halving |")
    print("|---|---|---|---|---|")
    for variant in a.variants.split(","):
        prev = None
        for k in range(a.levels):
            n = a.steps * 2 ** k
            h = a.t_end / n
            e = run(variant, a.t_end, n) - x
            print("| %s | %g | %+.4e | %+.4e | %s |" % (variant, h, e, e / h / h,
                                                       "%.2f" % (prev / e) if prev else "-"), flush=True)
            prev = e


if __name__ == "__main__":
    main()
