#!/bin/sh
# A co-simulation judged against a reference holds memory bounded by the
# reference, not by its own rows: crane1 at H = 0.1 ms for 2 s and for
# 16 s (8x the rows) against the same 2 s reference, without an output
# file: peak RSS of the longer run within 1.2x of the shorter one's, and
# both compare the same reference span (vs reference line equal).  The
# comparison reads only the run rows that bracket reference times; the
# maximum |residual energy| it reports is still that of every row.
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
HYMO=$1; SRC=$(cd "$2" && pwd); B=$(cd "$3" && pwd); OUT=$B/cli_cosim_memory
rm -rf "$OUT"; mkdir -p "$OUT"
cd "$OUT" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml
"$HYMO" run "$M" --t-end 2 -q -o ref.h5 || fail "reference run"
peak() { # T_END: runs the co-simulation, prints its peak RSS in KB; summary in cosim_T.txt
    python3 - "$HYMO" "$M" "$1" <<'PY'
import resource, subprocess, sys
hymo, model, t = sys.argv[1:4]
with open("cosim_%s.txt" % t, "w") as out:
    rc = subprocess.call([hymo, "cosim", model, "--t-end", t, "--H", "1e-4", "--reference", "ref.h5"], stdout=out)
if rc != 0:
    sys.exit("cosim --t-end %s exited %d" % (t, rc))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}
short=$(peak 2) || fail "2 s co-simulation: $short"
long=$(peak 16) || fail "16 s co-simulation: $long"
echo "peak RSS: 2 s $short KB, 16 s $long KB"
[ "$long" -le $((short * 12 / 10)) ] || fail "the 16 s run's peak RSS $long KB exceeds 1.2 x the 2 s run's $short KB"
a=$(grep "^vs reference" cosim_2.txt); b=$(grep "^vs reference" cosim_16.txt)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "the runs compare different reference spans: '$a' / '$b'"
grep -q "^residual " cosim_16.txt || fail "no residual-energy line in the summary"
echo "ok: co-simulation memory bounded by the reference ($a)"
