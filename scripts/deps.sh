# shellcheck shell=bash
# Debian packages hymo needs, and an installer that only touches what is
# missing.  Sourced by scripts/setup-and-run.sh, scripts/test.sh and
# scripts/bench.sh; not meant to be executed.
#
#   hymo_install_deps            installs HYMO_DEPS
#   hymo_install_optional_deps   tries HYMO_DEPS_OPTIONAL (never fails)
#   hymo_ensure_packages PKG...  installs the given packages if missing
#
# Non-interactive (DEBIAN_FRONTEND=noninteractive, apt-get -y, sudo -n), so
# it works without a terminal and in CI.  Uses sudo only when not root.

HYMO_DEPS=(
    build-essential
    cmake
    pkg-config
    libsundials-dev
    libsuitesparse-dev
    liblapacke-dev
    libhdf5-dev
    hdf5-tools
    libyaml-dev
    libzip-dev
    libexpat1-dev
    libcmocka-dev
    python3-pytest
    python3-numpy
    python3-scipy
    python3-h5py
    python3-sympy
    python3-matplotlib
    python3-yaml
    python3-pil
    python3-meshio
)

# Optional: hymo builds and tests without them.
#   libopenmpi-dev openmpi-bin  `mpirun -n K hymo sweep` (cmake -DHYMO_MPI=ON;
#                               scripts/test.sh builds build-ci with MPI when
#                               they are there, so tests/cli/cli_mpi.sh runs)
#   doxygen                     API reference: cmake --build BUILD --target hymo_docs
HYMO_DEPS_OPTIONAL=(
    libopenmpi-dev
    openmpi-bin
    doxygen
)

hymo_package_installed() {
    dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed$'
}

hymo_ensure_packages() {
    local missing=() pkg
    if ! command -v dpkg >/dev/null 2>&1; then
        echo "deps: dpkg not found; this script supports Debian/Ubuntu only." >&2
        echo "deps: install these packages by hand: $*" >&2
        return 1
    fi
    for pkg in "$@"; do
        hymo_package_installed "$pkg" || missing+=("$pkg")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        echo "deps: all ${#} packages already installed"
        return 0
    fi
    echo "deps: installing ${missing[*]}"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "deps: not root and sudo is not available; install as root: apt-get install ${missing[*]}" >&2
            return 1
        fi
        sudo=(sudo -n)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null &&
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            "${missing[@]}" </dev/null
}

hymo_install_deps() {
    hymo_ensure_packages "${HYMO_DEPS[@]}"
}

hymo_install_optional_deps() {
    hymo_ensure_packages "${HYMO_DEPS_OPTIONAL[@]}" ||
        echo "deps: optional packages not installed (${HYMO_DEPS_OPTIONAL[*]}): building without them" >&2
    return 0
}
