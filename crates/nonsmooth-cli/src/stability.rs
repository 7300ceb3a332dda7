//! `nonsmooth stability [MODEL.toml] --alpha A --mu1 M1 --mu2 M2 --d D --e E`: SOS Lyapunov
//! certificate (multi-V, Theorem 2 of seed 000) for the equilibrium of the planar body with
//! two frictional contacts, plus a falsification by simulation; prints JSON.
//!
//! The planar body is fully defined by the parameters (m = 1, unit radius of gyration,
//! g = 1, h = `--h`), so MODEL.toml is optional and only checked to exist (it names the
//! example for the record, e.g. `examples/sos_fig2.toml`). `--grid` sweeps the μ × d plane
//! (μ₁ with fixed `--mu2`, or μ₁ = μ₂ with `--equal-mu`) and writes `grid.svg` and
//! `grid.json` to `--out`.

use crate::CliError;
use clap::Args;
use nonsmooth_sos::grid::{linspace, sweep, GridSpec};
use nonsmooth_sos::lyapunov::{certify, CertifyOptions, FlightFormulation, Method};
use nonsmooth_sos::planar::PlanarParams;
use nonsmooth_sos::sim::{falsify, SimOptions};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct StabilityArgs {
    /// Optional model file (ignored beyond an existence check; the parameters define the body).
    pub model: Option<PathBuf>,
    /// Slope angle α in degrees.
    #[arg(long, default_value_t = 30.0)]
    pub alpha: f64,
    /// Friction coefficient of the uphill contact.
    #[arg(long, default_value_t = 1.0)]
    pub mu1: f64,
    /// Friction coefficient of the downhill contact.
    #[arg(long, default_value_t = 2.0)]
    pub mu2: f64,
    /// Half distance of the contacts.
    #[arg(long, default_value_t = 1.0)]
    pub d: f64,
    /// Restitution coefficient.
    #[arg(long, default_value_t = 0.0)]
    pub e: f64,
    /// Height of the centre of mass above the contacts.
    #[arg(long, default_value_t = 1.0)]
    pub h: f64,
    /// Also run the single-V (Posa–Tobenkin–Tedrake) baseline.
    #[arg(long)]
    pub ptt: bool,
    /// Sweep the μ × d plane instead of one point.
    #[arg(long)]
    pub grid: bool,
    /// Grid resolution per axis.
    #[arg(long, default_value_t = 6)]
    pub grid_n: usize,
    /// In a grid, vary μ₁ = μ₂ together (Fig. 3) instead of μ₁ with fixed μ₂ (Fig. 2).
    #[arg(long)]
    pub equal_mu: bool,
    /// Output directory of the grid files.
    #[arg(long, default_value = "stability-out")]
    pub out: PathBuf,
    /// --quiet (no progress lines, no JSON) / --json (the JSON result, the default output).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
    /// For e > 0 (single point): the free-flight condition
    /// (docs/decisions/000-sos-stability.md decision 7): `pre-impact` (the default, as `--grid`
    /// and `reproduce`), `after-impact` or `any-start` (V₂ sampled after the impacts, jointly
    /// infeasible on Fig. 3; kept for comparison).
    #[arg(long, default_value = "pre-impact")]
    pub flight: String,
}

fn usage(e: impl std::fmt::Display) -> CliError {
    CliError::Usage(e.to_string())
}

pub fn run(args: &StabilityArgs) -> Result<ExitCode, CliError> {
    if let Some(m) = &args.model {
        if !m.exists() {
            return Err(CliError::Usage(format!(
                "model file {} not found",
                m.display()
            )));
        }
    }
    let alpha = args.alpha.to_radians();
    if args.grid {
        let spec = GridSpec {
            alpha,
            mu2: (!args.equal_mu).then_some(args.mu2),
            e: args.e,
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
        let fig = nonsmooth_sos::figures::grid_figure(&res, "SOS certificates", axis);
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
        mu1: args.mu1,
        mu2: args.mu2,
        d: args.d,
        e: args.e,
        h: args.h,
    };
    let flight = match args.flight.as_str() {
        "pre-impact" => FlightFormulation::PreImpact,
        "after-impact" => FlightFormulation::AfterImpact,
        "any-start" => FlightFormulation::AnyStart,
        other => {
            return Err(usage(format!(
                "--flight: unknown formulation `{other}` (pre-impact, after-impact, any-start)"
            )))
        }
    };
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
