//! The in-memory description of a mechanical system: bodies, joints, colliders, contact
//! materials, bilateral constraints, actuators and the initial state.
//!
//! # Conventions (written once, used everywhere)
//! - Units are SI: m, kg, s, rad, N, N·m.
//! - Every body has exactly one parent joint; `joints[i].child == i`. Bodies are stored in
//!   topological order: a body's parent index is smaller than its own. `None` as a parent is
//!   the world. A free rigid body is a body whose parent joint is [`JointKind::Floating`]
//!   (3D) or [`JointKind::Planar`] (2D) attached to the world.
//! - Planar models ([`Dimension::Planar`]) live in the world x–y plane, rotate about world z,
//!   and their contacts have one tangent direction; gravity is usually (0, −g, 0).
//! - Generalized coordinates `q` (length `nq`) and velocities `v` (length `nv`) are the
//!   concatenation of the joints' coordinates in body order; `q̇ = N(q) v`.
//!   * revolute / prismatic: one angle / displacement along `axis` (joint frame);
//!   * planar: q = (x, y, θ), v = (ẋ, ẏ, θ̇), all in the joint frame (world for a root body);
//!   * floating: q = (x, y, z, w, i, j, k) (position of the body origin in the joint frame —
//!     the world frame for a free body with the default placement — and a unit quaternion,
//!     scalar first); v = (linear velocity of the body origin in the **joint** frame, angular
//!     velocity in the **body** frame), as in MuJoCo's free joint.
//! - Signs: a gap φ ≥ 0 means separation; a normal impulse ≥ 0 pushes bodies apart; the
//!   equations of motion read `M v̇ = f + Gᵀλ + Pᵀτ` (f includes gravity and −bias).

use crate::error::{Location, ModelError};
use nalgebra::{DVector, Isometry3, Matrix3, Unit, Vector3};
use serde::{Deserialize, Serialize};

/// Index of a body in [`Model::bodies`].
pub type BodyId = usize;

/// Spatial dimension of a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Dimension {
    /// Motion in the world x–y plane, rotation about z; one friction direction per contact.
    Planar,
    /// Full 3D motion; two friction directions per contact.
    #[default]
    Spatial,
}

/// A rigid body. Inertia is about the centre of mass, in body axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    /// Unique body name (used by joints, colliders and error messages).
    pub name: String,
    /// Mass (kg), > 0.
    pub mass: f64,
    /// Centre of mass in the body frame.
    pub com: Vector3<f64>,
    /// Rotational inertia about the centre of mass, expressed in body axes.
    pub inertia: Matrix3<f64>,
}

/// The kind of a joint and its coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JointKind {
    /// One rotation about `axis`.
    Revolute,
    /// One translation along `axis`.
    Prismatic,
    /// No relative motion.
    Fixed,
    /// Six degrees of freedom (position + unit quaternion).
    Floating,
    /// Three degrees of freedom in the joint frame's x–y plane: (x, y, θ about z).
    Planar,
    /// Three rotational degrees of freedom about the joint frame's origin: a unit quaternion
    /// `(w, x, y, z)` in `q`, the body-frame angular velocity in `v` (MJCF's `ball`).
    Ball,
}

impl JointKind {
    /// Number of configuration coordinates.
    pub fn nq(self) -> usize {
        match self {
            JointKind::Revolute | JointKind::Prismatic => 1,
            JointKind::Fixed => 0,
            JointKind::Floating => 7,
            JointKind::Planar => 3,
            JointKind::Ball => 4,
        }
    }

    /// Number of velocity coordinates.
    pub fn nv(self) -> usize {
        match self {
            JointKind::Revolute | JointKind::Prismatic => 1,
            JointKind::Fixed => 0,
            JointKind::Floating => 6,
            JointKind::Planar => 3,
            JointKind::Ball => 3,
        }
    }

