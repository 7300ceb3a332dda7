//! The HTML reproduction report: one section per experiment with its metrics, its checks
//! against the paper (pass/fail) and its figures.

use crate::registry::ExperimentOutcome;
use crate::ReportError;
use std::fmt::Write as _;
use std::path::Path;

/// The result of running one experiment for the report: its outcome, or why it failed.
pub enum ReportEntry {
    Ran(ExperimentOutcome),
    Failed {
        id: String,
        title: String,
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

/// Renders the report as a self-contained HTML page whose figure links are relative to the
/// report's directory (`ID/figure.svg`).
pub fn render_report(entries: &[ReportEntry], quick: bool) -> String {
    let mut html = String::new();
    let passed = entries
        .iter()
        .filter(|e| matches!(e, ReportEntry::Ran(o) if o.passed()))
        .count();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>nonsmooth reproduction report</title>\
<style>body{{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}}table{{border-collapse:collapse;margin:0.5em 0}}\
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}th{{background:#eee}}td.l{{text-align:left}}\
.pass{{color:#080;font-weight:bold}}.fail{{color:#c00;font-weight:bold}}img{{max-width:100%;border:1px solid #ddd;margin:4px 0}}</style></head><body>\n\
<h1>nonsmooth: reproduction of the papers' experiments</h1>\n<p>{passed} of {} experiments pass all their checks{}.</p>\n<ul>\n",
        entries.len(),
        if quick { " (quick mode: reduced sample counts and durations)" } else { "" }
    );
    for e in entries {
        let (id, title, ok) = match e {
            ReportEntry::Ran(o) => (&o.id, &o.title, o.passed()),
            ReportEntry::Failed { id, title, .. } => (id, title, false),
        };
        let _ = writeln!(
            html,
            "<li><a href=\"#{id}\">{id}</a>: {} — <span class=\"{}\">{}</span></li>",
            escape(title),
            if ok { "pass" } else { "fail" },
            if ok { "pass" } else { "FAIL" }
        );
    }
    html.push_str("</ul>\n");
    for e in entries {
        match e {
            ReportEntry::Failed { id, title, error } => {
                let _ = writeln!(
                    html,
                    "<h2 id=\"{id}\">{id}: {}</h2><p class=\"fail\">error: {}</p>",
                    escape(title),
                    escape(error)
                );
            }
            ReportEntry::Ran(o) => render_outcome(&mut html, o),
        }
    }
    html.push_str("</body></html>\n");
    html
}

fn render_outcome(html: &mut String, o: &ExperimentOutcome) {
    let _ = writeln!(
        html,
        "<h2 id=\"{0}\">{0}: {1}</h2>\n<p>{2} — <a href=\"{0}/result.json\">result.json</a>, {3:.2} s</p>",
        o.id,
        escape(&o.title),
        escape(&o.paper),
        o.wall_time_s
    );
    if !o.checks.is_empty() {
        html.push_str("<table><tr><th>metric</th><th>value</th><th>expected</th><th>tolerance</th><th>source</th><th></th></tr>\n");
        for c in &o.checks {
            let _ = writeln!(
                html,
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"{}\">{}</td></tr>",
                escape(&c.metric),
                number(c.value),
                number(c.expected),
                number(c.tolerance),
                escape(&c.source),
                if c.passed { "pass" } else { "fail" },
                if c.passed { "pass" } else { "FAIL" }
            );
        }
        html.push_str("</table>\n");
    }
    html.push_str("<table><tr><th>metric</th><th>value</th></tr>\n");
    for (name, value) in &o.metrics {
        let _ = writeln!(
            html,
            "<tr><td class=\"l\">{}</td><td>{}</td></tr>",
            escape(name),
            number(*value)
        );
    }
    html.push_str("</table>\n");
    for note in &o.notes {
        let _ = writeln!(html, "<p>{}</p>", escape(note));
    }
    for fig in &o.figures {
        let _ = writeln!(
            html,
            "<div><img src=\"{}/{}\" alt=\"{}\"></div>",
            o.id, fig, fig
        );
    }
}

/// Writes the report to `path`.
pub fn write_report(path: &Path, entries: &[ReportEntry], quick: bool) -> Result<(), ReportError> {
    std::fs::write(path, render_report(entries, quick)).map_err(|e| ReportError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let html = render_report(&[ReportEntry::Ran(ok), failed], true);
        assert!(html.contains("1 of 2 experiments pass"));
        assert!(html.contains("src=\"a/plot.svg\""));
        assert!(html.contains("A &lt;b&gt;"));
        assert!(html.contains("diverged"));
    }
}
