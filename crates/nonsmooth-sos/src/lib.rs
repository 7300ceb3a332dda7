//! # nonsmooth-sos
//!
//! Sum-of-squares (SOS) Lyapunov certificates for the stability of frictional equilibria of a
//! planar rigid body with two unilateral contacts, after Várkonyi, *Lyapunov stability analysis of
//! rigid body systems with multiple contacts by sums-of-squares programming* (sign convention,
//! errata, program and acceptance tests in docs/decisions/000-sos-stability.md), with the
//! single-Lyapunov-function method of Posa, Tobenkin & Tedrake ("Stability analysis and control of
//! rigid-body systems with impacts and friction", IEEE TAC 2016) as the baseline.
//!
//! Layers:
//! - [`poly`]: sparse multivariate polynomials with coefficients affine in decision variables;
//! - [`program`]: SOS → SDP (Gram blocks, coefficient matching, Putinar multipliers, margin,
//!   post-checks), solved by Clarabel through `nonsmooth_solvers::conic`;
//! - [`planar`]: the zero-order-dynamics (ZOD) model of the planar body with two contacts
//!   (modes, impact map, ambiguity and equilibrium predicates);
//! - [`lyapunov`]: the multi-Lyapunov conditions of Theorem 2 and the PTT baseline;
//! - [`event_driven`]: an event-driven simulator of the ZOD hybrid system for falsification;
//! - [`model`]: the planar body of a model file mapped onto the two-contact system, and its
//!   certificate ([`model::certify_model`]);
//! - [`model_grid`]: sweeps of named model parameters (their stability maps are drawn by
//!   `nonsmooth-figures`);

#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod event_driven;
pub mod grid;
pub mod lyapunov;
pub mod model;
pub mod model_grid;
mod parallel;
pub mod planar;
pub mod poly;
pub mod program;

pub use poly::{monomials, Affine, Monomial, Poly};
pub use program::{is_sos, CertificateForm, Margin, SdpSize, SosProgram, SosSolution, SosStatus};

/// Errors of the SOS layer.
#[derive(Debug, thiserror::Error)]
pub enum SosError {
    /// Mismatched variable counts or lengths.
    #[error("dimension mismatch: {0}")]
    Dimension(String),
    /// Invalid input (non-finite numbers, bilinear products, bad parameters).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Error raised while building the conic problem.
    #[error("solver: {0}")]
    Solver(#[from] nonsmooth_solvers::SolverError),
}
