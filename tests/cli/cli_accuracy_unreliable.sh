#!/bin/sh
# An error estimate that cannot be trusted is marked so: /accuracy
# attribute reliable = 0 with the reason in `check`, one summary line
# `accuracy     the estimate is UNRELIABLE: ...`, and `hymo compare`
# against that reference says so on stdout and judges no threshold against
# the estimate (no "tighter than the reference's own estimated max error"
# warning).  The case: IDA at rtol 5e-13, whose companion cannot be 100x
# tighter (its rtol stops at 1e-13: 5x, where at least 10x is needed).
# A trapezoidal case: pump_demo at 1 ms (default settings), whose
# pressure differences from the 2 dt and 4 dt companions peak at the
# relief valve's first opening (t = 0.052 s and 0.032 s): the pressure
# order observed is -1.9 where the Richardson factor assumes 2, so the
# estimate is unreliable (the true pressure error, against a run at
# dt/16, happens to be 1/1.28 of it; z and s show order 2.00).
# A reliable reference (IDA at rtol 1e-8; the trapezoidal rule on the
# four-bar, whose order observed is 2) has reliable = 1, no such line,
# and compare's warning.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_accuracy_unreliable
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/fourbar.yaml
attr() { h5dump -a "/accuracy/$2" "$1" 2>/dev/null | sed -n 's/^ *(0): *//p'; }

"$HYMO" run "$M" --t-end 2 --integrator ida --rtol 5e-13 -o "$OUT/bad.h5" > "$OUT/bad.out" 2>&1 \
    || fail "IDA rtol 5e-13 exited $?: $(cat "$OUT/bad.out")"
grep -q '^accuracy     estimated max error' "$OUT/bad.out" || fail "no estimate: $(cat "$OUT/bad.out")"
[ "$(grep -c '^accuracy     the estimate is UNRELIABLE: companion rtol 5 x tighter' "$OUT/bad.out")" -eq 1 ] \
    || fail "no UNRELIABLE line: $(cat "$OUT/bad.out")"
[ "$(attr "$OUT/bad.h5" reliable)" = "0" ] || fail "reliable = '$(attr "$OUT/bad.h5" reliable)', not 0"
attr "$OUT/bad.h5" check | grep -q 'at least 10 x needed' || fail "check: $(attr "$OUT/bad.h5" check)"
"$HYMO" info "$OUT/bad.h5" | grep -q '^accuracy     the estimate is UNRELIABLE' || fail "info lacks the UNRELIABLE line"

"$HYMO" run "$M" --t-end 2 --integrator ida --rtol 1e-8 -o "$OUT/ok.h5" > "$OUT/ok.out" 2>&1 || fail "rtol 1e-8 exited $?"
grep -q 'UNRELIABLE' "$OUT/ok.out" && fail "a reliable IDA estimate is called unreliable: $(cat "$OUT/ok.out")"
[ "$(attr "$OUT/ok.h5" reliable)" = "1" ] || fail "IDA rtol 1e-8: reliable = '$(attr "$OUT/ok.h5" reliable)'"
"$HYMO" run "$M" --t-end 2 -o "$OUT/trap.h5" > "$OUT/trap.out" 2>&1 || fail "trapezoidal run exited $?"
grep -q 'UNRELIABLE' "$OUT/trap.out" && fail "trapezoidal estimate called unreliable: $(cat "$OUT/trap.out")"
[ "$(attr "$OUT/trap.h5" reliable)" = "1" ] || fail "trapezoidal: reliable = '$(attr "$OUT/trap.h5" reliable)'"
attr "$OUT/trap.h5" check | grep -q '^"observed order z 2\.0[0-9], p [12]\.[0-9]*, s 2\.0' \
    || fail "trapezoidal check: $(attr "$OUT/trap.h5" check)"

"$HYMO" run "$SRC/data/pump_demo.yaml" -o "$OUT/pump.h5" > "$OUT/pump.out" 2>&1 || fail "pump_demo exited $?"
[ "$(grep -c '^accuracy     the estimate is UNRELIABLE: observed order z 2\.0[0-9], p -1\.[0-9]*, s 2\.0[0-9] (the estimate assumes 2' "$OUT/pump.out")" -eq 1 ] \
    || fail "pump_demo at 1 ms: $(grep accuracy "$OUT/pump.out")"
[ "$(attr "$OUT/pump.h5" reliable)" = "0" ] || fail "pump_demo: reliable = '$(attr "$OUT/pump.h5" reliable)'"

# compare: a threshold below the reference's estimate.  Reliable: the warning;
# unreliable: the stdout line and no warning (the check itself still runs)
"$HYMO" compare "$OUT/ok.h5" "$OUT/trap.h5" --max-abs z=1e-15 > "$OUT/c_ok.out" 2> "$OUT/c_ok.err"
[ $? -eq 1 ] || fail "compare (reliable ref) did not exit 1"
grep -q "tighter than the reference's own estimated max error" "$OUT/c_ok.err" || fail "no warning: $(cat "$OUT/c_ok.err")"
grep -q 'UNRELIABLE' "$OUT/c_ok.out" && fail "reliable reference reported unreliable"
"$HYMO" compare "$OUT/bad.h5" "$OUT/trap.h5" --max-abs z=1e-15 > "$OUT/c_bad.out" 2> "$OUT/c_bad.err"
[ $? -eq 1 ] || fail "compare (unreliable ref) did not exit 1"
grep -q "tighter than the reference's own estimated max error" "$OUT/c_bad.err" \
    && fail "an unreliable estimate used for the threshold warning: $(cat "$OUT/c_bad.err")"
[ "$(grep -c "^accuracy   the reference's own error estimate is UNRELIABLE (companion rtol 5 x" "$OUT/c_bad.out")" -eq 1 ] \
    || fail "compare does not say the estimate is unreliable: $(cat "$OUT/c_bad.out")"
echo "cli_accuracy_unreliable: ok"
