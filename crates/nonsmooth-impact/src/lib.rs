//! # nonsmooth-impact
//!
//! Set-valued rigid-body impacts for simultaneous, inelastic, frictional contacts after
//! Halm & Posa, *Set-Valued Rigid-Body Dynamics for Simultaneous, Inelastic, Frictional
//! Impacts* (errata, choices and reference values in
//! docs/decisions/001-set-valued-impacts.md). The crate works on a frozen configuration q: an
//! [`ImpactProblem`] holds `(M, J_n, J_t, μ, v⁻)` and precomputes the Delassus blocks
//! `J̄ M⁻¹ J̄ᵀ` once, since q does not change during an impact.
//!
//! - [`ImpactLcp`]: the implicit discrete step of the multi-contact impact differential
//!   inclusion as the copositive LCP of eq. (75) (with the `β / λ_n,max` cap block), solved
//!   by the foundation's Lemke method;
//! - [`sampling`]: Algorithm 1 (`Sim`, a random walk with random per-contact impulse caps)
//!   and Algorithm 2 (`Approximate`, the outcome-set approximation), with seedable uniform
//!   or Sobol caps, parallel over samples (rayon); the Theorem 8 termination bound and the
//!   Theorem 9 sample-count formula;
//! - [`laws`]: comparison impact laws on the same snapshot: Anitescu–Potra simultaneous
//!   (all LCP solutions), sequential Ivanov-style, Routh single contact, and a compliant
//!   Kelvin–Voigt / Hunt–Crossley model with an implicit integrator;
//! - [`sets`]: post-processing of outcome sets (contact-velocity projection, 2-D convex
//!   hull, Hausdorff distance, ε-net coverage);
//! - [`models`]: the paper's planar examples built programmatically.
//!
//! The time-as-state differential inclusion (eqs. 43–53) is a stepper of the simulator,
//! `nonsmooth_sim::time_as_state`, built on this crate's [`ImpactLcp`].
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

pub mod laws;
pub mod lcp;
pub mod models;
pub mod problem;
pub mod sampling;
pub mod sets;

pub use lcp::{ImpactLcp, StepOutcome};
pub use problem::ImpactProblem;

use nonsmooth_solvers::SolverError;
use thiserror::Error;

/// Velocity tolerance below which a contact counts as colliding: `J_n,i v < −COLLIDING_TOL`
/// (the authors' code uses `−1e-8`).
pub const COLLIDING_TOL: f64 = 1e-8;

/// Errors of the impact computations (bad input a user can give, or a solver failure).
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ImpactError {
    /// A velocity, Jacobian or mass-matrix entry is NaN or infinite.
    #[error("non-finite value in {what}")]
    NonFinite {
        /// Which input.
        what: &'static str,
    },
    /// A friction coefficient is negative (or not finite).
    #[error("friction coefficient of contact {contact} is {mu}; it must be finite and >= 0")]
    NegativeFriction {
        /// Contact index.
        contact: usize,
        /// The offending value.
        mu: f64,
    },
    /// The problem has no contacts.
    #[error("the impact problem has no contacts")]
    NoContacts,
    /// The mass matrix is not positive definite (Cholesky failed).
    #[error("the mass matrix is singular or not positive definite")]
    SingularMass,
    /// Sizes of the inputs do not agree.
    #[error("dimension mismatch in {what}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// Which input.
        what: &'static str,
        /// Expected size.
        expected: usize,
        /// Actual size.
        got: usize,
    },
    /// An option is out of range (caps, sample counts, tolerances).
    #[error("invalid option {what}: {reason}")]
    InvalidOption {
        /// Which option.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// The LCP solver failed.
    #[error(transparent)]
    Solver(#[from] SolverError),
    /// Building the snapshot of a model failed.
    #[error("model: {0}")]
    Model(String),
}
