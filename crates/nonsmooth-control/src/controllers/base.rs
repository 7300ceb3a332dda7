//! Trunk (floating-base) feedback for the inverse-dynamics controllers (paper §7.3: the
//! paper's controllers add operational-space PD feedback on the trunk to the desired
//! generalized acceleration before solving the inverse dynamics).
//!
//! A PD on the trunk height and attitude gives a desired *base* acceleration correction
//! `Δa_b` (6 components in the floating joint's velocity coordinates: linear in world axes,
//! angular in body axes). The inverse-dynamics problems prescribe only the actuated
//! accelerations θ̈, so `Δa_b` is mapped to the stance legs through the contact kinematics:
//! a foot in contact keeps zero velocity, `C_b a_b + C_θ θ̈ + Ċ v = 0` with `C = [N; T]` the
//! contact Jacobian rows split into base and actuated columns, so the joint correction that
//! realizes `Δa_b` (in the least-squares sense) is `Δθ̈ = −C_θ⁺ C_b Δa_b`
//! (the standard floating-base kinematic mapping, e.g. Featherstone RBDA §8.3 loop-closure
//! accelerations; Mistry et al. 2010 use the same contact-consistent projection).

use nalgebra::{DMatrix, DVector, Quaternion, UnitQuaternion, Vector3};
use nonsmooth_core::{ContactSnapshot, JointKind, Model};

use super::on_swing_limb;
use crate::error::ControlError;

/// PD on the trunk's height and attitude, mapped to the stance legs' joint accelerations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaseFeedback {
    /// Height gain (1/s²).
    pub kp_height: f64,
    /// Vertical velocity gain (1/s).
    pub kd_height: f64,
    /// Attitude gain (1/s²) on the rotation from the current to the level, forward-facing
    /// trunk orientation (identity).
    pub kp_attitude: f64,
    /// Angular velocity gain (1/s).
    pub kd_attitude: f64,
    /// Desired trunk height (m); `None` = the model's initial trunk height.
    pub height: Option<f64>,
    /// Contacts with a gap at most this (m) count as stance feet.
    pub contact_gap: f64,
    /// Weight of the trunk target (height and attitude) relative to the joint targets.
    pub weight: f64,
    /// Weight of the horizontal base acceleration (left to the joints when small).
    pub weight_free: f64,
    /// A planned stance foot still above the ground (within the contact margin) is lowered
    /// at `min(gap / reach_time, reach_speed)` (s).
    pub reach_time: f64,
    /// Largest lowering speed of a planned stance foot (m/s).
    pub reach_speed: f64,
    /// Largest change of the lowering speed per second (m/s²), so that lowering a foot
    /// does not demand an impulsive joint acceleration.
    pub reach_accel: f64,
    /// Compliant ground: a stance contact that penetrates the ground (φ < 0) and moves into
    /// it keeps its current normal velocity over the step (target `w_n = min(n·v, 0)`, zero
    /// normal acceleration) instead of stopping (`w_n = 0`). A spring–damper ground cannot
    /// stop a foot that moves inside it within one step (it applies no impulse), so
    /// demanding it made the stance legs fight the trunk's bounce with saturating torques.
    pub compliant_ground: bool,
    /// Rigid ground: start the projection from the velocity after the inelastic,
    /// frictionless impact of the stance contacts that approach the ground
    /// ([`BaseFeedback::impact_velocity`]) instead of the current one, so that θ̈_des carries
    /// the joint-velocity jump that the contact impulse makes by itself and the inverse
    /// dynamics needs no torque to land a foot.
    pub impact_consistent: bool,
}

impl Default for BaseFeedback {
    /// kp = 100 s⁻², kd = 20 s⁻¹ (critically damped at 10 rad/s) on height and attitude,
    /// the initial height, stance contacts within 0.1 mm, trunk weight 10, horizontal weight
    /// 10⁻⁶, planned stance feet lowered at min(φ / 3 ms, 0.2 m/s) reached at ≤ 40 m/s².
    fn default() -> Self {
        Self {
            kp_height: 100.0,
            kd_height: 20.0,
            kp_attitude: 100.0,
            kd_attitude: 20.0,
            height: None,
            contact_gap: 1e-4,
            weight: 10.0,
            weight_free: 1e-6,
            reach_time: 0.003,
            reach_speed: 0.2,
            reach_accel: 40.0,
            compliant_ground: false,
            impact_consistent: false,
        }
    }
}

