"""Pinocchio's and MuJoCo's dynamics of published robot files, for checking nonsmooth's import.

Usage: python scripts/peer_robots_check.py ROBOTS_DIR SUITE_DIR > peer-robots.json

ROBOTS_DIR is example-robot-data's `robots` folder (the URDFs and meshes as published for
Pinocchio), SUITE_DIR is dm_control's `suite` folder (MJCF models of the DeepMind Control
Suite). For every robot of `URDF_ROBOTS` (loaded with `pin.buildModelFromUrdf`, a free-flyer
root where `floating`) and of `MJCF_MODELS` (`mujoco.MjModel.from_xml_path`) it writes the
dense joint-space mass matrix M(q) and the bias force h(q, v) (Coriolis, centrifugal and
gravity terms: Pinocchio `rnea(model, data, q, v, 0)`, MuJoCo `qfrc_bias`) at the reference
configuration (Pinocchio's `neutral`, MuJoCo's `qpos0`; v = 0) and at three random states
(fixed seeds), in the peer's own coordinates, with the peer's joints (name, kind, first q
and v index, nq, nv) so that the reader can map them:
- Pinocchio: a free flyer is q = (x, y, z, qx, qy, qz, qw), v = (linear velocity of the
  body origin in the body frame, angular velocity in the body frame); a continuous joint
  (`JointModelRUBZ` etc.) is q = (cos θ, sin θ);
- MuJoCo: a free joint is qpos = (x, y, z, qw, qx, qy, qz), qvel = (linear velocity in the
  world frame, angular velocity in the body frame); a ball joint is qpos = (qw, qx, qy, qz);
  a hinge or slide joint with `ref` is at qpos = ref in the file's pose (written as `ref`).

The Rust test `peer_robots_match` (crates/nonsmooth-core/tests/peer_robots.rs) reads the
output through NONSMOOTH_PEER_ROBOTS; scripts/peer_robots_check.sh runs both.
"""

import json
import math
import os
import sys

import numpy as np

# (name, path under ROBOTS_DIR, floating base): legged robots and humanoids with a free-flyer
# root, arms, hands and mobile manipulators fixed to the world. Left out, as nonsmooth refuses
# them by design (their mass matrix is singular in Pinocchio too, so no dynamics can be
# computed): romeo.urdf (massless finger links on moving joints: 24 zero diagonal entries of
# M) and icub.urdf (the head's inertia about `neck_yaw` vanishes: smallest eigenvalue of M
# 4e-17 beside 28).
URDF_ROBOTS = [
    ("solo12", "solo_description/robots/solo12.urdf", True),
    ("bolt", "bolt_description/robots/bolt.urdf", True),
    ("anymal_b", "anymal_b_simple_description/robots/anymal.urdf", True),
    ("anymal_c", "anymal_c_simple_description/urdf/anymal.urdf", True),
    ("hyq", "hyq_description/robots/hyq_no_sensors.urdf", True),
    ("go1", "go1_description/urdf/go1.urdf", True),
    ("go2", "go2_description/urdf/go2.urdf", True),
    ("a1", "a1_description/urdf/a1.urdf", True),
    ("b1", "b1_description/urdf/b1.urdf", True),
    ("laikago", "laikago_description/urdf/laikago.urdf", True),
    ("centauro", "centauro_description/urdf/centauro.urdf", True),
    ("talos_reduced", "talos_data/robots/talos_reduced.urdf", True),
    ("talos_full", "talos_data/robots/talos_full_v2.urdf", True),
    ("g1", "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf", True),
    ("alex", "alex_description/urdf/alex_psyonic_hands.urdf", True),
    ("human", "human_description/robots/human.urdf", True),
    ("simple_humanoid", "simple_humanoid_description/urdf/simple_humanoid.urdf", True),
    ("ur5", "ur_description/urdf/ur5_robot.urdf", False),
    ("panda", "panda_description/urdf/panda.urdf", False),
    ("talos_left_arm", "talos_data/robots/talos_left_arm.urdf", False),
    ("kinova", "kinova_description/robots/kinova.urdf", False),
    ("xarm7", "xarm_description/urdf/xarm7.urdf", False),
    ("z1", "z1_description/urdf/z1.urdf", False),
    ("so100", "so_arm_description/urdf/so100.urdf", False),
    ("finger_edu", "finger_edu_description/robots/finger_edu.urdf", False),
    ("baxter", "baxter_description/urdf/baxter.urdf", False),
    ("pr2", "pr2_description/urdf/pr2.urdf", False),
    ("tiago", "tiago_description/robots/tiago.urdf", False),
    ("tiago_pro", "tiago_pro_description/robots/tiago_pro.urdf", False),
    ("allegro_right_hand", "allegro_hand_description/urdf/allegro_right_hand.urdf", False),
    ("allegro_left_hand", "allegro_hand_description/urdf/allegro_left_hand.urdf", False),
]

# The DeepMind Control Suite's models (dog.xml is left out: it needs its STL assets, which
# the script does not unpack; lqr.xml is a template without joints).
MJCF_MODELS = [
    "humanoid",
    "humanoid_CMU",
    "quadruped",
    "cheetah",
    "walker",
    "hopper",
    "acrobot",
    "ball_in_cup",
    "cartpole",
    "finger",
    "fish",
    "manipulator",
    "pendulum",
    "point_mass",
    "reacher",
    "swimmer",
    "stacker",
]

RANDOM_SEEDS = [1, 2, 3]


