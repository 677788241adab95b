#!/bin/sh
# Mechanical force elements from the command line (docs/model-format.md,
# "forces"): a model with every element runs with both formulations, both
# Jacobians and IDA, its stops located as events; --set reaches an element
# by name; a bad element exits 2 with one line naming forces[k].field.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_forces
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/tests/models/pendulum_forces.yaml

for form in double-step penalty; do
    for jac in fast numeric; do
        "$HYMO" run "$M" --formulation $form --jacobian $jac -o "$OUT/$form-$jac.h5" > "$OUT/$form-$jac.out" 2>&1 \
            || fail "$form $jac exited $?: $(cat "$OUT/$form-$jac.out")"
        grep -q "^events  *[1-9][0-9]* located" "$OUT/$form-$jac.out" || fail "$form $jac: no events: $(cat "$OUT/$form-$jac.out")"
    done
done
"$HYMO" compare "$OUT/double-step-fast.h5" "$OUT/penalty-numeric.h5" --max-abs z=1e-5 > "$OUT/cmp.out" 2>&1 \
    || fail "double-step fast and penalty numeric differ: $(cat "$OUT/cmp.out")"
"$HYMO" run "$M" --integrator ida -o "$OUT/ida.h5" > "$OUT/ida.out" 2>&1 || fail "ida exited $?: $(cat "$OUT/ida.out")"
grep -q "^events  *[1-9][0-9]* located" "$OUT/ida.out" || fail "ida: no events: $(cat "$OUT/ida.out")"

# --set reaches an element by name and changes the result
"$HYMO" run "$M" -q --set "forces[spring].stiffness=40" -o "$OUT/set.h5" || fail "run --set exited $?"
"$HYMO" compare "$OUT/double-step-fast.h5" "$OUT/set.h5" --allow-model-mismatch --max-abs z=1e-3 > /dev/null 2>&1
[ $? -eq 1 ] || fail "--set forces[spring].stiffness did not change the run"

# bad elements: exit 2, one line naming the field
bad() { # $1 sed expression on the model, $2 expected text
    sed "$1" "$M" > "$OUT/bad.yaml"
    "$HYMO" run "$OUT/bad.yaml" -q -o "$OUT/bad.h5" > "$OUT/bad.out" 2>&1
    code=$?
    [ $code -eq 2 ] || fail "'$1' exited $code (expected 2): $(cat "$OUT/bad.out")"
    [ "$(wc -l < "$OUT/bad.out")" -eq 1 ] || fail "'$1': not one line: $(cat "$OUT/bad.out")"
    grep -qF "$2" "$OUT/bad.out" || fail "'$1': message lacks '$2': $(cat "$OUT/bad.out")"
    [ -e "$OUT/bad.h5" ] && fail "'$1': an output file was written"
    return 0
}
bad 's/joint: q, coulomb/joint: qq, coulomb/' "forces[1].joint: unknown joint 'qq'"
bad 's/upper: -85 deg/upper: -100 deg/' "forces[2].upper: must be above lower"
bad 's/point_b: arm.tip/point_b: arm.nope/' "forces[3].point_b: unknown point 'arm.nope'"
bad 's/force_signals: \[null, s1, null\]/force_signals: [null, s2, null]/' "forces[4].force_signals: unknown signal 's2'"
bad 's/type: joint_spring/type: torsion_spring/' "forces[0].type: unknown force element type 'torsion_spring'"
"$HYMO" run "$M" -q --set "forces[nope].stiffness=1" > "$OUT/bad.out" 2>&1
[ $? -eq 2 ] || fail "--set of an unknown element did not exit 2"
grep -qF "no item named 'nope' in forces" "$OUT/bad.out" || fail "--set unknown element: $(cat "$OUT/bad.out")"
echo "cli_forces: ok"
