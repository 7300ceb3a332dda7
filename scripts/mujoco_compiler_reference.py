"""MuJoCo's masses and mass matrix of the <compiler> mass-correction test models.

Usage (from the repository root, with the `mujoco` wheel installed):
  python scripts/mujoco_compiler_reference.py \
      > crates/nonsmooth-core/tests/data/mujoco_compiler_reference.json

For each model of crates/nonsmooth-core/tests/data/mjcf_compiler/ (keyed by file name): every
named body's mass and principal moments, and the dense mass matrix (`mj_fullM`) at the pose
POSE below (a free-joint pose and two hinge angles), read by the Rust test
`compiler_mass_corrections_match_mujoco` (crates/nonsmooth-core/tests/mjcf_compiler.rs).
"""

import json
import pathlib
import sys

import mujoco
import numpy as np

DIR = pathlib.Path("crates/nonsmooth-core/tests/data/mjcf_compiler")
# Free joint (x, y, z, qw, qx, qy, qz), then hip and knee (rad).
QUAT = np.array([0.9, 0.1, -0.3, 0.2])
POSE = [0.1, -0.2, 0.9, *(QUAT / np.linalg.norm(QUAT)), 0.4, -0.7]


def reference(path):
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    data.qpos[:] = POSE
    mujoco.mj_forward(model, data)
    full = np.zeros((model.nv, model.nv))
    if hasattr(data, "qM"):  # MuJoCo < 3.4: mj_fullM(m, dst, qM)
        mujoco.mj_fullM(model, full, data.qM)
    else:
        mujoco.mj_fullM(model, data, full)
    bodies = {}
    for b in range(1, model.nbody):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b)
        bodies[name] = {
            "mass": float(model.body_mass[b]),
            "principal_inertia": sorted(model.body_inertia[b].tolist()),
        }
    return {"qpos": POSE, "mass_matrix": full.tolist(), "bodies": bodies}


def main():
    out = {
        "mujoco_version": mujoco.__version__,
        "files": {p.name: reference(p) for p in sorted(DIR.glob("*.xml"))},
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
