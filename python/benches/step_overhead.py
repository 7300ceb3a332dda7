"""Python call overhead of ``Simulator.step`` over the Rust step, on the 18-DOF quadruped
standing on position servos (the scene of ``cargo bench -p nonsmooth-sim --bench simulator``).

The Rust time per step is that of ``step_n`` (one call, all steps in Rust); the Python time per
step is that of a loop of ``step(u)`` calls with a numpy command. The difference is the
overhead of one call (argument conversion, GIL release and re-acquisition). Goal: ≤ 5 µs.

    python python/benches/step_overhead.py        # after `pip install ./python`
"""

import pathlib
import time

import numpy as np

import nonsmooth as ns

ROOT = pathlib.Path(__file__).resolve().parents[2]


def per_step(fn, n):
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        fn(n)
        best = min(best, (time.perf_counter() - start) / n)
    return best


def main(n=2000, stepper="drumwright"):
    # the motors as position servos commanded to the standing pose (as the Rust benchmark)
    text = (ROOT / "examples" / "id_quadruped.toml").read_text()
    text = text.replace("[[actuators]]", '[[actuators]]\nkind = "position"\nkp = 20.0\nkv = 0.5')
    model = ns.Model.from_toml(text, "id_quadruped.toml (servos)")
    u = np.array(model.q0[7:])
    sim = ns.Simulator(model, stepper=stepper, dt=1e-3)

    # runs of 500 steps (0.5 s) from the standing pose, as the Rust benchmark
    def rust(k):
        for _ in range(k // 500):
            sim.reset()
            sim.step_n(500, u)

    def python(k):
        for _ in range(k // 500):
            sim.reset()
            for _ in range(500):
                sim.step(u)

    t_rust = per_step(rust, n)
    t_py = per_step(python, n)
    print(f"{stepper} ({model.nv} DOF): Rust step {t_rust * 1e6:.2f} µs, Python step {t_py * 1e6:.2f} µs, "
          f"overhead {(t_py - t_rust) * 1e6:.2f} µs per call (goal ≤ 5 µs)")


if __name__ == "__main__":
    for name in ("drumwright", "anitescu-potra"):
        main(stepper=name)
