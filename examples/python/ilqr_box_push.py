"""Push the box of ``examples/box_on_ground.toml`` 0.5 m along the ground and stop it, flat,
at T = 1 s (the problem of ``examples/ocp_box_push.toml``) by iterative LQR in NumPy on
``Simulator.derivatives()``: the step's ``A`` and ``B`` by implicit differentiation of
drumwright's contact problem, the push bounded by its actuator's ±10 N, ``tip`` held at 0.

iLQR after Li & Todorov (2004) with Tassa, Erez & Todorov's (2012) regularization and line
search; with one bounded control the box QP of the backward pass is a clamp (a clamped push
gets no feedback). The cost is the effort ∫u² dt plus a quadratic on the terminal error. The
planar box's coordinates are their own tangent space, so state errors are plain differences.

Run from the repository root (after ``pip install ./python``)::

    python examples/python/ilqr_box_push.py

It prints the effort, the iterations and the final error of the controls replayed through a
fresh simulator; ``push_box`` returns the controls and the replayed states.
"""

import pathlib
import time

import numpy as np

import nonsmooth as ns

MODEL = pathlib.Path(__file__).resolve().parents[1] / "box_on_ground.toml"
TARGET = np.array([0.5, 0.1, 0.0, 0.0, 0.0, 0.0])  # x, y, theta, vx, vy, omega
U_MAX = 10.0


def rollout(sim, x0, us):
    """States x_0..x_N of the pushes ``us`` from ``x0`` (rows: q then v)."""
    sim.reset(q=x0[:3], v=x0[3:])
    xs = [x0]
    for u in us:
        sim.step([u, 0.0])
        xs.append(np.concatenate([sim.q, sim.v]))
    return np.array(xs)


def cost(xs, us, dt, wf):
    e = xs[-1] - TARGET
    return dt * np.sum(us**2) + wf * e @ e


def push_box(dt=0.01, wf=1e5, iterations=100, tol=1e-7):
    model = ns.load_model(MODEL)
    sim = ns.Simulator(model, stepper="drumwright", dt=dt)
    x0 = np.concatenate([sim.q, sim.v])
    n = int(round(1.0 / dt))
    # The box sticks under a push below mu m g = 4.9 N (no derivative there): slide it first.
    us = np.where(np.arange(n) < n // 2, 7.0, 0.0)
    xs = rollout(sim, x0, us)
    j = cost(xs, us, dt, wf)
    mu, dmu = 1.0, 1.0
    start = time.perf_counter()
    for it in range(iterations):
        # Linearize along the trajectory.
        a_s, b_s = [], []
        for k in range(n):
            sim.reset(q=xs[k, :3], v=xs[k, 3:])
            d = sim.derivatives([us[k], 0.0])
            a_s.append(d["A"])
            b_s.append(d["B"][:, 0])
        # Backward pass (Tassa et al. 2012, eqs. 5 and 11; Q_uu + mu).
        while True:
            vx = 2.0 * wf * (xs[-1] - TARGET)
            vxx = 2.0 * wf * np.eye(6)
            kff, gains, d1, d2, ok = np.zeros(n), np.zeros((n, 6)), 0.0, 0.0, True
            for k in reversed(range(n)):
                a, b = a_s[k], b_s[k]
                qx = a.T @ vx
                qu = 2.0 * dt * us[k] + b @ vx
                qxx = a.T @ vxx @ a
                quu = 2.0 * dt + b @ vxx @ b
                qux = b @ vxx @ a
                if quu + mu <= 0.0:
                    ok = False
                    break
                kk = -qu / (quu + mu)
                # The bound: a clamped push takes no feedback (box QP with one variable).
                clamped = abs(us[k] + kk) > U_MAX
                kk = np.clip(us[k] + kk, -U_MAX, U_MAX) - us[k]
                gain = np.zeros(6) if clamped else -qux / (quu + mu)
                d1 += kk * qu
                d2 += 0.5 * kk * quu * kk
                vx = qx + gain * quu * kk + gain * qu + qux * kk
                vxx = qxx + quu * np.outer(gain, gain) + np.outer(gain, qux) + np.outer(qux, gain)
                vxx = 0.5 * (vxx + vxx.T)
                kff[k], gains[k] = kk, gain
            if ok:
                break
            dmu = max(1.6, 1.6 * dmu)
            mu = max(1e-6, mu * dmu)
        # Forward pass with a line search on the feedforward.
        accepted = False
        for alpha in 10.0 ** np.linspace(0.0, -3.0, 11):
            sim.reset(q=x0[:3], v=x0[3:])
            new_x, new_u = [x0], np.zeros(n)
            for k in range(n):
                dx = np.concatenate([sim.q, sim.v]) - xs[k]
                new_u[k] = np.clip(us[k] + alpha * kff[k] + gains[k] @ dx, -U_MAX, U_MAX)
                sim.step([new_u[k], 0.0])
                new_x.append(np.concatenate([sim.q, sim.v]))
            new_x = np.array(new_x)
            j_new = cost(new_x, new_u, dt, wf)
            if j_new < j:
                accepted = True
                break
        if not accepted:
            dmu = max(1.6, 1.6 * dmu)
            mu = max(1e-6, mu * dmu)
            if mu > 1e10:
                break
            continue
        decrease = (j - j_new) / j
        xs, us, j = new_x, new_u, j_new
        dmu = min(1.0 / 1.6, dmu / 1.6)
        mu = mu * dmu if mu * dmu > 1e-6 else 0.0
        if decrease < tol:
            break
    elapsed = time.perf_counter() - start
    # Replay through a fresh simulator.
    replay = rollout(ns.Simulator(model, stepper="drumwright", dt=dt), x0, us)
    return us, replay, it + 1, elapsed


if __name__ == "__main__":
    dt = 0.01
    us, xs, iterations, elapsed = push_box(dt=dt)
    e = xs[-1] - TARGET
    effort = dt * np.sum(us**2)
    print(f"effort ∫u² dt = {effort:.4f} after {iterations} iterations ({elapsed:.2f} s)")
    print(
        f"final error (fresh replay): position {np.hypot(e[0], e[1]):.2e} m, "
        f"angle {abs(e[2]):.2e} rad, speed {np.hypot(e[3], e[4]):.2e} m/s"
    )
