"""Every function returns exactly the keys of its result TypedDict (nonsmooth.types), which
the stubs name as its return type, so that a type checker sees what the run gives."""

import typing
import warnings

import numpy as np

import nonsmooth as ns
from nonsmooth import types


def keys(td):
    return set(td.__required_keys__) | set(td.__optional_keys__)


def check(result, td):
    assert set(result) <= keys(td), set(result) - keys(td)
    assert set(td.__required_keys__) <= set(result), set(td.__required_keys__) - set(result)


def test_results_have_the_keys_of_their_types(examples):
    warnings.simplefilter("ignore")
    ball = ns.load_model(str(examples / "bouncing_sphere.toml"))
    check(ns.snapshot(ball), types.SnapshotResult)
    check(ns.simulate(ball, duration=0.01), types.SimulationResult)
    block = ns.load_model(str(examples / "impact_rocking_block.toml"))
    impact = ns.impact_set(block, samples=8)
    check(impact, types.ImpactSetResult)
    for law in impact["laws"]:
        check(law, types.ImpactLaw)
    quadruped = ns.load_model(str(examples / "id_quadruped.toml"))
    check(ns.inverse_dynamics(quadruped), types.InverseDynamicsResult)
    check(ns.certify_stability(30.0, 1.0, 1.0, 0.3), types.StabilityResult)
    check(
        ns.certify_stability(ns.load_model(str(examples / "sos_fig2.toml"))),
        types.ModelStabilityResult,
    )
    lcp = ns.lcp(np.eye(2), np.array([-1.0, -1.0]), method="enumerate")
    check(lcp, types.LcpResult)
    check(lcp["residuals"], types.Residuals)
    qp = ns.qp(np.eye(2), np.array([1.0, 1.0]))
    check(qp, types.ConicResult)
    check(qp["residuals"], types.Residuals)
    check(ns.walk(duration=0.02), types.WalkResult)
    sim = ns.Simulator(ball, stepper="drumwright", dt=1e-3)
    sim.step_n(10)
    counters = sim.counters()
    check(counters, types.SimulatorCounters)
    check(counters["recoveries"], types.Recoveries)


def test_the_ocp_result_and_its_homotopy_steps(examples):
    result = ns.solve_ocp(path=str(examples / "ocp_particle.toml"))
    check(result, types.OcpResult)
    for step in result["homotopy"]:
        check(step, types.HomotopyStep)
    assert result["active_set"] is None


def test_the_active_set_result(examples):
    text = (examples / "ocp_particle.toml").read_text() + '\n[mpcc]\nmethod = "active-set"\n'
    text = text.replace('model = "particle.toml"', f'model = "{examples / "particle.toml"}"')
    result = ns.solve_ocp(text=text)
    check(result, types.OcpResult)
    check(result["active_set"], types.ActiveSetResult)
    assert result["active_set"]["b_stationary"]
    assert result["comp_residual"] == 0.0


def test_contact_records_have_the_keys_of_their_type(examples):
    box = ns.load_model(str(examples / "sliding_box.toml"))
    sim = ns.Simulator(box, stepper="anitescu-potra", dt=1e-3)
    sim.step_n(5)
    contacts = sim.contacts()
    assert contacts
    for c in contacts:
        check(c, types.ContactRecord)


def test_the_result_types_resolve():
    hints = typing.get_type_hints(types.OcpResult)
    assert "homotopy" in hints
