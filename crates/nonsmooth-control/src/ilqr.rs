//! Iterative LQR through contact: discrete-time iLQR (Li & Todorov, *Iterative linear
//! quadratic regulator design for nonlinear biological movement systems*, ICINCO 2004) with
//! the regularization, line search and convergence tests of Tassa, Erez & Todorov,
//! *Synthesis and stabilization of complex behaviors through online trajectory optimization*
//! (IROS 2012, §II), and control limits by the box QP of Tassa, Mansard & Todorov,
//! *Control-limited differential dynamic programming* (ICRA 2014).
//!
//! The dynamics are the steps of a [`Simulator`] (rigid contact, any stepper) and their
//! linearizations `x_{k+1} ⊖ x̄_{k+1} ≈ A_k (x_k ⊖ x̄_k) + B_k (u_k − ū_k)` the step
//! derivatives of [`Simulator::derivatives`], with state errors in the tangent space
//! ([`crate::tangent`]: a quaternion's error is its body-frame rotation vector).
//!
//! The cost ([`QuadraticCost`]) of controls `u_0 … u_{N−1}` and states `x_0 … x_N`, step `h`:
//!
//! ```text
//! J = Σ_k h [ eₖᵀ Q eₖ + (uₖ − u_ref)ᵀ R (uₖ − u_ref) ] + e_Nᵀ Q_f e_N,   eₖ = xₖ ⊖ x_target,
//! ```
//!
//! so that `R = I` makes the control term the effort `∫ ‖u‖² dt` of a piecewise constant
//! control. Its second derivative in the state is taken as `2Q` (Gauss–Newton: the
//! derivative of the logarithm of a quaternion error is left out; exact at zero error).
//!
//! One iteration: the backward pass (Tassa et al. 2012, eqs. 5 and 11, with
//! `Q̃_uu = Q_uu + μ I`, the Levenberg–Marquardt term) solves at every step the box QP
//! `min_δu ½ δuᵀ Q̃_uu δu + Q_uᵀ δu` over `u_min − uₖ ≤ δu ≤ u_max − uₖ` for the
//! feedforward `kₖ`, and sets the gain `Kₖ = −Q̃_uu,ff⁻¹ Q_ux,f` on the free controls (zero on
//! the clamped ones). The forward pass rolls out `ûₖ = clamp(uₖ + α kₖ + Kₖ (x̂ₖ ⊖ xₖ))` for
//! `α` from 1 down to 10⁻³ and accepts the first whose actual reduction is a positive
//! fraction of the expected `−(α Σ kᵀQ_u + ½ α² Σ kᵀQ_uu k)` (eq. 13). `μ` shrinks after a
//! success and grows after a failure (§II.F). The iteration stops when the relative decrease
//! of the cost, or the expected one, falls below the tolerance.

use std::time::Instant;

use nalgebra::{DMatrix, DVector};
use nonsmooth_core::{Model, ModelError, State};
use nonsmooth_sim::derivatives::{DerivativeMethod, DerivativeOptions};
use nonsmooth_sim::{SimError, Simulator};
use thiserror::Error;

use crate::box_qp::{solve_box_qp, BoxQpFailure};
use crate::tangent::state_difference;

/// The regularization below which a small expected reduction counts as convergence (the
/// gradient test of Tassa's `iLQG.m` asks for `μ < 10⁻⁵`: a large `μ` shrinks the step, and
/// with it the expected reduction, without the controls being optimal).
const GRADIENT_TEST_REGULARIZATION: f64 = 1e-5;

/// What can go wrong when setting up or running iLQR.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum IlqrError {
    /// An option out of its range.
    #[error("invalid iLQR option `{option}`: {reason}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// Why it is rejected.
        reason: String,
    },
    /// A vector or matrix of the wrong size.
    #[error("{what}: expected {expected} entries, got {got}")]
    DimensionMismatch {
        /// The input.
        what: String,
        /// The size the model calls for.
        expected: usize,
        /// The size given.
        got: usize,
    },
    /// An initial control with a NaN or infinite entry.
    #[error("{0} is not finite")]
    NonFinite(String),
    /// A weight or a reference that is not finite, or a negative weight.
    #[error("invalid cost: {0}")]
    InvalidCost(String),
    /// An actuator name the model does not have.
    #[error("the model has no actuator `{0}`")]
    UnknownActuator(String),
    /// No controls to optimize.
    #[error("no controls: the control map selects no actuator, or the horizon is empty")]
    NoControls,
    /// A state that is not one of the model.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The simulator failed where the iteration cannot go on without it: the rollout of the
    /// initial controls or the linearization of an accepted trajectory.
    #[error("{during}: {source}")]
    Simulation {
        /// What was being computed.
        during: &'static str,
        /// The simulator's error.
        source: Box<SimError>,
    },
}

