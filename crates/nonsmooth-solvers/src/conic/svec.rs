//! The svec layout of a symmetric matrix (the PSD triangle cone's vectors, feature `sdp`).
//!
//! A symmetric `n × n` matrix `X` is stored as the `n(n+1)/2` entries of its UPPER triangle,
//! column by column — `X₀₀, X₀₁, X₁₁, X₀₂, X₁₂, X₂₂, …` — with every off-diagonal entry
//! multiplied by √2. This makes the map an isometry: `⟨svec X, svec Y⟩ = tr(X Y)` (Vandenberghe
//! & Boyd, "Semidefinite programming", SIAM Review 1996; this is Clarabel's
//! `PSDTriangleConeT` layout). [`svec`] and [`smat`] convert.

use nalgebra::{DMatrix, DVector};

/// `svec(X)`: upper triangle, column-major, off-diagonals ×√2 (see the module docs). Only
/// the upper triangle of `x` is read.
pub fn svec(x: &DMatrix<f64>) -> DVector<f64> {
    let n = x.nrows().min(x.ncols());
    let mut v = Vec::with_capacity(n * (n + 1) / 2);
    for j in 0..n {
        for i in 0..=j {
            let s = if i == j {
                1.0
            } else {
                std::f64::consts::SQRT_2
            };
            v.push(s * x[(i, j)]);
        }
    }
    DVector::from_vec(v)
}

/// Inverse of [`svec`]: the symmetric `n × n` matrix whose svec is the first `n(n+1)/2`
/// entries of `v` (missing entries read as 0).
pub fn smat(v: &[f64], n: usize) -> DMatrix<f64> {
    let mut x = DMatrix::zeros(n, n);
    let mut k = 0;
    for j in 0..n {
        for i in 0..=j {
            let e = v.get(k).copied().unwrap_or(0.0);
            if i == j {
                x[(i, j)] = e;
            } else {
                let e = e * std::f64::consts::FRAC_1_SQRT_2;
                x[(i, j)] = e;
                x[(j, i)] = e;
            }
            k += 1;
        }
    }
    x
}
