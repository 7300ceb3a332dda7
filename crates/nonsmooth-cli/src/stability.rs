//! `nonsmooth stability MODEL.toml`: the SOS Lyapunov certificate (multi-V, Theorem 2 of seed
//! 000) of the equilibrium of a planar body on two frictional contacts read from a model file
//! (`nonsmooth_sos::model`), with the static check first and a falsification by simulation;
//! `--grid PATH=LO:HI:N …` sweeps named model parameters on all cores and draws the map.
//!
//! Without a model file the paper's example body is given by flags (`--alpha --mu1 --mu2 --d
//! --e --h`, m = 1, unit radius of gyration, g = 1); `--grid` alone then sweeps its μ × d
//! plane (`--grid-n`, `--equal-mu`).

use crate::CliError;
use clap::Args;
use nonsmooth_core::{Model, ParameterAxis};
use nonsmooth_figures::stability::model_grid_figure;
use nonsmooth_sos::event_driven::{falsify, SimOptions};
use nonsmooth_sos::grid::{linspace, sweep, GridSpec};
use nonsmooth_sos::lyapunov::{certify, CertifyOptions, FlightFormulation, Method};
use nonsmooth_sos::model::{certify_model, ModelCertifyOptions, StabilityModelError};
use nonsmooth_sos::model_grid::{grid_points, sweep_model};
use nonsmooth_sos::planar::PlanarParams;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct StabilityArgs {
    /// Model file of a planar body resting on two contacts (e.g. examples/sos_fig2.toml).
    /// Without it, the paper's example body is given by --alpha, --mu1, --mu2, --d, --e, --h.
    pub model: Option<PathBuf>,
    /// (No model file) slope angle α in degrees [default: 30].
    #[arg(long)]
    pub alpha: Option<f64>,
    /// (No model file) friction coefficient of the uphill contact [default: 1].
    #[arg(long)]
    pub mu1: Option<f64>,
    /// (No model file) friction coefficient of the downhill contact [default: 2].
    #[arg(long)]
    pub mu2: Option<f64>,
    /// (No model file) half distance of the contacts [default: 1].
    #[arg(long)]
    pub d: Option<f64>,
    /// (No model file) restitution coefficient [default: 0].
    #[arg(long)]
    pub e: Option<f64>,
    /// (No model file) height of the centre of mass above the contacts [default: 1].
    #[arg(long)]
    pub h: Option<f64>,
    /// Also run the single-V (Posa–Tobenkin–Tedrake) baseline.
    #[arg(long)]
    pub ptt: bool,
    /// Sweep: with a model file, one or more named parameters `PATH=LO:HI:N` or
    /// `PATH=V1,V2,…` (e.g. `materials.floor.friction=0:2:21 bodies.block.com.x=-0.5:0.5:21`;
    /// the first axis is the map's x); without one, `--grid` alone sweeps the μ × d plane.
    #[arg(long, num_args = 0.., value_name = "PATH=LO:HI:N")]
    pub grid: Option<Vec<String>>,
    /// (No model file) grid resolution per axis.
    #[arg(long, default_value_t = 6)]
    pub grid_n: usize,
    /// (No model file) in a grid, vary μ₁ = μ₂ together (Fig. 3) instead of μ₁ with fixed μ₂.
    #[arg(long)]
    pub equal_mu: bool,
    /// Output directory: result.json (and trajectory.csv for a trajectory that leaves) or
    /// grid.json, grid.csv and grid.svg.
    #[arg(long, default_value = "stability-out")]
    pub out: PathBuf,
    /// --quiet (no progress lines, no JSON) / --json (the JSON result, the default output).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
    /// For e > 0: the free-flight condition (docs/decisions/000-sos-stability.md decision 7):
    /// `pre-impact` (the default, as `--grid` and `reproduce`), `after-impact` or `any-start`
    /// (V₂ sampled after the impacts, jointly infeasible on Fig. 3; kept for comparison).
    #[arg(long, default_value = "pre-impact")]
    pub flight: String,
}

fn usage(e: impl std::fmt::Display) -> CliError {
    CliError::Usage(e.to_string())
}

fn flight_formulation(name: &str) -> Result<FlightFormulation, CliError> {
    match name {
        "pre-impact" => Ok(FlightFormulation::PreImpact),
        "after-impact" => Ok(FlightFormulation::AfterImpact),
        "any-start" => Ok(FlightFormulation::AnyStart),
        other => Err(usage(format!(
            "--flight: unknown formulation `{other}` (pre-impact, after-impact, any-start)"
        ))),
    }
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), CliError> {
    nonsmooth_report::table::write_json(path, value)?;
    Ok(())
}

