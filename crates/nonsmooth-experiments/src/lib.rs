//! # nonsmooth-experiments
//!
//! The experiments behind `nonsmooth reproduce`, one module per topic. Each
//! experiment has a stable id and stable metric names (a contract with the issues and the
//! report), runs a model file from `examples/`, and writes its figures and data next to its
//! `result.json`.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

pub mod analytic_checks;
pub mod constraint_solver;
pub mod grasping;
pub mod impact;
pub mod inverse_dynamics;
pub mod locomotion;
pub mod optimal_control;
pub use nonsmooth_sim::scenes;
pub mod stability;

use nonsmooth_report::{Registry, ReportError};

/// The error of experiment (or model file) `id`, carrying `err`'s message.
pub(crate) fn fail(id: &str, err: impl std::fmt::Display) -> ReportError {
    ReportError::Experiment {
        id: id.to_string(),
        message: err.to_string(),
    }
}

/// Every registered experiment, in report order.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.register(analytic_checks::experiments());
    registry.register(constraint_solver::experiments());
    registry.register(impact::experiments());
    registry.register(inverse_dynamics::experiments());
    registry.register(stability::experiments());
    registry.register(optimal_control::experiments());
    registry.register(locomotion::experiments());
    registry
}
