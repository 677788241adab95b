#!/bin/sh
# Hydraulic motors and driven joints in split co-simulation at the CLI
# (branch motor-cosim; docs/cosimulation.md, "Hydraulic motors and driven
# joints"): the forestry crane (3 s) co-simulated with default settings
# passes `hymo compare` against `hymo run` on the slewing motor's angle and
# torque (measured over 3 s: 2.2e-7 rad, 36 N m); TLM is refused naming the
# motor (exit 2, one line, no file); FMU parts refuse motors and driven
# joints; the `whole` FMU of the crane reproduces `hymo run` bit for bit
# (its outputs include the motor); the driven-joint model co-simulates.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_cosim_motor
PY=/usr/bin/python3
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/forestry_crane.yaml
cd "$OUT" || exit 1

"$HYMO" run "$M" --t-end 3 -q -o ref.h5 || fail "reference run exit $?"
"$HYMO" cosim "$M" --t-end 3 --reference ref.h5 -o co.h5 > co.out 2>&1; code=$?
[ $code -eq 0 ] || fail "cosim exit $code: $(cat co.out)"
grep -q "^residual .*(4 bonds)" co.out || fail "bonds: $(grep residual co.out)"
"$HYMO" compare ref.h5 co.h5 --max-abs 's[slew_motor]=5e-7' --max-abs 'force[slew_motor]=75' \
    --max-residual-energy 0.1 > gate.out 2>&1; code=$?
[ $code -eq 0 ] || fail "gate exit $code: $(cat gate.out)"
"$HYMO" compare ref.h5 co.h5 --max-abs 's[slew_motor]=1e-12' > strict.out 2>&1; code=$?
[ $code -eq 1 ] && grep -q "^FAIL abs s\[slew_motor\]" strict.out || fail "strict gate exit $code: $(cat strict.out)"
h5dump -A -d /cosim/residual_energy co.h5 | grep -q '"slew_motor"' || fail "bond name slew_motor"

# TLM: refused with one line naming the motor and the option, no file
"$HYMO" cosim "$M" --t-end 3 --coupling tlm -o tlm.h5 > tlm.out 2> tlm.err; code=$?
[ $code -eq 2 ] || fail "tlm exit $code"
[ "$(wc -l < tlm.err)" -eq 1 ] && grep -q "motors\[0\] (slew_motor): --coupling tlm" tlm.err || fail "tlm message: $(cat tlm.err)"
[ ! -e tlm.h5 ] || fail "tlm left a file"

# FMU parts: refused with one line; whole: includes the motor and reproduces hymo run
for part in mechanics circuit:circuit1; do
    "$HYMO" fmu "$M" --part $part -o part.fmu > fmu.out 2> fmu.err; code=$?
    [ $code -eq 2 ] && [ "$(wc -l < fmu.err)" -eq 1 ] && grep -q "slew_motor" fmu.err && [ ! -e part.fmu ] ||
        fail "fmu --part $part: exit $code: $(cat fmu.err)"
done
"$HYMO" fmu "$SRC/tests/models/makeup_demo.yaml" --part mechanics -o part.fmu > fmu.out 2> fmu.err; code=$?
[ $code -eq 2 ] && grep -q "driven_joints\[0\] (pull)" fmu.err || fail "fmu driven: exit $code: $(cat fmu.err)"
"$HYMO" fmu "$M" --part whole -o whole.fmu -q || fail "fmu whole exit $?"
printf 'H: 0.001\nt_end: 10\nsubsystems:\n  fc: {fmu: whole.fmu, free_inputs: all}\nconnections: []\n' > whole.yaml
"$HYMO" cosim whole.yaml --t-end 3 -q -o sys_whole.h5 || fail "whole system exit $?"
$PY "$SRC/tests/fmu/compare_whole.py" sys_whole.h5 fc ref.h5 --tol 1e-12 || fail "whole FMU differs from run"

# driven joint: runs, and its reaction is a column as in hymo run
D=$SRC/tests/models/makeup_demo.yaml
"$HYMO" run "$D" -q -o dref.h5 || fail "driven run exit $?"
"$HYMO" cosim "$D" --reference dref.h5 -o dco.h5 > dco.out 2>&1 || fail "driven cosim exit $?: $(cat dco.out)"
"$HYMO" compare dref.h5 dco.h5 --max-abs 'z=1e-12' --max-abs 'force[pull]=300' > dgate.out 2>&1 ||
    fail "driven gate: $(cat dgate.out)"
"$HYMO" cosim "$D" --extrapolation interface-model -o dim.h5 > dim.out 2> dim.err; code=$?
[ $code -eq 2 ] && grep -q "driven_joints\[0\] (pull): --extrapolation interface-model" dim.err ||
    fail "driven interface model: exit $code: $(cat dim.err)"
echo "PASS"
