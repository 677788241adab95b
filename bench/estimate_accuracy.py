#!/usr/bin/python3
"""The error estimate (/accuracy) against the true error, on the shipped models.

usage: bench/estimate_accuracy.py HYMO OUTDIR [--ida] [MODEL ...]

Trapezoidal (default): every model at dt = 1 and 0.25 ms, both formulations,
both Jacobians, default settings; the truth is the independent
minimal-coordinate solution of tests/independent where one exists (solved
once on the 0.25 ms grid, cached in OUTDIR/ind), else hymo at dt/16 with the
numeric Jacobian and the model's Newton tolerances / 100.  --ida: IDA at
rtol 1e-6, 1e-8, 1e-10 (default atol) on fourbar, quickreturn and crane1,
against the independent solution and against IDA at rtol 1e-13.
Prints one line per run (est/true for z, p, s; the /accuracy check) and
writes OUTDIR/results.json.  Figures: docs/results.md ("Error estimate
against the true error").  About 30 min of CPU (the independent solutions
of the four-bar and quick-return take ~8 min each).
"""
import json, os, re, subprocess, sys
from concurrent.futures import ThreadPoolExecutor

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
D = os.path.join(ROOT, "data")
sys.path.insert(0, os.path.join(ROOT, "tests", "independent"))
IND = {"double_pendulum", "triple_pendulum_3d", "fourbar", "quickreturn", "crane1", "bennett", "spatial_fourbar"}
ALL = ["double_pendulum", "triple_pendulum_3d", "fourbar", "quickreturn", "crane1", "bennett", "spatial_fourbar",
       "crane2", "excavator", "forestry_crane", "pump_demo", "relief_demo"]


def t_end(m):
    return float(re.search(r"^\s*t_end:\s*([0-9.eE+-]+)", open("%s/%s.yaml" % (D, m)).read(), re.M).group(1))


def independent(out, m):
    """The independent solution on the 0.25 ms grid (cached)."""
    path = "%s/ind/%s.npz" % (out, m)
    if not os.path.exists(path):
        import models, solve
        os.makedirs(os.path.dirname(path), exist_ok=True)
        t = np.arange(int(round(t_end(m) / 2.5e-4)) + 1) * 2.5e-4
        o, _ = solve.solve(models.get(m), t, cache=False)
        np.savez(path, t=t, **{k: v for k, v in o.items() if isinstance(v, np.ndarray)})
    return np.load(path)


def run(hymo, args, out):
    if not os.path.exists(out):
        r = subprocess.run([hymo, "run"] + args + ["-q", "-o", out], capture_output=True, text=True)
        if r.returncode:
            return r.stderr.strip()
    return None


def read(path):
    with h5py.File(path, "r") as f:
        d = {"t": f["time"][:], "z": f["states/z"][:], "p": f["states/p"][:], "s": f["actuators/s"][:]}
        a = f["accuracy"].attrs if "accuracy" in f else None
        d["acc"] = None if a is None else {k: (a[k].decode() if isinstance(a[k], bytes) else float(a[k])) for k in a}
        d["missing"] = f.attrs.get("accuracy_missing_reason")
    return d


def tol_args(m):
    mm = re.search(r"tolerances:\s*\{position:\s*([0-9.eE+-]+),\s*pressure:\s*([0-9.eE+-]+),\s*spool:\s*([0-9.eE+-]+)\}",
                   open("%s/%s.yaml" % (D, m)).read())
    pos, pr, sp = (1e-8, 1e-2, 1e-8) if not mm else map(float, mm.groups())
    return ["--set", "simulation.tolerances.position=%g" % (pos / 100), "--set",
            "simulation.tolerances.pressure=%g" % (pr / 100), "--set", "simulation.tolerances.spool=%g" % (sp / 100)]


def maxdiff(a, b):
    return float(np.abs(a - b).max()) if a.size else 0.0


