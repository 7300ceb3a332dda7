//! `certify_stability`: sums-of-squares Lyapunov certificates of the equilibrium of a planar
//! body with two frictional contacts (Várkonyi; crate `nonsmooth-sos`), read from a
//! model or given by the paper's parameters.

use crate::errors::{stability_err, stability_model_err};
use crate::model::PyModel;
use nonsmooth_sos::lyapunov::{certify, CertifyOptions, Method, Verdict};
use nonsmooth_sos::model::{certify_model, ModelCertifyOptions};
use nonsmooth_sos::planar::PlanarParams;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn method_of(method: &str) -> PyResult<Method> {
    match method {
        "multi-v" => Ok(Method::MultiV),
        "ptt" => Ok(Method::Ptt),
        other => Err(PyValueError::new_err(format!(
            "unknown method {other:?}: expected \"multi-v\" or \"ptt\""
        ))),
    }
}

/// The model form of `certify_stability`: the result as a dict (through its JSON form, so
/// the keys are those of `nonsmooth stability MODEL`'s result.json).
fn certify_model_py<'py>(
    py: Python<'py>,
    model: &PyModel,
    method: Method,
) -> PyResult<Bound<'py, PyAny>> {
    let opts = ModelCertifyOptions {
        certify: CertifyOptions {
            method,
            ..CertifyOptions::default()
        },
        ..ModelCertifyOptions::default()
    };
    let inner = model.inner.clone();
    let cert = py
        .detach(|| certify_model(&inner, &opts))
        .map_err(stability_model_err)?;
    let r = &cert.report;
    let value = serde_json::json!({
        "verdict": cert.outcome.name(),
        "reason": match &cert.outcome {
            nonsmooth_sos::model::Outcome::Certified => String::new(),
            nonsmooth_sos::model::Outcome::Ambiguous(m) => m.join(", "),
            nonsmooth_sos::model::Outcome::FalsifiedBySimulation(r)
            | nonsmooth_sos::model::Outcome::NoCertificateFound(r) => r.clone(),
        },
        "epsilon": r.epsilon,
        "body": cert.body,
        "static_forces": cert.static_forces,
        "modes": r.modes,
        "build_seconds": r.build_seconds,
        "solve_seconds": r.solve_seconds,
        "monte_carlo_min": if r.mc_min.is_finite() { Some(r.mc_min) } else { None },
        "simulation": cert.falsification,
        "trajectory": cert.trajectory,
    });
    let text = serde_json::to_string(&value)
        .map_err(|e| PyValueError::new_err(format!("cannot encode the result: {e}")))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// Certifies Lyapunov stability of a resting equilibrium by the multiple Lyapunov functions
/// of Theorem 2 (`method="multi-v"`, default) or the single-function baseline of
/// Posa–Tobenkin–Tedrake (`method="ptt"`).
///
/// `certify_stability(model)`: the planar body of a `Model` resting on two contacts at its
/// initial configuration (static check first). Returns a dict: `verdict` (`"certified"`,
/// `"ambiguous"`, `"falsified-by-simulation"`, `"no-certificate-found"`), `reason`,
/// `epsilon`, `body` (slope, contacts, units and the dimensionless parameters),
/// `static_forces`, `modes`, `build_seconds`, `solve_seconds`, `monte_carlo_min`,
/// `simulation` and `trajectory` (the first perturbed run that left, in the model's
/// coordinates; empty when none). Raises `NotApplicableError` (which assumption fails) and
/// `NotAnEquilibriumError` (why the body slides, tips or penetrates).
///
/// `certify_stability(alpha_deg, mu1, mu2, d, e=0.0, h=1.0)`: the paper's example body on a
/// slope of `alpha_deg` degrees (friction `mu1` uphill, `mu2` downhill, half contact
/// distance `d`, restitution `e`, centre of mass at height `h`). Returns a dict: `verdict`
/// (`"certified"`, `"no-certificate"`, `"ambiguous"`, `"no-equilibrium"`,
/// `"not-applicable"`), `reason`, `epsilon` (the PSD margin), `sdp_variables`,
/// `sdp_equalities`, `psd_blocks`, `modes`, `build_seconds`, `solve_seconds`,
/// `monte_carlo_min`.
///
/// A missing certificate never means "unstable". Raises `StabilityError` when the SOS
/// program cannot be built or the solver fails outright.
#[pyfunction]
#[pyo3(signature = (alpha_deg = None, mu1 = None, mu2 = None, d = None, e = 0.0, h = 1.0, method = "multi-v", *, model = None))]
#[allow(clippy::too_many_arguments)]
fn certify_stability<'py>(
    py: Python<'py>,
    alpha_deg: Option<&Bound<'py, PyAny>>,
    mu1: Option<f64>,
    mu2: Option<f64>,
    d: Option<f64>,
    e: f64,
    h: f64,
    method: &str,
    model: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let method = method_of(method)?;
    // `certify_stability(model)` passes the model positionally (as `alpha_deg`).
    let (model_arg, alpha_arg) = match (model, alpha_deg) {
        (Some(m), None) => (Some(m), None),
        (Some(_), Some(_)) => {
            return Err(PyValueError::new_err(
                "certify_stability: give a model or alpha_deg, not both",
            ))
        }
        (None, Some(a)) if a.cast::<PyModel>().is_ok() => (Some(a), None),
        (None, a) => (None, a),
    };
    if let Some(model_arg) = model_arg {
        let model = model_arg.cast::<PyModel>().map_err(|_| {
            PyTypeError::new_err("certify_stability: `model` must be a nonsmooth.Model")
        })?;
        if mu1.is_some() || mu2.is_some() || d.is_some() || e != 0.0 || h != 1.0 {
            return Err(PyValueError::new_err(
                "certify_stability(model): the body, friction and restitution come from the \
                 model; mu1, mu2, d, e and h are for the paper's example body",
            ));
        }
        return certify_model_py(py, &model.borrow(), method);
    }
    let alpha_deg: f64 = alpha_arg
        .ok_or_else(|| {
            PyTypeError::new_err("certify_stability: expected a Model or the slope angle alpha_deg")
        })?
        .extract()
        .map_err(|_| {
            PyTypeError::new_err(
                "certify_stability: expected a Model or the slope angle alpha_deg (a number)",
            )
        })?;
    let (Some(mu1), Some(mu2), Some(d)) = (mu1, mu2, d) else {
        return Err(PyValueError::new_err(
            "certify_stability(alpha_deg, mu1, mu2, d, ...): mu1, mu2 and d are required",
        ));
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
    Ok(dict.into_any())
}

/// Adds `certify_stability` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(certify_stability, m)?)?;
    Ok(())
}
