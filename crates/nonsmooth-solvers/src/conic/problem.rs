//! Problem data in Clarabel's standard conic form and a validating builder.
//!
//! The form is (Goulart & Chen, "Clarabel: An interior-point solver for conic programs with
//! quadratic objectives", 2024, eq. (1)):
//!
//! ```text
//! minimize    ½ xᵀ P x + qᵀ x
//! subject to  A x + s = b,   s ∈ K = K₁ × K₂ × … × K_p
//! ```
//!
//! with `P` symmetric positive semidefinite, stored as its upper triangle in compressed sparse
//! column (CSC) form, exactly as Clarabel consumes it, so that solving needs no further copy
//! or conversion.

use clarabel::algebra::CscMatrix;
use clarabel::solver::SupportedConeT;
use nalgebra::DMatrix;

use crate::status::SolverError;

/// Name used in every error raised by the conic layer.
pub(crate) const SOLVER: &str = "conic (Clarabel)";

/// One cone of the product `K` (Boyd & Vandenberghe, *Convex Optimization*, §2.6 and §4.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cone {
    /// `{0}ⁿ`: the rows are equalities `A x = b`.
    Zero(usize),
    /// `ℝⁿ₊`: the rows are inequalities `A x ≤ b`.
    Nonnegative(usize),
    /// Second-order (Lorentz) cone `{(t, u) ∈ ℝ × ℝⁿ⁻¹ : ‖u‖₂ ≤ t}`; the dimension `n` counts
    /// `t`, so it must be at least 2.
    SecondOrder(usize),
    /// Cone of `n × n` positive semidefinite matrices, stored as `n(n+1)/2` rows in Clarabel's
    /// scaled triangle convention (module `conic::sdp`, feature `sdp`).
    #[cfg(feature = "sdp")]
    PsdTriangle(usize),
}

impl Cone {
    /// Number of rows of `A` (entries of `s`) the cone occupies.
    pub fn dim(&self) -> usize {
        match *self {
            Cone::Zero(n) | Cone::Nonnegative(n) | Cone::SecondOrder(n) => n,
            #[cfg(feature = "sdp")]
            Cone::PsdTriangle(n) => n * (n + 1) / 2,
        }
    }

    pub(crate) fn to_clarabel(self) -> SupportedConeT<f64> {
        match self {
            Cone::Zero(n) => SupportedConeT::ZeroConeT(n),
            Cone::Nonnegative(n) => SupportedConeT::NonnegativeConeT(n),
            Cone::SecondOrder(n) => SupportedConeT::SecondOrderConeT(n),
            #[cfg(feature = "sdp")]
            Cone::PsdTriangle(n) => SupportedConeT::PSDTriangleConeT(n),
        }
    }
}

/// A sparse matrix in compressed sparse column form; a thin wrapper around Clarabel's
/// [`CscMatrix`] so that the solver receives it without conversion.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseMatrix {
    pub(crate) inner: CscMatrix<f64>,
}

impl SparseMatrix {
    /// All-zero `nrows × ncols` matrix (no stored entries).
    pub fn zeros(nrows: usize, ncols: usize) -> Self {
        Self {
            inner: CscMatrix::zeros((nrows, ncols)),
        }
    }