fn print_json(args: &StabilityArgs, value: &serde_json::Value) -> Result<(), CliError> {
    if !args.output.quiet {
        outln!("{}", serde_json::to_string_pretty(value).map_err(usage)?);
    }
    Ok(())
}

pub fn run(args: &StabilityArgs) -> Result<ExitCode, CliError> {
    match &args.model {
        Some(path) => run_model(args, path),
        None => run_flags(args),
    }
}

/// The typed errors of the model path, as the CLI reports them.
fn model_error(path: &Path, e: StabilityModelError) -> CliError {
    match e {
        StabilityModelError::Model(m) => CliError::Model(m),
        other => CliError::Usage(format!("{}: {other}", path.display())),
    }
}

fn run_model(args: &StabilityArgs, path: &Path) -> Result<ExitCode, CliError> {
    let given: Vec<&str> = [
        ("--alpha", args.alpha),
        ("--mu1", args.mu1),
        ("--mu2", args.mu2),
        ("--d", args.d),
        ("--e", args.e),
        ("--h", args.h),
    ]
    .iter()
    .filter(|(_, v)| v.is_some())
    .map(|(n, _)| *n)
    .collect();
    if !given.is_empty() || args.equal_mu {
        return Err(usage(format!(
            "{} describe the paper's example body; with a model file the body comes from the \
             file (sweep its parameters with --grid PATH=LO:HI:N)",
            if args.equal_mu {
                "--equal-mu".to_string()
            } else {
                given.join(", ")
            }
        )));
    }
    let opts = ModelCertifyOptions {
        certify: CertifyOptions {
            flight: flight_formulation(&args.flight)?,
            ..CertifyOptions::default()
        },
        ..ModelCertifyOptions::default()
    };
    let name = path.display().to_string();
    let src = std::fs::read_to_string(path).map_err(|e| {
        CliError::Model(nonsmooth_core::ModelError::Io {
            path: name.clone(),
            message: e.to_string(),
        })
    })?;
    std::fs::create_dir_all(&args.out).map_err(usage)?;
    if let Some(axes) = &args.grid {
        if axes.is_empty() {
            return Err(usage(
                "--grid with a model file needs at least one PATH=LO:HI:N \
                 (e.g. --grid materials.floor.friction=0:2:21)",
            ));
        }
        let axes: Vec<ParameterAxis> = axes
            .iter()
            .map(|a| a.parse())
            .collect::<Result<_, nonsmooth_core::ModelError>>()?;
        let total = grid_points(&axes).map_err(|e| model_error(path, e))?;
        let log = crate::progress::Log::new(total as u64, "stability grid", args.output.quiet);
        let grid = sweep_model(&src, Some(&name), &axes, &opts, &|m| {
            log.line(m);
            log.advance();
        })
        .map_err(|e| model_error(path, e))?;
        log.finish();
        let fig = model_grid_figure(&grid, &format!("{}: stability map", name));
        fig.write_svg(&args.out.join("grid.svg"))?;
        write_json(&args.out.join("grid.json"), &grid)?;
        let mut csv = grid.axes.join(",") + ",category,epsilon,detail\n";
        for p in &grid.points {
            let values: Vec<String> = p.values.iter().map(|v| format!("{v}")).collect();
            csv += &format!(
                "{},{},{},\"{}\"\n",
                values.join(","),
                p.category,
                p.epsilon.map(|e| e.to_string()).unwrap_or_default(),
                p.detail.replace('"', "'")
            );
        }
        std::fs::write(args.out.join("grid.csv"), csv).map_err(usage)?;
        return print_json(
            args,
            &serde_json::json!({
                "axes": grid.axes,
                "counts": grid.counts,
                "out": args.out.display().to_string(),
            }),
        )
        .map(|()| ExitCode::SUCCESS);
    }
    let model = Model::from_toml_str(&src, Some(&name))?;
    let cert = certify_model(&model, &opts).map_err(|e| model_error(path, e))?;
    let ptt = if args.ptt {
        Some(
            certify(
                &cert.body.params,
                &CertifyOptions {
                    method: Method::Ptt,
                    ..CertifyOptions::default()
                },
            )
            .map_err(usage)?
            .verdict,
        )
    } else {
        None
    };
    write_json(&args.out.join("result.json"), &cert)?;
    if !cert.trajectory.is_empty() {
        let mut csv = String::from("t,x,y,theta,vx,vy,omega,event\n");
        for s in &cert.trajectory {
            csv += &format!(
                "{},{},{},{},{},{},{},{}\n",
                s.t, s.q[0], s.q[1], s.q[2], s.v[0], s.v[1], s.v[2], s.event
            );
        }
        std::fs::write(args.out.join("trajectory.csv"), csv).map_err(usage)?;
    }
    let r = &cert.report;
    print_json(
        args,
        &serde_json::json!({
            "outcome": cert.outcome,
            "body": cert.body,
            "static_forces": cert.static_forces,
            "epsilon": r.epsilon,
            "sdp_size": r.size,
            "modes": r.modes,
            "build_seconds": r.build_seconds,
            "solve_seconds": r.solve_seconds,
            "monte_carlo_min": if r.mc_min.is_finite() { Some(r.mc_min) } else { None },
            "ptt_verdict": ptt,
            "simulation": cert.falsification,
            "trajectory_csv": (!cert.trajectory.is_empty())
                .then(|| args.out.join("trajectory.csv").display().to_string()),
            "out": args.out.display().to_string(),
        }),
    )?;
    Ok(ExitCode::SUCCESS)
}