/// The actuators iLQR commands, their bounds, and the command of the others.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlMap {
    actuators: Vec<usize>,
    held: Vec<f64>,
    lower: DVector<f64>,
    upper: DVector<f64>,
}

impl ControlMap {
    /// Every actuator of `model`, bounded by its effort limits (unbounded without).
    pub fn all(model: &Model) -> Self {
        let actuators: Vec<usize> = (0..model.actuators.len()).collect();
        Self::of(model, actuators)
    }

    /// The actuators named `names`, in that order; the others are held at command 0.
    ///
    /// # Errors
    /// [`IlqrError::UnknownActuator`] for a name the model does not have.
    pub fn named(model: &Model, names: &[&str]) -> Result<Self, IlqrError> {
        let actuators = names
            .iter()
            .map(|name| {
                model
                    .actuators
                    .iter()
                    .position(|a| a.name == *name)
                    .ok_or_else(|| IlqrError::UnknownActuator((*name).to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::of(model, actuators))
    }

    fn of(model: &Model, actuators: Vec<usize>) -> Self {
        let bound = |i: usize, lower: bool| match model.actuators[i].effort_limit {
            Some((lo, hi)) => {
                if lower {
                    lo
                } else {
                    hi
                }
            }
            None if lower => f64::NEG_INFINITY,
            None => f64::INFINITY,
        };
        let lower =
            DVector::from_iterator(actuators.len(), actuators.iter().map(|&i| bound(i, true)));
        let upper =
            DVector::from_iterator(actuators.len(), actuators.iter().map(|&i| bound(i, false)));
        Self {
            actuators,
            held: vec![0.0; model.actuators.len()],
            lower,
            upper,
        }
    }

    /// The number of controls.
    pub fn len(&self) -> usize {
        self.actuators.len()
    }

    /// Whether no actuator is controlled.
    pub fn is_empty(&self) -> bool {
        self.actuators.is_empty()
    }

    /// The model indices of the controlled actuators.
    pub fn actuators(&self) -> &[usize] {
        &self.actuators
    }

    /// Lower bounds of the controls.
    pub fn lower(&self) -> &DVector<f64> {
        &self.lower
    }

    /// Upper bounds of the controls.
    pub fn upper(&self) -> &DVector<f64> {
        &self.upper
    }

    /// `u` projected onto the bounds.
    pub fn clamp(&self, u: &DVector<f64>) -> DVector<f64> {
        DVector::from_iterator(
            u.len(),
            u.iter()
                .enumerate()
                .map(|(i, x)| x.max(self.lower[i]).min(self.upper[i])),
        )
    }

    /// The command of every actuator of the model for the controls `u` (the others held).
    pub fn command(&self, u: &DVector<f64>) -> Vec<f64> {
        let mut command = self.held.clone();
        for (k, &i) in self.actuators.iter().enumerate() {
            command[i] = u[k];
        }
        command
    }

    /// The columns of a step's `B` (one per actuator) that belong to the controls.
    fn select(&self, b: &DMatrix<f64>) -> DMatrix<f64> {
        b.select_columns(&self.actuators)
    }
}

/// The quadratic cost of the module documentation, in tangent coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct QuadraticCost {
    /// The target state `x_target`.
    pub target: State,
    /// `Q` (`2n_v × 2n_v`), per second.
    pub state_weight: DMatrix<f64>,
    /// `Q_f` (`2n_v × 2n_v`), on the last state.
    pub terminal_weight: DMatrix<f64>,
    /// `R` (`m × m`), per second.
    pub control_weight: DMatrix<f64>,
    /// `u_ref` (length `m`).
    pub control_reference: DVector<f64>,
}

/// The parts of a [`QuadraticCost`] at a trajectory.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CostTerms {
    /// `Σ h eₖᵀ Q eₖ` over `k < N`.
    pub running_state: f64,
    /// `Σ h (uₖ − u_ref)ᵀ R (uₖ − u_ref)`.
    pub control: f64,
    /// `e_Nᵀ Q_f e_N`.
    pub terminal: f64,
}

impl CostTerms {
    /// The cost `J`.
    pub fn total(&self) -> f64 {
        self.running_state + self.control + self.terminal
    }
}

impl QuadraticCost {
    /// Zero state weights and `R = I`, `u_ref = 0` for a model with `nv` velocities and `m`
    /// controls: the effort `∫ ‖u‖² dt` alone until weights are set.
    pub fn new(target: State, nv: usize, m: usize) -> Self {
        Self {
            target,
            state_weight: DMatrix::zeros(2 * nv, 2 * nv),
            terminal_weight: DMatrix::zeros(2 * nv, 2 * nv),
            control_weight: DMatrix::identity(m, m),
            control_reference: DVector::zeros(m),
        }
    }

