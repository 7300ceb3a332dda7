//! Equality-row elimination (docs/decisions/004-inverse-dynamics.md, common eliminations) and
//! Algorithm 1 (Find-Indices) with an incremental, bordered Cholesky factorization of `X M⁻¹ Xᵀ`.
//!
//! For stacked equality rows `X` with right-hand side `b`, `Y = (X M⁻¹ Xᵀ)⁻¹`,
//! `M̃⁻¹ = M⁻¹ − M⁻¹XᵀYXM⁻¹` and `v̂ = v* − M⁻¹XᵀY(Xv* − b)`; the impulse of any contact
//! generalized impulse `g` then gives `v⁺ = v̂ + M̃⁻¹g` and the row multipliers
//! `λ = Y(b − Xv* − XM⁻¹g)`. With `X M⁻¹ Xᵀ = L Lᵀ` and `Z = L⁻¹ X M⁻¹`:
//! `M̃⁻¹ = M⁻¹ − ZᵀZ`, `v̂ = v* + Zᵀc` with `c = L⁻¹(b − Xv*)`, and `λ = L⁻ᵀ(c − Z g)`.

use nalgebra::{DMatrix, DVector};

use crate::error::ControlError;
use crate::problem::IdProblem;
use crate::Variant;

/// Threshold of the actuator rows: an actuator row is independent if its pivot exceeds
/// `INDEPENDENCE_TOL` times its own `x M⁻¹ xᵀ` (the authors' code subtracts √ε ≈ 1.5e-8 from
/// the diagonal before the Cholesky test). Also the test that a tangent row is not already
/// fixed by the actuator rows alone.
pub const INDEPENDENCE_TOL: f64 = 1e-8;

/// Threshold of Algorithm 1 for the tangent rows, relative and scale-invariant: a tangent row
/// `x` is kept only if its Schur complement after the rows kept so far exceeds
/// `SCHUR_TOL` times its Schur complement after the actuator rows alone, `x M̃_P⁻¹ xᵀ`
/// (the squared sine of the angle between `x` and the kept rows in the `M̃_P⁻¹` metric
/// exceeds 1e-6, i.e. an angle above 1 mrad). See [`Elimination::build`].
pub const SCHUR_TOL: f64 = 1e-6;

/// Which equality row of `X` a multiplier belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowLabel {
    /// Actuator row of P.
    Actuator(usize),
    /// Tangent row `dir` of contact `contact` (no-slip constraint).
    Tangent {
        /// Contact index.
        contact: usize,
        /// Tangent index (0 = ŝ, 1 = t̂).
        dir: usize,
    },
}

/// The factorized elimination of a set of independent equality rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Elimination {
    /// Labels of the accepted rows, in order (actuator rows first).
    pub labels: Vec<RowLabel>,
    /// `L` (k × k lower triangular) with `L Lᵀ = X M⁻¹ Xᵀ`.
    l: DMatrix<f64>,
    /// `Z = L⁻¹ X M⁻¹` (k × m).
    z: DMatrix<f64>,
    /// `c = L⁻¹(b − X v*)`.
    c: DVector<f64>,
    /// `M̃⁻¹` (m × m, symmetric PSD).
    pub mt: DMatrix<f64>,
    /// `v̂` (length m).
    pub vhat: DVector<f64>,
}

