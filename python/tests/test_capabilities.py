"""Set-valued impacts (Halm & Posa) and inverse dynamics through the bindings."""

import math

import numpy as np
import pytest

import nonsmooth as ns


def test_inverse_dynamics_pendulum_is_analytic(examples):
    m = ns.load_model(examples / "pendulum.toml")
    for variant in (
        "lcp-noslip",
        "lcp-coulomb",
        "qp-noslip",
        "qp-coulomb",
        "qp-coulomb-one-stage",
    ):
        r = ns.inverse_dynamics(m, acceleration=np.array([1.0]), variant=variant, dt=1e-3)
        # no contacts: u = M qdd - f = 1.0001 * 1 + 9.81 sin(0.5)
        np.testing.assert_allclose(r["torques"], [1.0001 + 9.81 * math.sin(0.5)], rtol=1e-8)
        assert r["status"] == "solved" and r["variant"] == variant
        np.testing.assert_allclose(r["v_plus"], [1e-3], rtol=1e-8)


def test_inverse_dynamics_with_contact_reaches_the_target(examples):
    m = ns.load_model(examples / "id_arm_wall.toml")
    r = ns.inverse_dynamics(m, variant="qp-coulomb")
    assert r["torques"].shape == (m.nu,)
    assert np.all(r["normal_forces"] >= -1e-8)


def test_inverse_dynamics_errors(examples):
    ball = ns.load_model(examples / "bouncing_sphere.toml")
    with pytest.raises(ns.ControlError, match="no actuators"):
        ns.inverse_dynamics(ball)
    m = ns.load_model(examples / "pendulum.toml")
    with pytest.raises(ns.ControlError):
        ns.inverse_dynamics(m, variant="magic")
    with pytest.raises(ValueError, match="not both"):
        ns.inverse_dynamics(m, acceleration=np.zeros(1), velocity=np.zeros(1))


def test_impact_set_rocking_block(examples):
    m = ns.load_model(examples / "impact_rocking_block.toml")
    r = ns.impact_set(m, samples=64, seed=3)
    assert r["colliding"]
    out, vn = r["outcomes"], r["normal_velocities"]
    assert out.shape[1] == m.nv and vn.shape == (out.shape[0], 2)
    assert out.shape[0] + r["rejected"] == 64
    # every post-impact velocity is non-penetrating and dissipative (Halm & Posa, Thm 5)
    assert vn.min() > -1e-6
    np.testing.assert_allclose(vn, out @ r["Jn"].T, atol=1e-12)
    laws = {law["law"]: law for law in r["laws"]}
    assert "anitescu-potra #0" in laws
    e_minus = laws["anitescu-potra #0"]["kinetic_energy"]
    assert np.isfinite(e_minus)
    assert r["max_residual"] < 1e-8


def test_impact_errors(examples):
    m = ns.load_model(examples / "impact_rocking_block.toml")
    with pytest.raises(ns.ImpactError, match="invalid option"):
        ns.impact_set(m, samples=8, cap=-1.0)


def test_certify_stability_matches_the_rust_certificates():
    # Fig. 2 point of Várkonyi's paper (alpha = 30°, mu1 = mu2 = 2, d = 1, e = 0): certified by the
    # multiple Lyapunov functions, not by the single-V baseline (acceptance tests 8–9 of docs/decisions/000-sos-stability.md).
    r = ns.certify_stability(30.0, 2.0, 2.0, 1.0)
    assert r["verdict"] == "certified", r
    assert r["epsilon"] > 1e-7
    assert r["sdp_variables"] > 0 and len(r["psd_blocks"]) > 0
    assert ns.certify_stability(30.0, 2.0, 2.0, 1.0, method="ptt")["verdict"] != "certified"
    # d <= h tan(alpha): outside the method's domain, with the reason.
    r = ns.certify_stability(30.0, 1.0, 2.0, 0.5)
    assert r["verdict"] == "not-applicable" and "tan" in r["reason"]
    # alpha = 20°, mu = 0.3 < tan(20°): no static equilibrium.
    assert ns.certify_stability(20.0, 0.3, 0.3, 1.0, e=0.1)["verdict"] == "no-equilibrium"
    with pytest.raises(ValueError, match="unknown method"):
        ns.certify_stability(30.0, 2.0, 2.0, 1.0, method="magic")


