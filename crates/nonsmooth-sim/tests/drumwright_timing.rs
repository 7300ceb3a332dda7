//! Time per step of the `drumwright` stepper with the one program (default) and with the
//! staged programs, on the toppling 100-sphere stack (h = 10 ms), `examples/mjcf/quadruped.xml`
//! (h = 5 ms) and `examples/quadruped.toml` (h = 10 ms), with the recoveries of a run
//! (unconverged steps, fallbacks, halvings). Ignored by default (it measures, it checks
//! nothing but that the runs complete); run in release:
//!
//! ```sh
//! cargo test --release --workspace --features nonsmooth-solvers/sdp --test drumwright_timing \
//!     -- --ignored --nocapture
//! ```
//!
//! `NONSMOOTH_TIMING_SECONDS` (default 5) sets the simulated time of each run,
//! `NONSMOOTH_TIMING_STAGED_SECONDS` (default 0.5) that of the staged run on the toppling
//! stack (the staged programs need about a second per step there).

#[path = "../../nonsmooth-experiments/src/scenes.rs"]
#[allow(dead_code, unused_imports)]
mod scenes;

use nonsmooth_core::Model;
use nonsmooth_sim::drumwright::FrictionCoupling;
use nonsmooth_sim::{
    step_with_recovery, Actuation, DrumwrightOptions, DrumwrightStepper, Recoveries,
};
use std::time::Instant;

fn seconds(var: &str, default: f64) -> f64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// (ms per step, steps, recoveries, failed step) of a run of `duration` s at step `h`.
fn run(
    model: &Model,
    opts: DrumwrightOptions,
    h: f64,
    duration: f64,
) -> (f64, usize, Recoveries, Option<String>) {
    let mut st = DrumwrightStepper::new(opts);
    let mut s = model.initial_state.clone();
    let mut rec = Recoveries::default();
    let steps = (duration / h).round() as usize;
    let none = Actuation::none();
    let start = Instant::now();
    let mut done = 0;
    let mut failed = None;
    for k in 0..steps {
        match step_with_recovery(&mut st, model, &s, &none, h, &mut rec) {
            Ok(next) => s = next,
            Err(e) => {
                failed = Some(format!("step {k}: {e}"));
                break;
            }
        }
        done += 1;
    }
    let ms = 1e3 * start.elapsed().as_secs_f64() / done.max(1) as f64;
    (ms, done, rec, failed)
}

#[test]
#[ignore]
fn time_per_step_one_program_against_staged() {
    let t_one = seconds("NONSMOOTH_TIMING_SECONDS", 5.0);
    let t_staged = seconds("NONSMOOTH_TIMING_STAGED_SECONDS", 0.5);
    let mjcf =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/mjcf/quadruped.xml");
    let scenes: Vec<(&str, Model, f64)> = vec![
        (
            "toppling 100-sphere stack",
            scenes::toppling_stack(100, 1e-4, 1).unwrap(),
            0.01,
        ),
        (
            "mjcf/quadruped.xml",
            Model::from_file(&mjcf).unwrap(),
            0.005,
        ),
        (
            "quadruped.toml",
            Model::from_toml_str(
                include_str!("../../../examples/quadruped.toml"),
                Some("quadruped.toml"),
            )
            .unwrap(),
            0.01,
        ),
    ];
    for (name, model, h) in &scenes {
        for (label, friction, duration) in [
            (
                "one program",
                FrictionCoupling::OneProgram { rounds: 30 },
                t_one,
            ),
            (
                "staged",
                FrictionCoupling::Staged { sweeps: 100 },
                if name.starts_with("toppling") {
                    t_staged
                } else {
                    t_one
                },
            ),
        ] {
            let opts = DrumwrightOptions {
                friction,
                ..DrumwrightOptions::default()
            };
            let (ms, steps, rec, failed) = run(model, opts, *h, duration);
            println!(
                "{name:28} {label:12} h = {h}: {ms:9.3} ms/step over {steps} steps; \
                 unconverged {}, fallbacks {}, halvings {}{}",
                rec.unconverged_steps,
                rec.convex_fallbacks,
                rec.step_halving,
                failed
                    .map(|e| format!("; FAILED at {e}"))
                    .unwrap_or_default()
            );
        }
    }
}

/// `max_normal_inflation` of `drumwright-incline` (λ_n / spring value − 1 over the four
/// friction coefficients, contacts with a spring value above 1e-3 N) for both couplings.
#[test]
#[ignore]
fn incline_normal_inflation_one_program_against_staged() {
    let base = Model::from_toml_str(
        include_str!("../../../examples/drumwright_incline.toml"),
        Some("incline"),
    )
    .unwrap();
    let steps = (seconds("NONSMOOTH_TIMING_SECONDS", 1.0) / 0.01).round() as usize;
    for (label, friction) in [
        ("one program", FrictionCoupling::OneProgram { rounds: 30 }),
        ("staged", FrictionCoupling::Staged { sweeps: 100 }),
    ] {
        let mut inflation: f64 = 0.0;
        for mu in [0.0, 0.125, 0.25, 0.375] {
            let mut model = base.clone();
            for m in &mut model.materials {
                m.friction = mu;
            }
            let mut st = DrumwrightStepper::new(DrumwrightOptions {
                friction,
                ..DrumwrightOptions::default()
            });
            let mut s = model.initial_state.clone();
            for _ in 0..steps {
                s = nonsmooth_sim::Stepper::step(&mut st, &model, &s, 0.01).unwrap();
                for c in &st.last.contacts {
                    if c.spring_normal > 1e-3 {
                        inflation = inflation.max(c.normal / c.spring_normal - 1.0);
                    }
                }
            }
        }
        println!("incline {label:12}: max_normal_inflation {inflation:.3e} over {steps} steps");
    }
}
