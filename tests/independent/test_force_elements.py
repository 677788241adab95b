#!/usr/bin/python3
"""Force elements (docs/model-format.md, "forces") against solutions hymo did
not compute: closed forms of linear oscillators, and SciPy's solve_ivp
(rtol 1e-12) on the equations of motion in minimal coordinates, written
here from the physical description alone.

  * rotational spring-damper on a pendulum without gravity: the closed-form
    damped oscillation theta(t) (exact, linear);
  * pendulum with gravity and a rotational spring: nonlinear, SciPy;
  * mass on a slider with a point-to-point spring-damper along the slide:
    closed-form damped oscillation; with the anchor off the line: SciPy;
  * a pendulum falling onto a joint limit (end damper): SciPy with located
    events, hymo's error falling ~4x per halving of dt (second order kept
    across the contact), both formulations and both Jacobians;
  * Coulomb friction (smoothed): SciPy on the same law, and the sharp-
    Coulomb amplitude decay 4 F_c / k per period;
  * external force from a signal ramp on a free slider: the closed-form
    cubic x(t);
  * a pendulum whose tip force steps on the step grid: SciPy in two
    pieces, second order kept (the engine restarts from the right limit).

Run with HYMO_BINARY=/path/to/hymo /usr/bin/python3 -m pytest tests/independent -k force
"""

import os
import subprocess

import numpy as np
import pytest
from scipy.integrate import solve_ivp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(scope="module")
def hymo():
    path = os.environ.get("HYMO_BINARY", os.path.join(ROOT, "build", "hymo"))
    if not os.access(path, os.X_OK):
        pytest.fail("hymo binary not found at %s: set HYMO_BINARY" % path)
    return path


def run(hymo, tmp_path, text, dt, t_end, form="double-step", jac="fast", extra=()):
    model = tmp_path / "m.yaml"
    model.write_text(text)
    out = str(tmp_path / ("o-%s-%s-%g.h5" % (form, jac, dt)))
    cmd = [hymo, "run", str(model), "--dt", repr(dt), "--t-end", repr(t_end), "--formulation", form,
           "--jacobian", jac, "-o", out, "-q"] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, "%s: exit %d\n%s" % (" ".join(cmd), r.returncode, r.stderr)
    import h5py

    with h5py.File(out, "r") as f:
        return f["time"][:], f["states/z"][:], f["states/zd"][:], None


def scipy_solve(rhs, y0, t, events=None):
    """solve_ivp at rtol 1e-12 on the grid t; with events (functions with
    .direction), the integration restarts at each located event and the
    branch flag of each event function toggles."""
    y = np.array(y0, float)
    out = np.empty((len(t), len(y)))
    t0 = 0.0
    k = 0
    state = [0] * (len(events) if events else 0)
    found = []
    while k < len(t):
        ev = [e(state) for e in events] if events else None
        sol = solve_ivp(lambda tt, yy: rhs(tt, yy, state), (t0, t[-1]), y, method="DOP853", rtol=1e-12,
                        atol=1e-14, dense_output=True, events=ev)
        t1 = sol.t[-1]
        sel = (t >= t0) & (t <= t1)
        sel[:k] = False
        idx = np.nonzero(sel)[0]
        if len(idx):
            out[idx] = sol.sol(t[idx]).T
            k = idx[-1] + 1
        if sol.status != 1:
            break
        i = next(i for i, te in enumerate(sol.t_events) if len(te))
        found.append(t1)
        state[i] = 1 - state[i]
        y = sol.y[:, -1]
        t0 = t1
    return out, found


# ---------------------------------------------------------------- pendulum

PEND = """format: 1
name: fe_pendulum
gravity: [0, {g}, 0]
simulation: {{dt: 1.0e-3, t_end: 2}}
bodies:
  - name: arm
    joint: {{name: q, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: {q0}}}
    mass: 2
    com: [0.5, 0, 0]
    inertia: [0, 0.16666666666666666, 0.16666666666666666]
forces:
{forces}
"""
M, C, JZ = 2.0, 0.5, 0.16666666666666666
IO = JZ + M * C * C  # 2/3 kg m^2


