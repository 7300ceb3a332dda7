//! `nonsmooth ocp PROBLEM.toml --out DIR`: optimal control of a point mass through an
//! inelastic impact by time-freezing (seed 002), FESD and an MPCC homotopy over IPOPT.
//!
//! Problem file (see `examples/ocp_particle.toml`):
//! `[model]` dim, mass, gravity, mu (optional), a_n; `[ocp]` N, T, s_max, y0, u_lo, u_hi,
//! terminal = [[index, value], …]; `[fesd]` n_s, n_fe (optional).

use crate::CliError;
use clap::Args;
use nonsmooth_ocp::fesd::{solve_ocp, FesdOptions, Horizon};
use nonsmooth_ocp::tf::{PointMass, TimeFreezing};
use nonsmooth_report::table::{write_csv, write_json};
use nonsmooth_report::{Figure, Series};
use serde::Deserialize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `nonsmooth ocp`.
#[derive(Args)]
pub struct OcpArgs {
    /// Problem file (TOML).
    pub problem: PathBuf,
    /// Output directory.
    #[arg(long, default_value = "ocp-out")]
    pub out: PathBuf,
}

#[derive(Deserialize)]
struct ModelSpec {
    dim: usize,
    mass: f64,
    gravity: f64,
    mu: Option<f64>,
    a_n: f64,
}

#[derive(Deserialize)]
#[allow(non_snake_case)]
struct OcpSpec {
    N: usize,
    T: f64,
    s_max: f64,
    y0: Vec<f64>,
    u_lo: Vec<f64>,
    u_hi: Vec<f64>,
    terminal: Vec<(usize, f64)>,
}

#[derive(Deserialize, Default)]
struct FesdSpec {
    n_s: Option<usize>,
    n_fe: Option<usize>,
}

#[derive(Deserialize)]
struct Problem {
    model: ModelSpec,
    ocp: OcpSpec,
    #[serde(default)]
    fesd: FesdSpec,
}

/// Runs the subcommand.
pub fn run(args: &OcpArgs) -> Result<ExitCode, CliError> {
    let text = std::fs::read_to_string(&args.problem)
        .map_err(|e| CliError::Usage(format!("{}: {e}", args.problem.display())))?;
    let p: Problem = toml::from_str(&text)
        .map_err(|e| CliError::Usage(format!("{}: {e}", args.problem.display())))?;
    if p.model.dim != 1 && p.model.dim != 2 {
        return Err(CliError::Usage("model.dim must be 1 or 2".into()));
    }
    if p.ocp.N == 0 || p.ocp.T.is_nan() || p.ocp.T <= 0.0 {
        return Err(CliError::Usage("ocp.N and ocp.T must be positive".into()));
    }
    let pm = PointMass {
        dim: p.model.dim,
        mass: p.model.mass,
        gravity: p.model.gravity,
        mu: p.model.mu,
    };
    let usage = |e: nonsmooth_ocp::OcpError| CliError::Usage(e.to_string());
    let tf = Arc::new(TimeFreezing::new(pm, p.model.a_n).map_err(usage)?);
    let n = p.ocp.N;
    let hz = Horizon {
        y0: p.ocp.y0.clone(),
        lam0: None,
        n_steps: n,
        step_len: p.ocp.T / n as f64,
        u_bounds: vec![(p.ocp.u_lo.clone(), p.ocp.u_hi.clone()); n],
        s_bounds: (1.0, p.ocp.s_max),
        clock: Some(p.ocp.T),
        terminal: p.ocp.terminal.clone(),
        y_bounds: None,
        control_weight: p.ocp.T / n as f64,
    };
    let o = FesdOptions {
        n_s: p.fesd.n_s.unwrap_or(2),
        n_fe: p.fesd.n_fe.unwrap_or(3),
        ..FesdOptions::default()
    };
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::Usage(format!("{}: {e}", args.out.display())))?;
    let sol = solve_ocp(&tf, &hz, &o).map_err(usage)?;
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
    let dt = p.ocp.T / n as f64;
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
    write_json(
        &args.out.join("summary.json"),
        &serde_json::json!({
            "objective": sol.objective,
            "terminal_error": sol.terminal_error,
            "comp_residual": sol.comp_residual,
            "nlp_iterations": sol.nlp_iterations,
            "cpu_seconds": sol.cpu_seconds,
        }),
    )?;
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
            crow.iter()
                .flat_map(|r| [(r[0], r[2]), (r[0] + dt, r[2])])
                .collect(),
        ))
        .with(Series::line(
            "s",
            crow.iter()
                .flat_map(|r| [(r[0], r[1]), (r[0] + dt, r[1])])
                .collect(),
        ));
    fig.write_svg(&args.out.join("controls.svg"))?;
    outln!(
        "objective {:.6}, terminal error {:.2e}, complementarity {:.2e}, {} IPOPT iterations, {:.3} s",
        sol.objective,
        sol.terminal_error,
        sol.comp_residual,
        sol.nlp_iterations,
        sol.cpu_seconds
    );
    Ok(ExitCode::SUCCESS)
}
