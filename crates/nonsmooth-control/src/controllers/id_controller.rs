//! Inverse-dynamics controllers: ID(tᵢ) with contact prediction (the paper's controllers,
//! §§4–6) and the references ID(tᵢ₋₁), ID(tᵢ₋₂) that use sensed, delayed contact forces
//! (paper §7.3).

use std::collections::VecDeque;

use nalgebra::{DMatrix, DVector};

use super::{
    check_reference, on_swing_limb, AccelerationGains, BaseFeedback, ControlInput, Controller,
    JointPid,
};
use crate::error::ControlError;
use crate::{Desired, IdOptions, IdProblem, IdSolution, InverseDynamics, Variant};

/// ID(tᵢ): the contact-predicting inverse dynamics of one [`Variant`] driven by
/// `θ̈_des = θ̈_ref + kp e + kd ė` ([`AccelerationGains`]) plus, when
/// [`IdController::base`] is set, the stance-leg correction that realizes a PD on the
/// trunk's height and attitude ([`BaseFeedback`]).
///
/// The contacts are the snapshot's (gap ≤ contact margin). With
/// [`IdController::clamp_penetration`] penetrations are clamped to a zero gap (the controller
/// does not try to undo a compliant plant's penetration in one step, which the φ/Δt term of
/// eqs 35–36 would demand), and the friction μ the
/// controller assumes is capped at [`IdController::friction_cap`] (the authors' Pacer plugin
/// caps μ at 1.5, the authors' settings in docs/decisions/004-inverse-dynamics.md). When a solve
/// fails, the previous torques are held and [`IdController::failures`] is incremented.
#[derive(Debug, Clone)]
pub struct IdController {
    name: String,
    id: InverseDynamics,
    /// Feedback gains accumulated into θ̈_des.
    pub gains: AccelerationGains,
    /// Trunk feedback accumulated into θ̈_des (`None` = joint-space feedback only).
    pub base: Option<BaseFeedback>,
    /// Largest μ the controller assumes.
    pub friction_cap: f64,
    /// Clamp penetrations to a zero gap (for compliant plants; a rigid plant's own φ/Δt
    /// stabilization is reproduced when this is off).
    pub clamp_penetration: bool,
    /// Compliant ground (used with [`IdController::clamp_penetration`]): a penetrating
    /// contact that moves into the ground gets the stabilization gap `φ = −Δt·(n·v) > 0`
    /// instead of 0, so the rigid model's `n·v⁺ ≥ −φ/Δt` becomes `n·v⁺ ≥ n·v`: the
    /// acceleration-level contact `a_n ≥ 0 ⊥ f_N ≥ 0` (Baraff's non-impulsive contact). The
    /// controller then predicts the finite force that keeps the foot from accelerating into
    /// the ground, but no impulse stopping a foot that already moves inside a spring–damper
    /// ground within one step, which that ground cannot apply. A separating penetrating
    /// contact keeps φ = 0. The solver's contact model stays rigid (the paper's premise).
    pub hold_penetrating: bool,
    /// Contacts with a gap above this (m) are left out of the problem: the paper's
    /// controllers take the simulator's *active* contacts (paper §3, \[repo\]), and the
    /// no-slip variants would otherwise pin a swing foot inside the contact margin
    /// tangentially (their tangential impulses are free even where f_N = 0).
    pub active_gap: f64,
    /// Joint-space PID torque added to the inverse-dynamics torque (`None` = none): the
    /// authors' Pacer controller outputs `feedback + α·u_ID` with α = 1 (the authors' settings in
    /// docs/decisions/004-inverse-dynamics.md, \[repo\]).
    pub torque_feedback: Option<JointPid>,
    /// On a failed solve, instead of holding the previous torques, solve the rigid-body
    /// inverse dynamics with the generalized contact force that the last successful solve
    /// predicted (a zero-order hold of the contact-force estimate, as [`DelayedId`] with the
    /// predicted instead of the sensed force), plus the joint PID torque: the torques then
    /// follow the current state and θ̈_des. Off by default (previous torques held).
    pub reuse_contact_force: bool,
    /// Number of failed solves (the previous torques were held, or see
    /// [`IdController::reuse_contact_force`]).
    pub failures: usize,
    /// Number of calls that needed the §4.5 relaxation.
    pub relaxed: usize,
    last: Option<DVector<f64>>,
    predicted: Option<f64>,
    solution: Option<IdSolution>,
    last_error: Option<String>,
    last_contact_force: Option<DVector<f64>>,
}

