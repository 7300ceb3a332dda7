//! Smoothing phase before the MPCC homotopy: the step functions of the time-freezing DCS
//! replaced by smooth sigmoids of the switching functions.
//!
//! In the step representation every α_i at a stage point is set-valued only where its
//! switching function c_i vanishes: α_i = 1 for c_i > 0, 0 for c_i < 0 (seed 002 eq. 27;
//! the complementarity α ⊥ λⁿ, 1 − α ⊥ λᵖ with c = λᵖ − λⁿ). The Scholtes relaxation
//! (products ≤ σ) and the ℓ1 penalty both let the optimizer *choose* α inside the relaxed
//! set, and on the hopper the relaxed optima use that choice: a foot a few centimetres
//! above the ground, or lifting off, borrows thrust from the auxiliary field with α
//! interior (docs/optimal-control.md, "what the relaxation is used for"). Such points have
//! no exact neighbour, and the homotopy stalls.
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
//! full size. Measured (docs/optimal-control.md, eleventh session): with the full holes from
//! the start the smoothed optimum stops in front of the first hole; grown in four steps,
//! every step solves and the last one clears all three holes and reaches the target.

use std::sync::Arc;

use crate::fesd::{
    build, comp_residual, relaxed_nlp_options, solve_built, FesdBlock, FesdOptions, Horizon,
    Layout, NlpLog, OcpSolution,
};
use crate::ipopt::{solve, thread_cpu_seconds, IpoptSolution};
use crate::nlp::{BlockNlp, Real};
use crate::tf::{Cls, TimeFreezing};
use crate::OcpError;

/// Options of the smoothing phase ([`FesdOptions::smoothing`]; problem files:
/// `[fesd.smoothing]`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Smoothing {
    /// Base width w_i per switching function (units of c_i: the gap in m, velocities in
    /// m/s for the hopper).
    pub widths: Vec<f64>,
    /// Width factors of the phase's NLPs, in order (e.g. 1, 0.3, 0.1, …).
    pub factors: Vec<f64>,
    /// Weight ε of the linear multiplier cost ε Σ (λᵖ + λⁿ) during the phase.
    #[serde(default = "default_lambda_weight")]
    pub lambda_weight: f64,
    /// Relaxations σ of the phase's closing NLPs (empty = none): at the last width, with
    /// the smoothing rows still on, the complementarity rows (Scholtes ≤ σ, or the ℓ1
    /// penalty with ρ = 1/σ) are switched on again. α is pinned to H_w(c) there, so the
    /// only way to lower the *cross* products (a switch inside an element, which the
    /// smoothing does not see) is to move the element boundaries onto the switches — the
    /// FESD step-size adaptation — without re-opening the relaxed set of α.
    #[serde(default)]
    pub cross_sigmas: Vec<f64>,
    /// Weight w of the soft terminal w Σ (y_i(T̃) − target_i)² during the phase.
    #[serde(default = "default_terminal_weight")]
    pub terminal_weight: f64,
}

fn default_lambda_weight() -> f64 {
    1e-3
}

fn default_terminal_weight() -> f64 {
    100.0
}

impl Smoothing {
    /// Checks widths (one positive finite value per switching function), factors (positive,
    /// finite, at least one) and the multiplier weight (positive, finite).
    pub fn validate(&self, n_c: usize) -> Result<(), OcpError> {
        let bad = |v: &f64| !(v.is_finite() && *v > 0.0);
        if self.widths.len() != n_c || self.widths.iter().any(bad) {
            return Err(OcpError::InvalidInput(format!(
                "smoothing.widths must hold {n_c} positive finite values (one per switching function), got {:?}",
                self.widths
            )));
        }
        if self.factors.is_empty() || self.factors.iter().any(bad) {
            return Err(OcpError::InvalidInput(format!(
                "smoothing.factors must be a nonempty list of positive finite values, got {:?}",
                self.factors
            )));
        }
        if bad(&self.terminal_weight) || self.cross_sigmas.iter().any(bad) {
            return Err(OcpError::InvalidInput(format!(
                "smoothing.terminal_weight and smoothing.cross_sigmas must be positive and finite, got {} and {:?}",
                self.terminal_weight, self.cross_sigmas
            )));
        }
        if bad(&self.lambda_weight) {
            return Err(OcpError::InvalidInput(format!(
                "smoothing.lambda_weight must be positive and finite, got {}",
                self.lambda_weight
            )));
        }
        Ok(())
    }
}

/// |c/w| beyond which H_w(c) is taken as exactly 0 or 1 (tanh(20) = 1 − 8e-18), which
/// also keeps the dual numbers' tanh away from overflow.
const SATURATION: f64 = 20.0;

