//! `certify_stability`: sums-of-squares Lyapunov certificates of the equilibrium of the planar
//! body with two frictional contacts (seed 000, Várkonyi; crate `nonsmooth-sos`).

use crate::errors::stability_err;
use nonsmooth_sos::lyapunov::{certify, CertifyOptions, Method, Verdict};
use nonsmooth_sos::planar::PlanarParams;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Certifies Lyapunov stability of the resting equilibrium of the planar two-contact body on
/// a slope of `alpha_deg` degrees (friction `mu1` uphill, `mu2` downhill, half contact
/// distance `d`, restitution `e`, centre of mass at height `h`), by the multiple Lyapunov
/// functions of Theorem 2 (`method="multi-v"`, default) or the single-function baseline of
/// Posa–Tobenkin–Tedrake (`method="ptt"`).
///
/// Returns a dict: `verdict` (`"certified"`, `"no-certificate"`, `"ambiguous"`,
/// `"no-equilibrium"`, `"not-applicable"`), `reason` (why not certified, or the consistent
/// modes when ambiguous), `epsilon` (the PSD margin), `sdp_variables`, `sdp_equalities`,
/// `psd_blocks`, `modes`, `build_seconds`, `solve_seconds`, `monte_carlo_min`. A missing
/// certificate never means "unstable". Raises `StabilityError` when the SOS program cannot
/// be built or the solver fails outright.
#[pyfunction]
#[pyo3(signature = (alpha_deg, mu1, mu2, d, e = 0.0, h = 1.0, method = "multi-v"))]
#[allow(clippy::too_many_arguments)]
fn certify_stability<'py>(
    py: Python<'py>,
    alpha_deg: f64,
    mu1: f64,
    mu2: f64,
    d: f64,
    e: f64,
    h: f64,
    method: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let method = match method {
        "multi-v" => Method::MultiV,
        "ptt" => Method::Ptt,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown method {other:?}: expected \"multi-v\" or \"ptt\""
            )))
        }
    };
    let mut params = PlanarParams::new(alpha_deg.to_radians(), mu1, mu2, d, e);
    params.h = h;
    let opts = CertifyOptions {
        method,
        ..CertifyOptions::default()
    };
    let rep = py
        .detach(|| certify(&params, &opts))
        .map_err(stability_err)?;
    let (verdict, reason) = match &rep.verdict {
        Verdict::Certified => ("certified", String::new()),
        Verdict::NoCertificate(r) => ("no-certificate", r.clone()),
        Verdict::Ambiguous(modes) => ("ambiguous", modes.join(", ")),
        Verdict::NoEquilibrium => ("no-equilibrium", String::new()),
        Verdict::NotApplicable(r) => ("not-applicable", r.clone()),
    };
    let dict = PyDict::new(py);
    dict.set_item("verdict", verdict)?;
    dict.set_item("reason", reason)?;
    dict.set_item("epsilon", rep.epsilon)?;
    let (vars, eqs, blocks) = rep
        .size
        .as_ref()
        .map(|s| (s.variables, s.equalities, s.psd_blocks.clone()))
        .unwrap_or_default();
    dict.set_item("sdp_variables", vars)?;
    dict.set_item("sdp_equalities", eqs)?;
    dict.set_item("psd_blocks", blocks)?;
    dict.set_item("modes", rep.modes.clone())?;
    dict.set_item("build_seconds", rep.build_seconds)?;
    dict.set_item("solve_seconds", rep.solve_seconds)?;
    dict.set_item("monte_carlo_min", rep.mc_min)?;
    Ok(dict)
}

/// Adds `certify_stability` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(certify_stability, m)?)?;
    Ok(())
}
