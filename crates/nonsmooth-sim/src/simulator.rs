//! The [`Simulator`]: a model, a stepper and a step size, driven one step at a time by the
//! user's actuator commands (as `mj_step` with `data.ctrl`).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = nonsmooth_core::Model::from_file("examples/pendulum.toml")?;
//! let mut sim = nonsmooth_sim::Simulator::new(model, "anitescu-potra", 1e-3)?;
//! sim.reset_to(&[std::f64::consts::FRAC_PI_6], &[0.0])?;
//! for _ in 0..1000 {
//!     let u = [9.81 * (sim.q()[0]).sin() * 0.5];
//!     sim.step(&u)?;
//! }
//! println!("t = {}, q = {}", sim.t(), sim.q());
//! # Ok(()) }
//! ```
//!
//! Every call checks its arguments first and leaves the simulator unchanged when they are
//! malformed ([`SimError::InvalidInput`] naming the argument and the index). A failed step
//! leaves the state at the last good step.
//!
//! The Simulator is the one time loop of the toolkit: every step, whoever takes it (the
//! `nonsmooth simulate` run loop, the Python bindings, the locomotion and grasping testbeds,
//! the soak, the time-as-state impact runs), goes through [`Simulator::advance`], which applies
//! the step recovery ([`crate::recovery`]) and counts it. A caller that owns its model and
//! stepper builds one with [`Simulator::new`] or [`Simulator::with_stepper`]; one that lends
//! them for a run uses [`Simulator::borrowing`].

use nalgebra::{DVector, Isometry3, Vector3};
use nonsmooth_core::dynamics::check_state;
use nonsmooth_core::dynamics::kinematics::kinematics;
use nonsmooth_core::{ContactSnapshot, Model, State};
use std::borrow::Cow;
use std::sync::OnceLock;

use crate::actuation::Actuation;
use crate::error::SimError;
use crate::stepper::ContactImpulse;
use crate::stepper::Stepper;
use nonsmooth_core::geometry::ContactMargins;

/// One contact of the last step: the geometry at the start of the step and, where the stepper
/// reports them ([`Stepper::last_contact_impulses`]), the impulses it applied.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactRecord {
    /// Name of collider A.
    pub collider_a: String,
    /// Name of collider B.
    pub collider_b: String,
    /// Contact point (world, m).
    pub point: Vector3<f64>,
    /// Unit normal from B toward A (world).
    pub normal: Vector3<f64>,
    /// Signed gap (m; negative = penetration).
    pub gap: f64,
    /// Normal impulse over the step (N·s), when the stepper reports it.
    pub normal_impulse: Option<f64>,
    /// Tangential impulse over the step (N·s, world vector), when the stepper reports it.
    pub tangential_impulse: Option<Vector3<f64>>,
}

impl ContactRecord {
    /// The mean contact force over a step of `h` (N, world vector on collider A: the
    /// normal and tangential impulses over `h`), when the stepper reports the impulses.
    pub fn force(&self, h: f64) -> Option<Vector3<f64>> {
        let n = self.normal_impulse?;
        let t = self.tangential_impulse.unwrap_or_else(Vector3::zeros);
        (h > 0.0).then(|| (self.normal * n + t) / h)
    }
}

/// Counters of a [`Simulator`] since its construction or last reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SimCounters {
    /// Steps taken.
    pub steps: usize,
    /// Actuator commands clamped to their effort bounds (one per actuator and step).
    pub clamped_commands: usize,
    /// Failed steps recovered by smaller steps ([`crate::recovery`]).
    pub recoveries: crate::recovery::Recoveries,
}

/// A model stepped by one stepper with a step `dt` (see the module docs). `'m` is the lifetime
/// of a borrowed model and stepper ([`Simulator::borrowing`]); a simulator that owns them is a
/// `Simulator<'static>`.
pub struct Simulator<'m> {
    model: Cow<'m, Model>,
    stepper: Box<dyn Stepper + 'm>,
    dt: f64,
    state: State,
    /// State at the start of the last step and the step's size (for
    /// [`Simulator::contacts`]).
    previous: Option<(State, f64)>,
    counters: SimCounters,
    warnings: OnceLock<Vec<String>>,
    choice: crate::choice::StepperChoice,
    /// Deepest halving of a failed step ([`crate::recovery`]); 0: no recovery.
    max_halvings: u32,
}

impl std::fmt::Debug for Simulator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("model", &self.model.name)
            .field("stepper", &self.stepper.name())
            .field("dt", &self.dt)
            .field("t", &self.state.t)
            .field("counters", &self.counters)
            .finish()
    }
}

