#!/bin/sh
# TLM coupling of hydraulic motors at the CLI (docs/cosimulation.md,
# "TLM coupling"): each motor port volume is a TLM
# line as a cylinder chamber is.  Against the monolithic `hymo run` at
# dt = 0.1 ms (something the co-simulation did not compute), with
# h_m = 0.1 ms and RK4 at h_h = 0.1 ms, Jacobi, p = 2:
#   motor_pendulum (motor only, 3 s): RMS s[motor1] 1.070e-6, 4.283e-6 rad
#     at H = 0.4, 0.8 ms (ratio 4.00 per doubling of H; 0.1..1.6 ms:
#     4.06, 4.01, 4.00, 4.00); max |E_res| 3.0e-12, 2.0e-12 J.
#   forestry_crane (3 cylinders + slewing motor, 3 s): RMS s[slew_motor]
#     2.51e-6, 6.55e-6 rad (ratio 2.61), s[cyl_lift] 3.74e-7, 1.02e-6 m
#     (ratio 2.73); max |E_res| 3.3e-11, 4.5e-11 J (round-off).
# Bounds: the figures within +-25 %, the ratios within the ranges below,
# |E_res| <= 1e-9 J.  With port volumes that differ, each line's Z_c and
# inertia L D^2 match a hand calculation.  A node holding two actuator
# ports is refused (exit 2, one line, no file).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_tlm_motor
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
cd "$OUT" || exit 1

# rms REF RUN COMPONENT: the RMS error of one component (hymo compare's PASS line)
rms() {
    "$HYMO" compare "$1" "$2" --max-rms "$3=1" --max-residual-energy 1e-9 > cmp.out 2>&1 ||
        fail "compare $2 $3: $(cat cmp.out)"
    awk '$1 == "PASS" && $2 == "rms" { print $5 }' cmp.out
}
# within VALUE LO HI
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v + 0 >= lo && v + 0 <= hi) }'; }
check() { within "$2" "$3" "$4" || fail "$1 = $2 not in [$3, $4]"; echo "$1 = $2"; }

# the motor-only model
P=$SRC/tests/models/motor_pendulum.yaml
"$HYMO" run "$P" --dt 1e-4 -q -o pref.h5 || fail "pendulum run exit $?"
for h in 0.0004 0.0008; do
    "$HYMO" cosim "$P" --coupling tlm --H $h --hm 1e-4 -q -o p_$h.h5 || fail "pendulum tlm H = $h exit $?"
done
e1=$(rms pref.h5 p_0.0004.h5 's[motor1]'); e2=$(rms pref.h5 p_0.0008.h5 's[motor1]')
check "pendulum rms s H=0.4ms" "$e1" 0.80e-6 1.34e-6
check "pendulum rms s H=0.8ms" "$e2" 3.2e-6 5.4e-6
check "pendulum ratio" "$(awk -v a="$e1" -v b="$e2" 'BEGIN { print b / a }')" 3.6 4.4

# port volumes that differ (VB 0.4 L instead of 0.2 L): each line's Z_c is T / C of its own volume, by hand
# C = V / B_oil + V / B_part (constant fluid: 1.5 GPa, the part 1 GPa), T = H = 1 ms: VA 3e9, VB 1.5e9 Pa s/m^3;
# the inertia L D^2 = T Z_c D^2 (D = 2e-5 m^3/rad): 1.2e-3, 6e-4 kg m^2; the two ends agree (|E_res| round-off)
sed -e '/name: VB/s/volume: 2.0e-4/volume: 4.0e-4/' "$P" > asym.yaml
"$HYMO" cosim asym.yaml --coupling tlm -o asym.h5 > asym.out 2>&1 || fail "asymmetric pendulum exit $?: $(cat asym.out)"
grep -q "^tlm motor1.port_a (VA): t = 0: Z_c 3e+09 Pa s/m^3, L 3e+06 Pa s^2/m^3, mass 0.0012 kg m^2" asym.out &&
    grep -q "^tlm motor1.port_b (VB): t = 0: Z_c 1.5e+09 Pa s/m^3, L 1.5e+06 Pa s^2/m^3, mass 0.0006 kg m^2" asym.out ||
    fail "asymmetric Z_c: $(grep ^tlm asym.out)"
# the summary keeps a motor's inertia (kg m^2) apart from the chambers' masses (kg): this model has no chamber
grep -q "^tlm            delay T = H = 0.001 s, 2 lines; motor ports' inertia L D^2 at most 0.0012 kg m^2 at t = 0" asym.out &&
    ! grep -q "parasitic mass L A^2" asym.out || fail "summary units: $(grep '^tlm  ' asym.out)"
check "asymmetric pendulum max |E_res|" "$(sed -n 's/^residual .*max |E| \([^ ]*\) J.*/\1/p' asym.out)" 0 1e-9

# the forestry crane: cylinders and the slewing motor together
M=$SRC/data/forestry_crane.yaml
"$HYMO" run "$M" --t-end 3 --dt 1e-4 -q -o cref.h5 || fail "crane run exit $?"
for h in 0.0004 0.0008; do
    "$HYMO" cosim "$M" --t-end 3 --coupling tlm --H $h --hm 1e-4 -o c_$h.h5 > c_$h.out 2>&1 ||
        fail "crane tlm H = $h exit $?: $(cat c_$h.out)"
done
grep -q "^tlm slew_motor.port_a (Vslew_p): t = 0: Z_c .* kg m^2" c_0.0008.out || fail "report: $(grep ^tlm c_0.0008.out)"
grep -q "^residual .*(4 bonds)" c_0.0008.out || fail "bonds: $(grep residual c_0.0008.out)"
m1=$(rms cref.h5 c_0.0004.h5 's[slew_motor]'); m2=$(rms cref.h5 c_0.0008.h5 's[slew_motor]')
l1=$(rms cref.h5 c_0.0004.h5 's[cyl_lift]'); l2=$(rms cref.h5 c_0.0008.h5 's[cyl_lift]')
check "crane rms s[slew_motor] H=0.4ms" "$m1" 1.9e-6 3.2e-6
check "crane rms s[slew_motor] H=0.8ms" "$m2" 4.9e-6 8.2e-6
check "crane slew ratio" "$(awk -v a="$m1" -v b="$m2" 'BEGIN { print b / a }')" 2.2 3.1
check "crane rms s[cyl_lift] H=0.4ms" "$l1" 2.8e-7 4.7e-7
check "crane rms s[cyl_lift] H=0.8ms" "$l2" 0.77e-6 1.28e-6
check "crane lift ratio" "$(awk -v a="$l1" -v b="$l2" 'BEGIN { print b / a }')" 2.2 3.3

# a motor port at a cylinder chamber's node: refused, one line, no file
sed -e 's/port_b: Vslew_r/port_b: Vlift_r/' \
    -e '/name: Vslew_r/,/initial_pressure/s/initial_pressure: static/initial_pressure: 1.0e6/' "$M" > shared.yaml
"$HYMO" cosim shared.yaml --coupling tlm --t-end 0.01 -o shared.h5 > shared.out 2> shared.err; code=$?
[ $code -eq 2 ] || fail "shared node exit $code"
[ "$(wc -l < shared.err)" -eq 1 ] && grep -q "node Vlift_r, which holds several such ports" shared.err ||
    fail "shared node message: $(cat shared.err)"
[ ! -e shared.h5 ] || fail "shared node left a file"
echo "PASS"
