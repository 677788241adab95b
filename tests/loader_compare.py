#!/usr/bin/python3
"""Two hymo binaries against each other on damaged model files and --set.

Run it before and after a change to the model loader that must not change
what the loader answers:

  tests/loader_compare.py OLD_HYMO NEW_HYMO SOURCE_DIR OUT_DIR [PER_MODEL] [SEED]

Damaged variants: each shipped model (data/*.yaml, tests/models/*.yaml)
PER_MODEL times (default 23) with 1-3 random changes (a line deleted,
doubled, swapped with another or indented; a byte changed, deleted or cut
off after; YAML punctuation, anchors, aliases, tags, document markers or
odd numbers inserted; a token replaced), seeded (SEED, default 1), so a
run is reproducible.  Overrides: each shipped model six times with one to
three --set lines from a fixed list (valid, invalid, new keys, new
mappings, bad paths).  Each input through `hymo run FILE --t-end 1e-3 -q
-o OUT.h5` with both binaries: the exit code, stderr and, where it loads,
the file's model_sha256 and model_physics_sha256 must be the same; and
each damaged variant also without -o (the loader keeps no text then): the
exit code and stderr must be the same.  Prints
every difference and one line per part; exit 1 when any differ.
"""
import glob, os, random, subprocess, sys
import h5py

old, new, src, out = sys.argv[1:5]
bad = 0
nper = int(sys.argv[5]) if len(sys.argv) > 5 else 23
rng = random.Random(int(sys.argv[6]) if len(sys.argv) > 6 else 1)
os.makedirs(out, exist_ok=True)
models = sorted(glob.glob(src + '/data/*.yaml') + glob.glob(src + '/tests/models/*.yaml'))
JUNK = [': ', '- ', '[', ']', '{', '}', '&a ', '*a', '!!str ', '! ', '"', "'", '#', '\t', '  ', '\n', '---\n', '...\n',
        '? ', '|', '>', '%YAML 1.1\n', '~', 'null', '1e999', '0x10', '.5', '-', '&b', '*b', ',', '\\', '\x00', '\xff']
def mutate(t):
    lines = t.split('\n')
    k = rng.randrange(9)
    if k == 0 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif k == 1:
        i = rng.randrange(len(lines)); lines.insert(i, lines[i])
    elif k == 2:
        return t[:rng.randrange(len(t))]
    elif k == 3:
        i = rng.randrange(len(t)); return t[:i] + rng.choice(JUNK) + t[i:]
    elif k == 4:
        i = rng.randrange(len(t)); return t[:i] + t[i + 1:]
    elif k == 5:
        i = rng.randrange(len(lines)); lines[i] = ' ' * rng.randrange(1, 4) + lines[i]
    elif k == 6:
        i = rng.randrange(len(t)); return t[:i] + chr(rng.randrange(32, 127)) + t[i + 1:]
    elif k == 7:  # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines)); lines[i], lines[j] = lines[j], lines[i]
    else:  # replace a number-ish token
        i = rng.randrange(len(t)); return t[:i] + rng.choice(['-1', '0', 'x', '1e9', '[1, 2]', '{a: 1}', '""']) + t[i + 2:]
    return '\n'.join(lines)
def run(binary, path, tag):
    h5 = f'{out}/{tag}.h5'
    if os.path.exists(h5): os.remove(h5)
    try:
        p = subprocess.run([binary, 'run', path, '--t-end', '1e-3', '-q', '-o', h5], capture_output=True, timeout=60)
        rc, err = p.returncode, p.stderr.decode('utf-8', 'replace').replace(h5, 'OUT')
    except subprocess.TimeoutExpired:
        return ('timeout',)
    sha = None
    if rc == 0 and os.path.exists(h5):
        with h5py.File(h5, 'r') as f:
            sha = (f.attrs.get('model_sha256'), f.attrs.get('model_physics_sha256'))
    try:
        p = subprocess.run([binary, 'run', path, '--t-end', '1e-3', '-q'], capture_output=True, timeout=60)
        plain = (p.returncode, p.stderr.decode('utf-8', 'replace'))
    except subprocess.TimeoutExpired:
        plain = ('timeout',)
    return (rc, err, sha, plain)
n = same = loads = 0
for m in models:
    t = open(m, encoding='utf-8', errors='surrogateescape').read()
    for v in range(nper):
        d = t
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            d = mutate(d)
        name = f'{os.path.basename(m)[:-5]}_{v}.yaml'
        path = f'{out}/{name}'
        with open(path, 'w', encoding='utf-8', errors='surrogateescape') as f: f.write(d)
        a, b = run(old, path, 'old'), run(new, path, 'new')
        n += 1
        if a == b:
            same += 1
            loads += a[0] == 0
        else:
            bad += 1
            print('DIFF', name, a, b, flush=True)
print(f'{n} variants, {same} identical (exit code, stderr, hashes), {loads} of them load and run, {n - same} differ')

# --set overrides
rng = random.Random(7)
SPECS = ['simulation.dt=2e-3', 'simulation.t_end=1e-3', 'simulation.tolerances.position=1e-8', 'simulation.tolerances=3',
         'gravity=1', 'gravity[0]=1', 'gravity[5]=1', 'bodies[0].mass=3', 'bodies[0].mass=-3', 'bodies[0].mass=abc',
         'bodies[0].new_key=1', 'bodies[zz].mass=1', 'bodies[0].joint.initial=0.1', 'bodies[0].joint=1',
         'hydraulics.fluid.density=900', 'hydraulics.fluid.model=constant', 'hydraulics.volumes[0].initial_pressure=1e6',
         'hydraulics.valves[0].flow_coefficient=2e-8', 'hydraulics=1', 'name=x', 'name', '=1', 'a..b=1', 'a[=1',
         'description=hello', 'format=2', 'format=1', 'sensors=[]', 'x.y.z=1', 'simulation.=1', 'bodies[0]=1',
         'hydraulics.cylinders[0].efficiency=0.5', 'simulation.formulation=penalty', 'ground.points.G9=[0,0,0]']
n = same = loads = 0
for m in models:
    for v in range(6):
        sets = rng.sample(SPECS, rng.choice([1, 1, 2, 3]))
        res = []
        for b, tag in ((old, 'old'), (new, 'new')):
            h5 = f'{out}/{tag}.h5'
            if os.path.exists(h5): os.remove(h5)
            args = [b, 'run', m, '--t-end', '1e-3', '-q', '-o', h5]
            for s in sets: args += ['--set', s]
            p = subprocess.run(args, capture_output=True, timeout=120)
            sha = None
            if p.returncode == 0:
                with h5py.File(h5, 'r') as f: sha = (f.attrs.get('model_sha256'), f.attrs.get('model_physics_sha256'))
            res.append((p.returncode, p.stderr.decode().replace(h5, 'OUT'), sha))
        n += 1
        if res[0] == res[1]:
            same += 1; loads += res[0][0] == 0
        else:
            bad += 1
            print('DIFF', m, sets, res, flush=True)
print(f'{n} override sets, {same} identical (exit code, stderr, hashes), {loads} load and run, {n - same} differ')
sys.exit(1 if bad else 0)
