"""Type stubs of the extension module ``nonsmooth._nonsmooth`` (see python/src/*.rs)."""

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union, final, overload

import numpy as np
import numpy.typing as npt

from .types import (
    ConicResult,
    ContactRecord,
    ImpactSetResult,
    InverseDynamicsResult,
    LcpResult,
    ModelStabilityResult,
    OcpResult,
    SimulationResult,
    SimulatorCounters,
    SnapshotResult,
    StabilityResult,
    StepDerivatives,
    WalkResult,
)

_Array = npt.NDArray[np.float64]
_ArrayLike = npt.ArrayLike
_PathLike = Union[str, "os.PathLike[str]"]

__version__: str
STEPPER_NAMES: List[str]
FEATURES: List[str]
"""The optional cargo features built in: ``"ocp"`` (``solve_ocp``), ``"stability"``
(``certify_stability``)."""

class NonsmoothError(Exception):
    """Base class of every error raised by the nonsmooth Rust core."""

class ModelError(NonsmoothError):
    """A model file or model data is invalid (parse errors with file:line, bad state sizes)."""

class SimulationError(NonsmoothError):
    """A simulation failed (bad options, or a step failed)."""

class SolverError(NonsmoothError):
    """An LCP / QP / SOCP solve failed or its input was malformed."""

class ImpactError(NonsmoothError):
    """A set-valued impact computation failed or its options were out of range."""

class ControlError(NonsmoothError):
    """An inverse-dynamics computation failed or its input was malformed."""

class OcpError(NonsmoothError):
    """An optimal-control problem is malformed, infeasible, or its NLP/homotopy failed."""

class UnreachableError(OcpError):
    """No contact-consistent solution was found: the target (or a path bound) appears
    unreachable; the message names the binding constraints, largest sensitivity first."""

class FeatureNotBuiltError(NonsmoothError):
    """The function belongs to a cargo feature this extension was built without (``ocp``,
    ``stability``); the message names the feature. ``FEATURES`` lists those built in."""

class StabilityError(NonsmoothError):
    """A stability certificate could not be computed (bad parameters or a failed SDP build)."""

class NotApplicableError(StabilityError):
    """The model is outside the assumptions of the stability construction (Várkonyi's SOS stability paper): the
    message says which one (not planar, not one free body, not two contacts, no slope, ...)."""

class NotAnEquilibriumError(StabilityError):
    """The model's initial configuration is not a static equilibrium with its friction (it
    slides, tips or penetrates); the message gives the static check's reason."""

@final
class Model:
    """A validated rigid-body model; build with ``load_model`` or ``Model.from_toml``."""

    @staticmethod
    def from_toml(
        text: str, name: Optional[str] = None, parameters: Optional[Dict[str, float]] = None
    ) -> "Model":
        """Parses a model from TOML text (docs/model-format.md); ``parameters`` sets named
        numbers first, e.g. ``{"materials.floor.friction": 0.3}``."""
    @staticmethod
    def from_file(path: _PathLike) -> "Model":
        """Loads a ``.toml`` or ``.urdf`` model file."""
    def to_toml(self) -> str:
        """The model as TOML text; ``Model.from_toml`` of it gives this model back exactly."""
    def __reduce__(self) -> Tuple[Any, Tuple[str, str]]:
        """Pickle support: the model travels as its TOML text."""
    @property
    def name(self) -> str: ...
    @property
    def dimension(self) -> str:
        """``"planar"`` or ``"spatial"``."""
    @property
    def nq(self) -> int: ...
    @property
    def nv(self) -> int: ...
    @property
    def nu(self) -> int: ...
    @property
    def q_names(self) -> List[str]: ...
    @property
    def v_names(self) -> List[str]: ...
    @property
    def body_names(self) -> List[str]: ...
    @property
    def actuator_names(self) -> List[str]: ...
    @property
    def q0(self) -> _Array:
        """Initial configuration of the model file (length nq)."""
    @property
    def v0(self) -> _Array:
        """Initial velocity of the model file (length nv)."""
    def forward_kinematics(self, q: Optional[_ArrayLike] = None) -> _Array:
        """World pose of every body at ``q``: (nb × 7) rows x, y, z, qw, qx, qy, qz."""
    def point_jacobian(
        self,
        body: Union[str, int],
        point: Optional[_ArrayLike] = None,
        q: Optional[_ArrayLike] = None,
    ) -> _Array:
        """Jacobian (3 × nv) of a point (body frame) fixed to ``body``: world velocity = J v."""
    def com(self, q: Optional[_ArrayLike] = None) -> _Array:
        """Centre of mass of the system (world, 3)."""
    def com_jacobian(self, q: Optional[_ArrayLike] = None) -> _Array:
        """Jacobian of the centre of mass (3 × nv)."""
    def mass_matrix(self, q: Optional[_ArrayLike] = None) -> _Array:
        """Joint-space mass matrix M(q) (nv × nv)."""
    def bias_forces(self, q: Optional[_ArrayLike] = None, v: Optional[_ArrayLike] = None) -> _Array:
        """Bias forces h(q, v) (nv): M v̇ + h = Pᵀu + contact and passive forces."""

