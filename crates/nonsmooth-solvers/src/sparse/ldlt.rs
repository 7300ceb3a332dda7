//! Sparse `L Lᵀ` / `L D Lᵀ` factorization of a symmetric matrix or one of its principal
//! submatrices through faer's sparse Cholesky (see the parent module).

use std::sync::Arc;

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::ldlt::factor::LdltRegularization;
use faer::sparse::linalg::cholesky::supernodal::SupernodalLdltRef;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, LdltRef, LltRef, SymbolicCholesky, SymbolicCholeskyRaw,
    SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};

use super::SymSparse;

/// Which factor the values hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `P A Pᵀ = L Lᵀ` (A positive definite).
    Llt,
    /// `P A Pᵀ = L D Lᵀ`, L unit lower triangular (A quasi-definite).
    Ldlt,
}

/// Sparse factorization of a symmetric matrix (or of a principal submatrix of one) whose
/// pivots have known signs, computed by faer's sparse Cholesky (faer docs,
/// `faer::sparse::linalg::cholesky`):
///
/// - positive definite matrices: `P A Pᵀ = L Lᵀ` after an approximate minimum degree
///   ordering P ([`SparseLdlt::cholesky`]);
/// - symmetric quasi-definite matrices `[H Bᵀ; B −C]` (H, C positive definite), which are
///   strongly factorizable in every symmetric order with the pivot signs of their diagonal
///   blocks (Vanderbei, "Symmetric quasidefinite matrices", *SIAM J. Optim.* 5, 1995):
///   `A = L D Lᵀ` with L unit lower triangular, in the caller's order
///   ([`SparseLdlt::quasi_definite`]). The order is kept because the stability of this
///   factorization depends on it (Gill, Saunders & Shinnerl, "On the stability of Cholesky
///   factorization for symmetric quasidefinite systems", *SIAM J. Matrix Anal. Appl.* 17,
///   1996): the friction stage interleaves each λ row with its β row, and an AMD order of
///   the same systems failed the backward-error check on stiff contacts that the
///   interleaved order passes.
///
/// The symbolic part is shared (`Arc`) by clones.
#[derive(Debug, Clone)]
pub struct SparseLdlt {
    /// Dimension.
    n: usize,
    kind: Kind,
    /// Ordering and symbolic factorization (`None` when n = 0).
    symbolic: Option<Arc<SymbolicCholesky<usize>>>,
    /// Numeric values of the factor, laid out by `symbolic`.
    values: Vec<f64>,
}

/// Upper triangle (columns, row indices sorted, diagonal always stored) of the principal
/// submatrix of `a` on `index` (all of `a` when `None`), in compressed sparse column form.
fn upper_triangle(a: &SymSparse, index: Option<&[usize]>) -> (Vec<usize>, Vec<usize>, Vec<f64>) {
    let n = index.map_or(a.n, <[usize]>::len);
    let mut pos = vec![usize::MAX; a.n];
    match index {
        Some(idx) => {
            for (k, &i) in idx.iter().enumerate() {
                if let Some(p) = pos.get_mut(i) {
                    *p = k;
                }
            }
        }
        None => {
            for (k, p) in pos.iter_mut().enumerate() {
                *p = k;
            }
        }
    }
    let mut col_ptr = Vec::with_capacity(n + 1);
    let mut row_idx = Vec::new();
    let mut val = Vec::new();
    let mut col: Vec<(usize, f64)> = Vec::new();
    col_ptr.push(0);
    for k in 0..n {
        let i = index.map_or(k, |idx| idx[k]);
        col.clear();
        let mut diagonal = false;
        for &(j, v) in a.rows.get(i).map_or(&[][..], Vec::as_slice) {
            let pj = pos.get(j).copied().unwrap_or(usize::MAX);
            if pj != usize::MAX && pj <= k {
                diagonal |= pj == k;
                col.push((pj, v));
            }
        }
        if !diagonal {
            col.push((k, 0.0));
        }
        col.sort_unstable_by_key(|e| e.0);
        for &(r, v) in &col {
            row_idx.push(r);
            val.push(v);
        }
        col_ptr.push(row_idx.len());
    }
    (col_ptr, row_idx, val)
}

impl SparseLdlt {
    /// Factors the principal submatrix of `a` on `index` (in that order; all of `a` when
    /// `None`) as `P A Pᵀ = L Lᵀ`. Returns `None` if a pivot is not positive or not finite
    /// (A not positive definite), or if an index is out of range or repeated.
    pub fn cholesky(a: &SymSparse, index: Option<&[usize]>) -> Option<SparseLdlt> {
        Self::factor(a, index, Kind::Llt, &|_| true)
    }

