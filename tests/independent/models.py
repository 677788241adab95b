"""Independent models of data/double_pendulum.yaml, data/triple_pendulum_3d.yaml
and data/fourbar.yaml, in minimal coordinates.

The parameters are written here from each model's *physical description*
(the comments of the YAML file and SPEC §5), not read from the YAML file, so
a wrong number in a model file shows up as a disagreement.  Every model
class provides

    name               the model name (= `name:` of the YAML file)
    nz, np_, nu        numbers of joint coordinates, pressures, spools
    y0()               initial state of the ODE
    breakpoints        times where an input jumps (the ODE is restarted there)
    rhs(t, y, seg)     the ODE; seg = (a, b) is the current input segment
    outputs(Y)         dict z, zd [N x nz], p [N x np], U [N x nu] from states
    method             the default solve_ivp method (DOP853, or Radau if stiff)
    explicit_max_step  optional: max_step for explicit methods (stiff models)
    atol               absolute tolerances per state component

solve.py integrates them with scipy.integrate.solve_ivp.
"""

import math

import numpy as np
import sympy as sp

from lagrange import Lagrangian, rodrigues

G = 9.81  # m/s^2, along -Y in every model


# ---------------------------------------------------------------------------
# Planar double pendulum: the textbook closed form, derived by hand.
# ---------------------------------------------------------------------------
class DoublePendulum:
    """Two uniform beams, revolute joints about Z, gravity -Y.

    phi1, phi2: absolute angles of the beams from +X.  With a = com distance
    from the inboard joint, I = inertia about the com (Izz):

      T = 1/2 (I1 + m1 a1^2 + m2 L1^2) phi1'^2 + 1/2 (I2 + m2 a2^2) phi2'^2
          + m2 L1 a2 cos(phi1 - phi2) phi1' phi2'
      V = g [(m1 a1 + m2 L1) sin phi1 + m2 a2 sin phi2]

    Lagrange, with k = m2 L1 a2 and s = sin(phi1 - phi2):
      M11 phi1'' + k cos(.) phi2'' = -k s phi2'^2 - g (m1 a1 + m2 L1) cos phi1
      k cos(.) phi1'' + M22 phi2'' =  k s phi1'^2 - g m2 a2 cos phi2

    hymo's coordinates are relative: z1 = phi1, z2 = phi2 - phi1.
    """

    name = "double_pendulum"
    method = "DOP853"
    nz, np_, nu = 2, 0, 0
    m1, L1, m2, L2 = 2.0, 1.0, 1.0, 0.7
    z_init = (math.radians(-45.0), math.radians(30.0))
    breakpoints = ()

    def __init__(self):
        self.a1 = self.L1 / 2
        self.a2 = self.L2 / 2
        self.I1 = self.m1 * self.L1**2 / 12
        self.I2 = self.m2 * self.L2**2 / 12
        self.M11 = self.I1 + self.m1 * self.a1**2 + self.m2 * self.L1**2
        self.M22 = self.I2 + self.m2 * self.a2**2
        self.k = self.m2 * self.L1 * self.a2
        self.atol = np.full(4, 1e-14)

    def y0(self):
        z1, z2 = self.z_init
        return np.array([z1, z1 + z2, 0.0, 0.0])

    def accel(self, phi, phid):
        c = math.cos(phi[0] - phi[1])
        s = math.sin(phi[0] - phi[1])
        M = np.array([[self.M11, self.k * c], [self.k * c, self.M22]])
        rhs = np.array([
            -self.k * s * phid[1] ** 2 - G * (self.m1 * self.a1 + self.m2 * self.L1) * math.cos(phi[0]),
            self.k * s * phid[0] ** 2 - G * self.m2 * self.a2 * math.cos(phi[1]),
        ])
        return np.linalg.solve(M, rhs)

    def rhs(self, t, y, seg=None):
        return np.concatenate([y[2:], self.accel(y[:2], y[2:])])

    def energy(self, y):
        phi, phid = y[:2], y[2:]
        c = math.cos(phi[0] - phi[1])
        T = 0.5 * self.M11 * phid[0] ** 2 + 0.5 * self.M22 * phid[1] ** 2 + self.k * c * phid[0] * phid[1]
        V = G * ((self.m1 * self.a1 + self.m2 * self.L1) * math.sin(phi[0]) + self.m2 * self.a2 * math.sin(phi[1]))
        return T + V

    def outputs(self, Y):
        phi, phid = Y[:, :2], Y[:, 2:]
        z = np.column_stack([phi[:, 0], phi[:, 1] - phi[:, 0]])
        zd = np.column_stack([phid[:, 0], phid[:, 1] - phid[:, 0]])
        n = len(Y)
        return {"z": z, "zd": zd, "p": np.zeros((n, 0)), "U": np.zeros((n, 0))}

    def lagrangian(self):
        """The same pendulum through the generic sympy route (cross-check)."""
        q = sp.symbols("q1 q2")  # relative angles, as hymo
        R1 = rodrigues([0, 0, 1], q[0])
        R2 = R1 * rodrigues([0, 0, 1], q[1])
        ex = sp.Matrix([1, 0, 0])
        L1, a1, a2 = [sp.nsimplify(v) for v in (self.L1, self.a1, self.a2)]
        c1 = R1 * (a1 * ex)
        c2 = R1 * (L1 * ex) + R2 * (a2 * ex)
        J1 = np.diag([0, self.I1, self.I1])
        J2 = np.diag([0, self.I2, self.I2])
        comps = [dict(m=self.m1, c=c1, R=R1, J=J1), dict(m=self.m2, c=c2, R=R2, J=J2)]
        return Lagrangian(q, comps, [0, -G, 0])


