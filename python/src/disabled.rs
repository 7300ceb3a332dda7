//! The functions of a cargo feature this extension was built without: `solve_ocp` (feature
//! `ocp`) and `certify_stability` (feature `stability`) take any arguments and raise
//! `FeatureNotBuiltError` naming the feature.

use crate::errors::FeatureNotBuiltError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// The error of function `function`, which the cargo feature `feature` brings.
fn not_built(function: &str, feature: &str) -> PyErr {
    FeatureNotBuiltError::new_err(format!(
        "nonsmooth.{function} is not in this build: it needs the cargo feature `{feature}` (on \
         by default; build the package without --no-default-features, or add --features \
         {feature})"
    ))
}

/// `solve_ocp` of a build without the `ocp` feature: raises `FeatureNotBuiltError`.
#[cfg(not(feature = "ocp"))]
#[pyfunction(name = "solve_ocp")]
#[pyo3(signature = (*_args, **_kwargs))]
fn solve_ocp_not_built(
    _args: &Bound<'_, PyTuple>,
    _kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    Err(not_built("solve_ocp", "ocp"))
}

/// `certify_stability` of a build without the `stability` feature: raises
/// `FeatureNotBuiltError`.
#[cfg(not(feature = "stability"))]
#[pyfunction(name = "certify_stability")]
#[pyo3(signature = (*_args, **_kwargs))]
fn certify_stability_not_built(
    _args: &Bound<'_, PyTuple>,
    _kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    Err(not_built("certify_stability", "stability"))
}

/// Adds the `solve_ocp` that raises to the module.
#[cfg(not(feature = "ocp"))]
pub fn register_ocp(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(solve_ocp_not_built, m)?)?;
    Ok(())
}

/// Adds the `certify_stability` that raises to the module.
#[cfg(not(feature = "stability"))]
pub fn register_stability(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(certify_stability_not_built, m)?)?;
    Ok(())
}
