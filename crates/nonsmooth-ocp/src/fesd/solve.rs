//! The time-freezing OCP (Nurkanović et al. eq. 35): [`solve_ocp`] from the trivial initialization,
//! [`solve_built`] and [`solve_from_point`] from a given point, the transfer of a point
//! between layouts ([`transfer_point`]) and the reading of a solution ([`extract_ocp`]).

use std::sync::Arc;

use super::active_set::{solve_active_set, ActiveSetSummary};
use super::blocks::FesdBlock;
use super::build::build;
use super::complementarity::comp_residual;
use super::homotopy::{homotopy, homotopy_with_trail};
use super::integrator::{trajectory, Trajectory};
use super::layout::{Clock, Horizon, Layout};
use super::options::{write_checkpoint, FesdOptions, MpccMethod};
use super::relaxed_nlp::NlpLog;
use super::tableau::{Dcs, Scheme};
use crate::ipopt::thread_cpu_seconds;
use crate::nlp::BlockNlp;
use crate::time_freezing::TimeFreezing;
use crate::OcpError;

/// Solution of a time-freezing OCP.
#[derive(Debug, Clone)]
pub struct OcpSolution {
    /// Stage-point trajectory in numerical time (the clock is y's last entry).
    pub traj: Trajectory,
    /// Controls per control interval.
    pub u: Vec<Vec<f64>>,
    /// Speed of time per control interval.
    pub s: Vec<f64>,
    /// Physical time t_k at the control-interval boundaries k = 0..N (k T/N under
    /// [`Clock::Stagewise`]).
    pub interval_clock: Vec<f64>,
    /// Control cost (without the step-equilibration penalty): Σ_k w ‖u_k‖², times
    /// t_{k+1} − t_k unless the clock is stagewise ([`Horizon::control_weight`]).
    pub objective: f64,
    /// Largest cross-complementarity product.
    pub comp_residual: f64,
    /// Max |y_i(T̃) − target_i| over the terminal components.
    pub terminal_error: f64,
    /// Homotopy log.
    pub log: Vec<NlpLog>,
    /// Total IPOPT iterations.
    pub nlp_iterations: usize,
    /// CPU seconds (build + homotopy).
    pub cpu_seconds: f64,
    /// The NLP's primal point (layout of [`build`]), e.g. a warm start for
    /// [`solve_built`] on a neighbouring horizon.
    pub x: Vec<f64>,
    /// What the active-set method did ([`MpccMethod::ActiveSet`]; `None` for the homotopy).
    pub active_set: Option<ActiveSetSummary>,
    /// The layout of the NLP whose point `x` is (e.g. to list its complementarity products).
    pub layout: Layout,
}

/// Solves the OCP (Nurkanović et al. eq. 35) of horizon `hz` (speed of time, stage clock
/// constraints, terminal constraint, control cost) from the trivial initialization y0 everywhere, u
/// = 0, or from the horizon's [`Horizon::initial_guess`]; a guess whose homotopy stalls or
/// ends as [`OcpError::Unreachable`] is dropped and the problem solved again from the
/// trivial initialization.
///
/// With [`Scheme::GaussLegendre`] and the ℓ1 penalty ([`MpccStrategy::penalty`](crate::fesd::MpccStrategy::penalty)) the
/// homotopy first runs the Scholtes relaxation (`penalty = false`, otherwise the same
/// options) and falls back to the penalty homotopy only when that fails: from the trivial
/// initialization the first penalty NLP of the particle OCP (Ex. 5) ends in a local
/// minimum that brakes the fall with the auxiliary field in the air (one frozen element at
/// f_c = 0.2152 with α₁ = 0, for every σ₀ measured), which no larger ρ leaves; the Scholtes
/// homotopy reaches the exact solution (docs/decisions/002-time-freezing.md, "Gauss–Legendre
/// runs Scholtes first").
pub fn solve_ocp(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
) -> Result<OcpSolution, OcpError> {
    let start = thread_cpu_seconds();
    if o.discretization.scheme == Scheme::GaussLegendre && o.mpcc.penalty {
        let scholtes = {
            let mut o = o.clone();
            o.mpcc.penalty = false;
            o
        };
        if let Ok(mut out) = solve_ocp_once(tf, hz, &scholtes) {
            out.cpu_seconds = thread_cpu_seconds() - start;
            return Ok(out);
        }
    }
    let mut out = match solve_ocp_once(tf, hz, o) {
        // a guess that leads the homotopy astray is dropped for the trivial start
        Err(OcpError::Unreachable { .. } | OcpError::HomotopyStalled { .. })
            if hz.initial_guess.is_some() =>
        {
            if o.nlp.verbose {
                eprintln!("the initial guess did not converge: again from the trivial start");
            }
            let trivial = Horizon {
                initial_guess: None,
                ..hz.clone()
            };
            solve_ocp_once(tf, &trivial, o)?
        }
        other => other?,
    };
    out.cpu_seconds = thread_cpu_seconds() - start;
    Ok(out)
}

