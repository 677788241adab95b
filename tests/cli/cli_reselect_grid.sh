#!/bin/sh
# Double-step re-selects its independent set only at the end of a grid step
# (formulations/double_step.c ds_finish_step, hymo_mb.off_grid): on the
# spatial RUSR loop at 2 ms the fast mode halves the step 0.622-0.624 s (its
# Newton fails where the current set's pivot is 0.08 of the start's) and
# re-selected at the halved sub-step's end, 0.623 s, one step before the
# numeric mode; both must now re-select z4 at 0.624 s.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2
fail() { echo "FAIL: $*"; exit 1; }
for j in fast numeric; do
    out=$("$HYMO" run "$SRC/tests/models/loop_rusr_spherical.yaml" --jacobian $j --dt 2e-3 --t-end 0.7 --no-estimate 2>&1) \
        || fail "$j: exit $?: $out"
    echo "$out" | grep -q "^independent  z1; z4 from t=0.624 (1 re-selection)$" \
        || fail "$j: $(echo "$out" | grep '^independent')"
done
echo "ok: both modes re-select z4 at t = 0.624 s"
