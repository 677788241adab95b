#!/bin/sh
# A co-simulation stopped by SIGINT, SIGTERM or SIGKILL leaves its output
# as OUT.h5.XXXXXX.partial (docs/hdf5-format.md, "Atomic writes"): hymo info
# reads it (INTERRUPTED, its rows so far, time increasing by H), h5py opens
# it, nothing is at OUT.h5; a finished co-simulation leaves no .partial.
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
HYMO=$1; SRC=$(cd "$2" && pwd); B=$(cd "$3" && pwd); OUT=$B/cli_cosim_kill
rm -rf "$OUT"; mkdir -p "$OUT"; cd "$OUT" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml
for sig in INT TERM KILL; do
    secs=2
    while :; do # (a machine that finished the run before the signal: a longer run)
        rm -f k.h5 k.h5.*
        timeout -s $sig $secs "$HYMO" cosim "$M" --t-end 600 --H 1e-4 -q -o k.h5 > k.out 2> k.err
        code=$?
        [ $code -eq 0 ] || break
        [ $secs -lt 64 ] || fail "$sig: the run always ended before the signal"
        secs=$((secs * 4))
    done
    [ $code -eq 124 ] || [ $code -eq 137 ] || fail "$sig: exit $code (expected the signal's 124 or 137): $(cat k.err)"
    [ -e k.h5 ] && fail "$sig: a stopped co-simulation left k.h5"
    set -- k.h5.*.partial
    [ $# -eq 1 ] && [ -f "$1" ] || fail "$sig: no single .partial file: $(ls)"
    p=$1
    "$HYMO" info "$p" > info.out 2>&1 || fail "$sig: hymo info $p exited $?: $(cat info.out)"
    grep -q "^status *INTERRUPTED" info.out || fail "$sig: not INTERRUPTED: $(cat info.out)"
    rows=$(awk '$1 == "rows" { print $2 }' info.out)
    [ -n "$rows" ] && [ "$rows" -gt 0 ] || fail "$sig: no rows: $(cat info.out)"
    if command -v /usr/bin/python3 > /dev/null && /usr/bin/python3 -c 'import h5py, numpy' 2> /dev/null; then
        /usr/bin/python3 - "$p" "$rows" << 'PY' || fail "$sig: h5py: $p"
import sys, h5py, numpy
with h5py.File(sys.argv[1], "r", swmr=True) as f:
    t = f["time"][:]
    assert len(t) == int(sys.argv[2]), (len(t), sys.argv[2])
    assert f.attrs["complete"] == 0
    assert len(t) == 0 or (t[0] == 0 and numpy.allclose(numpy.diff(t), 1e-4)), t[:5]
    for name in ("states/z", "states/p"):
        assert f[name].shape[0] >= len(t), (name, f[name].shape)
PY
    fi
    echo "$sig: $p, $rows rows"
done
rm -f k.h5.*
"$HYMO" cosim "$M" --t-end 1 -q -o k.h5 > k.out 2>&1 || fail "a finished co-simulation exited $?: $(cat k.out)"
[ -f k.h5 ] || fail "no k.h5"
ls k.h5.* > /dev/null 2>&1 && fail "a finished co-simulation left $(ls k.h5.*)"
echo "cli_cosim_kill: ok"
