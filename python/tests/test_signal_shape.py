"""Shaped signals (docs/model-format.md, "signals") against scipy: the
closed-form first-order filter of hymo_signal_eval_d equals odeint's
solution of y' = (x(t) - y)/tau for the periodic table x, and the dead
zone and clamp are applied after it (run by ctest as py_package)."""
import ctypes
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import hymo  # noqa: E402
from hymo import _ffi  # noqa: E402

scipy_integrate = pytest.importorskip("scipy.integrate")

MODEL = """format: 1
name: sig
gravity: [0, -9.81, 0]
bodies:
  - name: b
    joint: {name: q, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: 0}
    mass: 1.0
    com: [0.5, 0, 0]
    inertia: [0.01, 0.01, 0.01]
signals:
  - {name: raw, points: [[0.5, -1], [1.0, 2], [1.6, 2], [1.6, -0.5], [2.0, 0.5]], period: 1.8}
  - {name: shaped, points: [[0.5, -1], [1.0, 2], [1.6, 2], [1.6, -0.5], [2.0, 0.5]], period: 1.8,
     filter_time_constant: 0.15, dead_zone: [-0.2, 0.3], clamp: [-0.6, 1.2]}
"""


def test_filter_dead_zone_clamp_against_odeint():
    lib = hymo._lib
    lib.hymo_signal_eval_d.restype = ctypes.c_double
    lib.hymo_signal_eval_d.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_int, ctypes.c_double,
                                       ctypes.POINTER(ctypes.c_double)]
    m = hymo.loads(MODEL)
    head = ctypes.cast(m._ptr, ctypes.POINTER(_ffi.Model_)).contents
    size = ctypes.sizeof(_ffi.Signal)
    base = ctypes.addressof(head.signals.contents)
    raw, shaped = base, base + size
    d = (ctypes.c_double * 2)()

    def x(t):  # the periodic table, from hymo (checked by hand in tests/core/test_signal_shape.c)
        return lib.hymo_signal_eval_d(raw, t, 1, 0.0, d)

    tau = 0.15
    ts = np.linspace(0.0, 9.0, 1801)
    breaks = sorted({0.5 + k * 1.8 + o for k in range(6) for o in (0.0, 0.5, 1.1, 1.5)})
    # integrate piece by piece between breakpoints (odeint across a step loses accuracy)
    y, out, t_prev = -1.0, {}, 0.0
    grid = [float(t) for t in ts]
    for b in breaks:  # breakpoints not already on the output grid
        if b < 9.0 and min(abs(g - b) for g in grid) > 1e-9:
            grid.append(b)
    grid.sort()
    for a, b in zip(grid[:-1], grid[1:]):
        sol = scipy_integrate.odeint(lambda yy, t: (x(t) - yy) / tau, [y], [a, b], rtol=1e-12, atol=1e-13,
                                     tcrit=[a, b], hmax=0.01)
        y = sol[-1, 0]
        out[b] = y
    out[grid[0]] = -1.0
    worst = 0.0
    for t in ts:
        yf = out[t]
        yd = 0.0 if -0.2 <= yf <= 0.3 else (yf - 0.3 if yf > 0.3 else yf + 0.2)
        yc = min(max(yd, -0.6), 1.2)
        got = lib.hymo_signal_eval_d(shaped, t, 1, 0.0, d)
        worst = max(worst, abs(got - yc))
    print("worst |hymo - odeint| = %.3g" % worst)
    assert worst < 1e-9, worst
