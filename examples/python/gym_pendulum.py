"""A Gymnasium-style environment around ``nonsmooth.Simulator`` (no gymnasium dependency):
swing the pendulum of ``examples/pendulum.toml`` up with its motor.

``reset(seed=None, options=None) -> (observation, info)`` and
``step(action) -> (observation, reward, terminated, truncated, info)``, as in Gymnasium's
``Env`` API; wrap it in ``gymnasium.Env`` if you use that package.

Run from the repository root: ``python examples/python/gym_pendulum.py`` (a random policy).
"""

import pathlib

import numpy as np

import nonsmooth as ns

MODEL = pathlib.Path(__file__).resolve().parents[1] / "pendulum.toml"


class PendulumEnv:
    """Observation (cos q, sin q, v); action: one motor torque in [-5, 5] N·m (the model's
    effort bounds clamp it); reward −(q − π)² − 0.1 v² − 0.001 u² (upright is q = π);
    an episode is truncated after ``max_steps`` steps and never terminates early."""

    def __init__(self, dt=0.01, max_steps=500, stepper="anitescu-potra"):
        self.model = ns.load_model(MODEL)
        self.sim = ns.Simulator(self.model, stepper=stepper, dt=dt)
        self.max_steps = max_steps
        self.steps = 0
        self.rng = np.random.default_rng()

    def _observation(self):
        q, v = self.sim.q[0], self.sim.v[0]
        return np.array([np.cos(q), np.sin(q), v])

    def reset(self, seed=None, options=None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        q0 = self.rng.uniform(-0.1, 0.1, size=1)
        self.sim.reset(q0, np.zeros(1))
        self.steps = 0
        return self._observation(), {"t": self.sim.t}

    def step(self, action):
        u = np.clip(np.asarray(action, dtype=float).reshape(1), -5.0, 5.0)
        self.sim.step(u)
        self.steps += 1
        q, v = self.sim.q[0], self.sim.v[0]
        angle = (q - np.pi + np.pi) % (2 * np.pi) - np.pi  # q − π wrapped to (−π, π]
        reward = -(angle**2) - 0.1 * v**2 - 0.001 * float(u[0]) ** 2
        truncated = self.steps >= self.max_steps
        return self._observation(), float(reward), False, truncated, {"t": self.sim.t}


if __name__ == "__main__":
    env = PendulumEnv()
    obs, info = env.reset(seed=0)
    total = 0.0
    for _ in range(env.max_steps):
        obs, reward, terminated, truncated, info = env.step(env.rng.uniform(-5, 5))
        total += reward
        if terminated or truncated:
            break
    print(f"return of a random policy over {env.steps} steps: {total:.1f}")
