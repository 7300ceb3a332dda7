//! Recovery of failed steps: a legitimate scene never ends in a solver error.
//!
//! A step whose solve fails ([`SimError::Solver`]: an interior-point solver that stops
//! without converging, an LCP that fails its residual check, a program reported infeasible) or whose result is not finite
//! ([`SimError::Diverged`]) is retried as two steps of half the size, recursively, down to
//! `h / 2^`[`MAX_HALVINGS`]. Each half step is an ordinary step with every check of its stepper
//! (residuals, cones, energy bounds), so a recovered step is accepted on the same terms as a
//! normal one; an unconverged iterate is never accepted. Errors about the input itself (a bad
//! model, state or option, an unsupported model) are not retried. Every recovery is counted
//! ([`Recoveries`]) in the [`crate::Simulator`]'s counters and in [`crate::Trajectory`].

use crate::actuation::Actuation;
use crate::error::SimError;
use crate::stepper::Stepper;
use nonsmooth_core::{Model, State};

/// Deepest halving of a failed step (a step of h is retried down to h / 256).
pub const MAX_HALVINGS: u32 = 8;

/// Recoveries of failed steps, per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Recoveries {
    /// Steps that failed and were completed as two or more smaller steps.
    pub step_halving: usize,
    /// Sub-steps taken by those recoveries in all.
    pub substeps: usize,
    /// Steps (or sub-steps) that ended at an iteration limit of the scheme and were
    /// accepted with their last iterate ([`Stepper::last_step_converged`]).
    pub unconverged_steps: usize,
    /// Steps (or sub-steps) whose solve failed its check and was repeated with more accurate
    /// solver settings before the step was accepted ([`Stepper::last_step_repeated_solve`]).
    pub repeated_solves: usize,
    /// Steps (or sub-steps) whose own solve found no checked solution and that were solved
    /// by the regularized convex program of the same contacts instead
    /// ([`Stepper::last_step_fell_back`]).
    pub convex_fallbacks: usize,
}

impl Recoveries {
    /// Adds the counts of `other`.
    pub fn add(&mut self, other: &Recoveries) {
        self.step_halving += other.step_halving;
        self.substeps += other.substeps;
        self.unconverged_steps += other.unconverged_steps;
        self.repeated_solves += other.repeated_solves;
        self.convex_fallbacks += other.convex_fallbacks;
    }

    /// Counts the last successful step of `stepper`.
    fn count_step(&mut self, stepper: &dyn Stepper) {
        self.unconverged_steps += usize::from(!stepper.last_step_converged());
        self.repeated_solves += usize::from(stepper.last_step_repeated_solve());
        self.convex_fallbacks += usize::from(stepper.last_step_fell_back());
    }
}

/// Whether a step that failed with `e` may succeed as smaller steps: a solve that did not
/// converge or found no solution, or a non-finite result; not malformed solver input.
pub(crate) fn recoverable(e: &SimError) -> bool {
    use nonsmooth_solvers::SolverError as E;
    match e {
        SimError::Solver(s) => matches!(
            s,
            E::NoSolution { .. }
                | E::Failed { .. }
                | E::PrimalInfeasible { .. }
                | E::DualInfeasible { .. }
        ),
        SimError::Diverged { .. } => true,
        _ => false,
    }
}

/// One step of `h` with `input` applied, recovered by halving when it fails, down to
/// `h / 2^max_halvings` (module docs; 0: no recovery).
///
/// # Errors
/// The first error when it is not recoverable (or recovery is off), or the error of the
/// smallest step when the halvings run out.
pub(crate) fn step_with_recovery(
    stepper: &mut dyn Stepper,
    model: &Model,
    state: &State,
    input: &Actuation,
    h: f64,
    max_halvings: u32,
    recoveries: &mut Recoveries,
) -> Result<State, SimError> {
    match stepper.step_actuated(model, state, input, h) {
        Ok(next) => {
            recoveries.count_step(stepper);
            Ok(next)
        }
        Err(e) if !recoverable(&e) || max_halvings == 0 => Err(e),
        Err(_) => {
            let mut counts = Recoveries::default();
            let next = halved(stepper, model, state, input, h, max_halvings, &mut counts)?;
            recoveries.step_halving += 1;
            recoveries.add(&counts);
            Ok(next)
        }
    }
}

/// Two steps of `h / 2`, each halved again on failure while `depth` lasts; sub-steps and
/// unconverged sub-steps are counted in `counts`.
fn halved(
    stepper: &mut dyn Stepper,
    model: &Model,
    state: &State,
    input: &Actuation,
    h: f64,
    depth: u32,
    counts: &mut Recoveries,
) -> Result<State, SimError> {
    let half = 0.5 * h;
    let mut s = state.clone();
    for _ in 0..2 {
        s = match stepper.step_actuated(model, &s, input, half) {
            Ok(next) => {
                counts.substeps += 1;
                counts.count_step(stepper);
                next
            }
            Err(e) if !recoverable(&e) || depth <= 1 => return Err(e),
            Err(_) => halved(stepper, model, &s, input, half, depth - 1, counts)?,
        };
    }
    Ok(s)
}
