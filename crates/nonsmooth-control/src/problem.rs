//! [`IdProblem`]: the dynamics and contact data of one inverse-dynamics call.

use nalgebra::{DMatrix, DVector, Vector3};
use nonsmooth_core::dynamics::{kinematics, point_jacobian};
use nonsmooth_core::geometry::tangent_basis;
use nonsmooth_core::{BodyId, ContactSnapshot, Model};

use crate::error::ControlError;

/// One contact as Jacobian rows (paper Appendix B: row i of N is `(Jᵢᵀ[n̂; r × n̂])ᵀ`).
#[derive(Debug, Clone, PartialEq)]
pub struct ContactRow {
    /// Generalized normal row (length nv): φ̇ = normal_row · v.
    pub normal_row: DVector<f64>,
    /// Tangent rows (ntan × nv), ntan = 2 in spatial models, 1 in planar ones.
    pub tangent_rows: DMatrix<f64>,
    /// Coulomb friction coefficient μ ≥ 0 (ignored by the no-slip variants).
    pub friction: f64,
    /// Signed gap φ at t₀ (enters as the stabilization term φ/Δt, eqs 35–36).
    pub gap: f64,
}

/// An explicit contact of a robot body against the static world: the API's alternative to
/// a [`ContactSnapshot`] (e.g. a planned stance foot).
#[derive(Debug, Clone, PartialEq)]
pub struct ContactSpec {
    /// The robot body touching the world.
    pub body: BodyId,
    /// Contact point in world coordinates.
    pub point: Vector3<f64>,
    /// Normal from the world toward the body (normalized here; must be non-zero).
    pub normal: Vector3<f64>,
    /// Friction coefficient μ ≥ 0.
    pub friction: f64,
    /// Signed gap φ.
    pub gap: f64,
}

/// The desired motion of the actuated DOF.
#[derive(Debug, Clone, PartialEq)]
pub enum Desired {
    /// q̈_des (length nu); the target is `q̇_des = P v⁻ + Δt q̈_des` (eq 39).
    Acceleration(DVector<f64>),
    /// q̇_des = P v⁺ directly (eq 38).
    Velocity(DVector<f64>),
}

/// The data of one call: M, f_ext, Pᵀ, v⁻, the contacts and Δt, with M⁻¹ and v* cached.
#[derive(Debug, Clone, PartialEq)]
pub struct IdProblem {
    mass: DMatrix<f64>,
    minv: DMatrix<f64>,
    forces: DVector<f64>,
    actuation: DMatrix<f64>,
    p: DMatrix<f64>,
    v: DVector<f64>,
    vstar: DVector<f64>,
    contacts: Vec<ContactRow>,
    ntan: usize,
    dt: f64,
}

fn check_vec(what: &'static str, x: &DVector<f64>, n: usize) -> Result<(), ControlError> {
    if x.len() != n {
        return Err(ControlError::DimensionMismatch {
            what,
            expected: n,
            got: x.len(),
        });
    }
    if let Some(i) = x.iter().position(|x| !x.is_finite()) {
        return Err(ControlError::NonFinite {
            what: format!("{what}[{i}]"),
        });
    }
    Ok(())
}

impl IdProblem {
    /// Builds the problem from raw data: M (nv × nv, SPD), f_ext, Pᵀ (nv × nu), v⁻, the
    /// contact rows and Δt.
    ///
    /// # Errors
    /// [`ControlError::NoActuators`] if nu = 0; [`ControlError::DimensionMismatch`] /
    /// [`ControlError::NonFinite`] for malformed data; [`ControlError::InvalidInput`] for
    /// Δt ≤ 0, μ < 0, inconsistent tangent counts or an M that is not positive definite.
    pub fn from_parts(
        mass: DMatrix<f64>,
        forces: DVector<f64>,
        actuation: DMatrix<f64>,
        v: DVector<f64>,
        contacts: Vec<ContactRow>,
        dt: f64,
    ) -> Result<Self, ControlError> {
        let m = mass.nrows();
        if mass.ncols() != m {
            return Err(ControlError::DimensionMismatch {
                what: "columns of M",
                expected: m,
                got: mass.ncols(),
            });
        }
        if actuation.ncols() == 0 {
            return Err(ControlError::NoActuators);
        }
        if actuation.nrows() != m {
            return Err(ControlError::DimensionMismatch {
                what: "rows of the actuation matrix",
                expected: m,
                got: actuation.nrows(),
            });
        }
        if mass.iter().chain(actuation.iter()).any(|x| !x.is_finite()) {
            return Err(ControlError::NonFinite {
                what: "M or the actuation matrix".into(),
            });
        }
        check_vec("f_ext", &forces, m)?;
        check_vec("v", &v, m)?;
        if !(dt.is_finite() && dt > 0.0) {
            return Err(ControlError::InvalidInput(format!(
                "dt must be positive and finite, got {dt}"
            )));
        }
        let ntan = contacts.first().map_or(2, |c| c.tangent_rows.nrows());
        for (i, c) in contacts.iter().enumerate() {
            check_vec("contact normal row", &c.normal_row, m)?;
            if c.tangent_rows.ncols() != m || c.tangent_rows.nrows() != ntan {
                return Err(ControlError::InvalidInput(format!(
                    "contact {i}: tangent rows are {}×{}, expected {ntan}×{m}",
                    c.tangent_rows.nrows(),
                    c.tangent_rows.ncols()
                )));
            }
            if c.tangent_rows.iter().any(|x| !x.is_finite()) || !c.gap.is_finite() {
                return Err(ControlError::NonFinite {
                    what: format!("contact {i}"),
                });
            }
            if c.friction.is_nan() || c.friction < 0.0 {
                return Err(ControlError::InvalidInput(format!(
                    "contact {i}: friction must be ≥ 0, got {}",
                    c.friction
                )));
            }
        }
        let chol = mass.clone().cholesky().ok_or_else(|| {
            ControlError::InvalidInput("mass matrix is not positive definite".into())
        })?;
        let minv = chol.inverse();
        let minv = (&minv + minv.transpose()) * 0.5;
        let vstar = &v + &minv * &forces * dt;
        let p = actuation.transpose();
        Ok(Self {
            mass,
            minv,
            forces,
            actuation,
            p,
            v,
            vstar,
            contacts,
            ntan,
            dt,
        })
    }

