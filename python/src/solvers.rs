//! Standalone solvers: `lcp` (Lemke, Cottle–Pang–Stone §4.4; projected Gauss–Seidel; full
//! enumeration), `qp` and `socp` (Clarabel through `nonsmooth_solvers::conic`).

use crate::convert::{matrix, to_py_vector, vector};
use crate::errors::solver_err;
use nalgebra::{DMatrix, DVector};
use nonsmooth_solvers::conic::{ConicOptions, ConicSolution, Qp, SocConstraint, Socp};
use nonsmooth_solvers::lcp::{enumerate_all, lemke, pgs, Lcp, LemkeOptions, PgsOptions};
use nonsmooth_solvers::{Residuals, SolveStatus};
use numpy::{PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

fn status_name(s: SolveStatus) -> &'static str {
    match s {
        SolveStatus::Solved => "solved",
        SolveStatus::MaxIterations => "max_iterations",
        SolveStatus::AlmostSolved => "almost_solved",
    }
}

fn residuals<'py>(py: Python<'py>, r: &Residuals) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("primal", r.primal)?;
    d.set_item("dual", r.dual)?;
    d.set_item("complementarity", r.complementarity)?;
    Ok(d)
}

/// Solves the LCP `w = M z + q`, `z ≥ 0`, `w ≥ 0`, `zᵀw = 0` with `method` `"lemke"`
/// (default; lexicographic Lemke, Cottle–Pang–Stone §4.4), `"pgs"` (projected Gauss–Seidel,
/// `max_iterations`, `tol`) or `"enumerate"` (every solution by basis enumeration, small n).
/// Returns a dict `z`, `w`, `status`, `residuals` (`primal`, `dual`, `complementarity`),
/// `iterations`; with `"enumerate"`, `solutions` is the list of all `z`.
/// Raises `SolverError` with the Rust message (e.g. ray termination, size mismatch).
#[pyfunction]
#[pyo3(signature = (M, q, method = "lemke", max_iterations = None, tol = None))]
#[allow(non_snake_case)]
fn lcp<'py>(
    py: Python<'py>,
    M: PyReadonlyArray2<'py, f64>,
    q: PyReadonlyArray1<'py, f64>,
    method: &str,
    max_iterations: Option<usize>,
    tol: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let problem = Lcp::new(matrix(&M, "M")?, vector(&q, "q")?).map_err(solver_err)?;
    let d = PyDict::new(py);
    let sol = match method {
        "lemke" => {
            let mut o = LemkeOptions::default();
            if max_iterations.is_some() {
                o.max_pivots = max_iterations;
            }
            lemke(&problem, &o).map_err(solver_err)?
        }
        "pgs" => {
            let mut o = PgsOptions::default();
            if let Some(n) = max_iterations {
                o.max_iterations = n;
            }
            if let Some(t) = tol {
                o.tol = t;
            }
            pgs(&problem, &o).map_err(solver_err)?
        }
        "enumerate" => {
            let all = enumerate_all(&problem, tol.unwrap_or(1e-9)).map_err(solver_err)?;
            let list = PyList::empty(py);
            for s in &all {
                list.append(to_py_vector(py, &s.z))?;
            }
            d.set_item("solutions", list)?;
            match all.into_iter().next() {
                Some(s) => s,
                None => {
                    return Err(crate::errors::SolverError::new_err(
                        "the LCP has no solution (basis enumeration found none)",
                    ))
                }
            }
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown LCP method `{other}`; expected lemke, pgs or enumerate"
            )))
        }
    };
    d.set_item("z", to_py_vector(py, &sol.z))?;
    d.set_item("w", to_py_vector(py, &sol.w))?;
    d.set_item("status", status_name(sol.status))?;
    d.set_item("residuals", residuals(py, &sol.residuals)?)?;
    d.set_item("iterations", sol.iterations)?;
    Ok(d)
}

/// Optional linear constraint data of `qp` / `socp`.
struct Linear {
    eq: Option<(DMatrix<f64>, DVector<f64>)>,
    ineq: Option<(DMatrix<f64>, DVector<f64>)>,
    bounds: Option<(DVector<f64>, DVector<f64>)>,
}

type Arr2<'py> = Option<PyReadonlyArray2<'py, f64>>;
type Arr1<'py> = Option<PyReadonlyArray1<'py, f64>>;

fn pair<A, B>(a: Option<A>, b: Option<B>, what: &str) -> PyResult<Option<(A, B)>> {
    match (a, b) {
        (Some(a), Some(b)) => Ok(Some((a, b))),
        (None, None) => Ok(None),
        _ => Err(PyValueError::new_err(format!(
            "{what}: give both arrays or neither"
        ))),
    }
}