# ---------------------------------------------------------------------------
# Spatial triple pendulum: generic sympy Lagrangian.
# ---------------------------------------------------------------------------
def _box_inertia(m, a, b, c):
    return np.diag([m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12])


def _rot(axis, angle):
    a = np.asarray(axis, float)
    a = a / np.linalg.norm(a)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


class OpenChain:
    """Generic open chain of revolute joints in minimal (relative) coordinates.

    joints: list of (parent index or -1, location in parent frame, axis in
    parent frame, initial angle); components: list of (body index, mass,
    com in body frame, inertia about com in body axes or None).
    """

    np_, nu = 0, 0
    breakpoints = ()
    method = "DOP853"

    def __init__(self, joints, components, gravity):
        n = len(joints)
        self.nz = n
        self.z_init = tuple(j[3] for j in joints)
        q = sp.symbols("q1:%d" % (n + 1))
        R = []
        o = []
        for j, (parent, loc, axis, _) in enumerate(joints):
            Rp = sp.eye(3) if parent < 0 else R[parent]
            op = sp.zeros(3, 1) if parent < 0 else o[parent]
            o.append(op + Rp * sp.Matrix([sp.nsimplify(x) for x in loc]))
            R.append(Rp * rodrigues([sp.nsimplify(x) for x in axis], q[j]))
        comps = []
        for body, m, com, J in components:
            c = o[body] + R[body] * sp.Matrix([sp.nsimplify(x) for x in com])
            if J is None:
                comps.append(dict(m=m, c=c, R=None))
            else:
                comps.append(dict(m=m, c=c, R=R[body], J=J))
        self.lag = Lagrangian(q, comps, gravity)
        self.atol = np.full(2 * n, 1e-14)

    def y0(self):
        return np.concatenate([np.array(self.z_init, float), np.zeros(self.nz)])

    def rhs(self, t, y, seg=None):
        n = self.nz
        return np.concatenate([y[n:], self.lag.accel(y[:n], y[n:])])

    def energy(self, y):
        n = self.nz
        return self.lag.energy(y[:n], y[n:])

    def outputs(self, Y):
        n = self.nz
        N = len(Y)
        return {"z": Y[:, :n], "zd": Y[:, n:], "p": np.zeros((N, 0)), "U": np.zeros((N, 0))}


