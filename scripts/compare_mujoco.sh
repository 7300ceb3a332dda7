#!/usr/bin/env bash
# Time per step of nonsmooth's rigid steppers against MuJoCo on a toppling sphere stack and the
# incline box (scripts/compare_mujoco.py). Builds the CLI in release mode and installs the
# `mujoco` wheel into its own virtual environment (target/mujoco-venv); not part of the tests.
# Extra arguments go to the Python script (e.g. --spheres 10).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --quiet -p nonsmooth-cli
VENV=target/mujoco-venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet "mujoco>=3"
"$VENV/bin/python" scripts/compare_mujoco.py "$@"
