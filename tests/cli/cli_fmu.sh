#!/bin/sh
# `hymo fmu` (docs/fmi.md): FMI 2.0 co-simulation FMUs of crane1's parts.
#   1. every exported modelDescription.xml is well-formed (python3
#      xml.etree; xmllint too when installed) and declares the required
#      attributes (tests/fmi_master.py describe);
#   2. `nm -D` of the binary in the FMU lists every fmi2* function of the
#      standard (the X-macro lists of src/fmi/fmi2.h) and nothing else;
#   3. bad input (unknown part, unknown circuit, unwritable output, bad
#      option values, ...): one line on stderr, exit 2, no file left;
#   4. `cmake --install` into a temporary prefix: the installed hymo finds
#      PREFIX/LIBDIR/hymo/libhymo_fmu.so and writes the same FMU.
# The trajectories (whole vs hymo run, mechanics + circuit vs hymo cosim),
# the FMU-state round-trip and the inputs are checked by the fmi_* tests
# (tests/fmi_master.py, tests/CMakeLists.txt).
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
HYMO=$1; SRC=$(cd "$2" && pwd); OUT=$(cd "$3" && pwd)/cli_fmu
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$OUT"; mkdir -p "$OUT"
M=$SRC/data/crane1.yaml
PY=/usr/bin/python3

# 1. export and describe
"$HYMO" fmu "$M" --part mechanics -o "$OUT/mech.fmu" > "$OUT/mech.out" 2>&1 || fail "mechanics: $(cat "$OUT/mech.out")"
grep -q "^identifier   crane1_mechanics$" "$OUT/mech.out" || fail "summary: $(cat "$OUT/mech.out")"
"$HYMO" fmu "$M" --part circuit:circuit1 -o "$OUT/circ.fmu" -q || fail "circuit:circuit1 exited $?"
"$HYMO" fmu "$M" --part circuit:cyl1 --coupling velocity-force -o "$OUT/circ_vf.fmu" -q || fail "circuit:cyl1 vf"
"$HYMO" fmu "$M" --part mechanics --extrapolation interface-model -o "$OUT/mech_im.fmu" -q || fail "mechanics im"
"$HYMO" fmu "$M" --part circuit:all --extrapolation interface-model -o "$OUT/circ_im.fmu" -q || fail "circuit:all im"
"$HYMO" fmu "$M" --part whole -o "$OUT/whole.fmu" -q || fail "whole exited $?"
"$HYMO" fmu "$M" --part whole --integrator ida --dt=2e-3 -o "$OUT/whole_ida.fmu" -q || fail "whole ida exited $?"
"$HYMO" fmu "$SRC/data/crane2.yaml" --part circuit:circuit2 --set hydraulics.fluid.bulk_modulus=1.4e9 -o "$OUT/c2.fmu" -q \
    || fail "crane2 circuit2 with --set"
