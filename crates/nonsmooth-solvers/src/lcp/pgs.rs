//! Projected Gauss–Seidel / projected successive over-relaxation for the LCP
//! (Cottle, Pang & Stone, *The Linear Complementarity Problem*, Ch. 5, projected SOR with
//! `E = diag(M)⁻¹`): one sweep updates, for `i = 1..n` in order,
//!
//! ```text
//! zᵢ ← max(0, zᵢ − ω (qᵢ + Σⱼ Mᵢⱼ zⱼ) / Mᵢᵢ)
//! ```
//!
//! using the already-updated `zⱼ`. It converges for symmetric positive semidefinite `M`
//! with positive diagonal and `0 < ω < 2` when the LCP is solvable, and for
//! strictly diagonally dominant / H-matrices with positive diagonal.

use nalgebra::DVector;

use super::{Lcp, LcpSolution};
use crate::status::{SolveStatus, SolverError};

const SOLVER: &str = "pgs";

/// Options of [`pgs`].
#[derive(Debug, Clone, PartialEq)]
pub struct PgsOptions {
    /// Relaxation factor `ω ∈ (0, 2)`; 1 is plain projected Gauss–Seidel. Default 1.
    pub omega: f64,
    /// Maximum number of sweeps. Default 10 000.
    pub max_iterations: usize,
    /// Convergence tolerance on the natural-map residual `‖min(z, M z + q)‖∞`, checked when
    /// the largest change of a sweep falls below it. Default `1e-10`.
    pub tol: f64,
    /// Starting point (clipped to `z ≥ 0`); `None` means `z = 0`.
    pub initial: Option<DVector<f64>>,
}

impl Default for PgsOptions {
    fn default() -> Self {
        Self {
            omega: 1.0,
            max_iterations: 10_000,
            tol: 1e-10,
            initial: None,
        }
    }
}

/// Solves the [`Lcp`] by projected Gauss–Seidel / SOR (Cottle–Pang–Stone Ch. 5, projected SOR).
///
/// Returns [`SolveStatus::Solved`] when `‖min(z, M z + q)‖∞ ≤ tol` and
/// [`SolveStatus::MaxIterations`] (with the last iterate) otherwise.
/// `LcpSolution::iterations` is the number of sweeps.
///
/// # Errors
/// [`SolverError::Failed`] if the iterates become non-finite (divergence, e.g. for a
/// nonsymmetric `M` with a large skew part);
/// [`SolverError::InvalidInput`] if a diagonal entry of `M` is not strictly positive, if
/// `ω ∉ (0, 2)` or `tol` is not finite and nonnegative; [`SolverError::DimensionMismatch`] /
/// [`SolverError::NonFinite`] for a bad starting point.
pub fn pgs(lcp: &Lcp, opts: &PgsOptions) -> Result<LcpSolution, SolverError> {
    let n = lcp.n();
    if !(opts.omega > 0.0 && opts.omega < 2.0) {
        return Err(SolverError::InvalidInput {
            solver: SOLVER,
            reason: format!(
                "relaxation factor omega must lie in (0, 2), got {}",
                opts.omega
            ),
        });
    }
    if !(opts.tol.is_finite() && opts.tol >= 0.0) {
        return Err(SolverError::InvalidInput {
            solver: SOLVER,
            reason: format!("tol must be finite and nonnegative, got {}", opts.tol),
        });
    }
    let m = lcp.m();
    for i in 0..n {
        if m[(i, i)] <= 0.0 {
            return Err(SolverError::InvalidInput {
                solver: SOLVER,
                reason: format!(
                    "diagonal entry M[{i}][{i}] = {} is not strictly positive",
                    m[(i, i)]
                ),
            });
        }
    }
    let mut z = match &opts.initial {
        Some(z0) => {
            if z0.len() != n {
                return Err(SolverError::DimensionMismatch {
                    solver: SOLVER,
                    what: "length of initial z",
                    expected: n,
                    got: z0.len(),
                });
            }
            if z0.iter().any(|x| !x.is_finite()) {
                return Err(SolverError::NonFinite {
                    solver: SOLVER,
                    what: "initial z",
                });
            }
            z0.map(|x| x.max(0.0))
        }
        None => DVector::zeros(n),
    };
    // Row access: the transpose stores the rows of M contiguously.
    let mt = m.transpose();
    let mt = mt.as_slice();
    let q = lcp.q().as_slice();
    let inv_diag: Vec<f64> = (0..n).map(|i| 1.0 / m[(i, i)]).collect();
    let omega = opts.omega;
    let mut sweeps = 0;
    let mut status = SolveStatus::MaxIterations;
    while sweeps < opts.max_iterations {
        sweeps += 1;
        let mut dmax = 0.0_f64;
        let zs = z.as_mut_slice();
        for i in 0..n {
            let row = &mt[i * n..(i + 1) * n];
            let mut r = q[i];
            for (a, b) in row.iter().zip(zs.iter()) {
                r += a * b;
            }
            let old = zs[i];
            let new = (old - omega * r * inv_diag[i]).max(0.0);
            zs[i] = new;
            dmax = dmax.max((new - old).abs());
        }
        if !dmax.is_finite() || z.iter().any(|x| !x.is_finite()) {
            return Err(SolverError::Failed {
                solver: SOLVER,
                reason: format!(
                    "iterates diverged after {sweeps} sweeps (M is not suitable for PGS, e.g. \
                     not symmetric PSD or diagonally dominant)"
                ),
            });
        }
        if dmax <= opts.tol && natural_residual(lcp, &z) <= opts.tol {
            status = SolveStatus::Solved;
            break;
        }
    }
    Ok(lcp.solution(z, status, sweeps))
}

/// `‖min(z, M z + q)‖∞`, the natural-map residual (Cottle–Pang–Stone Ch. 1).
fn natural_residual(lcp: &Lcp, z: &DVector<f64>) -> f64 {
    let w = lcp.w_of(z);
    z.iter()
        .zip(w.iter())
        .fold(0.0_f64, |a, (&zi, &wi)| a.max(zi.min(wi).abs()))
}
