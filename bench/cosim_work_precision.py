#!/usr/bin/python3
"""Work-precision of co-simulation: error against the monolithic reference
(max |ds|, max |dp|) versus CPU time and versus the number of
communication steps, on crane1, crane2, the excavator and the forestry
crane, for
  fixed      fixed H: every multiple of h_m = H_min = 1 ms up to 20 ms,
             and 25, 30, 40, 50 ms (H_max); where H does not divide
             t_end, the run ends at the last multiple of H before t_end
             (column t_run, at most H short) and counts as t_end / H
             steps in the comparison and the plot,
  energy     energy-controlled H (--H-control energy) at 4 tolerances one
             decade apart (RTOL 1e-1 ... 1e-4, ATOL = RTOL/10 J; first H
             2 ms, H_min = h_m = 1 ms, H_max = 50 ms),
  iterative  iterative coupling, when the hymo binary has --iterate (the
             arguments of --iterative-args at the H of --iterative-H),
each in three configurations: `im` (velocity-pressure, interface model,
Jacobi, trapezoidal double-step mechanics, RK4 hydraulics, mechanics'
inputs extrapolated: the best configuration of the achievable-H map of
docs/cosimulation.md, 6 ms on both cranes), `im-gs` (the same with
Gauss-Seidel, hydraulics first) and `p2` (the same as `im` with Lagrange
extrapolation of order 2 in place of the interface model: hymo cosim's
default configuration).

usage: bench/cosim_work_precision.py [--hymo build/hymo] [--out docs]
           [--models crane1,...] [--configs im,im-gs,p2] [--quick]
           [--iterative-args "--iterate 20 --iterate-tol 1e-8"] [--iterative-H 5e-3,1e-2,2e-2]

Writes OUT/cosim_work_precision.csv (one row per run) and
OUT/img/cosim_work_precision.png (one row of panels per model: max |ds|
and max |dp| against CPU time and against communication steps, log-log)
and prints the table with, for every energy-controlled run, the steps of
the best fixed H of the same configuration at the same max |ds|: the
stable fixed-H runs' Pareto front (steps against max |ds|) interpolated
log-log between its neighbouring points; where the controlled run's
error is at least that of the front's cheapest run (the largest stable H
on the front), that run's steps (a larger H is unstable or less
accurate); empty where the controlled run is more accurate than every
fixed run; also that fixed H (t_end / those steps: between two grid
points where interpolated) and its max |ds|.  Ratio = those steps / the
controlled run's accepted steps; "with rejected": / (accepted +
rejected), every attempted step counted.  CPU time: user + system time
of the `hymo cosim` process (loading the model and reference, the run,
the comparison; no output file); with h_m = 1 ms and h_h = 0.1 ms fixed, the subsystems' internal
steps dominate it, so it hardly changes with the communication steps.  The
monolithic references (`hymo run`, the model's dt = 1 ms) are
made in a temporary directory.  Needs python3-matplotlib for the plot."""
import argparse
import csv
import math
import os
import re
import resource
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["crane1", "crane2", "excavator", "forestry_crane"]
CONFIGS = {
    "im": ["--coupling", "velocity-pressure", "--extrapolation", "interface-model", "--scheme", "jacobi"],
    "im-gs": ["--coupling", "velocity-pressure", "--extrapolation", "interface-model", "--scheme",
              "gauss-seidel-hyd-first"],
    "p2": ["--coupling", "velocity-pressure", "--extrapolation", "2", "--scheme", "jacobi"],
}
HS = [k / 1000 for k in range(1, 21)] + [0.025, 0.03, 0.04, 0.05]  # multiples of h_m = H_min = 1 ms
RTOLS = [1e-1, 1e-2, 1e-3, 1e-4]
FIELDS = ["model", "config", "series", "H", "t_run", "tol_rel", "tol_abs", "status", "steps", "rejected", "H_mean",
          "cpu_s", "max_ds", "rms_ds", "max_dp", "fixed_H_at_equal_ds", "fixed_max_ds", "fixed_steps_at_equal_ds",
          "step_ratio", "attempt_ratio"]


def t_end_of(model):
    with open(os.path.join(ROOT, "data", model + ".yaml")) as f:
        m = re.search(r"^\s*t_end:\s*([0-9.eE+-]+)", f.read(), re.M)
    return float(m.group(1))


