//! Specialized per-step solvers of the `drumwright` staged programs (issue #4, deliverable 2:
//! the fast path of the sphere stack), with the sparse linear algebra they need.
//!
//! - [`SymSparse`]: a symmetric sparse matrix stored by rows (both triangles), assembled from
//!   per-body blocks, so the Delassus matrix `W = G M⁻¹ Gᵀ` costs O(contacts) when contacts
//!   couple only through shared bodies.
//! - [`Skyline`]: an envelope (variable-band, "skyline") Cholesky factorization
//!   `A = L Lᵀ` (George & Liu, *Computer Solution of Large Sparse Positive Definite
//!   Systems*, 1981, ch. 4): row i of L is stored from its first nonzero column, so a
//!   block-tridiagonal matrix (the stack) factors in O(n · bandwidth²).
//! - [`solve_lcp`]: the normal stage as the LCP `λ ≥ 0, w = Aλ − c ≥ 0, λᵀw = 0` (A SPD) by
//!   block principal pivoting (Júdice & Pires, *Comput. Oper. Res.* 21, 1994), warm-started
//!   from a guessed active set, with Murty's single-pivot rule as the anti-cycling fallback;
//!   each iteration one envelope Cholesky of the active block. [`min_norm_certificate`]
//!   checks that an LCP solution is also optimal for the minimum-norm QP (decision D4).
//! - [`solve_friction_sticking`]: the friction stage `min ½‖λ‖² + ½‖Eλ + e‖²` (E = I +
//!   S_t W_tt) over per-contact Coulomb disks `‖λ_c‖ ≤ b_c` when every contact sticks: the
//!   unconstrained minimizer from the quasi-definite augmented system (condition number of
//!   E, not of EᵀE ≈ 10¹⁵), accepted only when it lies in every disk. A sliding contact
//!   (solution on a disk boundary) is left to Clarabel.
//!
//! Every solution is verified by a KKT residual check ([`lcp_residual`] and
//! [`min_norm_certificate`]; a backward-error check of the augmented system and cone
//! membership, [`friction_residual`]); the caller falls back to Clarabel when a fast solve
//! fails or does not pass its check.

use nalgebra::{DMatrix, DVector};

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
    /// summed).
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

    /// Dense copy (for the Clarabel fallback and tests).
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

/// Envelope (skyline) factorization `A = L D Lᵀ` (L unit lower triangular) of a symmetric
/// matrix whose pivots have known signs: positive definite matrices (all pivots > 0) and
/// symmetric quasi-definite ones `[H Bᵀ; B −C]` (H, C positive definite), which are
/// strongly factorizable in any symmetric order (Vanderbei, *SIAM J. Optim.* 5, 1995).
/// Envelope storage after George & Liu (1981, ch. 4).
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

/// Solves `A_PP x_P = c_P` (P = `index`) with one step of iterative refinement.
fn solve_sub(a: &SymSparse, index: &[usize], c: &DVector<f64>) -> Option<Vec<f64>> {
    let f = Skyline::factor(a, Some(index))?;
    Some(solve_sub_with(a, index, &f, c))
}

/// As [`solve_sub`] with the factorization `f` of `A_PP` given.
fn solve_sub_with(a: &SymSparse, index: &[usize], f: &Skyline, c: &DVector<f64>) -> Vec<f64> {
    let mut x: Vec<f64> = index.iter().map(|&i| c[i]).collect();
    f.solve_mut(&mut x);
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
    f.solve_mut(&mut r);
    for (xi, ri) in x.iter_mut().zip(&r) {
        *xi += ri;
    }
    x
}

