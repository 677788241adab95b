#!/bin/sh
# Iterative coupling at the CLI (docs/cosimulation.md, "Iterative
# coupling"): crane1 (30 s), Jacobi, velocity-pressure, p = 2, whose
# largest non-iterative achievable H is 3 ms (4 ms: unstable), at H = 15 ms:
# unstable without iteration (exit 3), accurate against `hymo run` with
# --iterate 20 (exit 0; measured max |ds| 2.9e-5 m, 3.0 retakes per step);
# the file has /cosim/iterations and /cosim/iteration_residual per
# communication point and the attributes; the same with a system file of
# hymo's own FMUs (mechanics, circuit) equals the split run to 1e-9 (2 s);
# an FMU that cannot get and set its state is refused with one line (exit
# 2), and so are TLM with --iterate and bad values.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_iterate
PY=/usr/bin/python3
mkdir -p "$OUT"; rm -rf "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml
cd "$OUT" || exit 1

"$HYMO" run "$M" -q -o ref.h5 || fail "reference run exit $?"
"$HYMO" cosim "$M" --H 15e-3 --reference ref.h5 -q 2> /dev/null; code=$?
[ $code -eq 3 ] || fail "non-iterative H = 15 ms: exit $code (expected unstable, 3)"
"$HYMO" cosim "$M" --H 15e-3 --iterate 20 --reference ref.h5 -o it.h5 > it.out 2>&1; code=$?
[ $code -eq 0 ] || fail "iterated H = 15 ms: exit $code: $(cat it.out)"
grep -q "^verdict  *accurate" it.out || fail "iterated verdict: $(grep verdict it.out)"
grep -q "^iteration  *iqn-ils, at most 20 retakes.* 0 steps not converged" it.out ||
    fail "iteration line: $(grep iteration it.out)"
$PY - <<'EOF' || fail "file contents"
import h5py, numpy as np
with h5py.File("it.h5") as f:
    c = f["cosim"]
    it, res = c["iterations"][...], c["iteration_residual"][...]
    n = f["time"].shape[0]
    assert it.shape == (n,) and res.shape == (n,), (it.shape, res.shape, n)
    assert it[0] == 0 and res[0] == 0
    assert (res <= 1).all() and it.max() <= 20 and it.sum() == c.attrs["iterate_total"], (res.max(), it.max())
    assert 1.5 < it.mean() < 6, it.mean()
    t = f["time"][...]  # at rest until the valve opens at 1 s: the first retake is at the step ending at 1.005 s
    first = t[np.nonzero(it)[0][0]]
    assert abs(first - 1.005) < 1e-9, first
    text = lambda v: v.decode() if isinstance(v, bytes) else v
    assert text(c.attrs["iterate_accel"]) == "iqn-ils" and c.attrs["iterate_max"] == 20
    assert c.attrs["iterate_non_converged"] == 0 and c.attrs["iterate_n_coupling"] == 4
    assert c.attrs["iterate_rtol"] == 1e-6
EOF
"$HYMO" cosim "$M" --H 15e-3 --iterate 20 --iterate-accel aitken --t-end 0.99 -q || fail "aitken exit $?"

# bad values, TLM
"$HYMO" cosim "$M" --H 15e-3 --iterate -1 -q 2> bad.err; code=$?
[ $code -eq 2 ] && grep -q "iterate: '-1' must be a whole number" bad.err || fail "--iterate -1: $code $(cat bad.err)"
"$HYMO" cosim "$M" --iterate 5 --iterate-accel newton -q 2> bad.err; code=$?
[ $code -eq 2 ] && grep -q "iterate-accel: invalid value 'newton'" bad.err || fail "accel: $code $(cat bad.err)"
"$HYMO" cosim "$M" --iterate 5 --iterate-tol 0 -q 2> bad.err; code=$?
[ $code -eq 2 ] || fail "--iterate-tol 0: $code $(cat bad.err)"
"$HYMO" cosim "$M" --iterate 5 --coupling tlm -q 2> bad.err; code=$?
[ $code -eq 2 ] && grep -q "iterate with TLM coupling: not supported" bad.err || fail "tlm: $code $(cat bad.err)"

# a system file of hymo's FMUs (they get and set their state): the split's answer
"$HYMO" fmu "$M" --part mechanics --H 15e-3 -o mech.fmu -q || fail "fmu mechanics exit $?"
"$HYMO" fmu "$M" --part circuit:cyl1 --H 15e-3 -o c1.fmu -q || fail "fmu circuit exit $?"
sysfile() { # $1 mechanics FMU
    printf 'H: 0.015\nt_end: 2.01\nscheme: jacobi\nextrapolation: 2\nmodel: %s\n' "$M"
    printf 'subsystems:\n  mech: {fmu: %s}\n  c1: {fmu: c1.fmu}\nconnections:\n' "$1"
    for q in s sd; do printf '  - from: mech.cyl1.%s\n    to: c1.cyl1.%s\n' $q $q; done
    for q in p_piston p_rod; do printf '  - from: c1.cyl1.%s\n    to: mech.cyl1.%s\n' $q $q; done
}
sysfile mech.fmu > sys.yaml
"$HYMO" cosim "$M" --H 15e-3 --t-end 2.01 --iterate 20 -q -o split.h5 || fail "split exit $?"
"$HYMO" cosim sys.yaml --iterate 20 -o sys.h5 > sys.out 2>&1 || fail "system exit $?: $(cat sys.out)"
grep -q "^iteration  *iqn-ils" sys.out || fail "system iteration line: $(cat sys.out)"
$PY "$SRC/tests/fmu/compare_h5.py" split.h5 sys.h5 --tol 1e-9 || fail "iterated system differs from split"
# the mechanics FMU without fmi2Get/SetFMUstate: refused, naming it
$PY - <<'EOF' || fail "rewriting the FMU"
import zipfile
with zipfile.ZipFile("mech.fmu") as z, zipfile.ZipFile("nostate.fmu", "w", zipfile.ZIP_DEFLATED) as o:
    for i in z.infolist():
        data = z.read(i.filename)
        if i.filename == "modelDescription.xml":
            data = data.replace(b'canGetAndSetFMUstate="true"', b'canGetAndSetFMUstate="false"')
        o.writestr(i, data)
EOF
sysfile nostate.fmu > nostate.yaml
"$HYMO" cosim nostate.yaml --iterate 20 -q 2> ns.err; code=$?
[ $code -eq 2 ] && [ "$(wc -l < ns.err)" -eq 1 ] && grep -q "iterate: master: subsystem 'mech' cannot save its state" ns.err ||
    fail "no-state FMU: exit $code: $(cat ns.err)"
"$HYMO" cosim nostate.yaml --t-end 0.99 -q || fail "no-state FMU without --iterate: exit $?"
echo "cli_iterate: ok"
