#!/bin/sh
# `hymo compare` as a gate that cannot pass what it did not check
# (docs/compare.md): a run fails (exit 1, one line on stderr) unless it
# covers the reference's span or the sub-span asked with --span, is
# complete (a co-simulation stopped as unstable says "unstable"), and is of
# the reference's model (a CSV may declare it in a comment line).
# args: $1 hymo binary, $2 source dir, $3 build dir, [$4 case]; without a
# case every case runs.  Cases: one_row short_csv short_h5 span unstable
# model good missing_signal.
set -u
HYMO=$1; SRC=$2; CASE=${4:-all}
OUT=$3/cli_compare_gate/$CASE
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL ($CASE): $*"; exit 1; }
PY=/usr/bin/python3
if ! $PY -c "import h5py, numpy" 2>/dev/null; then
    echo "cli_compare_gate: /usr/bin/python3 with h5py and numpy missing: skipped"
    exit 77
fi
M=$SRC/data/fourbar.yaml

# csv H5 OUT.csv T_END [HEADER_LINE]: the rows of H5 with t <= T_END as a CSV
# (columns t, z[..], zd[..], s[..], p[..]), HEADER_LINE (e.g. "# model_physics_sha256: ...")
# written first; HEADER_LINE "identity" writes the file's own model and hashes.
csv() {
    $PY - "$@" <<'PYEOF' || fail "h5py could not write $2"
import sys, h5py, numpy as np
src, dst, t_end = sys.argv[1], sys.argv[2], float(sys.argv[3])
head = sys.argv[4] if len(sys.argv) > 4 else ""
def names(ds):
    a = ds.attrs.get("names", ds.attrs.get("columns"))
    return [x.decode() if isinstance(x, bytes) else str(x) for x in a]
with h5py.File(src, "r") as f:
    t = f["time"][:]
    keep = t <= t_end * (1 + 1e-12)
    cols, data = ["t"], [t[keep]]
    for sig, path in (("z", "states/z"), ("zd", "states/zd"), ("s", "actuators/s"), ("p", "states/p")):
        if path not in f or f[path].shape[1] == 0:
            continue
        for j, nm in enumerate(names(f[path])):
            cols.append(f"{sig}[{nm}]")
            data.append(f[path][:, j][keep])
    attr = lambda k: (lambda v: v.decode() if isinstance(v, bytes) else str(v))(f.attrs[k])
    if head == "identity":
        head = "# model: %s\n# model_physics_sha256: %s" % (attr("model_name"), attr("model_physics_sha256"))
with open(dst, "w") as out:
    out.write("# written from %s\n" % src)
    if head:
        out.write(head + "\n")
    out.write(",".join(cols) + "\n")
    for row in np.column_stack(data):
        out.write(",".join("%.17g" % v for v in row) + "\n")
PYEOF
}
# gate EXPECTED_EXIT WHAT ARGS...: runs compare, checks the exit status; stdout
# to $OUT/gate.out, stderr to $OUT/gate.err
gate() {
    want=$1; what=$2; shift 2
    "$HYMO" compare "$@" > "$OUT/gate.out" 2> "$OUT/gate.err"; code=$?
    [ $code -eq "$want" ] || fail "$what: exit $code, expected $want: $(cat "$OUT/gate.out" "$OUT/gate.err")"
}
one_line() { [ "$(wc -l < "$OUT/gate.err")" -eq 1 ] || fail "$1: stderr is not one line: $(cat "$OUT/gate.err")"; }
ref15() { "$HYMO" run "$M" --t-end 1.5 -o "$OUT/ref.h5" -q || fail "reference run exited $?"; }

