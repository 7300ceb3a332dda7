//! Smoothing phase before the MPCC homotopy: the step functions of the time-freezing DCS
//! replaced by smooth sigmoids of the switching functions.
//!
//! In the step representation every α_i at a stage point is set-valued only where its
//! switching function c_i vanishes: α_i = 1 for c_i > 0, 0 for c_i < 0 (Nurkanović et al. eq. 27;
//! the complementarity α ⊥ λⁿ, 1 − α ⊥ λᵖ with c = λᵖ − λⁿ). The Scholtes relaxation
//! (products ≤ σ) and the ℓ1 penalty both let the optimizer *choose* α inside the relaxed
//! set, and on the hopper the relaxed optima use that choice: a foot a few centimetres
//! above the ground, or lifting off, borrows thrust from the auxiliary field with α
//! interior (docs/optimal-control.md, "Limitations"). Such points have no exact neighbour,
//! and the homotopy stalls.
//!
//! The smoothing phase removes the choice: α_i = H_w(c_i) = ½(1 + tanh(c_i / w_i)) at every
//! stage point (the regularization of a Filippov system by a sigmoid, Teixeira and
//! Sotomayor; the smoothed time-freezing system is an ordinary stiff ODE whose sliding
//! motions are its fast-slow limits). Each NLP of the phase is a trajectory optimization of
//! a physically consistent, if soft, contact model; the widths w shrink by the given
//! factors, each NLP warm-started from the previous one. The complementarity rows are off
//! during the phase (their products are O(w) small anyway), the multipliers keep
//! c = λᵖ − λⁿ, and a small linear cost ε Σ (λᵖ + λⁿ) picks the complementary split
//! λᵖ = max(c, 0), λⁿ = max(−c, 0) (without it the barrier would push both to infinity).
//! After the phase the smoothing rows are released, the multipliers are projected onto
//! that split, and the MPCC homotopy (Scholtes or ℓ1) starts from the smoothed trajectory
//! with the options' σ₀ — small, because the smoothed point is nearly complementary.
//! The smoothed system cannot in general meet the terminal constraint from the trivial
//! initialization (its first NLPs are locally infeasible, measured on the particle and the
//! hopper), so during the phase the terminal constraint is the penalty
//! w Σ (y_i(T̃) − target_i)² with w = [`Smoothing::terminal_weight`], and the phase ends
//! with one NLP at the last width with the terminal constraint hard.
//! This is a decision of ours (the paper and nosnoc start the homotopy from the trivial
//! initialization directly); it changes the path to the exact solution, not the solution
//! set.
//!
//! [`solve_ocp_with_growth`] runs the phase through a sequence of systems before the
//! problem's own ([`Growth`]): on the hopper, the elliptic holes grown from nothing to their
//! full size. Measured (docs/decisions/002-time-freezing.md, "Hole growth"): with the full
//! holes from the start the smoothed optimum stops in front of the first hole; grown in four
//! steps, every step solves and the last one clears all three holes and reaches the target.

use std::sync::Arc;

pub use crate::smoothed_switch::{heaviside, Smoothing};

use crate::fesd::{
    build, comp_residual, relaxed_nlp_options, solve_built, FesdBlock, FesdOptions, Horizon,
    Layout, NlpLog, OcpSolution,
};
use crate::ipopt::{solve, thread_cpu_seconds, IpoptSolution};
use crate::nlp::BlockNlp;
use crate::time_freezing::TimeFreezing;
use crate::OcpError;

