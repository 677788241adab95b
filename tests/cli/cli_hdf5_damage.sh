#!/bin/sh
# Damaged and unfinished reference files (docs/hdf5-format.md, "Data
# checksums", "Reading a file while it is written", "Errors when reading"):
#  1. a complete file with the SWMR "being written" flag set (superblock
#     byte 11, bit 0x04; its checksum then fails): `hymo info` and
#     `hymo compare` exit 2 with one line in < 2 s;
#  2. a killed run's .partial file: read (INTERRUPTED, exit 0) by `hymo
#     info`, hymo.read(), plain h5py as documented (swmr=True) and
#     scripts/plot_run.py and plot_compare.py; with one byte flipped in its metadata or in a
#     stored chunk: `hymo info` exits 2 with one line in < 2 s;
#  3. the read budget: HYMO_READ_TIMEOUT=1e-6 refuses with one line;
#  4. 200 random one-byte changes to the stored chunks of a complete
#     file: every one is reported damaged by `hymo info` (exit 2, "damaged")
#     and fails `hymo compare` (exit 2); every change inside a chunk's
#     values changes a value (counted), the others hit its checksum;
#  5. a file whose data_checksum attribute is kept but whose datasets lost
#     their filter is refused; without the attribute (an older file) it is
#     read, and `hymo info` says "no checksums";
#  6. an old-format file (superblock version 0, variable-length string
#     attributes in the global heap) is read; with a damaged global heap
#     collection it is refused before libhdf5 reads the heap;
#  7. the memory budget: a file whose deflated datasets declare more values
#     than 64 bytes per byte of the file + 256 MiB is refused before any
#     is allocated.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_hdf5_damage
rm -rf "$OUT"; mkdir -p "$OUT"
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
"$PY" -c "import h5py, numpy" 2>/dev/null || fail "needs /usr/bin/python3 with h5py and numpy"
CR=$SRC/data/crane1.yaml

# ---- a complete file and a killed run's partial file
"$HYMO" run "$CR" --t-end 1 -q -o "$OUT/full.h5" || fail "run exited $?"
"$HYMO" info "$OUT/full.h5" > "$OUT/full.info" || fail "info of the complete file exited $?"
grep -q "^data  *every stored value matches its checksum (Fletcher32)" "$OUT/full.info" || fail "info: $(cat "$OUT/full.info")"
"$HYMO" run "$CR" --dt 1e-5 --t-end 30 -q -o "$OUT/killed.h5" &
pid=$!
i=0
while [ $i -lt 200 ]; do
    P=$(ls "$OUT"/killed.h5.*.partial 2>/dev/null | head -1)
    if [ -n "$P" ] && "$HYMO" info "$P" 2>/dev/null | grep -q "^rows  *[1-9][0-9][0-9][0-9][0-9]"; then break; fi
    sleep 0.1; i=$((i + 1))
done
kill -9 $pid; wait $pid 2>/dev/null
P=$(ls "$OUT"/killed.h5.*.partial 2>/dev/null | head -1)
[ -n "$P" ] || fail "no partial file of the killed run"
mv "$P" "$OUT/partial.h5"

"$PY" - "$HYMO" "$OUT" "$SRC" <<'EOF' || exit 1
import os, random, shutil, subprocess, sys, time
import h5py, numpy as np
hymo, out, src = sys.argv[1:4]
full, partial = os.path.join(out, "full.h5"), os.path.join(out, "partial.h5")

def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)

def run(args, env=None, timeout=30):
    # under ASan: what libhdf5 itself loses on a damaged file is not hymo's leak (tests/fuzz/lsan.supp)
    env = dict(env or os.environ)
    env.setdefault("LSAN_OPTIONS", "print_suppressions=0:suppressions=" + os.path.join(src, "tests", "fuzz", "lsan.supp"))
    t0 = time.time()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        fail("%s: no answer in %d s" % (" ".join(args), timeout))
    return p, time.time() - t0

def refused(args, what, limit=2.0, word=None, env=None):
    """exit 2, one line on stderr, within `limit` s"""
    p, dt = run(args, env)
    lines = p.stderr.strip().splitlines()
    if p.returncode != 2 or len(lines) != 1 or dt > limit or (word and word not in p.stderr):
        fail("%s: exit %d in %.2f s, stderr %r (want exit 2, one line%s, < %g s)"
             % (what, p.returncode, dt, p.stderr, " with '%s'" % word if word else "", limit))
    return dt

