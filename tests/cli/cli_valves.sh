#!/bin/sh
# Flow elements from the command line: data/pump_demo.yaml
# runs with its located events; a pump override changes the relief-held
# line pressure; the split co-simulation of the same model (pump, flow
# control valve and edged valve in one circuit) stays within 10 kPa and
# 1e-6 m of the monolithic run; a bad pump exits 2 with one line.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_valves
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/pump_demo.yaml

"$HYMO" run "$M" -o "$OUT/mono.h5" > "$OUT/mono.out" 2>&1 || fail "run exited $?: $(cat "$OUT/mono.out")"
grep -q "^events       6 located" "$OUT/mono.out" || fail "pump_demo events: $(grep events "$OUT/mono.out")"
grep -q "max 15.33 MPa (Vp" "$OUT/mono.out" || fail "pump_demo max pressure: $(grep pressures "$OUT/mono.out")"

# 1000 rpm instead of 1500: the line holds p_t + p_crack + Q/k_g with the smaller flow (15.26 MPa)
"$HYMO" run "$M" --t-end 1 --set 'hydraulics.pumps[pump1].speed_rpm=1000' -o "$OUT/set.h5" > "$OUT/set.out" 2>&1 \
    || fail "run --set exited $?: $(cat "$OUT/set.out")"
grep -q "max 15.26 MPa (Vp" "$OUT/set.out" || fail "pump at 1000 rpm: $(grep pressures "$OUT/set.out")"

# KLU: the whole cycle (the refactorisation with the old pivot order turns
# singular once a valve edge closes at t = 1.12 s; a fresh factorisation
# follows), equal to the dense run to round-off
"$HYMO" run "$M" --linear-solver klu -o "$OUT/klu.h5" > "$OUT/klu.out" 2>&1 || fail "klu run exited $?: $(cat "$OUT/klu.out")"
"$HYMO" compare "$OUT/mono.h5" "$OUT/klu.h5" --max-rms p=1e-3 --max-rms s=1e-12 > "$OUT/klu_cmp.out" 2>&1 \
    || fail "klu vs dense: $(cat "$OUT/klu_cmp.out")"

# co-simulation against the monolithic reference
"$HYMO" cosim "$M" --H 1e-3 --hh 1e-4 --reference "$OUT/mono.h5" --max-rms p=1e3 --max-rms s=1e-6 \
    -o "$OUT/cosim.h5" > "$OUT/cosim.out" 2>&1 || fail "cosim exited $?: $(cat "$OUT/cosim.out")"
grep -q "^verdict        accurate" "$OUT/cosim.out" || fail "cosim verdict: $(cat "$OUT/cosim.out")"

# bad input: one line, exit 2, no output file
"$HYMO" run "$M" --set 'hydraulics.pumps[pump1].speed=25' -o "$OUT/bad.h5" > "$OUT/bad.out" 2> "$OUT/bad.err"
code=$?; [ $code -eq 2 ] || fail "bad pump exited $code (expected 2)"
[ "$(wc -l < "$OUT/bad.err")" -eq 1 ] || fail "bad pump: not one line: $(cat "$OUT/bad.err")"
grep -q "pumps\[0\].speed_rpm: give either speed" "$OUT/bad.err" || fail "bad pump message: $(cat "$OUT/bad.err")"
[ -e "$OUT/bad.h5" ] && fail "bad pump left an output file"
echo "cli_valves: ok"
