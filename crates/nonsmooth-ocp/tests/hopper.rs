//! The planar hopper of seed 002 Sec. 6: its Lagrangian dynamics conserve energy up to the
//! actuator power, and its contact normal/tangent are the gradients of the foot position.

use nonsmooth_ocp::hopper::Hopper;
use nonsmooth_ocp::nlp::Real;
use nonsmooth_ocp::tf::Cls;
use num_dual::Dual64;

fn energy<T: Real>(h: &Hopper, q: &[T], v: &[T]) -> T {
    let m = h.mass_matrix(q);
    let mut e = T::from(0.0);
    for r in 0..4 {
        for c in 0..4 {
            e += v[r] * m[r][c] * v[c] * T::from(0.5);
        }
    }
    // potential: Σ m_i g z_i with the centres of mass
    let (a1, a2) = (q[2], q[2] + q[3]);
    let zt = q[1] - a1.cos() * h.s_thigh;
    let zs = q[1] - a1.cos() * h.l_thigh - a2.cos() * h.s_shank;
    e + (q[1] * h.m_hip + zt * h.m_thigh + zs * h.m_shank) * h.gravity
}

#[test]
fn energy_rate_equals_actuator_power() {
    let h = Hopper::default();
    let q = [0.3f64, 0.45, 0.4, -0.7];
    let v = [0.8f64, -0.3, 1.7, -2.2];
    let u = [5.0f64, -3.0];
    let vdot = h.f_v(&q, &v, 0.0, &u);
    // dE/dt = ∂E/∂q · v + ∂E/∂v · v̇ by dual numbers
    let mut rate = 0.0;
    for i in 0..4 {
        let mut qd: Vec<Dual64> = q.iter().map(|x| Dual64::from(*x)).collect();
        let vd: Vec<Dual64> = v.iter().map(|x| Dual64::from(*x)).collect();
        qd[i].eps = 1.0;
        rate += energy(&h, &qd, &vd).eps * v[i];
        let qd: Vec<Dual64> = q.iter().map(|x| Dual64::from(*x)).collect();
        let mut vd: Vec<Dual64> = v.iter().map(|x| Dual64::from(*x)).collect();
        vd[i].eps = 1.0;
        rate += energy(&h, &qd, &vd).eps * vdot[i];
    }
    let power = u[0] * v[2] + u[1] * v[3];
    assert!((rate - power).abs() < 1e-10, "{rate} vs {power}");
}

#[test]
fn normal_and_tangent_are_foot_gradients() {
    let h = Hopper::default();
    let q = [0.1f64, 0.38, -0.5, 0.9];
    let n = h.normal(&q);
    let b = h.tangent(&q);
    for i in 0..4 {
        let mut qd: Vec<Dual64> = q.iter().map(|x| Dual64::from(*x)).collect();
        qd[i].eps = 1.0;
        let f = h.foot(&qd);
        assert!((f[1].eps - n[i]).abs() < 1e-14);
        assert!((f[0].eps - b[i]).abs() < 1e-14);
    }
    // the nominal stance has the foot on the ground, outside the holes (width 0.5: the
    // first hole spans x ∈ [0.25, 0.75])
    let q0 = [0.0f64, 0.4, 0.0, 0.0];
    assert!(h.f_c(&q0).abs() < 1e-15);
    let holes = h.hole_values(&q0);
    assert!((holes[0] - 4.0).abs() < 1e-12 && holes[1] > 1.0 && holes[2] > 1.0);
    let q_edge = [0.25f64, 0.4, 0.0, 0.0];
    assert!((h.hole_values(&q_edge)[0] - 1.0).abs() < 1e-12);
}

/// Explicit RK4 of the smooth flight ODE q' = v, v' = M⁻¹(f_v + Bu) with u = 0.
fn rk4_flight(h: &Hopper, y0: &[f64], t_end: f64, n: usize) -> Vec<f64> {
    let f = |y: &[f64]| -> Vec<f64> {
        let a = h.f_v(&y[..4], &y[4..8], 0.0, &[0.0, 0.0]);
        y[4..8].iter().chain(&a).copied().collect()
    };
    let dt = t_end / n as f64;
    let mut y = y0.to_vec();
    for _ in 0..n {
        let add = |y: &[f64], k: &[f64], s: f64| -> Vec<f64> {
            y.iter().zip(k).map(|(y, k)| y + s * k).collect()
        };
        let k1 = f(&y);
        let k2 = f(&add(&y, &k1, dt / 2.0));
        let k3 = f(&add(&y, &k2, dt / 2.0));
        let k4 = f(&add(&y, &k3, dt));
        for i in 0..8 {
            y[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    y
}

/// Regression (issue #8, fifth session): a flight step of the hopper whose initial knee is
/// outside the OCP's path constraint q_x − l_t sin φ_hip ≥ −0.05 (knee x = −0.059) used to
/// be infeasible for the integrator's fixed-mode NLP and to end in a spurious homotopy
/// point with α₁ = 0.8 and complementarity 2e-2 to 5e-2, because the integrator imposed
/// the OCP's path constraints. The integrator now leaves them out: the mode prediction
/// solves both steps at once with exact complementarity, and every stage point is the free
/// fall (no rotation, clock = τ) of an RK4 reference.
#[test]
fn flight_step_outside_ocp_path_bounds_is_free_fall() {
    use nonsmooth_ocp::fesd::{simulate, FesdOptions};
    use nonsmooth_ocp::tf::TimeFreezing;
    use std::sync::Arc;

    let hop = Hopper::default();
    let q0 = [0.0, 0.5, 0.3, -0.6];
    assert!(hop.knee(&q0)[0] < -0.05);
    let tf = Arc::new(TimeFreezing::new(hop.clone(), 200.0).expect("time-freezing system"));
    let y0 = [0.0, 0.5, 0.3, -0.6, 0.5, 0.0, 0.0, 0.0, 0.0];
    let o = FesdOptions {
        n_s: 2,
        ..FesdOptions::default()
    };
    let sim = simulate(&tf, &y0, 0.05, 2, &|_| vec![0.0, 0.0], &o).expect("flight steps");
    assert_eq!(sim.comp_residual, 0.0);
    assert_eq!(sim.nlp_count, 1, "one fixed-mode NLP for both steps");
    assert_eq!(sim.traj.y.len(), 1 + 2 * 3 * 2);
    for ((tau, y), th) in sim.traj.tau.iter().zip(&sim.traj.y).zip(&sim.traj.theta1) {
        let r = rk4_flight(&hop, &y0[..8], *tau, 200);
        for i in 0..8 {
            assert!(
                (y[i] - r[i]).abs() < 1e-9,
                "τ = {tau}: y[{i}] = {} vs {}",
                y[i],
                r[i]
            );
        }
        // free fall: x = 0.5 τ, z = 0.5 − g τ²/2, angles and angular velocities unchanged
        assert!((r[1] - (0.5 - 0.5 * hop.gravity * tau * tau)).abs() < 1e-12);
        assert!((r[2] - 0.3).abs() < 1e-12 && r[6].abs() < 1e-12);
        assert!((y[8] - tau).abs() < 1e-9, "clock {} at τ = {tau}", y[8]);
        assert!(th.is_nan() || (th - 1.0).abs() < 1e-12);
        assert!(hop.f_c(&y[..4]) > 0.05);
    }
}
