#!/usr/bin/python3
"""Exact co-simulation of the two-mass oscillator split (tests/fmu/osc/),
independent of hymo: each half integrated exactly over a communication step
(matrix exponential of the half with its input polynomial as extra states),
the master of docs/cosimulation.md written again here (Jacobi or
Gauss-Seidel, Lagrange extrapolation of order p through the last p + 1
communication points, fewer at the start), and the monolithic solution.

    m1 x1'' = -k1 x1 - d1 v1 + F,  F = kc (x2 - x1) + dc (v2 - v1)
    m2 x2'' = -k2 x2 - d2 v2 - F
Half 1 (osc_mass1): state x1, v1; input F; outputs x1, v1.
Half 2 (osc_mass2): state x2, v2; inputs x1, v1; outputs x2, v2, F (direct
feedthrough: F from the inputs' values at the same time).
At t = 0 every output is the consistent one (initialisation propagates the
connected values): F(0) = kc (x2_0 - x1_0) + dc (v2_0 - v1_0)."""
import math
import numpy as np
from scipy.linalg import expm

# the parameters of tests/fmu/osc/*.xml (start values)
P = dict(m1=1.0, k1=100.0, d1=2.0, x1_0=0.1, v1_0=0.0, m2=0.5, k2=50.0, d2=2.0, kc=3000.0, dc=0.5, x2_0=-0.05, v2_0=0.0)
T = 4  # polynomial terms (degree <= 3)


def halves(p):
    """(A, B) of each half in s' = A s + B u."""
    A1 = np.array([[0.0, 1.0], [-p["k1"] / p["m1"], -p["d1"] / p["m1"]]])
    B1 = np.array([[0.0], [1.0 / p["m1"]]])
    m2, kc, dc = p["m2"], p["kc"], p["dc"]
    A2 = np.array([[0.0, 1.0], [-(p["k2"] + kc) / m2, -(p["d2"] + dc) / m2]])
    B2 = np.array([[0.0, 0.0], [kc / m2, dc / m2]])
    return (A1, B1), (A2, B2)


def step_matrix(A, B, H):
    """expm of [s; g0..g3] with s' = A s + B g0, g_k' = g_{k+1}, g3' = 0
    (g_k the k-th derivative of the input polynomial)."""
    ns, nu = B.shape
    n = ns + T * nu
    M = np.zeros((n, n))
    M[:ns, :ns] = A
    M[:ns, ns:ns + nu] = B
    for k in range(T - 1):
        M[ns + k * nu:ns + (k + 1) * nu, ns + (k + 1) * nu:ns + (k + 2) * nu] = np.eye(nu)
    return expm(M * H)


def poly_fit(ts, ys, t0):
    """Monomial coefficients in tau = t - t0 of the interpolant through (ts, ys) (Newton form)."""
    n = len(ts)
    tau = [t - t0 for t in ts]
    dd = list(ys)
    for j in range(1, n):
        for i in range(n - 1, j - 1, -1):
            dd[i] = (dd[i] - dd[i - 1]) / (tau[i] - tau[i - j])
    c = [0.0] * T
    for i in range(n - 1, -1, -1):
        for k in range(T - 1, 0, -1):
            c[k] = c[k - 1] - tau[i] * c[k]
        c[0] = -tau[i] * c[0] + dd[i]
    return c


def cosim(H, t_end, scheme="jacobi", order=0, p=P, consistent_start=True):
    """Communication-point rows (t, x1, v1, x2, v2, F) of the split."""
    (A1, B1), (A2, B2) = halves(p)
    E1, E2 = step_matrix(A1, B1, H), step_matrix(A2, B2, H)
    s1 = np.array([p["x1_0"], p["v1_0"]])
    s2 = np.array([p["x2_0"], p["v2_0"]])
    kc, dc = p["kc"], p["dc"]
    # inputs of half 2 at t = 0: the linked outputs (consistent) or the start values 0
    u2 = np.array([s1[0], s1[1]]) if consistent_start else np.zeros(2)
    F = kc * (s2[0] - u2[0]) + dc * (s2[1] - u2[1])
    hist = [[(0.0, [s1[0], s1[1]])], [(0.0, [s2[0], s2[1], F])]]  # newest first
    src = [[(1, 2)], [(0, 0), (0, 1)]]  # input -> (subsystem, output)
    stage = [0, 0] if scheme == "jacobi" else [0, 1]
    n = int(round(t_end / H))
    rows = [(0.0, s1[0], s1[1], s2[0], s2[1], F)]
    for step in range(n):
        t = step * H
        t1 = t + H
        for st in sorted(set(stage)):
            members = [k for k in range(2) if stage[k] == st]
            coefs = {}
            for k in members:
                cs = []
                for (s, o) in src[k]:
                    h = hist[s][:order + 1]
                    cs.append(poly_fit([q[0] for q in h], [q[1][o] for q in h], t))
                coefs[k] = cs
            new = {}
            for k in members:
                cs = coefs[k]
                nu = len(cs)
                g = np.zeros(T * nu)
                for j in range(T):
                    for i in range(nu):
                        g[j * nu + i] = math.factorial(j) * cs[i][j]
                if k == 0:
                    w = E1 @ np.concatenate([s1, g])
                    s1 = w[:2]
                    new[k] = [s1[0], s1[1]]
                else:
                    w = E2 @ np.concatenate([s2, g])
                    s2 = w[:2]
                    ue = w[2:4]  # the input polynomials at the step's end
                    Fe = kc * (s2[0] - ue[0]) + dc * (s2[1] - ue[1])
                    new[k] = [s2[0], s2[1], Fe]
            for k in members:
                hist[k].insert(0, (t1, new[k]))
                del hist[k][4:]
        rows.append((t1, s1[0], s1[1], s2[0], s2[1], hist[1][0][1][2]))
    return np.array(rows)


def monolithic(ts, p=P):
    """Exact solution (t, x1, v1, x2, v2, F) at the times ts (equally spaced from 0)."""
    m1, m2, k1, k2, kc, dc = p["m1"], p["m2"], p["k1"], p["k2"], p["kc"], p["dc"]
    A = np.array([[0, 1, 0, 0],
                  [-(k1 + kc) / m1, -(p["d1"] + dc) / m1, kc / m1, dc / m1],
                  [0, 0, 0, 1],
                  [kc / m2, dc / m2, -(k2 + kc) / m2, -(p["d2"] + dc) / m2]])
    y0 = np.array([p["x1_0"], p["v1_0"], p["x2_0"], p["v2_0"]])
    out = []
    E = expm(A * (ts[1] - ts[0])) if len(ts) > 1 else None
    y = y0
    for i, t in enumerate(ts):
        if i:
            y = E @ y
        out.append((t, y[0], y[1], y[2], y[3], kc * (y[2] - y[0]) + dc * (y[3] - y[1])))
    return np.array(out)
