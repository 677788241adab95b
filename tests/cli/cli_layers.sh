#!/bin/sh
# Source layering (docs/architecture.md).  The folders, lowest layer first
# (LAYERS below; folders in one group are on one layer):
#   core < formulations hydraulics reference solvers < compile < model
#        < engine < fmi < master < cosim < fmu predict < cli
# A folder may include the headers of and call the functions of its own
# folder and of lower layers only, never those of its own layer's other
# folders or of a higher layer.  Checked:
#   1. includes: every quoted #include of src/*, formulations/, hydraulics/
#      and reference/ resolves (own folder first, as the compiler does) to
#      the folder that holds the header; that folder must be the file's own
#      or lower; a header name in two folders is a failure (ambiguous);
#      formulations/, hydraulics/ and reference/ include only their own
#      headers and the public include/hymo/*.h; public headers include no
#      private header;
#   2. link level: no object file of the build (libhymo, the CLI, the FMU
#      binary) uses a symbol defined in an object of a higher layer or of
#      another folder of its layer (nm -u against nm --defined-only);
#   3. no layered folder holds more than 15 files;
#   4. the FMU binary (libhymo_fmu.so) does not load libhdf5, libzip or
#      libexpat (ldd);
#   5. libhymo (libhymo.a, libhymo.so) defines no CLI symbol (hymo_cli_*,
#      *sweep*);
#   6. no comparison against a particular runtime-choice table (formulation,
#      integrator, Jacobian, force source, linear solver) anywhere: the
#      engine calls through the tables and never asks which one it holds.
# args: $1 hymo binary (unused), $2 source dir, $3 build dir (tests/ of the build)
set -u
SRC=$(cd "$2" && pwd)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

LAYERS="core formulations,hydraulics,reference,solvers compile model engine fmi master cosim fmu,predict cli"
MAX_FILES=15

# rank FOLDER: the folder's layer (0 = lowest), empty if not layered
rank() {
    r=0
    for group in $LAYERS; do
        case ",$group," in *",$1,"*) echo $r; return ;; esac
        r=$((r + 1))
    done
}
folders() { echo "$LAYERS" | tr ', ' '\n\n'; }
# dir FOLDER: its directory in the source tree
dir() {
    case $1 in formulations | hydraulics | reference) echo "$SRC/$1" ;; *) echo "$SRC/src/$1" ;; esac
}
# ---- 1. includes
echo "$LAYERS" | awk '{for (i = 1; i <= NF; i++) {n = split($i, g, ","); for (j = 1; j <= n; j++) print g[j], i - 1}}' \
    > "$TMP/ranks"
: > "$TMP/files"
: > "$TMP/includes"
for f in $(folders); do
    d=$(dir "$f")
    if [ ! -d "$d" ]; then fail "layer folder $f is missing ($d)"; continue; fi
    for file in "$d"/*; do [ -f "$file" ] && echo "$f ${file##*/}"; done >> "$TMP/files"
    # "FOLDER FILE INCLUDE" per quoted include
    for file in "$d"/*.c "$d"/*.h "$d"/*.inc; do
        [ -f "$file" ] || continue
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file" |
            sed "s|^|$f ${file##*/} |"
    done >> "$TMP/includes"
