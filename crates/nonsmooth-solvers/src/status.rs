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
    #[error("{solver}: dimension mismatch in {what}: expected {expected}, got {got}")]
    DimensionMismatch {
        solver: &'static str,
        what: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("{solver}: input {what} contains NaN or infinity")]
    NonFinite {
        solver: &'static str,
        what: &'static str,
    },
    #[error("{solver}: no solution found: {reason}")]
    NoSolution {
        solver: &'static str,
        reason: String,
    },
    #[error("{solver}: problem is primal infeasible{detail}")]
    PrimalInfeasible {
        solver: &'static str,
        detail: String,
    },
    #[error("{solver}: problem is dual infeasible (unbounded){detail}")]
    DualInfeasible {
        solver: &'static str,
        detail: String,
    },
    #[error("{solver}: failed: {reason}")]
    Failed {
        solver: &'static str,
        reason: String,
    },
    #[error("{solver}: invalid input: {reason}")]
    InvalidInput {
        solver: &'static str,
        reason: String,
    },
}
