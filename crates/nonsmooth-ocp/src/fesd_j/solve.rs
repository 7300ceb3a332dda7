//! The FESD-J solve: the Scholtes homotopy of one NLP ([`homotopy`]) and the two phases of
//! a problem ([`solve`]): the closest reachable final state, then the optimal control.

use std::sync::Arc;
use std::time::Instant;

use super::blocks::ImpulseBlock;
use super::build::{build, Layout};
use super::options::ImpulseOptions;
use super::rollout;
use crate::fesd::{complementarity_nlp_options, Horizon, NlpLog};
use crate::ipopt::{solve as ipopt_solve, IpoptOptions, IpoptSolution};
use crate::model_system::ModelSystem;
use crate::motion;
use crate::nlp::BlockNlp;
use crate::OcpError;

/// The share of the way to the target (the largest |target − start| of a terminal
/// component) that the closest reachable final state must miss for the target to be named
/// unreachable: that phase ends in a local optimum (a dropped crate's missed by 2.3 cm of a
/// reachable target), while a body that cannot move misses all of the way and a target
/// half again beyond the farthest reachable point a third of it.
pub const UNREACHABLE_SHARE: f64 = 0.25;

/// Rollouts the search for a contact-consistent start may spend.
const SEARCH_ROLLOUTS: usize = 6000;

/// The first controls of the searches for contact-consistent starts (the middle of their
/// range, then half way up, half way down, the upper bound; a fraction of the half range).
const SEARCH_STARTS: [f64; 4] = [0.0, 0.5, -0.5, 1.0];

/// Weight of the released terminal components in the reachability phase.
const RELEASE_WEIGHT: f64 = 1e3;

/// How a FESD-J solve ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Complementarity ≤ `comp_tol` with the terminal constraints met.
    Solved,
    /// The closest contact-consistent final state misses the target by more than
    /// `reach_tol`.
    Unreachable,
    /// The homotopy stopped above `comp_tol` (or the time budget ran out).
    Stalled,
}

impl Outcome {
    /// `solved`, `unreachable` or `stalled`.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Solved => "solved",
            Outcome::Unreachable => "unreachable",
            Outcome::Stalled => "stalled",
        }
    }
}

/// The state of the system at one point of the solution.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sample {
    /// Physical time.
    pub t: f64,
    /// Configuration.
    pub q: Vec<f64>,
    /// Velocity (after the boundary's jump at element starts).
    pub v: Vec<f64>,
}

/// The result of a FESD-J solve.
#[derive(Debug, Clone)]
pub struct ImpulseSolution {
    /// How it ended.
    pub outcome: Outcome,
    /// Why, in words (the miss of an unreachable target, the residual of a stall).
    pub detail: String,
    /// States at t = 0 and at every element's end (and just after each jump).
    pub samples: Vec<Sample>,
    /// Controls per interval.
    pub u: Vec<Vec<f64>>,
    /// Control effort w Σ_k ‖u_k‖² ([`Layout::effort_weight`]).
    pub objective: f64,
    /// Largest complementarity product.
    pub comp_residual: f64,
    /// Largest |y_i(T) − target_i| over the terminal components.
    pub terminal_error: f64,
    /// Largest normal impulse over the element boundaries.
    pub max_impulse: f64,
    /// Every NLP solved (both phases).
    pub log: Vec<NlpLog>,
    /// Total IPOPT iterations.
    pub nlp_iterations: usize,
    /// Wall seconds.
    pub seconds: f64,
    /// The NLP's point.
    pub x: Vec<f64>,
}

/// The end of one homotopy.
struct Homotopy {
    x: Vec<f64>,
    comp: f64,
    converged: bool,
}

/// The IPOPT options of FESD-J's NLPs: those of every complementarity NLP, within the
/// seconds left (at least one), warm-started at μ = 1e-4 after the first.
fn nlp_options(o: &ImpulseOptions, warm: bool, seconds_left: f64) -> IpoptOptions {
    complementarity_nlp_options(
        o.tol,
        o.max_iter,
        Some(seconds_left.max(1.0)),
        warm.then_some(1e-4),
    )
}

/// Sets the relaxation σ: the product rows ≤ σ (Scholtes), or the penalty weight 1/σ.
fn set_sigma(nlp: &mut BlockNlp<ImpulseBlock>, layout: &Layout, sigma: f64, penalty: bool) {
    for (&(row, n), scale) in layout.comp_rows.iter().zip(&layout.comp_scale) {
        for (gu, factor) in nlp.gu[row..row + n].iter_mut().zip(scale) {
            *gu = if penalty { 1e20 } else { sigma * factor };
        }
    }
    for b in nlp.blocks.iter_mut() {
        if let ImpulseBlock::Penalty { weight, .. } = &mut b.kind {
            *weight = if penalty { 1.0 / sigma } else { 0.0 };
        }
    }
}

