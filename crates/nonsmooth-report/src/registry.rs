//! The registry of paper experiments behind `nonsmooth reproduce`.
//!
//! Each capability registers [`Experiment`]s with a stable id (a contract: later tooling and
//! the issues name them). Running one writes `DIR/ID/result.json` with a `metrics` object
//! (name → number), the expected values with tolerances and their pass/fail, and the figures
//! (`DIR/ID/*.svg`) the experiment produced. `quick` asks for reduced sample counts or
//! durations with the same metric names.

use crate::table::write_json;
use crate::ReportError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What an experiment receives when it runs.
pub struct RunContext<'a> {
    /// The experiment's own output directory (`DIR/ID`), already created.
    pub out_dir: PathBuf,
    /// Reduced sample counts / durations where the experiment allows it.
    pub quick: bool,
    /// A full run without the parts needed only for a paper's timing table (each experiment
    /// says which it skips; the checks of the other parts still run).
    pub fast: bool,
    /// Progress messages for long work.
    pub progress: &'a dyn Fn(&str),
}

impl RunContext<'_> {
    /// Path of a file in the experiment's output directory.
    pub fn path(&self, file: &str) -> PathBuf {
        self.out_dir.join(file)
    }
}

/// A metric compared with an expected value (from a paper or an analytic solution).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// Name of the metric (a key of [`ExperimentOutcome::metrics`]).
    pub metric: String,
    /// The expected value (the paper's, or an analytic one).
    pub expected: f64,
    /// Absolute tolerance: passes when |value − expected| ≤ tolerance.
    pub tolerance: f64,
    /// Where the expected value comes from (e.g. "Drumwright 2019, Table 1" or "analytic").
    pub source: String,
    /// Our measured value.
    pub value: f64,
    /// Whether |value − expected| ≤ tolerance.
    pub passed: bool,
}

impl Check {
    /// Whether `value` passes this check: finite and within `tolerance` of `expected`.
    pub fn admits(&self, value: f64) -> bool {
        value.is_finite() && (value - self.expected).abs() <= self.tolerance
    }
}

/// A paper value beside ours (see [`ExperimentOutcome::reference`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// The metric compared.
    pub metric: String,
    /// The paper's value.
    pub paper: f64,
    /// Absolute tolerance of agreement.
    pub tolerance: f64,
    /// Where the paper's value is (table, figure).
    pub source: String,
    /// Our measured value.
    pub value: f64,
    /// Whether |value − paper| ≤ tolerance.
    pub agrees: bool,
}

/// One cell of a paper's table beside ours (see [`ExperimentOutcome::paper_table`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableCell {
    /// The metric that holds our value.
    pub metric: String,
    /// The paper's value.
    pub paper: f64,
    /// Our measured value (NaN when the run did not measure it).
    pub ours: f64,
    /// Absolute tolerance of agreement.
    pub tolerance: f64,
    /// Whether |ours − paper| ≤ tolerance.
    pub agrees: bool,
}

/// A row given to [`ExperimentOutcome::paper_table`]: its label and, per column,
/// `Some((metric, paper value, tolerance))` or `None` where the paper has no value.
pub type TableRow = (String, Vec<Option<(String, f64, f64)>>);

/// A table of a paper, cell by cell beside ours, with the share of agreeing cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperTable {
    /// Short name; the metric `<name>_agreement` holds the agreeing share.
    pub name: String,
    /// Title, with the table's place in the paper.
    pub title: String,
    /// Column headers.
    pub columns: Vec<String>,
    /// Rows: a label and one cell per column (`None` where the paper has no value).
    pub rows: Vec<(String, Vec<Option<TableCell>>)>,
}

impl PaperTable {
    /// (agreeing cells, cells compared): cells the run did not measure are not compared.
    pub fn agreement(&self) -> (usize, usize) {
        let cells = self.rows.iter().flat_map(|(_, r)| r.iter().flatten());
        let measured: Vec<&TableCell> = cells.filter(|c| c.ours.is_finite()).collect();
        (measured.iter().filter(|c| c.agrees).count(), measured.len())
    }
}

