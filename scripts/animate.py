#!/usr/bin/python3
"""The mechanism of a hymo run moving, from its HDF5 file alone (the model
is stored in it, docs/hdf5-format.md): bodies as segments from their joint
to their points and to their children's joints, cut joints as rings,
cylinders as thick lines coloured by their piston-side pressure.  Planar
models are drawn in their XY plane; spatial ones in 3-D from a fixed view
(--view ELEV,AZIM).  Needs python3-h5py, python3-matplotlib and python3-yaml
(Debian); a GIF needs python3-pil, an MP4 ffmpeg.

usage: scripts/animate.py OUT.h5 [-o OUT.gif|OUT.mp4] [--fps 20] [--speed 1]
                          [--view 25,-130] [--vtk DIR]

--speed 2 plays twice as fast as real time; --vtk DIR also writes the motion
for ParaView or any VTK reader: DIR/frame_NNNN.vtu (the segments as line
cells, with a `kind` cell field: 0 body, 1 cylinder, 2 cut joint; and the
cylinders' pressure in Pa) and DIR/motion.pvd (the time series)."""
import argparse
import math
import os
import sys

import numpy as np
import yaml
from plot_run import open_h5  # files flagged "being written" too (scripts/plot_run.py)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def angle(v):
    """A YAML angle: a number (rad) or a string such as '30 deg'."""
    if isinstance(v, str):
        s = v.strip()
        if s.endswith("deg"):
            return math.radians(float(s[:-3]))
        if s.endswith("rad"):
            return float(s[:-3])
        return float(s)
    return float(v)


def rotation(axis, q):
    """Rodrigues: the rotation by q about the unit axis."""
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(q) * K + (1 - math.cos(q)) * K @ K


class Mechanism:
    """The model's tree (from the YAML stored in the file) and its forward
    kinematics: frames of every body from the joint coordinates."""

    def __init__(self, model, z_names):
        self.model = model
        self.ground = {k: np.asarray(v, float) for k, v in ((model.get("ground") or {}).get("points") or {}).items()}
        self.bodies = {b["name"]: b for b in model.get("bodies", [])}
        self.points = {n: {k: np.asarray(v, float) for k, v in (b.get("points") or {}).items()}
                       for n, b in self.bodies.items()}
        self.col = {n: z_names.index(b["joint"]["name"]) for n, b in self.bodies.items()}
        order, seen = [], {"ground"}
        while len(order) < len(self.bodies):  # parents first
            for n, b in self.bodies.items():
                if n not in seen and b["joint"]["parent"] in seen:
                    order.append(n)
                    seen.add(n)
        self.order = order
        self.children = {n: [c for c in order if self.bodies[c]["joint"]["parent"] == n] for n in ["ground"] + order}
        self.planar = all(abs(b["joint"].get("axis", [0, 0, 1])[0]) < 1e-12
                          and abs(b["joint"].get("axis", [0, 0, 1])[1]) < 1e-12
                          or b["joint"]["type"] == "prismatic" for b in self.bodies.values())

    def local(self, body, loc):
        """A location in body's frame: a point name of body (or ground) or [x, y, z]."""
        if isinstance(loc, str):
            return self.ground[loc] if body == "ground" else self.points[body][loc]
        return np.asarray(loc, float)

    def frames(self, z):
        """{body: (origin, R)} for the joint coordinates z (ground included)."""
        f = {"ground": (np.zeros(3), np.eye(3))}
        for n in self.order:
            j = self.bodies[n]["joint"]
            po, Rp = f[j["parent"]]
            o = po + Rp @ self.local(j["parent"], j.get("location", [0, 0, 0]))
            axis = np.asarray(j.get("axis", [0, 0, 1]), float)
            q = z[self.col[n]]
            if j["type"] == "revolute":
                f[n] = (o, Rp @ rotation(axis, q))
            else:
                f[n] = (o + Rp @ (axis / np.linalg.norm(axis)) * q, Rp)
        return f

    def point(self, frames, ref, body=None):
        """Global position of a model point: 'body.point', 'ground.point', a
        unique point name, or (with body) a name or [x, y, z] of that body."""
        if body is None:
            if isinstance(ref, str) and "." in ref:
                body, ref = ref.split(".", 1)
            else:
                owners = [b for b in ["ground"] + self.order
                          if ref in (self.ground if b == "ground" else self.points[b])]
                if len(owners) != 1:
                    raise KeyError("point %r: %s" % (ref, "ambiguous" if owners else "unknown"))
                body = owners[0]
        o, R = frames[body]
        return o + R @ self.local(body, ref)

    def segments(self, frames):
        """Body segments: (start, end) pairs, joint to point and joint to child joint."""
        segs = []
        for n in self.order:
            o, R = frames[n]
            ends = [o + R @ p for p in self.points[n].values()]
            ends += [frames[c][0] for c in self.children[n]]
            if not ends:
                b = self.bodies[n]
                ends = [o + R @ np.asarray(b.get("com", [0, 0, 0]), float)]
            segs += [(o, e) for e in ends]
        return segs


