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

/// An undecided pair's binary and its two big-M rows.
struct BinaryPair {
    /// Index of the pair.
    pair: usize,
    /// Row `sign_G d_G + M_G y ≤ M_G − G(x)`.
    g_row: usize,
    /// Row `sign_H d_H − M_H y ≤ −H(x)`.
    h_row: usize,
    /// `M_G = G(x) + ρ`.
    m_g: f64,
    /// `M_H = H(x) + ρ`.
    m_h: f64,
}

/// Where each block of columns starts in the MILP: the steps `d` are `0..n`, then the
/// binaries, the ‖d‖₁ columns `t_j`, and the elastic slacks up to the end.
struct ColumnBlocks {
    /// The first binary.
    first_binary: usize,
    /// The first ‖d‖₁ column.
    first_t: usize,
    /// One past the last ‖d‖₁ column (the first elastic slack).
    end_t: usize,
}

/// A failed evaluation of the NLP.
fn failed(reason: String) -> SolverError {
    SolverError::Failed {
        solver: "LPEC",
        reason,
    }
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
    let n = nlp.num_vars();
    let (mut lo, mut hi) = step_bounds(mpcc, x, rho);
    let decided = decide_pairs(mpcc, x, rho, &mut lo, &mut hi)?;
    let mut milp = Milp::new();
    let (row_of, mut entries) = linearized_rows(mpcc, x, &mut milp)?;
    let binaries = binary_rows(mpcc, x, rho, &decided, &mut milp, &mut entries);
    let dist_rows = if objective == LpecObjective::Distance {
        distance_rows(&mut milp, &mut entries, &lo, &hi)
    } else {
        vec![None; n]
    };
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
    let cols = add_auxiliary_columns(
        &mut milp, &binaries, &dist_rows, &row_of, &lo, &hi, objective,
    );
    if let Some(branch) = start {
        if objective == LpecObjective::Gradient {
            let mut s = vec![0.0; milp.num_cols()];
            for (k, b) in binaries.iter().enumerate() {
                s[cols.first_binary + k] = f64::from(u8::from(branch[b.pair]));
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
    for (k, b) in binaries.iter().enumerate() {
        branch[b.pair] = sol.x[cols.first_binary + k] > 0.5;
    }
    let objective_value = match objective {
        LpecObjective::Gradient => sol.objective,
        LpecObjective::Distance => sol.x[cols.first_t..cols.end_t].iter().sum(),
    };
    let elastic = sol.x[cols.end_t..]
        .iter()
        .fold(0.0_f64, |a, v| a.max(v.abs()));
    Ok(LpecSolution {
        d,
        objective: objective_value,
        branch,
        undecided: binaries.len(),
        status: sol.status,
        elastic,
        seconds: clock.elapsed().as_secs_f64(),
    })
}

/// Column bounds of `d`: the NLP's bounds and the trust region, widened to contain 0, to
/// keep every side ≥ 0, and to allow a forced move to zero beyond the trust region.
fn step_bounds(mpcc: &Mpcc<'_>, x: &[f64], rho: f64) -> (Vec<f64>, Vec<f64>) {
    let n = mpcc.nlp.num_vars();
    let (xl, xu) = super::var_bounds(mpcc.nlp);
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
    (lo, hi)
}

/// Decides the pairs with only one side able to reach zero, fixing that side's variable
/// in `lo`/`hi`; `None` marks a pair left to a binary, `Some(true)` the `G = 0` side.
/// A side can reach zero when the step that zeroes it lies within its column's bounds
/// (the NLP's bounds and the trust region).
fn decide_pairs(
    mpcc: &Mpcc<'_>,
    x: &[f64],
    rho: f64,
    lo: &mut [f64],
    hi: &mut [f64],
) -> Result<Vec<Option<bool>>, SolverError> {
    let mut decided: Vec<Option<bool>> = vec![None; mpcc.pairs.len()];
    for (i, p) in mpcc.pairs.iter().enumerate() {
        let g_can = zeroing_step(p.g, x, lo, hi).is_some();
        let h_can = zeroing_step(p.h, x, lo, hi).is_some();
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
            let Some(step) = zeroing_step(s, x, lo, hi) else {
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
    Ok(decided)
}

/// Each column's `(MILP row, coefficient)` entries, column by column.
type ColumnEntries = Vec<Vec<(usize, f64)>>;

/// Adds the rows of the linearized constraints `g_L − g(x) ≤ ∇g(x) d ≤ g_U − g(x)`
/// (widened to contain 0; rows free on both sides are left out). Returns each
/// constraint's MILP row (`usize::MAX` when left out) and each column's entries so far.
fn linearized_rows(
    mpcc: &Mpcc<'_>,
    x: &[f64],
    milp: &mut Milp,
) -> Result<(Vec<usize>, ColumnEntries), SolverError> {
    let nlp = mpcc.nlp;
    let (n, m) = (nlp.num_vars(), nlp.num_cons());
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
    Ok((row_of, entries))
}

/// Adds the big-M rows of every undecided pair:
/// `sign_G d_G + M_G y ≤ M_G − G(x)` and `sign_H d_H − M_H y ≤ −H(x)`.
fn binary_rows(
    mpcc: &Mpcc<'_>,
    x: &[f64],
    rho: f64,
    decided: &[Option<bool>],
    milp: &mut Milp,
    entries: &mut [Vec<(usize, f64)>],
) -> Vec<BinaryPair> {
    let mut binaries = vec![];
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
        binaries.push(BinaryPair {
            pair: i,
            g_row: rg,
            h_row: rh,
            m_g: mg,
            m_h: mh,
        });
    }
    binaries
}

/// Adds, after the step columns, the binaries, the ‖d‖₁ columns `t_j ∈ [0, hi − lo]`
/// and (for [`LpecObjective::Distance`]) two elastic slacks per linearized row.
fn add_auxiliary_columns(
    milp: &mut Milp,
    binaries: &[BinaryPair],
    dist_rows: &[Option<(usize, usize)>],
    row_of: &[usize],
    lo: &[f64],
    hi: &[f64],
    objective: LpecObjective,
) -> ColumnBlocks {
    let first_binary = milp.num_cols();
    for b in binaries {
        milp.add_column(
            0.0,
            0.0,
            1.0,
            true,
            vec![(b.g_row, b.m_g), (b.h_row, -b.m_h)],
        );
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
    ColumnBlocks {
        first_binary,
        first_t,
        end_t,
    }
}

/// The rows `t_j − d_j ≥ 0`, `t_j + d_j ≥ 0` of ‖d‖₁ for every free column `j` (their `d_j`
/// entries added to `entries`); the elastic rows' slacks (weight [`ELASTIC_WEIGHT`]) let a
/// relaxed point whose linearization has no complementary point in the box still get the
/// nearest branch.
fn distance_rows(
    milp: &mut Milp,
    entries: &mut [Vec<(usize, f64)>],
    lo: &[f64],
    hi: &[f64],
) -> Vec<Option<(usize, usize)>> {
    let mut dist_rows = vec![None; lo.len()];
    for j in 0..lo.len() {
        if hi[j] > lo[j] {
            let a = milp.add_row(0.0, f64::INFINITY);
            let b = milp.add_row(0.0, f64::INFINITY);
            entries[j].push((a, -1.0));
            entries[j].push((b, 1.0));
            dist_rows[j] = Some((a, b));
        }
    }
    dist_rows
}
