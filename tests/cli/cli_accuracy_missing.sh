#!/bin/sh
# A run whose error-estimate companion (the same run at 2 dt) fails: the
# main run completes and keeps its whole file, without /accuracy, and both
# the summary line `accuracy     not estimated: ...` and the root attribute
# accuracy_missing_reason give the companion's message on one line.  The
# case: crane1 with one Newton iteration per step and a position tolerance
# of 1e-10 completes 0.9 s at dt = 2 ms (with halvings), while at 4 ms it
# stops at t = 0.58 s.  An ordinary run has neither the line nor the attribute;
# a run with --no-estimate has both, saying it was not asked for.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_accuracy_missing
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml
A='--t-end 0.9 --dt 2e-3 --set simulation.tolerances.position=1e-10'

# shellcheck disable=SC2086
"$HYMO" run "$M" $A --max-iter 1 -o "$OUT/run.h5" > "$OUT/run.out" 2>&1 \
    || fail "the main run exited $?: $(cat "$OUT/run.out")"
grep -q '^time .* 450 steps, complete$' "$OUT/run.out" || fail "main run not complete: $(cat "$OUT/run.out")"
line=$(grep '^accuracy' "$OUT/run.out")
[ "$(grep -c '^accuracy' "$OUT/run.out")" -eq 1 ] || fail "not one accuracy line: $(cat "$OUT/run.out")"
echo "$line" | grep -q '^accuracy     not estimated: the companion run (richardson, companion at 2 dt) failed: t = 0.5[0-9]* s (step [0-9]*): Newton-Raphson did not converge' \
    || fail "summary line: $line"
h5ls "$OUT/run.h5" | grep -q '^accuracy' && fail "a file with a failed companion has /accuracy"
h5dump -a /accuracy_missing_reason "$OUT/run.h5" > "$OUT/attr.out" 2>&1 || fail "no root attribute accuracy_missing_reason"
grep -qF 'the companion run (richardson, companion at 2 dt) failed: t = 0.5' "$OUT/attr.out" \
    || fail "accuracy_missing_reason: $(cat "$OUT/attr.out")"
# the main run's file is complete: every step, and info reads the reason back
[ "$(h5dump -H -d /time "$OUT/run.h5" | grep -c '( 451 )')" -eq 1 ] || fail "/time is not 451 rows"
"$HYMO" info "$OUT/run.h5" > "$OUT/info.out" 2>&1 || fail "info exited $?"
grep -qF "$line" "$OUT/info.out" || fail "info lacks the accuracy line: $(cat "$OUT/info.out")"

# an ordinary run: an estimate, no reason
# shellcheck disable=SC2086
"$HYMO" run "$M" $A -o "$OUT/ok.h5" > "$OUT/ok.out" 2>&1 || fail "ordinary run exited $?"
grep -q '^accuracy     estimated max error' "$OUT/ok.out" || fail "ordinary run: $(cat "$OUT/ok.out")"
h5dump -a /accuracy_missing_reason "$OUT/ok.h5" > /dev/null 2>&1 && fail "an ordinary run has accuracy_missing_reason"

# --no-estimate: no companion, no /accuracy, the reason "not asked for"; the
# run's own data are those of the run with its companions (on their thread)
# shellcheck disable=SC2086
"$HYMO" run "$M" $A --no-estimate -o "$OUT/noest.h5" > "$OUT/noest.out" 2>&1 || fail "--no-estimate run exited $?"
grep -q '^accuracy     not estimated: not asked for (error_estimate = 0)' "$OUT/noest.out" \
    || fail "--no-estimate: $(cat "$OUT/noest.out")"
h5ls "$OUT/noest.h5" | grep -q '^accuracy' && fail "a --no-estimate run has /accuracy"
h5dump -a /accuracy_missing_reason "$OUT/noest.h5" 2>/dev/null | grep -qF 'not asked for (error_estimate = 0)' \
    || fail "--no-estimate: no accuracy_missing_reason"
for d in /states/z /states/p /actuators/s /time; do
    h5diff "$OUT/ok.h5" "$OUT/noest.h5" "$d" "$d" > /dev/null 2>&1 || fail "$d differs with and without the companions"
done

# an incomplete run (the four-bar with one seed-test Newton iteration stops
# at t = 1 s when the valve opens): exit 3, and the file says why it has no estimate
"$HYMO" run "$SRC/data/fourbar.yaml" --t-end 3 --max-iter 1 --newton-test seed -o "$OUT/inc.h5" > "$OUT/inc.out" 2>&1
code=$?; [ $code -eq 3 ] || fail "incomplete run exited $code, expected 3"
grep -q '^accuracy     not estimated: the run stopped before t_end' "$OUT/inc.out" || fail "incomplete: $(cat "$OUT/inc.out")"
h5ls "$OUT/inc.h5" | grep -q '^accuracy' && fail "an incomplete run has /accuracy"
h5dump -a /accuracy_missing_reason "$OUT/inc.h5" 2>/dev/null | grep -qF 'the run stopped before t_end' \
    || fail "incomplete run: no accuracy_missing_reason"
echo "cli_accuracy_missing: ok"
