"""ctypes declarations of libhymo.so (include/hymo/*.h).

The structs below mirror the C layouts member by member; `_hymo_` names the
C struct.  python/tests/test_layout.py checks every member's offset and size
and every struct's size against the layout probe built from the headers
(tests/layout_probe.py), and fails on a header member the mirror lacks.
At load time the library is asked for a few offsets and sizes
(hymo_struct_offset, hymo_struct_size), so that this package paired with a
libhymo.so of another layout fails at import; buffers handed to the library
are allocated with the library's own sizeof.
"""
import ctypes
import ctypes.util
import os

TEXT = 128  # HYMO_REF_TEXT_MAX
LIST = 8192  # HYMO_REF_LIST_MAX
NAME = 64  # HYMO_NAME_MAX
NCMP = 7  # HYMO_CMP_SIGNALS
c_int, c_long, c_double, c_char_p, c_void_p = ctypes.c_int, ctypes.c_long, ctypes.c_double, ctypes.c_char_p, ctypes.c_void_p


class Error_(ctypes.Structure):
    _hymo_ = "hymo_error"
    _fields_ = [("code", c_int), ("message", ctypes.c_char * 512)]


class RunOptions(ctypes.Structure):
    _hymo_ = "hymo_run_options"
    _fields_ = [
        ("integrator", c_int), ("newton_test", c_int), ("formulation", c_int), ("jacobian", c_int),
        ("linear_solver", c_int), ("predictor", c_int),
        ("dt", c_double), ("t_end", c_double), ("penalty_alpha", c_double),
        ("tol_position", c_double), ("tol_pressure", c_double), ("tol_spool", c_double),
        ("max_iter", c_int), ("reselect_ratio", c_double), ("verbose", c_int),
        ("rtol", c_double), ("atol", c_double), ("error_estimate", c_int), ("output_every", c_int),
        ("progress", c_int), ("penalty_alpha_auto", c_int),
    ]


class VolumeRange(ctypes.Structure):
    _hymo_ = "hymo_volume_range"
    _fields_ = [
        ("name", ctypes.c_char * TEXT), ("p_min", c_double), ("p_min_time", c_double), ("p_max", c_double),
        ("p_max_time", c_double), ("below_floor", c_int),
    ]


SUMMARY_VOLUMES = 32  # HYMO_SUMMARY_VOLUMES


class RunSummary(ctypes.Structure):
    _hymo_ = "hymo_run_summary"
    _fields_ = [
        ("model_name", ctypes.c_char * TEXT), ("formulation", ctypes.c_char * TEXT),
        ("jacobian", ctypes.c_char * TEXT), ("linear_solver", ctypes.c_char * TEXT),
        ("dt", c_double), ("t_end", c_double), ("t_reached", c_double), ("n_steps", c_long), ("complete", c_int),
        ("peak_drift", c_double), ("max_work", c_double), ("relative_drift", c_double),
        ("max_constraint_position", c_double), ("max_constraint_velocity", c_double),
        ("max_constraint_acceleration", c_double), ("mean_iterations", c_double), ("max_iterations", c_int),
        ("jacobian_evaluations", c_long), ("independent", ctypes.c_char * TEXT), ("n_reselections", c_int),
        ("initial_rates", ctypes.c_char * (2 * TEXT)), ("singular_positions", ctypes.c_char * (2 * TEXT)),
        ("wall_time", c_double), ("integrator", ctypes.c_char * TEXT), ("has_accuracy", c_int),
        ("accuracy_method", ctypes.c_char * TEXT), ("z_max_error", c_double), ("p_max_error", c_double),
        ("s_max_error", c_double), ("accuracy_missing_reason", ctypes.c_char * (2 * TEXT)),
        ("accuracy_reliable", c_int), ("accuracy_observed_order", c_double * 3),
        ("accuracy_check", ctypes.c_char * (2 * TEXT)),
        ("n_events", c_long), ("event_iterations", c_long),
        ("has_pressure_range", c_int), ("p_min", c_double), ("p_min_time", c_double), ("p_max", c_double),
        ("p_max_time", c_double), ("p_min_volume", ctypes.c_char * TEXT), ("p_max_volume", ctypes.c_char * TEXT),
        ("n_volumes_below_zero", c_int), ("wall_total", c_double),
        ("fluid_model", ctypes.c_char * TEXT), ("p_floor", c_double), ("n_volumes_below_floor", c_int),
        ("n_volumes_total", c_int), ("n_volume_ranges", c_int), ("volume_ranges", VolumeRange * SUMMARY_VOLUMES),
        ("independent_list", ctypes.c_char * LIST), ("constraint_rank", c_int), ("n_redundant", c_int),
        ("redundant", ctypes.c_char * TEXT), ("max_redundant_violation", c_double), ("step_halvings", c_long),
    ]


