"""hymo from Python: models, runs, stepping with inputs, co-simulation,
comparison and reference files (docs/python.md).

    import hymo
    m = hymo.load("data/crane1.yaml")
    summary = m.run(t_end=2.0, output="crane1.h5")
    sim = m.simulate(t_end=5.0)
    sim.set_input("U_ref", 5.0)
    sim.run_to(1.0)
    print(sim.t, sim.z)

The library is libhymo.so, loaded with ctypes: $HYMO_LIB if set, else a
copy next to this package, the installed libhymo.so.0, or the build
directory of the source tree (build/, build-dbg/, ...).
"""
import ctypes
import math
import os

import numpy as np

from . import _ffi

__all__ = ["Error", "Model", "Sim", "Gate", "CosimResult", "load", "loads", "run_options", "compare", "cosim", "info",
           "fmu_export", "sweep",
           "read", "library_path"]

_lib = _ffi.load_library()
_libc = ctypes.CDLL(None)  # free() of what the library allocates
c_double = ctypes.c_double
_CosimOptions = _ffi.cosim_options_type(_lib)


def library_path():
    """The path of the libhymo.so in use."""
    return _lib._hymo_path


def version():
    return _lib.hymo_version().decode() if hasattr(_lib, "hymo_version") else "unknown"


class Error(Exception):
    """A hymo error: `code` (hymo_status), `status` (its name, e.g. "parse")
    and the library's message (which names file:line, field or time)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.status = _lib.hymo_status_name(code).decode()
        self.message = message


def _new_err():
    return _ffi.Error_()


def _check(status, err):
    if status != 0:
        raise Error(status, err.message.decode(errors="replace"))


def _buffer(ctype_name, mirror):
    """A zeroed buffer of the library's size for struct ctype_name, seen as mirror."""
    size = max(_lib.hymo_struct_size(ctype_name.encode()), ctypes.sizeof(mirror))
    raw = (ctypes.c_char * size)()
    obj = mirror.from_buffer(raw)
    obj._raw = raw  # keep the storage alive
    return obj


def _struct_dict(s):
    out = {}
    for name, ctype in s._fields_:
        if name.startswith("_"):
            continue
        v = getattr(s, name)
        if isinstance(v, bytes):
            v = v.decode(errors="replace")
        elif isinstance(v, ctypes.Array):
            v = [_struct_dict(x) if isinstance(x, ctypes.Structure) else
                 x.decode(errors="replace") if isinstance(x, bytes) else x for x in v]
        elif isinstance(v, ctypes.Structure):
            v = _struct_dict(v)
        out[name] = v
    if "volume_ranges" in out and "n_volume_ranges" in out:  # the ranges in use
        out["volume_ranges"] = out["volume_ranges"][:out["n_volume_ranges"]]
    return out


# ---- options ----

_ENUMS = {
    "integrator": {"trapezoidal": 0, "trapezoidal-newton": 0, "ida": 1},
    "newton_test": {"contractive": 0, "seed": 1},
    "formulation": {"double-step": 0, "double_step": 0, "penalty": 1},
    "jacobian": {"numeric": 0, "fast": 1},
    "linear_solver": {"dense": 0, "klu": 1, "auto": 2},
    "predictor": {"seed": 0, "extrapolate": 1},
}
_RUN_KEYS = [f for f, _ in _ffi.RunOptions._fields_]


def _set_fields(s, values, enums, what):
    names = [f for f, _ in s._fields_ if not f.startswith("_")]
    for key, value in values.items():
        k = key.replace("-", "_")
        if k not in names:
            raise Error(7, "%s: unknown option '%s' (options: %s)" % (what, key, ", ".join(sorted(names))))
        if k in enums and isinstance(value, str):
            table = enums[k]
            if value not in table:
                raise Error(7, "%s: %s = '%s': expected one of %s" % (what, key, value, ", ".join(sorted(table))))
            value = table[value]
        if isinstance(value, bool):
            value = int(value)
        setattr(s, k, value)


def run_options(model, **options):
    """hymo_run_options: the model's defaults (hymo_run_options_default)
    with `options` (dt, t_end, integrator="trapezoidal"|"ida",
    formulation="double-step"|"penalty", jacobian="numeric"|"fast",
    linear_solver="auto"|"dense"|"klu", newton_test, predictor, penalty_alpha,
    tol_position, tol_pressure, tol_spool, max_iter, reselect_ratio,
    verbose, rtol, atol, error_estimate, output_every (or output_interval,
    s, a multiple of dt, as --output-interval), penalty_alpha_auto;
    giving penalty_alpha sets penalty_alpha_auto = 0 unless both are given), checked
    (hymo_run_options_check)."""
    opt = _buffer("hymo_run_options", _ffi.RunOptions)
    _lib.hymo_run_options_default(ctypes.byref(opt), model._ptr)
    if "penalty_alpha" in options and "penalty_alpha_auto" not in options:  # an explicit factor is used as given
        options = dict(options, penalty_alpha_auto=0)
    interval = options.pop("output_interval", None) if "output_interval" in options else None
    _set_fields(opt, options, _ENUMS, "run options")
    err = _new_err()
    if interval is not None:  # --output-interval S: a row every S seconds, a multiple of dt
        if "output_every" in options:
            raise Error(7, "--output-every and --output-interval: give one of them, not both")
        every = ctypes.c_int()
        st = _lib.hymo_output_every_from_interval(float(interval), opt.dt, ctypes.byref(every), ctypes.byref(err))
        if st != 0:
            raise Error(st, "--output-interval: " + err.message.decode(errors="replace"))
        opt.output_every = every.value
    _check(_lib.hymo_run_options_check(ctypes.byref(opt), ctypes.byref(err)), err)
    return opt


# ---- models ----


class Model:
    """A loaded model (hymo_model): read-only, shared by every run of it.
    hymo.Model(path) loads a model file (as hymo.load(path)); set: the
    overrides of `--set PATH=VALUE` (a list of "PATH=VALUE" or a dict
    {PATH: VALUE}), applied to the parsed file (docs/overrides.md) and
    recorded in the model hashes and the output."""

    def __init__(self, path, set=None):
        if isinstance(path, ctypes.c_void_p):  # from_file / from_string: the loaded hymo_model
            ptr = path
        elif isinstance(path, (str, bytes, os.PathLike)):
            err, ptr = _new_err(), ctypes.c_void_p()
            if isinstance(set, str):
                set = [set]
            elif isinstance(set, dict):
                set = ["%s=%s" % (k, v if isinstance(v, str) else repr(v)) for k, v in set.items()]
            sets = [s.encode() for s in (set or [])]
            arr = (ctypes.c_char_p * max(len(sets), 1))(*sets)
            _check(_lib.hymo_model_load_file_set(os.fsencode(path), arr, len(sets), ctypes.byref(ptr),
                                                 ctypes.byref(err)), err)
        else:
            raise TypeError("hymo.Model(path): a model file's path (str or os.PathLike), not %s" % type(path).__name__)
        self._ptr = ptr
        head = ctypes.cast(ptr, ctypes.POINTER(_ffi.Model_)).contents
        self.name = head.name.decode()
        self.source_path = head.source_path.decode() if head.source_path else None
        self.joints = [head.bodies[j].joint_name.decode() for j in range(head.n_bodies)]
        self.bodies = [head.bodies[j].name.decode() for j in range(head.n_bodies)]
        self.signals = [head.signals[k].name.decode() for k in range(head.n_signals)]

    @classmethod
    def from_file(cls, path):
        return cls(os.fspath(path))

    @classmethod
    def from_string(cls, text, origin="<string>"):
        err, out = _new_err(), ctypes.c_void_p()
        _check(_lib.hymo_model_load_string(text.encode(), origin.encode(), ctypes.byref(out), ctypes.byref(err)),
               err)
        return cls(out)

    def __del__(self):
        if getattr(self, "_ptr", None):
            _lib.hymo_model_free(self._ptr)
            self._ptr = None

    def __repr__(self):
        return "<hymo.Model %s: joints %s, signals %s>" % (self.name, self.joints, self.signals)

    def run(self, output=None, **options):
        """Runs from 0 to t_end (hymo_run); writes an HDF5 reference to
        `output` if given.  Returns the summary as a dict."""
        opt = run_options(self, **options)
        summary = _buffer("hymo_run_summary", _ffi.RunSummary)
        err = _new_err()
        st = _lib.hymo_run(self._ptr, ctypes.byref(opt), os.fsencode(output) if output else None,
                           ctypes.byref(summary), ctypes.byref(err))
        _check(st, err)
        return _struct_dict(summary)

    def simulate(self, **options):
        """A simulation to step by hand (hymo.Sim)."""
        return Sim(self, **options)


