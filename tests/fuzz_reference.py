#!/usr/bin/python3
"""Damaged reference files through `hymo info` and `hymo compare`.

Writes a reference file with `hymo run`, then N damaged variants of it and
runs each through `hymo info VARIANT` and `hymo compare BASE VARIANT` (odd
variants: `hymo compare VARIANT BASE`), each with a timeout.  Kinds of
damage (chosen by a seeded generator, so a run is reproducible):

  truncate   the file cut at a random length
  flip       1-16 random bytes changed (anywhere, or in the first 8 KiB
             where most metadata lives)
  resize     a dataset's row count changed with h5py (to 0, fewer rows,
             more rows, 1e8 rows)
  delattr    an attribute removed with h5py (root, group or dataset)
  setattr    an attribute rewritten with h5py: another value or type
  combo      resize or an attribute change, then byte flips

Outcome of each invocation:
  exit 0/1/2       hymo's own verdicts (ok / threshold / bad input)
  crash-hymo       a signal or sanitizer report whose innermost frame
                   outside the C runtime and the sanitizer is hymo's code
  crash-libhdf5    ... is inside libhdf5
  leak-hymo        LeakSanitizer report (exit 23), innermost frame in hymo
  leak-libhdf5     ... inside libhdf5 (it leaks on some damaged metadata)
  hang             no exit within the timeout, twice (the second time with
                   6x the timeout: a loaded machine is not a hang)

Run it with the ASan build to see memory errors (`cmake -DHYMO_SANITIZE=ON`);
ASAN_OPTIONS are set here (allocations above 2 GiB return NULL, so a
runaway allocation shows as hymo's "out of memory" exit 2, counted as
`oom`).  Exit status: 0 if there was no crash in hymo's code, no leak and
no hang (crashes inside libhdf5 are counted, not failed, with --allow-hdf5),
1 otherwise.

  tests/fuzz_reference.py --hymo build-asan/hymo --count 2000 --seed 1
"""
import argparse
import collections
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_base(hymo, work):
    base = os.path.join(work, "base.h5")
    subprocess.run([hymo, "run", os.path.join(ROOT, "data", "fourbar.yaml"), "--t-end", "1.3", "-o", base, "-q"],
                   check=True)
    return base


def h5_objects(f):
    objs = [f]
    f.visititems(lambda name, obj: objs.append(obj))
    return objs


def mutate_h5(path, rng, kind):
    import h5py
    import numpy as np

    with h5py.File(path, "r+") as f:
        objs = h5_objects(f)
        if kind == "resize":
            dsets = [o for o in objs if isinstance(o, h5py.Dataset) and o.maxshape and o.maxshape[0] is None]
            d = rng.choice(dsets)
            n = d.shape[0]
            rows = rng.choice([0, 1, rng.randrange(1, max(2, n)), n + 1, n + rng.randrange(1, 5000), 10**8])
            d.resize((rows,) + d.shape[1:])
            return "resize %s %d->%d" % (d.name, n, rows)
        withattrs = [o for o in objs if len(o.attrs) > 0]
        o = rng.choice(withattrs)
        name = rng.choice(list(o.attrs.keys()))
        if kind == "delattr":
            del o.attrs[name]
            return "delattr %s@%s" % (o.name, name)
        # setattr: another value or another type
        old = o.attrs[name]
        choice = rng.randrange(8)
        if choice == 0:
            new = np.int32(rng.choice([-1, 0, 2, 10**6, -(2**31)]))
        elif choice == 1:
            new = np.float64(rng.choice([float("nan"), float("inf"), -1.0, 0.0, 1e300]))
        elif choice == 2:
            new = "x" * rng.choice([0, 1, 64, 200, 70000])
        elif choice == 3:
            new = np.array([1.0, 2.0])
        elif choice == 4:
            new = np.array([b"a", b"bb", b"ccc"])
        elif choice == 5:
            new = np.int64(rng.choice([-5, 0, 10**12]))
        elif choice == 6:
            new = np.array([], dtype="S1")
        else:
            new = h5py.Empty("f8")
        try:
            del o.attrs[name]
            o.attrs[name] = new
        except Exception:  # noqa: BLE001 - some combinations cannot be written
            o.attrs[name] = old
        return "setattr %s@%s (%s)" % (o.name, name, type(new).__name__)