    /// `Q = diag(weights)` (length `2n_v`).
    pub fn state_weights(mut self, weights: &[f64]) -> Self {
        self.state_weight = DMatrix::from_diagonal(&DVector::from_column_slice(weights));
        self
    }

    /// `Q_f = diag(weights)` (length `2n_v`).
    pub fn terminal_weights(mut self, weights: &[f64]) -> Self {
        self.terminal_weight = DMatrix::from_diagonal(&DVector::from_column_slice(weights));
        self
    }

    /// `R = diag(weights)` (length `m`).
    pub fn control_weights(mut self, weights: &[f64]) -> Self {
        self.control_weight = DMatrix::from_diagonal(&DVector::from_column_slice(weights));
        self
    }

    /// `u_ref` (length `m`).
    pub fn control_reference(mut self, reference: &[f64]) -> Self {
        self.control_reference = DVector::from_column_slice(reference);
        self
    }

    /// Checks the sizes against a model with `nv` velocities and `m` controls, finiteness,
    /// and that the weights are symmetric with no negative diagonal entry.
    fn check(&self, model: &Model, m: usize) -> Result<(), IlqrError> {
        let n = 2 * model.nv();
        nonsmooth_core::dynamics::check_state(model, &self.target.q, &self.target.v)?;
        for (what, w, size) in [
            ("state weight Q", &self.state_weight, n),
            ("terminal weight Q_f", &self.terminal_weight, n),
            ("control weight R", &self.control_weight, m),
        ] {
            if w.nrows() != size || w.ncols() != size {
                return Err(IlqrError::DimensionMismatch {
                    what: format!("{what} (rows and columns)"),
                    expected: size,
                    got: if w.nrows() != size {
                        w.nrows()
                    } else {
                        w.ncols()
                    },
                });
            }
            if w.iter().any(|x| !x.is_finite()) {
                return Err(IlqrError::InvalidCost(format!("{what} is not finite")));
            }
            if (w - w.transpose()).amax() > 1e-12 * w.amax().max(1.0) {
                return Err(IlqrError::InvalidCost(format!("{what} is not symmetric")));
            }
            if w.diagonal().iter().any(|&x| x < 0.0) {
                return Err(IlqrError::InvalidCost(format!(
                    "{what} has a negative diagonal entry"
                )));
            }
        }
        if self.control_reference.len() != m {
            return Err(IlqrError::DimensionMismatch {
                what: "control reference".into(),
                expected: m,
                got: self.control_reference.len(),
            });
        }
        if self.control_reference.iter().any(|x| !x.is_finite()) {
            return Err(IlqrError::InvalidCost(
                "control reference is not finite".into(),
            ));
        }
        Ok(())
    }