def trapezoidal(hymo, out, models):
    jobs = [(m, dt, f, j) for m in models for dt in (1e-3, 2.5e-4) for f in ("double-step", "penalty")
            for j in ("numeric", "fast")]
    refs = [(m, dt) for m in models if m not in IND for dt in (1e-3, 2.5e-4)]
    with ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda md: run(hymo, ["%s/%s.yaml" % (D, md[0]), "--dt", "%.17g" % (md[1] / 16), "--jacobian",
                                          "numeric"] + tol_args(md[0]), "%s/ref_%s_%g.h5" % (out, md[0], md[1])), refs))
        errs = list(ex.map(lambda j: run(hymo, ["%s/%s.yaml" % (D, j[0]), "--dt", "%g" % j[1], "--formulation", j[2],
                                                "--jacobian", j[3]], "%s/%s_%g_%s_%s.h5" % ((out,) + j)), jobs))
    rows = []
    for (m, dt, f, j), e in zip(jobs, errs):
        row = {"model": m, "dt": dt, "form": f, "jac": j}
        if e:
            row["error"] = e
            rows.append(row)
            continue
        h = read("%s/%s_%g_%s_%s.h5" % (out, m, dt, f, j))
        if m in IND:
            ind = independent(out, m)
            idx = np.rint(h["t"] / 2.5e-4).astype(int)
            tr = {"z": maxdiff(h["z"], ind["z"][idx])}
            if h["p"].size:
                tr["p"] = maxdiff(h["p"], ind["p"][idx])
            row["truth"] = "independent"
        else:
            r = read("%s/ref_%s_%g.h5" % (out, m, dt))
            idx = np.rint(h["t"] / (dt / 16)).astype(int)
            tr = {q: maxdiff(h[q], r[q][idx]) for q in "zps" if h[q].size}
            row["truth"] = "dt/16 numeric tol/100"
        row["true"] = tr
        if h["acc"]:
            row["est"] = {q: h["acc"]["%s_max_error" % q] for q in "zps"}
            row["reliable"], row["check"] = h["acc"].get("reliable"), h["acc"].get("check")
            row["ratio"] = {q: row["est"][q] / tr[q] for q in tr if tr[q] > 0}
        else:
            row["missing"] = str(h["missing"])
        rows.append(row)
        rat = " ".join("%s %6.2f" % kv for kv in row.get("ratio", {}).items())
        print("%-18s %-5g %-11s %-7s est/true %-26s reliable %s | %s" % (m, dt * 1e3, f, j, rat, row.get("reliable"),
                                                                        row.get("check", row.get("missing"))))
    return rows


def ida(hymo, out, models):
    rows = []
    for m in models:
        tight = "%s/%s_ida_tight.h5" % (out, m)
        run(hymo, ["%s/%s.yaml" % (D, m), "--integrator", "ida", "--rtol", "1e-13", "--atol", "1e-15"], tight)
        tight = read(tight)
        ind = independent(out, m)
        for rtol in ("1e-6", "1e-8", "1e-10"):
            path = "%s/%s_ida_%s.h5" % (out, m, rtol)
            run(hymo, ["%s/%s.yaml" % (D, m), "--integrator", "ida", "--rtol", rtol], path)
            h = read(path)
            idx = np.rint(h["t"] / 2.5e-4).astype(int)
            row = {"model": m, "rtol": float(rtol), "est": {q: h["acc"]["%s_max_error" % q] for q in "zp"},
                   "true_independent": {q: maxdiff(h[q], ind[q][idx]) for q in "zp"},
                   "true_ida_tight": {q: maxdiff(h[q], tight[q]) for q in "zp"}, "reliable": h["acc"]["reliable"]}
            rows.append(row)
            print("%-12s rtol %-6s est z %.2e p %.2e | true (independent) z %.2e p %.2e: est/true z %.2f p %.2f | "
                  "reliable %s" % (m, rtol, row["est"]["z"], row["est"]["p"], row["true_independent"]["z"],
                                   row["true_independent"]["p"], row["est"]["z"] / row["true_independent"]["z"],
                                   row["est"]["p"] / row["true_independent"]["p"], row["reliable"]))
    return rows


def main():
    args = sys.argv[1:]
    use_ida = "--ida" in args
    args = [a for a in args if a != "--ida"]
    hymo, out, models = args[0], args[1], args[2:]
    os.makedirs(out, exist_ok=True)
    rows = ida(hymo, out, models or ["fourbar", "quickreturn", "crane1"]) if use_ida else trapezoidal(hymo, out, models or ALL)
    json.dump(rows, open("%s/results%s.json" % (out, "_ida" if use_ida else ""), "w"), indent=1)


if __name__ == "__main__":
    main()