/// One homotopy of [`solve_ocp`] with the options as given.
fn solve_ocp_once(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
) -> Result<OcpSolution, OcpError> {
    let (nlp, layout, x0) = build(tf, hz, o)?;
    solve_built(tf, hz, o, nlp, &layout, x0)
}

/// Runs the [`homotopy`] on an NLP made by [`build`] for `hz` (possibly with a changed
/// initial guess `x0` or bounds, e.g. a warm start) and reads the solution with its log
/// and IPOPT iteration count (`cpu_seconds` is left to the caller).
pub fn solve_built(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    mut nlp: BlockNlp<FesdBlock>,
    layout: &Layout,
    x0: Vec<f64>,
) -> Result<OcpSolution, OcpError> {
    if o.mpcc.method == MpccMethod::ActiveSet {
        return solve_built_active_set(tf, hz, o, nlp, layout, x0);
    }
    let (sol, log) = homotopy(&mut nlp, layout, x0, o)?;
    let mut out = extract_ocp(tf, hz, layout, &sol.x, o)?;
    out.nlp_iterations = log.iter().map(|l| l.iterations).sum();
    out.log = log;
    Ok(out)
}

/// [`solve_built`] with the active-set method: the homotopy down to
/// [`ActiveSetOptions::phase_one_tol`](super::ActiveSetOptions::phase_one_tol) (or its end;
/// its polish, when it succeeds, hands over an exact point) as phase I, then
/// [`solve_active_set`] from its point. The exact point is written to the checkpoint file,
/// and so is the last feasible branch point of a failure.
fn solve_built_active_set(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    mut nlp: BlockNlp<FesdBlock>,
    layout: &Layout,
    x0: Vec<f64>,
) -> Result<OcpSolution, OcpError> {
    let phase_one = {
        let mut p = o.clone();
        p.mpcc.comp_tol = o.mpcc.comp_tol.max(o.mpcc.active_set.phase_one_tol);
        p.mpcc.accept_relaxed = true;
        p
    };
    let (relaxed, log, previous) = homotopy_with_trail(&mut nlp, layout, x0, &phase_one)?;
    exact_from_relaxed(tf, hz, o, nlp, layout, (&relaxed.x, Some(&previous)), log)
}

/// The active-set method alone ([`solve_active_set`]) from `x_relaxed`, a primal point of the
/// NLP that [`build`] makes for `hz` (e.g. the end of a homotopy run with other options, or
/// the last iterate of a stalled one): exact complementarity and a verdict without a second
/// homotopy.
///
/// # Errors
/// [`OcpError::InvalidInput`] for a point of another length or with a non-finite entry;
/// [`OcpError::ActiveSet`] as [`solve_active_set`].
pub fn solve_active_set_from_point(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    x_relaxed: &[f64],
) -> Result<OcpSolution, OcpError> {
    let start = thread_cpu_seconds();
    let (nlp, layout, fresh) = build(tf, hz, o)?;
    if x_relaxed.len() != fresh.len() {
        return Err(OcpError::InvalidInput(format!(
            "the start point has {} entries, this problem's NLP has {} variables",
            x_relaxed.len(),
            fresh.len()
        )));
    }
    check_finite_start(x_relaxed)?;
    let mut out = exact_from_relaxed(tf, hz, o, nlp, &layout, (x_relaxed, None), vec![])?;
    out.cpu_seconds = thread_cpu_seconds() - start;
    Ok(out)
}

/// `InvalidInput` naming the first non-finite entry of a start point.
fn check_finite_start(x: &[f64]) -> Result<(), OcpError> {
    match x.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(OcpError::InvalidInput(format!(
            "the start point's entry {i} is {}",
            x[i]
        ))),
        None => Ok(()),
    }
}