    /// What each of the joint's configuration coordinates measures, in the order of
    /// [`Model::q_names`]: floating (x, y, z, qw, qx, qy, qz), planar (x, y, θ), ball
    /// (qw, qx, qy, qz), revolute an angle, prismatic a length.
    pub fn q_kinds(self) -> &'static [CoordinateKind] {
        use CoordinateKind::{Angle, Length, QuaternionPart as Quat};
        match self {
            JointKind::Revolute => &[Angle],
            JointKind::Prismatic => &[Length],
            JointKind::Fixed => &[],
            JointKind::Floating => &[Length, Length, Length, Quat, Quat, Quat, Quat],
            JointKind::Planar => &[Length, Length, Angle],
            JointKind::Ball => &[Quat, Quat, Quat, Quat],
        }
    }

    /// What each of the joint's velocity coordinates measures, in the order of
    /// [`Model::v_names`]: floating (3 linear, 3 angular), planar (ẋ, ẏ linear, θ̇ angular),
    /// ball (3 angular), revolute angular, prismatic linear.
    pub fn v_kinds(self) -> &'static [CoordinateKind] {
        use CoordinateKind::{AngularVelocity as W, LinearVelocity as V};
        match self {
            JointKind::Revolute => &[W],
            JointKind::Prismatic => &[V],
            JointKind::Fixed => &[],
            JointKind::Floating => &[V, V, V, W, W, W],
            JointKind::Planar => &[V, V, W],
            JointKind::Ball => &[W, W, W],
        }
    }

    /// Offset of the joint's unit quaternion `(w, x, y, z)` within its coordinates, for the
    /// kinds that carry one (floating: after the position; ball: first).
    pub fn quaternion_offset(self) -> Option<usize> {
        match self {
            JointKind::Floating => Some(3),
            JointKind::Ball => Some(0),
            _ => None,
        }
    }
}

/// What one generalized coordinate measures (its unit follows): the coordinates of `q` are
/// lengths, angles or unit-quaternion parts, those of `v` linear or angular velocities
/// ([`JointKind::q_kinds`], [`JointKind::v_kinds`], [`Model::q_kinds`], [`Model::v_kinds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoordinateKind {
    /// A position or displacement (m).
    Length,
    /// A rotation angle (rad).
    Angle,
    /// A part of a unit quaternion (no unit).
    QuaternionPart,
    /// A linear velocity (m/s).
    LinearVelocity,
    /// An angular velocity (rad/s).
    AngularVelocity,
}

impl CoordinateKind {
    /// The SI unit, `""` for the unitless quaternion parts.
    pub fn unit(self) -> &'static str {
        match self {
            CoordinateKind::Length => "m",
            CoordinateKind::Angle => "rad",
            CoordinateKind::QuaternionPart => "",
            CoordinateKind::LinearVelocity => "m/s",
            CoordinateKind::AngularVelocity => "rad/s",
        }
    }

    /// What it is, in words (`position`, `angle`, `quaternion part`, …).
    pub fn label(self) -> &'static str {
        match self {
            CoordinateKind::Length => "position",
            CoordinateKind::Angle => "angle",
            CoordinateKind::QuaternionPart => "quaternion part",
            CoordinateKind::LinearVelocity => "linear velocity",
            CoordinateKind::AngularVelocity => "angular velocity",
        }
    }
}

/// A unilateral range-of-motion limit on a revolute or prismatic joint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointLimit {
    /// Lower bound of the joint coordinate (rad or m).
    pub lower: f64,
    /// Upper bound of the joint coordinate (rad or m).
    pub upper: f64,
    /// Limit stiffness K (N/m or N·m/rad); `None` = rigid.
    pub stiffness: Option<f64>,
    /// Limit damping B; `None` = none.
    pub damping: Option<f64>,
}

/// A linear spring on the coordinate of a revolute or prismatic joint: the passive force
/// `−k (q − q_ref)` (MJCF's `stiffness` and `springref`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointSpring {
    /// Stiffness k ≥ 0 (N·m/rad or N/m).
    pub stiffness: f64,
    /// Rest coordinate q_ref (rad or m) where the spring exerts no force.
    pub reference: f64,
}

/// A joint connecting `parent` (or the world) to body `child`.
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    /// Unique joint name.
    pub name: String,
    /// Joint type (fixes the number of coordinates and velocities).
    pub kind: JointKind,
    /// Parent body; `None` is the world.
    pub parent: Option<BodyId>,
    /// Child body moved by this joint.
    pub child: BodyId,
    /// Pose of the joint frame in the parent body frame (world frame for a root joint). At
    /// zero joint coordinates the child body frame coincides with the joint frame.
    pub placement: Isometry3<f64>,
    /// Axis of a revolute or prismatic joint, in the joint frame.
    pub axis: Unit<Vector3<f64>>,
    /// Position limit of a one-DOF joint, enforced as a unilateral constraint.
    pub limit: Option<JointLimit>,
    /// Viscous joint damping (N·m·s/rad or N·s/m), applied as a passive force in f.
    pub damping: f64,
    /// Spring on the coordinate of a one-DOF joint, applied as a passive force in f.
    pub spring: Option<JointSpring>,
    /// Armature (reflected rotor inertia, kg·m² or kg), added to the mass matrix's diagonal
    /// on each of the joint's velocity coordinates (MJCF's `armature`, Drake's rotor
    /// inertia × gear²).
    pub armature: f64,
    /// Offset of this joint's coordinates in `q`.
    pub q_index: usize,
    /// Offset of this joint's velocities in `v`.
    pub v_index: usize,
}