def load(path, set=None):
    """Loads a model file (YAML, docs/model-format.md), with overrides
    `set` as Model(path, set)."""
    return Model(os.fspath(path), set=set)


def loads(text, origin="<string>"):
    """Loads a model from YAML text; `origin` names it in messages."""
    return Model.from_string(text, origin)


# ---- stepping ----


class Sim:
    """A simulation stepped from Python (hymo_sim).  States are NumPy
    copies of the current values; inputs and parameters can be changed
    between steps (include/hymo/control.h)."""

    def __init__(self, model, **options):
        if isinstance(model, (str, bytes, os.PathLike)):  # a path, as cosim() takes
            model = Model(model)
        self.model = model  # keeps the model alive
        self.options = run_options(model, **options)
        self._ptr = ctypes.c_void_p()
        self._callbacks = {}
        self._callback_error = None
        err = _new_err()
        _check(_lib.hymo_sim_create(model._ptr, ctypes.byref(self.options), ctypes.byref(self._ptr),
                                    ctypes.byref(err)), err)
        self.nz, self.np, self.nu, self.na = (getattr(_lib, "hymo_sim_" + n)(self._ptr)
                                              for n in ("nz", "np", "nu", "na"))

    def __del__(self):
        if getattr(self, "_out", None):
            _lib.hymo_sim_outputs_free(self._out)
            self._out = None
        if getattr(self, "_ptr", None):
            _lib.hymo_sim_free(self._ptr)
            self._ptr = None

    def _outputs(self):
        if getattr(self, "_out", None) is None:
            out, err = ctypes.c_void_p(), _new_err()
            _check(_lib.hymo_sim_outputs_create(self._ptr, ctypes.byref(out), ctypes.byref(err)), err)
            self._out = out
            n = _lib.hymo_sim_outputs_count(out)
            self.output_names, self.output_units, self._out_cols = {}, {}, []
            for k in range(n):
                path = _lib.hymo_sim_outputs_path(out, k).decode().lstrip("/")
                cols = _lib.hymo_sim_outputs_cols(out, k)
                self.output_names[path] = [_lib.hymo_sim_outputs_name(out, k, c).decode() for c in range(cols)]
                self.output_units[path] = _lib.hymo_sim_outputs_units(out, k).decode()
                self._out_cols.append((path, cols))
            self._out_values = (ctypes.c_double * max(_lib.hymo_sim_outputs_n_values(out), 1))()
        return self._out

    def outputs(self):
        """The further outputs at the current state, as `hymo run` writes
        them in this step's row (docs/hdf5-format.md, "Sensors, flows and
        inputs"): {"sensors/position": array [3 x per sensor], "flows/...":
        ..., "inputs/...": ...}, NumPy copies; the column names and units
        are in .output_names and .output_units (same keys)."""
        out, err = self._outputs(), _new_err()
        _check(_lib.hymo_sim_outputs_eval(out, self._ptr, self._out_values, ctypes.byref(err)), err)
        values = np.ctypeslib.as_array(self._out_values).copy()
        res, at = {}, 0
        for path, cols in self._out_cols:
            res[path] = values[at:at + cols]
            at += cols
        return res

    def sensors(self):
        """The model's sensors at the current state: {name: {"position":
        [x, y, z] m, "velocity": ... m/s, "acceleration": ... m/s^2}} (the
        quantities each sensor records)."""
        res = {}
        for path, v in self.outputs().items():
            if not path.startswith("sensors/"):
                continue
            quantity = path.split("/", 1)[1]
            for name, x in zip(self.output_names[path], v):
                sensor, axis = name.rsplit(".", 1) if "." in name else (name, "")
                res.setdefault(sensor, {}).setdefault(quantity, []).append(x)
        return {s: {q: np.array(v) for q, v in d.items()} for s, d in res.items()}

    def _array(self, name, n):
        p = getattr(_lib, "hymo_sim_" + name)(self._ptr)
        return np.ctypeslib.as_array(p, shape=(n,)).copy() if n > 0 else np.zeros(0)

    t = property(lambda self: _lib.hymo_sim_time(self._ptr), doc="time of the current state, s")
    steps = property(lambda self: _lib.hymo_sim_steps(self._ptr), doc="steps done")
    z = property(lambda self: self._array("z", self.nz), doc="joint coordinates [nz] (rad or m)")
    zd = property(lambda self: self._array("zd", self.nz), doc="joint velocities [nz]")
    zdd = property(lambda self: self._array("zdd", self.nz), doc="joint accelerations [nz]")
    p = property(lambda self: self._array("p", self.np), doc="volume pressures [np], Pa")
    u = property(lambda self: self._array("u", self.nu), doc="spool positions [nu]")
    s = property(lambda self: self._array("actuator_length", self.na), doc="actuator lengths [na], m")
    force = property(lambda self: self._array("actuator_force", self.na), doc="actuator forces [na], N")

    def state(self):
        """The current state as a dict of NumPy arrays (and t)."""
        return {"t": self.t, "z": self.z, "zd": self.zd, "zdd": self.zdd, "p": self.p, "U": self.u, "s": self.s,
                "force": self.force}

    def step(self, n=1):
        """n steps of size dt (the last one ends at t_end)."""
        err = _new_err()
        for _ in range(n):
            st = _lib.hymo_sim_step(self._ptr, ctypes.byref(err))
            if self._callback_error is not None:
                e, self._callback_error = self._callback_error, None
                raise e
            _check(st, err)
        return self

    def run_to(self, t, record=False):
        """Steps until time t (at most t_end).  With record=True returns a
        dict of NumPy arrays, one row per step including the current one
        (time [N], z [N x nz], zd, p [N x np], U, s, force)."""
        rows = [self.state()] if record else None
        t_end = self.options.t_end
        tol = 1e-9 * self.options.dt
        while self.t < min(t, t_end) - tol:
            self.step()
            if record:
                rows.append(self.state())
        if record:
            out = {k: np.array([r[k] for r in rows]) for k in rows[0]}
            out["time"] = out.pop("t")
            return out
        return self

    def set_input(self, name, value):
        """Input `name`: a valve reference (signal or valve name), a pump's
        speed factor or a flow control valve's set-flow factor (signal, or
        pump / flow control valve name; the element needs speed_signal /
        set_flow_signal in the model): a number, held from now on, or a
        function u(t) of time."""
        err = _new_err()
        if callable(value):
            py = value

            def trampoline(t, _user):
                try:
                    return float(py(t))
                except BaseException as e:  # reported after the step
                    if self._callback_error is None:
                        self._callback_error = e
                    return math.nan

            cb = _ffi.INPUT_FN(trampoline)
            _check(_lib.hymo_sim_set_input_callback(self._ptr, name.encode(), cb, None, ctypes.byref(err)), err)
            self._callbacks[name] = cb  # alive as long as the library may call it
        else:
            _check(_lib.hymo_sim_set_input(self._ptr, name.encode(), float(value), ctypes.byref(err)), err)
        return self

    def clear_input(self, name):
        """Back to the model's signal table."""
        err = _new_err()
        _check(_lib.hymo_sim_clear_input(self._ptr, name.encode(), ctypes.byref(err)), err)
        return self

    def get_input(self, name, t=None):
        err, v = _new_err(), ctypes.c_double()
        _check(_lib.hymo_sim_get_input(self._ptr, name.encode(), self.t if t is None else t, ctypes.byref(v),
                                       ctypes.byref(err)), err)
        return v.value

    def set_parameter(self, name, value):
        """A hydraulic parameter ("valve.dcv1.tau", "throttle.NAME.Ct",
        "source.pump.pressure", ...; include/hymo/control.h) from now on."""
        err = _new_err()
        _check(_lib.hymo_sim_set_parameter(self._ptr, name.encode(), float(value), ctypes.byref(err)), err)
        return self

    def get_parameter(self, name):
        err, v = _new_err(), ctypes.c_double()
        _check(_lib.hymo_sim_get_parameter(self._ptr, name.encode(), ctypes.byref(v), ctypes.byref(err)), err)
        return v.value

    def summary(self):
        """hymo_sim_summary as a dict (complete once t_end is reached)."""
        s = _buffer("hymo_run_summary", _ffi.RunSummary)
        _lib.hymo_sim_summary(self._ptr, ctypes.byref(s))
        return _struct_dict(s)


