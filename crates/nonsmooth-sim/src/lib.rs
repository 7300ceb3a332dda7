//! # nonsmooth-sim
//!
//! Forward time stepping of models with contact, behind one [`Stepper`] trait, and the run
//! loop that records a [`Trajectory`].
//!
//! Steppers available now (select by name with [`stepper_by_name`]; with no name, the model
//! decides: [`default_stepper`]):
//! - `penalty-symplectic`: spring–damper contact, semi-implicit (symplectic) Euler;
//! - `penalty-explicit`: spring–damper contact, explicit Euler;
//! - `drumwright`: Drumwright's unconditionally stable first-order constraint solver
//!   (Drumwright 2019), see [`drumwright`];
//! - `penalty-implicit`, `rk45`, `bdf`: implicit Euler (Newton), adaptive Dormand–Prince and
//!   variable-step BDF(1) on the penalty-contact ODE, see [`ode`];
//! - `anitescu-potra`: velocity-level LCP time stepping with a friction pyramid, see
//!   [`anitescu`];
//! - `qp-max-dissipation`: complementarity-free maximal-dissipation QP time stepping (the
//!   forward model of the two-stage QP inverse dynamics of Zapolsky & Drumwright 2017), see
//!   [`max_dissipation`];
//! - `time-as-state-di`: Halm & Posa's time-as-state impact inclusion, which resolves each
//!   simultaneous frictional impact at its instant, see [`time_as_state`].
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]
#![warn(missing_docs)]

pub mod actuation;
pub mod anitescu;
pub mod choice;
pub mod contact_law;
mod contact_set;
pub mod derivatives;
pub mod drumwright;
pub mod error;
pub mod external_load;
mod free_motion;
pub mod max_dissipation;
pub mod ode;
pub mod penalty;
pub mod pipeline;
pub mod recovery;
pub mod registry;
pub mod run;
pub mod scenes;
pub mod simulator;
pub mod stepper;
pub mod time_as_state;
pub mod warnings;

pub use actuation::Actuation;
pub use anitescu::{AnitescuPotraStepper, ApStepReport, Restart};
pub use choice::{
    choose_stepper, default_stepper, RunSettings, StepperChoice, DEFAULT_DT, DEFAULT_DURATION,
};
pub use derivatives::{
    step_derivatives, DerivativeMethod, DerivativeOptions, Parameter, StepDerivatives,
};
pub use drumwright::{DrumwrightOptions, DrumwrightStepper};
pub use error::SimError;
pub use free_motion::MAX_DEPENETRATION_SPEED;
pub use max_dissipation::{MaxDissipationImpulses, MaxDissipationStepper};
pub use ode::{BdfStepper, ImplicitEulerStepper, Rk45Stepper};
pub use penalty::{PenaltyIntegrator, PenaltyStepper};
pub use pipeline::Step;
pub use recovery::Recoveries;
pub use registry::{stepper_by_name, STEPPER_NAMES};
pub use run::{
    run_simulation, simulate, simulate_recording_impulses, BodyApexes, Run, SimOptions,
    StepImpulses, Trajectory,
};
pub use simulator::{step_contacts, ContactRecord, SimCounters, Simulator};
pub use stepper::{ContactImpulse, Stepper};
pub use time_as_state::{ImpactRecord, TimeAsStateDi, TIME_AS_STATE_DI};
pub use warnings::{load_warnings, model_warnings, stepper_warnings};
