#!/bin/sh
# SSP 1.0 archives (docs/cosimulation.md "SSP files"):
#   export  `hymo fmu crane1.yaml --part ssp` (Jacobi, and Gauss-Seidel)
#           holds SystemStructure.ssd, resources/mechanics.fmu,
#           resources/circuit1.fmu and resources/model.yaml; the SSD is
#           well-formed (xmllint --noout), has the elements and attributes
#           hymo and SSP 1.0 require, every connection runs from an output
#           connector to an input connector of the same name, and -- when
#           HYMO_SSP_SCHEMAS names a directory holding the SSP 1.0 XSDs
#           (SystemStructureDescription.xsd and the files it imports) --
#           validates against the schema (xmllint --schema);
#   import  `hymo cosim crane1.ssp` is bit-identical (every dataset,
#           /cosim/outputs too) to `hymo cosim SYSTEM.yaml` of crane1's
#           mechanics and circuit FMUs exported one by one, Jacobi and
#           Gauss-Seidel, and within 1e-12 of `hymo cosim crane1.yaml`;
#           a foreign-style SSP (no hymo annotation: the documented
#           defaults) of the hand-written oscillator FMUs with inline and
#           archived ssv parameter values equals its system file with the
#           same parameters: (3 s crane1, 1 s oscillator);
#   errors  exit 2 with one line naming the archive, the SSD line and
#           the element: connection ends swapped, a connector the FMU does
#           not have, a parameter it does not have, a component whose
#           source is not in the archive, no stopTime, a stopTime that is
#           not a multiple of the annotation's H; no temporary directory
#           left behind (TMPDIR checked).
# args: $1 hymo binary, $2 source dir, $3 build dir (tests/ of the build)
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_ssp; FMUS=$3/fmu
PY=/usr/bin/python3
CMP="$PY $SRC/tests/fmu/compare_h5.py"
rm -rf "$OUT"; mkdir -p "$OUT/tmp"
fail() { echo "FAIL: $*"; exit 1; }
cd "$OUT" || exit 1
TMPDIR=$OUT/tmp; export TMPDIR
notmp() { [ -z "$(ls "$TMPDIR")" ] || fail "$1: left in TMPDIR: $(ls "$TMPDIR")"; }
M=$SRC/data/crane1.yaml

# /cosim/outputs of $1 and $2 equal bit for bit (exit 0) or not
outputs_equal() {
    $PY - "$1" "$2" <<'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    names = []
    a["cosim/outputs"].visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
    assert names, "no /cosim/outputs"
    for n in names:
        assert np.array_equal(a["cosim/outputs/" + n][()], b["cosim/outputs/" + n][()]), n
EOF
}
same_outputs() { outputs_equal "$1" "$2" || fail "cosim/outputs of $1 and $2 differ"; }

# ---- export
"$HYMO" fmu "$M" --part ssp -o jacobi.ssp > export.out 2>&1 || fail "export exit $?: $(cat export.out)"
grep -q "components   mechanics circuit1" export.out || fail "export summary: $(cat export.out)"
"$HYMO" fmu "$M" --part ssp --scheme gauss-seidel -o gs.ssp -q || fail "export gauss-seidel exit $?"
notmp export
for s in jacobi gs; do
    $PY - $s.ssp > $s.ssd <<'EOF' || fail "$s.ssp: archive"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = sorted(z.namelist())
want = ["SystemStructure.ssd", "resources/circuit1.fmu", "resources/mechanics.fmu", "resources/model.yaml"]
assert names == want, names
sys.stdout.write(z.read("SystemStructure.ssd").decode())
EOF
    xmllint --noout $s.ssd || fail "$s: SystemStructure.ssd is not well-formed XML"
    $PY - $s.ssd $s > check.out 2>&1 <<'EOF' || fail "$s: SSD content: $(cat check.out)"
import sys, xml.etree.ElementTree as ET
D = "{http://ssp-standard.org/SSP1/SystemStructureDescription}"
C = "{http://ssp-standard.org/SSP1/SystemStructureCommon}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == D + "SystemStructureDescription" and root.get("version") == "1.0" and root.get("name") == "crane1"
system = root.find(D + "System")
assert system is not None and system.get("name")
kinds = {}
for c in system.find(D + "Elements").findall(D + "Component"):
    assert c.get("name") and c.get("source") == "resources/%s.fmu" % c.get("name"), c.attrib
    assert c.get("type") == "application/x-fmu-sharedlibrary"
    for k in c.find(D + "Connectors").findall(D + "Connector"):
        assert k.get("kind") in ("input", "output") and k.find(C + "Real") is not None, k.attrib
        kinds[(c.get("name"), k.get("name"))] = k.get("kind")