    /// The cost's parts along states `x_0 … x_N` and controls `u_0 … u_{N−1}`, step `h`.
    ///
    /// # Errors
    /// [`IlqrError::Model`] for a state that is not one of `model`.
    pub fn evaluate(
        &self,
        model: &Model,
        states: &[State],
        controls: &[DVector<f64>],
        h: f64,
    ) -> Result<CostTerms, IlqrError> {
        let mut terms = CostTerms::default();
        for (x, u) in states.iter().zip(controls) {
            let e = state_difference(model, x, &self.target)?;
            let du = u - &self.control_reference;
            terms.running_state += h * e.dot(&(&self.state_weight * &e));
            terms.control += h * du.dot(&(&self.control_weight * &du));
        }
        if let Some(last) = states.get(controls.len()) {
            let e = state_difference(model, last, &self.target)?;
            terms.terminal = e.dot(&(&self.terminal_weight * &e));
        }
        Ok(terms)
    }
}

/// Options of [`solve`]; build them with [`IlqrOptions::builder`] (checked) or take
/// [`IlqrOptions::default`].
#[derive(Debug, Clone, PartialEq)]
pub struct IlqrOptions {
    max_iterations: usize,
    tolerance: f64,
    initial_regularization: f64,
    min_regularization: f64,
    max_regularization: f64,
    regularization_factor: f64,
    step_sizes: Vec<f64>,
    min_reduction_ratio: f64,
    derivative_method: DerivativeMethod,
}

impl Default for IlqrOptions {
    /// The defaults of Tassa's iLQG code (`iLQG.m`, 2015): 100 iterations, relative tolerance
    /// 1e-7, `μ` from 1 within [1e-6, 1e10] by factors of 1.6, eleven step sizes
    /// `10^(−3i/10)`, any positive reduction accepted; derivatives by
    /// [`DerivativeMethod::Auto`].
    fn default() -> Self {
        Self {
            max_iterations: 100,
            tolerance: 1e-7,
            initial_regularization: 1.0,
            min_regularization: 1e-6,
            max_regularization: 1e10,
            regularization_factor: 1.6,
            step_sizes: (0..11).map(|i| 10f64.powf(-0.3 * f64::from(i))).collect(),
            min_reduction_ratio: 0.0,
            derivative_method: DerivativeMethod::Auto,
        }
    }
}

impl IlqrOptions {
    /// A builder starting from the defaults.
    pub fn builder() -> IlqrOptionsBuilder {
        IlqrOptionsBuilder {
            options: Self::default(),
        }
    }

    /// The iteration cap.
    pub fn max_iterations(&self) -> usize {
        self.max_iterations
    }

    /// The relative tolerance on the decrease of the cost.
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// The step sizes `α` of the line search, largest first.
    pub fn step_sizes(&self) -> &[f64] {
        &self.step_sizes
    }

    /// How the step derivatives are computed.
    pub fn derivative_method(&self) -> DerivativeMethod {
        self.derivative_method
    }
}

/// The builder of [`IlqrOptions`]; [`IlqrOptionsBuilder::build`] checks the values.
#[derive(Debug, Clone)]
pub struct IlqrOptionsBuilder {
    options: IlqrOptions,
}

impl IlqrOptionsBuilder {
    /// The iteration cap (≥ 1).
    pub fn max_iterations(mut self, n: usize) -> Self {
        self.options.max_iterations = n;
        self
    }

    /// The relative tolerance on the decrease of the cost (> 0).
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.options.tolerance = tolerance;
        self
    }

    /// The first `μ` and the range it is kept in after the first change:
    /// `0 ≤ min ≤ initial ≤ max`, `min > 0`.
    pub fn regularization(mut self, initial: f64, min: f64, max: f64) -> Self {
        self.options.initial_regularization = initial;
        self.options.min_regularization = min;
        self.options.max_regularization = max;
        self
    }

    /// The factor by which `μ`'s rate of change grows (> 1).
    pub fn regularization_factor(mut self, factor: f64) -> Self {
        self.options.regularization_factor = factor;
        self
    }

    /// The step sizes of the line search, tried in order (each in (0, 1]).
    pub fn step_sizes(mut self, steps: Vec<f64>) -> Self {
        self.options.step_sizes = steps;
        self
    }

    /// The smallest accepted ratio of actual to expected reduction (≥ 0).
    pub fn min_reduction_ratio(mut self, ratio: f64) -> Self {
        self.options.min_reduction_ratio = ratio;
        self
    }

    /// How the step derivatives are computed.
    pub fn derivative_method(mut self, method: DerivativeMethod) -> Self {
        self.options.derivative_method = method;
        self
    }

