//! RNEA against CRBA, forward dynamics and a Jacobian-based Newton–Euler oracle on random
//! trees.

use crate::support;

use nalgebra::{DVector, Point3};
use nonsmooth_core::dynamics::{
    bias_force, forward_dynamics, frame_jacobian, inverse_dynamics, kinematics, mass_matrix,
    passive_force, point_jacobian, point_jdot_v,
};
use nonsmooth_core::{JointKind, JointSpring, Model};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use support::{random_state, random_vector, tree_family};

fn rel(a: &DVector<f64>, b: &DVector<f64>) -> f64 {
    (a - b).amax() / a.amax().max(b.amax()).max(1.0)
}

#[test]
fn crba_plus_bias_equals_rnea() {
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let mut worst: f64 = 0.0;
    for model in tree_family(4, 45, true) {
        let (q, v) = random_state(&mut rng, &model);
        let vdot = random_vector(&mut rng, model.nv());
        let lhs = mass_matrix(&model, &q) * &vdot + bias_force(&model, &q, &v);
        let rhs = inverse_dynamics(&model, &q, &v, &vdot);
        worst = worst.max(rel(&lhs, &rhs));
    }
    assert!(worst <= 1e-10, "M v̇ + h vs RNEA: {worst}");
}

#[test]
fn forward_dynamics_inverts_inverse_dynamics() {
    let mut rng = ChaCha8Rng::seed_from_u64(22);
    let mut worst: f64 = 0.0;
    for model in tree_family(5, 45, true) {
        let (q, v) = random_state(&mut rng, &model);
        let vdot = random_vector(&mut rng, model.nv());
        // M v̇ + h = τ + passive  ⇒  τ = ID(v̇) − passive.
        let tau = inverse_dynamics(&model, &q, &v, &vdot) - passive_force(&model, &q, &v);
        let back = forward_dynamics(&model, &q, &v, &tau).expect("valid model");
        worst = worst.max(rel(&back, &vdot));
    }
    assert!(worst <= 1e-8, "FD(ID(v̇)) vs v̇: {worst}");
}

/// h = Σ_i J_cᵀ m_i (J̇_c v − g) + J_ωᵀ (Ī_w α_bias + ω × Ī_w ω) (projected Newton–Euler).
fn newton_euler_oracle(model: &Model, q: &DVector<f64>, v: &DVector<f64>) -> DVector<f64> {
    let kin = kinematics(model, q, v);
    let mut h = DVector::zeros(model.nv());
    for (i, body) in model.bodies.iter().enumerate() {
        let c = (kin.poses[i] * Point3::from(body.com)).coords;
        let jc = point_jacobian(model, &kin, Some(i), &c);
        let ac = point_jdot_v(model, &kin, Some(i), &c);
        let jw = frame_jacobian(model, &kin, i).rows(0, 3).into_owned();
        let r = kin.poses[i].rotation.to_rotation_matrix().into_inner();
        let iw = r * body.inertia * r.transpose();
        let w = kin.angular_velocity[i];
        let torque = iw * kin.angular_acceleration_bias[i] + w.cross(&(iw * w));
        h += jc.transpose() * ((ac - model.gravity) * body.mass) + jw.transpose() * torque;
    }
    h
}

#[test]
fn bias_force_matches_projected_newton_euler() {
    let mut rng = ChaCha8Rng::seed_from_u64(23);
    let mut worst: f64 = 0.0;
    for model in tree_family(6, 45, false) {
        let (q, v) = random_state(&mut rng, &model);
        let h = bias_force(&model, &q, &v);
        worst = worst.max(rel(&h, &newton_euler_oracle(&model, &q, &v)));
    }
    assert!(worst <= 1e-11, "RNEA bias vs Newton–Euler oracle: {worst}");
}

/// The passive force is `−d v` on every velocity coordinate, plus `−k (q − q_ref)` on the
/// coordinate of a one-DOF joint with a spring.
#[test]
fn passive_force_is_damping_and_springs() {
    let mut rng = ChaCha8Rng::seed_from_u64(24);
    let mut model = tree_family(7, 3, true)[1].clone();
    let sprung: Vec<usize> = (0..model.joints.len())
        .filter(|&i| {
            matches!(
                model.joints[i].kind,
                JointKind::Revolute | JointKind::Prismatic
            )
        })
        .collect();
    assert!(!sprung.is_empty());
    for (n, &i) in sprung.iter().enumerate() {
        model.joints[i].spring = Some(JointSpring {
            stiffness: 2.0 + n as f64,
            reference: 0.1 * n as f64,
        });
    }
    let (q, v) = random_state(&mut rng, &model);
    let f = passive_force(&model, &q, &v);
    for j in &model.joints {
        for k in 0..j.kind.nv() {
            let i = j.v_index + k;
            let spring = match (k, j.spring) {
                (0, Some(s)) => -s.stiffness * (q[j.q_index] - s.reference),
                _ => 0.0,
            };
            assert!((f[i] - (-j.damping * v[i] + spring)).abs() < 1e-14);
        }
    }
}
