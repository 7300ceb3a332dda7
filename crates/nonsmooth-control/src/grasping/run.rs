//! The grasp plant (friction cases), the controllers of the testbed and the closed loop with
//! drop and chatter detection.

use nalgebra::{DVector, Isometry3, Point3, Vector3};
use nonsmooth_core::dynamics::{integrate_configuration, kinematics};
use nonsmooth_core::{ContactSnapshot, Model, State};
use nonsmooth_sim::stepper_by_name;

use super::{GraspError, GraspId, GraspPlan};
use crate::controllers::{
    actuated_positions, ControlInput, Controller, DelayedId, JointPid, JointReference,
};
use crate::error::ControlError;
use crate::locomotion::{LoopOptions, Terrain};
use crate::{Desired, IdProblem, IdSolution, Variant};

/// The reference arm + hand + box model, `examples/id_arm_hand_box.toml`.
pub const ARM_HAND_BOX_TOML: &str = include_str!("../../../../examples/id_arm_hand_box.toml");

/// Loads [`ARM_HAND_BOX_TOML`].
///
/// # Errors
/// [`GraspError::Model`] if the file does not parse (it does in the repository).
pub fn arm_hand_box_model() -> Result<Model, GraspError> {
    Ok(Model::from_toml_str(
        ARM_HAND_BOX_TOML,
        Some("examples/id_arm_hand_box.toml"),
    )?)
}

/// The two friction cases of the paper's arm experiment (§8.4.1, Fig. 18): the box's
/// fingertip friction is μ = ∞ (no slip) or μ = 1.0. Table 6 calls them "grasping a high
/// friction object" and "grasping a low friction object", hence the task ids
/// `grasp_highmu` (μ = ∞) and `grasp_lowmu` (μ = 1.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraspFriction {
    /// μ = ∞: the plant uses the finite [`Terrain::MU_INF`] = 100 (the pyramid LCP of the
    /// Anitescu–Potra stepper needs a finite μ), as the quadruped's sticky terrain.
    High,
    /// μ = 1.0.
    Low,
}

impl GraspFriction {
    /// Both cases, high first.
    pub const ALL: [GraspFriction; 2] = [GraspFriction::High, GraspFriction::Low];

    /// The task-id suffix: `highmu` or `lowmu`.
    pub fn id(self) -> &'static str {
        match self {
            GraspFriction::High => "highmu",
            GraspFriction::Low => "lowmu",
        }
    }

    /// The plant's fingertip–box friction coefficient.
    pub fn plant_friction(self) -> f64 {
        match self {
            GraspFriction::High => Terrain::MU_INF,
            GraspFriction::Low => 1.0,
        }
    }
}

/// `model` with every material's μ set to the case's [`GraspFriction::plant_friction`]
/// (rigid contact: stiffness and damping removed).
pub fn grasp_model(model: &Model, friction: GraspFriction) -> Model {
    let mut m = model.clone();
    for mat in &mut m.materials {
        mat.friction = friction.plant_friction();
        mat.stiffness = None;
        mat.damping = None;
    }
    m
}

/// Joint-space PID gains of the arm's `pid` baseline (N·m/rad or N/m, N·m·s/rad,
/// N·m/(rad·s)): the paper gives none for the arm; kp = 500 holds the 1.3 kg box with about
/// 0.04 rad of gravity sag at the shoulder, and kd = 1 keeps the explicit damping of the
/// wrist roll (inertia ≈ 2·10⁻³ kg·m²) stable at 1 ms steps (kd·Δt/I = 0.5).
pub const PID_GAINS: (f64, f64, f64) = (500.0, 1.0, 100.0);

/// How far (m) the `pid` baseline's fingers are commanded to close beyond the box faces
/// ("close further", §7.2.2): a PID squeezes only through a position error, here
/// kp · 0.02 = 10 N per finger, twice the box weight at μ = 1.
pub const PID_FINGER_CLOSURE: f64 = 0.02;

