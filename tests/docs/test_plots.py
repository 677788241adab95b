"""scripts/plot_run.py on real files, checked from the figure object: every
panel names its quantity and unit, a motor's column is in rad, the
constraint panel is log scale, a co-simulation gets its residual-energy
panel.  env: HYMO_BINARY."""
import importlib.util
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def load(name):
    if os.path.join(ROOT, "scripts") not in sys.path:  # the scripts import each other
        sys.path.insert(0, os.path.join(ROOT, "scripts"))
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "scripts", name + ".py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def hymo(*args):
    subprocess.run([os.environ["HYMO_BINARY"], *args, "-q"], check=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("plots")
    out = {k: str(d / (k + ".h5")) for k in ("fourbar", "motor", "cosim")}
    hymo("run", os.path.join(ROOT, "data", "fourbar.yaml"), "--t-end", "1", "-o", out["fourbar"])
    hymo("run", os.path.join(ROOT, "tests", "models", "motor_pendulum.yaml"), "--t-end", "0.2", "-o", out["motor"])
    hymo("cosim", os.path.join(ROOT, "data", "crane1.yaml"), "--t-end", "1", "-o", out["cosim"])
    return out


def labels(fig):
    return [a.get_ylabel().replace("\n", " ") for a in fig.axes]


def test_run_panels_units(files):
    fig = load("plot_run").figure(files["fourbar"])
    got = labels(fig)
    assert got == ["joint coordinates (rad or m)", "actuator length s (m)", "pressure (MPa)",
                   "energy drift D (J)", "constraint violation |Phi| per cut joint (m or rad)"], got
    assert fig.axes[-1].get_xlabel() == "t (s)"
    assert fig.axes[-1].get_yscale() == "log"
    assert [t.get_text() for t in fig.axes[1].get_legend().get_texts()] == ["cyl (m)"]


def test_motor_in_rad(files):
    fig = load("plot_run").figure(files["motor"])
    assert labels(fig)[1] == "actuator length s (rad)"
    assert [t.get_text() for t in fig.axes[1].get_legend().get_texts()] == ["motor1 (rad)"]


def test_cosim_residual_panel(files):
    fig = load("plot_run").figure(files["cosim"])
    assert labels(fig)[-1] == "co-simulation residual energy (J)"
    assert "co-simulation jacobi" in fig._suptitle.get_text()


def test_compare_csv(tmp_path):
    """plot_compare.py takes a CSV run as hymo compare does (another tool's
    double pendulum, tests/foreign_csv.py), with and without --map."""
    ref, csv_, csvm, mp = (str(tmp_path / n) for n in ("dp.h5", "dp.csv", "dpm.csv", "dpm.yaml"))
    hymo("run", os.path.join(ROOT, "data", "double_pendulum.yaml"), "--t-end", "2", "-o", ref)
    fc = os.path.join(ROOT, "tests", "foreign_csv.py")
    subprocess.run(["/usr/bin/python3", fc, csv_], check=True)
    subprocess.run(["/usr/bin/python3", fc, csvm, "--map", mp], check=True)
    pc = os.path.join(ROOT, "scripts", "plot_compare.py")
    for run, extra in ((csv_, []), (csvm, ["--map", mp])):
        png = run + ".png"
        r = subprocess.run(["/usr/bin/python3", pc, ref, run, "-o", png, "--signals", "z", *extra],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert r.returncode == 0, r.stdout
        assert os.path.getsize(png) > 10000
    # the figure itself: both components drawn, the error below 1e-4 rad (hymo compare's figure)
    import sys
    sys.argv = ["plot_compare.py", ref, csv_, "-o", str(tmp_path / "x.png"), "--signals", "z"]
    m = load("plot_compare")
    import matplotlib.pyplot as plt
    m.main()
    fig = plt.gcf()
    assert [a.get_ylabel() for a in fig.axes] == ["z (rad)", "error (rad)"]  # every column in rad
    title = fig.axes[1].get_title(loc="right")
    assert title.startswith("max |run - ref| = ") and float(title.split()[5]) < 1e-4, title


def test_sweep_grid_legend(tmp_path):
    """plot_sweep.py on a --set-grid sweep: one curve per extrapolation and
    grid point, named in the legend; a run that never started (t_reached
    0, set here in a copy of the table) is drawn as such."""
    import shutil

    import h5py
    table = str(tmp_path / "t")
    subprocess.run([os.environ["HYMO_BINARY"], "sweep", os.path.join(ROOT, "data", "crane1.yaml"), "--t-end", "1",
                    "--H", "1e-3,4e-3", "--configs",
                    "coupling=velocity-pressure;extrapolation=0,2;hyd=rk4;mech=trapezoidal;scheme=jacobi",
                    "--set-grid", "hydraulics.valves[dcv1].flow_coefficient=1e-8,2e-8", "-o", table],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    m = load("plot_sweep")
    fig = m.figure(table + ".h5")
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["extrapolation %s (flow_coefficient=%s)" % (e, v) for e in "02" for v in ("1e-8", "2e-8")], legend
    assert fig.axes[0].get_xlabel() == "communication step H (ms)"
    assert fig.axes[0].get_ylabel().startswith("max |residual energy| (J)")
    shutil.copy(table + ".h5", table + "_never.h5")
    with h5py.File(table + "_never.h5", "r+") as f:
        f["runs/t_reached"][0] = 0.0
        f["runs/stable"][0] = 0.0
    legend = [t.get_text() for t in m.figure(table + "_never.h5").axes[0].get_legend().get_texts()]
    assert any(t.endswith(": did not start") for t in legend), legend