assert sorted({c for c, _ in kinds}) == ["circuit1", "mechanics"]
conns = system.find(D + "Connections").findall(D + "Connection")
ends = set()
for x in conns:
    s, e = (x.get("startElement"), x.get("startConnector")), (x.get("endElement"), x.get("endConnector"))
    assert kinds[s] == "output" and kinds[e] == "input" and s[1] == e[1] and s[0] != e[0], x.attrib
    ends.add(e)
assert ends == {k for k, v in kinds.items() if v == "input"} and len(conns) == 4, (ends, len(conns))
ex = root.find(D + "DefaultExperiment")
assert float(ex.get("stopTime")) == 30 and float(ex.get("startTime")) == 0
ann = root.find(D + "Annotations").find(C + "Annotation")
assert ann.get("type") == "de.hymo.cosim"
co = ann[0]
assert co.tag == "{https://hymo.de/ssp/cosim/1.0}CoSimulation", co.tag
assert float(co.get("H")) == 1e-3 and co.get("extrapolation") == "2" and co.get("model") == "resources/model.yaml"
want = {"jacobi": ("jacobi", None), "gs": ("gauss-seidel", "mechanics; circuit1")}[sys.argv[2]]
assert (co.get("scheme"), co.get("order")) == want, co.attrib
EOF
    if [ -n "${HYMO_SSP_SCHEMAS:-}" ]; then
        xmllint --noout --schema "$HYMO_SSP_SCHEMAS/SystemStructureDescription.xsd" $s.ssd > xsd.out 2>&1 ||
            fail "$s: not valid against the SSP 1.0 schema: $(cat xsd.out)"
        echo "$s: $(cat xsd.out)"
    fi
done

# ---- import: the same FMUs through a system file, and the split
"$HYMO" fmu "$M" --part mechanics -o mech.fmu -q || fail "export mechanics exit $?"
"$HYMO" fmu "$M" --part circuit:circuit1 -o circuit1.fmu -q || fail "export circuit1 exit $?"
for s in jacobi gs; do
    {
        printf 'H: 0.001\nt_end: 30\nextrapolation: 2\nmodel: %s\n' "$M"
        if [ $s = gs ]; then printf 'scheme: gauss-seidel\norder: [mechanics, circuit1]\n'; fi
        printf 'subsystems:\n  mechanics: {fmu: mech.fmu}\n  circuit1: {fmu: circuit1.fmu}\nconnections:\n'
        for q in s sd; do printf '  - {from: mechanics.cyl1.%s, to: circuit1.cyl1.%s}\n' $q $q; done
        for q in p_piston p_rod; do printf '  - {from: circuit1.cyl1.%s, to: mechanics.cyl1.%s}\n' $q $q; done
    } > $s.yaml
    "$HYMO" cosim $s.yaml --t-end 3 -q -o yaml_$s.h5 || fail "$s: system file exit $?"
    "$HYMO" cosim $s.ssp --t-end 3 -o ssp_$s.h5 > ssp_$s.out 2>&1 || fail "$s: SSP exit $?: $(cat ssp_$s.out)"
    notmp "$s import"
    grep -q "2 FMUs, 4 connections, 1 power bonds" ssp_$s.out || fail "$s: summary: $(cat ssp_$s.out)"
    grep -q "mechanics    $s.ssp:resources/mechanics.fmu" ssp_$s.out || fail "$s: FMU names: $(cat ssp_$s.out)"
    printf '%s SSP vs system file: ' $s
    $CMP yaml_$s.h5 ssp_$s.h5 || fail "$s: SSP differs from the system file"
    same_outputs yaml_$s.h5 ssp_$s.h5
    opt=""; [ $s = gs ] && opt="--scheme gauss-seidel"
    "$HYMO" cosim "$M" --t-end 3 $opt -q -o split_$s.h5 || fail "$s: split exit $?"
    printf '%s SSP vs split: ' $s
    $CMP split_$s.h5 ssp_$s.h5 --tol 1e-12 || fail "$s: SSP differs from the split"
done
$CMP ssp_jacobi.h5 ssp_gs.h5 --tol 1e-9 > /dev/null && fail "Jacobi = Gauss-Seidel?"

