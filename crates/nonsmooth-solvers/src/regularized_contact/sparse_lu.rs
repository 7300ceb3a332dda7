//! Sparse LU factorization without pivoting of a structurally symmetric matrix, in a
//! fill-reducing symmetric ordering: `P H Pᵀ = L U`, `L` unit lower triangular, `U` upper
//! triangular, both with the pattern of the Cholesky factor of the same ordering (T. A.
//! Davis, "Direct Methods for Sparse Linear Systems", SIAM 2006, §6: with no pivoting an
//! LU factorization of a structurally symmetric matrix has the fill of its Cholesky
//! factorization). The semismooth Newton Jacobian `A + JᵀGJ` is structurally symmetric
//! (each constraint fills its full block) and nearly symmetric (only the sliding Coulomb
//! contacts' `∂γ_t/∂y_n` breaks the symmetry of an SPD matrix), so the static ordering
//! (AMD) and symbolic structure are computed once per pattern and every factorization is a
//! left-looking numeric pass of about twice the cost of a Cholesky factorization; a pivot
//! that is not safely nonzero makes the factorization report failure, and the caller
//! factors with partial pivoting instead.

use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::SymbolicSparseColMatRef;
use faer::Side;

use super::problem::SOLVER;
use crate::status::SolverError;

/// A pivot is accepted when its magnitude exceeds this fraction of the magnitude of the
/// diagonal entry it was computed from (a smaller one means cancellation).
const PIVOT_TOL: f64 = 1e-10;

/// The ordering and the factors' structure of one pattern, and the numeric factors.
#[derive(Debug, Clone)]
pub(crate) struct StaticLu {
    /// `perm[new] = old`, `inv[old] = new`.
    perm: Vec<usize>,
    inv: Vec<usize>,
    /// Strictly lower pattern of `L` by column (new ordering), rows sorted.
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// Per row `j`, the `(k, position)` of each entry `L[j][k]`, `k < j`.
    row_ptr: Vec<usize>,
    row_entries: Vec<(usize, usize)>,
    /// Position of the transpose `(c, r)` of each stored entry `(r, c)` of `H`.
    transpose: Vec<usize>,
    /// `L` below the diagonal and `Uᵀ` below the diagonal (the same pattern), `U`'s diagonal.
    l: Vec<f64>,
    ut: Vec<f64>,
    d: Vec<f64>,
    /// Dense work vectors.
    x: Vec<f64>,
    y: Vec<f64>,
}

