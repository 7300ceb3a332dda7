//! The active-set method's driver: phase I (relax, project, first feasible branch) and
//! phase II (LPEC certificate or a better branch), see the [module docs](super).

use super::descent::{phase_two, rounded_branch, tighten, MpccSolution, Run};
use super::feasibility::feasible_branch;
use super::lpec::{solve_lpec, LpecObjective};
use super::relaxed::ScholtesNlp;
use super::{var_bounds, ActiveSetSettings, Mpcc, MpccError};
use crate::nlp::cpu_clock::thread_cpu_seconds;
use crate::nlp::ipopt::{solve as ipopt_solve, IpoptOptions, IpoptSolution};

/// Phase I by the Scholtes relaxation from `x0` (σ = σ₀ κ^k), projecting each relaxed point
/// whose largest min(G_i, H_i) is at most the projection threshold (and, when no projection
/// gives a feasible branch, the feasibility MPCC from the last relaxed point); then phase II.
pub fn solve(
    mpcc: &Mpcc<'_>,
    x0: &[f64],
    settings: &ActiveSetSettings,
) -> Result<MpccSolution, MpccError> {
    mpcc.validate()?;
    settings.validate()?;
    let mut run = Run::new(settings);
    let mut relaxed = ScholtesNlp::new(mpcc, settings.sigma0).map_err(MpccError::InvalidInput)?;
    let mut x = relaxed.clamp(x0);
    let mut previous: Option<Vec<f64>> = None;
    let mut reason = String::from("no relaxed NLP was solved");
    let mut sigma = settings.sigma0;
    let options = relaxed_options(&settings.bnlp);
    for _ in 0..settings.n_relaxations.max(1) {
        relaxed.sigma = sigma;
        let t0 = thread_cpu_seconds();
        run.relaxed += 1;
        match ipopt_solve(&relaxed, &x, None, &options) {
            Ok(s) => {
                run.note("relaxed", sigma, s.objective, true, String::new(), t0);
                previous = Some(std::mem::replace(&mut x, s.x));
            }
            Err(e) => {
                run.note("relaxed", sigma, f64::NAN, false, e.to_string(), t0);
                reason = format!("relaxed NLP at σ = {sigma:.1e}: {e}");
            }
        }
        if largest_min_side(mpcc, &x) <= settings.projection_threshold {
            match project(mpcc, &x, previous.as_deref(), &mut run) {
                Ok((branch, sol)) => return phase_two(mpcc, branch, sol, &mut run),
                Err(e) => reason = e,
            }
        }
        if run.elapsed() > settings.time_limit {
            return Err(MpccError::TimeLimit {
                limit: settings.time_limit,
                x: vec![],
            });
        }
        sigma *= settings.kappa;
    }
    feasibility_then_phase_two(mpcc, &x, &reason, &mut run)
}

/// Phase I by the feasibility MPCC from any point `x0` (no relaxed NLP; see
/// [`super::feasibility`]), then phase II.
///
/// # Errors
/// As [`solve`]; [`MpccError::LocallyInfeasible`] when the constraints' ℓ1 violation is
/// B-stationary above zero.
pub fn solve_from_point(
    mpcc: &Mpcc<'_>,
    x0: &[f64],
    settings: &ActiveSetSettings,
) -> Result<MpccSolution, MpccError> {
    mpcc.validate()?;
    settings.validate()?;
    check_length(mpcc, x0, "start point")?;
    let mut run = Run::new(settings);
    let (branch, sol) = feasible_branch(mpcc, x0, &mut run)?;
    phase_two(mpcc, branch, sol, &mut run)
}

/// `InvalidInput` unless `x` (the `what` of the message) has one entry per variable.
fn check_length(mpcc: &Mpcc<'_>, x: &[f64], what: &str) -> Result<(), MpccError> {
    let n = mpcc.nlp.num_vars();
    if x.len() == n {
        Ok(())
    } else {
        Err(MpccError::InvalidInput(format!(
            "{what} has {} entries, the NLP {n} variables",
            x.len()
        )))
    }
}

/// The feasibility phase from `x` after the projections failed (`projection_failure` says
/// why), then phase II.
fn feasibility_then_phase_two(
    mpcc: &Mpcc<'_>,
    x: &[f64],
    projection_failure: &str,
    run: &mut Run<'_>,
) -> Result<MpccSolution, MpccError> {
    match feasible_branch(mpcc, x, run) {
        Ok((branch, sol)) => phase_two(mpcc, branch, sol, run),
        Err(MpccError::NoFeasibleBranch { reason, relaxed }) => Err(MpccError::NoFeasibleBranch {
            reason: format!("{projection_failure}; then {reason}"),
            relaxed,
        }),
        Err(e) => Err(e),
    }
}

