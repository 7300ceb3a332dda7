//! `inverse_dynamics`: inverse dynamics with rigid contact and friction of Zapolsky
//! & Drumwright (crate `nonsmooth-control`).

use crate::convert::{to_py_vector, vector};
use crate::errors::control_err;
use crate::model::{state_or_initial, PyModel};
use nalgebra::DVector;
use nonsmooth_control::{Desired, IdOptions, IdProblem, IdStatus, InverseDynamics, Variant};
use numpy::PyReadonlyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Actuator torques that realize a desired motion of the actuated DOF of `model` at (q, v)
/// (default: the initial state) over one control period `dt`, with the contact forces the
/// rigid contact model predicts. Give exactly one of `acceleration` (q̈_des, length nu) and
/// `velocity` (q̇_des, length nu); with neither, q̈_des = 0. `variant` is one of
/// `"lcp-noslip"`, `"lcp-coulomb"`, `"qp-noslip"`, `"qp-coulomb"`, `"qp-coulomb-one-stage"`
/// (paper §§4–6, §6.1).
///
/// Returns a dict: `torques` (nu), `normal_forces` (nc), `tangent_forces`,
/// `normal_impulses`, `tangent_impulses`, `v_plus` (nv), `status` (`"solved"` or
/// `"relaxed"`), `variant`, `method`, `iterations`, `kinetic_energy`.
/// Raises `ControlError` with the Rust message (no actuators, infeasible motion, ...).
#[pyfunction]
#[pyo3(signature = (model, q = None, v = None, acceleration = None, velocity = None, variant = "qp-coulomb", dt = 1e-3, relax_infeasible = true))]
#[allow(clippy::too_many_arguments)]
fn inverse_dynamics<'py>(
    py: Python<'py>,
    model: &PyModel,
    q: Option<PyReadonlyArray1<'py, f64>>,
    v: Option<PyReadonlyArray1<'py, f64>>,
    acceleration: Option<PyReadonlyArray1<'py, f64>>,
    velocity: Option<PyReadonlyArray1<'py, f64>>,
    variant: &str,
    dt: f64,
    relax_infeasible: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let m = &model.inner;
    let (q, v) = state_or_initial(m, q, v)?;
    let variant = Variant::from_name(variant).map_err(control_err)?;
    let desired = match (acceleration, velocity) {
        (Some(_), Some(_)) => {
            return Err(PyValueError::new_err(
                "give either `acceleration` or `velocity`, not both",
            ))
        }
        (Some(a), None) => Desired::Acceleration(vector(&a, "acceleration")?),
        (None, Some(vd)) => Desired::Velocity(vector(&vd, "velocity")?),
        (None, None) => Desired::Acceleration(DVector::zeros(m.nu())),
    };
    let problem = IdProblem::from_state(m, &q, &v, dt).map_err(control_err)?;
    let mut options = IdOptions::new(variant);
    options.relax_infeasible = relax_infeasible;
    let sol = InverseDynamics::new(options)
        .solve(&problem, &desired)
        .map_err(control_err)?;
    let d = PyDict::new(py);
    d.set_item("variant", variant.name())?;
    d.set_item(
        "status",
        match sol.status {
            IdStatus::Solved => "solved",
            IdStatus::Relaxed => "relaxed",
        },
    )?;
    d.set_item("torques", to_py_vector(py, &sol.torques))?;
    d.set_item("normal_forces", to_py_vector(py, &sol.normal_forces))?;
    d.set_item("tangent_forces", to_py_vector(py, &sol.tangent_forces))?;
    d.set_item("normal_impulses", to_py_vector(py, &sol.normal_impulses))?;
    d.set_item("tangent_impulses", to_py_vector(py, &sol.tangent_impulses))?;
    d.set_item("v_plus", to_py_vector(py, &sol.v_plus))?;
    d.set_item("method", sol.method.clone())?;
    d.set_item("iterations", sol.iterations)?;
    d.set_item("kinetic_energy", sol.kinetic_energy)?;
    Ok(d)
}

/// Adds `inverse_dynamics` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(inverse_dynamics, m)?)?;
    Ok(())
}
