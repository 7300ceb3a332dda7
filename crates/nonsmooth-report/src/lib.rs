//! # nonsmooth-report
//!
//! What a person looks at and what a machine reads back:
//! - [`plot`]: line and scatter plots written as SVG (via `plotters`), one plot or a grid of
//!   panels in one picture;
//! - [`table`]: CSV tables with a header naming every column;
//! - [`registry`]: the registry of paper experiments behind `nonsmooth reproduce`, their
//!   metrics (name → number), expected values with tolerances, and `result.json`;
//! - [`html`]: the HTML report linking every experiment's metrics, checks and figures;
//! - [`viewer`]: a self-contained offline HTML page that plays a trajectory (bodies,
//!   collider shapes, a time slider and a time-series plot).
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

pub mod error;
pub mod html;
pub mod plot;
pub mod registry;
pub mod table;
pub mod viewer;

pub use error::ReportError;
pub use plot::{staircase, tick_label, Figure, LegendPlacement, PanelFigure, Series, SeriesStyle};
pub use registry::{
    Check, Experiment, ExperimentOutcome, PaperTable, Reference, Registry, RunContext, TableCell,
    TableRow, Verdict,
};
