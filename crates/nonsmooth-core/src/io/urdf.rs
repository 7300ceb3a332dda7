//! URDF import: the text is read into `urdf_rs`'s types by [`parse`] (as forgiving as
//! urdfdom, every error located), then links become bodies, joints become joints and
//! collision elements become colliders. Decisions where URDF and [`Model`] differ:
//! - the body frame is the link frame; the inertial origin gives the centre of mass and the
//!   inertia is rotated into link axes, I_link = R I Rᵀ;
//! - `revolute` and `continuous` → [`JointKind::Revolute`] (limits only from `revolute`
//!   joints whose limit is finite with lower < upper), `prismatic` → prismatic (same rule),
//!   `fixed`, `floating` → floating, `planar` → planar (axis must be ±z), `spherical` is
//!   rejected;
//! - a link named `world` is the world frame; every other root link is attached to the world
//!   by a floating joint if [`UrdfOptions::floating_base`], else by a fixed joint;
//! - sphere, box, cylinder, capsule and mesh collision elements become colliders; a mesh is
//!   read from an STL or OBJ file (`package://pkg/…` resolved against
//!   [`UrdfOptions::package_paths`], `ROS_PACKAGE_PATH`, `AMENT_PREFIX_PATH`'s `share`
//!   folders, then the folders above the URDF file,
//!   a package being a folder whose `package.xml` names it or a folder called `pkg`;
//!   `file://` absolute, anything else relative to the URDF file); a COLLADA (`.dae`) mesh is
//!   skipped with a warning;
//! - links without mass (no `<inertial>`, or mass 0: frames such as `base_footprint` or
//!   `camera_link`; a negative mass is an error) are merged into
//!   their parent across fixed joints (their colliders and child joints move to the parent);
//!   a massless root fixed to the world gives its colliders to the world; a massless floating
//!   root hands the floating joint to its child across a fixed joint; a massless link on a
//!   moving joint is kept as a joint frame when it has no inertia and links hang from it
//!   (the cross of a universal joint), else it is an error;
//! - a link with mass but a zero or singular inertia (point masses, rods: sensor frames), or
//!   one with a negative principal moment, welded by a fixed joint is merged the same way, its mass properties added to the
//!   parent's (parallel-axis theorem); on a moving joint it is kept; principal moments that
//!   violate the triangle inequality are kept (as Pinocchio does) or, with
//!   [`UrdfOptions::balance_inertia`], set to their mean (MuJoCo's `balanceinertia`); each
//!   such link gets a warning; only a singular mass matrix is refused (naming the joint);
//! - an inertia whose entries are all below 1e-12 of the robot's largest inertia entry is
//!   rounding noise (an export's ±1e-20): set to zero, with a warning;
//! - `mimic` couplings, velocity limits and joint friction (`<dynamics friction>`) are not
//!   enforced: one warning each lists the joints; `<gazebo>` contact parameters get one
//!   warning ([`parse`]);
//! - what an import leaves out or approximates is in [`Model::import_warnings`];
//! - colliders use the default material (μ = 0.5, rigid);
//! - with [`UrdfOptions::actuators`], every revolute/continuous/prismatic joint gets an
//!   actuator with gear 1 and effort bounds ±`effort` when that is finite and positive.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nalgebra::{DVector, Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};

mod parse;

use super::load::{topological_order, unit_vector};
use super::spans::{FieldPath, Seg};
use super::validate::validate_model;
use crate::error::{Location, ModelError};
use crate::model::*;

/// Options of [`Model::from_urdf_str`].
#[derive(Debug, Clone, PartialEq)]
pub struct UrdfOptions {
    /// Attach root links to the world with a floating joint (default `false`: fixed).
    pub floating_base: bool,
    /// Add one actuator per revolute / continuous / prismatic joint (default `true`).
    pub actuators: bool,
    /// Gravity (default (0, 0, −9.81) m/s²).
    pub gravity: Vector3<f64>,
    /// Directories searched first for `package://name/…` mesh paths: `<dir>/…` when `<dir>`
    /// is the package (its `package.xml` names it, or it has no manifest and is called
    /// `name`), else `<child>/…` for a child folder that is (default empty;
    /// `ROS_PACKAGE_PATH` is searched after them, then `<prefix>/share` for each prefix of
    /// `AMENT_PREFIX_PATH`, then the URDF file's folder and every folder above it).
    pub package_paths: Vec<PathBuf>,
    /// Replace an inertia whose principal moments violate the triangle inequality by the
    /// isotropic one with their mean, as MuJoCo's `<compiler balanceinertia="true">` does
    /// (default `false`: kept as given, as Pinocchio does, with a warning).
    pub balance_inertia: bool,
}

impl Default for UrdfOptions {
    fn default() -> Self {
        UrdfOptions {
            floating_base: false,
            actuators: true,
            gravity: Vector3::new(0.0, 0.0, -9.81),
            package_paths: Vec::new(),
            balance_inertia: false,
        }
    }
}

fn to_pose(iso: &Isometry3<f64>) -> urdf_rs::Pose {
    let (r, p, y) = iso.rotation.euler_angles();
    let t = iso.translation.vector;
    urdf_rs::Pose {
        xyz: urdf_rs::Vec3([t.x, t.y, t.z]),
        rpy: urdf_rs::Vec3([r, p, y]),
    }
}

/// The collisions of link `li`, named after it where unnamed, placed by `frame ∘` their own
/// origin (for a link merged into another frame).
fn moved_collisions(
    robot: &urdf_rs::Robot,
    li: usize,
    frame: &Isometry3<f64>,
) -> Vec<urdf_rs::Collision> {
    let link = &robot.links[li];
    link.collision
        .iter()
        .enumerate()
        .map(|(k, c)| urdf_rs::Collision {
            origin: to_pose(&(frame * pose(&c.origin))),
            name: Some(own_name(c, &link.name, k)),
            ..c.clone()
        })
        .collect()
}

