//! # nonsmooth-solvers
//!
//! The numerical engines under every capability of nonsmooth:
//! - [`lcp`]: linear complementarity problems — Lemke's method with a lexicographic ratio
//!   test, projected Gauss–Seidel, a brute-force enumerator (test oracle) and an MLCP → LCP
//!   reduction;
//! - [`conic`]: thin wrappers over Clarabel for QPs, QPs with second-order cones and (with
//!   the `sdp` feature) semidefinite programs;
//! - [`nlp`]: smooth nonlinear programs through IPOPT (with the `ipopt` feature);
//! - [`milp`]: mixed-integer linear programs through HiGHS (with the `milp` feature);
//! - [`mpcc`]: programs with complementarity constraints to exact complementarity, by an
//!   active-set method with LPECs (with the `mpcc` feature).
//!
//! Every solver returns a [`SolveStatus`], the solution and measured [`Residuals`], or a typed
//! [`SolverError`].
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

pub mod conic;
pub mod lcp;
#[cfg(feature = "milp")]
pub mod milp;
#[cfg(feature = "mpcc")]
pub mod mpcc;
pub mod nlp;
pub mod status;

pub use status::{Residuals, SolveStatus, SolverError};
