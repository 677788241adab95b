#!/bin/sh
# hymo sweep --skip-failed: the runs of a configuration past its first
# failed H are not made, the achievable-H table is the same as the full
# sweep's, every run made has the full sweep's row (wall time aside), every
# run not made is a "not run" row with nan figures, in the tables and in
# TABLE.h5; the summary line counts them and gives wall and CPU time.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_sweep_skip
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml
"$HYMO" run "$M" --t-end 3 -o "$OUT/ref.h5" > /dev/null 2>&1 || fail "reference run"
sweep() { # $1 output base, rest: extra options
    out=$1; shift
    "$HYMO" sweep "$M" --t-end 3 --reference "$OUT/ref.h5" --H 1e-3,4e-3,6e-3,8e-3 --jobs 2 \
        --configs "coupling=velocity-force,velocity-pressure;extrapolation=0,2;hyd=rk4;mech=trapezoidal" \
        "$@" -o "$OUT/$out" > "$OUT/$out.out" 2> "$OUT/$out.err" || fail "sweep $out exited $?: $(cat "$OUT/$out.err")"
}
sweep full
sweep skip --skip-failed
cmp -s "$OUT/full_achievable.csv" "$OUT/skip_achievable.csv" || fail "achievable tables differ"
# rows without wall_time (column 19 of 20)
cut -d, -f1-18,20- "$OUT/full.csv" > "$OUT/full.rows"
cut -d, -f1-18,20- "$OUT/skip.csv" > "$OUT/skip.rows"
[ "$(wc -l < "$OUT/skip.rows")" -eq 17 ] || fail "rows: $(wc -l < "$OUT/skip.rows")"
# expected: per configuration (4 rows each, H ascending), the rows up to the
# first failed one as the full sweep's, the rest "not run"
awk -F, 'NR == 1 { print; next }
         { key = $1 FS $2 FS $3 FS $4 FS $5 FS $6
           if (dead[key]) { printf "%s,%s,0,0,nan,nan,nan,nan,nan,nan,nan,nan,nan,\"not run: a smaller H failed\"\n", key, $7; next }
           print; if ($9 == 0) dead[key] = 1 }' "$OUT/full.rows" > "$OUT/expected.rows"
n_skipped=$(grep -c "not run" "$OUT/expected.rows")
[ "$n_skipped" -gt 0 ] || fail "no run fails in this grid: the test checks nothing"
cmp -s "$OUT/expected.rows" "$OUT/skip.rows" || fail "rows differ: $(diff "$OUT/expected.rows" "$OUT/skip.rows" | head -5)"
grep -q "^16 runs ($n_skipped not run: a smaller H failed) in [0-9.]* s wall time, [0-9.]* s CPU, on 2 threads" "$OUT/skip.out" \
    || fail "summary: $(grep runs "$OUT/skip.out")"
grep -q "^16 runs in [0-9.]* s wall time, [0-9.]* s CPU, on 2 threads" "$OUT/full.out" || fail "summary: $(grep runs "$OUT/full.out")"
if command -v h5dump > /dev/null 2>&1; then
    [ "$(h5dump -d /runs/t_reached "$OUT/skip.h5" | grep -o 'nan' | wc -l)" -eq "$n_skipped" ] \
        || fail "TABLE.h5: t_reached is not nan for the runs not made"
fi
echo "cli_sweep_skip: ok ($n_skipped of 16 runs not made, same achievable H)"
