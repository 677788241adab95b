#!/bin/sh
# What the hymo process maps (docs/performance.md "The whole process"):
#   1. the executable does not link libzip, expat, libcrypto, LAPACK or
#      BLAS (ldd): they are loaded with dlopen at their first use
#      (src/core/lazy_lib.h, src/fmi/zipxml.h);
#   2. `hymo run` of the four-bar maps none of them (LD_DEBUG=files);
#   3. with HDF5 linked statically (HYMO_STATIC_HDF5: no libhdf5 in ldd)
#      the executable loads at most 25 shared libraries;
#   4. `hymo fmu` loads libzip at its first use and writes the FMU (the
#      FMU import's and SSP reader's use: cli_fmu_import, cli_ssp).
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
HYMO=$1; SRC=$(cd "$2" && pwd); OUT=$(cd "$3" && pwd)/cli_startup
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$OUT"; mkdir -p "$OUT"
LAZY='lib(zip|expat|crypto|bz2|lapacke?|blas|gfortran)\.'
# a build with the shared libhdf5 (HYMO_STATIC_HDF5 off, e.g. the sanitizer
# builds) gets libcrypto and libbz2 through HDF5's own dependencies
ldd "$HYMO" | grep -q 'libhdf5' && LAZY='lib(zip|expat|lapacke?|blas|gfortran)\.'

# 1.
ldd "$HYMO" > "$OUT/ldd" || fail "ldd $HYMO"
bad=$(grep -Eo "$LAZY[^ ]*" "$OUT/ldd" | sort -u | tr '\n' ' ')
[ -z "$bad" ] || fail "hymo links $bad(they are loaded at first use)"

# 2.
LD_DEBUG=files "$HYMO" run "$SRC/data/fourbar.yaml" --t-end 0.01 -q 2> "$OUT/run.debug" ||
    fail "hymo run exited $?"
bad=$(grep -E 'file=' "$OUT/run.debug" | grep -Eo "file=$LAZY[^ ]*" | sort -u | tr '\n' ' ')
[ -z "$bad" ] || fail "hymo run maps $bad"

# 3.
n=$(grep -c '=>' "$OUT/ldd")
if ! grep -q 'libhdf5' "$OUT/ldd"; then
    [ "$n" -le 25 ] || fail "hymo loads $n shared libraries (at most 25)"
fi

# 4.
LD_DEBUG=files "$HYMO" fmu "$SRC/data/crane1.yaml" --part mechanics -o "$OUT/mech.fmu" -q 2> "$OUT/fmu.debug" ||
    fail "hymo fmu exited $?: $(grep -v '^ *[0-9]*:' "$OUT/fmu.debug")"
grep -q 'file=libzip' "$OUT/fmu.debug" || fail "hymo fmu did not load libzip"
[ -s "$OUT/mech.fmu" ] || fail "no FMU written"
echo "start-up ok: $n shared libraries (ldd), none of zip/expat/crypto/LAPACK/BLAS until a command needs them"
