//! Forward kinematics: world poses, velocities and velocity-product ("bias") accelerations
//! of every body, by the forward pass of Featherstone's recursive algorithms (RBDA §5.3,
//! Table 5.1, first loop, with `q̈ = 0` and no gravity).

use nalgebra::{DVector, Isometry3, Vector3, Vector6};

use super::joint::{
    joint_isometry, joint_velocity, lift_isometry, motion_subspace, parent_to_child,
    velocity_product,
};
use super::spatial::{angular, cross_motion, linear};
use crate::model::Model;
use crate::scalar::Scalar;

/// World-frame kinematic quantities of every body at a state `(q, v)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Kinematics<T: Scalar> {
    /// World pose of each body frame.
    pub poses: Vec<Isometry3<T>>,
    /// Angular velocity of each body, world axes.
    pub angular_velocity: Vec<Vector3<T>>,
    /// Velocity of each body-frame origin, world axes.
    pub linear_velocity: Vec<Vector3<T>>,
    /// Body angular acceleration when `v̇ = 0`, world axes.
    pub angular_acceleration_bias: Vec<Vector3<T>>,
    /// Classical acceleration of each body-frame origin when `v̇ = 0`, world axes.
    pub linear_acceleration_bias: Vec<Vector3<T>>,
}

/// Computes [`Kinematics`] at `(q, v)`.
///
/// Body-frame spatial velocities and accelerations follow RBDA Table 5.1:
/// `v_i = λX_i v_λ + S_i v_i`, `a_i = λX_i a_λ + c_J + v_i × v_J` (with `v̇ = 0`); the
/// classical acceleration of the body origin is `a_lin + ω × v_lin` (RBDA §2.11, eq. 2.45 /
/// "spatial vs. classical acceleration"), then everything is rotated into world axes.
///
/// # Panics
/// If `q.len() != model.nq()` or `v.len() != model.nv()` (validate first with
/// [`super::check_state`]).
pub fn kinematics<T: Scalar>(model: &Model, q: &DVector<T>, v: &DVector<T>) -> Kinematics<T> {
    let nb = model.bodies.len();
    let mut out = Kinematics {
        poses: Vec::with_capacity(nb),
        angular_velocity: Vec::with_capacity(nb),
        linear_velocity: Vec::with_capacity(nb),
        angular_acceleration_bias: Vec::with_capacity(nb),
        linear_acceleration_bias: Vec::with_capacity(nb),
    };
    let mut vel: Vec<Vector6<T>> = Vec::with_capacity(nb);
    let mut acc: Vec<Vector6<T>> = Vec::with_capacity(nb);
    for (i, joint) in model.joints.iter().enumerate().take(nb) {
        let (x, rj) = parent_to_child(joint, q);
        let s = motion_subspace(joint, &rj);
        let vj = joint_velocity(joint, &s, v);
        let cj = velocity_product(joint, &vj);
        let local = lift_isometry::<T>(&joint.placement) * joint_isometry(joint, q);
        let (pose, vi, ai) = match joint.parent {
            Some(p) => (
                out.poses[p] * local,
                x.apply_motion(&vel[p]) + vj,
                x.apply_motion(&acc[p]),
            ),
            None => (local, vj, Vector6::zeros()),
        };
        let ai = ai + cj + cross_motion(&vi, &vj);
        let r = pose.rotation.to_rotation_matrix().into_inner();
        let (w, u) = (angular(&vi), linear(&vi));
        out.poses.push(pose);
        out.angular_velocity.push(r * w);
        out.linear_velocity.push(r * u);
        out.angular_acceleration_bias.push(r * angular(&ai));
        out.linear_acceleration_bias
            .push(r * (linear(&ai) + w.cross(&u)));
        vel.push(vi);
        acc.push(ai);
        debug_assert_eq!(i + 1, out.poses.len());
    }
    out
}

/// World position of a point given in the frame of `body` (world frame when `None`).
pub fn point_position<T: Scalar>(
    kin: &Kinematics<T>,
    body: Option<usize>,
    local: &Vector3<T>,
) -> Vector3<T> {
    match body {
        Some(b) => kin.poses[b] * nalgebra::Point3::from(*local),
        None => nalgebra::Point3::from(*local),
    }
    .coords
}
