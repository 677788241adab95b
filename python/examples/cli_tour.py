"""The README's command-line section from Python: every command of
`hymo` (README "Command-line usage") as a call of the hymo package, on
the shipped crane1.

    PYTHONPATH=python python3 python/examples/cli_tour.py [WORKDIR]

Each step names the command it stands for; python/tests/test_cli_tour.py
runs these steps and the commands and checks that the numbers are the
same (the HDF5 datasets bit for bit, the verdicts and exit codes equal)."""
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
import hymo  # noqa: E402

CRANE1 = os.path.join(ROOT, "data", "crane1.yaml")
SET = ["hydraulics.valves[dcv1].flow_coefficient=1.2e-8"]
T_END = 2.0


def run_and_info(work):
    """hymo run data/crane1.yaml --set ... --t-end 2 -o run.h5; hymo info run.h5"""
    m = hymo.load(CRANE1, set=SET)
    out = os.path.join(work, "run.h5")
    summary = m.run(output=out, t_end=T_END)
    return summary, hymo.info(out), out


def reference(work):
    """hymo run data/crane1.yaml --t-end 2 --dt 2.5e-4 -o ref.h5 (the reference of the co-simulations)"""
    out = os.path.join(work, "ref.h5")
    hymo.load(CRANE1).run(output=out, t_end=T_END, dt=2.5e-4)
    return out


def cosim_tlm(work, ref):
    """hymo cosim data/crane1.yaml --H 1e-3 --hh 1e-4 --coupling tlm --hyd-integrator trapezoidal
    --mech-inputs hold --unstable-ratio 0.2 --max-balance-jump 0.1 --reference ref.h5
    --max-rms s=1e-3 --max-abs p=2e6 --max-residual-energy 50 -o cosim_tlm.h5"""
    out = os.path.join(work, "cosim_tlm.h5")
    r = hymo.cosim(CRANE1, output=out, reference=ref, t_end=T_END, H=1e-3, hh=1e-4, coupling="tlm",
                   hyd_integrator="trapezoidal", mech_inputs="hold", unstable_ratio=0.2, max_balance_jump=0.1,
                   max_rms={"s": 1e-3}, max_abs="p=2e6", max_residual_energy=50)
    return r, out


def cosim_vp(work, ref):
    """hymo cosim data/crane1.yaml --H 2e-3 --hh 1e-4 --hm 1e-3 --scheme gauss-seidel --coupling
    velocity-pressure --extrapolation quadratic --formulation penalty --jacobian numeric
    --reference ref.h5 -o cosim_vp.h5   (the default thresholds)"""
    out = os.path.join(work, "cosim_vp.h5")
    r = hymo.cosim(CRANE1, output=out, reference=ref, t_end=T_END, H=2e-3, hh=1e-4, hm=1e-3,
                   scheme="gauss-seidel", coupling="velocity-pressure", extrapolation="quadratic",
                   formulation="penalty", jacobian="numeric")
    return r, out


def compare_h5(ref, run):
    """hymo compare ref.h5 cosim_tlm.h5 --max-rms s=1e-4 --max-abs 'z[z1]=1e-3' --max-residual-energy 1"""
    return hymo.compare(ref, run, max_rms={"s": 1e-4}, max_abs={"z[z1]": 1e-3}, max_residual_energy=1.0)


def write_csv(work, run):
    """Another tool's result: run.h5's z in degrees against time in ms, and p, as a CSV with a map."""
    d = hymo.read(run)
    csv, mp = os.path.join(work, "other.csv"), os.path.join(work, "other_map.yaml")
    cols = ["t_ms", "phi1_deg", "z[z2]", "p_cap_bar", "step"]
    data = np.column_stack([d["time"] * 1e3, np.degrees(d["states/z"][:, 0]), d["states/z"][:, 1],
                            d["states/p"][:, 0] / 1e5, np.arange(len(d["time"]))])
    with open(csv, "w") as f:
        f.write("# model: crane1\n" + ",".join(cols) + "\n")
        for row in data:
            f.write(",".join(repr(float(v)) for v in row) + "\n")
    with open(mp, "w") as f:
        f.write('time: {column: t_ms, scale: 1.0e-3}\ncolumns:\n'
                '  phi1_deg: {to: "z[z1]", scale: 0.017453292519943295}\n'
                '  p_cap_bar: {to: "p[V1]", scale: 1.0e5}\nignore: [step]\n')
    return csv, mp


