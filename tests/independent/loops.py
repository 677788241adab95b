#!/usr/bin/python3
"""Closed-loop mechanisms of tests/models/loop_*.yaml: independent
solutions in the state-space form of one minimal coordinate.

Each mechanism is an open tree of joint coordinates z (the model file's
joints, in its order) with rigid components written as SymPy expressions
(global centre of mass c_k(z), orientation R_k(z); lagrange.Lagrangian
gives M(z), dM/dz, dV/dz of the tree) and closure equations Phi(z) = 0
written here from the mechanism's description (one equation set per cut
joint, not hymo's: a point on a point, a point on a line, an orientation
equal to the ground's).  The state is y = (z, zd), all tree
coordinates (a minimal coordinate would be singular where the crank of a
spatial loop stops while the rocker turns on): zdd from the KKT system
[M Phi_z^T; Phi_z 0] [zdd; mu] = [Q; -gamma - 2 b Phi_z zd - b^2 Phi],
gamma = d(Phi_z zd)/dz zd, with Baumgarte's terms (b = 20/s), which vanish
on the exact solution and only hold the integrator's drift off the
constraints (violation() measures it: <= 1e-10 along the solutions at
rtol 1e-10).  The start is closed by Newton on z[1:] with z[0] given, at
rest.  scipy's DOP853 integrates y at rtol 1e-10 (measure_loops.RTOL).

    loop_rusr_spherical   spatial RUSR four-bar, spherical cut (4 z, 3 rows)
    loop_rusr_revolute    the same four-bar with the spherical joint in the
                          tree (three revolutes) and the rocker's pivot cut
                          as a revolute joint (6 z, 5 rows)
    loop_rusp             spatial RUSP: crank, U joint, coupler, spherical
                          joint (three revolutes), slider cut as a
                          translational joint to the ground (6 z, 5 rows)
    loop_fast_planar      planar crank with two slider-cranks and a
                          four-bar on its pin (7 z, three planar cuts,
                          6 rows), a constant crank torque, no gravity

`python3 loops.py NAME` prints the model file of NAME (the YAML under
tests/models is this output); the parameters are those below.
"""

import math
import sys

import numpy as np
import sympy as sp

G = 9.81
BAUMGARTE = 20.0  # 1/s