def test_rotational_spring_closed_form(hymo, tmp_path):
    k, c, q0, qf = 40.0, 0.8, 0.3, -0.2
    text = PEND.format(g=0, q0=q0, forces="  - {name: s, type: joint_spring, joint: q, stiffness: %r, damping: %r,"
                                         " free_position: %r}" % (k, c, qf))
    w = np.sqrt(k / IO)
    zeta = c / (2 * np.sqrt(k * IO))
    wd = w * np.sqrt(1 - zeta**2)
    errs = []
    for dt in (1e-3, 5e-4, 2.5e-4):
        t, z, zd, _ = run(hymo, tmp_path, text, dt, 2.0)
        exact = qf + (q0 - qf) * np.exp(-zeta * w * t) * (np.cos(wd * t) + zeta / np.sqrt(1 - zeta**2) * np.sin(wd * t))
        errs.append(np.abs(z[:, 0] - exact).max())
    print("rotational spring vs closed form (f = %.4f Hz): errors %s" % (wd / 2 / np.pi, errs))
    assert errs[-1] < 5e-6
    for a, b in zip(errs, errs[1:]):
        assert 3.5 < a / b < 4.5


def test_pendulum_spring_gravity_scipy(hymo, tmp_path):
    k, c, q0, qf = 15.0, 0.3, -0.3, 0.4
    text = PEND.format(g=-9.81, q0=q0, forces="  - {name: s, type: joint_spring, joint: q, stiffness: %r,"
                                             " damping: %r, free_position: %r}" % (k, c, qf))

    def rhs(t, y, s):
        q, v = y
        return [v, (-M * 9.81 * C * np.cos(q) - k * (q - qf) - c * v) / IO]

    for form in ("double-step", "penalty"):
        for jac in ("fast", "numeric"):
            errs = []
            for dt in (1e-3, 5e-4):
                t, z, _, _ = run(hymo, tmp_path, text, dt, 2.0, form, jac)
                ref, _ = scipy_solve(rhs, [q0, 0.0], t)
                errs.append(np.abs(z[:, 0] - ref[:, 0]).max())
            print("pendulum + spring, %s %s: errors %s ratio %.2f" % (form, jac, errs, errs[0] / errs[1]))
            assert errs[1] < 2e-5
            assert 3.5 < errs[0] / errs[1] < 4.5


# ---------------------------------------------------------------- slider

SLIDER = """format: 1
name: fe_slider
gravity: [0, -9.81, 0]
simulation: {{dt: 1.0e-3, t_end: 2}}
ground:
  points: {{A: [0, {h}, 0]}}
signals:
  - {{name: ramp, points: [[0, 0], [1, 1], [2, 1]]}}
bodies:
  - name: cart
    joint: {{name: x, type: prismatic, parent: ground, location: [0, 0, 0], axis: [1, 0, 0], initial: {x0}}}
    mass: {m}
    com: [0, 0, 0]
    inertia: [0.1, 0.1, 0.1]
    points: {{P: [0, 0, 0]}}
forces:
{forces}
"""


def test_point_to_point_closed_form(hymo, tmp_path):
    m, k, c, l0, x0 = 3.0, 120.0, 2.0, 0.5, 0.8
    text = SLIDER.format(h=0, x0=x0, m=m, forces="  - {name: sd, type: spring_damper, point_a: A, point_b: cart.P,"
                                                 " stiffness: %r, damping: %r, free_length: %r}" % (k, c, l0))
    w = np.sqrt(k / m)
    zeta = c / (2 * np.sqrt(k * m))
    wd = w * np.sqrt(1 - zeta**2)
    errs = []
    for dt in (1e-3, 5e-4):
        t, z, _, _ = run(hymo, tmp_path, text, dt, 2.0)
        exact = l0 + (x0 - l0) * np.exp(-zeta * w * t) * (np.cos(wd * t) + zeta / np.sqrt(1 - zeta**2) * np.sin(wd * t))
        errs.append(np.abs(z[:, 0] - exact).max())
    print("point-to-point spring-damper vs closed form: errors %s ratio %.2f" % (errs, errs[0] / errs[1]))
    assert errs[1] < 2e-5
    assert 3.5 < errs[0] / errs[1] < 4.5


