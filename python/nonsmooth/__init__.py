"""nonsmooth: rigid-body dynamics with contact, impact and Coulomb friction.

Python bindings of the Rust toolkit (https://example.invalid/nonsmooth). Arrays are float64
numpy arrays; errors raise subclasses of :class:`NonsmoothError` carrying the Rust message.
``FEATURES`` lists the optional parts built in (``"ocp"``: ``solve_ocp``, ``"stability"``:
``certify_stability``); a function of a part left out raises :class:`FeatureNotBuiltError`.

Quick start::

    import nonsmooth as ns
    model = ns.load_model("examples/bouncing_sphere.toml")
    traj = ns.simulate(model, stepper="drumwright", dt=1e-3, duration=1.0)
    print(traj["t"].shape, traj["q"].shape)

    sim = ns.Simulator(ns.load_model("examples/pendulum.toml"), stepper="drumwright", dt=1e-3)
    sim.step([2.0])        # one motor torque per actuator, applied inside the step
    print(sim.t, sim.q, sim.v)
"""

from ._nonsmooth import (  # noqa: F401
    FEATURES,
    STEPPER_NAMES,
    ControlError,
    FeatureNotBuiltError,
    ImpactError,
    Model,
    ModelError,
    NonsmoothError,
    NotAnEquilibriumError,
    NotApplicableError,
    OcpError,
    SimulationError,
    Simulator,
    SolverError,
    StabilityError,
    UnreachableError,
    __version__,
    certify_stability,
    impact_set,
    inverse_dynamics,
    lcp,
    load_model,
    qp,
    simulate,
    snapshot,
    socp,
    solve_ocp,
    walk,
)
from .sweep import SweepError, SweepRecord, SweepResults, grid, sweep  # noqa: F401
from .viewer import Player, view  # noqa: F401

__all__ = [
    "FEATURES",
    "STEPPER_NAMES",
    "ControlError",
    "FeatureNotBuiltError",
    "ImpactError",
    "Model",
    "ModelError",
    "NonsmoothError",
    "NotAnEquilibriumError",
    "NotApplicableError",
    "OcpError",
    "SimulationError",
    "Simulator",
    "SolverError",
    "StabilityError",
    "UnreachableError",
    "__version__",
    "certify_stability",
    "impact_set",
    "inverse_dynamics",
    "lcp",
    "load_model",
    "qp",
    "simulate",
    "snapshot",
    "socp",
    "solve_ocp",
    "walk",
    "grid",
    "sweep",
    "SweepError",
    "SweepRecord",
    "SweepResults",
    "Player",
    "view",
]