/// Runs the smoothing phase on an NLP built with [`MpccStrategy::smoothing`](crate::fesd::MpccStrategy::smoothing) set and
/// returns the last smoothed point, its multipliers projected onto the complementary split;
/// appends one entry per NLP to `log`, failed ones included (`sigma` holds the width
/// factor, or −σ for the closing NLPs of [`Smoothing::cross_sigmas`]). With a soft terminal the
/// phase ends with one more NLP at the last width with the terminal constraint hard (kept
/// only if IPOPT converges). The smoothing rows are released and the multiplier cost
/// switched off before returning, so the NLP is the plain MPCC relaxation again. A failing
/// NLP ends the phase at the last converged point; a failure of the first one is an error.
pub fn run_phase(
    nlp: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    x0: Vec<f64>,
    o: &FesdOptions,
    sm: &Smoothing,
    close_terminal: bool,
    log: &mut Vec<NlpLog>,
) -> Result<Vec<f64>, OcpError> {
    let mut x = x0;
    let saved_gu = nlp.gu.clone();
    for r in &layout.comp_rows {
        for i in 0..layout.comp_row_len {
            nlp.gu[r + i] = 1e20;
        }
    }
    let mut warm: Option<IpoptSolution> = None;
    let mut last_factor = sm.factors[0];
    for factor in &sm.factors {
        set_phase_weights(nlp, sm, *factor, sm.terminal_weight);
        match solve_step(nlp, layout, &x, warm.as_ref(), o, *factor, log) {
            Ok(sol) => {
                x = sol.x.clone();
                warm = Some(sol);
                last_factor = *factor;
            }
            Err(_) if warm.is_some() => break,
            Err(e) => return Err(e),
        }
    }
    if close_terminal && !layout.terminal.is_empty() {
        let (xl, xu) = (nlp.xl.clone(), nlp.xu.clone());
        set_phase_weights(nlp, sm, last_factor, 0.0);
        let mut xt = x.clone();
        for (i, v) in &layout.terminal {
            nlp.xl[*i] = *v;
            nlp.xu[*i] = *v;
            xt[*i] = *v;
        }
        match solve_step(nlp, layout, &xt, warm.as_ref(), o, last_factor, log) {
            Ok(sol) => {
                x = sol.x.clone();
                warm = Some(sol);
            }
            Err(_) => (nlp.xl, nlp.xu) = (xl, xu),
        }
    }
    for sigma in &sm.cross_sigmas {
        set_phase_weights(nlp, sm, last_factor, 0.0);
        for r in &layout.comp_rows {
            for i in 0..layout.comp_row_len {
                nlp.gu[r + i] = *sigma;
            }
        }
        for b in nlp.blocks.iter_mut() {
            if let (FesdBlock::Comp { weight, .. }, None) = (&mut b.kind, b.row) {
                *weight = 1.0 / sigma;
            }
        }
        match solve_step(nlp, layout, &x, warm.as_ref(), o, -sigma, log) {
            Ok(sol) => {
                x = sol.x.clone();
                warm = Some(sol);
            }
            Err(_) => break,
        }
    }
    nlp.gu = saved_gu;
    for b in nlp.blocks.iter_mut() {
        match (&mut b.kind, b.row) {
            (FesdBlock::Smoothing { widths }, Some(row)) => {
                for i in 0..widths.len() {
                    nlp.gl[row + i] = -1e20;
                    nlp.gu[row + i] = 1e20;
                }
            }
            (FesdBlock::LambdaSum { weight }, _) => *weight = 0.0,
            _ => {}
        }
    }
    project_multipliers(layout, &mut x);
    Ok(x)
}

/// Widths w = base × `factor`, the multiplier cost on, the ℓ1 complementarity penalty off
/// and the soft-terminal weight `terminal_weight`.
fn set_phase_weights(
    nlp: &mut BlockNlp<FesdBlock>,
    sm: &Smoothing,
    factor: f64,
    terminal_weight: f64,
) {
    for b in nlp.blocks.iter_mut() {
        match &mut b.kind {
            FesdBlock::Smoothing { widths } => {
                for (w, base) in widths.iter_mut().zip(&sm.widths) {
                    *w = base * factor;
                }
            }
            FesdBlock::LambdaSum { weight } => *weight = sm.lambda_weight,
            FesdBlock::Comp { weight, .. } if b.row.is_none() => *weight = 0.0,
            FesdBlock::Terminal { weight, .. } => *weight = terminal_weight,
            _ => {}
        }
    }
}

