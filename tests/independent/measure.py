#!/usr/bin/python3
"""measure.py: hymo's error against the independent solutions, as a table.

    tests/independent/measure.py [--models double_pendulum,triple_pendulum_3d]
        [--dt 1e-3,2.5e-4,6.25e-5] [--jacobian fast,numeric]
        [--formulation double-step,penalty] [--hymo build/hymo] [--outdir DIR]
        [--extra "--newton-test seed"]

For every combination it runs `hymo run data/MODEL.yaml --jacobian J
--formulation F --dt D -o OUT.h5 -q` and compares OUT.h5 with the
independent solution (compare.py).  It prints one Markdown table per model:
max |dz| (and max |dp| with hydraulics) per Delta t, and the ratio of
successive errors (16 per 4x smaller step for a second-order method).
Set HYMO_INDEP_CACHE=DIR to keep the independent solutions between runs.
"""

import argparse
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import compare  # noqa: E402


def hymo_binary():
    return os.environ.get("HYMO_BINARY", os.path.join(ROOT, "build", "hymo"))


def run_hymo(binary, model, jac, form, dt, out, extra=()):
    cmd = [binary, "run", os.path.join(ROOT, "data", model + ".yaml"), "--jacobian", jac,
           "--formulation", form, "--dt", repr(dt), "-o", out, "-q"] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stderr.strip()


def fmt(x):
    return "%.3g" % x


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="double_pendulum,triple_pendulum_3d")
    ap.add_argument("--dt", default="1e-3,2.5e-4,6.25e-5")
    ap.add_argument("--jacobian", default="fast,numeric")
    ap.add_argument("--formulation", default="double-step,penalty")
    ap.add_argument("--hymo", default=hymo_binary())
    ap.add_argument("--outdir", default=os.environ.get("TMPDIR", "/tmp") + "/hymo-indep")
    ap.add_argument("--extra", default="", help="extra hymo run options")
    a = ap.parse_args(argv)
    os.makedirs(a.outdir, exist_ok=True)
    dts = [float(x) for x in a.dt.split(",")]
    extra = shlex.split(a.extra)
    for model in a.models.split(","):
        rows = []
        for form in a.formulation.split(","):
            for jac in a.jacobian.split(","):
                errs = []
                for dt in dts:
                    out = os.path.join(a.outdir, "%s-%s-%s-%g.h5" % (model, form, jac, dt))
                    rc, msg = run_hymo(a.hymo, model, jac, form, dt, out, extra)
                    if rc not in (0, 3):
                        errs.append({"fail": "exit %d: %s" % (rc, msg)})
                        continue
                    r = compare.errors(model, out)
                    if rc == 3:
                        r["fail"] = "stopped at t = %g s" % r["t_end"]
                    errs.append(r)
                    print("  %s %s %s dt=%g: z %.3e%s, iterations %.2f%s" % (
                        model, form, jac, dt, r["z_max_error"],
                        (", p %.3e Pa" % r["p_max_error"]) if "p_max_error" in r else "",
                        r["mean_iterations"], "  (%s)" % r["fail"] if "fail" in r else ""),
                        file=sys.stderr, flush=True)
                rows.append((form, jac, errs))
        hyd = any("p_max_error" in e for _, _, es in rows for e in es)
        print("\n### %s\n" % model)
        head = "| formulation | jacobian | " + " | ".join("dz, dt=%g ms" % (dt * 1e3) for dt in dts) + " | ratios |"
        if hyd:
            head += " " + " | ".join("dp, dt=%g ms" % (dt * 1e3) for dt in dts) + " | ratios |"
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        for form, jac, errs in rows:
            def col(key):
                vals = [e.get(key) for e in errs]
                cells = []
                for e, v in zip(errs, vals):
                    if v is None:
                        cells.append("failed")
                    else:
                        cells.append(fmt(v) + (" (incomplete)" if "fail" in e else ""))
                ratios = ["%.1f" % (x / y) if x and y else "-" for x, y in zip(vals[:-1], vals[1:])]
                return " | ".join(cells) + " | " + ", ".join(ratios) + " |"
            line = "| %s | %s | %s" % (form, jac, col("z_max_error"))
            if hyd:
                line += " " + col("p_max_error")
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
