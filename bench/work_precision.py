#!/usr/bin/python3
"""Work-precision study: max error against an IDA reference at
rtol 1e-11 versus the integration wall time, for the trapezoidal engine
(double-step and penalty x numeric and fast Jacobian x dt = 2 ... 0.0625 ms,
with --newton-test seed (seed 002) and contractive (the default)) and for
IDA (rtol 1e-4 ... 1e-10), on four-bar, quick-return, crane1 and the 3-D
triple pendulum.

usage: bench/work_precision.py [--hymo build/hymo] [--out DIR] [--models m1,m2] [--quick]

Writes DIR/work_precision.csv (one row per run) and DIR/work_precision.png
(one panel per model: max |dz| against wall time, log-log) and prints the
table.  The error is max over time and components of |z - z_ref| on the
reference grid (hymo compare); the wall time is the integration loop's
(the summary's `wall time`), one run each on a possibly busy machine, so
read ratios, not absolute times.  Needs python3-matplotlib (Debian) for the
plot; the CSV is written without it."""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["fourbar", "quickreturn", "crane1", "triple_pendulum_3d"]
DTS = [2e-3, 1e-3, 5e-4, 2.5e-4, 1.25e-4, 6.25e-5]
RTOLS = [1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10]


def run(hymo, model, out, args):
    cmd = [hymo, "run", os.path.join(ROOT, "data", model + ".yaml"), "-o", out] + args
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "exit %d" % r.returncode
    m = re.search(r"wall time\s+([0-9.eE+-]+) s", r.stdout)
    it = re.search(r"iterations\s+mean ([0-9.]+)", r.stdout)
    return (float(m.group(1)) if m else float("nan"), float(it.group(1)) if it else float("nan")), None


def max_error(hymo, ref, out):
    r = subprocess.run([hymo, "compare", ref, out], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        f = line.split()
        if f and f[0] == "z":
            return float(f[4])
    return float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hymo", default=os.path.join(ROOT, "build", "hymo"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "work_precision"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--quick", action="store_true", help="dt 2 ... 0.25 ms and rtol 1e-4 ... 1e-8 only")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    dts = DTS[:4] if a.quick else DTS
    rtols = RTOLS[:5] if a.quick else RTOLS
    rows = []
    tmp = tempfile.mkdtemp(prefix="hymo_wp_")
    for model in a.models.split(","):
        ref = os.path.join(tmp, model + "_ref.h5")
        res, err = run(a.hymo, model, ref, ["--integrator", "ida", "--rtol", "1e-11", "--atol", "1e-13"])
        if res is None:
            sys.exit("%s: reference run failed: %s" % (model, err))
        cases = []
        for form in ("double-step", "penalty"):
            for jac in ("numeric", "fast"):
                for test in ("seed", "contractive"):
                    for dt in dts:
                        cases.append(("trapezoidal", form, jac, test, "%g" % dt,
                                      ["--formulation", form, "--jacobian", jac, "--newton-test", test,
                                       "--dt", repr(dt)]))
        for rtol in rtols:
            cases.append(("ida", "double-step", "dq", "-", "%g" % rtol,
                          ["--integrator", "ida", "--rtol", repr(rtol), "--atol", repr(rtol * 1e-2)]))
        for integ, form, jac, test, step, args in cases:
            out = os.path.join(tmp, "run.h5")
            res, err = run(a.hymo, model, out, args)
            if res is None:
                row = [model, integ, form, jac, test, step, "", "", "", err]
            else:
                wall, iters = res
                row = [model, integ, form, jac, test, step, "%.4g" % wall, "%.3g" % max_error(a.hymo, ref, out),
                       "%.2f" % iters, ""]
            rows.append(row)
            print(",".join(row), flush=True)
    path = os.path.join(a.out, "work_precision.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "integrator", "formulation", "jacobian", "newton_test", "dt_or_rtol", "wall_s",
                    "max_z_error", "mean_iterations", "failure"])
        w.writerows(rows)
    print("table:", path)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib (apt-get install python3-matplotlib): no plot")
        return
    models = a.models.split(",")
    fig, axes = plt.subplots(1, len(models), figsize=(4.2 * len(models), 4.0), squeeze=False)
    for ax, model in zip(axes[0], models):
        groups = {}
        for r in rows:
            if r[0] != model or not r[6] or not r[7] or r[7] == "nan":
                continue
            key = "IDA" if r[1] == "ida" else "%s %s %s" % ("DS" if r[2] == "double-step" else "PB", r[3], r[4])
            groups.setdefault(key, []).append((float(r[6]), float(r[7])))
        for key, pts in sorted(groups.items()):
            pts.sort()
            style = "k-o" if key == "IDA" else ("-" if key.endswith("contractive") else "--")
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], style, label=key, markersize=3)
        ax.set_title(model)
        ax.set_xlabel("wall time of the integration, s")
        ax.set_ylabel("max |z - z_ref| (IDA rtol 1e-11), rad or m")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    png = os.path.join(a.out, "work_precision.png")
    fig.savefig(png, dpi=110)
    print("plot:", png)


if __name__ == "__main__":
    main()