/// The ℓ1 penalty (1/σ) Σ G·H of the objective, or Scholtes' relaxation G·H ≤ σ, with σ = σ₀ κ^i, each NLP warm-started from the last
/// converged one, until the largest product is ≤ `comp_tol`; a failed NLP ends the
/// homotopy at the last converged point.
#[allow(clippy::too_many_arguments)]
fn homotopy(
    nlp: &mut BlockNlp<ImpulseBlock>,
    layout: &Layout,
    x0: Vec<f64>,
    sigma0: f64,
    o: &ImpulseOptions,
    deadline: Instant,
    log: &mut Vec<NlpLog>,
    polish_slack: Option<f64>,
) -> Homotopy {
    let mut x = x0;
    let mut comp = f64::INFINITY;
    let mut warm: Option<IpoptSolution> = None;
    let mut sigma = sigma0;
    for _ in 0..o.n_homotopy {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64();
        if left <= 0.0 {
            break;
        }
        set_sigma(nlp, layout, sigma, o.penalty);
        let sol = match ipopt_solve(
            nlp,
            &x,
            warm.as_ref(),
            &nlp_options(o, warm.is_some(), left),
        ) {
            Ok(s) => s,
            Err(OcpError::Ipopt { solution, .. }) => {
                let c = layout.comp_residual(&solution.x);
                if o.verbose {
                    eprintln!(
                        "fesd-j σ = {sigma:.1e}: {:?} after {} iterations (complementarity {c:.3e})",
                        solution.status, solution.iterations
                    );
                }
                log.push(nlp_log(sigma, c, &solution));
                if warm.is_none() {
                    // nothing converged: keep IPOPT's last iterate for the report
                    x = solution.x;
                    comp = c;
                }
                break;
            }
            Err(_) => break,
        };
        let c = layout.comp_residual(&sol.x);
        if o.verbose {
            eprintln!(
                "fesd-j σ = {sigma:.1e}: objective {:.6e}, complementarity {c:.3e}, {} iterations, {:?}",
                sol.objective, sol.iterations, sol.status
            );
        }
        log.push(nlp_log(sigma, c, &sol));
        x = sol.x.clone();
        comp = c;
        warm = Some(sol);
        if c <= o.comp_tol {
            return Homotopy {
                x,
                comp,
                converged: true,
            };
        }
        if c <= POLISH_FROM {
            if let Some(exact) = polish(nlp, layout, &x, o, deadline, log) {
                // with a slack, a polished point whose objective rose by more than it
                // fixed the wrong sides of some pairs: the homotopy goes on
                let objective = log.last().map_or(f64::INFINITY, |l| l.objective);
                let relaxed = warm.as_ref().map_or(f64::INFINITY, |w| w.objective);
                if polish_slack.is_none_or(|slack| objective <= relaxed + slack) {
                    return exact;
                }
            }
        }
        sigma = (sigma * o.kappa).max(0.1 * o.comp_tol);
    }
    Homotopy {
        x,
        comp,
        converged: false,
    }
}

/// Half width of the interval the polish imposes a terminal component in (below the
/// terminal error of 1e-6 that counts as exact).
const TERMINAL_BAND: f64 = 1e-7;

/// Complementarity residual below which a relaxed point is polished.
const POLISH_FROM: f64 = 1e-2;