    /// The options, checked.
    ///
    /// # Errors
    /// [`IlqrError::InvalidOption`] naming the first option out of its range.
    pub fn build(self) -> Result<IlqrOptions, IlqrError> {
        let o = self.options;
        let invalid = |option, reason: String| Err(IlqrError::InvalidOption { option, reason });
        if o.max_iterations == 0 {
            return invalid("max_iterations", "must be at least 1".into());
        }
        if !(o.tolerance.is_finite() && o.tolerance > 0.0) {
            return invalid(
                "tolerance",
                format!("must be positive, got {}", o.tolerance),
            );
        }
        let (mu0, lo, hi) = (
            o.initial_regularization,
            o.min_regularization,
            o.max_regularization,
        );
        if !(lo.is_finite() && hi.is_finite() && mu0.is_finite())
            || !(lo > 0.0 && lo <= hi && (mu0 == 0.0 || (lo..=hi).contains(&mu0)))
        {
            return invalid(
                "regularization",
                format!("need 0 < min ≤ max and initial 0 or in [min, max], got {mu0}, {lo}, {hi}"),
            );
        }
        if !(o.regularization_factor.is_finite() && o.regularization_factor > 1.0) {
            return invalid(
                "regularization_factor",
                format!("must be above 1, got {}", o.regularization_factor),
            );
        }
        if o.step_sizes.is_empty() || o.step_sizes.iter().any(|&a| !(a > 0.0 && a <= 1.0)) {
            return invalid(
                "step_sizes",
                format!("need at least one, each in (0, 1], got {:?}", o.step_sizes),
            );
        }
        if !(o.min_reduction_ratio.is_finite() && o.min_reduction_ratio >= 0.0) {
            return invalid(
                "min_reduction_ratio",
                format!("must be ≥ 0, got {}", o.min_reduction_ratio),
            );
        }
        Ok(o)
    }
}

/// Why the iteration stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The relative decrease of the cost (achieved or expected) fell below the tolerance.
    Converged,
    /// The iteration cap was reached.
    MaxIterations,
    /// No step was accepted with `μ` at its maximum (the last accepted trajectory is
    /// returned).
    RegularizationLimit,
}

impl StopReason {
    /// `"converged"`, `"max-iterations"` or `"regularization-limit"`.
    pub fn label(self) -> &'static str {
        match self {
            StopReason::Converged => "converged",
            StopReason::MaxIterations => "max-iterations",
            StopReason::RegularizationLimit => "regularization-limit",
        }
    }
}

/// How many step linearizations each derivative method gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DerivativeCounts {
    /// By implicit differentiation of the step problem.
    pub implicit: usize,
    /// By finite differences of whole steps.
    pub finite_difference: usize,
}

/// The result of [`solve`].
#[derive(Debug, Clone)]
pub struct IlqrResult {
    /// `x_0 … x_N` of the last accepted controls.
    pub states: Vec<State>,
    /// `u_0 … u_{N−1}` (the controls of the [`ControlMap`]).
    pub controls: Vec<DVector<f64>>,
    /// The full actuator commands of `controls` (for [`Simulator::step`]).
    pub commands: Vec<Vec<f64>>,
    /// The feedback gains `K_k` (`m × 2n_v`, on tangent state errors) of the last backward
    /// pass, or empty when none finished.
    pub gains: Vec<DMatrix<f64>>,
    /// The cost of the initial controls, then after every accepted iteration.
    pub cost_history: Vec<f64>,
    /// The parts of the final cost.
    pub cost: CostTerms,
    /// Iterations run (backward pass and line search, accepted or not).
    pub iterations: usize,
    /// Why the iteration stopped.
    pub stop: StopReason,
    /// Wall-clock time of [`solve`] (s).
    pub wall_time_s: f64,
    /// Of which in step derivatives (s).
    pub derivative_time_s: f64,
    /// Step derivatives by method.
    pub derivatives: DerivativeCounts,
    /// Steps simulated in rollouts (the derivatives' own steps not counted).
    pub rollout_steps: usize,
    /// The final `μ`.
    pub regularization: f64,
}

impl IlqrResult {
    /// Whether the iteration converged.
    pub fn converged(&self) -> bool {
        self.stop == StopReason::Converged
    }
}

/// The linearization of one step: `B` restricted to the controls.
struct StepLinearization {
    a: DMatrix<f64>,
    b: DMatrix<f64>,
}

/// The output of one backward pass.
struct BackwardPass {
    feedforward: Vec<DVector<f64>>,
    gains: Vec<DMatrix<f64>>,
    /// `(Σ kᵀ Q_u, ½ Σ kᵀ Q_uu k)`: the expected change is `α d₁ + α² d₂`.
    expected: (f64, f64),
}

/// The regularization `μ` and its rate `Δ` (Tassa et al. 2012, §II.F).
struct Regularization {
    mu: f64,
    delta: f64,
    min: f64,
    max: f64,
    factor: f64,
}

