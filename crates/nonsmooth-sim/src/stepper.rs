//! The [`Stepper`] trait every time-stepping scheme implements, and selection by name.

use crate::anitescu::AnitescuPotraStepper;
use crate::drumwright::DrumwrightStepper;
use crate::max_dissipation::MaxDissipationStepper;
use crate::ode::{BdfStepper, ImplicitEulerStepper, Rk45Stepper};
use crate::penalty::{PenaltyIntegrator, PenaltyStepper};
use crate::SimError;
use nonsmooth_core::{Model, State};

/// One time-stepping scheme: advances a state by one step of size `h`.
pub trait Stepper {
    /// The name used on the command line and in model files.
    fn name(&self) -> &'static str;

    /// Advances `state` by `h` seconds. Implementations check their inputs and report solver
    /// failures as errors; they never return non-finite states silently.
    fn step(&mut self, model: &Model, state: &State, h: f64) -> Result<State, SimError>;
}

/// Names accepted by [`stepper_by_name`].
pub const STEPPER_NAMES: &[&str] = &[
    "penalty-symplectic",
    "penalty-explicit",
    "penalty-implicit",
    "drumwright",
    "anitescu-potra",
    "qp-max-dissipation",
    "rk45",
    "bdf",
];

/// The stepper called `name`, with default options.
pub fn stepper_by_name(name: &str) -> Result<Box<dyn Stepper>, SimError> {
    match name {
        "penalty-symplectic" => Ok(Box::new(PenaltyStepper::new(
            PenaltyIntegrator::SymplecticEuler,
        ))),
        "penalty-explicit" => Ok(Box::new(PenaltyStepper::new(
            PenaltyIntegrator::ExplicitEuler,
        ))),
        "drumwright" => Ok(Box::new(DrumwrightStepper::default())),
        "penalty-implicit" => Ok(Box::new(ImplicitEulerStepper::default())),
        "anitescu-potra" => Ok(Box::new(AnitescuPotraStepper::default())),
        "qp-max-dissipation" => Ok(Box::new(MaxDissipationStepper::default())),
        "rk45" => Ok(Box::new(Rk45Stepper::default())),
        "bdf" => Ok(Box::new(BdfStepper::default())),
        _ => Err(SimError::UnknownStepper {
            name: name.to_string(),
            available: STEPPER_NAMES.join(", "),
        }),
    }
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
