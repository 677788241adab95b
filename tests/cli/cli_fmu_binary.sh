#!/bin/sh
# The FMU binary driven from C (a master compiled here with the build's
# compiler; in a sanitized build with -fsanitize=address, so that
# LeakSanitizer checks the FMU's own allocations, which the Python tests
# cannot: python's are not hymo's).  For crane1's whole (trapezoidal and
# IDA), mechanics and circuit FMUs, twice: instantiate, 20 steps, two
# fmi2GetFMUstate into one state, serialize, deserialize twice into one,
# fmi2SetFMUstate, a good step, two refused steps (wrong time, H not a multiple of the internal step),
# fmi2Reset, a step, terminate, free; a wrong GUID; dlclose.  Exit 0 and no
# leak report.  (A planted fmi2FreeInstance without release() fails it with
# about 60 kB leaked.)
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
HYMO=$1; SRC=$(cd "$2" && pwd); OUT=$(cd "$3" && pwd)/cli_fmu_binary
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$OUT"; mkdir -p "$OUT"
BUILD=$(cd "$3" && pwd)
while [ ! -f "$BUILD/CMakeCache.txt" ]; do
    [ "$BUILD" = / ] && fail "no CMakeCache.txt above $3"
    BUILD=$(dirname "$BUILD")
done
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
CC=$(cache CMAKE_C_COMPILER); [ -n "$CC" ] || CC=cc
SAN=
case "$(cache HYMO_SANITIZE)" in ON|on|1|YES|yes|TRUE|true) SAN=-fsanitize=address,undefined ;; esac
cat > "$OUT/driver.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fmi2.h"
static int logged;
static void logger(fmi2ComponentEnvironment e, fmi2String i, fmi2Status s, fmi2String c, fmi2String m, ...)
{
    (void)e, (void)i, (void)s, (void)c, (void)m;
    ++logged;
}
#define CHECK(x) do { if (!(x)) { fprintf(stderr, "driver: line %d: %s\n", __LINE__, #x); return 1; } } while (0)
int main(int argc, char **argv)
{
    if (argc != 5) return 2;
    const double h = atof(argv[4]);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "driver: %s\n", dlerror()); return 1; }
#define L(n) n##TYPE *n = (n##TYPE *)dlsym(lib, #n); CHECK(n)
    L(fmi2Instantiate); L(fmi2FreeInstance); L(fmi2SetupExperiment); L(fmi2EnterInitializationMode);
    L(fmi2ExitInitializationMode); L(fmi2DoStep); L(fmi2GetFMUstate); L(fmi2SetFMUstate); L(fmi2FreeFMUstate);
    L(fmi2Reset); L(fmi2SerializedFMUstateSize); L(fmi2SerializeFMUstate); L(fmi2DeSerializeFMUstate);
    L(fmi2Terminate); L(fmi2GetReal);
    fmi2CallbackFunctions cb = {logger, calloc, free, NULL, NULL};
    for (int rep = 0; rep < 2; ++rep) {
        fmi2Component c = fmi2Instantiate("driver", fmi2CoSimulation, argv[3], argv[2], &cb, 0, 0);
        CHECK(c);
        CHECK(fmi2SetupExperiment(c, 0, 0, 0.0, 0, 0) == fmi2OK);
        CHECK(fmi2EnterInitializationMode(c) == fmi2OK && fmi2ExitInitializationMode(c) == fmi2OK);
        for (int k = 0; k < 20; ++k) CHECK(fmi2DoStep(c, k * h, h, 1) == fmi2OK);
        fmi2FMUstate s = NULL, s2 = NULL;
        size_t n = 0;
        CHECK(fmi2GetFMUstate(c, &s) == fmi2OK && fmi2GetFMUstate(c, &s) == fmi2OK);
        CHECK(fmi2SerializedFMUstateSize(c, s, &n) == fmi2OK && n > 0);
        char *buf = malloc(n);
        CHECK(buf && fmi2SerializeFMUstate(c, s, buf, n) == fmi2OK);
        CHECK(fmi2DeSerializeFMUstate(c, buf, n, &s2) == fmi2OK && fmi2DeSerializeFMUstate(c, buf, n, &s2) == fmi2OK);
        CHECK(fmi2DeSerializeFMUstate(c, buf, n - 1, &s2) == fmi2Error);
        free(buf);
        CHECK(fmi2SetFMUstate(c, s2) == fmi2OK);
        CHECK(fmi2DoStep(c, 20 * h, h, 1) == fmi2OK);
        CHECK(fmi2DoStep(c, 0.5, h, 1) == fmi2Error);
        CHECK(fmi2DoStep(c, 21 * h, 0.45 * h, 1) == fmi2Error);
        fmi2ValueReference vr = 100000;
        double v;
        CHECK(fmi2GetReal(c, &vr, 1, &v) == fmi2Error);
        CHECK(fmi2FreeFMUstate(c, &s) == fmi2OK && fmi2FreeFMUstate(c, &s2) == fmi2OK && !s && !s2);
        CHECK(fmi2Reset(c) == fmi2OK);
        CHECK(fmi2SetupExperiment(c, 0, 0, 0.0, 0, 0) == fmi2OK);
        CHECK(fmi2EnterInitializationMode(c) == fmi2OK && fmi2ExitInitializationMode(c) == fmi2OK);
        CHECK(fmi2DoStep(c, 0.0, h, 1) == fmi2OK);
        CHECK(fmi2Terminate(c) == fmi2OK);
        fmi2FreeInstance(c);
        CHECK(!fmi2Instantiate("bad", fmi2CoSimulation, "{wrong}", argv[2], &cb, 0, 0));
    }
    CHECK(logged >= 8);
    dlclose(lib);
    puts("driver ok");
    return 0;
}
EOF
# shellcheck disable=SC2086
"$CC" -std=c11 -g $SAN -I"$SRC/src/fmi" -o "$OUT/driver" "$OUT/driver.c" -ldl > "$OUT/cc.log" 2>&1 \
    || { cat "$OUT/cc.log"; fail "compiling the C driver"; }
M=$SRC/data/crane1.yaml
n=0
for spec in "whole 1e-3" "whole 1e-3 --integrator ida" "mechanics 1e-3" "circuit:cyl1 1e-3"; do
    set -- $spec
    part=$1; h=$2; shift 2
    d=$OUT/fmu$n; n=$((n + 1)); mkdir -p "$d"
    "$HYMO" fmu "$M" --part "$part" "$@" -o "$d/x.fmu" -q || fail "hymo fmu --part $part $*"
    (cd "$d" && /usr/bin/python3 -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall('.')" x.fmu) \
        || fail "unzip $part"
    guid=$(sed -n 's/.*guid="\([^"]*\)".*/\1/p' "$d/modelDescription.xml")
    so=$(ls "$d"/binaries/linux64/*.so)
    # LD_PRELOAD/ASAN_OPTIONS of the caller are kept; leaks are checked here
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$OUT/driver" "$so" "file://$d/resources" "$guid" "$h" \
        > "$d/driver.out" 2>&1 || fail "driver on $part $*: $(tail -20 "$d/driver.out")"
    grep -q "driver ok" "$d/driver.out" || fail "driver on $part: $(cat "$d/driver.out")"
done
echo "cli_fmu_binary: 4 FMUs driven from C${SAN:+ under $SAN}: ok, no leaks"
exit 0
