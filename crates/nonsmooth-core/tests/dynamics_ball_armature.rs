//! Ball joints and joint armature: closed forms for the mass matrix of a body on a ball
//! joint (rotational inertia about the pivot, RBDA §2.13 parallel-axis theorem), armature on
//! the diagonal, inverse dynamics consistent with `M v̇ + h`, the quaternion rate and its
//! renormalization, and the model-file round trip.

use nalgebra::{DVector, Isometry3, Matrix3, UnitQuaternion, Vector3};
use nonsmooth_core::dynamics::{
    bias_force, forward_dynamics, integrate_configuration, inverse_dynamics, kinematics,
    mass_matrix,
};
use nonsmooth_core::{Body, Dimension, Joint, JointKind, Model};

/// A rod-like body hanging from a ball joint, its centre of mass `c` below the pivot, plus
/// a hinge to a second body with armature.
fn ball_pendulum(armature: f64) -> Model {
    let mut model = Model::new("ball_pendulum", Dimension::Spatial);
    let inertia = Matrix3::from_diagonal(&Vector3::new(0.3, 0.2, 0.1));
    let upper = model
        .add_body(
            Body::new("upper", 2.0, inertia).with_com(Vector3::new(0.1, 0.0, -0.5)),
            Joint::new("shoulder", JointKind::Ball, None),
        )
        .unwrap();
    let mut elbow = Joint::new("elbow", JointKind::Revolute, Some(upper))
        .with_placement(Isometry3::translation(0.0, 0.0, -1.0))
        .with_axis(Vector3::y());
    elbow.armature = armature;
    model
        .add_body(
            Body::new("lower", 1.0, Matrix3::from_diagonal_element(0.05))
                .with_com(Vector3::new(0.0, 0.0, -0.4)),
            elbow,
        )
        .unwrap();
    model
}

#[test]
fn ball_joint_mass_matrix_is_the_pivot_inertia_in_body_axes() {
    let model = ball_pendulum(0.0);
    assert_eq!((model.nq(), model.nv()), (5, 4));
    assert_eq!(
        model.q_names()[..4],
        ["shoulder.qw", "shoulder.qx", "shoulder.qy", "shoulder.qz"]
    );
    assert_eq!(
        model.initial_state.q[0], 1.0,
        "identity quaternion by default"
    );
    let rot = UnitQuaternion::from_euler_angles(0.3, -0.7, 1.1);
    let c = rot.quaternion().coords; // (i, j, k, w)
    let q = DVector::from_vec(vec![c[3], c[0], c[1], c[2], 0.0]);
    let m = mass_matrix(&model, &q);
    // The 3×3 shoulder block: both bodies' inertia about the pivot in the upper body's axes
    // (the body-frame angular velocity is the ball's v, whatever the orientation).
    let about_pivot = |mass: f64, i_com: Matrix3<f64>, r: Vector3<f64>| {
        i_com + (Matrix3::identity() * r.norm_squared() - r * r.transpose()) * mass
    };
    let expected = about_pivot(2.0, model.bodies[0].inertia, Vector3::new(0.1, 0.0, -0.5))
        + about_pivot(
            1.0,
            Matrix3::from_diagonal_element(0.05),
            Vector3::new(0.0, 0.0, -1.4),
        );
    let block = m.fixed_view::<3, 3>(0, 0).into_owned();
    assert!(
        (block - expected).abs().max() < 1e-12,
        "ball block {block} vs {expected}"
    );
    // Orientation-independent in body axes, and symmetric positive definite.
    let q0 = model.initial_state.q.clone();
    assert!((mass_matrix(&model, &q0) - &m).abs().max() < 1e-12);
    assert!(m.clone().cholesky().is_some());
}