/// [`solve_active_set`] from a relaxed point (and the homotopy's point before it), the
/// checkpoints written, the solution read; `log` is the homotopy's (phase I's) log.
fn exact_from_relaxed(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    mut nlp: BlockNlp<FesdBlock>,
    layout: &Layout,
    (x_relaxed, x_previous): (&[f64], Option<&[f64]>),
    log: Vec<NlpLog>,
) -> Result<OcpSolution, OcpError> {
    let comp = comp_residual(layout, x_relaxed, o.discretization.fesd);
    let solved = solve_active_set(&mut nlp, layout, x_relaxed, x_previous, comp, o);
    let (exact, summary) = match solved {
        Ok(r) => r,
        Err(e) => {
            if let Some(x) = e.last_iterate() {
                write_checkpoint(o, x)?;
            }
            return Err(e);
        }
    };
    write_checkpoint(o, &exact.x)?;
    let mut out = extract_ocp(tf, hz, layout, &exact.x, o)?;
    out.nlp_iterations = log.iter().map(|l| l.iterations).sum::<usize>() + exact.iterations;
    out.log = log;
    out.active_set = Some(summary);
    Ok(out)
}

/// Runs the MPCC homotopy of `o` (σ₀, κ, the polish; no smoothing phase and no model growth)
/// on the NLP that [`build`] makes for `hz`, starting from `x0`, a primal point of that NLP:
/// a solution's [`OcpSolution::x`] or the last iterate of a failed run (e.g. the smoothed
/// point that [`OcpError::HomotopyStalled`] carries after a model growth), so that a long
/// smoothing phase is run once and its end game tried with other homotopy settings.
/// `x0` may also be a point of the same problem with fewer elements per interval (N_FE a
/// divisor of `o.n_fe`): it is then carried to this mesh by [`crate::refine::refine_point`].
///
/// # Errors
/// [`OcpError::InvalidInput`] when `x0` has a length of neither this NLP nor a coarser
/// mesh's, or a non-finite entry (naming the entry); the homotopy's errors, except that a
/// failure of its first NLP is [`OcpError::HomotopyStalled`] carrying the start point (as
/// given, or refined onto this mesh) and that NLP in its log, so the written partial
/// solution is still the start point.
pub fn solve_from_point(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    o: &FesdOptions,
    x0: Vec<f64>,
) -> Result<OcpSolution, OcpError> {
    let start = thread_cpu_seconds();
    let o = {
        let mut o = o.clone();
        o.mpcc.smoothing = None;
        o
    };
    check_finite_start(&x0)?;
    let (nlp, layout, fresh) = build(tf, hz, &o)?;
    let x0 = if x0.len() == fresh.len() {
        x0
    } else {
        let n = fresh.len();
        crate::refine::from_coarser_mesh(tf, hz, &o, &x0, &layout, fresh)?.ok_or_else(|| {
            OcpError::InvalidInput(format!(
                "the start point has {} entries, this problem's NLP has {n} variables \
                 (nor is it a point of this problem with fewer elements per interval)",
                x0.len()
            ))
        })?
    };
    let violation = crate::smoothing::max_violation(&nlp, &x0);
    match solve_built(tf, hz, &o, nlp, &layout, x0.clone()) {
        Ok(mut out) => {
            out.cpu_seconds = thread_cpu_seconds() - start;
            Ok(out)
        }
        Err(OcpError::Ipopt { solution, .. }) => Err(crate::smoothing::stalled_at_start(
            &layout,
            &o,
            x0,
            violation,
            &solution,
            vec![],
        )),
        Err(e) => Err(e),
    }
}

/// Carries a primal point `x` of the NLP with layout `from` over to the NLP with layout `to`
/// (starting from `to`'s initial guess `x_to`), matching states, α, λ, element lengths,
/// controls and speeds of time by their role. The two NLPs must discretize the same
/// horizon (equal dimensions, intervals and elements, step representation); they may differ
/// in the speed-of-time structure: from one speed for the horizon to one per interval, each
/// interval taking the global value (or back, taking the first interval's).
///
/// # Errors
/// [`OcpError::InvalidInput`] when the layouts do not match.
pub fn transfer_point(
    from: &Layout,
    x: &[f64],
    to: &Layout,
    mut x_to: Vec<f64>,
) -> Result<Vec<f64>, OcpError> {
    let same = from.dims == to.dims
        && from.dcs == Dcs::Step
        && to.dcs == Dcs::Step
        && from.u.len() == to.u.len()
        && from.s.len() == to.s.len()
        && from.elems.len() == to.elems.len()
        && from.elems.iter().zip(&to.elems).all(|(a, b)| {
            a.y.len() == b.y.len() && a.lp.len() == b.lp.len() && a.ln.len() == b.ln.len()
        });
    if !same {
        return Err(OcpError::InvalidInput(
            "transfer_point: the two NLPs discretize different horizons".into(),
        ));
    }
    let (ny, nc, _, _) = from.dims;
    copy_interval_vars(from, x, to, &mut x_to);
    let mut copy = |a: usize, b: usize, n: usize| x_to[b..b + n].copy_from_slice(&x[a..a + n]);
    for (a, b) in from.elems.iter().zip(&to.elems) {
        copy(a.h, b.h, 1);
        copy(a.y_end, b.y_end, ny);
        for (i, j) in a.y.iter().zip(&b.y) {
            copy(*i, *j, ny);
        }
        for (i, j) in a.alpha.iter().zip(&b.alpha) {
            copy(*i, *j, nc);
        }
        for (i, j) in a.lp.iter().zip(&b.lp) {
            copy(*i, *j, nc);
        }
        for (i, j) in a.ln.iter().zip(&b.ln) {
            copy(*i, *j, nc);
        }
    }
    Ok(x_to)
}

