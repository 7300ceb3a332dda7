//! `nonsmooth reproduce`: run the registered paper experiments.

use crate::CliError;
use clap::Args;
use nonsmooth_report::html::{write_report, ReportEntry};
use std::path::{Path, PathBuf};
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
    /// A full run without the parts needed only for a paper's timing table: the BDF(1)
    /// baselines of drumwright-foundation's Table 1 (their wall-time budgets are most of the
    /// main job's time); every check still runs.
    #[arg(long)]
    pub fast: bool,
    /// Output directory: DIR/ID/result.json, DIR/ID/*.svg, DIR/report.html.
    #[arg(long, default_value = "reproduce-out")]
    pub out: PathBuf,
    /// --quiet / --json (a JSON summary with one object per experiment).
    #[command(flatten)]
    pub output: crate::progress::OutputFlags,
}

pub fn run(args: &ReproduceArgs) -> Result<ExitCode, CliError> {
    let registry = nonsmooth_experiments::registry();
    if args.list {
        list(&registry, args.output.json);
        return Ok(ExitCode::SUCCESS);
    }
    let ids = selected_ids(&registry, args)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| nonsmooth_report::ReportError::io(&args.out, e))?;
    let (entries, all_passed) = run_experiments(&registry, &ids, args);
    // The report covers the experiments that ran (all of them with --all).
    let path = args.out.join("report.html");
    write_report(&path, &entries, args.quick)?;
    write_tables(&args.out, &entries)?;
    if args.output.json {
        outln!("{}", json_summary(&path, &entries, all_passed));
    } else if !args.output.quiet {
        outln!("report: {}", path.display());
    }
    Ok(if all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// `--list`: one line (or JSON object) per registered experiment.
fn list(registry: &nonsmooth_report::Registry, json: bool) {
    for e in registry.list() {
        if json {
            outln!(
                "{}",
                serde_json::json!({"id": e.id, "title": e.title, "paper": e.paper})
            );
        } else {
            outln!("{:<32} {} [{}]", e.id, e.title, e.paper);
        }
    }
}

/// The ids to run (`--all` or the named ones), each checked: registered and built in.
fn selected_ids(
    registry: &nonsmooth_report::Registry,
    args: &ReproduceArgs,
) -> Result<Vec<String>, CliError> {
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
        if let Some(feature) = nonsmooth_experiments::feature_left_out(id) {
            return Err(CliError::FeatureDisabled {
                what: format!("experiment `{id}`"),
                feature,
            });
        }
        if registry.get(id).is_none() {
            return Err(nonsmooth_report::ReportError::UnknownExperiment { id: id.clone() }.into());
        }
    }
    Ok(ids)
}

/// Runs `ids` in order with progress (and the previous run's times as an estimate); every
/// experiment's outcome or error, and whether none failed.
fn run_experiments(
    registry: &nonsmooth_report::Registry,
    ids: &[String],
    args: &ReproduceArgs,
) -> (Vec<ReportEntry>, bool) {
    let mut entries = Vec::new();
    let mut all_passed = true;
    let previous = previous_wall_times(&args.out, ids, args.quick, args.fast);
    if let Some(total) = estimate(&previous) {
        if !(args.output.quiet || args.output.json) {
            eprintln!(
                "{} experiments; the previous run in {} took {} in all",
                ids.len(),
                args.out.display(),
                duration(total)
            );
        }
    }
    let log = crate::progress::Log::new(
        ids.len() as u64,
        "reproducing",
        args.output.quiet || args.output.json,
    );
    for (i, id) in ids.iter().enumerate() {
        let eta = match (previous[i], estimate(&previous[i..])) {
            (Some(this), Some(left)) => {
                format!(
                    " (last run {}; about {} left)",
                    duration(this),
                    duration(left)
                )
            }
            (Some(this), None) => format!(" (last run {}; time left unknown)", duration(this)),
            _ => String::new(),
        };
        log.start(&format!("[{}/{}] {id}{eta}", i + 1, ids.len()));
        let progress = |msg: &str| log.detail(&format!("{id}: {msg}"));
        match registry.run_with(id, &args.out, args.quick, args.fast, &progress) {
            Ok(outcome) => {
                let verdict = outcome.verdict().label();
                all_passed &= outcome.verdict() != nonsmooth_report::Verdict::Fail;
                log.line(&format!("{id}: {verdict} ({:.2} s)", outcome.wall_time_s));
                for c in outcome.checks.iter().filter(|c| !c.passed) {
                    log.warn(&format!(
                        "{id}: check failed: {} = {} (expected {} ± {}, {})",
                        c.metric, c.value, c.expected, c.tolerance, c.source
                    ));
                }
                entries.push(ReportEntry::Ran(Box::new(outcome)));
            }
            Err(err) => {
                all_passed = false;
                log.warn(&format!("{id}: error: {err}"));
                let title = registry.get(id).map(|e| e.title).unwrap_or_default();
                entries.push(ReportEntry::Failed {
                    id: id.clone(),
                    title: title.to_string(),
                    error: err.to_string(),
                });
            }
        }
        log.advance();
    }
    log.finish();
    (entries, all_passed)
}

