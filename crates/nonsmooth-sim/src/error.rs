//! Errors of the simulation layer.

use nonsmooth_core::ModelError;
use nonsmooth_solvers::SolverError;
use thiserror::Error;

/// Why a simulation could not go on.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SimError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(transparent)]
    Solver(#[from] SolverError),
    #[error("unknown stepper `{name}`; available: {available}")]
    UnknownStepper { name: String, available: String },
    #[error("stepper `{stepper}` cannot handle this model: {reason}")]
    Unsupported {
        stepper: &'static str,
        reason: String,
    },
    #[error("invalid simulation option `{option}`: {reason}")]
    InvalidOption {
        option: &'static str,
        reason: String,
    },
    #[error("simulation diverged at t = {t}: {reason}")]
    Diverged { t: f64, reason: String },
}
