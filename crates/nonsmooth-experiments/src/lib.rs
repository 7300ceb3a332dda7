//! # nonsmooth-experiments
//!
//! The experiments behind `nonsmooth reproduce`, one module per paper (seed) or layer. Each
//! experiment has a stable id and stable metric names (a contract with the issues and the
//! report), runs a model file from `examples/`, and writes its figures and data next to its
//! `result.json`.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

pub mod foundation;
pub mod seed000;
pub mod seed001;
pub mod seed002;
pub mod seed003;
pub mod seed004;
pub mod seed004_grasp;
pub mod seed004_loco;

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
    registry.register(foundation::experiments());
    registry.register(seed003::experiments());
    registry.register(seed001::experiments());
    registry.register(seed004::experiments());
    registry.register(seed000::experiments());
    registry.register(seed002::experiments());
    registry.register(seed004_loco::experiments());
    registry
}