class CompareResult(ctypes.Structure):
    _hymo_ = "hymo_compare_result"
    _fields_ = [
        ("n_samples", c_int), ("t_start", c_double), ("t_end", c_double),
        ("rms", c_double * NCMP), ("max", c_double * NCMP),
        ("worst_rms", c_int * NCMP), ("worst_max", c_int * NCMP), ("t_worst_max", c_double * NCMP),
        ("has_residual_energy", c_int), ("residual_energy_final", c_double),
        ("residual_energy_max_abs", c_double), ("residual_energy_rms_diff", c_double),
    ]


class CosimSummary(ctypes.Structure):
    _hymo_ = "hymo_cosim_summary"
    _fields_ = [
        ("stable", c_int), ("reason", ctypes.c_char * 512), ("verdict", c_int),
        ("verdict_reason", ctypes.c_char * 512), ("work_abs", c_double), ("max_residual_ratio", c_double),
        ("max_balance_ratio", c_double), ("t_reached", c_double), ("n_macro", c_long),
        ("n_bonds", c_int), ("residual_energy_final", c_double), ("residual_energy_max_abs", c_double),
        ("peak_drift", c_double), ("max_work", c_double), ("max_constraint_position", c_double),
        ("mean_mech_iterations", c_double), ("hyd_steps", c_long), ("hyd_rhs_evals", c_long),
        ("wall_time", c_double), ("has_errors", c_int), ("errors", CompareResult),
        ("n_tlm", c_int), ("tlm_mass_initial_max", c_double), ("tlm_mass_max", c_double),
        ("tlm_report", ctypes.c_char * 1024), ("tlm_inertia_initial_max", c_double), ("tlm_inertia_max", c_double),
        ("has_pressure_error", c_int), ("max_pressure_error", c_double), ("t_max_pressure_error", c_double),
        ("balance_jump_excess", c_double), ("balance_jump_at", c_double), ("balance_jump_t0", c_double),
        ("balance_jump_t1", c_double), ("balance_jump", c_double),
        ("H_control", c_int), ("n_rejected", c_long), ("H_used_min", c_double), ("H_used_max", c_double),
        ("H_used_mean", c_double), ("est_max", c_double), ("can_reject", c_int), ("control_note", ctypes.c_char * 256),
        ("iterate_total", c_long), ("iterate_non_converged", c_long), ("iterate_max_residual", c_double),
        ("iterate_n_coupling", c_int),
    ]


_TEXTS = ctypes.c_char * TEXT
_PT = ctypes.POINTER(_TEXTS)
_PD = ctypes.POINTER(c_double)


class Reference(ctypes.Structure):
    """hymo_reference: a reference file in memory (hymo_ref_read)."""
    _hymo_ = "hymo_reference"
    _fields_ = [
        ("n", c_int), ("nz", c_int), ("np", c_int), ("nu", c_int), ("na", c_int), ("ncut", c_int),
        ("format_version", c_int), ("complete", c_int), ("model_name", _TEXTS), ("model_sha256", ctypes.c_char * 65),
        ("formulation", _TEXTS), ("dt", c_double), ("t_end", c_double),
        ("z_names", _PT), ("p_names", _PT), ("u_names", _PT), ("actuator_names", _PT), ("cut_names", _PT),
        ("time", _PD), ("z", _PD), ("zd", _PD), ("zdd", _PD), ("p", _PD), ("u", _PD),
        ("s", _PD), ("sd", _PD), ("force", _PD), ("work", _PD), ("kinetic", _PD), ("potential", _PD), ("drift", _PD),
        ("c_pos", _PD), ("c_vel", _PD), ("c_acc", _PD), ("iterations", ctypes.POINTER(c_int)), ("residual", _PD),
        ("summary", RunSummary), ("z_units", _PT), ("model_source", c_char_p), ("hymo_version", _TEXTS),
        ("created_utc", _TEXTS), ("integrator", _TEXTS), ("jacobian", _TEXTS), ("linear_solver", _TEXTS),
        ("tol_position", c_double), ("tol_pressure", c_double), ("tol_spool", c_double), ("max_iter", c_int),
        ("penalty_alpha", c_double), ("has_summary", c_int), ("has_cosim", c_int), ("n_bonds", c_int),
        ("residual_power", _PD), ("residual_energy", _PD), ("residual_energy_total", _PD),
        ("cosim_scheme", _TEXTS), ("cosim_coupling", _TEXTS), ("cosim_extrapolation", _TEXTS),
        ("cosim_hyd_integrator", _TEXTS), ("cosim_mech_integrator", _TEXTS), ("cosim_status", _TEXTS),
        ("cosim_H", c_double), ("cosim_h_m", c_double), ("cosim_h_h", c_double), ("cosim_status_reason", _TEXTS),
        ("cosim_residual_energy_final", c_double), ("bond_names", _PT), ("model_physics_sha256", ctypes.c_char * 65),
        ("output_every", c_int), ("overrides", c_char_p), ("live", c_int), ("swmr", c_int),
        ("data_checksums", c_int),
    ]


