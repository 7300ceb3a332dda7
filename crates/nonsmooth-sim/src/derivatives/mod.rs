//! Derivatives of one time step: `A = ∂(q₁, v₁)/∂(q₀, v₀)`, `B = ∂(q₁, v₁)/∂u` and
//! `∂(q₁, v₁)/∂θ` for named model parameters `θ`, with configurations in the tangent space
//! (a floating joint's orientation as its body-frame rotation vector, as MuJoCo's
//! `mjd_transitionFD`), and the mode of each contact of the step.
//!
//! # Implicit differentiation (the default where a scheme has a step problem)
//! A step of `drumwright` is the solution `v₁` of its contact problem
//! `F(v₁; d) = A (v₁ − v*) − Jᵀ γ(v₁) = 0` ([`StepProblem`]; Alart–Curnier's Coulomb map
//! for friction, `nonsmooth_solvers::regularized_contact`), whose data `d` (mass matrix,
//! free velocity, Jacobian rows, bias velocities, regularization, friction coefficients)
//! are smooth functions of `(q₀, v₀, u, θ)` while the contact set keeps its structure. By
//! the implicit function theorem, where `F` is differentiable in `v₁`,
//!
//! ```text
//! ∂v₁/∂x = −H⁻¹ ∂F/∂x |_{v₁ fixed},   H = ∂F/∂v₁ = A + Jᵀ G J,
//! ```
//!
//! `H` the Newton matrix, factored once at the solution and reused for every direction
//! (Dojo, Howell et al. 2022, §IV, with the interior-point system replaced by this
//! Jacobian). The data `d` (not the solution) are differenced: along each direction `x`
//! the problem is assembled at `x + ε` (no solve) and `∂F/∂x` is the linearization of `F`
//! at the fixed `v₁` along `(d(x + ε) − d(x))/ε`, the impulse maps `Γ` linearized at the
//! solution (`Sensitivity::equations_wrt_data` of `nonsmooth_solvers`; evaluating `F` itself
//! at the moved data would cross the kinks of `Γ`, whose width is `R γ`, tiny for rigid
//! rows). The contact problem — where the nonsmoothness lives — is differentiated exactly;
//! `q₁ = q₀ ⊕ h v₁` is differentiated exactly (dual numbers). The moved problems keep the
//! step's contacts (detected within margins widened by [`INCLUSION_WIDENING`]), so that a
//! contact resting at zero gap stays in.
//!
//! Velocities and commands move a step problem only through its free velocity
//! `v* = A⁻¹ p`, `p = M̃ v₀ + h f̃(q₀, v₀, u)` (the mass matrix and forces with the servos
//! implicit), where the other data read the configuration alone: along them
//! `∂F/∂x = −∂p/∂x`, a difference of `p` (one bias-force evaluation) instead of an assembly,
//! as MuJoCo's finite differences skip the position stage for them. One problem assembled
//! along a combination of all of them checks the premise; where it fails (a Hertz law
//! reading the normal velocity, bilateral rows' `Ġv`) every direction is assembled. Cost:
//! one solve of the step's problem, `n_v + n_θ + 1` assemblies (`2n_v + n_u + n_θ` where
//! the premise fails) and one solve with the factored `H` per direction.
//!
//! # Modes and switches
//! Each constraint's mode at the solution ([`ConstraintMode`]: separated, sticking, sliding)
//! is reported. Where a constraint sits exactly on a switch (a contact about to separate, a
//! friction force exactly at its bound), the derivative is that of the mode reported, one
//! of the one-sided derivatives. A direction along which the contact set itself changes
//! within `ε` ahead (a joint limit entering its window) is differentiated backward, and
//! named in [`StepDerivatives::one_sided`].
//!
//! # Finite differences (other schemes)
//! Schemes without a step problem (`anitescu-potra`, `qp-max-dissipation`, the penalty and
//! ODE schemes, `drumwright` under non-default couplings) are differentiated by central
//! differences of whole steps, `2 (2n_v + n_u + n_θ)` steps, as MuJoCo's
//! `mjd_transitionFD`; [`StepDerivatives::method`] says which method gave the result.

mod finite_difference;
mod implicit;
mod tangent;

use std::borrow::Cow;

use nalgebra::{DMatrix, DVector};
use nonsmooth_core::{Model, State};
pub use nonsmooth_solvers::regularized_contact::ConstraintMode;
use nonsmooth_solvers::regularized_contact::RegularizedContactProblem;

use crate::actuation::Actuation;
use crate::error::SimError;
use crate::stepper::Stepper;

/// The contact problem of one step, assembled and not solved: the equations whose solution
/// is the step's velocity (see the module documentation).
#[derive(Debug)]
pub struct StepProblem {
    /// The problem (`F(v₁) = A (v₁ − v*) − Jᵀ γ(v₁) = 0`).
    pub problem: RegularizedContactProblem,
    /// What each constraint of `problem` is, in constraint order.
    pub constraints: Vec<ConstraintSource>,
}

