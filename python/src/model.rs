//! `Model`, `load_model` and `snapshot`: model files (TOML / URDF, `nonsmooth_core::io`),
//! the kinematics queries a controller needs without a snapshot (forward kinematics, point
//! Jacobian, centre of mass and its Jacobian, mass matrix, bias forces) and the frozen
//! dynamics of a state (`nonsmooth_core::ContactSnapshot`).

use crate::convert::{floats, poses_to_py, to_py_matrix, to_py_vector, vector};
use crate::errors::model_err;
use nalgebra::{DMatrix, DVector, Vector3};
use nonsmooth_core::dynamics::{
    bias_force, center_of_mass, check_state, com_jacobian, kinematics, mass_matrix, point_jacobian,
};
use nonsmooth_core::{ContactSnapshot, Dimension, Model};
use numpy::{AllowTypeChange, PyArray1, PyArray2, PyArrayLike1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// A validated rigid-body model (bodies, joints, colliders, materials, actuators, initial
/// state). Build one with `load_model(path)` or `Model.from_toml(text)`.
#[pyclass(name = "Model", module = "nonsmooth", frozen)]
#[derive(Clone)]
pub struct PyModel {
    /// The wrapped Rust model.
    pub inner: Model,
}

#[pymethods]
impl PyModel {
    /// Parses a model from TOML text (the format of docs/model-format.md). `parameters`
    /// sets named numbers first, e.g. `{"materials.floor.friction": 0.3}` (docs/model-format.md
    /// § Named parameters).
    #[staticmethod]
    #[pyo3(signature = (text, name = None, parameters = None))]
    fn from_toml(
        text: &str,
        name: Option<&str>,
        parameters: Option<std::collections::BTreeMap<String, f64>>,
    ) -> PyResult<Self> {
        let set = parameters
            .unwrap_or_default()
            .into_iter()
            .map(|(path, value)| {
                path.parse::<nonsmooth_core::ParameterPath>()
                    .map(|p| (p, value))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(model_err)?;
        let inner = Model::from_toml_str_with(text, name, &set).map_err(model_err)?;
        Ok(Self { inner })
    }

    /// Loads a `.toml`, `.urdf` or MJCF `.xml` model file.
    #[staticmethod]
    fn from_file(path: PathBuf) -> PyResult<Self> {
        load(path)
    }

    /// The model's name.
    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    /// `"planar"` or `"spatial"`.
    #[getter]
    fn dimension(&self) -> &'static str {
        match self.inner.dimension {
            Dimension::Planar => "planar",
            Dimension::Spatial => "spatial",
        }
    }

    /// Number of configuration coordinates nq.
    #[getter]
    fn nq(&self) -> usize {
        self.inner.nq()
    }

    /// Number of velocity coordinates nv.
    #[getter]
    fn nv(&self) -> usize {
        self.inner.nv()
    }

    /// Number of actuators nu.
    #[getter]
    fn nu(&self) -> usize {
        self.inner.nu()
    }

    /// Names of the configuration coordinates (length nq).
    #[getter]
    fn q_names(&self) -> Vec<String> {
        self.inner.q_names()
    }

    /// Names of the velocity coordinates (length nv).
    #[getter]
    fn v_names(&self) -> Vec<String> {
        self.inner.v_names()
    }

    /// Names of the bodies, in model order.
    #[getter]
    fn body_names(&self) -> Vec<String> {
        self.inner.bodies.iter().map(|b| b.name.clone()).collect()
    }

    /// Names of the actuators, in model order.
    #[getter]
    fn actuator_names(&self) -> Vec<String> {
        self.inner
            .actuators
            .iter()
            .map(|a| a.name.clone())
            .collect()
    }

    /// Initial configuration q₀ of the model file (length nq).
    #[getter]
    fn q0<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<f64>> {
        to_py_vector(py, &self.inner.initial_state.q)
    }

    /// Initial velocity v₀ of the model file (length nv).
    #[getter]
    fn v0<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<f64>> {
        to_py_vector(py, &self.inner.initial_state.v)
    }

    /// World pose of every body at `q` (default: the initial configuration): an (nb × 7)
    /// array of x, y, z, qw, qx, qy, qz.
    #[pyo3(signature = (q = None))]
    fn forward_kinematics<'py>(
        &self,
        py: Python<'py>,
        q: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (q, v) = query_state(&self.inner, q, None)?;
        Ok(poses_to_py(py, &kinematics(&self.inner, &q, &v).poses))
    }

    /// Jacobian (3 × nv) of the point `point` (body frame, default the body origin) fixed to
    /// body `body` (name or index) at `q`: its world velocity is `J v`.
    #[pyo3(signature = (body, point = None, q = None))]
    fn point_jacobian<'py>(
        &self,
        py: Python<'py>,
        body: &Bound<'py, PyAny>,
        point: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
        q: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let m = &self.inner;
        let b = if let Ok(name) = body.extract::<String>() {
            m.body_index(&name).ok_or_else(|| {
                PyValueError::new_err(format!("body: no body named `{name}` in `{}`", m.name))
            })?
        } else {
            let i: usize = body.extract()?;
            if i >= m.bodies.len() {
                return Err(PyValueError::new_err(format!(
                    "body: index {i} out of range (the model has {} bodies)",
                    m.bodies.len()
                )));
            }
            i
        };
        let local = floats(point);
        let local = match local.len() {
            0 => Vector3::zeros(),
            3 => Vector3::new(local[0], local[1], local[2]),
            n => {
                return Err(PyValueError::new_err(format!(
                    "point: expected 3 entries, got {n}"
                )))
            }
        };
        let (q, v) = query_state(m, q, None)?;
        let kin = kinematics(m, &q, &v);
        let world = (kin.poses[b] * nalgebra::Point3::from(local)).coords;
        let j = point_jacobian(m, &kin, Some(b), &world);
        Ok(to_py_matrix(
            py,
            &DMatrix::from_fn(3, m.nv(), |r, c| j[(r, c)]),
        ))
    }

    /// Centre of mass of the system at `q` (world, 3).
    #[pyo3(signature = (q = None))]
    fn com<'py>(
        &self,
        py: Python<'py>,
        q: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (q, _) = query_state(&self.inner, q, None)?;
        let c = center_of_mass(&self.inner, &q);
        Ok(to_py_vector(py, &DVector::from_column_slice(c.as_slice())))
    }

    /// Jacobian of the centre of mass (3 × nv) at `q`.
    #[pyo3(signature = (q = None))]
    fn com_jacobian<'py>(
        &self,
        py: Python<'py>,
        q: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (q, _) = query_state(&self.inner, q, None)?;
        let j = com_jacobian(&self.inner, &q);
        Ok(to_py_matrix(
            py,
            &DMatrix::from_fn(3, self.inner.nv(), |r, c| j[(r, c)]),
        ))
    }

    /// Joint-space mass matrix M(q) (nv × nv).
    #[pyo3(signature = (q = None))]
    fn mass_matrix<'py>(
        &self,
        py: Python<'py>,
        q: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (q, _) = query_state(&self.inner, q, None)?;
        Ok(to_py_matrix(py, &mass_matrix(&self.inner, &q)))
    }

    /// Bias forces h(q, v) (nv; Coriolis, centrifugal and gravity), so that
    /// `M v̇ + h = Pᵀu + contact forces + passive forces`.
    #[pyo3(signature = (q = None, v = None))]
    fn bias_forces<'py>(
        &self,
        py: Python<'py>,
        q: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
        v: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (q, v) = query_state(&self.inner, q, v)?;
        Ok(to_py_vector(py, &bias_force(&self.inner, &q, &v)))
    }

    /// The model as TOML text (docs/model-format.md); `Model.from_toml` of it gives this
    /// model back exactly.
    fn to_toml(&self) -> PyResult<String> {
        self.inner.to_toml_string().map_err(model_err)
    }

    /// Pickle support: a model travels as its TOML text, so it unpickles in another process,
    /// also where its file no longer exists (parallel sweeps, multiprocessing).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String, String))> {
        let text = self.inner.to_toml_string().map_err(model_err)?;
        let from_toml = py.get_type::<PyModel>().getattr("from_toml")?;
        Ok((
            from_toml,
            (text, format!("pickled model `{}`", self.inner.name)),
        ))
    }

    fn __repr__(&self) -> String {
        format!(
            "Model(name={:?}, dimension={:?}, nq={}, nv={}, nu={})",
            self.inner.name,
            self.dimension(),
            self.inner.nq(),
            self.inner.nv(),
            self.inner.nu()
        )
    }
}