class TriplePendulum3D(OpenChain):
    """data/triple_pendulum_3d.yaml from its description (see the file)."""

    name = "triple_pendulum_3d"

    def __init__(self):
        deg = math.radians
        joints = [
            (-1, [0, 0, 0], [0, 0, 1], deg(-60)),
            (0, [0.8, 0, 0], [0, 1, 1], deg(40)),
            (1, [0.6, 0, 0], [1, 0, 1], deg(70)),
        ]
        Q = _rot([0, 0, 1], deg(10)) @ _rot([1, 0, 0], deg(30))
        J2 = Q @ _box_inertia(1.0, 0.6, 0.08, 0.03) @ Q.T
        components = [
            (0, 1.5, [0.4, 0, 0], _box_inertia(1.5, 0.8, 0.05, 0.05)),
            (1, 1.0, [0.3, 0.02, 0.01], J2),
            (2, 0.6, [0.25, 0, 0], _box_inertia(0.6, 0.5, 0.04, 0.04)),
            (2, 0.3, [0.5, 0.1, 0], None),  # point mass on its arm
        ]
        super().__init__(joints, components, [0, -G, 0])


# ---------------------------------------------------------------------------
# Hydraulically actuated four-bar (SPEC §5.1, §5.2, §2): one DOF + circuit.
# ---------------------------------------------------------------------------
def orifice(dp, p_tr):
    """g(dp) of SPEC §2: turbulent, laminar below p_tr (continuous)."""
    if abs(dp) >= p_tr:
        return math.copysign(math.sqrt(abs(dp)), dp)
    return dp / math.sqrt(p_tr)


