#!/usr/bin/python3
"""Bennett linkage (data/bennett.yaml): geometry from its Denavit-Hartenberg
parameters and an independent solution in one minimal coordinate.

Link k (k = 1..4, link 4 = ground) runs from joint k to joint k+1 (joint 5 =
joint 1) along the common normal of the two joint axes; the parameters are
a_k (length) and alpha_k (twist), offsets d_k = 0, with Bennett's
conditions a_1 = a_3 = a, a_2 = a_4 = b, alpha_1 = alpha_3 = alpha,
alpha_2 = alpha_4 = beta and a / sin(alpha) = b / sin(beta).  With the DH
joint angles theta_k the loop closes (Bennett 1903; e.g. Baker, "The
Bennett linkage and its associated quadric surfaces", 1988) when

    theta_3 = -theta_1,  theta_4 = -theta_2,
    tan(theta_1 / 2) tan(theta_2 / 2) = sin((beta + alpha)/2) / sin((beta - alpha)/2).

`python3 tests/independent/bennett.py --check` verifies these relations by
DH forward kinematics (residual ~1e-16); `--yaml` prints the geometry block
of data/bennett.yaml (the model was written from it).

hymo's coordinates are relative to the reference configuration theta_1 =
THETA1_0 (z = 0 is that closed configuration): z1 = theta_1 - THETA1_0,
z2 = theta_2 - theta_2(THETA1_0), z3 = theta_3 - theta_3(THETA1_0) = -z1.
The independent solution uses q = theta_1 only: the Lagrangian of the
three moving links (rods of uniform mass, plus a tube's axial inertia) with
the closed-form theta_2(q), theta_3(q) (lagrange.Lagrangian, SymPy), and
scipy's DOP853 at rtol 1e-12 — nothing of hymo's constraint handling.
"""

import math
import sys

import numpy as np
import sympy as sp

A_LEN = 0.6                       # a = a_1 = a_3, m
ALPHA = math.radians(40)          # alpha_1 = alpha_3
BETA = math.radians(65)           # alpha_2 = alpha_4
B_LEN = A_LEN * math.sin(BETA) / math.sin(ALPHA)   # b = a_2 = a_4 (Bennett condition)
THETA1_0 = 4.0                    # reference (and initial) theta_1, rad
MASS = [2.0, 3.0, 2.0]            # links 1..3, kg (uniform rods)
TUBE_R = 0.02                     # radius for the rods' axial inertia m r^2 / 2
G = 9.81
K_BENNETT = math.sin((BETA + ALPHA) / 2) / math.sin((BETA - ALPHA) / 2)


def theta2_of(t1):
    """theta_2 on the branch continuous for theta_1 in (0, 2 pi)."""
    return 2.0 * math.atan2(K_BENNETT * math.cos(t1 / 2.0), math.sin(t1 / 2.0))


def _rz(t):
    c, s = math.cos(t), math.sin(t)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def _rx(t):
    c, s = math.cos(t), math.sin(t)
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def dh_frames(theta):
    """Frames F_1..F_5 (4x4) of the joints for DH angles theta[0..3]."""
    A = [A_LEN, B_LEN, A_LEN, B_LEN]
    AL = [ALPHA, BETA, ALPHA, BETA]
    F = [np.eye(4)]
    for k in range(4):
        D = np.eye(4)
        R = _rz(theta[k])
        D[:3, :3] = R @ _rx(AL[k])
        D[:3, 3] = R @ np.array([A[k], 0.0, 0.0])
        F.append(F[-1] @ D)
    return F


def reference_geometry():
    """Joint points o_k and axes u_k (global) at theta_1 = THETA1_0."""
    t2 = theta2_of(THETA1_0)
    F = dh_frames([THETA1_0, t2, -THETA1_0, -t2])
    o = [F[k][:3, 3] for k in range(4)]
    u = [F[k][:3, 2] for k in range(4)]
    return o, u, F


def check():
    worst = 0.0
    for t1 in np.linspace(0.1, 3.0, 30):
        t2 = theta2_of(t1)
        F = dh_frames([t1, t2, -t1, -t2])
        worst = max(worst, np.abs(F[4] - np.eye(4)).max())
    print("Bennett closure residual over theta_1 in [0.1, 3.0]: %.2e" % worst)
    return worst


