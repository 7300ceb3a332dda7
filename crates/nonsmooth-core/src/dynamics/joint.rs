//! Joint models: joint transform `X_J(q)`, motion subspace `S` and velocity-product term
//! `c_J = S̊ q̇` for every [`JointKind`] (Featherstone, RBDA §4.2–4.4, Table 4.1).
//!
//! Conventions (see [`crate::model`]): the joint frame is fixed in the parent at
//! `placement`; at zero coordinates the child frame coincides with it. `S` is expressed in
//! child (body) coordinates, so the child's velocity relative to its parent, in body
//! coordinates, is `v_J = S v_joint`.
//!
//! - revolute: `S = [a; 0]`, prismatic: `S = [0; a]` with `a = axis`, `c_J = 0`;
//! - floating: `v = (ṗ in the parent/joint frame, ω in the body frame)`, so the body-frame
//!   joint velocity is `[ω_b; Rᵀ ṗ]` and `S = [0 1; Rᵀ 0]` depends on the joint rotation R;
//!   its apparent derivative gives `c_J = [0; −ω_b × (Rᵀ ṗ)]`;
//! - ball: `v = ω_b` (body frame), `S = [1; 0]`, `c_J = 0`;
//! - planar: `v = (ẋ, ẏ, θ̇)` in the joint frame, `S = [0 0 e_z; Rᵀe_x Rᵀe_y 0]` with
//!   `R = R_z(θ)`, and likewise `c_J = [0; −θ̇ e_z × (Rᵀ ṗ)]`;
//! - fixed: no columns.
//!
//! Decision where the model docs say "parent frame": the floating joint's position and
//! linear velocity are expressed in the *joint frame* (the parent frame moved by
//! `placement`), like every other joint's coordinates; for the usual identity placement of
//! a free body this is the parent (world) frame.
//!
//! In all cases `c_J = [0; −ω_J × v_J,lin]` where `v_J = [ω_J; v_J,lin]` (for revolute and
//! prismatic joints the product vanishes), which is how it is computed.

use nalgebra::{
    DVector, Isometry3, Matrix3, Matrix6, Quaternion, Translation3, UnitQuaternion, Vector3,
    Vector6,
};

use super::spatial::{angular, linear, spatial, SpatialTransform};
use crate::model::{Joint, JointKind};
use crate::scalar::{lift, lift3, lift33, Scalar};

/// Rotation matrix of a unit quaternion given scalar first, `(w, x, y, z)`; the formula
/// assumes unit norm (callers keep quaternions normalized).
#[inline]
pub fn quaternion_matrix<T: Scalar>(w: T, x: T, y: T, z: T) -> Matrix3<T> {
    let one = T::one();
    let two = one + one;
    Matrix3::new(
        one - two * (y * y + z * z),
        two * (x * y - w * z),
        two * (x * z + w * y),
        two * (x * y + w * z),
        one - two * (x * x + z * z),
        two * (y * z - w * x),
        two * (x * z - w * y),
        two * (y * z + w * x),
        one - two * (x * x + y * y),
    )
}

/// Rotation by `angle` about the unit vector `a` (Rodrigues' formula).
#[inline]
pub fn axis_angle_matrix<T: Scalar>(a: &Vector3<T>, angle: T) -> Matrix3<T> {
    let (s, c) = angle.sin_cos();
    let k = super::spatial::skew(a);
    Matrix3::identity() + k * s + k * k * (T::one() - c)
}

/// Pose `(R_J, p_J)` of the child frame in the joint frame as a function of the joint's
/// coordinates `q[joint.q_index ..]` (the joint transform `X_J(q)` of RBDA Table 4.1 in
/// pose form).
pub fn joint_pose<T: Scalar>(joint: &Joint, q: &DVector<T>) -> (Matrix3<T>, Vector3<T>) {
    let i = joint.q_index;
    match joint.kind {
        JointKind::Revolute => (
            axis_angle_matrix(&lift3(&joint.axis), q[i]),
            Vector3::zeros(),
        ),
        JointKind::Prismatic => (Matrix3::identity(), lift3::<T>(&joint.axis) * q[i]),
        JointKind::Fixed => (Matrix3::identity(), Vector3::zeros()),
        JointKind::Floating => (
            quaternion_matrix(q[i + 3], q[i + 4], q[i + 5], q[i + 6]),
            Vector3::new(q[i], q[i + 1], q[i + 2]),
        ),
        JointKind::Planar => (
            axis_angle_matrix(&Vector3::z(), q[i + 2]),
            Vector3::new(q[i], q[i + 1], T::zero()),
        ),
        JointKind::Ball => (
            quaternion_matrix(q[i], q[i + 1], q[i + 2], q[i + 3]),
            Vector3::zeros(),
        ),
    }
}

