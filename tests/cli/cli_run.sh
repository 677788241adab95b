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
ls "$OUT"/ok.h5.*partial > /dev/null 2>&1 && fail ".partial left behind"
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
# per-step IDA iterations stay >= 0 across restarts at input breakpoints and
# events (IDAReInit zeroes IDA's counters; crane1's valve steps restart it)
"$HYMO" run "$SRC/data/crane1.yaml" --integrator ida --t-end 5 -o "$OUT/ida_c1.h5" -q || fail "crane1 ida run"
/usr/bin/python3 -c "import h5py, sys; it = h5py.File(sys.argv[1], 'r')['/solver/iterations'][:]; sys.exit(0 if it.min() >= 0 and it.sum() > 2000 else 1)" "$OUT/ida_c1.h5" || fail "crane1 ida: negative or lost per-step iterations"
"$HYMO" run "$SRC/data/fourbar.yaml" --integrator ida --formulation penalty -o "$OUT/idap.h5" 2> "$OUT/idap.err"
[ $? -eq 2 ] || fail "ida + penalty not refused"
grep -q "not offered with IDA" "$OUT/idap.err" || fail "ida + penalty message: $(cat "$OUT/idap.err")"
[ ! -e "$OUT/idap.h5" ] || fail "ida + penalty left a file"
"$HYMO" run "$SRC/data/fourbar.yaml" --integrator ida --linear-solver klu -q 2>/dev/null; [ $? -eq 2 ] || fail "ida + klu"
"$HYMO" run "$SRC/data/fourbar.yaml" --integrator rk45 2>/dev/null; [ $? -eq 2 ] || fail "bad --integrator"
"$HYMO" run "$SRC/data/fourbar.yaml" --integrator ida --rtol -1 2>/dev/null; [ $? -eq 2 ] || fail "bad --rtol"
# 7. getopt_long's --name=value form: the same run as 1.,
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
# 9. exact end time: a t_end that is not a multiple of dt ends on
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
# 10. pressure range: min/max per run in the summary and
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
# 11. output files under faults
M=$SRC/data/fourbar.yaml
# 11a. the output path is checked before anything is computed: a directory,
#     the model file itself -> exit 2, nothing written, the model intact
mkdir -p "$OUT/adir"
"$HYMO" run "$M" -o "$OUT/adir" -q 2> "$OUT/path.err"; code=$?
[ $code -eq 2 ] || fail "-o DIRECTORY: exit $code, expected 2"
grep -q "output '.*adir' is a directory" "$OUT/path.err" || fail "-o directory message: $(cat "$OUT/path.err")"
ls "$OUT"/adir.* > /dev/null 2>&1 && fail "-o directory left a file"
cp "$M" "$OUT/model.yaml"
"$HYMO" run "$OUT/model.yaml" -o "$OUT/model.yaml" -q 2> "$OUT/path.err"; code=$?
[ $code -eq 2 ] || fail "-o MODEL: exit $code, expected 2"
grep -q "is the input file" "$OUT/path.err" || fail "-o model message: $(cat "$OUT/path.err")"
cmp -s "$M" "$OUT/model.yaml" || fail "-o MODEL changed the model file"
ln -sf model.yaml "$OUT/link.yaml"
"$HYMO" run "$OUT/model.yaml" -o "$OUT/link.yaml" -q 2>/dev/null; [ $? -eq 2 ] || fail "-o (symlink to the model) not refused"
cmp -s "$M" "$OUT/model.yaml" || fail "-o symlink changed the model file"
"$HYMO" run "$M" -o "$OUT/no_such_dir/x.h5" -q 2> "$OUT/path.err"; [ $? -eq 2 ] || fail "-o in a missing directory"
grep -q "No such file or directory" "$OUT/path.err" || fail "missing directory message: $(cat "$OUT/path.err")"

# 11b. numeric options are range-checked: exit 2, one line
for bad in "--max-iter 1e10" "--max-iter -1" "--max-iter 2.7" "--max-iter 0" "--dt -1" "--dt 0" "--t-end -2" \
           "--alpha 0" "--rtol 2" "--atol -1" "--dt 1e-300" "--output-every -3"; do
    # shellcheck disable=SC2086
    "$HYMO" run "$M" $bad -q > /dev/null 2> "$OUT/num.err"; code=$?
    [ $code -eq 2 ] || fail "'$bad': exit $code, expected 2"
    [ "$(wc -l < "$OUT/num.err")" -eq 1 ] || fail "'$bad': not one line: $(cat "$OUT/num.err")"