impl Elimination {
    /// Algorithm 1 generalized: starts from the actuator rows P with right-hand side
    /// `qdes` (if given), then, if `tangents`, adds the contacts' tangent rows (ŝᵢ, t̂ᵢ) by
    /// a bordered Cholesky update costing O(m² + km) per row (paper: O(m³ + nm²) in total).
    /// `vstar` is the free velocity to eliminate against.
    ///
    /// Tangent-row selection (pivoted, scale-invariant): every candidate `x` is measured by
    /// its Schur complement after the rows kept so far, `s(x) = x M⁻¹ xᵀ − ‖L⁻¹ X M⁻¹ xᵀ‖²`,
    /// relative to its Schur complement after the actuator rows alone, `s_P(x) = x M̃_P⁻¹ xᵀ`
    /// (for X = P, `M̃_P⁻¹` is the inverse inertia with the actuated joints held). Each round
    /// keeps the candidate with the largest ratio `s/s_P` (the squared sine of its angle to
    /// the kept rows in the `M̃_P⁻¹` metric), until every remaining ratio is at most
    /// `SCHUR_TOL` (10⁻⁶); candidates with `s_P ≤ INDEPENDENCE_TOL · x M⁻¹ xᵀ` (fixed by the
    /// actuators alone) are never kept. This is the diagonal-pivoting rule of a rank-revealing
    /// Cholesky factorization (Golub & Van Loan §4.2.8) applied to the tangent block of
    /// `X M⁻¹ Xᵀ` after the actuator rows. Why not the paper's first-come test against the
    /// row's full `x M⁻¹ xᵀ`: on a light body (a 0.05 kg finger on a 1.3 kg box) `x M⁻¹ xᵀ`
    /// is dominated by the finger's inertia, which the actuator rows eliminate anyway, so a
    /// near-duplicate row (the x-tangents of two fingertips on one box face, σ_min of the kept
    /// box rows 1.1e-5) passed the test and the no-slip LCP predicted a ±1.66e5 N internal
    /// pair (docs/grasping.md). Ties keep the contact order.
    ///
    /// # Errors
    /// [`ControlError::InvalidInput`] if the actuator rows are linearly dependent.
    pub fn build(
        problem: &IdProblem,
        vstar: &DVector<f64>,
        qdes: Option<&DVector<f64>>,
        tangents: bool,
    ) -> Result<Self, ControlError> {
        let m = problem.nv();
        let minv = problem.mass_inverse();
        if let (Some(qdes), false) = (qdes, tangents) {
            return Self::actuators_only(problem, vstar, qdes);
        }
        let mut b = Builder {
            l: DMatrix::zeros(m, m),
            z: DMatrix::zeros(m, m),
            c: DVector::zeros(m),
            k: 0,
            labels: Vec::with_capacity(m),
        };
        if let Some(qdes) = qdes {
            let p = problem.selection();
            for a in 0..p.nrows() {
                let x = p.row(a).transpose();
                let accepted = match b.schur(minv, &x) {
                    Some(row) if row.s > INDEPENDENCE_TOL * row.d => {
                        b.push(vstar, &x, row, qdes[a], RowLabel::Actuator(a));
                        true
                    }
                    _ => false,
                };
                if !accepted {
                    return Err(ControlError::InvalidInput(format!(
                        "actuator {a} acts on a DOF already actuated (P is rank deficient)"
                    )));
                }
            }
        }
        if tangents {
            // Candidates with their Schur data after P (M⁻¹x and x M⁻¹ xᵀ are reused in every
            // round; `s` is the reference scale s_P).
            let mut cands: Vec<(DVector<f64>, SchurRow, RowLabel)> = Vec::new();
            for (i, c) in problem.contacts().iter().enumerate() {
                for j in 0..c.tangent_rows.nrows() {
                    let x = c.tangent_rows.row(j).transpose();
                    if let Some(row) = b.schur(minv, &x) {
                        if row.s > INDEPENDENCE_TOL * row.d {
                            let label = RowLabel::Tangent { contact: i, dir: j };
                            cands.push((x, row, label));
                        }
                    }
                }
            }
            while b.k < m && !cands.is_empty() {
                let mut best: Option<(usize, f64, SchurRow)> = None;
                for (idx, (x, at_p, _)) in cands.iter().enumerate() {
                    if let Some(row) = b.schur_of(x, at_p.y.clone(), at_p.d) {
                        let ratio = row.s / at_p.s;
                        if ratio > SCHUR_TOL && best.as_ref().is_none_or(|(_, r, _)| ratio > *r) {
                            best = Some((idx, ratio, row));
                        }
                    }
                }
                let Some((idx, _, row)) = best else { break };
                let (x, _, label) = cands.remove(idx);
                b.push(vstar, &x, row, 0.0, label);
            }
        }
        let k = b.k;
        let l = b.l.view((0, 0), (k, k)).into_owned();
        let z = b.z.rows(0, k).into_owned();
        let c = b.c.rows(0, k).into_owned();
        let mut mt = minv - z.transpose() * &z;
        mt = (&mt + mt.transpose()) * 0.5;
        let vhat = vstar + z.transpose() * &c;
        Ok(Self {
            labels: b.labels,
            l,
            z,
            c,
            mt,
            vhat,
        })
    }

