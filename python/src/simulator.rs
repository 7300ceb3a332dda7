//! `Simulator`: a model stepped by one stepper with the user's actuator commands
//! (`nonsmooth_sim::Simulator`).

use crate::convert::{floats, poses_to_py, to_py_matrix, to_py_vector};
use crate::errors::sim_err;
use crate::model::PyModel;
use nonsmooth_core::Model;
use nonsmooth_sim::derivatives::{ConstraintSource, ConstraintState};
use nonsmooth_sim::{DerivativeMethod, DerivativeOptions, Parameter, Simulator};
use numpy::{AllowTypeChange, PyArray1, PyArray2, PyArrayLike1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Steps between checks for Ctrl-C in `step_n` (the GIL is released in between).
const SIGNAL_CHECK_STEPS: usize = 256;

/// A model stepped with a fixed step `dt` by one stepper, driven by actuator commands:
/// `Simulator(model, stepper=None, dt=None)` (no stepper: the model file's, else the one the
/// model's contents call for; no dt: the model file's, else 1e-3 — as `nonsmooth simulate`
/// chooses them), `.reset()`, `.step(u)`,
/// `.step_n(n, u)`, `.derivatives(u, parameters)`, `.q`, `.v`, `.t`, `.body_poses()`,
/// `.contacts()`. The GIL is released while stepping; Ctrl-C stops a long `step_n` between
/// steps.
#[pyclass(name = "Simulator", module = "nonsmooth")]
pub struct PySimulator {
    inner: Simulator<'static>,
}

#[pymethods]
impl PySimulator {
    #[new]
    #[pyo3(signature = (model, stepper = None, dt = None))]
    fn new(
        py: Python<'_>,
        model: &PyModel,
        stepper: Option<&str>,
        dt: Option<f64>,
    ) -> PyResult<Self> {
        let settings = nonsmooth_sim::RunSettings::resolve(&model.inner, stepper, dt, None);
        let inner = match settings.stepper.source {
            "default" => Simulator::with_default_stepper(model.inner.clone(), settings.dt),
            _ => Simulator::new(model.inner.clone(), &settings.stepper.name, settings.dt),
        }
        .map_err(sim_err)?;
        // the model's own warnings were given by `load_model`
        crate::errors::warn_all(
            py,
            &nonsmooth_sim::stepper_warnings(inner.model(), inner.stepper()),
        )?;
        Ok(Self { inner })
    }

    /// Back to the model's initial state, or to `(q, v)` when given (both required then).
    #[pyo3(signature = (q = None, v = None))]
    fn reset(
        &mut self,
        q: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
        v: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
    ) -> PyResult<()> {
        match (q, v) {
            (None, None) => {
                self.inner.reset();
                Ok(())
            }
            (q, v) => {
                let model = self.inner.model();
                let q = q.map_or_else(
                    || model.initial_state.q.as_slice().to_vec(),
                    |a| crate::convert::read_1d(&a),
                );
                let v = v.map_or_else(
                    || model.initial_state.v.as_slice().to_vec(),
                    |a| crate::convert::read_1d(&a),
                );
                self.inner.reset_to(&q, &v).map_err(sim_err)
            }
        }
    }

    /// One step of `dt` with the command `u` (one entry per actuator; omit for none).
    #[pyo3(signature = (u = None))]
    fn step(
        &mut self,
        py: Python<'_>,
        u: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
    ) -> PyResult<()> {
        let u = floats(u);
        let inner = &mut self.inner;
        py.detach(|| inner.step(&u)).map_err(sim_err)
    }

    /// `n` steps with the same command `u`.
    #[pyo3(signature = (n, u = None))]
    fn step_n(
        &mut self,
        py: Python<'_>,
        n: usize,
        u: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
    ) -> PyResult<()> {
        let u = floats(u);
        let mut left = n;
        while left > 0 {
            let chunk = left.min(SIGNAL_CHECK_STEPS);
            let inner = &mut self.inner;
            py.detach(|| inner.step_n(chunk, &u)).map_err(sim_err)?;
            left -= chunk;
            py.check_signals()?;
        }
        Ok(())
    }

    /// The derivatives of the step `step(u)` would take from the current state (the state
    /// is not changed): `A = ∂(q₁, v₁)/∂(q₀, v₀)` (2nv × 2nv), `B = ∂(q₁, v₁)/∂u`
    /// (2nv × nu) and `C = ∂(q₁, v₁)/∂θ` (2nv × len(parameters)), rows the tangent of `q₁`
    /// (nv rows; a floating joint's orientation as its body-frame rotation vector) then
    /// `v₁` (nv rows).
    ///
    /// `u`: one command per actuator; `None` is the zero command (for motors the same as
    /// `step()` without a command; a position servo then holds its target 0).
    /// `parameters`: labels `"friction:<material>"` or `"mass:<body>"`, one column of `C`
    /// each. `method`: `"auto"` (default: implicit differentiation of the step's contact
    /// problem where the stepper has one, else central differences of whole steps),
    /// `"implicit"` or `"finite-difference"`.
    ///
    /// Returns a dict: `A`, `B`, `C` (arrays), `parameters` (the labels of `C`'s columns),
    /// `next_q`, `next_v` (the state the step reaches), `method` (`"implicit"` or
    /// `"finite-difference"`, the one used), `contacts` (the step's constraints with their
    /// mode at the solution, implicit method only: `{"kind": "contact", "collider_a",
    /// "collider_b", "feature", "mode"}` or `{"kind": "row", "name", "mode"}`, `mode` one
    /// of `"separated"`, `"sticking"`, `"sliding"`) and `one_sided` (directions
    /// differentiated on one side only, e.g. `"position 3"`, `"velocity 0"`, `"command 1"`,
    /// `"parameter 0"`).
    ///
    /// ```python
    /// sim = ns.Simulator(ns.load_model("examples/sliding_box.toml"), stepper="drumwright")
    /// sim.step_n(10)
    /// d = sim.derivatives(parameters=["friction:steel_on_wood"])
    /// d["A"].shape, d["C"][6, 0]  # (12, 12), ∂vx₁/∂μ ≈ −g·dt
    /// ```
    ///
    /// Raises `SimulationError` for a malformed `u`, an unknown parameter, `"implicit"`
    /// with a stepper that has no step problem, or a failing step; `ValueError` for an
    /// unknown `method`. The GIL is released while computing.
    #[pyo3(signature = (u = None, parameters = None, method = None))]
    fn derivatives<'py>(
        &mut self,
        py: Python<'py>,
        u: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
        parameters: Option<Vec<String>>,
        method: Option<&str>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let u = floats(u);
        let method = match method.unwrap_or("auto") {
            "auto" => DerivativeMethod::Auto,
            "implicit" => DerivativeMethod::Implicit,
            "finite-difference" => DerivativeMethod::FiniteDifference,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown derivative method `{other}`; expected auto, implicit or \
                     finite-difference"
                )))
            }
        };
        let mut options = DerivativeOptions::default().method(method);
        for label in parameters.iter().flatten() {
            options = options.parameter(Parameter::parse(label).map_err(sim_err)?);
        }
        let inner = &mut self.inner;
        let d = py
            .detach(|| inner.derivatives(&u, &options))
            .map_err(sim_err)?;
        let model = self.inner.model();
        let out = PyDict::new(py);
        out.set_item("A", to_py_matrix(py, &d.a))?;
        out.set_item("B", to_py_matrix(py, &d.b))?;
        out.set_item("C", to_py_matrix(py, &d.c))?;
        out.set_item(
            "parameters",
            d.parameters
                .iter()
                .map(Parameter::label)
                .collect::<Vec<_>>(),
        )?;
        out.set_item("next_q", to_py_vector(py, &d.next.q))?;
        out.set_item("next_v", to_py_vector(py, &d.next.v))?;
        out.set_item("method", d.method.label())?;
        let constraints = d
            .constraints
            .iter()
            .map(|c| constraint_to_py(py, model, c))
            .collect::<PyResult<Vec<_>>>()?;
        out.set_item("contacts", constraints)?;
        out.set_item(
            "one_sided",
            d.one_sided
                .iter()
                .map(|&direction| direction.label())
                .collect::<Vec<_>>(),
        )?;
        Ok(out)
    }

    /// Generalized coordinates (copy).
    #[getter]
    fn q<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        to_py_vector(py, self.inner.q())
    }

    /// Generalized velocities (copy).
    #[getter]
    fn v<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        to_py_vector(py, self.inner.v())
    }

    /// Time (s).
    #[getter]
    fn t(&self) -> f64 {
        self.inner.t()
    }

    /// Step size (s).
    #[getter]
    fn dt(&self) -> f64 {
        self.inner.dt()
    }

    /// What the stepper leaves out of this model (e.g. a material's restitution); also
    /// emitted as `UserWarning`s when the simulator is built.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings().to_vec()
    }

    /// The stepper's name.
    #[getter]
    fn stepper(&self) -> &'static str {
        self.inner.stepper_name()
    }

    /// How the stepper was chosen: `"drumwright (default: rigid contacts …)"`.
    #[getter]
    fn stepper_choice(&self) -> String {
        self.inner.stepper_choice().describe()
    }

    /// `{"steps": …, "clamped_commands": …, "recoveries": {"step_halving": …, "substeps": …,
    /// "unconverged_steps": …, "repeated_solves": …, "convex_fallbacks": …}}`
    /// since construction or the last reset.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = self.inner.counters();
        let d = PyDict::new(py);
        d.set_item("steps", c.steps)?;
        d.set_item("clamped_commands", c.clamped_commands)?;
        let r = PyDict::new(py);
        r.set_item("step_halving", c.recoveries.step_halving)?;
        r.set_item("substeps", c.recoveries.substeps)?;
        r.set_item("unconverged_steps", c.recoveries.unconverged_steps)?;
        r.set_item("repeated_solves", c.recoveries.repeated_solves)?;
        r.set_item("convex_fallbacks", c.recoveries.convex_fallbacks)?;
        d.set_item("recoveries", r)?;
        Ok(d)
    }

    /// World pose of every body: an (nb × 7) array of x, y, z, qw, qx, qy, qz.
    fn body_poses<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        poses_to_py(py, &self.inner.body_poses())
    }

    /// The contacts of the last step: a list of dicts with `collider_a`, `collider_b`,
    /// `point` (3), `normal` (3, from B toward A), `gap`, and `normal_impulse` and
    /// `tangential_impulse` (3, world) where the stepper reports them (else `None`).
    fn contacts<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let records = self.inner.contacts().map_err(sim_err)?;
        records
            .iter()
            .map(|c| {
                let d = PyDict::new(py);
                d.set_item("collider_a", &c.collider_a)?;
                d.set_item("collider_b", &c.collider_b)?;
                d.set_item("point", c.point.as_slice().to_vec())?;
                d.set_item("normal", c.normal.as_slice().to_vec())?;
                d.set_item("gap", c.gap)?;
                d.set_item("normal_impulse", c.normal_impulse)?;
                d.set_item(
                    "tangential_impulse",
                    c.tangential_impulse.map(|t| t.as_slice().to_vec()),
                )?;
                Ok(d)
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "Simulator(model={:?}, stepper={:?}, dt={}, t={})",
            self.inner.model().name,
            self.inner.stepper_name(),
            self.inner.dt(),
            self.inner.t()
        )
    }
}

/// One constraint of a step and its mode as a dict (colliders by name).
fn constraint_to_py<'py>(
    py: Python<'py>,
    model: &Model,
    constraint: &ConstraintState,
) -> PyResult<Bound<'py, PyDict>> {
    let collider_name = |i: usize| {
        model
            .colliders
            .get(i)
            .map(|c| c.name.clone())
            .unwrap_or_default()
    };
    let d = PyDict::new(py);
    match &constraint.source {
        ConstraintSource::Contact {
            collider_a,
            collider_b,
            feature,
        } => {
            d.set_item("kind", "contact")?;
            d.set_item("collider_a", collider_name(*collider_a))?;
            d.set_item("collider_b", collider_name(*collider_b))?;
            d.set_item("feature", *feature)?;
        }
        ConstraintSource::Row { name } => {
            d.set_item("kind", "row")?;
            d.set_item("name", name.as_deref())?;
        }
    }
    d.set_item("mode", constraint.mode.label())?;
    Ok(d)
}

/// Adds `Simulator` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySimulator>()?;
    Ok(())
}
