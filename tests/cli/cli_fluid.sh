#!/bin/sh
# Cavitation-safe fluid and accumulators from the CLI:
# the per-volume pressure ranges in `hymo run`/`info`, the NON-PHYSICAL flag
# per volume with the constant law, and a model with an accumulator run
# monolithic (trapezoidal, IDA) and split (hymo cosim) to the same pressures.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_fluid
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/tests/models/accumulator_boom.yaml

# 1. default fluid (no model key): entrained air, each volume's range, the event
"$HYMO" run "$M" -o "$OUT/acc.h5" > "$OUT/acc.txt" || fail "run exited $?"
grep -q "^fluid        entrained_air, floor 1000 Pa (vapour pressure)" "$OUT/acc.txt" || fail "no fluid line: $(cat "$OUT/acc.txt")"
grep -q "^  V1         min 1.447.. MPa at 0 s, max 2.078.. MPa at 1 s" "$OUT/acc.txt" || fail "V1 range: $(grep V1 "$OUT/acc.txt")"
grep -q "^  V2         min 0.1 MPa at 0 s" "$OUT/acc.txt" || fail "V2 range: $(grep V2 "$OUT/acc.txt")"
grep -q "^events       1 located" "$OUT/acc.txt" || fail "accumulator charge not located: $(grep events "$OUT/acc.txt")"
grep -q "NON-PHYSICAL" "$OUT/acc.txt" && fail "flagged"
"$HYMO" info "$OUT/acc.h5" > "$OUT/info.txt" || fail "info exited $?"
grep "^  V" "$OUT/acc.txt" > "$OUT/a1"; grep "^  V" "$OUT/info.txt" > "$OUT/a2"
cmp -s "$OUT/a1" "$OUT/a2" || fail "hymo info's ranges differ from the run's"
h5dump -a /states/volume_names "$OUT/acc.h5" | grep -q '"V2"' || fail "/states/volume_names"
h5dump -a /states/fluid_model "$OUT/acc.h5" | grep -q '"entrained_air"' || fail "/states/fluid_model"

# 2. IDA and the split co-simulation agree with it (V1, V2 at 1 s within 2 kPa)
"$HYMO" run "$M" --integrator ida -o "$OUT/ida.h5" -q || fail "ida exited $?"
"$HYMO" cosim "$M" -o "$OUT/cs.h5" -q || fail "cosim exited $?"
last() { h5dump -m %.10g -d /states/p -s "1000,0" -c "1,2" "$1" | sed -n 's/.*(1000,[01]): \([-0-9.e+]*\).*/\1/p' | tr '\n' ' '; }
ref=$(last "$OUT/acc.h5")
for f in ida cs; do
    got=$(last "$OUT/$f.h5")
    [ -n "$got" ] || fail "$f: no row 1000"
    echo "$ref $got" | awk '{ if ((($1 - $3) ^ 2) ^ 0.5 > 2e3 || (($2 - $4) ^ 2) ^ 0.5 > 2e3) exit 1 }' \
        || fail "$f: p(1 s) = $got, trapezoidal $ref"
done

# 3. the constant law on a cavitating boom: the volume is flagged, the floor is 0 Pa
sed -e 's/density: 850}/density: 850, model: constant}/' -e 's/{name: pump, pressure: 5.0e6}/{name: pump, pressure: 1.0e5}/' \
    -e 's/initial_pressure: static/initial_pressure: 1.0e5/' -e '/accumulators:/,$d' "$M" > "$OUT/cav.yaml"
"$HYMO" run "$OUT/cav.yaml" --t-end 0.3 -o "$OUT/cav.h5" > "$OUT/cav.txt" || fail "constant run exited $?"
grep -q "^fluid        constant, floor 0 Pa absolute" "$OUT/cav.txt" || fail "constant fluid line: $(cat "$OUT/cav.txt")"
grep -q "^  V2 .*NON-PHYSICAL (below 0 Pa absolute)" "$OUT/cav.txt" || fail "V2 not flagged: $(cat "$OUT/cav.txt")"
grep -q "^  V1 .*NON-PHYSICAL" "$OUT/cav.txt" && fail "V1 flagged"
# the same without `model: constant`: entrained air holds V2 above the floor
sed -e 's/, model: constant}/}/' "$OUT/cav.yaml" > "$OUT/air.yaml"
"$HYMO" run "$OUT/air.yaml" --t-end 0.3 -o "$OUT/air.h5" > "$OUT/air.txt" || fail "air run exited $?"
grep -q "NON-PHYSICAL" "$OUT/air.txt" && fail "entrained air flagged: $(cat "$OUT/air.txt")"
"$HYMO" run "$OUT/cav.yaml" --t-end 0.3 -o "$OUT/cav2.h5" -q
h5dump -a /states/volume_below_floor "$OUT/cav2.h5" | grep -q "(0): 0, 1" || fail "/states/volume_below_floor"
echo "cli_fluid: ok"
