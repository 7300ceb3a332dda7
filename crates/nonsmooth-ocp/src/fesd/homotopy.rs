//! The MPCC homotopy ([`homotopy`]): Scholtes relaxation or ℓ1 penalty with σ ← κσ, cut
//! continuation, soft terminal phase and retries.

use super::blocks::FesdBlock;
use super::complementarity::comp_residual;
use super::infeasibility::{binding_constraints, stagnation, Unreachability};
use super::layout::Layout;
use super::options::{write_checkpoint, CutStep, FesdOptions, CUT_OFF};
use super::polish::polish;
use super::relaxed_nlp::{relaxed_nlp_options, NlpLog};
use crate::ipopt::{solve, IpoptOptions, IpoptSolution};
use crate::nlp::BlockNlp;
use crate::OcpError;

/// Scholtes relaxation homotopy: σ_i = σ₀ κ^i, each NLP warm-started from the previous one,
/// until the complementarity residual is ≤ comp_tol. A failed NLP after the first ends the
/// homotopy at the last converged point, or, with [`MpccStrategy::homotopy_retries`](crate::fesd::MpccStrategy::homotopy_retries), is
/// retried with a smaller step (see there). When the first NLP fails after the smoothing
/// phase, the error is [`OcpError::HomotopyStalled`] with the smoothed point (the last
/// converged one), not IPOPT's failed iterate; without a smoothing phase it is IPOPT's
/// error with that iterate.
pub fn homotopy(
    nlp: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    x0: Vec<f64>,
    o: &FesdOptions,
) -> Result<(IpoptSolution, Vec<NlpLog>), OcpError> {
    homotopy_with_trail(nlp, layout, x0, o).map(|(sol, log, _)| (sol, log))
}

