//! The mixed LCP (Cottle, Pang & Stone, *The Linear Complementarity Problem*, Ch. 1): find a
//! free `u ∈ ℝᵐ` and `z ∈ ℝⁿ` with
//!
//! ```text
//! A u + C z + a = 0,
//! w = D u + B z + b ≥ 0,   z ≥ 0,   zᵀ w = 0.
//! ```
//!
//! With `A` nonsingular, `u = −A⁻¹ (C z + a)` and `z` solves the LCP with the Schur
//! complement `M = B − D A⁻¹ C` and `q = b − D A⁻¹ a`.

use nalgebra::{DMatrix, DVector};

use super::{lcp_residuals, lemke, Lcp, LemkeOptions};
use crate::status::{Residuals, SolveStatus, SolverError};

const SOLVER: &str = "mlcp";

/// A mixed LCP `A u + C z + a = 0`, `w = D u + B z + b ≥ 0 ⊥ z ≥ 0` (Cottle–Pang–Stone Ch. 1),
/// with `A` square `m × m`, `C` `m × n`, `D` `n × m`, `B` `n × n`, `a ∈ ℝᵐ`, `b ∈ ℝⁿ`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mlcp {
    a_mat: DMatrix<f64>,
    c_mat: DMatrix<f64>,
    d_mat: DMatrix<f64>,
    b_mat: DMatrix<f64>,
    a_vec: DVector<f64>,
    b_vec: DVector<f64>,
}

