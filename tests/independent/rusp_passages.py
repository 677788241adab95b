#!/usr/bin/python3
"""rusp_passages.py [--dt D1,D2,..] [--formulation F] [--jacobian J] [--extra "..."]
                    [--t-end T] [--hymo PATH]

The spatial RUSP loop (tests/models/loop_rusp.yaml) against its independent
solution (loops.py), passage by passage.  The U joint passes quickly every
~0.85 s (z2, z4 up to 33.5 rad/s, |zdd| up to 1.15e3 rad/s^2; peaks at
0.435, 1.280, 2.150, 2.994 s); between passages the mechanism is slow.

Prints:
  * the reference's own convergence: max |z(rtol 1e-10) - z(rtol 1e-12)|
    per window (DOP853 on the finest grid);
  * per window and step size: max |dz| against the rtol 1e-12 reference,
    the lead d of hymo's motion that fits dz ~ d zd over the window (least
    squares; negative: hymo lags) and what is left of dz after it;
  * the signed error of the coordinate with the largest error at
    t = 2.994 s and that error over dt^2 (constant in the asymptotic
    range of a second-order method).
The step sizes must divide each other and 2.994 s.  Default: 2 ms to
62.5 us, penalty, fast Jacobian.  HYMO_INDEP_CACHE=DIR keeps the
reference solutions.
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import loops  # noqa: E402
import measure_loops  # noqa: E402
import solve  # noqa: E402

WINDOWS = [(0.0, 0.40), (0.40, 0.47), (0.47, 1.25), (1.25, 1.31), (1.31, 2.12), (2.12, 2.18), (2.18, 2.95),
           (2.95, 3.0001)]
T_PEAK = 2.994


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dt", default="2e-3,1e-3,5e-4,2.5e-4,1.25e-4,6.25e-5")
    ap.add_argument("--formulation", default="penalty")
    ap.add_argument("--jacobian", default="fast")
    ap.add_argument("--t-end", type=float, default=3.0)
    ap.add_argument("--extra", default="")
    ap.add_argument("--hymo", default=os.environ.get("HYMO_BINARY", os.path.join(ROOT, "build", "hymo")))
    a = ap.parse_args()
    dts = sorted((float(x) for x in a.dt.split(",")), reverse=True)
    fine = dts[-1]
    n = int(round(a.t_end / fine))
    t = np.arange(n + 1) * fine
    model = loops.MODELS["loop_rusp"]()
    ref = {}
    for rtol in (1e-10, 1e-12):
        out, _ = solve.solve(model, t, rtol=rtol)
        ref[rtol] = (out["z"], out["zd"])
    wins = [(lo, hi) for lo, hi in WINDOWS if lo < a.t_end]
    d = np.abs(ref[1e-10][0] - ref[1e-12][0]).max(axis=1)
    print("reference rtol 1e-10 vs 1e-12, max |dz| per window:")
    print("  " + "  ".join("%.2f-%.2f %.1e" % (lo, hi, d[(t >= lo) & (t < hi)].max()) for lo, hi in wins))
    zr, zdr = ref[1e-12]
    print("| dt ms | window s | max abs dz | lead d s | max abs (dz - d zd) |")
    print("|---|---|---|---|---|")
    peak = []
    for dt in dts:
        r = measure_loops.run(a.hymo, "loop_rusp", a.formulation, a.jacobian, dt, a.t_end, a.extra.split())
        st = int(round(dt / fine))
        tt, e, zd = t[::st], r["z"] - zr[::st][: len(r["z"])], zdr[::st][: len(r["z"])]
        tt = tt[: len(e)]
        for lo, hi in wins:
            s = (tt >= lo) & (tt < hi)
            if not s.any():
                continue
            E, V = e[s].ravel(), zd[s].ravel()
            sh = (E @ V) / (V @ V)
            print("| %g | %.2f-%.2f | %.3e | %+.2e | %.2e |"
                  % (dt * 1e3, lo, hi, np.abs(E).max(), sh, np.abs(E - sh * V).max()), flush=True)
        k = int(round(T_PEAK / dt))
        if k < len(e):
            peak.append((dt, e[k]))
    if peak:
        j = int(np.argmax(np.abs(peak[-1][1])))
        print("signed error of z%d at t = %g s:" % (j + 1, T_PEAK))
        for dt, e in peak:
            print("  %g ms  %+.4e  / dt^2 %+.4e" % (dt * 1e3, e[j], e[j] / dt ** 2))


if __name__ == "__main__":
    main()
