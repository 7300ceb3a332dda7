//! # nonsmooth-experiments
//!
//! The experiments behind `nonsmooth reproduce`, one module per topic. Each
//! experiment has a stable id and stable metric names (a contract with the issues and the
//! report), runs a model file from `examples/`, and writes its figures and data next to its
//! `result.json`.
//!
//! Cargo features (both on by default): `ocp` brings the optimal-control experiments (module
//! `optimal_control`, IPOPT and HiGHS through nonsmooth-ocp) and `stability` the SOS stability
//! experiments (module `stability`, the SDP solver with OpenBLAS through nonsmooth-sos).
//! Without them the registry holds the other experiments, and [`feature_left_out`] names the
//! feature that brings a left-out id.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

pub mod analytic_checks;
pub mod constraint_solver;
pub mod grasping;
pub mod identification;
pub mod ilqr;
pub mod impact;
pub mod inverse_dynamics;
pub mod locomotion;
#[cfg(feature = "ocp")]
pub mod optimal_control;
pub use nonsmooth_sim::scenes;
#[cfg(feature = "stability")]
pub mod stability;
mod testbed;

use nonsmooth_report::{Registry, ReportError};

/// The error of experiment (or model file) `id`, carrying `err`'s message.
pub(crate) fn fail(id: &str, err: impl std::fmt::Display) -> ReportError {
    ReportError::Experiment {
        id: id.to_string(),
        message: err.to_string(),
    }
}

/// Prints every check of `out` as a progress line: the metric, its value, the expected value
/// and tolerance, pass or fail (the CLI prints only the failed ones).
pub(crate) fn print_checks(
    ctx: &nonsmooth_report::RunContext,
    out: &nonsmooth_report::ExperimentOutcome,
) {
    for c in &out.checks {
        (ctx.progress)(&format!(
            "check {}: {:.6e} (expected {} ± {}): {}",
            c.metric,
            c.value,
            c.expected,
            c.tolerance,
            if c.passed { "pass" } else { "FAIL" }
        ));
    }
}

/// Every registered experiment, in report order.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.register(analytic_checks::experiments());
    registry.register(constraint_solver::experiments());
    registry.register(impact::experiments());
    registry.register(inverse_dynamics::experiments());
    #[cfg(feature = "stability")]
    registry.register(stability::experiments());
    #[cfg(feature = "ocp")]
    registry.register(optimal_control::experiments());
    registry.register(locomotion::experiments());
    registry.register(ilqr::experiments());
    registry.register(identification::experiments());
    registry
}

/// The ids of the optimal-control experiments (module `optimal_control`, feature `ocp`), known
/// also to a build without that module.
pub const OPTIMAL_CONTROL_IDS: &[&str] = &[
    "tf-particle-sim",
    "tf-particle-friction",
    "tf-particle-ocp",
    "tf-order",
    "tf-hopper-ocp",
    "tf-bouncing-ball",
    "tf-contact-rich",
];

/// The ids of the stability experiments (module `stability`, feature `stability`), known also
/// to a build without that module.
pub const STABILITY_IDS: &[&str] = &["sos-basics", "sos-fig2", "sos-fig3"];

/// The cargo feature that would register experiment `id`, when this build leaves it out;
/// `None` when `id` is registered or is no experiment at all.
pub fn feature_left_out(id: &str) -> Option<&'static str> {
    [
        ("ocp", cfg!(feature = "ocp"), OPTIMAL_CONTROL_IDS),
        ("stability", cfg!(feature = "stability"), STABILITY_IDS),
    ]
    .into_iter()
    .find(|(_, enabled, ids)| !enabled && ids.contains(&id))
    .map(|(feature, _, _)| feature)
}
