//! Terrains and the closed loop (controller + time stepper) with fall and chatter detection.

use nalgebra::{DVector, Vector3};
use nonsmooth_core::dynamics::kinematics;
use nonsmooth_core::{ContactSnapshot, HeightMap, JointKind, Model, Shape, State};
use nonsmooth_sim::{
    stepper_by_name, Actuation, PenaltyIntegrator, PenaltyStepper, SimError, Stepper,
};

use super::GaitPlanner;
use crate::controllers::{
    actuated_positions, actuated_velocities, ControlInput, Controller, JointReference,
};
use crate::error::ControlError;

/// Errors of the locomotion testbed.
#[derive(Debug, thiserror::Error)]
pub enum LocoError {
    /// A controller or planner error.
    #[error(transparent)]
    Control(#[from] ControlError),
    /// A simulator error.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// A model error.
    #[error(transparent)]
    Model(#[from] nonsmooth_core::ModelError),
    /// Invalid testbed input.
    #[error("{0}")]
    Invalid(String),
}

/// A planar terrain of the paper (paper §7.5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Terrain {
    /// Metric id (`rigid_mu0_1`, ...).
    pub id: &'static str,
    /// Rigid (Anitescu–Potra LCP stepping) or compliant (penalty spring–damper).
    pub rigid: bool,
    /// Coulomb friction μ; "μ = ∞" is represented by [`Terrain::MU_INF`].
    pub friction: f64,
    /// Amplitude (m) of the smooth bumps of a height-map terrain ([`HEIGHTMAP_TERRAIN`]);
    /// 0 for the flat terrains.
    pub bumps: f64,
}

impl Terrain {
    /// The finite μ standing for "μ = ∞" in the simulator (friction cone half-angle 89.4°;
    /// the pyramid LCP needs a finite μ). Controllers cap what they assume at 1.5.
    pub const MU_INF: f64 = 100.0;
    /// Ground stiffness of the compliant terrains (N/m): about 1 mm penetration per foot at
    /// rest for the 4.8 kg robot on 4 feet (paper §7.5).
    pub const STIFFNESS: f64 = 1.2e4;
    /// Ground damping of the compliant terrains (N·s/m), below the explicit-damping limit
    /// of a 0.1 kg shank at 1 ms steps.
    pub const DAMPING: f64 = 50.0;

    /// The finite μ standing for "μ = ∞" on compliant ground: the penalty stepper's
    /// regularized (viscous below [`LoopOptions::friction_regularization`]) friction with
    /// μ = 100 is explicitly unstable at 1 ms steps, so the sticky compliant terrain uses
    /// μ = 2 (stiction up to a 63° cone).
    pub const MU_INF_COMPLIANT: f64 = 2.0;

    /// The stepper name used for this terrain: `anitescu-potra` (rigid) or
    /// `penalty-symplectic` (compliant spring–damper ground).
    pub fn stepper(&self) -> &'static str {
        if self.rigid {
            "anitescu-potra"
        } else {
            "penalty-symplectic"
        }
    }
}

/// The four planar terrains: rigid/compliant × μ = 0.1/∞.
pub const TERRAINS: [Terrain; 4] = [
    Terrain {
        id: "rigid_mu0_1",
        rigid: true,
        friction: 0.1,
        bumps: 0.0,
    },
    Terrain {
        id: "rigid_muinf",
        rigid: true,
        friction: Terrain::MU_INF,
        bumps: 0.0,
    },
    Terrain {
        id: "compliant_mu0_1",
        rigid: false,
        friction: 0.1,
        bumps: 0.0,
    },
    Terrain {
        id: "compliant_muinf",
        rigid: false,
        friction: Terrain::MU_INF_COMPLIANT,
        bumps: 0.0,
    },
];

/// A rigid height-map terrain (paper §7.5: the paper's rough terrain is a rigid height map
/// with bumps up to about ⅕ of the robot's height and non-vertical normals): the smooth
/// field `h(x, y) = A r(x) sin(2π x / 0.25 m) cos(2π y / 0.3 m)` with A = 8 mm, r a
/// smoothstep from 0 at x = 0.15 m to 1 at x = 0.35 m (flat under the initial stance),
/// sampled on a 1 cm grid over x ∈ [−0.5, 2.5] m, y ∈ [−0.6, 0.6] m and interpolated
/// bilinearly; the contact normal comes from the interpolated gradient
/// (`nonsmooth_core::geometry::heightmap_surface_eval`). μ = 1 (the paper draws μ per
/// location from U(0.1, 1.5); one material here). Stepped by `anitescu-potra`.
pub const HEIGHTMAP_TERRAIN: Terrain = Terrain {
    id: "heightmap_rigid",
    rigid: true,
    friction: 1.0,
    bumps: 0.008,
};

/// The terrain called `id`: one of [`TERRAINS`] or [`HEIGHTMAP_TERRAIN`].
///
/// # Errors
/// [`LocoError::Invalid`] naming the unknown id and the known ones.
pub fn terrain_by_id(id: &str) -> Result<Terrain, LocoError> {
    let all = || TERRAINS.iter().chain(std::iter::once(&HEIGHTMAP_TERRAIN));
    all().find(|t| t.id == id).copied().ok_or_else(|| {
        let known: Vec<&str> = all().map(|t| t.id).collect();
        LocoError::Invalid(format!(
            "unknown terrain `{id}` (known: {})",
            known.join(", ")
        ))
    })
}