impl Simulator<'static> {
    /// A simulator of `model` with the stepper called `stepper` ([`crate::stepper_by_name`])
    /// and step `dt`, at the model's initial state.
    ///
    /// # Errors
    /// [`SimError::UnknownStepper`], or [`SimError::InvalidOption`] for a `dt` that is not
    /// positive and finite.
    pub fn new(model: Model, stepper: &str, dt: f64) -> Result<Self, SimError> {
        let choice = crate::choice::choose_stepper(&model, Some(stepper), dt);
        Self::with_choice(model, choice, dt)
    }

    /// A simulator of `model` with the stepper its file names (`[simulation] stepper`), else
    /// the one its contents call for ([`crate::default_stepper`]), and step `dt`.
    ///
    /// # Errors
    /// [`SimError::UnknownStepper`] for a model file naming an unknown stepper, or
    /// [`SimError::InvalidOption`] for a `dt` that is not positive and finite.
    pub fn with_default_stepper(model: Model, dt: f64) -> Result<Self, SimError> {
        let choice = crate::choice::choose_stepper(&model, None, dt);
        Self::with_choice(model, choice, dt)
    }

    fn with_choice(
        model: Model,
        choice: crate::choice::StepperChoice,
        dt: f64,
    ) -> Result<Self, SimError> {
        let stepper = choice.build()?;
        let mut sim = Self::with_stepper(model, stepper, dt)?;
        sim.choice = choice;
        Ok(sim)
    }

    /// A simulator with a stepper built by the caller (options set, or one of another crate).
    ///
    /// # Errors
    /// [`SimError::InvalidOption`] for a `dt` that is not positive and finite.
    pub fn with_stepper(
        model: Model,
        stepper: Box<dyn Stepper>,
        dt: f64,
    ) -> Result<Self, SimError> {
        Self::build(Cow::Owned(model), stepper, dt)
    }
}

impl<'m> Simulator<'m> {
    /// A simulator of a borrowed model and stepper (`Box::new(&mut stepper)` lends a stepper
    /// the caller reads again after the run), at the model's initial state.
    ///
    /// # Errors
    /// [`SimError::InvalidOption`] for a `dt` that is not positive and finite.
    pub fn borrowing(
        model: &'m Model,
        stepper: Box<dyn Stepper + 'm>,
        dt: f64,
    ) -> Result<Self, SimError> {
        Self::build(Cow::Borrowed(model), stepper, dt)
    }

    fn build(
        model: Cow<'m, Model>,
        stepper: Box<dyn Stepper + 'm>,
        dt: f64,
    ) -> Result<Self, SimError> {
        crate::pipeline::check_step_size(dt)?;
        let state = model.initial_state.clone();
        let choice = crate::choice::StepperChoice {
            name: stepper.name().to_string(),
            source: "argument",
            reason: "built by the caller".to_string(),
        };
        Ok(Self {
            model,
            stepper,
            dt,
            state,
            previous: None,
            counters: SimCounters::default(),
            warnings: OnceLock::new(),
            choice,
            max_halvings: crate::recovery::MAX_HALVINGS,
        })
    }

    /// The same simulator without step recovery: a failed step is an error at once, as the
    /// bare scheme gives it (for experiments that measure a scheme on its own, e.g. its
    /// iteration map or its failures).
    pub fn without_recovery(mut self) -> Self {
        self.max_halvings = 0;
        self
    }

    /// The stepper (for what it reports about its last step).
    pub fn stepper(&self) -> &dyn Stepper {
        self.stepper.as_ref()
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The stepper's name.
    pub fn stepper_name(&self) -> &'static str {
        self.stepper.name()
    }

    /// How the stepper was chosen (named, or the model's default and why).
    pub fn stepper_choice(&self) -> &crate::choice::StepperChoice {
        &self.choice
    }

    /// The step size (s).
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// The current state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Generalized coordinates.
    pub fn q(&self) -> &DVector<f64> {
        &self.state.q
    }

    /// Generalized velocities.
    pub fn v(&self) -> &DVector<f64> {
        &self.state.v
    }

    /// Time (s).
    pub fn t(&self) -> f64 {
        self.state.t
    }

    /// What the stepper leaves out of this model (e.g. a material's restitution), one line
    /// each ([`crate::model_warnings`]).
    pub fn warnings(&self) -> &[String] {
        self.warnings
            .get_or_init(|| crate::warnings::model_warnings(&self.model, self.stepper.as_ref()))
    }

    /// Steps and clamped commands since construction or the last reset.
    pub fn counters(&self) -> SimCounters {
        self.counters
    }

