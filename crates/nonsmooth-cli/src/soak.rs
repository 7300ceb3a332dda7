//! `nonsmooth soak`: long runs that must stay finite, bounded and lean.
//!
//! Scenarios (model files embedded from `examples/`):
//! - `stack`: the 10-sphere Hertz stack of Drumwright's constraint-solver paper (§6.5;
//!   `drumwright`, h = 0.01 s);
//! - `quadruped`: the passive quadruped of `examples/quadruped.toml` dropped on rigid ground
//!   (`anitescu-potra`, h = 1 ms), which settles and then must stay put.
//!
//! Checks, each reported in `soak.json` (`checks`: name, value, limit, pass) and failing the
//! command when violated; a failed run names its failed step or each failed check with its
//! value and limit (`failure`, and a console line):
//! - every state finite (a stepper error or non-finite value ends the run as a failure);
//! - energy bound: `T + V_gravity` never exceeds its initial value by more than
//!   `1e-6 · (1 + |E₀|)` (the systems are passive and the contact dissipative);
//! - drift: once settled (after the first 10 % of the steps, and not before the scenario's
//!   settling time: 2 s for the stack, 3 s for the quadruped), no coordinate moves by more
//!   than 1 mm (or 1 mrad) by the end; runs too short to settle skip this check;
//! - memory: resident set size grows by at most 16 MiB between 10 % and the end
//!   (read from `/proc/self/statm`; skipped where that file does not exist).

use crate::CliError;
use clap::{Args, ValueEnum};
use nonsmooth_core::dynamics::{kinetic_energy, potential_energy};
use nonsmooth_core::{Model, State};
use nonsmooth_report::table::write_json;
use nonsmooth_report::{Figure, Series};
use nonsmooth_sim::Simulator;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

const STACK: &str = include_str!("../../../examples/drumwright_stack.toml");
const QUADRUPED: &str = include_str!("../../../examples/quadruped.toml");

/// Largest allowed growth of the resident set after the first 10 % of the steps.
const MAX_RSS_GROWTH_BYTES: f64 = 16.0 * 1024.0 * 1024.0;
/// Largest allowed coordinate drift after settling (m or rad).
const MAX_DRIFT: f64 = 1e-3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Scenario {
    Stack,
    Quadruped,
    All,
}

#[derive(Args)]
pub struct SoakArgs {
    /// Which scenario to run.
    #[arg(long, value_enum, default_value = "all")]
    pub scenario: Scenario,
    /// Steps per scenario (the full soak is 10⁶).
    #[arg(long, default_value_t = 1_000_000)]
    pub steps: usize,
    /// Output directory for soak.json and the energy plots.
    #[arg(long, default_value = "out/soak")]
    pub out: PathBuf,
    /// --quiet (no progress lines, no summary) / --json (print soak.json on standard output).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
}

struct Setup {
    id: &'static str,
    model: Model,
    stepper: &'static str,
    h: f64,
    /// Simulated time after which the system is expected to be at rest.
    settle_time: f64,
}

fn setups(which: Scenario) -> Result<Vec<Setup>, CliError> {
    let mut all = Vec::new();
    if matches!(which, Scenario::Stack | Scenario::All) {
        all.push(Setup {
            id: "stack",
            model: Model::from_toml_str(STACK, Some("examples/drumwright_stack.toml"))?,
            stepper: "drumwright",
            h: 0.01,
            settle_time: 2.0,
        });
    }
    if matches!(which, Scenario::Quadruped | Scenario::All) {
        all.push(Setup {
            id: "quadruped",
            model: Model::from_toml_str(QUADRUPED, Some("examples/quadruped.toml"))?,
            stepper: "anitescu-potra",
            h: 1e-3,
            settle_time: 3.0,
        });
    }
    Ok(all)
}

fn resident_bytes() -> Option<f64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: f64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096.0)
}

fn energy(model: &Model, s: &State) -> f64 {
    kinetic_energy(model, &s.q, &s.v) + potential_energy(model, &s.q)
}

