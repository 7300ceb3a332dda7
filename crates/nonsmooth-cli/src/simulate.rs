//! `nonsmooth simulate MODEL --dt H --duration T --out DIR [--html] [--derivatives]`, and
//! with `--stepper all` one comparison of every stepper on the model (module [`all`] below).

use crate::step_derivatives::{self, DerivativesReport};
use crate::CliError;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use nonsmooth_core::Model;
use nonsmooth_report::table::{write_csv, write_json};
use nonsmooth_sim::{SimError, SimOptions, Trajectory};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct SimulateArgs {
    /// Model file (.toml, .urdf or MJCF .xml).
    pub model: PathBuf,
    /// Step size h in seconds (default: the model's `[simulation] dt`, else 1e-3).
    #[arg(long)]
    pub dt: Option<f64>,
    /// Simulated duration in seconds (default: the model's `[simulation] duration`, else 1).
    #[arg(long)]
    pub duration: Option<f64>,
    /// Output directory (created if missing).
    #[arg(long, default_value = "out/simulate")]
    pub out: PathBuf,
    /// Time-stepping scheme (default: the model's `[simulation] stepper`, else the one the
    /// model's contents call for: rigid contacts or limits → anitescu-potra, constraints or
    /// stiff compliance → drumwright, resolved springs → penalty-symplectic, smooth → rk45;
    /// printed and in summary.json); `all` runs every stepper on the model and writes one comparison
    /// (`OUT/<stepper>/trajectory.csv`, comparison.csv, comparison.json, with --html one
    /// viewer.html overlaying the runs).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(stepper_choices()))]
    pub stepper: Option<String>,
    /// Record every k-th step (default: about 5000 rows in all).
    #[arg(long)]
    pub record_every: Option<usize>,
    /// Also write viewer.html: an offline page that plays the motion (bodies and their
    /// collider shapes, a time slider and a plot of a chosen coordinate).
    #[arg(long)]
    pub html: bool,
    /// Also write derivatives.jsonl: the derivatives A = ∂(q₁, v₁)/∂(q₀, v₀) and
    /// B = ∂(q₁, v₁)/∂u of every N-th step (--derivatives-every), one JSON line per step
    /// with the contacts' modes (implicit differentiation where the stepper has a step
    /// problem, else central differences of whole steps), from a second pass over the run.
    #[arg(long)]
    pub derivatives: bool,
    /// With --derivatives: differentiate every N-th step (N ≥ 1).
    #[arg(
        long,
        value_name = "N",
        default_value = "10",
        value_parser = step_derivatives::parse_every,
        requires = "derivatives"
    )]
    pub derivatives_every: NonZeroUsize,
    /// --quiet (no progress bar, no summary line) / --json (print summary.json).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
}

/// The value of `--stepper all`.
const ALL: &str = "all";

/// What `--stepper` accepts: every stepper name, then `all`.
fn stepper_choices() -> Vec<&'static str> {
    let mut names = nonsmooth_sim::STEPPER_NAMES.to_vec();
    names.push(ALL);
    names
}

/// The step size, duration and recording of a run of `model` under `args`
/// ([`nonsmooth_sim::RunSettings`], as Python's `simulate` and `Simulator` resolve them), its
/// number of steps and its stepper.
fn run_options(
    args: &SimulateArgs,
    model: &Model,
) -> Result<(SimOptions, usize, nonsmooth_sim::StepperChoice), CliError> {
    let settings =
        nonsmooth_sim::RunSettings::resolve(model, args.stepper.as_deref(), args.dt, args.duration);
    let probe = SimOptions {
        dt: settings.dt,
        duration: settings.duration,
        record_every: 1,
    };
    let steps = probe.steps()?;
    let options = SimOptions {
        record_every: args.record_every.unwrap_or((steps / 5000).max(1)),
        ..probe
    };
    options.steps()?;
    Ok((options, steps, settings.stepper))
}

