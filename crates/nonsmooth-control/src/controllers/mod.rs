//! Feedback controllers for the closed-loop experiments of Zapolsky & Drumwright (2017),
//! §§7–8: joint-space PID, operational-space PD, the contact-predicting inverse
//! dynamics ID(tᵢ) with each of the four [`crate::Variant`]s, and the reference controllers
//! ID(tᵢ₋₁), ID(tᵢ₋₂) that use the contact forces the plant applied one or two control
//! steps earlier (paper §7.3).
//!
//! Every controller implements [`Controller`]: given the sensed state (with its
//! [`ContactSnapshot`]) and a [`JointReference`] of the actuated joints, it returns the
//! actuator torques u (length nu). After each plant step the loop reports the *sensed*
//! generalized contact force `Gᵀλ` through [`Controller::observe`].

mod base;
mod chatter;
mod id_controller;
mod ospd;
mod pid;

pub use base::BaseFeedback;
pub use chatter::{ChatterCounter, CHATTER_RUN_MARKS, CHATTER_RUN_STEPS};
pub use id_controller::{DelayedId, IdController};
pub use ospd::{OperationalSpacePd, PointTarget};
pub use pid::JointPid;

use nalgebra::DVector;
use nonsmooth_core::{ContactSnapshot, Model};

use crate::error::ControlError;

/// Desired trajectory of the actuated joints at one control instant (all length nu).
#[derive(Debug, Clone, PartialEq)]
pub struct JointReference {
    /// Desired actuated joint positions θ_des.
    pub q: DVector<f64>,
    /// Desired actuated joint velocities θ̇_des.
    pub qd: DVector<f64>,
    /// Desired actuated joint accelerations θ̈_des (feed-forward).
    pub qdd: DVector<f64>,
    /// Per actuator: whether it belongs to a limb the plan has in swing (length nu), or
    /// empty when the plan says nothing. Contacts on a swing limb are left out of the
    /// controllers' contact sets (the authors' `des-contact` option, the authors' settings in
    /// docs/decisions/004-inverse-dynamics.md).
    pub swing: Vec<bool>,
}

impl JointReference {
    /// A reference without swing information.
    pub fn new(q: DVector<f64>, qd: DVector<f64>, qdd: DVector<f64>) -> Self {
        Self {
            q,
            qd,
            qdd,
            swing: Vec::new(),
        }
    }
}

/// Whether a contact (its normal Jacobian row, length nv) moves with an actuator that the
/// reference marks as swing: some `(n Pᵀ)_j ≠ 0` with `swing[j]`.
pub(crate) fn on_swing_limb(
    normal_row: &DVector<f64>,
    actuation: &nalgebra::DMatrix<f64>,
    swing: &[bool],
) -> bool {
    if swing.is_empty() || normal_row.len() != actuation.nrows() {
        return false;
    }
    let np = actuation.transpose() * normal_row;
    np.iter().zip(swing).any(|(x, s)| *s && x.abs() > 1e-12)
}

/// What a controller sees at one control instant.
#[derive(Debug, Clone, Copy)]
pub struct ControlInput<'a> {
    /// The model (the controller's model of the robot and its environment).
    pub model: &'a Model,
    /// Snapshot of the sensed state: M, f_ext, contacts, q, v.
    pub snapshot: &'a ContactSnapshot<f64>,
    /// The reference of the actuated joints.
    pub reference: &'a JointReference,
    /// Control period Δt (s).
    pub dt: f64,
}

/// A feedback controller producing actuator torques.
pub trait Controller {
    /// Short identifier (e.g. `qp_mu`, `pid`, `delay1`).
    fn name(&self) -> &str;

