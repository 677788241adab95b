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

__all__ = ["Error", "Model", "Sim", "load", "loads", "run_options", "compare", "cosim", "read", "library_path"]

_lib = _ffi.load_library()
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
            v = list(v)
        elif isinstance(v, ctypes.Structure):
            v = _struct_dict(v)
        out[name] = v
    return out


# ---- options ----

_ENUMS = {
    "integrator": {"trapezoidal": 0, "trapezoidal-newton": 0, "ida": 1},
    "newton_test": {"contractive": 0, "seed": 1},
    "formulation": {"double-step": 0, "double_step": 0, "penalty": 1},
    "jacobian": {"numeric": 0, "fast": 1},
    "linear_solver": {"dense": 0, "klu": 1},
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
    linear_solver="dense"|"klu", newton_test, predictor, penalty_alpha,
    tol_position, tol_pressure, tol_spool, max_iter, reselect_ratio,
    verbose, rtol, atol, error_estimate, output_every, penalty_alpha_auto;
    giving penalty_alpha sets penalty_alpha_auto = 0 unless both are given), checked
    (hymo_run_options_check)."""
    opt = _buffer("hymo_run_options", _ffi.RunOptions)
    _lib.hymo_run_options_default(ctypes.byref(opt), model._ptr)
    if "penalty_alpha" in options and "penalty_alpha_auto" not in options:  # an explicit factor is used as given
        options = dict(options, penalty_alpha_auto=0)
    _set_fields(opt, options, _ENUMS, "run options")
    err = _new_err()
    _check(_lib.hymo_run_options_check(ctypes.byref(opt), ctypes.byref(err)), err)
    return opt


# ---- models ----


class Model:
    """A loaded model (hymo_model): read-only, shared by every run of it.
    hymo.Model(path) loads a model file (as hymo.load(path))."""

    def __init__(self, path):
        if isinstance(path, ctypes.c_void_p):  # from_file / from_string: the loaded hymo_model
            ptr = path
        elif isinstance(path, (str, bytes, os.PathLike)):
            err, ptr = _new_err(), ctypes.c_void_p()
            _check(_lib.hymo_model_load_file(os.fsencode(path), ctypes.byref(ptr), ctypes.byref(err)), err)
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


def load(path):
    """Loads a model file (YAML, docs/model-format.md)."""
    return Model.from_file(path)


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
        if getattr(self, "_ptr", None):
            _lib.hymo_sim_free(self._ptr)
            self._ptr = None

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
    def __init__(self, path):
        self.ptr, err = ctypes.c_void_p(), _new_err()
        _check(_lib.hymo_ref_read(os.fsencode(path), ctypes.byref(self.ptr), ctypes.byref(err)), err)

    def __del__(self):
        if getattr(self, "ptr", None):
            _lib.hymo_ref_free(self.ptr)
            self.ptr = None


def _compare_dict(r):
    out = {"n_samples": r.n_samples, "t_start": r.t_start, "t_end": r.t_end}
    for k in range(_ffi.NCMP):
        name = _lib.hymo_compare_signal_name(k).decode()
        out[name] = {"rms": r.rms[k], "max": r.max[k], "worst_rms": r.worst_rms[k], "worst_max": r.worst_max[k],
                     "t_worst_max": r.t_worst_max[k]}
    if r.has_residual_energy:
        out["residual_energy"] = {"final": r.residual_energy_final, "max_abs": r.residual_energy_max_abs,
                                  "rms_diff": r.residual_energy_rms_diff}
    return out


def compare(reference, run):
    """Errors of the run file against the reference file (hymo compare,
    docs/compare.md): {signal: {rms, max, worst_rms, worst_max,
    t_worst_max}} for z, zd, s, sd, p, U, force (largest over components),
    plus n_samples, t_start, t_end and residual_energy when present."""
    ref, rn = _Ref(reference), _Ref(run)
    res, err = _buffer("hymo_compare_result", _ffi.CompareResult), _new_err()
    _check(_lib.hymo_compare_trajectories(ref.ptr, rn.ptr, ctypes.byref(res), ctypes.byref(err)), err)
    return _compare_dict(res)


_COSIM_ENUMS = {
    "scheme": {"jacobi": 0, "gauss-seidel-mech-first": 1, "gauss-seidel-hyd-first": 2},
    "coupling": {"velocity-force": 0, "velocity-pressure": 1},
    "approx": {"0": 0, "1": 1, "2": 2, "3": 3, "quadratic": 4, "interface-model": 5},
    "hyd_integrator": {"euler": 0, "rk4": 1, "trapezoidal": 2},
    "mech_integrator": {"trapezoidal": 0, "index1": 1},
}


def cosim(model, output=None, reference=None, **options):
    """Co-simulation (hymo_cosim_run, include/hymo/cosim.h).  Options:
    scheme, coupling, approx (0..3, "quadratic", "interface-model"),
    hyd_integrator, mech_integrator, H, h_h, unstable_energy, and the
    mechanical run options (dt is h_m, t_end, formulation, jacobian, ...).
    `reference`: a reference file of the same model for the error
    metrics.  Returns the summary as a dict ("errors" as compare())."""
    if isinstance(model, str):
        model = load(model)
    opt = _buffer("hymo_cosim_options", _CosimOptions)
    _lib.hymo_cosim_options_default(ctypes.byref(opt), model._ptr)
    mech = {k: v for k, v in options.items() if k.replace("-", "_") in _RUN_KEYS}
    rest = {k: (str(v) if k == "approx" and isinstance(v, int) else v) for k, v in options.items() if k not in mech}
    _set_fields(opt.mech, mech, _ENUMS, "co-simulation options")
    _set_fields(opt, rest, _COSIM_ENUMS, "co-simulation options")
    err = _new_err()
    _check(_lib.hymo_cosim_options_check(ctypes.byref(opt), ctypes.byref(err)), err)
    ref = _Ref(reference) if reference else None
    summary = _buffer("hymo_cosim_summary", _ffi.CosimSummary)
    st = _lib.hymo_cosim_run(model._ptr, ctypes.byref(opt), ref.ptr if ref else None,
                             os.fsencode(output) if output else None, ctypes.byref(summary), ctypes.byref(err))
    _check(st, err)
    out = _struct_dict(summary)
    out["errors"] = _compare_dict(summary.errors) if summary.has_errors else None
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