done
grep -q "1 .. 1000000" "$OUT/num.err" || true

# 11c. two runs on the same -o at the same time: each writes a temporary file
#     of its own; both finish, and the file is valid and complete (the later
#     rename wins)
for i in 1 2 3; do
    "$HYMO" run "$M" --t-end 0.6 -o "$OUT/same.h5" -q & p1=$!
    "$HYMO" run "$M" --t-end 0.6 --dt 2e-3 -o "$OUT/same.h5" -q & p2=$!
    wait $p1; c1=$?; wait $p2; c2=$?
    [ $c1 -eq 0 ] && [ $c2 -eq 0 ] || fail "concurrent runs (round $i): exits $c1 $c2"
    "$HYMO" info "$OUT/same.h5" > "$OUT/same.out" || fail "concurrent runs (round $i): the file is not valid"
    grep -Eq "(600|300) steps, complete" "$OUT/same.out" || fail "concurrent runs (round $i): $(cat "$OUT/same.out")"
    ls "$OUT"/same.h5.*partial > /dev/null 2>&1 && fail "concurrent runs (round $i) left a temporary file"
done

# 11d. disk full (a file-size limit, with SIGXFSZ ignored as Python and many
#     shells do): exit 2 with the reason, no crash, no file at the final
#     path, no temporary file; an older file there is left as it was
echo "previous" > "$OUT/full.h5"
for kb in 1 16 64 128 256; do
    ( trap '' XFSZ; ulimit -f $kb; exec "$HYMO" run "$SRC/data/crane1.yaml" --t-end 5 -o "$OUT/full.h5" -q ) 2> "$OUT/full.err"
    code=$?
    [ $code -eq 2 ] || fail "file-size limit $kb KiB: exit $code, expected 2: $(cat "$OUT/full.err")"
    grep -q "File too large" "$OUT/full.err" || fail "file-size limit $kb KiB: message $(cat "$OUT/full.err")"
    [ "$(cat "$OUT/full.h5")" = "previous" ] || fail "file-size limit $kb KiB: the final path was replaced"
    ls "$OUT"/full.h5.*partial > /dev/null 2>&1 && fail "file-size limit $kb KiB: temporary file left"
done
rm -f "$OUT/full.h5"
( trap '' XFSZ; ulimit -f 64; exec "$HYMO" run "$SRC/data/crane1.yaml" --t-end 5 -o "$OUT/full.h5" -q ) 2>/dev/null
[ $? -eq 2 ] || fail "file-size limit without an old file: exit not 2"
[ ! -e "$OUT/full.h5" ] || fail "file-size limit: a file at the final path"
# 12. --progress: accepted (a run under 2 s prints no line); a flag, so --progress=1 is refused;
#     the summary states the integration and the whole run's wall time
"$HYMO" run "$SRC/data/fourbar.yaml" --t-end 0.5 --progress -o "$OUT/pg.h5" > "$OUT/pg.txt" 2> "$OUT/pg.err" || fail "--progress exited $?"
[ -s "$OUT/pg.err" ] && fail "--progress on a short run printed: $(cat "$OUT/pg.err")"
grep -q "^wall time    .* s integration, .* s in all" "$OUT/pg.txt" || fail "no total wall time: $(grep wall "$OUT/pg.txt")"
"$HYMO" info "$OUT/pg.h5" | grep -q "s in all" || fail "the file has no wall_total"
"$HYMO" run "$SRC/data/fourbar.yaml" --progress=1 2>/dev/null; [ $? -eq 2 ] || fail "--progress=1 not refused"
# 13. --progress into a file: whole lines (no carriage return), each one update (a run of
#     several seconds even on a fast machine: the first line comes after 2 s)
"$HYMO" run "$SRC/data/crane1.yaml" --t-end 1500 --progress -q 2> "$OUT/pgf.err" || fail "--progress (long) exited $?"
grep -q "$(printf '\r')" "$OUT/pgf.err" && fail "--progress into a file wrote a carriage return"
grep -q "^hymo: t = .* of 1500 s (.*%), .* s elapsed, about .* s left\$" "$OUT/pgf.err" \
    || fail "--progress into a file: no whole progress line: $(head -c 200 "$OUT/pgf.err")"
[ "$(tail -c 1 "$OUT/pgf.err" | od -An -c | tr -d ' ')" = '\n' ] || fail "--progress into a file does not end with a newline"
echo "cli_run: all checks passed"
