//! Identification of a friction coefficient from a recorded slide by damped Gauss–Newton on
//! forward sensitivities of the step derivatives (`nonsmooth_control::identification`;
//! docs/derivatives.md, "Used: iLQR and identification"):
//!
//! - `identify-friction`: the box of `examples/sliding_box.toml` (material `steel_on_wood`,
//!   μ = 0.3) recorded for 0.3 s at 100 Hz under `drumwright`; from μ = 0.5 the estimate is
//!   within 1 % of 0.3; then generated slides (μ uniform in [0.1, 0.9], launch speed uniform
//!   in [0.5, 3] m/s in a random horizontal direction, fixed seed), each identified from
//!   μ = 0.5, and the share recovered within 1 %.

use crate::fail;
use nonsmooth_control::identification::{identify, IdentificationOptions, Recording};
use nonsmooth_core::{Model, State};
use nonsmooth_report::table::write_csv;
use nonsmooth_report::{Experiment, ExperimentOutcome, Figure, ReportError, RunContext, Series};
use nonsmooth_sim::derivatives::Parameter;
use nonsmooth_sim::Simulator;
use rand::{Rng, SeedableRng};

/// The identification experiments.
pub fn experiments() -> Vec<Experiment> {
    vec![Experiment {
        id: "identify-friction",
        title: "Friction coefficient identified from a recorded slide",
        paper: "Gauss–Newton / Levenberg–Marquardt on forward sensitivities (Marquardt 1963)",
        run: identify_friction,
    }]
}

const SLIDING_BOX: &str = include_str!("../../../examples/sliding_box.toml");
const MATERIAL: &str = "steel_on_wood";
const STEPPER: &str = "drumwright";
const DT: f64 = 0.01;
const DURATION: f64 = 0.3;
const GUESS: f64 = 0.5;

/// The slide of `model` with the friction of `MATERIAL` set to `mu`, from `initial`.
fn record(model: &Model, mu: f64, initial: &State, id: &str) -> Result<Recording, ReportError> {
    let mut truth = model.clone();
    for m in truth.materials.iter_mut().filter(|m| m.name == MATERIAL) {
        m.friction = mu;
    }
    let mut sim = Simulator::new(truth, STEPPER, DT).map_err(|e| fail(id, e))?;
    let steps = (DURATION / DT).round() as usize;
    Recording::simulate(&mut sim, initial, vec![vec![]; steps]).map_err(|e| fail(id, e))
}