@final
class Simulator:
    """A model stepped with a fixed ``dt`` by one stepper, driven by actuator commands."""

    def __new__(cls, model: Model, stepper: Optional[str] = None, dt: Optional[float] = None) -> "Simulator": ...
    def reset(self, q: Optional[_ArrayLike] = None, v: Optional[_ArrayLike] = None) -> None:
        """Back to the model's initial state, or to (q, v)."""
    def step(self, u: Optional[_ArrayLike] = None) -> None:
        """One step of ``dt`` with the command ``u`` (one entry per actuator)."""
    def step_n(self, n: int, u: Optional[_ArrayLike] = None) -> None:
        """``n`` steps with the same command (GIL released; Ctrl-C honoured)."""
    def derivatives(
        self,
        u: Optional[_ArrayLike] = None,
        parameters: Optional[Sequence[str]] = None,
        method: Optional[str] = None,
    ) -> StepDerivatives:
        """Derivatives of the step ``step(u)`` would take (state unchanged): keys ``A``
        (2nv×2nv), ``B`` (2nv×nu), ``C`` (2nv×len(parameters)), ``parameters``, ``next_q``,
        ``next_v``, ``method``, ``contacts``, ``one_sided``."""
    @property
    def q(self) -> _Array: ...
    @property
    def v(self) -> _Array: ...
    @property
    def t(self) -> float: ...
    @property
    def dt(self) -> float: ...
    @property
    def stepper(self) -> str: ...
    @property
    def stepper_choice(self) -> str:
        """How the stepper was chosen (named, or the model's default and why)."""
    @property
    def warnings(self) -> List[str]:
        """What the stepper leaves out of the model (also emitted as ``UserWarning``)."""
    def counters(self) -> SimulatorCounters:
        """``steps``, ``clamped_commands`` and ``recoveries`` (``step_halving``, ``substeps``)
        since construction or the last reset."""
    def body_poses(self) -> _Array:
        """(nb × 7): x, y, z, qw, qx, qy, qz of every body."""
    def contacts(self) -> List[ContactRecord]:
        """Contacts of the last step: colliders, point, normal, gap, impulses (or None)."""

def load_model(path: _PathLike) -> Model:
    """Loads a ``.toml`` or ``.urdf`` model file; raises ``ModelError`` with file:line."""

def snapshot(
    model: Model,
    q: Optional[_ArrayLike] = None,
    v: Optional[_ArrayLike] = None,
    t: float = 0.0,
) -> SnapshotResult:
    """Dynamics frozen at (q, v, t): keys ``M``, ``f``, ``N_q``, ``B``, ``gaps``, ``Jn``,
    ``Jt``, ``mu``, ``normals``, ``points``, ``J_bilateral``, ``J_limits``, ``q``, ``v``, ``t``."""

