//! ContactSnapshot against analytic values and finite differences.

use nalgebra::{DMatrix, DVector, Isometry3, Matrix3, Quaternion, Unit, UnitQuaternion, Vector3};
use nonsmooth_core::geometry::ContactMargins;
use nonsmooth_core::{
    Actuator, Body, Collider, ComplianceLaw, Constraint, ConstraintKind, ContactMaterial,
    ContactSnapshot, Dimension, Joint, JointKind, JointLimit, Model, ModelError, PairOverride,
    Shape, State,
};
use num_dual::Dual64;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const G: f64 = 9.81;

fn empty_model(dimension: Dimension) -> Model {
    Model {
        name: "test".into(),
        dimension,
        gravity: match dimension {
            Dimension::Planar => Vector3::new(0.0, -G, 0.0),
            Dimension::Spatial => Vector3::new(0.0, 0.0, -G),
        },
        bodies: vec![],
        joints: vec![],
        materials: vec![ContactMaterial::default_material()],
        ..Model::new("", Dimension::Spatial)
    }
}

/// Adds a body with a root joint of `kind` and returns its index.
fn add_body(
    model: &mut Model,
    name: &str,
    kind: JointKind,
    mass: f64,
    inertia: Matrix3<f64>,
) -> usize {
    let id = model.bodies.len();
    model.bodies.push(Body {
        name: name.into(),
        mass,
        com: Vector3::zeros(),
        inertia,
    });
    model.joints.push(Joint {
        name: format!("{name}_joint"),
        kind,
        parent: None,
        child: id,
        placement: Isometry3::identity(),
        axis: Vector3::z_axis(),
        limit: None,
        damping: 0.0,
        spring: None,
        armature: 0.0,
        q_index: 0,
        v_index: 0,
    });
    model.assign_coordinate_offsets();
    id
}

fn add_collider(
    model: &mut Model,
    name: &str,
    body: Option<usize>,
    shape: Shape,
    material: usize,
) -> usize {
    model.colliders.push(Collider {
        name: name.into(),
        body,
        pose: Isometry3::identity(),
        shape,
        material,
        filter: Default::default(),
    });
    model.colliders.len() - 1
}

fn ground() -> Shape {
    Shape::Plane {
        normal: Vector3::z_axis(),
    }
}

fn random_vector(rng: &mut ChaCha8Rng, n: usize) -> DVector<f64> {
    DVector::from_fn(n, |_, _| rng.gen_range(-1.0..1.0))
}

/// Configuration of free bodies after moving for time `s` at constant generalized velocity
/// v (v̇ = 0): floating joints x += s v_lin, quat ← quat ⊗ exp(s ω_body / 2); others q += s v.
fn advance(model: &Model, q: &DVector<f64>, v: &DVector<f64>, s: f64) -> DVector<f64> {
    let mut out = q.clone();
    for j in &model.joints {
        let (qi, vi) = (j.q_index, j.v_index);
        match j.kind {
            JointKind::Floating => {
                for k in 0..3 {
                    out[qi + k] = q[qi + k] + s * v[vi + k];
                }
                let quat = UnitQuaternion::from_quaternion(Quaternion::new(
                    q[qi + 3],
                    q[qi + 4],
                    q[qi + 5],
                    q[qi + 6],
                ));
                let w = Vector3::new(v[vi + 3], v[vi + 4], v[vi + 5]);
                let moved = quat * UnitQuaternion::from_scaled_axis(w * s);
                out[qi + 3] = moved.w;
                out[qi + 4] = moved.i;
                out[qi + 5] = moved.j;
                out[qi + 6] = moved.k;
            }
            kind => {
                for k in 0..kind.nv() {
                    out[qi + k] = q[qi + k] + s * v[vi + k];
                }
            }
        }
    }
    out
}

fn floating_q(position: Vector3<f64>, rotation: UnitQuaternion<f64>) -> DVector<f64> {
    DVector::from_vec(vec![
        position.x, position.y, position.z, rotation.w, rotation.i, rotation.j, rotation.k,
    ])
}

