"""Tests of the Python package (run by ctest as py_package).

Environment: HYMO_LIB (libhymo.so) and HYMO_BINARY (the CLI); without them
the build directories of the source tree are searched.
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import hymo  # noqa: E402

DATA = os.path.join(ROOT, "data")
CRANE1 = os.path.join(DATA, "crane1.yaml")


def cli():
    b = os.environ.get("HYMO_BINARY")
    if b:
        return b
    b = os.path.join(os.path.dirname(hymo.library_path()), "hymo")
    if not os.path.exists(b):
        pytest.skip("no hymo CLI (set HYMO_BINARY)")
    return b


@pytest.fixture(scope="module")
def crane1():
    return hymo.load(CRANE1)


def test_load_error_names_file_and_line():
    bad = os.path.join(ROOT, "tests", "bad_models", "signal_not_monotonic.yaml")
    with pytest.raises(hymo.Error) as e:
        hymo.load(bad)
    assert e.value.status == "model"
    assert re.search(r"signal_not_monotonic\.yaml:\d+: signals\[0\]\.points", str(e.value)), str(e.value)
    with pytest.raises(hymo.Error) as e:
        hymo.loads("format: 1\nname: x\nbodies: [\n", origin="inline.yaml")
    assert e.value.status == "parse" and str(e.value).startswith("inline.yaml:3:"), str(e.value)
    with pytest.raises(hymo.Error) as e:
        hymo.load(os.path.join(DATA, "no_such_model.yaml"))
    assert "no_such_model.yaml" in str(e.value)


def test_model_constructor():
    # hymo.Model(path) as a new user writes it: loaded, not a crash (it
    # took the path for a pointer and segfaulted)
    m = hymo.Model(CRANE1)
    assert m.name == "crane1" and m.joints == ["z1", "z2"]
    import pathlib
    assert hymo.Model(pathlib.Path(CRANE1)).name == "crane1"
    with pytest.raises(TypeError, match="a model file's path"):
        hymo.Model(42)
    with pytest.raises(hymo.Error) as e:
        hymo.Model(os.path.join(DATA, "no_such_model.yaml"))
    assert "no_such_model.yaml" in str(e.value)
    assert hymo.Sim(CRANE1, t_end=0.01).model.name == "crane1"  # a path, as cosim() takes


def test_model_from_string_and_names(crane1):
    with open(CRANE1) as f:
        m = hymo.loads(f.read(), origin="crane1-string")
    assert m.name == "crane1" and m.joints == ["z1", "z2"] and m.signals == ["U_ref"]
    assert crane1.joints == m.joints


def test_run_equals_cli_bit_for_bit(crane1, tmp_path):
    cli_out, py_out = str(tmp_path / "cli.h5"), str(tmp_path / "py.h5")
    subprocess.run([cli(), "run", CRANE1, "--t-end", "2", "--dt", "1e-3", "-q", "-o", cli_out], check=True)
    summary = crane1.run(t_end=2.0, dt=1e-3, output=py_out)
    assert summary["complete"] == 1 and summary["n_steps"] == 2000
    ref, run = hymo.read(cli_out), hymo.read(py_out)
    assert np.array_equal(ref["states/z"], run["states/z"])
    assert np.array_equal(ref["states/p"], run["states/p"])
    # stepping by hand: the same final z, bit for bit
    sim = crane1.simulate(t_end=2.0, dt=1e-3)
    sim.run_to(2.0)
    assert sim.steps == 2000
    assert np.array_equal(sim.z, ref["states/z"][-1]), (sim.z, ref["states/z"][-1])
    s = sim.summary()
    assert s["complete"] == 1 and s["wall_time"] > 0


def test_step_with_input_moves_the_boom(crane1):
    for integrator in ("trapezoidal", "ida"):
        still, up, down = (crane1.simulate(t_end=1.0, integrator=integrator) for _ in range(3))
        up.set_input("U_ref", 5.0)
        down.set_input("dcv1", lambda t: -5.0 * min(t / 0.1, 1.0))  # a ramp, by valve name
        rec = up.run_to(0.5, record=True)
        still.run_to(0.5)
        down.run_to(0.5)
        z1 = rec["z"][:, 0]
        assert rec["time"][-1] == pytest.approx(0.5) and rec["z"].shape == (501, 2)
        assert abs(still.z[0] - z1[0]) < 1e-6  # U_ref = 0 until 1 s in the model
        assert z1[-1] - z1[0] > 0.01, integrator  # lifted
        assert np.all(np.diff(z1[100:]) > 0)
        assert down.z[0] < z1[0] - 0.01, integrator  # lowered
        assert up.get_input("U_ref") == 5.0
        up.clear_input("U_ref")
        assert up.get_input("U_ref", 0.5) == 0.0


def test_pump_speed_and_set_flow_inputs(tmp_path):
    """A pump's speed factor and a flow control valve's set-flow factor as
    inputs (tests/models/pump_signal_line.yaml): set at 0.2 s, the run of
    the table with that step, bit for bit (trapezoidal); a callback by
    element name; clearing returns to the table; a pump without a
    speed_signal is refused with what to add."""
    text = open(os.path.join(ROOT, "tests", "models", "pump_signal_line.yaml")).read()
    engine = text[text.index("points: [[0, 0.4], [0.02"):text.index("clamp: [0, 0.85]") + len("clamp: [0, 0.85]")]
    flat = hymo.loads(text.replace(engine, "points: [[0, 0.4], [0.4, 0.4]]"), "flat")
    step = hymo.loads(text.replace(engine, "points: [[0, 0.4], [0.2, 0.4], [0.2, 0.9], [0.4, 0.9]]"), "step")
    a, b, c = flat.simulate(), step.simulate(), flat.simulate()
    a.run_to(0.2), b.run_to(0.2), c.run_to(0.2)
    a.set_input("pump1", 0.9)
    assert a.get_input("engine") == 0.9 and c.get_input("pump1") == 0.4
    a.run_to(0.3), b.run_to(0.3), c.run_to(0.3)
    assert np.array_equal(a.p, b.p), (a.p, b.p)
    assert abs(a.p[0] - c.p[0]) > 1e5  # the faster pump raised Vp (to the relief)
    # the same step as a callback of time, set at t = 0 on the set flow too
    d = flat.simulate()
    d.set_input("pump1", lambda t: 0.4 if t < 0.2 else 0.9)
    d.set_input("fc1", lambda t: 0.5 if t < 0.2 else 1.0)  # the file's command table, as a function
    d.run_to(0.3)
    # measured 1.1e-8 (the step end at 0.2 s sees 0.9: a callback has no left limit) and 0.31
    assert np.max(np.abs(d.p - b.p) / b.p) < 1e-6 and np.max(np.abs(d.p - c.p) / c.p) > 0.1
    d.clear_input("fc1")
    assert d.get_input("fc1", 0.35) == 1.0 and d.get_input("command", 0.1) == 0.5
    with pytest.raises(hymo.Error, match="must not be negative"):
        d.set_input("pump1", -1.0)
    demo = hymo.load(os.path.join(DATA, "pump_demo.yaml")).simulate()
    with pytest.raises(hymo.Error, match=r"pump 'pump1' has no speed_signal.*`speed_signal: NAME`"):
        demo.set_input("pump1", 1.0)


def test_parameters_and_errors(crane1):
    sim = crane1.simulate(t_end=1.0)
    assert sim.get_parameter("source.pump.pressure") == 7.6e6
    sim.set_parameter("source.pump.pressure", 5e6)
    assert sim.get_parameter("source.pump.pressure") == 5e6
    assert crane1.simulate().get_parameter("source.pump.pressure") == 7.6e6  # the model is shared, unchanged
    with pytest.raises(hymo.Error, match="compiled into the model's constants"):
        sim.set_parameter("body.body1.mass", 100.0)
    with pytest.raises(hymo.Error, match=r"no input named 'U'.*\(inputs: U_ref, dcv1 \(valve\)\)"):
        sim.set_input("U", 1.0)
    with pytest.raises(hymo.Error, match="unknown option 'dtt'"):
        crane1.simulate(dtt=1e-3)
    with pytest.raises(hymo.Error) as e:
        crane1.run(dt=-1.0)
    assert e.value.status == "argument"

    def broken(t):
        raise ValueError("controller failed at t = %g" % t)

    sim.set_input("U_ref", broken)
    with pytest.raises(ValueError, match="controller failed"):
        sim.step()


def test_compare(crane1, tmp_path):
    fine, coarse = str(tmp_path / "fine.h5"), str(tmp_path / "coarse.h5")
    crane1.run(t_end=3.0, dt=5e-4, output=fine, error_estimate=0)
    crane1.run(t_end=3.0, dt=2e-3, output=coarse, error_estimate=0)
    same = hymo.compare(fine, fine)
    assert same["z"]["max"] == 0.0 and same["p"]["rms"] == 0.0
    r = hymo.compare(fine, coarse)
    assert r["n_samples"] == 6001 and r["t_end"] == pytest.approx(3.0)
    assert 0 < r["z"]["max"] < 1e-3 and 0 < r["p"]["max"] < 1e5
    assert 0 <= r["z"]["t_worst_max"] <= 3.0
    with pytest.raises(hymo.Error, match="missing.h5"):
        hymo.compare(fine, str(tmp_path / "missing.h5"))


def test_cosim_and_read(crane1, tmp_path):
    ref, out = str(tmp_path / "ref.h5"), str(tmp_path / "cosim.h5")
    crane1.run(t_end=1.0, dt=1e-3, output=ref, error_estimate=0)
    s = hymo.cosim(crane1, output=out, reference=ref, t_end=1.0, H=1e-3, scheme="jacobi",
                   coupling="velocity-pressure", approx=2)
    assert s["stable"] == 1 and s["n_macro"] == 1000 and s["n_bonds"] == 1
    assert s["errors"]["z"]["max"] < 1e-3
    d = hymo.read(out)
    assert d["attrs"]["complete"] == 1
    assert d["states/z"].shape == (1001, 2) and d["time"].shape == (1001,)
    assert d["cosim/residual_energy_total"].shape == (1001,)
    assert d["names"]["states/z"] == ["z1", "z2"]
    assert d["cosim/residual_energy_total"][-1] == pytest.approx(s["residual_energy_final"])
    with pytest.raises(hymo.Error, match="unknown option 'schema'"):
        hymo.cosim(crane1, schema="jacobi")


def test_plot_scripts(crane1, tmp_path):
    """scripts/plot_run.py and plot_compare.py (Debian's matplotlib) write their PNGs."""
    pytest.importorskip("matplotlib")
    ref, out = str(tmp_path / "ref.h5"), str(tmp_path / "cosim.h5")
    crane1.run(t_end=0.5, dt=1e-3, output=ref, error_estimate=0)
    hymo.cosim(crane1, output=out, t_end=0.5, H=1e-3)
    py = sys.executable
    run_png, cmp_png = str(tmp_path / "run.png"), str(tmp_path / "cmp.png")
    subprocess.run([py, os.path.join(ROOT, "scripts", "plot_run.py"), out, "-o", run_png], check=True)
    subprocess.run([py, os.path.join(ROOT, "scripts", "plot_compare.py"), ref, out, "-o", cmp_png], check=True)
    for png in (run_png, cmp_png):
        with open(png, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    bad = subprocess.run([py, os.path.join(ROOT, "scripts", "plot_run.py"), str(tmp_path / "none.h5")],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "cannot read" in bad.stderr
