//! Time and Newton iterations per step of the `drumwright` stepper with the one program
//! (default: the Coulomb problem in one semismooth Newton solve), with its fixed point on
//! the friction bounds alone and with the staged programs, on the toppling 100-sphere stack (h = 10 ms), `examples/mjcf/quadruped.xml`
//! (h = 5 ms) and `examples/quadruped.toml` (h = 10 ms), with the recoveries of a run
//! (unconverged steps, fallbacks, halvings), and the incline's normal-force inflation under
//! both couplings:
//!
//! ```sh
//! cargo bench --workspace --features nonsmooth-solvers/sdp --bench contact_stage
//! ```
//!
//! `NONSMOOTH_TIMING_SECONDS` (default 5) sets the simulated time of each run,
//! `NONSMOOTH_TIMING_STAGED_SECONDS` (default 0.5) that of the staged run on the toppling
//! stack (the staged programs need about a second per step there).

use nonsmooth_sim::scenes;

use nonsmooth_core::Model;
use nonsmooth_sim::drumwright::{FrictionCoupling, StepTotals};
use nonsmooth_sim::{Actuation, DrumwrightOptions, DrumwrightStepper, Recoveries, Simulator};
use std::time::Instant;

fn seconds(var: &str, default: f64) -> f64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// What a run measured.
struct RunResult {
    ms_per_step: f64,
    steps: usize,
    recoveries: Recoveries,
    totals: StepTotals,
    failed: Option<String>,
}

/// A run of `duration` s at step `h`, timed.
fn run(model: &Model, opts: DrumwrightOptions, h: f64, duration: f64) -> RunResult {
    let steps = (duration / h).round() as usize;
    let mut stepper = DrumwrightStepper::new(opts);
    let mut sim = Simulator::borrowing(model, Box::new(&mut stepper), h).expect("a valid step");
    let start = Instant::now();
    let mut done = 0;
    let mut failed = None;
    for k in 0..steps {
        if let Err(e) = sim.advance(&Actuation::none(), h) {
            failed = Some(format!("step {k}: {e}"));
            break;
        }
        done += 1;
    }
    let recoveries = sim.counters().recoveries;
    let ms_per_step = 1e3 * start.elapsed().as_secs_f64() / done.max(1) as f64;
    drop(sim);
    RunResult {
        ms_per_step,
        steps: done,
        recoveries,
        totals: stepper.totals,
        failed,
    }
}

fn main() {
    time_per_step_one_program_against_staged();
    incline_normal_inflation_one_program_against_staged();
}

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
        for (label, friction, coulomb_newton, duration) in [
            (
                "one program",
                FrictionCoupling::OneProgram { rounds: 30 },
                true,
                t_one,
            ),
            (
                "fixed point",
                FrictionCoupling::OneProgram { rounds: 30 },
                false,
                t_one,
            ),
            (
                "staged",
                FrictionCoupling::Staged { sweeps: 100 },
                true,
                if name.starts_with("toppling") {
                    t_staged
                } else {
                    t_one
                },
            ),
        ] {
            let opts = DrumwrightOptions {
                friction,
                coulomb_newton,
                ..DrumwrightOptions::default()
            };
            let r = run(model, opts, *h, duration);
            let per_step = |x: usize| x as f64 / r.totals.steps.max(1) as f64;
            println!(
                "{name:28} {label:12} h = {h}: {:9.3} ms/step over {} steps; Newton \
                 iterations {:.1} and solves {:.2} per step; unconverged {}, fallbacks {}, \
                 halvings {}{}",
                r.ms_per_step,
                r.steps,
                per_step(r.totals.newton_iterations),
                per_step(r.totals.program_rounds),
                r.recoveries.unconverged_steps,
                r.recoveries.convex_fallbacks,
                r.recoveries.step_halving,
                r.failed
                    .map(|e| format!("; FAILED at {e}"))
                    .unwrap_or_default()
            );
        }
    }
}

/// `max_normal_inflation` of `drumwright-incline` (λ_n / spring value − 1 over the four
/// friction coefficients, contacts with a spring value above 1e-3 N) for both couplings.
fn incline_normal_inflation_one_program_against_staged() {
    let base = Model::from_toml_str(
        include_str!("../../../examples/drumwright_incline.toml"),
        Some("incline"),
    )
    .unwrap();
    let steps = (seconds("NONSMOOTH_TIMING_SECONDS", 1.0) / 0.01).round() as usize;
    for (label, friction, coulomb_newton) in [
        (
            "one program",
            FrictionCoupling::OneProgram { rounds: 30 },
            true,
        ),
        (
            "fixed point",
            FrictionCoupling::OneProgram { rounds: 30 },
            false,
        ),
        ("staged", FrictionCoupling::Staged { sweeps: 100 }, true),
    ] {
        let mut inflation: f64 = 0.0;
        for mu in [0.0, 0.125, 0.25, 0.375] {
            let mut model = base.clone();
            for m in &mut model.materials {
                m.friction = mu;
            }
            let mut st = DrumwrightStepper::new(DrumwrightOptions {
                friction,
                coulomb_newton,
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