/// Collision geometry, expressed in the collider frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// Sphere (a disk in planar models) centred at the collider origin.
    Sphere {
        /// Radius (m), > 0.
        radius: f64,
    },
    /// Box centred at the collider origin; contacts with planes are its corner points
    /// (4 in planar models using x and y half-extents, 8 in 3D).
    Box {
        /// Half-extents along the collider's axes (m), > 0.
        half_extents: Vector3<f64>,
    },
    /// Half-space whose boundary passes through the collider origin with outward `normal`
    /// (collider frame). Usually attached to the world.
    Plane {
        /// Outward unit normal in the collider frame.
        normal: Unit<Vector3<f64>>,
    },
    /// A single contact point at the collider origin (a point foot).
    Point,
    /// A set of contact points in the collider frame (e.g. the elements of a Winkler
    /// foundation under a face).
    Points {
        /// Contact points in the collider frame (m).
        points: Vec<Vector3<f64>>,
    },
    /// A height field z = h(x, y) on a regular grid (world-attached). In planar models the
    /// field is a profile y = h(x) and only the first row is used.
    HeightMap(HeightMap),
    /// Capsule: the segment from `(0, 0, −half_length)` to `(0, 0, half_length)` of the
    /// collider frame swept by a sphere of `radius` (axis z, as MuJoCo's).
    Capsule {
        /// Radius (m), > 0.
        radius: f64,
        /// Half length of the axis segment (m), > 0.
        half_length: f64,
    },
    /// Solid cylinder of axis z centred at the collider origin.
    Cylinder {
        /// Radius (m), > 0.
        radius: f64,
        /// Half length along z (m), > 0.
        half_length: f64,
    },
    /// The convex hull of a set of points (collider frame).
    Convex(crate::geometry::ConvexHull),
    /// A triangle mesh (collider frame). Used as is on world colliders; a mesh on a moving
    /// body collides through its convex hull (a warning says so).
    Mesh(crate::geometry::TriangleMesh),
}

impl Shape {
    /// The shape's name in model files (`sphere`, `box`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Shape::Sphere { .. } => "sphere",
            Shape::Box { .. } => "box",
            Shape::Plane { .. } => "plane",
            Shape::Point => "point",
            Shape::Points { .. } => "points",
            Shape::HeightMap(_) => "heightmap",
            Shape::Capsule { .. } => "capsule",
            Shape::Cylinder { .. } => "cylinder",
            Shape::Convex(_) => "convex",
            Shape::Mesh(_) => "mesh",
        }
    }
}

/// A regular-grid height field, bilinearly interpolated; `heights[iy][ix]` is the height at
/// `(x0 + ix·dx, y0 + iy·dy)` in the collider frame.
#[derive(Debug, Clone, PartialEq)]
pub struct HeightMap {
    /// x coordinate of the first grid column (m).
    pub x0: f64,
    /// y coordinate of the first grid row (m).
    pub y0: f64,
    /// Grid spacing along x (m), > 0.
    pub dx: f64,
    /// Grid spacing along y (m), > 0.
    pub dy: f64,
    /// Heights (m), one row per y value.
    pub heights: Vec<Vec<f64>>,
}

/// Contact force law used where a material is compliant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ComplianceLaw {
    /// λ = −K φ − B φ̇ (Kelvin–Voigt).
    #[default]
    Linear,
    /// λ = K d^{3/2} with d = −φ the penetration (Hertz; K lumps E*√r).
    Hertz,
    /// λ = K d^{3/2} (1 + B ḋ) (Hunt–Crossley).
    HuntCrossley,
}

/// Surface properties of a collider.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactMaterial {
    /// Unique material name.
    pub name: String,
    /// Coulomb friction coefficient μ ≥ 0.
    pub friction: f64,
    /// Newton restitution coefficient in [0, 1], where a law uses one.
    pub restitution: Option<f64>,
    /// Normal stiffness K (> 0) where compliant; `None` = rigid.
    pub stiffness: Option<f64>,
    /// Normal damping B (≥ 0) where compliant.
    pub damping: Option<f64>,
    /// Force law of the compliant model (linear, Hertz, Hunt–Crossley).
    pub law: ComplianceLaw,
}

impl ContactMaterial {
    /// The material used by colliders that name none: μ = 0.5, rigid, no restitution.
    pub fn default_material() -> Self {
        ContactMaterial {
            name: "default".into(),
            friction: 0.5,
            restitution: None,
            stiffness: None,
            damping: None,
            law: ComplianceLaw::Linear,
        }
    }

