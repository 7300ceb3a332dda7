//! # nonsmooth-ocp
//!
//! Optimal control through inelastic impacts by time-freezing (Nurkanović, Albrecht, Brogliato
//! & Diehl, "The time-freezing reformulation for numerical optimal control of complementarity
//! Lagrangian systems with state jumps", 2023; errata, reference values and decisions in
//! docs/decisions/002-time-freezing.md), discretized by finite elements with
//! switch detection (FESD, Nurkanović et al. 2022) and solved as an MPCC by a Scholtes
//! relaxation homotopy over IPOPT.
//!
//! - [`ipopt`]: hand-written FFI to IPOPT's C interface and a safe [`ipopt::Nlp`] wrapper;
//! - [`nlp`]: block-structured NLPs with exact sparse derivatives by dual numbers;
//! - [`time_freezing`]: complementarity Lagrangian systems and their time-freezing PSS;
//! - [`model_system`]: a complementarity Lagrangian system read from a model file;
//! - [`fesd`]: the FESD discretization, the integrator and the OCP with the homotopy;
//! - [`continuation`]: continuation of an OCP in its terminal constraints;
//! - [`refine`]: a point of a coarse FESD mesh carried to a finer one;
//! - [`problem`]: OCP problem files (TOML) of `nonsmooth ocp` and the Python `solve_ocp`;
//! - [`run`]: a problem run to a result (start point, plan, growth, the last iterate of a
//!   failure) — the entry point of the CLI, Python and the experiments.
//!
//! Pictures of solutions (the frame strip, the viewer's scene) are drawn by
//! `nonsmooth-figures`.

#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod continuation;
pub mod fesd;
pub mod fesd_j;
pub mod generator;
pub mod ipopt;
pub mod model_system;
mod motion;
pub mod nlp;
pub mod problem;
pub mod refine;
pub mod run;
pub mod smoothed_switch;
pub mod smoothing;
pub mod time_freezing;

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
    /// The relaxed NLPs meet every constraint but keep the complementarity violation while
    /// σ falls by decades ([`fesd::MpccStrategy::unreachable_decades`]): no trajectory that
    /// obeys the contact laws was found — the terminal or path constraints that bind
    /// (largest sensitivity first) appear to be out of reach.
    #[error("{detail}")]
    Unreachable {
        /// What stagnated and the constraints that bind.
        detail: Box<fesd::Unreachability>,
        /// The last primal point.
        x: Vec<f64>,
        /// The NLPs solved so far.
        log: Vec<fesd::NlpLog>,
    },
    /// A model continuation ([`smoothing::solve_ocp_with_growth`]) failed at a stage with
    /// no bisection left.
    #[error("model growth failed at scale {scale} (last solved scale {solved}): {error}")]
    GrowthStalled {
        /// The scale whose smoothing phase failed.
        scale: f64,
        /// The last scale that was solved.
        solved: f64,
        /// The failing NLP's error.
        error: Box<OcpError>,
        /// The last converged point (it solves the stage at `solved`).
        x: Vec<f64>,
        /// Every NLP of the phases run so far, the failed ones included.
        log: Vec<fesd::NlpLog>,
    },
    /// The target is unreachable, proved before any NLP: the body starts at
    /// rest and no admissible control moves it (rollouts through the simulator with every
    /// control at one of its bounds), or the target lies beyond the travel the momentum
    /// balance allows.
    #[error("{message}")]
    ProvedUnreachable {
        /// The verdict with its measure (the rollouts' largest change, the travel's bounds)
        /// and the target's distance.
        message: String,
        /// The NLP's start point (the initial state everywhere).
        x: Vec<f64>,
    },
    /// The active-set MPCC method ([`fesd::MpccMethod::ActiveSet`]) stopped: an LPEC that
    /// HiGHS could not solve, no feasible branch NLP, or its time limit.
    #[error("{message}")]
    ActiveSet {
        /// What stopped it.
        message: String,
        /// The last feasible branch point (exactly complementary), or phase I's relaxed
        /// point when no branch was feasible; empty when there is none.
        x: Vec<f64>,
    },
}

impl OcpError {
    /// The last iterate that a failure carries (a stalled homotopy's or model growth's
    /// last point, IPOPT's last iterate), if any.
    pub fn last_iterate(&self) -> Option<&[f64]> {
        match self {
            OcpError::HomotopyStalled { x, .. }
            | OcpError::GrowthStalled { x, .. }
            | OcpError::Unreachable { x, .. }
            | OcpError::ProvedUnreachable { x, .. } => Some(x),
            OcpError::Ipopt { solution, .. } => Some(&solution.x),
            OcpError::ActiveSet { x, .. } => (!x.is_empty()).then_some(x.as_slice()),
            OcpError::InvalidInput(_) => None,
        }
    }

    /// The log of the NLPs solved before a failure, if the failure carries one.
    pub fn log(&self) -> Option<&[fesd::NlpLog]> {
        match self {
            OcpError::HomotopyStalled { log, .. }
            | OcpError::GrowthStalled { log, .. }
            | OcpError::Unreachable { log, .. } => Some(log),
            _ => None,
        }
    }

    /// The error with the state components of its binding constraints named by `names`
    /// (the model's coordinates, then velocities and clock: a problem file's
    /// `state_names`); a model growth's inner error too.
    #[must_use]
    pub fn with_state_names(mut self, names: &[String]) -> Self {
        match &mut self {
            OcpError::Unreachable { detail, .. } => {
                detail.binding.iter_mut().for_each(|b| b.name_with(names));
            }
            OcpError::GrowthStalled { error, .. } => {
                let inner =
                    std::mem::replace(error.as_mut(), OcpError::InvalidInput(String::new()));
                **error = inner.with_state_names(names);
            }
            _ => {}
        }
        self
    }
}
