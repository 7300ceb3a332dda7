//! FESD integrator on the time-freezing particle (seed 002 Ex. 1–4) against the analytic
//! solution of digest E1/E2.

use std::sync::Arc;

use nonsmooth_ocp::fesd::{simulate, FesdOptions};
use nonsmooth_ocp::tf::{PointMass, TimeFreezing};

const G: f64 = 9.81;

fn particle(mu: Option<f64>) -> Arc<TimeFreezing<PointMass>> {
    Arc::new(
        TimeFreezing::new(
            PointMass {
                dim: 2,
                mass: 1.0,
                gravity: G,
                mu,
            },
            G,
        )
        .unwrap(),
    )
}

fn controls(step_len: f64) -> impl Fn(usize) -> Vec<f64> {
    move |k| {
        if (k as f64) * step_len >= 2.0 - 1e-12 {
            vec![7.0, 0.0, 2.0 * G]
        } else {
            vec![7.0, 0.0, 0.0]
        }
    }
}

#[test]
fn particle_matches_analytic_solution() {
    let tf = particle(None);
    let o = FesdOptions::default();
    let r = simulate(
        &tf,
        &[0.0, 1.0, 0.0, 0.0, 0.0],
        0.25,
        14,
        &controls(0.25),
        &o,
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
        let d = r
            .boundaries
            .iter()
            .map(|b| (b - sw).abs())
            .fold(f64::INFINITY, f64::min);
        assert!(d < 1e-5, "switch {sw} missed by {d}");
    }
    assert!(r.comp_residual < 1e-9);
    // the polish leaves only the discretization error of the part t ≥ 1 (≈ 2e-7)
    for (a, b) in y.iter().zip(exact) {
        assert!((a - b).abs() < 1e-6, "{a} vs {b}");
    }
    // no penetration while frozen or sliding (the relaxed solution had ≈ 3e-6)
    assert!(r.traj.y.iter().all(|y| y[1] > -1e-10));
}

#[test]
fn bouncing_ball_comes_to_rest() {
    let a_n = 100.0;
    let pm = PointMass {
        dim: 1,
        mass: 1.0,
        gravity: G,
        mu: None,
    };
    let tf = Arc::new(TimeFreezing::new(pm, a_n).unwrap());
    let ts = (2.0 / G).sqrt();
    let horizon = ts + (2.0 * G).sqrt() / a_n + (1.0 - ts) * (a_n + G) / a_n;
    let r = simulate(
        &tf,
        &[1.0, 0.0, 0.0],
        horizon / 20.0,
        20,
        &|_| vec![0.0],
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
