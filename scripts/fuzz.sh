#!/bin/sh
# Runs one libFuzzer target of tests/fuzz for a time (docs/testing.md "Fuzzing").
#
#   scripts/fuzz.sh TARGET SECONDS [libFuzzer options...]
#
# TARGET: loader, set, reader, csv, system or fmu.  The clang build with
# -DHYMO_FUZZ=ON is $HYMO_FUZZ_BUILD (default build-fuzz/ in the source
# tree); it is configured and built when missing.  The seed corpus is made
# once from the shipped files into BUILD/fuzz/seeds/TARGET (model files,
# override lines, reference files and FMUs the build writes, CSVs, system
# files); the corpus the fuzzer grows is BUILD/fuzz/corpus/TARGET, its
# findings go to BUILD/fuzz/artifacts/TARGET/ and its output to
# BUILD/fuzz/TARGET.log.  Every input runs under ASan and UBSan and must
# finish within 5 s (-timeout=5).  Extra options go to libFuzzer, e.g.
# -runs=1000000 or -jobs=1.
#
# Prints one line: executions, rate, crashes (incl. leaks and out-of-memory),
# sanitizer reports, timeouts (> 5 s), slow units (> 1 s) and the slowest
# unit; exit 0 when all of those are 0, else 1 (2: usage or build error).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 2 ]; then
    echo "usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer options...]  (TARGET: loader set reader csv system fmu)" >&2
    exit 2
fi
T=$1
DURATION=$2
shift 2
case $T in
    loader) MAXLEN=4096 ;;
    set) MAXLEN=512 ;;
    reader) MAXLEN=32768 ;;
    csv) MAXLEN=4096 ;;
    system) MAXLEN=4096 ;;
    fmu) MAXLEN=16384 ;;
    *) echo "fuzz.sh: unknown target '$T' (loader set reader csv system fmu)" >&2; exit 2 ;;
esac
BUILD=${HYMO_FUZZ_BUILD:-$ROOT/build-fuzz}
CC_FUZZ=${CC_FUZZ:-clang}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
    CC=$CC_FUZZ cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHYMO_FUZZ=ON \
        -DHYMO_BUILD_SHARED=OFF >"$BUILD.configure.log" 2>&1 ||
        { echo "fuzz.sh: cannot configure $BUILD (clang and libFuzzer needed): $BUILD.configure.log" >&2; exit 2; }
fi
grep -q '^HYMO_FUZZ:BOOL=ON' "$BUILD/CMakeCache.txt" ||
    { echo "fuzz.sh: $BUILD is not a -DHYMO_FUZZ=ON build" >&2; exit 2; }
build() {
    cmake --build "$BUILD" --target "$@" -j2 >"$BUILD/fuzz-build.log" 2>&1 ||
        { echo "fuzz.sh: build of $* failed: $BUILD/fuzz-build.log" >&2; exit 2; }
}
build "fuzz_$T"
# hymo and the test FMUs for the seed files: this build's, or those of
# $HYMO_SEED_BUILD (any build of the same tree, e.g. the normal one, built already)
SEED_BUILD=${HYMO_SEED_BUILD:-$BUILD}
seed_build() {
    if [ "$SEED_BUILD" = "$BUILD" ]; then build "$@"; fi
}
FZ=$BUILD/fuzz
SEEDS=$FZ/seeds/$T
CORPUS=$FZ/corpus/$T
ART=$FZ/artifacts/$T
mkdir -p "$CORPUS" "$ART"

