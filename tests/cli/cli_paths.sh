#!/bin/sh
# Output paths and write failures of the commands that write files
# (README "Output files"):
#   1. an output that is one of the command's inputs, or another of its
#      outputs, is refused before any work: exit 2, one line naming both
#      paths, the input unchanged (sha256) -- sweep -o against its
#      reference and its model (TABLE is a base name: TABLE.csv,
#      TABLE_achievable.csv, TABLE.h5, TABLE_reference.h5), run, cosim
#      (model and system file: the system file, its FMUs, the reference,
#      output: in the file), fmu (the model, the FMU binary);
#   2. 10 concurrent sweeps with the same -o (each its own H list; three
#      rounds): each exits 0 or 2, no temporary file is left, the three tables in
#      place come from one sweep (the same H, wall times and achievable H
#      in TABLE.csv, TABLE_achievable.csv and TABLE.h5);
#   3. a read-only output directory: the sweep exits 2 with one line
#      before its reference or its first run (timed);
#   4. a file-size limit (ulimit -f, SIGXFSZ ignored): sweep (tables;
#      its reference), cosim and fmu exit 2 (never 139 or 3), one line,
#      no table, no temporary file, an older file at the final path kept.
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
HYMO=$1; SRC=$(cd "$2" && pwd); B=$(cd "$3" && pwd); OUT=$B/cli_paths
PY=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$OUT"; mkdir -p "$OUT"
cd "$OUT" || exit 1
M=$SRC/data/crane1.yaml
CFG='coupling=velocity-pressure;extrapolation=2;hyd=rk4;mech=trapezoidal;scheme=jacobi'
sum() { sha256sum "$1" | cut -d' ' -f1; }
# refused NAME INPUT CMD...: exit 2, one line on stderr naming INPUT, INPUT
# unchanged, no table or temporary file of the sweep's base t left
refused() {
    name=$1; input=$2; shift 2
    before=$(sum "$input")
    "$@" > "$name.out" 2> "$name.err"; code=$?
    [ $code -eq 2 ] || fail "$name: exit $code, expected 2: $(cat "$name.err")"
    [ "$(wc -l < "$name.err")" -eq 1 ] || fail "$name: not one line: $(cat "$name.err")"
    grep -q "is the input file\|are the same file" "$name.err" || fail "$name: message $(cat "$name.err")"
    grep -qF "$(basename "$input")" "$name.err" || fail "$name: the message does not name $input: $(cat "$name.err")"
    [ "$(sum "$input")" = "$before" ] || fail "$name: $input changed"
    ls ./*.partial > /dev/null 2>&1 && fail "$name: a temporary file was left: $(ls ./*.partial)"
    return 0
}
sweep() { "$HYMO" sweep "$@" --t-end 0.2 --jobs 1 --configs "$CFG"; }

# 1. outputs against inputs and each other
"$HYMO" run "$M" --t-end 0.2 -q -o ref.h5 || fail "reference run"
refused sweep_ref ref.h5 sweep "$M" --H 1e-3,2e-3 --reference ref.h5 -o ref
refused sweep_ref_h5 ref.h5 sweep "$M" --H 1e-3,2e-3 --reference ref.h5 -o ./ref.h5
mkdir -p sub
refused sweep_ref_up ref.h5 sweep "$M" --H 1e-3,2e-3 --reference ref.h5 -o sub/../ref
[ -e ref.csv ] || [ -e ref_achievable.csv ] && fail "a refused sweep wrote a table"
cp "$M" m.csv
refused sweep_model m.csv sweep m.csv --H 1e-3,2e-3 -o m
cp "$M" m_reference.h5
refused sweep_model_ref m_reference.h5 sweep m_reference.h5 --H 1e-3,2e-3 -o m
[ -e m.h5 ] && fail "a refused sweep wrote m.h5"
echo "q" > q.csv && ln -s q.csv q_achievable.csv
refused sweep_outputs q.csv sweep "$M" --H 1e-3,2e-3 --reference ref.h5 -o q
cp "$M" model.yaml && ln -s model.yaml link.h5
refused run_model model.yaml "$HYMO" run model.yaml --t-end 0.1 -q -o ./model.yaml
refused run_link model.yaml "$HYMO" run model.yaml --t-end 0.1 -q -o link.h5
refused cosim_model model.yaml "$HYMO" cosim model.yaml --t-end 0.1 -q -o model.yaml
refused cosim_ref ref.h5 "$HYMO" cosim model.yaml --t-end 0.2 -q --reference ref.h5 -o sub/../ref.h5
refused fmu_model model.yaml "$HYMO" fmu model.yaml --part whole -q -o model.yaml
if [ -f "$B/../libhymo_fmu.so" ]; then
    cp "$B/../libhymo_fmu.so" fmubin.so
    refused fmu_binary fmubin.so env HYMO_FMU_BINARY="$OUT/fmubin.so" "$HYMO" fmu model.yaml --part whole -q -o fmubin.so
else
    echo "cli_paths: no libhymo_fmu.so in $B/..: the FMU binary check skipped"
fi
if [ -f "$B/fmu/lin.fmu" ]; then
    cp "$B/fmu/lin.fmu" lin.fmu
    printf 'H: 0.01\nt_end: 0.1\nsubsystems:\n  a: {fmu: lin.fmu, free_inputs: all}\nconnections: []\n' > sys.yaml
    "$HYMO" cosim sys.yaml -q -o sys.h5 || fail "system file run"
    refused sys_fmu lin.fmu "$HYMO" cosim sys.yaml -q -o lin.fmu
    refused sys_file sys.yaml "$HYMO" cosim sys.yaml -q -o sys.yaml
    refused sys_ref sys.h5 "$HYMO" cosim sys.yaml -q --reference sys.h5 -o sys.h5
    cp sys.yaml sys_out.yaml && echo "output: lin.fmu" >> sys_out.yaml
    refused sys_output lin.fmu "$HYMO" cosim sys_out.yaml -q
else
    echo "cli_paths: no test FMUs in $B/fmu: the system file checks skipped"
fi

# 2. 10 concurrent sweeps with the same -o, each with its own second H;
#    three rounds
for round in 1 2 3; do
    rm -f c.* c_*
    i=0
    for h in 2e-3 4e-3 5e-3 8e-3 1e-2 2e-2 2.5e-2 4e-2 5e-2 1e-1; do
        i=$((i + 1))
        sweep "$M" --H "1e-3,$h" -o c > "c$i.out" 2> "c$i.err" &
    done
    wait
    ok=0
    for i in 1 2 3 4 5 6 7 8 9 10; do
        if grep -q "^2 runs in .* tables c.csv, c_achievable.csv, c.h5$" "c$i.out"; then
            ok=$((ok + 1))
        else
            grep -q "^hymo: error: " "c$i.err" || fail "concurrent sweep $i (round $round): no table and no error: $(cat "c$i.err")"
        fi
    done
    [ $ok -ge 1 ] || fail "no concurrent sweep succeeded (round $round): $(cat c1.err)"
    ls ./*.partial > /dev/null 2>&1 && fail "concurrent sweeps (round $round) left temporary files: $(ls ./*.partial)"
    "$HYMO" info c_reference.h5 > c_ref.out || fail "concurrent sweeps (round $round): c_reference.h5: $(cat c_ref.out)"
    $PY - <<'EOF' || fail "concurrent sweeps (round $round): the tables in place are not one sweep's"
import csv, h5py
rows = list(csv.DictReader(open("c.csv")))
ach = list(csv.DictReader(open("c_achievable.csv")))
with h5py.File("c.h5", "r") as f:
    H, wall, achH = f["runs/H"][:], f["runs/wall_time"][:], f["achievable/H"][:]
assert len(rows) == 2 and len(H) == 2 and len(ach) == 1 and len(achH) == 1, (len(rows), len(H), len(ach))
assert [float(r["H"]) for r in rows] == [float("%g" % x) for x in H], ([r["H"] for r in rows], H)
assert all(abs(float(r["wall_time"]) - w) <= 0.5e-4 + 1e-12 for r, w in zip(rows, wall)), ([r["wall_time"] for r in rows], wall)
assert float(ach[0]["achievable_H"]) == float("%g" % achH[0]), (ach[0]["achievable_H"], achH)
EOF
    echo "cli_paths: round $round: $ok of 10 concurrent sweeps wrote their tables; the tables are one sweep's"
done

# 3. a read-only output directory: found before the reference and the runs.
#    Without root, chmod; as root (chmod does not stop root), a read-only
#    tmpfs in a mount namespace of its own; else skipped.
mkdir -p ro
chmod 555 ro
ro_run=""
if ! touch ro/probe 2> /dev/null; then
    ro_run="sh -c"
elif unshare -m sh -c "mount -t tmpfs -o ro,size=64k none '$OUT/ro'" 2> /dev/null; then
    ro_run="unshare -m sh -c"
fi
rm -f ro/probe
if [ -n "$ro_run" ]; then
    for refopt in "--reference $OUT/ref.h5" ""; do
        mount_cmd=""
        [ "$ro_run" = "unshare -m sh -c" ] && mount_cmd="mount -t tmpfs -o ro,size=64k none '$OUT/ro' &&"
        t0=$(date +%s%N)
        $ro_run "$mount_cmd exec '$HYMO' sweep '$M' $refopt --t-end 2 --H 1e-3,2e-3,4e-3,5e-3 --jobs 1 \
            --configs '$CFG' -o '$OUT/ro/t'" > ro.out 2> ro.err
        code=$?
        t1=$(date +%s%N)
        ms=$(( (t1 - t0) / 1000000 ))
        [ $code -eq 2 ] || fail "read-only directory ($refopt): exit $code, expected 2: $(cat ro.err)"
        [ "$(wc -l < ro.err)" -eq 1 ] || fail "read-only directory ($refopt): not one line: $(cat ro.err)"
        grep -q "runs\|monolithic reference" ro.err && fail "read-only directory ($refopt): work started: $(cat ro.err)"
        echo "cli_paths: read-only output directory (${refopt:-reference computed}): exit 2 after $ms ms: $(cat ro.err)"
    done
else
    echo "cli_paths: no read-only directory available (root without mount namespaces): check skipped"
fi
chmod 755 ro

# 4. a file-size limit (SIGXFSZ ignored, as Python and many shells do)
limited() { # KB CMD...: runs CMD under ulimit -f KB, stderr to lim.err; exit code in $code
    kb=$1; shift
    ( trap '' XFSZ; ulimit -f "$kb"; exec "$@" ) > lim.out 2> lim.err
    code=$?
}
echo "previous" > t.h5
for kb in 1 4 8; do # the tables (the reference given)
    limited $kb "$HYMO" sweep "$M" --reference ref.h5 --H 1e-3,2e-3 --t-end 0.2 --jobs 1 --configs "$CFG" -o t
    [ $code -eq 2 ] || fail "sweep tables, ulimit -f $kb: exit $code, expected 2: $(cat lim.err)"
    [ "$(grep -c "^hymo: error" lim.err)" -eq 1 ] || fail "sweep tables, ulimit -f $kb: $(cat lim.err)"
    grep -q "File too large" lim.err || fail "sweep tables, ulimit -f $kb: message $(cat lim.err)"
    grep -q "tables not written" lim.out || fail "sweep tables, ulimit -f $kb: report $(tail -2 lim.out)"
    [ -e t.csv ] || [ -e t_achievable.csv ] && fail "sweep tables, ulimit -f $kb: a table was left"
    [ "$(cat t.h5)" = "previous" ] || fail "sweep tables, ulimit -f $kb: the older t.h5 was replaced"
    ls ./*.partial > /dev/null 2>&1 && fail "sweep tables, ulimit -f $kb: temporary file left: $(ls ./*.partial)"
done
for kb in 1 16 64 256; do # the sweep's own reference
    limited $kb "$HYMO" sweep "$M" --H 1e-3,2e-3 --t-end 0.2 --jobs 1 --configs "$CFG" -o u
    [ $code -eq 2 ] || fail "sweep reference, ulimit -f $kb: exit $code, expected 2: $(cat lim.err)"
    [ "$(grep -c "^hymo: error" lim.err)" -eq 1 ] || fail "sweep reference, ulimit -f $kb: $(cat lim.err)"
    ls u.* u_* ./*.partial > /dev/null 2>&1 && fail "sweep reference, ulimit -f $kb: files left: $(ls u.* u_* ./*.partial 2>/dev/null)"
done
for kb in 1 16 64; do
    limited $kb "$HYMO" cosim "$M" --t-end 1 -q -o v.h5
    [ $code -eq 2 ] || fail "cosim, ulimit -f $kb: exit $code, expected 2: $(cat lim.err)"
    [ "$(wc -l < lim.err)" -eq 1 ] || fail "cosim, ulimit -f $kb: $(cat lim.err)"
    ls v.h5* > /dev/null 2>&1 && fail "cosim, ulimit -f $kb: files left: $(ls v.h5*)"
    limited $kb "$HYMO" fmu "$M" --part whole -q -o w.fmu
    [ $code -eq 2 ] || fail "fmu, ulimit -f $kb: exit $code, expected 2: $(cat lim.err)"
    [ "$(wc -l < lim.err)" -eq 1 ] || fail "fmu, ulimit -f $kb: $(cat lim.err)"
    ls w.fmu* > /dev/null 2>&1 && fail "fmu, ulimit -f $kb: files left: $(ls w.fmu*)"
done
echo "cli_paths: all checks passed"