/// One run of `model` from its initial state with `stepper` through the run loop
/// ([`nonsmooth_sim::run_simulation`]; with `--html` also recording the contact impulses for
/// the viewer's force arrows), with a progress bar on a terminal: the run (a failed step's
/// error beside the states before it) and its wall time in s.
fn run_stepper(
    args: &SimulateArgs,
    model: &Model,
    stepper: &mut dyn nonsmooth_sim::Stepper,
    options: &SimOptions,
    steps: usize,
) -> (Result<nonsmooth_sim::Run, SimError>, f64) {
    let bar = if args.output.quiet
        || args.output.json
        || steps < 2000
        || !std::io::IsTerminal::is_terminal(&std::io::stderr())
    {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::new(steps as u64);
        if let Ok(style) =
            ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} steps ({eta} left)")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(format!("simulating {} ({})", model.name, stepper.name()));
        bar
    };
    let start = Instant::now();
    let stride = (steps / 200).max(1);
    let result = nonsmooth_sim::run_simulation(
        model,
        stepper,
        &model.initial_state,
        options,
        args.html,
        &mut |done, _| {
            if done % stride == 0 {
                bar.set_position(done as u64);
            }
        },
    );
    bar.finish_and_clear();
    (result, start.elapsed().as_secs_f64())
}

pub fn run(args: &SimulateArgs) -> Result<ExitCode, CliError> {
    let model = Model::from_file(&args.model)?;
    let (options, steps, choice) = run_options(args, &model)?;
    let stepper_name = choice.name.clone();
    std::fs::create_dir_all(&args.out)
        .map_err(|e| nonsmooth_report::ReportError::io(&args.out, e))?;
    if stepper_name == ALL {
        if args.derivatives {
            return Err(CliError::Usage(
                "--derivatives differentiates the steps of one stepper's run; name a stepper \
                 instead of `--stepper all`"
                    .to_string(),
            ));
        }
        return all::run(args, &model, &options, steps);
    }
    let mut stepper = nonsmooth_sim::stepper_by_name(&stepper_name)?;
    let warnings = nonsmooth_sim::model_warnings(&model, stepper.as_ref());
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    if choice.source == "default" && !args.output.quiet && !args.output.json {
        eprintln!("stepper: {}", choice.describe());
    }
    let (result, wall) = run_stepper(args, &model, stepper.as_mut(), &options, steps);
    let (dt, duration) = (options.dt, options.duration);
    let traj = match result? {
        nonsmooth_sim::Run {
            trajectory,
            failure: None,
        } => trajectory,
        nonsmooth_sim::Run {
            trajectory: partial,
            failure: Some(err),
        } => {
            // Keep what was computed before the failing step, then report the failure.
            write_outputs(
                &model, &partial, args, &options, wall, &warnings, &choice, None,
            )?;
            eprintln!(
                "wrote the {} states computed before the failure to {}",
                partial.t.len(),
                args.out.display()
            );
            return Err(err.into());
        }
    };
    let derivatives = args.derivatives.then(|| {
        step_derivatives::write(
            &model,
            &stepper_name,
            &options,
            steps,
            args.derivatives_every,
            &args.out,
        )
    });
    let report = match &derivatives {
        Some(Ok(report)) => Some(report),
        _ => None,
    };
    let summary = write_outputs(
        &model, &traj, args, &options, wall, &warnings, &choice, report,
    )?;
    // The run's outputs are written; then a failed derivatives pass is reported.
    let report = derivatives.transpose()?;
    if args.output.json {
        outln!("{summary}");
        return Ok(ExitCode::SUCCESS);
    }
    if args.output.quiet {
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "simulated `{}` for {} s ({} steps of {} s, {}) in {:.3} s → {}",
        model.name,
        duration,
        traj.steps,
        dt,
        traj.stepper,
        wall,
        args.out.display()
    );
    if let Some(report) = report {
        outln!("{}", report.describe());
    }
    Ok(ExitCode::SUCCESS)
}

/// The least rise (m) of a body's height from its lowest point that counts as an apex in
/// summary.json (resting bodies' round-off jitter does not).
const APEX_PROMINENCE: f64 = 1e-3;
/// Apexes recorded per body in summary.json.
const MAX_APEXES: usize = 20;

