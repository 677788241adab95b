"""python/examples/cli_tour.py against the CLI: each step of the tour and
the `hymo` command it stands for, run side by side; the HDF5 datasets
equal bit for bit, verdicts, gate results and exit codes equal, and
figures as the CLI prints them.  Also the enum names of the mirrors
against the library's own name functions."""
import importlib.util
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import hymo  # noqa: E402

_spec = importlib.util.spec_from_file_location("cli_tour", os.path.join(ROOT, "python", "examples", "cli_tour.py"))
tour = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tour)

# attributes that differ between any two runs (wall clock, creation time, file names)
VOLATILE = re.compile(r"wall|created|time_s$|elapsed|output_path|rate_steps")


def cli():
    b = os.environ.get("HYMO_BINARY")
    if b:
        return b
    b = os.path.join(os.path.dirname(hymo.library_path()), "hymo")
    if not os.path.exists(b):
        pytest.skip("no hymo CLI (set HYMO_BINARY)")
    return b


def hymo_cli(*args):
    return subprocess.run([cli()] + [str(a) for a in args], capture_output=True, text=True, timeout=240)


def same_files(a, b):
    """Every dataset equal bit for bit (NaN where NaN), every attribute but the wall-clock ones equal."""
    da, db = hymo.read(a), hymo.read(b)
    keys = set(da) - {"attrs", "names", "units"}
    assert keys == set(db) - {"attrs", "names", "units"}
    for k in sorted(keys):
        x, y = np.asarray(da[k]), np.asarray(db[k])
        assert x.shape == y.shape, k
        if x.dtype.kind == "f":
            assert np.array_equal(x.view(np.uint64), y.view(np.uint64)), "dataset %s differs" % k
        else:
            assert np.array_equal(x, y), "dataset %s differs" % k
    assert da["names"] == db["names"] and da["units"] == db["units"]

    def flat(d, pre=""):
        for k, v in d.items():
            if isinstance(v, dict):
                yield from flat(v, pre + k + "/")
            elif not VOLATILE.search(k):
                yield pre + k, v

    fa, fb = dict(flat(da["attrs"])), dict(flat(db["attrs"]))
    assert fa.keys() == fb.keys()
    for k in fa:
        x, y = np.asarray(fa[k]), np.asarray(fb[k])
        same = np.array_equal(x, y, equal_nan=True) if x.dtype.kind == "f" else np.array_equal(x, y)
        assert same, "attribute %s: %r vs %r" % (k, fa[k], fb[k])


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return str(tmp_path_factory.mktemp("tour"))


@pytest.fixture(scope="module")
def ref(work):
    return tour.reference(work)


def test_enum_names_match_the_library():
    """Every name the library prints for an enum value is accepted by the
    package and maps to that value (run options and co-simulation options)."""
    lib = hymo._lib
    for field, fn, n in (("integrator", "hymo_integrator_name", 2), ("newton_test", "hymo_newton_test_name", 2),
                         ("formulation", "hymo_formulation_name", 2), ("jacobian", "hymo_jacobian_name", 2),
                         ("linear_solver", "hymo_linsol_name", 3)):
        for k in range(n):  # the values of include/hymo/sim.h; the functions name only those
            name = getattr(lib, fn)(k).decode()
            assert hymo._ENUMS[field][name] == k, (field, name)
    m = hymo.load(tour.CRANE1)
    for field, fn, opt in (("scheme", "hymo_cosim_scheme_name", "scheme"), ("coupling", "hymo_coupling_name", "coupling"),
                           ("approx", "hymo_approx_name", "extrapolation"),
                           ("hyd_integrator", "hymo_hyd_integrator_name", "hyd_integrator"),
                           ("mech_integrator", "hymo_mech_integrator_name", "mech_integrator"),
                           ("mech_inputs", "hymo_mech_inputs_name", "mech_inputs")):
        seen = 0
        for k in range(8):
            name = getattr(lib, fn)(k).decode()
            if name == "?":
                continue
            seen += 1
            opts = hymo._buffer("hymo_cosim_options", hymo._CosimOptions)
            lib.hymo_cosim_options_default(hymo.ctypes.byref(opts), m._ptr)
            hymo._cosim_apply(opts, {opt: name})
            assert getattr(opts, field) == k, (field, name)
        assert seen >= 2
    with pytest.raises(hymo.Error, match="--coupling: invalid value 'tml'"):
        hymo.cosim(m, coupling="tml")


