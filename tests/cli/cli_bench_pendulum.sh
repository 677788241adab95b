#!/bin/sh
# The mechanism-only family (bench/gen_models.py pendulum: the chain's links,
# gravity only, no hydraulics) at N = 20, 0.5 s: with the fast Jacobian and
# KLU it goes through tree mode (tests/engine/test_tree_mode.c checks that
# and its cost); here, through the CLI, KLU agrees with the dense LU to
# round-off (1e-12 rad; measured 5.7e-15), the fast Jacobian with the
# numeric one to the Newton tolerance (1e-6 rad; measured 9.0e-8), the two
# formulations with each other (no cut joints: the same equations; 1e-12
# rad, measured 0), mean Newton iterations <= 3 (measured 2.00), and the
# energy is conserved: peak drift <= 1e-4 J (measured 1.9e-6 J against a peak
# kinetic energy of 95 J).  The default linear solver (auto) takes KLU with
# the fast Jacobian (bit for bit --linear-solver klu) and the dense LU with
# the numeric one and for the excavator (summary line and file attribute).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_bench_pendulum
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "no /usr/bin/python3: skipped"; exit 77; }

"$PY" "$SRC/bench/gen_models.py" pendulum 20 -o "$OUT/p.yaml" || fail "gen_models.py pendulum 20 exited $?"
for form in double-step penalty; do
    for ls in dense klu; do
        "$HYMO" run "$OUT/p.yaml" --t-end 0.5 --formulation $form --jacobian fast --linear-solver $ls --no-estimate \
            -o "$OUT/$form-$ls.h5" > "$OUT/$form-$ls.out" || fail "$form $ls exited $?"
    done
    "$HYMO" run "$OUT/p.yaml" --t-end 0.5 --formulation $form --no-estimate -o "$OUT/$form-num.h5" -q \
        || fail "$form numeric exited $?"
    "$HYMO" compare "$OUT/$form-dense.h5" "$OUT/$form-klu.h5" --max-abs z=1e-12 > "$OUT/$form.cmp" 2>&1 \
        || fail "$form: KLU (tree) differs from dense: $(cat "$OUT/$form.cmp")"
    "$HYMO" compare "$OUT/$form-num.h5" "$OUT/$form-klu.h5" --max-abs z=1e-6 > "$OUT/$form-num.cmp" 2>&1 \
        || fail "$form: fast differs from numeric: $(cat "$OUT/$form-num.cmp")"
    it=$(awk '/^iterations/ {print $3}' "$OUT/$form-klu.out")
    awk -v i="$it" 'BEGIN {exit !(i != "" && i + 0 <= 3.0)}' || fail "$form klu: mean iterations '$it' > 3"
    drift=$(awk '/^energy drift/ {print $5}' "$OUT/$form-klu.out")
    awk -v d="$drift" 'BEGIN {exit !(d != "" && d + 0 <= 1e-4)}' || fail "$form klu: energy drift '$drift' J > 1e-4"
done
# the default linear solver (auto): KLU's tree path with the fast Jacobian
# (the same run as --linear-solver klu, to the bit), dense with the numeric one
# and for a shipped model; the summary line and the file's linear_solver say which
"$HYMO" run "$OUT/p.yaml" --t-end 0.5 --jacobian fast --no-estimate -o "$OUT/auto.h5" > "$OUT/auto.out" \
    || fail "default solver, fast exited $?"
grep -q '| solver klu$' "$OUT/auto.out" || fail "default solver, fast: not KLU: $(grep solver "$OUT/auto.out")"
"$HYMO" compare "$OUT/double-step-klu.h5" "$OUT/auto.h5" --max-abs z=1e-300 > "$OUT/auto.cmp" 2>&1 \
    || fail "default solver differs from --linear-solver klu: $(cat "$OUT/auto.cmp")"
"$HYMO" run "$SRC/data/excavator.yaml" --t-end 0.01 --jacobian fast --no-estimate -o "$OUT/exc.h5" > "$OUT/exc.out" \
    || fail "excavator exited $?"
grep -q '| solver dense$' "$OUT/exc.out" || fail "excavator, default solver: not dense: $(grep solver "$OUT/exc.out")"
"$PY" - "$OUT/auto.h5" "$OUT/double-step-num.h5" "$OUT/exc.h5" <<'PYEOF' || fail "linear_solver attributes"
import sys, h5py
want = ["klu", "dense", "dense"]
for path, w in zip(sys.argv[1:], want):
    got = h5py.File(path, "r").attrs["linear_solver"]
    got = got.decode() if isinstance(got, bytes) else str(got)
    if got != w:
        sys.exit("%s: linear_solver %s, expected %s" % (path, got, w))
PYEOF
"$HYMO" run "$OUT/p.yaml" --linear-solver lu > "$OUT/bad.out" 2>&1 && fail "--linear-solver lu accepted"
grep -q "not auto, dense or klu" "$OUT/bad.out" || fail "--linear-solver lu: $(cat "$OUT/bad.out")"
"$HYMO" compare "$OUT/double-step-klu.h5" "$OUT/penalty-klu.h5" --max-abs z=1e-12 > "$OUT/forms.cmp" 2>&1 \
    || fail "double-step and penalty differ: $(cat "$OUT/forms.cmp")"
echo "pendulum 20: KLU = dense, fast = numeric, double-step = penalty, iterations and energy drift within bounds, default solver = KLU (fast) / dense"
