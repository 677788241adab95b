"""docs/tutorial.md, run as a reader would: every ```yaml file=NAME and
```python file=NAME block is written to an empty directory, every ```sh
block is run there (each line one command; `exit=N` in the info string is
the exit status it must have, else 0) with the built hymo first on PATH,
and every ```text output block must appear, line by line and in order, in
what the ```sh block before it printed.  Words must match exactly; numbers
within 0.5 % (both below 1e-12 count as round-off and match).

env: HYMO_BINARY (the hymo executable), HYMO_TUTORIAL (the page; default
docs/tutorial.md of this tree), HYMO_TUTORIAL_WORK (the directory; default
a temporary one)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PAGE = os.environ.get("HYMO_TUTORIAL", os.path.join(HERE, "..", "..", "docs", "tutorial.md"))
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def blocks(text):
    """(line number, info string, body) of every fenced block."""
    out, lines, k = [], text.split("\n"), 0
    while k < len(lines):
        m = re.match(r"^```(\S.*)?$", lines[k])
        if m and m.group(1):
            start, body = k + 1, []
            k += 1
            while k < len(lines) and lines[k] != "```":
                body.append(lines[k])
                k += 1
            out.append((start, m.group(1).split(), "\n".join(body) + "\n"))
        k += 1
    return out


def same_line(shown, actual):
    """shown and actual agree: equal words, numbers within 0.5 %."""
    ws, wa = NUMBER.split(shown.strip()), NUMBER.split(actual.strip())
    ns, na = NUMBER.findall(shown.strip()), NUMBER.findall(actual.strip())
    if [w.split() for w in ws] != [w.split() for w in wa] or len(ns) != len(na):
        return False
    for a, b in zip(ns, na):
        x, y = float(a), float(b)
        if abs(x) < 1e-12 and abs(y) < 1e-12:
            continue
        if abs(x - y) > 5e-3 * max(abs(x), abs(y)):
            return False
    return True


def check_output(where, shown, printed):
    lines = printed.split("\n")
    k = 0
    for s in [s for s in shown.split("\n") if s.strip()]:
        while k < len(lines) and not same_line(s, lines[k]):
            k += 1
        if k == len(lines):
            raise AssertionError("%s: the output shown has the line\n    %s\nbut what was printed (from the "
                                 "previous match on) has none like it:\n%s" % (where, s, printed))
        k += 1


def test_tutorial():
    hymo = os.environ.get("HYMO_BINARY")
    assert hymo and os.access(hymo, os.X_OK), "HYMO_BINARY must name the built hymo"
    page = open(PAGE).read()
    work = os.environ.get("HYMO_TUTORIAL_WORK") or tempfile.mkdtemp(prefix="hymo-tutorial-")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    bindir = os.path.join(work, ".bin")
    os.makedirs(bindir)
    os.symlink(os.path.abspath(hymo), os.path.join(bindir, "hymo"))
    os.symlink(sys.executable, os.path.join(bindir, "python3"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    printed, n_files, n_cmds, n_outputs = None, 0, 0, 0
    for line, info, body in blocks(page):
        where = "%s:%d (```%s)" % (os.path.relpath(PAGE), line, " ".join(info))
        opts = dict(w.split("=", 1) for w in info[1:] if "=" in w)
        if "file" in opts:
            with open(os.path.join(work, opts["file"]), "w") as f:
                f.write(body)
            n_files += 1
        elif info[0] == "sh":
            want = int(opts.get("exit", "0"))
            printed = ""
            for cmd in [c for c in body.split("\n") if c.strip() and not c.startswith("#")]:
                r = subprocess.run(["bash", "-c", cmd], cwd=work, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, timeout=300)
                printed += r.stdout
                n_cmds += 1
                assert r.returncode == want, "%s: `%s` exited %d, the page says %d:\n%s" % (
                    where, cmd, r.returncode, want, r.stdout)
        elif info[:2] == ["text", "output"]:
            assert printed is not None, "%s: an output block with no command before it" % where
            check_output(where, body, printed)
            n_outputs += 1
    assert n_files >= 4 and n_cmds >= 8 and n_outputs >= 6, (n_files, n_cmds, n_outputs)
    print("tutorial: %d files, %d commands, %d outputs checked" % (n_files, n_cmds, n_outputs))
