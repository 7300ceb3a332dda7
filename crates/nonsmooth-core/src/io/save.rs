//! Conversion of a [`Model`] into the file schema, written so that loading it back gives an
//! equal model: every joint and material is written explicitly, poses as quaternions and all
//! floats in Rust's shortest round-trip representation.

use std::collections::BTreeMap;

use nalgebra::Isometry3;

use super::format::*;
use crate::model::*;

fn pose(iso: &Isometry3<f64>) -> FilePose {
    let t = iso.translation.vector;
    let q = iso.rotation.quaternion();
    FilePose {
        xyz: Some([t.x, t.y, t.z]),
        rpy: None,
        quat: Some([q.w, q.i, q.j, q.k]),
    }
}

fn material(m: &ContactMaterial) -> FileMaterial {
    FileMaterial {
        name: Some(m.name.clone()),
        friction: Some(m.friction),
        restitution: m.restitution,
        stiffness: m.stiffness,
        damping: m.damping,
        law: Some(m.law),
    }
}

fn body_name(model: &Model, body: Option<BodyId>) -> String {
    body.map_or_else(|| "world".to_string(), |b| model.bodies[b].name.clone())
}

/// The file form of a (validated) model.
pub fn to_file(model: &Model) -> FileModel {
    let collider_name = |i: usize| model.colliders[i].name.clone();
    let pairs = model
        .pair_overrides
        .iter()
        .map(|o| FilePair {
            a: collider_name(o.collider_a),
            b: collider_name(o.collider_b),
            material: PairMaterial::Inline(material(&o.material)),
        })
        .collect();
    let exclude = model
        .excluded_pairs
        .iter()
        .map(|&(a, b)| [collider_name(a), collider_name(b)])
        .collect();
    FileModel {
        model: FileHeader {
            format: Some(FORMAT_VERSION),
            name: model.name.clone(),
            dimension: Some(model.dimension),
            gravity: Some(model.gravity.into()),
            contact_margin: Some(model.contact_margin),
        },
        bodies: model.bodies.iter().map(file_body).collect(),
        joints: model.joints.iter().map(|j| file_joint(model, j)).collect(),
        materials: model.materials.iter().map(material).collect(),
        colliders: model
            .colliders
            .iter()
            .map(|c| file_collider(model, c))
            .collect(),
        pairs,
        exclude,
        constraints: model
            .constraints
            .iter()
            .map(|c| file_constraint(model, c))
            .collect(),
        actuators: model
            .actuators
            .iter()
            .map(|a| file_actuator(model, a))
            .collect(),
        // Robots were appended on load: the saved model holds their bodies.
        robots: Vec::new(),
        initial: Some(file_initial(model)),
        simulation: (model.simulation != SimulationSettings::default()).then(|| FileSimulation {
            stepper: model.simulation.stepper.clone(),
            dt: model.simulation.dt,
            duration: model.simulation.duration,
        }),
    }
}

/// A body, its inertia as a diagonal where it is one, else as the full matrix.
fn file_body(b: &Body) -> FileBody {
    let i = &b.inertia;
    let diagonal = (0..3).all(|r| (0..3).all(|c| r == c || i[(r, c)] == 0.0));
    FileBody {
        name: b.name.clone(),
        mass: b.mass,
        com: Some([b.com.x, b.com.y, b.com.z]),
        inertia: if diagonal {
            InertiaSpec::Diagonal([i[(0, 0)], i[(1, 1)], i[(2, 2)]])
        } else {
            InertiaSpec::Full(std::array::from_fn(|r| std::array::from_fn(|c| i[(r, c)])))
        },
    }
}

/// A joint, with its placement, axis and damping always written.
fn file_joint(model: &Model, j: &Joint) -> FileJoint {
    FileJoint {
        name: j.name.clone(),
        kind: j.kind,
        parent: body_name(model, j.parent),
        child: model.bodies[j.child].name.clone(),
        placement: Some(pose(&j.placement)),
        axis: Some([j.axis.x, j.axis.y, j.axis.z]),
        limit: j.limit.map(|l| FileLimit {
            lower: l.lower,
            upper: l.upper,
            stiffness: l.stiffness,
            damping: l.damping,
        }),
        damping: Some(j.damping),
        spring: j.spring.map(|s| FileSpring {
            stiffness: s.stiffness,
            reference: s.reference,
        }),
        armature: (j.armature != 0.0).then_some(j.armature),
    }
}

/// A collider, its body and material by name; the collision filter only where it is not the
/// default.
fn file_collider(model: &Model, c: &Collider) -> FileCollider {
    FileCollider {
        name: c.name.clone(),
        body: Some(body_name(model, c.body)),
        shape: file_shape(&c.shape),
        pose: Some(pose(&c.pose)),
        material: Some(model.materials[c.material].name.clone()),
        group: (c.filter.group != 1).then_some(c.filter.group),
        mask: (c.filter.mask != u32::MAX).then_some(c.filter.mask),
    }
}

