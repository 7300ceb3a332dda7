//! Every stepper a user can pick by name: the simulator's own (`nonsmooth_sim::STEPPER_NAMES`)
//! and the time-as-state impact inclusion of Halm & Posa ([`crate::time_di`]), which cannot live
//! in `nonsmooth-sim` without a dependency cycle. The CLI (`nonsmooth simulate --stepper`) and
//! the Python bindings (`simulate(stepper=...)`) both use this registry.

use crate::time_di::TimeAsStateDi;
use nonsmooth_sim::{stepper_by_name, SimError, Stepper, STEPPER_NAMES};

/// Name of Halm & Posa's time-as-state stepper.
pub const TIME_AS_STATE_DI: &str = "time-as-state-di";

/// Every stepper name [`by_name`] accepts.
pub fn names() -> Vec<&'static str> {
    STEPPER_NAMES
        .iter()
        .copied()
        .chain(std::iter::once(TIME_AS_STATE_DI))
        .collect()
}

/// The stepper called `name`, with default options.
///
/// # Errors
/// [`SimError::UnknownStepper`] listing every available name.
pub fn by_name(name: &str) -> Result<Box<dyn Stepper>, SimError> {
    if name == TIME_AS_STATE_DI {
        return Ok(Box::new(TimeAsStateDi::new()));
    }
    stepper_by_name(name).map_err(|e| match e {
        SimError::UnknownStepper { name, .. } => SimError::UnknownStepper {
            name,
            available: names().join(", "),
        },
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_stepper_can_be_built_and_reports_its_name() {
        for name in names() {
            assert_eq!(by_name(name).unwrap().name(), name);
        }
        let err = by_name("nope").err().unwrap().to_string();
        assert!(err.contains(TIME_AS_STATE_DI), "{err}");
    }
}
