//! Differences of configurations and states in the tangent space, in the coordinates of
//! `nonsmooth_sim::derivatives` (MuJoCo's `mj_differentiatePos` convention): a floating or
//! ball joint's orientation as its body-frame rotation vector, its position as the
//! world-frame translation, every other coordinate itself.
//!
//! `q ⊖ q̄` is the tangent vector `δ` at `q̄` with `q = q̄ ⊕ δ`: for a quaternion the logarithm
//! `δ = 2 log(q̄⁻¹ ⊗ q)` (Sola, *Quaternion kinematics for the error-state Kalman filter*,
//! eqs. 105 and 174: the body-frame, or "right", error), so that `q̄ ⊕ δ` reaches `q`
//! exactly by the exponential map and to first order by the simulator's retraction
//! `q̄ + ½ G(q̄) δ` renormalized, which are the columns of a step's `A`.

use nalgebra::{DVector, Quaternion, UnitQuaternion};
use nonsmooth_core::dynamics::check_state;
use nonsmooth_core::{JointKind, Model, ModelError, State};

/// The tangent vector `q ⊖ q_ref` (length `n_v`) at `q_ref` (see the module documentation).
///
/// # Errors
/// [`ModelError::DimensionMismatch`] or [`ModelError::NonFinite`] for a configuration that
/// is not one of `model`.
pub fn configuration_difference(
    model: &Model,
    q: &DVector<f64>,
    q_ref: &DVector<f64>,
) -> Result<DVector<f64>, ModelError> {
    let zero_v = DVector::zeros(model.nv());
    check_state(model, q, &zero_v)?;
    check_state(model, q_ref, &zero_v)?;
    let mut out = DVector::zeros(model.nv());
    for joint in &model.joints {
        let (iq, iv) = (joint.q_index, joint.v_index);
        match joint.kind {
            JointKind::Fixed => {}
            JointKind::Revolute | JointKind::Prismatic => out[iv] = q[iq] - q_ref[iq],
            JointKind::Planar => {
                for k in 0..3 {
                    out[iv + k] = q[iq + k] - q_ref[iq + k];
                }
            }
            JointKind::Floating | JointKind::Ball => {
                let (qo, vo) = if joint.kind == JointKind::Floating {
                    for k in 0..3 {
                        out[iv + k] = q[iq + k] - q_ref[iq + k];
                    }
                    (iq + 3, iv + 3)
                } else {
                    (iq, iv)
                };
                let quaternion = |x: &DVector<f64>| {
                    UnitQuaternion::from_quaternion(Quaternion::new(
                        x[qo],
                        x[qo + 1],
                        x[qo + 2],
                        x[qo + 3],
                    ))
                };
                // `scaled_axis` is the rotation vector of the shortest rotation: the
                // logarithm of ±(q̄⁻¹ ⊗ q), the double cover removed.
                let rotation = (quaternion(q_ref).inverse() * quaternion(q)).scaled_axis();
                for k in 0..3 {
                    out[vo + k] = rotation[k];
                }
            }
        }
    }
    Ok(out)
}

/// The tangent vector `x ⊖ x_ref` of states (length `2 n_v`): the configurations' difference
/// ([`configuration_difference`]), then the velocities' (the rows of a step's derivatives).
///
/// # Errors
/// As [`configuration_difference`], and for velocities of the wrong length or not finite.
pub fn state_difference(
    model: &Model,
    x: &State,
    x_ref: &State,
) -> Result<DVector<f64>, ModelError> {
    check_state(model, &x.q, &x.v)?;
    check_state(model, &x_ref.q, &x_ref.v)?;
    let nv = model.nv();
    let dq = configuration_difference(model, &x.q, &x_ref.q)?;
    let mut out = DVector::zeros(2 * nv);
    out.rows_mut(0, nv).copy_from(&dq);
    out.rows_mut(nv, nv).copy_from(&(&x.v - &x_ref.v));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nonsmooth_core::dynamics::integrate_configuration;

    const SLIDING_BOX: &str = include_str!("../../../examples/sliding_box.toml");

    #[test]
    fn the_difference_inverts_a_small_retraction() {
        let model = Model::from_toml_str(SLIDING_BOX, None).unwrap();
        let q_ref = model.initial_state.q.clone();
        let delta = DVector::from_vec(vec![0.01, -0.02, 0.003, 1e-4, -2e-4, 3e-4]);
        let q = integrate_configuration(&model, &q_ref, &delta, 1.0);
        let back = configuration_difference(&model, &q, &q_ref).unwrap();
        // The retraction is the exponential map to second order in the rotation.
        assert!((&back - &delta).amax() < 1e-7, "{back} vs {delta}");
    }

    #[test]
    fn the_difference_of_a_quarter_turn_is_its_rotation_vector() {
        let model = Model::from_toml_str(SLIDING_BOX, None).unwrap();
        let q_ref = model.initial_state.q.clone();
        let mut q = q_ref.clone();
        let half = std::f64::consts::FRAC_PI_4;
        q[3] = half.cos();
        q[6] = half.sin();
        let d = configuration_difference(&model, &q, &q_ref).unwrap();
        assert!((d[5] - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert!(d.rows(0, 5).amax() < 1e-12);
        // The double cover: −q is the same orientation.
        let mut minus = q.clone();
        for k in 3..7 {
            minus[k] = -q[k];
        }
        let d2 = configuration_difference(&model, &minus, &q_ref).unwrap();
        assert!((d2 - d).amax() < 1e-12);
    }
}
