//! Continuation of an OCP in its terminal constraints: solve the problem for a first target
//! from the trivial initialization (y₀ everywhere, u = 0, [`solve_ocp`]), then move the
//! target along a list of waypoints, each solve warm-started from the previous exact
//! solution with a small initial relaxation σ₀.
//!
//! Why (docs/optimal-control.md, eighth session): on the hopper of seed 002 Sec. 6 the MPCC
//! homotopy from the trivial initialization stalls for every target tried, but with the
//! stabilized stance ([`crate::tf::StanceStabilization`]) it converges to exact
//! complementarity for the target x = 0 (a hop in place). From there small target steps
//! with σ₀ = 1e-2 keep each relaxed problem close to an exact solution, and the homotopy
//! polishes each one. The first solve still starts from the trivial initialization: no
//! contact sequence is given.

use std::sync::Arc;

use crate::fesd::{build, solve_built, solve_ocp, FesdOptions, Horizon, OcpSolution};
use crate::ipopt::thread_cpu_seconds;
use crate::tf::{Cls, TimeFreezing};
use crate::OcpError;

/// A continuation of a problem file (`ocp.continuation`, `ocp.continuation_sigma0`): the
/// terminal sets to pass through, the problem's own terminal set last, and σ₀ of the warm
/// solves.
#[derive(Debug, Clone, PartialEq)]
pub struct ContinuationPlan {
    /// Terminal constraint sets, in order; the last is the problem's.
    pub waypoints: Vec<Vec<(usize, f64)>>,
    /// σ₀ of every warm-started solve.
    pub warm_sigma0: f64,
}

impl ContinuationPlan {
    /// Waypoints that set terminal component `index` of `terminal` to each of `values` in
    /// turn, followed by `terminal` itself.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] when `terminal` does not constrain `index`, a value is not
    /// finite or `warm_sigma0` is not positive.
    pub fn in_component(
        terminal: &[(usize, f64)],
        index: usize,
        values: &[f64],
        warm_sigma0: f64,
    ) -> Result<Self, OcpError> {
        if !terminal.iter().any(|(i, _)| *i == index) {
            return Err(OcpError::InvalidInput(format!(
                "continuation: the terminal constraints do not fix component {index}"
            )));
        }
        if let Some(v) = values.iter().find(|v| !v.is_finite()) {
            return Err(OcpError::InvalidInput(format!(
                "continuation: waypoint value {v} is not finite"
            )));
        }
        check_warm_sigma0(warm_sigma0)?;
        let mut waypoints: Vec<Vec<(usize, f64)>> = values
            .iter()
            .map(|&v| {
                terminal
                    .iter()
                    .map(|&(i, t)| (i, if i == index { v } else { t }))
                    .collect()
            })
            .collect();
        waypoints.push(terminal.to_vec());
        Ok(Self {
            waypoints,
            warm_sigma0,
        })
    }
}

/// σ₀ of the warm solves must be positive and finite.
fn check_warm_sigma0(warm_sigma0: f64) -> Result<(), OcpError> {
    if warm_sigma0.is_finite() && warm_sigma0 > 0.0 {
        Ok(())
    } else {
        Err(OcpError::InvalidInput(format!(
            "continuation: warm_sigma0 = {warm_sigma0} must be positive"
        )))
    }
}

/// Outcome of [`solve_by_terminal_continuation`].
#[derive(Debug)]
pub struct Continuation {
    /// The solution of every waypoint reached, in order.
    pub solutions: Vec<OcpSolution>,
    /// The waypoint index whose solve failed and its error (`None` when all were reached).
    pub failure: Option<(usize, OcpError)>,
}

