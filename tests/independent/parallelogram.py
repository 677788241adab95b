#!/usr/bin/python3
"""Exact solution of the parallelogram chains (tests/models/parallelogramN.yaml,
bench/gen_models.py parallelogram N) and the table of hymo's runs against it.

    parallelogram.py check FILE.h5            one hymo file: max |dz|, estimate/true, drift
    parallelogram.py table [--hymo BIN] [--n 1 2 10] [--dt 1e-3 5e-4 2.5e-4] [--t-end 20] [--json OUT]
                           [--formulation double-step penalty] [--jacobian numeric fast]

N parallelogram four-bars in series: N+1 cranks (uniform rods, length R,
mass MC, hinged on the ground L apart) and N couplers (uniform rods, length
L, mass MB) from the tip of one crank to the tip of the next.  On the
parallelogram branch every crank has the same angle theta and every coupler
translates (absolute angle 0): a one-coordinate system with

    T = 1/2 [(N+1) MC R^2/3 + N MB R^2] theta'^2
    V = g [(N+1) MC R/2 + N MB R] sin(theta)

so theta'' = -(K/M) cos(theta): a pendulum, here turned over and over by
its initial rate (theta(0) = -90 deg, theta'(0) = 5 rad/s).  Joint
coordinates: q_j = theta (cranks), s_j = -theta (couplers, relative to the
crank).  Integrated by DOP853 at rtol = atol = 1e-13 (the energy of the
solution drifts by < 1e-11 J).  The numbers below are the physical
description; nothing else is shared with hymo.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.integrate import solve_ivp

R, L, MC, MB, G = 2.0, 1.0, 1.0, 1.0, 9.81
THETA0, RATE0 = -np.pi / 2, 5.0
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def coefficients(n):
    m = (n + 1) * MC * R * R / 3.0 + n * MB * R * R
    k = G * ((n + 1) * MC * R / 2.0 + n * MB * R)
    return m, k


def exact(n, t_end):
    """Dense solution theta(t), theta'(t) and the energy function."""
    m, k = coefficients(n)
    sol = solve_ivp(lambda t, y: [y[1], -k / m * np.cos(y[0])], (0.0, t_end), [THETA0, RATE0], method="DOP853",
                    rtol=1e-13, atol=1e-13, dense_output=True)
    if not sol.success:
        raise RuntimeError(sol.message)
    return sol.sol, (lambda th, w: 0.5 * m * w * w + k * np.sin(th))


def crossings(theta):
    """Times the cranks pass the horizontal (sin theta changes sign)."""
    return int(np.sum(np.diff(np.sign(np.sin(theta))) != 0))


def _str(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def check(path):
    import h5py

    with h5py.File(path, "r") as f:
        name = _str(f.attrs["model_name"])
        n = int(name[len("parallelogram"):])
        t = f["time"][:]
        z = f["states/z"][:]
        names = [_str(s) for s in f["states/z"].attrs["names"]]
        est = float(f["accuracy"].attrs["z_max_error"]) if "accuracy" in f else float("nan")
        drift = float(f["energy"].attrs["peak_drift"]) if "energy" in f else float("nan")
        complete = int(f.attrs["complete"])
        singular = _str(f.attrs["singular_positions"]) if "singular_positions" in f.attrs else ""
        rates = _str(f.attrs["initial_rates"]) if "initial_rates" in f.attrs else ""
        t_end = float(f.attrs["t_end"]) if "t_end" in f.attrs else t[-1]
    sol, _ = exact(n, max(t[-1], 1e-9))
    th = sol(t)[0]
    err = 0.0
    for j, nm in enumerate(names):
        ref = th if nm.startswith("q") else -th
        err = max(err, float(np.max(np.abs(z[:, j] - ref))))
    return {"n": n, "complete": complete, "t_reached": float(t[-1]), "t_end": t_end, "error": err,
            "estimate": est, "ratio": est / err if err > 0 else float("nan"), "peak_drift": drift,
            "crossings": crossings(th), "singular": singular, "initial_rates": rates}


def table(args):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.n:
            model = os.path.join(ROOT, "tests", "models", "parallelogram%d.yaml" % n)
            for form in args.formulation:
                for jac in args.jacobian:
                    for dt in args.dt:
                        out = os.path.join(tmp, "r.h5")
                        cmd = [args.hymo, "run", model, "--formulation", form, "--jacobian", jac, "--dt", repr(dt),
                               "--t-end", repr(args.t_end), "-o", out, "--quiet"]
                        p = subprocess.run(cmd, capture_output=True, text=True)
                        r = {"n": n, "formulation": form, "jacobian": jac, "dt": dt, "exit": p.returncode}
                        if os.path.exists(out):
                            r.update(check(out))
                            os.remove(out)
                        if p.returncode != 0:
                            r["message"] = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
                        rows.append(r)
                        print("%2d %-11s %-7s %7.2g  exit %d  err %9.3g  est/true %6.3g  drift %9.3g J  %s"
                              % (n, form, jac, dt, p.returncode, r.get("error", float("nan")),
                                 r.get("ratio", float("nan")), r.get("peak_drift", float("nan")),
                                 r.get("message", "")), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("file")
    t = sub.add_parser("table")
    t.add_argument("--hymo", default=os.environ.get("HYMO_BINARY", os.path.join(ROOT, "build", "hymo")))
    t.add_argument("--n", type=int, nargs="+", default=[1, 2, 10])
    t.add_argument("--dt", type=float, nargs="+", default=[1e-3, 5e-4, 2.5e-4])
    t.add_argument("--t-end", type=float, default=20.0)
    t.add_argument("--formulation", nargs="+", default=["double-step", "penalty"])
    t.add_argument("--jacobian", nargs="+", default=["numeric", "fast"])
    t.add_argument("--json")
    a = ap.parse_args(argv)
    if a.cmd == "check":
        print(json.dumps(check(a.file), indent=1))
        return 0
    table(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