/// Everything an experiment produced; serialized as `result.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ExperimentOutcome {
    /// The experiment's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The paper (seed) and section it reproduces.
    pub paper: String,
    /// Whether it ran in quick mode.
    pub quick: bool,
    /// Whether it ran with `--fast` (timing-only parts skipped).
    #[serde(default)]
    pub fast: bool,
    /// Measured metrics, name → value.
    pub metrics: BTreeMap<String, f64>,
    /// Comparisons of metrics with expected values.
    pub checks: Vec<Check>,
    /// Paper values beside ours where they are compared, not checked (a documented
    /// disagreement does not fail the experiment; the report shows agree / disagree).
    #[serde(default)]
    pub references: Vec<Reference>,
    /// The paper's tables beside ours, cell by cell (shown, not checked).
    #[serde(default)]
    pub tables: Vec<PaperTable>,
    /// File names (relative to the experiment directory) of figures.
    pub figures: Vec<String>,
    /// Other data files written (CSV, JSON).
    pub files: Vec<String>,
    /// Trajectory-viewer pages (relative to the experiment directory) the report embeds.
    #[serde(default)]
    pub players: Vec<String>,
    /// Free-text remarks shown in the report.
    pub notes: Vec<String>,
    /// Wall-clock run time in seconds.
    pub wall_time_s: f64,
}

impl ExperimentOutcome {
    /// Records a metric.
    pub fn metric(&mut self, name: &str, value: f64) {
        self.metrics.insert(name.to_string(), value);
    }

    /// Compares the already recorded metric `name` with `expected` ± `tolerance`. A missing
    /// or non-finite metric fails.
    pub fn expect(&mut self, name: &str, expected: f64, tolerance: f64, source: &str) {
        let value = self.metrics.get(name).copied().unwrap_or(f64::NAN);
        let mut check = Check {
            metric: name.to_string(),
            expected,
            tolerance,
            source: source.to_string(),
            value,
            passed: false,
        };
        check.passed = check.admits(value);
        self.checks.push(check);
    }

    /// The checks evaluated again on `metrics` instead of the recorded ones (a metric missing
    /// there fails). The mutation test feeds it metrics moved outside their tolerances to show
    /// that each check can fail.
    pub fn rechecked(&self, metrics: &BTreeMap<String, f64>) -> Vec<Check> {
        self.checks
            .iter()
            .map(|c| {
                let value = metrics.get(&c.metric).copied().unwrap_or(f64::NAN);
                Check {
                    value,
                    passed: c.admits(value),
                    ..c.clone()
                }
            })
            .collect()
    }

    /// Puts the paper's value `paper` beside the already recorded metric `name`: agreeing
    /// within `tolerance`, or not. Unlike [`ExperimentOutcome::expect`] a disagreement does not
    /// fail the experiment; it is shown as such in the report (use it where the difference is
    /// explained, and say why in a note).
    pub fn reference(&mut self, name: &str, paper: f64, tolerance: f64, source: &str) {
        let value = self.metrics.get(name).copied().unwrap_or(f64::NAN);
        self.references.push(Reference {
            metric: name.to_string(),
            paper,
            tolerance,
            source: source.to_string(),
            value,
            agrees: value.is_finite() && (value - paper).abs() <= tolerance,
        });
    }

    /// Puts a paper's table beside this run's metrics, cell by cell: `rows` are (label,
    /// cells), each cell `Some((metric, paper value, tolerance))` or `None` where the paper
    /// has no value. Records the metric `<name>_agreement` (agreeing cells / measured cells;
    /// a cell whose metric this run did not record is left out) and returns (agreeing,
    /// measured). Like [`ExperimentOutcome::reference`] it does not fail the experiment.
    pub fn paper_table(
        &mut self,
        name: &str,
        title: &str,
        columns: &[&str],
        rows: Vec<TableRow>,
    ) -> (usize, usize) {
        let rows = rows
            .into_iter()
            .map(|(label, cells)| {
                let cells = cells
                    .into_iter()
                    .map(|cell| {
                        cell.map(|(metric, paper, tolerance)| {
                            let ours = self.metrics.get(&metric).copied().unwrap_or(f64::NAN);
                            TableCell {
                                agrees: ours.is_finite() && (ours - paper).abs() <= tolerance,
                                metric,
                                paper,
                                ours,
                                tolerance,
                            }
                        })
                    })
                    .collect();
                (label, cells)
            })
            .collect();
        let table = PaperTable {
            name: name.to_string(),
            title: title.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
        };
        let (agree, total) = table.agreement();
        if total > 0 {
            self.metric(&format!("{name}_agreement"), agree as f64 / total as f64);
        }
        self.tables.push(table);
        (agree, total)
    }

