"""docs/python.md's block "Every command of the CLI" runs as written, in an
empty directory that sees the source tree's data/ (a link)."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def block(heading="## Every command of the CLI"):
    text = open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8").read()
    section = text.split(heading, 1)[1]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, "docs/python.md: no python block under '%s'" % heading
    return m.group(1)


def run_block(tmp_path, code):
    """code in an empty directory that sees data/, each bare expression
    line's value printed as a notebook shows it; its stdout."""
    os.symlink(os.path.join(ROOT, "data"), tmp_path / "data")
    script = tmp_path / "block.py"
    lines = []
    for ln in code.splitlines():
        code = ln.split("  #")[0].rstrip()
        bare = code and not code[0].isspace() and not code.startswith(("#", "import", "with ", "for ")) \
            and "=" not in code.replace("==", "").split("(")[0] and code.count("(") == code.count(")") \
            and code.count("[") == code.count("]") and not code.startswith(("hymo.", "m.run", "sim.set", "sim.run")) \
            and not code.endswith(":")
        lines.append("print(repr((%s)))" % code if bare else ln)
    script.write_text("\n".join(lines) + "\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    if env.get("HYMO_LIB"):
        env["HYMO_LIB"] = os.path.abspath(env["HYMO_LIB"])
    r = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), capture_output=True, text=True,
                       timeout=240, env=env)
    assert r.returncode == 0, r.stderr + "\n" + script.read_text()
    return r.stdout


def test_notebook_block_runs(tmp_path):
    """The notebook-style example; its killed run's file is stood in for by
    a copy of the complete one under a .partial name."""
    code = block("## Example (notebook style)").replace(
        'd = hymo.read("crane1.h5.Ab3xYz.partial")',
        'import shutil; shutil.copy("crane1.h5", "crane1.h5.Ab3xYz.partial"); d = hymo.read("crane1.h5.Ab3xYz.partial")')
    out = run_block(tmp_path, code)
    for want in ("parse mine.yaml:3: syntax error", "(1, 5000, ", "((5001,), (5001, 2), ['V1', 'V2', 'V3'])",
                 "((2001,), (2001, 2))", "('accurate', 0)"):
        assert want in out, (want, out)


def test_every_command_block_runs(tmp_path):
    out = run_block(tmp_path, block())
    assert "('accurate', 0," in out and "('stable', 1)" in out, out
    assert "(True, " in out, out
    for f in ("run.h5", "ref.h5", "cosim.h5", "other.csv", "crane1_mech.fmu", "crane1_circuit1.fmu", "system.h5"):
        assert (tmp_path / f).exists(), f
