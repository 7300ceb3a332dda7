//! The impact problem `(M, J_n, J_t, μ, v⁻)` at a frozen configuration q, with the
//! friction-direction discretisation of Halm & Posa §5 (eq. 75): `k` unit directions `D`
//! per contact, `J_D,i = Dᵀ J_t,i`, stacked `J̄ = [J_n; J_D]` and the Delassus matrix
//! `G = J̄ M⁻¹ J̄ᵀ` precomputed once.

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};
use nonsmooth_core::{ContactSnapshot, Dimension};

use crate::{ImpactError, COLLIDING_TOL};

/// A multi-contact impact problem at a frozen configuration (Halm & Posa §3, eqs. 39–40 and
/// the discretisation of §5).
///
/// Rows of `J_D` are ordered contact by contact; for planar problems (one tangent row per
/// contact) the two directions are `+J_t,i, −J_t,i` (the authors' code), for spatial ones
/// (two tangent rows) `k` directions `(cos 2πj/k, sin 2πj/k)` in the tangent plane.
#[derive(Debug, Clone)]
pub struct ImpactProblem {
    /// Mass matrix M (nv × nv, symmetric positive definite).
    pub mass: DMatrix<f64>,
    /// Normal Jacobian J_n (m × nv).
    pub jn: DMatrix<f64>,
    /// Tangent Jacobian J_t ((m·d) × nv), d = `tangent_dim` rows per contact.
    pub jt: DMatrix<f64>,
    /// Tangent rows per contact (1 planar, 2 spatial).
    pub tangent_dim: usize,
    /// Friction coefficients μ_i ≥ 0.
    pub mu: Vec<f64>,
    /// Pre-impact velocity v⁻.
    pub v: DVector<f64>,
    /// Friction directions per contact k.
    pub k: usize,
    /// Discretised friction Jacobian J_D ((m·k) × nv).
    pub jd: DMatrix<f64>,
    /// Stacked `J̄ = [J_n; J_D]` ((m + m·k) × nv).
    pub jbar: DMatrix<f64>,
    /// `M⁻¹ J̄ᵀ` (nv × (m + m·k)).
    pub minv_jbar_t: DMatrix<f64>,
    /// Delassus matrix `G = J̄ M⁻¹ J̄ᵀ`.
    pub delassus: DMatrix<f64>,
    /// Cholesky factor of M.
    chol: Cholesky<f64, Dyn>,
    /// Notes collected while building (e.g. dropped contacts).
    pub notes: Vec<String>,
}

impl ImpactProblem {
    /// Builds the problem from explicit data with the default number of friction
    /// directions (2 planar, 4 spatial).
    ///
    /// # Errors
    /// [`ImpactError::NoContacts`], [`ImpactError::DimensionMismatch`],
    /// [`ImpactError::NonFinite`], [`ImpactError::NegativeFriction`],
    /// [`ImpactError::SingularMass`].
    pub fn new(
        mass: DMatrix<f64>,
        jn: DMatrix<f64>,
        jt: DMatrix<f64>,
        mu: Vec<f64>,
        v: DVector<f64>,
    ) -> Result<Self, ImpactError> {
        let m = jn.nrows();
        let d = if m == 0 { 1 } else { jt.nrows() / m.max(1) };
        let k = if d == 2 { 4 } else { 2 };
        Self::with_directions(mass, jn, jt, mu, v, k)
    }

