//! `solve_ocp`: optimal control through impacts by time-freezing, FESD and an MPCC homotopy
//! over IPOPT (Nurkanović et al., time-freezing; crate `nonsmooth-ocp`).

use crate::convert::rows_to_py;
use crate::errors::ocp_err;
use nalgebra::DVector;
use nonsmooth_ocp::continuation::PlanFailure;
use nonsmooth_ocp::fesd_j::Outcome;
use nonsmooth_ocp::problem::{Formulation, ModelProblem};
use nonsmooth_ocp::run::{run, Problem};
use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::Path;

/// Solves the optimal-control problem of a problem file (`path`) or of its TOML text
/// (`text`); the format is that of `nonsmooth ocp`: a problem on a model file
/// (`examples/ocp_ball_brake.toml`, `examples/ocp_particle.toml`; from `text`, a relative
/// model path is taken from the working directory).
///
/// `[ocp] formulation` chooses time-freezing or FESD-J (the default of a model with several
/// contacts); the dict's `formulation` says which ran.
///
/// Returns a dict: `tau` (numerical time of the stage points), `y` (states (q, v, t) at the
/// stage points, one row each), `state_names` (the columns of `y`: the model's coordinate
/// names), `t` (the physical clock, the last column of
/// `y`), `u` (controls per interval), `control_names` (the actuators), `s` (speed of time
/// per interval), `objective`,
/// `terminal_error`, `comp_residual`, `nlp_iterations`, `cpu_seconds`, `settings` (the
/// discretization and homotopy used: `intervals`, `scheme`, `n_s`, `n_fe`, `contacts`,
/// `switching_functions`, `cross_components`, `relaxation`, `sigma0`, `kappa`, `n_homotopy`,
/// `mpcc_method` and their one-line `text`) and `homotopy` (a list
/// of dicts `sigma`, `objective`, `comp_residual`, `iterations`, `cpu_seconds`, `status`),
/// `active_set` (`None` for the homotopy; with `[mpcc] method = "active-set"` a dict
/// `b_stationary`, `verdict`, `reason` (why not certified, else `None`), `lpec_count`,
/// `bnlp_count`, `phase_one_comp`, `cpu_seconds`).
/// Raises `UnreachableError` (a subclass of `OcpError`) when no contact-consistent solution
/// exists near the homotopy's path (the message names the binding terminal or path
/// constraints), otherwise `OcpError` with the Rust message (malformed file with its line, infeasible OCP,
/// IPOPT failure, stalled homotopy, the failed waypoint of an `ocp.continuation`).
#[pyfunction]
#[pyo3(signature = (path = None, text = None))]
fn solve_ocp<'py>(
    py: Python<'py>,
    path: Option<&str>,
    text: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let p = match (path, text) {
        (Some(p), None) => ModelProblem::from_file(Path::new(p)),
        (None, Some(t)) => ModelProblem::from_toml_str(t, None),
        _ => {
            return Err(PyValueError::new_err(
                "give exactly one of `path` and `text`",
            ))
        }
    }
    .map_err(ocp_err)?;
    solve(py, &p)
}

/// The exception of a failed run: `UnreachableError` for an unreachable target, otherwise
/// `OcpError`, with the failure's message.
fn run_err(f: &PlanFailure) -> PyErr {
    match f.error {
        nonsmooth_ocp::OcpError::Unreachable { .. }
        | nonsmooth_ocp::OcpError::ProvedUnreachable { .. } => {
            crate::errors::UnreachableError::new_err(f.to_string())
        }
        _ => crate::errors::OcpError::new_err(f.to_string()),
    }
}