/// The joint transform as an isometry (pose of the child frame in the joint frame).
pub fn joint_isometry<T: Scalar>(joint: &Joint, q: &DVector<T>) -> Isometry3<T> {
    let i = joint.q_index;
    let half: T = lift(0.5);
    match joint.kind {
        JointKind::Revolute => {
            let (s, c) = (q[i] * half).sin_cos();
            let a = lift3::<T>(&joint.axis) * s;
            Isometry3::from_parts(
                Translation3::identity(),
                UnitQuaternion::new_unchecked(Quaternion::new(c, a[0], a[1], a[2])),
            )
        }
        JointKind::Prismatic => Isometry3::from_parts(
            Translation3::from(lift3::<T>(&joint.axis) * q[i]),
            UnitQuaternion::identity(),
        ),
        JointKind::Fixed => Isometry3::identity(),
        JointKind::Floating => Isometry3::from_parts(
            Translation3::new(q[i], q[i + 1], q[i + 2]),
            UnitQuaternion::new_unchecked(Quaternion::new(q[i + 3], q[i + 4], q[i + 5], q[i + 6])),
        ),
        JointKind::Planar => {
            let (s, c) = (q[i + 2] * half).sin_cos();
            Isometry3::from_parts(
                Translation3::new(q[i], q[i + 1], T::zero()),
                UnitQuaternion::new_unchecked(Quaternion::new(c, T::zero(), T::zero(), s)),
            )
        }
        JointKind::Ball => Isometry3::from_parts(
            Translation3::identity(),
            UnitQuaternion::new_unchecked(Quaternion::new(q[i], q[i + 1], q[i + 2], q[i + 3])),
        ),
    }
}

/// Lifts an `f64` isometry into `T`.
pub fn lift_isometry<T: Scalar>(iso: &Isometry3<f64>) -> Isometry3<T> {
    let r = iso.rotation.quaternion();
    Isometry3::from_parts(
        Translation3::from(lift3::<T>(&iso.translation.vector)),
        UnitQuaternion::new_unchecked(Quaternion::new(lift(r.w), lift(r.i), lift(r.j), lift(r.k))),
    )
}

/// Motion subspace `S` (RBDA Table 4.1) in child-body coordinates, for a joint whose
/// rotation relative to its joint frame is `rot_j`. Only the first `joint.kind.nv()`
/// columns are meaningful; the rest are zero.
pub fn motion_subspace<T: Scalar>(joint: &Joint, rot_j: &Matrix3<T>) -> Matrix6<T> {
    let mut s = Matrix6::zeros();
    match joint.kind {
        JointKind::Revolute => {
            let a = lift3::<T>(&joint.axis);
            s.fixed_view_mut::<3, 1>(0, 0).copy_from(&a);
        }
        JointKind::Prismatic => {
            let a = lift3::<T>(&joint.axis);
            s.fixed_view_mut::<3, 1>(3, 0).copy_from(&a);
        }
        JointKind::Fixed => {}
        JointKind::Floating => {
            s.fixed_view_mut::<3, 3>(3, 0).copy_from(&rot_j.transpose());
            s.fixed_view_mut::<3, 3>(0, 3)
                .copy_from(&Matrix3::identity());
        }
        JointKind::Planar => {
            let rt = rot_j.transpose();
            s.fixed_view_mut::<3, 2>(3, 0)
                .copy_from(&rt.fixed_view::<3, 2>(0, 0));
            s[(2, 2)] = T::one();
        }
        JointKind::Ball => {
            s.fixed_view_mut::<3, 3>(0, 0)
                .copy_from(&Matrix3::identity());
        }
    }
    s
}

/// Joint velocity `v_J = S v_joint` in body coordinates, reading the joint's velocities from
/// `v[joint.v_index ..]`.
#[inline]
pub fn joint_velocity<T: Scalar>(joint: &Joint, s: &Matrix6<T>, v: &DVector<T>) -> Vector6<T> {
    let mut out = Vector6::zeros();
    let i = joint.v_index;
    for k in 0..joint.kind.nv() {
        out += s.column(k) * v[i + k];
    }
    out
}

/// `S q̈` for a joint, reading accelerations from `a[joint.v_index ..]`.
#[inline]
pub fn joint_acceleration<T: Scalar>(joint: &Joint, s: &Matrix6<T>, a: &DVector<T>) -> Vector6<T> {
    joint_velocity(joint, s, a)
}

/// Velocity-product term `c_J = S̊ v_joint = [0; −ω_J × v_J,lin]` (RBDA §3.3 and
/// §4.4), valid for every joint kind of the model (see the module docs).
#[inline]
pub fn velocity_product<T: Scalar>(joint: &Joint, v_j: &Vector6<T>) -> Vector6<T> {
    match joint.kind {
        JointKind::Floating | JointKind::Planar => {
            let w = angular(v_j);
            let u = linear(v_j);
            spatial(&Vector3::zeros(), &(-w.cross(&u)))
        }
        _ => Vector6::zeros(),
    }
}

/// Plücker transform `λX_i` from the parent body frame (world for a root) to the child body
/// frame: the joint's tree transform (placement) followed by `X_J(q)` (RBDA §4.2,
/// eq. `λX_i = X_J X_T`). Also returns the joint rotation `R_J` needed by `S`.
pub fn parent_to_child<T: Scalar>(
    joint: &Joint,
    q: &DVector<T>,
) -> (SpatialTransform<T>, Matrix3<T>) {
    let (rj, pj) = joint_pose(joint, q);
    let rp = lift33::<T>(&joint.placement.rotation.to_rotation_matrix().into_inner());
    let tp = lift3::<T>(&joint.placement.translation.vector);
    let rot = rp * rj;
    let trans = tp + rp * pj;
    (SpatialTransform::from_pose(&rot, &trans), rj)
}