    /// [`Elimination::build`] with the actuator rows alone (X = P, b = q̇_des), as one dense
    /// Cholesky of `P M⁻¹ Pᵀ` instead of row-by-row bordering (the same factor in the same
    /// row order; the same independence test on each pivot, `L_aa² > INDEPENDENCE_TOL ·
    /// (P M⁻¹ Pᵀ)_aa`).
    fn actuators_only(
        problem: &IdProblem,
        vstar: &DVector<f64>,
        qdes: &DVector<f64>,
    ) -> Result<Self, ControlError> {
        let p = problem.selection();
        let minv = problem.mass_inverse();
        let nu = p.nrows();
        let a = p * minv;
        let gram = &a * p.transpose();
        let mut l = DMatrix::zeros(nu, nu);
        for j in 0..nu {
            let mut d = gram[(j, j)];
            for k in 0..j {
                d -= l[(j, k)] * l[(j, k)];
            }
            if !(d.is_finite() && d > INDEPENDENCE_TOL * gram[(j, j)]) {
                return Err(ControlError::InvalidInput(format!(
                    "actuator {j} acts on a DOF already actuated (P is rank deficient)"
                )));
            }
            let ljj = d.sqrt();
            l[(j, j)] = ljj;
            for i in j + 1..nu {
                let mut v = gram[(i, j)];
                for k in 0..j {
                    v -= l[(i, k)] * l[(j, k)];
                }
                l[(i, j)] = v / ljj;
            }
        }
        let mut z = a;
        let mut c = qdes - p * vstar;
        if nu > 0 {
            l.solve_lower_triangular_mut(&mut z);
            l.solve_lower_triangular_mut(&mut c);
        }
        let mut mt = minv - z.tr_mul(&z);
        mt = (&mt + mt.transpose()) * 0.5;
        let vhat = vstar + z.tr_mul(&c);
        Ok(Self {
            labels: (0..nu).map(RowLabel::Actuator).collect(),
            l,
            z,
            c,
            mt,
            vhat,
        })
    }

    /// Number of eliminated rows.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether no row was eliminated.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The row multipliers `λ = Y(b − Xv* − XM⁻¹g)` for a contact generalized impulse `g`
    /// (for actuator rows: the actuator impulses τ; for tangent rows: the no-slip friction
    /// impulses).
    pub fn multipliers(&self, g: &DVector<f64>) -> DVector<f64> {
        let rhs = &self.c - &self.z * g;
        self.solve_lt(rhs)
    }

    /// The linear map `g ↦ −Y X M⁻¹ g` applied to the columns of `g_cols`: `−L⁻ᵀ Z G`.
    pub fn multiplier_map(&self, g_cols: &DMatrix<f64>) -> DMatrix<f64> {
        let mut out = -(&self.z * g_cols);
        if self.l.nrows() > 0 {
            self.l.tr_solve_lower_triangular_mut(&mut out);
        }
        out
    }

    /// The constant part `Y(b − Xv*)` of the multipliers.
    pub fn multipliers_free(&self) -> DVector<f64> {
        self.solve_lt(self.c.clone())
    }

    fn solve_lt(&self, mut rhs: DVector<f64>) -> DVector<f64> {
        if self.l.nrows() > 0 {
            self.l.tr_solve_lower_triangular_mut(&mut rhs);
        }
        rhs
    }
}

/// Bordered Cholesky builder.
struct Builder {
    l: DMatrix<f64>,
    z: DMatrix<f64>,
    c: DVector<f64>,
    k: usize,
    labels: Vec<RowLabel>,
}

/// A candidate row's Schur-complement data against the rows kept so far.
struct SchurRow {
    /// `M⁻¹ x`.
    y: DVector<f64>,
    /// `x M⁻¹ xᵀ`.
    d: f64,
    /// `Z x` (the new row of L without its diagonal).
    lvec: DVector<f64>,
    /// The Schur complement `d − ‖Z x‖²`.
    s: f64,
}

