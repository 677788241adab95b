#!/usr/bin/python3
"""Figures of docs/cosimulation.md, "Predicting the achievable H".

    bench/predict_plot.py rho RHO_TABLE.csv OUT.png [RHO_LIMIT]
        rho(t) per configuration (one panel each) and H (one line each),
        from `hymo predict --rho-table`;
    bench/predict_plot.py cells CELLS.csv OUT.png
        predicted against measured achievable H of the cells written by
        bench/predict_cells.py (marker area: number of cells)."""
import collections
import csv
import sys

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

KEY = ('coupling', 'extrapolation', 'hyd_integrator', 'mech_integrator', 'scheme', 'mech_inputs')


def rho_plot(path, out, limit):
    data = collections.OrderedDict()
    for r in csv.DictReader(open(path)):
        k = tuple(r[c] for c in KEY)
        data.setdefault(k, collections.OrderedDict()).setdefault(float(r['H']), []).append(
            (float(r['t']), float(r['rho'])))
    fig, axes = plt.subplots(1, len(data), figsize=(5 * len(data), 4), squeeze=False, sharey=True)
    for ax, (k, per_h) in zip(axes[0], data.items()):
        for H, pts in per_h.items():
            ax.plot([p[0] for p in pts], [p[1] - 1.0 for p in pts], '.-', label='H = %g ms' % (1e3 * H))
        ax.axhline(limit - 1.0, color='k', ls='--', lw=0.8)
        ax.set_yscale('symlog', linthresh=1e-4)
        ax.set_xlabel('t (s)')
        ax.set_title('%s, p = %s, %s' % (k[0], k[1], k[3]), fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel('rho - 1 (dashed: limit)')
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def cells_plot(path, out):
    count = collections.Counter()
    for r in csv.DictReader(open(path)):
        count[(1e3 * float(r['measured_H']), 1e3 * float(r['predicted_H']))] += 1
    fig, ax = plt.subplots(figsize=(5, 5))
    xs, ys, ns = zip(*[(m, p, n) for (m, p), n in count.items()])
    ax.scatter(xs, ys, s=[30 * n for n in ns], alpha=0.6)
    for (m, p), n in count.items():
        ax.annotate(str(n), (m, p), fontsize=7, ha='center', va='center')
    ax.plot([0, 8], [0, 8], 'k--', lw=0.8)
    ax.set_xlabel('measured achievable H (ms, hymo sweep)')
    ax.set_ylabel('predicted achievable H (ms, hymo predict)')
    ax.set_title('144 cells: crane1, crane2; extrapolated, held', fontsize=9)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == '__main__':
    if sys.argv[1] == 'rho':
        rho_plot(sys.argv[2], sys.argv[3], float(sys.argv[4]) if len(sys.argv) > 4 else 1.03)
    else:
        cells_plot(sys.argv[2], sys.argv[3])
