//! # nonsmooth-sim
//!
//! Forward time stepping of models with contact, behind one [`Stepper`] trait, and the run
//! loop that records a [`Trajectory`].
//!
//! Steppers available now (select by name with [`stepper_by_name`]):
//! - `penalty-symplectic`: spring–damper contact, semi-implicit (symplectic) Euler;
//! - `penalty-explicit`: spring–damper contact, explicit Euler.

pub mod contact_law;
pub mod error;
pub mod penalty;
pub mod run;
pub mod stepper;

pub use error::SimError;
pub use penalty::{PenaltyIntegrator, PenaltyStepper};
pub use run::{simulate, SimOptions, Trajectory};
pub use stepper::{stepper_by_name, Stepper, STEPPER_NAMES};
