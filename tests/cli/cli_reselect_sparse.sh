#!/bin/sh
# Double-step's re-selection check with Phi_d by KLU (>= 32 rows): the
# rank-revealing elimination runs at a check (every 8 steps) only where the
# condition estimate of the current Phi_d says the set may have degraded
# (formulations/double_step.c, SPARSE_WATCH); the decisions are those of
# the elimination at every check:
#   - seven copies of the spatial RUSR loop (tests/models/loop_rusr_revolute.yaml,
#     35 rows) at 1 ms, both Jacobian modes: z1 -> z6 at t = 0.624 s and
#     back at t = 2.312 s;
#   - sixteen parallelograms in series (bench/gen_models.py parallelogram 16,
#     32 rows) through 4 s: the singular position found at the same 4 checks
#     (from t = 0.344 s, down to 0.0031 at t = 1.672 s).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_reselect_sparse
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] || { echo "no /usr/bin/python3: skipped"; exit 77; }

"$PY" - "$SRC/tests/models/loop_rusr_revolute.yaml" "$OUT/rusr7.yaml" <<'PY' || fail "rusr7.yaml"
import re, sys
src = open(sys.argv[1]).read()
head, rest = src.split("bodies:\n")
bodies, cuts = rest.split("cut_joints:\n")
cuts = cuts.split("independent:")[0]
K = 7
out = head.replace("name: loop_rusr_revolute", "name: rusr7")
out = out.replace("    D: [0.7, 0.0, 0.35]\n", "".join("    D%d: [0.7, 0.0, 0.35]\n" % k for k in range(K)))
out += "bodies:\n"
for k in range(K):
    b = bodies
    for nm in ("crank", "cross", "coupler", "g1", "g2", "rocker"):
        b = re.sub(r"\b%s\b" % nm, "%s_%d" % (nm, k), b)
    out += re.sub(r"\bz(\d)\b", lambda m: "z%s_%d" % (m.group(1), k), b)
out += "cut_joints:\n"
for k in range(K):
    out += re.sub(r"\brocker\b", "rocker_%d" % k, cuts).replace("{name: D,", "{name: D%d," % k).replace(
        "point_b: D,", "point_b: D%d," % k)
out += "\nindependent: [%s]\n" % ", ".join("z1_%d" % k for k in range(K))
open(sys.argv[2], "w").write(out)
PY
z1="z1_0,z1_1,z1_2,z1_3,z1_4,z1_5,z1_6"; z6="z6_0,z6_1,z6_2,z6_3,z6_4,z6_5,z6_6"
for j in fast numeric; do
    out=$("$HYMO" run "$OUT/rusr7.yaml" --jacobian $j --t-end 3 --no-estimate -o "$OUT/rusr7-$j.h5" 2>&1) \
        || fail "rusr7 $j: exit $?: $out"
    echo "$out" | grep -q "^independent  $z1; $z6 from t=0.624; $z1 from t=2.312 (2 re-selections)$" \
        || fail "rusr7 $j: $(echo "$out" | grep '^independent')"
done

"$PY" "$SRC/bench/gen_models.py" parallelogram 16 -o "$OUT/par16.yaml" || fail "gen_models.py parallelogram 16"
out=$("$HYMO" run "$OUT/par16.yaml" --t-end 4 --no-estimate -o "$OUT/par16.h5" 2>&1) || fail "par16: exit $?: $out"
echo "$out" | grep -q "^singular     double-step: at 4 checks from t = 0.344 s .*down to 0.0031 at t = 1.672 s" \
    || fail "par16: $(echo "$out" | grep '^singular')"
echo "ok: rusr7 re-selects at 0.624 s and 2.312 s; par16's singular position at 4 checks"