    /// Factors the principal submatrix of `a` on `index` (as [`SparseLdlt::cholesky`]) as
    /// `A = L D Lᵀ` in the given order (no fill-reducing ordering), requiring the pivot of submatrix row k to be positive when
    /// `positive(k)` and negative otherwise (quasi-definite matrices). Returns `None` if a
    /// pivot has the wrong sign, is zero or is not finite, or if an index is out of range or
    /// repeated.
    pub fn quasi_definite(
        a: &SymSparse,
        index: Option<&[usize]>,
        positive: &dyn Fn(usize) -> bool,
    ) -> Option<SparseLdlt> {
        Self::factor(a, index, Kind::Ldlt, positive)
    }

    fn factor(
        a: &SymSparse,
        index: Option<&[usize]>,
        kind: Kind,
        positive: &dyn Fn(usize) -> bool,
    ) -> Option<SparseLdlt> {
        if let Some(idx) = index {
            // Indices in range and distinct.
            let mut seen = vec![false; a.n];
            for &i in idx {
                if i >= a.n || std::mem::replace(&mut seen[i], true) {
                    return None;
                }
            }
        }
        let n = index.map_or(a.n, <[usize]>::len);
        if n == 0 {
            return Some(SparseLdlt {
                n,
                kind,
                symbolic: None,
                values: Vec::new(),
            });
        }
        let (col_ptr, row_idx, val) = upper_triangle(a, index);
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_cholesky(
            sym,
            Side::Upper,
            match kind {
                Kind::Llt => SymmetricOrdering::Amd,
                Kind::Ldlt => SymmetricOrdering::Identity,
            },
            Default::default(),
        )
        .ok()?;
        let mat = SparseColMatRef::new(sym, &val);
        let mut values = vec![0.0; symbolic.len_val()];
        match kind {
            Kind::Llt => {
                let req =
                    symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default());
                let mut mem = MemBuffer::try_new(req).ok()?;
                symbolic
                    .factorize_numeric_llt::<f64>(
                        &mut values,
                        mat,
                        Side::Upper,
                        Default::default(),
                        Par::Seq,
                        MemStack::new(&mut mem),
                        Default::default(),
                    )
                    .ok()?;
            }
            Kind::Ldlt => {
                let req =
                    symbolic.factorize_numeric_ldlt_scratch::<f64>(Par::Seq, Default::default());
                let mut mem = MemBuffer::try_new(req).ok()?;
                // No regularization: a plain L D Lᵀ without pivoting; the signs are checked
                // below.
                symbolic
                    .factorize_numeric_ldlt::<f64>(
                        &mut values,
                        mat,
                        Side::Upper,
                        LdltRegularization::default(),
                        Par::Seq,
                        MemStack::new(&mut mem),
                        Default::default(),
                    )
                    .ok()?;
                // Pivot k of P A Pᵀ belongs to submatrix row fwd[k].
                let fwd = |k: usize| symbolic.perm().map_or(k, |p| p.arrays().0[k]);
                let ok = |k: usize, d: f64| {
                    d.is_finite() && if positive(fwd(k)) { d > 0.0 } else { d < 0.0 }
                };
                match symbolic.raw() {
                    SymbolicCholeskyRaw::Simplicial(s) => {
                        // Column k stores D_k first, then the column of L below it.
                        let cp = s.col_ptr();
                        if !(0..n).all(|k| ok(k, values[cp[k]])) {
                            return None;
                        }
                    }
                    SymbolicCholeskyRaw::Supernodal(s) => {
                        // D is the diagonal of each supernode's top block.
                        let f = SupernodalLdltRef::<usize, f64>::new(s, &values);
                        for sn in 0..s.n_supernodes() {
                            let node = f.supernode(sn);
                            let m = node.val();
                            let start = node.start();
                            if !(0..m.ncols()).all(|j| ok(start + j, m[(j, j)])) {
                                return None;
                            }
                        }
                    }
                }
            }
        }
        Some(SparseLdlt {
            n,
            kind,
            symbolic: Some(Arc::new(symbolic)),
            values,
        })
    }

    /// Dimension.
    pub fn dim(&self) -> usize {
        self.n
    }

    /// Number of stored values of the factor (fill included).
    pub fn factor_len(&self) -> usize {
        self.values.len()
    }

    /// Solves `A x = b` in place (`b.len()` must be the dimension). Returns `None` when the
    /// length does not match or the solve workspace cannot be allocated.
    pub fn solve_mut(&self, b: &mut [f64]) -> Option<()> {
        if b.len() != self.n {
            return None;
        }
        let Some(symbolic) = self.symbolic.as_deref() else {
            return Some(());
        };
        let req = symbolic.solve_in_place_scratch::<f64>(1, Par::Seq);
        let mut mem = MemBuffer::try_new(req).ok()?;
        let stack = MemStack::new(&mut mem);
        let rhs = MatMut::from_column_major_slice_mut(b, self.n, 1);
        match self.kind {
            Kind::Llt => LltRef::<usize, f64>::new(symbolic, &self.values)
                .solve_in_place_with_conj(Conj::No, rhs, Par::Seq, stack),
            Kind::Ldlt => LdltRef::<usize, f64>::new(symbolic, &self.values)
                .solve_in_place_with_conj(Conj::No, rhs, Par::Seq, stack),
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{random_spd, sparse};
    use super::*;
    use nalgebra::{DMatrix, DVector};

    #[test]
    fn cholesky_solves_like_dense_cholesky() {
        let a = random_spd(9, 3);
        let s = sparse(&a);
        let f = SparseLdlt::cholesky(&s, None).expect("spd");
        assert_eq!(f.dim(), 9);
        let b = DVector::from_fn(9, |i, _| i as f64 - 3.0);
        let mut x = b.as_slice().to_vec();
        f.solve_mut(&mut x).expect("solve");
        let xd = a.clone().cholesky().expect("spd").solve(&b);
        for i in 0..9 {
            assert!((x[i] - xd[i]).abs() < 1e-9 * (1.0 + xd[i].abs()));
        }
        // A principal submatrix, in an unsorted order.
        let idx = [5, 1, 8, 4];
        let f = SparseLdlt::cholesky(&s, Some(&idx)).expect("spd");
        let sub = DMatrix::from_fn(4, 4, |i, j| a[(idx[i], idx[j])]);
        let bs = DVector::from_fn(4, |i, _| 1.0 + i as f64);
        let mut x = bs.as_slice().to_vec();
        f.solve_mut(&mut x).expect("solve");
        let xd = sub.cholesky().expect("spd").solve(&bs);
        for i in 0..4 {
            assert!((x[i] - xd[i]).abs() < 1e-9 * (1.0 + xd[i].abs()));
        }
        assert!(f.solve_mut(&mut [0.0; 3]).is_none());
        assert!(SparseLdlt::cholesky(&s, Some(&[2, 9])).is_none());
        assert!(SparseLdlt::cholesky(&s, Some(&[2, 2])).is_none());
        let empty = SparseLdlt::cholesky(&s, Some(&[])).expect("empty");
        assert_eq!(empty.solve_mut(&mut []), Some(()));
    }

    #[test]
    fn non_positive_pivot_is_reported() {
        let a = sparse(&DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]));
        assert!(SparseLdlt::cholesky(&a, None).is_none());
        // A missing diagonal entry is a zero pivot.
        let z = SymSparse::from_triplets(2, &[(0, 0, 1.0), (0, 1, 0.5), (1, 0, 0.5)]);
        assert!(SparseLdlt::cholesky(&z, None).is_none());
        assert!(SparseLdlt::quasi_definite(&z, None, &|_| true).is_none());
    }

    /// A quasi-definite matrix `[I Bᵀ; B −I]` (rows of the two blocks interleaved, as the
    /// friction stage orders them) factors with the prescribed signs, not as positive
    /// definite nor with the wrong signs, and its solve has a small residual; a tridiagonal
    /// matrix factors without fill.
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
        assert!(SparseLdlt::cholesky(&k, None).is_none());
        assert!(SparseLdlt::quasi_definite(&k, None, &|p| p % 2 == 1).is_none());
        let f = SparseLdlt::quasi_definite(&k, None, &|p| p % 2 == 0).expect("quasi-definite");
        assert_eq!(f.dim(), 2 * n);
        let rhs = DVector::from_fn(2 * n, |i, _| (i as f64).sin());
        let mut x = rhs.as_slice().to_vec();
        f.solve_mut(&mut x).expect("solve");
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
        let f = SparseLdlt::cholesky(&tri, None).expect("spd");
        assert_eq!(f.factor_len(), 11);
    }

    /// A larger quasi-definite system with dense blocks, where faer may choose its
    /// supernodal factorization: signs are checked there too.
    #[test]
    fn dense_quasi_definite_system_is_checked_in_any_layout() {
        let n = 60;
        let b = random_spd(n, 5);
        let mut t = Vec::new();
        for i in 0..n {
            t.push((i, i, 2.0));
            t.push((n + i, n + i, -1.0));
            for j in 0..n {
                t.push((n + i, j, b[(i, j)]));
                t.push((j, n + i, b[(i, j)]));
            }
        }
        let k = SymSparse::from_triplets(2 * n, &t);
        assert!(SparseLdlt::quasi_definite(&k, None, &|p| p >= n).is_none());
        let f = SparseLdlt::quasi_definite(&k, None, &|p| p < n).expect("quasi-definite");
        let rhs = DVector::from_fn(2 * n, |i, _| (i as f64 * 0.3).cos());
        let mut x = rhs.as_slice().to_vec();
        f.solve_mut(&mut x).expect("solve");
        let r = &rhs - k.mul(&DVector::from_vec(x));
        assert!(r.amax() < 1e-8, "residual {:e}", r.amax());
    }
}