impl Regularization {
    fn increase(&mut self) {
        self.delta = (self.delta * self.factor).max(self.factor);
        self.mu = (self.mu * self.delta).max(self.min);
    }

    fn decrease(&mut self) {
        self.delta = (self.delta / self.factor).min(1.0 / self.factor);
        self.mu = if self.mu * self.delta > self.min {
            self.mu * self.delta
        } else {
            0.0
        };
    }

    fn exhausted(&self) -> bool {
        self.mu > self.max
    }
}

/// Runs iLQR on `sim` (its model, stepper and step `h`) from `initial`, starting from the
/// controls `initial_controls` (one per step: the horizon is their number), for `cost`
/// over the actuators of `controls` (see the module documentation). The simulator's state
/// is changed.
///
/// # Errors
/// [`IlqrError::NoControls`], [`IlqrError::DimensionMismatch`], [`IlqrError::NonFinite`],
/// [`IlqrError::InvalidCost`] or [`IlqrError::Model`] for inputs that do not fit the model; [`IlqrError::Simulation`]
/// when the initial rollout or the linearization of an accepted trajectory fails. A
/// rollout that fails inside the line search rejects its step size.
pub fn solve(
    sim: &mut Simulator<'_>,
    initial: &State,
    cost: &QuadraticCost,
    controls: &ControlMap,
    initial_controls: &[DVector<f64>],
    options: &IlqrOptions,
) -> Result<IlqrResult, IlqrError> {
    let start = Instant::now();
    let model = sim.model().clone();
    let m = controls.len();
    if m == 0 || initial_controls.is_empty() {
        return Err(IlqrError::NoControls);
    }
    if controls.held.len() != model.actuators.len()
        || controls
            .actuators
            .iter()
            .any(|&i| i >= model.actuators.len())
    {
        return Err(IlqrError::DimensionMismatch {
            what: "actuators of the control map".into(),
            expected: model.actuators.len(),
            got: controls.held.len(),
        });
    }
    for (k, u) in initial_controls.iter().enumerate() {
        if u.len() != m {
            return Err(IlqrError::DimensionMismatch {
                what: format!("initial control {k}"),
                expected: m,
                got: u.len(),
            });
        }
        if u.iter().any(|x| !x.is_finite()) {
            return Err(IlqrError::NonFinite(format!("initial control {k}")));
        }
    }
    cost.check(&model, m)?;
    nonsmooth_core::dynamics::check_state(&model, &initial.q, &initial.v)?;
    let h = sim.dt();
    let derivative_options = DerivativeOptions::default().method(options.derivative_method);

    let mut counts = DerivativeCounts::default();
    let mut derivative_time = 0.0;
    let mut rollout_steps = 0;

    let mut u: Vec<DVector<f64>> = initial_controls.iter().map(|u| controls.clamp(u)).collect();
    let mut x = rollout(sim, initial, &u, controls).map_err(|source| IlqrError::Simulation {
        during: "rollout of the initial controls",
        source: Box::new(source),
    })?;
    rollout_steps += u.len();
    let mut terms = cost.evaluate(&model, &x, &u, h)?;
    let mut j = terms.total();
    let mut history = vec![j];
    let mut linearization = linearize(
        sim,
        &x,
        &u,
        controls,
        &derivative_options,
        &mut counts,
        &mut derivative_time,
    )?;
    let mut reg = Regularization {
        mu: options.initial_regularization,
        delta: 1.0,
        min: options.min_regularization,
        max: options.max_regularization,
        factor: options.regularization_factor,
    };
    let mut gains = Vec::new();
    let mut previous_feedforward: Option<Vec<DVector<f64>>> = None;
    let mut iterations = 0;
    let mut stop = StopReason::MaxIterations;

    'iterations: while iterations < options.max_iterations {
        iterations += 1;
        // Backward pass, μ raised until every Q̃_uu on the free controls is positive definite.
        let pass = loop {
            match backward_pass(
                &model,
                &x,
                &u,
                &linearization,
                cost,
                controls,
                h,
                reg.mu,
                previous_feedforward.as_deref(),
            )? {
                Some(pass) => break pass,
                None => {
                    reg.increase();
                    if reg.exhausted() {
                        stop = StopReason::RegularizationLimit;
                        break 'iterations;
                    }
                }
            }
        };
        let expected_full = -(pass.expected.0 + pass.expected.1);
        if reg.mu < GRADIENT_TEST_REGULARIZATION
            && expected_full.abs() <= options.tolerance * j.abs()
        {
            gains = pass.gains;
            stop = StopReason::Converged;
            break;
        }
        // Forward pass with a line search on the feedforward.
        let mut accepted = None;
        for &alpha in &options.step_sizes {
            let Ok((x_new, u_new)) = forward_pass(sim, &model, &x, &u, &pass, alpha, controls)
            else {
                continue;
            };
            rollout_steps += u.len();
            let new_terms = cost.evaluate(&model, &x_new, &u_new, h)?;
            let j_new = new_terms.total();
            let expected = -(alpha * pass.expected.0 + alpha * alpha * pass.expected.1);
            let actual = j - j_new;
            let ratio = if expected > 0.0 {
                actual / expected
            } else {
                actual.signum()
            };
            if j_new.is_finite() && actual > 0.0 && ratio > options.min_reduction_ratio {
                accepted = Some((x_new, u_new, new_terms));
                break;
            }
        }
        gains = pass.gains;
        match accepted {
            Some((x_new, u_new, new_terms)) => {
                let j_new = new_terms.total();
                let relative_decrease = (j - j_new) / j.abs().max(f64::MIN_POSITIVE);
                x = x_new;
                u = u_new;
                terms = new_terms;
                j = j_new;
                history.push(j);
                reg.decrease();
                previous_feedforward = Some(pass.feedforward);
                if relative_decrease < options.tolerance {
                    stop = StopReason::Converged;
                    break;
                }
                linearization = linearize(
                    sim,
                    &x,
                    &u,
                    controls,
                    &derivative_options,
                    &mut counts,
                    &mut derivative_time,
                )?;
            }
            None => {
                reg.increase();
                if reg.exhausted() {
                    stop = StopReason::RegularizationLimit;
                    break;
                }
            }
        }
    }
    let commands = u.iter().map(|u| controls.command(u)).collect();
    Ok(IlqrResult {
        states: x,
        controls: u,
        commands,
        gains,
        cost_history: history,
        cost: terms,
        iterations,
        stop,
        wall_time_s: start.elapsed().as_secs_f64(),
        derivative_time_s: derivative_time,
        derivatives: counts,
        rollout_steps,
        regularization: reg.mu,
    })
}