/// The reference quadruped of the experiments of Zapolsky & Drumwright
/// (`examples/id_quadruped.toml`).
///
/// # Errors
/// A [`nonsmooth_core::ModelError`] if the bundled file does not load (a build defect).
pub fn reference_quadruped() -> Result<Model, nonsmooth_core::ModelError> {
    Model::from_toml_str(
        include_str!("../../../../examples/id_quadruped.toml"),
        Some("examples/id_quadruped.toml"),
    )
}

/// One trot as the experiments of Zapolsky & Drumwright run it, named the way a user names it (the
/// front ends `nonsmooth walk` and Python's `walk` share it through [`run_trot`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TrotSpec {
    /// Controller id (`crate::controllers::CONTROLLER_IDS`).
    pub controller: String,
    /// Terrain id ([`terrain_by_id`]).
    pub terrain: String,
    /// Simulated time (s), positive.
    pub duration: f64,
    /// Duty factor of the trot, in (0, 1).
    pub duty: f64,
    /// Largest friction coefficient an ID(tᵢ) controller assumes (`None`: the authors' 1.5).
    pub friction_cap: Option<f64>,
    /// [`LoopOptions::time_of_contact`].
    pub time_of_contact: bool,
    /// ID(tᵢ) controllers: θ̈_des from the post-impact velocity
    /// ([`crate::controllers::BaseFeedback::impact_consistent`]).
    pub impact_consistent: bool,
}

/// What [`run_trot`] ran and recorded.
#[derive(Debug, Clone)]
pub struct TrotRun {
    /// The terrain.
    pub terrain: Terrain,
    /// The loop options used.
    pub options: LoopOptions,
    /// The record.
    pub record: LoopRecord,
}

/// Runs `spec` on `model` (the reference quadruped or one with its leg geometry): the
/// terrain's model and stepper, the controller of [`crate::controllers::controller_with_options`],
/// the trot of [`GaitPlanner::trot`], 1 ms steps ([`LoopOptions::new`]).
///
/// # Errors
/// [`LocoError::Invalid`] for a non-positive duration, a duty outside (0, 1), an unknown
/// terrain, and the errors of [`run_closed_loop`]; [`LocoError::Control`] for an unknown
/// controller or a bad friction cap.
pub fn run_trot(model: &Model, spec: &TrotSpec) -> Result<TrotRun, LocoError> {
    if !(spec.duration.is_finite() && spec.duration > 0.0) {
        return Err(LocoError::Invalid(format!(
            "duration must be positive and finite, got {}",
            spec.duration
        )));
    }
    if !(spec.duty > 0.0 && spec.duty < 1.0) {
        return Err(LocoError::Invalid(format!(
            "duty must lie in (0, 1), got {}",
            spec.duty
        )));
    }
    let terrain = terrain_by_id(&spec.terrain)?;
    let mut controller = crate::controllers::controller_with_options(
        &spec.controller,
        terrain.rigid,
        &crate::controllers::IdSettings {
            friction_cap: spec.friction_cap,
            impact_consistent: spec.impact_consistent,
        },
    )?;
    let mut options = LoopOptions::new(spec.duration, terrain.stepper());
    options.time_of_contact = spec.time_of_contact;
    let record = run_closed_loop(
        &terrain_model(model, &terrain),
        controller.as_mut(),
        &GaitPlanner::trot(spec.duty),
        &options,
    )?;
    Ok(TrotRun {
        terrain,
        options,
        record,
    })
}

/// The height field of [`HEIGHTMAP_TERRAIN`] with amplitude `amplitude` (m).
pub fn bumpy_height_map(amplitude: f64) -> HeightMap {
    let (x0, y0, d) = (-0.5, -0.6, 0.01);
    let (nx, ny) = (301, 121);
    let heights = (0..ny)
        .map(|iy| {
            let y = y0 + iy as f64 * d;
            (0..nx)
                .map(|ix| {
                    let x = x0 + ix as f64 * d;
                    let s = ((x - 0.15) / 0.2).clamp(0.0, 1.0);
                    let ramp = s * s * (3.0 - 2.0 * s);
                    amplitude
                        * ramp
                        * (2.0 * std::f64::consts::PI * x / 0.25).sin()
                        * (2.0 * std::f64::consts::PI * y / 0.3).cos()
                })
                .collect()
        })
        .collect();
    HeightMap {
        x0,
        y0,
        dx: d,
        dy: d,
        heights,
    }
}

