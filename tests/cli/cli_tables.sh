#!/bin/sh
# One table per co-simulation choice (src/cosim/cosim_tables.h; the scheme's
# rows in src/master/master.c, the master being below the split): no code in
# src/ outside the files that define the tables tests which coupling,
# scheme, approximation, mechanical integrator or mechanics' inputs it
# holds -- no ==, !=, case or ?: against HYMO_COUPLING_*, HYMO_SCHEME_*,
# HYMO_MASTER_JACOBI/GAUSS_SEIDEL, HYMO_APPROX_*, HYMO_MECH_* (also
# HYMO_MECH_INPUTS_*), and no ==, !=, ?:, truth test or switch on the
# options' fields coupling, scheme, approx, mech_integrator, mech_inputs.  Assignments
# (defaults, parsers) and range checks (>) are not choices.
# args: $1 hymo binary (unused), $2 source dir, $3 build dir (unused)
set -u
SRC=$2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

TABLES='(src/cosim/cosim_tables\.[ch]|src/master/master\.c):'
ENUMS='HYMO_(COUPLING|SCHEME|APPROX|MECH)_[A-Z0-9_]+|HYMO_MASTER_(JACOBI|GAUSS_SEIDEL)'
FIELDS='(coupling|scheme|approx|mech_integrator|mech_inputs)'

[ -d "$SRC/src" ] || { echo "FAIL: no source tree at $SRC/src"; exit 1; }
cd "$SRC" || exit 1

# a line naming one of the enums' values and testing something
hits=$(grep -rnE "$ENUMS" src --include='*.c' --include='*.h' | grep -vE "^$TABLES" |
    grep -E '==|!=|(^|[^a-z_])case[^a-z_]|\?' || true)
[ -z "$hits" ] || fail "comparisons against a co-simulation enum outside its table:
$hits"

# a comparison, truth test or switch on an option field, whatever it is compared with
# (a table row: the selected rows tb.coupling, ... and a row's members, row->..., read as ROW)
hits=$(grep -rnE "(\.|->)$FIELDS([^a-z_]|\$)" src --include='*.c' --include='*.h' | grep -vE "^$TABLES" |
    sed -E "s/tb\.$FIELDS([^a-z_])/ROW\2/g; s/$FIELDS->/ROW->/g" |
    grep -E "(\.|->)$FIELDS *(==|!=|\?|&&|\|\|)|(==|!=|!|&&|\|\|) *[a-z_]+(\.|->)$FIELDS([^a-z_]|\$)|(if|switch) *\( *[a-z_]+(\.|->)$FIELDS *\)" ||
    true)
[ -z "$hits" ] || fail "tests of a co-simulation option field outside its table:
$hits"

# the tables exist and are selected by indexing with the enums
for row in couplings:src/cosim/cosim_tables.c schemes:src/master/master.c approximations:src/cosim/cosim_tables.c \
    mechanics:src/cosim/cosim_tables.c mech_inputs:src/cosim/cosim_tables.c; do
    grep -q "^static const hymo_[a-z_]*table \*const ${row%%:*}\[\] = {" "${row#*:}" ||
        fail "${row#*:} has no array ${row%%:*}[] of table rows"
done

# one of each: the number parser, the exit codes, the union-find, the dense LU, the element-kind table
hits=$(grep -rlE '(^|[^a-z_])strto(d|f|ld) *\(' src formulations hydraulics reference --include='*.c' --include='*.h' |
    grep -v '^src/core/number.c$' || true)
[ -z "$hits" ] || fail "number parsing outside src/core/number.c (use hymo_parse_number): $hits"
n=$(grep -rn 'define EXIT_BAD_INPUT' src | wc -l)
[ "$n" -eq 1 ] || fail "EXIT_BAD_INPUT is defined $n times (one header: src/cli/cli.h)"
n=$(grep -rnE '^(static )?int [a-z_]*(uf_find|find_root)\(' src formulations hydraulics reference | wc -l)
[ "$n" -eq 1 ] || fail "$n union-find implementations (one: hymo_uf_find in src/core/linalg.c)"
n=$(grep -rn 'best = fabs(' src formulations hydraulics reference | wc -l)
[ "$n" -eq 1 ] || fail "$n partial-pivoting searches (one dense LU: hymo_lu_dense in src/core/linalg.c)"
n=$(grep -rnE 'hymo_element_kind [a-z_]+\[[A-Z_]*\] *=' hydraulics src | wc -l)
[ "$n" -eq 1 ] || fail "$n element-kind tables (one: hymo_element_kinds[] in hydraulics/elements.c)"

if [ "$failures" -ne 0 ]; then
    echo "$failures table failure(s)"
    exit 1
fi
echo "tables ok: no co-simulation choice tested outside its table rows"