    /// Back to the model's initial state (counters cleared).
    pub fn reset(&mut self) {
        self.state = self.model.initial_state.clone();
        self.previous = None;
        self.counters = SimCounters::default();
    }

    /// Continues from `state` (time included; counters kept), as a testbed does that changes
    /// the state between steps.
    ///
    /// # Errors
    /// [`SimError::Model`] for a state of the wrong size or with non-finite entries; the
    /// simulator is unchanged then.
    pub fn set_state(&mut self, state: State) -> Result<(), SimError> {
        check_state(&self.model, &state.q, &state.v)?;
        if !state.t.is_finite() {
            return Err(SimError::InvalidInput {
                argument: "t",
                reason: format!("time is {}", state.t),
            });
        }
        self.state = state;
        self.previous = None;
        Ok(())
    }

    /// Back to `(q, v)` at the model's initial time (counters cleared).
    ///
    /// # Errors
    /// [`SimError::InvalidInput`] for a wrong length, a non-finite entry or a quaternion of
    /// a floating joint that is not of unit norm (to 1e-6), naming the argument and index;
    /// the simulator is unchanged then.
    pub fn reset_to(&mut self, q: &[f64], v: &[f64]) -> Result<(), SimError> {
        let state = self.checked_state(q, v)?;
        self.state = state;
        self.previous = None;
        self.counters = SimCounters::default();
        Ok(())
    }

    fn checked_state(&self, q: &[f64], v: &[f64]) -> Result<State, SimError> {
        for (argument, x, n) in [("q", q, self.model.nq()), ("v", v, self.model.nv())] {
            if x.len() != n {
                return Err(SimError::InvalidInput {
                    argument,
                    reason: format!("expected {n} entries, got {}", x.len()),
                });
            }
            if let Some(i) = x.iter().position(|e| !e.is_finite()) {
                return Err(SimError::InvalidInput {
                    argument,
                    reason: format!("entry {i} is {}", x[i]),
                });
            }
        }
        for j in &self.model.joints {
            if let Some(offset) = j.kind.quaternion_offset() {
                let i = j.q_index + offset;
                let norm = q[i..i + 4].iter().map(|e| e * e).sum::<f64>().sqrt();
                if (norm - 1.0).abs() > 1e-6 {
                    return Err(SimError::InvalidInput {
                        argument: "q",
                        reason: format!(
                            "entries {i}..{} (quaternion of joint `{}`) have norm {norm}, not 1",
                            i + 4,
                            j.name
                        ),
                    });
                }
            }
        }
        let state = State {
            q: DVector::from_column_slice(q),
            v: DVector::from_column_slice(v),
            t: self.model.initial_state.t,
        };
        check_state(&self.model, &state.q, &state.v)?;
        Ok(state)
    }

    /// One step of `dt` with the actuator command `u` (one entry per actuator, in model
    /// order), through [`Simulator::advance`]. An empty `u` is no command: the actuators
    /// apply no force (servos included), as in the run of `nonsmooth simulate`.
    ///
    /// # Errors
    /// [`SimError::InvalidInput`] for a malformed `u` (state unchanged); otherwise as
    /// [`Simulator::advance`].
    pub fn step(&mut self, u: &[f64]) -> Result<(), SimError> {
        let input = if u.is_empty() {
            Actuation::none()
        } else {
            Actuation::from_command(&self.model, &self.state, u)?
        };
        self.advance(&input, self.dt)?;
        self.counters.clamped_commands += input.clamped();
        Ok(())
    }

    /// One step of `h` (`dt`, a testbed's sub-step, or the last, shorter step of a run) with
    /// `input` applied: the step recovery ([`crate::recovery`]) wraps the
    /// stepper's step (unless turned off: [`Simulator::without_recovery`]), and the
    /// recoveries are counted.
    ///
    /// # Errors
    /// [`SimError::InvalidOption`] for a bad `h` (checked by the step's first stage,
    /// [`crate::pipeline::prepare`]); the stepper's error when the step fails,
    /// and [`SimError::Unsupported`] for a stepper that does not advance physical time by
    /// exactly `h` (state left at the last good step in both cases).
    pub fn advance(&mut self, input: &Actuation, h: f64) -> Result<(), SimError> {
        let mut recoveries = crate::recovery::Recoveries::default();
        let next = crate::recovery::step_with_recovery(
            self.stepper.as_mut(),
            &self.model,
            &self.state,
            input,
            h,
            self.max_halvings,
            &mut recoveries,
        );
        self.counters.recoveries.add(&recoveries);
        let next = next?;
        let expected = self.state.t + h;
        if (next.t - expected).abs() > 1e-9 * expected.abs().max(1.0) {
            return Err(SimError::Unsupported {
                stepper: self.stepper.name(),
                reason: format!(
                    "the step advanced time by {} s instead of {h} s; the Simulator needs \
                     a scheme that advances physical time by exactly the step",
                    next.t - self.state.t,
                ),
            });
        }
        self.counters.steps += 1;
        self.previous = Some((std::mem::replace(&mut self.state, next), h));
        Ok(())
    }

