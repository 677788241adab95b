#!/bin/sh
# Option syntax of every command (src/cli/cli_args.c, getopt_long conventions):
#   1. every option each command's --help lists is known to its parser, in
#      both forms: `--opt=VALUE` and `--opt VALUE` give the same exit status
#      and the same message; a flag refuses `--opt=1`; a value option at the
#      end says it needs a value; unknown options exit 2 with one line;
#   2. the same run, co-simulation, sweep and comparison written with
#      `--opt value` and with `--opt=value` give identical results;
#   3. `--` ends the options, values may start with '-', -oFILE and grouped
#      flags (-qo FILE) work.
# args: $1 hymo binary, $2 source dir, $3 build dir
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_options
mkdir -p "$OUT"; rm -rf "${OUT:?}"/* "$OUT"/-*
fail() { echo "FAIL: $*"; exit 1; }
M=$SRC/data/crane1.yaml
F=$SRC/data/fourbar.yaml

# one_line FILE WHAT: FILE has exactly one line
one_line() { [ "$(wc -l < "$1")" -eq 1 ] || fail "$2: not one line: $(cat "$1")"; }

# 1. every option of every command, from its --help text: `--opt=@v` is
#    known (a flag refuses the value; a value option takes it, and the
#    command then fails on the value or its missing file, one line, exit 2);
#    the first value option of each command alone at the end needs a value,
#    and the two forms give the same message (one process per option: the
#    ASan build starts each slowly)
checked=0
for cmd in run info compare cosim sweep predict; do
    "$HYMO" $cmd --help > "$OUT/help.txt" 2>&1 || fail "$cmd --help exited $?"
    "$HYMO" $cmd -h | cmp -s - "$OUT/help.txt" || fail "$cmd -h differs from --help"
    first=""
    for opt in $(grep -o -- '--[a-zA-Z][a-zA-Z-]*' "$OUT/help.txt" | sort -u); do
        [ "$opt" = "--help" ] && continue
        "$HYMO" $cmd "$opt=@v" > "$OUT/eq.out" 2>&1; code=$?
        [ $code -eq 2 ] || fail "$cmd $opt=@v: exit $code (expected 2): $(cat "$OUT/eq.out")"
        one_line "$OUT/eq.out" "$cmd $opt=@v"
        grep -q "unknown option" "$OUT/eq.out" && fail "$cmd $opt (listed in --help) is unknown: $(cat "$OUT/eq.out")"
        if grep -q "option '$opt' takes no value" "$OUT/eq.out"; then # a flag
            grep -q "option '$opt' takes no value ('$opt=@v')" "$OUT/eq.out" || fail "$cmd $opt=@v: $(cat "$OUT/eq.out")"
        else
            grep -q "needs a value" "$OUT/eq.out" && fail "$cmd $opt=@v: $(cat "$OUT/eq.out")"
            [ -n "$first" ] || first=$opt
        fi
        checked=$((checked + 1))
    done
    if [ -n "$first" ]; then
        "$HYMO" $cmd "$first" > "$OUT/alone.out" 2>&1; code=$?
        [ $code -eq 2 ] && grep -q "option '$first' needs a value (see hymo $cmd --help)" "$OUT/alone.out" \
            || fail "$cmd $first without value: exit $code: $(cat "$OUT/alone.out")"
        one_line "$OUT/alone.out" "$cmd $first without value"
        "$HYMO" $cmd "$first=@v" > "$OUT/eq.out" 2>&1; c1=$?
        "$HYMO" $cmd "$first" "@v" > "$OUT/sp.out" 2>&1; c2=$?
        [ $c1 -eq $c2 ] && cmp -s "$OUT/eq.out" "$OUT/sp.out" \
            || fail "$cmd $first: '=@v' and ' @v' differ: $(cat "$OUT/eq.out") / $(cat "$OUT/sp.out")"
    fi
    "$HYMO" $cmd --no-such-option > "$OUT/unk.out" 2>&1; code=$?
    [ $code -eq 2 ] || fail "$cmd --no-such-option exit $code"
    one_line "$OUT/unk.out" "$cmd --no-such-option"
    grep -q "unknown option '--no-such-option' (see hymo $cmd --help)" "$OUT/unk.out" || fail "$cmd unknown: $(cat "$OUT/unk.out")"
    "$HYMO" $cmd --help=1 > "$OUT/unk.out" 2>&1; [ $? -eq 2 ] || fail "$cmd --help=1 accepted"
done
[ $checked -ge 60 ] || fail "only $checked options found in the --help texts"
echo "cli_options: $checked options of 5 commands accept both forms"

# 2. the same work in both forms gives the same results
"$HYMO" run "$F" --t-end 0.3 --dt 1e-3 --formulation penalty --jacobian fast --linear-solver dense \
    --alpha 1e11 --max-iter 20 --newton-test contractive --output-every 2 --set simulation.tolerances.position=1e-9 \
    -o "$OUT/sp.h5" -q || fail "run (--opt value) exited $?"
"$HYMO" run "$F" --t-end=0.3 --dt=1e-3 --formulation=penalty --jacobian=fast --linear-solver=dense \
    --alpha=1e11 --max-iter=20 --newton-test=contractive --output-every=2 --set=simulation.tolerances.position=1e-9 \
    --output="$OUT/eq.h5" --quiet || fail "run (--opt=value) exited $?"
"$HYMO" compare "$OUT/sp.h5" "$OUT/eq.h5" --max-abs=z=1e-300 --max-abs p=1e-300 --max-rms=s=1e-300 > "$OUT/cmp.out" 2>&1 \
    || fail "run: the two forms differ: $(cat "$OUT/cmp.out")"
h5dump -a /overrides "$OUT/eq.h5" | grep -q "simulation.tolerances.position=1e-9" || fail "run --set= not recorded"
"$HYMO" run "$F" --integrator ida --rtol 1e-7 --atol 1e-9 --t-end 0.2 -o "$OUT/ida_sp.h5" -q || fail "ida run"
"$HYMO" run "$F" --integrator=ida --rtol=1e-7 --atol=1e-9 --t-end=0.2 -o"$OUT/ida_eq.h5" -q || fail "ida run (=)"
"$HYMO" compare "$OUT/ida_sp.h5" "$OUT/ida_eq.h5" --max-abs=z=1e-300 > "$OUT/cmp.out" 2>&1 \
    || fail "ida: the two forms differ: $(cat "$OUT/cmp.out")"
# compare: the same report
"$HYMO" compare "$OUT/sp.h5" "$OUT/ida_sp.h5" --allow-model-mismatch --max-rms z=1 --max-abs s=1 \
    --max-residual-energy 1 > "$OUT/c1.out" 2>&1; c1=$?
"$HYMO" compare "$OUT/sp.h5" "$OUT/ida_sp.h5" --allow-model-mismatch --max-rms=z=1 --max-abs=s=1 \
    --max-residual-energy=1 > "$OUT/c2.out" 2>&1; c2=$?
[ $c1 -eq $c2 ] && cmp -s "$OUT/c1.out" "$OUT/c2.out" || fail "compare: the two forms differ ($c1, $c2)"
# cosim: every co-simulation option, the same summary (but the wall time)
"$HYMO" run "$M" --t-end 1.2 -q -o "$OUT/ref.h5" || fail "crane1 reference run exited $?"
CO="--t-end 1.2 --H 1e-3 --hh 1e-4 --hm 5e-4 --scheme gauss-seidel --coupling velocity-force --extrapolation 1
    --hyd-integrator trapezoidal --mech-integrator trapezoidal --formulation double-step --jacobian fast
    --mech-inputs hold --unstable-ratio 0.2 --unstable-balance-ratio 0.6 --unstable-floor 2 --unstable-energy 1e7
    --reference $OUT/ref.h5 --max-rms s=1 --max-abs z=10 --max-residual-energy 100 --set simulation.dt=1e-3"
"$HYMO" cosim "$M" $CO -o "$OUT/co_sp.h5" > "$OUT/co_sp.out" 2>&1; c1=$?
# shellcheck disable=SC2086
"$HYMO" cosim "$M" $(echo $CO | sed 's/\(--[a-z-]*\) /\1=/g') --output="$OUT/co_eq.h5" > "$OUT/co_eq.out" 2>&1; c2=$?
[ $c1 -eq $c2 ] || fail "cosim: exit $c1 / $c2: $(cat "$OUT/co_eq.out")"
grep -v "wall time\|written" "$OUT/co_sp.out" > "$OUT/co_sp.txt"
grep -v "wall time\|written" "$OUT/co_eq.out" > "$OUT/co_eq.txt"
cmp -s "$OUT/co_sp.txt" "$OUT/co_eq.txt" || fail "cosim: the two forms differ: $(diff "$OUT/co_sp.txt" "$OUT/co_eq.txt")"
grep -q "gauss-seidel-mech-first, velocity-force, extrapolation 1, mechanics. inputs hold" "$OUT/co_eq.out" || fail "cosim --scheme=/--coupling= not applied: $(cat "$OUT/co_eq.out")"
# sweep: the same tables (but the wall-time column)
"$HYMO" sweep "$M" --t-end 1.2 --H 1e-3,2e-3 --hh 1e-4 --jobs 2 --configs "coupling=velocity-pressure;extrapolation=0,2" \
    --achievable limits --max-rms s=1e-3 -o "$OUT/sw_sp" > "$OUT/sw_sp.out" 2>&1 || fail "sweep: $(cat "$OUT/sw_sp.out")"
"$HYMO" sweep "$M" --t-end=1.2 --H=1e-3,2e-3 --hh=1e-4 --jobs=2 --configs="coupling=velocity-pressure;extrapolation=0,2" \
    --achievable=limits --max-rms=s=1e-3 --output="$OUT/sw_eq" > "$OUT/sw_eq.out" 2>&1 || fail "sweep (=): $(cat "$OUT/sw_eq.out")"
cmp -s "$OUT/sw_sp_achievable.csv" "$OUT/sw_eq_achievable.csv" || fail "sweep: achievable tables differ"
col=$(head -1 "$OUT/sw_sp.csv" | tr ',' '\n' | grep -n '^wall_time$' | cut -d: -f1)
[ -n "$col" ] || fail "sweep.csv has no wall_time column"
cut -d, -f"$col" --complement "$OUT/sw_sp.csv" > "$OUT/sw_sp.txt"
cut -d, -f"$col" --complement "$OUT/sw_eq.csv" > "$OUT/sw_eq.txt"
cmp -s "$OUT/sw_sp.txt" "$OUT/sw_eq.txt" || fail "sweep: run tables differ: $(diff "$OUT/sw_sp.txt" "$OUT/sw_eq.txt")"

# 3. `--` ends the options; a value may start with '-'; -oFILE; -qo FILE
cp "$OUT/sp.h5" "$OUT/-dash.h5"
(cd "$OUT" && "$HYMO" info -- -dash.h5 > info.out 2>&1) || fail "info -- -dash.h5: $(cat "$OUT/info.out")"
grep -q "complete" "$OUT/info.out" || fail "info -- -dash.h5 output: $(cat "$OUT/info.out")"
(cd "$OUT" && "$HYMO" info -dash.h5 > info.out 2>&1); [ $? -eq 2 ] || fail "info -dash.h5 (an option) not refused"
grep -q "unknown option '-d'" "$OUT/info.out" || fail "info -dash.h5: $(cat "$OUT/info.out")"
"$HYMO" run -- "$F" --t-end 0.1 > "$OUT/dd.out" 2>&1; [ $? -eq 2 ] || fail "run -- MODEL --t-end: options after --"
grep -q "unexpected argument '--t-end'" "$OUT/dd.out" || fail "run -- message: $(cat "$OUT/dd.out")"
"$HYMO" run "$F" --dt -1 > "$OUT/neg.out" 2>&1; [ $? -eq 2 ] || fail "--dt -1 accepted"
grep -q "unknown option" "$OUT/neg.out" && fail "--dt -1: the value was taken as an option: $(cat "$OUT/neg.out")"
grep -q "dt" "$OUT/neg.out" || fail "--dt -1 message: $(cat "$OUT/neg.out")"
"$HYMO" run "$F" --t-end 0.1 -qo "$OUT/qo.h5" > "$OUT/qo.out" 2>&1 || fail "-qo FILE: $(cat "$OUT/qo.out")"
[ -s "$OUT/qo.h5" ] && [ ! -s "$OUT/qo.out" ] || fail "-qo FILE: no file or not quiet"
"$HYMO" run "$F" --t-end 0.1 -q -o"$OUT/o2.h5" || fail "-oFILE"
[ -s "$OUT/o2.h5" ] || fail "-oFILE wrote no file"
"$HYMO" run "$F" -qx > "$OUT/qx.out" 2>&1; [ $? -eq 2 ] || fail "-qx accepted"
grep -q "unknown option '-x' in '-qx'" "$OUT/qx.out" || fail "-qx message: $(cat "$OUT/qx.out")"

# 4. what a number is on the command line (src/core/number.h): strtod's
#    syntax over the whole value, finite, in range; no white space after it
for v in "0.1 " "1e-400" "1e400" "inf" "0.1x" ""; do
    "$HYMO" run "$F" --t-end "$v" -q -o "$OUT/num.h5" > "$OUT/num.out" 2>&1; code=$?
    [ $code -eq 2 ] || fail "--t-end '$v': exit $code (expected 2): $(cat "$OUT/num.out")"
    one_line "$OUT/num.out" "--t-end '$v'"
done
grep -q "'inf' is not a number" "$OUT/num.out" || grep -q "needs a value\|is not a number" "$OUT/num.out" \
    || fail "--t-end message: $(cat "$OUT/num.out")"
"$HYMO" run "$F" --t-end 0x1p-4 -q -o "$OUT/num.h5" > "$OUT/num.out" 2>&1 || fail "--t-end 0x1p-4 (hex): $(cat "$OUT/num.out")"
"$HYMO" compare "$OUT/num.h5" "$OUT/num.h5" --max-abs z=4e-320 > "$OUT/num.out" 2>&1; code=$?
[ $code -eq 2 ] || fail "compare --max-abs z=4e-320 (subnormal): exit $code (expected 2): $(cat "$OUT/num.out")"
"$HYMO" compare "$OUT/num.h5" "$OUT/num.h5" --max-abs "z=1e-3 " > "$OUT/num.out" 2>&1; code=$?
[ $code -eq 2 ] || fail "compare --max-abs 'z=1e-3 ': exit $code (expected 2): $(cat "$OUT/num.out")"
echo "cli_options: ok"
