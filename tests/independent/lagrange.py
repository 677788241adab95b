"""Equations of motion in minimal coordinates from the Lagrangian.

This module shares nothing with hymo's semirecursive formulation: there are
no 6-vector velocity recursions, no accumulated inertias, no R_d / T
matrices and no angular velocities.  A mechanism is described only by

  * the global centre of mass c_k(q) of each rigid component k, and
  * the global orientation matrix R_k(q) of each component (None for a
    point mass),

as sympy expressions in the minimal coordinates q.  The kinetic energy is
written from the time derivative of the orientation matrix,

    T = sum_k 1/2 m_k |c_k'|^2 + 1/2 tr( R_k' E_k R_k'^T ),
    E_k = 1/2 tr(J_k) I - J_k

(E is the second moment of mass about the centre of mass in body axes, J
the inertia tensor; with R' = R [w]x this equals 1/2 w^T J w, but no w is
ever formed).  With c' = sum_i c_,i qd_i and R' = sum_i R_,i qd_i this is
T = 1/2 qd^T M(q) qd with

    M_ij = sum_k  m_k c_k,i . c_k,j + tr( R_k,i E_k R_k,j^T ),

and V = - sum_k m_k g . c_k.  Lagrange's equations
d/dt(dT/dqd) - dT/dq + dV/dq = Q_ext become

    M qdd = Q_ext - dV/dq - (sum_l M_,l qd_l) qd + 1/2 [qd^T M_,i qd]_i .

Differentiating M gives

    M_ij,l = sum_k m_k (c_k,il . c_k,j + c_k,i . c_k,jl)
             + tr( R_k,il E_k R_k,j^T + R_k,i E_k R_k,jl^T ).

sympy supplies c, R and their first and second partial derivatives exactly
(symbolic differentiation, compiled to plain Python with common
subexpressions shared); the sums above are evaluated in NumPy.
`Lagrangian.check_energy` tests M_,l and V_,i against central differences
of M and V.
"""

import numpy as np
import sympy as sp


def rodrigues(axis, angle):
    """Rotation matrix about a (not necessarily unit) axis by a symbolic angle."""
    a = sp.Matrix(axis)
    a = a / sp.sqrt((a.T * a)[0])
    K = sp.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return sp.eye(3) + sp.sin(angle) * K + (1 - sp.cos(angle)) * K * K


def second_moment(J):
    """E = 1/2 tr(J) I - J: the second moment of mass about the com."""
    J = np.asarray(J, float)
    return 0.5 * np.trace(J) * np.eye(3) - J


def compile_exprs(args, exprs, name="f"):
    """A plain-Python function of the symbols `args` returning the list
    `exprs`, with common subexpressions shared (sympy.cse) and `math`
    functions (fast on scalars; no lambdify docstring)."""
    from sympy.printing.pycode import PythonCodePrinter

    pr = PythonCodePrinter({"fully_qualified_modules": True})
    repl, red = sp.cse(list(exprs), optimizations="basic")
    lines = ["def %s(%s):" % (name, ", ".join(str(a) for a in args))]
    for sym, e in repl:
        lines.append("    %s = %s" % (sym, pr.doprint(e)))
    lines.append("    return [%s]" % ", ".join(pr.doprint(e) for e in red))
    ns = {"math": __import__("math")}
    exec("\n".join(lines), ns)
    return ns[name]