# ---- reference files, comparison, co-simulation ----


class _Ref:
    """A reference file read by the library (hymo_ref_read; also a run of
    another tool read from CSV, csv=True)."""

    def __init__(self, path=None, validate=False):
        self.ptr, err = ctypes.c_void_p(), _new_err()
        if path is None:
            return
        _check(_lib.hymo_ref_read(os.fsencode(path), ctypes.byref(self.ptr), ctypes.byref(err)), err)
        if validate:
            _check(_lib.hymo_ref_validate(self.ptr, os.fsencode(path), ctypes.byref(err)), err)

    @property
    def r(self):
        return ctypes.cast(self.ptr, ctypes.POINTER(_ffi.Reference)).contents

    def __del__(self):
        if getattr(self, "ptr", None):
            _lib.hymo_ref_free(self.ptr)
            self.ptr = None


def _compare_dict(r, out=None):
    out = {} if out is None else out
    out.update({"n_samples": r.n_samples, "t_start": r.t_start, "t_end": r.t_end})
    for k in range(_ffi.NCMP):
        name = _lib.hymo_compare_signal_name(k).decode()
        out[name] = {"rms": r.rms[k], "max": r.max[k], "worst_rms": r.worst_rms[k], "worst_max": r.worst_max[k],
                     "t_worst_max": r.t_worst_max[k]}
    if r.has_residual_energy:
        out["residual_energy"] = {"final": r.residual_energy_final, "max_abs": r.residual_energy_max_abs,
                                  "rms_diff": r.residual_energy_rms_diff}
    return out


_SIGNAL_NAMES = {0: "z_names", 1: "z_names", 2: "actuator_names", 3: "actuator_names", 4: "p_names", 5: "u_names",
                 6: "actuator_names"}


def _component_name(ref, k, c):
    """"s[cyl1]", "p[V2]" (as hymo compare prints them); "p[-]" without components."""
    sig = _lib.hymo_compare_signal_name(k).decode()
    if c < 0:
        return sig + "[-]"
    names = getattr(ref.r, _SIGNAL_NAMES[k])
    nm = names[c].value.decode(errors="replace") if names else ""
    return "%s[%s]" % (sig, nm if nm else c)


def _thresholds(value, option):
    """--max-rms / --max-abs values: a dict {SIGNAL or SIGNAL[NAME]: V}, one
    "SIGNAL=V" string or a list of them (or of (SIGNAL, V) pairs)."""
    if value is None:
        return []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, str):
        items = [value]
    else:
        items = list(value)
    out = []
    for it in items:
        if isinstance(it, str):
            if "=" not in it or it.startswith("="):
                raise Error(7, "%s: '%s' is not SIGNAL=VALUE (see hymo compare --help)" % (option, it))
            name, v = it.split("=", 1)
        else:
            name, v = it
        out.append((str(name), v if isinstance(v, str) else repr(float(v))))
    return out


class Gate(dict):
    """The verdict of hymo.compare with thresholds (`hymo compare`'s gate):
    the per-signal errors as compare() without thresholds (a dict), and
    passed (bool), exit_code (0 pass, 1 fail: the CLI's exit status),
    failure (why it failed before any threshold was judged: another model,
    the span not covered, an incomplete or unstable run; else None),
    checks (one dict per threshold in the order given: kind "rms", "abs"
    or "residual_energy", component, value, limit, unit, ratio, t (of the
    largest error, abs checks), passed) and warnings (as the CLI's)."""

    passed = property(lambda self: self.exit_code == 0)

    def __repr__(self):
        return "<hymo.Gate %s: %d checks, %d failed%s>" % (
            "PASS" if self.passed else "FAIL", len(self.checks), sum(not c["passed"] for c in self.checks),
            ", " + self.failure if self.failure else "")


def _gate_fail(gate, message):
    gate.exit_code, gate.failure = 1, message
    return gate


def _check_complete(path, r, is_run):
    """None if the file is complete, else the CLI's message."""
    if not r.complete and r.has_cosim and r.cosim_status == b"unstable":
        reason = r.cosim_status_reason.decode(errors="replace")
        return "'%s': unstable co-simulation: stopped at t = %g of %g s%s" % (
            path, r.summary.t_reached, r.t_end, " (%s)" % reason if reason else "")
    if not r.complete:
        return "'%s': incomplete run (complete = 0, reached t = %g of %g s)%s" % (
            path, r.summary.t_reached, r.t_end, "; a .partial file from a killed run" if path.endswith(".partial")
            else "")
    if path.endswith(".partial"):
        return "'%s': incomplete run (a .partial file: its writer never closed it)" % path
    return None


def _covers(ref, run, t0, t1):
    n, m = ref.n, run.n
    half = lambda t, k, i: 0.0 if k < 2 else 0.5 * (t[min(max(i, 0), k - 2) + 1] - t[min(max(i, 0), k - 2)])
    mean = 0.5 * (ref.time[n - 1] - ref.time[0]) / (n - 1) if n > 1 else 0.0
    eps = 1e-12 * max(1.0, max(abs(t0), abs(t1)))
    lo = max(mean, half(run.time, m, 0)) + eps
    hi = max(mean, half(run.time, m, m - 2)) + eps
    return run.time[0] <= t0 + lo and run.time[m - 1] >= t1 - hi


