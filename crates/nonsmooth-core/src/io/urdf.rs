//! URDF import (via `urdf-rs`): links become bodies, joints become joints, sphere and box
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
//! - `mimic` couplings and velocity limits are not enforced: one warning lists the joints;
//! - what an import leaves out or approximates is in [`Model::import_warnings`];
//! - colliders use the default material (μ = 0.5, rigid);
//! - with [`UrdfOptions::actuators`], every revolute/continuous/prismatic joint gets an
//!   actuator with gear 1 and effort bounds ±`effort` when that is finite and positive.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nalgebra::{DVector, Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};

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
    use urdf_rs::JointType;
    let mut world = Vec::new();
    let mut merged = Vec::new();
    // A link with mass whose inertia is singular (a point mass, a rod: camera frames, sensor
    // links) or not positive semidefinite (a principal moment below zero: a CAD export's
    // tiny antenna), welded to its parent or to the world: merged like a massless one, its
    // mass going to the parent, as Pinocchio merges every welded link (the parent's sum is
    // checked like any inertia). On a moving joint it stays (singular: the mass matrix check
    // decides; negative: refused).
    let welded_singular = |robot: &urdf_rs::Robot, l: &urdf_rs::Link| {
        let inertia = link_inertia(&l.inertial);
        l.name != "world"
            && l.inertial.mass.value > 0.0
            && (super::validate::inertia_is_singular(&inertia)
                || super::validate::inertia_is_negative(&inertia))
            && match robot.joints.iter().find(|j| j.child.link == l.name) {
                Some(j) => j.joint_type == JointType::Fixed,
                None => !floating_base,
            }
    };
    // A massless link without inertia between two moving joints (the cross of a universal
    // joint) stays: a joint frame, as MJCF bodies with several joints import. The mass matrix
    // check decides whether what hangs from it makes the dynamics computable.
    let joint_frame = |robot: &urdf_rs::Robot, l: &urdf_rs::Link| {
        link_inertia(&l.inertial) == Matrix3::zeros()
            && robot
                .joints
                .iter()
                .any(|j| j.child.link == l.name && j.joint_type != JointType::Fixed)
            && robot.joints.iter().any(|j| j.parent.link == l.name)
    };
    while let Some(li) = robot
        .links
        .iter()
        .position(|l| l.name != "world" && l.inertial.mass.value == 0.0 && !joint_frame(robot, l))
        .or_else(|| robot.links.iter().position(|l| welded_singular(robot, l)))
    {
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
        match parent_joint {
            Some(j) if robot.joints[j].joint_type != JointType::Fixed => {
                return Err(fail(
                    &name,
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
                // Into the parent, across the fixed joint.
                let (frame, parent) = (
                    pose(&robot.joints[j].origin),
                    robot.joints[j].parent.link.clone(),
                );
                add_mass_properties(robot, li, &parent, &frame);
                let moved = moved_collisions(robot, li, &frame);
                if let Some(p) = robot.links.iter_mut().find(|l| l.name == parent) {
                    p.collision.extend(moved);
                }
                reparent(robot, &children, &parent, &frame);
                if massless {
                    merged.push(format!("{name} → {parent}"));
                } else {
                    warnings.push(format!(
                        "link `{name}`: {defect}; merged (mass, centre of mass and inertia) \
                         into `{parent}` across fixed joint `{}`",
                        robot.joints[j].name
                    ));
                }
                robot.joints.remove(j);
            }
            _ if !floating_base || parent_joint.is_some() => {
                // Fixed to the world: its colliders and child joints go to the world.
                let frame = parent_joint
                    .map_or_else(Isometry3::identity, |j| pose(&robot.joints[j].origin));
                world.extend(moved_collisions(robot, li, &frame).into_iter().map(|c| {
                    WorldCollision {
                        name: c.name.unwrap_or_default(),
                        origin: c.origin,
                        geometry: c.geometry,
                    }
                }));
                reparent(robot, &children, "world", &frame);
                if massless {
                    merged.push(format!("{name} → world"));
                } else {
                    warnings.push(format!(
                        "link `{name}`: {defect}; welded to the world, so merged into it \
                         (its mass does not move)"
                    ));
                }
                if let Some(j) = parent_joint {
                    robot.joints.remove(j);
                }
            }
            _ => {
                // A massless floating root: its child across a fixed joint becomes the root.
                let Some(&f) = children
                    .iter()
                    .find(|&&c| robot.joints[c].joint_type == JointType::Fixed)
                else {
                    return Err(fail(
                        &name,
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
                add_mass_properties(robot, li, &heir, &frame);
                let moved = moved_collisions(robot, li, &frame);
                if let Some(h) = robot.links.iter_mut().find(|l| l.name == heir) {
                    h.collision.extend(moved);
                }
                let others: Vec<usize> = children.iter().copied().filter(|&c| c != f).collect();
                reparent(robot, &others, &heir, &frame);
                merged.push(format!("{name} → {heir} (the new floating root)"));
                robot.joints.remove(f);
            }
        }
        robot.links.remove(li);
    }
    if !merged.is_empty() {
        warnings.push(format!(
            "massless links merged across fixed joints: {}",
            merged.join(", ")
        ));
    }
    Ok(world)
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
            tried.push(candidate.display().to_string());
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
                let shown = candidate.display().to_string();
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
                absolute_base.display()
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
            path.display()
        ))
    }
}

/// `src` without the `<texture>` elements that name no file (`<texture />`, as iCub's URDF
/// has): urdfdom and Pinocchio accept them, urdf-rs requires `filename`. A texture is drawn,
/// never simulated, so nothing of the model is lost.
fn without_empty_textures(src: &str) -> std::borrow::Cow<'_, str> {
    if !src.contains("<texture") {
        return src.into();
    }
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(at) = rest.find("<texture") {
        out.push_str(&rest[..at]);
        let tag = &rest[at..];
        let Some(close) = tag.find('>') else {
            rest = tag;
            break;
        };
        let head = &tag[..=close];
        let keep =
            head.contains("filename") || !head[8..].starts_with([' ', '\t', '\n', '\r', '/', '>']);
        let end = if keep {
            None
        } else if head.ends_with("/>") {
            Some(close + 1)
        } else {
            tag.find("</texture>").map(|e| e + "</texture>".len())
        };
        match end {
            Some(end) => rest = &tag[end..],
            None => {
                out.push_str(head);
                rest = &tag[close + 1..];
            }
        }
    }
    out.push_str(rest);
    out.into()
}

