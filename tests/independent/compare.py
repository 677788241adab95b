#!/usr/bin/python3
"""compare.py MODEL REF.h5 [--method DOP853|Radau] [--rtol R] [--json]

Reads a hymo reference file (docs/hdf5-format.md), integrates the
independent minimal-coordinate model MODEL (a name such as
double_pendulum, or the path data/NAME.yaml) on the file's /time grid and
prints the largest differences:

    max |dz|   rad (or m), over all rows and joint coordinates
    max |dzd|  rad/s
    max |dp|   Pa          (models with hydraulics)
    max |dU|   V

Exit status: 0 on success, 2 on bad input (unknown model, unreadable file,
model name mismatch), 3 if the hymo file is incomplete (the rows present
are still compared).
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models  # noqa: E402
import solve  # noqa: E402


def _str(v):
    """A string attribute as str: fixed-length strings (hymo's files)
    read as bytes in h5py, variable-length ones as str."""
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def read_hymo(path):
    import h5py

    with h5py.File(path, "r") as f:
        if int(f.attrs["format_version"]) != 1:
            raise ValueError("%s: unsupported format_version %d" % (path, f.attrs["format_version"]))
        d = {
            "model_name": _str(f.attrs["model_name"]),
            "complete": int(f.attrs["complete"]),
            "jacobian": _str(f.attrs["jacobian"]),
            "formulation": _str(f.attrs["formulation"]),
            "dt": float(f.attrs["dt"]),
            "t": f["time"][:],
            "z": f["states/z"][:],
            "zd": f["states/zd"][:],
            "p": f["states/p"][:],
            "U": f["states/U"][:],
            "iterations": f["solver/iterations"][:],
        }
        d["z_names"] = [_str(n) for n in f["states/z"].attrs["names"]]
    return d


def errors(model_name, path, method=None, rtol=solve.RTOL):
    model = models.get(model_name)
    h = read_hymo(path)
    if h["model_name"] != model.name:
        raise ValueError("%s holds model '%s', not '%s'" % (path, h["model_name"], model.name))
    ind, info = solve.solve(model, h["t"], method=method, rtol=rtol)
    dz = np.abs(h["z"] - ind["z"])
    res = {
        "model": model.name,
        "file": path,
        "formulation": h["formulation"],
        "jacobian": h["jacobian"],
        "dt": h["dt"],
        "complete": h["complete"],
        "t_end": float(h["t"][-1]),
        "rows": len(h["t"]),
        "z_max_error": float(dz.max()),
        "z_max_error_at": float(h["t"][np.unravel_index(dz.argmax(), dz.shape)[0]]),
        "zd_max_error": float(np.abs(h["zd"] - ind["zd"]).max()),
        "mean_iterations": float(h["iterations"][1:].mean()) if len(h["t"]) > 1 else 0.0,
        "independent_method": method or model.method,
        "independent_nfev": info["nfev"],
        "independent_wall": info["wall"],
    }
    if model.np_:
        dp = np.abs(h["p"] - ind["p"])
        res["p_max_error"] = float(dp.max())
        res["p_max_error_at"] = float(h["t"][np.unravel_index(dp.argmax(), dp.shape)[0]])
    if model.nu:
        res["U_max_error"] = float(np.abs(h["U"] - ind["U"]).max())
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="model name or data/NAME.yaml")
    ap.add_argument("ref", help="hymo reference file (HDF5)")
    ap.add_argument("--method", default=None, choices=["DOP853", "Radau", "LSODA", "BDF"],
                    help="solve_ivp method (default: DOP853 for the pendulums, Radau for the hydraulic models)")
    ap.add_argument("--rtol", type=float, default=solve.RTOL)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args(argv)
    try:
        r = errors(a.model, a.ref, a.method, a.rtol)
    except (KeyError, ValueError, OSError) as e:
        print("compare.py: error: %s" % e, file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(r))
    else:
        print("model %s  %s  %s  dt %g s  rows %d  t_end %g s%s"
              % (r["model"], r["formulation"], r["jacobian"], r["dt"], r["rows"], r["t_end"],
                 "" if r["complete"] else "  INCOMPLETE"))
        print("max |dz|   %.3e  (at t = %g s)" % (r["z_max_error"], r["z_max_error_at"]))
        print("max |dzd|  %.3e" % r["zd_max_error"])
        if "p_max_error" in r:
            print("max |dp|   %.3e Pa  (at t = %g s)" % (r["p_max_error"], r["p_max_error_at"]))
        if "U_max_error" in r:
            print("max |dU|   %.3e V" % r["U_max_error"])
    return 0 if r["complete"] else 3


if __name__ == "__main__":
    sys.exit(main())