fn sphere_model(radius: f64, mass: f64) -> Model {
    let mut model = empty_model(Dimension::Spatial);
    let i = 0.4 * mass * radius * radius;
    let b = add_body(
        &mut model,
        "ball",
        JointKind::Floating,
        mass,
        Matrix3::identity() * i,
    );
    add_collider(&mut model, "ground", None, ground(), 0);
    add_collider(&mut model, "ball", Some(b), Shape::Sphere { radius }, 0);
    model.contact_margin = 2.0;
    model
}

#[test]
fn free_sphere_above_ground() {
    let (r, m) = (0.1, 2.0);
    let model = sphere_model(r, m);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let rot = UnitQuaternion::from_scaled_axis(Vector3::new(0.3, -0.7, 0.2));
    let q = floating_q(Vector3::new(0.3, -0.4, 1.1), rot);
    let v = random_vector(&mut rng, 6);
    let snap = ContactSnapshot::new(&model, &q, &v, 0.5).unwrap();
    assert_eq!(snap.num_contacts(), 1);
    let c = &snap.contacts[0];
    assert_eq!(
        (c.collider_a, c.collider_b, c.body_a, c.body_b),
        (1, 0, Some(0), None)
    );
    assert!((c.gap - 1.0).abs() < 1e-14);
    assert!((snap.minimal_gap().unwrap() - 1.0).abs() < 1e-14);
    assert!((c.normal - Vector3::z()).norm() < 1e-15);
    assert!((c.point - Vector3::new(0.3, -0.4, 0.5)).norm() < 1e-14);
    // Gap rate: φ̇ = ż, the world z velocity of the centre (linear v is in world axes).
    assert!((c.rows.normal.dot(&v) - v[2]).abs() < 1e-14);
    // Tangent rows: tᵀ(v_c + ω × (p_a − c)), ω = R ω_body.
    let w = rot * Vector3::new(v[3], v[4], v[5]);
    let vp = Vector3::new(v[0], v[1], v[2]) + w.cross(&Vector3::new(0.0, 0.0, -r));
    assert_eq!(c.tangents.len(), 2);
    for (k, t) in c.tangents.iter().enumerate() {
        assert!(t.dot(&c.normal).abs() < 1e-15);
        assert!((t.norm() - 1.0).abs() < 1e-15);
        let row = c.rows.tangents.row(k).transpose();
        assert!((row.dot(&v) - t.dot(&vp)).abs() < 1e-13);
    }
    assert!(c.tangents[0].dot(&c.tangents[1]).abs() < 1e-15);
    // M = diag(m, m, m, I, I, I) for a sphere, I = 2/5 m r².
    let i = 0.4 * m * r * r;
    let expected_m = DMatrix::from_diagonal(&DVector::from_vec(vec![m, m, m, i, i, i]));
    assert!((&snap.mass_matrix - &expected_m).norm() < 1e-12);
    // f = m g (no Coriolis for an isotropic body: ω × Iω = 0).
    let expected_f = DVector::from_vec(vec![0.0, 0.0, -m * G, 0.0, 0.0, 0.0]);
    assert!((&snap.forces - &expected_f).norm() < 1e-10);
    assert_eq!(snap.velocity_map.shape(), (7, 6));
    assert_eq!(snap.actuation.shape(), (6, 0));
    // Delassus: normal 1/m; tangent 1/m + r²/I = 3.5/m for a solid sphere.
    let w_n = snap.delassus(&snap.normal_jacobian()).unwrap();
    assert!((w_n[(0, 0)] - 1.0 / m).abs() < 1e-12);
    let w_t = snap.delassus(&snap.tangent_jacobian()).unwrap();
    assert!((w_t[(0, 0)] - 3.5 / m).abs() < 1e-12);
    assert!((w_t[(1, 1)] - 3.5 / m).abs() < 1e-12);
    assert!(w_t[(0, 1)].abs() < 1e-12);
    // Below the margin the contact disappears.
    let far = floating_q(Vector3::new(0.0, 0.0, 2.5), rot);
    let snap = ContactSnapshot::new(&model, &far, &v, 0.0).unwrap();
    assert_eq!(snap.num_contacts(), 0);
    assert!(snap.minimal_gap().is_none());
}

