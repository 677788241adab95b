#!/usr/bin/python3
"""Man pages from hymo's own option tables: `hymo CMD --help` of the built
binary, turned into roff (hymo.1 and hymo-CMD.1 for every command), so a
page cannot say other than the tool.

usage: scripts/man.py HYMO_BINARY OUTDIR

Layout of a help text (src/cli): 'usage:' lines, description paragraphs,
an 'options:' (or other 'word:') heading followed by entries '  -x, --name
ARG  text' with continuation lines indented further, and a closing 'exit
status:' paragraph."""
import datetime
import os
import re
import subprocess
import sys

COMMANDS = ["run", "info", "compare", "cosim", "sweep", "fmu"]
ENTRY = re.compile(r"^  (-\S.*?|[a-z]\S*(?: [A-Z.\[\]a-z0-9|_:-]+)*?)(?:\s{2,}(.*))?$")


def esc(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + s if s.startswith((".", "'")) else s


def help_text(hymo, cmd):
    args = [hymo] + ([cmd] if cmd else []) + ["--help"]
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.stdout


def version(hymo):
    r = subprocess.run([hymo, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.stdout.strip()


def page(name, text, ver, summary):
    lines = text.rstrip("\n").split("\n")
    out = ['.TH %s 1 "%s" "%s" "hymo manual"' % (name.upper(), datetime.date.today().isoformat()
                                                    if not os.environ.get("SOURCE_DATE_EPOCH") else
                                                    datetime.datetime.utcfromtimestamp(
                                                        int(os.environ["SOURCE_DATE_EPOCH"])).date().isoformat(),
                                                    esc(ver)),
           ".SH NAME", "%s \\- %s" % (esc(name), esc(summary)), ".SH SYNOPSIS"]
    k = 0
    while k < len(lines) and (lines[k].startswith("usage:") or lines[k].startswith("       ")):
        out += [".nf", esc(lines[k].replace("usage:", "").strip()), ".fi"]
        k += 1
    section, para = "DESCRIPTION", []
    out.append(".SH DESCRIPTION")
    in_entries = False

    def flush():
        if para:
            out.append(".PP")
            out.append(esc(" ".join(p.strip() for p in para)))
            para.clear()

    for line in lines[k:]:
        if not line.strip():
            flush()
            in_entries = False
            continue
        head = re.match(r"^([a-z][a-z ()\-]*):\s*(.*)$", line)
        if head and not line.startswith(" ") and len(head.group(1)) < 40:
            flush()
            title = head.group(1).split(" (")[0].upper()
            if title != section:
                out.append(".SH %s" % esc(title))
                section = title
            in_entries = True
            if head.group(2):
                para.append(head.group(2))
            continue
        m = ENTRY.match(line) if in_entries else None
        if m and not line.startswith("   "):
            flush()
            out += [".TP", "\\fB%s\\fR" % esc(m.group(1).strip())]
            if m.group(2):
                out.append(esc(m.group(2).strip()))
            continue
        if in_entries and line.startswith("   ") and out and not para:
            out.append(esc(line.strip()))
            continue
        para.append(line)
    flush()
    see = ["hymo (1)"] + ["hymo\\-%s (1)" % c for c in COMMANDS if "hymo-" + c != name]
    out += [".SH SEE ALSO", ", ".join(s.replace(" (1)", "(1)") for s in see if s != name + " (1)") + ".",
            "The documentation in /usr/share/doc/hymo (README.md, docs/): docs/tutorial.md builds a first model."]
    return "\n".join(out) + "\n"


def main():
    hymo, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    ver = version(hymo)
    top = help_text(hymo, None)
    summaries, last = {}, None
    for line in top.split("\n"):
        m = re.match(r"^  (\w+) .*?\s{2,}(\S.*)$", line) or re.match(r"^  (\w+) (\S.*)$", line)
        if m and m.group(1) in COMMANDS and m.group(1) not in summaries:
            last = m.group(1)
            summaries[last] = m.group(2)
        elif last and re.match(r"^\s{6,}\S", line):  # a continuation line of the last entry
            summaries[last] += " " + line.strip()
        else:
            last = None
    pages = {"hymo": (top, "reference solutions for hydraulically actuated multibody systems")}
    for c in COMMANDS:
        text = help_text(hymo, c)
        if not text.startswith("usage:"):
            sys.exit("man.py: 'hymo %s --help' printed no usage line:\n%s" % (c, text))
        desc = next((l for l in text.split("\n")[1:] if l.strip() and not l.startswith("usage:")
                     and not l.startswith("       ")), c)
        pages["hymo-" + c] = (text, summaries.get(c, desc.strip().rstrip(".")))
    for name, (text, summary) in pages.items():
        with open(os.path.join(outdir, name + ".1"), "w") as f:
            f.write(page(name, text, ver, summary))
    print("man.py: %d pages in %s" % (len(pages), outdir))


if __name__ == "__main__":
    main()
