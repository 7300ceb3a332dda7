# Sourced by scripts/peer_robots_check.sh and scripts/published_robots_run.sh: published robot
# files from PyPI in one venv (target/peers-venv, or NONSMOOTH_PEERS_VENV).
#
# fetch_published_robots CALLER SUITE_DIR PACKAGE...
#   installs PACKAGE... (example-robot-data among them) into the venv, downloads the
#   dm_control wheel without its dependencies and unpacks the DeepMind Control Suite's MJCF
#   files into SUITE_DIR/dm_control/suite; sets VENV (absolute), WHEELS (the dm_control wheel's
#   folder) and ROBOTS (example-robot-data's robots folder). Exits with code 3 when PyPI
#   cannot be reached, naming CALLER.
fetch_published_robots() {
    local caller="$1" suite="$2"
    shift 2
    VENV="${NONSMOOTH_PEERS_VENV:-target/peers-venv}"
    if [ ! -x "$VENV/bin/python" ]; then
        python3 -m venv "$VENV"
    fi
    VENV="$(cd "$VENV" && pwd)"
    if ! "$VENV/bin/python" -m pip install --quiet --upgrade "$@"; then
        echo "$caller: could not install $* from PyPI (offline?)" >&2
        exit 3
    fi
    WHEELS="target/peers-wheels"
    rm -rf "$WHEELS"
    if ! "$VENV/bin/python" -m pip download --quiet --no-deps dm_control -d "$WHEELS"; then
        echo "$caller: could not download dm_control from PyPI (offline?)" >&2
        exit 3
    fi
    rm -rf "$suite"
    "$VENV/bin/python" - "$WHEELS" "$suite" <<'PY'
import glob, sys, zipfile
wheels, out = sys.argv[1:]
(wheel,) = glob.glob(f"{wheels}/dm_control-*.whl")
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("dm_control/suite/") and name.endswith(".xml"):
            z.extract(name, out)
PY
    ROBOTS="$(ls -d "$VENV"/lib/python3*/site-packages/cmeel.prefix/share/example-robot-data/robots)"
}