/// Re-parents the joints `children` to link `to`, each placed by `frame ∘` its own origin.
fn reparent(robot: &mut urdf_rs::Robot, children: &[usize], to: &str, frame: &Isometry3<f64>) {
    for &c in children {
        let joint = &mut robot.joints[c];
        joint.origin = to_pose(&(frame * pose(&joint.origin)));
        joint.parent.link = to.to_string();
    }
}

/// The name of collision `k` of `link`: its own, else `<link>_collision<k>` (kept when the
/// element moves to another link).
fn own_name(c: &urdf_rs::Collision, link: &str, k: usize) -> String {
    c.name
        .clone()
        .unwrap_or_else(|| format!("{link}_collision{k}"))
}

/// A collision element given to the world (from a massless root link fixed to it).
struct WorldCollision {
    name: String,
    origin: urdf_rs::Pose,
    geometry: urdf_rs::Geometry,
}

/// The inertia of an `<inertial>` about its centre of mass, in link axes: I_link = R I Rᵀ.
fn link_inertia(inertial: &urdf_rs::Inertial) -> Matrix3<f64> {
    let i = &inertial.inertia;
    let i_frame = Matrix3::new(
        i.ixx, i.ixy, i.ixz, i.ixy, i.iyy, i.iyz, i.ixz, i.iyz, i.izz,
    );
    let rot = UnitQuaternion::from_euler_angles(
        inertial.origin.rpy[0],
        inertial.origin.rpy[1],
        inertial.origin.rpy[2],
    )
    .to_rotation_matrix();
    rot.matrix() * i_frame * rot.matrix().transpose()
}