/// Loads a model file and gives its warnings (what the import left out, the collision
/// geometry's, colliders that start inside each other) as `UserWarning`s, at load time.
fn load(path: PathBuf) -> PyResult<PyModel> {
    let inner = Model::from_file(&path).map_err(model_err)?;
    Python::attach(|py| crate::errors::warn_all(py, &nonsmooth_sim::load_warnings(&inner)))?;
    Ok(PyModel { inner })
}

/// Loads a `.toml`, `.urdf` or MJCF `.xml` model file (`nonsmooth_core::Model::from_file`).
#[pyfunction]
fn load_model(path: PathBuf) -> PyResult<PyModel> {
    load(path)
}

/// A configuration (and velocity) for a kinematics query, checked against the model.
fn query_state(
    model: &Model,
    q: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
    v: Option<PyArrayLike1<'_, f64, AllowTypeChange>>,
) -> PyResult<(DVector<f64>, DVector<f64>)> {
    let take =
        |a: Option<PyArrayLike1<'_, f64, AllowTypeChange>>, default: &DVector<f64>, name: &str| {
            let x: DVector<f64> = a.map_or_else(
                || default.clone(),
                |a| DVector::from_vec(crate::convert::read_1d(&a)),
            );
            if let Some(i) = x.iter().position(|e| !e.is_finite()) {
                return Err(PyValueError::new_err(format!(
                    "{name}[{i}] is not finite ({})",
                    x[i]
                )));
            }
            Ok(x)
        };
    let q = take(q, &model.initial_state.q, "q")?;
    let v = take(v, &DVector::zeros(model.nv()), "v")?;
    check_state(model, &q, &v).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((q, v))
}