/// `model` with every material's μ set to the terrain's, the world planes replaced by the
/// height field for a height-map terrain ([`HEIGHTMAP_TERRAIN`]) and, for a compliant terrain, the
/// material of the world colliders given [`Terrain::STIFFNESS`] and [`Terrain::DAMPING`]
/// (robot materials stay rigid, so the pair is the ground's spring–damper), with a floating
/// root lowered to the spring ground's static equilibrium (m g / (n K) for the n initial
/// contacts).
pub fn terrain_model(model: &Model, terrain: &Terrain) -> Model {
    let mut m = model.clone();
    for mat in &mut m.materials {
        mat.friction = terrain.friction;
        mat.stiffness = None;
        mat.damping = None;
    }
    if terrain.bumps > 0.0 {
        for c in m.colliders.iter_mut().filter(|c| c.body.is_none()) {
            if matches!(c.shape, Shape::Plane { .. }) {
                c.shape = Shape::HeightMap(bumpy_height_map(terrain.bumps));
            }
        }
    }
    if !terrain.rigid {
        let ground: Vec<usize> = m
            .colliders
            .iter()
            .filter(|c| c.body.is_none())
            .map(|c| c.material)
            .collect();
        for g in ground {
            if let Some(mat) = m.materials.get_mut(g) {
                mat.stiffness = Some(Terrain::STIFFNESS);
                mat.damping = Some(Terrain::DAMPING);
            }
        }
        // Start at the static equilibrium of the spring ground: lower a floating root by
        // m g / (n K) for the n contacts touching the ground initially (≈ 1 mm here), so the
        // controllers do not start from an unloaded ground that drops the robot.
        let floating = m
            .joints
            .first()
            .is_some_and(|j| j.parent.is_none() && matches!(j.kind, JointKind::Floating));
        if floating {
            let s = &m.initial_state;
            if let Ok(snap) = ContactSnapshot::new(&m, &s.q, &s.v, s.t) {
                let n = snap.contacts.iter().filter(|c| c.gap <= 1e-9).count();
                let mass: f64 = m.bodies.iter().map(|b| b.mass).sum();
                let g = m.gravity.norm();
                if n > 0 {
                    let qi = m.joints[0].q_index + 2;
                    m.initial_state.q[qi] -= mass * g / (n as f64 * Terrain::STIFFNESS);
                }
            }
        }
    }
    m
}

/// Options of [`run_closed_loop`].
#[derive(Debug, Clone, PartialEq)]
pub struct LoopOptions {
    /// Simulation and control step (s).
    pub dt: f64,
    /// Simulated duration (s).
    pub duration: f64,
    /// Stepper name (see `nonsmooth_sim::STEPPER_NAMES`).
    pub stepper: String,
    /// Record the CoM and the feet every this many steps.
    pub record_every: usize,
    /// Torque-rate threshold of a reversal (N·m/s).
    pub chatter_rate: f64,
    /// Consecutive reversal steps from which the run chatters
    /// ([`crate::controllers::CHATTER_RUN_STEPS`]).
    pub chatter_run_steps: usize,
    /// Friction regularization speed of the `penalty-symplectic` stepper (m/s).
    pub friction_regularization: f64,
    /// Plant sub-steps per control step (the actuator torque is held over the control step):
    /// the explicit spring–damper ground and its regularized friction need steps well below
    /// 1 ms on the light feet (see [`LoopOptions::new`]).
    pub substeps: usize,
    /// Split a plant step at the time of contact of a contact that closes during it
    /// ([`time_of_contact`]), so that landings are inelastic impacts at the contact instant
    /// (the paper's simulator, Moby, detects the time of contact, §7.4); off keeps the plain
    /// fixed-step scheme, whose stabilization φ/h closes the contact at the step's end and
    /// stops it during the next step.
    pub time_of_contact: bool,
}

impl LoopOptions {
    /// 1 ms steps, the given duration and stepper, record every 10 steps, chatter at 10
    /// consecutive steps of reversals above 500 N·m/s, penalty friction
    /// regularized below 2 cm/s, and 10 plant sub-steps (0.1 ms) for the penalty steppers
    /// (`penalty-*`), 1 otherwise. The explicit penalty ground is only conditionally stable:
    /// its regularized friction is a viscous force μ f_N / v_reg ≈ 2 · 24 N / 0.02 m/s on the
    /// light feet at μ = 2, and at 1 ms steps the sticky compliant terrain went unstable under
    /// every controller (PID fell at 1.53 s); at 0.2 ms it is stable, 0.1 ms keeps a margin.
    pub fn new(duration: f64, stepper: &str) -> Self {
        Self {
            dt: 1e-3,
            duration,
            stepper: stepper.to_string(),
            record_every: 10,
            chatter_rate: 500.0,
            chatter_run_steps: crate::controllers::CHATTER_RUN_STEPS,
            friction_regularization: 0.02,
            substeps: if stepper.starts_with("penalty-") {
                10
            } else {
                1
            },
            time_of_contact: false,
        }
    }
}

