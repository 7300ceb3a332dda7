//! # nonsmooth-ocp
//!
//! Optimal control through inelastic impacts by time-freezing (Nurkanović, Albrecht, Brogliato
//! & Diehl, "The time-freezing reformulation for numerical optimal control of complementarity
//! Lagrangian systems with state jumps", seed 002), discretized by finite elements with
//! switch detection (FESD, Nurkanović et al. 2022) and solved as an MPCC by a Scholtes
//! relaxation homotopy over IPOPT.
//!
//! - [`ipopt`]: hand-written FFI to IPOPT's C interface and a safe [`ipopt::Nlp`] wrapper;
//! - [`nlp`]: block-structured NLPs with exact sparse derivatives by dual numbers;
//! - [`tf`]: complementarity Lagrangian systems and their time-freezing PSS;
//! - [`hopper`]: the planar hopping robot of Sec. 6;
//! - [`fesd`]: the FESD discretization, the integrator and the OCP with the homotopy;
//! - [`continuation`]: continuation of an OCP in its terminal constraints;
//! - [`problem`]: OCP problem files (TOML) of `nonsmooth ocp` and the Python `solve_ocp`.

#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod continuation;
pub mod fesd;
pub mod hopper;
pub mod ipopt;
pub mod nlp;
pub mod problem;
pub mod smoothing;
pub mod tf;

/// Errors of the OCP layer.
#[derive(Debug, thiserror::Error)]
pub enum OcpError {
    /// Bad user input (dimensions, non-finite values, options).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// IPOPT did not converge; carries the last iterate.
    #[error("IPOPT returned {status:?} (constraint violation {constraint_violation:.3e})")]
    Ipopt {
        /// IPOPT's status.
        status: ipopt::IpoptStatus,
        /// Constraint violation of the last iterate.
        constraint_violation: f64,
        /// The last iterate.
        solution: Box<ipopt::IpoptSolution>,
    },
    /// The homotopy stopped before the complementarity tolerance was reached.
    #[error("homotopy stalled: complementarity {comp_residual:.3e}, constraint violation {constraint_violation:.3e}")]
    HomotopyStalled {
        /// Complementarity residual of the last iterate.
        comp_residual: f64,
        /// Constraint violation of the last iterate.
        constraint_violation: f64,
        /// The last primal point.
        x: Vec<f64>,
        /// The NLPs solved so far (σ, objective, residual, iterations, CPU seconds).
        log: Vec<fesd::NlpLog>,
    },
}
