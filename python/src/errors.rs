//! Python exceptions carrying the Rust error messages.
//!
//! Hierarchy: `NonsmoothError(Exception)` is the base; `ModelError`, `SimulationError`,
//! `SolverError`, `ImpactError`, `ControlError`, `StabilityError` (with `NotApplicableError` and
//! `NotAnEquilibriumError`), `OcpError` and `FeatureNotBuiltError` (a function of a cargo
//! feature the extension was built without) derive from it. Shape and value errors of the
//! arguments themselves (a matrix that is not square, a NaN) raise `ValueError`.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    _nonsmooth,
    NonsmoothError,
    PyException,
    "Base class of every error raised by the nonsmooth Rust core."
);
create_exception!(
    _nonsmooth,
    ModelError,
    NonsmoothError,
    "A model file or model data is invalid (parse errors with file:line, bad state sizes)."
);
create_exception!(
    _nonsmooth,
    SimulationError,
    NonsmoothError,
    "A simulation failed (bad options, or a step failed)."
);
create_exception!(
    _nonsmooth,
    SolverError,
    NonsmoothError,
    "An LCP / QP / SOCP solve failed or its input was malformed."
);
create_exception!(
    _nonsmooth,
    ImpactError,
    NonsmoothError,
    "A set-valued impact computation failed or its options were out of range."
);
create_exception!(
    _nonsmooth,
    ControlError,
    NonsmoothError,
    "An inverse-dynamics computation failed or its input was malformed."
);

create_exception!(
    _nonsmooth,
    StabilityError,
    NonsmoothError,
    "A stability certificate could not be computed (bad parameters or a failed SDP build)."
);

create_exception!(
    _nonsmooth,
    NotApplicableError,
    StabilityError,
    "The model is outside the assumptions of the stability construction (Várkonyi's SOS stability paper): the message says which one (not planar, not one free body, not two contacts, no slope, ...)."
);
create_exception!(
    _nonsmooth,
    NotAnEquilibriumError,
    StabilityError,
    "The model's initial configuration is not a static equilibrium with its friction (it slides, tips or penetrates); the message gives the static check's reason."
);
create_exception!(
    _nonsmooth,
    OcpError,
    NonsmoothError,
    "An optimal-control problem is malformed, infeasible, or its NLP/homotopy failed."
);

create_exception!(
    _nonsmooth,
    UnreachableError,
    OcpError,
    "No contact-consistent solution was found: the relaxed problems meet every constraint only by giving up complementarity, so the target (or a path bound) appears unreachable; the message names the binding constraints, largest sensitivity first."
);

create_exception!(
    _nonsmooth,
    FeatureNotBuiltError,
    NonsmoothError,
    "The function belongs to a cargo feature this extension was built without (`ocp`, `stability`); the message names the feature. `nonsmooth.FEATURES` lists those built in."
);

/// Emits each line of `warnings` as a Python `UserWarning`.
pub fn warn_all(py: Python<'_>, warnings: &[String]) -> PyResult<()> {
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    for w in warnings {
        let text = std::ffi::CString::new(w.replace('\0', " "))
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        PyErr::warn(py, &category, &text, 1)?;
    }
    Ok(())
}

/// Converts a [`nonsmooth_core::ModelError`] into `ModelError`.
pub fn model_err(e: nonsmooth_core::ModelError) -> PyErr {
    ModelError::new_err(e.to_string())
}

/// Converts a [`nonsmooth_sim::SimError`] into `SimulationError`.
pub fn sim_err(e: nonsmooth_sim::SimError) -> PyErr {
    SimulationError::new_err(e.to_string())
}

/// Converts a [`nonsmooth_solvers::SolverError`] into `SolverError`.
pub fn solver_err(e: nonsmooth_solvers::SolverError) -> PyErr {
    SolverError::new_err(e.to_string())
}

/// Converts a [`nonsmooth_impact::ImpactError`] into `ImpactError`.
pub fn impact_err(e: nonsmooth_impact::ImpactError) -> PyErr {
    ImpactError::new_err(e.to_string())
}

/// Converts a [`nonsmooth_control::ControlError`] into `ControlError`.
pub fn control_err(e: nonsmooth_control::ControlError) -> PyErr {
    ControlError::new_err(e.to_string())
}

/// Converts a [`nonsmooth_control::locomotion::LocoError`] (the locomotion testbed) into
/// `ControlError`.
pub fn loco_err(e: nonsmooth_control::locomotion::LocoError) -> PyErr {
    ControlError::new_err(e.to_string())
}

/// Converts a [`nonsmooth_sos::SosError`] into `StabilityError`.
#[cfg(feature = "stability")]
pub fn stability_err(e: nonsmooth_sos::SosError) -> PyErr {
    StabilityError::new_err(e.to_string())
}

/// Converts a [`nonsmooth_sos::model::StabilityModelError`] into `NotApplicableError`,
/// `NotAnEquilibriumError`, `ModelError` or `StabilityError`.
#[cfg(feature = "stability")]
pub fn stability_model_err(e: nonsmooth_sos::model::StabilityModelError) -> PyErr {
    use nonsmooth_sos::model::StabilityModelError as E;
    match e {
        E::NotApplicable(_) => NotApplicableError::new_err(e.to_string()),
        E::NotAnEquilibrium(_) => NotAnEquilibriumError::new_err(e.to_string()),
        E::Model(_) => ModelError::new_err(e.to_string()),
        E::Sos(_) => StabilityError::new_err(e.to_string()),
    }
}

/// Converts a [`nonsmooth_ocp::OcpError`] into `OcpError`.
#[cfg(feature = "ocp")]
pub fn ocp_err(e: nonsmooth_ocp::OcpError) -> PyErr {
    OcpError::new_err(e.to_string())
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("NonsmoothError", py.get_type::<NonsmoothError>())?;
    m.add("ModelError", py.get_type::<ModelError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("SolverError", py.get_type::<SolverError>())?;
    m.add("ImpactError", py.get_type::<ImpactError>())?;
    m.add("ControlError", py.get_type::<ControlError>())?;
    m.add("StabilityError", py.get_type::<StabilityError>())?;
    m.add("NotApplicableError", py.get_type::<NotApplicableError>())?;
    m.add(
        "NotAnEquilibriumError",
        py.get_type::<NotAnEquilibriumError>(),
    )?;
    m.add("OcpError", py.get_type::<OcpError>())?;
    m.add("UnreachableError", py.get_type::<UnreachableError>())?;
    m.add(
        "FeatureNotBuiltError",
        py.get_type::<FeatureNotBuiltError>(),
    )?;
    Ok(())
}
