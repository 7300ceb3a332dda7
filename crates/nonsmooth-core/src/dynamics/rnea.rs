//! The recursive Newton–Euler algorithm for inverse dynamics (Featherstone RBDA §5.3,
//! Table 5.1), the bias force `h(q, v)`, passive joint damping, forward dynamics through the
//! mass matrix (RBDA §6.1: `M v̇ = τ − h`) and energies.

use nalgebra::{DMatrix, DVector, Vector3};

use super::crba::crba_from_workspace;
use super::joint::{joint_acceleration, joint_velocity, velocity_product};
use super::spatial::{cross_force, cross_motion, spatial, SpatialInertia};
use super::workspace::DynamicsWorkspace;
use crate::error::{Location, ModelError};
use crate::model::Model;
use crate::scalar::{lift, lift3, Scalar};

/// RNEA on a workspace whose joint data is already up to date (RBDA Table 5.1). Gravity
/// enters as the fictitious base acceleration `a_0 = −a_g = [0; −g]`. `vdot = None` means
/// `v̇ = 0`.
pub(crate) fn rnea_from_workspace<T: Scalar>(
    model: &Model,
    v: &DVector<T>,
    vdot: Option<&DVector<T>>,
    ws: &mut DynamicsWorkspace<T>,
    tau: &mut DVector<T>,
) {
    let nv = model.nv();
    if tau.len() != nv {
        *tau = DVector::zeros(nv);
    }
    let a0 = spatial(&Vector3::zeros(), &(-lift3::<T>(&model.gravity)));
    let nb = model.bodies.len();
    for i in 0..nb {
        let joint = &model.joints[i];
        let s = &ws.bodies[i].s;
        let vj = joint_velocity(joint, s, v);
        let cj = velocity_product(joint, &vj);
        let x = &ws.bodies[i].x;
        let (vel, acc) = match joint.parent {
            Some(p) => (
                x.apply_motion(&ws.bodies[p].vel) + vj,
                x.apply_motion(&ws.bodies[p].acc),
            ),
            None => (vj, x.apply_motion(&a0)),
        };
        let mut acc = acc + cj + cross_motion(&vel, &vj);
        if let Some(a) = vdot {
            acc += joint_acceleration(joint, s, a);
        }
        let inertia = &ws.bodies[i].inertia;
        ws.bodies[i].force =
            inertia.mul_motion(&acc) + cross_force(&vel, &inertia.mul_motion(&vel));
        ws.bodies[i].vel = vel;
        ws.bodies[i].acc = acc;
    }
    for i in (0..nb).rev() {
        let joint = &model.joints[i];
        let fi = ws.bodies[i].force;
        let armature: T = lift(joint.armature);
        for k in 0..joint.kind.nv() {
            let j = joint.v_index + k;
            tau[j] = ws.bodies[i].s.column(k).dot(&fi);
            if let Some(a) = vdot {
                // The armature's reflected inertia (the diagonal term CRBA adds to M).
                tau[j] += armature * a[j];
            }
        }
        if let Some(p) = joint.parent {
            let moved = ws.bodies[i].x.inv_apply_force(&fi);
            ws.bodies[p].force += moved;
        }
    }
}

/// Inverse dynamics `τ = M v̇ + h` into `tau` with a reusable workspace (RNEA, RBDA
/// Table 5.1, gravity from `model.gravity`).
///
/// # Panics
/// On dimension mismatch of `q`, `v` or `vdot` with the model.
pub fn inverse_dynamics_into<T: Scalar>(
    model: &Model,
    q: &DVector<T>,
    v: &DVector<T>,
    vdot: &DVector<T>,
    ws: &mut DynamicsWorkspace<T>,
    tau: &mut DVector<T>,
) {
    ws.update(model, q);
    rnea_from_workspace(model, v, Some(vdot), ws, tau);
}

/// Bias force `h(q, v) = RNEA(q, v, 0)` into `h` with a reusable workspace.
///
/// # Panics
/// On dimension mismatch of `q` or `v` with the model.
pub fn bias_force_into<T: Scalar>(
    model: &Model,
    q: &DVector<T>,
    v: &DVector<T>,
    ws: &mut DynamicsWorkspace<T>,
    h: &mut DVector<T>,
) {
    ws.update(model, q);
    rnea_from_workspace(model, v, None, ws, h);
}

/// Mass matrix (CRBA, RBDA Table 6.2) and bias force (RNEA with `v̇ = 0`, RBDA Table 5.1)
/// sharing one evaluation of the joint transforms; allocation-free once `ws`, `m` and `h`
/// have the right sizes.
///
/// # Panics
/// On dimension mismatch of `q` or `v` with the model.
pub fn mass_matrix_and_bias_into<T: Scalar>(
    model: &Model,
    q: &DVector<T>,
    v: &DVector<T>,
    ws: &mut DynamicsWorkspace<T>,
    m: &mut DMatrix<T>,
    h: &mut DVector<T>,
) {
    ws.update(model, q);
    crba_from_workspace(model, ws, m);
    rnea_from_workspace(model, v, None, ws, h);
}

/// Inverse dynamics `τ = M(q) v̇ + h(q, v)` by the recursive Newton–Euler algorithm (RBDA
/// §5.3, Table 5.1), including gravity `model.gravity`.
///
/// # Panics
/// On dimension mismatch of `q`, `v` or `vdot` with the model (see [`super::check_state`]).
pub fn inverse_dynamics<T: Scalar>(
    model: &Model,
    q: &DVector<T>,
    v: &DVector<T>,
    vdot: &DVector<T>,
) -> DVector<T> {
    let mut ws = DynamicsWorkspace::new(model);
    let mut tau = DVector::zeros(model.nv());
    inverse_dynamics_into(model, q, v, vdot, &mut ws, &mut tau);
    tau
}