/// Adds the mass, centre of mass and inertia of link `from`, whose frame is `frame` in the
/// frame of link `to`, to those of `to` (the composite rigid body: masses add, the centre of
/// mass is their weighted mean, inertias move to it by the parallel-axis theorem,
/// I_c = Σ Iₖ + mₖ (|dₖ|² 1 − dₖ dₖᵀ) with dₖ = cₖ − c).
fn add_mass_properties(robot: &mut urdf_rs::Robot, from: usize, to: &str, frame: &Isometry3<f64>) {
    let source = &robot.links[from].inertial;
    let (m2, c2, i2) = (
        source.mass.value,
        frame * nalgebra::Point3::from(Vector3::from(source.origin.xyz.0)),
        frame.rotation.to_rotation_matrix().matrix()
            * link_inertia(source)
            * frame.rotation.to_rotation_matrix().matrix().transpose(),
    );
    let Some(target) = robot.links.iter_mut().find(|l| l.name == to) else {
        return;
    };
    let t = &mut target.inertial;
    let (m1, c1, i1) = (t.mass.value, Vector3::from(t.origin.xyz.0), link_inertia(t));
    let m = m1 + m2;
    let c = if m > 0.0 {
        (c1 * m1 + c2.coords * m2) / m
    } else {
        c1
    };
    let shift = |d: Vector3<f64>, mk: f64| {
        (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * mk
    };
    let i = i1 + shift(c1 - c, m1) + i2 + shift(c2.coords - c, m2);
    t.mass.value = m;
    t.origin = urdf_rs::Pose {
        xyz: urdf_rs::Vec3([c.x, c.y, c.z]),
        rpy: urdf_rs::Vec3([0.0, 0.0, 0.0]),
    };
    t.inertia = urdf_rs::Inertia {
        ixx: i[(0, 0)],
        ixy: 0.5 * (i[(0, 1)] + i[(1, 0)]),
        ixz: 0.5 * (i[(0, 2)] + i[(2, 0)]),
        iyy: i[(1, 1)],
        iyz: 0.5 * (i[(1, 2)] + i[(2, 1)]),
        izz: i[(2, 2)],
    };
}

/// Inertias whose entries are all below [`NEGLIGIBLE_INERTIA`] of the largest inertia entry
/// of the robot are rounding noise of an export (iCub's `l_ankle_2` has only
/// `ixz="1.35525e-20"`, principal moments ±1.4e-20 beside moments of 1e-4 elsewhere): they
/// are set to zero, with a warning, and then handled as the zero inertias they stand for (a
/// point mass).
fn zero_negligible_inertias(robot: &mut urdf_rs::Robot, warnings: &mut Vec<String>) {
    let largest = |i: &urdf_rs::Inertia| {
        [i.ixx, i.ixy, i.ixz, i.iyy, i.iyz, i.izz]
            .iter()
            .fold(0.0_f64, |m, x| m.max(x.abs()))
    };
    let scale = robot
        .links
        .iter()
        .map(|l| largest(&l.inertial.inertia))
        .fold(0.0_f64, f64::max);
    for link in &mut robot.links {
        let entry = largest(&link.inertial.inertia);
        if entry > 0.0 && entry <= NEGLIGIBLE_INERTIA * scale {
            warnings.push(format!(
                "link `{}`: inertia entries at most {entry:e}, below {NEGLIGIBLE_INERTIA:e} of                  the robot's largest ({scale:e}): taken as zero",
                link.name
            ));
            link.inertial.inertia = urdf_rs::Inertia {
                ixx: 0.0,
                ixy: 0.0,
                ixz: 0.0,
                iyy: 0.0,
                iyz: 0.0,
                izz: 0.0,
            };
        }
    }
}

/// See [`zero_negligible_inertias`].
const NEGLIGIBLE_INERTIA: f64 = 1e-12;

/// Merges the massless links, and the links with a singular inertia welded by a fixed joint
/// (see the module docs). Returns the collisions given to the world; `fail(link, message)`
/// builds the error of a massless moving link.
fn merge_massless_links(
    robot: &mut urdf_rs::Robot,
    floating_base: bool,
    warnings: &mut Vec<String>,
    fail: &dyn Fn(&str, String) -> ModelError,
) -> Result<Vec<WorldCollision>, ModelError> {
    let mut log = MergeLog {
        world: Vec::new(),
        merged: Vec::new(),
        warnings,
    };
    while let Some(li) = next_link_to_merge(robot, floating_base) {
        let link = MergedLink::new(robot, li);
        match link.parent_joint {
            Some(j) if robot.joints[j].joint_type != urdf_rs::JointType::Fixed => {
                let name = &link.name;
                return Err(fail(
                    name,
                    format!(
                        "link `{name}` has no mass but moves on joint `{}`: give it an \
                         <inertial> (a moving link needs mass, unless it has no inertia \
                         either and other links hang from it, as the cross of a universal \
                         joint)",
                        robot.joints[j].name
                    ),
                ));
            }
            Some(j) if robot.joints[j].parent.link != "world" => {
                merge_into_parent(robot, &link, j, &mut log);
            }
            _ if !floating_base || link.parent_joint.is_some() => {
                merge_into_world(robot, &link, &mut log);
            }
            _ => hand_root_to_heir(robot, &link, &mut log, fail)?,
        }
        robot.links.remove(li);
    }
    if !log.merged.is_empty() {
        log.warnings.push(format!(
            "massless links merged across fixed joints: {}",
            log.merged.join(", ")
        ));
    }
    Ok(log.world)
}

/// The next link to merge away: a massless link that is not a joint frame, else a welded
/// link with a singular or negative inertia.
fn next_link_to_merge(robot: &urdf_rs::Robot, floating_base: bool) -> Option<usize> {
    robot
        .links
        .iter()
        .position(|l| {
            l.name != "world" && l.inertial.mass.value == 0.0 && !is_joint_frame(robot, l)
        })
        .or_else(|| {
            robot
                .links
                .iter()
                .position(|l| is_welded_singular(robot, l, floating_base))
        })
}

/// A link with mass whose inertia is singular (a point mass, a rod: camera frames, sensor
/// links) or not positive semidefinite (a principal moment below zero: a CAD export's tiny
/// antenna), welded to its parent or to the world: merged like a massless one, its mass
/// going to the parent, as Pinocchio merges every welded link (the parent's sum is checked
/// like any inertia). On a moving joint it stays (singular: the mass matrix check decides;
/// negative: refused).
fn is_welded_singular(robot: &urdf_rs::Robot, l: &urdf_rs::Link, floating_base: bool) -> bool {
    let inertia = link_inertia(&l.inertial);
    l.name != "world"
        && l.inertial.mass.value > 0.0
        && (super::validate::inertia_is_singular(&inertia)
            || super::validate::inertia_is_negative(&inertia))
        && match robot.joints.iter().find(|j| j.child.link == l.name) {
            Some(j) => j.joint_type == urdf_rs::JointType::Fixed,
            None => !floating_base,
        }
}

/// A massless link without inertia between two moving joints (the cross of a universal
/// joint) stays: a joint frame, as MJCF bodies with several joints import. The mass matrix
/// check decides whether what hangs from it makes the dynamics computable.
fn is_joint_frame(robot: &urdf_rs::Robot, l: &urdf_rs::Link) -> bool {
    link_inertia(&l.inertial) == Matrix3::zeros()
        && robot
            .joints
            .iter()
            .any(|j| j.child.link == l.name && j.joint_type != urdf_rs::JointType::Fixed)
        && robot.joints.iter().any(|j| j.parent.link == l.name)
}

/// A link about to be merged away, and its place in the robot.
struct MergedLink {
    /// Its index in `robot.links`.
    index: usize,
    /// Its name.
    name: String,
    /// Whether it has no mass (else its inertia is singular or negative).
    massless: bool,
    /// What is wrong with its inertia (empty when massless).
    defect: String,
    /// The joint whose child it is.
    parent_joint: Option<usize>,
    /// The joints whose parent it is.
    children: Vec<usize>,
}

impl MergedLink {
    /// Link `li` of `robot`.
    fn new(robot: &urdf_rs::Robot, li: usize) -> Self {
        let name = robot.links[li].name.clone();
        let massless = robot.links[li].inertial.mass.value == 0.0;
        let defect = if massless {
            String::new()
        } else {
            super::validate::inertia_defect(&link_inertia(&robot.links[li].inertial))
                .unwrap_or_default()
        };
        let parent_joint = robot.joints.iter().position(|j| j.child.link == name);
        let children: Vec<usize> = (0..robot.joints.len())
            .filter(|&j| robot.joints[j].parent.link == name)
            .collect();
        MergedLink {
            index: li,
            name,
            massless,
            defect,
            parent_joint,
            children,
        }
    }
}

/// What merging gives besides the changed robot.
struct MergeLog<'w> {
    /// The collisions given to the world.
    world: Vec<WorldCollision>,
    /// The massless links merged, `link → target`, for one summary warning.
    merged: Vec<String>,
    /// The import's warnings (one per merged link with mass).
    warnings: &'w mut Vec<String>,
}

/// Merges `link` into its parent across its fixed joint `j`: its mass properties,
/// collisions and child joints move to the parent, and the joint goes.
fn merge_into_parent(
    robot: &mut urdf_rs::Robot,
    link: &MergedLink,
    j: usize,
    log: &mut MergeLog<'_>,
) {
    let (frame, parent) = (
        pose(&robot.joints[j].origin),
        robot.joints[j].parent.link.clone(),
    );
    add_mass_properties(robot, link.index, &parent, &frame);
    let moved = moved_collisions(robot, link.index, &frame);
    if let Some(p) = robot.links.iter_mut().find(|l| l.name == parent) {
        p.collision.extend(moved);
    }
    reparent(robot, &link.children, &parent, &frame);
    let name = &link.name;
    if link.massless {
        log.merged.push(format!("{name} → {parent}"));
    } else {
        log.warnings.push(format!(
            "link `{name}`: {}; merged (mass, centre of mass and inertia) \
             into `{parent}` across fixed joint `{}`",
            link.defect, robot.joints[j].name
        ));
    }
    robot.joints.remove(j);
}