    /// Actuator torques u (length nu) for the current instant.
    ///
    /// # Errors
    /// [`ControlError`] for malformed references or a failing inverse-dynamics solve.
    fn control(&mut self, input: &ControlInput<'_>) -> Result<DVector<f64>, ControlError>;

    /// Receives the generalized contact force `Gᵀλ` (length nv) the plant applied over the
    /// last step (used by the delayed baselines; ignored by default).
    fn observe(&mut self, _sensed_contact_force: &DVector<f64>) {}

    /// The contact force predicted by the last [`Controller::control`] call, as the summed
    /// normal force Σf_N (N), for controllers that predict one (the paper's Table 5).
    fn predicted_normal_force(&self) -> Option<f64> {
        None
    }

    /// Forgets internal state (integrators, warm starts, force history).
    fn reset(&mut self) {}
}

/// The actuated joint coordinates θ (length nu) of a configuration q: for each actuator the
/// coordinate of its joint DOF (revolute/prismatic joints, whose q and v coordinates agree).
pub fn actuated_positions(model: &Model, q: &DVector<f64>) -> DVector<f64> {
    DVector::from_iterator(
        model.nu(),
        model
            .actuators
            .iter()
            .map(|a| q[model.joints[a.joint].q_index + a.dof]),
    )
}

/// The actuated joint velocities θ̇ = P v (length nu, gear not applied).
pub fn actuated_velocities(model: &Model, v: &DVector<f64>) -> DVector<f64> {
    DVector::from_iterator(
        model.nu(),
        model
            .actuators
            .iter()
            .map(|a| v[model.joints[a.joint].v_index + a.dof]),
    )
}

/// Checks that a reference has the model's number of actuators and finite entries.
pub(crate) fn check_reference(model: &Model, r: &JointReference) -> Result<(), ControlError> {
    let nu = model.nu();
    for (what, x) in [
        ("reference q", &r.q),
        ("reference qd", &r.qd),
        ("reference qdd", &r.qdd),
    ] {
        if x.len() != nu {
            return Err(ControlError::DimensionMismatch {
                what,
                expected: nu,
                got: x.len(),
            });
        }
        if x.iter().any(|x| !x.is_finite()) {
            return Err(ControlError::NonFinite { what: what.into() });
        }
    }
    if !r.swing.is_empty() && r.swing.len() != nu {
        return Err(ControlError::DimensionMismatch {
            what: "reference swing flags",
            expected: nu,
            got: r.swing.len(),
        });
    }
    Ok(())
}

/// Joint-space PD feedback gains in acceleration units, accumulated into θ̈_des by the
/// inverse-dynamics controllers (paper §7.3: "the same error feedback ... accumulated into
/// q̈_des"): `θ̈_des = θ̈_ref + kp (θ_ref − θ) + kd (θ̇_ref − θ̇)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AccelerationGains {
    /// Position gain (1/s²).
    pub kp: f64,
    /// Velocity gain (1/s).
    pub kd: f64,
}

impl Default for AccelerationGains {
    /// kp = 400 s⁻², kd = 40 s⁻¹ (critically damped at 20 rad/s).
    fn default() -> Self {
        Self {
            kp: 400.0,
            kd: 40.0,
        }
    }
}

impl AccelerationGains {
    /// The desired acceleration `θ̈_ref + kp e + kd ė` at the sensed state.
    pub fn desired_acceleration(&self, model: &Model, input: &ControlInput<'_>) -> DVector<f64> {
        let s = input.snapshot;
        let r = input.reference;
        let e = &r.q - actuated_positions(model, &s.q);
        let ed = &r.qd - actuated_velocities(model, &s.v);
        &r.qdd + e * self.kp + ed * self.kd
    }
}

/// The controller ids of the experiments of Zapolsky & Drumwright, in table order.
pub const CONTROLLER_IDS: [&str; 7] = [
    "qp_mu", "qp_inf", "lcp_mu", "lcp_inf", "pid", "delay1", "delay2",
];

/// The inverse-dynamics variant of an ID(tᵢ) controller id (`qp_mu` → QP,μ, `qp_inf` → QP,∞,
/// `lcp_mu` → LCP,μ, `lcp_inf` → LCP,∞); `None` for `pid`, `delay1`, `delay2` and unknown ids.
pub fn id_variant(id: &str) -> Option<crate::Variant> {
    match id {
        "qp_mu" => Some(crate::Variant::QpCoulomb),
        "qp_inf" => Some(crate::Variant::QpNoSlip),
        "lcp_mu" => Some(crate::Variant::LcpCoulomb),
        "lcp_inf" => Some(crate::Variant::LcpNoSlip),
        _ => None,
    }
}

/// Settings of an ID(tᵢ) controller that a user may change from the experiments' defaults
/// ([`controller_with_options`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IdSettings {
    /// Largest friction coefficient the controller assumes (`None`: the authors' 1.5,
    /// [`IdController::friction_cap`]).
    pub friction_cap: Option<f64>,
    /// θ̈_des from the post-impact velocity ([`BaseFeedback::impact_consistent`]).
    pub impact_consistent: bool,
}