def compare(reference, run, max_rms=None, max_abs=None, max_residual_energy=None, map=None, span=None,
            allow_model_mismatch=False):
    """`hymo compare REF.h5 RUN.h5|RUN.csv` (docs/compare.md): errors of a
    run against a reference file of the same model, and with thresholds
    the regression gate's verdict.  Returns a Gate (a dict: {signal: {rms,
    max, worst_rms, worst_max, t_worst_max}} for z, zd, s, sd, p, U, force,
    n_samples, t_start, t_end, residual_energy when the run has one, and
    "components": {"z[z1]": {rms, max, t_max}, ...}) with .passed,
    .exit_code, .checks, .failure.

    max_rms, max_abs: {"s": 1e-4, "z[z1]": 1e-3} (or "SIGNAL=V" strings),
    in the signals' SI units; max_residual_energy: J (a co-simulation run);
    thresholds are judged in the order max_rms, max_abs (each in its
    given order), max_residual_energy;
    run: a .csv of another tool (a column t or time and columns named like
    the components, z[z1], p[V2], ...; map: a MAP.yaml of its columns);
    span: (t0, t1) checks a sub-span of the reference.  Bad input (a file
    that cannot be read, an unknown signal or component, a map for an
    HDF5 run) raises Error with hymo's message, as the CLI exits 2; a run
    that fails the gate (a threshold, the span, incomplete, unstable,
    another model) is a Gate with exit_code 1."""
    reference, run = os.fspath(reference), os.fspath(run)
    csv = run.endswith((".csv", ".CSV"))
    checks = [("rms", n, v) for n, v in _thresholds(max_rms, "--max-rms")]
    checks += [("abs", n, v) for n, v in _thresholds(max_abs, "--max-abs")]
    parsed = []
    for kind, name, v in checks:
        opt = "--max-" + kind
        sig, comp = name, ""
        if "[" in name:
            if not name.endswith("]") or name[name.index("[") + 1] == "]":
                raise Error(7, "%s: '%s' is not SIGNAL or SIGNAL[NAME]" % (opt, name))
            sig, comp = name[:name.index("[")], name
        k = _lib.hymo_compare_signal_find(sig.encode())
        if k < 0:
            raise Error(7, "%s: unknown signal '%s' (known: z, zd, s, sd, p, U, force)" % (opt, sig))
        try:
            limit = float(v)
        except ValueError:
            limit = math.nan
        if not (limit > 0.0 and math.isfinite(limit)):
            raise Error(7, "%s: '%s' in '%s=%s' is not a positive number" % (opt, v, name, v))
        parsed.append({"kind": kind, "signal": k, "component": comp, "limit": limit})
    if max_residual_energy is not None and not (float(max_residual_energy) > 0 and
                                                math.isfinite(float(max_residual_energy))):
        raise Error(7, "--max-residual-energy: '%s' is not a positive number" % max_residual_energy)
    if map is not None and not csv:
        raise Error(7, "--map applies to a CSV run (RUN.csv), not to '%s'" % run)
    gate = Gate()
    gate.checks, gate.warnings, gate.failure, gate.exit_code = [], [], None, 0
    ref = _Ref(reference, validate=True)
    msg = _check_complete(reference, ref.r, False)
    if msg:
        raise Error(1, msg)
    present = None
    if csv:
        rn, pres, err = _Ref(), ctypes.c_void_p(), _new_err()
        _check(_lib.hymo_foreign_read_csv(os.fsencode(run), os.fsencode(map) if map else None, ref.ptr,
                                          ctypes.byref(rn.ptr), ctypes.byref(pres), ctypes.byref(err)), err)
        ncomp = _lib.hymo_compare_component_offset(ref.ptr, _ffi.NCMP)
        present = (ctypes.c_ubyte * max(ncomp, 1)).from_buffer_copy(ctypes.string_at(pres, max(ncomp, 1)))
        _libc.free(pres)
    else:
        rn = _Ref(run, validate=True)
        msg = _check_complete(run, rn.r, True)
        if msg:
            return _gate_fail(gate, msg)
    R, U = ref.r, rn.r
    declared = not csv or U.model_sha256 or U.model_physics_sha256
    identity = 2
    if declared:
        identity = _lib.hymo_model_identity(R.model_sha256, R.model_physics_sha256, U.model_sha256,
                                            U.model_physics_sha256)
        if identity == 0 and not allow_model_mismatch:
            return _gate_fail(gate, "'%s' %s another model: '%s' vs reference '%s'" % (
                run, "declares" if csv else "is a run of", U.model_name.decode(), R.model_name.decode()))
        if identity == 0:
            gate.warnings.append("'%s' and '%s' are runs of different models; compared as asked" % (reference, run))
    gate.model_identity = {0: "different", 1: "same physics", 2: "same text"}[identity] if declared else None
    if max_residual_energy is not None and not (U.has_cosim and U.residual_energy_total):
        raise Error(7, "'%s' has no /cosim group (not a co-simulation run), so --max-residual-energy cannot be "
                       "checked" % run)
    for c in parsed:
        opt = "--max-" + c["kind"]
        k = c["signal"]
        c["index"], c["column"] = -1, -1
        if c["component"]:
            ks, col = ctypes.c_int(-1), ctypes.c_int(-1)
            c["index"] = _lib.hymo_foreign_component(ref.ptr, c["component"].encode(), ctypes.byref(ks),
                                                     ctypes.byref(col))
            if c["index"] < 0:
                off = _lib.hymo_compare_component_offset(ref.ptr, k)
                cols = _lib.hymo_compare_component_offset(ref.ptr, k + 1) - off
                known = ", ".join(_component_name(ref, k, j) for j in range(cols))
                raise Error(7, "%s: the reference has no component '%s' (components of %s: %s)" % (
                    opt, c["component"], _lib.hymo_compare_signal_name(k).decode(), known if cols else "none"))
            c["column"] = col.value
            if present is not None and not present[c["index"]]:
                raise Error(7, "%s: '%s' has no column %s" % (opt, run, c["component"]))
        elif present is not None:
            off = _lib.hymo_compare_component_offset(ref.ptr, k)
            end = _lib.hymo_compare_component_offset(ref.ptr, k + 1)
            if end > off and not any(present[off:end]):
                sig = _lib.hymo_compare_signal_name(k).decode()
                raise Error(7, "%s: '%s' has no column of signal %s (e.g. %s[NAME])" % (opt, run, sig, sig))
    t0, t1 = R.time[0], R.time[R.n - 1]
    if span is not None:
        s0, s1 = float(span[0]), float(span[1])
        eps = 1e-12 * max(1.0, max(abs(t0), abs(t1)))
        if not s0 < s1:
            raise Error(7, "--span: '%s:%s' is not T0:T1 with T0 < T1" % (span[0], span[1]))
        if s0 < t0 - eps or s1 > t1 + eps:
            raise Error(7, "--span %g:%g is not inside the reference's span t = %g .. %g s ('%s')"
                        % (s0, s1, t0, t1, reference))
    else:
        s0, s1 = t0, t1
    gate.span = (s0, s1)
    if not _covers(R, U, s0, s1):
        return _gate_fail(gate, "'%s' covers t = %g .. %g s, not the span checked t = %g .. %g s (the reference "
                          "'%s': t = %g .. %g s)" % (run, U.time[0], U.time[U.n - 1], s0, s1, reference, t0, t1))
    ncomp = _lib.hymo_compare_component_offset(ref.ptr, _ffi.NCMP)
    crms, cmax, ct = ((c_double * max(ncomp, 1))() for _ in range(3))
    res, err = _buffer("hymo_compare_result", _ffi.CompareResult), _new_err()
    st = _lib.hymo_compare_components_in(ref.ptr, rn.ptr, present, s0, s1, ctypes.byref(res), crms, cmax, ct,
                                         ctypes.byref(err))
    if st != 0:
        raise Error(st, "'%s' vs '%s': %s" % (reference, run, err.message.decode(errors="replace")))
    _compare_dict(res, gate)
    comps = {}
    for k in range(_ffi.NCMP):
        off = _lib.hymo_compare_component_offset(ref.ptr, k)
        for j in range(_lib.hymo_compare_component_offset(ref.ptr, k + 1) - off):
            comps[_component_name(ref, k, j)] = {"rms": crms[off + j], "max": cmax[off + j], "t_max": ct[off + j],
                                                 "unit": _lib.hymo_compare_signal_unit(ref.ptr, k, j).decode()}
    gate["components"] = comps
    S = R.summary  # the reference's own error estimate: a threshold below it cannot be judged (as the CLI warns)
    if S.has_accuracy and not S.accuracy_reliable:
        gate.warnings.append("the reference's own error estimate is UNRELIABLE (%s); thresholds are not judged "
                             "against it" % S.accuracy_check.decode(errors="replace"))
    elif S.has_accuracy:
        for c in parsed:
            own = {"z": S.z_max_error, "p": S.p_max_error, "s": S.s_max_error}.get(
                _lib.hymo_compare_signal_name(c["signal"]).decode(), -1.0)
            if own > 0 and c["limit"] < own:
                gate.warnings.append("--max-%s %s=%g is tighter than the reference's own estimated max error %.3g %s"
                                     % (c["kind"], c["component"] or _lib.hymo_compare_signal_name(c["signal"]).decode(),
                                        c["limit"], own, _lib.hymo_compare_signal_unit(ref.ptr, c["signal"], 0).decode()))
    for c in parsed:
        k = c["signal"]
        rms = c["kind"] == "rms"
        col = res.worst_rms[k] if rms else res.worst_max[k]
        v, t_at = (res.rms[k] if rms else res.max[k]), res.t_worst_max[k]
        if c["index"] >= 0:
            col = c["column"]
            v = crms[c["index"]] if rms else cmax[c["index"]]
            t_at = ct[c["index"]]
        gate.checks.append({"kind": c["kind"], "component": _component_name(ref, k, col), "value": v,
                            "limit": c["limit"], "unit": _lib.hymo_compare_signal_unit(ref.ptr, k, col).decode(),
                            "ratio": v / c["limit"], "t": t_at if not rms and col >= 0 else None,
                            "passed": bool(v <= c["limit"])})
    if max_residual_energy is not None:
        v, lim = res.residual_energy_max_abs, float(max_residual_energy)
        gate.checks.append({"kind": "residual_energy", "component": "residual_energy", "value": v, "limit": lim,
                            "unit": "J", "ratio": v / lim, "t": None, "passed": bool(v <= lim)})
    gate.exit_code = 1 if any(not c["passed"] for c in gate.checks) else 0
    return gate


