#!/usr/bin/python3
"""Iterative against non-iterative co-simulation: work and precision.

For each machine, the monolithic reference (`hymo run MODEL -o ref.h5`),
then `hymo cosim MODEL --reference ref.h5` (Jacobi or Gauss-Seidel,
velocity-pressure, Lagrange order 2, RK4 hydraulics with h_h = 0.1 ms,
trapezoidal mechanics with h_m = H: the defaults) over a grid of H, without
iteration and with `--iterate 20` (IQN-ILS; tolerances 1e-6 and 1e-4).
Each run's CPU time is its process's user + system time (getrusage of the
child), the errors are the summary's max |s - s_ref| (m) and max |p - p_ref|
(Pa) against the reference, `steps` the communication steps done and
`iterations` the retakes (0 without iteration).  Unstable runs are kept with
verdict `unstable` (their errors up to where they stopped).

Writes OUTDIR/cosim_iterate.csv with the columns
    machine, config, H, iterations, steps, cpu_s, max_ds, max_dp, verdict
and prints per machine and scheme: the largest H of the grid up to which
every non-iterative run is accurate, the largest H up to which every
iterated run is accurate (and its multiple of the former), and, at equal
max |ds|, the CPU time of the cheapest iterative run against the
non-iterative runs' work-precision front (log-log interpolation of the
cheapest non-iterative CPU time reaching that error; the cheapest
non-iterative run with a smaller error when the error is beyond the
front); then per machine the best iterated configuration against the
front of both non-iterative schemes.  CPU times include the process's
start, the model's compilation and reading the reference.

usage: cosim_iterate.py HYMO OUTDIR [--machines crane1,crane2,...] [--quick]
"""
import csv
import math
import os
import re
import resource
import subprocess
import sys

MACHINES = ("crane1", "crane2", "excavator", "forestry_crane")
H_PLAIN = (0.5e-3, 1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 8e-3, 10e-3)
H_ITER = (2e-3, 3e-3, 4e-3, 5e-3, 8e-3, 10e-3, 15e-3, 20e-3, 25e-3, 30e-3)
SCHEMES = ("jacobi", "gauss-seidel")
ITER = (("iqn-ils", "1e-6"), ("iqn-ils", "1e-4"))


def t_end_of(model):
    with open(model) as f:
        m = re.search(r"^\s*t_end:\s*([0-9.eE+-]+)", f.read(), re.M)
    return float(m.group(1))


def divides(H, T):
    n = T / H
    return abs(n - round(n)) <= 1e-9 * n


