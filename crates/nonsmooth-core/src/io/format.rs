//! The serde schema of the TOML model file (see `docs/model-format.md`). These structs mirror
//! the file one to one; `load` turns them into a [`crate::Model`] and `save` back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::model::{ComplianceLaw, Dimension, JointKind};

/// The whole file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileModel {
    /// `[model]` header.
    pub model: FileHeader,
    /// `[[bodies]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bodies: Vec<FileBody>,
    /// `[[joints]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joints: Vec<FileJoint>,
    /// `[[materials]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub materials: Vec<FileMaterial>,
    /// `[[colliders]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub colliders: Vec<FileCollider>,
    /// `[[pairs]]`: per-pair material overrides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<FilePair>,
    /// `exclude = [["a", "b"], ...]`: collider pairs that never touch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<[String; 2]>,
    /// `[[constraints]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<FileConstraint>,
    /// `[[actuators]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actuators: Vec<FileActuator>,
    /// `[initial]` state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial: Option<FileInitial>,
    /// `[simulation]` defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulation: Option<FileSimulation>,
    /// `[[robots]]`: URDF robots placed in the model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub robots: Vec<FileRobot>,
}

/// `[[robots]]`: a URDF robot imported into the model (its bodies, joints, colliders and
/// actuators appended, names prefixed).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRobot {
    /// The URDF file, relative to the model file (give `urdf` or `mjcf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urdf: Option<String>,
    /// The MJCF (MuJoCo XML) file, relative to the model file (give `urdf` or `mjcf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mjcf: Option<String>,
    /// Prefix of every imported name (default none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Attach the root link with a floating joint (default `false`: fixed). URDF only: an
    /// MJCF robot floats by its own `<freejoint>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floating: Option<bool>,
    /// Pose of the robot's root in the world (default identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pose: Option<FilePose>,
    /// Directories (relative to the model file) searched for `package://` meshes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_paths: Option<Vec<String>>,
    /// Balance inertias that violate the triangle inequality as MuJoCo's `balanceinertia`
    /// does (default `false`: kept with a warning). URDF only: an MJCF robot says so in its
    /// own `<compiler>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub balance_inertia: Option<bool>,
    /// Material of the robot's colliders (default: `default` for URDF robots, the file's
    /// own friction materials for MJCF robots).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub material: Option<String>,
    /// One actuator per moving joint (default `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actuators: Option<bool>,
    /// Initial coordinates by (unprefixed) joint name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<std::collections::BTreeMap<String, JointCoords>>,
}

/// `[simulation]`: default stepper, step size and duration for `nonsmooth simulate`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSimulation {
    /// Stepper name (see `nonsmooth simulate --help`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stepper: Option<String>,
    /// Step size h (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dt: Option<f64>,
    /// Duration (s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
}

/// `[model]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileHeader {
    /// Format version the file is written for (default: the current one,
    /// [`FORMAT_VERSION`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<u32>,
    /// Model name.
    #[serde(default)]
    pub name: String,
    /// `"planar"` or `"spatial"` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimension: Option<Dimension>,
    /// Gravity in world axes (default (0, 0, −9.81) spatial, (0, −9.81, 0) planar).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gravity: Option<[f64; 3]>,
    /// Contact margin (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_margin: Option<f64>,
}

/// The version of the model format this loader reads (and writes): 1 = the first release;
/// 2 adds capsule, cylinder, convex and mesh shapes, collision `group`/`mask` and
/// `[[robots]]`; 3 adds `ball` joints, joint `armature`, massless joint-frame bodies and MJCF
/// robots (`[[robots]] mjcf`). Files of versions 1 and 2 read unchanged.
pub const FORMAT_VERSION: u32 = 3;

/// `[[bodies]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileBody {
    /// Unique body name (not `world`).
    pub name: String,
    /// Mass (kg).
    pub mass: f64,
    /// Centre of mass in the body frame (default origin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub com: Option<[f64; 3]>,
    /// Inertia about the centre of mass.
    pub inertia: InertiaSpec,
}

