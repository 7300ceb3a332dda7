//! Exploration driver for the hopper OCP of seed 002 Sec. 6 (settings from the environment).

use std::sync::Arc;

use nonsmooth_ocp::fesd::{solve_ocp, FesdOptions};
use nonsmooth_ocp::hopper::{self, Hopper};
use nonsmooth_ocp::tf::TimeFreezing;

fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn main() {
    let n: usize = env("N", 20);
    let n_s: usize = env("NS", 1);
    let n_fe: usize = env("NFE", 3);
    let ax: f64 = env("AX", 0.25);
    let nh: usize = env("NHOLES", 3);
    let target: f64 = env("TX", 3.0);
    let hop = Hopper {
        holes: [0.5, 1.5, 2.5][..nh].to_vec(),
        hole_axes: (ax, 0.1),
        ..Hopper::default()
    };
    let tf = Arc::new(TimeFreezing::new(hop.clone(), env("AN", 200.0)).unwrap());
    let hz = hopper::horizon(n, 2.5, target, 60.0, env("SMAX", 25.0));
    let o = FesdOptions {
        n_s,
        n_fe,
        penalty: env("PEN", 0) == 1,
        sigma0: env("S0", 1.0),
        kappa: env("KAPPA", 0.1),
        n_homotopy: env("NH", 20),
        cross_components: env("NCROSS", 1),
        ipopt_tol: env("TOL", 1e-8),
        max_iter: env("MAXIT", 1000),
        verbose: true,
        mu_adaptive: env("MUADAPT", 0) == 1,
        warm_duals: env("WARM", 1) == 1,
        elastic: env("ELASTIC", 0) == 1,
        rho_sot: env("RSOT", 0.0),
        ..FesdOptions::default()
    };
    let t0 = std::time::Instant::now();
    match solve_ocp(&tf, &hz, &o) {
        Ok(sol) => {
            for l in &sol.log {
                println!("{l:?}");
            }
            let hops = hopper::hop_count(&hop, &sol.traj.y, 1e-3);
            let clear = sol
                .traj
                .y
                .iter()
                .flat_map(|y| hop.hole_values(y))
                .fold(f64::INFINITY, f64::min)
                - 1.0;
            println!(
                "OK obj {:.4} comp {:.2e} term {:.2e} hops {hops} clear {clear:.2e} iters {} cpu {:.1}",
                sol.objective, sol.comp_residual, sol.terminal_error, sol.nlp_iterations, t0.elapsed().as_secs_f64()
            );
        }
        Err(e) => println!("ERR {e} after {:.1}s", t0.elapsed().as_secs_f64()),
    }
}