/// What a closed-loop run recorded.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LoopRecord {
    /// Control instants.
    pub t: Vec<f64>,
    /// Mean |θ − θ_des| over the joints at each instant (rad).
    pub pos_err: Vec<f64>,
    /// Mean |θ̇ − θ̇_des| over the joints at each instant (rad/s).
    pub vel_err: Vec<f64>,
    /// Applied (clipped) torques at each instant.
    pub torques: Vec<DVector<f64>>,
    /// Sensed Σf_N over each step (N), from the trunk's vertical generalized contact force.
    pub sensed_normal: Vec<f64>,
    /// The controller's predicted Σf_N for each step, if it predicts one.
    pub predicted_normal: Vec<Option<f64>>,
    /// (t, CoM) every `record_every` steps.
    pub com: Vec<(f64, Vector3<f64>)>,
    /// (t, trunk position, feet positions) every `record_every` steps.
    pub frames: Vec<(f64, Vector3<f64>, Vec<Vector3<f64>>)>,
    /// The plant's state every `record_every` steps and at the end (for the trajectory
    /// viewer).
    pub states: Vec<State>,
    /// Whether (and when) the robot fell.
    pub fell: Option<f64>,
    /// Why it fell.
    pub fall_reason: Option<String>,
    /// Fraction of steps with a torque reversal.
    pub chatter_fraction: f64,
    /// Whether the run chattered ([`LoopOptions::chatter_run_steps`] consecutive reversals).
    pub chattered: bool,
    /// Most consecutive steps with a torque reversal
    /// ([`crate::controllers::ChatterCounter::longest_run`]).
    pub longest_reversal_run: usize,
    /// Distance the trunk travelled along the world x axis (the walking direction), from
    /// the start to the end of the run (or to the fall) (m).
    pub travel: f64,
    /// Distance the gait plan asked for over the same time ([`GaitPlanner::odometer`]) (m).
    pub planned_travel: f64,
    /// Plant steps that failed and were recovered by smaller steps, and the other
    /// recoveries of the stepper ([`nonsmooth_sim::Recoveries`]).
    pub recoveries: nonsmooth_sim::Recoveries,
}

impl LoopRecord {
    /// Mean position error over the run (rad).
    pub fn mean_pos_err(&self) -> f64 {
        mean(&self.pos_err)
    }

    /// Mean velocity error over the run (rad/s).
    pub fn mean_vel_err(&self) -> f64 {
        mean(&self.vel_err)
    }

    /// Fraction of the planned distance that the trunk travelled
    /// ([`LoopRecord::travel`] / [`LoopRecord::planned_travel`]); 0 before the plan moves.
    /// A trot in place, or backwards, has a fraction near or below 0 whatever its joint
    /// tracking error.
    pub fn progress(&self) -> f64 {
        if self.planned_travel > 0.0 {
            self.travel / self.planned_travel
        } else {
            0.0
        }
    }

    /// E|Δτ|: mean over steps and joints of |u_k − u_{k−1}|/Δt (N·m/s).
    pub fn mean_dtau(&self, dt: f64) -> f64 {
        let d: Vec<f64> = self
            .torques
            .windows(2)
            .map(|w| (&w[1] - &w[0]).abs().mean() / dt)
            .collect();
        mean(&d)
    }

    /// E|τ|: mean over steps and joints of |u| (N·m).
    pub fn mean_tau(&self) -> f64 {
        let d: Vec<f64> = self.torques.iter().map(|u| u.abs().mean()).collect();
        mean(&d)
    }

    /// Table 5 error: mean |Σf_N,pred − Σf_N,sensed| and its ratio to the mean sensed Σf_N,
    /// over the steps with a prediction; `None` without predictions.
    pub fn force_error(&self) -> Option<(f64, f64)> {
        let pairs: Vec<(f64, f64)> = self
            .predicted_normal
            .iter()
            .zip(&self.sensed_normal)
            .filter_map(|(p, s)| p.map(|p| (p, *s)))
            .collect();
        if pairs.is_empty() {
            return None;
        }
        let abs = mean(&pairs.iter().map(|(p, s)| (p - s).abs()).collect::<Vec<_>>());
        let base = mean(&pairs.iter().map(|(_, s)| s.abs()).collect::<Vec<_>>());
        Some((abs, abs / base.max(1e-12)))
    }
}

fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        x.iter().sum::<f64>() / x.len() as f64
    }
}

fn center_of_mass(model: &Model, q: &DVector<f64>) -> Vector3<f64> {
    let kin = kinematics(model, q, &DVector::zeros(model.nv()));
    let mut c = Vector3::zeros();
    let mut m = 0.0;
    for (b, pose) in model.bodies.iter().zip(&kin.poses) {
        c += (pose * nalgebra::Point3::from(b.com)).coords * b.mass;
        m += b.mass;
    }
    c / m.max(1e-300)
}

fn feet_positions(model: &Model, q: &DVector<f64>) -> Vec<Vector3<f64>> {
    let kin = kinematics(model, q, &DVector::zeros(model.nv()));
    model
        .colliders
        .iter()
        .filter_map(|c| c.body.map(|b| (kin.poses[b] * c.pose).translation.vector))
        .collect()
}

/// The first time of contact within a step of length `h` (s), to first order: among the
/// contacts of `snap` that are open (gap above [`TOI_MIN_GAP`]) and close during the step at
/// the free velocity `v` (`φ + h n·v < 0`), the smallest `φ / (−n·v)`. `None` when no contact
/// closes, or when the first one closes within the first or the last [`TOI_MIN_FRACTION`] of
/// the step (a split there changes nothing measurable and only costs a solve).
pub fn time_of_contact(snap: &ContactSnapshot<f64>, v: &DVector<f64>, h: f64) -> Option<f64> {
    let t = snap
        .contacts
        .iter()
        .filter(|c| c.gap > TOI_MIN_GAP)
        .filter_map(|c| {
            let vn = c.rows.normal.dot(v);
            (vn < 0.0 && c.gap + h * vn < 0.0).then(|| c.gap / -vn)
        })
        .fold(f64::INFINITY, f64::min);
    (t > TOI_MIN_FRACTION * h && t < (1.0 - TOI_MIN_FRACTION) * h).then_some(t)
}