def flip(src_path, dst, off, rng):
    shutil.copy(src_path, dst)
    with open(dst, "r+b") as f:
        f.seek(off)
        b = f.read(1)[0]
        f.seek(off)
        f.write(bytes([b ^ rng.randrange(1, 256)]))

rng = random.Random(26)

# 1. the SWMR flag set in a complete file
flag = os.path.join(out, "flag.h5")
shutil.copy(full, flag)
with open(flag, "r+b") as f:
    f.seek(11); b = f.read(1)[0]; f.seek(11); f.write(bytes([b | 0x04]))
dt1 = refused([hymo, "info", flag], "info of the flagged file", word="superblock")
refused([hymo, "compare", full, flag], "compare with the flagged file")
print("1. SWMR flag in a complete file: info exit 2 in %.3f s" % dt1)

# 2. the killed run's partial file: readable by every documented tool
p, _ = run([hymo, "info", partial])
if p.returncode != 0 or "INTERRUPTED" not in p.stdout:
    fail("info of the partial file: exit %d %s %s" % (p.returncode, p.stdout, p.stderr))
with open(partial, "rb") as f:
    if not f.read(12)[11] & 0x04:
        fail("the partial file is not flagged 'being written'")
try:
    h5py.File(partial, "r").close()
    plain = "opens"
except OSError as e:
    plain = "refused (%s)" % str(e).split("(")[0].strip()
with h5py.File(partial, "r", swmr=True) as f:  # as docs/python.md says
    n = f["time"].shape[0]
    z = f["states/z"][:n]
    if n < 10000 or z.shape[0] != n:
        fail("h5py swmr=True: %d rows" % n)
env = dict(os.environ, HYMO_LIB=os.path.join(os.path.dirname(hymo), "libhymo.so"),
           PYTHONPATH=os.path.join(src, "python"))
# a sanitized libhymo.so in an uninstrumented interpreter: its ASan runtime preloaded (as ctest's py_package)
ldd = subprocess.run(["ldd", env["HYMO_LIB"]], stdout=subprocess.PIPE, text=True).stdout
asan = [ln.split("=>")[1].split()[0] for ln in ldd.splitlines() if "libasan" in ln and "=>" in ln]
if asan:
    env.update(LD_PRELOAD=asan[0], ASAN_OPTIONS="detect_leaks=0")
code = ("import hymo, sys; d = hymo.read(sys.argv[1]); n = len(d['time']); "
        "assert n > 10000 and all(v.shape[0] == n for k, v in d.items() "
        "if k not in ('attrs', 'names', 'units')), n; print(n)")
p, _ = run([sys.executable, "-c", code, partial], env)
if p.returncode != 0:
    fail("hymo.read of the partial file: %s" % p.stderr)
rows_read = p.stdout.strip()
png = os.path.join(out, "partial.png")
p, _ = run([sys.executable, os.path.join(src, "scripts", "plot_run.py"), partial, "-o", png], timeout=120)
if p.returncode != 0 or not os.path.getsize(png):
    fail("plot_run.py of the partial file: %s" % p.stderr)
png2 = os.path.join(out, "partial_cmp.png")
p, _ = run([sys.executable, os.path.join(src, "scripts", "plot_compare.py"), full, partial, "-o", png2], timeout=120)
if p.returncode != 0 or not os.path.getsize(png2):
    fail("plot_compare.py with the partial file: %s" % p.stderr)
print("2. partial file (%d rows): hymo info, hymo.read() (%s rows), h5py swmr=True, plot_run.py, plot_compare.py read it; "
      "plain h5py.File(path, 'r') %s" % (n, rows_read, plain))
# ... and damaged: one byte in its metadata (the first 4 KiB after the
# superblock), one in a stored chunk
with h5py.File(full, "r") as f:
    ds = f["states/z"]
    ci = ds.id.get_chunk_info(0)
worst = 0.0
bad = os.path.join(out, "partial_bad.h5")
for k in range(6):
    off = rng.randrange(48, 4096)
    flip(partial, bad, off, rng)
    p, dt = run([hymo, "info", bad])
    worst = max(worst, dt)
    if p.returncode not in (0, 2) or dt > 2 or (p.returncode == 2 and len(p.stderr.strip().splitlines()) != 1):
        fail("partial file, byte %d flipped: exit %d in %.2f s: %r" % (off, p.returncode, dt, p.stderr))
