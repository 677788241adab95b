#!/usr/bin/python3
"""hymo's FMU import against the exact co-simulation of the two-mass
oscillator split (osc_exact.py), through `hymo cosim SYSTEM.yaml` with the
hand-written FMUs osc_mass1.fmu and osc_mass2.fmu.

  accuracy: Jacobi p = 0, p = 1 and Gauss-Seidel p = 0 at H = 1, 0.5, 0.25,
            0.125 ms over 1 s: every output of every communication point
            within TOL (relative to the output's largest magnitude) of the
            exact co-simulation of the split; the observed order against the
            monolithic exact solution (positions, finest pair of H) within
            0.1 of 1, 2, 1.
  blowup:   Jacobi p = 0 at H = 4 ms over 10 s exits 3 (unstable, growth),
            p = 1 at 4 ms exits 0; an FMU whose output becomes non-finite
            (mass 2 with m = 0) exits 3.
  loop:     two mass-2 halves in an algebraic loop through their
            feedthrough outputs: kc = 0.5, the initialization's sweeps reach
            the fixed point (checked at t = 0); kc = 3000, none: exit 2.
Exit 0 when every check holds, 1 otherwise; the figures are printed."""
import argparse
import math
import os
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import osc_exact  # noqa: E402


HINT = 2.5e-5  # the FMUs' internal RK4 step (their default 1e-4 s gives up to 1e-9 relative)


def system(work, fmus, name, H, t_end, scheme, order, extra=""):
    path = os.path.join(work, name + ".yaml")
    with open(path, "w") as f:
        f.write(f"""name: {name}
H: {H!r}
t_end: {t_end!r}
scheme: {scheme}
extrapolation: {order}
order: [mass1, mass2]
subsystems:
  mass1: {{fmu: {os.path.join(fmus, 'osc_mass1.fmu')}, parameters: {{h: {HINT!r}}}}}
  mass2: {{fmu: {os.path.join(fmus, 'osc_mass2.fmu')}, parameters: {{h: {HINT!r}{extra}}}}}
connections:
  - {{from: mass1.x1, to: mass2.x1}}
  - {{from: mass1.v1, to: mass2.v1}}
  - {{from: mass2.F, to: mass1.F}}
""" if scheme == "gauss-seidel" else f"""name: {name}
H: {H!r}
t_end: {t_end!r}
scheme: {scheme}
extrapolation: {order}
subsystems:
  mass1: {{fmu: {os.path.join(fmus, 'osc_mass1.fmu')}, parameters: {{h: {HINT!r}}}}}
  mass2: {{fmu: {os.path.join(fmus, 'osc_mass2.fmu')}, parameters: {{h: {HINT!r}{extra}}}}}
connections:
  - {{from: mass1.x1, to: mass2.x1}}
  - {{from: mass1.v1, to: mass2.v1}}
  - {{from: mass2.F, to: mass1.F}}
""")
    return path


