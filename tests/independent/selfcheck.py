#!/usr/bin/python3
"""selfcheck.py: how accurate are the independent solutions themselves?

    tests/independent/selfcheck.py [MODEL ...] [--dt 1e-3] [--t-end T]

For each model (default: all three) on a grid of step dt:
  * the largest difference between the DOP853 and the Radau solution
    (two unrelated integrators, both at rtol 1e-12) in z, zd, p, U;
  * for the pendulums, the largest change of the total energy T + V along
    the DOP853 solution (it must be conserved);
  * the largest relative error of the symbolic derivatives dM/dq, dV/dq
    against central differences at the initial state;
  * for the double pendulum, the largest difference between the textbook
    closed-form accelerations and the generic Lagrangian's.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models  # noqa: E402
import solve  # noqa: E402

T_END = {"double_pendulum": 5.0, "triple_pendulum_3d": 3.0, "fourbar": 10.0}


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
        q0 = m.y0()[: (1 if m.name == "fourbar" else m.nz)]
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
        print("\n  ".join(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
