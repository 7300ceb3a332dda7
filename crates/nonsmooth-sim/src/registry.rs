//! The steppers by name: the names the command line, the Python package and the experiments
//! accept, and the stepper with default options for each.

use crate::anitescu::AnitescuPotraStepper;
use crate::drumwright::DrumwrightStepper;
use crate::error::SimError;
use crate::max_dissipation::MaxDissipationStepper;
use crate::ode::{BdfStepper, ImplicitEulerStepper, Rk45Stepper};
use crate::penalty::{PenaltyIntegrator, PenaltyStepper};
use crate::stepper::Stepper;
use crate::time_as_state::{TimeAsStateDi, TIME_AS_STATE_DI};

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
    TIME_AS_STATE_DI,
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
        TIME_AS_STATE_DI => Ok(Box::new(TimeAsStateDi::new())),
        _ => Err(SimError::UnknownStepper {
            name: name.to_string(),
            available: STEPPER_NAMES.join(", "),
        }),
    }
}
