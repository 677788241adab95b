#!/usr/bin/env bash
# Fresh Debian machine -> a four-bar reference file:
#   installs the missing build dependencies (apt-get), builds Release in
#   build/, runs `hymo run data/fourbar.yaml -o fourbar.h5` and prints
#   `hymo info fourbar.h5`.
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

echo "== build/hymo run data/fourbar.yaml -o fourbar.h5"
build/hymo run data/fourbar.yaml -o fourbar.h5

echo "== build/hymo info fourbar.h5"
build/hymo info fourbar.h5
