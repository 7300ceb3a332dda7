//! Block principal pivoting for the LCP with a symmetric positive definite sparse matrix,
//! and a certificate that its solution is also the minimum-norm one.
//!
//! The problem is written with the sign convention of contact force computations:
//!
//! ```text
//! λ ≥ 0,   w = A λ − c ≥ 0,   λᵀ w = 0          (A symmetric positive definite)
//! ```
//!
//! i.e. LCP(M, q) of the parent module with `M = A`, `q = −c`. For A positive definite it
//! has exactly one solution (Cottle, Pang & Stone, *The Linear Complementarity Problem*,
//! 1992, Thm. 3.1.6).
//!
//! - [`block_pivoting`] / [`block_pivoting_factored`]: the block principal pivoting method
//!   of Júdice & Pires, "A block principal pivoting algorithm for large-scale strictly
//!   monotone linear complementarity problems", *Computers & Operations Research* 21 (1994):
//!   from a guessed active set P (rows that carry force), solve `A_PP λ_P = c_P` and flip
//!   every row that is infeasible (`λ_i < 0` in P, `w_i < 0` outside it) at once; after
//!   three block pivots that do not reduce the number of infeasibilities, fall back to
//!   Murty's least-index single pivot (K. G. Murty, "Note on a Bard-type scheme for solving
//!   the complementarity problem", *Opsearch* 11, 1974), which is finite for P-matrices.
//!   Each iteration costs one sparse Cholesky factorization `L Lᵀ` of `A_PP`
//!   ([`SparseLdlt::cholesky`], faer's sparse Cholesky after an AMD ordering) and one step
//!   of iterative refinement. The ordering and symbolic factorization are recomputed at
//!   every pivot, since each pivot changes the index set P and so the pattern of `A_PP`.
//!   A good warm start (the previous time step's active set) usually ends in zero or one
//!   pivot.
//! - [`natural_residual`]: the relative natural-map residual `max_i |min(λ_i, w_i)|`, the
//!   acceptance check for a solution.
//! - [`min_norm_certificate`] / [`min_norm_certificate_factored`]: checks the KKT conditions
//!   of the minimum-norm QP `min ½‖λ‖² s.t. Aλ ≥ c, λ ≥ 0` at an LCP solution, i.e. whether
//!   the LCP solution is also the QP's solution.
//!
//! Tolerances: a row counts as infeasible when it is below `−1e-13 · max(1, |c|∞)`; the
//! returned λ is clipped to λ ≥ 0. Limitations: A must be positive definite on every active
//! block reached (a failed factorization returns `None`); there is no degeneracy handling
//! beyond Murty's rule, and the method gives up after `max_iter` pivots (`None`), so callers
//! should check [`natural_residual`] and keep a fallback solver.

use nalgebra::DVector;

use crate::sparse::{SparseLdlt, SymSparse};

/// Solves `A_PP x_P = c_P` (P = `index`) with one step of iterative refinement.
fn solve_sub(a: &SymSparse, index: &[usize], c: &DVector<f64>) -> Option<Vec<f64>> {
    let f = SparseLdlt::cholesky(a, Some(index))?;
    solve_sub_with(a, index, &f, c)
}

/// As [`solve_sub`] with the factorization `f` of `A_PP` given.
fn solve_sub_with(
    a: &SymSparse,
    index: &[usize],
    f: &SparseLdlt,
    c: &DVector<f64>,
) -> Option<Vec<f64>> {
    let mut x: Vec<f64> = index.iter().map(|&i| c[i]).collect();
    f.solve_mut(&mut x)?;
    let mut pos = vec![usize::MAX; a.n];
    for (k, &i) in index.iter().enumerate() {
        pos[i] = k;
    }
    let mut r: Vec<f64> = index
        .iter()
        .map(|&i| {
            c[i] - a.rows[i]
                .iter()
                .filter(|e| pos[e.0] != usize::MAX)
                .map(|&(j, v)| v * x[pos[j]])
                .sum::<f64>()
        })
        .collect();
    f.solve_mut(&mut r)?;
    for (xi, ri) in x.iter_mut().zip(&r) {
        *xi += ri;
    }
    Some(x)
}

/// Complementarity residual of the LCP `λ ≥ 0, w = Aλ − c ≥ 0, λᵀw = 0`: the natural-map
/// residual `max_i |min(λ_i, w_i)|` relative to `max(1, |c|∞, |λ|∞)` (zero exactly at a
/// solution; it also measures violations of `λ ≥ 0` and `w ≥ 0`).
pub fn natural_residual(a: &SymSparse, c: &DVector<f64>, lambda: &DVector<f64>) -> f64 {
    let w = a.mul(lambda) - c;
    let scale = 1.0f64.max(c.amax()).max(lambda.amax());
    lambda
        .iter()
        .zip(w.iter())
        .map(|(l, w)| l.min(*w).abs())
        .fold(0.0, f64::max)
        / scale
}