$PY "$SRC/tests/fmi_master.py" describe "$OUT"/*.fmu > "$OUT/describe.out" 2>&1 || fail "$(cat "$OUT/describe.out")"
[ "$(grep -c '^describe: ' "$OUT/describe.out")" -eq 8 ] || fail "describe: $(cat "$OUT/describe.out")"
grep -q "crane1_hydraulics" "$OUT/describe.out" || fail "interface-model circuit identifier"
mkdir -p "$OUT/x"
(cd "$OUT/x" && $PY -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall('.')" "$OUT/mech.fmu") \
    || fail "unzip mech.fmu"
if command -v xmllint > /dev/null 2>&1; then
    xmllint --noout "$OUT/x/modelDescription.xml" || fail "xmllint: modelDescription.xml"
fi
grep -q 'name="cyl1.p_piston" valueReference="0"' "$OUT/x/modelDescription.xml" || fail "input naming"
grep -q 'name="cyl1.s" valueReference="2"' "$OUT/x/modelDescription.xml" || fail "output naming"
cmp -s "$OUT/x/resources/model.yaml" "$M" || fail "resources/model.yaml is not the model file"
printf -- '--part\tmechanics\n' | cmp -s - "$OUT/x/resources/options.txt" || fail "options.txt: $(cat "$OUT/x/resources/options.txt")"
# the same export twice: the same GUID; other options: another GUID
g1=$(sed -n 's/.*guid="\([^"]*\)".*/\1/p' "$OUT/x/modelDescription.xml")
"$HYMO" fmu "$M" --part mechanics -o "$OUT/mech2.fmu" > "$OUT/mech2.out" || fail "second export"
grep -q "^guid         $g1\$" "$OUT/mech2.out" || fail "GUID not reproducible"
grep -q "^guid         $g1\$" "$OUT/mech.out" || fail "GUID"
# getopt_long's --name=value form: the same FMU (same GUID)
"$HYMO" fmu "$M" --part=mechanics --output="$OUT/mech_eq.fmu" > "$OUT/mech_eq.out" || fail "--name=value export"
grep -q "^guid         $g1\$" "$OUT/mech_eq.out" || fail "--part=mechanics: another GUID: $(cat "$OUT/mech_eq.out")"
"$HYMO" fmu "$M" --part mechanics --coupling velocity-force -o "$OUT/mech3.fmu" > "$OUT/mech3.out" || fail "vf"
grep -q "^guid         $g1\$" "$OUT/mech3.out" && fail "GUID does not depend on the options"

# 2. nm -D: every fmi2* function of the standard, nothing else
SO=$OUT/x/binaries/linux64/crane1_mechanics.so
[ -f "$SO" ] || fail "no binaries/linux64/crane1_mechanics.so"
nm -D --defined-only "$SO" | awk '$2 ~ /^[TtWwDdBbRr]$/ {print $3}' | sort > "$OUT/exported.txt"
grep -o 'X(fmi2[A-Za-z]*)' "$SRC/src/fmi/fmi2.h" | sed 's/X(\(.*\))/\1/' | sort -u > "$OUT/standard.txt"
[ "$(wc -l < "$OUT/standard.txt")" -eq 44 ] || fail "src/fmi/fmi2.h lists $(wc -l < "$OUT/standard.txt") functions, not 44"
missing=$(comm -23 "$OUT/standard.txt" "$OUT/exported.txt")
[ -z "$missing" ] || fail "not exported: $missing"
extra=$(comm -13 "$OUT/standard.txt" "$OUT/exported.txt" | grep -v '^_init$\|^_fini$')
[ -z "$extra" ] || fail "exported besides fmi2*: $(echo "$extra" | head -5)"