/// Solves `hz` for each terminal constraint set of `waypoints` in turn (each replaces
/// `hz.terminal`): the first from the trivial initialization with the options `o`, every
/// further one from the previous solution's NLP point with σ₀ = `warm_sigma0`. Stops at the
/// first failed waypoint and reports it in [`Continuation::failure`]. `on_step` is called
/// with each waypoint's index and solution as soon as it is solved (progress reports).
///
/// # Errors
/// [`OcpError::InvalidInput`] for an empty waypoint list, a terminal index outside y, a
/// non-finite target, or `warm_sigma0` not in (0, ∞).
pub fn solve_by_terminal_continuation<C: Cls>(
    tf: &Arc<TimeFreezing<C>>,
    hz: &Horizon,
    o: &FesdOptions,
    waypoints: &[Vec<(usize, f64)>],
    warm_sigma0: f64,
    on_step: &mut dyn FnMut(usize, &OcpSolution),
) -> Result<Continuation, OcpError> {
    if waypoints.is_empty() {
        return Err(OcpError::InvalidInput(
            "continuation: no waypoints given".into(),
        ));
    }
    check_warm_sigma0(warm_sigma0)?;
    let ny = tf.ny();
    for (w, terminal) in waypoints.iter().enumerate() {
        if let Some((i, v)) = terminal.iter().find(|(i, v)| *i >= ny || !v.is_finite()) {
            return Err(OcpError::InvalidInput(format!(
                "continuation waypoint {w}: terminal entry ({i}, {v}) needs an index < {ny} and a finite value"
            )));
        }
    }
    let warm = FesdOptions {
        sigma0: warm_sigma0,
        ..o.clone()
    };
    let mut solutions: Vec<OcpSolution> = Vec::with_capacity(waypoints.len());
    for (w, terminal) in waypoints.iter().enumerate() {
        let step = Horizon {
            terminal: terminal.clone(),
            ..hz.clone()
        };
        let start = thread_cpu_seconds();
        let result = match solutions.last() {
            None => solve_ocp(tf, &step, o),
            Some(prev) => build(tf, &step, &warm).and_then(|(nlp, layout, _)| {
                solve_built(tf, &step, &warm, nlp, &layout, prev.x.clone())
            }),
        };
        match result {
            Ok(mut sol) => {
                sol.cpu_seconds = thread_cpu_seconds() - start;
                on_step(w, &sol);
                solutions.push(sol);
            }
            Err(e) => {
                return Ok(Continuation {
                    solutions,
                    failure: Some((w, e)),
                })
            }
        }
    }
    Ok(Continuation {
        solutions,
        failure: None,
    })
}

/// A failed [`solve_with_plan`]: the error (with its last iterate where it has one), the
/// horizon that was being solved (the failed waypoint's terminal set under a plan) and,
/// under a plan, a description of the failed waypoint.
#[derive(Debug)]
pub struct PlanFailure {
    /// The solve's error.
    pub error: OcpError,
    /// The horizon of the failed solve.
    pub horizon: Box<Horizon>,
    /// "continuation waypoint k/n [terminal set]" under a plan.
    pub waypoint: Option<String>,
}

impl std::fmt::Display for PlanFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.waypoint {
            Some(w) => write!(f, "{w}: {}", self.error),
            None => write!(f, "{}", self.error),
        }
    }
}

/// Solves `hz` directly ([`solve_ocp`]) or, with a plan, along its waypoints
/// ([`solve_by_terminal_continuation`]; the plan's last waypoint is the problem's own
/// terminal set) and returns the final solution. `on_step` sees every waypoint solved.
///
/// # Errors
/// A [`PlanFailure`] with the solve's error, its horizon and the failed waypoint.
pub fn solve_with_plan<C: Cls>(
    tf: &Arc<TimeFreezing<C>>,
    hz: &Horizon,
    o: &FesdOptions,
    plan: Option<&ContinuationPlan>,
    on_step: &mut dyn FnMut(usize, &OcpSolution),
) -> Result<OcpSolution, PlanFailure> {
    let fail = |error, horizon: &Horizon, waypoint| PlanFailure {
        error,
        horizon: Box::new(horizon.clone()),
        waypoint,
    };
    let Some(plan) = plan else {
        return solve_ocp(tf, hz, o).map_err(|e| fail(e, hz, None));
    };
    let run = solve_by_terminal_continuation(tf, hz, o, &plan.waypoints, plan.warm_sigma0, on_step)
        .map_err(|e| fail(e, hz, None))?;
    match run.failure {
        None => run.solutions.into_iter().last().ok_or_else(|| {
            fail(
                OcpError::InvalidInput("no waypoint solved".into()),
                hz,
                None,
            )
        }),
        Some((w, e)) => {
            let failed = Horizon {
                terminal: plan.waypoints[w].clone(),
                ..hz.clone()
            };
            let label = format!(
                "continuation waypoint {}/{} {:?}",
                w + 1,
                plan.waypoints.len(),
                plan.waypoints[w]
            );
            Err(fail(e, &failed, Some(label)))
        }
    }
}