impl IdController {
    /// ID(tᵢ) of `variant` with default [`IdOptions`], default gains and μ cap 1.5.
    pub fn new(name: &str, variant: Variant) -> Self {
        Self {
            name: name.to_string(),
            id: InverseDynamics::new(IdOptions::new(variant)),
            gains: AccelerationGains::default(),
            base: None,
            active_gap: 1e-4,
            friction_cap: 1.5,
            clamp_penetration: false,
            hold_penetrating: false,
            torque_feedback: None,
            failures: 0,
            relaxed: 0,
            last: None,
            predicted: None,
            solution: None,
            last_error: None,
            reuse_contact_force: false,
            last_contact_force: None,
        }
    }

    /// The options of the inverse-dynamics solver (e.g. Stage II's objective).
    pub fn options_mut(&mut self) -> &mut IdOptions {
        self.id.options_mut()
    }

    /// The inverse-dynamics solution of the last successful [`Controller::control`] call
    /// (predicted impulses, v⁺ and torques), `None` after a failed solve or a reset.
    pub fn last_solution(&self) -> Option<&IdSolution> {
        self.solution.as_ref()
    }

    /// The error of the last failed solve (kept until the next failure or a reset).
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.id.options().variant
    }
}

impl Controller for IdController {
    fn name(&self) -> &str {
        &self.name
    }

    fn control(&mut self, input: &ControlInput<'_>) -> Result<DVector<f64>, ControlError> {
        check_reference(input.model, input.reference)?;
        let base = IdProblem::from_snapshot(input.snapshot, input.dt)?;
        let problem_actuation = input.snapshot.actuation.clone();
        let v0 = &input.snapshot.v;
        let rows = base
            .contacts()
            .iter()
            .filter(|c| {
                c.gap <= self.active_gap
                    && !on_swing_limb(&c.normal_row, &problem_actuation, &input.reference.swing)
            })
            .cloned()
            .map(|mut c| {
                if self.clamp_penetration {
                    c.gap = if self.hold_penetrating && c.gap < 0.0 {
                        (-input.dt * c.normal_row.dot(v0)).max(0.0)
                    } else {
                        c.gap.max(0.0)
                    };
                }
                c.friction = c.friction.min(self.friction_cap);
                c
            })
            .collect();
        let problem = base.with_contact_rows(rows)?;
        let qdd = desired(&self.gains, self.base.as_ref(), input)?;
        match self.id.solve(&problem, &Desired::Acceleration(qdd.clone())) {
            Ok(sol) => {
                if sol.relaxation.is_some() {
                    self.relaxed += 1;
                }
                if self.reuse_contact_force {
                    // Predicted generalized contact force: M (v⁺ − v)/Δt − f − Pᵀτ.
                    let s = input.snapshot;
                    let g = &s.mass_matrix * (&sol.v_plus - &s.v) / input.dt
                        - &s.forces
                        - &s.actuation * &sol.torques;
                    self.last_contact_force = Some(g);
                }
                self.predicted = Some(sol.normal_forces.sum());
                self.last = Some(sol.torques.clone());
                let mut u = sol.torques.clone();
                self.solution = Some(sol);
                if let Some(pid) = self.torque_feedback.as_mut() {
                    u += pid.control(input)?;
                }
                Ok(u)
            }
            Err(e) => {
                self.failures += 1;
                self.last_error = Some(e.to_string());
                self.predicted = None;
                self.solution = None;
                self.id.reset();
                if let (true, Some(g)) = (self.reuse_contact_force, &self.last_contact_force) {
                    let mut u = rigid_body_id(input.snapshot, g, &qdd)?;
                    if let Some(pid) = self.torque_feedback.as_mut() {
                        u += pid.control(input)?;
                    }
                    return Ok(u);
                }
                match &self.last {
                    Some(u) => Ok(u.clone()),
                    None => Err(e),
                }
            }
        }
    }

    fn predicted_normal_force(&self) -> Option<f64> {
        self.predicted
    }

    fn reset(&mut self) {
        self.id.reset();
        self.last = None;
        self.predicted = None;
        self.solution = None;
        if let Some(pid) = self.torque_feedback.as_mut() {
            pid.reset();
        }
        self.failures = 0;
        self.relaxed = 0;
        self.last_error = None;
        self.last_contact_force = None;
    }
}