fn run_flags(args: &StabilityArgs) -> Result<ExitCode, CliError> {
    let alpha = args.alpha.unwrap_or(30.0).to_radians();
    let e = args.e.unwrap_or(0.0);
    if let Some(axes) = &args.grid {
        if !axes.is_empty() {
            return Err(usage(
                "--grid PATH=LO:HI:N sweeps a model file's parameters: give the model file",
            ));
        }
        let spec = GridSpec {
            alpha,
            mu2: (!args.equal_mu).then_some(args.mu2.unwrap_or(2.0)),
            e,
            mu: linspace(0.0, 2.0, args.grid_n.max(2)),
            d: linspace(2.0 / args.grid_n.max(2) as f64, 2.0, args.grid_n.max(2)),
            ptt: args.ptt,
            sim_samples: 50,
            sim_radius: 1e-3,
            divergence_factor: 100.0,
        };
        let log = crate::progress::Log::new(
            (spec.mu.len() * spec.d.len()) as u64,
            "stability grid",
            args.output.quiet,
        );
        let res = sweep(&spec, &|m| {
            log.line(m);
            log.advance();
        })
        .map_err(usage)?;
        log.finish();
        std::fs::create_dir_all(&args.out).map_err(usage)?;
        let axis = if args.equal_mu { "mu" } else { "mu1" };
        let fig = nonsmooth_figures::stability::grid_figure(&res, "SOS certificates", axis);
        fig.write_svg(&args.out.join("grid.svg"))?;
        nonsmooth_report::table::write_json(&args.out.join("grid.json"), &res)?;
        let summary = serde_json::json!({
            "certified_points": res.certified_points,
            "certified_in_ambiguous": res.certified_in_ambiguous,
            "certified_with_d_le_tan_alpha": res.certified_with_d_le_tan_alpha,
            "certified_but_diverged_in_simulation": res.certified_but_diverged_in_simulation,
            "ptt_certified_points": res.ptt_certified_points,
            "seconds_per_point": res.seconds_per_point,
            "out": args.out.display().to_string(),
        });
        if !args.output.quiet {
            outln!("{}", serde_json::to_string_pretty(&summary).map_err(usage)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let p = PlanarParams {
        alpha,
        mu1: args.mu1.unwrap_or(1.0),
        mu2: args.mu2.unwrap_or(2.0),
        d: args.d.unwrap_or(1.0),
        e,
        h: args.h.unwrap_or(1.0),
        offset: 0.0,
    };
    let flight = flight_formulation(&args.flight)?;
    let rep = certify(
        &p,
        &CertifyOptions {
            flight,
            ..CertifyOptions::default()
        },
    )
    .map_err(usage)?;
    let ptt = if args.ptt {
        Some(
            certify(
                &p,
                &CertifyOptions {
                    method: Method::Ptt,
                    ..CertifyOptions::default()
                },
            )
            .map_err(usage)?,
        )
    } else {
        None
    };
    let sim = (nonsmooth_sos::planar::not_applicable(&p).is_none() && p.equilibrium_exists())
        .then(|| falsify(&p, 100, 1e-3, 100.0, 7, &SimOptions::default()));
    let out = serde_json::json!({
        "verdict": rep.verdict,
        "flight_formulation": if p.e > 0.0 { Some(flight) } else { None },
        "epsilon": rep.epsilon,
        "sdp_size": rep.size,
        "modes": rep.modes,
        "build_seconds": rep.build_seconds,
        "solve_seconds": rep.solve_seconds,
        "monte_carlo_min": if rep.mc_min.is_finite() { Some(rep.mc_min) } else { None },
        "ptt_verdict": ptt.map(|r| r.verdict),
        "simulation": sim,
    });
    if !args.output.quiet {
        outln!("{}", serde_json::to_string_pretty(&out).map_err(usage)?);
    }
    Ok(ExitCode::SUCCESS)
}
