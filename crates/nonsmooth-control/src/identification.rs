//! Identification of model parameters (friction coefficients, masses) from a recorded
//! trajectory by damped Gauss–Newton, i.e. Levenberg–Marquardt (Marquardt, *An algorithm
//! for least-squares estimation of nonlinear parameters*, SIAM J. Appl. Math. 1963; Nocedal &
//! Wright, *Numerical Optimization*, §10.3).
//!
//! The recording is `x̃_1 … x̃_N`, reached from `x_0` under the commands `u_0 … u_{N−1}`. For
//! parameters `θ` the simulator reaches `x_1(θ) … x_N(θ)` from the same `x_0` under the same
//! commands, and the residuals are the tangent differences (see [`crate::tangent`])
//!
//! ```text
//! r_k(θ) = x_k(θ) ⊖ x̃_k,   f(θ) = ½ Σ_k ‖r_k(θ)‖².
//! ```
//!
//! Their Jacobians `S_k = ∂x_k/∂θ` are propagated along the simulation by the step
//! derivatives (forward sensitivities), `S_0 = 0`, `S_{k+1} = A_k S_k + C_k`, with
//! `A_k = ∂x_{k+1}/∂x_k` and `C_k = ∂x_{k+1}/∂θ` from [`Simulator::derivatives`]. A step
//! solves `(JᵀJ + λ diag(JᵀJ)) δ = −Jᵀr` (Marquardt's scaling), is accepted when it lowers
//! `f` (then `λ` shrinks) and rejected otherwise (`λ` grows); the parameters are kept
//! above a positive floor (a friction coefficient or a mass is positive).

use std::time::Instant;

use nalgebra::{DMatrix, DVector};
use nonsmooth_core::{Model, ModelError, State};
use nonsmooth_sim::derivatives::{DerivativeMethod, DerivativeOptions, Parameter};
use nonsmooth_sim::{SimError, Simulator};
use thiserror::Error;

use crate::tangent::state_difference;

/// What can go wrong when identifying parameters.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum IdentificationError {
    /// An option out of its range.
    #[error("invalid identification option `{option}`: {reason}")]
    InvalidOption {
        /// The option.
        option: &'static str,
        /// Why it is rejected.
        reason: String,
    },
    /// The inputs do not fit together (empty recording, guesses and parameters of different
    /// lengths, a non-positive or non-finite guess).
    #[error("invalid identification input: {0}")]
    InvalidInput(String),
    /// A recorded state that is not one of the model.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The simulator failed (an unknown stepper or parameter, a failed step).
    #[error("{during}: {source}")]
    Simulation {
        /// What was being computed.
        during: &'static str,
        /// The simulator's error.
        source: Box<SimError>,
    },
}

/// A recorded trajectory: the initial state, the command of every step and the states
/// reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// `x_0`.
    pub initial: State,
    /// `u_0 … u_{N−1}` (one entry per actuator; empty: no command).
    pub commands: Vec<Vec<f64>>,
    /// `x̃_1 … x̃_N`.
    pub states: Vec<State>,
}

impl Recording {
    /// The recording of `sim` stepped from `initial` with `commands`.
    ///
    /// # Errors
    /// The simulator's (a bad state or command, a failed step).
    pub fn simulate(
        sim: &mut Simulator<'_>,
        initial: &State,
        commands: Vec<Vec<f64>>,
    ) -> Result<Self, SimError> {
        let mut states = crate::rollout::rollout(sim, initial, &commands)?;
        states.remove(0);
        Ok(Self {
            initial: initial.clone(),
            commands,
            states,
        })
    }
}

/// Options of [`identify`]; build them with [`IdentificationOptions::builder`] (checked) or
/// take [`IdentificationOptions::default`].
#[derive(Debug, Clone, PartialEq)]
pub struct IdentificationOptions {
    max_iterations: usize,
    tolerance: f64,
    initial_damping: f64,
    damping_factor: f64,
    max_damping: f64,
    floor: f64,
    derivative_method: DerivativeMethod,
}