/// Merges `link`, fixed to the world (by a joint, or as a root without a floating base),
/// into the world: its colliders and child joints go to the world, its mass is dropped.
fn merge_into_world(robot: &mut urdf_rs::Robot, link: &MergedLink, log: &mut MergeLog<'_>) {
    let frame = link
        .parent_joint
        .map_or_else(Isometry3::identity, |j| pose(&robot.joints[j].origin));
    log.world.extend(
        moved_collisions(robot, link.index, &frame)
            .into_iter()
            .map(|c| WorldCollision {
                name: c.name.unwrap_or_default(),
                origin: c.origin,
                geometry: c.geometry,
            }),
    );
    reparent(robot, &link.children, "world", &frame);
    let name = &link.name;
    if link.massless {
        log.merged.push(format!("{name} → world"));
    } else {
        log.warnings.push(format!(
            "link `{name}`: {}; welded to the world, so merged into it \
             (its mass does not move)",
            link.defect
        ));
    }
    if let Some(j) = link.parent_joint {
        robot.joints.remove(j);
    }
}

/// Merges the massless floating root `link` into its child across a fixed joint, which
/// becomes the root (its heir); `fail` builds the error where there is none.
fn hand_root_to_heir(
    robot: &mut urdf_rs::Robot,
    link: &MergedLink,
    log: &mut MergeLog<'_>,
    fail: &dyn Fn(&str, String) -> ModelError,
) -> Result<(), ModelError> {
    let name = &link.name;
    let Some(&f) = link
        .children
        .iter()
        .find(|&&c| robot.joints[c].joint_type == urdf_rs::JointType::Fixed)
    else {
        return Err(fail(
            name,
            format!(
                "link `{name}` has no mass and is the floating root, with no child \
                 across a fixed joint to take its place: give it an <inertial>"
            ),
        ));
    };
    let (frame, heir) = (
        pose(&robot.joints[f].origin).inverse(),
        robot.joints[f].child.link.clone(),
    );
    add_mass_properties(robot, link.index, &heir, &frame);
    let moved = moved_collisions(robot, link.index, &frame);
    if let Some(h) = robot.links.iter_mut().find(|l| l.name == heir) {
        h.collision.extend(moved);
    }
    let others: Vec<usize> = link.children.iter().copied().filter(|&c| c != f).collect();
    reparent(robot, &others, &heir, &frame);
    log.merged
        .push(format!("{name} → {heir} (the new floating root)"));
    robot.joints.remove(f);
    Ok(())
}

/// The `<name>` of the ROS package manifest `dir/package.xml` (REP 149 / REP 127), if `dir`
/// has one that parses.
fn manifest_name(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("package.xml")).ok()?;
    let doc = roxmltree::Document::parse(&text).ok()?;
    doc.root_element()
        .children()
        .find(|n| n.has_tag_name("name"))
        .and_then(|n| n.text())
        .map(|t| t.trim().to_string())
}

/// The root of package `package` as seen from directory `dir`: `dir` itself when its
/// `package.xml` names the package or (without a manifest) when it is called `package`;
/// else a child directory with either property. Children are read once, without recursion.
fn package_root_at(dir: &Path, package: &str) -> Option<PathBuf> {
    let is_root = |d: &Path| match manifest_name(d) {
        Some(name) => name == package,
        None => d.file_name().and_then(|n| n.to_str()) == Some(package) && d.is_dir(),
    };
    if is_root(dir) {
        return Some(dir.to_path_buf());
    }
    let named = dir.join(package);
    if is_root(&named) {
        return Some(named);
    }
    // A package folder need not be named after the package (ROS finds it by its manifest).
    let mut children: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && p.join("package.xml").is_file())
        .collect();
    children.sort();
    children
        .into_iter()
        .find(|c| manifest_name(c).as_deref() == Some(package))
}

/// The file of a URDF mesh `filename`: `package://name/rest` is `root/rest` for the first
/// package root of `name` (see [`package_root_at`]) found in `package_paths`, then in
/// `ROS_PACKAGE_PATH`, then in `<prefix>/share` for each prefix of `AMENT_PREFIX_PATH`
/// (ROS 2), then upward from `base` (the URDF's directory) to the filesystem
/// root, the way a URDF inside its ROS package or workspace finds its meshes; where none of
/// these holds the file, a folder called `name` in the same directories whatever its
/// `package.xml` names (Pinocchio's rule); `file://` is
/// absolute; anything else is relative to `base`. `Err` lists where it looked.
fn resolve_mesh(filename: &str, base: &Path, package_paths: &[PathBuf]) -> Result<PathBuf, String> {
    resolve_mesh_in(filename, base, package_paths).map(|p| without_current_dirs(&p))
}

/// `path` without its `.` components (`examples/./meshes/cube.stl` is
/// `examples/meshes/cube.stl`), the path a user is shown; `..` is kept (behind a symbolic
/// link it is not the lexical parent). A path of `.` alone stays `.`.
fn without_current_dirs(path: &Path) -> PathBuf {
    let tidy: PathBuf = path
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    if tidy.as_os_str().is_empty() {
        path.to_path_buf()
    } else {
        tidy
    }
}

