"""Hold the two-link arm of ``examples/id_arm_wall.toml`` at a set point with a PD controller
and gravity compensation, stepping the simulator with the torque at every step. The default
set point keeps the tip 0.18 m off the wall.

Run from the repository root (after ``pip install ./python``)::

    python examples/python/pd_arm.py

It prints the final joint error; ``hold_arm`` returns the trajectory for your own plots.
"""

import pathlib

import numpy as np

import nonsmooth as ns

MODEL = pathlib.Path(__file__).resolve().parents[1] / "id_arm_wall.toml"


def hold_arm(q_set=(0.4, 0.3), kp=200.0, kd=20.0, duration=2.0, dt=1e-3, stepper="anitescu-potra"):
    """PD + gravity compensation toward ``q_set``; returns (t, q) arrays."""
    model = ns.load_model(MODEL)
    sim = ns.Simulator(model, stepper=stepper, dt=dt)
    q_set = np.asarray(q_set, dtype=float)
    ts, qs = [sim.t], [sim.q]
    for _ in range(int(round(duration / dt))):
        q, v = sim.q, sim.v
        gravity = model.bias_forces(q, np.zeros_like(v))  # h(q, 0): gravity only
        u = kp * (q_set - q) - kd * v + gravity
        sim.step(u)
        ts.append(sim.t)
        qs.append(sim.q)
    return np.array(ts), np.array(qs)


if __name__ == "__main__":
    t, q = hold_arm()
    err = np.abs(q[-1] - np.array([0.4, 0.3]))
    print(f"t = {t[-1]:.3f} s, final joint error = {err.max():.2e} rad")
