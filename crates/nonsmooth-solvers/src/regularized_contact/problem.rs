//! Problem data and its validating builder.

use std::sync::OnceLock;

use nalgebra::{DMatrix, DVector};

use super::csc::Csc;
use super::pattern::SparsePattern;
use super::projection::project;
use crate::status::SolverError;

/// Name used in every error raised by this module.
pub(crate) const SOLVER: &str = "regularized contact (Newton)";

/// Relative tolerance of the symmetry check on `A` and of the equality of a cone's two
/// tangential regularizations.
pub const SYMMETRY_TOL: f64 = 1e-12;

/// The set `F` a constraint's impulse `γ` is confined to, and so its number of rows.
///
/// Rows are ordered **tangents first, normal last**; the normal velocity is positive when
/// the bodies separate and the normal impulse is positive when it pushes them apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConstraintKind {
    /// Coulomb cone, 3 rows `(t₁, t₂, n)`: `‖(γ_t₁, γ_t₂)‖ ≤ μ γ_n`. The two tangential
    /// regularizations must be equal (isotropic friction).
    Cone {
        /// Friction coefficient `μ ≥ 0`.
        mu: f64,
    },
    /// Planar friction, 2 rows `(t, n)`: `|γ_t| ≤ μ γ_n`.
    Planar {
        /// Friction coefficient `μ ≥ 0`.
        mu: f64,
    },
    /// One row, `γ ≥ 0`: a frictionless contact or a joint limit.
    Unilateral,
    /// One row, `γ` free: a soft equality (joint, weld, motor with a target velocity).
    Bilateral,
    /// Friction with a given bound (Tresca friction), 2 tangential rows:
    /// `‖(γ_t₁, γ_t₂)‖ ≤ radius`. The two regularizations must be equal (isotropic
    /// friction). With `radius = μ γ_n` for a fixed estimate of the normal impulse `γ_n`
    /// it is the Coulomb disk of a contact whose normal row is a separate
    /// [`Unilateral`](Self::Unilateral) constraint; `radius = ∞` is the plane.
    Disk {
        /// Bound on the impulse's norm, `≥ 0` (may be `+∞`).
        radius: f64,
    },
    /// Friction with a given bound in the plane, 1 tangential row: `|γ_t| ≤ radius`.
    Interval {
        /// Bound on the impulse's magnitude, `≥ 0` (may be `+∞`).
        radius: f64,
    },
    /// Coulomb friction with the normal impulse of the max() law, 3 rows `(t₁, t₂, n)`:
    /// the non-associated impulse map of Alart and Curnier (1991), `γ_n = max(0, y_n)`,
    /// `γ_t = P_{‖·‖ ≤ μγ_n}(y_t)` — the normal impulse is the unilateral row's alone (no
    /// coupling to the cone, so no Anitescu relaxation), the friction impulse the
    /// Euclidean projection onto the disk of radius `μγ_n`. Not the gradient of a convex
    /// function: solved only by [`solve_semismooth`](super::solve_semismooth). The two
    /// tangential regularizations must be equal.
    Coulomb {
        /// Friction coefficient `μ ≥ 0`.
        mu: f64,
    },
    /// Coulomb friction in the plane, 2 rows `(t, n)`: `γ_n = max(0, y_n)`,
    /// `γ_t = clamp(y_t, −μγ_n, μγ_n)` (see [`Coulomb`](Self::Coulomb)).
    PlanarCoulomb {
        /// Friction coefficient `μ ≥ 0`.
        mu: f64,
    },
}

impl ConstraintKind {
    /// Number of rows (1, 2 or 3).
    pub fn rows(&self) -> usize {
        match self {
            ConstraintKind::Cone { .. } | ConstraintKind::Coulomb { .. } => 3,
            ConstraintKind::Planar { .. }
            | ConstraintKind::Disk { .. }
            | ConstraintKind::PlanarCoulomb { .. } => 2,
            ConstraintKind::Unilateral
            | ConstraintKind::Bilateral
            | ConstraintKind::Interval { .. } => 1,
        }
    }

    /// Whether the impulse map is the derivative of a convex function (every kind but
    /// the Coulomb kinds), so that [`solve`](super::solve) applies.
    pub fn is_convex(&self) -> bool {
        !matches!(
            self,
            ConstraintKind::Coulomb { .. } | ConstraintKind::PlanarCoulomb { .. }
        )
    }
}

