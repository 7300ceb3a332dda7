//! Figures of stability results, drawn with `nonsmooth-report`: the stability map of a
//! parameter grid (Várkonyi, Figs 2–3), shared by `nonsmooth stability --grid` and the
//! `sos-fig*` experiments.

use crate::grid::GridResult;
use nonsmooth_report::{Figure, Series};

/// The stability map of a parameter grid (Figs 2–3): one scatter series per verdict category
/// and the points whose simulation diverged overlaid. Shared by `sos-fig*` and
/// `nonsmooth stability --grid`.
pub fn grid_figure(res: &GridResult, title: &str, axis: &str) -> Figure {
    let mut fig = Figure::new(title, axis, "d");
    for cat in [
        "not applicable",
        "no equilibrium",
        "ambiguous",
        "no certificate",
        "certified",
    ] {
        let pts: Vec<(f64, f64)> = res
            .points
            .iter()
            .filter(|g| g.category() == cat)
            .map(|g| (g.mu, g.d))
            .collect();
        if !pts.is_empty() {
            fig = fig.with(Series::scatter(cat, pts));
        }
    }
    let div: Vec<(f64, f64)> = res
        .points
        .iter()
        .filter(|g| g.diverged())
        .map(|g| (g.mu, g.d))
        .collect();
    if !div.is_empty() {
        fig = fig.with(Series::scatter("diverged in simulation", div));
    }
    fig
}
