#!/bin/sh
# The Debian package as a user installs it: `cpack -G DEB` of this build,
# then its contents and control fields: the tool, the libraries, man pages
# (hymo-run.1 ...), the documentation with the tutorial, the shipped models
# as examples, the Python package; Depends from the binaries, the -dev
# packages the static library needs as Recommends.
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
OUT=$(cd "$3" && pwd)/cli_deb
fail() { echo "FAIL: $*"; exit 1; }
command -v dpkg-deb > /dev/null || { echo "dpkg-deb not found: nothing to check"; exit 0; }
BUILD=$(cd "$3" && pwd)
while [ ! -f "$BUILD/CPackConfig.cmake" ]; do
    [ "$BUILD" = / ] && fail "no CPackConfig.cmake above $3"
    BUILD=$(dirname "$BUILD")
done
CPACK=$(dirname "$(sed -n 's/^CMAKE_COMMAND:[A-Z]*=//p' "$BUILD/CMakeCache.txt")")/cpack
[ -x "$CPACK" ] || CPACK=cpack
rm -rf "$OUT"; mkdir -p "$OUT"
(cd "$OUT" && "$CPACK" -G DEB --config "$BUILD/CPackConfig.cmake" -B "$OUT") > "$OUT/cpack.log" 2>&1 \
    || { tail -20 "$OUT/cpack.log"; fail "cpack -G DEB"; }
DEB=$(ls "$OUT"/hymo_*.deb 2>/dev/null | head -1)
[ -n "$DEB" ] || fail "no .deb written"
dpkg-deb -c "$DEB" > "$OUT/contents.txt" || fail "dpkg-deb -c"
for f in ./usr/bin/hymo ./usr/lib/libhymo.a ./usr/include/hymo/sim.h ./usr/lib/pkgconfig/hymo.pc \
         ./usr/share/man/man1/hymo.1 ./usr/share/man/man1/hymo-run.1 ./usr/share/man/man1/hymo-cosim.1 \
         ./usr/share/man/man1/hymo-compare.1 ./usr/share/doc/hymo/README.md ./usr/share/doc/hymo/docs/tutorial.md \
         ./usr/share/doc/hymo/examples/crane1.yaml ./usr/lib/python3/dist-packages/hymo/__init__.py; do
    grep -q " $f\$" "$OUT/contents.txt" || fail "the .deb lacks $f"
done
dpkg-deb -I "$DEB" > "$OUT/control.txt" || fail "dpkg-deb -I"
grep -q "^ Depends:.*libsundials-ida" "$OUT/control.txt" || fail "Depends lacks the SUNDIALS runtime: $(grep Depends "$OUT/control.txt")"
for lib in liblapacke libzip libexpat; do # loaded with dlopen: no NEEDED entry for dpkg-shlibdeps
    grep -q "^ Depends:.*$lib" "$OUT/control.txt" || fail "Depends lacks $lib: $(grep Depends "$OUT/control.txt")"
done
grep -q "^ Recommends:.*libsundials-dev.*libhdf5-dev" "$OUT/control.txt" || fail "Recommends lacks the -dev packages"
echo "ok: $(basename "$DEB"): $(wc -l < "$OUT/contents.txt") entries"
