#!/bin/sh
# The shipped machines' whole cycles through tests/machines_check.py (the
# figures of docs/models.md): double-step vs penalty, fast vs numeric
# Jacobian, second order against dt/8, pressure floor, relief bound and the
# summary, over each model's full t_end (10 s), plus the run summaries.
# usage: bench/machines.sh [HYMO_BINARY] [OUT_DIR]
#   (defaults: build-rel/hymo, build-rel/machines; a Release build:
#    cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release && cmake --build build-rel -j2)
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
HYMO=${1:-$SRC/build-rel/hymo}
OUT=${2:-$SRC/build-rel/machines}
mkdir -p "$OUT"
status=0
for m in excavator forestry_crane; do
    echo "== $m"
    /usr/bin/python3 "$SRC/tests/machines_check.py" --hymo "$HYMO" --model "$SRC/data/$m.yaml" --out "$OUT" \
        --json "$OUT/$m.json" | tee "$OUT/$m.txt" || status=1
    "$HYMO" info "$OUT/${m}_ds.h5"
done
exit $status