/// The active-set end game: every pair's smaller side at `x` fixed to zero, the product
/// rows dropped, the smooth NLP solved from `x`; a solution whose products are all ≤
/// `comp_tol` ends the homotopy (σ = 0 in the log).
fn polish(
    nlp: &BlockNlp<ImpulseBlock>,
    layout: &Layout,
    x: &[f64],
    o: &ImpulseOptions,
    deadline: Instant,
    log: &mut Vec<NlpLog>,
) -> Option<Homotopy> {
    let left = deadline
        .saturating_duration_since(Instant::now())
        .as_secs_f64();
    if left <= 0.0 {
        return None;
    }
    let mut fixed = nlp.clone();
    for &(row, n) in &layout.comp_rows {
        for gu in &mut fixed.gu[row..row + n] {
            *gu = 1e20;
        }
    }
    // the target as an interval: at rest on the ground the fixed contact rows already pin
    // some terminal components (height, angle), and equalities would repeat them
    for &(var, target) in &layout.terminal {
        if fixed.xl[var] == target && fixed.xu[var] == target {
            fixed.xl[var] = target - TERMINAL_BAND;
            fixed.xu[var] = target + TERMINAL_BAND;
        }
    }
    let mut start = x.to_vec();
    for (a, bs) in layout.comp_pairs.iter().flatten() {
        let other: f64 = bs.iter().map(|b| x[*b]).sum();
        let zero: Vec<usize> = if x[*a] <= other { vec![*a] } else { bs.clone() };
        for i in zero {
            fixed.xl[i] = 0.0;
            fixed.xu[i] = 0.0;
            start[i] = 0.0;
        }
    }
    let sol = match ipopt_solve(&fixed, &start, None, &nlp_options(o, false, left)) {
        Ok(sol) => sol,
        Err(OcpError::Ipopt { solution, .. }) => {
            if o.verbose {
                eprintln!(
                    "fesd-j polish: {:?} after {} iterations",
                    solution.status, solution.iterations
                );
            }
            log.push(nlp_log(0.0, layout.comp_residual(&solution.x), &solution));
            return None;
        }
        Err(_) => return None,
    };
    let c = layout.comp_residual(&sol.x);
    if o.verbose {
        eprintln!(
            "fesd-j polish: objective {:.6e}, complementarity {c:.3e}, {} iterations, {:?}",
            sol.objective, sol.iterations, sol.status
        );
    }
    log.push(nlp_log(0.0, c, &sol));
    (c <= o.comp_tol).then_some(Homotopy {
        x: sol.x,
        comp: c,
        converged: true,
    })
}

fn nlp_log(sigma: f64, comp: f64, sol: &IpoptSolution) -> NlpLog {
    NlpLog {
        sigma,
        objective: sol.objective,
        comp_residual: comp,
        iterations: sol.iterations,
        cpu_seconds: sol.cpu_seconds,
        status: sol.status,
    }
}

