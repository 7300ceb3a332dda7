#!/usr/bin/env bash
# Time per step of nonsmooth's rigid steppers against MuJoCo on sphere stacks, the incline and
# a tumbling box, the quadruped and sphere piles of 10 to 1000, and their accuracy against
# closed forms (the incline's slide and normal force, a box sliding to rest, a three-box tower
# at rest; scenes incline-mu, box-stop, tower) (scripts/compare_mujoco.py; results also in
# target/compare-mujoco.json and .csv). Builds the CLI in release mode and
# installs the `mujoco` wheel into its own virtual environment (target/mujoco-venv); not part
# of the tests. Extra arguments go to the Python script (e.g. --scenes stack,aligned
# --duration-scale 0.2 --timeout 60).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --quiet -p nonsmooth-cli
VENV=target/mujoco-venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet "mujoco>=3"
"$VENV/bin/python" scripts/compare_mujoco.py "$@"