class CosimResult(dict):
    """The summary of a co-simulation (hymo_cosim_summary as a dict;
    "errors" as compare()) with its verdict: verdict ("stable",
    "accurate", "inaccurate", "unstable"), verdict_reason, and exit_code
    (the CLI's: 0 stable or accurate, 1 inaccurate, 3 unstable)."""

    verdict = property(lambda self: self["verdict"])
    passed = property(lambda self: self.exit_code == 0)
    exit_code = property(lambda self: {"unstable": 3, "inaccurate": 1}.get(self["verdict"], 0))

    def __repr__(self):
        return "<hymo.CosimResult %s: t = %g s, %s>" % (self["verdict"], self["t_reached"],
                                                        self["verdict_reason"] or "no reason")


# Python keyword -> the option of `hymo cosim` (hymo_cosim_option parses the value)
_COSIM_OPTIONS = {
    "H": "--H", "hh": "--hh", "h_h": "--hh", "hm": "--hm", "dt": "--hm", "t_end": "--t-end",
    "scheme": "--scheme", "coupling": "--coupling", "extrapolation": "--extrapolation", "approx": "--extrapolation",
    "hyd_integrator": "--hyd-integrator", "mech_integrator": "--mech-integrator", "formulation": "--formulation",
    "jacobian": "--jacobian", "mech_inputs": "--mech-inputs", "unstable_ratio": "--unstable-ratio",
    "unstable_balance_ratio": "--unstable-balance-ratio", "unstable_floor": "--unstable-floor",
    "unstable_energy": "--unstable-energy", "max_residual_energy": "--max-residual-energy",
    "max_balance_jump": "--max-balance-jump", "balance_window": "--balance-window",
    "iterate": "--iterate", "iterate_tol": "--iterate-tol", "iterate_accel": "--iterate-accel",
}
_SYSTEM_OPTIONS = ("t_end", "unstable_ratio", "unstable_balance_ratio", "unstable_floor", "unstable_energy",
                   "max_rms", "max_abs", "max_residual_energy", "max_balance_jump", "balance_window",
                   "iterate", "iterate_tol", "iterate_accel")


def _cosim_apply(opt, options, system=None):
    """options (Python keywords) through hymo_cosim_option, as the CLI's;
    the other hymo_run_options fields onto opt.mech.  Returns the keys given."""
    given = set()
    mech = {}
    for key, value in options.items():
        k = key.replace("-", "_")
        if system is not None and k not in _SYSTEM_OPTIONS:
            raise Error(7, "%s applies to model files; %s is a system file (set it there)" % (
                "--" + k.replace("_", "-"), system))
        if k in ("max_rms", "max_abs"):
            pairs = [("--" + k.replace("_", "-"), "%s=%s" % nv) for nv in _thresholds(value, "--" + k)]
        elif k in _COSIM_OPTIONS:
            v = value if isinstance(value, str) else repr(value) if isinstance(value, float) else str(value)
            pairs = [(_COSIM_OPTIONS[k], v)]
        elif k in _RUN_KEYS:
            mech[k] = value
            continue
        else:
            names = sorted(set(_COSIM_OPTIONS) | {"max_rms", "max_abs"} | set(_RUN_KEYS))
            raise Error(7, "co-simulation options: unknown option '%s' (options: %s)" % (key, ", ".join(names)))
        for name, v in pairs:
            err = _new_err()
            if _lib.hymo_cosim_option(name.encode(), v.encode(), ctypes.byref(opt), ctypes.byref(err)) < 0:
                raise Error(err.code or 7, err.message.decode(errors="replace"))
        given.add(_COSIM_OPTIONS.get(k, k))
    _set_fields(opt.mech, mech, _ENUMS, "co-simulation options")
    return given


def _default_thresholds(opt, reference):
    """With a reference and no threshold given: the sweep's defaults (as `hymo cosim`)."""
    if reference and not (opt.max_residual_energy > 0 or any(opt.max_rms) or any(opt.max_abs)):
        opt.max_rms[_lib.hymo_compare_signal_find(b"s")] = 1e-3
        opt.max_abs[_lib.hymo_compare_signal_find(b"p")] = 1e6
        opt.max_residual_energy = 50.0


def _open_reference(reference):
    if not reference:
        return None
    ref = _Ref(os.fspath(reference), validate=True)
    if not ref.r.complete:
        raise Error(7, "%s: incomplete reference (complete = 0, reached t = %g of %g s)"
                    % (reference, ref.r.summary.t_reached, ref.r.t_end))
    return ref


