//! Time-dependent external loads, part of the steppers' public API: a [`PointLoad`]'s
//! generalized force at the step's start is an explicit force of the step's actuation
//! ([`crate::actuation::Actuation::add_generalized_force`], applied by every scheme inside
//! the step), and the RK45 and BDF steppers built `with_load` evaluate it in their right-hand
//! side. It is the load of Drumwright 2019, §5.5 (a force
//! at a body point circling on the top face of the box on the elastic foundation) and any force of
//! fixed direction at a fixed or circling body point.

use crate::error::SimError;
use nalgebra::{DVector, Vector3};
use nonsmooth_core::dynamics::jacobian::point_jacobian;
use nonsmooth_core::dynamics::kinematics::kinematics;
use nonsmooth_core::{BodyId, Model};

/// A force of fixed world direction applied at the body-frame point
/// `p(t) = centre + radius (cos ωt, sin ωt, 0)`. Its generalized force is `J_p(q)ᵀ F`
/// (virtual work, RBDA §2.10) with the point Jacobian of the body.
#[derive(Debug, Clone, PartialEq)]
pub struct PointLoad {
    /// Body the point is fixed to.
    pub body: BodyId,
    /// Force in world coordinates (N).
    pub force: Vector3<f64>,
    /// Centre of the circle in body coordinates (m).
    pub centre: Vector3<f64>,
    /// Radius of the circle (m); 0 for a fixed point.
    pub radius: f64,
    /// Angular rate of the point on its circle (rad/s).
    pub omega: f64,
}

impl PointLoad {
    /// The body-frame application point at time `t`.
    pub fn point(&self, t: f64) -> Vector3<f64> {
        self.centre
            + Vector3::new((self.omega * t).cos(), (self.omega * t).sin(), 0.0) * self.radius
    }

    /// Generalized force `J_p(q)ᵀ F` at configuration `q` and time `t`.
    ///
    /// # Errors
    /// [`SimError::InvalidOption`] when the body index is out of range or `q` has the wrong
    /// length.
    pub fn generalized(
        &self,
        model: &Model,
        q: &DVector<f64>,
        t: f64,
    ) -> Result<DVector<f64>, SimError> {
        if self.body >= model.bodies.len() || q.len() != model.nq() {
            return Err(SimError::InvalidOption {
                option: "load",
                reason: format!(
                    "body {} of {} or configuration length {} (model {})",
                    self.body,
                    model.bodies.len(),
                    q.len(),
                    model.nq()
                ),
            });
        }
        let kin = kinematics(model, q, &DVector::zeros(model.nv()));
        let world = kin.poses[self.body] * nalgebra::Point3::from(self.point(t));
        let jac = point_jacobian(model, &kin, Some(self.body), &world.coords);
        Ok(jac.transpose() * self.force)
    }
}
