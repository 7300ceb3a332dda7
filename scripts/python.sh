#!/usr/bin/env bash
# Builds the Python package `nonsmooth` (python/, PyO3 + maturin) into a virtual environment
# and runs its pytest suite (python/tests), including the code blocks of docs/python.md.
# The venv lives in target/python-venv (override with NONSMOOTH_VENV). The extension is built
# with the `dev` profile (the tests are small; clarabel is optimized even there, see Cargo.toml)
# and left in target/wheels, where `scripts/wheel.sh --built target/wheels` takes it.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${NONSMOOTH_VENV:-target/python-venv}"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -m pip install --quiet --upgrade "maturin>=1.5,<2" numpy pytest \
        "dask[distributed]" pandas mypy; then
    echo "python.sh: could not install maturin/numpy/pytest/dask/pandas/mypy from PyPI (offline?)" >&2
    exit 3
fi
rm -rf target/wheels/nonsmooth-*.whl
"$VENV/bin/maturin" build --quiet --profile dev --manifest-path python/Cargo.toml \
    --interpreter "$VENV/bin/python" --auditwheel skip --out target/wheels
"$VENV/bin/python" -m pip install --quiet --force-reinstall --no-deps target/wheels/nonsmooth-*.whl
"$VENV/bin/python" -m pytest -q python/tests "$@"
# The stubs match the extension module (run from outside the sources, on the installed
# package).
PYTHON="$(cd "$VENV/bin" && pwd)/python"
ALLOW="$(pwd)/python/stubtest_allowlist.txt"
(cd target && "$PYTHON" -m mypy.stubtest nonsmooth._nonsmooth nonsmooth.types --allowlist "$ALLOW")
