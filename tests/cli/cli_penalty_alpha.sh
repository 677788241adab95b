#!/bin/sh
# The mass-scaled default penalty factor (docs/model-format.md
# "Penalty factor", formulations/penalty.c penalty_mass_alpha):
#   - data/excavator.yaml (format 2, no simulation.penalty_alpha) runs with
#     the penalty formulation past t = 1.957 s, where the format 1
#     default alpha = 1e11 stops Newton (an event sub-step of 41 us), both Jacobians,
#     and at dt/8 past 2.30 s (where 2.8e11 stopped); the file records the
#     factor used (above 1e12);
#   - an explicit factor keeps its meaning: --alpha 1e11, --set
#     simulation.penalty_alpha=1e11 and the same file as format 1 (no
#     scaling there) record 1e11 and complete (at t = 1.957 s the multiplier
#     iteration contracts slowly, rho = 0.75: the multiplier update by
#     conjugate gradients, formulations/penalty.c multiplier_update, ends
#     that step within 13 iterations, below the 20 allowed);
#     the mass-scaled default needs no halved sub-step;
#   - light mechanisms keep alpha and their numbers: data/fourbar.yaml and
#     data/bennett.yaml as format 2 without the key give the same summary
#     (constraint violation, energy drift, iterations) as with
#     penalty_alpha 1e11 given.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_penalty_alpha
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
"$PY" -c "import h5py" 2>/dev/null || { echo "SKIP: /usr/bin/python3 lacks h5py (scripts/deps.sh)"; exit 77; }
# the factor used: the file's root attribute penalty_alpha (docs/hdf5-format.md)
alpha_of() { "$PY" -c "import h5py, sys; print('%.17g' % h5py.File(sys.argv[1], 'r').attrs['penalty_alpha'])" "$1"; }
EXC="$SRC/data/excavator.yaml"
grep -q "^format: 2" "$EXC" || fail "data/excavator.yaml is not format 2"
grep -q "^ *penalty_alpha:" "$EXC" && fail "data/excavator.yaml sets penalty_alpha"

for j in numeric fast; do
    "$HYMO" run "$EXC" --formulation penalty --jacobian $j --t-end 2.5 -o "$OUT/exc_$j.h5" > "$OUT/exc_$j.txt" 2>&1 \
        || fail "excavator, penalty, $j Jacobian, default alpha: exit $? ($(tail -1 "$OUT/exc_$j.txt"))"
done
"$HYMO" run "$EXC" --formulation penalty --dt 1.25e-4 --t-end 2.5 -q 2> "$OUT/exc_dt8.err" \
    || fail "excavator, penalty at dt/8: exit $? ($(cat "$OUT/exc_dt8.err"))"

# the factor used, from the file (h5 root attribute penalty_alpha)
a=$(alpha_of "$OUT/exc_numeric.h5")
[ -n "$a" ] || fail "no penalty_alpha attribute in $OUT/exc_numeric.h5"
awk -v a="$a" 'BEGIN { exit !(a > 1e12 && a < 1e14) }' || fail "excavator alpha $a not in (1e12, 1e14)"
echo "excavator: penalty alpha $a (mass-scaled)"

# an explicit factor keeps its meaning: 1e11 is recorded; its slow step at
# t = 1.957 s (a 41 us event sub-step) converges (the conjugate-gradient
# multiplier update) before the last iteration, without a halved sub-step
"$HYMO" run "$EXC" --formulation penalty --alpha 1e11 --t-end 2.5 -o "$OUT/exc_1e11.h5" > "$OUT/exc_1e11.txt" \
    2> "$OUT/exc_1e11.err" || fail "--alpha 1e11: exit $? ($(cat "$OUT/exc_1e11.err"))"
a=$(alpha_of "$OUT/exc_1e11.h5")
awk -v a="$a" 'BEGIN { exit !(a == 1e11) }' || fail "--alpha 1e11: alpha $a recorded, not used as given"
grep -q "^time .*complete" "$OUT/exc_1e11.txt" || fail "--alpha 1e11: not complete: $(grep '^time' "$OUT/exc_1e11.txt")"
grep -q "^iterations .*max 1[0-9]," "$OUT/exc_1e11.txt" \
    || fail "--alpha 1e11: the slow step at 1.957 s did not converge within 10-19 iterations: $(grep '^iterations' "$OUT/exc_1e11.txt")"
"$HYMO" run "$EXC" --formulation penalty --set simulation.penalty_alpha=1e11 --t-end 2.5 -o "$OUT/exc_set.h5" \
    -q 2> "$OUT/exc_set.err" || fail "--set simulation.penalty_alpha=1e11: exit $?"
a=$(alpha_of "$OUT/exc_set.h5")
awk -v a="$a" 'BEGIN { exit !(a == 1e11) }' || fail "--set simulation.penalty_alpha=1e11: alpha $a recorded"
sed 's/^format: 2 .*/format: 1/' "$EXC" > "$OUT/exc_f1.yaml"
grep -q "^format: 1$" "$OUT/exc_f1.yaml" || fail "could not make the format 1 copy"
"$HYMO" run "$OUT/exc_f1.yaml" --formulation penalty --t-end 2.5 -o "$OUT/exc_f1.h5" -q 2> "$OUT/exc_f1.err" \
    || fail "format 1 copy: exit $? ($(cat "$OUT/exc_f1.err"))"
a=$(alpha_of "$OUT/exc_f1.h5")
awk -v a="$a" 'BEGIN { exit !(a == 1e11) }' || fail "format 1: alpha $a, expected 1e11"
# the mass-scaled default needs no halving there
grep -q "^halvings" "$OUT/exc_numeric.txt" && fail "excavator, default alpha: halved sub-steps"

# light mechanisms: the default is the given 1e11, the runs identical
for m in fourbar bennett; do
    sed -e 's/^format: 1$/format: 2/' -e '/^  penalty_alpha:/d' "$SRC/data/$m.yaml" > "$OUT/${m}_auto.yaml"
    sed -e 's/^format: 1$/format: 2/' -e '/^  penalty_alpha:/d' -e 's/^simulation:$/simulation:\n  penalty_alpha: 1.0e11/' \
        "$SRC/data/$m.yaml" > "$OUT/${m}_given.yaml"
    grep -q "penalty_alpha: 1.0e11" "$OUT/${m}_given.yaml" || fail "$m: could not write the given factor"
    for v in auto given; do
        "$HYMO" run "$OUT/${m}_$v.yaml" --formulation penalty --t-end 1 -o "$OUT/${m}_$v.h5" > "$OUT/${m}_$v.txt" \
            || fail "$m ($v): exit $?"
        grep -E "^(energy drift|constraints|iterations)" "$OUT/${m}_$v.txt" > "$OUT/${m}_$v.sum"
    done
    cmp -s "$OUT/${m}_auto.sum" "$OUT/${m}_given.sum" || { diff "$OUT/${m}_auto.sum" "$OUT/${m}_given.sum"; fail "$m: the default changed a light mechanism"; }
    a=$(alpha_of "$OUT/${m}_auto.h5")
    awk -v a="$a" 'BEGIN { exit !(a == 1e11) }' || fail "$m: alpha $a, expected 1e11"
done
echo "cli_penalty_alpha: ok"
