//! `[[robots]]`: URDF robots placed in a model file, next to the file's own ground,
//! materials and bodies. Each robot is imported ([`Model::from_urdf_file`], with the model's
//! gravity) and appended: its names prefixed, its root placed at `pose` (a fixed joint, or a
//! floating one with `floating = true`), its colliders given the `material`, its initial
//! coordinates set from `q`. The file's own `[initial]` knows only the file's joints.

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
                "URDF robots are spatial: the model must be `dimension = \"spatial\"`",
            ));
        }
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
        };
        let robot = Model::from_urdf_file(dir.join(&fr.urdf), &options)?;
        let at = pose(loc, &pr.key("pose"), &fr.pose)?;
        let material = match &fr.material {
            Some(name) => model
                .materials
                .iter()
                .position(|m| &m.name == name)
                .ok_or_else(|| ModelError::UnknownName {
                    location: loc(&pr.key("material")),
                    kind: "material",
                    name: name.clone(),
                })?,
            None => match model.materials.iter().position(|m| m.name == "default") {
                Some(k) => k,
                None => {
                    model.materials.push(ContactMaterial::default_material());
                    model.materials.len() - 1
                }
            },
        };
        let prefix = fr.prefix.clone().unwrap_or_default();
        let joints_before = model.joints.len();
        append(model, robot, &prefix, &at, material, &fr.urdf);
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
/// `material`, initial state concatenated.
fn append(
    model: &mut Model,
    robot: Model,
    prefix: &str,
    at: &nalgebra::Isometry3<f64>,
    material: usize,
    source: &str,
) {
    let nb = model.bodies.len();
    let nc = model.colliders.len();
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
        c.material = material;
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