def test_run_with_overrides_and_info(work):
    summary, info, out = tour.run_and_info(work)
    cli_out = os.path.join(work, "cli_run.h5")
    r = hymo_cli("run", tour.CRANE1, "--set", tour.SET[0], "--t-end", tour.T_END, "-o", cli_out)
    assert r.returncode == 0, r.stderr
    same_files(out, cli_out)
    assert info["overrides"] == tour.SET and info["rows"] == 2001 and info["complete"] == 1
    for k in ("n_steps", "peak_drift", "relative_drift", "max_constraint_position", "mean_iterations", "p_max"):
        assert info[k] == summary[k], k
    text = hymo_cli("info", out).stdout
    for figure in ("%d steps" % info["n_steps"], "peak |D| %.3g J" % info["peak_drift"],
                   "mean %.2f" % info["mean_iterations"], "rows         %d" % info["rows"],
                   "overrides    %s" % info["overrides"][0]):
        assert figure in text, (figure, text)
    # --output-interval
    out2, cli2 = os.path.join(work, "run_every.h5"), os.path.join(work, "cli_run_every.h5")
    hymo.load(tour.CRANE1).run(output=out2, t_end=1.0, output_interval=0.05)
    assert hymo_cli("run", tour.CRANE1, "--t-end", "1", "--output-interval", "0.05", "-q", "-o", cli2).returncode == 0
    same_files(out2, cli2)
    assert hymo.info(out2)["rows"] == 21
    with pytest.raises(hymo.Error, match="--output-interval: .*not a whole multiple of dt"):
        hymo.load(tour.CRANE1).run(t_end=1.0, output_interval=0.0075)
    with pytest.raises(hymo.Error, match="flow_coefficien"):
        hymo.load(tour.CRANE1, set=["hydraulics.valves[dcv1].flow_coefficien=1"])


def test_cosim_tlm_with_verdict_options(work, ref):
    r, out = tour.cosim_tlm(work, ref)
    cli_out = os.path.join(work, "cli_tlm.h5")
    c = hymo_cli("cosim", tour.CRANE1, "--t-end", tour.T_END, "--H", "1e-3", "--hh", "1e-4", "--coupling", "tlm",
                 "--hyd-integrator", "trapezoidal", "--mech-inputs", "hold", "--unstable-ratio", "0.2",
                 "--max-balance-jump", "0.1", "--reference", ref, "--max-rms", "s=1e-3", "--max-abs", "p=2e6",
                 "--max-residual-energy", "50", "-o", cli_out)
    assert c.returncode == r.exit_code == 0, c.stderr
    assert r.verdict == "accurate" and r["n_tlm"] > 0
    assert "verdict        accurate" in c.stdout or "accurate" in c.stdout
    same_files(out, cli_out)
    assert "%.3e" % r["errors"]["z"]["max"] in c.stdout


def test_cosim_default_thresholds_and_inaccurate(work, ref):
    r, out = tour.cosim_vp(work, ref)
    cli_out = os.path.join(work, "cli_vp.h5")
    c = hymo_cli("cosim", tour.CRANE1, "--t-end", tour.T_END, "--H", "2e-3", "--hh", "1e-4", "--hm", "1e-3",
                 "--scheme", "gauss-seidel", "--coupling", "velocity-pressure", "--extrapolation", "quadratic",
                 "--formulation", "penalty", "--jacobian", "numeric", "--reference", ref, "-o", cli_out)
    assert c.returncode == r.exit_code == 0, c.stderr
    same_files(out, cli_out)
    # a threshold the run misses: inaccurate, the CLI's exit 1, the same reason
    tight = hymo.cosim(tour.CRANE1, reference=ref, t_end=tour.T_END, H=2e-3, max_abs={"z": 1e-9})
    c = hymo_cli("cosim", tour.CRANE1, "--t-end", tour.T_END, "--H", "2e-3", "--reference", ref, "--max-abs",
                 "z=1e-9", "-q")
    assert tight.verdict == "inaccurate" and tight.exit_code == c.returncode == 1 and not tight.passed
    assert tight["verdict_reason"] in c.stderr
    # an unstable one: a result with exit code 3, as the CLI's
    bad = hymo.cosim(tour.CRANE1, t_end=tour.T_END, H=2e-3, unstable_energy=1e-12)
    c = hymo_cli("cosim", tour.CRANE1, "--t-end", tour.T_END, "--H", "2e-3", "--unstable-energy", "1e-12", "-q")
    assert bad.verdict == "unstable" and bad.exit_code == c.returncode == 3
    assert bad["reason"] in c.stderr