def run(hymo, path, out):
    p = subprocess.run([hymo, "cosim", path, "-o", out], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def rows(out):
    with h5py.File(out, "r") as f:
        t = f["time"][:]
        a = f["cosim/outputs/mass1"][:]
        b = f["cosim/outputs/mass2"][:]
    return np.column_stack([t, a[:, 0], a[:, 1], b[:, 0], b[:, 1], b[:, 2]])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["accuracy", "blowup", "loop"])
    ap.add_argument("--hymo", required=True)
    ap.add_argument("--fmus", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tol", type=float, default=1e-9)
    a = ap.parse_args()
    a.fmus = os.path.abspath(a.fmus)
    os.makedirs(a.work, exist_ok=True)
    ok = True
    if a.mode == "accuracy":
        Hs = [1e-3, 5e-4, 2.5e-4, 1.25e-4]
        for scheme, order, expect in [("jacobi", 0, 1.0), ("jacobi", 1, 2.0), ("gauss-seidel", 0, 1.0)]:
            errs = []
            for H in Hs:
                name = f"osc_{scheme}_p{order}_H{H:g}"
                out = os.path.join(a.work, name + ".h5")
                rc, text = run(a.hymo, system(a.work, a.fmus, name, H, 1.0, scheme, order), out)
                if rc != 0:
                    print(f"FAIL {name}: exit {rc}\n{text}")
                    return 1
                got = rows(out)
                ex = osc_exact.cosim(H, 1.0, "jacobi" if scheme == "jacobi" else "gs", order)
                if got.shape != ex.shape or np.max(np.abs(got[:, 0] - ex[:, 0])) > 1e-12:
                    print(f"FAIL {name}: time grid differs ({got.shape} vs {ex.shape})")
                    return 1
                scale = np.max(np.abs(ex[:, 1:]), axis=0)
                d = np.max(np.abs(got[:, 1:] - ex[:, 1:]), axis=0) / scale
                mono = osc_exact.monolithic(ex[:, 0])
                errs.append(np.max(np.abs(got[:, [1, 3]] - mono[:, [1, 3]])))
                good = np.max(d) <= a.tol
                ok &= good
                print(f"{'ok  ' if good else 'FAIL'} {scheme} p={order} H={H:g}: max relative difference to the exact "
                      f"co-simulation {np.max(d):.3g} (x1 v1 x2 v2 F: {' '.join('%.2g' % v for v in d)}); "
                      f"position error vs monolithic {errs[-1]:.4g} m")
            orders = [math.log2(errs[i] / errs[i + 1]) for i in range(len(errs) - 1)]
            good = abs(orders[-1] - expect) <= 0.1
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} {scheme} p={order}: observed orders {' '.join('%.3f' % o for o in orders)} "
                  f"(expected {expect:.0f})")
    elif a.mode == "loop":
        # two mass-2 halves whose feedthrough outputs drive each other (F of one is x1 of the other): an
        # algebraic loop, F_a = kc (x2_a - F_b) + dc (v2_a - v2_b) and the same with a, b swapped.  With kc = 0.5
        # the sweeps contract (factor kc^2) to the fixed point, which the outputs at t = 0 must satisfy; with
        # kc = 3000 they diverge: no fixed point, exit 2 naming the input.
        for kc, want in ((0.5, 0), (3000.0, 2)):
            name = "osc_loop_kc%g" % kc
            path = os.path.join(a.work, name + ".yaml")
            m2 = os.path.join(a.fmus, "osc_mass2.fmu")
            with open(path, "w") as f:
                f.write(f"""H: 0.001
t_end: 0.01
subsystems:
  a: {{fmu: {m2}, parameters: {{kc: {kc}, x0: 0.02}}}}
  b: {{fmu: {m2}, parameters: {{kc: {kc}, x0: -0.03, v0: 0.1}}}}
connections:
  - {{from: a.F, to: b.x1}}
  - {{from: b.F, to: a.x1}}
  - {{from: a.v2, to: b.v1}}
  - {{from: b.v2, to: a.v1}}
""")
            out = os.path.join(a.work, name + ".h5")
            rc, text = run(a.hymo, path, out)
            good = rc == want
            if want == 0 and good:
                with h5py.File(out, "r") as f:
                    ya, yb = f["cosim/outputs/a"][0], f["cosim/outputs/b"][0]
                dc = 0.5
                ra = ya[2] - (kc * (ya[0] - yb[2]) + dc * (ya[1] - yb[1]))
                rb = yb[2] - (kc * (yb[0] - ya[2]) + dc * (yb[1] - ya[1]))
                good = max(abs(ra), abs(rb)) <= 1e-12 * max(abs(ya[2]), abs(yb[2]))
                text = "F_a = %.15g, F_b = %.15g at t = 0, fixed-point residuals %.3g, %.3g" % (ya[2], yb[2], ra, rb)
            else:
                good = good and "did not settle" in text
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} {name}: exit {rc} (want {want}): {text.strip().splitlines()[-1]}")
    else:
        for name, order, extra, want, phrase in [("osc_blowup_p0", 0, "", 3, "growth criterion"),
                                                 ("osc_p1_H4ms", 1, "", 0, "stable (reached t_end)"),
                                                 ("osc_nonfinite", 1, ", m: 0", 3, "became non-finite")]:
            out = os.path.join(a.work, name + ".h5")
            rc, text = run(a.hymo, system(a.work, a.fmus, name, 4e-3, 10.0, "jacobi", order, extra), out)
            status = [l for l in text.splitlines() if l.startswith(("status", "verdict", "hymo:"))]
            good = rc == want and phrase in text
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} {name}: exit {rc} (want {want}): {' | '.join(status)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
