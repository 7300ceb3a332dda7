"""Simulator.derivatives: the derivatives of one step (A, B, C) against known values and
against central differences of Simulator.step from reset states."""

import numpy as np
import pytest

import nonsmooth as ns
from nonsmooth import types


def _rate_rows(quat):
    """G(q) with q̇ = ½ G(q) ω for the body-frame angular velocity ω (quaternion w, x, y, z)."""
    w, x, y, z = quat
    return np.array([[-x, -y, -z], [w, -z, y], [z, w, -x], [-y, x, w]])


def _retract(q, delta):
    """A floating body's configuration moved along the tangent ``delta`` (linear, then
    body-frame rotation), as the toolkit's retraction: one explicit step, renormalized."""
    out = q.copy()
    out[:3] += delta[:3]
    out[3:7] += 0.5 * _rate_rows(q[3:7]) @ delta[3:6]
    out[3:7] /= np.linalg.norm(out[3:7])
    return out


def _to_tangent(q, dq):
    """The tangent of a change ``dq`` of a floating body's configuration at ``q``."""
    return np.concatenate([dq[:3], 2.0 * _rate_rows(q[3:7]).T @ dq[3:7]])


def test_b_of_a_free_pendulum_is_the_step_over_the_inertia(examples):
    sim = ns.Simulator(ns.load_model(examples / "pendulum.toml"), stepper="drumwright", dt=1e-3)
    sim.reset([1.2], [0.5])
    d = sim.derivatives()
    assert d["A"].shape == (2, 2)
    assert d["B"].shape == (2, 1)
    assert d["C"].shape == (2, 0)
    assert d["method"] == "implicit"
    assert d["contacts"] == [] and d["one_sided"] == [] and d["parameters"] == []
    # ∂v₁/∂u = h / I with I = m l² + I_com = 1 + 1e-4 kg·m².
    assert abs(d["B"][1, 0] - 1e-3 / (1.0 + 1e-4)) < 1e-9
    # The state is not changed; the reported next state is the step's.
    assert sim.t == 0.0 and sim.q[0] == 1.2
    sim.step()
    assert np.allclose(d["next_q"], sim.q, atol=1e-12)
    assert np.allclose(d["next_v"], sim.v, atol=1e-9)


def test_a_of_a_sliding_box_matches_central_differences_of_steps(examples):
    model = ns.load_model(examples / "sliding_box.toml")
    sim = ns.Simulator(model, stepper="drumwright", dt=1e-3)
    sim.step_n(10)
    q0, v0 = sim.q, sim.v
    d = sim.derivatives(parameters=["friction:steel_on_wood", "mass:box"])
    nv = len(v0)
    assert d["A"].shape == (2 * nv, 2 * nv)
    assert d["B"].shape == (2 * nv, 0)
    assert d["C"].shape == (2 * nv, 2)
    assert d["parameters"] == ["friction:steel_on_wood", "mass:box"]
    assert d["method"] == "implicit"
    assert d["contacts"], "the box's corners touch the ground"
    for c in d["contacts"]:
        assert c["kind"] == "contact" and c["mode"] == "sliding"
        assert {c["collider_a"], c["collider_b"]} == {"ground", "box_shape"}
        assert isinstance(c["feature"], int)
    # Sliding decelerates at μ g: ∂vₓ₁/∂μ = −g h.
    assert abs(d["C"][nv, 0] + 9.81e-3) < 1e-6

    def step_from(q, v):
        # A fresh simulator for each step: a stepper warm-started by the previous solve ends
        # elsewhere within the solver's tolerance (1e-8 relative), noise that a difference
        # over 1e-6 would amplify.
        fresh = ns.Simulator(model, stepper="drumwright", dt=1e-3)
        fresh.reset(q, v)
        fresh.step()
        return fresh.q, fresh.v

    q1, v1 = step_from(q0, v0)
    assert np.allclose(d["next_v"], v1, atol=1e-9)
    # Small enough that no corner leaves the contact set (at 1e-5 in z some do), large
    # enough that the solver's tolerance stays below 1e-6 of the result.
    eps = 5e-7
    differences = np.zeros((2 * nv, 2 * nv))
    for k in range(2 * nv):
        delta = np.zeros(2 * nv)
        delta[k] = eps
        plus = step_from(_retract(q0, delta[:nv]), v0 + delta[nv:])
        minus = step_from(_retract(q0, -delta[:nv]), v0 - delta[nv:])
        differences[:nv, k] = _to_tangent(q1, plus[0] - minus[0]) / (2 * eps)
        differences[nv:, k] = (plus[1] - minus[1]) / (2 * eps)
    error = np.abs(d["A"] - differences).max() / np.abs(differences).max()
    assert error <= 1e-5, error


def test_results_have_the_keys_of_their_types(examples):
    box = ns.load_model(examples / "sliding_box.toml")
    sim = ns.Simulator(box, stepper="drumwright", dt=1e-3)
    sim.step_n(5)
    d = sim.derivatives()
    assert set(d) == set(types.StepDerivatives.__required_keys__)
    for c in d["contacts"]:
        assert set(types._DerivativeConstraintRequired.__required_keys__) <= set(c)
        assert set(c) <= set(types.DerivativeConstraint.__annotations__)


def test_other_schemes_fall_back_to_finite_differences(examples):
    sim = ns.Simulator(ns.load_model(examples / "pendulum.toml"), stepper="anitescu-potra", dt=1e-3)
    sim.reset([1.2], [0.5])
    d = sim.derivatives([0.5])
    assert d["method"] == "finite-difference"
    assert d["contacts"] == []
    assert abs(d["B"][1, 0] - 1e-3 / (1.0 + 1e-4)) < 1e-8
    with pytest.raises(ns.SimulationError, match="step problem"):
        sim.derivatives([0.5], method="implicit")


def test_bad_arguments_raise_the_packages_errors(examples):
    sim = ns.Simulator(ns.load_model(examples / "pendulum.toml"), stepper="drumwright", dt=1e-3)
    with pytest.raises(ns.SimulationError, match="nobody"):
        sim.derivatives(parameters=["mass:nobody"])
    with pytest.raises(ns.SimulationError, match="no parameter"):
        sim.derivatives(parameters=["stiffness:x"])
    with pytest.raises(ns.SimulationError, match="expected 1 entries"):
        sim.derivatives([1.0, 2.0])
    with pytest.raises(ValueError, match="unknown derivative method"):
        sim.derivatives(method="exact")


def test_the_ilqr_example_pushes_the_box_to_rest_at_its_target(root):
    import importlib.util

    path = root / "examples" / "python" / "ilqr_box_push.py"
    spec = importlib.util.spec_from_file_location("ilqr_box_push", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    us, xs, iterations, _ = example.push_box(dt=0.02)
    error = xs[-1] - example.TARGET
    assert np.hypot(error[0], error[1]) < 0.01 and np.hypot(error[3], error[4]) < 0.01
    assert np.all(np.abs(us) <= example.U_MAX)
    # The least effort of the continuous problem: f²τ + 12d²/τ³ at τ = √(6d/f), f = μ m g.
    f, d = 0.5 * 9.81, 0.5
    tau = np.sqrt(6 * d / f)
    assert abs(0.02 * np.sum(us**2) - (f * f * tau + 12 * d * d / tau**3)) < 0.25
