#!/bin/sh
# The installed hymo as its users get it: `cmake --install` of
# this build into a temporary prefix, then a program that loads
# data/fourbar.yaml and steps it 100 times, built
#   (a) by an out-of-tree CMake project: find_package(hymo), hymo::hymo
#       (shared) and hymo::hymo_static;
#   (b) by one cc line with `pkg-config --cflags --libs hymo`;
#   (c) the same after the prefix is moved (hymo.pc is relocatable);
#   (d) man pages (man hymo-run), docs and examples installed;
#   (e) the installed Python package loads the prefix's library by itself;
# all three must print the same z.  A sanitized build's library carries its
# -fsanitize link flags in hymoConfig.cmake and hymo.pc.
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
SRC=$(cd "$2" && pwd); OUT=$(cd "$3" && pwd)/cli_install
fail() { echo "FAIL: $*"; exit 1; }
# the build tree: the nearest directory above $3 holding CMakeCache.txt
BUILD=$(cd "$3" && pwd)
while [ ! -f "$BUILD/CMakeCache.txt" ]; do
    [ "$BUILD" = / ] && fail "no CMakeCache.txt above $3"
    BUILD=$(dirname "$BUILD")
done
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
CMAKE=$(cache CMAKE_COMMAND); CC=$(cache CMAKE_C_COMPILER)
[ -n "$CMAKE" ] || CMAKE=cmake
[ -n "$CC" ] || CC=cc
rm -rf "$OUT"; mkdir -p "$OUT"
P=$OUT/prefix

"$CMAKE" --install "$BUILD" --prefix "$P" > "$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; fail "cmake --install"; }
SHARED=$(cache HYMO_BUILD_SHARED)
LIBS="lib/libhymo.a"; PCSTATIC=
case "$SHARED" in OFF|off|0|NO|no|FALSE|false) PCSTATIC=--static ;; *) LIBS="$LIBS lib/libhymo.so" ;; esac
for f in bin/hymo include/hymo/sim.h include/hymo/version.h $LIBS \
         lib/cmake/hymo/hymoConfig.cmake lib/cmake/hymo/hymoConfigVersion.cmake lib/pkgconfig/hymo.pc; do
    [ -e "$P/$f" ] || fail "not installed: $f"
done
"$P/bin/hymo" --version > "$OUT/version.txt" || fail "installed hymo --version exited $?"

# (a) CMake find_package
"$CMAKE" -S "$SRC/tests/install" -B "$OUT/cmake" -DCMAKE_PREFIX_PATH="$P" -DCMAKE_C_COMPILER="$CC" \
    -DCMAKE_BUILD_TYPE=Debug > "$OUT/cmake.log" 2>&1 || { cat "$OUT/cmake.log"; fail "find_package project: configure"; }
"$CMAKE" --build "$OUT/cmake" > "$OUT/build.log" 2>&1 || { cat "$OUT/build.log"; fail "find_package project: build"; }
"$OUT/cmake/consumer" "$SRC/data/fourbar.yaml" > "$OUT/a_shared.txt" || fail "consumer (hymo::hymo) exited $?"
if [ -z "$PCSTATIC" ]; then
    "$OUT/cmake/consumer_static" "$SRC/data/fourbar.yaml" > "$OUT/a_static.txt" || fail "consumer_static exited $?"
    readelf -d "$OUT/cmake/consumer" | grep -q 'NEEDED.*libhymo\.so\.0' || fail "consumer does not use libhymo.so.0"
else
    cp "$OUT/a_shared.txt" "$OUT/a_static.txt"
fi

# (b) pkg-config
FLAGS=$(PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config $PCSTATIC --cflags --libs hymo) || fail "pkg-config hymo"
# shellcheck disable=SC2086
"$CC" -std=c11 -Wall -Wextra -Werror -o "$OUT/consumer_pc" "$SRC/tests/install/consumer.c" $FLAGS \
    > "$OUT/pc.log" 2>&1 || { cat "$OUT/pc.log"; fail "cc ... \$(pkg-config --cflags --libs hymo)"; }