def _cosim_result(summary):
    out = CosimResult(_struct_dict(summary))
    out["errors"] = _compare_dict(summary.errors) if summary.has_errors else None
    out["verdict_code"] = summary.verdict
    out["verdict"] = _lib.hymo_cosim_verdict_name(summary.verdict).decode()
    return out


def cosim(model, output=None, reference=None, set=None, **options):
    """`hymo cosim MODEL.yaml|SYSTEM.yaml|SYSTEM.ssp` (hymo_cosim_run,
    include/hymo/cosim.h; hymo_cosim_system_run for a system file of FMUs).

    Options as the CLI's, with '_' for '-': H, hh (or h_h), hm (or dt:
    the mechanical step; default H, as the CLI), t_end, scheme, coupling
    ("velocity-force", "velocity-pressure", "tlm"), extrapolation (or
    approx: 0..3, "quadratic", "interface-model"), hyd_integrator,
    mech_integrator, formulation, jacobian, mech_inputs, and the verdict
    options unstable_ratio, unstable_balance_ratio, unstable_floor,
    unstable_energy, max_rms / max_abs ({"s": 1e-3} or "s=1e-3"),
    max_residual_energy, max_balance_jump, balance_window; also any other
    hymo_run_options field of the mechanics (linear_solver, tol_position,
    ...).  set: overrides "PATH=VALUE" of a model file.  reference: a
    complete reference of the same model; with it and no threshold the
    CLI's defaults (max_rms s=1e-3, max_abs p=1e6, max_residual_energy 50)
    apply.  A system file takes only t_end and the verdict options.
    Returns a CosimResult (the summary dict, with .verdict and .exit_code);
    an unstable run is a result (exit_code 3), not an exception."""
    if isinstance(model, (str, bytes, os.PathLike)) and _lib.hymo_cosim_system_file(os.fsencode(model)):
        if set:
            raise Error(7, "--set applies to model files; %s is a system file (set it there)" % os.fspath(model))
        return _cosim_system(os.fspath(model), output, reference, options)
    if isinstance(model, (str, bytes, os.PathLike)):
        model = Model(model, set=set)
    elif set:
        raise Error(7, "set: overrides apply when the model is given by its path (hymo.Model(path, set=...))")
    opt = _buffer("hymo_cosim_options", _CosimOptions)
    _lib.hymo_cosim_options_default(ctypes.byref(opt), model._ptr)
    given = _cosim_apply(opt, options)
    if "--hm" not in given:
        opt.mech.dt = opt.H
    _default_thresholds(opt, reference)
    err = _new_err()
    _check(_lib.hymo_cosim_options_check(ctypes.byref(opt), ctypes.byref(err)), err)
    ref = _open_reference(reference)
    summary = _buffer("hymo_cosim_summary", _ffi.CosimSummary)
    st = _lib.hymo_cosim_run(model._ptr, ctypes.byref(opt), ref.ptr if ref else None,
                             os.fsencode(output) if output else None, ctypes.byref(summary), ctypes.byref(err))
    _check(st, err)
    return _cosim_result(summary)


def _cosim_system(path, output, reference, options):
    sys_ptr, err = ctypes.c_void_p(), _new_err()
    _check(_lib.hymo_cosim_system_load(path.encode(), ctypes.byref(sys_ptr), ctypes.byref(err)), err)
    try:
        opt = ctypes.cast(_lib.hymo_cosim_system_options(sys_ptr), ctypes.POINTER(_CosimOptions)).contents
        _cosim_apply(opt, options, system=path)
        if "t_end" in options:
            n = opt.mech.t_end / opt.H
            if abs(n - round(n)) > 1e-9 * max(1.0, n):
                raise Error(7, "--t-end %s is not a multiple of H = %g s (from %s)" % (options["t_end"], opt.H, path))
        if output is None and _lib.hymo_cosim_system_output(sys_ptr):
            output = _lib.hymo_cosim_system_output(sys_ptr).decode()
        if reference is None and _lib.hymo_cosim_system_reference(sys_ptr):
            reference = _lib.hymo_cosim_system_reference(sys_ptr).decode()
        _default_thresholds(opt, reference)
        ref = _open_reference(reference)
        summary = _buffer("hymo_cosim_summary", _ffi.CosimSummary)
        _check(_lib.hymo_cosim_system_run(sys_ptr, ref.ptr if ref else None, os.fsencode(output) if output else None,
                                          ctypes.byref(summary), ctypes.byref(err)), err)
        return _cosim_result(summary)
    finally:
        _lib.hymo_cosim_system_free(sys_ptr)


_SWEEP_KEYS = (("coupling", "coupling"), ("extrapolation", "approx"), ("hyd", "hyd_integrator"),
               ("mech", "mech_integrator"), ("scheme", "scheme"), ("inputs", "mech_inputs"))
_SWEEP_OPTION = {"coupling": "coupling", "extrapolation": "extrapolation", "hyd": "hyd_integrator",
                 "mech": "mech_integrator", "scheme": "scheme", "inputs": "mech_inputs"}
SWEEP_CONFIGS = "coupling=velocity-force,velocity-pressure;extrapolation=0,2,interface-model;" \
                "hyd=euler,rk4,trapezoidal;mech=trapezoidal,index1;scheme=jacobi"
SWEEP_H = (0.5e-3, 1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 8e-3, 10e-3, 15e-3)


def _copy_options(src):
    dst = _buffer("hymo_cosim_options", _CosimOptions)
    ctypes.memmove(ctypes.addressof(dst), ctypes.addressof(src), _lib.hymo_struct_size(b"hymo_cosim_options"))
    return dst


def _sweep_reference(model, base, reference, reference_output):
    """The reference of a sweep: the given file, or `hymo run` with the
    model's defaults to the sweep's t_end (into reference_output, or a
    temporary file)."""
    import tempfile

    if reference is not None:
        return _open_reference(reference)
    ro = run_options(model)
    ro.t_end = base.mech.t_end
    tmpdir = None
    if reference_output is None:
        tmpdir = tempfile.TemporaryDirectory(prefix="hymo_sweep_")
        reference_output = os.path.join(tmpdir.name, "reference.h5")
    try:
        rs, err = _buffer("hymo_run_summary", _ffi.RunSummary), _new_err()
        _check(_lib.hymo_run(model._ptr, ctypes.byref(ro), os.fsencode(reference_output), ctypes.byref(rs),
                             ctypes.byref(err)), err)
        return _open_reference(reference_output)
    finally:
        if tmpdir is not None:
            tmpdir.cleanup()