impl BaseFeedback {
    /// The desired base-acceleration correction `Δa_b` (linear in world axes, angular in
    /// body axes), or `None` when the root joint is not floating.
    pub fn base_acceleration(
        &self,
        model: &Model,
        snapshot: &ContactSnapshot<f64>,
    ) -> Option<[f64; 6]> {
        let root = model.joints.first()?;
        if root.parent.is_some() || !matches!(root.kind, JointKind::Floating) {
            return None;
        }
        let (qi, vi) = (root.q_index, root.v_index);
        let q = &snapshot.q;
        let v = &snapshot.v;
        if q.len() < qi + 7 || v.len() < vi + 6 {
            return None;
        }
        let h = self.height.unwrap_or(model.initial_state.q[qi + 2]);
        let rot = UnitQuaternion::from_quaternion(Quaternion::new(
            q[qi + 3],
            q[qi + 4],
            q[qi + 5],
            q[qi + 6],
        ));
        // Rotation error from the current attitude R to the identity, in world axes
        // (axis-angle of Rᵀ), then in body axes.
        let err_world = rot.inverse().scaled_axis();
        let err_body = rot.inverse() * err_world;
        let w_body = Vector3::new(v[vi + 3], v[vi + 4], v[vi + 5]);
        let alpha = err_body * self.kp_attitude - w_body * self.kd_attitude;
        let az = self.kp_height * (h - q[qi + 2]) - self.kd_height * v[vi + 2];
        Some([0.0, 0.0, az, alpha.x, alpha.y, alpha.z])
    }

    /// The contact-consistent desired joint acceleration: the θ̈ closest to `qdd` (weight 1)
    /// whose base acceleration is closest to the trunk PD target ([`BaseFeedback::weight`]
    /// on the height and attitude components) among the motions that bring every stance
    /// foot to rest at the end of the step, `C (v + Δt a) = 0` with `a = (a_b, θ̈)` and
    /// `C = [N; T]` the contact rows of the contacts within [`BaseFeedback::contact_gap`].
    /// Contacts on limbs the reference marks as swing are left out; a contact of a planned
    /// stance limb that is still above the ground gets the normal target velocity
    /// `−min(φ / reach_time, reach_speed)`, approached at most at `reach_accel` (the foot is
    /// lowered until it lands). Weighted minimum-norm solution through the
    /// pseudo-inverse of `C W⁻¹ Cᵀ` (rank-deficient stances allowed).
    ///
    /// This makes q̇_des kinematically consistent with non-slipping stance feet, which the
    /// no-slip variants need (errata E7, E8, E15 of docs/decisions/004-inverse-dynamics.md: with
    /// four feet fixed the joint velocities determine the base completely), and adds the trunk
    /// feedback through the stance legs. Without a floating root `qdd` is returned unchanged.
    ///
    /// # Errors
    /// [`ControlError::DimensionMismatch`] for a `qdd` of the wrong length,
    /// [`ControlError::InvalidInput`] when the pseudo-inverse fails.
    pub fn consistent_acceleration(
        &self,
        model: &Model,
        snapshot: &ContactSnapshot<f64>,
        qdd: &DVector<f64>,
        swing: &[bool],
        dt: f64,
    ) -> Result<DVector<f64>, ControlError> {
        let nu = snapshot.actuation.ncols();
        let nv = snapshot.v.len();
        if qdd.len() != nu {
            return Err(ControlError::DimensionMismatch {
                what: "desired acceleration",
                expected: nu,
                got: qdd.len(),
            });
        }
        let Some(da) = self.base_acceleration(model, snapshot) else {
            return Ok(qdd.clone());
        };
        let vi = model.joints[0].v_index;
        // Reduced coordinates x = (a_b, θ̈): v̇ = B x with B = [E_b, Pᵀ].
        let nx = 6 + nu;
        let mut bmap = DMatrix::zeros(nv, nx);
        for k in 0..6 {
            bmap[(vi + k, k)] = 1.0;
        }
        bmap.view_mut((0, 6), (nv, nu))
            .copy_from(&snapshot.actuation);
        let mut x0 = DVector::zeros(nx);
        for (k, a) in da.iter().enumerate() {
            x0[k] = *a;
        }
        x0.rows_mut(6, nu).copy_from(qdd);
        // with `impact_consistent`: the post-impact velocity and the joint-velocity jump of
        // the impact, as an acceleration over the step
        let impact = if self.impact_consistent && !self.compliant_ground {
            let v_imp = self.impact_velocity(snapshot, swing)?;
            let jump = snapshot.actuation.transpose() * (&v_imp - &snapshot.v) / dt;
            Some((v_imp, jump))
        } else {
            None
        };
        let v0 = impact.as_ref().map_or(&snapshot.v, |(v, _)| v);
        let with_jump = |a: DVector<f64>| match &impact {
            Some((_, jump)) => a + jump,
            None => a,
        };
        // Rows and their target velocities at the end of the step.
        let mut rows: Vec<(DVector<f64>, f64)> = Vec::new();
        for c in snapshot
            .contacts
            .iter()
            .filter(|c| !on_swing_limb(&c.rows.normal, &snapshot.actuation, swing))
        {
            if c.gap <= self.contact_gap {
                let wn = if self.compliant_ground && c.gap < 0.0 {
                    c.rows.normal.dot(v0).min(0.0)
                } else {
                    0.0
                };
                rows.push((c.rows.normal.clone(), wn));
                for k in 0..c.rows.tangents.nrows() {
                    rows.push((c.rows.tangents.row(k).transpose(), 0.0));
                }
            } else if !swing.is_empty() {
                // A planned stance foot that has not reached the ground yet: lower it.
                // Lowering speed min(φ/T, v_max), reached at most at `reach_accel`.
                let speed = (c.gap / self.reach_time).min(self.reach_speed);
                let now = c.rows.normal.dot(v0);
                rows.push((
                    c.rows.normal.clone(),
                    (-speed).max(now - self.reach_accel * dt),
                ));
            }
        }
        if rows.is_empty() {
            return Ok(with_jump(qdd.clone()));
        }
        let m = rows.len();
        let mut cfull = DMatrix::zeros(m, nv);
        let mut target = DVector::zeros(m);
        for (i, (r, w)) in rows.iter().enumerate() {
            cfull.row_mut(i).copy_from(&r.transpose());
            target[i] = *w;
        }
        let c = &cfull * &bmap;
        // Target: C (v + Δt x) = w  ⇔  C x = (w − C v) / Δt.
        let d = (target - &cfull * v0) / dt;
        let mut winv = DVector::from_element(nx, 1.0);
        for k in 0..6 {
            winv[k] = if k == 2 || k >= 3 {
                1.0 / self.weight
            } else {
                1.0 / self.weight_free
            };
        }
        let cw = DMatrix::from_fn(m, nx, |i, j| c[(i, j)] * winv[j]);
        let s = &cw * c.transpose();
        let tol = 1e-10 * s.amax().max(1e-300);
        let pinv = s
            .pseudo_inverse(tol)
            .map_err(|e| ControlError::InvalidInput(format!("contact Jacobian: {e}")))?;
        let y = pinv * (d - &c * &x0);
        let x = x0 + cw.transpose() * y;
        Ok(with_jump(x.rows(6, nu).into_owned()))
    }

