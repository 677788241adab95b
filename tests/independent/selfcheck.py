#!/usr/bin/python3
"""selfcheck.py: how accurate are the independent solutions themselves?

    tests/independent/selfcheck.py [MODEL ...] [--dt 1e-3] [--t-end T]

For each model (default: all five) on a grid of step dt:
  * the largest difference between the DOP853 and the Radau solution
    (two unrelated integrators, both at rtol 1e-12) in z, zd, p, U;
  * for the pendulums, the largest change of the total energy T + V along
    the DOP853 solution (it must be conserved);
  * the largest relative error of the symbolic derivatives dM/dq, dV/dq
    against central differences at the initial state;
  * for the double pendulum, the largest difference between the textbook
    closed-form accelerations and the generic Lagrangian's;
  * for quick-return and crane1 (models with located events): Radau at rtol
    1e-10 and 1e-11 against 1e-12, the energy balance T + V - E0 = W (the
    actuator work, integrated as an extra state), the cut-joint residuals
    of the quick-return by forward kinematics, the cylinder's range and the
    event list.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models  # noqa: E402
import solve  # noqa: E402

T_END = {"double_pendulum": 5.0, "triple_pendulum_3d": 3.0, "fourbar": 10.0, "quickreturn": 10.0, "crane1": 30.0}


def textbook_vs_lagrangian(n=200, seed=1):
    dp = models.DoublePendulum()
    lag = dp.lagrangian()
    rng = np.random.default_rng(seed)
    err = 0.0
    for _ in range(n):
        z = rng.uniform(-np.pi, np.pi, 2)
        zd = rng.uniform(-6, 6, 2)
        phi = np.array([z[0], z[0] + z[1]])
        phid = np.array([zd[0], zd[0] + zd[1]])
        a = dp.accel(phi, phid)
        b = lag.accel(z, zd)
        err = max(err, np.abs(np.array([a[0], a[1] - a[0]]) - b).max())
    return err


def event_model_checks(m, t, ref):
    """Quick-return and crane1: convergence under rtol tightening, the
    energy balance against the actuator work, cut-joint closure, events."""
    out = []
    for rtol in (1e-10, 1e-11):
        o, info = solve.solve(m, t, rtol=rtol, cache=False)
        out.append("Radau rtol %g - rtol 1e-12: z %.1e, zd %.1e, p %.1e, U %.1e" % (
            rtol, *(np.abs(o[k] - ref[k]).max() for k in ("z", "zd", "p", "U"))))
    mw = type(m)(track_work=True)
    o, info = solve.solve(mw, t, cache=False)
    if m.name == "crane1":
        E = np.array([mw.energy(np.r_[a, b]) for a, b in zip(o["z"], o["zd"])])
    else:
        E = np.array([mw.lag.energy([a], [b]) for a, b in zip(o["z"][:, 3], o["zd"][:, 3])])
    D = E - E[0] - o["W"]
    out.append("energy balance T + V - E0 - W: max |D| %.1e J; max |W| %.1f J, max W %.1f J"
               % (np.abs(D).max(), np.abs(o["W"]).max(), o["W"].max()))
    if m.name == "quickreturn":
        cl = np.array([m.closure(z) for z in ref["z"]])
        out.append("cut joints J, M by forward kinematics: max |Phi| %.1e; ram x from %.4f to %.4f m"
                   % (np.abs(cl).max(), mw.ram_x.min(), mw.ram_x.max()))
    if "s" in o:
        s = o["s"]
        out.append("s from %.5f to %.5f m: l_pist min %.2f mm, l_rod min %.2f mm"
                   % (s.min(), s.max(), 1e3 * (m.lp0 + s.min() - m.s0), 1e3 * (m.lr0 - s.max() + m.s0)))
    out.append("events: " + ", ".join("%.9f %s" % e for e in info["events"]))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", default=list(T_END))
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--t-end", type=float, default=None)
    a = ap.parse_args(argv)
    print("double pendulum: textbook vs generic Lagrangian, max |d qdd| over 200 random states: %.2e"
          % textbook_vs_lagrangian())
    for name in a.models:
        m = models.get(name)
        t_end = a.t_end or T_END[m.name]
        t = np.arange(int(round(t_end / a.dt)) + 1) * a.dt
        q0 = m.y0()[: (m.lag.n if hasattr(m, "lag") else m.nz)]
        line = ["%s: dM/dq, dV/dq vs central differences %.1e" % (m.name, m.lag.check_energy(q0) if hasattr(m, "lag") else m.lagrangian().check_energy(q0))]
        res = {}
        for method in ("DOP853", "Radau"):
            t0 = time.perf_counter()
            out, info = solve.solve(m, t, method=method, cache=False)
            res[method] = out
            line.append("%s %d evaluations %.1f s" % (method, info["nfev"], time.perf_counter() - t0))
        d = {k: np.abs(res["DOP853"][k] - res["Radau"][k]).max() if res["DOP853"][k].size else None
             for k in ("z", "zd", "p", "U")}
        line.append("DOP853 - Radau: " + ", ".join("%s %.1e" % (k, v) for k, v in d.items() if v is not None))
        if m.np_ == 0:
            # energy along the DOP853 solution, from the raw states
            z, zd = res["DOP853"]["z"], res["DOP853"]["zd"]
            if m.name == "double_pendulum":
                Y = np.column_stack([z[:, 0], z[:, 0] + z[:, 1], zd[:, 0], zd[:, 0] + zd[:, 1]])
            else:
                Y = np.column_stack([z, zd])
            E = np.array([m.energy(y) for y in Y])
            n = Y.shape[1] // 2
            V = np.array([m.energy(np.concatenate([y[:n], np.zeros(n)])) for y in Y])
            line.append("energy drift (DOP853) %.1e J; kinetic energy up to %.2f J"
                        % (np.abs(E - E[0]).max(), np.max(E - V)))
        if m.name == "fourbar":
            line.append("closest approach to the crank/coupler singularity h_min = %.3f m" % m.min_branch_height)
        if hasattr(m, "events"):
            line += event_model_checks(m, t, res["Radau"])
        print("\n  ".join(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