    /// The derivatives of the step [`Simulator::step`] would take from the current state
    /// with command `u` (empty: the zero command): `A = ∂(q₁, v₁)/∂(q₀, v₀)`,
    /// `B = ∂(q₁, v₁)/∂u` and the derivatives with respect to `options`' parameters, with
    /// the contacts' modes ([`crate::derivatives`]). The state is not changed.
    ///
    /// # Errors
    /// As [`crate::derivatives::step_derivatives`].
    pub fn derivatives(
        &mut self,
        u: &[f64],
        options: &crate::derivatives::DerivativeOptions,
    ) -> Result<crate::derivatives::StepDerivatives, SimError> {
        crate::derivatives::step_derivatives(
            self.stepper.as_mut(),
            &self.model,
            &self.state,
            u,
            self.dt,
            options,
        )
    }

    /// `n` steps with the same command `u`; stops at the first failing step.
    ///
    /// # Errors
    /// As [`Simulator::step`].
    pub fn step_n(&mut self, n: usize, u: &[f64]) -> Result<(), SimError> {
        for _ in 0..n {
            self.step(u)?;
        }
        Ok(())
    }

    /// World pose of every body (body order).
    pub fn body_poses(&self) -> Vec<Isometry3<f64>> {
        kinematics(&self.model, &self.state.q, &self.state.v).poses
    }

    /// The contacts of the last step (empty before the first step): their geometry at the
    /// start of the step and the impulses where the stepper reports them.
    ///
    /// # Errors
    /// [`SimError::Model`] when the contact snapshot cannot be built.
    pub fn contacts(&self) -> Result<Vec<ContactRecord>, SimError> {
        let Some((start, h)) = &self.previous else {
            return Ok(Vec::new());
        };
        step_contacts(&self.model, self.stepper.as_ref(), start, *h)
    }
}

/// The contacts of the step of size `h` that `stepper` just took from `start` (its last
/// successful step): their geometry at `start`, detected with the stepper's
/// [`Stepper::contact_margins`] so that they are the step's contacts in its order, and the
/// impulses of [`Stepper::last_contact_impulses`] where the stepper reports them (`None`
/// otherwise). After a step recovered by smaller steps ([`crate::recovery`]) the stepper
/// holds the impulses of its last sub-step, which belong to another start state.
///
/// # Errors
/// [`SimError::Model`] when the contact snapshot cannot be built.
pub fn step_contacts(
    model: &Model,
    stepper: &dyn Stepper,
    start: &State,
    h: f64,
) -> Result<Vec<ContactRecord>, SimError> {
    let impulses = stepper.last_contact_impulses(h);
    contact_records(
        model,
        start,
        &stepper.contact_margins(model, h),
        impulses.as_deref(),
    )
}

/// The contacts of `state` within `margins`, with `impulses` (indexed into them; every other
/// contact takes zero impulse) or, for `None`, without impulses.
pub(crate) fn contact_records(
    model: &Model,
    state: &State,
    margins: &ContactMargins,
    impulses: Option<&[ContactImpulse]>,
) -> Result<Vec<ContactRecord>, SimError> {
    let snap = ContactSnapshot::with_contact_margins(model, &state.q, &state.v, state.t, margins)?;
    let name = |i: usize| {
        model
            .colliders
            .get(i)
            .map(|c| c.name.clone())
            .unwrap_or_default()
    };
    let known = impulses.is_some();
    let mut out: Vec<ContactRecord> = snap
        .contacts
        .iter()
        .map(|c| ContactRecord {
            collider_a: name(c.collider_a),
            collider_b: name(c.collider_b),
            point: c.point,
            normal: c.normal,
            gap: c.gap,
            normal_impulse: known.then_some(0.0),
            tangential_impulse: known.then(Vector3::zeros),
        })
        .collect();
    for imp in impulses.into_iter().flatten() {
        if let (Some(rec), Some(c)) = (out.get_mut(imp.contact), snap.contacts.get(imp.contact)) {
            rec.normal_impulse = Some(imp.normal);
            let mut t = Vector3::zeros();
            for (dir, value) in c.tangents.iter().zip(&imp.tangent) {
                t += dir * *value;
            }
            rec.tangential_impulse = Some(t);
        }
    }
    Ok(out)
}
