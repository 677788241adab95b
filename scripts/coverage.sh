#!/usr/bin/env bash
# Line coverage of the test suite, with plain gcov (no gcovr/lcov needed):
#   1. configures a gcc Debug build with --coverage in build-cov;
#   2. builds it (-j JOBS, default 2) and runs ctest (all unit and CLI tests);
#   3. prints one row per source file under src/, formulations/,
#      hydraulics/ and reference/:  file  lines  covered  %
#      ("lines" are gcov's executable lines), then the total.
# Counts from earlier runs are deleted first, so the table is of this run.
#
#   scripts/coverage.sh            # JOBS=1 scripts/coverage.sh to use one core
#
# Exit status: non-zero if the build or any test failed (the table is
# printed anyway, for the tests that ran).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
build="$root/build-cov"
jobs="${JOBS:-2}"
status=0

command -v gcc >/dev/null && command -v gcov >/dev/null || { echo "coverage.sh: needs gcc and gcov" >&2; exit 1; }

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=gcc \
    -DCMAKE_C_FLAGS=--coverage -DCMAKE_EXE_LINKER_FLAGS=--coverage </dev/null >/dev/null || exit 1
cmake --build "$build" -j "$jobs" </dev/null >/dev/null || { echo "coverage.sh: build failed" >&2; exit 1; }
find "$build" -name '*.gcda' -delete
# cli_install is left out: programs linked against the installed --coverage
# libhymo.a would need the gcov runtime, which the install test does not add
if ! (cd "$build" && ctest -j "$jobs" -E cli_install </dev/null >"$build/ctest.log" 2>&1); then
    echo "coverage.sh: some tests failed (see $build/ctest.log):" >&2
    grep -E '\*\*\*Failed|Failed  |Timeout|Exception' "$build/ctest.log" >&2
    status=1
fi
grep -E 'tests passed|tests failed' "$build/ctest.log"

# The object file of a source file (in the library, or in the hymo
# executable for src/cli/main.c).  CMake names it <name>.c.o and the notes file
# <name>.c.gcno; gcov -o DIR would look for <name>.gcno, -o OBJECT finds it.
object_of() {
    local rel="$1" t
    for t in hymo_lib hymo; do
        if [ -f "$build/CMakeFiles/$t.dir/$rel.gcno" ]; then
            echo "$build/CMakeFiles/$t.dir/$rel.o"
            return 0
        fi
    done
    return 1
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '%-32s %7s %8s %7s\n' file lines covered %
total_lines=0
total_cov=0
for rel in $(cd "$root" && ls src/*/*.c formulations/*.c hydraulics/*.c reference/*.c | sort); do
    if ! obj="$(object_of "$rel")"; then
        printf '%-32s %7s %8s %7s\n' "$rel" '?' '?' 'not built'
        continue
    fi
    # -n: no .gcov files; the summary block "File '<path>'" / "Lines executed:P% of N"
    # of this source (headers with inline code get blocks of their own)
    line="$(cd "$tmp" && gcov -n -o "$obj" "$root/$rel" 2>/dev/null |
        awk -v f="$root/$rel" '$0 == "File '\''" f "'\''" {want = 1; next}
                               want && /^Lines executed:/ {print; exit}
                               want && /^No executable lines/ {print "Lines executed:0.00% of 0"; exit}')"
    pct="$(sed -n 's/^Lines executed:\([0-9.]*\)% of \([0-9]*\)$/\1/p' <<<"$line")"
    n="$(sed -n 's/^Lines executed:\([0-9.]*\)% of \([0-9]*\)$/\2/p' <<<"$line")"
    if [ -z "$n" ]; then
        printf '%-32s %7s %8s %7s\n' "$rel" '?' '?' 'no data'
        continue
    fi
    cov="$(awk -v p="$pct" -v n="$n" 'BEGIN {printf "%d", p * n / 100 + 0.5}')"
    total_lines=$((total_lines + n))
    total_cov=$((total_cov + cov))
    printf '%-32s %7d %8d %6.1f%%\n' "$rel" "$n" "$cov" "$pct"
done
awk -v c="$total_cov" -v n="$total_lines" \
    'BEGIN {printf "%-32s %7d %8d %6.1f%%\n", "total", n, c, n ? 100 * c / n : 0}'
exit $status
