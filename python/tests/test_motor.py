"""A hydraulic motor spinning a flywheel (tests/models/motor_inertia.yaml)
against scipy: the same equations written out here (torque law with
hydro-mechanical efficiency and seal-like friction, motor flow with leakage,
orifice throttles with laminar region, port volumes with an effective bulk
modulus) integrated by solve_ivp (Radau, rtol 1e-10), compared with hymo's
trapezoidal run at dt = 0.25 ms (run by ctest as py_package)."""
import math
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import hymo  # noqa: E402

scipy_integrate = pytest.importorskip("scipy.integrate")

MODEL = os.path.join(ROOT, "tests", "models", "motor_inertia.yaml")


def test_flywheel_against_scipy():
    J, D, eta, ws, CL, cv = 0.5, 1.0e-5, 0.9, 0.5, 2.0e-12, 0.05
    pP, pT, Ct, ptr = 10.0e6, 1.0e5, 4.0e-8, 2.0e5
    V, Be = 2.0e-4, 1.0 / (1.0 / 1.5e9 + 1.0 / 1.0e9)  # one fixed part: C/V = 1/B_part

    def g(dp):
        return math.copysign(math.sqrt(abs(dp)), dp) if abs(dp) >= ptr else dp / math.sqrt(ptr)

    def rhs(t, y):
        _, w, pa, pb = y
        dp = pa - pb
        T = D * dp - (1 - eta) * D * abs(dp) * math.tanh(w / ws) - cv * w
        Qm = D * w + CL * dp
        return [w, T / J, Be / V * (Ct * g(pP - pa) - Qm), Be / V * (Qm - Ct * g(pb - pT))]

    t_out = np.linspace(0.0, 1.0, 41)
    ref = scipy_integrate.solve_ivp(rhs, (0.0, 1.0), [0.0, 0.0, 1.0e5, 1.0e5], method="Radau", t_eval=t_out,
                                    rtol=1e-10, atol=[1e-12, 1e-10, 1e-4, 1e-4])
    assert ref.success
    sim = hymo.load(MODEL).simulate(dt=2.5e-4, t_end=1.0)
    rows = sim.run_to(1.0, record=True)
    idx = [int(round(t / 2.5e-4)) for t in t_out]
    th, w, p = rows["z"][idx, 0], rows["zd"][idx, 0], rows["p"][idx]
    e_th = np.max(np.abs(th - ref.y[0]))
    e_w = np.max(np.abs(w - ref.y[1])) / np.max(np.abs(ref.y[1]))
    e_p = np.max(np.abs(p - ref.y[2:].T))
    print("flywheel vs Radau: angle %.3g rad, speed %.3g relative, pressure %.3g Pa" % (e_th, e_w, e_p))
    assert e_th < 1e-5 and e_w < 2e-5 and e_p < 200
