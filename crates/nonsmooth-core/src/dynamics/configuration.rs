//! Configuration-space operations: the velocity map `q̇ = N(q) v`, explicit integration of
//! configurations with quaternion renormalization, the neutral configuration and state
//! validation.
//!
//! For a floating joint `q = (p, w, x, y, z)` and `v = (ṗ, ω_b)`, so `N` is the identity on
//! the position and the quaternion rate is `½ q ⊗ (0, ω_b)` (body-frame angular velocity,
//! Sola, "Quaternion kinematics for the error-state
//! Kalman filter", eq. 120). A ball joint's `q` is the quaternion alone and `v = ω_b`.

use nalgebra::{DMatrix, DVector};

use crate::error::{Location, ModelError};
use crate::model::{JointKind, Model};
use crate::scalar::{lift, Scalar};

/// The 4 × 3 matrix `G(q)` of the quaternion rate `q̇ = ½ G(q) ω` for a unit quaternion
/// `q = (w, x, y, z)` and the body-frame angular velocity ω: `½ q ⊗ (0, ω) = ½ (−u·ω,
/// w ω + u × ω)` with `u = (x, y, z)` (Sola, eq. 120).
pub fn quaternion_rate_rows<T: Scalar>([w, x, y, z]: [T; 4]) -> [[T; 3]; 4] {
    [[-x, -y, -z], [w, -z, y], [z, w, -x], [-y, x, w]]
}

/// The velocity map `N(q)` (nq × nv) with `q̇ = N(q) v`.
///
/// # Panics
/// If `q.len() != model.nq()`.
pub fn velocity_map<T: Scalar>(model: &Model, q: &DVector<T>) -> DMatrix<T> {
    let mut n = DMatrix::zeros(model.nq(), model.nv());
    let half: T = lift(0.5);
    for joint in &model.joints {
        let (iq, iv) = (joint.q_index, joint.v_index);
        match joint.kind {
            JointKind::Revolute | JointKind::Prismatic => n[(iq, iv)] = T::one(),
            JointKind::Fixed => {}
            JointKind::Planar => {
                for k in 0..3 {
                    n[(iq + k, iv + k)] = T::one();
                }
            }
            JointKind::Floating | JointKind::Ball => {
                // Floating: identity on the position, then the quaternion; ball: the
                // quaternion alone.
                let (qo, vo) = if joint.kind == JointKind::Floating {
                    for k in 0..3 {
                        n[(iq + k, iv + k)] = T::one();
                    }
                    (iq + 3, iv + 3)
                } else {
                    (iq, iv)
                };
                let rows = quaternion_rate_rows([q[qo], q[qo + 1], q[qo + 2], q[qo + 3]]);
                for (r, row) in rows.iter().enumerate() {
                    for (c, val) in row.iter().enumerate() {
                        n[(qo + r, vo + c)] = half * *val;
                    }
                }
            }
        }
    }
    n
}

/// The configuration rate `q̇ = N(q) v`, joint by joint (the product with [`velocity_map`]
/// without forming the nq × nv matrix).
///
/// # Panics
/// If `q.len() != model.nq()` or `v.len() != model.nv()`.
pub fn configuration_rate<T: Scalar>(model: &Model, q: &DVector<T>, v: &DVector<T>) -> DVector<T> {
    let mut out = DVector::zeros(model.nq());
    let half: T = lift(0.5);
    for joint in &model.joints {
        let (iq, iv) = (joint.q_index, joint.v_index);
        match joint.kind {
            JointKind::Revolute | JointKind::Prismatic => out[iq] = v[iv],
            JointKind::Fixed => {}
            JointKind::Planar => {
                for k in 0..3 {
                    out[iq + k] = v[iv + k];
                }
            }
            JointKind::Floating | JointKind::Ball => {
                let (qo, vo) = if joint.kind == JointKind::Floating {
                    for k in 0..3 {
                        out[iq + k] = v[iv + k];
                    }
                    (iq + 3, iv + 3)
                } else {
                    (iq, iv)
                };
                let rows = quaternion_rate_rows([q[qo], q[qo + 1], q[qo + 2], q[qo + 3]]);
                for (r, row) in rows.iter().enumerate() {
                    let mut rate = T::zero();
                    for (c, val) in row.iter().enumerate() {
                        rate += half * *val * v[vo + c];
                    }
                    out[qo + r] = rate;
                }
            }
        }
    }
    out
}

