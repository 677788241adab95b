#!/bin/sh
# The scissor lift family (bench/gen_models.py scissor N [--cylinders 2]):
# N = 2 and N = 20 (penalty's sparse block, Phi_d by KLU) with one lift
# cylinder and N = 6 with two run 0.3 s with both formulations and both
# linear solvers (fast Jacobian); the lift rises (the rod extends and the
# platform's lowest joint angle grows), every pressure stays between the
# tank's and the pump's (the masses are scaled so that the 4-stage lift's
# cylinder force holds at every N), and penalty and double-step agree to
# 1e-8 rad or m in every joint coordinate at every step.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_scissor
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "no /usr/bin/python3: skipped"; exit 77; }

for spec in "2 1" "20 1" "6 2"; do
    set -- $spec
    n=$1; c=$2; m="$OUT/scissor$n-$c.yaml"
    "$PY" "$SRC/bench/gen_models.py" scissor $n --cylinders $c -o "$m" || fail "gen_models.py scissor $n --cylinders $c exited $?"
    for form in double-step penalty; do
        for ls in dense klu; do
            "$HYMO" run "$m" --t-end 0.3 --formulation $form --jacobian fast --linear-solver $ls --no-estimate \
                -o "$OUT/s$n-$c-$form-$ls.h5" -q || fail "scissor $n ($c cylinders) $form $ls exited $?"
        done
    done
    for ls in dense klu; do
        "$HYMO" compare "$OUT/s$n-$c-double-step-$ls.h5" "$OUT/s$n-$c-penalty-$ls.h5" --max-abs z=1e-8 \
            > "$OUT/s$n-$c-$ls.cmp" || fail "scissor $n ($c cylinders) $ls: penalty and double-step differ: $(cat "$OUT/s$n-$c-$ls.cmp")"
    done
    "$PY" - "$OUT/s$n-$c-double-step-klu.h5" <<'EOF2' || fail "scissor $n ($c cylinders): the lift"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
z, s, p = f["states/z"][()], f["actuators/s"][()], f["states/p"][()]
assert np.all(s[-1] - s[0] > 1e-3), s[-1] - s[0]          # every rod extends (~3.5 mm in 0.3 s)
assert z[-1, 1] - z[0, 1] > 1e-3, z[-1, 1] - z[0, 1]      # a1 (the lower fixed arm) rises
assert p.min() > 1e5 and p.max() < 7.6e6, (p.min(), p.max())
EOF2
done
echo "ok"
