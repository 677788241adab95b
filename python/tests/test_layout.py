"""The ctypes mirror (python/hymo/_ffi.py) against the C headers: every
ctypes.Structure of _ffi names its C struct (`_hymo_`) and declares every
member of it, in the header's order, at the header's offset and with the
header's size; the struct sizes are equal.  The C side is the output of
the layout probe (tests/layout_probe.py, CMake target layout_probe),
generated from include/hymo/*.h at build time; ctest (py_package) passes
its path in HYMO_LAYOUT_PROBE.  Fields of a mirror named with a leading
underscore are padding, not C members."""
import ctypes
import re
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
import hymo  # noqa: E402
from hymo import _ffi  # noqa: E402


def probe():
    exe = os.environ.get("HYMO_LAYOUT_PROBE")
    if not exe:
        pytest.skip("HYMO_LAYOUT_PROBE is not set (ctest's py_package sets it to the build's layout_probe)")
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    structs = {}
    for line in out.splitlines():
        w = line.split()
        if w[0] == "struct":
            structs[w[1]] = (int(w[2]), [])
        else:  # member STRUCT NAME OFFSET SIZE
            structs[w[1]][1].append((w[2], int(w[3]), int(w[4])))
    return structs


def mirrors():
    found = [c for c in vars(_ffi).values()
             if isinstance(c, type) and issubclass(c, ctypes.Structure) and c is not ctypes.Structure]
    return found + [_ffi.cosim_options_type(hymo._lib)]


def problems(cls, structs):
    cname = getattr(cls, "_hymo_", None)
    if not cname:
        return ["_ffi.%s: no _hymo_ (the C struct it mirrors)" % cls.__name__]
    if cname not in structs:
        return ["_ffi.%s: %s is not a struct of include/hymo/*.h" % (cls.__name__, cname)]
    size, members = structs[cname]
    fields = [f[0] for f in cls._fields_ if not f[0].startswith("_")]
    c_names = [m[0] for m in members]
    out = ["%s.%s: in the header, missing from _ffi.%s" % (cname, m, cls.__name__) for m in c_names if m not in fields]
    out += ["_ffi.%s.%s: not a member of %s" % (cls.__name__, f, cname) for f in fields if f not in c_names]
    common_c = [m for m in c_names if m in fields]
    common_py = [f for f in fields if f in c_names]
    if common_c != common_py:
        k = next(i for i, (a, b) in enumerate(zip(common_c, common_py)) if a != b)
        out.append("_ffi.%s: members in another order than %s's: %s where the header has %s"
                   % (cls.__name__, cname, common_py[k], common_c[k]))
    for name, off, sz in members:
        if name not in fields:
            continue
        d = getattr(cls, name)
        if (d.offset, d.size) != (off, sz):
            out.append("%s.%s: offset %d size %d in C, %d and %d in _ffi.%s"
                       % (cname, name, off, sz, d.offset, d.size, cls.__name__))
    if ctypes.sizeof(cls) != size:
        out.append("%s: %d bytes in C, %d in _ffi.%s" % (cname, size, ctypes.sizeof(cls), cls.__name__))
    return out


def test_every_mirror_matches_its_header_struct():
    structs = probe()
    classes = mirrors()
    assert len(classes) >= 13
    found = [p for c in classes for p in problems(c, structs)]
    assert not found, "\n".join(found)


def test_probe_lists_every_struct_typedef():
    """The probe sees each `typedef struct ... {` of the public headers
    (its parser misses none), and each of its structs has members."""
    structs = probe()
    n = 0
    for h in os.listdir(os.path.join(ROOT, "include", "hymo")):
        if h.endswith(".h"):
            with open(os.path.join(ROOT, "include", "hymo", h), encoding="utf-8") as f:
                n += len(re.findall(r"\btypedef\s+struct\s*\w*\s*\{", f.read()))
    assert len(structs) == n, (len(structs), n)
    assert all(members for _, members in structs.values())
