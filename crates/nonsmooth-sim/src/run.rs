//! The run loop: repeated steps from an initial state, recorded into a [`Trajectory`]
//! ([`simulate`]; with the contact impulses of the steps from the recorded states:
//! [`simulate_recording_impulses`]).

use crate::error::SimError;
use crate::simulator::ContactRecord;
use crate::stepper::ContactImpulse;
use crate::stepper::Stepper;
use nalgebra::DVector;
use nonsmooth_core::geometry::ContactMargins;
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
        crate::pipeline::check_step_size(self.dt)?;
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
    pub recoveries: crate::recovery::Recoveries,
    /// The contact impulses of the step taken from each recorded state (one entry per
    /// entry of `t`) when the run recorded them ([`simulate_recording_impulses`]), `None`
    /// where they are not known; empty when not recorded.
    pub impulses: Vec<Option<StepImpulses>>,
}

/// The contact impulses of the step taken from a recorded state, as the stepper reported
/// them ([`Stepper::last_contact_impulses`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StepImpulses {
    /// Size of the step (s).
    pub h: f64,
    /// The margins the stepper detected the step's contacts with
    /// ([`Stepper::contact_margins`]): a snapshot of the state with these has the contacts
    /// that [`ContactImpulse::contact`] indexes.
    pub margins: ContactMargins,
    /// The impulses (N·s).
    pub impulses: Vec<ContactImpulse>,
}

impl StepImpulses {
    /// The impulses of `stepper`'s last successful step of size `h` on `model`, where it
    /// reports them (for loops of one's own that record [`Trajectory::impulses`]).
    pub fn of_last_step(stepper: &dyn Stepper, model: &Model, h: f64) -> Option<Self> {
        stepper
            .last_contact_impulses(h)
            .map(|impulses| StepImpulses {
                h,
                margins: stepper.contact_margins(model, h),
                impulses,
            })
    }