    /// As [`ImpactProblem::new`] with `k` friction directions per contact (k must be 2 for
    /// planar problems; k ≥ 3 for spatial ones).
    ///
    /// # Errors
    /// As [`ImpactProblem::new`], and [`ImpactError::InvalidOption`] for a bad `k`.
    pub fn with_directions(
        mass: DMatrix<f64>,
        jn: DMatrix<f64>,
        jt: DMatrix<f64>,
        mu: Vec<f64>,
        v: DVector<f64>,
        k: usize,
    ) -> Result<Self, ImpactError> {
        let nv = mass.nrows();
        let m = jn.nrows();
        if m == 0 {
            return Err(ImpactError::NoContacts);
        }
        if mass.ncols() != nv {
            return Err(ImpactError::DimensionMismatch {
                what: "mass matrix columns",
                expected: nv,
                got: mass.ncols(),
            });
        }
        if jn.ncols() != nv {
            return Err(ImpactError::DimensionMismatch {
                what: "J_n columns",
                expected: nv,
                got: jn.ncols(),
            });
        }
        if jt.ncols() != nv {
            return Err(ImpactError::DimensionMismatch {
                what: "J_t columns",
                expected: nv,
                got: jt.ncols(),
            });
        }
        if jt.nrows() != m && jt.nrows() != 2 * m {
            return Err(ImpactError::DimensionMismatch {
                what: "J_t rows (m or 2m)",
                expected: m,
                got: jt.nrows(),
            });
        }
        if v.len() != nv {
            return Err(ImpactError::DimensionMismatch {
                what: "velocity",
                expected: nv,
                got: v.len(),
            });
        }
        if mu.len() != m {
            return Err(ImpactError::DimensionMismatch {
                what: "friction coefficients",
                expected: m,
                got: mu.len(),
            });
        }
        if mass.iter().any(|x| !x.is_finite()) {
            return Err(ImpactError::NonFinite {
                what: "mass matrix",
            });
        }
        if jn.iter().chain(jt.iter()).any(|x| !x.is_finite()) {
            return Err(ImpactError::NonFinite { what: "Jacobians" });
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(ImpactError::NonFinite { what: "velocity" });
        }
        for (i, &x) in mu.iter().enumerate() {
            if !(x.is_finite() && x >= 0.0) {
                return Err(ImpactError::NegativeFriction { contact: i, mu: x });
            }
        }
        let tangent_dim = jt.nrows() / m;
        if (tangent_dim == 1 && k != 2) || (tangent_dim == 2 && k < 3) {
            return Err(ImpactError::InvalidOption {
                what: "friction directions k",
                reason: format!("k = {k} with {tangent_dim} tangent rows per contact"),
            });
        }
        let sym = (&mass + mass.transpose()) * 0.5;
        let chol = Cholesky::new(sym.clone()).ok_or(ImpactError::SingularMass)?;
        // Reject numerically singular M: smallest pivot of L relative to the largest.
        let l = chol.l();
        let diag: Vec<f64> = (0..nv).map(|i| l[(i, i)].abs()).collect();
        let dmax = diag.iter().cloned().fold(0.0, f64::max);
        let dmin = diag.iter().cloned().fold(f64::INFINITY, f64::min);
        if dmin.is_nan() || dmin <= 1e-8 * dmax.max(1e-300) {
            return Err(ImpactError::SingularMass);
        }
        let mut jd = DMatrix::zeros(m * k, nv);
        for i in 0..m {
            for j in 0..k {
                let row = if tangent_dim == 1 {
                    let s = if j == 0 { 1.0 } else { -1.0 };
                    jt.row(i) * s
                } else {
                    let a = 2.0 * std::f64::consts::PI * j as f64 / k as f64;
                    jt.row(2 * i) * a.cos() + jt.row(2 * i + 1) * a.sin()
                };
                jd.set_row(i * k + j, &row);
            }
        }
        let nl = m + m * k;
        let mut jbar = DMatrix::zeros(nl, nv);
        jbar.rows_mut(0, m).copy_from(&jn);
        jbar.rows_mut(m, m * k).copy_from(&jd);
        let minv_jbar_t = chol.solve(&jbar.transpose());
        let mut delassus = &jbar * &minv_jbar_t;
        delassus = (&delassus + delassus.transpose()) * 0.5;
        Ok(Self {
            mass: sym,
            jn,
            jt,
            tangent_dim,
            mu,
            v,
            k,
            jd,
            jbar,
            minv_jbar_t,
            delassus,
            chol,
            notes: Vec::new(),
        })
    }

    /// Builds the problem from a [`ContactSnapshot`]: the contacts whose gap is at most
    /// `margin` are the impact contacts, `v⁻` is the snapshot's velocity. Bilateral and
    /// joint-limit rows are not part of the impact law (a note is recorded if present).
    ///
    /// # Errors
    /// As [`ImpactProblem::new`] ([`ImpactError::NoContacts`] if no contact is within the
    /// margin).
    pub fn from_snapshot(snap: &ContactSnapshot<f64>, margin: f64) -> Result<Self, ImpactError> {
        let active: Vec<usize> = (0..snap.contacts.len())
            .filter(|&i| snap.contacts[i].gap <= margin)
            .collect();
        if active.is_empty() {
            return Err(ImpactError::NoContacts);
        }
        let nv = snap.nv();
        let d = match snap.dimension {
            Dimension::Planar => 1,
            Dimension::Spatial => 2,
        };
        let m = active.len();
        let mut jn = DMatrix::zeros(m, nv);
        let mut jt = DMatrix::zeros(m * d, nv);
        let mut mu = Vec::with_capacity(m);
        for (r, &i) in active.iter().enumerate() {
            let c = &snap.contacts[i];
            jn.set_row(r, &c.rows.normal.transpose());
            if c.rows.tangents.nrows() != d {
                return Err(ImpactError::DimensionMismatch {
                    what: "tangent rows of a snapshot contact",
                    expected: d,
                    got: c.rows.tangents.nrows(),
                });
            }
            jt.rows_mut(r * d, d).copy_from(&c.rows.tangents);
            mu.push(c.friction);
        }
        let mut p = Self::new(snap.mass_matrix.clone(), jn, jt, mu, snap.v.clone())?;
        if !snap.bilateral.is_empty() || !snap.limits.is_empty() {
            p.notes
                .push("bilateral and joint-limit rows are ignored by the impact law".to_string());
        }
        Ok(p)
    }

