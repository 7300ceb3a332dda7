//! Phase II of the active-set method, which phase I's feasibility MPCC runs too: the
//! LPEC–BNLP descent from a feasible branch point (`descend`), the tightening of a BNLP
//! solution's nearly active sides, the branch a point rounds to, and the run's counters,
//! log and result types (see the [module docs](super)).

use super::branch::{bnlp_tol, solve_branch};
use super::lpec::{solve_lpec, LpecObjective};
use super::{con_bounds, var_bounds, ActiveSetSettings, Mpcc, MpccError, Side};
use crate::milp::MilpStatus;
use crate::nlp::cpu_clock::thread_cpu_seconds;
use crate::nlp::ipopt::IpoptSolution;

/// The stationarity verdict of a returned point.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// d = 0 solves the LPEC at the point: B-stationary for the MPCC linearized at the point.
    BStationary {
        /// The LPEC's optimal value (≥ −tol · ρ · max(1, ‖∇f‖∞)).
        lpec_objective: f64,
        /// The trust-region radius of the certifying LPEC.
        trust_region: f64,
    },
    /// No certificate; the reason says why (trust region collapsed, iteration limit).
    NotCertified {
        /// Why.
        reason: String,
    },
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BStationary {
                lpec_objective,
                trust_region,
            } => write!(
                f,
                "B-stationary (the LPEC's optimum {lpec_objective:.2e} at trust region \
                 {trust_region:.0e} is 0 within its tolerance)"
            ),
            Self::NotCertified { reason } => write!(f, "not certified: {reason}"),
        }
    }
}

impl Verdict {
    /// True for [`Verdict::BStationary`].
    pub fn is_b_stationary(&self) -> bool {
        matches!(self, Self::BStationary { .. })
    }
}

/// One subproblem of the method.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ActiveSetLog {
    /// `"relaxed"` (a Scholtes NLP), `"projection"` (phase I's LPEC), `"lpec"` (phase II)
    /// or `"bnlp"`.
    pub kind: &'static str,
    /// σ of a relaxed NLP, ρ of an LPEC, 0 for a BNLP.
    pub parameter: f64,
    /// Objective: f for NLPs, the LPEC's optimal value for LPECs.
    pub objective: f64,
    /// Whether the subproblem succeeded (a BNLP: solved and accepted).
    pub ok: bool,
    /// Details (IPOPT's failure, the number of undecided pairs of an LPEC, …).
    pub detail: String,
    /// CPU seconds of the subproblem.
    pub cpu_seconds: f64,
}

/// A point of the MPCC with exact complementarity and its verdict.
#[derive(Debug, Clone)]
pub struct MpccSolution {
    /// The last accepted BNLP's solution (point, multipliers, objective).
    pub solution: IpoptSolution,
    /// Its branch (`true`: G_i = 0).
    pub branch: Vec<bool>,
    /// B-stationary or why not.
    pub verdict: Verdict,
    /// Largest |G_i H_i| (or negative side) at the point.
    pub comp_residual: f64,
    /// LPECs solved (phase I's projections included).
    pub lpec_count: usize,
    /// BNLPs solved.
    pub bnlp_count: usize,
    /// Relaxed NLPs of phase I (0 from a caller's relaxed point).
    pub relaxed_count: usize,
    /// Every subproblem in order.
    pub log: Vec<ActiveSetLog>,
    /// CPU seconds of the whole method.
    pub cpu_seconds: f64,
}

/// Counters and log shared by the phases.
pub(super) struct Run<'s> {
    pub(super) settings: &'s ActiveSetSettings,
    pub(super) start: f64,
    pub(super) lpec: usize,
    pub(super) bnlp: usize,
    pub(super) relaxed: usize,
    pub(super) log: Vec<ActiveSetLog>,
}

