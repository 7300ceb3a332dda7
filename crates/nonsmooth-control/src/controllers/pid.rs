//! Joint-space PID (the paper's "PID" baseline, paper §7.3).

use nalgebra::DVector;

use super::{actuated_positions, actuated_velocities, check_reference, ControlInput, Controller};
use crate::error::ControlError;

/// Configuration-space PID: `u = kp e + kd ė + ki ∫e dt` with `e = θ_ref − θ`.
#[derive(Debug, Clone, PartialEq)]
pub struct JointPid {
    /// Proportional gain (N·m/rad).
    pub kp: f64,
    /// Derivative gain (N·m·s/rad).
    pub kd: f64,
    /// Integral gain (N·m/(rad·s)).
    pub ki: f64,
    integral: Option<DVector<f64>>,
}

impl JointPid {
    /// A PID with the given gains and a zero integrator.
    pub fn new(kp: f64, kd: f64, ki: f64) -> Self {
        Self {
            kp,
            kd,
            ki,
            integral: None,
        }
    }
}

impl Controller for JointPid {
    fn name(&self) -> &str {
        "pid"
    }

    fn control(&mut self, input: &ControlInput<'_>) -> Result<DVector<f64>, ControlError> {
        check_reference(input.model, input.reference)?;
        let s = input.snapshot;
        let e = &input.reference.q - actuated_positions(input.model, &s.q);
        let ed = &input.reference.qd - actuated_velocities(input.model, &s.v);
        let integral = self.integral.get_or_insert_with(|| DVector::zeros(e.len()));
        if integral.len() != e.len() {
            *integral = DVector::zeros(e.len());
        }
        *integral += &e * input.dt;
        Ok(e * self.kp + ed * self.kd + &*integral * self.ki)
    }

    fn reset(&mut self) {
        self.integral = None;
    }
}
