//! FESD integrator on the time-freezing particle (Nurkanović et al. Ex. 1–4) against the analytic
//! solution (E1, E2 of docs/decisions/002-time-freezing.md).

use crate::common;

use std::sync::Arc;

use common::G;
use nonsmooth_ocp::fesd::{simulate, Dcs, FesdOptions, Scheme};
use nonsmooth_ocp::time_freezing::TimeFreezing;

/// The guiding particle of `examples/particle.toml` with clock-affine forces, a_n = g.
fn particle(mu: Option<f64>) -> Arc<TimeFreezing> {
    Arc::new(TimeFreezing::new(common::guided_particle(mu), G).unwrap())
}

/// (u_x, u_y, r_x, r_y): 7 N horizontally, and from τ = 2 (t = 1) the vertical force
/// 2g (t − 1).
fn controls(step_len: f64) -> impl Fn(usize) -> Vec<f64> {
    move |k| {
        if (k as f64) * step_len >= 2.0 - 1e-12 {
            vec![7.0, -2.0 * G, 0.0, 2.0 * G]
        } else {
            vec![7.0, 0.0, 0.0, 0.0]
        }
    }
}

/// Runs the particle of Ex. 1–3 with `o` and checks the analytic end state to `tol`, the
/// switches `jump_end` (whether the end of the frozen jump is required too) on element
/// boundaries and the exact complementarity.
fn check_particle(o: &FesdOptions, tol: f64, jump_end: bool) {
    let tf = particle(None);
    let r = simulate(
        &tf,
        &[0.0, 1.0, 0.0, 0.0, 0.0],
        0.25,
        14,
        &controls(0.25),
        o,
    )
    .unwrap();
    let y = r.traj.y.last().unwrap();
    let exact = [17.71875, 1.37953125 * 1.0, 15.75, 5.518125, 2.25];
    let q2 = G * 0.75f64.powi(3) / 3.0;
    let v2 = G * 0.75f64.powi(2);
    let exact = [exact[0], q2, exact[2], v2, exact[4]];
    eprintln!(
        "{y:?} vs {exact:?}; iters {} nlps {} cpu {}",
        r.nlp_iterations, r.nlp_count, r.cpu_seconds
    );
    // the impact, the end of the jump and the lift-off fall on element boundaries
    let ts = (2.0 / G).sqrt();
    for sw in [ts, 2.0 * ts, 2.75] {
        if !jump_end && sw == 2.0 * ts {
            continue;
        }
        let d = r
            .boundaries
            .iter()
            .map(|b| (b - sw).abs())
            .fold(f64::INFINITY, f64::min);
        assert!(d < 1e-5, "switch {sw} missed by {d}");
    }
    assert!(r.comp_residual < 1e-9);
    for (a, b) in y.iter().zip(exact) {
        assert!((a - b).abs() < tol, "{a} vs {b}");
    }
    // no penetration while frozen or sliding beyond the end-state tolerance (the relaxed
    // solution has ≈ 3e-6)
    let lowest = r.traj.y.iter().map(|y| y[1]).fold(f64::INFINITY, f64::min);
    assert!(lowest > -tol, "penetration {lowest}");
}

#[test]
fn particle_matches_analytic_solution() {
    // 6 elements per step of 0.25: the O(h⁵) error of the non-polynomial part t ≥ 1 is
    // then < 1e-8 (E1 of docs/decisions/002-time-freezing.md: 1e-8 with n_s = 3)
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_fe = 6;
        o
    };
    check_particle(&o, 1e-8, true);
}

#[test]
fn particle_matches_analytic_solution_gauss_legendre() {
    // Gauss–Legendre n_s = 3 (order 6) with the end-point multipliers in the cross
    // complementarity: impact and lift-off on element boundaries and the end state to
    // 1e-9. The end of the frozen jump (nᵀv reaches 0 and stays there) need not fall on a
    // boundary: no stage sits at the element end, so the α-bias argument of Radau IIA does
    // not apply; the jump is linear in τ, so the state stays exact anyway.
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_fe = 6;
        o.discretization.scheme = Scheme::GaussLegendre;
        o
    };
    check_particle(&o, 1e-9, false);
}

#[test]
fn bouncing_ball_comes_to_rest() {
    let a_n = 100.0;
    let tf = Arc::new(TimeFreezing::new(common::falling_point(), a_n).unwrap());
    let ts = (2.0 / G).sqrt();
    let horizon = ts + (2.0 * G).sqrt() / a_n + (1.0 - ts) * (a_n + G) / a_n;
    let r = simulate(
        &tf,
        &[1.0, 0.0, 0.0],
        horizon / 20.0,
        20,
        &|_| vec![],
        &FesdOptions::default(),
    )
    .unwrap();
    let y = r.traj.y.last().unwrap();
    eprintln!(
        "ball end {y:?} iters {} nlps {} cpu {}",
        r.nlp_iterations, r.nlp_count, r.cpu_seconds
    );
    assert!(y[0].abs() < 1e-10 && y[1].abs() < 1e-10 && (y[2] - 1.0).abs() < 1e-9);
}

/// Elastic auxiliary dynamics (restitution e; docs/decisions/002-time-freezing.md, errata and
/// conventions): a ball dropped from h bounces back to e²·h; the clock is frozen during the impact.
#[test]
fn elastic_ball_bounces_to_e_squared_h() {
    let (e, h, tau_j) = (0.5, 1.0, 0.1);
    let point = common::falling_point();
    assert!(TimeFreezing::elastic(point.clone(), 1.5, tau_j).is_err());
    let tf = Arc::new(TimeFreezing::elastic(point, e, tau_j).unwrap());
    let t_fall = (2.0 * h / G).sqrt();
    // to just before the apex of the rebound
    let tau_end = t_fall + tau_j + 0.9 * e * t_fall;
    let n = 16;
    let r = simulate(
        &tf,
        &[h, 0.0, 0.0],
        tau_end / n as f64,
        n,
        &|_| vec![],
        &FesdOptions::default(),
    )
    .unwrap();
    let y = r.traj.y.last().unwrap();
    let apex = y[0] + y[1] * y[1] / (2.0 * G);
    eprintln!("end {y:?}, apex {apex}, iterations {}", r.nlp_iterations);
    assert!(y[0] > 0.0 && y[1] > 0.0, "rising after the bounce: {y:?}");
    assert!((apex - e * e * h).abs() < 1e-5, "apex {apex}");
    // the clock only runs outside the obstacle: t = t_fall + 0.9 e t_fall
    assert!(
        (y[2] - (1.0 + 0.9 * e) * t_fall).abs() < 1e-5,
        "clock {}",
        y[2]
    );
}

#[test]
fn particle_matches_analytic_solution_stewart() {
    // Stewart's reformulation (θ per sign-vector region, g − λ − μ𝟙 = 0, θ ⊥ λ with cross
    // complementarity) reproduces E1 (docs/decisions/002-time-freezing.md) with every switch on an
    // element boundary and exact complementarity. Its lift-off time comes out of the homotopy to a
    // few 1e-8 s (the step representation's to < 1e-9), and q₂(3.5) = g (3.5 − t_lift)³/3 moves by
    // g·0.75² ≈ 5.5 m per second of lift-off error: hence 1e-6 here, 1e-8 there.
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_fe = 6;
        o.discretization.dcs = Dcs::Stewart;
        o
    };
    check_particle(&o, 1e-6, true);
}
