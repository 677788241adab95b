#!/usr/bin/python3
"""Plots of one hymo run from its HDF5 file (docs/hdf5-format.md,
docs/plots.md): joint coordinates, actuator lengths, pressures, energy
drift, constraint violation and, for co-simulation files, the residual
energy of /cosim.  Needs python3-h5py and python3-matplotlib (Debian).

usage: scripts/plot_run.py OUT.h5 [-o PNG]
Without -o the PNG is written next to the file (OUT.png).  A file being
written, or a killed run's OUT.h5.XXXXXX.partial (still flagged "being
written"), is read as HDF5's SWMR reader up to the rows of /time."""
import argparse
import ctypes
import os
import sys

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def open_h5(path):
    """h5py.File of a run file; one flagged "being written" (superblock byte
    11, bit 0x04) opened as HDF5's SWMR reader with one metadata read
    attempt (HDF5's default of 100 hangs on a damaged file).  Returns
    (file, swmr)."""
    with open(path, "rb") as fp:
        sb = fp.read(12)
    if not (len(sb) == 12 and sb[:8] == b"\x89HDF\r\n\x1a\n" and sb[8] >= 2 and sb[11] & 0x04):
        return h5py.File(path, "r"), False
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    try:  # the libhdf5 h5py loaded
        with open("/proc/self/maps") as maps:
            libs = [ln.split()[-1] for ln in maps if "libhdf5" in ln and "hl" not in ln.split("/")[-1]]
        if libs:
            lib = ctypes.CDLL(libs[0])
            lib.H5Pset_metadata_read_attempts.argtypes = [ctypes.c_int64, ctypes.c_uint]
            lib.H5Pset_metadata_read_attempts(fapl.id, 1)
    except (OSError, AttributeError):
        pass
    fid = h5py.h5f.open(os.fsencode(path), h5py.h5f.ACC_RDONLY | h5py.h5f.ACC_SWMR_READ, fapl=fapl)
    return h5py.File(fid), True


def names(ds, prefix):
    if "names" in ds.attrs:
        return [text(n) for n in ds.attrs["names"]]
    return ["%s%d" % (prefix, j + 1) for j in range(ds.shape[1] if ds.ndim > 1 else 1)]


def actuator_units(f):
    """Unit of each /actuators/s column from the model stored in the file:
    m for a cylinder (its length), the joint's unit for a motor or driven
    joint (rad on a revolute joint, m on a prismatic one)."""
    try:
        import yaml
        model = yaml.safe_load(text(f.attrs["model_source"]))
        joints = {b["joint"]["name"]: b["joint"].get("type") for b in model.get("bodies", [])}
        kinds = {c["name"]: "m" for c in (model.get("hydraulics") or {}).get("cylinders", [])}
        for m in ((model.get("hydraulics") or {}).get("motors", []) + model.get("driven_joints", [])):
            kinds[m["name"]] = "rad" if joints.get(m["joint"]) == "revolute" else "m"
        return [kinds.get(n, "?") for n in names(f["actuators/s"], "s")]
    except Exception:  # no model stored, or not one this script can read: say so in the label
        return None


def panel(ax, t, ds, ylabel, prefix, scale=1.0, units=None):
    data = ds[:len(t)] * scale
    if data.ndim == 1:
        data = data[:, None]
    for j, name in enumerate(names(ds, prefix)):
        ax.plot(t, data[:, j], lw=1, label=name if units is None else "%s (%s)" % (name, units[j]))
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    if data.shape[1] > 1 or "names" in ds.attrs:
        ax.legend(fontsize=7, loc="best")


def figure(path):
    """The figure of the run file at path (a matplotlib Figure)."""
    try:
        f, _ = open_h5(path)
    except OSError as e:
        sys.exit("plot_run.py: cannot read '%s': %s" % (path, e))
    with f:
        if "time" not in f or "states/z" not in f:
            sys.exit("plot_run.py: '%s' is not a hymo run file (no /time or /states/z)" % path)
        t = f["time"][()]
        au = actuator_units(f) if "actuators/s" in f else None
        au_label = "m" if au and set(au) == {"m"} else " or ".join(sorted(set(au))) if au else "m, rad for motors"
        panels = [("states/z", "joint coordinates\n(rad or m)", "z", 1.0),
                  ("actuators/s", "actuator length s\n(%s)" % au_label, "s", 1.0),
                  ("states/p", "pressure (MPa)", "p", 1e-6),
                  ("energy/drift", "energy drift D (J)", "D", 1.0),
                  ("constraints/position", "constraint violation\n|Phi| per cut joint (m or rad)", "cut", 1.0),
                  ("cosim/residual_energy_total", "co-simulation\nresidual energy (J)", "E", 1.0)]
        panels = [p for p in panels if p[0] in f and f[p[0]].size > 0]
        fig, axes = plt.subplots(len(panels), 1, figsize=(8, 1.9 * len(panels) + 0.8), sharex=True, squeeze=False)
        for ax, (path, label, prefix, scale) in zip(axes[:, 0], panels):
            if path == "constraints/position":  # log scale; exact zeros drawn at 1e-18
                ax.set_yscale("log")
                data = np.maximum(np.abs(f[path][:len(t)]), 1e-18)
                for j, name in enumerate(names(f[path], prefix)):
                    ax.plot(t, data[:, j] if data.ndim > 1 else data, lw=1, label=name)
                ax.set_ylabel(label)
                ax.grid(alpha=0.3, which="both")
                ax.legend(fontsize=7, loc="best")
                continue
            panel(ax, t, f[path], label, prefix, scale, au if path == "actuators/s" else None)
        axes[-1, 0].set_xlabel("t (s)")
        complete = int(f.attrs.get("complete", 0))
        title = "%s: %s, %s, dt = %g s%s" % (text(f.attrs.get("model_name", "?")),
                                              text(f.attrs.get("integrator", "?")),
                                              text(f.attrs.get("formulation", "?")), float(f.attrs.get("dt", np.nan)),
                                              "" if complete else " (INCOMPLETE)")
        if "cosim" in f:
            c = f["cosim"].attrs
            title += "\nco-simulation %s, %s, extrapolation %s, H = %g s" % (
                text(c.get("scheme", "?")), text(c.get("coupling", "?")), text(c.get("extrapolation", "?")),
                float(c.get("H", np.nan)))
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("-o", "--output", help="PNG to write (default: FILE with .png)")
    a = ap.parse_args()
    fig = figure(a.file)
    out = a.output or os.path.splitext(a.file.replace(".partial", ""))[0] + ".png"
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    try:
        main()
    except (OSError, RuntimeError) as e:  # e.g. stored values that do not match their checksum
        sys.exit("plot_run.py: cannot read '%s': %s (damaged file?)" % (sys.argv[1] if len(sys.argv) > 1 else "?", e))
