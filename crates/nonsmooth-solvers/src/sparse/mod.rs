//! Symmetric sparse matrices and their sparse factorization.
//!
//! - [`SymSparse`]: a symmetric sparse matrix stored by rows (both triangles, column indices
//!   sorted), assembled from triplets. A matrix such as the Delassus matrix `G M⁻¹ Gᵀ` of
//!   contacts that couple only through shared bodies has O(rows) entries and costs O(rows)
//!   to assemble and to multiply.
//! - [`SparseLdlt`]: the factorization of a symmetric matrix, or of one of its principal
//!   submatrices, whose pivots have prescribed signs: `P A Pᵀ = L Lᵀ` for positive definite
//!   matrices ([`SparseLdlt::cholesky`]) and `A = L D Lᵀ` for symmetric quasi-definite
//!   ones `[H Bᵀ; B −C]` ([`SparseLdlt::quasi_definite`]), which are strongly factorizable
//!   in any symmetric order (Vanderbei, "Symmetric quasidefinite matrices", *SIAM J. Optim.*
//!   5, 1995), so no pivoting is needed; these keep the caller's order, on which the
//!   stability depends (Gill, Saunders & Shinnerl, *SIAM J. Matrix Anal. Appl.* 17, 1996).
//!
//! Decision: the factorizations are faer's sparse Cholesky (`faer::sparse::linalg::cholesky`:
//! an approximate minimum degree ordering for the positive definite case, then a simplicial
//! or supernodal numeric
//! factorization, chosen by faer from the flop count), not a hand-written one. faer is
//! maintained, already used by this crate for the Newton Hessian of the regularized contact
//! solver, and its fill-reducing ordering makes the fill independent of the order in which
//! callers number the rows (an envelope factorization, George & Liu 1981, ch. 4, fills the
//! whole profile of the given order). The cost is a new ordering and symbolic factorization
//! per factorization, which callers whose pattern changes every time (block pivoting's
//! active sets) pay anyway. faer's `L D Lᵀ` without regularization accepts any nonzero
//! pivot, so the quasi-definite factorization checks the signs of D afterwards.
//!
//! Checks and limitations: a factorization fails (returns `None`) when a pivot is not finite
//! or has the wrong sign, which detects a matrix that is not positive definite (or not
//! quasi-definite with the given signs); there is no pivoting. Solves are not refined;
//! callers that need accuracy add a step of iterative refinement with [`SymSparse::mul`].

use nalgebra::{DMatrix, DVector};

mod ldlt;

pub use ldlt::SparseLdlt;

/// Symmetric sparse matrix stored by rows (both triangles), column indices sorted.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SymSparse {
    /// Dimension n.
    pub n: usize,
    /// Row i: `(column, value)` pairs, sorted by column, no duplicates.
    pub rows: Vec<Vec<(usize, f64)>>,
}

impl SymSparse {
    /// An empty (all-zero) n × n matrix.
    pub fn zeros(n: usize) -> Self {
        SymSparse {
            n,
            rows: vec![Vec::new(); n],
        }
    }

    /// From unsorted `(row, column, value)` triplets (both triangles given; duplicates are
    /// summed; entries outside the n × n range are dropped).
    pub fn from_triplets(n: usize, triplets: &[(usize, usize, f64)]) -> Self {
        let mut rows = vec![Vec::new(); n];
        for &(i, j, v) in triplets {
            if i < n && j < n {
                rows[i].push((j, v));
            }
        }
        let mut m = SymSparse { n, rows };
        m.normalize();
        m
    }

    /// Sorts each row and sums duplicate entries (in place, no allocation).
    pub fn normalize(&mut self) {
        for row in &mut self.rows {
            row.sort_unstable_by_key(|e| e.0);
            let mut kept = 0;
            for k in 0..row.len() {
                let (j, v) = row[k];
                if kept > 0 && row[kept - 1].0 == j {
                    row[kept - 1].1 += v;
                } else {
                    row[kept] = (j, v);
                    kept += 1;
                }
            }
            row.truncate(kept);
        }
    }

    /// `A x`.
    pub fn mul(&self, x: &DVector<f64>) -> DVector<f64> {
        DVector::from_iterator(
            self.n,
            self.rows
                .iter()
                .map(|r| r.iter().map(|&(j, v)| v * x[j]).sum::<f64>()),
        )
    }

    /// Entry (i, j) (zero if not stored).
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.rows[i]
            .binary_search_by_key(&j, |e| e.0)
            .map(|k| self.rows[i][k].1)
            .unwrap_or(0.0)
    }

    /// Dense copy (for dense fallbacks and tests).
    pub fn to_dense(&self) -> DMatrix<f64> {
        let mut m = DMatrix::zeros(self.n, self.n);
        for (i, r) in self.rows.iter().enumerate() {
            for &(j, v) in r {
                m[(i, j)] = v;
            }
        }
        m
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.rows.iter().map(Vec::len).sum()
    }

    /// Largest absolute entry.
    pub fn amax(&self) -> f64 {
        self.rows
            .iter()
            .flat_map(|r| r.iter().map(|e| e.1.abs()))
            .fold(0.0, f64::max)
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::SymSparse;
    use nalgebra::DMatrix;

    /// A random symmetric positive definite matrix `B Bᵀ + 0.1 I` (B uniform in
    /// [−½, ½), from a linear congruential generator started from `draw`).
    pub(crate) fn random_spd(n: usize, draw: u64) -> DMatrix<f64> {
        let mut s = draw;
        let mut rnd = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let b = DMatrix::from_fn(n, n, |_, _| rnd());
        &b * b.transpose() + DMatrix::identity(n, n) * 0.1
    }

    /// The nonzero entries of a dense matrix as a [`SymSparse`].
    pub(crate) fn sparse(m: &DMatrix<f64>) -> SymSparse {
        let mut t = Vec::new();
        for i in 0..m.nrows() {
            for j in 0..m.ncols() {
                if m[(i, j)] != 0.0 {
                    t.push((i, j, m[(i, j)]));
                }
            }
        }
        SymSparse::from_triplets(m.nrows(), &t)
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::{random_spd, sparse};
    use super::*;

    #[test]
    fn triplets_are_sorted_and_duplicates_summed() {
        let m = SymSparse::from_triplets(
            3,
            &[
                (2, 0, 1.0),
                (0, 2, 1.0),
                (1, 1, 2.0),
                (1, 1, 0.5),
                (0, 0, -3.0),
                (5, 0, 9.0),
            ],
        );
        assert_eq!(m.rows[1], vec![(1, 2.5)]);
        assert_eq!(m.rows[0], vec![(0, -3.0), (2, 1.0)]);
        assert_eq!(m.nnz(), 4);
        assert_eq!(m.get(1, 1), 2.5);
        assert_eq!(m.get(1, 2), 0.0);
        assert_eq!(m.amax(), 3.0);
    }

    #[test]
    fn product_and_dense_copy_match_the_dense_matrix() {
        let a = random_spd(7, 11);
        let s = sparse(&a);
        assert_eq!(s.to_dense(), a);
        let x = DVector::from_fn(7, |i, _| (i as f64 * 0.9).cos());
        let (y, yd) = (s.mul(&x), &a * &x);
        assert!((&y - &yd).amax() <= 1e-12 * (1.0 + yd.amax()));
    }
}
