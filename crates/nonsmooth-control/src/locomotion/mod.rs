//! The quadruped locomotion testbed of Zapolsky & Drumwright (2017, §7.1, §7.2, §7.5):
//! a trot planner with swing splines and stance feet in the trunk frame, analytic leg
//! inverse kinematics, the four planar terrains (rigid/compliant × μ = 0.1/∞), and the
//! closed loop (controller + nonsmooth's own time stepper at a fixed step) with fall and
//! chatter detection.
//!
//! Actuation inside the loop: the torque u is held over the control step (zero-order hold)
//! and the stepper applies `Pᵀu` inside each step (`Stepper::step_actuated`): in the velocity
//! update `M (v⁺ − v) = h (f(q, v) + Pᵀu) + Jᵀλ`, so the non-contact forces are evaluated at
//! the pre-step velocity, as in the inverse dynamics.
//!
//! Definitions (documented in `docs/locomotion.md`):
//! - **fall**: the trunk height drops below half its nominal standing height, the trunk's up
//!   axis tilts more than 45° from vertical, the state becomes non-finite, or the stepper or
//!   the controller fails; the run stops there;
//! - **chatter**: a *torque reversal* is a joint whose torque rate |Δu/Δt| exceeds
//!   [`LoopOptions::chatter_rate`] on two consecutive steps with opposite signs; the run
//!   chatters when [`LoopOptions::chatter_run_steps`] consecutive steps have one (the
//!   decision in [`crate::controllers::CHATTER_RUN_STEPS`]).

mod gait;
mod run;

pub use gait::{leg_ik, GaitPlanner, LegGeometry};
pub use run::{
    bumpy_height_map, reference_quadruped, run_closed_loop, run_trot, terrain_by_id, terrain_model,
    time_of_contact, LocoError, LoopOptions, LoopRecord, Terrain, TrotRun, TrotSpec,
    HEIGHTMAP_TERRAIN, TERRAINS, TOI_MIN_FRACTION, TOI_MIN_GAP,
};
