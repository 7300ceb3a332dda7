//! Shared builders for the dynamics tests: random kinematic trees (seeded), random states,
//! and a few analytic models. Included by the other `dynamics_*` tests with `#[path]`.
#![allow(dead_code)]

use nalgebra::{DVector, Isometry3, Matrix3, Translation3, Unit, UnitQuaternion, Vector3};
use nonsmooth_core::dynamics::neutral_configuration;
use nonsmooth_core::{Body, Dimension, Joint, JointKind, Model};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Root joint choice for random trees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Root {
    Fixed,
    Floating,
    Planar,
}

fn unit_vector(rng: &mut ChaCha8Rng) -> Vector3<f64> {
    loop {
        let v = Vector3::new(
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
            rng.gen_range(-1.0..1.0),
        );
        let n = v.norm();
        if n > 0.1 && n <= 1.0 {
            return v / n;
        }
    }
}

fn random_rotation(rng: &mut ChaCha8Rng) -> UnitQuaternion<f64> {
    let axis = Unit::new_normalize(unit_vector(rng));
    UnitQuaternion::from_axis_angle(&axis, rng.gen_range(-3.0..3.0))
}

/// A body with random mass, centre of mass and a physically valid inertia (a box's principal
/// moments in random principal axes).
pub fn random_body(rng: &mut ChaCha8Rng, name: &str) -> Body {
    let mass = rng.gen_range(0.5..3.0);
    let dims = Vector3::new(
        rng.gen_range(0.05..0.6),
        rng.gen_range(0.05..0.6),
        rng.gen_range(0.05..0.6),
    );
    let d = Matrix3::from_diagonal(&Vector3::new(
        mass / 12.0 * (dims.y * dims.y + dims.z * dims.z),
        mass / 12.0 * (dims.x * dims.x + dims.z * dims.z),
        mass / 12.0 * (dims.x * dims.x + dims.y * dims.y),
    ));
    let r = random_rotation(rng).to_rotation_matrix().into_inner();
    Body {
        name: name.into(),
        mass,
        com: Vector3::new(
            rng.gen_range(-0.3..0.3),
            rng.gen_range(-0.3..0.3),
            rng.gen_range(-0.3..0.3),
        ),
        inertia: r * d * r.transpose(),
    }
}

/// A joint with the given kind, parent and placement.
pub fn joint(
    name: &str,
    kind: JointKind,
    parent: Option<usize>,
    child: usize,
    placement: Isometry3<f64>,
    axis: Vector3<f64>,
    damping: f64,
) -> Joint {
    Joint {
        name: name.into(),
        kind,
        parent,
        child,
        placement,
        axis: Unit::new_normalize(axis),
        limit: None,
        damping,
        spring: None,
        armature: 0.0,
        q_index: 0,
        v_index: 0,
    }
}

/// A model with the given bodies and joints (offsets assigned, neutral initial state).
pub fn assemble(name: &str, gravity: Vector3<f64>, bodies: Vec<Body>, joints: Vec<Joint>) -> Model {
    let mut model = Model {
        name: name.into(),
        dimension: Dimension::Spatial,
        gravity,
        bodies,
        joints,
        materials: vec![],
        ..Model::new("", Dimension::Spatial)
    };
    model.assign_coordinate_offsets();
    model.initial_state.q = neutral_configuration(&model);
    model.initial_state.v = DVector::zeros(model.nv());
    model
}

/// A random tree: a root body with the given root joint, then `n - 1` further bodies
/// attached to random earlier bodies by revolute, prismatic or fixed joints with random
/// placements, axes and inertias. `damping` adds random joint damping.
pub fn random_tree(rng: &mut ChaCha8Rng, n: usize, root: Root, damping: bool) -> Model {
    let mut bodies = Vec::with_capacity(n);
    let mut joints = Vec::with_capacity(n);
    for i in 0..n.max(1) {
        bodies.push(random_body(rng, &format!("b{i}")));
        let placement = Isometry3::from_parts(
            Translation3::new(
                rng.gen_range(-0.5..0.5),
                rng.gen_range(-0.5..0.5),
                rng.gen_range(-0.5..0.5),
            ),
            random_rotation(rng),
        );
        let (kind, parent) = if i == 0 {
            let kind = match root {
                Root::Fixed => JointKind::Revolute,
                Root::Floating => JointKind::Floating,
                Root::Planar => JointKind::Planar,
            };
            (kind, None)
        } else {
            let kind = match rng.gen_range(0..10) {
                0..=5 => JointKind::Revolute,
                6..=8 => JointKind::Prismatic,
                _ => JointKind::Fixed,
            };
            (kind, Some(rng.gen_range(0..i)))
        };
        let d = if damping {
            rng.gen_range(0.0..0.5)
        } else {
            0.0
        };
        joints.push(joint(
            &format!("j{i}"),
            kind,
            parent,
            i,
            placement,
            unit_vector(rng),
            d,
        ));
    }
    assemble("random", Vector3::new(0.3, -9.81, 0.2), bodies, joints)
}

/// A random configuration (unit quaternions) and velocity.
pub fn random_state(rng: &mut ChaCha8Rng, model: &Model) -> (DVector<f64>, DVector<f64>) {
    let mut q = DVector::zeros(model.nq());
    for j in &model.joints {
        match j.kind {
            JointKind::Floating => {
                for k in 0..3 {
                    q[j.q_index + k] = rng.gen_range(-1.0..1.0);
                }
                let r = random_rotation(rng);
                let c = r.quaternion();
                q[j.q_index + 3] = c.w;
                q[j.q_index + 4] = c.i;
                q[j.q_index + 5] = c.j;
                q[j.q_index + 6] = c.k;
            }
            _ => {
                for k in 0..j.kind.nq() {
                    q[j.q_index + k] = rng.gen_range(-1.5..1.5);
                }
            }
        }
    }
    let v = DVector::from_fn(model.nv(), |_, _| rng.gen_range(-1.0..1.0));
    (q, v)
}

/// A random vector of length n in [-1, 1].
pub fn random_vector(rng: &mut ChaCha8Rng, n: usize) -> DVector<f64> {
    DVector::from_fn(n, |_, _| rng.gen_range(-1.0..1.0))
}

/// Iterates over a seeded family of random trees: sizes 1..=20, all three root kinds.
pub fn tree_family(seed: u64, count: usize, damping: bool) -> Vec<Model> {
    use rand::SeedableRng;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|k| {
            let root = [Root::Fixed, Root::Floating, Root::Planar][k % 3];
            let n = rng.gen_range(1..=20);
            random_tree(&mut rng, n, root, damping)
        })
        .collect()
}

/// Largest absolute entry of a matrix/vector difference, relative to max(1, scale).
pub fn rel_err(a: &nalgebra::DMatrix<f64>, b: &nalgebra::DMatrix<f64>) -> f64 {
    let scale = a.amax().max(b.amax()).max(1.0);
    (a - b).amax() / scale
}