    /// Number of contacts m.
    pub fn num_contacts(&self) -> usize {
        self.jn.nrows()
    }

    /// Number of velocity coordinates nv.
    pub fn nv(&self) -> usize {
        self.mass.nrows()
    }

    /// `M⁻¹ x`.
    pub fn solve_mass(&self, x: &DVector<f64>) -> DVector<f64> {
        self.chol.solve(x)
    }

    /// Kinetic energy `½ vᵀ M v`.
    pub fn kinetic_energy(&self, v: &DVector<f64>) -> f64 {
        0.5 * v.dot(&(&self.mass * v))
    }

    /// Energy norm `‖v‖_M = √(vᵀ M v)`.
    pub fn m_norm(&self, v: &DVector<f64>) -> f64 {
        (2.0 * self.kinetic_energy(v)).max(0.0).sqrt()
    }

    /// Normal velocities `J_n v`.
    pub fn normal_velocities(&self, v: &DVector<f64>) -> DVector<f64> {
        &self.jn * v
    }

    /// Tangential velocities `J_t v`.
    pub fn tangential_velocities(&self, v: &DVector<f64>) -> DVector<f64> {
        &self.jt * v
    }

    /// Whether `v` is in the colliding set C(q): some `J_n,i v < −tol`.
    pub fn is_colliding(&self, v: &DVector<f64>, tol: f64) -> bool {
        (0..self.num_contacts()).any(|i| self.jn.row(i).dot(&v.transpose()) < -tol)
    }

    /// Whether the pre-impact velocity is colliding with the default tolerance
    /// [`COLLIDING_TOL`].
    pub fn pre_impact_colliding(&self) -> bool {
        self.is_colliding(&self.v, COLLIDING_TOL)
    }

    /// The sub-problem with only the listed contacts (same M and v).
    ///
    /// # Errors
    /// [`ImpactError::NoContacts`] for an empty list, [`ImpactError::DimensionMismatch`] for
    /// an index out of range.
    pub fn restrict(&self, contacts: &[usize]) -> Result<Self, ImpactError> {
        let m = self.num_contacts();
        let d = self.tangent_dim;
        let nv = self.nv();
        if contacts.is_empty() {
            return Err(ImpactError::NoContacts);
        }
        let mut jn = DMatrix::zeros(contacts.len(), nv);
        let mut jt = DMatrix::zeros(contacts.len() * d, nv);
        let mut mu = Vec::new();
        for (r, &i) in contacts.iter().enumerate() {
            if i >= m {
                return Err(ImpactError::DimensionMismatch {
                    what: "contact index",
                    expected: m,
                    got: i,
                });
            }
            jn.set_row(r, &self.jn.row(i));
            jt.rows_mut(r * d, d).copy_from(&self.jt.rows(i * d, d));
            mu.push(self.mu[i]);
        }
        Self::with_directions(self.mass.clone(), jn, jt, mu, self.v.clone(), self.k)
    }

    /// The same problem with another pre-impact velocity.
    ///
    /// # Errors
    /// [`ImpactError::DimensionMismatch`] / [`ImpactError::NonFinite`] for a bad `v`.
    pub fn with_velocity(&self, v: DVector<f64>) -> Result<Self, ImpactError> {
        if v.len() != self.nv() {
            return Err(ImpactError::DimensionMismatch {
                what: "velocity",
                expected: self.nv(),
                got: v.len(),
            });
        }
        if v.iter().any(|x| !x.is_finite()) {
            return Err(ImpactError::NonFinite { what: "velocity" });
        }
        let mut p = self.clone();
        p.v = v;
        Ok(p)
    }

    /// Largest singular value of `M⁻¹ J̄ᵀ` (used by ψ in Algorithm 2).
    pub fn sigma_max_minv_jbar_t(&self) -> f64 {
        self.minv_jbar_t
            .clone()
            .singular_values()
            .iter()
            .cloned()
            .fold(0.0, f64::max)
    }

    /// Smallest eigenvalue σ of M (M ⪰ σI, Theorem 8).
    pub fn mass_sigma_min(&self) -> f64 {
        self.mass
            .clone()
            .symmetric_eigenvalues()
            .iter()
            .cloned()
            .fold(f64::INFINITY, f64::min)
    }
}