    /// Records a figure file name.
    pub fn figure(&mut self, file: &str) {
        self.figures.push(file.to_string());
    }

    /// Records a trajectory-viewer page (written with
    /// [`crate::viewer::write_viewer_html`]) that the report embeds as a player.
    pub fn player(&mut self, file: &str) {
        self.players.push(file.to_string());
    }

    /// Records a data file name.
    pub fn file(&mut self, file: &str) {
        self.files.push(file.to_string());
    }

    /// True when it has checks and every one passed (an experiment without checks has not
    /// passed anything: [`Verdict::NoChecks`]).
    pub fn passed(&self) -> bool {
        self.verdict() == Verdict::Pass
    }

    /// Pass (checks, all passed), fail (a check failed) or no checks.
    pub fn verdict(&self) -> Verdict {
        if self.checks.is_empty() {
            Verdict::NoChecks
        } else if self.checks.iter().all(|c| c.passed) {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
}

/// What an experiment's checks say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// It has checks and all passed.
    Pass,
    /// A check failed.
    Fail,
    /// It has no checks: it measured, it did not pass.
    NoChecks,
}

impl Verdict {
    /// `pass`, `FAIL` or `no checks`, as the report and the CLI print it.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::NoChecks => "no checks",
        }
    }
}

/// The function that runs an experiment and fills its outcome.
pub type ExperimentFn = fn(&RunContext, &mut ExperimentOutcome) -> Result<(), ReportError>;

/// A registered paper experiment.
#[derive(Clone)]
pub struct Experiment {
    /// Stable identifier, e.g. `sim-stiff-pendulum`.
    pub id: &'static str,
    /// One-line title.
    pub title: &'static str,
    /// Paper (seed) and section it reproduces.
    pub paper: &'static str,
    /// The function that runs it.
    pub run: ExperimentFn,
}

/// All registered experiments, in registration order.
#[derive(Clone, Default)]
pub struct Registry {
    experiments: Vec<Experiment>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds experiments; ids must be unique (a duplicate replaces nothing and is reported).
    pub fn register(&mut self, experiments: impl IntoIterator<Item = Experiment>) {
        for e in experiments {
            assert!(
                self.get(e.id).is_none(),
                "experiment id `{}` registered twice",
                e.id
            );
            self.experiments.push(e);
        }
    }

    /// Every experiment.
    pub fn list(&self) -> &[Experiment] {
        &self.experiments
    }

    /// The experiment called `id`.
    pub fn get(&self, id: &str) -> Option<&Experiment> {
        self.experiments.iter().find(|e| e.id == id)
    }

    /// Runs experiment `id` into `out/ID/` and writes `out/ID/result.json`.
    pub fn run(
        &self,
        id: &str,
        out: &Path,
        quick: bool,
        progress: &dyn Fn(&str),
    ) -> Result<ExperimentOutcome, ReportError> {
        self.run_with(id, out, quick, false, progress)
    }