/// The states of `controls` applied from `initial`.
fn rollout(
    sim: &mut Simulator<'_>,
    initial: &State,
    u: &[DVector<f64>],
    controls: &ControlMap,
) -> Result<Vec<State>, SimError> {
    let commands: Vec<Vec<f64>> = u.iter().map(|u| controls.command(u)).collect();
    crate::rollout::rollout(sim, initial, &commands)
}

/// The step derivatives along a trajectory.
fn linearize(
    sim: &mut Simulator<'_>,
    x: &[State],
    u: &[DVector<f64>],
    controls: &ControlMap,
    options: &DerivativeOptions,
    counts: &mut DerivativeCounts,
    time: &mut f64,
) -> Result<Vec<StepLinearization>, IlqrError> {
    let start = Instant::now();
    let mut out = Vec::with_capacity(u.len());
    for (xk, uk) in x.iter().zip(u) {
        let fail = |source| IlqrError::Simulation {
            during: "derivatives of a step of the trajectory",
            source: Box::new(source),
        };
        sim.set_state(xk.clone()).map_err(fail)?;
        let d = sim
            .derivatives(&controls.command(uk), options)
            .map_err(fail)?;
        match d.method {
            DerivativeMethod::FiniteDifference => counts.finite_difference += 1,
            _ => counts.implicit += 1,
        }
        out.push(StepLinearization {
            b: controls.select(&d.b),
            a: d.a,
        });
    }
    *time += start.elapsed().as_secs_f64();
    Ok(out)
}