#[test]
fn box_corner_rows_match_finite_differences() {
    let mut model = empty_model(Dimension::Spatial);
    let b = add_body(
        &mut model,
        "box",
        JointKind::Floating,
        3.0,
        Matrix3::from_diagonal(&Vector3::new(0.1, 0.2, 0.3)),
    );
    add_collider(&mut model, "ground", None, ground(), 0);
    add_collider(
        &mut model,
        "box",
        Some(b),
        Shape::Box {
            half_extents: Vector3::new(0.3, 0.2, 0.1),
        },
        0,
    );
    model.contact_margin = 10.0;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let rot = UnitQuaternion::from_scaled_axis(Vector3::new(0.4, 0.9, -0.3));
    let q = floating_q(Vector3::new(0.1, 0.2, 0.8), rot);
    let v = random_vector(&mut rng, 6) * 2.0;
    let snap = ContactSnapshot::new(&model, &q, &v, 0.0).unwrap();
    assert_eq!(snap.num_contacts(), 8);
    let eps = 1e-4;
    let gaps_at = |s: f64| {
        ContactSnapshot::new(&model, &advance(&model, &q, &v, s), &v, 0.0)
            .unwrap()
            .gaps()
    };
    let (gp, g0, gm) = (gaps_at(eps), snap.gaps(), gaps_at(-eps));
    for (i, c) in snap.contacts.iter().enumerate() {
        assert_eq!(c.feature, i);
        let rate = (gp[i] - gm[i]) / (2.0 * eps);
        assert!((c.rows.normal.dot(&v) - rate).abs() < 1e-6, "corner {i}");
        // Body-fixed corner against a fixed plane: φ̈ at v̇ = 0 equals the J̇v term.
        let accel = (gp[i] - 2.0 * g0[i] + gm[i]) / (eps * eps);
        assert!(
            (c.normal_row_dot_v - accel).abs() < 1e-4,
            "corner {i}: {} vs {accel}",
            c.normal_row_dot_v
        );
    }
    // Normal Jacobian stacks the rows.
    let nj = snap.normal_jacobian();
    assert_eq!(nj.shape(), (8, 6));
    assert!((nj.row(3).transpose() - &snap.contacts[3].rows.normal).norm() == 0.0);
    assert_eq!(snap.tangent_jacobian().shape(), (16, 6));
}

#[test]
fn planar_box_rows_are_analytic() {
    let mut model = empty_model(Dimension::Planar);
    let b = add_body(
        &mut model,
        "box",
        JointKind::Planar,
        2.0,
        Matrix3::identity() * 0.05,
    );
    add_collider(
        &mut model,
        "ground",
        None,
        Shape::Plane {
            normal: Vector3::y_axis(),
        },
        0,
    );
    let h = Vector3::new(0.4, 0.2, 0.0);
    add_collider(
        &mut model,
        "box",
        Some(b),
        Shape::Box { half_extents: h },
        0,
    );
    model.contact_margin = 5.0;
    let theta = 0.3f64;
    let q = DVector::from_vec(vec![0.5, 0.6, theta]);
    let v = DVector::from_vec(vec![0.7, -0.2, 1.3]);
    let snap = ContactSnapshot::new(&model, &q, &v, 0.0).unwrap();
    assert_eq!(snap.num_contacts(), 4);
    let (s, c) = (theta.sin(), theta.cos());
    for ct in &snap.contacts {
        let k = ct.feature;
        let lx = if k & 1 != 0 { h.x } else { -h.x };
        let ly = if k & 2 != 0 { h.y } else { -h.y };
        let (rx, ry) = (c * lx - s * ly, s * lx + c * ly);
        assert!((ct.gap - (0.6 + ry)).abs() < 1e-14);
        // n = ŷ: row (0, 1, r_x); t = ẑ × n = −x̂: row (−1, 0, r_y).
        let nrow = DVector::from_vec(vec![0.0, 1.0, rx]);
        let trow = DVector::from_vec(vec![-1.0, 0.0, ry]);
        assert!((&ct.rows.normal - nrow).norm() < 1e-14);
        assert_eq!(ct.rows.tangents.shape(), (1, 3));
        assert!((ct.rows.tangents.row(0).transpose() - trow).norm() < 1e-14);
        // J̇v = −ω² r.
        assert!((ct.normal_row_dot_v + 1.3 * 1.3 * ry).abs() < 1e-13);
        assert!((ct.tangent_rows_dot_v[0] - 1.3 * 1.3 * rx).abs() < 1e-13);
    }
    // M = diag(m, m, I_zz).
    let expected = DMatrix::from_diagonal(&DVector::from_vec(vec![2.0, 2.0, 0.05]));
    assert!((&snap.mass_matrix - expected).norm() < 1e-12);
    assert!((snap.forces[1] + 2.0 * G).abs() < 1e-12);
}