fn identify_friction(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
    let id = "identify-friction";
    let model = Model::from_toml_str(SLIDING_BOX, Some("examples/sliding_box.toml"))
        .map_err(|e| fail(id, e))?;
    let parameter = Parameter::parse(&format!("friction:{MATERIAL}")).map_err(|e| fail(id, e))?;
    let truth = parameter.value(&model).map_err(|e| fail(id, e))?;
    let options = IdentificationOptions::default();

    // The slide of the model file.
    let recording = record(&model, truth, &model.initial_state, id)?;
    let result = identify(
        &model,
        STEPPER,
        DT,
        &recording,
        std::slice::from_ref(&parameter),
        &[GUESS],
        &options,
    )
    .map_err(|e| fail(id, e))?;
    let estimate = result.estimate.first().copied().unwrap_or(f64::NAN);
    out.metric("true_friction", truth);
    out.metric("estimated_friction", estimate);
    out.metric("relative_error", (estimate - truth).abs() / truth);
    out.metric("iterations", result.iterations as f64);
    out.metric("converged", if result.converged { 1.0 } else { 0.0 });
    out.metric("rms_residual", result.rms_residual);
    out.metric("wall_time_s", result.wall_time_s);
    out.metric("derivative_calls", result.derivative_calls as f64);
    out.metric("implicit_derivatives", result.implicit_derivatives as f64);
    out.expect(
        "relative_error",
        0.0,
        0.01,
        "μ recovered within 1 % from μ = 0.5",
    );
    let line = format!(
        "sliding_box.toml: μ = {truth} recovered as {estimate:.8} from {GUESS} in {} \
         iterations, {:.3} s ({} step derivatives)",
        result.iterations, result.wall_time_s, result.derivative_calls
    );
    (ctx.progress)(&line);
    out.notes.push(line);
    let rows: Vec<Vec<f64>> = result
        .history
        .iter()
        .enumerate()
        .map(|(k, it)| {
            vec![
                k as f64,
                it.estimate.first().copied().unwrap_or(f64::NAN),
                it.cost,
            ]
        })
        .collect();
    write_csv(
        &ctx.path("identification_history.csv"),
        &["accepted_iteration", "friction", "cost"].map(String::from),
        &rows,
    )?;
    out.file("identification_history.csv");

    // Generated slides.
    let trials = if ctx.quick { 20 } else { 100 };
    (ctx.progress)(&format!("{trials} generated slides"));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2024);
    let mut rows = Vec::with_capacity(trials);
    let mut recovered = 0;
    let mut worst: f64 = 0.0;
    let mut time = 0.0;
    for trial in 0..trials {
        let mu = rng.gen_range(0.1..0.9);
        let speed = rng.gen_range(0.5..3.0);
        let heading: f64 = rng.gen_range(0.0..std::f64::consts::TAU);
        let mut initial = model.initial_state.clone();
        initial.v[0] = speed * heading.cos();
        initial.v[1] = speed * heading.sin();
        let recording = record(&model, mu, &initial, id)?;
        let (estimate, iterations, converged) = match identify(
            &model,
            STEPPER,
            DT,
            &recording,
            std::slice::from_ref(&parameter),
            &[GUESS],
            &options,
        ) {
            Ok(r) => {
                time += r.wall_time_s;
                (
                    r.estimate.first().copied().unwrap_or(f64::NAN),
                    r.iterations,
                    r.converged,
                )
            }
            Err(e) => {
                out.notes.push(format!("slide {trial} (μ = {mu:.4}): {e}"));
                (f64::NAN, 0, false)
            }
        };
        let error = (estimate - mu).abs() / mu;
        if error < 0.01 {
            recovered += 1;
        }
        worst = worst.max(if error.is_finite() {
            error
        } else {
            f64::INFINITY
        });
        rows.push(vec![
            trial as f64,
            mu,
            speed,
            heading,
            estimate,
            error,
            iterations as f64,
            if converged { 1.0 } else { 0.0 },
        ]);
    }
    let success_rate = f64::from(recovered) / trials as f64;
    out.metric("generated_slides", trials as f64);
    out.metric("generated_success_rate", success_rate);
    out.metric("generated_worst_relative_error", worst);
    out.metric("generated_mean_time_s", time / trials as f64);
    out.expect(
        "generated_success_rate",
        1.0,
        0.05,
        "at least 95 % of generated slides recovered within 1 %",
    );
    let line = format!(
        "{recovered}/{trials} generated slides recovered within 1 % (worst relative error \
         {worst:.2e}, {:.3} s per identification)",
        time / trials as f64
    );
    (ctx.progress)(&line);
    out.notes.push(line);
    crate::print_checks(ctx, out);
    write_csv(
        &ctx.path("identification_generated.csv"),
        &[
            "trial",
            "true_friction",
            "launch_speed",
            "heading",
            "estimated_friction",
            "relative_error",
            "iterations",
            "converged",
        ]
        .map(String::from),
        &rows,
    )?;
    out.file("identification_generated.csv");
    Figure::new(
        "Friction identified from generated slides",
        "true μ",
        "estimated μ",
    )
    .with(Series::scatter(
        "Gauss–Newton from μ = 0.5",
        rows.iter().map(|r| (r[1], r[4])).collect(),
    ))
    .with(Series::line(
        "estimate = truth",
        vec![(0.1, 0.1), (0.9, 0.9)],
    ))
    .write_svg(&ctx.path("identification.svg"))?;
    out.figure("identification.svg");
    Ok(())
}