/// The controller of the grasp testbed called `id` (`qp_mu`, `qp_inf`, `lcp_mu`,
/// `lcp_inf`, `pid`, `delay1`, `delay2`): [`GraspId::new`] of the four [`Variant`]s (the
/// active fingertip–box contacts, gap ≤ 0.1 mm, μ capped at 1.5, the default joint-space
/// feedback [`crate::controllers::AccelerationGains`], the fingertip preload
/// [`super::GRASP_PRELOAD`] and, for the QP variants, the carried-box Stage I), ID(tᵢ₋₁) and
/// ID(tᵢ₋₂) ([`DelayedId`]) with the same feedback and no trunk feedback (fixed base);
/// `pid` is [`JointPid`] with [`PID_GAINS`].
///
/// # Errors
/// [`ControlError::UnknownVariant`] for another id.
pub fn grasp_controller(id: &str) -> Result<Box<dyn Controller>, ControlError> {
    let idc = |v| Box::new(GraspId::new(id, v)) as Box<dyn Controller>;
    Ok(match id {
        "qp_mu" => idc(Variant::QpCoulomb),
        "qp_inf" => idc(Variant::QpNoSlip),
        "lcp_mu" => idc(Variant::LcpCoulomb),
        "lcp_inf" => idc(Variant::LcpNoSlip),
        "pid" => Box::new(JointPid::new(PID_GAINS.0, PID_GAINS.1, PID_GAINS.2)),
        "delay1" => Box::new(DelayedId::new(id, 1)),
        "delay2" => Box::new(DelayedId::new(id, 2)),
        _ => return Err(ControlError::UnknownVariant(id.to_string())),
    })
}

/// The finger closure the plan gives controller `id`: [`PID_FINGER_CLOSURE`] for `pid`, 0
/// (fingers held on the box faces, the contact-consistent reference) for the inverse-
/// dynamics controllers, which squeeze through their predicted (or sensed) contact forces.
pub fn finger_closure(id: &str) -> f64 {
    if id == "pid" {
        PID_FINGER_CLOSURE
    } else {
        0.0
    }
}

/// Options of [`run_grasp`].
#[derive(Debug, Clone, PartialEq)]
pub struct GraspOptions {
    /// Simulation and control step (s).
    pub dt: f64,
    /// Simulated duration (s).
    pub duration: f64,
    /// Stepper name (see `nonsmooth_sim::STEPPER_NAMES`).
    pub stepper: String,
    /// Torque-rate threshold of a reversal (N·m/s), as the locomotion testbed.
    pub chatter_rate: f64,
    /// Consecutive reversal steps from which the run chatters, as the locomotion testbed.
    pub chatter_run_steps: usize,
    /// The box is *dropped* once its position in the palm frame has moved more than this
    /// (m) from where it was grasped.
    pub drop_slip: f64,
    /// The run stops once the box has slipped this far (m): it has left the fingertips.
    pub stop_slip: f64,
    /// Finger closure of the reference (m), see [`finger_closure`].
    pub finger_closure: f64,
    /// Contacts with a gap at most this (m) count as active in the record (and enter the
    /// no-slip plant).
    pub contact_gap: f64,
    /// The plant's contact model.
    pub plant: GraspPlant,
}

/// The plant's contact model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GraspPlant {
    /// The stepper named by [`GraspOptions::stepper`] (Anitescu–Potra by default) with the
    /// model's friction.
    #[default]
    Stepper,
    /// An ideal no-slip plant ("μ = ∞ — no slip", paper Fig. 18): each step is the forward
    /// no-slip model [`crate::forward::noslip_step`] (eqs 40–41 with the torques given;
    /// normal complementarity, tangential velocity zero at every active contact, whatever
    /// the normal force) on the contacts within [`GraspOptions::contact_gap`], then
    /// `q⁺ = q + Δt N(q) v⁺`. The model's μ is ignored.
    NoSlip,
}