/// [`resolve_mesh`] before its result is tidied; the paths it tried (in its `Err`) are
/// tidied as they are listed.
fn resolve_mesh_in(
    filename: &str,
    base: &Path,
    package_paths: &[PathBuf],
) -> Result<PathBuf, String> {
    if let Some(rest) = filename.strip_prefix("package://") {
        // `package:///name/rest` (published files have it, e.g. example-robot-data's
        // talos_full_v2.urdf) means `package://name/rest`.
        let rest = rest.trim_start_matches('/');
        let (package, relative) = rest.split_once('/').unwrap_or((rest, ""));
        let mut dirs: Vec<PathBuf> = package_paths.to_vec();
        if let Ok(ros) = std::env::var("ROS_PACKAGE_PATH") {
            dirs.extend(std::env::split_paths(&ros).filter(|d| !d.as_os_str().is_empty()));
        }
        // ROS 2 (ament, REP 122): installed packages live in `<prefix>/share/<name>`.
        if let Ok(ament) = std::env::var("AMENT_PREFIX_PATH") {
            dirs.extend(
                std::env::split_paths(&ament)
                    .filter(|d| !d.as_os_str().is_empty())
                    .map(|d| d.join("share")),
            );
        }
        let absolute_base = std::path::absolute(base).unwrap_or_else(|_| base.to_path_buf());
        dirs.extend(absolute_base.ancestors().map(Path::to_path_buf));
        let mut tried = Vec::new();
        for dir in &dirs {
            let Some(root) = package_root_at(dir, package) else {
                continue;
            };
            let candidate = root.join(relative);
            if candidate.is_file() {
                return Ok(candidate);
            }
            tried.push(without_current_dirs(&candidate).display().to_string());
        }
        // Failing that, a folder called `package` whatever its manifest names, as Pinocchio's
        // `package_dirs` resolve `package://name/rest` to `<dir>/name/rest`: example-robot-data
        // installs its robots under `share/example-robot-data/` beside a package.xml naming
        // `example_robot_descriptions`, and its URDFs say `package://example-robot-data/…`.
        for dir in &dirs {
            for root in [dir.clone(), dir.join(package)] {
                if root.file_name().and_then(|n| n.to_str()) != Some(package) || !root.is_dir() {
                    continue;
                }
                let candidate = root.join(relative);
                if candidate.is_file() {
                    return Ok(candidate);
                }
                let shown = without_current_dirs(&candidate).display().to_string();
                if !tried.contains(&shown) {
                    tried.push(shown);
                }
            }
        }
        return Err(if tried.is_empty() {
            format!(
                "`{filename}`: package `{package}` not found (no folder named `{package}` and \
                 no package.xml naming it in UrdfOptions::package_paths (`package_paths` of \
                 `[[robots]]`), ROS_PACKAGE_PATH, AMENT_PREFIX_PATH/share, or the \
                 folders above {})",
                without_current_dirs(&absolute_base).display()
            )
        } else {
            format!(
                "`{filename}` not found in package `{package}` (looked at {})",
                tried.join(", ")
            )
        });
    }
    let path = match filename.strip_prefix("file://") {
        Some(abs) => PathBuf::from(abs),
        None => base.join(filename),
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "`{filename}` not found (looked at {})",
            without_current_dirs(&path).display()
        ))
    }
}

fn pose(p: &urdf_rs::Pose) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(p.xyz[0], p.xyz[1], p.xyz[2]),
        UnitQuaternion::from_euler_angles(p.rpy[0], p.rpy[1], p.rpy[2]),
    )
}

impl Model {
    /// Imports a URDF robot description (decisions in the module docs of `io::urdf`). `file`
    /// is only used in error messages.
    pub fn from_urdf_str(
        src: &str,
        file: Option<&str>,
        options: &UrdfOptions,
    ) -> Result<Model, ModelError> {
        let parse::UrdfDocument {
            mut robot,
            lines,
            mut warnings,
        } = parse::read(src, file)?;
        let import = UrdfImport {
            lines,
            file,
            options,
            base_dir: file
                .and_then(|f| Path::new(f).parent())
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        };
        zero_negligible_inertias(&mut robot, &mut warnings);
        let world_collisions = merge_massless_links(
            &mut robot,
            options.floating_base,
            &mut warnings,
            &|link, message| import.error("link", link, format!("links.{link}.inertial"), message),
        )?;
        warn_unenforced(&robot, &mut warnings);
        let tree = LinkTree::new(&robot, &import)?;
        let parts = import.robot_parts(&robot, &tree, &world_collisions, &mut warnings)?;
        let mut model = robot_model(&robot.name, options, parts, warnings);
        // Validation, with paths in URDF terms (`links.<name>...`, `joints.<name>...`).
        validate_model(&model, &|path: &FieldPath| {
            import.validation_location(&model, path)
        })?;
        let inertia_warnings = super::validate::inertia_warnings(
            &model,
            "link",
            " (UrdfOptions::balance_inertia repairs it as MuJoCo's balanceinertia does)",
        );
        model.import_warnings.extend(inertia_warnings);
        Ok(model)
    }
}

/// Warns about what the model does not enforce: `mimic` couplings, velocity limits and joint
/// friction.
fn warn_unenforced(robot: &urdf_rs::Robot, warnings: &mut Vec<String>) {
    let mimic: Vec<&str> = robot
        .joints
        .iter()
        .filter(|j| j.mimic.is_some())
        .map(|j| j.name.as_str())
        .collect();
    if !mimic.is_empty() {
        warnings.push(format!(
            "`mimic` couplings are not enforced (the joints move freely): {}",
            mimic.join(", ")
        ));
    }
    let frictional: Vec<&str> = robot
        .joints
        .iter()
        .filter(|j| j.dynamics.as_ref().is_some_and(|d| d.friction != 0.0))
        .map(|j| j.name.as_str())
        .collect();
    if !frictional.is_empty() {
        warnings.push(format!(
            "joint friction (`<dynamics friction>`) is not modelled (damping is): {}",
            frictional.join(", ")
        ));
    }
    let velocity_limited = robot
        .joints
        .iter()
        .filter(|j| j.limit.velocity.is_finite() && j.limit.velocity > 0.0)
        .count();
    if velocity_limited > 0 {
        warnings.push(format!(
            "velocity limits of {velocity_limited} joint(s) are not enforced (position \
             limits and efforts are)"
        ));
    }
}

/// A URDF document being imported: where its links and joints are written and its file (to
/// locate errors), the options and the folder that relative mesh paths start from.
struct UrdfImport<'a> {
    /// The lines of the document's links and joints.
    lines: parse::ElementLines,
    /// Its file, for error messages.
    file: Option<&'a str>,
    /// The import options.
    options: &'a UrdfOptions,
    /// The folder of the URDF file.
    base_dir: PathBuf,
}

