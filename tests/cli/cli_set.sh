#!/bin/sh
# --set PATH=VALUE model overrides (docs/overrides.md) on crane1: a run with
# an override changes the result and records it (root attribute
# `overrides`, `hymo info`, its own model hashes); unknown paths and refused
# values exit 2 with one line naming the problem; cosim --set; a sweep over
# a two-parameter --set-grid writes its tables with both parameter columns
# and a reference per point recording that point's overrides.
# Tolerances a file leaves out are settable too, with the same checks.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_set
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml
KV='hydraulics.valves[dcv1].flow_coefficient'   # the valve opens at t = 1 s

# 1. run with and without the override: different results, the override recorded
"$HYMO" run "$M" --t-end 1.3 -q -o "$OUT/base.h5" || fail "base run exited $?"
"$HYMO" run "$M" --t-end 1.3 --set "$KV=2e-8" -o "$OUT/set.h5" > "$OUT/set.out" 2>&1 \
    || fail "run --set exited $?: $(cat "$OUT/set.out")"
grep -qF "overrides    $KV=2e-8" "$OUT/set.out" || fail "run summary lacks the override: $(cat "$OUT/set.out")"
h5dump -a /overrides "$OUT/set.h5" | grep -qF "\"$KV=2e-8\"" || fail "root attribute overrides"
h5dump -a /overrides "$OUT/base.h5" > /dev/null 2>&1 && fail "a run without --set has an overrides attribute"
"$HYMO" info "$OUT/set.h5" > "$OUT/info.out" 2>&1 || fail "info exited $?"
grep -qF "overrides    $KV=2e-8" "$OUT/info.out" || fail "info lacks the override: $(cat "$OUT/info.out")"
# the result changed: compare fails it as another model, and with the
# mismatch allowed the stroke differs by more than 1 mm
"$HYMO" compare "$OUT/base.h5" "$OUT/set.h5" > "$OUT/cmp.out" 2>&1
code=$?; [ $code -eq 1 ] || fail "compare of a run with another valve exited $code (expected 1)"
grep -q "is a run of another model" "$OUT/cmp.out" || fail "compare message: $(cat "$OUT/cmp.out")"
"$HYMO" compare "$OUT/base.h5" "$OUT/set.h5" --allow-model-mismatch --max-abs s=1e-3 > "$OUT/cmp2.out" 2>&1
code=$?; [ $code -eq 1 ] || fail "the override did not change the stroke by 1 mm (compare exit $code): $(cat "$OUT/cmp2.out")"
# the same override twice: same physics; a simulation-only override keeps the physics hash
"$HYMO" run "$M" --t-end 1.3 -q --set="$KV=2e-8" -o "$OUT/set2.h5" || fail "run --set= exited $?"
"$HYMO" compare "$OUT/set.h5" "$OUT/set2.h5" --max-abs s=1e-300 > "$OUT/cmp3.out" 2>&1 \
    || fail "two runs with the same override differ: $(cat "$OUT/cmp3.out")"
"$HYMO" run "$M" --t-end 1.3 -q --set simulation.tolerances.position=1e-12 -o "$OUT/sim.h5" || fail "simulation override"
"$HYMO" compare "$OUT/base.h5" "$OUT/sim.h5" > "$OUT/cmp4.out" 2>&1 || true
grep -q "same model_physics_sha256" "$OUT/cmp4.out" || fail "simulation-only override: $(cat "$OUT/cmp4.out")"

