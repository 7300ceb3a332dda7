//! Closed-form checks: a single pendulum, a free rigid body (floating and planar joints),
//! the velocity map, and error cases (quaternion normalization, state checks, forward
//! dynamics dimensions).

use crate::support;

use nalgebra::{DVector, Isometry3, Matrix3, Vector3};
use nonsmooth_core::dynamics::{
    bias_force, check_state, configuration_rate, forward_dynamics, integrate_configuration,
    inverse_dynamics, kinematics, mass_matrix, neutral_configuration, normalize_configuration,
    point_jacobian, potential_energy, velocity_map,
};
use nonsmooth_core::{Body, JointKind, Location, ModelError};
use support::{assemble, joint};

const G: f64 = 9.81;

fn pendulum(m: f64, l: f64, izz: f64, damping: f64) -> nonsmooth_core::Model {
    let body = Body {
        name: "bob".into(),
        mass: m,
        com: Vector3::new(l, 0.0, 0.0),
        inertia: Matrix3::from_diagonal(&Vector3::new(0.01, 0.02, izz)),
    };
    let j = joint(
        "hinge",
        JointKind::Revolute,
        None,
        0,
        Isometry3::translation(0.0, 1.0, 0.0),
        Vector3::z(),
        damping,
    );
    assemble("pendulum", Vector3::new(0.0, -G, 0.0), vec![body], vec![j])
}

#[test]
fn single_pendulum_closed_form() {
    let (m, l, izz) = (2.0, 0.7, 0.05);
    let model = pendulum(m, l, izz, 0.3);
    for &theta in &[0.0, 0.4, -1.2, 2.5] {
        let q = DVector::from_element(1, theta);
        let v = DVector::from_element(1, 1.7);
        let mm = mass_matrix(&model, &q);
        assert!((mm[(0, 0)] - (izz + m * l * l)).abs() <= 1e-14);
        // Gravity torque about z of a bob at angle θ from +x: h = m g l cos θ; no Coriolis.
        let h = bias_force(&model, &q, &v);
        assert!((h[0] - m * G * l * theta.cos()).abs() <= 1e-12);
        let tau = DVector::from_element(1, 0.9);
        let acc = forward_dynamics(&model, &q, &v, &tau).unwrap();
        let expected = (0.9 - m * G * l * theta.cos() - 0.3 * 1.7) / (izz + m * l * l);
        assert!((acc[0] - expected).abs() <= 1e-12);
        // Bob velocity and centripetal acceleration.
        let kin = kinematics(&model, &q, &v);
        let p = Vector3::new(l * theta.cos(), 1.0 + l * theta.sin(), 0.0);
        let j = point_jacobian(&model, &kin, Some(0), &p);
        let vel = j * &v;
        let expected_vel = Vector3::new(-theta.sin(), theta.cos(), 0.0) * (1.7 * l);
        assert!((vel - expected_vel).amax() <= 1e-12);
        let acc_bias = nonsmooth_core::dynamics::point_jdot_v(&model, &kin, Some(0), &p);
        let centripetal = -(p - Vector3::new(0.0, 1.0, 0.0)) * (1.7 * 1.7);
        assert!((acc_bias - centripetal).amax() <= 1e-12);
        let pe = potential_energy(&model, &q);
        assert!((pe - m * G * (1.0 + l * theta.sin())).abs() <= 1e-12);
    }
}

fn free_body(kind: JointKind) -> nonsmooth_core::Model {
    let body = Body {
        name: "brick".into(),
        mass: 3.0,
        com: Vector3::zeros(),
        inertia: Matrix3::from_diagonal(&Vector3::new(0.1, 0.2, 0.3)),
    };
    let j = joint(
        "base",
        kind,
        None,
        0,
        Isometry3::identity(),
        Vector3::z(),
        0.0,
    );
    assemble("free", Vector3::new(0.0, 0.0, -G), vec![body], vec![j])
}