    /// Builds from `(row, col, value)` triplets in any order; repeated positions are summed
    /// and explicit zeros are kept as stored entries (so the sparsity pattern is the one the
    /// caller gave, which matters for [`crate::conic::ConicSolver`] value updates).
    ///
    /// Errors: an index out of range ([`SolverError::InvalidInput`]) or a non-finite value
    /// ([`SolverError::NonFinite`]), both naming `what`.
    pub fn from_triplets(
        nrows: usize,
        ncols: usize,
        triplets: &[(usize, usize, f64)],
        what: &'static str,
    ) -> Result<Self, SolverError> {
        for &(i, j, v) in triplets {
            if i >= nrows || j >= ncols {
                return Err(SolverError::InvalidInput {
                    solver: SOLVER,
                    reason: format!("{what}: entry ({i}, {j}) outside a {nrows} x {ncols} matrix"),
                });
            }
            if !v.is_finite() {
                return Err(SolverError::NonFinite {
                    solver: SOLVER,
                    what,
                });
            }
        }
        // Counting sort by column, then insertion-sort rows within each column (columns are
        // short in every problem this crate builds), then merge duplicates.
        let mut colptr = vec![0usize; ncols + 1];
        for &(_, j, _) in triplets {
            colptr[j + 1] += 1;
        }
        for j in 0..ncols {
            colptr[j + 1] += colptr[j];
        }
        let mut next = colptr.clone();
        let mut rows = vec![0usize; triplets.len()];
        let mut vals = vec![0f64; triplets.len()];
        for &(i, j, v) in triplets {
            let k = next[j];
            rows[k] = i;
            vals[k] = v;
            next[j] += 1;
        }
        let mut out_ptr = Vec::with_capacity(ncols + 1);
        let mut out_rows = Vec::with_capacity(triplets.len());
        let mut out_vals = Vec::with_capacity(triplets.len());
        out_ptr.push(0);
        let mut col: Vec<(usize, f64)> = Vec::new();
        for j in 0..ncols {
            col.clear();
            col.extend((colptr[j]..colptr[j + 1]).map(|k| (rows[k], vals[k])));
            col.sort_by_key(|&(i, _)| i);
            for &(i, v) in &col {
                match out_rows.last() {
                    Some(&last) if last == i && out_rows.len() > out_ptr[j] => {
                        if let Some(acc) = out_vals.last_mut() {
                            *acc += v;
                        }
                    }
                    _ => {
                        out_rows.push(i);
                        out_vals.push(v);
                    }
                }
            }
            out_ptr.push(out_rows.len());
        }
        Ok(Self {
            inner: CscMatrix::new(nrows, ncols, out_ptr, out_rows, out_vals),
        })
    }

    /// Builds from a dense matrix, storing only its nonzero entries.
    ///
    /// Errors: [`SolverError::NonFinite`] naming `what`.
    pub fn from_dense(m: &DMatrix<f64>, what: &'static str) -> Result<Self, SolverError> {
        check_finite(m.as_slice(), what)?;
        let (nrows, ncols) = m.shape();
        let mut colptr = Vec::with_capacity(ncols + 1);
        let mut rowval = Vec::new();
        let mut nzval = Vec::new();
        colptr.push(0);
        for j in 0..ncols {
            for (i, &v) in m.column(j).iter().enumerate() {
                if v != 0.0 {
                    rowval.push(i);
                    nzval.push(v);
                }
            }
            colptr.push(rowval.len());
        }
        Ok(Self {
            inner: CscMatrix::new(nrows, ncols, colptr, rowval, nzval),
        })
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.inner.m
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.inner.n
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.inner.nzval.len()
    }

    /// Column pointers (`ncols + 1` entries).
    pub fn colptr(&self) -> &[usize] {
        &self.inner.colptr
    }

    /// Row index of every stored entry, column by column.
    pub fn rowval(&self) -> &[usize] {
        &self.inner.rowval
    }

    /// Value of every stored entry, in the order of [`Self::rowval`].
    pub fn nzval(&self) -> &[f64] {
        &self.inner.nzval
    }

    /// Dense copy.
    pub fn to_dense(&self) -> DMatrix<f64> {
        let mut d = DMatrix::zeros(self.nrows(), self.ncols());
        self.for_each(|i, j, v| d[(i, j)] += v);
        d
    }

    /// `y ← y + M x`.
    pub(crate) fn gemv_add(&self, x: &[f64], y: &mut [f64]) {
        self.for_each(|i, j, v| y[i] += v * x[j]);
    }

    /// `y ← y + Mᵀ x`.
    pub(crate) fn gemv_t_add(&self, x: &[f64], y: &mut [f64]) {
        self.for_each(|i, j, v| y[j] += v * x[i]);
    }

    /// `y ← y + M_sym x` where `self` holds the upper triangle of the symmetric `M_sym`.
    pub(crate) fn symv_upper_add(&self, x: &[f64], y: &mut [f64]) {
        self.for_each(|i, j, v| {
            y[i] += v * x[j];
            if i != j {
                y[j] += v * x[i];
            }
        });
    }

    fn for_each(&self, mut f: impl FnMut(usize, usize, f64)) {
        let c = &self.inner;
        for j in 0..c.n {
            for k in c.colptr[j]..c.colptr[j + 1] {
                f(c.rowval[k], j, c.nzval[k]);
            }
        }
    }
}