#[allow(clippy::too_many_arguments)]
fn write_outputs(
    model: &Model,
    traj: &Trajectory,
    args: &SimulateArgs,
    options: &SimOptions,
    wall: f64,
    warnings: &[String],
    choice: &nonsmooth_sim::StepperChoice,
    derivatives: Option<&DerivativesReport>,
) -> Result<serde_json::Value, CliError> {
    let out = args.out.as_path();
    write_csv(&out.join("trajectory.csv"), &traj.header(), &traj.rows())?;
    let mut files = vec!["trajectory.csv", "summary.json", "trajectory.svg"];
    if args.html {
        if traj.t.is_empty() {
            eprintln!("warning: no recorded states; viewer.html not written");
        } else {
            let title = format!("{} ({})", model.name, traj.stepper);
            let scene = nonsmooth_figures::viewer::scene(model, traj, title);
            nonsmooth_report::viewer::write_viewer_html(&out.join("viewer.html"), &scene)?;
            files.push("viewer.html");
        }
    }
    if derivatives.is_some() {
        files.push(step_derivatives::FILE_NAME);
    }
    let last = traj.final_state();
    let mut summary = serde_json::json!({
        "model": model.name,
        "model_file": args.model.display().to_string(),
        "stepper": traj.stepper,
        "stepper_choice": { "source": choice.source, "reason": choice.reason },
        "dt": options.dt,
        "duration": options.duration,
        "steps": traj.steps,
        "recorded_states": traj.t.len(),
        "recoveries": traj.recoveries,
        "warnings": warnings,
        "wall_time_s": wall,
        "q_names": traj.q_names,
        "v_names": traj.v_names,
        "final_t": last.as_ref().map(|s| s.t),
        "final_q": last.as_ref().map(|s| s.q.as_slice().to_vec()),
        "final_v": last.as_ref().map(|s| s.v.as_slice().to_vec()),
        // heights of each moving body's origin at its apexes (a bounce's fall by e²)
        "apexes": traj.apexes(model, APEX_PROMINENCE, MAX_APEXES),
        "files": files,
    });
    if let (Some(report), Some(fields)) = (derivatives, summary.as_object_mut()) {
        fields.insert("derivatives".to_string(), report.to_json());
    }
    write_json(&out.join("summary.json"), &summary)?;
    // coordinates and velocities in panels of one unit each, named after the coordinates
    nonsmooth_figures::time_series::trajectory_figure(
        model,
        format!(
            "{}: coordinates and velocities over time ({})",
            model.name, traj.stepper
        ),
        &traj.t,
        &traj.q,
        &traj.v,
    )
    .write_svg(&out.join("trajectory.svg"))?;
    Ok(summary)
}

/// `nonsmooth simulate MODEL --stepper all`: every stepper of
/// [`nonsmooth_sim::STEPPER_NAMES`] on the same scene through the same run loop, compared.
mod all {
    use super::*;
    use nonsmooth_core::dynamics::{kinetic_energy, potential_energy};
    use nonsmooth_core::{ContactSnapshot, State};
    use nonsmooth_report::table::write_csv_cells;
    use nonsmooth_report::viewer::ViewerScene;
    use nonsmooth_sim::Recoveries;

    /// How one stepper's run ended.
    enum Outcome {
        Completed,
        /// A step failed; the states before it are kept.
        Failed(String),
        /// The stepper rejected the model (a typed `Unsupported` or `InvalidOption`).
        NotApplicable(String),
    }

    impl Outcome {
        fn label(&self) -> &'static str {
            match self {
                Outcome::Completed => "completed",
                Outcome::Failed(_) => "failed",
                Outcome::NotApplicable(_) => "not applicable",
            }
        }

