//! `nonsmooth ocp-generate`: generated contact-rich optimal-control problems (planar boxes,
//! sleds and crates pushed to rest; reachable and unreachable by construction, see
//! `nonsmooth_ocp::generator`) written as model and problem files a user runs with
//! `nonsmooth ocp`, with a manifest of what each is. `scripts/ocp_generated_benchmark.py`
//! solves them and prints the rates.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use nonsmooth_ocp::generator::{generate, Expected};

use crate::CliError;

/// Arguments of `nonsmooth ocp-generate`.
#[derive(Args)]
pub struct OcpGenerateArgs {
    /// Seed of the generator (the same seed gives the same problems).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of problems reachable by construction.
    #[arg(long, default_value_t = 20)]
    pub reachable: usize,
    /// Number of problems unreachable by construction.
    #[arg(long, default_value_t = 10)]
    pub unreachable: usize,
    /// Output directory (`<name>.toml`, `<name>_model.toml`, `manifest.json`).
    #[arg(long, default_value = "out/ocp-generated")]
    pub out: PathBuf,
}

fn io_error(path: &std::path::Path, e: std::io::Error) -> CliError {
    CliError::Usage(format!("cannot write {}: {e}", path.display()))
}

/// Generates the problems and writes their files and the manifest.
///
/// # Errors
/// [`CliError::Usage`] for an unwritable output directory or a generator failure.
pub fn run(args: &OcpGenerateArgs) -> Result<ExitCode, CliError> {
    if args.reachable + args.unreachable == 0 {
        return Err(CliError::Usage(
            "--reachable and --unreachable are both 0: nothing to generate".into(),
        ));
    }
    let problems = generate(args.seed, args.reachable, args.unreachable)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    std::fs::create_dir_all(&args.out).map_err(|e| io_error(&args.out, e))?;
    let mut manifest = Vec::new();
    for p in &problems {
        for (file, text) in [
            (format!("{}.toml", p.name), &p.problem_toml),
            (format!("{}_model.toml", p.name), &p.model_toml),
        ] {
            let path = args.out.join(file);
            std::fs::write(&path, text).map_err(|e| io_error(&path, e))?;
        }
        let (expected, reason) = match &p.expected {
            Expected::Reachable => ("reachable", String::new()),
            Expected::Unreachable { reason } => ("unreachable", reason.clone()),
        };
        manifest.push(serde_json::json!({
            "name": p.name,
            "problem": format!("{}.toml", p.name),
            "family": p.family.name(),
            "expected": expected,
            "reason": reason,
            "half_extents": p.half_extents,
            "mass": p.mass,
            "mu": p.mu,
            "force_limit": p.force_limit,
            "drop_height": p.drop_height,
            "horizon": p.horizon,
            "target_x": p.target_x,
        }));
    }
    let path = args.out.join("manifest.json");
    let text = serde_json::to_string_pretty(&serde_json::json!({
        "seed": args.seed,
        "problems": manifest,
    }))
    .map_err(|e| CliError::Usage(e.to_string()))?;
    std::fs::write(&path, text).map_err(|e| io_error(&path, e))?;
    println!(
        "ocp-generate: {} reachable and {} unreachable problems (seed {}) in {}",
        args.reachable,
        args.unreachable,
        args.seed,
        args.out.display()
    );
    Ok(ExitCode::SUCCESS)
}
