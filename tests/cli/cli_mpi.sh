#!/bin/sh
# `mpirun -n 2 hymo sweep` (a build with -DHYMO_MPI=ON) writes the same
# tables as the threaded sweep: the achievable-H table and its printout
# identical, the run table and the HDF5 tables identical but for the
# wall-time column, over two parameter points (each with the reference rank 0
# computes and sends to the other rank); bad input under mpirun is one
# error line, exit 2.  Skipped (exit 77) when hymo is built without MPI.
# args: $1 hymo binary, $2 source dir, $3 build dir; environment:
# HYMO_MPIEXEC (tests/CMakeLists.txt: mpirun of an MPI build, else empty)
set -u
HYMO=$1; SRC=$2; OUT=$3/cli_mpi
fail() { echo "FAIL: $*"; exit 1; }
if [ -z "${HYMO_MPIEXEC:-}" ]; then
    echo "cli_mpi: skipped: hymo is built without MPI (configure with -DHYMO_MPI=ON; Debian: libopenmpi-dev openmpi-bin)"
    exit 77
fi
mkdir -p "$OUT"; rm -f "$OUT"/*
M=$SRC/data/crane1.yaml

# OpenMPI in CI and containers: as root, more ranks than cores allowed, no
# ssh/network probing (one node: shared memory and loopback only), no
# terminal (stdin closed).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_plm=isolated
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_btl_tcp_if_include=lo
export OMPI_MCA_hwloc_base_binding_policy=none OMPI_MCA_rmaps_base_mapping_policy=slot
mpi() { timeout 600 "$HYMO_MPIEXEC" -n 2 "$@" < /dev/null; }

KV='hydraulics.valves[dcv1].flow_coefficient'
ARGS="--t-end 2 --H 1e-3,4e-3 --set-grid $KV=1e-8,2e-8 --jobs 1"
CONFIGS="coupling=velocity-force,velocity-pressure;extrapolation=0,2;hyd=rk4;mech=trapezoidal"

# 1. the threaded sweep and the same sweep over two ranks
"$HYMO" sweep "$M" $ARGS --configs "$CONFIGS" -o "$OUT/thr" > "$OUT/thr.out" 2> "$OUT/thr.err" < /dev/null \
    || fail "threaded sweep exited $?: $(cat "$OUT/thr.err")"
mpi "$HYMO" sweep "$M" $ARGS --configs "$CONFIGS" -o "$OUT/mpi" > "$OUT/mpi.out" 2> "$OUT/mpi.err" \
    || fail "mpirun -n 2 hymo sweep exited $?: $(cat "$OUT/mpi.err")"
grep -q "runs on 2 ranks x 1 threads" "$OUT/mpi.err" || fail "the sweep did not run on 2 ranks: $(cat "$OUT/mpi.err")"
[ "$(grep -c "^sweep: rank 0: 4/4 runs" "$OUT/mpi.err")" -eq 2 ] \
    || fail "rank 0 did not run half of each point's 8 runs: $(cat "$OUT/mpi.err")"
[ "$(grep -c "^sweep: [0-9]* configurations" "$OUT/mpi.err")" -eq 1 ] || fail "ranks other than 0 print: $(cat "$OUT/mpi.err")"
cmp -s "$OUT/thr_achievable.csv" "$OUT/mpi_achievable.csv" \
    || fail "achievable tables differ: $(diff "$OUT/thr_achievable.csv" "$OUT/mpi_achievable.csv")"
[ "$(wc -l < "$OUT/mpi_achievable.csv")" -eq 9 ] || fail "achievable table rows: $(cat "$OUT/mpi_achievable.csv")"
# the printed table: the same (but the wall-time and thread/compilation lines)
grep -v "wall time\|model compiled" "$OUT/thr.out" > "$OUT/thr.txt"
grep -v "wall time\|model compiled" "$OUT/mpi.out" > "$OUT/mpi.txt"
cmp -s "$OUT/thr.txt" "$OUT/mpi.txt" || fail "printed achievable H differs: $(diff "$OUT/thr.txt" "$OUT/mpi.txt")"
grep -q "^  velocity-pressure  *2 .* 4$" "$OUT/mpi.out" || fail "achievable H of velocity-pressure p=2: $(cat "$OUT/mpi.out")"
# the run table without its wall_time column
col=$(head -1 "$OUT/mpi.csv" | tr ',' '\n' | grep -n '^wall_time$' | cut -d: -f1)
[ -n "$col" ] || fail "no wall_time column"
cut -d, -f"$col" --complement "$OUT/thr.csv" > "$OUT/thr_runs.txt"
cut -d, -f"$col" --complement "$OUT/mpi.csv" > "$OUT/mpi_runs.txt"
cmp -s "$OUT/thr_runs.txt" "$OUT/mpi_runs.txt" || fail "run tables differ: $(diff "$OUT/thr_runs.txt" "$OUT/mpi_runs.txt")"
[ "$(wc -l < "$OUT/mpi.csv")" -eq 17 ] || fail "run table rows"
# HDF5 tables: every dataset bit for bit but /runs/wall_time
if command -v h5diff > /dev/null 2>&1; then
    h5diff --exclude-path /runs/wall_time "$OUT/thr.h5" "$OUT/mpi.h5" > "$OUT/h5diff.out" 2>&1 \
        || fail "HDF5 tables differ: $(head -20 "$OUT/h5diff.out")"
fi
# the references rank 0 computed: the same as the threaded sweep's
for p in 0 1; do
    "$HYMO" compare "$OUT/thr_reference_p$p.h5" "$OUT/mpi_reference_p$p.h5" --max-abs z=1e-300 --max-abs p=1e-300 \
        > "$OUT/ref.out" 2>&1 || fail "reference p$p differs: $(cat "$OUT/ref.out")"
done

# 2. a given --reference (rank 0 sends it) with one point and three ranks
# over two threads: the achievable table again identical
"$HYMO" sweep "$M" --t-end 2 --H 1e-3,4e-3 --configs "$CONFIGS" --reference "$OUT/thr_reference_p0.h5" \
    --set "$KV=1e-8" -o "$OUT/thr1" > /dev/null 2> "$OUT/thr1.err" < /dev/null || fail "threaded sweep 2: $(cat "$OUT/thr1.err")"
timeout 600 "$HYMO_MPIEXEC" -n 3 "$HYMO" sweep "$M" --t-end 2 --H 1e-3,4e-3 --configs "$CONFIGS" \
    --reference "$OUT/thr_reference_p0.h5" --set "$KV=1e-8" -o "$OUT/mpi1" > /dev/null 2> "$OUT/mpi1.err" < /dev/null \
    || fail "mpirun -n 3 sweep with --reference exited $?: $(cat "$OUT/mpi1.err")"
cmp -s "$OUT/thr1_achievable.csv" "$OUT/mpi1_achievable.csv" || fail "achievable tables (3 ranks) differ"
[ ! -e "$OUT/mpi1_reference.h5" ] || fail "a reference was computed although --reference was given"

# 3. bad input under mpirun: one line (from rank 0), exit 2, no table
mpi "$HYMO" sweep "$M" --jobs=0 -o "$OUT/bad" > "$OUT/bad.out" 2> "$OUT/bad.err"; code=$?
[ $code -eq 2 ] || fail "mpirun sweep --jobs=0 exit $code"
# (mpirun adds its own notice about a rank's non-zero exit)
[ "$(grep -c "^hymo:" "$OUT/bad.err")" -eq 1 ] || fail "mpirun sweep --jobs=0: not one line: $(cat "$OUT/bad.err")"
grep -q -- "--jobs: '0'" "$OUT/bad.err" || fail "mpirun sweep --jobs=0 message: $(cat "$OUT/bad.err")"
mpi "$HYMO" sweep "$M" --t-end 2 --H 1e-3 --reference "$OUT/missing.h5" -o "$OUT/bad" > /dev/null 2> "$OUT/bad.err"
code=$?; [ $code -eq 2 ] || fail "mpirun sweep with a missing reference: exit $code"
[ "$(grep -c "^hymo:" "$OUT/bad.err")" -eq 1 ] && grep -q "^hymo: error: .*missing.h5" "$OUT/bad.err" \
    || fail "missing reference message: $(cat "$OUT/bad.err")"
[ ! -e "$OUT/bad.csv" ] || fail "a failed sweep wrote a table"
echo "cli_mpi: ok (2 and 3 ranks: the threaded sweep's tables)"