# 2. bad paths and values: exit 2, one line, naming the problem; no file
bad() { # $1 override, $2 expected text
    "$HYMO" run "$M" --t-end 0.01 -q --set "$1" -o "$OUT/bad.h5" > "$OUT/bad.out" 2>&1
    code=$?; [ $code -eq 2 ] || fail "--set $1 exited $code (expected 2)"
    [ "$(wc -l < "$OUT/bad.out")" -eq 1 ] || fail "--set $1: not one line: $(cat "$OUT/bad.out")"
    grep -qF -- "$2" "$OUT/bad.out" || fail "--set $1: message lacks '$2': $(cat "$OUT/bad.out")"
    [ ! -e "$OUT/bad.h5" ] || fail "--set $1 left a file"
}
bad 'hydraulics.valves[dcv9].flow_coefficient=1e-8' "no item named 'dcv9' in hydraulics.valves (1 item [0]..[0], names: dcv1)"
bad 'hydraulics.valvez[0].flow_coefficient=1e-8' "no key 'valvez' in hydraulics (keys: fluid sources"
bad 'hydraulics.valves[7].flow_coefficient=1e-8' "no item [7] in hydraulics.valves"
bad 'hydraulics.valves[dcv1]=1' "is a mapping"
bad 'bodies[body1].mass' "expected PATH=VALUE"
bad "$KV=-1" "crane1.yaml:101: hydraulics.valves[0].flow_coefficient: must be positive, got -1 (from --set $KV=-1)"
bad "$KV=abc" "expected a finite number, got 'abc' (from --set $KV=abc)"
bad 'bodies[body1].colour=red' "unknown field"
bad 'simulation.dt=0' "simulation.dt: must be positive, got 0 (from --set simulation.dt=0)"

# 3. cosim --set: recorded in its file too
"$HYMO" cosim "$M" --t-end 1.2 --H 1e-3 --hh 1e-4 --set "$KV=2e-8" -o "$OUT/co.h5" > "$OUT/co.out" 2>&1 \
    || fail "cosim --set exited $?: $(cat "$OUT/co.out")"
grep -qF "overrides    $KV=2e-8" "$OUT/co.out" || fail "cosim summary lacks the override"
h5dump -a /overrides "$OUT/co.h5" | grep -qF "\"$KV=2e-8\"" || fail "cosim file: root attribute overrides"
"$HYMO" cosim "$M" --t-end 1.2 --H 1e-3 --set "$KV=0" -o "$OUT/co_bad.h5" > "$OUT/co_bad.out" 2>&1
code=$?; [ $code -eq 2 ] || fail "cosim bad --set exited $code"
grep -qF "(from --set $KV=0)" "$OUT/co_bad.out" || fail "cosim bad --set message: $(cat "$OUT/co_bad.out")"

# 4. sweep over two parameters (2 x 2 points, one configuration, two H)
"$HYMO" sweep "$M" --t-end 1.2 --H 1e-3,2e-3 --jobs 2 \
    --configs 'coupling=velocity-pressure;extrapolation=2;hyd=rk4;mech=trapezoidal;scheme=jacobi' \
    --set-grid "$KV=1e-8,2e-8" --set-grid 'bodies[body1].mass=100,200' -o "$OUT/sw" > "$OUT/sw.out" 2>&1 \
    || fail "sweep exited $?: $(cat "$OUT/sw.out")"
head -1 "$OUT/sw.csv" | grep -qF "$KV,bodies[body1].mass,coupling," || fail "sweep header: $(head -1 "$OUT/sw.csv")"
[ "$(wc -l < "$OUT/sw.csv")" -eq 9 ] || fail "sweep rows: $(wc -l < "$OUT/sw.csv") lines (expected 1 + 8)"
for v in 1e-8,100 1e-8,200 2e-8,100 2e-8,200; do
    [ "$(grep -c "^$v,velocity-pressure" "$OUT/sw.csv")" -eq 2 ] || fail "sweep rows of point $v"
    grep -q "^$v,velocity-pressure,.*,0.00[12]$" "$OUT/sw_achievable.csv" || fail "achievable row of $v"