impl StaticLu {
    /// Analysis of the structurally symmetric pattern `(col_ptr, row_idx)` (full, rows
    /// sorted per column).
    pub(crate) fn new(n: usize, col_ptr: &[usize], row_idx: &[usize]) -> Result<Self, SolverError> {
        let failed = |what: String| SolverError::Failed {
            solver: SOLVER,
            reason: format!("symbolic analysis of the Jacobian: {what}"),
        };
        // The lower triangle, for the symbolic Cholesky factorization.
        let mut lp = Vec::with_capacity(n + 1);
        let mut li = Vec::new();
        lp.push(0);
        for j in 0..n {
            li.extend(
                row_idx[col_ptr[j]..col_ptr[j + 1]]
                    .iter()
                    .filter(|&&i| i >= j),
            );
            lp.push(li.len());
        }
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &lp, None, &li);
        let params = CholeskySymbolicParams {
            supernodal_flop_ratio_threshold: SupernodalThreshold::FORCE_SIMPLICIAL,
            ..Default::default()
        };
        let symbolic =
            factorize_symbolic_cholesky(sym, Side::Lower, SymmetricOrdering::Amd, params)
                .map_err(|e| failed(format!("{e:?}")))?;
        let (perm, inv) = match symbolic.perm() {
            Some(p) => {
                let (fwd, inv) = p.arrays();
                (fwd.to_vec(), inv.to_vec())
            }
            None => ((0..n).collect(), (0..n).collect()),
        };
        let SymbolicCholeskyRaw::Simplicial(simp) = symbolic.raw() else {
            return Err(failed("not simplicial".into()));
        };
        let (sp, si) = (simp.col_ptr(), simp.row_idx());
        let mut lcol_ptr = Vec::with_capacity(n + 1);
        let mut lrow = Vec::new();
        lcol_ptr.push(0);
        for j in 0..n {
            let start = lrow.len();
            lrow.extend(si[sp[j]..sp[j + 1]].iter().copied().filter(|&i| i > j));
            lrow[start..].sort_unstable();
            lcol_ptr.push(lrow.len());
        }
        let mut count = vec![0usize; n + 1];
        for &i in &lrow {
            count[i + 1] += 1;
        }
        for j in 0..n {
            count[j + 1] += count[j];
        }
        let row_ptr = count.clone();
        let mut row_entries = vec![(0, 0); lrow.len()];
        let mut next = count;
        for k in 0..n {
            for q in lcol_ptr[k]..lcol_ptr[k + 1] {
                let j = lrow[q];
                row_entries[next[j]] = (k, q);
                next[j] += 1;
            }
        }
        let mut transpose = vec![0; row_idx.len()];
        for c in 0..n {
            for q in col_ptr[c]..col_ptr[c + 1] {
                let r = row_idx[q];
                let t = row_idx[col_ptr[r]..col_ptr[r + 1]]
                    .binary_search(&c)
                    .map_err(|_| failed(format!("pattern not symmetric at ({r}, {c})")))?;
                transpose[q] = col_ptr[r] + t;
            }
        }
        let nnz = lrow.len();
        Ok(Self {
            perm,
            inv,
            col_ptr: lcol_ptr,
            row_idx: lrow,
            row_ptr,
            row_entries,
            transpose,
            l: vec![0.0; nnz],
            ut: vec![0.0; nnz],
            d: vec![0.0; n],
            x: vec![0.0; n],
            y: vec![0.0; n],
        })
    }

    /// Factors the matrix with the analysed pattern and the values `values` (in the
    /// pattern's order); `false` at a pivot that is not safely nonzero.
    pub(crate) fn factor(&mut self, h_ptr: &[usize], h_idx: &[usize], values: &[f64]) -> bool {
        let n = self.d.len();
        for j in 0..n {
            let p = self.perm[j];
            let mut diag = 0.0;
            for q in h_ptr[p]..h_ptr[p + 1] {
                let i = self.inv[h_idx[q]];
                if i >= j {
                    self.x[i] += values[q];
                    self.y[i] += values[self.transpose[q]];
                    if i == j {
                        diag = values[q];
                    }
                }
            }
            for e in self.row_ptr[j]..self.row_ptr[j + 1] {
                let (k, pos) = self.row_entries[e];
                let (ljk, ukj) = (self.l[pos], self.ut[pos]);
                for q in pos..self.col_ptr[k + 1] {
                    let i = self.row_idx[q];
                    self.x[i] -= self.l[q] * ukj;
                    self.y[i] -= self.ut[q] * ljk;
                }
            }
            let d = self.x[j];
            self.x[j] = 0.0;
            self.y[j] = 0.0;
            // a pivot that is not clearly non-zero (NaN included) ends the factorization
            let acceptable = d.is_finite()
                && d.abs().partial_cmp(&(PIVOT_TOL * diag.abs()))
                    == Some(std::cmp::Ordering::Greater);
            if !acceptable {
                for q in self.col_ptr[j]..self.col_ptr[j + 1] {
                    let i = self.row_idx[q];
                    self.x[i] = 0.0;
                    self.y[i] = 0.0;
                }
                for w in self.x.iter_mut().chain(self.y.iter_mut()) {
                    *w = 0.0;
                }
                return false;
            }
            self.d[j] = d;
            for q in self.col_ptr[j]..self.col_ptr[j + 1] {
                let i = self.row_idx[q];
                self.l[q] = self.x[i] / d;
                self.ut[q] = self.y[i];
                self.x[i] = 0.0;
                self.y[i] = 0.0;
            }
        }
        true
    }

    /// Solves `H x = rhs` in place with the last successful factorization.
    pub(crate) fn solve(&mut self, rhs: &mut [f64]) {
        let n = self.d.len();
        let z = &mut self.x;
        for i in 0..n {
            z[i] = rhs[self.perm[i]];
        }
        for j in 0..n {
            let zj = z[j];
            if zj != 0.0 {
                for q in self.col_ptr[j]..self.col_ptr[j + 1] {
                    z[self.row_idx[q]] -= self.l[q] * zj;
                }
            }
        }
        for j in (0..n).rev() {
            let mut s = z[j];
            for q in self.col_ptr[j]..self.col_ptr[j + 1] {
                s -= self.ut[q] * z[self.row_idx[q]];
            }
            z[j] = s / self.d[j];
        }
        for i in 0..n {
            rhs[self.perm[i]] = z[i];
            z[i] = 0.0;
        }
    }
}