/// One backward pass at regularization `mu`; `None` when a `Q̃_uu` is not positive definite
/// on its free controls.
#[allow(clippy::too_many_arguments)]
fn backward_pass(
    model: &Model,
    x: &[State],
    u: &[DVector<f64>],
    lin: &[StepLinearization],
    cost: &QuadraticCost,
    controls: &ControlMap,
    h: f64,
    mu: f64,
    warm: Option<&[DVector<f64>]>,
) -> Result<Option<BackwardPass>, IlqrError> {
    let n_steps = u.len();
    let m = controls.len();
    let n = 2 * model.nv();
    let e_last = state_difference(model, &x[n_steps], &cost.target)?;
    let mut v_x = 2.0 * &cost.terminal_weight * e_last;
    let mut v_xx = 2.0 * &cost.terminal_weight;
    let mut feedforward = vec![DVector::zeros(m); n_steps];
    let mut gains = vec![DMatrix::zeros(m, n); n_steps];
    let mut expected = (0.0, 0.0);
    let l_xx = 2.0 * h * &cost.state_weight;
    let l_uu = 2.0 * h * &cost.control_weight;
    for k in (0..n_steps).rev() {
        let StepLinearization { a, b } = &lin[k];
        let e = state_difference(model, &x[k], &cost.target)?;
        let l_x = &l_xx * e;
        let l_u = &l_uu * (&u[k] - &cost.control_reference);
        // Tassa et al. 2012, eq. 5 (the second derivatives of the dynamics left out: iLQR).
        let at_vxx = a.transpose() * &v_xx;
        let bt_vxx = b.transpose() * &v_xx;
        let q_x = l_x + a.transpose() * &v_x;
        let q_u = l_u + b.transpose() * &v_x;
        let q_xx = &l_xx + &at_vxx * a;
        let q_uu = &l_uu + &bt_vxx * b;
        let q_ux = &bt_vxx * a;
        let mut q_uu_reg = q_uu.clone();
        for i in 0..m {
            q_uu_reg[(i, i)] += mu;
        }
        let lower = controls.lower() - &u[k];
        let upper = controls.upper() - &u[k];
        let start = warm
            .and_then(|w| w.get(k))
            .cloned()
            .unwrap_or_else(|| DVector::zeros(m));
        let qp = match solve_box_qp(&q_uu_reg, &q_u, &lower, &upper, &start) {
            Ok(qp) => qp,
            Err(BoxQpFailure::NotPositiveDefinite) => return Ok(None),
        };
        let kk = qp.x;
        let mut gain = DMatrix::zeros(m, n);
        if let Some(chol) = &qp.free_factor {
            let free: Vec<usize> = (0..m).filter(|&i| qp.free[i]).collect();
            let gain_free = -chol.solve(&q_ux.select_rows(&free));
            for (r, &i) in free.iter().enumerate() {
                gain.row_mut(i).copy_from(&gain_free.row(r));
            }
        }
        // Tassa et al. 2012, eq. 11 (with the unregularized Q_uu).
        expected.0 += kk.dot(&q_u);
        expected.1 += 0.5 * kk.dot(&(&q_uu * &kk));
        let gt_quu = gain.transpose() * &q_uu;
        v_x = q_x + &gt_quu * &kk + gain.transpose() * &q_u + q_ux.transpose() * &kk;
        v_xx = q_xx + &gt_quu * &gain + gain.transpose() * &q_ux + q_ux.transpose() * &gain;
        v_xx = 0.5 * (&v_xx + v_xx.transpose());
        feedforward[k] = kk;
        gains[k] = gain;
    }
    Ok(Some(BackwardPass {
        feedforward,
        gains,
        expected,
    }))
}

/// The rollout of `ûₖ = clamp(uₖ + α kₖ + Kₖ (x̂ₖ ⊖ xₖ))`.
fn forward_pass(
    sim: &mut Simulator<'_>,
    model: &Model,
    x: &[State],
    u: &[DVector<f64>],
    pass: &BackwardPass,
    alpha: f64,
    controls: &ControlMap,
) -> Result<(Vec<State>, Vec<DVector<f64>>), IlqrError> {
    let fail = |source| IlqrError::Simulation {
        during: "forward pass",
        source: Box::new(source),
    };
    sim.set_state(x[0].clone()).map_err(fail)?;
    let mut states = Vec::with_capacity(x.len());
    let mut new_controls = Vec::with_capacity(u.len());
    states.push(x[0].clone());
    for k in 0..u.len() {
        let dx = state_difference(model, sim.state(), &x[k])?;
        let uk = controls.clamp(&(&u[k] + alpha * &pass.feedforward[k] + &pass.gains[k] * dx));
        sim.step(&controls.command(&uk)).map_err(fail)?;
        states.push(sim.state().clone());
        new_controls.push(uk);
    }
    Ok((states, new_controls))
}
