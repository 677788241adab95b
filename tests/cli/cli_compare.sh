#!/bin/sh
# CLI behaviour of `hymo compare`: exit codes (0 pass, 1 threshold failed,
# 2 bad input), the error table, PASS/FAIL lines, the failure of incomplete
# runs and of files of another model (exit 1), and bad options (exit 2).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_compare
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/fourbar.yaml

# The four-bar's valve opens at t = 1 s; before that the mechanism rests and
# runs with different steps agree to round-off, so the runs go to 1.5 s.
"$HYMO" run "$M" --t-end 1.5 -o "$OUT/ref.h5" -q || fail "reference run exited $?"
"$HYMO" run "$M" --t-end 1.5 --dt 2e-3 -o "$OUT/run2.h5" -q || fail "dt 2e-3 run exited $?"

# 1. a file against itself: exit 0, every error exactly 0
"$HYMO" compare "$OUT/ref.h5" "$OUT/ref.h5" --max-rms s=1e-12 --max-abs p=1e-9 > "$OUT/same.out" 2>&1
code=$?; [ $code -eq 0 ] || fail "compare ref ref exit $code: $(cat "$OUT/same.out")"
grep -q "compared   1501 reference samples, t = 0 .. 1.5 s" "$OUT/same.out" || fail "samples line: $(cat "$OUT/same.out")"
for sig in z zd s sd p U force; do
    line=$(grep "^$sig " "$OUT/same.out") || fail "no table row for $sig"
    [ "$(echo "$line" | grep -o "0.000e+00" | wc -l)" -eq 2 ] || fail "ref vs ref row not zero: $line"
done
grep -q "^PASS rms s\[cyl\] = 0.00e+00 m <= 1.00e-12 m" "$OUT/same.out" || fail "PASS line: $(cat "$OUT/same.out")"
grep -q "^result: PASS (2 checks)" "$OUT/same.out" || fail "result line"

# 2. dt 1e-3 vs 2e-3 with a threshold no integrator meets: exit 1, FAIL
#    names the component, value, limit and ratio
"$HYMO" compare "$OUT/ref.h5" "$OUT/run2.h5" --max-rms s=1e-12 > "$OUT/strict.out" 2>&1
code=$?; [ $code -eq 1 ] || fail "strict threshold exit $code, expected 1"
grep -Eq '^FAIL rms s\[cyl\] = [0-9]\.[0-9]{2}e-[0-9]{2} m > 1\.00e-12 m \([0-9.e+]+x\)$' "$OUT/strict.out" ||
    fail "FAIL line: $(grep FAIL "$OUT/strict.out")"
grep -q "^result: FAIL (1 of 1 checks failed)" "$OUT/strict.out" || fail "result line (strict)"
# 1e-12 m is far below the reference's own estimated error (its /accuracy): warned
grep -q "warning: --max-rms s=1e-12 is tighter than the reference's own estimated max error" "$OUT/strict.out" ||
    fail "no warning for a threshold below the reference's own error: $(cat "$OUT/strict.out")"
"$HYMO" info "$OUT/ref.h5" | grep -q "^accuracy  *estimated max error z" || fail "info does not print the error estimate"
# the errors are real numbers: RMS of s between 1e-8 and 1e-4 m, max >= RMS,
# the largest pressure error after the valve opens at t = 1 s
awk '$1 == "s" { rms = $2; mx = $5; ok = (rms > 1e-8 && rms < 1e-4 && mx >= rms) }
     END { exit ok ? 0 : 1 }' "$OUT/strict.out" || fail "s errors implausible: $(grep '^s ' "$OUT/strict.out")"
awk '$1 == "p" { t = $8; ok = (t >= 1.0 && t <= 1.5) } END { exit ok ? 0 : 1 }' "$OUT/strict.out" ||
    fail "time of max p error: $(grep '^p ' "$OUT/strict.out")"
grep -q "^p .*p\[V[0-9]\]" "$OUT/strict.out" || fail "pressure component not named p[V..]"

# 3. generous thresholds: exit 0
"$HYMO" compare "$OUT/ref.h5" "$OUT/run2.h5" --max-rms s=1e-3 --max-abs z=0.01 --max-rms p=1e6 \
    --max-abs force=1e5 > "$OUT/loose.out" 2>&1
