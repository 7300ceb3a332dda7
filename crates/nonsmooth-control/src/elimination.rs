//! Equality-row elimination (digest §3.0) and Algorithm 1 (Find-Indices) with an
//! incremental, bordered Cholesky factorization of `X M⁻¹ Xᵀ`.
//!
//! For stacked equality rows `X` with right-hand side `b`, `Y = (X M⁻¹ Xᵀ)⁻¹`,
//! `M̃⁻¹ = M⁻¹ − M⁻¹XᵀYXM⁻¹` and `v̂ = v* − M⁻¹XᵀY(Xv* − b)`; the impulse of any contact
//! generalized impulse `g` then gives `v⁺ = v̂ + M̃⁻¹g` and the row multipliers
//! `λ = Y(b − Xv* − XM⁻¹g)`. With `X M⁻¹ Xᵀ = L Lᵀ` and `Z = L⁻¹ X M⁻¹`:
//! `M̃⁻¹ = M⁻¹ − ZᵀZ`, `v̂ = v* + Zᵀc` with `c = L⁻¹(b − Xv*)`, and `λ = L⁻ᵀ(c − Z g)`.

use nalgebra::{DMatrix, DVector};

use crate::error::ControlError;
use crate::problem::IdProblem;

/// Relative Schur-complement threshold of Algorithm 1: a row is independent if its pivot
/// exceeds `INDEPENDENCE_TOL` times its own `x M⁻¹ xᵀ` (the authors' code subtracts
/// √ε ≈ 1.5e-8 from the diagonal before the Cholesky test).
pub const INDEPENDENCE_TOL: f64 = 1e-8;

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
    /// `qdes` (if given), then, if `tangents`, tries every contact's tangent rows in order
    /// (ŝᵢ, then t̂ᵢ) and keeps those that leave `X M⁻¹ Xᵀ` non-singular, by a bordered
    /// Cholesky update costing O(m² + km) per row (paper: O(m³ + nm²) in total).
    /// `vstar` is the free velocity to eliminate against.
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
                if !b.try_add(minv, vstar, &x, qdes[a], RowLabel::Actuator(a)) {
                    return Err(ControlError::InvalidInput(format!(
                        "actuator {a} acts on a DOF already actuated (P is rank deficient)"
                    )));
                }
            }
        }
        if tangents {
            for (i, c) in problem.contacts().iter().enumerate() {
                for j in 0..c.tangent_rows.nrows() {
                    if b.k == m {
                        break;
                    }
                    let x = c.tangent_rows.row(j).transpose();
                    b.try_add(
                        minv,
                        vstar,
                        &x,
                        0.0,
                        RowLabel::Tangent { contact: i, dir: j },
                    );
                }
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

impl Builder {
    fn try_add(
        &mut self,
        minv: &DMatrix<f64>,
        vstar: &DVector<f64>,
        x: &DVector<f64>,
        rhs: f64,
        label: RowLabel,
    ) -> bool {
        let k = self.k;
        if k >= self.l.nrows() {
            return false;
        }
        let y = minv * x;
        let d = x.dot(&y);
        if d.is_nan() || d <= 0.0 {
            return false;
        }
        let zk = self.z.rows(0, k);
        let lvec = zk * x;
        let s = d - lvec.norm_squared();
        if s.is_nan() || s <= INDEPENDENCE_TOL * d {
            return false;
        }
        let sq = s.sqrt();
        let newz = (y - zk.transpose() * &lvec) / sq;
        let cnew = (rhs - x.dot(vstar) - lvec.dot(&self.c.rows(0, k))) / sq;
        for j in 0..k {
            self.l[(k, j)] = lvec[j];
        }
        self.l[(k, k)] = sq;
        self.z.row_mut(k).copy_from(&newz.transpose());
        self.c[k] = cnew;
        self.k += 1;
        self.labels.push(label);
        true
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
