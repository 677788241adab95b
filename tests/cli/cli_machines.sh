#!/bin/sh
# The shipped machines (data/excavator.yaml, data/forestry_crane.yaml;
# docs/models.md) through tests/machines_check.py (the order on a short
# span so that CI stays fast; all checks over the whole cycles:
# bench/machines.sh):
#   double-step vs penalty (1e-6 rad or m, 100 Pa), fast vs numeric Jacobian,
#   second order against a dt/8 run, no absolute pressure below the floor
#   (the entrained-air fluid's vapour pressure; 0 Pa for a constant fluid), every
#   relief-protected volume below p_to + p_crack + Q_in,max / k_g, and the
#   min/max pressure line of the summary;
# then the check's own guard: the excavator with the constant-bulk-modulus
# fluid, an atmospheric return line and a blocked make-up valve in the arm's
# piston side (a -8.5 MPa case) must FAIL the floor check; with
# the entrained-air fluid the same circuit stays above its floor.
# args: $1 hymo binary, $2 source dir, $3 build dir; HYMO_MACHINES_PART =
# excavator, forestry_crane or guard runs that part only (ctest: one entry
# each), else all of them.
set -u
HYMO=$1; SRC=$2; PART=${HYMO_MACHINES_PART:-all}; OUT=$3/cli_machines_$PART
part() { [ "$PART" = all ] || [ "$PART" = "$1" ]; }
PY=/usr/bin/python3
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
"$PY" -c "import h5py, numpy, yaml" 2>/dev/null || { echo "SKIP: /usr/bin/python3 lacks h5py/numpy/yaml (scripts/deps.sh)"; exit 77; }
CHECK="$PY $SRC/tests/machines_check.py --hymo $HYMO --out $OUT"

# Every check but the order over the whole 10 s cycles (a penalty
# acceleration projection without its bias term shows only after 3 s: the
# excavator's formulations differ by 2.8e-6 rad over 10 s, 1.3e-8 over 3 s);
# the order (four runs down to dt/8) over 0..3 s of the excavator (boom
# lowering, arm-in start with the make-up valve, relief) and 0..3.5 s of the
# crane (lift, slewing braked on the shock valves).
ALL=formulations,jacobian,floor,relief,summary
if part excavator; then
    $CHECK --model "$SRC/data/excavator.yaml" --checks $ALL --json "$OUT/excavator.json" || fail "excavator"
    $CHECK --model "$SRC/data/excavator.yaml" --checks order --t-end 3 --json "$OUT/excavator_order.json" \
        || fail "excavator order"
fi
if part forestry_crane; then
    $CHECK --model "$SRC/data/forestry_crane.yaml" --checks $ALL --json "$OUT/forestry_crane.json" || fail "forestry crane"
    $CHECK --model "$SRC/data/forestry_crane.yaml" --checks order --t-end 3.5 --json "$OUT/forestry_crane_order.json" \
        || fail "forestry crane order"
fi
part guard || { echo "cli_machines ($PART): ok"; exit 0; }

# the floor check fails on a cavitating circuit ...
BLOCK="--set hydraulics.sources[tank].pressure=1.0e5 --set hydraulics.check_valves[makeup_arm_p].area=1e-6"
# (model: constant refuses the air keys, so the fluid is edited in a copy)
sed -e 's/model: entrained_air,$/model: constant}/' -e '/air_fraction: 1.0e-3, reference_pressure/d' \
    "$SRC/data/excavator.yaml" > "$OUT/excavator_constant.yaml"
grep -q "model: constant}" "$OUT/excavator_constant.yaml" || fail "could not edit the fluid of the copy"
$CHECK --model "$OUT/excavator_constant.yaml" --t-end 3 --checks floor $BLOCK > "$OUT/planted.txt" 2>&1 \
    && fail "floor check passed a cavitating arm circuit: $(cat "$OUT/planted.txt")"
grep -q "^floor *FAIL min absolute pressure -" "$OUT/planted.txt" || fail "planted: $(cat "$OUT/planted.txt")"
# ... which the entrained-air fluid keeps above its floor
$CHECK --model "$SRC/data/excavator.yaml" --t-end 3 --checks floor $BLOCK > "$OUT/air.txt" 2>&1 \
    || fail "entrained air: $(cat "$OUT/air.txt")"
echo "cli_machines ($PART): ok"
