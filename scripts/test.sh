#!/usr/bin/env bash
# The test suite; with CI=true the whole of it, as CI runs it (.ci/run):
#   1. installs the missing Debian packages (scripts/deps.sh);
#   2. build-ci:   -DHYMO_WERROR=ON, Debug, and -DHYMO_MPI=ON when OpenMPI
#                  is installed (optional packages: tests/cli/cli_mpi.sh then
#                  runs `mpirun -n 2 hymo sweep`); ctest;
#   3. build-rel:  -DHYMO_WERROR=ON, Release, built only (-O3 warnings);
#   4. build-asan: -DHYMO_WERROR=ON -DHYMO_SANITIZE=ON, Debug; ctest under
#                  ASan (leak detection) + UBSan, aborting on the first error.
# Every stage runs even if an earlier one fails; the exit status is non-zero if
# anything failed.  Needs no terminal (stdin is not read).
#
# Test tiers: ctest runs `-LE slow`, every test but the slow tier (ctest
# label `slow`: the longest cases of tests/independent and cli_machines*, see
# tests/CMakeLists.txt); with CI=true (as CI runs .ci/run) the slow tier runs
# too, in the same ctest call.  `ctest -L slow` runs it alone.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
# shellcheck source=scripts/deps.sh
. scripts/deps.sh

jobs="$(nproc 2>/dev/null || echo 2)"
tier=(-LE slow)
tier_name="without the slow tier"
if [ "${CI:-}" = true ]; then
    tier=()
    tier_name="with the slow tier (CI=true)"
fi
start=$SECONDS
failed=()

stage() { echo; echo "=================== $*"; }

stage "dependencies"
if ! hymo_install_deps </dev/null; then
    echo "test.sh: installing dependencies failed" >&2
    exit 1
fi
hymo_install_optional_deps </dev/null
mpi=(-DHYMO_MPI=OFF)
if command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; then
    mpi=(-DHYMO_MPI=ON)
else
    echo "test.sh: OpenMPI not installed: build-ci without MPI (cli_mpi skipped)"
fi

# build_and_test NAME CTEST-ENV... -- CMAKE-ARGS...
build_and_test() {
    local dir="$1"; shift
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local t0=$SECONDS
    stage "$dir: configure ($*)"
    if ! cmake -S . -B "$dir" "$@" </dev/null; then
        failed+=("$dir: configure"); return
    fi
    stage "$dir: build"
    if ! cmake --build "$dir" -j "$jobs" </dev/null; then
        failed+=("$dir: build"); return
    fi
    stage "$dir: ctest ${envs[*]} ($tier_name)"
    if ! (cd "$dir" && env "${envs[@]}" ctest --output-on-failure -j "$jobs" "${tier[@]}" </dev/null); then
        failed+=("$dir: ctest")
    fi
    echo "$dir: $((SECONDS - t0)) s"
}

build_and_test build-ci -- \
    -DHYMO_WERROR=ON -DCMAKE_BUILD_TYPE=Debug "${mpi[@]}"

# Release (-O3) with -Werror, built only: gcc's -O3 analyses
# (maybe-uninitialized, format-truncation) see what the Debug builds do not.
stage "build-rel: configure and build (-DHYMO_WERROR=ON, Release; no ctest)"
if ! { cmake -S . -B build-rel -DHYMO_WERROR=ON -DCMAKE_BUILD_TYPE=Release </dev/null &&
       cmake --build build-rel -j "$jobs" </dev/null; }; then
    failed+=("build-rel: build")
fi

build_and_test build-asan \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 -- \
    -DHYMO_WERROR=ON -DHYMO_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug

stage "summary ($((SECONDS - start)) s)"
if [ ${#failed[@]} -ne 0 ]; then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
echo "all tests passed"