/// Phase I from a caller's relaxed point (e.g. the end of a relaxation homotopy; with the
/// relaxed point before it, `x_previous`, the trend of the sides along the homotopy is one
/// more projection candidate): the projection and its BNLP (and, when no candidate branch is
/// feasible, the feasibility MPCC from the relaxed point), then phase II.
pub fn solve_from_relaxed(
    mpcc: &Mpcc<'_>,
    x_relaxed: &[f64],
    x_previous: Option<&[f64]>,
    settings: &ActiveSetSettings,
) -> Result<MpccSolution, MpccError> {
    mpcc.validate()?;
    settings.validate()?;
    check_length(mpcc, x_relaxed, "relaxed point")?;
    let mut run = Run::new(settings);
    if x_previous.is_some_and(|p| p.len() != x_relaxed.len()) {
        return Err(MpccError::InvalidInput(
            "the previous relaxed point has another length".into(),
        ));
    }
    match project(mpcc, x_relaxed, x_previous, &mut run) {
        Ok((branch, sol)) => phase_two(mpcc, branch, sol, &mut run),
        Err(reason) => feasibility_then_phase_two(mpcc, x_relaxed, &reason, &mut run),
    }
}

/// IPOPT options of phase I's relaxed NLPs: the BNLP options with exact bounds.
fn relaxed_options(base: &IpoptOptions) -> IpoptOptions {
    let mut o = base.clone();
    o.num.push(("bound_relax_factor".into(), 0.0));
    o
}

/// max_i min(G_i(x), H_i(x)) over the pairs whose both sides the NLP's bounds let reach zero
/// (a pair with one side on a fixed variable moves its other side beyond the trust region,
/// see [`solve_lpec`]).
fn largest_reachable_side(mpcc: &Mpcc<'_>, x: &[f64]) -> f64 {
    let (xl, xu) = var_bounds(mpcc.nlp);
    let reach = |s: super::Side| {
        let z = s.zero_at();
        z >= xl[s.var] && z <= xu[s.var]
    };
    mpcc.pairs
        .iter()
        .filter(|p| reach(p.g) && reach(p.h))
        .map(|p| p.g.value(x).min(p.h.value(x)).max(0.0))
        .fold(0.0, f64::max)
}

/// max_i min(G_i(x), H_i(x)), the distance of x from complementarity in the sides.
fn largest_min_side(mpcc: &Mpcc<'_>, x: &[f64]) -> f64 {
    mpcc.pairs
        .iter()
        .map(|p| p.g.value(x).min(p.h.value(x)).max(0.0))
        .fold(0.0, f64::max)
}

/// Projects a relaxed point onto a feasible branch: first the branch of the ‖d‖₁ LPEC
/// (radius twice the largest min(G_i, H_i), at least the phase-II radius, grown tenfold up to
/// three times while infeasible) solved from x + d, then, while the BNLPs fail, the branch of
/// the sides that shrink fastest from `previous` to x (when given) and the nearest branch by
/// rounding ([`rounded_branch`]), both solved from x.
fn project(
    mpcc: &Mpcc<'_>,
    x: &[f64],
    previous: Option<&[f64]>,
    run: &mut Run<'_>,
) -> Result<(Vec<bool>, IpoptSolution), String> {
    let s = run.settings;
    let mut rho = (2.0 * largest_reachable_side(mpcc, x)).max(s.trust_region);
    let mut reasons = vec![];
    let mut candidate = None;
    for _ in 0..4 {
        let t0 = thread_cpu_seconds();
        run.lpec += 1;
        match solve_lpec(mpcc, x, rho, LpecObjective::Distance, None, &s.lpec) {
            Ok(l) => {
                run.note(
                    "projection",
                    rho,
                    l.objective,
                    true,
                    format!(
                        "{} undecided pairs, largest elastic slack {:.1e}",
                        l.undecided, l.elastic
                    ),
                    t0,
                );
                let start: Vec<f64> = x.iter().zip(&l.d).map(|(a, b)| a + b).collect();
                candidate = Some((l.branch, start));
                break;
            }
            Err(e) => {
                run.note("projection", rho, f64::NAN, false, e.to_string(), t0);
                reasons.push(format!("projection LPEC at ρ = {rho:.1e}: {e}"));
                rho *= 10.0;
            }
        }
    }
    let mut candidates: Vec<(Vec<bool>, Vec<f64>, &str)> = candidate
        .into_iter()
        .map(|(b, st)| (b, st, "LPEC branch"))
        .collect();
    if let Some(prev) = previous {
        candidates.push((
            rounded_branch(mpcc, x, Some(prev)),
            x.to_vec(),
            "trend branch",
        ));
    }
    candidates.push((rounded_branch(mpcc, x, None), x.to_vec(), "rounded branch"));
    let mut tried: Vec<Vec<bool>> = vec![];
    for (branch, start, what) in candidates {
        if tried.contains(&branch) {
            continue;
        }
        tried.push(branch.clone());
        match run.labelled_branch(mpcc, &branch, &start, &format!("phase I, {what}")) {
            Ok(sol) => {
                let sol = tighten(mpcc, &branch, sol, run);
                return Ok((branch, sol));
            }
            Err(e) => reasons.push(format!("the {what}'s NLP failed: {e}")),
        }
    }
    Err(reasons.join("; "))
}