done
# the runs differ between points (rms_p column depends on the parameters)
[ "$(cut -d, -f14 "$OUT/sw.csv" | sort -u | wc -l)" -ge 8 ] || fail "sweep rows identical across points"
h5dump -n "$OUT/sw.h5" | grep -qF "/runs/bodies[body1].mass" || fail "sweep HDF5 parameter column"
h5dump -n "$OUT/sw.h5" | grep -qF "/achievable/$KV" || fail "sweep HDF5 achievable parameter column"
p=0
for v in '1e-8 100' '1e-8 200' '2e-8 100' '2e-8 200'; do
    set -- $v
    f="$OUT/sw_reference_p$p.h5"
    h5dump -a /overrides "$f" | grep -qF "$KV=$1" || fail "$f lacks $KV=$1"
    h5dump -a /overrides "$f" | grep -qF "bodies[body1].mass=$2" || fail "$f lacks the mass $2"
    p=$((p + 1))
done
# a bad grid value is refused before anything runs
"$HYMO" sweep "$M" --t-end 1.2 --H 1e-3 --set-grid "$KV=1e-8,-1" -o "$OUT/sw_bad" > "$OUT/swb.out" 2>&1
code=$?; [ $code -eq 2 ] || fail "sweep bad grid value exited $code"
[ ! -e "$OUT/sw_bad_reference_p0.h5" ] || fail "sweep ran before refusing a bad grid value"
"$HYMO" sweep "$M" --H 1e-3 --set-grid "$KV=1e-8" --reference "$OUT/base.h5" -o "$OUT/sw_bad" > "$OUT/swb.out" 2>&1
code=$?; [ $code -eq 2 ] || fail "sweep --set-grid with --reference exited $code"

# 5. tolerances a file does not name: crane1 without its tolerances block
# takes every simulation.tolerances.* by --set, checked like a value in the
# file; a tighter position tolerance costs iterations
grep -v 'tolerances' "$M" > "$OUT/notol.yaml"
grep -q tolerances "$OUT/notol.yaml" && fail "notol.yaml still names tolerances"
"$HYMO" run "$OUT/notol.yaml" --t-end 0.5 -o "$OUT/notol.h5" > "$OUT/notol.out" 2>&1 \
    || fail "run without tolerances exited $?: $(cat "$OUT/notol.out")"
TP='simulation.tolerances.position'
"$HYMO" run "$OUT/notol.yaml" --t-end 0.5 --set "$TP=1e-10" -o "$OUT/tight.h5" > "$OUT/tight.out" 2>&1 \
    || fail "--set $TP=1e-10 on a file without tolerances exited $?: $(cat "$OUT/tight.out")"
grep -qF "overrides    $TP=1e-10" "$OUT/tight.out" || fail "summary lacks $TP: $(cat "$OUT/tight.out")"
h5dump -a /overrides "$OUT/tight.h5" | grep -qF "\"$TP=1e-10\"" || fail "tight.h5: root attribute overrides"
it0=$(grep '^iterations' "$OUT/notol.out"); it1=$(grep '^iterations' "$OUT/tight.out")
[ "$it0" != "$it1" ] || fail "a position tolerance of 1e-10 did not change the iterations: $it1"
for k in pressure=1 spool=1e-9; do
    "$HYMO" run "$OUT/notol.yaml" --t-end 0.05 -q --set "simulation.tolerances.$k" -o "$OUT/tk.h5" \
        || fail "--set simulation.tolerances.$k exited $?"
    h5dump -a /overrides "$OUT/tk.h5" | grep -qF "simulation.tolerances.$k" || fail "tk.h5 lacks $k"
done
M=$OUT/notol.yaml
bad "$TP=-1" "simulation.tolerances.position: must be positive, got -1 (from --set $TP=-1)"
bad "$TP=abc" "simulation.tolerances.position: expected a finite number, got 'abc' (from --set $TP=abc)"
bad 'simulation.tolerances.spool=0' "simulation.tolerances.spool: must be positive, got 0"
bad 'simulation.tolerances.positon=1' "simulation.tolerances.positon: unknown field"
echo "cli_set: ok"