def test_point_to_point_oblique_scipy(hymo, tmp_path):
    m, k, c, l0, x0, h, f0 = 3.0, 200.0, 4.0, 0.3, 0.9, 0.4, 7.0
    text = SLIDER.format(h=h, x0=x0, m=m, forces="  - {name: sd, type: spring_damper, point_a: A, point_b: P,"
                                                 " stiffness: %r, damping: %r, free_length: %r, preload: %r}"
                                                 % (k, c, l0, f0))

    def rhs(t, y, s):
        x, v = y
        l = np.hypot(x, h)
        ld = x * v / l
        tension = k * (l - l0) + c * ld + f0
        return [v, -tension * x / l / m]

    for form in ("double-step", "penalty"):
        errs = []
        for dt in (1e-3, 5e-4):
            t, z, _, _ = run(hymo, tmp_path, text, dt, 2.0, form)
            ref, _ = scipy_solve(rhs, [x0, 0.0], t)
            errs.append(np.abs(z[:, 0] - ref[:, 0]).max())
        print("oblique spring-damper, %s: errors %s ratio %.2f" % (form, errs, errs[0] / errs[1]))
        assert errs[1] < 2e-5
        assert 3.5 < errs[0] / errs[1] < 4.5


def test_external_force_signal_closed_form(hymo, tmp_path):
    m, F0 = 3.0, 6.0
    text = SLIDER.format(h=0, x0=0, m=m, forces="  - {name: push, type: external, point: cart.P, force: [%r, -50, 0],"
                                               " force_signals: [ramp, null, null]}" % F0)
    a = F0 / m
    errs = []
    for dt in (1e-3, 5e-4):
        t, z, _, _ = run(hymo, tmp_path, text, dt, 2.0)
        exact = np.where(t <= 1, a * t**3 / 6, a / 6 + a / 2 * (t - 1) + a / 2 * (t - 1) ** 2)
        errs.append(np.abs(z[:, 0] - exact).max())
    print("external force from a ramp: errors %s m, ratio %.2f" % (errs, errs[0] / errs[1]))
    assert errs[1] < 1e-6
    assert 3.8 < errs[0] / errs[1] < 4.2


STEP_PEND = """format: 1
name: fe_step
gravity: [0, -9.81, 0]
simulation: {{dt: 1.0e-3, t_end: 0.6}}
signals:
  - {{name: on, points: [[0, 0], [0.3, 0], [0.3, 1], [10, 1]]}}
bodies:
  - name: arm
    joint: {{name: q, type: revolute, parent: ground, location: [0, 0, 0], axis: [0, 0, 1], initial: -1.0}}
    mass: 2
    com: [0.5, 0, 0]
    inertia: [0, 0.16666666666666666, 0.16666666666666666]
    points:
      tip: [1, 0, 0]
forces:
  - {{name: push, type: external, point: arm.tip, force: [0, {F}, 0], force_signals: [null, on, null]}}
"""


