//! Centre of mass of the whole system and its Jacobian: the mass-weighted mean of the body
//! centres of mass, `c = Σ mᵢ pᵢ / Σ mᵢ`, and `J_c = Σ mᵢ J_{pᵢ} / Σ mᵢ` with `J_{pᵢ}` the
//! point Jacobian of body i's centre of mass (RBDA §2.13 for the composite centre of mass).

use nalgebra::{DVector, Matrix3xX, Vector3};

use super::jacobian::point_jacobian;
use super::kinematics::{kinematics, point_position, Kinematics};
use crate::model::Model;
use crate::scalar::{lift, lift3, Scalar};

/// Total mass of the model's bodies (kg).
pub fn total_mass(model: &Model) -> f64 {
    model.bodies.iter().map(|b| b.mass).sum()
}

/// World position of each body's centre of mass at the kinematics `kin`.
pub fn body_com_positions<T: Scalar>(model: &Model, kin: &Kinematics<T>) -> Vec<Vector3<T>> {
    model
        .bodies
        .iter()
        .enumerate()
        .map(|(i, b)| point_position(kin, Some(i), &lift3::<T>(&b.com)))
        .collect()
}

/// Centre of mass of the system at configuration `q` (world, m).
///
/// # Panics
/// If `q` is not sized for the model (validate with [`super::check_state`]).
pub fn center_of_mass<T: Scalar>(model: &Model, q: &DVector<T>) -> Vector3<T> {
    let v = DVector::zeros(model.nv());
    let kin = kinematics(model, q, &v);
    let total = lift::<T>(total_mass(model));
    body_com_positions(model, &kin)
        .iter()
        .zip(&model.bodies)
        .fold(Vector3::zeros(), |acc, (p, b)| acc + p * lift::<T>(b.mass))
        / total
}

/// Jacobian of the centre of mass (3 × nv): `ċ = J_c(q) v`.
///
/// # Panics
/// If `q` is not sized for the model.
pub fn com_jacobian<T: Scalar>(model: &Model, q: &DVector<T>) -> Matrix3xX<T> {
    let v = DVector::zeros(model.nv());
    let kin = kinematics(model, q, &v);
    let total = lift::<T>(total_mass(model));
    let mut jac = Matrix3xX::zeros(model.nv());
    for (i, (p, b)) in body_com_positions(model, &kin)
        .iter()
        .zip(&model.bodies)
        .enumerate()
    {
        jac += point_jacobian(model, &kin, Some(i), p) * (lift::<T>(b.mass) / total);
    }
    jac
}