def check_lines(gate, stdout):
    """The gate's checks as the CLI's PASS/FAIL lines, in order."""
    lines = [ln for ln in stdout.splitlines() if ln.startswith(("PASS ", "FAIL "))]
    assert len(lines) == len(gate.checks), stdout
    for c, ln in zip(gate.checks, lines):
        kind = {"rms": "rms", "abs": "abs", "residual_energy": "residual_energy"}[c["kind"]]
        assert ln.startswith("%s %s" % ("PASS" if c["passed"] else "FAIL", kind)), ln
        assert "%.2e" % c["value"] in ln and "%.2e" % c["limit"] in ln, (c, ln)
        if c["kind"] != "residual_energy":
            assert c["component"] in ln, (c, ln)


def test_compare_h5_gate(work, ref):
    run = os.path.join(work, "cosim_tlm.h5")
    if not os.path.exists(run):
        tour.cosim_tlm(work, ref)
    g = tour.compare_h5(ref, run)
    c = hymo_cli("compare", ref, run, "--max-rms", "s=1e-4", "--max-abs", "z[z1]=1e-3", "--max-residual-energy", "1")
    assert g.exit_code == c.returncode == 0 and g.passed
    check_lines(g, c.stdout)
    assert "%.3e" % g["z"]["max"] in c.stdout and "%.3e" % g["p"]["rms"] in c.stdout
    # a limit just below and just above the measured error: fail and pass, as the CLI's
    for factor, code in ((0.99, 1), (1.01, 0)):
        lim = repr(g["s"]["rms"] * factor)
        g2 = hymo.compare(ref, run, max_rms="s=" + lim)
        c = hymo_cli("compare", ref, run, "--max-rms", "s=" + lim)
        assert g2.exit_code == c.returncode == code
        check_lines(g2, c.stdout)
    # failing thresholds, one per component and a sub-span
    g = hymo.compare(ref, run, max_abs={"z[z2]": 1e-9, "p": 1e9}, max_rms="s=1e-12", span=(0.5, 1.5))
    c = hymo_cli("compare", ref, run, "--max-rms", "s=1e-12", "--max-abs", "z[z2]=1e-9", "--max-abs", "p=1e9",
                 "--span", "0.5:1.5")  # the gate's order: max_rms, then max_abs
    assert g.exit_code == c.returncode == 1 and [x["passed"] for x in g.checks] == [False, False, True]
    assert any("tighter than the reference's own estimated max error" in w for w in g.warnings)
    check_lines(g, c.stdout)
    assert g["t_start"] == 0.5 and g["t_end"] == 1.5
    # bad input: an exception with the CLI's message (exit 2)
    for kw, args, msg in (({"max_abs": {"z[boom]": 1}}, ["--max-abs", "z[boom]=1"], "no component 'z[boom]'"),
                          ({"max_rms": {"q": 1}}, ["--max-rms", "q=1"], "unknown signal 'q'"),
                          ({"map": "x.yaml"}, ["--map", "x.yaml"], "applies to a CSV run")):
        with pytest.raises(hymo.Error, match=re.escape(msg)):
            hymo.compare(ref, run, **kw)
        c = hymo_cli("compare", ref, run, *args)
        assert c.returncode == 2 and msg in c.stderr
    # a run that does not cover the reference: fail, not an error
    short = os.path.join(work, "short.h5")
    hymo.load(tour.CRANE1).run(output=short, t_end=1.0, dt=2.5e-4)
    g = hymo.compare(ref, short, max_rms={"z": 1})
    assert g.exit_code == hymo_cli("compare", ref, short, "--max-rms", "z=1").returncode == 1
    assert "covers t = 0 .. 1 s" in g.failure