/// Solves one problem ([`nonsmooth_ocp::run::run`]) and builds the result dict of
/// [`solve_ocp`].
fn solve<'py>(py: Python<'py>, p: &ModelProblem) -> PyResult<Bound<'py, PyDict>> {
    if p.formulation == Formulation::FesdJ {
        return solve_impulse(py, p);
    }
    let problem = Problem::of(p);
    let run = py
        .detach(|| run(&problem, None, &mut |_, _| {}))
        .map_err(|f| run_err(&f))?;
    if let Some(f) = &run.failure {
        return Err(run_err(f));
    }
    let (sol, tf) = (&run.solution, &p.tf);
    let ny = tf.ny();
    let (state_names, control_names) = (p.state_names.clone(), p.control_names.clone());
    let d = PyDict::new(py);
    d.set_item("tau", sol.traj.tau.clone().into_pyarray(py))?;
    let y: Vec<DVector<f64>> = sol
        .traj
        .y
        .iter()
        .map(|r| DVector::from_column_slice(r))
        .collect();
    d.set_item("y", rows_to_py(py, &y, ny))?;
    let clock: Vec<f64> = sol.traj.y.iter().map(|y| y[ny - 1]).collect();
    d.set_item("t", clock.into_pyarray(py))?;
    d.set_item("u", controls_to_py(py, &sol.u))?;
    d.set_item("s", sol.s.clone().into_pyarray(py))?;
    d.set_item("state_names", state_names)?;
    d.set_item("control_names", control_names)?;
    d.set_item("objective", sol.objective)?;
    d.set_item("terminal_error", sol.terminal_error)?;
    d.set_item("comp_residual", sol.comp_residual)?;
    d.set_item("nlp_iterations", sol.nlp_iterations)?;
    d.set_item("cpu_seconds", sol.cpu_seconds)?;
    let settings = problem.settings();
    let st = PyDict::new(py);
    st.set_item("formulation", p.formulation.label())?;
    st.set_item("intervals", settings.intervals)?;
    st.set_item("scheme", &settings.scheme)?;
    st.set_item("n_s", settings.n_s)?;
    st.set_item("n_fe", settings.n_fe)?;
    st.set_item("contacts", settings.contacts)?;
    st.set_item("switching_functions", settings.switching_functions)?;
    st.set_item("cross_components", settings.cross_components)?;
    st.set_item("relaxation", &settings.relaxation)?;
    st.set_item("sigma0", settings.sigma0)?;
    st.set_item("kappa", settings.kappa)?;
    st.set_item("n_homotopy", settings.n_homotopy)?;
    st.set_item("mpcc_method", &settings.mpcc_method)?;
    st.set_item("text", settings.to_string())?;
    d.set_item("settings", st)?;
    d.set_item("homotopy", log_to_py(py, &sol.log)?)?;
    d.set_item("formulation", p.formulation.label())?;
    match &sol.active_set {
        None => d.set_item("active_set", py.None())?,
        Some(a) => {
            use nonsmooth_ocp::fesd::active_set::Verdict;
            let e = PyDict::new(py);
            e.set_item("b_stationary", a.verdict.is_b_stationary())?;
            match &a.verdict {
                Verdict::BStationary { .. } => {
                    e.set_item("verdict", "b_stationary")?;
                    e.set_item("reason", py.None())?;
                }
                Verdict::NotCertified { reason } => {
                    e.set_item("verdict", "not_certified")?;
                    e.set_item("reason", reason)?;
                }
            }
            e.set_item("lpec_count", a.lpec_count)?;
            e.set_item("bnlp_count", a.bnlp_count)?;
            e.set_item("phase_one_comp", a.phase_one_comp)?;
            e.set_item("cpu_seconds", a.cpu_seconds)?;
            d.set_item("active_set", e)?;
        }
    }
    Ok(d)
}

/// Controls per interval as a 2-D array (one row per interval).
fn controls_to_py<'py>(py: Python<'py>, u: &[Vec<f64>]) -> Bound<'py, numpy::PyArray2<f64>> {
    let nu = u.first().map_or(0, Vec::len);
    let rows: Vec<DVector<f64>> = u.iter().map(|r| DVector::from_column_slice(r)).collect();
    rows_to_py(py, &rows, nu)
}

