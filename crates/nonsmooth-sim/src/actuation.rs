//! Actuator commands turned into generalized forces inside a step.
//!
//! A command `u` holds one entry per `[[actuators]]` of the model. Each actuator drives the
//! velocity coordinate `i` of its joint with gear `g` (`P[a, i] = g`, so the generalized force
//! is `Pᵀτ`):
//!
//! - `motor`: `τ = u`, clamped to the actuator's effort bounds;
//! - `position` (a servo with gains `kp`, `kv`): `τ = kp (u − l) − kv l̇` with the actuator
//!   length `l = g qᵢ` and its rate `l̇ = g vᵢ`.
//!
//! The velocity-level schemes integrate the servo implicitly (backward Euler in the joint
//! coordinate, stable for any gain): with `K = g² kp`, `D = g² kv` and `c = g kp u`, the step
//! `M (v⁺ − v) = h (f + c − K (q + h v⁺) − D v⁺) + Jᵀλ` is the usual velocity update
//! `M̃ (v⁺ − v) = h f̃ + Jᵀλ` with
//!
//! `M̃ = M + diag(h D + h² K)`,  `f̃ = f + c − K q − (h K + D) v`
//!
//! ([`Actuation::apply_implicit`]). The ODE schemes add the force `c − K q − D v` to the
//! right-hand side at every stage ([`Actuation::generalized_force`]). A servo whose torque at
//! the start of the step is outside its effort bounds is applied as the clamped constant
//! torque for that step (explicit), and the clamp is counted, as for a motor.

use crate::error::SimError;
use nalgebra::{DMatrix, DVector};
use nonsmooth_core::{ActuatorKind, Model, State};

/// One implicitly integrated servo term on velocity coordinate `v_index` (position
/// coordinate `q_index`): generalized force `constant − stiffness·q − damping·v`.
#[derive(Debug, Clone, PartialEq)]
struct Servo {
    v_index: usize,
    q_index: usize,
    stiffness: f64,
    damping: f64,
    constant: f64,
}

/// The generalized forces of one actuator command over one step (see the module docs).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Actuation {
    /// Explicit generalized force (motors and clamped servos); empty when there is none.
    force: DVector<f64>,
    /// Implicit servo terms.
    servos: Vec<Servo>,
    /// Actuators whose torque was clamped to its effort bounds.
    clamped: usize,
}

impl Actuation {
    /// No actuation: every stepper's plain `step`.
    pub fn none() -> Self {
        Self::default()
    }

    /// The actuation of command `u` (one entry per actuator, in model order) at `state`.
    ///
    /// # Errors
    /// [`SimError::InvalidInput`] naming the argument and index when `u` has the wrong
    /// length or a non-finite entry.
    pub fn from_command(model: &Model, state: &State, u: &[f64]) -> Result<Self, SimError> {
        if u.len() != model.nu() {
            return Err(SimError::InvalidInput {
                argument: "u",
                reason: format!(
                    "expected {} entries (one per actuator), got {}",
                    model.nu(),
                    u.len()
                ),
            });
        }
        if let Some(i) = u.iter().position(|x| !x.is_finite()) {
            return Err(SimError::InvalidInput {
                argument: "u",
                reason: format!(
                    "entry {i} (actuator `{}`) is {}",
                    model.actuators[i].name, u[i]
                ),
            });
        }
        let mut out = Actuation::default();
        let mut force = DVector::zeros(model.nv());
        let mut explicit = false;
        for (act, &cmd) in model.actuators.iter().zip(u) {
            let joint = &model.joints[act.joint];
            let vi = joint.v_index + act.dof;
            let clamp = |tau: f64| match act.effort_limit {
                Some((lo, _)) if tau < lo => (lo, true),
                Some((_, hi)) if tau > hi => (hi, true),
                _ => (tau, false),
            };
            match act.kind {
                ActuatorKind::Motor => {
                    let (tau, hit) = clamp(cmd);
                    out.clamped += usize::from(hit);
                    force[vi] += act.gear * tau;
                    explicit |= tau != 0.0;
                }
                ActuatorKind::Position { kp, kv } => {
                    let qi = joint.q_index + act.dof;
                    let length = act.gear * state.q[qi];
                    let rate = act.gear * state.v[vi];
                    let (tau, hit) = clamp(kp * (cmd - length) - kv * rate);
                    if hit {
                        out.clamped += 1;
                        force[vi] += act.gear * tau;
                        explicit = true;
                    } else {
                        out.servos.push(Servo {
                            v_index: vi,
                            q_index: qi,
                            stiffness: act.gear * act.gear * kp,
                            damping: act.gear * act.gear * kv,
                            constant: act.gear * kp * cmd,
                        });
                    }
                }
            }
        }
        if explicit {
            out.force = force;
        }
        Ok(out)
    }