/// One constraint: its kind, its Jacobian rows, and per row the regularization `R > 0`
/// and the bias velocity `v̂`.
#[derive(Debug, Clone, PartialEq)]
pub struct Constraint {
    /// Kind (and with it the row count and the row order).
    pub kind: ConstraintKind,
    /// Jacobian entries `(row within the constraint, column of v, value)`; repeated
    /// positions are summed.
    pub jacobian: Vec<(usize, usize, f64)>,
    /// Diagonal regularization `R`, one per row, positive.
    pub r: Vec<f64>,
    /// Bias velocity `v̂`, one per row.
    pub v_hat: Vec<f64>,
}

impl Constraint {
    /// From Jacobian triplets `(row within the constraint, column of v, value)`.
    pub fn new(
        kind: ConstraintKind,
        jacobian: Vec<(usize, usize, f64)>,
        r: Vec<f64>,
        v_hat: Vec<f64>,
    ) -> Self {
        Self {
            kind,
            jacobian,
            r,
            v_hat,
        }
    }

    /// From a dense Jacobian block (`rows × n`); zero entries are dropped.
    pub fn from_dense(
        kind: ConstraintKind,
        jacobian: &DMatrix<f64>,
        r: Vec<f64>,
        v_hat: Vec<f64>,
    ) -> Self {
        let mut t = Vec::new();
        for j in 0..jacobian.ncols() {
            for i in 0..jacobian.nrows() {
                let x = jacobian[(i, j)];
                if x != 0.0 {
                    t.push((i, j, x));
                }
            }
        }
        Self::new(kind, t, r, v_hat)
    }
}

/// Builder of a [`RegularizedContactProblem`]; every check is made by
/// [`build`](Self::build).
#[derive(Debug, Clone)]
pub struct RegularizedContactProblemBuilder {
    n: usize,
    mass_triplets: Vec<(usize, usize, f64)>,
    mass_blocks: Vec<(Vec<usize>, DMatrix<f64>)>,
    v_star: Option<DVector<f64>>,
    constraints: Vec<Constraint>,
}

impl RegularizedContactProblemBuilder {
    /// Empty problem in `n` generalized velocities.
    pub fn new(n: usize) -> Self {
        Self {
            n,
            mass_triplets: Vec::new(),
            mass_blocks: Vec::new(),
            v_star: None,
            constraints: Vec::new(),
        }
    }

    /// Adds a dense symmetric block to `A` over the contiguous velocities
    /// `offset..offset + block.nrows()`.
    pub fn mass_block(self, offset: usize, block: &DMatrix<f64>) -> Self {
        let idx: Vec<usize> = (offset..offset + block.nrows()).collect();
        self.mass_block_at(&idx, block)
    }

    /// Adds a dense symmetric block to `A` over the velocities `indices` (its row and
    /// column `k` go to velocity `indices[k]`).
    pub fn mass_block_at(mut self, indices: &[usize], block: &DMatrix<f64>) -> Self {
        self.mass_blocks.push((indices.to_vec(), block.clone()));
        self
    }

    /// Adds entries to `A` as `(row, column, value)` triplets covering **both** triangles
    /// (repeated positions are summed).
    pub fn mass_triplets(mut self, triplets: &[(usize, usize, f64)]) -> Self {
        self.mass_triplets.extend_from_slice(triplets);
        self
    }

    /// Sets the free velocity `v*` (default 0).
    pub fn free_velocity(mut self, v_star: DVector<f64>) -> Self {
        self.v_star = Some(v_star);
        self
    }

    /// Appends a constraint; constraints are numbered in the order they are added.
    pub fn constraint(mut self, c: Constraint) -> Self {
        self.constraints.push(c);
        self
    }

    /// Appends constraints.
    pub fn constraints(mut self, cs: impl IntoIterator<Item = Constraint>) -> Self {
        self.constraints.extend(cs);
        self
    }

