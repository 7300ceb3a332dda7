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
VENV="${NONSMOOTH_PEERS_VENV:-target/peers-venv}"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
VENV="$(cd "$VENV" && pwd)"
if ! "$VENV/bin/python" -m pip install --quiet --upgrade pin example-robot-data mujoco numpy; then
    echo "peer_robots_check.sh: could not install the peers from PyPI (offline?)" >&2
    exit 3
fi
WHEELS="target/peers-wheels"
rm -rf "$WHEELS"
if ! "$VENV/bin/python" -m pip download --quiet --no-deps dm_control -d "$WHEELS"; then
    echo "peer_robots_check.sh: could not download dm_control from PyPI (offline?)" >&2
    exit 3
fi
SUITE="target/peers-dm-control"
rm -rf "$SUITE"
"$VENV/bin/python" - "$WHEELS" "$SUITE" <<'EOF'
import glob, sys, zipfile
wheels, out = sys.argv[1:]
(wheel,) = glob.glob(f"{wheels}/dm_control-*.whl")
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("dm_control/suite/") and name.endswith(".xml"):
            z.extract(name, out)
EOF
ROBOTS="$(ls -d "$VENV"/lib/python3*/site-packages/cmeel.prefix/share/example-robot-data/robots)"
OUT="target/peer-robots.json"
# From target/: MuJoCo writes its warnings (settotalmass's deprecation) to MUJOCO_LOG.TXT in
# the working directory.
(cd target && "$VENV/bin/python" ../scripts/peer_robots_check.py "$ROBOTS" \
    "../$SUITE/dm_control/suite") > "$OUT"
echo "peer_robots_check: $("$VENV/bin/python" -c 'import pinocchio, mujoco, importlib.metadata as m; print("Pinocchio", pinocchio.__version__, "| example-robot-data", m.version("example-robot-data"), "| MuJoCo", mujoco.__version__)') | $(basename "$WHEELS"/dm_control-*.whl)"
NONSMOOTH_PEER_ROBOTS="$(pwd)/$OUT" cargo test --quiet --workspace \
    --features nonsmooth-solvers/sdp --test peer_robots -- --nocapture
