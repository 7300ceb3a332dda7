//! # nonsmooth-core
//!
//! Models, multibody kinematics and dynamics, contact geometry and the [`ContactSnapshot`]:
//! a mechanical system with contacts frozen at a state, which every capability of nonsmooth
//! (simulation, impacts, inverse dynamics, optimal control, stability) consumes.
//!
//! - [`model`]: the in-memory model and the conventions (units, signs, coordinates);
//! - [`io`]: the TOML model format and URDF import, with file/line/field errors;
//! - [`dynamics`]: CRBA, RNEA, Jacobians and J̇v, forward dynamics, configuration integration;
//! - [`geometry`]: closed-form contact primitives and the collider-pair dispatcher;
//! - [`snapshot`]: the [`ContactSnapshot`] built from a model and a state.
//!
//! All kinematic and dynamic routines are generic over [`Scalar`] so that dual numbers give
//! exact derivatives. Sign conventions are stated in [`model`].
#![warn(missing_docs)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod dynamics;
pub mod error;
pub mod geometry;
pub mod io;
pub mod model;
pub mod scalar;
pub mod snapshot;

pub use error::{Location, ModelError};
pub use io::{ParameterAxis, ParameterPath, UrdfOptions};
pub use model::*;
pub use scalar::{lift, Scalar};
pub use snapshot::{BlockContact, BodyRows, ConstraintRow, Contact, ContactSnapshot, DenseRows};
