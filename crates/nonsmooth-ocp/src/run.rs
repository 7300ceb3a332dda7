//! Running a problem to a result — the one entry point of the CLI's `nonsmooth ocp`, Python's
//! `solve_ocp` and the experiments: from the problem's own start, from a given point (the
//! homotopy, or the active-set method alone), along a continuation plan or a model growth;
//! a failure that carries a last iterate is read out as a result beside its error, so that
//! the caller can write or check it.

use std::sync::Arc;

use crate::continuation::{solve_with_plan, ContinuationPlan, PlanFailure};
use crate::fesd::{
    build, extract_ocp, solve_active_set_from_point, solve_from_point, FesdOptions, Horizon,
    MpccMethod, OcpSolution,
};
use crate::ipopt::thread_cpu_seconds;
use crate::problem::{ModelProblem, RunSettings};
use crate::smoothing::Growth;
use crate::time_freezing::TimeFreezing;
use crate::OcpError;

/// A problem to run: the system, the horizon, the options, and optionally a continuation
/// plan or a model growth (not both).
#[derive(Clone, Copy)]
pub struct Problem<'a> {
    /// The time-frozen system.
    pub tf: &'a Arc<TimeFreezing>,
    /// The horizon (the plan's last waypoint is its terminal set).
    pub horizon: &'a Horizon,
    /// The options.
    pub options: &'a FesdOptions,
    /// Waypoints of a terminal coordinate solved in turn.
    pub plan: Option<&'a ContinuationPlan>,
    /// Obstacles grown in the smoothing phase.
    pub growth: Option<&'a Growth>,
    /// Names of the state components (q, v, t) that a failure's message uses (empty:
    /// `y[i]`).
    pub state_names: &'a [String],
    /// The physical horizon T, where known: a body at rest that no control moves over it
    /// (rollouts through the simulator at the control bounds) makes a displaced target
    /// unreachable without an NLP ([`OcpError::ProvedUnreachable`]).
    pub t_final: Option<f64>,
}

impl<'a> Problem<'a> {
    /// The problem of a problem file.
    pub fn of(p: &'a ModelProblem) -> Self {
        Self {
            tf: &p.tf,
            horizon: &p.horizon,
            options: &p.options,
            plan: p.continuation.as_ref(),
            growth: p.growth.as_ref(),
            state_names: &p.state_names,
            t_final: Some(p.t_final),
        }
    }

    /// The discretization and homotopy it runs with.
    pub fn settings(&self) -> RunSettings {
        RunSettings::of(self.tf, self.horizon, self.options)
    }
}

/// The largest change of the terminal components (m, m/s) over rollouts at the control
/// bounds that counts as not moving (the simulator's contacts settle by micrometres).
const IMMOBILE_TOL: f64 = 1e-4;

/// What a run ends with.
#[derive(Debug)]
pub struct Run {
    /// The solution, or the failure's last iterate read as one (its `log` and
    /// `nlp_iterations` those of the NLPs solved before the failure).
    pub solution: OcpSolution,
    /// The failure (with the horizon that failed); `None` when solved.
    pub failure: Option<PlanFailure>,
    /// The wall-time budget ([`NlpSettings::time_limit`](crate::fesd::NlpSettings::time_limit),
    /// seconds) when it ran out before the run ended: the failure is then that of the phase
    /// the deadline stopped, and the solution its last converged point.
    pub time_limit_reached: Option<f64>,
}

impl Run {
    /// Whether the problem was solved.
    pub fn solved(&self) -> bool {
        self.failure.is_none()
    }

    /// The run's outcome: `solved`, `unreachable` ([`OcpError::Unreachable`]), `stalled`
    /// (the homotopy or a model growth stopped short of the complementarity tolerance) or
    /// `failed` (IPOPT or the active-set method).
    pub fn outcome(&self) -> &'static str {
        match self.failure.as_ref().map(|f| &f.error) {
            None => "solved",
            Some(OcpError::Unreachable { .. } | OcpError::ProvedUnreachable { .. }) => {
                "unreachable"
            }
            Some(OcpError::HomotopyStalled { .. } | OcpError::GrowthStalled { .. }) => "stalled",
            Some(_) => "failed",
        }
    }
}