/// The three ways of giving an inertia.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum InertiaSpec {
    /// `[ixx, iyy, izz]`.
    Diagonal([f64; 3]),
    /// Full symmetric matrix, row by row.
    Full([[f64; 3]; 3]),
    /// A shape helper scaled by the body's mass.
    Shape(InertiaShape),
}

/// `inertia = { solid_sphere = r }` etc.: exactly one key.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InertiaShape {
    /// Solid sphere of radius r: I = 2/5 m r².
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solid_sphere: Option<f64>,
    /// Thin spherical shell of radius r: I = 2/3 m r².
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hollow_sphere: Option<f64>,
    /// Solid box with half extents (hx, hy, hz): Ixx = m/3 (hy² + hz²), …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solid_box: Option<[f64; 3]>,
    /// Solid cylinder (radius, length) about the body z axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solid_cylinder: Option<[f64; 2]>,
}

/// A pose: translation `xyz` and either roll–pitch–yaw `rpy` (URDF convention,
/// R = Rz(yaw) Ry(pitch) Rx(roll)) or a quaternion `quat = [w, x, y, z]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilePose {
    /// Translation (m).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xyz: Option<[f64; 3]>,
    /// Roll, pitch, yaw (rad).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpy: Option<[f64; 3]>,
    /// Quaternion, scalar first (normalized on load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quat: Option<[f64; 4]>,
}

/// `[[joints]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileJoint {
    /// Unique joint name.
    pub name: String,
    /// `revolute`, `prismatic`, `fixed`, `floating` or `planar`.
    pub kind: JointKind,
    /// Parent body name or `world`.
    pub parent: String,
    /// Child body name.
    pub child: String,
    /// Joint frame in the parent frame (default identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<FilePose>,
    /// Axis in the joint frame (default z; normalized on load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axis: Option<[f64; 3]>,
    /// Range-of-motion limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<FileLimit>,
    /// Viscous damping (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
    /// Linear spring on the joint coordinate (revolute and prismatic joints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spring: Option<FileSpring>,
    /// Armature: reflected rotor inertia added to the mass matrix's diagonal (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub armature: Option<f64>,
}

/// `spring = { stiffness, reference }`: the passive force −k (q − reference).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSpring {
    /// Stiffness k ≥ 0.
    pub stiffness: f64,
    /// Rest coordinate (default 0).
    #[serde(default)]
    pub reference: f64,
}

/// `limit = { lower, upper, stiffness, damping }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileLimit {
    /// Lower bound.
    pub lower: f64,
    /// Upper bound.
    pub upper: f64,
    /// Stiffness (absent = rigid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stiffness: Option<f64>,
    /// Damping (absent = none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
}

/// `[[materials]]` (and inline pair materials).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileMaterial {
    /// Name (required in `[[materials]]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Coulomb μ (default 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub friction: Option<f64>,
    /// Restitution in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restitution: Option<f64>,
    /// Normal stiffness (absent = rigid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stiffness: Option<f64>,
    /// Normal damping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
    /// `linear` (default), `hertz` or `hunt-crossley`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub law: Option<ComplianceLaw>,
}

/// Collision shapes: `{ sphere = r }`, `{ box = [hx, hy, hz] }`, `{ plane = [nx, ny, nz] }`,
/// `"point"`, `{ points = [[x, y, z], ...] }`, `{ heightmap = { ... } }`,
/// `{ capsule = { radius, half_length } }`, `{ cylinder = { radius, half_length } }`,
/// `{ convex = [[x, y, z], ...] }`, `{ mesh = { file, scale } }` or
/// `{ mesh = { vertices, triangles } }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum FileShape {
    /// Radius.
    Sphere(f64),
    /// Half extents.
    Box([f64; 3]),
    /// Outward normal.
    Plane([f64; 3]),
    /// A point at the collider origin.
    Point,
    /// Points in the collider frame.
    Points(Vec<[f64; 3]>),
    /// Height field.
    Heightmap(FileHeightMap),
    /// Capsule along the collider's z axis.
    Capsule(FileRound),
    /// Cylinder along the collider's z axis.
    Cylinder(FileRound),
    /// Convex hull of points in the collider frame.
    Convex(Vec<[f64; 3]>),
    /// Triangle mesh from a file or inline.
    Mesh(FileMesh),
}

