//! Continuation of an OCP in its terminal constraints: solve the problem for a first target
//! from the trivial initialization (y₀ everywhere, u = 0, [`solve_ocp`]), then move the
//! target along a list of waypoints, each solve warm-started from the previous exact
//! solution with a small initial relaxation σ₀.
//!
//! Why (docs/decisions/002-time-freezing.md, "Continuation in the terminal target"): on the
//! hopper of Nurkanović et al. Sec. 6 the MPCC homotopy from the trivial initialization stalls for
//! every target measured, but with the stabilized stance
//! ([`crate::time_freezing::StanceStabilization`]) it converges to exact complementarity for the target
//! x = 0 (a hop in place). From there small target steps with σ₀ = 1e-2 keep each relaxed
//! problem close to an exact solution, and the homotopy polishes each one. The first solve
//! still starts from the trivial initialization: no contact sequence is given.
//!
//! [`ContinuationMode::ActiveSet`] solves each waypoint instead as a smooth NLP on the
//! previous exact solution's complementarity active set
//! ([`crate::fesd::solve_on_active_set`], pairs that the fixed mode makes irrelevant left
//! free): the contact sequence stays that of the first, exact solution while the trajectory
//! deforms, every step is exact by construction, and a step that fails is bisected; the
//! homotopy with the small σ₀ is the fallback of the smallest step. On the hopper the
//! homotopy mode stops at x ≈ 0.4 (its solutions change their contact sequence from one
//! waypoint to the next); the active-set mode carries the four-hop solution of x = 0 to
//! x ≈ 1 (docs/optimal-control.md, "Limitations").

use std::sync::Arc;

use crate::fesd::{
    build, extract_ocp, solve_built, solve_ocp, solve_on_active_set, transfer_point, FesdOptions,
    Horizon, OcpSolution,
};
use crate::ipopt::{thread_cpu_seconds, IpoptSolution, Nlp};
use crate::smoothing::{solve_ocp_with_growth, Growth};
use crate::time_freezing::TimeFreezing;
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
    /// How each waypoint after the first is solved.
    pub mode: ContinuationMode,
    /// Solve the waypoints after the first with one speed of time per interval, the first
    /// with the horizon's own (one speed for the horizon, [`Horizon::global_speed`]): the
    /// first, hardest solve keeps the fewer degrees of freedom, and the warm solves may
    /// then give each interval its own physical duration.
    pub local_speed_after_first: bool,
}

/// How [`solve_by_terminal_continuation`] solves the waypoints after the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ContinuationMode {
    /// The MPCC homotopy warm-started from the previous solution with σ₀ = `warm_sigma0`.
    #[default]
    Homotopy,
    /// The smooth NLP on the previous solution's active set ([`solve_on_active_set`] with
    /// the idle pairs free), the step bisected up to [`MAX_BISECTIONS`] times on failure and
    /// the homotopy (σ₀ = `warm_sigma0`) as the fallback of the smallest step.
    ActiveSet,
}

/// Most halvings of a waypoint step in [`ContinuationMode::ActiveSet`] before the homotopy
/// fallback (the smallest step is 1/64 of the distance to the waypoint).
pub const MAX_BISECTIONS: u32 = 6;

/// IPOPT's initial barrier parameter for an active-set step: the start point solves the
/// previous terminal set, so it is far from feasible in the new one (the polish's 1e-9
/// would start IPOPT on the boundary).
const ACTIVE_SET_MU_INIT: f64 = 1e-2;

/// Re-solves `hz` on the complementarity active set of the exact NLP point `prev` (a
/// solution of a neighbouring problem with the same layout): a smooth NLP whose solution has
/// exact complementarity. `None` when IPOPT fails or the point is not exact.
///
/// # Errors
/// [`OcpError::InvalidInput`] when `prev` does not fit the NLP of `hz`.
pub fn solve_near(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    prev: &[f64],
) -> Result<Option<OcpSolution>, OcpError> {
    let (mut nlp, layout, x0) = build(tf, hz, o)?;
    if x0.len() != prev.len() {
        return Err(OcpError::InvalidInput(format!(
            "active-set step: the previous point has {} variables, the NLP {}",
            prev.len(),
            x0.len()
        )));
    }
    let start = IpoptSolution::from_primal(prev.to_vec(), nlp.num_cons());
    let Some((sol, entry)) =
        solve_on_active_set(&mut nlp, &layout, &start, o, ACTIVE_SET_MU_INIT, true)
    else {
        return Ok(None);
    };
    let mut out = extract_ocp(tf, hz, &layout, &sol.x, o)?;
    out.nlp_iterations = entry.iterations;
    out.log = vec![entry];
    Ok(Some(out))
}