/// The link tree of a robot: its links (without `world`), each link's parent joint and
/// parent link, and the model order of the links (parents first).
struct LinkTree<'r> {
    /// The links that become bodies, in file order.
    links: Vec<&'r urdf_rs::Link>,
    /// Index of each joint in `robot.joints`, by name.
    joint_names: HashMap<&'r str, usize>,
    /// `joint_of[f]`: the joint whose child is link f (`None`: a root link).
    joint_of: Vec<Option<usize>>,
    /// `parent_of[f]`: the link that link f hangs from (`None`: the world).
    parent_of: Vec<Option<usize>>,
    /// `order[m]`: the link of model body m.
    order: Vec<usize>,
    /// `model_index[f]`: the model body of link f.
    model_index: Vec<usize>,
}

impl<'r> LinkTree<'r> {
    /// Resolves the link names of the joints and sorts the links topologically.
    fn new(robot: &'r urdf_rs::Robot, import: &UrdfImport<'_>) -> Result<Self, ModelError> {
        // The link `world`, if any, is the world frame.
        let links: Vec<&urdf_rs::Link> = robot.links.iter().filter(|l| l.name != "world").collect();
        let mut link_index = HashMap::new();
        for (i, l) in links.iter().enumerate() {
            if link_index.insert(l.name.as_str(), i).is_some() {
                return Err(ModelError::DuplicateName {
                    location: import.locate("link", &l.name, format!("links.{}.name", l.name)),
                    kind: "link",
                    name: l.name.clone(),
                });
            }
        }
        let mut tree = LinkTree {
            joint_names: HashMap::new(),
            joint_of: vec![None; links.len()],
            parent_of: vec![None; links.len()],
            order: Vec::new(),
            model_index: vec![0; links.len()],
            links,
        };
        for (j, uj) in robot.joints.iter().enumerate() {
            tree.connect(j, uj, &link_index, import)?;
        }
        tree.order = topological_order(&tree.parent_of);
        if tree.order.len() < tree.links.len() {
            let stuck = (0..tree.links.len())
                .find(|b| !tree.order.contains(b))
                .unwrap_or(0);
            let name = &tree.links[stuck].name;
            return Err(ModelError::Topology {
                location: import.locate("link", name, format!("links.{name}")),
                reason: "the joint graph has a cycle".into(),
            });
        }
        for (m, &f) in tree.order.iter().enumerate() {
            tree.model_index[f] = m;
        }
        Ok(tree)
    }

    /// Enters joint `j` into the tree: a unique name, a known child link other than the
    /// world with no other parent joint, a known parent link (or the world).
    fn connect(
        &mut self,
        j: usize,
        uj: &'r urdf_rs::Joint,
        link_index: &HashMap<&str, usize>,
        import: &UrdfImport<'_>,
    ) -> Result<(), ModelError> {
        let field = |f: &str| format!("joints.{}.{f}", uj.name);
        if self.joint_names.insert(uj.name.as_str(), j).is_some() {
            return Err(ModelError::DuplicateName {
                location: import.locate("joint", &uj.name, field("name")),
                kind: "joint",
                name: uj.name.clone(),
            });
        }
        if uj.child.link == "world" {
            return Err(ModelError::Topology {
                location: import.locate("joint", &uj.name, field("child")),
                reason: "the world cannot be the child of a joint".into(),
            });
        }
        let child =
            *link_index
                .get(uj.child.link.as_str())
                .ok_or_else(|| ModelError::UnknownName {
                    location: import.locate("joint", &uj.name, field("child")),
                    kind: "link",
                    name: uj.child.link.clone(),
                })?;
        let parent = if uj.parent.link == "world" {
            None
        } else {
            Some(*link_index.get(uj.parent.link.as_str()).ok_or_else(|| {
                ModelError::UnknownName {
                    location: import.locate("joint", &uj.name, field("parent")),
                    kind: "link",
                    name: uj.parent.link.clone(),
                }
            })?)
        };
        if self.joint_of[child].is_some() || parent == Some(child) {
            return Err(ModelError::Topology {
                location: import.locate("joint", &uj.name, field("child")),
                reason: format!("link `{}` has more than one parent joint", uj.child.link),
            });
        }
        self.joint_of[child] = Some(j);
        self.parent_of[child] = parent;
        Ok(())
    }
}

/// The parts of a model imported from a URDF robot.
struct RobotParts {
    /// One body per link, in model order.
    bodies: Vec<Body>,
    /// The parent joint of each body.
    joints: Vec<Joint>,
    /// The collision elements of the links, then those given to the world.
    colliders: Vec<Collider>,
    /// One actuator per actuated joint (with [`UrdfOptions::actuators`]).
    actuators: Vec<Actuator>,
}