code=$?; [ $code -eq 0 ] || fail "generous thresholds exit $code: $(cat "$OUT/loose.out")"
[ "$(grep -c '^PASS ' "$OUT/loose.out")" -eq 4 ] || fail "expected 4 PASS lines"
grep -Eq '^PASS abs z\[z[0-9]\] = .* rad <= 1\.00e-02 rad \(.*x\) at t = ' "$OUT/loose.out" || fail "abs z PASS line"
# one failing among passing ones still exits 1
"$HYMO" compare "$OUT/ref.h5" "$OUT/run2.h5" --max-rms s=1e-3 --max-abs U=1e-9 > "$OUT/mixed.out" 2>&1
code=$?; [ $code -eq 1 ] || fail "mixed thresholds exit $code"
grep -q "^FAIL abs U\[dcv\]" "$OUT/mixed.out" || fail "FAIL abs U line"

# 4. a file of another model fails: exit 1, one line with both names and hashes
"$HYMO" run "$SRC/data/quickreturn.yaml" --t-end 0.05 -o "$OUT/qr.h5" -q || fail "quickreturn run exited $?"
"$HYMO" compare "$OUT/ref.h5" "$OUT/qr.h5" > /dev/null 2> "$OUT/model.err"
code=$?; [ $code -eq 1 ] || fail "another model exit $code"
[ "$(wc -l < "$OUT/model.err")" -eq 1 ] || fail "another model: stderr not one line"
grep -q "another model: 'quickreturn' (model_sha256 [0-9a-f]\{12\}\.\.\., physics [0-9a-f]\{12\}\.\.\.) vs reference 'fourbar' (model_sha256 [0-9a-f]\{12\}\.\.\., physics [0-9a-f]\{12\}\.\.\.)" "$OUT/model.err" ||
    fail "another model message: $(cat "$OUT/model.err")"

# 5. an incomplete run (Newton stops at t = 1 s): as RUN it fails (exit 1),
#    also under its .partial name; as REF it is bad input (exit 2)
"$HYMO" run "$M" --t-end 2 --max-iter 1 -o "$OUT/nc.h5" -q 2>/dev/null
code=$?; [ $code -eq 3 ] || fail "incomplete run exit $code, expected 3"
"$HYMO" compare "$OUT/ref.h5" "$OUT/nc.h5" > /dev/null 2> "$OUT/nc.err"
code=$?; [ $code -eq 1 ] || fail "incomplete RUN exit $code"
grep -q "nc.h5': incomplete run (complete = 0, reached t = 1 of 2 s)" "$OUT/nc.err" || fail "incomplete message: $(cat "$OUT/nc.err")"
"$HYMO" compare "$OUT/nc.h5" "$OUT/ref.h5" > /dev/null 2>&1; code=$?
[ $code -eq 2 ] || fail "incomplete REF exit $code"
cp "$OUT/nc.h5" "$OUT/killed.h5.partial"
"$HYMO" compare "$OUT/ref.h5" "$OUT/killed.h5.partial" > /dev/null 2> "$OUT/partial.err"; code=$?
[ $code -eq 1 ] || fail ".partial exit $code"
grep -q "incomplete run" "$OUT/partial.err" || fail ".partial message: $(cat "$OUT/partial.err")"

# 6. bad options and files: exit 2 with one line on stderr
expect2() {
    what=$1; shift
    "$HYMO" compare "$@" > /dev/null 2> "$OUT/bad.err"; code=$?
    [ $code -eq 2 ] || fail "$what: exit $code, expected 2"
    [ "$(wc -l < "$OUT/bad.err")" -eq 1 ] || fail "$what: stderr not one line: $(cat "$OUT/bad.err")"
}
expect2 "unknown signal" "$OUT/ref.h5" "$OUT/run2.h5" --max-rms foo=1
grep -q "unknown signal 'foo'" "$OUT/bad.err" || fail "unknown signal message: $(cat "$OUT/bad.err")"
expect2 "malformed value" "$OUT/ref.h5" "$OUT/run2.h5" --max-abs s=abc
expect2 "zero threshold" "$OUT/ref.h5" "$OUT/run2.h5" --max-rms s=0
expect2 "negative threshold" "$OUT/ref.h5" "$OUT/run2.h5" --max-rms s=-1e-3
expect2 "no '='" "$OUT/ref.h5" "$OUT/run2.h5" --max-rms s
expect2 "missing value" "$OUT/ref.h5" "$OUT/run2.h5" --max-abs
expect2 "unknown option" "$OUT/ref.h5" "$OUT/run2.h5" --nope
expect2 "one file" "$OUT/ref.h5"
expect2 "three files" "$OUT/ref.h5" "$OUT/run2.h5" "$OUT/run2.h5"
expect2 "no /cosim" "$OUT/ref.h5" "$OUT/run2.h5" --max-residual-energy 1
grep -q "no /cosim group" "$OUT/bad.err" || fail "no /cosim message: $(cat "$OUT/bad.err")"
expect2 "bad energy" "$OUT/ref.h5" "$OUT/run2.h5" --max-residual-energy -1
expect2 "missing file" "$OUT/ref.h5" "$OUT/missing.h5"
grep -q "missing.h5" "$OUT/bad.err" || fail "missing file not named"
echo "not hdf5" > "$OUT/junk.h5"
expect2 "junk file" "$OUT/junk.h5" "$OUT/run2.h5"
grep -q "junk.h5" "$OUT/bad.err" || fail "junk file not named"