def test_compare_csv_with_map(work, ref):
    summary, info, run = tour.run_and_info(work)
    csv, mp = tour.write_csv(work, run)
    g = tour.compare_csv(run, csv, mp)
    c = hymo_cli("compare", run, csv, "--map", mp, "--max-rms", "p[V1]=1e5", "--max-abs", "z=1e-2")
    assert g.exit_code == c.returncode == 0, c.stdout + c.stderr
    check_lines(g, c.stdout)
    assert g["z"]["max"] < 1e-12 and g["components"]["p[V1]"]["unit"] == "Pa"
    assert np.isnan(g["components"]["p[V2]"]["rms"])  # not in the CSV
    g = hymo.compare(run, csv, map=mp, max_abs={"z[z1]": 1e-20, "z[z2]": 1e-20})
    c = hymo_cli("compare", run, csv, "--map", mp, "--max-abs", "z[z1]=1e-20", "--max-abs", "z[z2]=1e-20")
    assert g.exit_code == c.returncode
    check_lines(g, c.stdout)
    with pytest.raises(hymo.Error, match="has no column p\\[V2\\]"):
        hymo.compare(run, csv, map=mp, max_abs={"p[V2]": 1})
    with pytest.raises(hymo.Error, match="not an HDF5 file|other.csv"):
        hymo.compare(csv, run)


def test_fmu_export_and_system_cosim(work):
    r, system, out = tour.fmus_and_system(work)
    assert r.verdict == "stable" and r["n_bonds"] == 1 and r["n_macro"] == 2000
    import zipfile
    for part, fmu in (("mechanics", "crane1_mech.fmu"), ("circuit:circuit1", "crane1_circuit1.fmu")):
        cli_fmu = os.path.join(work, "cli_" + fmu)
        c = hymo_cli("fmu", tour.CRANE1, "--part", part, "-o", cli_fmu, "-q")
        assert c.returncode == 0, c.stderr
        a, b = zipfile.ZipFile(os.path.join(work, fmu)), zipfile.ZipFile(cli_fmu)
        assert sorted(a.namelist()) == sorted(b.namelist())
        for n in b.namelist():
            assert a.read(n) == b.read(n), (fmu, n)
    cli_out = os.path.join(work, "cli_system.h5")
    c = hymo_cli("cosim", system, "--t-end", tour.T_END, "-o", cli_out, "-q")
    assert c.returncode == r.exit_code == 0, c.stderr
    same_files(out, cli_out)
    # an SSP archive of the split's FMUs (exported by the CLI: fmu_export refuses --part ssp)
    ssp = os.path.join(work, "crane1.ssp")
    c = hymo_cli("fmu", tour.CRANE1, "--part", "ssp", "-o", ssp, "-q")
    assert c.returncode == 0, c.stderr
    with pytest.raises(hymo.Error, match="--part ssp"):
        hymo.fmu_export(tour.CRANE1, os.path.join(work, "x.ssp"), part="ssp")
    mine, cli_ssp = os.path.join(work, "ssp.h5"), os.path.join(work, "cli_ssp.h5")
    r = hymo.cosim(ssp, output=mine, t_end=tour.T_END)
    c = hymo_cli("cosim", ssp, "--t-end", tour.T_END, "-o", cli_ssp, "-q")
    assert c.returncode == r.exit_code == 0, c.stderr
    same_files(mine, cli_ssp)
    with pytest.raises(hymo.Error, match="--H applies to model files"):
        hymo.cosim(system, H=2e-3)
    with pytest.raises(hymo.Error, match="--part: |part"):
        hymo.fmu_export(tour.CRANE1, os.path.join(work, "x.fmu"), part="gearbox")