/// Gaps at or below this (m) count as closed for [`time_of_contact`] (a resting foot).
pub const TOI_MIN_GAP: f64 = 1e-8;
/// Splits closer than this fraction of the step to either end are skipped
/// ([`time_of_contact`]).
pub const TOI_MIN_FRACTION: f64 = 1e-3;
/// At most this many time-of-contact splits per plant sub-step.
const TOI_MAX_SPLITS: usize = 4;

/// One plant step of length `h` from `state` with the generalized actuator force `gen_u`
/// held, applied by the stepper inside its step (`Stepper::step_actuated`). With
/// `time_of_contact`, a contact that closes during the step splits it at its time of contact
/// ([`time_of_contact`]): the part before it moves the contact onto the surface without an
/// impulse (its φ/h_a term equals its approach speed), the rest starts with it closed, so the
/// stepper resolves the landing as an inelastic impact at the contact instant, the way an
/// event-driven simulator with time-of-contact detection (the paper's Moby, §7.4) does, instead
/// of spreading it over the step's end and the next step.
fn plant_substep(
    model: &Model,
    plant: &mut Plant<'_>,
    state: &State,
    first: Option<(
        &ContactSnapshot<f64>,
        &nalgebra::Cholesky<f64, nalgebra::Dyn>,
    )>,
    gen_u: &DVector<f64>,
    h: f64,
    time_of_contact_split: bool,
) -> Result<State, LocoError> {
    let mut s = state.clone();
    let mut left = h;
    let mut reuse = first;
    for split in 0..=TOI_MAX_SPLITS {
        let owned;
        let (sn, ch) = match reuse.take() {
            Some(pair) => pair,
            None => {
                let sn = ContactSnapshot::new(model, &s.q, &s.v, s.t)?;
                let ch = sn.mass_matrix.clone().cholesky().ok_or_else(|| {
                    LocoError::Invalid("mass matrix not positive definite".into())
                })?;
                owned = (sn, ch);
                (&owned.0, &owned.1)
            }
        };
        let mut hs = left;
        if time_of_contact_split && split < TOI_MAX_SPLITS {
            // the actuated free velocity v + h M⁻¹ (f + Pᵀu) predicts which contact closes
            let free = &s.v + ch.solve(&(&sn.forces + gen_u)) * hs;
            if let Some(t) = time_of_contact(sn, &free, hs) {
                hs = t;
            }
        }
        s = plant.step(&s, &Actuation::from_generalized_force(gen_u.clone()), hs)?;
        left -= hs;
        if left <= TOI_MIN_FRACTION * h {
            break;
        }
    }
    Ok(s)
}

/// The plant: the model stepped by the one time loop ([`nonsmooth_sim::Simulator`]), which
/// recovers failed steps by smaller steps and counts them.
struct Plant<'a> {
    sim: nonsmooth_sim::Simulator<'a>,
}

impl<'a> Plant<'a> {
    fn new(model: &'a Model, stepper: Box<dyn Stepper>, dt: f64) -> Result<Self, LocoError> {
        Ok(Self {
            sim: nonsmooth_sim::Simulator::borrowing(model, stepper, dt)?,
        })
    }

    /// One step of `h` from `state` with `input` applied.
    fn step(
        &mut self,
        state: &State,
        input: &Actuation,
        h: f64,
    ) -> Result<State, nonsmooth_sim::SimError> {
        self.sim.set_state(state.clone())?;
        self.sim.advance(input, h)?;
        Ok(self.sim.state().clone())
    }
}

/// How the plant advances over one control step: `substeps` steps of `dt / substeps`, each
/// split at its time of contact when `time_of_contact_split` is set ([`plant_substep`]).
#[derive(Debug, Clone, Copy)]
struct ControlStepping {
    /// The control step (s).
    dt: f64,
    /// Plant steps per control step (at least 1).
    substeps: usize,
    /// Whether a plant step is split at the time of contact of a closing contact.
    time_of_contact_split: bool,
}

/// One control step of the plant: `stepping.substeps` steps of `dt / substeps`
/// ([`plant_substep`]), each with the same generalized actuator force `gen_u = Pᵀu`
/// (zero-order hold of the torque over the control step). `snap` and `chol` are the
/// snapshot and Cholesky factor at `state` (reused for the first sub-step).
fn step_plant(
    model: &Model,
    plant: &mut Plant<'_>,
    state: &State,
    snap: &ContactSnapshot<f64>,
    chol: &nalgebra::Cholesky<f64, nalgebra::Dyn>,
    gen_u: &DVector<f64>,
    stepping: &ControlStepping,
) -> Result<State, LocoError> {
    let ControlStepping {
        dt,
        substeps,
        time_of_contact_split,
    } = *stepping;
    let h = dt / substeps as f64;
    let mut s = plant_substep(
        model,
        plant,
        state,
        Some((snap, chol)),
        gen_u,
        h,
        time_of_contact_split,
    )?;
    for _ in 1..substeps {
        s = plant_substep(model, plant, &s, None, gen_u, h, time_of_contact_split)?;
    }
    Ok(s)
}

/// Why and when a run fell: recorded in [`LoopRecord::fell`] and [`LoopRecord::fall_reason`].
struct Fall {
    /// The time of the fall (s).
    t: f64,
    /// What failed or how the trunk fell.
    reason: String,
}

