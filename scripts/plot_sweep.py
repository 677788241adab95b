#!/usr/bin/python3
"""Residual energy against the communication step H from `hymo sweep` HDF5
output (docs/cosimulation.md, docs/overrides.md).  Needs python3-h5py and
python3-matplotlib (Debian packages).

usage: scripts/plot_sweep.py TABLE.h5 OUT.png [--mech trapezoidal|index1] [--hyd rk4]
One panel per coupling; one curve per extrapolation and, for a sweep over a
parameter grid (--set-grid), per grid point, named in the legend.  Unstable
runs are marked with an x at the top of the axis; runs that never started
(t_reached = 0: the configuration was refused) with a hollow square at the
bottom; runs a `--skip-failed` sweep did not make (t_reached nan: a smaller H of
their configuration failed) are left out."""
import argparse
import math
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# the sweep's own columns; any other dataset of /runs is a --set-grid parameter
KNOWN = {"H", "config", "max_balance_ratio", "max_residual_ratio", "max_s", "pass", "peak_drift",
         "residual_energy_final", "residual_energy_max_abs", "rms_p", "rms_s", "rms_sd", "rms_z", "stable",
         "t_reached", "verdict", "wall_time", "work_abs"}


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def figure(table, mech="trapezoidal", hyd="rk4"):
    with h5py.File(table, "r") as f:
        runs = f["runs"]
        H = runs["H"][:]
        E = runs["residual_energy_max_abs"][:]
        stable = runs["stable"][:]
        reached = runs["t_reached"][:] if "t_reached" in runs else [1.0] * len(H)
        started = [t > 0 for t in reached]
        made = [not math.isnan(t) for t in reached]
        cfg = [text(c) for c in runs["config"][:]]
        params = sorted(k for k in runs.keys() if k not in KNOWN)
        point = [", ".join("%s=%s" % (p.split(".")[-1], text(runs[p][i])) for p in params) for i in range(len(H))]
        model = text(f.attrs.get("model_name", b""))
    rows = [c.split(",") for c in cfg]
    couplings = sorted({r[0] for r in rows})
    fig, axes = plt.subplots(1, len(couplings), figsize=(6.5 * len(couplings), 4.6), squeeze=False)
    ok = [e for e, s, g in zip(E, stable, started) if s and g and e > 0]
    top = max(ok + [1e-6]) * 10
    bottom = max(min(ok + [1e-9]) / 10, 1e-12)
    for ax, coupling in zip(axes[0], couplings):
        keys = sorted({(r[1], point[i]) for i, r in enumerate(rows) if r[0] == coupling})
        for approx, pt in keys:
            pts = sorted((H[i], E[i], stable[i], started[i]) for i, r in enumerate(rows)
                         if r[0] == coupling and r[1] == approx and r[2] == hyd and r[3] == mech and point[i] == pt
                         and made[i])
            if not pts:
                continue
            label = "extrapolation %s" % approx + (" (%s)" % pt if pt else "")
            hs = [p[0] * 1e3 for p in pts if p[2] and p[3]]
            es = [max(p[1], bottom) for p in pts if p[2] and p[3]]
            line, = ax.loglog(hs, es, "o-", label=label)
            bad = [p[0] * 1e3 for p in pts if not p[2] and p[3]]
            if bad:
                ax.plot(bad, [top] * len(bad), "x", color=line.get_color())
            never = [p[0] * 1e3 for p in pts if not p[3]]
            if never:
                ax.plot(never, [bottom] * len(never), "s", mfc="none", color=line.get_color(),
                        label="%s: did not start" % label)
        ax.set_title(f"{model}: {coupling} ({mech} mechanics, {hyd} hydraulics)")
        ax.set_xlabel("communication step H (ms)")
        ax.set_ylabel("max |residual energy| (J)   (x: unstable)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("png")
    ap.add_argument("--mech", default="trapezoidal")
    ap.add_argument("--hyd", default="rk4")
    a = ap.parse_args()
    fig = figure(a.table, a.mech, a.hyd)
    fig.savefig(a.png, dpi=110)
    print(f"wrote {a.png}")


if __name__ == "__main__":
    sys.exit(main())
