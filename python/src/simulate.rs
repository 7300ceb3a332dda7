//! `simulate`: forward time stepping (`nonsmooth_sim::simulate`) with any stepper of
//! `nonsmooth_sim::STEPPER_NAMES`.

use crate::convert::rows_to_py;
use crate::errors::sim_err;
use crate::model::{state_or_initial, PyModel};
use nonsmooth_core::State;
use nonsmooth_sim::SimOptions;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Simulates `model` from (q0, v0) (default: the model's initial state) with `stepper`
/// (default: the model's `[simulation] stepper`, else the one the model's contents call for,
/// as `nonsmooth simulate` chooses it), step `dt` (default: model, else 1e-3) for `duration` seconds (default: model, else 1), recording
/// every `record_every`-th step. Returns a dict with `t` (n), `q` (n×nq), `v` (n×nv),
/// `q_names`, `v_names`, `stepper`, `steps`. Contact forces are not recorded by the Rust
/// run loop yet, so they are not returned.
///
/// Raises `SimulationError` for bad options or a failing step (the message says which step).
#[pyfunction]
#[pyo3(signature = (model, stepper = None, dt = None, duration = None, q0 = None, v0 = None, record_every = 1))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    model: &PyModel,
    stepper: Option<&str>,
    dt: Option<f64>,
    duration: Option<f64>,
    q0: Option<PyReadonlyArray1<'py, f64>>,
    v0: Option<PyReadonlyArray1<'py, f64>>,
    record_every: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let m = &model.inner;
    let (q, v) = state_or_initial(m, q0, v0)?;
    let settings = nonsmooth_sim::RunSettings::resolve(m, stepper, dt, duration);
    let mut st = nonsmooth_sim::stepper_by_name(&settings.stepper.name).map_err(sim_err)?;
    // the model's own warnings were given by `load_model`
    crate::errors::warn_all(py, &nonsmooth_sim::stepper_warnings(m, st.as_ref()))?;
    let options = SimOptions {
        dt: settings.dt,
        duration: settings.duration,
        record_every,
    };
    let initial = State {
        q,
        v,
        t: m.initial_state.t,
    };
    let traj = nonsmooth_sim::simulate(m, st.as_mut(), &initial, &options, &mut |_, _| {})
        .map_err(sim_err)?;
    let d = PyDict::new(py);
    d.set_item("t", traj.t.clone().into_pyarray(py))?;
    d.set_item("q", rows_to_py(py, &traj.q, m.nq()))?;
    d.set_item("v", rows_to_py(py, &traj.v, m.nv()))?;
    d.set_item("q_names", traj.q_names.clone())?;
    d.set_item("v_names", traj.v_names.clone())?;
    d.set_item("stepper", traj.stepper.clone())?;
    d.set_item("stepper_choice", settings.stepper.describe())?;
    d.set_item("steps", traj.steps)?;
    d.set_item("recovered_steps", traj.recoveries.step_halving)?;
    Ok(d)
}

/// Adds `simulate` and `STEPPER_NAMES` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add("STEPPER_NAMES", nonsmooth_sim::STEPPER_NAMES.to_vec())?;
    Ok(())
}