    /// Generalized velocity after an inelastic, frictionless impact at the stance contacts
    /// (gap ≤ [`BaseFeedback::contact_gap`], not on a planned-swing limb) that approach the
    /// ground: v⁺ = v + M⁻¹ Nₐᵀ p with Nₐ v⁺ = 0 and p ≥ 0 (rows whose impulse would pull
    /// are dropped and the rest solved again). Newton's law of an inelastic impact with the
    /// actuators exerting no impulse.
    pub fn impact_velocity(
        &self,
        snapshot: &ContactSnapshot<f64>,
        swing: &[bool],
    ) -> Result<DVector<f64>, ControlError> {
        let v = &snapshot.v;
        let mut rows: Vec<DVector<f64>> = snapshot
            .contacts
            .iter()
            .filter(|c| {
                c.gap <= self.contact_gap
                    && !on_swing_limb(&c.rows.normal, &snapshot.actuation, swing)
                    && c.rows.normal.dot(v) < 0.0
            })
            .map(|c| c.rows.normal.clone())
            .collect();
        let chol = snapshot.mass_matrix.clone().cholesky().ok_or_else(|| {
            ControlError::InvalidInput("mass matrix is not positive definite".into())
        })?;
        while !rows.is_empty() {
            let n = DMatrix::from_fn(rows.len(), v.len(), |i, j| rows[i][j]);
            let minv_nt = chol.solve(&n.transpose());
            let a = &n * &minv_nt;
            let tol = 1e-10 * a.amax().max(1e-300);
            let pinv = a
                .pseudo_inverse(tol)
                .map_err(|e| ControlError::InvalidInput(format!("impact Delassus matrix: {e}")))?;
            let p = pinv * (-(&n * v));
            // impulses below −1e-12 pull: drop those rows and solve again
            let pulls = |pi: f64| pi < -1e-12;
            if !p.iter().any(|pi| pulls(*pi)) {
                return Ok(v + minv_nt * p);
            }
            rows = rows
                .into_iter()
                .zip(p.iter())
                .filter(|(_, pi)| !pulls(**pi))
                .map(|(r, _)| r)
                .collect();
        }
        Ok(v.clone())
    }
}