/// Explicit step `q + h N(q) v`, then every floating joint's quaternion is renormalized
/// (left unchanged if its norm vanishes; see [`normalize_configuration`] for a checked
/// version).
///
/// # Panics
/// If `q.len() != model.nq()` or `v.len() != model.nv()`.
pub fn integrate_configuration<T: Scalar>(
    model: &Model,
    q: &DVector<T>,
    v: &DVector<T>,
    h: T,
) -> DVector<T> {
    let mut out = q + configuration_rate(model, q, v) * h;
    let tiny: T = lift(1e-300);
    for joint in &model.joints {
        if let Some(offset) = joint.kind.quaternion_offset() {
            let mut quat = out.fixed_rows_mut::<4>(joint.q_index + offset);
            let norm = quat.norm();
            if norm > tiny {
                quat /= norm;
            }
        }
    }
    out
}

/// Renormalizes every floating joint's quaternion in place.
///
/// # Errors
/// [`ModelError::DimensionMismatch`] if `q.len() != model.nq()`;
/// [`ModelError::UnnormalizableQuaternion`] (field like ``q[3..7] (joint `name`)``) if a
/// quaternion's norm is below 1e-9 or not finite.
pub fn normalize_configuration<T: Scalar>(
    model: &Model,
    q: &mut DVector<T>,
) -> Result<(), ModelError> {
    if q.len() != model.nq() {
        return Err(ModelError::DimensionMismatch {
            location: Location::field("q"),
            expected: model.nq(),
            got: q.len(),
        });
    }
    for joint in &model.joints {
        let Some(offset) = joint.kind.quaternion_offset() else {
            continue;
        };
        let i = joint.q_index + offset;
        let mut quat = q.fixed_rows_mut::<4>(i);
        let norm = quat.norm();
        let norm_f64 = nalgebra::try_convert::<T, f64>(norm).unwrap_or(f64::NAN);
        if !norm_f64.is_finite() || norm_f64 < 1e-9 {
            return Err(ModelError::UnnormalizableQuaternion {
                location: Location::field(format!("q[{}..{}] (joint `{}`)", i, i + 4, joint.name)),
                norm: norm_f64,
            });
        }
        quat /= norm;
    }
    Ok(())
}

/// The neutral configuration: zero joint coordinates and identity quaternions.
pub fn neutral_configuration(model: &Model) -> DVector<f64> {
    let mut q = DVector::zeros(model.nq());
    for joint in &model.joints {
        if let Some(offset) = joint.kind.quaternion_offset() {
            q[joint.q_index + offset] = 1.0;
        }
    }
    q
}

/// Checks a state's dimensions and finiteness.
///
/// # Errors
/// [`ModelError::DimensionMismatch`] (field `q` or `v`) on wrong lengths;
/// [`ModelError::NonFinite`] (field like `q[4]`) on NaN or infinite entries.
pub fn check_state(model: &Model, q: &DVector<f64>, v: &DVector<f64>) -> Result<(), ModelError> {
    for (name, vec, expected) in [("q", q, model.nq()), ("v", v, model.nv())] {
        if vec.len() != expected {
            return Err(ModelError::DimensionMismatch {
                location: Location::field(name),
                expected,
                got: vec.len(),
            });
        }
        if let Some((i, x)) = vec.iter().enumerate().find(|(_, x)| !x.is_finite()) {
            return Err(ModelError::NonFinite {
                location: Location::field(format!("{name}[{i}]")),
                value: *x,
            });
        }
    }
    Ok(())
}