def cylinders(model):
    """Each cylinder's base, rod and piston-side volume name."""
    hyd = model.get("hydraulics") or {}
    piston = {}
    for v in hyd.get("volumes", []):
        for part in v.get("parts", []):
            if isinstance(part, dict) and isinstance(part.get("chamber"), str) and part["chamber"].endswith(".piston"):
                piston[part["chamber"][:-len(".piston")]] = v["name"]
    return [(c["name"], c["base"], c["rod"], piston.get(c["name"])) for c in hyd.get("cylinders", [])]


def read(path):
    try:
        f, _ = open_h5(path)
    except OSError as e:
        sys.exit("animate.py: cannot read '%s': %s" % (path, e))
    with f:
        if "model_source" not in f.attrs or "states/z" not in f:
            sys.exit("animate.py: '%s' is not a hymo run file with its model (no model_source or /states/z)" % path)
        t = f["time"][()]  # a partial file's datasets may hold rows past /time's
        run = {"t": t, "z": f["states/z"][:len(t)],
               "z_names": [text(n) for n in f["states/z"].attrs["names"]],
               "model": yaml.safe_load(text(f.attrs["model_source"])),
               "name": text(f.attrs.get("model_name", "?"))}
        if "states/p" in f and f["states/p"].size:
            run["p"] = f["states/p"][:len(t)]
            run["p_names"] = [text(n) for n in f["states/p"].attrs["names"]]
        if "overrides" in f.attrs:
            print("animate.py: note: the file's --set overrides are not applied to the drawn geometry:\n  "
                  + text(f.attrs["overrides"]).replace("\n", "\n  "), file=sys.stderr)
    return run


def scene(run, k, mech, cyls):
    """Segments of row k: [(start, end, kind, pressure)] (kind 0 body, 1 cylinder, 2 cut joint)."""
    fr = mech.frames(run["z"][k])
    out = [(a, b, 0, np.nan) for a, b in mech.segments(fr)]
    for name, base, rod, vol in cyls:
        p = run["p"][k, run["p_names"].index(vol)] if vol and "p" in run else np.nan
        out.append((mech.point(fr, base), mech.point(fr, rod), 1, p))
    for c in run["model"].get("cut_joints", []) or []:
        a = mech.point(fr, c["point_a"], c["body_a"])
        out.append((a, a, 2, np.nan))
    return out


def write_vtk(run, rows, mech, cyls, outdir):
    """One VTU (XML UnstructuredGrid, line cells) per frame and a PVD collection."""
    os.makedirs(outdir, exist_ok=True)
    entries = []
    for i, k in enumerate(rows):
        segs = scene(run, k, mech, cyls)
        pts = np.array([p for s in segs for p in (s[0], s[1])])
        kinds = [s[2] for s in segs]
        press = [0.0 if np.isnan(s[3]) else s[3] for s in segs]
        name = "frame_%04d.vtu" % i
        with open(os.path.join(outdir, name), "w") as f:
            f.write('<?xml version="1.0"?>\n<VTKFile type="UnstructuredGrid" version="0.1" byte_order="LittleEndian">\n'
                    '<UnstructuredGrid>\n<Piece NumberOfPoints="%d" NumberOfCells="%d">\n' % (len(pts), len(segs)))
            f.write('<Points>\n<DataArray type="Float64" NumberOfComponents="3" format="ascii">\n')
            f.write("\n".join("%.17g %.17g %.17g" % tuple(p) for p in pts))
            f.write('\n</DataArray>\n</Points>\n<Cells>\n<DataArray type="Int64" Name="connectivity" format="ascii">\n')
            f.write(" ".join(str(j) for j in range(len(pts))))
            f.write('\n</DataArray>\n<DataArray type="Int64" Name="offsets" format="ascii">\n')
            f.write(" ".join(str(2 * (j + 1)) for j in range(len(segs))))
            f.write('\n</DataArray>\n<DataArray type="UInt8" Name="types" format="ascii">\n')
            f.write(" ".join("3" for _ in segs))  # VTK_LINE
            f.write('\n</DataArray>\n</Cells>\n<CellData Scalars="kind">\n')
            f.write('<DataArray type="Int32" Name="kind" format="ascii">\n%s\n</DataArray>\n' % " ".join(map(str, kinds)))
            f.write('<DataArray type="Float64" Name="pressure" format="ascii">\n%s\n</DataArray>\n'
                    % " ".join("%.17g" % p for p in press))
            f.write('</CellData>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n')
        entries.append('<DataSet timestep="%.17g" file="%s"/>' % (run["t"][k], name))
    with open(os.path.join(outdir, "motion.pvd"), "w") as f:
        f.write('<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1">\n<Collection>\n%s\n'
                '</Collection>\n</VTKFile>\n' % "\n".join(entries))


def frame_rows(t, fps, speed):
    """The rows shown: one per 1/fps s of playback (speed x real time)."""
    times = np.arange(t[0], t[-1] + 1e-12, speed / fps)
    return sorted(set(int(min(np.searchsorted(t, x), len(t) - 1)) for x in times))


