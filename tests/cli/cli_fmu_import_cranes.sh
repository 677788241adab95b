#!/bin/sh
# FMU import end to end: crane1 and crane2 exported by
# `hymo fmu` as mechanics + one FMU per circuit and run through
# `hymo cosim SYSTEM.yaml` reproduce `hymo cosim MODEL.yaml` of the same
# configuration (defaults: velocity-pressure, p = 2, RK4, H = 1 ms) to
# <= 1e-12 relative in every dataset (measured: bit-identical; over the
# full 30 s too, see docs/fmi.md), Jacobi and Gauss-Seidel; `whole` FMUs
# reproduce `hymo run`.  Shorter spans here (3 s crane1, 2 s crane2).
# Also: the system run against a `hymo run` reference has the split's
# errors, and a reference of another model than model: is refused (exit 2).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_fmu_import_cranes
PY=/usr/bin/python3
CMP="$PY $SRC/tests/fmu/compare_h5.py"
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
cd "$OUT" || exit 1

system() { # $1 model, $2 scheme, $3 circuits...; system file on stdout
    m=$1; scheme=$2; shift 2
    echo "H: 0.001"
    echo "t_end: 30"
    echo "scheme: $scheme"
    [ "$scheme" = gauss-seidel ] && echo "order: [mech, [$(echo "$@" | sed 's/ /, /g')]]"
    echo "extrapolation: 2"
    echo "model: $SRC/data/$m.yaml"
    echo "subsystems:"
    echo "  mech: {fmu: ${m}_mech.fmu}"
    for c in "$@"; do echo "  $c: {fmu: ${m}_$c.fmu}"; done
    echo "connections:"
}
wire() { # $1 circuit, $2 cylinder
    for q in s sd; do printf '  - from: mech.%s.%s\n    to: %s.%s.%s\n' "$2" $q "$1" "$2" $q; done
    for q in p_piston p_rod; do printf '  - from: %s.%s.%s\n    to: mech.%s.%s\n' "$1" "$2" $q "$2" $q; done
}

for m in crane1 crane2; do
    M=$SRC/data/$m.yaml
    if [ $m = crane1 ]; then T=3; CIRC="circuit1"; else T=2; CIRC="circuit1 circuit2"; fi
    "$HYMO" fmu "$M" --part mechanics -o ${m}_mech.fmu -q || fail "$m: export mechanics exit $?"
    for c in $CIRC; do "$HYMO" fmu "$M" --part circuit:$c -o ${m}_$c.fmu -q || fail "$m: export $c exit $?"; done
    for scheme in jacobi gauss-seidel; do
        { system $m $scheme $CIRC; wire circuit1 cyl1; [ $m = crane2 ] && wire circuit2 cyl2; } > ${m}_$scheme.yaml
        opt=""; [ $scheme = gauss-seidel ] && opt="--scheme gauss-seidel"
        "$HYMO" cosim "$M" --t-end $T $opt -q -o split_${m}_$scheme.h5 || fail "$m $scheme: split exit $?"
        "$HYMO" cosim ${m}_$scheme.yaml --t-end $T -o sys_${m}_$scheme.h5 > sys.out 2>&1 ||
            fail "$m $scheme: system exit $?: $(cat sys.out)"
        grep -q "1 power bonds\|2 power bonds" sys.out || fail "$m $scheme: bonds: $(cat sys.out)"
        printf '%s %s: ' $m $scheme
        $CMP split_${m}_$scheme.h5 sys_${m}_$scheme.h5 --tol 1e-12 || fail "$m $scheme: system differs from split"
    done
    # the schemes differ (the comparison above can see a difference)
    $CMP sys_${m}_jacobi.h5 sys_${m}_gauss-seidel.h5 --tol 1e-9 > /dev/null && fail "$m: Jacobi = Gauss-Seidel?"
    # whole: the monolithic engine as one FMU, its valve signals left to the model
    "$HYMO" fmu "$M" --part whole -o ${m}_whole.fmu -q || fail "$m: export whole exit $?"
    printf 'H: 0.001\nt_end: 30\nsubsystems:\n  %s: {fmu: %s_whole.fmu, free_inputs: all}\nconnections: []\n' $m $m \
        > ${m}_whole.yaml
    "$HYMO" cosim ${m}_whole.yaml --t-end $T -q -o sys_${m}_whole.h5 || fail "$m whole: system exit $?"
    "$HYMO" run "$M" --t-end $T -q -o run_$m.h5 || fail "$m: run exit $?"
    printf '%s whole: ' $m
    $PY "$SRC/tests/fmu/compare_whole.py" sys_${m}_whole.h5 $m run_$m.h5 --tol 1e-12 || fail "$m whole differs from run"
done

# errors against a monolithic reference: the same as the split's
"$HYMO" cosim "$SRC/data/crane1.yaml" --t-end 3 --reference run_crane1.h5 > split_ref.out 2>&1 ||
    fail "split with reference exit $?"
"$HYMO" cosim crane1_jacobi.yaml --t-end 3 --reference run_crane1.h5 > sys_ref.out 2>&1 ||
    fail "system with reference exit $?: $(cat sys_ref.out)"
grep "^  s \|^verdict" split_ref.out > a.txt; grep "^  s \|^verdict" sys_ref.out > b.txt
[ -s a.txt ] && cmp -s a.txt b.txt || fail "errors differ: $(cat a.txt b.txt)"
"$HYMO" cosim crane1_jacobi.yaml --t-end 2 --reference run_crane2.h5 -o x.h5 > bad.out 2> bad.err; code=$?
[ $code -eq 2 ] && grep -q "the reference is of another model" bad.err && [ ! -e x.h5 ] ||
    fail "reference of crane2 for crane1: exit $code: $(cat bad.err)"
echo "PASS"