    /// Validates and builds.
    ///
    /// Errors ([`SolverError::InvalidInput`] unless stated; every constraint error names
    /// the constraint's index and field):
    /// - `v*` of the wrong length ([`SolverError::DimensionMismatch`]) or not finite
    ///   ([`SolverError::NonFinite`]);
    /// - a mass block whose index list and matrix sizes differ, an index ≥ n, a non-finite
    ///   entry, `A` not symmetric to [`SYMMETRY_TOL`] (relative to its largest entry), or a
    ///   diagonal entry ≤ 0 (that `A` is positive definite is found by the first
    ///   factorization in the solve);
    /// - a Jacobian entry outside the constraint's rows or `n` columns, or not finite; a
    ///   Jacobian with no entry at all;
    /// - `r` or `v_hat` of the wrong length, an `r` entry not positive and finite, a
    ///   non-finite `v_hat`; a negative or non-finite `μ`; a cone whose two tangential
    ///   regularizations differ by more than [`SYMMETRY_TOL`] relative.
    pub fn build(self) -> Result<RegularizedContactProblem, SolverError> {
        let n = self.n;
        let v_star = checked_free_velocity(self.v_star, n)?;
        let (a, diag) = mass_matrix(self.mass_triplets, &self.mass_blocks, n)?;

        let mut cons = Vec::with_capacity(self.constraints.len());
        let mut r_all = Vec::new();
        let mut vhat_all = Vec::new();
        let mut row = 0;
        for (c, con) in self.constraints.iter().enumerate() {
            check_constraint(c, con, n)?;
            let data = constraint_data(c, con, row)?;
            if let ConstraintKind::Cone { .. }
            | ConstraintKind::Disk { .. }
            | ConstraintKind::Coulomb { .. } = con.kind
            {
                let rt = 0.5 * (con.r[0] + con.r[1]);
                r_all.extend_from_slice(&[rt, rt]);
                r_all.extend_from_slice(&con.r[2..]);
            } else {
                r_all.extend_from_slice(&con.r);
            }
            vhat_all.extend_from_slice(&con.v_hat);
            row += data.rows;
            cons.push(data);
        }

        Ok(RegularizedContactProblem {
            n,
            a,
            diag,
            v_star,
            cons,
            r: r_all,
            v_hat: vhat_all,
            m_rows: row,
            pattern: OnceLock::new(),
        })
    }
}

/// An [`SolverError::InvalidInput`] of this solver.
fn invalid(reason: String) -> SolverError {
    SolverError::InvalidInput {
        solver: SOLVER,
        reason,
    }
}

/// The free velocity `v*` checked for length and finiteness (zero when not given).
fn checked_free_velocity(
    v_star: Option<DVector<f64>>,
    n: usize,
) -> Result<DVector<f64>, SolverError> {
    let Some(v) = v_star else {
        return Ok(DVector::zeros(n));
    };
    if v.len() != n {
        return Err(SolverError::DimensionMismatch {
            solver: SOLVER,
            what: "free velocity v*",
            expected: n,
            got: v.len(),
        });
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(SolverError::NonFinite {
            solver: SOLVER,
            what: "free velocity v*",
        });
    }
    Ok(v)
}

/// `A` gathered from triplets and dense blocks into full-symmetric CSC, checked for
/// range, finiteness, symmetry and a positive diagonal; returns it with its diagonal.
fn mass_matrix(
    mut trip: Vec<(usize, usize, f64)>,
    mass_blocks: &[(Vec<usize>, DMatrix<f64>)],
    n: usize,
) -> Result<(Csc, Vec<f64>), SolverError> {
    for (b, (idx, m)) in mass_blocks.iter().enumerate() {
        if m.nrows() != idx.len() || m.ncols() != idx.len() {
            return Err(invalid(format!(
                "mass block {b}: {} indices for a {} x {} matrix",
                idx.len(),
                m.nrows(),
                m.ncols()
            )));
        }
        for (jj, &j) in idx.iter().enumerate() {
            for (ii, &i) in idx.iter().enumerate() {
                let x = m[(ii, jj)];
                if x != 0.0 {
                    trip.push((i, j, x));
                }
            }
        }
    }
    for &(i, j, x) in &trip {
        if i >= n || j >= n {
            return Err(invalid(format!(
                "mass matrix entry ({i}, {j}) outside {n} x {n}"
            )));
        }
        if !x.is_finite() {
            return Err(SolverError::NonFinite {
                solver: SOLVER,
                what: "mass matrix A",
            });
        }
    }
    let a = Csc::from_triplets(n, &trip);
    let amax = a.val.iter().fold(0f64, |m, x| m.max(x.abs()));
    for j in 0..n {
        for k in a.ptr[j]..a.ptr[j + 1] {
            let i = a.idx[k];
            if i != j {
                let aij = a.val[k];
                let aji = a.get(j, i);
                if (aij - aji).abs() > SYMMETRY_TOL * amax {
                    return Err(invalid(format!(
                        "mass matrix not symmetric: A[{i}][{j}] = {aij}, A[{j}][{i}] = {aji}"
                    )));
                }
            }
        }
    }
    let mut diag = vec![0.0; n];
    for (j, d) in diag.iter_mut().enumerate() {
        *d = a.get(j, j);
        if d.is_nan() || *d <= 0.0 {
            return Err(invalid(format!(
                "mass matrix diagonal A[{j}][{j}] = {d} must be positive"
            )));
        }
    }
    Ok((a, diag))
}