    /// Builds the problem from a [`ContactSnapshot`]: every contact of the snapshot (those
    /// with gap ≤ the model's contact margin) with its normal row, tangent rows and μ.
    ///
    /// # Errors
    /// As [`IdProblem::from_parts`].
    pub fn from_snapshot(snap: &ContactSnapshot<f64>, dt: f64) -> Result<Self, ControlError> {
        let contacts = snap
            .contacts
            .iter()
            .map(|c| ContactRow {
                normal_row: c.rows.normal.clone(),
                tangent_rows: c.rows.tangents.clone(),
                friction: c.friction,
                gap: c.gap,
            })
            .collect();
        Self::from_parts(
            snap.mass_matrix.clone(),
            snap.forces.clone(),
            snap.actuation.clone(),
            snap.v.clone(),
            contacts,
            dt,
        )
    }

    /// Snapshot of `model` at (q, v) followed by [`IdProblem::from_snapshot`].
    ///
    /// # Errors
    /// [`ControlError::Model`] for a state the model rejects; as
    /// [`IdProblem::from_parts`].
    pub fn from_state(
        model: &Model,
        q: &DVector<f64>,
        v: &DVector<f64>,
        dt: f64,
    ) -> Result<Self, ControlError> {
        if model.nu() == 0 {
            return Err(ControlError::NoActuators);
        }
        let snap = ContactSnapshot::new(model, q, v, 0.0)?;
        Self::from_snapshot(&snap, dt)
    }

    /// Like [`IdProblem::from_state`] but with an explicit contact list (robot body against
    /// the static world) instead of the detected contacts.
    ///
    /// # Errors
    /// [`ControlError::UnknownBody`] for a body index out of range,
    /// [`ControlError::InvalidInput`] for a zero normal or negative μ, and as
    /// [`IdProblem::from_state`].
    pub fn with_contacts(
        model: &Model,
        q: &DVector<f64>,
        v: &DVector<f64>,
        contacts: &[ContactSpec],
        dt: f64,
    ) -> Result<Self, ControlError> {
        if model.nu() == 0 {
            return Err(ControlError::NoActuators);
        }
        for (i, c) in contacts.iter().enumerate() {
            if c.body >= model.bodies.len() {
                return Err(ControlError::UnknownBody {
                    contact: i,
                    body: c.body,
                    bodies: model.bodies.len(),
                });
            }
            if c.point
                .iter()
                .chain(c.normal.iter())
                .any(|x| !x.is_finite())
            {
                return Err(ControlError::NonFinite {
                    what: format!("contact {i}"),
                });
            }
            if c.normal.norm() < 1e-12 {
                return Err(ControlError::InvalidInput(format!(
                    "contact {i}: zero normal"
                )));
            }
        }
        let snap = ContactSnapshot::new(model, q, v, 0.0)?;
        let kin = kinematics(model, q, v);
        let rows = contacts
            .iter()
            .map(|c| {
                let n = c.normal.normalize();
                let jac = point_jacobian(model, &kin, Some(c.body), &c.point);
                let tangents = tangent_basis(model.dimension, &n);
                let mut t = DMatrix::zeros(tangents.len(), model.nv());
                for (j, tj) in tangents.iter().enumerate() {
                    t.row_mut(j).copy_from(&(tj.transpose() * &jac));
                }
                ContactRow {
                    normal_row: (n.transpose() * &jac).transpose(),
                    tangent_rows: t,
                    friction: c.friction,
                    gap: c.gap,
                }
            })
            .collect();
        Self::from_parts(
            snap.mass_matrix,
            snap.forces,
            snap.actuation,
            v.clone(),
            rows,
            dt,
        )
    }

