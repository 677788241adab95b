#!/usr/bin/python3
"""A minimal, independent FMI 2.0 co-simulation master (ctypes), for the
FMU export tests (docs/fmi.md).

Written from the FMI 2.0 standard's function list and calling sequence
(fmi2Instantiate, fmi2SetupExperiment, fmi2EnterInitializationMode,
fmi2ExitInitializationMode, fmi2SetReal / fmi2GetReal, fmi2DoStep,
fmi2GetFMUstate / fmi2SetFMUstate, fmi2Terminate, fmi2FreeInstance), not
from hymo's master: it knows nothing of hymo but the variable names it
wires, and, for `interface_model` and `--hymo-fit`, the protocol and
polynomial arithmetic docs/fmi.md ("A master for the interface model")
describes.

  fmi_master.py whole    --hymo HYMO --model M --work DIR [--t-end T]
      exports M's `whole` FMU, steps it with H = dt and compares every
      output row with `hymo run` (bit-identical z, zd, s, sd, p, U).
  fmi_master.py varstep  --hymo HYMO --model M --work DIR [--t-end T] [--tol R]
      whole with communication steps of 2.5 dt and 0.4 dt against `hymo run`
      with dt = H/3 and 0.4 dt (the same grid); a mixed sequence of steps.
  fmi_master.py varstep_parts --hymo HYMO --model M --work DIR [--t-end T] [--tol R] [--order P]
      mechanics + every circuit FMU (h_m = 1 ms, h_h = 0.3 ms) in a Jacobi
      loop with communication steps of 2.5 h_m and 0.4 h_m, against
      `hymo cosim --H H --hm H/n_m --hh H/n_h` (n = ceil(H/h): the same
      internal steps), and against the same loop with FMUs exported with
      h_m = H/n_m, h_h = H/n_h (bit-identical at any --order); a mixed
      sequence of steps (order 1) reaches 1.6 s and stays within the
      co-simulation error of a fine hymo cosim; H <= 0 or a wrong t is
      still fmi2Error.  --hymo-fit: the inputs' polynomials with hymo's
      arithmetic and point times (bit-identical to hymo cosim at any order).
  fmi_master.py interface_model --hymo HYMO --model M --work DIR [--t-end T] [--H H] [--tol R]
      mechanics + circuit:all exported with --extrapolation interface-model
      in a Jacobi loop following hymo's protocol (circuit inputs held,
      mechanics' inputs linear through hymo's fit) against `hymo cosim
      --extrapolation interface-model`: at whole multiples (h_m = H) and
      re-divided (H = 2.5 and 0.4 h_m); bit-identical z, s, p.
  fmi_master.py getters  --hymo HYMO --model M --work DIR [--t-end T]
      every Real variable of the whole FMU (outputs and locals: z, zd, zdd,
      s, sd, F, p, u, time, energies, iterations, steps) against `hymo run`'s
      file, and of the mechanics and circuit FMUs in a Jacobi loop (inputs
      held) against `hymo cosim`'s file, bit-identical at every
      communication point; each variable read alone and all in one call.
  fmi_master.py jacobi   --hymo HYMO --model M --work DIR [--t-end T] [--H H]
      exports `mechanics` + every circuit FMU, couples them in a Jacobi loop
      (inputs held over the step: `--extrapolation 0`), and compares with
      `hymo cosim` of the same configuration (bit-identical z, s, p).
  fmi_master.py state    --hymo HYMO --model M --work DIR
      fmi2GetFMUstate / fmi2SetFMUstate round-trip: a retried step is
      bit-identical (whole, mechanics and a circuit), also through
      fmi2SerializeFMUstate / fmi2DeSerializeFMUstate.
  fmi_master.py inputs   --hymo HYMO --model M --work DIR
      the whole FMU driven by the master (fmi2SetReal +
      fmi2SetRealInputDerivatives of the valve reference) with the model's
      own signal reproduces the undriven run to 1e-9, and a different
      input changes it.
  fmi_master.py flow_inputs --hymo HYMO --model tests/models/pump_signal_line.yaml --work DIR
      the signals of a pump's speed and a flow control valve's set flow are
      inputs (start = table at t = 0+, min 0, no unit); untouched, the FMU is
      `hymo run` (bit-identical); set at 0.2 s through fmi2SetReal, it is the
      run of tables that step there (--tol 0: bit-identical, else the relative
      bound); a negative factor is refused.
  fmi_master.py describe FMU...
      checks each modelDescription.xml (well-formed, required attributes).
Exit status 0 when every check holds; a failed check prints one line and
exits 1.
"""
import argparse
import ctypes as C
import math
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile

fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal = 0, 1, 2, 3, 4
fmi2CoSimulation = 1

LOGGER = C.CFUNCTYPE(None, C.c_void_p, C.c_char_p, C.c_int, C.c_char_p, C.c_char_p)
ALLOC = C.CFUNCTYPE(C.c_void_p, C.c_size_t, C.c_size_t)
FREE = C.CFUNCTYPE(None, C.c_void_p)
STEPFINISHED = C.CFUNCTYPE(None, C.c_void_p, C.c_int)


class CallbackFunctions(C.Structure):
    _fields_ = [("logger", LOGGER), ("allocateMemory", ALLOC), ("freeMemory", FREE),
                ("stepFinished", STEPFINISHED), ("componentEnvironment", C.c_void_p)]


_libc = C.CDLL(None)
_libc.calloc.restype = C.c_void_p
_libc.calloc.argtypes = [C.c_size_t, C.c_size_t]
_libc.free.argtypes = [C.c_void_p]


