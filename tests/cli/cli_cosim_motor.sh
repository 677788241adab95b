#!/bin/sh
# Hydraulic motors and driven joints in split co-simulation at the CLI
# (docs/cosimulation.md, "Hydraulic motors and driven
# joints"): the forestry crane (3 s) co-simulated with default settings
# passes `hymo compare` against `hymo run` on the slewing motor's angle and
# torque (measured over 3 s: 2.2e-7 rad, 36 N m); TLM runs (tests/cli/cli_tlm_motor.sh
# checks it); the FMU parts (mechanics, the circuit
# with the motor) wired by a system file reproduce the split bit for bit,
# and so do those of the driven-joint model; the `whole` FMU of the crane
# reproduces `hymo run` bit for bit (its outputs include the motor); the
# driven-joint model co-simulates and refuses the interface model.
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

# TLM: the motor's ports are lines too (convergence and energy in cli_tlm_motor.sh)
"$HYMO" cosim "$M" --t-end 0.1 --coupling tlm -q -o tlm.h5 || fail "tlm exit $?"

# FMU parts: mechanics + circuit1 of the crane (the motor's p_a, p_b) wired by a system file reproduce the
# split bit for bit (Jacobi and Gauss-Seidel); so do those of the driven-joint model
"$HYMO" fmu "$M" --part mechanics -o fc_mech.fmu -q || fail "fmu mechanics exit $?"
"$HYMO" fmu "$M" --part circuit:slew_motor -o fc_c1.fmu -q || fail "fmu circuit:slew_motor exit $?"
system() { # $1 model, $2 scheme, $3 prefix, then NAME:EFFORTS... wiring
    m=$1; sch=$2; pre=$3; shift 3
    printf 'H: 0.001\nt_end: 10\nscheme: %s\nextrapolation: 2\nmodel: %s\n' $sch "$m"
    [ $sch = gauss-seidel ] && echo "order: [mech, [c1]]"
    printf 'subsystems:\n  mech: {fmu: %s_mech.fmu}\n  c1: {fmu: %s_c1.fmu}\nconnections:\n' $pre $pre
    for w in "$@"; do
        n=${w%%:*}; e=${w#*:}
        for q in s sd; do printf '  - from: mech.%s.%s\n    to: c1.%s.%s\n' $n $q $n $q; done
        for q in ${e%%:*} ${e#*:}; do printf '  - from: c1.%s.%s\n    to: mech.%s.%s\n' $n $q $n $q; done
    done
}
for sch in jacobi gauss-seidel; do
    system "$M" $sch fc cyl_lift:p_piston:p_rod cyl_fold:p_piston:p_rod cyl_tele:p_piston:p_rod \
        slew_motor:p_a:p_b > sys_$sch.yaml
    opt=""; [ $sch = gauss-seidel ] && opt="--scheme gauss-seidel"
    "$HYMO" cosim "$M" --t-end 2 $opt -q -o split_$sch.h5 || fail "split $sch exit $?"
    "$HYMO" cosim sys_$sch.yaml --t-end 2 -o sys_$sch.h5 > sys.out 2>&1 || fail "system $sch exit $?: $(cat sys.out)"
    grep -q "4 power bonds" sys.out || fail "system $sch bonds: $(cat sys.out)"
    $PY "$SRC/tests/fmu/compare_h5.py" split_$sch.h5 sys_$sch.h5 --tol 1e-12 || fail "system $sch differs from split"
done
D=$SRC/tests/models/makeup_demo.yaml
"$HYMO" fmu "$D" --part mechanics -o md_mech.fmu -q && "$HYMO" fmu "$D" --part circuit:cyl -o md_c1.fmu -q ||
    fail "fmu makeup_demo exit $?"
system "$D" jacobi md cyl:p_piston:p_rod > md.yaml
"$HYMO" cosim "$D" -q -o md_split.h5 || fail "makeup_demo split exit $?"
"$HYMO" cosim md.yaml --t-end 1 -q -o md_sys.h5 || fail "makeup_demo system exit $?"
$PY "$SRC/tests/fmu/compare_h5.py" md_split.h5 md_sys.h5 --tol 1e-12 || fail "makeup_demo system differs from split"
# whole: includes the motor and reproduces hymo run
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
