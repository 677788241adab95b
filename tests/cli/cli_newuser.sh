#!/bin/sh
# What a new user writing machines from docs/model-format.md alone runs
# into.
#  - checks made after loading name FILE:LINE and the documented path: a
#    `static` initial pressure that cannot be solved
#    (hydraulics.volumes[i].initial_pressure), an `independent` list of the
#    wrong length (the count is the whole model's degrees of freedom; too
#    many names is that error, not "cannot be assembled"), a driven joint the
#    assembly moved (driven_joints[k]), a cylinder whose start does not fit
#    its length (hydraulics.cylinders[i]; piston_length0 0 or l, which the
#    docs allowed and the run refused, is a loader error);
#  - a make-up valve supplies its full flow only with the tank above its
#    cracking + opening pressure (tests/models/makeup_demo.yaml, numbers by
#    hand in docs/model-format.md);
#  - broken inputs in the newer sections (pumps, motors, accumulators,
#    flow_control_valves, forces, sensors, driven_joints, signal shaping):
#    exit 2, one line FILE:LINE: path: problem, no output file; an unknown
#    point says which bodies / points there are; accumulators and motors
#    share the element namespace; a driven joint's signal with a clamp (a
#    velocity jump: 13 % energy drift when it ran) is refused.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_newuser
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }
D=$SRC/data; T=$SRC/tests/models

# $1 model, $2 sed expression, $3 expected text (fixed string), $4 label
bad() {
    sed "$2" "$1" > "$OUT/$4.yaml"
    cmp -s "$1" "$OUT/$4.yaml" && fail "$4: the sed expression changed nothing"
    "$HYMO" run "$OUT/$4.yaml" -q --t-end 0.01 -o "$OUT/$4.h5" > "$OUT/$4.out" 2>&1
    code=$?
    [ $code -eq 2 ] || fail "$4: exited $code (expected 2): $(cat "$OUT/$4.out")"
    [ "$(wc -l < "$OUT/$4.out")" -eq 1 ] || fail "$4: not one line: $(cat "$OUT/$4.out")"
    grep -qF -- "$3" "$OUT/$4.out" || fail "$4: message lacks '$3': $(cat "$OUT/$4.out")"
    [ -e "$OUT/$4.h5" ] && fail "$4: an output file was written"
    return 0
}

# --- checks after loading: file:line and the documented path
bad "$D/crane1.yaml" 's/initial_pressure: 3.5e6/initial_pressure: static/' \
    "static_unsolved.yaml:85: hydraulics.volumes[0].initial_pressure (volume V1): 'static' cannot be solved" static_unsolved
line=$(grep -n '^independent: \[boom, arm, bucket\]' "$D/excavator.yaml" | cut -d: -f1)
bad "$D/excavator.yaml" 's/^independent: \[boom, arm, bucket\]/independent: [boom, arm]/' \
    "independent_short.yaml:$line: independent: 2 joint(s) named, but the whole model has at least 3 degree(s) of freedom: its 5 joint coordinates" \
    independent_short
bad "$D/fourbar.yaml" 's/^independent: \[z3\]/independent: [z3, z2]/' \
    "independent_long.yaml:73: independent: 2 joint(s) named, but the whole model has 1 degree(s) of freedom" independent_long
bad "$T/driven_fourbar.yaml" 's/^independent: .*$/independent: [q1, q2]/' \
    "independent_driven.yaml:38: independent: 2 joint(s) named, but the whole model has 1 degree(s) of freedom: its 3 joint coordinates (every joint of every body, open-chain and driven joints included)" \
    independent_driven
bad "$T/driven_fourbar.yaml" 's/^independent: .*$/independent: [q2]/' \
    "driven_moved.yaml:41: driven_joints[0] (crank_drive): the assembly moved joint 'q1'" driven_moved

# --- make-up valve and tank pressure (docs/model-format.md, "Make-up valves and tank pressure")
MU=$T/makeup_demo.yaml
"$HYMO" run "$MU" -o "$OUT/mu4.h5" > "$OUT/mu4.out" 2>&1 || fail "makeup_demo exited $?: $(cat "$OUT/mu4.out")"
vp=$(awk '$1 == "Vp" && $2 == "min" {print $3}' "$OUT/mu4.out")
awk -v v="$vp" 'BEGIN {exit !(v > 0.1484 && v < 0.1488)}' || fail "tank 0.4 MPa: Vp min $vp MPa, by hand 0.14858"
for pt in 1.0e5 2.0e5; do
    "$HYMO" run "$MU" -o "$OUT/mu_$pt.h5" --set "hydraulics.sources[tank].pressure=$pt" \
        --set "hydraulics.volumes[Vp].initial_pressure=$pt" --set "hydraulics.volumes[Vr].initial_pressure=$pt" \
        > "$OUT/mu_$pt.out" 2>&1 || fail "makeup_demo tank $pt exited $?: $(cat "$OUT/mu_$pt.out")"
    vp=$(awk '$1 == "Vp" && $2 == "min" {print $3}' "$OUT/mu_$pt.out")
    awk -v v="$vp" 'BEGIN {exit !(v < 0.002)}' || fail "tank $pt Pa: Vp min $vp MPa, expected the floor (cavitating)"
done

# --- broken inputs in the newer sections
bad "$D/pump_demo.yaml" 's/displacement: 1.0e-5, speed_rpm/displacment: 1.0e-5, speed_rpm/' \
    "pump_key.yaml:102: hydraulics.pumps[0].displacment: unknown field" pump_key
bad "$D/pump_demo.yaml" 's/displacement: 1.0e-5, speed_rpm/displacement: -1.0e-5, speed_rpm/' \
    "hydraulics.pumps[0].displacement: must be positive" pump_negative