/// The error for field `field` of constraint `c`.
fn constraint_error(c: usize, field: &str, what: String) -> SolverError {
    invalid(format!("constraint {c}: {field}: {what}"))
}

/// Checks constraint `c`'s friction data, `r`, `v_hat` and Jacobian entries.
fn check_constraint(c: usize, con: &Constraint, n: usize) -> Result<(), SolverError> {
    let rows = con.kind.rows();
    let err = |field: &str, what: String| constraint_error(c, field, what);
    if let ConstraintKind::Cone { mu }
    | ConstraintKind::Planar { mu }
    | ConstraintKind::Coulomb { mu }
    | ConstraintKind::PlanarCoulomb { mu } = con.kind
    {
        if !(mu.is_finite() && mu >= 0.0) {
            return Err(err("mu", format!("{mu} must be finite and >= 0")));
        }
    }
    if let ConstraintKind::Disk { radius } | ConstraintKind::Interval { radius } = con.kind {
        check_radius(radius).map_err(|what| err("radius", what))?;
    }
    if con.r.len() != rows {
        return Err(err("r", format!("{} entries for {rows} rows", con.r.len())));
    }
    if con.v_hat.len() != rows {
        return Err(err(
            "v_hat",
            format!("{} entries for {rows} rows", con.v_hat.len()),
        ));
    }
    for (i, &x) in con.r.iter().enumerate() {
        if !(x.is_finite() && x > 0.0) {
            return Err(err(
                &format!("r[{i}]"),
                format!("{x} must be positive and finite"),
            ));
        }
    }
    for (i, &x) in con.v_hat.iter().enumerate() {
        if !x.is_finite() {
            return Err(err(&format!("v_hat[{i}]"), format!("{x} is not finite")));
        }
    }
    if let ConstraintKind::Cone { .. }
    | ConstraintKind::Disk { .. }
    | ConstraintKind::Coulomb { .. } = con.kind
    {
        let (r0, r1) = (con.r[0], con.r[1]);
        if (r0 - r1).abs() > SYMMETRY_TOL * r0.max(r1) {
            return Err(err(
                "r",
                format!("tangential regularizations {r0} and {r1} differ"),
            ));
        }
    }
    for &(i, j, x) in &con.jacobian {
        if i >= rows || j >= n {
            return Err(err(
                "jacobian",
                format!("entry ({i}, {j}) outside {rows} x {n}"),
            ));
        }
        if !x.is_finite() {
            return Err(err(
                "jacobian",
                format!("entry ({i}, {j}) = {x} is not finite"),
            ));
        }
    }
    Ok(())
}

/// Constraint `c` (already checked) as its column support and dense Jacobian block,
/// starting at stacked row `row`.
fn constraint_data(c: usize, con: &Constraint, row: usize) -> Result<ConData, SolverError> {
    let rows = con.kind.rows();
    let mut support: Vec<usize> = con.jacobian.iter().map(|t| t.1).collect();
    support.sort_unstable();
    support.dedup();
    if support.is_empty() {
        return Err(constraint_error(c, "jacobian", "no entries".into()));
    }
    let k = support.len();
    let mut jd = vec![0.0; rows * k];
    for &(i, j, x) in &con.jacobian {
        if let Ok(p) = support.binary_search(&j) {
            jd[i * k + p] += x;
        }
    }
    Ok(ConData {
        kind: con.kind,
        rows,
        row,
        support,
        jd,
    })
}

/// A friction bound must be `≥ 0` and not NaN (`+∞` allowed).
fn check_radius(radius: f64) -> Result<(), String> {
    if radius >= 0.0 {
        Ok(())
    } else {
        Err(format!("{radius} must be >= 0"))
    }
}

/// One validated constraint: the Jacobian as a dense `rows × k` block (row-major) over the
/// sorted columns `support` it touches.
#[derive(Debug, Clone)]
pub(crate) struct ConData {
    pub(crate) kind: ConstraintKind,
    pub(crate) rows: usize,
    /// First row in the stacked constraint vectors.
    pub(crate) row: usize,
    pub(crate) support: Vec<usize>,
    pub(crate) jd: Vec<f64>,
}

