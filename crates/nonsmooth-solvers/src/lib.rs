//! # nonsmooth-solvers
//!
//! The numerical engines under every capability of nonsmooth:
//! - [`lcp`]: linear complementarity problems — Lemke's method with a lexicographic ratio
//!   test, projected Gauss–Seidel, block principal pivoting for sparse symmetric positive
//!   definite matrices, a brute-force enumerator (test oracle) and an MLCP → LCP reduction;
//! - [`sparse`]: symmetric sparse matrices and their sparse `L Lᵀ` / `L D Lᵀ`
//!   factorization (faer's sparse Cholesky);
//! - [`friction`]: the friction stage of a staged contact solve (a quadratic program over
//!   Coulomb disks) by a quasi-definite sparse solve when contacts stick and Newton's method
//!   on the disk multipliers when they slide;
//! - [`conic`]: thin wrappers over Clarabel for QPs, QPs with second-order cones and (with
//!   the `sdp` feature) semidefinite programs;
//! - [`nlp`]: smooth nonlinear programs through IPOPT (with the `ipopt` feature);
//! - [`regularized_contact`]: the regularized (SAP / MuJoCo-style) contact problem of one
//!   time step — frictional cones, unilateral and soft bilateral constraints — by Newton's
//!   method with exact line search and a sparse Cholesky of the Hessian;
//! - `milp`: mixed-integer linear programs through HiGHS (with the `milp` feature);
//! - `mpcc`: programs with complementarity constraints to exact complementarity, by an
//!   active-set method with LPECs (with the `mpcc` feature).
//!
//! Every general solver returns a [`SolveStatus`], the solution and measured [`Residuals`],
//! or a typed [`SolverError`]; the specialized sparse solvers of
//! [`lcp::block_pivoting`](mod@lcp::block_pivoting) and [`friction`] return `Option`s, `None`
//! when a solve fails its own check, for callers that keep a general solver as the fallback.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

pub mod conic;
pub mod friction;
pub mod lcp;
#[cfg(feature = "milp")]
pub mod milp;
#[cfg(feature = "mpcc")]
pub mod mpcc;
pub mod nlp;
pub mod regularized_contact;
pub mod sparse;
pub mod status;

pub use status::{Residuals, SolveStatus, SolverError};