pub(crate) fn check_finite(v: &[f64], what: &'static str) -> Result<(), SolverError> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(SolverError::NonFinite {
            solver: SOLVER,
            what,
        })
    }
}

pub(crate) fn check_len(
    expected: usize,
    got: usize,
    what: &'static str,
) -> Result<(), SolverError> {
    if expected == got {
        Ok(())
    } else {
        Err(SolverError::DimensionMismatch {
            solver: SOLVER,
            what,
            expected,
            got,
        })
    }
}

/// Relative tolerance of the symmetry test on a dense `P`: `|P_ij − P_ji| ≤ tol·(1 + max|P|)`.
pub const SYMMETRY_TOL: f64 = 1e-12;

/// A validated conic program `min ½xᵀPx + qᵀx s.t. A x + s = b, s ∈ K` (see the module docs).
///
/// Build it with [`ConicProblemBuilder`] or the convenience types [`crate::conic::Qp`],
/// [`crate::conic::Socp`] and (feature `sdp`) `Sdp`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConicProblem {
    pub(crate) p: SparseMatrix,
    pub(crate) q: Vec<f64>,
    pub(crate) a: SparseMatrix,
    pub(crate) b: Vec<f64>,
    pub(crate) cones: Vec<Cone>,
}

impl ConicProblem {
    /// Assembles a problem from ready-made parts, validating every dimension: `p` is `n × n`
    /// holding only its upper triangle (entries below the diagonal are rejected), `a` is
    /// `m × n`, `b` has `m` entries and the cone dimensions sum to `m`.
    pub fn from_parts(
        p: SparseMatrix,
        q: Vec<f64>,
        a: SparseMatrix,
        b: Vec<f64>,
        cones: Vec<Cone>,
    ) -> Result<Self, SolverError> {
        let n = q.len();
        check_len(n, p.nrows(), "rows of P")?;
        check_len(n, p.ncols(), "columns of P")?;
        check_len(n, a.ncols(), "columns of A")?;
        check_len(a.nrows(), b.len(), "length of b (rows of A)")?;
        let m: usize = cones.iter().map(Cone::dim).sum();
        check_len(a.nrows(), m, "sum of cone dimensions (rows of A)")?;
        check_finite(&q, "q")?;
        check_finite(&b, "b")?;
        check_finite(p.nzval(), "P")?;
        check_finite(a.nzval(), "A")?;
        for j in 0..p.ncols() {
            for k in p.colptr()[j]..p.colptr()[j + 1] {
                if p.rowval()[k] > j {
                    return Err(SolverError::InvalidInput {
                        solver: SOLVER,
                        reason: format!(
                            "P must hold only its upper triangle; entry ({}, {j}) is below the diagonal",
                            p.rowval()[k]
                        ),
                    });
                }
            }
        }
        for cone in &cones {
            validate_cone(cone)?;
        }
        Ok(Self { p, q, a, b, cones })
    }

    /// Number of variables `n`.
    pub fn num_vars(&self) -> usize {
        self.q.len()
    }

    /// Number of constraint rows `m`.
    pub fn num_rows(&self) -> usize {
        self.b.len()
    }

    /// Upper triangle of `P`.
    pub fn p(&self) -> &SparseMatrix {
        &self.p
    }

    /// Linear cost `q`.
    pub fn q(&self) -> &[f64] {
        &self.q
    }

    /// Constraint matrix `A`.
    pub fn a(&self) -> &SparseMatrix {
        &self.a
    }

    /// Right-hand side `b`.
    pub fn b(&self) -> &[f64] {
        &self.b
    }

    /// The cones, in row order.
    pub fn cones(&self) -> &[Cone] {
        &self.cones
    }

    /// Objective `½xᵀPx + qᵀx` at `x`; errors if `x.len() ≠ n`.
    pub fn objective(&self, x: &[f64]) -> Result<f64, SolverError> {
        check_len(self.num_vars(), x.len(), "x")?;
        Ok(self.objective_unchecked(x))
    }

    pub(crate) fn objective_unchecked(&self, x: &[f64]) -> f64 {
        let mut px = vec![0.0; x.len()];
        self.p.symv_upper_add(x, &mut px);
        x.iter()
            .zip(&px)
            .zip(&self.q)
            .map(|((xi, pxi), qi)| xi * (0.5 * pxi + qi))
            .sum()
    }
}

