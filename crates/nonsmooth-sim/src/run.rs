//! The run loop: repeated steps from an initial state, recorded into a [`Trajectory`]
//! ([`simulate`]; with the contacts and contact impulses of the recorded states:
//! [`simulate_recording_contacts`]).

use crate::{ContactRecord, SimError, Stepper};
use nalgebra::DVector;
use nonsmooth_core::{Model, State};

/// Options of a simulation run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimOptions {
    /// Step size h (s), > 0.
    pub dt: f64,
    /// Simulated duration T (s), ≥ 0. The run takes ⌈T/h⌉ steps (within 10⁻⁹ relative).
    pub duration: f64,
    /// Record every k-th state (k ≥ 1); the initial and final states are always recorded.
    pub record_every: usize,
}

impl SimOptions {
    /// Validates the options and returns the number of steps.
    pub fn steps(&self) -> Result<usize, SimError> {
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return Err(SimError::InvalidOption {
                option: "dt",
                reason: format!("must be positive and finite, got {}", self.dt),
            });
        }
        if !(self.duration.is_finite() && self.duration >= 0.0) {
            return Err(SimError::InvalidOption {
                option: "duration",
                reason: format!("must be non-negative and finite, got {}", self.duration),
            });
        }
        if self.record_every == 0 {
            return Err(SimError::InvalidOption {
                option: "record_every",
                reason: "must be at least 1".into(),
            });
        }
        Ok((self.duration / self.dt * (1.0 - 1e-9)).ceil() as usize)
    }
}

/// Recorded states of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    /// Name of the stepper that produced it.
    pub stepper: String,
    /// Names of the configuration coordinates (`Model::q_names`).
    pub q_names: Vec<String>,
    /// Names of the velocity coordinates (`Model::v_names`).
    pub v_names: Vec<String>,
    /// Recorded times in s.
    pub t: Vec<f64>,
    /// Recorded configurations (one per entry of `t`).
    pub q: Vec<DVector<f64>>,
    /// Recorded velocities (one per entry of `t`).
    pub v: Vec<DVector<f64>>,
    /// Steps taken.
    pub steps: usize,
    /// Failed steps recovered by smaller steps ([`crate::recovery`]).
    pub recoveries: crate::Recoveries,
    /// The contacts of each recorded state (one entry per entry of `t`) when the run
    /// recorded them ([`simulate_recording_contacts`]); empty otherwise.
    pub contacts: Vec<RecordedContacts>,
}

/// The contacts of one recorded state: their geometry at the state and the impulses of the
/// step taken from it, where the stepper reports them ([`crate::step_contacts`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RecordedContacts {
    /// Size of the step from this state over which the impulses were applied (s); 0 where
    /// no step from the state was recorded (the last state).
    pub h: f64,
    /// The contacts, in the order of the stepper's snapshot.
    pub contacts: Vec<ContactRecord>,
}

impl RecordedContacts {
    /// `(point, normal, gap, force)` of each contact: the force (N, on collider A) is the
    /// impulse over the step divided by its size, `None` where the impulses are unknown.
    pub fn forces(&self) -> impl Iterator<Item = Option<nalgebra::Vector3<f64>>> + '_ {
        self.contacts.iter().map(|c| c.force(self.h))
    }
}

impl Trajectory {
    /// Column names of [`Trajectory::rows`]: `t`, then every q and v coordinate.
    pub fn header(&self) -> Vec<String> {
        std::iter::once("t".to_string())
            .chain(self.q_names.iter().map(|n| format!("q:{n}")))
            .chain(self.v_names.iter().map(|n| format!("v:{n}")))
            .collect()
    }

    /// One row per recorded state: (t, q…, v…).
    pub fn rows(&self) -> Vec<Vec<f64>> {
        (0..self.t.len())
            .map(|i| {
                std::iter::once(self.t[i])
                    .chain(self.q[i].iter().copied())
                    .chain(self.v[i].iter().copied())
                    .collect()
            })
            .collect()
    }

    /// The last recorded state.
    pub fn final_state(&self) -> Option<State> {
        let i = self.t.len().checked_sub(1)?;
        Some(State {
            q: self.q[i].clone(),
            v: self.v[i].clone(),
            t: self.t[i],
        })
    }
}