# ---- a foreign-style SSP: no annotation, ssv parameter values inline and archived
mkssp() { # $1 archive, $2 SSD file, then NAME=FILE entries
    $PY - "$@" <<'EOF' || fail "zip $1"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.write(sys.argv[2], "SystemStructure.ssd")
    for e in sys.argv[3:]:
        n, f = e.split("=", 1)
        z.write(f, n)
EOF
}
osc_ssd() { # $1: the connection mass2.F -> mass1.F as given; stdout
    cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription"
    xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon"
    xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" version="1.0" name="osc">
  <ssd:System name="osc">
    <ssd:Elements>
      <ssd:Component name="mass1" source="resources/osc_mass1.fmu">
        <ssd:ParameterBindings>
          <ssd:ParameterBinding source="resources/mass1.ssv"/>
        </ssd:ParameterBindings>
      </ssd:Component>
      <ssd:Component name="mass2" source="resources/osc_mass2.fmu">
        <ssd:Connectors>
          <ssd:Connector name="x1" kind="input"/>
          <ssd:Connector name="v1" kind="input"/>
          <ssd:Connector name="F" kind="output"/>
        </ssd:Connectors>
        <ssd:ParameterBindings>
          <ssd:ParameterBinding>
            <ssd:ParameterValues>
              <ssv:ParameterSet version="1.0" name="stiffer">
                <ssv:Parameters>
                  <ssv:Parameter name="k"><ssv:Real value="80"/></ssv:Parameter>
                  <ssv:Parameter name="d"><ssv:Real value="1.5"/></ssv:Parameter>
                </ssv:Parameters>
              </ssv:ParameterSet>
            </ssd:ParameterValues>
          </ssd:ParameterBinding>
        </ssd:ParameterBindings>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="mass1" startConnector="x1" endElement="mass2" endConnector="x1"/>
      <ssd:Connection startElement="mass1" startConnector="v1" endElement="mass2" endConnector="v1"/>
      $1
    </ssd:Connections>
  </ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="1"/>
</ssd:SystemStructureDescription>
EOF
}
cat > mass1.ssv <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<ssv:ParameterSet xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" version="1.0" name="m1">
  <ssv:Parameters>
    <ssv:Parameter name="m"><ssv:Real value="1.25"/></ssv:Parameter>
  </ssv:Parameters>
</ssv:ParameterSet>
EOF
osc_ssd '<ssd:Connection startElement="mass2" startConnector="F" endElement="mass1" endConnector="F"/>' > osc.ssd
mkssp osc.ssp osc.ssd resources/osc_mass1.fmu=$FMUS/osc_mass1.fmu resources/osc_mass2.fmu=$FMUS/osc_mass2.fmu \
    resources/mass1.ssv=mass1.ssv
if [ -n "${HYMO_SSP_SCHEMAS:-}" ]; then
    xmllint --noout --schema "$HYMO_SSP_SCHEMAS/SystemStructureDescription.xsd" osc.ssd > xsd.out 2>&1 ||
        fail "osc.ssd: not valid against the SSP 1.0 schema: $(cat xsd.out)"
    xmllint --noout --schema "$HYMO_SSP_SCHEMAS/SystemStructureParameterValues.xsd" mass1.ssv > xsd.out 2>&1 ||
        fail "mass1.ssv: not valid against the SSP 1.0 schema: $(cat xsd.out)"
fi
cat > osc.yaml <<EOF
H: 0.001
t_end: 1
subsystems:
  mass1: {fmu: $FMUS/osc_mass1.fmu, parameters: {m: 1.25}}
  mass2: {fmu: $FMUS/osc_mass2.fmu, parameters: {k: 80, d: 1.5}}
connections:
  - {from: mass1.x1, to: mass2.x1}
  - {from: mass1.v1, to: mass2.v1}
  - {from: mass2.F, to: mass1.F}
EOF
"$HYMO" cosim osc.yaml -q -o osc_yaml.h5 || fail "osc system file exit $?"
"$HYMO" cosim osc.ssp -o osc_ssp.h5 > osc.out 2>&1 || fail "osc SSP exit $?: $(cat osc.out)"
grep -q "jacobi, Lagrange extrapolation 2, H = 0.001 s" osc.out || fail "osc defaults: $(cat osc.out)"
printf 'oscillator SSP vs system file: '
$CMP osc_yaml.h5 osc_ssp.h5 || fail "oscillator SSP differs from its system file"
same_outputs osc_yaml.h5 osc_ssp.h5
# the parameters arrive: without them the run differs
sed 's/, parameters: {[^}]*}//' osc.yaml > osc_plain.yaml
"$HYMO" cosim osc_plain.yaml -q -o osc_plain.h5 || fail "osc plain exit $?"
outputs_equal osc_plain.h5 osc_ssp.h5 2> /dev/null && fail "the SSP's parameter values were not set"
notmp oscillator