#[test]
fn point_and_distance_constraints_match_finite_differences() {
    let mut model = empty_model(Dimension::Spatial);
    let inertia = Matrix3::from_diagonal(&Vector3::new(0.2, 0.3, 0.4));
    let a = add_body(&mut model, "a", JointKind::Floating, 1.0, inertia);
    let b = add_body(&mut model, "b", JointKind::Floating, 2.0, inertia);
    let (anchor_a, anchor_b) = (Vector3::new(0.3, -0.1, 0.2), Vector3::new(-0.2, 0.4, 0.1));
    model.constraints.push(Constraint {
        name: "ball".into(),
        kind: ConstraintKind::Point {
            body_a: Some(a),
            anchor_a,
            body_b: Some(b),
            anchor_b,
        },
        stiffness: Some(1e4),
        damping: Some(3.0),
    });
    model.constraints.push(Constraint {
        name: "rod".into(),
        kind: ConstraintKind::Distance {
            body_a: Some(a),
            anchor_a,
            body_b: None,
            anchor_b: Vector3::new(0.0, 0.0, 2.0),
            length: 1.5,
        },
        stiffness: None,
        damping: None,
    });
    let ra = UnitQuaternion::from_scaled_axis(Vector3::new(0.2, 0.5, -0.4));
    let rb = UnitQuaternion::from_scaled_axis(Vector3::new(-0.6, 0.1, 0.3));
    let pa = Vector3::new(0.1, 0.0, 0.5);
    let pb = Vector3::new(0.4, -0.2, 0.3);
    let mut q = floating_q(pa, ra);
    q.extend(floating_q(pb, rb).iter().copied());
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let v = random_vector(&mut rng, 12);
    let snap = ContactSnapshot::new(&model, &q, &v, 0.0).unwrap();
    assert_eq!(snap.bilateral.len(), 4);
    let names: Vec<&str> = snap.bilateral.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, vec!["ball.x", "ball.y", "ball.z", "rod"]);
    let wa = pa + ra * anchor_a;
    let wb = pb + rb * anchor_b;
    let phi = wa - wb;
    for k in 0..3 {
        assert!((snap.bilateral[k].phi - phi[k]).abs() < 1e-14);
        assert_eq!(snap.bilateral[k].stiffness, Some(1e4));
        assert_eq!(snap.bilateral[k].damping, Some(3.0));
    }
    let rod = (wa - Vector3::new(0.0, 0.0, 2.0)).norm() - 1.5;
    assert!((snap.bilateral[3].phi - rod).abs() < 1e-14);
    let eps = 1e-4;
    let phis_at = |s: f64| -> Vec<f64> {
        ContactSnapshot::new(&model, &advance(&model, &q, &v, s), &v, 0.0)
            .unwrap()
            .bilateral
            .iter()
            .map(|r| r.phi)
            .collect()
    };
    let (fp, fm) = (phis_at(eps), phis_at(-eps));
    for (i, r) in snap.bilateral.iter().enumerate() {
        let rate = (fp[i] - fm[i]) / (2.0 * eps);
        assert!((r.row.dot(&v) - rate).abs() < 1e-6, "row {i}");
        // Anchors are body-fixed: the J̇v term is the exact φ̈ at v̇ = 0.
        let accel = (fp[i] - 2.0 * r.phi + fm[i]) / (eps * eps);
        assert!(
            (r.row_dot_v - accel).abs() < 1e-4,
            "row {i}: {} vs {accel}",
            r.row_dot_v
        );
    }
    assert_eq!(snap.bilateral_jacobian().shape(), (4, 12));
}

