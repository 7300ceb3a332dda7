//! `[[robots]]`: URDF or MJCF robots placed in a model file, next to the file's own ground,
//! materials and bodies. Each robot is imported ([`Model::from_urdf_file`] with the model's
//! gravity, or [`Model::from_mjcf_file`]) and appended: its names prefixed, its root placed
//! at `pose` (URDF: a fixed joint, or a floating one with `floating = true`; MJCF: its own
//! joints, a `<freejoint>` root starting at `pose` ∘ its body pose), its colliders given the
//! `material` (MJCF without one: its friction materials, added to the model's), its initial
//! coordinates set from `q`. The file's own `[initial]` knows only the file's joints. An
//! MJCF robot's `<option>` (gravity, timestep) is not used: the model file's own holds.

use std::path::Path;

use nalgebra::DVector;

use super::format::{FileRobot, JointCoords};
use super::load::{invalid, pose};
use super::spans::FieldPath;
use super::validate::Locator;
use super::UrdfOptions;
use crate::error::ModelError;
use crate::model::{ContactMaterial, Model};

/// Appends every robot of `robots` to `model` (see the module docs) and validates the result.
pub(super) fn attach_robots(
    model: &mut Model,
    robots: &[FileRobot],
    file: Option<&str>,
    loc: &Locator<'_>,
) -> Result<(), ModelError> {
    let dir = file
        .and_then(|f| Path::new(f).parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    for (i, fr) in robots.iter().enumerate() {
        let pr = FieldPath::root().key("robots").idx(i);
        if model.dimension != crate::Dimension::Spatial {
            return Err(invalid(
                loc,
                &pr,
                "robots are spatial: the model must be `dimension = \"spatial\"`",
            ));
        }
        let (robot, source) = match (&fr.urdf, &fr.mjcf) {
            (Some(urdf), None) => {
                let options = UrdfOptions {
                    floating_base: fr.floating.unwrap_or(false),
                    actuators: fr.actuators.unwrap_or(true),
                    gravity: model.gravity,
                    package_paths: fr
                        .package_paths
                        .iter()
                        .flatten()
                        .map(|p| dir.join(p))
                        .collect(),
                    balance_inertia: fr.balance_inertia.unwrap_or(false),
                };
                (Model::from_urdf_file(dir.join(urdf), &options)?, urdf)
            }
            (None, Some(mjcf)) => {
                for (key, given) in [
                    ("floating", fr.floating.is_some()),
                    ("package_paths", fr.package_paths.is_some()),
                    ("balance_inertia", fr.balance_inertia.is_some()),
                ] {
                    if given {
                        return Err(invalid(
                            loc,
                            &pr.key(key),
                            "applies to URDF robots only (an MJCF robot floats by its own \
                             <freejoint>, finds meshes through <compiler meshdir> and \
                             balances inertias by <compiler balanceinertia>)",
                        ));
                    }
                }
                let options = super::MjcfOptions {
                    actuators: fr.actuators.unwrap_or(true),
                    ..Default::default()
                };
                (Model::from_mjcf_file(dir.join(mjcf), &options)?, mjcf)
            }
            _ => {
                return Err(invalid(
                    loc,
                    &pr,
                    "give exactly one of `urdf = \"…\"` and `mjcf = \"…\"`",
                ))
            }
        };
        let at = pose(loc, &pr.key("pose"), &fr.pose)?;
        let material = match &fr.material {
            Some(name) => Some(
                model
                    .materials
                    .iter()
                    .position(|m| &m.name == name)
                    .ok_or_else(|| ModelError::UnknownName {
                        location: loc(&pr.key("material")),
                        kind: "material",
                        name: name.clone(),
                    })?,
            ),
            None if fr.mjcf.is_some() => None,
            None => Some(
                match model.materials.iter().position(|m| m.name == "default") {
                    Some(k) => k,
                    None => {
                        model.materials.push(ContactMaterial::default_material());
                        model.materials.len() - 1
                    }
                },
            ),
        };
        let prefix = fr.prefix.clone().unwrap_or_default();
        let joints_before = model.joints.len();
        let source = source.clone();
        append(model, robot, &prefix, &at, material, &source);
        if let Some(q) = &fr.q {
            for (name, coords) in q {
                let pq = pr.key("q").key(name);
                let full = format!("{prefix}{name}");
                let joint = model.joints[joints_before..]
                    .iter()
                    .find(|j| j.name == full)
                    .ok_or_else(|| ModelError::UnknownName {
                        location: loc(&pq),
                        kind: "joint",
                        name: name.clone(),
                    })?;
                let values = match coords {
                    JointCoords::Scalar(x) => vec![*x],
                    JointCoords::Vector(xs) => xs.clone(),
                };
                if values.len() != joint.kind.nq() {
                    return Err(ModelError::DimensionMismatch {
                        location: loc(&pq),
                        expected: joint.kind.nq(),
                        got: values.len(),
                    });
                }
                let start = joint.q_index;
                model
                    .initial_state
                    .q
                    .rows_mut(start, values.len())
                    .copy_from_slice(&values);
            }
        }
    }
    model.validate()
}

/// Appends `robot` to `model`: names prefixed, root joints placed at `at`, colliders of
/// `material` (`None`: the robot's own materials, merged by name with the model's when
/// equal, else added under the prefixed name), initial state concatenated.
fn append(
    model: &mut Model,
    robot: Model,
    prefix: &str,
    at: &nalgebra::Isometry3<f64>,
    material: Option<usize>,
    source: &str,
) {
    let nb = model.bodies.len();
    let nc = model.colliders.len();
    let own_materials: Vec<usize> = robot
        .materials
        .iter()
        .filter(|_| material.is_none())
        .map(
            |m| match model.materials.iter().position(|e| e.name == m.name) {
                Some(k) if model.materials[k] == *m => k,
                found => {
                    let mut m = m.clone();
                    if found.is_some() {
                        m.name = format!("{prefix}{}", m.name);
                    }
                    model.materials.push(m);
                    model.materials.len() - 1
                }
            },
        )
        .collect();
    for mut b in robot.bodies {
        b.name = format!("{prefix}{}", b.name);
        model.bodies.push(b);
    }
    for mut j in robot.joints {
        j.name = format!("{prefix}{}", j.name);
        j.child += nb;
        match j.parent {
            Some(p) => j.parent = Some(p + nb),
            None => j.placement = at * j.placement,
        }
        model.joints.push(j);
    }
    for mut c in robot.colliders {
        c.name = format!("{prefix}{}", c.name);
        match c.body {
            Some(b) => c.body = Some(b + nb),
            None => c.pose = at * c.pose,
        }
        c.material = material.unwrap_or_else(|| own_materials[c.material]);
        model.colliders.push(c);
    }
    for mut a in robot.actuators {
        a.name = format!("{prefix}{}", a.name);
        a.joint += nb;
        model.actuators.push(a);
    }
    model
        .excluded_pairs
        .extend(robot.excluded_pairs.iter().map(|&(a, b)| (a + nc, b + nc)));
    model.import_warnings.extend(
        robot
            .import_warnings
            .into_iter()
            .map(|w| format!("robot `{source}`: {w}")),
    );
    let joined = |a: &DVector<f64>, b: &DVector<f64>| {
        DVector::from_iterator(a.len() + b.len(), a.iter().chain(b.iter()).copied())
    };
    model.initial_state.q = joined(&model.initial_state.q, &robot.initial_state.q);
    model.initial_state.v = joined(&model.initial_state.v, &robot.initial_state.v);
    model.assign_coordinate_offsets();
}