/// The file form of a shape; meshes are written inline.
fn file_shape(shape: &Shape) -> FileShape {
    match shape {
        Shape::Sphere { radius } => FileShape::Sphere(*radius),
        Shape::Box { half_extents } => FileShape::Box((*half_extents).into()),
        Shape::Plane { normal } => FileShape::Plane([normal.x, normal.y, normal.z]),
        Shape::Point => FileShape::Point,
        Shape::Points { points } => FileShape::Points(points.iter().map(|p| (*p).into()).collect()),
        Shape::HeightMap(h) => FileShape::Heightmap(FileHeightMap {
            x0: h.x0,
            y0: h.y0,
            dx: h.dx,
            dy: h.dy,
            heights: h.heights.clone(),
        }),
        Shape::Capsule {
            radius,
            half_length,
        } => FileShape::Capsule(FileRound {
            radius: *radius,
            half_length: *half_length,
        }),
        Shape::Cylinder {
            radius,
            half_length,
        } => FileShape::Cylinder(FileRound {
            radius: *radius,
            half_length: *half_length,
        }),
        Shape::Convex(hull) => {
            FileShape::Convex(hull.points().iter().map(|p| (*p).into()).collect())
        }
        // Inline, so that the text stands alone (a pickled model whose mesh file is
        // gone still loads).
        Shape::Mesh(mesh) => FileShape::Mesh(FileMesh {
            file: None,
            scale: None,
            vertices: Some(mesh.vertices().iter().map(|p| (*p).into()).collect()),
            triangles: Some(mesh.triangles().to_vec()),
        }),
    }
}

/// A bilateral constraint, its bodies by name.
fn file_constraint(model: &Model, c: &Constraint) -> FileConstraint {
    let (kind, ba, aa, bb, ab, length) = match &c.kind {
        ConstraintKind::Point {
            body_a,
            anchor_a,
            body_b,
            anchor_b,
        } => (
            FileConstraintKind::Point,
            body_a,
            anchor_a,
            body_b,
            anchor_b,
            None,
        ),
        ConstraintKind::Distance {
            body_a,
            anchor_a,
            body_b,
            anchor_b,
            length,
        } => (
            FileConstraintKind::Distance,
            body_a,
            anchor_a,
            body_b,
            anchor_b,
            Some(*length),
        ),
    };
    FileConstraint {
        name: c.name.clone(),
        kind,
        body_a: Some(body_name(model, *ba)),
        anchor_a: Some((*aa).into()),
        body_b: Some(body_name(model, *bb)),
        anchor_b: Some((*ab).into()),
        length,
        stiffness: c.stiffness,
        damping: c.damping,
    }
}

/// An actuator, its joint by name; the kind and gains only for position actuators.
fn file_actuator(model: &Model, a: &Actuator) -> FileActuator {
    FileActuator {
        name: a.name.clone(),
        joint: model.joints[a.joint].name.clone(),
        dof: Some(a.dof),
        gear: Some(a.gear),
        effort_limit: a.effort_limit.map(|(lo, hi)| [lo, hi]),
        kind: match a.kind {
            ActuatorKind::Motor => None,
            ActuatorKind::Position { .. } => Some(FileActuatorKind::Position),
        },
        kp: match a.kind {
            ActuatorKind::Position { kp, .. } => Some(kp),
            ActuatorKind::Motor => None,
        },
        kv: match a.kind {
            ActuatorKind::Position { kv, .. } => Some(kv),
            ActuatorKind::Motor => None,
        },
    }
}

/// The initial state, q and v by joint name (joints without coordinates left out).
fn file_initial(model: &Model) -> FileInitial {
    let s = &model.initial_state;
    let mut q = BTreeMap::new();
    let mut v = BTreeMap::new();
    for j in &model.joints {
        if j.kind.nq() > 0 {
            q.insert(
                j.name.clone(),
                joint_coords(s.q.rows(j.q_index, j.kind.nq()).as_slice()),
            );
            v.insert(
                j.name.clone(),
                joint_coords(s.v.rows(j.v_index, j.kind.nv()).as_slice()),
            );
        }
    }
    FileInitial {
        t: Some(s.t),
        q: (!q.is_empty()).then_some(Coords::ByJoint(q)),
        v: (!v.is_empty()).then_some(Coords::ByJoint(v)),
    }
}

/// A joint's coordinates: a scalar for one, a list otherwise.
fn joint_coords(x: &[f64]) -> JointCoords {
    if x.len() == 1 {
        JointCoords::Scalar(x[0])
    } else {
        JointCoords::Vector(x.to_vec())
    }
}
