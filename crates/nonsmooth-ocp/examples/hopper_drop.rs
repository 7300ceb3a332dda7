//! Sanity check of the hopper's time-freezing model (seed 002 Sec. 6): drop the hopper with
//! u = 0 from a raised pose and print the foot height, normal/tangential foot velocity, the
//! clock and θ₁ at every stage point (landing, frozen jump, sliding on the ground).
//! Environment: QZ, PH, PK, VX (initial state), AN, ALPHA0, NS, NFE, NCROSS, H, STEPS, VERB,
//! U0, U1 (constant torques), STAB, STABD (stance stabilization rate and depth).

use std::sync::Arc;

use nonsmooth_ocp::fesd::{build, simulate, FesdOptions, Horizon};
use nonsmooth_ocp::hopper::Hopper;
use nonsmooth_ocp::tf::{Cls, TimeFreezing};
use nonsmooth_ocp::OcpError;

fn env<T: std::str::FromStr>(k: &str, d: T) -> T {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let hop = Hopper::default();
    let mut tf = TimeFreezing::new(hop.clone(), env("AN", 200.0))?;
    if let Some(k) = std::env::var("STAB").ok().and_then(|v| v.parse().ok()) {
        tf = tf.with_stance_stabilization(k, env("STABD", 1e-3))?;
    }
    let tf = Arc::new(tf);
    let u = vec![env("U0", 0.0), env("U1", 0.0)];
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
        n_fe: env("NFE", 3),
        cross_components: env("NCROSS", usize::MAX),
        ..FesdOptions::default()
    };
    let sim = match simulate(
        &tf,
        &y0,
        env("H", 0.05),
        env("STEPS", 20),
        &|_| u.clone(),
        &o,
    ) {
        Ok(s) => s,
        Err(OcpError::HomotopyStalled {
            comp_residual, x, ..
        }) => {
            println!("stalled step at complementarity {comp_residual:.2e}:");
            print_step(&tf, &o, env("H", 0.05), &x);
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
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

/// Prints the element lengths and, per stage point, the state, c(y), α and λ of a stalled
/// single-step iterate `x` (the layout is rebuilt from a one-step horizon at x's y₀).
fn print_step(tf: &Arc<TimeFreezing<Hopper>>, o: &FesdOptions, step_len: f64, x: &[f64]) {
    let hz = Horizon {
        y0: x[..9].to_vec(),
        lam0: None,
        n_steps: 1,
        step_len,
        u_bounds: vec![(vec![0.0; 2], vec![0.0; 2])],
        s_bounds: (1.0, 1.0),
        clock: nonsmooth_ocp::fesd::Clock::Free,
        global_speed: false,
        terminal: vec![],
        y_bounds: None,
        control_weight: 0.0,
    };
    let Ok((_, layout, _)) = build(tf, &hz, o) else {
        return;
    };
    let nc = layout.dims.1;
    for (ie, e) in layout.elems.iter().enumerate() {
        println!("element {ie}: h = {:.5}", x[e.h]);
        for j in 0..e.y.len() {
            let y = &x[e.y[j]..e.y[j] + 9];
            let c = tf.switching(y);
            let f = |v: &[f64]| {
                format!(
                    "{:?}",
                    v.iter()
                        .map(|a| (a * 1e4).round() / 1e4)
                        .collect::<Vec<_>>()
                )
            };
            println!(
                "  stage {j}: q {} v {} t {:.4} c {} alpha {} lp {} ln {}",
                f(&y[..4]),
                f(&y[4..8]),
                y[8],
                f(&c),
                f(&x[e.alpha[j]..e.alpha[j] + nc]),
                f(&x[e.lp[j + 1]..e.lp[j + 1] + nc]),
                f(&x[e.ln[j + 1]..e.ln[j + 1] + nc]),
            );
        }
    }
}
