"""Model loading and snapshots against analytic values."""

import math

import numpy as np
import pytest

import nonsmooth as ns

FREE_BALL = """
[model]
name = "free_ball"
dimension = "spatial"
gravity = [0.0, 0.0, -9.81]

[[bodies]]
name = "ball"
mass = 2.0
inertia = { solid_sphere = 0.1 }

[initial]
q.ball = [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]
v.ball = [0.5, 0.0, 0.0, 0.0, 0.0, 0.0]
"""


def test_load_pendulum(examples):
    m = ns.load_model(examples / "pendulum.toml")
    assert (m.name, m.dimension, m.nq, m.nv, m.nu) == ("pendulum", "planar", 1, 1, 1)
    assert m.q_names == ["pivot.q"]
    assert m.actuator_names == ["pivot_motor"]
    np.testing.assert_allclose(m.q0, [0.5])
    assert "pendulum" in repr(m)


def test_pendulum_snapshot_is_analytic(examples):
    m = ns.load_model(examples / "pendulum.toml")
    # point mass 1 kg at 1 m plus I = 1e-4: M = m l^2 + I, f = -m g l sin(q)
    for q in (0.0, 0.5, -1.2):
        s = ns.snapshot(m, q=np.array([q]), v=np.array([0.3]))
        np.testing.assert_allclose(s["M"], [[1.0001]], rtol=1e-12)
        np.testing.assert_allclose(s["f"], [-9.81 * math.sin(q)], atol=1e-12)
        np.testing.assert_allclose(s["B"], [[1.0]])
        assert s["Jn"].shape == (0, 1)


def test_free_ball_snapshot_from_toml():
    m = ns.Model.from_toml(FREE_BALL)
    s = ns.snapshot(m)
    assert s["M"].shape == (6, 6)
    # mass 2 in the linear block, 2/5 m r^2 = 0.008 in the angular block
    np.testing.assert_allclose(np.diag(s["M"]), [2, 2, 2, 0.008, 0.008, 0.008], rtol=1e-12)
    np.testing.assert_allclose(s["f"], [0, 0, -2 * 9.81, 0, 0, 0], atol=1e-12)
    assert s["gaps"].shape == (0,)


def test_sphere_on_ground_gap_and_jacobian(examples):
    m = ns.load_model(examples / "bouncing_sphere.toml")
    q = np.array([0.0, 0.0, 0.105, 1.0, 0.0, 0.0, 0.0])
    s = ns.snapshot(m, q=q, v=np.zeros(6))
    np.testing.assert_allclose(s["gaps"], [0.005], atol=1e-12)
    # the normal row maps v to the separation speed of the ball's lowest point
    np.testing.assert_allclose(s["Jn"], [[0, 0, 1, 0, 0, 0]], atol=1e-12)
    np.testing.assert_allclose(s["mu"], [0.5])
    np.testing.assert_allclose(s["normals"], [[0, 0, 1]], atol=1e-12)


def test_model_errors_carry_the_rust_message(examples, tmp_path):
    with pytest.raises(ns.ModelError, match=r"line 2: field `model.name`"):
        ns.Model.from_toml('[model]\nname = 1\n')
    with pytest.raises(ns.ModelError, match="cannot read"):
        ns.load_model(tmp_path / "missing.toml")
    assert issubclass(ns.ModelError, ns.NonsmoothError)


def test_state_size_is_checked(examples):
    m = ns.load_model(examples / "pendulum.toml")
    with pytest.raises(ValueError, match="q has length 2, the model has nq = 1"):
        ns.snapshot(m, q=np.zeros(2))
    with pytest.raises(ValueError, match="not finite"):
        ns.snapshot(m, q=np.array([np.nan]))


def test_models_pickle_without_their_file(tmp_path, examples):
    """A model survives pickle.dumps / loads in a process where its file no longer exists."""
    import pickle
    import shutil
    import subprocess
    import sys

    path = tmp_path / "quadruped.toml"
    shutil.copy(examples / "quadruped.toml", path)
    model = ns.load_model(path)
    blob = pickle.dumps(model)
    path.unlink()
    again = pickle.loads(blob)
    assert again.to_toml() == model.to_toml()
    assert (again.nq, again.nv, again.body_names) == (model.nq, model.nv, model.body_names)
    # another interpreter, the file gone
    code = (
        "import pickle, sys, nonsmooth as ns; m = pickle.loads(sys.stdin.buffer.read()); "
        "print(m.nq, len(ns.simulate(m, stepper='anitescu-potra', dt=1e-3, duration=0.01)['t']))"
    )
    out = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, check=True)
    assert out.stdout.split() == [str(model.nq).encode(), b"11"]
