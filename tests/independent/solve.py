"""Integrate an independent model with scipy's solve_ivp on a given time grid.

The integration restarts at every input breakpoint (a jump of U_ref), so no
step straddles a discontinuity; inside a segment the input is evaluated with
one-sided limits.  Output is sampled with t_eval (the integrator's dense
output) at exactly the requested times.
"""

import hashlib
import os
import time

import numpy as np
from scipy.integrate import solve_ivp

RTOL = 1e-12


def solve(model, t, method=None, rtol=RTOL, atol=None, cache=True):
    """Return (outputs dict, info dict) of `model` at the times t (ascending, t[0] = 0).

    method: a solve_ivp method (default: the model's, DOP853 or Radau).
    With HYMO_INDEP_CACHE set to a directory, results are cached there.
    """
    t = np.asarray(t, float)
    method = method or model.method
    atol = model.atol if atol is None else atol
    cdir = os.environ.get("HYMO_INDEP_CACHE")
    key = None
    if cache and cdir:
        h = hashlib.sha256()
        h.update(("%s|%s|%r|%r|%r|" % (model.name, method, rtol, list(np.atleast_1d(atol)),
                                        getattr(model, "explicit_max_step", None))).encode())
        h.update(t.tobytes())
        h.update(open(__file__.replace("solve.py", "models.py"), "rb").read())
        h.update(open(__file__.replace("solve.py", "lagrange.py"), "rb").read())
        key = os.path.join(cdir, "%s-%s.npz" % (model.name, h.hexdigest()[:16]))
        if os.path.exists(key):
            d = np.load(key)
            Y = d["Y"]
            return model.outputs(Y), {"nfev": int(d["nfev"]), "wall": float(d["wall"]), "cached": True}
    y = model.y0()
    edges = [0.0] + [b for b in model.breakpoints if 0.0 < b < t[-1]] + [t[-1]]
    Y = np.empty((len(t), len(y)))
    nfev = 0
    t0 = time.perf_counter()
    for a, b in zip(edges[:-1], edges[1:]):
        sel = (t >= a) & (t <= b) if b == edges[-1] else (t >= a) & (t < b)
        teval = t[sel]
        if len(teval) and teval[-1] < b:
            teval_ = np.append(teval, b)
        else:
            teval_ = teval
        extra = {}
        if method in ("DOP853", "RK45", "RK23") and getattr(model, "explicit_max_step", None):
            extra["max_step"] = model.explicit_max_step
        sol = solve_ivp(lambda tt, yy: model.rhs(tt, yy, (a, b)), (a, b), y, method=method,
                        rtol=rtol, atol=atol, t_eval=teval_ if len(teval_) else None, **extra)
        if sol.status != 0:
            raise RuntimeError("solve_ivp failed on [%g, %g]: %s" % (a, b, sol.message))
        nfev += sol.nfev
        Ys = sol.y.T
        if len(teval):
            Y[sel] = Ys[: len(teval)]
        y = sol.y[:, -1].copy()
    wall = time.perf_counter() - t0
    if key:
        os.makedirs(cdir, exist_ok=True)
        np.savez(key + ".tmp.npz", Y=Y, nfev=nfev, wall=wall)
        os.replace(key + ".tmp.npz", key)
    return model.outputs(Y), {"nfev": nfev, "wall": wall, "cached": False}