# ---- errors: exit 2, one line naming archive, SSD line and element
bad() { # $1 archive, $2 grep pattern of the message
    "$HYMO" cosim "$1" -o bad.h5 > bad.out 2> bad.err; code=$?
    [ $code -eq 2 ] || fail "$1: exit $code (want 2): $(cat bad.err)"
    [ "$(wc -l < bad.err)" -eq 1 ] && grep -q -- "$2" bad.err || fail "$1: message: $(cat bad.err) (want $2)"
    [ ! -e bad.h5 ] || fail "$1: output written"
    notmp "$1"
    echo "$1: $(cat bad.err)"
}
osc_ssd '<ssd:Connection startElement="mass1" startConnector="F" endElement="mass2" endConnector="F"/>' > swap.ssd
mkssp swap.ssp swap.ssd resources/osc_mass1.fmu=$FMUS/osc_mass1.fmu resources/osc_mass2.fmu=$FMUS/osc_mass2.fmu \
    resources/mass1.ssv=mass1.ssv
bad swap.ssp "swap.ssp:SystemStructure.ssd:35: ssd:Connection\[2\]: endConnector 'F' of 'mass2' is an output"
osc_ssd '<ssd:Connection startElement="mass2" startConnector="F" endElement="mass1" endConnector="force"/>' > novar.ssd
mkssp novar.ssp novar.ssd resources/osc_mass1.fmu=$FMUS/osc_mass1.fmu resources/osc_mass2.fmu=$FMUS/osc_mass2.fmu \
    resources/mass1.ssv=mass1.ssv
bad novar.ssp "novar.ssp:SystemStructure.ssd:35: ssd:Connection\[2\]: endConnector: FMU 'novar.ssp:resources/osc_mass1.fmu' (subsystem 'mass1') has no variable 'force'"
sed 's/name="k"/name="kk"/' osc.ssd > badpar.ssd
mkssp badpar.ssp badpar.ssd resources/osc_mass1.fmu=$FMUS/osc_mass1.fmu resources/osc_mass2.fmu=$FMUS/osc_mass2.fmu \
    resources/mass1.ssv=mass1.ssv
bad badpar.ssp "badpar.ssp:SystemStructure.ssd:12: ssd:Component 'mass2': FMU 'badpar.ssp:resources/osc_mass2.fmu': no variable 'kk' to set"
sed 's|^</ssd:SystemStructureDescription>|<ssd:Annotations><ssc:Annotation type="de.hymo.cosim">\
<hymo:CoSimulation xmlns:hymo="https://hymo.de/ssp/cosim/1.0" H="0.003"/></ssc:Annotation></ssd:Annotations>\
</ssd:SystemStructureDescription>|' osc.ssd > badh.ssd
mkssp badh.ssp badh.ssd resources/osc_mass1.fmu=$FMUS/osc_mass1.fmu resources/osc_mass2.fmu=$FMUS/osc_mass2.fmu \
    resources/mass1.ssv=mass1.ssv
bad badh.ssp "badh.ssp:SystemStructure.ssd:38: ssd:DefaultExperiment: stopTime: t_end = 1 s is not a positive multiple of H = 0.003 s"
mkssp nofmu.ssp osc.ssd resources/osc_mass1.fmu=$FMUS/osc_mass1.fmu resources/mass1.ssv=mass1.ssv
bad nofmu.ssp "nofmu.ssp:SystemStructure.ssd:12: ssd:Component 'mass2': source: no file 'resources/osc_mass2.fmu'"
sed '/DefaultExperiment/d' osc.ssd > nostop.ssd
mkssp nostop.ssp nostop.ssd resources/osc_mass1.fmu=$FMUS/osc_mass1.fmu resources/osc_mass2.fmu=$FMUS/osc_mass2.fmu \
    resources/mass1.ssv=mass1.ssv
bad nostop.ssp "nostop.ssp:SystemStructure.ssd: ssd:DefaultExperiment: attribute stopTime is missing"
echo "PASS"