    /// Combines the materials of two touching colliders (the decision documented in
    /// `docs/model-format.md`): μ = √(μ_a μ_b) and e = max(e_a, e_b) (Box2D's rules);
    /// stiffness and damping act in series (1/K = 1/K_a + 1/K_b), a rigid side contributing
    /// nothing; the law is the compliant side's (a's if both are compliant).
    pub fn combine(a: &ContactMaterial, b: &ContactMaterial) -> ContactMaterial {
        fn series(x: Option<f64>, y: Option<f64>) -> Option<f64> {
            match (x, y) {
                (Some(x), Some(y)) if x + y > 0.0 => Some(x * y / (x + y)),
                (Some(_), Some(_)) => Some(0.0),
                (Some(x), None) | (None, Some(x)) => Some(x),
                (None, None) => None,
            }
        }
        let law = if a.stiffness.is_some() { a.law } else { b.law };
        ContactMaterial {
            name: format!("{}+{}", a.name, b.name),
            friction: (a.friction * b.friction).sqrt(),
            restitution: match (a.restitution, b.restitution) {
                (Some(x), Some(y)) => Some(x.max(y)),
                (x, y) => x.or(y),
            },
            stiffness: series(a.stiffness, b.stiffness),
            damping: series(a.damping, b.damping),
            law,
        }
    }
}

/// A piece of collision geometry fixed to a body (or to the world when `body` is `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Collider {
    /// Unique collider name.
    pub name: String,
    /// Body the collider is attached to; `None` is the world.
    pub body: Option<BodyId>,
    /// Pose of the collider frame in the body frame (world frame if `body` is `None`).
    pub pose: Isometry3<f64>,
    /// Geometry.
    pub shape: Shape,
    /// Index into [`Model::materials`].
    pub material: usize,
    /// Which colliders it may touch ([`CollisionFilter`]).
    pub filter: CollisionFilter,
}

/// Collision filtering by groups and masks: colliders `a` and `b` may touch when
/// `a.group & b.mask != 0` and `b.group & a.mask != 0` (Box2D's rule). The default, group 1
/// and every mask bit set, lets everything touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollisionFilter {
    /// The groups the collider belongs to (bits).
    pub group: u32,
    /// The groups it collides with (bits).
    pub mask: u32,
}

impl Default for CollisionFilter {
    fn default() -> Self {
        CollisionFilter {
            group: 1,
            mask: u32::MAX,
        }
    }
}

impl CollisionFilter {
    /// Whether two colliders with these filters may touch.
    pub fn allows(&self, other: &CollisionFilter) -> bool {
        self.group & other.mask != 0 && other.group & self.mask != 0
    }
}

/// Explicit material for one pair of colliders, overriding [`ContactMaterial::combine`].
#[derive(Debug, Clone, PartialEq)]
pub struct PairOverride {
    /// Index of the first collider of the pair.
    pub collider_a: usize,
    /// Index of the second collider of the pair.
    pub collider_b: usize,
    /// Material used for contacts between the two colliders.
    pub material: ContactMaterial,
}

/// A bilateral constraint in maximal coordinates (a joint closed by constraint rows).
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    /// Unique constraint name.
    pub name: String,
    /// Constraint type and its anchors.
    pub kind: ConstraintKind,
    /// Constraint stiffness K (> 0) where soft; `None` = rigid.
    pub stiffness: Option<f64>,
    /// Constraint damping B (≥ 0).
    pub damping: Option<f64>,
}

/// Geometry of a bilateral constraint. Anchors are in the frames of their bodies (world if
/// the body is `None`).
#[derive(Debug, Clone, PartialEq)]
pub enum ConstraintKind {
    /// Point coincidence p_a = p_b: 2 rows in planar models, 3 in spatial ones (a pin / ball
    /// joint). φ = p_a − p_b in world axes.
    Point {
        /// Body of the first anchor; `None` is the world.
        body_a: Option<BodyId>,
        /// First anchor point in its body's frame (m).
        anchor_a: Vector3<f64>,
        /// Body of the second anchor; `None` is the world.
        body_b: Option<BodyId>,
        /// Second anchor point in its body's frame (m).
        anchor_b: Vector3<f64>,
    },
    /// Fixed distance |p_a − p_b| = length: one row, φ = |p_a − p_b| − length.
    Distance {
        /// Body of the first anchor; `None` is the world.
        body_a: Option<BodyId>,
        /// First anchor point in its body's frame (m).
        anchor_a: Vector3<f64>,
        /// Body of the second anchor; `None` is the world.
        body_b: Option<BodyId>,
        /// Second anchor point in its body's frame (m).
        anchor_b: Vector3<f64>,
        /// Required distance (m), > 0.
        length: f64,
    },
}