def _rod(m, p, q, r=0.01):
    """Inertia about the centre of a uniform rod from p to q (global axes)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    L = np.linalg.norm(q - p)
    e = (q - p) / L
    return m * L * L / 12.0 * (np.eye(3) - np.outer(e, e)) + 0.5 * m * r * r * np.outer(e, e)


def _f(v):
    return sp.Matrix([sp.Float(float(x), 20) for x in v])


def _rz(a):
    return sp.Matrix([[sp.cos(a), -sp.sin(a), 0], [sp.sin(a), sp.cos(a), 0], [0, 0, 1]])


# ---------------------------------------------------------------- geometry
# spatial four-bar (RUSR): crank O -> A about Z, U joint at A (crank's X,
# then a3 normal to crank and coupler), coupler A -> B, rocker D -> B about X
O_PT = np.zeros(3)
A_PT = np.array([0.3, 0.0, 0.0])
D_PT = np.array([0.7, 0.0, 0.35])
B_PT = D_PT + 0.5 * np.array([0.0, math.cos(math.radians(60)), math.sin(math.radians(60))])
E_CPL = (B_PT - A_PT) / np.linalg.norm(B_PT - A_PT)
A3 = np.cross([1.0, 0, 0], E_CPL)
A3 /= np.linalg.norm(A3)
GRAV_SPATIAL = np.array([0.0, 0.0, -G])
# the spherical joint as three revolutes at B (coupler -> g1 -> g2 -> rocker
# or slider), axes in the coupler frame at z = 0; U1..U3 keep the middle
# angle far from the gimbal's singularity along the motion
U_RUSR = (np.array([-0.5438, -0.1176, 0.8309]), np.array([0.3436, -0.9345, 0.0926]),
          np.array([0.7656, 0.3359, 0.5486]))
U_RUSP = (np.array([-0.6604, -0.4632, -0.5911]), np.array([0.6578, 0.0229, -0.7529]),
          np.array([0.3623, -0.886, 0.2895]))
M_GIMBAL, J_GIMBAL = 0.01, 1e-6
# RUSP: the slider moves along S_DIR through B (the start), gravity along -Z
S_DIR = np.array([1.0, 0.0, -1.0]) / math.sqrt(2.0)
M_SLIDER = 1.0

# fast planar mechanism: crank O -> A (0.02 m), two connecting rods from A
# to sliders on the lines through O at +30 and 150 deg (V engine), and a
# coupler A -> C with a rocker E -> C (four-bar); constant torque TAU
P_A = 0.02
P_L1, P_L2 = 0.07, 0.06
P_V1, P_V2 = math.radians(30.0), math.radians(150.0)
P_E = np.array([0.05, -0.04, 0.0])
P_L3, P_L4 = 0.08, 0.06
P_M = dict(crank=0.05, rod1=0.03, rod2=0.03, slider1=0.05, slider2=0.04, coupler=0.02, rocker=0.03)
TAU = 0.7


def _planar_rod_J(m, L):
    return np.diag([0.0, m * L * L / 12.0, m * L * L / 12.0]) + np.diag([1e-9, 0, 0])


class ClosedLoop:
    """State-space form of a one-degree-of-freedom closed loop (see the
    module docstring); subclasses set z, comps, phi, gravity, qext, z0."""

    np_, nu = 0, 0
    breakpoints = ()
    method = "DOP853"

    def _setup(self, z, comps, phi, gravity, z0, qext=None):
        n = self.nz = len(z)
        exprs = []
        for c in comps:
            C = sp.Matrix(c["c"])
            exprs += list(C) + list(C.jacobian(z))
            if c.get("R") is not None:
                R = sp.Matrix(c["R"]).reshape(9, 1)
                exprs += list(R) + list(R.jacobian(z))
        self._kin = sp.lambdify([z], exprs, "math")
        self._comps = [(float(c["m"]), None if c.get("R") is None else np.asarray(c["J"], float)) for c in comps]
        self.g = np.asarray(gravity, float)
        self._phi = sp.lambdify([z], list(phi), "math")
        self._J = sp.lambdify([z], phi.jacobian(z).tolist(), "math")
        self.qext = np.zeros(n) if qext is None else np.asarray(qext, float)
        self.z0 = np.asarray(z0, float)
        self.atol = np.full(2 * n, 1e-13)
        self._zdep = self.z0[1:].copy()
        self.z0 = self.closure(self.z0[0])

    def _jacobians(self, zz):
        """Per component: mass, c, J_c (3 x n), inertia I = R J R^T (or None),
        J_w (3 x n: omega = J_w zd, from [omega]x = Rdot R^T)."""
        n = self.nz
        v = self._kin(zz)
        out, k = [], 0
        for m, Jb in self._comps:
            c = np.array(v[k:k + 3])
            Jc = np.array(v[k + 3:k + 3 + 3 * n]).reshape(3, n)
            k += 3 + 3 * n
            if Jb is None:
                out.append((m, c, Jc, None, None))
                continue
            R = np.array(v[k:k + 9]).reshape(3, 3)
            dR = np.array(v[k + 9:k + 9 + 9 * n]).reshape(3, 3, n)
            k += 9 + 9 * n
            Jw = np.empty((3, n))
            for i in range(n):
                W = dR[:, :, i] @ R.T
                Jw[:, i] = (W[2, 1], W[0, 2], W[1, 0])
            out.append((m, c, Jc, R @ Jb @ R.T, Jw))
        return out

    def _eps(self, zd):
        return 1e-5 / max(1.0, float(np.abs(zd).max()))

    def closure(self, q):
        """z[1:] from Phi = 0 with z[0] = q (Newton from the last solution):
        the consistent start."""
        zz = np.concatenate([[q], self._zdep])
        for _ in range(60):
            r = np.array(self._phi(zz))
            Jd = np.array(self._J(zz))[:, 1:]
            dz = np.linalg.solve(Jd, r)
            zz[1:] -= dz
            if np.abs(dz).max() < 1e-15:
                break
        self._zdep = zz[1:].copy()
        return zz

    def y0(self):
        return np.concatenate([self.z0, np.zeros(self.nz)])

    def rhs(self, t, y, seg=None):
        """Newton-Euler in the tree's coordinates: sum over the components of
        J_c^T m (J_c zdd + Jdot_c zd - g) + J_w^T (I (J_w zdd + Jdot_w zd)
        + w x I w) = Q + Phi_z^T mu, with Jdot zd by a central difference
        of J along zd (relative error ~1e-10)."""
        n = self.nz
        zz, zd = y[:n], y[n:]
        e = self._eps(zd)
        P, Pp, Pm = self._jacobians(zz), self._jacobians(zz + e * zd), self._jacobians(zz - e * zd)
        M = np.zeros((n, n))
        h = self.qext.copy()
        for (m, c, Jc, I, Jw), p_, m_ in zip(P, Pp, Pm):
            bc = (p_[2] - m_[2]) @ zd / (2 * e)
            M += m * Jc.T @ Jc
            h += m * Jc.T @ (self.g - bc)
            if I is not None:
                w = Jw @ zd
                bw = (p_[4] - m_[4]) @ zd / (2 * e)
                M += Jw.T @ I @ Jw
                h -= Jw.T @ (I @ bw + np.cross(w, I @ w))
        Jz = np.array(self._J(zz))
        gam = (np.array(self._J(zz + e * zd)) - np.array(self._J(zz - e * zd))) @ zd / (2 * e)
        m = Jz.shape[0]
        K = np.zeros((n + m, n + m))
        K[:n, :n] = M
        K[:n, n:] = Jz.T
        K[n:, :n] = Jz
        # Baumgarte terms: zero on the exact solution (Phi = Phi_z zd = 0),
        # they only damp the integrator's drift off the constraints
        drift = 2.0 * BAUMGARTE * (Jz @ zd) + BAUMGARTE ** 2 * np.array(self._phi(zz))
        rhs = np.concatenate([h, -gam - drift])
        zdd = np.linalg.solve(K, rhs)[:n]
        return np.concatenate([zd, zdd])

    def outputs(self, Y):
        n = self.nz
        N = len(Y)
        return {"z": Y[:, :n].copy(), "zd": Y[:, n:].copy(), "p": np.zeros((N, 0)), "U": np.zeros((N, 0))}

    def violation(self, y):
        n = self.nz
        return max(np.abs(self._phi(y[:n])).max(), np.abs(np.array(self._J(y[:n])) @ y[n:]).max())

    def energy(self, y):
        """T + V - work of the constant generalised forces (conserved)."""
        n = self.nz
        zz, zd = y[:n], y[n:]
        E = -self.qext @ (zz - self.z0)
        for m, c, Jc, I, Jw in self._jacobians(zz):
            v = Jc @ zd
            E += 0.5 * m * v @ v - m * self.g @ c
            if I is not None:
                w = Jw @ zd
                E += 0.5 * w @ I @ w
        return E


def _rusr_head(z):
    from lagrange import rodrigues
    R1 = rodrigues([0, 0, 1], z[0])
    R2 = R1 * rodrigues([1, 0, 0], z[1])
    R3 = R2 * rodrigues([sp.Float(float(x), 20) for x in A3], z[2])
    oA = R1 * _f(A_PT)
    comps = [
        dict(m=2.0, c=R1 * _f(A_PT / 2), R=R1, J=_rod(2.0, O_PT, A_PT)),
        dict(m=0.1, c=oA, R=R2, J=np.eye(3) * 1e-4),
        dict(m=1.5, c=oA + R3 * _f((B_PT - A_PT) / 2), R=R3, J=_rod(1.5, A_PT, B_PT)),
    ]
    return R3, oA, comps


def _gimbal(R3, oB, z3, U):
    """Three revolutes at B after the coupler: the components g1, g2 and the
    orientation of the last body."""
    from lagrange import rodrigues
    ax = lambda u: [sp.Float(float(x), 20) for x in u]
    Rg1 = R3 * rodrigues(ax(U[0]), z3[0])
    Rg2 = Rg1 * rodrigues(ax(U[1]), z3[1])
    Rl = Rg2 * rodrigues(ax(U[2]), z3[2])
    comps = [dict(m=M_GIMBAL, c=oB, R=Rg1, J=np.eye(3) * J_GIMBAL),
             dict(m=M_GIMBAL, c=oB, R=Rg2, J=np.eye(3) * J_GIMBAL)]
    return Rl, comps


class RusrSpherical(ClosedLoop):
    name = "loop_rusr_spherical"

    def __init__(self):
        from lagrange import rodrigues
        z = sp.symbols("z1:5")
        R3, oA, comps = _rusr_head(z)
        R4 = rodrigues([1, 0, 0], z[3])
        oD = _f(D_PT)
        comps.append(dict(m=1.0, c=oD + R4 * _f((B_PT - D_PT) / 2), R=R4, J=_rod(1.0, D_PT, B_PT)))
        phi = (oA + R3 * _f(B_PT - A_PT)) - (oD + R4 * _f(B_PT - D_PT))
        self._setup(z, comps, phi, GRAV_SPATIAL, np.zeros(4))


class RusrRevolute(ClosedLoop):
    """Tree: crank, cross, coupler, g1, g2, rocker (z1..z6); the rocker's
    pivot D is the cut: D of the rocker on D of the ground (3 rows) and the
    rocker's X axis normal to the ground's Y and Z axes (2 rows)."""
    name = "loop_rusr_revolute"

    def __init__(self):
        z = sp.symbols("z1:7")
        R3, oA, comps = _rusr_head(z)
        oB = oA + R3 * _f(B_PT - A_PT)
        R6, gc = _gimbal(R3, oB, z[3:6], U_RUSR)
        comps += gc
        comps.append(dict(m=1.0, c=oB + R6 * _f((D_PT - B_PT) / 2), R=R6, J=_rod(1.0, D_PT, B_PT)))
        xr = R6 * sp.Matrix([1, 0, 0])
        phi = sp.Matrix(list(oB + R6 * _f(D_PT - B_PT) - _f(D_PT)) + [xr[1], xr[2]])
        self._setup(z, comps, phi, GRAV_SPATIAL, np.zeros(6))


class Rusp(ClosedLoop):
    """Tree: crank, cross, coupler, g1, g2, slider (z1..z6); the slider's
    point B stays on the line through the start's B along S_DIR (2 rows)
    and the slider does not turn (3 rows: the skew parts of R)."""
    name = "loop_rusp"

    def __init__(self):
        z = sp.symbols("z1:7")
        R3, oA, comps = _rusr_head(z)
        oB = oA + R3 * _f(B_PT - A_PT)
        R6, gc = _gimbal(R3, oB, z[3:6], U_RUSP)
        comps += gc
        comps.append(dict(m=M_SLIDER, c=oB, R=R6, J=np.eye(3) * 1e-3))
        n1 = np.cross(S_DIR, [1.0, 0, 0])
        n1 /= np.linalg.norm(n1)
        n2 = np.cross(S_DIR, n1)
        d = oB - _f(B_PT)
        phi = sp.Matrix([(d.T * _f(n1))[0], (d.T * _f(n2))[0], R6[2, 1], R6[0, 2], R6[1, 0]])
        self._setup(z, comps, phi, GRAV_SPATIAL, np.zeros(6))


def _planar_start():
    """Absolute angles at the start (crank along X): rod i from A to the
    slider line, coupler and rocker closing the four-bar (elbow up)."""
    A = np.array([P_A, 0.0])

    def on_line(L, v):
        d = np.array([math.cos(v), math.sin(v)])
        # |s d - A| = L, the root with s > 0
        b = -2 * d @ A
        c = A @ A - L * L
        s = (-b + math.sqrt(b * b - 4 * c)) / 2
        P = s * d
        return math.atan2(P[1] - A[1], P[0] - A[0]), s

    t1, s1 = on_line(P_L1, P_V1)
    t2, s2 = on_line(P_L2, P_V2)
    E = P_E[:2]
    dd = np.linalg.norm(E - A)
    a = (P_L3 ** 2 - P_L4 ** 2 + dd * dd) / (2 * dd)
    h = math.sqrt(P_L3 ** 2 - a * a)
    u = (E - A) / dd
    C = A + a * u + h * np.array([-u[1], u[0]])
    t3 = math.atan2(C[1] - A[1], C[0] - A[0])
    t4 = math.atan2(C[1] - E[1], C[0] - E[0])
    return t1, s1, t2, s2, t3, t4


class FastPlanar(ClosedLoop):
    """Tree (hymo's order): crank z1 at O; rod1 z2, rod2 z3, coupler z6 on
    the crank at A (relative angles); slider1 z4, slider2 z5 prismatic from
    O along their lines; rocker z7 at E.  Cuts: rod1's end on slider1, rod2's
    end on slider2, the coupler's end on the rocker's (x, y each)."""
    name = "loop_fast_planar"

    def __init__(self):
        z = sp.symbols("z1:8")
        t1, s1, t2, s2, t3, t4 = _planar_start()
        c1 = sp.Matrix([sp.cos(z[0]), sp.sin(z[0]), 0])
        A = P_A * c1
        th = [z[0] + z[1], z[0] + z[2], z[0] + z[5]]
        e = [sp.Matrix([sp.cos(a), sp.sin(a), 0]) for a in th]
        d1 = sp.Matrix([math.cos(P_V1), math.sin(P_V1), 0])
        d2 = sp.Matrix([math.cos(P_V2), math.sin(P_V2), 0])
        S1, S2 = z[3] * d1, z[4] * d2
        Eg = _f(P_E)
        e4 = sp.Matrix([sp.cos(z[6]), sp.sin(z[6]), 0])
        m = P_M
        comps = [
            dict(m=m["crank"], c=A / 2, R=_rz(z[0]), J=_planar_rod_J(m["crank"], P_A)),
            dict(m=m["rod1"], c=A + P_L1 / 2 * e[0], R=_rz(th[0]), J=_planar_rod_J(m["rod1"], P_L1)),
            dict(m=m["rod2"], c=A + P_L2 / 2 * e[1], R=_rz(th[1]), J=_planar_rod_J(m["rod2"], P_L2)),
            dict(m=m["slider1"], c=S1, R=None, J=None),
            dict(m=m["slider2"], c=S2, R=None, J=None),
            dict(m=m["coupler"], c=A + P_L3 / 2 * e[2], R=_rz(th[2]), J=_planar_rod_J(m["coupler"], P_L3)),
            dict(m=m["rocker"], c=Eg + P_L4 / 2 * e4, R=_rz(z[6]), J=_planar_rod_J(m["rocker"], P_L4)),
        ]
        B1, B2, C3, C4 = A + P_L1 * e[0], A + P_L2 * e[1], A + P_L3 * e[2], Eg + P_L4 * e4
        phi = sp.Matrix([B1[0] - S1[0], B1[1] - S1[1], B2[0] - S2[0], B2[1] - S2[1], C3[0] - C4[0], C3[1] - C4[1]])
        qext = np.zeros(7)
        qext[0] = TAU
        z0 = np.array([0.0, t1, t2, s1, s2, t3, t4])
        self._setup(z, comps, phi, [0.0, 0.0, 0.0], z0, qext)


MODELS = {c.name: c for c in (RusrSpherical, RusrRevolute, Rusp, FastPlanar)}


# ------------------------------------------------------------ model files
def _v(x):
    return "[" + ", ".join(repr(float(a)) for a in x) + "]"


def _J6(J):
    return "[" + ", ".join(repr(float(a)) for a in (J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[0, 2], J[1, 2])) + "]"


def _head(name, desc, grav, dt, t_end):
    return ("# %s (generated by tests/independent/loops.py %s: its independent\n"
            "# solution is tests/independent/loops.py's class of the same name).\n"
            "format: 1\nname: %s\ndescription: %s\ngravity: %s\n\n"
            "simulation:\n  dt: %r\n  t_end: %r\n  tolerances: {position: 1.0e-7, pressure: 1.0e-2, spool: 1.0e-7}\n\n"
            % (name, name, name, desc, _v(grav), dt, t_end))


def _rusr_bodies():
    return (
        "  - name: crank\n"
        "    joint: {name: z1, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1]}\n"
        "    mass: 2.0\n    com: %s\n    inertia: %s\n    points: {A: %s}\n"
        "  - name: cross\n"
        "    joint: {name: z2, type: revolute, parent: crank, location: A, axis: [1, 0, 0]}\n"
        "    mass: 0.1\n    com: [0, 0, 0]\n    inertia: [1.0e-4, 1.0e-4, 1.0e-4]\n"
        "  - name: coupler\n"
        "    joint: {name: z3, type: revolute, parent: cross, location: [0, 0, 0], axis: %s}\n"
        "    mass: 1.5\n    com: %s\n    inertia: %s\n    points: {B: %s}\n"
        % (_v(A_PT / 2), _J6(_rod(2.0, O_PT, A_PT)), _v(A_PT), _v(A3), _v((B_PT - A_PT) / 2),
           _J6(_rod(1.5, A_PT, B_PT)), _v(B_PT - A_PT)))


def _gimbal_bodies(last, U):
    U1, U2, U3 = U
    return (
        "  - name: g1\n"
        "    joint: {name: z4, type: revolute, parent: coupler, location: B, axis: %s}\n"
        "    mass: %r\n    com: [0, 0, 0]\n    inertia: [%r, %r, %r]\n"
        "  - name: g2\n"
        "    joint: {name: z5, type: revolute, parent: g1, location: [0, 0, 0], axis: %s}\n"
        "    mass: %r\n    com: [0, 0, 0]\n    inertia: [%r, %r, %r]\n"
        "  - name: %s\n"
        "    joint: {name: z6, type: revolute, parent: g2, location: [0, 0, 0], axis: %s}\n"
        % (_v(U1), M_GIMBAL, J_GIMBAL, J_GIMBAL, J_GIMBAL, _v(U2), M_GIMBAL, J_GIMBAL, J_GIMBAL, J_GIMBAL,
           last, _v(U3)))


def yaml_text(name):
    if name == "loop_rusr_spherical":
        return (_head(name, "Spatial RUSR four-bar, spherical cut, gravity along -Z", GRAV_SPATIAL, 1e-3, 3)
                + "ground:\n  points:\n    D: %s\n\nbodies:\n" % _v(D_PT) + _rusr_bodies()
                + "  - name: rocker\n"
                "    joint: {name: z4, type: revolute, parent: ground, location: D, axis: [1, 0, 0]}\n"
                "    mass: 1.0\n    com: %s\n    inertia: %s\n    points: {B: %s}\n\n"
                % (_v((B_PT - D_PT) / 2), _J6(_rod(1.0, D_PT, B_PT)), _v(B_PT - D_PT))
                + "cut_joints:\n  - {name: B, type: spherical, body_a: coupler, point_a: B, body_b: rocker, point_b: B}\n\n"
                "independent: [z1]\n")
    if name == "loop_rusr_revolute":
        return (_head(name, "Spatial RUSR four-bar, spherical joint in the tree, revolute cut at the rocker pivot",
                      GRAV_SPATIAL, 1e-3, 3)
                + "ground:\n  points:\n    D: %s\n\nbodies:\n" % _v(D_PT) + _rusr_bodies() + _gimbal_bodies("rocker", U_RUSR)
                + "    mass: 1.0\n    com: %s\n    inertia: %s\n    points: {D: %s}\n\n"
                % (_v((D_PT - B_PT) / 2), _J6(_rod(1.0, D_PT, B_PT)), _v(D_PT - B_PT))
                + "cut_joints:\n  - {name: D, type: revolute, body_a: rocker, point_a: D, body_b: ground, point_b: D,\n"
                "     axis_a: [1, 0, 0], axis_b: [1, 0, 0]}\n\nindependent: [z1]\n")
    if name == "loop_rusp":
        return (_head(name, "Spatial RUSP (crank, U joint, coupler, spherical joint, slider), translational cut",
                      GRAV_SPATIAL, 1e-3, 3)
                + "ground:\n  points:\n    S: %s\n\nbodies:\n" % _v(B_PT) + _rusr_bodies() + _gimbal_bodies("slider", U_RUSP)
                + "    mass: %r\n    com: [0, 0, 0]\n    inertia: [1.0e-3, 1.0e-3, 1.0e-3]\n\n" % M_SLIDER
                + "cut_joints:\n  - {name: S, type: translational, body_a: slider, point_a: [0, 0, 0], body_b: ground,\n"
                "     point_b: S, axis_a: %s, direction: %s}\n\nindependent: [z1]\n" % (_v(S_DIR), _v(S_DIR)))
    if name == "loop_fast_planar":
        t1, s1, t2, s2, t3, t4 = _planar_start()
        m = P_M
        d1 = [math.cos(P_V1), math.sin(P_V1), 0.0]
        d2 = [math.cos(P_V2), math.sin(P_V2), 0.0]

        def rod(nm, jn, par, loc, L, ini, mass, pt):
            return ("  - name: %s\n    joint: {name: %s, type: revolute, parent: %s, location: %s, axis: [0, 0, 1], initial: %r}\n"
                    "    mass: %r\n    com: [%r, 0, 0]\n    inertia: %s\n    points: {%s: [%r, 0, 0]}\n"
                    % (nm, jn, par, loc, ini, mass, L / 2, _v(np.diag(_planar_rod_J(mass, L))), pt, L))

        def slider(nm, jn, d, ini, mass):
            return ("  - name: %s\n    joint: {name: %s, type: prismatic, parent: ground, location: [0, 0, 0], axis: %s, initial: %r}\n"
                    "    mass: %r\n    com: [0, 0, 0]\n    inertia: [1.0e-9, 1.0e-9, 1.0e-9]\n    points: {P: [0, 0, 0]}\n"
                    % (nm, jn, _v(d), ini, mass))
        return (_head(name, "Fast planar crank with two slider-cranks and a four-bar, constant crank torque",
                      [0, 0, 0], 2e-5, 0.04)
                + "ground:\n  points:\n    E: %s\n\nbodies:\n" % _v(P_E)
                + rod("crank", "z1", "ground", "[0, 0, 0]", P_A, 0.0, m["crank"], "A")
                + rod("rod1", "z2", "crank", "A", P_L1, t1, m["rod1"], "B")
                + rod("rod2", "z3", "crank", "A", P_L2, t2, m["rod2"], "B")
                + slider("slider1", "z4", d1, s1, m["slider1"])
                + slider("slider2", "z5", d2, s2, m["slider2"])
                + rod("coupler", "z6", "crank", "A", P_L3, t3, m["coupler"], "C")
                + rod("rocker", "z7", "ground", "E", P_L4, t4, m["rocker"], "C")
                + "\ncut_joints:\n"
                "  - {name: B1, type: planar_revolute, body_a: rod1, point_a: B, body_b: slider1, point_b: P}\n"
                "  - {name: B2, type: planar_revolute, body_a: rod2, point_a: B, body_b: slider2, point_b: P}\n"
                "  - {name: C, type: planar_revolute, body_a: coupler, point_a: C, body_b: rocker, point_b: C}\n\n"
                "forces:\n  - {name: drive, type: joint_spring, joint: z1, stiffness: 0, preload: %r}\n\n"
                "independent: [z1]\n" % TAU)
    raise KeyError(name)


if __name__ == "__main__":
    sys.stdout.write(yaml_text(sys.argv[1]))