/// The closed loop's parts between steps: the plant, the controller and what it may exert,
/// the chatter counter and the record.
struct ClosedLoop<'a, 'c> {
    /// The robot.
    model: &'a Model,
    /// The controller under test.
    controller: &'c mut dyn Controller,
    /// The stepped plant.
    plant: Plant<'a>,
    /// How the plant advances over a control step.
    stepping: ControlStepping,
    /// The actuators' effort limits (lower, upper).
    limits: Vec<(f64, f64)>,
    /// The torque-reversal counter.
    chatter: crate::controllers::ChatterCounter,
    /// The record so far.
    rec: LoopRecord,
}

impl ClosedLoop<'_, '_> {
    /// Records the trunk frame, the feet, the center of mass and the state at `t`.
    fn record_frame(&mut self, t: f64, state: &State) {
        let model = self.model;
        self.rec.com.push((t, center_of_mass(model, &state.q)));
        self.rec.frames.push((
            t,
            state.q.fixed_rows::<3>(0).into_owned(),
            feet_positions(model, &state.q),
        ));
        self.rec.states.push(state.clone());
    }

    /// Sense: the contact snapshot at `state`, and the tracking errors against `reference`.
    fn sense(
        &mut self,
        t: f64,
        state: &State,
        reference: &JointReference,
    ) -> Result<ContactSnapshot<f64>, Fall> {
        let model = self.model;
        let snap = ContactSnapshot::new(model, &state.q, &state.v, t).map_err(|e| Fall {
            t,
            reason: format!("snapshot: {e}"),
        })?;
        let theta = actuated_positions(model, &state.q);
        let theta_d = actuated_velocities(model, &state.v);
        self.rec.t.push(t);
        self.rec.pos_err.push((&theta - &reference.q).abs().mean());
        self.rec
            .vel_err
            .push((&theta_d - &reference.qd).abs().mean());
        Ok(snap)
    }

    /// Solve: the controller's torques, clipped to the effort limits and observed by the
    /// chatter counter.
    fn solve(
        &mut self,
        t: f64,
        snap: &ContactSnapshot<f64>,
        reference: &JointReference,
    ) -> Result<DVector<f64>, Fall> {
        let dt = self.stepping.dt;
        let input = ControlInput {
            model: self.model,
            snapshot: snap,
            reference,
            dt,
        };
        let mut u = match self.controller.control(&input) {
            Ok(u) if u.iter().all(|x| x.is_finite()) => u,
            Ok(_) => {
                return Err(Fall {
                    t,
                    reason: "controller returned non-finite torques".into(),
                })
            }
            Err(e) => {
                return Err(Fall {
                    t,
                    reason: format!("controller: {e}"),
                })
            }
        };
        for (x, (lo, hi)) in u.iter_mut().zip(&self.limits) {
            *x = x.clamp(*lo, *hi);
        }
        self.chatter.observe(&u, dt);
        self.rec
            .predicted_normal
            .push(self.controller.predicted_normal_force());
        Ok(u)
    }

    /// Actuate: one control step of the plant under the torques `u` from `state`; then the
    /// sensed generalized contact force goes to the controller and the record.
    fn actuate(
        &mut self,
        t: f64,
        state: &State,
        snap: &ContactSnapshot<f64>,
        u: DVector<f64>,
    ) -> Result<State, Fall> {
        let dt = self.stepping.dt;
        let gen_u = &snap.actuation * &u;
        let chol = snap.mass_matrix.clone().cholesky().ok_or_else(|| Fall {
            t,
            reason: "mass matrix not positive definite".into(),
        })?;
        let next = step_plant(
            self.model,
            &mut self.plant,
            state,
            snap,
            &chol,
            &gen_u,
            &self.stepping,
        )
        .map_err(|e| Fall {
            t,
            reason: format!("stepper: {e}"),
        })?;
        // Sensed generalized contact force over the step: M (v⁺ − v)/h − f − Pᵀu.
        let sensed = &snap.mass_matrix * (&next.v - &state.v) / dt - &snap.forces - &gen_u;
        self.rec.sensed_normal.push(sensed[2]);
        self.controller.observe(&sensed);
        self.rec.torques.push(u);
        Ok(next)
    }

    /// One control step from `state` at `t` tracking `reference`: sense, solve, actuate.
    fn step(&mut self, t: f64, state: &State, reference: &JointReference) -> Result<State, Fall> {
        let snap = self.sense(t, state, reference)?;
        let u = self.solve(t, &snap, reference)?;
        self.actuate(t, state, &snap, u)
    }

    /// Closes the record at the final `state`: the last frame, the travel, the recoveries
    /// and the chatter statistics.
    fn finish(
        mut self,
        state: &State,
        planner: &GaitPlanner,
        chatter_run_steps: usize,
    ) -> LoopRecord {
        let model = self.model;
        let rec = &mut self.rec;
        rec.com.push((state.t, center_of_mass(model, &state.q)));
        if rec.states.last().map(|s| s.t) != Some(state.t) {
            rec.states.push(state.clone());
        }
        rec.travel = state.q[0] - model.initial_state.q[0];
        rec.planned_travel = planner.odometer(state.t);
        rec.recoveries = self.plant.sim.counters().recoveries;
        rec.chatter_fraction = self.chatter.reversals() as f64 / rec.torques.len().max(1) as f64;
        rec.chattered = self.chatter.chatters(chatter_run_steps);
        rec.longest_reversal_run = self.chatter.longest_run();
        self.rec
    }
}