#[test]
fn armature_adds_to_the_diagonal_and_to_inverse_dynamics() {
    let (plain, geared) = (ball_pendulum(0.0), ball_pendulum(0.25));
    let quat = nalgebra::Vector4::new(0.9, 0.1, -0.3, 0.2).normalize();
    let q = DVector::from_vec(vec![quat[0], quat[1], quat[2], quat[3], 0.4]);
    let diff = mass_matrix(&geared, &q) - mass_matrix(&plain, &q);
    let mut expected = nalgebra::DMatrix::zeros(4, 4);
    expected[(3, 3)] = 0.25;
    assert!((diff - expected).abs().max() < 1e-14);
    // τ = M v̇ + h, with the armature in M, from RNEA.
    let v = DVector::from_vec(vec![0.3, -1.2, 0.5, 2.0]);
    let a = DVector::from_vec(vec![-0.7, 0.2, 1.5, -3.0]);
    let tau = inverse_dynamics(&geared, &q, &v, &a);
    let rhs = mass_matrix(&geared, &q) * &a + bias_force(&geared, &q, &v);
    assert!((&tau - &rhs).abs().max() < 1e-12, "{tau} vs {rhs}");
    let back = forward_dynamics(&geared, &q, &v, &tau).unwrap();
    assert!((back - a).abs().max() < 1e-10);
}

#[test]
fn ball_quaternion_follows_the_body_angular_velocity() {
    let model = ball_pendulum(0.0);
    let q0 = model.initial_state.q.clone();
    let omega = Vector3::new(0.0, 0.0, 2.0);
    let v = DVector::from_vec(vec![omega.x, omega.y, omega.z, 0.0]);
    // Many small steps: the orientation approaches exp(ω t) and stays unit.
    let (h, n) = (1e-4, 5000);
    let mut q = q0;
    for _ in 0..n {
        q = integrate_configuration(&model, &q, &v, h);
    }
    assert!((q.rows(0, 4).norm() - 1.0).abs() < 1e-12);
    let kin = kinematics(&model, &q, &DVector::zeros(model.nv()));
    let expected = UnitQuaternion::from_scaled_axis(omega * (h * n as f64));
    assert!(kin.poses[0].rotation.angle_to(&expected) < 1e-3);
}

#[test]
fn ball_joints_and_armature_survive_the_model_file() {
    let model = ball_pendulum(0.25);
    let text = model.to_toml_string().unwrap();
    assert!(text.contains("kind = \"ball\""), "{text}");
    assert!(text.contains("armature = 0.25"), "{text}");
    let back = Model::from_toml_str(&text, None).unwrap();
    assert_eq!(back.joints[0].kind, JointKind::Ball);
    assert_eq!(back.joints[1].armature, 0.25);
    let bad = text.replace("armature = 0.25", "armature = -1.0");
    let err = Model::from_toml_str(&bad, None).unwrap_err().to_string();
    assert!(err.contains("armature"), "{err}");
}

#[test]
fn massless_joint_frames_chain_joints_but_a_massless_leaf_is_an_error() {
    // slide x → slide z → hinge y: the usual planar chain of an MJCF body with three joints.
    let mut model = Model::new("chain", Dimension::Spatial);
    let frame = |name: &str| Body::new(name, 0.0, Matrix3::zeros());
    let x = model
        .add_body(
            frame("x_frame"),
            Joint::new("slide_x", JointKind::Prismatic, None).with_axis(Vector3::x()),
        )
        .unwrap();
    let z = model
        .add_body(
            frame("z_frame"),
            Joint::new("slide_z", JointKind::Prismatic, Some(x)).with_axis(Vector3::z()),
        )
        .unwrap();
    model
        .add_body(
            Body::new("torso", 3.0, Matrix3::from_diagonal_element(0.2)),
            Joint::new("hinge_y", JointKind::Revolute, Some(z)).with_axis(Vector3::y()),
        )
        .unwrap();
    model.validate().unwrap();
    let m = mass_matrix(&model, &model.initial_state.q);
    let expected = nalgebra::DMatrix::from_diagonal(&DVector::from_vec(vec![3.0, 3.0, 0.2]));
    assert!((m - expected).abs().max() < 1e-14);

    let mut leaf = model.clone();
    leaf.bodies[2].mass = 0.0;
    leaf.bodies[2].inertia = Matrix3::zeros();
    let err = leaf.validate().unwrap_err().to_string();
    assert!(err.contains("bodies[2].mass"), "{err}");
}