impl Builder {
    /// The Schur complement of `x` after the rows kept so far (`None` if no room is left or
    /// the numbers are not finite).
    fn schur(&self, minv: &DMatrix<f64>, x: &DVector<f64>) -> Option<SchurRow> {
        let y = minv * x;
        let d = x.dot(&y);
        self.schur_of(x, y, d)
    }

    /// [`Builder::schur`] with `y = M⁻¹ x` and `d = x M⁻¹ xᵀ` already known.
    fn schur_of(&self, x: &DVector<f64>, y: DVector<f64>, d: f64) -> Option<SchurRow> {
        let k = self.k;
        if k >= self.l.nrows() || !d.is_finite() || d <= 0.0 {
            return None;
        }
        let lvec = self.z.rows(0, k) * x;
        let s = d - lvec.norm_squared();
        if !s.is_finite() {
            return None;
        }
        Some(SchurRow { y, d, lvec, s })
    }

    /// Appends the row `x` (right-hand side `rhs`) with its Schur data `row` (`row.s > 0`).
    fn push(
        &mut self,
        vstar: &DVector<f64>,
        x: &DVector<f64>,
        row: SchurRow,
        rhs: f64,
        label: RowLabel,
    ) {
        let k = self.k;
        let zk = self.z.rows(0, k);
        let sq = row.s.sqrt();
        let newz = (row.y - zk.transpose() * &row.lvec) / sq;
        let cnew = (rhs - x.dot(vstar) - row.lvec.dot(&self.c.rows(0, k))) / sq;
        for j in 0..k {
            self.l[(k, j)] = row.lvec[j];
        }
        self.l[(k, k)] = sq;
        self.z.row_mut(k).copy_from(&newz.transpose());
        self.c[k] = cnew;
        self.k += 1;
        self.labels.push(label);
    }
}

/// Algorithm 1 (Find-Indices) for the no-slip ID: the independent tangent rows `(𝒮, 𝒯)`
/// kept next to P, as `(contact, dir)` pairs in order.
///
/// # Errors
/// As [`Elimination::build`].
pub fn find_indices(
    problem: &IdProblem,
    qdes: &DVector<f64>,
) -> Result<Vec<(usize, usize)>, ControlError> {
    let e = Elimination::build(problem, problem.free_velocity(), Some(qdes), true)?;
    Ok(e.labels
        .iter()
        .filter_map(|l| match l {
            RowLabel::Tangent { contact, dir } => Some((*contact, *dir)),
            RowLabel::Actuator(_) => None,
        })
        .collect())
}

/// Tolerance scale of the realizability test.
const REALIZABLE_TOL: f64 = 1e-9;

