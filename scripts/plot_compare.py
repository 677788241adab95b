#!/usr/bin/python3
"""A run overlaid on a reference (docs/compare.md, docs/plots.md): for each
signal (joint coordinates, actuator strokes, pressures) the reference and
the run, and below it the error run - reference (the run linearly
interpolated onto the reference times, as `hymo compare` does) with its
band min..max over the components shaded.  Needs python3-h5py and
python3-matplotlib (Debian).

usage: scripts/plot_compare.py REF.h5 RUN.h5 [-o PNG] [--signals z,s,p]"""
import argparse
import os
import sys

import matplotlib
import numpy as np
from plot_run import open_h5  # files flagged "being written" too (scripts/plot_run.py)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SIGNALS = {"z": ("states/z", "rad or m", 1.0), "zd": ("states/zd", "rad/s or m/s", 1.0),
           "s": ("actuators/s", "m", 1.0), "sd": ("actuators/sd", "m/s", 1.0),
           "p": ("states/p", "MPa", 1e-6), "U": ("states/U", "V", 1.0), "force": ("actuators/force", "kN", 1e-3)}


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def load(path, sigs):
    try:
        f, _ = open_h5(path)
    except OSError as e:
        sys.exit("plot_compare.py: cannot read '%s': %s" % (path, e))
    with f:
        if "time" not in f:
            sys.exit("plot_compare.py: '%s' is not a hymo run file (no /time)" % path)
        n = f["time"].shape[0]
        out = {"time": f["time"][()], "label": "%s (%s, dt = %g s)" % (
            os.path.basename(path), text(f.attrs.get("integrator", "?")), float(f.attrs.get("dt", np.nan)))}
        if "cosim" in f:
            out["label"] = "%s (co-simulation, H = %g s)" % (os.path.basename(path),
                                                              float(f["cosim"].attrs.get("H", np.nan)))
        for s in sigs:
            path_, _, scale = SIGNALS[s]
            if path_ in f and f[path_].size > 0:
                ds = f[path_]
                out[s] = ds[:n] * scale
                out[s + ":names"] = [text(n) for n in ds.attrs["names"]] if "names" in ds.attrs else None
    return out


def interp_run(t_ref, t_run, x_run):
    """The run at the reference times (columnwise linear interpolation)."""
    return np.column_stack([np.interp(t_ref, t_run, x_run[:, j]) for j in range(x_run.shape[1])])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reference")
    ap.add_argument("run")
    ap.add_argument("-o", "--output", help="PNG to write (default: RUN-vs-REF.png next to RUN)")
    ap.add_argument("--signals", default="z,s,p", help="comma-separated, of %s" % ",".join(SIGNALS))
    a = ap.parse_args()
    sigs = [s for s in a.signals.split(",") if s]
    bad = [s for s in sigs if s not in SIGNALS]
    if bad:
        sys.exit("plot_compare.py: unknown signal %s (known: %s)" % (", ".join(bad), ", ".join(SIGNALS)))
    ref, run = load(a.reference, sigs), load(a.run, sigs)
    sigs = [s for s in sigs if s in ref and s in run]
    if not sigs:
        sys.exit("plot_compare.py: no common signal to plot")
    t0, t1 = max(ref["time"][0], run["time"][0]), min(ref["time"][-1], run["time"][-1])
    keep = (ref["time"] >= t0) & (ref["time"] <= t1)
    t = ref["time"][keep]
    fig, axes = plt.subplots(2 * len(sigs), 1, figsize=(8, 2.6 * len(sigs) + 0.8), sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [2, 1] * len(sigs)})
    for i, s in enumerate(sigs):
        xr = ref[s][keep]
        if xr.shape[1] != run[s].shape[1]:
            sys.exit("plot_compare.py: %s has %d columns in the reference, %d in the run"
                     % (s, xr.shape[1], run[s].shape[1]))
        xn = interp_run(t, run["time"], run[s])
        err = xn - xr
        names = ref[s + ":names"] or ["%s%d" % (s, j + 1) for j in range(xr.shape[1])]
        ax, ae = axes[2 * i, 0], axes[2 * i + 1, 0]
        for j, name in enumerate(names):
            line, = ax.plot(t, xr[:, j], lw=2.2, alpha=0.45, label="%s reference" % name)
            ax.plot(t, xn[:, j], lw=0.9, ls="--", color=line.get_color(), label="%s run" % name)
            ae.plot(t, err[:, j], lw=0.8, color=line.get_color(), label=name)
        ae.fill_between(t, err.min(axis=1), err.max(axis=1), color="tab:red", alpha=0.2, lw=0,
                        label="error band")
        unit = SIGNALS[s][1]
        ax.set_ylabel("%s (%s)" % (s, unit))
        ae.set_ylabel("error (%s)" % unit)
        worst = np.abs(err).max() if err.size else 0.0
        ae.set_title("max |run - ref| = %.3g %s, RMS %.3g" % (worst, unit, np.sqrt(np.mean(err ** 2))),
                     fontsize=8, loc="right")
        for a_ in (ax, ae):
            a_.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="best")
    axes[-1, 0].set_xlabel("t (s)")
    fig.suptitle("reference: %s\nrun: %s" % (ref["label"], run["label"]), fontsize=9)
    fig.tight_layout()
    out = a.output or os.path.join(os.path.dirname(a.run) or ".", "%s-vs-%s.png" % (
        os.path.splitext(os.path.basename(a.run))[0], os.path.splitext(os.path.basename(a.reference))[0]))
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    try:
        main()
    except (OSError, RuntimeError) as e:  # e.g. stored values that do not match their checksum
        sys.exit("plot_compare.py: cannot read a file: %s (damaged file?)" % e)
