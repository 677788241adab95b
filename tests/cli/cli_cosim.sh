#!/bin/sh
# CLI behaviour of `hymo cosim` and `hymo sweep` on crane1 (3 s): a
# co-simulation passes the regression gate against the monolithic
# reference, bad step ratios exit 2, an unstable configuration exits 3 and
# leaves a finite, incomplete file that `hymo compare` fails as unstable; a small
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

# 1b. without -o the compared rows are chosen as the run records them (no
#    scratch file): the comparison and every figure of the summary are those
#    of the same run with -o, which reads them back from its rows; H = 1.5 ms
#    against the 1 ms reference (the rows and the reference's times
#    interleave; the row storage wraps) and an unstable run at 4 ms
for cfg in "--H 1.5e-3" "--H 4e-3 --coupling velocity-force --extrapolation 0"; do
    "$HYMO" cosim "$M" --t-end 3 $cfg --hh 1e-4 --reference "$OUT/ref.h5" -o "$OUT/sel.h5" 2>&1 \
        | grep -v "^wall time\|^output\|^written" > "$OUT/sel_file.out"
    "$HYMO" cosim "$M" --t-end 3 $cfg --hh 1e-4 --reference "$OUT/ref.h5" 2>&1 \
        | grep -v "^wall time\|^output" > "$OUT/sel_online.out"
    grep -q "^  s      RMS" "$OUT/sel_online.out" || fail "no comparison ($cfg): $(cat "$OUT/sel_online.out")"
    cmp -s "$OUT/sel_file.out" "$OUT/sel_online.out" ||
        fail "comparison without -o differs ($cfg): $(diff "$OUT/sel_file.out" "$OUT/sel_online.out")"
done

# 2. H/h_h not an integer: exit 2 with a message naming both steps
"$HYMO" cosim "$M" --t-end 3 --H 1e-3 --hh 3e-4 -o "$OUT/bad.h5" > "$OUT/bad.out" 2>&1
code=$?; [ $code -eq 2 ] || fail "H/hh exit $code"
grep -q "is not an integer" "$OUT/bad.out" || fail "H/hh message: $(cat "$OUT/bad.out")"
[ ! -e "$OUT/bad.h5" ] || fail "bad options left a file"

# 3. velocity-force with zero-order hold at H = 4 ms is unstable: exit 3,
#    the file keeps only finite rows, complete = 0, compare fails it (exit 1)
#    as unstable
"$HYMO" cosim "$M" --t-end 3 --H 4e-3 --hh 1e-4 --coupling velocity-force --extrapolation 0 \
    -o "$OUT/unstable.h5" > "$OUT/unstable.out" 2>&1
code=$?; [ $code -eq 3 ] || fail "unstable exit $code: $(cat "$OUT/unstable.out")"
grep -q "UNSTABLE" "$OUT/unstable.out" || fail "unstable status line"
h5dump -d /states/p "$OUT/unstable.h5" | grep -qi "nan\|inf" && fail "NaN or Inf in the unstable file"
"$HYMO" compare "$OUT/ref.h5" "$OUT/unstable.h5" > "$OUT/rej.out" 2>&1
code=$?; [ $code -eq 1 ] || fail "compare of the unstable file exit $code"
grep -q "'.*unstable.h5': unstable co-simulation: stopped at t = " "$OUT/rej.out" || fail "reject message: $(cat "$OUT/rej.out")"

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
# 5. getopt_long's --name=value form for cosim and sweep
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
# 6. verdicts (docs/cosimulation.md "Verdicts"): crane1 8 s, velocity-force,
#    p = 0, index-1 mechanics, H = 2 ms -- over 30 s it kept 57 666 J of
#    residual energy and exited 0 as "stable" -- is unstable (exit 3) by
#    the relative limit; with the limits loosened it is bounded and, with
#    3 mm RMS error against its reference, inaccurate (exit 1)
"$HYMO" run "$M" --t-end 8 -o "$OUT/ref8.h5" -q || fail "8 s reference run exited $?"
VF0="--t-end 8 --H 2e-3 --coupling velocity-force --extrapolation 0 --mech-integrator index1"
"$HYMO" cosim "$M" $VF0 --reference "$OUT/ref8.h5" -o "$OUT/vf0.h5" > "$OUT/vf0.out" 2>&1
code=$?; [ $code -eq 3 ] || fail "57 666 J case: exit $code (expected 3): $(cat "$OUT/vf0.out")"
grep -q "^verdict        unstable (t = 5.6.* |residual energy| .* exceeds 0.1 x" "$OUT/vf0.out" || fail "verdict line: $(cat "$OUT/vf0.out")"
h5dump -A -g /cosim "$OUT/vf0.h5" | grep -A10 'ATTRIBUTE "verdict"' | grep -q '"unstable"' || fail "/cosim@verdict unstable"
"$HYMO" cosim "$M" $VF0 --reference "$OUT/ref8.h5" --unstable-ratio 10 --unstable-balance-ratio 10 \
    -o "$OUT/vf0_loose.h5" > "$OUT/vf0_loose.out" 2>&1