/// Radius and half length of a capsule or cylinder.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRound {
    /// Radius (m).
    pub radius: f64,
    /// Half length along z (m).
    pub half_length: f64,
}

/// A scale: one factor or one per axis.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FileScale {
    /// The same factor on every axis.
    Uniform(f64),
    /// One factor per axis.
    PerAxis([f64; 3]),
}

/// A triangle mesh: a file (STL or OBJ, relative to the model file) with an optional scale,
/// or inline vertices and triangles.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileMesh {
    /// STL or OBJ file, relative to the model file's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Scale applied to the file's vertices (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<FileScale>,
    /// Inline vertices (collider frame).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vertices: Option<Vec<[f64; 3]>>,
    /// Inline triangles (indices into `vertices`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triangles: Option<Vec<[u32; 3]>>,
}

/// A height field grid.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileHeightMap {
    /// Grid origin x.
    #[serde(default)]
    pub x0: f64,
    /// Grid origin y.
    #[serde(default)]
    pub y0: f64,
    /// Spacing in x.
    pub dx: f64,
    /// Spacing in y.
    pub dy: f64,
    /// `heights[iy][ix]`.
    pub heights: Vec<Vec<f64>>,
}

/// `[[colliders]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileCollider {
    /// Unique collider name.
    pub name: String,
    /// Body name or `world` (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Geometry.
    pub shape: FileShape,
    /// Pose in the body frame (default identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pose: Option<FilePose>,
    /// Material name (default `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub material: Option<String>,
    /// Collision groups (bits, default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
    /// Groups it collides with (bits, default all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask: Option<u32>,
}

/// A pair's material: a name from `[[materials]]` or an inline table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PairMaterial {
    /// Name of a declared material.
    Name(String),
    /// Inline material.
    Inline(FileMaterial),
}

/// `[[pairs]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilePair {
    /// First collider.
    pub a: String,
    /// Second collider.
    pub b: String,
    /// Material used for this pair.
    pub material: PairMaterial,
}

/// Kind of a `[[constraints]]` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileConstraintKind {
    /// Point coincidence.
    Point,
    /// Fixed distance.
    Distance,
}

/// `[[constraints]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConstraint {
    /// Unique name.
    pub name: String,
    /// `point` or `distance`.
    pub kind: FileConstraintKind,
    /// Body a (default `world`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_a: Option<String>,
    /// Anchor in body a (default origin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor_a: Option<[f64; 3]>,
    /// Body b (default `world`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_b: Option<String>,
    /// Anchor in body b (default origin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor_b: Option<[f64; 3]>,
    /// Length (distance constraints only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<f64>,
    /// Stiffness (absent = rigid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stiffness: Option<f64>,
    /// Damping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
}

/// `[[actuators]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileActuator {
    /// Unique name.
    pub name: String,
    /// Joint name.
    pub joint: String,
    /// Driven velocity coordinate of the joint (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dof: Option<usize>,
    /// Gear ratio (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gear: Option<f64>,
    /// Effort bounds `[min, max]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort_limit: Option<[f64; 2]>,
    /// `motor` (default) or `position`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<FileActuatorKind>,
    /// Position gain kp (`position` actuators; required there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kp: Option<f64>,
    /// Velocity gain kv (`position` actuators; default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv: Option<f64>,
}

/// `kind` of an actuator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileActuatorKind {
    /// τ = u.
    Motor,
    /// τ = kp (u − gear·q) − kv gear·v.
    Position,
}

/// Coordinates of one joint: a number (1-coordinate joints) or an array.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JointCoords {
    /// One value.
    Scalar(f64),
    /// All values of the joint.
    Vector(Vec<f64>),
}

/// `initial.q` / `initial.v`: a full vector or a table by joint name.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Coords {
    /// The whole vector, in body order.
    Flat(Vec<f64>),
    /// By joint name; joints not named keep their defaults.
    ByJoint(BTreeMap<String, JointCoords>),
}

/// `[initial]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileInitial {
    /// Time (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<f64>,
    /// Generalized coordinates (default: zeros, identity quaternions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q: Option<Coords>,
    /// Generalized velocities (default zeros).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v: Option<Coords>,
}
