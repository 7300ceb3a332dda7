//! Jacobians of points and body frames and their `J̇ v` terms, all in world axes. The body
//! Jacobian of a kinematic tree is `J_i = [… ⁰X_k S_k …]` over the joints `k` supporting
//! body `i` (Featherstone RBDA ch. 4, kinematic trees and the support set κ(i)).

use nalgebra::{Matrix3xX, Matrix6xX, Vector3, Vector6};

use super::kinematics::Kinematics;
use crate::model::{BodyId, JointKind, Model};
use crate::scalar::{lift3, Scalar};

/// World-axes motion columns of `joints[body]`: for each velocity coordinate `k`, the
/// angular velocity `ω_k` and the velocity of the child body's origin `u_k` produced by a
/// unit value of that coordinate. Returns the number of columns.
fn joint_world_columns<T: Scalar>(
    model: &Model,
    kin: &Kinematics<T>,
    body: BodyId,
    omega: &mut [Vector3<T>; 6],
    vel: &mut [Vector3<T>; 6],
) -> usize {
    let joint = &model.joints[body];
    let rc = kin.poses[body].rotation;
    let joint_frame_rotation = || {
        let rp = super::joint::lift_isometry::<T>(&joint.placement).rotation;
        match joint.parent {
            Some(p) => kin.poses[p].rotation * rp,
            None => rp,
        }
    };
    let z = Vector3::zeros();
    match joint.kind {
        JointKind::Revolute => {
            omega[0] = rc * lift3::<T>(&joint.axis);
            vel[0] = z;
            1
        }
        JointKind::Prismatic => {
            omega[0] = z;
            vel[0] = rc * lift3::<T>(&joint.axis);
            1
        }
        JointKind::Fixed => 0,
        JointKind::Floating => {
            let rj = joint_frame_rotation();
            for k in 0..3 {
                let mut e = Vector3::zeros();
                e[k] = T::one();
                omega[k] = z;
                vel[k] = rj * e;
                omega[k + 3] = rc * e;
                vel[k + 3] = z;
            }
            6
        }
        JointKind::Planar => {
            let rj = joint_frame_rotation();
            omega[0] = z;
            vel[0] = rj * Vector3::x();
            omega[1] = z;
            vel[1] = rj * Vector3::y();
            omega[2] = rj * Vector3::z();
            vel[2] = z;
            3
        }
        JointKind::Ball => {
            for k in 0..3 {
                let mut e = Vector3::zeros();
                e[k] = T::one();
                omega[k] = rc * e;
                vel[k] = z;
            }
            3
        }
    }
}

/// Point Jacobian (3 × nv): the world-frame velocity of the point fixed to `body` that is
/// currently at world position `point` is `J v`. Zero matrix when `body` is `None` (world).
///
/// Built column by column from the world-axes joint motion subspaces of the body's support
/// (RBDA ch. 4: `J_i = [⁰X_k S_k]_{k ∈ κ(i)}`), shifted from each joint's child
/// origin `o_k` to the point: column `= u_k + ω_k × (point − o_k)`.
pub fn point_jacobian<T: Scalar>(
    model: &Model,
    kin: &Kinematics<T>,
    body: Option<BodyId>,
    point: &Vector3<T>,
) -> Matrix3xX<T> {
    let mut jac = Matrix3xX::zeros(model.nv());
    let mut omega = [Vector3::zeros(); 6];
    let mut vel = [Vector3::zeros(); 6];
    let mut cur = body;
    while let Some(b) = cur {
        let n = joint_world_columns(model, kin, b, &mut omega, &mut vel);
        let r = point - kin.poses[b].translation.vector;
        let vi = model.joints[b].v_index;
        for k in 0..n {
            jac.set_column(vi + k, &(vel[k] + omega[k].cross(&r)));
        }
        cur = model.joints[b].parent;
    }
    jac
}

/// `J̇ v` for the point fixed to `body` currently at world position `point`: its classical
/// acceleration when `v̇ = 0`, `a_o + α × r + ω × (ω × r)` with `r = point − o_body`
/// (rigid-body acceleration field, RBDA §2.11). Zero for the world.
pub fn point_jdot_v<T: Scalar>(
    _model: &Model,
    kin: &Kinematics<T>,
    body: Option<BodyId>,
    point: &Vector3<T>,
) -> Vector3<T> {
    match body {
        None => Vector3::zeros(),
        Some(b) => {
            let r = point - kin.poses[b].translation.vector;
            let w = kin.angular_velocity[b];
            kin.linear_acceleration_bias[b]
                + kin.angular_acceleration_bias[b].cross(&r)
                + w.cross(&w.cross(&r))
        }
    }
}

/// Frame Jacobian (6 × nv) of `(ω; velocity of the body origin)` in world axes.
pub fn frame_jacobian<T: Scalar>(model: &Model, kin: &Kinematics<T>, body: BodyId) -> Matrix6xX<T> {
    let mut jac = Matrix6xX::zeros(model.nv());
    let origin = kin.poses[body].translation.vector;
    let mut omega = [Vector3::zeros(); 6];
    let mut vel = [Vector3::zeros(); 6];
    let mut cur = Some(body);
    while let Some(b) = cur {
        let n = joint_world_columns(model, kin, b, &mut omega, &mut vel);
        let r = origin - kin.poses[b].translation.vector;
        let vi = model.joints[b].v_index;
        for k in 0..n {
            let lin = vel[k] + omega[k].cross(&r);
            let mut col = jac.column_mut(vi + k);
            col.fixed_rows_mut::<3>(0).copy_from(&omega[k]);
            col.fixed_rows_mut::<3>(3).copy_from(&lin);
        }
        cur = model.joints[b].parent;
    }
    jac
}

/// `J̇ v` of [`frame_jacobian`]: `(α_bias; a_bias of the body origin)` in world axes.
pub fn frame_jdot_v<T: Scalar>(_model: &Model, kin: &Kinematics<T>, body: BodyId) -> Vector6<T> {
    let a = kin.angular_acceleration_bias[body];
    let l = kin.linear_acceleration_bias[body];
    Vector6::new(a[0], a[1], a[2], l[0], l[1], l[2])
}
