//! LPECs: the MPCC linearized at a point x within the trust region ‖d‖∞ ≤ ρ,
//!
//! ```text
//! minimize  cᵀd   subject to   g_L ≤ g(x) + ∇g(x) d ≤ g_U,   x_L ≤ x + d ≤ x_U,   |d| ≤ ρ,
//!           0 ≤ G_i(x + d) ⊥ H_i(x + d) ≥ 0
//! ```
//!
//! solved as a MILP by HiGHS. The sides are affine in one variable, so their linearization
//! is exact. A pair whose side cannot reach zero inside the box (G_i(x) > ρ) is decided
//! without a binary: the other side's variable is fixed by its bounds. Each undecided pair
//! gets a binary y_i (1: G_i = 0) with G_i(x + d) ≤ M_G (1 − y_i), H_i(x + d) ≤ M_H y_i and
//! M = side(x) + ρ, the largest value the side can take in the box, so the big-M form is
//! exact. Rows that are infeasible at d = 0 by the NLP's tolerance are widened to contain
//! d = 0, so the LPEC at a feasible branch point is always feasible.
//!
//! Objectives: [`LpecObjective::Gradient`] (phase II: cᵀd = ∇f(x)ᵀd, the first-order change
//! of f) and [`LpecObjective::Distance`] (phase I's projection: ‖d‖₁ through auxiliary
//! columns t_j ≥ |d_j|, with the linearized rows elastic: their violation costs 1e4 per
//! unit, so a relaxed point whose linearization has no complementary point in the box still
//! gets the nearest branch; the BNLP then decides).

use super::Mpcc;
use crate::milp::{Milp, MilpSettings, MilpStatus};
use crate::status::SolverError;

/// Bounds at or beyond this magnitude are infinite (IPOPT's convention).
const INF: f64 = 1e19;

/// Cost per unit of violation of a linearized row in the projection LPEC (against 1 per unit
/// of ‖d‖₁).
const ELASTIC_WEIGHT: f64 = 1e4;

/// The step of `side`'s variable that zeroes it, if it lies within `[lo, hi]`.
fn zeroing_step(side: super::Side, x: &[f64], lo: &[f64], hi: &[f64]) -> Option<f64> {
    let step = -side.value(x) / side.sign;
    let tol = 1e-12 * (1.0 + step.abs());
    (step >= lo[side.var] - tol && step <= hi[side.var] + tol)
        .then(|| step.clamp(lo[side.var], hi[side.var]))
}

/// What an LPEC minimizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LpecObjective {
    /// ∇f(x)ᵀd.
    Gradient,
    /// ‖d‖₁.
    Distance,
}

/// An LPEC's solution.
#[derive(Debug, Clone, PartialEq)]
pub struct LpecSolution {
    /// The step d.
    pub d: Vec<f64>,
    /// The optimal value (∇f(x)ᵀd or ‖d‖₁).
    pub objective: f64,
    /// The branch of x + d: `true` where G_i(x + d) = 0 is the chosen side.
    pub branch: Vec<bool>,
    /// Pairs that needed a binary (both sides could reach zero in the box).
    pub undecided: usize,
    /// HiGHS's status (optimal or the time limit with a feasible point).
    pub status: MilpStatus,
    /// Largest slack of an elastic row ([`LpecObjective::Distance`]; 0 when the linearized
    /// constraints hold).
    pub elastic: f64,
    /// Wall seconds of the MILP solve.
    pub seconds: f64,
}