/// Runs `problem` from its own start, or from the point `start` of its NLP (the homotopy
/// from there, or with [`MpccMethod::ActiveSet`] the active-set method alone; not with a
/// plan). `on_waypoint` sees every waypoint of a plan solved; CPU seconds count from the call.
///
/// # Errors
/// A [`PlanFailure`] whose error carries no last iterate (bad input, a start point with a
/// plan); a failure with a last iterate is a [`Run`] with `failure` set.
pub fn run(
    problem: &Problem,
    start: Option<&[f64]>,
    on_waypoint: &mut dyn FnMut(usize, &OcpSolution),
) -> Result<Run, PlanFailure> {
    let options = problem.options.with_deadline();
    let (tf, hz, o) = (problem.tf, problem.horizon, &options);
    let t0 = thread_cpu_seconds();
    let fail = |error| PlanFailure {
        error,
        horizon: Box::new(hz.clone()),
        waypoint: None,
    };
    let immobile = match (start, problem.t_final) {
        (None, Some(t_final)) => {
            let rollouts = crate::motion::rollouts_at_bounds(&tf.cls, hz, t_final);
            crate::motion::unreachable(&tf.cls, hz, t_final, rollouts.as_ref(), IMMOBILE_TOL)
        }
        _ => None,
    };
    let solved = match start {
        _ if immobile.is_some() => {
            let (_, _, x0) = build(tf, hz, o).map_err(fail)?;
            Err(fail(OcpError::ProvedUnreachable {
                message: immobile.unwrap_or_default(),
                x: x0,
            }))
        }
        Some(_) if problem.plan.is_some() => {
            return Err(fail(OcpError::InvalidInput(
                "a start point runs the homotopy on the problem's own horizon: remove the \
                 continuation plan"
                    .into(),
            )))
        }
        Some(x0) if o.mpcc.method == MpccMethod::ActiveSet => {
            // the earlier run was phase I: project its point and go on from there
            solve_active_set_from_point(tf, hz, o, x0).map_err(fail)
        }
        Some(x0) => solve_from_point(tf, hz, o, x0.to_vec()).map_err(fail),
        None => solve_with_plan(tf, hz, o, problem.plan, problem.growth, on_waypoint),
    };
    match solved {
        Ok(solution) => Ok(Run {
            solution,
            failure: None,
            time_limit_reached: None,
        }),
        Err(PlanFailure {
            error,
            horizon,
            waypoint,
        }) => {
            let failure = PlanFailure {
                error: error.with_state_names(problem.state_names),
                horizon,
                waypoint,
            };
            let Some(x) = failure.error.last_iterate() else {
                return Err(failure);
            };
            let read = |hz: &Horizon| -> Result<OcpSolution, OcpError> {
                let (_, layout, _) = build(tf, hz, o)?;
                extract_ocp(tf, hz, &layout, x, o)
            };
            let mut solution = match read(&failure.horizon) {
                Ok(s) => s,
                Err(e) => {
                    return Err(PlanFailure {
                        error: e,
                        ..failure
                    })
                }
            };
            solution.cpu_seconds = thread_cpu_seconds() - t0;
            if let Some(log) = failure.error.log() {
                solution.nlp_iterations = log.iter().map(|l| l.iterations).sum();
                solution.log = log.to_vec();
            }
            let by_time = o.nlp.out_of_time() || stopped_by_time(&failure.error);
            Ok(Run {
                solution,
                failure: Some(failure),
                time_limit_reached: o.nlp.time_limit.filter(|_| by_time),
            })
        }
    }
}

/// Whether the NLP that ended a failed run stopped at IPOPT's `max_cpu_time` (the time left
/// before the deadline; IPOPT counts the process's CPU time, which threaded linear algebra
/// spends faster than the wall clock).
fn stopped_by_time(error: &OcpError) -> bool {
    let at_limit = |s: crate::ipopt::IpoptStatus| s == crate::ipopt::IpoptStatus::MaxCpuTime;
    match error {
        OcpError::Ipopt { status, .. } => at_limit(*status),
        e => e
            .log()
            .and_then(|log| log.last())
            .is_some_and(|l| at_limit(l.status)),
    }
}