/// Solves the optimal control problem of `hz` on `sys` over the physical horizon `t_final`
/// by FESD-J (Nurkanović, Frey, Pozharskiy & Diehl 2024: finite elements with switch
/// detection for rigid bodies with impacts and friction, state jumps at element boundaries,
/// no auxiliary dynamics).
///
/// First a homotopy finds the closest reachable final state (the terminal constraints
/// released into Σ (y_i − target_i)², no effort) from the trivial start (the initial state
/// everywhere, no control): a contact-consistent solution that misses the target by more
/// than `reach_tol` and more than [`UNREACHABLE_SHARE`] of the way names it unreachable,
/// unless it did not move at all while controls held at their bounds move the body (static
/// friction's plateau, checked by rollouts through the simulator). Otherwise the optimal control's homotopy starts from that point with a tight relaxation,
/// and, where it stalls, from the trivial start with the remaining time.
///
/// # Errors
/// [`OcpError::InvalidInput`] for options or a horizon that do not fit the model.
pub fn solve(
    sys: &Arc<ModelSystem>,
    hz: &Horizon,
    t_final: f64,
    o: &ImpulseOptions,
) -> Result<ImpulseSolution, OcpError> {
    o.validate()?;
    let start = Instant::now();
    let deadline = start + std::time::Duration::from_secs_f64(o.time_limit);
    let mut log = vec![];
    let (mut hard, layout, trivial) = build(sys, hz, t_final, o, None)?;
    let exact = |h: &Homotopy| h.converged && layout.terminal_error(&h.x) <= 1e-6;
    let distance = layout
        .terminal
        .iter()
        .map(|(i, t)| (t - trivial[*i]).abs())
        .fold(0.0, f64::max);
    let threshold = o.reach_tol.max(UNREACHABLE_SHARE * distance);
    // the checks before any NLP (`crate::motion`): a target beyond the momentum balance's
    // travel, a body at rest that no rollout at the control bounds moves; the rollouts
    // also tell static friction's plateau in the reachability phase
    let solved =
        |x: &[f64], log: &[NlpLog], how: &str| ended(&layout, x, Outcome::Solved, log, start, how);
    let rollouts = motion::rollouts_at_bounds(sys, hz, t_final);
    if let Some(verdict) = motion::unreachable(sys, hz, t_final, rollouts.as_ref(), o.reach_tol) {
        return Ok(ended(
            &layout,
            &trivial,
            Outcome::Unreachable,
            &log,
            start,
            verdict,
        ));
    }
    if o.verbose {
        if let Some(r) = &rollouts {
            eprintln!(
                "fesd-j rollouts at the control bounds: the terminal components change by at \
                 most {:.3e}",
                r.largest_change
            );
        }
    }
    // rollouts of the discretization itself whose controls approach the target, from
    // several first controls: contact-consistent starts; the optimal control from their
    // contact modes (the polish), then from the first with a tight relaxation
    let (mut soft, soft_layout, x0) = build(sys, hz, t_final, o, Some(RELEASE_WEIGHT))?;
    let mut searched = None;
    let (mut all_far, mut closest_miss) = (true, f64::INFINITY);
    for first in SEARCH_STARTS {
        let Some((xs, err)) = rollout::search(
            sys,
            hz,
            &layout,
            &trivial,
            t_final,
            first,
            SEARCH_ROLLOUTS,
            deadline,
        ) else {
            break;
        };
        if o.verbose {
            eprintln!(
                "fesd-j rollout search from the controls at {first} of their range: terminal \
                 error {err:.3e} ({:.1} s)",
                start.elapsed().as_secs_f64()
            );
        }
        if err > threshold {
            // a search that ends far from the target: the next start, and where every one
            // ends so, the target appears unreachable
            closest_miss = closest_miss.min(err);
            searched.get_or_insert(xs);
            continue;
        }
        all_far = false;
        // the rollout's contact modes with the target imposed; where IPOPT finds no way
        // there, the same modes with the target released first (the closest final state
        // in them), then imposed from that point
        let mut feasible = None;
        let polished = polish(&hard, &layout, &xs, o, deadline, &mut log).or_else(|| {
            let closest = polish(&soft, &soft_layout, &xs, o, deadline, &mut log)?;
            let optimal = polish(&hard, &layout, &closest.x, o, deadline, &mut log);
            if optimal.is_none() && soft_layout.terminal_error(&closest.x) <= TERMINAL_BAND {
                feasible = Some(closest);
            }
            optimal
        });
        if let Some(h) = polished.filter(exact) {
            return Ok(solved(
                &h.x,
                &log,
                "solved (the contact modes of a rollout)",
            ));
        }
        if let Some(h) = feasible {
            // exact and at the target, but IPOPT found no way to lower the effort in these
            // modes (an NLP whose fixed contact rows repeat each other)
            return Ok(solved(
                &h.x,
                &log,
                "solved, effort not minimized (the contact modes of a rollout meet the \
                 target; the effort's NLP in them did not converge)",
            ));
        }
        searched.get_or_insert(xs);
        if Instant::now() >= deadline {
            break;
        }
    }
    if all_far && closest_miss.is_finite() {
        let x = searched.as_deref().unwrap_or(&trivial);
        return Ok(ended(
            &layout,
            x,
            Outcome::Unreachable,
            &log,
            start,
            format!(
                "unreachable: rollouts of the discretization searched from {} first controls end \
             at best {closest_miss:.4e} from the target, more than {UNREACHABLE_SHARE} of the \
             way (> {threshold:.1e}; a local verdict, as the closest reachable final state's)",
                SEARCH_STARTS.len()
            ),
        ));
    }
    // the optimal control's homotopy from a point; from a contact-consistent one a tight
    // relaxation keeps it near its contact modes (from σ₀ it leaves them as from the
    // trivial start)
    let tight = (o.sigma0 * 1e-2).max(o.comp_tol);
    let mut optimal_control = |x: Vec<f64>, sigma: f64, log: &mut Vec<NlpLog>| {
        homotopy(&mut hard, &layout, x, sigma, o, deadline, log, None)
    };
    let mut best: Option<Homotopy> = None;
    if let Some(xs) = &searched {
        let from_rollout = optimal_control(xs.clone(), tight, &mut log);
        if exact(&from_rollout) {
            return Ok(solved(
                &from_rollout.x,
                &log,
                "solved (from a rollout of the discretization)",
            ));
        }
        best = Some(from_rollout);
    }
    // the closest reachable final state: names an unreachable target, and starts the
    // optimal control near contact modes that reach it
    let x0 = searched.unwrap_or(x0);
    let reach = homotopy(
        &mut soft,
        &soft_layout,
        x0,
        o.sigma0,
        o,
        deadline,
        &mut log,
        Some(RELEASE_WEIGHT * o.reach_tol * o.reach_tol),
    );
    let miss = soft_layout.terminal_error(&reach.x);
    // the reachability phase ends in a local optimum: only a miss of a large part of the
    // way names the target unreachable (a body that cannot move misses all of it)
    let moved = layout
        .terminal
        .iter()
        .map(|(i, _)| (reach.x[*i] - trivial[*i]).abs())
        .fold(0.0, f64::max);
    // a verdict reached without moving may be static friction's plateau: it stands only
    // where no control held at its bounds moves the body either
    let plateau = reach.converged
        && moved <= o.reach_tol
        && rollouts.is_some_and(|r| r.largest_change > threshold);
    if reach.converged && miss > threshold && !plateau {
        return Ok(ended(
            &layout,
            &reach.x,
            Outcome::Unreachable,
            &log,
            start,
            format!(
                "unreachable: the closest contact-consistent final state (complementarity \
             {:.1e}) misses the target by {miss:.4e}, more than {UNREACHABLE_SHARE} of the \
             way (> {threshold:.1e}){}",
                reach.comp,
                worst_component(&soft_layout, &reach.x)
            ),
        ));
    }
    if reach.converged && !plateau {
        let from_reach = optimal_control(reach.x.clone(), tight, &mut log);
        if exact(&from_reach) {
            return Ok(solved(
                &from_reach.x,
                &log,
                "solved (from the closest reachable final state's point)",
            ));
        }
        best = Some(lower(best, from_reach));
    }
    let from_trivial = optimal_control(trivial, o.sigma0, &mut log);
    if exact(&from_trivial) {
        return Ok(solved(
            &from_trivial.x,
            &log,
            "solved (from the trivial start)",
        ));
    }
    let best = lower(best, from_trivial);
    let detail = if Instant::now() >= deadline {
        format!(
            "stalled: time limit {:.0} s reached at complementarity {:.3e}",
            o.time_limit, best.comp
        )
    } else {
        format!(
            "stalled: complementarity {:.3e} (the closest reachable final state: {})",
            best.comp,
            if reach.converged {
                format!("miss {miss:.2e}")
            } else {
                format!("not found, complementarity {:.2e}", reach.comp)
            }
        )
    };
    Ok(ended(
        &layout,
        &best.x,
        Outcome::Stalled,
        &log,
        start,
        detail,
    ))
}

