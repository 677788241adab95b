#!/usr/bin/python3
"""measure_events.py: hymo against the independent solution of a model with
located events (crane1: end-damper entries and exits), with the error near
the events broken out.

    tests/independent/measure_events.py [--model crane1]
        [--dt 2e-3,1e-3,5e-4,2.5e-4,1.25e-4,6.25e-5] [--jacobian fast,numeric]
        [--formulation double-step] [--ida 1e-10,1e-11] [--ida-atol 1e-12]
        [--window 0.05] [--extra "--newton-test contractive"] [--hymo build/hymo]
        [--outdir DIR] [--json FILE] [--reuse]

The independent solution (models.py, solve.py: Radau at rtol 1e-12,
restarted at every input breakpoint and at every located event) is computed
once on the finest grid that holds every requested dt (with --ida also the
model file's 1 ms) and sampled on each run's rows.  For every run

    hymo run data/MODEL.yaml --jacobian J --formulation F --dt D -o OUT.h5 -q
    hymo run data/MODEL.yaml --integrator ida --rtol R --atol A -o OUT.h5 -q

it prints max |dz| (rad or m, over all rows and coordinates), max |dp| (Pa,
over all rows and volumes) with the time of the largest, max |dp| in the
windows [t_e, t_e + window] after the damper entries and after the exits
(t_e from the independent solution's event list) and outside them, max |dz|
and max |dp| before the first damper event (the smooth part), the ratio
of successive errors per halving of dt (4 for second order), and the wall
time (the run's own /solver wall_time, and the whole process).  Set
HYMO_INDEP_CACHE=DIR to keep the independent solution between runs.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import compare  # noqa: E402
import models  # noqa: E402
import solve  # noqa: E402


def independent_on(model, dts, t_end):
    """The independent solution on the finest grid that holds all dts."""
    base = min(dts)
    for dt in dts:
        k = dt / base
        if abs(k - round(k)) > 1e-9:
            raise SystemExit("measure_events.py: dt %g is not a multiple of %g" % (dt, base))
    n = int(round(t_end / base))
    t = np.arange(n + 1) * base
    out, info = solve.solve(model, t)
    return base, t, out, info


def rows_of(h_t, base):
    k = np.rint(h_t / base).astype(np.int64)
    if np.abs(h_t - k * base).max() > 1e-9:
        raise SystemExit("measure_events.py: the run's rows are not on the %g s grid" % base)
    return k


def window_mask(t, events, kind, width):
    m = np.zeros(len(t), bool)
    for te, label in events:
        if kind in label:
            m |= (t >= te) & (t <= te + width)
    return m


def metrics(h, ind, k, events, width, has_p):
    t = h["t"]
    dz = np.abs(h["z"] - ind["z"][k])
    r = {"rows": len(t), "t_end": float(t[-1]), "complete": h["complete"],
         "z": float(dz.max()), "z_at": float(t[np.unravel_index(dz.argmax(), dz.shape)[0]])}
    if has_p:
        dp = np.abs(h["p"] - ind["p"][k]).max(axis=1)
        r["p"] = float(dp.max())
        r["p_at"] = float(t[dp.argmax()])
        ent = window_mask(t, events, "enter", width)
        ext = window_mask(t, events, "leave", width)
        r["p_entry"] = float(dp[ent].max()) if ent.any() else 0.0
        r["p_exit"] = float(dp[ext].max()) if ext.any() else 0.0
        rest = ~(ent | ext)
        r["p_rest"] = float(dp[rest].max()) if rest.any() else 0.0
        dzr = dz.max(axis=1)
        r["z_rest"] = float(dzr[rest].max()) if rest.any() else 0.0
        # before the first damper event: the smooth part (input kinks only)
        firsts = [te for te, label in events if "damper" in label]
        pre = t < (min(firsts) if firsts else np.inf)
        r["p_pre"] = float(dp[pre].max()) if pre.any() else 0.0
        r["z_pre"] = float(dzr[pre].max()) if pre.any() else 0.0
    return r


def run(cmd):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stderr.strip(), time.perf_counter() - t0


def wall_of(path):
    import h5py

    with h5py.File(path, "r") as f:
        return float(f["solver"].attrs.get("wall_time", float("nan")))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="crane1")
    ap.add_argument("--dt", default="2e-3,1e-3,5e-4,2.5e-4,1.25e-4,6.25e-5")
    ap.add_argument("--jacobian", default="fast,numeric")
    ap.add_argument("--formulation", default="double-step")
    ap.add_argument("--ida", default="", help="IDA rtols (comma separated), run at the model's dt")
    ap.add_argument("--ida-atol", type=float, default=1e-12)
    ap.add_argument("--window", type=float, default=0.05, help="s after each damper event")
    ap.add_argument("--hymo", default=os.environ.get("HYMO_BINARY", os.path.join(ROOT, "build", "hymo")))
    ap.add_argument("--outdir", default=os.environ.get("TMPDIR", "/tmp") + "/hymo-indep-events")
    ap.add_argument("--extra", default="", help="extra hymo run options (trapezoidal runs)")
    ap.add_argument("--json", default=None, help="also write all figures to this JSON file")
    ap.add_argument("--reuse", action="store_true", help="do not rerun hymo where OUT.h5 exists in --outdir")
    a = ap.parse_args(argv)
    os.makedirs(a.outdir, exist_ok=True)
    model = models.get(a.model)
    yaml = os.path.join(ROOT, "data", model.name + ".yaml")
    dts = [float(x) for x in a.dt.split(",") if x]
    idas = [float(x) for x in a.ida.split(",") if x]
    t_end = models_t_end(model)
    base, t, ind, info = independent_on(model, dts + ([1e-3] if idas else []), t_end)
    events = info.get("events", [])
    print("independent solution: %d rows at %g s, %s%d evaluations, %.1f s; events:"
          % (len(t), base, "cached, " if info.get("cached") else "", info["nfev"], info["wall"]), file=sys.stderr)
    for te, label in events:
        print("  t = %.9f s  %s" % (te, label), file=sys.stderr)
    has_p = model.np_ > 0
    results = []

    def one(tag, cmd, out):
        if a.reuse and os.path.exists(out):
            rc, msg, wall_proc = 0, "", float("nan")
        else:
            rc, msg, wall_proc = run(cmd)
        if rc not in (0, 3):
            print("  %s: exit %d: %s" % (tag, rc, msg), file=sys.stderr)
            results.append({"run": tag, "fail": msg})
            return
        h = compare.read_hymo(out)
        r = metrics(h, ind, rows_of(h["t"], base), events, a.window, has_p)
        r.update(run=tag, cmd=" ".join(shlex.quote(c) for c in cmd), wall=wall_of(out), wall_process=wall_proc)
        results.append(r)
        print("  %s: z %.3e (t=%g)%s  wall %.3f s (process %.2f s)" % (
            tag, r["z"], r["z_at"],
            ("  p %.3e Pa (t=%g), entry %.3e, exit %.3e, rest %.3e, before %.3e" % (
                r["p"], r["p_at"], r["p_entry"], r["p_exit"], r["p_rest"], r["p_pre"])) if has_p else "",
            r["wall"], r["wall_process"]), file=sys.stderr, flush=True)

    for jac in [j for j in a.jacobian.split(",") if j]:
        for form in [f for f in a.formulation.split(",") if f]:
            for dt in dts:
                out = os.path.join(a.outdir, "%s-%s-%s-%g.h5" % (model.name, form, jac, dt))
                cmd = [a.hymo, "run", yaml, "--jacobian", jac, "--formulation", form, "--dt", repr(dt),
                       "-o", out, "-q"] + shlex.split(a.extra)
                one("%s %s dt=%g" % (form, jac, dt), cmd, out)
    for rtol in idas:
        out = os.path.join(a.outdir, "%s-ida-%g.h5" % (model.name, rtol))
        cmd = [a.hymo, "run", yaml, "--integrator", "ida", "--rtol", repr(rtol), "--atol", repr(a.ida_atol),
               "-o", out, "-q"]
        one("ida rtol=%g atol=%g" % (rtol, a.ida_atol), cmd, out)

    # Markdown tables
    print("\n### %s against the independent solution (window %g s after each damper event)\n" % (model.name, a.window))
    keys = [("z", "max dz"), ("z_pre", "dz before 1st event"), ("p", "max dp Pa"), ("p_pre", "dp before 1st event"),
            ("p_entry", "dp entry"), ("p_exit", "dp exit"), ("p_rest", "dp rest")]
    if not has_p:
        keys = keys[:1]
    print("| run | " + " | ".join(k[1] for k in keys) + " | t of max dp | wall s |")
    print("|" + "---|" * (len(keys) + 3))
    prev = {}
    for r in results:
        if "fail" in r:
            print("| %s | failed: %s |" % (r["run"], r["fail"]))
            continue
        group = r["run"].rsplit(" ", 1)[0]
        cells = []
        for k, _ in keys:
            c = "%.3g" % r[k]
            if group in prev and "dt=" in r["run"] and prev[group].get(k):
                c += " (%.1f)" % (prev[group][k] / r[k]) if r[k] else ""
            cells.append(c)
        prev[group] = r
        print("| %s | %s | %s | %.3f |" % (r["run"], " | ".join(cells), "%g" % r.get("p_at", float("nan")), r["wall"]))
    print("\n(ratios in parentheses: error at the previous dt / error here)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"model": model.name, "events": events, "base_dt": base, "results": results}, f, indent=1)
    return 0


def models_t_end(model):
    return {"crane1": 30.0, "quickreturn": 10.0, "fourbar": 10.0}.get(model.name, 10.0)


if __name__ == "__main__":
    sys.exit(main())
