#!/usr/bin/env bash
# The step derivatives' benchmark (crates/nonsmooth-sim/benches/derivatives.rs: error against
# central differences and cost against the step on six scenes and generated variations) and,
# in the same run, MuJoCo's mjd_transitionFD on the MJCF quadruped (scripts/derivatives_mujoco.py;
# the `mujoco` wheel in its own virtual environment, target/mujoco-venv). Not part of the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo bench -p nonsmooth-sim --bench derivatives
VENV=target/mujoco-venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet "mujoco>=3"
"$VENV/bin/python" scripts/derivatives_mujoco.py examples/mjcf/quadruped.xml "$@"
