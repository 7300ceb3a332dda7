//! Linear complementarity problems (LCPs).
//!
//! The LCP(M, q) asks for `z ∈ ℝⁿ` with
//!
//! ```text
//! z ≥ 0,   w = M z + q ≥ 0,   zᵀ w = 0
//! ```
//!
//! (Cottle, Pang & Stone, *The Linear Complementarity Problem*, 1992, Ch. 1). This module
//! provides:
//! - [`Lcp`]: the validated problem data and [`LcpSolution`]: a solution with its status and
//!   measured [`Residuals`] (see [`lcp_residuals`]);
//! - [`lemke`]: Lemke's complementary pivoting method with a covering vector and the
//!   lexicographic minimum-ratio test (Cottle–Pang–Stone §4.4 and the lexicographic degeneracy resolution of Ch. 4);
//! - [`pgs`]: projected Gauss–Seidel / projected SOR (Cottle–Pang–Stone Ch. 5);
//! - [`block_pivoting`](mod@block_pivoting): block principal pivoting (Júdice & Pires 1994)
//!   for a sparse symmetric positive definite matrix ([`SymSparse`](crate::sparse::SymSparse)),
//!   in the contact sign convention `λ ≥ 0, w = Aλ − c ≥ 0`, warm-started from a guessed
//!   active set, with [`natural_residual`] and the minimum-norm certificate
//!   [`min_norm_certificate`];
//! - [`enumerate_all`]: brute-force enumeration of all complementary bases for `n ≤ 8`, used
//!   as a test oracle and to list every solution of small LCPs;
//! - [`Mlcp`] and [`solve_mlcp_lemke`]: the mixed LCP reduced to an LCP by a Schur complement
//!   (Cottle–Pang–Stone Ch. 1).

use nalgebra::{DMatrix, DVector};

use crate::status::{Residuals, SolveStatus, SolverError};

pub mod block_pivoting;
mod enumerate;
mod lemke;
mod mlcp;
mod pgs;

pub use block_pivoting::{
    block_pivoting, block_pivoting_factored, min_norm_certificate, min_norm_certificate_factored,
    natural_residual, PivotingSolution,
};
pub use enumerate::{enumerate_all, ENUMERATE_MAX_N};
pub use lemke::{lemke, LemkeOptions};
pub use mlcp::{solve_mlcp_lemke, Mlcp, MlcpSolution};
pub use pgs::{pgs, PgsOptions};

/// A linear complementarity problem LCP(M, q): find `z ≥ 0` with `w = M z + q ≥ 0` and
/// `zᵀ w = 0` (Cottle–Pang–Stone Ch. 1). `M` is dense `n × n`, `q` has length `n`; both are
/// finite (checked by [`Lcp::new`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Lcp {
    m: DMatrix<f64>,
    q: DVector<f64>,
}

impl Lcp {
    /// Builds the LCP after checking that `m` is square, that `q` matches its size and that
    /// every entry is finite.
    ///
    /// # Errors
    /// [`SolverError::DimensionMismatch`] for a non-square `m` or a `q` of the wrong length,
    /// [`SolverError::NonFinite`] for NaN or infinite entries.
    pub fn new(m: DMatrix<f64>, q: DVector<f64>) -> Result<Self, SolverError> {
        const SOLVER: &str = "lcp";
        if m.nrows() != m.ncols() {
            return Err(SolverError::DimensionMismatch {
                solver: SOLVER,
                what: "columns of M (M must be square)",
                expected: m.nrows(),
                got: m.ncols(),
            });
        }
        if q.len() != m.nrows() {
            return Err(SolverError::DimensionMismatch {
                solver: SOLVER,
                what: "length of q (rows of M)",
                expected: m.nrows(),
                got: q.len(),
            });
        }
        if m.iter().any(|x| !x.is_finite()) {
            return Err(SolverError::NonFinite {
                solver: SOLVER,
                what: "M",
            });
        }
        if q.iter().any(|x| !x.is_finite()) {
            return Err(SolverError::NonFinite {
                solver: SOLVER,
                what: "q",
            });
        }
        Ok(Self { m, q })
    }

    /// The matrix `M`.
    pub fn m(&self) -> &DMatrix<f64> {
        &self.m
    }

    /// The vector `q`.
    pub fn q(&self) -> &DVector<f64> {
        &self.q
    }

    /// The problem size `n`.
    pub fn n(&self) -> usize {
        self.q.len()
    }

    /// `w = M z + q` for a given `z` (no check of the length of `z` beyond nalgebra's own;
    /// use [`Lcp::evaluate`] for a checked version).
    fn w_of(&self, z: &DVector<f64>) -> DVector<f64> {
        let mut w = self.q.clone();
        w.gemv(1.0, &self.m, z, 1.0);
        w
    }