def sweep(model, H=None, configs=None, reference=None, set=None, achievable="limits", takeoff_slope=6.0,
          takeoff_floor=0.01, reference_output=None, set_grid=None, **options):
    """`hymo sweep MODEL.yaml [--H LIST] [--configs SPEC] ...`: every
    configuration of a grid at every communication step H, and each
    configuration's achievable H (the largest H of the list such that it
    and every smaller H pass: with achievable="limits" the verdict is
    accurate; with "takeoff" stable up to where the log-log slope of
    |final residual energy| against H exceeds takeoff_slope, energies
    below takeoff_floor J counted as the floor).  The same runs as the CLI
    (hymo_cosim_run per configuration and H, h_m = H), one after another in
    this process; there is no library function for the sweep, so the loop
    and the rule are here, the same as src/cli/sweep.c's.

    H: the steps (default SWEEP_H); configs: the CLI's SPEC string or a
    dict {"coupling": [...], "extrapolation": [...], "hyd": [...], "mech":
    [...], "scheme": [...], "inputs": [...]} (default SWEEP_CONFIGS; a key
    left out takes the value of the options); options: as cosim()'s (the
    thresholds default, when none is given, to max_rms s=1e-3, max_abs
    p=1e6, max_residual_energy 50); reference: a complete reference, else
    one is computed with `hymo run`'s defaults to t_end (into
    reference_output, or a temporary file).  set_grid: {PATH: [V1, V2,
    ...], ...} (--set-grid): the whole sweep (its reference, NAME_pN.h5 of
    reference_output, and every configuration x H) at every point of the
    cross product, the last PATH varying fastest; each row and each
    achievable entry has its "point" {PATH: value}.

    Returns {"runs": [...], "achievable": [...]}: one dict per run (config,
    the six option names, H, stable, pass, errors, the summary, reason) in
    the CLI's table order, and per configuration its achievable_H (0 if
    none)."""
    if achievable not in ("limits", "takeoff"):
        raise Error(7, "--achievable: '%s' is not limits or takeoff" % achievable)
    path = os.fspath(model)
    model = Model(path, set=set)
    base = _buffer("hymo_cosim_options", _CosimOptions)
    _lib.hymo_cosim_options_default(ctypes.byref(base), model._ptr)
    _cosim_apply(base, options)
    if not (base.max_residual_energy > 0 or any(base.max_rms) or any(base.max_abs)):
        _default_thresholds(base, True)
    Hs = sorted(float(h) for h in (H if H is not None else SWEEP_H))
    if not Hs or any(not (h > 0 and math.isfinite(h)) for h in Hs):
        raise Error(7, "--H: positive steps expected, got %r" % (H,))
    if any(a == b for a, b in zip(Hs, Hs[1:])):
        raise Error(7, "--H: a value appears twice")
    spec = configs if configs is not None else SWEEP_CONFIGS
    if isinstance(spec, str):
        grid = {}
        for part in spec.split(";"):
            if "=" not in part:
                raise Error(7, "--configs: '%s' is not KEY=VALUES" % part)
            k, v = part.split("=", 1)
            grid[k] = v.split(",")
    else:
        grid = {k: ([v] if isinstance(v, (str, int)) else list(v)) for k, v in spec.items()}
    for k in grid:
        if k not in _SWEEP_OPTION:
            raise Error(7, "--configs: unknown key '%s' (coupling, extrapolation, hyd, mech, scheme, inputs)" % k)
    axes = []
    for key, field in _SWEEP_KEYS:  # the CLI's nesting: coupling outermost, inputs innermost
        values = []
        for v in grid.get(key, [None]):
            if v is None:
                values.append(getattr(base, field))
                continue
            o = _copy_options(base)
            try:
                _cosim_apply(o, {_SWEEP_OPTION[key]: v if isinstance(v, str) else str(v)})
            except Error:
                raise Error(7, "--configs: %s: unknown value '%s'" % (key, v)) from None
            values.append(getattr(o, field))
        axes.append(values)
    if achievable == "takeoff" and 2 in axes[0]:
        raise Error(7, "--achievable takeoff: not defined for the tlm coupling (its residual energy is zero by "
                       "construction); use --achievable limits")
    import itertools

    if set_grid and reference is not None:
        raise Error(7, "--reference cannot be used with --set-grid (every parameter point needs its own reference; "
                       "the sweep computes them)")
    grid_paths = list((set_grid or {}).keys())
    grid_values = [[v if isinstance(v, str) else repr(v) if isinstance(v, float) else str(v) for v in set_grid[k]]
                   for k in grid_paths]
    points = list(itertools.product(*grid_values)) if grid_paths else [()]
    base_sets = [set] if isinstance(set, str) else list(set or [])
    runs, ach = [], []
    for pt, values in enumerate(points):
        point = dict(zip(grid_paths, values))
        pm = Model(path, set=base_sets + ["%s=%s" % kv for kv in point.items()]) if grid_paths else model
        ref_out = reference_output
        if ref_out is not None and grid_paths:
            stem, ext = os.path.splitext(ref_out)
            ref_out = "%s_p%d%s" % (stem, pt, ext or ".h5")
        ref = _sweep_reference(pm, base, reference, ref_out)
        for combo in itertools.product(*axes):
            cfg = []
            for h in Hs:
                o = _copy_options(base)
                for (key, field), v in zip(_SWEEP_KEYS, combo):
                    setattr(o, field, v)
                o.H = o.mech.dt = h
                summary, err = _buffer("hymo_cosim_summary", _ffi.CosimSummary), _new_err()
                st = _lib.hymo_cosim_run(pm._ptr, ctypes.byref(o), ref.ptr, None, ctypes.byref(summary),
                                         ctypes.byref(err))
                row = {"config": ",".join(getattr(_lib, fn)(v).decode() for fn, v in zip(
                    ("hymo_coupling_name", "hymo_approx_name", "hymo_hyd_integrator_name",
                     "hymo_mech_integrator_name", "hymo_cosim_scheme_name", "hymo_mech_inputs_name"), combo)),
                    "H": h, "status": st, "point": point}
                for (key, _), name in zip(_SWEEP_KEYS, row["config"].split(",")):
                    row[key] = name
                if st == 0:
                    row.update(_cosim_result(summary))
                    row["started"] = True
                    row["pass"] = bool(summary.stable) if achievable == "takeoff" else \
                        summary.verdict == 1  # HYMO_VERDICT_ACCURATE
                else:
                    row.update({"started": False, "stable": 0, "pass": False,
                                "reason": err.message.decode(errors="replace")})
                cfg.append(row)
            a = 0.0
            for i, row in enumerate(cfg):
                if not row["pass"]:
                    break
                if achievable == "takeoff" and i > 0:
                    e0 = max(abs(cfg[i - 1]["residual_energy_final"]), takeoff_floor)
                    e1 = max(abs(row["residual_energy_final"]), takeoff_floor)
                    if math.log(e1 / e0) / math.log(Hs[i] / Hs[i - 1]) > takeoff_slope:
                        for r2 in cfg[i:]:
                            r2["pass"] = False
                        break
                a = row["H"]
            runs += cfg
            ach.append(dict({k: cfg[0][k] for k, _ in _SWEEP_KEYS}, config=cfg[0]["config"], achievable_H=a,
                            point=point))
    return {"runs": runs, "achievable": ach, "H": Hs, "criterion": achievable}


def _fmu_binary():
    """libhymo_fmu.so: $HYMO_FMU_BINARY, next to the libhymo.so in use, or
    in its prefix's lib/hymo (as `hymo fmu` looks next to itself and in
    PREFIX/lib/hymo)."""
    env = os.environ.get("HYMO_FMU_BINARY")
    if env:
        return env
    libdir = os.path.dirname(os.path.realpath(library_path())) if os.sep in library_path() else ""
    for cand in (os.path.join(libdir, "libhymo_fmu.so"), os.path.join(libdir, "hymo", "libhymo_fmu.so"),
                 os.path.join(libdir, "..", "lib", "hymo", "libhymo_fmu.so")):
        if os.path.exists(cand):
            return cand
    raise Error(7, "the FMU binary libhymo_fmu.so was not found next to %s or in its lib/hymo (build the "
                   "hymo_fmu target, or set HYMO_FMU_BINARY)" % library_path())


