//! Every stepper the CLI offers: the simulator's own (`nonsmooth_sim::STEPPER_NAMES`) and those
//! defined by capability crates that build on the simulator (the time-as-state impact
//! inclusion of seed 001, which cannot live in `nonsmooth-sim` without a dependency cycle).

use nonsmooth_impact::time_di::TimeAsStateDi;
use nonsmooth_sim::{stepper_by_name, SimError, Stepper, STEPPER_NAMES};

/// Name of the seed-001 time-as-state stepper.
const TIME_AS_STATE_DI: &str = "time-as-state-di";

/// Names accepted by `nonsmooth simulate --stepper`.
pub fn names() -> Vec<&'static str> {
    STEPPER_NAMES
        .iter()
        .copied()
        .chain(std::iter::once(TIME_AS_STATE_DI))
        .collect()
}

/// The stepper called `name`, with default options.
pub fn by_name(name: &str) -> Result<Box<dyn Stepper>, SimError> {
    if name == TIME_AS_STATE_DI {
        Ok(Box::new(TimeAsStateDi::new()))
    } else {
        stepper_by_name(name).map_err(|e| match e {
            SimError::UnknownStepper { name, .. } => SimError::UnknownStepper {
                name,
                available: names().join(", "),
            },
            other => other,
        })
    }
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
