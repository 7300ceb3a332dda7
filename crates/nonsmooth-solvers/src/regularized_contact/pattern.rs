//! The pattern of the Newton Hessian `H = A + Σ_c J_cᵀ G_c J_c`: the pattern of `A`
//! united with, for every constraint, the full `k × k` block over the `k` velocities its
//! Jacobian touches, and its symbolic Cholesky factorization (AMD ordering), computed once
//! per problem.

use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, SymbolicCholesky, SymmetricOrdering,
};
use faer::sparse::SymbolicSparseColMatRef;
use faer::Side;

use super::csc::Csc;

/// Lower-triangular pattern of `H`, where each constraint's block lands in it, and the
/// symbolic factorization.
#[derive(Debug)]
pub(crate) struct SparsePattern {
    pub(crate) col_ptr: Vec<usize>,
    pub(crate) row_idx: Vec<usize>,
    /// Values of the lower triangle of `A` on the pattern.
    pub(crate) base: Vec<f64>,
    /// Per constraint, for support pairs `(a, b)` with `a ≥ b` in the order
    /// `b = 0..k, a = b..k`: the position of `H[support[a]][support[b]]` in the values.
    pub(crate) con_pos: Vec<Vec<usize>>,
    pub(crate) symbolic: SymbolicCholesky<usize>,
}

impl SparsePattern {
    pub(crate) fn new<'s>(
        n: usize,
        a: &Csc,
        supports: impl Iterator<Item = &'s [usize]> + Clone,
    ) -> Result<Self, String> {
        let (col_ptr, row_idx) = union_pattern(n, a, supports.clone(), true);
        let pos = |i: usize, j: usize| -> Result<usize, String> {
            position(&col_ptr, &row_idx, i, j)
                .ok_or_else(|| format!("internal: Hessian pattern lacks ({i}, {j})"))
        };
        let mut base = vec![0.0; row_idx.len()];
        for j in 0..n {
            for k in a.ptr[j]..a.ptr[j + 1] {
                let i = a.idx[k];
                if i >= j {
                    base[pos(i, j)?] += a.val[k];
                }
            }
        }
        let mut con_pos = Vec::new();
        for support in supports {
            let k = support.len();
            let mut v = Vec::with_capacity(k * (k + 1) / 2);
            for b in 0..k {
                for a in b..k {
                    v.push(pos(support[a], support[b])?);
                }
            }
            con_pos.push(v);
        }
        let sym = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_cholesky(
            sym,
            Side::Lower,
            SymmetricOrdering::Amd,
            Default::default(),
        )
        .map_err(|e| format!("symbolic Cholesky factorization of the Hessian: {e:?}"))?;
        Ok(Self {
            col_ptr,
            row_idx,
            base,
            con_pos,
            symbolic,
        })
    }

    /// Number of stored entries of the lower triangle of `H`.
    pub(crate) fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// Number of stored entries of the Cholesky factor.
    pub(crate) fn factor_nnz(&self) -> usize {
        self.symbolic.len_val()
    }
}

/// The pattern of `A` united with the full block over each constraint's support (`lower`:
/// its lower triangle only), in CSC form with rows sorted per column.
pub(crate) fn union_pattern<'s>(
    n: usize,
    a: &Csc,
    supports: impl Iterator<Item = &'s [usize]>,
    lower: bool,
) -> (Vec<usize>, Vec<usize>) {
    let mut cols: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (j, col) in cols.iter_mut().enumerate() {
        let rows = &a.idx[a.ptr[j]..a.ptr[j + 1]];
        col.extend(rows.iter().filter(|&&i| !lower || i >= j));
    }
    for support in supports {
        for (b, &j) in support.iter().enumerate() {
            cols[j].extend_from_slice(if lower { &support[b..] } else { support });
        }
    }
    let mut col_ptr = Vec::with_capacity(n + 1);
    let mut row_idx = Vec::new();
    col_ptr.push(0);
    for col in &mut cols {
        col.sort_unstable();
        col.dedup();
        row_idx.extend_from_slice(col);
        col_ptr.push(row_idx.len());
    }
    (col_ptr, row_idx)
}

/// Where entry `(i, j)` is stored in the pattern `(col_ptr, row_idx)`, if it is.
pub(crate) fn position(col_ptr: &[usize], row_idx: &[usize], i: usize, j: usize) -> Option<usize> {
    row_idx[col_ptr[j]..col_ptr[j + 1]]
        .binary_search(&i)
        .ok()
        .map(|q| col_ptr[j] + q)
}
