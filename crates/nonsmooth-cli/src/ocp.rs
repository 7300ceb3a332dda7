//! `nonsmooth ocp PROBLEM.toml --out DIR`: optimal control of a point mass through an
//! inelastic impact by time-freezing (seed 002), FESD and an MPCC homotopy over IPOPT.
//!
//! Problem file: see `nonsmooth_ocp::problem` and `examples/ocp_particle.toml`.

use crate::CliError;
use clap::Args;
use nonsmooth_experiments::seed002::staircase;
use nonsmooth_ocp::fesd::solve_ocp;
use nonsmooth_ocp::problem::OcpProblem;
use nonsmooth_report::table::{write_csv, write_json};
use nonsmooth_report::{Figure, Series};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `nonsmooth ocp`.
#[derive(Args)]
pub struct OcpArgs {
    /// Problem file (TOML).
    pub problem: PathBuf,
    /// Output directory.
    #[arg(long, default_value = "ocp-out")]
    pub out: PathBuf,
    /// --quiet (no summary line) / --json (print summary.json on standard output).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
}

/// Runs the subcommand.
pub fn run(args: &OcpArgs) -> Result<ExitCode, CliError> {
    let usage = |e: nonsmooth_ocp::OcpError| CliError::Usage(e.to_string());
    let problem = OcpProblem::from_file(&args.problem).map_err(usage)?;
    let (tf, hz, o) = (&problem.tf, &problem.horizon, &problem.options);
    let n = hz.n_steps;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::Usage(format!("{}: {e}", args.out.display())))?;
    let sol = solve_ocp(tf, hz, o).map_err(usage)?;
    let ny = tf.ny();
    let nq = (ny - 1) / 2;
    let mut header = vec!["tau".to_string()];
    header.extend((0..nq).map(|i| format!("q{}", i + 1)));
    header.extend((0..nq).map(|i| format!("v{}", i + 1)));
    header.push("t".into());
    let rows: Vec<Vec<f64>> = sol
        .traj
        .tau
        .iter()
        .zip(&sol.traj.y)
        .map(|(t, y)| std::iter::once(*t).chain(y.iter().copied()).collect())
        .collect();
    write_csv(
        &args.out.join("trajectory_numerical_time.csv"),
        &header,
        &rows,
    )?;
    // physical time: keep the points where the clock advances (frozen intervals collapse)
    let mut phys = vec![];
    let mut last_t = f64::NEG_INFINITY;
    for y in &sol.traj.y {
        if y[ny - 1] > last_t + 1e-12 {
            last_t = y[ny - 1];
            phys.push(
                std::iter::once(y[ny - 1])
                    .chain(y[..ny - 1].iter().copied())
                    .collect(),
            );
        }
    }
    let mut ph = header.clone();
    ph[0] = "t".into();
    ph.pop();
    write_csv(&args.out.join("trajectory_physical_time.csv"), &ph, &phys)?;
    let dt = problem.t_final / n as f64;
    let mut ch = vec!["t_start".to_string(), "s".to_string()];
    ch.extend((0..sol.u[0].len()).map(|i| format!("u{}", i + 1)));
    let crow: Vec<Vec<f64>> = (0..n)
        .map(|k| {
            [k as f64 * dt, sol.s[k]]
                .into_iter()
                .chain(sol.u[k].iter().copied())
                .collect()
        })
        .collect();
    write_csv(&args.out.join("controls.csv"), &ch, &crow)?;
    write_json(&args.out.join("homotopy.json"), &sol.log)?;
    let summary = serde_json::json!({
        "objective": sol.objective,
        "terminal_error": sol.terminal_error,
        "comp_residual": sol.comp_residual,
        "nlp_iterations": sol.nlp_iterations,
        "cpu_seconds": sol.cpu_seconds,
    });
    write_json(&args.out.join("summary.json"), &summary)?;
    let mut fig = Figure::new("Optimal trajectory (physical time)", "t", "state");
    for (i, name) in ph.iter().enumerate().skip(1) {
        fig = fig.with(Series::line(
            name.clone(),
            phys.iter().map(|r| (r[0], r[i])).collect(),
        ));
    }
    fig.write_svg(&args.out.join("trajectory.svg"))?;
    let fig = Figure::new("Controls and speed of time", "t", "value")
        .with(Series::line(
            "u1",
            staircase(dt, sol.u.iter().map(|u| u[0])),
        ))
        .with(Series::line("s", staircase(dt, sol.s.iter().copied())));
    fig.write_svg(&args.out.join("controls.svg"))?;
    if args.output.json {
        outln!("{summary}");
    } else if !args.output.quiet {
        outln!(
            "objective {:.6}, terminal error {:.2e}, complementarity {:.2e}, {} IPOPT iterations, {:.3} s",
            sol.objective,
            sol.terminal_error,
            sol.comp_residual,
            sol.nlp_iterations,
            sol.cpu_seconds
        );
    }
    Ok(ExitCode::SUCCESS)
}