class Body(ctypes.Structure):
    _hymo_ = "hymo_body"
    _fields_ = [
        ("name", ctypes.c_char * NAME), ("joint_name", ctypes.c_char * NAME), ("parent", c_int),
        ("joint_type", c_int), ("joint_location", c_double * 3), ("joint_axis", c_double * 3), ("z0", c_double),
        ("zd0", c_double), ("zd0_given", c_int), ("mass", c_double), ("com", c_double * 3), ("inertia", c_double * 9),
    ]


class Signal(ctypes.Structure):
    _hymo_ = "hymo_signal"
    _fields_ = [("name", ctypes.c_char * NAME), ("n_points", c_int), ("t", ctypes.POINTER(c_double)),
                ("v", ctypes.POINTER(c_double)), ("shape", c_void_p)]


class Fluid(ctypes.Structure):
    _hymo_ = "hymo_fluid"
    _fields_ = [("bulk_modulus_oil", c_double), ("density", c_double), ("p_transition", c_double)]


class FluidAir(ctypes.Structure):
    _hymo_ = "hymo_fluid_air"
    _fields_ = [("model", c_int), ("air_fraction", c_double), ("p_reference", c_double), ("p_vapour", c_double),
                ("polytropic_index", c_double)]


class SimDefaults(ctypes.Structure):
    _hymo_ = "hymo_sim_defaults"
    _fields_ = [("dt", c_double), ("t_end", c_double), ("penalty_alpha", c_double), ("tol_position", c_double),
                ("tol_pressure", c_double), ("tol_spool", c_double), ("max_iter", c_int)]


class Model_(ctypes.Structure):
    """hymo_model (arrays of elements not mirrored here are void *)."""
    _hymo_ = "hymo_model"
    _fields_ = [
        # identity
        ("name", ctypes.c_char * NAME), ("source_path", c_char_p), ("source_text", c_char_p),
        ("sha256", ctypes.c_char * 65), ("physics_sha256", ctypes.c_char * 65),
        ("n_overrides", c_int), ("overrides", ctypes.POINTER(c_char_p)),
        # bodies and joints
        ("gravity", c_double * 3), ("n_bodies", c_int), ("bodies", ctypes.POINTER(Body)),
        ("n_points", c_int), ("points", c_void_p), ("n_independent_hint", c_int),
        ("independent_hint", ctypes.POINTER(c_int)),
        # constraints
        ("n_cuts", c_int), ("cuts", c_void_p),
        # force elements
        ("n_force_elements", c_int), ("force_elements", c_void_p), ("n_force_switches", c_int),
        # actuators
        ("n_cylinders", c_int), ("cylinders", c_void_p), ("n_motors", c_int), ("motors", c_void_p),
        ("n_drivers", c_int), ("drivers", c_void_p),
        # hydraulics
        ("fluid", Fluid), ("fluid_air", FluidAir), ("n_nodes", c_int), ("nodes", c_void_p),
        ("n_subvolumes", c_int), ("subvolumes", c_void_p), ("n_volumes", c_int),
        ("n_accumulators", c_int), ("accumulators", c_void_p), ("n_throttles", c_int), ("throttles", c_void_p),
        ("n_valves", c_int), ("valves", c_void_p), ("valve_edges", c_void_p),
        ("n_relief_valves", c_int), ("relief_valves", c_void_p), ("n_check_valves", c_int),
        ("check_valves", c_void_p), ("n_flow_controls", c_int), ("flow_controls", c_void_p),
        ("n_pumps", c_int), ("pumps", c_void_p),
        # signals, sensors
        ("n_signals", c_int), ("signals", ctypes.POINTER(Signal)), ("n_sensors", c_int), ("sensors", c_void_p),
        # simulation settings
        ("defaults", SimDefaults), ("reselect_threshold", c_double), ("penalty_alpha_auto", c_int),
        # source lines of checks after loading
        ("volume_p0_line", ctypes.POINTER(c_int)), ("independent_line", c_int),
        ("driver_line", ctypes.POINTER(c_int)), ("cylinder_line", ctypes.POINTER(c_int)),
        # compiled data
        ("compiled", c_void_p),
    ]