bad "$D/pump_demo.yaml" 's/{name: pump1, from: tank, to: Vp/{name: pump1, from: tank, to: Vpp/' \
    "hydraulics.pumps[0].to: unknown hydraulic node 'Vpp'" pump_node
bad "$D/pump_demo.yaml" 's/set_flow: 1.0e-4/setflow: 1.0e-4/' \
    "hydraulics.flow_control_valves[0].setflow: unknown field" fc_key
bad "$D/pump_demo.yaml" 's/{name: fc1, from: VA/{name: fc1, from: VX/' \
    "hydraulics.flow_control_valves[0].from: unknown hydraulic node 'VX'" fc_node
bad "$T/motor_inertia.yaml" 's/displacement: 1.0e-5,/displacment: 1.0e-5,/' \
    "hydraulics.motors[0].displacment: unknown field" motor_key
bad "$T/motor_inertia.yaml" 's/joint: w, port_a/joint: ww, port_a/' "hydraulics.motors[0].joint: unknown joint 'ww'" motor_joint
bad "$T/motor_inertia.yaml" 's/^  motors:/  accumulators:\n    - {name: motor1, node: VA, gas_volume: 5.0e-4, precharge: 2.0e4, polytropic_index: 1.4}\n  motors:/' \
    "hydraulics.motors[0].name: duplicate name 'motor1'" motor_named_like_accumulator
bad "$T/accumulator_boom.yaml" 's/gas_volume: 5.0e-4/gas_volum: 5.0e-4/' \
    "hydraulics.accumulators[0].gas_volum: unknown field" acc_key
bad "$T/accumulator_boom.yaml" 's/gas_volume: 5.0e-4/gas_volume: -5.0e-4/' \
    "hydraulics.accumulators[0].gas_volume: must be positive" acc_negative
bad "$T/accumulator_boom.yaml" 's/node: V1, gas/node: V9, gas/' "hydraulics.accumulators[0].node: unknown hydraulic node 'V9'" acc_node
bad "$T/pendulum_forces.yaml" 's/type: joint_spring, joint: q, stiffness/type: joint_spring, joint: q, stifness/' \
    "forces[0]: unknown field 'stifness'" force_key
bad "$T/pendulum_forces.yaml" 's/point_b: arm.tip/point_b: arms.tip/' \
    "forces[3].point_b: unknown point 'arms.tip' (no body 'arms'; bodies: ground, arm)" force_body
bad "$T/pendulum_forces.yaml" 's/point_b: arm.tip/point_b: arm.tipp/' \
    "forces[3].point_b: unknown point 'arm.tipp' (points of arm: tip)" force_point
bad "$T/pendulum_forces.yaml" 's/{name: s1, points: \(.*\)}/{name: s1, points: \1, dead_zone: [1, -1]}/' \
    "signals[0].dead_zone: [lower, upper] needs lower <= upper" signal_dead_zone
line=$(grep -n '{name: tooth_tip, point: bucket.T}' "$D/excavator.yaml" | cut -d: -f1)
bad "$D/excavator.yaml" 's/{name: tooth_tip, point: bucket.T}/{name: tooth_tip, point: buckt.T}/' \
    "excavator_sensor_body.yaml:$line: sensors[0].point: unknown point 'buckt.T' (no body 'buckt'; bodies: ground, boom" \
    excavator_sensor_body
bad "$D/excavator.yaml" 's/{name: tooth_tip, point: bucket.T}/{name: tooth_tip, body: buckt, point: [0, 0, 0]}/' \
    "sensors[0].body: unknown body 'buckt'" sensor_missing_body
bad "$D/excavator.yaml" 's/{name: tooth_tip, point: bucket.T}/{name: tooth_tip, point: bucket.TT}/' \
    "sensors[0].point: unknown point 'bucket.TT' (points of bucket: L, T)" sensor_point
bad "$D/crane1.yaml" 's/      rod: P$/      rod: PP/' \
    "hydraulics.cylinders[0].rod: unknown point 'PP' (points: ground.B, body1.Q, body1.P, body2.R)" cylinder_point
bad "$T/driven_pendulum.yaml" 's/{name: drive, joint: q1, signal: crank_angle}/{name: drive, joint: q1, signall: crank_angle}/' \
    "driven_joints[0].signall: unknown field" driven_key
bad "$T/driven_pendulum.yaml" 's/{name: drive, joint: q1, signal: crank_angle}/{name: drive, joint: q9, signal: crank_angle}/' \
    "driven_joints[0].joint: unknown joint 'q9'" driven_joint
bad "$D/relief_demo.yaml" 's/piston_length0: 0.25 /piston_length0: 0 /' \
    "piston_length0_zero.yaml:63: hydraulics.cylinders[0].piston_length0: must lie strictly between 0 and the cylinder length 0.3" \
    piston_length0_zero
bad "$D/relief_demo.yaml" 's/      piston_length0: 0.25 .*$//; s/      length: 0.3$/      length: 0.6/' \
    "cylinder_fit.yaml:57: hydraulics.cylinders[0] (cyl1): initial chamber lengths piston -0.1 m, rod 0.7 m (s0 = 0.5 m, length = 0.6 m) must be positive: without piston_length0" \
    cylinder_fit
bad "$T/driven_pendulum.yaml" 's/filter_time_constant: 0.1}/filter_time_constant: 0.1, clamp: [-1, 1]}/' \
    "driven_clamp.yaml:29: driven_joints[0].signal: signal 'crank_angle' has a clamp" driven_clamp
echo "cli_newuser: ok"