/// What a constraint of a step problem stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConstraintSource {
    /// A contact between two colliders (model indices) at a feature of the pair.
    Contact {
        /// First collider.
        collider_a: usize,
        /// Second collider.
        collider_b: usize,
        /// The feature of the pair (which point of a manifold).
        feature: usize,
    },
    /// Another unilateral row (a joint limit), with its name where it has one.
    Row {
        /// The row's name.
        name: Option<String>,
    },
}

/// A model parameter to differentiate the step with respect to.
#[derive(Debug, Clone, PartialEq)]
pub enum Parameter {
    /// The friction coefficient of a contact material (every pair override of that name
    /// too).
    Friction {
        /// The material's name.
        material: String,
    },
    /// The mass of a body (its inertia tensor held fixed).
    Mass {
        /// The body's name.
        body: String,
    },
}

impl Parameter {
    /// Parses `friction:<material>` or `mass:<body>`.
    ///
    /// # Errors
    /// [`SimError::InvalidInput`] naming the text for any other form.
    pub fn parse(text: &str) -> Result<Self, SimError> {
        match text.split_once(':') {
            Some(("friction", m)) if !m.is_empty() => Ok(Parameter::Friction {
                material: m.to_string(),
            }),
            Some(("mass", b)) if !b.is_empty() => Ok(Parameter::Mass {
                body: b.to_string(),
            }),
            _ => Err(SimError::InvalidInput {
                argument: "parameter",
                reason: format!(
                    "`{text}` is no parameter: write `friction:<material>` or `mass:<body>`"
                ),
            }),
        }
    }

    /// The parameter as [`Parameter::parse`] reads it.
    pub fn label(&self) -> String {
        match self {
            Parameter::Friction { material } => format!("friction:{material}"),
            Parameter::Mass { body } => format!("mass:{body}"),
        }
    }

    /// The parameter's value in `model`.
    ///
    /// # Errors
    /// [`SimError::InvalidInput`] when the model has no such material or body.
    pub fn value(&self, model: &Model) -> Result<f64, SimError> {
        match self {
            Parameter::Friction { material } => model
                .materials
                .iter()
                .chain(model.pair_overrides.iter().map(|p| &p.material))
                .find(|m| &m.name == material)
                .map(|m| m.friction),
            Parameter::Mass { body } => model
                .bodies
                .iter()
                .find(|b| &b.name == body)
                .map(|b| b.mass),
        }
        .ok_or_else(|| SimError::InvalidInput {
            argument: "parameter",
            reason: format!("the model has no {}", self.what()),
        })
    }

    fn what(&self) -> String {
        match self {
            Parameter::Friction { material } => format!("material `{material}`"),
            Parameter::Mass { body } => format!("body `{body}`"),
        }
    }

    /// A copy of `model` with the parameter set to `value` (unchecked: a model for a
    /// difference step or an estimate).
    pub fn with_value(&self, model: &Model, value: f64) -> Model {
        let mut m = model.clone();
        match self {
            Parameter::Friction { material } => {
                for mat in m
                    .materials
                    .iter_mut()
                    .chain(m.pair_overrides.iter_mut().map(|p| &mut p.material))
                    .filter(|x| &x.name == material)
                {
                    mat.friction = value;
                }
            }
            Parameter::Mass { body } => {
                for b in m.bodies.iter_mut().filter(|b| &b.name == body) {
                    b.mass = value;
                }
            }
        }
        m
    }
}

/// How the derivatives are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DerivativeMethod {
    /// Implicit differentiation where the stepper has a step problem, else finite
    /// differences (the default).
    #[default]
    Auto,
    /// Implicit differentiation of the step problem; an error for a stepper without one.
    Implicit,
    /// Central differences of whole steps.
    FiniteDifference,
}

impl DerivativeMethod {
    /// The method's name: `"auto"`, `"implicit"` or `"finite-difference"`.
    pub fn label(self) -> &'static str {
        match self {
            DerivativeMethod::Auto => "auto",
            DerivativeMethod::Implicit => "implicit",
            DerivativeMethod::FiniteDifference => "finite-difference",
        }
    }
}

/// Options of [`step_derivatives`] (builder methods; checked by [`step_derivatives`]).
#[derive(Debug, Clone, Default)]
pub struct DerivativeOptions {
    /// The method (default [`DerivativeMethod::Auto`]).
    pub method: DerivativeMethod,
    /// The model parameters to differentiate with respect to (default none).
    pub parameters: Vec<Parameter>,
}

impl DerivativeOptions {
    /// Sets the method.
    pub fn method(mut self, method: DerivativeMethod) -> Self {
        self.method = method;
        self
    }