/// Complementarity residual of the LCP `λ ≥ 0, w = Aλ − c ≥ 0, λᵀw = 0`:
/// `max_i |min(λ_i, w_i)|` relative to `max(1, |c|∞, |λ|∞)`.
pub fn lcp_residual(a: &SymSparse, c: &DVector<f64>, lambda: &DVector<f64>) -> f64 {
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
/// (`warm[i]` = row i carries force), switching to Murty's least-index single pivot after
/// three block pivots that do not reduce the number of infeasibilities. Returns the solution
/// and the number of pivots, or `None` after `max_iter` pivots or a failed factorization.
pub fn solve_lcp(
    a: &SymSparse,
    c: &DVector<f64>,
    warm: &[bool],
    max_iter: usize,
) -> Option<(DVector<f64>, usize)> {
    solve_lcp_factored(a, c, warm, max_iter).map(|s| (s.lambda, s.pivots))
}

/// A solution of [`solve_lcp`] with the factorization of its final active block, which
/// [`min_norm_certificate_factored`] reuses when the certificate's index set is the same.
#[derive(Debug, Clone)]
pub struct LcpSolution {
    /// The solution λ.
    pub lambda: DVector<f64>,
    /// Number of pivots.
    pub pivots: usize,
    /// The final active set P (sorted).
    pub active: Vec<usize>,
    /// Envelope factorization of `A_PP` (`None` when P is empty).
    pub factor: Option<Skyline>,
}

/// [`solve_lcp`], returning the final active set and its factorization as well.
pub fn solve_lcp_factored(
    a: &SymSparse,
    c: &DVector<f64>,
    warm: &[bool],
    max_iter: usize,
) -> Option<LcpSolution> {
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
            let f = Skyline::factor(a, Some(&index))?;
            let x = solve_sub_with(a, &index, &f, c);
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
            return Some(LcpSolution {
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
/// `min ½‖λ‖² s.t. Aλ ≥ c, λ ≥ 0` (decision D4, paper eqs 83–85): with the multipliers
/// `μ_P = A_PP⁻¹ λ_P` of the rows `Aλ ≥ c` and `ν = λ − Aμ` of the bounds, the KKT
/// conditions hold iff `μ ≥ 0` and `ν ≥ 0` (both up to `tol` relative). They always hold for
/// an M-matrix A (nonpositive off-diagonal entries, as for the normal rows of a vertical
/// stack), where the LCP solution is the least element of the feasible set.
pub fn min_norm_certificate(a: &SymSparse, lambda: &DVector<f64>, tol: f64) -> bool {
    min_norm_certificate_factored(a, lambda, tol, None)
}

/// [`min_norm_certificate`], reusing the factorization `known = (P', L D Lᵀ of A_P'P')`
/// when P' is the certificate's index set `{i : λ_i > 0}` (the same arithmetic as
/// factoring again).
pub fn min_norm_certificate_factored(
    a: &SymSparse,
    lambda: &DVector<f64>,
    tol: f64,
    known: Option<(&[usize], &Skyline)>,
) -> bool {
    let n = a.n;
    let index: Vec<usize> = (0..n).filter(|&i| lambda[i] > 0.0).collect();
    if index.is_empty() {
        return true;
    }
    let mu_p = match known {
        Some((p, f)) if p == index.as_slice() => solve_sub_with(a, &index, f, lambda),
        _ => match solve_sub(a, &index, lambda) {
            Some(x) => x,
            None => return false,
        },
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

/// Projection onto the disk (interval in 1D) `‖x‖ ≤ b` of one contact's tangent block.
fn project_disk(x: &mut [f64], b: f64) {
    let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm > b {
        let s = if norm > 0.0 { b.max(0.0) / norm } else { 0.0 };
        for v in x.iter_mut() {
            *v *= s;
        }
    }
}

/// `E x` for E stored by rows.
fn rows_mul(rows: &[Vec<(usize, f64)>], x: &DVector<f64>) -> DVector<f64> {
    DVector::from_iterator(
        rows.len(),
        rows.iter()
            .map(|r| r.iter().map(|&(j, v)| v * x[j]).sum::<f64>()),
    )
}

/// `Eᵀ y` for E stored by rows (n columns).
fn rows_mul_t(rows: &[Vec<(usize, f64)>], y: &DVector<f64>, n: usize) -> DVector<f64> {
    let mut out = DVector::zeros(n);
    for (i, r) in rows.iter().enumerate() {
        for &(j, v) in r {
            out[j] += v * y[i];
        }
    }
    out
}

/// Gradient `λ + Eᵀ(Eλ + e)` of the friction-stage objective `½‖λ‖² + ½‖Eλ + e‖²`
/// (the slack objective of paper eq 99 with β = Eλ + e), in factored form: its components
/// along the null space of the Delassus block stay accurate even though `EᵀE` has entries
/// of order (h B_t W)² ≈ 10¹⁵.
pub fn friction_gradient(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    lambda: &DVector<f64>,
) -> DVector<f64> {
    let beta = rows_mul(e_rows, lambda) + e;
    lambda + rows_mul_t(e_rows, &beta, lambda.len())
}

/// Objective `½‖λ‖² + ½‖Eλ + e‖²` of the friction stage (slack form of paper eq 99).
pub fn friction_objective(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    lambda: &DVector<f64>,
) -> f64 {
    let beta = rows_mul(e_rows, lambda) + e;
    0.5 * (lambda.norm_squared() + beta.norm_squared())
}

/// KKT residual of the friction stage `min ½‖λ‖² + ½‖Eλ + e‖²` over the disks
/// `‖λ_c‖ ≤ b_c` (`blocks[c]` = the tangent rows of contact c and b_c): the natural residual
/// `‖λ − P_K(λ − ρ∇)‖∞` with ρ = 1/(1 + ‖E‖∞²) and ∇ from [`friction_gradient`], relative
/// to `max(1, |λ|∞)`, together with the largest cone violation `max_c(‖λ_c‖ − b_c)`.
pub fn friction_residual(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    blocks: &[(Vec<usize>, f64)],
    lambda: &DVector<f64>,
) -> (f64, f64) {
    let grad = friction_gradient(e_rows, e, lambda);
    let enorm = e_rows
        .iter()
        .map(|r| r.iter().map(|x| x.1.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let rho = 1.0 / (1.0 + enorm * enorm);
    let mut z = lambda - grad * rho;
    let mut cone = 0.0f64;
    for (rows, b) in blocks {
        let mut x: Vec<f64> = rows.iter().map(|&i| z[i]).collect();
        project_disk(&mut x, *b);
        for (k, &i) in rows.iter().enumerate() {
            z[i] = x[k];
        }
        let norm = rows
            .iter()
            .map(|&i| lambda[i] * lambda[i])
            .sum::<f64>()
            .sqrt();
        cone = cone.max(norm - b);
    }
    let scale = 1.0f64.max(lambda.amax());
    ((lambda - z).amax() / scale, cone.max(0.0))
}

/// The all-sticking solution of the friction stage `min ½‖λ‖² + ½‖Eλ + e‖²` (rows of
/// contacts with b_c = 0 fixed at zero), accepted when it lies in every disk
/// `‖λ_c‖ ≤ b_c`, in which case it is the constrained optimum (the constraints are then
/// inactive and the objective is strictly convex). Returns `None` when the solution leaves a
/// disk or the linear solve fails its check ([`solve_friction_fixed`]; the caller then uses
/// [`solve_friction_sliding`] or Clarabel).
pub fn solve_friction_sticking(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    blocks: &[(Vec<usize>, f64)],
    tol: f64,
) -> Option<DVector<f64>> {
    let fixed = zero_disk_rows(e_rows.len(), blocks);
    let lambda = solve_friction_fixed(e_rows, e, &fixed, tol)?;
    blocks
        .iter()
        .all(|(rows, b)| block_norm(&lambda, rows) <= *b)
        .then_some(lambda)
}

/// Rows of contacts whose disk has radius b_c ≤ 0, fixed at zero.
fn zero_disk_rows(n: usize, blocks: &[(Vec<usize>, f64)]) -> Vec<Option<f64>> {
    let mut fixed = vec![None; n];
    for (rows, b) in blocks {
        if *b <= 0.0 {
            for &i in rows {
                fixed[i] = Some(0.0);
            }
        }
    }
    fixed
}

/// `‖λ_c‖` of one contact's tangent rows.
fn block_norm(lambda: &DVector<f64>, rows: &[usize]) -> f64 {
    rows.iter()
        .map(|&i| lambda[i] * lambda[i])
        .sum::<f64>()
        .sqrt()
}

/// The minimizer of the friction-stage objective `½‖λ‖² + ½‖Eλ + e‖²` over the rows that
/// are not `fixed` (the others held at their given values). Solved through the symmetric
/// quasi-definite augmented system `[I Eᵀ; E −I] [λ; β] = [0; −e']` (β = Eλ + e', e' = e +
/// E λ_fixed), factored by [`Skyline::factor_signed`] with λ_i and β_i interleaved, so the
/// condition number is that of E, not of EᵀE; one step of iterative refinement, then a
/// normwise backward-error check (≤ `tol`; `None` when it fails).
pub fn solve_friction_fixed(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    fixed: &[Option<f64>],
    tol: f64,
) -> Option<DVector<f64>> {
    solve_friction_shifted(e_rows, e, fixed, &vec![0.0; e_rows.len()], tol).map(|(x, _)| x)
}

/// [`solve_friction_fixed`] with `shift[i] ≥ 0` added to the Hessian's diagonal on row i:
/// the stationarity conditions `(I + EᵀE + diag(ν)) λ = −Eᵀe` of contacts held on their
/// circles by the multipliers ν of [`solve_friction_sliding`].
fn solve_friction_shifted(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    fixed: &[Option<f64>],
    shift: &[f64],
    tol: f64,
) -> Option<(DVector<f64>, ShiftedSystem)> {
    let n = e_rows.len();
    // Unknown positions: λ_i (free rows) then β_i, interleaved row by row.
    let mut pos_l = vec![usize::MAX; n];
    let mut pos_b = vec![0; n];
    let mut dim = 0;
    for i in 0..n {
        if fixed[i].is_none() {
            pos_l[i] = dim;
            dim += 1;
        }
        pos_b[i] = dim;
        dim += 1;
    }
    let mut trip = Vec::new();
    let mut positive = vec![false; dim];
    let mut rhs = DVector::zeros(dim);
    for i in 0..n {
        if fixed[i].is_none() {
            trip.push((pos_l[i], pos_l[i], 1.0 + shift[i]));
            positive[pos_l[i]] = true;
        }
        trip.push((pos_b[i], pos_b[i], -1.0));
        let mut ei = e[i];
        for &(j, v) in &e_rows[i] {
            match fixed[j] {
                None => {
                    trip.push((pos_b[i], pos_l[j], v));
                    trip.push((pos_l[j], pos_b[i], v));
                }
                Some(x) => ei += v * x,
            }
        }
        rhs[pos_b[i]] = -ei;
    }
    let k = SymSparse::from_triplets(dim, &trip);
    let f = Skyline::factor_signed(&k, None, &|i| positive[i])?;
    let mut x = rhs.as_slice().to_vec();
    f.solve_mut(&mut x);
    let mut x = DVector::from_vec(x);
    let mut res = &rhs - k.mul(&x);
    let mut d = res.as_slice().to_vec();
    f.solve_mut(&mut d);
    x += DVector::from_vec(d);
    res = &rhs - k.mul(&x);
    let knorm = k
        .rows
        .iter()
        .map(|r| r.iter().map(|e| e.1.abs()).sum::<f64>())
        .fold(0.0, f64::max);
    let backward = res.amax() / (knorm * x.amax() + rhs.amax()).max(f64::MIN_POSITIVE);
    if backward.is_nan() || backward > tol {
        return None;
    }
    let lambda = DVector::from_iterator(n, (0..n).map(|i| fixed[i].unwrap_or_else(|| x[pos_l[i]])));
    Some((lambda, ShiftedSystem { k, f, pos_l }))
}

/// The factored augmented system of [`solve_friction_shifted`], for further right-hand sides.
struct ShiftedSystem {
    k: SymSparse,
    f: Skyline,
    pos_l: Vec<usize>,
}

impl ShiftedSystem {
    /// `(I + EᵀE + diag(ν))⁻¹ v` on the free rows (v in λ-space; fixed rows of v ignored,
    /// their entries of the result zero): the augmented system with v on the λ rows and zero
    /// on the β rows, one step of iterative refinement.
    fn solve(&self, v: &DVector<f64>) -> DVector<f64> {
        let mut rhs = DVector::zeros(self.k.rows.len());
        for (i, &p) in self.pos_l.iter().enumerate() {
            if p != usize::MAX {
                rhs[p] = v[i];
            }
        }
        let mut x = rhs.as_slice().to_vec();
        self.f.solve_mut(&mut x);
        let mut x = DVector::from_vec(x);
        let mut d = (&rhs - self.k.mul(&x)).as_slice().to_vec();
        self.f.solve_mut(&mut d);
        x += DVector::from_vec(d);
        DVector::from_iterator(
            v.len(),
            self.pos_l
                .iter()
                .map(|&p| if p == usize::MAX { 0.0 } else { x[p] }),
        )
    }
}

/// Tolerances and limits of [`solve_friction_sliding`].
#[derive(Debug, Clone, Copy)]
pub struct SlidingSettings {
    /// Normwise backward error accepted for each linear solve.
    pub solve_tol: f64,
    /// Natural KKT residual (relative to max(1, |λ|∞)) at which the result is accepted; the
    /// disks may be exceeded by at most this times the largest radius.
    pub kkt_tol: f64,
    /// Rounds (factorizations) before giving up.
    pub max_rounds: usize,
    /// Most contacts that can slide (b_c > 0) taken on.
    pub max_contacts: usize,
}

/// The friction stage `min ½‖λ‖² + ½‖Eλ + e‖²` over the disks `‖λ_c‖ ≤ b_c` when contacts
/// slide, through the stationarity conditions `(I + EᵀE + diag(ν)) λ = −Eᵀe` with a
/// multiplier ν_c ≥ 0 per contact (ν_c = 0: sticking), solved exactly for all rows at once
/// (`solve_friction_shifted`). Each round then updates ν: a sticking contact that leaves its
/// disk starts to slide with the multiplier of its own disk, the others held
/// (`disk_multiplier` with its block H_cc = I + (EᵀE)_cc); the sliding ones take one Newton
/// step together on `φ_c(ν) = 1/‖λ_c(ν)‖ − 1/b_c` (Moré–Sorensen's secular equation, nearly
/// linear in ν), its Jacobian `∂φ_c/∂ν_d = λ_cᵀ w_d,c / ‖λ_c‖³` from
/// `w_d = (H + diag ν)⁻¹ P_d λ`, one back-solve per sliding contact with the factored system
/// (the feet of one body are strongly coupled: a step per contact alone converges only
/// linearly there); a contact sticks again when ν_c reaches 0.
///
/// `warm` holds the multipliers of the previous solve (used when it had as many contacts)
/// and receives the final ones. More than `max_contacts` contacts that can slide (b_c > 0)
/// give `None` at once (a toppling pile is Clarabel's). Accepted when the natural KKT
/// residual of [`friction_residual`] is at most `kkt_tol` and no disk is violated; `None`
/// when no round reaches that within `max_rounds` or a solve fails (the caller then uses
/// Clarabel).
pub fn solve_friction_sliding(
    e_rows: &[Vec<(usize, f64)>],
    e: &DVector<f64>,
    blocks: &[(Vec<usize>, f64)],
    settings: &SlidingSettings,
    warm: &mut Vec<f64>,
) -> Option<DVector<f64>> {
    let SlidingSettings {
        solve_tol,
        kkt_tol,
        max_rounds,
        max_contacts,
    } = *settings;
    if blocks.iter().filter(|(_, b)| *b > 0.0).count() > max_contacts {
        return None;
    }
    let n = e_rows.len();
    let base = zero_disk_rows(n, blocks);
    // the Hessian's diagonal blocks I + (EᵀE)_cc, from the rows of E
    let mut block_of = vec![usize::MAX; n];
    for (c, (rows, _)) in blocks.iter().enumerate() {
        for (k, &i) in rows.iter().enumerate() {
            block_of[i] = c * 2 + k.min(1);
        }
    }
    let mut h_blocks: Vec<[[f64; 2]; 2]> = blocks
        .iter()
        .map(|(rows, _)| {
            let mut h = [[0.0; 2]; 2];
            for (k, row) in h.iter_mut().enumerate().take(rows.len()) {
                row[k] = 1.0;
            }
            h
        })
        .collect();
    for row in e_rows {
        for &(j, vj) in row {
            for &(k, vk) in row {
                let (bj, bk) = (block_of[j], block_of[k]);
                if bj != usize::MAX && bj / 2 == bk / 2 {
                    h_blocks[bj / 2][bj % 2][bk % 2] += vj * vk;
                }
            }
        }
    }
    // per block: the multiplier ν_c of its circle (0 while it sticks), from the previous
    // solve when it had as many contacts (a wrong start costs rounds, never the answer)
    let mut nu = if warm.len() == blocks.len() {
        std::mem::take(warm)
    } else {
        vec![0.0; blocks.len()]
    };
    let bmax = blocks.iter().map(|b| b.1).fold(0.0, f64::max);
    let mut shift = vec![0.0; n];
    for _ in 0..max_rounds {
        for ((rows, _), &nc) in blocks.iter().zip(&nu) {
            for &i in rows {
                shift[i] = nc;
            }
        }
        let (lambda, system) = solve_friction_shifted(e_rows, e, &base, &shift, solve_tol)?;
        let (kkt, cone) = friction_residual(e_rows, e, blocks, &lambda);
        if kkt <= kkt_tol && cone <= kkt_tol * bmax.max(f64::MIN_POSITIVE) {
            *warm = nu;
            return Some(lambda);
        }
        // Newton on φ_c(ν) = 1/‖λ_c(ν)‖ − 1/b_c over the sliding contacts, all coupled:
        // dλ/dν_d = −(H + diag ν)⁻¹ P_d λ, so dφ_c/dν_d = λ_cᵀ w_d,c / ‖λ_c‖³ with
        // w_d = (H + diag ν)⁻¹ P_d λ
        let sliding: Vec<usize> = (0..blocks.len())
            .filter(|&c| nu[c] > 0.0 && blocks[c].1 > 0.0)
            .collect();
        let norms: Vec<f64> = blocks
            .iter()
            .map(|(rows, _)| block_norm(&lambda, rows))
            .collect();
        let mut step = None;
        if !sliding.is_empty() && sliding.iter().all(|&c| norms[c] > 0.0) {
            let m = sliding.len();
            let mut jac = DMatrix::zeros(m, m);
            let mut phi = DVector::zeros(m);
            for (a, &d) in sliding.iter().enumerate() {
                let mut v = DVector::zeros(n);
                for &i in &blocks[d].0 {
                    v[i] = lambda[i];
                }
                let w = system.solve(&v);
                for (r, &c) in sliding.iter().enumerate() {
                    let dot: f64 = blocks[c].0.iter().map(|&i| lambda[i] * w[i]).sum();
                    jac[(r, a)] = dot / norms[c].powi(3);
                }
                phi[a] = 1.0 / norms[d] - 1.0 / blocks[d].1;
            }
            step = jac.lu().solve(&(-phi));
        }
        if let Some(step) = &step {
            for (a, &c) in sliding.iter().enumerate() {
                nu[c] = (nu[c] + step[a]).max(0.0);
            }
        }
        let grad = friction_gradient(e_rows, e, &lambda);
        for (((rows, b), nc), h) in blocks.iter().zip(nu.iter_mut()).zip(&h_blocks) {
            if *b <= 0.0 || rows.len() > 2 {
                continue;
            }
            let m = rows.len();
            let x: Vec<f64> = rows.iter().map(|&i| lambda[i]).collect();
            let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
            if *nc == 0.0 {
                // a sticking contact starts to slide with the multiplier of its own disk
                // (the others held): r_c = ∇_c − H_cc λ_c
                if norm > *b {
                    let r: Vec<f64> = (0..m)
                        .map(|k| grad[rows[k]] - (0..m).map(|l| h[k][l] * x[l]).sum::<f64>())
                        .collect();
                    *nc = disk_multiplier(h, &r, *b);
                }
                continue;
            }
            if step.is_some() {
                continue;
            }
            // without the coupled step: Newton with the contact's own block,
            // dλ_c/dν ≈ −(H_cc + ν I)⁻¹ λ_c
            let (a, off, c) = (
                h[0][0] + *nc,
                if m == 2 { h[0][1] } else { 0.0 },
                h[1][1] + *nc,
            );
            let quad = if m == 1 {
                x[0] * x[0] / a
            } else {
                let det = a * c - off * off;
                (c * x[0] * x[0] - 2.0 * off * x[0] * x[1] + a * x[1] * x[1]) / det
            };
            if norm == 0.0 {
                *nc = 0.0;
                continue;
            }
            let phi = 1.0 / norm - 1.0 / b;
            let dphi = quad / (norm * norm * norm);
            *nc = (*nc - phi / dphi).max(0.0);
        }
    }
    None
}

/// The multiplier ν ≥ 0 of the disk `‖y‖ ≤ b` at the minimizer of `½ yᵀH y + rᵀy` over
/// it (the interval when `r` has one entry; H symmetric positive definite, the leading block
/// used): 0 when the unconstrained minimizer lies inside, else the ν > 0 with
/// `‖(H + νI)⁻¹ r‖ = b`, found by Newton's method on `1/‖y(ν)‖ − 1/b` in H's eigenbasis
/// (Moré and Sorensen's secular equation; monotone convergence from ν = 0).
fn disk_multiplier(h: &[[f64; 2]; 2], r: &[f64], b: f64) -> f64 {
    if r.len() == 1 {
        // (h + ν) b = |r| when −r/h leaves the interval
        return (r[0].abs() / b - h[0][0]).max(0.0);
    }
    let (a, off, c) = (h[0][0], h[0][1], h[1][1]);
    let det = a * c - off * off;
    let free = [
        -(c * r[0] - off * r[1]) / det,
        -(a * r[1] - off * r[0]) / det,
    ];
    if (free[0] * free[0] + free[1] * free[1]).sqrt() <= b {
        return 0.0;
    }
    // eigenvalues of the 2×2 block and r in its eigenbasis
    let theta = 0.5 * (2.0 * off).atan2(a - c);
    let (cs, sn) = (theta.cos(), theta.sin());
    let l1 = a * cs * cs + 2.0 * off * cs * sn + c * sn * sn;
    let l2 = a * sn * sn - 2.0 * off * cs * sn + c * cs * cs;
    let (p1, p2) = (cs * r[0] + sn * r[1], -sn * r[0] + cs * r[1]);
    let mut nu = 0.0f64;
    for _ in 0..100 {
        let (d1, d2) = (l1 + nu, l2 + nu);
        let norm2 = (p1 / d1).powi(2) + (p2 / d2).powi(2);
        let norm = norm2.sqrt();
        // φ(ν) = 1/‖y‖ − 1/b, φ'(ν) = (Σ pᵢ²/dᵢ³)/‖y‖³
        let phi = 1.0 / norm - 1.0 / b;
        let dphi = ((p1 * p1) / (d1 * d1 * d1) + (p2 * p2) / (d2 * d2 * d2)) / (norm2 * norm);
        let step = phi / dphi;
        nu = (nu - step).max(0.0);
        if step.abs() <= 1e-15 * nu.max(l1.min(l2)) {
            break;
        }
    }
    nu
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_spd(n: usize, seed: u64) -> DMatrix<f64> {
        let mut s = seed;
        let mut rnd = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let b = DMatrix::from_fn(n, n, |_, _| rnd());
        &b * b.transpose() + DMatrix::identity(n, n) * 0.1
    }

    fn sparse(m: &DMatrix<f64>) -> SymSparse {
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
    fn lcp_solution_is_complementary() {
        for seed in 0..20 {
            let a = random_spd(8, seed);
            let s = sparse(&a);
            let c = DVector::from_fn(8, |i, _| ((i as f64 + seed as f64) * 1.7).sin());
            let (x, _) = solve_lcp(&s, &c, &[], 100).expect("pivoting converges");
            assert!(x.iter().all(|&v| v >= 0.0));
            assert!(lcp_residual(&s, &c, &x) < 1e-10);
        }
    }

    #[test]
    fn non_positive_pivot_is_reported() {
        let a = sparse(&DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]));
        assert!(Skyline::factor(&a, None).is_none());
    }

    const TEST_SETTINGS: SlidingSettings = SlidingSettings {
        solve_tol: 1e-13,
        kkt_tol: 1e-10,
        max_rounds: 30,
        max_contacts: 64,
    };

    /// A projected-gradient reference for the friction stage (slow, plain): `iters` steps of
    /// length 1/L on `½‖λ‖² + ½‖Eλ + e‖²` over the disks.
    fn projected_gradient(
        e_rows: &[Vec<(usize, f64)>],
        e: &DVector<f64>,
        blocks: &[(Vec<usize>, f64)],
        iters: usize,
    ) -> DVector<f64> {
        let n = e_rows.len();
        let dense = DMatrix::from_fn(n, n, |i, j| {
            e_rows[i]
                .iter()
                .filter(|x| x.0 == j)
                .map(|x| x.1)
                .sum::<f64>()
        });
        let lip = 1.0 + dense.norm_squared();
        let mut x = DVector::zeros(n);
        for _ in 0..iters {
            x -= friction_gradient(e_rows, e, &x) / lip;
            for (rows, b) in blocks {
                let mut v: Vec<f64> = rows.iter().map(|&i| x[i]).collect();
                project_disk(&mut v, *b);
                for (k, &i) in rows.iter().enumerate() {
                    x[i] = v[k];
                }
            }
        }
        x
    }

    /// Sliding contacts (intervals of one row as in planar models, and disks of two rows
    /// with weak and with strong coupling): where the active set on the disks returns a
    /// point, it has a natural KKT residual below its tolerance, lies inside every disk with
    /// some contacts on their circle, and has the objective of a long projected-gradient run
    /// (the problem is strictly convex); here it returns one in every case.
    #[test]
    fn sliding_friction_solve_is_the_constrained_optimum() {
        let cases = [
            (3u64, 1usize, 1.0, true),
            (4, 1, 1.0, true),
            (6, 2, 0.1, true),
            (7, 2, 0.1, true),
            (1, 2, 1.0, true),
            (2, 2, 1.0, true),
        ];
        for (seed, width, coupling, must_converge) in cases {
            let contacts = 4;
            let n = contacts * width;
            let a = random_spd(n, seed) * coupling;
            let e_rows: Vec<Vec<(usize, f64)>> = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| (j, a[(i, j)] + if i == j { 1.0 } else { 0.0 }))
                        .collect()
                })
                .collect();
            let e = DVector::from_fn(n, |i, _| 3.0 * (i as f64 - 1.5).sin());
            let blocks: Vec<(Vec<usize>, f64)> = (0..contacts)
                .map(|c| {
                    (
                        (c * width..(c + 1) * width).collect(),
                        0.05 + 0.2 * c as f64,
                    )
                })
                .collect();
            assert!(solve_friction_sticking(&e_rows, &e, &blocks, 1e-13).is_none());
            let mut warm = Vec::new();
            let Some(x) = solve_friction_sliding(&e_rows, &e, &blocks, &TEST_SETTINGS, &mut warm)
            else {
                assert!(
                    !must_converge,
                    "seed {seed}: the active set did not converge"
                );
                continue;
            };
            let (kkt, cone) = friction_residual(&e_rows, &e, &blocks, &x);
            assert!(
                kkt <= 1e-10 && cone <= 1e-10,
                "seed {seed}: {kkt:e} {cone:e}"
            );
            let on_circle = blocks
                .iter()
                .filter(|(rows, b)| (block_norm(&x, rows) - b).abs() < 1e-10)
                .count();
            assert!(on_circle > 0, "seed {seed}: no contact slides");
            let reference = projected_gradient(&e_rows, &e, &blocks, 200_000);
            let (f, f_ref) = (
                friction_objective(&e_rows, &e, &x),
                friction_objective(&e_rows, &e, &reference),
            );
            assert!(
                f <= f_ref + 1e-9 * f_ref.abs().max(1.0),
                "seed {seed}: {f} vs {f_ref}"
            );
            assert!(
                (&x - &reference).amax() < 1e-5,
                "seed {seed}: {x} vs {reference}"
            );
        }
    }
}