LD_LIBRARY_PATH="$P/lib" "$OUT/consumer_pc" "$SRC/data/fourbar.yaml" > "$OUT/b_pkgconfig.txt" || fail "consumer_pc exited $?"

# (c) the prefix moved elsewhere: hymo.pc finds it from its own place
mv "$P" "$P.moved"
FLAGS=$(PKG_CONFIG_PATH="$P.moved/lib/pkgconfig" pkg-config $PCSTATIC --cflags --libs hymo) || fail "pkg-config hymo (moved prefix)"
case "$FLAGS" in *"$P.moved/"*) ;; *) fail "hymo.pc of the moved prefix does not point into it: $FLAGS" ;; esac
# shellcheck disable=SC2086
"$CC" -std=c11 -Wall -Wextra -Werror -o "$OUT/consumer_moved" "$SRC/tests/install/consumer.c" $FLAGS \
    > "$OUT/moved.log" 2>&1 || { cat "$OUT/moved.log"; fail "cc with the moved prefix's hymo.pc"; }
LD_LIBRARY_PATH="$P.moved/lib" "$OUT/consumer_moved" "$SRC/data/fourbar.yaml" > "$OUT/c_moved.txt" || fail "consumer_moved exited $?"
mv "$P.moved" "$P"

# (d) man pages from the option tables, the docs, the examples
for f in share/man/man1/hymo.1 share/man/man1/hymo-run.1 share/man/man1/hymo-cosim.1 share/doc/hymo/README.md \
         share/doc/hymo/docs/tutorial.md share/doc/hymo/examples/crane1.yaml; do
    [ -s "$P/$f" ] || fail "not installed: $f"
done
if command -v man > /dev/null; then
    MANPATH="$P/share/man" MANWIDTH=120 man hymo-run 2> "$OUT/man.err" > "$OUT/man.txt" || { cat "$OUT/man.err"; fail "man hymo-run"; }
    grep -q -- "--formulation double-step|penalty" "$OUT/man.txt" || fail "man hymo-run lacks --formulation"
    grep -q "EXIT STATUS" "$OUT/man.txt" || fail "man hymo-run lacks EXIT STATUS"
fi
"$P/bin/hymo" run "$P/share/doc/hymo/examples/crane1.yaml" --t-end 0.1 -q || fail "the installed example crane1.yaml does not run"
# (e) the Python package from the prefix finds the prefix's library by itself
#     (not under a sanitizer: an uninstrumented interpreter cannot load it)
if ! grep -q fsanitize "$P/lib/pkgconfig/hymo.pc" && [ -x /usr/bin/python3 ]; then
    env -u HYMO_LIB -u LD_LIBRARY_PATH PYTHONPATH="$P/lib/python3/dist-packages" /usr/bin/python3 -c \
        "import hymo, sys; m = hymo.load(sys.argv[1]); print(hymo.library_path())" "$SRC/data/fourbar.yaml" \
        > "$OUT/py.txt" 2>&1 || { cat "$OUT/py.txt"; fail "the installed Python package"; }
    grep -q "^$P/" "$OUT/py.txt" || fail "the installed Python package loaded $(cat "$OUT/py.txt"), not the prefix's library"
fi

grep -q '^hymo .* steps 100$' "$OUT/a_shared.txt" || fail "unexpected output: $(head -1 "$OUT/a_shared.txt")"
[ "$(grep -c '^z\[' "$OUT/a_shared.txt")" -gt 0 ] || fail "no z printed"
cmp -s "$OUT/a_shared.txt" "$OUT/a_static.txt" || fail "hymo::hymo and hymo::hymo_static differ"
cmp -s "$OUT/a_shared.txt" "$OUT/b_pkgconfig.txt" || fail "find_package and pkg-config programs differ"
cmp -s "$OUT/a_shared.txt" "$OUT/c_moved.txt" || fail "the moved prefix's program differs"
grep -q "^hymo $(sed -n 's/^hymo \([^ ]*\) .*/\1/p' "$OUT/a_shared.txt" | head -1)\$" "$OUT/version.txt" \
    || fail "hymo --version '$(cat "$OUT/version.txt")' is not the library's version"
echo "ok: $(head -1 "$OUT/a_shared.txt")"