impl Default for IdentificationOptions {
    /// 50 iterations, relative step tolerance 1e-8, `λ` from 1e-3 by factors of 10 up to
    /// 1e10, parameters kept ≥ 1e-6, derivatives by [`DerivativeMethod::Auto`].
    fn default() -> Self {
        Self {
            max_iterations: 50,
            tolerance: 1e-8,
            initial_damping: 1e-3,
            damping_factor: 10.0,
            max_damping: 1e10,
            floor: 1e-6,
            derivative_method: DerivativeMethod::Auto,
        }
    }
}

impl IdentificationOptions {
    /// A builder starting from the defaults.
    pub fn builder() -> IdentificationOptionsBuilder {
        IdentificationOptionsBuilder {
            options: Self::default(),
        }
    }
}

/// The builder of [`IdentificationOptions`]; [`IdentificationOptionsBuilder::build`] checks
/// the values.
#[derive(Debug, Clone)]
pub struct IdentificationOptionsBuilder {
    options: IdentificationOptions,
}

impl IdentificationOptionsBuilder {
    /// The iteration cap (≥ 1).
    pub fn max_iterations(mut self, n: usize) -> Self {
        self.options.max_iterations = n;
        self
    }

    /// Convergence when an accepted step is smaller than `tolerance` relative to the
    /// parameters (> 0).
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.options.tolerance = tolerance;
        self
    }

    /// The first damping `λ` (≥ 0), its factor (> 1) and its cap (≥ the first).
    pub fn damping(mut self, initial: f64, factor: f64, max: f64) -> Self {
        self.options.initial_damping = initial;
        self.options.damping_factor = factor;
        self.options.max_damping = max;
        self
    }

    /// The smallest value a parameter is given (> 0).
    pub fn floor(mut self, floor: f64) -> Self {
        self.options.floor = floor;
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
    /// [`IdentificationError::InvalidOption`] naming the first option out of its range.
    pub fn build(self) -> Result<IdentificationOptions, IdentificationError> {
        let o = self.options;
        let invalid =
            |option, reason: String| Err(IdentificationError::InvalidOption { option, reason });
        if o.max_iterations == 0 {
            return invalid("max_iterations", "must be at least 1".into());
        }
        if !(o.tolerance.is_finite() && o.tolerance > 0.0) {
            return invalid(
                "tolerance",
                format!("must be positive, got {}", o.tolerance),
            );
        }
        if !(o.initial_damping.is_finite()
            && o.initial_damping >= 0.0
            && o.damping_factor.is_finite()
            && o.damping_factor > 1.0
            && o.max_damping.is_finite()
            && o.max_damping >= o.initial_damping)
        {
            return invalid(
                "damping",
                format!(
                    "need initial ≥ 0, factor > 1 and max ≥ initial, got {}, {}, {}",
                    o.initial_damping, o.damping_factor, o.max_damping
                ),
            );
        }
        if !(o.floor.is_finite() && o.floor > 0.0) {
            return invalid("floor", format!("must be positive, got {}", o.floor));
        }
        Ok(o)
    }
}

/// One accepted iterate.
#[derive(Debug, Clone, PartialEq)]
pub struct Iterate {
    /// The parameters.
    pub estimate: Vec<f64>,
    /// `f = ½ Σ ‖r_k‖²` there.
    pub cost: f64,
}

/// The result of [`identify`].
#[derive(Debug, Clone, PartialEq)]
pub struct IdentificationResult {
    /// The identified parameters, in the order given.
    pub parameters: Vec<Parameter>,
    /// Their estimates.
    pub estimate: Vec<f64>,
    /// The initial guess, then every accepted iterate.
    pub history: Vec<Iterate>,
    /// Iterations run (accepted or rejected steps).
    pub iterations: usize,
    /// Whether a Gauss–Newton step fell below the tolerance relative to the parameters (or
    /// the residual vanished).
    pub converged: bool,
    /// The root mean square of the residuals' entries at the estimate.
    pub rms_residual: f64,
    /// Step derivatives taken, and how many of them were implicit.
    pub derivative_calls: usize,
    /// Of which by implicit differentiation.
    pub implicit_derivatives: usize,
    /// Wall-clock time (s).
    pub wall_time_s: f64,
}