/// Bias force `h(q, v) = RNEA(q, v, 0)`: Coriolis, centrifugal and gravity terms, so that
/// `M v̇ + h = τ` (RBDA §5.3 and §6.1, eq. `C = ID(q, q̇, 0)`).
///
/// # Panics
/// On dimension mismatch of `q` or `v` with the model.
pub fn bias_force<T: Scalar>(model: &Model, q: &DVector<T>, v: &DVector<T>) -> DVector<T> {
    let mut ws = DynamicsWorkspace::new(model);
    let mut h = DVector::zeros(model.nv());
    bias_force_into(model, q, v, &mut ws, &mut h);
    h
}

/// Passive generalized force of viscous joint damping, `−d_j v` on every velocity
/// coordinate of joint `j`, and of joint springs, `−k_j (q − q_ref)` on the coordinate of a
/// one-DOF joint with a [`crate::JointSpring`].
///
/// # Panics
/// If `q.len() != model.nq()` or `v.len() != model.nv()`.
pub fn passive_force<T: Scalar>(model: &Model, q: &DVector<T>, v: &DVector<T>) -> DVector<T> {
    let mut f = DVector::zeros(model.nv());
    for joint in &model.joints {
        let d: T = lift(joint.damping);
        for k in 0..joint.kind.nv() {
            f[joint.v_index + k] = -(d * v[joint.v_index + k]);
        }
        if let Some(s) = &joint.spring {
            let stretch = q[joint.q_index] - lift::<T>(s.reference);
            f[joint.v_index] -= lift::<T>(s.stiffness) * stretch;
        }
    }
    f
}

fn check_len(field: &str, expected: usize, got: usize) -> Result<(), ModelError> {
    if expected == got {
        Ok(())
    } else {
        Err(ModelError::DimensionMismatch {
            location: Location::field(field),
            expected,
            got,
        })
    }
}

/// Forward dynamics `v̇ = M⁻¹ (τ − h + f_passive)` with `M` from CRBA, `h` from RNEA and a
/// Cholesky factorization (RBDA §6.1, "forward dynamics via the joint-space inertia
/// matrix"). `tau` is the generalized force (nv).
///
/// # Errors
/// [`ModelError::DimensionMismatch`] if `q`, `v` or `tau` have the wrong length;
/// [`ModelError::InvalidValue`] if the mass matrix is not positive definite (e.g. massless
/// bodies on a free joint).
pub fn forward_dynamics<T: Scalar>(
    model: &Model,
    q: &DVector<T>,
    v: &DVector<T>,
    tau: &DVector<T>,
) -> Result<DVector<T>, ModelError> {
    check_len("q", model.nq(), q.len())?;
    check_len("v", model.nv(), v.len())?;
    check_len("tau", model.nv(), tau.len())?;
    let mut ws = DynamicsWorkspace::new(model);
    let mut m = DMatrix::zeros(model.nv(), model.nv());
    let mut h = DVector::zeros(model.nv());
    mass_matrix_and_bias_into(model, q, v, &mut ws, &mut m, &mut h);
    let rhs = tau - h + passive_force(model, q, v);
    let chol = nalgebra::Cholesky::new(m).ok_or_else(|| ModelError::InvalidValue {
        location: Location::field("mass_matrix"),
        reason: "joint-space mass matrix is not positive definite".into(),
    })?;
    Ok(chol.solve(&rhs))
}

/// Kinetic energy `½ Σ_i v_iᵀ I_i v_i` over body spatial velocities (RBDA §2.13,
/// equal to `½ vᵀ M v`).
///
/// # Panics
/// On dimension mismatch of `q` or `v` with the model.
pub fn kinetic_energy<T: Scalar>(model: &Model, q: &DVector<T>, v: &DVector<T>) -> T {
    let mut ws = DynamicsWorkspace::new(model);
    ws.update(model, q);
    let half: T = lift(0.5);
    let mut e = T::zero();
    for (i, joint) in model.joints.iter().enumerate() {
        let vj = joint_velocity(joint, &ws.bodies[i].s, v);
        let vel = match joint.parent {
            Some(p) => ws.bodies[i].x.apply_motion(&ws.bodies[p].vel) + vj,
            None => vj,
        };
        ws.bodies[i].vel = vel;
        e += half * vel.dot(&ws.bodies[i].inertia.mul_motion(&vel));
    }
    e
}

/// Gravitational potential energy `−Σ_i m_i g · c_i` (c_i: world centre of mass of body
/// i), zero at the world origin, consistent with the gravity term of [`bias_force`].
///
/// # Panics
/// If `q.len() != model.nq()`.
pub fn potential_energy<T: Scalar>(model: &Model, q: &DVector<T>) -> T {
    let g = lift3::<T>(&model.gravity);
    let kin = super::kinematics::kinematics(model, q, &DVector::zeros(model.nv()));
    let mut e = T::zero();
    for (pose, body) in kin.poses.iter().zip(&model.bodies) {
        let c = pose * nalgebra::Point3::from(lift3::<T>(&body.com));
        e -= lift::<T>(body.mass) * g.dot(&c.coords);
    }
    e
}

/// Spatial inertia of `body` about its own frame origin, body coordinates (RBDA eq. 2.63).
pub fn body_spatial_inertia<T: Scalar>(model: &Model, body: usize) -> SpatialInertia<T> {
    let b = &model.bodies[body];
    SpatialInertia::from_com(b.mass, &b.com, &b.inertia)
}
