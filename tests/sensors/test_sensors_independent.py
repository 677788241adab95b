"""Sensors, flows and valve references in hymo's output, checked against
computations hymo did not make (docs/hdf5-format.md,
"Sensors, flows and inputs"):

- sensor positions: forward kinematics in numpy from the written joint
  coordinates (crane1: two links; fourbar: three links);
- sensor velocities and accelerations: the analytic derivatives of that
  forward kinematics at the written zd, zdd, and central finite differences
  of the written positions and velocities (second order in dt);
- flows: the orifice law Q = C g(dp) (turbulent with a laminar region), the
  relief and check valve laws, from the written pressures and spool
  positions and the model file's parameters (read with PyYAML);
- U_ref: the model's signal table interpolated with numpy;
- pump power: pressure times the pump's outflow;
- the same datasets in a co-simulation file, and through hymo.read.

Run by ctest (py_sensors) with HYMO_BINARY set; HYMO_LIB for hymo.read.
"""
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(ROOT, "data")
HYMO = os.environ.get("HYMO_BINARY", os.path.join(ROOT, "build-dbg", "hymo"))

CRANE_SENSORS = """
sensors:
  - name: tip
    point: body2.R
  - name: mid
    body: body1
    point: [0.5, 0.1, 0]
"""
FOURBAR_SENSORS = """
sensors:
  - name: F
    point: body3.F
  - name: off
    body: body2
    point: [0.3, -0.2, 0]
"""


def model_with(tmp_path, name, extra):
    text = open(os.path.join(DATA, name)).read() + extra
    path = tmp_path / name
    path.write_text(text)
    return str(path), num(yaml.safe_load(text))


