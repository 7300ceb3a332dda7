//! numpy ⇄ nalgebra conversions (always copies, always `float64`).

use nalgebra::{DMatrix, DVector, Isometry3};
use numpy::ndarray::Array2;
use numpy::{
    AllowTypeChange, IntoPyArray, PyArray1, PyArray2, PyArrayLike1, PyArrayMethods,
    PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The elements of a 1-D float64 array, in order. Read one by one with unaligned loads, so
/// that any buffer numpy accepts works: arrays that arrived over a network or a pipe (Dask,
/// multiprocessing) or were built on a byte buffer at an odd offset are not always aligned,
/// and an aligned view of them would be undefined behaviour.
pub fn read_1d(a: &Bound<'_, PyArray1<f64>>) -> Vec<f64> {
    let base = a.data() as *const u8;
    let stride = a.strides()[0];
    (0..a.len())
        .map(|i| {
            // SAFETY: `base + i·stride` addresses element i of the array (numpy's own
            // strides, in bytes), which stays alive and unmodified while `a` is borrowed.
            unsafe { std::ptr::read_unaligned(base.offset(i as isize * stride) as *const f64) }
        })
        .collect()
}

/// The element (i, j) of a 2-D float64 array, read as [`read_1d`] does.
fn read_2d(a: &Bound<'_, PyArray2<f64>>) -> DMatrix<f64> {
    let base = a.data() as *const u8;
    let (shape, strides) = (a.shape(), a.strides());
    DMatrix::from_fn(shape[0], shape[1], |i, j| {
        let offset = i as isize * strides[0] + j as isize * strides[1];
        // SAFETY: as in `read_1d`, for element (i, j).
        unsafe { std::ptr::read_unaligned(base.offset(offset) as *const f64) }
    })
}

/// Copies a 1-D array into a vector, rejecting NaN/inf with `ValueError` naming `what`.
pub fn vector(a: &PyReadonlyArray1<'_, f64>, what: &str) -> PyResult<DVector<f64>> {
    let v: Vec<f64> = read_1d(a);
    if let Some(i) = v.iter().position(|x| !x.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "{what}[{i}] is not finite ({})",
            v[i]
        )));
    }
    Ok(DVector::from_vec(v))
}

/// Copies a 2-D array into a matrix, rejecting NaN/inf with `ValueError` naming `what`.
pub fn matrix(a: &PyReadonlyArray2<'_, f64>, what: &str) -> PyResult<DMatrix<f64>> {
    let m = read_2d(a);
    let r = m.nrows();
    if let Some(k) = m.iter().position(|x| !x.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "{what}[{}, {}] is not finite",
            k % r.max(1),
            k / r.max(1)
        )));
    }
    Ok(m)
}

/// A vector as a new 1-D numpy array.
pub fn to_py_vector<'py>(py: Python<'py>, v: &DVector<f64>) -> Bound<'py, PyArray1<f64>> {
    v.as_slice().to_vec().into_pyarray(py)
}

/// A matrix as a new 2-D (C-ordered) numpy array.
pub fn to_py_matrix<'py>(py: Python<'py>, m: &DMatrix<f64>) -> Bound<'py, PyArray2<f64>> {
    Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m[(i, j)]).into_pyarray(py)
}

/// Rows of equal length as a 2-D numpy array (`rows × n`; `0 × n` when empty).
pub fn rows_to_py<'py>(
    py: Python<'py>,
    rows: &[DVector<f64>],
    n: usize,
) -> Bound<'py, PyArray2<f64>> {
    Array2::from_shape_fn((rows.len(), n), |(i, j)| {
        rows[i].get(j).copied().unwrap_or(f64::NAN)
    })
    .into_pyarray(py)
}

/// A float64 copy of an array-like (lists, integer arrays) as a `Vec`.
pub fn floats(a: Option<PyArrayLike1<'_, f64, AllowTypeChange>>) -> Vec<f64> {
    a.map(|a| read_1d(&a)).unwrap_or_default()
}

/// World poses as an (n × 7) array: x, y, z, qw, qx, qy, qz.
pub fn poses_to_py<'py>(py: Python<'py>, poses: &[Isometry3<f64>]) -> Bound<'py, PyArray2<f64>> {
    let m = DMatrix::from_fn(poses.len(), 7, |i, j| {
        let p = &poses[i];
        let q = p.rotation.quaternion();
        match j {
            0..=2 => p.translation.vector[j],
            3 => q.w,
            4 => q.i,
            5 => q.j,
            _ => q.k,
        }
    });
    to_py_matrix(py, &m)
}
