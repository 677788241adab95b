#!/usr/bin/python3
"""Packs tests/fmu/lin_fmu.c's binary into the FMUs of hymo's import tests
(tests/fmi/test_fmu_import.c, tests/cli/cli_fmu_import.sh), good and broken ones:

  make_fmus.py --so path/to/lin_fmu.so --out DIR

Good: lin.fmu (generic names), mass.fmu and spring.fmu (the two halves of a
mass-spring-damper oscillator, named for a power bond 'b', docs/fmi.md),
lin_noser.fmu (canSerializeFMUstate false).  Broken: nobinary.fmu,
malformed.fmu, fmi1.fmu, fmi3.fmu, me_only.fmu, notzip.fmu, noxml.fmu,
badguid.fmu, intinput.fmu."""
import argparse
import os
import zipfile

REAL = ["u", "y", "x1", "x2", "u_end", "a11", "a12", "a21", "a22", "b1", "b2", "c1", "c2", "d", "x1_0", "x2_0",
        "h", "fail_at", "discard_at"]


def description(names=None, version="2.0", cs=True, me=False, serialize=True, guid="{hymo-lin-fmu-1}",
                int_input=False, truncate=False):
    names = dict(names or {})
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<fmiModelDescription fmiVersion="{version}" modelName="lin" guid="{guid}" '
             'generationTool="hymo tests/fmu/make_fmus.py" variableNamingConvention="structured">']
    if cs:
        lines.append('  <CoSimulation modelIdentifier="lin_fmu" canHandleVariableCommunicationStepSize="true" '
                     'canInterpolateInputs="true" canGetAndSetFMUstate="true" '
                     f'canSerializeFMUstate="{"true" if serialize else "false"}"/>')
    if me:
        lines.append('  <ModelExchange modelIdentifier="lin_fmu"/>')
    lines.append('  <ModelVariables>')
    for vr, n in enumerate(REAL):
        name = names.get(n, n)
        caus = {"u": "input", "y": "output", "x1": "local", "x2": "local", "u_end": "local"}.get(n, "parameter")
        var = ' variability="tunable"' if caus == "parameter" else ""
        typ = '<Real/>' if caus != "input" else '<Real start="0"/>'
        if caus == "parameter":
            typ = '<Real start="0"/>'
        if int_input and n == "u":
            typ = '<Integer start="0"/>'
        lines.append(f'    <ScalarVariable name="{name}" valueReference="{vr}" causality="{caus}"{var} '
                     f'description="{n}">{typ}</ScalarVariable>')
    lines.append('    <ScalarVariable name="steps" valueReference="0" causality="local"><Integer/></ScalarVariable>')
    lines.append('    <ScalarVariable name="failed" valueReference="0" causality="local"><Boolean/></ScalarVariable>')
    lines.append('    <ScalarVariable name="label" valueReference="0" causality="local"><String/></ScalarVariable>')
    lines.append('  </ModelVariables>')
    lines.append('  <ModelStructure/>')
    lines.append('</fmiModelDescription>')
    text = "\n".join(lines) + "\n"
    if truncate:
        text = text[: len(text) // 2]
    return text


def pack(path, xml, so, binary=True):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        if xml is not None:
            z.writestr("modelDescription.xml", xml)
        if binary:
            z.write(so, "binaries/linux64/lin_fmu.so")
        z.writestr("resources/README.txt", "hymo test FMU\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--so", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    o = lambda n: os.path.join(a.out, n)
    pack(o("lin.fmu"), description(), a.so)
    pack(o("lin_noser.fmu"), description(serialize=False), a.so)
    pack(o("mass.fmu"), description({"u": "b.F", "y": "b.sd"}), a.so)
    pack(o("spring.fmu"), description({"u": "v_in", "y": "F_out", "u_end": "b.sd_input"}), a.so)
    pack(o("nobinary.fmu"), description(), a.so, binary=False)
    pack(o("malformed.fmu"), description(truncate=True), a.so)
    pack(o("fmi1.fmu"), description(version="1.0"), a.so)
    pack(o("fmi3.fmu"), description(version="3.0"), a.so)
    pack(o("me_only.fmu"), description(cs=False, me=True), a.so)
    pack(o("noxml.fmu"), None, a.so)
    pack(o("badguid.fmu"), description(guid="{not-this-one}"), a.so)
    pack(o("intinput.fmu"), description(int_input=True), a.so)
    with open(o("notzip.fmu"), "w") as f:
        f.write("this is not a zip archive\n")
    # stamp for the build
    with open(o("stamp"), "w") as f:
        f.write("ok\n")


if __name__ == "__main__":
    main()