/// [`homotopy`] that also returns the converged point before the last one (the start point
/// when only one NLP converged): the active-set method's phase I reads from the two which
/// side of each pair shrinks along the homotopy.
pub fn homotopy_with_trail(
    nlp: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    x0: Vec<f64>,
    o: &FesdOptions,
) -> Result<(IpoptSolution, Vec<NlpLog>, Vec<f64>), OcpError> {
    let mut log = vec![];
    let mut x = match &o.mpcc.smoothing {
        Some(sm) if layout.smoothing => {
            crate::smoothing::run_phase(nlp, layout, x0, o, sm, true, &mut log)?
        }
        _ => x0,
    };
    // the smoothed point, kept for the error when the first NLP fails from it (the loop
    // below fixes the terminal entries of `x`)
    let smoothed = (o.mpcc.smoothing.is_some() && layout.smoothing).then(|| x.clone());
    let mut previous = x.clone();
    let mut warm: Option<IpoptSolution> = None;
    let mut sigma = o.mpcc.sigma0;
    let mut polished = false;
    // the homotopy's own NLPs (after the smoothing phase's), for the infeasibility test
    let first = log.len();
    // whether the stagnation has been tested by releasing the target (once per homotopy)
    let mut target_tested = false;
    // σ of the last converged NLP, the current step factor and the retries left
    let (mut sigma_ok, mut step, mut retries) =
        (o.mpcc.sigma0, o.mpcc.kappa, o.mpcc.homotopy_retries);
    for it in 0..o.mpcc.n_homotopy.max(o.mpcc.cut_schedule.len()).max(1) {
        if let Some(step) = o.mpcc.cut_schedule.get(it) {
            sigma = step.sigma;
            set_flight_cuts(nlp, step);
        }
        set_relaxation(nlp, layout, o, sigma, &mut x);
        let opts = homotopy_nlp_options(o, it, sigma);
        let duals = if o.nlp.warm_duals {
            warm.as_ref()
        } else {
            None
        };
        let sol = match solve(nlp, &x, duals, &opts) {
            Ok(s) => s,
            Err(OcpError::Ipopt { solution, .. }) if warm.is_some() => {
                // a failed tightening keeps the last converged point
                if o.nlp.verbose {
                    eprintln!(
                        "σ = {sigma:.3e}: failed ({:?}) after {} iterations",
                        solution.status, solution.iterations
                    );
                }
                let comp = comp_residual(layout, &solution.x, o.discretization.fesd);
                log.push(NlpLog::of(sigma, comp, &solution));
                if retries > 0 && o.mpcc.cut_schedule.len() <= it {
                    retries -= 1;
                    step = step.sqrt();
                    sigma = sigma_ok * step;
                    continue;
                }
                break;
            }
            Err(e) => {
                // the first NLP failed: after the smoothing phase its point is the last
                // converged one
                if let (OcpError::Ipopt { solution, .. }, Some(start)) = (&e, smoothed) {
                    let violation = crate::smoothing::max_violation(nlp, &start);
                    return Err(crate::smoothing::stalled_at_start(
                        layout, o, start, violation, solution, log,
                    ));
                }
                return Err(e);
            }
        };
        let comp = comp_residual(layout, &sol.x, o.discretization.fesd);
        if o.nlp.verbose {
            eprintln!(
                "σ = {sigma:.3e}: objective {:.6e}, complementarity {comp:.3e}, {} iterations, {:.2} s, {:?}",
                sol.objective, sol.iterations, sol.cpu_seconds, sol.status
            );
        }
        log.push(NlpLog::of(sigma, comp, &sol));
        let stagnated = if target_tested {
            None
        } else {
            stagnating(layout, o, sigma, &sol, &log[first..])
        };
        if let Some(sigma_from) = stagnated {
            // only once: whether the residual falls when the target is released tells an
            // unreachable target from a homotopy that stalls on its own
            target_tested = true;
            let released = release_target(nlp, layout, &sol, o);
            if o.nlp.verbose {
                eprintln!(
                    "complementarity stagnates at {comp:.3e}; with the terminal values released: {}",
                    released.map_or("no solution".into(), |c| format!("{c:.3e}"))
                );
            }
            if released.is_some_and(|c| c <= o.mpcc.polish_tol.max(0.1 * comp)) {
                return Err(OcpError::Unreachable {
                    detail: Box::new(Unreachability {
                        comp_residual: comp,
                        constraint_violation: sol.constraint_violation,
                        sigma_from,
                        sigma,
                        binding: binding_constraints(nlp, layout, &sol, sigma),
                    }),
                    x: sol.x,
                    log,
                });
            }
        }
        previous = std::mem::replace(&mut x, sol.x.clone());
        write_checkpoint(o, &x)?;
        let done = comp <= o.mpcc.comp_tol;
        if !done && o.mpcc.polish && comp <= o.mpcc.polish_tol {
            if let Some((p, entry)) = polish(&mut *nlp, layout, &sol, o) {
                if entry.comp_residual <= o.mpcc.comp_tol {
                    log.push(entry);
                    warm = Some(p);
                    polished = true;
                    break;
                }
            }
        }
        warm = Some(sol);
        if done {
            break;
        }
        sigma_ok = sigma;
        step = o.mpcc.kappa;
        sigma *= step;
    }
    let mut sol = warm.ok_or_else(|| OcpError::InvalidInput("no NLP solved".into()))?;
    if o.mpcc.polish && !polished {
        if let Some((p, entry)) = polish(&mut *nlp, layout, &sol, o) {
            log.push(entry);
            sol = p;
        }
    }
    let comp = comp_residual(layout, &sol.x, o.discretization.fesd);
    if comp > o.mpcc.comp_tol && !o.mpcc.accept_relaxed {
        return Err(OcpError::HomotopyStalled {
            comp_residual: comp,
            constraint_violation: sol.constraint_violation,
            x: sol.x,
            log,
        });
    }
    Ok((sol, log, previous))
}

/// The σ of an earlier NLP whose complementarity residual the converged relaxed NLP `sol`
/// at `sigma` did not halve ([`stagnation`], [`MpccStrategy::unreachable_decades`](crate::fesd::MpccStrategy::unreachable_decades)), in
/// the penalty or elastic homotopy with the terminal constraint hard and every constraint
/// met: the sign of an MPCC with no feasible point near the path.
fn stagnating(
    layout: &Layout,
    o: &FesdOptions,
    sigma: f64,
    sol: &IpoptSolution,
    log: &[NlpLog],
) -> Option<f64> {
    let penalized = o.mpcc.penalty || layout.elastic.is_some();
    let feasible = sol.constraint_violation <= 1e3 * o.nlp.tol;
    if !(penalized && feasible && terminal_is_hard(layout, o, sigma)) {
        return None;
    }
    stagnation(log, o.mpcc.polish_tol, o.mpcc.unreachable_decades)
}

