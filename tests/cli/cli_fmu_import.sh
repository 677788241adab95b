#!/bin/sh
# `hymo cosim SYSTEM.yaml` with the test FMU tests/fmu/lin_fmu.c (packed
# into BUILD/tests/fmu by tests/fmu/make_fmus.py):
#  1. two lags in a Gauss-Seidel loop run and write /cosim/outputs;
#  2. a mass and a spring-damper coupled by power bond 'b': the bond is
#     found by its names, and its residual energy equals an independent
#     computation from the exchanged outputs (Jacobi, linear extrapolation);
#     a second run against the first as reference is accurate;
#  3. broken FMUs, each one line on stderr naming the FMU, exit 2, no
#     output file: not a zip, missing binary, malformed XML, FMI 1.0, model
#     exchange only, fmi2DoStep returning fmi2Error; fmi2Discard is a failed
#     step: unstable, exit 3;
#  4. broken system files: FILE:LINE: FIELD and exit 2 (unknown variable in
#     the wiring, an output used as input, an unconnected input, an input
#     driven twice, unknown subsystem, bad scheme, t_end not a multiple of
#     H, a model-file option).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_fmu_import; FMU=$3/fmu
PY=/usr/bin/python3
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
[ -f "$FMU/lin.fmu" ] || fail "no test FMUs in $FMU (tests/fmu/make_fmus.py)"
cp "$FMU"/*.fmu "$OUT"/
cd "$OUT" || exit 1

# 1. two lags, Gauss-Seidel with lag2 first
cat > lags.yaml <<'EOF'
name: two_lags
H: 0.01
t_end: 3
scheme: gauss-seidel
order: [lag2, lag1]
extrapolation: 2
output: lags.h5
subsystems:
  lag1: {fmu: lin.fmu, parameters: {a11: -3.3333333333333335, b1: -5, c1: 1, x1_0: 1, h: 0.0025}}
  lag2:
    fmu: lin.fmu
    parameters: {a11: -1.4285714285714286, b1: 1.1428571428571428, c1: 1, x1_0: -0.5, h: 0.0025}
connections:
  - {from: lag1.y, to: lag2.u}
  - {from: lag2.y, to: lag1.u}
EOF
"$HYMO" cosim lags.yaml > lags.out 2>&1; code=$?
[ $code -eq 0 ] || fail "lags exit $code: $(cat lags.out)"
grep -q "^status         stable" lags.out || fail "lags status: $(cat lags.out)"
grep -q "lag2 .*stage 0" lags.out && grep -q "lag1 .*stage 1" lags.out || fail "stages: $(cat lags.out)"
$PY - <<'EOF' || fail "lags.h5 content"
import h5py, numpy as np
with h5py.File("lags.h5") as f:
    y1, y2 = f["cosim/outputs/lag1"][:, 0], f["cosim/outputs/lag2"][:, 0]
    assert len(y1) == 301 and y1[0] == 1.0 and y2[0] == -0.5, (len(y1), y1[0], y2[0])
    assert abs(f["time"][-1] - 3.0) < 1e-12
    assert f["cosim"].attrs["scheme"] in (b"gauss-seidel", "gauss-seidel")
    assert 0 < abs(y1[-1]) < 1, y1[-1]
EOF

# 2. mass (v' = F/m, m = 2 kg) and spring-damper (x' = v, F = -100 x - 2 v)
cat > osc.yaml <<'EOF'
H: 0.001
t_end: 2
extrapolation: 1
subsystems:
  mass:   {fmu: mass.fmu, parameters: {a11: 0, a22: 0, b1: 0.5, c1: 1, x1_0: 1, h: 0.0002}}
  spring: {fmu: spring.fmu, parameters: {a11: 0, a22: 0, b1: 1, c1: -100, d: -2, h: 0.0002}}
connections:
  - from: mass.b.sd
    to: spring.v_in
  - from: spring.F_out
    to: mass.b.F
EOF
"$HYMO" cosim osc.yaml -o osc.h5 > osc.out 2>&1; code=$?
[ $code -eq 0 ] || fail "osc exit $code: $(cat osc.out)"
grep -q "1 power bonds" osc.out || fail "bond not found: $(cat osc.out)"
$PY - <<'EOF' || fail "residual energy of the bond"
import h5py, numpy as np
with h5py.File("osc.h5") as f:
    H = 0.001
    v, F = f["cosim/outputs/mass"][:, 0], f["cosim/outputs/spring"][:, 0]
    E = f["cosim/residual_energy_total"][()]
    assert [n.decode() if isinstance(n, bytes) else n for n in f["cosim/residual_power"].attrs["names"]] == ["b"]
    # linear extrapolation from the two latest points (one at the start)
    Ft = np.r_[F[0], F[0], 2 * F[1:-1] - F[:-2]]   # F~ the mass used at t_n
    vt = np.r_[v[0], v[0], 2 * v[1:-1] - v[:-2]]   # sd~ the spring used at t_n
    dP = Ft * v - F * vt
    dP[0] = 0.0
    Ei = np.r_[0.0, np.cumsum(0.5 * H * (dP[:-1] + dP[1:]))]
    err = np.max(np.abs(Ei - E)) / np.max(np.abs(E))
    print(f"residual energy: max |E| {np.max(np.abs(E)):.3g} J, independent vs hymo {err:.2g} relative")
    assert np.max(np.abs(E)) > 1e-6 and err < 1e-9
EOF
"$HYMO" cosim osc.yaml -o osc2.h5 --reference osc.h5 > osc2.out 2>&1; code=$?
[ $code -eq 0 ] || fail "osc vs itself exit $code: $(cat osc2.out)"
grep -q "^verdict        accurate" osc2.out || fail "osc vs itself verdict: $(cat osc2.out)"

# 3. broken FMUs: one line naming the FMU, exit 2, no file
bad_fmu() { # $1 fmu file, $2 expected phrase, [$3 parameters]
    cat > bad.yaml <<EOF
H: 0.01
t_end: 1
subsystems:
  a: {fmu: $1 ${3:-}}
  b: {fmu: lin.fmu}
connections:
  - {from: a.y, to: b.u}
  - {from: b.y, to: a.u}
EOF
    rm -f bad.h5
    "$HYMO" cosim bad.yaml -o bad.h5 > bad.out 2> bad.err; code=$?
    [ $code -eq 2 ] || fail "$1: exit $code (expected 2): $(cat bad.err)"
    [ "$(wc -l < bad.err)" -eq 1 ] || fail "$1: not one line: $(cat bad.err)"
    grep -q "FMU '[^']*$1'" bad.err || fail "$1: the FMU is not named: $(cat bad.err)"
    grep -q "$2" bad.err || fail "$1: no '$2' in: $(cat bad.err)"
    [ ! -e bad.h5 ] || fail "$1: an output file was written"
    echo "$1: $(cat bad.err)"
}
bad_fmu notzip.fmu "Not a zip archive"
bad_fmu nobinary.fmu "binaries/linux64/lin_fmu.so is missing"
bad_fmu malformed.fmu "malformed XML"
bad_fmu fmi1.fmu "fmiVersion is '1.0'"
bad_fmu me_only.fmu "model exchange only"
bad_fmu lin.fmu "fmi2DoStep returned fmi2Error: fault switch" ", parameters: {fail_at: 0.5}"
grep -q "t = 0.5 s" bad.err || fail "fmi2Error: no time: $(cat bad.err)"
sed -i 's/fail_at/discard_at/' bad.yaml
"$HYMO" cosim bad.yaml -o bad.h5 > bad.out 2> bad.err; code=$?
[ $code -eq 3 ] || fail "fmi2Discard: exit $code (expected 3, unstable): $(cat bad.err)"
grep -q "fmi2DoStep returned fmi2Discard" bad.err || fail "fmi2Discard message: $(cat bad.err)"

# 4. broken system files: FILE:LINE: FIELD, exit 2
bad_sys() { # $1 expected phrase; the system file on stdin
    cat > sys.yaml
    rm -f sys.h5
    "$HYMO" cosim sys.yaml -o sys.h5 > sys.out 2> sys.err; code=$?
    [ $code -eq 2 ] || fail "exit $code (expected 2) for '$1': $(cat sys.err)"
    [ "$(wc -l < sys.err)" -eq 1 ] || fail "not one line for '$1': $(cat sys.err)"
    grep -q -- "$1" sys.err || fail "no '$1' in: $(cat sys.err)"
    [ ! -e sys.h5 ] || fail "'$1': an output file was written"
    echo "$(cat sys.err)"
}
HEAD='H: 0.01
t_end: 1
subsystems:
  a: {fmu: lin.fmu}
  b: {fmu: lin.fmu}'
printf '%s\nconnections:\n  - {from: a.y, to: b.nope}\n  - {from: b.y, to: a.u}\n' "$HEAD" |
    bad_sys "sys.yaml:7: connections\[0\].to: FMU '.*lin.fmu' (subsystem 'b') has no variable 'nope'"
printf '%s\nconnections:\n  - {from: a.x1, to: b.u}\n  - {from: b.y, to: a.u}\n' "$HEAD" |
    bad_sys "connections\[0\].from: variable 'x1' .* is not an output (it is neither input nor output)"
printf '%s\nconnections:\n  - {from: a.y, to: b.y}\n' "$HEAD" | bad_sys "is not an input (it is an output)"
printf '%s\nconnections:\n  - {from: a.y, to: b.u}\n' "$HEAD" | bad_sys "sys.yaml:4: subsystems.a: input 'u' is not connected"
printf '%s\nconnections:\n  - {from: a.y, to: b.u}\n  - {from: b.y, to: b.u}\n' "$HEAD" |
    bad_sys "already driven by connections\[0\]"
printf '%s\nconnections:\n  - {from: c.y, to: b.u}\n' "$HEAD" | bad_sys "unknown subsystem 'c'"
printf 'scheme: zigzag\n%s\nconnections: []\n' "$HEAD" | bad_sys "sys.yaml:1: scheme: 'zigzag' is not jacobi or gauss-seidel"
printf 'H: 0.03\nt_end: 1\nsubsystems:\n  a: {fmu: lin.fmu, free_inputs: all}\nconnections: []\n' |
    bad_sys "t_end: t_end = 1 s is not a positive multiple of H = 0.03 s"
printf 'H: 0.01\nt_end: 1\nsubsystems:\n  a: {fmu: missing.fmu}\nconnections: []\n' |
    bad_sys "sys.yaml:4: subsystems.a: FMU '.*missing.fmu': cannot open"
printf 'H: 0.01\nt_end: 1\nsubsystems:\n  a: {fmu: lin.fmu, parameters: {tau: 1}}\nconnections: []\n' |
    bad_sys "no variable 'tau' to set"
printf 'H: 0.01\nt_end: 1\nwhat: 1\nsubsystems: {}\nconnections: []\n' | bad_sys "sys.yaml:3: unknown key 'what'"
printf 'H: 0.01\nt_end: 1\nsubsystems:\n  a: {fmu: lin.fmu, free_inputs: all}\nconnections: []\n' > ok.yaml
"$HYMO" cosim ok.yaml --H 1e-3 > opt.out 2> opt.err; code=$?
[ $code -eq 2 ] && grep -q -- "--H applies to model files; ok.yaml is a system file" opt.err ||
    fail "model-file option on a system file: exit $code: $(cat opt.err)"
"$HYMO" cosim ok.yaml -q || fail "a lone FMU with free inputs: exit $?"
echo "PASS"