/// One NLP of the phase, warm-started from `warm` when given; logged (also when it fails).
fn solve_step(
    nlp: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    x: &[f64],
    warm: Option<&IpoptSolution>,
    o: &FesdOptions,
    factor: f64,
    log: &mut Vec<NlpLog>,
) -> Result<IpoptSolution, OcpError> {
    let duals = warm.filter(|_| o.nlp.warm_duals);
    let mut opts = relaxed_nlp_options(o, duals.map(|_| 1e-4));
    if let Some(limit) = o.mpcc.smoothing.as_ref().and_then(|sm| sm.max_iter) {
        opts.int.push(("max_iter".into(), limit));
    }
    let result = solve(nlp, x, duals, &opts);
    let (sol, ok) = match &result {
        Ok(sol) => (sol, true),
        Err(OcpError::Ipopt { solution, .. }) => (solution.as_ref(), false),
        Err(_) => return result,
    };
    let comp = comp_residual(layout, &sol.x, o.discretization.fesd);
    if o.nlp.verbose {
        eprintln!(
            "smoothing {}{:.3e}: objective {:.6e}, complementarity {comp:.3e}, {} iterations, {:.2} s, {:?}{}",
            if factor < 0.0 { "with complementarity ≤ " } else { "×" },
            factor.abs(),
            sol.objective,
            sol.iterations,
            sol.cpu_seconds,
            sol.status,
            if ok { "" } else { " (failed)" }
        );
        if !ok && warm.is_none() {
            print_worst_rows(nlp, &sol.x);
        }
    }
    log.push(NlpLog {
        sigma: factor,
        objective: sol.objective,
        comp_residual: comp,
        iterations: sol.iterations,
        cpu_seconds: sol.cpu_seconds,
        status: sol.status,
    });
    if let Ok(sol) = &result {
        crate::fesd::write_checkpoint(o, &sol.x)?;
    }
    result
}

/// Violation max(l − g, g − u, 0) of every constraint row of `nlp` at `x`, with its block
/// index, output index within the block and value g: (violation, block, output, value).
fn row_violations(nlp: &BlockNlp<FesdBlock>, x: &[f64]) -> Vec<(f64, usize, usize, f64)> {
    let (_, g) = nlp.eval_all(x);
    let mut rows = vec![];
    for (bi, b) in nlp.blocks.iter().enumerate() {
        let Some(r) = b.row else { continue };
        for i in 0..b.n_out {
            let v = (nlp.gl[r + i] - g[r + i]).max(g[r + i] - nlp.gu[r + i]);
            rows.push((v.max(0.0), bi, i, g[r + i]));
        }
    }
    rows
}

/// Diagnostic print to standard error: the 15 most violated constraint rows of `nlp` at `x`
/// with their block kinds (printed after a failed first NLP of a verbose run).
pub(crate) fn print_worst_rows(nlp: &BlockNlp<FesdBlock>, x: &[f64]) {
    let mut rows: Vec<_> = row_violations(nlp, x)
        .into_iter()
        .filter(|r| r.0 > 0.0)
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (v, bi, i, value) in rows.iter().take(15) {
        let name = match &nlp.blocks[*bi].kind {
            FesdBlock::Collocation { .. } => "collocation",
            FesdBlock::Algebraic { .. } => "algebraic",
            FesdBlock::Smoothing { .. } => "smoothing",
            FesdBlock::Path { .. } => "path",
            FesdBlock::SumH => "sum h",
            FesdBlock::Comp { .. } => "comp",
            _ => "other",
        };
        eprintln!("violation {v:.3e} block {bi} out {i} value {value:.4e} {name}");
    }
}

/// The system of a model continuation at a scale s ∈ [0, 1) (1 is the problem's own
/// system), e.g. the hopper with its holes' semi-axes scaled by s.
pub type SystemAt = Arc<dyn Fn(f64) -> Result<Arc<TimeFreezing>, OcpError> + Send + Sync>;

/// Systems that the smoothing phase passes through before the problem's own, each phase
/// warm-started from the previous one's point (a continuation in the model, e.g. obstacles
/// grown from nothing to full size). The systems must have the problem's dimensions, so
/// that the NLPs share their variables; they may differ in their path constraints.
#[derive(Clone)]
pub struct Growth {
    /// Scales of the stages before the problem's own (scale 1), increasing in [0, 1); the
    /// first starts from the trivial initialization with the widths [`Smoothing::factors`].
    pub scales: Vec<f64>,
    /// The system at a scale below 1.
    pub system: SystemAt,
    /// Width factors of the phase of every later system, the problem's own included
    /// (re-tightened from a wider sigmoid, e.g. 3, 1, 0.3, 0.1).
    pub factors: Vec<f64>,
    /// Most stages inserted in all when a stage fails ([`bisect_continuation`]); 0 stops at
    /// the first failure.
    pub bisections: usize,
    /// End the phase of every stage with the hard-terminal NLP (as the problem's own), not
    /// only the problem's own system's.
    pub close_stages: bool,
}

impl std::fmt::Debug for Growth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Growth")
            .field("scales", &self.scales)
            .field("factors", &self.factors)
            .field("bisections", &self.bisections)
            .field("close_stages", &self.close_stages)
            .finish_non_exhaustive()
    }
}