    /// [`Registry::run`], with `fast` skipping the parts needed only for a paper's timing
    /// table ([`RunContext::fast`]).
    pub fn run_with(
        &self,
        id: &str,
        out: &Path,
        quick: bool,
        fast: bool,
        progress: &dyn Fn(&str),
    ) -> Result<ExperimentOutcome, ReportError> {
        let exp = self
            .get(id)
            .ok_or_else(|| ReportError::UnknownExperiment { id: id.to_string() })?;
        let dir = out.join(exp.id);
        std::fs::create_dir_all(&dir).map_err(|e| ReportError::io(&dir, e))?;
        let ctx = RunContext {
            out_dir: dir.clone(),
            quick,
            fast,
            progress,
        };
        let mut outcome = ExperimentOutcome {
            id: exp.id.to_string(),
            title: exp.title.to_string(),
            paper: exp.paper.to_string(),
            quick,
            fast,
            ..Default::default()
        };
        let start = Instant::now();
        (exp.run)(&ctx, &mut outcome)?;
        outcome.wall_time_s = start.elapsed().as_secs_f64();
        write_json(&dir.join("result.json"), &ResultFile::from(&outcome))?;
        Ok(outcome)
    }
}

/// The on-disk form of `result.json`.
#[derive(Serialize)]
struct ResultFile<'a> {
    id: &'a str,
    title: &'a str,
    paper: &'a str,
    quick: bool,
    fast: bool,
    passed: bool,
    verdict: Verdict,
    metrics: &'a BTreeMap<String, f64>,
    checks: &'a [Check],
    references: &'a [Reference],
    tables: &'a [PaperTable],
    figures: &'a [String],
    players: &'a [String],
    files: &'a [String],
    notes: &'a [String],
    wall_time_s: f64,
}

impl<'a> From<&'a ExperimentOutcome> for ResultFile<'a> {
    fn from(o: &'a ExperimentOutcome) -> Self {
        ResultFile {
            id: &o.id,
            title: &o.title,
            paper: &o.paper,
            quick: o.quick,
            fast: o.fast,
            passed: o.passed(),
            verdict: o.verdict(),
            metrics: &o.metrics,
            checks: &o.checks,
            references: &o.references,
            tables: &o.tables,
            figures: &o.figures,
            players: &o.players,
            files: &o.files,
            notes: &o.notes,
            wall_time_s: o.wall_time_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
        let n = if ctx.quick { 3.0 } else { 4.0 };
        out.metric("square", n * n);
        out.expect("square", 16.0, 1e-12, "analytic");
        Ok(())
    }

    #[test]
    fn run_writes_result_json_with_metrics_and_checks() {
        let mut reg = Registry::new();
        reg.register([Experiment {
            id: "demo-square",
            title: "square",
            paper: "none",
            run: square,
        }]);
        let out = std::env::temp_dir().join(format!("nonsmooth-reg-{}", std::process::id()));
        let full = reg.run("demo-square", &out, false, &|_| {}).unwrap();
        assert!(full.passed());
        let quick = reg.run("demo-square", &out, true, &|_| {}).unwrap();
        assert!(!quick.passed());
        assert_eq!(quick.verdict(), Verdict::Fail);
        // Without checks: not a pass.
        let empty = ExperimentOutcome::default();
        assert_eq!(empty.verdict(), Verdict::NoChecks);
        assert!(!empty.passed());
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join("demo-square/result.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(json["metrics"]["square"].as_f64(), Some(9.0));
        assert_eq!(json["passed"].as_bool(), Some(false));
        assert!(matches!(
            reg.run("nope", &out, true, &|_| {}),
            Err(ReportError::UnknownExperiment { .. })
        ));
        // `fast` reaches the experiment and is recorded, with the paper tables.
        fn fast_only(ctx: &RunContext, out: &mut ExperimentOutcome) -> Result<(), ReportError> {
            out.metric("fast", f64::from(u8::from(ctx.fast)));
            out.paper_table(
                "t",
                "T",
                &["c"],
                vec![("r".into(), vec![Some(("fast".into(), 1.0, 0.5))])],
            );
            Ok(())
        }
        reg.register([Experiment {
            id: "demo-fast",
            title: "fast",
            paper: "none",
            run: fast_only,
        }]);
        let fast = reg
            .run_with("demo-fast", &out, false, true, &|_| {})
            .unwrap();
        assert!(fast.fast && fast.metrics["fast"] == 1.0);
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join("demo-fast/result.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(json["fast"].as_bool(), Some(true));
        assert_eq!(json["tables"][0]["name"].as_str(), Some("t"));
        std::fs::remove_dir_all(&out).ok();
    }
}