impl Mlcp {
    /// Builds the mixed LCP after checking all dimensions and that every entry is finite.
    ///
    /// # Errors
    /// [`SolverError::DimensionMismatch`] naming the offending block,
    /// [`SolverError::NonFinite`] for NaN or infinite entries.
    pub fn new(
        a_mat: DMatrix<f64>,
        c_mat: DMatrix<f64>,
        a_vec: DVector<f64>,
        d_mat: DMatrix<f64>,
        b_mat: DMatrix<f64>,
        b_vec: DVector<f64>,
    ) -> Result<Self, SolverError> {
        let m = a_mat.nrows();
        let n = b_mat.nrows();
        let checks: [(&'static str, usize, usize); 9] = [
            ("columns of A (A must be square)", m, a_mat.ncols()),
            ("columns of B (B must be square)", n, b_mat.ncols()),
            ("rows of C (rows of A)", m, c_mat.nrows()),
            ("columns of C (size of B)", n, c_mat.ncols()),
            ("rows of D (size of B)", n, d_mat.nrows()),
            ("columns of D (size of A)", m, d_mat.ncols()),
            ("length of a (size of A)", m, a_vec.len()),
            ("length of b (size of B)", n, b_vec.len()),
            ("rows of A", m, a_mat.nrows()),
        ];
        for (what, expected, got) in checks {
            if expected != got {
                return Err(SolverError::DimensionMismatch {
                    solver: SOLVER,
                    what,
                    expected,
                    got,
                });
            }
        }
        let finite = |s: &[f64]| s.iter().all(|x| x.is_finite());
        for (what, s) in [
            ("A", a_mat.as_slice()),
            ("C", c_mat.as_slice()),
            ("D", d_mat.as_slice()),
            ("B", b_mat.as_slice()),
            ("a", a_vec.as_slice()),
            ("b", b_vec.as_slice()),
        ] {
            if !finite(s) {
                return Err(SolverError::NonFinite {
                    solver: SOLVER,
                    what,
                });
            }
        }
        Ok(Self {
            a_mat,
            c_mat,
            d_mat,
            b_mat,
            a_vec,
            b_vec,
        })
    }

    /// Number of free variables `m`.
    pub fn n_free(&self) -> usize {
        self.a_mat.nrows()
    }

    /// Number of complementarity pairs `n`.
    pub fn n_compl(&self) -> usize {
        self.b_mat.nrows()
    }

    /// Eliminates `u` by the Schur complement: returns the reduced [`Lcp`] with
    /// `M = B − D A⁻¹ C`, `q = b − D A⁻¹ a`, together with `A⁻¹ C` and `A⁻¹ a` (for recovering
    /// `u = −A⁻¹C z − A⁻¹a`).
    ///
    /// # Errors
    /// [`SolverError::InvalidInput`] if `A` is singular (smallest LU pivot below
    /// `1e-13 · ` largest).
    pub fn reduce(&self) -> Result<(Lcp, DMatrix<f64>, DVector<f64>), SolverError> {
        let m = self.n_free();
        let (ainv_c, ainv_a) = if m == 0 {
            (DMatrix::zeros(0, self.n_compl()), DVector::zeros(0))
        } else {
            let lu = self.a_mat.clone().lu();
            let diag = lu.u().diagonal();
            let dmax = diag.amax();
            let dmin = diag.iter().fold(f64::INFINITY, |a, &x| a.min(x.abs()));
            let singular = || SolverError::InvalidInput {
                solver: SOLVER,
                reason: format!(
                    "A is singular (LU pivots range {dmin:e} .. {dmax:e}); u cannot be eliminated"
                ),
            };
            if dmax <= 0.0 || dmin <= 1e-13 * dmax {
                return Err(singular());
            }
            let ac = lu.solve(&self.c_mat).ok_or_else(singular)?;
            let aa = lu.solve(&self.a_vec).ok_or_else(singular)?;
            (ac, aa)
        };
        let mm = &self.b_mat - &self.d_mat * &ainv_c;
        let q = &self.b_vec - &self.d_mat * &ainv_a;
        let lcp = Lcp::new(mm, q).map_err(|e| SolverError::Failed {
            solver: SOLVER,
            reason: format!("reduced LCP is invalid (A is badly conditioned): {e}"),
        })?;
        Ok((lcp, ainv_c, ainv_a))
    }
}

/// A solution of an [`Mlcp`].
#[derive(Debug, Clone, PartialEq)]
pub struct MlcpSolution {
    /// Free variables.
    pub u: DVector<f64>,
    /// Complementary variables `z ≥ 0`.
    pub z: DVector<f64>,
    /// `w = D u + B z + b`, recomputed from `(u, z)`.
    pub w: DVector<f64>,
    /// Status of the underlying LCP solve.
    pub status: SolveStatus,
    /// `primal`: the largest of the violations of `z ≥ 0`, `w ≥ 0` and `‖A u + C z + a‖∞`;
    /// `complementarity`: `max |zᵢ wᵢ|`; `dual = 0`.
    pub residuals: Residuals,
    /// Number of Lemke pivots.
    pub iterations: usize,
}

/// Solves the [`Mlcp`] by eliminating `u` (Schur complement, [`Mlcp::reduce`]), solving the
/// reduced LCP with [`lemke`] and recovering `u = −A⁻¹ (C z + a)`.
///
/// # Errors
/// [`SolverError::InvalidInput`] if `A` is singular; every error of [`lemke`] (e.g.
/// [`SolverError::NoSolution`] on ray termination).
pub fn solve_mlcp_lemke(mlcp: &Mlcp, opts: &LemkeOptions) -> Result<MlcpSolution, SolverError> {
    let (lcp, ainv_c, ainv_a) = mlcp.reduce()?;
    let sol = lemke(&lcp, opts)?;
    let z = sol.z;
    let u = -(&ainv_c * &z) - &ainv_a;
    let w = &mlcp.d_mat * &u + &mlcp.b_mat * &z + &mlcp.b_vec;
    let eq = &mlcp.a_mat * &u + &mlcp.c_mat * &z + &mlcp.a_vec;
    let mut residuals = lcp_residuals(&z, &w);
    residuals.primal = residuals.primal.max(eq.amax());
    Ok(MlcpSolution {
        u,
        z,
        w,
        status: sol.status,
        residuals,
        iterations: sol.iterations,
    })
}