/// How an actuator turns its command `u` into its torque/force τ.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ActuatorKind {
    /// `τ = u` (clamped to the effort bounds).
    #[default]
    Motor,
    /// A servo toward the commanded position: `τ = kp (u − l) − kv l̇`, with the actuator
    /// length `l = gear · q` and rate `l̇ = gear · v` of the driven coordinate (revolute and
    /// prismatic joints only). The simulator integrates it implicitly.
    Position {
        /// Stiffness gain kp (> 0; N·m/rad or N/m).
        kp: f64,
        /// Damping gain kv (≥ 0; N·m·s/rad or N·s/m).
        kv: f64,
    },
}

/// A force/torque source acting on one velocity coordinate of a joint: τ enters the equations
/// of motion as `Pᵀ τ` with `P[a, joint.v_index + dof] = gear`.
#[derive(Debug, Clone, PartialEq)]
pub struct Actuator {
    /// Unique actuator name.
    pub name: String,
    /// Index of the driven joint.
    pub joint: usize,
    /// Which of the joint's velocity coordinates is driven.
    pub dof: usize,
    /// Gear ratio: generalized force = gear × command.
    pub gear: f64,
    /// Optional effort bounds (min, max).
    pub effort_limit: Option<(f64, f64)>,
    /// Motor or position servo.
    pub kind: ActuatorKind,
}

/// A state of the system: generalized coordinates, velocities and time.
#[derive(Debug, Clone, PartialEq)]
pub struct State {
    /// Generalized coordinates (joint order; quaternions as (w, i, j, k)).
    pub q: DVector<f64>,
    /// Generalized velocities (joint order).
    pub v: DVector<f64>,
    /// Time (s).
    pub t: f64,
}

/// Default simulation settings a model file may carry (`[simulation]`); command-line flags
/// override them. The stepper name is checked by the simulator, which knows its steppers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SimulationSettings {
    /// Name of the time-stepping scheme (e.g. `drumwright`, `penalty-symplectic`).
    pub stepper: Option<String>,
    /// Step size h (s), > 0.
    pub dt: Option<f64>,
    /// Simulated duration (s), ≥ 0.
    pub duration: Option<f64>,
}

/// A complete mechanical system. Two models are equal when everything but their
/// [`Model::import_warnings`] is (a saved and reloaded URDF import equals the import).
#[derive(Debug, Clone)]
pub struct Model {
    /// Model name.
    pub name: String,
    /// Planar (3 DOF per free body) or spatial.
    pub dimension: Dimension,
    /// Gravity vector (m/s², world frame).
    pub gravity: Vector3<f64>,
    /// Bodies, in the order their joints appear.
    pub bodies: Vec<Body>,
    /// `joints[i]` is the parent joint of `bodies[i]`.
    pub joints: Vec<Joint>,
    /// Collision geometries.
    pub colliders: Vec<Collider>,
    /// Contact materials, referenced by index from the colliders (`Model::new` starts with
    /// [`ContactMaterial::default_material`]).
    pub materials: Vec<ContactMaterial>,
    /// Materials of specific collider pairs.
    pub pair_overrides: Vec<PairOverride>,
    /// Collider pairs (by index, smaller first) that never generate contacts.
    pub excluded_pairs: Vec<(usize, usize)>,
    /// Bilateral constraints closing loops (point and distance).
    pub constraints: Vec<Constraint>,
    /// Actuators (the columns of Pᵀ).
    pub actuators: Vec<Actuator>,
    /// State at t = 0 (model file's `[initial]`, or the joints' defaults).
    pub initial_state: State,
    /// Contacts with gap φ ≤ margin enter the snapshot (m, ≥ 0).
    pub contact_margin: f64,
    /// Default simulation settings (`[simulation]` in a model file).
    pub simulation: SimulationSettings,
    /// What the import that built the model left out or approximated (URDF elements
    /// skipped, massless links merged, inertias kept although singular or violating the
    /// triangle inequality), one line each; for model files only the inertia lines. Shown with the
    /// geometry warnings before a simulation (`nonsmooth_sim::model_warnings`). Not saved by
    /// [`Model::to_toml_string`] (a saved model is what was imported).
    pub import_warnings: Vec<String>,
}