def link_inertia(k, o):
    """Link k as a uniform rod (global axes at the reference configuration)
    plus a tube's axial inertia m r^2 / 2."""
    p, q = o[k], o[(k + 1) % 4]
    L = np.linalg.norm(q - p)
    e = (q - p) / L
    m = MASS[k]
    return m * L * L / 12.0 * (np.eye(3) - np.outer(e, e)) + 0.5 * m * TUBE_R**2 * np.outer(e, e)


def yaml_block():
    o, u, _ = reference_geometry()
    f = lambda v: "[%s]" % ", ".join("%.17g" % x for x in v)
    out = []
    for k in range(3):
        J = link_inertia(k, o)
        com = 0.5 * (o[k] + o[(k + 1) % 4]) - o[k]
        parent_o = np.zeros(3) if k == 0 else o[k - 1]
        out.append("body%d: location %s axis %s com %s inertia %s end %s" % (
            k + 1, f(o[k] - parent_o), f(u[k]), f(com),
            f([J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2]]), f(o[(k + 1) % 4] - o[k])))
    out.append("cut: point_b (ground) %s axis %s" % (f(o[3]), f(u[3])))
    return "\n".join(out)


class Bennett:
    """Independent model (solve.solve interface): y = [q, qd], q = theta_1."""

    name = "bennett"
    np_, nu = 0, 0
    nz = 3
    breakpoints = ()
    method = "DOP853"

    def __init__(self):
        from lagrange import Lagrangian, rodrigues
        q = sp.Symbol("q")
        t10 = sp.Float(THETA1_0, 30)
        Kb = sp.sin((sp.Float(BETA, 30) + sp.Float(ALPHA, 30)) / 2) / sp.sin((sp.Float(BETA, 30) - sp.Float(ALPHA, 30)) / 2)
        th2 = 2 * sp.atan2(Kb * sp.cos(q / 2), sp.sin(q / 2))
        th2_0 = 2 * sp.atan2(Kb * sp.cos(t10 / 2), sp.sin(t10 / 2))
        z = [q - t10, th2 - th2_0, -(q - t10)]
        o, u, _ = reference_geometry()
        R, org = [], []
        for k in range(3):
            Rp = sp.eye(3) if k == 0 else R[k - 1]
            op = sp.zeros(3, 1) if k == 0 else org[k - 1]
            loc = o[k] - (np.zeros(3) if k == 0 else o[k - 1])
            org.append(op + Rp * sp.Matrix([sp.Float(x, 20) for x in loc]))
            R.append(Rp * rodrigues([sp.Float(x, 20) for x in u[k]], z[k]))
        comps = []
        for k in range(3):
            com = 0.5 * (o[k] + o[(k + 1) % 4]) - o[k]
            c = org[k] + R[k] * sp.Matrix([sp.Float(x, 20) for x in com])
            comps.append(dict(m=MASS[k], c=c, R=R[k], J=link_inertia(k, o)))
        self.lag = Lagrangian([q], comps, [0, -G, 0])
        self.atol = np.full(2, 1e-14)
        self._z = sp.lambdify(q, z, "math")
        self._zd = sp.lambdify(q, [sp.diff(e, q) for e in z], "math")

    def y0(self):
        return np.array([THETA1_0, 0.0])

    def rhs(self, t, y, seg=None):
        return np.array([y[1], self.lag.accel(y[:1], y[1:])[0]])

    def energy(self, y):
        return self.lag.energy(y[:1], y[1:])

    def outputs(self, Y):
        z = np.array([self._z(q) for q in Y[:, 0]])
        zd = np.array([np.array(self._zd(q)) * qd for q, qd in Y])
        N = len(Y)
        return {"z": z, "zd": zd, "p": np.zeros((N, 0)), "U": np.zeros((N, 0))}


if __name__ == "__main__":
    if "--check" in sys.argv:
        sys.exit(0 if check() < 1e-12 else 1)
    if "--yaml" in sys.argv:
        print(yaml_block())
