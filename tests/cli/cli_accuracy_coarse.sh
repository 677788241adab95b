#!/bin/sh
# The error estimate's order check one level coarser (src/engine/run_file.c,
# companion_check): the companions at 2, 4 and 8 dt give a second observed
# order; where it is below 1.0 the estimate is reliable only with an order
# within 0.5 of 2.  The spatial RUSP loop (tests/models/loop_rusp.yaml),
# penalty at 1 ms, both Jacobians: observed order 2.92 / 3.03, one level
# coarser -0.87 / 0.88, estimate 5.7 / 5.6 x the true error
# (tests/independent/README.md, "RUSP"): unreliable, the reason in the
# summary and the file.  At 0.25 ms (order 1.94 / 2.07, one level coarser
# 4.27 / 4.15; estimate 0.54 / 0.51 x the true error) it is reliable, as is
# the RUSR loop's double-step at 1 ms (order 1.91, coarser -0.61, estimate
# 1.01 x the true error).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_accuracy_coarse
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
attr() { h5dump -a "/accuracy/$2" "$1" 2>/dev/null | sed -n 's/^ *(0): *//p'; }
M=$SRC/tests/models

for jac in fast numeric; do
    "$HYMO" run "$M/loop_rusp.yaml" --formulation penalty --jacobian $jac -o "$OUT/rusp_$jac.h5" > "$OUT/rusp_$jac.out" 2>&1 \
        || fail "loop_rusp penalty $jac 1 ms exited $?: $(cat "$OUT/rusp_$jac.out")"
    [ "$(attr "$OUT/rusp_$jac.h5" reliable)" = "0" ] \
        || fail "loop_rusp penalty $jac 1 ms: reliable = '$(attr "$OUT/rusp_$jac.h5" reliable)': $(attr "$OUT/rusp_$jac.h5" check)"
    [ "$(grep -c '^accuracy     the estimate is UNRELIABLE: observed order z [23]\.[0-9]* (the estimate assumes 2; reliable for 1\.3 to 3\.3); at 2/4/8 dt z [-0-9.]*: the coarse steps are outside the method.s order, so within 0\.5 of 2 needed$' "$OUT/rusp_$jac.out")" -eq 1 ] \
        || fail "loop_rusp penalty $jac 1 ms summary: $(grep accuracy "$OUT/rusp_$jac.out")"
    "$HYMO" run "$M/loop_rusp.yaml" --formulation penalty --jacobian $jac --dt 2.5e-4 -o "$OUT/rusp4_$jac.h5" \
        > "$OUT/rusp4_$jac.out" 2>&1 || fail "loop_rusp penalty $jac 0.25 ms exited $?"
    [ "$(attr "$OUT/rusp4_$jac.h5" reliable)" = "1" ] \
        || fail "loop_rusp penalty $jac 0.25 ms: reliable = '$(attr "$OUT/rusp4_$jac.h5" reliable)': $(attr "$OUT/rusp4_$jac.h5" check)"
    attr "$OUT/rusp4_$jac.h5" check | grep -q '; at 2/4/8 dt z 4\.[0-9]*"$' \
        || fail "loop_rusp penalty $jac 0.25 ms check: $(attr "$OUT/rusp4_$jac.h5" check)"
done
"$HYMO" run "$M/loop_rusr_spherical.yaml" --formulation double-step --jacobian fast -o "$OUT/rusr.h5" > "$OUT/rusr.out" 2>&1 \
    || fail "loop_rusr_spherical double-step fast exited $?"
[ "$(attr "$OUT/rusr.h5" reliable)" = "1" ] || fail "loop_rusr_spherical double-step fast 1 ms: $(attr "$OUT/rusr.h5" check)"
attr "$OUT/rusr.h5" check | grep -q 'at 2/4/8 dt z -0\.[0-9]*: the coarse steps are outside the method.s order, this one within 0\.5 of 2"$' \
    || fail "loop_rusr_spherical check: $(attr "$OUT/rusr.h5" check)"
echo "cli_accuracy_coarse: ok"