/// Solves the LCP `λ ≥ 0, w = Aλ − c ≥ 0, λᵀw = 0` for symmetric positive definite A by
/// block principal pivoting (Júdice & Pires 1994) from the active-set guess `warm`
/// (`warm[i]` = row i carries force; rows beyond `warm`'s length start active when
/// `c_i > 0`), switching to Murty's least-index single pivot after three block pivots that
/// do not reduce the number of infeasibilities. Returns the solution and the number of
/// pivots, or `None` after `max_iter` pivots or a failed factorization.
pub fn block_pivoting(
    a: &SymSparse,
    c: &DVector<f64>,
    warm: &[bool],
    max_iter: usize,
) -> Option<(DVector<f64>, usize)> {
    block_pivoting_factored(a, c, warm, max_iter).map(|s| (s.lambda, s.pivots))
}

/// A solution of [`block_pivoting_factored`] with the factorization of its final active
/// block, which [`min_norm_certificate_factored`] reuses when the certificate's index set
/// is the same.
#[derive(Debug, Clone)]
pub struct PivotingSolution {
    /// The solution λ.
    pub lambda: DVector<f64>,
    /// Number of pivots.
    pub pivots: usize,
    /// The final active set P (sorted).
    pub active: Vec<usize>,
    /// Sparse Cholesky factorization of `A_PP` (`None` when P is empty).
    pub factor: Option<SparseLdlt>,
}

/// [`block_pivoting`], returning the final active set and its factorization as well.
pub fn block_pivoting_factored(
    a: &SymSparse,
    c: &DVector<f64>,
    warm: &[bool],
    max_iter: usize,
) -> Option<PivotingSolution> {
    let n = a.n;
    let mut active: Vec<bool> = (0..n)
        .map(|i| warm.get(i).copied().unwrap_or(c[i] > 0.0))
        .collect();
    let mut best_infeasible = usize::MAX;
    let mut stalled = 0;
    let tol = 1e-13 * 1.0f64.max(c.amax());
    for it in 0..max_iter {
        let index: Vec<usize> = (0..n).filter(|&i| active[i]).collect();
        let mut lambda = DVector::zeros(n);
        let mut factor = None;
        if !index.is_empty() {
            let f = SparseLdlt::cholesky(a, Some(&index))?;
            let x = solve_sub_with(a, &index, &f, c)?;
            for (k, &i) in index.iter().enumerate() {
                lambda[i] = x[k];
            }
            factor = Some(f);
        }
        let w = a.mul(&lambda) - c;
        let bad: Vec<usize> = (0..n)
            .filter(|&i| {
                if active[i] {
                    lambda[i] < -tol
                } else {
                    w[i] < -tol
                }
            })
            .collect();
        if bad.is_empty() {
            for x in lambda.iter_mut() {
                *x = x.max(0.0);
            }
            return Some(PivotingSolution {
                lambda,
                pivots: it,
                active: index,
                factor,
            });
        }
        if bad.len() < best_infeasible {
            best_infeasible = bad.len();
            stalled = 0;
        } else {
            stalled += 1;
        }
        if stalled >= 3 {
            // Murty's rule: flip the infeasible row of least index.
            let i = bad[0];
            active[i] = !active[i];
        } else {
            for &i in &bad {
                active[i] = !active[i];
            }
        }
    }
    None
}

/// Checks that an LCP solution λ (rows with λ_i > 0 form P) also solves the minimum-norm QP
/// `min ½‖λ‖² s.t. Aλ ≥ c, λ ≥ 0`: with the multipliers `μ_P = A_PP⁻¹ λ_P` of the rows
/// `Aλ ≥ c` and `ν = λ − Aμ` of the bounds, the KKT conditions hold iff `μ ≥ 0` and `ν ≥ 0`
/// (both up to `tol` relative to `|μ|∞` and `|λ|∞`). They always hold for an M-matrix A
/// (nonpositive off-diagonal entries, e.g. the normal rows of a vertical stack of bodies),
/// where the LCP solution is the least element of the feasible set (Cottle, Pang & Stone
/// 1992, §3.11). Returns `false` also when `A_PP` fails to factor.
pub fn min_norm_certificate(a: &SymSparse, lambda: &DVector<f64>, tol: f64) -> bool {
    min_norm_certificate_factored(a, lambda, tol, None)
}