/// `model` with `parameter` set to `value` (every material or pair override of that name; the
/// body's mass with its inertia tensor kept), as `nonsmooth_sim::derivatives` perturbs it.
fn with_parameter(model: &Model, parameter: &Parameter, value: f64) -> Model {
    let mut out = model.clone();
    match parameter {
        Parameter::Friction { material } => {
            for m in out
                .materials
                .iter_mut()
                .chain(out.pair_overrides.iter_mut().map(|p| &mut p.material))
                .filter(|m| &m.name == material)
            {
                m.friction = value;
            }
        }
        Parameter::Mass { body } => {
            for b in out.bodies.iter_mut().filter(|b| &b.name == body) {
                b.mass = value;
            }
        }
    }
    out
}

/// The residuals' cost and, when asked, the Gauss–Newton system `(JᵀJ, Jᵀr)` at `theta`.
struct Evaluation {
    cost: f64,
    squared_entries: usize,
    normal: Option<(DMatrix<f64>, DVector<f64>)>,
}

/// What [`evaluate`] needs besides the parameters.
struct Setup<'a> {
    model: &'a Model,
    stepper: &'a str,
    dt: f64,
    recording: &'a Recording,
    parameters: &'a [Parameter],
    derivatives: DerivativeOptions,
}

fn evaluate(
    setup: &Setup<'_>,
    theta: &[f64],
    sensitivities: bool,
    calls: &mut (usize, usize),
) -> Result<Evaluation, IdentificationError> {
    let fail = |during| {
        move |source| IdentificationError::Simulation {
            during,
            source: Box::new(source),
        }
    };
    let mut model = setup.model.clone();
    for (p, &value) in setup.parameters.iter().zip(theta) {
        model = with_parameter(&model, p, value);
    }
    let mut sim = Simulator::new(model.clone(), setup.stepper, setup.dt)
        .map_err(fail("simulator of the estimate"))?;
    let rec = setup.recording;
    let np = setup.parameters.len();
    let n = 2 * model.nv();
    let mut cost = 0.0;
    if !sensitivities {
        let states = crate::rollout::rollout(&mut sim, &rec.initial, &rec.commands)
            .map_err(fail("simulation of the estimate"))?;
        for (x, recorded) in states.iter().skip(1).zip(&rec.states) {
            cost += 0.5 * state_difference(&model, x, recorded)?.norm_squared();
        }
        return Ok(Evaluation {
            cost,
            squared_entries: n * rec.states.len(),
            normal: None,
        });
    }
    sim.set_state(rec.initial.clone())
        .map_err(fail("initial state of the recording"))?;
    let mut s = DMatrix::zeros(n, np);
    let mut jtj = DMatrix::zeros(np, np);
    let mut jtr = DVector::zeros(np);
    for (u, recorded) in rec.commands.iter().zip(&rec.states) {
        let d = sim
            .derivatives(u, &setup.derivatives)
            .map_err(fail("step derivatives along the estimate"))?;
        calls.0 += 1;
        if d.method != DerivativeMethod::FiniteDifference {
            calls.1 += 1;
        }
        s = &d.a * s + &d.c;
        // The residual of the step taken (not of `d.next`), so that this cost and the one of a
        // plain simulation, which judges the trial steps, are the same function.
        sim.step(u).map_err(fail("simulation of the estimate"))?;
        let r = state_difference(&model, sim.state(), recorded)?;
        cost += 0.5 * r.norm_squared();
        jtj += s.transpose() * &s;
        jtr += s.transpose() * &r;
    }
    Ok(Evaluation {
        cost,
        squared_entries: n * rec.states.len(),
        normal: Some((jtj, jtr)),
    })
}

