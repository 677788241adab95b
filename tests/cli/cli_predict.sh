#!/bin/sh
# `hymo predict` (docs/cosimulation.md, "Predicting the achievable H"):
# - without --reference it computes one; crane1, velocity-pressure, p = 2
#   and the interface model, RK4, trapezoidal, Jacobi over 1-8 ms:
#   predicted 3 ms and 6 ms (the measured achievable H of the table), the
#   first unstable H and the time from which rho exceeds the limit
#   printed; exit 0;
# - -o TABLE writes TABLE.csv (one row per configuration and H) and
#   TABLE_achievable.csv with the same achievable H;
# - bad input exits 2 with one line: the tlm coupling, an unknown grid
#   key, --points 0.5, --sustain beyond --points, a missing reference
#   file, another model's reference.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2
OUT=$3/cli_predict
mkdir -p "$OUT"; rm -rf "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml
CFG='coupling=velocity-pressure;extrapolation=2,interface-model;hyd=rk4;mech=trapezoidal;scheme=jacobi'

"$HYMO" predict "$M" --configs "$CFG" --H 1e-3,2e-3,3e-3,4e-3,5e-3,6e-3,8e-3 -o "$OUT/t" > "$OUT/p.out" 2> "$OUT/p.err" ||
    fail "predict exit $?: $(cat "$OUT/p.err")"
cat "$OUT/p.out"
grep -q '^velocity-pressure,interface-model,rk4,trapezoidal,jacobi,extrapolate *achievable H 6 ms; H 8 ms: rho .* from t = ' "$OUT/p.out" ||
    fail "interface model: not 6 ms"
grep -q '^velocity-pressure,2,rk4,trapezoidal,jacobi,extrapolate *achievable H 3 ms; H 4 ms: rho ' "$OUT/p.out" ||
    fail "p = 2: not 3 ms"
[ "$(wc -l < "$OUT/t.csv")" -eq 15 ] || fail "t.csv: not 14 rows + header"
grep -q '^velocity-pressure,2,rk4,trapezoidal,jacobi,extrapolate,0.003,0.004,' "$OUT/t_achievable.csv" ||
    fail "t_achievable.csv: $(cat "$OUT/t_achievable.csv")"

bad() {
    "$HYMO" predict "$@" > "$OUT/b.out" 2> "$OUT/b.err"
    rc=$?
    [ $rc -eq 2 ] || fail "predict $*: exit $rc, not 2"
    [ "$(wc -l < "$OUT/b.err")" -eq 1 ] || fail "predict $*: not one line: $(cat "$OUT/b.err")"
    cat "$OUT/b.err"
}
bad "$M" --configs 'coupling=tlm' --H 2e-3 --reference "$OUT/none.h5"
bad "$M" --configs 'coupling=tlm' --H 2e-3 --points 2 --t-end 1
bad "$M" --configs 'colour=red'
bad "$M" --points 0.5
"$HYMO" run "$SRC/data/crane2.yaml" --t-end 0.1 -o "$OUT/c2.h5" -q || fail "crane2 reference"
bad "$M" --reference "$OUT/c2.h5"
bad "$M" --points 4 --sustain 5
echo "cli_predict: ok"
