#!/usr/bin/env bash
# Builds the Python package `nonsmooth` (python/, PyO3 + maturin) into a virtual environment
# and runs its pytest suite (python/tests), including the Python blocks of README.md and docs/.
# The venv lives in target/python-venv (override with NONSMOOTH_VENV). The extension is built
# in release mode, as `pip install ./python` builds it and as the wheel holds it, so that the
# tests and `python python/benches/python_vs_cli.py` measure what users get; it is left in
# target/wheels, where `scripts/wheel.sh --built target/wheels` takes it. (`maturin build
# --profile test` cannot reuse what `cargo test` built: maturin builds through `cargo rustc`,
# which compiles the `test` profile as a test harness without the module's init symbol.)
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
"$VENV/bin/maturin" build --quiet --release --manifest-path python/Cargo.toml \
    --interpreter "$VENV/bin/python" --auditwheel skip --out target/wheels
"$VENV/bin/python" -m pip install --quiet --force-reinstall --no-deps target/wheels/nonsmooth-*.whl
# -rs: the reason of every skipped test (the docs' blocks marked not to run).
"$VENV/bin/python" -m pytest -q -rs python/tests "$@"
# The stubs match the extension module (run from outside the sources, on the installed
# package).
PYTHON="$(cd "$VENV/bin" && pwd)/python"
ALLOW="$(pwd)/python/stubtest_allowlist.txt"
(cd target && "$PYTHON" -m mypy.stubtest nonsmooth._nonsmooth nonsmooth.types --allowlist "$ALLOW")