class Lagrangian:
    """M(q) qdd = h(q, qd) + Q_ext for a set of rigid components.

    components: list of dicts with keys
        m   mass (number)
        c   3x1 sympy Matrix, global centre of mass as a function of q
        R   3x3 sympy Matrix, global orientation (None: point mass)
        J   3x3 inertia tensor about the com in body axes (ignored if R is None)
    gravity: the gravity vector (3 numbers), m/s^2.
    """

    def __init__(self, q, components, gravity, symbolic=False):
        self.q = list(q)
        n = self.n = len(self.q)
        self.g = np.asarray(gravity, float)
        exprs = []

        def add(X):
            """Append X, X_,i, X_,il; return their index arrays into the values."""
            X1 = X.jacobian(self.q)                            # rows x n: X_,i
            X2 = X1.reshape(X1.rows * n, 1).jacobian(self.q)   # (row, i) x l: X_,il
            k0 = len(exprs)
            exprs.extend(list(X) + list(X1) + list(X2))
            r = X.rows
            i0 = np.arange(k0, k0 + r)
            i1 = np.arange(k0 + r, k0 + r + r * n).reshape(r, n)
            i2 = np.arange(k0 + r + r * n, k0 + r + r * n + r * n * n).reshape(r, n, n)
            return i0, i1, i2

        mT, ic, ic1, ic2, iR1, iR2, Es = [], [], [], [], [], [], []
        for comp in components:
            i0, i1, i2 = add(sp.Matrix(comp["c"]))
            mT.append(float(comp["m"]))
            ic.append(i0)
            ic1.append(i1)
            ic2.append(i2)
            if comp.get("R") is not None:
                _, j1, j2 = add(sp.Matrix(comp["R"]).reshape(9, 1))   # row-major
                iR1.append(j1)
                iR2.append(j2)
                Es.append(second_moment(comp["J"]))
        self._f = compile_exprs(self.q, exprs)
        self._m = np.array(mT)
        self._ic, self._ic1, self._ic2 = np.array(ic), np.array(ic1), np.array(ic2)
        self._nrot = len(Es)
        if Es:
            self._iR1, self._iR2, self._E = np.array(iR1), np.array(iR2), np.array(Es)
        self._fast = None
        if symbolic:
            self._compile_symbolic(components)

    def _compile_symbolic(self, components):
        """The same M, dM/dq, dV/dq written out symbolically (small n): the
        sums of mass_and_derivs formed by sympy, differentiated and compiled
        into one plain-Python function.  Much faster per call than the
        NumPy sums; `accel_numeric` keeps the NumPy route for cross-checks."""
        n = self.n
        q = self.q
        M = sp.zeros(n, n)
        V = sp.Integer(0)
        dV = sp.zeros(n, 1)
        g = sp.Matrix([sp.nsimplify(x) for x in self.g])
        for comp in components:
            m = sp.nsimplify(comp["m"])
            c = sp.Matrix(comp["c"])
            c1 = c.jacobian(q)
            M += m * c1.T * c1
            V += -m * (g.T * c)[0]
            dV += -m * (c1.T * g)
            if comp.get("R") is not None:
                R = sp.Matrix(comp["R"])
                E = sp.Matrix(second_moment(comp["J"]))
                Ri = [R.diff(qi) for qi in q]
                for i in range(n):
                    for j in range(i, n):
                        tr = (Ri[i] * E * Ri[j].T).trace()
                        M[i, j] += tr
                        if j != i:
                            M[j, i] += tr
        dM = [M.diff(ql) for ql in q]
        exprs = list(M) + [e for D in dM for e in D] + list(dV) + [V]
        self._fast = compile_exprs(q, exprs, "lagr")

    def mass_and_derivs_symbolic(self, q):
        n = self.n
        v = self._fast(*[float(x) for x in q])
        M = np.array(v[: n * n]).reshape(n, n)
        dM = np.array(v[n * n: n * n + n**3]).reshape(n, n, n).transpose(1, 2, 0)  # [i, j, l]
        dV = np.array(v[n * n + n**3: n * n + n**3 + n])
        return M, dM, dV, float(v[-1])

    def mass_and_derivs(self, q):
        """M [n x n], dM [n x n x n] (dM[:, :, l] = dM/dq_l), dV/dq [n], V."""
        n = self.n
        vals = np.array(self._f(*[float(x) for x in q]), dtype=float)
        # translation: M_ij = sum_k m_k c_,i . c_,j; d/dq_l: c_,il . c_,j + c_,i . c_,jl
        c = vals[self._ic]                                     # [k, x]
        c1 = vals[self._ic1]                                   # [k, x, i]
        mc1 = self._m[:, None, None] * c1
        M = np.einsum("kxi,kxj->ij", mc1, c1)
        A = np.einsum("kxi,kxjl->ijl", mc1, vals[self._ic2])   # c_,i . c_,jl
        dM = A + A.transpose(1, 0, 2)
        dV = -(self.g @ mc1.sum(axis=0))
        V = -float(self._m @ (c @ self.g))
        if self._nrot:
            K = self._nrot
            Ri = vals[self._iR1].transpose(0, 2, 1).reshape(K, n, 3, 3)       # R_,i
            RiE = (Ri @ self._E[:, None]).reshape(K, n, 9)
            # M_ij += tr(R_,i E R_,j^T) = sum_ab (R_,i E)_ab (R_,j)_ab
            M += np.einsum("kia,kja->ij", RiE, Ri.reshape(K, n, 9))
            # d/dq_l: tr(R_,il E R_,j^T) + tr(R_,i E R_,jl^T); E is symmetric,
            # so the first term is the second with i and j exchanged
            B = np.einsum("kia,kajl->ijl", RiE, vals[self._iR2])
            dM += B + B.transpose(1, 0, 2)
        return M, dM, dV, V

    def _h(self, dM, dV, qd):
        Mdot = dM @ qd                                           # sum_l M_,l qd_l
        dTdq = 0.5 * np.tensordot(np.outer(qd, qd), dM, axes=([0, 1], [0, 1]))
        return -dV - Mdot @ qd + dTdq

    def accel(self, q, qd, qext=None):
        """qdd; through the compiled symbolic sums when available."""
        if self._fast is None:
            return self.accel_numeric(q, qd, qext)
        n = self.n
        v = self._fast(*[float(x) for x in q])
        qd = [float(x) for x in qd]
        nn = n * n
        # h_i = -V_,i - sum_jl M_ij,l qd_l qd_j + 1/2 sum_jk M_jk,i qd_j qd_k  (plain Python, small n)
        h = []
        for i in range(n):
            hi = -v[nn + n * nn + i]
            for j in range(n):
                for k in range(n):
                    hi -= v[nn + k * nn + i * n + j] * qd[k] * qd[j]
                    hi += 0.5 * v[nn + i * nn + j * n + k] * qd[j] * qd[k]
            if qext is not None:
                hi += float(qext[i])
            h.append(hi)
        if n == 1:
            return np.array([h[0] / v[0]])
        if n == 2:
            a, b, c, d = v[0], v[1], v[2], v[3]
            det = a * d - b * c
            return np.array([(d * h[0] - b * h[1]) / det, (a * h[1] - c * h[0]) / det])
        return np.linalg.solve(np.array(v[:nn]).reshape(n, n), np.array(h))

    def accel_numeric(self, q, qd, qext=None):
        qd = np.asarray(qd, float)
        M, dM, dV, _ = self.mass_and_derivs(q)
        h = self._h(dM, dV, qd)
        if qext is not None:
            h = h + qext
        return np.linalg.solve(M, h)

    def rhs(self, q, qd):
        """h(q, qd) (no external forces): M qdd = h."""
        _, dM, dV, _ = self.mass_and_derivs(q)
        return self._h(dM, dV, np.asarray(qd, float))

    def mass(self, q):
        return self.mass_and_derivs(q)[0]

    def energy(self, q, qd):
        M, _, _, V = self.mass_and_derivs(q)
        qd = np.asarray(qd, float)
        return 0.5 * qd @ M @ qd + V

    def check_energy(self, q, eps=1e-6):
        """Largest relative error of dM/dq and dV/dq against central differences."""
        q = np.asarray(q, float)
        M, dM, dV, V = self.mass_and_derivs(q)
        err = 0.0
        for l in range(self.n):
            e = np.zeros(self.n)
            e[l] = eps
            Mp, _, _, Vp = self.mass_and_derivs(q + e)
            Mm, _, _, Vm = self.mass_and_derivs(q - e)
            err = max(err, np.abs((Mp - Mm) / (2 * eps) - dM[:, :, l]).max() / max(1.0, np.abs(M).max()))
            err = max(err, abs((Vp - Vm) / (2 * eps) - dV[l]) / max(1.0, abs(V)))
        return err