/// The state to use: the given arrays, else the model's initial state.
pub fn state_or_initial(
    model: &Model,
    q: Option<PyReadonlyArray1<'_, f64>>,
    v: Option<PyReadonlyArray1<'_, f64>>,
) -> PyResult<(DVector<f64>, DVector<f64>)> {
    let q = match q {
        Some(a) => vector(&a, "q")?,
        None => model.initial_state.q.clone(),
    };
    let v = match v {
        Some(a) => vector(&a, "v")?,
        None => model.initial_state.v.clone(),
    };
    if q.len() != model.nq() {
        return Err(PyValueError::new_err(format!(
            "q has length {}, the model has nq = {}",
            q.len(),
            model.nq()
        )));
    }
    if v.len() != model.nv() {
        return Err(PyValueError::new_err(format!(
            "v has length {}, the model has nv = {}",
            v.len(),
            model.nv()
        )));
    }
    Ok((q, v))
}

/// The dynamics of `model` frozen at (q, v, t) (`ContactSnapshot::new`): a dict with
/// `M` (nv×nv), `f` (nv; gravity, Coriolis, damping), `N_q` (velocity map, nq×nv),
/// `B` (actuation Pᵀ, nv×nu), `gaps` (nc), `Jn` (nc×nv), `Jt` (Σk×nv), `mu` (nc),
/// `normals`/`points` (nc×3), `J_bilateral`, `J_limits`, `q`, `v`, `t`.
/// Missing q / v default to the model's initial state.
#[pyfunction]
#[pyo3(signature = (model, q = None, v = None, t = 0.0))]
fn snapshot<'py>(
    py: Python<'py>,
    model: &PyModel,
    q: Option<PyReadonlyArray1<'py, f64>>,
    v: Option<PyReadonlyArray1<'py, f64>>,
    t: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let m = &model.inner;
    let (q, v) = state_or_initial(m, q, v)?;
    let snap = ContactSnapshot::new(m, &q, &v, t).map_err(model_err)?;
    let d = PyDict::new(py);
    d.set_item("t", snap.t)?;
    d.set_item("q", to_py_vector(py, &snap.q))?;
    d.set_item("v", to_py_vector(py, &snap.v))?;
    d.set_item("M", to_py_matrix(py, &snap.mass_matrix))?;
    d.set_item("f", to_py_vector(py, &snap.forces))?;
    d.set_item("N_q", to_py_matrix(py, &snap.velocity_map))?;
    d.set_item("B", to_py_matrix(py, &snap.actuation))?;
    d.set_item("gaps", to_py_vector(py, &snap.gaps()))?;
    d.set_item("Jn", to_py_matrix(py, &snap.normal_jacobian()))?;
    d.set_item("Jt", to_py_matrix(py, &snap.tangent_jacobian()))?;
    let mu = DVector::from_iterator(
        snap.contacts.len(),
        snap.contacts.iter().map(|c| c.friction),
    );
    d.set_item("mu", to_py_vector(py, &mu))?;
    let nc = snap.contacts.len();
    let normals = nalgebra::DMatrix::from_fn(nc, 3, |i, j| snap.contacts[i].normal[j]);
    let points = nalgebra::DMatrix::from_fn(nc, 3, |i, j| snap.contacts[i].point[j]);
    d.set_item("normals", to_py_matrix(py, &normals))?;
    d.set_item("points", to_py_matrix(py, &points))?;
    d.set_item("J_bilateral", to_py_matrix(py, &snap.bilateral_jacobian()))?;
    d.set_item("J_limits", to_py_matrix(py, &snap.limit_jacobian()))?;
    Ok(d)
}

/// Adds `Model`, `load_model` and `snapshot` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyModel>()?;
    m.add_function(wrap_pyfunction!(load_model, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot, m)?)?;
    Ok(())
}
