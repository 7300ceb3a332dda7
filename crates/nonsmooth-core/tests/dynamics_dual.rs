//! Exact derivatives: the generic dynamics compiled with `num_dual::Dual64`, checked against
//! central finite differences, and the power balance d(T + V)/dt = vᵀ(τ + f_passive) along
//! forward dynamics evaluated exactly with dual numbers.

use crate::support;

use nalgebra::{DMatrix, DVector};
use nonsmooth_core::dynamics::{
    bias_force, forward_dynamics, integrate_configuration, kinematics, kinetic_energy, mass_matrix,
    passive_force, potential_energy, velocity_map,
};
use num_dual::Dual64;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use support::{random_state, random_vector, tree_family};

fn dual(x: &DVector<f64>, dx: &DVector<f64>) -> DVector<Dual64> {
    DVector::from_fn(x.len(), |i, _| Dual64::new(x[i], dx[i]))
}

fn re_m(m: &DMatrix<Dual64>) -> DMatrix<f64> {
    m.map(|x| x.re)
}

fn eps_m(m: &DMatrix<Dual64>) -> DMatrix<f64> {
    m.map(|x| x.eps)
}

#[test]
fn dual_bias_derivative_in_v_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let (mut worst, mut worst_re): (f64, f64) = (0.0, 0.0);
    for model in tree_family(10, 30, false) {
        let (q, v) = random_state(&mut rng, &model);
        let d = random_vector(&mut rng, model.nv());
        let qd = dual(&q, &DVector::zeros(q.len()));
        let hd = bias_force(&model, &qd, &dual(&v, &d));
        // h is quadratic in v, so a central difference is exact up to rounding.
        let delta = 1e-3;
        let fd = (bias_force(&model, &q, &(&v + &d * delta))
            - bias_force(&model, &q, &(&v - &d * delta)))
            / (2.0 * delta);
        let exact = hd.map(|x| x.eps);
        worst = worst.max((&exact - &fd).amax() / fd.amax().max(1.0));
        worst_re = worst_re.max((hd.map(|x| x.re) - bias_force(&model, &q, &v)).amax());
    }
    assert!(worst <= 1e-9, "∂h/∂v·d dual vs FD: {worst}");
    assert!(worst_re <= 1e-12, "dual real part vs f64: {worst_re}");
}

#[test]
fn dual_mass_matrix_derivative_in_q_matches_finite_differences() {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mut worst: f64 = 0.0;
    for model in tree_family(11, 30, false) {
        let (q, _) = random_state(&mut rng, &model);
        let d = random_vector(&mut rng, model.nv());
        // Tangent direction q̇ = N(q) d (keeps quaternions unit to first order).
        let dq = velocity_map(&model, &q) * &d;
        let md = mass_matrix(&model, &dual(&q, &dq));
        let delta = 1e-6;
        let mp = mass_matrix(&model, &integrate_configuration(&model, &q, &d, delta));
        let mm = mass_matrix(&model, &integrate_configuration(&model, &q, &d, -delta));
        let fd = (mp - mm) / (2.0 * delta);
        worst = worst.max((eps_m(&md) - &fd).amax() / fd.amax().max(1.0));
        assert!((re_m(&md) - mass_matrix(&model, &q)).amax() <= 1e-12);
    }
    assert!(worst <= 1e-6, "∂M/∂q·N d dual vs FD: {worst}");
}

#[test]
fn dual_point_velocity_is_time_derivative_of_position() {
    // d/dt of the world position of each body origin along q̇ = N(q) v, computed exactly with
    // duals, equals the linear velocity reported by the kinematics.
    let mut rng = ChaCha8Rng::seed_from_u64(43);
    let mut worst: f64 = 0.0;
    for model in tree_family(12, 30, false) {
        let (q, v) = random_state(&mut rng, &model);
        let dq = velocity_map(&model, &q) * &v;
        let kd = kinematics(&model, &dual(&q, &dq), &dual(&v, &DVector::zeros(v.len())));
        let kin = kinematics(&model, &q, &v);
        for b in 0..model.bodies.len() {
            let dp = kd.poses[b].translation.vector.map(|x| x.eps);
            worst = worst.max((dp - kin.linear_velocity[b]).amax());
            let da = kd.linear_velocity[b].map(|x| x.eps);
            // d/dt of the origin velocity with v̇ = 0 is the bias acceleration.
            worst = worst.max((da - kin.linear_acceleration_bias[b]).amax());
        }
    }
    assert!(worst <= 1e-12, "dual velocities/accelerations: {worst}");
}

#[test]
fn power_balance_along_forward_dynamics() {
    let mut rng = ChaCha8Rng::seed_from_u64(44);
    let mut worst: f64 = 0.0;
    let mut worst_ke: f64 = 0.0;
    for (k, model) in tree_family(13, 30, false)
        .into_iter()
        .chain(tree_family(14, 15, true))
        .enumerate()
    {
        let (q, v) = random_state(&mut rng, &model);
        let tau = if k % 2 == 0 {
            DVector::zeros(model.nv())
        } else {
            random_vector(&mut rng, model.nv())
        };
        let vdot = forward_dynamics(&model, &q, &v, &tau).expect("valid model");
        let dq = velocity_map(&model, &q) * &v;
        let (qd, vd) = (dual(&q, &dq), dual(&v, &vdot));
        let energy = kinetic_energy(&model, &qd, &vd) + potential_energy(&model, &qd);
        let power = v.dot(&(&tau + passive_force(&model, &q, &v)));
        worst = worst.max((energy.eps - power).abs() / power.abs().max(1.0));
        let m = mass_matrix(&model, &q);
        worst_ke = worst_ke.max((kinetic_energy(&model, &q, &v) - 0.5 * v.dot(&(m * &v))).abs());
    }
    assert!(worst <= 1e-10, "d(T+V)/dt − vᵀ(τ+f_p): {worst}");
    assert!(worst_ke <= 1e-12, "T vs ½vᵀMv: {worst_ke}");
}
