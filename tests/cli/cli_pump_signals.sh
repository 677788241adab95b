#!/bin/sh
# Pump speed and flow control set flow driven by signals from the command
# line (docs/model-format.md "pumps"):
# tests/models/pump_signal_boom.yaml (data/pump_demo.yaml with the engine
# drooping to 70 % and the flow command stepping to 60 %) runs with its
# events; the split co-simulation, whose hydraulic subsystem evaluates the
# pump and the flow control valve at its own stage times, stays within the
# monolithic run's accuracy thresholds with both RK4 and trapezoidal
# hydraulics, and its recorded flows follow the signals; the IDA run
# agrees; the exported FMUs (whole; mechanics + circuit) reproduce the run
# and the co-simulation bit for bit; an unknown signal name exits 2 with one
# line naming the file, the field and the name (run and cosim).
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_pump_signals
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/tests/models/pump_signal_boom.yaml

"$HYMO" run "$M" -o "$OUT/mono.h5" > "$OUT/mono.out" 2>&1 || fail "run exited $?: $(cat "$OUT/mono.out")"
grep -q "^events       6 located" "$OUT/mono.out" || fail "events: $(grep events "$OUT/mono.out")"
grep -q "max 15.33 MPa (Vp" "$OUT/mono.out" || fail "max pressure: $(grep pressures "$OUT/mono.out")"

# the slower lift: the fc1 command at 60 % from 2.5 s (the boom's stroke is
# shorter than pump_demo's, whose s is compared here as a reference of
# another model: the signals must change the result)
"$HYMO" run "$SRC/data/pump_demo.yaml" -o "$OUT/demo.h5" > "$OUT/demo.out" 2>&1 || fail "pump_demo exited $?"
if "$HYMO" compare "$OUT/demo.h5" "$OUT/mono.h5" --allow-model-mismatch --max-abs s=1e-3 > "$OUT/demo_cmp.out" 2>&1; then
    fail "the signals changed nothing: $(cat "$OUT/demo_cmp.out")"
fi

# co-simulation against the monolithic reference (hydraulic subsystems: RK4 stages, trapezoidal Newton)
for hi in rk4 trapezoidal; do
    "$HYMO" cosim "$M" --H 1e-3 --hh 1e-4 --hyd-integrator $hi --reference "$OUT/mono.h5" --max-rms p=1e3 \
        --max-rms s=1e-6 -o "$OUT/cosim_$hi.h5" > "$OUT/cosim_$hi.out" 2>&1 \
        || fail "cosim $hi exited $?: $(cat "$OUT/cosim_$hi.out")"
    grep -q "^verdict        accurate" "$OUT/cosim_$hi.out" || fail "cosim $hi verdict: $(cat "$OUT/cosim_$hi.out")"
done

# IDA against the trapezoidal run
"$HYMO" run "$M" --integrator ida -o "$OUT/ida.h5" > "$OUT/ida.out" 2>&1 || fail "ida exited $?: $(cat "$OUT/ida.out")"
"$HYMO" compare "$OUT/mono.h5" "$OUT/ida.h5" --max-rms p=1e3 --max-rms s=1e-6 > "$OUT/ida_cmp.out" 2>&1 \
    || fail "ida vs trapezoidal: $(cat "$OUT/ida_cmp.out")"

# the recorded flows follow the signals (monolithic and co-simulation files):
# pump1 = eta D n0 engine(t) - C_L (p_Vp - p_t), fc1 = 1e-4 command(t) while
# regulating (t = 3 s), the pump's power (p_Vp - p_t) Q
if /usr/bin/python3 -c "import h5py, numpy" 2>/dev/null; then
    /usr/bin/python3 - "$OUT/mono.h5" "$OUT/cosim_rk4.h5" <<'EOF' || fail "recorded flows (see above)"
import sys
import h5py
import numpy as np

def engine(t):
    return np.interp(t, [0.0, 1.5, 2.0, 4.5], [1.0, 1.0, 0.7, 0.7])