code=$?; [ $code -eq 1 ] || fail "bounded mm-error run: exit $code (expected 1): $(cat "$OUT/vf0_loose.out")"
grep -q "^hymo: inaccurate: RMS error of s 0.00[23].* m exceeds 0.001" "$OUT/vf0_loose.out" || fail "inaccurate line: $(cat "$OUT/vf0_loose.out")"
h5dump -A -g /cosim "$OUT/vf0_loose.h5" | grep -A10 'ATTRIBUTE "verdict"' | grep -q '"inaccurate"' || fail "/cosim@verdict inaccurate"
h5dump -A "$OUT/vf0_loose.h5" | grep -A10 'ATTRIBUTE "complete"' | grep -q "(0): 1" || fail "an inaccurate run is complete"
#    a good run with the default thresholds of --reference: accurate, exit 0
grep -q "^verdict        accurate" "$OUT/vp.out" || fail "vp verdict: $(cat "$OUT/vp.out")"
#    explicit thresholds replace the defaults; --max-abs too
"$HYMO" cosim "$M" --t-end 3 --reference "$OUT/ref.h5" --max-abs s=1e-9 -q > "$OUT/abs.out" 2>&1
code=$?; [ $code -eq 1 ] || fail "--max-abs s=1e-9 exit $code"
grep -q "max |.| error of s" "$OUT/abs.out" || fail "--max-abs message: $(cat "$OUT/abs.out")"

# 7. bad values of the verdict and input options: exit 2, no file
for bad in "--unstable-ratio 0" "--unstable-ratio -1" "--unstable-balance-ratio nan" "--unstable-floor -1" "--unstable-floor 0" \
           "--unstable-energy 0" "--max-rms s=-1" "--max-rms q=1" "--max-rms s" "--max-abs s=abc" \
           "--max-residual-energy 0" "--mech-inputs sometimes" "--H 1e400" "--hh -1e-4"; do
    "$HYMO" cosim "$M" --t-end 1 $bad -o "$OUT/badopt.h5" > "$OUT/badopt.out" 2>&1
    code=$?; [ $code -eq 2 ] || fail "cosim $bad: exit $code (expected 2): $(cat "$OUT/badopt.out")"
    [ "$(wc -l < "$OUT/badopt.out")" -eq 1 ] || fail "cosim $bad: not one line: $(cat "$OUT/badopt.out")"
    [ ! -e "$OUT/badopt.h5" ] || fail "cosim $bad left a file"
done
# an H that does not divide t_end: exit 2 (no silently moved end time)
"$HYMO" cosim "$M" --t-end 3 --H 3.5e-3 -o "$OUT/h35.h5" > "$OUT/h35.out" 2>&1
code=$?; [ $code -eq 2 ] || fail "H = 3.5 ms, t_end = 3 s: exit $code"
grep -q "t_end = 3 s is not a multiple of H = 0.0035 s" "$OUT/h35.out" || fail "H = 3.5 ms message: $(cat "$OUT/h35.out")"

# 8. --mech-inputs hold is recorded and changes the run; Gauss-Seidel with
#    the mechanics first and the interface model differs from Jacobi
"$HYMO" cosim "$M" --t-end 2 --mech-inputs hold -o "$OUT/hold.h5" -q || fail "hold exit $?"
h5dump -A -g /cosim "$OUT/hold.h5" | grep -A10 'ATTRIBUTE "mech_inputs"' | grep -q '"hold"' || fail "/cosim@mech_inputs"
"$HYMO" cosim "$M" --t-end 2 -o "$OUT/ext.h5" -q || fail "extrapolate exit $?"
"$HYMO" compare "$OUT/ext.h5" "$OUT/hold.h5" --max-abs s=1e-300 > /dev/null 2>&1
[ $? -eq 1 ] || fail "held and extrapolated mechanics' inputs give the same run"
"$HYMO" cosim "$M" --t-end 2 --extrapolation interface-model -o "$OUT/im_j.h5" -q || fail "IM Jacobi exit $?"
"$HYMO" cosim "$M" --t-end 2 --extrapolation interface-model --scheme gauss-seidel-mech-first -o "$OUT/im_gs.h5" -q ||
    fail "IM GS mech-first exit $?"