/// Copies the initial state, the controls and the speeds of time of the point `x` of the NLP
/// with layout `from` into `x_to` of the NLP with layout `to` (same dimensions and control
/// intervals; a global speed of time is copied into every interval's, or the first
/// interval's back into a global one).
pub(crate) fn copy_interval_vars(from: &Layout, x: &[f64], to: &Layout, x_to: &mut [f64]) {
    let (ny, _, nu, _) = from.dims;
    let mut copy = |a: usize, b: usize, n: usize| x_to[b..b + n].copy_from_slice(&x[a..a + n]);
    copy(from.y0, to.y0, ny);
    for k in 0..from.u.len() {
        copy(from.u[k], to.u[k], nu);
        copy(from.s[k], to.s[k], 1);
    }
}

/// Reads an [`OcpSolution`] (trajectory, controls, objective, residuals; empty log) from a
/// primal point `x` of the NLP that [`build`] makes for `hz`, e.g. the last iterate carried
/// by [`OcpError::HomotopyStalled`] (pass the layout of a fresh `build` of the same horizon).
pub fn extract_ocp(
    tf: &Arc<TimeFreezing>,
    hz: &Horizon,
    layout: &Layout,
    x: &[f64],
    o: &FesdOptions,
) -> Result<OcpSolution, OcpError> {
    let (ny, _, nu, _) = layout.dims;
    let need = layout.elems.last().map_or(0, |e| {
        let nc = layout.dims.1;
        let n_ln = if layout.dcs == Dcs::Stewart { 1 } else { nc };
        let lam = e.lp.iter().fold(0, |m, &i| m.max(i + nc));
        let lam = e.ln.iter().fold(lam, |m, &i| m.max(i + n_ln));
        lam.max(e.y_end + ny)
    });
    if x.len() < need {
        return Err(OcpError::InvalidInput("x does not match the layout".into()));
    }
    let u: Vec<Vec<f64>> = layout.u.iter().map(|&i| x[i..i + nu].to_vec()).collect();
    let s: Vec<f64> = layout.s.iter().map(|&i| x[i]).collect();
    // the clock at y0 and at the end of each interval's last element
    let interval_clock: Vec<f64> = std::iter::once(x[layout.y0 + ny - 1])
        .chain(
            layout
                .elems
                .chunk_by(|a, b| a.step == b.step)
                .map(|interval| x[interval[interval.len() - 1].y_end + ny - 1]),
        )
        .collect();
    let objective = u
        .iter()
        .enumerate()
        .map(|(k, u)| {
            let dt = match hz.clock {
                Clock::Stagewise(_) => 1.0,
                _ => interval_clock[k + 1] - interval_clock[k],
            };
            hz.control_weight * dt * u.iter().map(|v| v * v).sum::<f64>()
        })
        .sum();
    let last = layout
        .elems
        .last()
        .ok_or_else(|| OcpError::InvalidInput("empty horizon".into()))?;
    let y_end = &x[last.y_end..last.y_end + ny];
    let terminal_error = hz
        .terminal
        .iter()
        .filter(|(i, _)| *i < ny)
        .map(|(i, v)| (y_end[*i] - v).abs())
        .fold(0.0, f64::max);
    Ok(OcpSolution {
        traj: trajectory(tf, layout, x, 0.0),
        u,
        s,
        interval_clock,
        objective,
        comp_residual: comp_residual(layout, x, o.discretization.fesd),
        terminal_error,
        nlp_iterations: 0,
        log: vec![],
        cpu_seconds: 0.0,
        x: x.to_vec(),
        active_set: None,
        layout: layout.clone(),
    })
}
