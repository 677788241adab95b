#!/bin/sh
# CLI behaviour of `hymo cosim` and `hymo sweep` on crane1 (3 s): a
# co-simulation passes the regression gate against the monolithic
# reference, bad step ratios exit 2, an unstable configuration exits 3 and
# leaves a finite, incomplete file that `hymo compare` rejects; a small
# sweep writes its CSV/HDF5 tables and reports the achievable H.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_cosim
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml

"$HYMO" run "$M" --t-end 3 -o "$OUT/ref.h5" -q || fail "reference run exited $?"

# 1. Jacobi velocity-pressure p = 2 at H = 1 ms: stable, and the gate passes
#    (the coupling error is ~1e-7 m against the 1 ms monolithic reference)
"$HYMO" cosim "$M" --t-end 3 --H 1e-3 --hh 1e-4 --reference "$OUT/ref.h5" -o "$OUT/vp.h5" > "$OUT/vp.out" 2>&1
code=$?; [ $code -eq 0 ] || fail "cosim exit $code: $(cat "$OUT/vp.out")"
grep -q "^status         stable" "$OUT/vp.out" || fail "status line: $(cat "$OUT/vp.out")"
"$HYMO" compare "$OUT/ref.h5" "$OUT/vp.h5" --max-rms s=1e-5 --max-residual-energy 1 > "$OUT/gate.out" 2>&1
code=$?; [ $code -eq 0 ] || fail "gate exit $code: $(cat "$OUT/gate.out")"
"$HYMO" compare "$OUT/ref.h5" "$OUT/vp.h5" --max-rms s=1e-12 > "$OUT/strict.out" 2>&1
code=$?; [ $code -eq 1 ] || fail "strict gate exit $code (expected 1)"
grep -q "^FAIL rms s\[cyl1\]" "$OUT/strict.out" || fail "FAIL line: $(cat "$OUT/strict.out")"
h5dump -A -g /cosim "$OUT/vp.h5" | grep -q '"velocity-pressure"' || fail "/cosim coupling attribute"

# 2. H/h_h not an integer: exit 2 with a message naming both steps
"$HYMO" cosim "$M" --t-end 3 --H 1e-3 --hh 3e-4 -o "$OUT/bad.h5" > "$OUT/bad.out" 2>&1
code=$?; [ $code -eq 2 ] || fail "H/hh exit $code"
grep -q "is not an integer" "$OUT/bad.out" || fail "H/hh message: $(cat "$OUT/bad.out")"
[ ! -e "$OUT/bad.h5" ] || fail "bad options left a file"

# 3. velocity-force with zero-order hold at H = 4 ms is unstable: exit 3,
#    the file keeps only finite rows, complete = 0, compare rejects it
"$HYMO" cosim "$M" --t-end 3 --H 4e-3 --hh 1e-4 --coupling velocity-force --extrapolation 0 \
    -o "$OUT/unstable.h5" > "$OUT/unstable.out" 2>&1
code=$?; [ $code -eq 3 ] || fail "unstable exit $code: $(cat "$OUT/unstable.out")"
grep -q "UNSTABLE" "$OUT/unstable.out" || fail "unstable status line"
h5dump -d /states/p "$OUT/unstable.h5" | grep -qi "nan\|inf" && fail "NaN or Inf in the unstable file"
"$HYMO" compare "$OUT/ref.h5" "$OUT/unstable.h5" > "$OUT/rej.out" 2>&1
code=$?; [ $code -eq 2 ] || fail "compare of the unstable file exit $code"
grep -q "incomplete" "$OUT/rej.out" || fail "reject message: $(cat "$OUT/rej.out")"

# 4. a 2 x 2 x 2 sweep: tables written, achievable H reported per configuration
"$HYMO" sweep "$M" --t-end 3 --reference "$OUT/ref.h5" --H 1e-3,4e-3 \
    --configs "coupling=velocity-force,velocity-pressure;extrapolation=0,2;hyd=rk4;mech=trapezoidal" \
    -o "$OUT/sw" > "$OUT/sweep.out" 2> "$OUT/sweep.err"
code=$?; [ $code -eq 0 ] || fail "sweep exit $code: $(cat "$OUT/sweep.err")"
[ "$(wc -l < "$OUT/sw.csv")" -eq 9 ] || fail "sweep.csv rows: $(wc -l < "$OUT/sw.csv")"
[ "$(wc -l < "$OUT/sw_achievable.csv")" -eq 5 ] || fail "achievable rows"
[ -s "$OUT/sw.h5" ] || fail "sweep HDF5"
# (over these 3 s: velocity-force with zero-order hold blows up at 4 ms,
#  velocity-pressure with p = 2 holds it)
grep -q "^velocity-force  *0 .* 1$" "$OUT/sweep.out" || fail "achievable H, velocity-force p=0: $(cat "$OUT/sweep.out")"
grep -q "^velocity-pressure  *2 .* 4$" "$OUT/sweep.out" || fail "achievable H, velocity-pressure p=2: $(cat "$OUT/sweep.out")"
grep -q "^model compiled 2 times for 8 co-simulations" "$OUT/sweep.out" || fail "the model must be compiled once (constants + initial state) for all runs: $(tail -1 "$OUT/sweep.out")"
# 5. getopt_long's --name=value form (issue 13 item 7) for cosim and sweep
"$HYMO" cosim "$M" --t-end=0.5 --H=1e-3 --hh=1e-4 --coupling=velocity-pressure --extrapolation=2 \
    --output="$OUT/eq.h5" > "$OUT/eq.out" 2>&1
code=$?; [ $code -eq 0 ] || fail "cosim --opt=value exit $code: $(cat "$OUT/eq.out")"
grep -q "^status         stable" "$OUT/eq.out" || fail "cosim --opt=value status: $(cat "$OUT/eq.out")"
h5dump -A -g /cosim "$OUT/eq.h5" | grep -q '"velocity-pressure"' || fail "cosim --coupling=velocity-pressure not applied"
"$HYMO" cosim "$M" --t-end=3 --H=1e-3 --hh=3e-4 > "$OUT/eq_bad.out" 2>&1
code=$?; [ $code -eq 2 ] || fail "cosim --hh=3e-4 exit $code"
"$HYMO" sweep "$M" --jobs=0 --output="$OUT/eq_sw" > "$OUT/eq_sw.out" 2>&1
code=$?; [ $code -eq 2 ] || fail "sweep --jobs=0 exit $code"
grep -q -- "--jobs: '0'" "$OUT/eq_sw.out" || fail "sweep --jobs=0 message: $(cat "$OUT/eq_sw.out")"
echo "cli_cosim: all checks passed"