impl<'s> Run<'s> {
    pub(super) fn new(settings: &'s ActiveSetSettings) -> Self {
        Self {
            settings,
            start: thread_cpu_seconds(),
            lpec: 0,
            bnlp: 0,
            relaxed: 0,
            log: vec![],
        }
    }

    pub(super) fn elapsed(&self) -> f64 {
        thread_cpu_seconds() - self.start
    }

    /// Solves the BNLP of `branch` from `start` and logs it as `label` (with the failure's
    /// reason after it).
    pub(super) fn labelled_branch(
        &mut self,
        mpcc: &Mpcc<'_>,
        branch: &[bool],
        start: &[f64],
        label: &str,
    ) -> Result<IpoptSolution, String> {
        let t0 = thread_cpu_seconds();
        self.bnlp += 1;
        let result = solve_branch(mpcc, branch, &[], start, &self.settings.bnlp);
        match &result {
            Ok(sol) => self.note("bnlp", 0.0, sol.objective, true, label.to_string(), t0),
            Err(e) => self.note("bnlp", 0.0, f64::NAN, false, format!("{label}: {e}"), t0),
        }
        result
    }

    pub(super) fn note(
        &mut self,
        kind: &'static str,
        parameter: f64,
        objective: f64,
        ok: bool,
        detail: String,
        t0: f64,
    ) {
        let entry = ActiveSetLog {
            kind,
            parameter,
            objective,
            ok,
            detail,
            cpu_seconds: thread_cpu_seconds() - t0,
        };
        if self.settings.verbose {
            eprintln!(
                "active set: {:<10} {:>9.2e}  objective {:>14.8e}  {}  {} ({:.2} s)",
                entry.kind,
                entry.parameter,
                entry.objective,
                if entry.ok { "ok " } else { "no " },
                entry.detail,
                entry.cpu_seconds
            );
        }
        self.log.push(entry);
    }
}

/// The branch that fixes, for every pair, the side nearer to zero (among the sides the NLP's
/// bounds let reach zero) or, with `previous`, the side that shrank more from `previous` to x
/// (the smaller ratio side(x)/side(previous): along a relaxation homotopy the active side goes
/// to zero while the inactive one stays, however small it is), switching to the other side
/// where the chosen one's variable is already fixed at another value by an earlier pair.
pub(super) fn rounded_branch(mpcc: &Mpcc<'_>, x: &[f64], previous: Option<&[f64]>) -> Vec<bool> {
    let (xl, xu) = var_bounds(mpcc.nlp);
    let reach = |s: Side| {
        let z = s.zero_at();
        z >= xl[s.var] && z <= xu[s.var]
    };
    let mut fixed: std::collections::HashMap<usize, f64> = std::collections::HashMap::new();
    let conflicts = |fixed: &std::collections::HashMap<usize, f64>, s: Side| {
        fixed.get(&s.var).is_some_and(|v| *v != s.zero_at())
    };
    mpcc.pairs
        .iter()
        .map(|p| {
            let score = |side: Side| {
                let v = side.value(x).max(0.0);
                match previous {
                    Some(prev) => v / side.value(prev).max(1e-300),
                    None => v,
                }
            };
            let g_first = match (reach(p.g), reach(p.h)) {
                (true, false) => true,
                (false, true) => false,
                _ => score(p.g) <= score(p.h),
            };
            let (first, second) = if g_first { (p.g, p.h) } else { (p.h, p.g) };
            let take_first = !conflicts(&fixed, first) || conflicts(&fixed, second);
            let chosen = if take_first { first } else { second };
            fixed.insert(chosen.var, chosen.zero_at());
            g_first == take_first
        })
        .collect()
}