/// Erratum E15: a contact row whose normal velocity is fixed by the prescribed joints
/// (`Nᵢ M̃⁻¹ = 0`, M̃⁻¹ of the elimination of P) and would penetrate faster than φ/Δt allows
/// makes every variant infeasible; for the no-slip LCP the same holds for a tangent row with
/// `Tᵢ M̃⁻¹ = 0` and non-zero prescribed slip.
pub(crate) fn check_realizable(
    problem: &IdProblem,
    elim: &Elimination,
    variant: Variant,
) -> Result<(), ControlError> {
    let scale = problem.mass_inverse().amax().max(1e-300);
    let vscale = 1.0 + elim.vhat.amax();
    for (i, c) in problem.contacts().iter().enumerate() {
        let coupled = |row: nalgebra::DVectorView<f64>| {
            (&elim.mt * row).amax() > REALIZABLE_TOL * scale * row.amax().max(1e-300)
        };
        if !coupled(c.normal_row.column(0)) {
            let w = c.normal_row.dot(&elim.vhat) + c.gap / problem.dt();
            if w < -REALIZABLE_TOL * vscale * c.normal_row.amax().max(1.0) {
                return Err(ControlError::InfeasibleDesired {
                    variant: variant.name(),
                    reason: format!(
                        "contact {i}: its normal velocity is fixed by the actuated joints \
                         (N_i M~^-1 = 0) and the desired motion gives N_i v + phi/dt = {w:e} < 0"
                    ),
                });
            }
        }
        if variant == Variant::LcpNoSlip {
            for j in 0..c.tangent_rows.nrows() {
                let row = c.tangent_rows.row(j).transpose();
                if !coupled(row.column(0)) {
                    let s = row.dot(&elim.vhat);
                    if s.abs() > REALIZABLE_TOL * vscale * row.amax().max(1.0) {
                        return Err(ControlError::InfeasibleDesired {
                            variant: variant.name(),
                            reason: format!(
                                "contact {i}: tangent {j} velocity is fixed by the actuated \
                                 joints and the desired motion slips ({s:e}) under no slip"
                            ),
                        });
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::ContactRow;

    /// A 1.3 kg box with two planar DOF (b₁, b₂) held by two actuated 0.05 kg fingers
    /// (f₁, f₂); contact `i` has one tangent row with the given box part and −1 on its
    /// finger (the fingers alternate).
    fn grasp(box_parts: &[[f64; 2]]) -> IdProblem {
        let mass = DMatrix::from_diagonal(&DVector::from_vec(vec![1.3, 1.3, 0.05, 0.05]));
        let mut act = DMatrix::zeros(4, 2);
        act[(2, 0)] = 1.0;
        act[(3, 1)] = 1.0;
        let contacts = box_parts
            .iter()
            .enumerate()
            .map(|(i, bp)| {
                let mut t = DMatrix::zeros(1, 4);
                t[(0, 0)] = bp[0];
                t[(0, 1)] = bp[1];
                t[(0, 2 + i % 2)] = -1.0;
                ContactRow {
                    normal_row: DVector::from_vec(vec![0.0, 1.0, 0.0, 0.0]),
                    tangent_rows: t,
                    friction: 1.0,
                    gap: 0.0,
                }
            })
            .collect();
        IdProblem::from_parts(
            mass,
            DVector::zeros(4),
            act,
            DVector::zeros(4),
            contacts,
            1e-3,
        )
        .unwrap()
    }

    #[test]
    fn near_duplicate_tangent_row_on_a_light_finger_is_rejected() {
        // Box parts (1, 0) and (1, 7e-4): an angle of 0.7 mrad. The old test (Schur
        // complement 3.8e-7 against 1e-8 · x M⁻¹ xᵀ = 2.1e-7, dominated by the finger's
        // 1/0.05) kept both; relative to the box's own 1/1.3 the pair is dependent.
        let p = grasp(&[[1.0, 0.0], [1.0, 7e-4]]);
        let qdes = DVector::zeros(2);
        assert_eq!(find_indices(&p, &qdes).unwrap(), vec![(0, 0)]);
        // A clearly independent pair is kept.
        let p = grasp(&[[1.0, 0.0], [1.0, 0.5]]);
        assert_eq!(find_indices(&p, &qdes).unwrap(), vec![(0, 0), (1, 0)]);
    }

    #[test]
    fn pivoting_prefers_the_independent_row_over_a_near_duplicate() {
        // Rows 0 and 1 are 10 mrad apart, row 2 is orthogonal to both; only two fit (the
        // box has two DOF). First-come order would keep 0 and 1 (σ_min ≈ 7e-3); the pivoted
        // selection keeps 0 and 2.
        let p = grasp(&[[1.0, 0.0], [1.0, 0.01], [0.0, 1.0]]);
        let qdes = DVector::zeros(2);
        assert_eq!(find_indices(&p, &qdes).unwrap(), vec![(0, 0), (2, 0)]);
        let e = Elimination::build(&p, p.free_velocity(), Some(&qdes), true).unwrap();
        assert_eq!(e.len(), 4);
        // The kept rows hold: the tangent velocities of contacts 0 and 2 vanish at v̂.
        for i in [0, 2] {
            let v = (&p.contacts()[i].tangent_rows * &e.vhat)[0];
            assert!(v.abs() < 1e-12, "contact {i}: {v}");
        }
    }
}
