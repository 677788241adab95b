#!/bin/sh
# hymo sweep with a plain --set and a two-parameter --set-grid
# (docs/overrides.md): the tables hold one row per point x H with the
# parameter columns, the sweep's TABLE.h5 records the plain override, every
# point's reference file records the plain override and that point's values,
# and the plain override changes the results (against a sweep without it).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_sweep_set
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml
KV='hydraulics.valves[dcv1].flow_coefficient'
CFG='coupling=velocity-pressure;extrapolation=2;hyd=rk4;mech=trapezoidal;scheme=jacobi'
sweep() { # $1 output base, rest: extra options
    out=$1; shift
    "$HYMO" sweep "$M" --t-end 1.2 --H 1e-3 --jobs 2 --configs "$CFG" \
        --set-grid "$KV=1e-8,2e-8" --set-grid 'bodies[body1].mass=300,450' "$@" -o "$OUT/$out" > "$OUT/$out.out" 2>&1 \
        || fail "sweep $out exited $?: $(cat "$OUT/$out.out")"
}
sweep fixed --set 'hydraulics.sources[pump].pressure=9e6'
sweep plain
head -1 "$OUT/fixed.csv" | grep -qF "$KV,bodies[body1].mass,coupling," || fail "header: $(head -1 "$OUT/fixed.csv")"
[ "$(wc -l < "$OUT/fixed.csv")" -eq 5 ] || fail "rows: $(wc -l < "$OUT/fixed.csv") lines (expected 1 + 4)"
h5dump -a /overrides "$OUT/fixed.h5" | grep -qF 'hydraulics.sources[pump].pressure=9e6' || fail "TABLE.h5 lacks the plain override"
h5dump -a /overrides "$OUT/plain.h5" > /dev/null 2>&1 && fail "a sweep without --set has an overrides attribute"
p=0
for v in '1e-8 300' '1e-8 450' '2e-8 300' '2e-8 450'; do
    set -- $v
    f="$OUT/fixed_reference_p$p.h5"
    a=$(h5dump -a /overrides "$f") || fail "$f has no overrides"
    for want in 'hydraulics.sources[pump].pressure=9e6' "$KV=$1" "bodies[body1].mass=$2"; do
        echo "$a" | grep -qF "$want" || fail "$f lacks $want"
    done
    grep -q "^$1,$2,velocity-pressure" "$OUT/fixed.csv" || fail "no row for point $1,$2"
    # the plain override changes the point's reference run (pump pressure)
    "$HYMO" compare "$OUT/plain_reference_p$p.h5" "$f" --allow-model-mismatch --max-abs p=1e3 > "$OUT/cmp.out" 2>&1
    [ $? -eq 1 ] || fail "point $p: the pump pressure override did not change the pressures: $(cat "$OUT/cmp.out")"
    p=$((p + 1))
done
echo "cli_sweep_set: ok"
