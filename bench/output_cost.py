#!/usr/bin/env python3
"""The cost of `hymo run -o`: each binary x model x {no -o, -o, -o --no-estimate},
run N times interleaved; medians of wall and CPU (user + sys of the child)
and their change against no -o. Wall time means something only on an idle
machine (the load average is printed before and after).

usage: bench/output_cost.py HYMO[,HYMO2...] N MODEL[,MODEL...] [hymo run options...]
  e.g. /usr/bin/python3 bench/output_cost.py build/hymo 9 fourbar,crane1 --jacobian fast
(MODEL is data/MODEL.yaml; run from the source tree)
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    bins = sys.argv[1].split(',')
    n = int(sys.argv[2])
    models = sys.argv[3].split(',')
    extra = sys.argv[4:]
    out = os.path.join(tempfile.mkdtemp(), 'out.h5')
    cfgs = [('no -o', []), ('-o', ['-o', out]), ('-o --no-estimate', ['-o', out, '--no-estimate'])]
    has_flag = {b: '--no-estimate' in subprocess.run([b, 'run', '--help'], capture_output=True, text=True).stdout
                 for b in bins}
    res = {}
    load0 = open('/proc/loadavg').read().split()[:3]
    for _ in range(n):
        for b in bins:
            for m in models:
                for name, a in cfgs:
                    if '--no-estimate' in a and not has_flag[b]:
                        continue  # a binary from before the flag
                    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    t0 = os.times().elapsed
                    subprocess.run([b, 'run', 'data/%s.yaml' % m, '-q'] + extra + a, check=True)
                    t1 = os.times().elapsed
                    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
                    res.setdefault((b, m, name), []).append((t1 - t0, cpu))
    print('load average before', ' '.join(load0), 'after', ' '.join(open('/proc/loadavg').read().split()[:3]))
    for (b, m, name), v in res.items():
        w = statistics.median(x[0] for x in v)
        c = statistics.median(x[1] for x in v)
        base = res[(b, m, 'no -o')]
        bw = statistics.median(x[0] for x in base)
        bc = statistics.median(x[1] for x in base)
        print('%-24s %-10s %-18s wall %.3f s (%+4.0f %%)  cpu %.3f s (%+4.0f %%)'
              % (b[-24:], m, name, w, 100 * (w / bw - 1), c, 100 * (c / bc - 1)))


if __name__ == '__main__':
    main()
