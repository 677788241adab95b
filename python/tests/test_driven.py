"""A joint driven by a prescribed motion (tests/models/driven_pendulum.yaml)
against scipy: link1's angle follows the first-order-filtered ramp, link2
swings freely.  Here the filter is an ODE state (y' = (x - y)/tau, x the
ramp), link2's equation and the drive torque are the planar double
pendulum's Lagrange equations written out by hand, integrated by solve_ivp
(Radau, rtol 1e-11); hymo's angles and its recorded reaction (the force of
actuator `drive`) must agree (run by ctest as py_package)."""
import math
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import hymo  # noqa: E402

scipy_integrate = pytest.importorskip("scipy.integrate")

MODEL = os.path.join(ROOT, "tests", "models", "driven_pendulum.yaml")
m1, r1, I1, L1 = 2.0, 0.5, 0.1, 1.0
m2, r2, I2 = 1.0, 0.4, 0.05
g, tau = 9.81, 0.1


def ramp(t):  # the table [[0, 0], [0.2, 0], [2.2, 4]]: value and slope
    if t < 0.2:
        return 0.0, 0.0
    if t < 2.2:
        return 2.0 * (t - 0.2), 2.0
    return 4.0, 0.0


def dynamics(q1, q2, qd1, qd2, qdd1):
    h = m2 * L1 * r2 * math.sin(q2)
    M11 = I1 + m1 * r1 ** 2 + I2 + m2 * (L1 ** 2 + r2 ** 2 + 2 * L1 * r2 * math.cos(q2))
    M12 = I2 + m2 * (r2 ** 2 + L1 * r2 * math.cos(q2))
    M22 = I2 + m2 * r2 ** 2
    C1, C2 = -h * (2 * qd1 * qd2 + qd2 ** 2), h * qd1 ** 2
    G1 = g * ((m1 * r1 + m2 * L1) * math.cos(q1) + m2 * r2 * math.cos(q1 + q2))
    G2 = g * m2 * r2 * math.cos(q1 + q2)
    qdd2 = (-C2 - G2 - M12 * qdd1) / M22
    return qdd2, M11 * qdd1 + M12 * qdd2 + C1 + G1  # link2's acceleration, the drive torque


def rhs(t, s):
    y, q2, qd2 = s
    x, xd = ramp(t)
    qd1 = (x - y) / tau
    qdd1 = (xd - qd1) / tau
    qdd2, _ = dynamics(y, q2, qd1, qd2, qdd1)
    return [qd1, qd2, qdd2]


def reference(t_out):
    out, state, t0 = {}, [0.0, -1.2, 0.0], 0.0
    for t1 in (0.2, 2.2, 3.0):  # breakpoints of the ramp
        ts = [t for t in t_out if t0 <= t <= t1]
        sol = scipy_integrate.solve_ivp(rhs, (t0, t1), state, method="Radau", t_eval=ts, rtol=1e-11,
                                        atol=1e-12, dense_output=True)
        assert sol.success
        for k, t in enumerate(sol.t):
            y, q2, qd2 = sol.y[:, k]
            x, xd = ramp(t - 1e-12)  # left limit at a breakpoint, as hymo records
            qd1 = (x - y) / tau
            _, torque = dynamics(y, q2, qd1, qd2, (xd - qd1) / tau)
            out[round(t, 9)] = (y, q2, torque)
        state, t0 = list(sol.y[:, -1]), t1
    return out


def test_driven_pendulum_against_scipy():
    dt = 2.5e-4
    t_out = [round(k * 0.05, 9) for k in range(61)]
    ref = reference(t_out)
    sim = hymo.load(MODEL).simulate(dt=dt, t_end=3.0)
    rows = sim.run_to(3.0, record=True)
    assert rows["force"].shape[1] == 1  # the driver is the only actuator
    e_q1 = e_q2 = e_tau = 0.0
    tau_max = max(abs(v[2]) for v in ref.values())
    for t in t_out:
        i = int(round(t / dt))
        y, q2, torque = ref[t]
        e_q1 = max(e_q1, abs(rows["z"][i, 0] - y))
        e_q2 = max(e_q2, abs(rows["z"][i, 1] - q2))
        if t > 0:
            e_tau = max(e_tau, abs(rows["force"][i, 0] - torque) / tau_max)
    print("driven pendulum vs Radau: q1 %.3g rad, q2 %.3g rad, reaction %.3g of max %.4g N m"
          % (e_q1, e_q2, e_tau, tau_max))
    # second order: 2.4e-5, 6.0e-6, 1.5e-6, 3.7e-7 rad in q2 at dt = 1, 0.5, 0.25, 0.125 ms
    assert e_q1 < 1e-9 and e_q2 < 5e-6 and e_tau < 1e-5
