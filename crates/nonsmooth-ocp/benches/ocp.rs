//! CPU time and IPOPT iterations of the seed-002 problems: the bouncing ball (FESD
//! integrator, 20 steps × 3 elements, n_s = 3, a_n = 100), the particle OCP (Ex. 5; its
//! Gauss–Legendre variant printed once) and the hopper OCP of Sec. 6 (printed once: one
//! solve takes minutes, not a criterion sample).

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use nonsmooth_ocp::fesd::{simulate, solve_ocp, FesdOptions, Horizon, Scheme};
use nonsmooth_ocp::hopper::{self, Hopper};
use nonsmooth_ocp::tf::{PointMass, TimeFreezing};

const G: f64 = 9.81;

fn ball() -> (f64, f64, usize, f64) {
    let a_n = 100.0;
    let pm = PointMass {
        dim: 1,
        mass: 1.0,
        gravity: G,
        mu: None,
    };
    let tf = Arc::new(TimeFreezing::new(pm, a_n).expect("valid a_n"));
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
    .expect("ball simulation");
    let y = r.traj.y.last().cloned().unwrap_or_default();
    (y[0].abs(), y[1].abs(), r.nlp_iterations, r.cpu_seconds)
}

fn particle_ocp() -> (f64, usize, f64) {
    particle_ocp_with(Scheme::RadauIIA)
}

fn particle_ocp_with(scheme: Scheme) -> (f64, usize, f64) {
    let pm = PointMass {
        dim: 2,
        mass: 1.0,
        gravity: G,
        mu: None,
    };
    let tf = Arc::new(TimeFreezing::new(pm, G).expect("valid a_n"));
    let n = 20;
    let hz = Horizon {
        y0: vec![0.0, 1.0, 0.0, 0.0, 0.0],
        lam0: None,
        n_steps: n,
        step_len: 0.1,
        u_bounds: vec![(vec![-10.0, 0.0, 0.0], vec![10.0, 0.0, 0.0]); n],
        s_bounds: (1.0, 10.0),
        clock: nonsmooth_ocp::fesd::Clock::Stagewise(2.0),
        global_speed: false,
        terminal: vec![(0, 3.0), (1, 0.0), (2, 0.0), (3, 0.0)],
        y_bounds: None,
        control_weight: 0.1,
    };
    let o = {
        let mut o = FesdOptions::default();
        o.discretization.n_s = 2;
        o.discretization.scheme = scheme;
        o
    };
    let s = solve_ocp(&tf, &hz, &o).expect("particle OCP");
    (s.objective, s.nlp_iterations, s.cpu_seconds)
}

fn hopper_ocp() {
    let tf = Arc::new(TimeFreezing::new(Hopper::default(), 200.0).expect("valid a_n"));
    let hz = hopper::horizon(20, 2.5, 3.0, 60.0, 5.0);
    let o = hopper::paper_options();
    let start = nonsmooth_ocp::ipopt::thread_cpu_seconds();
    match solve_ocp(&tf, &hz, &o) {
        Ok(s) => println!(
            "hopper OCP: objective {:.4}, {} IPOPT iterations, {:.2} s",
            s.objective, s.nlp_iterations, s.cpu_seconds
        ),
        Err(e) => {
            // the stalled homotopy's log: NLPs and IPOPT iterations spent before the stall
            let (nlps, iters) = match &e {
                nonsmooth_ocp::OcpError::HomotopyStalled { log, .. } => {
                    (log.len(), log.iter().map(|l| l.iterations).sum::<usize>())
                }
                _ => (0, 0),
            };
            println!(
                "hopper OCP: failed after {:.2} s CPU ({nlps} NLPs, {iters} IPOPT iterations): {e}",
                nonsmooth_ocp::ipopt::thread_cpu_seconds() - start
            )
        }
    }
}

fn bench(c: &mut Criterion) {
    if std::env::var_os("NONSMOOTH_BENCH_HOPPER").is_some() {
        hopper_ocp();
    }
    let (eq, ev, it, cpu) = ball();
    println!(
        "bouncing ball: |q| = {eq:.2e}, |v| = {ev:.2e}, {it} IPOPT iterations, {cpu:.3} s CPU"
    );
    let (obj, it, cpu) = particle_ocp();
    println!("particle OCP: objective {obj:.6}, {it} IPOPT iterations, {cpu:.3} s CPU");
    let (obj, it, cpu) = particle_ocp_with(Scheme::GaussLegendre);
    println!(
        "particle OCP (Gauss-Legendre): objective {obj:.6}, {it} IPOPT iterations, {cpu:.3} s CPU"
    );
    let mut g = c.benchmark_group("seed002");
    g.sample_size(10);
    g.bench_function("bouncing_ball", |b| b.iter(ball));
    g.bench_function("particle_ocp", |b| b.iter(particle_ocp));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