#[test]
fn free_body_obeys_newton_and_euler() {
    let model = free_body(JointKind::Floating);
    let half = 0.35_f64;
    let (s, c) = half.sin_cos();
    let axis = Vector3::new(1.0, 2.0, 2.0) / 3.0;
    let q = DVector::from_vec(vec![0.1, -0.2, 0.3, c, s * axis.x, s * axis.y, s * axis.z]);
    let w = Vector3::new(0.4, -1.1, 0.7);
    let v = DVector::from_vec(vec![1.0, 2.0, -0.5, w.x, w.y, w.z]);
    let m = mass_matrix(&model, &q);
    // v_lin in the world frame, ω in body frame, com at the origin: M = diag(m 1, Ī).
    let mut expected = nalgebra::DMatrix::zeros(6, 6);
    for k in 0..3 {
        expected[(k, k)] = 3.0;
        expected[(k + 3, k + 3)] = [0.1, 0.2, 0.3][k];
    }
    assert!((&m - &expected).amax() <= 1e-14);
    let acc = forward_dynamics(&model, &q, &v, &DVector::zeros(6)).unwrap();
    // p̈ = g (the linear velocity lives in the world frame), Ī ω̇ = −ω × Ī ω (Euler).
    let inertia = Matrix3::from_diagonal(&Vector3::new(0.1, 0.2, 0.3));
    let wdot = -inertia.try_inverse().unwrap() * w.cross(&(inertia * w));
    let expected_acc = [0.0, 0.0, -G, wdot.x, wdot.y, wdot.z];
    for k in 0..6 {
        assert!((acc[k] - expected_acc[k]).abs() <= 1e-12, "component {k}");
    }
    // The body's origin moves with the world-frame linear velocity.
    let kin = kinematics(&model, &q, &v);
    assert!((kin.linear_velocity[0] - Vector3::new(1.0, 2.0, -0.5)).amax() <= 1e-14);
    let r = kin.poses[0].rotation.to_rotation_matrix().into_inner();
    assert!((kin.angular_velocity[0] - r * w).amax() <= 1e-14);
}

#[test]
fn planar_free_body_closed_form() {
    let model = free_body(JointKind::Planar);
    let q = DVector::from_vec(vec![0.5, -0.25, 0.8]);
    let v = DVector::from_vec(vec![1.0, -2.0, 3.0]);
    let m = mass_matrix(&model, &q);
    let expected = nalgebra::DMatrix::from_diagonal(&DVector::from_vec(vec![3.0, 3.0, 0.3]));
    assert!((&m - &expected).amax() <= 1e-14);
    // Gravity along −z is normal to the plane: no generalized force, no bias.
    assert!(bias_force(&model, &q, &v).amax() <= 1e-12);
    let tau = DVector::from_vec(vec![0.3, 0.6, 0.9]);
    let acc = forward_dynamics(&model, &q, &v, &tau).unwrap();
    let expected: [f64; 3] = [0.1, 0.2, 3.0];
    for k in 0..3 {
        assert!((acc[k] - expected[k]).abs() <= 1e-12);
    }
    let kin = kinematics(&model, &q, &v);
    assert!((kin.linear_velocity[0] - Vector3::new(1.0, -2.0, 0.0)).amax() <= 1e-14);
    assert!((kin.angular_velocity[0] - Vector3::new(0.0, 0.0, 3.0)).amax() <= 1e-14);
}

