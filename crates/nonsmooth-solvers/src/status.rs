//! The status, residual and error types shared by every solver in this crate.

use thiserror::Error;

/// How a solve ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SolveStatus {
    /// Converged to the stated tolerance.
    Solved,
    /// Stopped at the iteration limit; the returned point is the best one found.
    MaxIterations,
    /// Converged only to a reduced accuracy (e.g. Clarabel's `AlmostSolved`).
    AlmostSolved,
}

/// Measured residuals of a returned solution. Every field is a max-norm; fields that do not
/// apply to a problem class are 0.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Residuals {
    /// LCP: max(|min(z, 0)|, |min(w, 0)|); conic: primal feasibility residual.
    pub primal: f64,
    /// Conic: dual feasibility residual.
    pub dual: f64,
    /// LCP: max |zᵢ wᵢ|; conic: |duality gap|.
    pub complementarity: f64,
}

impl Residuals {
    /// Largest of the residuals.
    pub fn max(&self) -> f64 {
        self.primal.max(self.dual).max(self.complementarity)
    }
}

/// Why a solver could not return a solution.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SolverError {
    /// Sizes of the inputs do not agree.
    #[error("{solver}: dimension mismatch in {what}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// Which solver.
        solver: &'static str,
        /// Which input.
        what: &'static str,
        /// Expected size.
        expected: usize,
        /// Actual size.
        got: usize,
    },
    /// An input contains NaN or infinity.
    #[error("{solver}: input {what} contains NaN or infinity")]
    NonFinite {
        /// Which solver.
        solver: &'static str,
        /// Which input.
        what: &'static str,
    },
    /// The method ended without a solution (e.g. Lemke ray termination).
    #[error("{solver}: no solution found: {reason}")]
    NoSolution {
        /// Which solver.
        solver: &'static str,
        /// Why.
        reason: String,
    },
    /// The problem is primal infeasible.
    #[error("{solver}: problem is primal infeasible{detail}")]
    PrimalInfeasible {
        /// Which solver.
        solver: &'static str,
        /// Details (e.g. the infeasibility certificate); may be empty.
        detail: String,
    },
    /// The problem is dual infeasible (unbounded).
    #[error("{solver}: problem is dual infeasible (unbounded){detail}")]
    DualInfeasible {
        /// Which solver.
        solver: &'static str,
        /// Details (e.g. the infeasibility certificate); may be empty.
        detail: String,
    },
    /// The solver failed for another reason.
    #[error("{solver}: failed: {reason}")]
    Failed {
        /// Which solver.
        solver: &'static str,
        /// Why.
        reason: String,
    },
    /// An input is invalid (e.g. an option out of range).
    #[error("{solver}: invalid input: {reason}")]
    InvalidInput {
        /// Which solver.
        solver: &'static str,
        /// Why.
        reason: String,
    },
}