def test_external_force_step_second_order(hymo, tmp_path):
    """A force signal that steps on the step grid (t = 0.3 s): the step
    starting there integrates the force after the jump (the engine restarts
    from the right limit's accelerations), so the error keeps falling ~4x
    per halving of dt; it fell ~2x (first order, 2.2e-3 rad at 1 ms)
    before.  SciPy integrates the two pieces separately."""
    F = 30.0

    def rhs(t, y, s):
        q, v = y
        tau = -M * 9.81 * C * np.cos(q) + (F * np.cos(q) if t >= 0.3 else 0.0)  # tip force (0, F) at (cos q, sin q)
        return [v, tau / IO]

    errs = []
    for dt in (1e-3, 5e-4, 2.5e-4):
        t, z, _, _ = run(hymo, tmp_path, STEP_PEND.format(F=F), dt, 0.6)
        first = solve_ivp(lambda tt, yy: rhs(tt, yy, None), (0.0, 0.3), [-1.0, 0.0], method="DOP853", rtol=1e-12,
                          atol=1e-14, dense_output=True)
        second = solve_ivp(lambda tt, yy: rhs(max(tt, 0.3), yy, None), (0.3, 0.6), first.y[:, -1], method="DOP853",
                           rtol=1e-12, atol=1e-14, dense_output=True)
        exact = np.where(t <= 0.3, first.sol(np.minimum(t, 0.3))[0], second.sol(np.maximum(t, 0.3))[0])
        errs.append(np.abs(z[:, 0] - exact).max())
    print("external force step at 0.3 s: errors %s rad, ratios %s" % (errs, [a / b for a, b in zip(errs, errs[1:])]))
    assert errs[0] < 2e-6  # measured 8.7e-7
    for a, b in zip(errs, errs[1:]):
        assert 3.5 < a / b < 4.5