def simulate(
    model: Model,
    stepper: Optional[str] = None,
    dt: Optional[float] = None,
    duration: Optional[float] = None,
    q0: Optional[_ArrayLike] = None,
    v0: Optional[_ArrayLike] = None,
    record_every: int = 1,
) -> SimulationResult:
    """Time stepping; keys ``t`` (n), ``q`` (n×nq), ``v`` (n×nv), ``q_names``, ``v_names``,
    ``stepper``, ``steps``."""

def impact_set(
    model: Model,
    q: Optional[_ArrayLike] = None,
    v: Optional[_ArrayLike] = None,
    samples: int = 1024,
    cap: float = 0.3,
    steps: int = 10,
    eps: float = 0.0,
    seed: int = 1,
    margin: Optional[float] = None,
    laws: bool = True,
) -> ImpactSetResult:
    """Set-valued impact (Halm & Posa, Algorithm 2); keys ``v_minus``, ``outcomes``,
    ``normal_velocities``, ``tangential_velocities``, ``colliding``, ``mean_lcps``,
    ``max_residual``, ``rejected``, ``Jn``, ``Jt``, ``notes``, ``laws``."""

def inverse_dynamics(
    model: Model,
    q: Optional[_ArrayLike] = None,
    v: Optional[_ArrayLike] = None,
    acceleration: Optional[_ArrayLike] = None,
    velocity: Optional[_ArrayLike] = None,
    variant: str = "qp-coulomb",
    dt: float = 1e-3,
    relax_infeasible: bool = True,
) -> InverseDynamicsResult:
    """Inverse dynamics with rigid contact (Zapolsky & Drumwright); ``variant`` is one of
    ``lcp-noslip``, ``lcp-coulomb``, ``qp-noslip``, ``qp-coulomb``, ``qp-coulomb-one-stage``; keys ``torques``,
    ``normal_forces``, ``tangent_forces``, ``normal_impulses``, ``tangent_impulses``,
    ``v_plus``, ``status``, ``variant``, ``method``, ``iterations``, ``kinetic_energy``."""

@overload
def certify_stability(
    alpha_deg: Model, *, method: str = "multi-v", model: None = None
) -> ModelStabilityResult: ...
@overload
def certify_stability(
    alpha_deg: None = None, *, model: Model, method: str = "multi-v"
) -> ModelStabilityResult: ...
@overload
def certify_stability(
    alpha_deg: float,
    mu1: Optional[float] = None,
    mu2: Optional[float] = None,
    d: Optional[float] = None,
    e: float = 0.0,
    h: float = 1.0,
    method: str = "multi-v",
    *,
    model: None = None,
) -> StabilityResult:
    """SOS Lyapunov certificate of a resting equilibrium on two frictional contacts
    (Várkonyi, Theorem 2; ``method="ptt"``: the single-V baseline).

    ``certify_stability(model)`` (or ``model=``): the planar body of a model at its initial configuration;
    keys ``verdict`` (``"certified"``, ``"ambiguous"``, ``"falsified-by-simulation"``,
    ``"no-certificate-found"``), ``reason``, ``epsilon``, ``body``, ``static_forces``,
    ``modes``, ``build_seconds``, ``solve_seconds``, ``monte_carlo_min``, ``simulation``,
    ``trajectory``; raises ``NotApplicableError`` / ``NotAnEquilibriumError``.

    ``certify_stability(alpha_deg, mu1, mu2, d, e=0.0, h=1.0)``: the paper's example body;
    keys ``verdict`` (``"certified"``, ``"no-certificate"``, ``"ambiguous"``,
    ``"no-equilibrium"``, ``"not-applicable"``), ``reason``, ``epsilon``, ``sdp_variables``,
    ``sdp_equalities``, ``psd_blocks``, ``modes``, ``build_seconds``, ``solve_seconds``,
    ``monte_carlo_min``."""