# ---- the seed corpus, from the shipped files (once)
if [ ! -d "$SEEDS" ]; then
    rm -rf "$SEEDS.tmp"
    mkdir -p "$SEEDS.tmp"
    case $T in
        loader) cp "$ROOT"/data/*.yaml "$ROOT"/tests/models/*.yaml "$ROOT"/tests/bad_models/*.yaml "$SEEDS.tmp"/ ;;
        set | csv | system) cp "$ROOT"/tests/fuzz/seeds/"$T"/* "$SEEDS.tmp"/ ;;
        reader)
            # reference files written by this build's hymo: runs, a companion estimate, a co-simulation
            seed_build hymo
            H=$SEED_BUILD/hymo
            # (then made small by h5repack -L -l CONTI: the same groups, datasets and
            # attributes in the latest format, without hymo's 1024-row chunks), and
            # one copy with the superblock's "open for SWMR write" flag set
            mkdir -p "$SEEDS.tmp/big"
            (cd "$SEEDS.tmp/big" &&
                "$H" run "$ROOT/data/double_pendulum.yaml" --t-end 0.01 -q -o dp.h5 >/dev/null &&
                "$H" run "$ROOT/data/crane1.yaml" --t-end 0.005 -q -o crane1.h5 >/dev/null &&
                "$H" cosim "$ROOT/data/crane1.yaml" --t-end 0.004 --H 0.001 -q -o cosim.h5 >/dev/null &&
                for f in dp crane1 cosim; do h5repack -L -l CONTI $f.h5 ../$f.h5 >/dev/null || exit 1; done) ||
                { echo "fuzz.sh: cannot write the reader's seed files (hymo, h5repack)" >&2; exit 2; }
            rm -rf "$SEEDS.tmp/big"
            /usr/bin/python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[11] |= 4
open(sys.argv[2], "wb").write(b)' "$SEEDS.tmp/dp.h5" "$SEEDS.tmp/dp_swmr.h5" ;;
        fmu)
            # the FMUs the build writes (tests/fmu/make_fmus.py; hymo fmu), with every
            # binary replaced by a few bytes (the target stops before loading it)
            seed_build hymo test_fmus
            (cd "$SEEDS.tmp" &&
                "$SEED_BUILD/hymo" fmu "$ROOT/data/crane1.yaml" --part whole -o crane1.fmu >/dev/null &&
                "$SEED_BUILD/hymo" fmu "$ROOT/data/crane1.yaml" --part mechanics -o crane1_mech.fmu >/dev/null) ||
                { echo "fuzz.sh: cannot export the FMU seeds" >&2; exit 2; }
            cp "$SEED_BUILD"/tests/fmu/*.fmu "$ROOT"/tests/fuzz/seeds/fmu/* "$SEEDS.tmp"/
            /usr/bin/python3 - "$SEEDS.tmp" <<'PY'
import os, sys, zipfile
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    p = os.path.join(d, name)
    try:
        with zipfile.ZipFile(p) as z:
            items = [(i, z.read(i.filename)) for i in z.infolist()]
    except (zipfile.BadZipFile, OSError):
        continue  # not a zip archive: a seed as it is
    with zipfile.ZipFile(p + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
        for info, data in items:
            if info.filename.startswith("binaries/") and not info.filename.endswith("/"):
                data = b"\x7fELF"
            z.writestr(info.filename, data)
    os.replace(p + ".tmp", p)
    for info, data in items:  # the description alone: the target's other kind of input
        if info.filename == "modelDescription.xml":
            open(os.path.join(d, name[:-4] + ".xml"), "wb").write(data)
PY
            ;;
    esac
    mv "$SEEDS.tmp" "$SEEDS"
fi
set -- "$@" "$CORPUS" "$SEEDS"
[ -d "$ROOT/tests/fuzz/regressions/$T" ] && set -- "$@" "$ROOT/tests/fuzz/regressions/$T"
DICT=$ROOT/tests/fuzz/dict/$T.dict
[ -f "$DICT" ] && set -- -dict="$DICT" "$@"

# ---- the run
# Leaks: LeakSanitizer at exit and, except for the reader, after every input
# that allocates more than it frees (libhdf5 keeps caches between files,
# so for the reader that check would run after almost every input and
# halve its rate).  Memory that libhdf5 itself loses on damaged files is
# suppressed (tests/fuzz/lsan.supp); hymo's own leaks are reported.
LSAN_OPTIONS="suppressions=$ROOT/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
[ "$T" = reader ] && set -- -detect_leaks=0 "$@"
LOG=$FZ/$T.log
STAMP=$FZ/$T.stamp
: >"$STAMP"
start=$(date +%s)
status=0
nice -n 10 "$BUILD/tests/fuzz/fuzz_$T" -max_total_time="$DURATION" -timeout=5 -report_slow_units=1 \
    -rss_limit_mb=2560 -max_len="$MAXLEN" -print_final_stats=1 -artifact_prefix="$ART/" "$@" >"$LOG" 2>&1 ||
    status=$?
elapsed=$(($(date +%s) - start))
stat() { sed -n "s/^stat::$1: *//p" "$LOG" | tail -n 1; }
execs=$(stat number_of_executed_units)
rate=$(stat average_exec_per_sec)
slowest=$(stat slowest_unit_time_sec)
new_artifacts() { find "$ART" -type f -newer "$STAMP" -name "$1" | wc -l; }
crashes=$(($(new_artifacts 'crash-*') + $(new_artifacts 'leak-*') + $(new_artifacts 'oom-*')))
timeouts=$(new_artifacts 'timeout-*')
new=$(find "$ART" -type f -newer "$STAMP" | wc -l)
reports=$(grep -c -E 'ERROR: (Address|Leak|Undefined|Memory)Sanitizer|runtime error:' "$LOG" || true)
slow=$(grep -c '^Slowest unit:' "$LOG" || true)
echo "fuzz $T: ${execs:-0} executions in $elapsed s (${rate:-0}/s), crashes $crashes, sanitizer reports $reports," \
    "timeouts (> 5 s) $timeouts, slow units (> 1 s) $slow, slowest ${slowest:-?} s;" \
    "new artifacts $new in $ART; log $LOG"
if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ] || [ "$reports" -ne 0 ] || [ "$timeouts" -ne 0 ] || [ "$slow" -ne 0 ]; then
    tail -n 40 "$LOG" | grep -E 'ERROR|SUMMARY|runtime error|Slowest|#0 |#1 |#2 |#3 |#4 ' | head -n 20 >&2 || true
    exit 1
fi
exit 0
