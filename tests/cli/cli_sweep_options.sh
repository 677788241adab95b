#!/bin/sh
# hymo sweep records the coupling options it passes to every run: with
# --iterate, the columns iterate_max, iterate_rtol, iterate_atol,
# iterate_accel at the end of TABLE.csv and TABLE_achievable.csv; with
# --H-control energy, H_control, tol_energy_rel, tol_energy_abs, H_min,
# H_max; TABLE.h5 has them as root attributes (H_control and iterate_max
# always).  A sweep without them keeps the default columns.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_sweep_options
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml
"$HYMO" run "$M" --t-end 1.5 -o "$OUT/ref.h5" > /dev/null 2>&1 || fail "reference run"
sweep() { # $1 output base, rest: extra options
    out=$1; shift
    "$HYMO" sweep "$M" --t-end 1.5 --reference "$OUT/ref.h5" --H 5e-3,1e-2 --jobs 2 \
        --configs "coupling=velocity-pressure;extrapolation=2;hyd=rk4;mech=trapezoidal;scheme=jacobi" \
        "$@" -o "$OUT/$out" > "$OUT/$out.out" 2> "$OUT/$out.err" || fail "sweep $out exited $?: $(cat "$OUT/$out.err")"
}
sweep plain
sweep iter --iterate 3 --iterate-tol 1e-5,1e-11 --iterate-accel aitken
sweep ctl --H-control energy --tol-energy 0.02,0.004
base='coupling,extrapolation,hyd_integrator,mech_integrator,scheme,mech_inputs'
runs="$base,H,stable,pass,rms_s,max_s,rms_sd,rms_p,rms_z,residual_energy_final,residual_energy_max_abs,peak_drift,t_reached,wall_time,reason"
[ "$(head -1 "$OUT/plain.csv")" = "$runs" ] || fail "default header: $(head -1 "$OUT/plain.csv")"
[ "$(head -1 "$OUT/plain_achievable.csv")" = "$base,achievable_H" ] || fail "default achievable header"
[ "$(head -1 "$OUT/iter.csv")" = "$runs,iterate_max,iterate_rtol,iterate_atol,iterate_accel" ] \
    || fail "--iterate header: $(head -1 "$OUT/iter.csv")"
[ "$(head -1 "$OUT/iter_achievable.csv")" = "$base,achievable_H,iterate_max,iterate_rtol,iterate_atol,iterate_accel" ] \
    || fail "--iterate achievable header: $(head -1 "$OUT/iter_achievable.csv")"
[ "$(grep -c ',3,1e-05,1e-11,aitken$' "$OUT/iter.csv")" -eq 2 ] || fail "--iterate rows: $(cat "$OUT/iter.csv")"
[ "$(grep -c ',3,1e-05,1e-11,aitken$' "$OUT/iter_achievable.csv")" -eq 1 ] || fail "--iterate achievable row"
[ "$(head -1 "$OUT/ctl.csv")" = "$runs,H_control,tol_energy_rel,tol_energy_abs,H_min,H_max" ] \
    || fail "--H-control header: $(head -1 "$OUT/ctl.csv")"
[ "$(grep -c ',energy,0.02,0.004,0,0$' "$OUT/ctl.csv")" -eq 2 ] || fail "--H-control rows: $(cat "$OUT/ctl.csv")"
[ "$(grep -c ',energy,0.02,0.004,0,0$' "$OUT/ctl_achievable.csv")" -eq 1 ] || fail "--H-control achievable row"
if command -v h5dump > /dev/null 2>&1; then
    attr() { h5dump -a "/$2" "$OUT/$1.h5" 2> /dev/null | sed -n 's/^ *(0): //p' | tr -d '"'; }
    [ "$(attr plain H_control)" = fixed ] || fail "plain.h5 H_control: $(attr plain H_control)"
    [ "$(attr plain iterate_max)" = 0 ] || fail "plain.h5 iterate_max: $(attr plain iterate_max)"
    [ "$(attr iter iterate_max)" = 3 ] || fail "iter.h5 iterate_max"
    [ "$(attr iter iterate_rtol)" = 1e-05 ] || fail "iter.h5 iterate_rtol: $(attr iter iterate_rtol)"
    [ "$(attr iter iterate_accel)" = aitken ] || fail "iter.h5 iterate_accel"
    [ "$(attr ctl H_control)" = energy ] || fail "ctl.h5 H_control"
    [ "$(attr ctl tol_energy_abs)" = 0.004 ] || fail "ctl.h5 tol_energy_abs: $(attr ctl tol_energy_abs)"
fi
echo "cli_sweep_options: ok"