def cosim(hymo, model, ref, args):
    cmd = [hymo, "cosim", os.path.join(ROOT, "data", model + ".yaml"), "--reference", ref] + args
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    out = p.stdout
    row = {"cpu_s": cpu, "status": "error", "steps": "", "rejected": "", "H_mean": "", "max_ds": "", "rms_ds": "",
           "max_dp": ""}
    if p.returncode == 2 or "status" not in out:
        row["status"] = "error: " + (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return row
    row["status"] = "stable" if re.search(r"^status\s+stable", out, re.M) else "unstable"
    m = re.search(r"^reached\s+t = \S+ s, (\d+) communication steps", out, re.M)
    row["steps"] = int(m.group(1)) if m else ""
    m = re.search(r"^step control .*\(mean ([0-9.eE+-]+) s\).*; (\d+) rejected", out, re.M)
    if m:
        row["H_mean"], row["rejected"] = float(m.group(1)), int(m.group(2))
    m = re.search(r"^\s+s\s+RMS (\S+)\s+max (\S+) m", out, re.M)
    if m:
        row["rms_ds"], row["max_ds"] = float(m.group(1)), float(m.group(2))
    m = re.search(r"^\s+p\s+RMS (\S+)\s+max (\S+) Pa", out, re.M)
    if m:
        row["max_dp"] = float(m.group(2))
    return row


def pareto(rows):
    """(steps, max_ds) of the stable runs on the Pareto front, by steps."""
    pts = sorted((r.get("steps_eq", r["steps"]), r["max_ds"]) for r in rows
                 if r["status"] == "stable" and r["max_ds"] != "")
    front, best = [], math.inf
    for n, e in pts:
        if e < best:
            front.append((n, e))
            best = e
    return front


def steps_at(front, e):
    """Steps of the best fixed H whose max |ds| is at most e: log-log
    interpolation between the neighbouring points of the front; the
    front's cheapest run (the largest stable H of the grid on the front)
    when e is at least its error; None when e is below the front's most
    accurate run."""
    if front and e >= front[0][1]:
        return float(front[0][0])
    for (n0, e0), (n1, e1) in zip(front, front[1:]):
        if e1 <= e <= e0:
            if e0 == e1:
                return float(n0)
            w = math.log(e / e0) / math.log(e1 / e0)
            return math.exp(math.log(n0) + w * (math.log(n1) - math.log(n0)))
    return None


def plot(rows, models, configs, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: plot skipped", file=sys.stderr)
        return
    cols = [("cpu_s", "max_ds", "CPU time [s]", "max |Δs| [m]"), ("steps", "max_ds", "communication steps",
                                                                   "max |Δs| [m]"),
            ("cpu_s", "max_dp", "CPU time [s]", "max |Δp| [Pa]"), ("steps", "max_dp", "communication steps",
                                                                    "max |Δp| [Pa]")]
    fig, axes = plt.subplots(len(models), 4, figsize=(17, 3.6 * len(models)), squeeze=False)
    style = {"fixed": ("o", "-"), "energy": ("s", "--"), "iterative": ("^", ":")}
    colors = {"im": "tab:blue", "im-gs": "tab:red", "p2": "tab:green"}
    for i, model in enumerate(models):
        for j, (x, y, xl, yl) in enumerate(cols):
            ax = axes[i][j]
            for cfg in configs:
                for series, (mk, ls) in style.items():
                    pts = [r for r in rows if r["model"] == model and r["config"] == cfg and r["series"] == series
                           and r["status"] == "stable" and r[y] != "" and r[x] != ""]
                    if not pts:
                        continue
                    # along the parameter: H falling, tolerance falling
                    pts.sort(key=lambda r: -float(r["tol_rel"] if r["tol_rel"] != "" else r["H"]))
                    ax.plot([float(r.get("steps_eq", r[x]) if x == "steps" else r[x]) for r in pts],
                            [float(r[y]) for r in pts], marker=mk, ls=ls,
                            color=colors.get(cfg, "k"), label="%s %s" % (cfg, series), ms=4)
            ax.set_yscale("log")
            if x == "steps":  # CPU time: linear (its range is narrow, see the docstring)
                ax.set_xscale("log")
            ax.set_xlabel(xl)
            ax.set_ylabel(yl)
            ax.set_title(model, fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            if i == 0 and j == 0:
                ax.legend(fontsize=7)
    fig.suptitle("co-simulation work-precision against the monolithic reference (stable runs; "
                 "energy: RTOL 1e-1..1e-4, ATOL = RTOL/10 J)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=90)
    print("plot:", png)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hymo", default=os.path.join(ROOT, "build", "hymo"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--quick", action="store_true", help="crane1 only, 3 fixed H, 4 tolerances, t_end 6 s")
    ap.add_argument("--iterative-args", default="--iterate 20 --iterate-tol 1e-8")
    ap.add_argument("--iterative-H", default="5e-3,1e-2,2e-2,4e-2")
    a = ap.parse_args()
    models, configs, hs = a.models.split(","), a.configs.split(","), HS
    extra = []
    if a.quick:
        models, hs, extra = ["crane1"], [2e-3, 5e-3, 1e-2], ["--t-end", "6"]
    helptext = subprocess.run([a.hymo, "cosim", "--help"], capture_output=True, text=True).stdout
    iterative = "--iterate" in helptext
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            ref = os.path.join(tmp, model + "_ref.h5")
            subprocess.run([a.hymo, "run", os.path.join(ROOT, "data", model + ".yaml"), "-o", ref, "-q"] + extra,
                           check=True)
            T = 6.0 if a.quick else t_end_of(model)
            for cfg in configs:
                base = CONFIGS[cfg] + ["--hm", "1e-3"] + extra
                runs = []
                for H in hs:
                    if abs(H / 1e-3 - round(H / 1e-3)) > 1e-9:
                        continue
                    n = math.floor(T / H + 1e-9)
                    if abs(T / H - n) <= 1e-9:
                        runs.append(("fixed", H, "", "", base + ["--H", repr(H)]))
                    else:  # to the last multiple of H before t_end; steps counted as T / H
                        runs.append(("fixed", H, "", "", base + ["--H", repr(H), "--t-end", repr(round(n * H, 9))]))
                for rt in RTOLS:
                    runs.append(("energy", 2e-3, rt, rt / 10, base + [
                        "--H-control", "energy", "--tol-energy", "%g,%g" % (rt, rt / 10), "--H", "2e-3",
                        "--H-min", "1e-3", "--H-max", "5e-2"]))
                if iterative:
                    for H in (float(h) for h in a.iterative_H.split(",")):
                        if abs(T / H - round(T / H)) > 1e-9:
                            continue
                        runs.append(("iterative", H, "", "", base + ["--H", repr(H)] + a.iterative_args.split()))
                for series, H, rt, at, args in runs:
                    r = cosim(a.hymo, model, ref, args)
                    t_run = float(args[args.index("--t-end", len(base)) + 1]) if "--t-end" in args[len(base):] else T
                    r.update(model=model, config=cfg, series=series, H=H, t_run=t_run, tol_rel=rt, tol_abs=at,
                             fixed_H_at_equal_ds="", fixed_max_ds="", fixed_steps_at_equal_ds="", step_ratio="",
                             attempt_ratio="")
                    if r["steps"] != "" and t_run < T:
                        r["steps_eq"] = r["steps"] * T / t_run  # steps per t_end at this H
                    rows.append(r)
                    print("%-15s %-6s %-9s H %-6g tol %-6s %-9s steps %-6s cpu %6.2f s  max|ds| %-10s max|dp| %s"
                          % (model, cfg, series, H, rt, r["status"][:9], r["steps"], r["cpu_s"], r["max_ds"],
                             r["max_dp"]), flush=True)
    # energy (and iterative) runs against the fixed-H front of the same model and configuration
    for model in models:
        for cfg in configs:
            front = pareto([r for r in rows if r["model"] == model and r["config"] == cfg and r["series"] == "fixed"])
            for r in rows:
                if r["model"] != model or r["config"] != cfg or r["series"] == "fixed" or r["status"] != "stable":
                    continue
                if r["max_ds"] == "" or not front:
                    continue
                n = steps_at(front, r["max_ds"])
                if n is not None:
                    r["fixed_steps_at_equal_ds"] = round(n)
                    r["fixed_H_at_equal_ds"] = float("%.4g" % (r["t_run"] / n))  # t_end / steps
                    r["fixed_max_ds"] = min(r["max_ds"], front[0][1])  # the front's cheapest run beyond it
                    r["step_ratio"] = round(n / r["steps"], 3)
                    r["attempt_ratio"] = round(n / (r["steps"] + (r["rejected"] or 0)), 3)
    os.makedirs(os.path.join(a.out, "img"), exist_ok=True)
    path = os.path.join(a.out, "cosim_work_precision.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in FIELDS})
    print("table:", path)
    print("\nenergy-controlled runs against fixed H at equal max |ds| (ratio = fixed steps / energy steps):")
    for r in rows:
        if r["series"] != "fixed":
            print("  %-15s %-6s %-9s tol %-6s steps %-6s rejected %-4s max|ds| %-10s fixed steps %-7s ratio %-6s "
                  "with rejected %s" % (r["model"], r["config"], r["series"], r["tol_rel"] or r["H"], r["steps"],
                                        r["rejected"], r["max_ds"], r["fixed_steps_at_equal_ds"], r["step_ratio"],
                                        r["attempt_ratio"]))
    plot(rows, models, configs, os.path.join(a.out, "img", "cosim_work_precision.png"))


if __name__ == "__main__":
    main()
