//! One time step as named stages, shared by every stepper (as MuJoCo's `mj_step` or Rapier's
//! `PhysicsPipeline::step` read):
//!
//! 1. [`prepare`]: the step size, the state and the actuation are checked once, here and
//!    nowhere else ([`Step`] is the checked input every scheme receives);
//! 2. the scheme's own stage, [`crate::Stepper::advance`]. The velocity-level rigid schemes
//!    (`anitescu-potra`, `qp-max-dissipation`, `drumwright`) share its first part, the
//!    contact set: the contacts of the step's start state detected once, within the margins
//!    the scheme reports ([`crate::Stepper::contact_margins`]), into one set with a per-body
//!    view (models of root joints: mass blocks and per-body Jacobian rows, kept by the
//!    scheme and updated in place from step to step) and a dense view (built when a scheme
//!    asks for it), with the actuation applied to M and f. The contact model that follows
//!    is each scheme's own code: the LCP of `anitescu-potra` and the QP of
//!    `qp-max-dissipation` on the set's free motion (sparse rows, the mass matrix factored
//!    per block), Drumwright's compliant rows, augmented mass and programs. The penalty and
//!    ODE schemes keep their integrators;
//! 3. [`integrate`]: the configuration update `q₁ = q₀ ⊕ h v₁` (floating-joint quaternions
//!    renormalized);
//! 4. [`finish`]: the new state, refused when not finite ([`SimError::Diverged`] naming the
//!    stepper). Counters and recoveries are kept by the one time loop that calls the stages,
//!    [`crate::Simulator::advance`].

use crate::actuation::Actuation;
use crate::error::SimError;
use nalgebra::DVector;
use nonsmooth_core::dynamics::{check_state, integrate_configuration};
use nonsmooth_core::{Model, State};

/// The checked input of one step: the model, the state at the step's start, the actuation
/// applied inside the step and the step size `h` (physical time, s; positive and finite).
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// The model.
    pub model: &'a Model,
    /// The state at the start of the step (checked: dimensions, finite entries).
    pub state: &'a State,
    /// The actuation applied inside the step.
    pub input: &'a Actuation,
    /// The step size: the physical time the step advances (s).
    pub h: f64,
}

impl Step<'_> {
    /// The time at the end of the step.
    pub fn end_time(&self) -> f64 {
        self.state.t + self.h
    }
}

/// Stage 1: checks the step size (positive and finite) and the state (dimensions, finite
/// entries, unit quaternions within the model's tolerance) once for every scheme.
///
/// # Errors
/// [`SimError::InvalidOption`] for a bad `h`, [`SimError::Model`] for a bad state.
pub fn prepare<'a>(
    model: &'a Model,
    state: &'a State,
    input: &'a Actuation,
    h: f64,
) -> Result<Step<'a>, SimError> {
    check_step_size(h)?;
    check_state(model, &state.q, &state.v)?;
    Ok(Step {
        model,
        state,
        input,
        h,
    })
}

/// The step size `h` is positive and finite: the one check of a step size, used by every
/// step ([`prepare`]), by a [`crate::simulator::Simulator`]'s constructor for its `dt` and by a
/// run's options ([`crate::run::SimOptions::steps`]).
///
/// # Errors
/// [`SimError::InvalidOption`] naming `dt`.
pub fn check_step_size(h: f64) -> Result<(), SimError> {
    if h.is_finite() && h > 0.0 {
        Ok(())
    } else {
        Err(SimError::InvalidOption {
            option: "dt",
            reason: format!("step size must be positive and finite, got {h}"),
        })
    }
}

/// Stage 3: the configuration at the end of the step from the new velocity `v1`
/// (`q₁ = q₀ ⊕ h v₁`, quaternions renormalized).
pub fn integrate(step: &Step<'_>, v1: &DVector<f64>) -> DVector<f64> {
    integrate_configuration(step.model, &step.state.q, v1, step.h)
}

/// Stage 4: the state at `t + h`, or [`SimError::Diverged`] naming `stepper` when the new
/// configuration or velocity is not finite.
///
/// # Errors
/// [`SimError::Diverged`] for a non-finite result.
pub fn finish(
    stepper: &str,
    step: &Step<'_>,
    q1: DVector<f64>,
    v1: DVector<f64>,
) -> Result<State, SimError> {
    if !(q1.iter().all(|x| x.is_finite()) && v1.iter().all(|x| x.is_finite())) {
        return Err(SimError::Diverged {
            t: step.end_time(),
            reason: format!("{stepper} produced a non-finite state"),
        });
    }
    Ok(State {
        q: q1,
        v: v1,
        t: step.end_time(),
    })
}

/// Stages 3 and 4 of a velocity-level scheme: integrate `v1`, then finish.
///
/// # Errors
/// As [`finish`].
pub fn integrate_and_finish(
    stepper: &str,
    step: &Step<'_>,
    v1: DVector<f64>,
) -> Result<State, SimError> {
    let q1 = integrate(step, &v1);
    finish(stepper, step, q1, v1)
}