/// [`min_norm_certificate`], reusing the factorization `known = (P', L Lᵀ of A_P'P')`
/// when P' is the certificate's index set `{i : λ_i > 0}` (the same arithmetic as
/// factoring again).
pub fn min_norm_certificate_factored(
    a: &SymSparse,
    lambda: &DVector<f64>,
    tol: f64,
    known: Option<(&[usize], &SparseLdlt)>,
) -> bool {
    let n = a.n;
    let index: Vec<usize> = (0..n).filter(|&i| lambda[i] > 0.0).collect();
    if index.is_empty() {
        return true;
    }
    let mu_p = match known {
        Some((p, f)) if p == index.as_slice() => solve_sub_with(a, &index, f, lambda),
        _ => solve_sub(a, &index, lambda),
    };
    let Some(mu_p) = mu_p else {
        return false;
    };
    let mut mu = DVector::zeros(n);
    for (k, &i) in index.iter().enumerate() {
        mu[i] = mu_p[k];
    }
    let scale = mu.amax().max(f64::MIN_POSITIVE);
    if mu.iter().any(|&m| m < -tol * scale) {
        return false;
    }
    let nu = lambda - a.mul(&mu);
    let nscale = lambda.amax().max(f64::MIN_POSITIVE);
    nu.iter().all(|&x| x >= -tol * nscale)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lcp::{lemke, Lcp, LemkeOptions};
    use crate::sparse::test_util::{random_spd, sparse};
    use nalgebra::DMatrix;

    #[test]
    fn lcp_solution_is_complementary() {
        for draw in 0..20 {
            let a = random_spd(8, draw);
            let s = sparse(&a);
            let c = DVector::from_fn(8, |i, _| ((i as f64 + draw as f64) * 1.7).sin());
            let (x, _) = block_pivoting(&s, &c, &[], 100).expect("pivoting converges");
            assert!(x.iter().all(|&v| v >= 0.0));
            assert!(natural_residual(&s, &c, &x) < 1e-10);
        }
    }

    /// The LCP with A positive definite has one solution: block pivoting, from a cold and
    /// from a wrong warm start, finds Lemke's; a warm start at the solution's active set
    /// takes no pivot and returns that set with its factorization.
    #[test]
    fn agrees_with_lemke_and_warm_start_at_the_solution_takes_no_pivot() {
        for draw in 20..30 {
            let a = random_spd(10, draw);
            let s = sparse(&a);
            let c = DVector::from_fn(10, |i, _| ((i * 7 + draw as usize) as f64).cos());
            let lcp = Lcp::new(a.clone(), -&c).expect("finite data");
            let reference = lemke(&lcp, &LemkeOptions::default()).expect("lemke solves");
            let wrong: Vec<bool> = (0..10).map(|i| i % 2 == 0).collect();
            for warm in [&[][..], &wrong[..]] {
                let (x, _) = block_pivoting(&s, &c, warm, 200).expect("pivoting converges");
                assert!(
                    (&x - &reference.z).amax() < 1e-9,
                    "draw {draw}: {x} vs {}",
                    reference.z
                );
            }
            let active: Vec<bool> = reference.z.iter().map(|&z| z > 1e-12).collect();
            let sol = block_pivoting_factored(&s, &c, &active, 200).expect("converges");
            assert_eq!(sol.pivots, 0);
            let p: Vec<usize> = (0..10).filter(|&i| active[i]).collect();
            assert_eq!(sol.active, p);
            assert_eq!(sol.factor.is_some(), !p.is_empty());
        }
    }

    /// For an M-matrix (the tridiagonal matrix of a vertical stack) the LCP solution is the
    /// minimum-norm QP solution and the certificate holds, with or without the reused
    /// factorization; for a matrix with positive off-diagonal coupling the two problems can
    /// differ and the certificate detects it.
    #[test]
    fn min_norm_certificate_accepts_m_matrices_and_rejects_a_counterexample() {
        let n = 6;
        let m = DMatrix::from_fn(n, n, |i, j| {
            if i == j {
                2.0
            } else if i.abs_diff(j) == 1 {
                -1.0
            } else {
                0.0
            }
        });
        let s = sparse(&m);
        let c = DVector::from_fn(n, |i, _| 1.0 - 0.3 * i as f64);
        let sol = block_pivoting_factored(&s, &c, &[], 50).expect("converges");
        assert!(natural_residual(&s, &c, &sol.lambda) < 1e-12);
        assert!(min_norm_certificate(&s, &sol.lambda, 1e-9));
        let known = sol.factor.as_ref().map(|f| (sol.active.as_slice(), f));
        assert!(min_norm_certificate_factored(&s, &sol.lambda, 1e-9, known));

        // A = [1 2; 2 5], c = (1, 2): the LCP solution is λ = (1, 0) with w = (0, 0), but
        // the min-norm point of {Aλ ≥ c, λ ≥ 0} is (0.2, 0.4), of norm √0.2 < 1 (the bound
        // multiplier ν = λ − Aμ = (0, −2) is negative).
        let a = sparse(&DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 5.0]));
        let c = DVector::from_vec(vec![1.0, 2.0]);
        let (x, _) = block_pivoting(&a, &c, &[true, false], 10).expect("converges");
        assert!(natural_residual(&a, &c, &x) < 1e-12);
        assert!((x[0] - 1.0).abs() < 1e-12 && x[1].abs() < 1e-12, "{x}");
        assert!(!min_norm_certificate(&a, &x, 1e-9));
    }
}
