//! `walk`: one closed-loop trot of the quadruped of Zapolsky & Drumwright (2017, §7) under
//! one controller on one terrain, as the `id-*` experiments and `nonsmooth walk` run it (crate
//! `nonsmooth-control`, `docs/locomotion.md`).

use crate::convert::rows_to_py;
use crate::errors::loco_err;
use crate::model::PyModel;
use nalgebra::DVector;
use nonsmooth_control::locomotion::{reference_quadruped, run_trot, TrotSpec};
use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Runs `controller` (`"qp_mu"`, `"qp_inf"`, `"lcp_mu"`, `"lcp_inf"`, `"pid"`, `"delay1"`,
/// `"delay2"`) on `terrain` (`"rigid_mu0_1"`, `"rigid_muinf"`, `"compliant_mu0_1"`,
/// `"compliant_muinf"`, `"heightmap_rigid"`) for `duration` simulated seconds of the trot
/// with duty factor `duty`, at 1 ms control and plant steps. `model` defaults to the reference
/// quadruped (`examples/id_quadruped.toml`); another one must keep its leg geometry.
/// `friction_cap` caps the friction coefficient an ID(tᵢ) controller assumes (default 1.5,
/// the authors'); `time_of_contact` splits plant steps at the time of contact;
/// `impact_consistent` makes an ID(tᵢ) controller's desired accelerations start from the
/// velocity after the landing feet's frictionless inelastic impact.
///
/// Returns a dict: `pos_err`, `vel_err` (means, rad and rad/s), `fell` (bool), `fell_at`,
/// `fall_reason`, `chatter_fraction`, `chattered`, `longest_reversal_run`, `travel`,
/// `planned_travel`, `progress`
/// (travelled over planned distance), `mean_dtau` (N m/s), `mean_tau` (N m),
/// `force_err_rel` (None for controllers that predict no force), and the series `t` (n),
/// `pos_err_t` (n), `torques` (n × 12), `com_t` (k), `com` (k × 3). A fall is a result, not
/// an exception. Raises `ControlError` for an unknown controller or terrain or a bad option.
#[pyfunction]
#[pyo3(signature = (controller = "qp_mu", terrain = "rigid_mu0_1", duration = 3.0, duty = 0.75, friction_cap = None, time_of_contact = false, impact_consistent = false, model = None))]
#[allow(clippy::too_many_arguments)]
fn walk<'py>(
    py: Python<'py>,
    controller: &str,
    terrain: &str,
    duration: f64,
    duty: f64,
    friction_cap: Option<f64>,
    time_of_contact: bool,
    impact_consistent: bool,
    model: Option<&PyModel>,
) -> PyResult<Bound<'py, PyDict>> {
    let base = match model {
        Some(m) => m.inner.clone(),
        None => reference_quadruped().map_err(crate::errors::model_err)?,
    };
    let spec = TrotSpec {
        controller: controller.to_string(),
        terrain: terrain.to_string(),
        duration,
        duty,
        friction_cap,
        time_of_contact,
        impact_consistent,
    };
    let run = py.detach(|| run_trot(&base, &spec)).map_err(loco_err)?;
    let (rec, dt) = (&run.record, run.options.dt);
    let d = PyDict::new(py);
    d.set_item("pos_err", rec.mean_pos_err())?;
    d.set_item("vel_err", rec.mean_vel_err())?;
    d.set_item("fell", rec.fell.is_some())?;
    d.set_item("fell_at", rec.fell)?;
    d.set_item("fall_reason", rec.fall_reason.clone())?;
    d.set_item("chatter_fraction", rec.chatter_fraction)?;
    d.set_item("chattered", rec.chattered)?;
    d.set_item("longest_reversal_run", rec.longest_reversal_run)?;
    d.set_item("travel", rec.travel)?;
    d.set_item("planned_travel", rec.planned_travel)?;
    d.set_item("progress", rec.progress())?;
    d.set_item("mean_dtau", rec.mean_dtau(dt))?;
    d.set_item("mean_tau", rec.mean_tau())?;
    d.set_item("force_err_rel", rec.force_error().map(|f| f.1))?;
    let n = rec.torques.len();
    d.set_item("t", rec.t[..n].to_vec().into_pyarray(py))?;
    d.set_item("pos_err_t", rec.pos_err[..n].to_vec().into_pyarray(py))?;
    let nu = rec.torques.first().map_or(0, |u| u.len());
    d.set_item("torques", rows_to_py(py, &rec.torques, nu))?;
    d.set_item(
        "com_t",
        rec.com
            .iter()
            .map(|c| c.0)
            .collect::<Vec<_>>()
            .into_pyarray(py),
    )?;
    let com: Vec<DVector<f64>> = rec
        .com
        .iter()
        .map(|c| DVector::from_column_slice(c.1.as_slice()))
        .collect();
    d.set_item("com", rows_to_py(py, &com, 3))?;
    Ok(d)
}

/// Adds `walk` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(walk, m)?)
}