class Failed(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failed(msg)


class FMU:
    """One unzipped FMU and one instance of it."""

    def __init__(self, path, name, work):
        self.dir = tempfile.mkdtemp(prefix="fmu_", dir=work)
        with zipfile.ZipFile(path) as z:
            z.extractall(self.dir)
        self.md = ET.parse(os.path.join(self.dir, "modelDescription.xml")).getroot()
        cs = self.md.find("CoSimulation")
        self.identifier = cs.get("modelIdentifier")
        self.guid = self.md.get("guid")
        self.vars = {}
        self.causality = {}
        for sv in self.md.find("ModelVariables"):
            self.vars[sv.get("name")] = int(sv.get("valueReference"))
            self.causality[sv.get("name")] = sv.get("causality")
        self.inputs = [n for n, c in self.causality.items() if c == "input"]
        self.outputs = [n for n, c in self.causality.items() if c == "output"]
        so = os.path.join(self.dir, "binaries", "linux64", self.identifier + ".so")
        self.lib = C.CDLL(so)
        self.messages = []
        self._bind()
        self._logger = LOGGER(self._log)
        self._alloc = ALLOC(lambda n, s: _libc.calloc(n, s))
        self._free = FREE(lambda p: _libc.free(p))
        self.callbacks = CallbackFunctions(self._logger, self._alloc, self._free, STEPFINISHED(0), None)
        uri = "file://" + os.path.join(self.dir, "resources").replace(" ", "%20")
        self.c = self.lib.fmi2Instantiate(name.encode(), fmi2CoSimulation, self.guid.encode(), uri.encode(),
                                          C.byref(self.callbacks), 0, 0)
        check(self.c, "fmi2Instantiate failed: " + " | ".join(self.messages))

    def _log(self, env, instance, status, category, message):
        self.messages.append(message.decode(errors="replace"))

    def _bind(self):
        L = self.lib
        vr_p, sz, real_p = C.POINTER(C.c_uint), C.c_size_t, C.POINTER(C.c_double)
        sigs = {
            "fmi2Instantiate": (C.c_void_p, [C.c_char_p, C.c_int, C.c_char_p, C.c_char_p, C.c_void_p, C.c_int,
                                             C.c_int]),
            "fmi2SetupExperiment": (C.c_int, [C.c_void_p, C.c_int, C.c_double, C.c_double, C.c_int, C.c_double]),
            "fmi2EnterInitializationMode": (C.c_int, [C.c_void_p]),
            "fmi2ExitInitializationMode": (C.c_int, [C.c_void_p]),
            "fmi2Terminate": (C.c_int, [C.c_void_p]),
            "fmi2Reset": (C.c_int, [C.c_void_p]),
            "fmi2FreeInstance": (None, [C.c_void_p]),
            "fmi2GetReal": (C.c_int, [C.c_void_p, vr_p, sz, real_p]),
            "fmi2SetReal": (C.c_int, [C.c_void_p, vr_p, sz, real_p]),
            "fmi2SetRealInputDerivatives": (C.c_int, [C.c_void_p, vr_p, sz, C.POINTER(C.c_int), real_p]),
            "fmi2DoStep": (C.c_int, [C.c_void_p, C.c_double, C.c_double, C.c_int]),
            "fmi2GetFMUstate": (C.c_int, [C.c_void_p, C.POINTER(C.c_void_p)]),
            "fmi2SetFMUstate": (C.c_int, [C.c_void_p, C.c_void_p]),
            "fmi2FreeFMUstate": (C.c_int, [C.c_void_p, C.POINTER(C.c_void_p)]),
            "fmi2SerializedFMUstateSize": (C.c_int, [C.c_void_p, C.c_void_p, C.POINTER(C.c_size_t)]),
            "fmi2SerializeFMUstate": (C.c_int, [C.c_void_p, C.c_void_p, C.c_char_p, C.c_size_t]),
            "fmi2DeSerializeFMUstate": (C.c_int, [C.c_void_p, C.c_char_p, C.c_size_t, C.POINTER(C.c_void_p)]),
            "fmi2GetVersion": (C.c_char_p, []),
            "fmi2GetTypesPlatform": (C.c_char_p, []),
        }
        for name, (res, args) in sigs.items():
            fn = getattr(L, name)
            fn.restype = res
            fn.argtypes = args

    def call(self, name, *args):
        st = getattr(self.lib, name)(self.c, *args)
        check(st == fmi2OK, "%s %s returned %d: %s" % (self.identifier, name, st, " | ".join(self.messages)))

    def setup(self):
        check(self.lib.fmi2GetVersion() == b"2.0", "fmi2GetVersion is not 2.0")
        check(self.lib.fmi2GetTypesPlatform() == b"default", "fmi2GetTypesPlatform is not default")
        self.call("fmi2SetupExperiment", 0, 0.0, 0.0, 0, 0.0)
        self.call("fmi2EnterInitializationMode")
        self.call("fmi2ExitInitializationMode")

    def get(self, names):
        n = len(names)
        vr = (C.c_uint * n)(*[self.vars[x] for x in names])
        val = (C.c_double * n)()
        self.call("fmi2GetReal", vr, n, val)
        return list(val)

    def set(self, names, values):
        n = len(names)
        vr = (C.c_uint * n)(*[self.vars[x] for x in names])
        self.call("fmi2SetReal", vr, n, (C.c_double * n)(*values))

    def set_derivative(self, names, order, values):
        n = len(names)
        vr = (C.c_uint * n)(*[self.vars[x] for x in names])
        self.call("fmi2SetRealInputDerivatives", vr, n, (C.c_int * n)(*([order] * n)), (C.c_double * n)(*values))

    def step(self, t, H):
        self.call("fmi2DoStep", t, H, 1)

    def get_state(self, s=None):
        p = C.c_void_p(s)
        self.call("fmi2GetFMUstate", C.byref(p))
        return p.value

    def set_state(self, s):
        self.call("fmi2SetFMUstate", C.c_void_p(s))

    def free_state(self, s):
        p = C.c_void_p(s)
        self.call("fmi2FreeFMUstate", C.byref(p))

    def serialize(self, s):
        size = C.c_size_t()
        self.call("fmi2SerializedFMUstateSize", C.c_void_p(s), C.byref(size))
        buf = C.create_string_buffer(size.value)
        self.call("fmi2SerializeFMUstate", C.c_void_p(s), buf, size.value)
        return buf.raw

    def deserialize(self, data):
        p = C.c_void_p(None)
        self.call("fmi2DeSerializeFMUstate", data, len(data), C.byref(p))
        return p.value

    def close(self):
        self.call("fmi2Terminate")
        self.lib.fmi2FreeInstance(self.c)
        self.c = None


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, "%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stderr.strip()))
    return r.stdout


def export(args, part, out, *opts):
    run([args.hymo, "fmu", args.model, "--part", part, *opts, "-o", out, "-q"])
    return out


def h5(path):
    import h5py
    import numpy as np
    with h5py.File(path, "r") as f:
        d = {k: np.array(f[k]) for k in ("time", "states/z", "states/zd", "states/p", "states/U", "actuators/s",
                                         "actuators/sd")}
        d["names_z"] = [x.decode() if isinstance(x, bytes) else str(x) for x in f["states/z"].attrs["names"]]
        d["names_p"] = [x.decode() if isinstance(x, bytes) else str(x) for x in f["states/p"].attrs["names"]]
        d["names_s"] = [x.decode() if isinstance(x, bytes) else str(x) for x in f["actuators/s"].attrs["names"]]
        d["names_U"] = [x.decode() if isinstance(x, bytes) else str(x) for x in f["states/U"].attrs["names"]]
    return d


def max_rel(a, b):
    import numpy as np
    a, b = np.asarray(a), np.asarray(b)
    scale = np.maximum(np.max(np.abs(b), axis=0), 1e-300)
    return float(np.max(np.abs(a - b) / scale)) if a.size else 0.0


def cmd_whole(args):
    fmu_path = export(args, "whole", os.path.join(args.work, "whole.fmu"), *args.extra)
    ref = os.path.join(args.work, "whole_ref.h5")
    run([args.hymo, "run", args.model, "-q", "--t-end", repr(args.t_end), "-o", ref, *args.extra])
    r = h5(ref)
    f = FMU(fmu_path, "whole", args.work)
    f.setup()
    dt = float(f.md.find("DefaultExperiment").get("stepSize"))
    nz, ns, npr, nu = (len(r["names_z"]), len(r["names_s"]), len(r["names_p"]), len(r["names_U"]))
    cols = ([j + ".z" for j in r["names_z"]] + [j + ".zd" for j in r["names_z"]] + [a + ".s" for a in r["names_s"]] +
            [a + ".sd" for a in r["names_s"]] + [v + ".p" for v in r["names_p"]] + [v + ".u" for v in r["names_U"]])
    rows = [f.get(cols)]
    n = len(r["time"]) - 1
    snaps = 0
    for k in range(n):
        if args.snapshot_every and k % args.snapshot_every == 0:  # taking a snapshot must not change the run
            f.free_state(f.get_state())
            snaps += 1
        f.step(k * dt, dt)
        rows.append(f.get(cols))
    f.close()
    # variable communication steps (1, 2, 3 dt, ...): the same engine steps
    g = FMU(fmu_path, "varstep", args.work)
    g.setup()
    k, j, var_ok, checked = 0, 0, True, 0
    while k < n:
        m = min(1 + j % 3, n - k)
        g.step(k * dt, m * dt)
        k += m
        j += 1
        checked += 1
        var_ok = var_ok and g.get(cols) == rows[k]
    g.close()
    check(var_ok, "whole: variable communication steps differ from steps of dt")
    import numpy as np
    got = np.array(rows)
    want = np.hstack([r["states/z"], r["states/zd"], r["actuators/s"], r["actuators/sd"], r["states/p"],
                      r["states/U"]])
    check(got.shape == want.shape, "whole: shape %s vs hymo run %s" % (got.shape, want.shape))
    err = max_rel(got, want)
    ident = bool(np.array_equal(got, want))
    print("whole: %d steps of %g s (t_end %g, %d fmi2GetFMUstate calls on the way): max relative difference to "
          "hymo run %.3g%s; %d variable communication steps (1-3 dt) bit-identical" %
          (n, dt, n * dt, snaps, err, " (bit-identical)" if ident else "", checked))
    check(err <= 1e-12, "whole: differs from hymo run by %.3g relative (> 1e-12)" % err)


def cmd_varstep(args):
    """whole with communication steps that are not whole multiples of its
    step dt (canHandleVariableCommunicationStepSize): H = 2.5 dt (three
    engine steps of H/3) and H = 0.4 dt (one of 0.4 dt), each against
    `hymo run --dt H/n` on the same grid; a mixed sequence of steps (2.5,
    1, 0.4, 3, 0.7 dt, ...) reaches its end time (the split parts:
    varstep_parts)."""
    import numpy as np
    fmu_path = export(args, "whole", os.path.join(args.work, "whole.fmu"), *args.extra)
    f = FMU(fmu_path, "probe", args.work)
    f.setup()
    dt = float(f.md.find("DefaultExperiment").get("stepSize"))
    f.close()
    worst = 0.0
    for factor, n in ((2.5, 3), (0.4, 1)):
        H = factor * dt
        h = H / n
        steps = int(round(args.t_end / H))
        ref = os.path.join(args.work, "run_%g.h5" % factor)
        run([args.hymo, "run", args.model, "-q", "--dt", repr(h), "--t-end", repr(steps * H), "-o", ref, *args.extra])
        r = h5(ref)
        cols = ([j + ".z" for j in r["names_z"]] + [j + ".zd" for j in r["names_z"]] + [a + ".s" for a in r["names_s"]] +
                [a + ".sd" for a in r["names_s"]] + [v + ".p" for v in r["names_p"]] + [v + ".u" for v in r["names_U"]])
        g = FMU(fmu_path, "var%g" % factor, args.work)
        g.setup()
        rows = [g.get(cols)]
        for k in range(steps):
            g.step(k * H, H)
            rows.append(g.get(cols))
        g.close()
        want = np.hstack([r["states/z"], r["states/zd"], r["actuators/s"], r["actuators/sd"], r["states/p"],
                          r["states/U"]])[::n]
        got = np.array(rows)
        check(got.shape == want.shape, "varstep %g dt: shape %s vs hymo run %s" % (factor, got.shape, want.shape))
        check(np.max(np.abs(r["time"][::n] - np.arange(steps + 1) * H)) <= 1e-9 * H,
              "varstep %g dt: hymo run's grid is not the communication points" % factor)
        err = max_rel(got, want)
        worst = max(worst, err)
        print("varstep: H = %g dt = %g s, %d steps (%d engine steps of %g s each): max relative difference to "
              "hymo run --dt %g: %.3g%s" % (factor, H, steps, n, h, h, err,
                                            " (bit-identical)" if np.array_equal(got, want) else ""))
        check(err <= args.tol, "varstep %g dt: differs from hymo run by %.3g relative (> %g)" % (factor, err, args.tol))
    g = FMU(fmu_path, "mixed", args.work)
    g.setup()
    t, j, pattern = 0.0, 0, (2.5, 1.0, 0.4, 3.0, 0.7, 2.0)
    while t < 0.5 - 1e-12:
        H = pattern[j % len(pattern)] * dt
        g.step(t, H)
        t += H
        j += 1
    vals = g.get(["time"])
    g.close()
    check(abs(vals[0] - t) <= 1e-9 * dt and all(math.isfinite(v) for v in vals),
          "varstep mixed: time %r after %d steps to %r" % (vals[0], j, t))
    print("varstep: mixed sequence of %d steps (%s dt, ...) reached t = %.9g s" %
          (j, ", ".join("%g" % x for x in pattern), vals[0]))


def extrapolation(ts, ys, t0):
    """Coefficients c_k of the polynomial through the points (ts, ys) in
    powers of tau = t - t0 (Vandermonde solve), for the derivatives
    d^k u / dt^k = k! c_k at t0."""
    import numpy as np
    tau = np.array(ts) - t0
    V = np.vander(tau, len(ts), increasing=True)
    return list(np.linalg.solve(V, np.array(ys)))


def cmd_jacobi(args):
    H = args.H
    p = args.order
    opts = ["--extrapolation", str(p), "--H", repr(H), "--hm", repr(H), *args.extra]
    mech, circuits, wires = part_fmus(args, opts)  # wired by name: an output drives the input of the same name
    ref = os.path.join(args.work, "cosim_ref.h5")
    run([args.hymo, "cosim", args.model, "-q", "--t-end", repr(args.t_end), "-o", ref, *opts])
    r = h5(ref)
    for f in [mech] + circuits:
        f.setup()
    n = int(round(args.t_end / H))
    zcols = [j + "" for j in r["names_z"]]
    import numpy as np
    rows_z, rows_s, rows_p = [], [], []

    def record():
        rows_z.append(mech.get(["z[%d]" % j for j in range(len(zcols))]))
        rows_s.append(mech.get([a + ".s" for a in r["names_s"]]))
        p = {}
        for c in circuits:
            for name in c.vars:
                if name.startswith("p[") and c.causality[name] == "local":
                    p[name] = c.get([name])[0]
        rows_p.append([p["p[%d]" % k] for k in range(len(r["names_p"]))])

    record()
    history = {}  # (fmu, output) -> latest values, newest first
    times = []
    for k in range(n):
        t = k * H
        times.insert(0, t)
        for to, inp, src, out in wires:  # Jacobi: every input from the outputs at t and before
            h = history.setdefault((id(src), out), [])
            if len(h) < len(times):
                h.insert(0, src.get([out])[0])
            del h[p + 1:]
        del times[p + 1:]
        for to, inp, src, out in wires:
            h = history[(id(src), out)]
            c = extrapolation(times[:len(h)], h, t)
            to.set([inp], [h[0]])
            for order in range(1, len(c)):
                to.set_derivative([inp], order, [c[order] * math.factorial(order)])
        for f in [mech] + circuits:
            f.step(t, H)
        record()
    for f in [mech] + circuits:
        f.close()
    got_z, got_s, got_p = np.array(rows_z), np.array(rows_s), np.array(rows_p)
    ez = max_rel(got_z, r["states/z"])
    es = max_rel(got_s, r["actuators/s"])
    ep = max_rel(got_p, r["states/p"])
    ident = np.array_equal(got_z, r["states/z"]) and np.array_equal(got_s, r["actuators/s"]) and np.array_equal(
        got_p, r["states/p"])
    print("jacobi: mechanics + %d circuit FMU(s), extrapolation order %d, %d steps of H = %g s: max relative "
          "difference to hymo cosim z %.3g, s %.3g, p %.3g%s" % (len(circuits), p, n, H, ez, es, ep,
                                                                 " (bit-identical)" if ident else ""))
    check(max(ez, es, ep) <= args.tol, "jacobi: differs from hymo cosim (> %g)" % args.tol)


def part_fmus(args, opts):
    """mechanics + every circuit FMU of args.model exported with opts, and the wires
    (to, input, from, output) connecting them by name."""
    mech = FMU(export(args, "mechanics", os.path.join(args.work, "mech.fmu"), *opts), "mechanics", args.work)
    circuits, covered = [], set()
    if "interface-model" in opts:  # one hydraulic subsystem for all circuits
        circuits.append(FMU(export(args, "circuit:all", os.path.join(args.work, "circ_all.fmu"), *opts), "all",
                            args.work))
        covered.update(x.split(".")[0] for x in mech.inputs)
    for inp in mech.inputs:  # every cylinder belongs to one circuit: export by cylinder name until all are covered
        cyl = inp.split(".")[0]
        if cyl in covered:
            continue
        c = FMU(export(args, "circuit:" + cyl, os.path.join(args.work, "circ_%s.fmu" % cyl), *opts), cyl, args.work)
        covered.update(x.split(".")[0] for x in c.inputs)
        circuits.append(c)
    wires = []
    for to in [mech] + circuits:
        for inp in to.inputs:
            src = [f for f in [mech] + circuits if inp in f.outputs and f is not to]
            check(len(src) == 1, "input %s of %s has %d sources" % (inp, to.identifier, len(src)))
            wires.append((to, inp, src[0], inp))
    return mech, circuits, wires


def hymo_poly_fit(ts, ys, t0):
    """Coefficients c_0..c_3 in powers of tau = t - t0 of the polynomial through (ts, ys) with
    hymo's own arithmetic (hymo_poly_fit, src/master/nodes.c): Newton divided differences in
    tau, expanded to monomials by Horner's scheme."""
    n = len(ts)
    tau, dd = [x - t0 for x in ts], list(ys)
    for j in range(1, n):
        for i in range(n - 1, j - 1, -1):
            dd[i] = (dd[i] - dd[i - 1]) / (tau[i] - tau[i - j])
    c = [0.0] * 4
    for i in range(n - 1, -1, -1):
        for k in range(3, 0, -1):
            c[k] = c[k - 1] - tau[i] * c[k]
        c[0] = -tau[i] * c[0] + dd[i]
    return c


def jacobi_run(mech, circuits, wires, steps, p, names_s, n_z, n_p, order_of=None, hymo_fit=False):
    """A Jacobi loop over the communication steps `steps`, pairs (t, H) (inputs: the Lagrange
    polynomial of order p through the sources' outputs at the last p + 1 points, at their
    own times); rows of z, s, p at every communication point and the final time.
    order_of(fmu): the order of that FMU's inputs instead of p.  hymo_fit: the points are
    dated as hymo's master dates them (0, then t + H of the step that produced them) and the
    polynomial is hymo's (hymo_poly_fit): its value at t by fmi2SetReal (not the latest
    output) and its derivatives by fmi2SetRealInputDerivatives."""
    rows_z, rows_s, rows_p = [], [], []
    order_of = order_of or (lambda f: p)
    keep = max([p] + [order_of(f) for f in [mech] + circuits])

    def record():
        rows_z.append(mech.get(["z[%d]" % j for j in range(n_z)]))
        rows_s.append(mech.get([a + ".s" for a in names_s]))
        pv = {}
        for c in circuits:
            for name in c.vars:
                if name.startswith("p[") and c.causality[name] == "local":
                    pv[name] = c.get([name])[0]
        rows_p.append([pv["p[%d]" % k] for k in range(n_p)])

    for f in [mech] + circuits:
        f.setup()
    record()
    history, times, t_point = {}, [], 0.0
    for t, H in steps:
        times.insert(0, t_point if hymo_fit else t)
        for to, inp, src, out in wires:
            h = history.setdefault((id(src), out), [])
            if len(h) < len(times):
                h.insert(0, src.get([out])[0])
            del h[keep + 1:]
        del times[keep + 1:]
        for to, inp, src, out in wires:
            n = min(len(history[(id(src), out)]), order_of(to) + 1)
            h = history[(id(src), out)][:n]
            if hymo_fit:
                c = hymo_poly_fit(times[:n], h, t)[:n]
                to.set([inp], [c[0]])
            else:
                c = extrapolation(times[:n], h, t)
                to.set([inp], [h[0]])
            for order in range(1, len(c)):
                to.set_derivative([inp], order, [c[order] * math.factorial(order)])
        for f in [mech] + circuits:
            f.step(t, H)
        t_point = t + H
        record()
    t_fmu = [f.get(["time"])[0] for f in [mech] + circuits]
    for f in [mech] + circuits:
        f.close()
    return rows_z, rows_s, rows_p, t_fmu


def cmd_varstep_parts(args):
    """mechanics + circuit FMUs (exported with h_m = 1 ms, h_h = 0.3 ms) with communication
    steps H = 2.5 h_m and 0.4 h_m, which are no whole multiples of either internal step, in a
    Jacobi loop, against `hymo cosim --H H --hm H/n_m --hh H/n_h` with n = ceil(H/h) (the
    internal steps the FMUs take); a mixed sequence of steps reaches its end time.  args.extra:
    further options of both (--mech-integrator index1, ...; every input gets the same order, which
    is not the protocol of --extrapolation interface-model: see cmd_interface_model)."""
    import numpy as np
    hm, hh, p = 1e-3, 3e-4, args.order
    opts = ["--extrapolation", str(p), "--H", repr(10 * hh), "--hm", repr(hm), "--hh", repr(hh), *args.extra]
    worst, ident_all = 0.0, True
    for factor in (2.5, 0.4):
        H = factor * hm
        n_m, n_h = math.ceil(H / hm - 1e-9), math.ceil(H / hh - 1e-9)
        steps = int(round(args.t_end / H))
        ref = os.path.join(args.work, "cosim_%g.h5" % factor)
        run([args.hymo, "cosim", args.model, "-q", "--t-end", repr(steps * H), "--extrapolation", str(p), "--H",
             repr(H), "--hm", repr(H / n_m), "--hh", repr(H / n_h), "-o", ref, *args.extra])
        r = h5(ref)
        mech, circuits, wires = part_fmus(args, opts)
        check(mech.md.find("CoSimulation").get("canHandleVariableCommunicationStepSize") == "true",
              "mechanics does not declare canHandleVariableCommunicationStepSize")
        rz, rs, rp, t_fmu = jacobi_run(mech, circuits, wires, [(k * H, H) for k in range(steps)], p, r["names_s"], len(r["names_z"]),
                                       len(r["names_p"]), hymo_fit=args.hymo_fit)
        got_z, got_s, got_p = np.array(rz), np.array(rs), np.array(rp)
        check(got_z.shape == r["states/z"].shape, "varstep_parts %g h_m: shape %s vs hymo cosim %s" %
              (factor, got_z.shape, r["states/z"].shape))
        check(np.max(np.abs(r["time"] - np.arange(steps + 1) * H)) <= 1e-9 * H,
              "varstep_parts %g h_m: hymo cosim's rows are not the communication points" % factor)
        check(max(abs(x - steps * H) for x in t_fmu) <= 1e-9 * H, "varstep_parts %g h_m: FMU times %r" % (factor, t_fmu))
        ez, es, ep = max_rel(got_z, r["states/z"]), max_rel(got_s, r["actuators/s"]), max_rel(got_p, r["states/p"])
        ident = [bool(np.array_equal(a, b)) for a, b in ((got_z, r["states/z"]), (got_s, r["actuators/s"]),
                                                        (got_p, r["states/p"]))]
        ident_all = ident_all and all(ident)
        worst = max(worst, ez, es, ep)
        print("varstep_parts: H = %g h_m = %g s, %d steps, mechanics %d step(s) of H/%d, %d circuit FMU(s) %d steps "
              "of H/%d each, extrapolation order %d: max relative difference to hymo cosim --hm H/%d --hh H/%d: "
              "z %.3g%s, s %.3g%s, p %.3g%s" %
              (factor, H, steps, n_m, n_m, len(circuits), n_h, n_h, p, n_m, n_h,
               ez, " (bit-identical)" if ident[0] else "", es, " (bit-identical)" if ident[1] else "",
               ep, " (bit-identical)" if ident[2] else ""))
        check(max(ez, es, ep) <= args.tol, "varstep_parts %g h_m: differs from hymo cosim by %.3g relative (> %g)" %
              (factor, max(ez, es, ep), args.tol))
        # the same loop with FMUs whose internal steps are H/n_m and H/n_h (no re-division): the same
        # internal steps and input times, so bit-identical whatever the extrapolation order
        fixed = ["--extrapolation", str(p), "--H", repr(H), "--hm", repr(H / n_m), "--hh", repr(H / n_h), *args.extra]
        mech, circuits, wires = part_fmus(args, fixed)
        fz, fs, fp, _ = jacobi_run(mech, circuits, wires, [(k * H, H) for k in range(steps)], p, r["names_s"],
                                   len(r["names_z"]), len(r["names_p"]), hymo_fit=args.hymo_fit)
        check(fz == rz and fs == rs and fp == rp, "varstep_parts %g h_m: differs from FMUs exported with h_m = H/%d, "
              "h_h = H/%d by %.3g relative in p" % (factor, n_m, n_h, max_rel(np.array(rp), np.array(fp))))
        print("varstep_parts: H = %g h_m: bit-identical to FMUs exported with h_m = H/%d, h_h = H/%d" %
              (factor, n_m, n_h))
    # a mixed sequence of steps (2.5, 1, 0.4, 3, 0.7, 2 h_m, ...) to 1.6 s (crane1 moves from 1 s on), inputs
    # extrapolated linearly (order 1: the inputs' times inside the re-divided steps matter), against a fine
    # hymo cosim (H = h_m = h_h = 0.1 ms, order 1) interpolated at its communication points: the co-simulation
    # error of the mixed steps
    T_mixed = 1.6
    pattern, seq, t = (2.5, 1.0, 0.4, 3.0, 0.7, 2.0), [], 0.0
    while t < T_mixed - 1e-12:
        seq.append((t, pattern[len(seq) % len(pattern)] * hm))
        t += seq[-1][1]
    fine = os.path.join(args.work, "cosim_fine.h5")
    run([args.hymo, "cosim", args.model, "-q", "--t-end", repr(T_mixed + 0.1), "--extrapolation", "1", "--H", "1e-4",
         "--hm", "1e-4", "--hh", "1e-4", "-o", fine, *args.extra])
    r = h5(fine)
    mech, circuits, wires = part_fmus(args, opts)
    rz, rs, rp, t_fmu = jacobi_run(mech, circuits, wires, seq, 1, r["names_s"], len(r["names_z"]), len(r["names_p"]),
                                   hymo_fit=args.hymo_fit)
    check(all(abs(x - t) <= 1e-9 * hm for x in t_fmu), "varstep_parts mixed: FMU times %r after %d steps to %r" %
          (t_fmu, len(seq), t))
    check(all(math.isfinite(v) for row in rz + rs + rp for v in row), "varstep_parts mixed: a value is not finite")
    times = np.array([0.0] + [a + b for a, b in seq])
    errs = []
    for got, key, bound in ((rz, "states/z", 1e-3), (rs, "actuators/s", 1e-3), (rp, "states/p", 0.1)):
        g = np.array(got)
        want = np.array([np.interp(times, r["time"], r[key][:, j]) for j in range(g.shape[1])]).T
        errs.append(max_rel(g, want))
        check(errs[-1] <= bound, "varstep_parts mixed: %s differs from hymo cosim at H = 0.1 ms by %.3g relative "
              "(> %g)" % (key, errs[-1], bound))
    print("varstep_parts: mixed sequence of %d steps (%s h_m, ...), order 1: mechanics and %d circuit FMU(s) reached "
          "t = %.9g s; vs hymo cosim at H = 0.1 ms: z %.3g, s %.3g, p %.3g relative (bounds 1e-3, 1e-3, 0.1)" %
          (len(seq), ", ".join("%g" % x for x in pattern), len(circuits), t_fmu[0], *errs))
    # a bad step is still an error: H <= 0, or t not the FMU's time
    mech, circuits, wires = part_fmus(args, opts)
    for f in [mech] + circuits:
        f.setup()
        for t0, H, text in ((0.0, 0.0, "must be positive"), (0.0, -hm, "must be positive"),
                            (hm, 2.5 * hm, "is not the FMU's time")):
            f.messages.clear()
            st = f.lib.fmi2DoStep(f.c, C.c_double(t0), C.c_double(H), 1)
            check(st == fmi2Error and text in " ".join(f.messages),
                  "%s: fmi2DoStep(%g, %g) gave status %d (%r), not fmi2Error (%s)" %
                  (f.identifier, t0, H, st, f.messages, text))
            f.call("fmi2Reset")
            f.setup()
        f.close()
    print("varstep_parts: H = 0, H = -h_m and a step from another time are fmi2Error (mechanics and every circuit)")


def cmd_interface_model(args):
    """mechanics + circuit:all exported with --extrapolation interface-model in a Jacobi loop
    against `hymo cosim --extrapolation interface-model` (the same options, args.extra too):
    H = args.H with h_m = H, h_h = 0.1 ms (whole multiples), and H = 2.5 h_m, 0.4 h_m with
    FMUs exported with h_m = 1 ms, h_h = 0.3 ms (re-divided steps) against `hymo cosim --hm
    H/n_m --hh H/n_h`.  The protocol hymo's master follows (docs/fmi.md, "The interface
    model"): the circuits' inputs (s, sd, G, a0) are held (order 0); the mechanics' inputs are
    extrapolated linearly (order 1; held with --mech-inputs hold) through the last two points,
    dated as hymo dates them and fitted with hymo's arithmetic.  Two variants of the master at
    whole multiples show what matters: the mechanics' inputs held, and order 1 with the
    master's own arithmetic."""
    import numpy as np
    hold = "--mech-inputs" in args.extra and args.extra[args.extra.index("--mech-inputs") + 1] == "hold"
    m_order = 0 if hold else 1
    worst = 0.0

    def loop(opts, r, steps, H, order_of, hymo_fit):
        want = (r["states/z"], r["actuators/s"], r["states/p"])
        mech, circuits, wires = part_fmus(args, opts)
        check(len(circuits) == 1 and any(x.startswith("G[") for x in circuits[0].inputs),
              "interface_model: expected one circuit:all FMU with G inputs, got %d circuit FMU(s)" % len(circuits))
        got = jacobi_run(mech, circuits, wires, [(k * H, H) for k in range(steps)], 0, r["names_s"],
                         len(r["names_z"]), len(r["names_p"]), order_of=lambda f: order_of(f, mech),
                         hymo_fit=hymo_fit)[:3]
        got = [np.array(g) for g in got]
        check(all(g.shape == w.shape for g, w in zip(got, want)), "interface_model: shapes %s vs hymo cosim %s" %
              ([g.shape for g in got], [w.shape for w in want]))
        rel = [max_rel(g, w) for g, w in zip(got, want)]
        bad = np.nonzero(np.any(np.hstack([g != w for g, w in zip(got, want)]), axis=1))[0]
        return rel, (r["time"][bad[0]] if len(bad) else None)

    def line(rel, first):
        return "z %.3g, s %.3g, p %.3g relative%s" % (*rel, " (bit-identical)" if first is None else
                                                        ", first difference at t = %.9g s" % first)

    for H, hm, hh in ((args.H, args.H, 1e-4), (2.5e-3, 1e-3, 3e-4), (0.4e-3, 1e-3, 3e-4)):
        n_m, n_h = math.ceil(H / hm - 1e-9), math.ceil(H / hh - 1e-9)
        steps = int(round(args.t_end / H))
        ref = os.path.join(args.work, "cosim_im_%g.h5" % H)
        run([args.hymo, "cosim", args.model, "-q", "--t-end", repr(steps * H), "--extrapolation", "interface-model",
             "--H", repr(H), "--hm", repr(H / n_m), "--hh", repr(H / n_h), "-o", ref, *args.extra])
        r = h5(ref)
        opts = ["--extrapolation", "interface-model", "--H", repr(H if hm == H else 10 * hh), "--hm", repr(hm),
                "--hh", repr(hh), *args.extra]
        rel, first = loop(opts, r, steps, H, lambda f, mech: m_order if f is mech else 0, True)
        worst = max(worst, *rel)
        print("interface_model: mechanics (h_m = %g s) + circuit:all (h_h = %g s), %d steps of H = %g s "
              "(%d and %d internal steps), circuit inputs held, mechanics' inputs order %d by hymo's fit: vs hymo "
              "cosim --hm H/%d --hh H/%d %s" % (hm, hh, steps, H, n_m, n_h, m_order, n_m, n_h, line(rel, first)))
        check(max(rel) <= args.tol, "interface_model: H = %g s differs from hymo cosim by %.3g relative (> %g)" %
              (H, max(rel), args.tol))
        if H == args.H and not hold:
            rel0, first0 = loop(opts, r, steps, H, lambda f, mech: 0, True)
            print("interface_model: H = %g s with the mechanics' inputs held: %s" % (H, line(rel0, first0)))
            check(first0 is not None, "interface_model: holding the mechanics' inputs does not change the run")
            rel1, first1 = loop(opts, r, steps, H, lambda f, mech: 1 if f is mech else 0, False)
            print("interface_model: H = %g s, order 1 with the master's own fit (latest output, times k H): %s" %
                  (H, line(rel1, first1)))


STATISTICS = {"steps", "newton_iterations_total", "newton_iterations_max", "jacobian_evaluations", "reselections",
              "peak_drift", "max_work", "max_constraint_position", "max_constraint_velocity",
              "max_constraint_acceleration", "rhs_evaluations", "newton_iterations", "jacobians", "residual_norm"}


def h5_all(path):
    """Every dataset of a result file: name -> array, and name -> column names."""
    import h5py
    import numpy as np
    data, names = {}, {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                data[name] = np.array(obj)
                if "names" in obj.attrs:
                    names[name] = [x.decode() if isinstance(x, bytes) else str(x) for x in obj.attrs["names"]]
        f.visititems(visit)
    return data, names


def column_map(data, names, table):
    """FMU variable name -> (dataset, column or None) for the Real variables
    the result file also holds: table lists (suffix or name, dataset)."""
    out = {}
    for key, ds in table:
        if ds not in data:
            continue
        if key.startswith("."):  # <column name><key>
            for j, n in enumerate(names.get(ds, [])):
                out[n + key] = (ds, j)
        elif key.endswith("[]"):  # <key>[j]
            for j in range(data[ds].shape[1]):
                out["%s[%d]" % (key[:-2], j)] = (ds, j)
        else:
            out[key] = (ds, None)
    return out


def check_getters(f, values_at, row, label, k):
    """Every Real variable of f read one at a time and all at once (in
    reverse order) against the file's row: returns the names checked."""
    names = [n for n in f.vars if n in values_at]
    one = [f.get([n])[0] for n in names]
    rev = f.get(names[::-1])[::-1]
    check(one == rev, "%s step %d: fmi2GetReal of one variable differs from a call with all of them" % (label, k))
    bad = []
    for n, v in zip(names, one):
        ds, j = values_at[n]
        want = row[ds] if j is None else row[ds][j]
        if not (v == want or (v != v and want != want)):
            bad.append("%s = %.17g, file %s%s = %.17g" % (n, v, ds, "" if j is None else "[%d]" % j, want))
    check(not bad, "%s step %d: %s" % (label, k, "; ".join(bad[:4])))
    return names


def cmd_getters(args):
    """Every Real variable of the whole FMU (outputs and locals) against
    `hymo run`'s file, and of the mechanics and circuit FMUs in a Jacobi
    loop (inputs held) against `hymo cosim`'s file, bit for bit, at every
    communication point; each read alone and all in one call."""
    import numpy as np
    # whole
    fmu_path = export(args, "whole", os.path.join(args.work, "get_whole.fmu"))
    ref = os.path.join(args.work, "get_whole.h5")
    run([args.hymo, "run", args.model, "-q", "--t-end", repr(args.t_end), "-o", ref])
    data, names = h5_all(ref)
    table = [(".z", "states/z"), (".zd", "states/zd"), (".zdd", "states/zdd"), (".s", "actuators/s"),
             (".sd", "actuators/sd"), (".F", "actuators/force"), (".p", "states/p"), (".u", "states/U"),
             ("time", "time"), ("kinetic_energy", "energy/kinetic"), ("potential_energy", "energy/potential"),
             ("energy_drift", "energy/drift"), ("newton_iterations", "solver/iterations")]
    cmap = column_map(data, names, table)
    data["steps"] = np.arange(len(data["time"]), dtype=float)
    data["newton_iterations_total"] = np.cumsum(data["solver/iterations"]).astype(float)
    cmap["steps"] = ("steps", None)
    cmap["newton_iterations_total"] = ("newton_iterations_total", None)
    f = FMU(fmu_path, "whole", args.work)
    f.setup()
    dt = float(f.md.find("DefaultExperiment").get("stepSize"))
    n = len(data["time"]) - 1
    checked = set()
    for k in range(n + 1):
        if k:
            f.step((k - 1) * dt, dt)
        row = {ds: data[ds][k] for ds, _ in cmap.values()}
        checked.update(check_getters(f, cmap, row, "whole", k))
    f.close()
    reals = [v for v in f.vars if f.causality[v] != "input"]
    unchecked = sorted(set(reals) - checked)
    print("getters: whole: %d variables at %d communication points bit-identical to hymo run (unchecked: %s)" %
          (len(checked), n + 1, ", ".join(unchecked)))
    check(len(checked) >= len(reals) - 4, "whole: only %d of %d variables checked" % (len(checked), len(reals)))
    # mechanics + circuits
    H = args.H
    opts = ["--extrapolation", "0", "--H", repr(H), "--hm", repr(H)]
    mech = FMU(export(args, "mechanics", os.path.join(args.work, "get_mech.fmu"), *opts), "mechanics", args.work)
    cyl = sorted({x.split(".")[0] for x in mech.inputs})
    circuits = []
    covered = set()
    for c_name in cyl:
        if c_name in covered:
            continue
        c = FMU(export(args, "circuit:" + c_name, os.path.join(args.work, "get_c_%s.fmu" % c_name), *opts), c_name,
                args.work)
        covered.update(x.split(".")[0] for x in c.inputs)
        circuits.append(c)
    check(len(circuits) == 1, "getters: one circuit expected (p[j] are the model's volumes)")
    ref = os.path.join(args.work, "get_cosim.h5")
    run([args.hymo, "cosim", args.model, "-q", "--t-end", repr(args.t_end), "-o", ref, *opts])
    data, names = h5_all(ref)
    chamber = {}
    for j, nm in enumerate(names["cosim/signals/chamber_pressure"]):
        a, side = nm.split(".")
        chamber["%s.p_%s" % (a, side)] = ("cosim/signals/chamber_pressure", j)
    mtable = [("z[]", "states/z"), ("zd[]", "states/zd"), ("zdd[]", "states/zdd"), ("s[]", "actuators/s"),
              ("sd[]", "actuators/sd"), ("force[]", "actuators/force"), ("work[]", "actuators/work"),
              (".s", "actuators/s"), (".sd", "actuators/sd"), (".sdd", "cosim/signals/sdd"), ("time", "time"),
              ("kinetic_energy", "energy/kinetic"), ("potential_energy", "energy/potential"),
              ("energy_drift", "energy/drift")]
    # (a circuit's time is its own sum of sub-steps: 0.010000000000000002 for 0.01)
    ctable = [("p[]", "states/p"), ("u[]", "states/U"), ("sd_input[]", "cosim/signals/sd_hydraulic_input")]
    mmap = column_map(data, names, mtable)
    # running figures of the mechanics (one step of h_m = H per communication step)
    data["steps"] = np.arange(len(data["time"]), dtype=float)
    data["peak_drift"] = np.maximum.accumulate(np.abs(data["energy/drift"]))
    data["max_work"] = np.maximum.accumulate(np.abs(np.sum(data["actuators/work"], axis=1)))
    for key in ("steps", "peak_drift", "max_work"):
        mmap[key] = (key, None)
    cmaps = [dict(column_map(data, names, ctable), **chamber) for _ in circuits]
    for f in [mech] + circuits:
        f.setup()
    wires = []
    for to in [mech] + circuits:
        for inp in to.inputs:
            src = [f for f in [mech] + circuits if inp in f.outputs and f is not to]
            check(len(src) == 1, "input %s of %s has %d sources" % (inp, to.identifier, len(src)))
            wires.append((to, inp, src[0]))
    n = int(round(args.t_end / H))
    checked = {id(f): set() for f in [mech] + circuits}
    for k in range(n + 1):
        if k:
            vals = [(to, inp, src.get([inp])[0]) for to, inp, src in wires]
            for to, inp, v in vals:
                to.set([inp], [v])
            for f in [mech] + circuits:
                f.step((k - 1) * H, H)
        row = {ds: data[ds][k] for ds in data if data[ds].shape[:1] == data["time"].shape}
        checked[id(mech)].update(check_getters(mech, mmap, row, "mechanics", k))
        for c, cm in zip(circuits, cmaps):
            checked[id(c)].update(check_getters(c, cm, row, c.identifier, k))
    for f in [mech] + circuits:
        f.close()
        reals = [v for v in f.vars if f.causality[v] != "input"]
        got = checked[id(f)]
        print("getters: %s: %d variables at %d communication points bit-identical to hymo cosim (unchecked: %s)" %
              (f.identifier, len(got), n + 1, ", ".join(sorted(set(reals) - got))))
        check(len(got) >= len([v for v in reals if v.split("[")[0] not in STATISTICS]) - 2,
              "%s: only %d of %d variables checked" % (f.identifier, len(got), len(reals)))


def cmd_state(args):
    parts = [("whole", ["--part", "whole"]), ("mechanics", ["--part", "mechanics"])]
    mech = FMU(export(args, "mechanics", os.path.join(args.work, "st_mech.fmu")), "m", args.work)
    cyl = mech.inputs[0].split(".")[0]
    mech.lib.fmi2FreeInstance(mech.c)
    parts.append(("circuit:" + cyl, []))
    for part, _ in parts:
        f = FMU(export(args, part, os.path.join(args.work, "st_%s.fmu" % part.replace(":", "_")),
                       *(args.extra if part == "whole" else [])), part, args.work)
        f.setup()
        dt = float(f.md.find("DefaultExperiment").get("stepSize"))
        H = 10 * dt if part.startswith("circuit") else dt
        # outputs and states; the split parts' run statistics (counters and running
        # maxima) are not part of their snapshot (docs/fmi.md), whole's are
        # (with IDA, src/engine/ida.c's per-step counters are wrong after a restart: its baselines
        # nni0/nje0 are not reset by IDAReInit; not part of the check)
        stats = set() if part == "whole" and "ida" not in args.extra else STATISTICS
        names = f.outputs + [n for n, c in f.causality.items()
                             if c == "local" and n != "independent" and n not in stats]
        # inputs moving (mechanics, circuit): u = start (1 + 0.05 sin 2 pi t) + 0.01 sin 2 pi t, value and
        # first derivative at each step start; whole follows its signal table (moving from t = 1 s)
        start = [float(sv[0].get("start")) for sv in f.md.find("ModelVariables") if sv.get("causality") == "input"]

        def drive(t):
            if part == "whole":
                return
            w = 2 * math.pi
            f.set(f.inputs, [u * (1 + 0.05 * math.sin(w * t)) + 0.01 * math.sin(w * t) for u in start])
            f.set_derivative(f.inputs, 1, [(0.05 * u + 0.01) * w * math.cos(w * t) for u in start])

        # some steps first, so that the state has a history and moves
        k0 = int(round((1.2 if part == "whole" else 0.3) / H))
        for k in range(k0):
            drive(k * H)
            f.step(k * H, H)
        t = k0 * H
        s = f.get_state()
        drive(t)
        f.step(t, H)
        first = f.get(names)
        drive(t + H)
        f.step(t + H, H)
        second = f.get(names)
        f.set_state(s)
        check(f.get(["time"])[0] == t, "%s: time not restored" % part)
        drive(t)
        f.step(t, H)
        again = f.get(names)
        drive(t + H)
        f.step(t + H, H)
        again2 = f.get(names)
        moved = [n for n, a, b in zip(names, first, second) if a != b]
        check(len(moved) > len(names) // 3, "%s: the state does not move (%d of %d variables)" % (part, len(moved),
                                                                                                 len(names)))
        bad = [n for n, a, b in zip(names, first + second, again + again2) if not (a == b or (a != a and b != b))]
        check(not bad, "%s: retried steps differ in %s" % (part, ", ".join(bad[:5])))
        data = f.serialize(s)
        s2 = f.deserialize(data)
        f.set_state(s2)
        drive(t)
        f.step(t, H)
        again3 = f.get(names)
        bad = [n for n, a, b in zip(names, first, again3) if not (a == b or (a != a and b != b))]
        check(not bad, "%s: step after deserialize differs in %s" % (part, ", ".join(bad[:5])))
        f.free_state(s)
        f.free_state(s2)
        f.close()
        print("state: %s: at t = %g s, two retried steps after fmi2SetFMUstate bit-identical (%d variables, %d "
              "moving), also through serialize (%d bytes)" % (part, t, len(names), len(moved), len(data)))


def cmd_inputs(args):
    fmu_path = export(args, "whole", os.path.join(args.work, "in_whole.fmu"))
    import numpy as np
    f0 = FMU(fmu_path, "free", args.work)
    f1 = FMU(fmu_path, "driven", args.work)
    f2 = FMU(fmu_path, "other", args.work)
    for f in (f0, f1, f2):
        f.setup()
    dt = float(f0.md.find("DefaultExperiment").get("stepSize"))
    inp = f0.inputs
    check(inp, "whole FMU has no inputs")
    outs = f0.outputs
    # the model's signal as f0 reports it (it follows the table): value at t+ and at t + dt
    n = int(round(args.t_end / dt))
    diff, moved = 0.0, 0.0
    for k in range(n):
        t = k * dt
        u0 = f0.get(inp)
        f0.step(t, dt)
        u1 = f0.get(inp)
        f1.set(inp, u0)
        f1.set_derivative(inp, 1, [(b - a) / dt for a, b in zip(u0, u1)])
        f1.step(t, dt)
        f2.set(inp, [a + 1.0 for a in u0])
        f2.step(t, dt)
        y0, y1, y2 = np.array(f0.get(outs)), np.array(f1.get(outs)), np.array(f2.get(outs))
        scale = np.maximum(np.abs(y0), 1e-3)
        diff = max(diff, float(np.max(np.abs(y1 - y0) / scale)))
        moved = max(moved, float(np.max(np.abs(y2 - y0) / scale)))
    for f in (f0, f1, f2):
        f.close()
    print("inputs: %d steps: driven by the master with the model's signal: max relative difference %.3g; "
          "signal + 1: %.3g" % (n, diff, moved))
    check(diff <= 1e-9, "inputs: the driven FMU differs from the model's signal run by %.3g" % diff)
    check(moved > 1e-6, "inputs: a different input did not change the outputs")


def cmd_flow_inputs(args):
    """A model whose signals drive a pump's speed (engine) and a flow control
    valve's set flow (command): tests/models/pump_signal_line.yaml."""
    import numpy as np
    text = open(args.model).read()
    engine = ("    points: [[0, 0.4], [0.02, 0.4], [0.12, 1.0], [0.3, 1.0], [0.3, 0.6], [0.4, 0.6]]\n"
              "    clamp: [0, 0.85]")
    command = "    points: [[0, 0.5], [0.2, 0.5], [0.2, 1.0], [0.4, 1.0]]"
    check(engine in text and command in text, "flow_inputs: %s is not pump_signal_line.yaml" % args.model)

    def variant(name, eng, cmd):
        path = os.path.join(args.work, name + ".yaml")
        with open(path, "w") as f:
            f.write(text.replace(engine, "    points: " + eng).replace(command, "    points: " + cmd))
        return path

    # stepped: both tables step at 0.2 s (engine 0.85 -> 0.6 after its ramp, command 0.5 -> 1.0); held: the same
    # tables without those steps (engine also steps at t = 0, 0.1 -> 0.4: start = the right limit).  The engine's
    # clamp is dropped (its ramp ends at 0.85): a table step out of the clamp's bound adds an event (the clamp's
    # switch) to `hymo run` that an input set from outside, which replaces the clamped signal, does not have
    # (measured 3.5e-6 relative with the clamp kept)
    stepped = variant("stepped", "[[0, 0.4], [0.02, 0.4], [0.12, 0.85], [0.2, 0.85], [0.2, 0.6], [0.4, 0.6]]",
                      "[[0, 0.5], [0.2, 0.5], [0.2, 1.0], [0.4, 1.0]]")
    held = variant("held", "[[0, 0.1], [0, 0.4], [0.02, 0.4], [0.12, 0.85], [0.4, 0.85]]", "[[0, 0.5], [0.4, 0.5]]")
    want_start = {"engine": 0.4, "command": 0.5}
    want_desc = {"engine": "speed factor of pump pump1", "command": "set-flow factor of flow control valve fc1"}

    def described(fmu_path, label):
        f = FMU(fmu_path, label, args.work)
        check(sorted(f.inputs) == ["command", "engine"], "flow_inputs: %s: inputs %s, want engine and command (the "
              "signals of the pump's speed and the set flow)" % (label, f.inputs))
        for sv in f.md.find("ModelVariables"):
            name, real = sv.get("name"), sv.find("Real")
            if name not in want_start:
                continue
            check(float(real.get("start")) == want_start[name], "flow_inputs: %s: %s start %s, want %r (the table at "
                  "t = 0, right limit)" % (label, name, real.get("start"), want_start[name]))
            check(real.get("min") == "0" and real.get("unit") is None, "flow_inputs: %s: %s min %s unit %s, want min 0, "
                  "no unit (a factor)" % (label, name, real.get("min"), real.get("unit")))
            check(sv.get("description") == want_desc[name], "flow_inputs: %s: %s description '%s', want '%s'" %
                  (label, name, sv.get("description"), want_desc[name]))
        return f

    def reference(model, label):
        out = os.path.join(args.work, label + ".h5")
        run([args.hymo, "run", model, "-q", "-o", out, *args.extra])
        r = h5(out)
        cols = ([j + ".z" for j in r["names_z"]] + [j + ".zd" for j in r["names_z"]] + [v + ".p" for v in r["names_p"]])
        return cols, np.hstack([r["states/z"], r["states/zd"], r["states/p"]])

    def drive(f, cols, n, dt, at=None):
        f.setup()
        rows = [f.get(cols)]
        for k in range(n):
            if at is not None and k == at:
                f.set(["engine", "command"], [0.6, 1.0])
            f.step(k * dt, dt)
            rows.append(f.get(cols))
        f.close()
        return np.array(rows)

    # untouched: the original model's FMU is its `hymo run`
    f = described(export(args, "whole", os.path.join(args.work, "flow.fmu"), *args.extra), "untouched")
    dt = float(f.md.find("DefaultExperiment").get("stepSize"))
    cols, want = reference(args.model, "flow_ref")
    n = len(want) - 1
    got = drive(f, cols, n, dt)
    e_free = max_rel(got, want)
    # driven: the held model's FMU, set at 0.2 s through fmi2SetReal, is the stepped model's `hymo run`
    model = args.model
    args.model = held
    held_fmu = export(args, "whole", os.path.join(args.work, "held.fmu"), *args.extra)
    args.model = model
    cols2, want2 = reference(stepped, "stepped_ref")
    at = int(round(0.2 / dt))
    got2 = drive(described(held_fmu, "held"), cols2, len(want2) - 1, dt, at)
    # relative to each column's largest value, at least 1e-6 (the pendulum hangs at rest: its zd is round-off,
    # |zd| <= 3.4e-16 rad/s, and IDA's runs differ there by 1.4e-19 rad/s)
    e_set = float(np.max(np.abs(got2 - want2) / np.maximum(np.max(np.abs(want2), axis=0), 1e-6)))
    # the held model left alone stays away from the stepped run after 0.2 s (the set values matter)
    _, want_held = reference(held, "held_ref")
    moved = max_rel(want_held[at + 1:], want2[at + 1:])
    # a negative factor is refused (min="0")
    g = FMU(held_fmu, "negative", args.work)
    g.setup()
    st = g.lib.fmi2SetReal(g.c, (C.c_uint * 1)(g.vars["engine"]), 1, (C.c_double * 1)(-0.1))
    g.lib.fmi2FreeInstance(g.c)
    print("flow_inputs: %d steps of %g s: untouched vs hymo run max relative difference %.3g%s; engine = 0.6, "
          "command = 1.0 set at %g s vs tables stepping there: %.3g%s (held tables: %.3g away); negative factor: "
          "status %d" % (n, dt, e_free, " (bit-identical)" if np.array_equal(got, want) else "", at * dt, e_set,
                         " (bit-identical)" if np.array_equal(got2, want2) else "", moved, st))
    # measured: untouched bit-identical (trapezoidal and IDA); set at 0.2 s: trapezoidal bit-identical (a value
    # set between steps is a table step at the step start: --tol 0), IDA 2.8e-12 in Vp.p (already before 0.2 s:
    # IDA shortens its steps ahead of the table's step, which the run of the held tables does not have)
    check(np.array_equal(got, want), "flow_inputs: the untouched FMU differs from hymo run by %.3g relative" % e_free)
    check(np.array_equal(got2, want2) if args.tol == 0 else e_set <= args.tol, "flow_inputs: the FMU with inputs "
          "set at 0.2 s differs from the stepped tables' run by %.3g relative (allowed: %g)" % (e_set, args.tol))
    check(moved > 1e-3, "flow_inputs: the stepped and held tables' runs differ by only %.3g" % moved)
    check(st == fmi2Error, "flow_inputs: fmi2SetReal of a negative speed factor returned %d, want fmi2Error" % st)


def cmd_errors(args):
    """Misuse of an FMU: fmi2Error (or NULL) and a logged message naming the FMU and the time."""
    path = export(args, "whole", os.path.join(args.work, "err_whole.fmu"))
    f = FMU(path, "err", args.work)
    ident = f.identifier
    f.setup()
    dt = float(f.md.find("DefaultExperiment").get("stepSize"))
    f.step(0.0, dt)
    cases = [
        ("fmi2DoStep", lambda: f.lib.fmi2DoStep(f.c, dt, -dt, 1), "must be positive"),
        ("fmi2DoStep", lambda: f.lib.fmi2DoStep(f.c, 5 * dt, dt, 1), "is not the FMU's time"),
        ("fmi2GetReal", lambda: f.lib.fmi2GetReal(f.c, (C.c_uint * 1)(99999), 1, (C.c_double * 1)()),
         "unknown value reference"),
        ("fmi2SetReal", lambda: f.lib.fmi2SetReal(f.c, (C.c_uint * 1)(f.vars[f.outputs[0]]), 1,
                                                  (C.c_double * 1)(1.0)), "is not an input"),
        ("fmi2SetRealInputDerivatives", lambda: f.lib.fmi2SetRealInputDerivatives(
            f.c, (C.c_uint * 1)(f.vars[f.inputs[0]]), 1, (C.c_int * 1)(4), (C.c_double * 1)(1.0)),
         "derivative order 4"),
        ("fmi2GetDerivatives", lambda: f.lib.fmi2GetDerivatives(C.c_void_p(f.c), (C.c_double * 1)(), C.c_size_t(1)),
         "model exchange"),
        ("fmi2GetRealOutputDerivatives", lambda: f.lib.fmi2GetRealOutputDerivatives(
            C.c_void_p(f.c), (C.c_uint * 1)(0), C.c_size_t(1), (C.c_int * 1)(1), (C.c_double * 1)()),
         "not supported"),
    ]
    snap = f.get_state()
    for name, call, text in cases:
        f.messages.clear()
        st = call()
        check(st == fmi2Error, "%s: status %d, expected fmi2Error" % (name, st))
        msg = " ".join(f.messages)
        check(ident in msg and "t = " in msg and text in msg, "%s: message %r" % (name, msg))
        # the error state: a good step is refused until fmi2SetFMUstate
        f.messages.clear()
        st = f.lib.fmi2DoStep(f.c, dt, dt, 1)
        msg = " ".join(f.messages)
        check(st == fmi2Error and "fmi2DoStep" in msg and "error state" in msg,
              "after %s: a good fmi2DoStep gave status %d, message %r" % (name, st, msg))
        f.set_state(snap)
    # a good step works after fmi2SetFMUstate
    f.step(dt, dt)
    f.free_state(snap)
    f.close()
    n_state = error_state(args, path, dt)
    # wrong GUID: no instance, a message
    lib = C.CDLL(os.path.join(f.dir, "binaries", "linux64", ident + ".so"))
    lib.fmi2Instantiate.restype = C.c_void_p
    lib.fmi2Instantiate.argtypes = [C.c_char_p, C.c_int, C.c_char_p, C.c_char_p, C.c_void_p, C.c_int, C.c_int]
    msgs = []
    logger = LOGGER(lambda e, i, st, cat, m: msgs.append(m.decode()))
    cb = CallbackFunctions(logger, ALLOC(0), FREE(0), STEPFINISHED(0), None)
    uri = ("file://" + os.path.join(f.dir, "resources")).encode()
    c = lib.fmi2Instantiate(b"x", fmi2CoSimulation, b"{00000000-0000-0000-0000-000000000000}", uri, C.byref(cb), 0, 0)
    check(not c and any("GUID" in m and ident in m for m in msgs), "wrong GUID accepted: %r" % msgs)
    msgs.clear()
    c = lib.fmi2Instantiate(b"x", 0, f.guid.encode(), uri, C.byref(cb), 0, 0)
    check(not c and any("model exchange" in m for m in msgs), "model exchange instantiated: %r" % msgs)
    msgs.clear()
    c = lib.fmi2Instantiate(b"x", fmi2CoSimulation, f.guid.encode(), b"file:///nonexistent/dir", C.byref(cb), 0, 0)
    check(not c and any("options.txt" in m for m in msgs), "missing resources accepted: %r" % msgs)
    print("errors: %d misuses refused with fmi2Error and a message naming %s and the time, each followed by a "
          "refused fmi2DoStep until fmi2SetFMUstate; wrong GUID, model exchange and missing resources refused by "
          "fmi2Instantiate; error state: %d calls refused, outputs unchanged, fmi2Reset + %d steps bit-identical "
          "to a fresh instance" % (len(cases), ident, n_state, ERROR_STATE_STEPS))


ERROR_STATE_STEPS = 30


def error_state(args, path, dt):
    """The FMI 2.0 error state after a failed fmi2DoStep: every call but the getters, fmi2SetFMUstate,
    fmi2Reset and fmi2FreeInstance returns fmi2Error with a message naming it, and changes nothing;
    fmi2Reset gives an instance that runs bit-identically to a fresh one.  Returns the number of refused calls."""
    f = FMU(path, "err_state", args.work)
    f.setup()
    n0 = 20
    for k in range(n0):
        f.step(k * dt, dt)
    # a status the FMU does not provide is fmi2Discard and no error: the next step runs
    f.messages.clear()
    f.lib.fmi2GetStatus.argtypes = [C.c_void_p, C.c_int, C.POINTER(C.c_int)]
    f.lib.fmi2GetStatus.restype = C.c_int
    st = f.lib.fmi2GetStatus(f.c, 0, C.byref(C.c_int(0)))
    check(st == fmi2Discard and "fmi2GetStatus" in " ".join(f.messages),
          "fmi2GetStatus: status %d, %r (expected fmi2Discard)" % (st, f.messages))
    f.step(n0 * dt, dt)
    n0 += 1
    before = f.get(f.outputs)
    f.messages.clear()
    st = f.lib.fmi2DoStep(f.c, (n0 + 3) * dt, dt, 1)
    check(st == fmi2Error and "is not the FMU's time" in " ".join(f.messages),
          "a step at the wrong time: status %d, %r" % (st, f.messages))
    vr_in = (C.c_uint * 1)(f.vars[f.inputs[0]])
    one = (C.c_double * 1)(1.0)
    snap = C.c_void_p(None)
    refused = [
        ("fmi2DoStep", lambda: f.lib.fmi2DoStep(f.c, n0 * dt, dt, 1)),
        ("fmi2SetReal", lambda: f.lib.fmi2SetReal(f.c, vr_in, 1, one)),
        ("fmi2SetRealInputDerivatives", lambda: f.lib.fmi2SetRealInputDerivatives(f.c, vr_in, 1, (C.c_int * 1)(1),
                                                                                  one)),
        ("fmi2GetFMUstate", lambda: f.lib.fmi2GetFMUstate(f.c, C.byref(snap))),
        ("fmi2Terminate", lambda: f.lib.fmi2Terminate(f.c)),
        ("fmi2SetupExperiment", lambda: f.lib.fmi2SetupExperiment(f.c, 0, 0.0, 0.0, 0, 0.0)),
        ("fmi2EnterInitializationMode", lambda: f.lib.fmi2EnterInitializationMode(f.c)),
        ("fmi2ExitInitializationMode", lambda: f.lib.fmi2ExitInitializationMode(f.c)),
        ("fmi2DoStep", lambda: f.lib.fmi2DoStep(f.c, n0 * dt, dt, 1)),
    ]
    for name, call in refused:
        f.messages.clear()
        st = call()
        msg = " ".join(f.messages)
        check(st == fmi2Error, "%s in the error state: status %d, expected fmi2Error" % (name, st))
        check(f.identifier in msg and name + " at t = " in msg and "error state" in msg,
              "%s in the error state: message %r" % (name, msg))
        check(not snap.value, "fmi2GetFMUstate in the error state returned a state")
    after = f.get(f.outputs)  # fmi2GetReal is allowed and sees the last good step's outputs
    check(after == before, "outputs changed in the error state: %r -> %r" % (before, after))
    f.call("fmi2Reset")
    f.setup()
    got = []
    for k in range(ERROR_STATE_STEPS):
        f.step(k * dt, dt)
        got.append(f.get(f.outputs))
    f.close()
    g = FMU(path, "err_fresh", args.work)
    g.setup()
    want = []
    for k in range(ERROR_STATE_STEPS):
        g.step(k * dt, dt)
        want.append(g.get(g.outputs))
    g.close()
    check(got == want, "after fmi2Reset: %d steps differ from a fresh instance by %.3g" % (
        ERROR_STATE_STEPS, max(abs(a - b) for r, q in zip(got, want) for a, b in zip(r, q))))
    return len(refused)




def cmd_describe(args):
    for path in args.fmus:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            md = ET.fromstring(z.read("modelDescription.xml"))  # raises on malformed XML
        check(md.tag == "fmiModelDescription", "%s: root is %s" % (path, md.tag))
        check(md.get("fmiVersion") == "2.0", "%s: fmiVersion %s" % (path, md.get("fmiVersion")))
        for a in ("modelName", "guid", "generationTool", "variableNamingConvention", "numberOfEventIndicators"):
            check(md.get(a), "%s: fmiModelDescription has no %s" % (path, a))
        check(md.get("numberOfEventIndicators") == "0", "%s: numberOfEventIndicators" % path)
        cs = md.find("CoSimulation")
        check(cs is not None, "%s: no CoSimulation element" % path)
        check(md.find("ModelExchange") is None, "%s: declares ModelExchange" % path)
        ident = cs.get("modelIdentifier")
        check(ident and ident.isidentifier(), "%s: modelIdentifier %r" % (path, ident))
        for a, v in (("canHandleVariableCommunicationStepSize", "true"),  # every part re-divides any step
                     ("canGetAndSetFMUstate", "true"),
                     ("canInterpolateInputs", "true"), ("maxOutputDerivativeOrder", "0")):
            check(cs.get(a) == v, "%s: CoSimulation %s = %r" % (path, a, cs.get(a)))
        check("binaries/linux64/%s.so" % ident in names, "%s: no binaries/linux64/%s.so" % (path, ident))
        check("resources/model.yaml" in names and "resources/options.txt" in names, "%s: resources" % path)
        mv = md.find("ModelVariables")
        check(mv is not None and len(mv) > 0, "%s: no ModelVariables" % path)
        seen_names, seen_vr, outputs = set(), set(), []
        units = {u.get("name") for u in md.iter("Unit")}
        for i, sv in enumerate(mv, 1):
            check(sv.tag == "ScalarVariable", "%s: %s in ModelVariables" % (path, sv.tag))
            name, vr, caus = sv.get("name"), sv.get("valueReference"), sv.get("causality")
            check(name and name not in seen_names, "%s: variable name %r missing or repeated" % (path, name))
            check(vr is not None and vr.isdigit() and vr not in seen_vr, "%s: %s: valueReference %r" % (path, name, vr))
            check(caus in ("input", "output", "local", "parameter", "calculatedParameter", "independent"),
                  "%s: %s: causality %r" % (path, name, caus))
            check(sv.get("variability") in ("continuous", "discrete", "fixed", "tunable", "constant"),
                  "%s: %s: variability" % (path, name))
            seen_names.add(name)
            seen_vr.add(vr)
            check(len(sv) == 1 and sv[0].tag in ("Real", "Integer", "Boolean", "String", "Enumeration"),
                  "%s: %s: type element" % (path, name))
            if caus == "input":
                check(sv[0].get("start") is not None and sv.get("initial") is None,
                      "%s: input %s needs a start value" % (path, name))
                float(sv[0].get("start"))
            else:
                check(sv.get("initial") == "calculated" and sv[0].get("start") is None,
                      "%s: %s: initial/start" % (path, name))
            if sv[0].get("unit") is not None:
                check(sv[0].get("unit") in units, "%s: %s: unit %s not in UnitDefinitions" % (path, name,
                                                                                               sv[0].get("unit")))
            if caus == "output":
                outputs.append(i)
        ms = md.find("ModelStructure")
        check(ms is not None, "%s: no ModelStructure" % path)
        listed = [int(u.get("index")) for u in ms.find("Outputs")] if ms.find("Outputs") is not None else []
        check(listed == outputs, "%s: ModelStructure/Outputs %s, outputs are %s" % (path, listed[:5], outputs[:5]))
        init = [int(u.get("index")) for u in ms.find("InitialUnknowns")] if ms.find("InitialUnknowns") is not None \
            else []
        check(init == outputs, "%s: ModelStructure/InitialUnknowns must list the calculated outputs" % path)
        print("describe: %s: %s, %d variables (%d outputs), guid %s" % (os.path.basename(path), ident, len(mv),
                                                                          len(outputs), md.get("guid")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=("whole", "varstep", "varstep_parts", "interface_model", "getters", "jacobi", "state", "inputs", "flow_inputs", "errors",
                                        "describe"))
    ap.add_argument("fmus", nargs="*")
    ap.add_argument("--hymo")
    ap.add_argument("--model")
    ap.add_argument("--work", default=None)
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--H", type=float, default=1e-3)
    ap.add_argument("--snapshot-every", type=int, default=0, help="whole: fmi2GetFMUstate every N steps")
    ap.add_argument("--order", type=int, default=0, help="jacobi: Lagrange extrapolation order of the inputs")
    ap.add_argument("--hymo-fit", action="store_true",
                    help="varstep_parts: inputs through hymo's own polynomial fit and point times (hymo_poly_fit)")
    ap.add_argument("--tol", type=float, default=1e-12, help="jacobi, flow_inputs: relative tolerance (flow_inputs: 0 = bit-identical)")
    ap.add_argument("--extra", nargs=argparse.REMAINDER, default=[],
                    help="further options for hymo fmu/run/cosim (last)")
    args = ap.parse_args()
    if args.work is None:
        args.work = tempfile.mkdtemp(prefix="fmi_master_")
    os.makedirs(args.work, exist_ok=True)
    for d in os.listdir(args.work):  # FMUs unzipped by an earlier run
        if d.startswith("fmu_"):
            shutil.rmtree(os.path.join(args.work, d), ignore_errors=True)
    try:
        {"whole": cmd_whole, "varstep": cmd_varstep, "varstep_parts": cmd_varstep_parts, "interface_model": cmd_interface_model, "getters": cmd_getters, "jacobi": cmd_jacobi, "state": cmd_state, "inputs": cmd_inputs,
         "flow_inputs": cmd_flow_inputs,
         "errors": cmd_errors, "describe": cmd_describe}[args.command](args)
    except Failed as e:
        print("fmi_master: FAILED: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