/// Simulates `model` from `initial` with `stepper`. `progress(done, total)` is called after
/// every step so callers can draw a progress bar. Failed steps are recovered by smaller steps
/// and counted in [`Trajectory::recoveries`] ([`crate::recovery`]).
///
/// # Errors
/// Invalid options as [`SimError::InvalidOption`]; a failing step as
/// [`SimError::StepFailed`] with the step index, time, cause and the partial trajectory
/// (never a silently propagated non-finite state).
pub fn simulate(
    model: &Model,
    stepper: &mut dyn Stepper,
    initial: &State,
    options: &SimOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Trajectory, SimError> {
    run_loop(model, stepper, initial, options, progress, false)
}

/// [`simulate`], also recording the contacts of every recorded state into
/// [`Trajectory::contacts`]: their geometry (the stepper's snapshot of the state) and the
/// impulses of the step taken from it where the stepper reports them
/// ([`Stepper::last_contact_impulses`]: `drumwright`, `anitescu-potra`,
/// `qp-max-dissipation`). A step recovered by smaller steps, and the last state, record the
/// geometry only. Costs one contact snapshot per recorded state; a snapshot that cannot be
/// built records no contacts.
///
/// # Errors
/// As [`simulate`]; the partial trajectory of a failed step has its contacts too.
pub fn simulate_recording_contacts(
    model: &Model,
    stepper: &mut dyn Stepper,
    initial: &State,
    options: &SimOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Trajectory, SimError> {
    run_loop(model, stepper, initial, options, progress, true)
}

fn run_loop(
    model: &Model,
    stepper: &mut dyn Stepper,
    initial: &State,
    options: &SimOptions,
    progress: &mut dyn FnMut(usize, usize),
    record_contacts: bool,
) -> Result<Trajectory, SimError> {
    let geometry = |stepper: &dyn Stepper, state: &State, h: f64| RecordedContacts {
        h: 0.0,
        contacts: crate::contact_geometry(model, stepper, state, h).unwrap_or_default(),
    };
    let steps = options.steps()?;
    let mut traj = Trajectory {
        stepper: stepper.name().to_string(),
        q_names: model.q_names(),
        v_names: model.v_names(),
        t: vec![initial.t],
        q: vec![initial.q.clone()],
        v: vec![initial.v.clone()],
        steps,
        recoveries: crate::Recoveries::default(),
        contacts: Vec::new(),
    };
    let mut state = initial.clone();
    for i in 1..=steps {
        let h = if i == steps {
            (initial.t + options.duration - state.t).max(options.dt * 1e-9)
        } else {
            options.dt
        };
        let h = h.min(options.dt);
        // The state this step starts from is recorded: record its contacts with this
        // step's impulses.
        let start_recorded = record_contacts && (i - 1) % options.record_every == 0;
        let halvings = traj.recoveries.step_halving;
        let step = crate::step_with_recovery(
            stepper,
            model,
            &state,
            &crate::Actuation::none(),
            h,
            &mut traj.recoveries,
        );
        state = match step {
            Ok(next) => {
                if start_recorded {
                    traj.contacts
                        .push(if traj.recoveries.step_halving == halvings {
                            RecordedContacts {
                                h,
                                contacts: crate::step_contacts(model, stepper, &state, h)
                                    .unwrap_or_default(),
                            }
                        } else {
                            geometry(stepper, &state, h)
                        });
                }
                next
            }
            Err(source) => {
                if start_recorded {
                    traj.contacts.push(geometry(stepper, &state, h));
                }
                return Err(SimError::StepFailed {
                    step: i,
                    t: state.t,
                    source: Box::new(source),
                    partial: Box::new(traj),
                });
            }
        };
        if i % options.record_every == 0 || i == steps {
            traj.t.push(state.t);
            traj.q.push(state.q.clone());
            traj.v.push(state.v.clone());
        }
        progress(i, steps);
    }
    if record_contacts && traj.contacts.len() < traj.t.len() {
        traj.contacts.push(geometry(stepper, &state, options.dt));
    }
    Ok(traj)
}
