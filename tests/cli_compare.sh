#!/bin/sh
# CLI behaviour of `hymo compare`: exit codes (0 pass, 1 threshold failed,
# 2 bad input), the error table, PASS/FAIL lines, and the rejection of
# incomplete runs, files of another model and bad options.
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

# 4. a file of another model: exit 2, one line with both names and hashes
"$HYMO" run "$SRC/data/quickreturn.yaml" --t-end 0.05 -o "$OUT/qr.h5" -q || fail "quickreturn run exited $?"
"$HYMO" compare "$OUT/ref.h5" "$OUT/qr.h5" > /dev/null 2> "$OUT/model.err"
code=$?; [ $code -eq 2 ] || fail "another model exit $code"
[ "$(wc -l < "$OUT/model.err")" -eq 1 ] || fail "another model: stderr not one line"
grep -q "another model: 'quickreturn' (model_sha256 [0-9a-f]\{12\}\.\.\.) vs reference 'fourbar' (model_sha256 [0-9a-f]\{12\}\.\.\.)" "$OUT/model.err" ||
    fail "another model message: $(cat "$OUT/model.err")"

# 5. an incomplete run (Newton stops at t = 1 s): exit 2, as RUN and as REF,
#    also under its .partial name
"$HYMO" run "$M" --t-end 2 --max-iter 1 -o "$OUT/nc.h5" -q 2>/dev/null
code=$?; [ $code -eq 3 ] || fail "incomplete run exit $code, expected 3"
"$HYMO" compare "$OUT/ref.h5" "$OUT/nc.h5" > /dev/null 2> "$OUT/nc.err"
code=$?; [ $code -eq 2 ] || fail "incomplete RUN exit $code"
grep -q "nc.h5': incomplete run (complete = 0, reached t = 1 of 2 s)" "$OUT/nc.err" || fail "incomplete message: $(cat "$OUT/nc.err")"
"$HYMO" compare "$OUT/nc.h5" "$OUT/ref.h5" > /dev/null 2>&1; code=$?
[ $code -eq 2 ] || fail "incomplete REF exit $code"
cp "$OUT/nc.h5" "$OUT/killed.h5.partial"
"$HYMO" compare "$OUT/ref.h5" "$OUT/killed.h5.partial" > /dev/null 2> "$OUT/partial.err"; code=$?
[ $code -eq 2 ] || fail ".partial exit $code"
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

# 7. help
"$HYMO" compare --help | grep -q "usage: hymo compare REF.h5 RUN.h5" || fail "compare --help"
"$HYMO" --help | grep -q "compare REF.h5 RUN.h5" || fail "main usage lacks compare"
echo "cli_compare: all checks passed"