with h5py.File(partial, "r", swmr=True) as f:
    ci = f["states/z"].id.get_chunk_info(0)
flip(partial, bad, ci.byte_offset + 100, rng)
dt2 = refused([hymo, "info", bad], "info of the partial file with a damaged chunk", word="damaged")
worst = max(worst, dt2)
for code in ("import hymo, sys; hymo.read(sys.argv[1])",):
    p, _ = run([sys.executable, "-c", code, bad], env)
    if p.returncode == 0 or "damaged" not in p.stderr:
        fail("hymo.read of the partial file with a damaged chunk: %d %s" % (p.returncode, p.stderr))
print("   partial file with one flipped byte: hymo info answers in <= %.3f s" % worst)

# 3. the read budget
refused([hymo, "info", partial], "read budget", word="took more than", env=dict(os.environ, HYMO_READ_TIMEOUT="1e-6"))
refused([hymo, "compare", full, partial], "read budget (compare)", word="took more than",
        env=dict(os.environ, HYMO_READ_TIMEOUT="1e-6"))
print("3. HYMO_READ_TIMEOUT=1e-6: info and compare refuse with one line")

# 4. 200 one-byte changes in the stored chunks of the complete file
chunks = []  # (offset, size) of every stored chunk; the last 4 bytes: Fletcher32
with h5py.File(full, "r") as f:
    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.chunks:
            if not obj.fletcher32:
                fail("dataset /%s has no Fletcher32 filter" % name)
            for i in range(obj.id.get_num_chunks()):
                c = obj.id.get_chunk_info(i)
                chunks.append((c.byte_offset, c.size, name))
    f.visititems(visit)
total = sum(s for _, s, _ in chunks)
n_value = n_sum = n_info = n_cmp = 0
var = os.path.join(out, "var.h5")
for k in range(200):
    pick = rng.randrange(total)
    for off0, size, name in chunks:
        if pick < size:
            break
        pick -= size
    flip(full, var, off0 + pick, rng)
    if pick < size - 4:
        n_value += 1
    else:
        n_sum += 1
    p, _ = run([hymo, "info", var])
    if p.returncode == 2 and "damaged" in p.stderr and len(p.stderr.strip().splitlines()) == 1:
        n_info += 1
    else:
        fail("change %d (/%s, byte %d of its chunk): info exit %d: %r" % (k, name, pick, p.returncode, p.stderr))
    p, _ = run([hymo, "compare", full, var] if k % 2 == 0 else [hymo, "compare", var, full])
    if p.returncode == 2:
        n_cmp += 1
    else:
        fail("change %d (/%s, byte %d of its chunk): compare exit %d: %r" % (k, name, pick, p.returncode, p.stderr))
print("4. 200 one-byte changes in %d stored chunks (%d bytes): %d changed a value, %d a checksum; "
      "info reported %d damaged, compare exited 2 on %d" % (len(chunks), total, n_value, n_sum, n_info, n_cmp))

# 5. checksums removed
def rewrite(dst, filters, keep_attr):
    with h5py.File(full, "r") as a, h5py.File(dst, "w", libver="latest") as b:
        for k, v in a.attrs.items():
            if k != "data_checksum" or keep_attr:
                b.attrs[k] = v
        def copy(name, obj):
            if isinstance(obj, h5py.Group):
                g = b.require_group(name)
                for k, v in obj.attrs.items():
                    g.attrs[k] = v
            else:
                d = b.create_dataset(name, data=obj[()], chunks=obj.chunks, maxshape=obj.maxshape,
                                     fletcher32=filters)
                for k, v in obj.attrs.items():
                    d.attrs[k] = v
        a.visititems(copy)
stripped = os.path.join(out, "stripped.h5")
rewrite(stripped, False, True)
refused([hymo, "info", stripped], "a file declaring checksums without them", word="no data checksum")
older = os.path.join(out, "older.h5")
rewrite(older, False, False)
p, _ = run([hymo, "info", older])
if p.returncode != 0 or "no checksums" not in p.stdout:
    fail("info of a file without checksums: %d %s %s" % (p.returncode, p.stdout, p.stderr))
print("5. filters stripped: refused while data_checksum is declared; read (\"no checksums\") without it")

