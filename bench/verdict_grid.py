#!/usr/bin/python3
"""Verdict grid: co-simulations of crane1, crane2 and the excavator judged
against the monolithic reference by this script alone (h5py + numpy),
independently of hymo's own verdict.

For every run it reads the co-simulation file and the reference file and
computes, from the stored rows only:
  max_p_err   max over time and volumes of |p - p_ref| (reference linearly
              interpolated to the run's times), Pa
  jump        the largest change |D(t) - D(s)| of the energy-balance error
              D - D_ref over any window t - s <= 1 s, J, and
  excess      the largest |D(t) - D(s)| - 0.05 (W(t) - W(s)) over the same
              windows, J, with W the cumulative |actuator work| summed from
              the actuators' work rows
and calls a run BAD when it is unstable by hymo (exit 3, complete = 0),
or max_p_err > P_LIMIT, or excess > 1 J (an energy-balance jump).
It fails (exit 1) when hymo calls a run "accurate" that this script calls
BAD, or when the burst case is accurate.

usage: verdict_grid.py HYMO OUTDIR [--subset] [--table TABLE.md]
"""
import os
import subprocess
import sys

import h5py
import numpy as np

P_LIMIT = 1.0e6     # Pa: hymo's default --max-abs p (docs/cosimulation.md)
JUMP_R = 0.05       # hymo's default --max-balance-jump
JUMP_FLOOR = 1.0    # J, hymo's default --unstable-floor
WINDOW = 1.0        # s, hymo's default --balance-window

BURST = ("crane2", ["--H", "4e-3", "--coupling", "velocity-force", "--extrapolation", "interface-model",
                    "--mech-integrator", "index1"])


def grid():
    runs = []
    for model, t_end in (("crane1", None), ("crane2", None), ("excavator", None)):
        for coupling, Hs in (("velocity-pressure", ("1e-3", "5e-3", "1e-2")),
                             ("velocity-force", ("1e-3", "4e-3", "1e-2")),
                             ("tlm", ("2e-3", "1e-2", "2e-2"))):
            for scheme in ("jacobi", "gauss-seidel"):
                for H in Hs:
                    runs.append((model, ["--H", H, "--coupling", coupling, "--scheme", scheme]))
        if model == "crane1":  # TLM at 30 ms: a 2.3 MPa pressure error
            runs.append((model, ["--H", "3e-2", "--coupling", "tlm", "--scheme", "jacobi"]))
        for H in ("2e-3", "4e-3", "5e-3"):
            runs.append((model, ["--H", H, "--coupling", "velocity-force", "--extrapolation", "interface-model",
                                 "--mech-integrator", "index1"]))
    return runs


SUBSET = [("crane1", ["--H", "3e-2", "--coupling", "tlm", "--scheme", "jacobi"]),
          ("crane1", ["--H", "1e-3", "--coupling", "velocity-pressure", "--scheme", "jacobi"]),
          BURST]


def window_jump(t, D, W):
    """Largest |D(t) - D(s)| and largest excess |D(t) - D(s)| - JUMP_R (W(t) - W(s))
    over all pairs of communication points with t - WINDOW <= s < t."""
    best = excess = 0.0
    H = t[1] - t[0] if len(t) > 1 else 1.0
    for k in range(1, min(len(t), int(round(WINDOW / H)) + 1)):
        dD = np.abs(D[k:] - D[:-k])
        best = max(best, float(dD.max()))
        excess = max(excess, float((dD - JUMP_R * (W[k:] - W[:-k])).max()))
    return best, excess


def judge(run_path, ref_path):
    f = h5py.File(run_path, "r")
    r = h5py.File(ref_path, "r")
    t = f["time"][:]
    p = f["states/p"][:]
    tr = r["time"][:]
    pr = r["states/p"][:]
    pri = np.column_stack([np.interp(t, tr, pr[:, k]) for k in range(p.shape[1])])
    max_p = float(np.abs(p - pri).max()) if len(t) else 0.0
    D = f["energy/drift"][:] - np.interp(t, tr, r["energy/drift"][:])
    w = f["actuators/work"][:]
    W = np.concatenate([[0.0], np.cumsum(np.abs(np.diff(w, axis=0)).sum(axis=1))])
    jump, ratio = window_jump(t, D, W)
    cos = f["cosim"].attrs
    verdict = cos["verdict"]
    verdict = verdict.decode() if isinstance(verdict, bytes) else str(verdict)
    H = float(cos["H"])
    return dict(max_p=max_p, jump=jump, excess=ratio, verdict=verdict, H=H, t=float(t[-1]))


def main():
    hymo, out = sys.argv[1], sys.argv[2]
    subset = "--subset" in sys.argv
    table = sys.argv[sys.argv.index("--table") + 1] if "--table" in sys.argv else None
    root = os.environ.get("HYMO_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    os.makedirs(out, exist_ok=True)
    runs = SUBSET if subset else grid() + [BURST]
    refs = {}
    bad = 0
    rows = []
    for model, args in runs:
        mpath = os.path.join(root, "data", model + ".yaml")
        if model not in refs:
            refs[model] = os.path.join(out, model + "_ref.h5")
            subprocess.run([hymo, "run", mpath, "-q", "-o", refs[model]], check=True)
        name = model + "_" + "_".join(a.lstrip("-") for a in args)
        path = os.path.join(out, name + ".h5")
        rc = subprocess.run([hymo, "cosim", mpath, "-q", "--reference", refs[model], "-o", path] + args,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        if rc == 2 or not os.path.exists(path):
            print("run failed to start:", name, "exit", rc)
            bad += 1
            continue
        j = judge(path, refs[model])
        mine = "BAD" if rc == 3 or j["max_p"] > P_LIMIT or j["excess"] > JUMP_FLOOR else "good"
        wrong = j["verdict"] == "accurate" and mine == "BAD"
        if (model, args) == BURST and j["verdict"] == "accurate":
            wrong = True
        bad += wrong
        rows.append((model, " ".join(args), rc, j["verdict"], j["max_p"], j["jump"], j["excess"], j["t"], mine,
                     "WRONG" if wrong else ""))
        print("%-10s %-75s exit %d %-10s max|dp| %9.3g Pa  D jump %9.3g J excess %9.3g J  t %5.3g  %s %s" % rows[-1],
              flush=True)
    acc = sum(1 for r in rows if r[3] == "accurate")
    print("%d runs, %d accurate, %d called accurate wrongly or failed" % (len(rows), acc, bad))
    if table:
        with open(table, "w") as fh:
            fh.write("| model | options | exit | hymo verdict | max abs p error (MPa) | D jump in 1 s (J) | "
                     "excess (J) | t reached (s) | script |\n|---|---|---|---|---|---|---|---|---|\n")
            for r in rows:
                fh.write("| %s | `%s` | %d | %s | %.3g | %.3g | %.3g | %.4g | %s%s |\n"
                         % (r[0], r[1], r[2], r[3], r[4] / 1e6, r[5], r[6], r[7], r[8],
                            " " + r[9] if r[9] else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