impl PartialEq for Model {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.dimension == other.dimension
            && self.gravity == other.gravity
            && self.bodies == other.bodies
            && self.joints == other.joints
            && self.colliders == other.colliders
            && self.materials == other.materials
            && self.pair_overrides == other.pair_overrides
            && self.excluded_pairs == other.excluded_pairs
            && self.constraints == other.constraints
            && self.actuators == other.actuators
            && self.initial_state == other.initial_state
            && self.contact_margin == other.contact_margin
            && self.simulation == other.simulation
    }
}

impl Body {
    /// A body with its centre of mass at the body origin.
    pub fn new(name: impl Into<String>, mass: f64, inertia: Matrix3<f64>) -> Self {
        Body {
            name: name.into(),
            mass,
            com: Vector3::zeros(),
            inertia,
        }
    }

    /// The same body with its centre of mass at `com` (body frame).
    pub fn with_com(mut self, com: Vector3<f64>) -> Self {
        self.com = com;
        self
    }
}

impl Joint {
    /// A joint of `kind` from `parent` (`None` = world) with identity placement, axis +z, no
    /// limit and no damping. `child`, `q_index` and `v_index` are set by [`Model::add_body`].
    pub fn new(name: impl Into<String>, kind: JointKind, parent: Option<BodyId>) -> Self {
        Joint {
            name: name.into(),
            kind,
            parent,
            child: 0,
            placement: Isometry3::identity(),
            axis: Vector3::z_axis(),
            limit: None,
            damping: 0.0,
            spring: None,
            armature: 0.0,
            q_index: 0,
            v_index: 0,
        }
    }

    /// The same joint placed at `placement` in the parent frame.
    pub fn with_placement(mut self, placement: Isometry3<f64>) -> Self {
        self.placement = placement;
        self
    }

    /// The same joint with (normalized) `axis`.
    pub fn with_axis(mut self, axis: Vector3<f64>) -> Self {
        self.axis = Unit::new_normalize(axis);
        self
    }
}

impl Model {
    /// An empty model with standard gravity (9.81 m/s² along −z, or −y when planar), the
    /// default material (index 0) and no contact margin; add bodies with [`Model::add_body`].
    pub fn new(name: impl Into<String>, dimension: Dimension) -> Self {
        let gravity = match dimension {
            Dimension::Planar => Vector3::new(0.0, -9.81, 0.0),
            Dimension::Spatial => Vector3::new(0.0, 0.0, -9.81),
        };
        Model {
            name: name.into(),
            dimension,
            gravity,
            bodies: Vec::new(),
            joints: Vec::new(),
            colliders: Vec::new(),
            materials: vec![ContactMaterial::default_material()],
            pair_overrides: Vec::new(),
            excluded_pairs: Vec::new(),
            constraints: Vec::new(),
            actuators: Vec::new(),
            initial_state: State {
                q: DVector::zeros(0),
                v: DVector::zeros(0),
                t: 0.0,
            },
            contact_margin: 0.0,
            simulation: SimulationSettings::default(),
            import_warnings: Vec::new(),
        }
    }

    /// Appends `body` with its parent `joint` and returns the body's index. The initial state
    /// grows by the joint's neutral coordinates (zero, identity quaternion) and zero
    /// velocities. A parent that does not exist yet is a [`ModelError::Topology`] error.
    pub fn add_body(&mut self, body: Body, mut joint: Joint) -> Result<BodyId, ModelError> {
        let id = self.bodies.len();
        if let Some(parent) = joint.parent {
            if parent >= id {
                return Err(ModelError::Topology {
                    location: Location::field(format!("joints.{}.parent", joint.name)),
                    reason: format!(
                        "parent body {parent} of `{}` must be added before it",
                        body.name
                    ),
                });
            }
        }
        joint.child = id;
        let (nq, nv) = (joint.kind.nq(), joint.kind.nv());
        let mut q: Vec<f64> = self.initial_state.q.iter().copied().collect();
        let mut v: Vec<f64> = self.initial_state.v.iter().copied().collect();
        q.extend((0..nq).map(|i| {
            if joint.kind.quaternion_offset() == Some(i) {
                1.0
            } else {
                0.0
            }
        }));
        v.extend(std::iter::repeat_n(0.0, nv));
        self.initial_state.q = DVector::from_vec(q);
        self.initial_state.v = DVector::from_vec(v);
        self.bodies.push(body);
        self.joints.push(joint);
        self.assign_coordinate_offsets();
        Ok(id)
    }

    /// Number of configuration coordinates.
    pub fn nq(&self) -> usize {
        self.joints.iter().map(|j| j.kind.nq()).sum()
    }

    /// Number of velocity coordinates (degrees of freedom).
    pub fn nv(&self) -> usize {
        self.joints.iter().map(|j| j.kind.nv()).sum()
    }

