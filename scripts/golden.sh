#!/usr/bin/env bash
# Golden answers (docs/golden.md): regenerate or check them.
#
#   scripts/golden.sh write [BUILD_DIR]        rewrite data/golden/<case>.txt with a Release build
#                                              (default BUILD_DIR build-golden, configured and built here)
#   scripts/golden.sh check [BUILD_DIR]        run tests/test_golden of BUILD_DIR against data/golden/
#   scripts/golden.sh write-sweep BUILD_DIR    rewrite data/golden/crane{1,2}_sweep*.{csv,txt} with BUILD_DIR/hymo
#   scripts/golden.sh check-sweep BUILD_DIR    rerun both sweeps with BUILD_DIR/hymo and diff the tables
#                                              against data/golden/ (byte-identical expected; not a ctest:
#                                              about 30 s in Release, far longer under ASan)
#
# Regenerate only for an intended change of results, and give the reason in
# the commit message.  The sweep tables are compared without their
# wall_time column; *_sweep_full.txt holds the per-run numbers of TABLE.h5
# at full precision (%.17g), the CSV files the printed %.6g tables.
# Environment: JOBS (default 2) for the build and the sweeps.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
golden="$root/data/golden"
jobs="${JOBS:-2}"
sweep_models=(crane1 crane2)
# /runs datasets of TABLE.h5 in the order of the CSV columns (wall_time left out)
sweep_columns=(H stable pass rms_s max_s rms_sd rms_p rms_z residual_energy_final
               residual_energy_max_abs peak_drift t_reached)

usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 2; }

abs_dir() { (cd "$1" && pwd); }

build_release() {
    local dir="$1"
    cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DHYMO_WERROR=ON </dev/null >/dev/null
    cmake --build "$dir" -j "$jobs" --target hymo test_golden </dev/null >/dev/null
}

# One dataset of an HDF5 file, one value per line (%.17g for numbers).
h5_column() {
    local file="$1" dataset="$2" tmp
    tmp="$(mktemp)"
    h5dump -d "$dataset" -m '%.17g' -y -w 1 -o "$tmp" "$file" >/dev/null
    sed -e 's/^ *//' -e 's/,$//' -e '/^$/d' "$tmp"
    rm -f "$tmp"
}

# normalize_sweep PREFIX OUTDIR MODEL: PREFIX.csv, PREFIX_achievable.csv,
# PREFIX.h5 -> OUTDIR/MODEL_sweep.csv (no wall_time),
# OUTDIR/MODEL_sweep_achievable.csv, OUTDIR/MODEL_sweep_full.txt
normalize_sweep() {
    local prefix="$1" out="$2" model="$3"
    awk -F, -v OFS=, '
        NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "wall_time") w = i
                  if (!w) { print "no wall_time column" > "/dev/stderr"; exit 1 } }
        { s = ""; sep = ""; for (i = 1; i <= NF; ++i) if (i != w) { s = s sep $i; sep = "," }; print s }
    ' "$prefix.csv" >"$out/${model}_sweep.csv"
    cp "$prefix"_achievable.csv "$out/${model}_sweep_achievable.csv"
    local cols=() c tmpd
    tmpd="$(mktemp -d)"
    h5_column "$prefix.h5" /runs/config >"$tmpd/00_config"
    cols+=("$tmpd/00_config")
    local k=1
    for c in "${sweep_columns[@]}"; do
        h5_column "$prefix.h5" "/runs/$c" >"$tmpd/$(printf %02d $k)_$c"
        cols+=("$tmpd/$(printf %02d $k)_$c")
        k=$((k + 1))
    done
    {
        echo "# $model sweep, every run at full precision (TABLE.h5 /runs without wall_time); scripts/golden.sh"
        (IFS=,; echo "config,${sweep_columns[*]}")
        paste -d, "${cols[@]}"
        echo "# achievable H per configuration (/achievable)"
        paste -d, <(h5_column "$prefix.h5" /achievable/config) <(h5_column "$prefix.h5" /achievable/H)
    } >"$out/${model}_sweep_full.txt"
    rm -rf "$tmpd"
}

# run_sweeps HYMO OUTDIR: both sweeps (default grid and thresholds), normalized into OUTDIR
run_sweeps() {
    local hymo="$1" out="$2" work m
    work="$(mktemp -d)"
    for m in "${sweep_models[@]}"; do
        echo "golden.sh: $hymo sweep data/$m.yaml" >&2
        "$hymo" sweep "$root/data/$m.yaml" -o "$work/${m}_sweep" --jobs "$jobs" >"$work/$m.log" 2>&1 ||
            { cat "$work/$m.log" >&2; rm -rf "$work"; return 1; }
        normalize_sweep "$work/${m}_sweep" "$out" "$m"
    done
    rm -rf "$work"
}

mode="${1:-}"
case "$mode" in
write)
    build="${2:-$root/build-golden}"
    mkdir -p "$build" "$golden"
    build="$(abs_dir "$build")"
    build_release "$build"
    (cd "$build/tests" && HYMO_GOLDEN_WRITE=1 ./test_golden)
    echo "golden.sh: wrote $golden/*.txt; review with git diff, commit with the reason for the change"
    ;;
check)
    build="${2:-$root/build-golden}"
    mkdir -p "$build"
    build="$(abs_dir "$build")"
    if [ -f "$build/CMakeCache.txt" ]; then   # any build type: just bring the test up to date
        cmake --build "$build" -j "$jobs" --target test_golden </dev/null >/dev/null
    else
        build_release "$build"
    fi
    (cd "$build/tests" && ./test_golden)
    ;;
write-sweep)
    [ $# -ge 2 ] || usage
    hymo="$(abs_dir "$2")/hymo"
    mkdir -p "$golden"
    run_sweeps "$hymo" "$golden"
    echo "golden.sh: wrote $golden/{crane1,crane2}_sweep*"
    ;;
check-sweep)
    [ $# -ge 2 ] || usage
    hymo="$(abs_dir "$2")/hymo"
    out="$(mktemp -d)"
    run_sweeps "$hymo" "$out"
    status=0
    for f in "$out"/*; do
        if cmp -s "$f" "$golden/$(basename "$f")"; then
            echo "identical: $(basename "$f")"
        else
            echo "DIFFERENT: $(basename "$f")"
            diff "$golden/$(basename "$f")" "$f" | head -20 || true
            status=1
        fi
    done
    rm -rf "$out"
    [ $status -eq 0 ] && echo "check-sweep: all sweep tables identical" || echo "check-sweep: FAILED"
    exit $status
    ;;
*)
    usage
    ;;
esac
