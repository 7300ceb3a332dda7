//! The arm grasp testbed of Zapolsky & Drumwright (2017), §§7–8 (paper §7.1
//! "Manipulator", §8.4.1, Table 6 rows "fixed base manipulator grasping a high / low friction
//! object"): a fixed-base 7-DOF arm with a 4-finger hand (11 actuated DOF) holds a free box
//! (6 unactuated DOF, density 6000 kg/m³) with four point fingertip contacts and carries it
//! along a planned path, simulated by nonsmooth's own Anitescu–Potra stepper at 1 ms.
//!
//! - Model: `examples/id_arm_hand_box.toml` (0.06 m cube, 1.296 kg; point fingertips on the
//!   ±y faces at mid-height), with the fingertip friction of the case ([`GraspFriction`]:
//!   high μ = ∞, represented by μ = 100 in the plant; low μ = 1.0).
//! - Task ([`GraspPlan::lift_and_move`]): lift the box about 6.6 cm in 0.25–1.25 s, move it
//!   about 8 cm sideways (along the grasp axis) in 1.25–2.75 s, hold until 3 s; quintic
//!   (minimum-jerk) joint-space segments; the fingers keep their grasp position with zero
//!   velocity and acceleration (§7.2.2), the PID's fingers are commanded to close further
//!   ([`PID_FINGER_CLOSURE`]).
//! - Controllers ([`grasp_controller`]): `qp_mu`, `qp_inf`, `lcp_mu`, `lcp_inf` (ID(tᵢ) with
//!   the active fingertip–box contacts, [`GraspId`]: a [`GRASP_PRELOAD`] of 1 N per
//!   fingertip as a known internal force, and for the QP variants a Stage I that aims at the
//!   box carried by the hand instead of at rest), `pid`, `delay1`, `delay2`.
//! - **Drop**: the box centre, expressed in the palm frame, moves more than 1 cm from where it
//!   was grasped ([`GraspOptions::drop_slip`]; the fingertips sit 3 cm above the box's lower
//!   edge, so 1 cm is a third of the way out). **Chatter**: the locomotion testbed's
//!   definition (torque reversals above 500 N·m/s on more than 5 % of the steps).
//!   **Pass** = no drop, no chatter, no solver/stepper failure.
//!
//! See `docs/grasping.md` for the parameters and the measured pass/fail table.

mod controller;
mod plan;
mod run;

use crate::error::ControlError;

pub use controller::{GraspId, GRASP_PRELOAD};
pub use plan::{actuator_of, GraspPlan, Segment, LIFT_ANGLE, SIDEWAYS_ANGLE};
pub use run::{
    arm_hand_box_model, box_force, finger_closure, grasp_controller, grasp_model,
    predicted_contact_force, run_grasp, run_grasp_task, run_grasp_task_with, static_grasp,
    GraspFriction, GraspOptions, GraspPlant, GraspRecord, ARM_HAND_BOX_TOML, PID_FINGER_CLOSURE,
    PID_GAINS, PLANT_MAX_SPEED,
};

/// Errors of the grasp testbed.
#[derive(Debug, thiserror::Error)]
pub enum GraspError {
    /// A controller error.
    #[error(transparent)]
    Control(#[from] ControlError),
    /// A simulator error.
    #[error(transparent)]
    Sim(#[from] nonsmooth_sim::SimError),
    /// A model error.
    #[error(transparent)]
    Model(#[from] nonsmooth_core::ModelError),
    /// Invalid testbed input.
    #[error("{0}")]
    Invalid(String),
}