impl GraspOptions {
    /// 1 ms steps, the Anitescu–Potra stepper, the locomotion testbed's chatter definition
    /// ([`LoopOptions::new`]: reversals above 500 N·m/s on more than 5 % of the steps),
    /// drop at 1 cm of slip, stop at 5 cm, no finger closure, active contacts within 0.1 mm,
    /// the stepper plant.
    pub fn new(duration: f64) -> Self {
        let loco = LoopOptions::new(duration, "anitescu-potra");
        Self {
            dt: loco.dt,
            duration,
            stepper: loco.stepper,
            chatter_rate: loco.chatter_rate,
            chatter_run_steps: loco.chatter_run_steps,
            drop_slip: 0.01,
            stop_slip: 0.05,
            finger_closure: 0.0,
            contact_gap: 1e-4,
            plant: GraspPlant::Stepper,
        }
    }
}

/// What a grasp run recorded (one entry per control step unless stated).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GraspRecord {
    /// Control instants (s).
    pub t: Vec<f64>,
    /// Box centre (world, m).
    pub box_pos: Vec<Vector3<f64>>,
    /// The plant's state (for the trajectory viewer).
    pub states: Vec<State>,
    /// The contact impulses of the plant step from each state of `states`, where the
    /// stepper reports them (the stepper plant; `None` for the no-slip plant and after the
    /// last step).
    pub impulses: Vec<Option<nonsmooth_sim::StepImpulses>>,
    /// Planned box centre: the grasped box carried rigidly by the hand at the planned joint
    /// positions (m).
    pub box_des: Vec<Vector3<f64>>,
    /// ‖box − planned box‖ (m).
    pub box_err: Vec<f64>,
    /// Slip: displacement of the box centre in the palm frame since t = 0 (m).
    pub slip: Vec<f64>,
    /// Mean |θ − θ_des| over the arm joints (rad, fingers excluded).
    pub arm_err: Vec<f64>,
    /// Active fingertip–box contacts.
    pub contacts: Vec<usize>,
    /// Applied (clipped) torques.
    pub torques: Vec<DVector<f64>>,
    /// When the box was dropped ([`GraspOptions::drop_slip`] exceeded).
    pub dropped: Option<f64>,
    /// A stepper or controller failure that ended the run (counts as a failed task).
    pub failure: Option<String>,
    /// Fraction of steps with a torque reversal.
    pub chatter_fraction: f64,
    /// Whether the run chattered ([`GraspOptions::chatter_run_steps`] consecutive reversals).
    pub chattered: bool,
    /// Most consecutive steps with a torque reversal.
    pub longest_reversal_run: usize,
    /// Whether the run stopped before the planned duration (box gone or failure).
    pub stopped_early: bool,
    /// Plant steps that failed and were recovered by smaller steps, and the other
    /// recoveries of the stepper ([`nonsmooth_sim::Recoveries`]).
    pub recoveries: nonsmooth_sim::Recoveries,
}