/// Solves the LPEC at `x` with radius `rho`. With `start` (the branch of a feasible point x,
/// phase II), d = 0 with that branch is passed to HiGHS as its first incumbent.
pub fn solve_lpec(
    mpcc: &Mpcc<'_>,
    x: &[f64],
    rho: f64,
    objective: LpecObjective,
    start: Option<&[bool]>,
    settings: &MilpSettings,
) -> Result<LpecSolution, SolverError> {
    let nlp = mpcc.nlp;
    let (n, m) = (nlp.num_vars(), nlp.num_cons());
    let failed = |reason: String| SolverError::Failed {
        solver: "LPEC",
        reason,
    };
    // column bounds of d: the NLP's bounds and the trust region, widened to contain 0
    let (xl, xu) = super::var_bounds(nlp);
    let mut lo: Vec<f64> = (0..n).map(|j| (xl[j] - x[j]).max(-rho).min(0.0)).collect();
    let mut hi: Vec<f64> = (0..n).map(|j| (xu[j] - x[j]).min(rho).max(0.0)).collect();
    // every side ≥ 0 (widened to contain d = 0 when a side is slightly negative at x)
    let side_bound = |lo: &mut [f64], hi: &mut [f64], s: super::Side| {
        let v = s.value(x);
        if s.sign > 0.0 {
            lo[s.var] = lo[s.var].max((-v).min(0.0));
        } else {
            hi[s.var] = hi[s.var].min(v.max(0.0));
        }
    };
    for p in &mpcc.pairs {
        side_bound(&mut lo, &mut hi, p.g);
        side_bound(&mut lo, &mut hi, p.h);
    }
    // a pair with one side on a variable whose NLP bounds keep it from zero (e.g. a fixed
    // initial multiplier) forces the other side to zero however far it is: that move is
    // allowed beyond the trust region, which bounds the free part of the step only
    let full_lo: Vec<f64> = (0..n).map(|j| (xl[j] - x[j]).min(0.0)).collect();
    let full_hi: Vec<f64> = (0..n).map(|j| (xu[j] - x[j]).max(0.0)).collect();
    for p in &mpcc.pairs {
        let g_ok = zeroing_step(p.g, x, &full_lo, &full_hi);
        let h_ok = zeroing_step(p.h, x, &full_lo, &full_hi);
        let forced = match (g_ok, h_ok) {
            (Some(step), None) => Some((p.g.var, step)),
            (None, Some(step)) => Some((p.h.var, step)),
            _ => None,
        };
        if let Some((var, step)) = forced {
            lo[var] = lo[var].min(step);
            hi[var] = hi[var].max(step);
        }
    }
    // decided pairs fix the zero side's variable; undecided ones get a binary. A side can
    // reach zero when the step that zeroes it lies within its column's bounds (the NLP's
    // bounds and the trust region).
    let mut decided: Vec<Option<bool>> = vec![None; mpcc.pairs.len()];
    for (i, p) in mpcc.pairs.iter().enumerate() {
        let g_can = zeroing_step(p.g, x, &lo, &hi).is_some();
        let h_can = zeroing_step(p.h, x, &lo, &hi).is_some();
        let choice = match (g_can, h_can) {
            (true, true) => None,
            (true, false) => Some(true),
            (false, true) => Some(false),
            (false, false) => {
                return Err(SolverError::PrimalInfeasible {
                    solver: "LPEC",
                    detail: format!(
                        ": pair {i} has G = {:.3e} and H = {:.3e}, neither reachable within \
                         the bounds and the trust region {rho:.3e}",
                        p.g.value(x),
                        p.h.value(x)
                    ),
                })
            }
        };
        if let Some(g_side) = choice {
            let s = if g_side { p.g } else { p.h };
            let Some(step) = zeroing_step(s, x, &lo, &hi) else {
                return Err(SolverError::PrimalInfeasible {
                    solver: "LPEC",
                    detail: format!(
                        ": pair {i} cannot fix x[{}] (another pair fixed it elsewhere)",
                        s.var
                    ),
                });
            };
            lo[s.var] = step;
            hi[s.var] = step;
        }
        decided[i] = choice;
    }
    // the rows of the linearized constraints
    let mut g = vec![0.0; m];
    let (gl, gu) = super::con_bounds(nlp);
    if !nlp.constraints(x, &mut g) {
        return Err(failed("constraint evaluation failed".into()));
    }
    let structure = nlp.jacobian_structure();
    let mut vals = vec![0.0; structure.len()];
    if !nlp.jacobian_values(x, &mut vals) {
        return Err(failed("Jacobian evaluation failed".into()));
    }
    let mut milp = Milp::new();
    let mut row_of = vec![usize::MAX; m];
    for i in 0..m {
        let (l, u) = (gl[i], gu[i]);
        if l <= -INF && u >= INF {
            continue;
        }
        let rl = if l <= -INF {
            f64::NEG_INFINITY
        } else {
            (l - g[i]).min(0.0)
        };
        let ru = if u >= INF {
            f64::INFINITY
        } else {
            (u - g[i]).max(0.0)
        };
        row_of[i] = milp.add_row(rl, ru);
    }
    let mut entries: Vec<Vec<(usize, f64)>> = vec![vec![]; n];
    for ((r, c), v) in structure.iter().zip(&vals) {
        if row_of[*r] != usize::MAX && *v != 0.0 {
            entries[*c].push((row_of[*r], *v));
        }
    }
    // binaries' rows: sign_G d_G + M_G y ≤ M_G − G(x); sign_H d_H − M_H y ≤ −H(x)
    let mut binary_rows = vec![];
    for (i, p) in mpcc.pairs.iter().enumerate() {
        if decided[i].is_some() {
            continue;
        }
        let (gv, hv) = (p.g.value(x).max(0.0), p.h.value(x).max(0.0));
        let (mg, mh) = (gv + rho, hv + rho);
        let rg = milp.add_row(f64::NEG_INFINITY, mg - gv);
        let rh = milp.add_row(f64::NEG_INFINITY, -hv);
        entries[p.g.var].push((rg, p.g.sign));
        entries[p.h.var].push((rh, p.h.sign));
        binary_rows.push((i, rg, rh, mg, mh));
    }
    // ‖d‖₁: t_j − d_j ≥ 0, t_j + d_j ≥ 0 for the free columns, and elastic rows (slacks
    // of weight ELASTIC_WEIGHT) so that a relaxed point whose linearization has no
    // complementary point in the box still gets the nearest branch
    let mut dist_rows = vec![None; n];
    if objective == LpecObjective::Distance {
        for j in 0..n {
            if hi[j] > lo[j] {
                let a = milp.add_row(0.0, f64::INFINITY);
                let b = milp.add_row(0.0, f64::INFINITY);
                entries[j].push((a, -1.0));
                entries[j].push((b, 1.0));
                dist_rows[j] = Some((a, b));
            }
        }
    }
    let cost: Vec<f64> = match objective {
        LpecObjective::Gradient => {
            let mut grad = vec![0.0; n];
            if !nlp.gradient(x, &mut grad) {
                return Err(failed("gradient evaluation failed".into()));
            }
            grad
        }
        LpecObjective::Distance => vec![0.0; n],
    };
    for j in 0..n {
        milp.add_column(
            cost[j],
            lo[j],
            hi[j],
            false,
            std::mem::take(&mut entries[j]),
        );
    }
    let first_binary = milp.num_cols();
    for (_, rg, rh, mg, mh) in &binary_rows {
        milp.add_column(0.0, 0.0, 1.0, true, vec![(*rg, *mg), (*rh, -*mh)]);
    }
    let first_t = milp.num_cols();
    for (j, rows) in dist_rows.iter().enumerate() {
        if let Some((a, b)) = rows {
            milp.add_column(1.0, 0.0, hi[j] - lo[j], false, vec![(*a, 1.0), (*b, 1.0)]);
        }
    }
    let end_t = milp.num_cols();
    if objective == LpecObjective::Distance {
        for r in row_of.iter().filter(|r| **r != usize::MAX) {
            for sign in [1.0, -1.0] {
                milp.add_column(ELASTIC_WEIGHT, 0.0, f64::INFINITY, false, vec![(*r, sign)]);
            }
        }
    }
    if let Some(branch) = start {
        if objective == LpecObjective::Gradient {
            let mut s = vec![0.0; milp.num_cols()];
            for (k, (i, ..)) in binary_rows.iter().enumerate() {
                s[first_binary + k] = f64::from(u8::from(branch[*i]));
            }
            milp.set_start(s);
        }
    }
    let clock = std::time::Instant::now();
    let sol = milp.solve(settings)?;
    let d = sol.x[..n].to_vec();
    let mut branch = vec![false; mpcc.pairs.len()];
    for (i, choice) in decided.iter().enumerate() {
        if let Some(c) = choice {
            branch[i] = *c;
        }
    }
    for (k, (i, ..)) in binary_rows.iter().enumerate() {
        branch[*i] = sol.x[first_binary + k] > 0.5;
    }
    let objective_value = match objective {
        LpecObjective::Gradient => sol.objective,
        LpecObjective::Distance => sol.x[first_t..end_t].iter().sum(),
    };
    let elastic = sol.x[end_t..].iter().fold(0.0_f64, |a, v| a.max(v.abs()));
    Ok(LpecSolution {
        d,
        objective: objective_value,
        branch,
        undecided: binary_rows.len(),
        status: sol.status,
        elastic,
        seconds: clock.elapsed().as_secs_f64(),
    })
}
