#!/bin/sh
# Source layering (docs/architecture.md):
#   1. no include cycles between src/, formulations/, hydraulics/, reference/:
#      formulations/, hydraulics/ and reference/ include only their own
#      headers and the public include/hymo/*.h (src/ sits on top of them);
#   2. no comparison against a particular runtime-choice table (formulation,
#      integrator, Jacobian, force source, linear solver) anywhere: the
#      engine calls through the tables and never asks which one it holds.
# args: $1 hymo binary (unused), $2 source dir, $3 build dir (unused)
set -u
SRC=$2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for dir in formulations hydraulics reference; do
    own=$(cd "$SRC/$dir" && ls *.h 2>/dev/null | tr '\n' ' ')
    for inc in $(grep -ho '#include "[^"]*"' "$SRC/$dir"/*.[ch] | sed 's/#include "\(.*\)"/\1/' | sort -u); do
        case "$inc" in
            hymo/*) [ -f "$SRC/include/$inc" ] || fail "$dir includes $inc, which is not a public header" ;;
            *) case " $own " in
                   *" $inc "*) ;;
                   *) fail "$dir/ includes \"$inc\" from outside $dir/ (layering: only its own and public headers)" ;;
               esac ;;
        esac
    done
done
for f in "$SRC"/include/hymo/*.h; do
    grep -q '#include "[^h]' "$f" && fail "public header $(basename "$f") includes a private header"
done

# the table objects are hymo_*_ops; no ==/!= against their addresses
hits=$(grep -rnE '(==|!=) *&hymo_[a-z0-9_]*_ops|&hymo_[a-z0-9_]*_ops *(==|!=)' \
    "$SRC/src" "$SRC/formulations" "$SRC/hydraulics" "$SRC/reference" || true)
[ -z "$hits" ] || fail "table pointer comparisons: $hits"

if [ "$failures" -ne 0 ]; then
    echo "$failures layering failure(s)"
    exit 1
fi
echo "layering ok: no include cycles, no table comparisons"
