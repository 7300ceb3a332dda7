//! Progress reporting shared by the long-running subcommands: an indicatif progress bar when
//! standard error is a terminal, plain log lines otherwise (CI logs, pipes), nothing but
//! warnings with `--quiet`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A progress reporter over `total` units of work.
pub struct Log {
    bar: Option<ProgressBar>,
    quiet: bool,
}

impl Log {
    /// A bar on a terminal, log lines otherwise; `quiet` silences everything but warnings.
    pub fn new(total: u64, message: &str, quiet: bool) -> Self {
        let bar = if !quiet && std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            if let Ok(style) =
                ProgressStyle::with_template("{msg:40!} [{bar:30}] {pos}/{len} ({elapsed})")
            {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(message.to_string());
            Some(bar)
        } else {
            None
        };
        Self { bar, quiet }
    }

    /// A unit of work starts.
    pub fn start(&self, what: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(what.to_string()),
            None if !self.quiet => eprintln!("{what} ..."),
            None => {}
        }
    }

    /// A detail inside the current unit (shown as the bar's message, or a log line).
    pub fn detail(&self, what: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(what.to_string()),
            None if !self.quiet => eprintln!("    {what}"),
            None => {}
        }
    }

    /// A result line (printed above the bar, or as a log line).
    pub fn line(&self, what: &str) {
        match &self.bar {
            Some(bar) => bar.println(what),
            None if !self.quiet => eprintln!("    {what}"),
            None => {}
        }
    }

    /// A warning, printed even with `--quiet`.
    pub fn warn(&self, what: &str) {
        match &self.bar {
            Some(bar) => bar.println(what),
            None => eprintln!("    {what}"),
        }
    }

    /// One unit of work is done.
    pub fn advance(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The output flags every subcommand accepts, with the same meaning everywhere:
/// `--quiet` prints nothing but errors and warnings (files are still written, the exit code
/// still tells success), `--json` prints one machine-readable JSON document on standard
/// output instead of the human-readable lines. Progress goes to standard error only.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct OutputFlags {
    /// Print nothing but errors and warnings (no progress bar, no summary line).
    #[arg(long)]
    pub quiet: bool,
    /// Print one JSON document with the results on standard output.
    #[arg(long)]
    pub json: bool,
}