impl ConData {
    /// `out = J_c x`.
    pub(crate) fn apply(&self, x: &[f64], out: &mut [f64]) {
        let k = self.support.len();
        for (i, o) in out.iter_mut().enumerate().take(self.rows) {
            let row = &self.jd[i * k..(i + 1) * k];
            *o = row.iter().zip(&self.support).map(|(a, &j)| a * x[j]).sum();
        }
    }

    /// `y += J_cᵀ g`.
    pub(crate) fn apply_transpose_add(&self, g: &[f64], y: &mut [f64]) {
        let k = self.support.len();
        for (i, &gi) in g.iter().enumerate().take(self.rows) {
            if gi == 0.0 {
                continue;
            }
            let row = &self.jd[i * k..(i + 1) * k];
            for (a, &j) in row.iter().zip(&self.support) {
                y[j] += a * gi;
            }
        }
    }
}

/// A validated regularized contact problem (see the [module documentation](super)).
///
/// The sparse Hessian's symbolic factorization is computed by the first solve that needs
/// it and kept for later solves of the same problem.
#[derive(Debug)]
pub struct RegularizedContactProblem {
    pub(crate) n: usize,
    pub(crate) a: Csc,
    pub(crate) diag: Vec<f64>,
    pub(crate) v_star: DVector<f64>,
    pub(crate) cons: Vec<ConData>,
    pub(crate) r: Vec<f64>,
    pub(crate) v_hat: Vec<f64>,
    pub(crate) m_rows: usize,
    pub(crate) pattern: OnceLock<SparsePattern>,
}

impl RegularizedContactProblem {
    /// Starts a builder for `n` generalized velocities.
    pub fn builder(n: usize) -> RegularizedContactProblemBuilder {
        RegularizedContactProblemBuilder::new(n)
    }

    /// Number of generalized velocities `n`.
    pub fn num_velocities(&self) -> usize {
        self.n
    }

    /// Number of constraints.
    pub fn num_constraints(&self) -> usize {
        self.cons.len()
    }

    /// Total number of constraint rows (the length of the stacked `γ`).
    pub fn num_rows(&self) -> usize {
        self.m_rows
    }

    /// Rows of constraint `c` in the stacked constraint vectors (`None` if out of range).
    pub fn rows_of(&self, c: usize) -> Option<std::ops::Range<usize>> {
        self.cons.get(c).map(|k| k.row..k.row + k.rows)
    }

    /// Kind of constraint `c`.
    pub fn kind(&self, c: usize) -> Option<ConstraintKind> {
        self.cons.get(c).map(|k| k.kind)
    }

    /// Sets the bound of the [`Disk`](ConstraintKind::Disk) or
    /// [`Interval`](ConstraintKind::Interval) constraint `c` (the friction bound of a
    /// fixed-point iteration on the normal impulses), keeping the symbolic factorization.
    ///
    /// Errors ([`SolverError::InvalidInput`]): `c` out of range, not a bounded friction
    /// constraint, or a negative or NaN `radius`.
    pub fn set_friction_bound(&mut self, c: usize, radius: f64) -> Result<(), SolverError> {
        let invalid = |reason: String| SolverError::InvalidInput {
            solver: SOLVER,
            reason,
        };
        check_radius(radius).map_err(|what| invalid(format!("constraint {c}: radius: {what}")))?;
        match self.cons.get_mut(c) {
            Some(ConData {
                kind: ConstraintKind::Disk { radius: b } | ConstraintKind::Interval { radius: b },
                ..
            }) => {
                *b = radius;
                Ok(())
            }
            Some(_) => Err(invalid(format!(
                "constraint {c} is not a Disk or Interval constraint"
            ))),
            None => Err(invalid(format!(
                "constraint {c} out of range ({} constraints)",
                self.cons.len()
            ))),
        }
    }

    /// The free velocity `v*`.
    pub fn free_velocity(&self) -> &DVector<f64> {
        &self.v_star
    }

    /// `A x`. Errors: `x` of the wrong length.
    pub fn mass_mul(&self, x: &DVector<f64>) -> Result<DVector<f64>, SolverError> {
        self.check_len(x, "x")?;
        let mut y = DVector::zeros(self.n);
        self.a.mul_into(x.as_slice(), y.as_mut_slice());
        Ok(y)
    }