# 7. the gate
PY=/usr/bin/python3
if $PY -c "import h5py, numpy, scipy" 2>/dev/null; then
    # 7a. a reference cut to 10 of its 1501 rows but still complete = 1: exit 2
    cp "$OUT/ref.h5" "$OUT/cut.h5"
    $PY - "$OUT/cut.h5" <<'PYEOF' || fail "h5py could not cut the file"
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    assert f["time"].shape[0] == 1501 and f.attrs["complete"] == 1
    f.visititems(lambda n, o: o.resize((10,) + o.shape[1:]) if isinstance(o, h5py.Dataset) and o.shape[0] == 1501 else None)
PYEOF
    for order in "cut ref" "ref cut"; do
        set -- $order
        "$HYMO" compare "$OUT/$1.h5" "$OUT/$2.h5" > /dev/null 2> "$OUT/cut.err"; code=$?
        [ $code -eq 2 ] || fail "a complete file cut to 10 rows ($order): exit $code, expected 2"
        grep -q "cut.h5': the last row is at t = 0.009.* but t_reached = 1.5 s (10 rows): damaged or altered file" "$OUT/cut.err" ||
            fail "cut message: $(cat "$OUT/cut.err")"
    done
    "$HYMO" info "$OUT/cut.h5" > /dev/null 2>&1; code=$?
    [ $code -eq 2 ] || fail "info of the cut file: exit $code, expected 2"
    # ... also with t_reached and the last time forged: the rows disagree with n_steps
    $PY - "$OUT/cut.h5" <<'PYEOF' || fail "h5py could not forge the file"
import sys, h5py
with h5py.File(sys.argv[1], "r+") as f:
    f["time"][9] = 1.5
    f["solver"].attrs["t_reached"] = 1.5