impl UrdfImport<'_> {
    /// The location of the element `<tag name="name">` in the URDF text, with `field`.
    fn locate(&self, tag: &str, name: &str, field: String) -> Location {
        Location {
            file: self.file.map(str::to_string),
            line: self.lines.line(tag, name),
            field,
        }
    }

    /// A [`ModelError::Urdf`] at the element `<tag name="name">`.
    fn error(&self, tag: &str, name: &str, field: String, message: String) -> ModelError {
        ModelError::Urdf {
            location: self.locate(tag, name, field),
            message,
        }
    }

    /// Per link in model order: its body, its parent joint (with its actuator) and its
    /// colliders; then the colliders given to the world.
    fn robot_parts(
        &self,
        robot: &urdf_rs::Robot,
        tree: &LinkTree<'_>,
        world_collisions: &[WorldCollision],
        warnings: &mut Vec<String>,
    ) -> Result<RobotParts, ModelError> {
        let nb = tree.links.len();
        let mut parts = RobotParts {
            bodies: Vec::with_capacity(nb),
            joints: Vec::with_capacity(nb),
            colliders: Vec::new(),
            actuators: Vec::new(),
        };
        for (m, &f) in tree.order.iter().enumerate() {
            let link = tree.links[f];
            parts.bodies.push(self.link_body(link, warnings));
            let joint = match tree.joint_of[f] {
                Some(j) => {
                    let uj = &robot.joints[j];
                    let parent = tree.parent_of[f].map(|p| tree.model_index[p]);
                    let joint = self.joint(uj, parent, m)?;
                    parts.actuators.extend(self.actuator(uj, m));
                    joint
                }
                None => self.root_joint(link, &tree.joint_names, m),
            };
            parts.joints.push(joint);
            for (k, c) in link.collision.iter().enumerate() {
                let Some(shape) =
                    self.geometry_shape(&c.geometry, &link.name, k, true, warnings)?
                else {
                    continue;
                };
                parts.colliders.push(Collider {
                    name: own_name(c, &link.name, k),
                    body: Some(m),
                    pose: pose(&c.origin),
                    shape,
                    material: 0,
                    filter: CollisionFilter::default(),
                });
            }
        }
        for (k, w) in world_collisions.iter().enumerate() {
            let Some(shape) = self.geometry_shape(&w.geometry, "world", k, false, warnings)? else {
                continue;
            };
            parts.colliders.push(Collider {
                name: w.name.clone(),
                body: None,
                pose: pose(&w.origin),
                shape,
                material: 0,
                filter: CollisionFilter::default(),
            });
        }
        Ok(parts)
    }

    /// The body of `link`: mass, centre of mass and inertia in link axes, balanced (with a
    /// warning) under [`UrdfOptions::balance_inertia`].
    fn link_body(&self, link: &urdf_rs::Link, warnings: &mut Vec<String>) -> Body {
        let inertial = &link.inertial;
        let mut inertia = link_inertia(inertial);
        if self.options.balance_inertia {
            let given = inertia;
            if super::validate::balance_inertia(&mut inertia) {
                let eig = given.symmetric_eigenvalues();
                warnings.push(format!(
                    "link `{}`: principal moments ({}, {}, {}) violate the triangle \
                     inequality; balanced to their mean {} (balance_inertia)",
                    link.name,
                    eig[0],
                    eig[1],
                    eig[2],
                    inertia[(0, 0)]
                ));
            }
        }
        Body {
            name: link.name.clone(),
            mass: inertial.mass.value,
            com: Vector3::from(inertial.origin.xyz.0),
            inertia,
        }
    }

    /// The model joint of URDF joint `uj`, moving body `child` relative to `parent`;
    /// limits only on revolute and prismatic joints with finite lower < upper.
    fn joint(
        &self,
        uj: &urdf_rs::Joint,
        parent: Option<BodyId>,
        child: BodyId,
    ) -> Result<Joint, ModelError> {
        let field = |s: &str| format!("joints.{}.{s}", uj.name);
        use urdf_rs::JointType as T;
        let kind = match uj.joint_type {
            T::Revolute | T::Continuous => JointKind::Revolute,
            T::Prismatic => JointKind::Prismatic,
            T::Fixed => JointKind::Fixed,
            T::Floating => JointKind::Floating,
            T::Planar => JointKind::Planar,
            T::Spherical => {
                return Err(self.error(
                    "joint",
                    &uj.name,
                    field("type"),
                    "spherical joints are not supported".into(),
                ))
            }
        };
        let needs_axis = matches!(
            kind,
            JointKind::Revolute | JointKind::Prismatic | JointKind::Planar
        );
        let axis = if needs_axis {
            let loc_axis = |_: &FieldPath| self.locate("joint", &uj.name, field("axis"));
            unit_vector(&loc_axis, &FieldPath::root(), uj.axis.xyz.0)?
        } else {
            Vector3::z_axis()
        };
        if kind == JointKind::Planar && (axis.x.abs() > 1e-9 || axis.y.abs() > 1e-9) {
            return Err(self.error(
                "joint",
                &uj.name,
                field("axis"),
                "planar joints must have axis (0, 0, ±1)".into(),
            ));
        }
        let l = &uj.limit;
        let has_limit = matches!(uj.joint_type, T::Revolute | T::Prismatic)
            && l.lower.is_finite()
            && l.upper.is_finite()
            && l.lower < l.upper;
        Ok(Joint {
            name: uj.name.clone(),
            kind,
            parent,
            child,
            placement: pose(&uj.origin),
            axis,
            limit: has_limit.then_some(JointLimit {
                lower: l.lower,
                upper: l.upper,
                stiffness: None,
                damping: None,
            }),
            spring: None,
            damping: uj.dynamics.as_ref().map_or(0.0, |d| d.damping),
            armature: 0.0,
            q_index: 0,
            v_index: 0,
        })
    }

    /// The motor of joint `uj` (model joint `joint`) under [`UrdfOptions::actuators`], for
    /// revolute, continuous and prismatic joints: gear 1, effort bounds ±`effort` when that
    /// is finite and positive.
    fn actuator(&self, uj: &urdf_rs::Joint, joint: usize) -> Option<Actuator> {
        use urdf_rs::JointType as T;
        let actuated = matches!(uj.joint_type, T::Revolute | T::Continuous | T::Prismatic);
        let effort = uj.limit.effort;
        (self.options.actuators && actuated).then(|| Actuator {
            name: uj.name.clone(),
            joint,
            dof: 0,
            gear: 1.0,
            effort_limit: (effort.is_finite() && effort > 0.0).then_some((-effort, effort)),
            kind: ActuatorKind::Motor,
        })
    }

    /// The joint of a root link to the world: floating (named after the link) under
    /// [`UrdfOptions::floating_base`], else fixed (`<link>_to_world`); `_root` is appended
    /// while the name is a URDF joint's.
    fn root_joint(
        &self,
        link: &urdf_rs::Link,
        joint_names: &HashMap<&str, usize>,
        child: BodyId,
    ) -> Joint {
        let mut name = if self.options.floating_base {
            link.name.clone()
        } else {
            format!("{}_to_world", link.name)
        };
        while joint_names.contains_key(name.as_str()) {
            name.push_str("_root");
        }
        let kind = if self.options.floating_base {
            JointKind::Floating
        } else {
            JointKind::Fixed
        };
        Joint {
            child,
            ..Joint::new(name, kind, None)
        }
    }

    /// A URDF collision geometry (the `k`-th of `link`) as a shape (`None`: skipped with a
    /// warning); a mesh on a `moving` link collides as its convex hull.
    fn geometry_shape(
        &self,
        geometry: &urdf_rs::Geometry,
        link: &str,
        k: usize,
        moving: bool,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Shape>, ModelError> {
        let field = format!("links.{link}.collision[{k}].geometry");
        Ok(Some(match geometry {
            urdf_rs::Geometry::Sphere { radius } => Shape::Sphere { radius: *radius },
            urdf_rs::Geometry::Box { size } => Shape::Box {
                half_extents: Vector3::from(size.0) * 0.5,
            },
            // URDF cylinders and capsules have their axis along z, as ours.
            urdf_rs::Geometry::Cylinder { radius, length } => Shape::Cylinder {
                radius: *radius,
                half_length: 0.5 * length,
            },
            urdf_rs::Geometry::Capsule { radius, length } => Shape::Capsule {
                radius: *radius,
                half_length: 0.5 * length,
            },
            urdf_rs::Geometry::Mesh { filename, scale } => {
                if filename.to_ascii_lowercase().ends_with(".dae") {
                    warnings.push(format!(
                        "link `{link}`: collision mesh `{filename}` skipped (COLLADA .dae \
                         is not read; convert it to STL or OBJ)"
                    ));
                    return Ok(None);
                }
                let path = resolve_mesh(filename, &self.base_dir, &self.options.package_paths)
                    .map_err(|m| self.error("link", link, field.clone(), m))?;
                let scale = scale
                    .as_ref()
                    .map_or(Vector3::new(1.0, 1.0, 1.0), |s| Vector3::from(s.0));
                let data = super::mesh::read_mesh_file(&path, scale, &field)?;
                let mesh = crate::geometry::TriangleMesh::new(
                    data.vertices,
                    data.triangles,
                    Some(crate::geometry::MeshSource {
                        file: path.display().to_string(),
                        scale,
                    }),
                )
                .and_then(|m| if moving { m.colliding_as_hull() } else { Ok(m) })
                .map_err(|m| self.error("link", link, field.clone(), m))?;
                Shape::Mesh(mesh)
            }
        }))
    }

    /// The location of a validation error at model `path`, in URDF terms: the link or joint
    /// element, its field as URDF names it (`links.<name>.inertial.mass`, …).
    fn validation_location(&self, model: &Model, path: &FieldPath) -> Location {
        let segs = &path.0;
        let rest = || {
            let tail = FieldPath(segs.get(2..).unwrap_or(&[]).to_vec()).to_string();
            match tail.as_str() {
                "mass" => "inertial.mass".to_string(),
                "com" => "inertial.origin".to_string(),
                t if t.starts_with("inertia") => format!("inertial.{t}"),
                _ => tail,
            }
        };
        let under = |prefix: String| match rest() {
            r if r.is_empty() => prefix,
            r => format!("{prefix}.{r}"),
        };
        let (tag, name, field) = match (segs.first(), segs.get(1)) {
            (Some(Seg::Key(k)), Some(Seg::Index(i))) if k == "bodies" => {
                let n = model.bodies.get(*i).map_or("", |b| b.name.as_str());
                ("link", n.to_string(), under(format!("links.{n}")))
            }
            (Some(Seg::Key(k)), Some(Seg::Index(i))) if k == "joints" => {
                let n = model.joints.get(*i).map_or("", |j| j.name.as_str());
                ("joint", n.to_string(), under(format!("joints.{n}")))
            }
            (Some(Seg::Key(k)), Some(Seg::Index(i))) if k == "colliders" => {
                let c = model.colliders.get(*i);
                let n = c
                    .and_then(|c| c.body)
                    .and_then(|b| model.bodies.get(b))
                    .map_or("", |b| b.name.as_str());
                let cn = c.map_or("", |c| c.name.as_str());
                ("link", n.to_string(), format!("links.{n}.collision.{cn}"))
            }
            _ => ("robot", String::new(), path.to_string()),
        };
        self.locate(tag, &name, field)
    }
}