#[test]
fn velocity_map_and_integration_of_quaternions() {
    let model = free_body(JointKind::Floating);
    let q = neutral_configuration(&model);
    assert_eq!(q.as_slice(), &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    let n = velocity_map(&model, &q);
    // At the identity, q̇_quat = ½ (0, ω).
    assert_eq!(n[(4, 3)], 0.5);
    assert_eq!(n[(5, 4)], 0.5);
    assert_eq!(n[(6, 5)], 0.5);
    assert_eq!(n[(3, 3)], 0.0);
    let v = DVector::from_vec(vec![1.0, 0.0, 0.0, 0.0, 0.0, 2.0]);
    let mut qk = q.clone();
    for _ in 0..1000 {
        qk = integrate_configuration(&model, &qk, &v, 1e-3);
    }
    // Rotation about body z at 2 rad/s for 1 s: quaternion (cos 1, 0, 0, sin 1).
    assert!((qk[3] - 1.0_f64.cos()).abs() <= 2e-3);
    assert!((qk[6] - 1.0_f64.sin()).abs() <= 2e-3);
    assert!((qk[0] - 1.0).abs() <= 1e-12);
    let norm = qk.fixed_rows::<4>(3).norm();
    assert!((norm - 1.0).abs() <= 1e-14);
    // The joint-by-joint rate equals the product with the velocity map, off the identity too.
    for kind in [JointKind::Floating, JointKind::Ball] {
        let model = free_body(kind);
        let mut q = neutral_configuration(&model);
        let nq = q.len();
        q.rows_mut(nq - 4, 4)
            .copy_from_slice(&[0.8, 0.1, -0.5, 0.3]);
        normalize_configuration(&model, &mut q).unwrap();
        let v = DVector::from_fn(model.nv(), |i, _| 0.7 - 0.4 * i as f64);
        let dense = velocity_map(&model, &q) * &v;
        assert!((configuration_rate(&model, &q, &v) - dense).amax() <= 1e-15);
    }
}

#[test]
fn quaternion_normalization_and_its_error() {
    let model = free_body(JointKind::Floating);
    let mut q = DVector::from_vec(vec![0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0]);
    normalize_configuration(&model, &mut q).unwrap();
    assert_eq!(q[3], 1.0);
    let mut bad = DVector::from_vec(vec![0.0, 0.0, 0.0, 1e-12, 0.0, 0.0, 0.0]);
    match normalize_configuration(&model, &mut bad) {
        Err(ModelError::UnnormalizableQuaternion { location, norm }) => {
            assert_eq!(location, Location::field("q[3..7] (joint `base`)"));
            assert!((norm - 1e-12).abs() <= 1e-20);
        }
        other => panic!("expected UnnormalizableQuaternion, got {other:?}"),
    }
    let mut nan = DVector::from_vec(vec![0.0, 0.0, 0.0, f64::NAN, 0.0, 0.0, 0.0]);
    assert!(matches!(
        normalize_configuration(&model, &mut nan),
        Err(ModelError::UnnormalizableQuaternion { .. })
    ));
    let mut short = DVector::<f64>::zeros(3);
    assert!(matches!(
        normalize_configuration(&model, &mut short),
        Err(ModelError::DimensionMismatch {
            expected: 7,
            got: 3,
            ..
        })
    ));
}

#[test]
fn state_and_dimension_errors() {
    let model = free_body(JointKind::Floating);
    let q = neutral_configuration(&model);
    let v = DVector::zeros(6);
    assert_eq!(check_state(&model, &q, &v), Ok(()));
    assert_eq!(
        check_state(&model, &q, &DVector::zeros(5)),
        Err(ModelError::DimensionMismatch {
            location: Location::field("v"),
            expected: 6,
            got: 5
        })
    );
    let mut qn = q.clone();
    qn[2] = f64::INFINITY;
    match check_state(&model, &qn, &v) {
        Err(ModelError::NonFinite { location, value }) => {
            assert_eq!(location.field, "q[2]");
            assert_eq!(value, f64::INFINITY);
        }
        other => panic!("expected NonFinite, got {other:?}"),
    }
    assert!(matches!(
        forward_dynamics(&model, &q, &v, &DVector::zeros(4)),
        Err(ModelError::DimensionMismatch {
            expected: 6,
            got: 4,
            ..
        })
    ));
    // A massless free body has a singular mass matrix: typed error, no panic.
    let mut massless = model.clone();
    massless.bodies[0].mass = 0.0;
    massless.bodies[0].inertia = Matrix3::zeros();
    assert!(matches!(
        forward_dynamics(&massless, &q, &v, &v),
        Err(ModelError::InvalidValue { .. })
    ));
    // Inverse dynamics of the free body at rest holding still: τ = −m g (world frame).
    let tau = inverse_dynamics(&model, &q, &v, &DVector::zeros(6));
    assert!((tau[2] - 3.0 * G).abs() <= 1e-12);
}