def test_certify_stability_of_a_model_file(examples):
    # The Fig. 2 body as a model file: certified at (mu1, d) = (1.2, 1), as the flags form.
    model = ns.load_model(str(examples / "sos_fig2.toml"))
    r = ns.certify_stability(model)
    assert r["verdict"] == "certified", r
    assert r["verdict"] == (
        "certified" if ns.certify_stability(30.0, 1.2, 2.0, 1.0)["verdict"] == "certified" else "?"
    )
    assert r["body"]["slope_degrees"] == pytest.approx(30.0)
    assert [c["friction"] for c in r["body"]["contacts"]] == [1.2, 2.0]
    assert r["trajectory"] == []
    # Typed errors: a spatial body is outside the construction; no friction on a slope is
    # not an equilibrium.
    with pytest.raises(ns.NotApplicableError, match="spatial"):
        ns.certify_stability(ns.load_model(str(examples / "drumwright_incline.toml")))
    slippery = ns.Model.from_toml(
        (examples / "sos_fig2.toml").read_text(),
        parameters={"materials.uphill.friction": 0.0, "materials.downhill.friction": 0.0},
    )
    with pytest.raises(ns.NotAnEquilibriumError, match="friction too small"):
        ns.certify_stability(model=slippery)
    with pytest.raises(ns.ModelError, match="ice"):
        ns.Model.from_toml(
            (examples / "sos_fig2.toml").read_text(), parameters={"materials.ice.friction": 1.0}
        )
    assert issubclass(ns.NotApplicableError, ns.StabilityError)
    with pytest.raises(ValueError, match="come from the model"):
        ns.certify_stability(model, 1.0)


def test_solve_ocp_matches_the_cli_problem(examples):
    # Nurkanović, Albrecht, Brogliato & Diehl (2023), "The Time-Freezing Reformulation for
    # Numerical Optimal Control of Complementarity Lagrangian Systems with State Jumps", Ex. 5
    # (frictionless): a falling particle moved to q = (3, 0) at rest at T = 2.
    r = ns.solve_ocp(path=str(examples / "ocp_particle.toml"))
    assert r["terminal_error"] < 1e-8 and r["comp_residual"] < 1e-9
    assert r["y"].shape[1] == 5 and r["u"].shape == (20, 1)
    np.testing.assert_allclose(r["t"][-1], 2.0, atol=1e-8)   # the clock reaches T
    np.testing.assert_allclose(r["y"][-1, :4], [3.0, 0.0, 0.0, 0.0], atol=1e-8)
    assert np.all(r["y"][:, 1] >= -1e-8)                      # never below the ground
    assert r["homotopy"] and r["nlp_iterations"] > 0
    assert r["objective"] == pytest.approx(13.507316, rel=1e-5)


def test_solve_ocp_on_a_model_file(examples):
    # The ball of ball_on_ground.toml lands and brakes to rest at x = 2 (friction does what
    # the bounded thrust cannot); columns named after the model's coordinates.
    r = ns.solve_ocp(path=str(examples / "ocp_ball_brake.toml"))
    assert r["terminal_error"] < 1e-8 and r["comp_residual"] < 1e-9
    assert r["state_names"] == ["x.q", "y.q", "x.v", "y.v", "t"]
    assert r["control_names"] == ["thrust"]
    # the settings follow the model: one contact, switch detection on its 3 functions
    st = r["settings"]
    assert (st["contacts"], st["switching_functions"], st["cross_components"]) == (1, 3, 3)
    assert st["intervals"] == 12 and st["relaxation"] == "penalty"
    assert st["mpcc_method"] == "homotopy"
    np.testing.assert_allclose(r["y"][-1, :4], [2.0, 0.1, 0.0, 0.0], atol=1e-8)
    assert np.all(np.abs(r["u"]) <= 1.0 + 1e-8)


def test_solve_ocp_says_an_unreachable_target(examples):
    # A 1 N thrust cannot push the ball 0.5 m up a slope: the outcome names the terminal x.
    with pytest.raises(ns.UnreachableError, match="appears unreachable.*terminal x.q = 0.5"):
        ns.solve_ocp(path=str(examples / "ocp_ball_unreachable.toml"))
    assert issubclass(ns.UnreachableError, ns.OcpError)