/// The homotopy log as a list of dicts.
fn log_to_py<'py>(
    py: Python<'py>,
    log: &[nonsmooth_ocp::fesd::NlpLog],
) -> PyResult<Bound<'py, pyo3::types::PyList>> {
    let list = pyo3::types::PyList::empty(py);
    for entry in log {
        let e = PyDict::new(py);
        e.set_item("sigma", entry.sigma)?;
        e.set_item("objective", entry.objective)?;
        e.set_item("comp_residual", entry.comp_residual)?;
        e.set_item("iterations", entry.iterations)?;
        e.set_item("cpu_seconds", entry.cpu_seconds)?;
        e.set_item("status", format!("{:?}", entry.status))?;
        list.append(e)?;
    }
    Ok(list)
}

/// [`solve`] for `formulation = "fesd-j"`: the same keys, with `tau` = `t` the physical time
/// of the samples (the initial state, every element's end and the state after each
/// boundary's jump), `s` all ones, `settings` with the scheme `"semi-implicit"`, one
/// switching function per contact and Scholtes' relaxation, `active_set` `None`, and
/// `cpu_seconds` the wall time.
fn solve_impulse<'py>(py: Python<'py>, p: &ModelProblem) -> PyResult<Bound<'py, PyDict>> {
    let sys = std::sync::Arc::new(p.tf.cls.clone());
    let o = p.impulse_options.clone();
    let sol = py
        .detach(|| nonsmooth_ocp::fesd_j::solve(&sys, &p.horizon, p.t_final, &o))
        .map_err(ocp_err)?;
    match sol.outcome {
        Outcome::Solved => {}
        Outcome::Unreachable => {
            return Err(crate::errors::UnreachableError::new_err(sol.detail.clone()))
        }
        Outcome::Stalled => return Err(crate::errors::OcpError::new_err(sol.detail.clone())),
    }
    let nq = sys.nq();
    let t: Vec<f64> = sol.samples.iter().map(|s| s.t).collect();
    let y: Vec<DVector<f64>> = sol
        .samples
        .iter()
        .map(|s| {
            DVector::from_iterator(
                2 * nq + 1,
                s.q.iter().chain(&s.v).copied().chain(std::iter::once(s.t)),
            )
        })
        .collect();
    let d = PyDict::new(py);
    d.set_item("formulation", p.formulation.label())?;
    d.set_item("tau", t.clone().into_pyarray(py))?;
    d.set_item("y", rows_to_py(py, &y, 2 * nq + 1))?;
    d.set_item("t", t.into_pyarray(py))?;
    d.set_item("u", controls_to_py(py, &sol.u))?;
    d.set_item("s", vec![1.0; sol.u.len()].into_pyarray(py))?;
    d.set_item("state_names", p.state_names.clone())?;
    d.set_item("control_names", p.control_names.clone())?;
    d.set_item("objective", sol.objective)?;
    d.set_item("terminal_error", sol.terminal_error)?;
    d.set_item("comp_residual", sol.comp_residual)?;
    d.set_item("nlp_iterations", sol.nlp_iterations)?;
    d.set_item("cpu_seconds", sol.seconds)?;
    let st = PyDict::new(py);
    st.set_item("formulation", p.formulation.label())?;
    st.set_item("intervals", p.horizon.n_steps)?;
    st.set_item("scheme", "semi-implicit")?;
    st.set_item("n_s", 1)?;
    st.set_item("n_fe", o.n_fe)?;
    st.set_item("contacts", sys.n_contacts())?;
    st.set_item("switching_functions", sys.n_contacts())?;
    st.set_item("cross_components", sys.n_contacts())?;
    st.set_item("relaxation", if o.penalty { "penalty" } else { "scholtes" })?;
    st.set_item("sigma0", o.sigma0)?;
    st.set_item("kappa", o.kappa)?;
    st.set_item("n_homotopy", o.n_homotopy)?;
    st.set_item("mpcc_method", "homotopy")?;
    st.set_item("text", p.fesd_j_settings())?;
    d.set_item("settings", st)?;
    d.set_item("homotopy", log_to_py(py, &sol.log)?)?;
    d.set_item("active_set", py.None())?;
    Ok(d)
}

/// Adds `solve_ocp` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(solve_ocp, m)?)?;
    Ok(())
}
