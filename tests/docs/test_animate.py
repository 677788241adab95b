"""scripts/animate.py: its forward kinematics (from the model stored in the
file) against hymo's own sensor output, on the planar excavator and on the
3-D forestry crane (with a sensor added); the GIF's frames; the VTK export
read back by meshio (Debian's python3-meshio), an independent VTU reader.
env: HYMO_BINARY."""
import importlib.util
import os
import subprocess
import sys

import h5py
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))  # the scripts import each other
spec = importlib.util.spec_from_file_location("animate", os.path.join(ROOT, "scripts", "animate.py"))
animate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(animate)


def hymo(*args):
    subprocess.run([os.environ["HYMO_BINARY"], *args, "-q"], check=True)


def fk_against_sensors(path, refs):
    run = animate.read(path)
    mech = animate.Mechanism(run["model"], run["z_names"])
    with h5py.File(path, "r") as f:
        pos = f["sensors/position"][()]
        cols = [n.decode() for n in f["sensors/position"].attrs["names"]]
    worst = 0.0
    for k in range(0, len(run["t"]), max(1, len(run["t"]) // 50)):
        fr = mech.frames(run["z"][k])
        for name, ref in refs.items():
            got = mech.point(fr, ref)
            want = [pos[k, cols.index(name + "." + c)] for c in "xyz"]
            worst = max(worst, np.abs(got - want).max())
    return worst


def test_fk_planar_excavator(tmp_path):
    out = str(tmp_path / "ex.h5")
    hymo("run", os.path.join(ROOT, "data", "excavator.yaml"), "--t-end", "6", "-o", out)
    assert fk_against_sensors(out, {"tooth_tip": "bucket.T", "bucket_pin": "arm.Q"}) < 1e-9


def test_fk_spatial_forestry_crane(tmp_path):
    src = open(os.path.join(ROOT, "data", "forestry_crane.yaml")).read()
    assert src.count("\nsensors:\n") == 1
    model = tmp_path / "fc.yaml"  # one more sensor, fixed in the telescope off its axis
    model.write_text(src.replace("\nsensors:\n", "\nsensors:\n  - {name: b, body: telescope, point: [0.3, -0.2, 0.1]}\n"))
    out = str(tmp_path / "fc.h5")
    hymo("run", str(model), "--t-end", "4", "-o", out)
    run = animate.read(out)
    mech = animate.Mechanism(run["model"], run["z_names"])
    assert not mech.planar
    # the body-fixed sensor b through the same frames
    with h5py.File(out, "r") as f:
        pos, cols = f["sensors/position"][()], [n.decode() for n in f["sensors/position"].attrs["names"]]
    k = len(run["t"]) - 1
    fr = mech.frames(run["z"][k])
    got = mech.point(fr, [0.3, -0.2, 0.1], "telescope")
    assert np.abs(got - [pos[k, cols.index("b." + c)] for c in "xyz"]).max() < 1e-9
    assert fk_against_sensors(out, {"grapple": "telescope.G", "knuckle": "boom.K"}) < 1e-9


def test_gif_and_vtk(tmp_path):
    meshio = pytest.importorskip("meshio")
    out = str(tmp_path / "c1.h5")
    hymo("run", os.path.join(ROOT, "data", "crane1.yaml"), "--t-end", "1", "-o", out)
    gif, vtk = str(tmp_path / "c1.gif"), str(tmp_path / "vtk")
    r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "animate.py"), out, "-o", gif,
                        "--fps", "5", "--vtk", vtk], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, r.stdout
    from PIL import Image
    run = animate.read(out)
    rows = animate.frame_rows(run["t"], 5.0, 1.0)
    assert Image.open(gif).n_frames == len(rows) == 6
    pvd = open(os.path.join(vtk, "motion.pvd")).read()
    assert pvd.count("<DataSet ") == len(rows)
    mech = animate.Mechanism(run["model"], run["z_names"])
    cyls = animate.cylinders(run["model"])
    for i, k in enumerate(rows):
        m = meshio.read(os.path.join(vtk, "frame_%04d.vtu" % i))
        segs = animate.scene(run, k, mech, cyls)
        assert m.cells[0].type == "line" and len(m.cells[0].data) == len(segs)
        want = np.array([p for s in segs for p in (s[0], s[1])])
        assert np.abs(m.points - want).max() < 1e-12
        kinds = m.cell_data["kind"][0]
        assert list(kinds) == [s[2] for s in segs] and 1 in kinds
        press = m.cell_data["pressure"][0][list(kinds).index(1)]
        assert 1e5 < press < 1e8  # the cylinder's piston-side pressure, Pa