# 6. an old-format file: superblock version 0, variable-length strings
old = os.path.join(out, "old.h5")
with h5py.File(full, "r") as a, h5py.File(old, "w", libver="earliest") as b:
    vstr = h5py.string_dtype()
    def conv(v):
        if isinstance(v, bytes):
            return np.array(v.decode(), dtype=vstr)
        if isinstance(v, np.ndarray) and v.dtype.kind == "S":
            return np.array([s.decode() for s in v], dtype=vstr)
        return v
    for k, v in a.attrs.items():
        if k != "data_checksum":
            b.attrs.create(k, conv(v))
    def copy(name, obj):
        if isinstance(obj, h5py.Group):
            g = b.require_group(name)
            for k, v in obj.attrs.items():
                g.attrs.create(k, conv(v))
        else:
            d = b.create_dataset(name, data=obj[()], chunks=obj.chunks, maxshape=obj.maxshape)
            for k, v in obj.attrs.items():
                d.attrs.create(k, conv(v))
    a.visititems(copy)
with open(old, "rb") as f:
    data = f.read()
if data[8] != 0 or data.find(b"GCOL") < 0:
    fail("the old-format file has superblock version %d, %d global heaps" % (data[8], data.count(b"GCOL")))
p, _ = run([hymo, "info", old])
if p.returncode != 0 or "no checksums" not in p.stdout:
    fail("info of the old-format file: %d %s %s" % (p.returncode, p.stdout, p.stderr))
heaps = [i for i in range(len(data)) if data.startswith(b"GCOL", i)]
oldbad = os.path.join(out, "old_bad.h5")
n_refused = 0
# the collection's size; the size of its first object (5000 bytes, 2^33
# bytes) and of the object after it (100000 bytes): without the check,
# libhdf5 1.10.8 aborted ("double free or corruption"), hung, or crashed
# (SIGSEGV) on these
for h in heaps:
    second = 16 + 16 + ((int.from_bytes(data[h + 24:h + 32], "little") + 7) & ~7)  # the second object
    for where, size in ((8, 1 << 39), (16 + 8, 5000), (16 + 8, 1 << 33), (second + 8, 100000)):
        shutil.copy(old, oldbad)
        with open(oldbad, "r+b") as f:
            f.seek(h + where); f.write(size.to_bytes(8, "little"))
        refused([hymo, "info", oldbad], "old-format file, global heap at %d: size at +%d set to %d" % (h, where, size),
                word="global heap")
        n_refused += 1
print("6. old-format file (superblock 0, %d global heap collections) read; %d damaged heap sizes refused "
      "before libhdf5 read them" % (len(heaps), n_refused))

# 7. the memory budget: every per-step dataset deflated, 4 million rows
# of zeros (about 1000:1 each, within the per-dataset limit of 2048:1),
# together far more values than 64 bytes per byte of the file + 256 MiB
big = os.path.join(out, "big.h5")
R = 4000000
with h5py.File(full, "r") as a, h5py.File(big, "w", libver="latest") as b:
    for k, v in a.attrs.items():
        b.attrs[k] = v
    b.attrs["complete"] = np.int32(0)
    def copy(name, obj):
        if isinstance(obj, h5py.Group):
            b.require_group(name)
        elif obj.shape and obj.shape[0] == a["time"].shape[0]:
            cols = obj.shape[1:]
            d = b.create_dataset(name, shape=(R,) + cols, dtype=obj.dtype, chunks=(65536,) + tuple(max(c, 1) for c in cols),
                                 maxshape=(None,) + tuple(None for _ in cols), compression="gzip",
                                 compression_opts=1, fletcher32=True)
            if np.prod(cols) > 0:
                z = np.zeros((65536,) + cols, obj.dtype)
                for r0 in range(0, R, 65536):
                    d[r0:r0 + 65536] = z[:min(65536, R - r0)]
            for k, v in obj.attrs.items():
                d.attrs[k] = v
    a.visititems(copy)
refused([hymo, "info", big], "a file beyond the memory budget", word="values, beyond the reader's budget")
dt7 = refused([hymo, "compare", full, big], "compare with a file beyond the memory budget", word="budget")
print("7. %d rows of deflated zeros in a %d-byte file: refused by the memory budget (%.3f s)" % (R, os.path.getsize(big), dt7))
EOF
echo "cli_hdf5_damage: OK"
