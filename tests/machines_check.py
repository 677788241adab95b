#!/usr/bin/python3
"""Verification of a shipped machine model (docs/models.md).

Runs `hymo run` on MODEL several times and checks, from the HDF5 files
(docs/hdf5-format.md):

  formulations  double-step and penalty agree: max |z_ds - z_pen| over every
                row and coordinate <= --tol-z (1e-6 rad or m) and
                max |p_ds - p_pen| <= --tol-p (100 Pa); as they are two
                discretisations, a larger difference passes when it meets
                the bounds at dt/2 and falls 3-6x from dt (O(dt^2));
  jacobian      fast and numeric Jacobian (double-step) agree to the same
                bounds;
  order         second order: the runs at dt, dt/2, dt/4 against a dt/8 run
                (on the dt grid); the error ratio per halving of dt is in
                [3, 6] (4 for an exact second-order method; 4.2 and 5.0 are
                expected for the two halvings when the reference itself has
                the error of dt/8);
  floor         no absolute pressure below the model's floor: the vapour
                pressure of the entrained-air fluid (/states p_floor), or
                0 Pa for a constant-bulk-modulus fluid (below 0 is
                non-physical); the summary's p_min and per-volume ranges
                agree with the data and count no volume below the floor;
  relief        every volume protected by a relief valve stays below
                p_to + p_crack + Q_in,max / k_g, where Q_in,max is the
                largest total inflow into that volume over the run, computed
                here from the file's pressures, spool positions and actuator
                velocities with the component laws of docs/model-format.md
                (pumps, throttles, 4/3 valves, check valves, flow control
                valves, relief valves into the volume, hydraulic motors,
                and the chamber's displacement flow): a volume whose
                pressure is above that bound has a net outflow, so a correct
                relief law can never let it pass it;
  summary       `hymo run` prints min/max pressures with the volume names
                and times, equal to the data and to the file's attributes.

Exit status 0 when every check passes, 1 otherwise (2 on usage errors).
Prints one line per check; --json FILE writes the measured figures.
Used by tests/cli/cli_machines.sh (short --t-end, CI) and bench/machines.sh
(the whole cycle, figures in docs/models.md).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

import h5py
import numpy as np
import yaml


class Loader(yaml.SafeLoader):
    """YAML 1.2 numbers: PyYAML (YAML 1.1) reads 2.0e5 or 1e-3 as strings."""


Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?$|^[-+]?\.(?:inf|Inf|INF)$"
               r"|^\.(?:nan|NaN|NAN)$"), list("-+0123456789."))


def yload(text):
    return yaml.load(text, Loader=Loader)


def apply_override(doc, spec):
    """Applies one `--set PATH=VALUE` (docs/overrides.md) to the parsed model:
    PATH is dot-separated keys, a list item as key[name] (by its name) or
    key[i] (by index)."""
    path, value = spec.split("=", 1)
    node, parts = doc, path.split(".")
    for k, part in enumerate(parts):
        m = re.fullmatch(r"([^\[]+)(?:\[([^\]]+)\])?", part)
        key, item = m.group(1), m.group(2)
        last = k == len(parts) - 1 and item is None
        if last:
            node[key] = yload("v: " + value)["v"]
            return
        node = node[key]
        if item is not None:
            lst = node
            node = lst[int(item)] if item.isdigit() else next(e for e in lst if e.get("name") == item)
            if k == len(parts) - 1:
                raise ValueError("override %s names a list item, not a value" % spec)


def run(hymo, model, out, extra, quiet=True):
    cmd = [hymo, "run", model, "-o", out] + extra + (["-q"] if quiet else [])
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    return r.stdout


def load(path):
    with h5py.File(path, "r") as f:
        d = {k: f[k][...] for k in ("/time", "/states/z", "/states/zd", "/states/p", "/states/U",
                                     "/actuators/s", "/actuators/sd")}
        d["p_names"] = [n.decode() for n in f["/states/p"].attrs["names"]]
        d["z_names"] = [n.decode() for n in f["/states/z"].attrs["names"]]
        d["U_names"] = [n.decode() for n in f["/states/U"].attrs["names"]]
        d["s_names"] = [n.decode() for n in f["/actuators/s"].attrs["names"]]
        st = f["/states"].attrs
        d["summary"] = {k: (st[k].decode() if isinstance(st[k], bytes) else st[k]) for k in st.keys()}
        d["summary_text"] = None
        d["complete"] = int(f.attrs["complete"])
        src = f.attrs["model_source"]
        d["model"] = yload(src.decode() if isinstance(src, bytes) else src)
        ov = f.attrs.get("overrides")
        for line in ((ov.decode() if isinstance(ov, bytes) else ov).splitlines() if ov is not None else []):
            apply_override(d["model"], line)
    return d


def max_diff(a, b, key):
    n = min(len(a["/time"]), len(b["/time"]))
    assert np.allclose(a["/time"][:n], b["/time"][:n], rtol=0, atol=1e-12), "time grids differ"
    return float(np.max(np.abs(a[key][:n] - b[key][:n]))) if a[key].size else 0.0


def orifice_g(dp, p_tr):
    """g(dp) of docs/model-format.md (throttles): turbulent sqrt, laminar below p_tr."""
    dp = np.asarray(dp, dtype=float)
    return np.where(np.abs(dp) >= p_tr, np.sign(dp) * np.sqrt(np.abs(dp)), dp / math.sqrt(p_tr))


def inflows(d):
    """Total inflow (m^3/s, >= 0 terms only) into every volume at every row."""
    m = d["model"]
    h = m.get("hydraulics", {})
    fluid = h["fluid"]
    p_tr = fluid.get("laminar_transition", 2.0e5)
    rho = fluid["density"]
    P = d["/states/p"]
    N = P.shape[0]
    col = {n: j for j, n in enumerate(d["p_names"])}
    src = {s["name"]: s["pressure"] for s in h.get("sources", [])}

    def pr(node):
        return P[:, col[node]] if node in col else np.full(N, float(src[node]))

    qin = {n: np.zeros(N) for n in col}

    def flow(a, b, q):  # q: flow a -> b
        if b in qin:
            qin[b] += np.maximum(q, 0.0)
        if a in qin:
            qin[a] += np.maximum(-q, 0.0)

    def coeff(e, key):
        return e[key] if key in e else e["discharge_coefficient"] * e["area"] * math.sqrt(2.0 / rho)

    for th in h.get("throttles", []):
        flow(th["from"], th["to"], coeff(th, "flow_coefficient") * orifice_g(pr(th["from"]) - pr(th["to"]), p_tr))
    ucol = {n: j for j, n in enumerate(d["U_names"])}
    for va in h.get("valves", []):
        # 4/3 valve, with per-edge coefficients, overlap and leakage when given
        # ("Directional valve edges, overlap and leakage"): edge e from its first
        # port to its second, x_e = max(0, sigma_e U - u0_e),
        # Q_e = C_e x_e g(dp_e) + G_leak dp_e; the plain valve is u0 = 0, G = 0.
        U = d["/states/U"][:, ucol[va["name"]]]
        edges = va.get("edges") or {e: va["flow_coefficient"] for e in ("PA", "BT", "PB", "AT")}
        ov = va.get("overlap", 0.0)
        u0 = ov if isinstance(ov, dict) else {e: ov for e in ("PA", "BT", "PB", "AT")}
        leak = va.get("leakage", 0.0)
        for e, sigma in (("PA", 1), ("BT", 1), ("PB", -1), ("AT", -1)):
            a_, b_ = va[e[0]], va[e[1]]
            dp = pr(a_) - pr(b_)
            x = np.maximum(sigma * U - u0.get(e, 0.0), 0.0)
            flow(a_, b_, edges[e] * x * orifice_g(dp, p_tr) + leak * dp)
    for pu in h.get("pumps", []):
        # Q = eta_v0 D n - C_L (p_to - p_from)
        n = pu["speed"] if "speed" in pu else pu["speed_rpm"] / 60.0
        flow(pu["from"], pu["to"], pu.get("volumetric_efficiency", 1.0) * pu["displacement"] * n
             - pu.get("leakage", 0.0) * (pr(pu["to"]) - pr(pu["from"])))
    for fc in h.get("flow_control_valves", []):
        dp = pr(fc["from"]) - pr(fc["to"])
        q = np.where(dp >= fc["compensator_pressure"], fc["set_flow"],
                     fc["set_flow"] * orifice_g(dp, p_tr) / orifice_g(fc["compensator_pressure"], p_tr))
        flow(fc["from"], fc["to"], q)
    for cv in h.get("check_valves", []):
        dp = pr(cv["from"]) - pr(cv["to"])
        y = dp - cv["cracking_pressure"]
        x = np.clip(y / cv["opening_pressure"], 0.0, 1.0)
        flow(cv["from"], cv["to"], coeff(cv, "flow_coefficient") * x * orifice_g(dp, p_tr) + cv.get("leakage", 0.0) * dp)
    for rv in h.get("relief_valves", []):  # only as an inflow into its `to` volume
        dp = pr(rv["from"]) - pr(rv["to"])
        q = np.where(dp >= rv["cracking_pressure"], rv["gradient"] * (dp - rv["cracking_pressure"]), 0.0) \
            + rv.get("leakage", 0.0) * dp
        if rv["to"] in qin:
            qin[rv["to"]] += np.maximum(q, 0.0)
    zcol = {n: j for j, n in enumerate(d["z_names"])}
    for mo in h.get("motors", []):
        # hydraulic motor on a joint: Q = D w + C_L (p_a - p_b), out of port a into port b
        w = d["/states/zd"][:, zcol[mo["joint"]]]
        flow(mo["port_a"], mo["port_b"], mo["displacement"] * w
             + mo.get("leakage", 0.0) * (pr(mo["port_a"]) - pr(mo["port_b"])))
    # chamber displacement: the piston side shrinks when s falls, the rod side when s grows
    scol = {n: j for j, n in enumerate(d["s_names"])}
    cyl = {c["name"]: c for c in h.get("cylinders", [])}
    for vol in h.get("volumes", []):
        for part in vol["parts"]:
            if "chamber" not in part:
                continue
            cname, side = part["chamber"].split(".")
            c = cyl[cname]
            D, dr = c["piston_diameter"], c["rod_diameter"]
            sd = d["/actuators/sd"][:, scol[cname]]
            if side == "piston":
                qin[vol["name"]] += np.maximum(-math.pi * D * D / 4 * sd, 0.0)
            else:
                qin[vol["name"]] += np.maximum(math.pi * (D * D - dr * dr) / 4 * sd, 0.0)
    return qin, pr


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hymo", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", required=True, help="directory for the HDF5 files")
    ap.add_argument("--t-end", type=float, default=None)
    ap.add_argument("--dt", type=float, default=None, help="coarsest dt (default: the model's)")
    ap.add_argument("--tol-z", type=float, default=1e-6)
    ap.add_argument("--tol-p", type=float, default=100.0)
    ap.add_argument("--checks", default="formulations,jacobian,order,floor,relief,summary")
    ap.add_argument("--json", default=None)
    ap.add_argument("--set", action="append", default=[], metavar="PATH=VALUE",
                    help="model override passed to every run (docs/overrides.md)")
    a = ap.parse_args()
    checks = a.checks.split(",")
    os.makedirs(a.out, exist_ok=True)
    name = os.path.splitext(os.path.basename(a.model))[0]
    with open(a.model) as f:
        model = yload(f.read())
    for spec in a.set:
        apply_override(model, spec)
    dt = a.dt or model.get("simulation", {}).get("dt", 1e-3)
    sets = [x for spec in a.set for x in ("--set", spec)]
    base = ["--dt", repr(dt)] + (["--t-end", repr(a.t_end)] if a.t_end else []) + sets
    figs = {"model": name, "dt": dt, "t_end": a.t_end or model.get("simulation", {}).get("t_end", 10)}
    fails = []

    def verdict(check, ok, text):
        print("%-12s %-4s %s" % (check, "ok" if ok else "FAIL", text))
        if not ok:
            fails.append(check)

    def path(tag):
        return os.path.join(a.out, "%s_%s.h5" % (name, tag))

    # the double-step run with the numeric Jacobian is the reference of every check
    summary_text = run(a.hymo, a.model, path("ds"), base + ["--jacobian", "numeric"], quiet=False)
    ds = load(path("ds"))
    if not ds["complete"]:
        verdict("run", False, "double-step run incomplete")

    if "formulations" in checks:
        # The two formulations are different discretisations: they differ by
        # O(dt^2). At dt they must agree to the tolerances, or at dt/2 with a
        # ratio in [3, 6] from dt (converging to each other).
        run(a.hymo, a.model, path("pen"), base + ["--jacobian", "numeric", "--formulation", "penalty"])
        pen = load(path("pen"))
        ez, ep = max_diff(ds, pen, "/states/z"), max_diff(ds, pen, "/states/p")
        figs["ds_vs_penalty"] = {"dt": dt, "z": ez, "p": ep}
        ok = ez <= a.tol_z and ep <= a.tol_p
        text = "double-step vs penalty at dt: max |dz| %.3g (<= %g), max |dp| %.3g Pa (<= %g)" % (ez, a.tol_z, ep, a.tol_p)
        if not ok:
            half = ["--dt", repr(dt / 2)] + base[2:] + ["--jacobian", "numeric", "--output-every", "2"]
            run(a.hymo, a.model, path("ds2"), half)
            run(a.hymo, a.model, path("pen2"), half + ["--formulation", "penalty"])
            ds2, pen2 = load(path("ds2")), load(path("pen2"))
            ez2, ep2 = max_diff(ds2, pen2, "/states/z"), max_diff(ds2, pen2, "/states/p")
            figs["ds_vs_penalty_half"] = {"dt": dt / 2, "z": ez2, "p": ep2}
            rz, rp = ez / ez2, ep / ep2
            ok = ez2 <= a.tol_z and ep2 <= a.tol_p and 3.0 <= rz <= 6.0 and 3.0 <= rp <= 6.0
            text += "; at dt/2: %.3g, %.3g Pa (ratios %.2f, %.2f in [3, 6]: an O(dt^2) difference)" % (ez2, ep2, rz, rp)
        verdict("formulations", ok, text)

    if "jacobian" in checks:
        run(a.hymo, a.model, path("fast"), base + ["--jacobian", "fast"])
        fast = load(path("fast"))
        ez, ep = max_diff(ds, fast, "/states/z"), max_diff(ds, fast, "/states/p")
        figs["fast_vs_numeric"] = {"z": ez, "p": ep}
        verdict("jacobian", ez <= a.tol_z and ep <= a.tol_p,
                "fast vs numeric Jacobian: max |dz| %.3g (<= %g), max |dp| %.3g Pa (<= %g)" % (ez, a.tol_z, ep, a.tol_p))

    if "order" in checks:
        runs = {1: ds}
        for k in (2, 4, 8):
            extra = ["--dt", repr(dt / k), "--output-every", str(k), "--jacobian", "numeric"]
            extra += (["--t-end", repr(a.t_end)] if a.t_end else []) + sets
            run(a.hymo, a.model, path("dt%d" % k), extra)
            runs[k] = load(path("dt%d" % k))
        err = {k: (max_diff(runs[k], runs[8], "/states/z"), max_diff(runs[k], runs[8], "/states/p")) for k in (1, 2, 4)}
        rz = [err[1][0] / err[2][0], err[2][0] / err[4][0]]
        rp = [err[1][1] / err[2][1], err[2][1] / err[4][1]]
        figs["order"] = {"err_z": [err[k][0] for k in (1, 2, 4)], "err_p": [err[k][1] for k in (1, 2, 4)],
                         "ratio_z": rz, "ratio_p": rp}
        ok = all(3.0 <= r <= 6.0 for r in rz + rp)
        verdict("order", ok, "errors against dt/8 at dt, dt/2, dt/4: z %s, p %s Pa; ratios per halving z %s, p %s "
                "(in [3, 6])" % (", ".join("%.3g" % err[k][0] for k in (1, 2, 4)),
                                 ", ".join("%.3g" % err[k][1] for k in (1, 2, 4)),
                                 "/".join("%.2f" % r for r in rz), "/".join("%.2f" % r for r in rp)))

    P = ds["/states/p"]
    if "floor" in checks and P.size:
        # the model's floor: the vapour pressure of the entrained-air fluid
        # (/states p_floor), else 0 Pa absolute
        sm = ds["summary"]
        floor = float(sm.get("p_floor", 0.0))
        j = np.unravel_index(np.argmin(P), P.shape)
        pmin = float(P[j])
        figs["p_min"] = {"value": pmin, "volume": ds["p_names"][j[1]], "time": float(ds["/time"][j[0]]),
                         "floor": floor, "fluid_model": sm.get("fluid_model", "constant")}
        ok = pmin >= floor and abs(sm["p_min"] - pmin) <= 1e-9 * max(1.0, abs(pmin)) \
            and int(sm["n_volumes_below_zero"]) == 0 and int(sm.get("n_volumes_below_floor", 0)) == 0
        if "volume_p_min" in sm:  # per-volume ranges of the summary against the data
            ok = ok and np.allclose(sm["volume_p_min"], P.min(axis=0), rtol=1e-12, atol=0) \
                and np.allclose(sm["volume_p_max"], P.max(axis=0), rtol=1e-12, atol=0)
        verdict("floor", ok, "min absolute pressure %.4g Pa (%s at %.4g s) >= floor %g Pa (fluid %s); summary "
                "p_min %.4g Pa, %d volumes below zero, %d below the floor" %
                (pmin, ds["p_names"][j[1]], ds["/time"][j[0]], floor, sm.get("fluid_model", "constant"), sm["p_min"],
                 int(sm["n_volumes_below_zero"]), int(sm.get("n_volumes_below_floor", 0))))

    if "relief" in checks:
        h = ds["model"].get("hydraulics", {})
        qin, pr = inflows(ds)
        figs["relief"] = []
        for rv in h.get("relief_valves", []):
            v = rv["from"]
            if v not in qin:
                continue
            qmax = float(np.max(qin[v]))
            setting = float(np.max(pr(rv["to"]))) + rv["cracking_pressure"]
            allowed = qmax / rv["gradient"]
            pmax = float(np.max(pr(v)))
            figs["relief"].append({"relief": rv["name"], "volume": v, "p_max": pmax, "setting": setting,
                                   "q_in_max": qmax, "allowed_override": allowed, "override": pmax - setting})
            verdict("relief", pmax <= setting + allowed,
                    "%s: %s max %.4f MPa, setting %.4f MPa + Q_in,max/k_g = %.4g m^3/s / %.3g = %.4f MPa "
                    "(override used %.4f MPa)" % (rv["name"], v, pmax / 1e6, setting / 1e6, qmax, rv["gradient"],
                                                   allowed / 1e6, (pmax - setting) / 1e6))

    if "summary" in checks and P.size:
        mt = re.search(r"pressures\s+min (\S+) MPa \((\S+) at (\S+) s\), max (\S+) MPa \((\S+) at (\S+) s\)", summary_text)
        ok = mt is not None
        if ok:
            i_min = np.unravel_index(np.argmin(P), P.shape)
            i_max = np.unravel_index(np.argmax(P), P.shape)
            sm = ds["summary"]
            ok = (abs(float(mt.group(1)) * 1e6 - P[i_min]) <= 5e-4 * max(abs(P[i_min]), 1e3)
                  and mt.group(2) == ds["p_names"][i_min[1]] == sm["p_min_volume"]
                  and abs(float(mt.group(4)) * 1e6 - P[i_max]) <= 5e-4 * abs(P[i_max])
                  and mt.group(5) == ds["p_names"][i_max[1]] == sm["p_max_volume"]
                  and abs(sm["p_max"] - P[i_max]) <= 1e-9 * abs(P[i_max]))
        # one line per volume: "  NAME  min X MPa at T s, max Y MPa at T s" (hymo run, fluid summary)
        per = dict((m_.group(1), (float(m_.group(2)), float(m_.group(3)))) for m_ in re.finditer(
            r"^\s+(\S+)\s+min (\S+) MPa at \S+ s, max (\S+) MPa at \S+ s$", summary_text, re.M))
        if per:
            for j, n in enumerate(ds["p_names"]):
                lo, hi = per.get(n, (math.nan, math.nan))
                ok = ok and abs(lo * 1e6 - P[:, j].min()) <= 5e-6 * max(abs(P[:, j].min()), 1e3) \
                    and abs(hi * 1e6 - P[:, j].max()) <= 5e-6 * abs(P[:, j].max())
        verdict("summary", ok, "summary line: %s; %d per-volume lines%s" %
                (mt.group(0) if mt else "no 'pressures min .. max ..' line", len(per),
                 " agree with the data" if per else ""))

    if a.json:
        with open(a.json, "w") as f:
            json.dump(figs, f, indent=1)
    return 1 if fails else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print("FAIL: %s" % e)
        sys.exit(1)
