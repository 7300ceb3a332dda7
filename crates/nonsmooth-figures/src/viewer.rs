//! A model and its trajectories as a [`ViewerScene`] of the offline trajectory viewer
//! (`nonsmooth simulate --html`, the reproduction report's players): body poses from the
//! kinematics at every recorded state; contacts from a [`ContactSnapshot`] of each shown
//! state, with their forces (impulse / step size) where the trajectory recorded the
//! impulses of the step from it ([`Trajectory::impulses`],
//! [`nonsmooth_sim::simulate_recording_impulses`]).

use nalgebra::Isometry3;
use nonsmooth_core::dynamics::kinematics;
use nonsmooth_core::model::{Dimension, Shape};
use nonsmooth_core::{ContactSnapshot, Model, State};
use nonsmooth_report::viewer::{
    even_picks, ViewerContact, ViewerRun, ViewerScene, ViewerShape, ViewerShapeKind, IDENTITY_POSE,
    MAX_FRAMES,
};
use nonsmooth_sim::{StepImpulses, Trajectory};

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

/// The viewer scene of `traj` (a run of `model`), one run named after its stepper.
pub fn scene(model: &Model, traj: &Trajectory, title: String) -> ViewerScene {
    let run = run(model, traj, traj.stepper.clone(), String::new(), MAX_FRAMES);
    overlay(model, vec![run], title, Vec::new())
}

/// A scene of `model` showing `runs` overlaid (one colour per run), with `notes` under the
/// legend.
pub fn overlay(
    model: &Model,
    runs: Vec<ViewerRun>,
    title: String,
    notes: Vec<String>,
) -> ViewerScene {
    ViewerScene {
        title,
        planar: model.dimension == Dimension::Planar,
        bodies: model.bodies.iter().map(|b| b.name.clone()).collect(),
        shapes: shapes(model),
        series_names: model.q_names(),
        runs,
        notes,
    }
}

/// The contacts of a recorded state with the forces of the step taken from it (none where
/// the snapshot cannot be built).
fn contacts_with_forces(model: &Model, state: &State, step: &StepImpulses) -> Vec<ViewerContact> {
    step.contacts(model, state)
        .map(|records| {
            records
                .iter()
                .map(|c| ViewerContact {
                    point: [c.point.x, c.point.y, c.point.z],
                    normal: [c.normal.x, c.normal.y, c.normal.z],
                    gap: c.gap,
                    force: c.force(step.h).map(|f| [f.x, f.y, f.z]),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The contacts of a recorded state (none where its snapshot cannot be built).
fn contacts(model: &Model, state: &State) -> Vec<ViewerContact> {
    ContactSnapshot::from_state(model, state)
        .map(|snap| {
            snap.contacts
                .iter()
                .map(|c| ViewerContact {
                    point: [c.point.x, c.point.y, c.point.z],
                    normal: [c.normal.x, c.normal.y, c.normal.z],
                    gap: c.gap,
                    force: None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One run of the viewer: `traj` (a run of `model`) at no more than `max_frames` evenly
/// spread recorded states (the kinematics and contacts are evaluated only there). Where
/// the trajectory has the impulses of the step from a state ([`Trajectory::impulses`]),
/// its contacts are the step's (the stepper's margins) with their forces; elsewhere those
/// of a snapshot within the model's margin, without forces.
pub fn run(
    model: &Model,
    traj: &Trajectory,
    name: String,
    status: String,
    max_frames: usize,
) -> ViewerRun {
    let n = traj.t.len().min(traj.q.len()).min(traj.v.len());
    let max_frames = max_frames.max(2);
    let picks: Vec<usize> = if n <= max_frames {
        (0..n).collect()
    } else {
        even_picks(n, max_frames)
    };
    let state = |k: usize| State {
        q: traj.q[k].clone(),
        v: traj.v[k].clone(),
        t: traj.t[k],
    };
    ViewerRun {
        name,
        status,
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
        series: (0..traj.q_names.len())
            .map(|j| {
                picks
                    .iter()
                    .map(|&k| traj.q[k].get(j).copied().unwrap_or(f64::NAN))
                    .collect()
            })
            .collect(),
        contacts: picks
            .iter()
            .map(|&k| match traj.impulses.get(k) {
                Some(Some(step)) if traj.impulses.len() == traj.t.len() => {
                    contacts_with_forces(model, &state(k), step)
                }
                _ => contacts(model, &state(k)),
            })
            .collect(),
    }
}

/// A trajectory of `model` from recorded states (for runs made without the run loop, such as
/// the paper experiments' own loops), named after `stepper`.
pub fn trajectory_of(model: &Model, stepper: &str, states: &[State]) -> Trajectory {
    Trajectory {
        stepper: stepper.to_string(),
        q_names: model.q_names(),
        v_names: model.v_names(),
        t: states.iter().map(|s| s.t).collect(),
        q: states.iter().map(|s| s.q.clone()).collect(),
        v: states.iter().map(|s| s.v.clone()).collect(),
        steps: states.len().saturating_sub(1),
        recoveries: nonsmooth_sim::Recoveries::default(),
        impulses: Vec::new(),
    }
}