/// The papers' tables that several experiments fill (a row each), merged, with their
/// agreeing share: `tables.json` in `out`, beside the report.
fn write_tables(out: &Path, entries: &[ReportEntry]) -> Result<(), CliError> {
    let merged = nonsmooth_report::html::merged_tables(entries.iter().filter_map(|e| match e {
        ReportEntry::Ran(o) => Some(o.as_ref()),
        ReportEntry::Failed { .. } => None,
    }));
    let tables: Vec<serde_json::Value> = merged
        .iter()
        .map(|t| {
            let (agree, cells) = t.agreement();
            serde_json::json!({
                "name": t.name,
                "title": t.title,
                "agreeing_cells": agree,
                "measured_cells": cells,
                format!("{}_agreement", t.name): if cells > 0 { agree as f64 / cells as f64 } else { f64::NAN },
                "table": t,
            })
        })
        .collect();
    nonsmooth_report::table::write_json(&out.join("tables.json"), &tables)?;
    Ok(())
}

/// The `--json` summary: the report's path, the overall verdict and one object per experiment.
fn json_summary(path: &Path, entries: &[ReportEntry], all_passed: bool) -> serde_json::Value {
    let items: Vec<serde_json::Value> = entries
        .iter()
        .map(|e| match e {
            ReportEntry::Ran(o) => serde_json::json!({
                "id": o.id,
                "paper": o.paper,
                "passed": o.passed(),
                "verdict": o.verdict(),
                "checks": o.checks.len(),
                "checks_passed": o.checks.iter().filter(|c| c.passed).count(),
                "wall_time_s": o.wall_time_s,
            }),
            ReportEntry::Failed { id, error, .. } => serde_json::json!({
                "id": id,
                "passed": false,
                "error": error,
            }),
        })
        .collect();
    serde_json::json!({
        "report": path.display().to_string(),
        "passed": all_passed,
        "experiments": items,
    })
}

/// Wall time (s) of each experiment's previous run in `out` (its `result.json`), when that run
/// was in the same mode (quick, fast or full); `None` where there is none.
fn previous_wall_times(out: &Path, ids: &[String], quick: bool, fast: bool) -> Vec<Option<f64>> {
    ids.iter()
        .map(|id| {
            let text = std::fs::read_to_string(out.join(id).join("result.json")).ok()?;
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            let was_fast = v.get("fast").and_then(|f| f.as_bool()).unwrap_or(false);
            (v.get("quick")?.as_bool()? == quick && was_fast == fast)
                .then(|| v.get("wall_time_s")?.as_f64())
                .flatten()
        })
        .collect()
}

/// The sum of `times` when every entry is known.
fn estimate(times: &[Option<f64>]) -> Option<f64> {
    times.iter().copied().sum()
}

/// `s` seconds as "2.5 s", "12 s", "3.4 min" or "1.2 h".
fn duration(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 100.0 {
        format!("{s:.0} s")
    } else if s < 6000.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_needs_every_previous_time() {
        assert_eq!(estimate(&[Some(1.0), Some(2.5)]), Some(3.5));
        assert_eq!(estimate(&[Some(1.0), None]), None);
        assert_eq!(duration(2.5), "2.5 s");
        assert_eq!(duration(42.0), "42 s");
        assert_eq!(duration(600.0), "10.0 min");
        assert_eq!(duration(7200.0), "2.0 h");
    }

    #[test]
    fn previous_times_come_from_result_files_of_the_same_mode() {
        let dir = std::env::temp_dir().join(format!("nonsmooth-eta-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("a")).unwrap();
        std::fs::write(
            dir.join("a").join("result.json"),
            r#"{"quick": true, "wall_time_s": 2.5}"#,
        )
        .unwrap();
        let ids = vec!["a".to_string(), "b".to_string()];
        assert_eq!(
            previous_wall_times(&dir, &ids, true, false),
            vec![Some(2.5), None]
        );
        assert_eq!(
            previous_wall_times(&dir, &ids, false, false),
            vec![None, None]
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
