//! The [`Stepper`] trait every time-stepping scheme implements (selection by name:
//! [`crate::registry`]).

use crate::actuation::Actuation;
use crate::derivatives::StepProblem;
use crate::error::SimError;
use crate::pipeline::Step;
use nonsmooth_core::geometry::ContactMargins;
use nonsmooth_core::{Model, State};

/// The impulses a stepper applied at one contact over its last step.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactImpulse {
    /// Index of the contact in the snapshot of the step's start state
    /// ([`nonsmooth_core::ContactSnapshot::contacts`]).
    pub contact: usize,
    /// Normal impulse (N·s).
    pub normal: f64,
    /// Tangential impulses along the contact's tangents (N·s).
    pub tangent: Vec<f64>,
}

/// One time-stepping scheme: advances a state by one step of size `h`. Steppers are `Send`
/// and `Sync`, so a simulation can run on another thread (the Python bindings release the
/// GIL while stepping).
pub trait Stepper: Send + Sync {
    /// The name used on the command line and in model files (see [`crate::registry`]).
    fn name(&self) -> &'static str;

    /// The scheme's own stage of a step ([`crate::pipeline`]): advances the checked `step`
    /// by exactly `step.h` seconds of physical time with `step.input` applied inside the
    /// step (in the velocity update of the time-stepping schemes, servos implicitly, see
    /// [`crate::actuation`]; in the right-hand side of the ODE schemes). Implementations
    /// report solver failures as errors and end with [`crate::pipeline::finish`], so they
    /// never return non-finite states. Callers step through [`Stepper::step_actuated`],
    /// which prepares the step first.
    fn advance(&mut self, step: &Step<'_>) -> Result<State, SimError>;

    /// Advances `state` by exactly `h` seconds of physical time (the contract of every
    /// scheme: `h` is physical time, and the returned state's `t` is `state.t + h`) with the
    /// actuation `input`: [`crate::pipeline::prepare`] (checks `h` and the state once), then
    /// the scheme's [`Stepper::advance`].
    ///
    /// # Errors
    /// [`SimError::InvalidOption`] for a bad `h`, [`SimError::Model`] for a bad state, and
    /// the scheme's own errors (unsupported models, solver failures, divergence).
    fn step_actuated(
        &mut self,
        model: &Model,
        state: &State,
        input: &Actuation,
        h: f64,
    ) -> Result<State, SimError> {
        let step = crate::pipeline::prepare(model, state, input, h)?;
        self.advance(&step)
    }

    /// Advances `state` by `h` seconds without actuation.
    fn step(&mut self, model: &Model, state: &State, h: f64) -> Result<State, SimError> {
        self.step_actuated(model, state, &Actuation::none(), h)
    }

    /// Whether the last successful step met the scheme's convergence test; `false` when it
    /// accepted an iterate at an iteration limit (`drumwright`: the staged normal/friction
    /// sweeps, [`crate::drumwright::StepReport::sweep_limit_reached`]). Counted by the
    /// [`crate::Simulator`] and the run loop ([`crate::Recoveries::unconverged_steps`]).
    fn last_step_converged(&self) -> bool {
        true
    }

    /// Whether the last successful step repeated its solve with more accurate settings after
    /// the first solve failed its check (`qp-max-dissipation`: Clarabel's iterative
    /// refinement). Counted by the [`crate::Simulator`] and the run loop
    /// ([`crate::Recoveries::repeated_solves`]).
    fn last_step_repeated_solve(&self) -> bool {
        false
    }

    /// Whether the last successful step was solved by a fallback program after the scheme's
    /// own solve found no checked solution (`anitescu-potra`: the regularized convex program of
    /// its contacts; `drumwright`: the cone-coupled or the staged programs when its one
    /// program's friction bounds do not settle or its Newton solve fails). Counted by the
    /// [`crate::Simulator`] ([`crate::Recoveries::convex_fallbacks`]).
    fn last_step_fell_back(&self) -> bool {
        false
    }

    /// Whether the scheme applies a material's Newton restitution coefficient (otherwise
    /// [`crate::warnings::model_warnings`] says so before a run).
    fn honours_restitution(&self) -> bool {
        false
    }

    /// The contact impulses of the last successful step of size `h`, for the steppers that
    /// report them (`None` otherwise).
    fn last_contact_impulses(&self, _h: f64) -> Option<Vec<ContactImpulse>> {
        None
    }

    /// The margins the scheme detects contacts with on a step of size `h`: the model's
    /// margin, which `drumwright` widens by the approach speed (speculative contacts). A
    /// report of a step's contacts ([`crate::Simulator::contacts`]) detects with these, so that
    /// it sees the contacts the step used, in the same order.
    fn contact_margins(&self, model: &Model, _h: f64) -> ContactMargins {
        ContactMargins::uniform(model.contact_margin)
    }

    /// The contact problem a step from `step` solves, assembled and not solved, where the
    /// scheme's step is the solution of a [`StepProblem`] (the equations that
    /// [`crate::derivatives`] differentiates implicitly); `None` (the default) for a scheme
    /// whose step is differentiated by finite differences. With `like`, the problem of
    /// `step` with the constraints of `like` where it can (the data of a nearby state for
    /// a difference of the data).
    ///
    /// # Errors
    /// As the step's own stages (a state the snapshot refuses).
    fn step_problem(
        &self,
        _step: &Step<'_>,
        _like: Option<&StepProblem>,
    ) -> Result<Option<StepProblem>, SimError> {
        Ok(None)
    }
}

/// A lent stepper is a stepper (so a [`crate::Simulator`] can borrow one:
/// `Simulator::borrowing(&model, Box::new(&mut stepper), dt)`).
impl<S: Stepper + ?Sized> Stepper for &mut S {
    fn name(&self) -> &'static str {
        (**self).name()
    }

    fn advance(&mut self, step: &Step<'_>) -> Result<State, SimError> {
        (**self).advance(step)
    }

    fn step_actuated(
        &mut self,
        model: &Model,
        state: &State,
        input: &Actuation,
        h: f64,
    ) -> Result<State, SimError> {
        (**self).step_actuated(model, state, input, h)
    }

    fn last_step_converged(&self) -> bool {
        (**self).last_step_converged()
    }

    fn last_step_repeated_solve(&self) -> bool {
        (**self).last_step_repeated_solve()
    }

    fn last_step_fell_back(&self) -> bool {
        (**self).last_step_fell_back()
    }

    fn honours_restitution(&self) -> bool {
        (**self).honours_restitution()
    }

    fn last_contact_impulses(&self, h: f64) -> Option<Vec<ContactImpulse>> {
        (**self).last_contact_impulses(h)
    }

    fn contact_margins(&self, model: &Model, h: f64) -> ContactMargins {
        (**self).contact_margins(model, h)
    }

    fn step_problem(
        &self,
        step: &Step<'_>,
        like: Option<&StepProblem>,
    ) -> Result<Option<StepProblem>, SimError> {
        (**self).step_problem(step, like)
    }
}