/// Identifies `parameters` (e.g. `friction:steel_on_wood`) of `model` from `recording`,
/// simulated with the stepper named `stepper` and step `dt`, starting from `initial_guess`
/// (see the module documentation).
///
/// # Errors
/// [`IdentificationError::InvalidInput`] for an empty recording or parameter list, a guess of
/// another length or not positive; [`IdentificationError::Simulation`] for an unknown stepper
/// or parameter, or a simulation that fails at an accepted estimate;
/// [`IdentificationError::Model`] for recorded states that are not the model's.
pub fn identify(
    model: &Model,
    stepper: &str,
    dt: f64,
    recording: &Recording,
    parameters: &[Parameter],
    initial_guess: &[f64],
    options: &IdentificationOptions,
) -> Result<IdentificationResult, IdentificationError> {
    let start = Instant::now();
    if recording.states.is_empty() || recording.states.len() != recording.commands.len() {
        return Err(IdentificationError::InvalidInput(format!(
            "a recording needs one state per command and at least one, got {} states and {} \
             commands",
            recording.states.len(),
            recording.commands.len()
        )));
    }
    if parameters.is_empty() || parameters.len() != initial_guess.len() {
        return Err(IdentificationError::InvalidInput(format!(
            "{} parameters and {} initial values: need one value per parameter, at least one",
            parameters.len(),
            initial_guess.len()
        )));
    }
    if let Some(x) = initial_guess.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
        return Err(IdentificationError::InvalidInput(format!(
            "initial values must be positive and finite, got {x}"
        )));
    }
    for p in parameters {
        p.value(model)
            .map_err(|source| IdentificationError::Simulation {
                during: "parameter lookup",
                source: Box::new(source),
            })?;
    }
    let setup = Setup {
        model,
        stepper,
        dt,
        recording,
        parameters,
        derivatives: parameters
            .iter()
            .fold(DerivativeOptions::default(), |o, p| o.parameter(p.clone()))
            .method(options.derivative_method),
    };
    let mut calls = (0, 0);
    let mut theta = initial_guess.to_vec();
    let mut current = evaluate(&setup, &theta, true, &mut calls)?;
    let mut history = vec![Iterate {
        estimate: theta.clone(),
        cost: current.cost,
    }];
    let mut damping = options.initial_damping;
    let mut iterations = 0;
    let mut converged = current.cost == 0.0;
    while !converged && iterations < options.max_iterations {
        iterations += 1;
        let Some((jtj, jtr)) = current.normal.as_ref() else {
            break;
        };
        let mut lhs = jtj.clone();
        for i in 0..lhs.nrows() {
            // Marquardt's scaling, with a floor so that a parameter the data do not see
            // keeps a regular system.
            lhs[(i, i)] += damping * jtj[(i, i)].max(1e-12 * jtj.amax()).max(f64::MIN_POSITIVE);
        }
        let step = lhs.clone().cholesky().map(|c| -c.solve(jtr));
        let Some(step) = step else {
            damping = (damping * options.damping_factor).max(f64::MIN_POSITIVE);
            if damping > options.max_damping {
                break;
            }
            continue;
        };
        let relative_step = step
            .iter()
            .zip(&theta)
            .map(|(d, t)| d.abs() / t.abs().max(options.floor))
            .fold(0.0, f64::max);
        if relative_step < options.tolerance {
            converged = true;
            break;
        }
        let candidate: Vec<f64> = theta
            .iter()
            .zip(step.iter())
            .map(|(t, d)| (t + d).max(options.floor))
            .collect();
        let trial = evaluate(&setup, &candidate, false, &mut calls);
        let improved = matches!(&trial, Ok(e) if e.cost < current.cost);
        if !improved {
            damping = (damping * options.damping_factor).max(f64::MIN_POSITIVE);
            if damping > options.max_damping {
                break;
            }
            continue;
        }
        let moved = candidate
            .iter()
            .zip(&theta)
            .map(|(a, b)| (a - b).abs() / b.abs().max(options.floor))
            .fold(0.0, f64::max);
        theta = candidate;
        damping /= options.damping_factor;
        current = evaluate(&setup, &theta, true, &mut calls)?;
        history.push(Iterate {
            estimate: theta.clone(),
            cost: current.cost,
        });
        converged = moved < options.tolerance || current.cost == 0.0;
    }
    let rms_residual = (2.0 * current.cost / current.squared_entries.max(1) as f64).sqrt();
    Ok(IdentificationResult {
        parameters: parameters.to_vec(),
        estimate: theta,
        history,
        iterations,
        converged,
        rms_residual,
        derivative_calls: calls.0,
        implicit_derivatives: calls.1,
        wall_time_s: start.elapsed().as_secs_f64(),
    })
}