    /// A generalized force `f` (length nv) held over the step, for callers that compute
    /// `Pᵀτ` themselves (controllers with their own clamps).
    pub fn from_generalized_force(force: DVector<f64>) -> Self {
        Actuation {
            force,
            servos: Vec::new(),
            clamped: 0,
        }
    }

    /// Adds the explicit generalized force `f` (one entry per velocity coordinate, evaluated
    /// at the step's start: an external load, e.g. [`crate::external_load::PointLoad`]).
    pub fn add_generalized_force(&mut self, f: &DVector<f64>) {
        if self.force.is_empty() {
            self.force = f.clone();
        } else {
            self.force += f;
        }
    }

    /// Whether the command applies no force at all.
    pub fn is_none(&self) -> bool {
        self.force.is_empty() && self.servos.is_empty()
    }

    /// Whether the actuation has implicit servo terms (they change the step's mass matrix).
    pub fn has_servos(&self) -> bool {
        !self.servos.is_empty()
    }

    /// Number of actuators whose torque was clamped to its effort bounds.
    pub fn clamped(&self) -> usize {
        self.clamped
    }

    /// The generalized force at `(q, v)` (ODE right-hand sides; every term explicit).
    pub fn generalized_force(&self, q: &DVector<f64>, v: &DVector<f64>) -> DVector<f64> {
        let mut f = if self.force.is_empty() {
            DVector::zeros(v.len())
        } else {
            self.force.clone()
        };
        for s in &self.servos {
            f[s.v_index] += s.constant - s.stiffness * q[s.q_index] - s.damping * v[s.v_index];
        }
        f
    }

    /// Adds the actuation to a velocity-level step's mass matrix and force at `(q, v)`, with
    /// the servos integrated implicitly over the step `h` (`M̃`, `f̃` of the module docs).
    pub fn apply_implicit(
        &self,
        mass: &mut DMatrix<f64>,
        forces: &mut DVector<f64>,
        q: &DVector<f64>,
        v: &DVector<f64>,
        h: f64,
    ) {
        self.apply_implicit_with(|i, d| mass[(i, i)] += d, forces, q, v, h);
    }

    /// [`Actuation::apply_implicit`] for a mass matrix stored in any form: the servos'
    /// diagonal terms `h D + h² K` go to `add_to_diagonal(i, value)`.
    pub(crate) fn apply_implicit_with(
        &self,
        mut add_to_diagonal: impl FnMut(usize, f64),
        forces: &mut DVector<f64>,
        q: &DVector<f64>,
        v: &DVector<f64>,
        h: f64,
    ) {
        if !self.force.is_empty() {
            *forces += &self.force;
        }
        for s in &self.servos {
            let i = s.v_index;
            add_to_diagonal(i, h * s.damping + h * h * s.stiffness);
            forces[i] +=
                s.constant - s.stiffness * q[s.q_index] - (h * s.stiffness + s.damping) * v[i];
        }
    }
}
