//! The HTML reproduction report: one section per experiment with its metrics, its checks
//! against the paper (pass/fail) and its figures.

use crate::registry::{ExperimentOutcome, Verdict};
use crate::ReportError;
use std::fmt::Write as _;
use std::path::Path;

/// The result of running one experiment for the report: its outcome, or why it failed.
pub enum ReportEntry {
    /// The experiment ran (its checks may still have failed).
    Ran(Box<ExperimentOutcome>),
    /// The experiment returned an error before producing an outcome.
    Failed {
        /// Experiment id.
        id: String,
        /// Experiment title.
        title: String,
        /// The error message.
        error: String,
    },
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn number(x: f64) -> String {
    if x == 0.0 || (1e-3..1e6).contains(&x.abs()) {
        format!("{x:.6}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        format!("{x:.4e}")
    }
}

/// Renders the report as an HTML page whose figures are links relative to the report's
/// directory (`ID/figure.svg`). [`write_report`] embeds the figures inline instead.
pub fn render_report(entries: &[ReportEntry], quick: bool) -> String {
    render(entries, quick, None)
}

/// Renders the report as a self-contained page: every figure `DIR/ID/NAME.svg` that can be
/// read is embedded as inline SVG (no network, no external files needed); unreadable ones
/// fall back to a relative link.
pub fn render_report_inline(entries: &[ReportEntry], quick: bool, dir: &Path) -> String {
    render(entries, quick, Some(dir))
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em;color:#222}\
table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#eee}td.l,th.l{text-align:left}.pass{color:#080;font-weight:bold}.fail{color:#c00;font-weight:bold}.nochecks{color:#a60;font-weight:bold}\
figure{margin:6px 0;border:1px solid #ddd;padding:4px}figure svg{max-width:100%;height:auto;display:block}\
img{max-width:100%}figcaption{font-size:smaller;color:#555}h2{border-bottom:2px solid #888;margin-top:2em}";

fn entry_key(e: &ReportEntry) -> (&str, &str, Verdict, usize, usize, f64) {
    match e {
        ReportEntry::Ran(o) => (
            o.id.as_str(),
            o.title.as_str(),
            o.verdict(),
            o.checks.iter().filter(|c| c.passed).count(),
            o.checks.len(),
            o.wall_time_s,
        ),
        ReportEntry::Failed { id, title, .. } => {
            (id.as_str(), title.as_str(), Verdict::Fail, 0, 0, 0.0)
        }
    }
}

/// The paper an experiment belongs to, for grouping: the text of its paper string before the
/// first `(` or `,` (e.g. `Zapolsky & Drumwright`, `Drumwright 2019`).
fn paper_group(paper: &str) -> String {
    let end = paper.find(['(', ',']).unwrap_or(paper.len());
    let head = paper[..end].trim();
    if head.is_empty() {
        "other".to_string()
    } else {
        head.to_string()
    }
}

fn paper_of(e: &ReportEntry) -> String {
    match e {
        ReportEntry::Ran(o) => paper_group(&o.paper),
        ReportEntry::Failed { .. } => "other".to_string(),
    }
}

fn render(entries: &[ReportEntry], quick: bool, dir: Option<&Path>) -> String {
    let mut html = String::new();
    let passed = entries
        .iter()
        .filter(|e| matches!(e, ReportEntry::Ran(o) if o.passed()))
        .count();
    let no_checks = entries
        .iter()
        .filter(|e| matches!(e, ReportEntry::Ran(o) if o.verdict() == Verdict::NoChecks))
        .count();
    let total_time: f64 = entries.iter().map(|e| entry_key(e).5).sum();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width\"><title>nonsmooth reproduction report</title>\
<style>{STYLE}</style></head><body>\n\
<h1>nonsmooth: reproduction of the papers' experiments</h1>\n\
<p>{passed} of {} experiments pass all their checks ({no_checks} without checks: they \
measure, they do not pass){} — total run time {:.1} s.</p>\n",
        entries.len(),
        if quick {
            " (quick mode: reduced sample counts and durations)"
        } else {
            ""
        },
        total_time
    );
    // Papers in order of first appearance.
    let mut papers: Vec<String> = Vec::new();
    for e in entries {
        let p = paper_of(e);
        if !papers.contains(&p) {
            papers.push(p);
        }
    }
    html.push_str("<table id=\"summary\"><tr><th class=\"l\">paper</th><th class=\"l\">experiment</th><th class=\"l\">title</th><th>checks passed</th><th>run time [s]</th><th>verdict</th></tr>\n");
    for paper in &papers {
        for e in entries.iter().filter(|e| paper_of(e) == **paper) {
            let (id, title, ok, np, nc, time) = entry_key(e);
            let _ = writeln!(
                html,
                "<tr><td class=\"l\">{}</td><td class=\"l\"><a href=\"#{id}\">{id}</a></td><td class=\"l\">{}</td><td>{np}/{nc}</td><td>{time:.2}</td><td class=\"{}\">{}</td></tr>",
                escape(paper),
                escape(title),
                match ok {
                    Verdict::Pass => "pass",
                    Verdict::Fail => "fail",
                    Verdict::NoChecks => "nochecks",
                },
                ok.label()
            );
        }
    }
    html.push_str("</table>\n");
    for paper in &papers {
        let _ = writeln!(html, "<h2>{}</h2>", escape(paper));
        for e in entries.iter().filter(|e| paper_of(e) == **paper) {
            match e {
                ReportEntry::Failed { id, title, error } => {
                    let _ = writeln!(
                        html,
                        "<h3 id=\"{id}\">{id}: {}</h3><p class=\"fail\">error: {}</p>",
                        escape(title),
                        escape(error)
                    );
                }
                ReportEntry::Ran(o) => render_outcome(&mut html, o, dir),
            }
        }
        let merged = merged_tables(entries.iter().filter_map(|e| match e {
            ReportEntry::Ran(o) if paper_of(e) == **paper => Some(o.as_ref()),
            _ => None,
        }));
        if !merged.is_empty() {
            html.push_str("<h3>Tables across experiments</h3>\n");
            for t in &merged {
                render_paper_table(&mut html, t);
            }
        }
    }
    // Marks the page with the number of figures that failed to render, for headless checks
    // (scripts/report_check.sh); inline SVG cannot fail, linked images can.
    html.push_str(
        "<script>window.addEventListener('load',function(){var b=0;\
document.querySelectorAll('img').forEach(function(i){if(!i.complete||i.naturalWidth===0){b++;}});\
document.documentElement.setAttribute('data-broken-images',String(b));\
document.documentElement.setAttribute('data-figures',String(document.querySelectorAll('figure').length));});</script>\n",
    );
    html.push_str("</body></html>\n");
    html
}

/// The SVG document `text` without its XML prolog and doctype, ready to inline in HTML.
fn inline_svg(text: &str) -> Option<&str> {
    let start = text.find("<svg")?;
    let end = text.rfind("</svg>")? + "</svg>".len();
    (start < end).then(|| &text[start..end])
}

fn render_outcome(html: &mut String, o: &ExperimentOutcome, dir: Option<&Path>) {
    let _ = writeln!(
        html,
        "<h3 id=\"{0}\">{0}: {1}</h3>\n<p>{3} — run time {2:.2} s{4} — <a href=\"{0}/result.json\">result.json</a></p>",
        o.id,
        escape(&o.title),
        o.wall_time_s,
        escape(&o.paper),
        if o.fast { " (--fast: timing-only parts skipped)" } else { "" }
    );
    if !o.checks.is_empty() {
        html.push_str("<table class=\"checks\"><tr><th class=\"l\">metric</th><th>paper value</th><th>ours</th><th>tolerance</th><th class=\"l\">source</th><th>pass</th></tr>\n");
        for c in &o.checks {
            let _ = writeln!(
                html,
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"{}\">{}</td></tr>",
                escape(&c.metric),
                number(c.expected),
                number(c.value),
                number(c.tolerance),
                escape(&c.source),
                if c.passed { "pass" } else { "fail" },
                if c.passed { "pass" } else { "FAIL" }
            );
        }
        html.push_str("</table>\n");
    }
    if !o.references.is_empty() {
        html.push_str("<table class=\"references\"><tr><th class=\"l\">metric</th><th>paper value</th><th>ours</th><th>tolerance</th><th class=\"l\">source</th><th>agreement</th></tr>\n");
        for r in &o.references {
            let _ = writeln!(
                html,
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"{}\">{}</td></tr>",
                escape(&r.metric),
                number(r.paper),
                number(r.value),
                number(r.tolerance),
                escape(&r.source),
                if r.agrees { "pass" } else { "nochecks" },
                if r.agrees { "agrees" } else { "disagrees (not a check)" }
            );
        }
        html.push_str("</table>\n");
    }
    for t in &o.tables {
        render_paper_table(html, t);
    }
    if !o.metrics.is_empty() {
        html.push_str("<details><summary>all metrics</summary><table><tr><th class=\"l\">metric</th><th>value</th></tr>\n");
        for (name, value) in &o.metrics {
            let _ = writeln!(
                html,
                "<tr><td class=\"l\">{}</td><td>{}</td></tr>",
                escape(name),
                number(*value)
            );
        }
        html.push_str("</table></details>\n");
    }
    for note in &o.notes {
        let _ = writeln!(html, "<p>{}</p>", escape(note));
    }
    for player in &o.players {
        // The viewer page next to the report (self-contained, offline); scrub it in place.
        let _ = writeln!(
            html,
            "<figure class=\"player\"><iframe src=\"{0}/{1}\" title=\"{1}\" loading=\"lazy\" \
             style=\"width:100%;height:560px;border:1px solid #ccc\"></iframe>\
             <figcaption>{1} (trajectory viewer)</figcaption></figure>",
            o.id,
            escape(player)
        );
    }
    for fig in &o.figures {
        let text = dir.and_then(|d| std::fs::read_to_string(d.join(&o.id).join(fig)).ok());
        match text.as_deref().and_then(inline_svg) {
            Some(svg) => {
                let _ = writeln!(
                    html,
                    "<figure>{svg}<figcaption>{}</figcaption></figure>",
                    escape(fig)
                );
            }
            None => {
                let _ = writeln!(
                    html,
                    "<figure><img src=\"{}/{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>",
                    o.id,
                    escape(fig),
                    escape(fig),
                    escape(fig)
                );
            }
        }
    }
}

/// The tables that several experiments fill row by row (a row per scene, e.g. Halm & Posa's
/// Table 3), merged in experiment order into one table per name and columns; tables of a
/// single experiment are left to it.
pub fn merged_tables<'a>(
    outcomes: impl Iterator<Item = &'a ExperimentOutcome>,
) -> Vec<crate::PaperTable> {
    let mut merged: Vec<(crate::PaperTable, usize)> = Vec::new();
    for o in outcomes {
        for t in &o.tables {
            match merged
                .iter_mut()
                .find(|(m, _)| m.name == t.name && m.columns == t.columns)
            {
                Some((m, n)) => {
                    m.rows.extend(t.rows.iter().cloned());
                    *n += 1;
                }
                None => merged.push((t.clone(), 1)),
            }
        }
    }
    merged
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(t, _)| t)
        .collect()
}

/// A paper's table beside ours: each cell "paper / ours", marked agree or disagree, and the
/// agreement count under it.
fn render_paper_table(html: &mut String, t: &crate::PaperTable) {
    let (agree, total) = t.agreement();
    let _ = write!(
        html,
        "<table class=\"paper-table\"><caption>{} (paper / ours)</caption><tr><th class=\"l\"></th>",
        escape(&t.title)
    );
    for c in &t.columns {
        let _ = write!(html, "<th>{}</th>", escape(c));
    }
    html.push_str("</tr>\n");
    for (label, cells) in &t.rows {
        let _ = write!(html, "<tr><td class=\"l\">{}</td>", escape(label));
        for cell in cells {
            match cell {
                None => html.push_str("<td>–</td>"),
                Some(c) => {
                    let class = if !c.ours.is_finite() {
                        "nochecks"
                    } else if c.agrees {
                        "pass"
                    } else {
                        "fail"
                    };
                    let _ = write!(
                        html,
                        "<td class=\"{class}\" title=\"{} (tolerance {})\">{} / {}</td>",
                        escape(&c.metric),
                        number(c.tolerance),
                        number(c.paper),
                        if c.ours.is_finite() {
                            number(c.ours)
                        } else {
                            "not run".into()
                        }
                    );
                }
            }
        }
        html.push_str("</tr>\n");
    }
    let _ = writeln!(
        html,
        "</table><p>{}: {agree} of {total} measured cells agree with the paper (shown, not checked).</p>",
        escape(&t.name)
    );
}

/// Writes the self-contained report (figures inlined from the report's directory, see
/// [`render_report_inline`]) to `path`.
pub fn write_report(path: &Path, entries: &[ReportEntry], quick: bool) -> Result<(), ReportError> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::write(path, render_report_inline(entries, quick, dir))
        .map_err(|e| ReportError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_filled_by_several_experiments_is_merged_with_its_agreement() {
        let scene = |id: &str, ours: f64| {
            let mut o = ExperimentOutcome {
                id: id.into(),
                paper: "Seed 9".into(),
                ..Default::default()
            };
            o.metric("lcps", ours);
            o.paper_table(
                "table3",
                "Table 3",
                &["LCPs"],
                vec![(id.into(), vec![Some(("lcps".into(), 2.0, 0.5))])],
            );
            o
        };
        let (a, b) = (scene("a", 2.2), scene("b", 4.0));
        let merged = merged_tables([&a, &b].into_iter());
        assert_eq!(merged.len(), 1);
        assert_eq!(merged[0].rows.len(), 2);
        assert_eq!(merged[0].agreement(), (1, 2));
        // a table of one experiment only stays with it
        assert!(merged_tables([&a].into_iter()).is_empty());
        let html = render_report(
            &[ReportEntry::Ran(Box::new(a)), ReportEntry::Ran(Box::new(b))],
            false,
        );
        assert!(html.contains("Tables across experiments"), "{html}");
        assert!(html.contains("1 of 2 measured cells agree"), "{html}");
    }

    #[test]
    fn a_paper_table_counts_agreeing_measured_cells_and_shows_each() {
        let mut o = ExperimentOutcome {
            id: "t".into(),
            ..Default::default()
        };
        o.metric("a", 1.0);
        o.metric("b", 0.0);
        o.metric("c", 2.4);
        let cell = |m: &str, paper: f64| Some((m.to_string(), paper, 0.5));
        let (agree, total) = o.paper_table(
            "tab",
            "Table 9",
            &["x", "y"],
            vec![
                ("r1".into(), vec![cell("a", 1.0), cell("b", 1.0)]),
                ("r2".into(), vec![cell("c", 2.0), cell("not_run", 3.0)]),
                ("r3".into(), vec![None, cell("a", 1.2)]),
            ],
        );
        // a, c and a agree; b disagrees; not_run is not compared.
        assert_eq!((agree, total), (3, 4));
        assert_eq!(o.metrics["tab_agreement"], 0.75);
        assert!(o.checks.is_empty(), "a paper table is not a check");
        let html = render_report(&[ReportEntry::Ran(Box::new(o))], false);
        assert!(html.contains("Table 9 (paper / ours)"), "{html}");
        assert!(html.contains("3 of 4 measured cells agree"), "{html}");
        assert!(html.contains("not run"), "{html}");
        assert!(html.contains("class=\"fail\""), "{html}");
    }

    #[test]
    fn report_counts_passes_and_links_figures() {
        let mut ok = ExperimentOutcome {
            id: "a".into(),
            title: "A <b>".into(),
            ..Default::default()
        };
        ok.metric("m", 2.0);
        ok.expect("m", 2.0, 0.1, "analytic");
        ok.figure("plot.svg");
        let failed = ReportEntry::Failed {
            id: "b".into(),
            title: "B".into(),
            error: "diverged".into(),
        };
        let html = render_report(&[ReportEntry::Ran(Box::new(ok)), failed], true);
        assert!(html.contains("1 of 2 experiments pass"));
        assert!(html.contains("src=\"a/plot.svg\""));
        assert!(html.contains("A &lt;b&gt;"));
        assert!(html.contains("diverged"));
        assert!(html.contains("<table id=\"summary\">"));
    }

    #[test]
    fn written_report_inlines_svg_figures() {
        let dir = std::env::temp_dir().join(format!("nonsmooth-html-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("x")).unwrap();
        std::fs::write(
            dir.join("x/f.svg"),
            "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"><rect/></svg>\n",
        )
        .unwrap();
        let mut o = ExperimentOutcome {
            id: "x".into(),
            paper: "Paper P".into(),
            ..Default::default()
        };
        o.metric("m", 1.5);
        o.expect("m", 1.0, 1.0, "paper Table 1");
        o.figure("f.svg");
        o.figure("missing.svg");
        let path = dir.join("report.html");
        write_report(&path, &[ReportEntry::Ran(Box::new(o))], false).unwrap();
        let html = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(html.contains("<figure><svg xmlns=\"http://www.w3.org/2000/svg\"><rect/></svg>"));
        assert!(!html.contains("<?xml"));
        assert!(html.contains("src=\"x/missing.svg\""));
        assert!(html.contains("<h2>Paper P</h2>"));
        assert_eq!(
            paper_group("Halm & Posa, rocking block (E1)"),
            "Halm & Posa"
        );
        assert_eq!(
            paper_group("Zapolsky & Drumwright (§3)"),
            "Zapolsky & Drumwright"
        );
        // paper value 1, ours 1.5, tolerance 1: passes
        assert!(html.contains("<td>1</td><td>1.5</td><td>1</td>"));
    }
}