/// [`controller_by_id`] with the settings `settings` of an ID(tᵢ) controller (the defaults
/// give [`controller_by_id`]'s controller).
///
/// # Errors
/// [`ControlError::UnknownVariant`] for an unknown id; [`ControlError::InvalidInput`] for a
/// friction cap that is not positive and finite, or a setting other than the defaults for
/// `pid`, `delay1`, `delay2` (they predict no contact force).
pub fn controller_with_options(
    id: &str,
    rigid: bool,
    settings: &IdSettings,
) -> Result<Box<dyn Controller>, ControlError> {
    if *settings == IdSettings::default() {
        return controller_by_id(id, rigid);
    }
    if let Some(cap) = settings.friction_cap {
        if !(cap.is_finite() && cap > 0.0) {
            return Err(ControlError::InvalidInput(format!(
                "friction cap must be positive and finite, got {cap}"
            )));
        }
    }
    match id_variant(id) {
        Some(variant) => {
            let mut c = experiment_id_controller(id, variant, rigid);
            if let Some(cap) = settings.friction_cap {
                c.friction_cap = cap;
            }
            if let Some(base) = c.base.as_mut() {
                base.impact_consistent = settings.impact_consistent;
            }
            Ok(Box::new(c))
        }
        None if CONTROLLER_IDS.contains(&id) => Err(ControlError::InvalidInput(format!(
            "a friction cap and impact-consistent accelerations apply to the ID(tᵢ) \
             controllers (qp_*, lcp_*), not to `{id}`"
        ))),
        None => Err(ControlError::UnknownVariant(id.to_string())),
    }
}

/// The ID(tᵢ) controller of `variant` as the locomotion experiments configure it (the
/// `qp_*`/`lcp_*` ids of [`controller_by_id`]): contact-consistent θ̈_des with the trunk PD
/// ([`BaseFeedback`]), the joint PID torque added to u_ID, the failure fallback that reuses
/// the last predicted contact force and, on compliant ground (`rigid` false), the
/// acceleration-level contact for penetrating feet. Returned concretely so that an
/// experiment can vary one setting (e.g. [`IdController::friction_cap`]).
pub fn experiment_id_controller(id: &str, variant: crate::Variant, rigid: bool) -> IdController {
    let mut c = IdController::new(id, variant);
    c.clamp_penetration = !rigid;
    c.hold_penetrating = !rigid;
    c.reuse_contact_force = true;
    c.base = Some(BaseFeedback {
        compliant_ground: !rigid,
        ..BaseFeedback::default()
    });
    c.torque_feedback = Some(JointPid::new(10.0, 0.1, 0.003));
    c
}

/// The controller called `id` ([`CONTROLLER_IDS`]): `qp_mu`, `qp_inf`, `lcp_mu`, `lcp_inf`
/// are ID(tᵢ) of [`crate::Variant::QpCoulomb`], `QpNoSlip`, `LcpCoulomb`, `LcpNoSlip` (on a
/// compliant plant, `rigid = false`, with penetration clamping and the acceleration-level
/// contact for penetrating feet: [`IdController::hold_penetrating`],
/// [`BaseFeedback::compliant_ground`]; a failed solve falls back to the rigid-body inverse
/// dynamics with the last predicted contact force, [`IdController::reuse_contact_force`]); `pid` is [`JointPid`] with
/// the authors' joint-space gains kp = 10, kd = 0.1, ki = 0.003 (the authors' settings in
/// docs/decisions/004-inverse-dynamics.md); `delay1`, `delay2` are [`DelayedId`] with delays
/// 1 and 2. Every inverse-dynamics controller (ID(tᵢ) and the delayed ones) uses the same
/// θ̈_des: joint PD ([`AccelerationGains`])
/// made contact-consistent with trunk feedback ([`BaseFeedback::default`]), and outputs the
/// inverse-dynamics torque plus the joint PID torque with the same gains as `pid` — the
/// authors' Pacer controller outputs `feedback + α·u_ID` with α = 1 (the authors' settings in
/// docs/decisions/004-inverse-dynamics.md, \[repo\]).
///
/// # Errors
/// [`ControlError::UnknownVariant`] for another id.
pub fn controller_by_id(id: &str, rigid: bool) -> Result<Box<dyn Controller>, ControlError> {
    let pid = || JointPid::new(10.0, 0.1, 0.003);
    let idc = |v| Box::new(experiment_id_controller(id, v, rigid)) as Box<dyn Controller>;
    let delayed = |k| {
        let mut c = DelayedId::new(id, k);
        c.base = Some(BaseFeedback {
            compliant_ground: !rigid,
            ..BaseFeedback::default()
        });
        c.torque_feedback = Some(pid());
        Box::new(c) as Box<dyn Controller>
    };
    if let Some(v) = id_variant(id) {
        return Ok(idc(v));
    }
    Ok(match id {
        "pid" => Box::new(pid()),
        "delay1" => delayed(1),
        "delay2" => delayed(2),
        _ => return Err(ControlError::UnknownVariant(id.to_string())),
    })
}
