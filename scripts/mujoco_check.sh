#!/usr/bin/env bash
# MJCF import against MuJoCo itself: installs the `mujoco` wheel into its own venv
# (target/mujoco-venv), lets MuJoCo compile the example MJCF files (mass matrix at qpos0,
# every body's world pose, COM and mass; scripts/mujoco_check.py) and runs the Rust test
# `mjcf_matches_mujoco_reference` against that output (1e-9), then the same for the
# <compiler> mass corrections (scripts/mujoco_compiler_reference.py,
# `compiler_mass_corrections_match_mujoco`). Exit code 3 means PyPI could
# not be reached: the committed reference (crates/nonsmooth-core/tests/data/) is still
# checked by `cargo test`, and this script says that MuJoCo itself was not run.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${NONSMOOTH_MUJOCO_VENV:-target/mujoco-venv}"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -m pip install --quiet --upgrade mujoco numpy; then
    echo "mujoco_check.sh: could not install mujoco from PyPI (offline?)" >&2
    exit 3
fi
OUT="target/mujoco-reference.json"
"$VENV/bin/python" scripts/mujoco_check.py examples/mjcf/*.xml > "$OUT"
echo "mujoco_check: MuJoCo $("$VENV/bin/python" -c 'import mujoco; print(mujoco.__version__)')"
NONSMOOTH_MUJOCO_REFERENCE="$(pwd)/$OUT" cargo test --quiet --workspace \
    --features nonsmooth-solvers/sdp --test core mjcf_import::mjcf_matches_mujoco_reference
# The <compiler> mass corrections (settotalmass, bounds, balancing, fusestatic) at a pose.
COMPILER_OUT="target/mujoco-compiler-reference.json"
"$VENV/bin/python" scripts/mujoco_compiler_reference.py > "$COMPILER_OUT"
NONSMOOTH_MUJOCO_COMPILER_REFERENCE="$(pwd)/$COMPILER_OUT" cargo test --quiet \
    -p nonsmooth-core --test core mjcf_compiler::compiler_mass_corrections_match_mujoco
