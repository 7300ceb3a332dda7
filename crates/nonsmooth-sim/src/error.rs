//! Errors of the simulation layer.

use nonsmooth_core::ModelError;
use nonsmooth_solvers::SolverError;
use thiserror::Error;

/// Why a simulation could not go on.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SimError {
    /// The model or state is invalid.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A solver used by the stepper failed.
    #[error(transparent)]
    Solver(#[from] SolverError),
    /// No stepper has this name.
    #[error("unknown stepper `{name}`; available: {available}")]
    UnknownStepper {
        /// The name asked for.
        name: String,
        /// The names that exist.
        available: String,
    },
    /// The stepper cannot handle this model.
    #[error("stepper `{stepper}` cannot handle this model: {reason}")]
    Unsupported {
        /// The stepper.
        stepper: &'static str,
        /// Why.
        reason: String,
    },
    /// A simulation option is out of range.
    #[error("invalid simulation option `{option}`: {reason}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// Why.
        reason: String,
    },
    /// An argument of a call is malformed (wrong length, non-finite entry): named with its
    /// index; nothing was changed.
    #[error("invalid argument `{argument}`: {reason}")]
    InvalidInput {
        /// The argument (`u`, `q`, `v`, …).
        argument: &'static str,
        /// What is wrong, with the index.
        reason: String,
    },
    /// The state became non-finite or exploded.
    #[error("simulation diverged at t = {t}: {reason}")]
    Diverged {
        /// Simulation time in s.
        t: f64,
        /// Why.
        reason: String,
    },
    /// A step of a run ([`crate::run::simulate`]) failed: the step index (1-based), the time
    /// at the start of the failed step and the cause (carrying the solver status for solver
    /// failures). The states recorded before it travel beside the error
    /// ([`crate::run::Run`]).
    #[error("step {step} at t = {t} failed: {source}")]
    StepFailed {
        /// Step index (1-based).
        step: usize,
        /// Simulation time in s.
        t: f64,
        /// The cause.
        source: Box<SimError>,
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
