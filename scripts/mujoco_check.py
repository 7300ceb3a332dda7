"""MuJoCo's view of MJCF files, for checking nonsmooth's MJCF import.

Usage: python scripts/mujoco_check.py FILE.xml [FILE.xml ...] > reference.json

For each file: loads it with `mujoco.MjModel.from_xml_path`, runs `mj_forward` at `qpos0`
and writes, keyed by the path as given, the dense mass matrix (`mj_fullM`, armature on the
diagonal), `qpos0`, and every named body's world pose (`xpos`, `xquat` as w, x, y, z), COM
(`xipos`), mass and subtree mass. The world body (id 0) is left out.

The Rust test `mjcf_matches_mujoco_reference` (crates/nonsmooth-core/tests/mjcf_import.rs)
compares nonsmooth's import with the committed output of this script,
crates/nonsmooth-core/tests/data/mujoco_reference.json; regenerate it with
  python scripts/mujoco_check.py examples/mjcf/*.xml \
      > crates/nonsmooth-core/tests/data/mujoco_reference.json
"""

import json
import sys

import mujoco
import numpy as np


def check(path):
    model = mujoco.MjModel.from_xml_path(path)
    data = mujoco.MjData(model)
    data.qpos[:] = model.qpos0
    mujoco.mj_forward(model, data)
    full = np.zeros((model.nv, model.nv))
    if hasattr(data, "qM"):  # MuJoCo < 3.4: mj_fullM(m, dst, qM)
        mujoco.mj_fullM(model, full, data.qM)
    else:
        mujoco.mj_fullM(model, data, full)
    bodies = {}
    for b in range(1, model.nbody):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b)
        if not name:
            continue
        bodies[name] = {
            "xpos": data.xpos[b].tolist(),
            "xquat": data.xquat[b].tolist(),
            "xipos": data.xipos[b].tolist(),
            "mass": float(model.body_mass[b]),
            "subtree_mass": float(model.body_subtreemass[b]),
        }
    joints = [
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or "" for j in range(model.njnt)
    ]
    return {
        "nq": int(model.nq),
        "nv": int(model.nv),
        "qpos0": model.qpos0.tolist(),
        "joints": joints,
        "mass_matrix": full.tolist(),
        "bodies": bodies,
    }


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = {
        "mujoco_version": mujoco.__version__,
        "files": {path: check(path) for path in sys.argv[1:]},
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
