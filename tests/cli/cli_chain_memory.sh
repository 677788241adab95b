#!/bin/sh
# A chain of 1024 links with their cylinders and circuits (bench/gen_models.py
# chain 1024), fast Jacobian and KLU, run without an output file: the process's
# peak RSS stays below 18 MB (13.3-13.5 MB measured; the dense n x n arrays of
# the initial state's static balance and M' took it to 34 MB).
# Memory is judged in builds without a sanitizer only (ASan's shadow and
# quarantine).
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
HYMO=$1; SRC=$(cd "$2" && pwd); OUT=$3/cli_chain_memory
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "no /usr/bin/python3: skipped"; exit 77; }
[ -x /usr/bin/time ] || { echo "no /usr/bin/time: skipped"; exit 77; }
BUILD=$(cd "$3" && pwd)
MEM=1
CACHE=$BUILD/CMakeCache.txt # the build directory: $3 or its parent (tests/ of the build)
[ -f "$CACHE" ] || CACHE=$BUILD/../CMakeCache.txt
if [ -f "$CACHE" ]; then
    san=$(sed -n 's/^HYMO_SANITIZE:[A-Z]*=//p' "$CACHE")
    case "$san" in ON|on|1|YES|yes|TRUE|true) MEM=0 ;; esac
fi
m="$OUT/chain1024.yaml"
"$PY" "$SRC/bench/gen_models.py" chain 1024 > "$m" || fail "gen_models.py chain 1024 exited $?"
/usr/bin/time -f "%M" -o "$OUT/time" "$HYMO" run "$m" --t-end 0.005 --jacobian fast --linear-solver klu \
    > "$OUT/summary.txt" || fail "run exited $?"
kb=$(tail -1 "$OUT/time")
echo "chain 1024, fast + KLU, 5 steps: peak RSS $kb KB"
grep -q "^status *complete" "$OUT/summary.txt" || grep -qi "complete" "$OUT/summary.txt" || fail "not complete: $(cat "$OUT/summary.txt")"
if [ $MEM -eq 1 ]; then
    [ "$kb" -le 18432 ] || fail "peak RSS $kb KB above 18 MB"
fi
echo "ok"
