#!/usr/bin/python3
"""Compares the outputs of a `whole` FMU run through a system file
(/cosim/outputs/NAME of `hymo cosim SYSTEM.yaml`) with `hymo run` of the
same model (tests/cli/cli_fmu_import.sh):

  compare_whole.py SYSTEM_RUN.h5 NAME RUN.h5 [--tol REL]

Output J.z, J.zd -> /states/z, /states/zd column J; C.s, C.sd, C.F ->
/actuators/s, sd, force column C; V.p -> /states/p column V; v.u ->
/states/U column v.  Max |a - b| / max(|a|, |b|) over all; exit 1 above
--tol (default 0)."""
import argparse
import sys

import h5py
import numpy as np

WHERE = {"z": "states/z", "zd": "states/zd", "s": "actuators/s", "sd": "actuators/sd", "F": "actuators/force",
         "p": "states/p", "u": "states/U"}


def names(ds):
    return [n.decode() if isinstance(n, bytes) else str(n) for n in ds.attrs["names"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("system_run")
    ap.add_argument("name")
    ap.add_argument("run")
    ap.add_argument("--tol", type=float, default=0.0)
    o = ap.parse_args()
    with h5py.File(o.system_run, "r") as fs, h5py.File(o.run, "r") as fr:
        out = fs["cosim/outputs/" + o.name]
        y, cols = out[()], names(out)
        t_s, t_r = fs["time"][()], fr["time"][()]
        if len(t_s) != len(t_r) or np.max(np.abs(t_s - t_r)) > 1e-12:
            print(f"time grids differ ({len(t_s)} and {len(t_r)} rows)")
            return 1
        worst, where = 0.0, ""
        for j, c in enumerate(cols):
            base, _, q = c.rpartition(".")
            ds = fr[WHERE[q]]
            ref = ds[()][:, names(ds).index(base)]
            r = float(np.max(np.abs(y[:, j] - ref) / np.maximum(np.maximum(np.abs(y[:, j]), np.abs(ref)), 1e-300)))
            if r > worst:
                worst, where = r, c
        print(f"{len(cols)} outputs over {len(t_s)} rows, max relative difference {worst:.3g}"
              + (f" ({where})" if where else ""))
        return 1 if worst > o.tol else 0


if __name__ == "__main__":
    sys.exit(main())
