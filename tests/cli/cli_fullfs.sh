#!/bin/sh
# Write failures on a full file system (README "Output files"): run, cosim,
# sweep (its tables, and the reference it computes) and fmu on a tmpfs of
# 24 kB, 1 MB and 20 MB, empty or filled to leave a few kB: exit 2, one
# error line, no output or temporary file left, an older file at the final
# path kept.  Needs root (mount -t tmpfs); otherwise reported as skipped
# (exit 77).  cli_resources covers the same without root (ulimit -f).
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
HYMO=$1; SRC=$(cd "$2" && pwd); B=$(cd "$3" && pwd); OUT=$B/cli_fullfs
M=$SRC/data/crane1.yaml
CFG='coupling=velocity-pressure,velocity-force;extrapolation=2;hyd=rk4;mech=trapezoidal;scheme=jacobi'
D=$OUT/mnt
if [ "$(id -u)" != 0 ] || ! mkdir -p "$D" || ! mount -t tmpfs -o size=24k tmpfs "$D" 2> /dev/null; then
    echo "SKIP: cli_fullfs needs root to mount a tmpfs (cli_resources tests write failures with ulimit -f)"
    exit 77
fi
umount "$D"
rm -f "$OUT"/*.err "$OUT"/*.out "$OUT"/*.h5
mounted=0
trap '[ $mounted = 1 ] && umount "$D"' EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*"; exit 1; }
"$HYMO" run "$M" --t-end 1 -q -o "$OUT/ref.h5" || fail "reference run"
"$HYMO" run "$M" --t-end 3 -q -o "$OUT/r3.h5" || fail "3 s run"
r3_kb=$(( $(wc -c < "$OUT/r3.h5") / 1024 - 6 )) # free space a little short of the 3 s run's file
# fs SIZE FREE_KB: a fresh tmpfs of SIZE, filled to leave FREE_KB (0: empty)
fs() {
    [ $mounted = 1 ] && umount "$D"
    mount -t tmpfs -o size="$1" tmpfs "$D" || fail "mount -t tmpfs -o size=$1"
    mounted=1
    echo previous > "$D/old.h5"
    echo previous > "$D/old.fmu"
    if [ "$2" != 0 ]; then
        total=$(df -P -k "$D" | awk 'NR == 2 { print $2 }')
        used=$(df -P -k "$D" | awk 'NR == 2 { print $3 }')
        [ "$total" -gt $((used + $2)) ] && head -c $(( (total - used - $2) * 1024 )) /dev/zero > "$D/filler" 2> /dev/null
    fi
}
n=0
# expect2 WHAT OUTPUT CMD...: exit 2, one error line, only filler and old.* left, old.* untouched
expect2() {
    what=$1; shift
    "$@" > "$OUT/cmd.out" 2> "$OUT/cmd.err"; code=$?
    [ -n "${CLI_FULLFS_SHOW:-}" ] && echo "$what: $(grep "^hymo: error" "$OUT/cmd.err")"
    n=$((n + 1))
    [ $code -eq 2 ] || fail "$what: exit $code, expected 2: $(grep -v '^sweep:' "$OUT/cmd.err" | head -3)"
    [ "$(grep -c '^hymo: error' "$OUT/cmd.err")" -eq 1 ] || fail "$what: not one error line: $(cat "$OUT/cmd.err")"
    left=$(cd "$D" && ls -A | grep -v '^filler$\|^old\.h5$\|^old\.fmu$' | tr '\n' ' ')
    [ -z "$left" ] && return 0
    fail "$what: left $left"
}
kept() {
    [ "$(cat "$D/old.h5")" = previous ] && [ "$(cat "$D/old.fmu")" = previous ] || fail "$1: an older file was replaced"
}
for size in 24k 1m 20m; do
    fs $size 0 # crane1 90 s: 23 MB from run (refused before it starts), 28 MB from cosim
    expect2 "run, tmpfs $size" "$HYMO" run "$M" --t-end 90 -q -o "$D/old.h5"
    kept "run, tmpfs $size"
    expect2 "cosim, tmpfs $size" "$HYMO" cosim "$M" --t-end 90 -q -o "$D/old.h5"
    kept "cosim, tmpfs $size"
    for free in 2 8; do # sweep tables (a CSV of 2 kB, an HDF5 of 15 kB), an FMU of 300 kB
        fs $size $free
        expect2 "sweep tables, tmpfs $size, $free kB free" \
            "$HYMO" sweep "$M" --H 1e-3,4e-3 --t-end 1 --configs "$CFG" --reference "$OUT/ref.h5" -o "$D/s"
        expect2 "fmu, tmpfs $size, $free kB free" "$HYMO" fmu "$M" --part whole -q -o "$D/old.fmu"
        kept "fmu, tmpfs $size"
    done
    if [ $size != 24k ]; then
        fs $size $r3_kb # more than the run's estimate of its file, less than the file: fails mid-file
        expect2 "run, tmpfs $size, $r3_kb kB free" "$HYMO" run "$M" --t-end 3 -q -o "$D/r.h5"
        fs $size 200 # cosim of 3 s (0.8 MB) and the sweep's own reference: failing mid-file
        expect2 "cosim, tmpfs $size, 200 kB free" "$HYMO" cosim "$M" --t-end 3 -q -o "$D/c.h5"
        expect2 "sweep reference, tmpfs $size, 200 kB free" \
            "$HYMO" sweep "$M" --H 1e-3,4e-3 --t-end 3 --configs "$CFG" -o "$D/s"
    fi
done
echo "cli_fullfs: ok ($n commands on full tmpfs: exit 2, one line, nothing left)"
