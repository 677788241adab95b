#!/usr/bin/python3
"""A run overlaid on a reference (docs/compare.md, docs/plots.md): for each
signal (joint coordinates, actuator strokes, pressures) the reference and
the run, and below it the error run - reference (the run linearly
interpolated onto the reference times, as `hymo compare` does) with its
band min..max over the components shaded.  Needs python3-h5py and
python3-matplotlib (Debian).

usage: scripts/plot_compare.py REF.h5 RUN.h5|RUN.csv [-o PNG] [--signals z,s,p] [--map MAP.yaml]
RUN.csv is another tool's result as `hymo compare` reads it (docs/compare.md:
a t or time column, columns named like z[z1] or p[V2] in SI units, '#'
comment lines, --map to rename and scale); components it lacks are left
out of the plot."""
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
                u = ds.attrs.get("units")  # per column for z and zd: one unit when every column has it
                us = {text(x) for x in np.atleast_1d(u)} if u is not None else set()
                out[s + ":unit"] = us.pop() if len(us) == 1 and scale == 1.0 else None
    return out


def load_csv(path, ref_path, sigs, map_path=None):
    """A CSV run (docs/compare.md) in the shape load() gives, its columns in
    the reference's component order (NaN where the CSV lacks one)."""
    import csv
    mapping = {"time": None, "columns": {}, "ignore": []}
    if map_path:
        import yaml
        with open(map_path) as fm:
            mapping.update(yaml.safe_load(fm) or {})
    try:
        with open(path, newline="") as fc:
            rows = [r for r in csv.reader(line for line in fc if not line.lstrip().startswith("#")) if r]
    except OSError as e:
        sys.exit("plot_compare.py: cannot read '%s': %s" % (path, e))
    if len(rows) < 2:
        sys.exit("plot_compare.py: '%s' has no data rows" % path)
    header = [h.strip() for h in rows[0]]
    data = np.array([[float(x) for x in r] for r in rows[1:]])
    tspec = mapping.get("time")
    tcol, tscale = (tspec.get("column"), float(tspec.get("scale", 1.0))) if isinstance(tspec, dict) else (tspec, 1.0)
    tcol = tcol or next((h for h in header if h in ("t", "time")), None)
    if tcol not in header:
        sys.exit("plot_compare.py: '%s' has no time column (t or time)" % path)
    cols = {}
    for j, h in enumerate(header):
        if h == tcol or h in mapping.get("ignore", []):
            continue
        m = mapping["columns"].get(h, h)
        to, scale = (m.get("to"), float(m.get("scale", 1.0))) if isinstance(m, dict) else (m, 1.0)
        cols[to] = data[:, j] * scale
    out = {"time": data[:, header.index(tcol)] * tscale, "label": "%s (CSV)" % os.path.basename(path)}
    f, _ = open_h5(ref_path)
    with f:
        for s in sigs:
            path_, _, scale = SIGNALS[s]
            if path_ not in f or f[path_].size == 0:
                continue
            names = [text(n) for n in f[path_].attrs["names"]]
            got = [cols.get("%s[%s]" % (s, n)) for n in names]
            if all(g is None for g in got):
                continue
            out[s] = np.column_stack([g * scale if g is not None else np.full(len(data), np.nan) for g in got])
            out[s + ":names"] = names
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
    ap.add_argument("--map", help="RUN.csv: MAP.yaml renaming and scaling its columns (as hymo compare --map)")
    a = ap.parse_args()
    sigs = [s for s in a.signals.split(",") if s]
    bad = [s for s in sigs if s not in SIGNALS]
    if bad:
        sys.exit("plot_compare.py: unknown signal %s (known: %s)" % (", ".join(bad), ", ".join(SIGNALS)))
    ref = load(a.reference, sigs)
    run = load_csv(a.run, a.reference, sigs, a.map) if a.run.lower().endswith(".csv") else load(a.run, sigs)
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
        have = [j for j in range(xr.shape[1]) if not np.all(np.isnan(xn[:, j]))]  # a CSV may lack some
        for j in have:
            name = names[j]
            line, = ax.plot(t, xr[:, j], lw=2.2, alpha=0.45, label="%s reference" % name)
            ax.plot(t, xn[:, j], lw=0.9, ls="--", color=line.get_color(), label="%s run" % name)
            ae.plot(t, err[:, j], lw=0.8, color=line.get_color(), label=name)
        err = err[:, have]
        ae.fill_between(t, err.min(axis=1), err.max(axis=1), color="tab:red", alpha=0.2, lw=0,
                        label="error band")
        unit = ref.get(s + ":unit") or SIGNALS[s][1]
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