        fn detail(&self) -> &str {
            match self {
                Outcome::Completed => "",
                Outcome::Failed(e) | Outcome::NotApplicable(e) => e,
            }
        }
    }

    /// One stepper's run and what is measured on it.
    struct Run {
        stepper: &'static str,
        outcome: Outcome,
        wall: f64,
        /// Steps completed.
        steps: usize,
        /// The recorded states (up to the failure for a failed run); `None` when not
        /// applicable.
        traj: Option<Trajectory>,
        recoveries: Recoveries,
        warnings: Vec<String>,
        /// max |E(t) − E(0)| over the recorded states (J).
        energy_drift: Option<f64>,
        /// Most negative contact gap over the recorded states (m); `None` without contacts.
        min_gap: Option<f64>,
    }

    impl Run {
        /// Largest penetration (m): the most negative gap, 0 without any.
        fn penetration(&self) -> Option<f64> {
            self.traj
                .as_ref()
                .map(|_| self.min_gap.map_or(0.0, |g| (-g).max(0.0)))
        }
    }

    fn states(traj: &Trajectory) -> impl Iterator<Item = State> + '_ {
        traj.t
            .iter()
            .zip(traj.q.iter().zip(&traj.v))
            .map(|(t, (q, v))| State {
                q: q.clone(),
                v: v.clone(),
                t: *t,
            })
    }

    /// max |E(t) − E(0)| with E = kinetic + gravitational potential energy (core's).
    fn energy_drift(model: &Model, traj: &Trajectory) -> Option<f64> {
        let energy = |s: &State| kinetic_energy(model, &s.q, &s.v) + potential_energy(model, &s.q);
        let mut all = states(traj).map(|s| energy(&s));
        let e0 = all.next()?;
        Some(all.fold(0.0, |m: f64, e| {
            let d = (e - e0).abs();
            if d.is_nan() {
                f64::NAN
            } else {
                m.max(d)
            }
        }))
    }

    /// The most negative contact gap over the recorded states (a [`ContactSnapshot`] of
    /// each); `None` when no state has a contact.
    fn min_gap(model: &Model, traj: &Trajectory) -> Option<f64> {
        states(traj)
            .filter_map(|s| ContactSnapshot::from_state(model, &s).ok()?.minimal_gap())
            .reduce(f64::min)
    }

    /// Runs `name` on `model` and measures it.
    fn run_one(
        args: &SimulateArgs,
        model: &Model,
        name: &'static str,
        options: &SimOptions,
        steps: usize,
    ) -> Run {
        let mut run = Run {
            stepper: name,
            outcome: Outcome::Completed,
            wall: 0.0,
            steps: 0,
            traj: None,
            recoveries: Recoveries::default(),
            warnings: Vec::new(),
            energy_drift: None,
            min_gap: None,
        };
        let mut stepper = match nonsmooth_sim::stepper_by_name(name) {
            Ok(s) => s,
            Err(e) => {
                run.outcome = Outcome::Failed(e.to_string());
                return run;
            }
        };
        run.warnings = nonsmooth_sim::model_warnings(model, stepper.as_ref());
        let (result, wall) = run_stepper(args, model, stepper.as_mut(), options, steps);
        run.wall = wall;
        let rejects = |e: &SimError| {
            matches!(
                e,
                SimError::Unsupported { .. } | SimError::InvalidOption { .. }
            )
        };
        match result {
            Ok(nonsmooth_sim::Run {
                trajectory,
                failure: None,
            }) => {
                run.steps = trajectory.steps;
                run.traj = Some(trajectory);
            }
            Ok(nonsmooth_sim::Run {
                trajectory: partial,
                failure: Some(SimError::StepFailed { step, t, source }),
            }) => {
                run.recoveries = partial.recoveries;
                if rejects(source.root_cause()) {
                    run.outcome = Outcome::NotApplicable(source.root_cause().to_string());
                } else {
                    run.outcome =
                        Outcome::Failed(format!("step {step} at t = {t} failed: {source}"));
                    run.steps = step.saturating_sub(1);
                    run.traj = Some(partial);
                }
            }
            Ok(nonsmooth_sim::Run {
                failure: Some(e), ..
            }) => run.outcome = Outcome::Failed(e.to_string()),
            Err(e) if rejects(&e) => run.outcome = Outcome::NotApplicable(e.to_string()),
            Err(e) => run.outcome = Outcome::Failed(e.to_string()),
        }
        if let Some(traj) = &run.traj {
            run.recoveries = traj.recoveries;
            run.energy_drift = energy_drift(model, traj);
            run.min_gap = min_gap(model, traj);
        }
        run
    }

    fn num(x: Option<f64>) -> String {
        x.map(|x| format!("{x}")).unwrap_or_default()
    }

    fn short(x: Option<f64>) -> String {
        x.map(|x| format!("{x:.3e}")).unwrap_or_else(|| "–".into())
    }

    /// The viewer scene overlaying the runs that have states (completed or failed).
    fn scene(model: &Model, runs: &[Run]) -> Option<ViewerScene> {
        let shown: Vec<&Run> = runs
            .iter()
            .filter(|r| r.traj.as_ref().is_some_and(|t| !t.t.is_empty()))
            .collect();
        if shown.is_empty() {
            return None;
        }
        let frames = (nonsmooth_report::viewer::MAX_FRAMES / shown.len())
            .max(nonsmooth_report::viewer::MIN_RUN_FRAMES);
        let viewer_runs = shown
            .iter()
            .filter_map(|r| {
                let traj = r.traj.as_ref()?;
                let status = match &r.outcome {
                    Outcome::Failed(e) => format!("failed: {e}"),
                    _ => String::new(),
                };
                Some(nonsmooth_figures::viewer::run(
                    model,
                    traj,
                    r.stepper.to_string(),
                    status,
                    frames,
                ))
            })
            .collect();
        let notes = runs
            .iter()
            .filter_map(|r| match &r.outcome {
                Outcome::NotApplicable(why) => {
                    Some(format!("not applicable: {} ({why})", r.stepper))
                }
                _ => None,
            })
            .collect();
        Some(nonsmooth_figures::viewer::overlay(
            model,
            viewer_runs,
            format!("{}: every stepper", model.name),
            notes,
        ))
    }

    pub fn run(
        args: &SimulateArgs,
        model: &Model,
        options: &SimOptions,
        steps: usize,
    ) -> Result<ExitCode, CliError> {
        let runs: Vec<Run> = nonsmooth_sim::STEPPER_NAMES
            .iter()
            .map(|name| run_one(args, model, name, options, steps))
            .collect();
        let mut files = vec!["comparison.csv".to_string(), "comparison.json".to_string()];
        let json_runs = write_trajectories(args, &runs, &mut files)?;
        write_comparison_csv(args, &runs)?;
        if args.html {
            write_viewer(args, model, &runs, &mut files)?;
        }
        let completed = runs
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Completed))
            .count();
        let summary = serde_json::json!({
            "model": model.name,
            "model_file": args.model.display().to_string(),
            "dt": options.dt,
            "duration": options.duration,
            "steps": steps,
            "record_every": options.record_every,
            "completed": completed,
            "runs": json_runs,
            "files": files,
        });
        write_json(&args.out.join("comparison.json"), &summary)?;
        if args.output.json {
            outln!("{summary}");
        } else if !args.output.quiet {
            print_comparison(args, model, options, &runs);
        }
        if completed == 0 {
            eprintln!(
                "error: no stepper completed the run of `{}` (see {})",
                model.name,
                args.out.join("comparison.json").display()
            );
            return Ok(ExitCode::FAILURE);
        }
        Ok(ExitCode::SUCCESS)
    }

    /// Warns of each run's warnings, writes each recorded trajectory into the stepper's
    /// folder (its file added to `files`) and returns each run's entry of the summary JSON.
    fn write_trajectories(
        args: &SimulateArgs,
        runs: &[Run],
        files: &mut Vec<String>,
    ) -> Result<Vec<serde_json::Value>, CliError> {
        let mut json_runs = Vec::new();
        for r in runs {
            for w in &r.warnings {
                if matches!(r.outcome, Outcome::Completed | Outcome::Failed(_)) {
                    eprintln!("warning: {}: {w}", r.stepper);
                }
            }
            let mut run_files = Vec::new();
            if let Some(traj) = &r.traj {
                let dir = args.out.join(r.stepper);
                std::fs::create_dir_all(&dir)
                    .map_err(|e| nonsmooth_report::ReportError::io(&dir, e))?;
                write_csv(&dir.join("trajectory.csv"), &traj.header(), &traj.rows())?;
                run_files.push(format!("{}/trajectory.csv", r.stepper));
            }
            files.extend(run_files.iter().cloned());
            json_runs.push(serde_json::json!({
                "stepper": r.stepper,
                "status": r.outcome.label(),
                "detail": r.outcome.detail(),
                "wall_time_s": r.wall,
                "steps": r.steps,
                "recorded_states": r.traj.as_ref().map_or(0, |t| t.t.len()),
                "final_t": r.traj.as_ref().and_then(|t| t.t.last().copied()),
                "energy_drift_J": r.energy_drift,
                "min_gap_m": r.min_gap,
                "largest_penetration_m": r.penetration(),
                "recoveries": r.recoveries,
                "warnings": r.warnings,
                "files": run_files,
            }));
        }
        Ok(json_runs)
    }

    /// `comparison.csv`: one row per stepper (status, wall time, steps, drift, penetration,
    /// recoveries).
    fn write_comparison_csv(args: &SimulateArgs, runs: &[Run]) -> Result<(), CliError> {
        let header: Vec<String> = [
            "stepper",
            "status",
            "wall_time_s",
            "steps",
            "final_t_s",
            "energy_drift_J",
            "largest_penetration_m",
            "recovered_steps",
            "recovery_substeps",
            "unconverged_steps",
            "repeated_solves",
            "convex_fallbacks",
            "detail",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let rows: Vec<Vec<String>> = runs
            .iter()
            .map(|r| {
                let applicable = r.traj.is_some();
                let count = |n: usize| {
                    if applicable {
                        n.to_string()
                    } else {
                        String::new()
                    }
                };
                vec![
                    r.stepper.to_string(),
                    r.outcome.label().to_string(),
                    format!("{}", r.wall),
                    count(r.steps),
                    num(r.traj.as_ref().and_then(|t| t.t.last().copied())),
                    num(r.energy_drift),
                    num(r.penetration()),
                    count(r.recoveries.step_halving),
                    count(r.recoveries.substeps),
                    count(r.recoveries.unconverged_steps),
                    count(r.recoveries.repeated_solves),
                    count(r.recoveries.convex_fallbacks),
                    r.outcome.detail().to_string(),
                ]
            })
            .collect();
        write_csv_cells(&args.out.join("comparison.csv"), &header, &rows)?;
        Ok(())
    }

    /// `viewer.html`: every stepper's recorded trajectory overlaid (added to `files`), or a
    /// warning when none recorded a state.
    fn write_viewer(
        args: &SimulateArgs,
        model: &Model,
        runs: &[Run],
        files: &mut Vec<String>,
    ) -> Result<(), CliError> {
        match scene(model, runs) {
            Some(scene) => {
                nonsmooth_report::viewer::write_viewer_html(&args.out.join("viewer.html"), &scene)?;
                files.push("viewer.html".to_string());
            }
            None => eprintln!("warning: no stepper recorded a state; viewer.html not written"),
        }
        Ok(())
    }

    /// The comparison as a table on standard output, then each run's detail.
    fn print_comparison(args: &SimulateArgs, model: &Model, options: &SimOptions, runs: &[Run]) {
        outln!(
            "`{}` under every stepper for {} s (steps of {} s) → {}",
            model.name,
            options.duration,
            options.dt,
            args.out.display()
        );
        outln!(
            "{:<20} {:<15} {:>9} {:>7} {:>10} {:>12} {:>12} {:>9} {:>11}",
            "stepper",
            "status",
            "wall [s]",
            "steps",
            "t end [s]",
            "drift [J]",
            "penetr. [m]",
            "recovered",
            "unconverged"
        );
        for r in runs {
            let applicable = r.traj.is_some();
            let count = |n: usize| {
                if applicable {
                    n.to_string()
                } else {
                    "–".into()
                }
            };
            outln!(
                "{:<20} {:<15} {:>9.3} {:>7} {:>10} {:>12} {:>12} {:>9} {:>11}",
                r.stepper,
                r.outcome.label(),
                r.wall,
                count(r.steps),
                r.traj
                    .as_ref()
                    .and_then(|t| t.t.last())
                    .map_or_else(|| "–".to_string(), |t| format!("{t:.4}")),
                short(r.energy_drift),
                short(r.penetration()),
                count(r.recoveries.step_halving),
                count(r.recoveries.unconverged_steps)
            );
        }
        for r in runs {
            if !r.outcome.detail().is_empty() {
                outln!("  {}: {}", r.stepper, r.outcome.detail());
            }
        }
    }
}