    /// Evaluates a candidate `z`: returns `w = M z + q` and the [`Residuals`] of the pair
    /// (see [`lcp_residuals`]).
    ///
    /// # Errors
    /// [`SolverError::DimensionMismatch`] if `z` has the wrong length,
    /// [`SolverError::NonFinite`] if it contains NaN or infinity.
    pub fn evaluate(&self, z: &DVector<f64>) -> Result<(DVector<f64>, Residuals), SolverError> {
        if z.len() != self.n() {
            return Err(SolverError::DimensionMismatch {
                solver: "lcp",
                what: "length of z",
                expected: self.n(),
                got: z.len(),
            });
        }
        if z.iter().any(|x| !x.is_finite()) {
            return Err(SolverError::NonFinite {
                solver: "lcp",
                what: "z",
            });
        }
        let w = self.w_of(z);
        let r = lcp_residuals(z, &w);
        Ok((w, r))
    }

    /// Assembles an [`LcpSolution`] from `z`: recomputes `w = M z + q` exactly and measures
    /// the residuals.
    pub(crate) fn solution(
        &self,
        z: DVector<f64>,
        status: SolveStatus,
        count: usize,
    ) -> LcpSolution {
        let w = self.w_of(&z);
        let residuals = lcp_residuals(&z, &w);
        LcpSolution {
            z,
            w,
            status,
            residuals,
            iterations: count,
        }
    }
}

/// A solution of an [`Lcp`] returned by the solvers of this module.
#[derive(Debug, Clone, PartialEq)]
pub struct LcpSolution {
    /// The complementary variable `z ≥ 0`.
    pub z: DVector<f64>,
    /// `w = M z + q`, recomputed from the returned `z`.
    pub w: DVector<f64>,
    /// How the solve ended.
    pub status: SolveStatus,
    /// Measured residuals of `(z, w)` (see [`lcp_residuals`]); `dual` is always 0.
    pub residuals: Residuals,
    /// Lemke: number of pivots; PGS: number of sweeps; enumeration: number of bases tried.
    pub iterations: usize,
}

/// Residuals of an LCP candidate pair `(z, w)` in the max-norm:
/// `primal = max(max_i (−zᵢ)⁺, max_i (−wᵢ)⁺)` (violation of `z ≥ 0`, `w ≥ 0`) and
/// `complementarity = max_i |zᵢ wᵢ|`; `dual = 0`. `w` should be `M z + q`; the solvers
/// always recompute it before calling this. Lengths are assumed equal (the shorter one
/// bounds the complementarity loop).
pub fn lcp_residuals(z: &DVector<f64>, w: &DVector<f64>) -> Residuals {
    let neg = |v: &DVector<f64>| v.iter().fold(0.0_f64, |a, &x| a.max(-x));
    let primal = neg(z).max(neg(w));
    let complementarity = z
        .iter()
        .zip(w.iter())
        .fold(0.0_f64, |a, (&zi, &wi)| a.max((zi * wi).abs()));
    Residuals {
        primal,
        dual: 0.0,
        complementarity,
    }
}

/// Infinity norm of a slice (0 for an empty slice).
pub(crate) fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0_f64, |a, &x| a.max(x.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residuals_measure_violation_and_complementarity() {
        let z = DVector::from_vec(vec![1.0, -0.5, 0.0]);
        let w = DVector::from_vec(vec![0.25, 0.0, -2.0]);
        let r = lcp_residuals(&z, &w);
        assert_eq!(r.primal, 2.0);
        assert_eq!(r.complementarity, 0.25);
        assert_eq!(r.dual, 0.0);
    }

    #[test]
    fn constructor_rejects_bad_input() {
        let e = Lcp::new(DMatrix::zeros(2, 3), DVector::zeros(2)).unwrap_err();
        assert!(matches!(
            e,
            SolverError::DimensionMismatch {
                expected: 2,
                got: 3,
                ..
            }
        ));
        let e = Lcp::new(DMatrix::zeros(2, 2), DVector::zeros(3)).unwrap_err();
        assert!(matches!(
            e,
            SolverError::DimensionMismatch {
                expected: 2,
                got: 3,
                ..
            }
        ));
        let mut m = DMatrix::zeros(2, 2);
        m[(1, 0)] = f64::NAN;
        let e = Lcp::new(m, DVector::zeros(2)).unwrap_err();
        assert!(matches!(e, SolverError::NonFinite { what: "M", .. }));
        let q = DVector::from_vec(vec![0.0, f64::INFINITY]);
        let e = Lcp::new(DMatrix::zeros(2, 2), q).unwrap_err();
        assert!(matches!(e, SolverError::NonFinite { what: "q", .. }));
    }
}
