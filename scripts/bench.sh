#!/usr/bin/env bash
# Speed benchmark (SPEC section 6): builds Release in build-bench and runs
# bench_speed (see bench/bench_speed.c).
#
#   scripts/bench.sh [--callgrind] [--repeat N]
#
#   --callgrind  also runs one fast four-bar penalty run under
#                valgrind --tool=callgrind and prints its instruction count
#                (Ir), a timing-noise-free figure for comparing changes.
#   other arguments are passed to bench_speed (--repeat N, --data DIR).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

callgrind=0
args=()
for a in "$@"; do
    case "$a" in
        --callgrind) callgrind=1 ;;
        -h|--help)
            sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
            exit 0 ;;
        *) args+=("$a") ;;
    esac
done

jobs="$(nproc 2>/dev/null || echo 2)"
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DHYMO_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j "$jobs" --target hymo bench_speed >/dev/null

build-bench/bench/bench_speed "${args[@]}"

if [ "$callgrind" -eq 1 ]; then
    if ! command -v valgrind >/dev/null 2>&1; then
        # shellcheck source=scripts/deps.sh
        . scripts/deps.sh
        hymo_ensure_packages valgrind </dev/null
    fi
    out=build-bench/callgrind.out
    cmd=(build-bench/hymo run data/fourbar.yaml --jacobian fast --formulation penalty -q)
    echo
    echo "callgrind: ${cmd[*]}"
    valgrind --tool=callgrind --callgrind-out-file="$out" "${cmd[@]}" 2>build-bench/callgrind.log || {
        cat build-bench/callgrind.log >&2
        exit 1
    }
    total="$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {print $1; exit}')"
    if [ -z "$total" ]; then
        total="$(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' build-bench/callgrind.log | tail -n 1)"
    fi
    echo "callgrind: total Ir = $total"
    echo "callgrind: top functions (callgrind_annotate $out):"
    callgrind_annotate "$out" 2>/dev/null | awk '/file:function/ {f = 1; getline; next} f && NF {print "  " $0; if (++n == 12) exit}' || true
fi
