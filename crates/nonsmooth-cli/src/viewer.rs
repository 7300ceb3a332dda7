//! The offline trajectory viewer of `nonsmooth simulate --html`: a model and its
//! trajectory as a [`ViewerScene`] (body poses from the kinematics at every recorded state).

use nalgebra::Isometry3;
use nonsmooth_core::dynamics::kinematics;
use nonsmooth_core::model::{Dimension, Shape};
use nonsmooth_core::Model;
use nonsmooth_report::viewer::{
    ViewerScene, ViewerShape, ViewerShapeKind, IDENTITY_POSE, MAX_FRAMES,
};
use nonsmooth_sim::Trajectory;

/// `[x, y, z, qw, qx, qy, qz]` of an isometry.
fn pose7(p: &Isometry3<f64>) -> [f64; 7] {
    let t = &p.translation.vector;
    let q = p.rotation.quaternion();
    [t.x, t.y, t.z, q.w, q.i, q.j, q.k]
}

fn shape_kind(shape: &Shape) -> ViewerShapeKind {
    match shape {
        Shape::Sphere { radius } => ViewerShapeKind::Sphere { radius: *radius },
        Shape::Box { half_extents } => ViewerShapeKind::Box {
            half_extents: [half_extents.x, half_extents.y, half_extents.z],
        },
        Shape::Plane { normal } => ViewerShapeKind::Plane {
            normal: [normal.x, normal.y, normal.z],
        },
        Shape::Point => ViewerShapeKind::Point,
        Shape::Points { points } => ViewerShapeKind::Points {
            points: points.iter().map(|p| [p.x, p.y, p.z]).collect(),
        },
        Shape::HeightMap(_) => ViewerShapeKind::Skipped {
            what: "height map".to_string(),
        },
        // Drawn by their axis (capsules, cylinders) and their vertices (hulls, meshes).
        Shape::Capsule { half_length, .. } | Shape::Cylinder { half_length, .. } => {
            ViewerShapeKind::Segment {
                a: [0.0, 0.0, -half_length],
                b: [0.0, 0.0, *half_length],
            }
        }
        Shape::Convex(hull) => ViewerShapeKind::Points {
            points: hull.points().iter().map(|p| [p.x, p.y, p.z]).collect(),
        },
        Shape::Mesh(mesh) => ViewerShapeKind::Points {
            points: mesh.vertices().iter().map(|p| [p.x, p.y, p.z]).collect(),
        },
    }
}

/// The colliders, then a skeleton: a segment from each parent body's origin to the joint
/// of each child, and from each body's origin to its centre of mass.
fn shapes(model: &Model) -> Vec<ViewerShape> {
    let mut shapes: Vec<ViewerShape> = model
        .colliders
        .iter()
        .map(|c| ViewerShape {
            name: c.name.clone(),
            body: c.body,
            offset: pose7(&c.pose),
            kind: shape_kind(&c.shape),
        })
        .collect();
    let zero = [0.0; 3];
    for joint in &model.joints {
        let at = joint.placement.translation.vector;
        if let Some(parent) = joint.parent {
            if at.norm() > 0.0 {
                shapes.push(ViewerShape {
                    name: format!("joint {}", joint.name),
                    body: Some(parent),
                    offset: IDENTITY_POSE,
                    kind: ViewerShapeKind::Segment {
                        a: zero,
                        b: [at.x, at.y, at.z],
                    },
                });
            }
        }
    }
    for (i, body) in model.bodies.iter().enumerate() {
        if body.com.norm() > 0.0 {
            shapes.push(ViewerShape {
                name: format!("{} centre of mass", body.name),
                body: Some(i),
                offset: IDENTITY_POSE,
                kind: ViewerShapeKind::Segment {
                    a: zero,
                    b: [body.com.x, body.com.y, body.com.z],
                },
            });
        }
    }
    shapes
}

/// The viewer scene of `traj` (a run of `model`): the kinematics is evaluated only at the
/// frames the page keeps (at most [`MAX_FRAMES`]).
pub fn scene(model: &Model, traj: &Trajectory, title: String) -> ViewerScene {
    let n = traj.t.len().min(traj.q.len()).min(traj.v.len());
    let picks: Vec<usize> = if n <= MAX_FRAMES {
        (0..n).collect()
    } else {
        (0..MAX_FRAMES)
            .map(|i| (i as f64 * (n - 1) as f64 / (MAX_FRAMES - 1) as f64).round() as usize)
            .collect()
    };
    ViewerScene {
        title,
        planar: model.dimension == Dimension::Planar,
        bodies: model.bodies.iter().map(|b| b.name.clone()).collect(),
        shapes: shapes(model),
        times: picks.iter().map(|&k| traj.t[k]).collect(),
        poses: picks
            .iter()
            .map(|&k| {
                kinematics(model, &traj.q[k], &traj.v[k])
                    .poses
                    .iter()
                    .map(pose7)
                    .collect()
            })
            .collect(),
        series_names: traj.q_names.clone(),
        series: (0..traj.q_names.len())
            .map(|j| {
                picks
                    .iter()
                    .map(|&k| traj.q[k].get(j).copied().unwrap_or(f64::NAN))
                    .collect()
            })
            .collect(),
    }
}