def compare_csv(ref, csv, mp):
    """hymo compare ref.h5 other.csv --map other_map.yaml --max-rms 'p[V1]=1e5' --max-abs z=1e-2"""
    return hymo.compare(ref, csv, map=mp, max_abs={"z": 1e-2}, max_rms={"p[V1]": 1e5})


def fmus_and_system(work):
    """hymo fmu data/crane1.yaml --part mechanics -o crane1_mech.fmu;
    hymo fmu data/crane1.yaml --part circuit:circuit1 -o crane1_circuit1.fmu;
    hymo cosim crane1_system.yaml --t-end 2 -o system.h5   (a system file of the two FMUs)"""
    mech, circ = os.path.join(work, "crane1_mech.fmu"), os.path.join(work, "crane1_circuit1.fmu")
    hymo.fmu_export(CRANE1, mech, part="mechanics")
    hymo.fmu_export(CRANE1, circ, part="circuit:circuit1")
    system = os.path.join(work, "crane1_system.yaml")
    with open(system, "w") as f:
        f.write("H: 0.001\nt_end: 30\nscheme: jacobi\nextrapolation: 2\nmodel: %s\n"
                "subsystems:\n  mech: {fmu: crane1_mech.fmu}\n  circuit1: {fmu: crane1_circuit1.fmu}\n"
                "connections:\n" % CRANE1)
        for q in ("s", "sd"):
            f.write("  - from: mech.cyl1.%s\n    to: circuit1.cyl1.%s\n" % (q, q))
        for q in ("p_piston", "p_rod"):
            f.write("  - from: circuit1.cyl1.%s\n    to: mech.cyl1.%s\n" % (q, q))
    out = os.path.join(work, "system.h5")
    return hymo.cosim(system, output=out, t_end=T_END), system, out


def sweep(work):
    """hymo sweep data/crane1.yaml --t-end 2 --H 1e-3,5e-3,10e-3,20e-3
    --configs 'coupling=velocity-force,tlm;extrapolation=0,2' --max-rms s=1e-5 -o T
    (its reference computed with hymo run's defaults, as T_reference.h5)"""
    return hymo.sweep(CRANE1, t_end=T_END, H=[1e-3, 5e-3, 10e-3, 20e-3],
                      configs={"coupling": ["velocity-force", "tlm"], "extrapolation": [0, 2]},
                      max_rms={"s": 1e-5}, reference_output=os.path.join(work, "sweep_reference.h5"))


def main(work):
    summary, info, run = run_and_info(work)
    print("run       %s: %d steps, relative drift %.3e; info: %d rows, overrides %s"
          % (run, summary["n_steps"], summary["relative_drift"], info["rows"], info["overrides"]))
    ref = reference(work)
    for name, (r, out) in (("tlm", cosim_tlm(work, ref)), ("vp", cosim_vp(work, ref))):
        print("cosim %-4s %s: verdict %s (exit %d), max |E| %.3e J, z max error %.3e"
              % (name, out, r.verdict, r.exit_code, r["residual_energy_max_abs"], r["errors"]["z"]["max"]))
    g = compare_h5(ref, os.path.join(work, "cosim_tlm.h5"))
    print("compare   %r" % g)
    for c in g.checks:
        print("  %s %s %s = %.2e %s (limit %.2e)" % ("PASS" if c["passed"] else "FAIL", c["kind"], c["component"],
                                                  c["value"], c["unit"], c["limit"]))
    csv, mp = write_csv(work, run)
    g = compare_csv(run, csv, mp)
    print("compare   CSV with a map: %r" % g)
    sw = sweep(work)
    for a in sw["achievable"]:
        print("sweep     %-60s achievable H %g ms" % (a["config"], a["achievable_H"] * 1e3))
    r, system, out = fmus_and_system(work)
    print("cosim     %s (FMUs): verdict %s, %d power bonds, %d communication steps"
          % (system, r.verdict, r["n_bonds"], r["n_macro"]))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="hymo_tour_"))
