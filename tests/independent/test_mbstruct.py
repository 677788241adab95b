#!/usr/bin/python3
"""Redundant constraints: the Bennett linkage and the spatial
RUSR four-bar against independent solutions (bennett.py: the closed-form
Bennett relations and a one-coordinate Lagrangian; spatial.py: the
state-space form in the crank angle).

Measured at commit time (Debug build; max |dz| over 3 s, rad):

  bennett      double-step numeric  1 / 0.25 / 0.0625 ms: 1.19e-5 / 7.46e-7 / 4.66e-8  (16.0, 16.0)
               double-step fast                           1.20e-5 / 7.46e-7 / 4.68e-8  (16.0, 15.9)
               penalty fast                               1.45e-5 / 9.08e-7 / 6.69e-8  (15.9, 13.6)
               penalty numeric                            1.59e-5 / 4.71e-6 / 9.16e-6  (no order: the
                   redundant rows' multipliers drifted in null(Phi_z^T), and the numeric matrix's
                   geometric stiffness with them; with lambda kept minimal:
                                                          1.51e-5 / 9.34e-7 / 5.83e-8  (16.1, 16.0);
                   penalty fast since then (projection repeated where one pass leaves > 1 %):
                                                          1.61e-5 / 9.12e-7 / 5.70e-8  (17.7, 16.0))
  spatial_fourbar at 1 ms: double-step 8.00e-6, penalty 7.83e-6 (ratio 1.02)
"""

import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import bennett  # noqa: E402
import compare  # noqa: E402


@pytest.fixture(scope="session")
def hymo():
    path = os.environ.get("HYMO_BINARY", os.path.join(ROOT, "build", "hymo"))
    if not os.access(path, os.X_OK):
        pytest.fail("hymo binary not found at %s" % path)
    return path


@pytest.fixture(scope="session", autouse=True)
def solution_cache(tmp_path_factory):
    if not os.environ.get("HYMO_INDEP_CACHE"):
        os.environ["HYMO_INDEP_CACHE"] = str(tmp_path_factory.mktemp("independent"))


def run(hymo, tmp_path, model, formulation, jacobian, dt, extra=()):
    out = str(tmp_path / ("%s-%s-%s-%g.h5" % (model, formulation, jacobian, dt)))
    cmd = [hymo, "run", os.path.join(ROOT, "data", model + ".yaml"), "--formulation", formulation,
           "--jacobian", jacobian, "--dt", repr(dt), "-o", out, "-q"] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, "%s: exit %d\n%s" % (" ".join(cmd), r.returncode, r.stderr)
    return compare.errors(model, out), out


def test_bennett_relations_by_forward_kinematics():
    """The closed form the independent solution rests on: DH closure to round-off."""
    assert bennett.check() < 1e-12


@pytest.mark.parametrize("formulation,jacobian", [("double-step", "numeric"), ("double-step", "fast"),
                                                  ("penalty", "fast"), ("penalty", "numeric")])
def test_bennett_second_order(hymo, tmp_path, formulation, jacobian):
    """Error falls ~16x per 4x smaller dt; double-step
    keeps every constraint equation, the 3 redundant ones too, <= 1e-10."""
    import h5py
    errs = []
    for dt in (1e-3, 2.5e-4):
        res, out = run(hymo, tmp_path, "bennett", formulation, jacobian, dt)
        errs.append(res["z_max_error"])
        with h5py.File(out, "r") as f:
            c = f["constraints"].attrs
            assert int(c["rank"]) == 2 and int(c["n_redundant"]) == 3
            if formulation == "double-step":
                assert float(c["max_position"]) <= 1e-10
                assert float(c["max_redundant_violation"]) <= 1e-10
    ratio = errs[0] / errs[1]
    print("bennett %s %s: %.3e %.3e ratio %.2f" % (formulation, jacobian, errs[0], errs[1], ratio))
    assert errs[0] <= 2.5e-5
    assert 13.0 <= ratio <= 19.0


def test_spatial_fourbar_double_step_vs_penalty(hymo, tmp_path):
    """At dt = 1 ms with the default re-selection threshold, double-step is
    within 2x of penalty's error against the independent solution."""
    ds, _ = run(hymo, tmp_path, "spatial_fourbar", "double-step", "numeric", 1e-3)
    pb, _ = run(hymo, tmp_path, "spatial_fourbar", "penalty", "numeric", 1e-3)
    print("spatial_fourbar 1 ms: double-step %.3e, penalty %.3e" % (ds["z_max_error"], pb["z_max_error"]))
    assert ds["z_max_error"] <= 2.0 * pb["z_max_error"]
    assert pb["z_max_error"] <= 2e-5
