"""Simulator driven by actuator commands, and the kinematics queries on a Model."""

import importlib.util
import math

import numpy as np
import pytest

import nonsmooth as ns


def _rotation(quat):
    """Rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = quat
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def _load_example(root, name):
    spec = importlib.util.spec_from_file_location(name, root / "examples" / "python" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("stepper", ["drumwright", "anitescu-potra"])
def test_torque_balancing_gravity_holds_the_pendulum(examples, stepper):
    sim = ns.Simulator(ns.load_model(examples / "pendulum.toml"), stepper=stepper, dt=1e-3)
    sim.reset([math.pi / 6], [0])  # lists and integers are accepted
    u = np.array([9.81 * math.sin(math.pi / 6)])
    worst = 0.0
    for _ in range(1000):
        sim.step(u)
        worst = max(worst, abs(sim.q[0] - math.pi / 6))
    assert abs(sim.t - 1.0) < 1e-12
    assert worst < 1e-6
    counters = sim.counters()
    assert counters["steps"] == 1000 and counters["clamped_commands"] == 0
    assert counters["recoveries"] == {
        "step_halving": 0,
        "substeps": 0,
        "unconverged_steps": 0,
        "repeated_solves": 0,
        "convex_fallbacks": 0,
    }


def test_step_n_clamps_and_counts(examples):
    sim = ns.Simulator(ns.load_model(examples / "pendulum.toml"), stepper="anitescu-potra", dt=1e-3)
    sim.step_n(10, [50])
    assert sim.counters()["clamped_commands"] == 10
    ref = ns.Simulator(ns.load_model(examples / "pendulum.toml"), stepper="anitescu-potra", dt=1e-3)
    ref.step_n(10, [5.0])
    np.testing.assert_array_equal(sim.q, ref.q)


def test_bad_commands_and_states_raise_and_change_nothing(examples):
    sim = ns.Simulator(ns.load_model(examples / "pendulum.toml"), dt=1e-3)
    sim.step([1.0])
    q, t = sim.q.copy(), sim.t
    with pytest.raises(ns.SimulationError, match="u"):
        sim.step([1.0, 2.0])
    with pytest.raises(ns.SimulationError, match="entry 0"):
        sim.step([float("nan")])
    with pytest.raises(ns.SimulationError, match="entry 0"):
        sim.step([float("inf")])
    with pytest.raises(ns.SimulationError, match="q"):
        sim.reset([0.1, 0.2], [0.0])
    np.testing.assert_array_equal(sim.q, q)
    assert sim.t == t
    # The time-as-state inclusion advances physical time by dt like every stepper.
    di = ns.Simulator(ns.load_model(examples / "sliding_box.toml"), stepper="time-as-state-di", dt=0.01)
    di.step_n(5, [])
    assert abs(di.t - 0.05) < 1e-9
    with pytest.raises(ns.SimulationError, match="unknown stepper"):
        ns.Simulator(ns.load_model(examples / "pendulum.toml"), stepper="nope")


def test_poses_and_contacts_of_the_incline_box(examples):
    model = ns.load_model(examples / "drumwright_incline.toml")  # four Hertz feet
    sim = ns.Simulator(model, stepper="drumwright", dt=1e-2)
    assert sim.contacts() == []
    sim.step_n(50)
    poses = sim.body_poses()
    assert poses.shape == (1, 7)
    np.testing.assert_allclose(np.linalg.norm(poses[0, 3:]), 1.0, rtol=1e-12)
    contacts = sim.contacts()
    assert len(contacts) == 4
    assert {"collider_a", "collider_b", "point", "normal", "gap"} <= set(contacts[0])
    # the normal impulses carry the normal component of the weight (1 kg, g cos 15°)
    total = sum(c["normal_impulse"] for c in contacts)
    assert abs(total - 9.4660713 * 1e-2) < 0.05 * 9.8e-2


def test_kinematics_queries_against_finite_differences(examples):
    model = ns.load_model(examples / "id_arm_wall.toml")
    q = np.array([0.3, -0.4])
    poses = model.forward_kinematics(q)
    assert poses.shape == (2, 7)
    tip = np.array([0.0, 0.0, -0.25])

    def tip_world(qq):
        p = model.forward_kinematics(qq)[1]
        return p[:3] + _rotation(p[3:]) @ tip

    jac = model.point_jacobian("fore", tip, q)
    eps = 1e-6
    fd = np.column_stack(
        [(tip_world(q + eps * e) - tip_world(q - eps * e)) / (2 * eps) for e in np.eye(2)]
    )
    np.testing.assert_allclose(jac, fd, atol=1e-7)
    np.testing.assert_array_equal(model.point_jacobian(1, tip, q), jac)
    # centre of mass: the mass-weighted body centres of mass (body frames from the poses)
    masses = np.array([1.0, 0.6])
    local_coms = [np.array([0.15, 0.0, 0.0]), np.array([0.0, 0.0, -0.125])]
    poses = model.forward_kinematics(q)
    world_coms = [poses[i, :3] + _rotation(poses[i, 3:]) @ c for i, c in enumerate(local_coms)]
    expected = sum(m * c for m, c in zip(masses, world_coms)) / masses.sum()
    np.testing.assert_allclose(model.com(q), expected, atol=1e-14)
    com_fd = np.column_stack(
        [(model.com(q + eps * e) - model.com(q - eps * e)) / (2 * eps) for e in np.eye(2)]
    )
    np.testing.assert_allclose(model.com_jacobian(q), com_fd, atol=1e-7)
    assert model.mass_matrix(q).shape == (2, 2)
    assert model.bias_forces(q, [0, 0]).shape == (2,)
    with pytest.raises(ValueError, match="body"):
        model.point_jacobian("nope")


def test_pd_example_holds_the_arm(root):
    pd = _load_example(root, "pd_arm")
    t, q = pd.hold_arm(duration=2.0)
    assert abs(t[-1] - 2.0) < 1e-9
    assert np.max(np.abs(q[-1] - np.array([0.4, 0.3]))) < 1e-3


def test_gym_style_environment(root):
    gym = _load_example(root, "gym_pendulum")
    env = gym.PendulumEnv(max_steps=20)
    obs, info = env.reset(seed=1)
    assert obs.shape == (3,) and "t" in info
    for k in range(20):
        obs, reward, terminated, truncated, info = env.step([5])
        assert np.isfinite(reward) and not terminated
    assert truncated


def test_default_stepper_follows_the_model(examples):
    # smooth dynamics: an integrator; rigid contacts and limits: the Coulomb Newton scheme
    sim = ns.Simulator(ns.load_model(examples / "pendulum.toml"), dt=1e-3)
    assert sim.stepper == "rk45"
    assert "default" in sim.stepper_choice
    model = ns.load_model(examples / "mjcf" / "quadruped.xml")
    quad = ns.Simulator(model, dt=5e-3)
    assert quad.stepper == "drumwright", quad.stepper_choice
    quad.step_n(100, np.zeros(model.nu))
    assert quad.counters()["steps"] == 100
    named = ns.Simulator(ns.load_model(examples / "pendulum.toml"), stepper="drumwright")
    assert named.stepper_choice.startswith("drumwright (argument")


def test_simulator_and_simulate_take_the_same_settings_from_the_model_file(examples):
    # MJCF `timestep` 0.005: the Simulator's step, as `simulate`'s and the CLI's
    model = ns.load_model(examples / "mjcf" / "quadruped.xml")
    sim = ns.Simulator(model)
    assert sim.dt == 0.005
    traj = ns.simulate(model, duration=1.0)
    assert traj["stepper"] == sim.stepper
    # no command, as `simulate` and the CLI run
    sim.step_n(200)
    assert abs(sim.t - 1.0) < 1e-12
    # `simulate` shortens its last step to end at 1 s exactly (h differs from 5 ms by the
    # rounding of the accumulated time) and the contact solve stops at its tolerance: the
    # two agree to the solver's accuracy, not to the last bit.
    assert np.max(np.abs(sim.q - traj["q"][-1])) <= 1e-8
    assert np.max(np.abs(sim.v - traj["v"][-1])) <= 1e-6


def test_model_warnings_come_at_load_time(examples, tmp_path):
    # a ball started 5 cm inside the ground: said when the file is loaded
    src = (examples / "ball_on_ground.toml").read_text()
    lines = []
    for line in src.splitlines():
        if line.startswith("q.y"):
            line = "q.y = 0.05"
        lines.append(line)
    path = tmp_path / "sunk.toml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.warns(UserWarning, match="inside each other"):
        model = ns.load_model(path)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ns.Simulator(model, stepper="anitescu-potra")