def test_sweep(work):
    sw = tour.sweep(work)
    base = os.path.join(work, "cli_sweep")
    c = hymo_cli("sweep", tour.CRANE1, "--t-end", tour.T_END, "--H", "1e-3,5e-3,10e-3,20e-3", "--configs",
                 "coupling=velocity-force,tlm;extrapolation=0,2", "--max-rms", "s=1e-5", "--jobs", "1", "-o", base)
    assert c.returncode == 0, c.stderr
    same_files(os.path.join(work, "sweep_reference.h5"), base + "_reference.h5")
    import csv
    rows = list(csv.DictReader(open(base + ".csv")))
    assert len(rows) == len(sw["runs"]) == 16
    for row, r in zip(rows, sw["runs"]):
        e = r["errors"]
        mine = {"coupling": r["coupling"], "extrapolation": r["extrapolation"], "hyd_integrator": r["hyd"],
                "mech_integrator": r["mech"], "scheme": r["scheme"], "mech_inputs": r["inputs"], "H": "%g" % r["H"],
                "stable": "%d" % r["stable"], "pass": "%d" % r["pass"], "rms_s": "%.6g" % e["s"]["rms"],
                "max_s": "%.6g" % e["s"]["max"], "rms_sd": "%.6g" % e["sd"]["rms"], "rms_p": "%.6g" % e["p"]["rms"],
                "rms_z": "%.6g" % e["z"]["rms"], "residual_energy_final": "%.6g" % r["residual_energy_final"],
                "residual_energy_max_abs": "%.6g" % r["residual_energy_max_abs"],
                "peak_drift": "%.6g" % r["peak_drift"], "t_reached": "%.6g" % r["t_reached"], "reason": r["reason"]}
        theirs = {k: row[k] for k in mine}
        assert mine == theirs
    ach = list(csv.DictReader(open(base + "_achievable.csv")))
    assert [(a["coupling"], a["extrapolation"], a["achievable_H"]) for a in ach] == \
        [(a["coupling"], a["extrapolation"], "%g" % a["achievable_H"]) for a in sw["achievable"]]
    assert [a["achievable_H"] for a in sw["achievable"]] == [0.0, 1e-3, 1e-3, 5e-3]
    # a parameter grid (--set-grid): per point its reference and rows, the last path fastest
    grid = {"hydraulics.sources[pump].pressure": ["7e6", "7.6e6"],
            "hydraulics.valves[dcv1].flow_coefficient": ["1.0e-8", "1.2e-8"]}
    sg = hymo.sweep(tour.CRANE1, t_end=1.0, H=[1e-3, 5e-3], configs="coupling=velocity-force,tlm",
                    max_rms={"s": 1e-5}, set_grid=grid, reference_output=os.path.join(work, "grid_ref.h5"))
    base = os.path.join(work, "cli_grid")
    args = ["sweep", tour.CRANE1, "--t-end", "1", "--H", "1e-3,5e-3", "--configs", "coupling=velocity-force,tlm",
            "--max-rms", "s=1e-5", "--jobs", "1", "-o", base]
    for k, v in grid.items():
        args += ["--set-grid", "%s=%s" % (k, ",".join(v))]
    c = hymo_cli(*args)
    assert c.returncode == 0, c.stderr
    for pt in range(4):
        same_files(os.path.join(work, "grid_ref_p%d.h5" % pt), base + "_reference_p%d.h5" % pt)
    rows = list(csv.DictReader(open(base + ".csv")))
    assert len(rows) == len(sg["runs"]) == 16
    for row, r in zip(rows, sg["runs"]):
        for k, v in r["point"].items():
            assert row[k] == v
        assert row["coupling"] == r["coupling"] and row["H"] == "%g" % r["H"] and row["pass"] == "%d" % r["pass"]
        assert row["rms_s"] == "%.6g" % r["errors"]["s"]["rms"]
    ach = list(csv.DictReader(open(base + "_achievable.csv")))
    assert [a["achievable_H"] for a in ach] == ["%g" % a["achievable_H"] for a in sg["achievable"]]
    with pytest.raises(hymo.Error, match="--reference cannot be used with --set-grid"):
        hymo.sweep(tour.CRANE1, reference=os.path.join(work, "ref.h5"), set_grid=grid)
    # takeoff: refused for tlm, as the CLI
    with pytest.raises(hymo.Error, match="not defined for the tlm coupling"):
        hymo.sweep(tour.CRANE1, configs="coupling=tlm", achievable="takeoff")