/// Phase II from a feasible branch point.
pub(super) fn phase_two(
    mpcc: &Mpcc<'_>,
    branch: Vec<bool>,
    sol: IpoptSolution,
    run: &mut Run<'_>,
) -> Result<MpccSolution, MpccError> {
    let (branch, sol, verdict) = descend(mpcc, branch, sol, run, run.settings.trust_region, false)?;
    let comp_residual = mpcc.comp_residual(&sol.x);
    Ok(MpccSolution {
        solution: sol,
        branch,
        verdict,
        comp_residual,
        lpec_count: run.lpec,
        bnlp_count: run.bnlp,
        relaxed_count: run.relaxed,
        log: std::mem::take(&mut run.log),
        cpu_seconds: run.elapsed(),
    })
}

/// The LPEC–BNLP iteration of phase II from a feasible branch point of `mpcc`: LPECs on
/// ∇f(x)ᵀd within the trust region (first radius `rho0`) until d = 0 is optimal
/// (B-stationary) or the region collapses; returns the last accepted branch, its solution
/// and the verdict. With `narrow_after_accept` an accepted branch returns the radius to the
/// phase-II one (the feasibility phase widens it only to leave a point: LPECs on a wide
/// region have many undecided pairs and cost HiGHS far more).
pub(super) fn descend(
    mpcc: &Mpcc<'_>,
    mut branch: Vec<bool>,
    mut sol: IpoptSolution,
    run: &mut Run<'_>,
    rho0: f64,
    narrow_after_accept: bool,
) -> Result<(Vec<bool>, IpoptSolution, Verdict), MpccError> {
    let s = run.settings;
    let mut rho = rho0;
    let n = mpcc.nlp.num_vars();
    let mut grad = vec![0.0; n];
    let verdict = loop {
        if run.elapsed() > s.time_limit {
            return Err(MpccError::TimeLimit {
                limit: s.time_limit,
                x: sol.x,
            });
        }
        if run.lpec >= s.max_iterations {
            break Verdict::NotCertified {
                reason: format!("{} LPECs, the iteration limit", run.lpec),
            };
        }
        if !mpcc.nlp.gradient(&sol.x, &mut grad) {
            return Err(MpccError::InvalidInput(
                "gradient evaluation failed at a branch point".into(),
            ));
        }
        let scale = grad.iter().fold(1.0_f64, |a, g| a.max(g.abs()));
        let t0 = thread_cpu_seconds();
        run.lpec += 1;
        let l = match solve_lpec(
            mpcc,
            &sol.x,
            rho,
            LpecObjective::Gradient,
            Some(&branch),
            &s.lpec,
        ) {
            Ok(l) => l,
            Err(source) => {
                run.note("lpec", rho, f64::NAN, false, source.to_string(), t0);
                return Err(MpccError::Lpec { source, x: sol.x });
            }
        };
        let threshold = -s.stationarity_tol * rho * scale;
        let no_descent = l.objective >= threshold;
        // d = 0 certifies only when HiGHS proved it optimal; a time-limited LPEC whose best
        // point is d = 0 proves nothing
        let proven = l.status == MilpStatus::Optimal;
        run.note(
            "lpec",
            rho,
            l.objective,
            true,
            format!(
                "{} undecided pairs{}",
                l.undecided,
                match (no_descent, proven) {
                    (true, true) => ", d = 0 optimal",
                    (true, false) => ", d = 0 best found at the time limit",
                    (false, true) => "",
                    (false, false) => ", at the time limit",
                }
            ),
            t0,
        );
        if no_descent && !proven {
            break Verdict::NotCertified {
                reason: format!(
                    "the LPEC at trust region {rho:.1e} reached its time limit ({} undecided \
                     pairs) with no descent found: d = 0 is not proven optimal",
                    l.undecided
                ),
            };
        }
        if no_descent {
            break Verdict::BStationary {
                lpec_objective: l.objective,
                trust_region: rho,
            };
        }
        let start: Vec<f64> = sol.x.iter().zip(&l.d).map(|(a, b)| a + b).collect();
        let t0 = thread_cpu_seconds();
        run.bnlp += 1;
        let f = sol.objective;
        let need = f - s.decrease_tol * f.abs().max(1.0);
        match solve_branch(mpcc, &l.branch, &[], &start, &s.bnlp) {
            Ok(new) if new.objective <= need => {
                run.note("bnlp", 0.0, new.objective, true, "accepted".into(), t0);
                sol = tighten(mpcc, &l.branch, new, run);
                branch = l.branch;
                if narrow_after_accept {
                    rho = rho.min(s.trust_region);
                }
            }
            Ok(new) => {
                run.note(
                    "bnlp",
                    0.0,
                    new.objective,
                    false,
                    format!("no decrease from {f:.8e}"),
                    t0,
                );
                rho *= s.trust_region_shrink;
            }
            Err(e) => {
                run.note("bnlp", 0.0, f64::NAN, false, e, t0);
                rho *= s.trust_region_shrink;
            }
        }
        if rho < s.trust_region_min {
            break Verdict::NotCertified {
                reason: format!(
                    "trust region {rho:.1e} below its minimum {:.1e}: the LPEC predicts a \
                     decrease ({:.3e}) that no branch NLP realizes",
                    s.trust_region_min, l.objective
                ),
            };
        }
    };
    Ok((branch, sol, verdict))
}