    /// Adds a parameter.
    pub fn parameter(mut self, parameter: Parameter) -> Self {
        self.parameters.push(parameter);
        self
    }
}

/// One input coordinate of the step that a column of the derivatives belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The tangent coordinate `k` of the configuration (velocity-space index).
    Position(usize),
    /// The velocity coordinate `k`.
    Velocity(usize),
    /// The command of actuator `k`.
    Command(usize),
    /// The requested parameter `k`.
    Parameter(usize),
}

impl Direction {
    /// The direction as text: `"position 3"`, `"velocity 0"`, `"command 1"`,
    /// `"parameter 0"`.
    pub fn label(self) -> String {
        match self {
            Direction::Position(k) => format!("position {k}"),
            Direction::Velocity(k) => format!("velocity {k}"),
            Direction::Command(k) => format!("command {k}"),
            Direction::Parameter(k) => format!("parameter {k}"),
        }
    }
}

/// A constraint of the step and its mode at the solution.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstraintState {
    /// What the constraint is.
    pub source: ConstraintSource,
    /// Its mode.
    pub mode: ConstraintMode,
}

/// The derivatives of one step (see the module documentation). Rows: the tangent of `q₁`
/// (`n_v` rows), then `v₁` (`n_v` rows).
#[derive(Debug, Clone)]
pub struct StepDerivatives {
    /// `∂(q₁, v₁)/∂(q₀, v₀)`, `2n_v × 2n_v`, configurations in the tangent space.
    pub a: DMatrix<f64>,
    /// `∂(q₁, v₁)/∂u`, `2n_v × n_u` (one column per actuator).
    pub b: DMatrix<f64>,
    /// `∂(q₁, v₁)/∂θ`, `2n_v × n_θ` (one column per requested parameter).
    pub c: DMatrix<f64>,
    /// The parameters of the columns of `c`.
    pub parameters: Vec<Parameter>,
    /// The state the step reaches (the point of the derivatives).
    pub next: State,
    /// The step's constraints and their modes (implicit differentiation; empty for finite
    /// differences).
    pub constraints: Vec<ConstraintState>,
    /// The method that gave the derivatives: [`DerivativeMethod::Implicit`] or
    /// [`DerivativeMethod::FiniteDifference`].
    pub method: DerivativeMethod,
    /// Directions differentiated backward (the contact set changes ahead within the
    /// difference step).
    pub one_sided: Vec<Direction>,
}

/// The point of the derivatives and everything that can be perturbed.
#[derive(Debug, Clone)]
pub(super) struct Inputs<'m> {
    pub(super) model: Cow<'m, Model>,
    pub(super) state: State,
    pub(super) u: Vec<f64>,
    pub(super) h: f64,
}

/// How much wider than a step's margins (m) the contacts and joint limits of a perturbed
/// problem are detected, so that a contact of the step resting at zero gap stays in the
/// problem of a state a difference step away (the contacts kept are the step's).
pub const INCLUSION_WIDENING: f64 = 1e-5;

/// Relative size of the difference steps of the problem's data (forward differences:
/// truncation `O(ε)`, rounding `O(10⁻¹⁶/ε)`; the data are assembled, not solved).
pub(super) const DATA_DIFFERENCE_STEP: f64 = 1e-7;

/// Relative size of the difference steps of whole steps: the solver's tolerance
/// (relative 1e-8) divided by it bounds their accuracy.
pub(super) const STEP_DIFFERENCE_STEP: f64 = 1e-6;

impl<'m> Inputs<'m> {
    /// The actuation of the command (no actuators: none).
    pub(super) fn actuation(&self) -> Result<Actuation, SimError> {
        if self.model.actuators.is_empty() {
            Ok(Actuation::none())
        } else {
            Actuation::from_command(&self.model, &self.state, &self.u)
        }
    }

    /// The difference step of `direction`.
    /// The difference step of `direction`: `base` relative to the coordinate (at least
    /// `base` itself; a parameter at least `10⁻³ base`).
    fn step_size(
        &self,
        direction: Direction,
        parameters: &[Parameter],
        base: f64,
    ) -> Result<f64, SimError> {
        let scale = |x: f64| base * x.abs().max(1.0);
        Ok(match direction {
            Direction::Position(_) => base,
            Direction::Velocity(k) => scale(self.state.v[k]),
            Direction::Command(k) => scale(self.u[k]),
            Direction::Parameter(k) => base * parameters[k].value(&self.model)?.abs().max(1e-3),
        })
    }