/// The terminal set a fraction `f` of the way from `from` to `to` (entries matched by
/// index; an entry of `to` without a partner in `from` is taken as it is).
fn interpolate_terminal(from: &[(usize, f64)], to: &[(usize, f64)], f: f64) -> Vec<(usize, f64)> {
    to.iter()
        .map(|&(i, b)| {
            let a = from.iter().find(|(k, _)| *k == i).map_or(b, |e| e.1);
            (i, if f >= 1.0 { b } else { a + f * (b - a) })
        })
        .collect()
}

/// One waypoint of [`ContinuationMode::ActiveSet`]: active-set steps from the point `start`
/// (which solves `from`) towards `to`, bisected on failure, the homotopy with σ₀ = `warm_sigma0` at
/// the smallest step. The returned solution's log holds every NLP solved on the way.
fn active_set_waypoint(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    warm_sigma0: f64,
    start: &[f64],
    from: &[(usize, f64)],
    to: &[(usize, f64)],
) -> Result<OcpSolution, OcpError> {
    let mut current: Option<OcpSolution> = None;
    let mut log = vec![];
    let mut reached = 0.0_f64;
    let mut step = 1.0_f64;
    let smallest = 0.5_f64.powi(MAX_BISECTIONS as i32);
    while reached < 1.0 {
        let f = (reached + step).min(1.0);
        let at = Horizon {
            terminal: interpolate_terminal(from, to, f),
            ..hz.clone()
        };
        let x = current.as_ref().map_or(start, |c| &c.x);
        let solved = match solve_near(tf, &at, o, x)? {
            Some(sol) => Some(sol),
            None if step <= smallest * (1.0 + 1e-12) => {
                let warm = {
                    let mut o = o.clone();
                    o.mpcc.sigma0 = warm_sigma0;
                    o
                };
                let (nlp, layout, _) = build(tf, &at, &warm)?;
                Some(solve_built(tf, &at, &warm, nlp, &layout, x.to_vec())?)
            }
            None => None,
        };
        match solved {
            Some(sol) => {
                log.extend(sol.log.iter().cloned());
                current = Some(sol);
                reached = f;
                step = (1.5 * step).min(1.0);
            }
            None => step *= 0.5,
        }
    }
    let mut out = current.ok_or_else(|| OcpError::InvalidInput("empty waypoint step".into()))?;
    out.nlp_iterations = log.iter().map(|l| l.iterations).sum();
    out.log = log;
    Ok(out)
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
            mode: ContinuationMode::Homotopy,
            local_speed_after_first: false,
        })
    }

    /// A plan through `waypoints` (terminal sets, the last is the target) with the homotopy
    /// mode and the horizon's speed of time throughout.
    ///
    /// # Errors
    /// [`OcpError::InvalidInput`] when `warm_sigma0` is not positive.
    pub fn through(waypoints: Vec<Vec<(usize, f64)>>, warm_sigma0: f64) -> Result<Self, OcpError> {
        check_warm_sigma0(warm_sigma0)?;
        Ok(Self {
            waypoints,
            warm_sigma0,
            mode: ContinuationMode::Homotopy,
            local_speed_after_first: false,
        })
    }

    /// The same plan solved in `mode`.
    #[must_use]
    pub fn with_mode(self, mode: ContinuationMode) -> Self {
        Self { mode, ..self }
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

/// Solves `hz` for each terminal constraint set of `plan.waypoints` in turn (each replaces
/// `hz.terminal`): the first from the trivial initialization with the options `o`, every
/// further one from the previous solution's NLP point, by the homotopy with σ₀ =
/// `plan.warm_sigma0` or on the previous active set ([`ContinuationMode`]), optionally with
/// one speed of time per interval ([`ContinuationPlan::local_speed_after_first`]). Stops at
/// the first failed waypoint and reports it in [`Continuation::failure`]. `on_step` is
/// called with each waypoint's index and solution as soon as it is solved (progress
/// reports).
///
/// # Errors
/// [`OcpError::InvalidInput`] for an empty waypoint list, a terminal index outside y, a
/// non-finite target, or `warm_sigma0` not in (0, ∞).
pub fn solve_by_terminal_continuation(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    plan: &ContinuationPlan,
    on_step: &mut dyn FnMut(usize, &OcpSolution),
) -> Result<Continuation, OcpError> {
    let waypoints = &plan.waypoints;
    if waypoints.is_empty() {
        return Err(OcpError::InvalidInput(
            "continuation: no waypoints given".into(),
        ));
    }
    check_warm_sigma0(plan.warm_sigma0)?;
    let ny = tf.ny();
    for (w, terminal) in waypoints.iter().enumerate() {
        if let Some((i, v)) = terminal.iter().find(|(i, v)| *i >= ny || !v.is_finite()) {
            return Err(OcpError::InvalidInput(format!(
                "continuation waypoint {w}: terminal entry ({i}, {v}) needs an index < {ny} and a finite value"
            )));
        }
    }
    let warm = {
        let mut o = o.clone();
        o.mpcc.sigma0 = plan.warm_sigma0;
        o
    };
    let warm_hz = Horizon {
        global_speed: hz.global_speed && !plan.local_speed_after_first,
        ..hz.clone()
    };
    let mut solutions: Vec<OcpSolution> = Vec::with_capacity(waypoints.len());
    for (w, terminal) in waypoints.iter().enumerate() {
        let base = if w == 0 { hz } else { &warm_hz };
        let step = Horizon {
            terminal: terminal.clone(),
            ..base.clone()
        };
        let start = thread_cpu_seconds();
        let result = match solutions.last() {
            None => solve_ocp(tf, &step, o),
            Some(prev) => {
                warm_start_point(tf, hz, &step, o, prev, w).and_then(|x| match plan.mode {
                    ContinuationMode::Homotopy => {
                        build(tf, &step, &warm).and_then(|(nlp, layout, _)| {
                            solve_built(tf, &step, &warm, nlp, &layout, x)
                        })
                    }
                    ContinuationMode::ActiveSet => active_set_waypoint(
                        tf,
                        &warm_hz,
                        o,
                        plan.warm_sigma0,
                        &x,
                        &waypoints[w - 1],
                        terminal,
                    ),
                })
            }
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

/// The start point of warm waypoint `w` from the previous solution `prev`: its NLP point,
/// carried over to the NLP of `step` ([`transfer_point`]) when waypoint 1 changes the speed
/// of time structure of the first waypoint's horizon `first`.
fn warm_start_point(
    tf: &Arc<TimeFreezing>,
    first: &Horizon,
    step: &Horizon,
    o: &FesdOptions,
    prev: &OcpSolution,
    w: usize,
) -> Result<Vec<f64>, OcpError> {
    if w != 1 || first.global_speed == step.global_speed {
        return Ok(prev.x.clone());
    }
    let (_, from, _) = build(tf, first, o)?;
    let (_, to, x0) = build(tf, step, o)?;
    transfer_point(&from, &prev.x, &to, x0)
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

/// Solves `hz` directly ([`solve_ocp`]), through the smoothing phase's model growth
/// ([`solve_ocp_with_growth`], when `growth` is given), or, with a plan, along its waypoints
/// ([`solve_by_terminal_continuation`]; the plan's last waypoint is the problem's own
/// terminal set) and returns the final solution; under a plan its `nlp_iterations` and
/// `cpu_seconds` are the totals of all waypoints (its log is the last waypoint's). `on_step`
/// sees every waypoint solved.
///
/// # Errors
/// A [`PlanFailure`] with the solve's error, its horizon and the failed waypoint.
pub fn solve_with_plan(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    plan: Option<&ContinuationPlan>,
    growth: Option<&Growth>,
    on_step: &mut dyn FnMut(usize, &OcpSolution),
) -> Result<OcpSolution, PlanFailure> {
    let fail = |error, horizon: &Horizon, waypoint| PlanFailure {
        error,
        horizon: Box::new(horizon.clone()),
        waypoint,
    };
    let Some(plan) = plan else {
        return match growth {
            Some(g) => solve_ocp_with_growth(tf, hz, o, g),
            None => solve_ocp(tf, hz, o),
        }
        .map_err(|e| fail(e, hz, None));
    };
    if growth.is_some() {
        return Err(fail(
            OcpError::InvalidInput(
                "a model growth and a continuation plan cannot be combined".into(),
            ),
            hz,
            None,
        ));
    }
    let start = thread_cpu_seconds();
    let run =
        solve_by_terminal_continuation(tf, hz, o, plan, on_step).map_err(|e| fail(e, hz, None))?;
    match run.failure {
        None => {
            let iterations = run.solutions.iter().map(|s| s.nlp_iterations).sum();
            let mut last = run.solutions.into_iter().last().ok_or_else(|| {
                fail(
                    OcpError::InvalidInput("no waypoint solved".into()),
                    hz,
                    None,
                )
            })?;
            last.nlp_iterations = iterations;
            last.cpu_seconds = thread_cpu_seconds() - start;
            Ok(last)
        }
        Some((w, e)) => {
            let failed = Horizon {
                terminal: plan.waypoints[w].clone(),
                global_speed: hz.global_speed && (w == 0 || !plan.local_speed_after_first),
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