#[test]
fn planar_pin_rows() {
    let mut model = empty_model(Dimension::Planar);
    let b = add_body(
        &mut model,
        "link",
        JointKind::Planar,
        1.0,
        Matrix3::identity() * 0.1,
    );
    model.constraints.push(Constraint {
        name: "pin".into(),
        kind: ConstraintKind::Point {
            body_a: Some(b),
            anchor_a: Vector3::new(0.5, 0.0, 0.0),
            body_b: None,
            anchor_b: Vector3::zeros(),
        },
        stiffness: None,
        damping: None,
    });
    let (x, y, th, w) = (0.1, -0.3, 0.7f64, 1.9);
    let q = DVector::from_vec(vec![x, y, th]);
    let v = DVector::from_vec(vec![0.4, -0.6, w]);
    let snap = ContactSnapshot::new(&model, &q, &v, 0.0).unwrap();
    assert_eq!(snap.bilateral.len(), 2);
    let (s, c) = (th.sin(), th.cos());
    let rx = &snap.bilateral[0];
    let ry = &snap.bilateral[1];
    assert!((rx.phi - (x + 0.5 * c)).abs() < 1e-14);
    assert!((ry.phi - (y + 0.5 * s)).abs() < 1e-14);
    assert!((&rx.row - DVector::from_vec(vec![1.0, 0.0, -0.5 * s])).norm() < 1e-14);
    assert!((&ry.row - DVector::from_vec(vec![0.0, 1.0, 0.5 * c])).norm() < 1e-14);
    assert!((rx.row_dot_v + 0.5 * c * w * w).abs() < 1e-13);
    assert!((ry.row_dot_v + 0.5 * s * w * w).abs() < 1e-13);
}

#[test]
fn joint_limit_rows() {
    let mut model = empty_model(Dimension::Spatial);
    let hinge = add_body(
        &mut model,
        "hinge",
        JointKind::Revolute,
        1.0,
        Matrix3::identity(),
    );
    let slider = add_body(
        &mut model,
        "slider",
        JointKind::Prismatic,
        1.0,
        Matrix3::identity(),
    );
    model.joints[hinge].limit = Some(JointLimit {
        lower: -1.0,
        upper: 1.0,
        stiffness: Some(50.0),
        damping: Some(2.0),
    });
    model.joints[slider].limit = Some(JointLimit {
        lower: 0.0,
        upper: 0.5,
        stiffness: None,
        damping: None,
    });
    model.joints[slider].axis = Unit::new_normalize(Vector3::new(1.0, 0.0, 0.0));
    model.contact_margin = 0.1;
    let v: DVector<f64> = DVector::from_vec(vec![0.3, -0.2]);
    let q: DVector<f64> = DVector::from_vec(vec![0.95, -0.02]);
    let snap = ContactSnapshot::new(&model, &q, &v, 0.0).unwrap();
    assert_eq!(snap.limits.len(), 2);
    let up = &snap.limits[0];
    assert_eq!(up.name, "hinge_joint.upper");
    assert!((up.phi - 0.05).abs() < 1e-15);
    assert_eq!(up.row.as_slice(), &[-1.0, 0.0]);
    assert_eq!((up.stiffness, up.damping), (Some(50.0), Some(2.0)));
    let low = &snap.limits[1];
    assert_eq!(low.name, "slider_joint.lower");
    assert!((low.phi + 0.02).abs() < 1e-15);
    assert_eq!(low.row.as_slice(), &[0.0, 1.0]);
    assert_eq!(low.row_dot_v, 0.0);
    // φ̇ = row · v.
    assert!((up.row.dot(&v) + 0.3).abs() < 1e-15);
    // Far from both limits: no rows.
    let snap = ContactSnapshot::new(&model, &DVector::from_vec(vec![0.0, 0.25]), &v, 0.0).unwrap();
    assert!(snap.limits.is_empty());
    assert_eq!(snap.limit_jacobian().shape(), (0, 2));
    // Actuation Pᵀ from the model; a bad actuator index is a typed error.
    model.actuators.push(Actuator {
        name: "push".into(),
        joint: slider,
        dof: 0,
        gear: 2.5,
        effort_limit: None,
        kind: Default::default(),
    });
    let snap = ContactSnapshot::new(&model, &q, &v, 0.0).unwrap();
    assert_eq!(snap.actuation.as_slice(), &[0.0, 2.5]);
    model.actuators[0].dof = 1;
    assert!(matches!(
        ContactSnapshot::new(&model, &q, &v, 0.0),
        Err(ModelError::Topology { .. })
    ));
}

