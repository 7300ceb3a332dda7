//! # nonsmooth-core
//!
//! Models, multibody kinematics and dynamics, contact geometry and the [`ContactSnapshot`]:
//! a mechanical system with contacts frozen at a state, which every capability of nonsmooth
//! (simulation, impacts, inverse dynamics, optimal control, stability) consumes.
//!
//! All kinematic and dynamic routines are generic over [`Scalar`] so that dual numbers give
//! exact derivatives. Sign conventions are stated in [`model`].

pub mod error;
pub mod model;
pub mod scalar;

pub use error::{Location, ModelError};
pub use model::*;
pub use scalar::{lift, Scalar};
