//! Envelope (skyline) `L D Lᵀ` factorization with prescribed pivot signs (George & Liu 1981,
//! ch. 4; see the parent module).

use super::SymSparse;

/// Envelope (skyline) factorization `A = L D Lᵀ` (L unit lower triangular) of a symmetric
/// matrix whose pivots have known signs: positive definite matrices (all pivots > 0) and
/// symmetric quasi-definite ones `[H Bᵀ; B −C]` (H, C positive definite), which are
/// strongly factorizable in any symmetric order (Vanderbei, *SIAM J. Optim.* 5, 1995).
/// Envelope storage after George & Liu, *Computer Solution of Large Sparse Positive Definite
/// Systems* (1981), ch. 4.
#[derive(Debug, Clone)]
pub struct Skyline {
    /// First stored column of each row of L.
    first: Vec<usize>,
    /// Offset of row i's first stored entry in `l`.
    start: Vec<usize>,
    /// Rows of L from `first[i]` to i − 1, then D_i in the diagonal slot.
    l: Vec<f64>,
}

impl Skyline {
    /// Factors the principal submatrix of `a` on `index` (in that order; all of `a` when
    /// `None`) requiring positive pivots. Returns `None` if a pivot is not positive (A not
    /// positive definite).
    pub fn factor(a: &SymSparse, index: Option<&[usize]>) -> Option<Skyline> {
        Self::factor_signed(a, index, &|_| true)
    }

    /// As [`Skyline::factor`], with pivot k required positive when `positive(k)` and
    /// negative otherwise (quasi-definite matrices).
    pub fn factor_signed(
        a: &SymSparse,
        index: Option<&[usize]>,
        positive: &dyn Fn(usize) -> bool,
    ) -> Option<Skyline> {
        let n = index.map_or(a.n, <[usize]>::len);
        // Position of each original index in the submatrix.
        let mut pos = vec![usize::MAX; a.n];
        match index {
            Some(idx) => {
                for (k, &i) in idx.iter().enumerate() {
                    pos[i] = k;
                }
            }
            None => {
                for (k, p) in pos.iter_mut().enumerate() {
                    *p = k;
                }
            }
        }
        let orig = |k: usize| index.map_or(k, |idx| idx[k]);
        let mut first = vec![0; n];
        let mut start = vec![0; n + 1];
        for k in 0..n {
            let mut f = k;
            for &(j, _) in &a.rows[orig(k)] {
                let pj = pos[j];
                if pj < f {
                    f = pj;
                }
            }
            first[k] = f;
            start[k + 1] = start[k] + (k - f + 1);
        }
        let mut l = vec![0.0; start[n]];
        for k in 0..n {
            for &(j, v) in &a.rows[orig(k)] {
                let pj = pos[j];
                if pj != usize::MAX && pj <= k {
                    l[start[k] + pj - first[k]] = v;
                }
            }
        }
        // Row i: u_j = A_ij − Σ_k L_ik u_k... with u_k = L_ik D_k kept in place first.
        for i in 0..n {
            let fi = first[i];
            let si = start[i];
            for j in fi..i {
                let fj = first[j];
                let sj = start[j];
                let lo = fi.max(fj);
                let mut s = l[si + j - fi];
                for k in lo..j {
                    // l[si + k − fi] holds L_ik·D_k (not yet scaled) for k < j.
                    s -= l[si + k - fi] * l[sj + k - fj];
                }
                l[si + j - fi] = s;
            }
            // Now l[i, j] = L_ij D_j; scale and accumulate D_i.
            let mut d = l[si + i - fi];
            for j in fi..i {
                let dj = l[start[j] + j - first[j]];
                let u = l[si + j - fi];
                let lij = u / dj;
                d -= lij * u;
                l[si + j - fi] = lij;
            }
            let ok = d.is_finite() && if positive(i) { d > 0.0 } else { d < 0.0 };
            if !ok {
                return None;
            }
            l[si + i - fi] = d;
        }
        Some(Skyline { first, start, l })
    }

    /// Dimension.
    pub fn dim(&self) -> usize {
        self.first.len()
    }

