//! Sanity check of the hopper's time-freezing model (seed 002 Sec. 6): drop the hopper with
//! u = 0 from a raised pose and print the foot height, normal/tangential foot velocity, the
//! clock and θ₁ at every stage point (landing, frozen jump, sliding on the ground).

use std::sync::Arc;

use nonsmooth_ocp::fesd::{simulate, FesdOptions};
use nonsmooth_ocp::hopper::Hopper;
use nonsmooth_ocp::tf::{Cls, TimeFreezing};

fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let hop = Hopper::default();
    let tf = Arc::new(TimeFreezing::new(hop.clone(), env("AN", 200.0))?);
    let y0 = vec![
        0.0,
        env("QZ", 0.5),
        env("PH", 0.3),
        env("PK", -0.6),
        env("VX", 0.5),
        0.0,
        0.0,
        0.0,
        0.0,
    ];
    let o = FesdOptions {
        verbose: env("VERB", 0) == 1,
        alpha0: env("ALPHA0", 0.5),
        n_s: env("NS", 2),
        cross_components: env("NCROSS", usize::MAX),
        ..FesdOptions::default()
    };
    let sim = simulate(
        &tf,
        &y0,
        env("H", 0.05),
        env("STEPS", 20),
        &|_| vec![0.0, 0.0],
        &o,
    )?;
    println!("tau t foot_z v_n v_t theta1 hip_z");
    for (tau, (y, th)) in sim
        .traj
        .tau
        .iter()
        .zip(sim.traj.y.iter().zip(&sim.traj.theta1))
    {
        let c = tf.switching(y);
        println!(
            "{tau:.4} {:.4} {:+.5} {:+.4} {:+.4} {th:.3} {:.4} fc={:+.2e}",
            y[8],
            hop.foot(y)[1],
            c[1],
            c[2],
            y[1],
            hop.f_c(&y[..4])
        );
    }
    println!(
        "comp {:.2e} nlps {} iters {}",
        sim.comp_residual, sim.nlp_count, sim.nlp_iterations
    );
    Ok(())
}