run_case() {
    CASE=$1
    case $1 in
    one_row)
        # a CSV with one row at t = 0 (exactly the reference's values there)
        ref15
        csv "$OUT/ref.h5" "$OUT/one.csv" 0
        [ "$(grep -vc '^#' "$OUT/one.csv")" -eq 2 ] || fail "the CSV has not one data row"
        gate 1 "a 1-row CSV" "$OUT/ref.h5" "$OUT/one.csv" --max-abs z=1
        one_line "1-row CSV"
        grep -q "hymo: fail: '.*one.csv' covers t = 0 .. 0 s, not the reference's span t = 0 .. 1.5 s" "$OUT/gate.err" ||
            fail "1-row message: $(cat "$OUT/gate.err")"
        gate 1 "a 1-row CSV, no thresholds" "$OUT/ref.h5" "$OUT/one.csv"
        ;;
    short_csv)
        # a CSV with the first 0.09 s of a 10 s reference (its own rows)
        "$HYMO" run "$SRC/data/double_pendulum.yaml" --t-end 10 -o "$OUT/ref10.h5" -q || fail "10 s reference"
        csv "$OUT/ref10.h5" "$OUT/short.csv" 0.09
        gate 1 "a CSV of 0.09 s of 10 s" "$OUT/ref10.h5" "$OUT/short.csv" --max-abs z=1e-9
        one_line "0.09 s CSV"
        grep -q "covers t = 0 .. 0.09 s, not the reference's span t = 0 .. 10 s" "$OUT/gate.err" ||
            fail "0.09 s message: $(cat "$OUT/gate.err")"
        # ... also when it stops one reference sample (1 ms) short of 10 s
        csv "$OUT/ref10.h5" "$OUT/almost.csv" 9.999
        gate 1 "a CSV to 9.999 s of 10 s" "$OUT/ref10.h5" "$OUT/almost.csv"
        grep -q "covers t = 0 .. 9.999 s" "$OUT/gate.err" || fail "9.999 s message: $(cat "$OUT/gate.err")"
        # the whole 10 s: passes (errors exactly 0)
        csv "$OUT/ref10.h5" "$OUT/whole.csv" 10
        gate 0 "the whole 10 s as CSV" "$OUT/ref10.h5" "$OUT/whole.csv" --max-abs z=1e-12
        ;;
    short_h5)
        # a complete run with a shorter --t-end: covers 1 of 1.5 s
        ref15
        "$HYMO" run "$M" --t-end 1 -o "$OUT/short.h5" -q || fail "1 s run exited $?"
        gate 1 "a complete 1 s run against 1.5 s" "$OUT/ref.h5" "$OUT/short.h5" --max-rms s=1
        one_line "short h5"
        grep -q "hymo: fail: '.*short.h5' covers t = 0 .. 1 s, not the reference's span t = 0 .. 1.5 s .*--span T0:T1 checks a sub-span" "$OUT/gate.err" ||
            fail "short h5 message: $(cat "$OUT/gate.err")"
        # a longer run covers the shorter reference
        "$HYMO" run "$M" --t-end 2 --dt 2e-3 -o "$OUT/long.h5" -q || fail "2 s run exited $?"
        gate 0 "a 2 s run against a 1.5 s reference" "$OUT/ref.h5" "$OUT/long.h5" --max-rms s=1e-3
        grep -q "^compared   1501 reference samples, t = 0 .. 1.5 s (the reference's whole span)" "$OUT/gate.out" ||
            fail "compared line: $(cat "$OUT/gate.out")"
        ;;
    span)
        # --span T0:T1 checks a sub-span on purpose, and says so
        "$HYMO" run "$SRC/data/double_pendulum.yaml" --t-end 10 -o "$OUT/ref10.h5" -q || fail "10 s reference"
        csv "$OUT/ref10.h5" "$OUT/short.csv" 0.09
        gate 0 "--span 0:0.09 with a 0.09 s CSV" "$OUT/ref10.h5" "$OUT/short.csv" --span 0:0.09 --max-abs z=1e-12
        grep -q "^compared   91 reference samples, t = 0 .. 0.09 s (--span 0:0.09 of the reference's t = 0 .. 10 s)" "$OUT/gate.out" ||
            fail "compared line with --span: $(cat "$OUT/gate.out")"
        grep -q "^result: PASS (1 checks) on t = 0 .. 0.09 s (--span 0:0.09 of the reference's t = 0 .. 10 s)" "$OUT/gate.out" ||
            fail "result line with --span: $(cat "$OUT/gate.out")"
        # a sub-span the run does not cover
        gate 1 "--span 0:5 with a 0.09 s CSV" "$OUT/ref10.h5" "$OUT/short.csv" --span 0:5
        one_line "--span 0:5"
        grep -q "covers t = 0 .. 0.09 s, not the span checked, --span 0:5 (the reference '.*ref10.h5': t = 0 .. 10 s)" "$OUT/gate.err" ||
            fail "--span 0:5 message: $(cat "$OUT/gate.err")"
        # a sub-span in the middle: only its samples are compared
        "$HYMO" run "$SRC/data/double_pendulum.yaml" --t-end 10 --dt 2e-3 -o "$OUT/run2.h5" -q || fail "dt 2 ms run"
        gate 0 "--span 2:3" "$OUT/ref10.h5" "$OUT/run2.h5" --span 2:3 --max-abs z=1
        grep -q "^compared   1001 reference samples, t = 2 .. 3 s (--span 2:3 " "$OUT/gate.out" || fail "--span 2:3: $(cat "$OUT/gate.out")"
        # bad spans: exit 2
        for bad in "0:20" "-1:1" "3:2" "1" "a:b" "1:" ":1" "0:nan"; do
            gate 2 "--span $bad" "$OUT/ref10.h5" "$OUT/run2.h5" --span "$bad"
            one_line "--span $bad"
        done
        ;;
    unstable)
        # crane1, velocity-force, zero-order hold, H = 4 ms: unstable at t = 1.16 s
        "$HYMO" run "$SRC/data/crane1.yaml" --t-end 3 -o "$OUT/ref.h5" -q || fail "crane1 reference"
        "$HYMO" cosim "$SRC/data/crane1.yaml" --t-end 3 --H 4e-3 --hh 1e-4 --coupling velocity-force --extrapolation 0 \
            -o "$OUT/unstable.h5" > "$OUT/cosim.out" 2>&1
        code=$?; [ $code -eq 3 ] || fail "the co-simulation exited $code, expected 3 (unstable): $(cat "$OUT/cosim.out")"
        gate 1 "an unstable co-simulation" "$OUT/ref.h5" "$OUT/unstable.h5" --max-rms s=1
        one_line "unstable"
        grep -q "hymo: fail: '.*unstable.h5': unstable co-simulation: stopped at t = 1.16 of 3 s (t = 1.16 s (step 290): |residual energy| .* exceeds" "$OUT/gate.err" ||
            fail "unstable message: $(cat "$OUT/gate.err")"
        # its span: the part before the instability passes only when asked for
        gate 1 "an unstable co-simulation with --span 0:1" "$OUT/ref.h5" "$OUT/unstable.h5" --span 0:1
        grep -q "unstable co-simulation" "$OUT/gate.err" || fail "unstable with --span: $(cat "$OUT/gate.err")"
        # as the reference it is bad input
        gate 2 "an unstable co-simulation as the reference" "$OUT/unstable.h5" "$OUT/ref.h5"
        grep -q "hymo: error: .*unstable co-simulation" "$OUT/gate.err" || fail "unstable reference: $(cat "$OUT/gate.err")"
        ;;
    model)
        # a CSV declaring quickreturn's model against a fourbar reference
        ref15
        "$HYMO" run "$SRC/data/quickreturn.yaml" --t-end 0.01 -o "$OUT/qr.h5" -q || fail "quickreturn run"
        QR=$(h5dump -a /model_physics_sha256 "$OUT/qr.h5" | sed -n 's/.*(0): "\([0-9a-f]*\)".*/\1/p')
        [ ${#QR} -eq 64 ] || fail "quickreturn physics hash: '$QR'"
        csv "$OUT/ref.h5" "$OUT/other.csv" 1.5 "# model: quickreturn
# model_physics_sha256: $QR"
        gate 1 "a CSV declaring another model" "$OUT/ref.h5" "$OUT/other.csv" --max-abs z=1
        one_line "another model"
        grep -q "hymo: fail: '.*other.csv' declares another model: 'quickreturn' (model_sha256 unknown..., physics ${QR%????????????????????????????????????????????????????}.*) vs reference 'fourbar'" "$OUT/gate.err" ||
            fail "another model message: $(cat "$OUT/gate.err")"
        gate 0 "a CSV declaring another model, --allow-model-mismatch" "$OUT/ref.h5" "$OUT/other.csv" --allow-model-mismatch --max-abs z=1e-12
        # the text hash, in upper case: the same check
        QRT=$(h5dump -a /model_sha256 "$OUT/qr.h5" | sed -n 's/.*(0): "\([0-9a-f]*\)".*/\1/p' | tr a-f A-F)
        csv "$OUT/ref.h5" "$OUT/other_text.csv" 1.5 "# model_sha256: $QRT"
        gate 1 "a CSV declaring another model_sha256" "$OUT/ref.h5" "$OUT/other_text.csv"
        grep -q "declares another model" "$OUT/gate.err" || fail "model_sha256 message: $(cat "$OUT/gate.err")"
        # a declaration that is not a hash, or two different ones: bad input
        csv "$OUT/ref.h5" "$OUT/bad.csv" 1.5 "# model_physics_sha256: 1234"
        gate 2 "a malformed hash" "$OUT/ref.h5" "$OUT/bad.csv"
        grep -q "bad.csv':2: model_physics_sha256: '1234' is not a SHA-256 (64 hex digits)" "$OUT/gate.err" || fail "malformed hash: $(cat "$OUT/gate.err")"
        csv "$OUT/ref.h5" "$OUT/two.csv" 1.5 "identity"
        printf '# model_physics_sha256: %s\n' "$QR" >> "$OUT/two.csv"
        gate 2 "two declared hashes" "$OUT/ref.h5" "$OUT/two.csv"
        grep -q "model_physics_sha256 given twice" "$OUT/gate.err" || fail "two hashes: $(cat "$OUT/gate.err")"
        ;;
    good)
        # complete good runs pass: an HDF5 run and a CSV written from it
        ref15
        "$HYMO" run "$M" --t-end 1.5 --dt 2e-3 -o "$OUT/run2.h5" -q || fail "dt 2 ms run"
        gate 0 "a complete h5 run" "$OUT/ref.h5" "$OUT/run2.h5" --max-rms s=1e-3 --max-abs z=1e-2
        grep -q "^result: PASS (2 checks) on t = 0 .. 1.5 s (the reference's whole span)" "$OUT/gate.out" || fail "h5 result line: $(cat "$OUT/gate.out")"
        [ -s "$OUT/gate.err" ] && fail "a complete run warns: $(cat "$OUT/gate.err")"
        csv "$OUT/run2.h5" "$OUT/run2.csv" 1.5 "identity"
        gate 0 "a CSV of a complete run, declaring its model" "$OUT/ref.h5" "$OUT/run2.csv" --max-rms s=1e-3 --max-abs z=1e-2
        grep -q "^model  *the CSV declares the reference's model (same model_physics_sha256)" "$OUT/gate.out" || fail "model line: $(cat "$OUT/gate.out")"
        grep -q "^run  *.*run2.csv: CSV, .* 751 rows, t = 0 .. 1.5 s" "$OUT/gate.out" || fail "CSV run line: $(cat "$OUT/gate.out")"
        # the CSV's errors are the h5 run's (same rows, 17 digits)
        "$HYMO" compare "$OUT/ref.h5" "$OUT/run2.h5" | grep '^[zs] ' > "$OUT/h5.rows"
        grep '^[zs] ' "$OUT/gate.out" > "$OUT/csv.rows"
        cmp -s "$OUT/h5.rows" "$OUT/csv.rows" || fail "CSV and h5 errors differ: $(cat "$OUT/h5.rows" "$OUT/csv.rows")"
        # without a declaration the model is not checked, and the output says so
        csv "$OUT/run2.h5" "$OUT/anon.csv" 1.5
        gate 0 "a CSV without a declared model" "$OUT/ref.h5" "$OUT/anon.csv" --max-rms s=1e-3
        grep -q "^model  *not checked: the CSV declares no model" "$OUT/gate.out" || fail "undeclared model line: $(cat "$OUT/gate.out")"
        ;;
    missing_signal)
        # a CSV that lacks whole signals (only z): the others show (not in run)
        ref15
        $PY - "$OUT/ref.h5" > "$OUT/z.csv" <<'PYEOF' || fail "h5py"
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    t, z = f["time"][:], f["states/z"][:]
    names = [x.decode() if isinstance(x, bytes) else str(x) for x in f["states/z"].attrs["names"]]
print(",".join(["t"] + ["z[%s]" % n for n in names]))
for i in range(len(t)):
    print(",".join("%.17g" % v for v in [t[i]] + list(z[i, :])))
PYEOF
        gate 0 "a CSV with z only" "$OUT/ref.h5" "$OUT/z.csv" --max-abs z=1e-12
        grep -q "^p .*(not in run)" "$OUT/gate.out" || fail "p should be (not in run): $(cat "$OUT/gate.out")"
        grep -q "^s .*(not in run)" "$OUT/gate.out" || fail "s should be (not in run)"
        ;;
    *) fail "unknown case '$1'" ;;
    esac
    echo "cli_compare_gate $1: passed"
}

if [ "$CASE" = all ]; then
    for c in one_row short_csv short_h5 span unstable model good missing_signal; do (run_case $c) || exit 1; done
else
    run_case "$CASE"
fi
