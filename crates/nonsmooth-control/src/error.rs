//! The typed errors of the inverse-dynamics API.

use nonsmooth_solvers::{Residuals, SolveStatus};
use thiserror::Error;

/// Everything a caller of this crate can get wrong, and every way a solve can fail.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ControlError {
    /// A vector or matrix has the wrong length.
    #[error("dimension mismatch in {what}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// The offending input.
        what: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// An input contains NaN or infinity.
    #[error("{what} contains a non-finite value")]
    NonFinite {
        /// The offending input (with index).
        what: String,
    },
    /// The model has no actuators, so there is nothing to compute.
    #[error("the model has no actuators: inverse dynamics needs at least one actuated DOF")]
    NoActuators,
    /// A contact names a body the model does not have.
    #[error("contact {contact} is on body {body}, but the model has {bodies} bodies")]
    UnknownBody {
        /// Index of the contact in the list.
        contact: usize,
        /// The body index given.
        body: usize,
        /// Number of bodies of the model.
        bodies: usize,
    },
    /// An invalid parameter (Δt ≤ 0, negative friction, zero normal, ...).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// An unknown variant name.
    #[error("unknown inverse-dynamics variant {0:?} (expected lcp-noslip, lcp-coulomb, qp-noslip, qp-coulomb or qp-coulomb-one-stage)")]
    UnknownVariant(String),
    /// The model or state was rejected by nonsmooth-core.
    #[error(transparent)]
    Model(#[from] nonsmooth_core::ModelError),
    /// The desired motion cannot be realized under the contact model (erratum E15) and
    /// relaxation is off.
    #[error("{variant}: desired motion is infeasible: {reason}")]
    InfeasibleDesired {
        /// Variant name.
        variant: &'static str,
        /// Why (e.g. the contact row whose normal velocity is fixed by the joints).
        reason: String,
    },
    /// A numerical solve failed; no torques are returned.
    #[error("{variant}: {stage} failed ({status:?}, residuals {residuals:?}): {reason}")]
    SolverFailed {
        /// Variant name.
        variant: &'static str,
        /// Which solve (e.g. "stage I", "ppm/lemke").
        stage: &'static str,
        /// The solver's status where it returned one.
        status: Option<SolveStatus>,
        /// The measured residuals where available (zero otherwise).
        residuals: Residuals,
        /// The solver's message.
        reason: String,
    },
}