fn validate_cone(cone: &Cone) -> Result<(), SolverError> {
    match *cone {
        Cone::SecondOrder(n) if n < 2 => Err(SolverError::InvalidInput {
            solver: SOLVER,
            reason: format!("second-order cone of dimension {n}; it needs at least 2"),
        }),
        #[cfg(feature = "sdp")]
        Cone::PsdTriangle(0) => Err(SolverError::InvalidInput {
            solver: SOLVER,
            reason: "PSD cone of dimension 0".to_string(),
        }),
        _ => Ok(()),
    }
}

/// Incremental, validating builder of a [`ConicProblem`] with `n` variables.
///
/// Each constraint method appends a block of rows `A_blk x + s_blk = b_blk, s_blk ∈ K_blk`;
/// blocks appear in `A`, `b`, `s` and `z` in the order they were added. Dense (nalgebra) and
/// sparse (triplet) inputs may be mixed. Every method validates its input and fails with a
/// typed [`SolverError`] naming the offending item.
///
/// ```
/// use nalgebra::dmatrix;
/// use nonsmooth_solvers::conic::{ConicOptions, ConicProblemBuilder};
/// // min ½‖x‖² s.t. x₀ + x₁ = 1
/// let problem = ConicProblemBuilder::new(2)
///     .quadratic_dense(&dmatrix![1.0, 0.0; 0.0, 1.0])?
///     .equalities_dense(&dmatrix![1.0, 1.0], &[1.0])?
///     .build()?;
/// let sol = problem.solve(&ConicOptions::default())?;
/// assert!((sol.objective - 0.25).abs() < 1e-8);
/// # Ok::<(), nonsmooth_solvers::SolverError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ConicProblemBuilder {
    n: usize,
    p: Vec<(usize, usize, f64)>,
    q: Vec<f64>,
    a: Vec<(usize, usize, f64)>,
    b: Vec<f64>,
    cones: Vec<Cone>,
}

