"""The result types of the toolkit's functions: each returns a plain ``dict`` with exactly the
keys of one of these ``TypedDict``s (the stubs use them, so a type checker knows every key;
``python/tests/test_types.py`` checks the keys against the functions at run time)."""

from typing import Any, Dict, List, Optional

import numpy as np
import numpy.typing as npt

try:
    from typing import TypedDict
except ImportError:  # pragma: no cover - Python < 3.8
    from typing_extensions import TypedDict

Array = npt.NDArray[np.float64]

__all__ = [
    "Array",
    "SnapshotResult",
    "SimulationResult",
    "ImpactLaw",
    "ImpactSetResult",
    "InverseDynamicsResult",
    "StabilityResult",
    "ModelStabilityResult",
    "WalkResult",
    "ActiveSetResult",
    "HomotopyStep",
    "OcpSettings",
    "OcpResult",
    "Residuals",
    "LcpResult",
    "ConicResult",
    "Recoveries",
    "SimulatorCounters",
    "ContactRecord",
    "DerivativeConstraint",
    "StepDerivatives",
]


class SnapshotResult(TypedDict):
    """``snapshot``: the dynamics frozen at (q, v, t)."""

    t: float
    q: Array
    v: Array
    M: Array
    f: Array
    N_q: Array
    B: Array
    gaps: Array
    Jn: Array
    Jt: Array
    mu: Array
    normals: Array
    points: Array
    J_bilateral: Array
    J_limits: Array


class SimulationResult(TypedDict):
    """``simulate``: the recorded states."""

    t: Array
    q: Array
    v: Array
    q_names: List[str]
    v_names: List[str]
    stepper: str
    stepper_choice: str
    steps: int
    recovered_steps: int


class ImpactLaw(TypedDict):
    """One single-valued impact law's outcome beside the set (``impact_set(..., laws=True)``)."""

    law: str
    v: Array
    normal_velocities: Array
    tangential_velocities: Array
    kinetic_energy: float


class ImpactSetResult(TypedDict):
    """``impact_set``: the sampled post-impact velocity set."""

    v_minus: Array
    outcomes: Array
    normal_velocities: Array
    tangential_velocities: Array
    colliding: bool
    mean_lcps: float
    max_residual: float
    rejected: int
    Jn: Array
    Jt: Array
    notes: List[str]
    laws: List[ImpactLaw]


class InverseDynamicsResult(TypedDict):
    """``inverse_dynamics``: torques and contact forces together."""

    variant: str
    status: str
    torques: Array
    normal_forces: Array
    tangent_forces: Array
    normal_impulses: Array
    tangent_impulses: Array
    v_plus: Array
    method: str
    iterations: int
    kinetic_energy: float


class StabilityResult(TypedDict):
    """``certify_stability(alpha_deg, mu1, mu2, d, ...)``: the paper's body."""

    verdict: str
    reason: str
    epsilon: float
    sdp_variables: int
    sdp_equalities: int
    psd_blocks: List[int]
    modes: List[Any]
    build_seconds: float
    solve_seconds: float
    monte_carlo_min: float


class ModelStabilityResult(TypedDict):
    """``certify_stability(model)``: a model's planar body at its initial configuration."""

    verdict: str
    reason: str
    epsilon: float
    body: Dict[str, Any]
    static_forces: Dict[str, Any]
    modes: List[Any]
    build_seconds: float
    solve_seconds: float
    monte_carlo_min: float
    simulation: Dict[str, Any]
    trajectory: List[Any]


class WalkResult(TypedDict):
    """``walk``: one closed-loop quadruped trot."""

    pos_err: float
    vel_err: float
    fell: bool
    fell_at: Optional[float]
    fall_reason: Optional[str]
    chatter_fraction: float
    chattered: bool
    longest_reversal_run: int
    travel: float
    planned_travel: float
    progress: float
    mean_dtau: float
    mean_tau: float
    force_err_rel: float
    t: Array
    pos_err_t: Array
    torques: Array
    com_t: Array
    com: Array


class HomotopyStep(TypedDict):
    """One NLP of the MPCC homotopy (``solve_ocp(...)["homotopy"]``)."""

    sigma: float
    objective: float
    comp_residual: float
    iterations: int
    cpu_seconds: float
    status: str


class OcpSettings(TypedDict):
    """The discretization and homotopy of a ``solve_ocp`` run (``["settings"]``); for
    ``formulation = "fesd-j"`` the scheme is ``"semi-implicit"`` with ``n_s`` 1, a switching
    function per contact and Scholtes' relaxation."""

    formulation: str
    intervals: int
    scheme: str
    n_s: int
    n_fe: int
    contacts: int
    switching_functions: int
    cross_components: int
    relaxation: str
    sigma0: float
    kappa: float
    n_homotopy: int
    mpcc_method: str
    text: str


class ActiveSetResult(TypedDict):
    """The exact MPCC method of ``solve_ocp`` (``[mpcc] method = "active-set"``)."""

    b_stationary: bool
    verdict: str
    reason: Optional[str]
    lpec_count: int
    bnlp_count: int
    phase_one_comp: float
    cpu_seconds: float


class OcpResult(TypedDict):
    """``solve_ocp``: the optimal trajectory and how the homotopy went."""

    formulation: str
    tau: Array
    y: Array
    state_names: List[str]
    t: Array
    u: Array
    control_names: List[str]
    s: Array
    objective: float
    terminal_error: float
    comp_residual: float
    nlp_iterations: int
    cpu_seconds: float
    settings: OcpSettings
    homotopy: List[HomotopyStep]
    active_set: Optional[ActiveSetResult]


class Residuals(TypedDict):
    """Measured residuals of a solve."""

    primal: float
    dual: float
    complementarity: float


class _LcpRequired(TypedDict):
    z: Array
    w: Array
    status: str
    residuals: Residuals
    iterations: int


class LcpResult(_LcpRequired, total=False):
    """``lcp``; ``solutions`` only for ``method="enumerate"``."""

    solutions: List[Array]


class ConicResult(TypedDict):
    """``qp`` and ``socp``."""

    x: Array
    s: Array
    z: Array
    objective: float
    status: str
    residuals: Residuals
    iterations: int


class Recoveries(TypedDict):
    """Steps a ``Simulator`` recovered."""

    step_halving: int
    substeps: int
    unconverged_steps: int
    repeated_solves: int
    convex_fallbacks: int


class SimulatorCounters(TypedDict):
    """``Simulator.counters()``."""

    steps: int
    clamped_commands: int
    recoveries: Recoveries


class ContactRecord(TypedDict):
    """One contact of ``Simulator.contacts()``."""

    collider_a: str
    collider_b: str
    point: List[float]
    normal: List[float]
    gap: float
    normal_impulse: Optional[float]
    tangential_impulse: Optional[List[float]]


class _DerivativeConstraintRequired(TypedDict):
    kind: str
    mode: str


class DerivativeConstraint(_DerivativeConstraintRequired, total=False):
    """One constraint of ``Simulator.derivatives()``: ``kind`` ``"contact"`` (with
    ``collider_a``, ``collider_b``, ``feature``) or ``"row"`` (with ``name``); ``mode``
    ``"separated"``, ``"sticking"`` or ``"sliding"``."""

    collider_a: str
    collider_b: str
    feature: int
    name: Optional[str]


class StepDerivatives(TypedDict):
    """``Simulator.derivatives()``: the derivatives of one step."""

    A: Array
    B: Array
    C: Array
    parameters: List[str]
    next_q: Array
    next_v: Array
    method: str
    contacts: List[DerivativeConstraint]
    one_sided: List[str]
