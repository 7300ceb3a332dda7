//! Brute-force enumeration of the complementary bases of a small LCP (Cottle, Pang & Stone,
//! *The Linear Complementarity Problem*, Ch. 1: every solution with a nonsingular
//! complementary basis is the basic solution of one of the `2ⁿ` complementary bases).
//!
//! For each index set `S ⊆ {1..n}` the principal system `M_SS z_S = −q_S` is solved (LU with
//! partial pivoting); `z_{S̄} = 0`, and the candidate is kept if `z ≥ −tol`, `w = M z + q ≥
//! −tol`. Singular principal submatrices (relative pivot below `1e-12`) are skipped, so a
//! continuum of solutions (possible for singular `M`) is represented only by its vertices
//! that have a nonsingular basis.

use nalgebra::{DMatrix, DVector};

use super::{Lcp, LcpSolution};
use crate::status::{SolveStatus, SolverError};

const SOLVER: &str = "lcp_enumerate";

/// Largest problem size accepted by [`enumerate_all`] (`2⁸ = 256` bases).
pub const ENUMERATE_MAX_N: usize = 8;

/// Returns ALL solutions of the [`Lcp`] that have a nonsingular complementary basis, found by
/// trying each of the `2ⁿ` complementary bases (Cottle–Pang–Stone Ch. 1), deduplicated
/// (two solutions whose `z` differ by at most `tol` in the max-norm are one). Negative
/// entries of `z` within `tol` are clipped to 0 and `w = M z + q` is recomputed; a candidate
/// is accepted when its residuals are at most `tol · (1 + ‖q‖∞ + ‖M‖∞)`. Solutions are ordered
/// by the bitmask of their support (`z`-basic set). `LcpSolution::iterations` is `2ⁿ`.
///
/// An empty vector means the LCP has no solution with a nonsingular complementary basis
/// (for nondegenerate problems: no solution at all).
///
/// # Errors
/// [`SolverError::InvalidInput`] if `n > ENUMERATE_MAX_N` or `tol` is not finite and
/// nonnegative.
pub fn enumerate_all(lcp: &Lcp, tol: f64) -> Result<Vec<LcpSolution>, SolverError> {
    let n = lcp.n();
    if n > ENUMERATE_MAX_N {
        return Err(SolverError::InvalidInput {
            solver: SOLVER,
            reason: format!("enumeration is limited to n <= {ENUMERATE_MAX_N}, got n = {n}"),
        });
    }
    if !(tol.is_finite() && tol >= 0.0) {
        return Err(SolverError::InvalidInput {
            solver: SOLVER,
            reason: format!("tol must be finite and nonnegative, got {tol}"),
        });
    }
    let m = lcp.m();
    let q = lcp.q();
    let scale = 1.0 + q.amax() + m.amax();
    let count = 1usize << n;
    let mut out: Vec<LcpSolution> = Vec::new();
    for mask in 0..count {
        let idx: Vec<usize> = (0..n).filter(|&i| mask & (1 << i) != 0).collect();
        let k = idx.len();
        let mut z = DVector::zeros(n);
        if k > 0 {
            let sub = DMatrix::from_fn(k, k, |a, b| m[(idx[a], idx[b])]);
            let rhs = DVector::from_fn(k, |a, _| -q[idx[a]]);
            let lu = sub.lu();
            let u = lu.u();
            let dmax = u.diagonal().amax();
            let dmin = u
                .diagonal()
                .iter()
                .fold(f64::INFINITY, |a, &x| a.min(x.abs()));
            if dmax <= 0.0 || dmin <= 1e-12 * dmax {
                continue;
            }
            let Some(zs) = lu.solve(&rhs) else {
                continue;
            };
            for (a, &i) in idx.iter().enumerate() {
                z[i] = zs[a];
            }
        }
        if z.iter().any(|&x| x < -tol * scale) {
            continue;
        }
        z.iter_mut().for_each(|x| *x = x.max(0.0));
        let sol = lcp.solution(z, SolveStatus::Solved, count);
        if sol.residuals.max() > tol * scale {
            continue;
        }
        if out.iter().any(|s| (&s.z - &sol.z).amax() <= tol) {
            continue;
        }
        out.push(sol);
    }
    Ok(out)
}
