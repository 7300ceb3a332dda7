//! Sweeps of named model parameters (`nonsmooth stability MODEL --grid PATH=LO:HI:N …`): the
//! model file is rebuilt at every grid point with the parameters set
//! ([`nonsmooth_core::Model::from_toml_str_with`]) and its equilibrium certified
//! ([`crate::model::certify_model`]) on all cores; every point gets a category, never an
//! aborted sweep.

use std::collections::BTreeMap;

use serde::Serialize;

use nonsmooth_core::{Model, ParameterAxis, ParameterPath};

use crate::model::{certify_model, ModelCertifyOptions, Outcome, StabilityModelError};

/// Category of a grid point, in the order the map's legend lists them.
pub const CATEGORIES: [&str; 7] = [
    "invalid model",
    "not applicable",
    "no equilibrium",
    "ambiguous",
    "falsified by simulation",
    "no certificate found",
    "certified",
];

/// One point of a model sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelGridPoint {
    /// The parameter values, one per axis.
    pub values: Vec<f64>,
    /// One of [`CATEGORIES`].
    pub category: &'static str,
    /// The reason (error message, missing certificate) or the consistent modes.
    pub detail: String,
    /// The certificate's margin ε, where an SDP was solved.
    pub epsilon: Option<f64>,
}

/// Result of [`sweep_model`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelGrid {
    /// The axes' parameter paths.
    pub axes: Vec<String>,
    /// Points, the first axis varying fastest.
    pub points: Vec<ModelGridPoint>,
    /// Points per category.
    pub counts: BTreeMap<&'static str, usize>,
}

fn categorize(r: Result<crate::model::ModelCertificate, StabilityModelError>) -> ModelGridPoint {
    let (category, detail, epsilon) = match r {
        Ok(c) => {
            let eps = c.report.size.is_some().then_some(c.report.epsilon);
            match c.outcome {
                Outcome::Certified => ("certified", String::new(), eps),
                Outcome::Ambiguous(m) => ("ambiguous", m.join(", "), eps),
                Outcome::FalsifiedBySimulation(r) => ("falsified by simulation", r, eps),
                Outcome::NoCertificateFound(r) => ("no certificate found", r, eps),
            }
        }
        Err(StabilityModelError::NotApplicable(e)) => ("not applicable", e.to_string(), None),
        Err(StabilityModelError::NotAnEquilibrium(r)) => ("no equilibrium", r, None),
        Err(e) => ("invalid model", e.to_string(), None),
    };
    ModelGridPoint {
        values: Vec::new(),
        category,
        detail,
        epsilon,
    }
}

/// The number of points of the grid spanned by `axes` (the product of their lengths).
///
/// # Errors
/// [`StabilityModelError::Model`] ([`nonsmooth_core::ModelError::InvalidValue`] naming the
/// axes) when the grid has more than [`ParameterAxis::MAX_VALUES`] points: every point is an
/// SDP solved, and the points are stored before the sweep starts.
pub fn grid_points(axes: &[ParameterAxis]) -> Result<usize, StabilityModelError> {
    let total = axes
        .iter()
        .try_fold(1usize, |n, a| n.checked_mul(a.values.len()))
        .filter(|&n| n <= ParameterAxis::MAX_VALUES);
    total.ok_or_else(|| {
        let sizes: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
        let names: Vec<String> = axes.iter().map(|a| a.path.to_string()).collect();
        StabilityModelError::Model(nonsmooth_core::ModelError::InvalidValue {
            location: nonsmooth_core::Location::field(names.join(" ")),
            reason: format!(
                "the grid has {} points, more than a sweep may have ({})",
                sizes.join(" × "),
                ParameterAxis::MAX_VALUES
            ),
        })
    })
}

/// Certifies the model `src` (named `file` in messages) at every point of the grid spanned by
/// `axes` (one or more; the first varies fastest), on all cores.
///
/// # Errors
/// [`StabilityModelError::Model`] when an axis names a parameter the model lacks (checked at
/// the first point before the sweep starts) or the grid is too large ([`grid_points`]).
/// Errors at single points become the point's category.
pub fn sweep_model(
    src: &str,
    file: Option<&str>,
    axes: &[ParameterAxis],
    opts: &ModelCertifyOptions,
    progress: &dyn Fn(&str),
) -> Result<ModelGrid, StabilityModelError> {
    grid_points(axes)?;
    let mut cases: Vec<Vec<f64>> = vec![Vec::new()];
    for axis in axes {
        cases = axis
            .values
            .iter()
            .flat_map(|v| {
                cases.iter().map(move |c| {
                    let mut c = c.clone();
                    c.push(*v);
                    c
                })
            })
            .collect();
    }
    // Outer axes were pushed last: reorder so that the first axis varies fastest.
    cases.sort_by(|a, b| {
        a.iter()
            .rev()
            .zip(b.iter().rev())
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let paths: Vec<ParameterPath> = axes.iter().map(|a| a.path.clone()).collect();
    let assign = |values: &[f64]| -> Vec<(ParameterPath, f64)> {
        paths.iter().cloned().zip(values.iter().copied()).collect()
    };
    // Every path must name a number of the file: checked once, before the sweep.
    if let Some(first) = cases.first() {
        let mut doc: toml::Table = src.parse().map_err(|e: toml::de::Error| {
            StabilityModelError::Model(nonsmooth_core::ModelError::Syntax {
                location: nonsmooth_core::Location {
                    file: file.map(str::to_string),
                    line: None,
                    field: String::new(),
                },
                message: e.message().to_string(),
            })
        })?;
        for (path, value) in assign(first) {
            nonsmooth_core::io::set_parameter(&mut doc, &path, value)?;
        }
    }
    let points = crate::parallel::map_with_progress(
        &cases,
        |values| {
            let r = Model::from_toml_str_with(src, file, &assign(values))
                .map_err(StabilityModelError::from)
                .and_then(|m| certify_model(&m, opts));
            let mut point = categorize(r);
            point.values = values.clone();
            let label: Vec<String> = paths
                .iter()
                .zip(values)
                .map(|(p, v)| format!("{p}={v:.4}"))
                .collect();
            let line = format!("{}: {}", label.join(" "), point.category);
            (point, line)
        },
        progress,
    );
    let mut counts = BTreeMap::new();
    for p in &points {
        *counts.entry(p.category).or_insert(0) += 1;
    }
    Ok(ModelGrid {
        axes: paths.iter().map(ToString::to_string).collect(),
        points,
        counts,
    })
}