#[allow(non_snake_case)]
fn linear(
    A: Arr2<'_>,
    b: Arr1<'_>,
    G: Arr2<'_>,
    h: Arr1<'_>,
    lb: Arr1<'_>,
    ub: Arr1<'_>,
) -> PyResult<Linear> {
    let eq = pair(A, b, "equalities (A, b)")?
        .map(|(a, b)| Ok::<_, PyErr>((matrix(&a, "A")?, vector(&b, "b")?)))
        .transpose()?;
    let ineq = pair(G, h, "inequalities (G, h)")?
        .map(|(g, h)| Ok::<_, PyErr>((matrix(&g, "G")?, vector(&h, "h")?)))
        .transpose()?;
    let bounds = pair(lb, ub, "bounds (lower, upper)")?
        .map(|(l, u)| Ok::<_, PyErr>((vector(&l, "lower")?, vector(&u, "upper")?)))
        .transpose()?;
    Ok(Linear { eq, ineq, bounds })
}

fn build_qp(p: DMatrix<f64>, c: DVector<f64>, lin: Linear) -> Qp {
    let mut qp = Qp::new(p, c);
    qp.equalities = lin.eq;
    qp.inequalities = lin.ineq;
    qp.bounds = lin.bounds;
    qp
}

fn conic_result<'py>(py: Python<'py>, s: &ConicSolution) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("x", to_py_vector(py, &s.x))?;
    d.set_item("s", to_py_vector(py, &s.s))?;
    d.set_item("z", to_py_vector(py, &s.z))?;
    d.set_item("objective", s.objective)?;
    d.set_item("status", status_name(s.status))?;
    d.set_item("residuals", residuals(py, &s.residuals)?)?;
    d.set_item("iterations", s.iterations)?;
    Ok(d)
}

/// Solves the QP `min ½xᵀPx + cᵀx` s.t. `A x = b`, `G x ≤ h`, `lower ≤ x ≤ upper` (each
/// optional) with Clarabel. Returns a dict `x`, `s`, `z` (duals), `objective`, `status`,
/// `residuals`, `iterations`. Raises `SolverError` (infeasible, bad sizes) with the Rust
/// message.
#[pyfunction]
#[pyo3(signature = (P, c, A = None, b = None, G = None, h = None, lower = None, upper = None))]
#[allow(non_snake_case, clippy::too_many_arguments)]
fn qp<'py>(
    py: Python<'py>,
    P: PyReadonlyArray2<'py, f64>,
    c: PyReadonlyArray1<'py, f64>,
    A: Arr2<'py>,
    b: Arr1<'py>,
    G: Arr2<'py>,
    h: Arr1<'py>,
    lower: Arr1<'py>,
    upper: Arr1<'py>,
) -> PyResult<Bound<'py, PyDict>> {
    let problem = build_qp(
        matrix(&P, "P")?,
        vector(&c, "c")?,
        linear(A, b, G, h, lower, upper)?,
    );
    let sol = problem
        .solve(&ConicOptions::default())
        .map_err(solver_err)?;
    conic_result(py, &sol)
}

/// Solves the SOCP `min ½xᵀPx + cᵀx` s.t. `‖Mᵢ x + mᵢ‖₂ ≤ cᵢᵀx + dᵢ` for every
/// `(Mᵢ, mᵢ, cᵢ, dᵢ)` in `cones` (Lobo et al. 1998, eq. 1) and the optional linear
/// constraints of `qp`. Returns the same dict as `qp`.
#[pyfunction]
#[pyo3(signature = (P, c, cones, A = None, b = None, G = None, h = None, lower = None, upper = None))]
#[allow(non_snake_case, clippy::too_many_arguments, clippy::type_complexity)]
fn socp<'py>(
    py: Python<'py>,
    P: PyReadonlyArray2<'py, f64>,
    c: PyReadonlyArray1<'py, f64>,
    cones: Vec<(
        PyReadonlyArray2<'py, f64>,
        PyReadonlyArray1<'py, f64>,
        PyReadonlyArray1<'py, f64>,
        f64,
    )>,
    A: Arr2<'py>,
    b: Arr1<'py>,
    G: Arr2<'py>,
    h: Arr1<'py>,
    lower: Arr1<'py>,
    upper: Arr1<'py>,
) -> PyResult<Bound<'py, PyDict>> {
    let qp = build_qp(
        matrix(&P, "P")?,
        vector(&c, "c")?,
        linear(A, b, G, h, lower, upper)?,
    );
    let mut soc = Vec::with_capacity(cones.len());
    for (mi, m0, ci, di) in &cones {
        if !di.is_finite() {
            return Err(PyValueError::new_err("cone offset d is not finite"));
        }
        soc.push(SocConstraint::Affine {
            m: matrix(mi, "cone M")?,
            m0: vector(m0, "cone m")?,
            c: vector(ci, "cone c")?,
            d: *di,
        });
    }
    let sol = Socp::new(qp, soc)
        .solve(&ConicOptions::default())
        .map_err(solver_err)?;
    conic_result(py, &sol)
}

/// Adds `lcp`, `qp` and `socp` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(lcp, m)?)?;
    m.add_function(wrap_pyfunction!(qp, m)?)?;
    m.add_function(wrap_pyfunction!(socp, m)?)?;
    Ok(())
}