    /// The contacts of `state` (the recorded state the step was taken from) with these
    /// impulses ([`crate::step_contacts`]); use [`ContactRecord::force`] with
    /// [`StepImpulses::h`] for the forces.
    ///
    /// # Errors
    /// [`SimError::Model`] when the contact snapshot cannot be built.
    pub fn contacts(&self, model: &Model, state: &State) -> Result<Vec<ContactRecord>, SimError> {
        crate::simulator::contact_records(model, state, &self.margins, Some(&self.impulses))
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

    /// The apexes of every moving body: the recorded heights of its origin (along −gravity;
    /// along z without gravity) at the local maxima that rise at least `prominence` (m) above
    /// the lowest point since the previous apex, the start height first when the body starts
    /// by falling. A bouncing body's apexes fall by the restitution e² per bounce (heights
    /// above its resting height). At most `limit` apexes a body.
    pub fn apexes(&self, model: &Model, prominence: f64, limit: usize) -> Vec<BodyApexes> {
        let g = model.gravity;
        let up = if g.norm() > 0.0 {
            -g / g.norm()
        } else {
            nalgebra::Vector3::z()
        };
        let heights: Vec<Vec<f64>> = self
            .q
            .iter()
            .zip(&self.v)
            .map(|(q, v)| {
                nonsmooth_core::dynamics::kinematics::kinematics(model, q, v)
                    .poses
                    .iter()
                    .map(|p| p.translation.vector.dot(&up))
                    .collect()
            })
            .collect();
        model
            .bodies
            .iter()
            .enumerate()
            .filter_map(|(b, body)| {
                let h: Vec<f64> = heights.iter().filter_map(|x| x.get(b).copied()).collect();
                let apexes = local_apexes(&h, prominence, limit);
                (!apexes.is_empty()).then(|| BodyApexes {
                    body: body.name.clone(),
                    heights: apexes,
                })
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

/// A run of [`run_simulation`]: the trajectory recorded up to the end, or up to the last good
/// step of a run that failed, and the failure beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The recorded states (up to the last good step when the run failed).
    pub trajectory: Trajectory,
    /// The failed step ([`SimError::StepFailed`]); `None` when the run reached its end.
    pub failure: Option<SimError>,
}

impl Run {
    /// The trajectory of a run that reached its end, else its failure.
    ///
    /// # Errors
    /// The run's [`SimError::StepFailed`].
    pub fn into_result(self) -> Result<Trajectory, SimError> {
        match self.failure {
            None => Ok(self.trajectory),
            Some(e) => Err(e),
        }
    }
}

/// The apexes of one body ([`Trajectory::apexes`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BodyApexes {
    /// The body's name.
    pub body: String,
    /// The heights of its origin at its apexes (m), in time order.
    pub heights: Vec<f64>,
}

/// The local maxima of `h` that rise at least `prominence` above the lowest point since the
/// previous one (the first sample too when the series starts by falling), at most `limit`.
fn local_apexes(h: &[f64], prominence: f64, limit: usize) -> Vec<f64> {
    let mut out = Vec::new();
    let Some(&first) = h.first() else {
        return out;
    };
    let mut low = first;
    if h.get(1).is_some_and(|&next| next < first) {
        out.push(first);
    }
    for i in 1..h.len().saturating_sub(1) {
        low = low.min(h[i]);
        if h[i] >= h[i - 1] && h[i] > h[i + 1] && h[i] - low >= prominence {
            out.push(h[i]);
            low = h[i];
            if out.len() >= limit {
                break;
            }
        }
    }
    out.truncate(limit);
    out
}

/// Simulates `model` from `initial` with `stepper`. `progress(done, total)` is called after
/// every step so callers can draw a progress bar. Failed steps are recovered by smaller steps
/// and counted in [`Trajectory::recoveries`] ([`crate::recovery`]).
///
/// # Errors
/// Invalid options as [`SimError::InvalidOption`]; a failing step as
/// [`SimError::StepFailed`] with the step index, time and cause (never a silently propagated
/// non-finite state). [`run_simulation`] keeps the states recorded before the failure.
pub fn simulate(
    model: &Model,
    stepper: &mut dyn Stepper,
    initial: &State,
    options: &SimOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Trajectory, SimError> {
    run_simulation(model, stepper, initial, options, false, progress)?.into_result()
}

/// [`simulate`], also recording into [`Trajectory::impulses`] the contact impulses of the
/// step taken from every recorded state, where the stepper reports them
/// ([`Stepper::last_contact_impulses`]: `drumwright`, `anitescu-potra`,
/// `qp-max-dissipation`); `None` for the other steppers, for a step recovered by smaller
/// steps and for the last state. The contacts themselves are not detected here (no extra
/// snapshot per step): [`StepImpulses::contacts`] rebuilds them from the recorded state.
///
/// # Errors
/// As [`simulate`].
pub fn simulate_recording_impulses(
    model: &Model,
    stepper: &mut dyn Stepper,
    initial: &State,
    options: &SimOptions,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Trajectory, SimError> {
    run_simulation(model, stepper, initial, options, true, progress)?.into_result()
}

/// The run of [`simulate`] (with `record_impulses`: of [`simulate_recording_impulses`]) that
/// keeps, beside a failed step's error, the states recorded before it (and their impulses).
///
/// # Errors
/// Invalid options as [`SimError::InvalidOption`]; a failed step is the run's
/// [`Run::failure`], not an error.
pub fn run_simulation(
    model: &Model,
    stepper: &mut dyn Stepper,
    initial: &State,
    options: &SimOptions,
    record_impulses: bool,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Run, SimError> {
    run_loop(model, stepper, initial, options, progress, record_impulses)
}

fn run_loop(
    model: &Model,
    stepper: &mut dyn Stepper,
    initial: &State,
    options: &SimOptions,
    progress: &mut dyn FnMut(usize, usize),
    record_impulses: bool,
) -> Result<Run, SimError> {
    let steps = options.steps()?;
    let mut traj = Trajectory {
        stepper: stepper.name().to_string(),
        q_names: model.q_names(),
        v_names: model.v_names(),
        t: vec![initial.t],
        q: vec![initial.q.clone()],
        v: vec![initial.v.clone()],
        steps,
        recoveries: crate::recovery::Recoveries::default(),
        impulses: Vec::new(),
    };
    let mut sim = crate::simulator::Simulator::borrowing(model, Box::new(stepper), options.dt)?;
    sim.set_state(initial.clone())?;
    let end = initial.t + options.duration;
    for i in 1..=steps {
        let h = if i == steps {
            (end - sim.t()).max(options.dt * 1e-9)
        } else {
            options.dt
        };
        let h = h.min(options.dt);
        // The state this step starts from is recorded: record this step's impulses.
        let start_recorded = record_impulses && (i - 1) % options.record_every == 0;
        let halvings = sim.counters().recoveries.step_halving;
        let step = sim.advance(&crate::actuation::Actuation::none(), h);
        traj.recoveries = sim.counters().recoveries;
        if start_recorded {
            let recovered = traj.recoveries.step_halving != halvings;
            traj.impulses.push(match (&step, recovered) {
                (Ok(()), false) => StepImpulses::of_last_step(sim.stepper(), model, h),
                _ => None,
            });
        }
        if let Err(source) = step {
            return Ok(Run {
                failure: Some(SimError::StepFailed {
                    step: i,
                    t: sim.t(),
                    source: Box::new(source),
                }),
                trajectory: traj,
            });
        }
        if i % options.record_every == 0 || i == steps {
            let state = sim.state();
            traj.t.push(state.t);
            traj.q.push(state.q.clone());
            traj.v.push(state.v.clone());
        }
        progress(i, steps);
    }
    if record_impulses && traj.impulses.len() < traj.t.len() {
        traj.impulses.push(None);
    }
    Ok(Run {
        trajectory: traj,
        failure: None,
    })
}

#[cfg(test)]
mod tests {
    use super::local_apexes;

    #[test]
    fn apexes_are_the_prominent_local_maxima() {
        // a drop from 1, bounces to 0.64 and 0.41, a 0.1 mm jitter at rest
        let h = [
            1.0, 0.5, 0.1, 0.5, 0.64, 0.3, 0.1, 0.41, 0.2, 0.1, 0.1001, 0.1, 0.1,
        ];
        assert_eq!(local_apexes(&h, 1e-3, 10), vec![1.0, 0.64, 0.41]);
        assert_eq!(local_apexes(&h, 1e-3, 2), vec![1.0, 0.64]);
        // a body that starts by rising: no start apex
        assert_eq!(local_apexes(&[0.0, 0.5, 0.2], 1e-3, 10), vec![0.5]);
        assert!(local_apexes(&[], 1e-3, 10).is_empty());
    }
}
