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
