#!/bin/bash
# usage: bench/measure_process.sh HYMO_BIN
# Prints the callgrind totals of docs/performance.md's table "The whole process"
# (start-up, the seed runs fast / numeric / --newton-test seed, -o with and
# without the estimate per thread), ldd's line count and the loader's relocations.
# HYMO_ROOT: the repository (default: this script's); MEAS_OUT: scratch directory.
H=$(realpath "$1"); cd "${HYMO_ROOT:-$(dirname "$0")/..}" || exit 1; O=${MEAS_OUT:-/tmp/meas}; mkdir -p "$O"
cg() { valgrind --tool=callgrind --callgrind-out-file=$O/cg.out "$@" >/dev/null 2>$O/cg.err; grep -o "Collected : [0-9]*" $O/cg.err | awk '{printf "%.2f M\n", $3/1e6}'; }
cgt() { valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=$O/cgt.out "$@" >/dev/null 2>&1; for f in $O/cgt.out*; do printf "%s %s\n" "$f" "$(grep '^summary\|^totals' $f | head -1)"; done; rm -f $O/cgt.out*; }
echo "startup $(cg $H run data/fourbar.yaml --t-end 0.001 -q)"
for m in fourbar quickreturn; do for f in double-step penalty; do
  echo "$m $f fast $(cg $H run data/$m.yaml -q --jacobian fast --formulation $f)"
done; done
for m in fourbar quickreturn; do for f in double-step penalty; do
  echo "$m $f numeric $(cg $H run data/$m.yaml -q --jacobian numeric --formulation $f)"
  echo "$m $f seed $(cg $H run data/$m.yaml -q --jacobian fast --formulation $f --newton-test seed)"
done; done
echo "fourbar -o --no-estimate total $(cg $H run data/fourbar.yaml -q --jacobian fast -o $O/f.h5 --no-estimate)"; rm -f $O/f.h5
echo "fourbar -o total $(cg $H run data/fourbar.yaml -q --jacobian fast -o $O/f.h5)"; rm -f $O/f.h5
echo "threads -o --no-estimate:"; cgt $H run data/fourbar.yaml -q --jacobian fast -o $O/f.h5 --no-estimate; rm -f $O/f.h5
echo "threads -o:"; cgt $H run data/fourbar.yaml -q --jacobian fast -o $O/f.h5; rm -f $O/f.h5
echo "ldd $(ldd $H | wc -l)"
LD_DEBUG=statistics $H run data/fourbar.yaml --t-end 0.001 -q 2>&1 | grep -i "number of relocations\|relative relocations" | head -3