def flip(path, rng, head_only):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        data = bytearray(f.read())
        k = rng.randrange(1, 17)
        where = []
        for _ in range(k):
            pos = rng.randrange(0, min(size, 8192) if head_only else size)
            data[pos] ^= rng.randrange(1, 256)
            where.append(pos)
        f.seek(0)
        f.write(data)
    return "flip %d bytes%s" % (k, " in the first 8 KiB" if head_only else "")


def make_variant(base, path, rng):
    shutil.copy(base, path)
    kind = rng.choice(["truncate", "flip", "flip", "resize", "delattr", "setattr", "setattr", "combo"])
    if kind == "truncate":
        size = os.path.getsize(path)
        cut = rng.randrange(0, size)
        with open(path, "r+b") as f:
            f.truncate(cut)
        return kind, "truncate to %d of %d bytes" % (cut, size)
    if kind == "flip":
        return kind, flip(path, rng, rng.random() < 0.5)
    if kind in ("resize", "delattr", "setattr"):
        return kind, mutate_h5(path, rng, kind)
    what = mutate_h5(path, rng, rng.choice(["resize", "delattr", "setattr"]))
    return kind, what + "; " + flip(path, rng, rng.random() < 0.5)


FRAME = re.compile(r"^\s*#(\d+) 0x[0-9a-f]+ in (\S+) (.*)$|^\s*#(\d+) 0x[0-9a-f]+\s+\((.*)\)$")
RUNTIME = ("libasan", "libubsan", "libc.so", "libc-", "libpthread", "ld-linux", "compiler-rt", "sanitizer")


def classify(proc_rc, stderr, timed_out):
    if timed_out:
        return "hang", ""
    if "ERROR: LeakSanitizer" in stderr and "ERROR: AddressSanitizer" not in stderr and "runtime error:" not in stderr:
        frames = first_frames(stderr)
        return ("leak-libhdf5" if "libhdf5" in frames.split("|")[0] else "leak-hymo"), frames
    sanitizer = "ERROR: AddressSanitizer" in stderr or "runtime error:" in stderr
    if proc_rc in (0, 1, 2) and not sanitizer:
        if proc_rc == 2 and "out of memory" in stderr:
            return "oom", ""
        return "exit%d" % proc_rc, ""
    # a crash: where?
    frames = first_frames(stderr)
    where = "libhdf5" if "libhdf5" in frames.split("|")[0] else "hymo"
    return "crash-" + where, frames


def first_frames(stderr):
    out = []
    for line in stderr.splitlines():
        m = FRAME.match(line)
        if not m:
            continue
        text = line.strip()
        if any(r in text for r in RUNTIME):
            continue
        text = re.sub(r"^#\d+ 0x[0-9a-f]+\s+", "", text)  # no addresses: the same place groups
        out.append(text[3:] if text.startswith("in ") else text)
        if len(out) >= 3:
            break
    return "|".join(out)


def run_one(cmd, timeout, env):
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout, env=env)
        return p.returncode, p.stderr.decode("utf-8", "replace"), False
    except subprocess.TimeoutExpired as e:
        return None, (e.stderr or b"").decode("utf-8", "replace"), True