def animation(run, rows, mech, cyls, fps, view):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import animation as anim
    from matplotlib import cm, colors

    every = [scene(run, k, mech, cyls) for k in rows]
    allp = np.array([p for a, b in ((s[0], s[1]) for sc in every for s in sc) for p in (a, b)])
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    pad = 0.08 * max(hi - lo) + 1e-3
    pr = [s[3] for sc in every for s in sc if s[2] == 1 and not np.isnan(s[3])]
    norm = colors.Normalize(min(pr) / 1e6 if pr else 0, max(pr) / 1e6 if pr else 1)
    cmap = cm.get_cmap("plasma")
    # 3-D: the model's "up" (against gravity; y when there is none) is the plot's vertical axis,
    # the axes permuted cyclically so the view stays right-handed
    g = np.asarray(run["model"].get("gravity", [0, -9.81, 0]), float)
    u = int(np.argmax(np.abs(g))) if np.any(g) else 1
    perm = [(u + 1) % 3, (u + 2) % 3, u] if not mech.planar else [0, 1, 2]
    lo, hi = lo[perm], hi[perm]
    fig = plt.figure(figsize=(6.4, 5.2))
    ax = fig.add_subplot(111, projection=None if mech.planar else "3d")
    if mech.planar:
        ax.set_xlim(lo[0] - pad, hi[0] + pad)
        ax.set_ylim(lo[1] - pad, hi[1] + pad)
        ax.set_aspect("equal")
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
    else:
        c, r = (lo + hi) / 2, max(hi - lo) / 2 + pad
        ax.set_xlim(c[0] - r, c[0] + r)
        ax.set_ylim(c[1] - r, c[1] + r)
        ax.set_zlim(c[2] - r, c[2] + r)
        ax.set_xlabel("%s (m)" % "xyz"[perm[0]])
        ax.set_ylabel("%s (m)" % "xyz"[perm[1]])
        ax.set_zlabel("%s (m)" % "xyz"[perm[2]])
        ax.view_init(elev=view[0], azim=view[1])
    ax.grid(alpha=0.3)
    if cyls:
        fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.7,
                     label="cylinder piston-side pressure (MPa)")
    artists = []

    def draw(i):
        for a in artists:
            a.remove()
        artists.clear()
        for a, b, kind, p in every[i]:
            xyz = [[a[d], b[d]] for d in (perm if not mech.planar else perm[:2])]
            if kind == 0:
                artists.extend(ax.plot(*xyz, "-o", color="0.25", lw=2.2, ms=3))
            elif kind == 1:
                col = cmap(norm(p / 1e6)) if not np.isnan(p) else "tab:blue"
                artists.extend(ax.plot(*xyz, "-", color=col, lw=5, solid_capstyle="round"))
            else:
                artists.extend(ax.plot(*[[v[0]] for v in xyz], "o", mfc="none", mec="tab:red", ms=9, mew=2))
        ax.set_title("%s   t = %.2f s" % (run["name"], run["t"][rows[i]]))
        return artists

    return fig, anim.FuncAnimation(fig, draw, frames=len(rows), interval=1000.0 / fps, blit=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("-o", "--output", help="GIF or MP4 to write (default: FILE with .gif)")
    ap.add_argument("--fps", type=float, default=20.0)
    ap.add_argument("--speed", type=float, default=1.0, help="playback speed, x real time")
    ap.add_argument("--view", default="25,-130", help="3-D models: elevation,azimuth in degrees")
    ap.add_argument("--vtk", metavar="DIR", help="also write DIR/frame_NNNN.vtu and DIR/motion.pvd")
    ap.add_argument("--no-movie", action="store_true", help="only the VTK files")
    a = ap.parse_args()
    if not (a.fps > 0 and a.speed > 0):
        sys.exit("animate.py: --fps and --speed must be positive")
    try:
        view = [float(v) for v in a.view.split(",")]
        assert len(view) == 2
    except (ValueError, AssertionError):
        sys.exit("animate.py: --view ELEV,AZIM, e.g. 20,-60")
    run = read(a.file)
    mech = Mechanism(run["model"], run["z_names"])
    cyls = cylinders(run["model"])
    rows = frame_rows(run["t"], a.fps, a.speed)
    if a.vtk:
        write_vtk(run, rows, mech, cyls, a.vtk)
        print(os.path.join(a.vtk, "motion.pvd"))
    if a.no_movie:
        return
    out = a.output or os.path.splitext(a.file.replace(".partial", ""))[0] + ".gif"
    fig, movie = animation(run, rows, mech, cyls, a.fps, view)
    if out.lower().endswith(".mp4"):
        from matplotlib import animation as anim
        if not anim.FFMpegWriter.isAvailable():
            sys.exit("animate.py: an MP4 needs ffmpeg (Debian: ffmpeg); write a .gif instead")
        movie.save(out, writer=anim.FFMpegWriter(fps=a.fps))
    else:
        from matplotlib import animation as anim
        movie.save(out, writer=anim.PillowWriter(fps=a.fps), dpi=80)
    print(out)


if __name__ == "__main__":
    main()
