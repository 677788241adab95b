"""Independent models of data/double_pendulum.yaml, data/triple_pendulum_3d.yaml,
data/fourbar.yaml, data/quickreturn.yaml and data/crane1.yaml, in minimal
coordinates.

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
def _circuit_constants(m):
    """Piston and rod-side areas, throttle coefficient and spool time
    constant from a model's diameters, throttle area and valve bandwidth."""
    m.A_p = math.pi * m.D_p**2 / 4
    m.A_r = math.pi * (m.D_p**2 - m.D_r**2) / 4
    m.Ct = m.Cd * m.At * math.sqrt(2 / m.rho)
    m.tau = 1 / (2 * math.pi * m.f45)


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
        _circuit_constants(self)

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

    def forces(self, q, qd, p, U, valve_sign=None):
        """Cylinder force F, ds/dq and the pressure rates.  valve_sign (+1 or
        -1) fixes which pair of valve edges is open (the event solver of the
        quick-return holds it constant between located U = 0 crossings);
        None: from the sign of U."""
        s, ds = self.geometry(q)
        sd = ds * qd
        lp = self.lp0 + (s - self.s0)
        lr = self.lr0 - (s - self.s0)
        p1, p2, p3 = p
        fp = p2 * self.A_p - p3 * self.A_r
        F = fp - self.c_visc * sd - (1 - self.eta) * abs(fp) * math.tanh(sd / self.v_s)
        # flows
        Qt = self.Ct * orifice(p1 - p2, self.p_tr)
        if (U >= 0) if valve_sign is None else (valve_sign > 0):
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



# ---------------------------------------------------------------------------
# Shared pieces of the models with located events (quick-return, crane1).
# ---------------------------------------------------------------------------
_SEG_CACHE = {}


def signal_value(points, t, seg):
    """A piecewise-linear signal (SPEC §5; docs/model-format.md "signals")
    inside the input segment seg = (a, b), whose ends are consecutive
    breakpoints: linear from the right limit at a to the left limit at b.
    Two points at one time are a step (value before, then after)."""
    a, b = seg
    key = (id(points), a, b)
    ends = _SEG_CACHE.get(key)
    if ends is not None:
        va, vb = ends
        return va if b == a else va + (vb - va) * (t - a) / (b - a)
    ts = [p[0] for p in points]
    vs = [p[1] for p in points]

    def limit(tt, side):
        same = [v for (ti, v) in points if ti == tt]
        if same:
            return same[-1] if side > 0 else same[0]
        if tt <= ts[0]:
            return vs[0]
        if tt >= ts[-1]:
            return vs[-1]
        return float(np.interp(tt, ts, vs))

    va, vb = limit(a, +1), limit(b, -1)
    _SEG_CACHE[key] = (va, vb)
    if b == a:
        return va
    return va + (vb - va) * (t - a) / (b - a)


def valve_mode(U, u_mid):
    """Which valve edges are open: the sign of U; at U = 0 exactly (a
    restart at rest), the sign U is about to take (that of U_ref)."""
    if U > 0:
        return 1
    if U < 0:
        return -1
    return -1 if u_mid < 0 else 1


def spool_event(signal, iU, mode, iv, y, seg):
    """The U = 0 crossing of the spool state y[iU] against the valve sign
    mode[iv]: downward for +1, upward for -1.  Left out while the spool sits
    at exactly 0 with U_ref = 0 on the whole segment (it stays there, and a
    switching function that is identically 0 would fire at every step)."""
    vs = mode[iv]
    if y[iU] == 0 and signal_value(signal, seg[0], seg) == 0 and signal_value(signal, seg[1], seg) == 0:
        return []
    new = list(mode)
    new[iv] = -vs
    return [(lambda t, yy: yy[iU], -1 if vs > 0 else 1, tuple(new), "U=0")]


def _rz(u):
    return sp.Matrix([[u[0], -u[1], 0], [u[1], u[0], 0], [0, 0, 1]])


def _beam(m, L):
    return np.diag([0, m * L**2 / 12, m * L**2 / 12])