/// The complementarity residual of the relaxed NLP solved again from `sol` with
/// the final state's fixed components (the terminal values) released to the bounds of the
/// stage point before (`None` when that NLP fails); the bounds are restored.
fn release_target(
    nlp: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    sol: &IpoptSolution,
    o: &FesdOptions,
) -> Option<f64> {
    let ny = layout.dims.0;
    let n = layout.elems.len();
    let (last, before) = (
        layout.elems.get(n.checked_sub(1)?)?,
        layout.elems.get(n.checked_sub(2)?),
    );
    let reference = before.map_or(last.y[0], |e| e.y_end);
    let fixed: Vec<usize> = (0..ny - 1)
        .filter(|&c| nlp.xl[last.y_end + c] == nlp.xu[last.y_end + c])
        .collect();
    let saved: Vec<(f64, f64)> = fixed
        .iter()
        .map(|&c| (nlp.xl[last.y_end + c], nlp.xu[last.y_end + c]))
        .collect();
    for &c in &fixed {
        nlp.xl[last.y_end + c] = nlp.xl[reference + c];
        nlp.xu[last.y_end + c] = nlp.xu[reference + c];
    }
    let released = solve(nlp, &sol.x, None, &relaxed_nlp_options(o, None))
        .ok()
        .map(|r| comp_residual(layout, &r.x, o.discretization.fesd));
    for (&c, (lo, hi)) in fixed.iter().zip(saved) {
        nlp.xl[last.y_end + c] = lo;
        nlp.xu[last.y_end + c] = hi;
    }
    released
}

/// Whether the terminal constraint is imposed exactly at relaxation `sigma` (no soft
/// terminal phase, or σ at or below [`MpccStrategy::soft_terminal_sigma`](crate::fesd::MpccStrategy::soft_terminal_sigma)).
fn terminal_is_hard(layout: &Layout, o: &FesdOptions, sigma: f64) -> bool {
    layout.terminal.is_empty()
        || o.mpcc.soft_terminal <= 0.0
        || sigma <= o.mpcc.soft_terminal_sigma * (1.0 + 1e-12)
}

/// Sets the flight-cut thresholds of the cut schedule's `step` on every flight-cut row
/// ([`CUT_OFF`] where the step leaves a cut inactive).
fn set_flight_cuts(nlp: &mut BlockNlp<FesdBlock>, step: &CutStep) {
    let d = [step.delta, step.delta_v];
    for b in nlp.blocks.iter_mut() {
        if let FesdBlock::FlightCut { delta, comp } = &mut b.kind {
            *delta = d.get(*comp).copied().flatten().unwrap_or(CUT_OFF);
        }
    }
}

/// Sets the relaxation σ: the complementarity rows' upper bounds (not in elastic mode), the
/// penalty weights 1/σ and the soft terminal's weight; once σ reaches
/// [`MpccStrategy::soft_terminal_sigma`](crate::fesd::MpccStrategy::soft_terminal_sigma)
/// (or without a soft terminal) the terminal is fixed by bounds instead, also in `x`.
fn set_relaxation(
    nlp: &mut BlockNlp<FesdBlock>,
    layout: &Layout,
    o: &FesdOptions,
    sigma: f64,
    x: &mut [f64],
) {
    if layout.elastic.is_none() {
        for r in &layout.comp_rows {
            for i in 0..layout.comp_row_len {
                nlp.gu[r + i] = sigma;
            }
        }
    }
    let hard = terminal_is_hard(layout, o, sigma);
    for b in nlp.blocks.iter_mut() {
        match (b.row, &mut b.kind) {
            (None, FesdBlock::Comp { weight, .. })
            | (None, FesdBlock::StewartComp { weight, .. })
            | (None, FesdBlock::Elastic { weight }) => {
                *weight = 1.0 / sigma;
            }
            (None, FesdBlock::Terminal { weight, .. }) => {
                *weight = if hard {
                    0.0
                } else {
                    o.mpcc.soft_terminal / sigma
                };
            }
            _ => {}
        }
    }
    if hard {
        for (i, v) in &layout.terminal {
            nlp.xl[*i] = *v;
            nlp.xu[*i] = *v;
            x[*i] = *v;
        }
    }
}

/// IPOPT options of NLP `it` of the homotopy at relaxation `sigma`: [`relaxed_nlp_options`],
/// warm-started with μ = σ/10 from the second NLP on (with warm duals), the adaptive μ
/// strategy if asked, and the first NLP's initial μ and bound pushes.
fn homotopy_nlp_options(o: &FesdOptions, it: usize, sigma: f64) -> IpoptOptions {
    let warm_mu = (it > 0 && o.nlp.warm_duals).then(|| (sigma * 0.1).clamp(1e-9, 0.1));
    let mut opts = relaxed_nlp_options(o, warm_mu);
    if o.nlp.mu_adaptive {
        opts.string.push(("mu_strategy".into(), "adaptive".into()));
    }
    if let (0, Some(mu)) = (it, o.nlp.first_mu) {
        for key in ["mu_init", "bound_push", "bound_frac"] {
            opts.num.push((key.into(), mu));
        }
    }
    opts
}
