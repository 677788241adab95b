#!/usr/bin/python3
"""Spatial RUSR four-bar (data/spatial_fourbar.yaml): an independent
solution in the state-space form of one minimal coordinate.

The open tree (crank z1 about Z at O; U joint z2 about the crank's X at A
and z3 about a3; rocker z4 about X at D) is written with Rodrigues
rotations in SymPy (lagrange.Lagrangian: M(z), dM/dz, dV/dz of the
tree); the spherical cut joint is Phi(z) = B_coupler(z) - B_rocker(z)
(3 equations), differentiated by SymPy (Phi_z and the velocity term
gamma = d(Phi_z zd)/dz zd).  The state is y = (q, qd) with q = z1: at each
right-hand side the dependent coordinates z2..z4 are solved from Phi = 0
by Newton (to 1e-15), zd from Phi_z zd = 0 with zd1 = qd, and zdd from
[M Phi_z^T; Phi_z 0] [zdd; mu] = [Q; -gamma].  scipy's DOP853 integrates
(q, qd) at rtol 1e-12.  The parameters are typed in from the model file's
description (its comment), not read from it.
"""

import math

import numpy as np
import sympy as sp

G = 9.81
A_PT = np.array([0.3, 0.0, 0.0])
D_PT = np.array([0.7, 0.0, 0.35])
PHI0 = math.radians(60.0)
B_PT = D_PT + 0.5 * np.array([0.0, math.cos(PHI0), math.sin(PHI0)])


def _rod(m, p, q, r=0.01):
    L = np.linalg.norm(q - p)
    e = (q - p) / L
    return m * L * L / 12.0 * (np.eye(3) - np.outer(e, e)) + 0.5 * m * r * r * np.outer(e, e)


class SpatialFourBar:
    name = "spatial_fourbar"
    np_, nu = 0, 0
    nz = 4
    breakpoints = ()
    method = "DOP853"

    def __init__(self):
        from lagrange import Lagrangian, rodrigues
        z = sp.symbols("z1:5")
        f = lambda v: sp.Matrix([sp.Float(float(x), 20) for x in v])
        e = (B_PT - A_PT) / np.linalg.norm(B_PT - A_PT)
        a3 = np.cross([1.0, 0, 0], e)
        a3 /= np.linalg.norm(a3)
        R1 = rodrigues([0, 0, 1], z[0])
        R2 = R1 * rodrigues([1, 0, 0], z[1])
        R3 = R2 * rodrigues([sp.Float(float(x), 20) for x in a3], z[2])
        R4 = rodrigues([1, 0, 0], z[3])
        oA = R1 * f(A_PT)
        oD = f(D_PT)
        comps = [
            dict(m=2.0, c=R1 * f(A_PT / 2), R=R1, J=_rod(2.0, np.zeros(3), A_PT)),
            dict(m=0.1, c=oA, R=R2, J=np.eye(3) * 1e-4),
            dict(m=1.5, c=oA + R3 * f((B_PT - A_PT) / 2), R=R3, J=_rod(1.5, A_PT, B_PT)),
            dict(m=1.0, c=oD + R4 * f((B_PT - D_PT) / 2), R=R4, J=_rod(1.0, D_PT, B_PT)),
        ]
        self.lag = Lagrangian(list(z), comps, [0, -G, 0])
        zd = sp.symbols("w1:5")
        phi = (oA + R3 * f(B_PT - A_PT)) - (oD + R4 * f(B_PT - D_PT))
        J = phi.jacobian(z)
        gam = (J * sp.Matrix(zd)).jacobian(z) * sp.Matrix(zd)
        self._phi = sp.lambdify([z], list(phi), "math")
        self._J = sp.lambdify([z], J.tolist(), "math")
        self._gam = sp.lambdify([z, zd], list(gam), "math")
        self.atol = np.full(2, 1e-14)
        self._zdep = np.zeros(3)

    def closure(self, q):
        """z2..z4 from Phi = 0 with z1 = q (Newton from the last solution)."""
        zz = np.concatenate([[q], self._zdep])
        for _ in range(50):
            r = np.array(self._phi(zz))
            Jd = np.array(self._J(zz))[:, 1:]
            dz = np.linalg.solve(Jd, r)
            zz[1:] -= dz
            if np.abs(dz).max() < 1e-15:
                break
        self._zdep = zz[1:].copy()
        return zz

    def state(self, q, qd):
        zz = self.closure(q)
        Jz = np.array(self._J(zz))
        zd = np.concatenate([[qd], -np.linalg.solve(Jz[:, 1:], Jz[:, 0] * qd)])
        return zz, zd, Jz

    def y0(self):
        return np.array([0.0, 0.0])

    def rhs(self, t, y, seg=None):
        zz, zd, Jz = self.state(y[0], y[1])
        M, dM, dV, V = self.lag.mass_and_derivs(zz)
        h = self.lag._h(dM, dV, zd)
        K = np.zeros((7, 7))
        K[:4, :4] = M
        K[:4, 4:] = Jz.T
        K[4:, :4] = Jz
        rhs = np.concatenate([h, -np.array(self._gam(zz, zd))])
        zdd = np.linalg.solve(K, rhs)[:4]
        return np.array([y[1], zdd[0]])

    def outputs(self, Y):
        self._zdep = np.zeros(3)
        z, zd = [], []
        for q, qd in Y:
            a, b, _ = self.state(q, qd)
            z.append(a)
            zd.append(b)
        N = len(Y)
        return {"z": np.array(z), "zd": np.array(zd), "p": np.zeros((N, 0)), "U": np.zeros((N, 0))}

    def energy(self, y):
        zz, zd, _ = self.state(y[0], y[1])
        M, dM, dV, V = self.lag.mass_and_derivs(zz)
        return 0.5 * zd @ M @ zd + V