class QuickReturn(FourBar):
    """Quick-return mechanism of SPEC §5.3 in the single coordinate
    q = theta4 (absolute angle of the crank, body4 = z4).

    Loop closure by hand (no Newton on Phi):
      crank  L = K + (cos q, sin q), K = (0, 3); N = K + (cos q, sin q)/2
      cut M: L lies on body1's axis through O = (0, 0) and body5 has body1's
             angle, so u1 = L/|L| (L_y >= 2 > 0: the branch towards L) and
             theta5 = theta1;
      body1: H = 5 u1;
      cut J: I = H + 1.2 u2 lies on y = 5 and the ram keeps the angle pi:
             sin theta2 = (5 - H_y)/1.2, cos theta2 = -sqrt(1 - sin^2)
             (the branch of the initial theta2 = 76.22 + 96.89 deg = 173.11 deg).
    Kinetic energy from the generic Lagrangian: beams 1, 2, 4 (com at mid
    length, m L^2/12), the ram (3 kg at I, translating only) and the slider
    block (30 kg at L, rotating with body1, I = m 0.3^2/6).  The cylinder runs
    from Q = (-0.96, 3) to N; circuit and parameters of SPEC §5.1 (those of
    the four-bar); U_ref = -10 V on [1, 4), +10 V on [6.5, 8), 0 otherwise.

    Events: U = 0 crossings of the spool (the valve law switches between
    edge pairs there: the flow is continuous, its slope in U is not); the
    integration restarts at each.  State: y = [q, qd, p1, p2, p3, U] (+ W,
    the actuator work, with track_work=True).
    """

    name = "quickreturn"
    method = "Radau"
    explicit_max_step = 2e-4
    nz, np_, nu = 5, 3, 1
    m1, L1, m2, L2, m3, m4, L4, m5 = 25.0, 5.0, 12.0, 1.2, 3.0, 100.0, 1.0, 30.0
    cube = 0.3
    K = (0.0, 3.0)
    Q = (-0.96, 3.0)
    y_ram = 5.0
    signal = [(0, 0), (1, 0), (1, -10), (4, -10), (4, 0), (6.5, 0), (6.5, 10), (8, 10), (8, 0), (10, 0)]
    breakpoints = (1.0, 4.0, 6.5, 8.0)
    z_init_deg = (76.22, 96.89, 6.89, 30.59, 45.63)

    def __init__(self, track_work=False):
        self.track_work = track_work
        _circuit_constants(self)
        if "_built" not in type(self).__dict__:   # the symbolic part once per process (~5 s)
            type(self)._built = self._build()
        self.lag, self._s, self._dirs = self._built
        self.q0 = math.radians(self.z_init_deg[3])   # z4 held; the rest assembled
        self.s0 = float(self._s(self.q0)[0])
        self.lp0 = self.s0 - self.l_cyl
        self.lr0 = self.l_cyl - self.lp0
        self.atol = np.array([1e-13, 1e-12, 1e-6, 1e-6, 1e-6, 1e-12] + ([1e-9] if track_work else []))

    def _build(self):
        q = sp.Symbol("q")
        r = sp.nsimplify
        K = sp.Matrix([r(self.K[0]), r(self.K[1]), 0])
        Qp = sp.Matrix([r(self.Q[0]), r(self.Q[1]), 0])
        u4 = sp.Matrix([sp.cos(q), sp.sin(q), 0])
        L = K + u4
        N = K + u4 / 2
        u1 = L / sp.sqrt(L[0] ** 2 + L[1] ** 2)
        H = 5 * u1
        s2 = (r(self.y_ram) - H[1]) / r(self.L2)
        u2 = sp.Matrix([-sp.sqrt(1 - s2**2), s2, 0])
        Ipt = H + r(self.L2) * u2
        Jc = self.m3 * self.cube**2 / 6
        J5 = self.m5 * self.cube**2 / 6
        comps = [
            dict(m=self.m1, c=H / 2, R=_rz(u1), J=_beam(self.m1, self.L1)),
            dict(m=self.m2, c=H + r(self.L2) / 2 * u2, R=_rz(u2), J=_beam(self.m2, self.L2)),
            dict(m=self.m3, c=Ipt, R=_rz([-1, 0]), J=np.eye(3) * Jc),   # the ram keeps angle pi
            dict(m=self.m4, c=N, R=_rz(u4), J=_beam(self.m4, self.L4)),
            dict(m=self.m5, c=L, R=_rz(u1), J=np.eye(3) * J5),
        ]
        lag = Lagrangian([q], comps, [0, -G, 0], symbolic=True)
        rvec = N - Qp
        s = sp.sqrt(rvec[0] ** 2 + rvec[1] ** 2)
        fs = sp.lambdify([q], [s, sp.diff(s, q)], modules="numpy", cse=True)
        dirs = sp.lambdify([q], [u1[0], u1[1], u2[0], u2[1],
                                 sp.diff(u1[0], q), sp.diff(u1[1], q),
                                 sp.diff(u2[0], q), sp.diff(u2[1], q), Ipt[0], u2[1]],
                           modules="numpy", cse=True)
        return lag, fs, dirs

    # --- modes and events ------------------------------------------------------
    def mode_at(self, t, y, seg, prev=None):
        return (valve_mode(y[5], signal_value(self.signal, 0.5 * (seg[0] + seg[1]), seg)),)

    def events(self, mode, t, y, seg):
        """[(g(t, y), direction, new mode, label)] for the current mode, from
        the state y at the start t of the piece in input segment seg."""
        vs = mode[0]
        return spool_event(self.signal, 5, mode, 0, y, seg)

    def rhs(self, t, y, seg, mode=None):
        q, qd = y[0], y[1]
        p = y[2:5]
        U = y[5]
        n = len(y)
        try:
            F, ds, pd = self.forces(q, qd, p, U, valve_sign=None if mode is None else mode[0])
            qdd = self.lag.accel([q], [qd], np.array([F * ds]))[0]
        except ValueError:
            return np.full(n, np.nan)
        Ud = (signal_value(self.signal, t, seg) - U) / self.tau
        out = [qd, qdd, pd[0], pd[1], pd[2], Ud]
        if self.track_work:
            out.append(F * ds * qd)
        return np.array(out)

    def outputs(self, Y):
        N = len(Y)
        z = np.empty((N, 5))
        zd = np.empty((N, 5))
        self.ram_x = np.empty(N)
        for i, (q, qd) in enumerate(Y[:, :2]):
            u1x, u1y, u2x, u2y, d1x, d1y, d2x, d2y, xI, s2 = [float(v) for v in self._dirs(q)]
            th1 = math.atan2(u1y, u1x)
            th2 = math.atan2(u2y, u2x)
            w1 = (u1x * d1y - u1y * d1x) * qd
            w2 = (u2x * d2y - u2y * d2x) * qd
            z[i] = [th1, th2 - th1, math.pi - th2, q, th1 - q]
            zd[i] = [w1, w2 - w1, -w2, qd, w1 - qd]
            self.ram_x[i] = xI
        z = np.unwrap(z, axis=0)
        z0 = np.radians(self.z_init_deg)
        z += 2 * math.pi * np.round((z0 - z[0]) / (2 * math.pi))
        out = {"z": z, "zd": zd, "p": Y[:, 2:5], "U": Y[:, 5:6]}
        if self.track_work:
            out["W"] = Y[:, 6]
        return out

    def y0(self):
        _, p0 = self.static_pressures()
        y = [self.q0, 0.0, p0[0], p0[1], p0[2], 0.0]
        return np.array(y + ([0.0] if self.track_work else []))

    @staticmethod
    def closure(z):
        """Cut-joint residuals of SPEC §1.3 from the five relative angles by
        forward kinematics along the tree (not through the closed form):
        J: (I - (0, 5)) . n = I_y - 5 and theta3 - pi; M: (L - O) . n1 and
        theta5 - theta1.  Angles wrapped to (-pi, pi]."""
        z1, z2, z3, z4, z5 = z
        th1, th2, th3, th4, th5 = z1, z1 + z2, z1 + z2 + z3, z4, z4 + z5
        H = 5 * np.array([math.cos(th1), math.sin(th1)])
        I = H + 1.2 * np.array([math.cos(th2), math.sin(th2)])
        L = np.array([0.0, 3.0]) + np.array([math.cos(th4), math.sin(th4)])
        n1 = np.array([-math.sin(th1), math.cos(th1)])

        def wrap(a):
            return (a + math.pi) % (2 * math.pi) - math.pi

        return np.array([I[1] - 5.0, wrap(th3 - math.pi), L @ n1, wrap(th5 - th1)])


