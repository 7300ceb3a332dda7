"""MuJoCo's finite-difference transition derivatives (mjd_transitionFD) on a model file:
the time of one call (centered and forward differences) beside one mj_step, the servos
holding the initial pose after a settling second. The peer column of the step derivatives'
benchmark (scripts/derivatives_benchmark.sh runs both in one run)."""
import argparse
import time

import mujoco
import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model", nargs="?", default="examples/mjcf/quadruped.xml")
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--settle", type=int, default=300)
    args = parser.parse_args()
    m = mujoco.MjModel.from_xml_path(args.model)
    m.opt.timestep = 1e-3
    d = mujoco.MjData(m)
    mujoco.mj_resetData(m, d)
    # Servo targets: each actuator's joint position at the initial state.
    for a in range(m.nu):
        j = m.actuator_trnid[a, 0]
        d.ctrl[a] = d.qpos[m.jnt_qposadr[j]]
    for _ in range(args.settle):
        mujoco.mj_step(m, d)
    nv, nu = m.nv, m.nu
    a = np.zeros((2 * nv + m.na, 2 * nv + m.na))
    b = np.zeros((2 * nv + m.na, nu))
    results = {}
    for centered in (1, 0):
        start = time.perf_counter()
        for _ in range(args.repeats):
            mujoco.mjd_transitionFD(m, d, 1e-6, centered, a, b, None, None)
        results[centered] = (time.perf_counter() - start) / args.repeats * 1e3
    saved = (d.qpos.copy(), d.qvel.copy(), d.act.copy(), d.time)
    start = time.perf_counter()
    for _ in range(args.repeats):
        d.qpos[:], d.qvel[:], d.act[:] = saved[0], saved[1], saved[2]
        d.time = saved[3]
        mujoco.mj_step(m, d)
    step_ms = (time.perf_counter() - start) / args.repeats * 1e3
    print(f"mujoco {mujoco.__version__} on {args.model} (nv {nv}, nu {nu}, contacts {d.ncon}):")
    print(f"  mjd_transitionFD centered {results[1]:.3f} ms ({results[1] / step_ms:.1f}× mj_step), "
          f"forward {results[0]:.3f} ms ({results[0] / step_ms:.1f}×); mj_step {step_ms:.4f} ms")


if __name__ == "__main__":
    main()