INPUT_FN = ctypes.CFUNCTYPE(c_double, c_double, c_void_p)


def _candidates():
    env = os.environ.get("HYMO_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libhymo.so")  # a copy next to the package
    # installed by cmake --install / the .deb: PREFIX/lib/python3/dist-packages/hymo -> PREFIX/lib
    yield os.path.join(here, "..", "..", "..", "libhymo.so.0")
    yield "libhymo.so.0"  # installed (ldconfig, LD_LIBRARY_PATH)
    try:  # a prefix found through pkg-config (PKG_CONFIG_PATH)
        import subprocess
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "hymo"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, timeout=10).stdout.strip()
        if libdir:
            yield os.path.join(libdir, "libhymo.so.0")
    except (OSError, subprocess.SubprocessError):
        pass
    found = ctypes.util.find_library("hymo")
    if found:
        yield found
    root = os.path.dirname(os.path.dirname(here))  # source tree: python/hymo -> repo
    for build in ("build", "build-dbg", "build-ci", "build-release"):
        yield os.path.join(root, build, "libhymo.so")


def load_library():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        _declare(lib)
        lib._hymo_path = path
        return lib
    raise ImportError("hymo: cannot load libhymo.so; set HYMO_LIB to its path (e.g. build/libhymo.so). Tried: "
                      + "; ".join(tried))