impl Growth {
    /// Checks the scales (at least one, increasing, in [0, 1)) and the later phases' width
    /// factors (positive, finite, at least one).
    pub fn validate(&self) -> Result<(), OcpError> {
        let ok = !self.scales.is_empty()
            && self.scales.iter().all(|s| (0.0..1.0).contains(s))
            && self.scales.windows(2).all(|w| w[0] < w[1]);
        if !ok {
            return Err(OcpError::InvalidInput(format!(
                "growth.scales must be a nonempty increasing list in [0, 1), got {:?}",
                self.scales
            )));
        }
        if self.factors.is_empty() || self.factors.iter().any(|f| !(f.is_finite() && *f > 0.0)) {
            return Err(OcpError::InvalidInput(format!(
                "growth.factors must be a nonempty list of positive finite values, got {:?}",
                self.factors
            )));
        }
        Ok(())
    }

    /// The system of stage `k` (of [`Growth::scales`]).
    ///
    /// # Errors
    /// `k` out of range, or the error of [`Growth::system`].
    pub fn stage(&self, k: usize) -> Result<Arc<TimeFreezing>, OcpError> {
        let s = self.scales.get(k).ok_or_else(|| {
            OcpError::InvalidInput(format!(
                "growth has {} stages, stage {k} asked for",
                self.scales.len()
            ))
        })?;
        (self.system)(*s)
    }
}

/// Smallest gap between two scales that [`bisect_continuation`] still halves.
pub const MIN_SCALE_STEP: f64 = 1e-3;

/// A continuation that [`bisect_continuation`] could not finish.
#[derive(Debug)]
pub struct ContinuationFailure<E> {
    /// The scale whose step failed last.
    pub scale: f64,
    /// The last scale that was solved (`None`: the first step failed).
    pub solved: Option<f64>,
    /// The failing step's error.
    pub error: E,
}

/// Drives a continuation over `scales` and then 1 (the problem's own system), calling
/// `step(scale)` for each in order. When a step fails after the scale d was solved, the
/// midpoint (d + s)/2 of the failing step is inserted and tried first, then s again (a
/// decision of ours, the paper grows nothing: a step that is too long for the NLP's
/// Newton-type solver from the last point is halved, as in any predictor-free
/// continuation), at most `bisections` times in all and not below a step of
/// [`MIN_SCALE_STEP`]. Returns the solved scales in order.
///
/// # Errors
/// The failing scale, the last solved one and the step's error when the first step fails,
/// or when a step fails with no bisection left.
pub fn bisect_continuation<E>(
    scales: &[f64],
    bisections: usize,
    mut step: impl FnMut(f64) -> Result<(), E>,
) -> Result<Vec<f64>, ContinuationFailure<E>> {
    let mut pending: Vec<f64> = std::iter::once(1.0)
        .chain(scales.iter().rev().copied())
        .collect();
    let mut solved: Vec<f64> = vec![];
    let mut left = bisections;
    while let Some(&scale) = pending.last() {
        match step(scale) {
            Ok(()) => {
                solved.push(scale);
                pending.pop();
            }
            Err(error) => {
                let last = solved.last().copied();
                match last {
                    Some(d) if left > 0 && scale - d > 2.0 * MIN_SCALE_STEP => {
                        left -= 1;
                        pending.push(0.5 * (d + scale));
                    }
                    _ => {
                        return Err(ContinuationFailure {
                            scale,
                            solved: last,
                            error,
                        })
                    }
                }
            }
        }
    }
    Ok(solved)
}

