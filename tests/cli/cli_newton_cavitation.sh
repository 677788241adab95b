#!/bin/sh
# The excavator with its entrained-air fluid at dt = 10 ms
# (docs/models.md "Known limitations"): it stopped at
# t = 2.306 s with "Newton-Raphson did not converge" while locating the
# arm's make-up valve opening during cavitation (the pressure iterate of
# Varm_p cycling across the vapour pressure).  With the halved-step retry
# (src/engine/engine.c) it runs the whole cycle, says so in the summary, keeps
# Varm_p above 0.1 MPa (IDA: min 0.10198 MPa at 2.389 s; this run
# 0.10117 MPa at 2.39 s) and stays within the trapezoidal rule's error at
# 10 ms of an IDA run on the same grid (measured: z max 7.4e-4 rad, RMS
# 4.0e-4; p RMS 45 kPa).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_newton_cavitation
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/excavator.yaml

"$HYMO" run "$M" --dt 0.01 -o "$OUT/trap.h5" > "$OUT/trap.out" 2>&1 || fail "dt 10 ms exited $?: $(cat "$OUT/trap.out")"
grep -q "^time .* 1000 steps, complete" "$OUT/trap.out" || fail "not complete: $(cat "$OUT/trap.out")"
grep -q "^halvings     [1-9][0-9]* sub-steps retried" "$OUT/trap.out" || fail "no halvings line: $(cat "$OUT/trap.out")"
grep -q "^  Varm_p     min 0.10[0-9]* MPa at 2.39 s" "$OUT/trap.out" || fail "Varm_p range: $(grep Varm_p "$OUT/trap.out")"
"$HYMO" info "$OUT/trap.h5" | grep -q "^halvings" || fail "hymo info: no halvings line"
"$HYMO" run "$M" --dt 0.01 --integrator ida -q -o "$OUT/ida.h5" > "$OUT/ida.out" 2>&1 || fail "ida exited $?: $(cat "$OUT/ida.out")"
"$HYMO" compare "$OUT/ida.h5" "$OUT/trap.h5" --max-rms z=1e-3 --max-abs z=2e-3 --max-rms p=1e5 > "$OUT/cmp.out" 2>&1 \
    || fail "against IDA: $(cat "$OUT/cmp.out")"
echo "cli_newton_cavitation: ok"
