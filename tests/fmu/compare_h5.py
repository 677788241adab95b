#!/usr/bin/python3
"""Compares two hymo result files dataset by dataset (tests/cli/cli_fmu_import.sh):

  compare_h5.py A.h5 B.h5 [--tol REL] [--skip PATH ...]

For every numeric dataset of A that B also has (SPEC §8 rows, /cosim
residual power and energy, exchanged signals): max |a - b| / max(|a|, |b|,
tiny) per dataset.  Prints the largest, exits 1 if it exceeds --tol (default
0: bit-identical) or if the shapes differ, 0 otherwise."""
import argparse
import sys

import h5py
import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--tol", type=float, default=0.0)
    ap.add_argument("--skip", nargs="*", default=[])
    o = ap.parse_args()
    worst, where, bad, n = 0.0, "", 0, 0
    with h5py.File(o.a, "r") as fa, h5py.File(o.b, "r") as fb:
        names = []
        fa.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
        for name in names:
            if name in o.skip or name.startswith("cosim/outputs") or name not in fb:
                continue
            a, b = fa[name][()], fb[name][()]
            if not np.issubdtype(np.asarray(a).dtype, np.number):
                continue
            if np.shape(a) != np.shape(b):
                print(f"{name}: shapes {np.shape(a)} and {np.shape(b)} differ")
                bad += 1
                continue
            n += 1
            a = np.asarray(a, dtype=float)
            b = np.asarray(b, dtype=float)
            if a.size == 0:
                continue
            scale = np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-300)
            r = float(np.max(np.abs(a - b) / scale))
            if r > worst:
                worst, where = r, name
    print(f"{n} datasets compared, max relative difference {worst:.3g}" + (f" ({where})" if where else ""))
    return 1 if bad or worst > o.tol else 0


if __name__ == "__main__":
    sys.exit(main())
