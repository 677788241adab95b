#!/bin/sh
# Output of `hymo run -o` (docs/hdf5-format.md):
#  1. --output-interval S: the same rows as --output-every S/dt, recorded
#     (root attributes output_every, output_interval; `hymo info`); an
#     interval that is not a multiple of dt, zero, or given with
#     --output-every exits 2 with one line and writes no file;
#  2. the summaries (peak drift, constraint maxima, iterations, pressure
#     range, events, error estimate) are computed over every step: equal
#     with and without decimation, larger than the maxima of the stored rows;
#  3. --output-every 100 gives a file <= 1/50 of the full one;
#  4. a file being written is readable: `hymo info OUT.h5.XXXXXX.partial`
#     says RUNNING with the current time and rows, then the run finishes
#     normally; a killed writer's file says INTERRUPTED.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_output
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
FB=$SRC/data/fourbar.yaml
CR=$SRC/data/crane1.yaml
have_h5py=0
"$PY" -c "import h5py, numpy" 2>/dev/null && have_h5py=1

# 1. --output-interval
"$HYMO" run "$FB" -q --output-every 7 -o "$OUT/every7.h5" || fail "--output-every 7 exited $?"
"$HYMO" run "$FB" --output-interval 0.007 -o "$OUT/int7.h5" > "$OUT/int7.out" 2>&1 || fail "--output-interval 0.007 exited $?: $(cat "$OUT/int7.out")"
grep -q "output .*int7.h5 (1430 rows: every 7 steps = 0.007 s, and the last)" "$OUT/int7.out" || fail "run summary: $(cat "$OUT/int7.out")"
h5dump -a /output_every "$OUT/int7.h5" | grep -q "(0): 7$" || fail "root attribute output_every"
h5dump -a /output_interval "$OUT/int7.h5" | grep -q "(0): 0.007$" || fail "root attribute output_interval: $(h5dump -a /output_interval "$OUT/int7.h5")"
"$HYMO" info "$OUT/int7.h5" > "$OUT/info7.out" 2>&1 || fail "info exited $?"
grep -q "^rows  *1430 (every 7 steps = 0.007 s, and the last)" "$OUT/info7.out" || fail "info: $(cat "$OUT/info7.out")"
"$HYMO" compare "$OUT/every7.h5" "$OUT/int7.h5" --max-abs z=1e-300 > "$OUT/cmp7.out" 2>&1 || fail "interval and every differ: $(cat "$OUT/cmp7.out")"
for bad in "--output-interval 0.0075" "--output-interval 0" "--output-interval -1e-3" "--output-interval abc" \
           "--output-interval 1e-4" "--output-interval 0.007 --output-every 7"; do
    # shellcheck disable=SC2086
    "$HYMO" run "$FB" $bad -o "$OUT/bad.h5" > "$OUT/bad.out" 2> "$OUT/bad.err"
    code=$?
    [ $code -eq 2 ] || fail "'$bad' exited $code (expected 2)"
    [ "$(wc -l < "$OUT/bad.err")" -eq 1 ] || fail "'$bad': not one line: $(cat "$OUT/bad.err")"
    [ -s "$OUT/bad.out" ] && fail "'$bad' printed a summary"
    ls "$OUT"/bad.h5* > /dev/null 2>&1 && fail "'$bad' left a file"
done
"$HYMO" run "$FB" --output-interval 0.0075 -o "$OUT/bad.h5" 2>&1 | grep -q "not a whole multiple of dt = 0.001" \
    || fail "message for 0.0075 s"

# 2. summaries over every step, not over the stored rows
"$HYMO" run "$FB" -q -o "$OUT/fb_full.h5" || fail "fourbar full exited $?"
"$HYMO" run "$CR" -q -o "$OUT/cr_full.h5" || fail "crane1 full exited $?"
"$HYMO" run "$CR" -q --output-interval 0.1 -o "$OUT/cr_dec.h5" || fail "crane1 --output-interval 0.1 exited $?"
if [ $have_h5py -eq 1 ]; then
    "$PY" - "$OUT" > "$OUT/summary.out" 2>&1 <<'EOF' || fail "summaries: $(cat "$OUT/summary.out")"
import sys, h5py, numpy as np
out = sys.argv[1]
def attrs(f):
    a = {}
    for g in ("solver", "energy", "constraints", "states", "accuracy"):
        if g in f:
            for k, v in f[g].attrs.items():
                if not k.startswith("wall"):
                    a[g + "/" + k] = v
    return a
for full, dec in (("fb_full", "every7"), ("cr_full", "cr_dec")):
    f, d = h5py.File("%s/%s.h5" % (out, full), "r"), h5py.File("%s/%s.h5" % (out, dec), "r")
    a, b = attrs(f), attrs(d)
    assert len(a) >= 20 and a.keys() == b.keys(), (full, sorted(a), sorted(b))
    for k in a:
        assert np.array_equal(a[k], b[k]), (full, k, a[k], b[k])
    assert len(d["time"]) < len(f["time"]) // 6, (len(d["time"]), len(f["time"]))
# the stored rows alone give smaller maxima: the summary covers every step
d = h5py.File(out + "/every7.h5", "r")
rows_phi = np.linalg.norm(d["constraints/position"][:], axis=1).max()
rows_drift = np.abs(d["energy/drift"][:]).max()
assert rows_phi < d["constraints"].attrs["max_position"], rows_phi
assert rows_drift < d["energy"].attrs["peak_drift"], rows_drift
d = h5py.File(out + "/cr_dec.h5", "r")
assert d["solver"].attrs["n_events"] == 4, d["solver"].attrs["n_events"]
assert d["solver/iterations"][:].max() < d["solver"].attrs["max_iterations"]
assert d["states/p"][:].min() > d["states"].attrs["p_min"]
print("ok")
EOF
else
    echo "SKIP part 2: no h5py for $PY"
