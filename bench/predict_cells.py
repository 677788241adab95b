#!/usr/bin/python3
"""Predicted against measured achievable H over the 144 cells of
docs/cosimulation.md (crane1, crane2; extrapolated and held mechanics'
inputs; 36 configurations each).

    bench/predict_cells.py BUILD_DIR WORK_DIR [--rho-limit R] [--points N] [--reuse]

Runs (in WORK_DIR) the monolithic references, `hymo sweep` (--jobs 1) and
`hymo predict` for both cranes and arrangements, and prints per cell the
measured and predicted achievable H, whether they are within one grid step,
the failures with the predictor's reason, and the CPU times (children's
user + system time of each command).  --reuse keeps references and sweep
tables already in WORK_DIR (their CPU times from WORK_DIR/cpu.txt)."""
import csv
import os
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRID = [0.5e-3, 1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 8e-3, 10e-3, 15e-3]
CONFIGS = ('coupling=velocity-force,velocity-pressure;extrapolation=0,2,interface-model;'
           'hyd=euler,rk4,trapezoidal;mech=trapezoidal,index1;scheme=jacobi')
KEY = ('coupling', 'extrapolation', 'hyd_integrator', 'mech_integrator', 'scheme', 'mech_inputs')


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def index(H):
    """Grid index of an achievable H (-1 for 0: even the smallest fails)."""
    return -1 if H == 0 else min(range(len(GRID)), key=lambda i: abs(GRID[i] - H))


def table(path):
    with open(path) as f:
        return {tuple(r[k] for k in KEY): r for r in csv.DictReader(f)}


def main():
    args = sys.argv[1:]
    reuse = '--reuse' in args
    args = [a for a in args if a != '--reuse']
    extra = []
    for opt in ('--rho-limit', '--points', '--eps'):
        if opt in args:
            i = args.index(opt)
            extra += args[i:i + 2]
            del args[i:i + 2]
    build, work = args[0], args[1]
    hymo = os.path.join(os.path.abspath(build), 'hymo')
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    cpu_sweep = {}
    if reuse and os.path.exists('cpu.txt'):
        for line in open('cpu.txt'):
            k, v = line.split()
            cpu_sweep[k] = float(v)
    cpu_pred = {}
    cells = []
    for crane in ('crane1', 'crane2'):
        model = os.path.join(ROOT, 'data', crane + '.yaml')
        ref = crane + '_ref.h5'
        if not (reuse and os.path.exists(ref)):
            subprocess.run([hymo, 'run', model, '-o', ref, '-q'], check=True)
        for arr in ('extrapolate', 'hold'):
            name = '%s_%s' % (crane, arr)
            if not (reuse and os.path.exists(name + '_sweep_achievable.csv') and name in cpu_sweep):
                cpu_sweep[name] = timed([hymo, 'sweep', model, '--reference', ref, '-o', name + '_sweep',
                                         '--jobs', '1', '--configs', CONFIGS + ';inputs=' + arr])
            cpu_pred[name] = timed([hymo, 'predict', model, '--reference', ref, '-o', name + '_predict', '-q',
                                    '--configs', CONFIGS + ';inputs=' + arr] + extra)
            meas = table(name + '_sweep_achievable.csv')
            pred = table(name + '_predict_achievable.csv')
            for k, m in meas.items():
                p = pred[k]
                cells.append((crane, k, float(m['achievable_H']), float(p['achievable_H']), p))
    with open('cpu.txt', 'w') as f:
        for k, v in cpu_sweep.items():
            f.write('%s %.3f\n' % (k, v))
    ok = [c for c in cells if abs(index(c[2]) - index(c[3])) <= 1]
    exact = [c for c in cells if index(c[2]) == index(c[3])]
    print('cells %d, within one grid step %d (%.1f %%), equal %d' % (len(cells), len(ok), 100.0 * len(ok) / len(cells),
                                                                     len(exact)))
    over = sum(1 for c in cells if index(c[3]) > index(c[2]))
    print('predicted larger than measured in %d cells, smaller in %d' % (over, sum(1 for c in cells if index(c[3]) < index(c[2]))))
    print('failures (measured / predicted H in ms; first unstable H, time rho first exceeds the limit):')
    for crane, k, m, p, row in cells:
        if abs(index(m) - index(p)) > 1:
            print('  %s %-55s %4g / %4g ms   first unstable %s ms at t = %s s' %
                  (crane, ','.join(k), 1e3 * m, 1e3 * p, '%g' % (1e3 * float(row['first_unstable_H']))
                   if row['first_unstable_H'] != 'nan' else '-', row['t_first']))
    ts, tp = sum(cpu_sweep.values()), sum(cpu_pred.values())
    for name in cpu_pred:
        print('CPU %-18s sweep %7.2f s  predict %6.2f s' % (name, cpu_sweep[name], cpu_pred[name]))
    print('CPU total: sweep %.2f s, predict %.2f s, ratio 1/%.1f' % (ts, tp, ts / tp))
    with open('cells.csv', 'w') as f:
        w = csv.writer(f)
        w.writerow(('model',) + KEY + ('measured_H', 'predicted_H', 'within_one_step'))
        for crane, k, m, p, row in cells:
            w.writerow((crane,) + k + (m, p, int(abs(index(m) - index(p)) <= 1)))


if __name__ == '__main__':
    main()
