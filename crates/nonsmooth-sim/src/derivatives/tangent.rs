//! Configurations and their tangent space: the perturbation `q ⊕ δ` of a configuration
//! along a velocity-space direction `δ` (a retraction), the tangent `δ` of a change of
//! configuration, and the linearization of the configuration update `q₁ = q₀ ⊕ h v₁`
//! (computed with dual numbers through the generic [`integrate_configuration`]).
//!
//! For a floating or ball joint the tangent of its quaternion is the body-frame rotation
//! vector: `q̇ = ½ G(q) ω` ([`quaternion_rate_rows`]) and `Gᵀ G = I` for a unit quaternion,
//! so `ω = 2 Gᵀ q̇`. Other coordinates are their own tangent.

use nalgebra::DVector;
use nonsmooth_core::dynamics::{integrate_configuration, quaternion_rate_rows};
use nonsmooth_core::{JointKind, Model};
use num_dual::Dual64;

/// `q ⊕ δ`: the configuration reached from `q` along the velocity-space direction `δ` in
/// unit time (quaternions renormalized); its derivative in `δ` at 0 is `N(q)`.
pub(super) fn retract(model: &Model, q: &DVector<f64>, delta: &DVector<f64>) -> DVector<f64> {
    integrate_configuration(model, q, delta, 1.0)
}

/// The tangent (velocity-space) vector of a change `dq` of configuration at `q`:
/// `N(q)⁺ dq`, joint by joint.
pub(super) fn to_tangent(model: &Model, q: &DVector<f64>, dq: &DVector<f64>) -> DVector<f64> {
    let mut out = DVector::zeros(model.nv());
    for joint in &model.joints {
        let (iq, iv) = (joint.q_index, joint.v_index);
        match joint.kind {
            JointKind::Revolute | JointKind::Prismatic => out[iv] = dq[iq],
            JointKind::Fixed => {}
            JointKind::Planar => {
                for k in 0..3 {
                    out[iv + k] = dq[iq + k];
                }
            }
            JointKind::Floating | JointKind::Ball => {
                let (qo, vo) = if joint.kind == JointKind::Floating {
                    for k in 0..3 {
                        out[iv + k] = dq[iq + k];
                    }
                    (iq + 3, iv + 3)
                } else {
                    (iq, iv)
                };
                let g = quaternion_rate_rows([q[qo], q[qo + 1], q[qo + 2], q[qo + 3]]);
                for c in 0..3 {
                    out[vo + c] = 2.0 * (0..4).map(|r| g[r][c] * dq[qo + r]).sum::<f64>();
                }
            }
        }
    }
    out
}

/// The tangent at `q₁ = q ⊕ h v₁` of the change of `q₁` when `q` moves along the tangent
/// direction `dq_tangent` (none: `q` fixed) and `v₁` changes by `dv1`: the directional
/// derivative of the configuration update, exact (dual numbers).
pub(super) fn next_configuration_tangent(
    model: &Model,
    q: &DVector<f64>,
    v1: &DVector<f64>,
    h: f64,
    dq_tangent: Option<&DVector<f64>>,
    dv1: &DVector<f64>,
) -> DVector<f64> {
    let qd: DVector<Dual64> = match dq_tangent {
        Some(d) => {
            let q0 = q.map(Dual64::from);
            let delta = d.map(|x| Dual64::new(0.0, x));
            integrate_configuration(model, &q0, &delta, Dual64::from(1.0))
        }
        None => q.map(Dual64::from),
    };
    let vd = DVector::from_iterator(
        v1.len(),
        v1.iter().zip(dv1.iter()).map(|(&a, &b)| Dual64::new(a, b)),
    );
    let q1 = integrate_configuration(model, &qd, &vd, Dual64::from(h));
    let value = q1.map(|x| x.re);
    let dq1 = q1.map(|x| x.eps);
    to_tangent(model, &value, &dq1)
}