done
awk -v src="$SRC" 'FILENAME == ARGV[1] {rk[$1] = $2; next}
     FILENAME == ARGV[2] {n[$2]++; at[$2] = at[$2] " " $1; own[$1 " " $2] = 1; next}
     {
         f = $1; file = $2; inc = $3
         if (inc ~ /^hymo\//) next
         if ((f " " inc) in own) next                      # its own folder first
         if (n[inc] > 1) { print "\"" inc "\" is in several folders:" at[inc]; next }
         if (n[inc] == 0) next                             # not one of the layered folders
         g = substr(at[inc], 2)
         if (rk[g] >= rk[f]) print f "/" file " includes \"" inc "\" of " g "/: a higher layer or a sibling"
     }' "$TMP/ranks" "$TMP/files" "$TMP/includes" > "$TMP/inc_bad"
while IFS= read -r line; do fail "$line"; done < "$TMP/inc_bad"
awk '$3 ~ /^hymo\// {print $3}' "$TMP/includes" | sort -u | while read -r inc; do
    [ -f "$SRC/include/$inc" ] || [ "$inc" = hymo/version.h ] || echo "$inc"
done > "$TMP/pub_bad"
while IFS= read -r inc; do fail "\"$inc\" is not a public header"; done < "$TMP/pub_bad"
for d in formulations hydraulics reference; do
    own=$(cd "$SRC/$d" && ls *.h 2>/dev/null | tr '\n' ' ')
    for inc in $(grep -ho '#include "[^"]*"' "$SRC/$d"/*.[ch] | sed 's/#include "\(.*\)"/\1/' | sort -u); do
        case "$inc" in
            hymo/*) ;;
            *) case " $own " in
                   *" $inc "*) ;;
                   *) fail "$d/ includes \"$inc\" from outside $d/ (only its own and public headers)" ;;
               esac ;;
        esac
    done
done
for f in "$SRC"/include/hymo/*.h; do
    grep -q '#include "[^h]' "$f" && fail "public header $(basename "$f") includes a private header"
done

# ---- 2. link level, 4. FMU binary, 5. libhymo: over the build's objects
BUILD=$(cd "$3" && pwd)
while [ ! -f "$BUILD/CMakeCache.txt" ]; do
    if [ "$BUILD" = / ]; then fail "no CMakeCache.txt above $3"; break; fi
    BUILD=$(dirname "$BUILD")
done
if [ -f "$BUILD/CMakeCache.txt" ]; then
    # every object of libhymo (and its PIC copy), the CLI and the FMU binary:
    # "D|U SYMBOL FOLDER OBJECT" lines
    n_obj=0
    for o in $(find "$BUILD/CMakeFiles" -path '*/CMakeFiles/hymo*.dir/*' -name '*.o' | sort); do
        rel=${o#*.dir/}
        f=${rel#src/}
        f=${f%%/*}
        [ -n "$(rank "$f")" ] || continue
        n_obj=$((n_obj + 1))
        nm --defined-only -g "$o" | awk -v f="$f" -v o="$rel" 'NF == 3 && $2 ~ /^[TDBRCVW]$/ {print "D", $3, f, o}'
        nm -u "$o" | awk -v f="$f" -v o="$rel" '{print "U", $NF, f, o}'
    done > "$TMP/syms"
    [ "$n_obj" -gt 50 ] || fail "only $n_obj object files found under $BUILD/CMakeFiles"
    awk 'FNR == NR {rk[$1] = $2; next}
         $1 == "D" {def[$2] = $3; defo[$2] = $4; next}
         $1 == "U" {u[++n] = $0}
         END {
             for (i = 1; i <= n; i++) {
                 split(u[i], x, " ")
                 if (!(x[2] in def)) continue
                 d = def[x[2]]
                 if (d == x[3] || rk[d] < rk[x[3]]) continue
                 print x[4] " (" x[3] ") uses " x[2] " of " defo[x[2]] " (" d ")"
             }
         }' "$TMP/ranks" "$TMP/syms" | sort -u > "$TMP/up"
    while IFS= read -r line; do fail "upward or sideways call: $line"; done < "$TMP/up"

    fmu=$BUILD/libhymo_fmu.so
    if [ -f "$fmu" ]; then
        bad=$(ldd "$fmu" | grep -Eo 'lib(hdf5|zip|expat)[^ ]*' | sort -u | tr '\n' ' ')
        [ -z "$bad" ] || fail "the FMU binary loads $bad(it links only what an FMU needs)"
    else
        fail "no FMU binary $fmu"
    fi
    for lib in "$BUILD/libhymo.a" "$BUILD/libhymo.so"; do
        case $lib in *.so) [ -f "$lib" ] || continue; opt=-D ;; *) opt= ;; esac
        [ -f "$lib" ] || { fail "no $lib"; continue; }
        cli=$(nm $opt --defined-only -g "$lib" 2>/dev/null | awk 'NF == 3 {print $3}' |
              grep -E '^hymo_cli_|sweep' | tr '\n' ' ')
        [ -z "$cli" ] || fail "$(basename "$lib") defines CLI symbols: $cli"
    done
fi

# ---- 3. files per folder
for f in $(folders); do
    n=$(find "$(dir "$f")" -maxdepth 1 -type f | wc -l)
    [ "$n" -le "$MAX_FILES" ] || fail "$f/ holds $n files (at most $MAX_FILES)"
done

# ---- 6. the table objects are hymo_*_ops; no ==/!= against their addresses
hits=$(grep -rnE '(==|!=) *&hymo_[a-z0-9_]*_ops|&hymo_[a-z0-9_]*_ops *(==|!=)' \
    "$SRC/src" "$SRC/formulations" "$SRC/hydraulics" "$SRC/reference" || true)
[ -z "$hits" ] || fail "table pointer comparisons: $hits"

if [ "$failures" -ne 0 ]; then
    echo "$failures layering failure(s)"
    exit 1
fi
echo "layering ok: $LAYERS; includes and $n_obj objects' calls downward only; <= $MAX_FILES files per folder;" \
    "FMU binary without libhdf5/libzip/libexpat; no CLI symbol in libhymo; no table comparisons"