def unit_quaternion(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def pinocchio_robot(pin, name, path, floating):
    if floating:
        model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    else:
        model = pin.buildModelFromUrdf(path)
    data = model.createData()
    joints = []
    for j in range(1, model.njoints):
        jm = model.joints[j]
        joints.append(
            {
                "name": model.names[j],
                "kind": jm.shortname(),
                "q": int(jm.idx_q),
                "nq": int(jm.nq),
                "v": int(jm.idx_v),
                "nv": int(jm.nv),
            }
        )

    def random_state(seed):
        rng = np.random.default_rng(seed)
        q = np.zeros(model.nq)
        for j in joints:
            i, kind = j["q"], j["kind"]
            if kind == "JointModelFreeFlyer":
                q[i : i + 3] = rng.uniform(-1.0, 1.0, 3)
                w, x, y, z = unit_quaternion(rng)
                q[i + 3 : i + 7] = [x, y, z, w]
            elif j["nq"] == 2 and j["nv"] == 1:  # continuous: (cos θ, sin θ)
                a = rng.uniform(-math.pi, math.pi)
                q[i : i + 2] = [math.cos(a), math.sin(a)]
            elif j["nq"] == 1:
                lo, hi = model.lowerPositionLimit[i], model.upperPositionLimit[i]
                if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
                    lo, hi = -math.pi, math.pi
                q[i] = rng.uniform(lo, hi)
            else:
                raise SystemExit(f"{name}: joint {j['name']} of kind {kind} not handled")
        return q, rng.normal(size=model.nv)

    states = [("reference", pin.neutral(model), np.zeros(model.nv))]
    for seed in RANDOM_SEEDS:
        q, v = random_state(seed)
        states.append((f"random{seed}", q, v))
    out = []
    for label, q, v in states:
        m = pin.crba(model, data, q)
        m = np.triu(m) + np.triu(m, 1).T  # crba fills the upper triangle
        h = pin.rnea(model, data, q, v, np.zeros(model.nv))
        out.append(
            {
                "label": label,
                "q": q.tolist(),
                "v": v.tolist(),
                "mass_matrix": m.tolist(),
                "bias": h.tolist(),
            }
        )
    return {
        "name": name,
        "peer": "pinocchio",
        "format": "urdf",
        "path": path,
        "floating": floating,
        "nq": int(model.nq),
        "nv": int(model.nv),
        "gravity": model.gravity.linear.tolist(),
        "joints": joints,
        "states": out,
    }


def mujoco_model(mujoco, name, path):
    model = mujoco.MjModel.from_xml_path(path)
    data = mujoco.MjData(model)
    kinds = {0: "free", 1: "ball", 2: "slide", 3: "hinge"}
    joints = []
    for j in range(model.njnt):
        kind = kinds[int(model.jnt_type[j])]
        nq, nv = {"free": (7, 6), "ball": (4, 3)}.get(kind, (1, 1))
        joints.append(
            {
                "name": mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or "",
                "kind": kind,
                "q": int(model.jnt_qposadr[j]),
                "nq": nq,
                "v": int(model.jnt_dofadr[j]),
                "nv": nv,
                # A hinge's or slide's `ref` (its qpos0): nonsmooth counts from it.
                "ref": float(model.qpos0[model.jnt_qposadr[j]]) if nq == 1 else 0.0,
            }
        )

    def random_state(seed):
        rng = np.random.default_rng(seed)
        q = model.qpos0.copy()
        for j, jt in enumerate(joints):
            i, kind = jt["q"], jt["kind"]
            if kind == "free":
                q[i : i + 3] = rng.uniform(-1.0, 1.0, 3)
                q[i + 3 : i + 7] = unit_quaternion(rng)
            elif kind == "ball":
                q[i : i + 4] = unit_quaternion(rng)
            else:
                lo, hi = model.jnt_range[j]
                if not (model.jnt_limited[j] and lo < hi):
                    lo, hi = (-math.pi, math.pi) if kind == "hinge" else (-0.5, 0.5)
                q[i] = rng.uniform(lo, hi)
        return q, rng.normal(size=model.nv)

    states = [("reference", model.qpos0.copy(), np.zeros(model.nv))]
    for seed in RANDOM_SEEDS:
        q, v = random_state(seed)
        states.append((f"random{seed}", q, v))
    out = []
    for label, q, v in states:
        data.qpos[:] = q
        data.qvel[:] = v
        data.ctrl[:] = 0
        mujoco.mj_forward(model, data)
        full = np.zeros((model.nv, model.nv))
        if hasattr(data, "qM"):  # MuJoCo < 3.4: mj_fullM(m, dst, qM)
            mujoco.mj_fullM(model, full, data.qM)
        else:
            mujoco.mj_fullM(model, data, full)
        out.append(
            {
                "label": label,
                "q": q.tolist(),
                "v": v.tolist(),
                "mass_matrix": full.tolist(),
                "bias": data.qfrc_bias.tolist(),
            }
        )
    return {
        "name": name,
        "peer": "mujoco",
        "format": "mjcf",
        "path": path,
        "floating": any(j["kind"] == "free" for j in joints),
        "nq": int(model.nq),
        "nv": int(model.nv),
        "gravity": model.opt.gravity.tolist(),
        "joints": joints,
        "states": out,
    }


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    robots_dir, suite_dir = (os.path.abspath(a) for a in sys.argv[1:])
    import mujoco
    import pinocchio as pin

    robots = []
    for name, rel, floating in URDF_ROBOTS:
        path = os.path.join(robots_dir, rel)
        if not os.path.exists(path):
            print(f"peer_robots_check: {rel} not in this example-robot-data", file=sys.stderr)
            continue
        robots.append(pinocchio_robot(pin, name, path, floating))
    for name in MJCF_MODELS:
        path = os.path.join(suite_dir, name + ".xml")
        robots.append(mujoco_model(mujoco, name, path))
    out = {
        "pinocchio_version": pin.__version__,
        "mujoco_version": mujoco.__version__,
        "robots": robots,
    }
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
