//! Point/frame Jacobians and J̇v against central finite differences along
//! q(ε) = integrate_configuration(q, v, ε) on random trees.

use crate::support;

use nalgebra::{DVector, Point3, Vector3};
use nonsmooth_core::dynamics::{
    frame_jacobian, frame_jdot_v, integrate_configuration, kinematics, point_jacobian,
    point_jdot_v, Kinematics,
};
use nonsmooth_core::Model;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use support::{random_state, tree_family};

const EPS: f64 = 1e-5;

fn kin_at(model: &Model, q: &DVector<f64>, v: &DVector<f64>, eps: f64) -> Kinematics<f64> {
    kinematics(model, &integrate_configuration(model, q, v, eps), v)
}

fn world(kin: &Kinematics<f64>, body: usize, local: &Vector3<f64>) -> Vector3<f64> {
    (kin.poses[body] * Point3::from(*local)).coords
}

#[test]
fn point_jacobian_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(31);
    let mut worst: f64 = 0.0;
    let mut worst_vel: f64 = 0.0;
    for model in tree_family(8, 45, false) {
        let (q, v) = random_state(&mut rng, &model);
        let kin = kinematics(&model, &q, &v);
        let (kp, km) = (kin_at(&model, &q, &v, EPS), kin_at(&model, &q, &v, -EPS));
        for b in 0..model.bodies.len() {
            let local = Vector3::new(rng.gen_range(-0.5..0.5), 0.2, -0.1);
            let p = world(&kin, b, &local);
            let fd = (world(&kp, b, &local) - world(&km, b, &local)) / (2.0 * EPS);
            let jv = point_jacobian(&model, &kin, Some(b), &p) * &v;
            worst = worst.max((jv - fd).amax());
            // The body-origin velocity stored in the kinematics agrees too.
            let fd_o =
                (kp.poses[b].translation.vector - km.poses[b].translation.vector) / (2.0 * EPS);
            worst_vel = worst_vel.max((kin.linear_velocity[b] - fd_o).amax());
            // Angular velocity: R(ε) R(−ε)ᵀ ≈ exp(2ε ω×).
            let dr = kp.poses[b].rotation * km.poses[b].rotation.inverse();
            let w_fd = dr.scaled_axis() / (2.0 * EPS);
            worst_vel = worst_vel.max((kin.angular_velocity[b] - w_fd).amax());
            let jf = frame_jacobian(&model, &kin, b) * &v;
            worst_vel = worst_vel.max((jf.fixed_rows::<3>(0) - w_fd).amax());
            worst_vel = worst_vel.max((jf.fixed_rows::<3>(3) - fd_o).amax());
        }
        let world_j = point_jacobian(&model, &kin, None, &Vector3::new(1.0, 2.0, 3.0));
        assert_eq!(world_j.amax(), 0.0);
    }
    assert!(worst <= 1e-6, "J v vs finite differences: {worst}");
    assert!(
        worst_vel <= 1e-6,
        "frame velocities vs finite differences: {worst_vel}"
    );
}

#[test]
fn jdot_v_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(32);
    let mut worst: f64 = 0.0;
    for model in tree_family(9, 45, false) {
        let (q, v) = random_state(&mut rng, &model);
        let kin = kinematics(&model, &q, &v);
        let (kp, km) = (kin_at(&model, &q, &v, EPS), kin_at(&model, &q, &v, -EPS));
        for b in 0..model.bodies.len() {
            let local = Vector3::new(0.1, rng.gen_range(-0.5..0.5), 0.3);
            let p = world(&kin, b, &local);
            let jp = point_jacobian(&model, &kp, Some(b), &world(&kp, b, &local)) * &v;
            let jm = point_jacobian(&model, &km, Some(b), &world(&km, b, &local)) * &v;
            let fd = (jp - jm) / (2.0 * EPS);
            worst = worst.max((point_jdot_v(&model, &kin, Some(b), &p) - fd).amax());
            let fp = frame_jacobian(&model, &kp, b) * &v;
            let fm = frame_jacobian(&model, &km, b) * &v;
            let fd6 = (fp - fm) / (2.0 * EPS);
            worst = worst.max((frame_jdot_v(&model, &kin, b) - fd6).amax());
        }
        assert_eq!(
            point_jdot_v(&model, &kin, None, &Vector3::new(1.0, 0.0, 0.0)).amax(),
            0.0
        );
    }
    assert!(worst <= 1e-6, "J̇v vs finite differences: {worst}");
}

/// The centre of mass is the mass-weighted mean of the body centres of mass, and its Jacobian
/// matches central finite differences of it along q(ε) (random trees, with and without
/// joint damping).
#[test]
fn com_and_its_jacobian_match_the_bodies_and_finite_differences() {
    use nonsmooth_core::dynamics::{center_of_mass, com_jacobian};
    let mut rng = ChaCha8Rng::seed_from_u64(47);
    let mut worst: f64 = 0.0;
    for damping in [false, true] {
        for model in tree_family(6, 17, damping) {
            let (q, v) = random_state(&mut rng, &model);
            let kin = kinematics(&model, &q, &v);
            let mass: f64 = model.bodies.iter().map(|b| b.mass).sum();
            let weighted = model
                .bodies
                .iter()
                .enumerate()
                .fold(Vector3::zeros(), |acc, (i, b)| {
                    acc + world(&kin, i, &b.com) * b.mass
                })
                / mass;
            let c = center_of_mass(&model, &q);
            assert!((c - weighted).norm() < 1e-12, "{c} vs {weighted}");
            let qp = integrate_configuration(&model, &q, &v, EPS);
            let qm = integrate_configuration(&model, &q, &v, -EPS);
            let fd = (center_of_mass(&model, &qp) - center_of_mass(&model, &qm)) / (2.0 * EPS);
            let jv = com_jacobian(&model, &q) * &v;
            worst = worst.max((fd - jv).norm() / (1.0 + jv.norm()));
        }
    }
    assert!(
        worst < 1e-7,
        "COM Jacobian vs finite differences: {worst:e}"
    );
}
