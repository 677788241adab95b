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
            info = {"nfev": int(d["nfev"]), "wall": float(d["wall"]), "cached": True}
            if "ev_t" in d:
                info["events"] = [(float(a), str(b)) for a, b in zip(d["ev_t"], d["ev_label"])]
            return model.outputs(Y), info
    if hasattr(model, "events"):
        Y, nfev, wall, events = _solve_events(model, t, method, rtol, atol)
        if key:
            os.makedirs(cdir, exist_ok=True)
            np.savez(key + ".tmp.npz", Y=Y, nfev=nfev, wall=wall,
                     ev_t=np.array([e[0] for e in events]), ev_label=np.array([e[1] for e in events], dtype="U40"))
            os.replace(key + ".tmp.npz", key)
        return model.outputs(Y), {"nfev": nfev, "wall": wall, "cached": False, "events": events}
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


def _event_fn(g, direction):
    def f(t, y):
        return g(t, y)
    f.terminal = True
    f.direction = direction
    return f


def _solve_events(model, t, method, rtol, atol):
    """Integration with located events (models with `events`, `mode_at`).

    Inside an input segment [a, b) the right-hand side uses a fixed mode
    (which force law or valve edges apply); the model lists the switching
    functions of that mode with the direction of the crossing.  solve_ivp
    stops at the first crossing (terminal events, located on the dense
    output to round-off in t); the state at the event is then recomputed by
    integrating from the last accepted step to the event time (so the restart
    state is a step end, not an interpolated value), the mode switches to the
    side being entered, and the integration restarts there.  Output rows are
    read from the dense output of the piece that contains them.
    """
    y = model.y0()
    edges = [0.0] + [b for b in model.breakpoints if 0.0 < b < t[-1]] + [t[-1]]
    Y = np.full((len(t), len(y)), np.nan)
    nfev = 0
    events = []
    extra = {}
    if method in ("DOP853", "RK45", "RK23") and getattr(model, "explicit_max_step", None):
        extra["max_step"] = model.explicit_max_step
    mode = None
    t0 = time.perf_counter()
    for a, b in zip(edges[:-1], edges[1:]):
        seg = (a, b)
        mode = model.mode_at(a, y, seg, mode)
        ta = a
        last = b == edges[-1]
        while True:
            evs = model.events(mode, ta, y, seg)
            fns = [_event_fn(g, d) for g, d, _, _ in evs]
            sol = solve_ivp(lambda tt, yy, m=mode: model.rhs(tt, yy, seg, m), (ta, b), y,
                            method=method, rtol=rtol, atol=atol, dense_output=True, events=fns, **extra)
            nfev += sol.nfev
            if sol.status == -1:
                raise RuntimeError("solve_ivp failed on [%g, %g]: %s" % (ta, b, sol.message))
            if sol.status == 1:
                # the earliest event of this piece
                k = min((i for i in range(len(evs)) if len(sol.t_events[i])), key=lambda i: sol.t_events[i][0])
                te = float(sol.t_events[k][0])
                # state at te from a step end: integrate from the last accepted step
                tk = float(sol.t[-2])
                if te > tk:
                    yk = sol.y[:, -2]
                    sol2 = solve_ivp(lambda tt, yy, m=mode: model.rhs(tt, yy, seg, m), (tk, te), yk,
                                     method=method, rtol=rtol, atol=atol, **extra)
                    nfev += sol2.nfev
                    ye = sol2.y[:, -1].copy()
                else:
                    ye = sol.y_events[k][0].copy()
                sel = (t >= ta) & (t < te)
                if sel.any():
                    Y[sel] = sol.sol(t[sel]).T
                events.append((te, evs[k][3]))
                mode = evs[k][2]
                ta, y = te, ye
                if ta >= b:   # an event on the segment's end: nothing left of it
                    if last:
                        Y[t >= ta] = ye
                    break
                continue
            sel = ((t >= ta) & (t <= b)) if last else ((t >= ta) & (t < b))
            if sel.any():
                Y[sel] = sol.sol(t[sel]).T
            y = sol.y[:, -1].copy()
            break
    wall = time.perf_counter() - t0
    if np.isnan(Y).any():
        raise RuntimeError("output rows not filled")
    return Y, nfev, wall, events
