//! What a step of the `drumwright` stepper computed, and the sums over its steps.

use nonsmooth_solvers::SolveStatus;

/// Forces of one contact after a step.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactForce {
    /// Index of the contact in the step's [`ContactSnapshot::contacts`](nonsmooth_core::snapshot::ContactSnapshot::contacts).
    pub contact: usize,
    /// Normal force λ_n (N).
    pub normal: f64,
    /// Friction forces λ_t along the contact tangents.
    pub tangent: Vec<f64>,
    /// The spring–damper value max(0, −K φ₁ − B φ̇₁) at the end of the step.
    pub spring_normal: f64,
    /// End-of-step slip velocity φ̇_t1 = G_t v₁ along the tangents.
    pub slip: Vec<f64>,
}

/// What the last step computed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepReport {
    /// Bilateral forces λ_b, in the order of [`ContactSnapshot::bilateral`](nonsmooth_core::snapshot::ContactSnapshot::bilateral).
    pub bilateral: Vec<f64>,
    /// Unilateral (joint-limit) forces with their row names.
    pub unilateral: Vec<(String, f64)>,
    /// Contact forces.
    pub contacts: Vec<ContactForce>,
    /// Status of the last conic solve, if one was needed.
    pub solver_status: Option<SolveStatus>,
    /// Conic solves in the step.
    pub solves: usize,
    /// Nonzeros of the (upper-triangular) Hessian of the last conic program.
    pub hessian_nnz: usize,
    /// Conic solves of the step that used the lifted sparse form (fast path).
    pub lifted_solves: usize,
    /// Stage solves of the step done by the specialized solvers of the block fast path
    /// ([`DrumwrightOptions::fast_solver`](crate::drumwright::DrumwrightOptions::fast_solver)) and accepted by their KKT check.
    pub fast_solves: usize,
    /// Stage solves of the block fast path that fell back to Clarabel (the specialized
    /// solver did not converge or failed its KKT check).
    pub fallbacks: usize,
    /// Staged normal/friction sweeps of the step (D5).
    pub sweeps: usize,
    /// Whether the step was solved by the one program ([`FrictionCoupling::OneProgram`](crate::drumwright::FrictionCoupling::OneProgram)).
    pub one_program: bool,
    /// Whether the one program of the step found no checked solution and the step was
    /// solved by the staged programs instead.
    pub fell_back: bool,
    /// Newton iterations of the one program, over all its rounds.
    pub newton_iterations: usize,
    /// Solves of the one program (rounds of the fixed point on the friction bounds).
    pub program_rounds: usize,
    /// Whether the step ended at the limit of staged sweeps without meeting
    /// [`DrumwrightOptions::sweep_tolerance`](crate::drumwright::DrumwrightOptions::sweep_tolerance), its last sweep accepted (counted by
    /// [`Stepper::last_step_converged`](crate::stepper::Stepper::last_step_converged)).
    pub sweep_limit_reached: bool,
}

/// Sums of the step reports over the contact-model stages a stepper has run (every
/// attempt, also those of steps that a recovery repeats with a smaller step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StepTotals {
    /// Contact-model stages run.
    pub steps: usize,
    /// Newton iterations of the one program ([`StepReport::newton_iterations`]).
    pub newton_iterations: usize,
    /// Newton solves of the one program ([`StepReport::program_rounds`]).
    pub program_rounds: usize,
    /// Steps with a fallback ([`StepReport::fell_back`]).
    pub fell_back: usize,
}