fi
"$HYMO" info "$OUT/cr_dec.h5" | grep -q "events       4 located" || fail "info of the decimated crane1: events"

# 3. --output-every 100: at most 1/50 of the full file (fast Jacobian: 3x quicker under ASan)
"$HYMO" run "$CR" -q --dt 1e-4 --t-end 10 --jacobian fast -o "$OUT/size_full.h5" || fail "size full exited $?"
"$HYMO" run "$CR" -q --dt 1e-4 --t-end 10 --jacobian fast --output-every 100 -o "$OUT/size_100.h5" || fail "size every 100 exited $?"
full=$(wc -c < "$OUT/size_full.h5"); dec=$(wc -c < "$OUT/size_100.h5")
[ $((dec * 50)) -le "$full" ] || fail "--output-every 100: $dec bytes, full $full bytes (more than 1/50)"
echo "file sizes: full $full bytes, --output-every 100 $dec bytes"

# 4. a file being written: `hymo info` on the .partial while the run goes on.
# The run must last long enough to be seen; on a fast machine the first
# attempt may finish before `hymo info` caught it: then a 4x longer one.
live_run() { # $1 t_end; sets seen (1 if RUNNING was read), leaves $OUT/live.h5
    rm -f "$OUT"/live.h5*
    "$HYMO" run "$CR" -q --dt 1e-5 --t-end "$1" -o "$OUT/live.h5" > "$OUT/live.out" 2>&1 &
    pid=$!
    seen=0; last_t=0; swmr_seen=0
    while kill -0 $pid 2>/dev/null; do
        for p in "$OUT"/live.h5.*.partial; do
            [ -f "$p" ] || continue
            "$HYMO" info "$p" > "$OUT/info_live.out" 2>&1 || continue # e.g. renamed meanwhile
            line=$(grep "^status .*RUNNING" "$OUT/info_live.out") || continue
            # "status RUNNING (...): t = T s of 2 s so far, N rows": rows = T/dt + 1
            t=$(echo "$line" | sed 's/.*: t = \([^ ]*\) s of.*/\1/')
            n=$(echo "$line" | sed 's/.* so far, \([0-9]*\) rows/\1/')
            # (0 rows at t = 0: caught between the file's creation and its first row, seen under load)
            awk -v t="$t" -v n="$n" 'BEGIN { exit !((n == 0 && t == 0) || (n >= 1 && (n - 1) * 1e-5 - t < 1e-6 && t - (n - 1) * 1e-5 < 1e-6)) }' \
                || fail "running file: t = $t s with $n rows: $line"
            awk -v t="$t" -v l="$last_t" 'BEGIN { exit !(t >= l) }' || fail "time went back: $last_t -> $t"
            last_t=$t; seen=$((seen + 1))
            # written in HDF5's SWMR mode: superblock (v3) byte 11, flag 0x04
            # (not in the last moments: the close leaves that mode)
            flags=$(od -An -tu1 -j11 -N1 "$p" 2>/dev/null | tr -d ' ')
            [ -n "$flags" ] && [ $((flags & 4)) -eq 4 ] && swmr_seen=$((swmr_seen + 1))
        done
        sleep 0.1
    done
    wait $pid || fail "the live run exited $?: $(cat "$OUT/live.out")"
}
tries=0; t_end=1
while :; do
    live_run $t_end
    [ $swmr_seen -ge 1 ] && break
    tries=$((tries + 1))
    [ $tries -ge 3 ] && fail "the running file: seen $seen times, $swmr_seen of them in SWMR-write mode (t_end up to $t_end s)"
    t_end=$((t_end * 4))
done
echo "saw the running file $seen times (last t = $last_t s), $swmr_seen in SWMR-write mode"
ls "$OUT"/live.h5.*.partial > /dev/null 2>&1 && fail "a .partial file is left after the run"
"$HYMO" info "$OUT/live.h5" > "$OUT/info_done.out" 2>&1 || fail "info of the finished file: $(cat "$OUT/info_done.out")"
grep -q "steps, complete" "$OUT/info_done.out" || fail "finished file: $(cat "$OUT/info_done.out")"
grep -q "^status" "$OUT/info_done.out" && fail "finished file has a status line: $(cat "$OUT/info_done.out")"

# a killed writer: the file stays readable and says INTERRUPTED
rm -f "$OUT"/kill.h5*
"$HYMO" run "$CR" -q --dt 1e-5 --t-end 30 -o "$OUT/kill.h5" > /dev/null 2>&1 &
pid=$!
i=0; got=0
while [ $i -lt 600 ] && [ $got -eq 0 ]; do
    for p in "$OUT"/kill.h5.*.partial; do
        [ -f "$p" ] && "$HYMO" info "$p" 2>/dev/null | grep -q "^status .*RUNNING.*, [1-9][0-9]* rows" && got=1
    done
    i=$((i + 1)); sleep 0.1
done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
[ $got -eq 1 ] || fail "never saw the file of the run to be killed"
p=$(ls "$OUT"/kill.h5.*.partial) || fail "no .partial after kill -9"
"$HYMO" info "$p" > "$OUT/info_kill.out" 2>&1 || fail "info of a killed run's file exited $?: $(cat "$OUT/info_kill.out")"
grep -q "^status .*INTERRUPTED" "$OUT/info_kill.out" || fail "killed run: $(cat "$OUT/info_kill.out")"
rm -f "$OUT"/kill.h5*
echo "cli_output: ok"
