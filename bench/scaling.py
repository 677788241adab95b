#!/usr/bin/python3
"""Per-step cost against N for the generated families (bench/gen_models.py).

    bench/scaling.py [--build build-rel] [--families chain,ladder,pipeline]
                     [--n 4,8,16,32,64,128,256] [--solvers dense,klu]
                     [--formulations double-step,penalty] [--steps K]
                     [--repeat R] [--csv FILE] [--instructions]
                     [--fit-min N] [--cpu]

Builds nothing: it runs BUILD/bench/bench_scale (cmake --build BUILD
--target bench_scale, a Release tree) once per family x N x formulation x
linear solver, fast Jacobian, and prints a table of the minimum ms/step
over R rounds of K steps (a fresh simulation each round), the mean Newton
iterations, the peak resident memory of the process (MB) and, per row, the
growth exponent fitted by least squares on log(ms) vs log(N) over the tail
N >= N_max/4 (the last three sizes of the default list; --fit-min N: over
the sizes >= N).  --cpu: the table and the exponent give the thread's CPU
time per step (bench_scale's cpu_min, minimum over the rounds) instead of
wall time.  The first step of each round (one-time work: KLU's symbolic
analysis, the pattern) is not
timed (bench_scale --warmup 1).  Also per row: the heap the simulation holds
at the largest N and the exponent of its growth.  A failed run shows its
message.

--instructions: also the instructions per step, counted by callgrind (the
difference of runs of 3K and K steps, / 2K: stable on a shared machine,
where wall-clock times of one binary differ by up to 2.5x), and their
exponent; slow (valgrind), meant for the KLU rows.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_models  # noqa: E402


def run_one(exe, model, form, solver, steps, repeat, timeout, warmup=None):
    cmd = [exe, model, "--formulation", form, "--jacobian", "fast", "--linear-solver", solver,
           "--steps", str(steps), "--repeat", str(repeat)]
    if warmup is not None:
        cmd += ["--warmup", str(warmup)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": "timeout %ds" % timeout}
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1][:120]}
    out = {}
    for kv in p.stdout.split():
        k, v = kv.split("=")
        out[k] = float(v)
    return out


def instructions(exe, model, form, solver, steps, timeout):
    """instructions of hymo_sim_step per step (callgrind), or None"""
    counts = []
    for k in (steps, 3 * steps):
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--toggle-collect=hymo_sim_step",
               exe, model, "--formulation", form, "--jacobian", "fast", "--linear-solver", solver,
               "--steps", str(k), "--repeat", "1"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except (subprocess.TimeoutExpired, FileNotFoundError):
            return None
        refs = [ln for ln in p.stderr.splitlines() if "refs:" in ln]
        if p.returncode != 0 or not refs:
            return None
        counts.append(int(refs[-1].split()[-1].replace(",", "")))
    return (counts[1] - counts[0]) / (2.0 * steps)


def slope(ns, ys):
    pts = [(math.log(n), math.log(y)) for n, y in zip(ns, ys) if y and y > 0]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(os.path.dirname(HERE), "build-rel"))
    ap.add_argument("--families", default="chain,ladder,pipeline")
    ap.add_argument("--n", default="4,8,16,32,64,128,256")
    ap.add_argument("--solvers", default="dense,klu")
    ap.add_argument("--formulations", default="double-step,penalty")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--csv")
    ap.add_argument("--instructions", action="store_true")
    ap.add_argument("--cpu", action="store_true", help="tabulate CPU ms/step (cpu_min) instead of wall")
    ap.add_argument("--fit-min", type=int, help="fit the exponents over N >= this (default N_max/4)")
    a = ap.parse_args()
    exe = os.path.join(a.build, "bench", "bench_scale")
    if not os.access(exe, os.X_OK):
        sys.exit("scaling.py: %s not found (cmake --build %s --target bench_scale)" % (exe, a.build))
    ns = [int(x) for x in a.n.split(",")]
    tail = [n for n in ns if n >= (a.fit_min if a.fit_min else max(ns) / 4)]
    rows = []
    csv = open(a.csv, "w") if a.csv else None
    if csv:
        csv.write("family,N,nx,formulation,solver,ms_min,ms_med,iter,jac,rss_mb,heap_kb,instr,cpu_min\n")
    with tempfile.TemporaryDirectory() as tmp:
        for fam in a.families.split(","):
            for form in a.formulations.split(","):
                for solver in a.solvers.split(","):
                    res = []
                    for n in ns:
                        path = os.path.join(tmp, "%s%d.yaml" % (fam, n))
                        if not os.path.exists(path):
                            with open(path, "w") as fh:
                                fh.write(gen_models.FAMILIES[fam](n))
                        r = run_one(exe, path, form, solver, a.steps, a.repeat, a.timeout)
                        if a.instructions and "error" not in r:
                            r["instr"] = instructions(exe, path, form, solver, a.steps, a.timeout)
                        res.append(r)
                        msg = r.get("error") or "%.4g ms/step" % r["ms_min"]
                        print("  %s N=%d %s %s: %s" % (fam, n, form, solver, msg), file=sys.stderr, flush=True)
                        if csv and "error" not in r:
                            csv.write("%s,%d,%d,%s,%s,%.6g,%.6g,%.3f,%.3f,%.1f,%d,%s,%.6g\n" % (
                                fam, n, r["nx"], form, solver, r["ms_min"], r["ms_med"], r["iter"], r["jac"],
                                r["rss_kb"] / 1024.0, r.get("heap_kb", -1), r.get("instr"), r.get("cpu_min", -1)))
                            csv.flush()
                    rows.append((fam, form, solver, res))
    if csv:
        csv.close()
    key = "cpu_min" if a.cpu else "ms_min"
    print("%s ms/step (min of %d rounds of %d steps, fast Jacobian); exponent fitted on N = %s"
          % ("CPU" if a.cpu else "wall", a.repeat, a.steps, ",".join(map(str, tail))))
    head = ("| family | formulation | solver | " + " | ".join("N=%d" % n for n in ns) +
            " | exponent | heap KB (N=%d) | heap exponent | iter (N=%d) |" % (ns[-1], ns[-1]))
    if a.instructions:
        head += " M instr/step (N=%d) | instr exponent |" % ns[-1]
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for fam, form, solver, res in rows:
        cells = []
        for r in res:
            cells.append("fail" if "error" in r else "%.4g" % r[key])
        ys = [res[ns.index(n)].get(key) for n in tail]
        e = slope(tail, ys) if all(y is not None for y in ys) else float("nan")
        last = res[-1]
        heap = "%d" % last["heap_kb"] if "heap_kb" in last else "-"
        hs = [res[ns.index(n)].get("heap_kb") for n in tail]
        he = slope(tail, hs) if all(h is not None for h in hs) else float("nan")
        it = "%.2f" % last["iter"] if "iter" in last else "-"
        line = "| %s | %s | %s | %s | %.2f | %s | %.2f | %s |" % (fam, form, solver, " | ".join(cells), e, heap, he, it)
        if a.instructions:
            ins = [res[ns.index(n)].get("instr") for n in tail]
            ie = slope(tail, ins) if all(i for i in ins) else float("nan")
            line += " %s | %.2f |" % ("%.3f" % (last["instr"] / 1e6) if last.get("instr") else "-", ie)
        print(line)
    for fam, form, solver, res in rows:
        for n, r in zip(ns, res):
            if "error" in r:
                print("%s %s %s N=%d: %s" % (fam, form, solver, n, r["error"]))


if __name__ == "__main__":
    main()