def fmu_export(model, output, part="mechanics", set=None, **options):
    """`hymo fmu MODEL.yaml --part PART [options] -o OUT.fmu`: an FMI 2.0
    co-simulation FMU of one part of a model file ("mechanics",
    "circuit:NAME", "whole"), with the same entries as the CLI's
    (hymo_fmu_export_texts; the archive is written here with zipfile,
    atomically).  options: the co-simulation options of cosim() (H, hh,
    coupling, ...) and for "whole" the run options (dt, formulation, ...),
    with '_' for '-'; set: overrides.  Returns the entry names."""
    import zipfile

    model, output = os.fspath(model), os.fspath(output)
    opts = ["--part", part]
    for s_ in ([set] if isinstance(set, str) else set or []):
        opts += ["--set", s_]
    for key, value in options.items():
        k = key.replace("-", "_")
        name = _COSIM_OPTIONS.get(k, "--" + k.replace("_", "-"))
        if k in ("dt", "t_end") and part == "whole":
            name = "--" + k.replace("_", "-")
        if k in ("max_rms", "max_abs"):
            for nv in _thresholds(value, name):
                opts += [name, "%s=%s" % nv]
            continue
        opts += [name, value if isinstance(value, str) else repr(value) if isinstance(value, float) else str(value)]
    arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
    texts = (ctypes.c_void_p * 3)()
    binary_name = ctypes.create_string_buffer(256)
    err = _new_err()
    _check(_lib.hymo_fmu_export_texts(model.encode(), len(opts), arr, texts, binary_name, 256, ctypes.byref(err)),
           err)
    try:
        entries = [(_lib.hymo_fmu_text_name(k).decode(), ctypes.string_at(texts[k])) for k in range(3)]
    finally:
        _lib.hymo_fmu_texts_free(texts)
    binary = _fmu_binary()
    tmp = "%s.%d.partial" % (output, os.getpid())
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in entries:
                z.writestr(name, data)
            z.write(binary, binary_name.value.decode())
        os.replace(tmp, output)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise Error(1, "%s: cannot write: %s" % (output, e)) from None
    return [n for n, _ in entries] + [binary_name.value.decode()]


def info(path):
    """`hymo info OUT.h5`: the summary stored in a reference file
    (hymo_run_summary as a dict, as `Model.run` returns it) with the
    file's rows, complete, model, output_every, overrides and, for a
    co-simulation, its /cosim status."""
    ref = _Ref(os.fspath(path))
    r = ref.r
    out = _struct_dict(r.summary)
    out.update({"rows": r.n, "complete": r.complete, "model_sha256": r.model_sha256.decode(),
                "model_physics_sha256": r.model_physics_sha256.decode(), "output_every": r.output_every,
                "overrides": r.overrides.decode().splitlines() if r.overrides else [],
                "hymo_version": r.hymo_version.decode(), "running": bool(r.live), "cosim": None})
    if r.has_cosim:
        out["cosim"] = {k: getattr(r, "cosim_" + k).decode() for k in ("scheme", "coupling", "extrapolation",
                                                                        "hyd_integrator", "mech_integrator",
                                                                        "status", "status_reason")}
        out["cosim"].update({"H": r.cosim_H, "h_m": r.cosim_h_m, "h_h": r.cosim_h_h, "n_bonds": r.n_bonds,
                             "residual_energy_final": r.cosim_residual_energy_final})
    return out


def _swmr_flagged(path):
    """True if the file's superblock (version 2/3, at offset 0) still says
    "open in SWMR-write mode" (a file being written, or a killed run's
    OUT.h5.XXXXXX.partial): plain h5py.File(path, "r") refuses it with
    "file is already open for write"."""
    try:
        with open(path, "rb") as fp:
            sb = fp.read(12)
    except OSError:
        return False
    return len(sb) == 12 and sb[:8] == b"\x89HDF\r\n\x1a\n" and sb[8] >= 2 and bool(sb[11] & 0x04)


def _open_h5(path):
    """h5py.File of a reference file, read-only.  A file flagged "being
    written" is opened as HDF5's SWMR reader, with one metadata read
    attempt when the libhdf5 that h5py uses can be told so (HDF5's default
    for SWMR readers, 100 attempts with growing sleeps, hangs for many
    minutes on a damaged file).  Returns (file, swmr)."""
    import h5py

    if not _swmr_flagged(path):
        return h5py.File(path, "r"), False
    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    try:  # the libhdf5 that h5py loaded (same soname: the same library)
        with open("/proc/self/maps") as maps:
            libs = [ln.split()[-1] for ln in maps if "libhdf5" in ln and "hl" not in ln.split("/")[-1]]
        if libs:
            h5lib = ctypes.CDLL(libs[0])
            h5lib.H5Pset_metadata_read_attempts.argtypes = [ctypes.c_int64, ctypes.c_uint]
            h5lib.H5Pset_metadata_read_attempts(fapl.id, 1)
    except (OSError, AttributeError):
        pass
    fid = h5py.h5f.open(os.fsencode(path), h5py.h5f.ACC_RDONLY | h5py.h5f.ACC_SWMR_READ, fapl=fapl)
    return h5py.File(fid), True


def read(path):
    """A reference file (docs/hdf5-format.md) as a dict: root attributes
    under "attrs", every dataset as a NumPy array under its path without
    the leading '/' ("time", "states/z", "energy/drift", "cosim/...") and
    the column names under "names" ({"states/z": [...], ...}).  Matrices
    are [N x columns], one row per output time (row-major, as in the file).
    Uses h5py.  A file being written, or a killed run's OUT.h5.XXXXXX.partial
    (still flagged "being written"), is read as HDF5's SWMR reader: its N
    is the row count of /time, and every dataset is cut to N rows.  Stored
    values that do not match their checksum raise Error (damaged file)."""
    import h5py

    out = {"attrs": {}, "names": {}, "units": {}}
    try:
        f, swmr = _open_h5(path)
    except OSError as e:
        raise Error(1, "reference file '%s': %s" % (path, e)) from None
    def text(v):  # fixed-length string attributes read as bytes (or numpy bytes)
        if isinstance(v, bytes):
            return v.decode(errors="replace")
        return v.decode(errors="replace") if hasattr(v, "decode") else str(v)

    try:
        with f:
            n = f["time"].shape[0] if swmr and "time" in f else None
            for k, v in f.attrs.items():
                out["attrs"][k] = text(v) if isinstance(v, bytes) or hasattr(v, "decode") else v

            def visit(name, obj):
                if isinstance(obj, h5py.Dataset):
                    try:
                        cut = n is not None and obj.ndim > 0 and obj.shape[0] > n
                        out[name] = obj[:n] if cut else obj[()]
                    except OSError as e:
                        raise Error(1, "reference file '%s': dataset '/%s' is damaged or unreadable: %s"
                                    % (path, name, e)) from None
                    if "names" in obj.attrs:
                        out["names"][name] = [text(s) for s in obj.attrs["names"]]
                    if "units" in obj.attrs:
                        u = obj.attrs["units"]
                        out["units"][name] = text(u) if isinstance(u, (str, bytes)) or hasattr(u, "decode") \
                            else [text(s) for s in u]
                elif obj.attrs:
                    out["attrs"][name] = {k: text(v) if isinstance(v, bytes) or hasattr(v, "decode") else v
                                          for k, v in obj.attrs.items()}

            f.visititems(visit)
    except Error:
        raise
    except (OSError, RuntimeError, KeyError) as e:  # damaged metadata or values
        raise Error(1, "reference file '%s': damaged or unreadable: %s" % (path, e)) from None
    return out