/// The one of `best` and `h` with the lower complementarity residual (`best` on a tie).
fn lower(best: Option<Homotopy>, h: Homotopy) -> Homotopy {
    match best {
        Some(b) if b.comp <= h.comp => b,
        _ => h,
    }
}

/// The solution at `x` with its outcome and `detail` (the phase that ended the solve, or
/// the verdict).
fn ended(
    layout: &Layout,
    x: &[f64],
    outcome: Outcome,
    log: &[NlpLog],
    start: Instant,
    detail: impl Into<String>,
) -> ImpulseSolution {
    let mut s = read(layout, x, outcome, log, start);
    s.detail = detail.into();
    s
}

/// The terminal component farthest from its target, in words.
fn worst_component(layout: &Layout, x: &[f64]) -> String {
    let Some((var, target)) = layout
        .terminal
        .iter()
        .max_by(|a, b| (x[a.0] - a.1).abs().total_cmp(&(x[b.0] - b.1).abs()))
    else {
        return String::new();
    };
    format!(
        " (farthest: a terminal component reaches {:.4} for the target {target})",
        x[*var]
    )
}

/// Reads the solution at point `x`.
fn read(
    layout: &Layout,
    x: &[f64],
    outcome: Outcome,
    log: &[NlpLog],
    start: Instant,
) -> ImpulseSolution {
    let d = layout.dims;
    let nq = d.nq;
    let slice = |i: usize| x[i..i + nq].to_vec();
    let mut samples = vec![Sample {
        t: 0.0,
        q: slice(layout.q0),
        v: slice(layout.v0),
    }];
    let mut t = 0.0;
    let mut max_impulse: f64 = 0.0;
    for e in &layout.elems {
        if let Some(b) = &e.boundary {
            for i in 0..d.nc {
                max_impulse = max_impulse.max(x[b.ln + i]);
            }
            samples.push(Sample {
                t,
                q: slice(e.qs),
                v: slice(b.vp),
            });
        }
        t += x[e.h];
        samples.push(Sample {
            t,
            q: slice(e.q),
            v: slice(e.v),
        });
    }
    let u: Vec<Vec<f64>> = layout.u.iter().map(|&i| x[i..i + d.nu].to_vec()).collect();
    let objective = u
        .iter()
        .map(|uk| uk.iter().map(|a| a * a).sum::<f64>() * layout.effort_weight)
        .sum();
    ImpulseSolution {
        outcome,
        detail: String::new(),
        samples,
        u,
        objective,
        comp_residual: layout.comp_residual(x),
        terminal_error: layout.terminal_error(x),
        max_impulse,
        nlp_iterations: log.iter().map(|l| l.iterations).sum(),
        log: log.to_vec(),
        seconds: start.elapsed().as_secs_f64(),
        x: x.to_vec(),
    }
}