def _declare(lib):
    P = ctypes.POINTER
    err = P(Error_)
    sigs = {
        "hymo_model_load_file": (c_int, [c_char_p, P(c_void_p), err]),
        "hymo_model_load_string": (c_int, [c_char_p, c_char_p, P(c_void_p), err]),
        "hymo_model_free": (None, [c_void_p]),
        "hymo_run_options_default": (None, [c_void_p, c_void_p]),
        "hymo_run_options_check": (c_int, [c_void_p, err]),
        "hymo_run": (c_int, [c_void_p, c_void_p, c_char_p, c_void_p, err]),
        "hymo_sim_create": (c_int, [c_void_p, c_void_p, P(c_void_p), err]),
        "hymo_sim_free": (None, [c_void_p]),
        "hymo_sim_step": (c_int, [c_void_p, err]),
        "hymo_sim_time": (c_double, [c_void_p]),
        "hymo_sim_steps": (c_long, [c_void_p]),
        "hymo_sim_summary": (None, [c_void_p, c_void_p]),
        "hymo_sim_set_input": (c_int, [c_void_p, c_char_p, c_double, err]),
        "hymo_sim_set_input_callback": (c_int, [c_void_p, c_char_p, INPUT_FN, c_void_p, err]),
        "hymo_sim_clear_input": (c_int, [c_void_p, c_char_p, err]),
        "hymo_sim_get_input": (c_int, [c_void_p, c_char_p, c_double, P(c_double), err]),
        "hymo_sim_set_parameter": (c_int, [c_void_p, c_char_p, c_double, err]),
        "hymo_sim_get_parameter": (c_int, [c_void_p, c_char_p, P(c_double), err]),
        "hymo_struct_size": (ctypes.c_size_t, [c_char_p]),
        "hymo_struct_offset": (ctypes.c_size_t, [c_char_p, c_char_p]),
        "hymo_ref_read": (c_int, [c_char_p, P(c_void_p), err]),
        "hymo_ref_free": (None, [c_void_p]),
        "hymo_compare_trajectories": (c_int, [c_void_p, c_void_p, c_void_p, err]),
        "hymo_compare_signal_name": (c_char_p, [c_int]),
        "hymo_cosim_options_default": (None, [c_void_p, c_void_p]),
        "hymo_cosim_options_check": (c_int, [c_void_p, err]),
        "hymo_cosim_run": (c_int, [c_void_p, c_void_p, c_void_p, c_char_p, c_void_p, err]),
        "hymo_status_name": (c_char_p, [c_int]),
        "hymo_model_load_file_set": (c_int, [c_char_p, P(c_char_p), c_int, P(c_void_p), err]),
        "hymo_cosim_option": (c_int, [c_char_p, c_char_p, c_void_p, err]),
        "hymo_cosim_verdict_name": (c_char_p, [c_int]),
        "hymo_ref_validate": (c_int, [c_void_p, c_char_p, err]),
        "hymo_model_identity": (c_int, [c_char_p, c_char_p, c_char_p, c_char_p]),
        "hymo_compare_component_offset": (c_int, [c_void_p, c_int]),
        "hymo_compare_signal_unit": (c_char_p, [c_void_p, c_int, c_int]),
        "hymo_compare_signal_find": (c_int, [c_char_p]),
        "hymo_compare_components_in": (c_int, [c_void_p, c_void_p, c_void_p, c_double, c_double, c_void_p,
                                               P(c_double), P(c_double), P(c_double), err]),
        "hymo_foreign_read_csv": (c_int, [c_char_p, c_char_p, c_void_p, P(c_void_p), P(c_void_p), err]),
        "hymo_foreign_component": (c_int, [c_void_p, c_char_p, P(c_int), P(c_int)]),
        "hymo_cosim_system_file": (c_int, [c_char_p]),
        "hymo_cosim_system_load": (c_int, [c_char_p, P(c_void_p), err]),
        "hymo_cosim_system_options": (c_void_p, [c_void_p]),
        "hymo_cosim_system_reference": (c_char_p, [c_void_p]),
        "hymo_cosim_system_output": (c_char_p, [c_void_p]),
        "hymo_cosim_system_run": (c_int, [c_void_p, c_void_p, c_char_p, c_void_p, err]),
        "hymo_cosim_system_free": (None, [c_void_p]),
        "hymo_fmu_export_texts": (c_int, [c_char_p, c_int, P(c_char_p), P(c_void_p), ctypes.c_char_p, ctypes.c_size_t,
                                          err]),
        "hymo_fmu_text_name": (c_char_p, [c_int]),
        "hymo_output_every_from_interval": (c_int, [c_double, c_double, P(c_int), err]),
        "hymo_sim_outputs_create": (c_int, [c_void_p, P(c_void_p), err]),
        "hymo_sim_outputs_free": (None, [c_void_p]),
        "hymo_sim_outputs_count": (c_int, [c_void_p]),
        "hymo_sim_outputs_path": (c_char_p, [c_void_p, c_int]),
        "hymo_sim_outputs_cols": (c_int, [c_void_p, c_int]),
        "hymo_sim_outputs_name": (c_char_p, [c_void_p, c_int, c_int]),
        "hymo_sim_outputs_units": (c_char_p, [c_void_p, c_int]),
        "hymo_sim_outputs_n_values": (c_int, [c_void_p]),
        "hymo_sim_outputs_eval": (c_int, [c_void_p, c_void_p, P(c_double), err]),
        "hymo_fmu_texts_free": (None, [P(c_void_p)]),
    }
    for fn in ("hymo_cosim_scheme_name", "hymo_coupling_name", "hymo_approx_name", "hymo_hyd_integrator_name",
               "hymo_mech_integrator_name", "hymo_mech_inputs_name", "hymo_integrator_name", "hymo_newton_test_name",
               "hymo_jacobian_name", "hymo_linsol_name", "hymo_formulation_name"):
        sigs[fn] = (c_char_p, [c_int])
    for n in ("nz", "np", "nu", "na"):
        sigs["hymo_sim_" + n] = (c_int, [c_void_p])
    for n in ("z", "zd", "zdd", "p", "pd", "u", "actuator_length", "actuator_force"):
        sigs["hymo_sim_" + n] = (P(c_double), [c_void_p])
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args
    for fn in ("hymo_version", "hymo_formulation_name"):
        if hasattr(lib, fn):
            getattr(lib, fn).restype = c_char_p
    _check_layouts(lib)


