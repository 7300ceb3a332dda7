//! # nonsmooth-figures
//!
//! The pictures of nonsmooth's results, drawn with `nonsmooth-report` (which knows figures and
//! pages, not models): the engine crates compute, this crate draws, so that a simulation,
//! an optimal-control solve or a certificate never depends on the drawing code.
//!
//! - [`viewer`]: a model and its trajectories as a scene of the offline trajectory viewer
//!   (`nonsmooth simulate --html`, the report's players, Python's `viewer_html`);
//! - [`optimal_control`] (feature `ocp`): the frame strip of a planar model's optimal motion
//!   and the obstacles' outlines;
//! - [`stability`] (feature `stability`): the stability maps of parameter grids and model
//!   sweeps;
//! - [`time_series`]: a model's coordinates, velocities and actuator efforts over time as
//!   panels of one quantity (one unit) each, named after the coordinates and actuators.

#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

#[cfg(feature = "ocp")]
pub mod optimal_control;
#[cfg(feature = "stability")]
pub mod stability;
pub mod time_series;
pub mod viewer;
