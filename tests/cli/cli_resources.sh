#!/bin/sh
# Write failures and bounded output (README "Output files"):
#   1. a file-size limit (ulimit -f, SIGXFSZ ignored) at several sizes for
#      run, cosim, sweep (its reference) and fmu: exit 2 (never 139 or 3),
#      one error line, no output or temporary file left, an older file at
#      the final path kept;
#   2. a run of 1e9 steps with -o is refused before its first step (within
#      seconds): exit 2, one line naming the estimated size, the time and
#      the flag; --max-output-size below a run's size refuses it, 0 lifts
#      the limit; the same for cosim (1e9 communication steps);
#   3. cosim stores its rows in blocks: a cosim over several blocks
#      (> 1024 rows) gives the same rows in the file as its rows read back
#      (row count, last time).
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
HYMO=$1; SRC=$(cd "$2" && pwd); B=$(cd "$3" && pwd); OUT=$B/cli_resources
rm -rf "$OUT"; mkdir -p "$OUT"
cd "$OUT" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml
CFG='coupling=velocity-pressure;extrapolation=2;hyd=rk4;mech=trapezoidal;scheme=jacobi'

# 1. ulimit -f
limited() { # KB CMD...: CMD under ulimit -f KB; stderr in lim.err, exit code in $code
    kb=$1; shift
    ( trap '' XFSZ; ulimit -f "$kb"; exec "$@" ) > lim.out 2> lim.err
    code=$?
}
check() { # WHAT [LINES]: exit 2, one error line (and LINES lines in all, default 1)
    [ $code -eq 2 ] || fail "$1: exit $code, expected 2: $(cat lim.err)"
    [ "$(grep -c "^hymo: error" lim.err)" -eq 1 ] || fail "$1: not one error line: $(cat lim.err)"
    [ "${2:-1}" = any ] || [ "$(wc -l < lim.err)" -eq "${2:-1}" ] || fail "$1: not one line: $(cat lim.err)"
}
echo previous > r.h5
for kb in 1 16 256 1024 4096; do # crane1 30 s: 7.8 MB
    limited $kb "$HYMO" run "$M" --t-end 30 -q -o r.h5
    check "run, ulimit -f $kb"
    [ "$(cat r.h5)" = previous ] || fail "run, ulimit -f $kb: the older r.h5 was replaced"
    ls r.h5.* > /dev/null 2>&1 && fail "run, ulimit -f $kb: left $(ls r.h5.*)"
done
echo previous > c.h5
for kb in 1 16 256 1024 4096; do # 30 s at H = 1 ms: about 9 MB
    limited $kb "$HYMO" cosim "$M" --t-end 30 -q -o c.h5
    check "cosim, ulimit -f $kb"
    [ "$(cat c.h5)" = previous ] || fail "cosim, ulimit -f $kb: the older c.h5 was replaced"
    ls c.h5.* > /dev/null 2>&1 && fail "cosim, ulimit -f $kb: left $(ls c.h5.*)"
done
for kb in 4 64 512; do
    limited $kb "$HYMO" sweep "$M" --H 1e-3,2e-3 --t-end 0.5 --jobs 1 --configs "$CFG" -o s
    check "sweep, ulimit -f $kb" any # (and its progress lines)
    ls s.* s_* ./*.partial > /dev/null 2>&1 && fail "sweep, ulimit -f $kb: left $(ls s.* s_* ./*.partial 2>/dev/null)"
done
echo previous > w.fmu
for kb in 1 16 256; do
    limited $kb "$HYMO" fmu "$M" --part whole -q -o w.fmu
    check "fmu, ulimit -f $kb"
    [ "$(cat w.fmu)" = previous ] || fail "fmu, ulimit -f $kb: the older w.fmu was replaced"
    ls w.fmu.* > /dev/null 2>&1 && fail "fmu, ulimit -f $kb: left $(ls w.fmu.*)"
done

# 2. refused before the first step
refused() { # CMD FLAG: CMD's 1e9 steps with -o refused within seconds; its --max-output-size below the file
    c=$1
    rm -f m.h5 big.h5
    t0=$(date +%s)
    timeout 60 "$HYMO" "$c" "$M" --t-end 1e6 -o big.h5 > big.out 2> big.err; code=$? # (a run that starts is stopped: 124)
    [ $code -eq 124 ] && rm -f big.h5.*
    t1=$(date +%s)
    [ $code -eq 2 ] || fail "$c 1e9 steps: exit $code: $(cat big.err)"
    [ "$(wc -l < big.err)" -eq 1 ] || fail "$c 1e9 steps: not one line: $(cat big.err)"
    grep -q "$c: the output file big.h5 would be [0-9.]* GB (run time about [0-9.]* \(min\|h\|days\))" big.err ||
        fail "$c 1e9 steps: no size and time: $(cat big.err)"
    grep -q -- "--max-output-size\|$2" big.err || fail "$c 1e9 steps: no flag named: $(cat big.err)"
    [ $((t1 - t0)) -lt 30 ] || fail "$c 1e9 steps: took $((t1 - t0)) s to refuse"
    ls big.h5* > /dev/null 2>&1 && fail "$c 1e9 steps: left $(ls big.h5*)"
    "$HYMO" "$c" "$M" --t-end 30 --max-output-size 1M -q -o m.h5 > m.out 2> m.err; code=$?
    [ $code -eq 2 ] || fail "$c --max-output-size 1M: exit $code"
    grep -q "more than --max-output-size 1 MB; allow it with --max-output-size" m.err ||
        fail "$c --max-output-size 1M: $(cat m.err)"
    ls m.h5* > /dev/null 2>&1 && fail "$c --max-output-size 1M: left $(ls m.h5*)"
    "$HYMO" "$c" "$M" --t-end 30 --max-output-size 0 -q -o m.h5 || fail "$c --max-output-size 0: refused"
    "$HYMO" "$c" "$M" --t-end 30 --max-output-size 20M -q -o m.h5 || fail "$c --max-output-size 20M: refused"
}
refused run --output-every
refused cosim --H
"$HYMO" run "$M" --t-end 1 --max-output-size 12X -q -o m.h5 2> x.err && fail "--max-output-size 12X accepted"
grep -q "is not a size" x.err || fail "--max-output-size 12X: $(cat x.err)"

# 3. cosim over several blocks (3001 rows): the file's rows against what the run reports
"$HYMO" cosim "$M" --t-end 3 -q -o b.h5 || fail "cosim 3 s"
"$HYMO" info b.h5 > b.info || fail "info b.h5"
grep -q "^rows *3001" b.info || fail "cosim 3 s: $(grep rows b.info)"
echo "cli_resources: all checks passed"
