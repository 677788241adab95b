#!/bin/sh
# CLI contract for bad input (POSIX sh).
#   $1 = path of the hymo binary, $2 = source dir, $3 = build dir
#
# For every tests/bad_models/*.yaml, `hymo run FILE -o OUT.h5` must
#   - exit with status 2,
#   - print exactly one line on stderr, "hymo: error: ...", naming the file
#     as "NAME.yaml:" (file:line); unassemblable.yaml loads and fails in the
#     engine's assembly step, so its message need not name the file,
#   - leave neither OUT.h5 nor a temporary OUT.h5.XXXXXX.partial behind.
# Also `hymo run data/fourbar.yaml --dt -1` must exit 2 the same way.

HYMO=$1
SRC=$2
BUILD=$3
OUT="$BUILD/bad_out.h5"
ERR="$BUILD/bad_stderr.txt"
failures=0

if [ ! -x "$HYMO" ]; then
    echo "FAIL: hymo binary '$HYMO' not found or not executable"
    exit 1
fi

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# check_run LABEL NAME_PATTERN -- runs "$@" (after the two labels) and checks
# exit status, stderr and output files. NAME_PATTERN empty = not checked.
check_run() {
    label=$1
    pattern=$2
    shift 2
    rm -f "$OUT" "$OUT".*partial "$ERR"
    "$@" >/dev/null 2>"$ERR"
    status=$?
    if [ "$status" -ne 2 ]; then
        fail "$label: exit status $status, want 2"
    fi
    nlines=$(wc -l <"$ERR" | tr -d ' ')
    nbytes=$(wc -c <"$ERR" | tr -d ' ')
    line=$(head -n 1 "$ERR")
    if [ "$nlines" -ne 1 ] || [ "$nbytes" -le 1 ]; then
        fail "$label: stderr has $nlines lines ($nbytes bytes), want exactly one line:"
        sed 's/^/    | /' "$ERR"
    fi
    case $line in
    "hymo: error: "*) ;;
    *) fail "$label: stderr line does not start with 'hymo: error: ': $line" ;;
    esac
    if [ -n "$pattern" ]; then
        case $line in
        *"$pattern"*) ;;
        *) fail "$label: stderr line does not name the file ('$pattern'): $line" ;;
        esac
    fi
    # the writer's temporary file is OUT.XXXXXX.partial (a name of its own)
    for f in "$OUT" "$OUT".*partial; do
        if [ -e "$f" ]; then
            fail "$label: left $f behind"
        fi
    done
    rm -f "$OUT" "$OUT".*partial
    echo "ok: $label: $line"
}

count=0
for model in "$SRC"/tests/bad_models/*.yaml; do
    [ -e "$model" ] || continue
    count=$((count + 1))
    name=$(basename "$model")
    if [ "$name" = "unassemblable.yaml" ]; then
        check_run "$name" "" "$HYMO" run "$model" -o "$OUT"
    else
        check_run "$name" "$name:" "$HYMO" run "$model" -o "$OUT"
    fi
done
if [ "$count" -lt 10 ]; then
    fail "found only $count files in $SRC/tests/bad_models"
fi

check_run "fourbar --dt -1" "" "$HYMO" run "$SRC/data/fourbar.yaml" --dt -1 -o "$OUT"
check_run "fourbar --t-end 0" "" "$HYMO" run "$SRC/data/fourbar.yaml" --t-end 0 -o "$OUT"

rm -f "$ERR"
if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
fi
echo "all $count bad models rejected correctly"
exit 0
