"""simulate against analytic free fall and energy conservation of the pendulum."""

import numpy as np
import pytest

import nonsmooth as ns
from test_model import FREE_BALL


def test_free_fall_symplectic_euler_is_exact():
    m = ns.Model.from_toml(FREE_BALL)
    h, n = 1e-3, 300
    tr = ns.simulate(m, stepper="penalty-symplectic", dt=h, duration=n * h)
    t, q, v = tr["t"], tr["q"], tr["v"]
    assert q.shape == (len(t), 7) and v.shape == (len(t), 6)
    np.testing.assert_allclose(t[-1], n * h, rtol=1e-12)
    # semi-implicit Euler: v_k = -g k h, z_k = z0 - g h^2 k (k+1) / 2
    np.testing.assert_allclose(v[-1, 2], -9.81 * n * h, rtol=1e-12)
    np.testing.assert_allclose(q[-1, 2], 1.0 - 9.81 * h * h * n * (n + 1) / 2, rtol=1e-10)
    np.testing.assert_allclose(q[-1, 0], 0.5 * n * h, rtol=1e-10)  # uniform motion in x
    np.testing.assert_allclose(q[-1, 3:], [1, 0, 0, 0], atol=1e-12)


def test_pendulum_rk45_conserves_energy(examples):
    m = ns.load_model(examples / "pendulum.toml")
    tr = ns.simulate(m, stepper="rk45", dt=1e-2, duration=2.0)
    q, v = tr["q"][:, 0], tr["v"][:, 0]
    energy = 0.5 * 1.0001 * v**2 - 9.81 * np.cos(q)
    assert np.max(np.abs(energy - energy[0])) < 1e-4 * abs(energy[0])
    # it swings: the angle changes sign within 2 s (small-angle period about 2 s)
    assert q.min() < -0.4


def test_ball_bounces_and_stays_above_ground(examples):
    m = ns.load_model(examples / "bouncing_sphere.toml")
    tr = ns.simulate(m, stepper="drumwright", dt=1e-3, duration=1.0, record_every=10)
    z = tr["q"][:, 2]
    # radius 0.1; compliant contact (k = 1e5, m = 1) penetrates at most about
    # v_impact * sqrt(m / k) = 4.4 * 3.2e-3 = 1.4e-2
    assert 0.1 - 2e-2 < z.min() < 0.1
    assert tr["v"][:, 2].max() > 0.5  # it came back up


def test_simulation_errors():
    m = ns.Model.from_toml(FREE_BALL)
    with pytest.raises(ns.SimulationError, match="unknown stepper `foo`; available: penalty"):
        ns.simulate(m, stepper="foo")
    with pytest.raises(ns.SimulationError):
        ns.simulate(m, dt=-1.0)
    assert "drumwright" in ns.STEPPER_NAMES