    /// The stacked constraint velocities `J v`. Errors: `v` of the wrong length.
    pub fn constraint_velocity(&self, v: &DVector<f64>) -> Result<DVector<f64>, SolverError> {
        self.check_len(v, "v")?;
        let mut out = DVector::zeros(self.m_rows);
        for c in &self.cons {
            c.apply(v.as_slice(), &mut out.as_mut_slice()[c.row..c.row + c.rows]);
        }
        Ok(out)
    }

    /// `Jᵀ γ` for a stacked `γ`. Errors: `γ` of the wrong length.
    pub fn jacobian_transpose_mul(
        &self,
        gamma: &DVector<f64>,
    ) -> Result<DVector<f64>, SolverError> {
        if gamma.len() != self.m_rows {
            return Err(SolverError::DimensionMismatch {
                solver: SOLVER,
                what: "gamma",
                expected: self.m_rows,
                got: gamma.len(),
            });
        }
        let mut out = DVector::zeros(self.n);
        for c in &self.cons {
            c.apply_transpose_add(&gamma.as_slice()[c.row..c.row + c.rows], out.as_mut_slice());
        }
        Ok(out)
    }

    /// The impulses `γ(v) = P_F(−R⁻¹(J v − v̂))` of every constraint, stacked.
    /// Errors: `v` of the wrong length.
    pub fn impulses(&self, v: &DVector<f64>) -> Result<DVector<f64>, SolverError> {
        let vc = self.constraint_velocity(v)?;
        let mut gamma = DVector::zeros(self.m_rows);
        let mut y = [0.0; 3];
        for c in &self.cons {
            let rr = c.row..c.row + c.rows;
            for (k, i) in rr.clone().enumerate() {
                y[k] = -(vc[i] - self.v_hat[i]) / self.r[i];
            }
            project(
                c.kind,
                &y[..c.rows],
                &self.r[rr.clone()],
                &mut gamma.as_mut_slice()[rr],
                None,
            );
        }
        Ok(gamma)
    }

    /// The step's equations at `v`: the momentum residual `F(v) = A (v − v*) − Jᵀ γ(v)`,
    /// zero at the solution. Errors: `v` of the wrong length.
    pub fn momentum_residual(&self, v: &DVector<f64>) -> Result<DVector<f64>, SolverError> {
        let gamma = self.impulses(v)?;
        let mut out = self.mass_mul(&(v - &self.v_star))?;
        out -= self.jacobian_transpose_mul(&gamma)?;
        Ok(out)
    }

    /// Whether `other` has the same velocities and the same constraints (kinds, with
    /// their parameters free to differ, and row counts) in the same order: the condition
    /// for comparing the two problems' equations at one `v`.
    pub fn same_structure(&self, other: &RegularizedContactProblem) -> bool {
        self.n == other.n
            && self.cons.len() == other.cons.len()
            && self.cons.iter().zip(&other.cons).all(|(a, b)| {
                a.rows == b.rows
                    && std::mem::discriminant(&a.kind) == std::mem::discriminant(&b.kind)
            })
    }

    /// Dense `A` (for tests and small problems).
    pub fn mass_dense(&self) -> DMatrix<f64> {
        let mut m = DMatrix::zeros(self.n, self.n);
        for j in 0..self.n {
            for k in self.a.ptr[j]..self.a.ptr[j + 1] {
                m[(self.a.idx[k], j)] = self.a.val[k];
            }
        }
        m
    }

    /// Dense stacked Jacobian `J` (`num_rows × n`; for tests and small problems).
    pub fn jacobian_dense(&self) -> DMatrix<f64> {
        let mut m = DMatrix::zeros(self.m_rows, self.n);
        for c in &self.cons {
            let k = c.support.len();
            for i in 0..c.rows {
                for (p, &j) in c.support.iter().enumerate() {
                    m[(c.row + i, j)] += c.jd[i * k + p];
                }
            }
        }
        m
    }

    /// The stacked regularization `R` (cone tangential entries averaged, as solved).
    pub fn regularization(&self) -> &[f64] {
        &self.r
    }

    /// The stacked bias velocity `v̂`.
    pub fn bias_velocity(&self) -> &[f64] {
        &self.v_hat
    }

    pub(crate) fn check_len(
        &self,
        x: &DVector<f64>,
        what: &'static str,
    ) -> Result<(), SolverError> {
        if x.len() != self.n {
            return Err(SolverError::DimensionMismatch {
                solver: SOLVER,
                what,
                expected: self.n,
                got: x.len(),
            });
        }
        Ok(())
    }
}