def test_solve_ocp_runs_the_formulation_the_file_chooses(examples):
    # The box of box_on_ground.toml held at rest by FESD-J: exact, no effort, the dict says
    # the formulation; time-freezing files say theirs.
    text = (f'[ocp]\nmodel = "{examples / "box_on_ground.toml"}"\nN = 4\nT = 1.0\n'
            'controls = ["push"]\nformulation = "fesd-j"\n'
            '[ocp.terminal]\nq."base.x" = 0.0\nv."base.vx" = 0.0\n')
    r = ns.solve_ocp(text=text)
    assert r["formulation"] == "fesd-j" and r["settings"]["formulation"] == "fesd-j"
    assert r["comp_residual"] <= 1e-9 and r["terminal_error"] <= 1e-6
    assert r["objective"] <= 1e-8
    assert r["u"].shape == (4, 1)
    np.testing.assert_allclose(r["y"][-1, :3], [0.0, 0.1, 0.0], atol=1e-6)
    assert r["t"][-1] == pytest.approx(1.0)
    with pytest.raises(ns.OcpError, match="mpcc.method"):
        ns.solve_ocp(text=text + '[mpcc]\nmethod = "active-set"\n')


def test_solve_ocp_follows_the_continuation_of_the_file(examples):
    # ocp.continuation: x(T) = 3 from the trivial initialization, then 3.5, then the file's 4.
    text = (examples / "ocp_particle.toml").read_text()
    text = (text.replace('model = "particle.toml"', f'model = "{examples / "particle.toml"}"')
                .replace("q.x = 3.0", "q.x = 4.0")
                .replace("[ocp.terminal]", "[ocp.continuation]\nq.x = [3.0, 3.5]\n[ocp.terminal]"))
    r = ns.solve_ocp(text=text)
    assert r["terminal_error"] < 1e-8 and r["comp_residual"] < 1e-9
    np.testing.assert_allclose(r["y"][-1, :4], [4.0, 0.0, 0.0, 0.0], atol=1e-8)


def test_solve_ocp_errors_name_the_problem():
    with pytest.raises(ns.OcpError, match="names its model file"):
        ns.solve_ocp(text="[model]\ndim = 2\nmass = 1.0\ngravity = 9.81\na_n = 1.0\n")
    with pytest.raises(ns.OcpError, match="line 3"):
        ns.solve_ocp(text='[ocp]\nmodel = "particle.toml"\nNN = 2\n')
    with pytest.raises(ValueError, match="exactly one"):
        ns.solve_ocp()


def test_walk_reports_who_walks_and_names_bad_input():
    lcp = ns.walk("lcp_mu", "rigid_muinf", duration=1.0)
    qp = ns.walk("qp_mu", "rigid_muinf", duration=1.0)
    assert not lcp["fell"] and not qp["fell"]
    assert lcp["torques"].shape == (1000, 12) and lcp["t"].shape == (1000,)
    assert lcp["com"].shape[1] == 3
    # ID(tᵢ)_LCP,μ covers the plan; ID(tᵢ)_QP,μ's Stage I brakes the trunk on sticky ground
    # (docs/locomotion.md).
    assert lcp["progress"] > 0.8
    assert qp["progress"] < 0.15
    assert lcp["force_err_rel"] < 0.05
    with pytest.raises(ns.ControlError, match="ice"):
        ns.walk("pid", "ice")
    with pytest.raises(ns.ControlError, match="friction cap"):
        ns.walk("pid", friction_cap=0.5)
    with pytest.raises(ns.ControlError, match="duty"):
        ns.walk("pid", duty=1.5)


def test_features_list_what_is_built_and_a_left_out_function_names_its_feature(examples):
    assert set(ns.FEATURES) <= {"ocp", "stability"}
    assert issubclass(ns.FeatureNotBuiltError, ns.NonsmoothError)
    calls = {
        "ocp": lambda: ns.solve_ocp(path=str(examples / "ocp_particle.toml")),
        "stability": lambda: ns.certify_stability(30.0, 2.0, 2.0, 1.0),
    }
    for feature, call in calls.items():
        if feature not in ns.FEATURES:
            with pytest.raises(ns.FeatureNotBuiltError, match=f"`{feature}`"):
                call()
