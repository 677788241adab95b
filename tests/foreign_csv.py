#!/usr/bin/python3
"""Writes another tool's result as CSV for `hymo compare REF.h5 RUN.csv`.

The "other tool" is the independent solution of tests/independent: the
planar double pendulum (data/double_pendulum.yaml) from Lagrange's equations
in minimal coordinates, integrated by SciPy's DOP853 at rtol 1e-12.  It
shares nothing with hymo but the physical description, and its output grid
(--dt-out, default 3.7 ms) is not hymo's, so `hymo compare` has to
interpolate.  Nothing here reads a hymo file.

  foreign_csv.py OUT.csv [--t-end 2] [--dt-out 0.0037]
                 [--offset 'z[z2]=0.01']      add 0.01 to one column from t_end/2 on
                 [--map MAP.yaml]             other column names and units (ms, degrees)
                                              and the map file that undoes them

Columns (header convention of docs/compare.md): time, then z[z1], z[z2],
zd[z1], zd[z2] (rad, rad/s) in a shuffled order, with a comment line.
With --map: t_ms, phi1_deg, phi2_deg, a column `step` to ignore, and MAP.yaml
mapping them back (scale factors 1e-3 and pi/180).
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "independent"))
import models  # noqa: E402
import solve  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--dt-out", type=float, default=0.0037)
    ap.add_argument("--offset", default=None, help="COLUMN=VALUE added from t_end/2 on")
    ap.add_argument("--map", default=None, help="write a map file and tool-style columns")
    a = ap.parse_args()

    t = np.arange(0.0, a.t_end, a.dt_out)
    t = np.append(t, a.t_end)
    model = models.get("double_pendulum")
    out, _ = solve.solve(model, t, cache=False)
    cols = {
        "z[z1]": out["z"][:, 0],
        "z[z2]": out["z"][:, 1],
        "zd[z1]": out["zd"][:, 0],
        "zd[z2]": out["zd"][:, 1],
    }
    if a.offset:
        name, value = a.offset.split("=")
        cols[name] = cols[name] + np.where(t >= a.t_end / 2, float(value), 0.0)

    with open(a.out, "w") as f:
        f.write("# double pendulum, Lagrange + DOP853 (rtol 1e-12), tests/foreign_csv.py\n")
        if a.map:
            f.write("step,t_ms,phi2_deg,phi1_deg\n")
            for i in range(len(t)):
                f.write("%d,%.17g,%.17g,%.17g\n" % (i, t[i] * 1e3, math.degrees(cols["z[z2]"][i]),
                                                     math.degrees(cols["z[z1]"][i])))
            with open(a.map, "w") as m:
                m.write("# CSV columns of foreign_csv.py --map -> hymo components\n"
                        "time: {column: t_ms, scale: 1.0e-3}\n"
                        "columns:\n"
                        "  phi1_deg: {to: \"z[z1]\", scale: %.17g}\n"
                        "  phi2_deg: {to: \"z[z2]\", scale: %.17g}\n"
                        "ignore: [step]\n" % (math.pi / 180, math.pi / 180))
        else:
            order = ["zd[z2]", "z[z1]", "z[z2]", "zd[z1]"]
            f.write("time," + ",".join(order) + "\n")
            for i in range(len(t)):
                f.write("%.17g,%s\n" % (t[i], ",".join("%.17g" % cols[c][i] for c in order)))


if __name__ == "__main__":
    main()