def job(args, base, work, i, seed):
    rng = random.Random(seed * 1000003 + i)
    path = os.path.join(work, "v%05d.h5" % i)
    try:
        kind, what = make_variant(base, path, rng)
    except Exception as e:  # noqa: BLE001 - h5py could not open or change it: flip instead
        shutil.copy(base, path)
        kind, what = "flip", "fallback (%s): " % type(e).__name__ + flip(path, rng, False)
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = "detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=2048:abort_on_error=0"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    results = []
    cmds = [[args.hymo, "info", path],
            [args.hymo, "compare", base, path] if i % 2 == 0 else [args.hymo, "compare", path, base]]
    for cmd in cmds:
        t0 = time.monotonic()
        rc, err, hung = run_one(cmd, args.timeout, env)
        if hung:  # a loaded machine or a real hang: once more, with 6x the time
            rc, err, hung = run_one(cmd, 6 * args.timeout, env)
            if not hung:
                err += "\n(fuzz: exceeded %g s once, then finished)" % args.timeout
        cls, frames = classify(rc, err, hung)
        results.append((cmd[1], cls, frames, time.monotonic() - t0, err))
    bad = [r for r in results if r[1].startswith("crash") or r[1] in ("hang", "leak-hymo")]
    if bad and args.keep:
        os.makedirs(os.path.join(args.keep), exist_ok=True)
        keep = os.path.join(args.keep, "v%05d-%s.h5" % (i, bad[0][1]))
        shutil.copy(path, keep)
        with open(keep + ".txt", "w") as f:
            f.write("%s: %s\n" % (kind, what))
            for r in results:
                f.write("== %s: %s %s\n%s\n" % (r[0], r[1], r[2], r[4][-6000:]))
    os.remove(path)
    return i, kind, what, [(r[0], r[1], r[2], r[3]) for r in results]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hymo", default=os.path.join(ROOT, "build-asan", "hymo"))
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--base", default=None, help="damage this file instead of a new fourbar run (e.g. one "
                    "written by an older hymo, with variable-length string attributes)")
    ap.add_argument("--keep", default=None, help="directory for the variants that crash, leak or hang")
    ap.add_argument("--allow-hdf5", action="store_true", help="crashes inside libhdf5 do not fail")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="hymo-fuzz-")
    try:
        if args.base:
            base = os.path.join(work, "base.h5")
            shutil.copy(args.base, base)
        else:
            base = make_base(args.hymo, work)
        counts = collections.Counter()
        per_kind = collections.defaultdict(collections.Counter)
        where = collections.Counter()
        slowest = 0.0
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
            futs = [ex.submit(job, args, base, work, i, args.seed) for i in range(args.count)]
            done = 0
            for fu in concurrent.futures.as_completed(futs):
                i, kind, what, results = fu.result()
                done += 1
                if done % 100 == 0:
                    print("progress %d/%d after %.0f s: %s" % (done, args.count, time.monotonic() - t0,
                          ", ".join("%s %s %d" % (c, k, n) for (c, k), n in sorted(counts.items()))), flush=True)
                for cmd, cls, frames, dt, in results:
                    counts[(cmd, cls)] += 1
                    per_kind[kind][cls] += 1
                    slowest = max(slowest, dt)
                    if cls.startswith("crash") or cls in ("hang", "leak-hymo", "leak-libhdf5"):
                        where[(cls, frames)] += 1
                        print("variant %d (%s: %s): %s %s %s" % (i, kind, what, cmd, cls, frames), flush=True)
                    elif args.verbose:
                        print("variant %d (%s: %s): %s %s" % (i, kind, what, cmd, cls))
        wall = time.monotonic() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)

    classes = ["exit0", "exit1", "exit2", "oom", "crash-hymo", "crash-libhdf5", "leak-hymo", "leak-libhdf5", "hang"]
    print("\n%d variants (seed %d), %s, timeout %g s, %.0f s wall, slowest invocation %.2f s"
          % (args.count, args.seed, args.hymo, args.timeout, wall, slowest))
    print("%-8s %s" % ("", " ".join("%12s" % c for c in classes)))
    for cmd in ("info", "compare"):
        print("%-8s %s" % (cmd, " ".join("%12d" % counts[(cmd, c)] for c in classes)))
    print("\nper kind of damage (both commands):")
    for kind in sorted(per_kind):
        print("  %-9s %s" % (kind, ", ".join("%s %d" % (c, per_kind[kind][c]) for c in classes if per_kind[kind][c])))
    if where:
        print("\ncrashes, leaks, hangs by place:")
        for (cls, frames), n in where.most_common():
            print("  %4d %s %s" % (n, cls, frames))
    bad = sum(counts[(c, k)] for c in ("info", "compare") for k in ("crash-hymo", "leak-hymo", "hang"))
    hdf5 = sum(counts[(c, "crash-libhdf5")] for c in ("info", "compare"))
    if bad or (hdf5 and not args.allow_hdf5):
        print("\nFAIL: %d crashes or leaks in hymo's code or hangs; %d crashes inside libhdf5" % (bad, hdf5))
        return 1
    print("\nOK: no crash or leak in hymo's code, no hang; %d crashes inside libhdf5" % hdf5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