#[test]
fn joint_limit_rows_are_speculative_over_a_travel_time() {
    // A hinge 0.15 rad below its upper stop, margin 0.1: outside the margin, but at
    // q̇ = 20 rad/s a 5 ms step travels 0.1 rad, so the speculative snapshot keeps the row
    // (gap still 0.15, the stepper's bias −φ/h lets the joint close exactly that).
    let mut model = empty_model(Dimension::Spatial);
    let hinge = add_body(
        &mut model,
        "hinge",
        JointKind::Revolute,
        1.0,
        Matrix3::identity(),
    );
    model.joints[hinge].limit = Some(JointLimit {
        lower: -1.0,
        upper: 1.0,
        stiffness: None,
        damping: None,
    });
    model.contact_margin = 0.1;
    let q = DVector::from_vec(vec![0.85]);
    let h = 0.005;
    let snapshot = |v: f64, margins: &ContactMargins| {
        ContactSnapshot::with_contact_margins(&model, &q, &DVector::from_vec(vec![v]), 0.0, margins)
            .unwrap()
    };
    // The model's margin alone: no row.
    assert!(snapshot(20.0, &ContactMargins::uniform(0.1))
        .limits
        .is_empty());
    let speculative = ContactMargins::speculative(0.1, h);
    let snap = snapshot(20.0, &speculative);
    assert_eq!(snap.limits.len(), 1);
    assert_eq!(snap.limits[0].name, "hinge_joint.upper");
    assert!((snap.limits[0].phi - 0.15).abs() < 1e-15);
    // The travel counts whatever its direction, as for contacts.
    assert_eq!(snapshot(-20.0, &speculative).limits.len(), 1);
    // Too slow to reach it within the step: no row.
    assert!(snapshot(5.0, &speculative).limits.is_empty());
}

#[test]
fn materials_are_combined_per_pair_material() {
    let mut model = sphere_model(0.1, 1.0);
    model.materials.push(ContactMaterial {
        name: "rubber".into(),
        friction: 0.9,
        restitution: Some(0.3),
        stiffness: Some(1e5),
        damping: Some(10.0),
        law: ComplianceLaw::HuntCrossley,
    });
    model.materials.push(ContactMaterial {
        name: "soil".into(),
        friction: 0.4,
        restitution: None,
        stiffness: Some(2e5),
        damping: None,
        law: ComplianceLaw::Linear,
    });
    model.colliders[1].material = 1;
    model.colliders[0].material = 2;
    let q = floating_q(Vector3::new(0.0, 0.0, 0.05), UnitQuaternion::identity());
    let v = DVector::zeros(6);
    let snap = ContactSnapshot::new(&model, &q, &v, 0.0).unwrap();
    let c = &snap.contacts[0];
    assert!((c.gap + 0.05).abs() < 1e-15);
    assert!((c.friction - 0.6).abs() < 1e-15);
    assert_eq!(c.restitution, Some(0.3));
    assert!((c.stiffness.unwrap() - 1e5 * 2e5 / 3e5).abs() < 1e-9);
    assert_eq!(c.damping, Some(10.0));
    assert_eq!(c.law, ComplianceLaw::HuntCrossley);
    let expected = model.pair_material(1, 0);
    assert_eq!(
        (c.friction, c.restitution, c.stiffness, c.damping, c.law),
        (
            expected.friction,
            expected.restitution,
            expected.stiffness,
            expected.damping,
            expected.law
        )
    );
    // An explicit override wins.
    model.pair_overrides.push(PairOverride {
        collider_a: 0,
        collider_b: 1,
        material: ContactMaterial {
            name: "ice".into(),
            friction: 0.05,
            restitution: Some(0.9),
            stiffness: None,
            damping: None,
            law: ComplianceLaw::Linear,
        },
    });
    let snap = ContactSnapshot::new(&model, &q, &v, 0.0).unwrap();
    let c = &snap.contacts[0];
    assert_eq!(
        (c.friction, c.restitution, c.stiffness),
        (0.05, Some(0.9), None)
    );
}