/// Runs one scenario; returns its JSON record and whether every check passed.
fn soak_one(
    setup: &Setup,
    steps: usize,
    args: &SoakArgs,
) -> Result<(serde_json::Value, bool), CliError> {
    let model = &setup.model;
    // The one time loop with its step recovery: the Simulator, commands at zero.
    let mut sim = Simulator::new(model.clone(), setup.stepper, setup.h)?;
    let zeros = vec![0.0; model.nu()];
    let mut state = model.initial_state.clone();
    let e0 = energy(model, &state);
    let settle = (steps / 10).max((setup.settle_time / setup.h).ceil() as usize);
    let (mut settled, mut rss_settled) = (None, None);
    let mut max_rise = f64::NEG_INFINITY;
    let stride = (steps / 500).max(1);
    let log = crate::progress::Log::new(
        10,
        &format!("soak {}", setup.id),
        args.output.quiet || args.output.json,
    );
    let mut curve = Vec::new();
    let start = Instant::now();
    let mut failure = None;
    for i in 1..=steps {
        state = match sim.step(&zeros) {
            Ok(()) => sim.state().clone(),
            Err(e) => {
                failure = Some(format!("step {i} at t = {}: {e}", state.t));
                break;
            }
        };
        let e = energy(model, &state);
        if !e.is_finite() {
            failure = Some(format!("step {i}: non-finite energy"));
            break;
        }
        max_rise = max_rise.max(e - e0);
        if i == settle {
            settled = Some(state.clone());
            rss_settled = resident_bytes();
        }
        if i % stride == 0 {
            curve.push((state.t, e));
            if i % (stride * 50) == 0 {
                log.detail(&format!(
                    "soak {}: {i}/{steps} steps, t = {:.1} s",
                    setup.id, state.t
                ));
                log.advance();
            }
        }
    }
    log.finish();
    let wall = start.elapsed().as_secs_f64();
    // `None` when the run is too short to reach the settled phase: the check is skipped.
    let drift = settled.as_ref().map(|s| (&s.q - &state.q).amax());
    let rss_growth = match (rss_settled, resident_bytes()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let energy_limit = 1e-6 * (1.0 + e0.abs());
    let checks = [
        Check::new("energy_rise", "J", Some(max_rise), energy_limit),
        Check::new("drift_after_settling", "m or rad", drift, MAX_DRIFT),
        Check::new("rss_growth", "bytes", rss_growth, MAX_RSS_GROWTH_BYTES),
    ];
    let (energy_ok, drift_ok, memory_ok) = (checks[0].pass, checks[1].pass, checks[2].pass);
    let pass = failure.is_none() && checks.iter().all(|c| c.pass);
    // The run's failure: the failed step, else every check that failed, with its value and
    // limit.
    let failure = failure.or_else(|| {
        let failed: Vec<String> = checks
            .iter()
            .filter(|c| !c.pass)
            .map(Check::describe)
            .collect();
        (!failed.is_empty()).then(|| failed.join("; "))
    });
    let mut fig = Figure::new(
        format!("soak {}: energy over time ({})", setup.id, setup.stepper),
        "t [s]",
        "T + V [J]",
    );
    fig.series.push(Series::line("energy", curve));
    fig.write_svg(&args.out.join(format!("soak_{}.svg", setup.id)))?;
    let record = serde_json::json!({
        "scenario": setup.id,
        "stepper": setup.stepper,
        "h": setup.h,
        "steps": steps,
        "wall_time_s": wall,
        "us_per_step": 1e6 * wall / steps.max(1) as f64,
        "failure": failure,
        "recoveries": sim.counters().recoveries,
        "initial_energy": e0,
        "max_energy_rise": max_rise,
        "drift_after_settling": drift,
        "rss_growth_bytes": rss_growth,
        "energy_ok": energy_ok,
        "drift_ok": drift_ok,
        "memory_ok": memory_ok,
        "checks": checks,
        "pass": pass,
    });
    Ok((record, pass))
}

/// One check of a soak run: its value against its limit (`value ≤ limit`); a run too short
/// for the check (no value) passes it as skipped.
#[derive(Debug, Clone, serde::Serialize)]
struct Check {
    name: &'static str,
    unit: &'static str,
    value: Option<f64>,
    limit: f64,
    pass: bool,
}

impl Check {
    fn new(name: &'static str, unit: &'static str, value: Option<f64>, limit: f64) -> Self {
        Check {
            name,
            unit,
            value,
            limit,
            pass: value.is_none_or(|v| v <= limit),
        }
    }

    /// `drift_after_settling = 1.94e-1 m or rad > limit 1e-3`.
    fn describe(&self) -> String {
        match self.value {
            Some(v) => format!(
                "{} = {v:.3e} {} > limit {:.0e}",
                self.name, self.unit, self.limit
            ),
            None => format!("{}: not measured", self.name),
        }
    }
}

pub fn run(args: &SoakArgs) -> Result<ExitCode, CliError> {
    if args.steps < 10 {
        return Err(CliError::Usage(format!(
            "--steps must be at least 10, got {}",
            args.steps
        )));
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| nonsmooth_report::ReportError::io(&args.out, e))?;
    let mut records = Vec::new();
    let mut all_pass = true;
    for setup in setups(args.scenario)? {
        let (record, pass) = soak_one(&setup, args.steps, args)?;
        if !args.output.quiet && !args.output.json {
            outln!(
                "soak {}: {} ({} steps, {:.1} µs/step, energy rise {:.2e} J, drift {:.2e})",
                setup.id,
                if pass { "pass" } else { "FAIL" },
                args.steps,
                record["us_per_step"].as_f64().unwrap_or(f64::NAN),
                record["max_energy_rise"].as_f64().unwrap_or(f64::NAN),
                record["drift_after_settling"].as_f64().unwrap_or(f64::NAN),
            );
            if let Some(why) = record["failure"].as_str() {
                outln!("soak {}: failed: {why}", setup.id);
            }
        }
        all_pass &= pass;
        records.push(record);
    }
    let report = serde_json::json!({ "runs": records, "pass": all_pass });
    write_json(&args.out.join("soak.json"), &report)?;
    if args.output.json {
        outln!("{report}");
    }
    Ok(if all_pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
