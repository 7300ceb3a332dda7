//! `nonsmooth`: the command-line front end of the nonsmooth toolkit.
//!
//! Cargo features (both on by default): `ocp` brings `nonsmooth ocp` and the optimal-control
//! experiments of `nonsmooth reproduce` (IPOPT, HiGHS), `stability` brings `nonsmooth
//! stability` and the SOS experiments (the SDP solver with OpenBLAS). With a feature off its
//! subcommand stays listed and answers with an error naming the feature (module `disabled`).

/// Prints a line to standard output. A closed pipe (`nonsmooth … | head`) ends the output
/// quietly instead of panicking, as a command-line tool should.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

#[cfg(any(not(feature = "ocp"), not(feature = "stability")))]
mod disabled;
mod impact;
mod inspect;
mod inverse;
#[cfg(feature = "ocp")]
mod ocp;
#[cfg(feature = "ocp")]
mod ocp_generate;
#[cfg(feature = "ocp")]
mod ocp_impulse;
mod progress;
mod reproduce;
mod simulate;
mod soak;
#[cfg(feature = "stability")]
mod stability;
mod step_derivatives;
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
    #[cfg(feature = "stability")]
    Stability(stability::StabilityArgs),
    /// SOS Lyapunov stability certificate (not in this build: needs the cargo feature
    /// `stability`).
    #[cfg(not(feature = "stability"))]
    Stability(disabled::DisabledArgs),
    /// Optimal control through impacts (time-freezing + FESD + MPCC homotopy over IPOPT);
    /// writes trajectory CSVs, controls, the homotopy log (JSON) and plots.
    #[cfg(feature = "ocp")]
    Ocp(ocp::OcpArgs),
    /// Optimal control through impacts (not in this build: needs the cargo feature `ocp`).
    #[cfg(not(feature = "ocp"))]
    Ocp(disabled::DisabledArgs),
    /// Generated contact-rich optimal-control problems (boxes, sleds, crates pushed to rest;
    /// reachable and unreachable by construction) as model and problem files with a
    /// manifest.
    #[cfg(feature = "ocp")]
    OcpGenerate(ocp_generate::OcpGenerateArgs),
    /// Generated optimal-control problems (not in this build: needs the cargo feature `ocp`).
    #[cfg(not(feature = "ocp"))]
    OcpGenerate(disabled::DisabledArgs),
    /// One closed-loop quadruped trot (Zapolsky & Drumwright §7) under a chosen controller and
    /// terrain; writes run.csv, path.csv, summary.json (errors, fall, chatter, travel) and plots.
    Walk(walk::WalkArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Simulate(args) => simulate::run(&args),
        Command::Inspect(args) => inspect::run(&args),
        Command::Reproduce(args) => reproduce::run(&args),
        Command::Inverse(args) => inverse::run(&args),
        Command::Impact(args) => impact::run(&args),
        Command::Soak(args) => soak::run(&args),
        #[cfg(feature = "stability")]
        Command::Stability(args) => stability::run(&args),
        #[cfg(not(feature = "stability"))]
        Command::Stability(_) => disabled::run("stability", "stability"),
        #[cfg(feature = "ocp")]
        Command::Ocp(args) => ocp::run(&args),
        #[cfg(not(feature = "ocp"))]
        Command::Ocp(_) => disabled::run("ocp", "ocp"),
        #[cfg(feature = "ocp")]
        Command::OcpGenerate(args) => ocp_generate::run(&args),
        #[cfg(not(feature = "ocp"))]
        Command::OcpGenerate(_) => disabled::run("ocp-generate", "ocp"),
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
    /// The derivatives of a step of `simulate --derivatives` (or that step) failed.
    #[error("the derivatives of step {step} (from t = {t} s) failed: {source}")]
    Derivatives {
        /// The step (0-based: the step from the state after `step` steps).
        step: usize,
        /// The time of the state the step starts from.
        t: f64,
        source: Box<nonsmooth_sim::SimError>,
    },
    /// `what` (a subcommand, an experiment) is compiled out of this build.
    #[error(
        "{what} is not in this build of nonsmooth: it needs the cargo feature `{feature}` \
         (on by default; build without --no-default-features, or add --features {feature})"
    )]
    FeatureDisabled {
        /// What was asked for, e.g. "`nonsmooth ocp`" or "experiment `tf-hopper-ocp`".
        what: String,
        /// The cargo feature of nonsmooth-cli that brings it.
        feature: &'static str,
    },
}