#[test]
fn invalid_states_are_typed_errors() {
    let model = sphere_model(0.1, 1.0);
    let q = floating_q(Vector3::new(0.0, 0.0, 1.0), UnitQuaternion::identity());
    let v = DVector::zeros(6);
    let err = ContactSnapshot::new(&model, &DVector::zeros(6), &v, 0.0).unwrap_err();
    assert!(matches!(
        err,
        ModelError::DimensionMismatch {
            expected: 7,
            got: 6,
            ..
        }
    ));
    let err = ContactSnapshot::new(&model, &q, &DVector::zeros(5), 0.0).unwrap_err();
    assert!(matches!(
        err,
        ModelError::DimensionMismatch {
            expected: 6,
            got: 5,
            ..
        }
    ));
    let mut bad = v.clone();
    bad[4] = f64::NAN;
    let err = ContactSnapshot::new(&model, &q, &bad, 0.0).unwrap_err();
    assert!(matches!(err, ModelError::NonFinite { .. }));
    assert!(ContactSnapshot::new(&model, &q, &v, f64::INFINITY).is_err());
    let snap = ContactSnapshot::from_state(
        &model,
        &State {
            q: q.clone(),
            v: v.clone(),
            t: 1.0,
        },
    )
    .unwrap();
    assert_eq!(snap.t, 1.0);
    let err = snap.delassus(&DMatrix::zeros(1, 5)).unwrap_err();
    assert!(matches!(
        err,
        ModelError::DimensionMismatch {
            expected: 6,
            got: 5,
            ..
        }
    ));
    let mut singular = snap.clone();
    singular.mass_matrix[(0, 0)] = -1.0;
    assert!(matches!(
        singular.delassus(&snap.normal_jacobian()),
        Err(ModelError::InvalidValue { .. })
    ));
}

#[test]
fn dual_number_snapshot_differentiates_the_gap() {
    let model = sphere_model(0.1, 1.0);
    let q = floating_q(Vector3::new(0.2, 0.1, 0.7), UnitQuaternion::identity());
    let mut qd: DVector<Dual64> = q.map(Dual64::from);
    qd[2] = Dual64::new(0.7, 1.0);
    let vd = DVector::from_element(6, Dual64::from(0.0));
    let snap = ContactSnapshot::new(&model, &qd, &vd, Dual64::from(0.0)).unwrap();
    let c = &snap.contacts[0];
    assert!((c.gap.re - 0.6).abs() < 1e-15);
    assert!((c.gap.eps - 1.0).abs() < 1e-15);
}

/// Adds a body hanging from `parent` by a joint placed at `offset` in the parent frame.
fn add_child(
    model: &mut Model,
    name: &str,
    parent: usize,
    kind: JointKind,
    axis: Unit<Vector3<f64>>,
    offset: Vector3<f64>,
) -> usize {
    let id = add_body(
        model,
        name,
        kind,
        1.5,
        Matrix3::from_diagonal(&Vector3::new(0.02, 0.03, 0.04)),
    );
    model.bodies[id].com = Vector3::new(0.0, -0.3, 0.05);
    model.joints[id].parent = Some(parent);
    model.joints[id].placement = Isometry3::translation(offset.x, offset.y, offset.z);
    model.joints[id].axis = axis;
    id
}