/// The model of an imported robot (not yet validated): its parts, one default material
/// where it has colliders, the neutral initial state.
fn robot_model(
    name: &str,
    options: &UrdfOptions,
    parts: RobotParts,
    warnings: Vec<String>,
) -> Model {
    let materials = if parts.colliders.is_empty() {
        Vec::new()
    } else {
        vec![ContactMaterial::default_material()]
    };
    let mut model = Model {
        name: name.to_string(),
        dimension: Dimension::Spatial,
        gravity: options.gravity,
        bodies: parts.bodies,
        joints: parts.joints,
        colliders: parts.colliders,
        materials,
        pair_overrides: Vec::new(),
        excluded_pairs: Vec::new(),
        constraints: Vec::new(),
        actuators: parts.actuators,
        initial_state: State {
            q: DVector::zeros(0),
            v: DVector::zeros(0),
            t: 0.0,
        },
        contact_margin: 0.0,
        simulation: SimulationSettings::default(),
        import_warnings: warnings,
    };
    model.assign_coordinate_offsets();
    let mut q = DVector::zeros(model.nq());
    for j in &model.joints {
        if let Some(offset) = j.kind.quaternion_offset() {
            q[j.q_index + offset] = 1.0;
        }
    }
    model.initial_state = State {
        q,
        v: DVector::zeros(model.nv()),
        t: 0.0,
    };
    model
}