/// Fixes the free sides of a BNLP solution that lie within `active_tol` of zero (see
/// [`ActiveSetSettings::active_tol`]): snapped when the constraints stay within the BNLP's
/// tolerance, otherwise re-solved with those sides fixed; kept when f grows by at most
/// `decrease_tol`, else the original point is returned.
pub(super) fn tighten(
    mpcc: &Mpcc<'_>,
    branch: &[bool],
    sol: IpoptSolution,
    run: &mut Run<'_>,
) -> IpoptSolution {
    let s = run.settings;
    let extra: Vec<Side> = mpcc
        .pairs
        .iter()
        .zip(branch)
        .filter_map(|(p, g_side)| {
            let free = if *g_side { p.h } else { p.g };
            let v = free.value(&sol.x);
            (v > 0.0 && v <= s.active_tol).then_some(free)
        })
        .collect();
    if extra.is_empty() {
        return sol;
    }
    let allowed = sol.objective + s.decrease_tol * sol.objective.abs().max(1.0);
    let mut x = sol.x.clone();
    for side in &extra {
        x[side.var] = side.zero_at();
    }
    let tol = bnlp_tol(&s.bnlp);
    if let (Some(f), Some(violation)) = (mpcc.nlp.objective(&x), violation(mpcc, &x)) {
        if violation <= tol && f <= allowed {
            let mut snapped = sol;
            snapped.x = x;
            snapped.objective = f;
            snapped.constraint_violation = violation;
            return snapped;
        }
    }
    let t0 = thread_cpu_seconds();
    run.bnlp += 1;
    match solve_branch(mpcc, branch, &extra, &x, &s.bnlp) {
        Ok(new) if new.objective <= allowed => {
            run.note(
                "bnlp",
                0.0,
                new.objective,
                true,
                format!("{} biactive sides fixed", extra.len()),
                t0,
            );
            new
        }
        other => {
            let detail = match other {
                Ok(new) => format!("biactive sides fixed: f grew to {:.8e}", new.objective),
                Err(e) => format!("biactive sides fixed: {e}"),
            };
            run.note("bnlp", 0.0, f64::NAN, false, detail, t0);
            sol
        }
    }
}

/// Largest violation of the constraint and variable bounds at `x` (`None` if an evaluation
/// fails).
fn violation(mpcc: &Mpcc<'_>, x: &[f64]) -> Option<f64> {
    use crate::nlp::ipopt::interval_violation;
    let nlp = mpcc.nlp;
    let mut g = vec![0.0; nlp.num_cons()];
    if !nlp.constraints(x, &mut g) {
        return None;
    }
    let (gl, gu) = con_bounds(nlp);
    let (xl, xu) = var_bounds(nlp);
    Some(interval_violation(&g, &gl, &gu).max(interval_violation(x, &xl, &xu)))
}
