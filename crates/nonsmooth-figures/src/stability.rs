//! Stability maps: the verdicts of a parameter grid (Várkonyi, Figs 2–3), shared by
//! `nonsmooth stability --grid` and the `sos-fig*` experiments, and of a sweep of a model
//! file's parameters (`nonsmooth stability MODEL --grid PATH=LO:HI:N …`).

use nonsmooth_report::{Figure, Series};
use nonsmooth_sos::grid::GridResult;
use nonsmooth_sos::model_grid::{ModelGrid, CATEGORIES};

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

/// The stability map of a model sweep: one scatter series per category over the first two
/// axes (a single axis is drawn against 0).
pub fn model_grid_figure(grid: &ModelGrid, title: &str) -> Figure {
    let x_label = grid.axes.first().map_or("", String::as_str);
    let y_label = grid.axes.get(1).map_or("", String::as_str);
    let mut fig = Figure::new(title, x_label, y_label);
    for cat in CATEGORIES {
        let pts: Vec<(f64, f64)> = grid
            .points
            .iter()
            .filter(|p| p.category == cat)
            .map(|p| {
                (
                    p.values.first().copied().unwrap_or(0.0),
                    p.values.get(1).copied().unwrap_or(0.0),
                )
            })
            .collect();
        if !pts.is_empty() {
            fig = fig.with(Series::scatter(cat, pts));
        }
    }
    fig
}
