//! The planned "grasp and move a box" task: a joint-space path of the arm made of
//! minimum-jerk (quintic) segments, with the fingers held at their grasp positions.

use nalgebra::DVector;
use nonsmooth_core::Model;

use super::GraspError;
use crate::controllers::{actuated_positions, JointReference};

/// One joint-space segment: between `start` and `end` (s) the listed actuators move by the
/// given amounts with the minimum-jerk blend `s(τ) = 10τ³ − 15τ⁴ + 6τ⁵`, τ = (t − start) /
/// (end − start) (zero velocity and acceleration at both ends; Flash & Hogan 1985).
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Start time (s).
    pub start: f64,
    /// End time (s), > `start`.
    pub end: f64,
    /// (actuator index, displacement in rad or m) pairs.
    pub moves: Vec<(usize, f64)>,
}

/// The planned joint trajectory of the arm and the hand (paper §7.2.2: the fingers keep zero
/// velocity and acceleration while gripping).
#[derive(Debug, Clone, PartialEq)]
pub struct GraspPlan {
    /// Actuated joint positions at t = 0 (length nu).
    pub home: DVector<f64>,
    /// The arm's motion segments (their displacements add up).
    pub segments: Vec<Segment>,
    /// Indices of the finger actuators (prismatic, positive = closing onto the box).
    pub fingers: Vec<usize>,
    /// Planned duration of the task (s).
    pub duration: f64,
}

/// Shoulder/wrist pitch angle of the lift (rad): the wrist (0.55 m from the shoulder) and
/// the box rise by about 0.55 · 0.12 ≈ 6.6 cm while the opposite wrist pitch keeps the palm
/// level.
pub const LIFT_ANGLE: f64 = 0.12;
/// Shoulder/wrist yaw angle of the sideways move (rad): about 0.55 · 0.15 ≈ 8 cm along +y,
/// the grasp axis.
pub const SIDEWAYS_ANGLE: f64 = 0.15;

/// Index of the actuator driving the joint called `joint`.
///
/// # Errors
/// [`GraspError::Invalid`] when the model has no such joint or it is not actuated.
pub fn actuator_of(model: &Model, joint: &str) -> Result<usize, GraspError> {
    let j = model
        .joint_index(joint)
        .ok_or_else(|| GraspError::Invalid(format!("the model has no joint {joint:?}")))?;
    model
        .actuators
        .iter()
        .position(|a| a.joint == j)
        .ok_or_else(|| GraspError::Invalid(format!("joint {joint:?} is not actuated")))
}

fn quintic(t: f64, start: f64, end: f64) -> (f64, f64, f64) {
    let len = end - start;
    if t <= start {
        return (0.0, 0.0, 0.0);
    }
    if t >= end {
        return (1.0, 0.0, 0.0);
    }
    let s = (t - start) / len;
    let (s2, s3) = (s * s, s * s * s);
    (
        10.0 * s3 - 15.0 * s3 * s + 6.0 * s3 * s2,
        (30.0 * s2 - 60.0 * s3 + 30.0 * s2 * s2) / len,
        (60.0 * s - 180.0 * s2 + 120.0 * s3) / (len * len),
    )
}

impl GraspPlan {
    /// The plan that holds the model's initial pose for `duration` seconds.
    ///
    /// # Errors
    /// [`GraspError::Invalid`] when the model lacks the fingers `f1_slide` … `f4_slide` of
    /// `examples/id_arm_hand_box.toml` or `duration` is not positive and finite.
    pub fn hold(model: &Model, duration: f64) -> Result<Self, GraspError> {
        if !(duration.is_finite() && duration > 0.0) {
            return Err(GraspError::Invalid(format!(
                "plan duration must be positive and finite, got {duration}"
            )));
        }
        let fingers = ["f1_slide", "f2_slide", "f3_slide", "f4_slide"]
            .iter()
            .map(|j| actuator_of(model, j))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            home: actuated_positions(model, &model.initial_state.q),
            segments: Vec::new(),
            fingers,
            duration,
        })
    }

    /// The task of the testbed (3 s): hold for 0.25 s; lift the box by about 6.6 cm in
    /// 0.25–1.25 s (shoulder pitch −[`LIFT_ANGLE`], wrist pitch +[`LIFT_ANGLE`]); move it
    /// sideways by about 8 cm along the grasp axis in 1.25–2.75 s (shoulder yaw
    /// +[`SIDEWAYS_ANGLE`], wrist yaw −[`SIDEWAYS_ANGLE`]); hold until 3 s.
    ///
    /// # Errors
    /// As [`GraspPlan::hold`], and when the arm joints of `examples/id_arm_hand_box.toml`
    /// are missing.
    pub fn lift_and_move(model: &Model) -> Result<Self, GraspError> {
        let mut plan = Self::hold(model, 3.0)?;
        let a = |j: &str| actuator_of(model, j);
        plan.segments.push(Segment {
            start: 0.25,
            end: 1.25,
            moves: vec![
                (a("shoulder_pitch")?, -LIFT_ANGLE),
                (a("wrist_pitch")?, LIFT_ANGLE),
            ],
        });
        plan.segments.push(Segment {
            start: 1.25,
            end: 2.75,
            moves: vec![
                (a("shoulder_yaw")?, SIDEWAYS_ANGLE),
                (a("wrist_yaw")?, -SIDEWAYS_ANGLE),
            ],
        });
        Ok(plan)
    }

    /// The reference at time `t`: the arm's planned position, velocity and acceleration, the
    /// fingers at their home position plus `finger_closure` (m, along their closing axes)
    /// with zero velocity and acceleration.
    ///
    /// # Errors
    /// [`GraspError::Invalid`] for a non-finite `t` or `finger_closure`, or a segment with
    /// `end ≤ start` or an actuator index out of range.
    pub fn reference(&self, t: f64, finger_closure: f64) -> Result<JointReference, GraspError> {
        if !(t.is_finite() && finger_closure.is_finite()) {
            return Err(GraspError::Invalid(format!(
                "non-finite time {t} or finger closure {finger_closure}"
            )));
        }
        let nu = self.home.len();
        let mut q = self.home.clone();
        let mut qd = DVector::zeros(nu);
        let mut qdd = DVector::zeros(nu);
        for seg in &self.segments {
            if seg.end.partial_cmp(&seg.start) != Some(std::cmp::Ordering::Greater) {
                return Err(GraspError::Invalid(format!(
                    "segment [{}, {}] is empty",
                    seg.start, seg.end
                )));
            }
            let (s, sd, sdd) = quintic(t, seg.start, seg.end);
            for &(i, d) in &seg.moves {
                if i >= nu {
                    return Err(GraspError::Invalid(format!(
                        "segment actuator {i} out of range ({nu} actuators)"
                    )));
                }
                q[i] += d * s;
                qd[i] += d * sd;
                qdd[i] += d * sdd;
            }
        }
        for &f in &self.fingers {
            if f >= nu {
                return Err(GraspError::Invalid(format!(
                    "finger actuator {f} out of range ({nu} actuators)"
                )));
            }
            q[f] += finger_closure;
        }
        Ok(JointReference::new(q, qd, qdd))
    }
}
