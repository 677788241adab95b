#!/usr/bin/python3
"""measure_loops.py [--models A,B] [--dt D1,D2,..] [--formulations ..] [--jacobians ..]
                    [--t-end T] [--rtol R] [--hymo PATH] [--extra "..."] [--json OUT]

hymo on the closed loops of tests/models/loop_*.yaml against their
independent solutions (tests/independent/loops.py): for every model,
formulation, Jacobian and step size, max |dz| over all rows and joints,
the ratio to the next smaller step, the run's stored estimate
(/accuracy z_max_error) over the true error, and the energy drift.  The
step sizes must divide each other (the independent solution is computed
once on the finest grid).  Default: each model's four step sizes of the
table in tests/independent/README.md.
"""

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import loops  # noqa: E402
import solve  # noqa: E402

DT = {
    "loop_rusr_spherical": [2e-3, 1e-3, 5e-4, 2.5e-4],
    "loop_rusr_revolute": [2e-3, 1e-3, 5e-4, 2.5e-4],
    "loop_rusp": [2e-3, 1e-3, 5e-4, 2.5e-4],
    "loop_fast_planar": [4e-5, 2e-5, 1e-5, 5e-6],
}
RTOL = 1e-10


def model_file(name):
    return os.path.join(ROOT, "tests", "models", name + ".yaml")


def t_end_of(name):
    import yaml
    with open(model_file(name)) as f:
        return float(yaml.safe_load(f)["simulation"]["t_end"])


@functools.lru_cache(maxsize=None)
def reference(name, dt, t_end, rtol=RTOL):
    """z on the grid k dt, k = 0 .. t_end/dt (computed once per process for
    the same arguments; callers must not modify the arrays)."""
    n = int(round(t_end / dt))
    t = np.arange(n + 1) * dt
    out, _ = solve.solve(loops.MODELS[name](), t, rtol=rtol)
    return t, out["z"]


def run(hymo, name, formulation, jacobian, dt, t_end, extra=()):
    import h5py
    fd, path = tempfile.mkstemp(suffix=".h5")
    os.close(fd)
    try:
        cmd = [hymo, "run", model_file(name), "--formulation", formulation, "--jacobian", jacobian,
               "--dt", repr(dt), "--t-end", repr(t_end), "-q", "-o", path] + list(extra)
        p = subprocess.run(cmd, capture_output=True, text=True)
        with h5py.File(path, "r") as f:
            z = f["states/z"][:]
            est = float(f["accuracy"].attrs["z_max_error"]) if "accuracy" in f else float("nan")
            reliable = int(f["accuracy"].attrs.get("reliable", -1)) if "accuracy" in f else -1
            drift = float(np.abs(f["energy/drift"][:]).max())
            complete = int(f.attrs["complete"])
        return {"z": z, "estimate": est, "reliable": reliable, "drift": drift, "complete": complete, "exit": p.returncode}
    finally:
        os.unlink(path)


def measure(hymo, name, dts, formulations, jacobians, t_end, rtol=RTOL, extra=()):
    dts = sorted(dts, reverse=True)
    tf, zf = reference(name, dts[-1], t_end, rtol)
    rows = []
    for form in formulations:
        for jac in jacobians:
            prev = None
            for dt in dts:
                step = int(round(dt / dts[-1]))
                r = run(hymo, name, form, jac, dt, t_end, extra)
                zr = zf[::step]
                n = min(len(zr), len(r["z"]))
                err = float(np.abs(r["z"][:n] - zr[:n]).max())
                row = {"model": name, "formulation": form, "jacobian": jac, "dt": dt, "error": err,
                       "estimate": r["estimate"], "ratio_est": r["estimate"] / err if err > 0 else float("nan"),
                       "reliable": r["reliable"],
                       "drift": r["drift"], "complete": r["complete"], "exit": r["exit"],
                       "halving": prev / err if prev else None}
                prev = err
                rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(DT))
    ap.add_argument("--dt", default=None)
    ap.add_argument("--formulations", default="penalty,double-step")
    ap.add_argument("--jacobians", default="fast,numeric")
    ap.add_argument("--t-end", type=float, default=None)
    ap.add_argument("--rtol", type=float, default=RTOL)
    ap.add_argument("--hymo", default=os.environ.get("HYMO_BINARY", os.path.join(ROOT, "build", "hymo")))
    ap.add_argument("--extra", default="")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    allrows = []
    print("| model | formulation | jacobian | dt | max abs dz | ratio per halving | estimate/true | energy drift J | complete |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in a.models.split(","):
        dts = [float(x) for x in a.dt.split(",")] if a.dt else DT[name]
        t_end = a.t_end or t_end_of(name)
        rows = measure(a.hymo, name, dts, a.formulations.split(","), a.jacobians.split(","), t_end, a.rtol,
                       a.extra.split())
        for r in rows:
            print("| %s | %s | %s | %g | %.3e | %s | %.3g | %.2e | %d%s |"
                  % (r["model"], r["formulation"], r["jacobian"], r["dt"], r["error"],
                     "%.2f" % r["halving"] if r["halving"] else "-", r["ratio_est"], r["drift"], r["complete"],
                     "" if r["exit"] == 0 else " (exit %d)" % r["exit"]), flush=True)
        allrows += rows
    if a.json:
        with open(a.json, "w") as f:
            json.dump(allrows, f, indent=1)


if __name__ == "__main__":
    main()
