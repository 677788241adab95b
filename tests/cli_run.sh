#!/bin/sh
# CLI behaviour of `hymo run` / `hymo info`: exit codes, atomic output,
# incomplete files after non-convergence, units on every dataset.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_run
mkdir -p "$OUT"; rm -f "$OUT"/*
fail() { echo "FAIL: $*"; exit 1; }

# 1. a short complete run: exit 0, file complete = 1, no .partial left
"$HYMO" run "$SRC/data/fourbar.yaml" --t-end 0.5 -o "$OUT/ok.h5" -q || fail "run exited $?"
[ -f "$OUT/ok.h5" ] || fail "no output file"
[ ! -e "$OUT/ok.h5.partial" ] || fail ".partial left behind"
h5dump -a /complete "$OUT/ok.h5" | grep -q "(0): 1" || fail "complete != 1"
"$HYMO" info "$OUT/ok.h5" | grep -q "500 steps, complete" || fail "info does not report 500 complete steps"

# 2. every dataset carries a units attribute (SPEC §8)
for ds in /time /states/z /states/zd /states/zdd /states/p /states/U /actuators/s /actuators/sd \
          /actuators/force /actuators/work /energy/kinetic /energy/potential /energy/drift \
          /constraints/position /constraints/velocity /constraints/acceleration \
          /solver/iterations /solver/residual; do
    h5dump -A -d "$ds" "$OUT/ok.h5" 2>/dev/null | grep -q 'ATTRIBUTE "units"' || fail "$ds has no units"
done

# 3. a run that stops converging: exit 3, one error line naming the time step,
#    steps kept in the file with complete = 0
"$HYMO" run "$SRC/data/fourbar.yaml" --max-iter 1 -o "$OUT/nc.h5" -q 2> "$OUT/nc.err"
code=$?
[ $code -eq 3 ] || fail "non-convergence exit code $code, expected 3"
[ "$(wc -l < "$OUT/nc.err")" -eq 1 ] || fail "stderr not one line"
grep -q "t = .* s (step [0-9]*): Newton-Raphson did not converge" "$OUT/nc.err" || fail "message: $(cat "$OUT/nc.err")"
h5dump -a /complete "$OUT/nc.h5" | grep -q "(0): 0" || fail "incomplete file not marked complete = 0"
"$HYMO" info "$OUT/nc.h5" | grep -q INCOMPLETE || fail "info does not say INCOMPLETE"

# 4. unreadable HDF5 for info: exit 2, one line naming the file
echo "not hdf5" > "$OUT/junk.h5"
"$HYMO" info "$OUT/junk.h5" 2> "$OUT/junk.err"; code=$?
[ $code -eq 2 ] || fail "info on junk exit $code"
grep -q "junk.h5" "$OUT/junk.err" || fail "info error does not name the file"

# 5. bad options: exit 2
"$HYMO" run "$SRC/data/fourbar.yaml" --formulation nope 2>/dev/null; [ $? -eq 2 ] || fail "bad --formulation"
"$HYMO" run "$SRC/data/fourbar.yaml" --dt abc 2>/dev/null; [ $? -eq 2 ] || fail "bad --dt"
"$HYMO" run --help | grep -q -- "--formulation" || fail "run --help"
"$HYMO" info --help | grep -q "usage" || fail "info --help"
# 6. --integrator ida: the same layout, integrator and Newton matrix named;
#    penalty and KLU are refused with one line (exit 2, no file)
"$HYMO" run "$SRC/data/fourbar.yaml" --integrator ida --t-end 2 -o "$OUT/ida.h5" -q || fail "ida run exited $?"
h5dump -a /integrator "$OUT/ida.h5" | grep -q '"ida"' || fail "ida file does not name its integrator"
"$HYMO" info "$OUT/ida.h5" | grep -q "2000 steps, complete" || fail "ida info"
"$HYMO" run "$SRC/data/fourbar.yaml" --integrator ida --formulation penalty -o "$OUT/idap.h5" 2> "$OUT/idap.err"
[ $? -eq 2 ] || fail "ida + penalty not refused"
grep -q "not offered with IDA" "$OUT/idap.err" || fail "ida + penalty message: $(cat "$OUT/idap.err")"
[ ! -e "$OUT/idap.h5" ] || fail "ida + penalty left a file"
"$HYMO" run "$SRC/data/fourbar.yaml" --integrator ida --linear-solver klu -q 2>/dev/null; [ $? -eq 2 ] || fail "ida + klu"
"$HYMO" run "$SRC/data/fourbar.yaml" --integrator rk45 2>/dev/null; [ $? -eq 2 ] || fail "bad --integrator"
"$HYMO" run "$SRC/data/fourbar.yaml" --integrator ida --rtol -1 2>/dev/null; [ $? -eq 2 ] || fail "bad --rtol"
# 7. getopt_long's --name=value form (issue 13 item 7): the same run as 1.,
#    the same trajectory; flags take no value; bad values named as before
"$HYMO" run "$SRC/data/fourbar.yaml" --t-end=0.5 --dt=1e-3 --formulation=double-step --output="$OUT/eq.h5" --quiet \
    || fail "--opt=value run exited $?"
"$HYMO" info "$OUT/eq.h5" | grep -q "500 steps, complete" || fail "--opt=value run: not 500 complete steps"
"$HYMO" compare "$OUT/ok.h5" "$OUT/eq.h5" --max-abs=z=1e-300 --max-abs=p=1e-300 > "$OUT/eq.cmp" \
    || fail "--opt=value run differs from the --opt value run: $(cat "$OUT/eq.cmp")"
"$HYMO" run "$SRC/data/fourbar.yaml" --quiet=1 2> "$OUT/eq.err"; code=$?
[ $code -eq 2 ] || fail "--quiet=1 exit $code"
grep -q "option '--quiet' takes no value" "$OUT/eq.err" || fail "--quiet=1 message: $(cat "$OUT/eq.err")"
"$HYMO" run "$SRC/data/fourbar.yaml" --dt=abc 2> "$OUT/eq.err"; [ $? -eq 2 ] || fail "bad --dt=abc"
grep -q -- "--dt: 'abc' is not a number" "$OUT/eq.err" || fail "--dt=abc message: $(cat "$OUT/eq.err")"
"$HYMO" run "$SRC/data/fourbar.yaml" --t-end= 2>/dev/null; [ $? -eq 2 ] || fail "empty --t-end="
# 8. --output-every N: every N-th step and the last one; the summary is the
#    whole run's (all steps integrated)
"$HYMO" run "$SRC/data/fourbar.yaml" --t-end 1.05 --output-every 100 -o "$OUT/every.h5" -q || fail "--output-every exited $?"
h5dump -H -d /time "$OUT/every.h5" | grep -q "( 12 )" || fail "--output-every 100 over 1050 steps: not 12 rows"
h5dump -d /time "$OUT/every.h5" | grep -q "1.05" || fail "--output-every: the last step is not written"
"$HYMO" info "$OUT/every.h5" | grep -q "1050 steps, complete" || fail "--output-every: summary"
"$HYMO" run "$SRC/data/fourbar.yaml" --output-every 0 2>/dev/null; [ $? -eq 2 ] || fail "--output-every 0 not refused"
"$HYMO" run "$SRC/data/fourbar.yaml" --output-every 2.5 2>/dev/null; [ $? -eq 2 ] || fail "--output-every 2.5 not refused"
# 9. exact end time (issue 9): a t_end that is not a multiple of dt ends on
#    t_end with a shortened last step (trapezoidal and IDA); so does one
#    shorter than a step
for integ in trapezoidal ida; do
    "$HYMO" run "$SRC/data/fourbar.yaml" --integrator $integ --t-end 0.0105 -o "$OUT/te.h5" -q || fail "--t-end 0.0105 ($integ) exited $?"
    "$HYMO" info "$OUT/te.h5" | grep -q "0 .. 0.0105 s, dt 0.001 s, 11 steps, complete" || fail "--t-end 0.0105 ($integ): summary"
    h5dump -m %.17g -d /time "$OUT/te.h5" | grep -q "(11): 0.010500000000000001\$" \
        || fail "--t-end 0.0105 ($integ): the last row (11) is not 0.0105: $(h5dump -m %.17g -d /time "$OUT/te.h5" | grep -A1 '(10)')"
done
"$HYMO" run "$SRC/data/fourbar.yaml" --t-end 4e-4 -o "$OUT/te.h5" -q || fail "--t-end 4e-4 exited $?"
h5dump -m %.17g -d /time "$OUT/te.h5" | grep -q "(1): 0.00040000000000000002\$" || fail "--t-end 4e-4: rows $(h5dump -m %.17g -d /time "$OUT/te.h5" | grep '(1)')"
# 10. pressure range (issue 12 item 2): min/max per run in the summary and
#     the file; a volume below 0 Pa absolute is flagged (a crane1 variant
#     with a 0 Pa tank and a 1 bar rod side draws V1 and V2 below zero)
"$HYMO" run "$SRC/data/crane1.yaml" --t-end 2 -o "$OUT/pr.h5" > "$OUT/pr.txt" || fail "crane1 pressure range run"
grep -q "^pressures    min 3.5 MPa (V2 at 0 s), max 4.872 MPa (V1 at 2 s)" "$OUT/pr.txt" || fail "crane1 pressure range: $(grep pressures "$OUT/pr.txt")"
grep -q "NON-PHYSICAL" "$OUT/pr.txt" && fail "crane1 flagged as non-physical"
sed -e 's/initial_pressure: 3.5e6/initial_pressure: 1.0e5/' -e 's/{name: tank, pressure: 1.0e5}/{name: tank, pressure: 0.0}/' \
    "$SRC/data/crane1.yaml" > "$OUT/cav.yaml"
"$HYMO" run "$OUT/cav.yaml" --t-end 6 -o "$OUT/cav.h5" > "$OUT/cav.txt" || fail "cavitating crane1 run"
grep -q "NON-PHYSICAL: 2 volumes below 0 Pa absolute" "$OUT/cav.txt" || fail "negative pressures not flagged: $(cat "$OUT/cav.txt")"
"$HYMO" info "$OUT/cav.h5" | grep -q "NON-PHYSICAL: 2 volumes" || fail "the file does not carry the flag"
h5dump -a /states/p_min "$OUT/cav.h5" | grep -q "(0): -" || fail "/states@p_min not negative"
echo "cli_run: all checks passed"