/// Rigid-body inverse dynamics with a given generalized contact force `g` (length nv):
/// solves `M a = f + g + Pᵀu`, `P a = θ̈_des` for (a, u) and returns u (a floating base
/// makes the unactuated rows determine the base acceleration).
fn rigid_body_id(
    s: &nonsmooth_core::ContactSnapshot<f64>,
    g: &DVector<f64>,
    qdd: &DVector<f64>,
) -> Result<DVector<f64>, ControlError> {
    let nv = s.mass_matrix.nrows();
    let nu = s.actuation.ncols();
    if g.len() != nv || qdd.len() != nu {
        return Err(ControlError::DimensionMismatch {
            what: "contact force or desired acceleration",
            expected: nv + nu,
            got: g.len() + qdd.len(),
        });
    }
    let mut kkt = DMatrix::zeros(nv + nu, nv + nu);
    kkt.view_mut((0, 0), (nv, nv)).copy_from(&s.mass_matrix);
    kkt.view_mut((0, nv), (nv, nu)).copy_from(&(-&s.actuation));
    kkt.view_mut((nv, 0), (nu, nv))
        .copy_from(&s.actuation.transpose());
    let mut rhs = DVector::zeros(nv + nu);
    rhs.rows_mut(0, nv).copy_from(&(&s.forces + g));
    rhs.rows_mut(nv, nu).copy_from(qdd);
    let x = kkt
        .lu()
        .solve(&rhs)
        .ok_or_else(|| ControlError::InvalidInput("singular inverse-dynamics KKT matrix".into()))?;
    Ok(x.rows(nv, nu).into_owned())
}

/// θ̈_des: joint-space PD plus the optional trunk correction.
fn desired(
    gains: &AccelerationGains,
    base: Option<&BaseFeedback>,
    input: &ControlInput<'_>,
) -> Result<DVector<f64>, ControlError> {
    let qdd = gains.desired_acceleration(input.model, input);
    match base {
        Some(b) => b.consistent_acceleration(
            input.model,
            input.snapshot,
            &qdd,
            &input.reference.swing,
            input.dt,
        ),
        None => Ok(qdd),
    }
}

/// ID(tᵢ₋ₖ): rigid-body inverse dynamics with the contact force *sensed* k control steps
/// earlier (k = 1, 2): solves `M a = f_ext + Gᵀλ_sensed + Pᵀu`, `P a = θ̈_des` for (a, u)
/// (a floating base makes the unactuated rows determine the base acceleration). Before k
/// observations exist the contact force is taken as zero.
#[derive(Debug, Clone)]
pub struct DelayedId {
    name: String,
    delay: usize,
    /// Feedback gains accumulated into θ̈_des.
    pub gains: AccelerationGains,
    /// Trunk feedback accumulated into θ̈_des (`None` = joint-space feedback only).
    pub base: Option<BaseFeedback>,
    /// Joint-space PID torque added to the inverse-dynamics torque (`None` = none), as in
    /// [`IdController::torque_feedback`].
    pub torque_feedback: Option<JointPid>,
    history: VecDeque<DVector<f64>>,
}

impl DelayedId {
    /// The reference controller with a delay of `delay ≥ 1` control steps.
    pub fn new(name: &str, delay: usize) -> Self {
        Self {
            name: name.to_string(),
            delay: delay.max(1),
            gains: AccelerationGains::default(),
            base: None,
            torque_feedback: None,
            history: VecDeque::new(),
        }
    }
}

impl Controller for DelayedId {
    fn name(&self) -> &str {
        &self.name
    }

    fn control(&mut self, input: &ControlInput<'_>) -> Result<DVector<f64>, ControlError> {
        check_reference(input.model, input.reference)?;
        let s = input.snapshot;
        let nv = s.mass_matrix.nrows();
        // history[0] is the newest observation (the last step, i.e. a delay of one step).
        let g = self
            .history
            .get(self.delay - 1)
            .cloned()
            .unwrap_or_else(|| DVector::zeros(nv));
        let qdd = desired(&self.gains, self.base.as_ref(), input)?;
        let mut u = rigid_body_id(s, &g, &qdd)?;
        if let Some(pid) = self.torque_feedback.as_mut() {
            u += pid.control(input)?;
        }
        Ok(u)
    }

    fn observe(&mut self, sensed_contact_force: &DVector<f64>) {
        self.history.push_front(sensed_contact_force.clone());
        self.history.truncate(self.delay);
    }

