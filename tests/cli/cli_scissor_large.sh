#!/bin/sh
# The 256-stage scissor lift (bench/gen_models.py scissor 256: 515 joint
# coordinates, 514 cut rows, tree depth 514), fast Jacobian, KLU: with each
# formulation the process's CPU time for the set-up and one step is < 1 s
# and its peak memory < 150 MB (penalty's pattern emitted every pair of
# every row's columns, O(N^3): 0.74 s and 548 MB here, 8.4 s and 4.3 GB at
# N = 512; now 0.25 s and 40 MB), and 20 steps of
# penalty and double-step agree to 1e-8 rad or m in every joint coordinate.
# The CPU time is judged in optimised builds without a sanitizer only, the
# memory in every build without a sanitizer (ASan's shadow and quarantine).
# Label slow (~10 s).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_scissor_large
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "no /usr/bin/python3: skipped"; exit 77; }
[ -x /usr/bin/time ] || { echo "no /usr/bin/time: skipped"; exit 77; }
BUILD=$(cd "$3" && pwd)
JUDGE=0 MEM=1
CACHE=$BUILD/CMakeCache.txt # the build directory: $3 or its parent (tests/ of the build)
[ -f "$CACHE" ] || CACHE=$BUILD/../CMakeCache.txt
if [ -f "$CACHE" ]; then
    san=$(sed -n 's/^HYMO_SANITIZE:[A-Z]*=//p' "$CACHE")
    bt=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$CACHE")
    case "$san" in ON|on|1|YES|yes|TRUE|true) MEM=0 ;; *) case "$bt" in Release|RelWithDebInfo|MinSizeRel) JUDGE=1 ;; esac ;; esac
fi
m="$OUT/scissor256.yaml"
"$PY" "$SRC/bench/gen_models.py" scissor 256 -o "$m" || fail "gen_models.py scissor 256 exited $?"
for form in double-step penalty; do
    /usr/bin/time -f "%U %S %M" -o "$OUT/$form.time" "$HYMO" run "$m" --t-end 0.001 --formulation $form \
        --jacobian fast --linear-solver klu --no-estimate -q || fail "$form, one step, exited $?"
    cpu=$(awk '{print $1 + $2}' "$OUT/$form.time")
    kb=$(awk '{print $3}' "$OUT/$form.time")
    echo "$form: set-up and one step $cpu s CPU, peak $kb kB"
    if [ $MEM = 1 ]; then
        awk -v k="$kb" 'BEGIN {exit !(k > 0 && k < 150000)}' || fail "$form: peak memory $kb kB (>= 150 MB)"
    fi
    if [ $JUDGE = 1 ]; then
        awk -v c="$cpu" 'BEGIN {exit !(c < 1.0)}' || fail "$form: set-up and one step took $cpu s of CPU (> 1 s)"
    fi
    "$HYMO" run "$m" --t-end 0.02 --formulation $form --jacobian fast --linear-solver klu --no-estimate -q \
        -o "$OUT/$form.h5" || fail "$form, 20 steps, exited $?"
done
"$HYMO" compare "$OUT/double-step.h5" "$OUT/penalty.h5" --max-abs z=1e-8 > "$OUT/cmp.txt" \
    || fail "penalty and double-step differ: $(cat "$OUT/cmp.txt")"
echo "ok"
