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
//!
//! Cargo features (both on by default, and passed on by maturin): `ocp` brings `solve_ocp`
//! (IPOPT, HiGHS), `stability` brings `certify_stability` (the SDP solver with OpenBLAS). With
//! a feature off its function is still in the module and raises
//! [`errors::FeatureNotBuiltError`]; `FEATURES` lists the features of the build.

#![warn(missing_docs)]

pub mod convert;
#[cfg(any(not(feature = "ocp"), not(feature = "stability")))]
pub mod disabled;
pub mod errors;
pub mod impact;
pub mod inverse;
pub mod model;
#[cfg(feature = "ocp")]
pub mod ocp;
pub mod simulate;
pub mod simulator;
pub mod solvers;
#[cfg(feature = "stability")]
pub mod stability;
pub mod viewer;
pub mod walk;

use pyo3::prelude::*;

/// The optional cargo features this extension was built with (`nonsmooth.FEATURES`).
pub fn features() -> Vec<&'static str> {
    [
        ("ocp", cfg!(feature = "ocp")),
        ("stability", cfg!(feature = "stability")),
    ]
    .into_iter()
    .filter_map(|(name, enabled)| enabled.then_some(name))
    .collect()
}

/// The extension module `nonsmooth._nonsmooth`.
#[pymodule]
fn _nonsmooth(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("FEATURES", features())?;
    errors::register(m)?;
    model::register(m)?;
    simulate::register(m)?;
    simulator::register(m)?;
    impact::register(m)?;
    inverse::register(m)?;
    #[cfg(feature = "ocp")]
    ocp::register(m)?;
    #[cfg(not(feature = "ocp"))]
    disabled::register_ocp(m)?;
    solvers::register(m)?;
    #[cfg(feature = "stability")]
    stability::register(m)?;
    #[cfg(not(feature = "stability"))]
    disabled::register_stability(m)?;
    viewer::register(m)?;
    walk::register(m)?;
    Ok(())
}
