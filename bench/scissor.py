#!/usr/bin/python3
"""The scissor lift (bench/gen_models.py scissor N): set-up and per-step
cost of both formulations with KLU against the stage count, and how far
penalty and double-step lie apart.

    bench/scissor.py [--build build] [--n 32,64,128,256,512] [--cylinders 1|2]
                     [--steps K] [--repeat R] [--agree N] [--agree-t-end T]

Runs BUILD/bench/bench_scale (cmake --build BUILD --target bench_scale, a
Release tree) once per N and formulation, fast Jacobian, KLU, and prints per
row: the CPU time of the simulation's creation (set-up: pattern,
symbolic analysis, static start; the minimum over the rounds), the first
step's wall time, the minimum wall ms/step and the minimum CPU ms/step
over R rounds of K steps (after that first step) and the growth exponents
of set-up and CPU ms/step fitted by least squares on log-log over all N
given.  Then --agree N (default 16; 0:
none): both formulations run the N-stage lift for --agree-t-end seconds
(default 0.5) with `hymo run -o` and the largest difference of a joint
coordinate over the whole run is printed (h5py).

Wall-clock ms/step on a shared machine varies by up to 3x (penalty, N =
512: 10.7 s and 3.3 s in two runs); the CPU time per step varies less.  bench/scaling.py
--families scissor --solvers klu --instructions gives callgrind counts.
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
import scaling  # noqa: E402

FORMS = ("double-step", "penalty")


def bench(exe, model, form, steps, repeat, timeout):
    return scaling.run_one(exe, model, form, "klu", steps, repeat, timeout, warmup=1)


def slope(ns, ys):
    pts = [(math.log(n), math.log(y)) for n, y in zip(ns, ys) if y and y > 0]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sum((p[0] - mx) ** 2 for p in pts)


def agreement(hymo, n, cylinders, t_end, tmp):
    import h5py
    import numpy as np
    model = os.path.join(tmp, "agree%d.yaml" % n)
    with open(model, "w") as fh:
        fh.write(gen_models.scissor(n, cylinders))
    z = {}
    for form in FORMS:
        out = os.path.join(tmp, "agree_%s.h5" % form)
        subprocess.run([hymo, "run", model, "--formulation", form, "--jacobian", "fast", "--linear-solver", "klu",
                        "--t-end", repr(t_end), "--no-estimate", "-q", "-o", out], check=True)
        with h5py.File(out, "r") as h:
            z[form] = h["states/z"][()]
            s = h["actuators/s"][()]
    return float(np.max(np.abs(z["penalty"] - z["double-step"]))), float(s[-1, 0] - s[0, 0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--n", default="32,64,128,256,512")
    ap.add_argument("--cylinders", type=int, choices=(1, 2), default=1)
    ap.add_argument("--steps", type=int, default=16, help="steps per round (default 16: two re-selection checks of double-step)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--agree", type=int, default=16)
    ap.add_argument("--agree-t-end", type=float, default=0.5)
    a = ap.parse_args(argv)
    exe = os.path.join(a.build, "bench", "bench_scale")
    hymo = os.path.join(a.build, "hymo")
    if not os.path.exists(exe):
        sys.exit("scissor.py: %s missing (cmake --build %s --target bench_scale)" % (exe, a.build))
    ns = [int(x) for x in a.n.split(",")]
    rows = {f: [] for f in FORMS}
    print("| formulation | N | nx | set-up CPU ms | first step ms | ms/step wall | ms/step CPU | Newton it./step |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in ns:
            model = os.path.join(tmp, "scissor%d.yaml" % n)
            with open(model, "w") as fh:
                fh.write(gen_models.scissor(n, a.cylinders))
            steps = a.steps
            for form in FORMS:
                r = bench(exe, model, form, steps, a.repeat, a.timeout)
                rows[form].append(r)
                if "error" in r:
                    print("| %s | %d | | %s | | | | |" % (form, n, r["error"]))
                else:
                    print("| %s | %d | %d | %.2f | %.2f | %.3f | %.3f | %.2f |"
                          % (form, n, r["nx"], r["setup_cpu_ms"], r["first_ms"], r["ms_min"], r["cpu_min"], r["iter"]),
                          flush=True)
        for form in FORMS:
            ok = [(n, r) for n, r in zip(ns, rows[form]) if "error" not in r]
            print("%s: exponent over N = %s: set-up %.2f, CPU ms/step %.2f"
                  % (form, ",".join(str(n) for n, _ in ok), slope([n for n, _ in ok], [r["setup_cpu_ms"] for _, r in ok]),
                     slope([n for n, _ in ok], [r["cpu_min"] for _, r in ok])))
        if a.agree > 0:
            d, ds = agreement(hymo, a.agree, a.cylinders, a.agree_t_end, tmp)
            print("agreement, N = %d, %g s (rod stroke %.4g m): max |z_penalty - z_double-step| = %.3g"
                  % (a.agree, a.agree_t_end, ds, d))
    return 0


if __name__ == "__main__":
    sys.exit(main())