def run(args, out):
    r = subprocess.run([HYMO] + args + ["-q", "-o", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return h5py.File(out, "r")


def num(doc):
    """PyYAML (YAML 1.1) reads 12.0e6 as a string: the numbers of a parsed model as floats."""
    if isinstance(doc, dict):
        return {k: num(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [num(v) for v in doc]
    if isinstance(doc, str):
        try:
            return float(doc)
        except ValueError:
            return doc
    return doc


def names(f, path):
    return [s.decode() if isinstance(s, bytes) else str(s) for s in f[path].attrs["names"]]


def g(dp, p_tr):
    """The orifice law: sgn(dp) sqrt|dp|, laminar dp / sqrt(p_tr) below p_tr."""
    dp = np.asarray(dp, dtype=float)
    return np.where(np.abs(dp) >= p_tr, np.sign(dp) * np.sqrt(np.abs(dp)), dp / np.sqrt(p_tr))


def rot(a):
    c, s = np.cos(a), np.sin(a)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)  # [N, 2, 2]


def planar_chain(z, zd, zdd, joints, point):
    """Position, velocity, acceleration of `point` (x, y in the last body's
    frame) of a planar chain of revolute joints about z; joints[k] is joint
    k's location in body k-1's frame.  Absolute angle of body k: sum z[0..k]."""
    n = len(joints)
    th, thd, thdd = np.cumsum(z[:, :n], 1), np.cumsum(zd[:, :n], 1), np.cumsum(zdd[:, :n], 1)
    pos = np.zeros((len(z), 2))
    vel = np.zeros_like(pos)
    acc = np.zeros_like(pos)
    legs = [(k - 1, np.asarray(joints[k], float)) for k in range(1, n)] + [(n - 1, np.asarray(point, float))]
    pos += np.asarray(joints[0], float)
    for body, r in legs:  # r fixed in `body`: R(th) r and its derivatives
        a, ad, add = th[:, body], thd[:, body], thdd[:, body]
        p = np.einsum("nij,j->ni", rot(a), r)
        perp = np.stack([-p[:, 1], p[:, 0]], 1)  # e_z x p
        pos += p
        vel += ad[:, None] * perp
        acc += add[:, None] * perp - (ad ** 2)[:, None] * p
    return pos, vel, acc


def fd_errors(t, pos, vel, acc):
    """Central differences of the written positions and velocities against
    the written velocities and accelerations: per-row max-norm errors."""
    h = np.diff(t)
    assert np.allclose(h, h[0])
    h = h[0]
    ev = np.abs((pos[2:] - pos[:-2]) / (2 * h) - vel[1:-1]).max(1)
    ea = np.abs((vel[2:] - vel[:-2]) / (2 * h) - acc[1:-1]).max(1)
    return ev, ea


def check_derivatives(t, pos, vel, acc, what):
    """The median row (the inputs switch and end dampers engage at a few
    instants, where a difference quotient straddles a kink) within a small
    fraction of the largest value."""
    ev, ea = fd_errors(t, pos, vel, acc)
    vmax, amax = np.abs(vel).max(), np.abs(acc).max()
    print("%s: |v_fd - v| median %.2e, p90 %.2e (max |v| %.3g); |a_fd - a| median %.2e, p90 %.2e (max |a| %.3g)"
          % (what, np.median(ev), np.percentile(ev, 90), vmax, np.median(ea), np.percentile(ea, 90), amax))
    assert np.median(ev) < 1e-5 * vmax
    assert np.median(ea) < 1e-4 * amax
    return np.median(ev), np.median(ea)


def test_crane1(tmp_path):
    path, doc = model_with(tmp_path, "crane1.yaml", CRANE_SENSORS)
    with run(["run", path, "--t-end", "4", "--dt", "1e-3"], str(tmp_path / "c.h5")) as f:
        t, z, zd, zdd = f["time"][:], f["states/z"][:], f["states/zd"][:], f["states/zdd"][:]
        pos, vel, acc = f["sensors/position"][:], f["sensors/velocity"][:], f["sensors/acceleration"][:]
        assert names(f, "sensors/position") == ["tip.x", "tip.y", "tip.z", "mid.x", "mid.y", "mid.z"]
        assert f["sensors/position"].attrs["units"] in (b"m", "m")
        # tip: joint 2 at (1, 0) of body1, R = (0.5, 0) of body2
        P, V, A = planar_chain(z, zd, zdd, [(0, 0), (1, 0)], (0.5, 0))
        assert np.abs(pos[:, :2] - P).max() < 1e-13
        assert np.abs(vel[:, :2] - V).max() < 1e-13
        assert np.abs(acc[:, :2] - A).max() < 1e-12
        assert np.all(pos[:, 2] == 0) and np.all(vel[:, 2] == 0) and np.all(acc[:, 2] == 0)
        P1, V1, A1 = planar_chain(z[:, :1], zd[:, :1], zdd[:, :1], [(0, 0)], (0.5, 0.1))
        assert np.abs(pos[:, 3:5] - P1).max() < 1e-13
        assert np.abs(vel[:, 3:5] - V1).max() < 1e-13
        assert np.abs(acc[:, 3:5] - A1).max() < 1e-12
        ev1, ea1 = check_derivatives(t, pos[:, :3], vel[:, :3], acc[:, :3], "crane1 tip")
    # second order: half the step, a quarter of the difference-quotient error
    with run(["run", path, "--t-end", "4", "--dt", "5e-4"], str(tmp_path / "c2.h5")) as f2:
        ev2, ea2 = check_derivatives(f2["time"][:], f2["sensors/position"][:, :3], f2["sensors/velocity"][:, :3],
                                     f2["sensors/acceleration"][:, :3], "crane1 tip, dt/2")
    print("crane1 tip: median error ratio dt -> dt/2: velocity %.2f, acceleration %.2f" % (ev1 / ev2, ea1 / ea2))
    assert 3.0 < ev1 / ev2 < 5.0 and 3.0 < ea1 / ea2 < 5.0
    with h5py.File(str(tmp_path / "c.h5"), "r") as f:
        t, z, zd, zdd = f["time"][:], f["states/z"][:], f["states/zd"][:], f["states/zdd"][:]

        # flows from the written pressures and spools
        hyd = doc["hydraulics"]
        rho, p_tr = hyd["fluid"]["density"], hyd["fluid"]["laminar_transition"]
        src = {s["name"]: s["pressure"] for s in hyd["sources"]}
        vols = [v["name"] for v in hyd["volumes"]]
        p = f["states/p"][:]
        P_ = lambda n: p[:, vols.index(n)] if n in vols else np.full(len(t), float(src[n]))
        va = hyd["valves"][0]
        U = f["states/U"][:, 0]
        Cv = va["flow_coefficient"]
        pP, pT, pA, pB = P_(va["P"]), P_(va["T"]), P_(va["A"]), P_(va["B"])
        pos_u = U >= 0
        q_pa = np.where(pos_u, Cv * U * g(pP - pA, p_tr), 0)
        q_bt = np.where(pos_u, Cv * U * g(pB - pT, p_tr), 0)
        q_pb = np.where(pos_u, 0, -Cv * U * g(pP - pB, p_tr))
        q_at = np.where(pos_u, 0, -Cv * U * g(pA - pT, p_tr))
        th = hyd["throttles"][0]
        q_th = th["discharge_coefficient"] * th["area"] * np.sqrt(2 / rho) * g(P_(th["from"]) - P_(th["to"]), p_tr)
        q_pump = q_pa + q_pb
        expect = np.stack([q_pa, q_bt, q_pb, q_at, q_pa - q_at, q_pb - q_bt, q_th, q_pump, -(q_bt + q_at)], 1)
        flow = f["hydraulics/flow"][:]
        assert names(f, "hydraulics/flow") == ["dcv1.P-A", "dcv1.B-T", "dcv1.P-B", "dcv1.A-T", "dcv1.A", "dcv1.B",
                                               "throttle1", "pump", "tank"]
        scale = np.abs(expect).max()
        print("crane1 flows: max |Q - Q_numpy| %.2e of max |Q| %.3g m^3/s" % (np.abs(flow - expect).max(), scale))
        assert np.abs(flow - expect).max() < 1e-12 * scale
        assert scale > 1e-4  # the valve really opened
        power = f["hydraulics/power"][:]
        assert np.abs(power[:, 0] - src["pump"] * q_pump).max() < 1e-9 * np.abs(power[:, 0]).max()
        # U_ref: the joystick table
        sig = np.array(doc["signals"][0]["points"], float)
        assert np.abs(f["inputs/U_ref"][:, 0] - np.interp(t, sig[:, 0], sig[:, 1])).max() < 1e-12


def test_fourbar(tmp_path):
    path, doc = model_with(tmp_path, "fourbar.yaml", FOURBAR_SENSORS)
    with run(["run", path, "--t-end", "3", "--dt", "1e-3", "--formulation", "penalty"], str(tmp_path / "f.h5")) as f:
        t, z, zd, zdd = f["time"][:], f["states/z"][:], f["states/zd"][:], f["states/zdd"][:]
        pos, vel, acc = f["sensors/position"][:], f["sensors/velocity"][:], f["sensors/acceleration"][:]
        # F = (1, 0) of body3; joints at C = (3, 0) of body1 and D = (sqrt 2, 0) of body2
        P, V, A = planar_chain(z, zd, zdd, [(0, 0), (3, 0), (np.sqrt(2), 0)], (1, 0))
        assert np.abs(pos[:, :2] - P).max() < 1e-12
        assert np.abs(vel[:, :2] - V).max() < 1e-12
        assert np.abs(acc[:, :2] - A).max() < 1e-10
        P2, V2, A2 = planar_chain(z[:, :2], zd[:, :2], zdd[:, :2], [(0, 0), (3, 0)], (0.3, -0.2))
        assert np.abs(pos[:, 3:5] - P2).max() < 1e-12
        assert np.abs(vel[:, 3:5] - V2).max() < 1e-12
        assert np.abs(acc[:, 3:5] - A2).max() < 1e-10
        check_derivatives(t, pos[:, :3], vel[:, :3], acc[:, :3], "fourbar F")
        check_derivatives(t, pos[:, 3:], vel[:, 3:], acc[:, 3:], "fourbar off")


def test_relief_demo(tmp_path):
    path = os.path.join(DATA, "relief_demo.yaml")
    doc = num(yaml.safe_load(open(path)))
    with run(["run", path, "--t-end", "6"], str(tmp_path / "r.h5")) as f:
        hyd = doc["hydraulics"]
        p_tr = hyd["fluid"]["laminar_transition"]
        src = {s["name"]: s["pressure"] for s in hyd["sources"]}
        vols = [v["name"] for v in hyd["volumes"]]
        p = f["states/p"][:]
        P_ = lambda n: p[:, vols.index(n)] if n in vols else np.full(len(p), float(src[n]))
        cols = names(f, "hydraulics/flow")
        flow = f["hydraulics/flow"][:]
        rv = hyd["relief_valves"][0]
        dp = P_(rv["from"]) - P_(rv["to"])
        q_r = np.where(dp >= rv["cracking_pressure"], rv["gradient"] * (dp - rv["cracking_pressure"]), 0.0)
        cv = hyd["check_valves"][0]
        dpc = P_(cv["from"]) - P_(cv["to"])
        x = np.clip((dpc - cv["cracking_pressure"]) / cv["opening_pressure"], 0, 1)
        C = cv["discharge_coefficient"] * cv["area"] * np.sqrt(2 / hyd["fluid"]["density"])
        q_c = x * C * g(dpc, p_tr) + cv["leakage"] * dpc
        qr, qc = flow[:, cols.index("relief1")], flow[:, cols.index("check1")]
        # at a located event the written state sits on the switching point (within the event tolerance)
        print("relief_demo: relief1 max %.3g m^3/s, |Q - law| max %.2e; check1 max %.3g, |Q - law| max %.2e"
              % (qr.max(), np.abs(qr - q_r).max(), qc.max(), np.abs(qc - q_c).max()))
        assert qr.max() > 1e-5 and qc.max() > 1e-5  # both opened
        assert np.abs(qr - q_r).max() < 1e-9 * qr.max() + 1e-12
        assert np.abs(qc - q_c).max() < 1e-9 * qc.max() + 1e-12


def test_cosim_and_package(tmp_path):
    path, doc = model_with(tmp_path, "crane1.yaml", CRANE_SENSORS)
    out = str(tmp_path / "co.h5")
    with run(["cosim", path, "--t-end", "1.6", "--H", "1e-3"], out) as f:
        z = f["states/z"][:]
        P, _, _ = planar_chain(z, z, z, [(0, 0), (1, 0)], (0.5, 0))
        assert np.abs(f["sensors/position"][:, :2] - P).max() < 1e-13
        assert f["hydraulics/flow"].shape == (len(z), 9)
        assert f["inputs/U_ref"].shape == (len(z), 1)
    if not os.environ.get("HYMO_LIB"):
        pytest.skip("HYMO_LIB not set: hymo.read not checked")
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import hymo
    d = hymo.read(out)
    assert d["sensors/position"].shape[1] == 6
    assert d["names"]["hydraulics/flow"][0] == "dcv1.P-A"
    assert d["units"]["sensors/velocity"] == "m/s"


def test_motor_and_pump_columns(tmp_path):
    """Motor flow Q = D w + C_L dp and its hydraulic (dp Q) and mechanical
    (T w) powers, from the written joint rate and port pressures and the
    model file's numbers; the pump's flow and power likewise."""
    path = os.path.join(ROOT, "tests", "models", "motor_inertia.yaml")
    mo = num(yaml.safe_load(open(path)))["hydraulics"]["motors"][0]
    f = run(["run", path, "--t-end", "1"], str(tmp_path / "motor.h5"))
    pn, zn = names(f, "states/p"), names(f, "states/z")
    w = f["states/zd"][:, zn.index(mo["joint"])]
    dp = f["states/p"][:, pn.index(mo["port_a"])] - f["states/p"][:, pn.index(mo["port_b"])]
    D, CL = mo["displacement"], mo["leakage"]
    eta, ws, cv = mo["hydromechanical_efficiency"], mo["friction_velocity"], mo["viscous"]
    Q = D * w + CL * dp
    T = D * dp - (1 - eta) * D * np.abs(dp) * np.tanh(w / ws) - cv * w
    q = f["hydraulics/flow"][:, names(f, "hydraulics/flow").index(mo["name"])]
    pw = f["hydraulics/power"][:]
    pwn = names(f, "hydraulics/power")
    assert np.max(np.abs(w)) > 1.0  # the motor turns
    assert np.max(np.abs(q - Q)) <= 1e-12 * np.max(np.abs(Q))
    assert np.max(np.abs(pw[:, pwn.index(mo["name"] + ".hydraulic")] - dp * Q)) <= 1e-12 * np.max(np.abs(dp * Q))
    assert np.max(np.abs(pw[:, pwn.index(mo["name"] + ".mechanical")] - T * w)) <= 1e-12 * np.max(np.abs(T * w))