    /// Number of actuators.
    pub fn nu(&self) -> usize {
        self.actuators.len()
    }

    /// Recomputes every joint's `q_index` / `v_index` from the joint order.
    pub fn assign_coordinate_offsets(&mut self) {
        let (mut iq, mut iv) = (0, 0);
        for joint in &mut self.joints {
            joint.q_index = iq;
            joint.v_index = iv;
            iq += joint.kind.nq();
            iv += joint.kind.nv();
        }
    }

    /// Index of the body called `name`.
    pub fn body_index(&self, name: &str) -> Option<BodyId> {
        self.bodies.iter().position(|b| b.name == name)
    }

    /// Index of the joint called `name`.
    pub fn joint_index(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j.name == name)
    }

    /// Parent body of `body` (`None` = world).
    pub fn parent(&self, body: BodyId) -> Option<BodyId> {
        self.joints[body].parent
    }

    /// Names of the coordinates of `q`, e.g. `ball.x`, `ball.qw`, `elbow.q`.
    pub fn q_names(&self) -> Vec<String> {
        let mut names = Vec::with_capacity(self.nq());
        for joint in &self.joints {
            let suffixes: &[&str] = match joint.kind {
                JointKind::Revolute | JointKind::Prismatic => &["q"],
                JointKind::Fixed => &[],
                JointKind::Floating => &["x", "y", "z", "qw", "qx", "qy", "qz"],
                JointKind::Planar => &["x", "y", "theta"],
                JointKind::Ball => &["qw", "qx", "qy", "qz"],
            };
            names.extend(suffixes.iter().map(|s| format!("{}.{}", joint.name, s)));
        }
        names
    }

    /// Names of the coordinates of `v`, e.g. `ball.vx`, `ball.wz`, `elbow.v`.
    pub fn v_names(&self) -> Vec<String> {
        let mut names = Vec::with_capacity(self.nv());
        for joint in &self.joints {
            let suffixes: &[&str] = match joint.kind {
                JointKind::Revolute | JointKind::Prismatic => &["v"],
                JointKind::Fixed => &[],
                JointKind::Floating => &["vx", "vy", "vz", "wx", "wy", "wz"],
                JointKind::Planar => &["vx", "vy", "omega"],
                JointKind::Ball => &["wx", "wy", "wz"],
            };
            names.extend(suffixes.iter().map(|s| format!("{}.{}", joint.name, s)));
        }
        names
    }

    /// What each coordinate of `q` measures ([`JointKind::q_kinds`]), aligned with
    /// [`Model::q_names`].
    pub fn q_kinds(&self) -> Vec<CoordinateKind> {
        self.joints
            .iter()
            .flat_map(|j| j.kind.q_kinds().iter().copied())
            .collect()
    }

    /// What each coordinate of `v` measures ([`JointKind::v_kinds`]), aligned with
    /// [`Model::v_names`].
    pub fn v_kinds(&self) -> Vec<CoordinateKind> {
        self.joints
            .iter()
            .flat_map(|j| j.kind.v_kinds().iter().copied())
            .collect()
    }

    /// Material of a collider pair: an explicit override if present, else
    /// [`ContactMaterial::combine`].
    pub fn pair_material(&self, collider_a: usize, collider_b: usize) -> ContactMaterial {
        let (lo, hi) = (collider_a.min(collider_b), collider_a.max(collider_b));
        if let Some(o) = self
            .pair_overrides
            .iter()
            .find(|o| o.collider_a.min(o.collider_b) == lo && o.collider_a.max(o.collider_b) == hi)
        {
            return o.material.clone();
        }
        ContactMaterial::combine(
            &self.materials[self.colliders[collider_a].material],
            &self.materials[self.colliders[collider_b].material],
        )
    }

    /// The actuation matrix Pᵀ (nv × nu): generalized force = Pᵀ τ.
    pub fn actuation_matrix(&self) -> nalgebra::DMatrix<f64> {
        let mut p_t = nalgebra::DMatrix::zeros(self.nv(), self.nu());
        for (a, act) in self.actuators.iter().enumerate() {
            p_t[(self.joints[act.joint].v_index + act.dof, a)] = act.gear;
        }
        p_t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_body_grows_coordinates_and_neutral_state() {
        let mut model = Model::new("chain", Dimension::Spatial);
        let base = model
            .add_body(
                Body::new("base", 2.0, Matrix3::identity()),
                Joint::new("free", JointKind::Floating, None),
            )
            .unwrap();
        let arm = model
            .add_body(
                Body::new("arm", 1.0, Matrix3::identity() * 0.1).with_com(Vector3::x()),
                Joint::new("hinge", JointKind::Revolute, Some(base)).with_axis(Vector3::y() * 3.0),
            )
            .unwrap();
        assert_eq!((base, arm), (0, 1));
        assert_eq!((model.nq(), model.nv()), (8, 7));
        assert_eq!(model.joints[1].q_index, 7);
        assert_eq!(model.joints[1].v_index, 6);
        assert_eq!(model.joints[1].child, 1);
        assert!((model.joints[1].axis.y - 1.0).abs() < 1e-15);
        assert_eq!(
            model.initial_state.q.as_slice(),
            &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
        );
        assert_eq!(model.initial_state.v.len(), 7);
        assert_eq!(model.q_names()[7], "hinge.q");
        let err = model
            .add_body(
                Body::new("orphan", 1.0, Matrix3::identity()),
                Joint::new("j", JointKind::Fixed, Some(5)),
            )
            .unwrap_err();
        assert!(matches!(err, ModelError::Topology { .. }));
        assert!(model.validate().is_ok());
    }

    #[test]
    fn materials_combine_by_the_documented_rules() {
        let soft = ContactMaterial {
            stiffness: Some(1e5),
            damping: Some(50.0),
            friction: 0.8,
            restitution: Some(0.3),
            ..ContactMaterial::default_material()
        };
        let rigid = ContactMaterial {
            friction: 0.2,
            ..ContactMaterial::default_material()
        };
        let both_soft = ContactMaterial::combine(&soft, &soft);
        assert_eq!(both_soft.stiffness, Some(5e4));
        assert_eq!(both_soft.damping, Some(25.0));
        let mixed = ContactMaterial::combine(&rigid, &soft);
        assert!((mixed.friction - 0.4).abs() < 1e-15);
        assert_eq!(mixed.stiffness, Some(1e5));
        assert_eq!(mixed.restitution, Some(0.3));
    }

    #[test]
    fn coordinate_kinds_align_with_the_coordinate_names() {
        use CoordinateKind::*;
        let all = [
            JointKind::Revolute,
            JointKind::Prismatic,
            JointKind::Fixed,
            JointKind::Floating,
            JointKind::Planar,
            JointKind::Ball,
        ];
        for kind in all {
            assert_eq!(kind.q_kinds().len(), kind.nq(), "{kind:?}");
            assert_eq!(kind.v_kinds().len(), kind.nv(), "{kind:?}");
            // the quaternion, where there is one, is where `quaternion_offset` says
            let quat: Vec<usize> = (0..kind.nq())
                .filter(|&i| kind.q_kinds()[i] == QuaternionPart)
                .collect();
            match kind.quaternion_offset() {
                Some(o) => assert_eq!(quat, (o..o + 4).collect::<Vec<_>>(), "{kind:?}"),
                None => assert!(quat.is_empty(), "{kind:?}"),
            }
        }
        let mut m = Model::new("mixed", Dimension::Spatial);
        let eye = Matrix3::identity();
        let base = m
            .add_body(
                Body::new("base", 1.0, eye),
                Joint::new("base", JointKind::Floating, None),
            )
            .unwrap();
        m.add_body(
            Body::new("arm", 1.0, eye),
            Joint::new("elbow", JointKind::Revolute, Some(base)),
        )
        .unwrap();
        m.add_body(
            Body::new("slider", 1.0, eye),
            Joint::new("rail", JointKind::Prismatic, Some(base)),
        )
        .unwrap();
        let q: Vec<(String, CoordinateKind)> = m.q_names().into_iter().zip(m.q_kinds()).collect();
        assert_eq!(q.len(), m.nq());
        assert_eq!(q[2], ("base.z".to_string(), Length));
        assert_eq!(q[3], ("base.qw".to_string(), QuaternionPart));
        assert_eq!(q[7], ("elbow.q".to_string(), Angle));
        assert_eq!(q[8], ("rail.q".to_string(), Length));
        let v: Vec<(String, CoordinateKind)> = m.v_names().into_iter().zip(m.v_kinds()).collect();
        assert_eq!(v.len(), m.nv());
        assert_eq!(v[0], ("base.vx".to_string(), LinearVelocity));
        assert_eq!(v[5], ("base.wz".to_string(), AngularVelocity));
        assert_eq!(v[6], ("elbow.v".to_string(), AngularVelocity));
        assert_eq!(v[7], ("rail.v".to_string(), LinearVelocity));
        assert_eq!(Angle.unit(), "rad");
        assert_eq!(QuaternionPart.unit(), "");
    }
}
