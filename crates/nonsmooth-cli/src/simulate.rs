//! `nonsmooth simulate MODEL --dt H --duration T --out DIR [--html]`.

use crate::CliError;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use nonsmooth_core::Model;
use nonsmooth_impact::steppers;
use nonsmooth_report::table::{write_csv, write_json};
use nonsmooth_report::{Figure, Series};
use nonsmooth_sim::{simulate, SimOptions, Trajectory};
use std::path::{Path, PathBuf};
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
    /// Time-stepping scheme (default: the model's `[simulation] stepper`, else
    /// penalty-symplectic).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(steppers::names()))]
    pub stepper: Option<String>,
    /// Record every k-th step (default: about 5000 rows in all).
    #[arg(long)]
    pub record_every: Option<usize>,
    /// Also write viewer.html: an offline page that plays the motion (bodies and their
    /// collider shapes, a time slider and a plot of a chosen coordinate).
    #[arg(long)]
    pub html: bool,
    /// --quiet (no progress bar, no summary line) / --json (print summary.json).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
}

pub fn run(args: &SimulateArgs) -> Result<ExitCode, CliError> {
    let model = Model::from_file(&args.model)?;
    let settings = &model.simulation;
    let stepper_name = args
        .stepper
        .clone()
        .or_else(|| settings.stepper.clone())
        .unwrap_or_else(|| "penalty-symplectic".to_string());
    let mut stepper = steppers::by_name(&stepper_name)?;
    let warnings = nonsmooth_sim::model_warnings(&model, stepper.as_ref());
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let dt = args.dt.or(settings.dt).unwrap_or(1e-3);
    let duration = args.duration.or(settings.duration).unwrap_or(1.0);
    let probe = SimOptions {
        dt,
        duration,
        record_every: 1,
    };
    let steps = probe.steps()?;
    let options = SimOptions {
        record_every: args.record_every.unwrap_or((steps / 5000).max(1)),
        ..probe
    };
    std::fs::create_dir_all(&args.out)
        .map_err(|e| nonsmooth_report::ReportError::io(&args.out, e))?;
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
        bar.set_message(format!("simulating {}", model.name));
        bar
    };
    let start = Instant::now();
    let stride = (steps / 200).max(1);
    let result = simulate(
        &model,
        stepper.as_mut(),
        &model.initial_state,
        &options,
        &mut |done, _| {
            if done % stride == 0 {
                bar.set_position(done as u64);
            }
        },
    );
    bar.finish_and_clear();
    let wall = start.elapsed().as_secs_f64();
    let traj = match result {
        Ok(traj) => traj,
        Err(err) => {
            // Keep what was computed before the failing step, then report the failure.
            if let nonsmooth_sim::SimError::StepFailed { partial, .. } = &err {
                write_outputs(&args.out, &model, partial, args, &probe, wall, &warnings)?;
                eprintln!(
                    "wrote the {} states computed before the failure to {}",
                    partial.t.len(),
                    args.out.display()
                );
            }
            return Err(err.into());
        }
    };
    let summary = write_outputs(&args.out, &model, &traj, args, &probe, wall, &warnings)?;
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
    Ok(ExitCode::SUCCESS)
}

fn write_outputs(
    out: &Path,
    model: &Model,
    traj: &Trajectory,
    args: &SimulateArgs,
    options: &SimOptions,
    wall: f64,
    warnings: &[String],
) -> Result<serde_json::Value, CliError> {
    write_csv(&out.join("trajectory.csv"), &traj.header(), &traj.rows())?;
    let mut files = vec!["trajectory.csv", "summary.json", "trajectory.svg"];
    if args.html {
        if traj.t.is_empty() {
            eprintln!("warning: no recorded states; viewer.html not written");
        } else {
            let title = format!("{} ({})", model.name, traj.stepper);
            let scene = crate::viewer::scene(model, traj, title);
            nonsmooth_report::viewer::write_viewer_html(&out.join("viewer.html"), &scene)?;
            files.push("viewer.html");
        }
    }
    let last = traj.final_state();
    let summary = serde_json::json!({
        "model": model.name,
        "model_file": args.model.display().to_string(),
        "stepper": traj.stepper,
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
        "files": files,
    });
    write_json(&out.join("summary.json"), &summary)?;
    let mut fig = Figure::new(
        format!("{}: coordinates over time ({})", model.name, traj.stepper),
        "t [s]",
        "q",
    );
    for (k, name) in traj.q_names.iter().enumerate() {
        let pts = traj
            .t
            .iter()
            .zip(&traj.q)
            .map(|(t, q)| (*t, q[k]))
            .collect();
        fig.series.push(Series::line(name.clone(), pts));
    }
    if fig.series.is_empty() {
        fig.series.push(Series::line(
            "(no coordinates)",
            traj.t.iter().map(|t| (*t, 0.0)).collect(),
        ));
    }
    fig.write_svg(&out.join("trajectory.svg"))?;
    Ok(summary)
}