class FourBar:
    """Four-bar of SPEC §5.2 in the single coordinate q = theta3.

    theta3 is the absolute angle of body3's axis (from D towards E), so
    D = E - L3 (cos q, sin q).  C is where the circle of radius 3 about O
    (body1's joint C at L1/3) meets the circle of radius L2 = sqrt(2) about
    D, on the branch through the initial C = (3, 0):

        d = |D|,  a = (9 - L2^2 + d^2) / (2 d),  h = sqrt(9 - a^2),
        C = a D/d + h (-D_y, D_x)/d

    (a loop-closure solution by hand, not hymo's Newton on Phi).  The beams'
    orientations follow from the unit vectors u1 = C/3, u2 = (D - C)/L2,
    u3 = (E - D)/L3 (R = [[ux, -uy, 0], [uy, ux, 0], [0, 0, 1]]), and the
    kinetic energy from the generic Lagrangian in lagrange.py.  The cylinder
    from G to F (centre of body3, F = E - u3 L3/2) adds the generalized force
    F_s ds/dq.

    State: y = [q, qd, p1, p2, p3, U].
    """

    name = "fourbar"
    method = "Radau"  # stiff (hydraulic capacitances); DOP853 agrees but needs 3x the work
    # DOP853 (explicit) lets its step grow on the static start [0, 1) s until
    # it leaves its stability region (a 2.8 Pa blip in p1 before the step is
    # rejected); this cap keeps explicit methods inside it
    explicit_max_step = 2e-4
    nz, np_, nu = 3, 3, 1
    # mechanism
    m1, L1, m2, L2, m3, L3 = 225.0, 9.0, 35.0, math.sqrt(2.0), 50.0, 2.0
    E = (0.0, -1.0)
    Gp = (0.0, -2.0)
    # hydraulics (SPEC §5.1)
    p_pump, p_tank = 7.6e6, 1.0e5
    Cv = 2.138e-8
    Vh1, Vh2, Vh3 = 4.71e-5, 3.14e-5, 7.85e-5
    At, Cd, rho = 2.83e-5, 0.8, 850.0
    B_hose, B_oil, B_cyl = 5.5e8, 1.5e9, 3.15e10
    eta, v_s, c_visc = 0.88, 0.01, 0.0
    D_p, D_r, l_cyl = 0.080, 0.035, 1.1
    p3_0 = 3.5e6
    f45 = 35.0
    p_tr = 2.0e5
    # U_ref: +10 V on [1, 2.5), -10 V on [5, 8), else 0
    signal = [(0, 0), (1, 0), (1, 10), (2.5, 10), (2.5, 0), (5, 0), (5, -10), (8, -10), (8, 0), (10, 0)]
    breakpoints = (1.0, 2.5, 5.0, 8.0)

    def __init__(self):
        self.A_p = math.pi * self.D_p**2 / 4
        self.A_r = math.pi * (self.D_p**2 - self.D_r**2) / 4
        self.Ct = self.Cd * self.At * math.sqrt(2 / self.rho)
        self.tau = 1 / (2 * math.pi * self.f45)

        q = sp.Symbol("q")
        E = sp.Matrix([sp.nsimplify(self.E[0]), sp.nsimplify(self.E[1]), 0])
        Gp = sp.Matrix([sp.nsimplify(self.Gp[0]), sp.nsimplify(self.Gp[1]), 0])
        L2sq = 2  # L2^2
        L3 = 2
        rc = 3  # |OC| = L1 / 3
        D = E - L3 * sp.Matrix([sp.cos(q), sp.sin(q), 0])
        d = sp.sqrt(D[0] ** 2 + D[1] ** 2)
        a = (rc**2 - L2sq + d**2) / (2 * d)
        h = sp.sqrt(rc**2 - a**2)
        C = a * D / d + h * sp.Matrix([-D[1], D[0], 0]) / d
        u1 = C / rc
        u2 = (D - C) / sp.sqrt(L2sq)
        u3 = (E - D) / L3

        def Rz(u):
            return sp.Matrix([[u[0], -u[1], 0], [u[1], u[0], 0], [0, 0, 1]])

        def beam(m, L):
            return np.diag([0, m * L**2 / 12, m * L**2 / 12])

        comps = [
            dict(m=self.m1, c=u1 * sp.Rational(9, 2), R=Rz(u1), J=beam(self.m1, self.L1)),
            dict(m=self.m2, c=(C + D) / 2, R=Rz(u2), J=beam(self.m2, self.L2)),
            dict(m=self.m3, c=(D + E) / 2, R=Rz(u3), J=beam(self.m3, self.L3)),
        ]
        self.lag = Lagrangian([q], comps, [0, -G, 0])
        F = E - u3 * L3 / 2
        rvec = F - Gp
        s = sp.sqrt(rvec[0] ** 2 + rvec[1] ** 2)
        self._s = sp.lambdify([q], [s, sp.diff(s, q)], modules="numpy", cse=True)
        self._dirs = sp.lambdify([q], [u1[0], u1[1], u2[0], u2[1], u3[0], u3[1],
                                       sp.diff(u1[0], q), sp.diff(u1[1], q),
                                       sp.diff(u2[0], q), sp.diff(u2[1], q),
                                       sp.diff(u3[0], q), sp.diff(u3[1], q), h],
                                 modules="numpy", cse=True)
        self.q0 = math.pi  # theta3 = z1 + z2 + z3 = 0 - 135 - 45 deg
        self.s0 = self._s(self.q0)[0]
        self.lp0 = self.s0 - self.l_cyl  # no piston_length0: l_pist0 = s0 - l
        self.lr0 = self.l_cyl - self.lp0
        # p scaled in the error control: atol in Pa
        self.atol = np.array([1e-13, 1e-12, 1e-6, 1e-6, 1e-6, 1e-12])

    # --- circuit -----------------------------------------------------------
    def geometry(self, q):
        s, ds = self._s(q)
        return float(s), float(ds)

    def bulk(self, parts):
        """B_e and V of a volume from its parts [(V_s, B_s), ...]."""
        V = sum(v for v, _ in parts)
        inv = 1 / self.B_oil + sum(v / (V * b) for v, b in parts)
        return 1 / inv, V

    def u_ref(self, t, seg):
        """Signal inside segment (a, b): linear between the right limit at a
        and the left limit at b (one-sided, as SPEC §3 asks)."""
        a, b = seg
        pts = self.signal
        # right limit at a: the last point with time == a, else interpolate
        def right(tt):
            vals = [v for (ti, v) in pts if ti == tt]
            return vals[-1] if vals else np.interp(tt, [p[0] for p in pts], [p[1] for p in pts])

        def left(tt):
            vals = [v for (ti, v) in pts if ti == tt]
            return vals[0] if vals else np.interp(tt, [p[0] for p in pts], [p[1] for p in pts])

        va, vb = right(a), left(b)
        if b == a:
            return va
        return va + (vb - va) * (t - a) / (b - a)

    def forces(self, q, qd, p, U):
        s, ds = self.geometry(q)
        sd = ds * qd
        lp = self.lp0 + (s - self.s0)
        lr = self.lr0 - (s - self.s0)
        p1, p2, p3 = p
        fp = p2 * self.A_p - p3 * self.A_r
        F = fp - self.c_visc * sd - (1 - self.eta) * abs(fp) * math.tanh(sd / self.v_s)
        # flows
        Qt = self.Ct * orifice(p1 - p2, self.p_tr)
        if U >= 0:
            QA = self.Cv * U * orifice(self.p_pump - p1, self.p_tr)  # into V1
            QB = self.Cv * U * orifice(p3 - self.p_tank, self.p_tr)  # out of V3
        else:
            QA = -self.Cv * (-U) * orifice(p1 - self.p_tank, self.p_tr)
            QB = -self.Cv * (-U) * orifice(self.p_pump - p3, self.p_tr)
        Be1, V1 = self.bulk([(self.Vh1, self.B_hose)])
        Be2, V2 = self.bulk([(self.Vh2, self.B_hose), (self.A_p * lp, self.B_cyl)])
        Be3, V3 = self.bulk([(self.Vh3, self.B_hose), (self.A_r * lr, self.B_cyl)])
        pd = np.array([
            Be1 / V1 * (QA - Qt),
            Be2 / V2 * (Qt - self.A_p * sd),
            Be3 / V3 * (self.A_r * sd - QB),
        ])
        return F, ds, pd

    def static_pressures(self):
        q = self.q0
        h = self.lag.rhs([q], [0.0])[0]  # = -dV/dq at rest
        s, ds = self.geometry(q)
        F0 = -h / ds
        p2 = (F0 + self.p3_0 * self.A_r) / self.A_p
        return F0, np.array([p2, p2, self.p3_0])

    def y0(self):
        _, p0 = self.static_pressures()
        return np.array([self.q0, 0.0, p0[0], p0[1], p0[2], 0.0])

    def rhs(self, t, y, seg):
        q, qd = y[0], y[1]
        p = y[2:5]
        U = y[5]
        try:
            F, ds, pd = self.forces(q, qd, p, U)
            qdd = self.lag.accel([q], [qd], np.array([F * ds]))[0]
        except ValueError:
            # a trial stage far outside the loop's range (no circle
            # intersection): NaN makes solve_ivp reject the step and shrink it
            return np.full(6, np.nan)
        Ud = (self.u_ref(t, seg) - U) / self.tau
        return np.array([qd, qdd, pd[0], pd[1], pd[2], Ud])

    def energy(self, y):
        return self.lag.energy([y[0]], [y[1]])

    def outputs(self, Y):
        N = len(Y)
        z = np.empty((N, 3))
        zd = np.empty((N, 3))
        hmin = np.inf
        for i, (q, qd) in enumerate(Y[:, :2]):
            u1x, u1y, u2x, u2y, u3x, u3y, d1x, d1y, d2x, d2y, d3x, d3y, h = [float(v) for v in self._dirs(q)]
            th = [math.atan2(u1y, u1x), math.atan2(u2y, u2x), math.atan2(u3y, u3x)]
            # d(theta)/dq = ux du_y/dq - uy du_x/dq for a unit vector u
            thd = [(u1x * d1y - u1y * d1x) * qd, (u2x * d2y - u2y * d2x) * qd, (u3x * d3y - u3y * d3x) * qd]
            z[i] = [th[0], th[1] - th[0], th[2] - th[1]]
            zd[i] = [thd[0], thd[1] - thd[0], thd[2] - thd[1]]
            hmin = min(hmin, h)
        self.min_branch_height = hmin  # distance from the crank/coupler singularity
        z = np.unwrap(z, axis=0)
        z0 = np.radians([0.0, -135.0, -45.0])
        z += 2 * math.pi * np.round((z0 - z[0]) / (2 * math.pi))
        return {"z": z, "zd": zd, "p": Y[:, 2:5], "U": Y[:, 5:6]}


MODELS = {
    "double_pendulum": DoublePendulum,
    "triple_pendulum_3d": TriplePendulum3D,
    "fourbar": FourBar,
}


def get(name):
    """A model by name or by the path of its YAML file (data/NAME.yaml)."""
    import os

    key = os.path.splitext(os.path.basename(name))[0]
    if key not in MODELS:
        raise KeyError("no independent model for '%s' (have: %s)" % (name, ", ".join(sorted(MODELS))))
    return MODELS[key]()
