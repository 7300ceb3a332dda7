#!/usr/bin/env bash
# Published robots against the peers: installs Pinocchio (`pin`), example-robot-data (URDFs
# and meshes of legged robots, humanoids, arms and hands as published for Pinocchio) and
# MuJoCo into their own venv (target/peers-venv), unpacks the MJCF models of the DeepMind
# Control Suite from the dm_control wheel (downloaded without its dependencies), lets
# Pinocchio and MuJoCo compute the mass matrix and the bias forces at the reference pose and
# at random states (scripts/peer_robots_check.py) and runs the Rust test `peer_robots_match`
# against that output (1e-9 relative to the scale of M). Exit code 3 means PyPI could not be
# reached: nothing was compared.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/published_robots.sh
SUITE="target/peers-dm-control"
fetch_published_robots peer_robots_check.sh "$SUITE" pin example-robot-data mujoco numpy
OUT="target/peer-robots.json"
# From target/: MuJoCo writes its warnings (settotalmass's deprecation) to MUJOCO_LOG.TXT in
# the working directory.
(cd target && "$VENV/bin/python" ../scripts/peer_robots_check.py "$ROBOTS" \
    "../$SUITE/dm_control/suite") > "$OUT"
echo "peer_robots_check: $("$VENV/bin/python" -c 'import pinocchio, mujoco, importlib.metadata as m; print("Pinocchio", pinocchio.__version__, "| example-robot-data", m.version("example-robot-data"), "| MuJoCo", mujoco.__version__)') | $(basename "$WHEELS"/dm_control-*.whl)"
NONSMOOTH_PEER_ROBOTS="$(pwd)/$OUT" cargo test --quiet --workspace \
    --features nonsmooth-solvers/sdp --test core peer_robots:: -- --nocapture