# 3. bad input: one line, exit 2, no file
bad() { # expected-text args...
    want=$1; shift
    rm -f "$OUT/bad.fmu"
    "$HYMO" fmu "$@" > "$OUT/bad.out" 2> "$OUT/bad.err"
    code=$?
    [ $code -eq 2 ] || fail "hymo fmu $*: exit $code (expected 2): $(cat "$OUT/bad.err")"
    [ "$(wc -l < "$OUT/bad.err")" -eq 1 ] || fail "hymo fmu $*: not one line: $(cat "$OUT/bad.err")"
    [ ! -s "$OUT/bad.out" ] || fail "hymo fmu $*: stdout: $(cat "$OUT/bad.out")"
    grep -q "$want" "$OUT/bad.err" || fail "hymo fmu $*: message: $(cat "$OUT/bad.err")"
    [ ! -e "$OUT/bad.fmu" ] || fail "hymo fmu $*: left a file"
    ls "$OUT" | grep -q partial && fail "hymo fmu $*: left a temporary file"
    return 0
}
bad "'gears' is not mechanics, circuit:NAME or whole" "$M" --part gears -o "$OUT/bad.fmu"
bad "circuit:nope: crane1 has no such circuit (circuits: circuit1(cyl1)" "$M" --part circuit:nope -o "$OUT/bad.fmu"
bad "is not mechanics, circuit:NAME or whole" "$M" --part circuit: -o "$OUT/bad.fmu"
bad "cannot write" "$M" --part mechanics -o /nonexistent-dir/crane1.fmu
bad "directory" "$M" --part mechanics -o "$OUT"
bad "is the input file" "$M" --part mechanics -o "$M"
bad "required" "$M" -o "$OUT/bad.fmu"
bad "missing -o" "$M" --part mechanics
bad "missing MODEL" --part mechanics -o "$OUT/bad.fmu"
bad "invalid value 'sideways'" "$M" --part mechanics --coupling sideways -o "$OUT/bad.fmu"
bad "not a co-simulation option" "$M" --part mechanics --integrator ida -o "$OUT/bad.fmu"
bad "FMU parts are not available with TLM" "$M" --part mechanics --coupling tlm -o "$OUT/bad.fmu"
bad "FMU parts are not available with TLM" "$M" --part circuit:circuit1 --coupling tlm -o "$OUT/bad.fmu"
bad "not an option of --part whole" "$M" --part whole --coupling velocity-force -o "$OUT/bad.fmu"
bad "'rk5' is not\|invalid value 'rk5'" "$M" --part whole --integrator rk5 -o "$OUT/bad.fmu"
bad "not a positive number" "$M" --part whole --dt -1 -o "$OUT/bad.fmu"
bad "needs a value" "$M" --part
bad "no-such.yaml" "$OUT/no-such.yaml" --part whole -o "$OUT/bad.fmu"
bad "not an integer\|multiple" "$M" --part mechanics --H 1e-3 --hh 3e-4 -o "$OUT/bad.fmu"
HYMO_FMU_BINARY=/nonexistent/libhymo_fmu.so bad "FMU binary" "$M" --part whole -o "$OUT/bad.fmu"
"$HYMO" fmu --help | grep -q "^usage: hymo fmu" || fail "hymo fmu --help"

# 4. installed: the binary is found in PREFIX/LIBDIR/hymo
BUILD=$(cd "$3" && pwd)
while [ ! -f "$BUILD/CMakeCache.txt" ]; do
    [ "$BUILD" = / ] && fail "no CMakeCache.txt above $3"
    BUILD=$(dirname "$BUILD")
done
CMAKE=$(sed -n 's/^CMAKE_COMMAND:[A-Z]*=//p' "$BUILD/CMakeCache.txt"); [ -n "$CMAKE" ] || CMAKE=cmake
P=$OUT/prefix
"$CMAKE" --install "$BUILD" --prefix "$P" > "$OUT/install.log" 2>&1 || { cat "$OUT/install.log"; fail "cmake --install"; }
ls "$P"/lib*/hymo/libhymo_fmu.so "$P"/lib/*/hymo/libhymo_fmu.so > /dev/null 2>&1 || \
    [ -n "$(find "$P" -name libhymo_fmu.so)" ] || fail "libhymo_fmu.so not installed"
"$P/bin/hymo" fmu "$M" --part mechanics -o "$OUT/installed.fmu" > "$OUT/installed.out" 2>&1 \
    || fail "installed hymo fmu: $(cat "$OUT/installed.out")"
grep -q "^guid         $g1\$" "$OUT/installed.out" || fail "installed: other GUID"
mkdir -p "$OUT/y"
(cd "$OUT/y" && $PY -c "import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall('.')" "$OUT/installed.fmu") \
    || fail "unzip installed.fmu"
cmp -s "$OUT/y/binaries/linux64/crane1_mechanics.so" "$(find "$P" -name libhymo_fmu.so | head -1)" \
    || fail "the installed FMU does not hold the installed binary"
echo "cli_fmu: 8 FMUs described, $(wc -l < "$OUT/exported.txt") fmi2* functions exported, 20 bad inputs refused, installed hymo fmu ok"
exit 0