    /// Solves `L D Lᵀ x = b` in place.
    pub fn solve_mut(&self, b: &mut [f64]) {
        let n = self.dim();
        for i in 0..n {
            let fi = self.first[i];
            let row = &self.l[self.start[i]..self.start[i + 1]];
            let mut s = b[i];
            for k in fi..i {
                s -= row[k - fi] * b[k];
            }
            b[i] = s;
        }
        for (i, bi) in b.iter_mut().enumerate().take(n) {
            *bi /= self.l[self.start[i + 1] - 1];
        }
        for i in (0..n).rev() {
            let fi = self.first[i];
            let row = &self.l[self.start[i]..self.start[i + 1]];
            let bi = b[i];
            for k in fi..i {
                b[k] -= row[k - fi] * bi;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{random_spd, sparse};
    use super::*;
    use nalgebra::{DMatrix, DVector};

    #[test]
    fn skyline_solves_like_dense_cholesky() {
        let a = random_spd(9, 3);
        let s = sparse(&a);
        let f = Skyline::factor(&s, None).expect("spd");
        let b = DVector::from_fn(9, |i, _| i as f64 - 3.0);
        let mut x = b.as_slice().to_vec();
        f.solve_mut(&mut x);
        let xd = a.clone().cholesky().expect("spd").solve(&b);
        for i in 0..9 {
            assert!((x[i] - xd[i]).abs() < 1e-9 * (1.0 + xd[i].abs()));
        }
        // A principal submatrix.
        let idx = [1, 4, 5, 8];
        let f = Skyline::factor(&s, Some(&idx)).expect("spd");
        let sub = DMatrix::from_fn(4, 4, |i, j| a[(idx[i], idx[j])]);
        let bs = DVector::from_fn(4, |i, _| 1.0 + i as f64);
        let mut x = bs.as_slice().to_vec();
        f.solve_mut(&mut x);
        let xd = sub.cholesky().expect("spd").solve(&bs);
        for i in 0..4 {
            assert!((x[i] - xd[i]).abs() < 1e-9 * (1.0 + xd[i].abs()));
        }
    }

    #[test]
    fn non_positive_pivot_is_reported() {
        let a = sparse(&DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]));
        assert!(Skyline::factor(&a, None).is_none());
    }

    /// A quasi-definite matrix `[I Bᵀ; B −I]` (rows of the two blocks interleaved, as the
    /// friction stage orders them) factors with the prescribed signs, not as positive
    /// definite, and its solve has a small residual; the envelope of a tridiagonal matrix
    /// stores only the band.
    #[test]
    fn quasi_definite_matrix_factors_with_mixed_pivots() {
        let n = 5;
        let b = random_spd(n, 7) - DMatrix::identity(n, n);
        // Unknown 2i is x_i (positive pivot), 2i + 1 is y_i (negative pivot).
        let mut t = Vec::new();
        for i in 0..n {
            t.push((2 * i, 2 * i, 1.0));
            t.push((2 * i + 1, 2 * i + 1, -1.0));
            for j in 0..n {
                t.push((2 * i + 1, 2 * j, b[(i, j)]));
                t.push((2 * j, 2 * i + 1, b[(i, j)]));
            }
        }
        let k = SymSparse::from_triplets(2 * n, &t);
        assert!(Skyline::factor(&k, None).is_none());
        let f = Skyline::factor_signed(&k, None, &|p| p % 2 == 0).expect("quasi-definite");
        assert_eq!(f.dim(), 2 * n);
        let rhs = DVector::from_fn(2 * n, |i, _| (i as f64).sin());
        let mut x = rhs.as_slice().to_vec();
        f.solve_mut(&mut x);
        let r = &rhs - k.mul(&DVector::from_vec(x));
        assert!(r.amax() < 1e-10, "residual {:e}", r.amax());

        let tri = SymSparse::from_triplets(
            6,
            &(0..6)
                .flat_map(|i| {
                    let mut e = vec![(i, i, 4.0)];
                    if i > 0 {
                        e.push((i, i - 1, -1.0));
                        e.push((i - 1, i, -1.0));
                    }
                    e
                })
                .collect::<Vec<_>>(),
        );
        let f = Skyline::factor(&tri, None).expect("spd");
        assert_eq!(f.l.len(), 11);
    }
}
