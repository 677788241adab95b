#!/usr/bin/env bash
# Fresh Debian machine -> a crane reference file:
#   installs the missing build dependencies (apt-get), builds Release in
#   build/, runs `hymo run data/crane1.yaml -o crane1.h5`, prints
#   `hymo info crane1.h5`, draws it (crane1.png, scripts/plot_run.py) and
#   points to the tutorial.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=scripts/deps.sh
. scripts/deps.sh

jobs="$(nproc 2>/dev/null || echo 2)"

echo "== dependencies"
hymo_install_deps

echo "== configure + build (Release, build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs" --target hymo

echo "== build/hymo run data/crane1.yaml -o crane1.h5"
build/hymo run data/crane1.yaml -o crane1.h5

echo "== build/hymo info crane1.h5"
build/hymo info crane1.h5

echo "== /usr/bin/python3 scripts/plot_run.py crane1.h5"
/usr/bin/python3 scripts/plot_run.py crane1.h5

echo "== next: docs/tutorial.md builds your first machine, step by step; crane1.png is what you just computed"
