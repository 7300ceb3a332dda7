//! `nonsmooth`: the command-line front end of the nonsmooth toolkit.

/// Prints a line to standard output. A closed pipe (`nonsmooth … | head`) ends the output
/// quietly instead of panicking, as a command-line tool should.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

mod impact;
mod inspect;
mod inverse;
mod ocp;
mod progress;
#[cfg(feature = "reproduce")]
mod reproduce;
mod simulate;
mod soak;
mod stability;
mod walk;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Rigid-body dynamics with contact, impact and Coulomb friction.
#[derive(Parser)]
#[command(name = "nonsmooth", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a model forward in time; writes trajectory.csv, summary.json and
    /// trajectory.svg (and with --html an offline viewer.html) into the output directory.
    Simulate(simulate::SimulateArgs),
    /// Load and validate a model file and print its structure.
    Inspect(inspect::InspectArgs),
    /// Reproduce the papers' experiments: metrics (result.json), figures (SVG) and an HTML
    /// report.
    #[cfg(feature = "reproduce")]
    Reproduce(reproduce::ReproduceArgs),
    /// Inverse dynamics with rigid contact: actuator torques and predicted contact forces
    /// (JSON); --bench-contacts times it against the number of contacts.
    Inverse(inverse::InverseArgs),
    /// Set-valued impact of the model's initial state (Halm & Posa, Algorithm 2) with the
    /// comparison laws; writes samples.csv, laws.json and scatter.svg.
    Impact(impact::ImpactArgs),
    /// Long runs (default 10⁶ steps) of the sphere stack and the quadruped: no NaN, no
    /// energy gain, bounded drift, no memory growth (soak.json, energy plots).
    Soak(soak::SoakArgs),
    /// SOS Lyapunov stability certificate of the planar two-contact body (Várkonyi).
    Stability(stability::StabilityArgs),
    /// Optimal control through impacts (time-freezing + FESD + MPCC homotopy over IPOPT);
    /// writes trajectory CSVs, controls, the homotopy log (JSON) and plots.
    Ocp(ocp::OcpArgs),
    /// One closed-loop quadruped trot (Zapolsky & Drumwright §7) under a chosen controller and
    /// terrain; writes run.csv, path.csv, summary.json (errors, fall, chatter, travel) and plots.
    Walk(walk::WalkArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Simulate(args) => simulate::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        #[cfg(feature = "reproduce")]
        Command::Reproduce(args) => reproduce::run(&args),
        Command::Inverse(args) => inverse::run(&args),
        Command::Impact(args) => impact::run(&args),
        Command::Soak(args) => soak::run(&args),
        Command::Stability(args) => stability::run(&args),
        Command::Ocp(args) => ocp::run(&args),
        Command::Walk(args) => walk::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(2)
        }
    }
}

/// Any error a subcommand reports to the user.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Model(#[from] nonsmooth_core::ModelError),
    #[error(transparent)]
    Sim(#[from] nonsmooth_sim::SimError),
    #[error(transparent)]
    Report(#[from] nonsmooth_report::ReportError),
    #[error("{0}")]
    Usage(String),
}