fn mean(x: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = x.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

impl GraspRecord {
    /// Pass (Table 6): no drop, no chatter, no failure.
    pub fn passed(&self) -> bool {
        self.dropped.is_none() && !self.chattered && self.failure.is_none()
    }

    /// Mean box position error over the run (m).
    pub fn mean_box_err(&self) -> f64 {
        mean(self.box_err.iter().copied())
    }

    /// Largest box position error (m).
    pub fn max_box_err(&self) -> f64 {
        self.box_err.iter().copied().fold(0.0, f64::max)
    }

    /// Largest slip (m).
    pub fn max_slip(&self) -> f64 {
        self.slip.iter().copied().fold(0.0, f64::max)
    }

    /// Mean arm joint error (rad).
    pub fn mean_arm_err(&self) -> f64 {
        mean(self.arm_err.iter().copied())
    }

    /// E|τ|: mean over steps and joints of |u| (N·m or N).
    pub fn mean_tau(&self) -> f64 {
        mean(self.torques.iter().map(|u| u.abs().mean()))
    }

    /// Largest |u| over the run.
    pub fn max_tau(&self) -> f64 {
        self.torques.iter().map(|u| u.amax()).fold(0.0, f64::max)
    }

    /// E|Δτ|: mean over steps and joints of |u_k − u_{k−1}|/Δt.
    pub fn mean_dtau(&self, dt: f64) -> f64 {
        mean(
            self.torques
                .windows(2)
                .map(|w| (&w[1] - &w[0]).abs().mean() / dt),
        )
    }
}

/// Body indices of the palm and the box.
fn palm_and_box(model: &Model) -> Result<(usize, usize), GraspError> {
    let palm = model
        .body_index("palm")
        .ok_or_else(|| GraspError::Invalid("the model has no body \"palm\"".into()))?;
    let bx = model
        .body_index("box")
        .ok_or_else(|| GraspError::Invalid("the model has no body \"box\"".into()))?;
    Ok((palm, bx))
}

fn poses(
    model: &Model,
    q: &DVector<f64>,
    palm: usize,
    bx: usize,
) -> (Isometry3<f64>, Vector3<f64>) {
    let kin = kinematics(model, q, &DVector::zeros(model.nv()));
    let b = &model.bodies[bx];
    (
        kin.poses[palm],
        (kin.poses[bx] * Point3::from(b.com)).coords,
    )
}

/// Configuration with the actuated coordinates replaced by `theta`.
fn with_actuated(model: &Model, q: &DVector<f64>, theta: &DVector<f64>) -> DVector<f64> {
    let mut out = q.clone();
    for (a, th) in model.actuators.iter().zip(theta.iter()) {
        out[model.joints[a.joint].q_index + a.dof] = *th;
    }
    out
}

/// The generalized contact force `Σᵢ (nᵢ f_N,i + Σⱼ tᵢⱼ f_T,ij)` (length nv) of an
/// inverse-dynamics solution's predicted contact forces (the rows of `problem`).
pub fn predicted_contact_force(problem: &IdProblem, solution: &IdSolution) -> DVector<f64> {
    let ntan = problem.ntan();
    let mut g = DVector::zeros(problem.nv());
    for (i, c) in problem.contacts().iter().enumerate() {
        g += &c.normal_row * solution.normal_forces[i];
        for j in 0..ntan {
            g += c.tangent_rows.row(j).transpose() * solution.tangent_forces[i * ntan + j];
        }
    }
    g
}

/// The world-frame force on the box of a generalized force `g` (the box's floating joint:
/// linear velocity of its origin in the world frame, so its first three rows are the force).
///
/// # Errors
/// [`GraspError::Invalid`] without a floating `box` joint or for a `g` of the wrong length.
pub fn box_force(model: &Model, g: &DVector<f64>) -> Result<Vector3<f64>, GraspError> {
    let j = model
        .joint_index("box")
        .ok_or_else(|| GraspError::Invalid("the model has no joint \"box\"".into()))?;
    let vi = model.joints[j].v_index;
    if g.len() != model.nv() || model.joints[j].kind.nv() != 6 {
        return Err(GraspError::Invalid(
            "box force needs a floating box joint and an nv-vector".into(),
        ));
    }
    Ok(Vector3::new(g[vi], g[vi + 1], g[vi + 2]))
}

/// The static grasp at `state`: the testbed's [`GraspId`] of `variant` (preload, carried-box
/// Stage I) with zero desired acceleration, the snapshot's contacts within `contact_gap` and
/// μ capped at 1.5. Returns the problem and the solution (its forces include the preload;
/// the testbed seeds the force history of the delayed controllers with the
/// [`Variant::QpCoulomb`] one).
///
/// # Errors
/// [`GraspError::Control`] when the snapshot or the solve fails.
pub fn static_grasp(
    model: &Model,
    state: &State,
    dt: f64,
    contact_gap: f64,
    variant: Variant,
) -> Result<(IdProblem, IdSolution), GraspError> {
    let snap =
        ContactSnapshot::new(model, &state.q, &state.v, state.t).map_err(ControlError::from)?;
    let mut c = GraspId::new("static", variant);
    c.active_gap = contact_gap;
    Ok(c.solve(
        &snap,
        &Desired::Acceleration(DVector::zeros(model.nu())),
        dt,
    )?)
}

/// Largest generalized speed (m/s or rad/s) a plant step may produce before the run is
/// stopped as a failed step (the task's speeds are below 1).
pub const PLANT_MAX_SPEED: f64 = 100.0;

fn sane(state: &State) -> bool {
    state.q.iter().all(|x| x.is_finite())
        && state
            .v
            .iter()
            .all(|x| x.is_finite() && x.abs() <= PLANT_MAX_SPEED)
}

/// One step of the stepper plant through the one time loop ([`nonsmooth_sim::Simulator`],
/// which recovers a failed step by smaller steps and counts it); a speed above
/// [`PLANT_MAX_SPEED`] is an error.
fn plant_step(
    sim: &mut nonsmooth_sim::Simulator<'_>,
    state: &State,
    gen_u: &DVector<f64>,
    dt: f64,
) -> Result<State, GraspError> {
    let input = nonsmooth_sim::Actuation::from_generalized_force(gen_u.clone());
    sim.set_state(state.clone())?;
    sim.advance(&input, dt)?;
    let next = sim.state().clone();
    if sane(&next) {
        Ok(next)
    } else {
        Err(GraspError::Invalid(format!(
            "plant step produced a speed above {PLANT_MAX_SPEED}"
        )))
    }
}

/// One step of the ideal no-slip plant ([`GraspPlant::NoSlip`]).
fn noslip_plant_step(
    model: &Model,
    snap: &ContactSnapshot<f64>,
    state: &State,
    u: &DVector<f64>,
    dt: f64,
    options: &GraspOptions,
) -> Result<State, GraspError> {
    let base = IdProblem::from_snapshot(snap, dt)?;
    let rows = base
        .contacts()
        .iter()
        .filter(|c| c.gap <= options.contact_gap)
        .cloned()
        .collect();
    let problem = base.with_contact_rows(rows)?;
    let fwd = crate::forward::noslip_step(&problem, u)?;
    let q = integrate_configuration(model, &state.q, &fwd.v_plus, dt);
    let next = State {
        q,
        v: fwd.v_plus,
        t: state.t + dt,
    };
    if sane(&next) {
        Ok(next)
    } else {
        Err(GraspError::Invalid(format!(
            "no-slip plant step produced a speed above {PLANT_MAX_SPEED}"
        )))
    }
}

/// Why a grasp run stops before its end.
enum Halt {
    /// A failure during the run, recorded in [`GraspRecord::failure`].
    Failure(String),
    /// The box slipped beyond [`GraspOptions::stop_slip`].
    SlippedOut,
    /// An error returned to the caller.
    Error(GraspError),
}

impl From<GraspError> for Halt {
    fn from(e: GraspError) -> Self {
        Halt::Error(e)
    }
}

/// The grasp loop's parts between steps: the plant, the controller and what it may exert,
/// the tracked bodies, the chatter counter and the record.
struct GraspLoop<'a, 'c> {
    /// The arm, hand and box.
    model: &'a Model,
    /// The controller under test.
    controller: &'c mut dyn Controller,
    /// The joint plan.
    plan: &'a GraspPlan,
    /// The run's options.
    options: &'a GraspOptions,
    /// The stepper plant.
    sim: nonsmooth_sim::Simulator<'a>,
    /// The palm's and the box's bodies.
    palm_and_box: (usize, usize),
    /// The box's initial position in the palm frame.
    rel0: Vector3<f64>,
    /// The arm's actuators (those that are not fingers).
    arm: Vec<usize>,
    /// The actuators' effort limits (lower, upper).
    limits: Vec<(f64, f64)>,
    /// The torque-reversal counter.
    chatter: crate::controllers::ChatterCounter,
    /// The record so far.
    rec: GraspRecord,
}

impl GraspLoop<'_, '_> {
    /// Sense: the contact snapshot at `state`.
    fn sense(&self, t: f64, state: &State) -> Result<ContactSnapshot<f64>, Halt> {
        ContactSnapshot::new(self.model, &state.q, &state.v, t)
            .map_err(|e| Halt::Failure(format!("snapshot at t = {t:.3}: {e}")))
    }

    /// Records the box's pose and slip, the arm's tracking error and the closed contacts
    /// at `t`; marks the drop, and stops the run when the box slipped out.
    fn record(
        &mut self,
        t: f64,
        state: &State,
        snap: &ContactSnapshot<f64>,
        reference: &JointReference,
    ) -> Result<(), Halt> {
        let (model, options) = (self.model, self.options);
        let (palm, bx) = self.palm_and_box;
        let (palm_pose, box_pos) = poses(model, &state.q, palm, bx);
        let rel = palm_pose
            .inverse_transform_point(&Point3::from(box_pos))
            .coords;
        let slip = (rel - self.rel0).norm();
        let theta_ref_arm = self.plan.reference(t, 0.0)?.q;
        let q_des = with_actuated(model, &state.q, &theta_ref_arm);
        let (palm_des, _) = poses(model, &q_des, palm, bx);
        let box_des = (palm_des * Point3::from(self.rel0)).coords;
        let theta = actuated_positions(model, &state.q);
        let rec = &mut self.rec;
        rec.t.push(t);
        rec.box_pos.push(box_pos);
        rec.states.push(State {
            q: state.q.clone(),
            v: state.v.clone(),
            t,
        });
        rec.box_des.push(box_des);
        rec.box_err.push((box_pos - box_des).norm());
        rec.slip.push(slip);
        rec.arm_err.push(mean(
            self.arm.iter().map(|&i| (theta[i] - reference.q[i]).abs()),
        ));
        rec.contacts.push(
            snap.contacts
                .iter()
                .filter(|c| c.gap <= options.contact_gap)
                .count(),
        );
        if slip > options.drop_slip && rec.dropped.is_none() {
            rec.dropped = Some(t);
        }
        if slip > options.stop_slip {
            return Err(Halt::SlippedOut);
        }
        Ok(())
    }

    /// Solve: the controller's torques, clipped to the effort limits and observed by the
    /// chatter counter.
    fn solve(
        &mut self,
        t: f64,
        snap: &ContactSnapshot<f64>,
        reference: &JointReference,
    ) -> Result<DVector<f64>, Halt> {
        let model = self.model;
        let dt = self.options.dt;
        let input = ControlInput {
            model,
            snapshot: snap,
            reference,
            dt,
        };
        let mut u = match self.controller.control(&input) {
            Ok(u) if u.len() == model.nu() && u.iter().all(|x| x.is_finite()) => u,
            Ok(_) => {
                return Err(Halt::Failure(format!(
                    "t = {t:.3}: controller returned bad torques"
                )))
            }
            Err(e) => return Err(Halt::Failure(format!("t = {t:.3}: controller: {e}"))),
        };
        for (x, (lo, hi)) in u.iter_mut().zip(&self.limits) {
            *x = x.clamp(*lo, *hi);
        }
        self.chatter.observe(&u, dt);
        Ok(u)
    }

    /// Actuate: one step of the plant under the torques `u` from `state`; records the
    /// stepper's impulses and the torques, and gives the sensed generalized contact force to
    /// the controller.
    fn actuate(
        &mut self,
        t: f64,
        state: &State,
        snap: &ContactSnapshot<f64>,
        u: DVector<f64>,
    ) -> Result<State, Halt> {
        let (model, options) = (self.model, self.options);
        let dt = options.dt;
        let gen_u = &snap.actuation * &u;
        // the stepper applies Pᵀu inside its step (f(q, v) at the pre-step velocity)
        let stepped = State {
            q: state.q.clone(),
            v: state.v.clone(),
            t,
        };
        let halvings = self.sim.counters().recoveries.step_halving;
        let next = match options.plant {
            GraspPlant::Stepper => plant_step(&mut self.sim, &stepped, &gen_u, dt),
            GraspPlant::NoSlip => noslip_plant_step(model, snap, state, &u, dt, options),
        };
        self.rec.recoveries = self.sim.counters().recoveries;
        let next = next.map_err(|e| Halt::Failure(format!("t = {t:.3}: stepper: {e}")))?;
        // after a recovery the stepper holds its last sub-step's impulses: not this step's
        let recovered = self.rec.recoveries.step_halving != halvings;
        self.rec.impulses.push(match options.plant {
            GraspPlant::Stepper if !recovered => {
                nonsmooth_sim::StepImpulses::of_last_step(self.sim.stepper(), model, dt)
            }
            GraspPlant::Stepper => None,
            GraspPlant::NoSlip => None,
        });
        // Sensed generalized contact force over the step: M (v⁺ − v)/h − f − Pᵀu.
        let sensed = &snap.mass_matrix * (&next.v - &state.v) / dt - &snap.forces - &gen_u;
        self.controller.observe(&sensed);
        self.rec.torques.push(u);
        Ok(next)
    }

    /// One control step from `state` at `t`: sense, record, solve, actuate.
    fn step(&mut self, t: f64, state: &State) -> Result<State, Halt> {
        let reference: JointReference = self.plan.reference(t, self.options.finger_closure)?;
        let snap = self.sense(t, state)?;
        self.record(t, state, &snap, &reference)?;
        let u = self.solve(t, &snap, &reference)?;
        self.actuate(t, state, &snap, u)
    }

    /// Closes the record: a failure stops the run early; the chatter statistics.
    fn finish(mut self) -> GraspRecord {
        let rec = &mut self.rec;
        if rec.failure.is_some() {
            rec.stopped_early = true;
        }
        rec.impulses.resize(rec.states.len(), None);
        rec.chatter_fraction = self.chatter.reversals() as f64 / rec.torques.len().max(1) as f64;
        rec.chattered = self.chatter.chatters(self.options.chatter_run_steps);
        rec.longest_reversal_run = self.chatter.longest_run();
        self.rec
    }
}

/// Checks the options' step and duration and that `plan` drives `model`'s actuators.
fn check_grasp_inputs(
    model: &Model,
    plan: &GraspPlan,
    options: &GraspOptions,
) -> Result<(), GraspError> {
    if !(options.dt > 0.0
        && options.dt.is_finite()
        && options.duration >= 0.0
        && options.duration.is_finite())
    {
        return Err(GraspError::Invalid(format!(
            "bad step {} or duration {}",
            options.dt, options.duration
        )));
    }
    if plan.home.len() != model.nu() {
        return Err(GraspError::Invalid(format!(
            "plan has {} actuators, model {}",
            plan.home.len(),
            model.nu()
        )));
    }
    Ok(())
}

/// Fills the controller's sensed-force history before t = 0 with the contact force of the
/// static grasp at `state` (twice), if it solves.
fn observe_static_grasp(
    model: &Model,
    controller: &mut dyn Controller,
    state: &State,
    options: &GraspOptions,
) {
    if let Ok((problem, sol)) = static_grasp(
        model,
        state,
        options.dt,
        options.contact_gap,
        Variant::QpCoulomb,
    ) {
        let g = predicted_contact_force(&problem, &sol);
        controller.observe(&g);
        controller.observe(&g);
    }
}

/// Runs `controller` on the grasp plant `model` (from its initial state, the box held at
/// rest between the four fingertips) tracking `plan`, with the options' stepper at a fixed
/// step. Actuation as in the locomotion loop: `v ← v + Δt M⁻¹ Pᵀ u` (zero-order hold), then
/// one passive step of the stepper. Before t = 0 the hand is taken to have held the box
/// statically: the controller's sensed-force history ([`Controller::observe`]) is filled
/// with the contact force of [`static_grasp`] (the delayed baselines need it; the others
/// ignore it).
///
/// Drop: the box's displacement in the palm frame exceeds [`GraspOptions::drop_slip`];
/// the run goes on until [`GraspOptions::stop_slip`]. Chatter: as the locomotion loop (a
/// joint whose |Δu/Δt| exceeds [`GraspOptions::chatter_rate`] on two consecutive steps with
/// opposite signs; the run chatters when [`GraspOptions::chatter_run_steps`] consecutive
/// steps have one).
///
/// # Errors
/// [`GraspError::Invalid`] for bad options or a model without palm/box; stepper names
/// that do not exist. Failures during the run are recorded in [`GraspRecord::failure`].
pub fn run_grasp(
    model: &Model,
    controller: &mut dyn Controller,
    plan: &GraspPlan,
    options: &GraspOptions,
) -> Result<GraspRecord, GraspError> {
    check_grasp_inputs(model, plan, options)?;
    let (palm, bx) = palm_and_box(model)?;
    let dt = options.dt;
    let sim = nonsmooth_sim::Simulator::borrowing(model, stepper_by_name(&options.stepper)?, dt)?;
    let steps = (options.duration / dt).round() as usize;
    let limits: Vec<(f64, f64)> = model
        .actuators
        .iter()
        .map(|a| a.effort_limit.unwrap_or((f64::NEG_INFINITY, f64::INFINITY)))
        .collect();
    let mut state = model.initial_state.clone();
    let (palm0, box0) = poses(model, &state.q, palm, bx);
    let rel0 = palm0.inverse_transform_point(&Point3::from(box0)).coords;
    // Sensor history before t = 0: the static grasp.
    observe_static_grasp(model, controller, &state, options);
    let arm: Vec<usize> = (0..model.nu())
        .filter(|i| !plan.fingers.contains(i))
        .collect();
    let mut gl = GraspLoop {
        model,
        controller,
        plan,
        options,
        sim,
        palm_and_box: (palm, bx),
        rel0,
        arm,
        limits,
        chatter: crate::controllers::ChatterCounter::new(options.chatter_rate),
        rec: GraspRecord::default(),
    };
    for k in 0..steps {
        let t = k as f64 * dt;
        match gl.step(t, &state) {
            Ok(next) => state = next,
            Err(Halt::Failure(reason)) => {
                gl.rec.failure = Some(reason);
                break;
            }
            Err(Halt::SlippedOut) => {
                gl.rec.stopped_early = true;
                break;
            }
            Err(Halt::Error(e)) => return Err(e),
        }
    }
    Ok(gl.finish())
}

/// Runs controller `id` ([`grasp_controller`], [`finger_closure`]) on the reference model
/// with friction case `friction`, tracking `plan` for `duration` seconds (other options as
/// [`GraspOptions::new`]).
///
/// # Errors
/// As [`grasp_controller`] (unknown id), [`arm_hand_box_model`] and [`run_grasp`].
pub fn run_grasp_task(
    id: &str,
    friction: GraspFriction,
    plan: &GraspPlan,
    duration: f64,
) -> Result<GraspRecord, GraspError> {
    run_grasp_task_with(id, friction, plan, GraspOptions::new(duration))
}

/// [`run_grasp_task`] with explicit options (their finger closure is replaced by
/// [`finger_closure`]`(id)`).
///
/// # Errors
/// As [`run_grasp_task`].
pub fn run_grasp_task_with(
    id: &str,
    friction: GraspFriction,
    plan: &GraspPlan,
    mut options: GraspOptions,
) -> Result<GraspRecord, GraspError> {
    let model = grasp_model(&arm_hand_box_model()?, friction);
    let mut c = grasp_controller(id)?;
    options.finger_closure = finger_closure(id);
    run_grasp(&model, c.as_mut(), plan, &options)
}
