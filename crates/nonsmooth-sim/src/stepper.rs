//! The [`Stepper`] trait every time-stepping scheme implements (selection by name:
//! [`crate::registry`]).

use crate::SimError;
use nonsmooth_core::{Model, State};

/// One time-stepping scheme: advances a state by one step of size `h`.
pub trait Stepper {
    /// The name used on the command line and in model files (see [`crate::registry`]).
    fn name(&self) -> &'static str;

    /// Advances `state` by `h` seconds. Implementations check their inputs and report solver
    /// failures as errors; they never return non-finite states silently.
    fn step(&mut self, model: &Model, state: &State, h: f64) -> Result<State, SimError>;
}

/// The step-size check of every stepper: `h` must be positive and finite.
pub(crate) fn check_step_size(h: f64) -> Result<(), SimError> {
    if h.is_finite() && h > 0.0 {
        Ok(())
    } else {
        Err(SimError::InvalidOption {
            option: "dt",
            reason: format!("step size must be positive and finite, got {h}"),
        })
    }
}