"$HYMO" compare "$OUT/im_j.h5" "$OUT/im_gs.h5" --max-abs s=1e-300 > /dev/null 2>&1
[ $? -eq 1 ] || fail "interface model: Gauss-Seidel mechanics-first is Jacobi bit for bit"

# 9. sweep: tables that cannot be written exit 2; --jobs beyond the old
#    fixed array of 256 threads; seed 000's take-off definition; inputs axis
"$HYMO" sweep "$M" --t-end 1 --reference "$OUT/ref.h5" --H 1e-3 --configs "extrapolation=2" \
    -o "$OUT/no/such/dir/sw" > "$OUT/sw_nodir.out" 2>&1
code=$?; [ $code -eq 2 ] || fail "sweep into a missing directory: exit $code"
grep -q "cannot write" "$OUT/sw_nodir.out" || fail "sweep write message: $(cat "$OUT/sw_nodir.out")"
mkdir -p "$OUT/sw_h5.h5"   # a directory where TABLE.h5 goes: refused before any run, no table written
"$HYMO" sweep "$M" --t-end 1 --reference "$OUT/ref.h5" --H 1e-3 --configs "extrapolation=2" \
    -o "$OUT/sw_h5" > "$OUT/sw_h5.out" 2>&1
code=$?; [ $code -eq 2 ] || fail "sweep whose HDF5 table is a directory: exit $code: $(cat "$OUT/sw_h5.out")"
grep -q "sw_h5.h5' is a directory" "$OUT/sw_h5.out" || fail "HDF5 table message: $(cat "$OUT/sw_h5.out")"
[ -e "$OUT/sw_h5.csv" ] && fail "a sweep refused for its HDF5 table wrote its CSV table"
"$HYMO" sweep "$M" --t-end 1 --reference "$OUT/ref.h5" --H 1e-3,2e-3,4e-3 --jobs 1000 --achievable takeoff \
    --configs "coupling=velocity-force;extrapolation=0,2;inputs=extrapolate,hold" \
    -o "$OUT/sw_to" > "$OUT/sw_to.out" 2> "$OUT/sw_to.err"
code=$?; [ $code -eq 0 ] || fail "take-off sweep exit $code: $(cat "$OUT/sw_to.err")"
grep -q "= 12 runs on 12 threads" "$OUT/sw_to.err" || fail "threads not capped at the number of runs: $(cat "$OUT/sw_to.err")"
grep -q "seed 000's take-off" "$OUT/sw_to.out" || fail "take-off header: $(cat "$OUT/sw_to.out")"
[ "$(grep -c ",hold," "$OUT/sw_to.csv")" -eq 6 ] || fail "inputs=hold rows: $(cat "$OUT/sw_to.csv")"
for bad in "--achievable sometimes" "--takeoff-slope 0" "--jobs 0" "--jobs 99999" "--H 1e-3,1e-3" "--configs inputs=x"; do
    "$HYMO" sweep "$M" --t-end 1 --reference "$OUT/ref.h5" $bad -o "$OUT/sw_bad" > "$OUT/sw_bad.out" 2>&1
    code=$?; [ $code -eq 2 ] || fail "sweep $bad: exit $code (expected 2)"
done
# the reference: same physics accepted (a comment edit), other physics
# refused (a mass), -o on the reference refused before computing
"$HYMO" run "$SRC/data/crane1.yaml" --t-end 1 -o "$OUT/id_ref.h5" -q || fail "identity reference run"
sed 's/^# /# edited: /' "$SRC/data/crane1.yaml" > "$OUT/id_comment.yaml"
sed '0,/mass: 200 /s//mass: 999 /' "$SRC/data/crane1.yaml" > "$OUT/id_mass.yaml"
grep -q "mass: 999" "$OUT/id_mass.yaml" || fail "mass edit not made"
"$HYMO" cosim "$OUT/id_comment.yaml" --t-end 1 --H 1e-3 --reference "$OUT/id_ref.h5" -q; code=$?
[ $code -eq 0 ] || fail "comment-edited model against its reference: exit $code"
"$HYMO" cosim "$OUT/id_mass.yaml" --t-end 1 --H 1e-3 --reference "$OUT/id_ref.h5" -q 2>/dev/null; code=$?
[ $code -eq 2 ] || fail "other mass against the reference: exit $code (expected 2)"
"$HYMO" cosim "$SRC/data/crane1.yaml" --t-end 1 --H 1e-3 --reference "$OUT/id_ref.h5" -o "$OUT/id_ref.h5" -q 2>/dev/null; code=$?
[ $code -eq 2 ] || fail "-o on the reference: exit $code (expected 2)"
"$HYMO" info "$OUT/id_ref.h5" > /dev/null || fail "-o on the reference damaged it"
echo "cli_cosim: all checks passed"