impl ConicProblemBuilder {
    /// Empty problem in `n` variables: `P = 0`, `q = 0`, no constraints.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            p: Vec::new(),
            q: vec![0.0; n],
            a: Vec::new(),
            b: Vec::new(),
            cones: Vec::new(),
        }
    }

    /// Number of variables `n`.
    pub fn num_vars(&self) -> usize {
        self.n
    }

    /// Adds the dense symmetric `P` to the quadratic term. Errors: wrong shape, NaN/inf, or
    /// `P` not symmetric to [`SYMMETRY_TOL`] (`InvalidInput`).
    pub fn quadratic_dense(mut self, p: &DMatrix<f64>) -> Result<Self, SolverError> {
        check_len(self.n, p.nrows(), "rows of P")?;
        check_len(self.n, p.ncols(), "columns of P")?;
        check_finite(p.as_slice(), "P")?;
        let scale = 1.0 + p.amax();
        for j in 0..self.n {
            for i in 0..j {
                if (p[(i, j)] - p[(j, i)]).abs() > SYMMETRY_TOL * scale {
                    return Err(not_symmetric(i, j, p[(i, j)], p[(j, i)]));
                }
            }
        }
        for j in 0..self.n {
            for i in 0..=j {
                let v = p[(i, j)];
                if v != 0.0 {
                    self.p.push((i, j, v));
                }
            }
        }
        Ok(self)
    }

    /// Adds a sparse symmetric `P` given by triplets covering BOTH triangles (repeated
    /// positions are summed); its symmetry is checked like [`Self::quadratic_dense`].
    pub fn quadratic_triplets(mut self, t: &[(usize, usize, f64)]) -> Result<Self, SolverError> {
        let full = SparseMatrix::from_triplets(self.n, self.n, t, "P")?;
        let tr = {
            let swapped: Vec<_> = t.iter().map(|&(i, j, v)| (j, i, v)).collect();
            SparseMatrix::from_triplets(self.n, self.n, &swapped, "P")?
        };
        let scale = 1.0 + full.nzval().iter().fold(0.0f64, |m, v| m.max(v.abs()));
        // Compare column by column by merging the two sorted columns.
        for j in 0..self.n {
            let (r1, v1) = col(&full, j);
            let (r2, v2) = col(&tr, j);
            let (mut k1, mut k2) = (0, 0);
            while k1 < r1.len() || k2 < r2.len() {
                let (i, a, b) = match (r1.get(k1), r2.get(k2)) {
                    (Some(&i1), Some(&i2)) if i1 == i2 => {
                        k1 += 1;
                        k2 += 1;
                        (i1, v1[k1 - 1], v2[k2 - 1])
                    }
                    (Some(&i1), Some(&i2)) if i1 < i2 => {
                        k1 += 1;
                        (i1, v1[k1 - 1], 0.0)
                    }
                    (Some(&i1), None) => {
                        k1 += 1;
                        (i1, v1[k1 - 1], 0.0)
                    }
                    (_, Some(&i2)) => {
                        k2 += 1;
                        (i2, 0.0, v2[k2 - 1])
                    }
                    (None, None) => break,
                };
                if (a - b).abs() > SYMMETRY_TOL * scale {
                    return Err(not_symmetric(i, j, a, b));
                }
            }
        }
        self.p.extend(t.iter().copied().filter(|&(i, j, _)| i <= j));
        Ok(self)
    }

    /// Adds a sparse symmetric `P` given by triplets of its UPPER triangle only (`i ≤ j`;
    /// an entry below the diagonal is an `InvalidInput` error). Repeated positions are summed.
    pub fn quadratic_upper_triplets(
        mut self,
        t: &[(usize, usize, f64)],
    ) -> Result<Self, SolverError> {
        // Validates indices and values.
        SparseMatrix::from_triplets(self.n, self.n, t, "P")?;
        if let Some(&(i, j, _)) = t.iter().find(|&&(i, j, _)| i > j) {
            return Err(SolverError::InvalidInput {
                solver: SOLVER,
                reason: format!("upper-triangle P triplet ({i}, {j}) lies below the diagonal"),
            });
        }
        self.p.extend_from_slice(t);
        Ok(self)
    }

    /// Adds `c` to the linear cost `q`.
    pub fn linear(mut self, c: &[f64]) -> Result<Self, SolverError> {
        check_len(self.n, c.len(), "linear cost c")?;
        check_finite(c, "linear cost c")?;
        for (qi, ci) in self.q.iter_mut().zip(c) {
            *qi += ci;
        }
        Ok(self)
    }

    /// Appends rows `A x + s = b, s ∈ cone` with a dense `A` (`cone.dim() × n`).
    pub fn constraint_dense(
        mut self,
        cone: Cone,
        a: &DMatrix<f64>,
        b: &[f64],
    ) -> Result<Self, SolverError> {
        validate_cone(&cone)?;
        check_len(cone.dim(), a.nrows(), "rows of constraint block A")?;
        check_len(self.n, a.ncols(), "columns of constraint block A")?;
        check_len(cone.dim(), b.len(), "length of constraint block b")?;
        check_finite(a.as_slice(), "constraint block A")?;
        check_finite(b, "constraint block b")?;
        let r0 = self.b.len();
        for j in 0..self.n {
            for i in 0..a.nrows() {
                let v = a[(i, j)];
                if v != 0.0 {
                    self.a.push((r0 + i, j, v));
                }
            }
        }
        self.push_block(cone, b);
        Ok(self)
    }

    /// Appends rows `A x + s = b, s ∈ cone` with `A` given by triplets whose row indices are
    /// local to the block (`0 ≤ row < cone.dim()`).
    pub fn constraint_triplets(
        mut self,
        cone: Cone,
        a: &[(usize, usize, f64)],
        b: &[f64],
    ) -> Result<Self, SolverError> {
        validate_cone(&cone)?;
        check_len(cone.dim(), b.len(), "length of constraint block b")?;
        check_finite(b, "constraint block b")?;
        // Validates indices and values.
        SparseMatrix::from_triplets(cone.dim(), self.n, a, "constraint block A")?;
        let r0 = self.b.len();
        self.a.extend(a.iter().map(|&(i, j, v)| (r0 + i, j, v)));
        self.push_block(cone, b);
        Ok(self)
    }

    /// Appends equalities `A x = b`.
    pub fn equalities_dense(self, a: &DMatrix<f64>, b: &[f64]) -> Result<Self, SolverError> {
        self.constraint_dense(Cone::Zero(a.nrows()), a, b)
    }

    /// Appends inequalities `G x ≤ h`.
    pub fn inequalities_dense(self, g: &DMatrix<f64>, h: &[f64]) -> Result<Self, SolverError> {
        self.constraint_dense(Cone::Nonnegative(g.nrows()), g, h)
    }

    /// Appends the second-order-cone constraint `‖M x + m‖₂ ≤ cᵀx + d` as the block
    /// `s = (cᵀx + d, M x + m) ∈ SOC(k+1)`, i.e. `A_blk = −[cᵀ; M]`, `b_blk = (d, m)`
    /// (Lobo, Vandenberghe, Boyd & Lebret, "Applications of second-order cone programming",
    /// 1998, eq. (1)).
    pub fn soc_affine(
        self,
        m: &DMatrix<f64>,
        m0: &[f64],
        c: &[f64],
        d: f64,
    ) -> Result<Self, SolverError> {
        let k = m.nrows();
        check_len(k, m0.len(), "SOC offset vector")?;
        check_len(self.n, c.len(), "SOC linear term c")?;
        check_len(self.n, m.ncols(), "columns of SOC matrix")?;
        check_finite(&[d], "SOC offset d")?;
        let mut a = DMatrix::zeros(k + 1, self.n);
        for j in 0..self.n {
            a[(0, j)] = -c[j];
            for i in 0..k {
                a[(i + 1, j)] = -m[(i, j)];
            }
        }
        let mut b = Vec::with_capacity(k + 1);
        b.push(d);
        b.extend_from_slice(m0);
        self.constraint_dense(Cone::SecondOrder(k + 1), &a, &b)
    }

    /// Appends the bounds `lower ≤ x ≤ upper` as nonnegative-cone rows; infinite entries
    /// (−∞ below, +∞ above) produce no row. NaN, `+∞` lower or `−∞` upper are errors.
    pub fn bounds(self, lower: &[f64], upper: &[f64]) -> Result<Self, SolverError> {
        check_len(self.n, lower.len(), "lower bounds")?;
        check_len(self.n, upper.len(), "upper bounds")?;
        if lower.iter().any(|v| v.is_nan() || *v == f64::INFINITY) {
            return Err(SolverError::NonFinite {
                solver: SOLVER,
                what: "lower bounds (NaN or +inf)",
            });
        }
        if upper.iter().any(|v| v.is_nan() || *v == f64::NEG_INFINITY) {
            return Err(SolverError::NonFinite {
                solver: SOLVER,
                what: "upper bounds (NaN or -inf)",
            });
        }
        let mut t = Vec::new();
        let mut h = Vec::new();
        for (j, &l) in lower.iter().enumerate() {
            if l.is_finite() {
                t.push((h.len(), j, -1.0));
                h.push(-l);
            }
        }
        for (j, &u) in upper.iter().enumerate() {
            if u.is_finite() {
                t.push((h.len(), j, 1.0));
                h.push(u);
            }
        }
        if h.is_empty() {
            return Ok(self);
        }
        self.constraint_triplets(Cone::Nonnegative(h.len()), &t, &h)
    }

    fn push_block(&mut self, cone: Cone, b: &[f64]) {
        self.b.extend_from_slice(b);
        // Merge consecutive zero / nonnegative blocks into one cone.
        match (self.cones.last_mut(), cone) {
            (Some(Cone::Zero(k)), Cone::Zero(n))
            | (Some(Cone::Nonnegative(k)), Cone::Nonnegative(n)) => *k += n,
            _ => {
                if cone.dim() > 0 {
                    self.cones.push(cone)
                }
            }
        }
    }

    /// Finishes the problem (assembles `P` and `A` in CSC form once).
    pub fn build(self) -> Result<ConicProblem, SolverError> {
        let p = SparseMatrix::from_triplets(self.n, self.n, &self.p, "P")?;
        let a = SparseMatrix::from_triplets(self.b.len(), self.n, &self.a, "A")?;
        ConicProblem::from_parts(p, self.q, a, self.b, self.cones)
    }
}

fn col(m: &SparseMatrix, j: usize) -> (&[usize], &[f64]) {
    let r = m.colptr()[j]..m.colptr()[j + 1];
    (&m.rowval()[r.clone()], &m.nzval()[r])
}

fn not_symmetric(i: usize, j: usize, a: f64, b: f64) -> SolverError {
    SolverError::InvalidInput {
        solver: SOLVER,
        reason: format!("P is not symmetric: P[{i},{j}] = {a} but P[{j},{i}] = {b}"),
    }
}