def test_external_force_step_off_grid_second_order(hymo, tmp_path):
    """The same force step at t_s = 0.30037 s, inside a step for every dt:
    the engine cuts the step at the jump (a sub-step to t_s, a restart
    from the right limits, a sub-step to the grid), so the error falls ~4x
    per halving (measured 9.0e-7, 2.3e-7, 5.8e-8 rad: ratios 3.91, 3.95);
    before, the jump was taken at the end of the step holding it and the
    error depended on where in the step it fell (6.5e-4, 6.0e-4, 2.5e-5
    rad: ratios 1.08, 24).  The output rows stay on the dt grid."""
    F, ts = 30.0, 0.30037
    text = STEP_PEND.format(F=F).replace("[0.3, 0], [0.3, 1]", "[%r, 0], [%r, 1]" % (ts, ts))

    def rhs(t, y):
        q, v = y
        tau = -M * 9.81 * C * np.cos(q) + (F * np.cos(q) if t >= ts else 0.0)
        return [v, tau / IO]

    first = solve_ivp(rhs, (0.0, ts), [-1.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-14, dense_output=True)
    second = solve_ivp(lambda tt, yy: rhs(max(tt, ts), yy), (ts, 0.6), first.y[:, -1], method="DOP853",
                       rtol=1e-12, atol=1e-14, dense_output=True)
    errs = []
    for dt in (1e-3, 5e-4, 2.5e-4):
        t, z, _, _ = run(hymo, tmp_path, text, dt, 0.6)
        assert np.allclose(t, np.arange(len(t)) * dt, rtol=0, atol=1e-12)  # rows on the grid
        exact = np.where(t <= ts, first.sol(np.minimum(t, ts))[0], second.sol(np.maximum(t, ts))[0])
        errs.append(np.abs(z[:, 0] - exact).max())
    print("external force step at %g s (off the grid): errors %s rad, ratios %s"
          % (ts, errs, [a / b for a, b in zip(errs, errs[1:])]))
    assert errs[0] < 2e-6
    for a, b in zip(errs, errs[1:]):
        assert 3.5 < a / b < 4.5


def test_coulomb_friction_decay(hymo, tmp_path):
    m, k, fc, vs, x0 = 2.0, 200.0, 3.0, 5e-3, 0.2
    text = SLIDER.format(h=0, x0=x0, m=m, forces=(
        "  - {name: s, type: joint_spring, joint: x, stiffness: %r}\n"
        "  - {name: f, type: joint_friction, joint: x, coulomb: %r, friction_velocity: %r}" % (k, fc, vs)))

    def rhs(t, y, s):
        x, v = y
        return [v, (-k * x - fc * np.tanh(v / vs)) / m]

    errs = []
    for dt in (2.5e-4, 1.25e-4):
        t, z, _, _ = run(hymo, tmp_path, text, dt, 1.7)
        ref, _ = scipy_solve(rhs, [x0, 0.0], t)
        errs.append(np.abs(z[:, 0] - ref[:, 0]).max())
    err = errs[-1]
    # sharp Coulomb: each half period (pi sqrt(m/k)) the amplitude drops by 2 F_c / k
    T2 = np.pi * np.sqrt(m / k)
    x = z[:, 0]
    peaks = [abs(x[i]) for i in range(1, len(x) - 1) if abs(x[i]) >= abs(x[i - 1]) and abs(x[i]) > abs(x[i + 1])
             and t[i] < 1.65]
    drops = np.diff(peaks)
    print("Coulomb friction: max |x - scipy| %s m (ratio %.2f); half-period %.4f s; amplitude drops %s (sharp law %.5f)"
          % (errs, errs[0] / errs[1], T2, np.round(drops, 5), -2 * fc / k))
    assert err < 1e-5
    assert errs[0] / errs[1] > 3.3
    assert len(drops) >= 4
    assert np.allclose(drops[:4], -2 * fc / k, rtol=0.03)


# ---------------------------------------------------------------- limit


def test_joint_limit_events_second_order(hymo, tmp_path):
    lo, kl, cl = -1.0, 2000.0, 20.0
    text = PEND.format(g=-9.81, q0=0, forces="  - {name: stop, type: joint_limit, joint: q, lower: %r, stiffness: %r,"
                                            " damping: %r}" % (lo, kl, cl))

    def rhs(t, y, s):
        q, v = y
        tau = -M * 9.81 * C * np.cos(q)
        if s[0]:
            tau += kl * (lo - q) - cl * v
        return [v, tau / IO]

    def contact(state):
        def g(t, y):
            return lo - y[0]
        g.terminal = True
        g.direction = -1 if state[0] else 1
        return g

    for form in ("double-step", "penalty"):
        for jac in ("fast", "numeric"):
            errs = []
            for dt in (2e-3, 1e-3, 5e-4, 2.5e-4):
                t, z, _, _ = run(hymo, tmp_path, text, dt, 1.0, form, jac)
                ref, found = scipy_solve(rhs, [0.0, 0.0], t, events=[contact])
                errs.append(np.abs(z[:, 0] - ref[:, 0]).max())
            ratios = [a / b for a, b in zip(errs, errs[1:])]
            print("joint limit, %s %s: events at %s; errors %s; ratios %s"
                  % (form, jac, np.round(found, 5), errs, np.round(ratios, 2)))
            assert len(found) >= 2
            assert errs[-1] < 4e-5
            for r in ratios:
                assert 3.3 < r < 4.7


def test_joint_limit_ida(hymo, tmp_path):
    """IDA takes the elements through the same force path and the limits'
    switching functions as root functions."""
    lo, kl, cl = -1.0, 2000.0, 20.0
    text = PEND.format(g=-9.81, q0=0, forces=(
        "  - {name: stop, type: joint_limit, joint: q, lower: %r, stiffness: %r, damping: %r}\n"
        "  - {name: s, type: joint_spring, joint: q, stiffness: 3, damping: 0.1, free_position: 0.2}"
        % (lo, kl, cl)))

    def rhs(t, y, s):
        q, v = y
        tau = -M * 9.81 * C * np.cos(q) - 3 * (q - 0.2) - 0.1 * v
        if s[0]:
            tau += kl * (lo - q) - cl * v
        return [v, tau / IO]

    def contact(state):
        def g(t, y):
            return lo - y[0]
        g.terminal = True
        g.direction = -1 if state[0] else 1
        return g

    t, z, _, _ = run(hymo, tmp_path, text, 1e-3, 1.0, extra=["--integrator", "ida", "--rtol", "1e-10",
                                                           "--atol", "1e-12"])
    ref, found = scipy_solve(rhs, [0.0, 0.0], t, events=[contact])
    err = np.abs(z[:, 0] - ref[:, 0]).max()
    print("joint limit, IDA rtol 1e-10: events at %s; max error %.3g rad" % (np.round(found, 5), err))
    assert len(found) >= 2
    assert err < 1e-7