def _check_layouts(lib):
    # members whose offset the library states: an insertion before them breaks the mirror
    offsets = (("hymo_run_options", RunOptions, "output_every"), ("hymo_run_options", RunOptions, "penalty_alpha_auto"),
               ("hymo_run_summary", RunSummary, "event_iterations"),
               ("hymo_run_summary", RunSummary, "n_volumes_below_zero"),
               ("hymo_cosim_summary", CosimSummary, "verdict_reason"), ("hymo_cosim_summary", CosimSummary, "errors"),
               ("hymo_model", Model_, "gravity"), ("hymo_model", Model_, "bodies"),
               ("hymo_model", Model_, "signals"), ("hymo_body", Body, "inertia"), ("hymo_signal", Signal, "v"))
    for cname, mirror, field in offsets:
        off = lib.hymo_struct_offset(cname.encode(), field.encode())
        if off != getattr(mirror, field).offset:
            raise ImportError("hymo: python/hymo/_ffi.py's mirror of %s puts %s at byte %d, the library at %d: "
                              "update the mirror" % (cname, field, getattr(mirror, field).offset, off))
    for cname, mirror in (("hymo_body", Body), ("hymo_signal", Signal)):  # array elements: exact
        if lib.hymo_struct_size(cname.encode()) != ctypes.sizeof(mirror):
            raise ImportError("hymo: python/hymo/_ffi.py's mirror of %s (%d bytes) is not the library's (%d bytes)"
                              % (cname, ctypes.sizeof(mirror), lib.hymo_struct_size(cname.encode())))
    for cname, mirror in (("hymo_run_options", RunOptions), ("hymo_run_summary", RunSummary),
                          ("hymo_cosim_summary", CosimSummary), ("hymo_compare_result", CompareResult),
                          ("hymo_error", Error_)):
        size = lib.hymo_struct_size(cname.encode())
        exact = cname in ("hymo_compare_result", "hymo_error")  # embedded / fixed
        if size == 0 or size < ctypes.sizeof(mirror) or (exact and size != ctypes.sizeof(mirror)):
            raise ImportError("hymo: python/hymo/_ffi.py's mirror of %s (%d bytes) does not match the library's "
                              "(%d bytes): update the mirror" % (cname, ctypes.sizeof(mirror), size))


def cosim_options_type(lib):
    """hymo_cosim_options, with `mech` as large as the library's hymo_run_options."""
    pad = lib.hymo_struct_size(b"hymo_run_options") - ctypes.sizeof(RunOptions)

    class CosimOptions(ctypes.Structure):

        _hymo_ = "hymo_cosim_options"
        _fields_ = [
            ("scheme", c_int), ("coupling", c_int), ("approx", c_int), ("hyd_integrator", c_int),
            ("mech_integrator", c_int), ("mech", RunOptions), ("_mech_tail", ctypes.c_char * pad),
            ("H", c_double), ("h_h", c_double), ("mech_inputs", c_int), ("unstable_energy", c_double),
            ("unstable_ratio", c_double), ("unstable_balance_ratio", c_double), ("unstable_floor", c_double),
            ("max_rms", c_double * NCMP), ("max_abs", c_double * NCMP), ("max_residual_energy", c_double),
            ("max_balance_jump", c_double), ("balance_window", c_double), ("verbose", c_int),
            ("H_control", c_int), ("tol_energy_rel", c_double), ("tol_energy_abs", c_double), ("H_min", c_double),
            ("H_max", c_double), ("output_dt", c_double),
            ("iterate_max", c_int), ("iterate_rtol", c_double), ("iterate_atol", c_double), ("iterate_accel", c_int),
        ]

    off = lib.hymo_struct_offset(b"hymo_cosim_options", b"verbose")
    if off != CosimOptions.verbose.offset:
        raise ImportError("hymo: python/hymo/_ffi.py's mirror of hymo_cosim_options puts verbose at byte %d, the "
                          "library at %d: update the mirror" % (CosimOptions.verbose.offset, off))
    size = lib.hymo_struct_size(b"hymo_cosim_options")
    if size < ctypes.sizeof(CosimOptions):
        raise ImportError("hymo: python/hymo/_ffi.py's mirror of hymo_cosim_options (%d bytes) is larger than the "
                          "library's (%d bytes): update the mirror" % (ctypes.sizeof(CosimOptions), size))
    return CosimOptions
