//! `nonsmooth inverse MODEL --variant NAME [--state STATE.json] [--desired DES.json]`:
//! inverse dynamics with rigid contact (Zapolsky & Drumwright; crate `nonsmooth-control`).
//! Prints the actuator torques and predicted contact forces as JSON. With
//! `--bench-contacts 4,8,...` it times the call against the number of contacts (the detected
//! contacts duplicated, as in the paper's Fig. 19) and writes `inverse_timing.svg` and
//! `inverse_timing.json` into `--out`.

use crate::CliError;
use clap::Args;
use nalgebra::DVector;
use nonsmooth_control::{Desired, IdOptions, IdProblem, InverseDynamics, Variant};
use nonsmooth_core::Model;
use nonsmooth_report::{Figure, Series};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args)]
pub struct InverseArgs {
    /// Model file (.toml, .urdf or MJCF .xml).
    pub model: PathBuf,
    /// lcp-noslip, lcp-coulomb, qp-noslip, qp-coulomb or qp-coulomb-one-stage.
    #[arg(long, default_value = "qp-coulomb")]
    pub variant: String,
    /// JSON state {"q": [...], "v": [...]}; default: the model's initial state.
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// JSON desired motion {"acceleration": [...]} or {"velocity": [...]} of the actuated
    /// DOF; default: zero acceleration.
    #[arg(long)]
    pub desired: Option<PathBuf>,
    /// Control period Δt in s.
    #[arg(long, default_value_t = 1e-3)]
    pub dt: f64,
    /// Comma-separated contact counts to time (e.g. 4,8,16,32,64).
    #[arg(long, value_delimiter = ',')]
    pub bench_contacts: Vec<usize>,
    /// Output directory for the benchmark plot.
    #[arg(long, default_value = "inverse-out")]
    pub out: PathBuf,
    /// --quiet (print nothing) / --json (compact JSON on one line; the default output is
    /// pretty-printed JSON).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
}

fn usage(e: impl std::fmt::Display) -> CliError {
    CliError::Usage(e.to_string())
}

fn read_json(path: &Path) -> Result<serde_json::Value, CliError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| usage(format!("{}: {e}", path.display())))
}

fn vector(v: &serde_json::Value, key: &str, file: &Path) -> Result<Option<DVector<f64>>, CliError> {
    match v.get(key) {
        None => Ok(None),
        Some(x) => {
            let xs: Vec<f64> = serde_json::from_value(x.clone())
                .map_err(|e| usage(format!("{}: `{key}`: {e}", file.display())))?;
            Ok(Some(DVector::from_vec(xs)))
        }
    }
}

fn list(v: &DVector<f64>) -> Vec<f64> {
    v.iter().copied().collect()
}

pub fn run(args: &InverseArgs) -> Result<ExitCode, CliError> {
    let model = Model::from_file(&args.model)?;
    let variant = Variant::from_name(&args.variant).map_err(usage)?;
    let (mut q, mut v) = (model.initial_state.q.clone(), model.initial_state.v.clone());
    if let Some(path) = &args.state {
        let js = read_json(path)?;
        if let Some(x) = vector(&js, "q", path)? {
            q = x;
        }
        if let Some(x) = vector(&js, "v", path)? {
            v = x;
        }
    }
    let desired = match &args.desired {
        None => Desired::Acceleration(DVector::zeros(model.nu())),
        Some(path) => {
            let js = read_json(path)?;
            if let Some(a) = vector(&js, "acceleration", path)? {
                Desired::Acceleration(a)
            } else if let Some(vd) = vector(&js, "velocity", path)? {
                Desired::Velocity(vd)
            } else {
                return Err(usage(format!(
                    "{}: expected a key `acceleration` or `velocity`",
                    path.display()
                )));
            }
        }
    };
    let problem = IdProblem::from_state(&model, &q, &v, args.dt).map_err(usage)?;
    if !args.bench_contacts.is_empty() {
        return bench(args, &problem, &desired, variant);
    }
    let mut ctl = InverseDynamics::new(IdOptions::new(variant));
    let sol = ctl.solve(&problem, &desired).map_err(usage)?;
    let names: Vec<&str> = model.actuators.iter().map(|a| a.name.as_str()).collect();
    let report = serde_json::json!({
        "variant": variant.name(),
        "status": sol.status,
        "actuators": names,
        "torques": list(&sol.torques),
        "normal_forces": list(&sol.normal_forces),
        "tangent_forces": list(&sol.tangent_forces),
        "total_normal_force": sol.normal_forces.sum(),
        "desired_velocity": list(&sol.desired_velocity),
        "v_plus": list(&sol.v_plus),
        "method": sol.method,
        "solver_status": sol.solver_status,
        "residuals": sol.residuals,
        "relaxation": sol.relaxation.as_ref().map(|r| serde_json::json!({
            "reason": r.reason,
            "requested": list(&r.requested),
            "realized": list(&r.realized),
            "distance": r.distance,
        })),
    });
    print_json(&args.output, &report)?;
    Ok(ExitCode::SUCCESS)
}

fn bench(
    args: &InverseArgs,
    problem: &IdProblem,
    desired: &Desired,
    variant: Variant,
) -> Result<ExitCode, CliError> {
    if problem.num_contacts() == 0 {
        return Err(usage("the state has no contacts to duplicate"));
    }
    let mut pts = Vec::new();
    let mut rows_out = Vec::new();
    for &n in &args.bench_contacts {
        let mut rows = Vec::new();
        while rows.len() < n {
            rows.extend(problem.contacts().iter().cloned());
        }
        rows.truncate(n);
        let pn = problem.with_contact_rows(rows).map_err(usage)?;
        let mut ctl = InverseDynamics::new(IdOptions::new(variant));
        ctl.solve(&pn, desired).map_err(usage)?;
        let start = Instant::now();
        let mut reps = 0usize;
        while reps < 5 || (start.elapsed().as_secs_f64() < 0.2 && reps < 10_000) {
            ctl.solve(&pn, desired).map_err(usage)?;
            reps += 1;
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / reps as f64;
        pts.push((n as f64, us));
        rows_out.push(serde_json::json!({"contacts": n, "us_per_call": us, "calls": reps}));
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| usage(format!("{}: {e}", args.out.display())))?;
    let fig = Figure::new(
        format!("{}: time per call vs contacts", variant.name()),
        "contacts",
        "µs per call",
    )
    .with(Series::line(variant.name(), pts));
    fig.write_svg(&args.out.join("inverse_timing.svg"))?;
    let report = serde_json::json!({"variant": variant.name(), "timing": rows_out});
    let text = serde_json::to_string_pretty(&report).map_err(usage)?;
    std::fs::write(args.out.join("inverse_timing.json"), &text)
        .map_err(|e| usage(format!("{}: {e}", args.out.display())))?;
    print_json(&args.output, &report)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints a result document as --quiet / --json ask (pretty JSON by default).
fn print_json(
    output: &crate::progress::OutputFlags,
    doc: &serde_json::Value,
) -> Result<(), CliError> {
    if output.quiet && !output.json {
        return Ok(());
    }
    let text = if output.json {
        serde_json::to_string(doc)
    } else {
        serde_json::to_string_pretty(doc)
    };
    outln!("{}", text.map_err(usage)?);
    Ok(())
}