/// A fall of the trunk in `state`: a non-finite state, or the trunk below half its
/// `nominal_height` or tilted past 45° (its up axis' z below 1/√2).
fn detect_fall(state: &State, nominal_height: f64) -> Option<Fall> {
    let (qi, qj) = (state.q[4], state.q[5]);
    let up = 1.0 - 2.0 * (qi * qi + qj * qj);
    if !state.q.iter().chain(state.v.iter()).all(|x| x.is_finite()) {
        return Some(Fall {
            t: state.t,
            reason: "non-finite state".into(),
        });
    }
    if state.q[2] < 0.5 * nominal_height || up < std::f64::consts::FRAC_1_SQRT_2 {
        return Some(Fall {
            t: state.t,
            reason: format!("trunk height {:.4} m, up-axis z {:.3}", state.q[2], up),
        });
    }
    None
}

/// Checks that `model` has a floating root and `options` a valid step and duration.
fn check_loop_inputs(model: &Model, options: &LoopOptions) -> Result<(), LocoError> {
    if model
        .joints
        .first()
        .map(|j| j.parent.is_some())
        .unwrap_or(true)
        || model.nv() < 6
    {
        return Err(LocoError::Invalid(
            "the locomotion loop needs a floating root body".into(),
        ));
    }
    if !(options.dt > 0.0 && options.dt.is_finite() && options.duration >= 0.0) {
        return Err(LocoError::Invalid(format!(
            "bad step {} or duration {}",
            options.dt, options.duration
        )));
    }
    Ok(())
}

/// The plant's stepper: the symplectic penalty stepper with the options' friction
/// regularization for `penalty-symplectic`, else the stepper of that name.
fn loop_stepper(options: &LoopOptions) -> Result<Box<dyn Stepper>, LocoError> {
    Ok(if options.stepper == "penalty-symplectic" {
        let mut p = PenaltyStepper::new(PenaltyIntegrator::SymplecticEuler);
        p.friction_regularization = options.friction_regularization;
        Box::new(p)
    } else {
        stepper_by_name(&options.stepper)?
    })
}

/// Checks that `planner` drives as many joints as `model` actuates.
fn check_plan_matches(model: &Model, planner: &GaitPlanner) -> Result<(), LocoError> {
    let planned = planner.reference(0.0)?.q.len();
    let actuated = actuated_positions(model, &model.initial_state.q).len();
    if actuated != planned {
        return Err(LocoError::Invalid(format!(
            "the gait plan drives {planned} joints ({} legs × 3) but model `{}` has {actuated} \
             actuated joints",
            planner.legs.len(),
            model.name
        )));
    }
    Ok(())
}

/// The actuators' effort limits (lower, upper); unlimited ones are infinite.
fn effort_limits(model: &Model) -> Vec<(f64, f64)> {
    model
        .actuators
        .iter()
        .map(|a| a.effort_limit.unwrap_or((f64::NEG_INFINITY, f64::INFINITY)))
        .collect()
}