def cpu_run(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return p.returncode, p.stdout, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def parse(out):
    def num(pattern, default=float("nan")):
        m = re.search(pattern, out, re.M)
        return float(m.group(1)) if m else default
    return {
        "steps": int(num(r"^reached .*?, (\d+) communication steps", 0)),
        "iterations": int(num(r"^iteration .*?: (\d+) retakes", 0)),
        "max_ds": num(r"^  s +RMS \S+ +max (\S+)"),
        "max_dp": num(r"^  p +RMS \S+ +max (\S+)"),
        "verdict": (re.search(r"^verdict +(\w+)", out, re.M) or [None, "error"])[1],
    }


def front_cpu(plain, e):
    """CPU time of the non-iterative front at max |ds| = e."""
    pts = sorted((r["max_ds"], r["cpu_s"]) for r in plain if r["verdict"] == "accurate")
    if not pts:
        return None
    front = []  # cheapest CPU for each error level, decreasing cpu with growing error
    for err, cpu in pts:
        if not front or cpu < front[-1][1]:
            front.append((err, cpu))
    if e <= front[0][0]:
        return None  # finer than any non-iterative run
    for (e0, c0), (e1, c1) in zip(front, front[1:]):
        if e0 <= e <= e1:
            w = math.log(e / e0) / math.log(e1 / e0)
            return math.exp((1 - w) * math.log(c0) + w * math.log(c1))
    return front[-1][1]


def largest_accurate(rows):
    best = 0.0
    for r in sorted(rows, key=lambda r: r["H"]):
        if r["verdict"] != "accurate":
            break
        best = r["H"]
    return best


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    hymo, outdir = os.path.abspath(args[0]), args[1]
    machines = MACHINES
    h_plain, h_iter, iters = H_PLAIN, H_ITER, ITER
    if "--machines" in args:
        machines = tuple(args[args.index("--machines") + 1].split(","))
    if "--quick" in args:  # the must-show points only
        h_plain, h_iter, iters = (2e-3, 3e-3, 4e-3), (10e-3, 15e-3), ITER[:1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(outdir, exist_ok=True)
    rows = []
    for mach in machines:
        model = os.path.join(root, "data", mach + ".yaml")
        T = t_end_of(model)
        ref = os.path.join(outdir, mach + ".ref.h5")
        subprocess.run([hymo, "run", model, "-q", "-o", ref], check=True)
        for scheme in SCHEMES:
            runs = [(H, None) for H in h_plain] + [(H, it) for it in iters for H in h_iter]
            for H, it in runs:
                if not divides(H, T):
                    continue
                cmd = [hymo, "cosim", model, "--H", repr(H), "--scheme", scheme, "--reference", ref]
                config = scheme
                if it:
                    cmd += ["--iterate", "20", "--iterate-accel", it[0], "--iterate-tol", it[1]]
                    config = "%s+%s@%s" % (scheme, it[0], it[1])
                code, out, cpu = cpu_run(cmd)
                r = dict(machine=mach, config=config, H=H, cpu_s=cpu, **parse(out))
                rows.append(r)
                print("%-15s %-28s H %6.4g  %-10s steps %6d retakes %7d cpu %7.3f s  max|ds| %.3g m  max|dp| %.3g Pa"
                      % (mach, config, H, r["verdict"], r["steps"], r["iterations"], cpu, r["max_ds"], r["max_dp"]),
                      flush=True)
    path = os.path.join(outdir, "cosim_iterate.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        cols = ["machine", "config", "H", "iterations", "steps", "cpu_s", "max_ds", "max_dp", "verdict"]
        w.writerow(cols)
        for r in rows:
            w.writerow([r[c] if not isinstance(r[c], float) else "%.6g" % r[c] for c in cols])
    print("wrote", path)
    for mach in machines:
        for scheme in SCHEMES:
            plain = [r for r in rows if r["machine"] == mach and r["config"] == scheme]
            h0 = largest_accurate(plain)
            for it in iters:
                cfg = "%s+%s@%s" % (scheme, it[0], it[1])
                itr = [r for r in rows if r["machine"] == mach and r["config"] == cfg]
                h1 = largest_accurate(itr)
                best = None
                for r in itr:
                    if r["verdict"] != "accurate":
                        continue
                    c = front_cpu(plain, r["max_ds"])
                    if c is not None and (best is None or r["cpu_s"] / c < best[0]):
                        best = (r["cpu_s"] / c, r, c)
                line = "%-15s %-28s non-iterative accurate up to H = %g ms, iterated up to %g ms (%s)" % (
                    mach, cfg, 1e3 * h0, 1e3 * h1, "%.3gx" % (h1 / h0) if h0 > 0 else "-")
                if best:
                    line += "; best CPU ratio iterated / non-iterative at equal max|ds| %.3g (H = %g ms, %.3g s vs " \
                            "%.3g s at max|ds| %.3g m)" % (best[0], 1e3 * best[1]["H"], best[1]["cpu_s"], best[2],
                                                            best[1]["max_ds"])
                print(line)
        plain = [r for r in rows if r["machine"] == mach and "+" not in r["config"]]
        best = None
        for r in rows:
            if r["machine"] == mach and "+" in r["config"] and r["verdict"] == "accurate":
                c = front_cpu(plain, r["max_ds"])
                if c is not None and (best is None or r["cpu_s"] / c < best[0]):
                    best = (r["cpu_s"] / c, r, c)
        if best:
            print("%-15s best iterated configuration against the best non-iterative one at equal max|ds|: CPU ratio "
                  "%.3g (%s, H = %g ms: %.3g s; non-iterative front %.3g s at max|ds| %.3g m)"
                  % (mach, best[0], best[1]["config"], 1e3 * best[1]["H"], best[1]["cpu_s"], best[2],
                     best[1]["max_ds"]))


if __name__ == "__main__":
    main()
