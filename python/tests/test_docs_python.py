"""docs/python.md's block "Every command of the CLI" runs as written, in an
empty directory that sees the source tree's data/ (a link)."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def block():
    text = open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8").read()
    section = text.split("## Every command of the CLI", 1)[1]
    m = re.search(r"```python\n(.*?)```", section, re.S)
    assert m, "docs/python.md: no python block under 'Every command of the CLI'"
    return m.group(1)


def test_every_command_block_runs(tmp_path):
    os.symlink(os.path.join(ROOT, "data"), tmp_path / "data")
    script = tmp_path / "block.py"
    # each bare expression line's value is printed, as a notebook shows it
    lines = []
    for ln in block().splitlines():
        code = ln.split("  #")[0].rstrip()
        bare = code and not code[0].isspace() and not code.startswith(("#", "import", "with ", "for ")) \
            and "=" not in code.replace("==", "").split("(")[0] and code.count("(") == code.count(")") \
            and code.count("[") == code.count("]") and not code.startswith(("hymo.", "m.run", "sim.set", "sim.run"))
        lines.append("print(repr((%s)))" % code if bare else ln)
    script.write_text("\n".join(lines) + "\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    if env.get("HYMO_LIB"):
        env["HYMO_LIB"] = os.path.abspath(env["HYMO_LIB"])
    r = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), capture_output=True, text=True,
                       timeout=240, env=env)
    assert r.returncode == 0, r.stderr + "\n" + script.read_text()
    out = r.stdout
    assert "('accurate', 0," in out and "('stable', 1)" in out, out
    assert "(True, " in out, out
    for f in ("run.h5", "ref.h5", "cosim.h5", "other.csv", "crane1_mech.fmu", "crane1_circuit1.fmu", "system.h5"):
        assert (tmp_path / f).exists(), f
