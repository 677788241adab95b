#!/bin/sh
# The generated benchmark families (bench/gen_models.py: chain at N = 20,
# ladder and pipeline at N = 8) run with both formulations and both linear solvers
# (fast Jacobian), and KLU agrees with the dense LU (round-off: the same
# tolerances as test_linsol's KLU-vs-dense test, 1e-9 rad or m, 1 Pa); the
# fast Jacobian agrees with the numeric one to the Newton tolerance and
# converges in <= 4 mean iterations.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_bench_families
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "no /usr/bin/python3: skipped"; exit 77; }

for fam in chain ladder pipeline; do
    # chain: 20 links, so that KLU's dense Schur block (>= 16 mechanical unknowns) is used
    n=8; [ $fam = chain ] && n=20
    "$PY" "$SRC/bench/gen_models.py" "$fam" $n -o "$OUT/$fam.yaml" || fail "gen_models.py $fam $n exited $?"
    for form in double-step penalty; do
        for ls in dense klu; do
            "$HYMO" run "$OUT/$fam.yaml" --t-end 0.05 --formulation $form --jacobian fast --linear-solver $ls \
                -o "$OUT/$fam-$form-$ls.h5" -q || fail "$fam $form $ls exited $?"
        done
        "$HYMO" compare "$OUT/$fam-$form-dense.h5" "$OUT/$fam-$form-klu.h5" --max-abs z=1e-9 --max-abs p=1 \
            > "$OUT/$fam-$form.cmp" || fail "$fam $form: KLU differs from dense: $(cat "$OUT/$fam-$form.cmp")"
        "$HYMO" run "$OUT/$fam.yaml" --t-end 0.05 --formulation $form --jacobian numeric \
            -o "$OUT/$fam-$form-num.h5" -q || fail "$fam $form numeric exited $?"
        "$HYMO" compare "$OUT/$fam-$form-num.h5" "$OUT/$fam-$form-dense.h5" --max-abs z=1e-7 --max-abs p=100 \
            > "$OUT/$fam-$form-num.cmp" || fail "$fam $form: fast differs from numeric: $(cat "$OUT/$fam-$form-num.cmp")"
    done
done
# the fast Jacobian's assembly (structured R^T M' R, Phi_z^T Phi_z, actuator
# and hydraulic coupling) keeps Newton's convergence: mean iterations <= 4
for fam in chain ladder pipeline; do
    for form in double-step penalty; do
        for ls in dense klu; do
            it=$("$HYMO" run "$OUT/$fam.yaml" --t-end 0.05 --formulation $form --jacobian fast --linear-solver $ls \
                | awk '/^iterations/ {print $3}')
            awk -v i="$it" 'BEGIN {exit !(i != "" && i + 0 <= 4.0)}' \
                || fail "$fam $form $ls: fast Jacobian mean iterations '$it' > 4"
        done
    done
done
# every volume's pressure range over all steps (/states/p_range; the summary
# and /states' attributes hold the first 32 of the chain's 60 volumes)
"$HYMO" run "$OUT/chain.yaml" --t-end 0.05 -o "$OUT/ranges.h5" > "$OUT/ranges.out" || fail "ranges run exited $?"
grep -q "(28 more volumes: see /states/p_range)" "$OUT/ranges.out" || fail "summary: $(cat "$OUT/ranges.out")"
"$PY" - "$OUT/ranges.h5" <<'EOF2' || fail "/states/p_range"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
r, p, t, st = f["states/p_range"][()], f["states/p"][()], f["time"][()], f["states"]
assert r.shape == (60, 4), r.shape
assert list(f["states/p_range"].attrs["names"]) in (["p_min", "p_min_time", "p_max", "p_max_time"],
                                                    [b"p_min", b"p_min_time", b"p_max", b"p_max_time"])
for i, k in enumerate(["volume_p_min", "volume_p_min_time", "volume_p_max", "volume_p_max_time"]):
    assert np.array_equal(st.attrs[k], r[:32, i]), k  # the summary's 32, the same numbers
# every step is seen (t = 0 included): with a row per step, the extremes of /states/p's columns exactly
assert np.array_equal(r[:, 0], p.min(axis=0)) and np.array_equal(r[:, 2], p.max(axis=0))
assert np.all((r[:, 1] >= 0) & (r[:, 1] <= t[-1])) and np.all((r[:, 3] >= 0) & (r[:, 3] <= t[-1]))
print("p_range ok:", r.shape, "min %.4g Pa max %.4g Pa" % (r[:, 0].min(), r[:, 2].max()))
EOF2
# the families' sizes: chain 5N unknowns, ladder 2N+1 joints with 2N cut rows, pipeline N+3
"$HYMO" run "$OUT/chain.yaml" --t-end 0.002 --formulation penalty | grep -q "independent  all" || fail "chain summary"
grep -c "type: revolute" "$OUT/ladder.yaml" | grep -qx 17 || fail "ladder: not 17 joints"
grep -c "planar_revolute" "$OUT/ladder.yaml" | grep -qx 8 || fail "ladder: not 8 cut joints"
echo "ok"