/// Solves the OCP of `tf` through the smoothing phase on every system of `growth` in turn
/// (the first from the trivial initialization, each later one from the previous point with
/// the factors [`Growth::factors`]; the closing NLPs of [`Smoothing::cross_sigmas`] only on
/// `tf`, the hard-terminal one on every stage with [`Growth::close_stages`]), then the MPCC
/// homotopy on `tf` as [`crate::fesd::solve_ocp`]. A stage whose phase fails at its first
/// NLP is bisected ([`bisect_continuation`], up to [`Growth::bisections`] inserted stages).
/// The solution's log, iteration count and CPU time cover all phases, failed NLPs included.
///
/// # Errors
/// [`OcpError::InvalidInput`] without [`MpccStrategy::smoothing`](crate::fesd::MpccStrategy::smoothing) or for an invalid
/// `growth`; the first stage's error when it fails; [`OcpError::GrowthStalled`] (with the
/// last converged point and the log of every phase) when a later stage fails with no
/// bisection left; the homotopy's errors on `tf`, whose [`OcpError::HomotopyStalled`] log
/// then also holds the earlier phases; when the homotopy's first NLP fails,
/// [`OcpError::HomotopyStalled`] with the smoothed point (the last converged one), its
/// constraint violation and the log of every phase and of the failed NLP.
pub fn solve_ocp_with_growth(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    growth: &Growth,
) -> Result<OcpSolution, OcpError> {
    let start = thread_cpu_seconds();
    let sm = o.mpcc.smoothing.clone().ok_or_else(|| {
        OcpError::InvalidInput("growth needs the smoothing phase (fesd.smoothing)".into())
    })?;
    growth.validate()?;
    let mut x: Option<Vec<f64>> = None;
    let mut log = vec![];
    let mut own = None;
    let result = bisect_continuation(&growth.scales, growth.bisections, |scale| {
        let is_own = scale >= 1.0;
        let stage_sm = Smoothing {
            factors: if x.is_none() {
                sm.factors.clone()
            } else {
                growth.factors.clone()
            },
            cross_sigmas: if is_own {
                sm.cross_sigmas.clone()
            } else {
                vec![]
            },
            ..sm.clone()
        };
        let so = {
            let mut o = o.clone();
            o.mpcc.smoothing = Some(stage_sm.clone());
            o
        };
        let system = if is_own {
            tf.clone()
        } else {
            (growth.system)(scale)?
        };
        if o.nlp.verbose {
            eprintln!("model growth: smoothing phase at scale {scale}");
        }
        let (mut nlp, layout, xt) = build(&system, hz, &so)?;
        let start_point = x.clone().unwrap_or(xt);
        let close = is_own || growth.close_stages;
        let xk = run_phase(
            &mut nlp,
            &layout,
            start_point,
            &so,
            &stage_sm,
            close,
            &mut log,
        )?;
        x = Some(xk);
        if is_own {
            own = Some((nlp, layout));
        }
        Ok(())
    });
    if let Err(f) = result {
        let ContinuationFailure {
            scale,
            solved,
            error,
        } = f;
        return match (x, solved) {
            (Some(x), Some(solved)) => Err(OcpError::GrowthStalled {
                scale,
                solved,
                error: Box::new(error),
                x,
                log,
            }),
            _ => Err(error),
        };
    }
    let (Some((nlp, layout)), Some(x)) = (own, x) else {
        return Err(OcpError::InvalidInput(
            "model growth ended without the problem's own system".into(),
        ));
    };
    // the phase has run on `tf`'s NLP: the homotopy goes on from its point
    let homotopy_options = {
        let mut o = o.clone();
        o.mpcc.smoothing = None;
        o
    };
    let smoothed = (x.clone(), max_violation(&nlp, &x));
    match solve_built(tf, hz, &homotopy_options, nlp, &layout, x) {
        Ok(mut out) => {
            log.append(&mut out.log);
            out.nlp_iterations = log.iter().map(|l| l.iterations).sum();
            out.log = log;
            out.cpu_seconds = thread_cpu_seconds() - start;
            Ok(out)
        }
        Err(OcpError::HomotopyStalled {
            comp_residual,
            constraint_violation,
            x,
            log: mut rest,
        }) => {
            log.append(&mut rest);
            Err(OcpError::HomotopyStalled {
                comp_residual,
                constraint_violation,
                x,
                log,
            })
        }
        Err(OcpError::Ipopt { solution, .. }) => {
            // the homotopy's first NLP failed: the smoothed point is the last converged one
            let (x, violation) = smoothed;
            Err(stalled_at_start(&layout, o, x, violation, &solution, log))
        }
        Err(e) => Err(e),
    }
}

/// The error of a homotopy whose first NLP (at σ₀) failed from `start`, a point the run
/// trusts (the smoothed point, or the point given to [`crate::fesd::solve_from_point`]):
/// [`OcpError::HomotopyStalled`] carrying `start` itself (constraint violation
/// `start_violation`) rather than IPOPT's failed iterate, with the failed NLP appended to
/// `log`. The partial solution a caller writes is then the last good point, from which the
/// end game can be restarted with other settings.
pub(crate) fn stalled_at_start(
    layout: &Layout,
    o: &FesdOptions,
    start: Vec<f64>,
    start_violation: f64,
    failed: &IpoptSolution,
    mut log: Vec<NlpLog>,
) -> OcpError {
    log.push(NlpLog {
        sigma: o.mpcc.sigma0,
        objective: failed.objective,
        comp_residual: comp_residual(layout, &failed.x, o.discretization.fesd),
        iterations: failed.iterations,
        cpu_seconds: failed.cpu_seconds,
        status: failed.status,
    });
    OcpError::HomotopyStalled {
        comp_residual: comp_residual(layout, &start, o.discretization.fesd),
        constraint_violation: start_violation,
        x: start,
        log,
    }
}

