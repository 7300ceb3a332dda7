//! `viewer_html`: the offline trajectory viewer page (`nonsmooth simulate --html`) of a
//! simulated trajectory, for `nonsmooth.view` (shown inline in Jupyter).

use crate::convert::read_1d;
use crate::model::PyModel;
use nalgebra::DVector;
use nonsmooth_core::State;
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The rows of an (n × width) array as vectors, `what` naming the argument in errors.
fn rows(a: &PyReadonlyArray2<'_, f64>, width: usize, what: &str) -> PyResult<Vec<DVector<f64>>> {
    let m = crate::convert::matrix(a, what)?;
    if m.ncols() != width {
        return Err(PyValueError::new_err(format!(
            "{what} has {} columns, the model needs {width}",
            m.ncols()
        )));
    }
    Ok((0..m.nrows())
        .map(|i| m.row(i).transpose().into_owned())
        .collect())
}

/// The viewer page (one self-contained offline HTML document) of the states `t` (n), `q`
/// (n × nq), `v` (n × nv) of `model`, as `simulate` returns them, labelled `stepper`.
#[pyfunction]
#[pyo3(signature = (model, t, q, v, stepper = "trajectory", title = None))]
fn viewer_html(
    model: &PyModel,
    t: PyReadonlyArray1<'_, f64>,
    q: PyReadonlyArray2<'_, f64>,
    v: PyReadonlyArray2<'_, f64>,
    stepper: &str,
    title: Option<String>,
) -> PyResult<String> {
    let m = &model.inner;
    let times = read_1d(&t);
    let (qs, vs) = (rows(&q, m.nq(), "q")?, rows(&v, m.nv(), "v")?);
    if qs.len() != times.len() || vs.len() != times.len() {
        return Err(PyValueError::new_err(format!(
            "t, q and v have {}, {} and {} rows; they must be equal",
            times.len(),
            qs.len(),
            vs.len()
        )));
    }
    let states: Vec<State> = times
        .iter()
        .zip(qs)
        .zip(vs)
        .map(|((&t, q), v)| State { q, v, t })
        .collect();
    let traj = nonsmooth_figures::viewer::trajectory_of(m, stepper, &states);
    let scene = nonsmooth_figures::viewer::scene(m, &traj, title.unwrap_or_else(|| m.name.clone()));
    nonsmooth_report::viewer::render_viewer_html(&scene)
        .map_err(|e| PyValueError::new_err(format!("trajectory: {e}")))
}

/// Registers `viewer_html`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(viewer_html, m)?)
}