def test_sensors_and_parameters_on_a_sim(work):
    """A Sim's outputs() after each step are the rows `hymo run` writes
    (sensors, flows, powers, references: bit for bit); a parameter set at
    t = 0 gives the run of the same value set with --set."""
    exc = os.path.join(tour.ROOT, "data", "excavator.yaml")
    out = os.path.join(work, "exc.h5")
    c = hymo_cli("run", exc, "--t-end", "0.3", "-q", "-o", out)
    assert c.returncode == 0, c.stderr
    d = hymo.read(out)
    sim = hymo.load(exc).simulate(t_end=0.3)
    rows = [sim.outputs()]
    while sim.t < 0.3 - 1e-12:
        sim.step()
        rows.append(sim.outputs())
    assert set(rows[0]) >= {"sensors/position", "sensors/velocity", "sensors/acceleration"}
    for path in rows[0]:
        mine = np.array([r[path] for r in rows])
        assert mine.shape == d[path].shape, path
        assert np.array_equal(mine.view(np.uint64), d[path].view(np.uint64)), path
        assert sim.output_names[path] == d["names"][path] and sim.output_units[path] == d["units"][path], path
    tip = sim.sensors()["tooth_tip"]
    assert np.array_equal(tip["position"], d["sensors/position"][-1][:3])
    assert set(sim.sensors()["bucket_pin"]) == {"position"}
    # a run-time parameter from t = 0 = the model value overridden
    out = os.path.join(work, "setp.h5")
    assert hymo_cli("run", tour.CRANE1, "--t-end", tour.T_END, "--set", "hydraulics.sources[pump].pressure=7e6",
                    "-q", "-o", out).returncode == 0
    sim = hymo.load(tour.CRANE1).simulate(t_end=tour.T_END)
    sim.set_parameter("source.pump.pressure", 7e6)
    assert sim.get_parameter("source.pump.pressure") == 7e6
    rec = sim.run_to(tour.T_END, record=True)
    d = hymo.read(out)
    assert np.array_equal(rec["z"], d["states/z"]) and np.array_equal(rec["p"], d["states/p"])


@pytest.mark.parametrize("model, override, name, value", [
    ("pump_demo", "hydraulics.pumps[pump1].displacement=1.2e-5", "pump.pump1.displacement", 1.2e-5),
    ("pump_demo", "hydraulics.pumps[pump1].speed_rpm=1200", "pump.pump1.speed", 20.0),
    ("pump_demo", "hydraulics.pumps[pump1].volumetric_efficiency=0.9", "pump.pump1.eta_v", 0.9),
    ("pump_demo", "hydraulics.pumps[pump1].leakage=3e-13", "pump.pump1.leakage", 3e-13),
    ("pump_demo", "hydraulics.relief_valves[relief1].gradient=2e-9", "relief_valve.relief1.gradient", 2e-9),
    ("relief_demo", "hydraulics.check_valves[check1].leakage=3e-13", "check_valve.check1.leakage", 3e-13),
])
def test_pump_and_valve_parameters(work, model, override, name, value):
    """The parameters of pumps, relief and check valves set at t = 0: the
    run of the same value set with --set, bit for bit."""
    path = os.path.join(tour.ROOT, "data", model + ".yaml")
    out = os.path.join(work, "param_%s.h5" % name.replace(".", "_"))
    c = hymo_cli("run", path, "--t-end", "1", "--set", override, "-q", "-o", out)
    assert c.returncode == 0, c.stderr
    sim = hymo.load(path).simulate(t_end=1.0)
    sim.set_parameter(name, value)
    assert sim.get_parameter(name) == value
    rec = sim.run_to(1.0, record=True)
    d = hymo.read(out)
    assert np.array_equal(rec["p"], d["states/p"]) and np.array_equal(rec["z"], d["states/z"])
    with pytest.raises(hymo.Error, match="thresholds of located events"):
        sim.set_parameter(name.rsplit(".", 1)[0] + ".p_crack", 1e6)


def test_tour_runs(tmp_path):
    """The example as a script."""
    r = subprocess.run([sys.executable, os.path.join(ROOT, "python", "examples", "cli_tour.py"), str(tmp_path)],
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    assert "verdict accurate" in r.stdout and "Gate PASS" in r.stdout