    /// The same problem with other contact rows (e.g. duplicated contacts for timing).
    ///
    /// # Errors
    /// As [`IdProblem::from_parts`].
    pub fn with_contact_rows(&self, contacts: Vec<ContactRow>) -> Result<Self, ControlError> {
        Self::from_parts(
            self.mass.clone(),
            self.forces.clone(),
            self.actuation.clone(),
            self.v.clone(),
            contacts,
            self.dt,
        )
    }

    /// The same problem with its contacts repeated cyclically up to `count` rows (the
    /// paper's Fig. 19 timing setup: duplicated, hence indeterminate, contacts).
    ///
    /// # Errors
    /// As [`IdProblem::from_parts`]; `count > 0` needs at least one contact.
    pub fn with_contacts_cycled(&self, count: usize) -> Result<Self, ControlError> {
        let rows = self.contacts.iter().cycle().take(count).cloned().collect();
        self.with_contact_rows(rows)
    }

    /// Number of contacts n.
    pub fn num_contacts(&self) -> usize {
        self.contacts.len()
    }

    /// Number of generalized velocities m.
    pub fn nv(&self) -> usize {
        self.mass.nrows()
    }

    /// Number of actuators nu.
    pub fn nu(&self) -> usize {
        self.actuation.ncols()
    }

    /// Tangents per contact (2 spatial, 1 planar); the pyramid has k = 2·ntan edges.
    pub fn ntan(&self) -> usize {
        self.ntan
    }

    /// The control period Δt.
    pub fn dt(&self) -> f64 {
        self.dt
    }

    /// The contacts.
    pub fn contacts(&self) -> &[ContactRow] {
        &self.contacts
    }

    /// M.
    pub fn mass_matrix(&self) -> &DMatrix<f64> {
        &self.mass
    }

    /// M⁻¹.
    pub fn mass_inverse(&self) -> &DMatrix<f64> {
        &self.minv
    }

    /// f_ext.
    pub fn forces(&self) -> &DVector<f64> {
        &self.forces
    }

    /// Pᵀ (nv × nu).
    pub fn actuation(&self) -> &DMatrix<f64> {
        &self.actuation
    }

    /// P (nu × nv).
    pub fn selection(&self) -> &DMatrix<f64> {
        &self.p
    }

    /// v⁻.
    pub fn velocity(&self) -> &DVector<f64> {
        &self.v
    }

    /// The free velocity v* = v⁻ + Δt M⁻¹ f_ext.
    pub fn free_velocity(&self) -> &DVector<f64> {
        &self.vstar
    }

    /// N (n × m).
    pub fn normal_matrix(&self) -> DMatrix<f64> {
        let mut n = DMatrix::zeros(self.contacts.len(), self.nv());
        for (i, c) in self.contacts.iter().enumerate() {
            n.row_mut(i).copy_from(&c.normal_row.transpose());
        }
        n
    }

    /// Tangent matrix of direction `j` (n × m): row i is contact i's j-th tangent row.
    pub fn tangent_matrix(&self, j: usize) -> DMatrix<f64> {
        let mut t = DMatrix::zeros(self.contacts.len(), self.nv());
        for (i, c) in self.contacts.iter().enumerate() {
            t.row_mut(i).copy_from(&c.tangent_rows.row(j));
        }
        t
    }

    /// F = [T₁; −T₁; T₂; −T₂] (nk × m, direction blocks; k = 2·ntan).
    pub fn friction_matrix(&self) -> DMatrix<f64> {
        let n = self.contacts.len();
        let mut f = DMatrix::zeros(2 * self.ntan * n, self.nv());
        for j in 0..self.ntan {
            let t = self.tangent_matrix(j);
            f.rows_mut(2 * j * n, n).copy_from(&t);
            f.rows_mut((2 * j + 1) * n, n).copy_from(&(-t));
        }
        f
    }

    /// μ per contact.
    pub fn friction(&self) -> DVector<f64> {
        DVector::from_iterator(
            self.contacts.len(),
            self.contacts.iter().map(|c| c.friction),
        )
    }

    /// φ per contact.
    pub fn gaps(&self) -> DVector<f64> {
        DVector::from_iterator(self.contacts.len(), self.contacts.iter().map(|c| c.gap))
    }

    /// Converts a [`Desired`] into the next-step target q̇_des (eq 39).
    ///
    /// # Errors
    /// [`ControlError::DimensionMismatch`] / [`ControlError::NonFinite`].
    pub fn desired_velocity(&self, desired: &Desired) -> Result<DVector<f64>, ControlError> {
        match desired {
            Desired::Acceleration(a) => {
                check_vec("desired acceleration", a, self.nu())?;
                Ok(&self.p * &self.v + a * self.dt)
            }
            Desired::Velocity(qd) => {
                check_vec("desired velocity", qd, self.nu())?;
                Ok(qd.clone())
            }
        }
    }
}
