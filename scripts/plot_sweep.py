#!/usr/bin/python3
"""Residual energy against the communication step H from `hymo sweep` HDF5
output (docs/cosimulation.md).  Needs python3-h5py and python3-matplotlib
(Debian packages).

usage: scripts/plot_sweep.py TABLE.h5 OUT.png [--mech trapezoidal|index1] [--hyd rk4]
One panel per coupling; one curve per extrapolation; unstable runs are
marked with an x at the top of the axis."""
import argparse
import sys

import h5py
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("png")
    ap.add_argument("--mech", default="trapezoidal")
    ap.add_argument("--hyd", default="rk4")
    a = ap.parse_args()
    with h5py.File(a.table, "r") as f:
        H = f["runs/H"][:]
        E = f["runs/residual_energy_max_abs"][:]
        stable = f["runs/stable"][:]
        cfg = [c.decode() if isinstance(c, bytes) else str(c) for c in f["runs/config"][:]]
        model = f.attrs.get("model_name", b"")
        model = model.decode() if isinstance(model, bytes) else str(model)
    rows = [c.split(",") for c in cfg]
    couplings = sorted({r[0] for r in rows})
    fig, axes = plt.subplots(1, len(couplings), figsize=(6 * len(couplings), 4.2), squeeze=False)
    top = max([e for e, s in zip(E, stable) if s and e > 0] + [1e-6]) * 10
    for ax, coupling in zip(axes[0], couplings):
        for approx in sorted({r[1] for r in rows}):
            pts = sorted((H[i], E[i], stable[i]) for i, r in enumerate(rows)
                         if r[0] == coupling and r[1] == approx and r[2] == a.hyd and r[3] == a.mech)
            if not pts:
                continue
            hs = [p[0] * 1e3 for p in pts if p[2]]
            es = [max(p[1], 1e-9) for p in pts if p[2]]
            line, = ax.loglog(hs, es, "o-", label=f"extrapolation {approx}")
            bad = [p[0] * 1e3 for p in pts if not p[2]]
            if bad:
                ax.plot(bad, [top] * len(bad), "x", color=line.get_color())
        ax.set_title(f"{model}: {coupling} ({a.mech} mechanics, {a.hyd} hydraulics)")
        ax.set_xlabel("communication step H [ms]")
        ax.set_ylabel("max |residual energy| [J]   (x: unstable)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    print(f"wrote {a.png}")


if __name__ == "__main__":
    sys.exit(main())
