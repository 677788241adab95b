#!/bin/sh
# The Newton failure message names the block and unknown that failed
# (docs/models.md "Known limitations"):
#  - a penalty run stopped by the contractive test on the mechanical block,
#    with every increment within its tolerance, names the mechanical block
#    and its joint, the increment, rate, estimate and target (it named "the
#    pressure block", whose increment was within its tolerance);
#  - a run stopped by a pressure increment beyond its tolerance names the
#    pressure block, the volume and its pressure iterate;
#  - both say the time and step, and how often the step was halved before
#    (src/engine/engine.c: a failing step is retried with halved sub-steps; with
#    --max-iter 1 or 2 every retry fails too), exit 3.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_newton_message
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }

"$HYMO" run "$SRC/data/quickreturn.yaml" --formulation penalty --max-iter 2 -q > "$OUT/mech.out" 2> "$OUT/mech.err"
code=$?; [ $code -eq 3 ] || fail "penalty run exited $code (expected 3): $(cat "$OUT/mech.err")"
[ "$(wc -l < "$OUT/mech.err")" -eq 1 ] || fail "not one line: $(cat "$OUT/mech.err")"
grep -q "^hymo: error: t = [0-9.e+-]* s (step [0-9]*): Newton-Raphson did not converge in 2 iterations in the mechanical block, joint z[0-9]*: increment .* x tolerance, contraction rate .*, estimated error .* x tolerance against the contractive test's target .* x tolerance; residual norm .*; every increment within its tolerance (largest .* x) (after [0-9]* retries with halved steps, the last of .* s; reduce dt)$" "$OUT/mech.err" \
    || fail "mechanical message: $(cat "$OUT/mech.err")"
grep -q "pressure block" "$OUT/mech.err" && fail "names the pressure block: $(cat "$OUT/mech.err")"

"$HYMO" run "$SRC/tests/models/load_check.yaml" --max-iter 1 -q > "$OUT/p.out" 2> "$OUT/p.err"
code=$?; [ $code -eq 3 ] || fail "load_check --max-iter 1 exited $code (expected 3): $(cat "$OUT/p.err")"
grep -q "^hymo: error: t = 9.76563e-07 s (step 1): Newton-Raphson did not converge in 1 iterations; residual norm .*; largest increment .* x tolerance in the pressure block, volume Vline (iterate 30 MPa absolute) (after 10 retries with halved steps, the last of 9.77e-07 s; reduce dt)$" "$OUT/p.err" \
    || fail "pressure message: $(cat "$OUT/p.err")"
echo "cli_newton_message: ok"
