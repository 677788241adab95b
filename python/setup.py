"""Python package of hymo (ctypes over libhymo.so; docs/python.md).

Offline with Debian's pip and setuptools (no pyproject.toml on purpose:
pip then builds with the setuptools it finds instead of downloading one):
    python3 -m venv --system-site-packages ~/hymo-venv
    ~/hymo-venv/bin/pip install ./python
or system-wide: pip install --break-system-packages ./python
The package finds libhymo.so through $HYMO_LIB, an installed
libhymo.so.0 (cmake --install; ldconfig or LD_LIBRARY_PATH), or the build
directory of the source tree it came from.
"""
from setuptools import setup

setup(
    name="hymo",
    version="0.1.0",
    description="Hydraulically actuated multibody systems: Python interface to libhymo",
    packages=["hymo"],
    python_requires=">=3.9",
    install_requires=["numpy"],
    extras_require={"files": ["h5py"]},
)