/// Largest violation of the constraint rows (the complementarity rows excepted: their
/// residual is reported on its own) and variable bounds of `nlp` at `x`.
pub(crate) fn max_violation(nlp: &BlockNlp<FesdBlock>, x: &[f64]) -> f64 {
    let bounds = x
        .iter()
        .zip(nlp.xl.iter().zip(&nlp.xu))
        .map(|(v, (l, u))| (l - v).max(v - u).max(0.0));
    let rows = row_violations(nlp, x)
        .into_iter()
        .filter(|r| {
            !matches!(
                nlp.blocks[r.1].kind,
                FesdBlock::Comp { .. } | FesdBlock::StewartComp { .. }
            )
        })
        .map(|r| r.0);
    bounds.chain(rows).fold(0.0, f64::max)
}

/// λᵖ, λⁿ ← max(c, 0), max(−c, 0) with c = λᵖ − λⁿ at every multiplier point.
fn project_multipliers(layout: &Layout, x: &mut [f64]) {
    let (_, nc, _, _) = layout.dims;
    for e in &layout.elems {
        for (lp, ln) in e.lp.iter().zip(&e.ln) {
            for i in 0..nc {
                let c = x[lp + i] - x[ln + i];
                x[lp + i] = c.max(0.0);
                x[ln + i] = (-c).max(0.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heaviside_is_a_sigmoid_with_the_given_width() {
        assert!((heaviside(0.0f64, 0.1) - 0.5).abs() < 1e-15);
        assert!((heaviside(0.1f64, 0.1) - 0.5 * (1.0 + 1f64.tanh())).abs() < 1e-15);
        assert_eq!(heaviside(5.0f64, 0.1), 1.0);
        assert_eq!(heaviside(-5.0f64, 0.1), 0.0);
        assert!(heaviside(1e-3f64, 1e-4) > 1.0 - 1e-8);
    }

    /// A mock continuation whose steps succeed only up to a length of 0.3 from the last
    /// solved scale: the failing steps are halved until they pass, in the bisection's
    /// order, and without bisections left the failure names the scales.
    #[test]
    fn a_failing_continuation_step_is_bisected_until_it_passes() {
        let run = |bisections: usize| {
            let mut attempts = vec![];
            let mut last = f64::NAN;
            let result = bisect_continuation(&[0.0, 0.25], bisections, |s| {
                attempts.push(s);
                if last.is_nan() || s - last <= 0.3 {
                    last = s;
                    Ok(())
                } else {
                    Err(format!("step to {s} too long"))
                }
            });
            (result, attempts)
        };
        let (result, attempts) = run(3);
        assert_eq!(
            result.expect("bisected"),
            vec![0.0, 0.25, 0.4375, 0.625, 0.8125, 1.0]
        );
        assert_eq!(
            attempts,
            vec![0.0, 0.25, 1.0, 0.625, 0.4375, 0.625, 1.0, 0.8125, 1.0]
        );
        let (result, _) = run(2);
        let f = result.expect_err("two bisections are too few");
        assert_eq!((f.scale, f.solved), (1.0, Some(0.625)));
        assert_eq!(f.error, "step to 1 too long");
        let f = bisect_continuation(&[0.0], 3, |_| Err("no")).expect_err("first step");
        assert_eq!((f.scale, f.solved), (0.0, None));
    }

    #[test]
    fn invalid_smoothing_options_are_named() {
        let s = Smoothing {
            widths: vec![0.01, 0.1],
            factors: vec![1.0],
            lambda_weight: 1e-3,
            cross_sigmas: vec![],
            terminal_weight: 100.0,
            max_iter: None,
        };
        let e = s.validate(3).unwrap_err().to_string();
        assert!(e.contains("smoothing.widths"), "{e}");
        let s = Smoothing {
            widths: vec![0.01; 3],
            factors: vec![],
            lambda_weight: 1e-3,
            cross_sigmas: vec![],
            terminal_weight: 100.0,
            max_iter: None,
        };
        assert!(s.validate(3).unwrap_err().to_string().contains("factors"));
    }
}
