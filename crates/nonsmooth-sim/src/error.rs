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
    /// A step of [`crate::simulate`] failed: the step index (1-based), the time at the
    /// start of the failed step, the cause (carrying the solver status for solver
    /// failures) and the trajectory recorded up to the last good step.
    #[error("step {step} at t = {t} failed: {source}")]
    StepFailed {
        step: usize,
        t: f64,
        source: Box<SimError>,
        partial: Box<crate::Trajectory>,
    },
}

impl SimError {
    /// The underlying cause: the error inside [`SimError::StepFailed`], or `self`.
    pub fn root_cause(&self) -> &SimError {
        match self {
            SimError::StepFailed { source, .. } => source.root_cause(),
            other => other,
        }
    }
}