    fn reset(&mut self) {
        self.history.clear();
        if let Some(pid) = self.torque_feedback.as_mut() {
            pid.reset();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::BaseFeedback;
    use crate::locomotion::GaitPlanner;
    use nonsmooth_core::{ContactSnapshot, Model, State};
    use nonsmooth_sim::{AnitescuPotraStepper, MaxDissipationStepper, Stepper};

    /// The quadruped of `examples/id_quadruped.toml` at its initial (standing) state, with
    /// the snapshot there.
    fn standing_quadruped() -> (Model, State, ContactSnapshot<f64>) {
        let model =
            Model::from_toml_str(include_str!("../../../../examples/id_quadruped.toml"), None)
                .unwrap();
        let state = model.initial_state.clone();
        let snap = ContactSnapshot::new(&model, &state.q, &state.v, 0.0).unwrap();
        (model, state, snap)
    }

    /// One control step of `variant` on the standing quadruped (trot reference at t = 0),
    /// applied in `stepper`: (ID solution, v⁺ of the plant, simulated Σf_N).
    fn one_step(
        variant: Variant,
        stepper: &mut dyn Stepper,
    ) -> (IdSolution, nalgebra::DVector<f64>, f64) {
        let (model, state, snap) = standing_quadruped();
        let dt = 1e-3;
        let reference = GaitPlanner::trot(0.75).reference(0.0).unwrap();
        let mut c = IdController::new("t", variant);
        c.base = Some(BaseFeedback::default());
        let input = ControlInput {
            model: &model,
            snapshot: &snap,
            reference: &reference,
            dt,
        };
        let u = c.control(&input).unwrap();
        let sol = c.last_solution().unwrap().clone();
        let gen = &snap.actuation * &u;
        let input = nonsmooth_sim::Actuation::from_generalized_force(gen.clone());
        let next = stepper.step_actuated(&model, &state, &input, dt).unwrap();
        let sensed = &snap.mass_matrix * (&next.v - &state.v) / dt - &snap.forces - &gen;
        (sol, next.v, sensed[2])
    }

    #[test]
    fn qp_coulomb_torques_in_the_max_dissipation_plant() {
        // ID_QP,μ's impulses with its torques are feasible for the forward maximal-dissipation
        // QP (same contacts, pyramid and φ/Δt rows), so the plant's post-step kinetic energy
        // is at most the ID's predicted one; on the standing robot both give Σf_N ≈ m g.
        let mut plant = MaxDissipationStepper::default();
        let (sol, _v, sensed) = one_step(Variant::QpCoulomb, &mut plant);
        let ke = plant.last_impulses().unwrap().kinetic_energy;
        assert!(
            ke <= sol.kinetic_energy + 1e-7,
            "{ke} > {}",
            sol.kinetic_energy
        );
        let pred = sol.normal_forces.sum();
        assert!((pred - 47.09).abs() < 0.05, "{pred}");
        assert!((sensed - pred).abs() < 1e-2 * pred, "{sensed} vs {pred}");
    }

    #[test]
    fn the_failure_fallback_reproduces_the_solved_torques_from_the_predicted_force() {
        // `reuse_contact_force`: the predicted generalized contact force
        // g = M (v⁺ − v)/Δt − f − Pᵀτ of a solve, fed to the rigid-body inverse dynamics with
        // the same θ̈_des, returns the solve's own torques (the KKT system is nonsingular), so
        // the fallback after a failed solve is ID(tᵢ) with the contact force held one step.
        let (model, _, snap) = standing_quadruped();
        let dt = 1e-3;
        let reference = GaitPlanner::trot(0.75).reference(0.2).unwrap();
        let mut c = IdController::new("t", Variant::LcpCoulomb);
        c.base = Some(BaseFeedback::default());
        c.reuse_contact_force = true;
        let input = ControlInput {
            model: &model,
            snapshot: &snap,
            reference: &reference,
            dt,
        };
        c.control(&input).unwrap();
        let sol = c.last_solution().unwrap().clone();
        assert!(sol.relaxation.is_none());
        let g = c.last_contact_force.clone().unwrap();
        // The held force carries the standing load: its trunk-vertical component is m g
        // (47.09 N) within 10 % (the reference at 0.2 s accelerates the legs and the trunk).
        assert!((g[2] - 47.09).abs() < 4.7, "{}", g[2]);
        let qdd = desired(&c.gains, c.base.as_ref(), &input).unwrap();
        let u = rigid_body_id(&snap, &g, &qdd).unwrap();
        assert!(
            (&u - &sol.torques).amax() < 1e-8,
            "{}",
            (&u - &sol.torques).amax()
        );
        assert!(rigid_body_id(&snap, &DVector::zeros(3), &qdd).is_err());
    }

    #[test]
    fn lcp_coulomb_is_a_right_inverse_of_the_anitescu_potra_plant_in_the_loop() {
        // The stepper's actuation evaluates the non-contact forces at the pre-step velocity,
        // as the inverse dynamics does, so applying ID_LCP,μ's torques in
        // the Anitescu–Potra plant reproduces q̇_des (check 1 of
        // docs/decisions/004-inverse-dynamics.md) and its Σf_N.
        let mut plant = AnitescuPotraStepper::default();
        let (sol, v, sensed) = one_step(Variant::LcpCoulomb, &mut plant);
        assert!(
            (&sol.v_plus - &v).amax() < 1e-7,
            "{}",
            (&sol.v_plus - &v).amax()
        );
        let pred = sol.normal_forces.sum();
        assert!((sensed - pred).abs() < 1e-6 * pred, "{sensed} vs {pred}");
    }
}
