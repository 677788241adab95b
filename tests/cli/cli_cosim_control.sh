#!/bin/sh
# Energy-controlled communication steps (docs/cosimulation.md,
# "Energy-controlled communication steps") through the CLI:
# - crane1 split into hymo's own FMUs (mechanics + circuit1) and run from a
#   system file with H_control: energy reproduces `hymo cosim MODEL.yaml
#   --H-control energy` of the same configuration bit for bit (every dataset,
#   the step history /cosim/control included), Jacobi and Gauss-Seidel, with
#   steps rejected and retaken from the FMUs' saved states (fmi2Get/SetFMUstate);
# - the summary line and the /cosim/control datasets and attributes;
# - refusals: TLM, a bad --tol-energy, t_end not a multiple of H_min (exit 2).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_cosim_control
PY=/usr/bin/python3
CMP="$PY $SRC/tests/fmu/compare_h5.py"
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
cd "$OUT" || exit 1
M=$SRC/data/crane1.yaml
CTL="--H-control energy --tol-energy 1e-4,1e-5 --H 4e-3 --H-min 1e-3 --H-max 2e-2 --t-end 3"

"$HYMO" fmu "$M" --part mechanics -o mech.fmu -q || fail "export mechanics exit $?"
"$HYMO" fmu "$M" --part circuit:circuit1 -o circuit1.fmu -q || fail "export circuit1 exit $?"
for scheme in jacobi gauss-seidel; do
    {
        printf 'H: 0.004\nt_end: 3\nscheme: %s\n' $scheme
        [ $scheme = gauss-seidel ] && echo "order: [mech, [circuit1]]"
        printf 'extrapolation: 2\nH_control: energy\ntol_energy: "1e-4,1e-5"\nH_min: 0.001\nH_max: 0.02\n'
        printf 'model: %s\nsubsystems:\n  mech: {fmu: mech.fmu}\n  circuit1: {fmu: circuit1.fmu}\nconnections:\n' "$M"
        for q in s sd; do printf '  - from: mech.cyl1.%s\n    to: circuit1.cyl1.%s\n' $q $q; done
        for q in p_piston p_rod; do printf '  - from: circuit1.cyl1.%s\n    to: mech.cyl1.%s\n' $q $q; done
    } > sys_$scheme.yaml
    opt=""; [ $scheme = gauss-seidel ] && opt="--scheme gauss-seidel"
    "$HYMO" cosim "$M" $CTL $opt -o split_$scheme.h5 > split.out 2>&1 || fail "$scheme: split exit $?: $(cat split.out)"
    "$HYMO" cosim sys_$scheme.yaml -o sys_$scheme.h5 > sys.out 2>&1 || fail "$scheme: system exit $?: $(cat sys.out)"
    grep -q "^step control   energy, tol 0.0001,1e-05 J" sys.out || fail "$scheme: summary line: $(cat sys.out)"
    grep "^step control" sys.out | grep -q "; 0 rejected" && fail "$scheme: nothing rejected: $(cat sys.out)"
    printf '%s: ' $scheme
    $CMP split_$scheme.h5 sys_$scheme.h5 --tol 0 || fail "$scheme: the system run differs from split mode"
done
$CMP sys_jacobi.h5 sys_gauss-seidel.h5 --tol 1e-9 > /dev/null && fail "Jacobi = Gauss-Seidel?"
$PY - sys_jacobi.h5 <<'PY' || fail "/cosim/control"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
c = f["cosim/control"]
a = c.attrs
t, H, rej = c["time"][:], c["H"][:], c["rejections"][:]
assert a["H_control"] in (b"energy", "energy") and a["can_reject"] == 1, dict(a)
assert a["n_rejected"] == rej.sum() == len(c["rejected_H"]) > 0, (a["n_rejected"], rej.sum())
assert a["n_accepted"] == len(H) == len(f["time"]) - 1
assert np.all(np.abs(np.diff(np.concatenate([[0], t])) - H) < 1e-12), "H history != row spacing"
assert np.all(np.abs(H / 1e-3 - np.round(H / 1e-3)) < 1e-9) and H.min() >= 1e-3 - 1e-15 and H.max() <= 2e-2 + 1e-15
est = c["estimate"][:]  # over 1 only where H = H_min (nothing smaller to retake with)
assert np.all((est <= 1.0) | (np.abs(H - 1e-3) < 1e-15)) and (est > 1.0).sum() == a["n_over_tolerance"]
assert np.all(c["rejected_estimate"][:] > 1.0) and np.all(c["rejected_H"][:] > 1e-3 + 1e-15)
assert abs(f["time"][-1] - 3.0) < 1e-9
print("control: %d steps, %d rejected, H %g..%g s" % (len(H), a["n_rejected"], H.min(), H.max()))
PY
# an FMU that cannot save its state: the run goes on, nothing is rejected, the summary and the file say so
$PY - mech.fmu mech_nostate.fmu <<'PY' || fail "making mech_nostate.fmu"
import sys, zipfile
src, dst = sys.argv[1:3]
with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zo:
    for item in zi.infolist():
        data = zi.read(item.filename)
        if item.filename == "modelDescription.xml":
            data = data.replace(b'canGetAndSetFMUstate="true"', b'canGetAndSetFMUstate="false"')
            assert b'canGetAndSetFMUstate="false"' in data
        zo.writestr(item, data)
PY
sed 's/mech.fmu/mech_nostate.fmu/' sys_jacobi.yaml > sys_nostate.yaml
"$HYMO" cosim sys_nostate.yaml -o nostate.h5 > ns.out 2>&1 || fail "no state: exit $?: $(cat ns.out)"
grep "^step control" ns.out | grep -q "; 0 rejected; .*no step rejected: .*mech" || fail "no state: summary: $(cat ns.out)"
$PY - nostate.h5 <<'PY' || fail "no state: /cosim/control"
import sys, h5py
a = h5py.File(sys.argv[1], "r")["cosim/control"].attrs
note = a["note"].decode() if isinstance(a["note"], bytes) else a["note"]
assert a["can_reject"] == 0 and a["n_rejected"] == 0 and "no step rejected" in note, dict(a)
assert a["n_over_tolerance"] > 0, "expected steps over the tolerance that could not be retaken"
print("no state: %s; %d steps over the tolerance kept" % (note, a["n_over_tolerance"]))
PY
# refusals (exit 2, one line naming the cause)
"$HYMO" cosim "$M" $CTL --coupling tlm -q > r.out 2>&1; rc=$?
[ $rc = 2 ] && grep -q "TLM" r.out || fail "tlm: exit $rc: $(cat r.out)"
"$HYMO" cosim "$M" $CTL --tol-energy 1e-3,abc -q > r.out 2>&1; rc=$?
[ $rc = 2 ] && grep -q "RTOL,ATOL" r.out || fail "tol: exit $rc: $(cat r.out)"
"$HYMO" cosim "$M" $CTL --t-end 3.0005 -q > r.out 2>&1; rc=$?
[ $rc = 2 ] && grep -q "multiple of H_min" r.out || fail "t_end: exit $rc: $(cat r.out)"
echo "PASS"
