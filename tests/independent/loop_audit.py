#!/usr/bin/python3
"""loop_audit.py table JSON...            Markdown tables from measure_loops.py --json files
   loop_audit.py agree [--hymo PATH] [--dt D]  double-step fast against numeric on the RUSR loops

table: per formulation, model and step size: the fast and numeric
Jacobians' max |dz| against the independent solution (loops.py),
fast/numeric, the ratio to the next larger step of the same file, the
stored estimate over the true error ("u": the file marks the estimate
unreliable, /accuracy reliable = 0), the fast run's peak energy drift.

agree: tests/models/loop_rusr_{spherical,revolute}.yaml with double-step
at one step size (default 2 ms), fast and numeric Jacobian: exit status,
completeness, max |z_fast - z_numeric| over all rows and joints, the
global error of each against the independent solution, and their ratio;
exit status 1 when a ratio exceeds --limit (default 0.01) or a run fails.
HYMO_INDEP_CACHE=DIR keeps the independent solutions.
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import measure_loops  # noqa: E402


def table(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            rows += json.load(f)
    for form in sorted({r["formulation"] for r in rows}, reverse=True):
        print("\n%s:\n" % form)
        print("| model | Δt ms | fast max abs dz | numeric max abs dz | fast/numeric | fast per halving "
              "| numeric per halving | est/true fast | est/true numeric | drift fast J |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        key = {(r["model"], r["dt"], r["jacobian"]): r for r in rows if r["formulation"] == form}
        for m, dt in sorted({(k[0], k[1]) for k in key}, key=lambda x: (x[0], -x[1])):
            f, n = key.get((m, dt, "fast")), key.get((m, dt, "numeric"))
            if not f or not n:
                continue

            def halving(r):
                return "%.2f" % r["halving"] if r["halving"] else "–"

            def est(r):
                return "%.3g%s" % (r["ratio_est"], "" if r["reliable"] == 1 else " u")

            print("| %s | %g | %.3e | %.3e | %.2f | %s | %s | %s | %s | %.2e |"
                  % (m.replace("loop_", ""), dt * 1e3, f["error"], n["error"], f["error"] / n["error"],
                     halving(f), halving(n), est(f), est(n), f["drift"]))


def agree(hymo, dt, limit):
    bad = 0
    for name in ("loop_rusr_spherical", "loop_rusr_revolute"):
        t_end = measure_loops.t_end_of(name)
        _, zref = measure_loops.reference(name, dt, t_end)
        r = {j: measure_loops.run(hymo, name, "double-step", j, dt, t_end) for j in ("fast", "numeric")}
        n = min(len(r["fast"]["z"]), len(r["numeric"]["z"]))
        d = float(np.abs(r["fast"]["z"][:n] - r["numeric"]["z"][:n]).max())
        e = {j: float(np.abs(r[j]["z"] - zref[: len(r[j]["z"])]).max()) for j in r}
        print("%s double-step dt %g ms: exit fast %d numeric %d, complete %d/%d, rows %d/%d; "
              "max |z_fast - z_numeric| %.3e; global error fast %.4e numeric %.4e; difference / global error %.2e"
              % (name, dt * 1e3, r["fast"]["exit"], r["numeric"]["exit"], r["fast"]["complete"],
                 r["numeric"]["complete"], len(r["fast"]["z"]), len(r["numeric"]["z"]), d, e["fast"],
                 e["numeric"], d / e["numeric"]))
        if r["fast"]["exit"] or r["numeric"]["exit"] or not (d <= limit * e["numeric"]):
            bad += 1
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("table")
    t.add_argument("json", nargs="+")
    a = sub.add_parser("agree")
    a.add_argument("--hymo", default=os.environ.get("HYMO_BINARY",
                                                    os.path.join(measure_loops.ROOT, "build", "hymo")))
    a.add_argument("--dt", type=float, default=2e-3)
    a.add_argument("--limit", type=float, default=0.01)
    args = ap.parse_args()
    if args.cmd == "table":
        table(args.json)
        return 0
    return agree(args.hymo, args.dt, args.limit)


if __name__ == "__main__":
    sys.exit(main())