/// Runs `controller` on `model` (floating trunk = body 0, first joint floating) tracking
/// `planner` with the stepper and options given, from the model's initial state.
///
/// # Errors
/// [`LocoError::Invalid`] for a model without a floating root, a model whose actuated joints
/// do not match the plan's, bad options, a stepper name that does not exist, or a planner
/// failure at t = 0. Falls (including stepper/controller
/// failures during the run) are recorded, not returned as errors.
pub fn run_closed_loop(
    model: &Model,
    controller: &mut dyn Controller,
    planner: &GaitPlanner,
    options: &LoopOptions,
) -> Result<LoopRecord, LocoError> {
    check_loop_inputs(model, options)?;
    let plant = Plant::new(model, loop_stepper(options)?, options.dt)?;
    let dt = options.dt;
    let steps = (options.duration / dt).round() as usize;
    let nominal_height = model.initial_state.q[2];
    let limits = effort_limits(model);
    let mut state = model.initial_state.clone();
    check_plan_matches(model, planner)?;
    let mut cl = ClosedLoop {
        model,
        controller,
        plant,
        stepping: ControlStepping {
            dt,
            substeps: options.substeps.max(1),
            time_of_contact_split: options.time_of_contact,
        },
        limits,
        chatter: crate::controllers::ChatterCounter::new(options.chatter_rate),
        rec: LoopRecord::default(),
    };
    let every = options.record_every.max(1);
    for k in 0..steps {
        let t = k as f64 * dt;
        if k % every == 0 {
            cl.record_frame(t, &state);
        }
        let reference: JointReference = planner.reference(t)?;
        let fall = match cl.step(t, &state, &reference) {
            Ok(next) => {
                state = next;
                detect_fall(&state, nominal_height)
            }
            Err(fall) => Some(fall),
        };
        if let Some(fall) = fall {
            cl.rec.fell = Some(fall.t);
            cl.rec.fall_reason = Some(fall.reason);
            break;
        }
    }
    Ok(cl.finish(&state, planner, options.chatter_run_steps))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nonsmooth_core::geometry::heightmap_surface_eval;

    fn quadruped() -> Model {
        Model::from_toml_str(include_str!("../../../../examples/id_quadruped.toml"), None).unwrap()
    }

    /// The quadruped 0.5 mm above the rigid ground, falling at 1 m/s with zero torques: its
    /// feet touch 0.5 ms into a 1 ms step.
    fn falling_quadruped() -> (Model, State) {
        let model = terrain_model(&quadruped(), &TERRAINS[1]);
        let mut s = model.initial_state.clone();
        s.q[2] += 5e-4;
        s.v[2] = -1.0;
        (model, s)
    }

    fn feet_normal_velocity_and_gap(model: &Model, s: &State) -> Vec<(f64, f64)> {
        let snap = ContactSnapshot::new(model, &s.q, &s.v, s.t).unwrap();
        snap.contacts
            .iter()
            .map(|c| (c.rows.normal.dot(&s.v), c.gap))
            .collect()
    }

    #[test]
    fn time_of_contact_is_the_first_closing_gap_over_the_approach_speed() {
        let (model, s) = falling_quadruped();
        let snap = ContactSnapshot::new(&model, &s.q, &s.v, 0.0).unwrap();
        let t = time_of_contact(&snap, &s.v, 1e-3).unwrap();
        assert!((t - 5e-4).abs() < 1e-12, "{t}");
        // A step too short to reach the ground, and a foot moving up, have none.
        assert!(time_of_contact(&snap, &s.v, 4e-4).is_none());
        assert!(time_of_contact(&snap, &(-&s.v), 1e-3).is_none());
    }

    #[test]
    fn time_of_contact_split_lands_the_feet_within_the_step() {
        let (model, s) = falling_quadruped();
        let snap = ContactSnapshot::new(&model, &s.q, &s.v, 0.0).unwrap();
        let chol = snap.mass_matrix.clone().cholesky().unwrap();
        let u = DVector::zeros(model.nv());
        let step = |split| {
            let mut plant =
                Plant::new(&model, stepper_by_name("anitescu-potra").unwrap(), 1e-3).unwrap();
            let stepping = ControlStepping {
                dt: 1e-3,
                substeps: 1,
                time_of_contact_split: split,
            };
            step_plant(&model, &mut plant, &s, &snap, &chol, &u, &stepping).unwrap()
        };
        // Fixed step: the stabilization φ/h closes the gaps at the step's end, and the feet
        // still approach the ground at φ/h = 0.5 m/s (their impact comes one step later).
        for (vn, gap) in feet_normal_velocity_and_gap(&model, &step(false)) {
            assert!((vn + 0.5).abs() < 1e-2 && gap.abs() < 1e-5, "{vn} {gap}");
        }
        // Split at the time of contact: flight for 0.5 ms, then the inelastic impact at the
        // contact instant, so the feet end the step at rest on the ground (up to the
        // first-order rotation of their normal rows while the passive legs fold: 7 mm/s).
        let landed = step(true);
        assert!((landed.t - 1e-3).abs() < 1e-15);
        for (vn, gap) in feet_normal_velocity_and_gap(&model, &landed) {
            assert!(vn.abs() < 2e-2 && gap.abs() < 1e-5, "{vn} {gap}");
        }
    }

    #[test]
    fn height_map_terrain_is_flat_under_the_stance_and_bumpy_ahead() {
        let map = bumpy_height_map(HEIGHTMAP_TERRAIN.bumps);
        // Flat (h = 0, vertical normal) before x = 0.15 m.
        let s = heightmap_surface_eval::<f64>(&map, 0.1, 0.05).unwrap();
        assert!(s.height.abs() < 1e-15 && (s.normal.z - 1.0).abs() < 1e-15);
        // Ahead: h = A sin(2πx/0.25) cos(2πy/0.3) up to the bilinear interpolation, and
        // the normal follows the gradient: n ∝ (−∂h/∂x, −∂h/∂y, 1).
        let a = HEIGHTMAP_TERRAIN.bumps;
        let s = heightmap_surface_eval::<f64>(&map, 0.5625, 0.0).unwrap();
        let want = a * (2.0 * std::f64::consts::PI * 0.5625 / 0.25).sin();
        assert!((s.height - want).abs() < 2e-4, "{} vs {want}", s.height);
        let s = heightmap_surface_eval::<f64>(&map, 0.505, 0.0).unwrap();
        let slope = a * 2.0 * std::f64::consts::PI / 0.25; // dh/dx at x = 0.5 (cos = 1)
        assert!((-s.normal.x / s.normal.z - slope).abs() < 0.02 * slope);
        // The terrain model replaces the ground plane; the robot starts on 4 flat contacts.
        let m = terrain_model(&quadruped(), &HEIGHTMAP_TERRAIN);
        assert!(m
            .colliders
            .iter()
            .any(|c| c.body.is_none() && matches!(c.shape, Shape::HeightMap(_))));
        let st = &m.initial_state;
        let snap = ContactSnapshot::new(&m, &st.q, &st.v, 0.0).unwrap();
        assert_eq!(snap.contacts.len(), 4);
        for c in &snap.contacts {
            assert!(c.gap.abs() < 1e-9 && (c.normal.z - 1.0).abs() < 1e-12);
        }
    }
}