class Crane1:
    """Single-actuator crane of SPEC §5.4 in q = (z1, z2) (relative angles,
    as the model file: z1 of the boom from +X, z2 of the hanging rod relative
    to the boom).

    Boom: uniform rod 1 m, 200 kg (com 0.5 m, m L^2/12) and a 250 kg point
    mass at its tip Q; body2: massless rod 0.5 m with 100 kg at its tip R.
    The three are separate components of the generic Lagrangian (no folding
    into one body).  Cylinder from B = (sqrt(3)/2, 0) to P = the boom's
    centre: s0 = 0.5 m, l_pist = 0.05 + (s - s0), l_rod = 0.25 - (s - s0).

    Circuit (SPEC §5.4, §2): valve P->A into V3 (hose 4.71e-5 m^3), throttle
    V3 -> V1 (piston side: hose 3.14e-5 m^3 + A_pist l_pist), rod side V2
    (hose 7.85e-5 m^3 + A_rod l_rod) -> valve B -> tank; hoses 150 MPa,
    chambers 31.5 GPa, oil 1.5 GPa.  Force
        F = p1 A_pist - p2 A_rod - c sd + F_d,   c = 1e5 N s/m, eta = 1,
        F_d = k_d (l_d - l_pist) - c_d sd   in the piston-end zone l_pist <= l_d,
        F_d = -k_d (l_d - l_rod) - c_d sd   in the rod-end zone  l_rod <= l_d,
    with l_d = 8 mm, k_d = 1e7 N/m, c_d = 5e3 N s/m.  The damping term makes
    F jump on entry and exit: these are located events (l_pist = l_d,
    l_rod = l_d), the integration restarts there with the force law of the
    side it moves into; so are the spool's U = 0 crossings and the kinks of
    the piecewise-linear U_ref (input segments).

    State: y = [z1, z2, z1d, z2d, p1, p2, p3, U] (+ W with track_work=True).
    mode = (damper zone 0 | 1 piston end | 2 rod end, valve sign +1 | -1).
    """

    name = "crane1"
    method = "Radau"
    explicit_max_step = 2e-4
    nz, np_, nu = 2, 3, 1
    m_rod, L1, m_tip, m_load, L2 = 200.0, 1.0, 250.0, 100.0, 0.5
    B = (math.sqrt(3.0) / 2, 0.0)
    z_init = (math.pi / 6, 4 * math.pi / 3)   # 30 deg, 240 deg
    p_pump, p_tank = 7.6e6, 1.0e5
    Cv = 1.069e-8
    Vh1, Vh2, Vh3 = 3.14e-5, 7.85e-5, 4.71e-5
    At, Cd, rho = 2.83e-5, 0.8, 850.0
    B_hose, B_oil, B_cyl = 1.5e8, 1.5e9, 3.15e10
    D_p, D_r = 0.080, 0.035
    l_cyl, lp0, lr0 = 0.3, 0.05, 0.25
    c_visc = 1.0e5
    l_d, k_d, c_d = 0.008, 1.0e7, 5.0e3
    p2_0 = 3.5e6
    f45 = 35.0
    p_tr = 2.0e5
    signal = [(0, 0), (1, 0), (1.5, -8), (3, -8), (3.5, 0), (6, 0), (7, 10), (14, 10),
              (15, 0), (16, 0), (17, -10), (19, -10), (20, 0), (22, 0), (23, 4), (25, 4),
              (26, -4), (28, -4), (29, 0), (30, 0)]
    breakpoints = tuple(float(p[0]) for p in signal[1:-1])

    def __init__(self, track_work=False):
        self.track_work = track_work
        _circuit_constants(self)
        if "_built" not in type(self).__dict__:
            type(self)._built = self._build()
        self.lag, self._s = self._built
        self.s0 = float(self._s(self.z_init[0])[0])   # 0.5 m
        self.atol = np.array([1e-13, 1e-13, 1e-12, 1e-12, 1e-6, 1e-6, 1e-6, 1e-12]
                             + ([1e-9] if track_work else []))

    def _build(self):
        q = sp.symbols("q1 q2")
        u1 = sp.Matrix([sp.cos(q[0]), sp.sin(q[0]), 0])
        u2 = sp.Matrix([sp.cos(q[0] + q[1]), sp.sin(q[0] + q[1]), 0])
        comps = [
            dict(m=self.m_rod, c=u1 / 2, R=_rz(u1), J=_beam(self.m_rod, self.L1)),
            dict(m=self.m_tip, c=u1, R=None),
            dict(m=self.m_load, c=u1 + sp.Rational(1, 2) * u2, R=None),
        ]
        lag = Lagrangian(list(q), comps, [0, -G, 0], symbolic=True)
        Bp = sp.Matrix([sp.sqrt(3) / 2, 0, 0])
        rvec = u1 / 2 - Bp
        s = sp.sqrt(rvec[0] ** 2 + rvec[1] ** 2)
        return lag, sp.lambdify([q[0]], [s, sp.diff(s, q[0])], modules="numpy", cse=True)

    # --- circuit -----------------------------------------------------------------
    def bulk(self, parts):
        V = sum(v for v, _ in parts)
        inv = 1 / self.B_oil + sum(v / (V * b) for v, b in parts)
        return 1 / inv, V

    def bulk2(self, Vh, Bh, Vc, Bc):
        """bulk() for one hose part and one chamber part (Vc = 0: none)."""
        V = Vh + Vc
        return 1 / (1 / self.B_oil + Vh / (V * Bh) + Vc / (V * Bc)), V

    def lengths(self, z1):
        s, ds = self._s(z1)
        s, ds = float(s), float(ds)
        return s, ds, self.lp0 + (s - self.s0), self.lr0 - (s - self.s0)

    def force(self, z1, z1d, p1, p2, zone):
        s, ds, lp, lr = self.lengths(z1)
        sd = ds * z1d
        F = p1 * self.A_p - p2 * self.A_r - self.c_visc * sd
        if zone == 1:
            F += self.k_d * (self.l_d - lp) - self.c_d * sd
        elif zone == 2:
            F += -self.k_d * (self.l_d - lr) - self.c_d * sd
        return F, s, ds, sd, lp, lr

    def zone_of(self, y):
        _, _, lp, lr = self.lengths(y[0])
        return 1 if lp <= self.l_d else (2 if lr <= self.l_d else 0)

    def mode_at(self, t, y, seg, prev=None):
        zone = self.zone_of(y)
        if prev is not None:
            _, _, lp, lr = self.lengths(y[0])
            if min(abs(lp - self.l_d), abs(lr - self.l_d)) < 1e-14:
                zone = prev[0]      # on a boundary: keep the side we are on
        return (zone, valve_mode(y[7], signal_value(self.signal, 0.5 * (seg[0] + seg[1]), seg)))

    def events(self, mode, t, y, seg):
        zone, vs = mode
        ev = spool_event(self.signal, 7, mode, 1, y, seg)
        gp = lambda t, y: self.lengths(y[0])[2] - self.l_d
        gr = lambda t, y: self.lengths(y[0])[3] - self.l_d
        if zone == 0:
            ev += [(gp, -1, (1, vs), "enter piston-end damper"),
                   (gr, -1, (2, vs), "enter rod-end damper")]
        elif zone == 1:
            ev += [(gp, 1, (0, vs), "leave piston-end damper")]
        else:
            ev += [(gr, 1, (0, vs), "leave rod-end damper")]
        return ev

    def rhs(self, t, y, seg, mode=None):
        if mode is None:
            mode = self.mode_at(t, y, seg)
        zone, vs = mode
        q, qd = y[0:2], y[2:4]
        p1, p2, p3, U = y[4], y[5], y[6], y[7]
        F, s, ds, sd, lp, lr = self.force(q[0], qd[0], p1, p2, zone)
        qdd = self.lag.accel(q, qd, np.array([F * ds, 0.0]))
        Qt = self.Ct * orifice(p3 - p1, self.p_tr)                   # V3 -> V1
        if vs > 0:
            Q3 = self.Cv * U * orifice(self.p_pump - p3, self.p_tr)    # P -> A (into V3)
            Q2 = -self.Cv * U * orifice(p2 - self.p_tank, self.p_tr)   # B -> T (out of V2)
        else:
            Q3 = -self.Cv * (-U) * orifice(p3 - self.p_tank, self.p_tr)  # A -> T
            Q2 = self.Cv * (-U) * orifice(self.p_pump - p2, self.p_tr)   # P -> B
        Be1, V1 = self.bulk2(self.Vh1, self.B_hose, self.A_p * lp, self.B_cyl)
        Be2, V2 = self.bulk2(self.Vh2, self.B_hose, self.A_r * lr, self.B_cyl)
        Be3, V3 = self.bulk2(self.Vh3, self.B_hose, 0.0, self.B_cyl)
        Ud = (signal_value(self.signal, t, seg) - U) / self.tau
        out = [qd[0], qd[1], qdd[0], qdd[1],
               Be1 / V1 * (Qt - self.A_p * sd),
               Be2 / V2 * (Q2 + self.A_r * sd),
               Be3 / V3 * (Q3 - Qt),
               Ud]
        if self.track_work:
            out.append(F * sd)
        return np.array(out)

    def static_pressures(self):
        q = np.array(self.z_init)
        h = self.lag.rhs(q, [0.0, 0.0])       # -dV/dq at rest
        s, ds, lp, lr = self.lengths(q[0])
        F0 = -h[0] / ds
        p1 = (F0 + self.p2_0 * self.A_r) / self.A_p
        return F0, np.array([p1, self.p2_0, p1]), h

    def y0(self):
        _, p0, _ = self.static_pressures()
        y = [self.z_init[0], self.z_init[1], 0.0, 0.0, p0[0], p0[1], p0[2], 0.0]
        return np.array(y + ([0.0] if self.track_work else []))

    def energy(self, y):
        return self.lag.energy(y[0:2], y[2:4])

    def outputs(self, Y):
        out = {"z": Y[:, 0:2].copy(), "zd": Y[:, 2:4].copy(), "p": Y[:, 4:7], "U": Y[:, 7:8]}
        s = np.array([self.lengths(z1)[0] for z1 in Y[:, 0]])
        out["s"] = s
        if self.track_work:
            out["W"] = Y[:, 8]
        return out


MODELS = {
    "double_pendulum": DoublePendulum,
    "triple_pendulum_3d": TriplePendulum3D,
    "fourbar": FourBar,
    "quickreturn": QuickReturn,
    "crane1": Crane1,
}


def get(name):
    """A model by name or by the path of its YAML file (data/NAME.yaml)."""
    import os

    key = os.path.splitext(os.path.basename(name))[0]
    if key == "bennett":  # tests/independent/bennett.py
        from bennett import Bennett
        return Bennett()
    if key == "spatial_fourbar":  # tests/independent/spatial.py
        from spatial import SpatialFourBar
        return SpatialFourBar()
    if key.startswith("loop_"):  # tests/independent/loops.py
        from loops import MODELS as LOOPS
        return LOOPS[key]()
    if key not in MODELS:
        raise KeyError("no independent model for '%s' (have: %s)" % (name, ", ".join(sorted(MODELS))))
    return MODELS[key]()
