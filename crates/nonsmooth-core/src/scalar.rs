//! The scalar abstraction shared by all dynamics code.
//!
//! Every kinematic and dynamic routine in `nonsmooth-core` is generic over [`Scalar`], so the
//! same code yields `f64` values for simulation and exact derivatives when instantiated with
//! dual numbers (e.g. `num_dual::Dual64`) for the optimal-control NLPs. Model parameters are
//! stored as `f64` and lifted with [`lift`].

use nalgebra::RealField;

/// A real scalar usable by all dynamics code: `f64`, `f32` or a dual number.
pub trait Scalar: RealField + Copy {}

impl<T: RealField + Copy> Scalar for T {}

/// Lifts an `f64` model parameter into the scalar type `T`.
#[inline]
pub fn lift<T: Scalar>(x: f64) -> T {
    nalgebra::convert::<f64, T>(x)
}

/// The real part of a scalar (the value of a dual number; NaN where `T` has none).
#[inline]
pub fn real_part<T: Scalar>(x: T) -> f64 {
    nalgebra::try_convert::<T, f64>(x).unwrap_or(f64::NAN)
}

/// Lifts an `f64` 3-vector into `T`.
#[inline]
pub fn lift3<T: Scalar>(v: &nalgebra::Vector3<f64>) -> nalgebra::Vector3<T> {
    v.map(lift::<T>)
}

/// Lifts an `f64` 3×3 matrix into `T`.
#[inline]
pub fn lift33<T: Scalar>(m: &nalgebra::Matrix3<f64>) -> nalgebra::Matrix3<T> {
    m.map(lift::<T>)
}
