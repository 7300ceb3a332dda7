//! Operational-space PD (the paper's quadruped baseline, paper §7.3): a Cartesian spring–
//! damper on chosen body points mapped to joint torques through the transposed point
//! Jacobian (Khatib 1987, the "Jacobian-transpose" form without the operational-space
//! inertia).

use nalgebra::{DVector, Vector3};
use nonsmooth_core::dynamics::{kinematics, point_jacobian, point_position};
use nonsmooth_core::{BodyId, ContactSnapshot, Model};

use crate::error::ControlError;

/// A Cartesian target for a point fixed to a body.
#[derive(Debug, Clone, PartialEq)]
pub struct PointTarget {
    /// The body carrying the point.
    pub body: BodyId,
    /// The point in the body frame.
    pub local: Vector3<f64>,
    /// Desired world position.
    pub position: Vector3<f64>,
    /// Desired world velocity.
    pub velocity: Vector3<f64>,
}

/// `u = P Σ Jᵢᵀ (kp (x_des − x) + kd (ẋ_des − ẋ))` over the targets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OperationalSpacePd {
    /// Position gain (N/m).
    pub kp: f64,
    /// Velocity gain (N·s/m).
    pub kd: f64,
}

impl OperationalSpacePd {
    /// The actuator torques (length nu) for the targets at the sensed state.
    ///
    /// # Errors
    /// [`ControlError::UnknownBody`] for a body out of range, [`ControlError::NonFinite`]
    /// for non-finite targets.
    pub fn torques(
        &self,
        model: &Model,
        snapshot: &ContactSnapshot<f64>,
        targets: &[PointTarget],
    ) -> Result<DVector<f64>, ControlError> {
        let kin = kinematics(model, &snapshot.q, &snapshot.v);
        let mut gen = DVector::zeros(model.nv());
        for (i, t) in targets.iter().enumerate() {
            if t.body >= model.bodies.len() {
                return Err(ControlError::UnknownBody {
                    contact: i,
                    body: t.body,
                    bodies: model.bodies.len(),
                });
            }
            if t.position
                .iter()
                .chain(t.velocity.iter())
                .any(|x| !x.is_finite())
            {
                return Err(ControlError::NonFinite {
                    what: format!("operational-space target {i}"),
                });
            }
            let x = point_position(&kin, Some(t.body), &t.local);
            let jac = point_jacobian(model, &kin, Some(t.body), &x);
            let xd = &jac * &snapshot.v;
            let force = (t.position - x) * self.kp + (t.velocity - xd) * self.kd;
            gen += jac.transpose() * force;
        }
        Ok(snapshot.actuation.transpose() * gen)
    }
}