/// 1-based line of the element `<tag ... name="name"`, searched textually.
fn find_line(src: &str, tag: &str, name: &str) -> Option<usize> {
    let needle = format!("name=\"{name}\"");
    let open = format!("<{tag}");
    let mut from = 0;
    while let Some(pos) = src[from..].find(&needle) {
        let at = from + pos;
        if let Some(lt) = src[..at].rfind('<') {
            if src[lt..].starts_with(&open) {
                return Some(src[..at].matches('\n').count() + 1);
            }
        }
        from = at + needle.len();
    }
    None
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
        let locate = |tag: &str, name: &str, field: String| Location {
            file: file.map(str::to_string),
            line: find_line(src, tag, name),
            field,
        };
        let mut robot = urdf_rs::read_from_string(&without_empty_textures(src)).map_err(|e| {
            ModelError::Urdf {
                location: Location {
                    file: file.map(str::to_string),
                    line: None,
                    field: String::new(),
                },
                message: e.to_string(),
            }
        })?;
        let urdf_err = |tag: &str, name: &str, field: String, message: String| ModelError::Urdf {
            location: locate(tag, name, field),
            message,
        };
        let mut warnings = Vec::new();
        zero_negligible_inertias(&mut robot, &mut warnings);
        let world_collisions = merge_massless_links(
            &mut robot,
            options.floating_base,
            &mut warnings,
            &|link, message| urdf_err("link", link, format!("links.{link}.inertial"), message),
        )?;
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
        let base_dir = file
            .and_then(|f| Path::new(f).parent())
            .map(Path::to_path_buf)
            .unwrap_or_default();
        // A URDF collision geometry as a shape (`None`: skipped with a warning).
        let geometry_shape = |geometry: &urdf_rs::Geometry,
                              link: &str,
                              k: usize,
                              moving: bool,
                              warnings: &mut Vec<String>|
         -> Result<Option<Shape>, ModelError> {
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
                    let path = resolve_mesh(filename, &base_dir, &options.package_paths)
                        .map_err(|m| urdf_err("link", link, field.clone(), m))?;
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
                    .map_err(|m| urdf_err("link", link, field.clone(), m))?;
                    Shape::Mesh(mesh)
                }
            }))
        };

        // Links (the link `world`, if any, is the world frame).
        let links: Vec<&urdf_rs::Link> = robot.links.iter().filter(|l| l.name != "world").collect();
        let mut link_index = HashMap::new();
        for (i, l) in links.iter().enumerate() {
            if link_index.insert(l.name.as_str(), i).is_some() {
                return Err(ModelError::DuplicateName {
                    location: locate("link", &l.name, format!("links.{}.name", l.name)),
                    kind: "link",
                    name: l.name.clone(),
                });
            }
        }
        let nb = links.len();
        let mut joint_of: Vec<Option<usize>> = vec![None; nb];
        let mut parent_of: Vec<Option<usize>> = vec![None; nb];
        let mut joint_names = HashMap::new();
        for (j, uj) in robot.joints.iter().enumerate() {
            let field = |f: &str| format!("joints.{}.{f}", uj.name);
            if joint_names.insert(uj.name.as_str(), j).is_some() {
                return Err(ModelError::DuplicateName {
                    location: locate("joint", &uj.name, field("name")),
                    kind: "joint",
                    name: uj.name.clone(),
                });
            }
            if uj.child.link == "world" {
                return Err(ModelError::Topology {
                    location: locate("joint", &uj.name, field("child")),
                    reason: "the world cannot be the child of a joint".into(),
                });
            }
            let child =
                *link_index
                    .get(uj.child.link.as_str())
                    .ok_or_else(|| ModelError::UnknownName {
                        location: locate("joint", &uj.name, field("child")),
                        kind: "link",
                        name: uj.child.link.clone(),
                    })?;
            let parent = if uj.parent.link == "world" {
                None
            } else {
                Some(*link_index.get(uj.parent.link.as_str()).ok_or_else(|| {
                    ModelError::UnknownName {
                        location: locate("joint", &uj.name, field("parent")),
                        kind: "link",
                        name: uj.parent.link.clone(),
                    }
                })?)
            };
            if joint_of[child].is_some() || parent == Some(child) {
                return Err(ModelError::Topology {
                    location: locate("joint", &uj.name, field("child")),
                    reason: format!("link `{}` has more than one parent joint", uj.child.link),
                });
            }
            joint_of[child] = Some(j);
            parent_of[child] = parent;
        }

        let order = topological_order(&parent_of);
        if order.len() < nb {
            let stuck = (0..nb).find(|b| !order.contains(b)).unwrap_or(0);
            let name = &links[stuck].name;
            return Err(ModelError::Topology {
                location: locate("link", name, format!("links.{name}")),
                reason: "the joint graph has a cycle".into(),
            });
        }
        let mut model_index = vec![0; nb];
        for (m, &f) in order.iter().enumerate() {
            model_index[f] = m;
        }

        let mut bodies = Vec::with_capacity(nb);
        let mut joints = Vec::with_capacity(nb);
        let mut colliders = Vec::new();
        let mut actuators = Vec::new();
        for (m, &f) in order.iter().enumerate() {
            let link = links[f];
            let inertial = &link.inertial;
            let mut inertia = link_inertia(inertial);
            if options.balance_inertia {
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
            bodies.push(Body {
                name: link.name.clone(),
                mass: inertial.mass.value,
                com: Vector3::from(inertial.origin.xyz.0),
                inertia,
            });
            let joint = match joint_of[f] {
                Some(j) => {
                    let uj = &robot.joints[j];
                    let field = |s: &str| format!("joints.{}.{s}", uj.name);
                    use urdf_rs::JointType as T;
                    let kind = match uj.joint_type {
                        T::Revolute | T::Continuous => JointKind::Revolute,
                        T::Prismatic => JointKind::Prismatic,
                        T::Fixed => JointKind::Fixed,
                        T::Floating => JointKind::Floating,
                        T::Planar => JointKind::Planar,
                        T::Spherical => {
                            return Err(urdf_err(
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
                        let loc_axis = |_: &FieldPath| locate("joint", &uj.name, field("axis"));
                        unit_vector(&loc_axis, &FieldPath::root(), uj.axis.xyz.0)?
                    } else {
                        Vector3::z_axis()
                    };
                    if kind == JointKind::Planar && (axis.x.abs() > 1e-9 || axis.y.abs() > 1e-9) {
                        return Err(urdf_err(
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
                    if options.actuators
                        && matches!(uj.joint_type, T::Revolute | T::Continuous | T::Prismatic)
                    {
                        actuators.push(Actuator {
                            name: uj.name.clone(),
                            joint: m,
                            dof: 0,
                            gear: 1.0,
                            effort_limit: (l.effort.is_finite() && l.effort > 0.0)
                                .then_some((-l.effort, l.effort)),
                            kind: ActuatorKind::Motor,
                        });
                    }
                    Joint {
                        name: uj.name.clone(),
                        kind,
                        parent: parent_of[f].map(|p| model_index[p]),
                        child: m,
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
                    }
                }
                None => {
                    let mut name = if options.floating_base {
                        link.name.clone()
                    } else {
                        format!("{}_to_world", link.name)
                    };
                    while joint_names.contains_key(name.as_str()) {
                        name.push_str("_root");
                    }
                    let kind = if options.floating_base {
                        JointKind::Floating
                    } else {
                        JointKind::Fixed
                    };
                    Joint {
                        child: m,
                        ..Joint::new(name, kind, None)
                    }
                }
            };
            joints.push(joint);
            for (k, c) in link.collision.iter().enumerate() {
                let Some(shape) = geometry_shape(&c.geometry, &link.name, k, true, &mut warnings)?
                else {
                    continue;
                };
                let name = c
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("{}_collision{k}", link.name));
                colliders.push(Collider {
                    name,
                    body: Some(m),
                    pose: pose(&c.origin),
                    shape,
                    material: 0,
                    filter: CollisionFilter::default(),
                });
            }
        }
        for (k, w) in world_collisions.iter().enumerate() {
            let Some(shape) = geometry_shape(&w.geometry, "world", k, false, &mut warnings)? else {
                continue;
            };
            colliders.push(Collider {
                name: w.name.clone(),
                body: None,
                pose: pose(&w.origin),
                shape,
                material: 0,
                filter: CollisionFilter::default(),
            });
        }
        let materials = if colliders.is_empty() {
            Vec::new()
        } else {
            vec![ContactMaterial::default_material()]
        };
        let mut model = Model {
            name: robot.name.clone(),
            dimension: Dimension::Spatial,
            gravity: options.gravity,
            bodies,
            joints,
            colliders,
            materials,
            pair_overrides: Vec::new(),
            excluded_pairs: Vec::new(),
            constraints: Vec::new(),
            actuators,
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

        // Validation, with paths in URDF terms (`links.<name>...`, `joints.<name>...`).
        let map = |path: &FieldPath| -> Location {
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
            locate(tag, &name, field)
        };
        validate_model(&model, &map)?;
        let inertia_warnings = super::validate::inertia_warnings(
            &model,
            "link",
            " (UrdfOptions::balance_inertia repairs it as MuJoCo's balanceinertia does)",
        );
        model.import_warnings.extend(inertia_warnings);
        Ok(model)
    }
}