    /// The inputs moved by `s` along `direction`.
    fn moved(
        &self,
        direction: Direction,
        s: f64,
        parameters: &[Parameter],
    ) -> Result<Inputs<'m>, SimError> {
        let mut out = self.clone();
        match direction {
            Direction::Position(k) => {
                let mut delta = DVector::zeros(self.model.nv());
                delta[k] = s;
                out.state.q = tangent::retract(&self.model, &self.state.q, &delta);
            }
            Direction::Velocity(k) => out.state.v[k] += s,
            Direction::Command(k) => out.u[k] += s,
            Direction::Parameter(k) => {
                let p = &parameters[k];
                let value = p.value(&self.model)? + s;
                out.model = Cow::Owned(p.with_value(&self.model, value));
            }
        }
        Ok(out)
    }

    /// Whether a move of `s` along `direction` leaves the model valid (a friction
    /// coefficient or a mass must stay positive).
    fn admits(&self, direction: Direction, s: f64, parameters: &[Parameter]) -> bool {
        match direction {
            Direction::Parameter(k) => parameters[k]
                .value(&self.model)
                .is_ok_and(|x| x + s > 0.0 || (x + s == 0.0 && x == 0.0)),
            _ => true,
        }
    }
}

/// The tangent (velocity-space) vector of a small change `dq` of configuration at `q`
/// (`N(q)⁺ dq`, joint by joint: a floating joint's quaternion change as its body-frame
/// rotation vector), the coordinates the rows and columns of [`StepDerivatives`] use.
pub fn tangent_of_change(model: &Model, q: &DVector<f64>, dq: &DVector<f64>) -> DVector<f64> {
    tangent::to_tangent(model, q, dq)
}

/// Every direction of a step's derivatives, in column order: positions, velocities,
/// commands, parameters.
fn directions(nv: usize, nu: usize, np: usize) -> Vec<Direction> {
    (0..nv)
        .map(Direction::Position)
        .chain((0..nv).map(Direction::Velocity))
        .chain((0..nu).map(Direction::Command))
        .chain((0..np).map(Direction::Parameter))
        .collect()
}

/// The derivatives of the step of `stepper` from `state` with command `u` (one entry per
/// actuator; empty: the zero command) and step `h` (see the module documentation). The
/// stepper's own state (warm starts) is used as a step would use it; the simulation's
/// state is not changed.
///
/// # Errors
/// [`SimError::InvalidInput`] for a malformed `u` or an unknown parameter,
/// [`SimError::InvalidOption`] for [`DerivativeMethod::Implicit`] with a stepper that has
/// no step problem, and the step's own errors.
pub fn step_derivatives(
    stepper: &mut dyn Stepper,
    model: &Model,
    state: &State,
    u: &[f64],
    h: f64,
    options: &DerivativeOptions,
) -> Result<StepDerivatives, SimError> {
    crate::pipeline::check_step_size(h)?;
    let nu = model.actuators.len();
    let u = if u.is_empty() {
        vec![0.0; nu]
    } else {
        u.to_vec()
    };
    let x = Inputs {
        model: Cow::Borrowed(model),
        state: state.clone(),
        u,
        h,
    };
    x.actuation()?;
    for p in &options.parameters {
        p.value(model)?;
    }
    let dirs = directions(model.nv(), nu, options.parameters.len());
    let implicit = match options.method {
        DerivativeMethod::FiniteDifference => None,
        DerivativeMethod::Auto | DerivativeMethod::Implicit => {
            implicit::derivatives(stepper, &x, &dirs, &options.parameters)?
        }
    };
    let columns = match implicit {
        Some(columns) => columns,
        None if options.method == DerivativeMethod::Implicit => {
            return Err(SimError::InvalidOption {
                option: "method",
                reason: format!(
                    "the stepper `{}` has no step problem to differentiate implicitly \
                     (under these options); use finite differences",
                    stepper.name()
                ),
            })
        }
        None => finite_difference::derivatives(stepper, &x, &dirs, &options.parameters)?,
    };
    Ok(columns.into_derivatives(model.nv(), nu, options.parameters.clone()))
}

/// The derivatives as columns, one per direction, before they are split into `A`, `B`, `C`.
pub(super) struct Columns {
    /// `2n_v × (number of directions)`.
    pub(super) jacobian: DMatrix<f64>,
    pub(super) next: State,
    pub(super) constraints: Vec<ConstraintState>,
    pub(super) method: DerivativeMethod,
    pub(super) one_sided: Vec<Direction>,
}

impl Columns {
    fn into_derivatives(self, nv: usize, nu: usize, parameters: Vec<Parameter>) -> StepDerivatives {
        let j = &self.jacobian;
        StepDerivatives {
            a: j.columns(0, 2 * nv).into_owned(),
            b: j.columns(2 * nv, nu).into_owned(),
            c: j.columns(2 * nv + nu, parameters.len()).into_owned(),
            parameters,
            next: self.next,
            constraints: self.constraints,
            method: self.method,
            one_sided: self.one_sided,
        }
    }
}
