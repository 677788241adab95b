#!/bin/sh
# Re-measures every figure of "no silent wrong answer" (references,
# estimates, the gate, verdicts, FMI import and export) on one build, into
# OUT; tests/independent/README.md, "Audit of the judge", lists
# what each step shows.  About 5 min of CPU on top of the build with the
# independent solutions cached (below; ~10 min more without); run it alone
# (every step is sequential, the estimate step uses 2 threads).
#   usage: tests/independent/audit.sh OUT [BUILD]    (BUILD default: build)
# The independent solutions are kept in OUT/cache and OUT/est/ind: a second
# run reuses them.  Each step's output is OUT/<step>.txt (and .json/.md).
set -u
OUT=${1:?usage: audit.sh OUT [BUILD]}
BUILD=${2:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
mkdir -p "$OUT/bin"
# a copy of the binary: a rebuild during the audit does not change it
cp "$BUILD/hymo" "$OUT/bin/hymo" || exit 2
H=$OUT/bin/hymo
export HYMO_INDEP_CACHE="$OUT/cache"
mkdir -p "$HYMO_INDEP_CACHE"
cd "$ROOT" || exit 2
step() { echo "== $1"; }

step "closed loops: four step sizes, both formulations, both Jacobians"
$PY tests/independent/measure_loops.py --hymo "$H" --json "$OUT/loops.json" > "$OUT/loops.md"
step "RUSP, penalty, 125 us to 15.625 us (the model's settings)"
$PY tests/independent/measure_loops.py --hymo "$H" --models loop_rusp --formulations penalty \
    --dt 1.25e-4,6.25e-5,3.125e-5,1.5625e-5 --json "$OUT/rusp_fine.json" > "$OUT/rusp_fine.md"
$PY tests/independent/loop_audit.py table "$OUT/loops.json" "$OUT/rusp_fine.json" > "$OUT/loops_table.md"
step "double-step fast against numeric on the RUSR loops at 2 ms"
$PY tests/independent/loop_audit.py agree --hymo "$H" > "$OUT/agree.txt"
echo "agree exit $? (1: fast and numeric differ by more than 1 % of the global error)" >> "$OUT/agree.txt"

step "tolerances by --set on files that do not name them"
T=$OUT/set; mkdir -p "$T"
grep -v tolerances data/fourbar.yaml > "$T/fourbar_notol.yaml"
grep -v tolerances tests/models/loop_fast_planar.yaml > "$T/planar_notol.yaml"
: > "$OUT/set.txt"
for k in "" position=1e-12 pressure=1e-6 spool=1e-14; do
    s=""; [ -n "$k" ] && s="--set simulation.tolerances.$k"
    # shellcheck disable=SC2086
    "$H" run "$T/fourbar_notol.yaml" --t-end 2 --formulation penalty --jacobian numeric $s -o "$T/f.h5" \
        > "$T/f.out" 2>&1
    echo "fourbar without tolerances [${k:-none}]: exit $? $(grep -E '^iterations|^overrides' "$T/f.out" | tr '\n' ' ')" \
        "$(h5dump -a /tol_position "$T/f.h5" | sed -n 's/^ *(0): */tol_position /p')" \
        "$(h5dump -a /tol_pressure "$T/f.h5" | sed -n 's/^ *(0): */tol_pressure /p')" \
        "$(h5dump -a /tol_spool "$T/f.h5" | sed -n 's/^ *(0): */tol_spool /p')" >> "$OUT/set.txt"
done
for k in "" position=1e-13; do
    s=""; [ -n "$k" ] && s="--set simulation.tolerances.$k"
    # shellcheck disable=SC2086
    "$H" run "$T/planar_notol.yaml" --formulation penalty --jacobian fast --dt 1e-4 $s -o "$T/p.h5" > "$T/p.out" 2>&1
    echo "loop_fast_planar without tolerances, penalty fast, 0.1 ms [${k:-none}]: exit $?" \
        "$(grep -E '^iterations|^overrides' "$T/p.out" | tr '\n' ' ')" >> "$OUT/set.txt"
done

step "estimate/true on data/*.yaml (trapezoidal) and IDA"
$PY bench/estimate_accuracy.py "$H" "$OUT/est" > "$OUT/est_trap.txt"
$PY bench/estimate_accuracy.py "$H" "$OUT/est" --ida > "$OUT/est_ida.txt"
step "an unreliable estimate: the RUSP at 1 ms, and compare against it"
"$H" run tests/models/loop_rusp.yaml --formulation penalty --jacobian fast --dt 1e-3 -o "$T/rusp1.h5" \
    > "$OUT/rusp1.txt" 2>&1
"$H" run tests/models/loop_rusp.yaml --formulation penalty --jacobian fast --dt 5e-4 -q -o "$T/rusp05.h5"
"$H" compare "$T/rusp1.h5" "$T/rusp05.h5" --max-abs z=1e-6 >> "$OUT/rusp1.txt" 2>&1
echo "compare exit $?" >> "$OUT/rusp1.txt"

step "parallelogram chains 1, 2, 10"
$PY tests/independent/parallelogram.py table --hymo "$H" --n 1 2 10 --formulation penalty double-step \
    --jacobian fast numeric --json "$OUT/parallelogram.json" > "$OUT/parallelogram.txt"

step "verdict grid"
HYMO_ROOT=$ROOT $PY bench/verdict_grid.py "$H" "$OUT/grid" --table "$OUT/grid.md" > "$OUT/grid.txt" 2>&1
echo "verdict_grid exit $?" >> "$OUT/grid.txt"

step "ctests: compare gate, foreign FMUs, exported FMUs, tolerances, accuracy"
(cd "$BUILD" && ctest -R 'cli_compare_gate|fmi_osc|fmi_varstep|fmi_errors|cli_set$|cli_accuracy|cli_reselect_grid' \
    --output-on-failure -V) > "$OUT/ctest.txt" 2>&1
echo "ctest exit $?" >> "$OUT/ctest.txt"
echo "done: $OUT"