/// The smoothed Heaviside function H_w(c) = ½(1 + tanh(c / w)).
pub fn heaviside<T: Real>(c: T, width: f64) -> T {
    let z = c / width;
    if z.re() > SATURATION {
        T::from(1.0)
    } else if z.re() < -SATURATION {
        T::from(0.0)
    } else {
        (z.tanh() + 1.0) * 0.5
    }
}

/// Runs the smoothing phase on an NLP built with [`FesdOptions::smoothing`] set and
/// returns the last smoothed point, its multipliers projected onto the complementary split,
/// and one log entry per NLP (`sigma` holds the width factor, or −σ for the closing NLPs
/// of [`Smoothing::cross_sigmas`]). With a soft terminal the
/// phase ends with one more NLP at the last width with the terminal constraint hard (kept
/// only if IPOPT converges). The smoothing rows are released and the multiplier cost
/// switched off before returning, so the NLP is the plain MPCC relaxation again. A failing
/// NLP ends the phase at the last converged point; a failure of the first one is an error.
pub fn run_phase<C: Cls>(
    nlp: &mut BlockNlp<FesdBlock<C>>,
    layout: &Layout,
    x0: Vec<f64>,
    o: &FesdOptions,
    sm: &Smoothing,
) -> Result<(Vec<f64>, Vec<NlpLog>), OcpError> {
    let mut x = x0;
    let mut log = vec![];
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
        match solve_step(nlp, layout, &x, warm.as_ref(), o, *factor, &mut log) {
            Ok(sol) => {
                x = sol.x.clone();
                warm = Some(sol);
                last_factor = *factor;
            }
            Err(_) if warm.is_some() => break,
            Err(e) => return Err(e),
        }
    }
    if !layout.terminal.is_empty() {
        let (xl, xu) = (nlp.xl.clone(), nlp.xu.clone());
        set_phase_weights(nlp, sm, last_factor, 0.0);
        let mut xt = x.clone();
        for (i, v) in &layout.terminal {
            nlp.xl[*i] = *v;
            nlp.xu[*i] = *v;
            xt[*i] = *v;
        }
        match solve_step(nlp, layout, &xt, warm.as_ref(), o, last_factor, &mut log) {
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
        match solve_step(nlp, layout, &x, warm.as_ref(), o, -sigma, &mut log) {
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
    Ok((x, log))
}

/// Widths w = base × `factor`, the multiplier cost on, the ℓ1 complementarity penalty off
/// and the soft-terminal weight `terminal_weight`.
fn set_phase_weights<C: Cls>(
    nlp: &mut BlockNlp<FesdBlock<C>>,
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
fn solve_step<C: Cls>(
    nlp: &mut BlockNlp<FesdBlock<C>>,
    layout: &Layout,
    x: &[f64],
    warm: Option<&IpoptSolution>,
    o: &FesdOptions,
    factor: f64,
    log: &mut Vec<NlpLog>,
) -> Result<IpoptSolution, OcpError> {
    let duals = warm.filter(|_| o.warm_duals);
    let opts = relaxed_nlp_options(o, duals.map(|_| 1e-4));
    let result = solve(nlp, x, duals, &opts);
    let (sol, ok) = match &result {
        Ok(sol) => (sol, true),
        Err(OcpError::Ipopt { solution, .. }) => (solution.as_ref(), false),
        Err(_) => return result,
    };
    let comp = comp_residual(layout, &sol.x, o.fesd);
    if o.verbose {
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
    result
}

/// Diagnostic print to standard error: the 15 most violated constraint rows of `nlp` at `x`
/// with their block kinds (used after a failed first NLP, and by `hopper_probe`).
pub fn print_worst_rows<C: Cls>(nlp: &BlockNlp<FesdBlock<C>>, x: &[f64]) {
    let (_, g) = nlp.eval_all(x);
    let mut rows = vec![];
    for (bi, b) in nlp.blocks.iter().enumerate() {
        let Some(r) = b.row else { continue };
        for i in 0..b.n_out {
            let v = (nlp.gl[r + i] - g[r + i]).max(g[r + i] - nlp.gu[r + i]);
            if v > 0.0 {
                let name = match &b.kind {
                    FesdBlock::Collocation { .. } => "collocation",
                    FesdBlock::Algebraic { .. } => "algebraic",
                    FesdBlock::Smoothing { .. } => "smoothing",
                    FesdBlock::Path { .. } => "path",
                    FesdBlock::SumH => "sum h",
                    FesdBlock::Comp { .. } => "comp",
                    _ => "other",
                };
                rows.push((v, bi, i, name, g[r + i]));
            }
        }
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    for r in rows.iter().take(15) {
        eprintln!(
            "violation {:.3e} block {} out {} value {:.4e} {}",
            r.0, r.1, r.2, r.4, r.3
        );
    }
}

/// Systems that the smoothing phase passes through before the problem's own, each phase
/// warm-started from the previous one's point (a continuation in the model, e.g. obstacles
/// grown from nothing to full size). The systems must have the problem's dimensions, so
/// that the NLPs share their variables; they may differ in their path constraints.
#[derive(Debug, Clone)]
pub struct Growth<C> {
    /// The systems before the problem's own, in order; the first starts from the trivial
    /// initialization with the widths [`Smoothing::factors`].
    pub stages: Vec<Arc<TimeFreezing<C>>>,
    /// Width factors of the phase of every later system, the problem's own included
    /// (re-tightened from a wider sigmoid, e.g. 3, 1, 0.3, 0.1).
    pub factors: Vec<f64>,
}

impl<C> Growth<C> {
    /// Checks the later phases' width factors (positive, finite, at least one) and that
    /// there is at least one stage.
    pub fn validate(&self) -> Result<(), OcpError> {
        if self.stages.is_empty() {
            return Err(OcpError::InvalidInput(
                "growth needs at least one stage before the problem's own system".into(),
            ));
        }
        if self.factors.is_empty() || self.factors.iter().any(|f| !(f.is_finite() && *f > 0.0)) {
            return Err(OcpError::InvalidInput(format!(
                "growth.factors must be a nonempty list of positive finite values, got {:?}",
                self.factors
            )));
        }
        Ok(())
    }
}

/// Solves the OCP of `tf` through the smoothing phase on every system of `growth` in turn
/// (the first from the trivial initialization, each later one from the previous point with
/// the factors [`Growth::factors`]; the closing NLPs of [`Smoothing::cross_sigmas`] only on
/// `tf`), then the MPCC homotopy on `tf` as [`crate::fesd::solve_ocp`]. The solution's log,
/// iteration count and CPU time cover all phases.
///
/// # Errors
/// [`OcpError::InvalidInput`] without [`FesdOptions::smoothing`] or for an invalid
/// `growth`; a failing first NLP of a stage; the homotopy's errors on `tf`, whose
/// [`OcpError::HomotopyStalled`] log then also holds the earlier phases.
pub fn solve_ocp_with_growth<C: Cls>(
    tf: &Arc<TimeFreezing<C>>,
    hz: &Horizon,
    o: &FesdOptions,
    growth: &Growth<C>,
) -> Result<OcpSolution, OcpError> {
    let start = thread_cpu_seconds();
    let sm = o.smoothing.clone().ok_or_else(|| {
        OcpError::InvalidInput("growth needs the smoothing phase (fesd.smoothing)".into())
    })?;
    growth.validate()?;
    let mut x: Option<Vec<f64>> = None;
    let mut log = vec![];
    for (k, stage) in growth.stages.iter().enumerate() {
        let stage_sm = Smoothing {
            factors: if k == 0 {
                sm.factors.clone()
            } else {
                growth.factors.clone()
            },
            cross_sigmas: vec![],
            ..sm.clone()
        };
        let so = FesdOptions {
            smoothing: Some(stage_sm.clone()),
            ..o.clone()
        };
        let (mut nlp, layout, xt) = build(stage, hz, &so)?;
        let (xk, lk) = run_phase(&mut nlp, &layout, x.unwrap_or(xt), &so, &stage_sm)?;
        x = Some(xk);
        log.extend(lk);
    }
    let last = FesdOptions {
        smoothing: Some(Smoothing {
            factors: growth.factors.clone(),
            ..sm
        }),
        ..o.clone()
    };
    let (nlp, layout, xt) = build(tf, hz, &last)?;
    match solve_built(tf, hz, &last, nlp, &layout, x.unwrap_or(xt)) {
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
        Err(e) => Err(e),
    }
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

    #[test]
    fn invalid_smoothing_options_are_named() {
        let s = Smoothing {
            widths: vec![0.01, 0.1],
            factors: vec![1.0],
            lambda_weight: 1e-3,
            cross_sigmas: vec![],
            terminal_weight: 100.0,
        };
        let e = s.validate(3).unwrap_err().to_string();
        assert!(e.contains("smoothing.widths"), "{e}");
        let s = Smoothing {
            widths: vec![0.01; 3],
            factors: vec![],
            lambda_weight: 1e-3,
            cross_sigmas: vec![],
            terminal_weight: 100.0,
        };
        assert!(s.validate(3).unwrap_err().to_string().contains("factors"));
    }
}