def walk(
    controller: str = "qp_mu",
    terrain: str = "rigid_mu0_1",
    duration: float = 3.0,
    duty: float = 0.75,
    friction_cap: Optional[float] = None,
    time_of_contact: bool = False,
    impact_consistent: bool = False,
    model: Optional[Model] = None,
) -> WalkResult:
    """One closed-loop quadruped trot (Zapolsky & Drumwright §7) under a controller (``qp_mu``,
    ``qp_inf``, ``lcp_mu``, ``lcp_inf``, ``pid``, ``delay1``, ``delay2``) on a terrain
    (``rigid_mu0_1``, ``rigid_muinf``, ``compliant_mu0_1``, ``compliant_muinf``,
    ``heightmap_rigid``); keys ``pos_err``, ``vel_err``, ``fell``, ``fell_at``,
    ``fall_reason``, ``chatter_fraction``, ``chattered``, ``longest_reversal_run``, ``travel``,
    ``planned_travel``,
    ``progress``, ``mean_dtau``, ``mean_tau``, ``force_err_rel``, ``t``, ``pos_err_t``,
    ``torques``, ``com_t``, ``com``."""

def solve_ocp(path: Optional[str] = None, text: Optional[str] = None) -> OcpResult:
    """Optimal control through impacts (time-freezing + FESD + MPCC homotopy over IPOPT) of a
    problem file or its TOML text; keys ``tau``, ``y``, ``t``, ``u``, ``s``, ``objective``,
    ``terminal_error``, ``comp_residual``, ``nlp_iterations``, ``cpu_seconds``,
    ``homotopy``."""

def lcp(
    M: _ArrayLike,
    q: _ArrayLike,
    method: str = "lemke",
    max_iterations: Optional[int] = None,
    tol: Optional[float] = None,
) -> LcpResult:
    """LCP ``w = M z + q ≥ 0, z ≥ 0, zᵀw = 0``; keys ``z``, ``w``, ``status``, ``residuals``,
    ``iterations`` (and ``solutions`` for ``method="enumerate"``)."""

def qp(
    P: _ArrayLike,
    c: _ArrayLike,
    A: Optional[_ArrayLike] = None,
    b: Optional[_ArrayLike] = None,
    G: Optional[_ArrayLike] = None,
    h: Optional[_ArrayLike] = None,
    lower: Optional[_ArrayLike] = None,
    upper: Optional[_ArrayLike] = None,
) -> ConicResult:
    """QP ``min ½xᵀPx + cᵀx`` s.t. ``Ax = b``, ``Gx ≤ h``, bounds; keys ``x``, ``s``, ``z``,
    ``objective``, ``status``, ``residuals``, ``iterations``."""

def socp(
    P: _ArrayLike,
    c: _ArrayLike,
    cones: Sequence[Tuple[_ArrayLike, _ArrayLike, _ArrayLike, float]],
    A: Optional[_ArrayLike] = None,
    b: Optional[_ArrayLike] = None,
    G: Optional[_ArrayLike] = None,
    h: Optional[_ArrayLike] = None,
    lower: Optional[_ArrayLike] = None,
    upper: Optional[_ArrayLike] = None,
) -> ConicResult:
    """SOCP with cones ``‖Mᵢx + mᵢ‖ ≤ cᵢᵀx + dᵢ``; same keys as ``qp``."""

def viewer_html(
    model: Model,
    t: _ArrayLike,
    q: _ArrayLike,
    v: _ArrayLike,
    stepper: str = "trajectory",
    title: Optional[str] = None,
) -> str:
    """The offline trajectory viewer page of the states ``t`` (n), ``q`` (n×nq), ``v`` (n×nv)
    of ``model`` (``nonsmooth.view`` wraps it for Jupyter)."""
