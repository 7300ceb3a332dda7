//! Python bindings of the nonsmooth toolkit (PyO3 + maturin).
//!
//! The extension module is `nonsmooth._nonsmooth`; the Python package `nonsmooth`
//! (`python/nonsmooth/__init__.py`) re-exports it, and `python/nonsmooth/_nonsmooth.pyi` holds
//! the type stubs. Every capability lives in its own Rust module with one `register` function,
//! so that a new capability (optimal control, stability certificates) is one new module and
//! one line in the `#[pymodule]` function `_nonsmooth`.
//!
//! Conventions: vectors and matrices cross the boundary as `float64` numpy arrays (copied);
//! every Rust error becomes a Python exception (a subclass of [`errors::NonsmoothError`])
//! whose message is the Rust error's `Display` text.

#![warn(missing_docs)]

pub mod convert;
pub mod errors;
pub mod impact;
pub mod inverse;
pub mod model;
pub mod ocp;
pub mod simulate;
pub mod simulator;
pub mod solvers;
pub mod stability;
pub mod viewer;
pub mod walk;

use pyo3::prelude::*;

/// The extension module `nonsmooth._nonsmooth`.
#[pymodule]
fn _nonsmooth(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    model::register(m)?;
    simulate::register(m)?;
    simulator::register(m)?;
    impact::register(m)?;
    inverse::register(m)?;
    ocp::register(m)?;
    solvers::register(m)?;
    stability::register(m)?;
    viewer::register(m)?;
    walk::register(m)?;
    Ok(())
}
