//! Conic solvers: thin, validating wrappers over Clarabel 0.11 (Goulart & Chen, "Clarabel:
//! An interior-point solver for conic programs with quadratic objectives", 2024).
//!
//! Problems have the standard form
//!
//! ```text
//! minimize ½ xᵀ P x + qᵀ x   subject to   A x + s = b,  s ∈ K,
//! ```
//!
//! where `K` is a product of [`Cone`]s: zero (equalities), nonnegative (inequalities),
//! second-order and — with the `sdp` feature — PSD triangle cones.
//!
//! - [`ConicProblemBuilder`] assembles any such problem from dense (nalgebra) or sparse
//!   (triplet) blocks; `P` and `A` are converted once to Clarabel's CSC format (upper
//!   triangle of `P`).
//! - [`Qp`], [`Socp`] and (feature `sdp`) `Sdp` are convenience front ends.
//! - [`ConicProblem::solve`] solves once; [`ConicSolver`] keeps Clarabel's factorisation
//!   structures alive and re-solves after `q`, `b`, `P` or `A` value updates.
//! - Every solve returns a [`ConicSolution`] with residuals measured from the returned
//!   `(x, s, z)`, or a typed [`SolverError`](crate::SolverError) (infeasible, unbounded,
//!   dimension mismatch, NaN/inf, …).

mod problem;
mod qp;
#[cfg(feature = "sdp")]
pub mod sdp;
mod solve;
#[cfg(feature = "sdp")]
pub mod svec;

pub use problem::{Cone, ConicProblem, ConicProblemBuilder, SparseMatrix, SYMMETRY_TOL};
pub use qp::{Qp, SocConstraint, Socp};
#[cfg(feature = "sdp")]
pub use sdp::{Lmi, Sdp};
pub use solve::{measure_residuals, project_soc, ConicOptions, ConicSolution, ConicSolver};
#[cfg(feature = "sdp")]
pub use svec::{smat, svec};
