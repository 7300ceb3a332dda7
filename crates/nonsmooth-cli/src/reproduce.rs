//! `nonsmooth reproduce`: run the registered paper experiments.

use crate::CliError;
use clap::Args;
use nonsmooth_report::html::{write_report, ReportEntry};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ReproduceArgs {
    /// Experiment ids to run (see --list).
    pub ids: Vec<String>,
    /// Run every registered experiment and write DIR/report.html.
    #[arg(long)]
    pub all: bool,
    /// List the registered experiments and exit.
    #[arg(long)]
    pub list: bool,
    /// Reduced sample counts / durations (same metric names).
    #[arg(long)]
    pub quick: bool,
    /// Output directory: DIR/ID/result.json, DIR/ID/*.svg, DIR/report.html.
    #[arg(long, default_value = "reproduce-out")]
    pub out: PathBuf,
}

pub fn run(args: &ReproduceArgs) -> Result<ExitCode, CliError> {
    let registry = nonsmooth_experiments::registry();
    if args.list {
        for e in registry.list() {
            outln!("{:<32} {} [{}]", e.id, e.title, e.paper);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let ids: Vec<String> = if args.all {
        registry.list().iter().map(|e| e.id.to_string()).collect()
    } else if args.ids.is_empty() {
        return Err(CliError::Usage(
            "name experiment ids, or pass --all or --list".into(),
        ));
    } else {
        args.ids.clone()
    };
    for id in &ids {
        if registry.get(id).is_none() {
            return Err(nonsmooth_report::ReportError::UnknownExperiment { id: id.clone() }.into());
        }
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| nonsmooth_report::ReportError::io(&args.out, e))?;
    let mut entries = Vec::new();
    let mut all_passed = true;
    for (i, id) in ids.iter().enumerate() {
        eprintln!("[{}/{}] {id} ...", i + 1, ids.len());
        let progress = |msg: &str| eprintln!("    {id}: {msg}");
        match registry.run(id, &args.out, args.quick, &progress) {
            Ok(outcome) => {
                let verdict = if outcome.passed() { "pass" } else { "FAIL" };
                all_passed &= outcome.passed();
                eprintln!("    {verdict} ({:.2} s)", outcome.wall_time_s);
                for c in outcome.checks.iter().filter(|c| !c.passed) {
                    eprintln!(
                        "    check failed: {} = {} (expected {} ± {}, {})",
                        c.metric, c.value, c.expected, c.tolerance, c.source
                    );
                }
                entries.push(ReportEntry::Ran(outcome));
            }
            Err(err) => {
                all_passed = false;
                eprintln!("    error: {err}");
                let title = registry.get(id).map(|e| e.title).unwrap_or_default();
                entries.push(ReportEntry::Failed {
                    id: id.clone(),
                    title: title.to_string(),
                    error: err.to_string(),
                });
            }
        }
    }
    if args.all {
        let path = args.out.join("report.html");
        write_report(&path, &entries, args.quick)?;
        outln!("report: {}", path.display());
    }
    Ok(if all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