bad = 0
for path in sys.argv[1:]:
    with h5py.File(path, "r") as f:
        t = f["time"][:]
        names = [n.decode() for n in f["hydraulics/flow"].attrs["names"]]
        q = f["hydraulics/flow"][:]
        w = f["hydraulics/power"][:, 0]
        pnames = [n.decode() for n in f["states/p"].attrs["names"]] if "names" in f["states/p"].attrs else None
        p = f["states/p"][:, 0]  # Vp: the first volume
    dp = p - 1.0e5
    q_pump = 0.95 * 1.0e-5 * 25.0 * engine(t) - 2.0e-13 * dp
    e_pump = np.max(np.abs(q[:, names.index("pump1")] - q_pump))
    e_pow = np.max(np.abs(w - dp * q_pump))
    k = int(np.argmin(np.abs(t - 3.0)))
    e_fc = abs(q[k, names.index("fc1")] - 0.6e-4)
    print("%s: |pump1 - eta D n(t) + C_L dp| %.3g m^3/s, |power| %.3g W, |fc1(3 s) - 6e-5| %.3g" % (path, e_pump, e_pow, e_fc))
    bad += not (e_pump < 1e-18 and e_pow < 1e-8 and e_fc < 1e-18)
sys.exit(1 if bad else 0)
EOF
fi

# FMU export (docs/fmi.md), through the independent master tests/fmi_master.py:
# the whole model bit-identical to the run, the mechanics and circuit FMUs to
# the co-simulation (their hydraulic subsystem evaluates the signals)
# In a sanitized build the FMU binary is ASan-instrumented and python is
# not: the ASan runtime is preloaded, leak detection off (as the fmi_* tests,
# tests/CMakeLists.txt; cli_fmu_binary.sh checks the FMU's leaks)
BUILD=$(cd "$3" && pwd)
while [ ! -f "$BUILD/CMakeCache.txt" ] && [ "$BUILD" != / ]; do BUILD=$(dirname "$BUILD"); done
PRE=
if [ -f "$BUILD/CMakeCache.txt" ]; then
    case "$(sed -n 's/^HYMO_SANITIZE:[A-Z]*=//p' "$BUILD/CMakeCache.txt")" in
    ON|on|1|YES|yes|TRUE|true)
        CC=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
        PRE="LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1" ;;
    esac
fi
if /usr/bin/python3 -c "import h5py, numpy" 2>/dev/null; then
    for c in whole jacobi; do
        env $PRE /usr/bin/python3 "$SRC/tests/fmi_master.py" $c --hymo "$HYMO" --model "$M" --work "$OUT/fmu" --t-end 3.0 \
            > "$OUT/fmu_$c.out" 2>&1 || fail "fmi_master $c: $(tail -3 "$OUT/fmu_$c.out")"
        grep -q "bit-identical" "$OUT/fmu_$c.out" || fail "fmi_master $c: $(tail -3 "$OUT/fmu_$c.out")"
    done
fi

# bad input: one line naming file:line, the field and the name; exit 2; no output file
for cmd in run cosim; do
    for set in 'hydraulics.pumps[pump1].speed_signal=engin' 'hydraulics.flow_control_valves[fc1].set_flow_signal=comand'; do
        "$HYMO" $cmd "$M" --set "$set" -o "$OUT/bad.h5" > "$OUT/bad.out" 2> "$OUT/bad.err"
        code=$?; [ $code -eq 2 ] || fail "$cmd $set exited $code (expected 2)"
        [ "$(wc -l < "$OUT/bad.err")" -eq 1 ] || fail "$cmd $set: not one line: $(cat "$OUT/bad.err")"
        field=${set%%=*}; name=${set#*=}
        case $field in *pumps*) want="hydraulics.pumps\[0\].speed_signal";; *) want="hydraulics.flow_control_valves\[0\].set_flow_signal";; esac
        grep -q "pump_signal_boom.yaml:[0-9]*: $want: unknown signal '$name' (signals: u_dcv1, engine, command)" "$OUT/bad.err" \
            || fail "$cmd $set message: $(cat "$OUT/bad.err")"
        [ -e "$OUT/bad.h5" ] && fail "$cmd $set left an output file"
    done
done
echo "cli_pump_signals: ok"