PYEOF
    "$HYMO" compare "$OUT/ref.h5" "$OUT/cut.h5" > /dev/null 2> "$OUT/cut.err"; code=$?
    [ $code -eq 2 ] || fail "forged cut file: exit $code, expected 2"
    grep -q "10 rows, but n_steps = 1500 with output_every = 1 means 1501 rows" "$OUT/cut.err" || fail "forged cut message: $(cat "$OUT/cut.err")"

    # 7b. per-component thresholds: z[z3] and p[V2] pass or fail on their own values
    "$HYMO" compare "$OUT/ref.h5" "$OUT/run2.h5" --max-abs 'z[z3]=1e-2' --max-rms 'p[V2]=1e6' --max-rms 's[cyl]=1e-3' > "$OUT/comp.out" 2>&1
    code=$?; [ $code -eq 0 ] || fail "per-component thresholds that hold: exit $code: $(cat "$OUT/comp.out")"
    grep -q "^PASS abs z\[z3\] = .* rad <= 1.00e-02 rad" "$OUT/comp.out" || fail "PASS z[z3] line: $(cat "$OUT/comp.out")"
    grep -q "^PASS rms p\[V2\] = .* Pa <= 1.00e+06 Pa" "$OUT/comp.out" || fail "PASS p[V2] line"
    # the values are the component's own: z[z1]'s max error is not z's worst (z3)
    "$HYMO" compare "$OUT/ref.h5" "$OUT/run2.h5" --max-abs 'z[z1]=1' --max-abs z=1 > "$OUT/comp1.out" 2>&1 || fail "z[z1]=1 exit $?"
    v1=$(sed -n 's/^PASS abs z\[z1\] = \([0-9.e+-]*\) .*/\1/p' "$OUT/comp1.out")
    vz=$(sed -n 's/^PASS abs z\[z[0-9]\] = \([0-9.e+-]*\) .*/\1/p' "$OUT/comp1.out" | tail -1)
    [ -n "$v1" ] && [ -n "$vz" ] && awk -v a="$v1" -v b="$vz" 'BEGIN { exit !(a + 0 < b + 0) }' ||
        fail "z[z1] ($v1) should be below the worst z ($vz): $(cat "$OUT/comp1.out")"
    "$HYMO" compare "$OUT/ref.h5" "$OUT/run2.h5" --max-rms 'p[V2]=1e-3' --max-rms 'p[V1]=1e6' > "$OUT/comp2.out" 2>&1
    code=$?; [ $code -eq 1 ] || fail "p[V2]=1e-3: exit $code, expected 1"
    grep -q "^FAIL rms p\[V2\] = .* Pa > 1.00e-03 Pa" "$OUT/comp2.out" || fail "FAIL p[V2] line: $(cat "$OUT/comp2.out")"
    grep -q "^PASS rms p\[V1\]" "$OUT/comp2.out" || fail "PASS p[V1] line"
    expect2 "unknown component" "$OUT/ref.h5" "$OUT/run2.h5" --max-rms 'z[nope]=1'
    grep -q "no component 'z\[nope\]' (components of z: z\[z1\], z\[z2\], z\[z3\])" "$OUT/bad.err" || fail "unknown component message: $(cat "$OUT/bad.err")"
    expect2 "empty component" "$OUT/ref.h5" "$OUT/run2.h5" --max-rms 'z[]=1'

    # 7c. model identity by the physics: a comment-only edit and tighter
    #     tolerances are the same model; a changed mass is not
    sed 's/^# /#  (edited) /' "$M" > "$OUT/m_comment.yaml"
    sed 's/tolerances: {position: 1.0e-7, pressure: 1.0e-2/tolerances: {position: 1.0e-9, pressure: 1.0e-4/' "$M" > "$OUT/m_tol.yaml"
    cmp -s "$M" "$OUT/m_tol.yaml" && fail "the tolerance edit changed nothing"
    "$HYMO" run "$OUT/m_comment.yaml" --t-end 1.5 -o "$OUT/comment.h5" -q || fail "comment run"
    "$HYMO" run "$OUT/m_tol.yaml" --t-end 1.5 -o "$OUT/tol.h5" -q || fail "tolerance run"
    for f in comment tol; do
        "$HYMO" compare "$OUT/ref.h5" "$OUT/$f.h5" --max-rms s=1e-4 > "$OUT/$f.out" 2>&1; code=$?
        [ $code -eq 0 ] || fail "$f edit: exit $code, expected 0: $(cat "$OUT/$f.out")"
        grep -q "^model  *the model files differ only in comments, formatting, description or the simulation section" "$OUT/$f.out" ||
            fail "$f edit: no same-physics line"
    done
    awk '/^bodies:/ { b = 1 } b && /mass:/ && !done { sub(/mass: *[0-9.e+-]+/, "mass: 3.5"); done = 1 } { print }' "$M" > "$OUT/m_mass.yaml"
    cmp -s "$M" "$OUT/m_mass.yaml" && fail "the mass edit changed nothing"
    "$HYMO" run "$OUT/m_mass.yaml" --t-end 1.5 -o "$OUT/mass.h5" -q || fail "mass run"
    "$HYMO" compare "$OUT/ref.h5" "$OUT/mass.h5" > /dev/null 2> "$OUT/mass.err"; code=$?
    [ $code -eq 1 ] || fail "changed mass: exit $code, expected 1"
    grep -q "is a run of another model" "$OUT/mass.err" || fail "changed mass message: $(cat "$OUT/mass.err")"
    "$HYMO" compare "$OUT/ref.h5" "$OUT/mass.h5" --allow-model-mismatch --max-rms s=1 > "$OUT/mass.out" 2>&1; code=$?
    [ $code -eq 0 ] || fail "--allow-model-mismatch: exit $code: $(cat "$OUT/mass.out")"
    grep -q "warning: .* are runs of different models; compared as asked (--allow-model-mismatch)" "$OUT/mass.out" || fail "mismatch warning"

    # 7d. another tool's result: CSV written by an independent script
    #     (tests/foreign_csv.py: Lagrange + DOP853, its own 3.7 ms grid)
    DP=$SRC/data/double_pendulum.yaml
    "$HYMO" run "$DP" --t-end 2 -o "$OUT/dp.h5" -q || fail "double pendulum run"
    $PY "$SRC/tests/foreign_csv.py" "$OUT/dp.csv" || fail "foreign_csv.py"
    $PY "$SRC/tests/foreign_csv.py" "$OUT/dp_off.csv" --offset 'z[z2]=0.01' || fail "foreign_csv.py --offset"
    $PY "$SRC/tests/foreign_csv.py" "$OUT/dp_map.csv" --map "$OUT/dp_map.yaml" || fail "foreign_csv.py --map"
    "$HYMO" compare "$OUT/dp.h5" "$OUT/dp.csv" --max-abs z=1e-4 --max-rms 'zd[z2]=1e-3' > "$OUT/csv.out" 2>&1; code=$?
    [ $code -eq 0 ] || fail "independent CSV: exit $code, expected 0: $(cat "$OUT/csv.out")"
    grep -q "^run  *.*dp.csv: CSV, 4 of 4 components, 542 rows, t = 0 .. 2 s" "$OUT/csv.out" || fail "CSV run line: $(cat "$OUT/csv.out")"
    grep -q "^compared   2001 reference samples" "$OUT/csv.out" || fail "CSV samples"
    "$HYMO" compare "$OUT/dp.h5" "$OUT/dp_off.csv" --max-abs 'z[z1]=1e-4' --max-abs 'z[z2]=1e-3' > "$OUT/csvf.out" 2>&1; code=$?
    [ $code -eq 1 ] || fail "CSV with a 0.01 rad offset: exit $code, expected 1: $(cat "$OUT/csvf.out")"
    grep -q "^FAIL abs z\[z2\] = 1.0[0-9]e-02 rad > 1.00e-03 rad" "$OUT/csvf.out" || fail "CSV FAIL line: $(cat "$OUT/csvf.out")"
    grep -q "^PASS abs z\[z1\]" "$OUT/csvf.out" || fail "CSV PASS z[z1] line"
    "$HYMO" compare "$OUT/dp.h5" "$OUT/dp_map.csv" --map "$OUT/dp_map.yaml" --max-abs z=1e-4 > "$OUT/csvm.out" 2>&1; code=$?
    [ $code -eq 0 ] || fail "CSV with --map: exit $code: $(cat "$OUT/csvm.out")"
    grep -q "^zd .*(not in run)" "$OUT/csvm.out" || fail "zd should be (not in run) with --map"
    expect2 "threshold on a column the CSV lacks" "$OUT/dp.h5" "$OUT/dp_map.csv" --map "$OUT/dp_map.yaml" --max-abs 'zd[z1]=1'
    grep -q "has no column zd\[z1\]" "$OUT/bad.err" || fail "missing column message: $(cat "$OUT/bad.err")"
    expect2 "CSV with tool columns but no map" "$OUT/dp.h5" "$OUT/dp_map.csv"
    grep -q "column 'step' is not t/time or a component SIGNAL\[NAME\] of the reference (z\[z1\], z\[z2\], zd\[z1\], zd\[z2\])" "$OUT/bad.err" ||
        fail "unknown column message: $(cat "$OUT/bad.err")"
    printf 't,z[z1]\n0,1\n0.5,abc\n' > "$OUT/bad.csv"
    expect2 "CSV with text" "$OUT/dp.h5" "$OUT/bad.csv"
    grep -q "bad.csv':3: column 2: 'abc' is not a number" "$OUT/bad.err" || fail "CSV text message: $(cat "$OUT/bad.err")"
    printf 'z[z1]\n0\n' > "$OUT/bad.csv"
    expect2 "CSV without time" "$OUT/dp.h5" "$OUT/bad.csv"
    printf 't,z[z1]\n0,1\n1,2,3\n' > "$OUT/bad.csv"
    expect2 "CSV with a long row" "$OUT/dp.h5" "$OUT/bad.csv"
    printf 't,z[z1]\n1,1\n0,2\n' > "$OUT/bad.csv"
    expect2 "CSV with decreasing time" "$OUT/dp.h5" "$OUT/bad.csv"
    expect2 "--map with an HDF5 run" "$OUT/ref.h5" "$OUT/run2.h5" --map "$OUT/dp_map.yaml"
else
    echo "cli_compare: /usr/bin/python3 with h5py, numpy, scipy missing: gate checks skipped"
fi

# 8. help
"$HYMO" compare --help | grep -q "usage: hymo compare REF.h5 RUN.h5" || fail "compare --help"
"$HYMO" --help | grep -q "compare REF.h5 RUN.h5" || fail "main usage lacks compare"
echo "cli_compare: all checks passed"