#[test]
fn articulated_contact_rows_match_finite_differences() {
    // Planar double pendulum with a point foot at the tip of link 2 above a ground line, and
    // a spatial floating base carrying a hinged leg with a spherical foot.
    let mut planar = empty_model(Dimension::Planar);
    let l1 = add_body(
        &mut planar,
        "l1",
        JointKind::Revolute,
        1.0,
        Matrix3::identity() * 0.1,
    );
    let l2 = add_child(
        &mut planar,
        "l2",
        l1,
        JointKind::Revolute,
        Vector3::z_axis(),
        Vector3::new(0.0, -0.8, 0.0),
    );
    add_collider(
        &mut planar,
        "ground",
        None,
        Shape::Plane {
            normal: Unit::new_normalize(Vector3::new(0.2, 1.0, 0.0)),
        },
        0,
    );
    let foot = add_collider(&mut planar, "foot", Some(l2), Shape::Point, 0);
    planar.colliders[foot].pose = Isometry3::translation(0.0, -0.7, 0.0);
    planar.colliders[0].pose = Isometry3::translation(0.0, -2.0, 0.0);
    planar.contact_margin = 10.0;

    let mut spatial = empty_model(Dimension::Spatial);
    let base = add_body(
        &mut spatial,
        "base",
        JointKind::Floating,
        4.0,
        Matrix3::identity() * 0.2,
    );
    let leg = add_child(
        &mut spatial,
        "leg",
        base,
        JointKind::Revolute,
        Unit::new_normalize(Vector3::new(1.0, 0.3, 0.0)),
        Vector3::new(0.2, 0.0, -0.1),
    );
    add_collider(&mut spatial, "ground", None, ground(), 0);
    let ball = add_collider(
        &mut spatial,
        "foot",
        Some(leg),
        Shape::Sphere { radius: 0.05 },
        0,
    );
    spatial.colliders[ball].pose = Isometry3::translation(0.0, -0.1, -0.6);
    spatial.contact_margin = 10.0;

    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let cases = [
        (planar, DVector::from_vec(vec![0.4, -0.9])),
        (spatial, {
            let mut q = floating_q(
                Vector3::new(0.1, 0.2, 1.0),
                UnitQuaternion::from_scaled_axis(Vector3::new(0.3, -0.2, 0.5)),
            );
            q.extend([0.7]);
            q
        }),
    ];
    for (model, q) in &cases {
        let v = random_vector(&mut rng, model.nv()) * 1.5;
        let snap = ContactSnapshot::new(model, q, &v, 0.0).unwrap();
        assert_eq!(snap.num_contacts(), 1);
        let c = &snap.contacts[0];
        let eps = 1e-4;
        let gap_at = |s: f64| {
            ContactSnapshot::new(model, &advance(model, q, &v, s), &v, 0.0)
                .unwrap()
                .contacts[0]
                .gap
        };
        let (gp, gm) = (gap_at(eps), gap_at(-eps));
        let rate = (gp - gm) / (2.0 * eps);
        assert!(
            (c.rows.normal.dot(&v) - rate).abs() < 1e-6,
            "{} vs {rate}",
            c.rows.normal.dot(&v)
        );
        if model.dimension == Dimension::Planar {
            // Body-fixed point against a fixed line: J̇v is the exact φ̈ at v̇ = 0.
            let accel = (gp - 2.0 * c.gap + gm) / (eps * eps);
            assert!(
                (c.normal_row_dot_v - accel).abs() < 1e-4,
                "{} vs {accel}",
                c.normal_row_dot_v
            );
        }
        // The Delassus operator of the normal row is positive.
        let w = snap.delassus(&snap.normal_jacobian()).unwrap();
        assert!(w[(0, 0)] > 0.0);
    }
}
